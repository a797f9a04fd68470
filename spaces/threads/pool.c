/* spaces/threads/pool.c - the Threads space's workers, job dispatch and launch lock. See pool.h
 * for the protocol; the fan-in tree is in fanin.c, the waits in base/wait.c. */
#include "spaces/threads/pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "base/os.h"
#include "base/wait.h"
#include "core/runtime.h"

typedef struct worker_start {
    pxi_tpool *pool;
    int rank;
} worker_start;

struct pxi_tpool {
    /* Read-mostly after create. */
    int nranks;
    int64_t spin_ns;
    const pxi_topo *topo;
    const int *pu_of_rank;
    pxi_tpool_slot *slots;
    pthread_t *threads;
    worker_start *starts;
    int nstarted;
    /* Own rank-0 thread ("leader", pool.h): lead is set at create, lead_started once the
     * thread runs; lead_thread is joined at destroy. */
    int lead;
    int lead_started;
    pthread_t lead_thread;

    /* Dispatch line: the dispatch word every idle worker polls, and the job it announces. The
     * job is written by the lock holder before it posts dispatch (release) and read by workers
     * after they see the new value (acquire), in the same cache-line transfer; it is not
     * rewritten before every rank has fanned in, so no worker can read a half-written job.
     * job_fn NULL means "exit". gen: last dispatched generation (owner: lock holder). */
    alignas(PXI_CACHE_LINE) pxi_tpool_flag dispatch;
    pxi_tpool_job_fn job_fn;
    void *job_arg;
    unsigned gen;
    int take_over; /* the job allows pxi_tpool_take_over (pxi_tpool_run_ex), written as job_fn */
    atomic_llong n_taken; /* blocks taken over (pxi_tpool_taken_over), relaxed */

    /* Ticket lock: next_ticket is hit by arriving launchers, serving by the holder. */
    alignas(PXI_CACHE_LINE) atomic_uint next_ticket;
    alignas(PXI_CACHE_LINE) pxi_tpool_flag serving;

    /* Hand-off to the leader: the launcher posts the generation on lead_go (the job is in the
     * dispatch line, written first), the leader posts it on lead_done once its rank-0 call
     * returned, that is once every rank has finished, and notifies lead_ev, on which the
     * launcher waits (an event, not the flag's own wait, for its polite polling: see
     * pxi_tpool_run). Apart: the leader polls one line, the launcher the other. */
    alignas(PXI_CACHE_LINE) pxi_tpool_flag lead_go;
    pxi_wait_event lead_go_ev;
    alignas(PXI_CACHE_LINE) pxi_tpool_flag lead_done;
    pxi_wait_event lead_ev;
};

/* Read at every launch (pxi_tpool_in_job, pxi_tpool_run_ex) and set around every job:
 * initial-exec (base/os.h), where the default model's __tls_get_addr cost two calls a launch. */
static PXI_TLS_INITIAL_EXEC int tls_in_job;

/* Tests: hand every launch on a pool with a leader to it, wherever the launcher stands
 * (pxi_tpool_set_force_handoff). Relaxed: set between launches. */
static atomic_int force_handoff;

void pxi_tpool_set_force_handoff(int on)
{
    atomic_store_explicit(&force_handoff, on, memory_order_relaxed);
}

/* Tests: called by a worker before it claims its block (pxi_tpool_set_claim_hook). */
static _Atomic(void (*)(int)) claim_hook;

void pxi_tpool_set_claim_hook(void (*hook)(int rank))
{
    atomic_store_explicit(&claim_hook, hook, memory_order_relaxed);
}

int pxi_tpool_in_job(void)
{
    return tls_in_job;
}

int pxi_tpool_size(const pxi_tpool *pool)
{
    return pool->nranks;
}

int64_t pxi_tpool_spin_ns(const pxi_tpool *pool)
{
    return pool->spin_ns;
}

pxi_tpool_slot *pxi_tpool_slots(pxi_tpool *pool)
{
    return pool->slots;
}

/* ---- flags ------------------------------------------------------------------------------- */

void pxi_tpool_flag_post(pxi_tpool_flag *f, unsigned v)
{
    pxi_wait_flag_post(f, v);
}

void pxi_tpool_flag_wait_eq(const pxi_tpool *pool, pxi_tpool_flag *f, unsigned v)
{
    pxi_wait_flag_until_eq(f, v, pool->spin_ns);
}

/* ---- workers and dispatch ------------------------------------------------------------------- */

/* Claim generation @v's block of @s's rank (slot->claim, pool.h): 1 when won. Generations
 * only grow (modulo the flags' 31 bits), and the claim word moves forward only: a claim fails
 * when the word holds @v (the worker or the parent took it first) or a newer generation (a
 * worker that saw @v late, after its parent took over @v and the launcher started the next
 * job and took that one over too: @v finished long ago, and the job fields are the next
 * one's). An older value means nobody claimed @v, so @v cannot have finished and its job
 * fields stay put until the winner's fan-in. acq_rel: the winner's reads of the job follow the
 * claim. */
