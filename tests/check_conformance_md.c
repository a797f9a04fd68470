/*
 * tests/check_conformance_md.c - MDRange launch semantics (parex/mdrange.h, DESIGN.md section 6)
 * for any host space, like tests/check_conformance.c for 1-D launches.
 *
 * The space under test comes from PX_TEST_SPACE (serial | threads; default serial) and its
 * thread count from PX_NUM_THREADS (tests/conformance_md.cmake registers one ctest per space and
 * thread count). Every test walks one grid of boxes: ranks 2..6, empty boxes, boxes of one
 * point, negative lower bounds, automatic, unit, odd and oversized tiles, both iterate orders
 * and both schedules; host function tiles and PX_FOR_<N>D / PX_REDUCE_<N>D kernels.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "px_test.h"

static px_space *space;
static const char *space_name;

static void setup(void)
{
    px_test_setup();
    space_name = getenv("PX_TEST_SPACE");
    if (!space_name || !*space_name)
        space_name = "serial";
    space = px_space_by_name(space_name);
    if (!space)
        ck_abort_msg("execution space '%s' (PX_TEST_SPACE) is not available in this build",
                     space_name);
}

static void teardown(void)
{
    px_test_teardown();
}

/* ---- the grid of boxes ------------------------------------------------------------------------
 */

typedef struct {
    int rank;
    int64_t lower[PX_MAX_RANK], upper[PX_MAX_RANK], tile[PX_MAX_RANK];
} box_case;

static const box_case boxes[] = {
    {2, {0, 0}, {17, 23}, {0, 0}},
    {2, {0, 0}, {17, 23}, {3, 5}},
    {2, {-5, -7}, {6, 4}, {4, 1}},
    {2, {0, 0}, {1, 1}, {0, 0}},      /* one point */
    {2, {3, 0}, {3, 10}, {0, 0}},     /* empty */
    {2, {0, 0}, {40, 1}, {100, 100}}, /* tile larger than the box */
    {2, {0, 0}, {1, 333}, {1, 7}},
    {3, {0, 0, 0}, {9, 10, 11}, {0, 0, 0}},
    {3, {-2, 1, -9}, {5, 6, 0}, {2, 3, 4}},
    {3, {0, 0, 0}, {8, 0, 8}, {0, 0, 0}}, /* empty in the middle */
    {3, {1, 1, 1}, {2, 2, 2}, {5, 5, 5}}, /* one point */
    {4, {0, 0, 0, 0}, {3, 4, 5, 6}, {0, 0, 0, 0}},
    {4, {-1, 0, -1, 0}, {3, 4, 5, 6}, {2, 3, 1, 5}},
    {5, {0, 0, 0, 0, 0}, {3, 2, 4, 3, 5}, {0, 0, 0, 0, 0}},
    {5, {0, -3, 0, 0, 0}, {3, 2, 4, 3, 5}, {1, 2, 3, 2, 2}},
    {6, {0, 0, 0, 0, 0, 0}, {2, 3, 2, 3, 2, 5}, {0, 0, 0, 0, 0, 0}},
    {6, {0, 0, -1, 0, 0, 0}, {2, 3, 2, 3, 2, 5}, {1, 2, 1, 2, 1, 3}},
    {6, {0, 0, 0, 0, 0, 0}, {2, 3, 2, 3, 0, 5}, {0, 0, 0, 0, 0, 0}}, /* empty */
};
#define N_BOXES ((int)(sizeof boxes / sizeof boxes[0]))
/* Every (box, iterate, schedule) combination. */
#define N_POLICIES (N_BOXES * 4)

static px_mdrange_policy grid_policy(int k)
{
    const box_case *b = &boxes[k / 4];
    px_mdrange_policy p = px_mdrange_tiled(b->rank, b->lower, b->upper, b->tile);
    p = px_mdrange_set_iterate(p, (k & 1) ? PX_ITERATE_LEFT : PX_ITERATE_RIGHT);
    return px_mdrange_set_schedule(p, (k & 2) ? PX_SCHEDULE_DYNAMIC : PX_SCHEDULE_STATIC);
}

static int64_t npoints(const px_mdrange_policy *p)
{
    int64_t n = 1;
    for (int d = 0; d < p->rank; ++d)
        n *= p->upper[d] - p->lower[d];
    return n;
}

/* Row-major linear index of a point relative to the box. */
static int64_t lin(const px_mdrange_policy *p, const int64_t *x)
{
    int64_t l = 0;
    for (int d = 0; d < p->rank; ++d)
        l = l * (p->upper[d] - p->lower[d]) + (x[d] - p->lower[d]);
    return l;
}

