/* bench/bench_mdrange.c - multi-dimensional loops (issue 13): one contender, one kernel, one box
 * per process, so that runtimes never share a process and bench/run_mdrange.sh can alternate
 * the contenders' order between rounds (on these VMs the first program of a pair runs slower).
 *
 *   bench_mdrange --impl omp|parex1d|parexmd|parexmdk --kernel stencil|transpose|reduce
 *                 [--dims AxBxC | AxB] [--tile AxBxC | default] [--tile-sweep]
 *                 [--reps R] [--warmup W] [--space NAME]
 *
 * Kernels (double precision; extents slowest first, the last index is contiguous):
 *   stencil    3-D 7-point Jacobi sweep over the interior of an A x B x C grid,
 *              out[i,j,k] = c0 in[i,j,k] + c1 (sum of the 6 neighbours); in and out swap each
 *              sweep. Bytes: 2 x 8 per interior point per sweep (one read stream, one write
 *              stream; the neighbours come from cache). Default dims 256x256x256.
 *   transpose  2-D layout change, A x B: out (LayoutRight, j contiguous) = in (LayoutLeft,
 *              i contiguous), out[i*B + j] = in[j*A + i]. Bytes: 2 x 8 per element. Default
 *              8192x8192.
 *   reduce     sum of squares over the whole A x B x C box. Bytes: 8 per point. Default
 *              256x256x256.
 * Contenders:
 *   omp        OpenMP in this file: stencil `parallel for collapse(2) schedule(static)` over
 *              (i, j) with the k loop inside; transpose a blocked loop, `collapse(2)` over tile
 *              pairs, tile side from --tile (a tile sweep with --tile-sweep); reduce `collapse(3)
 *              reduction(+)`. Threads from OMP_NUM_THREADS (bind with OMP_PROC_BIND=close
 *              OMP_PLACES=cores).
 *   parex1d    parex's 1-D launch, hand-flattened: a PX_FOR / PX_REDUCE over the interior rows
 *              (i, j) recovering i and j by division, the k loop inside (transpose: over the
 *              flattened tile pairs, like the OpenMP blocked loop). Threads from PX_NUM_THREADS.
 *   parexmd    parex's MDRange launch (px_parallel_for_md_fn / px_parallel_reduce_md_fn over a
 *              px_mdrange box; tile "default" = 0 = automatic). Built only when the library has
 *              the mdrange API (PX_HAVE_MDRANGE, set by bench/mdrange.cmake); otherwise the
 *              program prints "SKIP impl=parexmd ..." and exits 0.
 *   parexmdk   the same launches written as single-source kernels (PX_FOR_3D, PX_FOR_2D,
 *              PX_REDUCE_3D with PX_ITERATE_RIGHT), as a user would write them: the library
 *              generates the tile loop nest.
 * The Kokkos contenders are bench/kokkos/bench_mdrange_kokkos.cpp, same options and output.
 *
 * Every (contender, tile) is first checked: one sweep from a known initial state is compared
 * point by point with the formula (stencil, transpose) or with a serial sum (reduce); a wrong
 * result exits 1. Then W warm-up and R timed runs; with --tile-sweep the tiles are rotated from
 * one repetition to the next. One line per tile:
 *
 *   RESULT impl=omp kernel=stencil dims=256x256x256 tile=none threads=2 reps=10
 *          seconds=<median> best=<fastest> gbs=<bytes / median / 1e9> maxerr=<check>
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#include "parex.h"

#define C0 0.4
#define C1 0.1 /* c0 + 6 c1 = 1: the sweep is an average, values stay bounded */

#define MAX_TILES 8

typedef enum { K_STENCIL, K_TRANSPOSE, K_REDUCE } kernel_kind;
typedef enum { I_OMP, I_PAREX1D, I_PAREXMD, I_PAREXMDK } impl_kind;

typedef struct {
    int64_t t[3]; /* 0 in every entry: default (automatic) */
} tile3;

