/* core/scatter.c - scatter-add (parex/scatter.h): create, contribute, reset, destroy, and the
 * executing-rank hook the inline px_scatter_add reads (pxi_exec_rank, core/runtime.h). */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "base/alloc.h"
#include "base/check.h"
#include "base/log.h"
#include "core/runtime.h"
#include "parex/config.h"
#include "parex/cuda.h"
#include "parex/kernel.h"
#include "parex/scatter.h"

int *px_exec_rank_location(void)
{
    return &pxi_exec_rank;
}

/* Indices one contribute/reset block covers: 16 KiB of each replica, enough work per block to
 * amortize a chunk, small enough that 2 ranks share a 10^5-element target. */
#define BLOCK 2048

/* Doubles per cache line: replica strides are multiples of it, so ranks never share a line. */
#define LINE_DOUBLES ((int64_t)(PXI_CACHE_LINE / sizeof(double)))

struct px_scatter {
    pxi_scatter_hot hot; /* first: px_scatter_add reads it through the handle */
    px_space *space;     /* the space whose kernels add; contribute and reset launch on it */
    int64_t n;
    int nrep;             /* DUPLICATED: replicas (ranks of the space); ATOMIC: 0 */
    int pinned;           /* the struct is in px_cuda_malloc_host memory (device-readable) */
    px_scatter_mode mode; /* ATOMIC or DUPLICATED, never AUTO */
};

static atomic_size_t budget_bytes = PX_SCATTER_DEFAULT_BUDGET_BYTES;

void px_scatter_set_budget_bytes(size_t bytes)
{
    atomic_store_explicit(&budget_bytes, bytes, memory_order_relaxed);
}

size_t px_scatter_budget_bytes(void)
{
    return atomic_load_explicit(&budget_bytes, memory_order_relaxed);
}

/* The space of a create, with its status: NULL means the default space. */
static int resolve_space(px_space **s)
{
    if (!pxi_runtime_ready()) {
        PXI_ERROR("px_scatter_create: the runtime is not initialized");
        return PX_ENOTINIT;
    }
    if (!*s) {
        *s = px_default_space();
        if (!*s) {
            PXI_ERROR("px_scatter_create: no default space");
            return PX_ENODEV;
        }
    }
    return PX_OK;
}

