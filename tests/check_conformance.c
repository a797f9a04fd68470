/*
 * tests/check_conformance.c - the launch semantics of DESIGN.md section 4, for any host space.
 *
 * The space under test comes from PX_TEST_SPACE (serial | threads; default serial) and its
 * thread count from PX_NUM_THREADS (tests/conformance.cmake registers one ctest per space and
 * thread count). Every test walks the same grid of policies: sizes 0, 1, 2, 1000, 1001 and
 * 100003, begin 0 and 13, chunk sizes 0 (automatic), 1, 7 and 64, static and dynamic schedules.
 * Each launch form is checked: host function kernels (px_parallel_*_fn) and single-source
 * kernels (PX_FOR / PX_REDUCE / PX_SCAN), which must agree with each other and with a
 * sequential loop computed here.
 */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "px_test.h"

/* ---- the space under test and the policy grid ------------------------------------------------ */

static px_space *space;
static const char *space_name;

static const int64_t sizes[] = {0, 1, 2, 1000, 1001, 100003};
static const int64_t begins[] = {0, 13};
static const int64_t chunks[] = {0, 1, 7, 64};
static const px_schedule schedules[] = {PX_SCHEDULE_STATIC, PX_SCHEDULE_DYNAMIC};

#define N_SIZES     (sizeof sizes / sizeof sizes[0])
#define N_BEGINS    (sizeof begins / sizeof begins[0])
#define N_CHUNKS    (sizeof chunks / sizeof chunks[0])
#define N_SCHEDULES (sizeof schedules / sizeof schedules[0])
#define N_POLICIES  (N_SIZES * N_BEGINS * N_CHUNKS * N_SCHEDULES)
#define MAX_END     (100003 + 13)
/* Arrays are MAX_END long plus a margin; a launch over [begin, end) is checked on [0, lim) with
 * lim = end + MARGIN, which catches writes just past the end without touching 100k entries per
 * policy (that would dominate the sanitizer runs). Indices further out are caught by the
 * kernels' own range checks. */
#define MARGIN    64
#define ALLOC_END (MAX_END + MARGIN)

static int64_t check_limit(px_range_policy p)
{
    return p.end + MARGIN;
}

/* The i-th policy of the grid. */
static px_range_policy grid_policy(size_t i)
{
    size_t s = i % N_SCHEDULES;
    i /= N_SCHEDULES;
    size_t c = i % N_CHUNKS;
    i /= N_CHUNKS;
    size_t b = i % N_BEGINS;
    i /= N_BEGINS;
    return px_range_chunked(begins[b], begins[b] + sizes[i], chunks[c], schedules[s]);
}

#define POLICY_FMT "[%lld, %lld) chunk %lld %s on %s"
#define POLICY_ARGS(p)                                                                             \
    (long long)(p).begin, (long long)(p).end, (long long)(p).chunk_size,                           \
        (p).schedule == PX_SCHEDULE_STATIC ? "static" : "dynamic", space_name

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
    ck_assert_str_eq(px_space_name(space), space_name);
}

static void teardown(void)
{
    px_test_teardown();
}

/* Garbage written into results before a launch, so a launch that accumulates into the result
 * instead of overwriting it is caught. */
static void fill_garbage(void *p, size_t bytes)
{
    memset(p, 0xA5, bytes);
}

/* Kernels for launches that must not run anything; they count calls if they do. */
static atomic_int bad_calls;

static void never_for(int64_t b, int64_t e, void *ctx)
{
    (void)b;
    (void)e;
    (void)ctx;
    atomic_fetch_add_explicit(&bad_calls, 1, memory_order_relaxed);
}

static void never_reduce(int64_t b, int64_t e, void *ctx, void *acc)
{
    (void)b;
    (void)e;
    (void)ctx;
    (void)acc;
    atomic_fetch_add_explicit(&bad_calls, 1, memory_order_relaxed);
}

static void never_scan(int64_t b, int64_t e, void *ctx, void *partial, int final_pass)
{
    (void)b;
    (void)e;
    (void)ctx;
    (void)partial;
    (void)final_pass;
    atomic_fetch_add_explicit(&bad_calls, 1, memory_order_relaxed);
}

/* ---- parallel_for: every index exactly once ----------------------------------------------------
 */

typedef struct {
    px_range_policy p;
    atomic_int *count;    /* visits per index, [0, ALLOC_END) */
    atomic_int calls;     /* fn calls */
    atomic_int bad_chunk; /* chunks outside the range, inverted or misaligned */
} visit_ctx;

static void visit_fn(int64_t b, int64_t e, void *vctx)
{
    visit_ctx *c = vctx;
    atomic_fetch_add_explicit(&c->calls, 1, memory_order_relaxed);
    int64_t cs = c->p.chunk_size;
    int misaligned =
        cs > 0 && ((b - c->p.begin) % cs != 0 || (e != c->p.end && (e - c->p.begin) % cs != 0));
    if (b < c->p.begin || e > c->p.end || b > e || misaligned) {
        atomic_fetch_add_explicit(&c->bad_chunk, 1, memory_order_relaxed);
        return;
    }
    for (int64_t i = b; i < e; ++i)
        atomic_fetch_add_explicit(&c->count[i], 1, memory_order_relaxed);
}

typedef struct {
    atomic_int *count;
    int64_t lo, hi;
    atomic_int *bad;
} count_args;

PX_FOR(k_count, count_args, i, a)
{
    if (i < a->lo || i >= a->hi)
        atomic_fetch_add_explicit(a->bad, 1, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&a->count[i], 1, memory_order_relaxed);
}

static void check_counts(const atomic_int *count, px_range_policy p, const char *how)
{
    for (int64_t i = 0; i < check_limit(p); ++i) {
        int want = (i >= p.begin && i < p.end) ? 1 : 0;
        int got = atomic_load_explicit(&count[i], memory_order_relaxed);
        if (got != want)
            ck_abort_msg("%s: index %lld visited %d times, expected %d, " POLICY_FMT, how,
                         (long long)i, got, want, POLICY_ARGS(p));
    }
}

START_TEST(test_for_fn_visits_every_index_exactly_once)
{
    atomic_int *count = calloc(ALLOC_END, sizeof *count);
    ck_assert_ptr_nonnull(count);
    for (size_t k = 0; k < N_POLICIES; ++k) {
        px_range_policy p = grid_policy(k);
        for (int64_t i = 0; i < check_limit(p); ++i)
            atomic_init(&count[i], 0);
        visit_ctx c = {.p = p, .count = count};
        atomic_init(&c.calls, 0);
        atomic_init(&c.bad_chunk, 0);
        int rc = px_parallel_for_fn(space, "visit", p, visit_fn, &c);
        ck_assert_msg(rc == PX_OK, "px_parallel_for_fn: %s, " POLICY_FMT, px_strerror(rc),
                      POLICY_ARGS(p));
        ck_assert_msg(atomic_load(&c.bad_chunk) == 0,
                      "a chunk was outside the range or not aligned to the chunk size, " POLICY_FMT,
                      POLICY_ARGS(p));
        if (p.begin == p.end)
            ck_assert_msg(atomic_load(&c.calls) == 0, "empty range called fn, " POLICY_FMT,
                          POLICY_ARGS(p));
        check_counts(count, p, "px_parallel_for_fn");
    }
    free(count);
}
END_TEST

