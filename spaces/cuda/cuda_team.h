/* spaces/cuda/cuda_team.h - team launches on the cuda space (spaces/cuda/cuda_team.cu), the
 * hooks cuda_space.cu calls. Semantics: parex/team.h; device side: parex/kernel_cuda_team.h. */
#ifndef PXI_CUDA_TEAM_H
#define PXI_CUDA_TEAM_H

#include "core/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* At initialize, with the space's device current: read the device's team limits (threads and
 * shared memory per block). @return PX_OK; PX_ENODEV when the attributes cannot be read
 * (logged as a warning, like the space's other initialize failures). */
int pxi_cuda_team_init(int device, int sm_count);
/* At finalize: free the reduction partials. Safe after a failed init. */
void pxi_cuda_team_fini(void);
/* pxi_space_ops.team_limits of the cuda space. */
int pxi_cuda_team_limits(pxi_team_limits *out);
/* Run a prepared team launch (PXI_POLICY_TEAM) on @stream (a cudaStream_t). A for returns once
 * queued; a reduce once its result is in host memory. */
int pxi_cuda_team_launch(const pxi_launch *l, void *stream);

#ifdef __cplusplus
}
#endif

#endif
