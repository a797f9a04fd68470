/*
 * bench/bench_fem.c - finite element assembly (issue 14): the P1 stiffness matrix and load of
 * examples/fem on the same unstructured mesh (examples/fem/mesh.c), about 10^6 triangles at
 * the default n = 708, assembled by
 *   atomic      parex px_scatter ATOMIC          (examples/fem/fem.c, one PX_FOR)
 *   duplicated  parex px_scatter DUPLICATED      (replicas of nnz values per thread)
 *   colored     parex element colouring          (one PX_FOR launch per colour, plain adds)
 *   auto        parex px_scatter AUTO            (what a user gets without choosing)
 *   omp-atomic  an OpenMP parallel for with `#pragma omp atomic` on every add
 * Kokkos ScatterView is bench/kokkos/bench_fem_kokkos.cpp. Every contender does the same work
 * per assembly: zero the values and the load, add every element's 3 x 3 matrix and 3-vector
 * (skipping Dirichlet rows and columns), put 1 on the Dirichlet diagonals; the CSR pattern and
 * the colouring are built once, outside the timing.
 *
 * Usage: bench_fem --impl atomic|duplicated|colored|auto|omp-atomic [--n 708] [--seed 1]
 *                  [--reps 10] [--warmup 2] [--space threads]
 * Threads: PX_NUM_THREADS (parex) or OMP_NUM_THREADS (omp-atomic); bench/run_fem.sh sets both.
 * Prints one line
 *   RESULT impl=auto mode=duplicated n=708 elements=1002528 nnz=3512339 threads=2 reps=10
 *          seconds=<median> best=<min> melems=<10^6 elements/s at the median> maxdiff=<rel>
 * maxdiff is max |value - reference| / max |reference| over the matrix values and the load,
 * against a sequential assembly in element order (correctness, not speed).
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "fem.h"

static void must(int rc, const char *what)
{
    if (rc != PX_OK) {
        fprintf(stderr, "bench_fem: %s failed: %s\n", what, px_strerror(rc));
        exit(1);
    }
}

/* The sequential reference and the OpenMP contender share this loop body. */
#define FEM_ADD_ELEMENT(ATOMIC_PRAGMA)                                                             \
    do {                                                                                           \
        double K[9], F[3];                                                                         \
        const int32_t *t = m->tri + 3 * e;                                                         \
        fem_element(m->xy, t, K, F);                                                               \
        for (int q = 0; q < 3; q++) {                                                              \
            const int32_t r = t[q];                                                                \
            if (m->boundary[r])                                                                    \
                continue;                                                                          \
            ATOMIC_PRAGMA                                                                          \
            load[r] += F[q];                                                                       \
            for (int s = 0; s < 3; s++) {                                                          \
                const int32_t c = t[s];                                                            \
                if (m->boundary[c])                                                                \
                    continue;                                                                      \
                const int64_t k = fem_slot(p->row_ptr, p->col, r, c);                              \
                ATOMIC_PRAGMA                                                                      \
                val[k] += K[3 * q + s];                                                            \
            }                                                                                      \
        }                                                                                          \
    } while (0)

#define FEM_NO_PRAGMA
#define FEM_OMP_ATOMIC _Pragma("omp atomic")

static void assemble_reference(const fem_mesh *m, const fem_pattern *p, double *val, double *load)
{
    memset(val, 0, (size_t)p->nnz * sizeof(double));
    memset(load, 0, (size_t)m->n_nodes * sizeof(double));
    for (int64_t e = 0; e < m->n_elems; e++)
        FEM_ADD_ELEMENT(FEM_NO_PRAGMA);
    for (int64_t r = 0; r < m->n_nodes; r++)
        if (m->boundary[r])
            val[fem_slot(p->row_ptr, p->col, (int32_t)r, (int32_t)r)] = 1.0;
}

static void assemble_omp(const fem_mesh *m, const fem_pattern *p, double *val, double *load)
{
#pragma omp parallel
    {
#pragma omp for schedule(static) nowait
        for (int64_t k = 0; k < p->nnz; k++)
            val[k] = 0.0;
#pragma omp for schedule(static)
        for (int64_t r = 0; r < m->n_nodes; r++)
            load[r] = 0.0;
#pragma omp for schedule(static)
        for (int64_t e = 0; e < m->n_elems; e++)
            FEM_ADD_ELEMENT(FEM_OMP_ATOMIC);
#pragma omp for schedule(static)
        for (int64_t r = 0; r < m->n_nodes; r++)
            if (m->boundary[r])
                val[fem_slot(p->row_ptr, p->col, (int32_t)r, (int32_t)r)] = 1.0;
    }
}

static double rel_diff(const double *a, const double *b, int64_t n, double *scale)
{
    double d = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double x = fabs(a[i] - b[i]);
        d = x > d || x != x ? x : d;
        *scale = fabs(b[i]) > *scale ? fabs(b[i]) : *scale;
    }
    return d;
}

