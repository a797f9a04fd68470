/*
 * parex.h - the umbrella header: include this one.
 *
 * parex is a C11 parallel-execution runtime: write a loop body once and run it on the serial,
 * threads or cuda execution space through parallel_for / parallel_reduce / parallel_scan over
 * range policies, and let the dependency engine order kernels and copies by the data they read
 * and write.
 */
#ifndef PAREX_H
#define PAREX_H

#include "parex/atomic.h"
#include "parex/config.h"
#include "parex/core.h"
#include "parex/cuda.h" /* Cuda-specific API (declared when PX_HAVE_CUDA); macros always */
#include "parex/engine.h"
#include "parex/graph.h"
#include "parex/instance.h"
#include "parex/kernel.h"
#include "parex/mdrange.h"
#include "parex/memory.h"
#include "parex/mpi.h" /* MPI messages as engine ops (declared when PX_HAVE_MPI; needs <mpi.h>) */
#include "parex/policy.h"
#include "parex/profiling.h"
#include "parex/reducer.h"
#include "parex/rng.h"
#include "parex/scatter.h"
#include "parex/space.h"
#include "parex/team.h"
#include "parex/trace.h"
#include "parex/view.h"

#endif
