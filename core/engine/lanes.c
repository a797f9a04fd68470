/* core/engine/lanes.c - worker lanes: the queues ready ops wait in and the threads that run
 * them (MXNet's ThreadedEnginePerDevice worker blocks and ThreadedEnginePooled's pools).
 *
 * A lane is a FIFO (or, for the CPU priority lane, a binary heap ordered by priority then
 * push sequence) behind a spin lock, plus its worker threads. Idle workers poll the lane's
 * queued count for the base/wait.h budget, then sleep on the lane's wait event; an enqueue
 * wakes a sleeper only when one exists and no poller will take the op, so a busy engine makes
 * no system calls.
 *
 * Lanes sit below the op layer: a worker calls back only through the pxi_lane_ops table its
 * lane was made with (push.c's pxi_engine_lane_ops), never into push.c or graph code directly.
 *
 * Which lane an op goes to:
 *   CPU context:  PX_FN_COPY_*        -> the IO lane (one worker: copies do not compete with
 *                                        compute for cores);
 *                 PX_FN_CPU_PRIORITIZED -> the priority lane (per_device; pooled uses CPU 0);
 *                 otherwise           -> the CPU lane of ctx.device_id (per_device; created
 *                                        on first use) or the shared CPU lane (pooled).
 *   CUDA context: PX_FN_COPY_*        -> the device's copy lane (one IO thread, own stream);
 *                 otherwise           -> the device's compute lane (one worker, own stream).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "base/os.h"
#include "base/wait.h"
#include "core/engine/engine_impl.h"
#include "core/engine/mpi_hooks.h"
#include "core/piece_hook.h"
#include "core/registry.h"
#include "core/trace.h"

/* Higher priority first; equal priorities in push order. */
static int heap_before(const pxi_opr *a, const pxi_opr *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    return a->seq < b->seq;
}

static int heap_push(pxi_lane *l, pxi_opr *o)
{
    if (l->heap_n == l->heap_cap) {
        size_t cap = l->heap_cap ? 2 * l->heap_cap : 256;
        pxi_opr **h = pxi_malloc(cap * sizeof *h);
        if (!h)
            return PX_ENOMEM;
        if (l->heap_n)
            memcpy(h, l->heap, l->heap_n * sizeof *h);
        pxi_free(l->heap);
        l->heap = h;
        l->heap_cap = cap;
    }
    size_t i = l->heap_n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!heap_before(o, l->heap[parent]))
            break;
        l->heap[i] = l->heap[parent];
        i = parent;
    }
    l->heap[i] = o;
    return PX_OK;
}

static pxi_opr *heap_pop(pxi_lane *l)
{
    if (l->heap_n == 0)
        return NULL;
    pxi_opr *top = l->heap[0];
    pxi_opr *last = l->heap[--l->heap_n];
    size_t i = 0, n = l->heap_n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && heap_before(l->heap[c + 1], l->heap[c]))
            ++c;
        if (!heap_before(l->heap[c], last))
            break;
        l->heap[i] = l->heap[c];
        i = c;
    }
    if (n > 0)
        l->heap[i] = last;
    return top;
}

void pxi_lane_push(pxi_lane *l, pxi_opr *o)
{
    pxi_spin_lock(&l->lock);
    int in_heap = 0;
    if (l->kind == PXI_LANE_PRIO)
        in_heap = heap_push(l, o) == PX_OK;
    if (!in_heap) {
        /* FIFO lanes, and the priority lane's overflow when its heap cannot grow. */
        pxi_opr_fifo_push(&l->fifo, o);
    }
    /* Under the lock, so a plain store: no second locked instruction per op. */
    int queued = atomic_load_explicit(&l->n_queued, memory_order_relaxed) + 1;
    atomic_store_explicit(&l->n_queued, queued, memory_order_relaxed);
    pxi_spin_unlock(&l->lock);
    /* seq_cst fence, paired with the sleeper's seq_cst increment of the sleeper count and
     * re-check of n_queued (base/wait.c): either the sleeper sees this op or we see it. */
    atomic_thread_fence(memory_order_seq_cst);
    /* A polling worker will take the op (it re-checks n_queued after announcing itself as a
     * sleeper), so wake a sleeper only for work beyond what the pollers can see. */
    if (pxi_wait_event_sleepers(&l->wake) > 0 &&
        queued > atomic_load_explicit(&l->n_spinning, memory_order_seq_cst))
        pxi_wait_event_wake(&l->wake, 1);
}

