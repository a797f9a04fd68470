/* tests/cuda/check_cuda.c - the Cuda space: launch conformance (sizes, offsets, schedules,
 * identities, reducers, scan, bad input), memory round trips, streams, and engine ops mixing
 * CPU and GPU work. Needs a GPU: without one the whole binary prints "SKIP: no CUDA device" and
 * exits 77, which ctest reports as skipped. Kernels are in cuda_kernels.cu (nvcc). */
#define _POSIX_C_SOURCE 200809L /* open_memstream, nanosleep */

#include <cuda_runtime_api.h>
#include <float.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/registry.h"
#include "cuda_kernels.h"
#include "px_test.h"

static px_space *cuda;
static px_space *host;

static void setup(void)
{
    px_test_setup();
    cuda = px_space_by_name("cuda");
    host = px_space_by_name("serial");
    ck_assert_ptr_nonnull(cuda);
    ck_assert_ptr_nonnull(host);
}

static void teardown(void)
{
    px_test_teardown();
}

static const int64_t sizes[] = {0, 1, 2, 1000, 1001, 100003};
static const int64_t begins[] = {0, 5, -3, (int64_t)1 << 40};
#define N_SIZES  (sizeof sizes / sizeof sizes[0])
#define N_BEGINS (sizeof begins / sizeof begins[0])

static void *dev_zeroed(size_t bytes)
{
    void *d = px_malloc(cuda, bytes);
    ck_assert_ptr_nonnull(d);
    void *z = calloc(1, bytes ? bytes : 1);
    ck_assert_int_eq(px_deep_copy(cuda, d, host, z, bytes), PX_OK);
    free(z);
    return d;
}

/* ---- space ------------------------------------------------------------------------------- */

START_TEST(test_cuda_space_reports_concurrency_and_device_properties)
{
    ck_assert_str_eq(px_space_name(cuda), "cuda");
    px_cuda_device_info info;
    ck_assert_int_eq(px_cuda_device_info_get(&info), PX_OK);
    ck_assert_int_gt(info.sm_count, 0);
    ck_assert_int_eq(px_space_concurrency(cuda), info.sm_count * info.max_threads_per_sm);
    ck_assert_int_eq(px_space_host_accessible(cuda), 0);
    ck_assert_ptr_nonnull(px_cuda_stream());
    ck_assert_int_eq(px_cuda_device_info_get(NULL), PX_EFAULT);
    ck_assert_int_eq(px_fence(cuda), PX_OK);
    ck_assert_int_eq(px_fence(NULL), PX_OK);

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    px_print_configuration(f);
    fclose(f);
    ck_assert_msg(strstr(buf, "cuda device") != NULL, "no device line in:\n%s", buf);
    ck_assert_msg(strstr(buf, info.name) != NULL, "device name missing in:\n%s", buf);
    free(buf);
}
END_TEST

START_TEST(test_cuda_is_the_default_space_when_available)
{
    const char *env = getenv("PX_DEFAULT_SPACE");
    if (env && *env)
        return;
    ck_assert_ptr_eq(px_default_space(), cuda);
}
END_TEST

/* ---- for --------------------------------------------------------------------------------- */

static void check_visits(int64_t b, int64_t n, px_range_policy p)
{
    int32_t *cnt = dev_zeroed((size_t)n * sizeof(int32_t));
    visit_args a = {cnt, b};
    ck_assert_int_eq(px_parallel_for(cuda, "visit", p, &k_visit, &a, sizeof a), PX_OK);
    int32_t *h = malloc((size_t)(n + 1) * sizeof(int32_t));
    ck_assert_int_eq(px_deep_copy(host, h, cuda, cnt, (size_t)n * sizeof(int32_t)), PX_OK);
    for (int64_t k = 0; k < n; ++k)
        ck_assert_msg(h[k] == 1, "begin %" PRId64 " n %" PRId64 ": index %" PRId64 " seen %d times",
                      b, n, b + k, h[k]);
    free(h);
    ck_assert_int_eq(px_free(cuda, cnt), PX_OK);
}

