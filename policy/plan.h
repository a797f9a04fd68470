/* policy/plan.h - the plan a backend executes for a launch: the policy resolved once, by pure
 * functions (policy/plan.c), for the space that runs it. serial, threads and cuda take every
 * decision about chunk sizes, blocks and claims from here; none of them reads chunk_size or
 * resolves "0 = automatic" itself. Exhaustively unit-tested (tests/check_policy.c).
 *
 * The plan of a range launch (pxi_plan_range), with n = end - begin and c = the policy's
 * chunk_size:
 *   - chunk: the partition unit. c when c > 0; else px_range_auto_chunk(n, nranks, schedule),
 *     which is 1 for static (blocks balanced to one index) and about n / (8 nranks) for dynamic.
 *   - static (every serial launch, threads static, every scan): rank r of nranks runs one
 *     contiguous block of whole chunks (pxi_plan_static_block; scans pxi_plan_scan_block), in
 *     rank order, and cuts it into function calls of at most call_chunk indices starting at
 *     the block's start, so with c > 0 each call is exactly one chunk, and with c == 0
 *     (call_chunk INT64_MAX) each rank makes one call for its whole block.
 *   - dynamic (threads, for and reduce with PX_SCHEDULE_DYNAMIC): ranks claim units of `claim`
 *     indices (whole chunks; a reduce groups chunks so there are at most PXI_PLAN_MAX_UNITS
 *     units, each with its own value slot), in any order; unit u is
 *     [begin + u claim, min(end, begin + (u + 1) claim)) and is run in calls of one chunk.
 *   - device (cuda): one index per device thread; chunk and call_chunk are 1 and the policy's
 *     chunk size and schedule do not apply (the grid covers [begin, end) once).
 *
 * Room for the next policies: pxi_plan carries a kind tag and a union with one member per
 * policy kind (mdrange tiles, team leagues), each with its own pure plan function here. Team
 * leagues: pxi_plan_team below (static blocks of teams per group, or dynamic runs of teams). */
#ifndef PXI_PLAN_H
#define PXI_PLAN_H

#include <stdint.h>

#include "parex/kernel.h"
#include "parex/policy.h"
#include "parex/team.h"
#include "policy/mdrange.h"

/* The policy kinds a launch carries. Adding a kind: a value here, a plan struct and function
 * below, a member in pxi_plan's and pxi_launch's unions (core/registry.h), and one case in each
 * of core/launch.c's check_policy, has_host_entry and launch_empty.
 * MDRANGE: issue 13; TEAM: issue 14. */
typedef enum { PXI_POLICY_RANGE = 1, PXI_POLICY_MDRANGE = 2, PXI_POLICY_TEAM = 3 } pxi_policy_kind;

/* What kind of space runs the plan. */
typedef enum {
    PXI_PLAN_SERIAL = 0, /* one rank, in index order (also a nested launch run inline) */
    PXI_PLAN_POOL = 1,   /* nranks host threads (threads) */
    PXI_PLAN_DEVICE = 2  /* a device grid (cuda) */
} pxi_plan_space;

/* Most value slots of one dynamic reduction (units group whole chunks to stay below it). */
#define PXI_PLAN_MAX_UNITS 4096

/* A 1-D range launch, resolved. All fields are set by pxi_plan_range. */
typedef struct pxi_range_plan {
    /* The fields a static launch reads come first (the Threads space keeps them on one cache
     * line with the body). */
    int64_t begin, end; /* the policy's range, begin <= end */
    int64_t chunk;      /* partition unit, >= 1 */
    int64_t call_chunk; /* most indices per function call; INT64_MAX: a whole block */
    int nranks;         /* ranks the work is dealt to (1 for serial) */
    int dynamic;        /* 1: ranks claim units; 0: static blocks */
    int64_t nchunks;    /* ceil(n / chunk) */
    int64_t claim;      /* dynamic: indices per unit (a multiple of chunk); else 0 */
    int64_t nclaims;    /* dynamic: number of units; else 0 */
} pxi_range_plan;

/* ---- team leagues (PXI_POLICY_TEAM) --------------------------------------------------------
 * A team launch runs league_size teams of team_size members. A pool space forms
 * ngroups = floor(nranks / team_size) groups of consecutive ranks; groups take teams in
 * contiguous blocks in league order (static: pxi_plan_team_block) or claim runs of `claim`
 * consecutive teams (dynamic: run u is teams [u claim, min(league, (u + 1) claim)), at most
 * PXI_PLAN_MAX_UNITS runs for a reduce, each with its own value slot joined in run order).
 * Serial and device plans have one group per team (ngroups 1 on serial) and are static. */

/* The limits a space puts on team launches (pxi_space_ops.team_limits, core/registry.h). */
typedef struct pxi_team_limits {
    int max_team_size;          /* largest team the space can run */
    int default_team_size;      /* team_size 0 becomes this (<= max_team_size) */
    int max_vector_length;      /* largest vector_length */
    int default_vector_length;  /* vector_length 0 becomes this */
    size_t max_scratch;         /* most scratch bytes per team (team + every member's) */
    const char *team_limit_why; /* what bounds max_team_size, for messages */
} pxi_team_limits;

/* A team launch, resolved. All fields are set by pxi_plan_team. */
typedef struct pxi_team_plan {
    int64_t league_size;   /* teams, >= 0 */
    int team_size;         /* members per team, >= 1 */
    int vector_length;     /* lanes per member, >= 1 */
    int ngroups;           /* groups running teams at once, >= 1 */
    int dynamic;           /* 1: groups claim runs of teams; 0: static blocks */
    int64_t claim;         /* dynamic: teams per run; else 0 */
    int64_t nclaims;       /* dynamic: number of runs; else 0 */
    size_t scratch_team;   /* team scratch bytes, rounded up to 64 */
    size_t scratch_thread; /* each member's scratch bytes, rounded up to 64 */
    size_t scratch_group;  /* scratch_team + team_size * scratch_thread */
} pxi_team_plan;

