/*
 * tests/check_instance_limits.c - execution-space instances at their limits and with bad input
 * (parex/instance.h): extreme weights, the most instances a space gives, unavailable spaces,
 * calls from inside kernels and engine ops, repeated partition/destroy cycles (ASan: nothing
 * kept), destroys with work in flight on the instance or beside it, refused pushes, handles
 * after px_finalize, and px_deep_copy_async's refusals. check_instance.c has the working cases,
 * check_instance_races.c the concurrent calls.
 * PX_TEST_SPACE picks serial or threads, PX_NUM_THREADS the thread count (tests/instance.cmake).
 *
 * Waits are bounded (WAIT_S) so that a hang fails the test instead of stalling it.
 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "core/registry.h"
#include "core/tools.h"
#include "instance_common.h"
#include "px_test.h"

/* The most instances one partition of the space gives (threads: one per rank). */
static int max_parts(void)
{
    return threads_space ? nranks : PX_PARTITION_MAX;
}

static void destroy_all(px_space **inst, int n)
{
    for (int i = 0; i < n; ++i)
        ck_assert_int_eq(px_space_instance_destroy(inst[i]), PX_OK);
}

/* ---- the split at its limits ---------------------------------------------------------- */

START_TEST(test_partition_writes_exactly_n_handles_and_nothing_past_them)
{
    int n = max_parts() < 3 ? max_parts() : 3;
    px_space *out[4];
    px_space *sentinel = (px_space *)out;
    for (int i = 0; i < 4; ++i)
        out[i] = sentinel;
    ck_assert_int_eq(px_space_partition(space, n, NULL, out), PX_OK);
    for (int i = 0; i < n; ++i)
        ck_assert_ptr_ne(out[i], sentinel);
    for (int i = n; i < 4; ++i)
        ck_assert_ptr_eq(out[i], sentinel);
    destroy_all(out, n);
}
END_TEST

START_TEST(test_extreme_weights_give_every_instance_at_least_one_rank)
{
    int n = max_parts() < 4 ? max_parts() : 4;
    px_space *inst[4];
    /* One weight dwarfs the others, and weights whose sum overflows an int. */
    const int skewed[4] = {INT_MAX, 1, 1, 1}, huge[4] = {INT_MAX, INT_MAX, INT_MAX, INT_MAX};
    const int *cases[2] = {skewed, huge};
    for (int c = 0; c < 2; ++c) {
        ck_assert_int_eq(px_space_partition(space, n, cases[c], inst), PX_OK);
        int total = 0;
        for (int i = 0; i < n; ++i) {
            int ci = px_space_concurrency(inst[i]);
            ck_assert_int_ge(ci, 1);
            total += ci;
            check_launch_on(inst[i], 1000);
        }
        if (threads_space) {
            ck_assert_int_eq(total, nranks);
            if (c == 0) /* the big weight takes every rank the others leave */
                ck_assert_int_eq(px_space_concurrency(inst[0]), nranks - (n - 1));
            else /* equal weights: halves, thirds, ... with the first ones the larger */
                ck_assert_int_eq(px_space_concurrency(inst[0]), (nranks + n - 1) / n);
        }
        destroy_all(inst, n);
    }
}
END_TEST

START_TEST(test_a_bad_weight_anywhere_is_einval_naming_it_and_leaves_out_untouched)
{
    int n = max_parts() < 3 ? max_parts() : 3;
    px_space *sentinel = (px_space *)&n, *out[3] = {sentinel, sentinel, sentinel};
    const int bad[3] = {0, -1, INT_MIN};
    for (int k = 0; k < 3; ++k) {
        int w[3] = {1, 1, 1};
        w[n - 1] = bad[k];
        px_test_log_clear();
        ck_assert_int_eq(px_space_partition(space, n, w, out), PX_EINVAL);
        char want[48];
        snprintf(want, sizeof want, "weights[%d] = %d", n - 1, bad[k]);
        ck_assert_msg(px_test_log_contains(want), "log: %s", px_test_log_text());
        for (int i = 0; i < 3; ++i)
            ck_assert_ptr_eq(out[i], sentinel);
    }
}
END_TEST

