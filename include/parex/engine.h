/*
 * parex/engine.h - the dependency engine (MXNet's threaded engine, in C).
 *
 * The engine runs ops (C functions) in an order derived from the data they read and write.
 * Data is named by Vars (px_var): opaque tags, not buffers. An op declares the Vars it reads
 * and the Vars it writes; then
 *   - consecutive reads of a Var run concurrently,
 *   - a write waits for every earlier read and write of the Var,
 *   - reads after a write wait for that write,
 * and ops touching disjoint Vars run concurrently. The observable result of any program
 * equals running its ops one by one in push order. This is MXNet's ThreadedEngine: every Var
 * keeps a FIFO queue of versioned blocks, every op an Opr block whose wait counter starts at
 * reads + writes + 1.
 *
 * Engine kinds:
 *   PX_ENGINE_NAIVE       every op runs inline on the thread that makes it ready (at push,
 *                         for a single pusher): for debugging, like MXNet's NaiveEngine.
 *   PX_ENGINE_POOLED      one shared pool of CPU workers plus one IO worker for copy ops
 *                         (ThreadedEnginePooled). Default workers: one per core.
 *   PX_ENGINE_PER_DEVICE  per CPU-device worker queues (default two workers each, see
 *                         px_engine_create and PX_CPU_WORKER_NTHREADS), a CPU priority queue
 *                         with its own workers (half the CPU workers, at least one) for
 *                         PX_FN_CPU_PRIORITIZED ops,
 *                         an IO worker for CPU copy ops, and per GPU a compute worker and a
 *                         copy worker (one IO thread), each owning a stream of the cuda space
 *                         (ThreadedEnginePerDevice). The default kind.
 *
 * Where an op runs: PX_FN_ASYNC ops that are ready at push run on the pusher, and a CPU one
 * that a finishing op makes ready on an engine's CPU or IO worker, or on a waiter while it
 * runs ops (below), runs at once on that thread, ahead of the ready ops queued in the lanes:
 * such an op starts something that goes on without the thread (an MPI message, a graph
 * launch), so it should start as soon as its inputs allow (StarPU-MPI posts a message as soon
 * as its data is ready). Elsewhere (the MPI progress thread, device lanes and their stream
 * callbacks, user threads) it is queued in its lane. The others go to the lane their context
 * and property pick. A worker that makes a CPU op ready keeps it and
 * runs it next itself, so a chain of dependent ops stays on one core. When a CPU queue holds
 * more than 2 ready ops per worker, a pusher runs the ready op it pushes itself (libgomp's
 * undeferred tasks past a queue bound), unless PX_ENGINE_MAX_PENDING is at most 64 per worker.
 * A pusher also runs, before its push returns, a ready PX_FN_NORMAL CPU op whose function
 * has been measured to run in less than PX_ENGINE_INLINE_NS nanoseconds (default 50: about
 * what handing an op to a worker costs), work-first as in Cilk and TBB: one run in 64 of such
 * ops, chosen at random, is timed wherever it runs and averaged per op function, so a
 * function that becomes slower goes back to the workers. Kernel ops, ops pushed from inside
 * ops and not-yet-ready ops are never run this way; PX_ENGINE_INLINE_NS=0 turns it off. An op
 * run by a pusher sees worker -1 in its px_run_context. A thread waiting in
 * px_engine_wait_for_var or px_engine_wait_for_all runs ready ops of the engine's CPU lanes
 * itself meanwhile, in their queue order, when the engine has fewer CPU workers than the
 * process has processors (TBB's and Taskflow's corun; with as many workers as processors a
 * helping waiter is one thread too many): such an op sees worker -2. An op of that engine that
 * a finish on the waiter makes ready while the lanes it pops are empty runs next on the waiter
 * without passing through its lane, as on a worker (its continuation slot), in the order the
 * lanes would give. On a process that may run on one processor only (an MPI rank bound to one
 * core), or that px_initialize found oversubscribed (more threads, its own or its node's ranks',
 * than processors: README, "Oversubscription"), the waiter keeps the workers and the MPI progress
 * thread asleep and does it all, sleeping 50-250 us between looks once the wait budget is spent
 * (20 ms while MPI requests are outstanding, polling with yields of the processor when
 * oversubscribed). A per_device engine of the default size on several processors that the Threads
 * pool fills (PX_NUM_THREADS at least the processors, its default) waits the same way, since a
 * kernel op already runs on every processor: the waiter wakes no worker, while workers already
 * running keep taking ops (MXNet keeps one CPU worker beside OpenMP-parallel ops for the same
 * reason). Results never depend on where an op runs; a caller must not write an op that waits
 * for something its pusher, or any thread that waits on the engine, does later (any engine may
 * run it on such a thread, the naive one always runs it on its pusher).
 *
 * Sizing: see PX_CPU_WORKER_NTHREADS in px_engine_create.
 *
 * Kokkos Tools: loaded tools keep one region stack per process, while engine ops run on
 * several workers at once. An op its pusher runs inside the push is a profile region on the
 * pushing thread (nested in what that thread has open, as Kokkos pushes regions only from the
 * launching thread); an op a worker runs is a profile section of its own, named after the op
 * (kokkosp_create/start/stop/destroy_profile_section: sections may overlap), so region stacks
 * stay LIFO per process. A tool without section callbacks does not see worker ops; kernels
 * launched inside ops are reported as usual (see parex/profiling.h).
 *
 * Failures: an op returning (or completing with) a status other than PX_OK marks its write
 * Vars failed; later ops that read or write a failed Var are skipped and pass the failure
 * on (they mark their own write Vars). Each failed op is logged once at warn level with its
 * name, status and the Vars it poisoned ("engine: op 'stage2' failed with -13 (...); Vars
 * poisoned: Var 0x..."), each skipped op at debug level with the Var that made it skip, and
 * with PX_PROFILE on the trace gets an empty "op_failed" span where the failure happened and
 * an "op_skipped" span per skipped op, each with args {"status": code, "error": text}, so the
 * timeline shows where a failure started and how far it spread.
 *
 * Recovery: a wait that reports a failure also clears it (MXNet's semantics: WaitForVar and
 * WaitForAll rethrow an op's exception and reset it on the Vars that carried it, so the next
 * run of the graph starts clean). px_engine_wait_for_var returns the Var's failure and clears
 * it on that Var; px_engine_wait_for_all returns the first failure since the previous
 * px_engine_wait_for_all and clears every Var's failure. Either way the caller has seen the
 * failure before anything runs again on clean Vars; until then a failed Var keeps skipping the
 * ops that use it, so results computed from a failed input never look valid. Failures of ops
 * running concurrently with the wait (other threads still pushing) may be cleared by it. The
 * corrected re-run pattern:
 *
 *     px_engine_push(e, &(px_op){.fn = load, .arg = &in, .writes = PX_VARS(x), .name = "load"});
 *     px_engine_push(e, &(px_op){.fn = stage, .arg = &st, .reads = PX_VARS(x),
 *                                .writes = PX_VARS(y), .name = "stage"});
 *     int rc = px_engine_wait_for_all(e);   // the failure of "load"; x and y are clean again
 *     if (rc != PX_OK) {
 *         fix_input(&in);                   // correct what made the op fail
 *         px_engine_push(e, &(px_op){.fn = load, ...});    // the same pushes again
 *         px_engine_push(e, &(px_op){.fn = stage, ...});
 *         rc = px_engine_wait_for_all(e);   // PX_OK
 *     }
 *
 * Handles: Vars and reusable operators are generation-checked handles. Passing a deleted
 * one (or one of another engine) is PX_EINVAL, never a crash. Engines are plain pointers:
 * passing a destroyed engine is undefined (Caller must not).
 *
 * Backpressure: at most PX_ENGINE_MAX_PENDING ops (default 65,536) are in flight per engine;
 * a push beyond that blocks until three quarters of the limit remain (pushes from inside ops
 * never block). Posted MPI messages (parex/mpi.h) are not counted: they wait for their peers. An op
 * its pusher runs at push is finished when the push returns and never counts as in flight.
 *
 * Steady state: op blocks and kernel-op payloads come from per-engine pools, so pushing a
 * steady stream of ops with at most 256 Vars each does no malloc.
 */
