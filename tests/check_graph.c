/* tests/check_graph.c - engine graphs (parex/graph.h): a launch gives the result of pushing the
 * recorded ops one by one (a randomized DAG over 64 Vars, bit for bit against the serial
 * order, on 1, 2 and 3 CPU workers), launches interleave with ordinary pushes in order,
 * failures propagate inside a graph and out through its Vars, misuse gives clear statuses,
 * destroying a graph with queued launches defers its free, a graph outlives its engine safely
 * a push that fails while recording leaves no Var of it in the graph, and a waiter on a graph
 * Var mid-launch returns only once the whole launch ended (a launch holds its Vars like one
 * op), with the failure marked then.
 *
 * The engine kind under test comes from PX_ENGINE (ctest registers one run per kind);
 * PX_TEST_GRAPH_OPS scales the randomized DAG down for sanitizer runs. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "check_engine_common.h"

static size_t env_size(const char *name, size_t dflt)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    long long v = atoll(s);
    return v > 0 ? (size_t)v : dflt;
}

/* ---- randomized DAG against the serial order -------------------------------------------- */

#define NV     64
#define MAX_RW 4

typedef struct rop {
    uint32_t id;
    int n_r, n_w;
    int r[MAX_RW], w[MAX_RW];
    uint64_t *val; /* the NV values the op updates */
} rop;

/* The op: mix its reads (in list order) into a hash, then fold the hash into each write
 * (v = v*31 + h): the result depends on the order of the ops on every Var. */
static void rop_apply(const rop *o, uint64_t *val)
{
    uint64_t h = o->id;
    for (int k = 0; k < o->n_r; ++k)
        h = h * 1000003u + val[o->r[k]];
    for (int k = 0; k < o->n_w; ++k)
        val[o->w[k]] = val[o->w[k]] * 31u + h + (uint64_t)k;
}

static int rop_sync(const px_run_context *rc, void *arg)
{
    (void)rc;
    const rop *o = arg;
    rop_apply(o, o->val);
    return PX_OK;
}

