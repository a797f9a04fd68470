/* core/engine/mpi.c - MPI messages as engine ops and the progress thread that completes them
 * (parex/mpi.h says what users see; StarPU-MPI's detached requests are the model).
 *
 * An MPI op is an asynchronous engine op (PXI_OP_ASYNC, PX_FN_ASYNC: it runs on its pusher
 * when it is ready at push, else on a CPU worker). Its function, post_msg, posts the
 * nonblocking call on that thread and hands the message over through the incoming list; from
 * then on the request belongs to the active set, which one thread at a time tests (the holder
 * of g.plock: the progress thread, or a thread waiting on an engine that drives progress
 * itself, pxi_mpi_poll), all requests with one MPI_Testsome, calling px_on_complete_call when
 * one is done, which finishes the op and grants its Vars. After px_on_complete_call the
 * message belongs to the engine again (its cleanup, free_msg, may run at once), so nothing
 * here touches it any more.
 *
 * Waiters that drive progress (calls.c, help-while-waiting): on a process with one processor a
 * waiting thread holds progress (pxi_mpi_hold): the progress thread then sleeps without
 * polling and a post does not wake it, so a rank bound to one core completes its messages
 * with no thread switch; when the last holder stops, it wakes the thread if anything is
 * outstanding. Elsewhere waiters poll opportunistically beside the thread.
 *
 * Waiting: with requests outstanding the thread polls for the wait budget after its last
 * completion or new post, then sleeps 50 us, doubling to 250 us, between polls (a completion or
 * a new post resets both; a post made while it sleeps wakes it at once);
 * with none it sleeps on the wake event (a futex) until a hand-off, a closing engine or the
 * stop flag. MPI_THREAD_MULTIPLE is required (parex/mpi.h says why).
 *
 * Shutdown: engine teardown (runtime.c) marks the engine closing with a deadline before it
 * drains; past it, the thread cancels that engine's messages (parex/mpi.h, Shutdown).
 *
 * Length: above the 800 lines of STYLE.md since the waiters drive progress too (session 6);
 * the progress half (active set, progress thread, pxi_mpi_poll / hold, closing engines) is
 * the part to move to a file of its own, with the msg struct in a shared internal header.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/log.h"
#include "base/os.h"
#include "base/wait.h"
#include "core/engine/checks.h"
#include "core/engine/engine_impl.h"
#include "core/engine/mpi_hooks.h"
#include "core/tools.h"
#include "core/trace.h"
#include "parex/mpi.h"
#include "parex/profiling.h"

#define SLEEP_MIN_NS     50000LL       /* first sleep between polls once the budget is spent */
#define SLEEP_MAX_NS     250000LL      /* the doubling stops here */
#define CANCEL_GRACE_NS  100000000LL   /* a cancelled request gets this long to complete */
#define DRAIN_DEFAULT_NS 10000000000LL /* px_mpi_set_drain_timeout_ms default: 10 s */
#define MAX_CLOSING      64            /* engines closing at the same time */

typedef enum { MSG_SEND, MSG_RECV, MSG_ALLREDUCE } msg_kind;

typedef struct msg {
    msg_kind kind;
    const void *sbuf;
    void *rbuf;
    int count;
    MPI_Datatype type;
    MPI_Op op;
    int peer, tag;
    MPI_Comm comm;
    px_engine *e;
    /* Written by post_msg before the hand-off (the list lock orders it for the progress
     * thread), then owned by the progress thread. */
    MPI_Request req;
    px_on_complete *done;
    int64_t t0_ns;    /* trace start, when tracing */
    uint32_t section; /* tools section, when has_section */
    int has_section;
    int64_t cancel_ns; /* progress thread: when the cancel was issued, 0: not cancelled */
    /* A recorded message (graph_record.c) is a template: each post (each launch of its
     * graph) copies it into a message of its own (per_post), which complete_msg frees, so a
     * request belongs to one launch and queued launches never share one. */
    int is_template, per_post;
    struct msg *next; /* incoming list link, under g.lock */
    char name[64];
} msg;

