/* core/engine/engine_impl.h - internal layout of the dependency engine (the core/engine files).
 *
 * The design is MXNet's threaded engine: every Var keeps a FIFO queue of dependency entries
 * (one per op that uses the Var, MXNet's VersionedVarBlock), a running-reads count and a
 * pending-write head; every op (Opr block) has a wait counter that starts at
 * n_deps + 1 and is decremented once per Var that grants it access plus once by the pusher
 * when it has appended to every Var. The thread that takes the counter to zero dispatches the
 * op, always outside any Var lock.
 *
 * Differences from MXNet, each fixing something its users hit:
 *  - a push locks all its Vars (sorted by address: two-phase locking) before appending, so
 *    two pushers appending A,B and B,A cannot create a cycle (MXNet deadlocks there);
 *  - Vars and reusable operators are generation-checked handles into slot tables that are
 *    never freed while the engine lives, so a deleted handle used again is PX_EINVAL;
 *  - failures travel along the Var queues instead of being lost;
 *  - an in-flight counter bounds pushes (backpressure).
 */
#ifndef PXI_ENGINE_IMPL_H
#define PXI_ENGINE_IMPL_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/check.h"
#include "base/wait.h"
#include "core/engine/object_pool.h" /* also PXI_ENGINE_TLS and the inlining attributes */
#include "core/engine/spin_lock.h"
#include "parex/engine.h"

/* ---- spin lock: core/engine/spin_lock.h ---------------------------------------------------- */

/* ---- generation-checked handle tables (handle_table.c) ------------------------------------ */

/* A handle is (generation << 32) | (slot index + 1), cast to the opaque pointer type; slots
 * live in chunks that are never freed while the table lives, so a stale handle reads a
 * valid slot whose generation no longer matches. Generations come from one process-wide
 * counter, so a handle from another engine does not match either (barring 2^32 wraps). */
_Static_assert(sizeof(uintptr_t) >= 8, "engine handles need 64-bit pointers");
#define PXI_HANDLE_CHUNK      1024u
#define PXI_HANDLE_MAX_CHUNKS 4096u

typedef struct pxi_slot_hdr {
    atomic_uint gen; /* 0: free or being deleted; written under the owner's lock */
    uint32_t index;
    struct pxi_slot_hdr *next_free; /* under the table lock */
} pxi_slot_hdr;

typedef struct pxi_handle_table {
    pthread_mutex_t lock;
    size_t slot_bytes;
    void (*slot_init)(void *slot); /* called once per slot when its chunk is made */
    void (*slot_fini)(void *slot);
    _Atomic(unsigned char *) chunks[PXI_HANDLE_MAX_CHUNKS]; /* published with release */
    uint32_t n_slots;                                       /* under lock */
    pxi_slot_hdr *free_list;                                /* under lock */
    size_t n_live;                                          /* under lock */
} pxi_handle_table;

void pxi_handle_table_init(pxi_handle_table *t, size_t slot_bytes, void (*slot_init)(void *),
                           void (*slot_fini)(void *));
void pxi_handle_table_fini(pxi_handle_table *t);
/* A fresh slot with a new nonzero generation (stored in *gen, not yet published in the slot:
 * the caller stores it once the slot is ready), or NULL on allocation failure. */
void *pxi_handle_table_alloc(pxi_handle_table *t, uint32_t *gen);
void pxi_handle_table_release(pxi_handle_table *t, void *slot);
/* The slot a handle names if its generation matches right now, else NULL. Inline: every
 * push resolves each of its Vars through it (an out-of-line call cost the pusher ~23
 * instructions per Var; inline it is the loads and compares below). */
