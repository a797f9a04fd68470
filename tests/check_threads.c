/* tests/check_threads.c - the Threads execution space: schedules visit every index exactly once,
 * reductions and scans are reproducible and join in index order, concurrent and nested
 * launches, idle CPU cost, wait policies, settings errors, oversubscription.
 * Registered with PX_NUM_THREADS = 1, 2, 3, 4, 8 (tests/threads.cmake). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/os.h"
#include "px_test.h"
#include "spaces/threads/threads.h"

static px_space *threads(void)
{
    px_space *s = px_space_by_name("threads");
    ck_assert_ptr_nonnull(s);
    return s;
}

static int env_threads(void)
{
    return px_test_env_int("PX_NUM_THREADS", 0);
}

static void sum_values(int64_t b, int64_t e, void *ctx, void *acc);

/* ---- exactly once --------------------------------------------------------------------------- */

typedef struct {
    int64_t base;
    atomic_int *count;
    atomic_int calls;
    int64_t max_call; /* largest end - begin seen */
    int64_t chunk;    /* explicit chunk size, 0 automatic */
    atomic_int misaligned;
} visit_ctx;

static void visit(int64_t b, int64_t e, void *vctx)
{
    visit_ctx *c = vctx;
    atomic_fetch_add(&c->calls, 1);
    if (c->chunk > 0 && ((b - c->base) % c->chunk != 0 || e - b > c->chunk))
        atomic_fetch_add(&c->misaligned, 1);
    for (int64_t i = b; i < e; ++i)
        atomic_fetch_add_explicit(&c->count[i - c->base], 1, memory_order_relaxed);
}

static void check_exactly_once(int64_t base, int64_t n, int64_t chunk, px_schedule sched)
{
    visit_ctx c = {.base = base, .chunk = chunk};
    c.count = calloc((size_t)n + 1, sizeof *c.count);
    ck_assert_ptr_nonnull(c.count);
    int rc = px_parallel_for_fn(threads(), "once", px_range_chunked(base, base + n, chunk, sched),
                                visit, &c);
    ck_assert_int_eq(rc, PX_OK);
    for (int64_t i = 0; i < n; ++i)
        ck_assert_msg(atomic_load(&c.count[i]) == 1,
                      "index %lld visited %d times (n %lld chunk %lld %s)", (long long)(base + i),
                      atomic_load(&c.count[i]), (long long)n, (long long)chunk,
                      sched == PX_SCHEDULE_STATIC ? "static" : "dynamic");
    ck_assert_int_eq(atomic_load(&c.misaligned), 0);
    free(c.count);
}

static const int64_t sizes[] = {1, 2, 3, 5, 7, 8, 63, 64, 65, 1000, 4099};
static const int64_t chunks[] = {0, 1, 2, 3, 7, 64, 1000, 100000};
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

START_TEST(test_static_for_visits_every_index_once)
{
    for (size_t i = 0; i < N_OF(sizes); ++i)
        for (size_t k = 0; k < N_OF(chunks); ++k) {
            check_exactly_once(0, sizes[i], chunks[k], PX_SCHEDULE_STATIC);
            check_exactly_once(-17, sizes[i], chunks[k], PX_SCHEDULE_STATIC);
        }
}
END_TEST

START_TEST(test_dynamic_for_visits_every_index_once_in_both_claim_modes)
{
    pxi_threads_dynamic_mode modes[] = {PXI_DYNAMIC_STEAL, PXI_DYNAMIC_SHARED};
    for (int m = 0; m < 2; ++m) {
        pxi_threads_set_dynamic_mode(modes[m]);
        for (size_t i = 0; i < N_OF(sizes); ++i)
            for (size_t k = 0; k < N_OF(chunks); ++k) {
                check_exactly_once(0, sizes[i], chunks[k], PX_SCHEDULE_DYNAMIC);
                check_exactly_once(1000003, sizes[i], chunks[k], PX_SCHEDULE_DYNAMIC);
            }
    }
    pxi_threads_set_dynamic_mode(PXI_DYNAMIC_STEAL);
}
END_TEST