static kernel_kind kernel = K_STENCIL;
static impl_kind impl = I_OMP;
/* The two parex MDRange contenders: host function tiles (parexmd) and PX_FOR_3D kernels
 * (parexmdk). */
static int is_md(void)
{
    return impl == I_PAREXMD || impl == I_PAREXMDK;
}
static int64_t dims[3] = {256, 256, 256};
static int rank = 3;
static int reps = 10, warmup = 2;
static px_space *space;
static double *A, *B;
static double SINK;

/* The initial value of point (i, j, k): small exact decimals, the same in every program. */
static inline double init_value(int64_t i, int64_t j, int64_t k)
{
    return (double)((i * 131 + j * 17 + k * 3) % 101) * 0.01;
}

/* ---- OpenMP ---------------------------------------------------------------------------------- */

static void omp_init3(double *a, double *b)
{
    const int64_t n0 = dims[0], n1 = dims[1], n2 = dims[2];
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t i = 0; i < n0; ++i)
        for (int64_t j = 0; j < n1; ++j)
            for (int64_t k = 0; k < n2; ++k) {
                const int64_t p = (i * n1 + j) * n2 + k;
                a[p] = init_value(i, j, k);
                if (b)
                    b[p] = init_value(i, j, k);
            }
}

static void omp_stencil(const double *restrict in, double *restrict out)
{
    const int64_t n0 = dims[0], n1 = dims[1], n2 = dims[2], s1 = n2, s0 = n1 * n2;
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t i = 1; i < n0 - 1; ++i)
        for (int64_t j = 1; j < n1 - 1; ++j) {
            const double *restrict c = in + i * s0 + j * s1;
            double *restrict o = out + i * s0 + j * s1;
            for (int64_t k = 1; k < n2 - 1; ++k)
                o[k] = C0 * c[k] +
                       C1 * (c[k - 1] + c[k + 1] + c[k - s1] + c[k + s1] + c[k - s0] + c[k + s0]);
        }
}

/* in is LayoutLeft (n0 x n1, i contiguous), out LayoutRight (j contiguous). */
static void omp_transpose_init(double *in, double *out)
{
    const int64_t n0 = dims[0], n1 = dims[1];
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < n1; ++j)
        for (int64_t i = 0; i < n0; ++i)
            in[j * n0 + i] = init_value(i, j, 0);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n0; ++i)
        for (int64_t j = 0; j < n1; ++j)
            out[i * n1 + j] = 0.0;
}

static void omp_transpose(const double *restrict in, double *restrict out, const tile3 *t)
{
    const int64_t n0 = dims[0], n1 = dims[1];
    const int64_t t0 = t->t[0], t1 = t->t[1]; /* >= 1: main sets 64 x 64 by default */
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t ib = 0; ib < n0; ib += t0)
        for (int64_t jb = 0; jb < n1; jb += t1) {
            const int64_t ie = ib + t0 < n0 ? ib + t0 : n0, je = jb + t1 < n1 ? jb + t1 : n1;
            for (int64_t i = ib; i < ie; ++i)
                for (int64_t j = jb; j < je; ++j)
                    out[i * n1 + j] = in[j * n0 + i];
        }
}

static double omp_reduce(const double *restrict a)
{
    const int64_t n0 = dims[0], n1 = dims[1], n2 = dims[2];
    double s = 0.0;
#pragma omp parallel for collapse(3) schedule(static) reduction(+ : s)
    for (int64_t i = 0; i < n0; ++i)
        for (int64_t j = 0; j < n1; ++j)
            for (int64_t k = 0; k < n2; ++k) {
                const double v = a[(i * n1 + j) * n2 + k];
                s += v * v;
            }
    return s;
}

/* ---- parex, 1-D launch, hand-flattened ------------------------------------------------------- */

typedef struct {
    const double *in;
    double *out;
    int64_t n0, n1, n2;
    int64_t t0, t1; /* transpose tile */
    double *aux;    /* init kernels: a second array to write, or NULL */
} grid_args;

