/*
 * parex/team.h - hierarchical parallelism: leagues of teams with shared scratch memory
 * (Kokkos::TeamPolicy, TeamThreadRange, ThreadVectorRange, team_scratch).
 *
 * A team launch runs league_size teams. A team is team_size members (threads) that run
 * concurrently, may synchronize with px_team_barrier, share a block of team scratch memory and
 * each own a block of thread scratch; a member may split further work over vector lanes.
 *
 *   - serial: one member per team (team size 1, vector length 1); teams run in league order on
 *     the calling thread; scratch comes from one block per launch.
 *   - threads: a team is a group of team_size consecutive pool ranks bound to cores that share
 *     a cache (hwloc: cores under one L2, else one L3, else consecutive ranks); the pool forms
 *     floor(P / team_size) groups, which take teams in contiguous blocks in league order
 *     (PX_SCHEDULE_STATIC) or claim runs of consecutive teams at run time
 *     (PX_SCHEDULE_DYNAMIC). Ranks beyond the last whole group idle for the launch. Team
 *     barriers spin on the group's own cache line (base/wait.h: no system call while the wait
 *     is short; a sleep after the pool's spin budget, so a barrier never deadlocks, also with
 *     more threads than cores). Scratch is per-group memory, 64-byte aligned, allocated once
 *     and grown on demand. Vector lanes: the member's SIMD loop (see PX_THREAD_VECTOR_FOR);
 *     vector_length is accepted and ignored. A team of one member never synchronizes: its
 *     barrier and team reduce cost nothing, the right shape for batches of small independent
 *     work (one small matrix per team).
 *   - cuda (single-source kernels from nvcc-compiled files only): a team is a thread block of
 *     vector_length x team_size threads (lanes on threadIdx.x, members on threadIdx.y), scratch
 *     is dynamic shared memory, px_team_barrier is __syncthreads, px_team_reduce an ordered
 *     warp-shuffle tree plus shared memory; see parex/kernel_cuda_team.h.
 *
 * Host function bodies:
 *
 *     static void rows(const px_team *t, void *ctx) {
 *         int64_t blk = px_team_league_rank(t);            // this team's block
 *         double *tmp = px_team_scratch(t);                // shared by the team
 *         PX_TEAM_THREAD_FOR(t, i, 0, 64) { tmp[i] = f(blk, i); }
 *         px_team_barrier(t);                              // tmp complete
 *         ...
 *     }
 *     px_team_policy p = px_team_policy_make(n_blocks, 0, 0);
 *     p.scratch_per_team = 64 * sizeof(double);
 *     px_parallel_for_team_fn(space, "rows", p, rows, ctx);
 *
 * Single-source bodies (the PX_FOR pattern of parex/kernel.h; a member `t`, the arguments `a`):
 *
 *     PX_TEAM_FOR(rows_k, rows_args, t, a) { ... }
 *     PX_TEAM_REDUCE(sum_k, sum_args, double, t, a, acc) { ... *acc += ...; }
 *     px_parallel_for_team(space, "rows", p, &rows_k, &args, sizeof args);
 *
 * Launch reductions: every member gets its own *acc, from the identity, for each team; after
 * the team's body the members' values are joined in team-rank order into the team's value,
 * and team values are joined in league order (static: each group's block, then groups in
 * order; dynamic: each claimed run, then runs in league order). The result is bitwise
 * reproducible for a fixed space, thread count and policy, and a non-commutative (associative)
 * join gives the sequential answer.
 *
 * Collective calls: px_team_barrier and px_team_reduce must be called by every member of the
 * team, the same number of times and in the same order (as Kokkos' team_barrier and
 * team_reduce); a member that skips one leaves the others waiting.
 */
#ifndef PAREX_TEAM_H
#define PAREX_TEAM_H

#include <stddef.h>
#include <stdint.h>

#include "parex/core.h"
#include "parex/kernel.h"
#include "parex/policy.h"
#include "parex/reducer.h"
#include "parex/space.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A team member, valid only inside the body it is passed to (Kokkos' TeamPolicy::member_type).
 * The layout is visible so the loop macros can read it inline; the fields are the runtime's:
 * read them through px_team_* only.
 */