/* The most instances at once: on serial PX_PARTITION_MAX, more than the engine's 15 instance
 * lanes, so lanes are shared; a kernel op pushed on every one of them runs. */
START_TEST(test_the_most_instances_a_space_gives_each_run_launches_and_engine_ops)
{
    int n = max_parts();
    px_space **inst = calloc((size_t)n, sizeof *inst);
    ck_assert_int_eq(px_space_partition(space, n, NULL, inst), PX_OK);
    px_engine *e = px_engine_default();
    atomic_llong hits;
    atomic_init(&hits, 0);
    for (int i = 0; i < n; ++i) {
        ck_assert_int_eq(px_space_concurrency(inst[i]), 1);
        ck_assert_int_eq(px_engine_push_parallel_for_fn(e, inst[i], "count", px_range(0, 10),
                                                        count_indices, &hits, NULL, 0, NULL, 0),
                         PX_OK);
    }
    check_launch_on(inst[n - 1], 100);
    destroy_all(inst, n); /* each waits for its op */
    ck_assert_int_eq(atomic_load(&hits), 10LL * n);
    free(inst);
}
END_TEST

/* A space built in but not available here (cuda without a device): a clear PX_ENODEV. */
START_TEST(test_partition_and_copy_on_an_unavailable_space_are_enodev)
{
    px_space *off = NULL;
    for (int i = 0; i < pxi_registry_count(); ++i)
        if (!pxi_registry_at(i)->available)
            off = pxi_registry_at(i);
    if (!off)
        return; /* every space built in is available here */
    px_space *inst[1] = {NULL};
    px_test_log_clear();
    ck_assert_int_eq(px_space_partition(off, 1, NULL, inst), PX_ENODEV);
    ck_assert_ptr_null(inst[0]);
    ck_assert_msg(px_test_log_contains("not available"), "log: %s", px_test_log_text());
    char a[8] = "abc", b[8];
    ck_assert_int_eq(px_deep_copy_async(off, space, b, space, a, 4), PX_ENODEV);
    ck_assert_int_eq(px_deep_copy_async(space, off, b, space, a, 4), PX_ENODEV);
    ck_assert_int_eq(px_deep_copy_async(space, space, b, off, a, 4), PX_ENODEV);
}
END_TEST

/* Kokkos Tools carry an instance number in 17 bits, 0 meaning every instance and 1 the
 * space's own (parex/profiling.h): however many instances a long run makes, one of them never
 * takes those numbers. Serial instances are cheap, so 131,072 of them are made (once: in the
 * serial run). */
START_TEST(test_tools_instance_numbers_stay_clear_of_the_space_and_global_ids_past_2_17)
{
    if (threads_space)
        return;
    px_space *inst[PX_PARTITION_MAX];
    for (int batch = 0; batch < (1 << 17) / PX_PARTITION_MAX; ++batch) {
        ck_assert_int_eq(px_space_partition(space, PX_PARTITION_MAX, NULL, inst), PX_OK);
        for (int i = 0; i < PX_PARTITION_MAX; ++i) {
            uint32_t id = pxi_tools_device_id(inst[i]) & 0x1ffffu;
            if (id < 2)
                ck_abort_msg("instance %d of batch %d (instance_id %d): Tools instance %u", i,
                             batch, inst[i]->instance_id, id);
        }
        for (int i = PX_PARTITION_MAX - 1; i >= 0; --i) /* the list's head first: O(1) */
            ck_assert_int_eq(px_space_instance_destroy(inst[i]), PX_OK);
    }
}
END_TEST

/* ---- calls from inside kernels and engine ops ------------------------------------------------ */

typedef struct inside {
    px_space *victim; /* an instance the kernel tries to destroy */
    int part_rc, destroy_rc, copy_rc;
    char a[64], b[64];
} inside;

static void call_from_kernel(int64_t b, int64_t e, void *ctx)
{
    inside *in = ctx;
    if (b > 0 || e <= 0)
        return;
    px_space *out[1];
    in->part_rc = px_space_partition(space, 1, NULL, out);
    in->destroy_rc = px_space_instance_destroy(in->victim);
    /* A copy ordered on the instance the kernel runs on is done inline. */
    in->copy_rc = px_deep_copy_async(in->victim, space, in->b, space, in->a, sizeof in->a);
}

