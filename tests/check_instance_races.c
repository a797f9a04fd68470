/*
 * tests/check_instance_races.c - execution-space instances under concurrent calls
 * (parex/instance.h): destroys beside kernels on other instances, one instance destroyed from two
 * threads, partitions and destroys from several threads beside px_fence(NULL), and partitions
 * and destroys while px_fence(NULL) waits for a long kernel. Waits are bounded (WAIT_S), and
 * the suite runs under TSan with 1 to 4 ranks on the 2-core machine (tests/instance.cmake).
 */
#define _GNU_SOURCE /* syscall(SYS_gettid) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "instance_common.h"
#include "px_test.h"

/* Instances of one partition are independent: destroying one returns while a kernel on the
 * other is still running (and that kernel is not disturbed). */
START_TEST(test_destroying_one_instance_does_not_wait_for_a_kernel_on_another)
{
    if (threads_space && nranks < 2)
        return;
    px_space *inst[2];
    ck_assert_int_eq(px_space_partition(space, 2, NULL, inst), PX_OK);
    gate g = {0};
    gated_launch gl = {inst[1], &g, -1};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, launch_gated, &gl), 0);
    ck_assert(wait_flag(&g.started));
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
    ck_assert_int_eq(atomic_load(&g.done), 0); /* returned while inst[1]'s kernel waits */
    atomic_store_explicit(&g.open, 1, memory_order_release);
    pthread_join(t, NULL);
    ck_assert_int_eq(gl.rc, PX_OK);
    ck_assert(atomic_load(&g.met));
    check_launch_on(inst[1], 1000);
    ck_assert_int_eq(px_space_instance_destroy(inst[1]), PX_OK);
}
END_TEST

typedef struct racer {
    px_space *victim;
    atomic_int *go;
    int rc;
} racer;

static void *destroy_racer(void *arg)
{
    racer *r = arg;
    (void)wait_flag(r->go);
    r->rc = px_space_instance_destroy(r->victim);
    return NULL;
}

START_TEST(test_one_instance_destroyed_from_two_threads_at_once_is_destroyed_once)
{
    for (int round = 0; round < 10; ++round) {
        px_space *inst[1];
        ck_assert_int_eq(px_space_partition(space, 1, NULL, inst), PX_OK);
        atomic_int go = 0;
        racer r[2] = {{inst[0], &go, -1}, {inst[0], &go, -1}};
        pthread_t t[2];
        for (int i = 0; i < 2; ++i)
            ck_assert_int_eq(pthread_create(&t[i], NULL, destroy_racer, &r[i]), 0);
        atomic_store_explicit(&go, 1, memory_order_release);
        for (int i = 0; i < 2; ++i)
            pthread_join(t[i], NULL);
        ck_assert_msg((r[0].rc == PX_OK && r[1].rc == PX_EINVAL) ||
                          (r[0].rc == PX_EINVAL && r[1].rc == PX_OK),
                      "round %d: %s and %s", round, px_strerror(r[0].rc), px_strerror(r[1].rc));
    }
}
END_TEST

/* Three threads partition, launch and destroy in a loop while a fourth fences everything:
 * the live list and the lanes stay consistent (TSan), every launch is right. */
typedef struct cycler {
    int bad;
    atomic_int *stop;
} cycler;

static void *cycle_main(void *arg)
{
    cycler *c = arg;
    for (int k = 0; k < 8; ++k) {
        px_space *inst[1];
        if (px_space_partition(space, 1, NULL, inst) != PX_OK) {
            c->bad++;
            continue;
        }
        atomic_llong hits;
        atomic_init(&hits, 0);
        if (px_parallel_for_fn(inst[0], "cycle", px_range(0, 300), count_indices, &hits) != PX_OK ||
            atomic_load(&hits) != 300)
            c->bad++;
        if (px_space_instance_destroy(inst[0]) != PX_OK)
            c->bad++;
    }
    return NULL;
}

static void *fence_main(void *arg)
{
    cycler *c = arg;
    while (!atomic_load_explicit(c->stop, memory_order_acquire))
        if (px_fence(NULL) != PX_OK)
            c->bad++;
    return NULL;
}

START_TEST(test_partition_launch_destroy_from_three_threads_beside_a_fencing_one)
{
    atomic_int stop = 0;
    cycler c[4];
    pthread_t t[4];
    for (int i = 0; i < 4; ++i) {
        c[i] = (cycler){0, &stop};
        ck_assert_int_eq(pthread_create(&t[i], NULL, i < 3 ? cycle_main : fence_main, &c[i]), 0);
    }
    for (int i = 0; i < 3; ++i)
        pthread_join(t[i], NULL);
    atomic_store_explicit(&stop, 1, memory_order_release);
    pthread_join(t[3], NULL);
    for (int i = 0; i < 4; ++i)
        ck_assert_int_eq(c[i].bad, 0);
}
END_TEST

