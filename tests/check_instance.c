/*
 * tests/check_instance.c - execution-space instances (parex/instance.h): px_space_partition,
 * px_space_instance_destroy and px_deep_copy_async on a host space. PX_TEST_SPACE picks serial
 * or threads, PX_NUM_THREADS the thread count (tests/instance.cmake: 1, 2 and 4 ranks).
 *
 * Concurrency is shown without timing: a kernel on one instance waits for a flag that only a
 * kernel on the other instance sets. If the two did not run at the same time the first would
 * wait forever, so its wait is bounded (WAIT_S) and a timeout fails the test instead of
 * hanging it.
 */
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
#if PX_HAVE_THREADS
#include "spaces/threads/pool.h"
#endif

/* Two instances that can run at the same time: on threads the space needs two ranks. */
static int can_run_two(void)
{
    return !threads_space || nranks >= 2;
}

/* ---- the split ------------------------------------------------------------------------------- */

START_TEST(test_equal_weights_split_the_ranks_in_halves)
{
    if (!can_run_two())
        return;
    px_space *inst[2] = {NULL, NULL};
    ck_assert_int_eq(px_space_partition(space, 2, (const int[]){1, 1}, inst), PX_OK);
    int c0 = px_space_concurrency(inst[0]), c1 = px_space_concurrency(inst[1]);
    if (threads_space) {
        ck_assert_int_eq(c0 + c1, nranks);
        ck_assert_int_eq(c0, (nranks + 1) / 2);
        ck_assert_int_eq(c1, nranks / 2);
    } else {
        ck_assert_int_eq(c0, 1);
        ck_assert_int_eq(c1, 1);
    }
    ck_assert_ptr_ne(inst[0], inst[1]);
    ck_assert_ptr_ne(inst[0], space);
    ck_assert_str_eq(px_space_name(inst[0]), space_name);
    ck_assert_int_eq(px_space_host_accessible(inst[1]), 1);
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
    ck_assert_int_eq(px_space_instance_destroy(inst[1]), PX_OK);
    /* NULL weights are equal weights. */
    ck_assert_int_eq(px_space_partition(space, 2, NULL, inst), PX_OK);
    if (threads_space)
        ck_assert_int_eq(px_space_concurrency(inst[0]), (nranks + 1) / 2);
    ck_assert_int_eq(px_space_instance_destroy(inst[1]), PX_OK);
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
}
END_TEST

START_TEST(test_weights_3_1_give_three_quarters_and_one_quarter)
{
    if (!can_run_two())
        return;
    px_space *inst[2];
    ck_assert_int_eq(px_space_partition(space, 2, (const int[]){3, 1}, inst), PX_OK);
    int c0 = px_space_concurrency(inst[0]), c1 = px_space_concurrency(inst[1]);
    if (threads_space) {
        ck_assert_int_eq(c0 + c1, nranks);
        ck_assert_int_ge(c1, 1);
        if (nranks == 4) {
            ck_assert_int_eq(c0, 3);
            ck_assert_int_eq(c1, 1);
        }
        if (nranks == 2)
            ck_assert_int_eq(c0, 1);
    } else {
        ck_assert_int_eq(c0, 1);
        ck_assert_int_eq(c1, 1);
    }
    ck_assert_int_eq(px_space_instance_destroy(inst[1]), PX_OK);
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
}
END_TEST

START_TEST(test_one_instance_per_rank_and_one_more_is_einval_naming_the_limit)
{
    int n = threads_space ? nranks : 4;
    px_space **inst = calloc((size_t)n + 1, sizeof *inst);
    ck_assert_int_eq(px_space_partition(space, n, NULL, inst), PX_OK);
    for (int i = 0; i < n; ++i)
        ck_assert_int_eq(px_space_concurrency(inst[i]), 1);
    for (int i = 0; i < n; ++i)
        ck_assert_int_eq(px_space_instance_destroy(inst[i]), PX_OK);
    int over = threads_space ? nranks + 1 : PX_PARTITION_MAX + 1;
    px_space *sentinel = (px_space *)inst;
    inst[0] = sentinel;
    px_test_log_clear();
    ck_assert_int_eq(px_space_partition(space, over, NULL, inst), PX_EINVAL);
    ck_assert_ptr_eq(inst[0], sentinel); /* out untouched */
    char limit[32];
    snprintf(limit, sizeof limit, "[1, %d]", threads_space ? nranks : PX_PARTITION_MAX);
    ck_assert_msg(px_test_log_contains(limit), "log: %s", px_test_log_text());
    free(inst);
}
END_TEST

