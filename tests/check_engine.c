/* tests/check_engine.c - the dependency engine: ordering (RandSumExpr-style randomized
 * workload against a serial run), failures, deferred deletion, reusable operators, priorities,
 * concurrent pushers, waits inside ops, bad handles, allocation failures, the no-malloc
 * steady state, backpressure, work-first inlining by measured cost, kernel ops and the Chrome
 * trace.
 *
 * The engine kind under test comes from PX_ENGINE (ctest registers one run per kind); engines
 * made here use that kind with 1, 2 and 4 workers. PX_TEST_ENGINE_OPS scales the randomized
 * workload down for sanitizer runs. */
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "px_test.h"

static const px_context CPU = {PX_DEV_CPU, 0};

static px_engine_kind kind_under_test(void)
{
    const char *s = getenv("PX_ENGINE");
    if (s && strcmp(s, "naive") == 0)
        return PX_ENGINE_NAIVE;
    if (s && strcmp(s, "pooled") == 0)
        return PX_ENGINE_POOLED;
    return PX_ENGINE_PER_DEVICE;
}

static void spin_us(int us)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if ((t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000 >= us)
            return;
    }
}

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static atomic_int gate_open, gate_started;
static int gate_fn(const px_run_context *rc, void *arg);

/* ---- RandSumExpr ------------------------------------------------------------------------ */

#define RS_VARS      100
#define RS_MAX_READS 19

typedef struct rs_op {
    uint64_t *data;
    int reads[RS_MAX_READS];
    int n_reads;
    int write;
    int sleep_us;
} rs_op;

static uint64_t rs_rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void rs_apply(const rs_op *o)
{
    uint64_t acc = 0x9e3779b97f4a7c15ull * (uint64_t)(o->write + 1);
    for (int i = 0; i < o->n_reads; ++i)
        acc = (acc ^ o->data[o->reads[i]]) * 0x100000001b3ull + (uint64_t)i;
    o->data[o->write] = acc;
}

static int rs_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    const rs_op *o = arg;
    if (o->sleep_us)
        spin_us(o->sleep_us);
    rs_apply(o);
    return PX_OK;
}

static void rs_build(rs_op *ops, int n, uint64_t *data, uint64_t seed)
{
    uint64_t s = seed;
    for (int k = 0; k < n; ++k) {
        rs_op *o = &ops[k];
        o->data = data;
        o->n_reads = 2 + (int)(rs_rng(&s) % 18);
        for (int i = 0; i < o->n_reads; ++i)
            o->reads[i] = (int)(rs_rng(&s) % RS_VARS); /* duplicates on purpose */
        o->write = (int)(rs_rng(&s) % RS_VARS);
        o->sleep_us = rs_rng(&s) % 16 == 0 ? (int)(rs_rng(&s) % 3) : 0;
    }
}

static int rs_num_ops(void)
{
    return px_test_env_int("PX_TEST_ENGINE_OPS", 10000);
}

START_TEST(test_randsum_equals_serial_bit_for_bit)
{
    int n = rs_num_ops();
    rs_op *ops = calloc((size_t)n, sizeof *ops);
    uint64_t ref[RS_VARS], got[RS_VARS];
    ck_assert_ptr_nonnull(ops);
    for (int v = 0; v < RS_VARS; ++v)
        ref[v] = (uint64_t)v * 7919u + 1u;
    memcpy(got, ref, sizeof ref);
    rs_build(ops, n, ref, 12345);
    for (int k = 0; k < n; ++k)
        rs_apply(&ops[k]);
    static const int workers[] = {1, 2, 4};
    int bad = 0;
    for (int w = 0; w < 3; ++w) {
        uint64_t data[RS_VARS];
        for (int v = 0; v < RS_VARS; ++v)
            data[v] = (uint64_t)v * 7919u + 1u;
        for (int k = 0; k < n; ++k)
            ops[k].data = data;
        px_engine *e = px_engine_create(kind_under_test(), workers[w]);
        ck_assert_ptr_nonnull(e);
        px_var *vars[RS_VARS];
        for (int v = 0; v < RS_VARS; ++v) {
            vars[v] = px_var_new(e);
            ck_assert_ptr_nonnull(vars[v]);
        }
        for (int k = 0; k < n; ++k) {
            px_var *r[RS_MAX_READS];
            for (int i = 0; i < ops[k].n_reads; ++i)
                r[i] = vars[ops[k].reads[i]];
            px_var *wv = vars[ops[k].write];
            /* No ck_assert per op: Check writes a record per assertion. */
            bad += px_engine_push_sync(e, rs_fn, &ops[k], CPU, r, (size_t)ops[k].n_reads, &wv, 1,
                                       PX_FN_NORMAL, 0, "randsum") != PX_OK;
        }
        ck_assert_int_eq(bad, 0);
        ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
        for (int v = 0; v < RS_VARS; ++v)
            ck_assert_int_eq(px_var_delete(e, vars[v]), PX_OK);
        ck_assert_int_eq(px_engine_destroy(e), PX_OK);
        memcpy(got, data, sizeof data);
        for (int v = 0; v < RS_VARS; ++v)
            ck_assert_msg(got[v] == ref[v], "workers %d: var %d differs", workers[w], v);
    }
    free(ops);
}
END_TEST

/* A Var both read and written by one op, or listed twice, counts once as a write: reading
 * it must see the previous writer's value and nothing may run beside it. */