static void rop_async(const px_run_context *rc, px_on_complete *done, void *arg)
{
    (void)rc;
    const rop *o = arg;
    rop_apply(o, o->val);
    px_on_complete_call(done, PX_OK);
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Op @i of a random DAG: 0-3 reads and 1-3 writes (an op may read and write one Var: it counts
 * as a write; the same Var may appear twice). */
static void rop_make(rop *o, uint32_t i, uint64_t *seed, uint64_t *val)
{
    memset(o, 0, sizeof *o);
    o->id = i;
    o->val = val;
    o->n_r = (int)(rng_next(seed) % 4);
    o->n_w = 1 + (int)(rng_next(seed) % 3);
    /* Locality: most ops touch a window of Vars, so chains and fans both appear. */
    int base = (int)(rng_next(seed) % NV);
    for (int k = 0; k < o->n_r; ++k)
        o->r[k] = (base + (int)(rng_next(seed) % 8)) % NV;
    for (int k = 0; k < o->n_w; ++k)
        o->w[k] = (base + (int)(rng_next(seed) % 8)) % NV;
}

static void random_dag_once(int workers)
{
    size_t n = env_size("PX_TEST_GRAPH_OPS", 10000);
    rop *ops = calloc(n, sizeof *ops);
    uint64_t *val = calloc(NV, sizeof *val), *ref = calloc(NV, sizeof *ref);
    ck_assert_ptr_nonnull(ops);
    uint64_t seed = 0x9E3779B97F4A7C15ull ^ (uint64_t)workers;
    for (size_t i = 0; i < n; ++i)
        rop_make(&ops[i], (uint32_t)i, &seed, val);
    for (int j = 0; j < NV; ++j)
        val[j] = ref[j] = (uint64_t)j;

    px_engine *e = px_engine_create(kind_under_test(), workers);
    ck_assert_ptr_nonnull(e);
    px_var *v[NV];
    for (int j = 0; j < NV; ++j)
        v[j] = px_var_new(e);
    ck_assert_int_eq(px_graph_begin(e), PX_OK);
    for (size_t i = 0; i < n; ++i) {
        rop *o = &ops[i];
        px_var *r[MAX_RW], *w[MAX_RW];
        for (int k = 0; k < o->n_r; ++k)
            r[k] = v[o->r[k]];
        for (int k = 0; k < o->n_w; ++k)
            w[k] = v[o->w[k]];
        int rc;
        if (i % 7 == 3)
            rc = px_engine_push_async(e, rop_async, o, CPU, r, (size_t)o->n_r, w, (size_t)o->n_w,
                                      PX_FN_NORMAL, 0, "rop-async");
        else if (i % 11 == 5)
            rc = px_engine_push_sync(e, rop_sync, o, CPU, r, (size_t)o->n_r, w, (size_t)o->n_w,
                                     PX_FN_CPU_PRIORITIZED, (int)(i % 5), "rop-prio");
        else
            rc = px_engine_push_sync(e, rop_sync, o, CPU, r, (size_t)o->n_r, w, (size_t)o->n_w,
                                     PX_FN_NORMAL, 0, "rop");
        ck_assert_int_eq(rc, PX_OK);
    }
    px_graph *g = NULL;
    ck_assert_int_eq(px_graph_end(e, &g), PX_OK);
    size_t n_ops = 0, n_edges = 0;
    ck_assert_int_eq(px_graph_stats(g, &n_ops, &n_edges), PX_OK);
    ck_assert_uint_eq(n_ops, n);
    ck_assert_uint_gt(n_edges, 0);
    /* Nothing ran while recording. */
    for (int j = 0; j < NV; ++j)
        ck_assert_uint_eq(val[j], (uint64_t)j);
    for (int launch = 0; launch < 3; ++launch) {
        ck_assert_int_eq(px_graph_launch(g), PX_OK);
        for (size_t i = 0; i < n; ++i)
            rop_apply(&ops[i], ref);
    }
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    for (int j = 0; j < NV; ++j)
        ck_assert_msg(val[j] == ref[j], "Var %d: graph %llu, serial %llu (%d workers)", j,
                      (unsigned long long)val[j], (unsigned long long)ref[j], workers);
    ck_assert_int_eq(px_graph_destroy(g), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    free(ops);
    free(val);
    free(ref);
}

START_TEST(test_random_dag_launch_equals_serial_order)
{
    for (int workers = 1; workers <= 3; ++workers)
        random_dag_once(workers);
}
END_TEST

/* ---- launches interleaved with pushes --------------------------------------------------- */

typedef struct mix_arg {
    uint64_t *x;    /* the value it updates */
    uint64_t *from; /* the value it reads, or NULL */
    uint64_t k;
} mix_arg;

static int mix_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    const mix_arg *a = arg;
    *a->x = *a->x * 31u + a->k + (a->from ? *a->from : 0u);
    return PX_OK;
}

START_TEST(test_launches_interleave_with_pushes_in_order)
{
    size_t launches = env_size("PX_TEST_GRAPH_LAUNCHES", 1000);
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *va = px_var_new(e), *vb = px_var_new(e);
    uint64_t a = 1, b = 2, ra = 1, rb = 2;
    /* Graph: a = f(a); b = g(b, a); a = h(a). */
    mix_arg g1 = {&a, NULL, 3}, g2 = {&b, &a, 5}, g3 = {&a, NULL, 7};
    ck_assert_int_eq(px_graph_begin(e), PX_OK);
    ck_assert_int_eq(
        px_engine_push_sync(e, mix_fn, &g1, CPU, NULL, 0, &va, 1, PX_FN_NORMAL, 0, "g1"), PX_OK);
    ck_assert_int_eq(
        px_engine_push_sync(e, mix_fn, &g2, CPU, &va, 1, &vb, 1, PX_FN_NORMAL, 0, "g2"), PX_OK);
    ck_assert_int_eq(
        px_engine_push_sync(e, mix_fn, &g3, CPU, NULL, 0, &va, 1, PX_FN_NORMAL, 0, "g3"), PX_OK);
    px_graph *g = NULL;
    ck_assert_int_eq(px_graph_end(e, &g), PX_OK);
    mix_arg p1 = {&b, NULL, 11}, p2 = {&a, &b, 13};
    for (size_t i = 0; i < launches; ++i) {
        ck_assert_int_eq(px_graph_launch(g), PX_OK);
        ra = ra * 31u + 3u;
        rb = rb * 31u + 5u + ra;
        ra = ra * 31u + 7u;
        if (i % 2 == 0) {
            ck_assert_int_eq(
                px_engine_push_sync(e, mix_fn, &p1, CPU, NULL, 0, &vb, 1, PX_FN_NORMAL, 0, "p1"),
                PX_OK);
            rb = rb * 31u + 11u;
        }
        if (i % 3 == 0) {
            ck_assert_int_eq(
                px_engine_push_sync(e, mix_fn, &p2, CPU, &vb, 1, &va, 1, PX_FN_NORMAL, 0, "p2"),
                PX_OK);
            ra = ra * 31u + 13u + rb;
        }
    }
    ck_assert_int_eq(px_engine_wait_for_var(e, va), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, vb), PX_OK);
    ck_assert_uint_eq(a, ra);
    ck_assert_uint_eq(b, rb);
    ck_assert_int_eq(px_graph_destroy(g), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* A graph that only reads its Vars: launches from several threads may run at once. */
static int read_count_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    atomic_fetch_add((atomic_int *)arg, 1);
    return PX_OK;
}

/* px_graph_end prepares the first launch's ops (graph_launch.c, pxi_graph_prepare): the first
 * launch allocates nothing, as later ones, which reuse what earlier ones left. */
START_TEST(test_first_launch_allocates_nothing)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    ck_assert_ptr_nonnull(e);
    enum { NVAR = 4, NOP = 24 };
    px_var *v[NVAR];
    uint64_t x[NVAR] = {0};
    mix_arg a[NOP];
    for (int i = 0; i < NVAR; ++i)
        v[i] = px_var_new(e);
    ck_assert_int_eq(px_graph_begin(e), PX_OK);
    for (int k = 0; k < NOP; ++k) {
        const int w = k % NVAR, r = (k * 3 + 1) % NVAR;
        a[k] = (mix_arg){&x[w], r == w ? NULL : &x[r], (uint64_t)k};
        ck_assert_int_eq(px_engine_push_sync(e, mix_fn, &a[k], CPU, r == w ? NULL : &v[r],
                                             r == w ? 0 : 1, &v[w], 1, PX_FN_NORMAL, 0, "mix"),
                         PX_OK);
    }
    px_graph *g = NULL;
    ck_assert_int_eq(px_graph_end(e, &g), PX_OK);
    uint64_t expect[NVAR] = {0};
    for (int launch = 0; launch < 3; ++launch) {
        for (int k = 0; k < NOP; ++k) { /* the serial order */
            const int w = k % NVAR, r = (k * 3 + 1) % NVAR;
            expect[w] = expect[w] * 31u + (uint64_t)k + (r == w ? 0u : expect[r]);
        }
        const uint64_t c0 = pxi_alloc_count();
        ck_assert_int_eq(px_graph_launch(g), PX_OK);
        ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
        const uint64_t c1 = pxi_alloc_count();
        ck_assert_msg(c1 == c0, "launch %d: %llu allocations", launch,
                      (unsigned long long)(c1 - c0));
        for (int i = 0; i < NVAR; ++i)
            ck_assert(x[i] == expect[i]);
    }
    ck_assert_int_eq(px_graph_destroy(g), PX_OK);
    for (int i = 0; i < NVAR; ++i)
        ck_assert_int_eq(px_var_delete(e, v[i]), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

START_TEST(test_kernel_op_recorded_runs_each_launch)
{
    enum { N = 1000 };
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_space *s = px_default_space();
    px_var *vx = px_var_new(e), *vr = px_var_new(e);
    double *x = calloc(N, sizeof *x);
    atomic_int reads;
    atomic_init(&reads, 0);
    ck_assert_int_eq(px_graph_begin(e), PX_OK);
    ck_assert_int_eq(
        px_engine_push_parallel_for_fn(e, s, "fill", px_range(0, N), fill_fn, x, NULL, 0, &vx, 1),
        PX_OK);
    ck_assert_int_eq(px_engine_push_sync(e, read_count_fn, &reads, CPU, &vx, 1, &vr, 1,
                                         PX_FN_NORMAL, 0, "after-fill"),
                     PX_OK);
    px_graph *g = NULL;
    ck_assert_int_eq(px_graph_end(e, &g), PX_OK);
    ck_assert_double_eq(x[N - 1], 0.0); /* recorded, not run */
    ck_assert_int_eq(px_graph_launch(g), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, vr), PX_OK);
    for (int i = 0; i < N; ++i)
        ck_assert_double_eq(x[i], (double)i);
    memset(x, 0, N * sizeof *x);
    ck_assert_int_eq(px_graph_launch(g), PX_OK);
    ck_assert_int_eq(px_graph_launch(g), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_double_eq(x[N - 1], (double)(N - 1));
    ck_assert_int_eq(atomic_load(&reads), 3);
    ck_assert_int_eq(px_graph_destroy(g), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    free(x);
}
END_TEST

/* ---- failures ----------------------------------------------------------------------------- */

static void async_fail(const px_run_context *rc, px_on_complete *done, void *arg)
{
    (void)rc;
    px_on_complete_call(done, (int)(intptr_t)arg);
}

START_TEST(test_failure_inside_graph_skips_dependents_and_marks_vars)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *a = px_var_new(e), *b = px_var_new(e), *c = px_var_new(e), *d = px_var_new(e),
           *f = px_var_new(e);
    atomic_store(&ran_count, 0);
    ck_assert_int_eq(px_graph_begin(e), PX_OK);
    /* a fails; b reads a (skipped); c independent (runs); d reads b (skipped); a written
     * again (skipped: a failed); f fails asynchronously with another status. */
    ck_assert_int_eq(px_engine_push_sync(e, fail_fn, (void *)(intptr_t)PX_EUSER, CPU, NULL, 0, &a,
                                         1, PX_FN_NORMAL, 0, "fails"),
                     PX_OK);
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, &a, 1, &b, 1, PX_FN_NORMAL, 0, "skip-b"),
        PX_OK);
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, NULL, 0, &c, 1, PX_FN_NORMAL, 0, "runs-c"),
        PX_OK);
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, &b, 1, &d, 1, PX_FN_NORMAL, 0, "skip-d"),
        PX_OK);
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, NULL, 0, &a, 1, PX_FN_NORMAL, 0, "skip-a"),
        PX_OK);
    ck_assert_int_eq(px_engine_push_async(e, async_fail, (void *)(intptr_t)(PX_EUSER - 1), CPU,
                                          NULL, 0, &f, 1, PX_FN_NORMAL, 0, "fails-f"),
                     PX_OK);
    px_graph *g = NULL;
    ck_assert_int_eq(px_graph_end(e, &g), PX_OK);
    ck_assert_int_eq(px_graph_launch(g), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, a), PX_EUSER);
    ck_assert_int_eq(px_engine_wait_for_var(e, b), PX_EUSER);
    ck_assert_int_eq(px_engine_wait_for_var(e, c), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, d), PX_EUSER);
    ck_assert_int_eq(px_engine_wait_for_var(e, f), PX_EUSER - 1);
    ck_assert_int_eq(atomic_load(&ran_count), 1);
    int first = px_engine_wait_for_all(e);
    ck_assert(first == PX_EUSER || first == PX_EUSER - 1);
    /* A later ordinary op on a cleared Var runs; a second launch fails the same way. */
    ck_assert_int_eq(px_graph_launch(g), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, d), PX_EUSER);
    ck_assert_int_eq(atomic_load(&ran_count), 2);
    (void)px_engine_wait_for_all(e);
    /* The wait that reported the failures cleared them (engine.h, recovery). */
    ck_assert_int_eq(px_engine_wait_for_var(e, a), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, b), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, f), PX_OK);
    /* A launch that finds one of its Vars failed is skipped as a whole (as one op). */
    ck_assert_int_eq(px_engine_push_sync(e, fail_fn, (void *)(intptr_t)(PX_EUSER - 2), CPU, NULL, 0,
                                         &c, 1, PX_FN_NORMAL, 0, "fails-c"),
                     PX_OK);
    ck_assert_int_eq(px_graph_launch(g), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, f), PX_EUSER - 2);
    ck_assert_int_eq(atomic_load(&ran_count), 2);
    (void)px_engine_wait_for_all(e);
    ck_assert_int_eq(px_graph_destroy(g), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

static int flag_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    return *(const int *)arg;
}

