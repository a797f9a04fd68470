/* core/engine/cost.h - the measured cost of op functions, for work-first inlining (cost.c).
 * The lookups sit on every eligible push and run, so they are inline here. */
#ifndef PXI_ENGINE_COST_H
#define PXI_ENGINE_COST_H

#include "core/engine/engine_impl.h"

#define PXI_COST_SAMPLE  64u
#define PXI_COST_NS_BITS 40
#define PXI_COST_NS_MAX  ((UINT64_C(1) << PXI_COST_NS_BITS) - 1)

static inline uint64_t pxi_cost_hash(px_sync_fn fn)
{
    uint64_t h = (uint64_t)(uintptr_t)fn;
    h ^= h >> 17;
    return h * UINT64_C(0x9e3779b97f4a7c15);
}

static inline pxi_cost_slot *pxi_cost_slot_of(pxi_engine *e, uint64_t h)
{
    return &e->cost[(h >> 32) % PXI_COST_SLOTS];
}

/* A nonzero 24-bit tag from other bits of the hash than the slot index. */
static inline uint64_t pxi_cost_tag(uint64_t h)
{
    uint64_t t = (h >> 8) & 0xffffffu;
    return t ? t : 1;
}

static inline int pxi_cost_below(pxi_engine *e, px_sync_fn fn, int64_t limit_ns)
{
    uint64_t h = pxi_cost_hash(fn);
    uint64_t w = atomic_load_explicit(&pxi_cost_slot_of(e, h)->word, memory_order_relaxed);
    return w >> PXI_COST_NS_BITS == pxi_cost_tag(h) && (int64_t)(w & PXI_COST_NS_MAX) < limit_ns;
}

/* xorshift state for choosing, at random, which eligible runs on this thread are timed:
 * a counter would alias with a periodic push pattern (ops A and B alternating: every 64th
 * run is always B, and A is never timed again). 0 until first use. */
extern PXI_ENGINE_TLS uint32_t pxi_cost_sample_state;

static inline int pxi_cost_sample_this_run(void)
{
    uint32_t x = pxi_cost_sample_state;
    if (x == 0)
        x = (uint32_t)(uintptr_t)&pxi_cost_sample_state | 1u; /* distinct per thread */
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    pxi_cost_sample_state = x;
    return x % PXI_COST_SAMPLE == 0;
}

/* Fold one timed run of @fn, @ns long (clock read included), into its moving average. */
void pxi_cost_record(pxi_engine *e, px_sync_fn fn, int64_t ns);

#endif
