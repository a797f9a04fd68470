/* bench/bench_pipeline.c - how many CPU workers the default per_device engine should have
 * (issue 17): the wall time of engine pipelines run with 1, 2, ... CPU workers, relative to 1.
 *
 *   sync      P independent pipelines of S stages; each stage is a sync op spinning for
 *             --stage-us microseconds and writes its pipeline's Var (stage k reads it). With
 *             one worker nothing overlaps; with W workers up to min(W, P, cores) stages run at
 *             once.
 *   kernel    the same pipelines, each stage a parallel_for kernel op on the threads space over
 *             --n doubles (the kernel takes its parallelism from the Threads pool; launches on
 *             one space serialize on its launch lock).
 *   mixed     each pipeline alternates a sync stage and a kernel stage.
 *
 * Output: one line per (workload, workers): median wall ms over --reps runs, the speedup
 * over 1 worker in the same run, and two figures the machine's load does not change: the
 * overlap of sync stages (the mean, over stages, of the most stages running at once while a
 * stage ran: 1.0 when nothing overlaps) and the share of sync stages their pusher ran. Run:
 * build-rel/bench/bench_pipeline [--pipelines 4]
 * [--stages 16] [--stage-us 200] [--n 200000] [--reps 5] [--max-workers 4]. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "parex.h"

static int stage_us = 200;

/* Overlap of sync stages, which the machine's load does not change (wall times on a shared
 * 2-core VM vary 3x between runs): each stage notes the most stages it saw running at once
 * while it spun, and on which thread it ran (worker -1: its pusher). A mean of 1.0 means the
 * stages ran one after the other whatever the wall time says; W workers should give about W. */
static atomic_int stages_running, stages_seen_sum, stages_done, stages_on_pusher;

static int spin_stage(const px_run_context *rc, void *arg)
{
    volatile double *sink = arg;
    int seen = atomic_fetch_add_explicit(&stages_running, 1, memory_order_relaxed) + 1;
    double t_end = bench_now_s() + 1e-6 * stage_us;
    double x = 0;
    while (bench_now_s() < t_end) {
        for (int k = 0; k < 64; ++k)
            x += 1e-9 * k;
        int now = atomic_load_explicit(&stages_running, memory_order_relaxed);
        if (now > seen)
            seen = now;
    }
    *sink += x;
    atomic_fetch_add_explicit(&stages_seen_sum, seen, memory_order_relaxed);
    atomic_fetch_add_explicit(&stages_done, 1, memory_order_relaxed);
    if (rc->worker < 0)
        atomic_fetch_add_explicit(&stages_on_pusher, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&stages_running, 1, memory_order_relaxed);
    return PX_OK;
}

typedef struct {
    double *x;
} scale_args;

static void scale_fn(int64_t b, int64_t e, void *ctx)
{
    double *x = ctx;
    for (int64_t i = b; i < e; ++i)
        x[i] = x[i] * 0.999 + 1.0;
}

enum { W_SYNC, W_KERNEL, W_MIXED, W_COUNT };
static const char *const w_names[W_COUNT] = {"sync", "kernel", "mixed"};

/* One run of @workload on a fresh per_device engine with @workers CPU workers: seconds. */
static double run_once(int workload, int workers, int pipelines, int stages, int64_t n,
                       double **data, double *sinks)
{
    px_engine *e = px_engine_create(PX_ENGINE_PER_DEVICE, workers);
    if (!e) {
        fprintf(stderr, "bench_pipeline: px_engine_create failed\n");
        exit(1);
    }
    px_space *threads = px_space_by_name("threads");
    px_var *v[64];
    for (int p = 0; p < pipelines; ++p)
        v[p] = px_var_new(e);
    double t0 = bench_now_s();
    for (int s = 0; s < stages; ++s) {
        for (int p = 0; p < pipelines; ++p) {
            int kernel = workload == W_KERNEL || (workload == W_MIXED && s % 2 == 1);
            int rc;
            if (kernel)
                rc = px_engine_push_parallel_for_fn(e, threads, "stage", px_range(0, n), scale_fn,
                                                    data[p], NULL, 0, &v[p], 1);
            else
                rc = px_engine_push(e, &(px_op){.fn = spin_stage,
                                                .arg = &sinks[p],
                                                .writes = PX_VARS(v[p]),
                                                .name = "stage"});
            if (rc != PX_OK) {
                fprintf(stderr, "bench_pipeline: push failed: %s\n", px_strerror(rc));
                exit(1);
            }
        }
    }
    if (px_engine_wait_for_all(e) != PX_OK) {
        fprintf(stderr, "bench_pipeline: an op failed\n");
        exit(1);
    }
    double t = bench_now_s() - t0;
    for (int p = 0; p < pipelines; ++p)
        (void)px_var_delete(e, v[p]);
    (void)px_engine_destroy(e);
    return t;
}

