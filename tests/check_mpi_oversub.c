/* tests/check_mpi_oversub.c - oversubscription across the ranks of a node (core/oversub.h)
 * under mpirun (tests/mpi.cmake): every rank's px_initialize must say it is oversubscribed
 * exactly when the node's ranks x threads outnumber its processors, counted here
 * independently of the library (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) for the ranks, the
 * affinity mask for the threads of a default team, the online processors for the node); an
 * explicit PX_WAIT_POLICY keeps the spinning budget and says so. Then a ring of engine MPI
 * messages and allreduces, whose waiter holds the lanes and the MPI progress when
 * oversubscribed, must finish with the right values within a time bound.
 *
 * A plain MPI program, as check_mpi (Check's fork per test does not mix with MPI). Run with the
 * log at info level (PX_LOG_LEVEL=info) and ranks unbound (--bind-to none). */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "parex.h"

#define MPI_CHECK_PROG "check_mpi_oversub"
#include "mpi_check.h"

/* Everything logged, kept (info and warn lines too, unlike mpi_check.h's capture). */
static char log_text[8192];

static void keep_log(px_log_level level, const char *msg, void *user)
{
    (void)level;
    (void)user;
    size_t used = strlen(log_text);
    snprintf(log_text + used, sizeof log_text - used, "%s\n", msg);
}

/* The processors of the process's mask, taken before px_initialize (which binds the calling
 * thread to its team's rank-0 core): the default team's size. */
static int default_team;

static int affinity_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 1;
    return CPU_COUNT(&set);
}

#define RING_ROUNDS  300
#define RING_BOUND_S 60.0

/* RING_ROUNDS rounds: send rank + round to the right, receive from the left, allreduce the
 * received values; every 50 rounds the host waits for the last allreduce. */
static void ring_in_bounded_time(px_engine *e)
{
    px_var *vs = px_var_new(e), *vr = px_var_new(e), *vsum = px_var_new(e);
    CHECK(vs && vr && vsum);
    int out = 0, in = -1, sum = -1, bad = 0;
    double t0 = MPI_Wtime();
    for (int r = 0; r < RING_ROUNDS; ++r) {
        out = rank + r; /* the previous send has completed (waited for below) */
        CHECK_RC(px_engine_push_mpi_isend(e, &out, 1, MPI_INT, right(), 7, MPI_COMM_WORLD, vs),
                 PX_OK);
        CHECK_RC(px_engine_push_mpi_irecv(e, &in, 1, MPI_INT, left(), 7, MPI_COMM_WORLD, vr),
                 PX_OK);
        CHECK_RC(px_engine_push_mpi_allreduce(e, &in, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, vr,
                                              vsum),
                 PX_OK);
        CHECK_RC(px_engine_wait_for_var(e, vsum), PX_OK);
        CHECK_RC(px_engine_wait_for_var(e, vs), PX_OK);
        /* Every rank sent rank + r, so the sum is the same on each. */
        bad += sum != nranks * (nranks - 1) / 2 + nranks * r || in != left() + r;
    }
    double dt = MPI_Wtime() - t0;
    CHECK(bad == 0);
    if (dt > RING_BOUND_S)
        fprintf(stderr, "%s: rank %d: %d rounds took %.1f s (bound %.0f s)\n", MPI_CHECK_PROG, rank,
                RING_ROUNDS, dt, RING_BOUND_S);
    CHECK(dt <= RING_BOUND_S);
    CHECK_RC(px_var_delete(e, vs), PX_OK);
    CHECK_RC(px_var_delete(e, vr), PX_OK);
    CHECK_RC(px_var_delete(e, vsum), PX_OK);
}

/* px_initialize (mpi_check_start) said it is oversubscribed exactly when the node's ranks x
 * threads outnumber its processors. */
static void detection_follows_the_node(px_engine *e)
{
    (void)e;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int local = 1;
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
    const int threads = default_team;
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    const int want = local > 1 && (long)local * threads > online;
    const char *policy = getenv("PX_WAIT_POLICY");
    const int explicit_spin = policy && strcmp(policy, "active") == 0;
    const int said = strstr(log_text, "oversubscribed (") != NULL;
    if (said != want)
        fprintf(stderr,
                "%s: rank %d: %d local ranks x %d threads on %ld processors: expected %s, "
                "log:\n%s",
                MPI_CHECK_PROG, rank, local, threads, online, want ? "a detection" : "none",
                log_text);
    CHECK(said == want);
    if (want) {
        CHECK(strstr(log_text, explicit_spin ? "yet waits spin" : "engines run as on one") != NULL);
        char needle[64];
        snprintf(needle, sizeof needle, "%d processes x %d threads", local, threads);
        CHECK(strstr(log_text, needle) != NULL);
    }
    if (rank == 0)
        printf("%d ranks (%d on this node) x %d threads on %ld processors: %s%s\n", nranks, local,
               threads, online, want ? "oversubscribed" : "not oversubscribed",
               explicit_spin ? ", PX_WAIT_POLICY=active kept" : "");
}

int main(int argc, char **argv)
{
    /* The default team, one thread per processor of the mask: only the node rule can fire. */
    unsetenv("PX_NUM_THREADS");
    default_team = affinity_cpus();
    px_log_set_handler(keep_log, NULL);
    px_engine *e = mpi_check_start(&argc, &argv);
    px_log_set_handler(NULL, NULL);
    static const mpi_case cases[] = {
        {"detection_follows_the_node", detection_follows_the_node},
        {"ring_in_bounded_time", ring_in_bounded_time},
    };
    mpi_check_run(e, cases, sizeof cases / sizeof *cases, 28);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (px_finalize() != PX_OK)
        ++total;
    if (px_mpi_finalize() != PX_OK)
        ++total;
    if (rank == 0)
        printf("%s: %s\n", MPI_CHECK_PROG, total ? "FAILED" : "ok");
    return total ? 1 : 0;
}
