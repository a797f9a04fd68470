/* tests/view_debug.c - PX_VIEW_AT* compiled with PX_DEBUG_CHECK (bounds-checked), for
 * tests/check_view.c, which includes the same header without it. */
#define PX_DEBUG_CHECK 1
#include "view_debug.h"

double *view_debug_at3(px_view *v, int64_t i, int64_t j, int64_t k)
{
    return &PX_VIEW_AT3(*v, double, i, j, k);
}

double *view_debug_at2(px_view *v, int64_t i, int64_t j)
{
    return &PX_VIEW_AT2(*v, double, i, j);
}

float *view_debug_at3_float(px_view *v, int64_t i, int64_t j, int64_t k)
{
    return &PX_VIEW_AT3(*v, float, i, j, k);
}

/* Writes value to (i, j, k) through the checked macro. */
void view_debug_store3(px_view *v, int64_t i, int64_t j, int64_t k, double value)
{
    PX_VIEW_AT3(*v, double, i, j, k) = value;
}