#ifndef PAREX_ENGINE_H
#define PAREX_ENGINE_H

#include <stddef.h>

#include "parex/core.h"
#include "parex/kernel.h"
#include "parex/policy.h"
#include "parex/reducer.h"
#include "parex/space.h"
#include "parex/team.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An engine (opaque). */
typedef struct px_engine px_engine;
/** A Var: an opaque, generation-checked tag for a piece of data. */
typedef struct px_var px_var;
/** Engine kinds (see the file comment). */
typedef enum { PX_ENGINE_NAIVE, PX_ENGINE_POOLED, PX_ENGINE_PER_DEVICE } px_engine_kind;
/** What an op is, which picks its queue (MXNet's FnProperty). */
typedef enum {
    PX_FN_NORMAL,           /**< Compute on the context's device. */
    PX_FN_COPY_TO_DEVICE,   /**< A copy into the device: copy lane (IO worker). */
    PX_FN_COPY_FROM_DEVICE, /**< A copy out of the device: copy lane (IO worker). */
    PX_FN_CPU_PRIORITIZED,  /**< CPU op on the priority queue: higher priority first,
                                 equal priorities in push order (per_device). */
    PX_FN_ASYNC             /**< Cheap op that starts something and returns: runs on the
                                 pusher when ready at push, on the CPU worker or helping
                                 waiter whose finishing op made it ready (see "Where an op
                                 runs"), else on a worker. */
} px_fn_property;
/** Device type of a context. */
typedef enum { PX_DEV_CPU, PX_DEV_CUDA } px_device_type;
/** Where an op runs: CPU device ids 0..15 (per_device keeps a queue per id); CUDA ids
 *  0..15 (PX_ENODEV when the cuda space is not available). */
