/* core/engine/pool.c - the engine's object pools, spin lock and generation-checked handle
 * tables. Everything the steady state of push/complete needs comes from here without malloc. */
#include <string.h>

#include "core/alloc.h"
#include "core/engine/engine_impl.h"
#include "core/os.h"
#include "core/wait.h"

void pxi_spin_lock_slow(pxi_spin *l)
{
    for (unsigned n = 0;; ++n) {
        /* Poll relaxed; the exchange below carries the acquire. */
        while (atomic_load_explicit(&l->v, memory_order_relaxed) != 0)
            pxi_wait_backoff(n++);
        if (atomic_exchange_explicit(&l->v, 1, memory_order_acquire) == 0)
            return;
    }
}

/* ---- pools ----------------------------------------------------------------------------- */

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

/* ---- handle tables --------------------------------------------------------------------- */

/* One counter for the whole process, so handles of different engines never share a
 * generation (until 2^32 allocations wrap it). Relaxed: only uniqueness matters. */
static atomic_uint next_gen = 1;

void pxi_htable_init(pxi_htable *t, size_t slot_bytes, void (*slot_init)(void *),
                     void (*slot_fini)(void *))
{
    pthread_mutex_init(&t->lock, NULL);
    /* Whole cache lines per slot, on line boundaries: a Var is locked by the pusher while a
     * worker releases its neighbour, and a 48-byte Var would straddle two lines half the
     * time and share one with the next Var (false sharing on the push/complete path). */
    t->slot_bytes = (slot_bytes + PXI_CACHE_LINE - 1) / PXI_CACHE_LINE * PXI_CACHE_LINE;
    t->slot_init = slot_init;
    t->slot_fini = slot_fini;
    for (unsigned i = 0; i < PXI_HT_MAX_CHUNKS; ++i)
        atomic_init(&t->chunks[i], NULL);
    t->n_slots = 0;
    t->free_list = NULL;
    t->n_live = 0;
}

void pxi_htable_fini(pxi_htable *t)
{
    for (unsigned i = 0; i < PXI_HT_MAX_CHUNKS; ++i) {
        unsigned char *c = atomic_load_explicit(&t->chunks[i], memory_order_relaxed);
        if (!c)
            break;
        if (t->slot_fini)
            for (unsigned k = 0; k < PXI_HT_CHUNK; ++k)
                t->slot_fini(c + (size_t)k * t->slot_bytes);
        pxi_free_aligned(c);
        atomic_store_explicit(&t->chunks[i], NULL, memory_order_relaxed);
    }
    pthread_mutex_destroy(&t->lock);
}

void *pxi_htable_alloc(pxi_htable *t, uint32_t *gen)
{
    pthread_mutex_lock(&t->lock);
    pxi_slot_hdr *h = t->free_list;
    if (h) {
        t->free_list = h->next_free;
    } else {
        uint32_t idx = t->n_slots;
        uint32_t ci = idx / PXI_HT_CHUNK;
        if (ci >= PXI_HT_MAX_CHUNKS) {
            pthread_mutex_unlock(&t->lock);
            return NULL;
        }
        unsigned char *c = atomic_load_explicit(&t->chunks[ci], memory_order_relaxed);
        if (!c) {
            c = pxi_malloc_aligned((size_t)PXI_HT_CHUNK * t->slot_bytes, PXI_CACHE_LINE);
            if (!c) {
                pthread_mutex_unlock(&t->lock);
                return NULL;
            }
            memset(c, 0, (size_t)PXI_HT_CHUNK * t->slot_bytes);
            for (unsigned k = 0; k < PXI_HT_CHUNK; ++k) {
                pxi_slot_hdr *s = (pxi_slot_hdr *)(c + (size_t)k * t->slot_bytes);
                atomic_init(&s->gen, 0);
                s->index = ci * PXI_HT_CHUNK + k;
                if (t->slot_init)
                    t->slot_init(s);
            }
            /* Release: a lookup that acquires the chunk pointer sees initialized slots. */
            atomic_store_explicit(&t->chunks[ci], c, memory_order_release);
        }
        h = (pxi_slot_hdr *)(c + (size_t)(idx % PXI_HT_CHUNK) * t->slot_bytes);
        t->n_slots++;
    }
    t->n_live++;
    pthread_mutex_unlock(&t->lock);
    unsigned g;
    do {
        g = atomic_fetch_add_explicit(&next_gen, 1, memory_order_relaxed);
    } while (g == 0);
    *gen = g;
    return h;
}

void pxi_htable_release(pxi_htable *t, void *slot)
{
    pxi_slot_hdr *h = slot;
    pthread_mutex_lock(&t->lock);
    h->next_free = t->free_list;
    t->free_list = h;
    t->n_live--;
    pthread_mutex_unlock(&t->lock);
}

void *pxi_htable_lookup(pxi_htable *t, uintptr_t handle, uint32_t *gen)
{
    uint32_t lo = (uint32_t)(handle & 0xffffffffu);
    uint32_t g = (uint32_t)((uint64_t)handle >> 32);
    if (lo == 0 || g == 0)
        return NULL;
    uint32_t idx = lo - 1;
    uint32_t ci = idx / PXI_HT_CHUNK;
    if (ci >= PXI_HT_MAX_CHUNKS)
        return NULL;
    unsigned char *c = atomic_load_explicit(&t->chunks[ci], memory_order_acquire);
    if (!c)
        return NULL;
    pxi_slot_hdr *h = (pxi_slot_hdr *)(c + (size_t)(idx % PXI_HT_CHUNK) * t->slot_bytes);
    if (atomic_load_explicit(&h->gen, memory_order_acquire) != g)
        return NULL;
    *gen = g;
    return h;
}
