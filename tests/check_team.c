/*
 * tests/check_team.c - team launches (parex/team.h) on a host space: PX_TEST_SPACE picks serial
 * or threads, PX_NUM_THREADS the thread count (tests/team.cmake: 1, 2, 3, 4 and 8 ranks).
 *
 * Every test walks league sizes 0, 1, 7 and 1000, every team size the space can give (1 on
 * serial, 1..P on threads, plus 0 = the space's choice) and both schedules, through host
 * function bodies and single-source kernels, direct launches and engine pushes.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "px_test.h"

static px_space *space;
static const char *space_name;
static int nthreads;

static const int64_t leagues[] = {0, 1, 7, 1000};
#define N_LEAGUES (sizeof leagues / sizeof leagues[0])
static const px_schedule schedules[] = {PX_SCHEDULE_STATIC, PX_SCHEDULE_DYNAMIC};

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
    nthreads = px_space_concurrency(space);
    ck_assert_int_ge(nthreads, 1);
}

static void teardown(void)
{
    px_test_teardown();
}

/* The largest team the space gives: 1 on serial, the thread count on threads. */
static int max_team(void)
{
    return strcmp(space_name, "serial") == 0 ? 1 : nthreads;
}

/* ---- coverage: every member of every team runs once ------------------------------------------ */

#define MAXT 8
typedef struct {
    int64_t league;
    int team;      /* requested (0: the space's) */
    int *hits;     /* league x MAXT */
    int *errors;   /* league x MAXT */
    int *got_size; /* league: the team size members saw */
} cover_ctx;

static void cover_body(const px_team *t, void *p)
{
    cover_ctx *c = p;
    int64_t lr = px_team_league_rank(t);
    int r = px_team_rank(t), n = px_team_size(t);
    int bad = lr < 0 || lr >= c->league || px_team_league_size(t) != c->league || r < 0 || r >= n ||
              n > MAXT || (c->team > 0 && n != c->team);
    if (bad) {
        /* Out of range: nothing can be indexed; count it on team 0's slot 0 would race. */
        abort();
    }
    c->hits[lr * MAXT + r] += 1;
    if (r == 0)
        c->got_size[lr] = n;
    (void)c->errors;
}

START_TEST(test_every_member_of_every_team_runs_exactly_once)
{
    for (size_t li = 0; li < N_LEAGUES; ++li) {
        int64_t L = leagues[li];
        for (int ts = 0; ts <= max_team() && ts <= MAXT; ++ts) {
            for (int si = 0; si < 2; ++si) {
                size_t cells = (size_t)(L > 0 ? L : 1) * MAXT;
                cover_ctx c = {L, ts, calloc(cells, sizeof(int)), calloc(cells, sizeof(int)),
                               calloc((size_t)(L > 0 ? L : 1), sizeof(int))};
                px_team_policy p =
                    px_team_policy_schedule(px_team_policy_make(L, ts, 0), schedules[si]);
                ck_assert_int_eq(px_parallel_for_team_fn(space, "cover", p, cover_body, &c), PX_OK);
                for (int64_t lr = 0; lr < L; ++lr) {
                    int n = c.got_size[lr];
                    ck_assert_msg(n >= 1 && (ts == 0 || n == ts),
                                  "league %lld team %d: team %lld saw team size %d", (long long)L,
                                  ts, (long long)lr, n);
                    for (int r = 0; r < MAXT; ++r)
                        ck_assert_msg(c.hits[lr * MAXT + r] == (r < n ? 1 : 0),
                                      "league %lld team %d %s on %s: team %lld member %d ran %d "
                                      "times",
                                      (long long)L, ts, si ? "dynamic" : "static", space_name,
                                      (long long)lr, r, c.hits[lr * MAXT + r]);
                }
                free(c.hits);
                free(c.errors);
                free(c.got_size);
            }
        }
    }
}
END_TEST

/* ---- barriers and scratch ------------------------------------------------------------------- */

typedef struct {
    int *errors; /* league x MAXT */
    size_t per_thread;
} scratch_ctx;