START_TEST(test_cuda_for_visits_every_index_exactly_once)
{
    for (size_t si = 0; si < N_SIZES; ++si)
        for (size_t bi = 0; bi < N_BEGINS; ++bi) {
            int64_t b = begins[bi], n = sizes[si];
            check_visits(b, n, px_range(b, b + n));
        }
}
END_TEST

START_TEST(test_cuda_for_ignores_chunk_size_and_schedule)
{
    /* The GPU schedules blocks itself: any chunk size and schedule visits each index once. */
    check_visits(3, 100003, px_range_chunked(3, 100006, 7, PX_SCHEDULE_DYNAMIC));
    check_visits(-9, 1001, px_range_chunked(-9, 992, 1, PX_SCHEDULE_STATIC));
    check_visits(0, 1000, px_range_chunked(0, 1000, 100000, PX_SCHEDULE_DYNAMIC));
}
END_TEST

START_TEST(test_cuda_for_copies_args_at_launch)
{
    const int64_t n = 100003;
    double *x = dev_zeroed((size_t)n * sizeof(double));
    fill_args a = {x, 0};
    ck_assert_int_eq(px_parallel_for(cuda, "fill", px_range(0, n), &k_fill, &a, sizeof a), PX_OK);
    a.x = NULL; /* the launch must already hold its own copy */
    a.base = 12345;
    ck_assert_int_eq(px_fence(cuda), PX_OK);
    double *h = malloc((size_t)n * sizeof(double));
    ck_assert_int_eq(px_deep_copy(host, h, cuda, x, (size_t)n * sizeof(double)), PX_OK);
    for (int64_t i = 0; i < n; ++i)
        ck_assert(h[i] == (double)(i % 1000) * 0.25);
    free(h);
    px_free(cuda, x);
}
END_TEST

/* ---- reduce ------------------------------------------------------------------------------- */

/* Run kernel k with reducer r on cuda and on serial (the same kernel's host path) and compare
 * the bytes: every kernel here folds exactly representable values. */
static void same_as_host(const px_kernel *k, const px_reducer *r, int64_t b, int64_t n)
{
    idx_args a = {b};
    unsigned char dv[64], hv[64];
    memset(dv, 0xA5, sizeof dv);
    memset(hv, 0x5A, sizeof hv);
    ck_assert_int_eq(px_parallel_reduce(cuda, "r", px_range(b, b + n), k, &a, sizeof a, r, dv),
                     PX_OK);
    ck_assert_int_eq(px_parallel_reduce(host, "r", px_range(b, b + n), k, &a, sizeof a, r, hv),
                     PX_OK);
    ck_assert_msg(memcmp(dv, hv, r->value_size) == 0, "%s with %s, begin %" PRId64 " n %" PRId64,
                  k->name, r->name, b, n);
}

START_TEST(test_cuda_builtin_reducers_match_host_fold)
{
    static const struct {
        const px_kernel *k;
        const px_reducer *r;
    } cases[] = {
        {&k_sum_f64, &px_sum_f64},   {&k_sum_f32, &px_sum_f32}, {&k_sum_i64, &px_sum_i64},
        {&k_prod_f64, &px_prod_f64}, {&k_min_f64, &px_min_f64}, {&k_max_f64, &px_max_f64},
        {&k_min_i64, &px_min_i64},   {&k_max_i64, &px_max_i64}, {&k_minloc, &px_minloc_f64},
        {&k_maxloc, &px_maxloc_f64}, {&k_land, &px_land},       {&k_lor, &px_lor},
        {&k_band, &px_band_u64},     {&k_bor, &px_bor_u64},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c)
        for (size_t si = 0; si < N_SIZES; ++si)
            for (size_t bi = 0; bi < 3; ++bi) /* small begins: sums stay exact */
                same_as_host(cases[c].k, cases[c].r, begins[bi], sizes[si]);
}
END_TEST

