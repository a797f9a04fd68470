/* core/engine/object_pool.h - the engine's fixed-size object pools (object_pool.c) and the
 * attributes the engine's hot path is written with (thread-local model, inlining).
 *
 * Its own header, below engine_impl.h, because the pool's get and put are inline (the thread's
 * cache of a pool is one look on the push path) and call the pool's out-of-line halves: kept in
 * engine_impl.h, that made engine_impl.h and object_pool.c lean on each other.
 */
#ifndef PXI_ENGINE_OBJECT_POOL_H
#define PXI_ENGINE_OBJECT_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "base/os.h"
#include "core/engine/spin_lock.h"

/* Thread-locals on the push/complete path (the worker identity, the continuation slot, the
 * pool caches): initial-exec (base/os.h says why). */
#define PXI_ENGINE_TLS PXI_TLS_INITIAL_EXEC

/* The push and run of an empty op that its pusher runs at once (work-first inlining, cost.c)
 * take about 520 instructions. An error case tested there (a bad handle) goes to a function
 * of its own kept out of line and out of the hot code's cache lines (PXI_ENGINE_COLD); steps
 * that only some ops take (a candidate that must wait after all, a cleanup, an operator's
 * count) stay out of line (PXI_ENGINE_NOINLINE); the few helpers that the hot path and the
 * other paths share are forced inline where the compiler would leave a call
 * (PXI_ENGINE_INLINE). */
#if defined(__GNUC__)
#define PXI_ENGINE_COLD     __attribute__((cold, noinline))
#define PXI_ENGINE_NOINLINE __attribute__((noinline))
#define PXI_ENGINE_INLINE   inline __attribute__((always_inline))
#else
#define PXI_ENGINE_COLD
#define PXI_ENGINE_NOINLINE
#define PXI_ENGINE_INLINE inline
#endif

/* ---- fixed-size object pool (object_pool.c) ----------------------------------------------- */

/* Objects come from slabs of pxi_malloc memory and go back to a free list; slabs are freed
 * only by pxi_pool_fini, so a steady stream of allocations does no malloc. Each thread keeps a
 * small cache per pool (moved to and from the shared list in batches), so the pusher that
 * allocates and the workers that free meet on the pool lock once per batch, not per op.
 * Batches travel as whole chains (the "magazines" of Bonwick's slab allocator): a refill
 * takes a chain in O(1) instead of walking 32 objects that sit, dirty, in another core's
 * cache (that walk was a chain of dependent misses, ~6% of the pusher's time on empty ops). */
#define PXI_POOL_BATCH 32
typedef struct pxi_pool {
    pxi_spin lock;
    uint64_t id;                /* process-unique, names the pool in thread caches */
    size_t obj_bytes;           /* rounded up to 64 */
    size_t per_slab;            /* objects per slab */
    unsigned prefetch_lines;    /* lines of the next object a get prefetches: 1 to 4 */
    void *free_list;            /* under lock: loose objects */
    void *full;                 /* under lock: chains of exactly PXI_POOL_BATCH objects */
    void *slabs;                /* under lock: singly linked through each slab's first word */
    struct pxi_pool *next_live; /* under the live-pool lock (object_pool.c) */
} pxi_pool;

void pxi_pool_init(pxi_pool *p, size_t obj_bytes, size_t per_slab);
/* Frees every slab; objects still out become invalid. */
void pxi_pool_fini(pxi_pool *p);

/* A thread's cache of one pool (object_pool.c): PXI_POOL_WAYS ways per thread, a pool's home
 * way being id % PXI_POOL_WAYS. Here only so that get and put, on every push and complete,
 * are inline: their common case is a few loads and stores. */
#define PXI_POOL_WAYS 8
typedef struct pxi_pool_cache {
    uint64_t id; /* 0: empty way */
    pxi_pool *pool;
    void *list;
    int n;
} pxi_pool_cache;
extern PXI_ENGINE_TLS pxi_pool_cache pxi_pool_tl_cache[PXI_POOL_WAYS];
/* The rare halves (object_pool.c): the cache of @p when it is not in its home way; a get
 * from an empty cache (NULL when a slab allocation fails); a put that overfills it. */
pxi_pool_cache *pxi_pool_cache_slow(pxi_pool *p);
void *pxi_pool_get_slow(pxi_pool *p, pxi_pool_cache *c);
void pxi_pool_put_slow(pxi_pool *p, pxi_pool_cache *c);

static inline pxi_pool_cache *pxi_pool_cache_for(pxi_pool *p)
{
    pxi_pool_cache *c = &pxi_pool_tl_cache[p->id % PXI_POOL_WAYS];
    if (PXI_LIKELY(c->id == p->id))
        return c;
    return pxi_pool_cache_slow(p);
}

/* Take an object from the calling thread's cache, prefetching @lines (1 to 4) lines of the next
 * one (last written by the thread that freed it, usually a worker on another core: the miss
 * overlaps with the caller's use of this object instead of stalling the next get). NULL when a
 * slab allocation fails. A caller that knows its objects' size passes a constant (the op
 * blocks: push.c), and the choice below folds away. */
static inline void *pxi_pool_get_lines(pxi_pool *p, unsigned lines)
{
    pxi_pool_cache *c = pxi_pool_cache_for(p);
    void *o = c->list;
    if (PXI_UNLIKELY(c->n == 0))
        return pxi_pool_get_slow(p, c);
    const char *nx = *(void **)o;
    c->list = (void *)(uintptr_t)nx;
    c->n--;
    /* No test for the cache's end (nx NULL, one get in PXI_POOL_BATCH or fewer): a prefetch never
     * faults, and the test cost every get two instructions. */
    switch (lines) { /* no loop: a jump, then the prefetches */
    case 4:
        __builtin_prefetch(nx + 3 * PXI_CACHE_LINE, 1, 3);
        /* fallthrough */
    case 3:
        __builtin_prefetch(nx + 2 * PXI_CACHE_LINE, 1, 3);
        /* fallthrough */
    case 2:
        __builtin_prefetch(nx + PXI_CACHE_LINE, 1, 3);
        /* fallthrough */
    default:
        __builtin_prefetch(nx, 1, 3);
    }
    return o;
}

/* pxi_pool_get_lines with the pool's own count (its objects' lines, at most 4). */
static inline void *pxi_pool_get(pxi_pool *p)
{
    return pxi_pool_get_lines(p, p->prefetch_lines);
}

/* Give @obj back to the calling thread's cache; a batch goes back to the pool once the cache
 * holds two. */
static inline void pxi_pool_put(pxi_pool *p, void *obj)
{
    pxi_pool_cache *c = pxi_pool_cache_for(p);
    *(void **)obj = c->list;
    c->list = obj;
    if (PXI_UNLIKELY(++c->n > 2 * PXI_POOL_BATCH))
        pxi_pool_put_slow(p, c);
}

#endif /* PXI_ENGINE_OBJECT_POOL_H */