static inline void *pxi_handle_table_lookup(pxi_handle_table *t, uintptr_t handle, uint32_t *gen)
{
    uint32_t lo = (uint32_t)(handle & 0xffffffffu);
    uint32_t g = (uint32_t)((uint64_t)handle >> 32);
    uint32_t idx = lo - 1u; /* lo == 0 wraps to UINT32_MAX: out of range below */
    uint32_t ci = idx / PXI_HANDLE_CHUNK;
    if (PXI_UNLIKELY(g == 0 || ci >= PXI_HANDLE_MAX_CHUNKS))
        return NULL;
    unsigned char *c = atomic_load_explicit(&t->chunks[ci], memory_order_acquire);
    if (PXI_UNLIKELY(!c))
        return NULL;
    pxi_slot_hdr *h = (pxi_slot_hdr *)(c + (size_t)(idx % PXI_HANDLE_CHUNK) * t->slot_bytes);
    if (PXI_UNLIKELY(atomic_load_explicit(&h->gen, memory_order_acquire) != g))
        return NULL;
    *gen = g;
    return h;
}
static inline uintptr_t pxi_handle_make(uint32_t gen, uint32_t index)
{
    return ((uintptr_t)gen << 32) | ((uintptr_t)index + 1u);
}

/* ---- Vars, deps, oprs --------------------------------------------------------------------- */

struct pxi_opr;

/* One use of one Var by one op (MXNet's VersionedVarBlock), stored inside the op. */
typedef struct pxi_dep {
    struct pxi_dep *next; /* Var queue link, under the Var lock */
    struct pxi_opr *opr;
    struct pxi_var *var;
    uint32_t gen; /* the handle's generation, re-checked under the Var lock at push */
    int write;
} pxi_dep;

#define PXI_HEAD_WRITE_GRANTED (-1)

typedef struct pxi_var {
    pxi_slot_hdr hdr;
    pxi_spin lock;
    /* Under lock: nonzero while a worker's run holds the Var (var_queue.h, pxi_var_run): the
     * head is then the run's first dep, and the ops from it up to the one the run is at may
     * have finished and been recycled, so nothing walks the queue from the head until the run's
     * last op releases the Var. In the lock's padding: the Var stays 56 bytes. */
    int32_t in_run;
    /* Under lock: the queue of deps not yet granted. The head, when there is one, is always
     * a write (MXNet's pending_write): a read arriving at an empty queue is granted at once. */
    pxi_dep *head, *tail;
    /* Under lock: reads granted and not finished; PXI_HEAD_WRITE_GRANTED once the head write has
     * been granted (MXNet's kWriteTriggered marker). */
    int running_reads;
    /* The last failed writer's status with the engine's failure epoch at that moment:
     * (epoch << 32) | (uint32_t)status, 0 when clean; a failure of an older epoch counts as
     * clean (px_engine_wait_for_all advances the epoch: failure.h, pxi_var_failure). Written by
     * the completing writer (exclusive) or exchanged by a wait; relaxed: the Var lock orders
     * it for the next op. Ops read it before they run only while the engine has marks of the
     * current epoch (failure.h, pxi_engine_has_marks): on the lock's line, which the pusher
     * appending under the lock writes, a read per op of a chain took the line from the pusher;
     * a line of its own instead doubled the Var to 128 bytes and made a graph re-launch over
     * the 10^6 Vars of the wavefront 1.4x slower (bench/run_graph.sh). */
    _Atomic(uint64_t) failure;
} pxi_var;

typedef enum {
    PXI_OP_SYNC = 0,
    PXI_OP_ASYNC,
    PXI_OP_WAIT,  /* internal: wait_for_var signal */
    PXI_OP_DELETE /* internal: deferred Var deletion */
} pxi_op_kind;

typedef struct pxi_waiter {
    pxi_wait_flag done; /* 0 -> 1, posted (release) once status is set */
    int status;
} pxi_waiter;

typedef struct px_engine pxi_engine;
typedef struct pxi_operator pxi_operator;
typedef struct pxi_worker pxi_worker;

struct px_on_complete {
    atomic_int called; /* 0 -> 1: the first call wins; later calls are logged */
};