START_TEST(test_for_kernel_visits_every_index_exactly_once)
{
    atomic_int *count = calloc(ALLOC_END, sizeof *count);
    ck_assert_ptr_nonnull(count);
    atomic_int bad;
    for (size_t k = 0; k < N_POLICIES; ++k) {
        px_range_policy p = grid_policy(k);
        for (int64_t i = 0; i < check_limit(p); ++i)
            atomic_init(&count[i], 0);
        atomic_init(&bad, 0);
        count_args a = {count, p.begin, p.end, &bad};
        int rc = px_parallel_for(space, NULL, p, &k_count, &a, sizeof a);
        ck_assert_msg(rc == PX_OK, "px_parallel_for: %s, " POLICY_FMT, px_strerror(rc),
                      POLICY_ARGS(p));
        ck_assert_msg(atomic_load(&bad) == 0, "index outside the range, " POLICY_FMT,
                      POLICY_ARGS(p));
        check_counts(count, p, "px_parallel_for(PX_FOR)");
    }
    free(count);
    ck_assert_int_eq(px_fence(space), PX_OK);
}
END_TEST

/* The same axpy written as a host function and as a PX_FOR kernel gives identical bytes. */
typedef struct {
    double alpha;
    const double *x;
    double *y;
} axpy_args;

PX_FOR(k_axpy, axpy_args, i, a)
{
    a->y[i] = a->alpha * a->x[i] + a->y[i] * 0.5;
}

static void axpy_fn(int64_t b, int64_t e, void *ctx)
{
    const axpy_args *a = ctx;
    for (int64_t i = b; i < e; ++i)
        a->y[i] = a->alpha * a->x[i] + a->y[i] * 0.5;
}

START_TEST(test_for_kernel_and_fn_produce_identical_output)
{
    double *x = malloc(ALLOC_END * sizeof *x);
    double *y0 = malloc(ALLOC_END * sizeof *y0);
    double *y1 = malloc(ALLOC_END * sizeof *y1);
    double *y2 = malloc(ALLOC_END * sizeof *y2);
    ck_assert(x && y0 && y1 && y2);
    for (int64_t i = 0; i < ALLOC_END; ++i) {
        x[i] = sin((double)i) * 3.0;
        y0[i] = cos((double)i) / 7.0;
    }
    for (size_t k = 0; k < N_POLICIES; ++k) {
        px_range_policy p = grid_policy(k);
        size_t lim = (size_t)check_limit(p);
        memcpy(y1, y0, lim * sizeof *y0);
        memcpy(y2, y0, lim * sizeof *y0);
        axpy_args a1 = {1.0 / 3.0, x, y1}, a2 = {1.0 / 3.0, x, y2};
        ck_assert_int_eq(px_parallel_for_fn(space, "axpy_fn", p, axpy_fn, &a1), PX_OK);
        ck_assert_int_eq(px_parallel_for(space, "axpy_kernel", p, &k_axpy, &a2, sizeof a2), PX_OK);
        ck_assert_msg(memcmp(y1, y2, lim * sizeof *y1) == 0,
                      "PX_FOR and _fn outputs differ, " POLICY_FMT, POLICY_ARGS(p));
        /* Inside the range every element changed as a sequential loop would; outside, none. */
        for (int64_t i = 0; i < (int64_t)lim; ++i) {
            double want = (i >= p.begin && i < p.end) ? (1.0 / 3.0) * x[i] + y0[i] * 0.5 : y0[i];
            if (y1[i] != want)
                ck_abort_msg("y[%lld] = %.17g, expected %.17g, " POLICY_FMT, (long long)i, y1[i],
                             want, POLICY_ARGS(p));
        }
    }
    free(x);
    free(y0);
    free(y1);
    free(y2);
}
END_TEST

/* ---- parallel_reduce ------------------------------------------------------------------------- */

static void sum_index_fn(int64_t b, int64_t e, void *ctx, void *acc)
{
    (void)ctx;
    int64_t *s = acc;
    for (int64_t i = b; i < e; ++i)
        *s += i;
}

typedef struct {
    int64_t unused;
} no_args;

PX_REDUCE(k_sum_index, no_args, int64_t, i, a, acc)
{
    (void)a;
    *acc += i;
}

START_TEST(test_reduce_sum_of_indices_fn_and_kernel_match_closed_form)
{
    for (size_t k = 0; k < N_POLICIES; ++k) {
        px_range_policy p = grid_policy(k);
        int64_t n = p.end - p.begin;
        int64_t want = n * (p.begin + p.end - 1) / 2;
        int64_t r1, r2;
        fill_garbage(&r1, sizeof r1);
        fill_garbage(&r2, sizeof r2);
        ck_assert_int_eq(
            px_parallel_reduce_fn(space, "sum_fn", p, sum_index_fn, NULL, &px_sum_i64, &r1), PX_OK);
        no_args na = {0};
        ck_assert_int_eq(
            px_parallel_reduce(space, NULL, p, &k_sum_index, &na, sizeof na, &px_sum_i64, &r2),
            PX_OK);
        ck_assert_msg(r1 == want, "_fn sum %lld, expected %lld, " POLICY_FMT, (long long)r1,
                      (long long)want, POLICY_ARGS(p));
        ck_assert_msg(r2 == want, "PX_REDUCE sum %lld, expected %lld, " POLICY_FMT, (long long)r2,
                      (long long)want, POLICY_ARGS(p));
    }
}
END_TEST

/* Float sums: bitwise identical run to run, and between the _fn and PX_REDUCE forms. */
typedef struct {
    const double *x;
    const float *xf;
} fsum_args;

static void fsum_fn(int64_t b, int64_t e, void *ctx, void *acc)
{
    const fsum_args *a = ctx;
    double *s = acc;
    for (int64_t i = b; i < e; ++i)
        *s += a->x[i];
}

static void fsum32_fn(int64_t b, int64_t e, void *ctx, void *acc)
{
    const fsum_args *a = ctx;
    float *s = acc;
    for (int64_t i = b; i < e; ++i)
        *s += a->xf[i];
}

PX_REDUCE(k_fsum, fsum_args, double, i, a, acc)
{
    *acc += a->x[i];
}

PX_REDUCE(k_fsum32, fsum_args, float, i, a, acc)
{
    *acc += a->xf[i];
}

START_TEST(test_reduce_float_sums_are_bitwise_reproducible)
{
    double *x = malloc(MAX_END * sizeof *x);
    float *xf = malloc(MAX_END * sizeof *xf);
    ck_assert(x && xf);
    for (int64_t i = 0; i < MAX_END; ++i) {
        /* Magnitudes over 8 decades: any change of summation order changes the bits. */
        x[i] = sin((double)i * 0.7) * pow(10.0, (double)(i % 9) - 4.0);
        xf[i] = (float)x[i];
    }
    fsum_args a = {x, xf};
    for (size_t k = 0; k < N_POLICIES; ++k) {
        px_range_policy p = grid_policy(k);
        double first = 0, d;
        float first32 = 0, f;
        for (int run = 0; run < 3; ++run) {
            fill_garbage(&d, sizeof d);
            ck_assert_int_eq(px_parallel_reduce_fn(space, "fsum", p, fsum_fn, &a, &px_sum_f64, &d),
                             PX_OK);
            if (run == 0)
                first = d;
            ck_assert_msg(memcmp(&d, &first, sizeof d) == 0,
                          "run %d: %.17g differs from %.17g, " POLICY_FMT, run, d, first,
                          POLICY_ARGS(p));
            fill_garbage(&d, sizeof d);
            ck_assert_int_eq(
                px_parallel_reduce(space, "fsum_k", p, &k_fsum, &a, sizeof a, &px_sum_f64, &d),
                PX_OK);
            ck_assert_msg(memcmp(&d, &first, sizeof d) == 0,
                          "PX_REDUCE %.17g differs from _fn %.17g, " POLICY_FMT, d, first,
                          POLICY_ARGS(p));

            fill_garbage(&f, sizeof f);
            ck_assert_int_eq(
                px_parallel_reduce_fn(space, "fsum32", p, fsum32_fn, &a, &px_sum_f32, &f), PX_OK);
            if (run == 0)
                first32 = f;
            ck_assert_msg(memcmp(&f, &first32, sizeof f) == 0, "f32 run %d differs, " POLICY_FMT,
                          run, POLICY_ARGS(p));
            fill_garbage(&f, sizeof f);
            ck_assert_int_eq(
                px_parallel_reduce(space, "fsum32_k", p, &k_fsum32, &a, sizeof a, &px_sum_f32, &f),
                PX_OK);
            ck_assert_msg(memcmp(&f, &first32, sizeof f) == 0,
                          "f32 PX_REDUCE differs from _fn, " POLICY_FMT, POLICY_ARGS(p));
        }
        /* Close to the exact sum (a sanity check on the value, not on the order). */
        double exact = 0;
        for (int64_t i = p.begin; i < p.end; ++i)
            exact += x[i];
        ck_assert_msg(fabs(first - exact) <= 1e-9 * (1.0 + fabs(exact)),
                      "sum %.17g far from %.17g, " POLICY_FMT, first, exact, POLICY_ARGS(p));
    }
    free(x);
    free(xf);
}
END_TEST

