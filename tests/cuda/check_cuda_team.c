/* tests/cuda/check_cuda_team.c - team kernels from a file compiled by nvcc (team_device.cu):
 * their host entries run on the host spaces like any team kernel, and the cuda space, which has
 * no team launches yet, refuses them with PX_EINVAL and a message naming the space (skipped
 * without a GPU). */
#include <stdlib.h>

#include "px_test.h"
#include "team_device.h"

enum { L = 37, W = 13 };

static void setup(void)
{
    px_test_log_capture();
    px_test_setup();
}

START_TEST(test_nvcc_compiled_team_kernels_run_on_host_spaces)
{
    const char *names[] = {"serial", "threads"};
    for (int k = 0; k < 2; ++k) {
        px_space *s = px_space_by_name(names[k]);
        if (!s)
            continue;
        static int64_t out[L * W];
        td_args a = {out, W};
        px_team_policy p =
            px_team_policy_scratch(px_team_policy_make(L, 0, 0), W * sizeof(int64_t), 0);
        ck_assert_int_eq(px_parallel_for_team(s, NULL, p, &td_fill, &a, sizeof a), PX_OK);
        for (int64_t lr = 0; lr < L; ++lr)
            for (int64_t j = 0; j < W; ++j)
                ck_assert_int_eq(out[lr * W + j], lr * 1000 + j);
        int64_t sum = -1, want = 0;
        for (int64_t lr = 0; lr < L; ++lr)
            for (int64_t j = 0; j < W; ++j)
                want += lr * 1000 + j;
        ck_assert_int_eq(
            px_parallel_reduce_team(s, NULL, p, &td_sum, &a, sizeof a, &px_sum_i64, &sum), PX_OK);
        ck_assert_int_eq(sum, want);
    }
}
END_TEST

START_TEST(test_the_cuda_space_refuses_team_launches_naming_itself)
{
    px_space *s = px_space_by_name("cuda");
    if (!s) {
        printf("SKIP: no CUDA device; the cuda team refusal is not checked here\n");
        return;
    }
    td_args a = {NULL, W};
    px_test_log_clear();
    ck_assert_int_eq(
        px_parallel_for_team(s, NULL, px_team_policy_make(L, 0, 0), &td_fill, &a, sizeof a),
        PX_EINVAL);
    ck_assert(px_test_log_contains("space 'cuda' does not run team launches"));
}
END_TEST

static Suite *cuda_team_suite(void)
{
    Suite *s = suite_create("cuda_team");
    TCase *tc = tcase_create("cuda_team");
    tcase_add_checked_fixture(tc, setup, px_test_teardown);
    tcase_add_test(tc, test_nvcc_compiled_team_kernels_run_on_host_spaces);
    tcase_add_test(tc, test_the_cuda_space_refuses_team_launches_naming_itself);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(cuda_team_suite());
}