/* Three phases through team scratch: member r writes slot r, barrier, reads its neighbour's,
 * barrier, writes the neighbour's value shifted back, barrier, checks. Thread scratch is filled
 * with a pattern of (team, member) at the start and checked at the end. */
static void scratch_body(const px_team *t, void *p)
{
    scratch_ctx *c = p;
    int64_t lr = px_team_league_rank(t);
    int r = px_team_rank(t), n = px_team_size(t);
    int64_t *ts = px_team_scratch(t);
    unsigned char *mine = px_team_thread_scratch(t);
    int err = 0;
    if (((uintptr_t)ts & 63u) != 0 || ((uintptr_t)mine & 63u) != 0)
        err |= 1;
    unsigned char pat = (unsigned char)(lr * 31 + r * 7 + 1);
    memset(mine, pat, c->per_thread);
    ts[r] = lr * 1000 + r;
    px_team_barrier(t);
    int nb = (r + 1) % n;
    int64_t got = ts[nb];
    if (got != lr * 1000 + nb)
        err |= 2;
    px_team_barrier(t);
    ts[nb] = got + 1; /* every slot written once, by its left neighbour */
    px_team_barrier(t);
    if (ts[r] != lr * 1000 + r + 1)
        err |= 4;
    for (size_t k = 0; k < c->per_thread; ++k)
        if (mine[k] != pat) {
            err |= 8;
            break;
        }
    c->errors[lr * MAXT + r] = err;
}

START_TEST(test_barriers_exchange_data_through_team_scratch_and_thread_scratch_is_private)
{
    for (size_t li = 0; li < N_LEAGUES; ++li) {
        int64_t L = leagues[li];
        for (int ts = 0; ts <= max_team() && ts <= MAXT; ++ts) {
            for (int si = 0; si < 2; ++si) {
                size_t cells = (size_t)(L > 0 ? L : 1) * MAXT;
                scratch_ctx c = {calloc(cells, sizeof(int)), 200};
                for (size_t k = 0; k < cells; ++k)
                    c.errors[k] = -1;
                px_team_policy p = px_team_policy_make(L, ts, 0);
                p = px_team_policy_scratch(p, MAXT * sizeof(int64_t), c.per_thread);
                p = px_team_policy_schedule(p, schedules[si]);
                ck_assert_int_eq(px_parallel_for_team_fn(space, "scratch", p, scratch_body, &c),
                                 PX_OK);
                for (int64_t lr = 0; lr < L; ++lr)
                    for (int r = 0; r < (ts ? ts : 1); ++r)
                        ck_assert_msg(c.errors[lr * MAXT + r] == 0,
                                      "league %lld team %d %s: team %lld member %d error %d",
                                      (long long)L, ts, si ? "dynamic" : "static", (long long)lr, r,
                                      c.errors[lr * MAXT + r]);
                free(c.errors);
            }
        }
    }
}
END_TEST

/* Scratch grows on demand and shrinking requests reuse it: thread scratch of 8 B, 300 KiB,
 * 16 B, 1 MiB in a row, each fully written and checked by its member. */
START_TEST(test_scratch_grows_on_demand_between_launches)
{
    static const size_t sizes[] = {8, 300 * 1024, 16, 1024 * 1024};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
        int ts = max_team();
        scratch_ctx c = {calloc((size_t)7 * MAXT, sizeof(int)), sizes[k]};
        px_team_policy p =
            px_team_policy_scratch(px_team_policy_make(7, ts, 0), MAXT * sizeof(int64_t), sizes[k]);
        ck_assert_int_eq(px_parallel_for_team_fn(space, "grow", p, scratch_body, &c), PX_OK);
        for (int64_t lr = 0; lr < 7; ++lr)
            for (int r = 0; r < ts; ++r)
                ck_assert_msg(c.errors[lr * MAXT + r] == 0,
                              "thread scratch %zu: team %lld member %d error %d", sizes[k],
                              (long long)lr, r, c.errors[lr * MAXT + r]);
        free(c.errors);
    }
}
END_TEST

