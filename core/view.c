/* core/view.c - views (parex/view.h): allocation with parallel first-touch zeroing, mirrors,
 * deep copies between any layouts and spaces, subviews, and the PX_DEBUG_CHECK bounds reports. */
#include "parex/view.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "core/memory.h"
#include "core/runtime.h"
#include "parex/kernel.h"
#include "parex/memory.h"

#define VIEW_DEFAULT_LABEL "px_view"
/* Below this size the calling thread zeroes: a launch costs more than the memset. */
#define VIEW_PARALLEL_ZERO_BYTES ((size_t)64 << 10)
/* Zeroing unit of a parallel first touch: one page. */
#define VIEW_ZERO_BLOCK ((size_t)4096)
/* Zero buffer (host) for device memory; also the staging granularity bound. */
#define VIEW_DEVICE_ZERO_BYTES ((size_t)1 << 20)

static void view_clear(px_view *v)
{
    memset(v, 0, sizeof *v);
}

/* Strides of a fresh view in layout order; extents of 0 count as 1. */
static void view_set_strides(px_view *v)
{
    int64_t s = 1;
    if (v->layout == PX_LAYOUT_LEFT) {
        for (int d = 0; d < v->rank; ++d) {
            v->stride[d] = s;
            s *= v->extent[d] > 0 ? v->extent[d] : 1;
        }
    } else {
        for (int d = v->rank - 1; d >= 0; --d) {
            v->stride[d] = s;
            s *= v->extent[d] > 0 ? v->extent[d] : 1;
        }
    }
}

int64_t px_view_size(const px_view *v)
{
    if (!v || v->rank < 0 || v->rank > PX_MAX_RANK)
        return 0;
    int64_t n = 1;
    for (int d = 0; d < v->rank; ++d)
        n *= v->extent[d];
    return n;
}

/* Shape checks shared by alloc (extents from the caller) and the functions taking a view.
 * The element count times elem_size and the product of the extents counted as >= 1 (the
 * largest stride times its extent) must fit in int64_t. */
static int shape_check(const char *caller, const char *label, size_t elem_size, int rank,
                       const int64_t *extents, int64_t *n_out)
{
    if (rank < 0 || rank > PX_MAX_RANK) {
        PXI_ERROR("%s('%s'): rank %d outside 0..%d", caller, label, rank, PX_MAX_RANK);
        return PX_EINVAL;
    }
    if (elem_size == 0 || elem_size > (size_t)INT64_MAX) {
        PXI_ERROR("%s('%s'): element size %zu", caller, label, elem_size);
        return PX_EINVAL;
    }
    int64_t n = 1, span = (int64_t)elem_size;
    for (int d = 0; d < rank; ++d) {
        int64_t e = extents[d];
        if (e < 0) {
            PXI_ERROR("%s('%s'): dimension %d: negative extent %lld", caller, label, d,
                      (long long)e);
            return PX_EINVAL;
        }
        int64_t m = e > 0 ? e : 1;
        if (span > INT64_MAX / m) {
            PXI_ERROR("%s('%s'): dimension %d: size in bytes overflows int64 (extent %lld)", caller,
                      label, d, (long long)e);
            return PX_EINVAL;
        }
        span *= m;
        n *= e;
    }
    if ((uint64_t)span > (uint64_t)SIZE_MAX) {
        PXI_ERROR("%s('%s'): size in bytes does not fit in size_t", caller, label);
        return PX_EINVAL;
    }
    *n_out = n;
    return PX_OK;
}

/* A view passed in by the caller: plausible shape, a space, and data when it has elements.
 * Strides are trusted (they come from alloc or subview). */
