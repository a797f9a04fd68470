/* tests/check_mpi_oversub.c - oversubscription across the ranks of a node (core/oversub.h)
 * under mpirun (tests/mpi.cmake): every rank's px_initialize must say it is oversubscribed
 * exactly when the node's ranks x threads outnumber its processors, counted here
 * independently of the library (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) for the ranks, the
 * affinity mask for the threads of a default team, the online processors for the node); an
 * explicit PX_WAIT_POLICY keeps the spinning budget and says so. Then a ring of engine MPI
 * messages and allreduces, whose waiter holds the lanes and the MPI progress when
 * oversubscribed, must finish with the right values within a time bound.
 *
 * A wait for a late message (wait_gives_the_core_back) watches the waiting thread's
 * sched_yield and MPI_Testsome calls through interposed definitions (MPI's profiling interface,
 * and a sched_yield of the executable that the libraries resolve to): where the MPI library's
 * test yields when idle (Open MPI's mpi_yield_when_idle, which mpirun sets on an
 * oversubscribed node) the waiter never yields again straight after such a test, and where it
 * does not the waiter yields itself; the library's tests yield exactly when parex said they
 * do; and the waiter's CPU time stays a small part of a long wait. What parex decided about
 * that yield (logged at px_mpi_init) must be what MPI_T reads (tests_yield_as_mpi_t_says).
 *
 * A plain MPI program, as check_mpi (Check's fork per test does not mix with MPI). Run with the
 * log at info level (PX_LOG_LEVEL=info) and ranks unbound (--bind-to none). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <sched.h>
#include <stdatomic.h>
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

/* ---- yields per look ------------------------------------------------------------------ */

/* Counted on the waiting thread only (rank 0's main thread, which runs the engine's wait,
 * core/engine/calls.c help_until), while @counting: the whole process's yields also hold the
 * engine workers' and the progress thread's, whose number follows the machine's load, not the
 * waiter's rule. Each counter is written by that one thread and read by it after the waits. */
static _Thread_local int is_waiter;   /* set by the waiting thread */
static _Thread_local int in_test;     /* inside an interposed MPI_Testsome */
static _Thread_local int test_yields; /* the library's yields within the current test */
/* The last thing the waiter did was a test that found nothing and yielded inside the library:
 * its next yield, before another test, is a second yield for one look. */
static _Thread_local int after_yielding_test;
static atomic_int counting;
static long lib_yields;    /* yields inside the library's tests */
static long own_yields;    /* the waiter's other yields */
static long double_yields; /* own yields straight after a test that yielded */
static long empty_tests;   /* tests that completed nothing */

/* Every sched_yield of the process (parex's and the MPI library's; default visibility: the
 * build hides symbols unless told). */
/* The real sched_yield, looked up by the first caller; parex's workers may race for it, and
 * each stores the same dlsym result (relaxed: nothing else is published with it). */
typedef int (*yield_fn)(void);
static _Atomic(yield_fn) real_yield;

__attribute__((visibility("default"))) int sched_yield(void)
{
    yield_fn real = atomic_load_explicit(&real_yield, memory_order_relaxed);
    if (!real) {
        *(void **)&real = dlsym(RTLD_NEXT, "sched_yield");
        atomic_store_explicit(&real_yield, real, memory_order_relaxed);
    }
    if (is_waiter && atomic_load_explicit(&counting, memory_order_relaxed)) {
        if (in_test) {
            ++test_yields;
        } else {
            ++own_yields;
            double_yields += after_yielding_test;
            after_yielding_test = 0;
        }
    }
    return real ? real() : 0;
}

/* parex's looks at its requests (core/engine/mpi_progress.c tests them all with one
 * MPI_Testsome). */
int MPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int idx[], MPI_Status st[])
{
    const int watch = is_waiter && atomic_load_explicit(&counting, memory_order_relaxed);
    if (watch) {
        in_test = 1;
        test_yields = 0;
    }
    int rc = PMPI_Testsome(incount, reqs, outcount, idx, st);
    if (watch) {
        in_test = 0;
        const int empty = rc == MPI_SUCCESS && (*outcount == 0 || *outcount == MPI_UNDEFINED);
        empty_tests += empty;
        lib_yields += test_yields;
        after_yielding_test = empty && test_yields > 0;
    }
    return rc;
}

