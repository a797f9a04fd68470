/*
 * tests/check_placement.c - where parex runs things (parex/instance.h "Placement", docs in
 * spaces/threads/pool.h): kernels on a Threads instance run on the instance's cores whichever
 * thread launches them, engine kernel ops placed on an instance too, and the threads parex
 * creates carry the affinity masks the documentation gives them. PX_NUM_THREADS 1, 2 and 3
 * (tests/placement.cmake); 3 ranks on the 2-core CI machine put two ranks on one core.
 *
 * Where a kernel runs is read with sched_getcpu inside it. A thread bound to one CPU runs only
 * there, so the checks are exact, not statistical. Tests that need two CPUs in the process's
 * affinity mask or two ranks skip with a message saying so.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/oversub.h"
#include "proc_threads.h"
#include "px_test.h"
#include "spaces/threads/threads.h"

/* The process's affinity mask before px_initialize binds the main thread (main() reads it). */
static cpu_set_t process_mask;
static px_space *space;
static int nranks;

static void setup(void)
{
    px_test_setup();
    space = px_space_by_name("threads");
    if (!space)
        ck_abort_msg("the threads space is not available");
    nranks = px_space_concurrency(space);
}

static void teardown(void)
{
    px_test_teardown();
}

/* The reason a placement test cannot run here, or NULL. */
static const char *cannot_place(void)
{
    if (CPU_COUNT(&process_mask) < 2)
        return "fewer than 2 CPUs in the process's affinity mask";
    if (nranks < 2)
        return "the threads space has 1 rank (PX_NUM_THREADS=1)";
    if (pxi_threads_pu_of_rank(space, 0) < 0)
        return "ranks are not bound (PX_BIND=none or no hwloc)";
    return NULL;
}

#define SKIP_UNLESS_PLACEABLE()                                                                    \
    do {                                                                                           \
        const char *why_ = cannot_place();                                                         \
        if (why_) {                                                                                \
            fprintf(stderr, "%s: skipped: %s\n", __func__, why_);                                  \
            return;                                                                                \
        }                                                                                          \
    } while (0)

/* ---- kernels that record where they ran ------------------------------------------------------ */

#define N 4096

typedef struct where {
    atomic_int cpu[N];
    atomic_long tid[N];
} where;

static void record(int64_t b, int64_t e, void *ctx)
{
    where *w = ctx;
    for (int64_t i = b; i < e; ++i) {
        atomic_store_explicit(&w->cpu[i], sched_getcpu(), memory_order_relaxed);
        atomic_store_explicit(&w->tid[i], (long)syscall(SYS_gettid), memory_order_relaxed);
    }
}

static void record_sum(int64_t b, int64_t e, void *ctx, void *acc)
{
    record(b, e, ctx);
    *(int64_t *)acc += e - b;
}

static void where_clear(where *w)
{
    for (int i = 0; i < N; ++i) {
        atomic_store(&w->cpu[i], -1);
        atomic_store(&w->tid[i], 0);
    }
}

/* Every index ran, and on @cpu. */
static void where_all_on(where *w, int cpu, const char *what)
{
    for (int i = 0; i < N; ++i)
        ck_assert_msg(atomic_load(&w->cpu[i]) == cpu, "%s: index %d ran on CPU %d, not CPU %d",
                      what, i, atomic_load(&w->cpu[i]), cpu);
}

static void bind_to(int cpu)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET((size_t)cpu, &one);
    ck_assert_int_eq(sched_setaffinity(0, sizeof one, &one), 0);
}

/* A launcher thread bound to CPU @from that launches on instance @inst. */
typedef struct launcher {
    int from;
    px_space *inst;
    where *w;
    long tid;
    int rc_for, rc_reduce;
    int64_t sum;
} launcher;

static void *launch_from(void *arg)
{
    launcher *l = arg;
    bind_to(l->from);
    l->tid = (long)syscall(SYS_gettid);
    where_clear(l->w);
    l->rc_for = px_parallel_for_fn(l->inst, "where", px_range(0, N), record, l->w);
    where_all_on(l->w, pxi_threads_pu_of_rank(l->inst, 0), "parallel_for");
    where_clear(l->w);
    l->sum = -1;
    l->rc_reduce = px_parallel_reduce_fn(l->inst, "where", px_range(0, N), record_sum, l->w,
                                         &px_sum_i64, &l->sum);
    where_all_on(l->w, pxi_threads_pu_of_rank(l->inst, 0), "parallel_reduce");
    return NULL;
}

