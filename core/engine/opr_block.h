/* core/engine/opr_block.h - op blocks (pxi_opr) from the engine's pools by capacity class, or
 * from the heap past the largest class (opr_block.c); push.c takes and returns them. */
#ifndef PXI_ENGINE_OPR_BLOCK_H
#define PXI_ENGINE_OPR_BLOCK_H

#include "base/alloc.h"
#include "core/engine/engine_impl.h"

/* pxi_opr_alloc prefetches 4 lines of the next block of every class: the smallest spans them. */
_Static_assert(sizeof(pxi_opr) + 4 * sizeof(pxi_dep) > 3 * PXI_CACHE_LINE,
               "op blocks of the first class span 4 lines");

/* A block of a class past the first, or from the heap, for @n_deps Vars; NULL when none can
 * be had. */
PXI_ENGINE_NOINLINE pxi_opr *pxi_opr_alloc_large(pxi_engine *e, size_t n_deps);

/* A block for @n_deps Vars, or NULL when none can be had. Inline for the first class (ops of up
 * to 4 Vars, nearly all), tested before anything else: out of line with its class loop, the
 * allocation was about 55 of the pusher's ~370 instructions per empty op (callgrind). */
static PXI_ENGINE_INLINE pxi_opr *pxi_opr_alloc(pxi_engine *e, size_t n_deps)
{
    if (PXI_UNLIKELY(n_deps > pxi_opr_class_deps[0]))
        return pxi_opr_alloc_large(e, n_deps);
    /* Every class's block spans at least 4 lines (pxi_pool_init's count for them all). */
    pxi_opr *o = pxi_pool_get_lines(&e->opr_pool[0], 4);
    if (PXI_LIKELY(o != NULL)) {
        o->size_class = 0;
        o->cap_deps = (uint32_t)n_deps;
    }
    return o;
}

/* Return @o to where it came from: its pool, the heap; nothing for a block its owner keeps
 * (PXI_OPR_OWNED) or one on its pusher's stack (PXI_OPR_ON_STACK). */
static inline void pxi_opr_free(pxi_engine *e, pxi_opr *o)
{
    if (o->size_class == PXI_OPR_OWNED) /* its owner's (pxi_push.block) */
        return;
    if (o->size_class >= 0)
        pxi_pool_put(&e->opr_pool[o->size_class], o);
    else if (o->size_class != PXI_OPR_ON_STACK)
        pxi_free(o);
}

#endif
