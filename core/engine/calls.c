/* core/engine/calls.c - the public push and wait calls of engine.h (MXNet's PushSync /
 * PushAsync / WaitForVar / WaitForAll): px_engine_push_sync and _async jump to push.c, which
 * checks their arguments (push_front.h) and pushes; px_engine_push checks its descriptor, then
 * pushes through push.c's pxi_engine_push_plain; the waits drain the in-flight count
 * (inflight.c) or push an internal wait op.
 *
 * Help-while-waiting (TBB's task_group::wait and Taskflow's corun, StarPU's main thread as a
 * worker): until what it waits for is done, a waiting thread pops ready ops of the engine's CPU
 * lanes and runs them itself, as a worker of those lanes would (lanes.c, pxi_lane_help_pop:
 * same queues, same order, same failure handling, pxi_engine_execute). On a process that may
 * run on one processor only (an MPI rank bound to one core), or an oversubscribed one (the
 * engine then counts one processor: core/oversub.h; its waiter yields instead of pausing while
 * it polls), it also holds the lanes and the MPI progress: a sleeping worker or progress thread is
 * not woken for what the waiter will do (on one core every wake is a thread switch), the waiter
 * tests the outstanding MPI requests between ops (pxi_mpi_poll; when the library's test yields
 * the processor itself, as Open MPI's does on an oversubscribed node, the waiter does not yield
 * again before its next look: 13 yields per parex-cg iteration became 4, bench/RESULTS.md
 * "Session 8: oversubscribed one-thread ranks") and, after the engine's spin budget
 * with nothing to run or complete, sleeps 50 us, doubling to 250 us, between looks, as the progress
 * thread does (it polls up to 20 ms first while requests are outstanding: HELP_MPI_SPIN_NS). On
 * several processors it helps only when the engine has fewer CPU workers than processors, and stops
 * helping after the budget (a worker is woken for anything still queued) and sleeps on the wait as
 * before; there the progress thread alone tests requests (waiters that tested them too, in turn
 * with it, hung 4 oversubscribed parex-cg ranks in about 1 run of 5: Open MPI 4, nonblocking
 * allreduces; not investigated further). A default-sized per_device engine on several processors
 * that the Threads pool fills (e->pool_full, runtime.c) waits as on one processor: a kernel op
 * there already runs on every processor, so a woken worker or a polling progress thread would only
 * take one from a rank of the pool. Workers already running keep taking ops; the waiter wakes
 * none. */
#include <time.h>

#include "base/log.h"
#include "base/os.h"
#include "base/wait.h"
#include "core/engine/checks.h"
#include "core/engine/engine_impl.h"
#include "core/engine/mpi_hooks.h"
#include "core/engine/push_front.h"
#include "core/oversub.h"
#include "core/piece_hook.h"
#include "core/registry.h"
#include "core/trace.h"

/* The public pushes are push.c's whole (pxi_engine_push_sync_public: their checks, then the
 * push): a jump, with no frame or descriptor of their own. */
int px_engine_push_sync(px_engine *e, px_sync_fn fn, void *arg, px_context ctx,
                        px_var *const *reads, size_t n_reads, px_var *const *writes,
                        size_t n_writes, px_fn_property prop, int priority, const char *name)
{
    return pxi_engine_push_sync_public(e, fn, arg, ctx, reads, n_reads, writes, n_writes, prop,
                                       priority, name);
}

int px_engine_push_async(px_engine *e, px_async_fn fn, void *arg, px_context ctx,
                         px_var *const *reads, size_t n_reads, px_var *const *writes,
                         size_t n_writes, px_fn_property prop, int priority, const char *name)
{
    return pxi_engine_push_async_public(e, fn, arg, ctx, reads, n_reads, writes, n_writes, prop,
                                        priority, name);
}

int px_engine_push(px_engine *e, const px_op *op)
{
    static const char caller[] = "px_engine_push";
    int rc = pxi_engine_validate(e, caller);
    if (rc != PX_OK)
        return rc;
    if (!op) {
        PXI_ERROR("%s: op is NULL", caller);
        return PX_EFAULT;
    }
    const char *label = op->name ? op->name : "op";
    if (op->fn && op->async_fn) {
        PXI_ERROR("%s('%s'): both fn and async_fn are set (an op is either synchronous or "
                  "asynchronous)",
                  caller, label);
        return PX_EINVAL;
    }
    if (!op->fn && !op->async_fn) {
        PXI_ERROR("%s('%s'): neither fn nor async_fn is set", caller, label);
        return PX_EFAULT;
    }
    if ((rc = pxi_push_check_report(e, 1, op->ctx, op->reads.vars, op->reads.n, op->writes.vars,
                                    op->writes.n, op->property, caller)) != PX_OK)
        return rc;
    pxi_push p;
    pxi_push_describe(&p, op->fn ? PXI_OP_SYNC : PXI_OP_ASYNC, op->arg, op->ctx, op->reads.vars,
                      op->reads.n, op->writes.vars, op->writes.n, op->property, op->priority,
                      op->name, caller);
    p.sfn = op->fn;
    p.afn = op->async_fn;
    return pxi_engine_push_plain(e, &p);
}

