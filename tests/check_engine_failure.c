/* tests/check_engine_failure.c - the dependency engine, failures and bad input: failed writes skip
 * their dependents, wait_for_all returns the first failure, async completions, waits and finalize
 * inside ops (PX_EDEADLK), bad handles, allocation failures and finalize with engines or failures
 * pending.
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

/* ---- failures --------------------------------------------------------------------------- */

START_TEST(test_failure_marks_writes_and_skips_dependents)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *a = px_var_new(e), *b = px_var_new(e), *c = px_var_new(e);
    atomic_store(&ran_count, 0);
    ck_assert_int_eq(px_engine_push_sync(e, fail_fn, (void *)(intptr_t)PX_EUSER, CPU, NULL, 0, &a,
                                         1, PX_FN_NORMAL, 0, "fails"),
                     PX_OK);
    /* reads a (failed) -> skipped, b marked failed */
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, &a, 1, &b, 1, PX_FN_NORMAL, 0, "skipped"),
        PX_OK);
    /* independent: runs */
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, NULL, 0, &c, 1, PX_FN_NORMAL, 0, "runs"),
        PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, b), PX_EUSER);
    ck_assert_int_eq(px_engine_wait_for_var(e, b), PX_OK); /* cleared */
    ck_assert_int_eq(px_engine_wait_for_var(e, c), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, a), PX_EUSER);
    ck_assert_int_eq(px_engine_wait_for_var(e, a), PX_OK);
    ck_assert_int_eq(atomic_load(&ran_count), 1);
    /* a is clean again: ops on it run */
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, &a, 1, &b, 1, PX_FN_NORMAL, 0, "runs-again"),
        PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_EUSER); /* first failure since last */
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(atomic_load(&ran_count), 2);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

