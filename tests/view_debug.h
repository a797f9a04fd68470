/* tests/view_debug.h - checked element access (tests/view_debug.c) for tests/check_view.c. */
#ifndef VIEW_DEBUG_H
#define VIEW_DEBUG_H

#include <stdint.h>

#include "parex.h"

double *view_debug_at3(px_view *v, int64_t i, int64_t j, int64_t k);
double *view_debug_at2(px_view *v, int64_t i, int64_t j);
float *view_debug_at3_float(px_view *v, int64_t i, int64_t j, int64_t k);
void view_debug_store3(px_view *v, int64_t i, int64_t j, int64_t k, double value);

#endif
