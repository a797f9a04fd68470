/* tests/instance_common.h - what the instance suites (check_instance*.c) share: the fixture,
 * which initializes parex and picks the space under test from PX_TEST_SPACE (serial or
 * threads; PX_NUM_THREADS sets the rank count, tests/instance.cmake), a bounded wait on a
 * flag, so that two kernels which fail to meet fail the test instead of hanging it, and a
 * kernel held at a gate (work in flight while the test acts). */
#ifndef PX_TESTS_INSTANCE_COMMON_H
#define PX_TESTS_INSTANCE_COMMON_H

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "px_test.h"

#define WAIT_S 20

static px_space *space;
static const char *space_name;
static int nranks;
static int threads_space;

static inline void setup(void)
{
    px_test_setup();
    px_test_log_capture();
    space_name = getenv("PX_TEST_SPACE");
    if (!space_name || !*space_name)
        space_name = "threads";
    space = px_space_by_name(space_name);
    if (!space)
        ck_abort_msg("execution space '%s' (PX_TEST_SPACE) is not available", space_name);
    nranks = px_space_concurrency(space);
    ck_assert_int_ge(nranks, 1);
    threads_space = strcmp(space_name, "threads") == 0;
}

static inline void teardown(void)
{
    px_test_teardown();
}

static inline double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Wait until *f is nonzero, at most WAIT_S seconds; 1 when it was set. */
static inline int wait_flag(atomic_int *f)
{
    double end = now_s() + WAIT_S;
    while (!atomic_load_explicit(f, memory_order_acquire)) {
        if (now_s() > end)
            return 0;
        sched_yield();
    }
    return 1;
}

/* Kernel: count the indices it ran into the atomic_llong at @ctx. */
static inline void count_indices(int64_t b, int64_t e, void *ctx)
{
    atomic_fetch_add_explicit((atomic_llong *)ctx, e - b, memory_order_relaxed);
}

/* A launch of @n indices on @s visits each once. */
static inline void check_launch_on(px_space *s, int64_t n)
{
    atomic_llong hits;
    atomic_init(&hits, 0);
    ck_assert_int_eq(px_parallel_for_fn(s, "count", px_range(0, n), count_indices, &hits), PX_OK);
    ck_assert_int_eq(atomic_load(&hits), n);
}

/* A kernel held at a gate: index 0 says it started, waits (bounded) until the gate opens, says
 * whether it saw it open (met), then that it is done. */
typedef struct gate {
    atomic_int started, open, met, done;
} gate;

static inline void wait_at_gate(int64_t b, int64_t e, void *ctx)
{
    gate *g = ctx;
    if (b > 0 || e <= 0)
        return;
    atomic_store_explicit(&g->started, 1, memory_order_release);
    atomic_store_explicit(&g->met, wait_flag(&g->open), memory_order_release);
    atomic_store_explicit(&g->done, 1, memory_order_release);
}

/* A thread's launch of wait_at_gate on s (pthread_create argument): rc is its status. */
typedef struct gated_launch {
    px_space *s;
    gate *g;
    int rc;
} gated_launch;

static inline void *launch_gated(void *arg)
{
    gated_launch *gl = arg;
    gl->rc = px_parallel_for_fn(gl->s, "gated", px_range(0, 1), wait_at_gate, gl->g);
    return NULL;
}

/* A thread that opens the gate once the kernel behind it started. */
static inline void *open_gate_later(void *arg)
{
    gate *g = arg;
    (void)wait_flag(&g->started);
    atomic_store_explicit(&g->open, 1, memory_order_release);
    return NULL;
}

#endif
