/* core/runtime.h - runtime state shared by core files (core/init.c), and the resolution of a
 * launch's space argument (core/space.c). */
#ifndef PXI_RUNTIME_H
#define PXI_RUNTIME_H

#include <stdatomic.h>

#include "base/check.h"
#include "parex/space.h"

/* 1 between a successful px_initialize and the start of px_finalize. Set with release after
 * every space is up and read with acquire, so a thread that sees 1 also sees the spaces'
 * initialized state. */
extern atomic_int pxi_runtime_state;

/* pxi_runtime_state in a child forked while the runtime was up (core/init.c): not ready, and
 * px_initialize refuses too. */
#define PXI_RUNTIME_FORKED 2

/* Log that the runtime does not survive fork() (naming @p caller) and return 1 (core/runtime.c:
 * pxi_runtime_lost_to_fork's rare path). */
int pxi_runtime_report_fork(const char *caller);

/* Nonzero, after logging that the runtime does not survive fork() (naming @p caller), in a
 * child forked while the runtime was up; then the caller returns PX_ENOTINIT. 0 otherwise,
 * without logging. Inline: every launch and push asks, and the answer is nearly always one
 * load. */
static inline int pxi_runtime_lost_to_fork(const char *caller)
{
    if (atomic_load_explicit(&pxi_runtime_state, memory_order_acquire) != PXI_RUNTIME_FORKED)
        return 0;
    return pxi_runtime_report_fork(caller);
}

static inline int pxi_runtime_ready(void)
{
    return atomic_load_explicit(&pxi_runtime_state, memory_order_acquire) == 1;
}

/* Resolve a launch's space argument (core/space.c): NULL means the default space. Logs and
 * returns NULL with *status set when the runtime is down or no space exists. */
px_space *pxi_space_resolve(px_space *s, const char *caller, int *status);

/* The calling thread's rank in the host launches it runs, for px_scatter_add's replica
 * (core/scatter.c, px_exec_rank_location). A threads worker stores its pool rank once when it
 * starts (spaces/threads/pool.c: a worker always runs the same rank); every other thread,
 * including the launcher that works as rank 0, reads 0, its initial value. Only the owning
 * thread reads or writes it, so plain accesses suffice. Defined here, below the backends, so a
 * backend sets it without calling up into scatter-add. */
extern _Thread_local int pxi_exec_rank;

#endif
