/* tests/check_atomic.c - parex/atomic.h: every operation of every type under 8 pthreads and
 * inside a threads-space launch (exact integer totals, f64 sums within rounding, min/max,
 * exchange chains, CAS semantics), plus the single-thread contract (old value returned,
 * wrapping, NaN rules). Registered with PX_NUM_THREADS = 1, 2, 8 (tests/atomic.cmake); label
 * concurrency, so it also runs under ThreadSanitizer. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parex/atomic.h"
#include "px_test.h"

#define NTHREADS   8
#define PER_THREAD 20000

/* Start NTHREADS pthreads on fn(arg_i) where arg_i = &args[i] (stride bytes apart). */
static void run_threads(void *(*fn)(void *), void *args, size_t stride)
{
    pthread_t t[NTHREADS];
    for (int i = 0; i < NTHREADS; ++i)
        ck_assert_int_eq(pthread_create(&t[i], NULL, fn, (char *)args + (size_t)i * stride), 0);
    for (int i = 0; i < NTHREADS; ++i)
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
}

/* ---- shared state of the hammering tests --------------------------------------------------- */

typedef struct {
    int32_t i32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
    double f64_frac; /* sum of 0.1s: not exact, checked within rounding */
    int32_t min_i32, max_i32;
    int64_t min_i64, max_i64;
    uint64_t min_u64, max_u64;
    float min_f32, max_f32;
    double min_f64, max_f64;
    int64_t cas_counter;
} shared;

typedef struct {
    shared *s;
    int id;
} hammer_arg;

/* Each thread adds 1..PER_THREAD (and subtracts 1 as often), and folds id-dependent values into
 * the min/max cells. Integers in float/double below 2^24/2^53 add exactly. */
static void hammer_index(shared *s, int id, int k)
{
    px_atomic_add_i32(&s->i32, 3);
    px_atomic_sub_i32(&s->i32, 1);
    px_atomic_fetch_add_i64(&s->i64, (int64_t)k);
    px_atomic_sub_i64(&s->i64, 1);
    px_atomic_add_u64(&s->u64, 2);
    px_atomic_sub_u64(&s->u64, 1);
    px_atomic_add_f32(&s->f32, 1.0f);
    px_atomic_sub_f32(&s->f32, 0.5f);
    px_atomic_add_f64(&s->f64, (double)k);
    px_atomic_fetch_add_f64(&s->f64, 0.25);
    px_atomic_sub_f64(&s->f64, 0.25);
    px_atomic_add_f64(&s->f64_frac, 0.1);
    int32_t v = (int32_t)(id * 100000 + k);
    px_atomic_min_i32(&s->min_i32, -v);
    px_atomic_max_i32(&s->max_i32, v);
    px_atomic_min_i64(&s->min_i64, -(int64_t)v * 1000000);
    px_atomic_max_i64(&s->max_i64, (int64_t)v * 1000000);
    px_atomic_min_u64(&s->min_u64, (uint64_t)v + 5);
    px_atomic_max_u64(&s->max_u64, (uint64_t)v << 20);
    px_atomic_min_f32(&s->min_f32, (float)-v);
    px_atomic_max_f32(&s->max_f32, (float)v);
    px_atomic_min_f64(&s->min_f64, -0.5 * v);
    px_atomic_max_f64(&s->max_f64, 0.5 * v);
    /* increment by a CAS loop: exact only if CAS never succeeds on a stale value */
    int64_t old = px_atomic_add_i64(&s->cas_counter, 0); /* an atomic read */
    for (;;) {
        int64_t seen = px_atomic_cas_i64(&s->cas_counter, old, old + 1);
        if (seen == old)
            break;
        old = seen;
    }
}

static void shared_init(shared *s)
{
    memset(s, 0, sizeof *s);
    s->min_i32 = INT32_MAX;
    s->max_i32 = INT32_MIN;
    s->min_i64 = INT64_MAX;
    s->max_i64 = INT64_MIN;
    s->min_u64 = UINT64_MAX;
    s->max_u64 = 0;
    s->min_f32 = FLT_MAX;
    s->max_f32 = -FLT_MAX;
    s->min_f64 = DBL_MAX;
    s->max_f64 = -DBL_MAX;
}