/* ---- builtin reducers ------------------------------------------------------------------------ */

/* Data for the builtin reducers: values with many ties, flags and bit patterns. */
typedef struct {
    const double *v;  /* doubles with ties */
    const int64_t *w; /* int64 with ties */
    const int *flag;  /* 0/1 */
    const uint64_t *bits;
} data_args;

/* One host fold per builtin (reducer index into the table below). */
static void fold_sum_f64(int64_t b, int64_t e, void *c, void *acc)
{
    const data_args *a = c;
    for (int64_t i = b; i < e; ++i)
        *(double *)acc += a->v[i];
}
static void fold_sum_f32(int64_t b, int64_t e, void *c, void *acc)
{
    const data_args *a = c;
    for (int64_t i = b; i < e; ++i)
        *(float *)acc += (float)a->w[i];
}
static void fold_sum_i64(int64_t b, int64_t e, void *c, void *acc)
{
    const data_args *a = c;
    for (int64_t i = b; i < e; ++i)
        *(int64_t *)acc += a->w[i];
}
static double prod_factor(int64_t i)
{
    /* Exact in binary: products of 2, 0.5 and 1 never round. */
    return i % 17 == 3 ? 2.0 : (i % 17 == 11 ? 0.5 : 1.0);
}
static void fold_prod_f64(int64_t b, int64_t e, void *c, void *acc)
{
    (void)c;
    for (int64_t i = b; i < e; ++i)
        *(double *)acc *= prod_factor(i);
}
static void fold_min_f64(int64_t b, int64_t e, void *c, void *acc)
{
    const data_args *a = c;
    for (int64_t i = b; i < e; ++i)
        if (a->v[i] < *(double *)acc)
            *(double *)acc = a->v[i];
}
static void fold_max_f64(int64_t b, int64_t e, void *c, void *acc)
{
    const data_args *a = c;
    for (int64_t i = b; i < e; ++i)
        if (a->v[i] > *(double *)acc)
            *(double *)acc = a->v[i];
}
static void fold_min_i64(int64_t b, int64_t e, void *c, void *acc)
{
    const data_args *a = c;
    for (int64_t i = b; i < e; ++i)
        if (a->w[i] < *(int64_t *)acc)
            *(int64_t *)acc = a->w[i];
}
static void fold_max_i64(int64_t b, int64_t e, void *c, void *acc)
{
    const data_args *a = c;
    for (int64_t i = b; i < e; ++i)
        if (a->w[i] > *(int64_t *)acc)
            *(int64_t *)acc = a->w[i];
}
static void fold_minloc(int64_t b, int64_t e, void *c, void *acc)
{
    const data_args *a = c;
    px_valloc_f64 *m = acc;
    for (int64_t i = b; i < e; ++i)
        if (a->v[i] < m->val || (a->v[i] == m->val && i < m->loc)) {
            m->val = a->v[i];
            m->loc = i;
        }
}
static void fold_maxloc(int64_t b, int64_t e, void *c, void *acc)
{
    const data_args *a = c;
    px_valloc_f64 *m = acc;
    for (int64_t i = b; i < e; ++i)
        if (a->v[i] > m->val || (a->v[i] == m->val && i < m->loc)) {
            m->val = a->v[i];
            m->loc = i;
        }
}
static void fold_land(int64_t b, int64_t e, void *c, void *acc)
{
    const data_args *a = c;
    for (int64_t i = b; i < e; ++i)
        *(int *)acc = *(int *)acc && a->flag[i];
}
static void fold_lor(int64_t b, int64_t e, void *c, void *acc)
{
    const data_args *a = c;
    for (int64_t i = b; i < e; ++i)
        *(int *)acc = *(int *)acc || a->flag[i];
}
static void fold_band(int64_t b, int64_t e, void *c, void *acc)
{
    const data_args *a = c;
    for (int64_t i = b; i < e; ++i)
        *(uint64_t *)acc &= a->bits[i];
}
static void fold_bor(int64_t b, int64_t e, void *c, void *acc)
{
    const data_args *a = c;
    for (int64_t i = b; i < e; ++i)
        *(uint64_t *)acc |= a->bits[i];
}

typedef struct {
    const char *name;
    const px_reducer *r;
    px_reduce_fn fold;
    unsigned char identity[PX_REDUCER_MAX_VALUE_BYTES]; /* expected identity, filled at run time */
} builtin_case;

static builtin_case builtins[14];

static void init_builtins(void)
{
    static const struct {
        const char *name;
        const px_reducer *r;
        px_reduce_fn fold;
    } t[14] = {
        {"sum_f64", &px_sum_f64, fold_sum_f64},
        {"sum_f32", &px_sum_f32, fold_sum_f32},
        {"sum_i64", &px_sum_i64, fold_sum_i64},
        {"prod_f64", &px_prod_f64, fold_prod_f64},
        {"min_f64", &px_min_f64, fold_min_f64},
        {"max_f64", &px_max_f64, fold_max_f64},
        {"min_i64", &px_min_i64, fold_min_i64},
        {"max_i64", &px_max_i64, fold_max_i64},
        {"minloc_f64", &px_minloc_f64, fold_minloc},
        {"maxloc_f64", &px_maxloc_f64, fold_maxloc},
        {"land", &px_land, fold_land},
        {"lor", &px_lor, fold_lor},
        {"band_u64", &px_band_u64, fold_band},
        {"bor_u64", &px_bor_u64, fold_bor},
    };
    for (int i = 0; i < 14; ++i) {
        builtins[i].name = t[i].name;
        builtins[i].r = t[i].r;
        builtins[i].fold = t[i].fold;
        memset(builtins[i].identity, 0, sizeof builtins[i].identity);
    }
    /* Kokkos' identities (DESIGN.md section 4). */
    double d;
    float f;
    int64_t l;
    int n;
    uint64_t u;
    px_valloc_f64 vl;
    memset(&vl, 0, sizeof vl); /* padding-free, but keep memcmp honest */
    d = 0.0;
    memcpy(builtins[0].identity, &d, sizeof d);
    f = 0.0f;
    memcpy(builtins[1].identity, &f, sizeof f);
    l = 0;
    memcpy(builtins[2].identity, &l, sizeof l);
    d = 1.0;
    memcpy(builtins[3].identity, &d, sizeof d);
    d = DBL_MAX;
    memcpy(builtins[4].identity, &d, sizeof d);
    d = -DBL_MAX;
    memcpy(builtins[5].identity, &d, sizeof d);
    l = INT64_MAX;
    memcpy(builtins[6].identity, &l, sizeof l);
    l = INT64_MIN;
    memcpy(builtins[7].identity, &l, sizeof l);
    vl.val = DBL_MAX;
    vl.loc = INT64_MAX;
    memcpy(builtins[8].identity, &vl, sizeof vl);
    vl.val = -DBL_MAX;
    vl.loc = INT64_MAX;
    memcpy(builtins[9].identity, &vl, sizeof vl);
    n = 1;
    memcpy(builtins[10].identity, &n, sizeof n);
    n = 0;
    memcpy(builtins[11].identity, &n, sizeof n);
    u = ~(uint64_t)0;
    memcpy(builtins[12].identity, &u, sizeof u);
    u = 0;
    memcpy(builtins[13].identity, &u, sizeof u);
}

