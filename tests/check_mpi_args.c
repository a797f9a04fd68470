/* tests/check_mpi_args.c - the arguments of the MPI ops (parex/mpi.h) and their limits, run
 * under mpirun with 1 and 3 ranks (tests/mpi.cmake): every bad argument refused with its
 * documented status and a logged reason, the edges MPI allows accepted, a call MPI refuses at
 * post failing its op and its Var, as many outstanding messages as the engine's
 * backpressure limit (PX_ENGINE_MAX_PENDING), and a destroy past its drain timeout with
 * messages MPI cannot cancel. A plain MPI program, as tests/check_mpi.c (which
 * says why), sharing tests/mpi_check.h.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parex.h"

#define MPI_CHECK_PROG "check_mpi_args"
#include "mpi_check.h"

static int mark_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    *(int *)arg = 1;
    return PX_OK;
}

/* Every push refuses each bad argument with its documented status and a logged reason:
 * NULL engine, negative count, NULL buffer, null type / communicator / operation, a peer or
 * tag out of range (wildcards where MPI allows none), a Var of another engine or a deleted
 * one. */
#define REJECTS(call, want)                                                                        \
    do {                                                                                           \
        int n0_ = n_logs;                                                                          \
        CHECK_RC(call, want);                                                                      \
        CHECK(n_logs > n0_);                                                                       \
    } while (0)

static void test_every_push_rejects_each_bad_argument(px_engine *e)
{
    int b[4] = {0};
    MPI_Comm w = MPI_COMM_WORLD;
    px_engine *other = px_engine_create(PX_ENGINE_NAIVE, 0);
    px_var *foreign = px_var_new(other), *dead = px_var_new(e);
    CHECK_RC(px_var_delete(e, dead), PX_OK);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(w, MPI_TAG_UB, &ub, &flag);
    quiet(1);
    REJECTS(px_engine_push_mpi_isend(NULL, b, 4, MPI_INT, right(), 0, w, NULL), PX_EFAULT);
    REJECTS(px_engine_push_mpi_isend(e, b, 4, MPI_INT, right(), 0, MPI_COMM_NULL, NULL), PX_EINVAL);
    REJECTS(px_engine_push_mpi_isend(e, b, 4, MPI_INT, -5, 0, w, NULL), PX_EINVAL);
    REJECTS(px_engine_push_mpi_isend(e, b, 4, MPI_INT, right(), MPI_ANY_TAG, w, NULL), PX_EINVAL);
    if (flag && *ub < 2147483647)
        REJECTS(px_engine_push_mpi_isend(e, b, 4, MPI_INT, right(), *ub + 1, w, NULL), PX_EINVAL);
    REJECTS(px_engine_push_mpi_isend(e, b, 4, MPI_INT, right(), 0, w, foreign), PX_EINVAL);
    REJECTS(px_engine_push_mpi_isend(e, b, 4, MPI_INT, right(), 0, w, dead), PX_EINVAL);
    REJECTS(px_engine_push_mpi_irecv(NULL, b, 4, MPI_INT, left(), 0, w, NULL), PX_EFAULT);
    REJECTS(px_engine_push_mpi_irecv(e, b, -1, MPI_INT, left(), 0, w, NULL), PX_EINVAL);
    REJECTS(px_engine_push_mpi_irecv(e, NULL, 4, MPI_INT, left(), 0, w, NULL), PX_EFAULT);
    REJECTS(px_engine_push_mpi_irecv(e, b, 4, MPI_DATATYPE_NULL, left(), 0, w, NULL), PX_EINVAL);
    REJECTS(px_engine_push_mpi_irecv(e, b, 4, MPI_INT, nranks, 0, w, NULL), PX_EINVAL);
    REJECTS(px_engine_push_mpi_irecv(e, b, 4, MPI_INT, left(), -2, w, NULL), PX_EINVAL);
    REJECTS(px_engine_push_mpi_irecv(e, b, 4, MPI_INT, left(), 0, w, foreign), PX_EINVAL);
    REJECTS(px_engine_push_mpi_allreduce(NULL, b, b + 1, 1, MPI_INT, MPI_SUM, w, NULL, NULL),
            PX_EFAULT);
    REJECTS(px_engine_push_mpi_allreduce(e, b, b + 1, -1, MPI_INT, MPI_SUM, w, NULL, NULL),
            PX_EINVAL);
    REJECTS(px_engine_push_mpi_allreduce(e, b, NULL, 1, MPI_INT, MPI_SUM, w, NULL, NULL),
            PX_EFAULT);
    REJECTS(px_engine_push_mpi_allreduce(e, b, b + 1, 1, MPI_DATATYPE_NULL, MPI_SUM, w, NULL, NULL),
            PX_EINVAL);
    REJECTS(
        px_engine_push_mpi_allreduce(e, b, b + 1, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL, NULL, NULL),
        PX_EINVAL);
    REJECTS(px_engine_push_mpi_allreduce(e, b, b + 1, 1, MPI_INT, MPI_SUM, w, foreign, NULL),
            PX_EINVAL);
    REJECTS(px_engine_push_mpi_allreduce(e, b, b + 1, 1, MPI_INT, MPI_SUM, w, NULL, foreign),
            PX_EINVAL);
    REJECTS(px_mpi_set_drain_timeout_ms(INT64_MIN), PX_EINVAL);
    quiet(0);
    CHECK_RC(px_mpi_init(NULL, NULL), PX_OK);   /* again: MPI is up at MPI_THREAD_MULTIPLE */
    CHECK_RC(px_engine_wait_for_all(e), PX_OK); /* nothing refused was queued */
    CHECK_RC(px_var_delete(other, foreign), PX_OK);
    CHECK_RC(px_engine_destroy(other), PX_OK);
}

