/* tests/mpi_check.h - what the MPI test programs share (tests/check_mpi.c,
 * tests/check_mpi_args.c, tests/check_graph_mpi.c, tests/check_mpi_oversub.c): plain MPI programs
 * run under mpirun, not Check suites (Check forks each test, and a forked MPI rank cannot talk to
 * the others). Every rank runs every case; CHECK/CHECK_RC count failed checks on this rank, main
 * sums them over the ranks. Include once, from the program's own .c file, after defining
 * MPI_CHECK_PROG (the program's name in messages). */
#ifndef PX_TESTS_MPI_CHECK_H
#define PX_TESTS_MPI_CHECK_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parex.h"

static int rank, nranks, failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s: rank %d: %s:%d: %s failed\n", MPI_CHECK_PROG, rank, __func__,     \
                    __LINE__, #cond);                                                              \
            ++failures;                                                                            \
        }                                                                                          \
    } while (0)
#define CHECK_RC(call, want)                                                                       \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != (want)) {                                                                       \
            fprintf(stderr, "%s: rank %d: %s:%d: %s gave %s, wanted %s\n", MPI_CHECK_PROG, rank,   \
                    __func__, __LINE__, #call, px_strerror(rc_), px_strerror(want));               \
            ++failures;                                                                            \
        }                                                                                          \
    } while (0)

/* Wall-clock seconds (CLOCK_MONOTONIC), for timed waits and bounds. */
static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds on @p clock: the process's (CLOCK_PROCESS_CPUTIME_ID, every thread's, parex's
 * and MPI's included) or the calling thread's (CLOCK_THREAD_CPUTIME_ID). */
static inline double cpu_seconds(clockid_t clock)
{
    struct timespec c;
    clock_gettime(clock, &c);
    return (double)c.tv_sec + 1e-9 * (double)c.tv_nsec;
}

/* Log capture: bad-input and failure tests check that the library said why. The last
 * error-level message (an engine's warn-level line naming a failed op follows the MPI error),
 * and counts of all messages and of those naming a cancel. */
static char last_log[512];
static int n_logs, n_cancel_logs;

static inline void capture_log(px_log_level level, const char *msg, void *user)
{
    (void)user;
    ++n_logs;
    n_cancel_logs += strstr(msg, "cancel") != NULL;
    if (level == PX_LOG_ERROR)
        snprintf(last_log, sizeof last_log, "%s", msg);
}

/* Capture the log (@on) or give it back; the counts and the last message stay readable after
 * quiet(0). */
static inline void quiet(int on)
{
    if (on) {
        n_logs = n_cancel_logs = 0;
        last_log[0] = 0;
    }
    px_log_set_handler(on ? capture_log : NULL, NULL);
}

static inline void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The ring neighbours of this rank. */
static inline int left(void)
{
    return (rank + nranks - 1) % nranks;
}
static inline int right(void)
{
    return (rank + 1) % nranks;
}

/* One case: a name for the report and the function every rank runs. */
typedef struct mpi_case {
    const char *name;
    void (*fn)(px_engine *e);
} mpi_case;

/* px_mpi_init, then rank and nranks, then px_initialize; the default engine. Exits (before MPI
 * is up) or aborts the job when either fails. */
static px_engine *mpi_check_start(int *argc, char ***argv)
{
    if (px_mpi_init(argc, argv) != PX_OK) {
        fprintf(stderr, "%s: px_mpi_init failed\n", MPI_CHECK_PROG);
        exit(1);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (px_initialize(argc, argv) != PX_OK) {
        fprintf(stderr, "%s: px_initialize failed\n", MPI_CHECK_PROG);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return px_engine_default();
}

/* Run @n cases in order on every rank, a barrier after each; rank 0 prints each name padded to
 * @width with "ok" or "FAILED" (this rank's checks). */
static void mpi_check_run(px_engine *e, const mpi_case *cases, size_t n, int width)
{
    for (size_t i = 0; i < n; ++i) {
        int before = failures;
        cases[i].fn(e);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            printf("%-*s %s\n", width, cases[i].name, failures == before ? "ok" : "FAILED");
    }
}

/* The end of a run: px_finalize and px_mpi_finalize (each checked), the failures summed over
 * the ranks; rank 0 prints "@what: P rank(s), N failed check(s)". Returns the exit status:
 * 0 when no check failed on any rank, else 1. */
static inline int mpi_check_finish(const char *what)
{
    CHECK_RC(px_finalize(), PX_OK);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_RC(px_mpi_finalize(), PX_OK);
    if (rank == 0)
        printf("%s: %d rank(s), %d failed check(s)\n", what, nranks, total);
    return total ? 1 : 0;
}

#endif