START_TEST(test_partition_and_destroy_inside_a_kernel_are_edeadlk_and_a_copy_runs_inline)
{
    px_space *inst[1];
    ck_assert_int_eq(px_space_partition(space, 1, NULL, inst), PX_OK);
    inside in = {.victim = inst[0], .a = "copied from inside a kernel"};
    px_test_log_clear();
    ck_assert_int_eq(px_parallel_for_fn(inst[0], "inside", px_range(0, 4), call_from_kernel, &in),
                     PX_OK);
    ck_assert_int_eq(in.part_rc, PX_EDEADLK);
    ck_assert_int_eq(in.destroy_rc, PX_EDEADLK);
    ck_assert_int_eq(in.copy_rc, PX_OK);
    ck_assert_str_eq(in.b, in.a);
    ck_assert(px_test_log_contains("px_space_partition: called from inside a kernel"));
    ck_assert(px_test_log_contains("px_space_instance_destroy: called from inside a kernel"));
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK); /* still alive */
}
END_TEST

static int destroy_in_op(const px_run_context *rc, void *arg)
{
    (void)rc;
    inside *in = arg;
    in->destroy_rc = px_space_instance_destroy(in->victim);
    /* Making instances in an op is allowed (not inside a kernel); they are destroyed after. */
    px_space *out[1] = {NULL};
    in->part_rc = px_space_partition(space, 1, NULL, out);
    in->victim = out[0];
    return PX_OK;
}

START_TEST(test_destroy_inside_an_engine_op_is_edeadlk_and_partition_works_there)
{
    px_space *inst[1];
    ck_assert_int_eq(px_space_partition(space, 1, NULL, inst), PX_OK);
    inside in = {.victim = inst[0]};
    px_engine *e = px_engine_default();
    px_test_log_clear();
    ck_assert_int_eq(px_engine_push_sync(e, destroy_in_op, &in, (px_context){PX_DEV_CPU, 0}, NULL,
                                         0, NULL, 0, PX_FN_NORMAL, 0, "destroy_in_op"),
                     PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(in.destroy_rc, PX_EDEADLK);
    ck_assert_msg(
        px_test_log_contains("px_space_instance_destroy: called from inside an engine op"),
        "log: %s", px_test_log_text());
    ck_assert_int_eq(in.part_rc, PX_OK);
    check_launch_on(in.victim, 1000);
    ck_assert_int_eq(px_space_instance_destroy(in.victim), PX_OK);
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
}
END_TEST

/* ---- lifetimes ------------------------------------------------------------------------------- */

/* Partition, launch on each, destroy in varying orders, many times over: every handle works,
 * nothing is kept (ASan's leak check), Tools instance numbers never repeat. */
START_TEST(test_repeated_partition_and_destroy_cycles_keep_nothing)
{
    int n = max_parts() < 3 ? max_parts() : 3;
    int last_id = 0;
    for (int cycle = 0; cycle < 40; ++cycle) {
        px_space *inst[3];
        int k = 1 + cycle % n;
        ck_assert_int_eq(px_space_partition(space, k, NULL, inst), PX_OK);
        for (int i = 0; i < k; ++i) {
            ck_assert_int_gt(inst[i]->instance_id, last_id);
            last_id = inst[i]->instance_id;
            check_launch_on(inst[i], 500);
        }
        for (int i = 0; i < k; ++i) /* odd cycles destroy the last first */
            ck_assert_int_eq(px_space_instance_destroy(inst[cycle & 1 ? k - 1 - i : i]), PX_OK);
    }
}
END_TEST

/* An op of the chain: appends its number to the log the Var orders. */
typedef struct chain {
    int order[32];
    atomic_int n;
} chain;

typedef struct link {
    chain *c;
    int k;
} link;

static void append(int64_t b, int64_t e, void *ctx)
{
    link *l = ctx;
    if (b > 0 || e <= 0)
        return;
    int at = atomic_fetch_add_explicit(&l->c->n, 1, memory_order_relaxed);
    if (at < 32)
        l->c->order[at] = l->k;
}

/* Destroy with a chain of ops queued behind a running one on the instance, from two engines:
 * destroy returns only after every op ran, in its Var order (no work lost). */
START_TEST(test_destroy_runs_every_op_queued_on_the_instance_in_var_order)
{
    px_space *inst[1];
    ck_assert_int_eq(px_space_partition(space, 1, NULL, inst), PX_OK);
    px_engine *e1 = px_engine_default(), *e2 = px_engine_create(PX_ENGINE_PER_DEVICE, 1);
    ck_assert_ptr_nonnull(e2);
    px_var *v = px_var_new(e1);
    gate g = {0};
    chain c = {.n = 0};
    link links[20];
    ck_assert_int_eq(px_engine_push_parallel_for_fn(e1, inst[0], "gate", px_range(0, 1),
                                                    wait_at_gate, &g, NULL, 0, &v, 1),
                     PX_OK);
    for (int k = 0; k < 20; ++k) {
        links[k] = (link){&c, k};
        ck_assert_int_eq(px_engine_push_parallel_for_fn(e1, inst[0], "append", px_range(0, 1),
                                                        append, &links[k], NULL, 0, &v, 1),
                         PX_OK);
    }
    atomic_llong hits;
    atomic_init(&hits, 0);
    ck_assert_int_eq(px_engine_push_parallel_for_fn(e2, inst[0], "count", px_range(0, 777),
                                                    count_indices, &hits, NULL, 0, NULL, 0),
                     PX_OK);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, open_gate_later, &g), 0);
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
    ck_assert(atomic_load(&g.met));
    ck_assert_int_eq(atomic_load(&c.n), 20);
    for (int k = 0; k < 20; ++k)
        ck_assert_int_eq(c.order[k], k);
    ck_assert_int_eq(atomic_load(&hits), 777);
    pthread_join(t, NULL);
    ck_assert_int_eq(px_engine_wait_for_all(e1), PX_OK);
    ck_assert_int_eq(px_var_delete(e1, v), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e2), PX_OK);
}
END_TEST

