/* core/reducer.c - builtin reducers with Kokkos' identities, and reducer validation. */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "parex/reducer.h"

/* Size of the value of a builtin value type; 0 for PX_VALUE_CUSTOM or an unknown type. */
static size_t value_type_size(px_value_type t)
{
    switch (t) {
    case PX_VALUE_F64:
        return sizeof(double);
    case PX_VALUE_F32:
        return sizeof(float);
    case PX_VALUE_I64:
        return sizeof(int64_t);
    case PX_VALUE_U64:
        return sizeof(uint64_t);
    case PX_VALUE_INT:
        return sizeof(int);
    case PX_VALUE_VALLOC_F64:
        return sizeof(px_valloc_f64);
    case PX_VALUE_CUSTOM:
    default:
        return 0;
    }
}

int px_reducer_validate(const px_reducer *r)
{
    if (!r)
        return PX_EFAULT;
    if (r->value_size == 0 || r->value_size > PX_REDUCER_MAX_VALUE_BYTES)
        return PX_EINVAL;
    if (r->value_align == 0 || r->value_align > 64 || (r->value_align & (r->value_align - 1)))
        return PX_EINVAL;
    if (!r->identity || !r->join)
        return PX_EINVAL;
    /* op and type steer device backends to a native combine on values of that type: an
     * unknown enum, or a builtin op/type that disagrees with value_size, would make them read
     * or write past the value. Custom reducers say PX_REDUCER_CUSTOM / PX_VALUE_CUSTOM. */
    if ((int)r->op < PX_REDUCER_CUSTOM || (int)r->op > PX_REDUCER_BOR)
        return PX_EINVAL;
    if ((int)r->type < PX_VALUE_CUSTOM || (int)r->type > PX_VALUE_VALLOC_F64)
        return PX_EINVAL;
    if ((r->op == PX_REDUCER_CUSTOM) != (r->type == PX_VALUE_CUSTOM))
        return PX_EINVAL;
    if (r->type != PX_VALUE_CUSTOM && value_type_size(r->type) != r->value_size)
        return PX_EINVAL;
    if ((r->type == PX_VALUE_VALLOC_F64) !=
        (r->op == PX_REDUCER_MINLOC || r->op == PX_REDUCER_MAXLOC))
        return PX_EINVAL;
    return PX_OK;
}

#define SCALAR(T, name, ident, join_expr)                                                          \
    static void name##_identity(void *v)                                                           \
    {                                                                                              \
        *(T *)v = (ident);                                                                         \
    }                                                                                              \
    static void name##_join(void *dst, const void *src)                                            \
    {                                                                                              \
        T a = *(T *)dst, b = *(const T *)src;                                                      \
        *(T *)dst = (join_expr);                                                                   \
    }

SCALAR(double, sum_f64, 0.0, a + b)
SCALAR(float, sum_f32, 0.0f, a + b)
SCALAR(int64_t, sum_i64, 0, (int64_t)((uint64_t)a + (uint64_t)b))
SCALAR(double, prod_f64, 1.0, a *b)
/* min/max: on equal values keep dst. A NaN loses to a number on either side (fmin/fmax
 * semantics), so the result does not depend on where in the join order a NaN sits; a < b is
 * false when either is NaN, hence the explicit a != a. */
SCALAR(double, min_f64, DBL_MAX, (b < a || a != a) ? b : a)
SCALAR(double, max_f64, -DBL_MAX, (b > a || a != a) ? b : a)
SCALAR(int64_t, min_i64, INT64_MAX, (b < a) ? b : a)
SCALAR(int64_t, max_i64, INT64_MIN, (b > a) ? b : a)
SCALAR(int, land, 1, (a && b) ? 1 : 0)
SCALAR(int, lor, 0, (a || b) ? 1 : 0)
SCALAR(uint64_t, band_u64, UINT64_MAX, a &b)
SCALAR(uint64_t, bor_u64, 0, a | b)

/* minloc/maxloc: the better value wins; on a tie the lower index wins (Kokkos' rule), so the
 * result does not depend on the join order. */
static void minloc_identity(void *v)
{
    *(px_valloc_f64 *)v = (px_valloc_f64){DBL_MAX, INT64_MAX};
}
static void minloc_join(void *dst, const void *src)
{
    px_valloc_f64 *a = dst;
    const px_valloc_f64 *b = src;
    if (b->val < a->val || (b->val == a->val && b->loc < a->loc))
        *a = *b;
}
static void maxloc_identity(void *v)
{
    *(px_valloc_f64 *)v = (px_valloc_f64){-DBL_MAX, INT64_MAX};
}
static void maxloc_join(void *dst, const void *src)
{
    px_valloc_f64 *a = dst;
    const px_valloc_f64 *b = src;
    if (b->val > a->val || (b->val == a->val && b->loc < a->loc))
        *a = *b;
}

#define BUILTIN(name, T, op, type)                                                                 \
    {                                                                                              \
        sizeof(T), _Alignof(T), name##_identity, name##_join, #name, op, type, NULL                \
    }

const px_reducer px_sum_f64 = BUILTIN(sum_f64, double, PX_REDUCER_SUM, PX_VALUE_F64);
const px_reducer px_sum_f32 = BUILTIN(sum_f32, float, PX_REDUCER_SUM, PX_VALUE_F32);
const px_reducer px_sum_i64 = BUILTIN(sum_i64, int64_t, PX_REDUCER_SUM, PX_VALUE_I64);
const px_reducer px_prod_f64 = BUILTIN(prod_f64, double, PX_REDUCER_PROD, PX_VALUE_F64);
const px_reducer px_min_f64 = BUILTIN(min_f64, double, PX_REDUCER_MIN, PX_VALUE_F64);
const px_reducer px_max_f64 = BUILTIN(max_f64, double, PX_REDUCER_MAX, PX_VALUE_F64);
const px_reducer px_min_i64 = BUILTIN(min_i64, int64_t, PX_REDUCER_MIN, PX_VALUE_I64);
const px_reducer px_max_i64 = BUILTIN(max_i64, int64_t, PX_REDUCER_MAX, PX_VALUE_I64);
const px_reducer px_minloc_f64 =
    BUILTIN(minloc, px_valloc_f64, PX_REDUCER_MINLOC, PX_VALUE_VALLOC_F64);
const px_reducer px_maxloc_f64 =
    BUILTIN(maxloc, px_valloc_f64, PX_REDUCER_MAXLOC, PX_VALUE_VALLOC_F64);
const px_reducer px_land = BUILTIN(land, int, PX_REDUCER_LAND, PX_VALUE_INT);
const px_reducer px_lor = BUILTIN(lor, int, PX_REDUCER_LOR, PX_VALUE_INT);
const px_reducer px_band_u64 = BUILTIN(band_u64, uint64_t, PX_REDUCER_BAND, PX_VALUE_U64);
const px_reducer px_bor_u64 = BUILTIN(bor_u64, uint64_t, PX_REDUCER_BOR, PX_VALUE_U64);
