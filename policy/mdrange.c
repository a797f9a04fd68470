/* policy/mdrange.c - MDRange policy validation, automatic tiles and tile arithmetic (see
 * policy/mdrange.h). */
#include "policy/mdrange.h"

#include <stdio.h>

#include "base/log.h"

px_mdrange_policy px_mdrange_tiled(int rank, const int64_t *lower, const int64_t *upper,
                                   const int64_t *tile)
{
    px_mdrange_policy p = {0};
    p.rank = upper ? rank : 0;
    p.iterate = PX_ITERATE_RIGHT;
    int n = (rank < 0) ? 0 : (rank > PX_MAX_RANK ? PX_MAX_RANK : rank);
    if (!upper)
        n = 0;
    for (int d = 0; d < n; ++d) {
        p.lower[d] = lower ? lower[d] : 0;
        p.upper[d] = upper[d];
        p.tile[d] = tile ? tile[d] : 0;
    }
    return p;
}

px_mdrange_policy px_mdrange(int rank, const int64_t *lower, const int64_t *upper)
{
    return px_mdrange_tiled(rank, lower, upper, NULL);
}

px_mdrange_policy px_mdrange_set_iterate(px_mdrange_policy p, px_iterate iterate)
{
    p.iterate = iterate;
    return p;
}

px_mdrange_policy px_mdrange_set_schedule(px_mdrange_policy p, px_schedule schedule)
{
    p.schedule = schedule;
    return p;
}

/* a * b for a, b >= 0 without overflow: 0 and *r set, or -1. */
static int mul_nonneg(int64_t a, int64_t b, int64_t *r)
{
    if (a != 0 && b > INT64_MAX / a)
        return -1;
    *r = a * b;
    return 0;
}

int pxi_mdrange_explain(const px_mdrange_policy *p, char *msg, size_t n)
{
    char scratch[1];
    if (!msg || n == 0) {
        msg = scratch;
        n = sizeof scratch;
    }
    msg[0] = '\0';
    if (p->rank < 2 || p->rank > PX_MAX_RANK) {
        snprintf(msg, n, "mdrange rank %d outside 2..%d", p->rank, PX_MAX_RANK);
        return PX_EINVAL;
    }
    if (p->iterate != PX_ITERATE_RIGHT && p->iterate != PX_ITERATE_LEFT) {
        snprintf(msg, n, "mdrange iterate %d is not PX_ITERATE_RIGHT or PX_ITERATE_LEFT",
                 (int)p->iterate);
        return PX_EINVAL;
    }
    if (p->schedule != PX_SCHEDULE_STATIC && p->schedule != PX_SCHEDULE_DYNAMIC) {
        snprintf(msg, n, "mdrange schedule %d is not PX_SCHEDULE_STATIC or PX_SCHEDULE_DYNAMIC",
                 (int)p->schedule);
        return PX_EINVAL;
    }
    for (int d = 0; d < p->rank; ++d) {
        if (p->lower[d] > p->upper[d]) {
            snprintf(msg, n, "mdrange dimension %d: lower %lld > upper %lld", d,
                     (long long)p->lower[d], (long long)p->upper[d]);
            return PX_EINVAL;
        }
        if (p->lower[d] < 0 && p->upper[d] > INT64_MAX + p->lower[d]) {
            snprintf(msg, n, "mdrange dimension %d: extent of [%lld, %lld) overflows int64", d,
                     (long long)p->lower[d], (long long)p->upper[d]);
            return PX_EINVAL;
        }
        if (p->tile[d] < 0) {
            snprintf(msg, n, "mdrange dimension %d: negative tile %lld", d, (long long)p->tile[d]);
            return PX_EINVAL;
        }
    }
    /* The product of the non-zero extents bounds every count a launch forms: points, tiles
     * (each tile count is at most its extent) and the partial products used to turn a tile
     * number into coordinates, also for a box that is empty through another dimension. */
    int64_t prod = 1;
    for (int d = 0; d < p->rank; ++d) {
        int64_t e = p->upper[d] - p->lower[d];
        if (e == 0)
            continue;
        if (mul_nonneg(prod, e, &prod) != 0) {
            snprintf(msg, n,
                     "mdrange dimension %d: the product of the extents up to it (extent %lld) "
                     "overflows int64",
                     d, (long long)e);
            return PX_EINVAL;
        }
    }
    return PX_OK;
}

int px_mdrange_validate(px_mdrange_policy p)
{
    return pxi_mdrange_explain(&p, NULL, 0);
}

