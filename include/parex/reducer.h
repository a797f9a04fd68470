/*
 * parex/reducer.h - reducers: the value type, identity and join of a reduction or scan.
 *
 * A reducer is Kokkos' reducer concept (Kokkos::Sum, Kokkos::MinLoc, or a custom class with
 * init/join) as a plain C value: the value's size and alignment, a function writing the
 * identity, and an associative join. The join need not be commutative: parex always joins the
 * value of a lower index range on the left (dst) and a higher one on the right (src), so a
 * non-commutative reducer (say, composing 2x2 matrices) gives the sequential answer.
 *
 * Defining a custom reducer:
 *
 *     typedef struct { double sx, sy, sz; } sum3;
 *     static void sum3_identity(void *v) { *(sum3 *)v = (sum3){0, 0, 0}; }
 *     static void sum3_join(void *dst, const void *src)
 *     {
 *         sum3 *d = dst; const sum3 *s = src;
 *         d->sx += s->sx; d->sy += s->sy; d->sz += s->sz;
 *     }
 *     static const px_reducer sum3_reducer =
 *         PX_REDUCER_INIT(sum3, sum3_identity, sum3_join, "sum3");
 *
 * A custom reducer used by a kernel on the Cuda space also needs its device half; see
 * parex/cuda.h (PX_REDUCER_DEVICE).
 */
#ifndef PAREX_REDUCER_H
#define PAREX_REDUCER_H

#include <stddef.h>
#include <stdint.h>

#include "parex/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest reduction value, in bytes. Values live in per-rank cache-line slots. */
#define PX_REDUCER_MAX_VALUE_BYTES 256

/** Which builtin a reducer is; lets device backends use a native combine. */
typedef enum {
    PX_REDUCER_CUSTOM = 0,
    PX_REDUCER_SUM,
    PX_REDUCER_PROD,
    PX_REDUCER_MIN,
    PX_REDUCER_MAX,
    PX_REDUCER_MINLOC,
    PX_REDUCER_MAXLOC,
    PX_REDUCER_LAND,
    PX_REDUCER_LOR,
    PX_REDUCER_BAND,
    PX_REDUCER_BOR
} px_reducer_op;

/** The value type of a builtin reducer. */
typedef enum {
    PX_VALUE_CUSTOM = 0,
    PX_VALUE_F64,       /**< double */
    PX_VALUE_F32,       /**< float */
    PX_VALUE_I64,       /**< int64_t */
    PX_VALUE_U64,       /**< uint64_t */
    PX_VALUE_INT,       /**< int (land, lor: 0 or 1) */
    PX_VALUE_VALLOC_F64 /**< px_valloc_f64 (minloc, maxloc) */
} px_value_type;

/** Writes the identity into @p value (value_size bytes, suitably aligned). */
typedef void (*px_reducer_identity_fn)(void *value);
/** dst = dst (+) src, where dst holds the lower index range. Must be associative. */
typedef void (*px_reducer_join_fn)(void *dst, const void *src);

/** A reducer. Builtins are declared below; PX_REDUCER_INIT fills a custom one. */
typedef struct px_reducer {
    size_t value_size;               /**< Bytes, 1..PX_REDUCER_MAX_VALUE_BYTES. */
    size_t value_align;              /**< Power of two, <= 64. */
    px_reducer_identity_fn identity; /**< Never NULL. */
    px_reducer_join_fn join;         /**< Never NULL. */
    const char *name;                /**< For logs and tools; may be NULL. */
    px_reducer_op op;                /**< PX_REDUCER_CUSTOM for user reducers. */
    px_value_type type;              /**< PX_VALUE_CUSTOM for user reducers. */
    const void *device;              /**< Device half (PX_REDUCER_DEVICE); NULL on host only. */
} px_reducer;

/** Value of minloc/maxloc: the extreme value and its index (lowest index on ties). */
typedef struct {
    double val;
    int64_t loc;
} px_valloc_f64;

#ifdef __cplusplus
#define PXI_ALIGNOF(T) alignof(T)
#else
#define PXI_ALIGNOF(T) _Alignof(T)
#endif

/** Initializer for a custom px_reducer over value type @p T (see the file comment). */
#define PX_REDUCER_INIT(T, identity_fn, join_fn, name_str)                                         \
    {                                                                                              \
        sizeof(T), PXI_ALIGNOF(T), (identity_fn), (join_fn), (name_str), PX_REDUCER_CUSTOM,        \
            PX_VALUE_CUSTOM, NULL                                                                  \
    }

/**
 * Check a reducer as a launch would (the requirements Kokkos places on a reducer's value_type,
 * init and join, made checkable).
 *
 * @param r  the reducer.
 * @return PX_OK;
 *         PX_EFAULT r is NULL;
 *         PX_EINVAL value_size is 0 or above PX_REDUCER_MAX_VALUE_BYTES;
 *         PX_EINVAL value_align is not a power of two in [1, 64];
 *         PX_EINVAL identity or join is NULL;
 *         PX_EINVAL op or type is not a value of its enum, exactly one of them is the CUSTOM
 *                   value, a builtin type's size differs from value_size, or
 *                   PX_VALUE_VALLOC_F64 is paired with an op other than MINLOC/MAXLOC (or the
 *                   reverse): device backends trust op/type to pick a native combine.
 * Logs nothing (launches log, naming the kernel and the reducer). Thread-safe, pure.
 */
PX_API int px_reducer_validate(const px_reducer *r);

/** @name Builtin reducers, identities as in Kokkos.
 * sum 0, prod 1, min the largest finite value (DBL_MAX, INT64_MAX), max the lowest
 * (-DBL_MAX, INT64_MIN), minloc/maxloc {DBL_MAX / -DBL_MAX, INT64_MAX} with the lowest index
 * winning ties, land 1, lor 0, band all ones, bor 0 (Kokkos::reduction_identity).
 * @{ */
PX_API extern const px_reducer px_sum_f64, px_sum_f32, px_sum_i64, px_prod_f64, px_min_f64,
    px_max_f64, px_min_i64, px_max_i64, px_minloc_f64, px_maxloc_f64, px_land, px_lor, px_band_u64,
    px_bor_u64;
/** @} */

#ifdef __cplusplus
}
#endif
#endif /* PAREX_REDUCER_H */