typedef struct px_team {
    int64_t pxi_league_rank;        /* this team's index in [0, league_size) */
    int64_t pxi_league_size;        /* number of teams of the launch */
    int pxi_team_rank;              /* this member's index in [0, team_size) */
    int pxi_team_size;              /* members of the team */
    int pxi_vector_length;          /* vector lanes per member (1 on host spaces) */
    unsigned pxi_reduce_seq;        /* px_team_reduce calls made so far by this member */
    void *pxi_scratch;              /* team scratch, 64-byte aligned, or NULL when 0 bytes */
    void *pxi_thread_scratch;       /* this member's scratch, 64-byte aligned, or NULL */
    struct pxi_team_sync *pxi_sync; /* the team's barrier and reduction slots; NULL: size 1 */
} px_team;

/**
 * A team policy (Kokkos::TeamPolicy): league_size teams of team_size members, each member
 * with vector_length lanes, with level-0 scratch per team and per member.
 *
 * Limits (a launch outside them is PX_EINVAL with a message naming the limit):
 *   - league_size >= 0 (0 runs nothing; a reduce returns the identity);
 *   - team_size >= 0, 0 letting the space choose (serial 1; threads 1, as Kokkos' host
 *     backends recommend with one thread per core; cuda 128 / vector_length); at most 1 on
 *     serial, at most the thread count (PX_NUM_THREADS) on threads, and on cuda
 *     team_size x vector_length at most the kernel's threads per block (maxThreadsPerBlock,
 *     1024 or fewer when the kernel's registers bound it);
 *   - vector_length >= 0, 0 letting the space choose (1); at most PX_TEAM_MAX_VECTOR_LENGTH;
 *     a power of two on cuda; host spaces run one thread per member whatever the value;
 *   - scratch_per_team + team_size * scratch_per_thread (each rounded up to 64 bytes) at most
 *     PX_TEAM_HOST_MAX_SCRATCH bytes on host spaces, and on cuda at most the device's shared
 *     memory per block (sharedMemPerBlockOptin, e.g. 227 KiB on an H100) less the kernel's
 *     own static shared memory;
 *   - schedule PX_SCHEDULE_STATIC or PX_SCHEDULE_DYNAMIC (see px_team_policy_schedule).
 */
typedef struct {
    int64_t league_size;       /**< Number of teams, >= 0. */
    int team_size;             /**< Members per team, >= 0; 0: the space chooses. */
    int vector_length;         /**< Lanes per member, >= 0; 0: the space chooses (1 on host). */
    size_t scratch_per_team;   /**< Bytes of team scratch (px_team_scratch), level 0. */
    size_t scratch_per_thread; /**< Bytes of each member's scratch (px_team_thread_scratch). */
    px_schedule schedule;      /**< How teams are dealt to groups; PX_SCHEDULE_STATIC default. */
} px_team_policy;

/** Most vector lanes a policy may ask for (Kokkos' vector_length_max on Cuda: a warp). */
#define PX_TEAM_MAX_VECTOR_LENGTH 32
/** Most scratch bytes of one team on a host space: team scratch plus every member's. */
#define PX_TEAM_HOST_MAX_SCRATCH ((size_t)1 << 30)

/**
 * A policy of @p league_size teams of @p team_size members with @p vector_length lanes, no
 * scratch, static schedule (Kokkos::TeamPolicy<>(league_size, team_size, vector_length);
 * pass 0 for Kokkos::AUTO).
 * @return the policy value; not validated here (launches return PX_EINVAL for bad values).
 * Thread-safe, pure.
 */
PX_API px_team_policy px_team_policy_make(int64_t league_size, int team_size, int vector_length);

/**
 * @p p with its level-0 scratch set (Kokkos' set_scratch_size(0, PerTeam(t), PerThread(m))).
 * @param per_team    bytes shared by each team (px_team_scratch).
 * @param per_thread  bytes owned by each member (px_team_thread_scratch).
 * @return the changed policy; not validated here. Thread-safe, pure.
 */
PX_API px_team_policy px_team_policy_scratch(px_team_policy p, size_t per_team, size_t per_thread);