/* Row r of the whole box (all (i, j), i = r / n1): first touch and initial values. */
PX_FOR(k_init_rows, grid_args, r, a)
{
    const int64_t i = r / a->n1, j = r % a->n1;
    double *o = a->out + r * a->n2;
    double *o2 = a->aux;
    for (int64_t k = 0; k < a->n2; ++k) {
        o[k] = init_value(i, j, k);
        if (o2)
            o2[r * a->n2 + k] = init_value(i, j, k);
    }
}

/* Interior row r (i = r / (n1 - 2) + 1, j = r % (n1 - 2) + 1), the k loop inside. */
PX_FOR(k_stencil_rows, grid_args, r, a)
{
    const int64_t m1 = a->n1 - 2, i = r / m1 + 1, j = r % m1 + 1;
    const int64_t s1 = a->n2, s0 = a->n1 * a->n2, n2 = a->n2;
    const double *restrict c = a->in + i * s0 + j * s1;
    double *restrict o = a->out + i * s0 + j * s1;
    for (int64_t k = 1; k < n2 - 1; ++k)
        o[k] =
            C0 * c[k] + C1 * (c[k - 1] + c[k + 1] + c[k - s1] + c[k + s1] + c[k - s0] + c[k + s0]);
}

PX_REDUCE(k_ssq_rows, grid_args, double, r, a, acc)
{
    const double *restrict c = a->in + r * a->n2;
    double s = 0.0;
    for (int64_t k = 0; k < a->n2; ++k)
        s += c[k] * c[k];
    *acc += s;
}

/* Transpose init: column j of the LayoutLeft input (n = n1 columns). */
PX_FOR(k_transpose_init_in, grid_args, j, a)
{
    double *in = a->aux;
    for (int64_t i = 0; i < a->n0; ++i)
        in[j * a->n0 + i] = init_value(i, j, 0);
}

PX_FOR(k_transpose_init_out, grid_args, i, a)
{
    for (int64_t j = 0; j < a->n1; ++j)
        a->out[i * a->n1 + j] = 0.0;
}

/* Tile pair b of the blocked transpose (row-major over the tile grid, like collapse(2)). */
PX_FOR(k_transpose_tiles, grid_args, b, a)
{
    const int64_t nb1 = (a->n1 + a->t1 - 1) / a->t1;
    const int64_t ib = (b / nb1) * a->t0, jb = (b % nb1) * a->t1;
    const int64_t ie = ib + a->t0 < a->n0 ? ib + a->t0 : a->n0;
    const int64_t je = jb + a->t1 < a->n1 ? jb + a->t1 : a->n1;
    const double *restrict in = a->in;
    double *restrict out = a->out;
    for (int64_t i = ib; i < ie; ++i)
        for (int64_t j = jb; j < je; ++j)
            out[i * a->n1 + j] = in[j * a->n0 + i];
}

static grid_args px_args(const double *in, double *out)
{
    grid_args g = {in, out, dims[0], dims[1], rank == 3 ? dims[2] : 1, 64, 64, NULL};
    return g;
}

static void must(int rc, const char *what)
{
    if (rc != PX_OK) {
        fprintf(stderr, "bench_mdrange: %s: %s\n", what, px_strerror(rc));
        exit(1);
    }
}

static void px1_init3(double *a, double *b)
{
    grid_args g = px_args(NULL, a);
    g.aux = b;
    must(px_parallel_for(space, "init", px_range(0, dims[0] * dims[1]), &k_init_rows, &g, sizeof g),
         "init");
}

static void px1_stencil(const double *in, double *out)
{
    grid_args g = px_args(in, out);
    must(px_parallel_for(space, "stencil_1d", px_range(0, (dims[0] - 2) * (dims[1] - 2)),
                         &k_stencil_rows, &g, sizeof g),
         "stencil");
}

