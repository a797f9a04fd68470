/* core/engine/failure.c - marking failed Vars and reporting failed and skipped ops
 * (failure.h). */
#include <stdio.h>

#include "base/log.h"
#include "core/engine/failure.h"
#include "core/trace.h"

void pxi_engine_var_fail(pxi_engine *e, pxi_var *v, int status)
{
    /* Counted first: an op that sees this mark through the Var then also sees the count. */
    atomic_fetch_add_explicit(&e->n_marks, 1u, memory_order_relaxed);
    uint64_t epoch = atomic_load_explicit(&e->fail_epoch, memory_order_relaxed);
    atomic_store_explicit(&v->failure, (epoch << 32) | (uint32_t)status, memory_order_relaxed);
}

/* The handle a user holds for dep @d (its generation at push), for messages. */
static const void *dep_handle(const pxi_dep *d)
{
    return (const void *)pxi_handle_make(d->gen, d->var->hdr.index);
}

/* "Var 0x..., Var 0x..." for the Vars @o writes (at most 8, then a count) into @buf. */
static void written_vars(const pxi_opr *o, char *buf, size_t cap)
{
    size_t used = 0;
    unsigned listed = 0, more = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < o->n_deps; ++i) {
        if (!o->deps[i].write)
            continue;
        if (listed == 8) {
            ++more;
            continue;
        }
        int n = snprintf(buf + used, cap - used, "%sVar %p", listed ? ", " : "",
                         dep_handle(&o->deps[i]));
        if (n < 0 || (size_t)n >= cap - used)
            break;
        used += (size_t)n;
        ++listed;
    }
    if (more && used < cap)
        snprintf(buf + used, cap - used, " and %u more", more);
    if (!listed)
        snprintf(buf, cap, "none (it writes no Var)");
}

void pxi_engine_report_failure(const pxi_opr *o, int status, int skipped, const pxi_dep *cause)
{
    const char *name = o->name && o->name[0] ? o->name : "op";
    if (skipped) {
        if (pxi_log_enabled(PX_LOG_DEBUG))
            PXI_DEBUG("engine: op '%s' skipped: Var %p it %s failed with %d (%s)", name,
                      dep_handle(cause), cause->write ? "writes" : "reads", status,
                      px_strerror(status));
    } else if (pxi_log_enabled(PX_LOG_WARN)) {
        char vars[320];
        written_vars(o, vars, sizeof vars);
        PXI_WARN("engine: op '%s' failed with %d (%s); Vars poisoned: %s (later ops using them "
                 "are skipped until a wait reports the failure)",
                 name, status, px_strerror(status), vars);
    }
    if (pxi_trace_active()) {
        int64_t t = pxi_trace_now_ns();
        pxi_trace_span_status(skipped ? "op_skipped" : "op_failed", name, t, t, status);
    }
}

void pxi_engine_op_failed(const pxi_opr *o, int status)
{
    pxi_engine *e = o->e;
    if (!o->skipped)
        pxi_engine_report_failure(o, status, 0, NULL);
    for (uint32_t i = 0; i < o->n_deps; ++i)
        if (o->deps[i].write)
            pxi_engine_var_fail(e, o->deps[i].var, status);
    int expect = PX_OK;
    atomic_compare_exchange_strong_explicit(&e->first_failure, &expect, status,
                                            memory_order_relaxed, memory_order_relaxed);
}