static int view_check(const char *caller, const char *what, const px_view *v, int64_t *n)
{
    if (!v) {
        PXI_ERROR("%s: %s view is NULL", caller, what);
        return PX_EFAULT;
    }
    const char *label = v->label ? v->label : VIEW_DEFAULT_LABEL;
    int rc = shape_check(caller, label, v->elem_size, v->rank, v->extent, n);
    if (rc != PX_OK)
        return rc;
    if (!v->space || (*n > 0 && !v->data)) {
        PXI_ERROR("%s('%s'): %s view has no %s", caller, label, what, v->space ? "data" : "space");
        return PX_EFAULT;
    }
    return PX_OK;
}

/* --- zeroing ------------------------------------------------------------------------------ */

typedef struct {
    unsigned char *base;
    size_t bytes;
} zero_ctx;

static void zero_pages(int64_t b, int64_t e, void *ctx)
{
    const zero_ctx *z = ctx;
    size_t lo = (size_t)b * VIEW_ZERO_BLOCK;
    size_t hi = (size_t)e * VIEW_ZERO_BLOCK;
    if (hi > z->bytes)
        hi = z->bytes;
    memset(z->base + lo, 0, hi - lo);
}

/* A host space accessible from the caller, as the source of zero bytes and staging copies
 * (host memory not from px_malloc counts as the memory of any host space). */
static px_space *host_space(void)
{
    px_space *h = px_space_by_name("threads");
    if (!h)
        h = px_space_by_name("serial");
    return h;
}

static int view_zero(px_space *s, const char *label, void *data, size_t bytes)
{
    if (bytes == 0)
        return PX_OK;
    if (px_space_host_accessible(s)) {
        if (bytes < VIEW_PARALLEL_ZERO_BYTES) {
            memset(data, 0, bytes);
            return PX_OK;
        }
        /* Pages dealt in contiguous blocks by the static schedule: each thread touches first
         * the pages a later static-schedule loop over the same index space gives it. */
        zero_ctx z = {data, bytes};
        int64_t pages = (int64_t)((bytes + VIEW_ZERO_BLOCK - 1) / VIEW_ZERO_BLOCK);
        char name[96];
        snprintf(name, sizeof name, "px_view_alloc(%s)", label);
        return px_parallel_for_fn(s, name, px_range_chunked(0, pages, 0, PX_SCHEDULE_STATIC),
                                  zero_pages, &z);
    }
    /* Device memory: the memory API has no fill operation (the space ops table offers malloc,
     * free and copies only), so zeros are copied from a host buffer, chunk by chunk. */
    px_space *h = host_space();
    if (!h) {
        PXI_ERROR("px_view_alloc('%s'): no host space to zero device memory from", label);
        return PX_ENODEV;
    }
    size_t chunk = bytes < VIEW_DEVICE_ZERO_BYTES ? bytes : VIEW_DEVICE_ZERO_BYTES;
    void *zeros = pxi_calloc(1, chunk);
    if (!zeros) {
        PXI_ERROR("px_view_alloc('%s'): out of memory for a %zu-byte zero buffer", label, chunk);
        return PX_ENOMEM;
    }
    int rc = PX_OK;
    for (size_t off = 0; off < bytes && rc == PX_OK; off += chunk) {
        size_t n = bytes - off < chunk ? bytes - off : chunk;
        rc = px_deep_copy(s, (unsigned char *)data + off, h, zeros, n);
    }
    pxi_free(zeros);
    return rc;
}

/* --- alloc / free -------------------------------------------------------------------------- */

