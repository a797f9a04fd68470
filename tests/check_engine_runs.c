/* tests/check_engine_runs.c - the worker hand-off's runs (core/engine/var_queue.h,
 * pxi_var_run): a worker that finishes a write takes the single-Var writes queued behind it as
 * one run and runs them back to back. Everything a run changes must look like the same ops
 * granted one by one: write order, reads and multi-Var ops queued between them, ops of other
 * lanes and kinds (priority, async, another CPU device), failures, waits, deletes, claims
 * racing two pushers' appends, backpressure.
 *
 * Ops queue behind a gate op, so when the gate opens its worker
 * finds long queues to claim. The naive engine has no workers: it runs the same workloads
 * without the gate (nothing to claim, same results). PX_TEST_ENGINE_OPS scales the
 * randomized workload down for sanitizer runs. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_engine_common.h"

/* ---- a mixed workload on two Vars, against its serial order --------------------------- */

typedef enum { MX_WRITE_X, MX_READ_X, MX_WRITE_XY, MX_PRIO_X, MX_ASYNC_X, MX_DEV1_X } mx_kind;

typedef struct mx_state {
    uint64_t x, y;
} mx_state;

typedef struct mx_op {
    mx_state *s;
    mx_kind kind;
    int index;
    uint64_t seen; /* MX_READ_X: the x it read */
} mx_op;

static uint64_t mx_rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Order-sensitive updates: any two ops of x swapped change the result. */
static void mx_apply(mx_op *o)
{
    mx_state *s = o->s;
    switch (o->kind) {
    case MX_READ_X:
        o->seen = s->x;
        break;
    case MX_WRITE_XY:
        s->y = (s->y ^ s->x) * 0x100000001b3ull + (uint64_t)o->index;
        s->x = s->x * 3u + 1u;
        break;
    default:
        s->x = (s->x ^ (uint64_t)o->index) * 0x100000001b3ull + (uint64_t)o->kind;
        break;
    }
}

static int mx_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    mx_apply(arg);
    return PX_OK;
}

static void mx_async(const px_run_context *rc, px_on_complete *done, void *arg)
{
    (void)rc;
    mx_apply(arg);
    px_on_complete_call(done, PX_OK);
}

static mx_kind mx_pick(uint64_t *rng)
{
    unsigned r = (unsigned)(mx_rng(rng) % 100);
    if (r < 70)
        return MX_WRITE_X; /* mostly run material */
    if (r < 80)
        return MX_READ_X;
    if (r < 88)
        return MX_WRITE_XY;
    if (r < 92)
        return MX_PRIO_X;
    if (r < 96)
        return MX_ASYNC_X;
    return MX_DEV1_X;
}

static int mx_push(px_engine *e, mx_op *o, px_var *x, px_var *y)
{
    px_var *xy[2] = {x, y};
    switch (o->kind) {
    case MX_READ_X:
        return px_engine_push_sync(e, mx_fn, o, CPU, &x, 1, NULL, 0, PX_FN_NORMAL, 0, "rd");
    case MX_WRITE_XY:
        return px_engine_push_sync(e, mx_fn, o, CPU, NULL, 0, xy, 2, PX_FN_NORMAL, 0, "wxy");
    case MX_PRIO_X:
        return px_engine_push_sync(e, mx_fn, o, CPU, NULL, 0, &x, 1, PX_FN_CPU_PRIORITIZED,
                                   o->index % 7, "prio");
    case MX_ASYNC_X:
        return px_engine_push_async(e, mx_async, o, CPU, NULL, 0, &x, 1, PX_FN_NORMAL, 0, "as");
    case MX_DEV1_X: {
        px_context dev1 = {PX_DEV_CPU, 1};
        return px_engine_push_sync(e, mx_fn, o, dev1, NULL, 0, &x, 1, PX_FN_NORMAL, 0, "dev1");
    }
    default:
        return px_engine_push_sync(e, mx_fn, o, CPU, NULL, 0, &x, 1, PX_FN_NORMAL, 0, "wx");
    }
}

