/* tests/check_engine_lanes.c - the dependency engine, where ops run: the no-malloc steady state,
 * backpressure at PX_ENGINE_MAX_PENDING and work-first inlining of ops measured cheap.
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

START_TEST(test_steady_state_pushes_do_not_malloc)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *v[64];
    int bad = 0;
    for (int i = 0; i < 64; ++i)
        v[i] = px_var_new(e);
    /* Warm-up: hold every Var with a gate op so that all pushes of a round (and its waits)
     * are in flight at once; the pools then hold the most any later round can need. */
    atomic_store(&gate_open, kind_under_test() == PX_ENGINE_NAIVE); /* naive runs it inline */
    atomic_store(&gate_started, 0);
    ck_assert_int_eq(
        px_engine_push_sync(e, gate_fn, NULL, CPU, NULL, 0, v, 64, PX_FN_NORMAL, 0, "gate"), PX_OK);
    for (int k = 0; k < 21000; ++k) {
        px_var *r[3] = {v[k % 64], v[(k * 7) % 64], v[(k * 13) % 64]};
        px_var *w = v[(k * 3 + 1) % 64];
        bad += px_engine_push_sync(e, count_fn, NULL, CPU, r, 3, &w, 1, PX_FN_NORMAL, 0, "warm") !=
               PX_OK;
    }
    ck_assert_int_eq(bad, 0);
    atomic_store(&gate_open, 1);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    for (int round = 0; round < 2; ++round) {
        uint64_t c0 = pxi_alloc_count();
        for (int k = 0; k < 20000; ++k) {
            px_var *r[3] = {v[k % 64], v[(k * 7) % 64], v[(k * 13) % 64]};
            px_var *w = v[(k * 3 + 1) % 64];
            bad += px_engine_push_sync(e, count_fn, NULL, CPU, r, 3, &w, 1, PX_FN_NORMAL, 0,
                                       "steady") != PX_OK;
            if (k % 5000 == 0)
                bad += px_engine_wait_for_var(e, w) != PX_OK;
        }
        ck_assert_int_eq(bad, 0);
        ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
        uint64_t c1 = pxi_alloc_count();
        if (round == 1)
            ck_assert_msg(c1 == c0, "%llu allocations in steady state",
                          (unsigned long long)(c1 - c0));
    }
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

typedef struct {
    px_engine *e;
    atomic_int pushed;
} bp_arg;

static void *bp_pusher(void *arg)
{
    bp_arg *b = arg;
    for (int k = 0; k < 100; ++k) {
        px_var *none = NULL;
        (void)none;
        if (px_engine_push_sync(b->e, count_fn, NULL, CPU, NULL, 0, NULL, 0, PX_FN_NORMAL, 0,
                                "bp") != PX_OK)
            return (void *)1;
        atomic_fetch_add(&b->pushed, 1);
    }
    return NULL;
}