/**
 * @p p with schedule @p s (Kokkos' TeamPolicy<Schedule<Dynamic>>): PX_SCHEDULE_STATIC deals
 * the league to the groups in contiguous blocks; PX_SCHEDULE_DYNAMIC lets groups claim runs of
 * consecutive teams (about league / (8 groups) teams each) at run time, for teams of uneven
 * cost. The launch reduction stays bitwise reproducible either way (see the file comment).
 * Serial ignores the schedule. @return the changed policy; an unknown schedule is PX_EINVAL at
 * launch. Thread-safe, pure.
 */
PX_API px_team_policy px_team_policy_schedule(px_team_policy p, px_schedule s);

/** A team body: runs once per member of each team. */
typedef void (*px_team_fn)(const px_team *t, void *ctx);
/** A team reduce body: folds this member's contribution into *acc (which holds the identity
 * when the team starts). */
typedef void (*px_team_reduce_fn)(const px_team *t, void *ctx, void *acc);

/**
 * Run @p fn for every member of every team of @p p on @p s (Kokkos::parallel_for with a
 * TeamPolicy). Returns when every team has run.
 *
 * @param s      execution space; NULL means px_default_space().
 * @param label  name for tools and logs; NULL or "" becomes "px_parallel_for_team_fn".
 * @param p      the team policy (see px_team_policy for its limits).
 * @param fn     the body, called with each member; members of one team run concurrently.
 * @param ctx    passed to fn unchanged.
 * @return PX_OK;
 *         PX_EFAULT   fn is NULL (checked first, even before initialize);
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_ENODEV   s is not available (or no default space);
 *         PX_EINVAL   league_size, team_size or vector_length negative, vector_length above
 *                     PX_TEAM_MAX_VECTOR_LENGTH, or an unknown schedule;
 *         PX_EINVAL   a team size the space cannot give, scratch beyond its limit, or a space
 *                     without team launches; the message names the limit;
 *         PX_EINVAL   on cuda: a host function body (use PX_TEAM_FOR / PX_TEAM_REDUCE in a file
 *                     compiled by nvcc), or a vector_length that is not a power of two;
 *         PX_ECUDA    on cuda: the CUDA runtime failed (logged with its error name);
 *         PX_EINVAL   a team size above 1 launched from inside a running threads kernel (such
 *                     launches run inline on one thread);
 *         PX_ENOMEM   the space could not grow its scratch.
 * Tools see begin/end_parallel_for. Thread-safe as px_parallel_for_fn (parex/kernel.h).
 */
PX_API int px_parallel_for_team_fn(px_space *s, const char *label, px_team_policy p, px_team_fn fn,
                                   void *ctx);

/**
 * Reduce @p fn over every member of every team into @p result with reducer @p r (Kokkos::
 * parallel_reduce with a TeamPolicy). Join order: see the file comment (team-rank order in a
 * team, league order across teams).
 *
 * @param s, label, p, ctx  as px_parallel_for_team_fn (label default
 *                          "px_parallel_reduce_team_fn").
 * @param fn      folds this member's contribution into *acc.
 * @param r       the reducer.
 * @param result  host memory for one value (r->value_size bytes); overwritten: the identity
 *                for league_size 0. Untouched on failure.
 * @return as px_parallel_for_team_fn, plus PX_EFAULT for r or result NULL and PX_EINVAL for
 *         a reducer px_reducer_validate rejects. Thread-safe as px_parallel_for_fn.
 */
PX_API int px_parallel_reduce_team_fn(px_space *s, const char *label, px_team_policy p,
                                      px_team_reduce_fn fn, void *ctx, const px_reducer *r,
                                      void *result);

/** @name Member queries (Kokkos' league_rank, league_size, team_rank, team_size)
 * Valid inside a body on the member it was passed; thread-safe, no status.
 * @{ */
/** This team's index, 0 <= league_rank < league_size. */
PX_API int64_t px_team_league_rank(const px_team *t);
/** The launch's number of teams. */
PX_API int64_t px_team_league_size(const px_team *t);
/** This member's index in its team, 0 <= team_rank < team_size. */
PX_API int px_team_rank(const px_team *t);
/** The members of this team (the policy's team_size, or the space's choice for 0). */
PX_API int px_team_size(const px_team *t);
/** @} */