static void team_noop(const px_team *t, void *ctx)
{
    (void)t;
    (void)ctx;
}

/* Pushes the engine refuses on an instance leave no hold behind: destroy returns at once. */
START_TEST(test_pushes_refused_on_an_instance_leave_nothing_for_destroy_to_wait_for)
{
    px_space *inst[1];
    ck_assert_int_eq(px_space_partition(space, 1, NULL, inst), PX_OK);
    px_engine *e = px_engine_default(), *other = px_engine_create(PX_ENGINE_PER_DEVICE, 1);
    ck_assert_ptr_nonnull(other);
    px_var *foreign = px_var_new(other);
    atomic_llong hits;
    atomic_init(&hits, 0);
    /* A NULL Var list with a count, a Var of another engine, a team wider than the instance. */
    ck_assert_int_eq(px_engine_push_parallel_for_fn(e, inst[0], "x", px_range(0, 8), count_indices,
                                                    &hits, NULL, 1, NULL, 0),
                     PX_EFAULT);
    ck_assert_int_eq(px_engine_push_parallel_for_fn(e, inst[0], "x", px_range(0, 8), count_indices,
                                                    &hits, NULL, 0, &foreign, 1),
                     PX_EINVAL);
    int64_t sum = 0;
    ck_assert_int_eq(px_engine_push_parallel_reduce_fn(e, inst[0], "x", px_range(0, 8), NULL, NULL,
                                                       &px_sum_i64, &sum, NULL, 0, NULL, 0),
                     PX_EFAULT);
    int wide = px_space_concurrency(inst[0]) + 1;
    ck_assert_int_eq(px_engine_push_parallel_for_team_fn(e, inst[0], "x",
                                                         px_team_policy_make(1, wide, 0), team_noop,
                                                         NULL, NULL, 0, NULL, 0),
                     PX_EINVAL);
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
    ck_assert_int_eq(atomic_load(&hits), 0);
    ck_assert_int_eq(px_var_delete(other, foreign), PX_OK);
    ck_assert_int_eq(px_engine_destroy(other), PX_OK);
}
END_TEST