START_TEST(test_wait_for_all_returns_first_failure)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *a = px_var_new(e);
    ck_assert_int_eq(px_engine_push_sync(e, fail_fn, (void *)(intptr_t)(PX_EUSER - 1), CPU, NULL, 0,
                                         &a, 1, PX_FN_NORMAL, 0, "first"),
                     PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, a), PX_EUSER - 1);
    ck_assert_int_eq(px_engine_push_sync(e, fail_fn, (void *)(intptr_t)(PX_EUSER - 2), CPU, NULL, 0,
                                         &a, 1, PX_FN_NORMAL, 0, "second"),
                     PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_EUSER - 1);
    /* wait_for_all reports the first failure and clears every Var's (MXNet's WaitForAll):
     * the second failure on a is gone with it. */
    ck_assert_int_eq(px_engine_wait_for_var(e, a), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* The log names the failed op once at warn level with its status and poisoned Vars, and each
 * op skipped because of it at debug level. */
START_TEST(test_a_failed_op_is_logged_once_with_its_name_status_and_vars)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *a = px_var_new(e), *b = px_var_new(e), *c = px_var_new(e);
    px_test_log_capture();
    px_test_log_clear();
    ck_assert_int_eq(px_engine_push(e, &(px_op){.fn = fail_fn,
                                                .arg = (void *)(intptr_t)PX_EUSER,
                                                .writes = PX_VARS(a),
                                                .name = "stage1"}),
                     PX_OK);
    ck_assert_int_eq(
        px_engine_push(
            e,
            &(px_op){.fn = count_fn, .reads = PX_VARS(a), .writes = PX_VARS(b), .name = "stage2"}),
        PX_OK);
    ck_assert_int_eq(
        px_engine_push(
            e,
            &(px_op){.fn = count_fn, .reads = PX_VARS(b), .writes = PX_VARS(c), .name = "stage3"}),
        PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_EUSER);
    const char *log = px_test_log_text();
    char want[160];
    snprintf(want, sizeof want, "engine: op 'stage1' failed with %d (%s); Vars poisoned: Var %p",
             PX_EUSER, px_strerror(PX_EUSER), (void *)a);
    ck_assert_msg(px_test_log_contains(want), "no '%s' in: %s", want, log);
    /* Once: the skipped ops are not reported as failed. */
    const char *first = strstr(log, "Vars poisoned");
    ck_assert_ptr_nonnull(first);
    ck_assert_ptr_null(strstr(first + 1, "Vars poisoned"));
    snprintf(want, sizeof want, "engine: op 'stage2' skipped: Var %p it reads failed with %d",
             (void *)a, PX_EUSER);
    ck_assert_msg(px_test_log_contains(want), "no '%s' in: %s", want, log);
    snprintf(want, sizeof want, "engine: op 'stage3' skipped: Var %p it reads failed", (void *)b);
    ck_assert_msg(px_test_log_contains(want), "no '%s' in: %s", want, log);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* Recovery: after a wait reported the failure, a corrected re-run of the same pushes runs
 * every op, and the next wait_for_all is PX_OK (the newcomer got -13 again). */
static atomic_int input_ok;
static int load_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    return atomic_load(&input_ok) ? PX_OK : PX_EUSER;
}
START_TEST(test_a_corrected_rerun_after_a_reported_failure_succeeds)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *x = px_var_new(e), *y = px_var_new(e), *z = px_var_new(e);
    for (int wait_all = 0; wait_all < 2; ++wait_all) {
        atomic_store(&input_ok, 0);
        atomic_store(&ran_count, 0);
        for (int run = 0; run < 2; ++run) {
            ck_assert_int_eq(
                px_engine_push(e, &(px_op){.fn = load_fn, .writes = PX_VARS(x), .name = "load"}),
                PX_OK);
            ck_assert_int_eq(px_engine_push(e, &(px_op){.fn = count_fn,
                                                        .reads = PX_VARS(x),
                                                        .writes = PX_VARS(y),
                                                        .name = "a"}),
                             PX_OK);
            ck_assert_int_eq(px_engine_push(e, &(px_op){.fn = count_fn,
                                                        .reads = PX_VARS(y),
                                                        .writes = PX_VARS(z, x),
                                                        .name = "b"}),
                             PX_OK);
            if (run == 0) {
                /* Either wait reports the failure and clears it: wait_for_all for every
                 * Var, wait_for_var for its Var (here every Var the failure reached). */
                if (wait_all) {
                    ck_assert_int_eq(px_engine_wait_for_all(e), PX_EUSER);
                } else {
                    ck_assert_int_eq(px_engine_wait_for_var(e, z), PX_EUSER);
                    ck_assert_int_eq(px_engine_wait_for_var(e, x), PX_EUSER);
                    ck_assert_int_eq(px_engine_wait_for_var(e, y), PX_EUSER);
                    ck_assert_int_eq(px_engine_wait_for_all(e), PX_EUSER);
                }
                ck_assert_int_eq(atomic_load(&ran_count), 0);
                atomic_store(&input_ok, 1); /* the correction */
            }
        }
        ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
        ck_assert_int_eq(atomic_load(&ran_count), 2);
        ck_assert_int_eq(px_engine_wait_for_var(e, z), PX_OK);
    }
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* A failed Var keeps skipping its ops until a wait reports the failure. */
START_TEST(test_a_failure_no_wait_has_reported_keeps_skipping)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *x = px_var_new(e);
    atomic_store(&ran_count, 0);
    ck_assert_int_eq(
        px_engine_push(
            e, &(px_op){.fn = fail_fn, .arg = (void *)(intptr_t)PX_EUSER, .writes = PX_VARS(x)}),
        PX_OK);
    for (int i = 0; i < 3; ++i)
        ck_assert_int_eq(px_engine_push(e, &(px_op){.fn = count_fn, .writes = PX_VARS(x)}), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_EUSER);
    ck_assert_int_eq(atomic_load(&ran_count), 0);
    ck_assert_int_eq(px_engine_push(e, &(px_op){.fn = count_fn, .writes = PX_VARS(x)}), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(atomic_load(&ran_count), 1);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* ---- the descriptor form -------------------------------------------------------------------- */

static void async_ok(const px_run_context *rc, px_on_complete *done, void *arg)
{
    (void)rc;
    atomic_fetch_add((atomic_int *)arg, 1);
    px_on_complete_call(done, PX_OK);
}
static atomic_int prio_order[8], prio_n;
static int record_prio(const px_run_context *rc, void *arg)
{
    (void)rc;
    int k = atomic_fetch_add(&prio_n, 1);
    if (k < 8)
        atomic_store(&prio_order[k], (int)(intptr_t)arg);
    return PX_OK;
}

START_TEST(test_the_descriptor_form_pushes_like_the_positional_calls)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *x = px_var_new(e), *y = px_var_new(e), *z = px_var_new(e);
    int v = 0;
    /* Defaults: CPU 0, normal, priority 0; reads and writes order like positional pushes. */
    for (int i = 0; i < 10; ++i)
        ck_assert_int_eq(px_engine_push(e, &(px_op){.fn = incr_fn,
                                                    .arg = &v,
                                                    .reads = PX_VARS(x, y),
                                                    .writes = PX_VARS(z),
                                                    .name = "stage"}),
                         PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, z), PX_OK);
    ck_assert_int_eq(v, 10);
    /* An async op with ctx and property set. */
    atomic_int n = 0;
    ck_assert_int_eq(px_engine_push(e, &(px_op){.async_fn = async_ok,
                                                .arg = &n,
                                                .writes = PX_VARS(x),
                                                .ctx = {PX_DEV_CPU, 1},
                                                .property = PX_FN_ASYNC}),
                     PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, x), PX_OK);
    ck_assert_int_eq(atomic_load(&n), 1);
    /* Priorities: with the priority lane held by a gate op, later ops run highest first. */
    if (kind_under_test() == PX_ENGINE_PER_DEVICE) {
        atomic_store(&gate_open, 0);
        atomic_store(&gate_started, 0);
        atomic_store(&prio_n, 0);
        px_engine *e1 = px_engine_create(PX_ENGINE_PER_DEVICE, 2); /* one priority worker */
        ck_assert_int_eq(
            px_engine_push(
                e1, &(px_op){.fn = gate_fn, .property = PX_FN_CPU_PRIORITIZED, .priority = 100}),
            PX_OK);
        while (!atomic_load(&gate_started))
            sleep_ms(1);
        for (int p = 1; p <= 3; ++p)
            ck_assert_int_eq(px_engine_push(e1, &(px_op){.fn = record_prio,
                                                         .arg = (void *)(intptr_t)p,
                                                         .property = PX_FN_CPU_PRIORITIZED,
                                                         .priority = p}),
                             PX_OK);
        atomic_store(&gate_open, 1);
        /* Not px_engine_wait_for_all while they are queued: its waiter helps with the
         * priority lane, a second consumer (check_engine_queue.c's priority test says why). */
        while (atomic_load(&prio_n) < 3)
            sleep_ms(1);
        ck_assert_int_eq(px_engine_wait_for_all(e1), PX_OK);
        ck_assert_int_eq(atomic_load(&prio_order[0]), 3);
        ck_assert_int_eq(atomic_load(&prio_order[2]), 1);
        ck_assert_int_eq(px_engine_destroy(e1), PX_OK);
    }
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