#define LATE_MS     300 /* the long wait: CPU time */
#define SHORT_US    300 /* the short waits: yields per look, within the waiter's poll budget */
#define SHORT_WAITS 100
#define MIN_EMPTY   20   /* empty looks wanted over the short waits */
#define MAX_WAITS   2000 /* short waits at most */

/* Rank 1 sends rank 0 message @tag @late_us late; rank 0 waits for it on the engine. */
static void late_message(px_engine *e, int tag, long late_us)
{
    int v = -1;
    if (rank == 1) {
        struct timespec ts = {late_us / 1000000L, (late_us % 1000000L) * 1000L};
        nanosleep(&ts, NULL);
        v = tag;
        MPI_Send(&v, 1, MPI_INT, 0, tag, MPI_COMM_WORLD);
    } else if (rank == 0) {
        px_var *vr = px_var_new(e);
        CHECK(vr != NULL);
        CHECK_RC(px_engine_push_mpi_irecv(e, &v, 1, MPI_INT, 1, tag, MPI_COMM_WORLD, vr), PX_OK);
        CHECK_RC(px_engine_wait_for_var(e, vr), PX_OK);
        CHECK(v == tag);
        CHECK_RC(px_var_delete(e, vr), PX_OK);
    }
}

/* Rank 0 waits for late messages from rank 1: SHORT_WAITS or more of SHORT_US, during which its
 * waiter (holding progress when oversubscribed) yields once per empty look: inside the library's
 * test where that test yields (exactly where parex logged so), never again before its next
 * look; by itself where it does not. Then one of LATE_MS, over which its CPU time stays below
 * a third of the wait (in one of up to 3 tries). PX_WAIT_POLICY=active asks for spinning: only the
 * values are checked. */
static void wait_gives_the_core_back(px_engine *e)
{
    if (nranks < 2)
        return;
    const char *policy = getenv("PX_WAIT_POLICY");
    const int spin = policy && strcmp(policy, "active") == 0;
    const int lib_yield = strstr(log_text, "tests yield the processor") != NULL;
    is_waiter = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    lib_yields = own_yields = double_yields = empty_tests = 0;
    after_yielding_test = 0;
    atomic_store(&counting, rank == 0);
    /* On a loaded machine a message may arrive before the waiter's first look: wait again until
     * MIN_EMPTY looks found nothing (rank 0 tells rank 1 whether to send another). */
    int waits = 0;
    for (int more = 1; more;) {
        late_message(e, 10 + waits % 2, SHORT_US);
        if (++waits < SHORT_WAITS)
            continue;
        atomic_store(&counting, 0);
        more = empty_tests < MIN_EMPTY && waits < MAX_WAITS;
        MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
        atomic_store(&counting, rank == 0 && more);
    }
    /* The wall clock starts before the barrier, which rank 1 leaves (and starts its LATE_MS)
     * only after rank 0 entered it: the wait lasts LATE_MS at least, however late rank 0 is
     * scheduled out of the barrier. The CPU time counts from after it (its polls excluded).
     * Past the spin budget the waiter sleeps 50-250 us between looks, and each wake-up costs
     * more while other tests load the machine (0.12 s of CPU over 0.3 s once in CI, beside 2
     * spinning ranks; 0.02-0.03 s otherwise): a wait over the bound is waited again, up to 3
     * times, where a waiter that spins would take the whole wait every time. */
    double wall = 0, cpu = 0, waiter = 0;
    for (int attempt = 1;; ++attempt) {
        const double t0 = MPI_Wtime();
        MPI_Barrier(MPI_COMM_WORLD);
        const double c0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID),
                     w0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
        late_message(e, 12, LATE_MS * 1000L);
        wall = MPI_Wtime() - t0;
        cpu = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
        waiter = cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - w0;
        int again = rank == 0 && !spin && cpu >= wall / 3 && attempt < 3;
        MPI_Bcast(&again, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!again)
            break;
        if (rank == 0)
            printf("rank 0: a wait of %.3f s took %.3f s CPU (%.3f s the waiter's): once more\n",
                   wall, cpu, waiter);
    }
    if (rank == 0) {
        printf("rank 0: %d waits of %d us: %ld empty looks, %ld yields in them, %ld own yields "
               "(%ld straight after a yielding look); a wait of %.3f s: %.3f s CPU (%.3f s the "
               "waiter's)\n",
               waits, SHORT_US, empty_tests, lib_yields, own_yields, double_yields, wall, cpu,
               waiter);
        CHECK(wall >= 0.99 * LATE_MS * 1e-3); /* 1 %: MPI_Wtime against nanosleep's clock */
        CHECK(empty_tests >= MIN_EMPTY);      /* each message comes SHORT_US after its wait began */
        /* What the library did is what parex said it does (mpi_yield_when_idle). */
        CHECK(lib_yield ? lib_yields > 0 : lib_yields == 0);
        if (!spin) {
            CHECK(double_yields == 0);
            if (!lib_yield)
                CHECK(own_yields > 0);
            CHECK(cpu < wall / 3);
        }
    }
    is_waiter = 0;
    MPI_Barrier(MPI_COMM_WORLD);
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

