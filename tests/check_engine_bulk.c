/* tests/check_engine_bulk.c - bulk execution at push (core/engine/bulk.h): one-Var sync writes
 * that join the unstarted bulk block at their Var's tail run exactly as the same ops pushed one
 * by one (PX_ENGINE_BULK=0): in push order, failures skipping the rest of the Var until a wait,
 * backpressure counting every op, waits and reads and multi-Var ops splitting the chain. Every
 * test pushes with inlining off (PX_ENGINE_INLINE_NS=0), so the ops are handed to workers, and
 * most queue them behind a gate op so that they gather into bulk blocks before any runs.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_engine_common.h"

/* Initialize the runtime with inlining off and bulk execution @bulk (0/1). */
static void init_with_bulk(int bulk)
{
    setenv("PX_ENGINE_INLINE_NS", "0", 1);
    setenv("PX_ENGINE_BULK", bulk ? "1" : "0", 1);
    int rc = px_initialize(NULL, NULL);
    unsetenv("PX_ENGINE_BULK");
    unsetenv("PX_ENGINE_INLINE_NS");
    ck_assert_int_eq(rc, PX_OK);
}

/* ---- order ------------------------------------------------------------------------------ */

typedef struct ch_op {
    uint64_t *x;
    int index;
    uint64_t seen; /* reads: the x they saw */
} ch_op;

/* Order-sensitive: any two writes swapped change x. */
static int ch_write(const px_run_context *rc, void *arg)
{
    (void)rc;
    ch_op *o = arg;
    *o->x = (*o->x ^ (uint64_t)o->index) * 0x100000001b3ull + 7u;
    return PX_OK;
}

static int ch_read(const px_run_context *rc, void *arg)
{
    (void)rc;
    ch_op *o = arg;
    o->seen = *o->x;
    return PX_OK;
}

/* What op @k of the mixed chain is: mostly one-Var writes (bulk material), some reads of x,
 * writes of x and y, writes of x on CPU device 1 and prioritized writes of x between them. */
static int ch_kind(int k)
{
    uint32_t h = (uint32_t)k * 2654435761u;
    h ^= h >> 15;
    int r = (int)(h % 100);
    return r < 75 ? 0 : r < 85 ? 1 : r < 90 ? 2 : r < 95 ? 3 : 4;
}

static int ch_push(px_engine *e, ch_op *o, int kind, px_var *x, px_var *y)
{
    px_var *xy[2] = {x, y};
    px_context dev1 = {PX_DEV_CPU, 1};
    switch (kind) {
    case 1:
        return px_engine_push_sync(e, ch_read, o, CPU, &x, 1, NULL, 0, PX_FN_NORMAL, 0, "rd");
    case 2:
        return px_engine_push_sync(e, ch_write, o, CPU, NULL, 0, xy, 2, PX_FN_NORMAL, 0, "wxy");
    case 3:
        return px_engine_push_sync(e, ch_write, o, dev1, NULL, 0, &x, 1, PX_FN_NORMAL, 0, "dev1");
    case 4:
        return px_engine_push_sync(e, ch_write, o, CPU, NULL, 0, &x, 1, PX_FN_CPU_PRIORITIZED,
                                   o->index % 5, "prio");
    default:
        return px_engine_push_sync(e, ch_write, o, CPU, NULL, 0, &x, 1, PX_FN_NORMAL, 0, "wx");
    }
}

/* Run the mixed chain of @n ops over @workers workers, queued behind a gate in @rounds rounds;
 * x's final value into *x_out and each read's value into @ops. */