/* Resolve a validated team policy (within @lim) for a launch of @kind on a space of @space
 * kind with @nranks ranks (< 1 taken as 1). team_size 0 and vector_length 0 take the limits'
 * defaults. Pure. */
pxi_team_plan pxi_plan_team(const px_team_policy *p, px_kernel_kind kind, int nranks,
                            const pxi_team_limits *lim, pxi_plan_space space);

/* Group @g's static block of teams [*b, *e) (possibly empty), 0 <= g < ngroups: contiguous, in
 * group order, sizes within one team. */
void pxi_plan_team_block(const pxi_team_plan *pl, int g, int64_t *b, int64_t *e);

/* Run @u's teams [*b, *e) in a dynamic plan, 0 <= u < nclaims. */
void pxi_plan_team_claim_bounds(const pxi_team_plan *pl, int64_t u, int64_t *b, int64_t *e);

/* An MDRange launch, resolved (pxi_plan_md): the box cut into tiles, and a range plan over the
 * tile numbers [0, tiling.total) that deals tiles to ranks exactly as a 1-D launch deals
 * indices: static, rank r runs one contiguous block of tiles (pxi_plan_static_block, chunk 1,
 * so blocks differ by at most one tile), in tile order; dynamic (threads with
 * PX_SCHEDULE_DYNAMIC, for and reduce), ranks claim units of consecutive tiles
 * (pxi_plan_claim_bounds; at most PXI_PLAN_MAX_UNITS units for a reduce, each folded into its own
 * value, joined in unit order). Either way a reduction joins values in tile order, so its result
 * depends only on (policy, nranks, hint), never on timing. */
typedef struct pxi_md_plan {
    pxi_md_tiling tiling; /* tiles (automatic extents resolved with the hint) */
    pxi_range_plan tiles; /* over tile numbers [0, tiling.total) */
} pxi_md_plan;

/* The plan of any launch: one member per policy kind. */
typedef struct pxi_plan {
    pxi_policy_kind kind;
    union {
        pxi_range_plan range; /* PXI_POLICY_RANGE */
        pxi_md_plan md;       /* PXI_POLICY_MDRANGE */
        pxi_team_plan team;   /* PXI_POLICY_TEAM */
    };
} pxi_plan;

/* Resolve a validated range policy (pxi_range_check passed) for a launch of @kind on a space of
 * @space kind with @nranks ranks (values < 1 are taken as 1; serial and device ignore it for
 * the partition). Pure, total on validated policies. */
pxi_range_plan pxi_plan_range(const px_range_policy *p, px_kernel_kind kind, int nranks,
                              pxi_plan_space space);

/* Resolve a validated MDRange policy (pxi_mdrange_check passed) for a launch of @kind (for or
 * reduce) on @space with @nranks ranks. Automatic tiles follow px_mdrange_auto_tile with @h (NULL:
 * the rule's defaults); a pool plan asks for at least 8 tiles per rank (h->min_tiles when that is
 * larger) so that both schedules have tiles to balance, a serial plan for none, a device plan for
 * h->min_tiles (the cuda space asks for blocks to fill its multiprocessors). The
 * policy's schedule applies to PXI_PLAN_POOL only. Pure, total on validated policies. */
pxi_md_plan pxi_plan_md(const px_mdrange_policy *p, px_kernel_kind kind, int nranks,
                        pxi_plan_space space, const pxi_md_hint *h);

/* Rank @rank's static block [*b, *e) (possibly empty, *b == *e), whole chunks, in rank order,
 * ranks differing by at most one chunk. 0 <= rank < nranks. Inline: a one-rank plan (serial,
 * a pool of one, a nested launch) is the whole range without a division; others take
 * pxi_plan_static_block_of. */
void pxi_plan_static_block_of(const pxi_range_plan *pl, int rank, int64_t *b, int64_t *e);
static inline void pxi_plan_static_block(const pxi_range_plan *pl, int rank, int64_t *b, int64_t *e)
{
    if (pl->nranks == 1) {
        *b = pl->begin;
        *e = pl->end;
        return;
    }
    pxi_plan_static_block_of(pl, rank, b, e);
}

/* Rank @rank's block of a scan [*b, *e): whole chunks in rank order, rank 0 taking 3 shares to
 * the others' 2 (it scans its block once, the others twice). Depends only on the plan. */
void pxi_plan_scan_block(const pxi_range_plan *pl, int rank, int64_t *b, int64_t *e);

/* The units [*u0, *u1) rank @rank claims first (its own share) in a dynamic plan. */
void pxi_plan_claims_of_rank(const pxi_range_plan *pl, int rank, int64_t *u0, int64_t *u1);

/* Unit @u's indices [*b, *e) in a dynamic plan, 0 <= u < nclaims. */
void pxi_plan_claim_bounds(const pxi_range_plan *pl, int64_t u, int64_t *b, int64_t *e);

/* End of the function call that starts at @b within a piece ending at @e (b < e): the next
 * call covers [b, pxi_plan_call_end(pl, b, e)). */
static inline int64_t pxi_plan_call_end(const pxi_range_plan *pl, int64_t b, int64_t e)
{
    return e - b > pl->call_chunk ? b + pl->call_chunk : e;
}

#endif
