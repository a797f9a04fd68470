/* core/engine/checks.c - the argument checks at the engine's public boundary, shared by every
 * public call of core/engine (engine.h, graph.h, mpi.h): a live engine, non-NULL handles and
 * lists, a known function property. Lowest layer of the engine's calls: logs and nothing else. */
#include "core/engine/engine_impl.h"
#include "core/log.h"
#include "core/runtime.h"

int pxi_engine_validate(const pxi_engine *e, const char *caller)
{
    if (pxi_runtime_lost_to_fork(caller)) /* its workers stayed in the parent (core/init.c) */
        return PX_ENOTINIT;
    if (!e) {
        PXI_ERROR("%s: engine is NULL", caller);
        return PX_EFAULT;
    }
    if (e->magic != PXI_ENGINE_MAGIC) {
        PXI_ERROR("%s: %p is not a live engine", caller, (const void *)e);
        return PX_EINVAL;
    }
    return PX_OK;
}

/* pxi_engine_validate, then PX_EFAULT (logged with @caller) when the handle @h the call needs,
 * named @what, is NULL. */
int pxi_engine_validate_handle(const pxi_engine *e, const void *h, const char *what,
                               const char *caller)
{
    int rc = pxi_engine_validate(e, caller);
    if (rc == PX_OK && !h) {
        PXI_ERROR("%s: %s is NULL", caller, what);
        rc = PX_EFAULT;
    }
    return rc;
}

int pxi_engine_check_lists(const char *caller, px_var *const *reads, size_t n_reads,
                           px_var *const *writes, size_t n_writes)
{
    if ((n_reads > 0 && !reads) || (n_writes > 0 && !writes)) {
        PXI_ERROR("%s: %s is NULL with a count of %zu", caller,
                  (n_reads > 0 && !reads) ? "reads" : "writes",
                  (n_reads > 0 && !reads) ? n_reads : n_writes);
        return PX_EFAULT;
    }
    return PX_OK;
}

int pxi_engine_check_prop(px_fn_property prop, const char *caller)
{
    if ((unsigned)prop > (unsigned)PX_FN_ASYNC) {
        PXI_ERROR("%s: unknown px_fn_property %d", caller, (int)prop);
        return PX_EINVAL;
    }
    return PX_OK;
}