/**
 * Wait until every member of the team has called it (Kokkos' team_barrier); writes before the
 * barrier (scratch included) are visible to every member after it. Collective (see the file
 * comment). Spins on the team's cache line, then sleeps after the space's spin budget (never
 * deadlocks with more threads than cores). A team of one returns at once.
 */
PX_API void px_team_barrier(const px_team *t);

/**
 * The team's scratch block: scratch_per_team bytes, 64-byte aligned, shared by every member
 * (Kokkos' team_scratch(0), level 0). Contents are undefined when a team starts; NULL when
 * scratch_per_team is 0. Valid until the body returns.
 */
PX_API void *px_team_scratch(const px_team *t);

/**
 * This member's own scratch block: scratch_per_thread bytes, 64-byte aligned, never shared
 * (Kokkos' thread_scratch(0)). Contents undefined when a team starts; NULL when
 * scratch_per_thread is 0.
 */
PX_API void *px_team_thread_scratch(const px_team *t);

/**
 * Team reduction (Kokkos' team_reduce): every member passes its value @p mine; every member
 * receives in @p result the join of all members' values in team-rank order (member 0's on the
 * left), bitwise the same on every member. Collective.
 *
 * In a single-source body compiled by nvcc, @p mine and @p result must point to the same value
 * type, and on the device @p r must be a builtin reducer (px_sum_f64, ...; a value type other
 * than the reducer's is a compile error there); each member contributes its vector lane 0's
 * value.
 *
 * @param t       the member.
 * @param r       the reducer; the same for every member.
 * @param mine    this member's value (r->value_size bytes).
 * @param result  receives the team's value; may equal mine.
 * @return PX_OK;
 *         PX_EFAULT t, r, mine or result NULL (the call is then not collective: use it only to
 *                   catch programming errors);
 *         PX_EINVAL r without identity/join or value_size 0 or above
 *                   PX_REDUCER_MAX_VALUE_BYTES.
 */
PX_API int px_team_reduce(const px_team *t, const px_reducer *r, const void *mine, void *result);

/* Member calls inline in host code (C and C++ without nvcc; nvcc: parex/kernel_cuda_team.h):
 * the queries read the member's fields, and a barrier of a one-member team costs a load and a
 * branch. The functions above stay for function pointers and other languages. */
#if !defined(__CUDACC__)
static inline int64_t pxi_team_league_rank_inl(const px_team *t)
{
    return t->pxi_league_rank;
}
static inline int64_t pxi_team_league_size_inl(const px_team *t)
{
    return t->pxi_league_size;
}
static inline int pxi_team_rank_inl(const px_team *t)
{
    return t->pxi_team_rank;
}
static inline int pxi_team_size_inl(const px_team *t)
{
    return t->pxi_team_size;
}
static inline void *pxi_team_scratch_inl(const px_team *t)
{
    return t->pxi_scratch;
}
static inline void *pxi_team_thread_scratch_inl(const px_team *t)
{
    return t->pxi_thread_scratch;
}
static inline void pxi_team_barrier_inl(const px_team *t)
{
    if (t && t->pxi_sync && t->pxi_team_size > 1)
        (px_team_barrier)(t);
}
#define px_team_league_rank(t)    pxi_team_league_rank_inl(t)
#define px_team_league_size(t)    pxi_team_league_size_inl(t)
#define px_team_rank(t)           pxi_team_rank_inl(t)
#define px_team_size(t)           pxi_team_size_inl(t)
#define px_team_scratch(t)        pxi_team_scratch_inl(t)
#define px_team_thread_scratch(t) pxi_team_thread_scratch_inl(t)
#define px_team_barrier(t)        pxi_team_barrier_inl(t)
#endif