static struct {
    pthread_mutex_t lock;
    int running;            /* under lock: the progress thread exists */
    pthread_t thread;       /* under lock */
    msg *in_head, *in_tail; /* under lock: handed off, not yet taken by the thread */
    /* Hand-offs not taken yet, closing engines, stop: the thread's wake conditions. Written
     * under lock; read by the sleeping thread's ready check with acquire. */
    atomic_int n_in;
    atomic_int n_closing;
    atomic_int stop;
    pxi_wait_event wake;
    struct {
        px_engine *e;
        int64_t deadline_ns;
    } closing[MAX_CLOSING]; /* under lock */
    atomic_llong drain_ns;  /* relaxed: a setting read at each closing */
    atomic_int n_holders;   /* waiters holding progress (pxi_mpi_hold) */
    atomic_int level_ok;    /* 1 once MPI_THREAD_MULTIPLE was seen (it cannot go away) */
    int we_initialized;     /* px_mpi_init called MPI_Init_thread (main thread only) */
} g = {.lock = PTHREAD_MUTEX_INITIALIZER, .drain_ns = DRAIN_DEFAULT_NS};

static const char *level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE:
        return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
        return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
        return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
        return "MPI_THREAD_MULTIPLE";
    default:
        return "an unknown level";
    }
}

static void log_mpi_error(const char *what, int err)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(err, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", err);
    PXI_ERROR("%s: %s", what, text);
}

/* PX_OK when MPI is initialized, not finalized and at MPI_THREAD_MULTIPLE (logged with
 * @caller otherwise). */
static int check_mpi_usable(const char *caller)
{
    int flag = 0;
    MPI_Finalized(&flag);
    if (flag) {
        PXI_ERROR("%s: MPI is already finalized", caller);
        return PX_EMPI;
    }
    MPI_Initialized(&flag);
    if (!flag) {
        PXI_ERROR("%s: MPI is not initialized: call MPI_Init_thread with MPI_THREAD_MULTIPLE "
                  "(or px_mpi_init) first",
                  caller);
        return PX_EMPI;
    }
    if (atomic_load_explicit(&g.level_ok, memory_order_relaxed))
        return PX_OK;
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_MULTIPLE) {
        PXI_ERROR("%s: MPI was initialized at %s; parex MPI ops need MPI_THREAD_MULTIPLE "
                  "(engine threads post while the progress thread tests)",
                  caller, level_name(level));
        return PX_EMPI;
    }
    atomic_store_explicit(&g.level_ok, 1, memory_order_relaxed);
    return PX_OK;
}

int px_mpi_init(int *argc, char ***argv)
{
    int flag = 0;
    MPI_Finalized(&flag);
    if (flag) {
        PXI_ERROR("px_mpi_init: MPI is already finalized");
        return PX_EMPI;
    }
    MPI_Initialized(&flag);
    if (!flag) {
        int provided = MPI_THREAD_SINGLE;
        int err = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
        if (err != MPI_SUCCESS) {
            log_mpi_error("px_mpi_init: MPI_Init_thread", err);
            return PX_EMPI;
        }
        g.we_initialized = 1;
    }
    return check_mpi_usable("px_mpi_init");
}

int px_mpi_finalize(void)
{
    if (!g.we_initialized)
        return PX_OK;
    g.we_initialized = 0;
    int err = MPI_Finalize();
    if (err != MPI_SUCCESS) {
        log_mpi_error("px_mpi_finalize: MPI_Finalize", err);
        return PX_EMPI;
    }
    return PX_OK;
}

int px_mpi_set_drain_timeout_ms(int64_t ms)
{
    if (ms < 0 || ms > 3600000) {
        PXI_ERROR("px_mpi_set_drain_timeout_ms: %lld ms is outside [0, 3600000]", (long long)ms);
        return PX_EINVAL;
    }
    atomic_store_explicit(&g.drain_ns, (long long)ms * 1000000LL, memory_order_relaxed);
    return PX_OK;
}

/* ---- closing engines ------------------------------------------------------------------- */

void pxi_mpi_engine_closing(px_engine *e)
{
    int64_t deadline =
        pxi_os_now_ns() + (int64_t)atomic_load_explicit(&g.drain_ns, memory_order_relaxed);
    pthread_mutex_lock(&g.lock);
    int n = atomic_load_explicit(&g.n_closing, memory_order_relaxed);
    if (n >= MAX_CLOSING) {
        /* 64 engines close at once: the 65th waits without a deadline (it still completes
         * when its messages do). */
        PXI_WARN("px_engine_destroy: %d engines closing at once; engine %p waits for its "
                 "messages without a timeout",
                 n, (void *)e);
        pthread_mutex_unlock(&g.lock);
        return;
    }
    g.closing[n].e = e;
    g.closing[n].deadline_ns = deadline;
    /* Release (under the lock as well): the thread's acquire of the count sees the entry. */
    atomic_store_explicit(&g.n_closing, n + 1, memory_order_release);
    pthread_mutex_unlock(&g.lock);
    pxi_wait_event_notify(&g.wake, 0);
}

