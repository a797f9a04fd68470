/* tests/check_scatter.c - parex/scatter.h: every mode on serial and threads equals the serial
 * sum (exactly for integer-valued contributions, within rounding otherwise), DUPLICATED is
 * bitwise repeatable run to run, contribute consumes and reset discards, AUTO picks by space
 * and budget, and bad input is refused. Registered with PX_NUM_THREADS = 1, 2, 3, 4, 8
 * (tests/scatter.cmake); label concurrency. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "px_test.h"

/* A deposition pattern: index k adds w(k) to cells (k * 7919) % n, (k * 104729 + 3) % n and
 * k % n, so every cell gets contributions from many indices spread over all ranks. */
typedef struct {
    px_scatter *sc;
    int64_t n;
    int integral; /* 1: contributions are small integers (sums exact in any order) */
} dep_args;

static inline double weight(int64_t k, int integral)
{
    return integral ? (double)(k % 5 + 1) : 1.0 / (double)(k % 13 + 1) + 1e-3 * (double)k;
}

static inline void deposit(const dep_args *a, int64_t k)
{
    double w = weight(k, a->integral);
    px_scatter_add(a->sc, (k * 7919) % a->n, w);
    px_scatter_add(a->sc, (k * 104729 + 3) % a->n, 0.5 * w);
    px_scatter_add(a->sc, k % a->n, -0.25 * w);
}

PX_FOR(deposit_kernel, dep_args, k, a)
{
    deposit(a, k);
}

static void deposit_fn(int64_t b, int64_t e, void *ctx)
{
    for (int64_t k = b; k < e; ++k)
        deposit(ctx, k);
}

/* The reference: the same adds, in index order, on one thread. */
static void serial_sum(double *t, int64_t n, int64_t nk, int integral)
{
    for (int64_t k = 0; k < nk; ++k) {
        double w = weight(k, integral);
        t[(k * 7919) % n] += w;
        t[(k * 104729 + 3) % n] += 0.5 * w;
        t[k % n] += -0.25 * w;
    }
}

#define N  10007
#define NK 300000

static double *filled(double v)
{
    double *t = malloc(sizeof(double) * N);
    ck_assert_ptr_nonnull(t);
    for (int64_t i = 0; i < N; ++i)
        t[i] = v + (double)i;
    return t;
}

/* Run the deposition on space_name in mode m into a target starting at i + 1 (kept, so
 * contribute must add, not overwrite). use_fn selects the host function kernel path. */
static double *run_mode(const char *space_name, px_scatter_mode m, int integral, int use_fn)
{
    double *t = filled(1.0);
    px_space *s = px_space_by_name(space_name);
    ck_assert_ptr_nonnull(s);
    px_scatter *sc = NULL;
    ck_assert_int_eq(px_scatter_create(&sc, s, t, N, m), PX_OK);
    dep_args a = {sc, N, integral};
    int rc = use_fn ? px_parallel_for_fn(s, "deposit", px_range(0, NK), deposit_fn, &a)
                    : px_parallel_for(s, "deposit", px_range(0, NK), &deposit_kernel, &a, sizeof a);
    ck_assert_int_eq(rc, PX_OK);
    ck_assert_int_eq(px_scatter_contribute(sc), PX_OK);
    ck_assert_int_eq(px_scatter_destroy(sc), PX_OK);
    return t;
}

static void expect_serial_sum(const double *t, int integral)
{
    double *want = filled(1.0);
    serial_sum(want, N, NK, integral);
    for (int64_t i = 0; i < N; ++i) {
        if (integral) {
            ck_assert_msg(t[i] == want[i], "cell %lld: %.17g, want %.17g", (long long)i, t[i],
                          want[i]);
        } else {
            /* ~90 adds per cell of magnitude <= 300 in another order */
            double tol = 1e3 * DBL_EPSILON * (fabs(want[i]) + 1e3);
            ck_assert_msg(fabs(t[i] - want[i]) <= tol, "cell %lld: %.17g, want %.17g", (long long)i,
                          t[i], want[i]);
        }
    }
    free(want);
}

static const char *const spaces[] = {"serial", "threads"};
static const px_scatter_mode modes[] = {PX_SCATTER_AUTO, PX_SCATTER_ATOMIC, PX_SCATTER_DUPLICATED};

/* _i: space (2) x mode (3) x kernel form (2) */
START_TEST(test_every_mode_equals_the_serial_sum_exactly_for_integers)
{
    double *t = run_mode(spaces[_i / 6], modes[_i / 2 % 3], 1, _i % 2);
    expect_serial_sum(t, 1);
    free(t);
}
END_TEST

