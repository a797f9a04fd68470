/* tests/cuda/team_device.h - team kernels defined in a file compiled by nvcc (team_device.cu),
 * for tests/cuda/check_cuda_team.c. */
#ifndef PX_TEST_TEAM_DEVICE_H
#define PX_TEST_TEAM_DEVICE_H

#include <stdint.h>

#include "parex.h"

typedef struct {
    int64_t *out;  /* league x width */
    int64_t width; /* columns per team */
} td_args;

#ifdef __cplusplus
extern "C" {
#endif
/* out[lr * width + j] = lr * 1000 + j, through team scratch and a barrier. */
PX_TEAM_KERNEL_DECLARE(td_fill);
/* Sum over teams of the team-reduced sum of lr * 1000 + j. */
PX_TEAM_KERNEL_DECLARE(td_sum);
#ifdef __cplusplus
}
#endif

#endif