/* A launch state is reused by the next launch: the failures one launch recorded must not leak
 * into the next (a launch keeps only failures and clears them before the next). A and B write
 * a and b and fail in turn, C reads both: each launch must mark exactly the failing one's Var
 * and skip C with its status; a last launch with neither failing runs C. */
START_TEST(test_launch_failures_do_not_leak_into_next_launch)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *a = px_var_new(e), *b = px_var_new(e), *c = px_var_new(e);
    int sa = PX_OK, sb = PX_OK;
    atomic_store(&ran_count, 0);
    ck_assert_int_eq(px_graph_begin(e), PX_OK);
    ck_assert_int_eq(
        px_engine_push_sync(e, flag_fn, &sa, CPU, NULL, 0, &a, 1, PX_FN_NORMAL, 0, "A"), PX_OK);
    ck_assert_int_eq(
        px_engine_push_sync(e, flag_fn, &sb, CPU, NULL, 0, &b, 1, PX_FN_NORMAL, 0, "B"), PX_OK);
    px_var *ab[2] = {a, b};
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, ab, 2, &c, 1, PX_FN_NORMAL, 0, "C"), PX_OK);
    px_graph *g = NULL;
    ck_assert_int_eq(px_graph_end(e, &g), PX_OK);
    for (int k = 0; k < 7; ++k) {
        sa = k == 6 || k % 2 ? PX_OK : PX_EUSER;
        sb = k == 6 || !(k % 2) ? PX_OK : PX_EUSER - 1;
        ck_assert_int_eq(px_graph_launch(g), PX_OK);
        ck_assert_int_eq(px_engine_wait_for_var(e, a), sa);
        ck_assert_int_eq(px_engine_wait_for_var(e, b), sb);
        ck_assert_int_eq(px_engine_wait_for_var(e, c), sa != PX_OK ? sa : sb);
        ck_assert_int_eq(atomic_load(&ran_count), k == 6 ? 1 : 0);
        ck_assert_int_eq(px_engine_wait_for_all(e), sa != PX_OK ? sa : sb);
    }
    ck_assert_int_eq(px_graph_destroy(g), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* ---- misuse ------------------------------------------------------------------------------- */

typedef struct begin_arg {
    px_engine *e;
    int st;
} begin_arg;

static int begin_inside_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    begin_arg *b = arg;
    b->st = px_graph_begin(b->e);
    return PX_OK;
}

