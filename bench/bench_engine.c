/* bench/bench_engine.c - per-op overhead of the dependency engine on empty ops, against
 * OpenMP tasks with depend clauses (libgomp) and StarPU (empty CPU codelets, STARPU_R/W
 * handles), on the same DAGs in the same run (bench/RESULTS.md, ## Engine).
 *
 *   chain        N ops writing one Var (a serial chain)
 *   independent  N ops, op k writing Var k % 1024
 *   randsum      RandSumExpr-shaped: 100 Vars, op k reads 2-19 random Vars (duplicates kept)
 *                and writes one
 *
 * Time = push everything + wait for all, divided by the op count; the median of --reps runs.
 * Run: build-DIR/bench/bench_engine [--ops 200000] [--rs-ops 50000] [--reps 5] [--workers 2]
 *      [--engine per_device|pooled|naive] [--only chain|independent|randsum] [--no-starpu]
 *      [--no-omp]
 */
#include <omp.h>
#include <starpu.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#include "parex.h"

#define MAX_READS 19
#define RS_VARS   100
#define IND_VARS  1024

typedef enum { DAG_CHAIN, DAG_INDEPENDENT, DAG_RANDSUM, DAG_COUNT } dag_kind;
static const char *dag_names[DAG_COUNT] = {"chain", "independent", "randsum"};

typedef struct {
    int n_ops;
    int n_vars;
    int *n_reads; /* per op */
    int (*reads)[MAX_READS];
    int *write;
} dag;

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static dag make_dag(dag_kind k, int n)
{
    dag d;
    d.n_ops = n;
    d.n_vars = k == DAG_CHAIN ? 1 : k == DAG_INDEPENDENT ? IND_VARS : RS_VARS;
    d.n_reads = calloc((size_t)n, sizeof *d.n_reads);
    d.reads = calloc((size_t)n, sizeof *d.reads);
    d.write = calloc((size_t)n, sizeof *d.write);
    uint64_t s = 42;
    for (int i = 0; i < n; ++i) {
        if (k == DAG_RANDSUM) {
            d.n_reads[i] = 2 + (int)(rng(&s) % 18);
            for (int j = 0; j < d.n_reads[i]; ++j)
                d.reads[i][j] = (int)(rng(&s) % RS_VARS);
            d.write[i] = (int)(rng(&s) % RS_VARS);
        } else {
            d.n_reads[i] = 0;
            d.write[i] = k == DAG_CHAIN ? 0 : i % IND_VARS;
        }
    }
    return d;
}

static void free_dag(dag *d)
{
    free(d->n_reads);
    free(d->reads);
    free(d->write);
}

/* ---- parex ---------------------------------------------------------------------------- */

static int empty_op(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    return PX_OK;
}

static double run_parex(px_engine *e, const dag *d)
{
    px_var **vars = malloc((size_t)d->n_vars * sizeof *vars);
    for (int v = 0; v < d->n_vars; ++v)
        vars[v] = px_var_new(e);
    const px_context cpu = {PX_DEV_CPU, 0};
    double t0 = bench_now_s();
    for (int i = 0; i < d->n_ops; ++i) {
        px_var *r[MAX_READS];
        for (int j = 0; j < d->n_reads[i]; ++j)
            r[j] = vars[d->reads[i][j]];
        px_var *w = vars[d->write[i]];
        if (px_engine_push_sync(e, empty_op, NULL, cpu, r, (size_t)d->n_reads[i], &w, 1,
                                PX_FN_NORMAL, 0, "empty") != PX_OK) {
            fprintf(stderr, "push failed\n");
            exit(1);
        }
    }
    px_engine_wait_for_all(e);
    double t = bench_now_s() - t0;
    for (int v = 0; v < d->n_vars; ++v)
        px_var_delete(e, vars[v]);
    px_engine_wait_for_all(e);
    free(vars);
    return t;
}

/* ---- OpenMP tasks ----------------------------------------------------------------------- */

static double run_omp(const dag *d, int workers)
{
    char *vars = calloc((size_t)d->n_vars, 64); /* one line per Var: no false dependences */
    double t0 = 0, t = 0;
#pragma omp parallel num_threads(workers)
#pragma omp single
    {
        t0 = bench_now_s();
        for (int i = 0; i < d->n_ops; ++i) {
            const int *rd = d->reads[i];
            int nr = d->n_reads[i];
            char *w = &vars[(size_t)d->write[i] * 64];
            (void)rd;
            (void)nr;
#pragma omp task depend(iterator(j = 0 : nr), in : vars[(size_t)rd[j] * 64]) depend(inout : w[0])
            {
            }
        }
#pragma omp taskwait
        t = bench_now_s() - t0;
    }
    free(vars);
    return t;
}

/* ---- StarPU ----------------------------------------------------------------------------- */

static void starpu_empty(void *buffers[], void *arg)
{
    (void)buffers;
    (void)arg;
}

static struct starpu_codelet empty_cl = {
    .cpu_funcs = {starpu_empty},
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .name = "empty",
};

