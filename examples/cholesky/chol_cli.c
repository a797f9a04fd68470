/*
 * examples/cholesky/chol_cli.c - flags, Matrix Market input and the reported run of
 * parex-cholesky.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime(CLOCK_MONOTONIC) */

#include "chol_cli.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chol_repeat.h"
#include "mmio.h"

/* Above this order the exact residual (as costly as the factorization itself, and run on one
 * thread) gives way to the random-vector estimate. */
enum { CHOL_EXACT_RESIDUAL_MAX_N = 2048, CHOL_ESTIMATE_VECTORS = 16 };

void chol_options_default(chol_options *o)
{
    memset(o, 0, sizeof *o);
    o->n = 4096;
    o->tile = 256;
    o->seed = 1;
    o->residual = CHOL_RES_AUTO;
    o->check = -1.0;
    o->repeat = 1;
    o->graph = -1;
}

void chol_usage(FILE *out)
{
    fprintf(out,
            "usage: parex-cholesky [--n N] [--tile T] [--engine naive|pooled|per_device]\n"
            "                      [--workers W] [--fifo] [--matrix FILE.mtx] [--seed S]\n"
            "                      [--residual auto|exact|estimate|none] [--check TOL]\n"
            "                      [--repeat R] [--graph on|off] [--json] [--px-* runtime flags]\n"
            "Tiled right-looking Cholesky (A = L L^T) whose tile kernels run as ops on the\n"
            "parex dependency engine. Without --matrix, A is a deterministic random SPD\n"
            "matrix of order N (default 4096); tile default 256. The tile ops run on an engine\n"
            "of kind --engine (default PX_ENGINE, else per_device) with W workers (default one\n"
            "per core). per_device runs them through its CPU priority queue, critical path\n"
            "first (POTRF > TRSM > SYRK > GEMM, earlier tile columns first); --fifo uses its\n"
            "plain FIFO queue instead. The residual is\n"
            "||A - L L^T||_F / ||A||_F, exact up to n = %d, else estimated from %d random\n"
            "vectors. --check TOL exits with status 3 when the residual exceeds TOL.\n"
            "--repeat R factorizes R times and reports the fastest; each repeat first restores\n"
            "A from a saved copy (one copy op per tile, timed with the factorization). With\n"
            "--graph on (the default when R > 1) the restore and the tile ops are recorded\n"
            "once as an engine graph that every repeat launches; --graph off pushes them\n"
            "again every repeat. The factors are bitwise equal either way.\n"
            "PX_PROFILE=trace.json writes a timeline of the tile ops.\n",
            CHOL_EXACT_RESIDUAL_MAX_N, CHOL_ESTIMATE_VECTORS);
}

int chol_engine_kind(const char *name, px_engine_kind *kind)
{
    if (!name)
        return PX_EINVAL;
    if (strcmp(name, "naive") == 0)
        *kind = PX_ENGINE_NAIVE;
    else if (strcmp(name, "pooled") == 0)
        *kind = PX_ENGINE_POOLED;
    else if (strcmp(name, "per_device") == 0)
        *kind = PX_ENGINE_PER_DEVICE;
    else
        return PX_EINVAL;
    return PX_OK;
}

static int parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    if (!s || !*s)
        return PX_EINVAL;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return PX_EINVAL;
    *out = (int64_t)v;
    return PX_OK;
}

static int parse_double(const char *s, double *out)
{
    if (!s || !*s)
        return PX_EINVAL;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < 0.0)
        return PX_EINVAL;
    *out = v;
    return PX_OK;
}

/* Store the value @p val of the known flag @p name in @p o.
 * @return PX_OK; PX_EINVAL for a malformed or out-of-range value. */