/* Partition the space into one instance per rank (each 1 rank, on its rank's PU). */
static px_space **one_rank_instances(void)
{
    px_space **inst = calloc((size_t)nranks, sizeof *inst);
    ck_assert_ptr_nonnull(inst);
    ck_assert_int_eq(px_space_partition(space, nranks, NULL, inst), PX_OK);
    for (int i = 0; i < nranks; ++i) {
        ck_assert_int_eq(px_space_concurrency(inst[i]), 1);
        ck_assert_int_eq(pxi_threads_pu_of_rank(inst[i], 0), pxi_threads_pu_of_rank(space, i));
    }
    return inst;
}

static void destroy_all(px_space **inst)
{
    for (int i = 0; i < nranks; ++i)
        ck_assert_int_eq(px_space_instance_destroy(inst[i]), PX_OK);
    free(inst);
}

/* ---- kernels on instances ---------------------------------------------------------------------
 */

START_TEST(test_a_1_rank_instance_runs_kernels_on_its_core_whichever_thread_launches)
{
    SKIP_UNLESS_PLACEABLE();
    px_space **inst = one_rank_instances();
    where *w = malloc(sizeof *w);
    ck_assert_ptr_nonnull(w);
    /* From a thread on every rank's CPU onto every instance: on 2 cores that includes "an
     * instance on core 1 launched from a thread on core 0" and the other way round. */
    for (int i = 0; i < nranks; ++i) {
        for (int j = 0; j < nranks; ++j) {
            launcher l = {.from = pxi_threads_pu_of_rank(space, j), .inst = inst[i], .w = w};
            pthread_t t;
            ck_assert_int_eq(pthread_create(&t, NULL, launch_from, &l), 0);
            ck_assert_int_eq(pthread_join(t, NULL), 0);
            ck_assert_int_eq(l.rc_for, PX_OK);
            ck_assert_int_eq(l.rc_reduce, PX_OK);
            ck_assert_int_eq(l.sum, N);
        }
    }
    free(w);
    destroy_all(inst);
}
END_TEST

START_TEST(test_a_launcher_bound_to_the_instance_core_runs_the_kernel_itself)
{
    SKIP_UNLESS_PLACEABLE();
    px_space **inst = one_rank_instances();
    where *w = malloc(sizeof *w);
    ck_assert_ptr_nonnull(w);
    int last = nranks - 1;
    int pu = pxi_threads_pu_of_rank(inst[last], 0);
    int other = pxi_threads_pu_of_rank(space, 0) == pu ? pxi_threads_pu_of_rank(space, 1)
                                                       : pxi_threads_pu_of_rank(space, 0);
    /* Placed: the launching thread is rank 0 (no hand-off). */
    launcher l = {.from = pu, .inst = inst[last], .w = w};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, launch_from, &l), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    for (int i = 0; i < N; ++i)
        ck_assert_int_eq(atomic_load(&w->tid[i]), l.tid);
    /* Elsewhere: the instance's own rank-0 thread runs it (another thread, on the right core,
     * which launch_from checked). */
    l = (launcher){.from = other, .inst = inst[last], .w = w};
    ck_assert_int_eq(pthread_create(&t, NULL, launch_from, &l), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    for (int i = 0; i < N; ++i)
        ck_assert_int_ne(atomic_load(&w->tid[i]), l.tid);
    free(w);
    destroy_all(inst);
}
END_TEST

typedef struct nest {
    px_space *inst;
    atomic_int cpu_outer, cpu_inner, rc_inner;
} nest;

static void inner(int64_t b, int64_t e, void *ctx)
{
    (void)b;
    (void)e;
    atomic_store(&((nest *)ctx)->cpu_inner, sched_getcpu());
}

static void outer(int64_t b, int64_t e, void *ctx)
{
    (void)b;
    (void)e;
    nest *n = ctx;
    atomic_store(&n->cpu_outer, sched_getcpu());
    atomic_store(&n->rc_inner, px_parallel_for_fn(n->inst, "inner", px_range(0, 1), inner, n));
}

START_TEST(test_a_nested_launch_in_a_handed_off_kernel_runs_inline_on_the_instance_core)
{
    SKIP_UNLESS_PLACEABLE();
    px_space **inst = one_rank_instances();
    int pu = pxi_threads_pu_of_rank(inst[1], 0);
    /* The main thread is bound to rank 0's PU, which is not instance 1's. */
    nest n = {.inst = inst[1]};
    ck_assert_int_eq(px_parallel_for_fn(inst[1], "outer", px_range(0, 1), outer, &n), PX_OK);
    int rc_inner = atomic_load(&n.rc_inner), cpu_outer = atomic_load(&n.cpu_outer),
        cpu_inner = atomic_load(&n.cpu_inner);
    ck_assert_int_eq(rc_inner, PX_OK);
    ck_assert_int_eq(cpu_outer, pu);
    ck_assert_int_eq(cpu_inner, pu);
    destroy_all(inst);
}
END_TEST