static int claim_block(pxi_tpool_slot *s, unsigned v)
{
    unsigned c = atomic_load_explicit(&s->claim, memory_order_relaxed);
    for (;;) {
        unsigned ahead = (c - v) & PXI_WAIT_VALUE_MASK;
        if (ahead == 0 || ahead < (PXI_WAIT_VALUE_MASK >> 1))
            return 0;
        if (atomic_compare_exchange_weak_explicit(&s->claim, &c, v, memory_order_acq_rel,
                                                  memory_order_relaxed))
            return 1;
    }
}

static void *worker_main(void *arg)
{
    worker_start *ws = arg;
    pxi_tpool *pool = ws->pool;
    int rank = ws->rank;
    pxi_exec_rank = rank; /* px_scatter_add's replica (core/runtime.h) */
    char name[16];
    snprintf(name, sizeof name, "px-threads-%d", rank);
    pxi_os_thread_set_name(name);
    /* A refused binding was logged as a warning by topo; the worker runs unbound. */
    (void)pxi_topo_bind_self(pool->topo, pool->pu_of_rank[rank]);

    unsigned seen = 0;
    for (;;) {
        seen = pxi_wait_flag_until_ne(&pool->dispatch, seen, pool->spin_ns);
        void (*hook)(int) = atomic_load_explicit(&claim_hook, memory_order_relaxed);
        if (hook)
            hook(rank);
        /* Claim this generation's block. A parent that claimed it first (pxi_tpool_take_over)
         * ran it, and the launcher may already be writing the next job: read nothing more. */
        if (!claim_block(&pool->slots[rank], seen))
            continue;
        pxi_tpool_job_fn fn = pool->job_fn;
        if (!fn)
            break;
        tls_in_job = 1;
        fn(pool, rank, seen, pool->job_arg);
        tls_in_job = 0;
    }
    return NULL;
}

typedef struct lead_wait {
    pxi_tpool_flag *flag;
    unsigned v;
} lead_wait;

/* A hand-off side's condition: @flag holds v (lead_done) or no longer holds v (lead_go, v the
 * last generation seen). seq_cst: the Dekker pair of the other side's notify (base/wait.h). */
static int lead_done_ready(const void *arg)
{
    const lead_wait *w = arg;
    unsigned v = atomic_load_explicit(&w->flag->word, memory_order_seq_cst) >> 1;
    return v == (w->v & PXI_WAIT_VALUE_MASK);
}

static int lead_go_ready(const void *arg)
{
    const lead_wait *w = arg;
    unsigned v = atomic_load_explicit(&w->flag->word, memory_order_seq_cst) >> 1;
    return v != (w->v & PXI_WAIT_VALUE_MASK);
}

/* The leader: rank 0 of a pool made with own_rank0, bound to rank 0's PU. It waits for a
 * hand-off, then does what a launching rank 0 does. Unlike a worker it polls politely: the
 * launchers that hand it work often run on its core (measured with bench_instance
 * cross_50us, two threads each launching on the other's core: a plain spin here kept the core
 * from the launcher, 695 us per 50 us launch). */
static void *leader_main(void *arg)
{
    pxi_tpool *pool = arg;
    pxi_exec_rank = 0;
    pxi_os_thread_set_name("px-threads-0");
    (void)pxi_topo_bind_self(pool->topo, pool->pu_of_rank[0]);
    unsigned seen = 0;
    for (;;) {
        lead_wait w = {&pool->lead_go, seen};
        pxi_wait_event_until(&pool->lead_go_ev, lead_go_ready, &w, pool->spin_ns, NULL,
                             PXI_WAIT_YIELD);
        seen = pxi_wait_flag_value(&pool->lead_go);
        pxi_tpool_job_fn fn = pool->job_fn;
        if (!fn)
            break;
        unsigned g = pool->gen; /* written before lead_go was posted, like job_fn */
        if (pool->nranks > 1)
            pxi_tpool_flag_post(&pool->dispatch, g);
        tls_in_job = 1;
        fn(pool, 0, g, pool->job_arg);
        tls_in_job = 0;
        pxi_tpool_flag_post(&pool->lead_done, g);
        pxi_wait_event_notify(&pool->lead_ev, 0);
    }
    return NULL;
}

void pxi_tpool_run(pxi_tpool *pool, pxi_tpool_job_fn fn, void *arg)
{
    pxi_tpool_run_ex(pool, fn, arg, 0);
}