static int fail_op(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    return PX_EUSER;
}

/* Kernel ops on the instance that never run (their read Var failed) still let destroy
 * return: the engine cleans them up, releasing what they held. */
START_TEST(test_ops_skipped_by_a_failed_var_leave_nothing_for_destroy_to_wait_for)
{
    px_space *inst[1];
    ck_assert_int_eq(px_space_partition(space, 1, NULL, inst), PX_OK);
    px_engine *e = px_engine_default();
    px_var *v = px_var_new(e), *w = px_var_new(e);
    atomic_llong hits;
    atomic_init(&hits, 0);
    ck_assert_int_eq(px_engine_push_sync(e, fail_op, NULL, (px_context){PX_DEV_CPU, 0}, NULL, 0, &v,
                                         1, PX_FN_NORMAL, 0, "fails"),
                     PX_OK);
    for (int k = 0; k < 5; ++k)
        ck_assert_int_eq(px_engine_push_parallel_for_fn(e, inst[0], "skipped", px_range(0, 8),
                                                        count_indices, &hits, &v, 1, &w, 1),
                         PX_OK);
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
    ck_assert_int_eq(atomic_load(&hits), 0);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_EUSER);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
    ck_assert_int_eq(px_var_delete(e, w), PX_OK);
}
END_TEST

/* A graph that recorded a kernel op on the instance runs it there at each launch; destroy,
 * called after px_graph_destroy as the contract asks, waits for the graph's last launch. */
START_TEST(test_a_graph_recorded_on_an_instance_runs_there_and_destroy_follows_its_destroy)
{
    px_space *inst[1];
    ck_assert_int_eq(px_space_partition(space, 1, NULL, inst), PX_OK);
    px_engine *e = px_engine_default();
    px_var *v = px_var_new(e);
    atomic_llong hits;
    atomic_init(&hits, 0);
    ck_assert_int_eq(px_graph_begin(e), PX_OK);
    ck_assert_int_eq(px_engine_push_parallel_for_fn(e, inst[0], "recorded", px_range(0, 100),
                                                    count_indices, &hits, NULL, 0, &v, 1),
                     PX_OK);
    px_graph *g = NULL;
    ck_assert_int_eq(px_graph_end(e, &g), PX_OK);
    ck_assert_int_eq(atomic_load(&hits), 0);
    for (int k = 0; k < 3; ++k)
        ck_assert_int_eq(px_graph_launch(g), PX_OK);
    ck_assert_int_eq(px_graph_destroy(g), PX_OK); /* may still be running: destroy waits */
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
    ck_assert_int_eq(atomic_load(&hits), 300);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
}
END_TEST

/* px_fence(NULL) fences the live instances also when it cannot have memory to pin them (it then
 * fences them under the instance list's lock). */
START_TEST(test_a_global_fence_without_memory_still_fences_every_instance)
{
    int n = max_parts() < 2 ? max_parts() : 2;
    px_space *inst[2];
    ck_assert_int_eq(px_space_partition(space, n, NULL, inst), PX_OK);
    check_launch_on(inst[0], 1000);
    px_test_log_clear();
    pxi_alloc_fail_at(1);
    int rc = px_fence(NULL);
    pxi_alloc_fail_at(0);
    ck_assert_int_eq(rc, PX_OK);
    ck_assert_msg(px_test_log_contains("under the list lock"), "log: %s", px_test_log_text());
    check_launch_on(inst[n - 1], 1000);
    destroy_all(inst, n);
}
END_TEST

/* ---- px_deep_copy_async's refusals ----------------------------------------------------------- */

