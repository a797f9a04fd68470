/* tests/cuda/check_cuda_portable.c - the same kernel file (portable_kernels.inc) compiled by the
 * C compiler and by nvcc: both builds carry identical host paths, only the nvcc build has a
 * device half. Runs on every machine: host parts always, cuda parts when a device exists (each
 * such test prints "SKIP: no CUDA device" otherwise). Also checks how a build with CUDA behaves
 * on a machine without a GPU: the space is absent, an info message says why, nothing crashes. */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "portable_kernels.h"
#include "px_test.h"

enum { N = 100003 };

static void setup(void)
{
    px_test_log_capture();
    px_test_setup();
}

static void teardown(void)
{
    px_test_teardown();
}

typedef struct {
    double x[N], y[N], dot;
    int64_t in[N], out[N], total;
    pk_range range;
} results;

/* Run the four kernels of one build on space s (host or cuda), data staged through s. */
static void run_all(px_space *s, const px_kernel *axpy, const px_kernel *dot,
                    const px_kernel *xscan, const px_kernel *range, const px_reducer *range_r,
                    results *r)
{
    px_space *h = px_space_by_name("serial");
    for (int i = 0; i < N; ++i) {
        r->x[i] = (double)(i % 17) * 0.5;
        r->y[i] = (double)(i % 3);
        r->in[i] = i % 5;
    }
    double *x = px_malloc(s, sizeof r->x), *y = px_malloc(s, sizeof r->y);
    int64_t *in = px_malloc(s, sizeof r->in), *out = px_malloc(s, sizeof r->out);
    ck_assert(x && y && in && out);
    ck_assert_int_eq(px_deep_copy(s, x, h, r->x, sizeof r->x), PX_OK);
    ck_assert_int_eq(px_deep_copy(s, y, h, r->y, sizeof r->y), PX_OK);
    ck_assert_int_eq(px_deep_copy(s, in, h, r->in, sizeof r->in), PX_OK);

    pk_axpy_args aa = {2.0, x, y};
    ck_assert_int_eq(px_parallel_for(s, "axpy", px_range(0, N), axpy, &aa, sizeof aa), PX_OK);
    pk_dot_args da = {x, y};
    ck_assert_int_eq(
        px_parallel_reduce(s, "dot", px_range(0, N), dot, &da, sizeof da, &px_sum_f64, &r->dot),
        PX_OK);
    pk_scan_args sa = {in, out};
    ck_assert_int_eq(
        px_parallel_scan(s, "xscan", px_range(0, N), xscan, &sa, sizeof sa, &px_sum_i64, &r->total),
        PX_OK);
    ck_assert_int_eq(
        px_parallel_reduce(s, "range", px_range(0, N), range, &da, sizeof da, range_r, &r->range),
        PX_OK);

    ck_assert_int_eq(px_deep_copy(h, r->y, s, y, sizeof r->y), PX_OK);
    ck_assert_int_eq(px_deep_copy(h, r->out, s, out, sizeof r->out), PX_OK);
    px_free(s, x);
    px_free(s, y);
    px_free(s, in);
    px_free(s, out);
}

static void check_values(const results *r)
{
    int64_t pre = 0;
    for (int i = 0; i < N; ++i) {
        ck_assert(r->y[i] == (double)(i % 3) + 2.0 * ((double)(i % 17) * 0.5));
        ck_assert_int_eq(r->out[i], pre);
        pre += i % 5;
    }
    ck_assert_int_eq(r->total, pre);
    ck_assert(r->range.lo == 0.0 && r->range.hi == 8.0);
}

START_TEST(test_same_kernel_file_builds_host_only_with_cc_and_host_device_with_nvcc)
{
    const px_kernel *hk[] = {&host_axpy, &host_dot, &host_xscan, &host_range};
    const px_kernel *dk[] = {&dev_axpy, &dev_dot, &dev_xscan, &dev_range};
    for (int k = 0; k < 4; ++k) {
        ck_assert_ptr_null(hk[k]->device);
        ck_assert_ptr_nonnull(dk[k]->device);
        ck_assert_int_eq(hk[k]->kind, dk[k]->kind);
        ck_assert_uint_eq(hk[k]->args_size, dk[k]->args_size);
        ck_assert_uint_eq(hk[k]->value_size, dk[k]->value_size);
    }
}
END_TEST

