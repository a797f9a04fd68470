/* base/wait.h - the one way the runtime waits for another thread (base/wait.c).
 *
 * Every wait spins with a CPU pause for a budget, then sleeps on a futex (base/os.h), the way
 * libgomp's config/linux/wait.h do_wait does: a short wait costs no system call, a long one no
 * CPU. The budget comes from PX_WAIT_POLICY and PX_SPIN_US, interpreted once, here
 * (pxi_wait_configure), and is cut to a tiny one for a group of threads that outnumbers the
 * cores, or in a process that shares its cores with more threads, its own or other ranks'
 * (core/oversub.h), than they can run (libgomp's throttled spin count): there a spinning thread
 * takes the core the thread it waits for needs.
 *
 * Two shapes of wait share that policy:
 *  - a flag (pxi_wait_flag): one word a thread posts a value on and others wait for a value
 *    of (fan-in flags, dispatch words, ticket locks, op waiters). The sleeper mark lives in
 *    the word itself, so a post is one atomic exchange and its last touch of the word; a
 *    waiter on the poster's stack may return at once (no read of a freed sleeper count);
 *  - an event (pxi_wait_event): a sequence word plus a sleeper count for waits on a condition
 *    over other data (a queue's length, an in-flight count). The notifier makes the condition
 *    true, then calls pxi_wait_event_notify, which costs no system call when nobody sleeps.
 * The futex only sleeps: data crosses threads through the callers' release stores and acquire
 * loads (and the flag's own release/acquire), so ThreadSanitizer stays accurate. Waiters
 * re-check their condition after every wake (wakes may be spurious).
 */
#ifndef PXI_WAIT_H
#define PXI_WAIT_H

#include <stdatomic.h>
#include <stdint.h>

#include "base/os.h"

/* PX_WAIT_POLICY: default (spin the budget, then sleep), active (spin long), passive (sleep
 * at once). Read once at initialize (core/settings.c) and handed to pxi_wait_configure. */
typedef enum { PXI_WAIT_DEFAULT = 0, PXI_WAIT_ACTIVE, PXI_WAIT_PASSIVE } pxi_wait_policy;

/* Budgets in microseconds for each PX_WAIT_POLICY (a pxi_wait_policy of core/settings.h):
 * default spins a little longer than a typical fan-in or hand-off, active spins (nearly) for
 * ever, passive sleeps at once; throttled is what a group that outnumbers the cores gets. */
#define PXI_WAIT_SPIN_US_DEFAULT   100
#define PXI_WAIT_SPIN_US_ACTIVE    1000000
#define PXI_WAIT_SPIN_US_PASSIVE   0
#define PXI_WAIT_SPIN_US_THROTTLED 1

/* Interpret PX_WAIT_POLICY (@policy, a pxi_wait_policy) and PX_SPIN_US (@spin_us, -1: the
 * policy's budget) once, at px_initialize after the settings are loaded and before any runtime
 * thread exists. Values above an hour are capped. Not thread-safe against waits. */
void pxi_wait_configure(int policy, int64_t spin_us);
/* Nonzero when the last pxi_wait_configure had an explicit policy (active or passive) or an
 * explicit PX_SPIN_US (spin_us >= 0): the user chose, and oversubscription does not override. */
int pxi_wait_explicit(void);
/* The process is oversubscribed (@on nonzero; core/oversub.c decides once at px_initialize,
 * after pxi_wait_configure, before any runtime thread exists): unless the budget is explicit,
 * every budget becomes the throttled one, whatever the group (pxi_wait_throttled is then
 * nonzero for any group). Returns whether that was applied. pxi_wait_configure clears it. Not
 * thread-safe against waits. */
int pxi_wait_set_oversubscribed(int on);
/* Nonzero while pxi_wait_set_oversubscribed's cut applies (one relaxed load). */
int pxi_wait_oversubscribed(void);
/* The policy's name ("default", "active", "passive") and the configured budget in us. */
const char *pxi_wait_policy_name(void);
int64_t pxi_wait_configured_spin_us(void);
/* Nonzero when the configured budget is above the throttled one and either the process is
 * oversubscribed (pxi_wait_set_oversubscribed) or @n_threads threads sharing @n_cpus processors
 * (n_cpus <= 0: the online processors) outnumber them. */
int pxi_wait_throttled(int n_threads, int n_cpus);
/* The spin budget, in nanoseconds, for a wait among @n_threads threads that share @n_cpus
 * processors: the configured one, or the throttled one (see above). Thread-safe. */
int64_t pxi_wait_spin_ns(int n_threads, int n_cpus);

/* One step of a spin lock's back-off after @n failed polls (the caller counts): a CPU pause for
 * the first polls, then a yield of the processor, so a preempted holder costs a time slice,
 * not a spinning core. */
void pxi_wait_backoff(unsigned n);

/* ---- flags --------------------------------------------------------------------------------- */

/* Values are 31 bits (pxi_wait_flag_value masks): callers compare posted and wanted values only
 * for equality, so a wrapping generation or ticket works unchanged. */
#define PXI_WAIT_VALUE_MASK 0x7fffffffu

typedef struct pxi_wait_flag {
    atomic_uint word; /* (value << 1) | sleepers-present bit */
} pxi_wait_flag;

static inline void pxi_wait_flag_init(pxi_wait_flag *f, unsigned v)
{
    atomic_init(&f->word, (v & PXI_WAIT_VALUE_MASK) << 1);
}

/* The value last posted (acquire: the poster's earlier writes are visible). */
static inline unsigned pxi_wait_flag_value(pxi_wait_flag *f)
{
    return atomic_load_explicit(&f->word, memory_order_acquire) >> 1;
}

