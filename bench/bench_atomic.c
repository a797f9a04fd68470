/* bench/bench_atomic.c - host f64 atomic add: parex's relaxed CAS loop on the bit pattern
 * (px_atomic_add_f64) against C11 `_Atomic double +=` (the compiler's only builtin spelling of
 * a floating atomic add in C; GCC has no floating __atomic_fetch_add) and, as the floor, an
 * integer __atomic_fetch_add (lock xadd) on the same traffic. Two patterns: every thread on one
 * contended cell, and threads on cells spread over 4096 lines (little contention). Prints the
 * median ns per add over the repetitions, each variant interleaved with the others.
 *
 *   bench_atomic [threads=2] [adds_per_thread=2000000] [reps=7]
 *
 * Smoke-run it for correctness only on a loaded machine; the figures are taken elsewhere. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "parex/atomic.h"

#define NCELLS 4096 /* spread pattern: one cell per 64-byte line */

typedef struct {
    alignas(64) double d;
    char pad[64 - sizeof(double)];
} line_f64;
typedef struct {
    alignas(64) _Atomic double d;
    char pad[64 - sizeof(double)];
} line_c11;
typedef struct {
    alignas(64) uint64_t u;
    char pad[64 - sizeof(uint64_t)];
} line_u64;

static line_f64 cells_px[NCELLS];
static line_c11 cells_c11[NCELLS];
static line_u64 cells_int[NCELLS];

enum { V_PX, V_C11, V_INT, NV };
static const char *vname[NV] = {"px_atomic_add_f64 (CAS loop)", "_Atomic double += (C11)",
                                "__atomic_fetch_add u64 (floor)"};

typedef struct {
    int variant, spread, id;
    long adds;
} job;

static void *worker(void *varg)
{
    const job *j = varg;
    unsigned idx = (unsigned)j->id * 977u;
    for (long k = 0; k < j->adds; ++k) {
        unsigned c = j->spread ? (idx = idx * 1664525u + 1013904223u) % NCELLS : 0;
        switch (j->variant) {
        case V_PX:
            px_atomic_add_f64(&cells_px[c].d, 1.0);
            break;
        case V_C11:
            cells_c11[c].d += 1.0;
            break;
        default:
            __atomic_fetch_add(&cells_int[c].u, 1, __ATOMIC_RELAXED);
        }
    }
    return NULL;
}

static double run(int variant, int spread, int nthreads, long adds)
{
    pthread_t t[256];
    job jobs[256];
    double t0 = bench_now_s();
    for (int i = 0; i < nthreads; ++i) {
        jobs[i] = (job){variant, spread, i, adds};
        if (pthread_create(&t[i], NULL, worker, &jobs[i]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            exit(1);
        }
    }
    for (int i = 0; i < nthreads; ++i)
        pthread_join(t[i], NULL);
    return (bench_now_s() - t0) * 1e9 / ((double)adds * nthreads);
}

int main(int argc, char **argv)
{
    int nthreads = argc > 1 ? atoi(argv[1]) : 2;
    long adds = argc > 2 ? atol(argv[2]) : 2000000;
    int reps = argc > 3 ? atoi(argv[3]) : 7;
    if (nthreads < 1 || nthreads > 256 || adds < 1 || reps < 1 || reps > 100) {
        fprintf(stderr, "usage: bench_atomic [threads 1..256] [adds>=1] [reps 1..100]\n");
        return 2;
    }
    printf("# host f64 atomic add, %d threads, %ld adds each, median of %d\n", nthreads, adds,
           reps);
    for (int spread = 0; spread < 2; ++spread) {
        double ns[NV][100];
        for (int r = 0; r < reps; ++r)
            for (int v = 0; v < NV; ++v)
                ns[v][r] = run(v, spread, nthreads, adds);
        double med[NV];
        for (int v = 0; v < NV; ++v)
            med[v] = bench_median(ns[v], reps);
        for (int v = 0; v < NV; ++v)
            printf("%-10s %-32s %8.2f ns/add  ratio to CAS loop %.2f\n",
                   spread ? "spread" : "contended", vname[v], med[v], med[v] / med[V_PX]);
    }
    /* correctness: every variant's cells sum to the adds made (integers are exact in double) */
    double sp = 0, sc = 0;
    uint64_t si = 0;
    for (int c = 0; c < NCELLS; ++c) {
        sp += cells_px[c].d;
        sc += cells_c11[c].d;
        si += cells_int[c].u;
    }
    double want = 2.0 * reps * (double)adds * nthreads;
    if (sp != want || sc != want || (double)si != want) {
        fprintf(stderr, "wrong totals: %.0f %.0f %.0f, want %.0f\n", sp, sc, (double)si, want);
        return 1;
    }
    return 0;
}
