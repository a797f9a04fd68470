/* spaces/threads/mdrange.c - MDRange launches on the Threads space (parex/mdrange.h): the plan
 * (policy/plan.h, pxi_plan_md) cuts the box into tiles and deals tile numbers to the pool's
 * ranks like a 1-D launch deals indices.
 *
 *   - static: rank r runs its contiguous block of tile numbers in tile order; a reduce folds the
 *     block from the identity into the rank's slot and the fan-in tree (fanin.h) joins ranks in
 *     rank order, so values join in tile order.
 *   - dynamic: ranks claim units of consecutive tiles from per-rank ranges (a rank's own share
 *     first, then the others' in rank order, as threads.c's PXI_DYNAMIC_STEAL); a reduce folds
 *     each unit from the identity into its own slot, and rank 0 joins the slots in unit order
 *     after the fan-in. Which rank ran a unit never changes the result.
 *   - a launch from inside a running kernel runs inline, every tile in tile order.
 * Tiles are walked with pxi_mdrange_tile_next (no division per tile). */
#include <stdalign.h>
#include <stdatomic.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "core/piece_hook.h"
#include "core/registry.h"
#include "policy/mdrange.h"
#include "policy/plan.h"
#include "spaces/threads/fanin.h"
#include "spaces/threads/pool.h"
#include "spaces/threads/threads.h"

/* One MDRange launch as the ranks see it; on the launcher's stack, read-only while ranks run. */
typedef struct md_job {
    union {
        px_md_for_fn f;
        px_md_reduce_fn r;
    } fn;
    void *ctx;
    px_kernel_kind kind;
    const px_reducer *reducer;
    void *result;
    unsigned char *unit_values; /* dynamic reduce: plan.tiles.nclaims slots of stride bytes */
    size_t stride;
    pxi_md_plan plan;
} md_job;

/* Run tiles [k0, k1) in tile order; a reduce folds them into *acc. */
static void run_tiles(const md_job *j, int64_t k0, int64_t k1, void *acc)
{
    if (k0 >= k1)
        return;
    const pxi_md_tiling *t = &j->plan.tiling;
    int64_t coord[PX_MAX_RANK], lo[PX_MAX_RANK], hi[PX_MAX_RANK];
    pxi_mdrange_tile_coords(t, k0, coord);
    pxi_mdrange_coords_box(t, coord, lo, hi);
    for (int64_t k = k0;;) {
        if (j->kind == PX_KERNEL_FOR)
            j->fn.f(lo, hi, j->ctx);
        else
            j->fn.r(lo, hi, j->ctx, acc);
        if (++k >= k1)
            return;
        pxi_piece_hook_run();
        (void)pxi_mdrange_tile_next(t, coord, lo, hi);
    }
}

/* Run unit u of a dynamic job (its own value slot for a reduce). */
static void run_unit(const md_job *j, int64_t u)
{
    int64_t b, e;
    pxi_plan_claim_bounds(&j->plan.tiles, u, &b, &e);
    void *v = NULL;
    if (j->unit_values) {
        v = j->unit_values + (size_t)u * j->stride;
        j->reducer->identity(v);
    }
    run_tiles(j, b, e, v);
}

static void run_unit_any(const void *j, int64_t u)
{
    run_unit(j, u);
}

/* Claim and run units of tiles until none is left (pxi_tpool_claim_units). */
static void claims(const md_job *j, pxi_tpool *pool, int rank)
{
    pxi_tpool_claim_units(pool, rank, run_unit_any, j);
}