void pxi_lane_push_batch(pxi_lane *l, pxi_opr *head, int n)
{
    if (n <= 0)
        return;
    pxi_spin_lock(&l->lock);
    for (pxi_opr *o = head, *next; o; o = next) {
        next = o->next;
        if (l->kind == PXI_LANE_PRIO && heap_push(l, o) == PX_OK)
            continue;
        pxi_opr_fifo_push(&l->fifo, o);
    }
    int queued = atomic_load_explicit(&l->n_queued, memory_order_relaxed) + n;
    atomic_store_explicit(&l->n_queued, queued, memory_order_relaxed);
    pxi_spin_unlock(&l->lock);
    /* As pxi_lane_push, once for the batch: wake as many sleepers as there are ops beyond what
     * the pollers will take. */
    atomic_thread_fence(memory_order_seq_cst);
    int sleepers = pxi_wait_event_sleepers(&l->wake);
    if (sleepers > 0) {
        int extra = queued - atomic_load_explicit(&l->n_spinning, memory_order_seq_cst);
        if (extra > 0)
            pxi_wait_event_wake(&l->wake, extra < sleepers ? extra : sleepers);
    }
}

static pxi_opr *lane_pop(pxi_lane *l)
{
    if (atomic_load_explicit(&l->n_queued, memory_order_relaxed) <= 0)
        return NULL;
    pxi_spin_lock(&l->lock);
    pxi_opr *o = NULL;
    if (l->kind == PXI_LANE_PRIO)
        o = heap_pop(l);
    if (!o)
        o = pxi_opr_fifo_pop(&l->fifo);
    if (o)
        atomic_store_explicit(&l->n_queued,
                              atomic_load_explicit(&l->n_queued, memory_order_relaxed) - 1,
                              memory_order_relaxed);
    pxi_spin_unlock(&l->lock);
    return o;
}

static const char *lane_kind_name(pxi_lane_kind k)
{
    switch (k) {
    case PXI_LANE_CPU:
        return "cpu";
    case PXI_LANE_PRIO:
        return "prio";
    case PXI_LANE_IO:
        return "io";
    case PXI_LANE_GPU:
        return "gpu";
    case PXI_LANE_GPU_COPY:
        return "gpucopy";
    }
    return "lane";
}

/* An idle worker's condition: work queued or the lane stopping (seq_cst, for the Dekker pair
 * with pxi_lane_push's fence). */
static int lane_ready(const void *arg)
{
    pxi_lane *l = (pxi_lane *)(uintptr_t)arg;
    return atomic_load_explicit(&l->n_queued, memory_order_seq_cst) > 0 ||
           atomic_load_explicit(&l->stop, memory_order_acquire);
}

