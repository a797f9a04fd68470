/* core/engine/object_pool.c - fixed-size object pools with per-thread caches (engine_impl.h):
 * Opr blocks and kernel op payloads come from here, so the steady state of push/complete does
 * no malloc. */
#include <string.h>

#include "base/alloc.h"
#include "core/engine/engine_impl.h"

#define CACHE_WAYS  8
#define CACHE_BATCH PXI_POOL_BATCH

/* Live pools, so a thread evicting its cache of another pool can tell whether that pool (of
 * a destroyed engine) is gone; init/fini and evictions only, never the hot path. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static pxi_pool *live_pools;      /* under live_lock */
static uint64_t next_pool_id = 1; /* under live_lock */

typedef struct {
    uint64_t id; /* 0: empty way */
    pxi_pool *pool;
    void *list;
    int n;
} pool_cache;

static PXI_ENGINE_TLS pool_cache tl_cache[CACHE_WAYS];
static PXI_ENGINE_TLS unsigned tl_evict;

void pxi_pool_init(pxi_pool *p, size_t obj_bytes, size_t per_slab)
{
    pxi_spin_init(&p->lock);
    p->obj_bytes = (obj_bytes + PXI_CACHE_LINE - 1) / PXI_CACHE_LINE * PXI_CACHE_LINE;
    p->per_slab = per_slab;
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
    for (int w = 0; w < CACHE_WAYS; ++w)
        if (tl_cache[w].id == p->id)
            tl_cache[w].id = 0;
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

static pool_cache *cache_for(pxi_pool *p)
{
    for (int w = 0; w < CACHE_WAYS; ++w)
        if (tl_cache[w].id == p->id)
            return &tl_cache[w];
    pool_cache *c = NULL;
    for (int w = 0; w < CACHE_WAYS && !c; ++w)
        if (tl_cache[w].id == 0)
            c = &tl_cache[w];
    if (!c) {
        c = &tl_cache[tl_evict++ % CACHE_WAYS];
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

void *pxi_pool_get(pxi_pool *p)
{
    pool_cache *c = cache_for(p);
    if (PXI_UNLIKELY(c->n == 0)) {
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
                return NULL;
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
    }
    void *o = c->list;
    c->list = *(void **)o;
    c->n--;
    /* The next object was last written by the thread that freed it (usually a worker on
     * another core): start pulling its first lines in now, for writing, so that miss overlaps
     * with the caller's use of this object instead of stalling the next get. */
    if (c->list) {
        const char *nx = c->list;
        for (size_t off = 0; off < p->obj_bytes && off < 4 * PXI_CACHE_LINE; off += PXI_CACHE_LINE)
            __builtin_prefetch(nx + off, 1, 3);
    }
    return o;
}

void pxi_pool_put(pxi_pool *p, void *obj)
{
    pool_cache *c = cache_for(p);
    *(void **)obj = c->list;
    c->list = obj;
    if (++c->n > 2 * CACHE_BATCH)
        give_back(p, &c->list, &c->n, CACHE_BATCH);
}