static void px1_transpose_init(double *in, double *out)
{
    grid_args g = px_args(NULL, out);
    g.aux = in;
    must(
        px_parallel_for(space, "init_in", px_range(0, dims[1]), &k_transpose_init_in, &g, sizeof g),
        "init");
    must(px_parallel_for(space, "init_out", px_range(0, dims[0]), &k_transpose_init_out, &g,
                         sizeof g),
         "init");
}

static void px1_transpose(const double *in, double *out, const tile3 *t)
{
    grid_args g = px_args(in, out);
    g.t0 = t->t[0];
    g.t1 = t->t[1];
    const int64_t nb = ((dims[0] + g.t0 - 1) / g.t0) * ((dims[1] + g.t1 - 1) / g.t1);
    must(px_parallel_for(space, "transpose_1d", px_range(0, nb), &k_transpose_tiles, &g, sizeof g),
         "transpose");
}

static double px1_reduce(const double *a)
{
    grid_args g = px_args(a, NULL);
    double s = 0.0;
    must(px_parallel_reduce(space, "ssq_1d", px_range(0, dims[0] * dims[1]), &k_ssq_rows, &g,
                            sizeof g, &px_sum_f64, &s),
         "reduce");
    return s;
}

/* ---- parex, MDRange launch ----------------------------------------------------------------------
 * Written against DESIGN.md section 6 (px_mdrange, px_parallel_for_md_fn,
 * px_parallel_reduce_md_fn): host function kernels receive one tile, the box [lo, hi), and loop
 * over it themselves, the last index innermost (PX_ITERATE_RIGHT, the default for C-ordered
 * data). Compiled when bench/mdrange.cmake finds px_parallel_for_md_fn in the public headers. */
#ifdef PX_HAVE_MDRANGE
typedef struct {
    const double *in;
    double *out;
    int64_t n0, n1, n2;
} md_args;

static void md_stencil_tile(const int64_t *lo, const int64_t *hi, void *ctx)
{
    const md_args *a = ctx;
    const int64_t s1 = a->n2, s0 = a->n1 * a->n2;
    for (int64_t i = lo[0]; i < hi[0]; ++i)
        for (int64_t j = lo[1]; j < hi[1]; ++j) {
            const double *restrict c = a->in + i * s0 + j * s1;
            double *restrict o = a->out + i * s0 + j * s1;
            for (int64_t k = lo[2]; k < hi[2]; ++k)
                o[k] = C0 * c[k] +
                       C1 * (c[k - 1] + c[k + 1] + c[k - s1] + c[k + s1] + c[k - s0] + c[k + s0]);
        }
}

static void md_transpose_tile(const int64_t *lo, const int64_t *hi, void *ctx)
{
    const md_args *a = ctx;
    const double *restrict in = a->in;
    double *restrict out = a->out;
    for (int64_t i = lo[0]; i < hi[0]; ++i)
        for (int64_t j = lo[1]; j < hi[1]; ++j)
            out[i * a->n1 + j] = in[j * a->n0 + i];
}

static void md_ssq_tile(const int64_t *lo, const int64_t *hi, void *ctx, void *acc)
{
    const md_args *a = ctx;
    double s = 0.0;
    for (int64_t i = lo[0]; i < hi[0]; ++i)
        for (int64_t j = lo[1]; j < hi[1]; ++j) {
            const double *restrict c = a->in + (i * a->n1 + j) * a->n2;
            for (int64_t k = lo[2]; k < hi[2]; ++k)
                s += c[k] * c[k];
        }
    *(double *)acc += s;
}

/* parexmdk: the same bodies per point; the library's loop nest walks each tile. */
PX_FOR_3D(k_md_stencil, md_args, i, j, k, a)
{
    const int64_t s1 = a->n2, s0 = a->n1 * a->n2;
    const double *c = a->in + i * s0 + j * s1 + k;
    a->out[i * s0 + j * s1 + k] = C0 * c[0] + C1 * (c[-1] + c[1] + c[-s1] + c[s1] + c[-s0] + c[s0]);
}

PX_FOR_2D(k_md_transpose, md_args, i, j, a)
{
    a->out[i * a->n1 + j] = a->in[j * a->n0 + i];
}