START_TEST(test_released_runs_equal_serial_order_with_reads_and_other_ops_between)
{
    int n = px_test_env_int("PX_TEST_ENGINE_OPS", 10000);
    mx_op *ops = calloc((size_t)n, sizeof *ops);
    uint64_t *ref_seen = calloc((size_t)n, sizeof *ref_seen);
    ck_assert_ptr_nonnull(ops);
    ck_assert_ptr_nonnull(ref_seen);
    uint64_t rng = 0x2545f4914f6cdd1dull;
    mx_state ref = {1, 2};
    for (int k = 0; k < n; ++k) {
        ops[k] = (mx_op){&ref, mx_pick(&rng), k, 0};
        mx_apply(&ops[k]);
        ref_seen[k] = ops[k].seen;
    }
    static const int workers[] = {1, 2, 3};
    for (int w = 0; w < 3; ++w) {
        mx_state got = {1, 2};
        for (int k = 0; k < n; ++k) {
            ops[k].s = &got;
            ops[k].seen = 0;
        }
        px_engine *e = px_engine_create(kind_under_test(), workers[w]);
        ck_assert_ptr_nonnull(e);
        px_var *x = px_var_new(e), *y = px_var_new(e);
        ck_assert_ptr_nonnull(x);
        ck_assert_ptr_nonnull(y);
        /* Several gated rounds: each opens on a queue the released worker claims runs of. */
        int bad = 0, rounds = 4;
        for (int r = 0; r < rounds; ++r) {
            gate_close(e, x);
            for (int k = r * n / rounds; k < (r + 1) * n / rounds; ++k)
                bad += mx_push(e, &ops[k], x, y) != PX_OK;
            gate_release();
        }
        ck_assert_int_eq(bad, 0);
        ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
        ck_assert_msg(got.x == ref.x && got.y == ref.y, "workers %d: x or y differs from serial",
                      workers[w]);
        int wrong = 0;
        for (int k = 0; k < n; ++k)
            wrong += ops[k].kind == MX_READ_X && ops[k].seen != ref_seen[k];
        ck_assert_msg(wrong == 0, "workers %d: %d reads saw another x than serially", workers[w],
                      wrong);
        ck_assert_int_eq(px_var_delete(e, x), PX_OK);
        ck_assert_int_eq(px_var_delete(e, y), PX_OK);
        ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    }
    free(ref_seen);
    free(ops);
}
END_TEST

/* ---- failures inside a run ---------------------------------------------------------------- */

#define FAIL_BEFORE 40
#define FAIL_AFTER  40