START_TEST(test_deep_copy_async_refuses_overlapping_ranges)
{
    px_space *inst[1];
    ck_assert_int_eq(px_space_partition(space, 1, NULL, inst), PX_OK);
    const size_t n = (size_t)1 << 17; /* 1 MiB: a threads instance copies it in parallel */
    double *a = px_malloc(inst[0], (n + 8) * sizeof *a);
    ck_assert_ptr_nonnull(a);
    for (size_t i = 0; i < n + 8; ++i)
        a[i] = (double)i;
    px_space *execs[2] = {inst[0], space};
    for (int x = 0; x < 2; ++x) {
        for (int dir = 0; dir < 2; ++dir) {
            /* dst 8 elements past src, then 8 elements before it; small and large. */
            for (int big = 0; big < 2; ++big) {
                size_t bytes = (big ? n : 16) * sizeof *a;
                px_test_log_clear();
                ck_assert_int_eq(px_deep_copy_async(execs[x], inst[0], dir ? a : a + 8, inst[0],
                                                    dir ? a + 8 : a, bytes),
                                 PX_EINVAL);
                ck_assert_msg(px_test_log_contains("overlap"), "log: %s", px_test_log_text());
            }
        }
    }
    for (size_t i = 0; i < n + 8; ++i) /* nothing was written */
        ck_assert(a[i] == (double)i);
    /* A copy onto itself moves nothing and is no error (Kokkos::deep_copy(a, a)); ranges that
     * only touch do not overlap. */
    ck_assert_int_eq(px_deep_copy_async(inst[0], inst[0], a, inst[0], a, n * sizeof *a), PX_OK);
    ck_assert_int_eq(px_deep_copy_async(inst[0], inst[0], a, inst[0], a + 8, 8 * sizeof *a), PX_OK);
    ck_assert_int_eq(px_fence(inst[0]), PX_OK);
    ck_assert(a[0] == 8.0 && a[7] == 15.0 && a[8] == 8.0);
    px_free(inst[0], a);
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
}
END_TEST

/* Views made on instances copy between instances and the space; bad shapes and NULLs get the
 * statuses of views on the space. */
START_TEST(test_view_deep_copy_between_instances_refuses_bad_shapes_with_a_status)
{
    int n = max_parts() < 2 ? max_parts() : 2;
    px_space *inst[2];
    ck_assert_int_eq(px_space_partition(space, n, NULL, inst), PX_OK);
    px_view a, b, c;
    ck_assert_int_eq(px_view_alloc(&a, inst[0], "a", sizeof(double), PX_LAYOUT_RIGHT, 1,
                                   (const int64_t[]){1000}),
                     PX_OK);
    ck_assert_int_eq(px_view_alloc(&b, inst[n - 1], "b", sizeof(double), PX_LAYOUT_RIGHT, 1,
                                   (const int64_t[]){1000}),
                     PX_OK);
    ck_assert_int_eq(
        px_view_alloc(&c, space, "c", sizeof(double), PX_LAYOUT_RIGHT, 1, (const int64_t[]){999}),
        PX_OK);
    for (int i = 0; i < 1000; ++i)
        ((double *)a.data)[i] = i + 0.25;
    ck_assert_int_eq(px_view_deep_copy(&b, &a), PX_OK);
    ck_assert(((double *)b.data)[999] == 999.25);
    px_test_log_clear();
    ck_assert_int_eq(px_view_deep_copy(&c, &b), PX_EINVAL);
    ck_assert_msg(px_test_log_contains("extent"), "log: %s", px_test_log_text());
    ck_assert_int_eq(px_view_deep_copy(NULL, &b), PX_EFAULT);
    ck_assert_int_eq(px_view_deep_copy(&b, NULL), PX_EFAULT);
    ck_assert_int_eq(px_view_deep_copy(&a, &a), PX_OK); /* identical views: nothing moves */
    ck_assert_int_eq(px_view_free(&c), PX_OK);
    ck_assert_int_eq(px_view_free(&b), PX_OK);
    ck_assert_int_eq(px_view_free(&a), PX_OK);
    destroy_all(inst, n);
}
END_TEST

/* ---- after px_finalize ---------------------------------------------------------------- */