static atomic_int dup_active, dup_overlaps;
static int dup_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    int *x = arg;
    /* no ck_assert on workers: Check is not thread-safe */
    if (atomic_fetch_add(&dup_active, 1) != 0)
        atomic_fetch_add(&dup_overlaps, 1);
    spin_us(5);
    ++*x;
    atomic_fetch_sub(&dup_active, 1);
    return PX_OK;
}

START_TEST(test_var_read_and_written_counts_once_as_write)
{
    px_engine *e = px_engine_create(kind_under_test(), 4);
    px_var *v = px_var_new(e);
    int x = 0;
    int bad = 0;
    for (int k = 0; k < 200; ++k) {
        px_var *r[3] = {v, v, v};
        px_var *w[2] = {v, v};
        bad += px_engine_push_sync(e, dup_fn, &x, CPU, r, 3, w, k % 2 ? 2 : 1, PX_FN_NORMAL, 0,
                                   "dup") != PX_OK;
    }
    ck_assert_int_eq(bad, 0);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
    ck_assert_int_eq(x, 200);
    ck_assert_int_eq(atomic_load(&dup_overlaps), 0);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* ---- failures --------------------------------------------------------------------------- */

static int fail_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    return (int)(intptr_t)arg;
}

static atomic_int ran_count;
static int count_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    atomic_fetch_add(&ran_count, 1);
    return PX_OK;
}

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
    ck_assert_int_eq(px_engine_wait_for_var(e, a), PX_EUSER - 2);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

typedef struct {
    px_on_complete *done;
    atomic_int ready;
} async_slot;

static void async_defer(const px_run_context *rc, px_on_complete *done, void *arg)
{
    (void)rc;
    async_slot *s = arg;
    s->done = done;
    atomic_store_explicit(&s->ready, 1, memory_order_release);
}

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

/* ---- deletion, operators ---------------------------------------------------------------- */

static atomic_int slow_done;
static int slow_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    sleep_ms(20);
    atomic_store(&slow_done, 1);
    return PX_OK;
}

START_TEST(test_var_delete_is_deferred_until_ops_finish)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *v = px_var_new(e);
    atomic_store(&slow_done, 0);
    ck_assert_int_eq(
        px_engine_push_sync(e, slow_fn, NULL, CPU, NULL, 0, &v, 1, PX_FN_NORMAL, 0, "slow"), PX_OK);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
    /* the handle is dead at once */
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, &v, 1, NULL, 0, PX_FN_NORMAL, 0, "late"),
        PX_EINVAL);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_EINVAL);
    ck_assert_int_eq(px_var_delete(e, v), PX_EINVAL);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(atomic_load(&slow_done), 1);
    /* the slot is reused by a new Var; the old handle stays dead */
    px_var *v2 = px_var_new(e);
    ck_assert_ptr_nonnull(v2);
    ck_assert_ptr_ne(v2, v);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_EINVAL);
    ck_assert_int_eq(px_engine_wait_for_var(e, v2), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

static int incr_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    ++*(int *)arg;
    return PX_OK;
}

START_TEST(test_reused_operator_runs_every_push_and_delete_is_deferred)
{
    px_engine *e = px_engine_create(kind_under_test(), 4);
    px_var *v = px_var_new(e);
    int x = 0;
    px_engine_op *op =
        px_engine_op_create_sync(e, incr_fn, &x, CPU, NULL, 0, &v, 1, PX_FN_NORMAL, "incr");
    ck_assert_ptr_nonnull(op);
    int bad = 0;
    for (int k = 0; k < 1000; ++k)
        bad += px_engine_op_push(e, op, 0) != PX_OK;
    ck_assert_int_eq(bad, 0);
    ck_assert_int_eq(px_engine_op_delete(e, op), PX_OK);
    ck_assert_int_eq(px_engine_op_push(e, op, 0), PX_EINVAL);
    ck_assert_int_eq(px_engine_op_delete(e, op), PX_EINVAL);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
    ck_assert_int_eq(x, 1000);
    /* an operator whose Var was deleted cannot be pushed */
    px_var *w = px_var_new(e);
    px_engine_op *op2 =
        px_engine_op_create_sync(e, incr_fn, &x, CPU, &w, 1, NULL, 0, PX_FN_NORMAL, "reader");
    ck_assert_ptr_nonnull(op2);
    ck_assert_int_eq(px_var_delete(e, w), PX_OK);
    ck_assert_int_eq(px_engine_op_push(e, op2, 0), PX_EINVAL);
    ck_assert_int_eq(px_engine_op_delete(e, op2), PX_OK);
    ck_assert_int_eq(px_engine_op_push(e, NULL, 0), PX_EFAULT);
    ck_assert_int_eq(px_engine_op_delete(e, NULL), PX_EFAULT);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* ---- priorities ------------------------------------------------------------------------- */

static int gate_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    atomic_store(&gate_started, 1);
    while (!atomic_load(&gate_open))
        sleep_ms(1);
    return PX_OK;
}

static int prio_log[16];
static atomic_int prio_n;
static int prio_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    prio_log[atomic_fetch_add(&prio_n, 1)] = (int)(intptr_t)arg;
    return PX_OK;
}