typedef struct {
    px_device_type type;
    int device_id;
} px_context;
/** What an op receives: its context, the engine-wide number of the worker running it (-1
 *  on a pusher or an inline run, -2 on a thread that runs it while it waits on the engine)
 *  and the worker's device stream (NULL on CPU). */
typedef struct {
    px_context ctx;
    int worker;
    void *stream;
} px_run_context;
/** Completion handle an asynchronous op receives. */
typedef struct px_on_complete px_on_complete;

/**
 * Complete an asynchronous op (MXNet's CallbackOnComplete).
 *
 * @param done    the handle the op received; valid until this call.
 * @param status  PX_OK, or a failure that marks the op's write Vars failed.
 * Thread-safe: any thread, once per op. A NULL handle or a second call is logged and
 * ignored as long as the op block has not been reused (Caller must call it exactly once).
 */
PX_API void px_on_complete_call(px_on_complete *done, int status);

/** A synchronous op: returns its status (PX_OK or any negative code). */
typedef int (*px_sync_fn)(const px_run_context *rc, void *arg);
/** An asynchronous op: must eventually call px_on_complete_call(done, status). */
typedef void (*px_async_fn)(const px_run_context *rc, px_on_complete *done, void *arg);

/**
 * The engine px_initialize made from PX_ENGINE / --px-engine (default per_device) with
 * PX_CPU_WORKER_NTHREADS workers. px_finalize waits for it and destroys it.
 * @return the engine, or NULL when the runtime is not initialized. Thread-safe.
 */
PX_API px_engine *px_engine_default(void);