/* Totals for ids 0..nid-1, each running k = 1..per. */
static void shared_check(const shared *s, int nid, int per)
{
    int64_t calls = (int64_t)nid * per;
    int64_t ksum = (int64_t)nid * ((int64_t)per * (per + 1) / 2);
    ck_assert_int_eq(s->i32, 2 * calls);
    ck_assert_int_eq(s->i64, ksum - calls);
    ck_assert_uint_eq(s->u64, (uint64_t)calls);
    ck_assert(s->f32 == 0.5f * (float)calls);
    ck_assert(s->f64 == (double)ksum);
    /* calls adds of 0.1, each rounding by at most half an ulp of a partial sum <= the total */
    double exact = 0.1 * (double)calls;
    ck_assert_msg(fabs(s->f64_frac - exact) <= (double)calls * DBL_EPSILON * exact,
                  "sum of 0.1s %.17g vs %.17g", s->f64_frac, exact);
    int32_t top = (int32_t)((nid - 1) * 100000 + per);
    ck_assert_int_eq(s->min_i32, -top);
    ck_assert_int_eq(s->max_i32, top);
    ck_assert_int_eq(s->min_i64, -(int64_t)top * 1000000);
    ck_assert_int_eq(s->max_i64, (int64_t)top * 1000000);
    ck_assert_uint_eq(s->min_u64, 1 + 5);
    ck_assert_uint_eq(s->max_u64, (uint64_t)top << 20);
    ck_assert(s->min_f32 == (float)-top);
    ck_assert(s->max_f32 == (float)top);
    ck_assert(s->min_f64 == -0.5 * top);
    ck_assert(s->max_f64 == 0.5 * top);
    ck_assert_int_eq(s->cas_counter, calls);
}

static void *hammer_thread(void *varg)
{
    hammer_arg *a = varg;
    for (int k = 1; k <= PER_THREAD; ++k)
        hammer_index(a->s, a->id, k);
    return NULL;
}

START_TEST(test_every_op_under_8_pthreads_gives_exact_totals)
{
    shared s;
    shared_init(&s);
    hammer_arg args[NTHREADS];
    for (int i = 0; i < NTHREADS; ++i)
        args[i] = (hammer_arg){&s, i};
    run_threads(hammer_thread, args, sizeof args[0]);
    shared_check(&s, NTHREADS, PER_THREAD);
}
END_TEST

/* The same work as a threads-space launch: index idx is (id, k) = (idx / PER, idx % PER + 1),
 * with small dynamic chunks so the pool's ranks interleave on the same cells. */
static void hammer_chunk(int64_t b, int64_t e, void *ctx)
{
    for (int64_t idx = b; idx < e; ++idx)
        hammer_index(ctx, (int)(idx / PER_THREAD), (int)(idx % PER_THREAD) + 1);
}

START_TEST(test_every_op_in_threads_launch_gives_exact_totals)
{
    shared s;
    shared_init(&s);
    px_space *sp = px_space_by_name("threads");
    ck_assert_ptr_nonnull(sp);
    int rc = px_parallel_for_fn(
        sp, "atomic_hammer",
        px_range_chunked(0, (int64_t)NTHREADS * PER_THREAD, 64, PX_SCHEDULE_DYNAMIC), hammer_chunk,
        &s);
    ck_assert_int_eq(rc, PX_OK);
    shared_check(&s, NTHREADS, PER_THREAD);
}
END_TEST

/* ---- returned old values ------------------------------------------------------------------- */

typedef struct {
    uint64_t *ticket;
    uint8_t *seen; /* one cell per ticket */
} ticket_arg;