START_TEST(test_the_descriptor_form_rejects_bad_descriptors)
{
    px_engine *e = px_engine_create(kind_under_test(), 1);
    px_var *x = px_var_new(e);
    atomic_int n = 0;
    px_test_log_capture();
    ck_assert_int_eq(px_engine_push(NULL, &(px_op){.fn = count_fn}), PX_EFAULT);
    ck_assert_int_eq(px_engine_push(e, NULL), PX_EFAULT);
    ck_assert(px_test_log_contains("px_engine_push: op is NULL"));
    ck_assert_int_eq(px_engine_push(e, &(px_op){.name = "nothing"}), PX_EFAULT);
    ck_assert(px_test_log_contains("px_engine_push('nothing'): neither fn nor async_fn is set"));
    ck_assert_int_eq(
        px_engine_push(e,
                       &(px_op){.fn = count_fn, .async_fn = async_ok, .arg = &n, .name = "both"}),
        PX_EINVAL);
    ck_assert(px_test_log_contains("px_engine_push('both'): both fn and async_fn are set"));
    ck_assert_int_eq(
        px_engine_push(e, &(px_op){.fn = count_fn, .reads = {NULL, 2}, .writes = PX_VARS(x)}),
        PX_EFAULT);
    ck_assert(px_test_log_contains("px_engine_push: reads is NULL with a count of 2"));
    ck_assert_int_eq(px_engine_push(e, &(px_op){.fn = count_fn, .property = (px_fn_property)42}),
                     PX_EINVAL);
    ck_assert_int_eq(px_engine_push(e, &(px_op){.fn = count_fn, .ctx = {PX_DEV_CPU, 16}}),
                     PX_EINVAL);
    ck_assert_int_eq(px_var_delete(e, x), PX_OK);
    ck_assert_int_eq(px_engine_push(e, &(px_op){.fn = count_fn, .writes = PX_VARS(x)}), PX_EINVAL);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(atomic_load(&n), 0);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

static void *async_completer(void *arg)
{
    async_slot *s = arg;
    while (!atomic_load_explicit(&s->ready, memory_order_acquire))
        sleep_ms(1);
    px_on_complete_call(s->done, PX_EUSER);
    return NULL;
}

START_TEST(test_async_op_completes_from_another_thread_with_failure)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *a = px_var_new(e);
    async_slot s = {NULL, 0};
    pthread_t t;
    pthread_create(&t, NULL, async_completer, &s);
    ck_assert_int_eq(
        px_engine_push_async(e, async_defer, &s, CPU, NULL, 0, &a, 1, PX_FN_NORMAL, 0, "async"),
        PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, a), PX_EUSER);
    pthread_join(t, NULL);
    px_test_log_capture();
    px_on_complete_call(NULL, PX_OK);
    ck_assert(px_test_log_contains("NULL"));
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_EUSER);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