static size_t expected_value_size(int i)
{
    switch (i) {
    case 1:
        return sizeof(float);
    case 8:
    case 9:
        return sizeof(px_valloc_f64);
    case 10:
    case 11:
        return sizeof(int);
    default:
        return 8;
    }
}

START_TEST(test_builtin_reducers_have_kokkos_value_sizes_and_identities)
{
    init_builtins();
    for (int i = 0; i < 14; ++i) {
        const px_reducer *r = builtins[i].r;
        ck_assert_int_eq(px_reducer_validate(r), PX_OK);
        ck_assert_msg(r->value_size == expected_value_size(i), "%s value_size %zu",
                      builtins[i].name, r->value_size);
        unsigned char v[PX_REDUCER_MAX_VALUE_BYTES];
        fill_garbage(v, sizeof v);
        r->identity(v);
        ck_assert_msg(memcmp(v, builtins[i].identity, r->value_size) == 0,
                      "%s: identity() is not Kokkos' identity", builtins[i].name);
    }
}
END_TEST

START_TEST(test_empty_range_reduce_overwrites_result_with_identity)
{
    init_builtins();
    data_args a = {NULL, NULL, NULL, NULL}; /* never dereferenced: nothing runs */
    atomic_store(&bad_calls, 0);
    for (int i = 0; i < 14; ++i) {
        for (size_t k = 0; k < N_POLICIES; ++k) {
            px_range_policy p = grid_policy(k);
            if (p.begin != p.end)
                continue;
            unsigned char v[PX_REDUCER_MAX_VALUE_BYTES];
            fill_garbage(v, sizeof v);
            int rc = px_parallel_reduce_fn(space, builtins[i].name, p, builtins[i].fold, &a,
                                           builtins[i].r, v);
            ck_assert_msg(rc == PX_OK, "%s: %s", builtins[i].name, px_strerror(rc));
            ck_assert_msg(memcmp(v, builtins[i].identity, builtins[i].r->value_size) == 0,
                          "%s: empty range did not store the identity, " POLICY_FMT,
                          builtins[i].name, POLICY_ARGS(p));
            /* The scan total of an empty range is the identity too. */
            fill_garbage(v, sizeof v);
            rc =
                px_parallel_scan_fn(space, builtins[i].name, p, never_scan, NULL, builtins[i].r, v);
            ck_assert_msg(rc == PX_OK, "scan %s: %s", builtins[i].name, px_strerror(rc));
            ck_assert_msg(memcmp(v, builtins[i].identity, builtins[i].r->value_size) == 0,
                          "%s: empty scan total is not the identity, " POLICY_FMT, builtins[i].name,
                          POLICY_ARGS(p));
        }
    }
    ck_assert_int_eq(atomic_load(&bad_calls), 0);
}
END_TEST

/* Sequential reference: fold the whole range from the identity on one thread. */
static void sequential(int i, const data_args *a, px_range_policy p, void *out)
{
    builtins[i].r->identity(out);
    builtins[i].fold(p.begin, p.end, (void *)a, out);
}

static int same_value(int i, const void *x, const void *y)
{
    if (i == 8 || i == 9) { /* compare fields, never padding */
        const px_valloc_f64 *u = x, *v = y;
        return u->val == v->val && u->loc == v->loc;
    }
    return memcmp(x, y, builtins[i].r->value_size) == 0;
}

START_TEST(test_builtin_reducers_match_sequential_fold)
{
    init_builtins();
    double *v = malloc(MAX_END * sizeof *v);
    int64_t *w = malloc(MAX_END * sizeof *w);
    int *flag = malloc(MAX_END * sizeof *flag);
    uint64_t *bits = malloc(MAX_END * sizeof *bits);
    ck_assert(v && w && flag && bits);
    for (int64_t i = 0; i < MAX_END; ++i) {
        v[i] = (double)((i * 7919) % 101) - 50.0; /* many ties for minloc/maxloc */
        w[i] = (i * 104729) % 1009 - 504;
        flag[i] = (i % 997) != 500; /* one false per 997 */
        bits[i] = ~((uint64_t)1 << (i % 61)) | ((uint64_t)1 << 62);
    }
    data_args a = {v, w, flag, bits};
    for (int i = 0; i < 14; ++i) {
        for (size_t k = 0; k < N_POLICIES; ++k) {
            px_range_policy p = grid_policy(k);
            unsigned char want[PX_REDUCER_MAX_VALUE_BYTES], got[PX_REDUCER_MAX_VALUE_BYTES];
            memset(want, 0, sizeof want);
            sequential(i, &a, p, want);
            fill_garbage(got, sizeof got);
            int rc = px_parallel_reduce_fn(space, builtins[i].name, p, builtins[i].fold, &a,
                                           builtins[i].r, got);
            ck_assert_msg(rc == PX_OK, "%s: %s", builtins[i].name, px_strerror(rc));
            /* Every value here is exact in any order: integer sums far below 2^24, products of
             * 2 and 0.5 whose contiguous runs stay within [0.5, 2]. */
            ck_assert_msg(same_value(i, got, want),
                          "%s differs from the sequential fold, " POLICY_FMT, builtins[i].name,
                          POLICY_ARGS(p));
            if ((i == 8 || i == 9) && p.end > p.begin) {
                px_valloc_f64 m;
                memcpy(&m, got, sizeof m);
                /* Lowest index on ties: no earlier index holds the same value. */
                for (int64_t j = p.begin; j < m.loc; ++j)
                    if (v[j] == m.val)
                        ck_abort_msg("%s: index %lld ties %lld but is lower", builtins[i].name,
                                     (long long)j, (long long)m.loc);
            }
        }
    }
    free(v);
    free(w);
    free(flag);
    free(bits);
}
END_TEST

/* minloc/maxloc as PX_REDUCE kernels: same answer, lowest index on ties. */
typedef struct {
    const double *v;
} vl_args;

PX_REDUCE(k_minloc, vl_args, px_valloc_f64, i, a, acc)
{
    if (a->v[i] < acc->val || (a->v[i] == acc->val && i < acc->loc)) {
        acc->val = a->v[i];
        acc->loc = i;
    }
}

PX_REDUCE(k_maxloc, vl_args, px_valloc_f64, i, a, acc)
{
    if (a->v[i] > acc->val || (a->v[i] == acc->val && i < acc->loc)) {
        acc->val = a->v[i];
        acc->loc = i;
    }
}