START_TEST(test_failure_inside_a_released_run_skips_later_ops_and_reaches_the_wait)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    ck_assert_ptr_nonnull(e);
    px_var *x = px_var_new(e), *y = px_var_new(e);
    atomic_store(&ran_count, 0);
    gate_close(e, x);
    int bad = 0;
    for (int k = 0; k < FAIL_BEFORE; ++k)
        bad += px_engine_push_sync(e, count_fn, NULL, CPU, NULL, 0, &x, 1, PX_FN_NORMAL, 0, "c") !=
               PX_OK;
    bad += px_engine_push_sync(e, fail_fn, (void *)(intptr_t)PX_EIO, CPU, NULL, 0, &x, 1,
                               PX_FN_NORMAL, 0, "fail") != PX_OK;
    for (int k = 0; k < FAIL_AFTER; ++k)
        bad += px_engine_push_sync(e, count_fn, NULL, CPU, NULL, 0, &x, 1, PX_FN_NORMAL, 0, "c") !=
               PX_OK;
    /* A multi-Var op behind the run: skipped too, and its write Var inherits the failure. */
    px_var *xy[2] = {x, y};
    bad += px_engine_push_sync(e, count_fn, NULL, CPU, NULL, 0, xy, 2, PX_FN_NORMAL, 0, "cxy") !=
           PX_OK;
    ck_assert_int_eq(bad, 0);
    gate_release();
    ck_assert_int_eq(px_engine_wait_for_var(e, x), PX_EIO);
    ck_assert_int_eq(px_engine_wait_for_var(e, y), PX_EIO);
    ck_assert_int_eq(atomic_load(&ran_count), FAIL_BEFORE);
    /* The wait cleared x's failure: the next run runs again. */
    gate_close(e, x);
    for (int k = 0; k < FAIL_AFTER; ++k)
        bad += px_engine_push_sync(e, count_fn, NULL, CPU, NULL, 0, &x, 1, PX_FN_NORMAL, 0, "c") !=
               PX_OK;
    gate_release();
    ck_assert_int_eq(bad, 0);
    ck_assert_int_eq(px_engine_wait_for_var(e, x), PX_OK);
    ck_assert_int_eq(atomic_load(&ran_count), FAIL_BEFORE + FAIL_AFTER);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_EIO);
    ck_assert_int_eq(px_var_delete(e, x), PX_OK);
    ck_assert_int_eq(px_var_delete(e, y), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* ---- waits and deletes queued among run material ------------------------------------------ */

START_TEST(test_wait_for_var_returns_after_every_op_queued_before_it)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    ck_assert_ptr_nonnull(e);
    px_var *x = px_var_new(e);
    int counter = 0, bad = 0, n = 500;
    gate_close(e, x);
    for (int k = 0; k < n; ++k)
        bad += px_engine_push_sync(e, incr_fn, &counter, CPU, NULL, 0, &x, 1, PX_FN_NORMAL, 0,
                                   "incr") != PX_OK;
    ck_assert_int_eq(bad, 0);
    gate_release();
    ck_assert_int_eq(px_engine_wait_for_var(e, x), PX_OK);
    /* Read before any other wait: the Var's wait alone must order the reader after the runs. */
    ck_assert_int_eq(counter, n);
    /* The delete queued behind run material retires the Var only after it. */
    gate_close(e, x);
    for (int k = 0; k < n; ++k)
        bad += px_engine_push_sync(e, incr_fn, &counter, CPU, NULL, 0, &x, 1, PX_FN_NORMAL, 0,
                                   "incr") != PX_OK;
    ck_assert_int_eq(px_var_delete(e, x), PX_OK);
    gate_release();
    ck_assert_int_eq(bad, 0);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(counter, 2 * n);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* ---- claims racing appends ------------------------------------------------------------- */

#define RACE_PUSHERS 2

typedef struct race_arg {
    px_engine *e;
    px_var *x;
    int id, n;
    int bad_push;
} race_arg;

/* Under x's write access: the last sequence number each pusher's ops saw, and how often one
 * ran out of its pusher's order. */
static int race_last[RACE_PUSHERS];
static atomic_int race_errors;

static int race_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    intptr_t v = (intptr_t)arg;
    int id = (int)(v % RACE_PUSHERS), seq = (int)(v / RACE_PUSHERS);
    if (race_last[id] != seq - 1)
        atomic_fetch_add(&race_errors, 1);
    race_last[id] = seq;
    return PX_OK;
}

static void *race_pusher(void *p)
{
    race_arg *a = p;
    for (int k = 0; k < a->n; ++k)
        a->bad_push +=
            px_engine_push_sync(a->e, race_fn, (void *)(intptr_t)(k * RACE_PUSHERS + a->id), CPU,
                                NULL, 0, &a->x, 1, PX_FN_NORMAL, 0, "race") != PX_OK;
    return NULL;
}