int pxi_mdrange_check(const px_mdrange_policy *p, const char *what)
{
    char msg[192];
    int rc = pxi_mdrange_explain(p, msg, sizeof msg);
    if (rc != PX_OK)
        PXI_ERROR("%s: %s", what, msg);
    return rc;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

void px_mdrange_auto_tile(int rank, const int64_t *extent, px_iterate iterate, size_t elem_bytes,
                          size_t l2_bytes, size_t vector_bytes, int64_t min_tiles, int64_t *tile)
{
    if (rank < 1 || rank > PX_MAX_RANK || !extent || !tile)
        return;
    if (elem_bytes == 0)
        elem_bytes = 8;
    if (l2_bytes == 0)
        l2_bytes = (size_t)1 << 20;
    if (vector_bytes == 0)
        vector_bytes = 64;
    int64_t n[PX_MAX_RANK], t[PX_MAX_RANK];
    int fixed[PX_MAX_RANK];
    for (int d = 0; d < rank; ++d) {
        n[d] = extent[d] > 0 ? extent[d] : 0;
        int64_t cap = n[d] > 0 ? n[d] : 1;
        fixed[d] = tile[d] > 0;
        t[d] = fixed[d] ? (tile[d] < cap ? tile[d] : cap) : 0;
    }
    int f = (iterate == PX_ITERATE_LEFT) ? 0 : rank - 1;
    int step = (iterate == PX_ITERATE_LEFT) ? 1 : -1; /* from fast towards slow */

    int64_t budget = (int64_t)(l2_bytes / 2 / elem_bytes);
    if (budget < 1)
        budget = 1;
    int64_t vec = (int64_t)(vector_bytes / elem_bytes);
    if (vec < 1)
        vec = 1;
    int64_t line = (int64_t)(PXI_CACHE_LINE / elem_bytes);
    if (line < 1)
        line = 1;
    int64_t fast_floor = 4 * line; /* four cache lines of points */
    if (fast_floor < vec)
        fast_floor = vec;

    /* Explicit tiles count against the budget first. */
    int64_t used = 1;
    for (int d = 0; d < rank; ++d)
        if (fixed[d] && mul_nonneg(used, t[d], &used) != 0)
            used = INT64_MAX;
    int64_t left = budget / used;
    if (left < 1)
        left = 1;

    if (!fixed[f]) {
        int64_t cap = n[f] > 0 ? n[f] : 1;
        int64_t tf;
        if (cap <= left) {
            tf = cap;
        } else {
            tf = left / vec * vec;
            if (tf < fast_floor)
                tf = fast_floor;
            if (tf > cap)
                tf = cap;
        }
        t[f] = tf;
        left /= tf;
        if (left < 1)
            left = 1;
    }
    for (int d = f + step; d >= 0 && d < rank; d += step) {
        if (fixed[d])
            continue;
        int64_t cap = n[d] > 0 ? n[d] : 1;
        t[d] = cap < left ? cap : left;
        left /= t[d];
        if (left < 1)
            left = 1;
    }

    /* Enough tiles for the workers: halve the slowest automatic tile above 1, then the fastest
     * down to its floor. */
    if (min_tiles > 1) {
        for (;;) {
            int64_t total = 1;
            for (int d = 0; d < rank; ++d) {
                int64_t c = n[d] > 0 ? ceil_div(n[d], t[d]) : 0;
                if (mul_nonneg(total, c, &total) != 0)
                    total = INT64_MAX;
            }
            if (total == 0 || total >= min_tiles)
                break;
            int victim = -1;
            for (int d = (step > 0 ? rank - 1 : 0); d != f; d -= step)
                if (!fixed[d] && t[d] > 1) {
                    victim = d;
                    break;
                }
            if (victim < 0 && !fixed[f] && t[f] > fast_floor)
                victim = f;
            if (victim < 0)
                break;
            int64_t half = (t[victim] + 1) / 2;
            if (victim == f && half < fast_floor)
                half = fast_floor;
            if (half == t[victim])
                break;
            t[victim] = half;
        }
    }
    for (int d = 0; d < rank; ++d)
        tile[d] = t[d];
}

void pxi_mdrange_tiling_init(pxi_md_tiling *t, const px_mdrange_policy *p, const pxi_md_hint *h)
{
    PX_ASSERT(p->rank >= 2 && p->rank <= PX_MAX_RANK);
    static const pxi_md_hint none = {0, 0, 0, 0};
    if (!h)
        h = &none;
    int64_t ext[PX_MAX_RANK] = {0}, tile[PX_MAX_RANK] = {0};
    t->rank = p->rank;
    t->iterate = p->iterate;
    t->fastest = (p->iterate == PX_ITERATE_LEFT) ? 0 : p->rank - 1;
    for (int d = 0; d < p->rank; ++d) {
        ext[d] = p->upper[d] - p->lower[d];
        tile[d] = p->tile[d];
    }
    px_mdrange_auto_tile(p->rank, ext, p->iterate, h->elem_bytes, h->l2_bytes, h->vector_bytes,
                         h->min_tiles, tile);
    t->total = 1;
    t->points = 1;
    for (int d = 0; d < PX_MAX_RANK; ++d) {
        if (d >= p->rank) {
            t->lower[d] = t->upper[d] = 0;
            t->tile[d] = 1;
            t->ntiles[d] = 1;
            continue;
        }
        t->lower[d] = p->lower[d];
        t->upper[d] = p->upper[d];
        t->tile[d] = tile[d];
        t->ntiles[d] = ext[d] > 0 ? ceil_div(ext[d], tile[d]) : 0;
        /* Validation bounded the product of the non-zero extents, which bounds these. */
        t->total *= t->ntiles[d];
        t->points *= ext[d];
    }
}

void pxi_mdrange_tile_coords(const pxi_md_tiling *t, int64_t k, int64_t *coord)
{
    PX_ASSERT(k >= 0 && k < t->total);
    if (t->iterate == PX_ITERATE_LEFT) {
        for (int d = 0; d < t->rank; ++d) {
            coord[d] = k % t->ntiles[d];
            k /= t->ntiles[d];
        }
    } else {
        for (int d = t->rank - 1; d >= 0; --d) {
            coord[d] = k % t->ntiles[d];
            k /= t->ntiles[d];
        }
    }
}

void pxi_mdrange_coords_box(const pxi_md_tiling *t, const int64_t *coord, int64_t *lo, int64_t *hi)
{
    for (int d = 0; d < t->rank; ++d) {
        /* coord * tile < extent, so lo stays inside [lower, upper); clip without forming
         * lo + tile, which may overflow near INT64_MAX. */
        lo[d] = t->lower[d] + coord[d] * t->tile[d];
        hi[d] = (t->upper[d] - lo[d] > t->tile[d]) ? lo[d] + t->tile[d] : t->upper[d];
    }
}

void pxi_mdrange_tile_box(const pxi_md_tiling *t, int64_t k, int64_t *lo, int64_t *hi)
{
    int64_t c[PX_MAX_RANK];
    pxi_mdrange_tile_coords(t, k, c);
    pxi_mdrange_coords_box(t, c, lo, hi);
}

int pxi_mdrange_tile_next(const pxi_md_tiling *t, int64_t *coord, int64_t *lo, int64_t *hi)
{
    int step = (t->iterate == PX_ITERATE_LEFT) ? 1 : -1;
    int first = (t->iterate == PX_ITERATE_LEFT) ? 0 : t->rank - 1;
    int64_t c[PX_MAX_RANK];
    for (int d = 0; d < t->rank; ++d)
        c[d] = coord[d];
    int d = first;
    for (; d >= 0 && d < t->rank; d += step) {
        if (++c[d] < t->ntiles[d])
            break;
        c[d] = 0;
    }
    if (d < 0 || d >= t->rank)
        return 0; /* wrapped: coord was the last tile */
    for (int e = 0; e < t->rank; ++e)
        coord[e] = c[e];
    pxi_mdrange_coords_box(t, coord, lo, hi);
    return 1;
}

void pxi_mdrange_cuda_map(const pxi_md_tiling *t, int max_threads, pxi_md_cuda_map *m)
{
    int64_t budget = max_threads < 1 ? 1 : max_threads;
    int step = (t->iterate == PX_ITERATE_LEFT) ? 1 : -1;
    int d = t->fastest;
    for (int a = 0; a < 3; ++a, d += step) {
        if (d < 0 || d >= t->rank) {
            m->dim[a] = -1;
            m->block[a] = 1;
            continue;
        }
        m->dim[a] = d;
        int64_t b = t->tile[d] < budget ? t->tile[d] : budget;
        if (a == 0 && b >= 32)
            b = b / 32 * 32; /* whole warps on the unit-stride dimension */
        if (a == 2 && b > 64)
            b = 64; /* CUDA's limit on blockDim.z */
        if (b < 1)
            b = 1;
        m->block[a] = (unsigned)b;
        budget /= b;
        if (budget < 1)
            budget = 1;
    }
    int64_t gmax = INT32_MAX;
    m->grid = t->total < 1 ? 1 : (t->total < gmax ? t->total : gmax);
}