static void *worker_main(void *arg)
{
    pxi_worker *w = arg;
    pxi_lane *l = w->lane;
    char name[32];
    snprintf(name, sizeof name, "px-%s%d-%d", lane_kind_name(l->kind), l->device_id, w->index);
    /* Start from the process's placement, not the creator's binding (the initializing thread
     * is bound to one core as Threads rank 0); named after, so that whoever finds the thread
     * by its name (check_placement) sees its placement. */
    pxi_os_affinity_apply_captured();
    pxi_os_thread_set_name(name);
    pxi_trace_thread_name(name);
    pxi_alloc_thread_warm();
    /* On one processor the thread that pushes is also the one that waits and runs the ops
     * itself (calls.c, help-while-waiting): a worker its push wakes took the processor from
     * it at once, ran the first ops until it blocked, and left the pusher to reach its wait
     * late. The first iteration of an 18-iteration distributed CG (HPCG 8^3 a rank, 2
     * one-core ranks) took 160-190 us so against 80-100 with workers that do not preempt on
     * wake-up (bench/RESULTS.md, session 29). They still get their fair share: a pusher that
     * computes instead of waiting yields the processor to them at its slice's end. */
    if (l->e->n_cpus <= 1) {
        const int err = pxi_os_thread_no_wakeup_preemption();
        if (err != 0)
            PXI_DEBUG("engine worker %s: wake-ups keep preempting (%s)", name, strerror(err));
    }
    const pxi_lane_ops *ops = l->ops;
    ops->enter(w);
    /* On one processor (or all of them the Threads pool's) nothing else drives MPI progress
     * while this worker runs a long kernel op: it tests the messages between the kernel's
     * pieces, as a waiter holding progress does (calls.c; core/piece_hook.h). The naive
     * engine has no workers; a device lane's ops only launch. */
    if (l->kind <= PXI_LANE_IO && pxi_engine_drives_progress(l->e))
        pxi_tl_piece_hook = pxi_mpi_piece_poll;
    const px_space *cs = l->cuda_space;
    if (cs && cs->ops->stream_create) {
        if (cs->ops->stream_create(&w->stream) != PX_OK) {
            PXI_WARN("engine worker %s: no device stream; ops use the default stream", name);
            w->stream = NULL;
        }
    }
    pxi_start_gate_pass(&l->started);
    for (;;) {
        pxi_opr *o = ops->take_local();
        if (!o)
            o = lane_pop(l);
        if (o) {
            ops->execute(o, w);
            continue;
        }
        /* No pause-poll before the idle flush (6c045f7 had one, about a microsecond): with
         * 2 workers and the pusher on 2 cores, a worker that kept its core that long took it
         * from the pusher (bench_engine independent, PX_ENGINE_INLINE_NS=0: 75 -> 105 ns/op).
         * The wait below yields while it polls. */
        if (ops->idle())
            continue; /* what it counted down may have made ops ready */
        if (atomic_load_explicit(&l->stop, memory_order_acquire))
            break;
        /* Poll politely (PXI_WAIT_YIELD): with W workers plus the pusher there are more
         * threads than cores (2 workers + 1 pusher on the 2-core CI VM), and an idle worker
         * that keeps its core while the pusher waits for one starves the very thread that
         * makes work. Then sleep until an enqueue wakes this worker. */
        pxi_wait_event_until(&l->wake, lane_ready, l, l->spin_ns, &l->n_spinning, PXI_WAIT_YIELD);
    }
    if (w->stream && cs->ops->stream_destroy)
        (void)cs->ops->stream_destroy(w->stream);
    w->stream = NULL;
    return NULL;
}

static void lane_stop(pxi_lane *l, int n_started)
{
    /* Release: workers that acquire stop see the drained queues. */
    atomic_store_explicit(&l->stop, 1, memory_order_release);
    atomic_thread_fence(memory_order_seq_cst);
    pxi_wait_event_wake(&l->wake, 0);
    for (int i = 0; i < n_started; ++i)
        pthread_join(l->workers[i].thread, NULL);
}

int pxi_lane_create(pxi_engine *e, const pxi_lane_ops *ops, pxi_lane_kind kind, int device_id,
                    int n_workers, pxi_lane **out)
{
    pxi_lane *l = pxi_malloc_aligned(sizeof *l, PXI_CACHE_LINE);
    if (!l)
        return PX_ENOMEM;
    memset(l, 0, sizeof *l);
    pxi_spin_init(&l->lock);
    l->kind = kind;
    l->device_id = device_id;
    l->e = e;
    l->ops = ops;
    atomic_init(&l->n_queued, 0);
    pxi_wait_event_init(&l->wake);
    pxi_start_gate_init(&l->started);
    /* Throttled only when the lane's own workers outnumber the CPUs. The pusher is not counted:
     * it usually pushes and then waits (asleep), and counting it throttled every 2-worker lane
     * on 2 cores to a 1 us spin, so each handed-off op cost a futex wake-up: 88 -> 162 ns per
     * independent op (bench/RESULTS.md, "## Structure"). */
    l->spin_ns = pxi_wait_spin_ns(n_workers, 0);
    atomic_init(&l->n_spinning, 0);
    atomic_init(&l->stop, 0);
    if (kind == PXI_LANE_GPU || kind == PXI_LANE_GPU_COPY)
        l->cuda_space = pxi_registry_device_space();
    l->workers = pxi_calloc((size_t)n_workers, sizeof *l->workers);
    if (!l->workers) {
        pxi_free_aligned(l);
        return PX_ENOMEM;
    }
    l->n_workers = n_workers;
    l->throttle_at = e->max_pending > (int64_t)PXI_THROTTLE_CAP_PER_WORKER * n_workers
                         ? PXI_THROTTLE_PER_WORKER * n_workers
                         : INT_MAX;
    for (int i = 0; i < n_workers; ++i) {
        pxi_worker *w = &l->workers[i];
        w->lane = l;
        w->index = e->next_worker_index++;
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            PXI_ERROR("px_engine_create: cannot start worker thread %d", i);
            lane_stop(l, i);
            pxi_free(l->workers);
            pxi_free_aligned(l);
            return PX_ENOMEM;
        }
    }
    pxi_start_gate_wait(&l->started, n_workers);
    *out = l;
    return PX_OK;
}