typedef struct pxi_opr {
    atomic_int wait; /* reads + writes + 1, counted down as Vars grant access */
    pxi_op_kind kind;
    px_sync_fn sfn;
    px_async_fn afn;
    void *arg;
    void (*cleanup)(void *arg); /* called once when the op is finished or skipped */
    px_context ctx;
    px_fn_property prop;
    int priority;
    uint64_t seq; /* push order, for equal priorities */
    const char *name;
    pxi_engine *e;
    pxi_operator *oper; /* reusable operator this push came from, or NULL */
    pxi_waiter *waiter; /* PXI_OP_WAIT */
    /* Lane queue link (under the lane lock), or, for an op its thread runs inline, the link of
     * that thread's ready list (push.c, run_inline). */
    struct pxi_opr *next;
    struct px_on_complete done;
    int run_status;     /* GPU sync ops: fn's status until the stream callback */
    pxi_worker *worker; /* GPU sync ops: the worker whose stream runs it */
    int size_class; /* pool index, -1 for a direct pxi_malloc, PXI_OPR_EXTERNAL/_OWNED/_ON_STACK */
    /* PXI_OPR_EXTERNAL blocks only (graph launches): finish hands the op to this instead of
     * releasing Vars and freeing the block; set by the layer that owns the block. */
    void (*finish_hook)(struct pxi_opr *o, int status);
    /* Written by the pusher before the op is published, then read-only. Subject to the cost
     * rule (cost.c, work-first inlining): a SYNC op of the normal CPU lane that is not a
     * kernel op, on a non-naive engine with inline_ns > 0. */
    uint8_t inline_ok;
    /* Written by the pusher before the op is published, then read-only: the op holds an
     * in-flight slot (all ops but those the pusher runs from push). */
    uint8_t counted;
    /* Set by the thread that runs the op when it skips it (a Var it uses failed): finish then
     * passes the failure on without reporting the op as failed itself. */
    uint8_t skipped;
    /* Written by the pusher before the op is published, then read-only: finish has a step to
     * take besides the release (a cleanup: kernel, MPI and graph ops; a Var's delete; an
     * operator's push), so the finish of a plain function op tests one byte (push.c,
     * finish_op). */
    uint8_t finish_extra;
    /* Written by the pusher before the op is published, then read-only: the block is a bulk
     * block (pxi_bulk, below): its deps past the first hold the entries later pushes append. */
    uint8_t bulk;
    uint32_t n_deps;
    uint32_t cap_deps;
    pxi_dep deps[];
} pxi_opr;

/* A FIFO of ops linked through pxi_opr.next, for ops that one thread owns (made ready and not
 * yet handed on): a Var queue release's ready ops, a thread's inline run list. */
typedef struct pxi_opr_fifo {
    pxi_opr *head, *tail;
} pxi_opr_fifo;

static inline void pxi_opr_fifo_push(pxi_opr_fifo *q, pxi_opr *o)
{
    o->next = NULL;
    if (q->tail)
        q->tail->next = o;
    else
        q->head = o;
    q->tail = o;
}

/* The oldest op, unlinked, or NULL when empty. */
static inline pxi_opr *pxi_opr_fifo_pop(pxi_opr_fifo *q)
{
    pxi_opr *o = q->head;
    if (o) {
        q->head = o->next;
        if (!q->head)
            q->tail = NULL;
    }
    return o;
}

#define PXI_OPR_CLASSES 4
extern const uint32_t pxi_opr_class_deps[PXI_OPR_CLASSES];

/* A reusable operator (px_engine_op_create): the template every push copies. */
struct pxi_operator {
    pxi_slot_hdr hdr;
    pxi_spin lock;
    int deleted;       /* under lock */
    int64_t in_flight; /* under lock: pushes not finished */
    pxi_op_kind kind;
    px_sync_fn sfn;
    px_async_fn afn;
    void *arg;
    px_context ctx;
    px_fn_property prop;
    int priority;
    char name[64];
    uintptr_t *vars; /* handles: reads then writes (pxi_malloc) */
    size_t n_reads, n_writes;
};

/* ---- worker lanes (lanes.c) ------------------------------------------------------------- */

/* What a lane's workers call back into: the op layer (push.c) hands this table to every lane
 * it has made (pxi_lane_create), so lanes sit below push and never call up into it. */
typedef struct pxi_lane_ops {
    /* Once, on the worker thread, before it looks for work. */
    void (*enter)(pxi_worker *w);
    /* The op this worker kept for itself (the continuation slot), or NULL. */
    pxi_opr *(*take_local)(void);
    /* Run one op this worker popped or kept. */
    void (*execute)(pxi_opr *o, pxi_worker *w);
    /* The worker found no work: publish what it counts locally. Nonzero when that may have
     * made ops ready (the worker then looks again before it sleeps). */
    int (*idle)(void);
} pxi_lane_ops;