START_TEST(test_misuse_gives_clear_statuses)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_engine *e2 = px_engine_create(kind_under_test(), 1);
    px_var *v = px_var_new(e), *v2 = px_var_new(e2);
    px_graph *g = NULL;
    ck_assert_int_eq(px_graph_begin(NULL), PX_EFAULT);
    ck_assert_int_eq(px_graph_end(e, &g), PX_EINVAL); /* not recording */
    ck_assert_int_eq(px_graph_launch(NULL), PX_EFAULT);
    ck_assert_int_eq(px_graph_destroy(NULL), PX_EFAULT);
    ck_assert_int_eq(px_graph_stats(NULL, NULL, NULL), PX_EFAULT);

    ck_assert_int_eq(px_graph_begin(e), PX_OK);
    ck_assert_int_eq(px_graph_begin(e), PX_EBUSY);
    ck_assert_int_eq(px_graph_begin(e2), PX_EBUSY);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_EBUSY);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_EBUSY);
    /* A push to another engine while recording. */
    ck_assert_int_eq(
        px_engine_push_sync(e2, count_fn, NULL, CPU, NULL, 0, &v2, 1, PX_FN_NORMAL, 0, "other"),
        PX_EINVAL);
    /* Bad pushes keep their statuses and record nothing. */
    ck_assert_int_eq(
        px_engine_push_sync(e, NULL, NULL, CPU, NULL, 0, &v, 1, PX_FN_NORMAL, 0, "null-fn"),
        PX_EFAULT);
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, NULL, 0, &v2, 1, PX_FN_NORMAL, 0, "foreign"),
        PX_EINVAL);
    ck_assert_int_eq(px_graph_end(e2, &g), PX_EINVAL); /* recording for e, not e2 */
    ck_assert_int_eq(px_graph_end(e, NULL), PX_EFAULT);
    ck_assert_int_eq(px_graph_end(e, &g), PX_OK);
    size_t n_ops = 99;
    ck_assert_int_eq(px_graph_stats(g, &n_ops, NULL), PX_OK);
    ck_assert_uint_eq(n_ops, 0);
    ck_assert_int_eq(px_graph_launch(g), PX_OK);      /* an empty graph does nothing */
    ck_assert_int_eq(px_graph_end(e, &g), PX_EINVAL); /* end twice */

    /* A launch cannot be recorded. */
    px_graph *g2 = NULL;
    ck_assert_int_eq(px_graph_begin(e), PX_OK);
    ck_assert_int_eq(px_graph_launch(g), PX_EBUSY);
    ck_assert_int_eq(px_graph_end(e, &g2), PX_OK);
    ck_assert_int_eq(px_graph_destroy(g2), PX_OK);

    /* Recording inside an op. */
    begin_arg b = {e, PX_OK};
    ck_assert_int_eq(
        px_engine_push_sync(e, begin_inside_fn, &b, CPU, NULL, 0, &v, 1, PX_FN_NORMAL, 0, "rec"),
        PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
    ck_assert_int_eq(b.st, PX_EDEADLK);

    /* A recorded Var deleted before the launch. */
    px_var *t = px_var_new(e);
    ck_assert_int_eq(px_graph_begin(e), PX_OK);
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, NULL, 0, &t, 1, PX_FN_NORMAL, 0, "on-t"),
        PX_OK);
    ck_assert_int_eq(px_graph_end(e, &g2), PX_OK);
    ck_assert_int_eq(px_var_delete(e, t), PX_OK);
    ck_assert_int_eq(px_graph_launch(g2), PX_EINVAL);
    ck_assert_int_eq(px_graph_destroy(g2), PX_OK);

    /* Deleted after launches that kept the launch state (with its Vars resolved): the next
     * launch still sees the deletion, also once the Var's slot went to a new Var, and the
     * graph's other Var is left as it was. */
    px_var *t1 = px_var_new(e), *t2 = px_var_new(e);
    atomic_store(&ran_count, 0);
    ck_assert_int_eq(px_graph_begin(e), PX_OK);
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, &t1, 1, &t2, 1, PX_FN_NORMAL, 0, "t1-t2"),
        PX_OK);
    ck_assert_int_eq(px_graph_end(e, &g2), PX_OK);
    for (int k = 0; k < 3; ++k)
        ck_assert_int_eq(px_graph_launch(g2), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(atomic_load(&ran_count), 3);
    ck_assert_int_eq(px_var_delete(e, t1), PX_OK);
    ck_assert_int_eq(px_graph_launch(g2), PX_EINVAL);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    px_var *fresh[8];
    for (int k = 0; k < 8; ++k) /* one of them likely takes t1's slot */
        fresh[k] = px_var_new(e);
    ck_assert_int_eq(px_graph_launch(g2), PX_EINVAL);
    ck_assert_int_eq(atomic_load(&ran_count), 3);
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, NULL, 0, &t2, 1, PX_FN_NORMAL, 0, "on-t2"),
        PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, t2), PX_OK);
    ck_assert_int_eq(atomic_load(&ran_count), 4);
    ck_assert_int_eq(px_graph_destroy(g2), PX_OK);
    for (int k = 0; k < 8; ++k)
        ck_assert_int_eq(px_var_delete(e, fresh[k]), PX_OK);
    ck_assert_int_eq(px_var_delete(e, t2), PX_OK);

    ck_assert_int_eq(px_graph_destroy(g), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e2), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

