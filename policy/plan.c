/* policy/plan.c - a launch's policy resolved once into the plan a backend executes (see
 * policy/plan.h). Pure functions: no allocation, no global state. */
#include "policy/plan.h"

#include "policy/range.h"

/* Out of line, so the common plan below saves no registers and stays a leaf. */
#if defined(__GNUC__)
#define PLAN_NOINLINE __attribute__((noinline))
#else
#define PLAN_NOINLINE
#endif

/* The chunked part of a range plan (an explicit static chunk, or any dynamic plan): @pl has
 * begin, end, nranks and dynamic set. */
PLAN_NOINLINE static void plan_chunks(pxi_range_plan *pl, const px_range_policy *p,
                                      px_kernel_kind kind, int64_t n)
{
    if (!pl->dynamic) {
        /* An explicit chunk is the most a call sees (functions may size scratch by it). */
        pl->chunk = pl->call_chunk = p->chunk_size;
        pl->nchunks = pxi_range_num_chunks(n, pl->chunk);
        return;
    }
    pl->chunk =
        p->chunk_size > 0 ? p->chunk_size : px_range_auto_chunk(n, pl->nranks, PX_SCHEDULE_DYNAMIC);
    pl->nchunks = pxi_range_num_chunks(n, pl->chunk);
    pl->call_chunk = pl->chunk;
    int64_t per = 1;
    if (kind == PX_KERNEL_REDUCE && pl->nchunks > PXI_PLAN_MAX_UNITS)
        per = pl->nchunks / PXI_PLAN_MAX_UNITS + (pl->nchunks % PXI_PLAN_MAX_UNITS != 0);
    /* per * chunk <= about n / PXI_PLAN_MAX_UNITS + chunk: no overflow. */
    pl->claim = pl->chunk * per;
    pl->nclaims = pxi_range_num_chunks(n, pl->claim);
}

pxi_range_plan pxi_plan_range(const px_range_policy *p, px_kernel_kind kind, int nranks,
                              pxi_plan_space space)
{
    pxi_range_plan pl = {.begin = p->begin, .end = p->end, .nranks = nranks < 1 ? 1 : nranks};
    int64_t n = p->end - p->begin;
    if (space == PXI_PLAN_DEVICE) {
        pl.chunk = pl.call_chunk = 1;
        pl.nchunks = n;
        return pl;
    }
    if (space == PXI_PLAN_SERIAL)
        pl.nranks = 1;
    /* Scans need each rank to own its block in both passes: always static. Serial has no one to
     * share claims with. */
    pl.dynamic =
        space == PXI_PLAN_POOL && p->schedule == PX_SCHEDULE_DYNAMIC && kind != PX_KERNEL_SCAN;
    if (pl.dynamic || p->chunk_size > 0) {
        plan_chunks(&pl, p, kind, n);
        return pl;
    }
    /* The common launch (static, automatic chunk) makes no call and no division: the automatic
     * static chunk is px_range_auto_chunk's one index (blocks balanced to one index;
     * tests/check_policy.c holds the two to the same answer), and a rank calls the function
     * once for its whole block. */
    pl.chunk = 1;
    pl.nchunks = n;
    pl.call_chunk = INT64_MAX;
    return pl;
}

void pxi_plan_static_block_of(const pxi_range_plan *pl, int rank, int64_t *b, int64_t *e)
{
    /* The plan's chunk count, not recomputed (one division fewer than pxi_range_static_block). */
    int64_t k0, k1, t;
    pxi_range_static_chunks(pl->nchunks, rank, pl->nranks, &k0, &k1);
    if (k0 >= k1) {
        *b = *e = k0 >= pl->nchunks ? pl->end : pl->begin + k0 * pl->chunk;
        return;
    }
    pxi_range_chunk_bounds(pl->begin, pl->end, pl->chunk, k0, b, &t);
    pxi_range_chunk_bounds(pl->begin, pl->end, pl->chunk, k1 - 1, &t, e);
}

void pxi_plan_scan_block(const pxi_range_plan *pl, int rank, int64_t *b, int64_t *e)
{
    int64_t nch = pl->nchunks;
    int p = pl->nranks;
    int64_t w = 3 + 2 * (int64_t)(p - 1);
    int64_t k0 = nch / w * 3 + nch % w * 3 / w, ka, kb;
    if (p == 1) {
        ka = 0;
        kb = nch;
    } else if (rank == 0) {
        ka = 0;
        kb = k0;
    } else {
        pxi_range_static_chunks(nch - k0, rank - 1, p - 1, &ka, &kb);
        ka += k0;
        kb += k0;
    }
    int64_t t;
    if (ka == kb) {
        *b = *e = pl->begin;
        return;
    }
    pxi_range_chunk_bounds(pl->begin, pl->end, pl->chunk, ka, b, &t);
    pxi_range_chunk_bounds(pl->begin, pl->end, pl->chunk, kb - 1, &t, e);
}

