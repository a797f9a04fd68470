/* bench/bench_engine.c - per-op overhead of the dependency engine on empty ops, against
 * OpenMP tasks with depend clauses (libgomp) and StarPU (empty CPU codelets, STARPU_R/W
 * handles), on the same DAGs in the same run (bench/RESULTS.md, ## Engine).
 *
 *   chain        N ops writing one Var (a serial chain)
 *   independent  N ops, op k writing Var k % 1024
 *   randsum      RandSumExpr-shaped: 100 Vars, op k reads 2-19 random Vars (duplicates kept)
 *                and writes one
 *   wavefront    a W x W grid (--wf W, default 1000), op (i,j) reads (i-1,j) and (i,j-1) and
 *                writes (i,j) (Taskflow's wavefront benchmark)
 *   tree         binary tree reduction over L leaves (--tree-leaves L, default 131072): leaves
 *                write their Var, each inner op reads its two children and writes its own
 *
 * Time = push everything + wait for all, divided by the op count; the median of --reps runs.
 * Graph mode (parex_graph, parex/graph.h): the same DAG recorded once; "graph_build" is
 * record + end + one launch + wait, "graph" the median of --reps re-launches (launch + wait),
 * as Taskflow's build-and-run and re-run (bench/bench_taskflow.cpp).
 * Every figure is also printed as a line
 *   RESULT bench=engine dag=<dag> impl=<parex_push|parex_graph_build|parex_graph|libgomp|starpu>
 *          workers=<W> ops=<N> ns_per_task=<x>
 * StarPU runs only the first three DAGs (a million data handles is not its use case).
 * Run: build-DIR/bench/bench_engine [--ops 200000] [--rs-ops 50000] [--reps 5] [--workers 2]
 *      [--engine per_device|pooled|naive] [--only chain|independent|randsum|wavefront|tree]
 *      [--wf 1000] [--tree-leaves 131072] [--no-starpu] [--no-omp] [--no-graph] [--no-push]
 * [--gated]
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

typedef enum {
    DAG_CHAIN,
    DAG_INDEPENDENT,
    DAG_RANDSUM,
    DAG_WAVEFRONT,
    DAG_TREE,
    DAG_COUNT
} dag_kind;
static const char *dag_names[DAG_COUNT] = {"chain", "independent", "randsum", "wavefront", "tree"};
#define N_IMPL 5
static const char *impl_names[N_IMPL] = {"parex_push", "libgomp", "starpu", "parex_graph_build",
                                         "parex_graph"};

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

/* @n: ops (chain, independent, randsum), grid side (wavefront) or leaves (tree). */
static dag make_dag(dag_kind k, int n)
{
    dag d;
    if (k == DAG_WAVEFRONT || k == DAG_TREE) {
        int w = n;
        d.n_ops = k == DAG_WAVEFRONT ? w * w : 2 * n - 1;
        d.n_vars = d.n_ops;
        d.n_reads = calloc((size_t)d.n_ops, sizeof *d.n_reads);
        d.reads = calloc((size_t)d.n_ops, sizeof *d.reads);
        d.write = calloc((size_t)d.n_ops, sizeof *d.write);
        if (k == DAG_WAVEFRONT) {
            for (int i = 0; i < w; ++i)
                for (int j = 0; j < w; ++j) {
                    int o = i * w + j, m = 0;
                    if (i > 0)
                        d.reads[o][m++] = o - w;
                    if (j > 0)
                        d.reads[o][m++] = o - 1;
                    d.n_reads[o] = m;
                    d.write[o] = o;
                }
        } else {
            /* Heap numbering pushed bottom-up: leaves n-1 .. 2n-2 first, then inner nodes
             * n-2 down to 0 (node p reads 2p+1 and 2p+2). Op index o pushes node 2n-2-o. */
            for (int o = 0; o < d.n_ops; ++o) {
                int node = d.n_ops - 1 - o;
                d.write[o] = node;
                d.n_reads[o] = 0;
                if (node < n - 1) {
                    d.n_reads[o] = 2;
                    d.reads[o][0] = 2 * node + 1;
                    d.reads[o][1] = 2 * node + 2;
                }
            }
        }
        return d;
    }
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

static void push_all(px_engine *e, const dag *d, px_var **vars);

static double run_parex(px_engine *e, const dag *d)
{
    px_var **vars = malloc((size_t)d->n_vars * sizeof *vars);
    for (int v = 0; v < d->n_vars; ++v)
        vars[v] = px_var_new(e);
    double t0 = bench_now_s();
    push_all(e, d, vars);
    px_engine_wait_for_all(e);
    double t = bench_now_s() - t0;
    for (int v = 0; v < d->n_vars; ++v)
        px_var_delete(e, vars[v]);
    px_engine_wait_for_all(e);
    free(vars);
    return t;
}

/* Gated mode (--gated, bench/RESULTS.md "Session 8: hand-off"): an async op that writes every
 * Var of the DAG is pushed first and completed only after the last push, so every op of the DAG
 * queues behind it and none runs while the pusher pushes: the push phase is the pusher alone,
 * the run phase the workers draining queues built in advance, as Taskflow's build-and-run
 * builds every task and then runs them. It bounds what batching the pushes (the pusher running
 * ahead of the workers) could gain on this engine. */
static void gate_fn(const px_run_context *rc, px_on_complete *done, void *arg)
{
    (void)rc;
    *(px_on_complete **)arg = done;
}

static void run_parex_gated(px_engine *e, const dag *d, double *push_s, double *run_s)
{
    px_var **vars = malloc((size_t)d->n_vars * sizeof *vars);
    for (int v = 0; v < d->n_vars; ++v)
        vars[v] = px_var_new(e);
    px_on_complete *gate = NULL;
    const px_context cpu = {PX_DEV_CPU, 0};
    double t0 = bench_now_s();
    if (px_engine_push_async(e, gate_fn, &gate, cpu, NULL, 0, vars, (size_t)d->n_vars, PX_FN_NORMAL,
                             0, "gate") != PX_OK) {
        fprintf(stderr, "gate push failed\n");
        exit(1);
    }
    push_all(e, d, vars);
    double t1 = bench_now_s();
    while (!__atomic_load_n(&gate, __ATOMIC_ACQUIRE)) /* ran at its push (async, ready) */
        ;
    px_on_complete_call(gate, PX_OK);
    px_engine_wait_for_all(e);
    double t2 = bench_now_s();
    *push_s = t1 - t0;
    *run_s = t2 - t1;
    for (int v = 0; v < d->n_vars; ++v)
        px_var_delete(e, vars[v]);
    px_engine_wait_for_all(e);
    free(vars);
}

/* Gated mode's reps after a warm-up: prints the median push phase and run phase per op. */
static void gated_reps(px_engine *e, const dag *d, int reps, const char *dag_name,
                       const char *engine, int workers)
{
    double ps[100], rs[100];
    run_parex_gated(e, d, &ps[0], &rs[0]); /* warm the pools */
    for (int r = 0; r < reps; ++r)
        run_parex_gated(e, d, &ps[r], &rs[r]);
    const char *phase[2] = {"parex_gated_push", "parex_gated_run"};
    for (int i = 0; i < 2; ++i)
        printf("RESULT bench=engine dag=%s impl=%s engine=%s workers=%d ops=%d ns_per_task=%.1f\n",
               dag_name, phase[i], engine, workers, d->n_ops,
               bench_median(i == 0 ? ps : rs, reps) / d->n_ops * 1e9);
}

static void push_all(px_engine *e, const dag *d, px_var **vars)
{
    const px_context cpu = {PX_DEV_CPU, 0};
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
}

/* Graph mode: record the DAG once, run it; then re-launch it @reps times. *build gets the
 * seconds of record + end + first launch + wait, samples[r] each re-launch + wait. */
static void run_parex_graph(px_engine *e, const dag *d, int reps, double *build, double *samples)
{
    px_var **vars = malloc((size_t)d->n_vars * sizeof *vars);
    for (int v = 0; v < d->n_vars; ++v)
        vars[v] = px_var_new(e);
    px_graph *g = NULL;
    double t0 = bench_now_s();
    if (px_graph_begin(e) != PX_OK) {
        fprintf(stderr, "px_graph_begin failed\n");
        exit(1);
    }
    push_all(e, d, vars);
    if (px_graph_end(e, &g) != PX_OK || px_graph_launch(g) != PX_OK ||
        px_engine_wait_for_all(e) != PX_OK) {
        fprintf(stderr, "graph build or launch failed\n");
        exit(1);
    }
    *build = bench_now_s() - t0;
    for (int r = 0; r < reps; ++r) {
        t0 = bench_now_s();
        if (px_graph_launch(g) != PX_OK || px_engine_wait_for_all(e) != PX_OK) {
            fprintf(stderr, "graph launch failed\n");
            exit(1);
        }
        samples[r] = bench_now_s() - t0;
    }
    px_graph_destroy(g);
    for (int v = 0; v < d->n_vars; ++v)
        px_var_delete(e, vars[v]);
    px_engine_wait_for_all(e);
    free(vars);
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
    int use_graph = 1, use_push = 1, gated = 0, wf = 1000, tree_leaves = 131072;
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
        else if (!strcmp(argv[i], "--wf") && i + 1 < argc)
            wf = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tree-leaves") && i + 1 < argc)
            tree_leaves = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-starpu"))
            use_starpu = 0;
        else if (!strcmp(argv[i], "--no-omp"))
            use_omp = 0;
        else if (!strcmp(argv[i], "--no-graph"))
            use_graph = 0;
        else if (!strcmp(argv[i], "--no-push"))
            use_push = 0;
        else if (!strcmp(argv[i], "--gated"))
            gated = 1;
        else {
            fprintf(stderr,
                    "usage: %s [--ops N] [--rs-ops N] [--reps R] [--workers W] "
                    "[--engine KIND] [--only DAG] [--wf W] [--tree-leaves L] [--no-starpu] "
                    "[--no-omp] [--no-graph] [--no-push] [--gated]\n",
                    argv[0]);
            return 2;
        }
    }
    if (reps < 1 || reps > 100 || workers < 1 || n_ops < 1 || rs_ops < 1 || wf < 1 || wf > 4000 ||
        tree_leaves < 1 || tree_leaves > (1 << 22))
        return 2;
    px_engine_kind kind = !strcmp(engine, "naive")    ? PX_ENGINE_NAIVE
                          : !strcmp(engine, "pooled") ? PX_ENGINE_POOLED
                                                      : PX_ENGINE_PER_DEVICE;
    /* Gated runs queue a whole DAG behind the gate: lift the backpressure cap above it. */
    if (gated && !getenv("PX_ENGINE_MAX_PENDING"))
        setenv("PX_ENGINE_MAX_PENDING", "4194304", 1);
    if (px_initialize(&argc, &argv) != PX_OK)
        return 1;
    px_engine *e = px_engine_create(kind, workers);
    if (!e)
        return 1;

    double res[N_IMPL][DAG_COUNT];
    double *samples = calloc((size_t)reps, sizeof *samples);
    dag dags[DAG_COUNT];
    int size_of[DAG_COUNT] = {n_ops, n_ops, rs_ops, wf, tree_leaves};
    for (int k = 0; k < DAG_COUNT; ++k) {
        int wanted = !only || !strcmp(only, dag_names[k]);
        /* DAGs not run are built tiny. */
        dags[k] = make_dag((dag_kind)k, wanted ? size_of[k] : 1);
    }

    for (int k = 0; k < DAG_COUNT; ++k) {
        for (int m = 0; m < N_IMPL; ++m)
            res[m][k] = 0;
        if (only && strcmp(only, dag_names[k]) != 0)
            continue;
        if (use_push) {
            (void)run_parex(e, &dags[k]); /* warm the pools */
            for (int r = 0; r < reps; ++r)
                samples[r] = run_parex(e, &dags[k]);
            res[0][k] = bench_median(samples, reps) / dags[k].n_ops * 1e9;
        }
        if (gated)
            gated_reps(e, &dags[k], reps, dag_names[k], engine, workers);
        if (use_graph) {
            double build = 0;
            run_parex_graph(e, &dags[k], reps, &build, samples);
            res[3][k] = build / dags[k].n_ops * 1e9;
            res[4][k] = bench_median(samples, reps) / dags[k].n_ops * 1e9;
        }
        if (use_omp) {
            (void)run_omp(&dags[k], workers);
            for (int r = 0; r < reps; ++r)
                samples[r] = run_omp(&dags[k], workers);
            res[1][k] = bench_median(samples, reps) / dags[k].n_ops * 1e9;
        }
    }
    px_engine_destroy(e);
    px_finalize();

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
            for (int k = 0; k <= DAG_RANDSUM; ++k) {
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
    printf("%-12s %8s %10s %10s %10s %12s %10s %12s %14s\n", "dag", "ops", "parex", "libgomp",
           "starpu", "graph_build", "graph", "gomp/parex", "starpu/parex");
    for (int k = 0; k < DAG_COUNT; ++k) {
        if (only && strcmp(only, dag_names[k]) != 0) {
            free_dag(&dags[k]);
            continue;
        }
        printf("%-12s %8d %10.1f %10.1f %10.1f %12.1f %10.1f %12.2f %14.2f\n", dag_names[k],
               dags[k].n_ops, res[0][k], res[1][k], res[2][k], res[3][k], res[4][k],
               res[1][k] / res[0][k], res[2][k] / res[0][k]);
        for (int m = 0; m < N_IMPL; ++m)
            if (res[m][k] > 0)
                printf("RESULT bench=engine dag=%s impl=%s engine=%s workers=%d ops=%d "
                       "ns_per_task=%.1f\n",
                       dag_names[k], impl_names[m], engine, workers, dags[k].n_ops, res[m][k]);
        free_dag(&dags[k]);
    }
    free(samples);
    return 0;
}