/* The edges MPI allows are accepted and complete: zero elements from NULL buffers, a message to
 * and from this rank itself with tag MPI_TAG_UB, a receive with both wildcards, an allreduce
 * whose read and written Vars are one, the drain timeout's bounds. */
static void test_edge_arguments_accepted(px_engine *e)
{
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    const int top = flag && ub ? *ub : 32767;
    int s[2] = {rank + 1, rank + 2}, r[2] = {-1, -1}, any = -1;
    long x = 1;
    px_var *v = px_var_new(e);
    CHECK_RC(px_engine_push_mpi_isend(e, NULL, 0, MPI_INT, rank, 9, MPI_COMM_WORLD, NULL), PX_OK);
    CHECK_RC(px_engine_push_mpi_irecv(e, NULL, 0, MPI_INT, rank, 9, MPI_COMM_WORLD, v), PX_OK);
    CHECK_RC(px_engine_push_mpi_isend(e, s, 2, MPI_INT, rank, top, MPI_COMM_WORLD, NULL), PX_OK);
    CHECK_RC(px_engine_push_mpi_irecv(e, r, 2, MPI_INT, rank, top, MPI_COMM_WORLD, v), PX_OK);
    CHECK_RC(px_engine_push_mpi_isend(e, s, 1, MPI_INT, rank, 8, MPI_COMM_WORLD, NULL), PX_OK);
    CHECK_RC(px_engine_push_mpi_irecv(e, &any, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                                      MPI_COMM_WORLD, v),
             PX_OK);
    CHECK_RC(px_engine_push_mpi_allreduce(e, NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD, v, v),
             PX_OK);
    CHECK_RC(px_engine_push_mpi_allreduce(e, MPI_IN_PLACE, &x, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD,
                                          v, v),
             PX_OK);
    CHECK_RC(px_engine_wait_for_var(e, v), PX_OK);
    CHECK(r[0] == rank + 1 && r[1] == rank + 2);
    CHECK(any == rank + 1);
    CHECK(x == nranks);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    CHECK_RC(px_var_delete(e, v), PX_OK);
    CHECK_RC(px_mpi_set_drain_timeout_ms(0), PX_OK);
    CHECK_RC(px_mpi_set_drain_timeout_ms(3600000), PX_OK);
    CHECK_RC(px_mpi_set_drain_timeout_ms(10000), PX_OK);
}

/* A call MPI refuses at post (a reduction its operation does not define for the type, an
 * uncommitted type) fails its op with PX_EMPI and MPI's error text: the written Var carries
 * it, the op that reads that Var is skipped and passes it on. Every rank refuses the same
 * collective, so no rank waits for a partner. */