int px_view_alloc(px_view *v, px_space *s, const char *label, size_t elem_size, px_layout layout,
                  int rank, const int64_t *extents)
{
    static const int64_t none[PX_MAX_RANK] = {0};
    if (!v) {
        PXI_ERROR("px_view_alloc('%s'): view is NULL", label ? label : VIEW_DEFAULT_LABEL);
        return PX_EFAULT;
    }
    view_clear(v);
    if (!label)
        label = VIEW_DEFAULT_LABEL;
    if (!extents && rank > 0) {
        PXI_ERROR("px_view_alloc('%s'): extents is NULL for rank %d", label, rank);
        return PX_EFAULT;
    }
    if (!extents)
        extents = none;
    int64_t n;
    int rc = shape_check("px_view_alloc", label, elem_size, rank, extents, &n);
    if (rc != PX_OK)
        return rc;
    if (layout != PX_LAYOUT_RIGHT && layout != PX_LAYOUT_LEFT) {
        PXI_ERROR("px_view_alloc('%s'): unknown layout %d", label, (int)layout);
        return PX_EINVAL;
    }
    s = pxi_space_resolve(s, "px_view_alloc", &rc);
    if (!s)
        return rc;
    size_t bytes = (size_t)n * elem_size;
    char *own_label = pxi_strdup(label);
    if (!own_label) {
        PXI_ERROR("px_view_alloc('%s'): out of memory copying the label", label);
        return PX_ENOMEM;
    }
    void *data = pxi_memory_alloc(s, "px_view_alloc", own_label, bytes, &rc);
    if (!data)
        goto fail;
    rc = view_zero(s, own_label, data, bytes);
    if (rc != PX_OK) {
        /* The zeroing failure is the status to report; a free failure after it adds nothing. */
        (void)pxi_memory_free(s, own_label, data, bytes);
        goto fail;
    }
    v->data = data;
    v->space = s;
    v->elem_size = elem_size;
    v->rank = rank;
    for (int d = 0; d < rank; ++d)
        v->extent[d] = extents[d];
    v->layout = layout;
    view_set_strides(v);
    v->label = own_label;
    v->owner = 1;
    return PX_OK;
fail:
    pxi_free(own_label);
    return rc;
}

int px_view_free(px_view *v)
{
    if (!v) {
        PXI_ERROR("px_view_free: view is NULL");
        return PX_EFAULT;
    }
    int rc = PX_OK;
    if (v->owner) {
        if (!pxi_runtime_ready()) {
            PXI_ERROR("px_view_free('%s'): the runtime is not initialized (free views before "
                      "px_finalize)",
                      v->label ? v->label : VIEW_DEFAULT_LABEL);
            return PX_ENOTINIT;
        }
        size_t bytes = (size_t)px_view_size(v) * v->elem_size;
        rc = pxi_memory_free(v->space, v->label ? v->label : VIEW_DEFAULT_LABEL, v->data, bytes);
        pxi_free((void *)(uintptr_t)v->label);
    }
    view_clear(v);
    return rc;
}

/* --- mirror -------------------------------------------------------------------------------- */

int px_view_mirror(px_view *host, const px_view *v)
{
    if (!host) {
        PXI_ERROR("px_view_mirror: mirror view is NULL");
        return PX_EFAULT;
    }
    int64_t n;
    int rc = view_check("px_view_mirror", "source", v, &n);
    if (rc != PX_OK) {
        if (host != v)
            view_clear(host);
        return rc;
    }
    if (!pxi_runtime_ready()) {
        PXI_ERROR("px_view_mirror: the runtime is not initialized");
        view_clear(host);
        return PX_ENOTINIT;
    }
    if (px_space_host_accessible(v->space)) {
        px_view m = *v;
        /* Sharing: the mirror owns nothing, unless it is v itself (then v keeps its data). */
        m.owner = host == v ? v->owner : 0;
        *host = m;
        return PX_OK;
    }
    px_space *h = host_space();
    if (!h) {
        PXI_ERROR("px_view_mirror('%s'): no host space is available",
                  v->label ? v->label : VIEW_DEFAULT_LABEL);
        view_clear(host);
        return PX_ENODEV;
    }
    px_view src = *v; /* host may alias v */
    return px_view_alloc(host, h, src.label, src.elem_size, src.layout, src.rank, src.extent);
}

/* --- subview ------------------------------------------------------------------------------- */