START_TEST(test_every_mode_equals_the_serial_sum_within_rounding)
{
    double *t = run_mode(spaces[_i / 6], modes[_i / 2 % 3], 0, _i % 2);
    expect_serial_sum(t, 0);
    free(t);
}
END_TEST

/* A dynamic schedule moves indices between ranks run to run: still the serial sum (exactly,
 * for integer contributions) in both modes. */
START_TEST(test_dynamic_schedule_gives_the_serial_sum)
{
    double *t = filled(1.0);
    px_space *s = px_space_by_name("threads");
    px_scatter *sc;
    ck_assert_int_eq(px_scatter_create(&sc, s, t, N, modes[1 + _i]), PX_OK);
    dep_args a = {sc, N, 1};
    ck_assert_int_eq(px_parallel_for(s, "deposit", px_range_chunked(0, NK, 7, PX_SCHEDULE_DYNAMIC),
                                     &deposit_kernel, &a, sizeof a),
                     PX_OK);
    ck_assert_int_eq(px_scatter_contribute(sc), PX_OK);
    ck_assert_int_eq(px_scatter_destroy(sc), PX_OK);
    expect_serial_sum(t, 1);
    free(t);
}
END_TEST

START_TEST(test_duplicated_is_bitwise_repeatable_run_to_run)
{
    double *first = run_mode(spaces[_i], PX_SCATTER_DUPLICATED, 0, 0);
    for (int rep = 0; rep < 5; ++rep) {
        double *again = run_mode(spaces[_i], PX_SCATTER_DUPLICATED, 0, 0);
        ck_assert_msg(memcmp(first, again, sizeof(double) * N) == 0, "run %d differs", rep);
        free(again);
    }
    free(first);
}
END_TEST

START_TEST(test_duplicated_on_serial_is_bitwise_the_serial_order)
{
    /* one replica, summed in index order, then added to the target once */
    double *t = run_mode("serial", PX_SCATTER_DUPLICATED, 0, 0);
    double *rep = calloc(N, sizeof(double));
    ck_assert_ptr_nonnull(rep);
    serial_sum(rep, N, NK, 0);
    for (int64_t i = 0; i < N; ++i)
        ck_assert(t[i] == (1.0 + (double)i) + rep[i]);
    free(rep);
    free(t);
}
END_TEST

START_TEST(test_contribute_consumes_and_reset_discards)
{
    px_space *s = px_space_by_name("threads");
    double *t = filled(0.0);
    px_scatter *sc;
    ck_assert_int_eq(px_scatter_create(&sc, s, t, N, PX_SCATTER_DUPLICATED), PX_OK);
    dep_args a = {sc, N, 1};
    ck_assert_int_eq(px_parallel_for(s, "dep", px_range(0, NK), &deposit_kernel, &a, sizeof a),
                     PX_OK);
    ck_assert_int_eq(px_scatter_reset(sc), PX_OK); /* discarded: target untouched */
    ck_assert_int_eq(px_scatter_contribute(sc), PX_OK);
    for (int64_t i = 0; i < N; ++i)
        ck_assert(t[i] == (double)i);
    ck_assert_int_eq(px_parallel_for(s, "dep", px_range(0, NK), &deposit_kernel, &a, sizeof a),
                     PX_OK);
    ck_assert_int_eq(px_scatter_contribute(sc), PX_OK);
    ck_assert_int_eq(px_scatter_contribute(sc), PX_OK); /* nothing left: no double add */
    double *want = filled(0.0);
    serial_sum(want, N, NK, 1);
    ck_assert(memcmp(t, want, sizeof(double) * N) == 0);
    /* reset in atomic mode has nothing to discard */
    px_scatter *at;
    ck_assert_int_eq(px_scatter_create(&at, s, t, N, PX_SCATTER_ATOMIC), PX_OK);
    ck_assert_int_eq(px_scatter_reset(at), PX_OK);
    ck_assert_int_eq(px_scatter_destroy(at), PX_OK);
    ck_assert_int_eq(px_scatter_destroy(sc), PX_OK);
    free(want);
    free(t);
}
END_TEST

START_TEST(test_adds_from_host_code_go_to_rank_zero)
{
    double t[3] = {1, 2, 3};
    px_scatter *sc;
    ck_assert_int_eq(
        px_scatter_create(&sc, px_space_by_name("threads"), t, 3, PX_SCATTER_DUPLICATED), PX_OK);
    px_scatter_add(sc, 0, 0.5);
    px_scatter_add(sc, 2, -3.0);
    ck_assert(t[0] == 1 && t[2] == 3); /* not before contribute */
    ck_assert_int_eq(px_scatter_contribute(sc), PX_OK);
    ck_assert(t[0] == 1.5 && t[1] == 2 && t[2] == 0);
    ck_assert_int_eq(px_scatter_destroy(sc), PX_OK);
}
END_TEST