START_TEST(test_a_large_deep_copy_async_on_a_1_rank_instance_is_done_on_return_from_any_thread)
{
    /* The copy goes through the instance's rank-0 thread; it must still be complete when the
     * call returns (host instances complete their work) and at the fence. */
    px_space **inst = one_rank_instances();
    size_t bytes = (size_t)1 << 20;
    unsigned char *a = malloc(bytes), *b = malloc(bytes);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    for (size_t i = 0; i < bytes; ++i)
        a[i] = (unsigned char)(i * 7 + 3);
    for (int i = 0; i < nranks; ++i) {
        memset(b, 0, bytes);
        ck_assert_int_eq(px_deep_copy_async(inst[i], space, b, space, a, bytes), PX_OK);
        ck_assert_int_eq(memcmp(a, b, bytes), 0);
        ck_assert_int_eq(px_fence(inst[i]), PX_OK);
    }
    free(a);
    free(b);
    destroy_all(inst);
}
END_TEST

/* ---- engine ops ------------------------------------------------------------------------------ */

START_TEST(test_engine_kernel_ops_placed_on_instances_run_on_the_instances_cores)
{
    SKIP_UNLESS_PLACEABLE();
    px_space **inst = one_rank_instances();
    px_engine *e = px_engine_create(PX_ENGINE_PER_DEVICE, 1);
    ck_assert_ptr_nonnull(e);
    where *w = calloc((size_t)nranks, sizeof *w);
    ck_assert_ptr_nonnull(w);
    px_var **v = calloc((size_t)nranks, sizeof *v);
    ck_assert_ptr_nonnull(v);
    int64_t *sum = calloc((size_t)nranks, sizeof *sum);
    ck_assert_ptr_nonnull(sum);
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < nranks; ++i) {
            where_clear(&w[i]);
            v[i] = px_var_new(e);
            ck_assert_ptr_nonnull(v[i]);
            ck_assert_int_eq(px_engine_push_parallel_for_fn(e, inst[i], "where", px_range(0, N),
                                                            record, &w[i], NULL, 0, &v[i], 1),
                             PX_OK);
            ck_assert_int_eq(px_engine_push_parallel_reduce_fn(e, inst[i], "where", px_range(0, N),
                                                               record_sum, &w[i], &px_sum_i64,
                                                               &sum[i], NULL, 0, &v[i], 1),
                             PX_OK);
        }
        ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
        for (int i = 0; i < nranks; ++i) {
            where_all_on(&w[i], pxi_threads_pu_of_rank(inst[i], 0), "engine op");
            ck_assert_int_eq(sum[i], N);
            ck_assert_int_eq(px_var_delete(e, v[i]), PX_OK);
        }
    }
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    free(sum);
    free(v);
    free(w);
    destroy_all(inst);
}
END_TEST

/* ---- the threads parex creates -------------------------------------------------------------- */

typedef struct census {
    int bound; /* ranks are bound (PX_BIND close or spread, hwloc) */
    int pool_threads, leaders, engine_workers;
} census;

/* An engine worker's name (lanes.c names them px-cpu<dev>-<i>, px-prio.., px-io..). */
static int is_engine_worker(const char *name)
{
    return strncmp(name, "px-cpu", 6) == 0 || strncmp(name, "px-prio", 7) == 0 ||
           strncmp(name, "px-io", 5) == 0;
}

static int check_one(const char *name, const cpu_set_t *mask, void *arg)
{
    census *c = arg;
    if (getenv("PX_TEST_VERBOSE"))
        fprintf(stderr, "thread %s: %d CPUs\n", name, CPU_COUNT(mask));
    if (strncmp(name, "px-threads-", 11) == 0) {
        /* Pool workers (px-threads-1 ..) and instances' rank-0 threads (px-threads-0): one
         * CPU each, their rank's. */
        if (c->bound)
            ck_assert_msg(CPU_COUNT(mask) == 1, "%s is bound to %d CPUs, not 1", name,
                          CPU_COUNT(mask));
        if (strcmp(name, "px-threads-0") == 0)
            ++c->leaders;
        else
            ++c->pool_threads;
    } else if (is_engine_worker(name)) {
        /* Engine workers: the process's mask, not the initializing thread's one core. */
        ck_assert_msg(CPU_EQUAL(mask, &process_mask),
                      "engine worker %s has %d CPUs, the process mask has %d", name,
                      CPU_COUNT(mask), CPU_COUNT(&process_mask));
        ++c->engine_workers;
    }
    return 0;
}