void pxi_lane_destroy(pxi_lane *l)
{
    if (!l)
        return;
    lane_stop(l, l->n_workers);
    pxi_free(l->heap);
    pxi_free(l->workers);
    pxi_free_aligned(l);
}

/* Create the lane in *slot unless another thread did (lanes made after engine create: other
 * devices). Kept out of line: lane_get's fast path is on every dispatch. */
#if defined(__GNUC__)
#define LANE_NOINLINE __attribute__((noinline))
#else
#define LANE_NOINLINE
#endif
static LANE_NOINLINE pxi_lane *lane_create_slow(pxi_engine *e, _Atomic(pxi_lane *) *slot,
                                                pxi_lane_kind kind, int device_id, int n_workers,
                                                int *status)
{
    pthread_mutex_lock(&e->lanes_lock);
    pxi_lane *l = atomic_load_explicit(slot, memory_order_relaxed);
    if (!l) {
        int rc = pxi_lane_create(e, e->lane_ops, kind, device_id, n_workers, &l);
        if (rc != PX_OK) {
            pthread_mutex_unlock(&e->lanes_lock);
            PXI_ERROR("engine: cannot create the %s lane of device %d", lane_kind_name(kind),
                      device_id);
            *status = rc;
            return NULL;
        }
        atomic_store_explicit(slot, l, memory_order_release);
        if (kind == PXI_LANE_CPU)
            atomic_fetch_or_explicit(&e->cpu_lanes_made, 1u << device_id, memory_order_release);
    }
    pthread_mutex_unlock(&e->lanes_lock);
    return l;
}

/* Get or create the lane in *slot. */
static inline pxi_lane *lane_get(pxi_engine *e, _Atomic(pxi_lane *) *slot, pxi_lane_kind kind,
                                 int device_id, int n_workers, int *status)
{
    /* Acquire: pairs with the release publication in lane_create_slow. */
    pxi_lane *l = atomic_load_explicit(slot, memory_order_acquire);
    if (PXI_LIKELY(l != NULL))
        return l;
    return lane_create_slow(e, slot, kind, device_id, n_workers, status);
}

pxi_lane *pxi_lane_for(pxi_engine *e, const pxi_opr *o, int *status)
{
    int dev = o->ctx.device_id;
    int copy = o->prop == PX_FN_COPY_TO_DEVICE || o->prop == PX_FN_COPY_FROM_DEVICE;
    if (o->ctx.type == PX_DEV_CUDA) {
        if (copy)
            return lane_get(e, &e->gpu_copy_lanes[dev], PXI_LANE_GPU_COPY, dev, 1, status);
        return lane_get(e, &e->gpu_lanes[dev], PXI_LANE_GPU, dev, 1, status);
    }
    if (copy)
        return e->io_lane;
    if (e->kind == PX_ENGINE_POOLED)
        return atomic_load_explicit(&e->cpu_lanes[0], memory_order_relaxed);
    if (o->prop == PX_FN_CPU_PRIORITIZED)
        return e->prio_lane;
    return lane_get(e, &e->cpu_lanes[dev], PXI_LANE_CPU, dev, e->cpu_workers, status);
}

int pxi_lane_check_ctx(pxi_engine *e, px_context ctx, px_fn_property prop, const char *caller)
{
    (void)e;
    (void)prop;
    if (ctx.type == PX_DEV_CPU) {
        if (ctx.device_id < 0 || ctx.device_id >= PXI_MAX_CPU_DEVS) {
            PXI_ERROR("%s: CPU context device_id %d is outside [0, %d)", caller, ctx.device_id,
                      PXI_MAX_CPU_DEVS);
            return PX_EINVAL;
        }
        return PX_OK;
    }
    if (ctx.type != PX_DEV_CUDA) {
        PXI_ERROR("%s: unknown context type %d", caller, (int)ctx.type);
        return PX_EINVAL;
    }
    if (ctx.device_id < 0 || ctx.device_id >= PXI_MAX_GPU_DEVS) {
        PXI_ERROR("%s: CUDA context device_id %d is outside [0, %d)", caller, ctx.device_id,
                  PXI_MAX_GPU_DEVS);
        return PX_EINVAL;
    }
    if (!pxi_registry_device_space()) {
        PXI_ERROR("%s: CUDA context, but the cuda space is not available", caller);
        return PX_ENODEV;
    }
    return PX_OK;
}

