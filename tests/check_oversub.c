/* tests/check_oversub.c - px_initialize's oversubscription rule and action (core/oversub.h):
 * a team larger than the process's processors, or the launcher's local ranks x threads above
 * the node's processors, throttles every wait budget and makes engines run as on one
 * processor, logged once; an explicit PX_WAIT_POLICY / PX_SPIN_US wins; a process within its
 * processors keeps the old budgets. Every case derives its thread counts from the processors
 * it finds, so the suite passes as it is and under `taskset -c 0` (tests/engine.cmake). Check
 * forks each case, so the environment a case sets stays in it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/os.h"
#include "base/wait.h"
#include "core/engine/engine_impl.h"
#include "core/oversub.h"
#include "px_test.h"

static void set_int_env(const char *name, long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", v);
    setenv(name, buf, 1);
}

static int online(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* px_initialize with the log captured; the launchers' variables are cleared first unless the
 * case set them (@keep_launcher). */
static void init_captured(int keep_launcher)
{
    if (!keep_launcher) {
        unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
        unsetenv("MPI_LOCALNRANKS");
    }
    px_test_log_capture();
    px_test_log_clear();
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
}

/* The default engine's processor count as engine_create took it. */
static int engine_cpus(void)
{
    px_engine *e = px_engine_default();
    ck_assert_ptr_nonnull(e);
    return ((pxi_engine *)e)->n_cpus;
}