#define POLICY_FMT "box %d (rank %d), %s, %s on %s"
#define POLICY_ARGS(k, p)                                                                          \
    (k) / 4, (p).rank, (p).iterate == PX_ITERATE_LEFT ? "left" : "right",                          \
        (p).schedule == PX_SCHEDULE_DYNAMIC ? "dynamic" : "static", space_name

/* Step x (starting at lo) to the next point of [lo, hi) in the order of @it; 0 after the last. */
static int next_point(int rank, px_iterate it, const int64_t *lo, const int64_t *hi, int64_t *x)
{
    for (int s = 0; s < rank; ++s) {
        int d = it == PX_ITERATE_RIGHT ? rank - 1 - s : s;
        if (++x[d] < hi[d])
            return 1;
        x[d] = lo[d];
    }
    return 0;
}

/* ---- parallel_for: every point once ------------------------------------------------------------
 */

typedef struct {
    const px_mdrange_policy *p;
    atomic_int *count;
    atomic_int bad_tile; /* a tile outside the box, empty, or larger than an explicit tile */
    atomic_int calls;
} visit_ctx;

static void visit_tile(const int64_t *lo, const int64_t *hi, void *vctx)
{
    visit_ctx *c = vctx;
    const px_mdrange_policy *p = c->p;
    atomic_fetch_add_explicit(&c->calls, 1, memory_order_relaxed);
    for (int d = 0; d < p->rank; ++d) {
        int too_big = p->tile[d] > 0 && hi[d] - lo[d] > p->tile[d];
        if (lo[d] < p->lower[d] || hi[d] > p->upper[d] || lo[d] >= hi[d] || too_big) {
            atomic_fetch_add_explicit(&c->bad_tile, 1, memory_order_relaxed);
            return;
        }
    }
    int64_t x[PX_MAX_RANK];
    memcpy(x, lo, sizeof(int64_t) * (size_t)p->rank);
    do
        atomic_fetch_add_explicit(&c->count[lin(p, x)], 1, memory_order_relaxed);
    while (next_point(p->rank, PX_ITERATE_RIGHT, lo, hi, x));
}

static void check_counts(int k, const px_mdrange_policy *p, atomic_int *count, int64_t n,
                         const char *what)
{
    for (int64_t i = 0; i < n; ++i) {
        int v = atomic_load(&count[i]);
        ck_assert_msg(v == 1, "%s: point %lld visited %d times, " POLICY_FMT, what, (long long)i, v,
                      POLICY_ARGS(k, *p));
    }
}

START_TEST(test_md_for_fn_visits_every_point_once)
{
    for (int k = 0; k < N_POLICIES; ++k) {
        px_mdrange_policy p = grid_policy(k);
        ck_assert_int_eq(px_mdrange_validate(p), PX_OK);
        int64_t n = npoints(&p);
        atomic_int *count = calloc((size_t)(n > 0 ? n : 1), sizeof *count);
        ck_assert_ptr_nonnull(count);
        visit_ctx c = {.p = &p, .count = count};
        ck_assert_int_eq(px_parallel_for_md_fn(space, "visit", p, visit_tile, &c), PX_OK);
        ck_assert_int_eq(atomic_load(&c.bad_tile), 0);
        if (n == 0)
            ck_assert_msg(atomic_load(&c.calls) == 0, "empty box ran %d tiles, " POLICY_FMT,
                          atomic_load(&c.calls), POLICY_ARGS(k, p));
        check_counts(k, &p, count, n, "_fn");
        free(count);
    }
}
END_TEST

/* ---- kernels of every rank: every point once ---------------------------------------------------
 */

typedef struct {
    atomic_int *count;
    int64_t lower[PX_MAX_RANK], ext[PX_MAX_RANK];
} count_args;

#define LIN2(a, i, j)             (((i) - (a)->lower[0]) * (a)->ext[1] + ((j) - (a)->lower[1]))
#define LIN3(a, i, j, k)          (LIN2(a, i, j) * (a)->ext[2] + ((k) - (a)->lower[2]))
#define LIN4(a, i, j, k, l)       (LIN3(a, i, j, k) * (a)->ext[3] + ((l) - (a)->lower[3]))
#define LIN5(a, i, j, k, l, m)    (LIN4(a, i, j, k, l) * (a)->ext[4] + ((m) - (a)->lower[4]))
#define LIN6(a, i, j, k, l, m, o) (LIN5(a, i, j, k, l, m) * (a)->ext[5] + ((o) - (a)->lower[5]))