static void test_refused_call_fails_op_and_var(px_engine *e)
{
    double d = 1.0, out = 0.0;
    int ran = 0, b[4] = {0};
    px_var *vsum = px_var_new(e), *vafter = px_var_new(e);
    px_context cpu = {PX_DEV_CPU, 0};
    quiet(1);
    CHECK_RC(px_engine_push_mpi_allreduce(e, &d, &out, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD,
                                          NULL, vsum),
             PX_OK);
    CHECK_RC(px_engine_push_sync(e, mark_fn, &ran, cpu, &vsum, 1, &vafter, 1, PX_FN_NORMAL, 0,
                                 "after_refused"),
             PX_OK);
    CHECK_RC(px_engine_wait_for_var(e, vafter), PX_EMPI);
    CHECK_RC(px_engine_wait_for_var(e, vsum), PX_EMPI);
    CHECK(strstr(last_log, "mpi_allreduce 8B") != NULL);
    CHECK(strstr(last_log, "MPI_ERR_OP") != NULL);
    CHECK(ran == 0);
    CHECK_RC(px_engine_wait_for_all(e), PX_EMPI);
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair); /* not committed */
    last_log[0] = 0;
    CHECK_RC(px_engine_push_mpi_isend(e, b, 1, pair, rank, 5, MPI_COMM_WORLD, NULL), PX_OK);
    CHECK_RC(px_engine_wait_for_all(e), PX_EMPI);
    CHECK(strstr(last_log, "mpi_isend 8B to") != NULL);
    quiet(0);
    MPI_Type_free(&pair);
    CHECK_RC(px_var_delete(e, vsum), PX_OK);
    CHECK_RC(px_var_delete(e, vafter), PX_OK);
}

/* PX_ENGINE_MAX_PENDING as this run has it (tests/mpi.cmake lowers it to 4,096). */
static int pending_limit(void)
{
    const char *env = getenv("PX_ENGINE_MAX_PENDING");
    return env && atoi(env) > 0 ? atoi(env) : 65536;
}

/* A ring of @n messages a rank: @n receives from the left pushed on @re (receive i writes
 * rv[i] when @rv is not NULL), then, after a barrier when @barrier (every rank's receives are
 * then outstanding before any rank sends), the @n matching sends to the right pushed on @se;
 * waits for both engines and checks every value that arrived. */
static void ring_of_messages(px_engine *re, px_engine *se, int n, px_var *const *rv, int barrier)
{
    int *r = malloc((size_t)n * sizeof *r), *s = malloc((size_t)n * sizeof *s);
    CHECK(r && s);
    if (!r || !s) {
        free(r);
        free(s);
        return;
    }
    for (int i = 0; i < n; ++i) {
        r[i] = -1;
        CHECK_RC(px_engine_push_mpi_irecv(re, &r[i], 1, MPI_INT, left(), i, MPI_COMM_WORLD,
                                          rv ? rv[i] : NULL),
                 PX_OK);
    }
    if (barrier)
        MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i) {
        s[i] = rank * n + i;
        CHECK_RC(px_engine_push_mpi_isend(se, &s[i], 1, MPI_INT, right(), i, MPI_COMM_WORLD, NULL),
                 PX_OK);
    }
    CHECK_RC(px_engine_wait_for_all(re), PX_OK);
    CHECK_RC(px_engine_wait_for_all(se), PX_OK);
    int bad = 0;
    for (int i = 0; i < n; ++i)
        bad += r[i] != left() * n + i;
    CHECK(bad == 0);
    free(r);
    free(s);
}

/* As many outstanding messages as the backpressure limit (PX_ENGINE_MAX_PENDING; the ctest
 * sets 4,096: at the default 65,536 Open MPI's own matching of the receives takes 3-5 s, as a
 * plain MPI program's): every rank pushes that many receives, each outstanding until its
 * send, and none of those pushes blocks; then a second engine pushes the matching sends and
 * every receive gets its value. */
static void test_outstanding_at_backpressure_limit(px_engine *e)
{
    px_engine *senders = px_engine_create(PX_ENGINE_PER_DEVICE, 1);
    CHECK(senders != NULL);
    if (!senders)
        return;
    ring_of_messages(e, senders, pending_limit(), NULL, 1);
    CHECK_RC(px_engine_destroy(senders), PX_OK);
}

/* As many receives as the backpressure limit, then the matching sends on the same engine: the
 * receives are posted MPI messages, which do not count against PX_ENGINE_MAX_PENDING, so the
 * sends are pushed instead of blocking every rank for good (the sends of the peers would never
 * come). */
static void test_sends_after_a_full_limit_of_receives_on_one_engine(px_engine *e)
{
    ring_of_messages(e, e, pending_limit(), NULL, 0);
}

static int sleep_100ms(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    struct timespec ts = {0, 100000000L};
    nanosleep(&ts, NULL);
    return PX_OK;
}