PX_REDUCE_3D(k_md_ssq, md_args, double, i, j, k, a, acc)
{
    const double v = a->in[(i * a->n1 + j) * a->n2 + k];
    *acc += v * v;
}

static px_mdrange_policy md_policy(int r, const int64_t *lower, const int64_t *upper,
                                   const tile3 *t)
{
    px_mdrange_policy p = px_mdrange(r, lower, upper);
    for (int d = 0; d < r; ++d)
        p.tile[d] = t->t[d]; /* 0: automatic */
    p.iterate = PX_ITERATE_RIGHT;
    return p;
}

static void md_stencil(const double *in, double *out, const tile3 *t)
{
    md_args a = {in, out, dims[0], dims[1], dims[2]};
    const int64_t lower[3] = {1, 1, 1}, upper[3] = {dims[0] - 1, dims[1] - 1, dims[2] - 1};
    if (impl == I_PAREXMDK)
        must(px_parallel_for_md(space, "stencil_mdk", md_policy(3, lower, upper, t), &k_md_stencil,
                                &a, sizeof a),
             "stencil");
    else
        must(px_parallel_for_md_fn(space, "stencil_md", md_policy(3, lower, upper, t),
                                   md_stencil_tile, &a),
             "stencil");
}

static void md_transpose(const double *in, double *out, const tile3 *t)
{
    md_args a = {in, out, dims[0], dims[1], 1};
    const int64_t lower[2] = {0, 0}, upper[2] = {dims[0], dims[1]};
    if (impl == I_PAREXMDK)
        must(px_parallel_for_md(space, "transpose_mdk", md_policy(2, lower, upper, t),
                                &k_md_transpose, &a, sizeof a),
             "transpose");
    else
        must(px_parallel_for_md_fn(space, "transpose_md", md_policy(2, lower, upper, t),
                                   md_transpose_tile, &a),
             "transpose");
}

static double md_reduce(const double *in, const tile3 *t)
{
    md_args a = {in, NULL, dims[0], dims[1], dims[2]};
    const int64_t lower[3] = {0, 0, 0}, upper[3] = {dims[0], dims[1], dims[2]};
    double s = 0.0;
    if (impl == I_PAREXMDK)
        must(px_parallel_reduce_md(space, "ssq_mdk", md_policy(3, lower, upper, t), &k_md_ssq, &a,
                                   sizeof a, &px_sum_f64, &s),
             "reduce");
    else
        must(px_parallel_reduce_md_fn(space, "ssq_md", md_policy(3, lower, upper, t), md_ssq_tile,
                                      &a, &px_sum_f64, &s),
             "reduce");
    return s;
}
#endif /* PX_HAVE_MDRANGE */

/* ---- dispatch, checks, timing ---------------------------------------------------------------- */

static void do_init(void)
{
    if (kernel == K_TRANSPOSE) {
        if (impl == I_OMP)
            omp_transpose_init(A, B);
        else
            px1_transpose_init(A, B);
    } else if (impl == I_OMP) {
        omp_init3(A, kernel == K_STENCIL ? B : NULL);
    } else {
        px1_init3(A, kernel == K_STENCIL ? B : NULL);
    }
}

/* One run of the kernel: a stencil sweep A -> B (then the arrays swap), a transpose A -> B, or
 * a reduction of A. */
static void run_once(const tile3 *t)
{
    switch (kernel) {
    case K_STENCIL:
        if (impl == I_OMP)
            omp_stencil(A, B);
        else if (impl == I_PAREX1D)
            px1_stencil(A, B);
#ifdef PX_HAVE_MDRANGE
        else
            md_stencil(A, B, t);
#endif
        {
            double *tmp = A;
            A = B;
            B = tmp;
        }
        break;
    case K_TRANSPOSE:
        if (impl == I_OMP)
            omp_transpose(A, B, t);
        else if (impl == I_PAREX1D)
            px1_transpose(A, B, t);
#ifdef PX_HAVE_MDRANGE
        else
            md_transpose(A, B, t);
#endif
        break;
    case K_REDUCE:
        if (impl == I_OMP)
            SINK += omp_reduce(A);
        else if (impl == I_PAREX1D)
            SINK += px1_reduce(A);
#ifdef PX_HAVE_MDRANGE
        else
            SINK += md_reduce(A, t);
#endif
        break;
    }
    (void)t;
}