START_TEST(test_prioritized_ops_run_higher_first_equal_in_push_order)
{
    /* per_device with one CPU worker has one priority worker */
    px_engine *e = px_engine_create(PX_ENGINE_PER_DEVICE, 1);
    atomic_store(&gate_open, 0);
    atomic_store(&gate_started, 0);
    atomic_store(&prio_n, 0);
    ck_assert_int_eq(px_engine_push_sync(e, gate_fn, NULL, CPU, NULL, 0, NULL, 0,
                                         PX_FN_CPU_PRIORITIZED, 100, "gate"),
                     PX_OK);
    while (!atomic_load(&gate_started))
        sleep_ms(1);
    static const int prio[] = {1, 5, 3, 5, 2, 5};
    for (int k = 0; k < 6; ++k)
        ck_assert_int_eq(px_engine_push_sync(e, prio_fn, (void *)(intptr_t)(prio[k] * 10 + k), CPU,
                                             NULL, 0, NULL, 0, PX_FN_CPU_PRIORITIZED, prio[k],
                                             "prio"),
                         PX_OK);
    atomic_store(&gate_open, 1);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    static const int want[] = {51, 53, 55, 32, 24, 10};
    ck_assert_int_eq(atomic_load(&prio_n), 6);
    for (int k = 0; k < 6; ++k)
        ck_assert_int_eq(prio_log[k], want[k]);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* ---- concurrency -------------------------------------------------------------------------- */

typedef struct {
    long *ca, *cb;
} ab_arg;

typedef struct {
    px_engine *e;
    px_var *first, *second;
    ab_arg *ab;
} pusher_arg;

static int ab_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    ab_arg *a = arg;
    ++*a->ca;
    ++*a->cb;
    return PX_OK;
}

#define OPPOSITE_OPS 3000

static void *opposite_pusher(void *arg)
{
    pusher_arg *p = arg;
    for (int k = 0; k < OPPOSITE_OPS; ++k) {
        px_var *w[2] = {p->first, p->second};
        if (px_engine_push_sync(p->e, ab_fn, p->ab, CPU, NULL, 0, w, 2, PX_FN_NORMAL, 0, "ab") !=
            PX_OK)
            return (void *)1;
        if (k % 7 == 0) {
            px_var *r[2] = {p->second, p->first};
            if (px_engine_push_sync(p->e, count_fn, NULL, CPU, r, 2, NULL, 0, PX_FN_NORMAL, 0,
                                    "r") != PX_OK)
                return (void *)1;
        }
    }
    return NULL;
}

START_TEST(test_concurrent_pushers_in_opposite_var_order_never_deadlock)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *a = px_var_new(e), *b = px_var_new(e);
    long ca = 0, cb = 0;
    ab_arg ab = {&ca, &cb};
    pusher_arg p1 = {e, a, b, &ab}, p2 = {e, b, a, &ab};
    pthread_t t1, t2;
    pthread_create(&t1, NULL, opposite_pusher, &p1);
    pthread_create(&t2, NULL, opposite_pusher, &p2);
    void *r1, *r2;
    pthread_join(t1, &r1);
    pthread_join(t2, &r2);
    ck_assert_ptr_null(r1);
    ck_assert_ptr_null(r2);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(ca, 2 * OPPOSITE_OPS);
    ck_assert_int_eq(cb, 2 * OPPOSITE_OPS);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

typedef struct {
    px_engine *e;
    px_var *v;
    int st_var, st_all, st_destroy;
} inner_arg;

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

/* Ops may push more ops (never blocked by backpressure). */
static int nested_push(const px_run_context *rc, void *arg)
{
    (void)rc;
    inner_arg *a = arg;
    a->st_var = px_engine_push_sync(a->e, count_fn, NULL, CPU, &a->v, 1, NULL, 0, PX_FN_NORMAL, 0,
                                    "nested");
    return PX_OK;
}

START_TEST(test_push_from_inside_op)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *v = px_var_new(e), *w = px_var_new(e);
    inner_arg a = {e, v, -99, 0, 0};
    atomic_store(&ran_count, 0);
    ck_assert_int_eq(
        px_engine_push_sync(e, nested_push, &a, CPU, NULL, 0, &w, 1, PX_FN_NORMAL, 0, "outer"),
        PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, w), PX_OK);
    ck_assert_int_eq(a.st_var, PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
    ck_assert_int_eq(atomic_load(&ran_count), 1);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* ---- long chains released at once ---------------------------------------------------------- */

/* More ops than an 8 MiB stack could hold as nested calls (each level of a recursive
 * dispatch -> execute -> finish -> complete_write -> grant takes a few hundred bytes), and
 * below the default PX_ENGINE_MAX_PENDING of 65,536, so no pusher blocks. */
#define CHAIN_OPS 50000

typedef struct {
    int thread; /* which pusher, 0 or 1 */
    int k;      /* its push index */
} chain_arg;

static int chain_next[2];       /* written only by the op holding the chain's Var */
static atomic_int chain_errors; /* ops that ran out of push order */
static int chain_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    const chain_arg *a = arg;
    if (a->k != chain_next[a->thread])
        atomic_fetch_add(&chain_errors, 1);
    chain_next[a->thread] = a->k + 1;
    atomic_fetch_add(&ran_count, 1);
    return PX_OK;
}

