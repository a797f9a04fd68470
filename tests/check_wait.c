/* tests/check_wait.c - the runtime's one wait primitive (base/wait.h): flags wake sleeping
 * waiters and publish the poster's writes, values wrap at 31 bits, events wake sleepers and
 * count them, and the budget follows PX_WAIT_POLICY / PX_SPIN_US and throttles groups that
 * outnumber the processors. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "base/wait.h"
#include "core/settings.h"
#include "px_test.h"

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* ---- flags --------------------------------------------------------------------------------- */

typedef struct {
    pxi_wait_flag flag;
    int payload;   /* written before the post, read after the wait */
    int seen;      /* what the waiter read */
    unsigned want; /* the value it waits for */
} flag_case;

static void *flag_waiter(void *arg)
{
    flag_case *c = arg;
    pxi_wait_flag_until_eq(&c->flag, c->want, 0);
    c->seen = c->payload;
    return NULL;
}

START_TEST(test_flag_post_wakes_a_sleeping_waiter_and_publishes_data)
{
    flag_case c;
    pxi_wait_flag_init(&c.flag, 0);
    c.payload = 0;
    c.seen = -1;
    c.want = 1;
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, flag_waiter, &c), 0);
    /* With a zero budget the waiter marks the word and sleeps within a few polls. */
    for (int i = 0; i < 2000 && !(atomic_load(&c.flag.word) & 1u); ++i)
        sleep_ms(1);
    ck_assert_msg(atomic_load(&c.flag.word) & 1u, "the waiter never went to sleep");
    c.payload = 42;
    pxi_wait_flag_post(&c.flag, 1);
    pthread_join(t, NULL);
    ck_assert_int_eq(c.seen, 42);
    /* The post cleared the sleeper mark. */
    ck_assert_uint_eq(atomic_load(&c.flag.word), 1u << 1);
}
END_TEST

typedef struct {
    pxi_wait_flag *flag;
    const int *payload;
    int seen;
} sleeper;

static void *sleeper_main(void *arg)
{
    sleeper *z = arg;
    pxi_wait_flag_until_eq(z->flag, 8, 0);
    z->seen = *z->payload;
    return NULL;
}

START_TEST(test_flag_post_wakes_every_sleeper)
{
    enum { N = 4 };
    pxi_wait_flag f;
    pxi_wait_flag_init(&f, 7);
    int payload = 0;
    sleeper z[N];
    pthread_t t[N];
    for (int i = 0; i < N; ++i) {
        z[i] = (sleeper){&f, &payload, -1};
        ck_assert_int_eq(pthread_create(&t[i], NULL, sleeper_main, &z[i]), 0);
    }
    sleep_ms(20);
    payload = 5;
    pxi_wait_flag_post(&f, 8);
    for (int i = 0; i < N; ++i) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(z[i].seen, 5);
    }
}
END_TEST

START_TEST(test_flag_values_are_31_bits_and_compare_masked)
{
    pxi_wait_flag f;
    pxi_wait_flag_init(&f, 0);
    pxi_wait_flag_post(&f, 0xffffffffu);
    ck_assert_uint_eq(pxi_wait_flag_value(&f), PXI_WAIT_VALUE_MASK);
    /* Both sides mask, so a 32-bit counter that wraps still matches. */
    pxi_wait_flag_until_eq(&f, 0xffffffffu, 0);
    pxi_wait_flag_until_eq(&f, PXI_WAIT_VALUE_MASK, 0);
    ck_assert_uint_eq(pxi_wait_flag_until_ne(&f, 0, 0), PXI_WAIT_VALUE_MASK);
    pxi_wait_flag_post(&f, 0x80000000u); /* masks to 0 */
    ck_assert_uint_eq(pxi_wait_flag_peek(&f), 0u);
}
END_TEST

/* ---- events -------------------------------------------------------------------------------- */

typedef struct {
    pxi_wait_event ev;
    atomic_int count;
    int target;
} event_case;

static int event_ready(const void *arg)
{
    const event_case *c = arg;
    return atomic_load_explicit(&((event_case *)(uintptr_t)c)->count, memory_order_seq_cst) >=
           c->target;
}

static void *event_waiter(void *arg)
{
    event_case *c = arg;
    pxi_wait_event_until(&c->ev, event_ready, c, 0, NULL, 0);
    return NULL;
}

START_TEST(test_event_wakes_sleepers_once_the_condition_holds)
{
    event_case c;
    pxi_wait_event_init(&c.ev);
    atomic_init(&c.count, 0);
    c.target = 3;
    pthread_t t[2];
    for (int i = 0; i < 2; ++i)
        ck_assert_int_eq(pthread_create(&t[i], NULL, event_waiter, &c), 0);
    for (int i = 0; i < 2000 && pxi_wait_event_sleepers(&c.ev) < 2; ++i)
        sleep_ms(1);
    ck_assert_int_eq(pxi_wait_event_sleepers(&c.ev), 2);
    /* Notifies before the condition holds wake the sleepers, which re-check and sleep again. */
    for (int k = 0; k < 3; ++k) {
        atomic_fetch_add(&c.count, 1);
        pxi_wait_event_notify(&c.ev, 0);
    }
    for (int i = 0; i < 2; ++i)
        pthread_join(t[i], NULL);
    ck_assert_int_eq(pxi_wait_event_sleepers(&c.ev), 0);
}
END_TEST