/**
 * Create an engine (MXNet's CreateEngine).
 *
 * @param kind         naive, pooled or per_device.
 * @param cpu_workers  CPU worker threads (per CPU device for per_device); 0: the default
 *                     (PX_CPU_WORKER_NTHREADS, else 2 for per_device (1 when the process
 *                     may run on one processor only, e.g. an MPI rank bound to a core: its
 *                     affinity mask at px_initialize counts, or is oversubscribed) and one per
 *                     such processor for pooled (1 when oversubscribed)); at most 4096.
 *
 * Why 2 for per_device: with one worker (MXNet's default) independent CPU ops of a pipeline
 * never overlap. Kernel ops on the threads space take their parallelism from the Threads pool
 * and launches on one space serialize on its launch lock (a queued launcher sleeps), so a
 * second worker adds at most one thread beyond the pool while letting plain ops overlap with
 * each other and with kernels. bench/bench_pipeline (pipelines of sync ops, of kernel ops and
 * mixed, 1/2/4 workers) found 2 workers never slower than 1 and 4 slower than 2 on 2 cores
 * (bench/RESULTS.md, ## Engine workers). Its load-independent figure, the overlap of 500 us
 * sync stages (most stages seen running at once, averaged over stages), is 1.07-1.11 with one
 * worker, 1.95-1.97 with two and 3.1-3.2 with four, the same with default inlining and with
 * PX_ENGINE_INLINE_NS=0: ops this long are never run on the pusher by the cost rule (none of
 * them ran there with 2+ workers), so inlining does not serialize independent ops. Set
 * PX_CPU_WORKER_NTHREADS=1 for strictly serial CPU ops, or more for many independent CPU-bound ops
 * on a larger machine. With the default size (0 and no PX_CPU_WORKER_NTHREADS), a per_device
 * engine whose process has its Threads pool on every processor lets a waiting thread run the ops
 * and test the MPI requests itself (see "Where an op runs" above); a size given here or in
 * PX_CPU_WORKER_NTHREADS keeps the ops on the workers while a thread waits.
 *
 * It returns once every worker it starts has run its start-up (placed on the process's
 * processors, named px-cpu/px-prio/px-io, its C library arena made), as libgomp's team start
 * and Kokkos::initialize wait for their threads: otherwise, on a process bound to one core,
 * that start-up ran in the first ops, when the creating thread first let a worker have the core
 * (bench/RESULTS.md, session 28). The MPI progress thread, started at the first MPI push, is
 * waited for the same way. A device lane made later (at its first op) waits for its worker too.
 * On one processor (a process bound to one core, or an oversubscribed Threads space) the
 * workers run under Linux's SCHED_BATCH, nice unchanged: a push that wakes one does not
 * preempt the pushing thread, which usually waits next and runs the ops itself; the worker
 * runs when that thread blocks or at the end of its time slice. A woken worker used to take the
 * core at once and leave the pusher to reach its wait late: the first iteration of a short
 * distributed CG on 2 one-core ranks took about twice as long (bench/RESULTS.md, session 29).
 * @return the engine, or NULL (logged) when the runtime is not initialized, @p kind is
 *         unknown, @p cpu_workers is out of range, or memory or threads ran out.
 * Thread-safe. Destroy it with px_engine_destroy; px_finalize waits for (with a warning)
 * engines still alive but does not free them.
 */
PX_API px_engine *px_engine_create(px_engine_kind kind, int cpu_workers);

/**
 * Wait for every op of the engine, stop its workers and free it, with its Vars and operators.
 *
 * @return PX_OK; PX_EFAULT for NULL; PX_EINVAL for a pointer that is not a live engine (best
 *         effort: Caller must not pass a destroyed engine); PX_EBUSY for the default engine
 *         (px_finalize destroys it); PX_EDEADLK from inside an op.
 * Thread-safe, but no other thread may use the engine during or after the call.
 */
PX_API int px_engine_destroy(px_engine *e);

/**
 * A new Var of @p e (MXNet's NewVariable).
 * @return the Var, or NULL (logged) for a bad engine or when memory ran out.
 * Thread-safe; callable from inside ops.
 */
PX_API px_var *px_var_new(px_engine *e);

/**
 * Delete a Var once every op pushed on it before has finished (MXNet's DeleteVariable: it is
 * pushed as a write). The handle is invalid at once: later pushes, waits and deletes naming it
 * are PX_EINVAL; its slot is reused only after the deletion ran.
 * @return PX_OK; PX_EFAULT for a NULL engine or Var; PX_EINVAL for a bad engine or a Var
 *         that is not live in it; PX_ENOMEM.
 * Thread-safe; callable from inside ops.
 */
PX_API int px_var_delete(px_engine *e, px_var *v);

/**
 * Push a synchronous op (MXNet's PushSync). @p fn(rc, arg) runs once every Var grants it
 * access; its return status completes the op.
 *
 * @param e         engine.
 * @param fn        the op; must not be NULL.
 * @param arg       passed to fn unchanged.
 * @param ctx       where it runs (see px_context).
 * @param reads     Vars it reads (n_reads of them; NULL when 0). Duplicates count once.
 * @param writes    Vars it writes (n_writes; NULL when 0). A Var also in reads, or listed
 *                  twice, counts once, as a write.
 * @param prop      queue selection (px_fn_property).
 * @param priority  for PX_FN_CPU_PRIORITIZED: higher runs first; ignored otherwise.
 * @param name      label for traces; NULL: "op". Must stay valid until the op finishes.
 * @return PX_OK; PX_EFAULT for NULL e or fn, or a NULL list with a nonzero count; PX_EINVAL
 *         for a bad engine, a deleted or foreign Var, an unknown property or context type,
 *         or a device id outside [0, 16); PX_ENODEV for a CUDA context without the cuda
 *         space; PX_ENOMEM.
 * Thread-safe: any thread may push, also from inside ops; concurrent pushers never deadlock
 * and the result equals some serial order of the pushes. Blocks while the engine has
 * PX_ENGINE_MAX_PENDING ops in flight (not from inside ops).
 */
