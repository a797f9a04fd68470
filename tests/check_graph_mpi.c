/* tests/check_graph_mpi.c - MPI ops recorded in engine graphs (parex/graph.h, parex/mpi.h),
 * run under mpirun with 2 and 3 ranks (tests/graph.cmake).
 *
 * A plain MPI program like tests/check_mpi.c (Check's fork per test does not mix with MPI).
 * Each launch of a graph posts its own requests: a ring exchange recorded once is launched
 * 100 times with its results checked after every launch, then 100 times back to back; a
 * received buffer feeds a kernel op inside the graph; an allreduce in a graph sums a value
 * that changes per launch; a truncated receive inside a graph fails its op, the op after it
 * and their Vars, and the next launch with a fitting message succeeds; a graph recorded before
 * MPI_Finalize and launched after it fails its MPI op with PX_EMPI. The program exits
 * nonzero when any check on any rank failed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parex.h"

#define MPI_CHECK_PROG "check_graph_mpi"
#include "mpi_check.h"

static const px_context cpu = {PX_DEV_CPU, 0};

/* ---- a ring exchange recorded once, launched 100 times ------------------------------------ */

#define RING_N        512
#define RING_LAUNCHES 100

/* The fill and verify ops count their own runs: run k fills (checks) the values of launch k. */
typedef struct {
    int *buf;
    int who;
    int k;
} ring_args;

static int ring_value(int who, int k, int i)
{
    return who * 1000000 + k * 1000 + i;
}

static int fill_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    ring_args *a = arg;
    for (int i = 0; i < RING_N; ++i)
        a->buf[i] = ring_value(a->who, a->k, i);
    a->k++;
    return PX_OK;
}

typedef struct {
    ring_args r;
    int bad;
} verify_args;

static int verify_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    verify_args *a = arg;
    for (int i = 0; i < RING_N; ++i)
        a->bad += a->r.buf[i] != ring_value(a->r.who, a->r.k, i);
    a->r.k++;
    return PX_OK;
}

/* fill (writes vs) -> isend (reads vs) to the right; irecv (writes vr) from the left ->
 * verify (reads vr). Launches are ordered by vs and vr, each posts a send and a receive. */
static void test_ring_graph_launched_100_times(px_engine *e)
{
    int *sbuf = calloc(RING_N, sizeof *sbuf), *rbuf = calloc(RING_N, sizeof *rbuf);
    ring_args fa = {sbuf, rank, 0};
    verify_args va = {{rbuf, left(), 0}, 0};
    px_var *vs = px_var_new(e), *vr = px_var_new(e);
    px_graph *g = NULL;
    CHECK_RC(px_graph_begin(e), PX_OK);
    CHECK_RC(px_engine_push_sync(e, fill_fn, &fa, cpu, NULL, 0, &vs, 1, PX_FN_NORMAL, 0, "fill"),
             PX_OK);
    CHECK_RC(px_engine_push_mpi_isend(e, sbuf, RING_N, MPI_INT, right(), 5, MPI_COMM_WORLD, vs),
             PX_OK);
    CHECK_RC(px_engine_push_mpi_irecv(e, rbuf, RING_N, MPI_INT, left(), 5, MPI_COMM_WORLD, vr),
             PX_OK);
    CHECK_RC(
        px_engine_push_sync(e, verify_fn, &va, cpu, &vr, 1, NULL, 0, PX_FN_NORMAL, 0, "verify"),
        PX_OK);
    CHECK_RC(px_graph_end(e, &g), PX_OK);
    CHECK(fa.k == 0 && va.r.k == 0); /* recorded, nothing ran or was posted */
    /* One launch at a time, the received buffer checked on the host after each. */
    for (int k = 0; k < RING_LAUNCHES; ++k) {
        CHECK_RC(px_graph_launch(g), PX_OK);
        CHECK_RC(px_engine_wait_for_var(e, vr), PX_OK);
        int bad = 0;
        for (int i = 0; i < RING_N; ++i)
            bad += rbuf[i] != ring_value(left(), k, i);
        CHECK(bad == 0);
    }
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    CHECK(fa.k == RING_LAUNCHES && va.r.k == RING_LAUNCHES);
    /* Back to back: queued launches each post their own requests. */
    for (int k = 0; k < RING_LAUNCHES; ++k)
        CHECK_RC(px_graph_launch(g), PX_OK);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    CHECK(fa.k == 2 * RING_LAUNCHES && va.r.k == 2 * RING_LAUNCHES);
    CHECK(va.bad == 0);
    CHECK_RC(px_graph_destroy(g), PX_OK);
    px_var_delete(e, vs);
    px_var_delete(e, vr);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    free(sbuf);
    free(rbuf);
}

