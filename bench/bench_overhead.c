/* bench/bench_overhead.c - scheduling overhead as a fraction of the work (issue 16): ops of 1,
 * 10 and 100 us of work (a calibrated spin on a private counter, bench_spin.h, calibrated once
 * per process), on two DAG shapes:
 *
 *   chain        N ops, each after the previous one (parex: every op writes one Var)
 *   independent  N ops, op k after op k - 1024 (parex: op k writes Var k % 1024), so at most
 *                1024 are ready at once: the same DAG as bench_engine's "independent"
 *
 * N is chosen so the ideal run takes --target-s seconds (default 0.3):
 *   ideal = N * work / min(workers, parallelism),  parallelism 1 (chain) or 1024
 * and every contender's overhead is (measured - ideal) / ideal, the median of --reps runs.
 * Contenders here: parex_push (px_engine_push_sync of every op, then wait_for_all; labelled
 * parex_push_noinline when PX_ENGINE_INLINE_NS=0 is set), parex_graph (the DAG recorded once,
 * each run one px_graph_launch + wait), libgomp (omp task depend(inout: ...) from one thread of
 * a parallel region, then taskwait). Taskflow's build-and-run and re-run are in
 * bench_overhead_taskflow.cpp. One line per contender, shape and work size:
 *
 *   RESULT bench=overhead impl=<impl> dag=<dag> work_us=<w> workers=<W> ops=<N>
 *          seconds=<median> ideal_s=<ideal> overhead=<fraction> ns_per_task=<median / N>
 *
 * Run: build-DIR/bench/bench_overhead [--impl all|parex_push|parex_graph|libgomp]
 *      [--dag all|chain|independent] [--work-us 1,10,100] [--target-s 0.3] [--reps 3]
 *      [--workers 2]       (bench/run_graph.sh runs it interleaved with Taskflow)
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_spin.h"
#include "bench_util.h"

#include "parex.h"

#define IND_VARS  1024
#define MAX_WORKS 8
#define MAX_REPS  100

typedef struct {
    const char *impl;
    int chain; /* 1: chain, 0: independent */
    double work_ns;
    uint64_t iters;
    int workers;
    int64_t n_ops;
    int reps;
} config;

static int64_t n_vars(const config *c)
{
    return c->chain ? 1 : IND_VARS;
}

static int parallelism(const config *c)
{
    return c->chain ? 1 : c->workers < IND_VARS ? c->workers : IND_VARS;
}

/* ---- parex ---------------------------------------------------------------------------- */

static int spin_op(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)bench_spin(*(const uint64_t *)arg);
    return PX_OK;
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "bench_overhead: %s: %s\n", what, px_strerror(rc));
    exit(1);
}

/* Push the DAG; every op's argument is @iters (valid as long as a graph recording it). */
static void push_dag(px_engine *e, px_var **vars, const config *c, uint64_t *iters)
{
    const px_context cpu = {PX_DEV_CPU, 0};
    int64_t nv = n_vars(c);
    for (int64_t i = 0; i < c->n_ops; ++i) {
        px_var *w = vars[i % nv];
        int rc =
            px_engine_push_sync(e, spin_op, iters, cpu, NULL, 0, &w, 1, PX_FN_NORMAL, 0, "spin");
        if (rc != PX_OK)
            die("px_engine_push_sync", rc);
    }
}

/* Fill samples[0..reps) with the seconds of each run (push + wait, or launch + wait). */
static void run_parex(px_engine *e, const config *c, int graph, double *samples)
{
    int64_t nv = n_vars(c);
    px_var **vars = malloc((size_t)nv * sizeof *vars);
    if (!vars)
        die("malloc", PX_ENOMEM);
    for (int64_t v = 0; v < nv; ++v)
        vars[v] = px_var_new(e);
    uint64_t iters = c->iters;
    px_graph *g = NULL;
    if (graph) {
        int rc = px_graph_begin(e);
        if (rc != PX_OK)
            die("px_graph_begin", rc);
        push_dag(e, vars, c, &iters);
        if ((rc = px_graph_end(e, &g)) != PX_OK)
            die("px_graph_end", rc);
    }
    for (int r = -1; r < c->reps; ++r) { /* r = -1: warm-up (pools, first launch) */
        double t0 = bench_now_s();
        int rc = PX_OK;
        if (graph)
            rc = px_graph_launch(g);
        else
            push_dag(e, vars, c, &iters);
        if (rc != PX_OK || (rc = px_engine_wait_for_all(e)) != PX_OK)
            die("run", rc);
        if (r >= 0)
            samples[r] = bench_now_s() - t0;
    }
    if (g)
        px_graph_destroy(g);
    for (int64_t v = 0; v < nv; ++v)
        px_var_delete(e, vars[v]);
    px_engine_wait_for_all(e);
    free(vars);
}

/* ---- libgomp ---------------------------------------------------------------------------- */

