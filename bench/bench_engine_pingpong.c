/*
 * bench/bench_engine_pingpong.c - the engine's own cost per message and per host round trip,
 * for the engine term of the distributed-CG model (bench/cg_model.py, issue 15).
 *
 *   mpirun -np 2 [binding] bench_engine_pingpong [--round-trips R] [--batches B] [--json]
 *
 * Engine ping-pong: rank 0 pushes px_engine_push_mpi_isend of 8 bytes and
 * px_engine_push_mpi_irecv of the answer, then waits for the receive's Var; rank 1 pushes the
 * receive, waits for it, pushes the send back. The same exchange with plain MPI_Send /
 * MPI_Recv (no engine) runs in the same process, so engine_extra_us = engine half round trip
 * - MPI half round trip is what the engine adds to one message (posting from a worker or the
 * progress lane, completion seen by the progress lane, the waiting host woken).
 * Op round trip: one empty op pushed (px_engine_push_sync, PX_FN_NORMAL) and waited for
 * (px_engine_wait_for_var) on rank 0 alone: the host -> worker -> host hand-off.
 * Run the ranks under the binding the distributed CG runs with (run_dcg.sh: one core each)
 * and PX_ENGINE_INLINE_NS=0 (else the empty op may run on the pusher). Each figure is the
 * median (and minimum) over B batches (default 15) of R round trips (default 200), after 20
 * untimed ones.
 *
 * Output (rank 0): a text line and, with --json, one JSON object as the last line:
 * {"ranks": 2, "bytes": 8, "engine_half_rtt_us", "engine_half_rtt_us_min", "mpi_half_rtt_us",
 *  "mpi_half_rtt_us_min", "engine_extra_us", "op_roundtrip_us", "op_roundtrip_us_min"}.
 * Exit status: 0; 1 a parex or MPI error; 2 bad command line or not 2 ranks.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "parex.h"

#define PROG        "bench_engine_pingpong"
#define MAX_BATCHES 101
#define WARMUP      20

typedef struct {
    px_engine *e;
    px_var *vs, *vr;
    double sbuf, rbuf;
    int rank;
} pp_state;

/* One engine round trip from rank 0's side (rank 1 answers); PX_OK or the failing status. */
static int engine_round_trip(pp_state *s)
{
    int rc;
    if (s->rank == 0) {
        rc = px_engine_push_mpi_isend(s->e, &s->sbuf, 1, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD, s->vs);
        if (rc == PX_OK)
            rc = px_engine_push_mpi_irecv(s->e, &s->rbuf, 1, MPI_DOUBLE, 1, 6, MPI_COMM_WORLD,
                                          s->vr);
        return rc == PX_OK ? px_engine_wait_for_var(s->e, s->vr) : rc;
    }
    rc = px_engine_push_mpi_irecv(s->e, &s->rbuf, 1, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD, s->vr);
    if (rc == PX_OK)
        rc = px_engine_wait_for_var(s->e, s->vr);
    if (rc == PX_OK) /* sends what it received: reads vr, so the next receive waits for it */
        rc = px_engine_push_mpi_isend(s->e, &s->rbuf, 1, MPI_DOUBLE, 0, 6, MPI_COMM_WORLD, s->vr);
    return rc;
}