static long arg_long(int argc, char **argv, const char *name, long fallback, long lo, long hi)
{
    for (int i = 1; i + 1 < argc; ++i)
        if (strcmp(argv[i], name) == 0) {
            char *end;
            long x = strtol(argv[i + 1], &end, 10);
            if (*end || x < lo || x > hi) {
                fprintf(stderr, "bench_pipeline: %s must be an integer in [%ld, %ld]\n", name, lo,
                        hi);
                exit(2);
            }
            return x;
        }
    return fallback;
}

int main(int argc, char **argv)
{
    if (px_initialize(&argc, &argv) != PX_OK)
        return 1;
    int pipelines = (int)arg_long(argc, argv, "--pipelines", 4, 1, 64);
    int stages = (int)arg_long(argc, argv, "--stages", 16, 1, 100000);
    stage_us = (int)arg_long(argc, argv, "--stage-us", 200, 1, 1000000);
    int64_t n = arg_long(argc, argv, "--n", 200000, 1, 1L << 30);
    int reps = (int)arg_long(argc, argv, "--reps", 5, 1, 1000);
    int max_workers = (int)arg_long(argc, argv, "--max-workers", 4, 1, 64);
    double **data = malloc((size_t)pipelines * sizeof *data);
    double *sinks = calloc((size_t)pipelines, sizeof *sinks);
    double *times = malloc((size_t)reps * sizeof *times);
    if (!data || !sinks || !times)
        return 1;
    for (int p = 0; p < pipelines; ++p) {
        data[p] = calloc((size_t)n, sizeof(double));
        if (!data[p])
            return 1;
    }
    px_space *threads = px_space_by_name("threads");
    printf("# bench_pipeline: %d pipelines x %d stages, sync stage %d us, kernel n %lld, "
           "threads space %d ranks, %d reps (median)\n",
           pipelines, stages, stage_us, (long long)n, threads ? px_space_concurrency(threads) : 0,
           reps);
    printf("# %-7s %8s %12s %10s %8s %10s\n", "work", "workers", "median_ms", "speedup", "overlap",
           "on_pusher");
    for (int w = 0; w < W_COUNT; ++w) {
        double base = 0;
        for (int workers = 1; workers <= max_workers; workers *= 2) {
            atomic_store(&stages_seen_sum, 0);
            atomic_store(&stages_done, 0);
            atomic_store(&stages_on_pusher, 0);
            for (int r = 0; r < reps; ++r)
                times[r] = run_once(w, workers, pipelines, stages, n, data, sinks);
            double med = bench_median(times, reps);
            if (workers == 1)
                base = med;
            int done = atomic_load(&stages_done);
            double overlap = done ? (double)atomic_load(&stages_seen_sum) / done : 0.0;
            double on_pusher = done ? (double)atomic_load(&stages_on_pusher) / done : 0.0;
            printf("  %-7s %8d %12.3f %10.2f %8.2f %10.2f\n", w_names[w], workers, 1e3 * med,
                   base / med, overlap, on_pusher);
            fflush(stdout);
        }
    }
    for (int p = 0; p < pipelines; ++p)
        free(data[p]);
    free(data);
    free(sinks);
    free(times);
    return px_finalize() == PX_OK ? 0 : 1;
}
