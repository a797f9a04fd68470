/* spaces/threads/threads.c - the Threads execution space: a pool of hwloc-bound pthreads
 * (pool.c, topo.c) running parallel_for / reduce / scan with static or dynamic schedules.
 *
 * Kokkos' Threads backend is the model and the list of things not to copy: its idle workers
 * spin forever (Kokkos #6686), only the master may launch (#886) and it joins reductions in
 * reverse rank order. Here idle workers sleep after a bounded spin, any thread may launch
 * (launch lock, caller = rank 0), and joins go lower index ranges first. The launch rules are
 * spelled out in threads.h.
 *
 * Blocks, calls and claims follow the plan (policy/plan.h), as the serial space's do: an
 * explicit chunk size is the most a function call sees (functions may size scratch by it);
 * with the automatic size, static ranks call the function once for their whole block. */
#include "spaces/threads/threads.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "base/wait.h"
#include "core/oversub.h"
#include "core/piece_hook.h"
#include "core/registry.h"
#include "policy/plan.h"
#include "spaces/threads/exec.h"
#include "spaces/threads/fanin.h"
#include "spaces/threads/pool.h"
#include "spaces/threads/team.h"
#include "spaces/threads/topo.h"

/* One launch as the ranks see it. Lives on the launcher's stack; written before dispatch and
 * read-only while the ranks run. The first cache line holds everything a static parallel_for
 * needs (the body, its ctx and the plan's leading fields), so a worker reads the dispatch line,
 * this line and the kernel's arguments, and nothing else, before it starts its block. */
typedef struct job {
    /* line 0 */
    alignas(PXI_CACHE_LINE) union {
        px_host_for_entry f;
        px_host_reduce_entry r;
        px_host_scan_entry s;
    } fn;
    void *ctx;
    uint8_t kind;        /* px_kernel_kind */
    uint8_t mode;        /* pxi_threads_dynamic_mode */
    pxi_range_plan plan; /* policy/plan.h: blocks, calls, claims */
    /* line 1: reductions, scans, dynamic schedules */
    alignas(PXI_CACHE_LINE) const px_reducer *reducer;
    void *result;
    unsigned char *unit_values; /* dynamic reduce: plan.nclaims slots of stride bytes */
    atomic_llong *shared_next;  /* PXI_DYNAMIC_SHARED: the exec's counter */
    size_t stride;
    unsigned scan_seq; /* scan: value posted on down / fin flags */
} job;
_Static_assert(offsetof(job, plan) + offsetof(pxi_range_plan, nchunks) <= PXI_CACHE_LINE,
               "a static launch's fields fit the job's first cache line");

/* Space state: written by initialize/finalize (single-threaded by contract); the fields marked
 * "lock" are touched only by the launch-lock holder. */
static struct {
    pxi_topo *topo;
    pxi_topo_binding *caller_binding; /* the initializing thread's own binding, restored at
                                         finalize */
    int *pu_of_rank;
    pxi_threads_exec main; /* the whole pool (exec.h); instances have their own */
    int cores, pus;
    int64_t spin_us;
    const char *wait_name;
    int throttled;
    int debug_check; /* PX_DEBUG_CHECK: run check_after after every launch */
    size_t l2_bytes; /* one core's L2 (hwloc), for automatic MDRange tiles */
} st;

/* The exec a launch on @s runs on: an instance's own, or the space's. */
static pxi_threads_exec *exec_of(const px_space *s)
{
    return s && s->impl ? (pxi_threads_exec *)s->impl : &st.main;
}

static pxi_threads_dynamic_mode dynamic_mode = PXI_DYNAMIC_STEAL;

int64_t pxi_threads_spin_ns(const px_space *s)
{
    const pxi_threads_exec *x = exec_of(s);
    return x->pool ? pxi_tpool_spin_ns(x->pool) : -1;
}

int pxi_threads_pu_of_rank(const px_space *s, int rank)
{
    const pxi_threads_exec *x = exec_of(s);
    if (!st.pu_of_rank || rank < 0 || rank >= x->nranks)
        return -1;
    return st.pu_of_rank[x->first + rank];
}

void pxi_threads_set_dynamic_mode(pxi_threads_dynamic_mode mode)
{
    dynamic_mode = mode;
}

/* ---- per-rank bodies ------------------------------------------------------------------------ */