START_TEST(test_minloc_maxloc_kernels_pick_lowest_index_on_ties)
{
    double *v = malloc(MAX_END * sizeof *v);
    ck_assert_ptr_nonnull(v);
    /* Only three distinct values: every extreme is tied thousands of times. */
    for (int64_t i = 0; i < MAX_END; ++i)
        v[i] = (double)((i * 31) % 3);
    vl_args a = {v};
    for (size_t k = 0; k < N_POLICIES; ++k) {
        px_range_policy p = grid_policy(k);
        px_valloc_f64 mn, mx;
        fill_garbage(&mn, sizeof mn);
        fill_garbage(&mx, sizeof mx);
        ck_assert_int_eq(
            px_parallel_reduce(space, NULL, p, &k_minloc, &a, sizeof a, &px_minloc_f64, &mn),
            PX_OK);
        ck_assert_int_eq(
            px_parallel_reduce(space, NULL, p, &k_maxloc, &a, sizeof a, &px_maxloc_f64, &mx),
            PX_OK);
        if (p.begin == p.end) {
            ck_assert(mn.val == DBL_MAX && mn.loc == INT64_MAX);
            ck_assert(mx.val == -DBL_MAX && mx.loc == INT64_MAX);
            continue;
        }
        int64_t lo = -1, hi = -1;
        for (int64_t i = p.begin; i < p.end; ++i) {
            if (lo < 0 || v[i] < v[lo])
                lo = i;
            if (hi < 0 || v[i] > v[hi])
                hi = i;
        }
        ck_assert_msg(mn.loc == lo && mn.val == v[lo],
                      "minloc (%g, %lld), expected (%g, %lld), " POLICY_FMT, mn.val,
                      (long long)mn.loc, v[lo], (long long)lo, POLICY_ARGS(p));
        ck_assert_msg(mx.loc == hi && mx.val == v[hi],
                      "maxloc (%g, %lld), expected (%g, %lld), " POLICY_FMT, mx.val,
                      (long long)mx.loc, v[hi], (long long)hi, POLICY_ARGS(p));
    }
    free(v);
}
END_TEST

/* ---- custom reducers ---------------------------------------------------------------------------
 */

/* A struct value: three sums at once. */
typedef struct {
    double sx;
    double sxx;
    int64_t count;
} sum3;

static void sum3_identity(void *v)
{
    *(sum3 *)v = (sum3){0.0, 0.0, 0};
}

static void sum3_join(void *dst, const void *src)
{
    sum3 *d = dst;
    const sum3 *s = src;
    d->sx += s->sx;
    d->sxx += s->sxx;
    d->count += s->count;
}

static const px_reducer sum3_reducer = PX_REDUCER_INIT(sum3, sum3_identity, sum3_join, "sum3");

static void sum3_fn(int64_t b, int64_t e, void *ctx, void *acc)
{
    (void)ctx;
    sum3 *s = acc;
    for (int64_t i = b; i < e; ++i) {
        s->sx += (double)i;
        s->sxx += (double)i * (double)i;
        s->count += 1;
    }
}

PX_REDUCE(k_sum3, no_args, sum3, i, a, acc)
{
    (void)a;
    acc->sx += (double)i;
    acc->sxx += (double)i * (double)i;
    acc->count += 1;
}

START_TEST(test_custom_struct_reducer_computes_three_sums)
{
    ck_assert_int_eq(px_reducer_validate(&sum3_reducer), PX_OK);
    for (size_t k = 0; k < N_POLICIES; ++k) {
        px_range_policy p = grid_policy(k);
        sum3 want = {0, 0, 0};
        sum3_fn(p.begin, p.end, NULL, &want); /* integers below 2^53: exact in any order */
        sum3 r1, r2;
        fill_garbage(&r1, sizeof r1);
        fill_garbage(&r2, sizeof r2);
        ck_assert_int_eq(px_parallel_reduce_fn(space, "sum3", p, sum3_fn, NULL, &sum3_reducer, &r1),
                         PX_OK);
        no_args na = {0};
        ck_assert_int_eq(
            px_parallel_reduce(space, "sum3_k", p, &k_sum3, &na, sizeof na, &sum3_reducer, &r2),
            PX_OK);
        ck_assert_msg(r1.sx == want.sx && r1.sxx == want.sxx && r1.count == want.count,
                      "_fn sum3 wrong, " POLICY_FMT, POLICY_ARGS(p));
        ck_assert_msg(r2.sx == want.sx && r2.sxx == want.sxx && r2.count == want.count,
                      "PX_REDUCE sum3 wrong, " POLICY_FMT, POLICY_ARGS(p));
    }
}
END_TEST

/* Non-commutative, associative: the product of 2x2 matrices M_i in index order (uint64
 * arithmetic wraps, which stays associative). */
typedef struct {
    uint64_t m[4]; /* row-major a b / c d */
} mat2;

static void mat2_identity(void *v)
{
    *(mat2 *)v = (mat2){{1, 0, 0, 1}};
}

static void mat2_mul(mat2 *d, const mat2 *s)
{
    mat2 r = {{d->m[0] * s->m[0] + d->m[1] * s->m[2], d->m[0] * s->m[1] + d->m[1] * s->m[3],
               d->m[2] * s->m[0] + d->m[3] * s->m[2], d->m[2] * s->m[1] + d->m[3] * s->m[3]}};
    *d = r;
}

static void mat2_join(void *dst, const void *src)
{
    mat2_mul(dst, src);
}

static const px_reducer mat2_reducer = PX_REDUCER_INIT(mat2, mat2_identity, mat2_join, "mat2");

static mat2 mat2_of(int64_t i)
{
    /* [[i%5+1, 1], [1, 0]]: these do not commute with each other. */
    return (mat2){{(uint64_t)(i % 5) + 1u, 1u, 1u, 0u}};
}

static void mat2_fn(int64_t b, int64_t e, void *ctx, void *acc)
{
    (void)ctx;
    for (int64_t i = b; i < e; ++i) {
        mat2 x = mat2_of(i);
        mat2_mul(acc, &x);
    }
}

PX_REDUCE(k_mat2, no_args, mat2, i, a, acc)
{
    (void)a;
    mat2 x = mat2_of(i);
    mat2_mul(acc, &x);
}

/* Concatenation of index ranges: joining [a, b] with [c, d] is valid only when c == b + 1, so
 * any out-of-order join clears ok. */
typedef struct {
    int64_t lo, hi; /* covered range [lo, hi]; lo > hi: empty */
    int64_t ok;
} concat;

static void concat_identity(void *v)
{
    *(concat *)v = (concat){1, 0, 1};
}

static void concat_join(void *dst, const void *src)
{
    concat *d = dst;
    const concat *s = src;
    if (s->lo > s->hi) {
        d->ok = d->ok && s->ok;
        return;
    }
    if (d->lo > d->hi) {
        int64_t ok = d->ok && s->ok;
        *d = *s;
        d->ok = ok;
        return;
    }
    d->ok = d->ok && s->ok && d->hi + 1 == s->lo;
    d->hi = s->hi;
}

static void concat_push(concat *c, int64_t i)
{
    concat one = {i, i, 1};
    concat_join(c, &one);
}

static const px_reducer concat_reducer =
    PX_REDUCER_INIT(concat, concat_identity, concat_join, "concat");

static void concat_fn(int64_t b, int64_t e, void *ctx, void *acc)
{
    (void)ctx;
    for (int64_t i = b; i < e; ++i)
        concat_push(acc, i);
}

PX_REDUCE(k_concat, no_args, concat, i, a, acc)
{
    (void)a;
    concat_push(acc, i);
}