/* As above, but the receives cannot be posted when they are pushed: each writes a Var that a
 * slow op writes first, so the sends block at the cap while every receive still counts. Once
 * the slow op finishes, the receives are posted one by one and each post wakes the blocked
 * pusher, whose send then finds room. */
static void test_a_push_blocked_at_the_limit_resumes_when_queued_receives_post(px_engine *e)
{
    const int n = pending_limit() - 1; /* with the slow op: the cap */
    px_var **v = malloc((size_t)n * sizeof *v);
    CHECK(v != NULL);
    if (!v)
        return;
    for (int i = 0; i < n; ++i)
        v[i] = px_var_new(e);
    CHECK_RC(px_engine_push_sync(e, sleep_100ms, NULL, (px_context){PX_DEV_CPU, 0}, NULL, 0, v,
                                 (size_t)n, PX_FN_NORMAL, 0, "slow_writer"),
             PX_OK);
    ring_of_messages(e, e, n, v, 0);
    for (int i = 0; i < n; ++i)
        CHECK_RC(px_var_delete(e, v[i]), PX_OK);
    CHECK_RC(px_engine_wait_for_all(e), PX_OK);
    free(v);
}

/* The log lines of a destroy past its drain timeout, counted by what they say. */
static int n_released, n_abandoned;

static void count_drain_logs(px_log_level level, const char *msg, void *user)
{
    (void)level;
    (void)user;
    n_released += strstr(msg, "released at engine destroy") != NULL;
    n_abandoned += strstr(msg, "abandoned at engine destroy") != NULL;
}

/* A destroy past its drain timeout with a send that never matches (1 MiB: a rendezvous that
 * stays outstanding until the peer receives it) and an allreduce only this rank joined: MPI
 * cannot cancel either, so after the timeout and its 100 ms of grace the send's request is
 * released and the allreduce abandoned, each with a warning, and the destroy returns. On a
 * communicator of their own, so that the abandoned collective and the unmatched message meet
 * no later traffic. */
static void test_destroy_releases_send_and_abandons_allreduce(px_engine *unused)
{
    (void)unused;
    enum { BIG = 1 << 20 };
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    char *buf = calloc(BIG, 1);
    long x = 1, y = 0;
    px_engine *e = px_engine_create(PX_ENGINE_PER_DEVICE, 1);
    CHECK_RC(px_mpi_set_drain_timeout_ms(200), PX_OK);
    CHECK_RC(px_engine_push_mpi_isend(e, buf, BIG, MPI_CHAR, right(), 999, comm, NULL), PX_OK);
    if (rank == 0 && nranks > 1)
        CHECK_RC(px_engine_push_mpi_allreduce(e, &x, &y, 1, MPI_LONG, MPI_SUM, comm, NULL, NULL),
                 PX_OK);
    n_released = n_abandoned = 0;
    px_log_set_handler(count_drain_logs, NULL);
    double t0 = now_s();
    CHECK_RC(px_engine_destroy(e), PX_OK);
    double dt = now_s() - t0;
    px_log_set_handler(NULL, NULL);
    CHECK(dt < 5.0);
    if (nranks > 1) { /* a send to itself may complete at once, buffered by MPI */
        CHECK(n_released == 1);
        CHECK(dt >= 0.25);
    }
    CHECK(n_abandoned == (rank == 0 && nranks > 1));
    CHECK_RC(px_mpi_set_drain_timeout_ms(10000), PX_OK);
    MPI_Comm_free(&comm);
    free(buf); /* MPI no longer reads it: the peer never receives the message */
}

int main(int argc, char **argv)
{
    px_engine *e = mpi_check_start(&argc, &argv);
    static const mpi_case tests[] = {
        {"every_push_rejects_each_bad_argument", test_every_push_rejects_each_bad_argument},
        {"edge_arguments_accepted", test_edge_arguments_accepted},
        {"refused_call_fails_op_and_var", test_refused_call_fails_op_and_var},
        {"outstanding_at_backpressure_limit", test_outstanding_at_backpressure_limit},
        {"sends_after_a_full_limit_of_receives_on_one_engine",
         test_sends_after_a_full_limit_of_receives_on_one_engine},
        {"a_push_blocked_at_the_limit_resumes_when_queued_receives_post",
         test_a_push_blocked_at_the_limit_resumes_when_queued_receives_post},
        {"destroy_releases_send_and_abandons_allreduce",
         test_destroy_releases_send_and_abandons_allreduce},
    };
    mpi_check_run(e, tests, sizeof tests / sizeof *tests, 64);
    return mpi_check_finish("check_mpi_args");
}