PX_API int px_engine_push_sync(px_engine *e, px_sync_fn fn, void *arg, px_context ctx,
                               px_var *const *reads, size_t n_reads, px_var *const *writes,
                               size_t n_writes, px_fn_property prop, int priority,
                               const char *name);

/** @name Op descriptors: px_engine_push
 * The positional calls below take eleven arguments, and the read and write lists are easy to
 * swap; a descriptor names every field, and whatever is left out takes its default:
 *
 *     px_engine_push(e, &(px_op){.fn = stage, .arg = &s, .reads = PX_VARS(x, y),
 *                                .writes = PX_VARS(z), .name = "stage"});
 *
 * Defaults of unset (zero) fields: ctx CPU device 0, property PX_FN_NORMAL, priority 0, no
 * reads, no writes, name "op". This is the task descriptor of StarPU (struct starpu_task with
 * its handles and modes) and of Kokkos' named arguments, in C99 designated initializers.
 * @{ */
/** A list of Vars: @p n handles at @p vars (NULL when n is 0). PX_VARS builds one. */
typedef struct px_var_list {
    px_var *const *vars;
    size_t n;
} px_var_list;

/** The Vars given as arguments as a px_var_list (a compound literal: it lives until the end
 *  of the enclosing block, long enough for a push, which copies it). C only. */
#define PX_VARS(...)                                                                               \
    ((px_var_list){(px_var *const[]){__VA_ARGS__},                                                 \
                   sizeof((px_var *const[]){__VA_ARGS__}) / sizeof(px_var *)})

/** One op, as px_engine_push takes it. Set exactly one of fn and async_fn. */
typedef struct px_op {
    px_sync_fn fn;           /**< A synchronous op (as px_engine_push_sync), or NULL. */
    px_async_fn async_fn;    /**< An asynchronous op (as px_engine_push_async), or NULL. */
    void *arg;               /**< Passed to the function unchanged. */
    px_var_list reads;       /**< Vars it reads (default none). */
    px_var_list writes;      /**< Vars it writes (default none). */
    const char *name;        /**< Label for logs, traces and tools; NULL: "op". Must stay
                                  valid until the op finishes. */
    px_context ctx;          /**< Where it runs (default {PX_DEV_CPU, 0}). */
    px_fn_property property; /**< Queue selection (default PX_FN_NORMAL). */
    int priority;            /**< For PX_FN_CPU_PRIORITIZED: higher first (default 0). */
} px_op;

/**
 * Push the op @p op describes (MXNet's PushSync / PushAsync, with a descriptor): the same
 * push as px_engine_push_sync or px_engine_push_async with op's fields as arguments. The
 * descriptor is read during the call only (it may be a compound literal).
 * @return PX_OK; PX_EFAULT for NULL e or op, neither fn nor async_fn set, or a Var list with
 *         vars NULL and a nonzero n; PX_EINVAL for both fn and async_fn set, and everything
 *         px_engine_push_sync rejects (bad engine, deleted or foreign Var, unknown property or
 *         context type, device id outside [0, 16)); PX_ENODEV for a CUDA context without the
 *         cuda space; PX_ENOMEM.
 * Thread-safe as px_engine_push_sync; blocks under backpressure like it.
 */
PX_API int px_engine_push(px_engine *e, const px_op *op);
/** @} */

/**
 * Push an asynchronous op (MXNet's PushAsync): @p fn(rc, done, arg) starts the work and the
 * op completes when px_on_complete_call(done, status) is called, from any thread.
 * Arguments, statuses and thread safety as px_engine_push_sync.
 */
PX_API int px_engine_push_async(px_engine *e, px_async_fn fn, void *arg, px_context ctx,
                                px_var *const *reads, size_t n_reads, px_var *const *writes,
                                size_t n_writes, px_fn_property prop, int priority,
                                const char *name);

