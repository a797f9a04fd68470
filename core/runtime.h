/* core/runtime.h - runtime state shared by core files (core/init.c). */
#ifndef PXI_RUNTIME_H
#define PXI_RUNTIME_H

#include <stdatomic.h>

#include "core/check.h"
#include "parex/space.h"

/* 1 between a successful px_initialize and the start of px_finalize. Set with release after
 * every space is up and read with acquire, so a thread that sees 1 also sees the spaces'
 * initialized state. */
extern atomic_int pxi_runtime_state;

static inline int pxi_runtime_ready(void)
{
    return atomic_load_explicit(&pxi_runtime_state, memory_order_acquire) == 1;
}

/* Resolve a launch's space argument: NULL means the default space. Logs and returns NULL with
 * *status set when the runtime is down or no space exists. */
px_space *pxi_space_resolve(px_space *s, const char *caller, int *status);

#endif
