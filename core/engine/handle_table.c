/* core/engine/handle_table.c - generation-checked handle tables (engine_impl.h): the slots Vars
 * and reusable operators live in, named by handles that carry the slot's generation, so a
 * deleted or foreign handle is recognized instead of followed. */
#include <string.h>

#include "base/alloc.h"
#include "core/engine/engine_impl.h"

/* One counter for the whole process, so handles of different engines never share a
 * generation (until 2^32 allocations wrap it). Relaxed: only uniqueness matters. */
static atomic_uint next_gen = 1;

void pxi_handle_table_init(pxi_handle_table *t, size_t slot_bytes, void (*slot_init)(void *),
                           void (*slot_fini)(void *))
{
    pthread_mutex_init(&t->lock, NULL);
    /* Whole cache lines per slot, on line boundaries: a Var is locked by the pusher while a
     * worker releases its neighbour, and a 48-byte Var would straddle two lines half the
     * time and share one with the next Var (false sharing on the push/complete path). */
    t->slot_bytes = (slot_bytes + PXI_CACHE_LINE - 1) / PXI_CACHE_LINE * PXI_CACHE_LINE;
    t->slot_init = slot_init;
    t->slot_fini = slot_fini;
    for (unsigned i = 0; i < PXI_HANDLE_MAX_CHUNKS; ++i)
        atomic_init(&t->chunks[i], NULL);
    t->n_slots = 0;
    t->free_list = NULL;
    t->n_live = 0;
}

void pxi_handle_table_fini(pxi_handle_table *t)
{
    for (unsigned i = 0; i < PXI_HANDLE_MAX_CHUNKS; ++i) {
        unsigned char *c = atomic_load_explicit(&t->chunks[i], memory_order_relaxed);
        if (!c)
            break;
        if (t->slot_fini)
            for (unsigned k = 0; k < PXI_HANDLE_CHUNK; ++k)
                t->slot_fini(c + (size_t)k * t->slot_bytes);
        pxi_free_aligned(c);
        atomic_store_explicit(&t->chunks[i], NULL, memory_order_relaxed);
    }
    pthread_mutex_destroy(&t->lock);
}

void *pxi_handle_table_alloc(pxi_handle_table *t, uint32_t *gen)
{
    pthread_mutex_lock(&t->lock);
    pxi_slot_hdr *h = t->free_list;
    if (h) {
        t->free_list = h->next_free;
    } else {
        uint32_t idx = t->n_slots;
        uint32_t ci = idx / PXI_HANDLE_CHUNK;
        if (ci >= PXI_HANDLE_MAX_CHUNKS) {
            pthread_mutex_unlock(&t->lock);
            return NULL;
        }
        unsigned char *c = atomic_load_explicit(&t->chunks[ci], memory_order_relaxed);
        if (!c) {
            c = pxi_malloc_aligned((size_t)PXI_HANDLE_CHUNK * t->slot_bytes, PXI_CACHE_LINE);
            if (!c) {
                pthread_mutex_unlock(&t->lock);
                return NULL;
            }
            memset(c, 0, (size_t)PXI_HANDLE_CHUNK * t->slot_bytes);
            for (unsigned k = 0; k < PXI_HANDLE_CHUNK; ++k) {
                pxi_slot_hdr *s = (pxi_slot_hdr *)(c + (size_t)k * t->slot_bytes);
                atomic_init(&s->gen, 0);
                s->index = ci * PXI_HANDLE_CHUNK + k;
                if (t->slot_init)
                    t->slot_init(s);
            }
            /* Release: a lookup that acquires the chunk pointer sees initialized slots. */
            atomic_store_explicit(&t->chunks[ci], c, memory_order_release);
        }
        h = (pxi_slot_hdr *)(c + (size_t)(idx % PXI_HANDLE_CHUNK) * t->slot_bytes);
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

void pxi_handle_table_release(pxi_handle_table *t, void *slot)
{
    pxi_slot_hdr *h = slot;
    pthread_mutex_lock(&t->lock);
    h->next_free = t->free_list;
    t->free_list = h;
    t->n_live--;
    pthread_mutex_unlock(&t->lock);
}
