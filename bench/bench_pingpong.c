/*
 * bench/bench_pingpong.c - MPI point-to-point latency and bandwidth between ranks 0 and 1
 * (ping-pong, 8 B .. 4 MiB), a halo exchange between them posted three ways, and the latency
 * of MPI_Allreduce of 1 and 2 doubles over all ranks: the network parameters of the
 * distributed-CG model (bench/cg_model.py, issue 15) and the MPI calls the engine's ops make.
 *
 *   mpirun -np 2 bench_pingpong [--json] [--batches B] [--min-bytes S] [--max-bytes S]
 *   mpirun -np 2 bench_pingpong --exchange-only [--json] [--batches B]
 *   mpirun -np 4 --oversubscribe bench_pingpong --allreduce-only [--json]
 *
 * Ping-pong: rank 0 sends S bytes, rank 1 sends them back; a batch is R round trips
 * (R = clamp(2^20 / S, 5, 200): short batches, so that a preemption spoils few of them on a
 * loaded machine) after 2 untimed ones, and each size reports the median and the minimum over
 * B batches (default 15) of the half round-trip time, and S / half-RTT as
 * GB/s (10^9 bytes/s). Ranks other than 0 and 1 skip it and wait in the closing barrier, so
 * run the ping-pong with -np 2 (they would spin in MPI and steal the CPU on a small machine)
 * and the allreduces alone (--allreduce-only) with more ranks.
 * Exchange: ranks 0 and 1 each send S bytes to the other and receive S (8 B .. 8 KiB, the
 * halos of parex-cg's small rows), completed by a loop of MPI_Testall as the engine's progress
 * tests its requests; B batches of 200, median and minimum of the slower rank's time per
 * exchange, posted three ways: MPI_Isend + MPI_Irecv; a persistent send and receive
 * (MPI_Send_init / MPI_Recv_init, MPI_Startall); MPI_Isend + a persistent receive, which is
 * what a recorded graph's ops post (core/engine/mpi_persist.c: Open MPI's ob1 sends a small
 * message inline in MPI_Isend and not in MPI_Start of a persistent send).
 * Allreduce: B batches of 200 MPI_Allreduce (MPI_SUM) of 1 and of 2 doubles; the time per
 * call of a batch is the slowest rank's; median and minimum over the batches. The same for
 * MPI_Iallreduce completed by a loop of MPI_Test (as the engine's allreduce op is: parex's
 * progress tests its requests) and by MPI_Wait: what a nonblocking allreduce costs beside the
 * blocking one on this MPI. Open MPI runs the nonblocking ones in libnbc, the blocking one in
 * coll/tuned; like parex-cg, this asks libnbc for recursive doubling unless the environment
 * chose (examples/cg/main.c, prefer_recursive_doubling). And a persistent allreduce (MPI 4.0's
 * MPI_Allreduce_init, Open MPI 4's MPIX_Allreduce_init) started with MPI_Start and completed by
 * MPI_Test: what a recorded allreduce op posts in each launch of its graph
 * (core/engine/mpi_persist.c); -1 where this MPI has no persistent collectives.
 *
 * On one node these are shared-memory figures (OpenMPI's vader BTL, single-copy CMA for large
 * messages), not a network's: the model says so and takes assumed network parameters too.
 *
 * Output (rank 0): a table and, with --json, one JSON object as the last line:
 * {"ranks": P, "pingpong": [{"bytes", "half_rtt_us", "half_rtt_us_min", "gbs"}...],
 *  "exchange": [{"bytes", "isend_irecv_us", "isend_irecv_us_min", "persistent_us",
 *                "persistent_us_min", "isend_persistent_recv_us",
 * "isend_persistent_recv_us_min"}...], "allreduce": [{"doubles", "us", "us_min",
 * "iallreduce_test_us", "iallreduce_test_us_min", "iallreduce_wait_us", "iallreduce_wait_us_min",
 * "persistent_test_us", "persistent_test_us_min"}...]}. Exit status: 0; 1 MPI error or a corrupted
 * message; 2 bad command line.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#ifdef OPEN_MPI
#include <mpi-ext.h> /* OMPI_HAVE_MPI_EXT_PCOLLREQ: MPIX_Allreduce_init */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define PROG        "bench_pingpong"
#define MAX_BATCHES 101
#define MAX_SIZES   64