/* Nonzero once thread @tid of this process sleeps (state S in /proc: blocked, not running). */
static int thread_sleeps(long tid)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/self/task/%ld/stat", tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    const char *paren = got ? strrchr(line, ')') : NULL;
    return paren && paren[1] == ' ' && paren[2] == 'S';
}

typedef struct global_fence {
    atomic_long tid;
    atomic_int done;
    int rc;
} global_fence;

static void *fence_everything(void *arg)
{
    global_fence *f = arg;
    atomic_store_explicit(&f->tid, (long)syscall(SYS_gettid), memory_order_release);
    f->rc = px_fence(NULL);
    atomic_store_explicit(&f->done, 1, memory_order_release);
    return NULL;
}

typedef struct make_and_drop {
    atomic_int done;
    int bad;
} make_and_drop;

static void *partition_launch_destroy(void *arg)
{
    make_and_drop *m = arg;
    px_space *inst[1];
    if (px_space_partition(space, 1, NULL, inst) != PX_OK) {
        m->bad = 1;
    } else {
        check_launch_on(inst[0], 100);
        m->bad = px_space_instance_destroy(inst[0]) != PX_OK;
    }
    atomic_store_explicit(&m->done, 1, memory_order_release);
    return NULL;
}

/* px_fence(NULL) waits for a kernel in flight on an instance; meanwhile other threads' partitions
 * and destroys of other instances go on (they do not wait for that kernel, which might itself
 * be waiting for them). */
START_TEST(test_partition_and_destroy_go_on_while_a_global_fence_waits_for_a_kernel)
{
    if (!threads_space)
        return; /* a serial fence does not wait for launches on other threads */
    px_space *inst[1];
    ck_assert_int_eq(px_space_partition(space, 1, NULL, inst), PX_OK);
    gate g = {0};
    gated_launch gl = {inst[0], &g, -1};
    global_fence f = {0};
    make_and_drop m = {0};
    pthread_t tk, tf, tm;
    ck_assert_int_eq(pthread_create(&tk, NULL, launch_gated, &gl), 0);
    ck_assert(wait_flag(&g.started));
    ck_assert_int_eq(pthread_create(&tf, NULL, fence_everything, &f), 0);
    /* The fence is under way once its thread sleeps (on the instance, the kernel being held). */
    double end = now_s() + WAIT_S;
    while (!(atomic_load(&f.tid) && thread_sleeps(atomic_load(&f.tid))) && now_s() < end)
        sched_yield();
    ck_assert_int_eq(pthread_create(&tm, NULL, partition_launch_destroy, &m), 0);
    end = now_s() + WAIT_S; /* as long as any bounded wait here (TSan, 4 threads on 2 cores) */
    while (!atomic_load_explicit(&m.done, memory_order_acquire) && now_s() < end)
        sched_yield();
    int went_on = atomic_load_explicit(&m.done, memory_order_acquire);
    int fence_waited = !atomic_load_explicit(&f.done, memory_order_acquire);
    atomic_store_explicit(&g.open, 1, memory_order_release);
    pthread_join(tk, NULL);
    pthread_join(tf, NULL);
    pthread_join(tm, NULL);
    ck_assert_msg(went_on, "a partition and destroy waited for px_fence(NULL)'s kernel");
    ck_assert(fence_waited);
    ck_assert_int_eq(m.bad, 0);
    ck_assert_int_eq(f.rc, PX_OK);
    ck_assert_int_eq(gl.rc, PX_OK);
    ck_assert(atomic_load(&g.met));
    ck_assert_int_eq(px_space_instance_destroy(inst[0]), PX_OK);
}
END_TEST

static Suite *instance_races_suite(void)
{
    Suite *s = suite_create("instance_races");
    TCase *tc = tcase_create("races");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_destroying_one_instance_does_not_wait_for_a_kernel_on_another);
    tcase_add_test(tc, test_one_instance_destroyed_from_two_threads_at_once_is_destroyed_once);
    tcase_add_test(tc, test_partition_launch_destroy_from_three_threads_beside_a_fencing_one);
    tcase_add_test(tc, test_partition_and_destroy_go_on_while_a_global_fence_waits_for_a_kernel);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(instance_races_suite());
}
