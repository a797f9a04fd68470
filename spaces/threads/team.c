/* spaces/threads/team.c - team launches on the Threads space (parex/team.h).
 *
 * Groups. A launch with team size T forms G = floor(P / T) groups of T consecutive ranks
 * ([g T, (g + 1) T) is group g; rank g T is its leader); with the close binding consecutive
 * ranks sit on neighbouring cores, so a team's members share the caches above them (a
 * policy asks for pxi_topo_cache_group's size to keep a team under one L2 or L3). The default
 * T (team_size 0) is 1, as Kokkos' host backends recommend one member per core's hardware
 * threads (the pool binds one rank per core): a team of one never synchronizes, so league
 * loops of small independent work (batched 8x8 solves) cost no barrier at all; teams that
 * cooperate through scratch ask for their size.
 * Ranks G T .. P - 1 idle for the launch. Each group has its own sync block (core/team.h:
 * barrier line, px_team_reduce slots) and its own memory block, allocated once and grown (by
 * the launch-lock holder) when a launch needs more:
 *     [px_team_reduce slots: 2 T x 256][member values: 2 T x 256][team scratch][T x thread]
 * every part 64-byte aligned.
 *
 * Schedules (policy/plan.h, pxi_plan_team). Static: group g runs the contiguous block of teams
 * pxi_plan_team_block(g). Dynamic: the group's leader claims runs of consecutive teams from
 * one shared counter; it claims the next run before the barrier that ends the current one and
 * publishes it in the sync block's unit[] (double-buffered), so members learn it from the
 * barrier, without a claim of their own.
 *
 * With T > 1, every team of a reduce, and of a for with team scratch, ends with a team barrier,
 * so a member never starts the next team's writes to team scratch while another still reads the
 * current team's (and the leader joins complete member values). A for without team scratch
 * skips it: its members share nothing the next team could overwrite. Single-source for kernels
 * of the static schedule run through the kernel's own league loop (px_team_kernel's
 * host_for_teams: the body inlined into the loop, the arguments copied once per launch rather
 * than per team); a team of one member never touches its sync block.
 *
 * Reductions. Each member folds the team into its own value from the identity and stores it in
 * the member-value slots (half k % 2 for the group's k-th team); after the team's end barrier
 * the leader joins the T values in team-rank order and then into the group's running value in
 * league order (the other half is what members write next, and the following barrier orders
 * the leader's reads before their next writes to this half). Static: each leader's running
 * value goes to its pool slot, the others' slots hold the identity, and the pool's fan-in joins
 * slots in rank order = group order = league order. Dynamic: each run's value has its own slot,
 * and rank 0 joins the slots in run order after the fan-in. Either way the order is a function
 * of (league, T, P, schedule) only: bitwise reproducible. */
#include "spaces/threads/team.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "core/team.h"
#include "spaces/threads/fanin.h"

/* One group's resources (index g), touched by the lock holder between launches and by the
 * group's members during one. */
typedef struct group {
    pxi_team_sync *sync; /* its own 64-byte aligned block */
    unsigned char *mem;  /* slots and scratch, see the file comment */
    size_t mem_bytes;
} group;

/* The team state of one pool: the space's, or an execution-space instance's
 * (spaces/threads/instance.c), each with its own launch lock. */
struct pxi_threads_team {
    pxi_tpool *pool;
    int nranks;
    int default_team;
    group *groups;           /* nranks entries (at most nranks groups, of team size 1) */
    unsigned char *unit_buf; /* lock: dynamic reduction slots */
    size_t unit_buf_bytes;   /* lock */
    /* Claims of the dynamic schedule, alone on a line; reset by the lock holder before
     * dispatch. */
    alignas(PXI_CACHE_LINE) atomic_llong next;
};

/* One launch as the ranks see it (on the launcher's stack, read-only while the ranks run). */
typedef struct team_job {
    const pxi_launch *l;
    pxi_threads_team *ts;
    pxi_team_plan plan;
    int64_t spin_ns;
    unsigned char *unit_values; /* dynamic reduce: plan.nclaims slots of PXI_TEAM_SLOT bytes */
} team_job;