START_TEST(test_cuda_reduce_sum_matches_closed_form)
{
    for (size_t si = 0; si < N_SIZES; ++si) {
        int64_t n = sizes[si], b = 5;
        double d = -1;
        idx_args a = {b};
        ck_assert_int_eq(px_parallel_reduce(cuda, "sum", px_range(b, b + n), &k_sum_f64, &a,
                                            sizeof a, &px_sum_f64, &d),
                         PX_OK);
        ck_assert(d == (double)(n * (2 * b + n - 1) / 2));
        int64_t s = -1;
        ck_assert_int_eq(px_parallel_reduce(cuda, "sum", px_range(b, b + n), &k_sum_i64, &a,
                                            sizeof a, &px_sum_i64, &s),
                         PX_OK);
        ck_assert_int_eq(s, n * (2 * b + n - 1) / 2);
    }
}
END_TEST

START_TEST(test_cuda_empty_range_reduce_gives_identity)
{
    idx_args a = {0};
    double d = 42;
    ck_assert_int_eq(
        px_parallel_reduce(cuda, "e", px_range(7, 7), &k_min_f64, &a, sizeof a, &px_min_f64, &d),
        PX_OK);
    ck_assert(d == DBL_MAX);
    px_valloc_f64 v = {1, 1};
    ck_assert_int_eq(
        px_parallel_reduce(cuda, "e", px_range(7, 7), &k_maxloc, &a, sizeof a, &px_maxloc_f64, &v),
        PX_OK);
    ck_assert(v.val == -DBL_MAX && v.loc == INT64_MAX);
    int l = 0;
    ck_assert_int_eq(
        px_parallel_reduce(cuda, "e", px_range(0, 0), &k_land, &a, sizeof a, &px_land, &l), PX_OK);
    ck_assert_int_eq(l, 1);
    uint64_t u = 0;
    ck_assert_int_eq(
        px_parallel_reduce(cuda, "e", px_range(0, 0), &k_band, &a, sizeof a, &px_band_u64, &u),
        PX_OK);
    ck_assert(u == UINT64_MAX);
}
END_TEST

START_TEST(test_cuda_minloc_maxloc_pick_lowest_index_on_ties)
{
    idx_args a = {0};
    px_valloc_f64 v;
    ck_assert_int_eq(px_parallel_reduce(cuda, "ml", px_range(1, 100003), &k_minloc, &a, sizeof a,
                                        &px_minloc_f64, &v),
                     PX_OK);
    ck_assert(v.val == 0.0 && v.loc == 100);
    ck_assert_int_eq(px_parallel_reduce(cuda, "ml", px_range(1, 100003), &k_maxloc, &a, sizeof a,
                                        &px_maxloc_f64, &v),
                     PX_OK);
    ck_assert(v.val == 99.0 && v.loc == 99);
}
END_TEST

START_TEST(test_cuda_float_sum_is_bitwise_reproducible)
{
    const int64_t n = 100003;
    double *x = dev_zeroed((size_t)n * sizeof(double));
    fill_args f = {x, 0};
    ck_assert_int_eq(px_parallel_for(cuda, "fill", px_range(0, n), &k_fill, &f, sizeof f), PX_OK);
    double r1 = 0, r2 = 1;
    ck_assert_int_eq(
        px_parallel_reduce(cuda, "s", px_range(0, n), &k_sum_mem, &f, sizeof f, &px_sum_f64, &r1),
        PX_OK);
    ck_assert_int_eq(
        px_parallel_reduce(cuda, "s", px_range(0, n), &k_sum_mem, &f, sizeof f, &px_sum_f64, &r2),
        PX_OK);
    ck_assert(memcmp(&r1, &r2, sizeof r1) == 0);
    px_free(cuda, x);
}
END_TEST

START_TEST(test_cuda_custom_noncommutative_reducer_joins_in_index_order)
{
    for (size_t si = 1; si < N_SIZES; ++si)
        for (size_t bi = 0; bi < N_BEGINS; ++bi) {
            int64_t b = begins[bi], n = sizes[si];
            idx_args a = {b};
            run_value v = {0, 0, 0};
            ck_assert_int_eq(px_parallel_reduce(cuda, "run", px_range(b, b + n), &k_run, &a,
                                                sizeof a, &run_reducer, &v),
                             PX_OK);
            ck_assert_msg(v.lo == b && v.hi == b + n && v.ok == 1,
                          "begin %" PRId64 " n %" PRId64 ": [%" PRId64 ", %" PRId64 ") ok %" PRId64,
                          b, n, v.lo, v.hi, v.ok);
        }
}
END_TEST