/* Initialise, run once, compare with the formula; returns the largest error (relative for the
 * reduction). The stencil's result is in A after the swap. */
static double check(const tile3 *t)
{
    do_init();
    const int64_t n0 = dims[0], n1 = dims[1], n2 = rank == 3 ? dims[2] : 1;
    double err = 0.0;
    if (kernel == K_REDUCE) {
        double before = SINK, ref = 0.0;
        run_once(t);
        double got = SINK - before;
        SINK = before;
        for (int64_t i = 0; i < n0; ++i)
            for (int64_t j = 0; j < n1; ++j)
                for (int64_t k = 0; k < n2; ++k) {
                    const double v = init_value(i, j, k);
                    ref += v * v;
                }
        return fabs(got - ref) / ref;
    }
    run_once(t);
    if (kernel == K_TRANSPOSE) {
        for (int64_t i = 0; i < n0; ++i)
            for (int64_t j = 0; j < n1; ++j)
                err = fmax(err, fabs(B[i * n1 + j] - init_value(i, j, 0)));
        return err;
    }
    for (int64_t i = 0; i < n0; ++i)
        for (int64_t j = 0; j < n1; ++j)
            for (int64_t k = 0; k < n2; ++k) {
                const int interior =
                    i > 0 && i < n0 - 1 && j > 0 && j < n1 - 1 && k > 0 && k < n2 - 1;
                const double want =
                    interior ? C0 * init_value(i, j, k) +
                                   C1 * (init_value(i, j, k - 1) + init_value(i, j, k + 1) +
                                         init_value(i, j - 1, k) + init_value(i, j + 1, k) +
                                         init_value(i - 1, j, k) + init_value(i + 1, j, k))
                             : init_value(i, j, k);
                err = fmax(err, fabs(A[(i * n1 + j) * n2 + k] - want));
            }
    return err;
}

static int parse_dims(const char *s, int64_t *out, int max)
{
    int n = 0;
    char *end;
    while (n < max) {
        long long v = strtoll(s, &end, 10);
        if (end == s || v < 1)
            return -1;
        out[n++] = (int64_t)v;
        if (*end == '\0')
            return n;
        if (*end != 'x')
            return -1;
        s = end + 1;
    }
    return -1;
}

static void tile_name(const tile3 *t, char *buf, size_t n)
{
    if (!is_md() && kernel != K_TRANSPOSE) {
        snprintf(buf, n, "none"); /* collapse(2) / rows: not tiled */
    } else if (t->t[0] == 0 && t->t[1] == 0 && t->t[2] == 0) {
        snprintf(buf, n, "default");
    } else if (rank == 2) {
        snprintf(buf, n, "%lldx%lld", (long long)t->t[0], (long long)t->t[1]);
    } else {
        snprintf(buf, n, "%lldx%lldx%lld", (long long)t->t[0], (long long)t->t[1],
                 (long long)t->t[2]);
    }
}

