/* tests/cuda/check_cuda_blocks.c - kernel building blocks on the cuda space: every atomic of
 * parex/atomic.h in a device body (exact totals, min/max, CAS-loop counts), the random stream
 * of parex/rng.h on the device against the host loop (u32 and uniform bitwise, normal within a
 * few ulps: CUDA's libm), and px_scatter on cuda (AUTO is ATOMIC, DUPLICATED refused, sums
 * exact). Needs a GPU: without one it prints "SKIP" and exits 77 (ctest: skipped). Kernels are
 * in blocks_kernels.cu (nvcc). */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blocks_kernels.h"
#include "px_test.h"

static px_space *cuda, *host;

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

#define NA ((int64_t)1 << 20)

START_TEST(test_device_atomics_give_exact_totals)
{
    blocks_cells h;
    memset(&h, 0, sizeof h);
    h.f64_min = DBL_MAX;
    h.f64_max = -DBL_MAX;
    h.f32_min = FLT_MAX;
    h.f32_max = -FLT_MAX;
    h.i32_min = INT32_MAX;
    h.i32_max = INT32_MIN;
    h.i64_min = INT64_MAX;
    h.i64_max = INT64_MIN;
    h.u64_min = UINT64_MAX;
    blocks_cells *d = px_malloc(cuda, sizeof h);
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(px_deep_copy(cuda, d, host, &h, sizeof h), PX_OK);
    atomics_args a = {d};
    ck_assert_int_eq(
        px_parallel_for(cuda, "atomics", px_range(0, NA), &k_blocks_atomics, &a, sizeof a), PX_OK);
    ck_assert_int_eq(px_fence(cuda), PX_OK);
    ck_assert_int_eq(px_deep_copy(host, &h, cuda, d, sizeof h), PX_OK);
    ck_assert(h.f64_sum == (double)NA * (double)(NA - 1) / 2); /* < 2^53: exact in any order */
    ck_assert(h.f64_min == -0.5 * (double)(NA - 1));
    ck_assert(h.f64_max == 0.5 * (double)(NA - 1));
    ck_assert(h.f64_xchg >= 0 && h.f64_xchg < (double)NA);
    ck_assert(h.f32_sum == (float)NA); /* 2^20 adds of 1: exact below 2^24 */
    ck_assert(h.f32_min == (float)-(NA - 1));
    ck_assert(h.f32_max == (float)(NA - 1));
    ck_assert_int_eq(h.i32_sum, NA);
    ck_assert_int_eq(h.i32_min, -(NA - 1));
    ck_assert_int_eq(h.i32_max, NA - 1);
    ck_assert_int_eq(h.i32_cas, NA);
    ck_assert_int_eq(h.i64_sum, NA * (NA - 1) / 2 - NA);
    ck_assert_int_eq(h.i64_min, -(NA - 1) * 1000000);
    ck_assert_int_eq(h.i64_max, (NA - 1) * 1000000);
    ck_assert_int_eq(h.i64_cas, NA);
    ck_assert_uint_eq(h.u64_sum, (uint64_t)(2 * NA));
    ck_assert_uint_eq(h.u64_min, 7);
    ck_assert_uint_eq(h.u64_max, (uint64_t)(NA - 1) << 20);
    ck_assert_uint_lt(h.u64_xchg_count, (uint64_t)NA);
    ck_assert_int_eq(px_free(cuda, d), PX_OK);
}
END_TEST

#define NR 100003

