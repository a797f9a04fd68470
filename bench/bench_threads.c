/* bench/bench_threads.c - the Threads space against OpenMP (libgomp) in one process, same
 * thread count, medians of alternating rounds (bench/RESULTS.md, "## Threads").
 *
 *   OMP_PROC_BIND=close OMP_PLACES=cores PX_NUM_THREADS=2 bench_threads [--rounds R] [--log2n L]
 *                                         [--only NAME] [--spin-sweep] [--dynamic-modes]
 *
 * Each benchmark runs R rounds; a round times one batch with parex and one with OpenMP (the
 * order alternates between rounds), with a pause between batches so the other runtime's idle
 * workers have gone to sleep. Printed: median time per operation (or GB/s) of each, and the
 * ratio parex/OpenMP for times (lower is better) or parex/OpenMP for bandwidths (higher is
 * better). A line "DATA <threads> <name> <parex> <omp> <ratio>" per benchmark feeds the plots.
 *
 * The parex side uses PX_FOR / PX_REDUCE / PX_SCAN kernels on the "threads" space; the OpenMP
 * side the equivalent worksharing loops (reduction, inscan, schedule(dynamic, chunk)) compiled
 * in this same file with the same flags. */
#define _GNU_SOURCE /* pthread_{get,set}affinity_np, see widen_affinity */
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#include "parex.h"
#include "spaces/threads/threads.h"

static double cpu_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void pause_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* OMP_PROC_BIND makes libgomp bind the initial thread to the first place at startup, before
 * main, so the process cpuset hwloc reports would be one core and parex would put every rank
 * there. Widen the main thread's mask around px_initialize (parex does not bind the caller) and
 * restore libgomp's binding after, so both runtimes start from the same placement. */
static cpu_set_t saved_mask;

static void widen_affinity(void)
{
    pthread_getaffinity_np(pthread_self(), sizeof saved_mask, &saved_mask);
    cpu_set_t all;
    CPU_ZERO(&all);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < n && c < CPU_SETSIZE; ++c)
        CPU_SET((int)c, &all);
    pthread_setaffinity_np(pthread_self(), sizeof all, &all);
}

static void restore_affinity(void)
{
    pthread_setaffinity_np(pthread_self(), sizeof saved_mask, &saved_mask);
}

/* parex leaves the launching thread's binding alone; on a loaded machine the OS may then move
 * it onto a core whose worker is spinning, which measures the scheduler, not the pool. The
 * sweep binds the caller to CPU 0 (rank 0's PU under PX_BIND=close), as libgomp does under
 * OMP_PROC_BIND. */
static void bind_caller_to_cpu0(void)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
}

/* ---- kernels -------------------------------------------------------------------------------- */

typedef struct {
    double *a;
    const double *b, *c;
    double s;
} triad_args;

PX_FOR(k_empty, triad_args, i, a)
{
    (void)i;
    (void)a;
}
PX_REDUCE(k_sum, triad_args, double, i, a, acc)
{
    *acc += a->b[i];
}
PX_FOR(k_triad, triad_args, i, a)
{
    a->a[i] = a->b[i] + a->s * a->c[i];
}
PX_FOR(k_init, triad_args, i, a)
{
    a->a[i] = 0.0;
    ((double *)a->b)[i] = 1.0 + (double)(i & 7);
    ((double *)a->c)[i] = 0.5;
}

typedef struct {
    const int64_t *in;
    int64_t *out;
} scan_args;

PX_SCAN(k_xscan, scan_args, int64_t, i, a, partial, final_pass)
{
    if (final_pass)
        a->out[i] = *partial;
    *partial += a->in[i];
}

/* Imbalanced work: iteration i costs about i / 4 dependent multiply-adds (a triangle), so a
 * static split leaves the last rank with most of the work. */
typedef struct {
    double *out;
} imb_args;