/**
 * Wait until every op pushed on @p v before this call has finished (MXNet's WaitForVar).
 * @return PX_OK, or the status of the last failed op that wrote @p v, which is then cleared
 *         on @p v (a failure px_engine_wait_for_all already returned counts as cleared; see
 *         "Recovery" in the file comment); PX_EFAULT for NULL; PX_EINVAL for a bad engine or
 *         a Var not live in it; PX_EDEADLK from inside an op; PX_ENOMEM.
 * Thread-safe.
 */
PX_API int px_engine_wait_for_var(px_engine *e, px_var *v);

/**
 * Wait until the engine has no op in flight (MXNet's WaitForAll).
 * @return PX_OK, or the first failure of any op since the previous wait_for_all, which is
 *         then cleared together with every Var's failure, so the next pushes run on clean
 *         Vars (see "Recovery" in the file comment); PX_EFAULT / PX_EINVAL for a bad engine;
 *         PX_EDEADLK from inside an op.
 * Thread-safe. With other threads still pushing it returns at a moment nothing is in flight;
 * an op another thread's push is running on that thread (see "Where an op runs") is not in
 * flight, and is finished once that push has returned.
 */
PX_API int px_engine_wait_for_all(px_engine *e);

/** @name Reusable operators (MXNet's NewOperator / Push(opr) / DeleteOperator)
 * An operator fixes fn, arg, context, Vars, property and name once; each push runs it again,
 * ordered like any op. Deleting it is deferred until its pushes have finished.
 * @{ */
/** A reusable operator: an opaque, generation-checked handle. */
typedef struct px_engine_op px_engine_op;

/**
 * Create a reusable synchronous operator. Arguments as px_engine_push_sync (name is copied,
 * up to 63 bytes). The Vars must be live now and at every push.
 * @return the operator, or NULL (logged) for any argument px_engine_push_sync rejects, or
 *         when memory ran out. Thread-safe.
 */
PX_API px_engine_op *px_engine_op_create_sync(px_engine *e, px_sync_fn fn, void *arg,
                                              px_context ctx, px_var *const *reads, size_t n_reads,
                                              px_var *const *writes, size_t n_writes,
                                              px_fn_property prop, const char *name);

/** As px_engine_op_create_sync for an asynchronous op. */
PX_API px_engine_op *px_engine_op_create_async(px_engine *e, px_async_fn fn, void *arg,
                                               px_context ctx, px_var *const *reads, size_t n_reads,
                                               px_var *const *writes, size_t n_writes,
                                               px_fn_property prop, const char *name);

/**
 * Push one run of @p op with @p priority (used by PX_FN_CPU_PRIORITIZED operators).
 * @return PX_OK; PX_EFAULT for NULL; PX_EINVAL for a bad engine, a deleted or foreign
 *         operator, or one of its Vars deleted since; PX_ENOMEM. Thread-safe; blocks under
 *         backpressure like px_engine_push_sync.
 */
PX_API int px_engine_op_push(px_engine *e, px_engine_op *op, int priority);

/**
 * Delete @p op; runs already pushed still happen, then it is freed.
 * @return PX_OK; PX_EFAULT for NULL; PX_EINVAL for a bad engine or an operator that is not
 *         live (already deleted or foreign). Thread-safe.
 */
PX_API int px_engine_op_delete(px_engine *e, px_engine_op *op);
/** @} */

/** @name Kernels as ops
 * Launch a kernel on a space from an engine worker, ordered by the Vars it reads and writes.
 * Everything a launch checks is checked at push (statuses as the matching px_parallel_*
 * call, plus the Var and engine statuses of px_engine_push_sync); the kernel arguments and
 * the label are copied at push, so stack values may be passed. Host spaces run on a CPU
 * worker (context CPU 0); the cuda space runs on the GPU lane of PX_DEVICE_ID, on that
 * worker's own stream, and the op completes from the stream's host callback (no device
 * synchronization per op, unlike MXNet's issue #18951). A launch failure fails the op (see
 * Failures).
 * reduce writes *result and scan *total (may be NULL) when the op runs, so read them after
 * waiting on a written Var. Thread-safe; ctx/result pointers must stay valid until the op
 * has run.
 * @{ */