START_TEST(test_static_auto_chunk_calls_each_rank_once)
{
    visit_ctx c = {.base = 0};
    c.count = calloc(10000, sizeof *c.count);
    ck_assert_int_eq(px_parallel_for_fn(threads(), "blocks", px_range(0, 10000), visit, &c), PX_OK);
    ck_assert_int_le(atomic_load(&c.calls), px_space_concurrency(threads()));
    free(c.count);
}
END_TEST

START_TEST(test_empty_range_runs_nothing_and_reduce_gives_identity)
{
    visit_ctx c = {.base = 0};
    c.count = calloc(1, sizeof *c.count);
    ck_assert_int_eq(px_parallel_for_fn(threads(), "empty", px_range(5, 5), visit, &c), PX_OK);
    ck_assert_int_eq(atomic_load(&c.calls), 0);
    double m = 0;
    ck_assert_int_eq(px_parallel_reduce_fn(threads(), "empty", px_range(3, 3), sum_values, NULL,
                                           &px_min_f64, &m),
                     PX_OK);
    ck_assert(m > 1e308);
    free(c.count);
}
END_TEST

/* ---- reductions ----------------------------------------------------------------------------- */

static double value_at(int64_t i)
{
    /* Magnitudes spread over 1e-8 .. 1e8 so that the summation order changes the bits. */
    uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull;
    double m = (double)(h >> 11) / 9007199254740992.0;
    int ex = (int)((h >> 3) % 17) - 8;
    double s = 1;
    while (ex > 0) {
        s *= 10;
        --ex;
    }
    while (ex < 0) {
        s /= 10;
        ++ex;
    }
    return (h & 1 ? m : -m) * s;
}

static void sum_values(int64_t b, int64_t e, void *ctx, void *acc)
{
    (void)ctx;
    double *a = acc;
    for (int64_t i = b; i < e; ++i)
        *a += value_at(i);
}

START_TEST(test_reductions_are_bitwise_reproducible)
{
    px_schedule scheds[] = {PX_SCHEDULE_STATIC, PX_SCHEDULE_DYNAMIC};
    int64_t cs[] = {0, 1, 13, 4096};
    for (int s = 0; s < 2; ++s)
        for (size_t k = 0; k < N_OF(cs); ++k) {
            double first = 0;
            for (int rep = 0; rep < 5; ++rep) {
                double v = 0;
                ck_assert_int_eq(px_parallel_reduce_fn(threads(), "sum",
                                                       px_range_chunked(0, 30011, cs[k], scheds[s]),
                                                       sum_values, NULL, &px_sum_f64, &v),
                                 PX_OK);
                if (rep == 0)
                    first = v;
                ck_assert_msg(memcmp(&v, &first, sizeof v) == 0, "sum %.17g then %.17g", first, v);
            }
        }
}
END_TEST

static void sum_index(int64_t b, int64_t e, void *ctx, void *acc)
{
    (void)ctx;
    for (int64_t i = b; i < e; ++i)
        *(int64_t *)acc += i;
}

START_TEST(test_integer_sum_is_exact_for_every_schedule)
{
    for (int s = 0; s < 2; ++s)
        for (size_t i = 0; i < N_OF(sizes); ++i)
            for (size_t k = 0; k < N_OF(chunks); ++k) {
                int64_t n = sizes[i], v = -1;
                ck_assert_int_eq(
                    px_parallel_reduce_fn(threads(), "isum",
                                          px_range_chunked(0, n, chunks[k], (px_schedule)s),
                                          sum_index, NULL, &px_sum_i64, &v),
                    PX_OK);
                ck_assert_int_eq(v, n * (n - 1) / 2);
            }
}
END_TEST

/* An interval [lo, hi) reducer whose join is associative and not commutative: it stays "ok" only
 * when every join puts the lower adjacent range on the left, i.e. the sequential order. */
typedef struct {
    int64_t lo, hi;
    int64_t ok; /* 1, or 0 once two ranges were joined out of order */
    int64_t empty;
} interval;

static void interval_identity(void *v)
{
    *(interval *)v = (interval){0, 0, 1, 1};
}

static void interval_join(void *dst, const void *src)
{
    interval *d = dst;
    const interval *s = src;
    if (s->empty) {
        d->ok = d->ok && s->ok;
        return;
    }
    if (d->empty) {
        *d = *s;
        return;
    }
    d->ok = d->ok && s->ok && d->hi == s->lo;
    d->hi = s->hi;
}