/* ---- sends only reading their Var: launches overlap ---------------------------------------- */

#define SEND_LAUNCHES 50

/* A graph of one send of @count ints that only reads its Var: its queued launches are not
 * ordered, so up to 50 sends of it are outstanding at once, each with its own request. The
 * receiving graph writes its Var, so its launches are ordered and each receives one message.
 * One int goes eagerly (a send can complete at its post, except where the library's tests
 * yield, on an oversubscribed node); 16,384 (64 KiB, past Open MPI's shared-memory eager limit
 * of 4 KiB) wait for their receives, so the launches' posts find the template's reusable copy
 * taken and allocate their own (core/engine/mpi.c, post_msg: 49 of 50 did in a counting build;
 * the copy is internal, so the test checks the values, under the sanitizers in CI). */
static void overlapping_sends(px_engine *e, int count, int tag)
{
    int *sval = malloc((size_t)count * sizeof *sval), *rval = malloc((size_t)count * sizeof *rval);
    CHECK(sval && rval);
    if (!sval || !rval) {
        free(sval);
        free(rval);
        return;
    }
    for (int i = 0; i < count; ++i)
        sval[i] = 100 + rank + i;
    int bad = 0;
    px_var *vs = px_var_new(e), *vr = px_var_new(e);
    px_graph *gs = NULL, *gr = NULL;
    CHECK_RC(px_graph_begin(e), PX_OK);
    CHECK_RC(px_engine_push_mpi_isend(e, sval, count, MPI_INT, right(), tag, MPI_COMM_WORLD, vs),
             PX_OK);
    CHECK_RC(px_graph_end(e, &gs), PX_OK);
    CHECK_RC(px_graph_begin(e), PX_OK);
    CHECK_RC(px_engine_push_mpi_irecv(e, rval, count, MPI_INT, left(), tag, MPI_COMM_WORLD, vr),
             PX_OK);
    CHECK_RC(px_graph_end(e, &gr), PX_OK);
    for (int k = 0; k < SEND_LAUNCHES; ++k)
        CHECK_RC(px_graph_launch(gs), PX_OK);
    for (int k = 0; k < SEND_LAUNCHES; ++k) {
        for (int i = 0; i < count; ++i)
            rval[i] = -1;
        CHECK_RC(px_graph_launch(gr), PX_OK);
        CHECK_RC(px_engine_wait_for_var(e, vr), PX_OK);
        for (int i = 0; i < count; ++i)
            bad += rval[i] != 100 + left() + i;
    }
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    CHECK(bad == 0);
    CHECK_RC(px_graph_destroy(gs), PX_OK);
    CHECK_RC(px_graph_destroy(gr), PX_OK);
    px_var_delete(e, vs);
    px_var_delete(e, vr);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    free(sval);
    free(rval);
}

static void test_overlapping_launches_post_own_requests(px_engine *e)
{
    overlapping_sends(e, 1, 6);
}

static void test_overlapping_large_sends_post_own_copies(px_engine *e)
{
    overlapping_sends(e, 16384, 16);
}

/* ---- a received buffer feeds a kernel op -------------------------------------------------- */

#define KERNEL_N        4096
#define KERNEL_LAUNCHES 10

typedef struct {
    const double *in;
    double *out;
} twice_args;

static void twice_fn(int64_t b, int64_t end, void *ctx)
{
    twice_args *a = ctx;
    for (int64_t i = b; i < end; ++i)
        a->out[i] = 2.0 * a->in[i];
}