static void ch_run(int workers, int n, int rounds, ch_op *ops, uint64_t *x_out)
{
    uint64_t x = 1;
    for (int k = 0; k < n; ++k)
        ops[k] = (ch_op){&x, k, 0};
    px_engine *e = px_engine_create(kind_under_test(), workers);
    ck_assert_ptr_nonnull(e);
    px_var *vx = px_var_new(e), *vy = px_var_new(e);
    ck_assert_ptr_nonnull(vx);
    ck_assert_ptr_nonnull(vy);
    int bad = 0;
    for (int r = 0; r < rounds; ++r) {
        gate_close(e, vx);
        for (int k = r * n / rounds; k < (r + 1) * n / rounds; ++k)
            bad += ch_push(e, &ops[k], ch_kind(k), vx, vy) != PX_OK;
        gate_release();
    }
    ck_assert_int_eq(bad, 0);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(px_var_delete(e, vx), PX_OK);
    ck_assert_int_eq(px_var_delete(e, vy), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    *x_out = x;
}

START_TEST(test_bulk_chain_with_reads_and_other_ops_between_equals_serial_order_bit_for_bit)
{
    int n = px_test_env_int("PX_TEST_ENGINE_OPS", 10000);
    ch_op *ref = calloc((size_t)n, sizeof *ref), *got = calloc((size_t)n, sizeof *got);
    ck_assert_ptr_nonnull(ref);
    ck_assert_ptr_nonnull(got);
    /* The serial order: every op applied as pushed. */
    uint64_t rx = 1;
    for (int k = 0; k < n; ++k) {
        ref[k] = (ch_op){&rx, k, 0};
        if (ch_kind(k) == 1)
            ch_read(NULL, &ref[k]);
        else
            ch_write(NULL, &ref[k]);
    }
    for (int bulk = 1; bulk >= 0; --bulk) {
        init_with_bulk(bulk);
        static const int workers[] = {1, 2, 3};
        for (int w = 0; w < 3; ++w) {
            uint64_t gx = 0;
            ch_run(workers[w], n, 4, got, &gx);
            ck_assert_msg(gx == rx, "bulk %d, workers %d: x differs from serial", bulk, workers[w]);
            int wrong = 0;
            for (int k = 0; k < n; ++k)
                wrong += ch_kind(k) == 1 && got[k].seen != ref[k].seen;
            ck_assert_msg(wrong == 0, "bulk %d, workers %d: %d reads saw another x", bulk,
                          workers[w], wrong);
        }
        ck_assert_int_eq(px_finalize(), PX_OK);
    }
    free(ref);
    free(got);
}
END_TEST

/* ---- two pushers on one Var ------------------------------------------------------------- */

#define TP_OPS 3000
static int tp_last[2];
static atomic_int tp_errors;

static int tp_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    intptr_t v = (intptr_t)arg;
    int who = (int)(v >> 20), k = (int)(v & 0xfffff);
    if (k != tp_last[who] + 1) /* the Var serializes every op: plain ints are safe */
        atomic_fetch_add(&tp_errors, 1);
    tp_last[who] = k;
    return PX_OK;
}

typedef struct tp_arg {
    px_engine *e;
    px_var *v;
    int who;
} tp_arg;

static void *tp_pusher(void *p)
{
    tp_arg *a = p;
    for (int k = 0; k < TP_OPS; ++k) {
        intptr_t arg = ((intptr_t)a->who << 20) | k;
        if (px_engine_push_sync(a->e, tp_fn, (void *)arg, CPU, NULL, 0, &a->v, 1, PX_FN_NORMAL, 0,
                                "tp") != PX_OK)
            atomic_fetch_add(&tp_errors, 1);
    }
    return NULL;
}

START_TEST(test_two_pushers_joining_bulk_blocks_of_one_var_keep_each_pushers_order)
{
    init_with_bulk(1);
    px_engine *e = px_engine_create(kind_under_test(), 2);
    ck_assert_ptr_nonnull(e);
    px_var *v = px_var_new(e);
    for (int round = 0; round < 4; ++round) {
        tp_last[0] = tp_last[1] = -1;
        atomic_store(&tp_errors, 0);
        if (round % 2 == 0)
            gate_close(e, v);
        pthread_t t[2];
        tp_arg a[2] = {{e, v, 0}, {e, v, 1}};
        for (int i = 0; i < 2; ++i)
            ck_assert_int_eq(pthread_create(&t[i], NULL, tp_pusher, &a[i]), 0);
        for (int i = 0; i < 2; ++i)
            pthread_join(t[i], NULL);
        gate_release();
        ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
        ck_assert_int_eq(atomic_load(&tp_errors), 0);
        ck_assert_int_eq(tp_last[0], TP_OPS - 1);
        ck_assert_int_eq(tp_last[1], TP_OPS - 1);
    }
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

/* ---- failures --------------------------------------------------------------------------- */

static atomic_int fb_ran_after;

static int fb_after_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    atomic_fetch_add(&fb_ran_after, 1);
    return PX_OK;
}