static inline double imb_work(int64_t i)
{
    double x = (double)i * 1e-9 + 1.0;
    for (int64_t k = 0; k < i / 4; ++k)
        x = x * 0.999999 + 1e-7;
    return x;
}

PX_FOR(k_imb, imb_args, i, a)
{
    a->out[i] = imb_work(i);
}

/* ---- one benchmark
 * -------------------------------------------------------------------------------- */

typedef enum { TIME_PER_OP, BANDWIDTH } metric;

typedef struct bench {
    const char *name;
    metric m;
    double bytes; /* per op, for BANDWIDTH */
    int batch;    /* ops per timed batch */
    void (*run_parex)(void);
    void (*run_omp)(void);
} bench;

static int nthreads;
static int rounds = 7;
static int64_t n_big = 1 << 24;
static px_space *space;
static double *A, *B, *C;
static int64_t *IN, *OUT;
static double SINK;
static const int64_t n_imb = 1 << 14;
static const int64_t imb_chunk = 16;

static void parex_empty(void)
{
    triad_args a = {A, B, C, 0};
    (void)px_parallel_for(space, "empty", px_range(0, 2), &k_empty, &a, sizeof a);
}

static void omp_empty(void)
{
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < 2; ++i) {
        (void)i;
    }
}

static void parex_reduce2(void)
{
    triad_args a = {A, B, C, 0};
    double s = 0;
    (void)px_parallel_reduce(space, "reduce2", px_range(0, 2), &k_sum, &a, sizeof a, &px_sum_f64,
                             &s);
    SINK += s;
}

static void omp_reduce2(void)
{
    double s = 0;
    const double *b = B;
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (int64_t i = 0; i < 2; ++i)
        s += b[i];
    SINK += s;
}

static void parex_sum(void)
{
    triad_args a = {A, B, C, 0};
    double s = 0;
    (void)px_parallel_reduce(space, "sum", px_range(0, n_big), &k_sum, &a, sizeof a, &px_sum_f64,
                             &s);
    SINK += s;
}

static void omp_sum(void)
{
    double s = 0;
    const double *b = B;
    int64_t n = n_big;
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (int64_t i = 0; i < n; ++i)
        s += b[i];
    SINK += s;
}

static void parex_triad(void)
{
    triad_args a = {A, B, C, 3.0};
    (void)px_parallel_for(space, "triad", px_range(0, n_big), &k_triad, &a, sizeof a);
}

static void omp_triad(void)
{
    double *restrict a = A;
    const double *restrict b = B, *restrict c = C;
    int64_t n = n_big;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i)
        a[i] = b[i] + 3.0 * c[i];
}

static void parex_scan(void)
{
    scan_args a = {IN, OUT};
    int64_t t = 0;
    (void)px_parallel_scan(space, "scan", px_range(0, n_big), &k_xscan, &a, sizeof a, &px_sum_i64,
                           &t);
    SINK += (double)t;
}

static void omp_scan(void)
{
    const int64_t *in = IN;
    int64_t *out = OUT, s = 0, n = n_big;
#pragma omp parallel for reduction(inscan, + : s)
    for (int64_t i = 0; i < n; ++i) {
        out[i] = s;
#pragma omp scan exclusive(s)
        s += in[i];
    }
    SINK += (double)s;
}

/* The strongest plain-OpenMP exclusive scan we know: one parallel region, each thread sums its
 * static block, a barrier, each thread adds up the totals before it and rescans its block
 * writing outputs. Reported next to the inscan version (GCC's inscan lowering is slower). */
static void omp_scan_manual(void)
{
    const int64_t *in = IN;
    int64_t *out = OUT, n = n_big;
    int64_t totals[256];
#pragma omp parallel
    {
        int t = omp_get_thread_num(), p = omp_get_num_threads();
        int64_t b = n * t / p, e = n * (t + 1) / p, s = 0;
        for (int64_t i = b; i < e; ++i)
            s += in[i];
        totals[t] = s;
#pragma omp barrier
        int64_t run = 0;
        for (int k = 0; k < t; ++k)
            run += totals[k];
        for (int64_t i = b; i < e; ++i) {
            out[i] = run;
            run += in[i];
        }
    }
    SINK += (double)totals[0];
}