typedef struct {
    double *src;
    int k;
} src_args;

static int src_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    src_args *a = arg;
    for (int i = 0; i < KERNEL_N; ++i)
        a->src[i] = rank * 1e6 + a->k * 1e4 + i;
    a->k++;
    return PX_OK;
}

/* irecv (writes vin) -> kernel (reads vin, writes vout); src (writes vsrc) -> isend (reads
 * vsrc). The kernel can only start once this launch's message arrived. */
static void test_graph_receive_feeds_kernel_op(px_engine *e)
{
    px_space *threads = px_space_by_name("threads");
    if (!threads)
        threads = px_space_by_name("serial");
    double *in = calloc(KERNEL_N, sizeof *in), *out = calloc(KERNEL_N, sizeof *out);
    double *src = calloc(KERNEL_N, sizeof *src);
    src_args sa = {src, 0};
    twice_args ta = {in, out};
    px_var *vin = px_var_new(e), *vout = px_var_new(e), *vsrc = px_var_new(e);
    px_graph *g = NULL;
    CHECK_RC(px_graph_begin(e), PX_OK);
    CHECK_RC(px_engine_push_mpi_irecv(e, in, KERNEL_N, MPI_DOUBLE, left(), 11, MPI_COMM_WORLD, vin),
             PX_OK);
    CHECK_RC(px_engine_push_parallel_for_fn(e, threads, "twice", px_range(0, KERNEL_N), twice_fn,
                                            &ta, &vin, 1, &vout, 1),
             PX_OK);
    CHECK_RC(px_engine_push_sync(e, src_fn, &sa, cpu, NULL, 0, &vsrc, 1, PX_FN_NORMAL, 0, "src"),
             PX_OK);
    CHECK_RC(
        px_engine_push_mpi_isend(e, src, KERNEL_N, MPI_DOUBLE, right(), 11, MPI_COMM_WORLD, vsrc),
        PX_OK);
    CHECK_RC(px_graph_end(e, &g), PX_OK);
    for (int k = 0; k < KERNEL_LAUNCHES; ++k) {
        CHECK_RC(px_graph_launch(g), PX_OK);
        CHECK_RC(px_engine_wait_for_var(e, vout), PX_OK);
        int bad = 0;
        for (int i = 0; i < KERNEL_N; ++i)
            bad += out[i] != 2.0 * (left() * 1e6 + k * 1e4 + i);
        CHECK(bad == 0);
    }
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    CHECK_RC(px_graph_destroy(g), PX_OK);
    px_var_delete(e, vin);
    px_var_delete(e, vout);
    px_var_delete(e, vsrc);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    free(in);
    free(out);
    free(src);
}

/* ---- an allreduce in a graph -------------------------------------------------------------- */

typedef struct {
    double *v;
    int k;
} contrib_args;

static int contrib_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    contrib_args *a = arg;
    *a->v = rank + 10.0 * a->k;
    a->k++;
    return PX_OK;
}

/* Push (or record) the op that writes this launch's contribution into *ca->v under @vs, then
 * the allreduce of it into @recv under @vr. */
static void push_contrib_allreduce(px_engine *e, contrib_args *ca, double *recv, px_var *vs,
                                   px_var *vr)
{
    CHECK_RC(
        px_engine_push_sync(e, contrib_fn, ca, cpu, NULL, 0, &vs, 1, PX_FN_NORMAL, 0, "contrib"),
        PX_OK);
    CHECK_RC(px_engine_push_mpi_allreduce(e, ca->v, recv, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                                          vs, vr),
             PX_OK);
}