/* The host lanes first: push.c's worker_enter tests kind <= PXI_LANE_IO. */
typedef enum {
    PXI_LANE_CPU = 0, /* FIFO, several workers */
    PXI_LANE_PRIO,    /* priority heap, its own workers */
    PXI_LANE_IO,      /* FIFO, one worker: host copy ops */
    PXI_LANE_GPU,     /* FIFO, one worker per device, own stream */
    PXI_LANE_GPU_COPY /* FIFO, one IO worker per device, own stream */
} pxi_lane_kind;

typedef struct pxi_lane pxi_lane;

struct pxi_worker {
    pxi_lane *lane;
    int index; /* run context worker number, engine-wide */
    pthread_t thread;
    void *stream; /* device stream (GPU lanes), owned by this worker */
};

/* Ready ops queued per CPU worker beyond which a pusher runs a ready op itself (push.c, at
 * throttle_now, says why 2). */
#define PXI_THROTTLE_PER_WORKER 2
/* In-flight caps (per worker) at or below which the pusher never runs ops inline. */
#define PXI_THROTTLE_CAP_PER_WORKER 64

struct pxi_lane {
    /* The line every enqueue and dequeue takes exclusively: the lock, the queue ends and the
     * queued count live together, so one hand-off moves one line between cores (the count
     * used to sit on its own line and cost a second transfer per op; STYLE.md section 6). */
    alignas(PXI_CACHE_LINE) pxi_spin lock;
    /* Written under lock, read without it by idle workers polling for work. */
    atomic_int n_queued;
    /* FIFO, under lock */
    pxi_opr_fifo fifo;
    /* priority heap, under lock */
    pxi_opr **heap;
    size_t heap_n, heap_cap;
    /* Read-mostly while the lane is busy: touched by workers only when they go idle. */
    alignas(PXI_CACHE_LINE) pxi_lane_kind kind;
    int device_id;
    /* The work-first throttle's bound (push.c, throttle_now): the pusher runs a ready op itself
     * when more than this many are queued. PXI_THROTTLE_PER_WORKER per worker, or INT_MAX (never)
     * when the engine's in-flight cap is at most PXI_THROTTLE_CAP_PER_WORKER per worker. Set at
     * creation, on the line the pusher reads for the lane's kind: the test used to read the
     * worker count's line and the engine's cap per push as well. */
    int throttle_at;
    pxi_engine *e;
    const pxi_lane_ops *ops;
    pxi_wait_event wake;    /* idle workers sleep here; an enqueue wakes one when needed */
    pxi_start_gate started; /* pxi_lane_create returns once every worker passed it */
    atomic_int stop;
    int64_t spin_ns; /* idle workers poll this long before sleeping (base/wait.h) */
    /* Workers polling: an enqueue they will see needs no wake. On its own line: every idle
     * episode of a worker (one per op when the workers keep up with empty ops) adds and
     * subtracts here, and sharing the line with the wake event's sleeper count, which every enqueue
     * reads, cost the pusher one more line transfer per hand-off. The pusher reads this only when a
     * sleeper exists. Empty ops, 2 workers, 13 alternating runs against the shared line:
     * independent median 139.7 -> 116.0 ns/op; chain 126-157 -> 68-80 ns/op (3 runs). */
    alignas(PXI_CACHE_LINE) atomic_int n_spinning;
    alignas(PXI_CACHE_LINE) int n_workers;
    pxi_worker *workers;
    void *cuda_space; /* px_space * for GPU lanes */
};

/* ---- measured op cost (work-first inlining, cost.c and cost.h) -------------------------- */

/* A direct-mapped table from op function to a moving average of its measured run time, each
 * slot one 64-bit word: a 24-bit tag of the function above a 40-bit average in nanoseconds,
 * so a reader never pairs one function with another's average. Read and written with relaxed
 * atomics and no lock (any thread that runs or pushes an eligible op): two functions fighting
 * over a slot misplace a few ops (pusher or worker), never change a result. */
#define PXI_COST_SLOTS 64
typedef struct pxi_cost_slot {
    _Atomic(uint64_t) word; /* (tag << 40) | average ns; 0: empty */
} pxi_cost_slot;

/* ---- the engine ------------------------------------------------------------------------- */