START_TEST(test_runs_claimed_while_two_pushers_append_keep_each_pushers_order)
{
    int n = px_test_env_int("PX_TEST_ENGINE_OPS", 10000) * 2;
    static const int workers[] = {1, 2, 3};
    for (int w = 0; w < 3; ++w) {
        px_engine *e = px_engine_create(kind_under_test(), workers[w]);
        ck_assert_ptr_nonnull(e);
        px_var *x = px_var_new(e);
        ck_assert_ptr_nonnull(x);
        atomic_store(&race_errors, 0);
        for (int i = 0; i < RACE_PUSHERS; ++i)
            race_last[i] = -1;
        race_arg args[RACE_PUSHERS];
        pthread_t t[RACE_PUSHERS];
        for (int i = 0; i < RACE_PUSHERS; ++i) {
            args[i] = (race_arg){e, x, i, n, 0};
            ck_assert_int_eq(pthread_create(&t[i], NULL, race_pusher, &args[i]), 0);
        }
        for (int i = 0; i < RACE_PUSHERS; ++i) {
            pthread_join(t[i], NULL);
            ck_assert_int_eq(args[i].bad_push, 0);
        }
        ck_assert_int_eq(px_engine_wait_for_var(e, x), PX_OK);
        ck_assert_int_eq(atomic_load(&race_errors), 0);
        for (int i = 0; i < RACE_PUSHERS; ++i)
            ck_assert_int_eq(race_last[i], n - 1);
        ck_assert_int_eq(px_var_delete(e, x), PX_OK);
        ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    }
}
END_TEST

/* ---- whole-queue runs and where a run ends ------------------------------------------------- */

/* Under x's write access: the next index expected, the ops out of order, and the worker each op
 * ran on. */
static int wq_next;
static int wq_errors;
static int *wq_worker;

static int wq_fn(const px_run_context *rc, void *arg)
{
    int k = (int)(intptr_t)arg;
    if (k != wq_next)
        ++wq_errors;
    wq_next = k + 1;
    wq_worker[k] = rc->worker;
    return PX_OK;
}

static int wq_gate_worker;
static int wq_gate_fn(const px_run_context *rc, void *arg)
{
    wq_gate_worker = rc->worker;
    return gate_fn(rc, arg);
}