static void parex_imb(void)
{
    imb_args a = {A};
    (void)px_parallel_for(space, "imbalanced",
                          px_range_chunked(0, n_imb, imb_chunk, PX_SCHEDULE_DYNAMIC), &k_imb, &a,
                          sizeof a);
}

static void omp_imb(void)
{
    double *out = A;
    int64_t n = n_imb;
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t i = 0; i < n; ++i)
        out[i] = imb_work(i);
}

static double time_batch(void (*fn)(void), int batch)
{
    double t0 = bench_now_s();
    for (int k = 0; k < batch; ++k)
        fn();
    return (bench_now_s() - t0) / batch;
}

/* Run one benchmark; returns parex/omp ratio oriented so that <= 1 is "as fast or faster" for
 * times, and >= 1 for bandwidths. */
static void run(const bench *b)
{
    double tp[64], to[64];
    int r = rounds > 64 ? 64 : rounds;
    /* Warm-up both (page faults, first dispatch). */
    b->run_parex();
    b->run_omp();
    pause_ms(30);
    for (int k = 0; k < r; ++k) {
        if (k % 2 == 0) {
            tp[k] = time_batch(b->run_parex, b->batch);
            pause_ms(30);
            to[k] = time_batch(b->run_omp, b->batch);
        } else {
            to[k] = time_batch(b->run_omp, b->batch);
            pause_ms(30);
            tp[k] = time_batch(b->run_parex, b->batch);
        }
        pause_ms(30);
    }
    double mp = bench_median(tp, r), mo = bench_median(to, r);
    if (b->m == TIME_PER_OP) {
        printf("%-14s parex %10.3f us   omp %10.3f us   parex/omp time %.3f\n", b->name, mp * 1e6,
               mo * 1e6, mp / mo);
        printf("DATA %d %s %.6g %.6g %.4f\n", nthreads, b->name, mp * 1e6, mo * 1e6, mp / mo);
    } else {
        double gp = b->bytes / mp / 1e9, go = b->bytes / mo / 1e9;
        printf("%-14s parex %10.2f GB/s omp %10.2f GB/s parex/omp bandwidth %.3f\n", b->name, gp,
               go, gp / go);
        printf("DATA %d %s %.6g %.6g %.4f\n", nthreads, b->name, gp, go, gp / go);
    }
    fflush(stdout);
}

/* ---- spin budget sweep and dynamic claim modes ---------------------------------------------- */

static void busy_us(double us)
{
    double t_end = bench_now_s() + us * 1e-6;
    while (bench_now_s() < t_end) {
    }
}

/* For each spin budget: latency of a 2-element reduce after a gap of serial work on the caller,
 * and the CPU the pool spends per launch beyond the caller's own. Rounds cycle through the
 * budgets (a fresh runtime each time) and each cell reports the median over rounds. */