static void *ticket_thread(void *varg)
{
    ticket_arg *a = varg;
    for (int k = 0; k < PER_THREAD; ++k) {
        uint64_t t = px_atomic_fetch_add_u64(a->ticket, 1);
        a->seen[t] = (uint8_t)(a->seen[t] + 1); /* distinct tickets: no two threads write one */
    }
    return NULL;
}

START_TEST(test_fetch_add_hands_out_each_ticket_once)
{
    uint64_t ticket = 0;
    uint8_t *seen = calloc((size_t)NTHREADS * PER_THREAD, 1);
    ck_assert_ptr_nonnull(seen);
    ticket_arg args[NTHREADS];
    for (int i = 0; i < NTHREADS; ++i)
        args[i] = (ticket_arg){&ticket, seen};
    run_threads(ticket_thread, args, sizeof args[0]);
    ck_assert_uint_eq(ticket, (uint64_t)NTHREADS * PER_THREAD);
    for (int i = 0; i < NTHREADS * PER_THREAD; ++i)
        ck_assert_int_eq(seen[i], 1);
    free(seen);
}
END_TEST

typedef struct {
    int64_t *cell;
    int id;
    int64_t got[PER_THREAD];
} xchg_arg;

static void *xchg_thread(void *varg)
{
    xchg_arg *a = varg;
    for (int k = 0; k < PER_THREAD; ++k)
        a->got[k] = px_atomic_exchange_i64(a->cell, (int64_t)a->id * PER_THREAD + k + 1);
    return NULL;
}

/* Every value written is returned by exactly one later exchange, or is the final value. */
START_TEST(test_exchange_returns_every_written_value_once)
{
    int64_t cell = 0;
    xchg_arg *args = calloc(NTHREADS, sizeof *args);
    ck_assert_ptr_nonnull(args);
    for (int i = 0; i < NTHREADS; ++i) {
        args[i].cell = &cell;
        args[i].id = i;
    }
    run_threads(xchg_thread, args, sizeof args[0]);
    size_t n = (size_t)NTHREADS * PER_THREAD + 1;
    uint8_t *count = calloc(n, 1);
    ck_assert_ptr_nonnull(count);
    for (int i = 0; i < NTHREADS; ++i)
        for (int k = 0; k < PER_THREAD; ++k)
            count[args[i].got[k]]++;
    count[cell]++;
    for (size_t v = 0; v < n; ++v)
        ck_assert_msg(count[v] == 1, "value %zu seen %d times", v, count[v]);
    free(count);
    free(args);
}
END_TEST

START_TEST(test_exchange_f64_and_f32_return_old_bits)
{
    double d = -0.0;
    ck_assert(signbit(px_atomic_exchange_f64(&d, 2.5)));
    ck_assert(d == 2.5);
    float f = 1.5f;
    ck_assert(px_atomic_exchange_f32(&f, -3.0f) == 1.5f);
    ck_assert(f == -3.0f);
}
END_TEST

/* ---- single-thread contract --------------------------------------------------------------- */

START_TEST(test_cas_swaps_only_on_match_and_returns_old)
{
    int32_t a = 5;
    ck_assert_int_eq(px_atomic_cas_i32(&a, 4, 9), 5); /* mismatch: unchanged, current returned */
    ck_assert_int_eq(a, 5);
    ck_assert_int_eq(px_atomic_cas_i32(&a, 5, 9), 5); /* match: swapped, old returned */
    ck_assert_int_eq(a, 9);
    int64_t b = INT64_MIN;
    ck_assert_int_eq(px_atomic_cas_i64(&b, 0, 1), INT64_MIN);
    ck_assert_int_eq(px_atomic_cas_i64(&b, INT64_MIN, INT64_MAX), INT64_MIN);
    ck_assert_int_eq(b, INT64_MAX);
    uint64_t c = UINT64_MAX;
    ck_assert_uint_eq(px_atomic_cas_u64(&c, 1, 2), UINT64_MAX);
    ck_assert_uint_eq(c, UINT64_MAX);
    ck_assert_uint_eq(px_atomic_cas_u64(&c, UINT64_MAX, 7), UINT64_MAX);
    ck_assert_uint_eq(c, 7);
}
END_TEST