START_TEST(test_bad_arguments_are_refused_with_a_status)
{
    px_space *inst[2];
    ck_assert_int_eq(px_space_partition(space, 1, NULL, NULL), PX_EFAULT);
    ck_assert_int_eq(px_space_partition(space, 0, NULL, inst), PX_EINVAL);
    ck_assert_int_eq(px_space_partition(space, -3, NULL, inst), PX_EINVAL);
    ck_assert_int_eq(px_space_partition(space, 1, (const int[]){0}, inst), PX_EINVAL);
    if (can_run_two()) {
        px_test_log_clear();
        ck_assert_int_eq(px_space_partition(space, 2, (const int[]){1, -2}, inst), PX_EINVAL);
        ck_assert(px_test_log_contains("weights[1] = -2"));
    }
    /* An instance cannot be split again, nor a registry space destroyed. */
    ck_assert_int_eq(px_space_partition(space, 1, NULL, inst), PX_OK);
    px_space *again;
    ck_assert_int_eq(px_space_partition(inst[0], 1, NULL, &again), PX_EINVAL);
    ck_assert_int_eq(px_space_instance_destroy(NULL), PX_EFAULT);
    ck_assert_int_eq(px_space_instance_destroy(space), PX_EINVAL);
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_EINVAL); /* already destroyed */
    /* NULL is the default space. */
    ck_assert_int_eq(px_space_partition(NULL, 1, NULL, inst), PX_OK);
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
}
END_TEST

START_TEST(test_partition_needs_an_initialized_runtime)
{
    px_space *inst[1];
    ck_assert_int_eq(px_space_partition(NULL, 1, NULL, inst), PX_ENOTINIT);
    ck_assert_int_eq(px_space_instance_destroy((px_space *)inst), PX_ENOTINIT);
    char a[8] = "abc", b[8];
    ck_assert_int_eq(
        px_deep_copy_async((px_space *)inst, (px_space *)inst, b, (px_space *)inst, a, 4),
        PX_ENOTINIT);
}
END_TEST

static void check_results_on(px_space *s);

/* Fail the n-th internal allocation of a partition for n = 1, 2, ... until it succeeds: each
 * failure is PX_ENOMEM with out untouched and nothing kept (ASan checks for leaks). */
START_TEST(test_partition_survives_every_allocation_failure)
{
    int n = can_run_two() ? 2 : 1;
    px_space *inst[2] = {NULL, NULL};
    int k = 1;
    for (; k < 1000; ++k) {
        pxi_alloc_fail_at((uint64_t)k);
        int rc = px_space_partition(space, n, NULL, inst);
        pxi_alloc_fail_at(0);
        if (rc == PX_OK)
            break;
        ck_assert_msg(rc == PX_ENOMEM, "allocation %d failing gave %s", k, px_strerror(rc));
        ck_assert_ptr_null(inst[0]);
    }
    ck_assert_int_lt(k, 1000);
    check_results_on(inst[0]);
    for (int i = 0; i < n; ++i)
        ck_assert_int_eq(px_space_instance_destroy(inst[i]), PX_OK);
}
END_TEST

/* ---- results -------------------------------------------------------------------------------- */

static void sum_i64(int64_t b, int64_t e, void *ctx, void *acc)
{
    (void)ctx;
    for (int64_t i = b; i < e; ++i)
        *(int64_t *)acc += i * i % 7;
}

static void sum_f64(int64_t b, int64_t e, void *ctx, void *acc)
{
    (void)ctx;
    for (int64_t i = b; i < e; ++i)
        *(double *)acc += 1.0 / (double)(i + 1);
}