void pxi_mpi_engine_closed(px_engine *e)
{
    pthread_mutex_lock(&g.lock);
    int n = atomic_load_explicit(&g.n_closing, memory_order_relaxed);
    for (int i = 0; i < n; ++i)
        if (g.closing[i].e == e) {
            g.closing[i] = g.closing[n - 1];
            atomic_store_explicit(&g.n_closing, n - 1, memory_order_release);
            break;
        }
    pthread_mutex_unlock(&g.lock);
}

/* ---- the progress thread ---------------------------------------------------------------- */

typedef struct {
    msg **m;
    MPI_Request *req;
    int *idx;
    MPI_Status *st;
    int n, cap;
} active_set;

/* The posted requests and the lock of whoever tests them (the progress thread or a waiter). */
static struct {
    pthread_mutex_t lock;
    active_set a; /* under lock */
    atomic_int n; /* a.n, stored under lock: a waiter's cheap look */
} act = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int active_grow(active_set *a, int need)
{
    if (need <= a->cap)
        return 1;
    int cap = a->cap ? a->cap : 64;
    while (cap < need)
        cap *= 2;
    msg **m = pxi_malloc((size_t)cap * sizeof *m);
    MPI_Request *req = pxi_malloc((size_t)cap * sizeof *req);
    int *idx = pxi_malloc((size_t)cap * sizeof *idx);
    MPI_Status *st = pxi_malloc((size_t)cap * sizeof *st);
    if (!m || !req || !idx || !st) {
        pxi_free(m);
        pxi_free(req);
        pxi_free(idx);
        pxi_free(st);
        return 0;
    }
    if (a->n) {
        memcpy(m, a->m, (size_t)a->n * sizeof *m);
        memcpy(req, a->req, (size_t)a->n * sizeof *req);
    }
    pxi_free(a->m);
    pxi_free(a->req);
    pxi_free(a->idx);
    pxi_free(a->st);
    a->m = m;
    a->req = req;
    a->idx = idx;
    a->st = st;
    a->cap = cap;
    return 1;
}

/* Complete @m's op with @status: trace span, tools section, then px_on_complete_call (after
 * which @m may be freed at once). */
static void complete_msg(msg *m, int status)
{
    if (m->t0_ns && pxi_trace_active())
        pxi_trace_span("mpi", m->name, m->t0_ns, pxi_trace_now_ns());
    if (m->has_section) {
        (void)px_profile_stop_section(m->section);
        (void)px_profile_destroy_section(m->section);
    }
    px_on_complete *done = m->done;
    if (m->per_post) /* a graph launch's copy (post_msg): nothing else refers to it */
        pxi_free(m);
    px_on_complete_call(done, status);
}

/* Status of a completed request: PX_OK, PX_ECANCELED or PX_EMPI (logged). @err is the
 * request's own error (MPI_SUCCESS when the call reported none). */
static int request_status(msg *m, int err, MPI_Status *st)
{
    if (err != MPI_SUCCESS) {
        char what[128];
        int cls = err;
        MPI_Error_class(err, &cls);
        snprintf(what, sizeof what, "%s%s", m->name,
                 cls == MPI_ERR_TRUNCATE ? " (message longer than the receive buffer)" : "");
        log_mpi_error(what, err);
        return PX_EMPI;
    }
    if (m->cancel_ns) {
        int cancelled = 0;
        MPI_Test_cancelled(st, &cancelled);
        if (cancelled) {
            PXI_WARN("%s: cancelled at engine destroy after the drain timeout", m->name);
            return PX_ECANCELED;
        }
    }
    return PX_OK;
}

/* Move hand-offs into the active set. Returns 0 when the set cannot grow (logged; the
 * hand-offs stay queued and the caller backs off before retrying). */
static int take_incoming(active_set *a)
{
    if (atomic_load_explicit(&g.n_in, memory_order_acquire) == 0)
        return 1;
    pthread_mutex_lock(&g.lock);
    int n_in = atomic_load_explicit(&g.n_in, memory_order_relaxed);
    if (!active_grow(a, a->n + n_in)) {
        pthread_mutex_unlock(&g.lock);
        PXI_ERROR("px-mpi-progress: out of memory growing the request set; retrying");
        return 0;
    }
    for (msg *m = g.in_head; m; m = m->next) {
        a->m[a->n] = m;
        a->req[a->n] = m->req;
        ++a->n;
    }
    g.in_head = g.in_tail = NULL;
    atomic_store_explicit(&g.n_in, 0, memory_order_relaxed);
    pthread_mutex_unlock(&g.lock);
    return 1;
}