/* Whether the MPI library's tests yield when idle: what parex logged at px_mpi_init (info)
 * must be the value MPI_T reads from Open MPI's mpi_yield_when_idle, and under Open MPI 4's
 * mpirun it must come from the environment, without MPI_T's start-up (which opens every
 * component of Open MPI: 0.2 s a rank with Debian's libfabric). */
static void tests_yield_as_mpi_t_says(px_engine *e)
{
    (void)e;
    const int said_yield = strstr(log_text, "tests yield the processor") != NULL;
    const int said_keep = strstr(log_text, "tests keep the processor") != NULL;
    CHECK(said_yield + said_keep == 1);
#ifdef OPEN_MPI
    int provided = 0, idx = 0, set = 0;
    CHECK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) == MPI_SUCCESS);
    CHECK(MPI_T_cvar_get_index("mpi_yield_when_idle", &idx) == MPI_SUCCESS);
    MPI_T_cvar_handle h;
    int count = 0;
    CHECK(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) == MPI_SUCCESS);
    unsigned char buf[64] = {0};
    CHECK(count == 1 && MPI_T_cvar_read(h, buf) == MPI_SUCCESS);
    for (size_t i = 0; i < sizeof buf; ++i)
        set |= buf[i] != 0;
    MPI_T_cvar_handle_free(&h);
    MPI_T_finalize();
    if (said_yield != set)
        fprintf(stderr, "%s: rank %d: MPI_T says mpi_yield_when_idle=%d; log:\n%s", MPI_CHECK_PROG,
                rank, set, log_text);
    CHECK(said_yield == set);
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
    CHECK(strstr(log_text, "when idle (the environment)") != NULL);
#endif
    if (rank == 0)
        printf("the MPI library's tests %s when idle, as MPI_T says\n", set ? "yield" : "keep");
#else
    CHECK(said_keep);
#endif
}

int main(int argc, char **argv)
{
    /* The default team, one thread per processor of the mask: only the node rule can fire. */
    unsetenv("PX_NUM_THREADS");
    default_team = affinity_cpus();
    px_log_set_handler(keep_log, NULL);
    px_log_set_level(PX_LOG_INFO); /* px_mpi_init logs before px_initialize reads PX_LOG_LEVEL */
    px_engine *e = mpi_check_start(&argc, &argv);
    px_log_set_handler(NULL, NULL);
    static const mpi_case cases[] = {
        {"detection_follows_the_node", detection_follows_the_node},
        {"tests_yield_as_mpi_t_says", tests_yield_as_mpi_t_says},
        {"ring_in_bounded_time", ring_in_bounded_time},
        {"wait_gives_the_core_back", wait_gives_the_core_back},
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