/* ---- nested ranges ----------------------------------------------------------------------------
 */

#define NI 37
#define NJ 5
typedef struct {
    int *counts; /* league x NI x NJ */
} nest_args;

PX_TEAM_FOR(nest_k, nest_args, t, a)
{
    int64_t lr = px_team_league_rank(t);
    PX_TEAM_THREAD_FOR(t, i, 0, NI)
    {
        PX_THREAD_VECTOR_FOR(t, j, 0, NJ)
        {
            a->counts[(lr * NI + i) * NJ + j] += 1;
        }
    }
    /* An empty and a reversed range visit nothing. */
    PX_TEAM_THREAD_FOR(t, i, 5, 5)
    {
        a->counts[0] += 1000;
    }
    PX_TEAM_THREAD_FOR(t, i, 9, 3)
    {
        a->counts[0] += 1000;
    }
}

START_TEST(test_nested_team_and_vector_ranges_cover_each_index_once)
{
    for (size_t li = 0; li < N_LEAGUES; ++li) {
        int64_t L = leagues[li];
        for (int ts = 0; ts <= max_team() && ts <= MAXT; ++ts) {
            size_t cells = (size_t)(L > 0 ? L : 1) * NI * NJ;
            nest_args a = {calloc(cells, sizeof(int))};
            px_team_policy p = px_team_policy_make(L, ts, ts == 1 ? 4 : 0);
            ck_assert_int_eq(px_parallel_for_team(space, NULL, p, &nest_k, &a, sizeof a), PX_OK);
            for (size_t k = 0; k < (size_t)L * NI * NJ; ++k)
                ck_assert_msg(a.counts[k] == 1, "league %lld team %d: cell %zu visited %d times",
                              (long long)L, ts, k, a.counts[k]);
            free(a.counts);
        }
    }
}
END_TEST

/* ---- reductions with a non-commutative join ----------------------------------------------------
 */

/* Digit strings: v is the number the digits spell (mod 2^64), pw 10^digits (mod 2^64). Joining
 * appends src's digits to dst's: associative, not commutative. */
typedef struct {
    uint64_t v, pw;
} digits;
static void digits_identity(void *p)
{
    *(digits *)p = (digits){0, 1};
}
static void digits_join(void *d, const void *s)
{
    digits *a = d;
    const digits *b = s;
    a->v = a->v * b->pw + b->v;
    a->pw *= b->pw;
}
static const px_reducer digits_r = {.name = "digits",
                                    .value_size = sizeof(digits),
                                    .value_align = _Alignof(digits),
                                    .identity = digits_identity,
                                    .join = digits_join,
                                    .op = PX_REDUCER_CUSTOM,
                                    .type = PX_VALUE_CUSTOM};

static digits digit_of(int64_t lr, int r)
{
    return (digits){(uint64_t)((lr * 7 + r * 3) % 10), 10};
}

typedef struct {
    int *errors; /* league x MAXT */
} tred_ctx;

/* Every member contributes digit_of(lr, r) to px_team_reduce twice (the second call checks the
 * double-buffered slots) and checks that it got the team's digits in rank order; it then folds
 * its digit into the launch's acc. */
static void tred_body(const px_team *t, void *p, void *acc)
{
    tred_ctx *c = p;
    int64_t lr = px_team_league_rank(t);
    int r = px_team_rank(t), n = px_team_size(t);
    digits want = {0, 1};
    for (int k = 0; k < n; ++k) {
        digits d = digit_of(lr, k);
        digits_join(&want, &d);
    }
    int err = 0;
    for (int round = 0; round < 3; ++round) {
        digits mine = digit_of(lr, r), got;
        if (px_team_reduce(t, &digits_r, &mine, &got) != PX_OK)
            err |= 1;
        if (got.v != want.v || got.pw != want.pw)
            err |= 2;
        /* Same buffer in and out. */
        if (px_team_reduce(t, &digits_r, &mine, &mine) != PX_OK || mine.v != want.v)
            err |= 4;
    }
    c->errors[lr * MAXT + r] = err;
    digits d = digit_of(lr, r);
    digits_join(acc, &d);
}