int pxi_threads_team_init(pxi_threads_team **out, pxi_tpool *pool, const pxi_topo *topo,
                          const int *pu_of_rank, int nranks)
{
    *out = NULL;
    pxi_threads_team *ts = pxi_malloc_aligned(sizeof *ts, PXI_CACHE_LINE);
    if (!ts) {
        PXI_ERROR("threads: out of memory for the team groups of %d ranks", nranks);
        return PX_ENOMEM;
    }
    memset(ts, 0, sizeof *ts);
    *out = ts;
    ts->pool = pool;
    ts->nranks = nranks;
    (void)topo;
    (void)pu_of_rank;
    ts->default_team = 1; /* see the file comment */
    ts->groups = pxi_calloc((size_t)nranks, sizeof *ts->groups);
    if (!ts->groups) {
        PXI_ERROR("threads: out of memory for the team groups of %d ranks", nranks);
        pxi_threads_team_fini(ts);
        *out = NULL;
        return PX_ENOMEM;
    }
    for (int g = 0; g < nranks; ++g) {
        ts->groups[g].sync = pxi_malloc_aligned(sizeof(pxi_team_sync), PXI_CACHE_LINE);
        if (!ts->groups[g].sync) {
            PXI_ERROR("threads: out of memory for the team groups of %d ranks", nranks);
            pxi_threads_team_fini(ts);
            *out = NULL;
            return PX_ENOMEM;
        }
    }
    return PX_OK;
}

void pxi_threads_team_fini(pxi_threads_team *ts)
{
    if (!ts)
        return;
    if (ts->groups) {
        for (int g = 0; g < ts->nranks; ++g) {
            pxi_free_aligned(ts->groups[g].sync);
            pxi_free_aligned(ts->groups[g].mem);
        }
        pxi_free(ts->groups);
    }
    pxi_free_aligned(ts->unit_buf);
    pxi_free_aligned(ts);
}

int pxi_threads_team_limits(const pxi_threads_team *ts, pxi_team_limits *out)
{
    /* From inside a running kernel a launch runs inline on one thread: one member at most. */
    int inline_launch = pxi_tpool_in_job();
    *out = (pxi_team_limits){
        .max_team_size = inline_launch ? 1 : ts->nranks,
        .default_team_size = inline_launch ? 1 : ts->default_team,
        .max_vector_length = PX_TEAM_MAX_VECTOR_LENGTH,
        .default_vector_length = 1,
        .max_scratch = PX_TEAM_HOST_MAX_SCRATCH,
        .team_limit_why = inline_launch ? "a team launch from inside a running threads kernel "
                                          "runs inline on one thread"
                                        : "its thread count, PX_NUM_THREADS"};
    return PX_OK;
}

/* The group memory's parts for team size @t. */
static size_t slots_bytes(int t)
{
    return 2 * (size_t)t * PXI_TEAM_SLOT;
}

/* Make every used group's memory hold @bytes (lock held). */
static int reserve_groups(pxi_threads_team *ts, int ngroups, size_t bytes, const char *label)
{
    for (int g = 0; g < ngroups; ++g) {
        group *gr = &ts->groups[g];
        if (gr->mem_bytes >= bytes)
            continue;
        unsigned char *m = pxi_malloc_aligned(bytes, PXI_CACHE_LINE);
        if (!m) {
            PXI_ERROR("threads: team launch '%s': out of memory for %zu bytes of team scratch "
                      "and slots per group",
                      label, bytes);
            return PX_ENOMEM;
        }
        pxi_free_aligned(gr->mem);
        gr->mem = m;
        gr->mem_bytes = bytes;
    }
    return PX_OK;
}

/* Run team @lr as member @me; for a reduce, store the member's value in its slot of half
 * @half. */