/* The tile sweep: the same list in bench/kokkos/bench_mdrange_kokkos.cpp. */
static int sweep_tiles(tile3 *tiles)
{
    static const tile3 st[] = {{{0, 0, 0}},  {{1, 4, 256}}, {{1, 16, 64}},
                               {{2, 8, 64}}, {{4, 4, 32}},  {{8, 8, 8}}};
    static const tile3 tr[] = {{{0, 0, 0}},   {{16, 16, 0}},   {{32, 32, 0}},
                               {{64, 64, 0}}, {{128, 128, 0}}, {{16, 256, 0}}};
    static const tile3 rd[] = {{{0, 0, 0}}, {{1, 16, 256}}, {{4, 16, 64}}};
    const tile3 *src = kernel == K_STENCIL ? st : kernel == K_TRANSPOSE ? tr : rd;
    int n = kernel == K_STENCIL     ? (int)(sizeof st / sizeof *st)
            : kernel == K_TRANSPOSE ? (int)(sizeof tr / sizeof *tr)
                                    : (int)(sizeof rd / sizeof *rd);
    int first = 0;
    if (!is_md() && kernel != K_TRANSPOSE)
        n = 1; /* OpenMP collapse and parex rows: no tile */
    else if (!is_md())
        first = 1; /* the blocked loops have no automatic tile */
    for (int i = first; i < n; ++i)
        tiles[i - first] = src[i];
    return n - first;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_mdrange --impl omp|parex1d|parexmd|parexmdk --kernel "
                    "stencil|transpose|reduce [--dims AxBxC|AxB] [--tile AxBxC|default] "
                    "[--tile-sweep] [--reps R] [--warmup W] [--space NAME]\n");
}

int main(int argc, char **argv)
{
    const char *space_name = "threads", *dims_arg = NULL, *tile_arg = NULL;
    const char *impl_name = "omp", *kernel_name = "stencil";
    int sweep = 0;
    for (int i = 1; i < argc; ++i) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--impl") && v)
            impl_name = argv[++i];
        else if (!strcmp(argv[i], "--kernel") && v)
            kernel_name = argv[++i];
        else if (!strcmp(argv[i], "--dims") && v)
            dims_arg = argv[++i];
        else if (!strcmp(argv[i], "--tile") && v)
            tile_arg = argv[++i];
        else if (!strcmp(argv[i], "--tile-sweep"))
            sweep = 1;
        else if (!strcmp(argv[i], "--reps") && v)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && v)
            warmup = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--space") && v)
            space_name = argv[++i];
        else {
            usage();
            return 2;
        }
    }
    if (!strcmp(impl_name, "omp"))
        impl = I_OMP;
    else if (!strcmp(impl_name, "parex1d"))
        impl = I_PAREX1D;
    else if (!strcmp(impl_name, "parexmd"))
        impl = I_PAREXMD;
    else if (!strcmp(impl_name, "parexmdk"))
        impl = I_PAREXMDK;
    else {
        usage();
        return 2;
    }
    if (!strcmp(kernel_name, "stencil"))
        kernel = K_STENCIL;
    else if (!strcmp(kernel_name, "transpose"))
        kernel = K_TRANSPOSE;
    else if (!strcmp(kernel_name, "reduce"))
        kernel = K_REDUCE;
    else {
        usage();
        return 2;
    }
    rank = kernel == K_TRANSPOSE ? 2 : 3;
    if (kernel == K_TRANSPOSE)
        dims[0] = dims[1] = 8192;
    if (dims_arg && parse_dims(dims_arg, dims, 3) != rank) {
        fprintf(stderr, "bench_mdrange: --dims needs %d extents >= 1 for %s, got '%s'\n", rank,
                kernel_name, dims_arg);
        return 2;
    }
    if (kernel == K_STENCIL && (dims[0] < 3 || dims[1] < 3 || dims[2] < 3)) {
        fprintf(stderr, "bench_mdrange: the stencil needs extents >= 3\n");
        return 2;
    }
    if (reps < 1 || reps > 1000 || warmup < 0) {
        fprintf(stderr, "bench_mdrange: --reps must be 1..1000, --warmup >= 0\n");
        return 2;
    }
    tile3 tiles[MAX_TILES];
    int ntiles = 1;
    memset(tiles, 0, sizeof tiles);
    if (sweep) {
        ntiles = sweep_tiles(tiles);
    } else if (tile_arg && strcmp(tile_arg, "default") != 0) {
        if (parse_dims(tile_arg, tiles[0].t, 3) != rank) {
            fprintf(stderr, "bench_mdrange: --tile needs %d sizes >= 1, got '%s'\n", rank,
                    tile_arg);
            return 2;
        }
    }
    if (kernel == K_TRANSPOSE && !is_md() && tiles[0].t[0] == 0) {
        tiles[0].t[0] = 64; /* the blocked loops' default tile: 64 x 64 */
        tiles[0].t[1] = 64;
    }
