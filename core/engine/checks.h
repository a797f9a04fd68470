/* core/engine/checks.h - the argument checks of the engine's public calls (engine.h, graph.h,
 * mpi.h). Every push makes them, so their passing paths are inline here (a load or a compare
 * each); the out-of-line halves in checks.c log the failure and return its status. */
#ifndef PXI_ENGINE_CHECKS_H
#define PXI_ENGINE_CHECKS_H

#include "core/engine/engine_impl.h"
#include "core/runtime.h"

/* pxi_engine_validate's failing half: PX_EFAULT for a NULL engine, PX_EINVAL for a dead one. */
PX_NODISCARD int pxi_engine_report_invalid(const pxi_engine *e, const char *caller);
/* pxi_engine_check_lists's failing half: logs and returns PX_EFAULT. */
PX_NODISCARD int pxi_engine_report_lists(const char *caller, px_var *const *reads, size_t n_reads,
                                         size_t n_writes);
/* pxi_engine_check_prop's failing half: logs and returns PX_EINVAL. */
PX_NODISCARD int pxi_engine_report_prop(px_fn_property prop, const char *caller);

/* Validate an engine handle at a public boundary (logs with @caller): PX_ENOTINIT in a child
 * forked while the runtime was up, PX_EFAULT for NULL, PX_EINVAL for a dead engine. */
PX_NODISCARD static inline int pxi_engine_validate(const pxi_engine *e, const char *caller)
{
    if (PXI_UNLIKELY(pxi_runtime_lost_to_fork(caller))) /* its workers stayed in the parent */
        return PX_ENOTINIT;
    if (PXI_LIKELY(e != NULL && e->magic == PXI_ENGINE_MAGIC))
        return PX_OK;
    return pxi_engine_report_invalid(e, caller);
}
/* pxi_engine_validate, then PX_EFAULT (logged with @caller) when the handle @h the call needs,
 * named @what, is NULL. */
PX_NODISCARD int pxi_engine_validate_handle(const pxi_engine *e, const void *h, const char *what,
                                            const char *caller);
/* PX_EFAULT (logged with @caller) when a Var list is NULL with a nonzero count. */
PX_NODISCARD static inline int pxi_engine_check_lists(const char *caller, px_var *const *reads,
                                                      size_t n_reads, px_var *const *writes,
                                                      size_t n_writes)
{
    if (PXI_LIKELY((reads != NULL || n_reads == 0) && (writes != NULL || n_writes == 0)))
        return PX_OK;
    return pxi_engine_report_lists(caller, reads, n_reads, n_writes);
}
/* PX_EINVAL (logged with @caller) for an unknown px_fn_property. */
PX_NODISCARD static inline int pxi_engine_check_prop(px_fn_property prop, const char *caller)
{
    if (PXI_LIKELY((unsigned)prop <= (unsigned)PX_FN_ASYNC))
        return PX_OK;
    return pxi_engine_report_prop(prop, caller);
}

#endif
