/* tests/cuda/check_cuda_md.c - MDRange kernels on the Cuda space (parex/mdrange.h): every point
 * of a box visited once for ranks 2..4, negative lower bounds, odd and automatic tiles, both
 * iterate orders; reductions equal to the exact sum and bitwise repeatable run to run; a 3-D
 * stencil over views equal to the serial space's; bad launches refused. The kernels are in
 * cuda_md_kernels.cu (nvcc). Needs a GPU: without one the binary prints "SKIP: no CUDA device"
 * and exits 77 (ctest: skipped). */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_md_kernels.h"
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

typedef struct {
    int rank;
    int64_t lower[PX_MAX_RANK], upper[PX_MAX_RANK], tile[PX_MAX_RANK];
} box_case;

static const box_case boxes[] = {
    {2, {0, 0}, {17, 23}, {0, 0}},
    {2, {-5, -7}, {60, 41}, {4, 33}},
    {2, {0, 0}, {1, 1}, {0, 0}},
    {2, {3, 0}, {3, 10}, {0, 0}},
    {2, {0, 0}, {1000, 3}, {7, 100}},
    {3, {0, 0, 0}, {9, 10, 11}, {0, 0, 0}},
    {3, {-2, 1, -9}, {45, 6, 70}, {2, 3, 64}},
    {3, {0, 0, 0}, {64, 64, 64}, {0, 0, 0}},
    {3, {0, 0, 0}, {8, 0, 8}, {0, 0, 0}},
    {4, {0, 0, 0, 0}, {3, 4, 5, 6}, {0, 0, 0, 0}},
    {4, {-1, 0, -1, 0}, {13, 4, 5, 66}, {2, 3, 1, 40}},
};
#define N_BOXES ((int)(sizeof boxes / sizeof boxes[0]))

static px_mdrange_policy policy_of(int b, int left)
{
    const box_case *c = &boxes[b];
    px_mdrange_policy p = px_mdrange_tiled(c->rank, c->lower, c->upper, c->tile);
    return px_mdrange_set_iterate(p, left ? PX_ITERATE_LEFT : PX_ITERATE_RIGHT);
}

static int64_t npoints(const px_mdrange_policy *p)
{
    int64_t n = 1;
    for (int d = 0; d < p->rank; ++d)
        n *= p->upper[d] - p->lower[d];
    return n;
}

static const px_kernel *count_kernel(int rank)
{
    return rank == 2 ? &k_md_count2 : rank == 3 ? &k_md_count3 : &k_md_count4;
}

START_TEST(test_cuda_md_for_visits_every_point_once)
{
    for (int b = 0; b < N_BOXES; ++b) {
        for (int left = 0; left < 2; ++left) {
            px_mdrange_policy p = policy_of(b, left);
            int64_t n = npoints(&p);
            size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(int32_t);
            int32_t *d = px_malloc(cuda, bytes);
            ck_assert_ptr_nonnull(d);
            int32_t *h = calloc(1, bytes);
            ck_assert_ptr_nonnull(h);
            ck_assert_int_eq(px_deep_copy(cuda, d, host, h, bytes), PX_OK);
            md_count_args a = {.cnt = d};
            for (int k = 0; k < p.rank; ++k) {
                a.lower[k] = p.lower[k];
                a.ext[k] = p.upper[k] - p.lower[k];
            }
            ck_assert_int_eq(
                px_parallel_for_md(cuda, "count", p, count_kernel(p.rank), &a, sizeof a), PX_OK);
            ck_assert_int_eq(px_fence(cuda), PX_OK);
            ck_assert_int_eq(px_deep_copy(host, h, cuda, d, bytes), PX_OK);
            for (int64_t i = 0; i < n; ++i)
                ck_assert_msg(h[i] == 1, "box %d %s: point %lld visited %d times", b,
                              left ? "left" : "right", (long long)i, h[i]);
            free(h);
            ck_assert_int_eq(px_free(cuda, d), PX_OK);
        }
    }
}
END_TEST

START_TEST(test_cuda_md_reduce_matches_the_host_and_repeats_bitwise)
{
    for (int b = 0; b < N_BOXES; ++b) {
        for (int left = 0; left < 2; ++left) {
            px_mdrange_policy p = policy_of(b, left);
            if (p.rank > 3)
                continue;
            md_val_args a = {p.rank};
            const px_kernel *k = p.rank == 2 ? &k_md_sum2 : &k_md_sum3;
            double want = -1, got = -2;
            ck_assert_int_eq(
                px_parallel_reduce_md(host, "sum", p, k, &a, sizeof a, &px_sum_f64, &want), PX_OK);
            ck_assert_int_eq(
                px_parallel_reduce_md(cuda, "sum", p, k, &a, sizeof a, &px_sum_f64, &got), PX_OK);
            ck_assert_msg(got == want, "box %d: cuda %.17g, serial %.17g", b, got, want);
            if (p.rank == 3) {
                double f0 = 0, f1 = 1;
                ck_assert_int_eq(px_parallel_reduce_md(cuda, "f", p, &k_md_fsum3, &a, sizeof a,
                                                       &px_sum_f64, &f0),
                                 PX_OK);
                ck_assert_int_eq(px_parallel_reduce_md(cuda, "f", p, &k_md_fsum3, &a, sizeof a,
                                                       &px_sum_f64, &f1),
                                 PX_OK);
                ck_assert_msg(memcmp(&f0, &f1, sizeof f0) == 0, "box %d: %.17g then %.17g", b, f0,
                              f1);
                double fh = 0;
                ck_assert_int_eq(px_parallel_reduce_md(host, "f", p, &k_md_fsum3, &a, sizeof a,
                                                       &px_sum_f64, &fh),
                                 PX_OK);
                ck_assert(f0 == fh || (f0 - fh < 1e-9 * fh && fh - f0 < 1e-9 * fh));
            }
        }
    }
}
END_TEST

