/* tests/check_engine_help.c - help-while-waiting (core/engine/calls.c): a thread waiting in
 * px_engine_wait_for_var / px_engine_wait_for_all runs ready ops of the engine's CPU lanes
 * itself, in queue order, with the engine's failure rules, and sees worker -2.
 *
 * The engine under test has one CPU worker; a gate op holds it, so every op queued behind the
 * gate can only run on the waiting thread. ctest also runs the suite bound to one processor
 * (taskset, PX_TEST_ONE_CPU=1), where the waiter holds the lanes (no worker is woken). The
 * ctests set PX_ENGINE_MAX_PENDING=64 and PX_ENGINE_INLINE_NS=0, so no op runs on its pusher
 * (work-first throttle and inlining off): every op the gate holds back runs on the waiter.
 * The last two tests take the engine of the default size on a process whose Threads pool fills
 * its processors (core/engine/runtime.c, pool_full), and one sized explicitly; ctest runs the
 * suite with the default pool, with PX_NUM_THREADS=1 and on one processor. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "check_engine_common.h"

#define CHAIN 16

static pthread_t waiter_thread;
static atomic_int log_n;
static int log_id[4 * CHAIN];
static int log_worker[4 * CHAIN];
static int log_on_waiter[4 * CHAIN];

typedef struct {
    int id;
    int status; /* returned by the op */
} rec_arg;

/* Appends its id, the worker it saw and whether it ran on the waiting thread. */
static int rec_fn(const px_run_context *rc, void *arg)
{
    const rec_arg *a = arg;
    int k = atomic_fetch_add(&log_n, 1);
    log_id[k] = a->id;
    log_worker[k] = rc->worker;
    log_on_waiter[k] = pthread_equal(pthread_self(), waiter_thread);
    return a->status;
}

static int open_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    atomic_store(&gate_open, 1);
    return PX_OK;
}

/* The log holds CHAIN ops, ids 0..CHAIN-1 in that order, every one run on the waiting thread. */
static void check_log_in_order_on_waiter(void)
{
    ck_assert_int_eq(atomic_load(&log_n), CHAIN);
    for (int i = 0; i < CHAIN; ++i) {
        ck_assert_int_eq(log_id[i], i);
        ck_assert_int_eq(log_on_waiter[i], 1);
    }
}

/* Push CHAIN rec ops writing @v, ids 0..CHAIN-1; the op with id @fail_at (-1: none) returns
 * PX_EUSER. */
static void push_chain(px_engine *e, px_var *v, int fail_at)
{
    static rec_arg args[CHAIN];
    for (int i = 0; i < CHAIN; ++i) {
        args[i].id = i;
        args[i].status = i == fail_at ? PX_EUSER : PX_OK;
        ck_assert_int_eq(
            px_engine_push_sync(e, rec_fn, &args[i], CPU, NULL, 0, &v, 1, PX_FN_NORMAL, 0, "rec"),
            PX_OK);
    }
}

/* The gate holds the only CPU worker of @e (started before anything else is pushed). */
static px_engine *gated_engine(px_var **gv)
{
    px_test_setup();
    px_engine *e = px_engine_create(PX_ENGINE_PER_DEVICE, 1);
    ck_assert_ptr_nonnull(e);
    atomic_store(&gate_open, 0);
    atomic_store(&gate_started, 0);
    atomic_store(&log_n, 0);
    waiter_thread = pthread_self();
    *gv = px_var_new(e);
    ck_assert_int_eq(
        px_engine_push_sync(e, gate_fn, NULL, CPU, NULL, 0, gv, 1, PX_FN_NORMAL, 0, "gate"), PX_OK);
    while (!atomic_load(&gate_started))
        sleep_ms(1);
    return e;
}