START_TEST(test_backpressure_blocks_pushers_at_max_pending)
{
    setenv("PX_ENGINE_MAX_PENDING", "8", 1);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    unsetenv("PX_ENGINE_MAX_PENDING");
    px_engine *e = px_engine_create(PX_ENGINE_PER_DEVICE, 1);
    atomic_store(&gate_open, 0);
    atomic_store(&gate_started, 0);
    atomic_store(&ran_count, 0);
    px_var *g = px_var_new(e);
    /* The gate occupies the only CPU worker, so nothing else can finish. */
    ck_assert_int_eq(
        px_engine_push_sync(e, gate_fn, NULL, CPU, NULL, 0, &g, 1, PX_FN_NORMAL, 0, "gate"), PX_OK);
    bp_arg b;
    b.e = e;
    atomic_init(&b.pushed, 0);
    pthread_t t;
    pthread_create(&t, NULL, bp_pusher, &b);
    sleep_ms(100);
    int pushed = atomic_load(&b.pushed);
    ck_assert_msg(pushed <= 8, "%d pushes went through with max pending 8", pushed);
    atomic_store(&gate_open, 1);
    void *r;
    pthread_join(t, &r);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(atomic_load(&ran_count), 100);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

/* ---- work-first inlining by measured cost ------------------------------------------------ */

#define INL_OPS 4000
/* After a function turns slow, INL_SLOW more runs; the last 200 must all go to workers. A
 * timed run is chosen at random, 1 in 64, so the slow runs still made at push before the first
 * timed one number more than INL_SLOW - 200 = 1,000 with probability (63/64)^1000 < 2e-7. */
#define INL_SLOW 1200
/* rc->worker of each op's run (-1: its pusher, -2: a waiting thread), INL_NOT_RUN before. */
#define INL_NOT_RUN (-1000)
static int inl_worker[INL_OPS + INL_SLOW];
static atomic_int inl_slow_us;

typedef struct inl_arg {
    int index;
} inl_arg;

static int inl_fn(const px_run_context *rc, void *arg)
{
    const inl_arg *a = arg;
    inl_worker[a->index] = rc->worker;
    int us = atomic_load_explicit(&inl_slow_us, memory_order_relaxed);
    if (us > 0)
        spin_us(us);
    return PX_OK;
}

/* Initialize with PX_ENGINE_MAX_PENDING=64, which turns the queue-depth throttle off for a
 * 1-worker engine (engine.h), so a pusher runs an op only by the cost rule, and with
 * PX_ENGINE_INLINE_NS=inline_ns. The thresholds the tests pass are far from what inl_fn
 * costs, with or without sanitizers (an empty run under TSan takes a few hundred ns). */
static px_engine *inl_engine(const char *inline_ns)
{
    setenv("PX_ENGINE_MAX_PENDING", "64", 1);
    setenv("PX_ENGINE_INLINE_NS", inline_ns, 1);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    unsetenv("PX_ENGINE_MAX_PENDING");
    unsetenv("PX_ENGINE_INLINE_NS");
    px_engine *e = px_engine_create(kind_under_test(), 1);
    ck_assert_ptr_nonnull(e);
    return e;
}

/* Push ops [first, last) writing Var k % 64, then wait for all. */
static void inl_push(px_engine *e, px_var **v, inl_arg *args, int first, int last)
{
    for (int k = first; k < last; ++k) {
        args[k].index = k;
        inl_worker[k] = INL_NOT_RUN;
        ck_assert_int_eq(px_engine_push_sync(e, inl_fn, &args[k], CPU, NULL, 0, &v[k % 64], 1,
                                             PX_FN_NORMAL, 0, "inl"),
                         PX_OK);
    }
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
}

static int inl_on_pusher(int first, int last)
{
    int n = 0;
    for (int k = first; k < last; ++k) {
        ck_assert_msg(inl_worker[k] != INL_NOT_RUN, "op %d did not run", k);
        n += inl_worker[k] == -1;
    }
    return n;
}

/* 64 fresh Vars of e. */
static void inl_vars(px_engine *e, px_var **v)
{
    for (int i = 0; i < 64; ++i) {
        v[i] = px_var_new(e);
        ck_assert_ptr_nonnull(v[i]);
    }
}

/* Delete the 64 Vars, destroy e and finalize the runtime inl_engine initialized. */
static void inl_done(px_engine *e, px_var **v)
{
    for (int i = 0; i < 64; ++i)
        ck_assert_int_eq(px_var_delete(e, v[i]), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}

START_TEST(test_ops_measured_cheap_run_on_the_pusher)
{
    atomic_store(&inl_slow_us, 0);
    px_engine *e = inl_engine("20000");
    px_var *v[64];
    inl_vars(e, v);
    static inl_arg args[INL_OPS];
    const int naive = kind_under_test() == PX_ENGINE_NAIVE;
    /* The first samples (one run in 64 is timed) teach the engine that inl_fn is cheap; from
     * then on a ready op runs at push. A preempted sample sends up to ~1,000 ops back to the
     * worker (its average decays 1/4 per sample), hence the loose bound, and on a loaded
     * machine (TSan, 3 threads on 2 cores, another test beside) two such samples in one batch
     * can happen: up to three batches, one of which must pass. With the rule off none runs at
     * push (test_inline_ns_zero_keeps_cheap_ops_on_workers). */
    int on_pusher = 0;
    for (int batch = 0; batch < 3; ++batch) {
        inl_push(e, v, args, 0, INL_OPS);
        on_pusher = inl_on_pusher(INL_OPS / 2, INL_OPS);
        if (naive || on_pusher > INL_OPS / 16)
            break;
    }
    if (naive)
        ck_assert_int_eq(on_pusher, INL_OPS / 2); /* naive runs everything at push */
    else
        ck_assert_msg(on_pusher > INL_OPS / 16, "only %d of the last %d cheap ops ran at push",
                      on_pusher, INL_OPS / 2);
    inl_done(e, v);
}
END_TEST

START_TEST(test_inline_ns_zero_keeps_cheap_ops_on_workers)
{
    if (kind_under_test() == PX_ENGINE_NAIVE)
        return; /* nothing to hand off */
    atomic_store(&inl_slow_us, 0);
    px_engine *e = inl_engine("0");
    px_var *v[64];
    inl_vars(e, v);
    static inl_arg args[INL_OPS];
    inl_push(e, v, args, 0, INL_OPS);
    ck_assert_int_eq(inl_on_pusher(0, INL_OPS), 0);
    inl_done(e, v);
}
END_TEST

START_TEST(test_op_that_becomes_expensive_goes_back_to_workers)
{
    if (kind_under_test() == PX_ENGINE_NAIVE)
        return;
    atomic_store(&inl_slow_us, 0);
    px_engine *e = inl_engine("20000");
    px_var *v[64];
    inl_vars(e, v);
    static inl_arg args[INL_OPS + INL_SLOW];
    inl_push(e, v, args, 0, INL_OPS);
    ck_assert_int_gt(inl_on_pusher(INL_OPS / 2, INL_OPS), 0);
    /* Same function, now 100 us a run: the next timed run lifts its average far above the
     * 20 us threshold, and the ops after it are handed to the worker again. */
    atomic_store(&inl_slow_us, 100);
    inl_push(e, v, args, INL_OPS, INL_OPS + INL_SLOW);
    ck_assert_int_eq(inl_on_pusher(INL_OPS + INL_SLOW - 200, INL_OPS + INL_SLOW), 0);
    atomic_store(&inl_slow_us, 0);
    inl_done(e, v);
}
END_TEST

START_TEST(test_cheap_op_not_ready_at_push_is_counted_and_waits)
{
    if (kind_under_test() == PX_ENGINE_NAIVE)
        return; /* a gate op on the naive engine would block its own pusher */
    atomic_store(&inl_slow_us, 0);
    px_engine *e = inl_engine("20000");
    px_var *v[64];
    inl_vars(e, v);
    static inl_arg args[INL_OPS + 1];
    inl_push(e, v, args, 0, INL_OPS);
    ck_assert_int_gt(inl_on_pusher(INL_OPS / 2, INL_OPS), 0);
    /* The gate holds the only worker and Var v[0]: the next cheap op on v[0] is a candidate
     * that is not ready, so its push takes an in-flight slot (the retry path) and returns. */
    atomic_store(&gate_open, 0);
    atomic_store(&gate_started, 0);
    ck_assert_int_eq(
        px_engine_push_sync(e, gate_fn, NULL, CPU, NULL, 0, &v[0], 1, PX_FN_NORMAL, 0, "gate"),
        PX_OK);
    /* On the worker before anything waits: a wait_for_all that found the gate still queued (a
     * loaded machine) would run it on the waiting thread, and the op after it there too. */
    while (!atomic_load(&gate_started))
        sleep_ms(1);
    args[INL_OPS].index = INL_OPS;
    inl_worker[INL_OPS] = INL_NOT_RUN;
    ck_assert_int_eq(px_engine_push_sync(e, inl_fn, &args[INL_OPS], CPU, NULL, 0, &v[0], 1,
                                         PX_FN_NORMAL, 0, "inl-after-gate"),
                     PX_OK);
    sleep_ms(20);
    ck_assert_int_eq(inl_worker[INL_OPS], INL_NOT_RUN); /* still waiting for the gate */
    atomic_store(&gate_open, 1);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_ge(inl_worker[INL_OPS], 0); /* run by the worker that released v[0] */
    inl_done(e, v);
}
END_TEST

START_TEST(test_cheap_ops_with_several_vars_run_at_push_or_wait_their_turn)
{
    if (kind_under_test() == PX_ENGINE_NAIVE)
        return; /* a gate op on the naive engine would block its own pusher */
    atomic_store(&inl_slow_us, 0);
    px_engine *e = inl_engine("20000");
    px_var *v[64];
    inl_vars(e, v);
    static inl_arg args[INL_OPS + 65];
    inl_push(e, v, args, 0, INL_OPS);
    ck_assert_int_gt(inl_on_pusher(INL_OPS / 2, INL_OPS), 0);
    /* More Vars than a pusher's stack block holds (push.c, stack_opr): a ready cheap op still
     * runs at push, from a pool block. */
    for (int k = INL_OPS; k < INL_OPS + 64; ++k) {
        args[k].index = k;
        inl_worker[k] = INL_NOT_RUN;
        ck_assert_int_eq(px_engine_push_sync(e, inl_fn, &args[k], CPU, &v[8], 3, &v[3], 5,
                                             PX_FN_NORMAL, 0, "inl-8-vars"),
                         PX_OK);
    }
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_gt(inl_on_pusher(INL_OPS, INL_OPS + 64), 0);
    /* Four handles, one read twice, one held by the gate: the candidate is not ready, so it
     * leaves its stack block for a pool block and waits for the gate like any op. */
    atomic_store(&gate_open, 0);
    atomic_store(&gate_started, 0);
    ck_assert_int_eq(
        px_engine_push_sync(e, gate_fn, NULL, CPU, NULL, 0, &v[0], 1, PX_FN_NORMAL, 0, "gate"),
        PX_OK);
    /* On the worker before anything waits (as in the test above): a wait_for_all that found
     * the gate still queued would run it, and the op after it, on the waiting thread. */
    while (!atomic_load(&gate_started))
        sleep_ms(1);
    const int last = INL_OPS + 64;
    args[last].index = last;
    inl_worker[last] = INL_NOT_RUN;
    px_var *reads[2] = {v[1], v[1]};
    px_var *writes[2] = {v[2], v[0]};
    ck_assert_int_eq(px_engine_push_sync(e, inl_fn, &args[last], CPU, reads, 2, writes, 2,
                                         PX_FN_NORMAL, 0, "inl-after-gate"),
                     PX_OK);
    sleep_ms(20);
    ck_assert_int_eq(inl_worker[last], INL_NOT_RUN); /* still waiting for the gate */
    atomic_store(&gate_open, 1);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_ge(inl_worker[last], 0); /* run by the worker that released v[0] */
    inl_done(e, v);
}
END_TEST

START_TEST(test_cheap_failing_op_at_push_reports_its_failure)
{
    px_engine *e = inl_engine("20000");
    px_var *v = px_var_new(e);
    /* Teach the engine fail_fn is cheap (returning PX_OK), then let it fail. */
    for (int k = 0; k < INL_OPS; ++k)
        ck_assert_int_eq(px_engine_push_sync(e, fail_fn, (void *)(intptr_t)PX_OK, CPU, NULL, 0, &v,
                                             1, PX_FN_NORMAL, 0, "ok"),
                         PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(px_engine_push_sync(e, fail_fn, (void *)(intptr_t)PX_EUSER, CPU, NULL, 0, &v,
                                         1, PX_FN_NORMAL, 0, "fails"),
                     PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_EUSER);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK); /* cleared by the wait */
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_EUSER);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

static atomic_int reuse_count;
static int reuse_fn(const px_run_context *rc, void *arg)
{
    (void)arg;
    if (rc->worker == -1)
        atomic_fetch_add_explicit(&reuse_count, 1, memory_order_relaxed);
    return PX_OK;
}

START_TEST(test_reused_cheap_operator_runs_at_push_and_deletes_deferred)
{
    px_engine *e = inl_engine("20000");
    px_var *v = px_var_new(e);
    atomic_store(&reuse_count, 0);
    /* No Vars, so every push is ready (a chain on one Var is ready only when the worker has
     * caught up with the pusher). */
    px_engine_op *op =
        px_engine_op_create_sync(e, reuse_fn, NULL, CPU, NULL, 0, NULL, 0, PX_FN_NORMAL, "reuse");
    ck_assert_ptr_nonnull(op);
    for (int k = 0; k < INL_OPS; ++k)
        ck_assert_int_eq(px_engine_op_push(e, op, 0), PX_OK);
    ck_assert_int_eq(px_engine_op_delete(e, op), PX_OK);
    ck_assert_int_eq(px_engine_op_push(e, op, 0), PX_EINVAL);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_gt(atomic_load(&reuse_count), 0);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

/* Two cheap functions pushed alternately (a period that divides the sampling interval): when
 * one becomes expensive it must still be timed again and handed back to the workers. */
static int alt_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    return PX_OK;
}

START_TEST(test_alternating_functions_are_each_sampled)
{
    if (kind_under_test() == PX_ENGINE_NAIVE)
        return;
    atomic_store(&inl_slow_us, 0);
    px_engine *e = inl_engine("20000");
    px_var *v[64];
    inl_vars(e, v);
    static inl_arg args[INL_OPS + INL_SLOW];
    for (int k = 0; k < INL_OPS + INL_SLOW; ++k) {
        if (k == INL_OPS)
            atomic_store(&inl_slow_us, 100);
        args[k].index = k;
        inl_worker[k] = INL_NOT_RUN;
        ck_assert_int_eq(px_engine_push_sync(e, inl_fn, &args[k], CPU, NULL, 0, &v[k % 64], 1,
                                             PX_FN_NORMAL, 0, "inl"),
                         PX_OK);
        ck_assert_int_eq(px_engine_push_sync(e, alt_fn, NULL, CPU, NULL, 0, &v[(k + 32) % 64], 1,
                                             PX_FN_NORMAL, 0, "alt"),
                         PX_OK);
    }
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    atomic_store(&inl_slow_us, 0);
    ck_assert_int_gt(inl_on_pusher(INL_OPS / 2, INL_OPS), 0);
    ck_assert_int_eq(inl_on_pusher(INL_OPS + INL_SLOW - 200, INL_OPS + INL_SLOW), 0);
    inl_done(e, v);
}
END_TEST

START_TEST(test_inline_ns_rejects_malformed_values)
{
    static const char *bad[] = {"-1", "1000001", "12x", "", " 5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        setenv("PX_ENGINE_INLINE_NS", bad[i], 1);
        ck_assert_msg(px_initialize(NULL, NULL) == PX_EINVAL, "'%s' accepted", bad[i]);
    }
    unsetenv("PX_ENGINE_INLINE_NS");
}
END_TEST

/* The default per_device engine has two CPU workers on a machine with 2+ cores: two
 * independent ops that each wait for the other to start both finish. With one worker the
 * first would wait its whole 5 s budget alone. */
static atomic_int pair_started;
static int wait_for_partner(const px_run_context *rc, void *arg)
{
    (void)rc;
    atomic_int *met = arg;
    atomic_fetch_add(&pair_started, 1);
    for (int k = 0; k < 5000 && atomic_load(&pair_started) < 2; ++k)
        sleep_ms(1);
    if (atomic_load(&pair_started) >= 2)
        atomic_fetch_add(met, 1);
    return PX_OK;
}
START_TEST(test_the_default_per_device_engine_overlaps_independent_cpu_ops)
{
    if (getenv("PX_CPU_WORKER_NTHREADS") || sysconf(_SC_NPROCESSORS_ONLN) < 2)
        return;
    px_engine *e = px_engine_create(PX_ENGINE_PER_DEVICE, 0);
    ck_assert_ptr_nonnull(e);
    px_var *x = px_var_new(e), *y = px_var_new(e);
    atomic_int met = 0;
    atomic_store(&pair_started, 0);
    /* PX_ENGINE_INLINE_NS cannot move these to the pusher: they are never measured cheap. */
    ck_assert_int_eq(
        px_engine_push(e, &(px_op){.fn = wait_for_partner, .arg = &met, .writes = PX_VARS(x)}),
        PX_OK);
    ck_assert_int_eq(
        px_engine_push(e, &(px_op){.fn = wait_for_partner, .arg = &met, .writes = PX_VARS(y)}),
        PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(atomic_load(&met), 2);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* ---- the work-first throttle ----------------------------------------------------------- */

#define THR_VARS 8
#define THR_OPS  640
/* Per Var, the indices of the ops that ran on it, in run order (ops of one Var are serialized
 * by the engine, so each list has one writer at a time), and each op's rc->worker. */
static int thr_seq[THR_VARS][THR_OPS];
static int thr_len[THR_VARS];
static int thr_worker[THR_OPS];

typedef struct thr_arg {
    int index, var, status;
} thr_arg;

static int thr_fn(const px_run_context *rc, void *arg)
{
    const thr_arg *a = arg;
    thr_worker[a->index] = rc->worker;
    thr_seq[a->var][thr_len[a->var]++] = a->index;
    return a->status;
}

/* With inlining off and the only worker held by a gate op, ready ops queue on its lane until
 * more than 2 wait there; from then on the work-first throttle runs every op ready at push on
 * its pusher, taking the at-push path (push.c, push_throttled). An op that is not ready then
 * (its Var is held by a queued op, or it reads the gate's Var) becomes an ordinary op and runs
 * later on the worker, after its predecessors; a throttled op that fails marks its Var failed
 * and the ops after it on that Var are skipped. */
START_TEST(test_throttled_ops_run_on_the_pusher_in_var_order)
{
    if (kind_under_test() == PX_ENGINE_NAIVE)
        return; /* a gate op on the naive engine would block its own pusher */
    setenv("PX_ENGINE_INLINE_NS", "0", 1);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    unsetenv("PX_ENGINE_INLINE_NS");
    px_engine *e = px_engine_create(kind_under_test(), 1);
    ck_assert_ptr_nonnull(e);
    px_var *g = px_var_new(e), *v[THR_VARS];
    for (int i = 0; i < THR_VARS; ++i)
        v[i] = px_var_new(e);
    memset(thr_len, 0, sizeof thr_len);
    atomic_store(&gate_open, 0);
    atomic_store(&gate_started, 0);
    ck_assert_int_eq(
        px_engine_push_sync(e, gate_fn, NULL, CPU, NULL, 0, &g, 1, PX_FN_NORMAL, 0, "gate"), PX_OK);
    while (!atomic_load(&gate_started))
        sleep_ms(1);
    static thr_arg args[THR_OPS];
    for (int k = 0; k < THR_OPS; ++k) {
        int var = k % THR_VARS;
        /* Var 7's first op fails; op 166, on Var 6, also reads the gate's Var. */
        args[k] = (thr_arg){k, var, k == 7 ? PX_EUSER : PX_OK};
        thr_worker[k] = INL_NOT_RUN;
        ck_assert_int_eq(px_engine_push_sync(e, thr_fn, &args[k], CPU, &g, k == 166, &v[var], 1,
                                             PX_FN_NORMAL, 0, "thr"),
                         PX_OK);
    }
    /* Ops 0-2 wait on the lane and hold Vars 0-2; every later op of Vars 3-5 was ready at push
     * and ran there, before the gate opened. */
    for (int k = 0; k < THR_OPS; ++k) {
        int var = k % THR_VARS;
        if (var >= 3 && var <= 5)
            ck_assert_msg(thr_worker[k] == -1, "op %d (Var %d) ran on %d, not its pusher", k, var,
                          thr_worker[k]);
        if (k < 3 || (var == 6 && k >= 166))
            ck_assert_int_eq(thr_worker[k], INL_NOT_RUN);
    }
    ck_assert_int_eq(thr_len[7], 1); /* the failed op; the rest of Var 7 skipped */
    atomic_store(&gate_open, 1);
    ck_assert_int_eq(px_engine_wait_for_var(e, v[7]), PX_EUSER);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_EUSER);
    ck_assert_int_eq(thr_len[7], 1);
    for (int var = 0; var < THR_VARS - 1; ++var) {
        ck_assert_int_eq(thr_len[var], THR_OPS / THR_VARS);
        for (int i = 0; i < thr_len[var]; ++i)
            ck_assert_int_eq(thr_seq[var][i], var + i * THR_VARS);
    }
    for (int k = 0; k < 3; ++k) /* handed off: run by the worker or a waiter (-2), not at push */
        ck_assert(thr_worker[k] == 0 || thr_worker[k] == -2);
    for (int i = 0; i < THR_VARS; ++i)
        ck_assert_int_eq(px_var_delete(e, v[i]), PX_OK);
    ck_assert_int_eq(px_var_delete(e, g), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

/* Where a PX_FN_ASYNC op runs when a finishing CPU op makes it ready: at once, on the thread
 * that finished it, before the ready ops queued in the lane (engine.h). One worker, held by a
 * gate; queued behind the gate: A (writes x) and C (independent). Not ready: S (a sync op
 * reading x, which takes the worker's continuation slot when A finishes) and B (an async op
 * reading x). Before, B went to the lane behind C, so a one-thread MPI rank posted its halo
 * sends after the interior rows queued beside them (bench/RESULTS.md, "Session 14"). */
enum { ORD_A, ORD_C, ORD_S, ORD_B, ORD_N };
static atomic_int ord_next;
static int ord_seq[ORD_N], ord_worker[ORD_N];

static int ord_fn(const px_run_context *rc, void *arg)
{
    const int k = (int)(intptr_t)arg;
    ord_worker[k] = rc->worker;
    ord_seq[k] = atomic_fetch_add(&ord_next, 1);
    return PX_OK;
}

static void ord_async_fn(const px_run_context *rc, px_on_complete *done, void *arg)
{
    px_on_complete_call(done, ord_fn(rc, arg));
}

START_TEST(test_async_op_made_ready_by_a_cpu_op_runs_before_queued_ops)
{
    if (kind_under_test() == PX_ENGINE_NAIVE)
        return;                     /* everything runs at push, in push order */
    px_engine *e = inl_engine("0"); /* one worker; A and C stay queued, not run at push */
    px_var *g = px_var_new(e), *x = px_var_new(e), *y = px_var_new(e), *z = px_var_new(e);
    atomic_store(&ord_next, 0);
    for (int k = 0; k < ORD_N; ++k)
        ord_seq[k] = -1;
    gate_close(e, g);
    ck_assert_int_eq(px_engine_push_sync(e, ord_fn, (void *)(intptr_t)ORD_A, CPU, NULL, 0, &x, 1,
                                         PX_FN_NORMAL, 0, "A"),
                     PX_OK);
    ck_assert_int_eq(px_engine_push_sync(e, ord_fn, (void *)(intptr_t)ORD_C, CPU, NULL, 0, &y, 1,
                                         PX_FN_NORMAL, 0, "C"),
                     PX_OK);
    ck_assert_int_eq(px_engine_push_sync(e, ord_fn, (void *)(intptr_t)ORD_S, CPU, &x, 1, &z, 1,
                                         PX_FN_NORMAL, 0, "S"),
                     PX_OK);
    ck_assert_int_eq(px_engine_push_async(e, ord_async_fn, (void *)(intptr_t)ORD_B, CPU, &x, 1,
                                          NULL, 0, PX_FN_ASYNC, 0, "B"),
                     PX_OK);
    ck_assert_int_eq(ord_seq[ORD_B], -1); /* not ready at push: A has not run */
    /* The worker runs everything: no waiter helps until all four have run. */
    gate_open_now();
    for (int waited = 0; atomic_load(&ord_next) < ORD_N && waited < 10000; ++waited)
        sleep_ms(1);
    ck_assert_int_eq(atomic_load(&ord_next), ORD_N);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(ord_seq[ORD_A], 0);
    ck_assert_msg(ord_seq[ORD_B] == 1,
                  "the async op ran %d-th (A %d, S %d, C %d): not at once after A finished",
                  ord_seq[ORD_B], ord_seq[ORD_A], ord_seq[ORD_S], ord_seq[ORD_C]);
    ck_assert_int_lt(ord_seq[ORD_S], ord_seq[ORD_C]); /* the continuation slot still runs next */
    /* A, S and C on the one worker; B on the same thread, as an inline run (worker -1). */
    ck_assert_int_ge(ord_worker[ORD_A], 0);
    ck_assert_int_eq(ord_worker[ORD_S], ord_worker[ORD_A]);
    ck_assert_int_eq(ord_worker[ORD_C], ord_worker[ORD_A]);
    ck_assert_int_eq(ord_worker[ORD_B], -1);
    px_var *all[4] = {g, x, y, z};
    for (int i = 0; i < 4; ++i)
        ck_assert_int_eq(px_var_delete(e, all[i]), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

static Suite *engine_lanes_suite(void)
{
    Suite *s = suite_create("engine_lanes");
    TCase *tc = tcase_create("engine");
    tcase_add_checked_fixture(tc, px_test_setup, px_test_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_steady_state_pushes_do_not_malloc);
    tcase_add_test(tc, test_the_default_per_device_engine_overlaps_independent_cpu_ops);
    suite_add_tcase(s, tc);
    TCase *life = tcase_create("lifecycle");
    tcase_set_timeout(life, 60);
    tcase_add_test(life, test_backpressure_blocks_pushers_at_max_pending);
    tcase_add_test(life, test_ops_measured_cheap_run_on_the_pusher);
    tcase_add_test(life, test_inline_ns_zero_keeps_cheap_ops_on_workers);
    tcase_add_test(life, test_op_that_becomes_expensive_goes_back_to_workers);
    tcase_add_test(life, test_cheap_op_not_ready_at_push_is_counted_and_waits);
    tcase_add_test(life, test_cheap_ops_with_several_vars_run_at_push_or_wait_their_turn);
    tcase_add_test(life, test_cheap_failing_op_at_push_reports_its_failure);
    tcase_add_test(life, test_reused_cheap_operator_runs_at_push_and_deletes_deferred);
    tcase_add_test(life, test_alternating_functions_are_each_sampled);
    tcase_add_test(life, test_inline_ns_rejects_malformed_values);
    tcase_add_test(life, test_throttled_ops_run_on_the_pusher_in_var_order);
    tcase_add_test(life, test_async_op_made_ready_by_a_cpu_op_runs_before_queued_ops);
    suite_add_tcase(s, life);
    return s;
}

int main(void)
{
    return px_test_run(engine_lanes_suite());
}
