/* core/engine/opr_block.c - op blocks past the first capacity class (opr_block.h). */
#include "core/engine/opr_block.h"

/* A block of a class past the first, or from the heap, for @n_deps Vars; NULL when none can
 * be had. */
pxi_opr *pxi_opr_alloc_large(pxi_engine *e, size_t n_deps)
{
    pxi_opr *o = NULL;
    int cls = -1;
    for (int c = 1; c < PXI_OPR_CLASSES; ++c)
        if (n_deps <= pxi_opr_class_deps[c]) {
            cls = c;
            break;
        }
    if (cls >= 0) {
        o = pxi_pool_get(&e->opr_pool[cls]);
    } else if (n_deps <= UINT32_MAX) {
        /* Ops with more than 256 Vars are rare enough to come from the heap. */
        o = pxi_malloc(sizeof(pxi_opr) + n_deps * sizeof(pxi_dep));
    }
    if (!o)
        return NULL;
    o->size_class = cls;
    o->cap_deps = (uint32_t)n_deps;
    return o;
}