int px_view_subview(px_view *sub, const px_view *v, const int64_t *lo, const int64_t *hi)
{
    if (sub && sub == v && v->owner) {
        /* The subview would replace the only handle that can free v's allocation. */
        PXI_ERROR("px_view_subview('%s'): sub is the owning view v itself; its allocation would "
                  "be lost (write the subview to another px_view)",
                  v->label ? v->label : VIEW_DEFAULT_LABEL);
        return PX_EINVAL;
    }
    if (!sub) {
        PXI_ERROR("px_view_subview: subview is NULL");
        return PX_EFAULT;
    }
    int64_t n;
    int rc = view_check("px_view_subview", "source", v, &n);
    if (rc != PX_OK) {
        if (sub != v)
            view_clear(sub);
        return rc;
    }
    px_view s = *v;
    int64_t off = 0;
    int empty = 0;
    for (int d = 0; d < v->rank; ++d) {
        int64_t l = lo ? lo[d] : 0, h = hi ? hi[d] : v->extent[d];
        if (l < 0 || l > h || h > v->extent[d]) {
            PXI_ERROR("px_view_subview('%s'): dimension %d: [%lld, %lld) is not inside "
                      "[0, %lld)",
                      v->label ? v->label : VIEW_DEFAULT_LABEL, d, (long long)l, (long long)h,
                      (long long)v->extent[d]);
            view_clear(sub);
            return PX_EINVAL;
        }
        s.extent[d] = h - l;
        empty |= (h == l);
        off += l * v->stride[d];
    }
    /* An empty subview keeps the parent's pointer: element lo may lie past the allocation. */
    if (!empty)
        s.data = (unsigned char *)v->data + (size_t)off * v->elem_size;
    s.owner = 0;
    *sub = s;
    return PX_OK;
}

/* --- deep copy ----------------------------------------------------------------------------- */

static int is_contiguous(const px_view *v)
{
    px_view c = *v;
    view_set_strides(&c);
    for (int d = 0; d < v->rank; ++d)
        if (v->extent[d] > 1 && c.stride[d] != v->stride[d])
            return 0;
    return 1;
}

/* Element copy between two host views of one shape, an odometer over all indices but the
 * innermost of dst's layout, whose run is one memcpy when both are unit-stride there. */
static void host_strided_copy(const px_view *dst, const px_view *src)
{
    int r = dst->rank;
    size_t es = dst->elem_size;
    if (r == 0) {
        memmove(dst->data, src->data, es);
        return;
    }
    int f = dst->layout == PX_LAYOUT_LEFT ? 0 : r - 1;
    int64_t idx[PX_MAX_RANK] = {0};
    int64_t len = dst->extent[f];
    int unit = dst->stride[f] == 1 && src->stride[f] == 1;
    for (;;) {
        int64_t od = 0, os = 0;
        for (int d = 0; d < r; ++d) {
            od += idx[d] * dst->stride[d];
            os += idx[d] * src->stride[d];
        }
        unsigned char *pd = (unsigned char *)dst->data + (size_t)od * es;
        const unsigned char *ps = (const unsigned char *)src->data + (size_t)os * es;
        if (unit) {
            memmove(pd, ps, (size_t)len * es);
        } else {
            for (int64_t i = 0; i < len; ++i)
                memcpy(pd + (size_t)(i * dst->stride[f]) * es,
                       ps + (size_t)(i * src->stride[f]) * es, es);
        }
        int d = 0;
        for (; d < r; ++d) {
            if (d == f)
                continue;
            if (++idx[d] < dst->extent[d])
                break;
            idx[d] = 0;
        }
        if (d == r)
            return;
    }
}

/* Copy between a device view d and a contiguous host view h of the same layout (h is the
 * staging buffer): one px_deep_copy when d is contiguous, else one per run along d's
 * unit-stride dimension (a subview keeps the parent's unit stride there). to_host picks the
 * direction. */