/* ---- helping threads (calls.c: a thread that waits on the engine runs ready ops) ---------- */

/* The CPU lanes a waiter may run ops of: the priority lane (bit PXI_MAX_CPU_DEVS) and each
 * created CPU lane (bit = device id). Never the IO lane (one worker: copies do not overlap)
 * nor GPU lanes (their ops need the worker's stream). */
static pxi_lane *help_lane(pxi_engine *e, int bit)
{
    if (bit == PXI_MAX_CPU_DEVS)
        return e->kind == PX_ENGINE_POOLED ? NULL : e->prio_lane;
    return atomic_load_explicit(&e->cpu_lanes[bit], memory_order_acquire);
}

/* The highest set bit of @v (nonzero). */
static int top_bit(unsigned v)
{
#if defined(__GNUC__)
    return 31 - __builtin_clz(v);
#else
    int b = 0;
    while (v >>= 1)
        ++b;
    return b;
#endif
}

/* The bits help_lane can answer for: the CPU lanes made so far (acquire: pairs with
 * lane_create_slow's release, so a set bit's slot is seen set) and the prio lane's. */
static unsigned help_lanes(pxi_engine *e)
{
    return atomic_load_explicit(&e->cpu_lanes_made, memory_order_acquire) | 1u << PXI_MAX_CPU_DEVS;
}

/* The lane of the highest bit left in *@bits (help_lanes' order: prio, then the CPU lanes from
 * the highest device down), which it clears; NULL when that lane does not exist. */
static pxi_lane *help_next(pxi_engine *e, unsigned *bits)
{
    const int bit = top_bit(*bits);
    *bits &= ~(1u << bit);
    return help_lane(e, bit);
}

/* A waiter pops on every look (several times an op on one processor): it scans only the lanes
 * that exist (help_lanes), the prio lane first, then the CPU lanes from the highest device down,
 * where it used to load all 17 slots (about 150 instructions a look; bench/RESULTS.md, session
 * 30). */
pxi_opr *pxi_lane_help_pop(pxi_engine *e)
{
    for (unsigned bits = help_lanes(e); bits != 0;) {
        pxi_lane *l = help_next(e, &bits);
        pxi_opr *o = l ? lane_pop(l) : NULL;
        if (o)
            return o;
    }
    return NULL;
}

int pxi_lane_help_idle(pxi_engine *e)
{
    for (unsigned bits = help_lanes(e); bits != 0;) {
        const pxi_lane *l = help_next(e, &bits);
        if (l && atomic_load_explicit(&l->n_queued, memory_order_relaxed) > 0)
            return 0;
    }
    return 1;
}

/* What a holding waiter adds to a lane's poller count: more than any queue length, so no
 * enqueue wakes a sleeping worker while it holds (on one processor the waiter runs them all). */
#define HELP_HOLD (1 << 20)

unsigned pxi_lane_help_hold(pxi_engine *e)
{
    unsigned held = 0;
    const unsigned lanes = help_lanes(e);
    for (int bit = 0; bit <= PXI_MAX_CPU_DEVS; ++bit) {
        pxi_lane *l = lanes & (1u << bit) ? help_lane(e, bit) : NULL;
        if (l) {
            atomic_fetch_add_explicit(&l->n_spinning, HELP_HOLD, memory_order_seq_cst);
            held |= 1u << bit;
        }
    }
    return held;
}

void pxi_lane_help_release(pxi_engine *e, unsigned held)
{
    for (int bit = 0; bit <= PXI_MAX_CPU_DEVS; ++bit) {
        if (!(held & (1u << bit)))
            continue;
        pxi_lane *l = help_lane(e, bit);
        /* As a worker that stops polling: the seq_cst decrement, then a look at the queue,
         * pair with pxi_lane_push's store, fence and look at the pollers (either the pusher
         * counted us out and woke a sleeper, or we see its op and wake one now). */
        int spinning =
            atomic_fetch_sub_explicit(&l->n_spinning, HELP_HOLD, memory_order_seq_cst) - HELP_HOLD;
        int queued = atomic_load_explicit(&l->n_queued, memory_order_seq_cst);
        if (queued > spinning && pxi_wait_event_sleepers(&l->wake) > 0)
            pxi_wait_event_wake(&l->wake, queued - spinning);
    }
}