START_TEST(test_cuda_custom_reducer_without_device_join_is_einval)
{
    px_test_log_capture();
    idx_args a = {0};
    run_value v;
    ck_assert_int_eq(px_parallel_reduce(cuda, "nodev", px_range(0, 10), &k_run_nodev, &a, sizeof a,
                                        &run_reducer, &v),
                     PX_EINVAL);
    ck_assert(px_test_log_contains("PX_REDUCER_DEVICE"));
}
END_TEST

START_TEST(test_cuda_builtin_reducer_of_other_value_type_is_einval)
{
    px_test_log_capture();
    idx_args a = {0};
    int64_t v;
    /* Same size (8 bytes), different bits: refused by the one launch check (core/launch.c),
     * before the backend sees it. */
    ck_assert_int_eq(px_parallel_reduce(cuda, "mismatch", px_range(0, 10), &k_sum_f64, &a, sizeof a,
                                        &px_sum_i64, &v),
                     PX_EINVAL);
    ck_assert(px_test_log_contains("folds double values but reducer"));
}
END_TEST

/* ---- scan --------------------------------------------------------------------------------- */

START_TEST(test_cuda_scan_writes_exclusive_prefix_and_total)
{
    for (size_t si = 0; si < N_SIZES; ++si)
        for (size_t bi = 0; bi < N_BEGINS; ++bi) {
            int64_t b = begins[bi], n = sizes[si];
            int64_t *out = dev_zeroed((size_t)n * sizeof(int64_t));
            scan_args a = {out, b};
            int64_t total = -1;
            ck_assert_int_eq(px_parallel_scan(cuda, "scan", px_range(b, b + n), &k_scan_i64, &a,
                                              sizeof a, &px_sum_i64, &total),
                             PX_OK);
            int64_t *h = malloc((size_t)(n + 1) * sizeof(int64_t));
            ck_assert_int_eq(px_deep_copy(host, h, cuda, out, (size_t)n * sizeof(int64_t)), PX_OK);
            int64_t s = 0;
            for (int64_t k = 0; k < n; ++k) {
                ck_assert_msg(h[k] == s, "begin %" PRId64 " n %" PRId64 " at %" PRId64, b, n, k);
                s += (b + k) % 7 + 1;
            }
            ck_assert_int_eq(total, s);
            /* total may be NULL */
            ck_assert_int_eq(px_parallel_scan(cuda, "scan", px_range(b, b + n), &k_scan_i64, &a,
                                              sizeof a, &px_sum_i64, NULL),
                             PX_OK);
            free(h);
            px_free(cuda, out);
        }
}
END_TEST

START_TEST(test_cuda_scan_with_custom_reducer_sees_exact_prefix_in_order)
{
    for (size_t si = 1; si < N_SIZES; ++si) {
        int64_t b = 11, n = sizes[si];
        int64_t *out = dev_zeroed((size_t)n * sizeof(int64_t));
        scan_run_args a = {out, b};
        run_value total;
        ck_assert_int_eq(px_parallel_scan(cuda, "scanrun", px_range(b, b + n), &k_scan_run, &a,
                                          sizeof a, &run_reducer, &total),
                         PX_OK);
        ck_assert(total.lo == b && total.hi == b + n && total.ok == 1);
        int64_t *h = malloc((size_t)n * sizeof(int64_t));
        ck_assert_int_eq(px_deep_copy(host, h, cuda, out, (size_t)n * sizeof(int64_t)), PX_OK);
        ck_assert_int_eq(h[0], b - 1);
        for (int64_t k = 1; k < n; ++k)
            ck_assert_msg(h[k] == b + k, "n %" PRId64 " at %" PRId64 ": %" PRId64, n, k, h[k]);
        free(h);
        px_free(cuda, out);
    }
}
END_TEST

/* ---- bad input ----------------------------------------------------------------------------- */

/* Compiled by gcc: no device half. */
PX_FOR(k_host_only, empty_args, i, a)
{
    (void)i;
    (void)a;
}

static void nop_for(int64_t b, int64_t e, void *ctx)
{
    (void)b;
    (void)e;
    (void)ctx;
}