static int device_runs_copy(const px_view *d, const px_view *h, int to_host)
{
    size_t es = d->elem_size;
    if (is_contiguous(d)) {
        size_t bytes = (size_t)px_view_size(d) * es;
        return to_host ? px_deep_copy(h->space, h->data, d->space, d->data, bytes)
                       : px_deep_copy(d->space, d->data, h->space, h->data, bytes);
    }
    int r = d->rank, f = d->layout == PX_LAYOUT_LEFT ? 0 : r - 1;
    int64_t idx[PX_MAX_RANK] = {0};
    size_t run = (size_t)d->extent[f] * es;
    if (d->stride[f] != 1 && d->extent[f] > 1) {
        f = -1; /* no unit-stride dimension: one element per copy */
        run = es;
    }
    for (;;) {
        int64_t od = 0, oh = 0;
        for (int k = 0; k < r; ++k) {
            od += idx[k] * d->stride[k];
            oh += idx[k] * h->stride[k];
        }
        unsigned char *pd = (unsigned char *)d->data + (size_t)od * es;
        unsigned char *ph = (unsigned char *)h->data + (size_t)oh * es;
        int rc = to_host ? px_deep_copy(h->space, ph, d->space, pd, run)
                         : px_deep_copy(d->space, pd, h->space, ph, run);
        if (rc != PX_OK)
            return rc;
        int k = 0;
        for (; k < r; ++k) {
            if (k == f)
                continue;
            if (++idx[k] < d->extent[k])
                break;
            idx[k] = 0;
        }
        if (k == r)
            return PX_OK;
    }
}

/* A contiguous host view of v's shape and layout, for staging (not zeroed, label shared). */
static int stage_alloc(px_view *t, const px_view *v)
{
    px_view s = *v;
    s.space = host_space();
    if (!s.space) {
        PXI_ERROR("px_view_deep_copy('%s'): no host space to stage through",
                  v->label ? v->label : VIEW_DEFAULT_LABEL);
        return PX_ENODEV;
    }
    view_set_strides(&s);
    size_t bytes = (size_t)px_view_size(v) * v->elem_size;
    s.data = pxi_malloc_aligned(bytes ? bytes : 1, 64);
    if (!s.data) {
        PXI_ERROR("px_view_deep_copy('%s'): out of memory for a %zu-byte staging buffer", v->label,
                  bytes);
        return PX_ENOMEM;
    }
    s.owner = 0;
    *t = s;
    return PX_OK;
}

int px_view_deep_copy(px_view *dst, const px_view *src)
{
    int64_t nd, ns;
    int rc = view_check("px_view_deep_copy", "destination", dst, &nd);
    if (rc == PX_OK)
        rc = view_check("px_view_deep_copy", "source", src, &ns);
    if (rc != PX_OK)
        return rc;
    const char *dl = dst->label ? dst->label : VIEW_DEFAULT_LABEL;
    const char *sl = src->label ? src->label : VIEW_DEFAULT_LABEL;
    if (dst->rank != src->rank) {
        PXI_ERROR("px_view_deep_copy('%s' <- '%s'): rank %d != %d", dl, sl, dst->rank, src->rank);
        return PX_EINVAL;
    }
    if (dst->elem_size != src->elem_size) {
        PXI_ERROR("px_view_deep_copy('%s' <- '%s'): element size %zu != %zu", dl, sl,
                  dst->elem_size, src->elem_size);
        return PX_EINVAL;
    }
    for (int d = 0; d < dst->rank; ++d)
        if (dst->extent[d] != src->extent[d]) {
            PXI_ERROR("px_view_deep_copy('%s' <- '%s'): dimension %d: extent %lld != %lld", dl, sl,
                      d, (long long)dst->extent[d], (long long)src->extent[d]);
            return PX_EINVAL;
        }
    if (!pxi_runtime_ready()) {
        PXI_ERROR("px_view_deep_copy('%s' <- '%s'): the runtime is not initialized", dl, sl);
        return PX_ENOTINIT;
    }
    if (nd == 0)
        return PX_OK;
    int same_strides = 1;
    for (int d = 0; d < dst->rank; ++d)
        same_strides &= dst->extent[d] <= 1 || dst->stride[d] == src->stride[d];
    if (dst->data == src->data && same_strides)
        return PX_OK; /* a host mirror sharing its view's data */
    int dh = px_space_host_accessible(dst->space), sh = px_space_host_accessible(src->space);
    if (same_strides && is_contiguous(dst))
        return px_deep_copy(dst->space, dst->data, src->space, src->data,
                            (size_t)nd * dst->elem_size);
    if (dh && sh) {
        host_strided_copy(dst, src);
        return PX_OK;
    }
    /* A device side whose strides differ from its partner's: stage each device side through a
     * contiguous host view of its own layout, then copy on host between the two. */
    px_view ts = *src, td = *dst;
    int staged_s = 0, staged_d = 0;
    if (!sh) {
        rc = stage_alloc(&ts, src);
        if (rc != PX_OK)
            return rc;
        staged_s = 1;
        rc = device_runs_copy(src, &ts, 1);
        if (rc != PX_OK)
            goto out;
    }
    if (!dh) {
        rc = stage_alloc(&td, dst);
        if (rc != PX_OK)
            goto out;
        staged_d = 1;
    }
    host_strided_copy(&td, &ts);
    if (staged_d)
        rc = device_runs_copy(dst, &td, 0);
out:
    if (staged_s)
        pxi_free_aligned(ts.data);
    if (staged_d)
        pxi_free_aligned(td.data);
    return rc;
}

