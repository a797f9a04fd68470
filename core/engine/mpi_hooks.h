/* core/engine/mpi_hooks.h - what engine teardown (runtime.c) calls into the MPI ops
 * (core/engine/mpi.c). Without MPI (PX_HAVE_MPI 0) every hook is an empty inline function. */
#ifndef PXI_MPI_HOOKS_H
#define PXI_MPI_HOOKS_H

#include "parex/config.h"
#include "parex/engine.h"

#if PX_HAVE_MPI
/* Before draining @e for destroy or finalize: its outstanding messages get the drain timeout
 * (px_mpi_set_drain_timeout_ms), after which the progress thread cancels them, so the drain
 * cannot wait for ever on a message that never matches. */
void pxi_mpi_engine_closing(px_engine *e);
/* After @e is drained (no message of it is outstanding): forget its deadline. */
void pxi_mpi_engine_closed(px_engine *e);
/* At px_finalize, after every engine is drained: stop and join the progress thread. */
void pxi_mpi_shutdown(void);
#else
static inline void pxi_mpi_engine_closing(px_engine *e)
{
    (void)e;
}
static inline void pxi_mpi_engine_closed(px_engine *e)
{
    (void)e;
}
static inline void pxi_mpi_shutdown(void)
{
}
#endif

#endif