#ifndef PX_HAVE_MDRANGE
    if (is_md()) {
        printf("SKIP impl=parexmd kernel=%s: built without the mdrange API "
               "(px_parallel_for_md_fn)\n",
               kernel_name);
        return 0;
    }
#endif
    int threads;
    if (impl == I_OMP) {
        threads = omp_get_max_threads();
    } else {
        must(px_initialize(&argc, &argv), "px_initialize");
        space = px_space_by_name(space_name);
        if (!space) {
            fprintf(stderr, "bench_mdrange: no space '%s'\n", space_name);
            return 1;
        }
        threads = px_space_concurrency(space);
    }
    const size_t npts = (size_t)dims[0] * (size_t)dims[1] * (size_t)(rank == 3 ? dims[2] : 1);
    A = malloc(npts * sizeof *A); /* first touch in do_init, by the contender's threads */
    B = kernel == K_REDUCE ? NULL : malloc(npts * sizeof *B);
    if (!A || (kernel != K_REDUCE && !B)) {
        fprintf(stderr, "bench_mdrange: out of memory (%zu points)\n", npts);
        return 1;
    }
    double bytes;
    if (kernel == K_STENCIL)
        bytes = 16.0 * (double)(dims[0] - 2) * (double)(dims[1] - 2) * (double)(dims[2] - 2);
    else if (kernel == K_TRANSPOSE)
        bytes = 16.0 * (double)npts;
    else
        bytes = 8.0 * (double)npts;

    double maxerr[MAX_TILES];
    for (int t = 0; t < ntiles; ++t) {
        maxerr[t] = check(&tiles[t]);
        const double tol = kernel == K_REDUCE ? 1e-9 : 1e-12; /* a wrong index: >= 0.01 */
        if (!(maxerr[t] <= tol)) {
            char tn[64];
            tile_name(&tiles[t], tn, sizeof tn);
            fprintf(stderr, "bench_mdrange: %s %s tile %s: wrong result (error %.3g)\n", impl_name,
                    kernel_name, tn, maxerr[t]);
            return 1;
        }
    }
    static double times[MAX_TILES][1000];
    for (int w = 0; w < warmup; ++w)
        for (int t = 0; t < ntiles; ++t)
            run_once(&tiles[t]);
    for (int r = 0; r < reps; ++r)
        for (int q = 0; q < ntiles; ++q) {
            const int t = (q + r) % ntiles; /* rotate the tiles between repetitions */
            const double t0 = bench_now_s();
            run_once(&tiles[t]);
            times[t][r] = bench_now_s() - t0;
        }
    char dn[96];
    if (rank == 2)
        snprintf(dn, sizeof dn, "%lldx%lld", (long long)dims[0], (long long)dims[1]);
    else
        snprintf(dn, sizeof dn, "%lldx%lldx%lld", (long long)dims[0], (long long)dims[1],
                 (long long)dims[2]);
    for (int t = 0; t < ntiles; ++t) {
        double best = times[t][0];
        for (int r = 1; r < reps; ++r)
            best = times[t][r] < best ? times[t][r] : best;
        const double med = bench_median(times[t], reps);
        char tn[64];
        tile_name(&tiles[t], tn, sizeof tn);
        printf("RESULT impl=%s kernel=%s dims=%s tile=%s threads=%d reps=%d seconds=%.6g "
               "best=%.6g gbs=%.4f maxerr=%.3g\n",
               impl_name, kernel_name, dn, tn, threads, reps, med, best, bytes / med / 1e9,
               maxerr[t]);
    }
    if (SINK == 42.0)
        printf("sink\n");
    free(A);
    free(B);
    if (impl != I_OMP)
        px_finalize();
    return 0;
}