START_TEST(test_noncommutative_reducers_join_in_index_order)
{
    ck_assert_int_eq(px_reducer_validate(&mat2_reducer), PX_OK);
    ck_assert_int_eq(px_reducer_validate(&concat_reducer), PX_OK);
    for (size_t k = 0; k < N_POLICIES; ++k) {
        px_range_policy p = grid_policy(k);
        mat2 want;
        mat2_identity(&want);
        mat2_fn(p.begin, p.end, NULL, &want);
        mat2 m1, m2;
        fill_garbage(&m1, sizeof m1);
        fill_garbage(&m2, sizeof m2);
        no_args na = {0};
        ck_assert_int_eq(px_parallel_reduce_fn(space, "mat2", p, mat2_fn, NULL, &mat2_reducer, &m1),
                         PX_OK);
        ck_assert_int_eq(
            px_parallel_reduce(space, "mat2_k", p, &k_mat2, &na, sizeof na, &mat2_reducer, &m2),
            PX_OK);
        ck_assert_msg(memcmp(&m1, &want, sizeof want) == 0,
                      "_fn matrix product is not the sequential one, " POLICY_FMT, POLICY_ARGS(p));
        ck_assert_msg(memcmp(&m2, &want, sizeof want) == 0,
                      "PX_REDUCE matrix product is not the sequential one, " POLICY_FMT,
                      POLICY_ARGS(p));

        concat c1, c2;
        fill_garbage(&c1, sizeof c1);
        fill_garbage(&c2, sizeof c2);
        ck_assert_int_eq(
            px_parallel_reduce_fn(space, "concat", p, concat_fn, NULL, &concat_reducer, &c1),
            PX_OK);
        ck_assert_int_eq(px_parallel_reduce(space, "concat_k", p, &k_concat, &na, sizeof na,
                                            &concat_reducer, &c2),
                         PX_OK);
        concat *cs[2] = {&c1, &c2};
        for (int j = 0; j < 2; ++j) {
            const concat *c = cs[j];
            ck_assert_msg(c->ok == 1, "%s: ranges joined out of order, " POLICY_FMT,
                          j ? "PX_REDUCE" : "_fn", POLICY_ARGS(p));
            if (p.begin == p.end)
                ck_assert_msg(c->lo > c->hi, "empty range gave a non-empty concatenation");
            else
                ck_assert_msg(c->lo == p.begin && c->hi == p.end - 1,
                              "%s: concatenation [%lld, %lld], " POLICY_FMT,
                              j ? "PX_REDUCE" : "_fn", (long long)c->lo, (long long)c->hi,
                              POLICY_ARGS(p));
        }
    }
}
END_TEST

/* ---- parallel_scan -----------------------------------------------------------------------------
 */

typedef struct {
    const int64_t *in;
    int64_t *out;
    int inclusive;
    atomic_int *final_visits; /* per index: final-pass visits */
} scan_args;

static void scan_fn(int64_t b, int64_t e, void *ctx, void *partial, int final_pass)
{
    const scan_args *a = ctx;
    int64_t *s = partial;
    for (int64_t i = b; i < e; ++i) {
        if (final_pass && !a->inclusive)
            a->out[i] = *s;
        *s += a->in[i];
        if (final_pass && a->inclusive)
            a->out[i] = *s;
        if (final_pass)
            atomic_fetch_add_explicit(&a->final_visits[i], 1, memory_order_relaxed);
    }
}

PX_SCAN(k_scan, scan_args, int64_t, i, a, partial, final_pass)
{
    if (final_pass && !a->inclusive)
        a->out[i] = *partial;
    *partial += a->in[i];
    if (final_pass && a->inclusive)
        a->out[i] = *partial;
    if (final_pass)
        atomic_fetch_add_explicit(&a->final_visits[i], 1, memory_order_relaxed);
}

START_TEST(test_scan_prefixes_and_totals_exclusive_and_inclusive)
{
    int64_t *in = malloc(MAX_END * sizeof *in);
    int64_t *out = malloc(ALLOC_END * sizeof *out);
    atomic_int *fv = calloc(ALLOC_END, sizeof *fv);
    ck_assert(in && out && fv);
    for (int64_t i = 0; i < MAX_END; ++i)
        in[i] = i % 13 - 6 + (i % 1000 == 0 ? 1000000 : 0);
    for (size_t k = 0; k < N_POLICIES; ++k) {
        px_range_policy p = grid_policy(k);
        for (int form = 0; form < 4; ++form) { /* bit 0: inclusive; bit 1: PX_SCAN kernel */
            int inclusive = form & 1, kernel = form >> 1;
            for (int64_t i = 0; i < check_limit(p); ++i) {
                out[i] = -777;
                atomic_init(&fv[i], 0);
            }
            scan_args a = {in, out, inclusive, fv};
            int64_t total;
            fill_garbage(&total, sizeof total);
            int rc = kernel
                         ? px_parallel_scan(space, "scan_k", p, &k_scan, &a, sizeof a, &px_sum_i64,
                                            &total)
                         : px_parallel_scan_fn(space, "scan", p, scan_fn, &a, &px_sum_i64, &total);
            ck_assert_msg(rc == PX_OK, "scan: %s, " POLICY_FMT, px_strerror(rc), POLICY_ARGS(p));
            int64_t s = 0;
            for (int64_t i = 0; i < check_limit(p); ++i) {
                int in_range = i >= p.begin && i < p.end;
                /* Plain ifs in per-index loops: every passing ck_assert costs Check a write. */
                if (!in_range) {
                    if (out[i] != -777)
                        ck_abort_msg("scan wrote outside the range at %lld", (long long)i);
                    continue;
                }
                int64_t want = inclusive ? s + in[i] : s;
                if (out[i] != want)
                    ck_abort_msg("%s %s scan: out[%lld] = %lld, expected %lld, " POLICY_FMT,
                                 kernel ? "PX_SCAN" : "_fn", inclusive ? "inclusive" : "exclusive",
                                 (long long)i, (long long)out[i], (long long)want, POLICY_ARGS(p));
                if (atomic_load(&fv[i]) != 1)
                    ck_abort_msg("index %lld had %d final-pass visits, " POLICY_FMT, (long long)i,
                                 atomic_load(&fv[i]), POLICY_ARGS(p));
                s += in[i];
            }
            ck_assert_msg(total == s, "scan total %lld, expected %lld, " POLICY_FMT,
                          (long long)total, (long long)s, POLICY_ARGS(p));
        }
        /* total NULL is allowed. */
        scan_args a = {in, out, 0, fv};
        ck_assert_int_eq(px_parallel_scan_fn(space, NULL, p, scan_fn, &a, &px_sum_i64, NULL),
                         PX_OK);
        ck_assert_int_eq(px_parallel_scan(space, NULL, p, &k_scan, &a, sizeof a, &px_sum_i64, NULL),
                         PX_OK);
    }
    free(in);
    free(out);
    free(fv);
}
END_TEST

/* A scan with the order-sensitive concat reducer: the exclusive prefix seen by the final pass
 * at i is exactly [begin, i - 1]. */
typedef struct {
    int64_t begin;
    atomic_int *bad;
} cscan_args;

static int concat_is_prefix(const concat *c, int64_t begin, int64_t i)
{
    if (!c->ok)
        return 0;
    if (i == begin)
        return c->lo > c->hi;
    return c->lo == begin && c->hi == i - 1;
}

static void cscan_fn(int64_t b, int64_t e, void *ctx, void *partial, int final_pass)
{
    const cscan_args *a = ctx;
    for (int64_t i = b; i < e; ++i) {
        if (final_pass && !concat_is_prefix(partial, a->begin, i))
            atomic_fetch_add_explicit(a->bad, 1, memory_order_relaxed);
        concat_push(partial, i);
    }
}

PX_SCAN(k_cscan, cscan_args, concat, i, a, partial, final_pass)
{
    if (final_pass && !concat_is_prefix(partial, a->begin, i))
        atomic_fetch_add_explicit(a->bad, 1, memory_order_relaxed);
    concat_push(partial, i);
}

START_TEST(test_scan_with_noncommutative_reducer_sees_exact_prefixes)
{
    atomic_int bad;
    for (size_t k = 0; k < N_POLICIES; ++k) {
        px_range_policy p = grid_policy(k);
        for (int kernel = 0; kernel < 2; ++kernel) {
            atomic_init(&bad, 0);
            cscan_args a = {p.begin, &bad};
            concat total;
            fill_garbage(&total, sizeof total);
            int rc = kernel ? px_parallel_scan(space, "cscan_k", p, &k_cscan, &a, sizeof a,
                                               &concat_reducer, &total)
                            : px_parallel_scan_fn(space, "cscan", p, cscan_fn, &a, &concat_reducer,
                                                  &total);
            ck_assert_int_eq(rc, PX_OK);
            ck_assert_msg(atomic_load(&bad) == 0,
                          "%s: %d final-pass prefixes were not [begin, i), " POLICY_FMT,
                          kernel ? "PX_SCAN" : "_fn", atomic_load(&bad), POLICY_ARGS(p));
            ck_assert(total.ok == 1);
            if (p.begin == p.end)
                ck_assert(total.lo > total.hi);
            else
                ck_assert(total.lo == p.begin && total.hi == p.end - 1);
        }
    }
}
END_TEST

