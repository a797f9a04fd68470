/* tests/check_view_cuda.c - views on the cuda space with bodies compiled by nvcc: PX_VIEW_AT*
 * on views passed by value in kernel arguments, device zeroing, deep copies to and from host
 * views of the other layout, and PX_DEBUG_CHECK on device. Needs a GPU: exits 77 (skipped)
 * without one. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "px_test.h"
#include "view_cuda.h"

static px_space *cuda(void)
{
    px_space *s = px_space_by_name("cuda");
    ck_assert_ptr_nonnull(s);
    return s;
}

START_TEST(test_view_at_in_device_body_matches_host)
{
    int64_t ext[2] = {37, 129};
    px_view u, w, hu, hw;
    ck_assert_int_eq(px_view_alloc(&u, cuda(), "u", 8, PX_LAYOUT_RIGHT, 2, ext), PX_OK);
    ck_assert_int_eq(px_view_alloc(&w, cuda(), "w", 8, PX_LAYOUT_LEFT, 2, ext), PX_OK);
    ck_assert_int_eq(
        px_view_alloc(&hu, px_space_by_name("serial"), "hu", 8, PX_LAYOUT_LEFT, 2, ext), PX_OK);
    for (int64_t x = 0; x < ext[0]; ++x)
        for (int64_t y = 0; y < ext[1]; ++y)
            PX_VIEW_AT2(hu, double, x, y) = (double)(x * 1000 + y);
    ck_assert_int_eq(px_view_deep_copy(&u, &hu), PX_OK); /* host LEFT -> device RIGHT */
    view_axpy_args a = {u, w, ext[1]};
    ck_assert_int_eq(px_parallel_for(cuda(), "view_axpy", px_range(0, ext[0] * ext[1]),
                                     &view_k_axpy, &a, sizeof a),
                     PX_OK);
    ck_assert_int_eq(px_fence(cuda()), PX_OK);
    ck_assert_int_eq(px_view_mirror(&hw, &w), PX_OK);
    ck_assert_int_eq(hw.owner, 1);
    ck_assert_int_eq(px_view_deep_copy(&hw, &w), PX_OK);
    for (int64_t x = 0; x < ext[0]; ++x)
        for (int64_t y = 0; y < ext[1]; ++y)
            ck_assert(PX_VIEW_AT2(hw, double, x, y) == 2.0 * (double)(x * 1000 + y) + 1.0);
    ck_assert_int_eq(px_view_free(&hw), PX_OK);
    ck_assert_int_eq(px_view_free(&hu), PX_OK);
    ck_assert_int_eq(px_view_free(&w), PX_OK);
    ck_assert_int_eq(px_view_free(&u), PX_OK);
}
END_TEST

START_TEST(test_view_debug_check_on_device_keeps_memory_intact)
{
    int64_t ext[3] = {16, 4, 2};
    px_view w, hw;
    ck_assert_int_eq(px_view_alloc(&w, cuda(), "w3", 8, PX_LAYOUT_RIGHT, 3, ext), PX_OK);
    view_shift_args in = {w, 3};
    ck_assert_int_eq(
        px_parallel_for(cuda(), "in_bounds", px_range(0, 16), &view_k_shift_store, &in, sizeof in),
        PX_OK);
    view_shift_args out = {w, 4}; /* dimension 1 has extent 4 */
    ck_assert_int_eq(px_parallel_for(cuda(), "out_of_bounds", px_range(0, 16), &view_k_shift_store,
                                     &out, sizeof out),
                     PX_OK);
    ck_assert_int_eq(px_fence(cuda()), PX_OK);
    ck_assert_int_eq(px_view_mirror(&hw, &w), PX_OK);
    ck_assert_int_eq(px_view_deep_copy(&hw, &w), PX_OK);
    for (int64_t i = 0; i < 16; ++i)
        for (int64_t j = 0; j < 4; ++j)
            for (int64_t k = 0; k < 2; ++k)
                ck_assert(PX_VIEW_AT3(hw, double, i, j, k) == ((j == 3 && k == 0) ? 7.0 : 0.0));
    ck_assert_int_eq(px_view_free(&hw), PX_OK);
    ck_assert_int_eq(px_view_free(&w), PX_OK);
}
END_TEST

/* Probe in a child: the CUDA runtime must not be initialized in the parent, whose forked test
 * children could not use it. */
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
    int st;
    if (waitpid(pid, &st, 0) != pid)
        return 0;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(void)
{
    if (!cuda_device_present()) {
        printf("SKIP: no CUDA device (the cuda space is unavailable here)\n");
        return 77;
    }
    Suite *s = suite_create("view_cuda");
    TCase *tc = tcase_create("cuda");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, px_test_setup, px_test_teardown);
    tcase_add_test(tc, test_view_at_in_device_body_matches_host);
    tcase_add_test(tc, test_view_debug_check_on_device_keeps_memory_intact);
    suite_add_tcase(s, tc);
    return px_test_run(s);
}