#define PXI_ENGINE_MAGIC 0x50584547u /* 'PXEG' */
#define PXI_MAX_CPU_DEVS 16
_Static_assert(PXI_MAX_CPU_DEVS < 32,
               "the lane bit masks (cpu_lanes_made, help) hold PXI_MAX_CPU_DEVS + 1 bits");
#define PXI_MAX_GPU_DEVS 16

struct px_engine {
    uint32_t magic;
    px_engine_kind kind;
    int cpu_workers;
    int n_cpus;    /* processors the process may run on, at create (pxi_os_num_cpus; 1 when
                    * oversubscribed, core/oversub.h) */
    int pool_full; /* several processors, all of them the Threads pool's (T >= C, core/oversub.h):
                    * a waiter holds the lanes and the MPI progress (calls.c) */
    int prio_workers;
    int64_t max_pending;
    int64_t low_pending; /* pushers blocked at max_pending resume here */
    int64_t spin_ns;     /* waits on the engine (in-flight, waiters): base/wait.h budget */
    int64_t inline_ns;   /* PX_ENGINE_INLINE_NS: ops measured below it run on the pusher */
    int64_t clock_ns;    /* cost of one pxi_os_now_ns() read, taken off every timed run */
    int is_default;
    int bulk;        /* PX_ENGINE_BULK: one-Var sync writes join a waiting bulk block (push.c) */
    int debug_check; /* PX_DEBUG_CHECK: run the Var queue checker after mutations */
    /* Var failure marks ever made (pxi_engine_var_fail) and their count when fail_epoch last
     * advanced: equal, no Var holds a failure of the current epoch and an op need not read its
     * Vars' failure words (failure.h). Read by every op, written only on failures and by
     * wait_for_all's recovery, so they stay in this read-mostly line. Relaxed: a mark an op
     * must see happens before it through the Var queue that granted it. */
    atomic_uint n_marks;
    atomic_uint marks_at_epoch;
    /* pools, by op capacity class */
    pxi_pool opr_pool[PXI_OPR_CLASSES];
    pxi_pool kop_pool; /* kernel op payloads */
    pxi_handle_table vars;
    pxi_handle_table operators;
    /* lanes: created at engine create (CPU device 0, prio, io) or lazily (other devices) */
    pthread_mutex_t lanes_lock;
    _Atomic(pxi_lane *) cpu_lanes[PXI_MAX_CPU_DEVS];
    /* Bit d set once cpu_lanes[d] is (release, after the slot's store): a helping waiter
     * looks at the lanes that exist, not at all PXI_MAX_CPU_DEVS slots on every pop. */
    atomic_uint cpu_lanes_made;
    pxi_lane *prio_lane;
    pxi_lane *io_lane;
    _Atomic(pxi_lane *) gpu_lanes[PXI_MAX_GPU_DEVS];
    _Atomic(pxi_lane *) gpu_copy_lanes[PXI_MAX_GPU_DEVS];
    int next_worker_index;        /* under lanes_lock */
    const pxi_lane_ops *lane_ops; /* what every lane of this engine calls back (push.c) */
    /* Objects above the engine that hold engine resources (graphs): told, once no op is in
     * flight, that the engine is going away (pxi_engine_dependent_*, runtime.c). */
    pthread_mutex_t dependents_lock;
    struct pxi_engine_dependent *dependents; /* under dependents_lock */
    /* Measured cost per op function: read on every eligible push, written on sampled runs. */
    alignas(PXI_CACHE_LINE) pxi_cost_slot cost[PXI_COST_SLOTS];
    /* counters */
    alignas(PXI_CACHE_LINE) atomic_llong in_flight;
    atomic_ullong push_seq;
    /* Threads waiting for in_flight to fall (wait_for_all, blocked pushers, destroy). */
    alignas(PXI_CACHE_LINE) pxi_wait_event idle;
    atomic_int n_finishing; /* threads inside inflight_sub (see pxi_engine_drain) */
    /* MPI messages posted and not complete (mpi.c): they keep their in-flight slots for the
     * waits, but backpressure does not count them (inflight.c). Changed once per message. */
    atomic_llong n_posted;
    atomic_int first_failure;    /* since the last wait_for_all */
    atomic_uint fail_epoch;      /* bumped by wait_for_all: clears every Var's failure */
    struct px_engine *list_next; /* runtime.c's engine list, under its lock */
};