START_TEST(test_destroy_with_queued_launches_defers_free)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *v = px_var_new(e), *w = px_var_new(e);
    atomic_store(&ran_count, 0);
    ck_assert_int_eq(px_graph_begin(e), PX_OK);
    for (int i = 0; i < 5; ++i)
        ck_assert_int_eq(
            px_engine_push_sync(e, count_fn, NULL, CPU, &v, 1, &w, 1, PX_FN_NORMAL, 0, "op"),
            PX_OK);
    px_graph *g = NULL;
    ck_assert_int_eq(px_graph_end(e, &g), PX_OK);
    /* Hold v with an async op completed later: every launch queues behind it. */
    async_slot slot = {NULL, 0};
    ck_assert_int_eq(
        px_engine_push_async(e, async_defer, &slot, CPU, NULL, 0, &v, 1, PX_FN_NORMAL, 0, "hold"),
        PX_OK);
    for (int i = 0; i < 10; ++i)
        ck_assert_int_eq(px_graph_launch(g), PX_OK);
    ck_assert_int_eq(px_graph_destroy(g), PX_OK);
    ck_assert_int_eq(px_graph_launch(g), PX_EINVAL); /* still held by its launches */
    ck_assert_int_eq(px_graph_destroy(g), PX_EINVAL);
    ck_assert_int_eq(atomic_load(&ran_count), 0);
    while (!atomic_load_explicit(&slot.ready, memory_order_acquire))
        sleep_ms(1);
    px_on_complete_call(slot.done, PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(atomic_load(&ran_count), 50);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* ---- review defects: an engine destroyed first, a push that fails while recording ------- */

START_TEST(test_graph_destroyed_after_its_engine_is_safe)
{
    enum { N = 100 };
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_space *s = px_default_space();
    px_var *vx = px_var_new(e), *vy = px_var_new(e);
    double *x = calloc(N, sizeof *x);
    ck_assert_ptr_nonnull(x);
    atomic_store(&ran_count, 0);
    /* A kernel op's argument copy lives in the engine's pools until its cleanup runs. */
    ck_assert_int_eq(px_graph_begin(e), PX_OK);
    ck_assert_int_eq(
        px_engine_push_parallel_for_fn(e, s, "fill", px_range(0, N), fill_fn, x, NULL, 0, &vx, 1),
        PX_OK);
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, &vx, 1, &vy, 1, PX_FN_NORMAL, 0, "after"),
        PX_OK);
    px_graph *g = NULL, *never = NULL;
    ck_assert_int_eq(px_graph_end(e, &g), PX_OK);
    ck_assert_int_eq(px_graph_begin(e), PX_OK);
    ck_assert_int_eq(
        px_engine_push_parallel_for_fn(e, s, "fill", px_range(0, N), fill_fn, x, NULL, 0, &vy, 1),
        PX_OK);
    ck_assert_int_eq(px_graph_end(e, &never), PX_OK);
    /* Launches still queued when the engine goes: destroy waits for them. */
    for (int i = 0; i < 3; ++i)
        ck_assert_int_eq(px_graph_launch(g), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_int_eq(atomic_load(&ran_count), 3);
    ck_assert_double_eq(x[N - 1], (double)(N - 1));
    size_t n_ops = 0;
    ck_assert_int_eq(px_graph_stats(g, &n_ops, NULL), PX_OK);
    ck_assert_uint_eq(n_ops, 2);
    ck_assert_int_eq(px_graph_launch(g), PX_EINVAL); /* its engine is gone */
    ck_assert_int_eq(px_graph_destroy(g), PX_OK);
    ck_assert_int_eq(px_graph_destroy(never), PX_OK);
    free(x);
}
END_TEST