PX_FOR_2D(k_count2, count_args, i, j, a)
{
    atomic_fetch_add_explicit(&a->count[LIN2(a, i, j)], 1, memory_order_relaxed);
}
PX_FOR_3D(k_count3, count_args, i, j, k, a)
{
    atomic_fetch_add_explicit(&a->count[LIN3(a, i, j, k)], 1, memory_order_relaxed);
}
PX_FOR_4D(k_count4, count_args, i, j, k, l, a)
{
    atomic_fetch_add_explicit(&a->count[LIN4(a, i, j, k, l)], 1, memory_order_relaxed);
}
PX_FOR_5D(k_count5, count_args, i, j, k, l, m, a)
{
    atomic_fetch_add_explicit(&a->count[LIN5(a, i, j, k, l, m)], 1, memory_order_relaxed);
}
PX_FOR_6D(k_count6, count_args, i, j, k, l, m, o, a)
{
    atomic_fetch_add_explicit(&a->count[LIN6(a, i, j, k, l, m, o)], 1, memory_order_relaxed);
}
static const px_kernel *const count_kernels[7] = {NULL,      NULL,      &k_count2, &k_count3,
                                                  &k_count4, &k_count5, &k_count6};

START_TEST(test_md_for_kernels_of_every_rank_visit_every_point_once)
{
    for (int k = 0; k < N_POLICIES; ++k) {
        px_mdrange_policy p = grid_policy(k);
        int64_t n = npoints(&p);
        atomic_int *count = calloc((size_t)(n > 0 ? n : 1), sizeof *count);
        ck_assert_ptr_nonnull(count);
        count_args a = {.count = count};
        for (int d = 0; d < p.rank; ++d) {
            a.lower[d] = p.lower[d];
            a.ext[d] = p.upper[d] - p.lower[d];
        }
        ck_assert_int_eq(px_parallel_for_md(space, NULL, p, count_kernels[p.rank], &a, sizeof a),
                         PX_OK);
        check_counts(k, &p, count, n, "PX_FOR_<N>D");
        free(count);
    }
}
END_TEST

/* Inside a tile the kernel's loop nest follows the iterate order: with one rank, the visit
 * sequence is the tiles in tile order, each walked with the fastest dimension innermost. */
typedef struct {
    int64_t *seq; /* visit number per point */
    int64_t *next;
    int64_t lower[2], ext[2];
} order_args;

PX_FOR_2D(k_order2, order_args, i, j, a)
{
    a->seq[LIN2(a, i, j)] = (*a->next)++;
}

/* The tiles of a for launch, recorded in call order (one rank: tile order). */
typedef struct {
    int rank;
    int64_t n;
    int64_t lo[4096][PX_MAX_RANK], hi[4096][PX_MAX_RANK];
    atomic_llong ntiles;
} tile_log;

static void log_tile(const int64_t *lo, const int64_t *hi, void *vctx)
{
    tile_log *t = vctx;
    long long k = atomic_fetch_add_explicit(&t->ntiles, 1, memory_order_relaxed);
    if (k < 4096) {
        memcpy(t->lo[k], lo, sizeof(int64_t) * (size_t)t->rank);
        memcpy(t->hi[k], hi, sizeof(int64_t) * (size_t)t->rank);
    }
}

START_TEST(test_md_kernel_walks_each_tile_in_the_iterate_order_with_one_rank)
{
    if (px_space_concurrency(space) != 1)
        return; /* the visit sequence is only defined for one rank */
    for (int it = 0; it < 2; ++it) {
        int64_t lower[2] = {-3, 2}, upper[2] = {10, 19}, tile[2] = {4, 5};
        px_mdrange_policy p = px_mdrange_tiled(2, lower, upper, tile);
        p = px_mdrange_set_iterate(p, it ? PX_ITERATE_LEFT : PX_ITERATE_RIGHT);
        int64_t n = npoints(&p);
        int64_t *seq = calloc((size_t)n, sizeof *seq), next = 0;
        ck_assert_ptr_nonnull(seq);
        order_args a = {seq, &next, {lower[0], lower[1]}, {13, 17}};
        ck_assert_int_eq(px_parallel_for_md(space, "order", p, &k_order2, &a, sizeof a), PX_OK);
        tile_log *tl = calloc(1, sizeof *tl);
        ck_assert_ptr_nonnull(tl);
        tl->rank = 2;
        ck_assert_int_eq(px_parallel_for_md_fn(space, "tiles", p, log_tile, tl), PX_OK);
        int64_t want = 0;
        /* Tiles in tile order: the fastest tile coordinate is the iterate order's. */
        for (long long t = 0; t < atomic_load(&tl->ntiles); ++t) {
            if (t > 0) {
                int f = it ? 0 : 1, s = 1 - f;
                int later = tl->lo[t][s] > tl->lo[t - 1][s] ||
                            (tl->lo[t][s] == tl->lo[t - 1][s] && tl->lo[t][f] > tl->lo[t - 1][f]);
                ck_assert_msg(later, "tile %lld is not after tile %lld in %s tile order", t, t - 1,
                              it ? "left" : "right");
            }
            int64_t x[2] = {tl->lo[t][0], tl->lo[t][1]};
            do
                ck_assert_int_eq(seq[lin(&p, x)], want++);
            while (next_point(2, p.iterate, tl->lo[t], tl->hi[t], x));
        }
        ck_assert_int_eq(want, n);
        free(tl);
        free(seq);
    }
}
END_TEST