START_TEST(test_cuda_bad_launches_are_refused_with_a_message)
{
    px_test_log_capture();
    empty_args a = {0};
    ck_assert_int_eq(px_parallel_for(cuda, "bad", px_range(5, 4), &k_empty, &a, sizeof a),
                     PX_EINVAL);
    ck_assert_int_eq(px_parallel_for(cuda, "bad", px_range_chunked(0, 4, -1, PX_SCHEDULE_STATIC),
                                     &k_empty, &a, sizeof a),
                     PX_EINVAL);
    ck_assert_int_eq(px_parallel_for(cuda, "bad", px_range(0, 4), &k_empty, &a, sizeof a + 1),
                     PX_EINVAL);
    px_test_log_clear();
    ck_assert_int_eq(px_parallel_for_fn(cuda, "fn", px_range(0, 4), nop_for, NULL), PX_EINVAL);
    ck_assert(px_test_log_contains("cuda"));
    px_test_log_clear();
    ck_assert_int_eq(px_parallel_for(cuda, "gcc", px_range(0, 4), &k_host_only, &a, sizeof a),
                     PX_EINVAL);
    ck_assert(px_test_log_contains("nvcc"));
    /* The space still works afterwards. */
    ck_assert_int_eq(px_parallel_for(cuda, "ok", px_range(0, 4), &k_empty, &a, sizeof a), PX_OK);
    ck_assert_int_eq(px_fence(cuda), PX_OK);
}
END_TEST

/* ---- memory -------------------------------------------------------------------------------- */

START_TEST(test_cuda_deep_copy_round_trips_in_every_direction)
{
    static const size_t lens[] = {1, 1000, (1u << 20) + 3};
    for (size_t li = 0; li < 3; ++li) {
        size_t len = lens[li];
        unsigned char *src = malloc(len), *dst = malloc(len);
        for (size_t k = 0; k < len; ++k)
            src[k] = (unsigned char)(k * 131 + 7);
        unsigned char *d1 = px_malloc(cuda, len), *d2 = px_malloc(cuda, len);
        ck_assert_ptr_nonnull(d1);
        ck_assert_ptr_nonnull(d2);
        ck_assert_int_eq(px_deep_copy(cuda, d1, host, src, len), PX_OK); /* host -> device */
        ck_assert_int_eq(px_deep_copy(cuda, d2, cuda, d1, len), PX_OK);  /* device -> device */
        ck_assert_int_eq(px_deep_copy(host, dst, cuda, d2, len), PX_OK); /* device -> host */
        ck_assert(memcmp(src, dst, len) == 0);

        unsigned char *pin = px_cuda_malloc_host(len);
        ck_assert_ptr_nonnull(pin);
        memset(dst, 0, len);
        ck_assert_int_eq(px_deep_copy(host, pin, cuda, d1, len), PX_OK); /* device -> pinned */
        ck_assert(memcmp(src, pin, len) == 0);
        ck_assert_int_eq(px_deep_copy(cuda, d2, host, pin, len), PX_OK); /* pinned -> device */
        ck_assert_int_eq(px_deep_copy(host, dst, cuda, d2, len), PX_OK);
        ck_assert(memcmp(src, dst, len) == 0);
        ck_assert_int_eq(px_cuda_free_host(pin), PX_OK);

        ck_assert_int_eq(px_free(cuda, d1), PX_OK);
        ck_assert_int_eq(px_free(cuda, d2), PX_OK);
        free(src);
        free(dst);
    }
}
END_TEST

START_TEST(test_cuda_malloc_edge_cases)
{
    px_test_log_capture();
    void *a = px_malloc(cuda, 0), *b = px_malloc(cuda, 0);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_ne(a, b);
    ck_assert_int_eq(px_free(cuda, a), PX_OK);
    ck_assert_int_eq(px_free(cuda, b), PX_OK);
    ck_assert_int_eq(px_free(cuda, NULL), PX_OK);
    ck_assert_int_eq(px_cuda_free_host(NULL), PX_OK);
    /* Not pinned memory: the CUDA runtime refuses it, reported as PX_ECUDA. */
    int not_pinned = 0;
    ck_assert_int_eq(px_cuda_free_host(&not_pinned), PX_ECUDA);
    /* Far beyond any device: NULL and a message naming the CUDA error. */
    ck_assert_ptr_null(px_malloc(cuda, (size_t)1 << 60));
    ck_assert(px_test_log_contains("cudaMalloc"));
    /* A host pointer is not a device block: PX_ECUDA, and the space stays usable. */
    int on_host = 0;
    ck_assert_int_eq(px_free(cuda, &on_host), PX_ECUDA);
    void *c = px_malloc(cuda, 64);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(px_free(cuda, c), PX_OK);
}
END_TEST