/**
 * Push a PX_FOR kernel launch (px_parallel_for) as an op reading @p reads and writing
 * @p writes. @p args (args_size bytes, == k->args_size) is copied at push.
 * The launch is checked at push by the same code as the direct call, so every status
 * px_parallel_for returns for these arguments comes back here, from the push.
 * @return PX_OK; PX_EFAULT for a NULL engine or kernel, or args NULL with args_size > 0;
 *         PX_EINVAL for a bad policy, a kernel of another kind, an args_size mismatch, a
 *         kernel without a host entry on a host space or not compiled for a device space, a
 *         stale Var or engine; PX_ENODEV when s is not available (or NULL with no default
 *         space); PX_ENOMEM. Thread-safe; blocks under backpressure.
 */
PX_API int px_engine_push_parallel_for(px_engine *e, px_space *s, const char *label,
                                       px_range_policy p, const px_kernel *k, const void *args,
                                       size_t args_size, px_var *const *reads, size_t n_reads,
                                       px_var *const *writes, size_t n_writes);
/**
 * Push a host function parallel_for (px_parallel_for_fn) as an op; @p ctx is passed as is and
 * must stay valid until the op has run. Statuses as px_engine_push_parallel_for (PX_EFAULT
 * for fn NULL; PX_EINVAL on a space that cannot run host functions). Thread-safe.
 */
PX_API int px_engine_push_parallel_for_fn(px_engine *e, px_space *s, const char *label,
                                          px_range_policy p, px_for_fn fn, void *ctx,
                                          px_var *const *reads, size_t n_reads,
                                          px_var *const *writes, size_t n_writes);
/**
 * Push a PX_REDUCE kernel launch as an op; *result (r->value_size bytes) is written when the op
 * runs. Statuses as px_engine_push_parallel_for, plus PX_EFAULT for r or result NULL and
 * PX_EINVAL for a reducer px_reducer_validate rejects or whose value size differs from the
 * kernel's. Thread-safe.
 */
PX_API int px_engine_push_parallel_reduce(px_engine *e, px_space *s, const char *label,
                                          px_range_policy p, const px_kernel *k, const void *args,
                                          size_t args_size, const px_reducer *r, void *result,
                                          px_var *const *reads, size_t n_reads,
                                          px_var *const *writes, size_t n_writes);
/**
 * Push a host function parallel_reduce (px_parallel_reduce_fn) as an op. Statuses as
 * px_engine_push_parallel_reduce (PX_EFAULT for fn NULL). Thread-safe.
 */
PX_API int px_engine_push_parallel_reduce_fn(px_engine *e, px_space *s, const char *label,
                                             px_range_policy p, px_reduce_fn fn, void *ctx,
                                             const px_reducer *r, void *result,
                                             px_var *const *reads, size_t n_reads,
                                             px_var *const *writes, size_t n_writes);
/**
 * Push a PX_SCAN kernel launch as an op; *total (may be NULL) is written when the op runs.
 * Statuses as px_engine_push_parallel_reduce (total may be NULL). Thread-safe.
 */
PX_API int px_engine_push_parallel_scan(px_engine *e, px_space *s, const char *label,
                                        px_range_policy p, const px_kernel *k, const void *args,
                                        size_t args_size, const px_reducer *r, void *total,
                                        px_var *const *reads, size_t n_reads, px_var *const *writes,
                                        size_t n_writes);
/**
 * Push a host function parallel_scan (px_parallel_scan_fn) as an op. Statuses as
 * px_engine_push_parallel_scan (PX_EFAULT for fn NULL). Thread-safe.
 */
PX_API int px_engine_push_parallel_scan_fn(px_engine *e, px_space *s, const char *label,
                                           px_range_policy p, px_scan_fn fn, void *ctx,
                                           const px_reducer *r, void *total, px_var *const *reads,
                                           size_t n_reads, px_var *const *writes, size_t n_writes);
/**
 * Push an MDRange kernel launch (px_parallel_for_md; a PX_FOR_<N>D kernel with N == p.rank) as
 * an op. Statuses as px_parallel_for_md, checked at push, plus the Var and engine statuses of
 * px_engine_push_parallel_for. Thread-safe; blocks under backpressure.
 */