START_TEST(test_team_reduce_and_the_launch_reduce_join_in_rank_and_league_order)
{
    for (size_t li = 0; li < N_LEAGUES; ++li) {
        int64_t L = leagues[li];
        for (int ts = 0; ts <= max_team() && ts <= MAXT; ++ts) {
            for (int si = 0; si < 2; ++si) {
                size_t cells = (size_t)(L > 0 ? L : 1) * MAXT;
                tred_ctx c = {calloc(cells, sizeof(int))};
                px_team_policy p =
                    px_team_policy_schedule(px_team_policy_make(L, ts, 0), schedules[si]);
                digits res = {12345, 678};
                ck_assert_int_eq(
                    px_parallel_reduce_team_fn(space, "tred", p, tred_body, &c, &digits_r, &res),
                    PX_OK);
                int n = ts;
                if (n == 0) {
                    /* The space's choice: read it back from a launch of one team. */
                    cover_ctx cc = {1, 0, calloc(MAXT, sizeof(int)), calloc(MAXT, sizeof(int)),
                                    calloc(1, sizeof(int))};
                    ck_assert_int_eq(px_parallel_for_team_fn(space, "size",
                                                             px_team_policy_make(1, 0, 0),
                                                             cover_body, &cc),
                                     PX_OK);
                    n = cc.got_size[0];
                    free(cc.hits);
                    free(cc.errors);
                    free(cc.got_size);
                }
                digits want = {0, 1};
                for (int64_t lr = 0; lr < L; ++lr) {
                    for (int r = 0; r < n; ++r) {
                        digits d = digit_of(lr, r);
                        digits_join(&want, &d);
                        ck_assert_msg(c.errors[lr * MAXT + r] == 0,
                                      "league %lld team %d: team %lld member %d team reduce "
                                      "error %d",
                                      (long long)L, ts, (long long)lr, r, c.errors[lr * MAXT + r]);
                    }
                }
                ck_assert_msg(res.v == want.v && res.pw == want.pw,
                              "league %lld team %d %s on %s: launch reduce %llu/%llu, expected "
                              "%llu/%llu (league order, rank order)",
                              (long long)L, ts, si ? "dynamic" : "static", space_name,
                              (unsigned long long)res.v, (unsigned long long)res.pw,
                              (unsigned long long)want.v, (unsigned long long)want.pw);
                free(c.errors);
            }
        }
    }
}
END_TEST

/* ---- single-source reduce, reproducible floating-point sums ------------------------------------
 */

typedef struct {
    const double *x;
    int64_t rows, width;
} rowsum_args;

/* A team sums its row: members take a share of the columns, team-reduce, member 0 folds. */
PX_TEAM_REDUCE(rowsum_k, rowsum_args, double, t, a, acc)
{
    int64_t row = px_team_league_rank(t);
    double part = 0;
    PX_TEAM_THREAD_FOR(t, j, 0, a->width)
    {
        part += a->x[row * a->width + j];
    }
    double total;
    (void)px_team_reduce(t, &px_sum_f64, &part, &total);
    if (px_team_rank(t) == 0)
        *acc += total;
}

START_TEST(test_a_floating_point_team_reduce_is_bitwise_reproducible)
{
    enum { ROWS = 1000, W = 53 };
    double *x = malloc(sizeof(double) * ROWS * W);
    double exact = 0;
    for (int k = 0; k < ROWS * W; ++k) {
        x[k] = 1.0 / (1.0 + k % 97) * ((k % 3) ? 1.0 : -0.5);
        exact += x[k];
    }
    rowsum_args a = {x, ROWS, W};
    for (int ts = 0; ts <= max_team() && ts <= MAXT; ++ts) {
        for (int si = 0; si < 2; ++si) {
            px_team_policy p =
                px_team_policy_schedule(px_team_policy_make(ROWS, ts, 0), schedules[si]);
            double r1 = 0, r2 = 0;
            ck_assert_int_eq(
                px_parallel_reduce_team(space, NULL, p, &rowsum_k, &a, sizeof a, &px_sum_f64, &r1),
                PX_OK);
            for (int rep = 0; rep < 5; ++rep) {
                ck_assert_int_eq(px_parallel_reduce_team(space, NULL, p, &rowsum_k, &a, sizeof a,
                                                         &px_sum_f64, &r2),
                                 PX_OK);
                ck_assert_msg(memcmp(&r1, &r2, sizeof r1) == 0,
                              "team %d: %.17g then %.17g: not bitwise reproducible", ts, r1, r2);
            }
            ck_assert_double_eq_tol(r1, exact, 1e-9 * (1 + (exact < 0 ? -exact : exact)));
        }
    }
    free(x);
}
END_TEST