static int mpi_round_trip(pp_state *s)
{
    const int peer = 1 - s->rank;
    if (s->rank == 0) {
        if (MPI_Send(&s->sbuf, 1, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD) != MPI_SUCCESS)
            return PX_EMPI;
        return MPI_Recv(&s->rbuf, 1, MPI_DOUBLE, peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
                       MPI_SUCCESS
                   ? PX_OK
                   : PX_EMPI;
    }
    if (MPI_Recv(&s->rbuf, 1, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS)
        return PX_EMPI;
    return MPI_Send(&s->rbuf, 1, MPI_DOUBLE, peer, 8, MPI_COMM_WORLD) == MPI_SUCCESS ? PX_OK
                                                                                     : PX_EMPI;
}

static int empty_op(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    return PX_OK;
}

/* One pushed-and-waited empty op (rank 0 only; rank 1 does nothing). */
static int op_round_trip(pp_state *s)
{
    if (s->rank != 0)
        return PX_OK;
    const px_context cpu = {PX_DEV_CPU, 0};
    const int rc = px_engine_push_sync(s->e, empty_op, NULL, cpu, NULL, 0, &s->vs, 1, PX_FN_NORMAL,
                                       0, "bench_op_roundtrip");
    return rc == PX_OK ? px_engine_wait_for_var(s->e, s->vs) : rc;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median and minimum over @p batches of @p reps calls of @p fn, in us per call divided by
 * @p div (2 for a half round trip); rank 0's clock, both ranks in step. 0, or 1 on an error. */
static int measure(int (*fn)(pp_state *), pp_state *s, int batches, int reps, double div,
                   double *med, double *mn)
{
    double t[MAX_BATCHES];
    for (int i = 0; i < WARMUP; i++)
        if (fn(s) != PX_OK)
            return 1;
    for (int b = 0; b < batches; b++) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = bench_now_s();
        for (int i = 0; i < reps; i++)
            if (fn(s) != PX_OK)
                return 1;
        t[b] = (bench_now_s() - t0) / reps / div * 1e6;
    }
    if (px_engine_wait_for_all(s->e) != PX_OK)
        return 1;
    qsort(t, (size_t)batches, sizeof t[0], cmp_double);
    *med = t[batches / 2];
    *mn = t[0];
    return 0;
}

static int parse_args(int argc, char **argv, int *reps, int *batches, int *json)
{
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (strcmp(argv[i], "--json") == 0) {
            *json = 1;
        } else if (strcmp(argv[i], "--round-trips") == 0 && i + 1 < argc) {
            const long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 1000000)
                return 0;
            *reps = (int)v;
        } else if (strcmp(argv[i], "--batches") == 0 && i + 1 < argc) {
            const long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > MAX_BATCHES)
                return 0;
            *batches = (int)v;
        } else {
            return 0;
        }
    }
    return 1;
}

int main(int argc, char **argv)
{
    int provided = 0, P = 0, reps = 200, batches = 15, json = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
        return 1;
    pp_state s;
    memset(&s, 0, sizeof s);
    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (!parse_args(argc, argv, &reps, &batches, &json) || P != 2) {
        if (s.rank == 0)
            fprintf(stderr,
                    PROG ": usage: mpirun -np 2 " PROG " [--round-trips R (1..1000000)] "
                         "[--batches B (1..%d)] [--json] (got %d ranks)\n",
                    MAX_BATCHES, P);
        MPI_Finalize();
        return 2;
    }
    int rc = px_initialize(&argc, &argv);
    if (rc != PX_OK) {
        fprintf(stderr, PROG ": rank %d: px_initialize: %s\n", s.rank, px_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    s.e = px_engine_default();
    s.vs = px_var_new(s.e);
    s.vr = px_var_new(s.e);
    s.sbuf = 1.0;
    double eng = 0, eng_min = 0, mpi = 0, mpi_min = 0, op = 0, op_min = 0;
    int bad = !s.e || !s.vs || !s.vr;
    bad = bad || measure(engine_round_trip, &s, batches, reps, 2.0, &eng, &eng_min);
    bad = bad || measure(mpi_round_trip, &s, batches, reps, 2.0, &mpi, &mpi_min);
    bad = bad || measure(op_round_trip, &s, batches, reps, 1.0, &op, &op_min);
    if (bad) {
        fprintf(stderr, PROG ": rank %d: an engine op or MPI call failed\n", s.rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (s.rank == 0) {
        printf(PROG ": 8 B half round trip: engine %.3f us, MPI %.3f us (extra %.3f us); "
                    "op round trip %.3f us\n",
               eng, mpi, eng - mpi, op);
        if (json)
            printf("{\"ranks\": 2, \"bytes\": 8, \"engine_half_rtt_us\": %.4f, "
                   "\"engine_half_rtt_us_min\": %.4f, \"mpi_half_rtt_us\": %.4f, "
                   "\"mpi_half_rtt_us_min\": %.4f, \"engine_extra_us\": %.4f, "
                   "\"op_roundtrip_us\": %.4f, \"op_roundtrip_us_min\": %.4f}\n",
                   eng, eng_min, mpi, mpi_min, eng - mpi, op, op_min);
    }
    px_var_delete(s.e, s.vs);
    px_var_delete(s.e, s.vr);
    px_finalize();
    MPI_Finalize();
    return 0;
}