/* ---- streams (the ops the engine's GPU lanes use) ------------------------------------------- */

static atomic_int then_calls;
static atomic_int then_status;

static void on_then(void *arg, int status)
{
    (void)arg;
    atomic_store_explicit(&then_status, status, memory_order_relaxed);
    /* Release: the test thread that sees the count also sees the status. */
    atomic_fetch_add_explicit(&then_calls, 1, memory_order_release);
}

START_TEST(test_cuda_stream_ops_copy_asynchronously_and_call_back)
{
    const pxi_space_ops *ops = cuda->ops;
    void *st = NULL;
    ck_assert_int_eq(ops->stream_create(&st), PX_OK);
    const size_t len = 1 << 20;
    unsigned char *pin = px_cuda_malloc_host(len), *back = px_cuda_malloc_host(len);
    unsigned char *d = px_malloc(cuda, len);
    for (size_t k = 0; k < len; ++k)
        pin[k] = (unsigned char)(k ^ 0x5a);
    ck_assert_int_eq(ops->copy_async(d, 0, pin, 1, len, st), PX_OK);
    ck_assert_int_eq(ops->copy_async(back, 1, d, 0, len, st), PX_OK);
    ck_assert_int_eq(ops->stream_then(st, on_then, NULL), PX_OK);
    ck_assert_int_eq(ops->stream_synchronize(st), PX_OK);
    /* The callback may still be running on the CUDA callback thread after the synchronize. */
    while (atomic_load_explicit(&then_calls, memory_order_acquire) == 0)
        nanosleep(&(struct timespec){0, 100000}, NULL);
    ck_assert_int_eq(atomic_load_explicit(&then_status, memory_order_relaxed), PX_OK);
    ck_assert(memcmp(pin, back, len) == 0);
    ck_assert_int_eq(ops->stream_destroy(st), PX_OK);
    px_free(cuda, d);
    px_cuda_free_host(pin);
    px_cuda_free_host(back);
}
END_TEST

/* ---- engine: CPU and GPU ops in one dependency graph ----------------------------------------- */

typedef struct {
    double *h_y, *h_z, *h_x, *d_y, *d_z;
    int64_t n;
    int ok;
} engine_job;

static int cpu_init(const px_run_context *rc, void *arg)
{
    (void)rc;
    engine_job *j = arg;
    for (int64_t i = 0; i < j->n; ++i) {
        j->h_y[i] = (double)i;
        j->h_z[i] = (double)(i % 5);
    }
    return PX_OK;
}

static int gpu_upload(const px_run_context *rc, void *arg)
{
    engine_job *j = arg;
    size_t b = (size_t)j->n * sizeof(double);
    if (cudaMemcpyAsync(j->d_y, j->h_y, b, cudaMemcpyHostToDevice, (cudaStream_t)rc->stream) ||
        cudaMemcpyAsync(j->d_z, j->h_z, b, cudaMemcpyHostToDevice, (cudaStream_t)rc->stream))
        return PX_ECUDA;
    return PX_OK;
}

static int gpu_download(const px_run_context *rc, void *arg)
{
    engine_job *j = arg;
    size_t b = (size_t)j->n * sizeof(double);
    /* d_y now holds the triad result */
    if (cudaMemcpyAsync(j->h_x, j->d_y, b, cudaMemcpyDeviceToHost, (cudaStream_t)rc->stream))
        return PX_ECUDA;
    return PX_OK;
}