START_TEST(test_failure_inside_a_bulk_block_skips_its_later_ops_until_the_wait_reports_it)
{
    init_with_bulk(1);
    px_engine *e = px_engine_create(kind_under_test(), 2);
    ck_assert_ptr_nonnull(e);
    px_var *v = px_var_new(e);
    for (int round = 0; round < 3; ++round) {
        atomic_store(&ran_count, 0);
        atomic_store(&fb_ran_after, 0);
        gate_close(e, v);
        for (int k = 0; k < 40; ++k)
            ck_assert_int_eq(px_engine_push_sync(e, count_fn, NULL, CPU, NULL, 0, &v, 1,
                                                 PX_FN_NORMAL, 0, "before"),
                             PX_OK);
        ck_assert_int_eq(px_engine_push_sync(e, fail_fn, (void *)(intptr_t)PX_EIO, CPU, NULL, 0, &v,
                                             1, PX_FN_NORMAL, 0, "fail"),
                         PX_OK);
        for (int k = 0; k < 40; ++k)
            ck_assert_int_eq(px_engine_push_sync(e, fb_after_fn, NULL, CPU, NULL, 0, &v, 1,
                                                 PX_FN_NORMAL, 0, "after"),
                             PX_OK);
        gate_open_now(); /* the wait below returns after the gate's op */
        ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_EIO);
        ck_assert_int_eq(atomic_load(&ran_count), 40);
        ck_assert_int_eq(atomic_load(&fb_ran_after), 0);
        /* The wait cleared the Var: the next chain runs whole. */
        for (int k = 0; k < 30; ++k)
            ck_assert_int_eq(px_engine_push_sync(e, fb_after_fn, NULL, CPU, NULL, 0, &v, 1,
                                                 PX_FN_NORMAL, 0, "again"),
                             PX_OK);
        ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
        ck_assert_int_eq(atomic_load(&fb_ran_after), 30);
    }
    /* The failure was the first since the last wait_for_all: it reports it once. */
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_EIO);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

/* ---- waits ------------------------------------------------------------------------------ */

static atomic_int wt_count;
static atomic_int wt_released; /* set once the waiter returned */
static atomic_int wt_early;    /* ops of the second batch that ran before the waiter returned */

static int wt_first_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    atomic_fetch_add(&wt_count, 1);
    return PX_OK;
}

static int wt_second_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    if (!atomic_load(&wt_released))
        atomic_fetch_add(&wt_early, 1); /* allowed: it was pushed after the wait's op */
    atomic_fetch_add(&wt_count, 1);
    return PX_OK;
}

START_TEST(test_wait_for_var_in_the_middle_of_a_bulk_chain_returns_after_exactly_its_ops)
{
    init_with_bulk(1);
    px_engine *e = px_engine_create(kind_under_test(), 2);
    ck_assert_ptr_nonnull(e);
    px_var *v = px_var_new(e);
    for (int round = 0; round < 20; ++round) {
        atomic_store(&wt_count, 0);
        atomic_store(&wt_released, 0);
        gate_close(e, v);
        for (int k = 0; k < 100; ++k)
            ck_assert_int_eq(px_engine_push_sync(e, wt_first_fn, NULL, CPU, NULL, 0, &v, 1,
                                                 PX_FN_NORMAL, 0, "first"),
                             PX_OK);
        gate_open_now();
        /* The wait's op goes behind the 100 ops: none of them may still be pending (or have
         * joined a later block) when it returns, and nothing else ran. */
        ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
        ck_assert_int_eq(atomic_load(&wt_count), 100);
        atomic_store(&wt_released, 1);
        /* The chain goes on after the wait, in a block of its own. */
        for (int k = 0; k < 100; ++k)
            ck_assert_int_eq(px_engine_push_sync(e, wt_second_fn, NULL, CPU, NULL, 0, &v, 1,
                                                 PX_FN_NORMAL, 0, "second"),
                             PX_OK);
        ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
        ck_assert_int_eq(atomic_load(&wt_count), 200);
    }
    ck_assert_int_eq(atomic_load(&wt_early), 0);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

/* ---- backpressure ----------------------------------------------------------------------- */

#define BP_MAX 8
static atomic_int bp_pushed, bp_next, bp_order_errors;

static int bp_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    if (atomic_fetch_add(&bp_next, 1) != (int)(intptr_t)arg)
        atomic_fetch_add(&bp_order_errors, 1);
    return PX_OK;
}

typedef struct bp_arg {
    px_engine *e;
    px_var *v;
    int n;
} bp_arg;

static void *bp_pusher(void *p)
{
    bp_arg *a = p;
    for (int k = 0; k < a->n; ++k) {
        if (px_engine_push_sync(a->e, bp_fn, (void *)(intptr_t)k, CPU, NULL, 0, &a->v, 1,
                                PX_FN_NORMAL, 0, "bp") != PX_OK)
            atomic_fetch_add(&bp_order_errors, 1);
        atomic_fetch_add(&bp_pushed, 1);
    }
    return NULL;
}