/* ---- reductions ---------------------------------------------------------------------------------
 */

/* A 2x2 matrix product with wrapping 64-bit arithmetic: associative, exact, not commutative. */
typedef struct {
    uint64_t m[4];
} mat2;

static void mat2_identity(void *v)
{
    *(mat2 *)v = (mat2){{1, 0, 0, 1}};
}
static void mat2_join(void *dst, const void *src)
{
    mat2 *a = dst;
    const mat2 *b = src;
    mat2 r = {{a->m[0] * b->m[0] + a->m[1] * b->m[2], a->m[0] * b->m[1] + a->m[1] * b->m[3],
               a->m[2] * b->m[0] + a->m[3] * b->m[2], a->m[2] * b->m[1] + a->m[3] * b->m[3]}};
    *a = r;
}
static const px_reducer mat2_reducer = PX_REDUCER_INIT(mat2, mat2_identity, mat2_join, "mat2");

/* The matrix of a point: depends on every coordinate, so any reordering shows. */
static mat2 point_mat(int rank, const int64_t *x)
{
    uint64_t h = 1469598103934665603u;
    for (int d = 0; d < rank; ++d)
        h = (h ^ (uint64_t)(x[d] + 1000)) * 1099511628211u;
    return (mat2){{1, h & 0xff, (h >> 8) & 0x3, 1 + ((h >> 16) & 0x1)}};
}

typedef struct {
    const px_mdrange_policy *p;
} fold_ctx;

/* Fold a tile's points in the iterate order into a mat2. */
static void mat2_tile(const int64_t *lo, const int64_t *hi, void *vctx, void *acc)
{
    const px_mdrange_policy *p = ((fold_ctx *)vctx)->p;
    int64_t x[PX_MAX_RANK];
    memcpy(x, lo, sizeof(int64_t) * (size_t)p->rank);
    do {
        mat2 m = point_mat(p->rank, x);
        mat2_join(acc, &m);
    } while (next_point(p->rank, p->iterate, lo, hi, x));
}

/* Tile order comparison of two tile boxes (by their lower corners). */
static const px_mdrange_policy *sort_policy;
static int tile_cmp(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    const px_mdrange_policy *p = sort_policy;
    for (int s = 0; s < p->rank; ++s) {
        int d = p->iterate == PX_ITERATE_RIGHT ? s : p->rank - 1 - s;
        if (x[d] != y[d])
            return x[d] < y[d] ? -1 : 1;
    }
    return 0;
}

START_TEST(test_md_reduce_with_noncommutative_join_equals_the_lexicographic_tile_fold)
{
    ck_assert_int_eq(px_reducer_validate(&mat2_reducer), PX_OK);
    for (int k = 0; k < N_POLICIES; ++k) {
        px_mdrange_policy p = grid_policy(k);
        /* The tiles this space cuts the box into (a for launch with the same policy has the same
         * tiles), sorted into tile order; the expected value folds them in that order. */
        tile_log *tl = calloc(1, sizeof *tl);
        ck_assert_ptr_nonnull(tl);
        tl->rank = p.rank;
        ck_assert_int_eq(px_parallel_for_md_fn(space, "tiles", p, log_tile, tl), PX_OK);
        long long nt = atomic_load(&tl->ntiles);
        ck_assert_int_le(nt, 4096);
        /* Pair each tile's lo and hi for sorting. */
        int64_t(*pairs)[2 * PX_MAX_RANK] = calloc((size_t)(nt > 0 ? nt : 1), sizeof *pairs);
        ck_assert_ptr_nonnull(pairs);
        for (long long t = 0; t < nt; ++t) {
            memcpy(pairs[t], tl->lo[t], sizeof(int64_t) * PX_MAX_RANK);
            memcpy(pairs[t] + PX_MAX_RANK, tl->hi[t], sizeof(int64_t) * PX_MAX_RANK);
        }
        sort_policy = &p;
        qsort(pairs, (size_t)nt, sizeof *pairs, tile_cmp);
        fold_ctx fc = {&p};
        mat2 want;
        mat2_identity(&want);
        for (long long t = 0; t < nt; ++t)
            mat2_tile(pairs[t], pairs[t] + PX_MAX_RANK, &fc, &want);
        mat2 got;
        memset(&got, 0xA5, sizeof got);
        ck_assert_int_eq(
            px_parallel_reduce_md_fn(space, "mat2", p, mat2_tile, &fc, &mat2_reducer, &got), PX_OK);
        ck_assert_msg(memcmp(&got, &want, sizeof want) == 0,
                      "matrix product is not the tile-order fold, " POLICY_FMT, POLICY_ARGS(k, p));
        free(pairs);
        free(tl);
    }
}
END_TEST