START_TEST(test_cuda_md_stencil_on_views_matches_serial)
{
    int64_t ext[3] = {33, 20, 47};
    for (int lay = 0; lay < 2; ++lay) {
        px_layout L = lay ? PX_LAYOUT_LEFT : PX_LAYOUT_RIGHT;
        px_view hin, hout, din, dout;
        ck_assert_int_eq(px_view_alloc(&hin, host, "hin", sizeof(double), L, 3, ext), PX_OK);
        ck_assert_int_eq(px_view_alloc(&hout, host, "hout", sizeof(double), L, 3, ext), PX_OK);
        ck_assert_int_eq(px_view_alloc(&din, cuda, "din", sizeof(double), L, 3, ext), PX_OK);
        ck_assert_int_eq(px_view_alloc(&dout, cuda, "dout", sizeof(double), L, 3, ext), PX_OK);
        for (int64_t i = 0; i < ext[0]; ++i)
            for (int64_t j = 0; j < ext[1]; ++j)
                for (int64_t k = 0; k < ext[2]; ++k)
                    PX_VIEW_AT3(hin, double, i, j, k) = (double)((i * 31 + j * 7 + k) % 101);
        ck_assert_int_eq(px_view_deep_copy(&din, &hin), PX_OK);
        md_stencil_args ha = {hin, hout}, da = {din, dout};
        ck_assert_int_eq(
            px_parallel_for_md(host, "st", px_view_mdrange(&hin), &k_md_stencil, &ha, sizeof ha),
            PX_OK);
        ck_assert_int_eq(
            px_parallel_for_md(cuda, "st", px_view_mdrange(&din), &k_md_stencil, &da, sizeof da),
            PX_OK);
        px_view back;
        ck_assert_int_eq(px_view_alloc(&back, host, "back", sizeof(double), L, 3, ext), PX_OK);
        ck_assert_int_eq(px_view_deep_copy(&back, &dout), PX_OK);
        int64_t n = ext[0] * ext[1] * ext[2];
        ck_assert(memcmp(back.data, hout.data, (size_t)n * sizeof(double)) == 0);
        ck_assert_int_eq(px_view_free(&back), PX_OK);
        ck_assert_int_eq(px_view_free(&hin), PX_OK);
        ck_assert_int_eq(px_view_free(&hout), PX_OK);
        ck_assert_int_eq(px_view_free(&din), PX_OK);
        ck_assert_int_eq(px_view_free(&dout), PX_OK);
    }
}
END_TEST

static void tile_fn(const int64_t *lo, const int64_t *hi, void *ctx)
{
    (void)lo;
    (void)hi;
    (void)ctx;
}

START_TEST(test_cuda_md_bad_launches_are_refused)
{
    px_test_log_capture();
    int64_t hi[3] = {4, 4, 4};
    md_count_args a = {0};
    ck_assert_int_eq(px_parallel_for_md_fn(cuda, "fn", px_mdrange(2, NULL, hi), tile_fn, NULL),
                     PX_EINVAL);
    ck_assert_int_eq(
        px_parallel_for_md(cuda, "r", px_mdrange(2, NULL, hi), &k_md_count3, &a, sizeof a),
        PX_EINVAL);
    ck_assert(px_test_log_contains("has rank 3 but the MDRange policy has rank 2"));
    md_val_args va = {3};
    double r = 0;
    ck_assert_int_eq(px_parallel_reduce_md(cuda, "r", px_mdrange(3, NULL, hi), &k_md_sum3, &va,
                                           sizeof va, &px_sum_i64, &r),
                     PX_EINVAL);
}
END_TEST

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
        printf("SKIP: no CUDA device (the cuda space is unavailable here); check_cuda_md not "
               "run\n");
        return 77;
    }
    Suite *s = suite_create("cuda_md");
    TCase *tc = tcase_create("md");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_cuda_md_for_visits_every_point_once);
    tcase_add_test(tc, test_cuda_md_reduce_matches_the_host_and_repeats_bitwise);
    tcase_add_test(tc, test_cuda_md_stencil_on_views_matches_serial);
    tcase_add_test(tc, test_cuda_md_bad_launches_are_refused);
    suite_add_tcase(s, tc);
    return px_test_run(s);
}