static void for_range(const job *j, int64_t b, int64_t e)
{
    for (int64_t t; b < e; b = t) {
        t = pxi_plan_call_end(&j->plan, b, e);
        j->fn.f(b, t, j->ctx);
        if (t < e)
            pxi_piece_hook_run();
    }
}

static void reduce_range(const job *j, int64_t b, int64_t e, void *acc)
{
    for (int64_t t; b < e; b = t) {
        t = pxi_plan_call_end(&j->plan, b, e);
        j->fn.r(b, t, j->ctx, acc);
        if (t < e)
            pxi_piece_hook_run();
    }
}

static void scan_range(const job *j, int64_t b, int64_t e, void *partial, int final_pass)
{
    for (int64_t t; b < e; b = t) {
        t = pxi_plan_call_end(&j->plan, b, e);
        j->fn.s(b, t, j->ctx, partial, final_pass);
        if (t < e)
            pxi_piece_hook_run();
    }
}

/* Run unit u of a dynamic job. */
static void dynamic_unit(const job *j, int64_t u)
{
    int64_t b, e;
    pxi_plan_claim_bounds(&j->plan, u, &b, &e);
    if (j->unit_values) {
        void *v = j->unit_values + (size_t)u * j->stride;
        j->reducer->identity(v);
        reduce_range(j, b, e, v);
    } else {
        for_range(j, b, e);
    }
    pxi_piece_hook_run(); /* between claims (parex/kernel.h: every dynamic call is a piece) */
}

static void dynamic_unit_any(const void *j, int64_t u)
{
    dynamic_unit(j, u);
}

/* Claim and run units until none is left: from one shared counter (PXI_DYNAMIC_SHARED), or
 * from the per-rank ranges (pxi_tpool_claim_units). Every claim is one fetch_add whose result is
 * unique, so each unit runs exactly once whatever the interleaving. */
static void dynamic_claims(const job *j, pxi_tpool *pool, int rank)
{
    if (j->mode == PXI_DYNAMIC_SHARED) {
        for (;;) {
            int64_t u = atomic_fetch_add_explicit(j->shared_next, 1, memory_order_relaxed);
            if (u >= j->plan.nclaims)
                return;
            dynamic_unit(j, u);
        }
    }
    pxi_tpool_claim_units(pool, rank, dynamic_unit_any, j);
}

static void job_main(pxi_tpool *pool, int rank, unsigned gen, void *arg)
{
    const job *j = arg;
    int64_t b, e;
    if (j->kind == PX_KERNEL_FOR) {
        if (j->plan.dynamic) {
            dynamic_claims(j, pool, rank);
        } else {
            pxi_plan_static_block(&j->plan, rank, &b, &e);
            for_range(j, b, e);
        }
        (void)pxi_tpool_fanin(pool, rank, gen, PXI_FANIN_UP, NULL);
        return;
    }
    /* reduce */
    const px_reducer *r = j->reducer;
    pxi_tpool_slot *me = &pxi_tpool_slots(pool)[rank];
    if (j->plan.dynamic) {
        dynamic_claims(j, pool, rank);
        if (pxi_tpool_fanin(pool, rank, gen, PXI_FANIN_UP, NULL)) {
            /* Rank 0, after every unit: join the unit slots in index order. */
            void *acc = me->value;
            memcpy(acc, j->unit_values, r->value_size);
            for (int64_t u = 1; u < j->plan.nclaims; ++u)
                r->join(acc, j->unit_values + (size_t)u * j->stride);
            memcpy(j->result, acc, r->value_size);
        }
        return;
    }
    r->identity(me->value);
    pxi_plan_static_block(&j->plan, rank, &b, &e);
    reduce_range(j, b, e, me->value);
    if (pxi_tpool_fanin(pool, rank, gen, PXI_FANIN_UP, r->join))
        memcpy(j->result, me->value, r->value_size);
}

/* Scan: pass 1 folds each rank's block from the identity (own); the fan-in joins subtree
 * totals (value); a down-sweep hands each child its exclusive prefix: a parent with prefix P
 * gives child rank+2^k the prefix P (+) own (+) totals of its children rank+2^i, i < k, all in
 * index order; pass 2 rescans each block from its exact prefix with final_pass set. Rank 0's
 * prefix is the identity from the start, so it does its final pass in pass 1 and skips pass 2.
 * A second fan-in (fin flags) tells rank 0 that every final pass is done. */