static int cpu_check(const px_run_context *rc, void *arg)
{
    (void)rc;
    engine_job *j = arg;
    j->ok = 1;
    for (int64_t i = 0; i < j->n; ++i)
        if (j->h_x[i] != (double)i + 3.0 * (double)(i % 5))
            j->ok = 0;
    return PX_OK;
}

START_TEST(test_cuda_engine_orders_cpu_copy_and_gpu_ops)
{
    px_engine *e = px_engine_default();
    ck_assert_ptr_nonnull(e);
    engine_job j;
    j.n = 100003;
    size_t b = (size_t)j.n * sizeof(double);
    j.h_y = px_cuda_malloc_host(b);
    j.h_z = px_cuda_malloc_host(b);
    j.h_x = px_cuda_malloc_host(b);
    j.d_y = px_malloc(cuda, b);
    j.d_z = px_malloc(cuda, b);
    j.ok = 0;
    px_var *host_in = px_var_new(e), *dev = px_var_new(e), *host_out = px_var_new(e),
           *verdict = px_var_new(e);
    px_context cpu = {PX_DEV_CPU, 0}, gpu = {PX_DEV_CUDA, 0};
    ck_assert_int_eq(
        px_engine_push_sync(e, cpu_init, &j, cpu, NULL, 0, &host_in, 1, PX_FN_NORMAL, 0, "init"),
        PX_OK);
    ck_assert_int_eq(px_engine_push_sync(e, gpu_upload, &j, gpu, &host_in, 1, &dev, 1,
                                         PX_FN_COPY_TO_DEVICE, 0, "upload"),
                     PX_OK);
    triad_args t = {j.d_y, j.d_y, j.d_z, 3.0, 0};
    ck_assert_int_eq(px_engine_push_parallel_for(e, cuda, "triad", px_range(0, j.n), &k_triad, &t,
                                                 sizeof t, NULL, 0, &dev, 1),
                     PX_OK);
    ck_assert_int_eq(px_engine_push_sync(e, gpu_download, &j, gpu, &dev, 1, &host_out, 1,
                                         PX_FN_COPY_FROM_DEVICE, 0, "download"),
                     PX_OK);
    ck_assert_int_eq(px_engine_push_sync(e, cpu_check, &j, cpu, &host_out, 1, &verdict, 1,
                                         PX_FN_NORMAL, 0, "check"),
                     PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, verdict), PX_OK);
    ck_assert_int_eq(j.ok, 1);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    px_var_delete(e, host_in);
    px_var_delete(e, dev);
    px_var_delete(e, host_out);
    px_var_delete(e, verdict);
    px_free(cuda, j.d_y);
    px_free(cuda, j.d_z);
    px_cuda_free_host(j.h_y);
    px_cuda_free_host(j.h_z);
    px_cuda_free_host(j.h_x);
}
END_TEST

/* ---- device selection and device errors ------------------------------------------------------ */

