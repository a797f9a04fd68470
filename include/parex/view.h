/*
 * parex/view.h - views: typed multi-dimensional arrays in a memory space (Kokkos::View, C form).
 *
 * A px_view is a plain descriptor: a data pointer in the memory of an execution space, the
 * element size, a rank 0..PX_MAX_RANK, extents and strides (in elements) and a layout. Element
 * (i0, ..., i{r-1}) lives at data + elem_size * sum(i_d * stride[d]).
 *
 *   - PX_LAYOUT_RIGHT (C order, Kokkos::LayoutRight): the last index is unit-stride,
 *     stride[d] = product of extent[d+1 .. rank).
 *   - PX_LAYOUT_LEFT (Fortran order, Kokkos::LayoutLeft): the first index is unit-stride,
 *     stride[d] = product of extent[0 .. d).
 *   In these products an extent of 0 counts as 1, so strides are always >= 1.
 *
 * A view is either an owner (px_view_alloc, a mirror that needed its own memory: owner == 1),
 * whose px_view_free releases the data, or a sharing view (px_view_subview, the mirror of a
 * host-accessible view: owner == 0), whose px_view_free only clears the descriptor and which
 * is valid only while the view it shares with is alive. Calling px_view_free on every view a
 * program made is always right. A view is passed by value into kernel arguments (its fields
 * are plain data): bodies index it with PX_VIEW_AT1..PX_VIEW_AT6.
 *
 *     int64_t ext[3] = {nx, ny, nz};
 *     px_view u;
 *     px_view_alloc(&u, space, "u", sizeof(double), PX_LAYOUT_RIGHT, 3, ext);   // zeroed
 *     ...   PX_VIEW_AT3(a->u, double, i, j, k) = 1.0;   // in a kernel body, a->u by value
 *     px_view h;
 *     px_view_mirror(&h, &u);          // host copy of u's shape (shares u's data on host)
 *     px_view_deep_copy(&h, &u);       // no copy at all when h shares u's data
 *     px_view_free(&h);
 *     px_view_free(&u);
 */
#ifndef PAREX_VIEW_H
#define PAREX_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "parex/core.h"
#include "parex/policy.h"
#include "parex/space.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Order of a view's elements in memory. */
typedef enum {
    PX_LAYOUT_RIGHT = 0, /**< C order: the last index is unit-stride (Kokkos::LayoutRight). */
    PX_LAYOUT_LEFT = 1   /**< Fortran order: the first index is unit-stride (LayoutLeft). */
} px_layout;

/** A view: a typed array descriptor in a memory space. Treat the fields as read-only. */
typedef struct {
    void *data;                  /**< Element (0, ..., 0); memory of space. */
    px_space *space;             /**< The space whose memory holds data (never NULL if valid). */
    size_t elem_size;            /**< Bytes per element, > 0. */
    int rank;                    /**< Number of indices, 0..PX_MAX_RANK (0: one element). */
    int64_t extent[PX_MAX_RANK]; /**< Indices per dimension, >= 0; 0 beyond rank. */
    int64_t stride[PX_MAX_RANK]; /**< Elements between neighbours in each dimension, >= 1. */
    px_layout layout;            /**< The layout the strides were made from. */
    const char *label;           /**< Name for tools and bounds reports (owned by the owner). */
    int owner; /**< 1: px_view_free releases data and label; 0: shares another view's. */
} px_view;

/**
 * Allocate a zeroed view in the memory of @p s (Kokkos::View<T*..., Layout, Space>(label, n...)).
 *
 * The elements are zeroed in parallel on @p s when it is a host space (a static-schedule
 * px_parallel_for_fn over the pages, so first touch places each page near the thread that
 * will work on it under the same static schedule); device memory is zeroed by copies from a
 * zeroed host buffer. Tools see allocate_data with @p label and, for a parallel zeroing, a
 * parallel_for named "px_view_alloc(<label>)".
 *
 * @param v          [out] the view; on failure it is cleared (all fields zero), so
 *                   px_view_free on it is harmless.
 * @param s          the space; NULL means px_default_space().
 * @param label      name for tools and bounds reports (copied); NULL becomes "px_view".
 * @param elem_size  bytes per element, > 0 (sizeof(T)).
 * @param layout     PX_LAYOUT_RIGHT or PX_LAYOUT_LEFT; sets the strides (see above).
 * @param rank       0..PX_MAX_RANK; rank 0 holds one element.
 * @param extents    [in] rank extents, each >= 0 (0 gives an empty view); may be NULL when
 *                   rank is 0.
 * @return PX_OK;
 *         PX_EFAULT   v is NULL, or extents is NULL with rank > 0;
 *         PX_EINVAL   rank outside 0..PX_MAX_RANK, elem_size 0, an unknown layout, a
 *                     negative extent (the message names the dimension), or a total size in
 *                     bytes that does not fit in int64_t;
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_ENODEV   s is not available (or s is NULL and there is no default space);
 *         PX_ENOMEM   memory ran out (the log names the label, size and space);
 *         PX_ECUDA    zeroing device memory failed (nothing is left allocated).
 * Thread-safe. From inside a kernel of @p s the zeroing runs on the calling thread.
 */
