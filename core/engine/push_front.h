/* core/engine/push_front.h - the front half of a push, before any Var is locked (push.c,
 * pxi_engine_push): the public pushes' argument checks, the Var handles resolved into deps in
 * lock order, and the op block filled from the push's descriptor (pxi_push). Inline here, with
 * their rare halves in push_front.c: every push runs them, and the public pushes (engine.h's
 * px_engine_push_sync and px_engine_push_async, MXNet's PushSync / PushAsync) run them with
 * the descriptor's internal fields known to be empty (@plain below), which folds their tests
 * away. push.c is their one includer.
 *
 * Cost (callgrind, empty ops, PX_ENGINE_INLINE_NS=0, bench/RESULTS.md "Session 8: pusher
 * cost"): a public push used to fill a 20-field descriptor two calls deep, check it, copy 14 of
 * its fields into the block and test the 7 internal ones; now the public call jumps to the push,
 * the descriptor's fields stay in registers, and the block gets the fields an op reads.
 */
#ifndef PXI_ENGINE_PUSH_FRONT_H
#define PXI_ENGINE_PUSH_FRONT_H

#include "core/engine/engine_impl.h"
#include "core/runtime.h"

/* ---- argument checks of the public pushes ------------------------------------------------ */

/* Whether a public push's arguments pass every check in their common case: a live engine in a
 * process that was not forked off a running runtime, a function (@fn_set), Var lists that are
 * not NULL with a count, a known property and a CPU context of a device id in range. Any other
 * case goes to pxi_push_check_report, which tells which check fails or passes them all. */
static inline int pxi_push_args_fast(const pxi_engine *e, int fn_set, px_context ctx,
                                     px_var *const *reads, size_t n_reads, px_var *const *writes,
                                     size_t n_writes, px_fn_property prop)
{
    return atomic_load_explicit(&pxi_runtime_state, memory_order_acquire) != PXI_RUNTIME_FORKED &&
           e != NULL && e->magic == PXI_ENGINE_MAGIC && fn_set && (reads != NULL || n_reads == 0) &&
           (writes != NULL || n_writes == 0) && (unsigned)prop <= (unsigned)PX_FN_ASYNC &&
           ctx.type == PX_DEV_CPU && (unsigned)ctx.device_id < PXI_MAX_CPU_DEVS;
}

/* The checks of a public push one by one, in their order (checks.h, then the context:
 * pxi_lane_check_ctx), logging the first that fails with @caller: PX_ENOTINIT, PX_EFAULT,
 * PX_EINVAL or PX_ENODEV, or PX_OK when all pass (a context pxi_push_args_fast leaves to
 * pxi_lane_check_ctx, such as a GPU's). */
PX_NODISCARD int pxi_push_check_report(pxi_engine *e, int fn_set, px_context ctx,
                                       px_var *const *reads, size_t n_reads, px_var *const *writes,
                                       size_t n_writes, px_fn_property prop, const char *caller);

/* A public push recorded by @r (a thread recording a graph), from its arguments: out of line,
 * so the public path's descriptor never leaves the push and its fields stay in registers. */
PX_NODISCARD int pxi_push_record_public(pxi_recorder *r, pxi_engine *e, pxi_op_kind kind,
                                        px_sync_fn sfn, px_async_fn afn, void *arg, px_context ctx,
                                        px_var *const *reads, size_t n_reads, px_var *const *writes,
                                        size_t n_writes, px_fn_property prop, int priority,
                                        const char *name, const char *caller);

/* ---- deps -------------------------------------------------------------------------------- */

/* Log that handle @h of a push, reads[@i] or (@write) writes[@i], is not a live Var of this
 * engine (named with @caller); PX_EINVAL. */
PXI_ENGINE_COLD int pxi_push_report_dead_handle(const char *caller, size_t i, uintptr_t h,
                                                int write);

