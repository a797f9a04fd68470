/* bench/bench_tools.c - launch latency of an empty PX_FOR with and without tools.
 *
 * Configurations, each a separate px_initialize/px_finalize in the same process, measured on
 * serial and threads (when available):
 *   none         no tool library, no kernel timer: the zero-cost path (pxi_tools_on == 0)
 *   empty-lib    a library with no kokkosp_* callback: parex's own dispatch (id frame, tool
 *                lock) with nothing to call
 *   test-tool    the recording test tool (tests/tools/kptest_tool.c): a real tool's cost
 *   kernel-timer PX_KERNEL_TIMER=1 (its table goes to /dev/null)
 * The configurations are cycled through `rounds` times (interleaved, so a burst of load from
 * other processes hits all of them alike) and each reports its fastest trial: the minimum is
 * the estimator of the intrinsic per-launch cost on a shared machine. Ratios are against
 * "none" on the same space, in the same run.
 *
 * Usage: bench_tools [launches_per_trial] [trials] [rounds] [tool.so] [empty.so]
 *        (defaults: 20000, 5, 5, and the test libraries of this build tree)
 */
#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "parex.h"

#ifndef BENCH_TOOL_PATH
#define BENCH_TOOL_PATH ""
#endif
#ifndef BENCH_EMPTY_TOOL_PATH
#define BENCH_EMPTY_TOOL_PATH ""
#endif

typedef struct {
    int unused;
} empty_args;

PX_FOR(bench_empty, empty_args, i, a)
{
    (void)i;
    (void)a;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define MAX_TRIALS 101

/* Fastest trial's ns per launch of an empty one-index PX_FOR on space @name; < 0 when the
 * space is absent. */
static double measure(const char *name, int launches, int trials)
{
    px_space *s = px_space_by_name(name);
    if (!s)
        return -1;
    empty_args a = {0};
    for (int i = 0; i < launches / 10 + 1; ++i) /* warm up */
        (void)px_parallel_for(s, "bench_empty", px_range(0, 1), &bench_empty, &a, sizeof a);
    double best = 1e300;
    for (int r = 0; r < trials; ++r) {
        double t0 = now_ns();
        for (int i = 0; i < launches; ++i)
            (void)px_parallel_for(s, "bench_empty", px_range(0, 1), &bench_empty, &a, sizeof a);
        double t = (now_ns() - t0) / launches;
        if (t < best)
            best = t;
    }
    return best;
}

/* Finalize with stdout sent to /dev/null (the kernel timer prints its table there). */
static int finalize_silently(void)
{
    fflush(stdout);
    int saved = dup(1);
    int null = open("/dev/null", O_WRONLY);
    if (saved >= 0 && null >= 0)
        dup2(null, 1);
    int rc = px_finalize();
    fflush(stdout);
    if (saved >= 0) {
        dup2(saved, 1);
        close(saved);
    }
    if (null >= 0)
        close(null);
    return rc;
}

#define N_CONFIGS 4
#define N_SPACES  2

int main(int argc, char **argv)
{
    int launches = argc > 1 ? atoi(argv[1]) : 20000;
    int trials = argc > 2 ? atoi(argv[2]) : 5;
    int rounds = argc > 3 ? atoi(argv[3]) : 5;
    const char *tool = argc > 4 ? argv[4] : BENCH_TOOL_PATH;
    const char *empty = argc > 5 ? argv[5] : BENCH_EMPTY_TOOL_PATH;
    if (launches < 1 || trials < 1 || rounds < 1) {
        fprintf(stderr, "usage: bench_tools [launches >= 1] [trials >= 1] [rounds >= 1] "
                        "[tool.so] [empty.so]\n");
        return 2;
    }
    static const struct {
        const char *name;
        int lib; /* 0 none, 1 empty, 2 test tool */
        int timer;
    } configs[N_CONFIGS] = {
        {"none", 0, 0}, {"empty-lib", 1, 0}, {"test-tool", 2, 0}, {"kernel-timer", 0, 1}};
    static const char *const spaces[N_SPACES] = {"serial", "threads"};
    double best[N_CONFIGS][N_SPACES];
    for (int c = 0; c < N_CONFIGS; ++c)
        for (int k = 0; k < N_SPACES; ++k)
            best[c][k] = -1;
    for (int round = 0; round < rounds; ++round) {
        for (int c = 0; c < N_CONFIGS; ++c) {
            const char *lib = configs[c].lib == 1 ? empty : configs[c].lib == 2 ? tool : NULL;
            if (configs[c].lib && (!lib || !lib[0]))
                continue;
            if (configs[c].timer)
                setenv("PX_KERNEL_TIMER", "1", 1);
            else
                unsetenv("PX_KERNEL_TIMER");
            px_settings st;
            px_settings_default(&st);
            st.tools_libs = lib;
            int rc = px_initialize_with(&st);
            if (rc != PX_OK) {
                fprintf(stderr, "px_initialize_with: %s\n", px_strerror(rc));
                return 1;
            }
            for (int k = 0; k < N_SPACES; ++k) {
                double ns = measure(spaces[k], launches, trials);
                if (ns >= 0 && (best[c][k] < 0 || ns < best[c][k]))
                    best[c][k] = ns;
            }
            if (finalize_silently() != PX_OK)
                return 1;
        }
    }
    printf("bench_tools: empty PX_FOR over 1 index; min of %d rounds x %d trials x %d launches\n",
           rounds, trials, launches);
    printf("%-13s %-8s %12s %12s %8s\n", "config", "space", "ns/launch", "+ns", "ratio");
    for (int c = 0; c < N_CONFIGS; ++c) {
        for (int k = 0; k < N_SPACES; ++k) {
            if (best[c][k] < 0) {
                if (k == 0)
                    printf("%-13s (skipped: space or library missing)\n", configs[c].name);
                continue;
            }
            printf("%-13s %-8s %12.1f %12.1f %8.2f\n", configs[c].name, spaces[k], best[c][k],
                   best[c][k] - best[0][k], best[0][k] > 0 ? best[c][k] / best[0][k] : 0.0);
        }
    }
    return 0;
}