int pxi_tpool_take_over(pxi_tpool *pool, int child, unsigned seq)
{
    if (!pool->take_over)
        return 0;
    const unsigned v = seq & PXI_WAIT_VALUE_MASK;
    pxi_tpool_slot *s = &pool->slots[child];
    /* claim_block reads the word before any read-modify-write: a worker that claimed the block
     * (the usual case on free cores) costs none on its line. */
    if (!claim_block(s, v))
        return 0;
    const int saved = pxi_exec_rank;
    pxi_exec_rank = child;
    pool->job_fn(pool, child, seq, pool->job_arg);
    pxi_exec_rank = saved;
    atomic_fetch_add_explicit(&pool->n_taken, 1, memory_order_relaxed);
    return 1;
}

long long pxi_tpool_taken_over(const pxi_tpool *pool)
{
    return atomic_load_explicit(&pool->n_taken, memory_order_relaxed);
}

void pxi_tpool_run_ex(pxi_tpool *pool, pxi_tpool_job_fn fn, void *arg, int take_over)
{
    unsigned g = pool->gen + 1;
    pool->gen = g;
    pool->job_fn = fn;
    pool->job_arg = arg;
    /* Take-overs where they can pay (pool.h): waits that sleep at once, or a worker asleep on
     * the dispatch word now (its sleeper mark, base/wait.h; a relaxed look: a worker falling
     * asleep right after it only misses this job's take-over). */
    pool->take_over =
        take_over && (pool->spin_ns <= PXI_WAIT_SPIN_US_THROTTLED * 1000LL ||
                      (atomic_load_explicit(&pool->dispatch.word, memory_order_relaxed) & 1u));
    if (pool->lead && !tls_in_job) {
        /* Where the launcher stands towards the pool's PUs (base/os.h): within them it runs
         * rank 0 itself; sched_getcpu settles "elsewhere" without a system call, and the
         * thread's mask is cached (re-read every 10 ms, or when the thread moved). */
        int place = pxi_os_placement(pool->pu_of_rank, pool->nranks);
        if (place != PXI_OS_WITHIN || atomic_load_explicit(&force_handoff, memory_order_relaxed)) {
            /* Hand the job to the leader and wait for it. The launcher usually sits on a core
             * of some rank (another instance's, or the space's), so it polls politely, giving
             * its core to any runnable thread every microsecond or so (a plain spin took 100 us
             * of a busy core per launch); on one of this pool's own PUs it sleeps at once. */
            pxi_tpool_flag_post(&pool->lead_go, g);
            pxi_wait_event_notify(&pool->lead_go_ev, 0);
            lead_wait w = {&pool->lead_done, g};
            pxi_wait_event_until(&pool->lead_ev, lead_done_ready, &w,
                                 place == PXI_OS_NEAR ? 0 : pool->spin_ns, NULL, PXI_WAIT_YIELD);
            return;
        }
    }
    if (pool->nranks > 1)
        pxi_tpool_flag_post(&pool->dispatch, g);
    int nested = tls_in_job;
    tls_in_job = 1;
    fn(pool, 0, g, arg);
    tls_in_job = nested;
}

int pxi_tpool_has_leader(const pxi_tpool *pool)
{
    return pool->lead;
}

static void stop_workers(pxi_tpool *pool)
{
    if (pool->nstarted == 0 && !pool->lead_started)
        return;
    pool->job_fn = NULL;
    pool->job_arg = NULL;
    pxi_tpool_flag_post(&pool->dispatch, pool->gen + 1);
    if (pool->lead_started) {
        pxi_tpool_flag_post(&pool->lead_go, pool->gen + 1);
        pxi_wait_event_notify(&pool->lead_go_ev, 0);
    }
    for (int r = 1; r <= pool->nstarted; ++r)
        pthread_join(pool->threads[r], NULL);
    if (pool->lead_started)
        pthread_join(pool->lead_thread, NULL);
    pool->nstarted = 0;
    pool->lead_started = 0;
}

/* Every rank has a PU (no "none" binding, a real machine): only then is there a place to keep
 * rank 0 on. */
static int pool_is_bound(const int *pu_of_rank, int nranks)
{
    for (int r = 0; r < nranks; ++r)
        if (pu_of_rank[r] < 0)
            return 0;
    return 1;
}