/* ---- the engine path ------------------------------------------------------------------------- */

START_TEST(test_engine_pushes_run_team_launches_like_direct_calls)
{
    px_engine *e = px_engine_default();
    ck_assert_ptr_nonnull(e);
    px_var *v = px_var_new(e);
    px_var *w[1] = {v};
    int64_t L = 1000;
    int ts = max_team() > 2 ? 2 : max_team();
    cover_ctx c = {L, ts, calloc((size_t)L * MAXT, sizeof(int)),
                   calloc((size_t)L * MAXT, sizeof(int)), calloc((size_t)L, sizeof(int))};
    px_team_policy p = px_team_policy_make(L, ts, 0);
    ck_assert_int_eq(
        px_engine_push_parallel_for_team_fn(e, space, "cover", p, cover_body, &c, NULL, 0, w, 1),
        PX_OK);
    tred_ctx tc = {calloc((size_t)L * MAXT, sizeof(int))};
    digits res = {1, 1};
    ck_assert_int_eq(px_engine_push_parallel_reduce_team_fn(e, space, "tred", p, tred_body, &tc,
                                                            &digits_r, &res, NULL, 0, w, 1),
                     PX_OK);
    nest_args na = {calloc((size_t)L * NI * NJ, sizeof(int))};
    ck_assert_int_eq(
        px_engine_push_parallel_for_team(e, space, NULL, p, &nest_k, &na, sizeof na, NULL, 0, w, 1),
        PX_OK);
    double *x = malloc(sizeof(double) * 64 * 10);
    for (int k = 0; k < 640; ++k)
        x[k] = k;
    rowsum_args ra = {x, 64, 10};
    double sum = -1;
    ck_assert_int_eq(px_engine_push_parallel_reduce_team(
                         e, space, NULL, px_team_policy_make(64, ts, 0), &rowsum_k, &ra, sizeof ra,
                         &px_sum_f64, &sum, NULL, 0, w, 1),
                     PX_OK);
    /* A bad launch is refused at push, with the direct call's status. */
    ck_assert_int_eq(px_engine_push_parallel_for_team_fn(e, space, "bad",
                                                         px_team_policy_make(-1, 0, 0), cover_body,
                                                         &c, NULL, 0, w, 1),
                     PX_EINVAL);
    ck_assert_int_eq(
        px_engine_push_parallel_for_team_fn(e, space, "bad", p, NULL, &c, NULL, 0, w, 1),
        PX_EFAULT);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
    for (int64_t lr = 0; lr < L; ++lr)
        for (int r = 0; r < MAXT; ++r) {
            ck_assert_int_eq(c.hits[lr * MAXT + r], r < ts ? 1 : 0);
            if (r < ts)
                ck_assert_int_eq(tc.errors[lr * MAXT + r], 0);
        }
    for (int64_t k = 0; k < L * NI * NJ; ++k)
        ck_assert_int_eq(na.counts[k], 1);
    digits want = {1, 1};
    for (int64_t lr = 0; lr < L; ++lr)
        for (int r = 0; r < ts; ++r) {
            digits d = digit_of(lr, r);
            digits_join(&want, &d);
        }
    /* The result is overwritten, not accumulated: the {1, 1} start is not in it. */
    digits want0 = {0, 1};
    for (int64_t lr = 0; lr < L; ++lr)
        for (int r = 0; r < ts; ++r) {
            digits d = digit_of(lr, r);
            digits_join(&want0, &d);
        }
    ck_assert(res.v == want0.v && res.pw == want0.pw);
    (void)want;
    ck_assert_double_eq(sum, 639.0 * 640.0 / 2);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
    free(c.hits);
    free(c.errors);
    free(c.got_size);
    free(tc.errors);
    free(na.counts);
    free(x);
}
END_TEST