/* The value last posted, without ordering (checkers and the flag's only writer). */
static inline unsigned pxi_wait_flag_peek(pxi_wait_flag *f)
{
    return atomic_load_explicit(&f->word, memory_order_relaxed) >> 1;
}

/* Post @v (masked to 31 bits) with release and wake every sleeper if any: one exchange, then a
 * futex wake only when a waiter marked the word. Inline: every launch posts a few (fan-in,
 * ticket lock). The exchange reads the latest word in modification order, so either a
 * waiter's mark (its compare-exchange) came first and we wake it, or the mark fails on our
 * value and the waiter sees it. Release publishes the poster's writes to the waiter's acquire.
 * This is the poster's last access to the flag's memory (a waiter may return and free it now);
 * a futex wake on freed memory is harmless (at worst a spurious wake of an unrelated waiter,
 * which re-checks). */
static inline void pxi_wait_flag_post(pxi_wait_flag *f, unsigned v)
{
    unsigned old =
        atomic_exchange_explicit(&f->word, (v & PXI_WAIT_VALUE_MASK) << 1, memory_order_release);
    if (old & 1u)
        pxi_os_futex_wake(&f->word, 0);
}
/* Wait until the flag holds @v (masked), spinning up to @spin_ns first; acquire. Inline: a
 * flag that already holds @v (a free ticket lock, a child that posted first) costs one load;
 * only a real wait calls base/wait.c. */
void pxi_wait_flag_wait_eq(pxi_wait_flag *f, unsigned v, int64_t spin_ns);
static inline void pxi_wait_flag_until_eq(pxi_wait_flag *f, unsigned v, int64_t spin_ns)
{
    if (pxi_wait_flag_value(f) != (v & PXI_WAIT_VALUE_MASK))
        pxi_wait_flag_wait_eq(f, v, spin_ns);
}
/* Wait until the flag holds anything but @v (masked); returns the value seen (acquire). */
unsigned pxi_wait_flag_until_ne(pxi_wait_flag *f, unsigned v, int64_t spin_ns);

/* ---- events -------------------------------------------------------------------------------- */

typedef struct pxi_wait_event {
    atomic_uint seq;     /* futex word, bumped by a notify that finds sleepers */
    atomic_int sleepers; /* threads between announcing a sleep and waking */
} pxi_wait_event;

/* Flags of pxi_wait_event_until. */
#define PXI_WAIT_YIELD 1u /* yield the processor between poll groups while spinning */

static inline void pxi_wait_event_init(pxi_wait_event *ev)
{
    atomic_init(&ev->seq, 0);
    atomic_init(&ev->sleepers, 0);
}

/* Wait until @ready(@arg) is nonzero: polls it for @spin_ns, then sleeps on @ev and re-checks
 * after every wake. ready must read the data it tests with acquire (or seq_cst) loads. With
 * @spinning non-NULL, the waiter counts itself there while it polls and moves to the sleeper
 * count before it stops polling, so a notifier that sees neither knows the waiter saw its
 * change (lanes wake a sleeper only for work beyond what pollers will take). */
void pxi_wait_event_until(pxi_wait_event *ev, int (*ready)(const void *arg), const void *arg,
                          int64_t spin_ns, atomic_int *spinning, unsigned flags);

/* Sleep on @ev, without spinning, until @ready(@arg) holds, a notify comes or about
 * @timeout_us passed (whichever is first; may return early, like every futex wait): for a
 * poller that must look at something no notify announces (an MPI request) every so often, yet
 * wake at once for what is announced (core/engine/mpi_progress.c's progress thread). */
void pxi_wait_event_sleep_for(pxi_wait_event *ev, int (*ready)(const void *arg), const void *arg,
                              int64_t timeout_us);

/* Threads sleeping on @ev now (seq_cst: call after the seq_cst fence of a notify). */
static inline int pxi_wait_event_sleepers(pxi_wait_event *ev)
{
    return atomic_load_explicit(&ev->sleepers, memory_order_seq_cst);
}

/* Wake up to @n sleepers (n <= 0: all) unconditionally. */
void pxi_wait_event_wake(pxi_wait_event *ev, int n);

/* ---- start gates ---------------------------------------------------------------------------- */

/* A thread that starts others (an engine's lane workers, the MPI progress thread) waits at a
 * gate until each has run its preamble: its placement, its name and its C library arena
 * (pxi_alloc_thread_warm). Without the wait that preamble runs whenever the new thread first
 * gets a core, which on a rank bound to one core is when the creator first blocks: in its first
 * op, then (page-table changes and page faults, tens of microseconds each on a VM that makes
 * them dear; bench/RESULTS.md, session 28). libgomp's team start and Kokkos::initialize wait
 * for their threads the same way. The gate must outlive the wait and the passes. */
typedef struct pxi_start_gate {
    atomic_int passed;
    pxi_wait_event ev;
} pxi_start_gate;

static inline void pxi_start_gate_init(pxi_start_gate *g)
{
    atomic_init(&g->passed, 0);
    pxi_wait_event_init(&g->ev);
}

/* The started thread, once, at the end of its preamble (release: the creator sees it). */
void pxi_start_gate_pass(pxi_start_gate *g);

/* The creator: sleep (no spin: the threads it waits for may need its core) until @n threads
 * have passed @g since its init. */
void pxi_start_gate_wait(pxi_start_gate *g, int n);

/* After making a waiter's condition true: a seq_cst fence (the Dekker pair of the waiter's
 * seq_cst sleeper increment and re-check), then a wake of up to @n sleepers only when there
 * are any, so nobody asleep costs no system call. */
static inline void pxi_wait_event_notify(pxi_wait_event *ev, int n)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (pxi_wait_event_sleepers(ev) > 0)
        pxi_wait_event_wake(ev, n);
}

#endif