/* ---- bad input ---------------------------------------------------------------------------------
 */

/* Each bad policy must give `want` from all six launch forms, run nothing, leave the result
 * untouched and log a message. */
static void expect_policy_status(px_range_policy p, int want, const char *what)
{
    atomic_store(&bad_calls, 0);
    int64_t r, before;
    fill_garbage(&r, sizeof r);
    before = r;
    no_args na = {0};
    atomic_int dummy;
    atomic_init(&dummy, 0);
    count_args ca = {NULL, 0, 0, &dummy};
    scan_args sa = {NULL, NULL, 0, NULL};
    int rcs[6];
    px_test_log_clear();
    rcs[0] = px_parallel_for_fn(space, what, p, never_for, NULL);
    rcs[1] = px_parallel_reduce_fn(space, what, p, never_reduce, NULL, &px_sum_i64, &r);
    rcs[2] = px_parallel_scan_fn(space, what, p, never_scan, NULL, &px_sum_i64, &r);
    rcs[3] = px_parallel_for(space, what, p, &k_count, &ca, sizeof ca);
    rcs[4] = px_parallel_reduce(space, what, p, &k_sum_index, &na, sizeof na, &px_sum_i64, &r);
    rcs[5] = px_parallel_scan(space, what, p, &k_scan, &sa, sizeof sa, &px_sum_i64, &r);
    for (int j = 0; j < 6; ++j)
        ck_assert_msg(rcs[j] == want, "%s: launch form %d returned %s, expected %s", what, j,
                      px_strerror(rcs[j]), px_strerror(want));
    ck_assert_msg(atomic_load(&bad_calls) == 0, "%s: a kernel ran", what);
    ck_assert_msg(atomic_load(&dummy) == 0, "%s: a kernel ran", what);
    ck_assert_msg(r == before, "%s: the result was written", what);
    ck_assert_msg(px_test_log_text()[0] != '\0', "%s: nothing was logged", what);
}

static void bad_setup(void)
{
    setup();
    px_test_log_capture();
}

START_TEST(test_begin_after_end_is_einval)
{
    expect_policy_status(px_range(10, 9), PX_EINVAL, "begin_after_end");
    expect_policy_status(px_range_chunked(13, 0, 7, PX_SCHEDULE_DYNAMIC), PX_EINVAL,
                         "begin_after_end_dynamic");
}
END_TEST

START_TEST(test_negative_chunk_is_einval)
{
    expect_policy_status(px_range_chunked(0, 100, -1, PX_SCHEDULE_STATIC), PX_EINVAL,
                         "negative_chunk_static");
    expect_policy_status(px_range_chunked(0, 100, -64, PX_SCHEDULE_DYNAMIC), PX_EINVAL,
                         "negative_chunk_dynamic");
}
END_TEST

START_TEST(test_unknown_schedule_is_einval)
{
    px_range_policy p = px_range(0, 100);
    p.schedule = (px_schedule)7;
    expect_policy_status(p, PX_EINVAL, "schedule_7");
    p.schedule = (px_schedule)-1;
    expect_policy_status(p, PX_EINVAL, "schedule_minus_1");
}
END_TEST

START_TEST(test_range_length_overflow_is_einval)
{
    expect_policy_status(px_range(INT64_MIN, INT64_MAX), PX_EINVAL, "overflow_full");
    expect_policy_status(px_range(-2, INT64_MAX), PX_EINVAL, "overflow_near");
    ck_assert_int_eq(px_range_validate(px_range(INT64_MIN, INT64_MAX)), PX_EINVAL);
}
END_TEST

START_TEST(test_null_function_or_reducer_or_result_is_efault)
{
    px_range_policy p = px_range(0, 10);
    int64_t r;
    no_args na = {0};
    ck_assert_int_eq(px_parallel_for_fn(space, "null", p, NULL, NULL), PX_EFAULT);
    ck_assert_int_eq(px_parallel_reduce_fn(space, "null", p, NULL, NULL, &px_sum_i64, &r),
                     PX_EFAULT);
    ck_assert_int_eq(px_parallel_reduce_fn(space, "null", p, sum_index_fn, NULL, NULL, &r),
                     PX_EFAULT);
    ck_assert_int_eq(px_parallel_reduce_fn(space, "null", p, sum_index_fn, NULL, &px_sum_i64, NULL),
                     PX_EFAULT);
    ck_assert_int_eq(px_parallel_scan_fn(space, "null", p, NULL, NULL, &px_sum_i64, &r), PX_EFAULT);
    ck_assert_int_eq(px_parallel_scan_fn(space, "null", p, never_scan, NULL, NULL, &r), PX_EFAULT);
    ck_assert_int_eq(px_parallel_for(space, "null", p, NULL, &na, sizeof na), PX_EFAULT);
    ck_assert_int_eq(px_parallel_reduce(space, "null", p, NULL, &na, sizeof na, &px_sum_i64, &r),
                     PX_EFAULT);
    ck_assert_int_eq(px_parallel_reduce(space, "null", p, &k_sum_index, &na, sizeof na, NULL, &r),
                     PX_EFAULT);
    ck_assert_int_eq(
        px_parallel_reduce(space, "null", p, &k_sum_index, &na, sizeof na, &px_sum_i64, NULL),
        PX_EFAULT);
    ck_assert_int_eq(
        px_parallel_reduce(space, "null", p, &k_sum_index, NULL, sizeof na, &px_sum_i64, &r),
        PX_EFAULT);
    ck_assert_int_eq(px_parallel_scan(space, "null", p, NULL, &na, sizeof na, &px_sum_i64, &r),
                     PX_EFAULT);
    ck_assert_int_eq(px_reducer_validate(NULL), PX_EFAULT);
    ck_assert_int_eq(atomic_load(&bad_calls), 0);
}
END_TEST

START_TEST(test_args_size_mismatch_is_einval)
{
    px_range_policy p = px_range(0, 10);
    int64_t r;
    axpy_args aa = {0};
    no_args na = {0};
    ck_assert_int_eq(px_parallel_for(space, "size", p, &k_axpy, &aa, sizeof aa - 1), PX_EINVAL);
    ck_assert_int_eq(px_parallel_for(space, "size", p, &k_axpy, &aa, sizeof aa + 8), PX_EINVAL);
    ck_assert_int_eq(
        px_parallel_reduce(space, "size", p, &k_sum_index, &na, 2 * sizeof na, &px_sum_i64, &r),
        PX_EINVAL);
    scan_args sa = {0};
    ck_assert_int_eq(px_parallel_scan(space, "size", p, &k_scan, &sa, 0, &px_sum_i64, &r),
                     PX_EINVAL);
}
END_TEST

