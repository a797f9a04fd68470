/* tests/cuda/portable_device.cu - the same kernel file as compiled by nvcc (host + device). */
#define PK(name) dev_##name
#include "portable_kernels.inc"