/* Hold @v with an async op whose completion the caller makes later; returns once it runs. */
static void chain_hold(px_engine *e, px_var *v, async_slot *s)
{
    s->done = NULL;
    atomic_init(&s->ready, 0);
    ck_assert_int_eq(
        px_engine_push_async(e, async_defer, s, CPU, NULL, 0, &v, 1, PX_FN_NORMAL, 0, "hold"),
        PX_OK);
    while (!atomic_load_explicit(&s->ready, memory_order_acquire))
        sleep_ms(1);
}

typedef struct {
    px_engine *e;
    px_var *v;
    chain_arg *args;
    int n;
    int rc;
} chain_pusher;

static void *chain_push_all(void *arg)
{
    chain_pusher *p = arg;
    p->rc = PX_OK;
    for (int k = 0; k < p->n && p->rc == PX_OK; ++k)
        p->rc = px_engine_push_sync(p->e, chain_fn, &p->args[k], CPU, NULL, 0, &p->v, 1,
                                    PX_FN_NORMAL, 0, "chain");
    return NULL;
}

/* Push CHAIN_OPS writers of one held Var from @n_pushers threads (the calling thread when 1),
 * release the Var and check every op ran once, each pusher's ops in its push order. */
static void run_released_chain(px_engine *e, int n_pushers)
{
    chain_arg *args = malloc(CHAIN_OPS * sizeof *args);
    ck_assert_ptr_nonnull(args);
    px_var *v = px_var_new(e);
    async_slot s;
    chain_hold(e, v, &s);
    atomic_store(&ran_count, 0);
    atomic_store(&chain_errors, 0);
    chain_next[0] = chain_next[1] = 0;
    chain_pusher p[2];
    pthread_t t[2];
    int per = CHAIN_OPS / n_pushers;
    for (int i = 0; i < n_pushers; ++i) {
        for (int k = 0; k < per; ++k)
            args[i * per + k] = (chain_arg){i, k};
        p[i] = (chain_pusher){e, v, args + i * per, per, -1};
        if (n_pushers == 1)
            chain_push_all(&p[i]);
        else
            ck_assert_int_eq(pthread_create(&t[i], NULL, chain_push_all, &p[i]), 0);
    }
    for (int i = 0; n_pushers > 1 && i < n_pushers; ++i)
        pthread_join(t[i], NULL);
    for (int i = 0; i < n_pushers; ++i)
        ck_assert_int_eq(p[i].rc, PX_OK);
    ck_assert_int_eq(atomic_load(&ran_count), 0);
    px_on_complete_call(s.done, PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
    ck_assert_int_eq(atomic_load(&ran_count), per * n_pushers);
    ck_assert_int_eq(atomic_load(&chain_errors), 0);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    free(args);
}

START_TEST(test_released_chain_of_50000_ops_runs_without_deep_recursion)
{
    px_engine *e = px_engine_create(PX_ENGINE_NAIVE, 1);
    ck_assert_ptr_nonnull(e);
    run_released_chain(e, 1);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    e = px_engine_create(kind_under_test(), 2);
    ck_assert_ptr_nonnull(e);
    run_released_chain(e, 1);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

START_TEST(test_released_chain_on_naive_default_engine_with_two_pushers)
{
    const char *old = getenv("PX_ENGINE");
    char *saved = old ? strdup(old) : NULL;
    setenv("PX_ENGINE", "naive", 1);
    int rc = px_initialize(NULL, NULL);
    if (saved)
        setenv("PX_ENGINE", saved, 1);
    else
        unsetenv("PX_ENGINE");
    free(saved);
    ck_assert_int_eq(rc, PX_OK);
    px_engine *e = px_engine_default();
    ck_assert_ptr_nonnull(e);
    run_released_chain(e, 2);
    ck_assert_int_eq(px_finalize(), PX_OK);
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

/* ---- kernels as ops ----------------------------------------------------------------------- */

static void fill_fn(int64_t b, int64_t e, void *ctx)
{
    double *x = ctx;
    for (int64_t i = b; i < e; ++i)
        x[i] = (double)i;
}

static void sum_fn(int64_t b, int64_t e, void *ctx, void *acc)
{
    const double *x = ctx;
    double s = *(double *)acc;
    for (int64_t i = b; i < e; ++i)
        s += x[i];
    *(double *)acc = s;
}

static void scan_fn(int64_t b, int64_t e, void *ctx, void *partial, int final_pass)
{
    double *x = ctx;
    double p = *(double *)partial;
    for (int64_t i = b; i < e; ++i) {
        double v = x[i];
        if (final_pass)
            x[i] = p;
        p += v;
    }
    *(double *)partial = p;
}

typedef struct {
    double *x;
    double a;
} scale_args;

PX_FOR(scale_kernel, scale_args, i, a)
{
    a->x[i] *= a->a;
}

START_TEST(test_kernel_ops_ordered_by_vars)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *vx = px_var_new(e), *vs = px_var_new(e);
    enum { N = 10000 };
    double *x = calloc(N, sizeof *x);
    double sum = -1, total = -1;
    px_space *s = px_default_space();
    ck_assert_int_eq(
        px_engine_push_parallel_for_fn(e, s, "fill", px_range(0, N), fill_fn, x, NULL, 0, &vx, 1),
        PX_OK);
    scale_args sa = {x, 2.0};
    ck_assert_int_eq(px_engine_push_parallel_for(e, s, NULL, px_range(0, N), &scale_kernel, &sa,
                                                 sizeof sa, NULL, 0, &vx, 1),
                     PX_OK);
    sa.a = 1000.0; /* copied at push: must not matter */
    ck_assert_int_eq(px_engine_push_parallel_reduce_fn(e, s, "sum", px_range(0, N), sum_fn, x,
                                                       &px_sum_f64, &sum, &vx, 1, &vs, 1),
                     PX_OK);
    ck_assert_int_eq(px_engine_push_parallel_scan_fn(e, s, "scan", px_range(0, N), scan_fn, x,
                                                     &px_sum_f64, &total, &vs, 1, &vx, 1),
                     PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, vx), PX_OK);
    double want = (double)N * (N - 1); /* 2 * sum(i) */
    ck_assert(sum == want);
    ck_assert(total == want);
    ck_assert(x[0] == 0.0 && x[1] == 0.0 && x[2] == 2.0 && x[3] == 6.0);
    /* bad launches are refused at push */
    px_range_policy bad = px_range(5, 1);
    ck_assert_int_eq(px_engine_push_parallel_for_fn(e, s, "bad", bad, fill_fn, x, NULL, 0, &vx, 1),
                     PX_EINVAL);
    ck_assert_int_eq(
        px_engine_push_parallel_for_fn(e, s, "bad", px_range(0, 1), NULL, x, NULL, 0, &vx, 1),
        PX_EFAULT);
    ck_assert_int_eq(px_engine_push_parallel_for(e, s, "bad", px_range(0, 1), &scale_kernel, &sa, 3,
                                                 NULL, 0, &vx, 1),
                     PX_EINVAL);
    ck_assert_int_eq(px_engine_push_parallel_reduce_fn(e, s, "bad", px_range(0, 1), sum_fn, x,
                                                       &px_sum_f64, NULL, NULL, 0, &vs, 1),
                     PX_EFAULT);
    ck_assert_int_eq(px_engine_push_parallel_for(e, s, "bad", px_range(0, 1), NULL, &sa, sizeof sa,
                                                 NULL, 0, &vx, 1),
                     PX_EFAULT);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    free(x);
}
END_TEST

/* ---- trace -------------------------------------------------------------------------------- */

/* The trace must satisfy Perfetto's JSON importer (google/perfetto, importers/json/ and
 * importers/common/slice_tracker.cc), which is stricter than jansson; core/trace.c cites
 * each rule where it writes the field. check_trace_file checks them all. */

static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    ck_assert_int_ge(n, 0);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return s;
}