START_TEST(test_cuda_device_id_selects_the_device_and_out_of_range_is_einval)
{
    int count = 0;
    ck_assert_int_eq(cudaGetDeviceCount(&count), cudaSuccess);
    px_test_log_capture();
    px_settings st;
    px_settings_default(&st);
    st.device_id = count; /* one past the last device */
    ck_assert_int_eq(px_initialize_with(&st), PX_EINVAL);
    ck_assert(px_test_log_contains("PX_DEVICE_ID"));
    ck_assert_int_eq(px_is_initialized(), 0);
    st.device_id = count - 1;
    ck_assert_int_eq(px_initialize_with(&st), PX_OK);
    px_cuda_device_info info;
    ck_assert_int_eq(px_cuda_device_info_get(&info), PX_OK);
    ck_assert_int_eq(info.device_id, count - 1);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

static void fault_setup(void)
{
    px_test_log_capture();
    px_test_setup();
    cuda = px_space_by_name("cuda");
    ck_assert_ptr_nonnull(cuda);
}

static void fault_teardown(void)
{
    /* The context is broken on purpose: finalize may report it, and must still finish. */
    int rc = px_finalize();
    ck_assert_msg(rc == PX_OK || rc == PX_ECUDA, "px_finalize: %s", px_strerror(rc));
    ck_assert_int_eq(px_is_initialized(), 0);
}

START_TEST(test_cuda_device_fault_is_ecuda_at_fence_and_in_stream_callbacks)
{
    visit_args a = {NULL, 0}; /* writes through NULL on the device */
    ck_assert_int_eq(px_parallel_for(cuda, "fault", px_range(0, 1 << 20), &k_visit, &a, sizeof a),
                     PX_OK);
    /* Either the fault is already known (the callback is refused) or the callback runs with it;
     * it never waits forever. */
    int rc = cuda->ops->stream_then(NULL, on_then, NULL);
    if (rc == PX_OK) {
        while (atomic_load_explicit(&then_calls, memory_order_acquire) == 0)
            nanosleep(&(struct timespec){0, 100000}, NULL);
        ck_assert_int_eq(atomic_load_explicit(&then_status, memory_order_relaxed), PX_ECUDA);
    } else {
        ck_assert_int_eq(rc, PX_ECUDA);
    }
    ck_assert_int_eq(px_fence(cuda), PX_ECUDA);
    ck_assert(px_test_log_contains("cuda"));
}
END_TEST

/* Probe for a device in a child process: CUDA must not be initialized in the parent that Check
 * forks for every test. */
static int cuda_device_present(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return 0;
    if (pid == 0) {
        px_log_set_level(PX_LOG_ERROR);
        int ok = px_initialize(NULL, NULL) == PX_OK && px_space_by_name("cuda") != NULL;
        _exit(ok ? 0 : 77);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) != pid)
        return 0;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(void)
{
    if (!cuda_device_present()) {
        printf("SKIP: no CUDA device (the cuda space is unavailable here); check_cuda not run\n");
        return 77;
    }
    Suite *s = suite_create("cuda");
    TCase *tc = tcase_create("space");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_cuda_space_reports_concurrency_and_device_properties);
    tcase_add_test(tc, test_cuda_is_the_default_space_when_available);
    tcase_add_test(tc, test_cuda_bad_launches_are_refused_with_a_message);
    suite_add_tcase(s, tc);

    tc = tcase_create("for");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_cuda_for_visits_every_index_exactly_once);
    tcase_add_test(tc, test_cuda_for_ignores_chunk_size_and_schedule);
    tcase_add_test(tc, test_cuda_for_copies_args_at_launch);
    suite_add_tcase(s, tc);

    tc = tcase_create("reduce");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_cuda_builtin_reducers_match_host_fold);
    tcase_add_test(tc, test_cuda_reduce_sum_matches_closed_form);
    tcase_add_test(tc, test_cuda_empty_range_reduce_gives_identity);
    tcase_add_test(tc, test_cuda_minloc_maxloc_pick_lowest_index_on_ties);
    tcase_add_test(tc, test_cuda_float_sum_is_bitwise_reproducible);
    tcase_add_test(tc, test_cuda_custom_noncommutative_reducer_joins_in_index_order);
    tcase_add_test(tc, test_cuda_custom_reducer_without_device_join_is_einval);
    tcase_add_test(tc, test_cuda_builtin_reducer_of_other_value_type_is_einval);
    suite_add_tcase(s, tc);

    tc = tcase_create("scan");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_cuda_scan_writes_exclusive_prefix_and_total);
    tcase_add_test(tc, test_cuda_scan_with_custom_reducer_sees_exact_prefix_in_order);
    suite_add_tcase(s, tc);

    tc = tcase_create("memory");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_cuda_deep_copy_round_trips_in_every_direction);
    tcase_add_test(tc, test_cuda_malloc_edge_cases);
    tcase_add_test(tc, test_cuda_stream_ops_copy_asynchronously_and_call_back);
    suite_add_tcase(s, tc);

    tc = tcase_create("device");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_cuda_device_id_selects_the_device_and_out_of_range_is_einval);
    suite_add_tcase(s, tc);

    tc = tcase_create("fault");
    tcase_add_checked_fixture(tc, fault_setup, fault_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_cuda_device_fault_is_ecuda_at_fence_and_in_stream_callbacks);
    suite_add_tcase(s, tc);

    tc = tcase_create("engine");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_cuda_engine_orders_cpu_copy_and_gpu_ops);
    suite_add_tcase(s, tc);
    return px_test_run(s);
}
