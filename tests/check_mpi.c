/* tests/check_mpi.c - MPI messages as engine ops (parex/mpi.h), run under mpirun with 1-4
 * ranks (tests/mpi.cmake).
 *
 * A plain MPI program rather than a Check suite: Check forks a child per test, and a forked
 * child of an MPI process cannot use MPI (Open MPI warns and may hang), while CK_FORK=no
 * would give Check nothing over this. Each test checks on every rank; the program exits
 * nonzero when any check on any rank failed, after printing the failing check with its rank.
 *
 * Modes: no argument runs the suite; `--level` checks that pushes fail with PX_EMPI before
 * MPI is initialized, when it was initialized below MPI_THREAD_MULTIPLE and after
 * MPI_Finalize; `--finalize` runs px_finalize with messages outstanding, then cycles of
 * px_initialize / px_finalize; `--pieces` (2 ranks, each bound to one core) checks that a
 * rank running a long kernel op progresses its messages between the kernel's pieces.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_EQUAL (the progress thread's mask) */
#include <dlfcn.h>
#include <mpi.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kptest.h"
#include "parex.h"

#define MPI_CHECK_PROG "check_mpi"
#include "mpi_check.h"
#include "proc_threads.h"

/* ---- ring exchange ordered by Vars -------------------------------------------------------- */

#define RING_N      256
#define RING_ROUNDS 30

typedef struct {
    int *buf;
    int value;
} fill_args;

static int fill_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    fill_args *a = arg;
    for (int i = 0; i < RING_N; ++i)
        a->buf[i] = a->value + i;
    return PX_OK;
}

typedef struct {
    const int *buf;
    int want;
    int *bad;
} verify_args;

static int verify_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    verify_args *a = arg;
    for (int i = 0; i < RING_N; ++i)
        if (a->buf[i] != a->want + i)
            ++*a->bad;
    return PX_OK;
}

/* Every round: an op fills the send buffer (writes vs), the send reads vs, the receive writes
 * vr, an op checks vr. The buffers are reused every round, so only the Var order keeps a fill
 * from overwriting a buffer MPI still sends and a receive from overwriting one not checked. */
static void test_ring_ordered_by_vars(px_engine *e)
{
    int sbuf[RING_N], rbuf[RING_N], bad = 0;
    fill_args fa[RING_ROUNDS];
    verify_args va[RING_ROUNDS];
    px_var *vs = px_var_new(e), *vr = px_var_new(e);
    px_context cpu = {PX_DEV_CPU, 0};
    for (int k = 0; k < RING_ROUNDS; ++k) {
        fa[k] = (fill_args){sbuf, rank * 100000 + k * 1000};
        va[k] = (verify_args){rbuf, left() * 100000 + k * 1000, &bad};
        CHECK_RC(px_engine_push_sync(e, fill_fn, &fa[k], cpu, NULL, 0, &vs, 1, PX_FN_NORMAL, 0,
                                     "ring_fill"),
                 PX_OK);
        CHECK_RC(px_engine_push_mpi_isend(e, sbuf, RING_N, MPI_INT, right(), 7, MPI_COMM_WORLD, vs),
                 PX_OK);
        CHECK_RC(px_engine_push_mpi_irecv(e, rbuf, RING_N, MPI_INT, left(), 7, MPI_COMM_WORLD, vr),
                 PX_OK);
        CHECK_RC(px_engine_push_sync(e, verify_fn, &va[k], cpu, &vr, 1, NULL, 0, PX_FN_NORMAL, 0,
                                     "ring_verify"),
                 PX_OK);
    }
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    CHECK(bad == 0);
    CHECK_RC(px_var_delete(e, vs), PX_OK);
    CHECK_RC(px_var_delete(e, vr), PX_OK);
}

/* ---- trace spans and Kokkos Tools sections --------------------------------------------------- */

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = buf ? fread(buf, 1, (size_t)n, f) : 0;
    fclose(f);
    if (buf)
        buf[got] = 0;
    return buf;
}

/* The ring under the trace recorder: each message is an "mpi" span named with its bytes, peer
 * and tag. With the kptest tool loaded (check_mpi_tools), also a profile section each. */