static void test_graph_allreduce_sums_each_launch(px_engine *e)
{
    double send = 0, recv = 0;
    contrib_args ca = {&send, 0};
    px_var *vs = px_var_new(e), *vr = px_var_new(e);
    px_graph *g = NULL;
    CHECK_RC(px_graph_begin(e), PX_OK);
    push_contrib_allreduce(e, &ca, &recv, vs, vr);
    CHECK_RC(px_graph_end(e, &g), PX_OK);
    double ranks_sum = nranks * (nranks - 1) / 2.0;
    for (int k = 0; k < 20; ++k) {
        CHECK_RC(px_graph_launch(g), PX_OK);
        CHECK_RC(px_engine_wait_for_var(e, vr), PX_OK);
        CHECK(recv == ranks_sum + 10.0 * k * nranks);
    }
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    CHECK_RC(px_graph_destroy(g), PX_OK);
    px_var_delete(e, vs);
    px_var_delete(e, vr);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
}

/* ---- recorded messages post through persistent requests ------------------------------------ */

static int n_persist_logs;

static void count_persist_logs(px_log_level level, const char *msg, void *user)
{
    (void)level;
    (void)user;
    n_persist_logs += strstr(msg, "a persistent request") != NULL;
}

/* A graph of a send, a receive and an allreduce that writes a Var, launched 10 times with new
 * values each time: the receive makes one persistent request, at the first launch, the send
 * none (an MPI_Isend each launch, parex/mpi.h), and every launch moves its own values. The
 * allreduce makes none (persistent collectives are off by default), nor does one recorded with them
 * on that writes no Var, nor an unrecorded push; one recorded with them on (and a Var to write)
 * makes one, where the MPI has persistent collectives (else the setting is refused with PX_ENOSYS).
 */
static void test_recorded_messages_use_persistent_requests(px_engine *e)
{
    double send = 0, recv = 0, sum_nw = 0, sum_p = 0;
    int sval = 0, rval = -1;
    contrib_args ca = {&send, 0};
    px_var *vs = px_var_new(e), *vr = px_var_new(e), *vm = px_var_new(e), *vg = px_var_new(e);
    px_var *vp = px_var_new(e);
    px_graph *g = NULL, *gnw = NULL, *gp = NULL;
    CHECK_RC(px_graph_begin(e), PX_OK);
    push_contrib_allreduce(e, &ca, &recv, vs, vr);
    CHECK_RC(px_engine_push_mpi_isend(e, &sval, 1, MPI_INT, right(), 31, MPI_COMM_WORLD, vm),
             PX_OK);
    CHECK_RC(px_engine_push_mpi_irecv(e, &rval, 1, MPI_INT, left(), 31, MPI_COMM_WORLD, vg), PX_OK);
    CHECK_RC(px_graph_end(e, &g), PX_OK);
    int was = -1;
    const int rc_on = px_mpi_set_persistent_collectives(1, &was);
    CHECK(rc_on == PX_OK || rc_on == PX_ENOSYS);
    CHECK(rc_on != PX_OK || was == 0);  /* off by default */
    CHECK_RC(px_graph_begin(e), PX_OK); /* no Var to write: its launches are not ordered */
    CHECK_RC(px_engine_push_mpi_allreduce(e, &send, &sum_nw, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                                          vr, NULL),
             PX_OK);
    CHECK_RC(px_graph_end(e, &gnw), PX_OK);
    CHECK_RC(px_graph_begin(e), PX_OK);
    CHECK_RC(px_engine_push_mpi_allreduce(e, &send, &sum_p, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                                          vr, vp),
             PX_OK);
    CHECK_RC(px_graph_end(e, &gp), PX_OK);
    CHECK_RC(px_mpi_set_persistent_collectives(0, &was), PX_OK);
    CHECK(was == (rc_on == PX_OK));
    quiet(1);
    CHECK_RC(px_mpi_set_persistent_collectives(2, NULL), PX_EINVAL);
    quiet(0);
    px_log_level level = px_log_get_level();
    n_persist_logs = 0;
    px_log_set_handler(count_persist_logs, NULL);
    CHECK_RC(px_log_set_level(PX_LOG_DEBUG), PX_OK);
    double ranks_sum = nranks * (nranks - 1) / 2.0;
    int bad = 0;
    for (int k = 0; k < 10; ++k) {
        sval = 1000 * k + rank;
        CHECK_RC(px_graph_launch(g), PX_OK);
        CHECK_RC(px_engine_wait_for_all(e), PX_OK);
        bad += recv != ranks_sum + 10.0 * k * nranks || rval != 1000 * k + left();
        /* Two allreduces on one communicator that no Var orders: wait between them, so that
         * every rank posts them in the same order (parex/mpi.h). */
        CHECK_RC(px_graph_launch(gnw), PX_OK);
        CHECK_RC(px_engine_wait_for_all(e), PX_OK);
        CHECK_RC(px_graph_launch(gp), PX_OK);
        CHECK_RC(px_engine_wait_for_all(e), PX_OK);
        bad += sum_nw != recv || sum_p != recv;
    }
    /* Unrecorded: a nonblocking call each. */
    push_contrib_allreduce(e, &ca, &recv, vs, vr);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    CHECK_RC(px_log_set_level(level), PX_OK);
    px_log_set_handler(NULL, NULL);
    CHECK(bad == 0);
    CHECK(recv == ranks_sum + 100.0 * nranks);
    CHECK(n_persist_logs == (rc_on == PX_OK ? 2 : 1)); /* the receive (, gp's allreduce) */
    CHECK_RC(px_graph_destroy(g), PX_OK);
    CHECK_RC(px_graph_destroy(gnw), PX_OK);
    CHECK_RC(px_graph_destroy(gp), PX_OK);
    px_var_delete(e, vs);
    px_var_delete(e, vr);
    px_var_delete(e, vm);
    px_var_delete(e, vg);
    px_var_delete(e, vp);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
}