START_TEST(test_device_stream_matches_the_host_loop)
{
    size_t bytes = sizeof(double) * BLOCKS_RNG_DRAWS * NR;
    double *want = malloc(bytes), *got = malloc(bytes);
    ck_assert_ptr_nonnull(want);
    ck_assert_ptr_nonnull(got);
    for (int64_t i = 0; i < NR; ++i) {
        px_rng r = px_rng_at(0xabcdef, (uint64_t)i);
        double *o = want + i * BLOCKS_RNG_DRAWS;
        o[0] = px_rng_u32(&r);
        o[1] = px_rng_u32(&r);
        o[2] = px_rng_uniform_f64(&r);
        o[3] = px_rng_normal_f64(&r);
        o[4] = px_rng_normal_f64(&r);
    }
    double *d = px_malloc(cuda, bytes);
    ck_assert_ptr_nonnull(d);
    rng_args a = {0xabcdef, d};
    ck_assert_int_eq(px_parallel_for(cuda, "rng", px_range(0, NR), &k_blocks_rng, &a, sizeof a),
                     PX_OK);
    ck_assert_int_eq(px_deep_copy(host, got, cuda, d, bytes), PX_OK);
    for (int64_t i = 0; i < NR; ++i) {
        const double *w = want + i * BLOCKS_RNG_DRAWS, *g = got + i * BLOCKS_RNG_DRAWS;
        ck_assert_msg(w[0] == g[0] && w[1] == g[1] && w[2] == g[2], "index %lld differs",
                      (long long)i);
        for (int k = 3; k < 5; ++k)
            ck_assert_msg(fabs(w[k] - g[k]) <= 1e-13 * (1.0 + fabs(w[k])),
                          "normal %lld.%d: host %.17g device %.17g", (long long)i, k, w[k], g[k]);
    }
    ck_assert_int_eq(px_free(cuda, d), PX_OK);
    free(want);
    free(got);
}
END_TEST

#define NS  10007
#define NKS 1000000

START_TEST(test_scatter_on_cuda_is_atomic_and_exact)
{
    double *t = calloc(NS, sizeof(double)), *want = calloc(NS, sizeof(double));
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_nonnull(want);
    for (int64_t k = 0; k < NKS; ++k) {
        double w = (double)(k % 5 + 1);
        want[(k * 7919) % NS] += w;
        want[k % NS] += 0.5 * w;
    }
    double *d = px_malloc(cuda, sizeof(double) * NS);
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(px_deep_copy(cuda, d, host, t, sizeof(double) * NS), PX_OK);
    px_scatter *sc = NULL;
    px_test_log_capture();
    ck_assert_int_eq(px_scatter_create(&sc, cuda, d, NS, PX_SCATTER_DUPLICATED), PX_EINVAL);
    ck_assert(px_test_log_contains("host space"));
    ck_assert_int_eq(px_scatter_create(&sc, cuda, d, NS, PX_SCATTER_AUTO), PX_OK);
    ck_assert_int_eq(px_scatter_get_mode(sc), PX_SCATTER_ATOMIC);
    deposit_args a = {sc, NS};
    ck_assert_int_eq(
        px_parallel_for(cuda, "deposit", px_range(0, NKS), &k_blocks_deposit, &a, sizeof a), PX_OK);
    ck_assert_int_eq(px_scatter_contribute(sc), PX_OK);
    ck_assert_int_eq(px_deep_copy(host, t, cuda, d, sizeof(double) * NS), PX_OK);
    for (int64_t i = 0; i < NS; ++i) /* halves and integers below 2^53: exact in any order */
        ck_assert_msg(t[i] == want[i], "cell %lld: %.17g, want %.17g", (long long)i, t[i], want[i]);
    ck_assert_int_eq(px_scatter_destroy(sc), PX_OK);
    ck_assert_int_eq(px_free(cuda, d), PX_OK);
    free(t);
    free(want);
}
END_TEST

/* Probe for a device in a child: CUDA must not start in the parent Check forks from. */
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
        printf("SKIP: no CUDA device; check_cuda_blocks not run\n");
        return 77;
    }
    Suite *s = suite_create("cuda_blocks");
    TCase *tc = tcase_create("blocks");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_device_atomics_give_exact_totals);
    tcase_add_test(tc, test_device_stream_matches_the_host_loop);
    tcase_add_test(tc, test_scatter_on_cuda_is_atomic_and_exact);
    suite_add_tcase(s, tc);
    return px_test_run(s);
}