px_mdrange_policy px_view_mdrange(const px_view *v)
{
    if (!v || v->rank < 2 || v->rank > PX_MAX_RANK) {
        px_mdrange_policy bad = {0};
        bad.rank = v ? v->rank : 0;
        return bad;
    }
    px_mdrange_policy p = px_mdrange(v->rank, NULL, v->extent);
    return px_mdrange_set_iterate(p,
                                  v->layout == PX_LAYOUT_LEFT ? PX_ITERATE_LEFT : PX_ITERATE_RIGHT);
}

/* --- PX_DEBUG_CHECK reports ---------------------------------------------------------------- */

#define VIEW_SINK_BYTES     4096
#define VIEW_REPORTS_LOGGED 16

static atomic_llong bounds_errors;
static _Thread_local _Alignas(64) unsigned char bounds_sink[VIEW_SINK_BYTES];

void *px_view_bounds_report(const px_view *v, int n_index, int dim, int64_t index,
                            size_t elem_bytes)
{
    /* Relaxed: a statistic; the counter orders nothing. */
    long long seen = atomic_fetch_add_explicit(&bounds_errors, 1, memory_order_relaxed);
    const char *label = (v && v->label) ? v->label : VIEW_DEFAULT_LABEL;
    if (seen < VIEW_REPORTS_LOGGED) {
        if (!v)
            PXI_ERROR("PX_VIEW_AT%d: NULL view", n_index);
        else if (dim == -1)
            PXI_ERROR("PX_VIEW_AT%d on view '%s' of rank %d: wrong number of indices", n_index,
                      label, v->rank);
        else if (dim == -2)
            PXI_ERROR("PX_VIEW_AT%d on view '%s': element type of %lld bytes, the view's are "
                      "%zu",
                      n_index, label, (long long)index, v->elem_size);
        else
            PXI_ERROR("PX_VIEW_AT%d on view '%s': index %lld out of bounds in dimension %d "
                      "(extent %lld)",
                      n_index, label, (long long)index, dim,
                      (long long)(dim >= 0 && dim < PX_MAX_RANK ? v->extent[dim] : 0));
    }
    if (elem_bytes > VIEW_SINK_BYTES) {
        PXI_ERROR("PX_VIEW_AT%d on view '%s': %zu-byte elements exceed the %d-byte scratch; "
                  "aborting",
                  n_index, label, elem_bytes, VIEW_SINK_BYTES);
        abort();
    }
    memset(bounds_sink, 0, elem_bytes);
    return bounds_sink;
}

int64_t px_view_bounds_errors(void)
{
    return (int64_t)atomic_load_explicit(&bounds_errors, memory_order_relaxed);
}