START_TEST(test_auto_duplicates_within_budget_and_goes_atomic_beyond)
{
    double *t = filled(0.0);
    px_space *s = px_space_by_name("threads");
    int ranks = px_space_concurrency(s);
    ck_assert_int_gt(ranks, 0);
    px_scatter *sc;
    ck_assert_uint_eq(px_scatter_budget_bytes(), PX_SCATTER_DEFAULT_BUDGET_BYTES);
    ck_assert_int_eq(px_scatter_create(&sc, s, t, N, PX_SCATTER_AUTO), PX_OK);
    ck_assert_int_eq(px_scatter_get_mode(sc), PX_SCATTER_DUPLICATED);
    ck_assert_int_eq(px_scatter_destroy(sc), PX_OK);
    /* replicas of N doubles (rounded to 10008) need ranks * 80064 bytes */
    size_t need = (size_t)ranks * 10008 * sizeof(double);
    px_scatter_set_budget_bytes(need);
    ck_assert_int_eq(px_scatter_create(&sc, s, t, N, PX_SCATTER_AUTO), PX_OK);
    ck_assert_int_eq(px_scatter_get_mode(sc), PX_SCATTER_DUPLICATED);
    ck_assert_int_eq(px_scatter_destroy(sc), PX_OK);
    px_scatter_set_budget_bytes(need - 1);
    ck_assert_int_eq(px_scatter_create(&sc, s, t, N, PX_SCATTER_AUTO), PX_OK);
    ck_assert_int_eq(px_scatter_get_mode(sc), PX_SCATTER_ATOMIC);
    ck_assert_int_eq(px_scatter_destroy(sc), PX_OK);
    px_test_log_capture();
    ck_assert_int_eq(px_scatter_create(&sc, s, t, N, PX_SCATTER_DUPLICATED), PX_EINVAL);
    ck_assert(px_test_log_contains("budget"));
    px_scatter_set_budget_bytes(PX_SCATTER_DEFAULT_BUDGET_BYTES);
    free(t);
}
END_TEST

START_TEST(test_huge_n_is_beyond_any_budget)
{
    double t[1];
    px_scatter *sc = NULL;
    px_test_log_capture();
    px_scatter_set_budget_bytes(SIZE_MAX);
    ck_assert_int_eq(
        px_scatter_create(&sc, px_space_by_name("threads"), t, INT64_MAX, PX_SCATTER_DUPLICATED),
        PX_EINVAL);
    ck_assert_ptr_null(sc);
    ck_assert(px_test_log_contains("budget"));
    px_scatter_set_budget_bytes(PX_SCATTER_DEFAULT_BUDGET_BYTES);
}
END_TEST

START_TEST(test_bad_input_is_refused_with_a_status)
{
    double t[4] = {0};
    px_scatter *sc = NULL;
    px_space *s = px_space_by_name("serial");
    px_test_log_capture();
    ck_assert_int_eq(px_scatter_create(NULL, s, t, 4, PX_SCATTER_AUTO), PX_EFAULT);
    ck_assert_int_eq(px_scatter_create(&sc, s, NULL, 4, PX_SCATTER_AUTO), PX_EFAULT);
    ck_assert(px_test_log_contains("target"));
    ck_assert_int_eq(px_scatter_create(&sc, s, t, -1, PX_SCATTER_AUTO), PX_EINVAL);
    ck_assert(px_test_log_contains("-1"));
    ck_assert_int_eq(px_scatter_create(&sc, s, t, 4, (px_scatter_mode)7), PX_EINVAL);
    ck_assert(px_test_log_contains("mode 7"));
    ck_assert_ptr_null(sc);
    ck_assert_int_eq(px_scatter_contribute(NULL), PX_EFAULT);
    ck_assert_int_eq(px_scatter_reset(NULL), PX_EFAULT);
    ck_assert_int_eq(px_scatter_destroy(NULL), PX_EFAULT);
    ck_assert_int_eq(px_scatter_get_mode(NULL), PX_EFAULT);
    /* n == 0 is a valid, empty scatter */
    ck_assert_int_eq(px_scatter_create(&sc, s, t, 0, PX_SCATTER_DUPLICATED), PX_OK);
    ck_assert_int_eq(px_scatter_contribute(sc), PX_OK);
    ck_assert_int_eq(px_scatter_reset(sc), PX_OK);
    ck_assert_int_eq(px_scatter_destroy(sc), PX_OK);
}
END_TEST

/* Fail the n-th internal allocation of a create for n = 1, 2, ... until it succeeds: each
 * failure is PX_ENOMEM with *out untouched and nothing leaked (ASan checks the leaks). */