#define SWEEP_SPINS 6
#define SWEEP_GAPS  5
static void spin_sweep(void)
{
    static const char *spins[SWEEP_SPINS] = {"0", "10", "30", "100", "300", "1000"};
    static const double gaps[SWEEP_GAPS] = {0, 20, 50, 200, 1000};
    static double lat[SWEEP_SPINS][SWEEP_GAPS][64], cpu[SWEEP_SPINS][SWEEP_GAPS][64];
    int r = rounds > 64 ? 64 : rounds;
    for (int k = 0; k < r; ++k)
        for (int s = 0; s < SWEEP_SPINS; ++s) {
            setenv("PX_SPIN_US", spins[s], 1);
            widen_affinity();
            int rc = px_initialize(NULL, NULL);
            bind_caller_to_cpu0();
            if (rc != PX_OK)
                exit(1);
            space = px_space_by_name("threads");
            for (int w = 0; w < 2000; ++w) /* warm-up: workers scheduled, pages touched */
                parex_reduce2();
            for (int g = 0; g < SWEEP_GAPS; ++g) {
                int reps = gaps[g] >= 1000 ? 200 : 1000;
                double sum = 0;
                double c0 = cpu_s(CLOCK_PROCESS_CPUTIME_ID), m0 = cpu_s(CLOCK_THREAD_CPUTIME_ID);
                for (int q = 0; q < reps; ++q) {
                    busy_us(gaps[g]);
                    double t0 = bench_now_s();
                    parex_reduce2();
                    sum += bench_now_s() - t0;
                }
                double other =
                    (cpu_s(CLOCK_PROCESS_CPUTIME_ID) - c0) - (cpu_s(CLOCK_THREAD_CPUTIME_ID) - m0);
                lat[s][g][k] = sum / reps * 1e6;
                cpu[s][g][k] = other / reps * 1e6;
            }
            px_finalize();
            restore_affinity();
        }
    unsetenv("PX_SPIN_US");
    printf("spin sweep (%d threads, median of %d rounds): latency (us) of a reduce over 2 "
           "doubles after a gap of caller work / CPU (us) the rest of the process spent per "
           "launch\n%-8s",
           nthreads, r, "spin_us");
    for (int g = 0; g < SWEEP_GAPS; ++g)
        printf("   gap %5.0f us     ", gaps[g]);
    printf("\n");
    for (int s = 0; s < SWEEP_SPINS; ++s) {
        printf("%-8s", spins[s]);
        for (int g = 0; g < SWEEP_GAPS; ++g)
            printf("   %7.2f / %7.2f ", bench_median(lat[s][g], r), bench_median(cpu[s][g], r));
        printf("\n");
    }
}

static void parex_fine(void)
{
    triad_args a = {A, B, C, 3.0};
    (void)px_parallel_for(space, "fine", px_range_chunked(0, 1 << 16, 64, PX_SCHEDULE_DYNAMIC),
                          &k_triad, &a, sizeof a);
}

static void dynamic_modes(void)
{
    const char *names[] = {"steal", "shared"};
    pxi_threads_dynamic_mode modes[] = {PXI_DYNAMIC_STEAL, PXI_DYNAMIC_SHARED};
    double ti[2][64], tf[2][64];
    int r = rounds > 64 ? 64 : rounds;
    for (int k = 0; k < r; ++k)
        for (int m0 = 0; m0 < 2; ++m0) {
            int m = (k + m0) % 2;
            pxi_threads_set_dynamic_mode(modes[m]);
            ti[m][k] = time_batch(parex_imb, 5);
            tf[m][k] = time_batch(parex_fine, 200);
        }
    for (int m = 0; m < 2; ++m)
        printf("dynamic %-6s imbalanced %9.3f us   fine-grained (1024 chunks of 64) %8.3f us\n",
               names[m], bench_median(ti[m], r) * 1e6, bench_median(tf[m], r) * 1e6);
    pxi_threads_set_dynamic_mode(PXI_DYNAMIC_STEAL);
}