static double point_value(int rank, const int64_t *x)
{
    double v = 0.1;
    for (int d = 0; d < rank; ++d)
        v = v * 1.37 + (double)x[d] * 0.013;
    return v * v;
}

static void f64_tile(const int64_t *lo, const int64_t *hi, void *vctx, void *acc)
{
    const px_mdrange_policy *p = ((fold_ctx *)vctx)->p;
    int64_t x[PX_MAX_RANK];
    memcpy(x, lo, sizeof(int64_t) * (size_t)p->rank);
    double s = *(double *)acc;
    do
        s += point_value(p->rank, x);
    while (next_point(p->rank, p->iterate, lo, hi, x));
    *(double *)acc = s;
}

START_TEST(test_md_float_reduce_is_bitwise_repeatable_and_close_to_the_sum)
{
    for (int k = 0; k < N_POLICIES; ++k) {
        px_mdrange_policy p = grid_policy(k);
        fold_ctx fc = {&p};
        double first = -1.0;
        for (int rep = 0; rep < 5; ++rep) {
            double r = -7.0;
            ck_assert_int_eq(
                px_parallel_reduce_md_fn(space, "f64", p, f64_tile, &fc, &px_sum_f64, &r), PX_OK);
            if (rep == 0)
                first = r;
            else
                ck_assert_msg(memcmp(&r, &first, sizeof r) == 0,
                              "run %d gave %.17g, run 0 %.17g, " POLICY_FMT, rep, r, first,
                              POLICY_ARGS(k, p));
        }
        /* Against a plain sequential sum, up to rounding. */
        double want = 0.0;
        if (npoints(&p) > 0) {
            int64_t x[PX_MAX_RANK];
            memcpy(x, p.lower, sizeof x);
            do
                want += point_value(p.rank, x);
            while (next_point(p.rank, PX_ITERATE_RIGHT, p.lower, p.upper, x));
        }
        ck_assert_msg(first == want ||
                          ((first - want) / want < 1e-12 && (want - first) / want < 1e-12),
                      "sum %.17g, sequential %.17g, " POLICY_FMT, first, want, POLICY_ARGS(k, p));
    }
}
END_TEST

/* PX_REDUCE_<N>D: the same fold as a host function looping the tile in the iterate order, so the
 * kernel and the function agree bitwise. */
typedef struct {
    int rank;
} val_args;

PX_REDUCE_2D(k_val2, val_args, double, i, j, a, acc)
{
    int64_t x[2] = {i, j};
    *acc += point_value(a->rank, x);
}
PX_REDUCE_3D(k_val3, val_args, double, i, j, k, a, acc)
{
    int64_t x[3] = {i, j, k};
    *acc += point_value(a->rank, x);
}
PX_REDUCE_4D(k_val4, val_args, double, i, j, k, l, a, acc)
{
    int64_t x[4] = {i, j, k, l};
    *acc += point_value(a->rank, x);
}
PX_REDUCE_5D(k_val5, val_args, double, i, j, k, l, m, a, acc)
{
    int64_t x[5] = {i, j, k, l, m};
    *acc += point_value(a->rank, x);
}
PX_REDUCE_6D(k_val6, val_args, double, i, j, k, l, m, o, a, acc)
{
    int64_t x[6] = {i, j, k, l, m, o};
    *acc += point_value(a->rank, x);
}
static const px_kernel *const val_kernels[7] = {NULL,    NULL,    &k_val2, &k_val3,
                                                &k_val4, &k_val5, &k_val6};