static void scan_main(pxi_tpool *pool, int rank, unsigned gen, void *arg)
{
    const job *j = arg;
    const px_reducer *r = j->reducer;
    size_t size = r->value_size;
    pxi_tpool_slot *slots = pxi_tpool_slots(pool);
    pxi_tpool_slot *me = &slots[rank];
    int p = j->plan.nranks;
    int64_t b, e;
    /* Rank 0 scans its block once (its prefix is exact from the start) and the others twice,
     * so pxi_plan_scan_block gives rank 0 3 shares of the chunks to the others' 2: with 2 ranks
     * that cuts the slower rank's work by a fifth when the body is compute-bound. */
    pxi_plan_scan_block(&j->plan, rank, &b, &e);

    r->identity(me->own);
    scan_range(j, b, e, me->own, rank == 0);
    memcpy(me->value, me->own, size);
    if (pxi_tpool_fanin(pool, rank, gen, PXI_FANIN_UP, r->join)) {
        if (j->result)
            memcpy(j->result, me->value, size);
        r->identity(me->prefix);
    } else {
        pxi_tpool_flag_wait_eq(pool, &me->down, j->scan_seq);
    }

    alignas(PXI_CACHE_LINE) unsigned char run[PX_REDUCER_MAX_VALUE_BYTES];
    memcpy(run, me->prefix, size);
    r->join(run, me->own);
    for (int step = 1; step < p && !(rank & step); step <<= 1) {
        int c = rank + step;
        if (c >= p)
            break;
        memcpy(slots[c].prefix, run, size);
        pxi_tpool_flag_post(&slots[c].down, j->scan_seq);
        r->join(run, slots[c].value);
    }
    if (rank != 0)
        scan_range(j, b, e, me->prefix, 1);
    (void)pxi_tpool_fanin(pool, rank, j->scan_seq, PXI_FANIN_FIN, NULL);
}

/* ---- launch --------------------------------------------------------------------------------- */

/* A job for launch @l, its plan resolved for @nranks ranks of @space straight into the job. */
static void job_init(job *j, const pxi_launch *l, int nranks, pxi_plan_space space)
{
    /* threads_launch refused other kinds before any job is made. */
    if (l->kind == PX_KERNEL_FOR)
        j->fn.f = l->host_for;
    else if (l->kind == PX_KERNEL_REDUCE)
        j->fn.r = l->host_reduce;
    else
        j->fn.s = l->host_scan;
    j->ctx = l->ctx;
    j->kind = (uint8_t)l->kind;
    j->mode = 0;
    j->plan = pxi_plan_range(l->range, l->kind, nranks, space);
    j->reducer = l->reducer;
    j->result = l->result;
    j->unit_values = NULL;
    j->shared_next = NULL;
    j->stride = 0;
    j->scan_seq = 0;
}

/* A launch from inside a running kernel: run it here, serially, with the serial plan. */
static int launch_inline(const pxi_launch *l)
{
    alignas(PXI_CACHE_LINE) job j;
    job_init(&j, l, 1, PXI_PLAN_SERIAL);
    const pxi_range_plan pl = j.plan;
    alignas(PXI_CACHE_LINE) unsigned char acc[PX_REDUCER_MAX_VALUE_BYTES];
    switch (l->kind) {
    case PX_KERNEL_FOR:
        for_range(&j, pl.begin, pl.end);
        return PX_OK;
    case PX_KERNEL_REDUCE:
        l->reducer->identity(acc);
        reduce_range(&j, pl.begin, pl.end, acc);
        memcpy(l->result, acc, l->reducer->value_size);
        return PX_OK;
    case PX_KERNEL_SCAN:
        l->reducer->identity(acc);
        scan_range(&j, pl.begin, pl.end, acc, 1);
        if (l->result)
            memcpy(l->result, acc, l->reducer->value_size);
        return PX_OK;
    }
    return PX_EINVAL;
}

