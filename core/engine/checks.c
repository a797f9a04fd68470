/* core/engine/checks.c - the argument checks at the engine's public boundary, shared by every
 * public call of core/engine (engine.h, graph.h, mpi.h): a live engine, non-NULL handles and
 * lists, a known function property. Lowest layer of the engine's calls: logs and nothing else.
 * The passing paths are inline in checks.h; these are the failing halves and the handle check.
 */
#include "core/engine/checks.h"
#include "base/log.h"
#include "core/engine/engine_impl.h"
#include "core/runtime.h"

int pxi_engine_report_invalid(const pxi_engine *e, const char *caller)
{
    if (!e) {
        PXI_ERROR("%s: engine is NULL", caller);
        return PX_EFAULT;
    }
    PXI_ERROR("%s: %p is not a live engine", caller, (const void *)e);
    return PX_EINVAL;
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

int pxi_engine_report_lists(const char *caller, px_var *const *reads, size_t n_reads,
                            size_t n_writes)
{
    int bad_reads = n_reads > 0 && !reads;
    PXI_ERROR("%s: %s is NULL with a count of %zu", caller, bad_reads ? "reads" : "writes",
              bad_reads ? n_reads : n_writes);
    return PX_EFAULT;
}

int pxi_engine_report_prop(px_fn_property prop, const char *caller)
{
    PXI_ERROR("%s: unknown px_fn_property %d", caller, (int)prop);
    return PX_EINVAL;
}
