/* bench/bench_instance.c - launch latency of an empty parallel_for on Threads instances, and
 * the CPU its rank 0 ran on (parex/instance.h, "Placement"; spaces/threads/pool.h).
 *
 *   PX_NUM_THREADS=2 bench_instance [--rounds R] [--launches K] [--only CASE]
 *
 * Needs 2 CPUs in the affinity mask and 2 ranks. Cases, each the median over R rounds of K
 * back-to-back launches (ns per launch):
 *   space            the Threads space from the initializing thread (bound to rank 0's core):
 *                    the default path, which instances must not slow;
 *   whole_instance   a 2-rank instance over every core, same thread (placed: runs rank 0);
 *   own_core         a 1-rank instance on rank 0's core, same thread (placed);
 *   other_core       a 1-rank instance on rank 1's core, from the initializing thread on
 *                    rank 0's core: the hand-off to the instance's rank-0 thread;
 *   other_core_bound the same instance from a thread bound to its core (placed again);
 *   cross_50us       two threads, each bound to the other instance's core, each launching
 *                    50 us kernels on its instance at the same time (K / 20 launches each):
 *                    us per launch (ideal 50). A launcher waiting for a hand-off sits on the
 *                    core the other instance's kernel needs, so a waiter that keeps its core
 *                    slows the other instance down; before rank-0 threads both kernels ran on
 *                    their launchers' cores, crossed.
 * "cpu" is where the kernel ran in the last launch and "want" the instance's core. Uses only
 * the public API, so the same file builds against earlier parex (where a launch always ran
 * rank 0 on the launching thread) for before/after figures. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#include "parex.h"

static int rounds = 15;
static const char *only; /* one case (for callgrind: --toggle-collect=time_launches) */
static int launches = 2000;
static atomic_int ran_on;

static void empty(int64_t b, int64_t e, void *ctx)
{
    (void)b;
    (void)e;
    (void)ctx;
    atomic_store_explicit(&ran_on, sched_getcpu(), memory_order_relaxed);
}

/* Median ns per launch of an empty 1-index parallel_for on @s. */
static double time_launches(px_space *s)
{
    double *v = malloc((size_t)rounds * sizeof *v);
    if (!v)
        abort();
    for (int k = 0; k < 100; ++k)
        (void)px_parallel_for_fn(s, "empty", px_range(0, 1), empty, NULL);
    for (int r = 0; r < rounds; ++r) {
        double t0 = bench_now_s();
        for (int k = 0; k < launches; ++k)
            (void)px_parallel_for_fn(s, "empty", px_range(0, 1), empty, NULL);
        v[r] = (bench_now_s() - t0) / launches * 1e9;
    }
    double m = bench_median(v, rounds);
    free(v);
    return m;
}

static int wanted(const char *name)
{
    return !only || strcmp(only, name) == 0;
}

static void report(const char *name, double ns, int want)
{
    int cpu = atomic_load(&ran_on);
    printf("%-17s %9.1f ns/launch  cpu %d  want %d%s\n", name, ns, cpu, want,
           cpu == want ? "" : "  (wrong core)");
    printf("DATA %s %.1f %d %d\n", name, ns, cpu, want);
}

/* A kernel of about 50 us of work on its one index. */
static void busy_50us(int64_t b, int64_t e, void *ctx)
{
    (void)b;
    (void)e;
    (void)ctx;
    double t0 = bench_now_s();
    while (bench_now_s() - t0 < 50e-6)
        ;
    atomic_store_explicit(&ran_on, sched_getcpu(), memory_order_relaxed);
}

typedef struct cross_run {
    int cpu;
    px_space *s;
    int n;
    double us;
    pthread_barrier_t *go;
} cross_run;

/* Bind the calling thread to CPU @cpu (a warning on failure: the run goes on unbound). */
static void pin_to_cpu(int cpu)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET((size_t)cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0)
        perror("sched_setaffinity");
}

static void *run_cross(void *arg)
{
    cross_run *c = arg;
    pin_to_cpu(c->cpu);
    pthread_barrier_wait(c->go);
    double t0 = bench_now_s();
    for (int k = 0; k < c->n; ++k)
        (void)px_parallel_for_fn(c->s, "busy", px_range(0, 1), busy_50us, NULL);
    c->us = (bench_now_s() - t0) / c->n * 1e6;
    return NULL;
}

