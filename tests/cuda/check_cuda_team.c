/* tests/cuda/check_cuda_team.c - team kernels from a file compiled by nvcc (team_device.cu).
 * Everywhere: their host entries run on serial and threads and give the exact answers. With a
 * GPU: team conformance on the cuda space (league sizes 0, 1, 7, 1000; team sizes 1 to 128 and
 * the space's choice; vector lengths 1 to 32): scratch exchange through a barrier, nested
 * team/vector ranges covering each index once, team reduce, member and league join order with a
 * non-commutative reducer, thread scratch isolation, bitwise repeatable f64 reductions, and bad
 * sizes refused with PX_EINVAL naming the limit. Without a GPU the cuda cases print "SKIP: no
 * CUDA device" and are not run (the host cases still are). */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "px_test.h"
#include "team_device.h"

enum { W = 37 };

static void setup(void)
{
    px_test_log_capture();
    px_test_setup();
}

/* Run every kernel on @s with league @L, policy sizes @ts / @vl, and check the answers. The
 * out array lives in @s's memory (copied through @host when they differ). */
static void conformance(px_space *s, px_space *host, int64_t L, int ts, int vl)
{
    const size_t n = (size_t)(L > 0 ? L : 1) * W * 8;
    int64_t *h = calloc(n, sizeof *h);
    int64_t *d = s == host ? h : px_malloc(s, n * sizeof *d);
    ck_assert_ptr_nonnull(h);
    ck_assert_ptr_nonnull(d);
    td_args a = {d, W};
    px_team_policy p = px_team_policy_scratch(px_team_policy_make(L, ts, vl), W * sizeof(int64_t),
                                              2 * sizeof(int64_t));
    /* Barrier exchange through team scratch. */
    ck_assert_int_eq(px_parallel_for_team(s, NULL, p, &td_fill, &a, sizeof a), PX_OK);
    ck_assert_int_eq(px_fence(s), PX_OK);
    ck_assert_int_eq(px_deep_copy(host, h, s, d, n * sizeof *d), PX_OK);
    for (int64_t lr = 0; lr < L; ++lr)
        for (int64_t j = 0; j < W; ++j)
            ck_assert_int_eq(h[lr * W + j], lr * 1000 + (W - 1 - j));
    /* Team reduce inside, launch reduce outside. */
    int64_t sum = -1, want = 0;
    for (int64_t lr = 0; lr < L; ++lr)
        for (int64_t j = 0; j < W; ++j)
            want += lr * 1000 + j;
    ck_assert_int_eq(px_parallel_reduce_team(s, NULL, p, &td_sum, &a, sizeof a, &px_sum_i64, &sum),
                     PX_OK);
    ck_assert_int_eq(sum, want);
    /* Nested ranges cover each (team, j, k) once. */
    memset(h, 0, n * sizeof *h);
    ck_assert_int_eq(px_deep_copy(s, d, host, h, n * sizeof *d), PX_OK);
    ck_assert_int_eq(px_parallel_for_team(s, NULL, p, &td_cover, &a, sizeof a), PX_OK);
    ck_assert_int_eq(px_fence(s), PX_OK);
    ck_assert_int_eq(px_deep_copy(host, h, s, d, n * sizeof *d), PX_OK);
    for (int64_t k = 0; k < L * W * 8; ++k)
        ck_assert_int_eq(h[k], 1);
    /* Member order, then league order, with a non-commutative join. */
    td_run run = {-1, -1, 0};
    ck_assert_int_eq(
        px_parallel_reduce_team(s, NULL, p, &td_order, &a, sizeof a, &td_run_reducer, &run), PX_OK);
    ck_assert_int_eq(run.ok, 1);
    ck_assert_int_eq(run.lo, 0);
    ck_assert_int_eq(run.hi % (L > 0 ? L : 1), 0); /* league x the team size the space chose */
    if (ts > 0)
        ck_assert_int_eq(run.hi, L * ts);
    /* Thread scratch is private. */
    int64_t bad = -1;
    ck_assert_int_eq(
        px_parallel_reduce_team(s, NULL, p, &td_isolation, &a, sizeof a, &px_sum_i64, &bad), PX_OK);
    ck_assert_int_eq(bad, 0);
    if (d != h)
        ck_assert_int_eq(px_free(s, d), PX_OK);
    free(h);
}

START_TEST(test_nvcc_compiled_team_kernels_run_on_host_spaces)
{
    px_space *host = px_space_by_name("serial");
    ck_assert_ptr_nonnull(host);
    const char *names[] = {"serial", "threads"};
    const int64_t leagues[] = {0, 1, 7, 1000};
    for (int k = 0; k < 2; ++k) {
        px_space *s = px_space_by_name(names[k]);
        if (!s)
            continue;
        for (int i = 0; i < 4; ++i) {
            conformance(s, host, leagues[i], 0, 0);
            conformance(s, host, leagues[i], 1, 4);
            /* A host body from the same file, custom reducer in px_team_reduce. */
            int ts = px_space_concurrency(s) > 1 ? 2 : 1;
            td_run run = {-1, -1, 0};
            ck_assert_int_eq(px_parallel_reduce_team_fn(s, NULL,
                                                        px_team_policy_make(leagues[i], ts, 0),
                                                        td_host_runs, NULL, &td_run_reducer, &run),
                             PX_OK);
            ck_assert_int_eq(run.ok, 1);
            ck_assert_int_eq(run.lo, 0);
            ck_assert_int_eq(run.hi, leagues[i] * ts);
        }
    }
}
END_TEST

