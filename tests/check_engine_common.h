/* tests/check_engine_common.h - what the engine suites (tests/check_engine_*.c) share: the
 * engine kind under test, timing helpers, and op functions used by several suites. */
#ifndef PX_CHECK_ENGINE_COMMON_H
#define PX_CHECK_ENGINE_COMMON_H

#include <stdatomic.h>
#include <stdint.h>

#include "px_test.h"

static const px_context CPU = {PX_DEV_CPU, 0};

/* The engine kind under test, from PX_ENGINE (ctest registers one run per kind). */
px_engine_kind kind_under_test(void);
/* Busy-wait @us microseconds / sleep @ms milliseconds. */
void spin_us(int us);
void sleep_ms(int ms);

/* An op that sets gate_started, holds its worker until gate_open is set, then sets gate_done
 * (a gate closed again before its op saw the opening would hold the next round behind it). */
extern atomic_int gate_open, gate_started, gate_done;
int gate_fn(const px_run_context *rc, void *arg);
/* Push gate_fn on @v and wait until a worker runs it; nothing on the naive engine, whose
 * pusher would run it. */
void gate_close(px_engine *e, px_var *v);
/* Open the gate without waiting for its op. */
void gate_open_now(void);
/* Open the gate and wait until its op returned (at once on the naive engine). */
void gate_release(void);
/* An op that fails with the status its argument carries ((intptr_t)arg). */
int fail_fn(const px_run_context *rc, void *arg);
/* An op that counts its runs in ran_count. */
extern atomic_int ran_count;
int count_fn(const px_run_context *rc, void *arg);

/* An op that sleeps, then sets slow_done. */
extern atomic_int slow_done;
int slow_fn(const px_run_context *rc, void *arg);
/* An op that increments the int its argument points to. */
int incr_fn(const px_run_context *rc, void *arg);

/* A kernel that writes x[i] = i into the double array @ctx. */
void fill_fn(int64_t b, int64_t e, void *ctx);

/* An async op (async_defer) that stores its completion handle in the slot and sets ready;
 * the test completes it later. */
typedef struct {
    px_on_complete *done;
    atomic_int ready;
} async_slot;

void async_defer(const px_run_context *rc, px_on_complete *done, void *arg);

/* What an op that waits, finalizes or pushes from inside reports back. */
typedef struct {
    px_engine *e;
    px_var *v;
    int st_var, st_all, st_destroy;
} inner_arg;

#endif