static void scan_i64(int64_t b, int64_t e, void *ctx, void *partial, int final_pass)
{
    int64_t *out = ctx;
    for (int64_t i = b; i < e; ++i) {
        *(int64_t *)partial += i;
        if (final_pass)
            out[i] = *(int64_t *)partial;
    }
}

static void md_count(const int64_t *lo, const int64_t *hi, void *ctx)
{
    atomic_int *hits = ctx;
    for (int64_t i = lo[0]; i < hi[0]; ++i)
        for (int64_t j = lo[1]; j < hi[1]; ++j)
            atomic_fetch_add_explicit(&hits[i * 50 + j], 1, memory_order_relaxed);
}

static void team_sum(const px_team *t, void *ctx, void *acc)
{
    (void)ctx;
    int64_t mine = px_team_league_rank(t) * 100 + px_team_rank(t), all = 0;
    ck_assert_int_eq(px_team_reduce(t, &px_sum_i64, &mine, &all), PX_OK);
    if (px_team_rank(t) == 0)
        *(int64_t *)acc += all;
}

/* The same reduce, scan, MDRange and team launches on @s as on the space. */
static void check_results_on(px_space *s)
{
    const int64_t n = 100000;
    int64_t want_i = 0, got_i = -1;
    for (int64_t i = 0; i < n; ++i)
        want_i += i * i % 7;
    for (int sch = 0; sch < 2; ++sch) {
        px_range_policy p = px_range(0, n);
        p.schedule = sch ? PX_SCHEDULE_DYNAMIC : PX_SCHEDULE_STATIC;
        ck_assert_int_eq(px_parallel_reduce_fn(s, "sum_i64", p, sum_i64, NULL, &px_sum_i64, &got_i),
                         PX_OK);
        ck_assert_int_eq(got_i, want_i);
    }
    double on_space = 0, on_s = 0;
    ck_assert_int_eq(px_parallel_reduce_fn(space, "sum_f64", px_range(0, n), sum_f64, NULL,
                                           &px_sum_f64, &on_space),
                     PX_OK);
    ck_assert_int_eq(
        px_parallel_reduce_fn(s, "sum_f64", px_range(0, n), sum_f64, NULL, &px_sum_f64, &on_s),
        PX_OK);
    if (px_space_concurrency(s) == px_space_concurrency(space))
        ck_assert(on_s == on_space); /* same thread count and plan: bitwise */
    else
        ck_assert_double_eq_tol(on_s, on_space, 1e-9);

    int64_t *out = calloc((size_t)n, sizeof *out), total = 0;
    ck_assert_int_eq(
        px_parallel_scan_fn(s, "scan", px_range(0, n), scan_i64, out, &px_sum_i64, &total), PX_OK);
    ck_assert_int_eq(total, n * (n - 1) / 2);
    for (int64_t i = 0; i < n; i += 997)
        ck_assert_int_eq(out[i], i * (i + 1) / 2);
    free(out);

    atomic_int hits[40 * 50];
    for (int i = 0; i < 40 * 50; ++i)
        atomic_init(&hits[i], 0);
    ck_assert_int_eq(px_parallel_for_md_fn(s, "md", px_mdrange(2, NULL, (const int64_t[]){40, 50}),
                                           md_count, hits),
                     PX_OK);
    for (int i = 0; i < 40 * 50; ++i)
        ck_assert_int_eq(atomic_load(&hits[i]), 1);

    int ts = px_space_concurrency(s);
    int64_t league = 9, tsum = 0, twant = 0;
    for (int64_t l = 0; l < league; ++l)
        for (int r = 0; r < ts; ++r)
            twant += l * 100 + r;
    ck_assert_int_eq(px_parallel_reduce_team_fn(s, "team", px_team_policy_make(league, ts, 0),
                                                team_sum, NULL, &px_sum_i64, &tsum),
                     PX_OK);
    ck_assert_int_eq(tsum, twant);
    /* A team larger than the instance is refused, naming its limit. */
    px_test_log_clear();
    ck_assert_int_eq(px_parallel_reduce_team_fn(s, "team", px_team_policy_make(1, ts + 1, 0),
                                                team_sum, NULL, &px_sum_i64, &tsum),
                     PX_EINVAL);
    char limit[32];
    snprintf(limit, sizeof limit, "limit of %d", ts);
    ck_assert_msg(px_test_log_contains(limit), "log: %s", px_test_log_text());
    if (threads_space)
        ck_assert_msg(px_test_log_contains("the instance's rank count"), "log: %s",
                      px_test_log_text());
}