/* Nonzero when the calling thread runs an engine op or a kernel of any space: a wait there
 * could need the very thread (or the space's launch lock) it holds. */
static int waiting_would_deadlock(void)
{
    if (pxi_engine_in_op())
        return 1;
    int n = pxi_registry_count();
    for (int i = 0; i < n; ++i) {
        const px_space *s = pxi_registry_at(i);
        if (s && s->available && s->ops->in_kernel && s->ops->in_kernel())
            return 1;
    }
    return 0;
}

/* PX_EDEADLK (logged with @caller) when the calling thread may not wait (see above). */
static int check_may_wait(const char *caller)
{
    if (pxi_engine_tl_recorder) {
        PXI_ERROR("%s: this thread is recording a graph (its recorded ops have not run)", caller);
        return PX_EBUSY;
    }
    if (!waiting_would_deadlock())
        return PX_OK;
    PXI_ERROR("%s: called from inside an engine op or kernel (it would wait on itself)", caller);
    return PX_EDEADLK;
}

/* A waiter holding progress polls this long (at least; PX_WAIT_POLICY=passive: not at all)
 * while MPI requests are outstanding, as a blocking MPI call would, before it sleeps between
 * looks. The holder is the rank's only running thread, so its polls take no processor from
 * anyone, and on a transport that needs the host to move bytes (Open MPI's TCP) every step of
 * a message waits for the holder's next poll: a sleep of 50-250 us per wait doubled the
 * iteration of both ranks on shared memory, and with a 1 ms budget, 2 one-core ranks over a
 * shaped TCP link (48^3 a rank, 300 Mbit/s) slept through 3-6 ms in 48 of 120 allreduces and
 * took 2.6-4.2 ms an iteration against 2.6-2.8 with this budget (bench/RESULTS.md, session 15).
 * Past it (a peer late by more than an iteration of any likely code) the sleeps between looks
 * keep the core from 100 % for a wait of any length. */
#define HELP_MPI_SPIN_NS 20000000LL

/* What an op a helping waiter runs sees: worker -2 (engine.h), no stream. Read-only. */
static pxi_worker help_worker = {.lane = NULL, .index = -2, .stream = NULL};

/* Run ready CPU ops and drive MPI progress until @done(@arg) holds (see the file comment). On
 * several processors the helper stops once the engine's spin budget passed with nothing to do
 * and the caller then waits as usual; on one it goes on, sleeping between looks. */
static void help_until(pxi_engine *e, int (*done)(const void *), const void *arg)
{
    if (done(arg))
        return;
    /* The processor count is the engine's, taken at create: the waits do not ask the OS. */
    const int hold = pxi_engine_drives_progress(e);
    /* Oversubscribed (core/oversub.h; the engine then counts one processor): the processor is
     * shared with other ranks' threads, which often make what we wait for, so polling yields
     * it (Open MPI's mpi_yield_when_idle) instead of pausing on it. */
    const int yield = hold && pxi_oversub_active();
    /* On several processors the waiter helps only where its processor would otherwise idle:
     * with as many CPU workers as processors (the default: 2 on the 2-core VM) a helping
     * waiter is one thread too many. Graph re-launches waited for with it helping, 2 workers,
     * 3 runs each (bench_engine --no-push): wavefront 38-50 ns/task against 27-34 without,
     * tree 45-55 against 34-37. TBB sizes its arena the same way: the waiting thread takes
     * one of P slots, next to P - 1 workers. */
    if (!hold && e->cpu_workers >= e->n_cpus)
        return;
    unsigned held = 0;
    void (*const was_hook)(void) = pxi_tl_piece_hook;
    if (hold) {
        held = pxi_lane_help_hold(e);
        pxi_mpi_hold(1);
        /* Nothing else runs while this thread runs a long kernel op: it tests the messages
         * between the kernel's pieces (core/piece_hook.h). Not on the naive engine, which runs
         * what a completion makes ready inside the completion: there a kernel's piece would
         * run the next kernel. */
        if (e->kind != PX_ENGINE_NAIVE)
            pxi_tl_piece_hook = pxi_mpi_piece_poll;
    }
    const int was_runner = pxi_engine_tl_cpu_runner;
    pxi_engine_tl_cpu_runner = 1;
    int64_t last_ns = pxi_os_now_ns(), step_ns = PXI_POLL_SLEEP_MIN_NS;
    unsigned idle = 0;
    pxi_engine_help_begin(e);
    while (!done(arg)) {
        pxi_opr *o = pxi_engine_help_take();
        if (!o)
            o = pxi_lane_help_pop(e);
        if (o) {
            pxi_engine_execute(o, &help_worker);
            idle = 0;
            continue;
        }
        /* gave: the library's test just yielded the processor itself (Open MPI's
         * mpi_yield_when_idle, which mpirun sets on an oversubscribed node): a second yield
         * would be a second round trip through the other rank before we look again. */
        int gave = 0;
        if (hold && pxi_mpi_poll(&gave) > 0) {
            idle = 0;
            continue;
        }
        if (idle == 0) {
            last_ns = pxi_os_now_ns();
            step_ns = PXI_POLL_SLEEP_MIN_NS;
        } else if ((idle & 15u) == 0 && pxi_os_now_ns() - last_ns > e->spin_ns) {
            if (!hold)
                break;
            if (e->spin_ns > 0 && pxi_os_now_ns() - last_ns < HELP_MPI_SPIN_NS &&
                pxi_mpi_outstanding()) {
                if (yield && !gave)
                    pxi_os_yield();
                else if (!yield)
                    pxi_os_cpu_pause();
                ++idle;
                continue;
            }
            /* The only processor: stay the thread that runs ops and tests messages, but sleep
             * between looks (no core at 100% while the wait lasts; as the progress thread). */
            struct timespec ts = {0, (long)step_ns};
            nanosleep(&ts, NULL);
            step_ns = pxi_poll_sleep_next(step_ns);
            continue;
        }
        /* On one processor no other thread of ours needs the core (nothing wakes them while
         * we hold), and a yield there hands it to another process for a whole time slice. */
        if (yield) {
            if (!gave)
                pxi_os_yield();
        } else if (hold)
            pxi_os_cpu_pause();
        else
            pxi_wait_backoff(idle);
        ++idle;
    }
    pxi_engine_help_end();
    pxi_engine_tl_cpu_runner = was_runner;
    pxi_tl_piece_hook = was_hook;
    if (hold) {
        pxi_mpi_hold(-1);
        pxi_lane_help_release(e, held);
    }
}