PX_API int px_view_alloc(px_view *v, px_space *s, const char *label, size_t elem_size,
                         px_layout layout, int rank, const int64_t *extents);

/**
 * Release a view (the end of a Kokkos::View's last reference). An owner frees its data (tools
 * see deallocate_data with the label) and its label; a sharing view frees nothing. Either way
 * *v is cleared, so a second px_view_free is harmless.
 *
 * @param v  [in,out] the view; a cleared view (all zero) is accepted.
 * @return PX_OK;
 *         PX_EFAULT   v is NULL;
 *         PX_ENOTINIT an owner is freed after px_finalize (nothing is freed, *v is kept);
 *         PX_ECUDA    the device reported an error freeing (the log names it; *v is cleared).
 * Caller must: not free an owner while a kernel or a sharing view still uses its data.
 * Thread-safe for distinct views.
 */
PX_API int px_view_free(px_view *v);

/**
 * A host view with the shape of @p v (Kokkos::create_mirror_view). When @p v's memory is host
 * accessible the mirror shares it (owner 0, same data, strides and label: no allocation, and
 * px_view_deep_copy between the two copies nothing); otherwise a zeroed contiguous host view
 * of the same extents, layout and element size is allocated (owner 1) in the "threads" space
 * when it is available, else "serial", with the same label.
 *
 * @param host  [out] the mirror; cleared on failure.
 * @param v     [in] a valid view of any space.
 * @return PX_OK;
 *         PX_EFAULT   host or v is NULL, or v's space or data is NULL while v has elements;
 *         PX_EINVAL   v is not a valid view (rank, elem_size, negative extent);
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_ENODEV   no host space is available;
 *         PX_ENOMEM   memory ran out.
 * Free the mirror with px_view_free in every case. Thread-safe.
 */
PX_API int px_view_mirror(px_view *host, const px_view *v);

/**
 * Copy the elements of @p src into @p dst (Kokkos::deep_copy of two views). The views must
 * have the same rank, extents and element size; their layouts, strides and spaces may differ.
 * Contiguous views of one layout move in one px_deep_copy (any pair of spaces); host views
 * of other layouts or strides are copied element by element; a device view with a different
 * layout or strides from its partner is staged through a contiguous host buffer. Returns when
 * the copy is complete. Tools see begin/end_deep_copy for each memory-space copy.
 *
 * @param dst  [in] the destination view (its elements are written).
 * @param src  [in] the source view.
 * @return PX_OK (also when dst and src share the same data and strides: nothing is copied);
 *         PX_EFAULT   dst or src is NULL, or a space or data pointer is NULL with elements;
 *         PX_EINVAL   the shapes differ (rank, an extent, or elem_size; the message says
 *                     which), or a view is not valid;
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_ENODEV   a space is not available;
 *         PX_ENOMEM   a staging buffer could not be allocated;
 *         PX_ECUDA    a device copy failed.
 * Caller must: not pass views that overlap in memory other than as identical views.
 * Thread-safe.
 */
PX_API int px_view_deep_copy(px_view *dst, const px_view *src);

/**
 * The box [lo, hi) of @p v as a view that shares its data (Kokkos::subview with ranges). The
 * subview keeps v's rank, strides, layout, space and label; its extents are hi - lo and its
 * data points at element lo. The subview is valid only while v's data is.
 *
 * @param sub  [out] the subview (owner 0); cleared on failure. May be the same object as v
 *             when v owns nothing (a subview or a sharing mirror); for an owning v that is
 *             PX_EINVAL, since v is the only handle px_view_free can release.
 * @param v    [in] a valid view.
 * @param lo   [in] rank first indices, 0 <= lo[d] <= hi[d]; NULL: all zeros.
 * @param hi   [in] rank bounds, hi[d] <= v->extent[d]; NULL: v's extents.
 * @return PX_OK;
 *         PX_EFAULT sub or v is NULL;
 *         PX_EINVAL v is not a valid view, or lo/hi are outside 0 <= lo <= hi <= extent in
 *                   some dimension (the message names it).
 * Thread-safe, no allocation.
 */