static void gated_done(px_engine *e, px_var *gv)
{
    atomic_store(&gate_open, 1);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(px_var_delete(e, gv), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}

START_TEST(test_waiter_runs_a_chain_in_push_order_as_worker_minus_2)
{
    px_var *gv;
    px_engine *e = gated_engine(&gv);
    px_var *v = px_var_new(e);
    push_chain(e, v, -1);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
    check_log_in_order_on_waiter();
    for (int i = 0; i < CHAIN; ++i)
        ck_assert_int_eq(log_worker[i], -2);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
    gated_done(e, gv);
}
END_TEST

START_TEST(test_waiter_keeps_fifo_order_of_independent_ops)
{
    px_var *gv;
    px_engine *e = gated_engine(&gv);
    px_var *v[CHAIN];
    static rec_arg args[CHAIN];
    for (int i = 0; i < CHAIN; ++i) {
        v[i] = px_var_new(e);
        args[i].id = i;
        args[i].status = PX_OK;
        ck_assert_int_eq(px_engine_push_sync(e, rec_fn, &args[i], CPU, NULL, 0, &v[i], 1,
                                             PX_FN_NORMAL, 0, "rec"),
                         PX_OK);
    }
    /* Waiting for the last op's Var: the lane is FIFO, so the waiter runs them all, in order. */
    ck_assert_int_eq(px_engine_wait_for_var(e, v[CHAIN - 1]), PX_OK);
    check_log_in_order_on_waiter();
    for (int i = 0; i < CHAIN; ++i)
        ck_assert_int_eq(px_var_delete(e, v[i]), PX_OK);
    gated_done(e, gv);
}
END_TEST

START_TEST(test_op_failing_on_the_waiter_skips_its_successors_and_is_reported)
{
    px_var *gv;
    px_engine *e = gated_engine(&gv);
    px_var *v = px_var_new(e);
    push_chain(e, v, 3);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_EUSER);
    ck_assert_int_eq(atomic_load(&log_n), 4); /* 0..3 ran, 4.. were skipped */
    for (int i = 0; i < 4; ++i)
        ck_assert_int_eq(log_on_waiter[i], 1);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK); /* cleared by the wait */
    /* The failure is still the first one wait_for_all reports. */
    atomic_store(&gate_open, 1);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_EUSER);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
    gated_done(e, gv);
}
END_TEST

START_TEST(test_wait_for_all_helps_and_returns_only_when_nothing_is_in_flight)
{
    px_var *gv;
    px_engine *e = gated_engine(&gv);
    px_var *v = px_var_new(e);
    push_chain(e, v, -1);
    /* The last op opens the gate the worker sits in: wait_for_all must run the chain itself,
     * then wait for the gate op to finish on the worker. */
    ck_assert_int_eq(
        px_engine_push_sync(e, open_fn, NULL, CPU, NULL, 0, &v, 1, PX_FN_NORMAL, 0, "open"), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(atomic_load(&log_n), CHAIN);
    for (int i = 0; i < CHAIN; ++i)
        ck_assert_int_eq(log_on_waiter[i], 1);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
    gated_done(e, gv);
}
END_TEST

/* The waiter keeps the op that its last finish made ready in a continuation slot (push.c,
 * pxi_engine_help_begin) and runs it next, without the lane. When that finish also ends the
 * wait, the op must go to its lane, not stay in the slot: A writes v1 and v2, B reads v2, and
 * the waiter waits for v1 alone. A's finish makes B ready and ends the wait; B is then queued
 * behind the gate and runs once the gate opens, on the worker (nobody waits any more), once. */
START_TEST(test_an_op_made_ready_as_the_wait_ends_is_handed_to_its_lane)
{
    px_var *gv;
    px_engine *e = gated_engine(&gv);
    px_var *v1 = px_var_new(e), *v2 = px_var_new(e);
    px_var *ab[2] = {v1, v2};
    static rec_arg a = {.id = 1, .status = PX_OK}, b = {.id = 2, .status = PX_OK};
    ck_assert_int_eq(px_engine_push_sync(e, rec_fn, &a, CPU, NULL, 0, ab, 2, PX_FN_NORMAL, 0, "a"),
                     PX_OK);
    ck_assert_int_eq(px_engine_push_sync(e, rec_fn, &b, CPU, &v2, 1, NULL, 0, PX_FN_NORMAL, 0, "b"),
                     PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, v1), PX_OK);
    ck_assert_int_eq(atomic_load(&log_n), 1); /* A on the waiter; B behind the gate */
    ck_assert_int_eq(log_id[0], 1);
    ck_assert_int_eq(log_on_waiter[0], 1);
    sleep_ms(20);
    ck_assert_int_eq(atomic_load(&log_n), 1);
    atomic_store(&gate_open, 1);
    /* B starts with nobody waiting: only the worker can run it. The log is read after
     * wait_for_all, which orders B's writes before the reads (B may still be writing when
     * log_n says it began). */
    for (int ms = 0; atomic_load(&log_n) < 2 && ms < 10000; ms++)
        sleep_ms(1);
    ck_assert_int_eq(atomic_load(&log_n), 2);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(atomic_load(&log_n), 2);
    ck_assert_int_eq(log_id[1], 2);
    ck_assert_int_eq(log_on_waiter[1], 0);
    ck_assert_int_ge(log_worker[1], 0); /* a worker's index */
    ck_assert_int_eq(px_var_delete(e, v1), PX_OK);
    ck_assert_int_eq(px_var_delete(e, v2), PX_OK);
    gated_done(e, gv);
}
END_TEST