static pthread_t pusher_thread;
static atomic_int async_on_pusher;
static void async_here(const px_run_context *rc, px_on_complete *done, void *arg)
{
    (void)arg;
    atomic_store(&async_on_pusher,
                 pthread_equal(pthread_self(), pusher_thread) && rc->worker == -1);
    px_on_complete_call(done, PX_OK);
}

START_TEST(test_async_ready_at_push_runs_on_pusher)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *a = px_var_new(e);
    pusher_thread = pthread_self();
    atomic_store(&async_on_pusher, 0);
    ck_assert_int_eq(px_engine_push_async(e, async_here, NULL, CPU, NULL, 0, &a, 1, PX_FN_ASYNC, 0,
                                          "async-here"),
                     PX_OK);
    ck_assert_int_eq(atomic_load(&async_on_pusher), 1);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

static int waits_inside(const px_run_context *rc, void *arg)
{
    (void)rc;
    inner_arg *a = arg;
    a->st_var = px_engine_wait_for_var(a->e, a->v);
    a->st_all = px_engine_wait_for_all(a->e);
    a->st_destroy = px_engine_destroy(a->e);
    return PX_OK;
}

START_TEST(test_wait_inside_op_is_edeadlk)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *v = px_var_new(e), *w = px_var_new(e);
    inner_arg a = {e, v, 0, 0, 0};
    ck_assert_int_eq(
        px_engine_push_sync(e, waits_inside, &a, CPU, NULL, 0, &w, 1, PX_FN_NORMAL, 0, "waits"),
        PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, w), PX_OK);
    ck_assert_int_eq(a.st_var, PX_EDEADLK);
    ck_assert_int_eq(a.st_all, PX_EDEADLK);
    ck_assert_int_eq(a.st_destroy, PX_EDEADLK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* px_finalize from inside an op must refuse (PX_EDEADLK) and leave the runtime up: tearing the
 * engine and the spaces down under the running op would be a use-after-free. */
static int finalizes_inside(const px_run_context *rc, void *arg)
{
    (void)rc;
    *(int *)arg = px_finalize();
    return PX_OK;
}

START_TEST(test_finalize_inside_op_is_edeadlk_and_keeps_runtime)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *w = px_var_new(e);
    int st = 1;
    ck_assert_int_eq(
        px_engine_push_sync(e, finalizes_inside, &st, CPU, NULL, 0, &w, 1, PX_FN_NORMAL, 0, "fin"),
        PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, w), PX_OK);
    ck_assert_int_eq(st, PX_EDEADLK);
    ck_assert_int_eq(px_is_initialized(), 1);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