/* With persistent collectives off (the default), one rank may record the allreduces another
 * pushes: every launch posts MPI_Iallreduce, which matches the pushed ones. */
static void test_recorded_allreduce_matches_pushed_ones(px_engine *e)
{
    double send = 0, recv = 0;
    contrib_args ca = {&send, 0};
    px_var *vs = px_var_new(e), *vr = px_var_new(e);
    px_graph *g = NULL;
    if (rank == 0) {
        CHECK_RC(px_graph_begin(e), PX_OK);
        push_contrib_allreduce(e, &ca, &recv, vs, vr);
        CHECK_RC(px_graph_end(e, &g), PX_OK);
    }
    double ranks_sum = nranks * (nranks - 1) / 2.0;
    int bad = 0;
    for (int k = 0; k < 5; ++k) {
        if (rank == 0)
            CHECK_RC(px_graph_launch(g), PX_OK);
        else
            push_contrib_allreduce(e, &ca, &recv, vs, vr);
        CHECK_RC(px_engine_wait_for_var(e, vr), PX_OK);
        bad += recv != ranks_sum + 10.0 * k * nranks;
    }
    CHECK(bad == 0);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    if (g)
        CHECK_RC(px_graph_destroy(g), PX_OK);
    px_var_delete(e, vs);
    px_var_delete(e, vr);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
}

/* ---- a truncated receive inside a graph ----------------------------------------------------- */

static int mark_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    ++*(int *)arg;
    return PX_OK;
}

/* Graph: irecv of 4 ints (writes vr) -> mark (reads vr, writes vafter). An 8-int message fails
 * the receive with PX_EMPI, skips mark and fails both Vars; the next launch, fed a 4-int
 * message, succeeds (the failure was reported by the waits). */
