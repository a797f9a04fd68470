/* tests/check_engine_queue.c - the dependency engine, the Var queues: ordering (RandSumExpr-style
 * randomized workload against a serial run), duplicate Vars, deferred deletion, priorities,
 * concurrent pushers, pushes from inside ops, and long chains released at once (drained in a loop,
 * not by recursion).
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

/* ---- deletion, operators ---------------------------------------------------------------- */

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
    /* The priority worker alone must run them: a thread in px_engine_wait_for_all helps with
     * the priority lane (calls.c, help-while-waiting), so waiting there while they are queued
     * makes two consumers, and one preempted between its pop and prio_fn's log lets the other
     * log a lower op first (seen as a rare failure under load). Wait for them outside the
     * engine, then for the engine. */
    while (atomic_load(&prio_n) < 6)
        sleep_ms(1);
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

static Suite *engine_queue_suite(void)
{
    Suite *s = suite_create("engine_queue");
    TCase *tc = tcase_create("engine");
    tcase_add_checked_fixture(tc, px_test_setup, px_test_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_randsum_equals_serial_bit_for_bit);
    tcase_add_test(tc, test_var_read_and_written_counts_once_as_write);
    tcase_add_test(tc, test_var_delete_is_deferred_until_ops_finish);
    tcase_add_test(tc, test_prioritized_ops_run_higher_first_equal_in_push_order);
    tcase_add_test(tc, test_concurrent_pushers_in_opposite_var_order_never_deadlock);
    tcase_add_test(tc, test_push_from_inside_op);
    tcase_add_test(tc, test_released_chain_of_50000_ops_runs_without_deep_recursion);
    suite_add_tcase(s, tc);
    TCase *life = tcase_create("lifecycle");
    tcase_set_timeout(life, 60);
    tcase_add_test(life, test_released_chain_on_naive_default_engine_with_two_pushers);
    suite_add_tcase(s, life);
    return s;
}

int main(void)
{
    return px_test_run(engine_queue_suite());
}