static atomic_int kernel_wait_status;
static void wait_in_kernel(int64_t b, int64_t e, void *ctx)
{
    if (b == 0 && e > 0)
        atomic_store(&kernel_wait_status, px_engine_wait_for_all((px_engine *)ctx));
}

START_TEST(test_wait_inside_kernel_is_edeadlk)
{
    px_engine *e = px_engine_create(kind_under_test(), 1);
    atomic_store(&kernel_wait_status, 1);
    ck_assert_int_eq(px_parallel_for_fn(NULL, "waits", px_range(0, 4), wait_in_kernel, e), PX_OK);
    ck_assert_int_eq(atomic_load(&kernel_wait_status), PX_EDEADLK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* ---- bad input ---------------------------------------------------------------------------- */

START_TEST(test_bad_handles_and_arguments)
{
    px_test_log_capture();
    px_engine *e = px_engine_create(kind_under_test(), 1);
    px_engine *f = px_engine_create(kind_under_test(), 1);
    px_var *v = px_var_new(e), *fv = px_var_new(f);
    px_var *garbage = (px_var *)(uintptr_t)0x123456789abcull;
    ck_assert_int_eq(
        px_engine_push_sync(NULL, count_fn, NULL, CPU, NULL, 0, &v, 1, PX_FN_NORMAL, 0, "x"),
        PX_EFAULT);
    ck_assert_int_eq(px_engine_push_sync(e, NULL, NULL, CPU, NULL, 0, &v, 1, PX_FN_NORMAL, 0, "x"),
                     PX_EFAULT);
    ck_assert_int_eq(px_engine_push_async(e, NULL, NULL, CPU, NULL, 0, &v, 1, PX_FN_NORMAL, 0, "x"),
                     PX_EFAULT);
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, NULL, 2, &v, 1, PX_FN_NORMAL, 0, "x"),
        PX_EFAULT);
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, &garbage, 1, NULL, 0, PX_FN_NORMAL, 0, "x"),
        PX_EINVAL);
    ck_assert(px_test_log_contains("px_engine_push_sync"));
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, NULL, 0, &fv, 1, PX_FN_NORMAL, 0, "x"),
        PX_EINVAL);
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, NULL, 0, &v, 1, (px_fn_property)42, 0, "x"),
        PX_EINVAL);
    px_context bad = {PX_DEV_CPU, -1};
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, bad, NULL, 0, &v, 1, PX_FN_NORMAL, 0, "x"),
        PX_EINVAL);
    px_context badtype = {(px_device_type)7, 0};
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, badtype, NULL, 0, &v, 1, PX_FN_NORMAL, 0, "x"),
        PX_EINVAL);
    if (!px_space_by_name("cuda")) {
        px_context gpu = {PX_DEV_CUDA, 0};
        ck_assert_int_eq(
            px_engine_push_sync(e, count_fn, NULL, gpu, NULL, 0, &v, 1, PX_FN_NORMAL, 0, "x"),
            PX_ENODEV);
        ck_assert_ptr_null(
            px_engine_op_create_sync(e, count_fn, NULL, gpu, NULL, 0, &v, 1, PX_FN_NORMAL, "x"));
    }
    ck_assert_int_eq(px_engine_wait_for_var(e, garbage), PX_EINVAL);
    ck_assert_int_eq(px_engine_wait_for_var(e, NULL), PX_EFAULT);
    ck_assert_int_eq(px_engine_wait_for_var(NULL, v), PX_EFAULT);
    ck_assert_int_eq(px_engine_wait_for_all(NULL), PX_EFAULT);
    ck_assert_int_eq(px_var_delete(e, NULL), PX_EFAULT);
    ck_assert_int_eq(px_var_delete(e, fv), PX_EINVAL);
    ck_assert_ptr_null(px_var_new(NULL));
    ck_assert_ptr_null(px_engine_create((px_engine_kind)9, 1));
    ck_assert_ptr_null(px_engine_create(PX_ENGINE_POOLED, -1));
    ck_assert_int_eq(px_engine_destroy(NULL), PX_EFAULT);
    ck_assert_int_eq(px_engine_destroy(px_engine_default()), PX_EBUSY);
    ck_assert_ptr_null(
        px_engine_op_create_sync(e, NULL, NULL, CPU, NULL, 0, &v, 1, PX_FN_NORMAL, "x"));
    ck_assert_ptr_null(
        px_engine_op_create_sync(e, count_fn, NULL, CPU, &garbage, 1, NULL, 0, PX_FN_NORMAL, "x"));
    ck_assert_int_eq(px_engine_op_push(e, (px_engine_op *)garbage, 0), PX_EINVAL);
    ck_assert_int_eq(px_engine_op_delete(e, (px_engine_op *)garbage), PX_EINVAL);
    ck_assert_int_eq(px_engine_destroy(f), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* A push's errors name the call and, for a handle that is not a live Var, the list and the
 * index in it; counts whose sum overflows or passes 2^32 Vars are PX_EINVAL before any handle
 * is read; the ops of the failed pushes never run. */
START_TEST(test_push_errors_name_the_call_the_list_and_the_index)
{
    px_test_log_capture();
    px_engine *e = px_engine_create(kind_under_test(), 1);
    px_var *v = px_var_new(e), *dead = px_var_new(e);
    ck_assert_int_eq(px_var_delete(e, dead), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    px_var *garbage = (px_var *)(uintptr_t)0x123456789abcull;
    int before = atomic_load(&ran_count);
    px_var *w2[2] = {v, garbage};
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, NULL, 0, w2, 2, PX_FN_NORMAL, 0, "x"),
        PX_EINVAL);
    ck_assert(px_test_log_contains("px_engine_push_sync: writes[1]"));
    px_var *r2[2] = {v, dead};
    ck_assert_int_eq(
        px_engine_push_async(e, async_here, NULL, CPU, r2, 2, NULL, 0, PX_FN_NORMAL, 0, "x"),
        PX_EINVAL);
    ck_assert(px_test_log_contains("px_engine_push_async: reads[1]"));
    px_op op = {
        .fn = count_fn, .ctx = CPU, .writes = {&dead, 1}, .property = PX_FN_NORMAL, .name = "x"};
    ck_assert_int_eq(px_engine_push(e, &op), PX_EINVAL);
    ck_assert(px_test_log_contains("px_engine_push: writes[0]"));
    ck_assert_int_eq(px_engine_push_sync(e, count_fn, NULL, CPU, &v, (size_t)1 << 32, NULL, 0,
                                         PX_FN_NORMAL, 0, "x"),
                     PX_EINVAL);
    ck_assert(px_test_log_contains("px_engine_push_sync: too many Vars"));
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, &v, SIZE_MAX, &v, 1, PX_FN_NORMAL, 0, "x"),
        PX_EINVAL);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(atomic_load(&ran_count), before);
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, &v, 1, &v, 1, PX_FN_NORMAL, 0, "x"), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(atomic_load(&ran_count), before + 1);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* ---- allocation --------------------------------------------------------------------------- */

