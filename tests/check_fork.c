/* tests/check_fork.c - fork() while the runtime is up (core/init.c): the child's copy of the
 * runtime lost its worker threads, so every call there returns promptly with the documented
 * status instead of waiting for a thread that does not exist; the parent is unaffected.
 * Runs with 1, 2 and more threads than cores (PX_NUM_THREADS from ctest). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "px_test.h"

static const px_context CPU = {PX_DEV_CPU, 0};

static void add_one(int64_t b, int64_t e, void *ctx)
{
    int *x = ctx;
    for (int64_t i = b; i < e; ++i)
        x[i] += 1;
}

static int count_op(const px_run_context *rc, void *arg)
{
    (void)rc;
    ++*(int *)arg;
    return PX_OK;
}

/* Wait up to @p seconds for @p pid; on a timeout kill it and fail (a hang must fail the test,
 * not block it). Returns the child's exit status. */
static int wait_child(pid_t pid, int seconds)
{
    struct timespec pause = {0, 10 * 1000 * 1000};
    for (int waited = 0; waited < seconds * 100; ++waited) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        ck_assert_int_ne(r, -1);
        if (r == pid) {
            ck_assert_msg(WIFEXITED(st), "the child died of signal %d",
                          WIFSIGNALED(st) ? WTERMSIG(st) : 0);
            return WEXITSTATUS(st);
        }
        nanosleep(&pause, NULL);
    }
    kill(pid, SIGKILL);
    (void)waitpid(pid, NULL, 0);
    ck_abort_msg("the forked child hung (killed after %d s)", seconds);
    return -1;
}

/* In the child: each step that goes wrong exits with its own code (Check's assertions would
 * report from the wrong process). */
enum {
    CHILD_OK,
    CHILD_LAUNCH,
    CHILD_WAIT,
    CHILD_WAIT_ALL,
    CHILD_PUSH,
    CHILD_SECTION,
    CHILD_FINALIZE,
    CHILD_INITIALIZED,
    CHILD_INITIALIZE,
    CHILD_LOG,
};

static int child_steps(px_space *threads, px_engine *e, px_var *v, int *x)
{
    px_test_log_clear();
    if (px_parallel_for_fn(threads, "child", px_range(0, 64), add_one, x) != PX_ENOTINIT)
        return CHILD_LAUNCH;
    if (!px_test_log_contains("fork"))
        return CHILD_LOG;
    if (px_engine_wait_for_var(e, v) != PX_ENOTINIT)
        return CHILD_WAIT;
    if (px_engine_wait_for_all(e) != PX_ENOTINIT)
        return CHILD_WAIT_ALL;
    int n = 0;
    if (px_engine_push_sync(e, count_op, &n, CPU, NULL, 0, &v, 1, PX_FN_NORMAL, 0, "c") !=
        PX_ENOTINIT)
        return CHILD_PUSH;
    uint32_t id;
    if (px_profile_create_section("child", &id) != PX_ENOTINIT)
        return CHILD_SECTION;
    if (px_finalize() != PX_ENOTINIT)
        return CHILD_FINALIZE;
    if (px_is_initialized())
        return CHILD_INITIALIZED;
    px_test_log_clear();
    if (px_initialize(NULL, NULL) != PX_EBUSY || !px_test_log_contains("fork"))
        return CHILD_INITIALIZE;
    return CHILD_OK;
}

/* fork() after px_initialize and a threads launch, with an engine op queued on a Var. */
START_TEST(test_calls_in_a_forked_child_return_enotinit_and_parent_goes_on)
{
    px_test_log_capture();
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    px_space *threads = px_space_by_name("threads");
    ck_assert_ptr_nonnull(threads);
    int x[64] = {0};
    ck_assert_int_eq(px_parallel_for_fn(threads, "parent", px_range(0, 64), add_one, x), PX_OK);
    px_engine *e = px_engine_default();
    ck_assert_ptr_nonnull(e);
    px_var *v = px_var_new(e);
    ck_assert_ptr_nonnull(v);
    int n = 0;
    ck_assert_int_eq(
        px_engine_push_sync(e, count_op, &n, CPU, NULL, 0, &v, 1, PX_FN_NORMAL, 0, "before"),
        PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);

    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        _exit(child_steps(threads, e, v, x));
    int code = wait_child(pid, 20);
    ck_assert_msg(code == CHILD_OK, "the child failed at step %d:\n%s", code, px_test_log_text());

    /* The parent's runtime is untouched. */
    ck_assert_int_eq(px_is_initialized(), 1);
    ck_assert_int_eq(px_parallel_for_fn(threads, "parent", px_range(0, 64), add_one, x), PX_OK);
    for (int i = 0; i < 64; ++i)
        ck_assert_int_eq(x[i], 2);
    ck_assert_int_eq(
        px_engine_push_sync(e, count_op, &n, CPU, NULL, 0, &v, 1, PX_FN_NORMAL, 0, "after"), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

/* Fork before px_initialize or after px_finalize: the child starts its own runtime. */
START_TEST(test_child_forked_outside_the_runtime_initializes_normally)
{
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int x[16] = {0};
        if (px_initialize(NULL, NULL) != PX_OK)
            _exit(1);
        if (px_parallel_for_fn(px_space_by_name("threads"), "c", px_range(0, 16), add_one, x) !=
                PX_OK ||
            x[15] != 1)
            _exit(2);
        _exit(px_finalize() == PX_OK ? 0 : 3);
    }
    ck_assert_int_eq(wait_child(pid, 20), 0);
}
END_TEST

static Suite *fork_suite(void)
{
    Suite *s = suite_create("fork");
    TCase *tc = tcase_create("fork");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_calls_in_a_forked_child_return_enotinit_and_parent_goes_on);
    tcase_add_test(tc, test_child_forked_outside_the_runtime_initializes_normally);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(fork_suite());
}
