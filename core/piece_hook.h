/* core/piece_hook.h - what a thread does between two pieces of a host kernel it runs.
 *
 * A host space (spaces/serial, spaces/threads) runs a rank's share of a range or MDRange
 * kernel as pieces (parex/kernel.h: one call per explicit chunk, per MDRange tile, per dynamic
 * unit); between two pieces on the same thread it calls that thread's hook when one is set.
 * The engine sets it on the threads that run its ops where nothing else can drive MPI progress
 * while they run a long kernel (a rank with one processor: core/engine/calls.c, lanes.c), to
 * test the outstanding requests (pxi_mpi_piece_poll); a transport that needs the host to move
 * bytes then moves them while the kernel runs, as StarPU-MPI's progress thread would on a core
 * of its own. The hook never changes what the pieces compute: a reduce's piece still folds into
 * the value the previous piece left, and the pieces are the plan's (policy/plan.h). Costs one
 * thread-local load a piece when unset. */
#ifndef PXI_PIECE_HOOK_H
#define PXI_PIECE_HOOK_H

#include "base/os.h"

/* Initial-exec (base/os.h): a default-model access would be a call a piece in every chunked
 * kernel. */
#define PXI_PIECE_HOOK_TLS PXI_TLS_INITIAL_EXEC

/* This thread's hook, or NULL (the default). Set and read by the thread itself only. */
extern PXI_PIECE_HOOK_TLS void (*pxi_tl_piece_hook)(void);

/* Between two pieces of a kernel on this thread: run the hook, if any. */
static inline void pxi_piece_hook_run(void)
{
    void (*hook)(void) = pxi_tl_piece_hook;
    if (hook)
        hook();
}

#endif
