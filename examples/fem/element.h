/*
 * examples/fem/element.h - the P1 element matrix and load of -Laplace(u) = f and the CSR slot
 * lookup, shared by fem.c (parex kernels), bench/bench_fem.c (OpenMP) and
 * bench/kokkos/bench_fem_kokkos.cpp (Kokkos). Header-only, no parex dependency; host and
 * device functions under nvcc.
 */
#ifndef PAREX_EXAMPLES_FEM_ELEMENT_H
#define PAREX_EXAMPLES_FEM_ELEMENT_H

#include <math.h>
#include <stdint.h>

#if defined(PX_HOST_DEVICE)
#define FEM_HD PX_HOST_DEVICE
#elif defined(__CUDACC__)
#define FEM_HD __host__ __device__
#else
#define FEM_HD
#endif

/**
 * Element matrix and load of the triangle with nodes t[0..2] (counterclockwise): K[3 q + s] =
 * area grad(phi_q) . grad(phi_s), F[q] = the integral of f phi_q by the edge-midpoint rule
 * (exact for quadratics). Host and device.
 */
static inline FEM_HD void fem_element(const double *xy, const int32_t *t, double *K, double *F)
{
    const double x0 = xy[2 * t[0]], y0 = xy[2 * t[0] + 1];
    const double x1 = xy[2 * t[1]], y1 = xy[2 * t[1] + 1];
    const double x2 = xy[2 * t[2]], y2 = xy[2 * t[2] + 1];
    /* grad(phi_q) = (b_q, c_q) / (2 area). */
    const double b[3] = {y1 - y2, y2 - y0, y0 - y1};
    const double c[3] = {x2 - x1, x0 - x2, x1 - x0};
    const double area2 = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0);
    const double scale = 1.0 / (2.0 * area2); /* area / (2 area)^2 */
    for (int q = 0; q < 3; q++)
        for (int s = 0; s < 3; s++)
            K[3 * q + s] = scale * (b[q] * b[s] + c[q] * c[s]);
    /* phi_q is 1/2 at the midpoints of its two edges and 0 at the third. */
    const double pi = 3.14159265358979323846;
    const double k2 = 2.0 * pi * pi;
    const double f01 = k2 * sin(pi * 0.5 * (x0 + x1)) * sin(pi * 0.5 * (y0 + y1));
    const double f12 = k2 * sin(pi * 0.5 * (x1 + x2)) * sin(pi * 0.5 * (y1 + y2));
    const double f20 = k2 * sin(pi * 0.5 * (x2 + x0)) * sin(pi * 0.5 * (y2 + y0));
    const double w = area2 / 12.0; /* area/3 per point, times phi = 1/2 */
    F[0] = w * (f01 + f20);
    F[1] = w * (f01 + f12);
    F[2] = w * (f12 + f20);
}

/** CSR position of (r, c) in a sorted row (a linear search: rows hold at most 9 entries);
 * the caller knows it is in the pattern. Host and device. */
static inline FEM_HD int64_t fem_slot(const int64_t *row_ptr, const int32_t *col, int32_t r,
                                      int32_t c)
{
    int64_t k = row_ptr[r];
    while (col[k] != c)
        k++;
    return k;
}

#endif