/* Drop the entries whose request is MPI_REQUEST_NULL and whose op was completed (m NULL). */
static void compact(active_set *a)
{
    int k = 0;
    for (int i = 0; i < a->n; ++i)
        if (a->m[i]) {
            a->m[k] = a->m[i];
            a->req[k] = a->req[i];
            ++k;
        }
    a->n = k;
}

/* One MPI_Testsome over the set; returns how many ops completed. */
static int test_all(active_set *a)
{
    int out = 0;
    int err = MPI_Testsome(a->n, a->req, &out, a->idx, a->st);
    if (err != MPI_SUCCESS && err != MPI_ERR_IN_STATUS) {
        /* Not attributable to one request: find the failing ones one by one. */
        int done = 0;
        for (int i = 0; i < a->n; ++i) {
            int flag = 0;
            MPI_Status st;
            int e1 = MPI_Test(&a->req[i], &flag, &st);
            if (e1 != MPI_SUCCESS || flag) {
                complete_msg(a->m[i], request_status(a->m[i], e1, &st));
                a->m[i] = NULL;
                ++done;
            }
        }
        compact(a);
        return done;
    }
    if (out == MPI_UNDEFINED || out <= 0)
        return 0;
    for (int k = 0; k < out; ++k) {
        int i = a->idx[k];
        int e1 = err == MPI_ERR_IN_STATUS ? a->st[k].MPI_ERROR : MPI_SUCCESS;
        complete_msg(a->m[i], request_status(a->m[i], e1, &a->st[k]));
        a->m[i] = NULL;
    }
    compact(a);
    return out;
}

/* Cancel the messages of engines past their drain deadline; returns how many completed. */
static int enforce_deadlines(active_set *a, int64_t now)
{
    if (atomic_load_explicit(&g.n_closing, memory_order_acquire) == 0)
        return 0;
    px_engine *late[MAX_CLOSING];
    int n_late = 0;
    pthread_mutex_lock(&g.lock);
    int n = atomic_load_explicit(&g.n_closing, memory_order_relaxed);
    for (int i = 0; i < n; ++i)
        if (now >= g.closing[i].deadline_ns)
            late[n_late++] = g.closing[i].e;
    pthread_mutex_unlock(&g.lock);
    int done = 0;
    for (int i = 0; i < a->n; ++i) {
        msg *m = a->m[i];
        int is_late = 0;
        for (int j = 0; j < n_late && !is_late; ++j)
            is_late = m->e == late[j];
        if (!is_late)
            continue;
        if (m->kind == MSG_ALLREDUCE) {
            /* MPI can neither cancel nor free a nonblocking collective: abandon it. */
            PXI_WARN("%s: abandoned at engine destroy after the drain timeout (its request stays "
                     "with MPI)",
                     m->name);
            complete_msg(m, PX_ECANCELED);
            a->m[i] = NULL;
            ++done;
        } else if (!m->cancel_ns) {
            MPI_Cancel(&a->req[i]);
            m->cancel_ns = now;
        } else if (now - m->cancel_ns > CANCEL_GRACE_NS) {
            PXI_WARN("%s: MPI did not cancel it; released at engine destroy (MPI may still use "
                     "its buffer)",
                     m->name);
            MPI_Request_free(&a->req[i]);
            complete_msg(m, PX_ECANCELED);
            a->m[i] = NULL;
            ++done;
        }
    }
    if (done)
        compact(a);
    return done;
}

static int wake_ready(const void *arg)
{
    (void)arg;
    return atomic_load_explicit(&g.n_in, memory_order_acquire) != 0 ||
           atomic_load_explicit(&g.n_closing, memory_order_acquire) != 0 ||
           atomic_load_explicit(&g.stop, memory_order_acquire) != 0;
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    nanosleep(&ts, NULL);
}

/* One round over the active set, under act.lock: take the hand-offs, test every request,
 * enforce closing deadlines (@deadlines). Returns how many ops completed; *grew: new posts were
 * taken; *oom: the set could not grow (logged). */