/* check_results_on a one-instance partition of the whole space (of the space's concurrency), then,
 * where two can run, on both instances of a 3:1 partition. */
static void check_results_on_partitions(void)
{
    px_space *whole;
    ck_assert_int_eq(px_space_partition(space, 1, NULL, &whole), PX_OK);
    ck_assert_int_eq(px_space_concurrency(whole), threads_space ? nranks : 1);
    check_results_on(whole);
    ck_assert_int_eq(px_space_instance_destroy(whole), PX_OK);
    if (!can_run_two())
        return;
    px_space *inst[2];
    ck_assert_int_eq(px_space_partition(space, 2, (const int[]){3, 1}, inst), PX_OK);
    check_results_on(inst[0]);
    check_results_on(inst[1]);
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
    ck_assert_int_eq(px_space_instance_destroy(inst[1]), PX_OK);
}

START_TEST(test_launches_on_instances_give_the_results_of_the_space)
{
    check_results_on_partitions();
}
END_TEST

START_TEST(test_launches_handed_to_an_instances_rank_0_thread_give_the_results_of_the_space)
{
#if PX_HAVE_THREADS
    if (!threads_space)
        return;
    /* Every kind of launch through the instance's rank-0 thread (pool.h), which then dispatches
     * the instance's workers: on 2 cores no launcher is ever outside a 2-rank instance, so the
     * hand-off is forced. */
    pxi_tpool_set_force_handoff(1);
    check_results_on_partitions();
    pxi_tpool_set_force_handoff(0);
#endif
}
END_TEST

START_TEST(test_tools_device_id_carries_the_instance_number)
{
    px_space *inst[1];
    ck_assert_int_eq(px_space_partition(space, 1, NULL, inst), PX_OK);
    ck_assert_int_ge(inst[0]->instance_id, 1);
    uint32_t type = threads_space ? 6u : 0u;
    ck_assert_uint_eq(pxi_tools_device_id(space), (type << 24) | 1u);
    ck_assert_uint_eq(pxi_tools_device_id(inst[0]),
                      (type << 24) | ((uint32_t)inst[0]->instance_id + 1u));
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
}
END_TEST

/* ---- concurrency ---------------------------------------------------------------------------- */

typedef struct meet {
    atomic_int started; /* the waiting kernel runs */
    atomic_int flag;    /* set by the other instance's kernel */
    atomic_int met;     /* the waiting kernel saw the flag */
    atomic_int done;    /* the waiting kernel returned */
    px_space *s;        /* the waiting kernel's space */
    px_space *other;    /* the setting kernel's space */
} meet;

/* Kernel: wait (bounded) for m->flag. Only index 0 waits; other indices do nothing. */
static void wait_for_flag(int64_t b, int64_t e, void *ctx)
{
    meet *m = ctx;
    if (b > 0 || e <= 0)
        return;
    atomic_store_explicit(&m->started, 1, memory_order_release);
    atomic_store_explicit(&m->met, wait_flag(&m->flag), memory_order_release);
    atomic_store_explicit(&m->done, 1, memory_order_release);
}

static void set_flag(int64_t b, int64_t e, void *ctx)
{
    meet *m = ctx;
    if (b == 0 && e > 0)
        atomic_store_explicit(&m->flag, 1, memory_order_release);
}

static void *launch_waiter(void *arg)
{
    meet *m = arg;
    ck_assert_int_eq(px_parallel_for_fn(m->s, "wait", px_range(0, 1), wait_for_flag, m), PX_OK);
    return NULL;
}

static void *launch_setter(void *arg)
{
    meet *m = arg;
    ck_assert_int_eq(px_parallel_for_fn(m->other, "set", px_range(0, 64), set_flag, m), PX_OK);
    return NULL;
}