START_TEST(test_event_wait_returns_at_once_when_ready_and_counts_pollers)
{
    event_case c;
    pxi_wait_event_init(&c.ev);
    atomic_init(&c.count, 1);
    c.target = 1;
    atomic_int spinning;
    atomic_init(&spinning, 0);
    unsigned before = atomic_load(&c.ev.seq);
    pxi_wait_event_until(&c.ev, event_ready, &c, 1000000, &spinning, PXI_WAIT_YIELD);
    ck_assert_int_eq(atomic_load(&spinning), 0);
    /* Nobody sleeps: a notify costs no wake (the sequence does not move). */
    pxi_wait_event_notify(&c.ev, 1);
    ck_assert_uint_eq(atomic_load(&c.ev.seq), before);
}
END_TEST

/* ---- budget -------------------------------------------------------------------------------- */

START_TEST(test_budget_follows_policy_spin_us_and_throttles)
{
    pxi_wait_configure(PXI_WAIT_PASSIVE, -1);
    ck_assert_str_eq(pxi_wait_policy_name(), "passive");
    ck_assert_int_eq(pxi_wait_spin_ns(1, 4), 0);
    ck_assert(!pxi_wait_throttled(8, 4)); /* nothing to throttle */

    pxi_wait_configure(PXI_WAIT_ACTIVE, -1);
    ck_assert_str_eq(pxi_wait_policy_name(), "active");
    ck_assert_int_eq(pxi_wait_spin_ns(4, 4), (int64_t)PXI_WAIT_SPIN_US_ACTIVE * 1000);
    ck_assert(pxi_wait_throttled(5, 4));
    ck_assert_int_eq(pxi_wait_spin_ns(5, 4), (int64_t)PXI_WAIT_SPIN_US_THROTTLED * 1000);

    pxi_wait_configure(PXI_WAIT_DEFAULT, 7);
    ck_assert_str_eq(pxi_wait_policy_name(), "default");
    ck_assert_int_eq(pxi_wait_configured_spin_us(), 7);
    ck_assert_int_eq(pxi_wait_spin_ns(1, 1), 7000);

    pxi_wait_configure(PXI_WAIT_DEFAULT, INT64_MAX / 2); /* capped at an hour */
    ck_assert_int_eq(pxi_wait_configured_spin_us(), 3600LL * 1000000);

    pxi_wait_configure(12345, -1); /* unknown policy: the default */
    ck_assert_str_eq(pxi_wait_policy_name(), "default");
    ck_assert_int_eq(pxi_wait_configured_spin_us(), PXI_WAIT_SPIN_US_DEFAULT);
    /* n_cpus <= 0: the online processors; one thread never outnumbers them. */
    ck_assert(!pxi_wait_throttled(1, 0));
}
END_TEST

START_TEST(test_initialize_reads_wait_policy_once_for_every_waiter)
{
    setenv("PX_WAIT_POLICY", "passive", 1);
    int rc = px_initialize(NULL, NULL);
    unsetenv("PX_WAIT_POLICY");
    ck_assert_int_eq(rc, PX_OK);
    ck_assert_str_eq(pxi_wait_policy_name(), "passive");
    ck_assert_int_eq(pxi_wait_spin_ns(1, 1), 0);
    ck_assert_int_eq(px_finalize(), PX_OK);
    setenv("PX_SPIN_US", "3", 1);
    rc = px_initialize(NULL, NULL);
    unsetenv("PX_SPIN_US");
    ck_assert_int_eq(rc, PX_OK);
    ck_assert_int_eq(pxi_wait_configured_spin_us(), 3);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

static Suite *wait_suite(void)
{
    Suite *s = suite_create("wait");
    TCase *tc = tcase_create("wait");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_flag_post_wakes_a_sleeping_waiter_and_publishes_data);
    tcase_add_test(tc, test_flag_post_wakes_every_sleeper);
    tcase_add_test(tc, test_flag_values_are_31_bits_and_compare_masked);
    tcase_add_test(tc, test_event_wakes_sleepers_once_the_condition_holds);
    tcase_add_test(tc, test_event_wait_returns_at_once_when_ready_and_counts_pollers);
    tcase_add_test(tc, test_budget_follows_policy_spin_us_and_throttles);
    tcase_add_test(tc, test_initialize_reads_wait_policy_once_for_every_waiter);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(wait_suite());
}
