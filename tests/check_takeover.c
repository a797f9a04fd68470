/* tests/check_takeover.c - the Threads pool's take-over of late workers' blocks
 * (spaces/threads/pool.h, pxi_tpool_run_ex and pxi_tpool_take_over): a fan-in parent whose
 * child's worker has not claimed its block yet runs the block itself, exactly once, as that
 * rank (slot, fan-in order, px_scatter_add replica), and the worker, when it wakes, leaves it.
 * Workers are held back deterministically through the pool's claim hook (tests only). Run with
 * PX_NUM_THREADS 1, 2, 4 and 8 (the pool-level tests use at least 2 ranks). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "core/runtime.h"
#include "px_test.h"
#include "spaces/threads/fanin.h"
#include "spaces/threads/pool.h"
#include "spaces/threads/topo.h"

#define MAX_RANKS 8

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* The claim hook: hold every worker until released (hold_mode 1), or delay it (2). */
static atomic_int hold_mode, released, n_held;

static void hold_worker(int rank)
{
    (void)rank;
    if (atomic_load(&hold_mode) == 2) {
        sleep_us(2000);
        return;
    }
    atomic_fetch_add(&n_held, 1);
    while (!atomic_load(&released))
        sleep_us(200);
}

typedef struct {
    pthread_t launcher;
    atomic_int runs[MAX_RANKS];
    atomic_int on_launcher[MAX_RANKS];
    atomic_int wrong_replica[MAX_RANKS];
    int wait_for_workers; /* every rank waits until every rank runs before its fan-in */
    int nranks;
    int64_t total;
} tjob;

static void join_sum(void *dst, const void *src)
{
    int64_t a, b;
    memcpy(&a, dst, sizeof a);
    memcpy(&b, src, sizeof b);
    a = a * 16 + b; /* order-sensitive: the fan-in's join order shows */
    memcpy(dst, &a, sizeof a);
}

static void tjob_main(pxi_tpool *pool, int rank, unsigned gen, void *arg)
{
    tjob *j = arg;
    atomic_fetch_add(&j->runs[rank], 1);
    if (pthread_equal(pthread_self(), j->launcher))
        atomic_fetch_add(&j->on_launcher[rank], 1);
    if (pxi_exec_rank != rank)
        atomic_fetch_add(&j->wrong_replica[rank], 1);
    if (j->wait_for_workers) /* every rank: a parent waits until its children run */
        for (int r = 1; r < j->nranks; ++r)
            for (int k = 0; k < 20000 && atomic_load(&j->runs[r]) == 0; ++k)
                sleep_us(100);
    int64_t v = rank + 1;
    memcpy(pxi_tpool_slots(pool)[rank].value, &v, sizeof v);
    if (pxi_tpool_fanin(pool, rank, gen, PXI_FANIN_UP, join_sum))
        memcpy(&j->total, pxi_tpool_slots(pool)[0].value, sizeof j->total);
}

/* The binomial tree's join (fanin.h) of values 1..P, computed sequentially. */
static int64_t expected_total(int p)
{
    int64_t val[MAX_RANKS];
    for (int r = 0; r < p; ++r)
        val[r] = r + 1;
    for (int step = 1; step < p; step <<= 1)
        for (int r = 0; r + step < p; r += 2 * step)
            join_sum(&val[r], &val[r + step]);
    return val[0];
}

static int pool_ranks(void)
{
    int p = px_test_env_int("PX_NUM_THREADS", 2);
    return p < 2 ? 2 : p > MAX_RANKS ? MAX_RANKS : p;
}

typedef struct {
    pxi_topo *topo;
    int pu[MAX_RANKS];
    pxi_tpool *pool;
    int p;
} pool_fixture;

static void pool_open(pool_fixture *f)
{
    f->p = pool_ranks();
    ck_assert_int_eq(pxi_topo_load(&f->topo, NULL, NULL), PX_OK);
    for (int r = 0; r < MAX_RANKS; ++r)
        f->pu[r] = -1; /* unbound: the test may share its cores with anything */
    ck_assert_int_eq(pxi_tpool_create(&f->pool, f->p, f->topo, f->pu, 0, 0), PX_OK);
}

static void pool_close(pool_fixture *f)
{
    pxi_tpool_set_claim_hook(NULL);
    pxi_tpool_destroy(f->pool);
    pxi_topo_destroy(f->topo);
}

static void run_job(pool_fixture *f, tjob *j, int take_over)
{
    j->launcher = pthread_self();
    j->nranks = f->p;
    pxi_tpool_lock(f->pool);
    pxi_tpool_run_ex(f->pool, tjob_main, j, take_over);
    pxi_tpool_unlock(f->pool);
}

static tjob first_job; /* static: a worker that ran it late would still count here */

