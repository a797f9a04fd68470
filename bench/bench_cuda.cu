/*
 * bench/bench_cuda.cu - the Cuda space against raw CUDA, in the same run on the same device.
 *
 *   bandwidth (2^28 doubles by default, 2 GiB per array):
 *     copy    cudaMemcpyAsync device-to-device            baseline, GB/s = 2 * bytes / t
 *     triad   PX_FOR a[i] = b[i] + s * c[i]                 GB/s = 3 * bytes / t, ratio vs copy
 *     sum     PX_REDUCE sum of a (result on the host)       GB/s = bytes / t, ratio vs copy
 *     cub     cub::DeviceReduce::Sum + copy of the result   GB/s = bytes / t, ratio sum / cub
 *   launch latency (empty kernels, 20000 launches, then one synchronize):
 *     raw     empty<<<1, 32, 0, stream>>>                   us per launch, baseline
 *     px_for  px_parallel_for of an empty PX_FOR over [0,1) us per launch, minus raw
 *
 * Targets (issue 5): triad and sum >= 0.90 of copy; px_for within 1 us of raw.
 * Usage: bench_cuda [log2_n] [reps]. Without a GPU it prints "SKIP: no CUDA device", exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cub/device/device_reduce.cuh>
#include <cuda_runtime.h>

#include "bench_util.h"

#include "parex.h"

typedef struct {
    double *a, *b, *c;
    double s;
} triad_args;

PX_FOR(bench_init, triad_args, i, t)
{
    t->a[i] = 0.0;
    t->b[i] = 1.0;
    t->c[i] = (double)(i & 7);
}

PX_FOR(bench_triad, triad_args, i, t)
{
    t->a[i] = t->b[i] + t->s * t->c[i];
}

typedef struct {
    const double *x;
} sum_args;

PX_REDUCE(bench_sum, sum_args, double, i, t, acc)
{
    *acc += t->x[i];
}

typedef struct {
    int unused;
} empty_args;

PX_FOR(bench_empty, empty_args, i, t)
{
    (void)i;
    (void)t;
}

__global__ void raw_empty(void)
{
}

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));                            \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
#define PK(call)                                                                                   \
    do {                                                                                           \
        int r_ = (call);                                                                           \
        if (r_ != PX_OK) {                                                                         \
            fprintf(stderr, "%s: %s\n", #call, px_strerror(r_));                                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* Best of reps of an event-timed region on stream st (seconds). */
#define TIME_BEST(best, reps, st, body)                                                            \
    do {                                                                                           \
        cudaEvent_t e0_, e1_;                                                                      \
        CK(cudaEventCreate(&e0_));                                                                 \
        CK(cudaEventCreate(&e1_));                                                                 \
        best = 1e30;                                                                               \
        for (int r_ = 0; r_ < (reps); ++r_) {                                                      \
            CK(cudaEventRecord(e0_, st));                                                          \
            body;                                                                                  \
            CK(cudaEventRecord(e1_, st));                                                          \
            CK(cudaEventSynchronize(e1_));                                                         \
            float ms_ = 0;                                                                         \
            CK(cudaEventElapsedTime(&ms_, e0_, e1_));                                              \
            if (ms_ * 1e-3 < best)                                                                 \
                best = ms_ * 1e-3;                                                                 \
        }                                                                                          \
        CK(cudaEventDestroy(e0_));                                                                 \
        CK(cudaEventDestroy(e1_));                                                                 \
    } while (0)