START_TEST(test_kernels_on_two_instances_from_two_threads_run_at_the_same_time)
{
    if (!can_run_two())
        return; /* one rank: there are no two groups of cores */
    px_space *inst[2];
    ck_assert_int_eq(px_space_partition(space, 2, NULL, inst), PX_OK);
    for (int round = 0; round < 3; ++round) {
        meet wm = {.s = inst[round & 1], .other = inst[(round & 1) ^ 1]}, *m = &wm;
        pthread_t a, b;
        ck_assert_int_eq(pthread_create(&a, NULL, launch_waiter, m), 0);
        ck_assert(wait_flag(&m->started));
        /* The other instance's kernel sets the flag the first one waits for. */
        ck_assert_int_eq(pthread_create(&b, NULL, launch_setter, m), 0);
        pthread_join(b, NULL);
        pthread_join(a, NULL);
        ck_assert_msg(atomic_load(&m->met),
                      "the kernel on instance %d never saw the flag set by instance %d", round & 1,
                      (round & 1) ^ 1);
    }
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
    ck_assert_int_eq(px_space_instance_destroy(inst[1]), PX_OK);
}
END_TEST

START_TEST(test_a_fence_of_one_instance_does_not_wait_for_the_other)
{
    if (!can_run_two())
        return;
    px_space *inst[2];
    ck_assert_int_eq(px_space_partition(space, 2, NULL, inst), PX_OK);
    meet m = {.s = inst[0]};
    pthread_t a;
    ck_assert_int_eq(pthread_create(&a, NULL, launch_waiter, &m), 0);
    ck_assert(wait_flag(&m.started));
    /* inst[0] runs a kernel that waits for us; a fence of inst[1] returns anyway. */
    ck_assert_int_eq(px_fence(inst[1]), PX_OK);
    ck_assert_int_eq(atomic_load(&m.done), 0);
    atomic_store_explicit(&m.flag, 1, memory_order_release);
    ck_assert_int_eq(px_fence(inst[0]), PX_OK);
    if (threads_space) /* serial launches are not waited for by a fence (they are the caller's) */
        ck_assert_int_eq(atomic_load(&m.done), 1);
    pthread_join(a, NULL);
    ck_assert(atomic_load(&m.met));
    ck_assert_int_eq(px_fence(NULL), PX_OK); /* every space and instance */
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
    ck_assert_int_eq(px_space_instance_destroy(inst[1]), PX_OK);
}
END_TEST

/* Four threads, two per instance, each launching reductions: every result right. */
typedef struct hammer {
    px_space *s;
    int bad;
} hammer;

static void *hammer_main(void *arg)
{
    hammer *h = arg;
    const int64_t n = 20000;
    int64_t want = 0;
    for (int64_t i = 0; i < n; ++i)
        want += i * i % 7;
    for (int k = 0; k < 50; ++k) {
        int64_t got = 0;
        px_range_policy p = px_range(0, n);
        p.schedule = k & 1 ? PX_SCHEDULE_DYNAMIC : PX_SCHEDULE_STATIC;
        if (px_parallel_reduce_fn(h->s, "hammer", p, sum_i64, NULL, &px_sum_i64, &got) != PX_OK ||
            got != want)
            h->bad++;
    }
    return NULL;
}

START_TEST(test_concurrent_launchers_on_two_instances_get_right_results)
{
    px_space *inst[2];
    int n = can_run_two() ? 2 : 1;
    ck_assert_int_eq(px_space_partition(space, n, NULL, inst), PX_OK);
    hammer h[4];
    pthread_t t[4];
    for (int i = 0; i < 4; ++i) {
        h[i] = (hammer){.s = inst[i % n]};
        ck_assert_int_eq(pthread_create(&t[i], NULL, hammer_main, &h[i]), 0);
    }
    for (int i = 0; i < 4; ++i) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(h[i].bad, 0);
    }
    for (int i = 0; i < n; ++i)
        ck_assert_int_eq(px_space_instance_destroy(inst[i]), PX_OK);
}
END_TEST

/* ---- ordered copies ------------------------------------------------------------------------- */