static const px_reducer interval_reducer =
    PX_REDUCER_INIT(interval, interval_identity, interval_join, "interval");

static void interval_fold(int64_t b, int64_t e, void *ctx, void *acc)
{
    (void)ctx;
    for (int64_t i = b; i < e; ++i) {
        interval one = {i, i + 1, 1, 0};
        interval_join(acc, &one);
    }
}

START_TEST(test_non_commutative_reduction_gives_sequential_answer)
{
    pxi_threads_dynamic_mode modes[] = {PXI_DYNAMIC_STEAL, PXI_DYNAMIC_SHARED};
    for (int m = 0; m < 2; ++m) {
        pxi_threads_set_dynamic_mode(modes[m]);
        for (int s = 0; s < 2; ++s)
            for (size_t i = 0; i < N_OF(sizes); ++i)
                for (size_t k = 0; k < N_OF(chunks); ++k) {
                    interval v;
                    int64_t n = sizes[i];
                    ck_assert_int_eq(px_parallel_reduce_fn(
                                         threads(), "interval",
                                         px_range_chunked(-3, n - 3, chunks[k], (px_schedule)s),
                                         interval_fold, NULL, &interval_reducer, &v),
                                     PX_OK);
                    ck_assert_int_eq(v.ok, 1);
                    ck_assert_int_eq(v.empty, 0);
                    ck_assert_int_eq(v.lo, -3);
                    ck_assert_int_eq(v.hi, n - 3);
                }
    }
}
END_TEST

START_TEST(test_dynamic_reduce_with_more_chunks_than_slots_is_exact)
{
    int64_t n = 3 * PXI_THREADS_MAX_UNITS + 17, v = 0;
    ck_assert_int_eq(px_parallel_reduce_fn(threads(), "many",
                                           px_range_chunked(0, n, 1, PX_SCHEDULE_DYNAMIC),
                                           sum_index, NULL, &px_sum_i64, &v),
                     PX_OK);
    ck_assert_int_eq(v, n * (n - 1) / 2);
    interval iv;
    ck_assert_int_eq(px_parallel_reduce_fn(threads(), "many",
                                           px_range_chunked(0, n, 1, PX_SCHEDULE_DYNAMIC),
                                           interval_fold, NULL, &interval_reducer, &iv),
                     PX_OK);
    ck_assert(iv.ok && iv.lo == 0 && iv.hi == n);
}
END_TEST

/* A 256-byte value: the largest a reducer may have. */
typedef struct {
    int64_t v[PX_REDUCER_MAX_VALUE_BYTES / 8];
} big;

static void big_identity(void *v)
{
    memset(v, 0, sizeof(big));
}

static void big_join(void *dst, const void *src)
{
    big *d = dst;
    const big *s = src;
    for (size_t i = 0; i < N_OF(d->v); ++i)
        d->v[i] += s->v[i];
}

static void big_fold(int64_t b, int64_t e, void *ctx, void *acc)
{
    (void)ctx;
    big *a = acc;
    for (int64_t i = b; i < e; ++i)
        a->v[i % (int64_t)N_OF(a->v)] += i;
}

START_TEST(test_largest_reduction_value_is_joined_whole)
{
    static const px_reducer big_reducer = PX_REDUCER_INIT(big, big_identity, big_join, "big");
    for (int s = 0; s < 2; ++s) {
        big v;
        int64_t n = 10007;
        ck_assert_int_eq(px_parallel_reduce_fn(threads(), "big",
                                               px_range_chunked(0, n, 0, (px_schedule)s), big_fold,
                                               NULL, &big_reducer, &v),
                         PX_OK);
        for (int64_t j = 0; j < (int64_t)N_OF(v.v); ++j) {
            int64_t want = 0;
            for (int64_t i = j; i < n; i += (int64_t)N_OF(v.v))
                want += i;
            ck_assert_int_eq(v.v[j], want);
        }
    }
}
END_TEST

/* ---- scan ----------------------------------------------------------------------------------- */

typedef struct {
    const int64_t *in;
    int64_t *out;
    int64_t base;
} scan_ctx;