int main(int argc, char **argv)
{
    const char *impl = NULL, *space_name = "threads";
    long long n = 708, reps = 10, warmup = 2;
    unsigned long long seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--impl") && v)
            impl = argv[++i];
        else if (!strcmp(argv[i], "--n") && v)
            n = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && v)
            seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--reps") && v)
            reps = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && v)
            warmup = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--space") && v)
            space_name = argv[++i];
        else {
            fprintf(stderr,
                    "usage: bench_fem --impl atomic|duplicated|colored|auto|omp-atomic [--n N] "
                    "[--seed S] [--reps R] [--warmup W] [--space NAME]\n");
            return 2;
        }
    }
    fem_assembly how = FEM_ASSEMBLY_AUTO;
    const int is_omp = impl && !strcmp(impl, "omp-atomic");
    if (!impl || (!is_omp && fem_assembly_parse(impl, &how) != PX_OK) || n < 1 ||
        n > FEM_MESH_MAX_N || reps < 1 || reps > 100000 || warmup < 0) {
        fprintf(stderr, "bench_fem: bad --impl, --n (1..%d), --reps (>= 1) or --warmup\n",
                FEM_MESH_MAX_N);
        return 2;
    }

    fem_mesh m;
    fem_pattern pat;
    must(fem_mesh_generate(n, seed, &m), "fem_mesh_generate");
    must(fem_pattern_build(&m, &pat), "fem_pattern_build");
    double *ref_val = (double *)malloc((size_t)pat.nnz * sizeof(double));
    double *ref_load = (double *)malloc((size_t)m.n_nodes * sizeof(double));
    if (!ref_val || !ref_load) {
        fprintf(stderr, "bench_fem: out of memory\n");
        return 1;
    }
    assemble_reference(&m, &pat, ref_val, ref_load);

    double *times = (double *)malloc((size_t)reps * sizeof(double));
    const double *val, *load;
    double *omp_val = NULL, *omp_load = NULL;
    fem_problem p;
    fem_assembler as;
    int threads;
    const char *mode = impl;
    if (is_omp) {
        threads = omp_get_max_threads();
        omp_val = (double *)malloc((size_t)pat.nnz * sizeof(double));
        omp_load = (double *)malloc((size_t)m.n_nodes * sizeof(double));
        if (!omp_val || !omp_load || !times) {
            fprintf(stderr, "bench_fem: out of memory\n");
            return 1;
        }
        for (long long r = -warmup; r < reps; r++) {
            const double t0 = bench_now_s();
            assemble_omp(&m, &pat, omp_val, omp_load);
            if (r >= 0)
                times[r] = bench_now_s() - t0;
        }
        val = omp_val;
        load = omp_load;
    } else {
        must(px_initialize(&argc, &argv), "px_initialize");
        px_space *s = px_space_by_name(space_name);
        if (!s || !px_space_host_accessible(s)) {
            fprintf(stderr, "bench_fem: space '%s' is not available or not host memory\n",
                    space_name);
            return 1;
        }
        threads = px_space_concurrency(s);
        must(fem_problem_create(s, &m, &p), "fem_problem_create");
        must(fem_assembler_init(&as, &p, how), "fem_assembler_init");
        mode = fem_assembly_name(as.used);
        for (long long r = -warmup; r < reps; r++) {
            const double t0 = bench_now_s();
            must(fem_assemble(&as), "fem_assemble");
            if (r >= 0)
                times[r] = bench_now_s() - t0;
        }
        val = p.A.val;
        load = p.load;
    }
    double scale = 0.0;
    double d = rel_diff(val, ref_val, pat.nnz, &scale);
    const double dl = rel_diff(load, ref_load, m.n_nodes, &scale);
    d = (dl > d || dl != dl ? dl : d) / (scale > 0.0 ? scale : 1.0);
    double best = times[0];
    for (long long r = 1; r < reps; r++)
        best = times[r] < best ? times[r] : best;
    const double med = bench_median(times, (int)reps);
    printf("RESULT impl=%s mode=%s n=%lld elements=%lld nnz=%lld threads=%d reps=%lld "
           "seconds=%.6g best=%.6g melems=%.3f maxdiff=%.3g\n",
           impl, mode, n, (long long)m.n_elems, (long long)pat.nnz, threads, reps, med, best,
           (double)m.n_elems / med * 1e-6, d);
    const int bad = !(d <= 1e-12);
    if (bad)
        fprintf(stderr, "bench_fem: %s differs from the sequential assembly by %.3g\n", impl, d);
    if (!is_omp) {
        fem_assembler_fini(&as);
        fem_problem_free(&p);
        must(px_finalize(), "px_finalize");
    }
    free(omp_val);
    free(omp_load);
    free(times);
    free(ref_val);
    free(ref_load);
    fem_pattern_free(&pat);
    fem_mesh_free(&m);
    return bad;
}