PX_API int px_view_subview(px_view *sub, const px_view *v, const int64_t *lo, const int64_t *hi);

/**
 * Number of elements of a view: the product of its extents (1 for rank 0).
 *
 * @param v  [in] a view (NULL or an invalid rank gives 0).
 * @return the element count; no status. Thread-safe, pure.
 */
PX_API int64_t px_view_size(const px_view *v);

/**
 * An MDRange policy over every index of a view: the box [0, extent) with automatic tiles and
 * the iterate order of the view's layout (PX_LAYOUT_RIGHT gives PX_ITERATE_RIGHT, LEFT gives
 * LEFT), so the fastest loop runs along unit stride, as Kokkos derives an MDRangePolicy's
 * default order from the layout of the views in the kernel.
 *
 * @param v  [in] a view of rank 2..PX_MAX_RANK.
 * @return the policy; for NULL or a rank outside 2..PX_MAX_RANK, a policy whose rank fails
 *         px_mdrange_validate (no status here). Thread-safe, pure.
 */
PX_API px_mdrange_policy px_view_mdrange(const px_view *v);

/**
 * Report an out-of-bounds PX_VIEW_AT* access (called by the macros when the including file
 * is compiled with PX_DEBUG_CHECK defined; not meant to be called directly). Logs, at error
 * level, the view's label, the macro's rank, the dimension, the index and the extent (the
 * first 16 reports of a process; later ones are only counted), adds one to
 * px_view_bounds_errors(), and returns a zeroed per-thread scratch element that the access
 * then reads or writes instead of memory outside the view. The kernel body thus runs to its
 * end without corrupting memory; its results are wrong and the count says so.
 *
 * @param v         [in] the view indexed.
 * @param n_index   number of indices the macro passed (PX_VIEW_ATn: n).
 * @param dim       the first offending dimension, or -1 when n_index != v->rank, or -2
 *                  when elem_bytes != v->elem_size (the macro's type does not match).
 * @param index     the offending index (or n_index / elem_bytes for dim -1 / -2).
 * @param elem_bytes sizeof the macro's element type.
 * @return a scratch element of at least elem_bytes bytes (4096 at most: a larger element
 *         type makes this call abort the process after logging, as no scratch can hold it).
 * Thread-safe (the scratch is thread-local).
 */
PX_API void *px_view_bounds_report(const px_view *v, int n_index, int dim, int64_t index,
                                   size_t elem_bytes);

/**
 * Number of out-of-bounds PX_VIEW_AT* accesses reported on host since the process started
 * (PX_DEBUG_CHECK builds). Tests assert it is 0 after their kernels.
 *
 * @return the count; no status. Thread-safe.
 */
PX_API int64_t px_view_bounds_errors(void);

#ifdef __cplusplus
}
#endif

/* ---------------------------------------------------------------------------------------------
 * Element access in kernel bodies
 *
 * PX_VIEW_AT1(v, T, i0) ... PX_VIEW_AT6(v, T, i0, ..., i5) name element (i0, ...) of view v
 * as an lvalue of type T: read it, assign it, take its address. v is a px_view lvalue (for
 * example a->u for a view passed by value in kernel arguments) and is evaluated several times;
 * indices are converted to int64_t. Each compiles to one multiply-add per dimension on the
 * strides, on host and in CUDA device code (the macros are plain expressions).
 *
 * PX_DEBUG_CHECK: define it before including parex.h (or with -DPX_DEBUG_CHECK) to check every
 * access: the number of indices against v.rank, sizeof(T) against v.elem_size and each index
 * against [0, extent). A failed check on host calls px_view_bounds_report (error message with
 * the label, dimension, index and extent; the access goes to a scratch element); in device
 * code it prints the same facts with printf (labels are host strings, so the label is not
 * printed) and the access goes to a per-file device scratch element. Either way the body
 * continues without touching memory outside the view.
 * ------------------------------------------------------------------------------------------- */
#if defined(__CUDACC__)
#define PXI_VIEW_HD __host__ __device__
#else
#define PXI_VIEW_HD
#endif

#define PXI_VIEW_I(x) ((int64_t)(x))