static px_space *cuda_space(void)
{
    px_space *s = px_space_by_name("cuda");
    ck_assert_ptr_nonnull(s);
    return s;
}

START_TEST(test_cuda_teams_conform_for_every_league_and_team_shape)
{
    px_space *s = cuda_space(), *host = px_space_by_name("serial");
    const int64_t leagues[] = {0, 1, 7, 1000};
    const int shapes[][2] = {{0, 0},  {1, 1},  {2, 1},   {7, 4},   {32, 1},
                             {33, 1}, {64, 8}, {128, 1}, {32, 32}, {3, 16}};
    for (int i = 0; i < 4; ++i)
        for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; ++k)
            conformance(s, host, leagues[i], shapes[k][0], shapes[k][1]);
}
END_TEST

START_TEST(test_cuda_team_reductions_repeat_bitwise)
{
    px_space *s = cuda_space();
    td_args a = {NULL, W};
    px_team_policy p = px_team_policy_make(5000, 96, 1);
    double r1 = 0, r2 = 1, want = 0;
    ck_assert_int_eq(px_parallel_reduce_team(s, NULL, p, &td_fsum, &a, sizeof a, &px_sum_f64, &r1),
                     PX_OK);
    ck_assert_int_eq(px_parallel_reduce_team(s, NULL, p, &td_fsum, &a, sizeof a, &px_sum_f64, &r2),
                     PX_OK);
    ck_assert(memcmp(&r1, &r2, sizeof r1) == 0);
    /* Every member adds its value, member 0 also 1e-3 x the team's px_team_reduce sum. */
    double mag = 0;
    for (int64_t lr = 0; lr < 5000; ++lr)
        for (int r = 0; r < 96; ++r) {
            double v = sin((double)lr + 0.001 * (double)r);
            want += 1.001 * v;
            mag += fabs(v);
        }
    ck_assert_double_eq_tol(r1, want, 1e-12 * mag + 1e-9);
}
END_TEST

static void team_noop(const px_team *t, void *ctx)
{
    (void)t;
    (void)ctx;
}

START_TEST(test_cuda_team_sizes_the_device_cannot_give_are_refused_naming_the_limit)
{
    px_space *s = cuda_space();
    td_args a = {NULL, W};
    px_test_log_clear();
    ck_assert_int_eq(
        px_parallel_for_team(s, NULL, px_team_policy_make(4, 2048, 1), &td_fill, &a, sizeof a),
        PX_EINVAL);
    ck_assert(px_test_log_contains("maxThreadsPerBlock"));
    px_test_log_clear();
    ck_assert_int_eq(
        px_parallel_for_team(s, NULL, px_team_policy_make(4, 512, 4), &td_fill, &a, sizeof a),
        PX_EINVAL);
    ck_assert(px_test_log_contains("threads per block"));
    px_test_log_clear();
    ck_assert_int_eq(
        px_parallel_for_team(s, NULL, px_team_policy_make(4, 8, 3), &td_fill, &a, sizeof a),
        PX_EINVAL);
    ck_assert(px_test_log_contains("not a power of two"));
    px_test_log_clear();
    px_team_policy big = px_team_policy_scratch(px_team_policy_make(4, 32, 1), (size_t)1 << 30, 0);
    ck_assert_int_eq(px_parallel_for_team(s, NULL, big, &td_fill, &a, sizeof a), PX_EINVAL);
    ck_assert(px_test_log_contains("scratch"));
    px_test_log_clear();
    ck_assert_int_eq(
        px_parallel_for_team_fn(s, NULL, px_team_policy_make(4, 1, 1), team_noop, NULL), PX_EINVAL);
    ck_assert(px_test_log_contains("cannot run on the cuda space"));
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

static Suite *cuda_team_suite(int gpu)
{
    Suite *s = suite_create("cuda_team");
    TCase *tc = tcase_create("host");
    tcase_add_checked_fixture(tc, setup, px_test_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_nvcc_compiled_team_kernels_run_on_host_spaces);
    suite_add_tcase(s, tc);
    if (gpu) {
        TCase *tg = tcase_create("cuda");
        tcase_add_checked_fixture(tg, setup, px_test_teardown);
        tcase_set_timeout(tg, 120);
        tcase_add_test(tg, test_cuda_teams_conform_for_every_league_and_team_shape);
        tcase_add_test(tg, test_cuda_team_reductions_repeat_bitwise);
        tcase_add_test(tg,
                       test_cuda_team_sizes_the_device_cannot_give_are_refused_naming_the_limit);
        suite_add_tcase(s, tg);
    }
    return s;
}

int main(void)
{
    int gpu = cuda_device_present();
    if (!gpu)
        printf("SKIP: no CUDA device; the cuda team cases are not run here (host cases are)\n");
    return px_test_run(cuda_team_suite(gpu));
}
