/* core/engine/operator_ref.c - the lifetime of a reusable operator (operator.c): each push of
 * it holds a reference (pxi_operator.in_flight) that the op's finish (push.c) drops; a deleted
 * operator's slot goes back to the engine's table when its last push has finished. Below
 * push.c, so finishing an op never calls up into operator.c. */
#include "base/alloc.h"
#include "core/engine/engine_impl.h"

void pxi_operator_free(pxi_engine *e, pxi_operator *t)
{
    pxi_free(t->vars);
    t->vars = NULL;
    pxi_handle_table_release(&e->operators, t);
}

void pxi_operator_release(pxi_engine *e, pxi_operator *t)
{
    pxi_spin_lock(&t->lock);
    int free_it = --t->in_flight == 0 && t->deleted;
    pxi_spin_unlock(&t->lock);
    if (free_it)
        pxi_operator_free(e, t);
}