START_TEST(test_wrong_kernel_kind_or_value_size_is_einval)
{
    px_range_policy p = px_range(0, 10);
    int64_t r;
    double d;
    no_args na = {0};
    scan_args sa = {0};
    axpy_args aa = {0};
    /* A reduce kernel launched as a for, a for kernel as a reduce, a scan kernel as a reduce. */
    ck_assert_int_eq(px_parallel_for(space, "kind", p, &k_sum_index, &na, sizeof na), PX_EINVAL);
    ck_assert_int_eq(px_parallel_reduce(space, "kind", p, &k_axpy, &aa, sizeof aa, &px_sum_f64, &d),
                     PX_EINVAL);
    ck_assert_int_eq(px_parallel_reduce(space, "kind", p, &k_scan, &sa, sizeof sa, &px_sum_i64, &r),
                     PX_EINVAL);
    ck_assert_int_eq(
        px_parallel_scan(space, "kind", p, &k_sum_index, &na, sizeof na, &px_sum_i64, &r),
        PX_EINVAL);
    /* A reducer whose value size is not the kernel's VALUE. */
    px_valloc_f64 vl;
    ck_assert_int_eq(
        px_parallel_reduce(space, "vsize", p, &k_sum_index, &na, sizeof na, &px_minloc_f64, &vl),
        PX_EINVAL);
    /* A forged kernel object without the magic. */
    px_kernel forged = k_count;
    forged.magic = 0;
    atomic_int dummy;
    atomic_init(&dummy, 0);
    count_args ca = {NULL, 0, 0, &dummy};
    ck_assert_int_eq(px_parallel_for(space, "forged", p, &forged, &ca, sizeof ca), PX_EINVAL);
    ck_assert_int_eq(atomic_load(&dummy), 0);
}
END_TEST

START_TEST(test_invalid_custom_reducer_is_einval)
{
    px_range_policy p = px_range(0, 10);
    unsigned char v[16];
    px_reducer r = sum3_reducer;
    r.value_size = 0;
    ck_assert_int_eq(px_reducer_validate(&r), PX_EINVAL);
    ck_assert_int_eq(px_parallel_reduce_fn(space, "vs0", p, never_reduce, NULL, &r, v), PX_EINVAL);
    r = sum3_reducer;
    r.value_size = PX_REDUCER_MAX_VALUE_BYTES + 1;
    ck_assert_int_eq(px_reducer_validate(&r), PX_EINVAL);
    r = sum3_reducer;
    r.value_align = 3;
    ck_assert_int_eq(px_reducer_validate(&r), PX_EINVAL);
    r = sum3_reducer;
    r.join = NULL;
    ck_assert_int_eq(px_reducer_validate(&r), PX_EINVAL);
    ck_assert_int_eq(px_parallel_scan_fn(space, "nojoin", p, never_scan, NULL, &r, v), PX_EINVAL);
    r = sum3_reducer;
    r.identity = NULL;
    ck_assert_int_eq(px_reducer_validate(&r), PX_EINVAL);
    ck_assert_int_eq(atomic_load(&bad_calls), 0);
}
END_TEST

/* Host function kernels cannot run on a device space: PX_EINVAL (only where a GPU is present). */
START_TEST(test_host_function_on_device_space_is_einval)
{
    px_space *cuda = px_space_by_name("cuda");
    if (!cuda || px_space_host_accessible(cuda))
        return; /* no device space on this machine */
    int64_t r = -1;
    ck_assert_int_eq(px_parallel_for_fn(cuda, "host_on_device", px_range(0, 10), never_for, NULL),
                     PX_EINVAL);
    ck_assert_int_eq(px_parallel_reduce_fn(cuda, "host_on_device", px_range(0, 10), never_reduce,
                                           NULL, &px_sum_i64, &r),
                     PX_EINVAL);
    ck_assert_int_eq(px_parallel_scan_fn(cuda, "host_on_device", px_range(0, 10), never_scan, NULL,
                                         &px_sum_i64, &r),
                     PX_EINVAL);
    ck_assert_int_eq(r, -1);
    ck_assert_int_eq(atomic_load(&bad_calls), 0);
}
END_TEST

/* Launches before px_initialize (no fixture) and after px_finalize are PX_ENOTINIT. */
static void expect_not_initialized(void)
{
    px_range_policy p = px_range(0, 10);
    int64_t r;
    no_args na = {0};
    px_test_log_capture(); /* keeps the expected error lines out of the test output */
    ck_assert_int_eq(px_is_initialized(), 0);
    ck_assert_ptr_null(px_space_by_name("serial"));
    ck_assert_int_eq(px_parallel_for_fn(NULL, "ni", p, never_for, NULL), PX_ENOTINIT);
    ck_assert_int_eq(px_parallel_reduce_fn(NULL, "ni", p, never_reduce, NULL, &px_sum_i64, &r),
                     PX_ENOTINIT);
    ck_assert_int_eq(px_parallel_scan_fn(NULL, "ni", p, never_scan, NULL, &px_sum_i64, &r),
                     PX_ENOTINIT);
    ck_assert_int_eq(
        px_parallel_reduce(NULL, "ni", p, &k_sum_index, &na, sizeof na, &px_sum_i64, &r),
        PX_ENOTINIT);
    ck_assert_int_eq(px_fence(NULL), PX_ENOTINIT);
    ck_assert_int_eq(atomic_load(&bad_calls), 0);
    ck_assert_msg(px_test_log_text()[0] != '\0', "PX_ENOTINIT was not logged");
    px_log_set_handler(NULL, NULL);
}

START_TEST(test_launch_before_initialize_is_enotinit)
{
    expect_not_initialized();
}
END_TEST

START_TEST(test_launch_after_finalize_is_enotinit)
{
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
    expect_not_initialized();
    /* And the runtime comes back. */
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    int64_t r = -1;
    ck_assert_int_eq(
        px_parallel_reduce_fn(NULL, "again", px_range(0, 10), sum_index_fn, NULL, &px_sum_i64, &r),
        PX_OK);
    ck_assert_int_eq(r, 45);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

/* ---- suite -------------------------------------------------------------------------------------
 */

static Suite *conformance_suite(void)
{
    Suite *s = suite_create("conformance");

    TCase *tc = tcase_create("for");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_for_fn_visits_every_index_exactly_once);
    tcase_add_test(tc, test_for_kernel_visits_every_index_exactly_once);
    tcase_add_test(tc, test_for_kernel_and_fn_produce_identical_output);
    suite_add_tcase(s, tc);

    tc = tcase_create("reduce");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_reduce_sum_of_indices_fn_and_kernel_match_closed_form);
    tcase_add_test(tc, test_reduce_float_sums_are_bitwise_reproducible);
    tcase_add_test(tc, test_builtin_reducers_have_kokkos_value_sizes_and_identities);
    tcase_add_test(tc, test_empty_range_reduce_overwrites_result_with_identity);
    tcase_add_test(tc, test_builtin_reducers_match_sequential_fold);
    tcase_add_test(tc, test_minloc_maxloc_kernels_pick_lowest_index_on_ties);
    tcase_add_test(tc, test_custom_struct_reducer_computes_three_sums);
    tcase_add_test(tc, test_noncommutative_reducers_join_in_index_order);
    suite_add_tcase(s, tc);

    tc = tcase_create("scan");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_scan_prefixes_and_totals_exclusive_and_inclusive);
    tcase_add_test(tc, test_scan_with_noncommutative_reducer_sees_exact_prefixes);
    suite_add_tcase(s, tc);

    tc = tcase_create("bad_input");
    tcase_add_checked_fixture(tc, bad_setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_begin_after_end_is_einval);
    tcase_add_test(tc, test_negative_chunk_is_einval);
    tcase_add_test(tc, test_unknown_schedule_is_einval);
    tcase_add_test(tc, test_range_length_overflow_is_einval);
    tcase_add_test(tc, test_null_function_or_reducer_or_result_is_efault);
    tcase_add_test(tc, test_args_size_mismatch_is_einval);
    tcase_add_test(tc, test_wrong_kernel_kind_or_value_size_is_einval);
    tcase_add_test(tc, test_invalid_custom_reducer_is_einval);
    tcase_add_test(tc, test_host_function_on_device_space_is_einval);
    suite_add_tcase(s, tc);

    tc = tcase_create("not_initialized");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_launch_before_initialize_is_enotinit);
    tcase_add_test(tc, test_launch_after_finalize_is_enotinit);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(conformance_suite());
}