static void test_messages_traced_with_bytes_peer_tag(px_engine *e)
{
    CHECK_RC(px_trace_start(), PX_OK);
    test_ring_ordered_by_vars(e);
    CHECK_RC(px_trace_stop(), PX_OK);
    char path[256], want_send[64], want_recv[64];
    snprintf(path, sizeof path, "check_mpi_trace_%d_%d.json", (int)getpid(), rank);
    CHECK_RC(px_trace_dump(path), PX_OK);
    snprintf(want_send, sizeof want_send, "\"mpi_isend %dB to %d tag 7\"",
             (int)(RING_N * sizeof(int)), right());
    snprintf(want_recv, sizeof want_recv, "\"mpi_irecv %dB from %d tag 7\"",
             (int)(RING_N * sizeof(int)), left());
    char *text = read_file(path);
    CHECK(text != NULL);
    if (text) {
        CHECK(strstr(text, want_send) != NULL);
        CHECK(strstr(text, want_recv) != NULL);
        CHECK(strstr(text, "\"cat\":\"mpi\"") != NULL || strstr(text, "\"cat\": \"mpi\"") != NULL);
        /* Completed by the progress thread, by a waiting thread that tests the requests
         * itself (core/engine/calls.c), or, a send sent in its start, by the thread that
         * posted it: the spans are there either way. */
    }
    free(text);
    remove(path);
    CHECK_RC(px_trace_clear(), PX_OK);

    const char *tool = getenv("PX_TOOLS_LIBS");
    if (!tool || !tool[0])
        return;
    void *h = dlopen(tool, RTLD_NOW | RTLD_NOLOAD);
    CHECK(h != NULL);
    if (!h)
        return;
    void *sym = dlsym(h, "kptest_state");
    CHECK(sym != NULL);
    if (!sym)
        return;
    kpt_state_fn get;
    memcpy(&get, &sym, sizeof get);
    const kpt_state *st = get();
    int created = 0, sends = 0;
    for (int i = 0; i < st->n_events; ++i)
        if (st->events[i].kind == KPT_CREATE_SECTION) {
            ++created;
            sends += strncmp(st->events[i].name, want_send + 1, strlen(want_send) - 2) == 0;
        }
    CHECK(created >= 2 * RING_ROUNDS);
    CHECK(sends >= RING_ROUNDS);
    CHECK(st->count[KPT_START_SECTION] == st->count[KPT_STOP_SECTION]);
    CHECK(st->errors == 0);
    dlclose(h);
}

/* A message's name counts its bytes in 64 bits: one element of a 4 GiB type (to MPI_PROC_NULL,
 * which reads no buffer) is "4294967296B", not MPI_Type_size's MPI_UNDEFINED times the count;
 * a count past 2^63 bytes says the largest, instead of a signed overflow. */
static void test_message_name_counts_bytes_past_int(px_engine *e)
{
    MPI_Datatype big;
    MPI_Type_contiguous(1 << 29, MPI_DOUBLE, &big);
    MPI_Type_commit(&big);
    double x = 0;
    CHECK_RC(px_trace_start(), PX_OK);
    CHECK_RC(px_engine_push_mpi_isend(e, &x, 1, big, MPI_PROC_NULL, 3, MPI_COMM_WORLD, NULL),
             PX_OK);
    CHECK_RC(px_engine_push_mpi_irecv(e, &x, 2, big, MPI_PROC_NULL, 3, MPI_COMM_WORLD, NULL),
             PX_OK);
    /* 2^31 - 1 elements of 8 GiB: past 64 bits signed, the count saturates. */
    MPI_Datatype huge;
    MPI_Type_contiguous(2, big, &huge);
    MPI_Type_commit(&huge);
    CHECK_RC(
        px_engine_push_mpi_isend(e, &x, 2147483647, huge, MPI_PROC_NULL, 4, MPI_COMM_WORLD, NULL),
        PX_OK);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    CHECK_RC(px_trace_stop(), PX_OK);
    char path[256];
    snprintf(path, sizeof path, "check_mpi_bytes_%d_%d.json", (int)getpid(), rank);
    CHECK_RC(px_trace_dump(path), PX_OK);
    char *text = read_file(path);
    CHECK(text != NULL);
    if (text) {
        CHECK(strstr(text, "\"mpi_isend 4294967296B to ") != NULL);
        CHECK(strstr(text, "\"mpi_irecv 8589934592B from ") != NULL);
        CHECK(strstr(text, "\"mpi_isend 9223372036854775807B to ") != NULL);
    }
    free(text);
    remove(path);
    CHECK_RC(px_trace_clear(), PX_OK);
    MPI_Type_free(&huge);
    MPI_Type_free(&big);
}

/* ---- a received Var read by a kernel op -------------------------------------------------- */

#define KERNEL_N 4096

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

static void test_kernel_op_reads_received_var(px_engine *e)
{
    px_space *threads = px_space_by_name("threads");
    if (!threads)
        threads = px_space_by_name("serial");
    double *in = calloc(KERNEL_N, sizeof *in), *out = calloc(KERNEL_N, sizeof *out);
    double *src = malloc(KERNEL_N * sizeof *src);
    for (int i = 0; i < KERNEL_N; ++i)
        src[i] = rank * 1e6 + i;
    px_var *vin = px_var_new(e), *vout = px_var_new(e);
    twice_args ta = {in, out};
    /* The receive and the kernel are pushed before the send exists anywhere: the kernel can
     * only start once the message arrived. The sender waits a little so it really is late. */
    CHECK_RC(px_engine_push_mpi_irecv(e, in, KERNEL_N, MPI_DOUBLE, left(), 11, MPI_COMM_WORLD, vin),
             PX_OK);
    CHECK_RC(px_engine_push_parallel_for_fn(e, threads, "twice", px_range(0, KERNEL_N), twice_fn,
                                            &ta, &vin, 1, &vout, 1),
             PX_OK);
    sleep_ms(50);
    CHECK_RC(
        px_engine_push_mpi_isend(e, src, KERNEL_N, MPI_DOUBLE, right(), 11, MPI_COMM_WORLD, NULL),
        PX_OK);
    CHECK_RC(px_engine_wait_for_var(e, vout), PX_OK);
    int bad = 0;
    for (int i = 0; i < KERNEL_N; ++i)
        bad += out[i] != 2.0 * (left() * 1e6 + i);
    CHECK(bad == 0);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    px_var_delete(e, vin);
    px_var_delete(e, vout);
    free(in);
    free(out);
    free(src);
}