typedef struct fill_ctx {
    double *a;
    int64_t n;
    atomic_int started;
    atomic_int go;
} fill_ctx;

/* Index 0 waits (bounded) for go, then fills the whole array: a copy ordered after this launch
 * sees every value. */
static void slow_fill(int64_t b, int64_t e, void *ctx)
{
    fill_ctx *f = ctx;
    if (b > 0 || e <= 0)
        return;
    atomic_store_explicit(&f->started, 1, memory_order_release);
    (void)wait_flag(&f->go);
    for (int64_t i = 0; i < f->n; ++i)
        f->a[i] = (double)i + 0.5;
}

typedef struct fill_launch {
    px_space *s;
    fill_ctx *f;
} fill_launch;

static void *run_fill(void *arg)
{
    fill_launch *fl = arg;
    ck_assert_int_eq(px_parallel_for_fn(fl->s, "fill", px_range(0, 1), slow_fill, fl->f), PX_OK);
    return NULL;
}

START_TEST(test_deep_copy_async_is_ordered_after_earlier_launches_on_its_instance)
{
    px_space *inst[1];
    ck_assert_int_eq(px_space_partition(space, 1, NULL, inst), PX_OK);
    const int64_t n = 1 << 17; /* 1 MiB: the threads instance copies in parallel */
    size_t bytes = (size_t)n * sizeof(double);
    double *a = px_malloc(inst[0], bytes), *b = px_malloc(space, bytes);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    memset(a, 0, bytes);
    memset(b, 0, bytes);
    fill_ctx f = {.a = a, .n = n};
    fill_launch fl = {inst[0], &f};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, run_fill, &fl), 0);
    ck_assert(wait_flag(&f.started));
    atomic_store_explicit(&f.go, 1, memory_order_release);
    /* The fill is in flight on the instance: the copy waits for it (threads). Serial instances
     * run launches on their caller, so there the launching thread is joined first. */
    if (!threads_space)
        pthread_join(t, NULL);
    ck_assert_int_eq(px_deep_copy_async(inst[0], space, b, inst[0], a, bytes), PX_OK);
    ck_assert_int_eq(px_fence(inst[0]), PX_OK);
    for (int64_t i = 0; i < n; ++i)
        if (b[i] != (double)i + 0.5)
            ck_abort_msg("b[%lld] = %g after the ordered copy", (long long)i, b[i]);
    if (threads_space)
        pthread_join(t, NULL);
    /* A small copy, on the space itself as exec, and zero bytes with NULL pointers. */
    ck_assert_int_eq(px_deep_copy_async(space, space, b, space, a + 8, 64), PX_OK);
    ck_assert(b[0] == 8.5 && b[7] == 15.5 && b[8] == 8.5);
    ck_assert_int_eq(px_deep_copy_async(inst[0], space, NULL, space, NULL, 0), PX_OK);
    px_free(space, b);
    px_free(inst[0], a);
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
}
END_TEST

START_TEST(test_deep_copy_async_refuses_null_spaces_and_pointers)
{
    char a[16] = "parex", b[16];
    ck_assert_int_eq(px_deep_copy_async(NULL, space, b, space, a, 6), PX_EFAULT);
    ck_assert_int_eq(px_deep_copy_async(space, NULL, b, space, a, 6), PX_EFAULT);
    ck_assert_int_eq(px_deep_copy_async(space, space, b, NULL, a, 6), PX_EFAULT);
    ck_assert_int_eq(px_deep_copy_async(space, space, NULL, space, a, 6), PX_EFAULT);
    ck_assert_int_eq(px_deep_copy_async(space, space, b, space, NULL, 6), PX_EFAULT);
    ck_assert_int_eq(px_deep_copy_async(space, space, b, space, a, 6), PX_OK);
    ck_assert_str_eq(b, "parex");
}
END_TEST

/* ---- the engine ----------------------------------------------------------------------------- */