START_TEST(test_bulk_entries_count_against_max_pending_and_block_the_pusher_at_the_limit)
{
    if (kind_under_test() == PX_ENGINE_NAIVE)
        return; /* its pusher runs every op in the push: nothing queues */
    setenv("PX_ENGINE_MAX_PENDING", "8", 1);
    init_with_bulk(1);
    unsetenv("PX_ENGINE_MAX_PENDING");
    px_engine *e = px_engine_create(kind_under_test(), 2);
    ck_assert_ptr_nonnull(e);
    px_var *v = px_var_new(e);
    atomic_store(&bp_pushed, 0);
    atomic_store(&bp_next, 0);
    atomic_store(&bp_order_errors, 0);
    gate_close(e, v); /* holds one slot */
    bp_arg a = {e, v, 500};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, bp_pusher, &a), 0);
    sleep_ms(100);
    /* Every op joining a bulk block took a slot: with the gate's, at most BP_MAX are in flight,
     * so the pusher is blocked inside its push number BP_MAX. */
    int pushed = atomic_load(&bp_pushed);
    ck_assert_msg(pushed <= BP_MAX - 1, "%d ops pushed past a limit of %d with the gate held",
                  pushed, BP_MAX);
    ck_assert_int_eq(atomic_load(&bp_next), 0);
    gate_open_now();
    pthread_join(t, NULL);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(atomic_load(&bp_pushed), 500);
    ck_assert_int_eq(atomic_load(&bp_next), 500);
    ck_assert_int_eq(atomic_load(&bp_order_errors), 0);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

/* ---- trace spans ------------------------------------------------------------------------ */

#define TR_OPS 60
static char tr_names[TR_OPS][8];

/* Occurrences of @needle in @hay. */
static int count_in(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        ++n;
    return n;
}

START_TEST(test_every_op_of_a_bulk_block_has_its_own_trace_span_under_its_name)
{
    init_with_bulk(1);
    px_engine *e = px_engine_create(kind_under_test(), 2);
    ck_assert_ptr_nonnull(e);
    px_var *v = px_var_new(e);
    ck_assert_int_eq(px_trace_start(), PX_OK);
    gate_close(e, v);
    for (int k = 0; k < TR_OPS; ++k) {
        snprintf(tr_names[k], sizeof tr_names[k], "bk%03d", k);
        ck_assert_int_eq(px_engine_push_sync(e, count_fn, NULL, CPU, NULL, 0, &v, 1, PX_FN_NORMAL,
                                             0, tr_names[k]),
                         PX_OK);
    }
    gate_release();
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
    ck_assert_int_eq(px_trace_stop(), PX_OK);
    char path[] = "/tmp/px_bulk_trace_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(px_trace_dump(path), PX_OK);
    char *text = px_test_read_file(path, NULL);
    ck_assert_ptr_nonnull(text);
    unlink(path);
    for (int k = 0; k < TR_OPS; ++k) {
        char quoted[16];
        snprintf(quoted, sizeof quoted, "\"bk%03d\"", k);
        ck_assert_msg(count_in(text, quoted) == 1, "op %s has %d spans", tr_names[k],
                      count_in(text, quoted));
    }
    free(text);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

/* ---- the setting ------------------------------------------------------------------------ */

START_TEST(test_px_engine_bulk_other_than_a_boolean_fails_initialize)
{
    setenv("PX_ENGINE_BULK", "sometimes", 1);
    int rc = px_initialize(NULL, NULL);
    unsetenv("PX_ENGINE_BULK");
    ck_assert_int_eq(rc, PX_EINVAL);
}
END_TEST

static Suite *engine_bulk_suite(void)
{
    Suite *s = suite_create("engine_bulk");
    TCase *tc = tcase_create("bulk");
    tcase_set_timeout(tc, 120);
    tcase_add_test(
        tc, test_bulk_chain_with_reads_and_other_ops_between_equals_serial_order_bit_for_bit);
    tcase_add_test(tc, test_two_pushers_joining_bulk_blocks_of_one_var_keep_each_pushers_order);
    tcase_add_test(tc,
                   test_failure_inside_a_bulk_block_skips_its_later_ops_until_the_wait_reports_it);
    tcase_add_test(tc,
                   test_wait_for_var_in_the_middle_of_a_bulk_chain_returns_after_exactly_its_ops);
    tcase_add_test(tc,
                   test_bulk_entries_count_against_max_pending_and_block_the_pusher_at_the_limit);
    tcase_add_test(tc, test_every_op_of_a_bulk_block_has_its_own_trace_span_under_its_name);
    tcase_add_test(tc, test_px_engine_bulk_other_than_a_boolean_fails_initialize);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(engine_bulk_suite());
}