int main(int argc, char **argv)
{
    const char *only = NULL;
    int sweep = 0, modes = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--log2n") == 0 && i + 1 < argc)
            n_big = (int64_t)1 << atoi(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--spin-sweep") == 0)
            sweep = 1;
        else if (strcmp(argv[i], "--dynamic-modes") == 0)
            modes = 1;
        else {
            fprintf(stderr,
                    "usage: %s [--rounds R] [--log2n L] [--only NAME] [--spin-sweep] "
                    "[--dynamic-modes]\n",
                    argv[0]);
            return 2;
        }
    }
    if (rounds < 1)
        rounds = 1;
    size_t nb = (size_t)n_big;
    A = malloc(nb * sizeof *A);
    B = malloc(nb * sizeof *B);
    C = malloc(nb * sizeof *C);
    IN = malloc(nb * sizeof *IN);
    OUT = malloc(nb * sizeof *OUT);
    if (!A || !B || !C || !IN || !OUT) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    if (sweep) {
        const char *t = getenv("PX_NUM_THREADS");
        nthreads = t ? atoi(t) : 0;
        spin_sweep();
        return 0;
    }
    widen_affinity();
    int rc = px_initialize(&argc, &argv);
    restore_affinity();
    if (rc != PX_OK) {
        fprintf(stderr, "px_initialize: %s\n", px_strerror(rc));
        return 1;
    }
    space = px_space_by_name("threads");
    nthreads = px_space_concurrency(space);
    if (nthreads > 256) {
        fprintf(stderr, "bench_threads: at most 256 threads\n");
        return 1;
    }
    omp_set_num_threads(nthreads);
    /* First touch with the static partition both runtimes use. */
    triad_args ia = {A, B, C, 0};
    (void)px_parallel_for(space, "init", px_range(0, n_big), &k_init, &ia, sizeof ia);
    for (int64_t i = 0; i < n_big; ++i) {
        IN[i] = i % 3;
        OUT[i] = 0;
    }
    const char *bind = getenv("OMP_PROC_BIND"), *places = getenv("OMP_PLACES");
    printf("threads %d, n = %lld, rounds %d, OMP_PROC_BIND=%s OMP_PLACES=%s\n", nthreads,
           (long long)n_big, rounds, bind ? bind : "(unset)", places ? places : "(unset)");
    if (modes) {
        dynamic_modes();
        px_finalize();
        return 0;
    }
    double nbytes = (double)n_big * 8.0;
    const bench benches[] = {
        {"empty_for_2", TIME_PER_OP, 0, 20000, parex_empty, omp_empty},
        {"reduce_2", TIME_PER_OP, 0, 20000, parex_reduce2, omp_reduce2},
        {"sum_2^24", BANDWIDTH, nbytes, 10, parex_sum, omp_sum},
        {"triad_2^24", BANDWIDTH, 3 * nbytes, 10, parex_triad, omp_triad},
        {"scan_2^24", BANDWIDTH, 2 * nbytes, 5, parex_scan, omp_scan},
        {"scan_2^24_vs_manual", BANDWIDTH, 2 * nbytes, 5, parex_scan, omp_scan_manual},
        {"imbalanced", TIME_PER_OP, 0, 5, parex_imb, omp_imb},
    };
    for (size_t i = 0; i < sizeof benches / sizeof benches[0]; ++i)
        if (!only || strcmp(only, benches[i].name) == 0)
            run(&benches[i]);
    if (!only || strcmp(only, "idle") == 0) {
        /* Idle cost: a burst of launches, then one second of idleness (Kokkos' Threads backend
         * spins through it on every core, issue #6686). Waits out libgomp's own spin first. */
        pause_ms(500);
        for (int k = 0; k < 20000; ++k)
            parex_empty();
        double c0 = cpu_s(CLOCK_PROCESS_CPUTIME_ID);
        pause_ms(1000);
        double idle = cpu_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
        printf("idle           1 s after 20000 launches cost %.2f ms of process CPU\n", idle * 1e3);
        printf("DATA %d idle_cpu_ms %.4g 0 0\n", nthreads, idle * 1e3);
    }
    /* Check the scan once so a wrong result cannot pass as a fast one. */
    parex_scan();
    int64_t run_sum = 0;
    for (int64_t i = 0; i < n_big; ++i) {
        if (OUT[i] != run_sum) {
            fprintf(stderr, "scan result wrong at %lld\n", (long long)i);
            return 1;
        }
        run_sum += IN[i];
    }
    if (SINK == 42.0)
        printf("sink\n");
    px_finalize();
    free(A);
    free(B);
    free(C);
    free(IN);
    free(OUT);
    return 0;
}