static void test_graph_truncated_receive_fails_op_and_var(px_engine *e)
{
    int sbuf[8] = {1, 2, 3, 4, 5, 6, 7, 8}, rbuf[4] = {0};
    int ran = 0;
    px_var *vr = px_var_new(e), *vafter = px_var_new(e);
    px_graph *g = NULL;
    CHECK_RC(px_graph_begin(e), PX_OK);
    CHECK_RC(px_engine_push_mpi_irecv(e, rbuf, 4, MPI_INT, left(), 21, MPI_COMM_WORLD, vr), PX_OK);
    CHECK_RC(px_engine_push_sync(e, mark_fn, &ran, cpu, &vr, 1, &vafter, 1, PX_FN_NORMAL, 0,
                                 "after_truncated"),
             PX_OK);
    CHECK_RC(px_graph_end(e, &g), PX_OK);
    quiet(1);
    /* The message is sent before the receive is posted (see check_mpi.c: Open MPI's self
     * transport reports the truncation only then; between ranks both orders do). */
    CHECK_RC(px_engine_push_mpi_isend(e, sbuf, 8, MPI_INT, right(), 21, MPI_COMM_WORLD, NULL),
             PX_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    sleep_ms(20);
    CHECK_RC(px_graph_launch(g), PX_OK);
    CHECK_RC(px_engine_wait_for_var(e, vr), PX_EMPI);
    CHECK_RC(px_engine_wait_for_var(e, vafter), PX_EMPI);
    CHECK(ran == 0);
    CHECK_RC(px_engine_wait_for_all(e), PX_EMPI);
    CHECK(strstr(last_log, "mpi_irecv 16B from") != NULL);
    CHECK(strstr(last_log, "longer than the receive buffer") != NULL);
    quiet(0);
    MPI_Barrier(MPI_COMM_WORLD);
    /* A fitting message: the same graph runs through. */
    CHECK_RC(px_engine_push_mpi_isend(e, sbuf + 4, 4, MPI_INT, right(), 21, MPI_COMM_WORLD, NULL),
             PX_OK);
    CHECK_RC(px_graph_launch(g), PX_OK);
    CHECK_RC(px_engine_wait_for_var(e, vafter), PX_OK);
    CHECK(ran == 1);
    CHECK(rbuf[0] == 5 && rbuf[3] == 8);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    CHECK_RC(px_graph_destroy(g), PX_OK);
    px_var_delete(e, vr);
    px_var_delete(e, vafter);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- a recorded receive cancelled at its engine's destroy ----------------------------------- */

/* A recorded receive that no one sends to, launched on an engine of its own, which is then
 * destroyed with a short drain timeout: MPI cancels the started persistent request (valid and
 * inactive after it), the destroy returns, and the graph's destroy frees the request. */
static void test_recorded_receive_cancelled_at_engine_destroy(px_engine *e)
{
    (void)e;
    px_engine *own = px_engine_create(PX_ENGINE_PER_DEVICE, 1);
    CHECK(own != NULL);
    if (!own)
        return;
    int x = -1;
    px_var *v = px_var_new(own);
    px_graph *g = NULL;
    CHECK_RC(px_graph_begin(own), PX_OK);
    CHECK_RC(px_engine_push_mpi_irecv(own, &x, 1, MPI_INT, rank, 77, MPI_COMM_WORLD, v), PX_OK);
    CHECK_RC(px_graph_end(own, &g), PX_OK);
    CHECK_RC(px_graph_launch(g), PX_OK);
    CHECK_RC(px_mpi_set_drain_timeout_ms(100), PX_OK);
    quiet(1);
    CHECK_RC(px_engine_destroy(own), PX_OK);
    quiet(0);
    CHECK(n_cancel_logs >= 1);
    CHECK(x == -1);
    CHECK_RC(px_graph_destroy(g), PX_OK);
    CHECK_RC(px_mpi_set_drain_timeout_ms(10000), PX_OK); /* the default */
}

/* ---- recording checks the arguments at once ------------------------------------------------- */

static void test_bad_arguments_rejected_while_recording(px_engine *e)
{
    int x = 0;
    px_var *v = px_var_new(e);
    px_graph *g = NULL;
    quiet(1);
    CHECK_RC(px_graph_begin(e), PX_OK);
    CHECK_RC(px_engine_push_mpi_isend(e, &x, 1, MPI_INT, nranks, 0, MPI_COMM_WORLD, v), PX_EINVAL);
    CHECK_RC(px_engine_push_mpi_irecv(e, &x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, v), PX_EINVAL);
    CHECK_RC(px_engine_push_mpi_irecv(e, NULL, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, v), PX_EFAULT);
    CHECK_RC(px_graph_end(e, &g), PX_OK);
    quiet(0);
    size_t n_ops = 1, n_edges = 1;
    CHECK_RC(px_graph_stats(g, &n_ops, &n_edges), PX_OK);
    CHECK(n_ops == 0 && n_edges == 0); /* refused pushes leave nothing recorded */
    CHECK_RC(px_graph_destroy(g), PX_OK);
    px_var_delete(e, v);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
}

/* ---- a graph launched after px_mpi_finalize ------------------------------------------------- */

/* @g holds one receive (writing @v) recorded while MPI was up; MPI is finalized now: the launch's
 * op must fail with PX_EMPI (logged), never call MPI (which aborts the job after MPI_Finalize). */
static void test_graph_launched_after_mpi_finalize_fails_its_mpi_op(px_engine *e, px_graph *g,
                                                                    px_var *v)
{
    quiet(1);
    CHECK_RC(px_graph_launch(g), PX_OK);
    CHECK_RC(px_engine_wait_for_var(e, v), PX_EMPI);
    CHECK(strstr(last_log, "finalized") != NULL);
    quiet(0);
    CHECK_RC(px_engine_wait_for_all(e), PX_EMPI);
    CHECK_RC(px_graph_destroy(g), PX_OK);
    px_var_delete(e, v);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
}

int main(int argc, char **argv)
{
    px_engine *e = mpi_check_start(&argc, &argv);
    static const mpi_case tests[] = {
        {"ring_graph_launched_100_times", test_ring_graph_launched_100_times},
        {"overlapping_launches_post_own_requests", test_overlapping_launches_post_own_requests},
        {"overlapping_large_sends_post_own_copies", test_overlapping_large_sends_post_own_copies},
        {"graph_receive_feeds_kernel_op", test_graph_receive_feeds_kernel_op},
        {"graph_allreduce_sums_each_launch", test_graph_allreduce_sums_each_launch},
        {"recorded_messages_use_persistent_requests",
         test_recorded_messages_use_persistent_requests},
        {"recorded_allreduce_matches_pushed_ones", test_recorded_allreduce_matches_pushed_ones},
        {"graph_truncated_receive_fails_op_and_var", test_graph_truncated_receive_fails_op_and_var},
        {"recorded_receive_cancelled_at_engine_destroy",
         test_recorded_receive_cancelled_at_engine_destroy},
        {"bad_arguments_rejected_while_recording", test_bad_arguments_rejected_while_recording},
    };
    mpi_check_run(e, tests, sizeof tests / sizeof *tests, 44);
    /* Recorded while MPI is up, launched after px_mpi_finalize: checked last, after the
     * ranks' counts were summed (MPI is gone then), so it counts on this rank only. */
    int x = rank;
    px_var *vfin = px_var_new(e);
    px_graph *gfin = NULL;
    CHECK_RC(px_graph_begin(e), PX_OK);
    CHECK_RC(px_engine_push_mpi_irecv(e, &x, 1, MPI_INT, rank, 99, MPI_COMM_WORLD, vfin), PX_OK);
    CHECK_RC(px_graph_end(e, &gfin), PX_OK);
    /* Launched once: its receive's persistent request is alive at MPI_Finalize, whose hook
     * frees it; the graph's destroy after MPI_Finalize then leaves it alone. */
    int y = 7 + rank;
    CHECK_RC(px_engine_push_mpi_isend(e, &y, 1, MPI_INT, rank, 99, MPI_COMM_WORLD, NULL), PX_OK);
    CHECK_RC(px_graph_launch(gfin), PX_OK);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    CHECK(x == 7 + rank);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_RC(px_mpi_finalize(), PX_OK);
    if (rank == 0)
        printf("check_graph_mpi: %d rank(s), %d failed check(s)\n", nranks, total);
    int before = failures;
    test_graph_launched_after_mpi_finalize_fails_its_mpi_op(e, gfin, vfin);
    CHECK_RC(px_finalize(), PX_OK);
    if (failures != before)
        printf("graph_launched_after_mpi_finalize_fails_its_mpi_op FAILED on rank %d\n", rank);
    return total || failures != before ? 1 : 0;
}