/* A chain whose ops each make the next ready, the case the waiter's continuation slot serves
 * (each op is made ready by its predecessor's finish on the waiter while the lanes are empty):
 * every op of a chain of CHAIN ops over two Vars (op i writes v[i % 2] and reads the other)
 * runs on the waiter, once, in order, and wait_for_all returns only after the last. The gate
 * leaves the waiter the only runner, so this holds with or without the slot: it checks that the
 * slot keeps the chain's order and loses nothing (the instructions it saves are measured in
 * bench/RESULTS.md, session 30). */
START_TEST(test_a_chain_made_ready_by_finishes_runs_on_the_waiter_in_order)
{
    px_var *gv;
    px_engine *e = gated_engine(&gv);
    px_var *v[2] = {px_var_new(e), px_var_new(e)};
    static rec_arg args[CHAIN];
    for (int i = 0; i < CHAIN; ++i) {
        args[i].id = i;
        args[i].status = PX_OK;
        ck_assert_int_eq(px_engine_push_sync(e, rec_fn, &args[i], CPU, &v[(i + 1) % 2], 1,
                                             &v[i % 2], 1, PX_FN_NORMAL, 0, "rec"),
                         PX_OK);
    }
    ck_assert_int_eq(
        px_engine_push_sync(e, open_fn, NULL, CPU, NULL, 0, v, 2, PX_FN_NORMAL, 0, "open"), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    check_log_in_order_on_waiter();
    ck_assert_int_eq(px_var_delete(e, v[0]), PX_OK);
    ck_assert_int_eq(px_var_delete(e, v[1]), PX_OK);
    gated_done(e, gv);
}
END_TEST

/* ---- several waiters and workers at once (TSan) ------------------------------------------ */

#define MT_THREADS 3
#define MT_OPS     400

typedef struct {
    px_engine *e;
    int sum;
} mt_arg;

static void *mt_main(void *p)
{
    mt_arg *a = p;
    px_var *v = px_var_new(a->e);
    if (!v)
        return (void *)1;
    for (int i = 0; i < MT_OPS; ++i) {
        if (px_engine_push_sync(a->e, incr_fn, &a->sum, CPU, NULL, 0, &v, 1, PX_FN_NORMAL, 0,
                                "incr") != PX_OK)
            return (void *)1;
        if (i % 50 == 49 && px_engine_wait_for_var(a->e, v) != PX_OK)
            return (void *)1;
    }
    if (px_engine_wait_for_var(a->e, v) != PX_OK || px_var_delete(a->e, v) != PX_OK)
        return (void *)1;
    return NULL;
}

START_TEST(test_threads_waiting_at_once_all_help_and_every_op_runs_once)
{
    px_test_setup();
    px_engine *e = px_engine_create(kind_under_test(), 2);
    ck_assert_ptr_nonnull(e);
    pthread_t t[MT_THREADS];
    mt_arg a[MT_THREADS];
    for (int i = 0; i < MT_THREADS; ++i) {
        a[i].e = e;
        a[i].sum = 0;
        ck_assert_int_eq(pthread_create(&t[i], NULL, mt_main, &a[i]), 0);
    }
    for (int i = 0; i < MT_THREADS; ++i) {
        void *r;
        pthread_join(t[i], &r);
        ck_assert_ptr_null(r);
    }
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    for (int i = 0; i < MT_THREADS; ++i)
        ck_assert_int_eq(a[i].sum, MT_OPS); /* each chain ran once, in order, without a race */
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

START_TEST(test_bound_to_one_processor_when_asked)
{
    if (!getenv("PX_TEST_ONE_CPU"))
        return;
    cpu_set_t set;
    ck_assert_int_eq(sched_getaffinity(0, sizeof set, &set), 0);
    ck_assert_int_eq(CPU_COUNT(&set), 1); /* the hold path of calls.c is what runs here */
}
END_TEST

/* ---- a default-sized engine on a process whose Threads pool fills its processors ---------- */

static atomic_int pushed_from_op;
static px_engine *full_e;
static px_var *full_v;
static rec_arg full_arg = {.id = 0, .status = PX_OK};

/* Runs on a worker while the main thread waits: pushes one op, which becomes ready at once and
 * goes to the CPU lane, then waits (at most 5 s) for it to have run somewhere else. */
static int push_then_wait_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    sleep_ms(50); /* the main thread is in px_engine_wait_for_all, the idle worker asleep */
    if (px_engine_push_sync(full_e, rec_fn, &full_arg, CPU, NULL, 0, &full_v, 1, PX_FN_NORMAL, 0,
                            "rec") != PX_OK)
        return PX_EUSER;
    atomic_store(&pushed_from_op, 1);
    for (int k = 0; k < 5000 && atomic_load(&log_n) < 1; ++k)
        sleep_ms(1);
    return PX_OK;
}

/* The processors this process may run on (before px_initialize, which binds the calling
 * thread to Threads rank 0's core), then px_initialize and the Threads pool's ranks. */
static void setup_with_pool_and_cpus(int *threads, int *cpus)
{
    cpu_set_t set;
    ck_assert_int_eq(sched_getaffinity(0, sizeof set, &set), 0);
    *cpus = CPU_COUNT(&set);
    px_test_setup();
    px_space *t = px_space_by_name("threads");
    *threads = t ? px_space_concurrency(t) : 0;
}

/* On a fresh engine of @cpu_workers (0: the default size): the op above runs on a worker while
 * this thread waits in px_engine_wait_for_all; its pushed op must run exactly once. Leaves
 * log_on_waiter[0] and log_worker[0]; finalizes the runtime. */
static void run_push_then_wait(int cpu_workers)
{
    full_e = px_engine_create(PX_ENGINE_PER_DEVICE, cpu_workers);
    ck_assert_ptr_nonnull(full_e);
    atomic_store(&log_n, 0);
    atomic_store(&pushed_from_op, 0);
    waiter_thread = pthread_self();
    px_var *g = px_var_new(full_e);
    full_v = px_var_new(full_e);
    sleep_ms(50); /* the workers past their spin budget, asleep */
    ck_assert_int_eq(px_engine_push_sync(full_e, push_then_wait_fn, NULL, CPU, NULL, 0, &g, 1,
                                         PX_FN_NORMAL, 0, "push_then_wait"),
                     PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(full_e), PX_OK);
    ck_assert_int_eq(atomic_load(&pushed_from_op), 1);
    ck_assert_int_eq(atomic_load(&log_n), 1);
    ck_assert_int_eq(px_var_delete(full_e, g), PX_OK);
    ck_assert_int_eq(px_var_delete(full_e, full_v), PX_OK);
    ck_assert_int_eq(px_engine_destroy(full_e), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}

/* runtime.c's rule: a per_device engine of the default size (cpu_workers 0, no
 * PX_CPU_WORKER_NTHREADS) whose process has the Threads pool on all its processors (T >= C)
 * waits as on one processor: an op made ready while a thread waits (here by an op on a
 * worker) runs on the waiter, whose processor the pool's rank 0 is, and no sleeping worker is
 * woken for it. With a pool smaller than the processors (PX_NUM_THREADS=1 on 2+), the waiter
 * of an engine with as many workers as processors does not help, and a worker runs it. */
START_TEST(test_default_engine_on_a_full_pool_runs_ops_ready_while_waiting_on_the_waiter)
{
    if (kind_under_test() == PX_ENGINE_NAIVE || getenv("PX_CPU_WORKER_NTHREADS"))
        return; /* the engine below is per_device of the default size: one run suffices */
    int threads, cpus;
    setup_with_pool_and_cpus(&threads, &cpus);
    run_push_then_wait(0);
    /* On one processor (or oversubscribed: T > C) the waiter holds the lanes as well. */
    const int waiter_runs = cpus <= 1 || threads >= cpus;
    ck_assert_msg(log_on_waiter[0] == waiter_runs,
                  "%d threads on %d processors: the op ran on %s (worker %d)", threads, cpus,
                  log_on_waiter[0] ? "the waiter" : "a worker", log_worker[0]);
    ck_assert_int_eq(log_worker[0] == -2, waiter_runs);
}
END_TEST

/* An explicit worker count keeps the old rule on the same process: with as many workers as
 * processors the waiter does not help, and the op runs on the other worker. */
START_TEST(test_explicitly_sized_engine_keeps_ops_on_its_workers_while_a_thread_waits)
{
    if (kind_under_test() == PX_ENGINE_NAIVE || getenv("PX_CPU_WORKER_NTHREADS"))
        return;
    int threads, cpus;
    setup_with_pool_and_cpus(&threads, &cpus);
    if (cpus < 2 || threads > cpus) {
        ck_assert_int_eq(px_finalize(), PX_OK);
        return; /* one processor or oversubscribed: the waiter holds whatever the size */
    }
    run_push_then_wait(cpus);
    ck_assert_int_eq(log_on_waiter[0], 0);
    ck_assert_int_ge(log_worker[0], 0);
}
END_TEST

static Suite *engine_help_suite(void)
{
    Suite *s = suite_create("engine_help");
    TCase *tc = tcase_create("help");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_bound_to_one_processor_when_asked);
    tcase_add_test(tc, test_waiter_runs_a_chain_in_push_order_as_worker_minus_2);
    tcase_add_test(tc, test_waiter_keeps_fifo_order_of_independent_ops);
    tcase_add_test(tc, test_op_failing_on_the_waiter_skips_its_successors_and_is_reported);
    tcase_add_test(tc, test_wait_for_all_helps_and_returns_only_when_nothing_is_in_flight);
    tcase_add_test(tc, test_an_op_made_ready_as_the_wait_ends_is_handed_to_its_lane);
    tcase_add_test(tc, test_a_chain_made_ready_by_finishes_runs_on_the_waiter_in_order);
    tcase_add_test(tc, test_threads_waiting_at_once_all_help_and_every_op_runs_once);
    tcase_add_test(tc,
                   test_default_engine_on_a_full_pool_runs_ops_ready_while_waiting_on_the_waiter);
    tcase_add_test(tc, test_explicitly_sized_engine_keeps_ops_on_its_workers_while_a_thread_waits);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(engine_help_suite());
}