static void run_omp(const config *c, double *samples)
{
    int64_t nv = n_vars(c);
    char *vars = calloc((size_t)nv, 64); /* one cache line per dependence object */
    if (!vars)
        die("calloc", PX_ENOMEM);
    const uint64_t iters = c->iters;
    for (int r = -1; r < c->reps; ++r) {
        double t = 0;
#pragma omp parallel num_threads(c->workers)
#pragma omp single
        {
            double t0 = bench_now_s();
            for (int64_t i = 0; i < c->n_ops; ++i) {
                char *w = &vars[(size_t)(i % nv) * 64];
#pragma omp task depend(inout : w[0]) firstprivate(iters)
                {
                    (void)w; /* only the dependence object */
                    (void)bench_spin(iters);
                }
            }
#pragma omp taskwait
            t = bench_now_s() - t0;
        }
        if (r >= 0)
            samples[r] = t;
    }
    free(vars);
}

/* ---- main ------------------------------------------------------------------------------- */

static void report(const config *c, const char *label, double *samples)
{
    double med = bench_median(samples, c->reps);
    double ideal = (double)c->n_ops * c->work_ns * 1e-9 / parallelism(c);
    printf("RESULT bench=overhead impl=%s dag=%s work_us=%g workers=%d ops=%lld seconds=%.6f "
           "ideal_s=%.6f overhead=%.4f ns_per_task=%.1f\n",
           label, c->chain ? "chain" : "independent", c->work_ns * 1e-3, c->workers,
           (long long)c->n_ops, med, ideal, (med - ideal) / ideal, med / (double)c->n_ops * 1e9);
    fflush(stdout);
}

static int parse_works(const char *s, double *works)
{
    int n = 0;
    while (*s && n < MAX_WORKS) {
        char *end;
        double w = strtod(s, &end);
        if (end == s || !(w > 0.0) || w > 1e6)
            return -1;
        works[n++] = w;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return *s ? -1 : n;
}

static int usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--impl all|parex_push|parex_graph|libgomp] [--dag all|chain|independent]\n"
            "          [--work-us 1,10,100] [--target-s 0.3] [--reps 3] [--workers 2]\n",
            argv0);
    return 2;
}

int main(int argc, char **argv)
{
    const char *impl = "all", *dag = "all", *work_list = "1,10,100";
    double target_s = 0.3;
    int reps = 3, workers = 2;
    if (px_initialize(&argc, &argv) != PX_OK)
        return 1;
    for (int i = 1; i < argc; ++i) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--impl") && v)
            impl = argv[++i];
        else if (!strcmp(argv[i], "--dag") && v)
            dag = argv[++i];
        else if (!strcmp(argv[i], "--work-us") && v)
            work_list = argv[++i];
        else if (!strcmp(argv[i], "--target-s") && v)
            target_s = atof(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && v)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--workers") && v)
            workers = atoi(argv[++i]);
        else
            return usage(argv[0]);
    }
    double works[MAX_WORKS];
    int n_works = parse_works(work_list, works);
    int want_push = !strcmp(impl, "all") || !strcmp(impl, "parex_push");
    int want_graph = !strcmp(impl, "all") || !strcmp(impl, "parex_graph");
    int want_omp = !strcmp(impl, "all") || !strcmp(impl, "libgomp");
    if (n_works < 1 || !(target_s > 0.0 && target_s <= 60.0) || reps < 1 || reps > MAX_REPS ||
        workers < 1 || workers > 1024 || !(want_push || want_graph || want_omp) ||
        (strcmp(dag, "all") && strcmp(dag, "chain") && strcmp(dag, "independent")))
        return usage(argv[0]);
    const char *inl = getenv("PX_ENGINE_INLINE_NS");
    const char *push_label = inl && !strcmp(inl, "0") ? "parex_push_noinline" : "parex_push";

    double per_ns = bench_spin_calibrate();
    px_engine *e = px_engine_create(PX_ENGINE_PER_DEVICE, workers);
    if (!e)
        return 1;
    double samples[MAX_REPS];
    for (int chain = 1; chain >= 0; --chain) {
        if (strcmp(dag, "all") && strcmp(dag, chain ? "chain" : "independent"))
            continue;
        for (int w = 0; w < n_works; ++w) {
            config c = {.chain = chain,
                        .work_ns = works[w] * 1e3,
                        .iters = bench_spin_iters(works[w] * 1e3, per_ns),
                        .workers = workers,
                        .reps = reps};
            c.n_ops = (int64_t)(target_s * 1e9 * parallelism(&c) / c.work_ns);
            if (c.n_ops < 1)
                c.n_ops = 1;
            if (want_push) {
                run_parex(e, &c, 0, samples);
                report(&c, push_label, samples);
            }
            if (want_graph) {
                run_parex(e, &c, 1, samples);
                report(&c, "parex_graph", samples);
            }
            if (want_omp) {
                run_omp(&c, samples);
                report(&c, "libgomp", samples);
            }
        }
    }
    /* The spin as calibrated, for the reader: one op's work measured alone. */
    double t0 = bench_now_s();
    (void)bench_spin(bench_spin_iters(1e6, per_ns));
    fprintf(stderr, "bench_overhead: %.3f spin iterations/ns; 1 ms of work measured %.3f ms\n",
            per_ns, (bench_now_s() - t0) * 1e3);
    px_engine_destroy(e);
    px_finalize();
    return 0;
}