static void xscan(int64_t b, int64_t e, void *vctx, void *partial, int final_pass)
{
    scan_ctx *c = vctx;
    int64_t *p = partial;
    for (int64_t i = b; i < e; ++i) {
        if (final_pass)
            c->out[i - c->base] = *p;
        *p += c->in[i - c->base];
    }
}

START_TEST(test_scan_gives_exact_exclusive_prefix)
{
    int64_t n_max = 4099;
    int64_t *in = malloc((size_t)n_max * sizeof *in), *out = malloc((size_t)n_max * sizeof *out);
    for (int64_t i = 0; i < n_max; ++i)
        in[i] = (i * 7919) % 1000 - 300;
    for (int s = 0; s < 2; ++s)
        for (size_t i = 0; i < N_OF(sizes); ++i)
            for (size_t k = 0; k < N_OF(chunks); ++k) {
                int64_t n = sizes[i], total = -1;
                scan_ctx c = {in, out, 5};
                memset(out, 0xff, (size_t)n * sizeof *out);
                ck_assert_int_eq(
                    px_parallel_scan_fn(threads(), "xscan",
                                        px_range_chunked(5, 5 + n, chunks[k], (px_schedule)s),
                                        xscan, &c, &px_sum_i64, &total),
                    PX_OK);
                int64_t run = 0;
                for (int64_t j = 0; j < n; ++j) {
                    ck_assert_msg(out[j] == run, "n %lld chunk %lld: out[%lld] = %lld, want %lld",
                                  (long long)n, (long long)chunks[k], (long long)j,
                                  (long long)out[j], (long long)run);
                    run += in[j];
                }
                ck_assert_int_eq(total, run);
            }
    free(in);
    free(out);
}
END_TEST

typedef struct {
    interval *prefix_of;
    int64_t base;
} iscan_ctx;

static void interval_scan(int64_t b, int64_t e, void *vctx, void *partial, int final_pass)
{
    iscan_ctx *c = vctx;
    for (int64_t i = b; i < e; ++i) {
        if (final_pass)
            c->prefix_of[i - c->base] = *(interval *)partial;
        interval one = {i, i + 1, 1, 0};
        interval_join(partial, &one);
    }
}

START_TEST(test_non_commutative_scan_gives_sequential_prefixes)
{
    int64_t n = 5003;
    iscan_ctx c = {calloc((size_t)n, sizeof(interval)), 10};
    interval total;
    ck_assert_int_eq(px_parallel_scan_fn(threads(), "iscan", px_range(10, 10 + n), interval_scan,
                                         &c, &interval_reducer, &total),
                     PX_OK);
    ck_assert(total.ok && total.lo == 10 && total.hi == 10 + n);
    ck_assert(c.prefix_of[0].empty);
    for (int64_t j = 1; j < n; ++j)
        ck_assert(c.prefix_of[j].ok && c.prefix_of[j].lo == 10 && c.prefix_of[j].hi == 10 + j);
    ck_assert_int_eq(px_parallel_scan_fn(threads(), "iscan", px_range(10, 10 + n), interval_scan,
                                         &c, &interval_reducer, NULL),
                     PX_OK);
    free(c.prefix_of);
}
END_TEST

/* ---- single-source kernels ------------------------------------------------------------------ */

typedef struct {
    double *y;
    const double *x;
} axpy_args;
PX_FOR(k_axpy, axpy_args, i, a)
{
    a->y[i] += 2.0 * a->x[i];
}
PX_REDUCE(k_sum, axpy_args, double, i, a, acc)
{
    *acc += a->y[i];
}
typedef struct {
    const int64_t *in;
    int64_t *out;
} xs_args;
PX_SCAN(k_xscan, xs_args, int64_t, i, a, partial, final_pass)
{
    if (final_pass)
        a->out[i] = *partial;
    *partial += a->in[i];
}