START_TEST(test_queue_of_single_var_writes_longer_than_the_walk_bound_runs_in_order_on_one_worker)
{
    /* Far more than the 8 ops a run was once capped at: the gate's worker takes the whole
     * queue, up to the tail it found, as one run, in push order. */
    int n = 5000;
    wq_worker = calloc((size_t)n, sizeof *wq_worker);
    ck_assert_ptr_nonnull(wq_worker);
    px_engine *e = px_engine_create(kind_under_test(), 2);
    ck_assert_ptr_nonnull(e);
    px_var *x = px_var_new(e);
    ck_assert_ptr_nonnull(x);
    wq_next = 0;
    wq_errors = 0;
    wq_gate_worker = -2;
    int naive = kind_under_test() == PX_ENGINE_NAIVE;
    atomic_store(&gate_open, 0);
    atomic_store(&gate_started, 0);
    atomic_store(&gate_done, 0);
    if (!naive) {
        ck_assert_int_eq(
            px_engine_push_sync(e, wq_gate_fn, NULL, CPU, NULL, 0, &x, 1, PX_FN_NORMAL, 0, "gate"),
            PX_OK);
        while (!atomic_load(&gate_started))
            sleep_ms(1);
    }
    int bad = 0;
    for (int k = 0; k < n; ++k)
        bad += px_engine_push_sync(e, wq_fn, (void *)(intptr_t)k, CPU, NULL, 0, &x, 1, PX_FN_NORMAL,
                                   0, "wq") != PX_OK;
    ck_assert_int_eq(bad, 0);
    gate_release();
    ck_assert_int_eq(px_engine_wait_for_var(e, x), PX_OK);
    ck_assert_int_eq(wq_next, n);
    ck_assert_int_eq(wq_errors, 0);
    if (!naive) {
        /* Queued whole behind the gate and nothing pushed after it opened: one run on the gate's
         * worker, with no other worker involved. */
        int elsewhere = 0;
        for (int k = 0; k < n; ++k)
            elsewhere += wq_worker[k] != wq_gate_worker;
        ck_assert_msg(elsewhere == 0, "%d of %d ops ran off the gate's worker %d", elsewhere, n,
                      wq_gate_worker);
    }
    ck_assert_int_eq(px_var_delete(e, x), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    free(wq_worker);
}
END_TEST

/* Segments of single-Var writes split by what may not join a run (a read, a two-Var write, an
 * op of CPU device 1): a run ends at each, and the op after it may start a new one. Every
 * op still runs in push order, reads see the writes before them, and on the per-device engine no
 * device-1 op runs on the device-0 gate's worker. */
#define SEG_OPS  100
#define SEG_KIND 4 /* read, two-Var write, device 1 x SEG_OPS, then plain writes again */

static int seg_dev1_on_gate;
static int seg_fn_dev1(const px_run_context *rc, void *arg)
{
    if (rc->worker == wq_gate_worker)
        ++seg_dev1_on_gate;
    return wq_fn(rc, arg);
}

START_TEST(test_segments_split_by_reads_two_var_writes_and_another_device_keep_push_order)
{
    int per_round = SEG_KIND * (SEG_OPS + 1), rounds = 6, n = rounds * per_round;
    wq_worker = calloc((size_t)n, sizeof *wq_worker);
    ck_assert_ptr_nonnull(wq_worker);
    px_engine *e = px_engine_create(kind_under_test(), 2);
    ck_assert_ptr_nonnull(e);
    px_var *x = px_var_new(e), *y = px_var_new(e);
    ck_assert_ptr_nonnull(x);
    ck_assert_ptr_nonnull(y);
    wq_next = 0;
    wq_errors = 0;
    seg_dev1_on_gate = 0;
    wq_gate_worker = -2;
    int naive = kind_under_test() == PX_ENGINE_NAIVE;
    atomic_store(&gate_open, 0);
    atomic_store(&gate_started, 0);
    atomic_store(&gate_done, 0);
    if (!naive) {
        ck_assert_int_eq(
            px_engine_push_sync(e, wq_gate_fn, NULL, CPU, NULL, 0, &x, 1, PX_FN_NORMAL, 0, "gate"),
            PX_OK);
        while (!atomic_load(&gate_started))
            sleep_ms(1);
    }
    px_context dev1 = {PX_DEV_CPU, 1};
    px_var *xy[2] = {x, y};
    int bad = 0, k = 0;
    for (int r = 0; r < rounds; ++r) {
        for (int s = 0; s < SEG_KIND; ++s) {
            for (int i = 0; i < SEG_OPS; ++i, ++k)
                bad += px_engine_push_sync(e, wq_fn, (void *)(intptr_t)k, CPU, NULL, 0, &x, 1,
                                           PX_FN_NORMAL, 0, "wq") != PX_OK;
            void *arg = (void *)(intptr_t)k++;
            if (s == 0) /* a read: the op order check holds, as nothing writes x meanwhile */
                bad += px_engine_push_sync(e, wq_fn, arg, CPU, &x, 1, NULL, 0, PX_FN_NORMAL, 0,
                                           "rd") != PX_OK;
            else if (s == 1)
                bad += px_engine_push_sync(e, wq_fn, arg, CPU, NULL, 0, xy, 2, PX_FN_NORMAL, 0,
                                           "wxy") != PX_OK;
            else if (s == 2)
                bad += px_engine_push_sync(e, seg_fn_dev1, arg, dev1, NULL, 0, &x, 1, PX_FN_NORMAL,
                                           0, "dev1") != PX_OK;
            else
                bad += px_engine_push_sync(e, wq_fn, arg, CPU, NULL, 0, &x, 1, PX_FN_NORMAL, 0,
                                           "wq") != PX_OK;
        }
        if (r == rounds / 2) { /* half the rounds queued behind the gate, half pushed live */
            gate_release();
            ck_assert_int_eq(px_engine_wait_for_var(e, x), PX_OK);
        }
    }
    ck_assert_int_eq(bad, 0);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(wq_next, n);
    ck_assert_int_eq(wq_errors, 0);
    if (kind_under_test() == PX_ENGINE_PER_DEVICE)
        ck_assert_int_eq(seg_dev1_on_gate, 0);
    ck_assert_int_eq(px_var_delete(e, x), PX_OK);
    ck_assert_int_eq(px_var_delete(e, y), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    free(wq_worker);
}
END_TEST

/* ---- a handed-off op is never stranded ----------------------------------------------------------
 */

static atomic_int lone_flag;
static int lone_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    atomic_store(&lone_flag, 1);
    return PX_OK;
}

START_TEST(test_one_pushed_op_runs_while_its_pusher_waits_outside_the_engine)
{
    /* With inlining off every op is handed off: the pusher pushes one op, then waits on a flag
     * only that op sets, never calling the engine. Idle workers must take it (after sleeping). */
    if (kind_under_test() == PX_ENGINE_NAIVE)
        return; /* its pusher runs the op inside the push */
    setenv("PX_ENGINE_INLINE_NS", "0", 1);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    unsetenv("PX_ENGINE_INLINE_NS");
    px_engine *e = px_engine_create(kind_under_test(), 2);
    ck_assert_ptr_nonnull(e);
    px_var *x = px_var_new(e);
    for (int round = 0; round < 50; ++round) {
        atomic_store(&lone_flag, 0);
        if (round % 10 == 9)
            sleep_ms(20); /* let the workers go to sleep first */
        ck_assert_int_eq(
            px_engine_push_sync(e, lone_fn, NULL, CPU, NULL, 0, &x, 1, PX_FN_NORMAL, 0, "lone"),
            PX_OK);
        int ms = 0;
        while (!atomic_load(&lone_flag) && ms < 10000) {
            sleep_ms(1);
            ++ms;
        }
        ck_assert_msg(atomic_load(&lone_flag), "round %d: the op did not run in 10 s", round);
    }
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(px_var_delete(e, x), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

/* ---- backpressure -------------------------------------------------------------------------- */

static atomic_int bp_order_errors, bp_next;

static int bp_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    int want = (int)(intptr_t)arg;
    if (atomic_fetch_add(&bp_next, 1) != want)
        atomic_fetch_add(&bp_order_errors, 1);
    return PX_OK;
}

START_TEST(test_runs_under_max_pending_finish_every_op_in_push_order)
{
    if (kind_under_test() == PX_ENGINE_NAIVE)
        return; /* no workers, nothing queued: the lanes suite covers its backpressure */
    setenv("PX_ENGINE_MAX_PENDING", "8", 1);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    unsetenv("PX_ENGINE_MAX_PENDING");
    px_engine *e = px_engine_create(kind_under_test(), 2);
    ck_assert_ptr_nonnull(e);
    px_var *x = px_var_new(e);
    atomic_store(&bp_order_errors, 0);
    atomic_store(&bp_next, 0);
    int bad = 0, n = 3000;
    for (int k = 0; k < n; ++k)
        bad += px_engine_push_sync(e, bp_fn, (void *)(intptr_t)k, CPU, NULL, 0, &x, 1, PX_FN_NORMAL,
                                   0, "bp") != PX_OK;
    ck_assert_int_eq(bad, 0);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(atomic_load(&bp_next), n);
    ck_assert_int_eq(atomic_load(&bp_order_errors), 0);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

static Suite *engine_runs_suite(void)
{
    Suite *s = suite_create("engine_runs");
    TCase *tc = tcase_create("engine");
    tcase_add_checked_fixture(tc, px_test_setup, px_test_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_released_runs_equal_serial_order_with_reads_and_other_ops_between);
    tcase_add_test(tc, test_failure_inside_a_released_run_skips_later_ops_and_reaches_the_wait);
    tcase_add_test(tc, test_wait_for_var_returns_after_every_op_queued_before_it);
    tcase_add_test(tc, test_runs_claimed_while_two_pushers_append_keep_each_pushers_order);
    tcase_add_test(
        tc, test_queue_of_single_var_writes_longer_than_the_walk_bound_runs_in_order_on_one_worker);
    tcase_add_test(tc,
                   test_segments_split_by_reads_two_var_writes_and_another_device_keep_push_order);
    suite_add_tcase(s, tc);
    TCase *life = tcase_create("lifecycle");
    tcase_set_timeout(life, 60);
    tcase_add_test(life, test_runs_under_max_pending_finish_every_op_in_push_order);
    tcase_add_test(life, test_one_pushed_op_runs_while_its_pusher_waits_outside_the_engine);
    suite_add_tcase(s, life);
    return s;
}

int main(void)
{
    return px_test_run(engine_runs_suite());
}
