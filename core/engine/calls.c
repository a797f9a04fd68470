/* core/engine/calls.c - the public push and wait calls of engine.h (MXNet's PushSync /
 * PushAsync / WaitForVar / WaitForAll): their argument checks, then push.c's pxi_engine_push;
 * the waits drain the in-flight count (inflight.c) or push an internal wait op. */
#include "core/engine/checks.h"
#include "core/engine/engine_impl.h"
#include "core/log.h"
#include "core/registry.h"
#include "core/trace.h"
#include "core/wait.h"

/* pxi_lane_check_ctx (lanes.c, which logs with @caller and returns PX_EINVAL or PX_ENODEV) with
 * its passing common case inline: a CPU context of a device id in range. */
PX_NODISCARD static inline int check_ctx(pxi_engine *e, px_context ctx, px_fn_property prop,
                                         const char *caller)
{
    if (PXI_LIKELY(ctx.type == PX_DEV_CPU && (unsigned)ctx.device_id < PXI_MAX_CPU_DEVS))
        return PX_OK;
    return pxi_lane_check_ctx(e, ctx, prop, caller);
}

/* The checks px_engine_push_sync and px_engine_push_async share, then the push itself.
 * @fn_set tells whether the caller's function pointer is non-NULL. */
static int push_checked(px_engine *e, const pxi_push *p, int fn_set)
{
    int rc = pxi_engine_validate(e, p->caller);
    if (rc != PX_OK)
        return rc;
    if (!fn_set) {
        PXI_ERROR("%s: fn is NULL", p->caller);
        return PX_EFAULT;
    }
    if ((rc = pxi_engine_check_lists(p->caller, p->reads, p->n_reads, p->writes, p->n_writes)) !=
            PX_OK ||
        (rc = pxi_engine_check_prop(p->prop, p->caller)) != PX_OK ||
        (rc = check_ctx(e, p->ctx, p->prop, p->caller)) != PX_OK)
        return rc;
    return pxi_engine_push(e, p);
}

int px_engine_push_sync(px_engine *e, px_sync_fn fn, void *arg, px_context ctx,
                        px_var *const *reads, size_t n_reads, px_var *const *writes,
                        size_t n_writes, px_fn_property prop, int priority, const char *name)
{
    pxi_push p;
    pxi_push_describe(&p, PXI_OP_SYNC, arg, ctx, reads, n_reads, writes, n_writes, prop, priority,
                      name, "px_engine_push_sync");
    p.sfn = fn;
    return push_checked(e, &p, fn != NULL);
}

int px_engine_push_async(px_engine *e, px_async_fn fn, void *arg, px_context ctx,
                         px_var *const *reads, size_t n_reads, px_var *const *writes,
                         size_t n_writes, px_fn_property prop, int priority, const char *name)
{
    pxi_push p;
    pxi_push_describe(&p, PXI_OP_ASYNC, arg, ctx, reads, n_reads, writes, n_writes, prop, priority,
                      name, "px_engine_push_async");
    p.afn = fn;
    return push_checked(e, &p, fn != NULL);
}

int px_engine_push(px_engine *e, const px_op *op)
{
    static const char caller[] = "px_engine_push";
    int rc = pxi_engine_validate(e, caller);
    if (rc != PX_OK)
        return rc;
    if (!op) {
        PXI_ERROR("%s: op is NULL", caller);
        return PX_EFAULT;
    }
    const char *label = op->name ? op->name : "op";
    if (op->fn && op->async_fn) {
        PXI_ERROR("%s('%s'): both fn and async_fn are set (an op is either synchronous or "
                  "asynchronous)",
                  caller, label);
        return PX_EINVAL;
    }
    if (!op->fn && !op->async_fn) {
        PXI_ERROR("%s('%s'): neither fn nor async_fn is set", caller, label);
        return PX_EFAULT;
    }
    pxi_push p;
    pxi_push_describe(&p, op->fn ? PXI_OP_SYNC : PXI_OP_ASYNC, op->arg, op->ctx, op->reads.vars,
                      op->reads.n, op->writes.vars, op->writes.n, op->property, op->priority,
                      op->name, caller);
    p.sfn = op->fn;
    p.afn = op->async_fn;
    return push_checked(e, &p, 1);
}

/* Nonzero when the calling thread runs an engine op or a kernel of any space: a wait there
 * could need the very thread (or the space's launch lock) it holds. */
static int waiting_would_deadlock(void)
{
    if (pxi_engine_in_op())
        return 1;
    int n = pxi_registry_count();
    for (int i = 0; i < n; ++i) {
        const px_space *s = pxi_registry_at(i);
        if (s && s->available && s->ops->in_kernel && s->ops->in_kernel())
            return 1;
    }
    return 0;
}

/* PX_EDEADLK (logged with @caller) when the calling thread may not wait (see above). */
static int check_may_wait(const char *caller)
{
    if (pxi_engine_tl_recorder) {
        PXI_ERROR("%s: this thread is recording a graph (its recorded ops have not run)", caller);
        return PX_EBUSY;
    }
    if (!waiting_would_deadlock())
        return PX_OK;
    PXI_ERROR("%s: called from inside an engine op or kernel (it would wait on itself)", caller);
    return PX_EDEADLK;
}

int px_engine_wait_for_var(px_engine *e, px_var *v)
{
    static const char caller[] = "px_engine_wait_for_var";
    int rc = pxi_engine_validate_handle(e, v, "Var", caller);
    if (rc == PX_OK)
        rc = check_may_wait(caller);
    if (rc != PX_OK)
        return rc;
    int64_t t0 = pxi_trace_active() ? pxi_trace_now_ns() : 0;
    pxi_waiter w;
    pxi_wait_flag_init(&w.done, 0);
    w.status = PX_OK;
    /* Pushed as a write, so it also waits for earlier reads (a caller may overwrite the data
     * once the wait returns); it runs inline on the thread that grants it. */
    rc = pxi_engine_push_internal(e, PXI_OP_WAIT, v, &w, "wait_for_var", caller);
    if (rc != PX_OK)
        return rc;
    pxi_wait_flag_until_eq(&w.done, 1, e->spin_ns);
    if (t0)
        pxi_trace_span("wait", "wait_for_var", t0, pxi_trace_now_ns());
    return w.status;
}

int px_engine_wait_for_all(px_engine *e)
{
    static const char caller[] = "px_engine_wait_for_all";
    int rc = pxi_engine_validate(e, caller);
    if (rc == PX_OK)
        rc = check_may_wait(caller);
    if (rc != PX_OK)
        return rc;
    int64_t t0 = pxi_trace_active() ? pxi_trace_now_ns() : 0;
    pxi_engine_drain(e);
    if (t0)
        pxi_trace_span("wait", "wait_for_all", t0, pxi_trace_now_ns());
    /* Recovery (engine.h, "Failures"): reporting a failure clears it everywhere, as MXNet's
     * WaitForAll clears the exceptions it rethrows from every Var that holds them. A new epoch
     * makes every Var's recorded failure stale at once, without visiting the Vars. */
    int first = atomic_exchange_explicit(&e->first_failure, PX_OK, memory_order_relaxed);
    if (first != PX_OK)
        atomic_fetch_add_explicit(&e->fail_epoch, 1u, memory_order_relaxed);
    return first;
}