/* ---- many outstanding messages ------------------------------------------------------------ */

#define MANY 1000

static void test_many_outstanding(px_engine *e)
{
    int *rbuf = calloc(MANY, sizeof *rbuf), *sbuf = malloc(MANY * sizeof *sbuf);
    px_var **v = malloc(MANY * sizeof *v);
    for (int i = 0; i < MANY; ++i) {
        v[i] = px_var_new(e);
        CHECK_RC(px_engine_push_mpi_irecv(e, &rbuf[i], 1, MPI_INT, left(), i, MPI_COMM_WORLD, v[i]),
                 PX_OK);
    }
    /* Sends in reverse tag order: every receive is outstanding until its tag arrives. */
    for (int i = MANY - 1; i >= 0; --i) {
        sbuf[i] = rank * MANY + i;
        CHECK_RC(
            px_engine_push_mpi_isend(e, &sbuf[i], 1, MPI_INT, right(), i, MPI_COMM_WORLD, NULL),
            PX_OK);
    }
    int bad = 0;
    for (int i = 0; i < MANY; ++i) {
        CHECK_RC(px_engine_wait_for_var(e, v[i]), PX_OK);
        bad += rbuf[i] != left() * MANY + i;
        px_var_delete(e, v[i]);
    }
    CHECK(bad == 0);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    free(rbuf);
    free(sbuf);
    free(v);
}

/* ---- allreduce ------------------------------------------------------------------------------ */

typedef struct {
    long *x;
    long v;
} set_args;

static int set_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    set_args *a = arg;
    *a->x = a->v;
    return PX_OK;
}

static void test_allreduce_depends_on_rank_count(px_engine *e)
{
    enum { ROUNDS = 10 };
    long mine[ROUNDS], sum[ROUNDS];
    set_args sa[ROUNDS];
    px_var *vin = px_var_new(e), *vsum = px_var_new(e);
    px_context cpu = {PX_DEV_CPU, 0};
    for (int k = 0; k < ROUNDS; ++k) {
        sum[k] = -1;
        sa[k] = (set_args){&mine[k], (long)rank * (k + 1)};
        CHECK_RC(
            px_engine_push_sync(e, set_fn, &sa[k], cpu, NULL, 0, &vin, 1, PX_FN_NORMAL, 0, "set"),
            PX_OK);
        /* vsum orders successive allreduces on MPI_COMM_WORLD (collective order). */
        CHECK_RC(px_engine_push_mpi_allreduce(e, &mine[k], &sum[k], 1, MPI_LONG, MPI_SUM,
                                              MPI_COMM_WORLD, vin, vsum),
                 PX_OK);
    }
    CHECK_RC(px_engine_wait_for_var(e, vsum), PX_OK);
    for (int k = 0; k < ROUNDS; ++k)
        CHECK(sum[k] == (long)nranks * (nranks - 1) / 2 * (k + 1));
    /* In place. */
    double x = rank + 1.0;
    CHECK_RC(px_engine_push_mpi_allreduce(e, MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX,
                                          MPI_COMM_WORLD, NULL, vsum),
             PX_OK);
    CHECK_RC(px_engine_wait_for_var(e, vsum), PX_OK);
    CHECK(x == (double)nranks);
    px_var_delete(e, vin);
    px_var_delete(e, vsum);
}

/* ---- truncated receive ------------------------------------------------------------------- */

static int mark_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    *(int *)arg = 1;
    return PX_OK;
}