/* Nonzero, after logging it with @caller, when @n_reads + @n_writes overflows or passes
 * UINT32_MAX (an op's Var count is 32 bits). */
PXI_ENGINE_COLD int pxi_push_too_many_vars(const char *caller, size_t n_reads, size_t n_writes);

/* Sort @n > 24 deps by Var address (qsort). */
void pxi_push_sort_deps_large(pxi_dep *d, uint32_t n);

/* Sort @n deps by Var address, the global lock order: insertion sort for the usual few. A dep
 * already in place is neither loaded whole nor stored back (Vars made one after the other have
 * ascending addresses, so lists are often in order already: 3 sorted deps took ~30 instructions
 * of copies onto themselves). */
static inline void pxi_push_sort_deps(pxi_dep *d, uint32_t n)
{
    if (n > 24) {
        pxi_push_sort_deps_large(d, n);
        return;
    }
    for (uint32_t i = 1; i < n; ++i) {
        if (d[i - 1].var <= d[i].var)
            continue;
        pxi_dep t = d[i];
        uint32_t j = i;
        while (j > 0 && d[j - 1].var > t.var) {
            d[j] = d[j - 1];
            --j;
        }
        d[j] = t;
    }
}

/* Resolve handle @h into dep @i of @o (a write when @write): 0 when @h is not a live Var. */
static PXI_ENGINE_INLINE int pxi_push_dep_resolve(pxi_engine *e, pxi_opr *o, size_t i, uintptr_t h,
                                                  int write)
{
    uint32_t gen = 0;
    pxi_var *v = pxi_handle_table_lookup(&e->vars, h, &gen);
    if (PXI_UNLIKELY(!v))
        return 0;
    pxi_dep *d = &o->deps[i];
    d->opr = o;
    d->var = v;
    d->gen = gen;
    d->write = write;
    d->next = NULL;
    return 1;
}

/* Resolve @p's n handles into @o's deps (each pointing back at @o), sort them by Var address
 * (the global lock order) and merge duplicates: a Var read twice is one read; read and
 * written, or written twice, is one write. Sets o->n_deps; PX_EINVAL (logged) for a handle
 * that is not a live Var. @plain: @p is a public push's (pxi_engine_push_plain: Var lists). */
static PXI_ENGINE_INLINE int pxi_push_deps_prepare(pxi_engine *e, pxi_opr *o, const pxi_push *p,
                                                   size_t n, int plain)
{
    const uint8_t *sorted_writes = plain ? NULL : p->sorted_writes;
    if (plain || PXI_LIKELY(!p->handles && !sorted_writes)) { /* Var lists */
        for (size_t i = 0; i < p->n_reads; ++i)
            if (!pxi_push_dep_resolve(e, o, i, (uintptr_t)p->reads[i], 0))
                return pxi_push_report_dead_handle(p->caller, i, (uintptr_t)p->reads[i], 0);
        for (size_t i = 0, k = p->n_reads; i < p->n_writes; ++i, ++k)
            if (!pxi_push_dep_resolve(e, o, k, (uintptr_t)p->writes[i], 1))
                return pxi_push_report_dead_handle(p->caller, i, (uintptr_t)p->writes[i], 1);
    } else {
        for (size_t i = 0; i < n; ++i) {
            uintptr_t h = pxi_push_handle(p, i);
            int write = sorted_writes ? sorted_writes[i] : i >= p->n_reads;
            if (!pxi_push_dep_resolve(e, o, i, h, write))
                return pxi_push_report_dead_handle(
                    p->caller, write && !sorted_writes ? i - p->n_reads : i, h, write);
        }
    }
    /* Graph launches give their handles in lock order and unique already; one Var needs
     * neither sort nor merge. */
    if (sorted_writes || n < 2) {
        o->n_deps = (uint32_t)n;
        return PX_OK;
    }
    uint32_t m = 0;
    pxi_push_sort_deps(o->deps, (uint32_t)n);
    for (uint32_t i = 0; i < (uint32_t)n; ++i) {
        if (m > 0 && o->deps[m - 1].var == o->deps[i].var) {
            o->deps[m - 1].write |= o->deps[i].write;
            continue;
        }
        /* No copy onto itself: the dep was just written field by field, and reloading it
         * whole stalls on store forwarding (the hottest line of an empty push). */
        if (m != i)
            o->deps[m] = o->deps[i];
        ++m;
    }
    o->n_deps = m;
    return PX_OK;
}