START_TEST(test_md_reduce_kernels_match_the_host_function_bitwise)
{
    for (int k = 0; k < N_POLICIES; ++k) {
        px_mdrange_policy p = grid_policy(k);
        fold_ctx fc = {&p};
        double want = -1.0, got = -2.0;
        ck_assert_int_eq(
            px_parallel_reduce_md_fn(space, "f64", p, f64_tile, &fc, &px_sum_f64, &want), PX_OK);
        val_args a = {p.rank};
        ck_assert_int_eq(px_parallel_reduce_md(space, NULL, p, val_kernels[p.rank], &a, sizeof a,
                                               &px_sum_f64, &got),
                         PX_OK);
        ck_assert_msg(memcmp(&got, &want, sizeof got) == 0,
                      "PX_REDUCE_%dD gave %.17g, the host function %.17g, " POLICY_FMT, p.rank, got,
                      want, POLICY_ARGS(k, p));
        if (npoints(&p) == 0)
            ck_assert(got == 0.0); /* the identity, overwritten */
    }
}
END_TEST

/* ---- views: the default order follows the layout -----------------------------------------------
 */

typedef struct {
    px_view v;
} view_args;

PX_FOR_3D(k_view_fill, view_args, i, j, k, a)
{
    PX_VIEW_AT3(a->v, double, i, j, k) = (double)(i * 10000 + j * 100 + k);
}

START_TEST(test_md_over_a_view_box_fills_every_element_in_both_layouts)
{
    for (int lay = 0; lay < 2; ++lay) {
        px_view v;
        int64_t ext[3] = {7, 9, 5};
        ck_assert_int_eq(px_view_alloc(&v, space, "mdview", sizeof(double),
                                       lay ? PX_LAYOUT_LEFT : PX_LAYOUT_RIGHT, 3, ext),
                         PX_OK);
        px_mdrange_policy p = px_view_mdrange(&v);
        ck_assert_int_eq(p.iterate, lay ? PX_ITERATE_LEFT : PX_ITERATE_RIGHT);
        view_args a = {v};
        ck_assert_int_eq(px_parallel_for_md(space, "fill", p, &k_view_fill, &a, sizeof a), PX_OK);
        for (int64_t i = 0; i < 7; ++i)
            for (int64_t j = 0; j < 9; ++j)
                for (int64_t k = 0; k < 5; ++k)
                    ck_assert(PX_VIEW_AT3(v, double, i, j, k) == (double)(i * 10000 + j * 100 + k));
        ck_assert_int_eq(px_view_free(&v), PX_OK);
    }
}
END_TEST

/* ---- bad input
 * ----------------------------------------------------------------------------------- */

static void never_tile(const int64_t *lo, const int64_t *hi, void *ctx)
{
    (void)lo;
    (void)hi;
    atomic_fetch_add((atomic_int *)ctx, 1);
}

START_TEST(test_md_bad_policies_are_einval_with_a_message_naming_the_dimension)
{
    px_test_log_capture();
    int64_t lo[PX_MAX_RANK] = {0}, hi[PX_MAX_RANK] = {4, 4, 4, 4, 4, 4};
    atomic_int calls = 0;
    struct {
        px_mdrange_policy p;
        const char *msg;
    } bad[8];
    bad[0].p = px_mdrange(1, lo, hi);
    bad[0].msg = "rank 1 outside";
    bad[1].p = px_mdrange(7, lo, hi);
    bad[1].msg = "rank 7 outside";
    int64_t lo2[2] = {0, 5}, hi2[2] = {3, 4};
    bad[2].p = px_mdrange(2, lo2, hi2);
    bad[2].msg = "dimension 1: lower 5 > upper 4";
    int64_t tile[3] = {1, -2, 0};
    bad[3].p = px_mdrange_tiled(3, lo, hi, tile);
    bad[3].msg = "dimension 1: negative tile";
    int64_t big[3] = {INT64_MAX / 2, 4, 4};
    bad[4].p = px_mdrange(3, NULL, big);
    bad[4].msg = "overflows int64";
    int64_t neg[2] = {INT64_MIN, 0}, one[2] = {1, 1};
    bad[5].p = px_mdrange(2, neg, one);
    bad[5].msg = "dimension 0: extent";
    bad[6].p = px_mdrange_set_iterate(px_mdrange(2, lo, hi), (px_iterate)3);
    bad[6].msg = "iterate 3";
    bad[7].p = px_mdrange_set_schedule(px_mdrange(2, lo, hi), (px_schedule)9);
    bad[7].msg = "schedule 9";
    for (int b = 0; b < 8; ++b) {
        px_test_log_clear();
        ck_assert_int_eq(px_parallel_for_md_fn(space, "badmd", bad[b].p, never_tile, &calls),
                         PX_EINVAL);
        ck_assert_msg(px_test_log_contains(bad[b].msg), "case %d: log lacks '%s': %s", b,
                      bad[b].msg, px_test_log_text());
        ck_assert(px_test_log_contains("badmd"));
        double r = 3.0;
        ck_assert_int_eq(
            px_parallel_reduce_md_fn(space, "badmd", bad[b].p, f64_tile, NULL, &px_sum_f64, &r),
            PX_EINVAL);
        ck_assert(r == 3.0); /* untouched on failure */
    }
    ck_assert_int_eq(atomic_load(&calls), 0);
}
END_TEST