static void test_truncated_receive_fails_op_and_var(px_engine *e)
{
    int sbuf[8] = {1, 2, 3, 4, 5, 6, 7, 8}, rbuf[4] = {0};
    int ran = 0;
    px_var *vr = px_var_new(e), *vafter = px_var_new(e);
    px_context cpu = {PX_DEV_CPU, 0};
    quiet(1);
    /* The send goes first and the ranks meet before the receive is posted: Open MPI 4's self
     * transport (1 rank sending to itself) reports no MPI_ERR_TRUNCATE for a receive that was
     * posted before its message (its status says 4 elements, no error), but does for one
     * posted after. Between ranks both orders report it. */
    CHECK_RC(px_engine_push_mpi_isend(e, sbuf, 8, MPI_INT, right(), 21, MPI_COMM_WORLD, NULL),
             PX_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    sleep_ms(20);
    CHECK_RC(px_engine_push_mpi_irecv(e, rbuf, 4, MPI_INT, left(), 21, MPI_COMM_WORLD, vr), PX_OK);
    /* Reads the failed Var: skipped, its written Var inherits the failure. */
    CHECK_RC(px_engine_push_sync(e, mark_fn, &ran, cpu, &vr, 1, &vafter, 1, PX_FN_NORMAL, 0,
                                 "after_truncated"),
             PX_OK);
    CHECK_RC(px_engine_wait_for_var(e, vr), PX_EMPI);
    CHECK_RC(px_engine_wait_for_var(e, vafter), PX_EMPI);
    CHECK(ran == 0);
    CHECK_RC(px_engine_wait_for_all(e), PX_EMPI);
    CHECK(strstr(last_log, "mpi_irecv 16B from") != NULL);
    CHECK(strstr(last_log, "longer than the receive buffer") != NULL);
    quiet(0);
    px_var_delete(e, vr);
    px_var_delete(e, vafter);
    /* The ranks leave together, so no rank's later test traffic meets this one's. */
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- bad arguments ------------------------------------------------------------------------ */

static void test_bad_arguments_rejected(px_engine *e)
{
    int b[4];
    quiet(1);
    CHECK_RC(px_engine_push_mpi_isend(e, b, -1, MPI_INT, right(), 0, MPI_COMM_WORLD, NULL),
             PX_EINVAL);
    CHECK_RC(px_engine_push_mpi_isend(e, NULL, 4, MPI_INT, right(), 0, MPI_COMM_WORLD, NULL),
             PX_EFAULT);
    CHECK_RC(px_engine_push_mpi_isend(e, b, 4, MPI_INT, nranks, 0, MPI_COMM_WORLD, NULL),
             PX_EINVAL);
    CHECK_RC(px_engine_push_mpi_isend(e, b, 4, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, NULL),
             PX_EINVAL);
    CHECK_RC(px_engine_push_mpi_isend(e, b, 4, MPI_INT, right(), -3, MPI_COMM_WORLD, NULL),
             PX_EINVAL);
    CHECK_RC(px_engine_push_mpi_isend(e, b, 4, MPI_DATATYPE_NULL, right(), 0, MPI_COMM_WORLD, NULL),
             PX_EINVAL);
    CHECK_RC(px_engine_push_mpi_irecv(e, b, 4, MPI_INT, left(), 0, MPI_COMM_NULL, NULL), PX_EINVAL);
    CHECK_RC(px_engine_push_mpi_irecv(e, b, 4, MPI_INT, -7, 0, MPI_COMM_WORLD, NULL), PX_EINVAL);
    CHECK_RC(
        px_engine_push_mpi_allreduce(e, b, b, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD, NULL, NULL),
        PX_EINVAL);
    CHECK_RC(
        px_engine_push_mpi_allreduce(e, NULL, b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, NULL, NULL),
        PX_EFAULT);
    CHECK(px_engine_push_mpi_isend(NULL, b, 4, MPI_INT, right(), 0, MPI_COMM_WORLD, NULL) != PX_OK);
    CHECK_RC(px_mpi_set_drain_timeout_ms(-1), PX_EINVAL);
    CHECK_RC(px_mpi_set_drain_timeout_ms(3600001), PX_EINVAL);
    CHECK(n_logs >= 13);
    quiet(0);
    /* PROC_NULL peers complete at once. */
    px_var *v = px_var_new(e);
    CHECK_RC(px_engine_push_mpi_irecv(e, b, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, v),
             PX_OK);
    CHECK_RC(px_engine_push_mpi_isend(e, b, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, v),
             PX_OK);
    CHECK_RC(px_engine_wait_for_var(e, v), PX_OK);
    px_var_delete(e, v);
}

/* A push refused for a bad peer, tag or operation checks before it touches MPI state: the
 * communicator keeps the error handler its owner gave it (the engine sets MPI_ERRORS_RETURN
 * only on communicators it posts messages on). */
static void test_refused_push_keeps_errhandler(px_engine *e)
{
    int b[4];
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
    quiet(1);
    CHECK_RC(px_engine_push_mpi_isend(e, b, 4, MPI_INT, nranks, 0, comm, NULL), PX_EINVAL);
    CHECK_RC(px_engine_push_mpi_isend(e, b, 4, MPI_INT, right(), -3, comm, NULL), PX_EINVAL);
    CHECK_RC(px_engine_push_mpi_irecv(e, b, 4, MPI_INT, -7, 0, comm, NULL), PX_EINVAL);
    CHECK_RC(px_engine_push_mpi_allreduce(e, b, b, 1, MPI_INT, MPI_OP_NULL, comm, NULL, NULL),
             PX_EINVAL);
    CHECK_RC(px_engine_push_mpi_allreduce(e, NULL, b, 1, MPI_INT, MPI_SUM, comm, NULL, NULL),
             PX_EFAULT);
    quiet(0);
    MPI_Errhandler h;
    MPI_Comm_get_errhandler(comm, &h);
    CHECK(h == MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&h);
    /* A push that is accepted does set it. */
    px_var *v = px_var_new(e);
    CHECK_RC(px_engine_push_mpi_irecv(e, b, 4, MPI_INT, MPI_PROC_NULL, 0, comm, v), PX_OK);
    CHECK_RC(px_engine_wait_for_var(e, v), PX_OK);
    MPI_Comm_get_errhandler(comm, &h);
    CHECK(h == MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&h);
    px_var_delete(e, v);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    MPI_Comm_free(&comm);
}

/* ---- destroy with messages outstanding ------------------------------------------------------ */

/* A receive whose send is posted late is waited for: destroy returns once it arrived. */
static void test_destroy_waits_for_late_message(void)
{
    px_engine *e = px_engine_create(PX_ENGINE_PER_DEVICE, 1);
    CHECK(e != NULL);
    int r = -1, s = rank;
    CHECK_RC(px_engine_push_mpi_irecv(e, &r, 1, MPI_INT, left(), 31, MPI_COMM_WORLD, NULL), PX_OK);
    /* Every rank posts its receive before any rank sends (barrier), and sends late. */
    MPI_Barrier(MPI_COMM_WORLD);
    sleep_ms(200);
    CHECK_RC(px_engine_push_mpi_isend(e, &s, 1, MPI_INT, right(), 31, MPI_COMM_WORLD, NULL), PX_OK);
    CHECK_RC(px_engine_destroy(e), PX_OK);
    CHECK(r == left());
    MPI_Barrier(MPI_COMM_WORLD);
}

/* A receive that never matches is cancelled after the drain timeout: destroy never hangs, and
 * while it waits no thread of the rank spins (the progress thread sleeps between polls while
 * an engine is closing, as at any other time: no core at 100 % for up to 10 s). */
static void test_destroy_cancels_unmatched_after_timeout_without_spinning(void)
{
    px_engine *e = px_engine_create(PX_ENGINE_PER_DEVICE, 1);
    CHECK(e != NULL);
    int r = -1;
    CHECK_RC(px_mpi_set_drain_timeout_ms(300), PX_OK);
    CHECK_RC(px_engine_push_mpi_irecv(e, &r, 1, MPI_INT, left(), 4242, MPI_COMM_WORLD, NULL),
             PX_OK);
    sleep_ms(20); /* the receive is posted and the progress thread's spin budget spent */
    double t0 = now_s(), c0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
    quiet(1); /* the cancel warning is expected */
    CHECK_RC(px_engine_destroy(e), PX_OK);
    CHECK(n_cancel_logs > 0);
    quiet(0);
    double dt = now_s() - t0, used = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
    CHECK(dt >= 0.25 && dt < 5.0);
    if (used >= 0.25 * dt)
        fprintf(stderr, "check_mpi: rank %d: %.3f s CPU over a %.3f s drain\n", rank, used, dt);
    CHECK(used < 0.25 * dt);
    CHECK(r == -1);
    CHECK_RC(px_mpi_set_drain_timeout_ms(10000), PX_OK);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- idle CPU --------------------------------------------------------------------------- */

static void test_idle_cpu_near_zero(px_engine *e)
{
    /* The progress thread has run (earlier tests) and nothing is outstanding now. */
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    sleep_ms(100); /* past every spin budget */
    double c0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
    sleep_ms(1000);
    double used = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
    if (used >= 0.05)
        fprintf(stderr, "check_mpi: rank %d: %.3f s CPU over an idle second\n", rank, used);
    CHECK(used < 0.05);
}

/* ---- thread level ------------------------------------------------------------------------- */

static int run_level_mode(int argc, char **argv)
{
    int b = 0, provided = 0;
    if (px_initialize(&argc, &argv) != PX_OK)
        return 1;
    px_engine *e = px_engine_default();
    quiet(1);
    /* Before MPI_Init: every push fails and says why; px_mpi_finalize has nothing to do. */
    CHECK_RC(px_engine_push_mpi_isend(e, &b, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL), PX_EMPI);
    CHECK(strstr(last_log, "not initialized") != NULL);
    CHECK_RC(px_engine_push_mpi_irecv(e, &b, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL), PX_EMPI);
    CHECK_RC(px_engine_push_mpi_allreduce(e, &b, &provided, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                          NULL, NULL),
             PX_EMPI);
    CHECK_RC(px_mpi_finalize(), PX_OK);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (provided < MPI_THREAD_MULTIPLE) {
        CHECK_RC(px_engine_push_mpi_isend(e, &b, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL), PX_EMPI);
        CHECK_RC(px_mpi_init(NULL, NULL), PX_EMPI);
        CHECK(strstr(last_log, "MPI_THREAD_MULTIPLE") != NULL);
    }
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    /* After MPI_Finalize: every push and px_mpi_init fail with PX_EMPI and say so; there is
     * nothing of parex's to finalize. */
    MPI_Finalize();
    last_log[0] = 0;
    CHECK_RC(px_engine_push_mpi_irecv(e, &b, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL), PX_EMPI);
    CHECK(strstr(last_log, "already finalized") != NULL);
    CHECK_RC(px_engine_push_mpi_allreduce(e, &b, &provided, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                          NULL, NULL),
             PX_EMPI);
    CHECK_RC(px_mpi_init(NULL, NULL), PX_EMPI);
    CHECK_RC(px_mpi_finalize(), PX_OK);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    CHECK_RC(px_finalize(), PX_OK);
    /* After px_finalize there is no default engine: a push on it is PX_EFAULT. */
    CHECK_RC(
        px_engine_push_mpi_isend(px_engine_default(), &b, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL),
        PX_EFAULT);
    quiet(0);
    if (failures)
        fprintf(stderr, "check_mpi --level: %d check(s) failed\n", failures);
    else
        printf("check_mpi --level: ok\n");
    return failures ? 1 : 0;
}

/* Each px_finalize closes the default engine: cycles of px_initialize / px_finalize leave no
 * closing engine behind, so after more cycles than engines may close at once (64) a destroy
 * still gets its drain timeout (no "closing at once ... without a timeout" warning, and an
 * unmatched receive is cancelled instead of waited for without end). */
static void test_reinitialize_cycles_keep_drain_timeout(void)
{
    quiet(1);
    for (int i = 0; i < 80; ++i) {
        CHECK_RC(px_initialize(NULL, NULL), PX_OK);
        CHECK_RC(px_finalize(), PX_OK);
    }
    quiet(0);
    int clean = n_logs == 0; /* no "engines closing at once ... without a timeout" */
    CHECK(clean);
    CHECK_RC(px_initialize(NULL, NULL), PX_OK);
    px_engine *e = px_engine_create(PX_ENGINE_PER_DEVICE, 1);
    CHECK(e != NULL);
    quiet(1);
    CHECK_RC(px_engine_destroy(e), PX_OK);
    quiet(0);
    CHECK(n_logs == 0);
    clean = clean && n_logs == 0;
    if (clean) { /* else this destroy might wait for its receive without end */
        int never = -1;
        CHECK_RC(px_mpi_set_drain_timeout_ms(100), PX_OK);
        e = px_engine_create(PX_ENGINE_PER_DEVICE, 1);
        CHECK_RC(px_engine_push_mpi_irecv(e, &never, 1, MPI_INT, left(), 7, MPI_COMM_WORLD, NULL),
                 PX_OK);
        quiet(1);
        CHECK_RC(px_engine_destroy(e), PX_OK);
        quiet(0);
        CHECK(n_cancel_logs > 0);
        CHECK(never == -1);
    }
    CHECK_RC(px_finalize(), PX_OK);
}

/* Holds its op until main sets the flag. */
static int hold_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    atomic_int *go = arg;
    while (!atomic_load(go))
        sched_yield();
    return PX_OK;
}

/* px_mpi_finalize refuses while an MPI op is queued and has no request yet: a receive from
 * MPI_PROC_NULL (which completes at once) waits behind an op that holds its Var. Before,
 * only posted requests counted. Not on the naive engine, which would run the holding op
 * inline in its push and wait there for ever. */
static void test_mpi_finalize_refuses_a_queued_op(px_engine *e)
{
    const char *kind = getenv("PX_ENGINE");
    if (kind && strcmp(kind, "naive") == 0)
        return;
    atomic_int go = 0;
    int buf = -1;
    px_var *v = px_var_new(e);
    px_context cpu = {PX_DEV_CPU, 0};
    CHECK_RC(px_engine_push_sync(e, hold_fn, &go, cpu, NULL, 0, &v, 1, PX_FN_NORMAL, 0, "hold"),
             PX_OK);
    CHECK_RC(px_engine_push_mpi_irecv(e, &buf, 1, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, v),
             PX_OK);
    quiet(1);
    CHECK_RC(px_mpi_finalize(), PX_EBUSY); /* nothing posted yet: the hold op has not ended */
    quiet(0);
    CHECK(strstr(last_log, "queued") != NULL);
    atomic_store(&go, 1);
    CHECK_RC(px_engine_wait_for_var(e, v), PX_OK);
    CHECK(buf == -1); /* a receive from MPI_PROC_NULL leaves the buffer */
    px_var_delete(e, v);
}

/* px_finalize with a receive that never matches on the default engine: it returns after the
 * drain timeout with the op's PX_ECANCELED (the first failure of the default engine). */
static int run_finalize_mode(int argc, char **argv)
{
    if (px_mpi_init(&argc, &argv) != PX_OK || px_initialize(&argc, &argv) != PX_OK)
        return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int r = -1, s = rank;
    px_engine *e = px_engine_default();
    test_mpi_finalize_refuses_a_queued_op(e);
    /* 500 ms: the left neighbour's send must be posted within the drain, and a rank of 3 on 2
     * cores under TSan beside another test can be scheduled out for a good part of 200 ms
     * (session 27). */
    CHECK_RC(px_mpi_set_drain_timeout_ms(500), PX_OK);
    /* The ranks start the drain together: the first test takes a rank-dependent time, and a
     * rank 200 ms ahead of its left neighbour (TSan, 3 ranks on 2 cores of a slow VM, session
     * 24) reached its drain deadline before the matching send was posted. */
    MPI_Barrier(MPI_COMM_WORLD);
    /* One message that matches (sent late: finalize waits for it), one that never does. */
    CHECK_RC(px_engine_push_mpi_irecv(e, &r, 1, MPI_INT, left(), 5, MPI_COMM_WORLD, NULL), PX_OK);
    int never = -1;
    CHECK_RC(px_engine_push_mpi_irecv(e, &never, 1, MPI_INT, left(), 6, MPI_COMM_WORLD, NULL),
             PX_OK);
    CHECK_RC(px_engine_push_mpi_isend(e, &s, 1, MPI_INT, right(), 5, MPI_COMM_WORLD, NULL), PX_OK);
    quiet(1);
    /* px_mpi_finalize before px_finalize, with a message outstanding: refused (MPI_Finalize
     * under the progress thread's tests would abort the job). */
    CHECK_RC(px_mpi_finalize(), PX_EBUSY);
    CHECK(strstr(last_log, "px_finalize") != NULL);
    double t0 = now_s();
    CHECK_RC(px_finalize(), PX_ECANCELED);
    double dt = now_s() - t0;
    quiet(0);
    CHECK(dt < 5.0);
    CHECK(r == left());
    CHECK(never == -1);
    CHECK(n_cancel_logs > 0);
    test_reinitialize_cycles_keep_drain_timeout();
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    px_mpi_finalize();
    if (rank == 0)
        printf("check_mpi --finalize: %d rank(s), %d failed check(s)\n", nranks, total);
    return total ? 1 : 0;
}

/* ---- progress between the pieces of a long kernel (mode --pieces) -----------------------------
 */

#define PIECE_BYTES (4 << 20) /* past every eager limit: the receiver must act to pull it */
#define PIECES      200
#define PIECE_US    1500 /* a 300 ms kernel */

/* Busy for PIECE_US a piece, without a system call (a sleep would let other threads run). */
static void busy_pieces(int64_t b, int64_t e, void *ctx)
{
    (void)ctx;
    const double until = now_s() + 1e-6 * PIECE_US * (double)(e - b);
    while (now_s() < until) {
    }
}

/* Rank 0 posts a receive of PIECE_BYTES, then runs a 300 ms kernel op of PIECES one-index
 * chunks on @space; rank 1 sends the message with a blocking MPI_Send once the kernel runs. On
 * a rank with one processor nothing else of rank 0 can drive MPI during the kernel, and the
 * message moves only when rank 0 calls MPI: without tests between the pieces, rank 1's send
 * would last the whole kernel. The check asks for less than half of it. */
static void pieces_on(px_engine *e, const char *space, int tag)
{
    char *buf = malloc(PIECE_BYTES);
    CHECK(buf != NULL);
    double t_kernel = 0.0, t_send = 0.0;
    if (buf) {
        memset(buf, rank == 0 ? 0 : 7, PIECE_BYTES);
        if (rank == 0) {
            px_var *v = px_var_new(e), *w = px_var_new(e);
            CHECK_RC(
                px_engine_push_mpi_irecv(e, buf, PIECE_BYTES, MPI_BYTE, 1, tag, MPI_COMM_WORLD, v),
                PX_OK);
            MPI_Barrier(MPI_COMM_WORLD); /* the receive is posted (an MPI op posts at push) */
            double t0 = now_s();
            CHECK_RC(
                px_engine_push_parallel_for_fn(e, px_space_by_name(space), "busy_pieces",
                                               px_range_chunked(0, PIECES, 1, PX_SCHEDULE_STATIC),
                                               busy_pieces, NULL, NULL, 0, &w, 1),
                PX_OK);
            CHECK_RC(px_engine_wait_for_all(e), PX_OK);
            t_kernel = now_s() - t0;
            CHECK(buf[0] == 7 && buf[PIECE_BYTES - 1] == 7);
            px_var_delete(e, v);
            px_var_delete(e, w);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
            sleep_ms(20); /* rank 0's kernel runs */
            double t0 = now_s();
            MPI_Send(buf, PIECE_BYTES, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
            t_send = now_s() - t0;
        }
    }
    double t[2] = {t_kernel, t_send}, all[2];
    MPI_Allreduce(t, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("check_mpi --pieces: %s: kernel %.3f s, the peer's send %.3f s\n", space, all[0],
               all[1]);
    CHECK(all[0] > 0.25);
    CHECK(all[1] < 0.5 * all[0]);
    free(buf);
}

static int run_pieces_mode(int argc, char **argv)
{
    px_engine *e = mpi_check_start(&argc, &argv);
    cpu_set_t mask;
    CHECK(sched_getaffinity(0, sizeof mask, &mask) == 0 && CPU_COUNT(&mask) == 1);
    CHECK(nranks == 2);
    if (nranks == 2) {
        pieces_on(e, "threads", 21);
        pieces_on(e, "serial", 22);
    }
    return mpi_check_finish("check_mpi --pieces");
}

/* ---- the progress thread's placement ----------------------------------------------------------
 */

typedef struct named_mask {
    const char *prefix;
    cpu_set_t *mask;
    int found;
} named_mask;

static int take_named(const char *name, const cpu_set_t *mask, void *arg)
{
    named_mask *m = arg;
    if (strncmp(name, m->prefix, strlen(m->prefix)) != 0)
        return 0;
    *m->mask = *mask;
    m->found = 1;
    return 1;
}

/* The affinity mask of this process's first thread whose name starts with @prefix; 0 when there
 * is none. */
static int thread_mask(const char *prefix, cpu_set_t *mask)
{
    named_mask m = {prefix, mask, 0};
    return pxt_each_thread(take_named, &m) && m.found;
}

/* The progress thread starts from the process's mask, as the engine's workers do, not from the
 * binding of the thread that posted first (often the initializing thread, bound to Threads rank
 * 0's core): parex/instance.h lists the threads parex creates and their masks. */
static void test_progress_thread_has_the_process_mask(px_engine *e)
{
    test_ring_ordered_by_vars(e); /* posts messages: the progress thread exists after */
    cpu_set_t progress, worker;
    CHECK(thread_mask("px-mpi-progress", &progress));
    if (thread_mask("px-cpu", &worker))
        CHECK(CPU_EQUAL(&progress, &worker));
}

/* The progress thread starts at the first MPI op's push, here a graph's recording, not at the
 * first post inside the first launch, where its creation (a stack's mmap and mprotect, a clone:
 * 300 us on a VM whose page-table changes are dear, bench/RESULTS.md session 24) lay on the
 * critical path. The first case of the run: no MPI op was pushed before it. */
static void test_progress_thread_starts_at_push(px_engine *e)
{
    cpu_set_t mask;
    CHECK(!thread_mask("px-mpi-progress", &mask));
    double buf = 0.0;
    px_var *v = px_var_new(e);
    px_graph *g = NULL;
    CHECK_RC(px_graph_begin(e), PX_OK);
    CHECK_RC(px_engine_push_mpi_irecv(e, &buf, 1, MPI_DOUBLE, (rank + 1) % nranks, 30,
                                      MPI_COMM_WORLD, v),
             PX_OK);
    CHECK_RC(px_graph_end(e, &g), PX_OK);
    /* Recorded, never launched. The thread names itself as it starts: give it up to 5 s. */
    int found = 0;
    for (int k = 0; k < 5000 && !(found = thread_mask("px-mpi-progress", &mask)); ++k)
        sleep_ms(1);
    CHECK(found);
    CHECK_RC(px_graph_destroy(g), PX_OK);
    px_var_delete(e, v);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--level") == 0)
        return run_level_mode(argc, argv);
    if (argc > 1 && strcmp(argv[1], "--finalize") == 0)
        return run_finalize_mode(argc, argv);
    if (argc > 1 && strcmp(argv[1], "--pieces") == 0)
        return run_pieces_mode(argc, argv);
    px_engine *e = mpi_check_start(&argc, &argv);
    static const mpi_case tests[] = {
        {"progress_thread_starts_at_push", test_progress_thread_starts_at_push}, /* first */
        {"ring_ordered_by_vars", test_ring_ordered_by_vars},
        {"messages_traced_with_bytes_peer_tag", test_messages_traced_with_bytes_peer_tag},
        {"message_name_counts_bytes_past_int", test_message_name_counts_bytes_past_int},
        {"kernel_op_reads_received_var", test_kernel_op_reads_received_var},
        {"many_outstanding", test_many_outstanding},
        {"allreduce_depends_on_rank_count", test_allreduce_depends_on_rank_count},
        {"truncated_receive_fails_op_and_var", test_truncated_receive_fails_op_and_var},
        {"bad_arguments_rejected", test_bad_arguments_rejected},
        {"refused_push_keeps_errhandler", test_refused_push_keeps_errhandler},
        {"idle_cpu_near_zero", test_idle_cpu_near_zero},
        {"progress_thread_has_the_process_mask", test_progress_thread_has_the_process_mask},
    };
    mpi_check_run(e, tests, sizeof tests / sizeof *tests, 40);
    test_destroy_waits_for_late_message();
    if (rank == 0)
        printf("%-40s done\n", "destroy_waits_for_late_message");
    test_destroy_cancels_unmatched_after_timeout_without_spinning();
    if (rank == 0)
        printf("%-40s done\n", "destroy_cancels_unmatched_without_spinning");
    return mpi_check_finish("check_mpi");
}