/* Whether the threads that run @e's ops drive MPI progress themselves: one processor, or all of
 * them the Threads pool's. A waiter then holds the lanes and the progress (calls.c), and they
 * test the requests between a kernel's pieces (calls.c, lanes.c; core/piece_hook.h). */
static inline int pxi_engine_drives_progress(const pxi_engine *e)
{
    return e->n_cpus <= 1 || e->pool_full;
}

/* push.c */
/* One push, as the public calls, reusable operators and kernel ops describe it. Vars come
 * either as handle arrays (reads/writes) or as one array of raw handles (handles: reads
 * then writes). cleanup(arg) runs once when the op is finished or skipped, only if the push
 * returned PX_OK. */
typedef struct pxi_push {
    pxi_op_kind kind;
    px_sync_fn sfn;
    px_async_fn afn;
    void *arg;
    void (*cleanup)(void *arg);
    px_context ctx;
    px_var *const *reads;
    size_t n_reads;
    px_var *const *writes;
    size_t n_writes;
    const uintptr_t *handles;
    px_fn_property prop;
    int priority;
    const char *name;
    pxi_operator *oper;
    pxi_waiter *waiter;
    const char *caller;
    int no_inline; /* never run on the pusher by the cost rule (kernel ops) */
    /* Non-NULL: the handles are already in lock order (ascending Var address) without
     * duplicates, and sorted_writes[i] tells whether handle i is a write (n_reads counts them
     * all); push skips its sort (graph launches: sorted once at px_graph_end). */
    const uint8_t *sorted_writes;
    /* Non-NULL: a PXI_OPR_OWNED block whose deps its owner resolved and sorted (var, gen,
     * write, opr = block; n_deps set): push uses it instead of allocating one and resolving
     * the handles, and re-checks each dep's generation under the Var lock (graph launches:
     * one block per launch state, kept across launches). */
    struct pxi_opr *block;
} pxi_push;

/* Fill every field of a public push's descriptor one by one: a designated initializer zeroes
 * the whole 150-byte struct first, which GCC does with `rep stos`, whose start-up cost was
 * 9% of an empty op's push. */
static inline void pxi_push_describe(pxi_push *p, pxi_op_kind kind, void *arg, px_context ctx,
                                     px_var *const *reads, size_t n_reads, px_var *const *writes,
                                     size_t n_writes, px_fn_property prop, int priority,
                                     const char *name, const char *caller)
{
    p->kind = kind;
    p->sfn = NULL;
    p->afn = NULL;
    p->arg = arg;
    p->cleanup = NULL;
    p->ctx = ctx;
    p->reads = reads;
    p->n_reads = n_reads;
    p->writes = writes;
    p->n_writes = n_writes;
    p->handles = NULL;
    p->prop = prop;
    p->priority = priority;
    p->name = name;
    p->oper = NULL;
    p->waiter = NULL;
    p->caller = caller;
    p->no_inline = 0;
    p->sorted_writes = NULL;
    p->block = NULL;
}

PX_NODISCARD int pxi_engine_push(pxi_engine *e, const pxi_push *p);
/* pxi_engine_push for a public push (calls.c) whose arguments were checked: a SYNC or ASYNC op
 * from Var lists, with no cleanup, operator, waiter, handle array, sorted list or block. Only
 * kind, sfn, afn, arg, ctx, reads, n_reads, writes, n_writes, prop, priority, name and caller of
 * @p are read (the others need not be set). */
PX_NODISCARD int pxi_engine_push_plain(pxi_engine *e, const pxi_push *p);
/* px_engine_push_sync and px_engine_push_async whole (engine.h: same arguments, same statuses,
 * errors logged under their names): their argument checks (push_front.h), then the push as
 * pxi_engine_push_plain's. The public calls jump here, and the descriptor's fields stay in
 * registers: the fill, copy and checks of a 20-field descriptor two calls deep were ~90 of the
 * pusher's ~370 instructions per empty op (callgrind, bench/RESULTS.md). */
PX_NODISCARD int pxi_engine_push_sync_public(pxi_engine *e, px_sync_fn fn, void *arg,
                                             px_context ctx, px_var *const *reads, size_t n_reads,
                                             px_var *const *writes, size_t n_writes,
                                             px_fn_property prop, int priority, const char *name);