START_TEST(test_engine_kernel_ops_on_two_instances_run_side_by_side)
{
    if (!can_run_two())
        return;
    /* One worker per lane: the two ops can only meet on two lanes, one per instance. */
    px_engine *e = px_engine_create(PX_ENGINE_PER_DEVICE, 1);
    ck_assert_ptr_nonnull(e);
    px_space *inst[2];
    ck_assert_int_eq(px_space_partition(space, 2, NULL, inst), PX_OK);
    meet m = {0};
    px_var *va = px_var_new(e), *vb = px_var_new(e);
    ck_assert_int_eq(px_engine_push_parallel_for_fn(e, inst[0], "wait", px_range(0, 1),
                                                    wait_for_flag, &m, NULL, 0, &va, 1),
                     PX_OK);
    ck_assert_int_eq(px_engine_push_parallel_for_fn(e, inst[1], "set", px_range(0, 64), set_flag,
                                                    &m, NULL, 0, &vb, 1),
                     PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_msg(atomic_load(&m.met), "the op on instance 0 never saw instance 1's op");
    /* Ops on instances keep their Var order: reduce on inst[1] after a write on inst[0]. */
    int64_t got = -1, want = 0;
    for (int64_t i = 0; i < 5000; ++i)
        want += i * i % 7;
    ck_assert_int_eq(px_engine_push_parallel_reduce_fn(e, inst[1], "sum", px_range(0, 5000),
                                                       sum_i64, NULL, &px_sum_i64, &got, &va, 1,
                                                       NULL, 0),
                     PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, va), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(got, want);
    ck_assert_int_eq(px_var_delete(e, va), PX_OK);
    ck_assert_int_eq(px_var_delete(e, vb), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
    ck_assert_int_eq(px_space_instance_destroy(inst[1]), PX_OK);
}
END_TEST

/* ---- destroy and finalize with work outstanding --------------------------------------------- */

static void *release_later(void *arg)
{
    meet *m = arg;
    (void)wait_flag(&m->started);
    atomic_store_explicit(&m->flag, 1, memory_order_release);
    return NULL;
}

START_TEST(test_destroy_finishes_the_engine_ops_pushed_on_the_instance)
{
    px_engine *e = px_engine_default();
    px_space *inst[1];
    ck_assert_int_eq(px_space_partition(space, 1, NULL, inst), PX_OK);
    meet m = {0};
    px_var *v = px_var_new(e);
    ck_assert_int_eq(px_engine_push_parallel_for_fn(e, inst[0], "wait", px_range(0, 1),
                                                    wait_for_flag, &m, NULL, 0, &v, 1),
                     PX_OK);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, release_later, &m), 0);
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
    ck_assert_int_eq(atomic_load(&m.done), 1); /* the op ran to its end first */
    ck_assert(atomic_load(&m.met));
    pthread_join(t, NULL);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
}
END_TEST

START_TEST(test_destroy_waits_for_a_launch_in_flight_from_another_thread)
{
    if (!threads_space)
        return; /* a serial instance has no state a launch could be using */
    px_space *inst[1];
    ck_assert_int_eq(px_space_partition(space, 1, NULL, inst), PX_OK);
    meet m = {.s = inst[0]};
    pthread_t a, r;
    ck_assert_int_eq(pthread_create(&a, NULL, launch_waiter, &m), 0);
    ck_assert(wait_flag(&m.started));
    ck_assert_int_eq(pthread_create(&r, NULL, release_later, &m), 0);
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
    ck_assert_int_eq(atomic_load(&m.done), 1);
    pthread_join(a, NULL);
    pthread_join(r, NULL);
}
END_TEST

START_TEST(test_finalize_destroys_the_instances_left_alive)
{
    px_space *inst[2];
    int n = can_run_two() ? 2 : 1;
    ck_assert_int_eq(px_space_partition(space, n, NULL, inst), PX_OK);
    /* Work left in the engine on one of them: px_finalize drains it, then frees both. */
    px_engine *e = px_engine_default();
    static int64_t got; /* written after this function returns, by px_finalize's drain */
    ck_assert_int_eq(px_engine_push_parallel_reduce_fn(e, inst[n - 1], "sum", px_range(0, 1000),
                                                       sum_i64, NULL, &px_sum_i64, &got, NULL, 0,
                                                       NULL, 0),
                     PX_OK);
    /* teardown's px_finalize must return PX_OK; ASan checks that nothing leaks. */
}
END_TEST