static int progress_round(int deadlines, int *grew, int *oom)
{
    active_set *a = &act.a;
    int n_before = a->n;
    *oom = !take_incoming(a);
    *grew = a->n > n_before;
    int done = a->n ? test_all(a) : 0;
    if (deadlines && a->n)
        done += enforce_deadlines(a, pxi_os_now_ns());
    atomic_store_explicit(&act.n, a->n, memory_order_release);
    return done;
}

int pxi_mpi_poll(void)
{
    if (atomic_load_explicit(&g.n_in, memory_order_acquire) == 0 &&
        atomic_load_explicit(&act.n, memory_order_acquire) == 0)
        return 0;
    if (pthread_mutex_trylock(&act.lock) != 0)
        return 0; /* someone else is testing them right now */
    int grew = 0, oom = 0;
    int done = progress_round(0, &grew, &oom);
    pthread_mutex_unlock(&act.lock);
    return done;
}

int pxi_mpi_outstanding(void)
{
    return atomic_load_explicit(&g.n_in, memory_order_acquire) != 0 ||
           atomic_load_explicit(&act.n, memory_order_acquire) != 0;
}

void pxi_mpi_hold(int delta)
{
    if (delta > 0) {
        atomic_fetch_add_explicit(&g.n_holders, 1, memory_order_seq_cst);
        return;
    }
    /* seq_cst decrement, then the look at what is outstanding: the Dekker pair of hand_off's
     * n_in increment and look at the holders (either it saw no holder and woke the thread, or
     * we see its message and wake the thread now). */
    if (atomic_fetch_sub_explicit(&g.n_holders, 1, memory_order_seq_cst) == 1 &&
        (atomic_load_explicit(&g.n_in, memory_order_seq_cst) != 0 ||
         atomic_load_explicit(&act.n, memory_order_seq_cst) != 0))
        pxi_wait_event_notify(&g.wake, 0);
}

/* The idle progress thread's wake condition: as wake_ready, or requests a waiter holding
 * progress took over and left outstanding when it stopped (pxi_mpi_hold). */
static int idle_ready(const void *arg)
{
    return wake_ready(arg) || atomic_load_explicit(&act.n, memory_order_seq_cst) != 0;
}

/* The progress thread's wake condition while waiters hold progress. */
static int unheld_ready(const void *arg)
{
    (void)arg;
    return atomic_load_explicit(&g.n_holders, memory_order_seq_cst) == 0 ||
           atomic_load_explicit(&g.n_closing, memory_order_acquire) != 0 ||
           atomic_load_explicit(&g.stop, memory_order_acquire) != 0;
}

static void *progress_main(void *arg)
{
    (void)arg;
    pxi_trace_thread_name("px-mpi-progress");
    int64_t budget_ns = pxi_wait_spin_ns(1, 0);
    int64_t last_ns = pxi_os_now_ns(), step_ns = SLEEP_MIN_NS;
    for (;;) {
        if (!unheld_ready(NULL)) {
            /* A waiter drives progress (one processor): sleep until the last one stops. */
            pxi_wait_event_until(&g.wake, unheld_ready, NULL, 0, NULL, 0);
            last_ns = pxi_os_now_ns();
            step_ns = SLEEP_MIN_NS;
            continue;
        }
        pthread_mutex_lock(&act.lock);
        int grew = 0, oom = 0;
        int done = progress_round(1, &grew, &oom);
        int n = act.a.n;
        pthread_mutex_unlock(&act.lock);
        if (oom)
            sleep_ns(SLEEP_MAX_NS);
        int64_t now = pxi_os_now_ns();
        if (grew || done) { /* new posts or completions: poll for a whole budget again */
            last_ns = now;
            step_ns = SLEEP_MIN_NS;
        }
        if (n == 0) {
            if (atomic_load_explicit(&g.stop, memory_order_acquire) &&
                atomic_load_explicit(&g.n_in, memory_order_acquire) == 0)
                break;
            /* Nothing outstanding: sleep on the futex (a closing engine with nothing of ours
             * outstanding has nothing to wait for, so only hand-offs and stop wake us). */
            if (atomic_load_explicit(&g.n_in, memory_order_acquire) == 0 &&
                !atomic_load_explicit(&g.stop, memory_order_acquire)) {
                if (atomic_load_explicit(&g.n_closing, memory_order_acquire))
                    sleep_ns(SLEEP_MAX_NS);
                else
                    pxi_wait_event_until(&g.wake, idle_ready, NULL, 0, NULL, 0);
            }
            last_ns = pxi_os_now_ns();
            step_ns = SLEEP_MIN_NS;
            continue;
        }
        if (!done && now - last_ns > budget_ns) {
            /* A hand-off (a new post, a closing engine, stop) ends the sleep at once: a message
             * posted while we sleep does not wait for the step to run out. */
            pxi_wait_event_sleep_for(&g.wake, wake_ready, NULL, step_ns / 1000);
            if (step_ns < SLEEP_MAX_NS)
                step_ns *= 2;
        } else if (!done) {
            /* Polling: leave the core to a runnable thread (the peer rank on an
             * oversubscribed node, an engine worker) between polls. */
            sched_yield();
        }
    }
    pthread_mutex_lock(&act.lock);
    pxi_free(act.a.m);
    pxi_free(act.a.req);
    pxi_free(act.a.idx);
    pxi_free(act.a.st);
    memset(&act.a, 0, sizeof act.a);
    pthread_mutex_unlock(&act.lock);
    return NULL;
}