START_TEST(test_md_kernel_rank_must_match_the_policy_rank)
{
    px_test_log_capture();
    int64_t hi[3] = {4, 4, 4};
    count_args a = {0};
    ck_assert_int_eq(
        px_parallel_for_md(space, "r", px_mdrange(2, NULL, hi), &k_count3, &a, sizeof a),
        PX_EINVAL);
    ck_assert(px_test_log_contains("has rank 3 but the MDRange policy has rank 2"));
    px_test_log_clear();
    val_args va = {2};
    double r = 0;
    ck_assert_int_eq(px_parallel_reduce_md(space, "r", px_mdrange(3, NULL, hi), &k_val2, &va,
                                           sizeof va, &px_sum_f64, &r),
                     PX_EINVAL);
    ck_assert(px_test_log_contains("has rank 2 but the MDRange policy has rank 3"));
    /* An MDRange kernel on a 1-D range, and a for kernel launched as a reduce. */
    px_test_log_clear();
    ck_assert_int_eq(px_parallel_for(space, "r", px_range(0, 4), &k_count2, &a, sizeof a),
                     PX_EINVAL);
    ck_assert(px_test_log_contains("rank-2 MDRange kernel"));
    ck_assert_int_eq(px_parallel_reduce_md(space, "r", px_mdrange(2, NULL, hi), &k_count2, &a,
                                           sizeof a, &px_sum_f64, &r),
                     PX_EINVAL);
    /* NULL bodies. */
    ck_assert_int_eq(px_parallel_for_md_fn(space, "r", px_mdrange(2, NULL, hi), NULL, NULL),
                     PX_EFAULT);
    ck_assert_int_eq(px_parallel_reduce_md_fn(space, "r", px_mdrange(2, NULL, hi), f64_tile, NULL,
                                              &px_sum_f64, NULL),
                     PX_EFAULT);
    ck_assert_int_eq(px_parallel_for_md(space, "r", px_mdrange(2, NULL, hi), NULL, &a, sizeof a),
                     PX_EFAULT);
}
END_TEST

/* ---- engine pushes: ordered by Vars like any launch ------------------------------------------ */

typedef struct {
    double *x;
    int64_t n1;
    double add;
} add_args;

PX_FOR_2D(k_add2, add_args, i, j, a)
{
    a->x[i * a->n1 + j] = a->x[i * a->n1 + j] * 2.0 + a->add;
}

static void add_tile(const int64_t *lo, const int64_t *hi, void *ctx)
{
    add_args *a = ctx;
    for (int64_t i = lo[0]; i < hi[0]; ++i)
        for (int64_t j = lo[1]; j < hi[1]; ++j)
            a->x[i * a->n1 + j] = a->x[i * a->n1 + j] * 2.0 + a->add;
}

PX_REDUCE_2D(k_sum2, add_args, double, i, j, a, acc)
{
    *acc += a->x[i * a->n1 + j];
}