#if defined(PX_DEBUG_CHECK)
#if defined(__CUDACC__)
#include <stdio.h>
static __device__ unsigned char pxi_view_device_sink[4096];
#endif
/* The checked address of element idx[0..n) of v (see PX_DEBUG_CHECK above). */
static inline PXI_VIEW_HD void *pxi_view_at_checked(const px_view *v, int n, size_t tsize,
                                                    int64_t i0, int64_t i1, int64_t i2, int64_t i3,
                                                    int64_t i4, int64_t i5)
{
    const int64_t idx[6] = {i0, i1, i2, i3, i4, i5};
    int dim = 0;
    int64_t bad = 0;
    if (n != v->rank) {
        dim = -1;
        bad = n;
    } else if (tsize != v->elem_size) {
        dim = -2;
        bad = (int64_t)tsize;
    } else {
        int64_t off = 0;
        for (int d = 0; d < n; ++d) {
            if (idx[d] < 0 || idx[d] >= v->extent[d]) {
                dim = d;
                bad = idx[d];
                break;
            }
            off += idx[d] * v->stride[d];
            if (d == n - 1)
                return (unsigned char *)v->data + (size_t)off * v->elem_size;
        }
    }
#if defined(__CUDA_ARCH__)
    printf("parex: PX_VIEW_AT%d out of bounds on device: view rank %d, dimension %d, index "
           "%lld (extent %lld)\n",
           n, v->rank, dim, (long long)bad, (long long)(dim >= 0 ? v->extent[dim] : 0));
    for (size_t b = 0; b < tsize && b < sizeof pxi_view_device_sink; ++b)
        pxi_view_device_sink[b] = 0;
    return pxi_view_device_sink;
#else
    return px_view_bounds_report(v, n, dim, bad, tsize);
#endif
}
#define PXI_VIEW_CHK(v, T, n, a, b, c, d, e, f)                                                    \
    (*(T *)pxi_view_at_checked(&(v), n, sizeof(T), PXI_VIEW_I(a), PXI_VIEW_I(b), PXI_VIEW_I(c),    \
                               PXI_VIEW_I(d), PXI_VIEW_I(e), PXI_VIEW_I(f)))
#define PX_VIEW_AT1(v, T, i0)                     PXI_VIEW_CHK(v, T, 1, i0, 0, 0, 0, 0, 0)
#define PX_VIEW_AT2(v, T, i0, i1)                 PXI_VIEW_CHK(v, T, 2, i0, i1, 0, 0, 0, 0)
#define PX_VIEW_AT3(v, T, i0, i1, i2)             PXI_VIEW_CHK(v, T, 3, i0, i1, i2, 0, 0, 0)
#define PX_VIEW_AT4(v, T, i0, i1, i2, i3)         PXI_VIEW_CHK(v, T, 4, i0, i1, i2, i3, 0, 0)
#define PX_VIEW_AT5(v, T, i0, i1, i2, i3, i4)     PXI_VIEW_CHK(v, T, 5, i0, i1, i2, i3, i4, 0)
#define PX_VIEW_AT6(v, T, i0, i1, i2, i3, i4, i5) PXI_VIEW_CHK(v, T, 6, i0, i1, i2, i3, i4, i5)
#else
#define PXI_VIEW_T(v, d, i)       (PXI_VIEW_I(i) * (v).stride[d])
#define PX_VIEW_AT1(v, T, i0)     (((T *)(v).data)[PXI_VIEW_T(v, 0, i0)])
#define PX_VIEW_AT2(v, T, i0, i1) (((T *)(v).data)[PXI_VIEW_T(v, 0, i0) + PXI_VIEW_T(v, 1, i1)])
#define PX_VIEW_AT3(v, T, i0, i1, i2)                                                              \
    (((T *)(v).data)[PXI_VIEW_T(v, 0, i0) + PXI_VIEW_T(v, 1, i1) + PXI_VIEW_T(v, 2, i2)])
#define PX_VIEW_AT4(v, T, i0, i1, i2, i3)                                                          \
    (((T *)(v).data)[PXI_VIEW_T(v, 0, i0) + PXI_VIEW_T(v, 1, i1) + PXI_VIEW_T(v, 2, i2) +          \
                     PXI_VIEW_T(v, 3, i3)])
#define PX_VIEW_AT5(v, T, i0, i1, i2, i3, i4)                                                      \
    (((T *)(v).data)[PXI_VIEW_T(v, 0, i0) + PXI_VIEW_T(v, 1, i1) + PXI_VIEW_T(v, 2, i2) +          \
                     PXI_VIEW_T(v, 3, i3) + PXI_VIEW_T(v, 4, i4)])
#define PX_VIEW_AT6(v, T, i0, i1, i2, i3, i4, i5)                                                  \
    (((T *)(v).data)[PXI_VIEW_T(v, 0, i0) + PXI_VIEW_T(v, 1, i1) + PXI_VIEW_T(v, 2, i2) +          \
                     PXI_VIEW_T(v, 3, i3) + PXI_VIEW_T(v, 4, i4) + PXI_VIEW_T(v, 5, i5)])
#endif

#endif /* PAREX_VIEW_H */
