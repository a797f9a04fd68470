/* core/engine/bulk.c - joining and starting bulk blocks at push (bulk.h). */
#include "core/engine/bulk.h"

/* The tail's block stays live while this holds the Var's lock: only its release, under that
 * lock, lets it go (a run frees the blocks before its limit without the lock, but the tail is
 * never before the limit). */
int pxi_bulk_append(pxi_engine *e, const pxi_push *p)
{
    uint32_t gen = 0;
    pxi_var *v = pxi_handle_table_lookup(&e->vars, (uintptr_t)p->writes[0], &gen);
    if (!v)
        return 0;
    int joined = 0;
    pxi_spin_lock(&v->lock);
    const pxi_dep *t = v->tail;
    if (t && atomic_load_explicit(&v->hdr.gen, memory_order_relaxed) == gen && t->opr->bulk &&
        t->opr->ctx.device_id == p->ctx.device_id && t->opr->priority == p->priority) {
        pxi_bulk *b = pxi_opr_bulk(t->opr);
        unsigned k = atomic_load_explicit(&b->state, memory_order_relaxed);
        if (k < b->cap) { /* not sealed (the bit makes k >= cap) and room */
            b->entry[k] = (pxi_bulk_entry){p->sfn, p->arg, p->name ? p->name : "op"};
            /* Release: publishes the entry; fails when the runner sealed the block meanwhile
             * (it then never reads entry k). */
            joined = atomic_compare_exchange_strong_explicit(
                &b->state, &k, k + 1u, memory_order_release, memory_order_relaxed);
        }
    }
    pxi_spin_unlock(&v->lock);
    return joined;
}

void pxi_bulk_init(pxi_opr *o)
{
    o->bulk = 1;
    pxi_bulk *b = pxi_opr_bulk(o);
    atomic_store_explicit(&b->state, 0u, memory_order_relaxed);
    b->cap = (uint32_t)(((o->cap_deps - 1u) * sizeof(pxi_dep) - sizeof(pxi_bulk)) /
                        sizeof(pxi_bulk_entry));
}