/* Median over the rounds of the slower thread's us per launch. */
static double time_cross(px_space *a, int cpu_a, px_space *b, int cpu_b)
{
    double *v = malloc((size_t)rounds * sizeof *v);
    if (!v)
        abort();
    int n = launches / 20 > 0 ? launches / 20 : 1;
    for (int r = 0; r < rounds; ++r) {
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, 2);
        cross_run x[2] = {{cpu_b, a, n, 0, &go}, {cpu_a, b, n, 0, &go}};
        pthread_t t[2];
        for (int i = 0; i < 2; ++i)
            if (pthread_create(&t[i], NULL, run_cross, &x[i]) != 0)
                abort();
        for (int i = 0; i < 2; ++i)
            pthread_join(t[i], NULL);
        pthread_barrier_destroy(&go);
        v[r] = x[0].us > x[1].us ? x[0].us : x[1].us;
    }
    double m = bench_median(v, rounds);
    free(v);
    return m;
}

typedef struct bound_run {
    int cpu;
    px_space *s;
    double ns;
} bound_run;

static void *run_bound(void *arg)
{
    bound_run *b = arg;
    pin_to_cpu(b->cpu);
    b->ns = time_launches(b->s);
    return NULL;
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--launches") == 0)
            launches = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--only") == 0)
            only = argv[i + 1];
    }
    if (rounds < 1 || launches < 1) {
        fprintf(stderr, "bench_instance: --rounds and --launches must be >= 1\n");
        return 2;
    }
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof mask, &mask) != 0 || CPU_COUNT(&mask) < 2) {
        fprintf(stderr, "bench_instance: needs 2 CPUs in the affinity mask\n");
        return 2;
    }
    if (px_initialize(NULL, NULL) != PX_OK)
        return 1;
    px_space *space = px_space_by_name("threads");
    if (space && only && strcmp(only, "space") == 0) {
        /* The default path alone, at any rank count (PX_NUM_THREADS=1: no fan-in wait, so a
         * callgrind count of it is exact). */
        report("space", time_launches(space), sched_getcpu());
        px_finalize();
        return 0;
    }
    if (!space || px_space_concurrency(space) != 2) {
        fprintf(stderr, "bench_instance: run with PX_NUM_THREADS=2\n");
        px_finalize();
        return 2;
    }
    /* Close binding: rank 0 on the first CPU of the mask, rank 1 on the second. */
    int cpu0 = -1, cpu1 = -1;
    for (int c = 0; c < CPU_SETSIZE && cpu1 < 0; ++c)
        if (CPU_ISSET(c, &mask))
            *(cpu0 < 0 ? &cpu0 : &cpu1) = c;
    px_space *whole, *one[2];
    if (px_space_partition(space, 1, NULL, &whole) != PX_OK ||
        px_space_partition(space, 2, NULL, one) != PX_OK) {
        px_finalize();
        return 1;
    }
    printf("rounds %d x %d launches, empty parallel_for over 1 index (loaded machine: smoke)\n",
           rounds, launches);
    if (wanted("space"))
        report("space", time_launches(space), sched_getcpu());
    if (wanted("whole_instance"))
        report("whole_instance", time_launches(whole), sched_getcpu());
    if (wanted("own_core"))
        report("own_core", time_launches(one[0]), cpu0);
    if (wanted("other_core"))
        report("other_core", time_launches(one[1]), cpu1);
    bound_run b = {cpu1, one[1], 0};
    pthread_t t;
    if (wanted("other_core_bound") && pthread_create(&t, NULL, run_bound, &b) == 0) {
        pthread_join(t, NULL);
        report("other_core_bound", b.ns, cpu1);
    }
    if (wanted("cross_50us")) {
        double us = time_cross(one[0], cpu0, one[1], cpu1);
        printf("%-17s %9.1f us/launch (ideal 50)\n", "cross_50us", us);
        printf("DATA cross_50us %.1f\n", us);
    }
    (void)px_space_instance_destroy(whole);
    (void)px_space_instance_destroy(one[0]);
    (void)px_space_instance_destroy(one[1]);
    px_finalize();
    return 0;
}
