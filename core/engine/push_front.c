/* core/engine/push_front.c - the rare halves of a push's front half (push_front.h): the public
 * pushes' checks one by one with their messages, a public push handed to a graph recorder, a
 * dead handle's message, and the sort of an op with many Vars. */
#include <stdlib.h>

#include "base/log.h"
#include "core/engine/checks.h"
#include "core/engine/push_front.h"

int pxi_push_check_report(pxi_engine *e, int fn_set, px_context ctx, px_var *const *reads,
                          size_t n_reads, px_var *const *writes, size_t n_writes,
                          px_fn_property prop, const char *caller)
{
    int rc = pxi_engine_validate(e, caller);
    if (rc != PX_OK)
        return rc;
    if (!fn_set) {
        PXI_ERROR("%s: fn is NULL", caller);
        return PX_EFAULT;
    }
    if ((rc = pxi_engine_check_lists(caller, reads, n_reads, writes, n_writes)) != PX_OK ||
        (rc = pxi_engine_check_prop(prop, caller)) != PX_OK)
        return rc;
    if (ctx.type == PX_DEV_CPU && (unsigned)ctx.device_id < PXI_MAX_CPU_DEVS)
        return PX_OK;
    return pxi_lane_check_ctx(e, ctx, prop, caller);
}

int pxi_push_record_public(pxi_recorder *r, pxi_engine *e, pxi_op_kind kind, px_sync_fn sfn,
                           px_async_fn afn, void *arg, px_context ctx, px_var *const *reads,
                           size_t n_reads, px_var *const *writes, size_t n_writes,
                           px_fn_property prop, int priority, const char *name, const char *caller)
{
    pxi_push p;
    pxi_push_describe(&p, kind, arg, ctx, reads, n_reads, writes, n_writes, prop, priority, name,
                      caller);
    p.sfn = sfn;
    p.afn = afn;
    return r->record(r, e, &p);
}

int pxi_push_report_dead_handle(const char *caller, size_t i, uintptr_t h, int write)
{
    PXI_ERROR("%s: %s[%zu] = %p is not a live Var of this engine (deleted or foreign)", caller,
              write ? "writes" : "reads", i, (void *)h);
    return PX_EINVAL;
}

int pxi_push_too_many_vars(const char *caller, size_t n_reads, size_t n_writes)
{
    size_t n = n_reads + n_writes;
    if (n >= n_reads && n <= UINT32_MAX)
        return 0;
    PXI_ERROR("%s: too many Vars (%zu reads, %zu writes)", caller, n_reads, n_writes);
    return 1;
}

static int dep_cmp(const void *a, const void *b)
{
    const pxi_dep *x = a, *y = b;
    return (x->var > y->var) - (x->var < y->var);
}

void pxi_push_sort_deps_large(pxi_dep *d, uint32_t n)
{
    qsort(d, n, sizeof *d, dep_cmp);
}