START_TEST(test_macro_kernels_run_on_threads)
{
    int n = 4097;
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    for (int i = 0; i < n; ++i) {
        x[i] = i;
        y[i] = 1;
    }
    axpy_args a = {y, x};
    ck_assert_int_eq(px_parallel_for(threads(), NULL, px_range(0, n), &k_axpy, &a, sizeof a),
                     PX_OK);
    double s = 0;
    ck_assert_int_eq(
        px_parallel_reduce(threads(), NULL, px_range(0, n), &k_sum, &a, sizeof a, &px_sum_f64, &s),
        PX_OK);
    ck_assert(s == (double)n + 2.0 * ((double)n * (n - 1) / 2));
    int64_t *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out), t = 0;
    for (int i = 0; i < n; ++i)
        in[i] = i % 5;
    xs_args xa = {in, out};
    ck_assert_int_eq(px_parallel_scan(threads(), NULL, px_range(0, n), &k_xscan, &xa, sizeof xa,
                                      &px_sum_i64, &t),
                     PX_OK);
    int64_t run = 0;
    for (int i = 0; i < n; ++i) {
        ck_assert_int_eq(out[i], run);
        run += in[i];
    }
    ck_assert_int_eq(t, run);
    free(x);
    free(y);
    free(in);
    free(out);
}
END_TEST

/* ---- concurrency ---------------------------------------------------------------------------- */

#define LAUNCHERS 4
#define LAUNCHES  10000

static void *launcher(void *arg)
{
    intptr_t id = (intptr_t)arg;
    intptr_t bad = 0;
    for (int k = 0; k < LAUNCHES; ++k) {
        int64_t n = 1 + (k + id) % 97, v = -1;
        px_schedule s = (k & 1) ? PX_SCHEDULE_DYNAMIC : PX_SCHEDULE_STATIC;
        int rc = px_parallel_reduce_fn(threads(), "conc", px_range_chunked(id, id + n, 0, s),
                                       sum_index, NULL, &px_sum_i64, &v);
        if (rc != PX_OK || v != n * id + n * (n - 1) / 2)
            ++bad;
    }
    return (void *)bad;
}

START_TEST(test_concurrent_launchers_get_correct_results)
{
    pthread_t t[LAUNCHERS];
    for (intptr_t i = 0; i < LAUNCHERS; ++i)
        ck_assert_int_eq(pthread_create(&t[i], NULL, launcher, (void *)i), 0);
    for (int i = 0; i < LAUNCHERS; ++i) {
        void *bad;
        pthread_join(t[i], &bad);
        ck_assert_int_eq((intptr_t)bad, 0);
    }
}
END_TEST

typedef struct {
    atomic_int bad;
    atomic_int in_kernel_deadlk;
} nest_ctx;