static void run_team(const team_job *j, px_team *me, int64_t lr, unsigned char *values, int half)
{
    const pxi_launch *l = j->l;
    me->pxi_league_rank = lr;
    if (l->kind == PX_KERNEL_FOR) {
        l->host_team_for(me, l->ctx);
        return;
    }
    unsigned char *v =
        values +
        ((size_t)half * (size_t)me->pxi_team_size + (size_t)me->pxi_team_rank) * PXI_TEAM_SLOT;
    l->reducer->identity(v);
    l->host_team_reduce(me, l->ctx, v);
}

/* After the team's end barrier: the leader joins the members' values of half @half in
 * team-rank order into @run (league order across teams). */
static void join_team(const team_job *j, const px_team *me, const unsigned char *values, int half,
                      void *run)
{
    const px_reducer *r = j->l->reducer;
    const unsigned char *h = values + (size_t)half * (size_t)me->pxi_team_size * PXI_TEAM_SLOT;
    alignas(PXI_CACHE_LINE) unsigned char tv[PX_REDUCER_MAX_VALUE_BYTES];
    memcpy(tv, h, r->value_size);
    for (int k = 1; k < me->pxi_team_size; ++k)
        r->join(tv, h + (size_t)k * PXI_TEAM_SLOT);
    r->join(run, tv);
}

/* One member's view of a launch: its group's sync block and value slots, its team object. */
typedef struct member_ctx {
    const team_job *j;
    pxi_team_sync *sync;
    unsigned char *values; /* the group's member-value slots */
    px_team me;
    int leader, many;
} member_ctx;

/* Static schedule: the group's contiguous block of teams; @run (leader, reduce) gets the
 * block's value. */
static void run_static(member_ctx *m, int g, void *run)
{
    const team_job *j = m->j;
    const pxi_launch *l = j->l;
    const pxi_team_plan *pl = &j->plan;
    const int reduce = l->kind == PX_KERNEL_REDUCE;
    int64_t b, e;
    pxi_plan_team_block(pl, g, &b, &e);
    if (reduce && m->leader)
        l->reducer->identity(run);
    const px_team_kernel *tk = l->team_kernel;
    if (!reduce && tk && tk->host_for_teams) {
        /* The kernel's own league loop: body inlined, no call per team. */
        tk->host_for_teams(&m->me, l->ctx, b, e, pl->scratch_team != 0);
        return;
    }
    /* A for without team scratch needs no barrier between teams: members share nothing the
     * next team could overwrite (thread scratch is private). */
    const int end_barrier = m->many && (reduce || pl->scratch_team != 0);
    int half = 0;
    for (int64_t lr = b; lr < e; ++lr, half ^= 1) {
        run_team(j, &m->me, lr, m->values, half);
        if (end_barrier)
            pxi_team_sync_barrier(m->sync);
        if (reduce && m->leader)
            join_team(j, &m->me, m->values, half, run);
    }
}

/* Dynamic schedule: the leader claims run k + 1 before the barrier that ends run k; each run's
 * value (leader, reduce) goes to its slot of j->unit_values. */
static void run_dynamic(member_ctx *m, void *run)
{
    const team_job *j = m->j;
    const pxi_launch *l = j->l;
    const pxi_team_plan *pl = &j->plan;
    const int reduce = l->kind == PX_KERNEL_REDUCE;
    pxi_team_sync *sync = m->sync;
    int half = 0;
    if (m->leader)
        sync->unit[0] = atomic_fetch_add_explicit(&j->ts->next, 1, memory_order_relaxed);
    if (m->many)
        pxi_team_sync_barrier(sync);
    for (unsigned k = 0;; ++k) {
        int64_t u = sync->unit[k & 1u];
        if (u >= pl->nclaims)
            break;
        int64_t b, e;
        pxi_plan_team_claim_bounds(pl, u, &b, &e);
        if (reduce && m->leader)
            l->reducer->identity(run);
        for (int64_t lr = b; lr < e; ++lr, half ^= 1) {
            run_team(j, &m->me, lr, m->values, half);
            if (m->leader && lr == e - 1)
                sync->unit[(k + 1) & 1u] =
                    atomic_fetch_add_explicit(&j->ts->next, 1, memory_order_relaxed);
            if (m->many)
                pxi_team_sync_barrier(sync);
            if (reduce && m->leader)
                join_team(j, &m->me, m->values, half, run);
        }
        if (reduce && m->leader)
            memcpy(j->unit_values + (size_t)u * PXI_TEAM_SLOT, run, l->reducer->value_size);
    }
}