PX_API int px_engine_push_parallel_for_md(px_engine *e, px_space *s, const char *label,
                                          px_mdrange_policy p, const px_kernel *k, const void *args,
                                          size_t args_size, px_var *const *reads, size_t n_reads,
                                          px_var *const *writes, size_t n_writes);
/**
 * Push an MDRange host function launch (px_parallel_for_md_fn) as an op; @p ctx must stay valid
 * until the op has run. Statuses as px_parallel_for_md_fn, checked at push, plus those of
 * px_engine_push_parallel_for. Thread-safe.
 */
PX_API int px_engine_push_parallel_for_md_fn(px_engine *e, px_space *s, const char *label,
                                             px_mdrange_policy p, px_md_for_fn fn, void *ctx,
                                             px_var *const *reads, size_t n_reads,
                                             px_var *const *writes, size_t n_writes);
/**
 * Push an MDRange reduce kernel launch (px_parallel_reduce_md; a PX_REDUCE_<N>D kernel) as an
 * op; *result is written when the op runs. Statuses as px_parallel_reduce_md, checked at push,
 * plus those of px_engine_push_parallel_for. Thread-safe.
 */
PX_API int px_engine_push_parallel_reduce_md(px_engine *e, px_space *s, const char *label,
                                             px_mdrange_policy p, const px_kernel *k,
                                             const void *args, size_t args_size,
                                             const px_reducer *r, void *result,
                                             px_var *const *reads, size_t n_reads,
                                             px_var *const *writes, size_t n_writes);
/**
 * Push an MDRange host function reduce (px_parallel_reduce_md_fn) as an op; *result is written
 * when the op runs. Statuses as px_parallel_reduce_md_fn, checked at push, plus those of
 * px_engine_push_parallel_for. Thread-safe.
 */
PX_API int px_engine_push_parallel_reduce_md_fn(px_engine *e, px_space *s, const char *label,
                                                px_mdrange_policy p, px_md_reduce_fn fn, void *ctx,
                                                const px_reducer *r, void *result,
                                                px_var *const *reads, size_t n_reads,
                                                px_var *const *writes, size_t n_writes);
/** @} */

/** @name Team launches as ops (parex/team.h)
 * Pushes of px_parallel_for_team / px_parallel_reduce_team and their _fn variants: the launch
 * is checked at push by the same path as the direct call (a bad policy, team size or scratch
 * is reported here, with the direct call's status and message) and runs on a worker when its
 * Vars allow. Kernel arguments are copied at push; a _fn ctx must stay valid until the op has
 * run; *result is written when the op runs. Statuses: those of the direct call, plus those of
 * px_engine_push_parallel_for for the engine and the Var lists. Thread-safe.
 * @{ */
/** Push px_parallel_for_team (a PX_TEAM_FOR kernel) as an op reading @p reads and writing
 * @p writes. */
PX_API int px_engine_push_parallel_for_team(px_engine *e, px_space *s, const char *label,
                                            px_team_policy p, const px_team_kernel *k,
                                            const void *args, size_t args_size,
                                            px_var *const *reads, size_t n_reads,
                                            px_var *const *writes, size_t n_writes);
/** Push px_parallel_for_team_fn as an op. */
PX_API int px_engine_push_parallel_for_team_fn(px_engine *e, px_space *s, const char *label,
                                               px_team_policy p, px_team_fn fn, void *ctx,
                                               px_var *const *reads, size_t n_reads,
                                               px_var *const *writes, size_t n_writes);
/** Push px_parallel_reduce_team (a PX_TEAM_REDUCE kernel) as an op. */
PX_API int px_engine_push_parallel_reduce_team(px_engine *e, px_space *s, const char *label,
                                               px_team_policy p, const px_team_kernel *k,
                                               const void *args, size_t args_size,
                                               const px_reducer *r, void *result,
                                               px_var *const *reads, size_t n_reads,
                                               px_var *const *writes, size_t n_writes);
/** Push px_parallel_reduce_team_fn as an op. */
PX_API int px_engine_push_parallel_reduce_team_fn(px_engine *e, px_space *s, const char *label,
                                                  px_team_policy p, px_team_reduce_fn fn, void *ctx,
                                                  const px_reducer *r, void *result,
                                                  px_var *const *reads, size_t n_reads,
                                                  px_var *const *writes, size_t n_writes);
/** @} */

#ifdef __cplusplus
}
#endif
#endif /* PAREX_ENGINE_H */