START_TEST(test_host_paths_of_both_builds_agree_on_every_host_space)
{
    static const char *spaces[] = {"serial", "threads"};
    static results a, b;
    for (int k = 0; k < 2; ++k) {
        px_space *s = px_space_by_name(spaces[k]);
        if (!s)
            continue;
        run_all(s, &host_axpy, &host_dot, &host_xscan, &host_range, &host_range_reducer, &a);
        run_all(s, &dev_axpy, &dev_dot, &dev_xscan, &dev_range, &dev_range_reducer, &b);
        check_values(&a);
        check_values(&b);
        ck_assert(memcmp(&a.dot, &b.dot, sizeof a.dot) == 0);
    }
}
END_TEST

START_TEST(test_nvcc_build_runs_on_cuda_and_cc_build_is_refused)
{
    px_space *cuda = px_space_by_name("cuda");
    if (!cuda) {
        printf("SKIP: no CUDA device (test_nvcc_build_runs_on_cuda_and_cc_build_is_refused)\n");
        return;
    }
    static results d, h;
    run_all(cuda, &dev_axpy, &dev_dot, &dev_xscan, &dev_range, &dev_range_reducer, &d);
    run_all(px_space_by_name("serial"), &dev_axpy, &dev_dot, &dev_xscan, &dev_range,
            &dev_range_reducer, &h);
    check_values(&d);
    ck_assert(d.dot == h.dot); /* exact: every product and partial sum is a small multiple of .5 */
    pk_axpy_args aa = {1.0, NULL, NULL};
    ck_assert_int_eq(px_parallel_for(cuda, "axpy", px_range(0, 1), &host_axpy, &aa, sizeof aa),
                     PX_EINVAL);
    ck_assert(px_test_log_contains("nvcc"));
}
END_TEST

START_TEST(test_missing_device_leaves_cuda_absent_with_an_info_message)
{
    px_space *cuda = px_space_by_name("cuda");
    if (cuda) {
        printf("SKIP: a CUDA device is present (test_missing_device_leaves_cuda_absent...)\n");
        return;
    }
    ck_assert(px_test_log_contains("cuda: space unavailable"));
    ck_assert_ptr_nonnull(px_default_space());
    ck_assert_str_ne(px_space_name(px_default_space()), "cuda");
#if PX_HAVE_CUDA
    px_cuda_device_info info;
    ck_assert_int_eq(px_cuda_device_info_get(&info), PX_ENODEV);
    ck_assert_ptr_null(px_cuda_malloc_host(16));
    ck_assert_ptr_null(px_cuda_stream());
    ck_assert_int_eq(px_cuda_free_host(NULL), PX_ENODEV);
#endif
    /* Kernels compiled by nvcc still run on the host spaces. */
    static results r;
    run_all(px_default_space(), &dev_axpy, &dev_dot, &dev_xscan, &dev_range, &dev_range_reducer,
            &r);
    check_values(&r);
}
END_TEST

START_TEST(test_cuda_calls_before_initialize_are_enotinit)
{
#if PX_HAVE_CUDA
    px_cuda_device_info info;
    ck_assert_int_eq(px_cuda_device_info_get(&info), PX_ENOTINIT);
    ck_assert_ptr_null(px_cuda_malloc_host(16));
    ck_assert_int_eq(px_cuda_free_host(NULL), PX_ENOTINIT);
    ck_assert_ptr_null(px_cuda_stream());
#endif
}
END_TEST

int main(void)
{
    /* The absent-device test reads the info-level line px_initialize logs (ctest sets error). */
    setenv("PX_LOG_LEVEL", "info", 1);
    Suite *s = suite_create("cuda_portable");
    TCase *tc = tcase_create("portable");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_same_kernel_file_builds_host_only_with_cc_and_host_device_with_nvcc);
    tcase_add_test(tc, test_host_paths_of_both_builds_agree_on_every_host_space);
    tcase_add_test(tc, test_nvcc_build_runs_on_cuda_and_cc_build_is_refused);
    tcase_add_test(tc, test_missing_device_leaves_cuda_absent_with_an_info_message);
    suite_add_tcase(s, tc);
    tc = tcase_create("uninitialized");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_cuda_calls_before_initialize_are_enotinit);
    suite_add_tcase(s, tc);
    return px_test_run(s);
}
