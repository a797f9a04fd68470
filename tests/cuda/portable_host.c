/* tests/cuda/portable_host.c - the portable kernel file as compiled by the C compiler. */
#define PK(name) host_##name
#include "portable_kernels.inc"