/* Make room for @bytes of dynamic reduction slots (lock held). */
static int reserve_units(pxi_threads_exec *x, size_t bytes, const char *label)
{
    if (bytes <= x->unit_buf_bytes)
        return PX_OK;
    unsigned char *nb = pxi_malloc_aligned(bytes, PXI_CACHE_LINE);
    if (!nb) {
        PXI_ERROR("threads: px_parallel_reduce(\"%s\"): out of memory for %zu bytes of "
                  "dynamic-schedule reduction slots",
                  label, bytes);
        return PX_ENOMEM;
    }
    pxi_free_aligned(x->unit_buf);
    x->unit_buf = nb;
    x->unit_buf_bytes = bytes;
    return PX_OK;
}

/* PX_DEBUG_CHECK=1 in checking builds: after each launch (lock held), check the pool and, for
 * a dynamic schedule with per-rank ranges, that every range was claimed to its end. */
static int check_after(pxi_threads_exec *x, const job *j)
{
    int ok = pxi_tpool_check(x->pool, x->scan_seq);
    if (j->plan.dynamic && j->mode == PXI_DYNAMIC_STEAL) {
        pxi_tpool_slot *slots = pxi_tpool_slots(x->pool);
        for (int r = 0; r < j->plan.nranks; ++r)
            ok &= PX_ALWAYS(atomic_load_explicit(&slots[r].next, memory_order_relaxed) >=
                            slots[r].end);
    } else if (j->plan.dynamic) {
        ok &= PX_ALWAYS(atomic_load_explicit(j->shared_next, memory_order_relaxed) >=
                        j->plan.nclaims);
    }
    return ok;
}