int main(int argc, char **argv)
{
    PK(px_initialize(&argc, &argv));
    px_space *cuda = px_space_by_name("cuda");
    if (!cuda) {
        printf("SKIP: no CUDA device (the cuda space is unavailable); nothing measured\n");
        px_finalize();
        return 0;
    }
    int lg = argc > 1 ? atoi(argv[1]) : 28;
    int reps = argc > 2 ? atoi(argv[2]) : 10;
    if (lg < 10 || lg > 32 || reps < 1) {
        fprintf(stderr, "usage: bench_cuda [log2_n in 10..32] [reps >= 1]\n");
        return 2;
    }
    const int64_t n = (int64_t)1 << lg;
    const size_t bytes = (size_t)n * sizeof(double);
    cudaStream_t st = (cudaStream_t)px_cuda_stream();
    px_cuda_device_info info;
    PK(px_cuda_device_info_get(&info));
    printf("device %d: %s, %d SMs; n = 2^%d doubles (%.2f GiB per array), best of %d\n",
           info.device_id, info.name, info.sm_count, lg, (double)bytes / (1 << 30), reps);

    triad_args t;
    t.a = (double *)px_malloc(cuda, bytes);
    t.b = (double *)px_malloc(cuda, bytes);
    t.c = (double *)px_malloc(cuda, bytes);
    t.s = 3.0;
    if (!t.a || !t.b || !t.c) {
        fprintf(stderr, "cannot allocate 3 x %zu bytes on the device\n", bytes);
        return 1;
    }
    PK(px_parallel_for(cuda, "init", px_range(0, n), &bench_init, &t, sizeof t));
    PK(px_fence(cuda));

    double t_copy, t_triad;
    TIME_BEST(t_copy, reps, st, CK(cudaMemcpyAsync(t.a, t.b, bytes, cudaMemcpyDeviceToDevice, st)));
    TIME_BEST(t_triad, reps, st,
              PK(px_parallel_for(cuda, "triad", px_range(0, n), &bench_triad, &t, sizeof t)));
    double copy_gbs = 2.0 * (double)bytes / t_copy * 1e-9;
    double triad_gbs = 3.0 * (double)bytes / t_triad * 1e-9;

    /* Reductions return with the value on the host: wall-clock time. */
    sum_args sa = {t.a};
    double best_sum = 1e30, best_cub = 1e30, s_px = 0, s_cub = 0;
    double *d_out = NULL;
    void *tmp = NULL;
    size_t tmp_bytes = 0;
    CK(cudaMalloc(&d_out, sizeof(double)));
    CK(cub::DeviceReduce::Sum(tmp, tmp_bytes, t.a, d_out, n, st));
    CK(cudaMalloc(&tmp, tmp_bytes));
    for (int r = 0; r < reps + 1; ++r) { /* the first round warms up scratch pools */
        double t0 = bench_now_s();
        PK(px_parallel_reduce(cuda, "sum", px_range(0, n), &bench_sum, &sa, sizeof sa, &px_sum_f64,
                              &s_px));
        double t1 = bench_now_s();
        CK(cub::DeviceReduce::Sum(tmp, tmp_bytes, t.a, d_out, n, st));
        CK(cudaMemcpyAsync(&s_cub, d_out, sizeof s_cub, cudaMemcpyDeviceToHost, st));
        CK(cudaStreamSynchronize(st));
        double t2 = bench_now_s();
        if (r > 0 && t1 - t0 < best_sum)
            best_sum = t1 - t0;
        if (r > 0 && t2 - t1 < best_cub)
            best_cub = t2 - t1;
    }
    double sum_gbs = (double)bytes / best_sum * 1e-9, cub_gbs = (double)bytes / best_cub * 1e-9;

    printf("%-8s %10s %10s %8s\n", "kernel", "GB/s", "ms", "ratio");
    printf("%-8s %10.1f %10.3f %8s\n", "copy", copy_gbs, t_copy * 1e3, "1.00");
    printf("%-8s %10.1f %10.3f %8.2f  (vs copy, target >= 0.90)\n", "triad", triad_gbs,
           t_triad * 1e3, triad_gbs / copy_gbs);
    printf("%-8s %10.1f %10.3f %8.2f  (vs copy, target >= 0.90)\n", "sum", sum_gbs, best_sum * 1e3,
           sum_gbs / copy_gbs);
    printf("%-8s %10.1f %10.3f %8.2f  (px sum / cub)\n", "cub", cub_gbs, best_cub * 1e3,
           sum_gbs / cub_gbs);
    printf("sums: parex %.17g, cub %.17g (relative difference %.2e)\n", s_px, s_cub,
           (s_px - s_cub) / s_cub);

    /* Launch latency: back-to-back launches, one synchronize at the end. */
    const int launches = 20000;
    empty_args ea = {0};
    double best_raw = 1e30, best_px = 1e30;
    for (int r = 0; r < 3; ++r) {
        double t0 = bench_now_s();
        for (int k = 0; k < launches; ++k)
            raw_empty<<<1, 32, 0, st>>>();
        CK(cudaStreamSynchronize(st));
        double t1 = bench_now_s();
        for (int k = 0; k < launches; ++k)
            PK(px_parallel_for(cuda, "empty", px_range(0, 1), &bench_empty, &ea, sizeof ea));
        PK(px_fence(cuda));
        double t2 = bench_now_s();
        if (t1 - t0 < best_raw)
            best_raw = t1 - t0;
        if (t2 - t1 < best_px)
            best_px = t2 - t1;
    }
    double raw_us = best_raw / launches * 1e6, px_us = best_px / launches * 1e6;
    printf("launch   raw %.2f us, px_for %.2f us, overhead %+.2f us (target <= 1.0)\n", raw_us,
           px_us, px_us - raw_us);

    CK(cudaFree(tmp));
    CK(cudaFree(d_out));
    px_free(cuda, t.a);
    px_free(cuda, t.b);
    px_free(cuda, t.c);
    PK(px_finalize());
    return 0;
}