/* ---- bad input and limits ------------------------------------------------------------------- */

static void nop_body(const px_team *t, void *p)
{
    (void)t;
    (void)p;
}

static void nop_reduce(const px_team *t, void *p, void *acc)
{
    (void)t;
    (void)p;
    (void)acc;
}

/* A team launch from inside a team body: team size 1 runs inline, larger is refused. */
typedef struct {
    int rc_one, rc_two, inner_runs;
} nested_ctx;
static void inner_body(const px_team *t, void *p)
{
    (void)t;
    nested_ctx *c = p;
    c->inner_runs += 1;
}
static void outer_body(const px_team *t, void *p)
{
    nested_ctx *c = p;
    if (px_team_league_rank(t) != 0 || px_team_rank(t) != 0)
        return;
    c->rc_one =
        px_parallel_for_team_fn(space, "inner1", px_team_policy_make(3, 1, 0), inner_body, c);
    c->rc_two =
        px_parallel_for_team_fn(space, "inner2", px_team_policy_make(3, 2, 0), inner_body, c);
}

START_TEST(test_bad_sizes_and_scratch_are_einval_naming_the_limit)
{
    char want[128];
    px_test_log_capture();

    ck_assert_int_eq(
        px_parallel_for_team_fn(space, "neg", px_team_policy_make(-1, 0, 0), nop_body, NULL),
        PX_EINVAL);
    ck_assert(px_test_log_contains("league_size -1"));
    ck_assert_int_eq(
        px_parallel_for_team_fn(space, "neg", px_team_policy_make(1, -2, 0), nop_body, NULL),
        PX_EINVAL);
    ck_assert_int_eq(
        px_parallel_for_team_fn(space, "vec", px_team_policy_make(1, 1, 33), nop_body, NULL),
        PX_EINVAL);
    ck_assert(px_test_log_contains("0..32"));
    px_test_log_clear();
    ck_assert_int_eq(px_parallel_for_team_fn(
                         space, "big", px_team_policy_make(1, max_team() + 1, 0), nop_body, NULL),
                     PX_EINVAL);
    snprintf(want, sizeof want, "limit of %d", max_team());
    ck_assert_msg(px_test_log_contains(want), "message '%s' lacks '%s'", px_test_log_text(), want);
    px_test_log_clear();
    px_team_policy p =
        px_team_policy_scratch(px_team_policy_make(1, 1, 0), PX_TEAM_HOST_MAX_SCRATCH, 64);
    ck_assert_int_eq(px_parallel_for_team_fn(space, "scratch", p, nop_body, NULL), PX_EINVAL);
    snprintf(want, sizeof want, "limit of %zu bytes", PX_TEAM_HOST_MAX_SCRATCH);
    ck_assert_msg(px_test_log_contains(want), "message '%s' lacks '%s'", px_test_log_text(), want);
    p = px_team_policy_scratch(px_team_policy_make(1, 1, 0), SIZE_MAX, 0);
    ck_assert_int_eq(px_parallel_for_team_fn(space, "scratch", p, nop_body, NULL), PX_EINVAL);
    p = px_team_policy_scratch(px_team_policy_make(1, 1, 0), 0, SIZE_MAX / 2);
    ck_assert_int_eq(px_parallel_for_team_fn(space, "scratch", p, nop_body, NULL), PX_EINVAL);
    /* Exactly at the limit is accepted (nothing is allocated for a league of 0). */
    p = px_team_policy_scratch(px_team_policy_make(0, 1, 0), PX_TEAM_HOST_MAX_SCRATCH, 0);
    ck_assert_int_eq(px_parallel_for_team_fn(space, "scratch", p, nop_body, NULL), PX_OK);
    p = px_team_policy_schedule(px_team_policy_make(1, 1, 0), (px_schedule)7);
    ck_assert_int_eq(px_parallel_for_team_fn(space, "sched", p, nop_body, NULL), PX_EINVAL);

    ck_assert_int_eq(
        px_parallel_for_team_fn(space, "null", px_team_policy_make(1, 1, 0), NULL, NULL),
        PX_EFAULT);
    double d = 0;
    ck_assert_int_eq(px_parallel_reduce_team_fn(space, "r", px_team_policy_make(1, 1, 0),
                                                nop_reduce, NULL, NULL, &d),
                     PX_EFAULT);
    ck_assert_int_eq(px_parallel_reduce_team_fn(space, "r", px_team_policy_make(1, 1, 0),
                                                nop_reduce, NULL, &px_sum_f64, NULL),
                     PX_EFAULT);
    /* Kernels of the wrong kind, size or magic. */
    rowsum_args ra = {NULL, 0, 0};
    ck_assert_int_eq(
        px_parallel_for_team(space, NULL, px_team_policy_make(1, 1, 0), &rowsum_k, &ra, sizeof ra),
        PX_EINVAL);
    ck_assert_int_eq(px_parallel_reduce_team(space, NULL, px_team_policy_make(1, 1, 0), &rowsum_k,
                                             &ra, sizeof ra - 1, &px_sum_f64, &d),
                     PX_EINVAL);
    ck_assert_int_eq(px_parallel_reduce_team(space, NULL, px_team_policy_make(1, 1, 0), &rowsum_k,
                                             &ra, sizeof ra, &px_sum_f32, &d),
                     PX_EINVAL);
    ck_assert_int_eq(
        px_parallel_for_team(space, NULL, px_team_policy_make(1, 1, 0), NULL, &ra, sizeof ra),
        PX_EFAULT);
    px_team_kernel fake = nest_k;
    fake.magic = 0;
    nest_args na = {NULL};
    ck_assert_int_eq(
        px_parallel_for_team(space, NULL, px_team_policy_make(1, 1, 0), &fake, &na, sizeof na),
        PX_EINVAL);

    /* League 0: nothing runs, a reduce stores the identity (overwriting). */
    d = 42;
    ck_assert_int_eq(px_parallel_reduce_team_fn(space, "empty", px_team_policy_make(0, 0, 0),
                                                nop_reduce, NULL, &px_sum_f64, &d),
                     PX_OK);
    ck_assert_double_eq(d, 0.0);

    /* px_team_reduce's own checks. */
    px_team fake_member;
    memset(&fake_member, 0, sizeof fake_member);
    fake_member.pxi_team_size = 1;
    ck_assert_int_eq(px_team_reduce(NULL, &px_sum_f64, &d, &d), PX_EFAULT);
    ck_assert_int_eq(px_team_reduce(&fake_member, NULL, &d, &d), PX_EFAULT);
    px_reducer bad = px_sum_f64;
    bad.join = NULL;
    ck_assert_int_eq(px_team_reduce(&fake_member, &bad, &d, &d), PX_EINVAL);

    /* Nested team launches run inline with team size 1; larger is refused. */
    nested_ctx nc = {-1, -1, 0};
    ck_assert_int_eq(
        px_parallel_for_team_fn(space, "outer", px_team_policy_make(2, 1, 0), outer_body, &nc),
        PX_OK);
    ck_assert_int_eq(nc.rc_one, PX_OK);
    ck_assert_int_eq(nc.rc_two, PX_EINVAL);
    ck_assert_int_eq(nc.inner_runs, 3);
}
END_TEST

