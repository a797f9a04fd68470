/* tests/cuda/team_device.h - team kernels defined in a file compiled by nvcc (team_device.cu),
 * for tests/cuda/check_cuda_team.c: they run on the host spaces through their host entries and
 * on the cuda space through their device halves. */
#ifndef PX_TEST_TEAM_DEVICE_H
#define PX_TEST_TEAM_DEVICE_H

#include <stdint.h>

#include "parex.h"

typedef struct {
    int64_t *out;  /* league x width (device memory on cuda) */
    int64_t width; /* columns per team */
} td_args;

/* An index run [lo, hi) and whether its parts were joined in order (the order-checking custom
 * reducer: associative, not commutative). */
typedef struct {
    int64_t lo, hi;
    int64_t ok;
} td_run;

#ifdef __cplusplus
extern "C" {
#endif
/* The order-checking reducer over td_run (with a device join). */
extern const px_reducer td_run_reducer;
/* out[lr * width + j] = lr * 1000 + (width - 1 - j): members write team scratch, meet at a
 * barrier and read the slot another member wrote. */
PX_TEAM_KERNEL_DECLARE(td_fill);
/* Sum over teams of the team-reduced sum of lr * 1000 + j, j < width (px_team_reduce with
 * px_sum_i64; member 0 contributes the team's total). */
PX_TEAM_KERNEL_DECLARE(td_sum);
/* out[(lr * width + j) * 8 + k] += 1 for j < width, k < 8 through PX_TEAM_THREAD_FOR and
 * PX_THREAD_VECTOR_FOR (atomic adds: a visit twice shows as 2). */
PX_TEAM_KERNEL_DECLARE(td_cover);
/* Member r of team lr folds the run {lr * team_size + r}: the launch's td_run_reducer result is
 * [0, league * team_size) with ok = 1 only when members join in team-rank order and teams in
 * league order. */
PX_TEAM_KERNEL_DECLARE(td_order);
/* Each member writes its rank and league rank to its thread scratch, meets the team at a
 * barrier, and counts a mismatch when its scratch changed (thread scratch isolation); the sum
 * over the launch must be 0. */
PX_TEAM_KERNEL_DECLARE(td_isolation);
/* Sum over members of sin(lr + 0.001 r) (a f64 team reduce and launch reduce whose rounding
 * depends on the join order: repeated launches must agree bitwise). */
PX_TEAM_KERNEL_DECLARE(td_fsum);
/* A host team-reduce body (px_parallel_reduce_team_fn): member r of team lr contributes
 * {lr * team_size + r} through px_team_reduce with td_run_reducer; member 0 folds the team's
 * run into *acc (a td_run). */
void td_host_runs(const px_team *t, void *ctx, void *acc);
#ifdef __cplusplus
}
#endif

#endif