void pxi_plan_claims_of_rank(const pxi_range_plan *pl, int rank, int64_t *u0, int64_t *u1)
{
    pxi_range_static_chunks(pl->nclaims, rank, pl->nranks, u0, u1);
}

void pxi_plan_claim_bounds(const pxi_range_plan *pl, int64_t u, int64_t *b, int64_t *e)
{
    pxi_range_chunk_bounds(pl->begin, pl->end, pl->claim, u, b, e);
}

pxi_team_plan pxi_plan_team(const px_team_policy *p, px_kernel_kind kind, int nranks,
                            const pxi_team_limits *lim, pxi_plan_space space)
{
    pxi_team_plan pl = {.league_size = p->league_size};
    int n = nranks < 1 ? 1 : nranks;
    pl.team_size = p->team_size > 0 ? p->team_size : lim->default_team_size;
    if (pl.team_size < 1)
        pl.team_size = 1;
    pl.vector_length = p->vector_length > 0 ? p->vector_length : lim->default_vector_length;
    if (pl.vector_length < 1)
        pl.vector_length = 1;
    pl.scratch_team = p->scratch_per_team ? (p->scratch_per_team + 63) & ~(size_t)63 : 0;
    pl.scratch_thread = p->scratch_per_thread ? (p->scratch_per_thread + 63) & ~(size_t)63 : 0;
    /* Validated: scratch_group fits max_scratch, so no overflow here. */
    pl.scratch_group = pl.scratch_team + (size_t)pl.team_size * pl.scratch_thread;
    if (space != PXI_PLAN_POOL) {
        pl.ngroups = 1;
        return pl;
    }
    pl.ngroups = n / pl.team_size;
    if (pl.ngroups < 1)
        pl.ngroups = 1;
    pl.dynamic = p->schedule == PX_SCHEDULE_DYNAMIC && pl.ngroups > 1 && pl.league_size > 0;
    if (!pl.dynamic)
        return pl;
    int64_t c = pl.league_size / (8 * (int64_t)pl.ngroups);
    if (c < 1)
        c = 1;
    int64_t runs = pxi_range_num_chunks(pl.league_size, c);
    if (kind == PX_KERNEL_REDUCE && runs > PXI_PLAN_MAX_UNITS)
        c = pl.league_size / PXI_PLAN_MAX_UNITS + (pl.league_size % PXI_PLAN_MAX_UNITS != 0);
    pl.claim = c;
    pl.nclaims = pxi_range_num_chunks(pl.league_size, c);
    return pl;
}

void pxi_plan_team_block(const pxi_team_plan *pl, int g, int64_t *b, int64_t *e)
{
    pxi_range_static_block(0, pl->league_size, 1, g, pl->ngroups, b, e);
}

void pxi_plan_team_claim_bounds(const pxi_team_plan *pl, int64_t u, int64_t *b, int64_t *e)
{
    pxi_range_chunk_bounds(0, pl->league_size, pl->claim, u, b, e);
}

pxi_md_plan pxi_plan_md(const px_mdrange_policy *p, px_kernel_kind kind, int nranks,
                        pxi_plan_space space, const pxi_md_hint *h)
{
    pxi_md_plan pl;
    pxi_md_hint hint = {0};
    if (h)
        hint = *h;
    if (nranks < 1)
        nranks = 1;
    if (space == PXI_PLAN_POOL) {
        int64_t want = 8 * (int64_t)nranks;
        if (hint.min_tiles < want)
            hint.min_tiles = want;
    } else if (space == PXI_PLAN_SERIAL) {
        hint.min_tiles = 0;
    }
    pxi_mdrange_tiling_init(&pl.tiling, p, &hint);
    /* Tile numbers as a 1-D range: static blocks of one-tile chunks, or dynamic claims. */
    px_range_policy tr = px_range(0, pl.tiling.total);
    tr.schedule = space == PXI_PLAN_POOL ? p->schedule : PX_SCHEDULE_STATIC;
    tr.chunk_size = space == PXI_PLAN_DEVICE ? 0 : (tr.schedule == PX_SCHEDULE_STATIC ? 1 : 0);
    pl.tiles = pxi_plan_range(&tr, kind, nranks, space);
    return pl;
}