START_TEST(test_destroy_after_finalize_is_enotinit_and_a_stale_handle_after_reinit_is_einval)
{
    px_test_setup();
    px_test_log_capture();
    px_space *inst[1];
    ck_assert_int_eq(px_space_partition(NULL, 1, NULL, inst), PX_OK);
    px_test_teardown(); /* frees the instance */
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_ENOTINIT);
    ck_assert_int_eq(px_fence(inst[0]), PX_ENOTINIT);
    px_test_setup();
    px_test_log_capture();
    px_test_log_clear();
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_EINVAL); /* never dereferenced */
    ck_assert(px_test_log_contains("not a live instance"));
    px_test_teardown();
}
END_TEST

/* A graph left alive with kernel ops recorded on an instance left alive: px_finalize releases the
 * graph's ops with its engine, then destroys the instance (it does not wait for the graph), and
 * the graph can still be destroyed after. */
START_TEST(test_finalize_with_a_graph_recorded_on_a_live_instance_returns)
{
    setup();
    px_space *inst[1];
    ck_assert_int_eq(px_space_partition(space, 1, NULL, inst), PX_OK);
    px_engine *e = px_engine_default();
    px_var *v = px_var_new(e);
    static atomic_llong hits; /* the graph's op may run until px_finalize drains it */
    atomic_init(&hits, 0);
    ck_assert_int_eq(px_graph_begin(e), PX_OK);
    ck_assert_int_eq(px_engine_push_parallel_for_fn(e, inst[0], "recorded", px_range(0, 10),
                                                    count_indices, &hits, NULL, 0, &v, 1),
                     PX_OK);
    px_graph *g = NULL;
    ck_assert_int_eq(px_graph_end(e, &g), PX_OK);
    ck_assert_int_eq(px_graph_launch(g), PX_OK);
    teardown(); /* px_finalize: PX_OK */
    ck_assert_int_eq(atomic_load(&hits), 10);
    ck_assert_int_eq(px_graph_destroy(g), PX_OK);
}
END_TEST

static Suite *instance_limits_suite(void)
{
    Suite *s = suite_create("instance_limits");
    TCase *tc = tcase_create("limits");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_partition_writes_exactly_n_handles_and_nothing_past_them);
    tcase_add_test(tc, test_extreme_weights_give_every_instance_at_least_one_rank);
    tcase_add_test(tc, test_a_bad_weight_anywhere_is_einval_naming_it_and_leaves_out_untouched);
    tcase_add_test(tc, test_the_most_instances_a_space_gives_each_run_launches_and_engine_ops);
    tcase_add_test(tc, test_partition_and_copy_on_an_unavailable_space_are_enodev);
    tcase_add_test(tc,
                   test_tools_instance_numbers_stay_clear_of_the_space_and_global_ids_past_2_17);
    tcase_add_test(tc,
                   test_partition_and_destroy_inside_a_kernel_are_edeadlk_and_a_copy_runs_inline);
    tcase_add_test(tc, test_destroy_inside_an_engine_op_is_edeadlk_and_partition_works_there);
    tcase_add_test(tc, test_repeated_partition_and_destroy_cycles_keep_nothing);
    tcase_add_test(tc, test_destroy_runs_every_op_queued_on_the_instance_in_var_order);
    tcase_add_test(tc, test_pushes_refused_on_an_instance_leave_nothing_for_destroy_to_wait_for);
    tcase_add_test(tc, test_ops_skipped_by_a_failed_var_leave_nothing_for_destroy_to_wait_for);
    tcase_add_test(tc,
                   test_a_graph_recorded_on_an_instance_runs_there_and_destroy_follows_its_destroy);
    tcase_add_test(tc, test_a_global_fence_without_memory_still_fences_every_instance);
    tcase_add_test(tc, test_deep_copy_async_refuses_overlapping_ranges);
    tcase_add_test(tc, test_view_deep_copy_between_instances_refuses_bad_shapes_with_a_status);
    suite_add_tcase(s, tc);
    TCase *down = tcase_create("finalized");
    tcase_set_timeout(down, 60);
    tcase_add_test(
        down, test_destroy_after_finalize_is_enotinit_and_a_stale_handle_after_reinit_is_einval);
    tcase_add_test(down, test_finalize_with_a_graph_recorded_on_a_live_instance_returns);
    suite_add_tcase(s, down);
    return s;
}

int main(void)
{
    return px_test_run(instance_limits_suite());
}
