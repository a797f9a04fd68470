/* tests/check_engine_common.c - helpers the engine suites share (check_engine_common.h). */
#include "check_engine_common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

atomic_int gate_open, gate_started, gate_done;

px_engine_kind kind_under_test(void)
{
    const char *s = getenv("PX_ENGINE");
    if (s && strcmp(s, "naive") == 0)
        return PX_ENGINE_NAIVE;
    if (s && strcmp(s, "pooled") == 0)
        return PX_ENGINE_POOLED;
    return PX_ENGINE_PER_DEVICE;
}

void spin_us(int us)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if ((t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000 >= us)
            return;
    }
}

void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}
int fail_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    return (int)(intptr_t)arg;
}

atomic_int ran_count;
int count_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    atomic_fetch_add(&ran_count, 1);
    return PX_OK;
}

void async_defer(const px_run_context *rc, px_on_complete *done, void *arg)
{
    (void)rc;
    async_slot *s = arg;
    s->done = done;
    atomic_store_explicit(&s->ready, 1, memory_order_release);
}

int gate_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    atomic_store(&gate_started, 1);
    while (!atomic_load(&gate_open))
        sleep_ms(1);
    atomic_store(&gate_done, 1);
    return PX_OK;
}

void gate_close(px_engine *e, px_var *v)
{
    atomic_store(&gate_open, 0);
    atomic_store(&gate_started, 0);
    atomic_store(&gate_done, 0);
    if (kind_under_test() == PX_ENGINE_NAIVE)
        return;
    ck_assert_int_eq(
        px_engine_push_sync(e, gate_fn, NULL, CPU, NULL, 0, &v, 1, PX_FN_NORMAL, 0, "gate"), PX_OK);
    while (!atomic_load(&gate_started))
        sleep_ms(1);
}

void gate_open_now(void)
{
    atomic_store(&gate_open, 1);
}

void gate_release(void)
{
    atomic_store(&gate_open, 1);
    if (kind_under_test() == PX_ENGINE_NAIVE)
        return;
    while (!atomic_load(&gate_done))
        sleep_ms(1);
}

atomic_int slow_done;
int slow_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    sleep_ms(20);
    atomic_store(&slow_done, 1);
    return PX_OK;
}

int incr_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    ++*(int *)arg;
    return PX_OK;
}

void fill_fn(int64_t b, int64_t e, void *ctx)
{
    double *x = ctx;
    for (int64_t i = b; i < e; ++i)
        x[i] = (double)i;
}