static int alloc_sequence(void)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    if (!e)
        return PX_ENOMEM;
    int rc = PX_OK;
    px_var *v[3] = {NULL, NULL, NULL};
    px_engine_op *op = NULL;
    int x = 0;
    for (int i = 0; i < 3; ++i) {
        v[i] = px_var_new(e);
        if (!v[i])
            rc = PX_ENOMEM;
    }
    if (rc == PX_OK)
        rc = px_engine_push_sync(e, incr_fn, &x, CPU, v, 2, &v[2], 1, PX_FN_NORMAL, 0, "a");
    if (rc == PX_OK) {
        op = px_engine_op_create_sync(e, incr_fn, &x, CPU, v, 1, &v[1], 1, PX_FN_NORMAL, "op");
        if (!op)
            rc = PX_ENOMEM;
    }
    if (rc == PX_OK)
        rc = px_engine_op_push(e, op, 0);
    if (rc == PX_OK)
        rc = px_engine_wait_for_var(e, v[1]);
    ck_assert(rc == PX_OK || rc == PX_ENOMEM);
    if (op)
        ck_assert_int_eq(px_engine_op_delete(e, op), PX_OK);
    for (int i = 0; i < 3; ++i)
        if (v[i]) {
            int d = px_var_delete(e, v[i]);
            ck_assert(d == PX_OK || d == PX_ENOMEM);
        }
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    return rc;
}