START_TEST(test_launcher_runs_the_blocks_of_workers_that_have_not_claimed_them)
{
    pool_fixture f;
    pool_open(&f);
    atomic_store(&hold_mode, 1);
    atomic_store(&released, 0);
    atomic_store(&n_held, 0);
    pxi_tpool_set_claim_hook(hold_worker);
    memset(&first_job, 0, sizeof first_job);
    /* Every worker is held before its claim: the launch returns only because the launcher ran
     * every block itself (without take-over it would wait for ever: the test's timeout). */
    run_job(&f, &first_job, 1);
    ck_assert_int_eq(pxi_tpool_taken_over(f.pool), f.p - 1);
    for (int r = 0; r < f.p; ++r) {
        ck_assert_int_eq(atomic_load(&first_job.runs[r]), 1);
        ck_assert_int_eq(atomic_load(&first_job.on_launcher[r]), 1);
        ck_assert_int_eq(atomic_load(&first_job.wrong_replica[r]), 0);
    }
    ck_assert_int_eq(first_job.total, expected_total(f.p));
    /* Released, the workers find their blocks claimed and leave them; the next job (no hook)
     * runs on them as usual, its blocks claimed by their own workers. */
    pxi_tpool_set_claim_hook(NULL);
    atomic_store(&released, 1);
    for (int k = 0; k < 2000 && atomic_load(&n_held) < f.p - 1; ++k)
        sleep_us(100);
    tjob second;
    memset(&second, 0, sizeof second);
    second.wait_for_workers = 1;
    run_job(&f, &second, 1);
    for (int r = 0; r < f.p; ++r) {
        ck_assert_int_eq(atomic_load(&first_job.runs[r]), 1);
        ck_assert_int_eq(atomic_load(&second.runs[r]), 1);
        ck_assert_int_eq(atomic_load(&second.on_launcher[r]), r == 0);
    }
    ck_assert_int_eq(second.total, expected_total(f.p));
    ck_assert_int_eq(pxi_tpool_taken_over(f.pool), f.p - 1);
    pool_close(&f);
}
END_TEST

START_TEST(test_a_job_without_take_over_waits_for_its_late_workers)
{
    pool_fixture f;
    pool_open(&f);
    atomic_store(&hold_mode, 2); /* every worker 2 ms late */
    pxi_tpool_set_claim_hook(hold_worker);
    for (int rep = 0; rep < 3; ++rep) {
        tjob j;
        memset(&j, 0, sizeof j);
        run_job(&f, &j, 0);
        for (int r = 0; r < f.p; ++r) {
            ck_assert_int_eq(atomic_load(&j.runs[r]), 1);
            ck_assert_int_eq(atomic_load(&j.on_launcher[r]), r == 0);
        }
        ck_assert_int_eq(j.total, expected_total(f.p));
    }
    ck_assert_int_eq(pxi_tpool_taken_over(f.pool), 0);
    pool_close(&f);
}
END_TEST

/* Through the space: with its workers late, a floating-point sum (the join order shows in its
 * bits) and a visit count give what they give with workers on time. */
static void sum_values(int64_t b, int64_t e, void *ctx, void *acc)
{
    (void)ctx;
    for (int64_t i = b; i < e; ++i)
        *(double *)acc += 1.0 / (double)(i + 1);
}

static void visit(int64_t b, int64_t e, void *ctx)
{
    atomic_int *count = ctx;
    for (int64_t i = b; i < e; ++i)
        atomic_fetch_add_explicit(&count[i], 1, memory_order_relaxed);
}

#define N_VISIT 30011

static atomic_int visits[N_VISIT];

START_TEST(test_late_workers_give_the_same_bits_and_visit_every_index_once)
{
    px_space *s = px_space_by_name("threads");
    ck_assert_ptr_nonnull(s);
    double on_time = 0, late = 0;
    ck_assert_int_eq(px_parallel_reduce_fn(s, "sum", px_range(0, 30011), sum_values, NULL,
                                           &px_sum_f64, &on_time),
                     PX_OK);
    atomic_store(&hold_mode, 2);
    pxi_tpool_set_claim_hook(hold_worker);
    for (int rep = 0; rep < 3; ++rep) {
        late = 0;
        ck_assert_int_eq(px_parallel_reduce_fn(s, "sum", px_range(0, 30011), sum_values, NULL,
                                               &px_sum_f64, &late),
                         PX_OK);
        ck_assert_msg(memcmp(&late, &on_time, sizeof late) == 0, "sum %.17g, late workers %.17g",
                      on_time, late);
        for (int i = 0; i < N_VISIT; ++i)
            atomic_store(&visits[i], 0);
        ck_assert_int_eq(px_parallel_for_fn(s, "visit", px_range(0, N_VISIT), visit, visits),
                         PX_OK);
        for (int i = 0; i < N_VISIT; ++i)
            ck_assert_msg(atomic_load(&visits[i]) == 1, "index %d visited %d times", i,
                          atomic_load(&visits[i]));
    }
    pxi_tpool_set_claim_hook(NULL);
}
END_TEST

static Suite *takeover_suite(void)
{
    Suite *s = suite_create("takeover");
    TCase *pool = tcase_create("pool");
    tcase_set_timeout(pool, 60);
    tcase_add_test(pool, test_launcher_runs_the_blocks_of_workers_that_have_not_claimed_them);
    tcase_add_test(pool, test_a_job_without_take_over_waits_for_its_late_workers);
    suite_add_tcase(s, pool);
    TCase *space = tcase_create("space");
    tcase_add_checked_fixture(space, px_test_setup, px_test_teardown);
    tcase_set_timeout(space, 60);
    tcase_add_test(space, test_late_workers_give_the_same_bits_and_visit_every_index_once);
    suite_add_tcase(s, space);
    return s;
}

int main(void)
{
    return px_test_run(takeover_suite());
}