static int parse_value(const char *name, const char *val, chol_options *o)
{
    int rc = PX_OK;
    int64_t v = 0;
    if (strcmp(name, "--n") == 0) {
        rc = parse_i64(val, 1, 1 << 20, &o->n);
    } else if (strcmp(name, "--tile") == 0) {
        rc = parse_i64(val, 1, 1 << 16, &o->tile);
    } else if (strcmp(name, "--engine") == 0) {
        px_engine_kind k;
        rc = chol_engine_kind(val, &k);
        o->engine = val;
    } else if (strcmp(name, "--workers") == 0) {
        rc = parse_i64(val, 1, 4096, &v);
        o->workers = (int)v;
    } else if (strcmp(name, "--matrix") == 0) {
        rc = *val ? PX_OK : PX_EINVAL;
        o->matrix = val;
    } else if (strcmp(name, "--seed") == 0) {
        rc = parse_i64(val, 0, INT64_MAX, &v);
        o->seed = (uint64_t)v;
    } else if (strcmp(name, "--residual") == 0) {
        if (strcmp(val, "auto") == 0)
            o->residual = CHOL_RES_AUTO;
        else if (strcmp(val, "exact") == 0)
            o->residual = CHOL_RES_EXACT;
        else if (strcmp(val, "estimate") == 0)
            o->residual = CHOL_RES_ESTIMATE;
        else if (strcmp(val, "none") == 0)
            o->residual = CHOL_RES_NONE;
        else
            rc = PX_EINVAL;
    } else if (strcmp(name, "--check") == 0) {
        rc = parse_double(val, &o->check);
    } else if (strcmp(name, "--graph") == 0) {
        o->graph = strcmp(val, "on") == 0 ? 1 : strcmp(val, "off") == 0 ? 0 : -1;
        rc = o->graph < 0 ? PX_EINVAL : PX_OK;
    } else { /* --repeat */
        rc = parse_i64(val, 1, 1000, &v);
        o->repeat = (int)v;
    }
    return rc;
}

int chol_parse_args(int argc, char **argv, chol_options *o, FILE *err)
{
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            o->help = 1;
            continue;
        }
        if (strcmp(arg, "--json") == 0) {
            o->json = 1;
            continue;
        }
        if (strcmp(arg, "--fifo") == 0) {
            o->fifo = 1;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0) {
            fprintf(err, "parex-cholesky: unexpected argument '%s' (see --help)\n", arg);
            return PX_EINVAL;
        }
        /* "--flag=value" or "--flag value" */
        char name[32];
        const char *val = NULL;
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        if (len >= sizeof name) {
            fprintf(err, "parex-cholesky: unknown flag '%s' (see --help)\n", arg);
            return PX_EINVAL;
        }
        memcpy(name, arg, len);
        name[len] = '\0';
        static const char *const known[] = {"--n",      "--tile", "--engine",   "--workers",
                                            "--matrix", "--seed", "--residual", "--check",
                                            "--repeat", "--graph"};
        int is_known = 0;
        for (size_t f = 0; f < sizeof known / sizeof known[0]; f++)
            is_known |= strcmp(name, known[f]) == 0;
        if (!is_known) {
            fprintf(err, "parex-cholesky: unknown flag '%s' (see --help)\n", name);
            return PX_EINVAL;
        }
        if (eq) {
            val = eq + 1;
        } else if (a + 1 < argc) {
            val = argv[++a];
        } else {
            fprintf(err, "parex-cholesky: %s needs a value\n", name);
            return PX_EINVAL;
        }
        int rc = parse_value(name, val, o);
        if (rc != PX_OK) {
            fprintf(err, "parex-cholesky: bad value '%s' for %s (see --help)\n", val, name);
            return PX_EINVAL;
        }
    }
    return PX_OK;
}

