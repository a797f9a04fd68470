/* tests/view_cuda_debug.cu - PX_VIEW_AT3 with PX_DEBUG_CHECK in device code: an out-of-bounds
 * store is printed and lands in the device scratch element, not in memory outside the view. */
#define PX_DEBUG_CHECK 1
#include "view_cuda.h"

PX_FOR(view_k_shift_store, view_shift_args, i, a)
{
    PX_VIEW_AT3(a->w, double, i, a->shift, 0) = 7.0;
}