/* Give a posted message to the progress thread, starting it on first use. PX_OK, or
 * PX_ENOMEM when the thread cannot start (the caller completes the op with it). */
static int hand_off(msg *m)
{
    pthread_mutex_lock(&g.lock);
    if (!g.running) {
        atomic_store_explicit(&g.stop, 0, memory_order_relaxed);
        if (pthread_create(&g.thread, NULL, progress_main, NULL) != 0) {
            pthread_mutex_unlock(&g.lock);
            PXI_ERROR("%s: cannot start the MPI progress thread", m->name);
            return PX_ENOMEM;
        }
        g.running = 1;
    }
    m->next = NULL;
    if (g.in_tail)
        g.in_tail->next = m;
    else
        g.in_head = m;
    g.in_tail = m;
    /* Release: the thread's acquire of the count sees the list (it takes the lock anyway). */
    atomic_fetch_add_explicit(&g.n_in, 1, memory_order_seq_cst);
    pthread_mutex_unlock(&g.lock);
    /* A waiter holding progress will test it (pxi_mpi_hold wakes the thread when the last one
     * stops); otherwise wake the thread. seq_cst fence, then the look at the holders. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&g.n_holders, memory_order_seq_cst) == 0)
        pxi_wait_event_notify(&g.wake, 1);
    return PX_OK;
}

void pxi_mpi_shutdown(void)
{
    pthread_mutex_lock(&g.lock);
    if (!g.running) {
        pthread_mutex_unlock(&g.lock);
        return;
    }
    atomic_store_explicit(&g.stop, 1, memory_order_release);
    pthread_t t = g.thread;
    pthread_mutex_unlock(&g.lock);
    pxi_wait_event_notify(&g.wake, 0);
    pthread_join(t, NULL);
    pthread_mutex_lock(&g.lock);
    g.running = 0;
    pthread_mutex_unlock(&g.lock);
}

/* ---- the ops ---------------------------------------------------------------------------- */

/* The async op: post the call on this engine thread, then hand the request over. */
static void post_msg(const px_run_context *rc, px_on_complete *done, void *arg)
{
    (void)rc;
    msg *m = arg;
    /* Checked at push, but a graph launched (or an op queued) after MPI_Finalize posts later:
     * MPI may not be called then (Open MPI aborts the job). */
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (PXI_UNLIKELY(finalized)) {
        PXI_ERROR("%s: MPI is already finalized (the op was posted after MPI_Finalize)", m->name);
        px_on_complete_call(done, PX_EMPI);
        return;
    }
    if (m->is_template) {
        /* A graph op: this launch's own message (the template stays the graph's). */
        msg *c = pxi_malloc(sizeof *c);
        if (!c) {
            PXI_ERROR("%s: out of memory posting a recorded message", m->name);
            px_on_complete_call(done, PX_ENOMEM);
            return;
        }
        *c = *m;
        c->is_template = 0;
        c->per_post = 1;
        c->req = MPI_REQUEST_NULL;
        c->cancel_ns = 0;
        m = c;
    }
    m->done = done;
    m->t0_ns = pxi_trace_active() ? pxi_trace_now_ns() : 0;
    m->has_section = 0;
    if (pxi_tools_active() && px_profile_create_section(m->name, &m->section) == PX_OK) {
        m->has_section = 1;
        (void)px_profile_start_section(m->section);
    }
    int err;
    switch (m->kind) {
    case MSG_SEND:
        err = MPI_Isend(m->sbuf, m->count, m->type, m->peer, m->tag, m->comm, &m->req);
        break;
    case MSG_RECV:
        err = MPI_Irecv(m->rbuf, m->count, m->type, m->peer, m->tag, m->comm, &m->req);
        break;
    default:
        err = MPI_Iallreduce(m->sbuf, m->rbuf, m->count, m->type, m->op, m->comm, &m->req);
        break;
    }
    if (err != MPI_SUCCESS) {
        log_mpi_error(m->name, err);
        complete_msg(m, PX_EMPI);
        return;
    }
    int st = hand_off(m);
    if (st != PX_OK)
        complete_msg(m, st); /* the request stays with MPI; the op fails */
}

static void free_msg(void *arg)
{
    pxi_free(arg);
}

/* Shared argument checks; PX_OK or a logged status. Reads MPI state (is MPI usable) but
 * changes none: comm_prepare does, once every argument of the call has been checked. */
static int check_common(px_engine *e, const void *buf, int count, MPI_Datatype type, MPI_Comm comm,
                        const char *caller)
{
    int rc = pxi_engine_validate(e, caller);
    if (rc != PX_OK)
        return rc;
    if (count < 0) {
        PXI_ERROR("%s: count = %d is negative", caller, count);
        return PX_EINVAL;
    }
    if (!buf && count > 0) {
        PXI_ERROR("%s: buffer is NULL with count = %d", caller, count);
        return PX_EFAULT;
    }
    if (type == MPI_DATATYPE_NULL) {
        PXI_ERROR("%s: type is MPI_DATATYPE_NULL", caller);
        return PX_EINVAL;
    }
    if (comm == MPI_COMM_NULL) {
        PXI_ERROR("%s: comm is MPI_COMM_NULL", caller);
        return PX_EINVAL;
    }
    return check_mpi_usable(caller);
}

/* After every check passed: errors on @comm come back as codes from here on, so they fail ops
 * (parex/mpi.h), and *type_bytes is @type's size. PX_OK or PX_EINVAL (logged). A call refused
 * for a bad argument leaves the communicator's error handler as the caller set it. */
static int comm_prepare(MPI_Comm comm, MPI_Datatype type, int *type_bytes, const char *caller)
{
    int err = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (err == MPI_SUCCESS)
        err = MPI_Type_size(type, type_bytes);
    if (err != MPI_SUCCESS) {
        log_mpi_error(caller, err);
        return PX_EINVAL;
    }
    return PX_OK;
}

/* PX_OK when @peer names a rank of @comm (or one of the wildcards allowed) and @tag is in
 * range (or MPI_ANY_TAG where allowed). */
static int check_peer_tag(MPI_Comm comm, int peer, int tag, int any_ok, const char *caller)
{
    /* Peers of an inter-communicator are ranks of its remote group. */
    int size = 0, inter = 0;
    int err = MPI_Comm_test_inter(comm, &inter);
    if (err == MPI_SUCCESS)
        err = inter ? MPI_Comm_remote_size(comm, &size) : MPI_Comm_size(comm, &size);
    if (err != MPI_SUCCESS) {
        log_mpi_error(caller, err);
        return PX_EINVAL;
    }
    if (peer != MPI_PROC_NULL && !(any_ok && peer == MPI_ANY_SOURCE) &&
        (peer < 0 || peer >= size)) {
        PXI_ERROR("%s: rank %d is outside [0, %d) of the communicator", caller, peer, size);
        return PX_EINVAL;
    }
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    int tag_ub = flag && ub ? *ub : 32767;
    if (!(any_ok && tag == MPI_ANY_TAG) && (tag < 0 || tag > tag_ub)) {
        PXI_ERROR("%s: tag %d is outside [0, %d] (MPI_TAG_UB)", caller, tag, tag_ub);
        return PX_EINVAL;
    }
    return PX_OK;
}

static int push_msg(px_engine *e, msg *m, px_var *reads, px_var *writes, const char *caller)
{
    pxi_push p;
    px_context ctx = {PX_DEV_CPU, 0};
    px_var *r[1] = {reads}, *w[1] = {writes};
    size_t n_reads = reads && reads != writes ? 1 : 0, n_writes = writes ? 1 : 0;
    /* The op's name is static: the engine reads it after the async function returned, when the
     * message (and m->name) may already be complete and freed. The detailed name goes to the
     * message's own span and section. */
    static const char *const op_names[] = {"mpi_isend", "mpi_irecv", "mpi_allreduce"};
    pxi_push_describe(&p, PXI_OP_ASYNC, m, ctx, r, n_reads, w, n_writes, PX_FN_ASYNC, 0,
                      op_names[m->kind], caller);
    p.afn = post_msg;
    p.cleanup = free_msg;
    /* Recorded (graph_record.c): the message is the graph's template, freed with the graph. */
    m->is_template = pxi_engine_tl_recorder != NULL;
    int rc = pxi_engine_push(e, &p);
    if (rc != PX_OK)
        pxi_free(m);
    return rc;
}

static msg *new_msg(msg_kind kind, px_engine *e, int count, MPI_Datatype type, MPI_Comm comm,
                    const char *caller)
{
    msg *m = pxi_malloc(sizeof *m);
    if (!m) {
        PXI_ERROR("%s: out of memory", caller);
        return NULL;
    }
    memset(m, 0, sizeof *m);
    m->kind = kind;
    m->e = e;
    m->count = count;
    m->type = type;
    m->comm = comm;
    m->op = MPI_OP_NULL;
    m->req = MPI_REQUEST_NULL;
    return m;
}

int px_engine_push_mpi_isend(px_engine *e, const void *buf, int count, MPI_Datatype type, int dest,
                             int tag, MPI_Comm comm, px_var *reads)
{
    static const char caller[] = "px_engine_push_mpi_isend";
    int tb = 0;
    int rc = check_common(e, buf, count, type, comm, caller);
    if (rc == PX_OK)
        rc = check_peer_tag(comm, dest, tag, 0, caller);
    if (rc == PX_OK)
        rc = comm_prepare(comm, type, &tb, caller);
    if (rc != PX_OK)
        return rc;
    msg *m = new_msg(MSG_SEND, e, count, type, comm, caller);
    if (!m)
        return PX_ENOMEM;
    m->sbuf = buf;
    m->peer = dest;
    m->tag = tag;
    snprintf(m->name, sizeof m->name, "mpi_isend %lldB to %d tag %d",
             (long long)count * (long long)tb, dest, tag);
    return push_msg(e, m, reads, NULL, caller);
}

int px_engine_push_mpi_irecv(px_engine *e, void *buf, int count, MPI_Datatype type, int source,
                             int tag, MPI_Comm comm, px_var *writes)
{
    static const char caller[] = "px_engine_push_mpi_irecv";
    int tb = 0;
    int rc = check_common(e, buf, count, type, comm, caller);
    if (rc == PX_OK)
        rc = check_peer_tag(comm, source, tag, 1, caller);
    if (rc == PX_OK)
        rc = comm_prepare(comm, type, &tb, caller);
    if (rc != PX_OK)
        return rc;
    msg *m = new_msg(MSG_RECV, e, count, type, comm, caller);
    if (!m)
        return PX_ENOMEM;
    m->rbuf = buf;
    m->peer = source;
    m->tag = tag;
    snprintf(m->name, sizeof m->name, "mpi_irecv %lldB from %d tag %d",
             (long long)count * (long long)tb, source, tag);
    return push_msg(e, m, NULL, writes, caller);
}

int px_engine_push_mpi_allreduce(px_engine *e, const void *send, void *recv, int count,
                                 MPI_Datatype type, MPI_Op op, MPI_Comm comm, px_var *reads,
                                 px_var *writes)
{
    static const char caller[] = "px_engine_push_mpi_allreduce";
    int tb = 0;
    int rc = check_common(e, recv, count, type, comm, caller);
    if (rc != PX_OK)
        return rc;
    if (!send && count > 0) {
        PXI_ERROR("%s: send is NULL with count = %d (MPI_IN_PLACE for in place)", caller, count);
        return PX_EFAULT;
    }
    if (op == MPI_OP_NULL) {
        PXI_ERROR("%s: op is MPI_OP_NULL", caller);
        return PX_EINVAL;
    }
    if ((rc = comm_prepare(comm, type, &tb, caller)) != PX_OK)
        return rc;
    msg *m = new_msg(MSG_ALLREDUCE, e, count, type, comm, caller);
    if (!m)
        return PX_ENOMEM;
    m->sbuf = send;
    m->rbuf = recv;
    m->op = op;
    m->peer = MPI_PROC_NULL;
    snprintf(m->name, sizeof m->name, "mpi_allreduce %lldB", (long long)count * (long long)tb);
    return push_msg(e, m, reads, writes, caller);
}