START_TEST(test_create_survives_every_allocation_failure)
{
    double t[100] = {0};
    px_scatter *sc = NULL;
    px_log_set_level(PX_LOG_ERROR);
    int n = 1, rc = PX_ENOMEM;
    for (; n < 100 && rc != PX_OK; ++n) {
        pxi_alloc_fail_at((uint64_t)n);
        rc = px_scatter_create(&sc, px_space_by_name("threads"), t, 100, PX_SCATTER_DUPLICATED);
        pxi_alloc_fail_at(0);
        if (rc != PX_OK) {
            ck_assert_int_eq(rc, PX_ENOMEM);
            ck_assert_ptr_null(sc);
        }
    }
    ck_assert_int_eq(rc, PX_OK);
    ck_assert_int_ge(n, 3); /* the handle and the replicas each failed once */
    ck_assert_int_eq(px_scatter_destroy(sc), PX_OK);
}
END_TEST

START_TEST(test_create_before_initialize_is_enotinit)
{
    double t[4] = {0};
    px_scatter *sc = NULL;
    ck_assert_int_eq(px_scatter_create(&sc, NULL, t, 4, PX_SCATTER_AUTO), PX_ENOTINIT);
    ck_assert_ptr_null(sc);
}
END_TEST

typedef struct {
    int *rank_of;
    int ranks;
} rank_args;

static void record_rank(int64_t b, int64_t e, void *ctx)
{
    rank_args *a = ctx;
    int r = *px_exec_rank_location();
    for (int64_t i = b; i < e; ++i)
        a->rank_of[i] = r;
}

START_TEST(test_exec_rank_is_the_rank_in_a_launch)
{
    /* a static schedule gives ranks contiguous blocks in rank order, every rank one block;
     * outside a launch (and on the launching thread afterwards) the rank is 0 */
    px_space *s = px_space_by_name("threads");
    int ranks = px_space_concurrency(s);
    ck_assert_int_gt(ranks, 0);
    ck_assert_int_eq(*px_exec_rank_location(), 0);
    int64_t n = (int64_t)ranks * 1000;
    rank_args a = {calloc((size_t)n, sizeof(int)), ranks};
    ck_assert_ptr_nonnull(a.rank_of);
    ck_assert_int_eq(px_parallel_for_fn(s, "ranks", px_range(0, n), record_rank, &a), PX_OK);
    ck_assert_int_eq(a.rank_of[0], 0);
    for (int64_t i = 1; i < n; ++i) {
        ck_assert_int_ge(a.rank_of[i], a.rank_of[i - 1]);
        ck_assert_int_le(a.rank_of[i], a.rank_of[i - 1] + 1);
    }
    ck_assert_int_eq(a.rank_of[n - 1], ranks - 1);
    ck_assert_int_eq(*px_exec_rank_location(), 0);
    /* serial: always 0 */
    ck_assert_int_eq(
        px_parallel_for_fn(px_space_by_name("serial"), "ranks", px_range(0, n), record_rank, &a),
        PX_OK);
    for (int64_t i = 0; i < n; ++i)
        ck_assert_int_eq(a.rank_of[i], 0);
    free(a.rank_of);
}
END_TEST

static Suite *scatter_suite(void)
{
    Suite *s = suite_create("scatter");
    TCase *tc = tcase_create("sums");
    tcase_add_checked_fixture(tc, px_test_setup, px_test_teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_loop_test(tc, test_every_mode_equals_the_serial_sum_exactly_for_integers, 0, 12);
    tcase_add_loop_test(tc, test_every_mode_equals_the_serial_sum_within_rounding, 0, 12);
    tcase_add_loop_test(tc, test_duplicated_is_bitwise_repeatable_run_to_run, 0, 2);
    tcase_add_loop_test(tc, test_dynamic_schedule_gives_the_serial_sum, 0, 2);
    tcase_add_test(tc, test_duplicated_on_serial_is_bitwise_the_serial_order);
    tcase_add_test(tc, test_contribute_consumes_and_reset_discards);
    tcase_add_test(tc, test_adds_from_host_code_go_to_rank_zero);
    tcase_add_test(tc, test_exec_rank_is_the_rank_in_a_launch);
    suite_add_tcase(s, tc);
    tc = tcase_create("input");
    tcase_add_checked_fixture(tc, px_test_setup, px_test_teardown);
    tcase_add_test(tc, test_auto_duplicates_within_budget_and_goes_atomic_beyond);
    tcase_add_test(tc, test_huge_n_is_beyond_any_budget);
    tcase_add_test(tc, test_bad_input_is_refused_with_a_status);
    tcase_add_test(tc, test_create_survives_every_allocation_failure);
    suite_add_tcase(s, tc);
    tc = tcase_create("uninitialized");
    tcase_add_test(tc, test_create_before_initialize_is_enotinit);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(scatter_suite());
}