static void team_main(pxi_tpool *pool, int rank, unsigned gen, void *arg)
{
    const team_job *j = arg;
    const pxi_launch *l = j->l;
    const pxi_team_plan *pl = &j->plan;
    int reduce = l->kind == PX_KERNEL_REDUCE;
    const px_reducer *r = l->reducer;
    pxi_tpool_slot *slot = &pxi_tpool_slots(pool)[rank];
    int t = pl->team_size, g = rank / t;
    if (g >= pl->ngroups) {
        /* Idle for this launch: the identity into the fan-in (static reduce). */
        if (reduce && !pl->dynamic)
            r->identity(slot->value);
        (void)pxi_tpool_fanin(pool, rank, gen, PXI_FANIN_UP,
                              reduce && !pl->dynamic ? r->join : NULL);
        return;
    }
    group *gr = &j->ts->groups[g];
    unsigned char *scratch = gr->mem + 2 * slots_bytes(t);
    int trank = rank - g * t;
    member_ctx m = {.j = j,
                    .sync = gr->sync,
                    .values = gr->mem + slots_bytes(t),
                    .leader = trank == 0,
                    .many = t > 1};
    m.me = (px_team){.pxi_league_size = pl->league_size,
                     .pxi_team_rank = trank,
                     .pxi_team_size = t,
                     .pxi_vector_length = 1,
                     .pxi_reduce_seq = 0,
                     .pxi_scratch = pl->scratch_team ? scratch : NULL,
                     .pxi_thread_scratch =
                         pl->scratch_thread
                             ? scratch + pl->scratch_team + (size_t)trank * pl->scratch_thread
                             : NULL,
                     .pxi_sync = m.many ? gr->sync : NULL};
    alignas(PXI_CACHE_LINE) unsigned char run[PX_REDUCER_MAX_VALUE_BYTES];
    if (!pl->dynamic) {
        run_static(&m, g, run);
        if (reduce && m.leader)
            memcpy(slot->value, run, r->value_size);
        else if (reduce)
            r->identity(slot->value);
        if (pxi_tpool_fanin(pool, rank, gen, PXI_FANIN_UP, reduce ? r->join : NULL) && reduce)
            memcpy(l->result, slot->value, r->value_size);
        return;
    }
    run_dynamic(&m, run);
    if (pxi_tpool_fanin(pool, rank, gen, PXI_FANIN_UP, NULL) && reduce) {
        /* Rank 0, after every run: join the runs' values in league order. */
        memcpy(run, j->unit_values, r->value_size);
        for (int64_t u = 1; u < pl->nclaims; ++u)
            r->join(run, j->unit_values + (size_t)u * PXI_TEAM_SLOT);
        memcpy(l->result, run, r->value_size);
    }
}

/* From inside a running kernel: teams of one member, in league order, on this thread. */
static int launch_inline(const pxi_launch *l)
{
    const pxi_team_plan *pl = l->team_plan;
    unsigned char *buf = NULL;
    if (pl->scratch_group) {
        buf = pxi_malloc_aligned(pl->scratch_group, PXI_CACHE_LINE);
        if (!buf) {
            PXI_ERROR("threads: team launch '%s': out of memory for %zu bytes of scratch", l->label,
                      pl->scratch_group);
            return PX_ENOMEM;
        }
    }
    px_team me = {.pxi_league_size = pl->league_size,
                  .pxi_team_size = 1,
                  .pxi_vector_length = 1,
                  .pxi_scratch = pl->scratch_team ? buf : NULL,
                  .pxi_thread_scratch = pl->scratch_thread ? buf + pl->scratch_team : NULL};
    alignas(PXI_CACHE_LINE) unsigned char acc[PX_REDUCER_MAX_VALUE_BYTES];
    alignas(PXI_CACHE_LINE) unsigned char v[PX_REDUCER_MAX_VALUE_BYTES];
    if (l->kind == PX_KERNEL_REDUCE)
        l->reducer->identity(acc);
    for (int64_t lr = 0; lr < pl->league_size; ++lr) {
        me.pxi_league_rank = lr;
        if (l->kind == PX_KERNEL_FOR) {
            l->host_team_for(&me, l->ctx);
        } else {
            l->reducer->identity(v);
            l->host_team_reduce(&me, l->ctx, v);
            l->reducer->join(acc, v);
        }
    }
    if (l->kind == PX_KERNEL_REDUCE)
        memcpy(l->result, acc, l->reducer->value_size);
    pxi_free_aligned(buf);
    return PX_OK;
}

