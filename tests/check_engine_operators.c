/* tests/check_engine_operators.c - the dependency engine, reusable operators (px_engine_op_*) and
 * kernels pushed as ops, ordered by Vars.
 *
 * The engine kind under test comes from PX_ENGINE (ctest registers one run per kind and
 * Threads size); PX_TEST_ENGINE_OPS scales randomized workloads down for sanitizer runs. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "check_engine_common.h"

START_TEST(test_reused_operator_runs_every_push_and_delete_is_deferred)
{
    px_engine *e = px_engine_create(kind_under_test(), 4);
    px_var *v = px_var_new(e);
    int x = 0;
    px_engine_op *op =
        px_engine_op_create_sync(e, incr_fn, &x, CPU, NULL, 0, &v, 1, PX_FN_NORMAL, "incr");
    ck_assert_ptr_nonnull(op);
    int bad = 0;
    for (int k = 0; k < 1000; ++k)
        bad += px_engine_op_push(e, op, 0) != PX_OK;
    ck_assert_int_eq(bad, 0);
    ck_assert_int_eq(px_engine_op_delete(e, op), PX_OK);
    ck_assert_int_eq(px_engine_op_push(e, op, 0), PX_EINVAL);
    ck_assert_int_eq(px_engine_op_delete(e, op), PX_EINVAL);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
    ck_assert_int_eq(x, 1000);
    /* an operator whose Var was deleted cannot be pushed */
    px_var *w = px_var_new(e);
    px_engine_op *op2 =
        px_engine_op_create_sync(e, incr_fn, &x, CPU, &w, 1, NULL, 0, PX_FN_NORMAL, "reader");
    ck_assert_ptr_nonnull(op2);
    ck_assert_int_eq(px_var_delete(e, w), PX_OK);
    ck_assert_int_eq(px_engine_op_push(e, op2, 0), PX_EINVAL);
    ck_assert_int_eq(px_engine_op_delete(e, op2), PX_OK);
    ck_assert_int_eq(px_engine_op_push(e, NULL, 0), PX_EFAULT);
    ck_assert_int_eq(px_engine_op_delete(e, NULL), PX_EFAULT);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* ---- kernels as ops ----------------------------------------------------------------------- */

static void sum_fn(int64_t b, int64_t e, void *ctx, void *acc)
{
    const double *x = ctx;
    double s = *(double *)acc;
    for (int64_t i = b; i < e; ++i)
        s += x[i];
    *(double *)acc = s;
}

static void scan_fn(int64_t b, int64_t e, void *ctx, void *partial, int final_pass)
{
    double *x = ctx;
    double p = *(double *)partial;
    for (int64_t i = b; i < e; ++i) {
        double v = x[i];
        if (final_pass)
            x[i] = p;
        p += v;
    }
    *(double *)partial = p;
}

typedef struct {
    double *x;
    double a;
} scale_args;

PX_FOR(scale_kernel, scale_args, i, a)
{
    a->x[i] *= a->a;
}

START_TEST(test_kernel_ops_ordered_by_vars)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *vx = px_var_new(e), *vs = px_var_new(e);
    enum { N = 10000 };
    double *x = calloc(N, sizeof *x);
    double sum = -1, total = -1;
    px_space *s = px_default_space();
    ck_assert_int_eq(
        px_engine_push_parallel_for_fn(e, s, "fill", px_range(0, N), fill_fn, x, NULL, 0, &vx, 1),
        PX_OK);
    scale_args sa = {x, 2.0};
    ck_assert_int_eq(px_engine_push_parallel_for(e, s, NULL, px_range(0, N), &scale_kernel, &sa,
                                                 sizeof sa, NULL, 0, &vx, 1),
                     PX_OK);
    sa.a = 1000.0; /* copied at push: must not matter */
    ck_assert_int_eq(px_engine_push_parallel_reduce_fn(e, s, "sum", px_range(0, N), sum_fn, x,
                                                       &px_sum_f64, &sum, &vx, 1, &vs, 1),
                     PX_OK);
    ck_assert_int_eq(px_engine_push_parallel_scan_fn(e, s, "scan", px_range(0, N), scan_fn, x,
                                                     &px_sum_f64, &total, &vs, 1, &vx, 1),
                     PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, vx), PX_OK);
    double want = (double)N * (N - 1); /* 2 * sum(i) */
    ck_assert(sum == want);
    ck_assert(total == want);
    ck_assert(x[0] == 0.0 && x[1] == 0.0 && x[2] == 2.0 && x[3] == 6.0);
    /* bad launches are refused at push */
    px_range_policy bad = px_range(5, 1);
    ck_assert_int_eq(px_engine_push_parallel_for_fn(e, s, "bad", bad, fill_fn, x, NULL, 0, &vx, 1),
                     PX_EINVAL);
    ck_assert_int_eq(
        px_engine_push_parallel_for_fn(e, s, "bad", px_range(0, 1), NULL, x, NULL, 0, &vx, 1),
        PX_EFAULT);
    ck_assert_int_eq(px_engine_push_parallel_for(e, s, "bad", px_range(0, 1), &scale_kernel, &sa, 3,
                                                 NULL, 0, &vx, 1),
                     PX_EINVAL);
    ck_assert_int_eq(px_engine_push_parallel_reduce_fn(e, s, "bad", px_range(0, 1), sum_fn, x,
                                                       &px_sum_f64, NULL, NULL, 0, &vs, 1),
                     PX_EFAULT);
    ck_assert_int_eq(px_engine_push_parallel_for(e, s, "bad", px_range(0, 1), NULL, &sa, sizeof sa,
                                                 NULL, 0, &vx, 1),
                     PX_EFAULT);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    free(x);
}
END_TEST

static Suite *engine_operators_suite(void)
{
    Suite *s = suite_create("engine_operators");
    TCase *tc = tcase_create("engine");
    tcase_add_checked_fixture(tc, px_test_setup, px_test_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_reused_operator_runs_every_push_and_delete_is_deferred);
    tcase_add_test(tc, test_kernel_ops_ordered_by_vars);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(engine_operators_suite());
}