int chol_load_matrix_market(const char *path, int64_t tile, chol_matrix *m, FILE *err)
{
    mm_csr a;
    char msg[MM_MAX_LINE + 256];
    int rc = mm_read_csr(path, MM_REQUIRE_SQUARE | MM_REQUIRE_SYMMETRIC, &a, msg, sizeof msg);
    if (rc != MM_OK) {
        fprintf(err, "parex-cholesky: %s\n", msg);
        return rc;
    }
    rc = chol_matrix_init(m, a.n_rows, tile);
    if (rc != PX_OK) {
        fprintf(err,
                "parex-cholesky: %s: cannot hold a dense %" PRId64 " x %" PRId64 " matrix (%s)\n",
                path, a.n_rows, a.n_rows, px_strerror(rc));
        mm_csr_free(&a);
        return rc;
    }
    /* A general file must be symmetric: every off-diagonal entry needs an equal partner.
     * (A "symmetric" file was mirrored by the reader.) Rows are sorted: binary search. */
    for (int64_t r = 0; !a.symmetric && r < a.n_rows; r++) {
        for (int64_t e = a.row_ptr[r]; e < a.row_ptr[r + 1]; e++) {
            int64_t c = a.col[e];
            if (c == r)
                continue;
            int64_t lo = a.row_ptr[c], hi = a.row_ptr[c + 1];
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (a.col[mid] < r)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            double partner = lo < a.row_ptr[c + 1] && a.col[lo] == r ? a.val[lo] : 0.0;
            if (partner != a.val[e]) {
                fprintf(err,
                        "parex-cholesky: %s: not symmetric: entry (%" PRId64 ", %" PRId64
                        ") = %g but (%" PRId64 ", %" PRId64 ") = %g\n",
                        path, r + 1, c + 1, a.val[e], c + 1, r + 1, partner);
                mm_csr_free(&a);
                chol_matrix_fini(m);
                return PX_EINVAL;
            }
        }
    }
    /* Lower tiles take the entries whose tile row >= tile column (diagonal tiles whole). */
    for (int64_t r = 0; r < a.n_rows; r++) {
        for (int64_t e = a.row_ptr[r]; e < a.row_ptr[r + 1]; e++) {
            int64_t c = a.col[e];
            if (r / m->tile >= c / m->tile)
                *chol_at(m, r, c) = a.val[e];
        }
    }
    mm_csr_free(&a);
    return PX_OK;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Print a string as a JSON string literal (paths may hold quotes or backslashes). */
static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(out, "\\u%04x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* What time_factorizations measured. */
typedef struct chol_timing {
    double best, median; /* seconds of one run (restore + factorization when restored) */
    int restored;        /* each run restored L from A first (chol_repeat) */
    double record_s;     /* seconds to record the graph (0 without one) */
    size_t graph_ops, graph_edges;
} chol_timing;

/* Factorize @p l o->repeat times and time each run. A single run without a graph factorizes
 * l as it is (chol_factor); otherwise every run restores l from @p a and factorizes it
 * (chol_repeat), pushing the ops again or launching the graph recorded once. Stops at the
 * first failure and returns its status. */
static int time_factorizations(const chol_options *o, int use_graph, chol_matrix *l,
                               const chol_matrix *a, chol_timing *tm)
{
    memset(tm, 0, sizeof *tm);
    double *times = malloc((size_t)o->repeat * sizeof *times);
    if (!times)
        return PX_ENOMEM;
    int rc, runs = 0;
    if (!use_graph && o->repeat == 1) {
        double t0 = now_s();
        rc = chol_factor(l);
        times[runs++] = now_s() - t0;
    } else {
        chol_repeat rep;
        double t0 = now_s();
        rc = chol_repeat_init(&rep, l, a, use_graph);
        tm->record_s = use_graph ? now_s() - t0 : 0.0;
        tm->restored = 1;
        tm->graph_ops = rep.graph_ops;
        tm->graph_edges = rep.graph_edges;
        for (int r = 0; r < o->repeat && rc == PX_OK; r++) {
            t0 = now_s();
            rc = chol_repeat_run(&rep);
            times[runs++] = now_s() - t0;
        }
        chol_repeat_fini(&rep);
    }
    if (rc == PX_OK) {
        qsort(times, (size_t)runs, sizeof *times, cmp_double);
        tm->best = times[0];
        tm->median = runs % 2 ? times[runs / 2] : 0.5 * (times[runs / 2 - 1] + times[runs / 2]);
    }
    free(times);
    return rc;
}

/* chol_load_matrix_market for the run's flags; it prints its own messages. */
static int chol_matrix_load_checked(const chol_options *o, chol_matrix *a, FILE *err, int *reported)
{
    int rc = chol_load_matrix_market(o->matrix, o->tile, a, err);
    *reported = rc != PX_OK;
    return rc;
}

/* Build the input: @p l, the working matrix (factorized in place, Vars on @p eng, ops of
 * property @p prop), and, when @p need_a or the input is a file, @p a, which keeps A for the
 * residual and the repeats. A generated matrix is filled by one engine op per tile. Sets
 * *reported when the failure's message was already printed. */
static int load_input(const chol_options *o, px_engine *eng, px_fn_property prop, int need_a,
                      chol_matrix *a, chol_matrix *l, FILE *err, int *reported)
{
    int rc;
    *reported = 0;
    if (o->matrix) {
        rc = chol_matrix_load_checked(o, a, err, reported);
        if (rc != PX_OK)
            return rc;
        rc = chol_matrix_init(l, a->n, o->tile);
        l->prop = prop;
        if (rc == PX_OK)
            rc = chol_matrix_attach(l, eng);
        if (rc == PX_OK)
            chol_matrix_copy(l, a);
        return rc;
    }
    rc = chol_matrix_init(l, o->n, o->tile);
    l->prop = prop;
    if (rc == PX_OK)
        rc = chol_matrix_attach(l, eng);
    if (rc == PX_OK)
        rc = chol_generate(l, o->seed);
    if (rc == PX_OK && need_a) {
        rc = chol_matrix_init(a, o->n, o->tile);
        if (rc == PX_OK)
            chol_matrix_copy(a, l);
    }
    return rc;
}

/* What one run measured, for the report. */
typedef struct chol_report {
    const char *engine_name, *queue, *method;
    int workers, use_graph;
    chol_res_mode mode; /* resolved: exact, estimate or none */
    double gflops, residual;
    chol_timing tm;
} chol_report;

/* ||A - L L^T||_F / ||A||_F by the mode @p o asks for (auto resolved by n); NAN for none. */
static double residual_of(const chol_options *o, const chol_matrix *a, const chol_matrix *l,
                          chol_report *r)
{
    r->mode = o->residual;
    if (r->mode == CHOL_RES_AUTO)
        r->mode = l->n <= CHOL_EXACT_RESIDUAL_MAX_N ? CHOL_RES_EXACT : CHOL_RES_ESTIMATE;
    r->method = "none";
    if (r->mode == CHOL_RES_NONE)
        return NAN;
    double anorm = chol_norm_fro(a);
    if (r->mode == CHOL_RES_EXACT) {
        r->method = "exact";
        return chol_residual_exact(a, l) / anorm;
    }
    r->method = "estimate";
    return chol_residual_estimate(a, l, CHOL_ESTIMATE_VECTORS, o->seed ^ 0x5eedu) / anorm;
}

static void print_report(FILE *out, const chol_options *o, const chol_matrix *l,
                         const chol_report *r)
{
    const chol_timing *tm = &r->tm;
    const char *matrix = o->matrix ? o->matrix : "generated";
    fprintf(out,
            "parex-cholesky: n=%" PRId64 " tile=%" PRId64 " (%" PRId64 "x%" PRId64
            " tiles, %" PRId64 " tile ops) engine=%s workers=%d queue=%s matrix=%s\n",
            l->n, l->tile, l->nt, l->nt, chol_task_count(l->nt), r->engine_name, r->workers,
            r->queue, matrix);
    fprintf(out, "factorization: %.4f s, %.2f GFLOP/s (n^3/3 flops%s)\n", tm->best, r->gflops,
            tm->restored ? "; each run restores A first, timed with it" : "");
    if (o->repeat > 1)
        fprintf(out, "repeats: %d, best %.4f s, median %.4f s\n", o->repeat, tm->best, tm->median);
    if (r->use_graph)
        fprintf(out, "graph: %zu ops, %zu edges, recorded in %.4f s, launched %d times\n",
                tm->graph_ops, tm->graph_edges, tm->record_s, o->repeat);
    if (r->mode != CHOL_RES_NONE)
        fprintf(out, "residual ||A - L L^T||_F / ||A||_F = %.3e (%s)\n", r->residual, r->method);
    if (!o->json)
        return;
    fprintf(out,
            "{\"n\": %" PRId64 ", \"tile\": %" PRId64 ", \"tiles\": %" PRId64
            ", \"tasks\": %" PRId64 ", \"engine\": ",
            l->n, l->tile, l->nt, chol_task_count(l->nt));
    json_string(out, r->engine_name);
    fprintf(out, ", \"workers\": %d, \"queue\": \"%s\", \"matrix\": ", r->workers, r->queue);
    json_string(out, matrix);
    fprintf(out,
            ", \"repeat\": %d, \"graph\": %s, \"seconds\": %.6f, \"seconds_median\": %.6f"
            ", \"gflops\": %.3f",
            o->repeat, r->use_graph ? "true" : "false", tm->best, tm->median, r->gflops);
    if (r->use_graph)
        fprintf(out, ", \"graph_ops\": %zu, \"graph_edges\": %zu, \"graph_record_seconds\": %.6f",
                tm->graph_ops, tm->graph_edges, tm->record_s);
    fprintf(out, ", \"residual\": ");
    if (isnan(r->residual))
        fprintf(out, "null");
    else
        fprintf(out, "%.6e", r->residual);
    fprintf(out, ", \"residual_method\": \"%s\"}\n", r->method);
}

int chol_run(const chol_options *o, FILE *out, FILE *err)
{
    chol_matrix a, l;
    memset(&a, 0, sizeof a);
    memset(&l, 0, sizeof l);
    chol_report r;
    memset(&r, 0, sizeof r);
    int code = CHOL_EXIT_FAIL;
    int rc, reported;

    /* The program makes its own engine: the runtime's default per_device engine has one CPU
     * worker (MXNet's default), and the DAG's parallelism needs several. */
    const char *env = getenv("PX_ENGINE");
    r.engine_name = o->engine ? o->engine : env && *env ? env : "per_device";
    px_engine_kind kind;
    if (chol_engine_kind(r.engine_name, &kind) != PX_OK) {
        fprintf(err, "parex-cholesky: unknown engine '%s'\n", r.engine_name);
        return CHOL_EXIT_USAGE;
    }
    r.workers = o->workers;
    if (r.workers < 1) {
        px_space *threads = px_space_by_name("threads");
        r.workers = threads ? px_space_concurrency(threads) : 1;
        if (r.workers < 1)
            r.workers = 1;
    }
    px_fn_property prop;
    px_engine *eng = chol_engine_create(kind, r.workers, o->fifo, &prop);
    if (!eng) {
        fprintf(err, "parex-cholesky: cannot create a %s engine with %d workers\n", r.engine_name,
                r.workers);
        return CHOL_EXIT_FAIL;
    }
    r.queue = prop == PX_FN_CPU_PRIORITIZED ? "priority" : "fifo";
    r.use_graph = o->graph < 0 ? o->repeat > 1 : o->graph;
    int need_a = o->residual != CHOL_RES_NONE || o->repeat > 1 || r.use_graph;
    rc = load_input(o, eng, prop, need_a, &a, &l, err, &reported);
    /* The diagonal-inverse buffers (7.5 MiB at n = 4096, tile 256) are allocated here, not
     * inside the first timed factorization. */
    if (rc == PX_OK)
        rc = chol_matrix_alloc_inverses(&l);
    if (rc == PX_OK)
        rc = time_factorizations(o, r.use_graph, &l, &a, &r.tm);
    if (rc == CHOL_ENOTSPD) {
        int64_t order = atomic_load_explicit(&l.notspd_order, memory_order_relaxed);
        fprintf(err,
                "parex-cholesky: the matrix is not positive definite: the leading minor "
                "of order %" PRId64 " is not positive (POTRF of diagonal tile %" PRId64
                " failed; its dependent ops were skipped)\n",
                order, order > 0 ? (order - 1) / l.tile : 0);
    } else if (rc != PX_OK) {
        if (!reported)
            fprintf(err, "parex-cholesky: %s\n", px_strerror(rc));
    } else {
        double n = (double)l.n;
        r.gflops = n * n * n / 3.0 / r.tm.best * 1e-9;
        r.residual = residual_of(o, &a, &l, &r);
        print_report(out, o, &l, &r);
        code = CHOL_EXIT_OK;
        if (o->check >= 0.0 && !(r.residual <= o->check)) {
            fprintf(err, "parex-cholesky: residual %.3e exceeds --check %.3e\n", r.residual,
                    o->check);
            code = CHOL_EXIT_RESIDUAL;
        }
    }
    chol_matrix_fini(&l);
    chol_matrix_fini(&a);
    rc = px_engine_destroy(eng);
    if (rc != PX_OK && code == CHOL_EXIT_OK) {
        fprintf(err, "parex-cholesky: px_engine_destroy: %s\n", px_strerror(rc));
        code = CHOL_EXIT_FAIL;
    }
    return code;
}
