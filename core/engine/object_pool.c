/* core/engine/object_pool.c - fixed-size object pools with per-thread caches (object_pool.h):
 * Opr blocks and kernel op payloads come from here, so the steady state of push/complete does
 * no malloc. */
#include <pthread.h>
#include <string.h>

#include "base/alloc.h"
#include "core/engine/object_pool.h"

#define CACHE_BATCH PXI_POOL_BATCH

/* Live pools, so a thread evicting its cache of another pool can tell whether that pool (of
 * a destroyed engine) is gone; init/fini and evictions only, never the hot path. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static pxi_pool *live_pools;      /* under live_lock */
static uint64_t next_pool_id = 1; /* under live_lock */

PXI_ENGINE_TLS pxi_pool_cache pxi_pool_tl_cache[PXI_POOL_WAYS];
static PXI_ENGINE_TLS unsigned tl_evict;

void pxi_pool_init(pxi_pool *p, size_t obj_bytes, size_t per_slab)
{
    pxi_spin_init(&p->lock);
    p->obj_bytes = (obj_bytes + PXI_CACHE_LINE - 1) / PXI_CACHE_LINE * PXI_CACHE_LINE;
    p->per_slab = per_slab;
    p->prefetch_lines =
        (unsigned)(p->obj_bytes / PXI_CACHE_LINE < 4 ? p->obj_bytes / PXI_CACHE_LINE : 4);
    p->free_list = NULL;
    p->full = NULL;
    p->slabs = NULL;
    pthread_mutex_lock(&live_lock);
    p->id = next_pool_id++;
    p->next_live = live_pools;
    live_pools = p;
    pthread_mutex_unlock(&live_lock);
}

void pxi_pool_fini(pxi_pool *p)
{
    pthread_mutex_lock(&live_lock);
    for (pxi_pool **q = &live_pools; *q; q = &(*q)->next_live)
        if (*q == p) {
            *q = p->next_live;
            break;
        }
    pthread_mutex_unlock(&live_lock);
    /* Objects in other threads' caches die with the slabs; those caches are recognized as
     * stale by the id, which is never reused. */
    for (int w = 0; w < PXI_POOL_WAYS; ++w)
        if (pxi_pool_tl_cache[w].id == p->id)
            pxi_pool_tl_cache[w].id = 0;
    void *s = p->slabs;
    while (s) {
        void *next = *(void **)s;
        pxi_free_aligned(s);
        s = next;
    }
    p->slabs = NULL;
    p->free_list = NULL;
    p->full = NULL;
}

/* Move up to n objects from *list (a thread cache) to the pool: a batch of exactly
 * CACHE_BATCH as one chain on the full stack (linked through each chain head's second word;
 * objects are at least a cache line), anything else onto the loose list. The walk touches
 * this thread's own recently freed objects only. */
static void give_back(pxi_pool *p, void **list, int *count, int n)
{
    if (n <= 0 || !*list)
        return;
    void *first = *list, *last = first;
    int k = 1;
    while (k < n && *(void **)last) {
        last = *(void **)last;
        ++k;
    }
    *list = *(void **)last;
    *count -= k;
    if (k == CACHE_BATCH) {
        *(void **)last = NULL;
        pxi_spin_lock(&p->lock);
        ((void **)first)[1] = p->full;
        p->full = first;
        pxi_spin_unlock(&p->lock);
        return;
    }
    pxi_spin_lock(&p->lock);
    *(void **)last = p->free_list;
    p->free_list = first;
    pxi_spin_unlock(&p->lock);
}

/* The cache of @p when it is not in its home way: the pool's cache in another way, else a
 * fresh way (the home way when empty, so the next look-up hits at once), else a round-robin
 * victim. */
pxi_pool_cache *pxi_pool_cache_slow(pxi_pool *p)
{
    for (int w = 0; w < PXI_POOL_WAYS; ++w)
        if (pxi_pool_tl_cache[w].id == p->id)
            return &pxi_pool_tl_cache[w];
    pxi_pool_cache *c = NULL;
    if (pxi_pool_tl_cache[p->id % PXI_POOL_WAYS].id == 0)
        c = &pxi_pool_tl_cache[p->id % PXI_POOL_WAYS];
    for (int w = 0; w < PXI_POOL_WAYS && !c; ++w)
        if (pxi_pool_tl_cache[w].id == 0)
            c = &pxi_pool_tl_cache[w];
    if (!c) {
        c = &pxi_pool_tl_cache[tl_evict++ % PXI_POOL_WAYS];
        /* Return the victim's objects if its pool still lives (holding live_lock keeps it
         * from being finalized meanwhile); a dead pool's objects died with its slabs. */
        pthread_mutex_lock(&live_lock);
        for (pxi_pool *q = live_pools; q; q = q->next_live)
            if (q == c->pool && q->id == c->id) {
                give_back(q, &c->list, &c->n, c->n);
                break;
            }
        pthread_mutex_unlock(&live_lock);
    }
    c->id = p->id;
    c->pool = p;
    c->list = NULL;
    c->n = 0;
    return c;
}

/* Fill the empty cache @c of @p: a whole chain from the full stack, else up to a batch of
 * loose objects, else a new slab. 0 when the slab allocation fails. Out of line: once per
 * CACHE_BATCH gets at most. */
static PXI_ENGINE_NOINLINE int refill(pxi_pool *p, pxi_pool_cache *c)
{
    pxi_spin_lock(&p->lock);
    void *first = p->full, *last = NULL;
    int k = 0;
    if (first) {
        /* A whole chain in O(1); its last object already ends in NULL. */
        p->full = ((void **)first)[1];
        c->list = first;
        c->n = CACHE_BATCH;
        k = CACHE_BATCH;
        first = NULL;
    } else {
        first = p->free_list;
    }
    for (void *o = first; o && k < CACHE_BATCH; o = *(void **)o) {
        last = o;
        ++k;
    }
    if (first && k > 0) {
        p->free_list = *(void **)last;
        *(void **)last = NULL;
        c->list = first;
        c->n = k;
    }
    pxi_spin_unlock(&p->lock);
    if (k == 0) {
        /* Refill from a new slab, whose first line links the slab list. */
        size_t bytes = PXI_CACHE_LINE + p->obj_bytes * p->per_slab;
        unsigned char *slab = pxi_malloc_aligned(bytes, PXI_CACHE_LINE);
        if (!slab)
            return 0;
        unsigned char *objs = slab + PXI_CACHE_LINE;
        pxi_spin_lock(&p->lock);
        *(void **)slab = p->slabs;
        p->slabs = slab;
        pxi_spin_unlock(&p->lock);
        for (size_t i = p->per_slab; i-- > 0;) {
            void *obj = objs + i * p->obj_bytes;
            *(void **)obj = c->list;
            c->list = obj;
            c->n++;
        }
    }
    return 1;
}

void *pxi_pool_get_slow(pxi_pool *p, pxi_pool_cache *c)
{
    if (!refill(p, c))
        return NULL;
    return pxi_pool_get(p); /* its cache is filled now */
}

void pxi_pool_put_slow(pxi_pool *p, pxi_pool_cache *c)
{
    give_back(p, &c->list, &c->n, CACHE_BATCH);
}