static int threads_launch(const pxi_launch *l)
{
    pxi_threads_exec *x = exec_of(l->space);
    if (l->policy_kind == PXI_POLICY_TEAM)
        return pxi_threads_team_launch(l, x->team); /* spaces/threads/team.c */
    if (l->kind != PX_KERNEL_FOR && l->kind != PX_KERNEL_REDUCE && l->kind != PX_KERNEL_SCAN) {
        PXI_ERROR("threads: launch '%s' of unknown kind %d", l->label, (int)l->kind);
        return PX_EINVAL;
    }
    if (l->policy_kind == PXI_POLICY_MDRANGE)
        return pxi_threads_md_launch(l, x->pool, st.l2_bytes); /* mdrange.c */
    if (l->policy_kind != PXI_POLICY_RANGE) {
        PXI_ERROR("threads: launch '%s' of unknown policy kind %d", l->label, (int)l->policy_kind);
        return PX_EINVAL;
    }
    const px_range_policy *p = l->range;
    if (p->begin >= p->end) {
        /* core handles empty ranges; kept so the op is total on its own. */
        if (l->kind != PX_KERNEL_FOR && l->result)
            l->reducer->identity(l->result);
        return PX_OK;
    }
    if (pxi_tpool_in_job())
        return launch_inline(l);

    int nranks = x->nranks;
    alignas(PXI_CACHE_LINE) job j;
    job_init(&j, l, nranks, PXI_PLAN_POOL);
    const pxi_range_plan *pl = &j.plan;

    pxi_tpool *pool = x->pool;
    pxi_tpool_lock(pool);
    if (pl->dynamic) {
        j.mode = (uint8_t)dynamic_mode;
        if (l->kind == PX_KERNEL_REDUCE) {
            const px_reducer *r = l->reducer;
            j.stride = (r->value_size + r->value_align - 1) / r->value_align * r->value_align;
            int rc = reserve_units(x, (size_t)pl->nclaims * j.stride, l->label);
            if (rc != PX_OK) {
                pxi_tpool_unlock(pool);
                return rc;
            }
            j.unit_values = x->unit_buf;
        }
        if (j.mode == PXI_DYNAMIC_SHARED) {
            j.shared_next = &x->shared_next;
            atomic_store_explicit(&x->shared_next, 0, memory_order_relaxed);
        } else {
            pxi_tpool_slot *slots = pxi_tpool_slots(pool);
            for (int r = 0; r < nranks; ++r) {
                int64_t k0, k1;
                pxi_plan_claims_of_rank(pl, r, &k0, &k1);
                atomic_store_explicit(&slots[r].next, k0, memory_order_relaxed);
                slots[r].end = k1;
            }
        }
    }
    if (l->kind == PX_KERNEL_SCAN) {
        j.scan_seq = ++x->scan_seq;
        pxi_tpool_run(pool, scan_main, &j);
    } else {
        /* A block whose worker has not woken yet is run by its fan-in parent (pool.h). */
        pxi_tpool_run_ex(pool, job_main, &j, 1);
    }
    if (PXI_CHECKING && st.debug_check)
        (void)check_after(x, &j);
    pxi_tpool_unlock(pool);
    return PX_OK;
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

int pxi_threads_exec_init(pxi_threads_exec *x, int first, int nranks, int own_rank0)
{
    x->first = first;
    x->nranks = nranks;
    atomic_init(&x->shared_next, 0);
    int rc = pxi_tpool_create(&x->pool, nranks, st.topo, st.pu_of_rank + first, st.spin_us * 1000,
                              own_rank0);
    if (rc == PX_OK)
        rc = pxi_threads_team_init(&x->team, x->pool, st.topo, st.pu_of_rank + first, nranks);
    if (rc != PX_OK)
        pxi_threads_exec_fini(x);
    return rc;
}

void pxi_threads_exec_fini(pxi_threads_exec *x)
{
    pxi_threads_team_fini(x->team);
    pxi_tpool_destroy(x->pool);
    pxi_free_aligned(x->unit_buf);
    x->team = NULL;
    x->pool = NULL;
    x->unit_buf = NULL;
    x->unit_buf_bytes = 0;
}

static void release_all(void)
{
    pxi_threads_exec_fini(&st.main);
    pxi_topo_restore(st.topo, st.caller_binding);
    pxi_free(st.pu_of_rank);
    pxi_topo_destroy(st.topo);
    memset(&st, 0, sizeof st);
}

/* The binding policy: PX_BIND when set, else "close", except where several processes of a job
 * share this node's processors with more threads than it has (core/oversub.h, rule "node"):
 * there their masks overlap (R x T > N with T <= C puts R x C > N), and "close" would put
 * rank r of every process on the same r-th PU, so the processes' rank-0 threads, which run
 * everything serial (engine ops held by the waiting thread, MPI progress), would all queue on
 * one PU while the workers' PU idles between kernels. Unbound, as libgomp leaves an OpenMP
 * team without OMP_PROC_BIND (the bulk-synchronous baseline's setting), the scheduler spreads
 * them. Measured (loaded 2-core VM, 4 ranks x 2 threads, bcsstk16, 6 rounds interleaved,
 * median ms/iteration): close 0.619, none 0.354 (bench/RESULTS.md, Session 8). */
static const char *default_bind(const pxi_space_config *c)
{
    if (c->bind[0])
        return c->bind;
    const pxi_oversub *o = pxi_oversub_get();
    if (o->oversubscribed && strcmp(o->rule, "node") == 0) {
        PXI_INFO("threads: %d processes x %d threads share a node of %d processors (oversubscribed"
                 "): threads left unbound (set PX_BIND to bind them)",
                 o->local_ranks, o->threads, o->node_cpus);
        return "none";
    }
    return "close";
}

static int threads_initialize(const pxi_space_config *c)
{
    memset(&st, 0, sizeof st);
    int rc = pxi_topo_load(&st.topo, NULL, NULL);
    if (rc != PX_OK)
        goto fail;
    st.cores = pxi_topo_num_cores(st.topo);
    st.pus = pxi_topo_num_pus(st.topo);
    int n = c->num_threads > 0 ? c->num_threads : st.cores;
    if (n > PXI_THREADS_MAX_RANKS) {
        PXI_ERROR("threads: PX_NUM_THREADS=%d is above the Threads space's limit of %d ranks", n,
                  PXI_THREADS_MAX_RANKS);
        rc = PX_EINVAL;
        goto fail;
    }
    st.pu_of_rank = pxi_calloc((size_t)n, sizeof *st.pu_of_rank);
    if (!st.pu_of_rank) {
        PXI_ERROR("threads: out of memory for the rank map of %d ranks", n);
        rc = PX_ENOMEM;
        goto fail;
    }
    const char *bind = default_bind(c);
    rc = pxi_topo_map(st.topo, n, bind, st.pu_of_rank);
    if (rc != PX_OK)
        goto fail;

    /* The wait policy and budget are base/wait.c's (PX_WAIT_POLICY, PX_SPIN_US). */
    st.wait_name = pxi_wait_policy_name();
    st.throttled = pxi_wait_throttled(n, st.pus);
    st.spin_us = pxi_wait_spin_ns(n, st.pus) / 1000;
    /* Oversubscribed (core/oversub.h, budgets not explicit): the pool's waits (idle workers,
     * the launcher's join) sleep after their few polls, as libgomp's passive policy, instead of
     * the throttled microsecond: a rank's worker is then asleep when the launcher needs a core
     * for its own block. 4 ranks x 2 threads on 2 cores, bcsstk16, 2,000 iterations, pool
     * budget 0 against 1 us, interleaved (loaded VM, median ms/iteration): 0.249 / 0.289 (5
     * rounds, 0 faster in each), 0.258 / 0.420 (4 rounds, each); strong 32x32x8 0.689 / 0.753
     * (5 rounds, 4 of 5); 20 us: 0.667, 100 us: 2.305 (bench/RESULTS.md, Session 8). */
    if (pxi_oversub_active())
        st.spin_us = 0;
    st.debug_check = c->debug_check;
    st.l2_bytes = pxi_topo_l2_bytes(st.topo);
    if ((rc = pxi_threads_exec_init(&st.main, 0, n, 0)) != PX_OK)
        goto fail;
    /* The initializing thread works as rank 0 (it is the usual launcher), so it is bound to
     * rank 0's PU like OpenMP's master thread; otherwise the OS may run it beside worker 1 on
     * one core and halve a bandwidth-bound loop. Its own binding comes back at finalize. */
    if (st.pu_of_rank[0] >= 0 && pxi_topo_save_self(st.topo, &st.caller_binding) == PX_OK)
        (void)pxi_topo_bind_self(st.topo, st.pu_of_rank[0]);
    return PX_OK;
fail:
    release_all();
    return rc;
}

static int threads_finalize(void)
{
    release_all();
    return PX_OK;
}

static int threads_concurrency(void)
{
    return st.main.nranks;
}

static int threads_fence(void)
{
    /* Launches complete before they return; there is nothing to wait for. */
    return PX_OK;
}

static int threads_in_kernel(void)
{
    return pxi_tpool_in_job();
}

static int threads_team_limits(pxi_team_limits *out)
{
    return pxi_threads_team_limits(st.main.team, out);
}

static void threads_print_configuration(FILE *out)
{
    fprintf(out,
            "  threads: %d ranks (rank 0 = the launching thread, %d workers), %d cores / %d "
            "PUs in the process cpuset\n",
            st.main.nranks, st.main.nranks - 1, st.cores, st.pus);
    fprintf(out, "  threads: wait policy %s, spin %lld us then futex sleep%s\n", st.wait_name,
            (long long)st.spin_us, st.throttled ? " (throttled: more ranks than PUs)" : "");
    fprintf(out, "  threads: dynamic schedule claims %s; fan-in tree depth %d\n",
            dynamic_mode == PXI_DYNAMIC_STEAL ? "per-rank ranges with stealing"
                                              : "from one shared counter",
            st.main.nranks > 1 ? 32 - __builtin_clz((unsigned)(st.main.nranks - 1)) : 0);
    fprintf(out, "  threads: workers are bound as listed; rank 0 is whichever thread launches and "
                 "keeps its own binding (on an instance: the launcher when bound within its "
                 "cores, else the instance's rank-0 thread)\n");
    pxi_topo_print(st.topo, out, st.pu_of_rank, st.main.nranks);
}

static const pxi_space_ops threads_ops = {
    .name = "threads",
    .priority = 10,
    .kokkos_device_type = 6,
    .host_accessible = 1,
    .initialize = threads_initialize,
    .finalize = threads_finalize,
    .concurrency = threads_concurrency,
    .fence = threads_fence,
    .print_configuration = threads_print_configuration,
    .launch = threads_launch,
    .malloc = pxi_host_malloc,
    .free = pxi_host_free,
    .deep_copy = pxi_host_deep_copy,
    .in_kernel = threads_in_kernel,
    .team_limits = threads_team_limits,
    .instance_splits = 1, /* instances: disjoint groups of ranks (spaces/threads/instance.c) */
    .instance_create = pxi_threads_instance_create,
    .instance_destroy = pxi_threads_instance_destroy,
    .instance_concurrency = pxi_threads_instance_concurrency,
    .instance_fence = pxi_threads_instance_fence,
    .instance_team_limits = pxi_threads_instance_team_limits,
    .instance_copy = pxi_threads_instance_copy,
};

PX_REGISTER_SPACE(threads_ops, pxi_space_anchor_threads)
