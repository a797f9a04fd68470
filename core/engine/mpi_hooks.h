/* core/engine/mpi_hooks.h - what engine teardown (runtime.c), the waits (calls.c) and graphs
 * (graph_record.c, graph_launch.c: the live count of launches holding MPI ops) call into the
 * MPI layer (core/engine/mpi_progress.c, below the MPI ops of core/engine/mpi.c, and mpi.c).
 * Without MPI (PX_HAVE_MPI 0) every hook is an empty inline function. */
#ifndef PXI_MPI_HOOKS_H
#define PXI_MPI_HOOKS_H

#include "parex/config.h"
#include "parex/engine.h"

/* A thread that polls for progress with nothing to do once its spin budget is spent (the MPI
 * progress thread; a waiter holding the only processor, calls.c) sleeps this long between
 * looks, doubling up to the max: no core at 100 % while a wait lasts. */
#define PXI_POLL_SLEEP_MIN_NS 50000LL
#define PXI_POLL_SLEEP_MAX_NS 250000LL

/* Between the pieces of a long kernel on a one-processor rank, requests are tested at most
 * this often (pxi_mpi_piece_poll): an MPI test over TCP costs 1-3 us, so 1-3 % of the kernel
 * while messages are outstanding, and a message step waits at most this long for the host. */
#define PXI_PIECE_POLL_NS 100000LL

/* The sleep after one of @step_ns: doubled, at most PXI_POLL_SLEEP_MAX_NS (50, 100, 200, 250,
 * 250 ... us; a plain doubling below the max went on to 400). */
static inline long long pxi_poll_sleep_next(long long step_ns)
{
    return step_ns * 2 < PXI_POLL_SLEEP_MAX_NS ? step_ns * 2 : PXI_POLL_SLEEP_MAX_NS;
}

#if PX_HAVE_MPI
/* Before draining @e for destroy or finalize: its outstanding messages get the drain timeout
 * (px_mpi_set_drain_timeout_ms), after which the progress thread cancels them, so the drain
 * cannot wait for ever on a message that never matches. */
void pxi_mpi_engine_closing(px_engine *e);
/* After @e is drained (no message of it is outstanding): forget its deadline. */
void pxi_mpi_engine_closed(px_engine *e);
/* At px_finalize, after every engine is drained: stop and join the progress thread. */
void pxi_mpi_shutdown(void);
/* A waiting thread drives progress (calls.c): test the outstanding requests once unless
 * another thread is testing them now; returns how many MPI ops it completed (0 at once when
 * nothing is outstanding). *@gave (may be NULL) is set nonzero when it tested requests, none
 * completed and the library's test gives the processor away when idle
 * (pxi_mpi_tests_yield): the caller looks again before it yields itself. Thread-safe; called
 * between ops, and inside a kernel op only through pxi_mpi_piece_poll. */
int pxi_mpi_poll(int *gave);
/* Nonzero when the MPI library's test calls yield the processor when they progress nothing:
 * Open MPI's mpi_yield_when_idle (mpirun sets it on an oversubscribed node, or --mca
 * mpi_yield_when_idle 1), read once: under Open MPI 4 from the ranks' environment where mpirun
 * put it, otherwise through MPI_T; 0 for libraries without it. MPI must be initialized.
 * Thread-safe. */
int pxi_mpi_tests_yield(void);
/* Nonzero while a posted request is not complete (a relaxed look). */
int pxi_mpi_outstanding(void);
/* The piece hook (core/piece_hook.h) of the threads that run a one-processor engine's ops: with
 * requests outstanding, at most every PXI_PIECE_POLL_NS on this thread, test them
 * (pxi_mpi_poll), so a long kernel does not hold a message's progress for its whole length.
 * Not where the library's tests yield the processor when idle (pxi_mpi_tests_yield: an
 * oversubscribed node), since each such test would give the core away in the middle of the
 * kernel. An op it completes finishes as any op completed from inside another op: what that
 * makes ready waits in its lane. */
void pxi_mpi_piece_poll(void);
/* Whether @afn is the MPI ops' async function (graph_record.c marks a graph holding one). */
int pxi_mpi_is_msg_fn(px_async_fn afn);
/* A launch of a graph holding MPI ops is queued or running (+1, at px_graph_launch) or done
 * (-1, when its launch op's block is released): px_mpi_finalize refuses while any is, as for
 * a pushed MPI op (mpi.c, live), since a launch's messages have no request until they post. */
void pxi_mpi_live_launch(int delta);
/* @delta +1: the calling waiter holds progress (it polls; the progress thread sleeps and posts
 * do not wake it); -1: it stops, waking the thread when it was the last holder and anything is
 * outstanding. Thread-safe. */
void pxi_mpi_hold(int delta);
#else
static inline void pxi_mpi_engine_closing(px_engine *e)
{
    (void)e;
}
static inline void pxi_mpi_engine_closed(px_engine *e)
{
    (void)e;
}
static inline void pxi_mpi_shutdown(void)
{
}
static inline int pxi_mpi_is_msg_fn(px_async_fn afn)
{
    (void)afn;
    return 0;
}
static inline void pxi_mpi_live_launch(int delta)
{
    (void)delta;
}
static inline int pxi_mpi_poll(int *gave)
{
    if (gave)
        *gave = 0;
    return 0;
}
static inline int pxi_mpi_tests_yield(void)
{
    return 0;
}
static inline int pxi_mpi_outstanding(void)
{
    return 0;
}
static inline void pxi_mpi_piece_poll(void)
{
}
static inline void pxi_mpi_hold(int delta)
{
    (void)delta;
}
#endif

#endif