/* Byte-level rules, which a conforming parser does not check: the file is an object with
 * nothing after its closing brace (the tokenizer fails on data after the end); strings hold no
 * raw control character, DEL included (it fails on iscntrl), and only short escapes (older
 * releases fail on \uXXXX); no "displayTimeUnit" (older releases took "ns" as the unit of ts). */
static void check_trace_bytes(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r'))
        ++i;
    ck_assert_msg(i < n && s[i] == '{', "the trace is not a JSON object");
    ck_assert_msg(n > 0 && s[n - 1] == '}', "bytes after the closing brace");
    int in_str = 0;
    for (; i < n; ++i) {
        unsigned char c = (unsigned char)s[i];
        if (!in_str) {
            in_str = c == '"';
            continue;
        }
        ck_assert_msg(c >= 0x20 && c != 0x7f, "raw byte 0x%02x in a string at offset %zu", c, i);
        if (c == '\\') {
            ++i;
            ck_assert_msg(i < n && s[i] && strchr("\"\\/bfnrt", s[i]),
                          "escape other than a short one at offset %zu", i - 1);
        } else if (c == '"') {
            in_str = 0;
        }
    }
    ck_assert(!in_str);
    ck_assert_ptr_null(strstr(s, "displayTimeUnit"));
}

/* Perfetto's reading of a ts or dur: (int64_t)(value * 1000.0), truncated. The writer adds half
 * a nanosecond so that truncating and rounding agree; check that margin. */
static int64_t perfetto_ns(json_t *v)
{
    ck_assert_msg(json_is_number(v), "ts or dur is not a number");
    double us = json_number_value(v);
    ck_assert(us >= 0);
    double x = us * 1000.0;
    int64_t ns = (int64_t)x;
    double frac = x - (double)ns;
    ck_assert_msg(frac > 0.25 && frac < 0.75, "%.6f us is not half a ns past a ns", us);
    return ns;
}

typedef struct tr_span {
    int64_t tid, ts, dur;
    size_t idx; /* position in the file */
} tr_span;

/* Perfetto sorts by ts; on a tie older releases keep file order, newer ones put the longer
 * complete event first. Both orders must nest. */