PX_NODISCARD int pxi_engine_push_async_public(pxi_engine *e, px_async_fn fn, void *arg,
                                              px_context ctx, px_var *const *reads, size_t n_reads,
                                              px_var *const *writes, size_t n_writes,
                                              px_fn_property prop, int priority, const char *name);
/* Push an internal op (PXI_OP_WAIT with @waiter, PXI_OP_DELETE) that writes the one Var @v. */
PX_NODISCARD int pxi_engine_push_internal(pxi_engine *e, pxi_op_kind kind, px_var *v,
                                          pxi_waiter *waiter, const char *name, const char *caller);
/* Hand a ready op (wait counter at zero) to its lane, or run it on this thread (naive engine,
 * internal ops, ASYNC ops ready at push, the work-first throttle) after any op this thread
 * is already running inline: never recursively. @from_push: the pusher made it ready. */
void pxi_engine_dispatch(pxi_opr *o, int from_push);
/* checks.h / checks.c: the argument checks of the engine's public calls. */
/* push.c again. */
/* Run one dispatched op on the calling thread; w is the worker or NULL (pusher/inline). */
void pxi_engine_execute(pxi_opr *o, pxi_worker *w);
/* Worker-thread registration, the continuation slot and the idle flush, as the table every
 * lane of an engine calls back (runtime.c passes it to pxi_lane_create). */
extern const pxi_lane_ops pxi_engine_lane_ops;
int pxi_engine_in_op(void);
/* Nonzero on an engine worker thread. */
int pxi_engine_on_worker(void);
/* A waiter that runs ops of @e while it waits (calls.c, help-while-waiting; never inside an
 * op, where a wait is refused) brackets its loop with pxi_engine_help_begin and
 * pxi_engine_help_end. Between them it has a worker's continuation slot: the first CPU op of
 * @e that a finish on it makes ready outside any op (an op it ran, a message its poll
 * completed) while every lane it pops is empty (pxi_lane_help_idle) waits there instead of in
 * its lane, and pxi_engine_help_take returns it (or NULL) before the waiter looks at the
 * lanes; pxi_engine_help_end hands one still there to its lane. */
void pxi_engine_help_begin(pxi_engine *e);
pxi_opr *pxi_engine_help_take(void);
void pxi_engine_help_end(void);
/* Nonzero on a thread that runs CPU ops: a worker of a CPU, priority or IO lane (set when it
 * starts) or a waiter while it helps (calls.c sets and restores it). A PX_FN_ASYNC op that a
 * finish on such a thread makes ready runs there at once (push.c, pxi_engine_dispatch). Set
 * once per thread, so the ops pay nothing for it. */
extern PXI_ENGINE_TLS int pxi_engine_tl_cpu_runner;
/* A layer above push that counts work per thread in batches (graph launches) sets this on a
 * worker thread; the worker calls it when it runs out of work, before it sleeps. It returns
 * nonzero when it counted something down (which may have made ops ready). */
extern PXI_ENGINE_TLS int (*pxi_engine_tl_idle_hook)(void);
/* Recording (graphs): while a thread's recorder is set, its SYNC/ASYNC pushes go to
 * record() instead of the Var queues, and the thread may not wait on the engine. */
typedef struct pxi_recorder {
    pxi_engine *e;
    int (*record)(struct pxi_recorder *r, pxi_engine *e, const pxi_push *p);
} pxi_recorder;
extern PXI_ENGINE_TLS pxi_recorder *pxi_engine_tl_recorder;
/* The handle of a push's dep @i: reads first (0 .. n_reads - 1), then writes; from the handle
 * array when the push carries one (reusable operators), else from the Var pointers. */
static inline uintptr_t pxi_push_handle(const pxi_push *p, size_t i)
{
    if (p->handles)
        return p->handles[i];
    return (uintptr_t)(i >= p->n_reads ? p->writes[i - p->n_reads] : p->reads[i]);
}

/* Mark @v failed with @status in the engine's current failure epoch (failure.c). The caller holds
 * the Var as its writer (an op or a graph launch at the head of its queue). */
void pxi_engine_var_fail(pxi_engine *e, pxi_var *v, int status);