START_TEST(test_md_engine_pushes_run_in_var_order)
{
    px_engine *e = px_engine_default();
    ck_assert_ptr_nonnull(e);
    px_var *v = px_var_new(e);
    ck_assert_ptr_nonnull(v);
    enum { N0 = 37, N1 = 41 };
    double *x = calloc(N0 * N1, sizeof *x);
    ck_assert_ptr_nonnull(x);
    int64_t hi[2] = {N0, N1}, tile[2] = {5, 8};
    px_mdrange_policy p = px_mdrange_tiled(2, NULL, hi, tile);
    px_var *w[1] = {v};
    /* x = ((0 * 2 + 1) * 2 + 2) * 2 + 3 = 11 everywhere, only in push order. */
    add_args a1 = {x, N1, 1.0}, a3 = {x, N1, 3.0};
    ck_assert_int_eq(
        px_engine_push_parallel_for_md(e, space, "add1", p, &k_add2, &a1, sizeof a1, NULL, 0, w, 1),
        PX_OK);
    static add_args a2;
    a2 = (add_args){x, N1, 2.0};
    ck_assert_int_eq(px_engine_push_parallel_for_md_fn(
                         e, space, "add2", px_mdrange_set_schedule(p, PX_SCHEDULE_DYNAMIC),
                         add_tile, &a2, NULL, 0, w, 1),
                     PX_OK);
    a1.add = 99.0; /* copied at push: no effect */
    ck_assert_int_eq(
        px_engine_push_parallel_for_md(e, space, "add3", p, &k_add2, &a3, sizeof a3, NULL, 0, w, 1),
        PX_OK);
    double s1 = -1, s2 = -1;
    px_var *r[1] = {v};
    ck_assert_int_eq(px_engine_push_parallel_reduce_md(e, space, "sum", p, &k_sum2, &a3, sizeof a3,
                                                       &px_sum_f64, &s1, r, 1, NULL, 0),
                     PX_OK);
    ck_assert_int_eq(px_engine_push_parallel_reduce_md_fn(e, space, "sumfn", p, f64_tile, NULL,
                                                          NULL, &s2, r, 1, NULL, 0),
                     PX_EFAULT); /* NULL reducer: refused at push */
    /* Bad policy and rank mismatch are refused at push, with the direct call's status. */
    ck_assert_int_eq(px_engine_push_parallel_for_md(e, space, "bad", px_mdrange(1, NULL, hi),
                                                    &k_add2, &a3, sizeof a3, NULL, 0, w, 1),
                     PX_EINVAL);
    int64_t hi3[3] = {2, 2, 2};
    ck_assert_int_eq(px_engine_push_parallel_for_md(e, space, "bad", px_mdrange(3, NULL, hi3),
                                                    &k_add2, &a3, sizeof a3, NULL, 0, w, 1),
                     PX_EINVAL);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
    for (int i = 0; i < N0 * N1; ++i)
        ck_assert(x[i] == 11.0);
    ck_assert(s1 == 11.0 * N0 * N1);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    free(x);
}
END_TEST

/* ---- nested: an MDRange launch from inside a kernel runs inline -------------------------------
 */

typedef struct {
    atomic_int *count;
    int64_t n1;
} nest_ctx;

static void inner_tile(const int64_t *lo, const int64_t *hi, void *vctx)
{
    nest_ctx *c = vctx;
    for (int64_t i = lo[0]; i < hi[0]; ++i)
        for (int64_t j = lo[1]; j < hi[1]; ++j)
            atomic_fetch_add(&c->count[i * c->n1 + j], 1);
}

static void outer_for(int64_t b, int64_t e, void *vctx)
{
    for (int64_t r = b; r < e; ++r) {
        int64_t lo[2] = {r * 4, 0}, hi[2] = {r * 4 + 4, 9};
        ck_assert_int_eq(
            px_parallel_for_md_fn(space, "inner", px_mdrange(2, lo, hi), inner_tile, vctx), PX_OK);
    }
}

START_TEST(test_md_launch_from_inside_a_kernel_runs_inline)
{
    atomic_int count[8 * 4 * 9];
    for (int i = 0; i < 8 * 4 * 9; ++i)
        atomic_init(&count[i], 0);
    nest_ctx c = {count, 9};
    ck_assert_int_eq(px_parallel_for_fn(space, "outer", px_range(0, 8), outer_for, &c), PX_OK);
    for (int i = 0; i < 8 * 4 * 9; ++i)
        ck_assert_int_eq(atomic_load(&count[i]), 1);
}
END_TEST

static Suite *md_suite(void)
{
    Suite *s = suite_create("conformance_md");
    TCase *tc = tcase_create("for");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_md_for_fn_visits_every_point_once);
    tcase_add_test(tc, test_md_for_kernels_of_every_rank_visit_every_point_once);
    tcase_add_test(tc, test_md_kernel_walks_each_tile_in_the_iterate_order_with_one_rank);
    tcase_add_test(tc, test_md_over_a_view_box_fills_every_element_in_both_layouts);
    tcase_add_test(tc, test_md_launch_from_inside_a_kernel_runs_inline);
    suite_add_tcase(s, tc);

    tc = tcase_create("reduce");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_md_reduce_with_noncommutative_join_equals_the_lexicographic_tile_fold);
    tcase_add_test(tc, test_md_float_reduce_is_bitwise_repeatable_and_close_to_the_sum);
    tcase_add_test(tc, test_md_reduce_kernels_match_the_host_function_bitwise);
    suite_add_tcase(s, tc);

    tc = tcase_create("bad_input_and_engine");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_md_bad_policies_are_einval_with_a_message_naming_the_dimension);
    tcase_add_test(tc, test_md_kernel_rank_must_match_the_policy_rank);
    tcase_add_test(tc, test_md_engine_pushes_run_in_var_order);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(md_suite());
}