START_TEST(test_threads_parex_creates_have_the_documented_masks)
{
    px_engine *e = px_engine_create(PX_ENGINE_PER_DEVICE, 2);
    ck_assert_ptr_nonnull(e);
    /* Make the engine start its CPU workers: run one op. */
    px_var *v = px_var_new(e);
    where *w = malloc(sizeof *w);
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(px_engine_push_parallel_for_fn(e, space, "where", px_range(0, N), record, w,
                                                    NULL, 0, &v, 1),
                     PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    px_space *inst[1];
    ck_assert_int_eq(px_space_partition(space, 1, NULL, inst), PX_OK);
    /* A thread names itself when it starts: look again (up to 20 s) until every new one has. */
    int bound = pxi_threads_pu_of_rank(space, 0) >= 0;
    census c;
    for (int tries = 0; tries < 2000; ++tries) {
        c = (census){.bound = bound};
        ck_assert(pxt_each_thread(check_one, &c));
        if (c.pool_threads == 2 * (nranks - 1) && c.leaders == (bound ? 1 : 0) &&
            c.engine_workers >= 2)
            break;
        usleep(10000);
    }
    /* The space's workers and the whole-space instance's, plus the instance's rank-0 thread
     * when ranks are bound (unbound, there is no place to keep rank 0 on). */
    ck_assert_int_eq(c.pool_threads, 2 * (nranks - 1));
    ck_assert_int_eq(c.leaders, (c.bound ? 1 : 0));
    ck_assert_int_ge(c.engine_workers, 2);
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    free(w);
}
END_TEST

/* Engine workers named now (a worker names itself in its start-up, before the start gate). */
static int count_engine_workers(const char *name, const cpu_set_t *mask, void *arg)
{
    (void)mask;
    *(int *)arg += is_engine_worker(name);
    return 0;
}

START_TEST(test_an_engine_s_workers_have_started_when_create_returns)
{
    /* Documented (parex/engine.h, px_engine_create): it returns once every worker has run its
     * start-up (placement, name, arena). Counted once, without looking again: 4 CPU workers,
     * 2 priority workers (half as many) and an IO worker, all named and with the process's
     * mask (check_one) at create's return. Before the start gates a worker named itself
     * whenever it first got a processor, often after create returned. */
    int before = 0, after = 0;
    ck_assert(pxt_each_thread(count_engine_workers, &before));
    for (int round = 0; round < 3; ++round) {
        px_engine *e = px_engine_create(PX_ENGINE_PER_DEVICE, 4);
        ck_assert_ptr_nonnull(e);
        after = 0;
        ck_assert(pxt_each_thread(count_engine_workers, &after));
        census c = {.bound = pxi_threads_pu_of_rank(space, 0) >= 0};
        ck_assert(pxt_each_thread(check_one, &c));
        ck_assert_int_eq(px_engine_destroy(e), PX_OK);
        ck_assert_msg(after - before == 4 + 2 + 1,
                      "round %d: %d engine workers named at create's return, 7 expected", round,
                      after - before);
    }
}
END_TEST

/* Per engine worker (named px-cpu*, px-prio*, px-io*): count its scheduling policy, SCHED_BATCH
 * in policies[0], any other in policies[1]. */
static int count_policy(const char *name, const cpu_set_t *mask, pid_t tid, void *arg)
{
    (void)mask;
    int *policies = arg;
    if (is_engine_worker(name))
        ++policies[sched_getscheduler(tid) == SCHED_BATCH ? 0 : 1];
    return 0;
}

/* The engine workers' policies: counts of SCHED_BATCH in *batch and of others in *other. */
static void worker_policies(int *batch, int *other)
{
    int policies[2] = {0, 0};
    ck_assert(pxt_each_task(count_policy, policies));
    *batch = policies[0];
    *other = policies[1];
}

static atomic_int ran_on_worker;

static int count_run(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    atomic_fetch_add(&ran_on_worker, 1);
    return PX_OK;
}

START_TEST(test_an_engine_on_one_processor_has_workers_that_do_not_preempt_on_wake_up)
{
    /* Documented (parex/engine.h, px_engine_create): on one processor (or oversubscribed) the
     * workers are SCHED_BATCH (no wake-up preemption of the pushing thread), elsewhere the
     * default policy; and they still run what is pushed while the pusher sleeps instead of
     * waiting. */
    int batch = 0, other = 0;
    /* Oversubscribed (more Threads ranks than processors), the engine counts one processor. */
    if (CPU_COUNT(&process_mask) >= 2) {
        const int one = pxi_oversub_active();
        px_engine *e = px_engine_create(PX_ENGINE_PER_DEVICE, 2);
        ck_assert_ptr_nonnull(e);
        worker_policies(&batch, &other);
        ck_assert_int_eq(px_engine_destroy(e), PX_OK);
        ck_assert_msg(one ? batch >= 4 && other == 0 : batch == 0 && other >= 4,
                      "%d processors%s: %d batch, %d other workers", CPU_COUNT(&process_mask),
                      one ? " (oversubscribed)" : "", batch, other);
    }
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; ++c)
        if (CPU_ISSET((size_t)c, &process_mask))
            first = c;
    ck_assert_int_ge(first, 0);
    ck_assert_int_eq(px_finalize(), PX_OK);
    bind_to(first); /* the process's placement that px_initialize captures: one processor */
    px_test_setup();
    px_engine *e = px_engine_create(PX_ENGINE_PER_DEVICE, 2);
    ck_assert_ptr_nonnull(e);
    worker_policies(&batch, &other);
    atomic_store(&ran_on_worker, 0);
    for (int i = 0; i < 100; ++i)
        ck_assert_int_eq(px_engine_push(e, &(px_op){.fn = count_run, .name = "count_run"}), PX_OK);
    /* Asleep, not waiting (a waiter would run them itself): the workers run them. */
    for (int k = 0; k < 2000 && atomic_load(&ran_on_worker) < 100; ++k) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    const int ran = atomic_load(&ran_on_worker);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
    ck_assert_int_eq(sched_setaffinity(0, sizeof process_mask, &process_mask), 0);
    px_test_setup(); /* for the teardown */
    space = px_space_by_name("threads");
    ck_assert_msg(batch >= 4 && other == 0, "one processor: %d batch, %d other workers", batch,
                  other);
    ck_assert_int_eq(ran, 100);
}
END_TEST