int pxi_threads_team_launch(const pxi_launch *l, pxi_threads_team *ts)
{
    if (l->kind != PX_KERNEL_FOR && l->kind != PX_KERNEL_REDUCE) {
        PXI_ERROR("threads: team launch '%s' of unsupported kind %d", l->label, (int)l->kind);
        return PX_EINVAL;
    }
    if (pxi_tpool_in_job()) {
        if (l->team_plan->team_size != 1) {
            PXI_ERROR("threads: team launch '%s' from inside a running kernel runs inline on "
                      "one thread; team size %d is above that limit of 1",
                      l->label, l->team_plan->team_size);
            return PX_EINVAL;
        }
        return launch_inline(l);
    }
    team_job j = {.l = l, .ts = ts, .plan = *l->team_plan};
    /* The plan was resolved at prepare with the pool's size; recompute the groups for it in
     * case the prepared launch came from an engine push made before a re-initialize. */
    if (j.plan.team_size > ts->nranks) {
        PXI_ERROR("threads: team launch '%s': team size %d is above the limit of %d (its thread "
                  "count, PX_NUM_THREADS)",
                  l->label, j.plan.team_size, ts->nranks);
        return PX_EINVAL;
    }
    if ((int64_t)j.plan.ngroups * j.plan.team_size > ts->nranks) {
        px_team_policy p = *l->team;
        p.team_size = j.plan.team_size;
        p.vector_length = j.plan.vector_length;
        pxi_team_limits lim;
        (void)pxi_threads_team_limits(ts, &lim);
        j.plan = pxi_plan_team(&p, l->kind, ts->nranks, &lim, PXI_PLAN_POOL);
    }
    pxi_tpool *pool = ts->pool;
    j.spin_ns = pxi_tpool_spin_ns(pool);
    int t = j.plan.team_size;
    size_t bytes = 2 * slots_bytes(t) + j.plan.scratch_group;
    pxi_tpool_lock(pool);
    int rc = reserve_groups(ts, j.plan.ngroups, bytes, l->label);
    if (rc == PX_OK && j.plan.dynamic && l->kind == PX_KERNEL_REDUCE) {
        size_t need = (size_t)j.plan.nclaims * PXI_TEAM_SLOT;
        if (need > ts->unit_buf_bytes) {
            unsigned char *nb = pxi_malloc_aligned(need, PXI_CACHE_LINE);
            if (!nb) {
                PXI_ERROR("threads: team launch '%s': out of memory for %zu bytes of "
                          "dynamic-schedule reduction slots",
                          l->label, need);
                rc = PX_ENOMEM;
            } else {
                pxi_free_aligned(ts->unit_buf);
                ts->unit_buf = nb;
                ts->unit_buf_bytes = need;
            }
        }
        j.unit_values = ts->unit_buf;
    }
    if (rc != PX_OK) {
        pxi_tpool_unlock(pool);
        return rc;
    }
    for (int g = 0; g < j.plan.ngroups; ++g) {
        group *gr = &ts->groups[g];
        pxi_team_sync_init(gr->sync, t, j.spin_ns, gr->mem);
    }
    atomic_store_explicit(&ts->next, 0, memory_order_relaxed);
    pxi_tpool_run(pool, team_main, &j);
    pxi_tpool_unlock(pool);
    return PX_OK;
}