/* inflight.c: wait until no op is in flight (no failure cleared). */
void pxi_engine_drain(pxi_engine *e);
/* push.c: finish a GPU sync op from the stream callback. */
void pxi_engine_gpu_done(void *arg, int status);
/* cost.c: what one pxi_os_now_ns() read costs, in ns (engine create stores it in clock_ns). */
int64_t pxi_engine_clock_cost_ns(void);

/* var_queue.h / var_queue.c: locking, appending and releasing an op's deps. */

/* operator_ref.c: one push of operator @t has finished (frees a deleted operator's slot). */
void pxi_operator_release(pxi_engine *e, pxi_operator *t);
/* operator_ref.c: return a deleted operator with no push in flight to the engine's table. */
void pxi_operator_free(pxi_engine *e, pxi_operator *t);

/* lanes.c */
/* A lane of @n_workers threads, each calling back @ops (push.c's pxi_engine_lane_ops). */
PX_NODISCARD int pxi_lane_create(pxi_engine *e, const pxi_lane_ops *ops, pxi_lane_kind kind,
                                 int device_id, int n_workers, pxi_lane **out);
void pxi_lane_destroy(pxi_lane *l);
void pxi_lane_push(pxi_lane *l, pxi_opr *o);
/* Enqueue @n ready ops linked through pxi_opr.next (NULL-terminated) with one lock round and
 * one wake-up decision (graph launches release many roots at once). */
void pxi_lane_push_batch(pxi_lane *l, pxi_opr *head, int n);
/* The lane an op goes to, creating a device lane on first use; NULL with *status set. */
pxi_lane *pxi_lane_for(pxi_engine *e, const pxi_opr *o, int *status);
/* Validates a context at push time: PX_OK, PX_EINVAL or PX_ENODEV (logged with @caller). */
PX_NODISCARD int pxi_lane_check_ctx(pxi_engine *e, px_context ctx, px_fn_property prop,
                                    const char *caller);

/* A thread waiting on @e that runs ready ops meanwhile (calls.c, help-while-waiting): pop the
 * next ready op of e's priority lane, else of its CPU lanes (FIFO order kept; never the IO or
 * GPU lanes), or NULL. */
pxi_opr *pxi_lane_help_pop(pxi_engine *e);
/* Nonzero when no lane that pxi_lane_help_pop looks at holds a queued op (relaxed reads: a
 * hint, for keeping the pop order). */
int pxi_lane_help_idle(pxi_engine *e);
/* Count the calling waiter as pollers enough for any queue on every CPU lane of @e that exists
 * now, so no enqueue wakes a sleeping worker while it waits (a rank with one processor);
 * returns the lanes counted, for pxi_lane_help_release, which uncounts them and wakes a
 * worker for what is still queued. */
unsigned pxi_lane_help_hold(pxi_engine *e);
void pxi_lane_help_release(pxi_engine *e, unsigned held);

/* Op blocks owned by a layer above push (graph launches): finish calls o->finish_hook. */
#define PXI_OPR_EXTERNAL (-2)
/* Op blocks pushed through pxi_push.block: finish releases their Vars like any op's, then,
 * instead of freeing the block, calls o->finish_hook(o, status), after which the owner may
 * push it again; a push that fails leaves the block to its caller. */
#define PXI_OPR_OWNED (-3)
/* An op block on its pusher's stack (push.c, pxi_engine_push): finish frees nothing. */
#define PXI_OPR_ON_STACK (-4)

/* runtime.c */
void pxi_engine_list_add(pxi_engine *e);
void pxi_engine_list_remove(pxi_engine *e);
/* Something above the engine that holds engine resources (a graph: its kernel ops' argument
 * copies live in the engine's pools). Engine destroy, once no op is in flight, unlinks every
 * dependent and calls its engine_gone(), which must release those resources and forget the
 * engine; it must not call pxi_engine_dependent_remove. */
typedef struct pxi_engine_dependent {
    struct pxi_engine_dependent *prev, *next;
    void (*engine_gone)(struct pxi_engine_dependent *d);
} pxi_engine_dependent;
void pxi_engine_dependent_add(pxi_engine *e, pxi_engine_dependent *d);
void pxi_engine_dependent_remove(pxi_engine *e, pxi_engine_dependent *d);

#endif