static void *report_mask(void *arg)
{
    cpu_set_t *m = arg;
    ck_assert_int_eq(sched_getaffinity(0, sizeof *m, m), 0);
    return NULL;
}

START_TEST(test_user_threads_made_after_initialize_inherit_rank_0s_core_and_get_theirs_back)
{
    /* Documented (parex/instance.h, "Placement"): the initializing thread is bound to rank 0's
     * PU, as OpenMP's master thread, and threads it creates inherit that; px_finalize gives
     * it its own mask back. */
    int pu = pxi_threads_pu_of_rank(space, 0);
    cpu_set_t m;
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, report_mask, &m), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    if (pu >= 0) {
        ck_assert_int_eq(CPU_COUNT(&m), 1);
        ck_assert(CPU_ISSET((size_t)pu, &m));
    } else {
        ck_assert(CPU_EQUAL(&m, &process_mask));
    }
    ck_assert_int_eq(px_finalize(), PX_OK);
    ck_assert_int_eq(pthread_create(&t, NULL, report_mask, &m), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert(CPU_EQUAL(&m, &process_mask));
    px_test_setup(); /* for the teardown */
}
END_TEST

int main(void)
{
    if (sched_getaffinity(0, sizeof process_mask, &process_mask) != 0)
        CPU_ZERO(&process_mask);
    Suite *s = suite_create("placement");
    TCase *tc = tcase_create("threads");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_a_1_rank_instance_runs_kernels_on_its_core_whichever_thread_launches);
    tcase_add_test(tc, test_a_launcher_bound_to_the_instance_core_runs_the_kernel_itself);
    tcase_add_test(tc,
                   test_a_nested_launch_in_a_handed_off_kernel_runs_inline_on_the_instance_core);
    tcase_add_test(
        tc, test_a_large_deep_copy_async_on_a_1_rank_instance_is_done_on_return_from_any_thread);
    tcase_add_test(tc, test_engine_kernel_ops_placed_on_instances_run_on_the_instances_cores);
    tcase_add_test(tc, test_threads_parex_creates_have_the_documented_masks);
    tcase_add_test(tc, test_an_engine_s_workers_have_started_when_create_returns);
    tcase_add_test(tc, test_an_engine_on_one_processor_has_workers_that_do_not_preempt_on_wake_up);
    tcase_add_test(
        tc, test_user_threads_made_after_initialize_inherit_rank_0s_core_and_get_theirs_back);
    suite_add_tcase(s, tc);
    return px_test_run(s);
}
