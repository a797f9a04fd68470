/* base/wait.c - spin-then-sleep waits, the spin budget and its policy (see base/wait.h). */
#include "base/wait.h"

#include <stddef.h>

#include "base/os.h"

/* Polls between two clock reads while spinning: a clock read costs ~20 ns, a pause 10-40 ns,
 * so this keeps the clock off the fast path and still bounds the spin to about +1 us. */
#define SPIN_CLOCK_EVERY 64
/* Polls always made before sleeping, even with a zero budget: a post already on its way (the
 * common case in a fan-in) is then caught without a futex round trip. */
#define SPIN_MIN_POLLS 32
/* With PXI_WAIT_YIELD, a yield after this many pauses: a poller among more threads than cores
 * hands its core to a runnable thread (often the one that makes its work) about every
 * microsecond. Engine workers polling this way ran empty independent ops at 195 ns/op against
 * 312 ns/op for pure pause polling on the 2-core CI VM (bench/RESULTS.md ## Engine). */
#define SPIN_YIELD_EVERY 16
/* Spin-lock back-off: polls with a pause before polls with a yield. */
#define BACKOFF_PAUSES 64
/* Over an hour of spinning is as good as for ever; the cap keeps the ns product in range. */
#define SPIN_US_CAP (3600LL * 1000000)

/* Written by pxi_wait_configure at initialize, before any runtime thread exists, read by every
 * wait; relaxed: thread creation orders the write before the readers. */
static _Atomic(int64_t) configured_us = PXI_WAIT_SPIN_US_DEFAULT;
static atomic_int configured_policy = PXI_WAIT_DEFAULT;
static atomic_int configured_explicit; /* PX_WAIT_POLICY or PX_SPIN_US was given */
static atomic_int oversubscribed;      /* pxi_wait_set_oversubscribed applied: every budget cut */
static atomic_int online_cpus;         /* 0 until first needed */

void pxi_wait_configure(int policy, int64_t spin_us)
{
    int64_t us;
    atomic_store_explicit(&configured_explicit,
                          (policy == PXI_WAIT_ACTIVE || policy == PXI_WAIT_PASSIVE) || spin_us >= 0,
                          memory_order_relaxed);
    atomic_store_explicit(&oversubscribed, 0, memory_order_relaxed);
    switch (policy) {
    case PXI_WAIT_ACTIVE:
        us = PXI_WAIT_SPIN_US_ACTIVE;
        break;
    case PXI_WAIT_PASSIVE:
        us = PXI_WAIT_SPIN_US_PASSIVE;
        break;
    default:
        policy = PXI_WAIT_DEFAULT;
        us = PXI_WAIT_SPIN_US_DEFAULT;
        break;
    }
    if (spin_us >= 0)
        us = spin_us;
    if (us > SPIN_US_CAP)
        us = SPIN_US_CAP;
    atomic_store_explicit(&configured_us, us, memory_order_relaxed);
    atomic_store_explicit(&configured_policy, policy, memory_order_relaxed);
}

const char *pxi_wait_policy_name(void)
{
    switch (atomic_load_explicit(&configured_policy, memory_order_relaxed)) {
    case PXI_WAIT_ACTIVE:
        return "active";
    case PXI_WAIT_PASSIVE:
        return "passive";
    default:
        return "default";
    }
}

int64_t pxi_wait_configured_spin_us(void)
{
    return atomic_load_explicit(&configured_us, memory_order_relaxed);
}

int pxi_wait_explicit(void)
{
    return atomic_load_explicit(&configured_explicit, memory_order_relaxed);
}

int pxi_wait_set_oversubscribed(int on)
{
    int applied = on && !pxi_wait_explicit();
    atomic_store_explicit(&oversubscribed, applied, memory_order_relaxed);
    return applied;
}

int pxi_wait_oversubscribed(void)
{
    return atomic_load_explicit(&oversubscribed, memory_order_relaxed);
}

int pxi_wait_throttled(int n_threads, int n_cpus)
{
    if (pxi_wait_configured_spin_us() <= PXI_WAIT_SPIN_US_THROTTLED)
        return 0;
    if (pxi_wait_oversubscribed())
        return 1;
    if (n_cpus <= 0) {
        n_cpus = atomic_load_explicit(&online_cpus, memory_order_relaxed);
        if (n_cpus <= 0) {
            n_cpus = pxi_os_num_cpus();
            atomic_store_explicit(&online_cpus, n_cpus, memory_order_relaxed);
        }
    }
    return n_threads > n_cpus;
}

int64_t pxi_wait_spin_ns(int n_threads, int n_cpus)
{
    int64_t us = pxi_wait_throttled(n_threads, n_cpus) ? PXI_WAIT_SPIN_US_THROTTLED
                                                       : pxi_wait_configured_spin_us();
    return us * 1000;
}

void pxi_wait_backoff(unsigned n)
{
    if (n < BACKOFF_PAUSES)
        pxi_os_cpu_pause();
    else
        pxi_os_yield();
}

/* Poll @ok(@arg) for about @spin_ns (at least SPIN_MIN_POLLS times); 1 once it holds, 0 when
 * the budget is spent. */