START_TEST(test_failed_push_while_recording_leaves_no_var_in_graph)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_engine *e2 = px_engine_create(kind_under_test(), 1);
    px_var *a = px_var_new(e), *b = px_var_new(e), *foreign = px_var_new(e2);
    atomic_store(&ran_count, 0);
    ck_assert_int_eq(px_graph_begin(e), PX_OK);
    /* Var a resolves before the foreign write fails the push. */
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, &a, 1, &foreign, 1, PX_FN_NORMAL, 0, "bad"),
        PX_EINVAL);
    ck_assert_int_eq(
        px_engine_push_sync(e, count_fn, NULL, CPU, NULL, 0, &b, 1, PX_FN_NORMAL, 0, "on-b"),
        PX_OK);
    px_graph *g = NULL;
    ck_assert_int_eq(px_graph_end(e, &g), PX_OK);
    size_t n_ops = 0;
    ck_assert_int_eq(px_graph_stats(g, &n_ops, NULL), PX_OK);
    ck_assert_uint_eq(n_ops, 1);
    /* Hold a: a launch that still named it would queue behind the hold and never run. */
    async_slot slot = {NULL, 0};
    ck_assert_int_eq(
        px_engine_push_async(e, async_defer, &slot, CPU, NULL, 0, &a, 1, PX_FN_NORMAL, 0, "hold"),
        PX_OK);
    ck_assert_int_eq(px_graph_launch(g), PX_OK);
    for (int ms = 0; ms < 20000 && atomic_load(&ran_count) == 0; ++ms)
        sleep_ms(1);
    ck_assert_int_eq(atomic_load(&ran_count), 1);
    while (!atomic_load_explicit(&slot.ready, memory_order_acquire))
        sleep_ms(1);
    px_on_complete_call(slot.done, PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(px_graph_destroy(g), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e2), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* ---- launches from several threads -------------------------------------------------------- */

typedef struct launcher {
    px_graph *g;
    int n, st;
} launcher;

static void *launch_thread(void *arg)
{
    launcher *l = arg;
    for (int i = 0; i < l->n && l->st == PX_OK; ++i)
        l->st = px_graph_launch(l->g);
    return NULL;
}

START_TEST(test_launch_from_several_threads)
{
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *v = px_var_new(e), *w = px_var_new(e);
    int x = 0;
    atomic_int reads;
    atomic_init(&reads, 0);
    ck_assert_int_eq(px_graph_begin(e), PX_OK);
    ck_assert_int_eq(px_engine_push_sync(e, incr_fn, &x, CPU, NULL, 0, &w, 1, PX_FN_NORMAL, 0, "w"),
                     PX_OK);
    px_graph *gw = NULL;
    ck_assert_int_eq(px_graph_end(e, &gw), PX_OK);
    ck_assert_int_eq(px_graph_begin(e), PX_OK);
    ck_assert_int_eq(
        px_engine_push_sync(e, read_count_fn, &reads, CPU, &v, 1, NULL, 0, PX_FN_NORMAL, 0, "r"),
        PX_OK);
    px_graph *gr = NULL;
    ck_assert_int_eq(px_graph_end(e, &gr), PX_OK);
    pthread_t th[4];
    launcher l[4];
    for (int i = 0; i < 4; ++i) {
        l[i] = (launcher){i % 2 ? gr : gw, 200, PX_OK};
        ck_assert_int_eq(pthread_create(&th[i], NULL, launch_thread, &l[i]), 0);
    }
    for (int i = 0; i < 4; ++i) {
        pthread_join(th[i], NULL);
        ck_assert_int_eq(l[i].st, PX_OK);
    }
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(x, 400);
    ck_assert_int_eq(atomic_load(&reads), 400);
    ck_assert_int_eq(px_graph_destroy(gw), PX_OK);
    ck_assert_int_eq(px_graph_destroy(gr), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

/* ---- a launch holds its Vars like one op ----------------------------------------------- */

typedef struct gate {
    atomic_int open;
    atomic_int timed_out;
} gate;

/* Waits (at most about 10 s) until the gate opens. */
static int gate_wait_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    gate *gt = arg;
    struct timespec ms = {0, 1000000};
    for (int i = 0; !atomic_load(&gt->open); ++i) {
        if (i >= 10000) {
            atomic_store(&gt->timed_out, 1);
            break;
        }
        nanosleep(&ms, NULL);
    }
    return PX_OK;
}

typedef struct var_waiter {
    px_engine *e;
    px_var *v;
    int st;
    atomic_int returned;
} var_waiter;

static void *wait_var_thread(void *arg)
{
    var_waiter *w = arg;
    w->st = px_engine_wait_for_var(w->e, w->v);
    atomic_store(&w->returned, 1);
    return NULL;
}

START_TEST(test_waiter_on_graph_var_waits_for_whole_launch)
{
    /* The naive engine runs a launch's ops inside its push: the gate could not open. */
    if (kind_under_test() == PX_ENGINE_NAIVE)
        return;
    px_engine *e = px_engine_create(kind_under_test(), 2);
    px_var *va = px_var_new(e), *vb = px_var_new(e);
    gate gt;
    atomic_init(&gt.open, 0);
    atomic_init(&gt.timed_out, 0);
    /* a fails writing va at once; the gate op on vb keeps the launch running. */
    ck_assert_int_eq(px_graph_begin(e), PX_OK);
    ck_assert_int_eq(px_engine_push_sync(e, fail_fn, (void *)(intptr_t)PX_EUSER, CPU, NULL, 0, &va,
                                         1, PX_FN_NORMAL, 0, "fails-a"),
                     PX_OK);
    ck_assert_int_eq(
        px_engine_push_sync(e, gate_wait_fn, &gt, CPU, NULL, 0, &vb, 1, PX_FN_NORMAL, 0, "gate"),
        PX_OK);
    px_graph *g = NULL;
    ck_assert_int_eq(px_graph_end(e, &g), PX_OK);
    for (int launch = 0; launch < 2; ++launch) {
        atomic_store(&gt.open, 0);
        ck_assert_int_eq(px_graph_launch(g), PX_OK);
        var_waiter w = {e, va, PX_OK, 0};
        pthread_t th;
        ck_assert_int_eq(pthread_create(&th, NULL, wait_var_thread, &w), 0);
        /* The launch holds va like one op (parex/graph.h): the waiter returns only after the
         * gate op, with a's failure, marked when the launch ends. */
        struct timespec pause = {0, 20000000};
        nanosleep(&pause, NULL);
        ck_assert_int_eq(atomic_load(&w.returned), 0);
        atomic_store(&gt.open, 1);
        pthread_join(th, NULL);
        ck_assert_int_eq(w.st, PX_EUSER);
        ck_assert_int_eq(atomic_load(&gt.timed_out), 0);
        ck_assert_int_eq(px_engine_wait_for_var(e, vb), PX_OK);
        (void)px_engine_wait_for_all(e);
    }
    ck_assert_int_eq(px_graph_destroy(g), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

static Suite *graph_suite(void)
{
    Suite *s = suite_create("graph");
    TCase *tc = tcase_create("graph");
    tcase_add_checked_fixture(tc, px_test_setup, px_test_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_random_dag_launch_equals_serial_order);
    tcase_add_test(tc, test_launches_interleave_with_pushes_in_order);
    tcase_add_test(tc, test_kernel_op_recorded_runs_each_launch);
    tcase_add_test(tc, test_first_launch_allocates_nothing);
    tcase_add_test(tc, test_failure_inside_graph_skips_dependents_and_marks_vars);
    tcase_add_test(tc, test_launch_failures_do_not_leak_into_next_launch);
    tcase_add_test(tc, test_misuse_gives_clear_statuses);
    tcase_add_test(tc, test_destroy_with_queued_launches_defers_free);
    tcase_add_test(tc, test_launch_from_several_threads);
    tcase_add_test(tc, test_graph_destroyed_after_its_engine_is_safe);
    tcase_add_test(tc, test_failed_push_while_recording_leaves_no_var_in_graph);
    tcase_add_test(tc, test_waiter_on_graph_var_waits_for_whole_launch);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(graph_suite());
}