static void md_main(pxi_tpool *pool, int rank, unsigned gen, void *arg)
{
    const md_job *j = arg;
    const pxi_range_plan *tp = &j->plan.tiles;
    int64_t b, e;
    if (j->kind == PX_KERNEL_FOR) {
        if (tp->dynamic) {
            claims(j, pool, rank);
        } else {
            pxi_plan_static_block(tp, rank, &b, &e);
            run_tiles(j, b, e, NULL);
        }
        (void)pxi_tpool_fanin(pool, rank, gen, PXI_FANIN_UP, NULL);
        return;
    }
    const px_reducer *r = j->reducer;
    pxi_tpool_slot *me = &pxi_tpool_slots(pool)[rank];
    if (tp->dynamic) {
        claims(j, pool, rank);
        if (pxi_tpool_fanin(pool, rank, gen, PXI_FANIN_UP, NULL)) {
            /* Rank 0, after every unit: join the unit values in tile order. */
            void *acc = me->value;
            memcpy(acc, j->unit_values, r->value_size);
            for (int64_t u = 1; u < tp->nclaims; ++u)
                r->join(acc, j->unit_values + (size_t)u * j->stride);
            memcpy(j->result, acc, r->value_size);
        }
        return;
    }
    r->identity(me->value);
    pxi_plan_static_block(tp, rank, &b, &e);
    run_tiles(j, b, e, me->value);
    if (pxi_tpool_fanin(pool, rank, gen, PXI_FANIN_UP, r->join))
        memcpy(j->result, me->value, r->value_size);
}

static void job_init(md_job *j, const pxi_launch *l)
{
    memset(j, 0, sizeof *j);
    if (l->kind == PX_KERNEL_FOR)
        j->fn.f = l->host_md_for;
    else
        j->fn.r = l->host_md_reduce;
    j->ctx = l->ctx;
    j->kind = l->kind;
    j->reducer = l->reducer;
    j->result = l->result;
}

int pxi_threads_md_launch(const pxi_launch *l, pxi_tpool *pool, size_t l2_bytes)
{
    if (l->kind != PX_KERNEL_FOR && l->kind != PX_KERNEL_REDUCE) {
        PXI_ERROR("threads: MDRange launch '%s' of kind %d (only for and reduce)", l->label,
                  (int)l->kind);
        return PX_EINVAL;
    }
    alignas(PXI_CACHE_LINE) md_job j;
    job_init(&j, l);
    const pxi_md_hint hint = {.l2_bytes = l2_bytes};
    if (pxi_tpool_in_job()) {
        /* Nested: run inline, serially, with the serial plan. */
        j.plan = pxi_plan_md(l->md, l->kind, 1, PXI_PLAN_SERIAL, &hint);
        alignas(PXI_CACHE_LINE) unsigned char acc[PX_REDUCER_MAX_VALUE_BYTES];
        if (l->kind == PX_KERNEL_REDUCE)
            l->reducer->identity(acc);
        run_tiles(&j, 0, j.plan.tiling.total, acc);
        if (l->kind == PX_KERNEL_REDUCE)
            memcpy(l->result, acc, l->reducer->value_size);
        return PX_OK;
    }
    int nranks = pxi_tpool_size(pool);
    j.plan = pxi_plan_md(l->md, l->kind, nranks, PXI_PLAN_POOL, &hint);
    const pxi_range_plan *tp = &j.plan.tiles;
    if (tp->dynamic && l->kind == PX_KERNEL_REDUCE) {
        const px_reducer *r = l->reducer;
        j.stride = (r->value_size + r->value_align - 1) / r->value_align * r->value_align;
        size_t bytes = (size_t)tp->nclaims * j.stride;
        j.unit_values = pxi_malloc_aligned(bytes, PXI_CACHE_LINE);
        if (!j.unit_values) {
            PXI_ERROR("threads: px_parallel_reduce_md(\"%s\"): out of memory for %zu bytes of "
                      "dynamic-schedule tile values",
                      l->label, bytes);
            return PX_ENOMEM;
        }
    }
    pxi_tpool_lock(pool);
    if (tp->dynamic) {
        pxi_tpool_slot *slots = pxi_tpool_slots(pool);
        for (int r = 0; r < nranks; ++r) {
            int64_t k0, k1;
            pxi_plan_claims_of_rank(tp, r, &k0, &k1);
            atomic_store_explicit(&slots[r].next, k0, memory_order_relaxed);
            slots[r].end = k1;
        }
    }
    pxi_tpool_run(pool, md_main, &j);
    pxi_tpool_unlock(pool);
    pxi_free_aligned(j.unit_values);
    return PX_OK;
}