int px_scatter_create(px_scatter **out, px_space *s, double *target, int64_t n, px_scatter_mode m)
{
    if (!out || !target) {
        PXI_ERROR("px_scatter_create: %s is NULL", !out ? "out" : "target");
        return PX_EFAULT;
    }
    if (n < 0) {
        PXI_ERROR("px_scatter_create: n = %lld is negative", (long long)n);
        return PX_EINVAL;
    }
    if (m != PX_SCATTER_AUTO && m != PX_SCATTER_ATOMIC && m != PX_SCATTER_DUPLICATED) {
        PXI_ERROR("px_scatter_create: unknown mode %d", (int)m);
        return PX_EINVAL;
    }
    int rc = resolve_space(&s);
    if (rc != PX_OK)
        return rc;
    int ranks = px_space_concurrency(s); /* logs its own failure */
    if (ranks < 0)
        return ranks;
    int host = px_space_host_accessible(s);
    if (!host && m == PX_SCATTER_DUPLICATED) {
        PXI_ERROR("px_scatter_create: PX_SCATTER_DUPLICATED needs a host space; \"%s\" is not "
                  "(use PX_SCATTER_ATOMIC or PX_SCATTER_AUTO)",
                  px_space_name(s));
        return PX_EINVAL;
    }

    /* Replica size: n rounded up to a line, times ranks, in bytes; fits = no overflow. */
    int64_t stride = 0;
    size_t need = 0;
    int fits = n <= INT64_MAX - LINE_DOUBLES;
    if (fits) {
        stride = (n + LINE_DOUBLES - 1) / LINE_DOUBLES * LINE_DOUBLES;
        fits = (uint64_t)stride <= SIZE_MAX / sizeof(double) / (size_t)ranks;
        if (fits)
            need = (size_t)stride * sizeof(double) * (size_t)ranks;
    }
    size_t budget = px_scatter_budget_bytes();
    int within = fits && need <= budget;
    px_scatter_mode mode = m;
    if (m == PX_SCATTER_AUTO)
        mode = host && within ? PX_SCATTER_DUPLICATED : PX_SCATTER_ATOMIC;
    if (mode == PX_SCATTER_DUPLICATED && !within) {
        if (fits)
            PXI_ERROR("px_scatter_create: %d replicas of %lld doubles need %zu bytes, beyond "
                      "the budget of %zu bytes (px_scatter_set_budget_bytes)",
                      ranks, (long long)n, need, budget);
        else
            PXI_ERROR("px_scatter_create: %d replicas of %lld doubles overflow size_t, beyond "
                      "any budget (now %zu bytes, px_scatter_set_budget_bytes)",
                      ranks, (long long)n, budget);
        return PX_EINVAL;
    }

    px_scatter *sc;
    int pinned = 0;
    if (host) {
        sc = pxi_malloc(sizeof *sc);
    } else {
#if PX_HAVE_CUDA
        /* Device bodies read the handle: put it in pinned host memory, which the device reads
         * through unified addressing. */
        sc = px_cuda_malloc_host(sizeof *sc);
        pinned = 1;
#else
        sc = NULL; /* no device space without CUDA: unreachable */
#endif
    }
    if (!sc) {
        PXI_ERROR("px_scatter_create: out of memory for the handle");
        return PX_ENOMEM;
    }
    memset(sc, 0, sizeof *sc);
    sc->hot.target = target;
    sc->hot.stride = stride;
    sc->space = s;
    sc->n = n;
    sc->pinned = pinned;
    sc->mode = mode;
    if (mode == PX_SCATTER_DUPLICATED) {
        sc->hot.replicas = pxi_malloc_aligned(need ? need : 1, PXI_CACHE_LINE);
        if (!sc->hot.replicas) {
            PXI_ERROR("px_scatter_create: out of memory for %d replicas (%zu bytes)", ranks, need);
            pxi_free(sc);
            return PX_ENOMEM;
        }
        memset(sc->hot.replicas, 0, need);
        sc->nrep = ranks;
    }
    *out = sc;
    return PX_OK;
}

/* t[0..m) += r[0..m). The arrays never overlap (the caller's target and our replicas), which
 * restrict tells the compiler, and the body is written 4 wide so that the library's -O2 (whose
 * loop vectorizer skips loops needing a remainder) packs it into vector adds (SLP). Each
 * element is still one add, so the result is the same bits as the plain loop. */
static void add_into(double *restrict t, const double *restrict r, int64_t m)
{
    int64_t i = 0;
    for (; i + 4 <= m; i += 4) {
        t[i] += r[i];
        t[i + 1] += r[i + 1];
        t[i + 2] += r[i + 2];
        t[i + 3] += r[i + 3];
    }
    for (; i < m; ++i)
        t[i] += r[i];
}

/* Whether r[0..m) holds any bit set (so -0.0 counts as an add): ORs of the bit patterns 8
 * at a time, stopping at the first group with a bit, so a block that received adds (most are
 * dense) costs a few loads and an untouched one a read of the block. */
static int any_bits(const double *r, int64_t m)
{
    int64_t i = 0;
    for (; i + 8 <= m; i += 8) {
        uint64_t u[8];
        memcpy(u, r + i, sizeof u);
        if ((u[0] | u[1] | u[2] | u[3] | u[4] | u[5] | u[6] | u[7]) != 0)
            return 1;
    }
    for (; i < m; ++i) {
        uint64_t u;
        memcpy(&u, r + i, sizeof u);
        if (u != 0)
            return 1;
    }
    return 0;
}