/**
 * Nested loops (Kokkos' TeamThreadRange and ThreadVectorRange) as for-statements:
 *
 *     PX_TEAM_THREAD_FOR(t, i, b, e) { ... }    // this member's share of [b, e): the members
 *                                               // together cover each index once
 *     PX_THREAD_VECTOR_FOR(t, i, b, e) { ... }  // [b, e) over this member's vector lanes
 *
 * `i` is declared as int64_t. The range is evaluated once; b > e visits nothing. No implied
 * barrier. Host spaces: a member's share is one contiguous block (the first (e - b) % team_size
 * members take one index more). Cuda: member r takes b + r, b + r + team_size, ... (so
 * consecutive members touch consecutive elements), and lane x of the vector loop b + x,
 * b + x + vector_length, ...
 *
 * Vector length on host spaces: a member is one thread, and PX_THREAD_VECTOR_FOR is a plain
 * countable loop over [b, e) in order, marked for the compiler's vectorizer (GCC ivdep, clang
 * vectorize(assume_safety)): it may run the iterations as SIMD lanes of the core, as the lanes
 * of a warp run them on cuda. The iterations must therefore be independent (no iteration reads
 * what another writes), which Kokkos' ThreadVectorRange requires too; a sum into one variable
 * (a reduction) stays a sequential sum in index order (no reassociation), so host results are
 * bitwise those of the plain loop. vector_length is then a hint the host ignores.
 */
