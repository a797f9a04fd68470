/* core/memory.h - labeled allocation in a space's memory (core/memory.c), for containers such
 * as views whose allocations Kokkos Tools should see under the container's label. */
#ifndef PXI_MEMORY_H
#define PXI_MEMORY_H

#include <stddef.h>

#include "base/check.h"
#include "parex/space.h"

/* Allocate @bytes in the memory of @s (NULL: the default space) as px_malloc does; tools see
 * allocate_data with @label. Returns the block with *status = PX_OK, or NULL with *status
 * PX_ENOTINIT, PX_ENODEV (logged naming @caller) or PX_ENOMEM (logged naming @caller, @label,
 * the size and the space). */
PX_NODISCARD void *pxi_memory_alloc(px_space *s, const char *caller, const char *label,
                                    size_t bytes, int *status);

/* Free a block of pxi_memory_alloc; tools see deallocate_data with @label and @bytes. @s must
 * be the resolved space the block came from (not NULL). Returns the space's free status. */
int pxi_memory_free(px_space *s, const char *label, void *p, size_t bytes);

#endif