/* ---- the block --------------------------------------------------------------------------- */

/* Whether the cost rule applies to @p's op (pxi_opr.inline_ok, cost.c): a SYNC op of the
 * normal CPU lane that is not a kernel op, on a non-naive engine with inline_ns > 0 (tested
 * first: with PX_ENGINE_INLINE_NS=0 the rule costs one compare). @plain as for
 * pxi_push_deps_prepare. */
static PXI_ENGINE_INLINE int pxi_push_inline_ok(const pxi_engine *e, const pxi_push *p, int plain)
{
    return e->inline_ns > 0 && p->kind == PXI_OP_SYNC && p->prop == PX_FN_NORMAL &&
           p->ctx.type == PX_DEV_CPU && (plain || !p->no_inline) && e->kind != PX_ENGINE_NAIVE;
}

/* Fill block @o (its deps prepared) from the push description, before anything publishes it;
 * @inline_ok as pxi_push_inline_ok says; @plain as for pxi_push_deps_prepare (no cleanup,
 * operator or waiter, and a kind that is a constant of the caller). Fields that only some ops
 * read are written where they are used, not here: seq (the priority heap's order) for
 * prioritized ops only; run_status by run_op before a GPU op's stream callback can read it;
 * done.called by run_op before an ASYNC op's function gets the handle; the function of the
 * other kind (afn of a SYNC op, sfn of an ASYNC one) on a public push. next stays NULL until a
 * queue links the op (lanes, ready lists and batches may rely on it). */
static PXI_ENGINE_INLINE void pxi_push_opr_fill(pxi_engine *e, pxi_opr *o, const pxi_push *p,
                                                int inline_ok, int counted, int plain)
{
    uint32_t n_deps = o->n_deps;
    /* One count per Var, plus the pusher's own while it appends to several Vars; an op of
     * one Var needs none: its single append is the only step, so when it is not granted
     * there, the pusher lets go of the block at the unlock (and a releasing worker may claim
     * it into a run at once, var_queue.c), and when it is, nobody else holds it. */
    atomic_store_explicit(&o->wait, (int)n_deps + (n_deps != 1), memory_order_relaxed);
    o->kind = p->kind;
    if (!plain || p->kind == PXI_OP_SYNC)
        o->sfn = p->sfn;
    if (!plain || p->kind == PXI_OP_ASYNC)
        o->afn = p->afn;
    o->arg = p->arg;
    o->ctx = p->ctx;
    o->prop = p->prop;
    o->priority = p->priority;
    o->name = p->name ? p->name : "op";
    o->e = e;
    o->next = NULL;
    if (plain) {
        o->cleanup = NULL;
        o->oper = NULL;
        o->waiter = NULL;
    } else {
        o->cleanup = p->cleanup;
        o->oper = p->oper;
        o->waiter = p->waiter;
    }
    /* Push order matters only to the priority heap. */
    if (PXI_UNLIKELY(p->prop == PX_FN_CPU_PRIORITIZED))
        o->seq = atomic_fetch_add_explicit(&e->push_seq, 1, memory_order_relaxed);
    /* The four flag bytes last and together (adjacent: the compiler may merge the stores). */
    o->inline_ok = (uint8_t)inline_ok;
    o->counted = (uint8_t)counted;
    o->skipped = 0;
    o->finish_extra = !plain && (p->cleanup || p->oper || p->kind == PXI_OP_DELETE);
    o->bulk = 0;
}

#endif