static int g_rank = 0;

typedef struct {
    int json, allreduce_only, exchange_only, batches;
    long long min_bytes, max_bytes;
} cli;

typedef struct {
    long long bytes;
    double med_s, min_s;
} pp_row;

/* One batch of `reps` round trips of `bytes` between ranks 0 and 1; seconds per half trip. */
static double pingpong_batch(char *buf, long long bytes, int reps)
{
    const int peer = 1 - g_rank;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = bench_now_s();
    for (int i = 0; i < reps; i++) {
        if (g_rank == 0) {
            MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
        }
    }
    return (bench_now_s() - t0) / (2.0 * reps);
}

/* Ping-pong over the sizes; rows filled on rank 0; returns the row count, -1 when a message
 * came back changed. */
static int pingpong(const cli *c, pp_row *rows)
{
    char *buf = malloc((size_t)c->max_bytes);
    if (!buf) {
        fprintf(stderr, PROG ": out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int nrows = 0, bad = 0;
    for (long long s = c->min_bytes; s <= c->max_bytes && nrows < MAX_SIZES; s *= 2) {
        for (long long i = 0; i < s; i++)
            buf[i] = (char)(g_rank == 0 ? (i * 7 + 3) & 0x7f : 0);
        long long reps = ((long long)1 << 20) / s;
        reps = reps < 5 ? 5 : reps > 200 ? 200 : reps;
        double t[MAX_BATCHES];
        pingpong_batch(buf, s, 2);
        for (int b = 0; b < c->batches; b++)
            t[b] = pingpong_batch(buf, s, (int)reps);
        for (long long i = 0; i < s && g_rank == 0; i++)
            bad |= buf[i] != (char)((i * 7 + 3) & 0x7f);
        rows[nrows].bytes = s;
        rows[nrows].med_s = bench_median(t, c->batches); /* sorts t: t[0] is the minimum */
        rows[nrows].min_s = t[0];
        nrows++;
    }
    free(buf);
    return bad ? -1 : nrows;
}

/* How a halo exchange is posted: MPI_Isend + MPI_Irecv; persistent send and receive; MPI_Isend
 * and a persistent receive (a recorded graph's ops). */
typedef enum { EX_NONBLOCKING = 0, EX_PERSISTENT, EX_ISEND_PRECV, EX_KINDS } ex_kind;
static const char *const ex_names[EX_KINDS] = {"isend_irecv", "persistent",
                                               "isend_persistent_recv"};
#define EX_MAX_BYTES 8192
#define EX_SIZES     11 /* 8 B .. 8 KiB */

typedef struct {
    long long bytes;
    double s[EX_KINDS][2]; /* median, minimum seconds per exchange */
} ex_row;

/* One exchange of @bytes with the peer, posted as @kind (@pq: the persistent receive [0] and
 * send [1], built on @rbuf and @sbuf), completed by MPI_Testall. */
static void exchange_once(ex_kind kind, char *sbuf, char *rbuf, int bytes, MPI_Request *pq)
{
    const int peer = 1 - g_rank;
    MPI_Request q[2];
    if (kind == EX_PERSISTENT) {
        MPI_Startall(2, pq);
        q[0] = pq[0];
        q[1] = pq[1];
    } else {
        if (kind == EX_ISEND_PRECV) {
            MPI_Start(&pq[0]);
            q[0] = pq[0];
        } else
            MPI_Irecv(rbuf, bytes, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &q[0]);
        MPI_Isend(sbuf, bytes, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &q[1]);
    }
    int done = 0; /* a persistent request stays valid (inactive) in pq: only q[] is tested */
    while (!done)
        MPI_Testall(2, q, &done, MPI_STATUSES_IGNORE);
}

/* Exchange between ranks 0 and 1 over the sizes, the kinds interleaved within each size; rows
 * filled on rank 0; returns the row count, -1 when a message arrived changed. */
static int exchange(const cli *c, ex_row *rows)
{
    static char sbuf[EX_MAX_BYTES], rbuf[EX_MAX_BYTES];
    const int peer = 1 - g_rank, reps = 200;
    int nrows = 0, bad = 0;
    for (int s = 8; s <= EX_MAX_BYTES && nrows < EX_SIZES; s *= 2, nrows++) {
        for (int i = 0; i < s; i++)
            sbuf[i] = (char)((i * 5 + g_rank) & 0x7f);
        MPI_Request pq[2];
        MPI_Recv_init(rbuf, s, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &pq[0]);
        MPI_Send_init(sbuf, s, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &pq[1]);
        double t[EX_KINDS][MAX_BATCHES];
        for (int b = -1; b < c->batches; b++) /* batch -1: untimed warm-up */
            for (int k = 0; k < EX_KINDS; k++) {
                const ex_kind kind = (ex_kind)((k + b + 1) % EX_KINDS); /* rotate the order */
                memset(rbuf, 0, (size_t)s);
                MPI_Barrier(MPI_COMM_WORLD);
                const double t0 = bench_now_s();
                for (int i = 0; i < reps; i++)
                    exchange_once(kind, sbuf, rbuf, s, pq);
                double mine = (bench_now_s() - t0) / reps, other = 0;
                MPI_Sendrecv(&mine, 1, MPI_DOUBLE, peer, 4, &other, 1, MPI_DOUBLE, peer, 4,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (b >= 0)
                    t[kind][b] = mine > other ? mine : other;
                for (int i = 0; i < s; i++)
                    bad |= rbuf[i] != (char)((i * 5 + peer) & 0x7f);
            }
        MPI_Request_free(&pq[0]);
        MPI_Request_free(&pq[1]);
        rows[nrows].bytes = s;
        for (int k = 0; k < EX_KINDS; k++) {
            rows[nrows].s[k][0] = bench_median(t[k], c->batches); /* sorts: [0] is the min */
            rows[nrows].s[k][1] = t[k][0];
        }
    }
    return bad ? -1 : nrows;
}

#if MPI_VERSION >= 4
#define ALLREDUCE_INIT MPI_Allreduce_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define ALLREDUCE_INIT MPIX_Allreduce_init
#endif

/* How an allreduce is called: MPI_Allreduce, or MPI_Iallreduce then MPI_Test until done, or
 * MPI_Iallreduce then MPI_Wait, or MPI_Start of a persistent one then MPI_Test. */
typedef enum { AR_BLOCKING = 0, AR_TEST, AR_WAIT, AR_PERSIST, AR_KINDS } ar_kind;
static const char *const ar_names[AR_KINDS] = {"MPI_Allreduce", "MPI_Iallreduce + MPI_Test",
                                               "MPI_Iallreduce + MPI_Wait",
                                               "persistent, MPI_Start + MPI_Test"};

/* One allreduce called as @kind (@preq: AR_PERSIST's request, built on v and out). */
static void allreduce_once(ar_kind kind, const double *v, double *out, int doubles,
                           MPI_Request *preq)
{
    if (kind == AR_BLOCKING) {
        MPI_Allreduce(v, out, doubles, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        return;
    }
    MPI_Request q;
    if (kind == AR_PERSIST) {
        MPI_Start(preq);
        q = *preq;
    } else
        MPI_Iallreduce(v, out, doubles, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q);
    if (kind == AR_WAIT) {
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        return;
    }
    int done = 0;
    while (!done)
        MPI_Test(&q, &done, MPI_STATUS_IGNORE);
}

/* Median and minimum (over the batches) of the slowest rank's time per allreduce; -1 for a
 * persistent one where this MPI has none. */
static void allreduce_lat(const cli *c, int doubles, ar_kind kind, double *med_s, double *min_s)
{
    const int reps = 200;
    double v[2] = {1.0, 2.0}, out[2], t[MAX_BATCHES];
    MPI_Request preq = MPI_REQUEST_NULL;
    if (kind == AR_PERSIST) {
#ifdef ALLREDUCE_INIT
        ALLREDUCE_INIT(v, out, doubles, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &preq);
#else
        *med_s = *min_s = -1e-6;
        return;
#endif
    }
    for (int i = 0; i < 10; i++)
        allreduce_once(kind, v, out, doubles, &preq);
    for (int b = 0; b < c->batches; b++) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = bench_now_s();
        for (int i = 0; i < reps; i++)
            allreduce_once(kind, v, out, doubles, &preq);
        double mine = (bench_now_s() - t0) / reps;
        MPI_Allreduce(MPI_IN_PLACE, &mine, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t[b] = mine;
    }
    *med_s = bench_median(t, c->batches);
    *min_s = t[0];
    if (preq != MPI_REQUEST_NULL)
        MPI_Request_free(&preq);
}

static int parse_cli(int argc, char **argv, cli *c)
{
    memset(c, 0, sizeof *c);
    c->batches = 15;
    c->min_bytes = 8;
    c->max_bytes = 4 << 20;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--json") == 0) {
            c->json = 1;
            continue;
        }
        if (strcmp(a, "--allreduce-only") == 0) {
            c->allreduce_only = 1;
            continue;
        }
        if (strcmp(a, "--exchange-only") == 0) {
            c->exchange_only = 1;
            continue;
        }
        char *end = NULL;
        const long long v = i + 1 < argc ? strtoll(argv[i + 1], &end, 10) : 0;
        const int ok = i + 1 < argc && *argv[i + 1] && *end == '\0';
        i++;
        if (ok && strcmp(a, "--batches") == 0 && v >= 1 && v <= MAX_BATCHES)
            c->batches = (int)v;
        else if (ok && strcmp(a, "--min-bytes") == 0 && v >= 1 && v <= (1LL << 30))
            c->min_bytes = v;
        else if (ok && strcmp(a, "--max-bytes") == 0 && v >= 1 && v <= (1LL << 30))
            c->max_bytes = v;
        else {
            if (g_rank == 0)
                fprintf(stderr,
                        PROG ": bad argument '%s' (--batches 1..%d, --min-bytes and "
                             "--max-bytes 1..2^30; see bench/bench_pingpong.c's header)\n",
                        a, MAX_BATCHES);
            return 2;
        }
    }
    if (c->allreduce_only && c->exchange_only) {
        if (g_rank == 0)
            fprintf(stderr, PROG ": --allreduce-only and --exchange-only exclude each other\n");
        return 2;
    }
    if (c->min_bytes > c->max_bytes) {
        if (g_rank == 0)
            fprintf(stderr, PROG ": --min-bytes %lld > --max-bytes %lld\n", c->min_bytes,
                    c->max_bytes);
        return 2;
    }
    return 0;
}

/* ar[d][k]: median and minimum seconds of an allreduce of d + 1 doubles called as ar_kind k. */
static void print_results(const cli *c, int P, const pp_row *rows, int nrows, const ex_row *ex,
                          int nex, double ar[2][AR_KINDS][2])
{
    if (nrows > 0) {
        printf(PROG ": ping-pong between ranks 0 and 1 (%d batches)\n", c->batches);
        printf("%12s %14s %14s %10s\n", "bytes", "half_rtt_us", "min_us", "GB/s");
        for (int i = 0; i < nrows; i++)
            printf("%12lld %14.3f %14.3f %10.3f\n", rows[i].bytes, rows[i].med_s * 1e6,
                   rows[i].min_s * 1e6, (double)rows[i].bytes / rows[i].med_s * 1e-9);
    }
    if (nex > 0) {
        printf(PROG ": exchange between ranks 0 and 1, us (min) (%d batches)\n", c->batches);
        printf("%8s %20s %20s %24s\n", "bytes", ex_names[0], ex_names[1], ex_names[2]);
        for (int i = 0; i < nex; i++) {
            printf("%8lld", ex[i].bytes);
            for (int k = 0; k < EX_KINDS; k++)
                printf(" %*.3f (%.3f)", k == 2 ? 16 : 12, ex[i].s[k][0] * 1e6, ex[i].s[k][1] * 1e6);
            printf("\n");
        }
    }
    for (int d = 0; d < 2 && !c->exchange_only; d++)
        for (int k = 0; k < AR_KINDS; k++)
            printf(PROG ": allreduce of %d double%s over %d ranks, %s: %.3f us (min %.3f)\n", d + 1,
                   d ? "s" : "", P, ar_names[k], ar[d][k][0] * 1e6, ar[d][k][1] * 1e6);
    if (!c->json)
        return;
    printf("{\"ranks\": %d, \"batches\": %d, \"pingpong\": [", P, c->batches);
    for (int i = 0; i < nrows; i++)
        printf("%s{\"bytes\": %lld, \"half_rtt_us\": %.6g, \"half_rtt_us_min\": %.6g, "
               "\"gbs\": %.6g}",
               i ? ", " : "", rows[i].bytes, rows[i].med_s * 1e6, rows[i].min_s * 1e6,
               (double)rows[i].bytes / rows[i].med_s * 1e-9);
    printf("], \"exchange\": [");
    for (int i = 0; i < nex; i++) {
        printf("%s{\"bytes\": %lld", i ? ", " : "", ex[i].bytes);
        for (int k = 0; k < EX_KINDS; k++)
            printf(", \"%s_us\": %.6g, \"%s_us_min\": %.6g", ex_names[k], ex[i].s[k][0] * 1e6,
                   ex_names[k], ex[i].s[k][1] * 1e6);
        printf("}");
    }
    printf("], \"allreduce\": [");
    for (int d = 0; d < 2 && !c->exchange_only; d++)
        printf("%s{\"doubles\": %d, \"us\": %.6g, \"us_min\": %.6g, \"iallreduce_test_us\": %.6g, "
               "\"iallreduce_test_us_min\": %.6g, \"iallreduce_wait_us\": %.6g, "
               "\"iallreduce_wait_us_min\": %.6g, \"persistent_test_us\": %.6g, "
               "\"persistent_test_us_min\": %.6g}",
               d ? ", " : "", d + 1, ar[d][AR_BLOCKING][0] * 1e6, ar[d][AR_BLOCKING][1] * 1e6,
               ar[d][AR_TEST][0] * 1e6, ar[d][AR_TEST][1] * 1e6, ar[d][AR_WAIT][0] * 1e6,
               ar[d][AR_WAIT][1] * 1e6, ar[d][AR_PERSIST][0] * 1e6, ar[d][AR_PERSIST][1] * 1e6);
    printf("]}\n");
}

int main(int argc, char **argv)
{
    int P = 1;
    (void)setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "4", 0);
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, PROG ": MPI_Init failed\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    cli c;
    int rc = parse_cli(argc, argv, &c);
    if (rc == 0 && P < 2 && !c.allreduce_only) {
        if (g_rank == 0)
            fprintf(stderr, PROG ": the ping-pong needs 2 ranks (mpirun -np 2), or pass "
                                 "--allreduce-only\n");
        rc = 2;
    }
    if (rc != 0) {
        MPI_Finalize();
        return rc;
    }
    pp_row rows[MAX_SIZES];
    int nrows = 0;
    ex_row ex[EX_SIZES];
    int nex = 0;
    if (!c.allreduce_only && !c.exchange_only && g_rank < 2)
        nrows = pingpong(&c, rows);
    if (!c.allreduce_only && g_rank < 2)
        nex = exchange(&c, ex);
    int bad = nrows < 0 || nex < 0;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad) {
        if (g_rank == 0)
            fprintf(stderr, PROG ": a ping-pong or exchange message arrived changed\n");
        MPI_Finalize();
        return 1;
    }
    double ar[2][AR_KINDS][2];
    for (int d = 0; d < 2 && !c.exchange_only; d++)
        for (int k = 0; k < AR_KINDS; k++)
            allreduce_lat(&c, d + 1, (ar_kind)k, &ar[d][k][0], &ar[d][k][1]);
    if (g_rank == 0)
        print_results(&c, P, rows, nrows, ex, nex, ar);
    MPI_Finalize();
    return 0;
}