#define PX_TEAM_THREAD_FOR(t, i, b, e)                                                             \
    for (int64_t pxi_b_##i = (int64_t)(b), pxi_e_##i = (int64_t)(e),                               \
                 i = pxi_team_share_begin((t), pxi_b_##i, pxi_e_##i),                              \
                 pxi_end_##i = pxi_team_share_end((t), pxi_b_##i, pxi_e_##i),                      \
                 pxi_step_##i = pxi_team_share_step(t);                                            \
         i < pxi_end_##i; i += pxi_step_##i)

#if defined(__CUDACC__)
#define PX_THREAD_VECTOR_FOR(t, i, b, e)                                                           \
    for (int64_t i = pxi_vector_begin((t), (int64_t)(b)), pxi_vend_##i = (int64_t)(e),             \
                 pxi_vstep_##i = pxi_vector_step(t);                                               \
         i < pxi_vend_##i; i += pxi_vstep_##i)
#else
#if defined(__clang__)
#define PXI_VECTOR_LOOP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define PXI_VECTOR_LOOP _Pragma("GCC ivdep")
#else
#define PXI_VECTOR_LOOP
#endif
#define PX_THREAD_VECTOR_FOR(t, i, b, e)                                                           \
    PXI_VECTOR_LOOP                                                                                \
    for (int64_t i = ((void)(t), (int64_t)(b)), pxi_vend_##i = (int64_t)(e); i < pxi_vend_##i; ++i)
#endif

/* Internal to PX_TEAM_THREAD_FOR and PX_THREAD_VECTOR_FOR. Host: member r of n gets
 * [b + r q + min(r, m), ...) with q = (e - b) / n, m = (e - b) % n, step 1. Cuda device code:
 * b + r with step n; lanes b + threadIdx.x with step vector_length. */
static inline PXI_HD int64_t pxi_team_share_begin(const px_team *t, int64_t b, int64_t e)
{
    if (e <= b)
        return b;
#ifdef __CUDA_ARCH__
    return b + t->pxi_team_rank;
#else
    int64_t n = t->pxi_team_size, r = t->pxi_team_rank, len = e - b;
    if (n == 1)
        return b; /* no division for the one-member teams of batched work */
    int64_t q = len / n, m = len % n;
    return b + r * q + (r < m ? r : m);
#endif
}
static inline PXI_HD int64_t pxi_team_share_end(const px_team *t, int64_t b, int64_t e)
{
    if (e <= b)
        return b;
#ifdef __CUDA_ARCH__
    (void)t;
    return e;
#else
    int64_t n = t->pxi_team_size, r = t->pxi_team_rank + 1, len = e - b;
    if (n == 1)
        return e;
    int64_t q = len / n, m = len % n;
    return b + r * q + (r < m ? r : m);
#endif
}
static inline PXI_HD int64_t pxi_team_share_step(const px_team *t)
{
#ifdef __CUDA_ARCH__
    return t->pxi_team_size;
#else
    (void)t;
    return 1;
#endif
}
static inline PXI_HD int64_t pxi_vector_begin(const px_team *t, int64_t b)
{
    (void)t;
#ifdef __CUDA_ARCH__
    return b + (int64_t)threadIdx.x;
#else
    return b;
#endif
}
static inline PXI_HD int64_t pxi_vector_step(const px_team *t)
{
#ifdef __CUDA_ARCH__
    return t->pxi_vector_length;
#else
    (void)t;
    return 1;
#endif
}

/** @name Single-source team kernels (PX_TEAM_FOR, PX_TEAM_REDUCE)
 * @{ */
/** Marks a valid px_team_kernel ('PXTK'). */
#define PX_TEAM_KERNEL_MAGIC 0x5058544bu

/** A single-source team kernel, made by PX_TEAM_FOR / PX_TEAM_REDUCE; fields read-only. */
typedef struct px_team_kernel {
    uint32_t magic;                 /**< PX_TEAM_KERNEL_MAGIC. */
    px_kernel_kind kind;            /**< PX_KERNEL_FOR or PX_KERNEL_REDUCE. */
    const char *name;               /**< The macro's NAME; default label. */
    size_t args_size;               /**< sizeof(ARGS). */
    size_t value_size;              /**< sizeof(VALUE) for reduce, 0 for for. */
    px_team_fn host_for;            /**< Host entry of a PX_TEAM_FOR kernel. */
    px_team_reduce_fn host_reduce;  /**< Host entry of a PX_TEAM_REDUCE kernel. */
    const px_kernel_device *device; /**< Device half (nvcc-compiled files); NULL otherwise. */
    px_value_type value_type;       /**< VALUE's type tag for reduce (as px_kernel's). */
    /** Host entry of a PX_TEAM_FOR kernel over teams [b, e) of one member: the league loop with
     *  the body inlined and the arguments copied once (no call per team); after each team a
     *  barrier when the member has a sync block and scratch_barrier is nonzero. NULL for reduce. */
    void (*host_for_teams)(px_team *t, const void *args, int64_t b, int64_t e, int scratch_barrier);
} px_team_kernel;

/**
 * Launch a PX_TEAM_FOR kernel (Kokkos::parallel_for(TeamPolicy, lambda)); @p args (args_size
 * bytes, == k->args_size) is read at launch.
 * @return as px_parallel_for_team_fn, plus PX_EFAULT for k NULL or args NULL with
 *         args_size > 0, PX_EINVAL for a k that is not a PX_TEAM_FOR kernel or an args_size
 *         mismatch. Thread-safe as px_parallel_for_fn.
 */
PX_API int px_parallel_for_team(px_space *s, const char *label, px_team_policy p,
                                const px_team_kernel *k, const void *args, size_t args_size);

/**
 * Launch a PX_TEAM_REDUCE kernel with reducer @p r; @p result as px_parallel_reduce_team_fn.
 * @return as px_parallel_reduce_team_fn and px_parallel_for_team, plus PX_EINVAL when
 *         r->value_size differs from sizeof(VALUE). Thread-safe as px_parallel_for_fn.
 */
PX_API int px_parallel_reduce_team(px_space *s, const char *label, px_team_policy p,
                                   const px_team_kernel *k, const void *args, size_t args_size,
                                   const px_reducer *r, void *result);
/** @} */

#ifdef __cplusplus
}
#endif

/*
 * PX_TEAM_FOR(name, Args, t, a) { body }: defines `const px_team_kernel name`; in the body `t`
 * is the `const px_team *` member and `a` a `const Args *` to a private copy of the arguments.
 * PX_TEAM_REDUCE(name, Args, Value, t, a, acc) { body }: also `acc`, a `Value *` this member
 * folds into. Use PX_TEAM_KERNEL_DECLARE(name) in a header for a kernel of another file.
 */
#define PX_TEAM_KERNEL_DECLARE(name) PXI_EXTERN_C extern const px_team_kernel name

/* Team bodies are compiled for host and device under nvcc (parex/kernel_cuda_team.h adds the
 * device half and makes the member calls device functions there). */
#if defined(__CUDACC__)
extern "C++" {
#include "parex/kernel_cuda_team.h"
}
#else
#define PXI_DEVICE_TEAM_FOR(name, Args)
#define PXI_DEVICE_TEAM_REDUCE(name, Args, Value)
#define PXI_DEVICE_TEAM_PTR(name) NULL
#endif
#if defined(__GNUC__)
#define PXI_TEAM_BODY static inline __attribute__((always_inline)) PXI_HD
#else
#define PXI_TEAM_BODY static inline PXI_HD
#endif

/* The league loop of host_for_teams: @call for teams [b, e) on member @t, with the team barrier
 * after each when the member has a sync block (team size > 1) and @bar is set. */
#define pxi_team_league_loop(t, b, e, bar, call)                                                   \
    do {                                                                                           \
        const int pxsync_ = (t)->pxi_sync != NULL && (bar);                                        \
        for (int64_t pxlr_ = (b); pxlr_ < (e); ++pxlr_) {                                          \
            (t)->pxi_league_rank = pxlr_;                                                          \
            call;                                                                                  \
            if (pxsync_)                                                                           \
                px_team_barrier(t);                                                                \
        }                                                                                          \
    } while (0)

#define PX_TEAM_FOR(name, Args, t, a)                                                              \
    PXI_TEAM_BODY void name##_pxtbody(const px_team *t, const Args *PXI_RESTRICT a);               \
    static void name##_pxthost(const px_team *pxt_, void *pxargs_)                                 \
    {                                                                                              \
        const Args pxa_ = *(const Args *)pxargs_;                                                  \
        name##_pxtbody(pxt_, &pxa_);                                                               \
    }                                                                                              \
    static void name##_pxtteams(px_team *pxt_, const void *pxargs_, int64_t pxb_, int64_t pxe_,    \
                                int pxbar_)                                                        \
    {                                                                                              \
        const Args pxa_ = *(const Args *)pxargs_;                                                  \
        pxi_team_league_loop(pxt_, pxb_, pxe_, pxbar_, name##_pxtbody(pxt_, &pxa_));               \
    }                                                                                              \
    PXI_DEVICE_TEAM_FOR(name, Args)                                                                \
    PXI_EXTERN_C const px_team_kernel name = {PX_TEAM_KERNEL_MAGIC,                                \
                                              PX_KERNEL_FOR,                                       \
                                              #name,                                               \
                                              sizeof(Args),                                        \
                                              0,                                                   \
                                              name##_pxthost,                                      \
                                              NULL,                                                \
                                              PXI_DEVICE_TEAM_PTR(name),                           \
                                              PX_VALUE_CUSTOM,                                     \
                                              name##_pxtteams};                                    \
    PXI_TEAM_BODY void name##_pxtbody(const px_team *t, const Args *PXI_RESTRICT a)

#define PX_TEAM_REDUCE(name, Args, Value, t, a, acc)                                               \
    PXI_TEAM_BODY void name##_pxtbody(const px_team *t, const Args *PXI_RESTRICT a,                \
                                      Value *PXI_RESTRICT acc);                                    \
    static void name##_pxthost(const px_team *pxt_, void *pxargs_, void *pxacc_)                   \
    {                                                                                              \
        const Args pxa_ = *(const Args *)pxargs_;                                                  \
        Value pxv_ = *(Value *)pxacc_;                                                             \
        name##_pxtbody(pxt_, &pxa_, &pxv_);                                                        \
        *(Value *)pxacc_ = pxv_;                                                                   \
    }                                                                                              \
    PXI_DEVICE_TEAM_REDUCE(name, Args, Value)                                                      \
    PXI_EXTERN_C const px_team_kernel name = {PX_TEAM_KERNEL_MAGIC,                                \
                                              PX_KERNEL_REDUCE,                                    \
                                              #name,                                               \
                                              sizeof(Args),                                        \
                                              sizeof(Value),                                       \
                                              NULL,                                                \
                                              name##_pxthost,                                      \
                                              PXI_DEVICE_TEAM_PTR(name),                           \
                                              PXI_VALUE_TYPE(Value),                               \
                                              NULL};                                               \
    PXI_TEAM_BODY void name##_pxtbody(const px_team *t, const Args *PXI_RESTRICT a,                \
                                      Value *PXI_RESTRICT acc)

#endif /* PAREX_TEAM_H */