static inline int spin_until(int (*ok)(const void *), const void *arg, int64_t spin_ns,
                             unsigned flags)
{
    int64_t deadline = 0;
    if (flags & PXI_WAIT_YIELD) {
        /* Polite polling (an engine lane's idle workers): a group of pauses, then give the
         * core away, then one look at the condition and the clock. Polling between the pauses
         * instead made every handed-off op 1.8x dearer on 2 cores with 2 workers and a pusher
         * (bench/RESULTS.md "## Structure": the poller kept the core the pusher needed). */
        for (;;) {
            for (int k = 0; k < SPIN_YIELD_EVERY; ++k)
                pxi_os_cpu_pause();
            pxi_os_yield();
            if (ok(arg))
                return 1;
            int64_t now = pxi_os_now_ns();
            if (deadline == 0)
                deadline = now + spin_ns;
            else if (now >= deadline)
                return 0;
        }
    }
    for (unsigned i = 1;; ++i) {
        pxi_os_cpu_pause();
        if (ok(arg))
            return 1;
        if (i < SPIN_MIN_POLLS)
            continue;
        if (spin_ns <= 0)
            return 0;
        if (i == SPIN_MIN_POLLS || i % SPIN_CLOCK_EVERY == 0) {
            int64_t now = pxi_os_now_ns();
            if (deadline == 0)
                deadline = now + spin_ns;
            else if (now >= deadline)
                return 0;
        }
    }
}

/* ---- flags --------------------------------------------------------------------------------- */

typedef struct flag_goal {
    pxi_wait_flag *f;
    unsigned v;
    int equal;
    unsigned seen;
} flag_goal;

static int flag_reached(const void *arg)
{
    flag_goal *g = (flag_goal *)(uintptr_t)arg;
    g->seen = atomic_load_explicit(&g->f->word, memory_order_acquire) >> 1;
    return g->equal ? g->seen == g->v : g->seen != g->v;
}

static unsigned flag_wait(pxi_wait_flag *f, unsigned v, int equal, int64_t spin_ns)
{
    flag_goal g = {f, v & PXI_WAIT_VALUE_MASK, equal, 0};
    if (flag_reached(&g) || spin_until(flag_reached, &g, spin_ns, 0))
        return g.seen;
    for (;;) {
        unsigned w = atomic_load_explicit(&f->word, memory_order_acquire);
        unsigned cur = w >> 1;
        if (equal ? cur == g.v : cur != g.v)
            return cur;
        if (!(w & 1u)) {
            /* Mark the word before sleeping on it; a post in between makes this fail. */
            if (!atomic_compare_exchange_weak_explicit(&f->word, &w, w | 1u, memory_order_relaxed,
                                                       memory_order_relaxed))
                continue;
            w |= 1u;
        }
        pxi_os_futex_wait(&f->word, w);
    }
}

void pxi_wait_flag_wait_eq(pxi_wait_flag *f, unsigned v, int64_t spin_ns)
{
    (void)flag_wait(f, v, 1, spin_ns);
}

unsigned pxi_wait_flag_until_ne(pxi_wait_flag *f, unsigned v, int64_t spin_ns)
{
    return flag_wait(f, v, 0, spin_ns);
}

/* ---- events -------------------------------------------------------------------------------- */

void pxi_wait_event_wake(pxi_wait_event *ev, int n)
{
    atomic_fetch_add_explicit(&ev->seq, 1, memory_order_release);
    pxi_os_futex_wake(&ev->seq, n);
}

void pxi_wait_event_sleep_for(pxi_wait_event *ev, int (*ready)(const void *arg), const void *arg,
                              int64_t timeout_us)
{
    /* The sleeper protocol of pxi_wait_event_until (Dekker with the notifier's fence), for one
     * bounded sleep. */
    atomic_fetch_add_explicit(&ev->sleepers, 1, memory_order_seq_cst);
    atomic_thread_fence(memory_order_seq_cst);
    unsigned s = atomic_load_explicit(&ev->seq, memory_order_acquire);
    if (!ready(arg))
        pxi_os_futex_wait_timeout(&ev->seq, s, timeout_us);
    atomic_fetch_sub_explicit(&ev->sleepers, 1, memory_order_relaxed);
}

void pxi_wait_event_until(pxi_wait_event *ev, int (*ready)(const void *arg), const void *arg,
                          int64_t spin_ns, atomic_int *spinning, unsigned flags)
{
    if (ready(arg))
        return;
    if (spinning)
        atomic_fetch_add_explicit(spinning, 1, memory_order_seq_cst);
    if (spin_until(ready, arg, spin_ns, flags)) {
        if (spinning)
            atomic_fetch_sub_explicit(spinning, 1, memory_order_seq_cst);
        return;
    }
    /* Become a sleeper before ceasing to be a poller, so a notifier never sees neither. The
     * seq_cst increment and fence pair with the notifier's fence and sleeper load (Dekker):
     * either it sees us and wakes us, or we see its change below. */
    atomic_fetch_add_explicit(&ev->sleepers, 1, memory_order_seq_cst);
    if (spinning)
        atomic_fetch_sub_explicit(spinning, 1, memory_order_seq_cst);
    atomic_thread_fence(memory_order_seq_cst);
    for (;;) {
        unsigned s = atomic_load_explicit(&ev->seq, memory_order_acquire);
        if (ready(arg))
            break;
        pxi_os_futex_wait(&ev->seq, s);
    }
    /* relaxed: the count only decides whether notifiers make a system call; a stale nonzero
     * costs one spare wake. */
    atomic_fetch_sub_explicit(&ev->sleepers, 1, memory_order_relaxed);
}

/* ---- start gates ---------------------------------------------------------------------------- */

void pxi_start_gate_pass(pxi_start_gate *g)
{
    atomic_fetch_add_explicit(&g->passed, 1, memory_order_seq_cst);
    pxi_wait_event_notify(&g->ev, 0);
}

typedef struct gate_wait {
    pxi_start_gate *g;
    int n;
} gate_wait;

static int gate_open(const void *arg)
{
    const gate_wait *w = arg;
    return atomic_load_explicit(&w->g->passed, memory_order_seq_cst) >= w->n;
}

void pxi_start_gate_wait(pxi_start_gate *g, int n)
{
    gate_wait w = {g, n};
    pxi_wait_event_until(&g->ev, gate_open, &w, 0, NULL, 0);
}