static int span_by_ts_then_file(const void *a, const void *b)
{
    const tr_span *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int span_by_ts_then_longer(const void *a, const void *b)
{
    const tr_span *x = a, *y = b;
    if (x->tid != y->tid || x->ts != y->ts)
        return span_by_ts_then_file(a, b);
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Replays Perfetto's slice stack per tid: an "X" event that starts inside an open one must end
 * inside it too, or Perfetto drops it (slice_drop_overlapping_complete_event). */
static void check_nesting(tr_span *sp, size_t n, int (*order)(const void *, const void *))
{
    qsort(sp, n, sizeof *sp, order);
    int64_t end[64];
    int depth = 0;
    for (size_t i = 0; i < n; ++i) {
        if (i > 0 && sp[i].tid != sp[i - 1].tid)
            depth = 0;
        while (depth > 0 && end[depth - 1] <= sp[i].ts)
            --depth;
        int64_t e = sp[i].ts + sp[i].dur;
        ck_assert_msg(depth == 0 || e <= end[depth - 1],
                      "tid %lld: span [%lld, %lld) ns overlaps its enclosing span ending at %lld",
                      (long long)sp[i].tid, (long long)sp[i].ts, (long long)e,
                      (long long)end[depth - 1]);
        ck_assert_int_lt(depth, 64);
        end[depth++] = e;
    }
}

static int is_uint32(json_t *v)
{
    return json_is_integer(v) && json_integer_value(v) >= 0 &&
           json_integer_value(v) <= (json_int_t)UINT32_MAX;
}

/* Check @path against the importer's rules; @names (NULL-terminated) must each name an "X"
 * event (after unescaping). Returns the number of tids with "X" events. */
static int check_trace_file(const char *path, int want_kernels, const char *const *names)
{
    size_t len;
    char *text = read_text(path, &len);
    check_trace_bytes(text, len);
    json_error_t err;
    json_t *root = json_loadb(text, len, 0, &err);
    free(text);
    ck_assert_msg(root != NULL, "%s: line %d: %s", path, err.line, err.text);
    ck_assert(json_is_object(root));
    json_t *evs = json_object_get(root, "traceEvents");
    ck_assert(json_is_array(evs));
    size_t n_evs = json_array_size(evs), n_sp = 0, n_named = 0;
    tr_span *sp = malloc((n_evs + 1) * sizeof *sp);
    int64_t *named = malloc((n_evs + 1) * sizeof *named);
    ck_assert(sp && named);
    size_t i;
    json_t *ev;
    int ops = 0, kernels = 0, waits = 0, process_names = 0;
    int found[16] = {0};
    json_array_foreach(evs, i, ev)
    {
        ck_assert(json_is_object(ev));
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        const char *name = json_string_value(json_object_get(ev, "name"));
        ck_assert_ptr_nonnull(ph);
        ck_assert_ptr_nonnull(name);
        ck_assert(is_uint32(json_object_get(ev, "pid")));
        json_t *tid = json_object_get(ev, "tid");
        if (strcmp(ph, "M") == 0) {
            /* Metadata: Perfetto takes a track's name from args.name, a non-empty string. */
            const char *label =
                json_string_value(json_object_get(json_object_get(ev, "args"), "name"));
            ck_assert_ptr_nonnull(label);
            ck_assert(label[0] != '\0');
            if (strcmp(name, "process_name") == 0) {
                ++process_names;
            } else {
                ck_assert_str_eq(name, "thread_name");
                ck_assert(is_uint32(tid));
                named[n_named++] = json_integer_value(tid);
            }
            continue;
        }
        /* Complete events: Perfetto needs ts and dur (it skips an "X" without dur). */
        ck_assert_str_eq(ph, "X");
        ck_assert(is_uint32(tid));
        ck_assert(name[0] != '\0');
        sp[n_sp].tid = json_integer_value(tid);
        sp[n_sp].ts = perfetto_ns(json_object_get(ev, "ts"));
        sp[n_sp].dur = perfetto_ns(json_object_get(ev, "dur"));
        sp[n_sp].idx = i;
        ++n_sp;
        const char *cat = json_string_value(json_object_get(ev, "cat"));
        ck_assert_ptr_nonnull(cat);
        ops += strcmp(cat, "op") == 0;
        kernels += strcmp(cat, "kernel") == 0;
        waits += strcmp(cat, "wait") == 0;
        for (int k = 0; names && names[k]; ++k)
            found[k] |= strcmp(name, names[k]) == 0;
    }
    ck_assert_int_eq(process_names, 1);
    ck_assert_int_gt(ops, 0);
    ck_assert_int_gt(waits, 0);
    if (want_kernels)
        ck_assert_int_gt(kernels, 0);
    for (int k = 0; names && names[k]; ++k)
        ck_assert_msg(found[k], "no span named '%s'", names[k]);
    /* Every track with spans is named. */
    int tracks = 0;
    check_nesting(sp, n_sp, span_by_ts_then_file);
    for (size_t s = 0; s < n_sp; ++s) {
        if (s > 0 && sp[s].tid == sp[s - 1].tid)
            continue;
        ++tracks;
        int has_name = 0;
        for (size_t m = 0; m < n_named; ++m)
            has_name |= named[m] == sp[s].tid;
        ck_assert_msg(has_name, "tid %lld has spans but no thread_name", (long long)sp[s].tid);
    }
    check_nesting(sp, n_sp, span_by_ts_then_longer);
    free(sp);
    free(named);
    json_decref(root);
    return tracks;
}

/* Op names Perfetto must get back intact: a quote, a backslash, a newline and a tab (short
 * escapes), and control characters without one (written as '?'). */
static const char *const tricky_names[] = {"odd \"op\"", "even\\op", "q\"b\\n\nt\tx", "ctl??",
                                           NULL};

static void traced_work(void)
{
    px_engine *e = px_engine_default();
    px_var *v = px_var_new(e);
    double x[64];
    static const char *const pushed[] = {"odd \"op\"", "even\\op", "q\"b\\n\nt\tx", "ctl\x01\x7f"};
    for (int k = 0; k < 20; ++k)
        ck_assert_int_eq(px_engine_push_sync(e, count_fn, NULL, CPU, NULL, 0, &v, 1, PX_FN_NORMAL,
                                             0, pushed[k % 4]),
                         PX_OK);
    ck_assert_int_eq(px_engine_push_parallel_for_fn(e, NULL, "fill", px_range(0, 64), fill_fn, x,
                                                    NULL, 0, &v, 1),
                     PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
}

START_TEST(test_trace_api_writes_valid_chrome_json)
{
    char path[] = "/tmp/px_trace_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(px_trace_start(), PX_OK);
    traced_work();
    ck_assert_int_eq(px_trace_stop(), PX_OK);
    ck_assert_int_eq(px_trace_dump(path), PX_OK);
    check_trace_file(path, 0, tricky_names);
    unlink(path);
    ck_assert_int_eq(px_trace_dump(NULL), PX_EFAULT);
    ck_assert_int_eq(px_trace_dump(""), PX_EINVAL);
    ck_assert_int_eq(px_trace_dump("/nonexistent-dir/x/trace.json"), PX_EIO);
    ck_assert_int_eq(px_trace_clear(), PX_OK);
}
END_TEST

START_TEST(test_trace_dump_without_memory_is_enomem_and_leaves_no_file)
{
    char path[] = "/tmp/px_trace_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    unlink(path);
    ck_assert_int_eq(px_trace_start(), PX_OK);
    traced_work();
    ck_assert_int_eq(px_trace_stop(), PX_OK);
    px_test_log_capture();
    pxi_alloc_fail_at(1);
    int rc = px_trace_dump(path);
    pxi_alloc_fail_at(0);
    ck_assert_int_eq(rc, PX_ENOMEM);
    ck_assert(px_test_log_contains("px_trace_dump"));
    ck_assert_int_ne(access(path, F_OK), 0);
    ck_assert_int_eq(px_trace_dump(path), PX_OK);
    check_trace_file(path, 0, NULL);
    unlink(path);
    ck_assert_int_eq(px_trace_clear(), PX_OK);
}
END_TEST

/* Make @path (a mkstemp template) a fresh file and initialize with PX_PROFILE naming it. */
static void init_with_profile(char *path)
{
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    setenv("PX_PROFILE", path, 1);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
}

START_TEST(test_px_profile_writes_trace_at_finalize)
{
    char path[] = "/tmp/px_profile_XXXXXX";
    init_with_profile(path);
    traced_work();
    ck_assert_int_eq(px_finalize(), PX_OK);
    unsetenv("PX_PROFILE");
    check_trace_file(path, 1, tricky_names);
    unlink(path);
}
END_TEST

/* The tiled Cholesky DAG (POTRF, TRSM, SYRK, GEMM on a lower-triangular grid of tile Vars),
 * GEMM updates as kernel ops so kernel spans nest in op spans on the worker tracks. */
#define CHOL_NT 5

static int chol_tile_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    spin_us(20);
    return PX_OK;
}

/* Push one tile op reading *r (NULL: none) and writing *w, named "kind(i)" (j < 0) or
 * "kind(i,j)" in the next slot of names (the op keeps the pointer until it has run). */
static void push_tile_op(px_engine *e, px_var *r, px_var *w, char (*names)[32], int *n_names,
                         const char *kind, int i, int j)
{
    char *nm = names[(*n_names)++];
    if (j < 0)
        snprintf(nm, 32, "%s(%d)", kind, i);
    else
        snprintf(nm, 32, "%s(%d,%d)", kind, i, j);
    ck_assert_int_eq(px_engine_push_sync(e, chol_tile_fn, NULL, CPU, r ? &r : NULL, r ? 1 : 0, &w,
                                         1, PX_FN_NORMAL, 0, nm),
                     PX_OK);
}

START_TEST(test_trace_of_cholesky_dag_nests_and_names_every_track)
{
    char path[] = "/tmp/px_profile_XXXXXX";
    init_with_profile(path);
    px_engine *e = px_engine_create(kind_under_test(), 2);
    ck_assert_ptr_nonnull(e);
    px_var *a[CHOL_NT][CHOL_NT] = {{NULL}};
    static double tile[CHOL_NT][CHOL_NT][64];
    static char names[CHOL_NT * CHOL_NT * CHOL_NT][32];
    int n_names = 0;
    for (int i = 0; i < CHOL_NT; ++i)
        for (int j = 0; j <= i; ++j)
            a[i][j] = px_var_new(e);
    for (int k = 0; k < CHOL_NT; ++k) {
        push_tile_op(e, NULL, a[k][k], names, &n_names, "potrf", k, -1);
        for (int i = k + 1; i < CHOL_NT; ++i)
            push_tile_op(e, a[k][k], a[i][k], names, &n_names, "trsm", i, k);
        for (int i = k + 1; i < CHOL_NT; ++i) {
            push_tile_op(e, a[i][k], a[i][i], names, &n_names, "syrk", i, k);
            for (int j = k + 1; j < i; ++j) {
                char *nm = names[n_names++];
                snprintf(nm, sizeof names[0], "gemm(%d,%d,%d)", i, j, k);
                px_var *r[2] = {a[i][k], a[j][k]};
                ck_assert_int_eq(px_engine_push_parallel_for_fn(e, NULL, nm, px_range(0, 64),
                                                                fill_fn, tile[i][j], r, 2, &a[i][j],
                                                                1),
                                 PX_OK);
            }
        }
    }
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    for (int i = 0; i < CHOL_NT; ++i)
        for (int j = 0; j <= i; ++j)
            ck_assert_int_eq(px_var_delete(e, a[i][j]), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
    unsetenv("PX_PROFILE");
    const char *want[] = {"potrf(0)", "trsm(4,0)", "syrk(4,3)", "gemm(4,1,0)", "potrf(4)", NULL};
    ck_assert_int_ge(check_trace_file(path, 1, want), 1);
    unlink(path);
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
        inl_worker[k] = -2;
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
        ck_assert_msg(inl_worker[k] != -2, "op %d did not run", k);
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
    inl_push(e, v, args, 0, INL_OPS);
    int on_pusher = inl_on_pusher(INL_OPS / 2, INL_OPS);
    if (kind_under_test() == PX_ENGINE_NAIVE)
        ck_assert_int_eq(on_pusher, INL_OPS / 2); /* naive runs everything at push */
    else
        /* The first samples (one run in 64 is timed) teach the engine that inl_fn is cheap;
         * from then on a ready op runs at push. A preempted sample sends up to ~1,000 ops back
         * to the worker (its average decays 1/4 per sample), hence the loose bound; with the
         * rule off none runs at push (test_inline_ns_zero_keeps_cheap_ops_on_workers). */
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
    args[INL_OPS].index = INL_OPS;
    inl_worker[INL_OPS] = -2;
    ck_assert_int_eq(px_engine_push_sync(e, inl_fn, &args[INL_OPS], CPU, NULL, 0, &v[0], 1,
                                         PX_FN_NORMAL, 0, "inl-after-gate"),
                     PX_OK);
    sleep_ms(20);
    ck_assert_int_eq(inl_worker[INL_OPS], -2); /* still waiting for the gate */
    atomic_store(&gate_open, 1);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_ge(inl_worker[INL_OPS], 0); /* run by the worker that released v[0] */
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
        inl_worker[k] = -2;
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

static Suite *engine_suite(void)
{
    Suite *s = suite_create("engine");
    TCase *tc = tcase_create("engine");
    tcase_add_checked_fixture(tc, px_test_setup, px_test_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_randsum_equals_serial_bit_for_bit);
    tcase_add_test(tc, test_var_read_and_written_counts_once_as_write);
    tcase_add_test(tc, test_failure_marks_writes_and_skips_dependents);
    tcase_add_test(tc, test_wait_for_all_returns_first_failure);
    tcase_add_test(tc, test_async_op_completes_from_another_thread_with_failure);
    tcase_add_test(tc, test_async_ready_at_push_runs_on_pusher);
    tcase_add_test(tc, test_var_delete_is_deferred_until_ops_finish);
    tcase_add_test(tc, test_reused_operator_runs_every_push_and_delete_is_deferred);
    tcase_add_test(tc, test_prioritized_ops_run_higher_first_equal_in_push_order);
    tcase_add_test(tc, test_concurrent_pushers_in_opposite_var_order_never_deadlock);
    tcase_add_test(tc, test_wait_inside_op_is_edeadlk);
    tcase_add_test(tc, test_push_from_inside_op);
    tcase_add_test(tc, test_released_chain_of_50000_ops_runs_without_deep_recursion);
    tcase_add_test(tc, test_wait_inside_kernel_is_edeadlk);
    tcase_add_test(tc, test_finalize_inside_op_is_edeadlk_and_keeps_runtime);
    tcase_add_test(tc, test_bad_handles_and_arguments);
    tcase_add_test(tc, test_allocation_failures_give_enomem_cleanly);
    tcase_add_test(tc, test_steady_state_pushes_do_not_malloc);
    tcase_add_test(tc, test_kernel_ops_ordered_by_vars);
    tcase_add_test(tc, test_trace_api_writes_valid_chrome_json);
    tcase_add_test(tc, test_trace_dump_without_memory_is_enomem_and_leaves_no_file);
    suite_add_tcase(s, tc);
    TCase *life = tcase_create("lifecycle");
    tcase_set_timeout(life, 60);
    tcase_add_test(life, test_px_profile_writes_trace_at_finalize);
    tcase_add_test(life, test_trace_of_cholesky_dag_nests_and_names_every_track);
    tcase_add_test(life, test_finalize_waits_for_undestroyed_engine_and_warns);
    tcase_add_test(life, test_finalize_returns_pending_failure_of_default_engine);
    tcase_add_test(life, test_backpressure_blocks_pushers_at_max_pending);
    tcase_add_test(life, test_ops_measured_cheap_run_on_the_pusher);
    tcase_add_test(life, test_inline_ns_zero_keeps_cheap_ops_on_workers);
    tcase_add_test(life, test_op_that_becomes_expensive_goes_back_to_workers);
    tcase_add_test(life, test_cheap_op_not_ready_at_push_is_counted_and_waits);
    tcase_add_test(life, test_cheap_failing_op_at_push_reports_its_failure);
    tcase_add_test(life, test_reused_cheap_operator_runs_at_push_and_deletes_deferred);
    tcase_add_test(life, test_alternating_functions_are_each_sampled);
    tcase_add_test(life, test_inline_ns_rejects_malformed_values);
    tcase_add_test(life, test_released_chain_on_naive_default_engine_with_two_pushers);
    suite_add_tcase(s, life);
    return s;
}

int main(void)
{
    return px_test_run(engine_suite());
}