/* One block of a contribute: target[b..e) += rep0 + rep1 + ... in that order (the same order
 * for every element, whichever thread runs the block), zeroing the replicas. The block of
 * target (16 KiB) stays in L1 across the replicas; each replica block is read once into cache,
 * added and zeroed there. A replica block whose bits are all zero received no adds (a rank's
 * adds cover only part of the range, e.g. its half of a mesh) and is left alone: no add, no
 * write back of zeros. Skipping it changes no value (x + 0.0 == x, the sign of a zero target
 * aside), so the result stays a function of the adds alone: bitwise reproducible. */
static void contribute_block(int64_t blk_b, int64_t blk_e, void *ctx)
{
    px_scatter *sc = ctx;
    double *t = sc->hot.target;
    for (int64_t blk = blk_b; blk < blk_e; ++blk) {
        int64_t b = blk * BLOCK, e = b + BLOCK < sc->n ? b + BLOCK : sc->n;
        for (int r = 0; r < sc->nrep; ++r) {
            double *rep = sc->hot.replicas + (int64_t)r * sc->hot.stride;
            if (!any_bits(rep + b, e - b))
                continue;
            add_into(t + b, rep + b, e - b);
            memset(rep + b, 0, (size_t)(e - b) * sizeof(double));
        }
    }
}

/* One block of a reset: zero the replicas. */
static void reset_block(int64_t blk_b, int64_t blk_e, void *ctx)
{
    px_scatter *sc = ctx;
    for (int64_t blk = blk_b; blk < blk_e; ++blk) {
        int64_t b = blk * BLOCK, e = b + BLOCK < sc->n ? b + BLOCK : sc->n;
        for (int r = 0; r < sc->nrep; ++r)
            memset(sc->hot.replicas + (int64_t)r * sc->hot.stride + b, 0,
                   (size_t)(e - b) * sizeof(double));
    }
}

static int check_handle(const px_scatter *sc, const char *fn)
{
    if (!sc) {
        PXI_ERROR("%s: the scatter is NULL", fn);
        return PX_EFAULT;
    }
    if (!pxi_runtime_ready()) {
        PXI_ERROR("%s: the runtime is not initialized", fn);
        return PX_ENOTINIT;
    }
    return PX_OK;
}

int px_scatter_contribute(px_scatter *sc)
{
    int rc = check_handle(sc, "px_scatter_contribute");
    if (rc != PX_OK)
        return rc;
    if (sc->mode == PX_SCATTER_ATOMIC)
        return sc->pinned ? px_fence(sc->space) : PX_OK;
    if (sc->n == 0)
        return PX_OK;
    return px_parallel_for_fn(sc->space, "px_scatter_contribute",
                              px_range(0, (sc->n + BLOCK - 1) / BLOCK), contribute_block, sc);
}

int px_scatter_reset(px_scatter *sc)
{
    int rc = check_handle(sc, "px_scatter_reset");
    if (rc != PX_OK)
        return rc;
    if (sc->mode == PX_SCATTER_ATOMIC || sc->n == 0)
        return PX_OK;
    return px_parallel_for_fn(sc->space, "px_scatter_reset",
                              px_range(0, (sc->n + BLOCK - 1) / BLOCK), reset_block, sc);
}

int px_scatter_destroy(px_scatter *sc)
{
    if (!sc) {
        PXI_ERROR("px_scatter_destroy: the scatter is NULL");
        return PX_EFAULT;
    }
    pxi_free_aligned(sc->hot.replicas);
#if PX_HAVE_CUDA
    if (sc->pinned)
        return px_cuda_free_host(sc);
#endif
    pxi_free(sc);
    return PX_OK;
}

int px_scatter_get_mode(const px_scatter *sc)
{
    if (!sc) {
        PXI_ERROR("px_scatter_get_mode: the scatter is NULL");
        return PX_EFAULT;
    }
    return (int)sc->mode;
}