START_TEST(test_team_launches_need_an_initialized_runtime)
{
    /* teardown already ran for this test's fixture? No: checked with an explicit finalize. */
    ck_assert_int_eq(px_finalize(), PX_OK);
    ck_assert_int_eq(
        px_parallel_for_team_fn(NULL, "x", px_team_policy_make(1, 0, 0), nop_body, NULL),
        PX_ENOTINIT);
    ck_assert_int_eq(px_parallel_for_team_fn(NULL, "x", px_team_policy_make(1, 0, 0), NULL, NULL),
                     PX_EFAULT);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
}
END_TEST

/* ---- single-source for kernels: the kernel's own league loop ----------------------------------
 */

#define XW 24
typedef struct {
    int64_t *out; /* league x XW */
} xchg_args;

/* Members fill team scratch, meet, and read the slot another member wrote: without the barrier
 * that ends each team, a member running ahead into the next team would overwrite scratch still
 * read by a slower one. */
PX_TEAM_FOR(xchg_k, xchg_args, t, a)
{
    int64_t lr = px_team_league_rank(t);
    int64_t *s = px_team_scratch(t);
    PX_TEAM_THREAD_FOR(t, j, 0, XW)
    {
        s[j] = lr * 100 + j;
    }
    px_team_barrier(t);
    PX_TEAM_THREAD_FOR(t, j, 0, XW)
    {
        a->out[lr * XW + j] = s[XW - 1 - j];
    }
}