static double run_starpu(const dag *d)
{
    starpu_data_handle_t *h = malloc((size_t)d->n_vars * sizeof *h);
    for (int v = 0; v < d->n_vars; ++v)
        starpu_void_data_register(&h[v]);
    double t0 = bench_now_s();
    for (int i = 0; i < d->n_ops; ++i) {
        /* StarPU wants each handle once per task: merge duplicates, a read of the written
         * handle becomes part of the RW access. */
        struct starpu_data_descr descr[MAX_READS + 1];
        int n = 0;
        for (int j = 0; j < d->n_reads[i]; ++j) {
            int v = d->reads[i][j], seen = v == d->write[i];
            for (int k = 0; k < n && !seen; ++k)
                seen = descr[k].handle == h[v];
            if (!seen) {
                descr[n].handle = h[v];
                descr[n].mode = STARPU_R;
                ++n;
            }
        }
        descr[n].handle = h[d->write[i]];
        descr[n].mode = STARPU_RW;
        ++n;
        int rc = starpu_task_insert(&empty_cl, STARPU_DATA_MODE_ARRAY, descr, n, 0);
        if (rc != 0) {
            fprintf(stderr, "starpu_task_insert: %d\n", rc);
            exit(1);
        }
    }
    starpu_task_wait_for_all();
    double t = bench_now_s() - t0;
    for (int v = 0; v < d->n_vars; ++v)
        starpu_data_unregister(h[v]);
    free(h);
    return t;
}

/* ---- main ------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    int n_ops = 200000, rs_ops = 50000, reps = 5, workers = 2, use_starpu = 1, use_omp = 1;
    const char *engine = "per_device";
    const char *only = NULL;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--ops") && i + 1 < argc)
            n_ops = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rs-ops") && i + 1 < argc)
            rs_ops = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--workers") && i + 1 < argc)
            workers = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--engine") && i + 1 < argc)
            engine = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--no-starpu"))
            use_starpu = 0;
        else if (!strcmp(argv[i], "--no-omp"))
            use_omp = 0;
        else {
            fprintf(stderr,
                    "usage: %s [--ops N] [--rs-ops N] [--reps R] [--workers W] "
                    "[--engine KIND] [--only DAG] [--no-starpu] [--no-omp]\n",
                    argv[0]);
            return 2;
        }
    }
    if (reps < 1 || reps > 100 || workers < 1 || n_ops < 1 || rs_ops < 1)
        return 2;
    px_engine_kind kind = !strcmp(engine, "naive")    ? PX_ENGINE_NAIVE
                          : !strcmp(engine, "pooled") ? PX_ENGINE_POOLED
                                                      : PX_ENGINE_PER_DEVICE;
    if (px_initialize(&argc, &argv) != PX_OK)
        return 1;
    px_engine *e = px_engine_create(kind, workers);
    if (!e)
        return 1;

    double res[3][DAG_COUNT];
    double *samples = calloc((size_t)reps, sizeof *samples);
    dag dags[DAG_COUNT];
    for (int k = 0; k < DAG_COUNT; ++k)
        dags[k] = make_dag((dag_kind)k, k == DAG_RANDSUM ? rs_ops : n_ops);

    for (int k = 0; k < DAG_COUNT; ++k) {
        res[0][k] = res[1][k] = 0;
        if (only && strcmp(only, dag_names[k]) != 0)
            continue;
        (void)run_parex(e, &dags[k]); /* warm the pools */
        for (int r = 0; r < reps; ++r)
            samples[r] = run_parex(e, &dags[k]);
        res[0][k] = bench_median(samples, reps) / dags[k].n_ops * 1e9;
        res[1][k] = 0;
        if (use_omp) {
            (void)run_omp(&dags[k], workers);
            for (int r = 0; r < reps; ++r)
                samples[r] = run_omp(&dags[k], workers);
            res[1][k] = bench_median(samples, reps) / dags[k].n_ops * 1e9;
        }
    }
    px_engine_destroy(e);
    px_finalize();

    for (int k = 0; k < DAG_COUNT; ++k)
        res[2][k] = 0;
    if (use_starpu) {
        /* Last, so its idle workers cannot steal cores from the other two. */
        struct starpu_conf conf;
        starpu_conf_init(&conf);
        conf.ncpus = workers;
        conf.ncuda = 0;
        conf.nopencl = 0;
        if (starpu_init(&conf) != 0) {
            fprintf(stderr, "starpu_init failed; StarPU column skipped\n");
        } else {
            for (int k = 0; k < DAG_COUNT; ++k) {
                if (only && strcmp(only, dag_names[k]) != 0)
                    continue;
                (void)run_starpu(&dags[k]);
                for (int r = 0; r < reps; ++r)
                    samples[r] = run_starpu(&dags[k]);
                res[2][k] = bench_median(samples, reps) / dags[k].n_ops * 1e9;
            }
            starpu_shutdown();
        }
    }

    printf("engine %s, %d workers, median of %d reps, ns per empty op (push + run + wait)\n",
           engine, workers, reps);
    printf("%-12s %8s %10s %10s %10s %12s %14s\n", "dag", "ops", "parex", "libgomp", "starpu",
           "gomp/parex", "starpu/parex");
    for (int k = 0; k < DAG_COUNT; ++k) {
        printf("%-12s %8d %10.1f %10.1f %10.1f %12.2f %14.2f\n", dag_names[k], dags[k].n_ops,
               res[0][k], res[1][k], res[2][k], res[1][k] / res[0][k], res[2][k] / res[0][k]);
        free_dag(&dags[k]);
    }
    free(samples);
    return 0;
}
