/* tests/view_cuda.cu - PX_VIEW_AT2 in a single-source body on a view passed by value. */
#include "view_cuda.h"

PX_FOR(view_k_axpy, view_axpy_args, i, a)
{
    int64_t x = i / a->ny, y = i % a->ny;
    PX_VIEW_AT2(a->w, double, x, y) = 2.0 * PX_VIEW_AT2(a->u, double, x, y) + 1.0;
}