static int waiter_done(const void *arg)
{
    return pxi_wait_flag_value((pxi_wait_flag *)(uintptr_t)arg) == 1;
}

static int nothing_in_flight(const void *arg)
{
    const pxi_engine *e = arg;
    return atomic_load_explicit(&e->in_flight, memory_order_seq_cst) <= 0;
}

int px_engine_wait_for_var(px_engine *e, px_var *v)
{
    static const char caller[] = "px_engine_wait_for_var";
    int rc = pxi_engine_validate_handle(e, v, "Var", caller);
    if (rc == PX_OK)
        rc = check_may_wait(caller);
    if (rc != PX_OK)
        return rc;
    int64_t t0 = pxi_trace_active() ? pxi_trace_now_ns() : 0;
    pxi_waiter w;
    pxi_wait_flag_init(&w.done, 0);
    w.status = PX_OK;
    /* Pushed as a write, so it also waits for earlier reads (a caller may overwrite the data
     * once the wait returns); it runs inline on the thread that grants it. */
    rc = pxi_engine_push_internal(e, PXI_OP_WAIT, v, &w, "wait_for_var", caller);
    if (rc != PX_OK)
        return rc;
    help_until(e, waiter_done, &w.done);
    pxi_wait_flag_until_eq(&w.done, 1, 0); /* help_until spun the budget */
    if (t0)
        pxi_trace_span("wait", "wait_for_var", t0, pxi_trace_now_ns());
    return w.status;
}

int px_engine_wait_for_all(px_engine *e)
{
    static const char caller[] = "px_engine_wait_for_all";
    int rc = pxi_engine_validate(e, caller);
    if (rc == PX_OK)
        rc = check_may_wait(caller);
    if (rc != PX_OK)
        return rc;
    int64_t t0 = pxi_trace_active() ? pxi_trace_now_ns() : 0;
    help_until(e, nothing_in_flight, e);
    pxi_engine_drain(e);
    if (t0)
        pxi_trace_span("wait", "wait_for_all", t0, pxi_trace_now_ns());
    /* Recovery (engine.h, "Failures"): reporting a failure clears it everywhere, as MXNet's
     * WaitForAll clears the exceptions it rethrows from every Var that holds them. A new epoch
     * makes every Var's recorded failure stale at once, without visiting the Vars. */
    int first = atomic_exchange_explicit(&e->first_failure, PX_OK, memory_order_relaxed);
    if (first != PX_OK) {
        /* The count before the epoch: a mark made in between is counted after the snapshot and
         * keeps the look-ups on (harmless); one made after the epoch advanced is too. */
        atomic_store_explicit(&e->marks_at_epoch,
                              atomic_load_explicit(&e->n_marks, memory_order_relaxed),
                              memory_order_relaxed);
        atomic_fetch_add_explicit(&e->fail_epoch, 1u, memory_order_relaxed);
    }
    return first;
}