static void nested_outer(int64_t b, int64_t e, void *vctx)
{
    nest_ctx *c = vctx;
    for (int64_t i = b; i < e; ++i) {
        int64_t v = -1;
        int rc = px_parallel_reduce_fn(threads(), "inner", px_range_chunked(0, 100, 7, i & 1),
                                       sum_index, NULL, &px_sum_i64, &v);
        if (rc != PX_OK || v != 4950)
            atomic_fetch_add(&c->bad, 1);
        int64_t total = -1, out[10], in[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
        scan_ctx sc = {in, out, 0};
        rc = px_parallel_scan_fn(threads(), "inner_scan", px_range(0, 10), xscan, &sc, &px_sum_i64,
                                 &total);
        if (rc != PX_OK || total != 10 || out[9] != 9)
            atomic_fetch_add(&c->bad, 1);
        if (px_fence(threads()) == PX_EDEADLK)
            atomic_fetch_add(&c->in_kernel_deadlk, 1);
    }
}

START_TEST(test_nested_launch_runs_inline_without_deadlock)
{
    nest_ctx c = {0};
    px_test_log_capture(); /* the 64 expected px_fence errors stay out of the test output */
    ck_assert_int_eq(px_parallel_for_fn(threads(), "outer", px_range(0, 64), nested_outer, &c),
                     PX_OK);
    ck_assert_int_eq(atomic_load(&c.bad), 0);
    ck_assert_int_eq(atomic_load(&c.in_kernel_deadlk), 64);
    ck_assert_int_eq(px_fence(threads()), PX_OK);
}
END_TEST

static void noop(int64_t b, int64_t e, void *ctx)
{
    (void)b;
    (void)e;
    (void)ctx;
}

START_TEST(test_idle_runtime_burns_no_cpu)
{
    for (int k = 0; k < 2000; ++k)
        ck_assert_int_eq(px_parallel_for_fn(threads(), "burst", px_range(0, 64), noop, NULL),
                         PX_OK);
    int64_t c0 = pxi_os_process_cpu_ns();
    struct timespec ts = {1, 0};
    while (nanosleep(&ts, &ts) != 0) {
    }
    int64_t used = pxi_os_process_cpu_ns() - c0;
    ck_assert_msg(used < 50000000, "one idle second cost %.3f s of CPU", (double)used / 1e9);
}
END_TEST

/* ---- settings and lifecycle
 * ---------------------------------------------------------------------- */

static void check_bad_num_threads(const char *value)
{
    px_test_log_capture();
    setenv("PX_NUM_THREADS", value, 1);
    int rc = px_initialize(NULL, NULL);
    ck_assert_int_eq(rc, PX_EINVAL);
    ck_assert_msg(px_test_log_contains("PX_NUM_THREADS"), "log: %s", px_test_log_text());
    ck_assert_int_eq(px_is_initialized(), 0);
}

START_TEST(test_num_threads_zero_is_einval)
{
    check_bad_num_threads("0");
}
END_TEST

START_TEST(test_num_threads_negative_is_einval)
{
    check_bad_num_threads("-3");
}
END_TEST

START_TEST(test_num_threads_not_a_number_is_einval)
{
    check_bad_num_threads("abc");
}
END_TEST

static int64_t reduce_check(void)
{
    int64_t v = -1;
    ck_assert_int_eq(px_parallel_reduce_fn(threads(), "chk", px_range(0, 1000), sum_index, NULL,
                                           &px_sum_i64, &v),
                     PX_OK);
    return v;
}

START_TEST(test_more_threads_than_cores_works_with_a_warning)
{
    setenv("PX_LOG_LEVEL", "warn", 1); /* ctest runs with error; the warning must get through */
    px_test_log_capture();
    px_settings s;
    px_settings_default(&s);
    int cores = pxi_os_num_cpus();
    s.num_threads = 4 * cores > 8 ? 4 * cores : 8;
    ck_assert_int_eq(px_initialize_with(&s), PX_OK);
    ck_assert_int_eq(px_space_concurrency(threads()), s.num_threads);
    ck_assert_msg(strstr(px_test_log_text(), "cores") || strstr(px_test_log_text(), "oversub"),
                  "no oversubscription warning in: %s", px_test_log_text());
    ck_assert_int_eq(reduce_check(), 499500);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

static void run_with_env(const char *var, const char *val)
{
    setenv(var, val, 1);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    for (int k = 0; k < 200; ++k)
        ck_assert_int_eq(reduce_check(), 499500);
    ck_assert_int_eq(px_finalize(), PX_OK);
    unsetenv(var);
}

START_TEST(test_wait_policies_spin_budgets_and_bindings_give_correct_results)
{
    run_with_env("PX_WAIT_POLICY", "passive");
    run_with_env("PX_WAIT_POLICY", "active");
    run_with_env("PX_SPIN_US", "0");
    run_with_env("PX_SPIN_US", "5");
    run_with_env("PX_BIND", "none");
    run_with_env("PX_BIND", "spread");
}
END_TEST

/* Rank @r's PU after px_initialize with the environment as it is, then finalize. */
static int pu_of_rank_after_init(int r)
{
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    ck_assert_int_eq(reduce_check(), 499500);
    int pu = pxi_threads_pu_of_rank(threads(), r);
    ck_assert_int_eq(px_finalize(), PX_OK);
    return pu;
}

START_TEST(test_ranks_sharing_the_node_leave_threads_unbound_and_passive_unless_px_bind_says)
{
    /* A team that fits the process's processors: bound "close" by default. */
    const int cpus = pxi_os_num_cpus();
    char buf[32];
    snprintf(buf, sizeof buf, "%d", cpus);
    setenv("PX_NUM_THREADS", buf, 1);
    unsetenv("PX_BIND");
    unsetenv("MPI_LOCALNRANKS");
    unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    const int alone = pu_of_rank_after_init(0);
    /* mpirun --bind-to none with more ranks x threads than the node's processors
     * (core/oversub.h, rule "node"): every rank's rank 0 would share one PU; left unbound. */
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(buf, sizeof buf, "%ld", (online > 0 ? online : 1) / cpus + 1);
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", buf, 1);
    setenv("PX_LOG_LEVEL", "info", 1);
    px_test_log_capture();
    px_test_log_clear();
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    for (int r = 0; r < cpus; ++r)
        ck_assert_int_eq(pxi_threads_pu_of_rank(threads(), r), -1);
    /* ... and the pool's waits sleep after their few polls (libgomp's passive policy). */
    ck_assert_int_eq(pxi_threads_spin_ns(threads()), 0);
    ck_assert_int_eq(reduce_check(), 499500);
    ck_assert(px_test_log_contains("threads left unbound"));
    ck_assert_int_eq(px_finalize(), PX_OK);
    setenv("PX_LOG_LEVEL", "error", 1);
    /* An explicit PX_BIND wins over the default. */
    setenv("PX_BIND", "close", 1);
    ck_assert_int_eq(pu_of_rank_after_init(0), alone);
    unsetenv("PX_BIND");
    unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
}
END_TEST

START_TEST(test_structure_checker_passes_after_every_kind_of_launch)
{
    setenv("PX_DEBUG_CHECK", "1", 1);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    for (int m = 0; m < 2; ++m) {
        pxi_threads_set_dynamic_mode(m ? PXI_DYNAMIC_SHARED : PXI_DYNAMIC_STEAL);
        for (int s = 0; s < 2; ++s) {
            int64_t v = -1, t = -1, in[300], out[300];
            for (int i = 0; i < 300; ++i)
                in[i] = 1;
            scan_ctx sc = {in, out, 0};
            ck_assert_int_eq(px_parallel_reduce_fn(threads(), "chk",
                                                   px_range_chunked(0, 300, 7, (px_schedule)s),
                                                   sum_index, NULL, &px_sum_i64, &v),
                             PX_OK);
            ck_assert_int_eq(v, 44850);
            ck_assert_int_eq(px_parallel_scan_fn(threads(), "chk",
                                                 px_range_chunked(0, 300, 7, (px_schedule)s), xscan,
                                                 &sc, &px_sum_i64, &t),
                             PX_OK);
            ck_assert_int_eq(t, 300);
            visit_ctx c = {.base = 0, .chunk = 7};
            c.count = calloc(300, sizeof *c.count);
            ck_assert_int_eq(px_parallel_for_fn(threads(), "chk",
                                                px_range_chunked(0, 300, 7, (px_schedule)s), visit,
                                                &c),
                             PX_OK);
            free(c.count);
        }
    }
    pxi_threads_set_dynamic_mode(PXI_DYNAMIC_STEAL);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

START_TEST(test_bad_wait_policy_is_einval)
{
    px_test_log_capture();
    setenv("PX_WAIT_POLICY", "sometimes", 1);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_EINVAL);
    ck_assert(px_test_log_contains("PX_WAIT_POLICY"));
}
END_TEST

START_TEST(test_reinitialize_cycles_keep_working)
{
    for (int k = 0; k < 3; ++k) {
        ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
        ck_assert_int_eq(reduce_check(), 499500);
        ck_assert_int_eq(px_finalize(), PX_OK);
    }
}
END_TEST

START_TEST(test_print_configuration_shows_pool_and_ranks)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    px_print_configuration(f);
    fclose(f);
    ck_assert_msg(strstr(buf, "threads:") && strstr(buf, "wait policy") && strstr(buf, "rank 0"),
                  "configuration: %s", buf);
    free(buf);
}
END_TEST

START_TEST(test_concurrency_is_the_configured_thread_count)
{
    int t = env_threads();
    if (t > 0)
        ck_assert_int_eq(px_space_concurrency(threads()), t);
    else
        ck_assert_int_ge(px_space_concurrency(threads()), 1);
    void *p = px_malloc(threads(), 100);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq((intptr_t)p % 64, 0);
    ck_assert_int_eq(px_free(threads(), p), PX_OK);
}
END_TEST

START_TEST(test_allocation_failure_at_initialize_is_enomem_and_clean)
{
    px_test_log_capture(); /* each failed attempt logs; keep it out of the test output */
    int n;
    for (n = 1; n < 500; ++n) {
        pxi_alloc_fail_at((uint64_t)n);
        int rc = px_initialize(NULL, NULL);
        pxi_alloc_fail_at(0);
        if (rc == PX_OK)
            break;
        ck_assert_msg(rc == PX_ENOMEM, "allocation %d failing gave %s", n, px_strerror(rc));
        ck_assert_int_eq(px_is_initialized(), 0);
    }
    ck_assert_int_lt(n, 500);
    ck_assert_int_eq(reduce_check(), 499500);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

START_TEST(test_dynamic_reduce_slot_allocation_failure_is_enomem)
{
    px_test_log_capture();
    pxi_alloc_fail_at(1);
    int64_t v = -1;
    int rc =
        px_parallel_reduce_fn(threads(), "slots", px_range_chunked(0, 100, 1, PX_SCHEDULE_DYNAMIC),
                              sum_index, NULL, &px_sum_i64, &v);
    pxi_alloc_fail_at(0);
    ck_assert_int_eq(rc, PX_ENOMEM);
    ck_assert(px_test_log_contains("slots"));
    ck_assert_int_eq(px_parallel_reduce_fn(threads(), "slots",
                                           px_range_chunked(0, 100, 1, PX_SCHEDULE_DYNAMIC),
                                           sum_index, NULL, &px_sum_i64, &v),
                     PX_OK);
    ck_assert_int_eq(v, 4950);
}
END_TEST

static Suite *threads_suite(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = tcase_create("schedules");
    tcase_add_checked_fixture(tc, px_test_setup, px_test_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_static_for_visits_every_index_once);
    tcase_add_test(tc, test_dynamic_for_visits_every_index_once_in_both_claim_modes);
    tcase_add_test(tc, test_static_auto_chunk_calls_each_rank_once);
    tcase_add_test(tc, test_empty_range_runs_nothing_and_reduce_gives_identity);
    tcase_add_test(tc, test_reductions_are_bitwise_reproducible);
    tcase_add_test(tc, test_integer_sum_is_exact_for_every_schedule);
    tcase_add_test(tc, test_non_commutative_reduction_gives_sequential_answer);
    tcase_add_test(tc, test_dynamic_reduce_with_more_chunks_than_slots_is_exact);
    tcase_add_test(tc, test_largest_reduction_value_is_joined_whole);
    tcase_add_test(tc, test_scan_gives_exact_exclusive_prefix);
    tcase_add_test(tc, test_non_commutative_scan_gives_sequential_prefixes);
    tcase_add_test(tc, test_macro_kernels_run_on_threads);
    tcase_add_test(tc, test_print_configuration_shows_pool_and_ranks);
    tcase_add_test(tc, test_concurrency_is_the_configured_thread_count);
    tcase_add_test(tc, test_dynamic_reduce_slot_allocation_failure_is_enomem);
    suite_add_tcase(s, tc);

    TCase *cc = tcase_create("concurrency");
    tcase_add_checked_fixture(cc, px_test_setup, px_test_teardown);
    tcase_set_timeout(cc, 240);
    tcase_add_test(cc, test_concurrent_launchers_get_correct_results);
    tcase_add_test(cc, test_nested_launch_runs_inline_without_deadlock);
    tcase_add_test(cc, test_idle_runtime_burns_no_cpu);
    suite_add_tcase(s, cc);

    TCase *st = tcase_create("settings");
    tcase_set_timeout(st, 60);
    tcase_add_test(st, test_num_threads_zero_is_einval);
    tcase_add_test(st, test_num_threads_negative_is_einval);
    tcase_add_test(st, test_num_threads_not_a_number_is_einval);
    tcase_add_test(st, test_more_threads_than_cores_works_with_a_warning);
    tcase_add_test(st, test_wait_policies_spin_budgets_and_bindings_give_correct_results);
    tcase_add_test(st, test_bad_wait_policy_is_einval);
    tcase_add_test(
        st, test_ranks_sharing_the_node_leave_threads_unbound_and_passive_unless_px_bind_says);
    tcase_add_test(st, test_structure_checker_passes_after_every_kind_of_launch);
    tcase_add_test(st, test_reinitialize_cycles_keep_working);
    tcase_add_test(st, test_allocation_failure_at_initialize_is_enomem_and_clean);
    suite_add_tcase(s, st);
    return s;
}

int main(void)
{
    return px_test_run(threads_suite());
}
