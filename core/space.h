/* core/space.h - what core/init.c needs of core/space.c: the default space's choice at
 * px_initialize, and the in-kernel check px_finalize makes (core/space_resolve.c).
 * pxi_space_resolve, used by every launch, is declared in core/runtime.h. */
#ifndef PXI_SPACE_H
#define PXI_SPACE_H

#include "parex/space.h"

/* Make the space named @p name (NULL or "": the highest-priority available space) the
 * default; returns it, or NULL (and no default) when it is unknown or not available. Call
 * from px_initialize only, before the runtime is marked up. */
px_space *pxi_space_choose_default(const char *name);

/* Forget the default space (px_finalize, and a failed px_initialize). */
void pxi_space_clear_default(void);

/* Nonzero when @p s is the default space (the configuration printout marks it). */
int pxi_space_is_default(const px_space *s);

/* Nonzero when the calling thread runs inside a kernel of any available space. */
int pxi_space_any_in_kernel(void);

#endif