START_TEST(test_kernel_league_loops_keep_team_scratch_consistent_from_team_to_team)
{
    for (size_t li = 0; li < N_LEAGUES; ++li) {
        int64_t L = leagues[li];
        for (int ts = 0; ts <= max_team(); ++ts)
            for (int si = 0; si < 2; ++si) {
                int64_t *out = calloc((size_t)(L > 0 ? L : 1) * XW, sizeof *out);
                ck_assert_ptr_nonnull(out);
                xchg_args a = {out};
                px_team_policy p = px_team_policy_schedule(
                    px_team_policy_scratch(px_team_policy_make(L, ts, 0), XW * sizeof(int64_t), 0),
                    schedules[si]);
                ck_assert_int_eq(px_parallel_for_team(space, "xchg", p, &xchg_k, &a, sizeof a),
                                 PX_OK);
                for (int64_t k = 0; k < L * XW; ++k)
                    ck_assert_int_eq(out[k], (k / XW) * 100 + (XW - 1 - k % XW));
                free(out);
            }
    }
}
END_TEST

START_TEST(test_team_size_zero_gives_one_member_teams_on_host_spaces)
{
    cover_ctx c = {3, 0, calloc(3 * MAXT, sizeof(int)), calloc(3 * MAXT, sizeof(int)),
                   calloc(3, sizeof(int))};
    ck_assert_int_eq(
        px_parallel_for_team_fn(space, "size", px_team_policy_make(3, 0, 0), cover_body, &c),
        PX_OK);
    for (int64_t lr = 0; lr < 3; ++lr) {
        ck_assert_int_eq(c.got_size[lr], 1);
        ck_assert_int_eq(c.hits[lr * MAXT], 1);
    }
    free(c.hits);
    free(c.errors);
    free(c.got_size);
}
END_TEST

static Suite *team_suite(void)
{
    Suite *s = suite_create("team");
    TCase *tc = tcase_create("team");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_every_member_of_every_team_runs_exactly_once);
    tcase_add_test(tc,
                   test_barriers_exchange_data_through_team_scratch_and_thread_scratch_is_private);
    tcase_add_test(tc, test_scratch_grows_on_demand_between_launches);
    tcase_add_test(tc, test_nested_team_and_vector_ranges_cover_each_index_once);
    tcase_add_test(tc, test_team_reduce_and_the_launch_reduce_join_in_rank_and_league_order);
    tcase_add_test(tc, test_a_floating_point_team_reduce_is_bitwise_reproducible);
    tcase_add_test(tc, test_engine_pushes_run_team_launches_like_direct_calls);
    tcase_add_test(tc, test_bad_sizes_and_scratch_are_einval_naming_the_limit);
    tcase_add_test(tc, test_team_launches_need_an_initialized_runtime);
    tcase_add_test(tc, test_kernel_league_loops_keep_team_scratch_consistent_from_team_to_team);
    tcase_add_test(tc, test_team_size_zero_gives_one_member_teams_on_host_spaces);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(team_suite());
}