/* ---- cuda (skipped where no GPU is available) ------------------------------------------------ */

START_TEST(test_cuda_instances_are_streams_that_order_their_copies)
{
    px_space *cuda = px_space_by_name("cuda");
    if (!cuda)
        return; /* not built or no device here */
    px_space *inst[2];
    ck_assert_int_eq(px_space_partition(cuda, 2, (const int[]){3, 1}, inst), PX_OK);
    ck_assert_int_eq(px_space_concurrency(inst[0]), px_space_concurrency(cuda));
    ck_assert_uint_eq(pxi_tools_device_id(inst[1]) >> 24, 2u);
    ck_assert_uint_eq(pxi_tools_device_id(inst[1]) & 0x1ffffu, (uint32_t)inst[1]->instance_id + 1u);
    const size_t n = 1 << 16;
    double *h = malloc(n * sizeof *h), *back = calloc(n, sizeof *back);
    for (size_t i = 0; i < n; ++i)
        h[i] = (double)i;
    double *d = px_malloc(cuda, n * sizeof *d);
    ck_assert_ptr_nonnull(d);
    /* Host -> device -> host, both on inst[1]'s stream: the second is ordered after the first. */
    ck_assert_int_eq(px_deep_copy_async(inst[1], cuda, d, space, h, n * sizeof *h), PX_OK);
    ck_assert_int_eq(px_deep_copy_async(inst[1], space, back, cuda, d, n * sizeof *h), PX_OK);
    ck_assert_int_eq(px_fence(inst[1]), PX_OK);
    ck_assert_int_eq(memcmp(h, back, n * sizeof *h), 0);
    ck_assert_int_eq(px_free(cuda, d), PX_OK);
    free(h);
    free(back);
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
    ck_assert_int_eq(px_space_instance_destroy(inst[1]), PX_OK);
}
END_TEST

static Suite *instance_suite(void)
{
    Suite *s = suite_create("instance");
    TCase *tc = tcase_create("instance");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_equal_weights_split_the_ranks_in_halves);
    tcase_add_test(tc, test_weights_3_1_give_three_quarters_and_one_quarter);
    tcase_add_test(tc, test_one_instance_per_rank_and_one_more_is_einval_naming_the_limit);
    tcase_add_test(tc, test_bad_arguments_are_refused_with_a_status);
    tcase_add_test(tc, test_partition_survives_every_allocation_failure);
    tcase_add_test(tc, test_launches_on_instances_give_the_results_of_the_space);
    tcase_add_test(
        tc, test_launches_handed_to_an_instances_rank_0_thread_give_the_results_of_the_space);
    tcase_add_test(tc, test_tools_device_id_carries_the_instance_number);
    tcase_add_test(tc, test_kernels_on_two_instances_from_two_threads_run_at_the_same_time);
    tcase_add_test(tc, test_a_fence_of_one_instance_does_not_wait_for_the_other);
    tcase_add_test(tc, test_concurrent_launchers_on_two_instances_get_right_results);
    tcase_add_test(tc, test_deep_copy_async_is_ordered_after_earlier_launches_on_its_instance);
    tcase_add_test(tc, test_deep_copy_async_refuses_null_spaces_and_pointers);
    tcase_add_test(tc, test_engine_kernel_ops_on_two_instances_run_side_by_side);
    tcase_add_test(tc, test_destroy_finishes_the_engine_ops_pushed_on_the_instance);
    tcase_add_test(tc, test_destroy_waits_for_a_launch_in_flight_from_another_thread);
    tcase_add_test(tc, test_finalize_destroys_the_instances_left_alive);
    tcase_add_test(tc, test_cuda_instances_are_streams_that_order_their_copies);
    suite_add_tcase(s, tc);
    TCase *down = tcase_create("not_initialized");
    tcase_set_timeout(down, 30);
    tcase_add_test(down, test_partition_needs_an_initialized_runtime);
    suite_add_tcase(s, down);
    return s;
}

int main(void)
{
    return px_test_run(instance_suite());
}