START_TEST(test_allocation_failures_give_enomem_cleanly)
{
    px_log_set_level(PX_LOG_ERROR);
    int done = 0;
    for (uint64_t n = 1; n < 200 && !done; ++n) {
        pxi_alloc_fail_at(n);
        int rc = alloc_sequence();
        pxi_alloc_fail_at(0);
        done = rc == PX_OK;
    }
    ck_assert_msg(done, "the sequence never succeeded");
}
END_TEST

/* ---- lifecycle, backpressure ---------------------------------------------------------------- */

START_TEST(test_finalize_waits_for_undestroyed_engine_and_warns)
{
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    px_test_log_capture();
    px_engine *e = px_engine_create(kind_under_test(), 1);
    px_var *v = px_var_new(e);
    atomic_store(&slow_done, 0);
    ck_assert_int_eq(
        px_engine_push_sync(e, slow_fn, NULL, CPU, NULL, 0, &v, 1, PX_FN_NORMAL, 0, "slow"), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
    ck_assert_int_eq(atomic_load(&slow_done), 1);
    ck_assert(px_test_log_contains("not destroyed"));
    /* finalize drained it but did not free it: the owner still destroys it */
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_ptr_null(px_engine_default());
    ck_assert_ptr_null(px_engine_create(PX_ENGINE_NAIVE, 1));
    /* re-initialize works and makes a fresh default engine */
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    ck_assert_ptr_nonnull(px_engine_default());
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

START_TEST(test_finalize_returns_pending_failure_of_default_engine)
{
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    px_engine *e = px_engine_default();
    px_var *v = px_var_new(e);
    ck_assert_int_eq(px_engine_push_sync(e, fail_fn, (void *)(intptr_t)PX_EUSER, CPU, NULL, 0, &v,
                                         1, PX_FN_NORMAL, 0, "fails"),
                     PX_OK);
    ck_assert_int_eq(px_finalize(), PX_EUSER);
}
END_TEST

static Suite *engine_failure_suite(void)
{
    Suite *s = suite_create("engine_failure");
    TCase *tc = tcase_create("engine");
    tcase_add_checked_fixture(tc, px_test_setup, px_test_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_failure_marks_writes_and_skips_dependents);
    tcase_add_test(tc, test_wait_for_all_returns_first_failure);
    tcase_add_test(tc, test_a_failed_op_is_logged_once_with_its_name_status_and_vars);
    tcase_add_test(tc, test_a_corrected_rerun_after_a_reported_failure_succeeds);
    tcase_add_test(tc, test_a_failure_no_wait_has_reported_keeps_skipping);
    tcase_add_test(tc, test_the_descriptor_form_pushes_like_the_positional_calls);
    tcase_add_test(tc, test_the_descriptor_form_rejects_bad_descriptors);
    tcase_add_test(tc, test_async_op_completes_from_another_thread_with_failure);
    tcase_add_test(tc, test_async_ready_at_push_runs_on_pusher);
    tcase_add_test(tc, test_wait_inside_op_is_edeadlk);
    tcase_add_test(tc, test_finalize_inside_op_is_edeadlk_and_keeps_runtime);
    tcase_add_test(tc, test_wait_inside_kernel_is_edeadlk);
    tcase_add_test(tc, test_bad_handles_and_arguments);
    tcase_add_test(tc, test_push_errors_name_the_call_the_list_and_the_index);
    tcase_add_test(tc, test_allocation_failures_give_enomem_cleanly);
    suite_add_tcase(s, tc);
    TCase *life = tcase_create("lifecycle");
    tcase_set_timeout(life, 60);
    tcase_add_test(life, test_finalize_waits_for_undestroyed_engine_and_warns);
    tcase_add_test(life, test_finalize_returns_pending_failure_of_default_engine);
    suite_add_tcase(s, life);
    return s;
}

int main(void)
{
    return px_test_run(engine_failure_suite());
}