START_TEST(test_every_op_returns_the_old_value)
{
    int32_t i = 10;
    ck_assert_int_eq(px_atomic_add_i32(&i, 5), 10);
    ck_assert_int_eq(px_atomic_sub_i32(&i, 3), 15);
    ck_assert_int_eq(px_atomic_min_i32(&i, 20), 12); /* no change */
    ck_assert_int_eq(px_atomic_min_i32(&i, -4), 12);
    ck_assert_int_eq(px_atomic_max_i32(&i, 7), -4);
    ck_assert_int_eq(px_atomic_fetch_add_i32(&i, 1), 7);
    ck_assert_int_eq(i, 8);
    uint64_t u = 3;
    ck_assert_uint_eq(px_atomic_max_u64(&u, 2), 3);
    ck_assert_uint_eq(px_atomic_min_u64(&u, 1), 3);
    ck_assert_uint_eq(px_atomic_exchange_u64(&u, 9), 1);
    ck_assert_uint_eq(u, 9);
    double d = 1.0;
    ck_assert(px_atomic_add_f64(&d, 0.5) == 1.0);
    ck_assert(px_atomic_max_f64(&d, 1.0) == 1.5); /* no change */
    ck_assert(px_atomic_min_f64(&d, -2.0) == 1.5);
    ck_assert(d == -2.0);
    float f = 1.0f;
    ck_assert(px_atomic_add_f32(&f, 0.5f) == 1.0f);
    ck_assert(px_atomic_min_f32(&f, 2.0f) == 1.5f);
    ck_assert(px_atomic_max_f32(&f, 2.0f) == 1.5f);
    ck_assert(f == 2.0f);
}
END_TEST

START_TEST(test_integer_add_and_sub_wrap)
{
    int32_t i = INT32_MAX;
    px_atomic_add_i32(&i, 1);
    ck_assert_int_eq(i, INT32_MIN);
    px_atomic_sub_i32(&i, 1);
    ck_assert_int_eq(i, INT32_MAX);
    int64_t l = INT64_MIN;
    px_atomic_sub_i64(&l, 1);
    ck_assert_int_eq(l, INT64_MAX);
    uint64_t u = 0;
    px_atomic_sub_u64(&u, 1);
    ck_assert_uint_eq(u, UINT64_MAX);
}
END_TEST

START_TEST(test_nan_never_wins_min_or_max)
{
    double d = 1.0;
    px_atomic_min_f64(&d, NAN);
    px_atomic_max_f64(&d, NAN);
    ck_assert(d == 1.0);
    float f = 1.0f;
    px_atomic_min_f32(&f, NAN);
    px_atomic_max_f32(&f, NAN);
    ck_assert(f == 1.0f);
    d = NAN; /* a NaN already stored stays: nothing compares below or above it */
    px_atomic_min_f64(&d, -1.0);
    ck_assert(isnan(d));
}
END_TEST

static Suite *atomic_suite(void)
{
    Suite *s = suite_create("atomic");
    TCase *tc = tcase_create("single");
    tcase_add_test(tc, test_cas_swaps_only_on_match_and_returns_old);
    tcase_add_test(tc, test_every_op_returns_the_old_value);
    tcase_add_test(tc, test_integer_add_and_sub_wrap);
    tcase_add_test(tc, test_nan_never_wins_min_or_max);
    tcase_add_test(tc, test_exchange_f64_and_f32_return_old_bits);
    suite_add_tcase(s, tc);
    tc = tcase_create("concurrent");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_every_op_under_8_pthreads_gives_exact_totals);
    tcase_add_test(tc, test_fetch_add_hands_out_each_ticket_once);
    tcase_add_test(tc, test_exchange_returns_every_written_value_once);
    suite_add_tcase(s, tc);
    tc = tcase_create("launch");
    tcase_add_checked_fixture(tc, px_test_setup, px_test_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_every_op_in_threads_launch_gives_exact_totals);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(atomic_suite());
}