START_TEST(test_team_larger_than_the_processors_throttles_waits_and_engines)
{
    int cpus = pxi_os_num_cpus();
    set_int_env("PX_NUM_THREADS", cpus + 1);
    init_captured(0);
    const pxi_oversub *o = pxi_oversub_get();
    ck_assert_int_eq(o->threads, cpus + 1);
    ck_assert_int_eq(o->cpus, cpus);
    ck_assert_int_eq(o->oversubscribed, 1);
    ck_assert_int_eq(o->acted, 1);
    ck_assert_str_eq(o->rule, "process");
    ck_assert(pxi_oversub_active());
    /* Every group's budget is the throttled one, a single thread's included. */
    ck_assert_int_eq(pxi_wait_spin_ns(1, 64), (int64_t)PXI_WAIT_SPIN_US_THROTTLED * 1000);
    ck_assert(pxi_wait_throttled(1, 64));
    ck_assert_int_eq(engine_cpus(), 1);
    ck_assert(px_test_log_contains("oversubscribed"));
    ck_assert(px_test_log_contains("engines run as on one processor"));
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

START_TEST(test_local_ranks_times_threads_above_the_node_is_oversubscribed)
{
    int cpus = pxi_os_num_cpus();
    set_int_env("PX_NUM_THREADS", cpus);
    /* Enough ranks of this size to outnumber the node's online processors. */
    int ranks = online() / cpus + 1;
    set_int_env("OMPI_COMM_WORLD_LOCAL_SIZE", ranks);
    init_captured(1);
    const pxi_oversub *o = pxi_oversub_get();
    ck_assert_int_eq(o->local_ranks, ranks);
    ck_assert_int_eq(o->node_cpus, online());
    ck_assert_str_eq(o->rule, "node");
    ck_assert_int_eq(o->acted, 1);
    ck_assert_int_eq(engine_cpus(), 1);
    ck_assert(px_test_log_contains("processes x"));
    ck_assert_int_eq(px_finalize(), PX_OK);
    /* MPICH's Hydra says it with another variable. */
    unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    set_int_env("MPI_LOCALNRANKS", ranks);
    init_captured(1);
    ck_assert_str_eq(pxi_oversub_get()->rule, "node");
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

START_TEST(test_ranks_that_fit_the_node_keep_the_default_budget)
{
    /* One thread per rank and as many ranks as processors (mpirun -np N bound one per core),
     * then one rank using all it may: nothing changes. */
    set_int_env("PX_NUM_THREADS", 1);
    set_int_env("OMPI_COMM_WORLD_LOCAL_SIZE", online());
    init_captured(1);
    const pxi_oversub *o = pxi_oversub_get();
    ck_assert_int_eq(o->oversubscribed, 0);
    ck_assert_str_eq(o->rule, "none");
    ck_assert(!pxi_oversub_active());
    ck_assert_int_eq(pxi_wait_spin_ns(1, 1), (int64_t)PXI_WAIT_SPIN_US_DEFAULT * 1000);
    ck_assert_int_eq(engine_cpus(), pxi_os_num_cpus());
    ck_assert(!px_test_log_contains("oversubscribed"));
    ck_assert_int_eq(px_finalize(), PX_OK);

    unsetenv("PX_NUM_THREADS"); /* the default team: one thread per processor */
    init_captured(0);
    ck_assert_int_eq(pxi_oversub_get()->threads, pxi_os_num_cpus());
    ck_assert_int_eq(pxi_oversub_get()->oversubscribed, 0);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

START_TEST(test_explicit_wait_policy_or_spin_wins_over_the_detection)
{
    set_int_env("PX_NUM_THREADS", pxi_os_num_cpus() + 1);
    setenv("PX_WAIT_POLICY", "active", 1);
    init_captured(0);
    const pxi_oversub *o = pxi_oversub_get();
    ck_assert_int_eq(o->oversubscribed, 1);
    ck_assert_int_eq(o->acted, 0);
    ck_assert(!pxi_oversub_active());
    ck_assert_int_eq(pxi_wait_configured_spin_us(), PXI_WAIT_SPIN_US_ACTIVE);
    ck_assert_int_eq(pxi_wait_spin_ns(1, 1), (int64_t)PXI_WAIT_SPIN_US_ACTIVE * 1000);
    ck_assert_int_eq(engine_cpus(), pxi_os_num_cpus());
    ck_assert(px_test_log_contains("yet waits spin")); /* a warning: spinning kept */
    ck_assert_int_eq(px_finalize(), PX_OK);
    unsetenv("PX_WAIT_POLICY");

    setenv("PX_SPIN_US", "0", 1);
    init_captured(0);
    ck_assert_int_eq(pxi_oversub_get()->acted, 0);
    ck_assert_int_eq(pxi_wait_configured_spin_us(), 0);
    ck_assert(px_test_log_contains("keep the explicit"));
    ck_assert_int_eq(px_finalize(), PX_OK);
    unsetenv("PX_SPIN_US");

    /* The next initialize decides afresh: the throttle is back without the variables. */
    init_captured(0);
    ck_assert_int_eq(pxi_oversub_get()->acted, 1);
    ck_assert_int_eq(pxi_wait_spin_ns(1, 64), (int64_t)PXI_WAIT_SPIN_US_THROTTLED * 1000);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

START_TEST(test_malformed_launcher_rank_count_is_ignored)
{
    set_int_env("PX_NUM_THREADS", pxi_os_num_cpus());
    const char *bad[] = {"", "abc", "2x", "0", "-3", "99999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        setenv("OMPI_COMM_WORLD_LOCAL_SIZE", bad[i], 1);
        init_captured(1);
        ck_assert_msg(pxi_oversub_get()->local_ranks == 1, "'%s' gave %d ranks", bad[i],
                      pxi_oversub_get()->local_ranks);
        ck_assert_int_eq(pxi_oversub_get()->oversubscribed, 0);
        ck_assert_int_eq(px_finalize(), PX_OK);
    }
}
END_TEST

/* Waits still work when throttled: an oversubscribed engine runs a chain of ops its waiter
 * holds, and the threads space's fork/join completes (sleeping, not spinning, between). */
static int add_one(const px_run_context *rc, void *arg)
{
    (void)rc;
    ++*(int *)arg;
    return PX_OK;
}

START_TEST(test_oversubscribed_engine_and_team_complete_their_work)
{
    set_int_env("PX_NUM_THREADS", pxi_os_num_cpus() + 1);
    init_captured(0);
    ck_assert(pxi_oversub_active());
    px_engine *e = px_engine_default();
    px_var *v = px_var_new(e);
    ck_assert_ptr_nonnull(v);
    const px_context cpu = {PX_DEV_CPU, 0};
    int count = 0;
    for (int i = 0; i < 1000; ++i)
        ck_assert_int_eq(px_engine_push_sync(e, add_one, &count, cpu, NULL, 0, &v, 1, PX_FN_NORMAL,
                                             0, "add_one"),
                         PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
    ck_assert_int_eq(count, 1000);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

static Suite *oversub_suite(void)
{
    Suite *s = suite_create("oversub");
    TCase *tc = tcase_create("oversub");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_team_larger_than_the_processors_throttles_waits_and_engines);
    tcase_add_test(tc, test_local_ranks_times_threads_above_the_node_is_oversubscribed);
    tcase_add_test(tc, test_ranks_that_fit_the_node_keep_the_default_budget);
    tcase_add_test(tc, test_explicit_wait_policy_or_spin_wins_over_the_detection);
    tcase_add_test(tc, test_malformed_launcher_rank_count_is_ignored);
    tcase_add_test(tc, test_oversubscribed_engine_and_team_complete_their_work);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(oversub_suite());
}