int pxi_tpool_create(pxi_tpool **out, int nranks, const pxi_topo *topo, const int *pu_of_rank,
                     int64_t spin_ns, int own_rank0)
{
    *out = NULL;
    pxi_tpool *pool = pxi_malloc_aligned(sizeof *pool, PXI_CACHE_LINE);
    if (!pool)
        goto nomem;
    memset(pool, 0, sizeof *pool);
    pxi_wait_event_init(&pool->lead_ev);
    pxi_wait_event_init(&pool->lead_go_ev);
    pool->nranks = nranks;
    pool->spin_ns = spin_ns;
    pool->topo = topo;
    pool->pu_of_rank = pu_of_rank;
    size_t n = (size_t)nranks;
    pool->slots = pxi_malloc_aligned(n * sizeof *pool->slots, PXI_CACHE_LINE);
    pool->threads = pxi_calloc(n, sizeof *pool->threads);
    pool->starts = pxi_calloc(n, sizeof *pool->starts);
    if (!pool->slots || !pool->threads || !pool->starts)
        goto nomem;
    memset(pool->slots, 0, n * sizeof *pool->slots);
    for (int r = 1; r < nranks; ++r) {
        pool->starts[r] = (worker_start){pool, r};
        int err = pthread_create(&pool->threads[r], NULL, worker_main, &pool->starts[r]);
        if (err != 0) {
            PXI_ERROR("threads: cannot start worker %d of %d (pthread_create: %s)", r, nranks - 1,
                      strerror(err));
            stop_workers(pool);
            pxi_tpool_destroy(pool);
            return PX_ENOMEM;
        }
        pool->nstarted = r;
    }
    if (own_rank0 && pxi_topo_binds(topo) && pool_is_bound(pu_of_rank, nranks)) {
        int err = pthread_create(&pool->lead_thread, NULL, leader_main, pool);
        if (err != 0) {
            PXI_ERROR("threads: cannot start the rank-0 thread of a pool of %d ranks "
                      "(pthread_create: %s)",
                      nranks, strerror(err));
            stop_workers(pool);
            pxi_tpool_destroy(pool);
            return PX_ENOMEM;
        }
        pool->lead = 1;
        pool->lead_started = 1;
    }
    *out = pool;
    return PX_OK;
nomem:
    PXI_ERROR("threads: out of memory creating a pool of %d ranks", nranks);
    pxi_tpool_destroy(pool);
    return PX_ENOMEM;
}

void pxi_tpool_destroy(pxi_tpool *pool)
{
    if (!pool)
        return;
    if (pool->nranks > 1)
        PXI_DEBUG("threads: pool of %d ranks: %lld blocks taken over from workers not yet awake",
                  pool->nranks, pxi_tpool_taken_over(pool));
    stop_workers(pool);
    pxi_free_aligned(pool->slots);
    pxi_free(pool->threads);
    pxi_free(pool->starts);
    pxi_free_aligned(pool);
}

/* ---- launch lock ---------------------------------------------------------------------------- */

void pxi_tpool_lock(pxi_tpool *pool)
{
    /* relaxed: the ticket only fixes the order; the acquire that makes the previous holder's
     * writes visible is the wait on serving. */
    unsigned t = atomic_fetch_add_explicit(&pool->next_ticket, 1, memory_order_relaxed);
    /* No spin budget here: a queued launcher waits for whole launches, and spinning would take
     * the CPU from the ranks of the launch it waits for (4 launchers on 2 cores ran 20x slower
     * with the pool's budget). The few polls every wait makes catch a free lock. */
    pxi_wait_flag_until_eq(&pool->serving, t, 0);
}

void pxi_tpool_unlock(pxi_tpool *pool)
{
    /* Only the holder writes serving, so a relaxed read of it is our own last write. */
    unsigned t = pxi_wait_flag_peek(&pool->serving);
    pxi_wait_flag_post(&pool->serving, t + 1);
}

/* ---- checker ----------------------------------------------------------------------------- */

int pxi_tpool_check(pxi_tpool *pool, unsigned scan_seq)
{
    int ok = 1;
    /* relaxed loads: the caller holds the lock after the job's fan-in, whose acquire chain
     * already ordered every rank's last post before this point. */
    unsigned g = pool->gen;
    if (pool->nranks > 1)
        ok &= PX_ALWAYS(pxi_wait_flag_peek(&pool->dispatch) == (g & PXI_WAIT_VALUE_MASK));
    for (int r = 1; r < pool->nranks; ++r) {
        pxi_tpool_slot *s = &pool->slots[r];
        ok &= PX_ALWAYS(pxi_wait_flag_peek(&s->up) == (g & PXI_WAIT_VALUE_MASK));
        if (scan_seq != 0) {
            ok &= PX_ALWAYS(pxi_wait_flag_peek(&s->down) == (scan_seq & PXI_WAIT_VALUE_MASK));
            ok &= PX_ALWAYS(pxi_wait_flag_peek(&s->fin) == (scan_seq & PXI_WAIT_VALUE_MASK));
        }
    }
    unsigned serving = pxi_wait_flag_peek(&pool->serving);
    unsigned next = atomic_load_explicit(&pool->next_ticket, memory_order_relaxed);
    /* The holder's ticket is serving; later arrivals may have taken more (31-bit values). */
    ok &= PX_ALWAYS(((next - serving) & PXI_WAIT_VALUE_MASK) >= 1u);
    return ok;
}
