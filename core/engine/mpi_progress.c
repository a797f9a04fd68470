/* core/engine/mpi_progress.c - the progress layer below the MPI ops (core/engine/mpi.c): the
 * hand-off list, the shared set of posted requests under its lock, the progress thread,
 * pxi_mpi_poll / pxi_mpi_outstanding / pxi_mpi_hold for waiters that drive progress
 * (core/engine/calls.c), and closing engines with their drain deadlines (StarPU-MPI's detached
 * requests are the model).
 *
 * Layering: the ops post a message's nonblocking call and hand it over (pxi_mpi_hand_off,
 * core/engine/mpi_impl.h); from then on the request belongs to the active set, which one thread
 * at a time tests (the holder of act.lock: the progress thread, or a thread waiting on an
 * engine that drives progress itself, pxi_mpi_poll), all requests with one MPI_Testsome (two
 * while any remain, progress_round says why; a send completed in its start never comes here,
 * pxi_mpi_complete_at_post). A
 * done request is completed through the message's own m->complete (set by the ops), never by a
 * call up into mpi.c; after it the message belongs to the engine again (it may be freed at
 * once), so nothing here touches it any more.
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
 * with none it sleeps on the wake event (a futex) until a hand-off or the stop flag. A closing
 * engine changes neither: its deadline is met by the polls between sleeps.
 *
 * Shutdown: engine teardown (runtime.c) marks the engine closing with a deadline before it
 * drains; past it, the thread cancels that engine's messages (parex/mpi.h, Shutdown).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/log.h"
#include "base/os.h"
#include "base/wait.h"
#include "core/engine/mpi_hooks.h"
#include "core/engine/mpi_impl.h"
#include "core/piece_hook.h"
#include "core/trace.h"
#include "parex/mpi.h"

#define CANCEL_GRACE_NS  100000000LL   /* a cancelled request gets this long to complete */
#define DRAIN_DEFAULT_NS 10000000000LL /* px_mpi_set_drain_timeout_ms default: 10 s */
#define MAX_CLOSING      64            /* engines closing at the same time */

typedef pxi_mpi_msg msg;

static struct {
    pthread_mutex_t lock;
    atomic_int running;     /* the progress thread exists: written under lock; read without it
                             * only as a hint (pxi_mpi_progress_start) */
    pthread_t thread;       /* under lock */
    msg *in_head, *in_tail; /* under lock: handed off, not yet taken by the thread */
    /* Hand-offs not taken yet, closing engines, stop: what the thread's ready checks read
     * (wake_ready, idle_ready, unheld_ready). Written under lock; read with acquire. */
    atomic_int n_in;
    atomic_int n_closing;
    atomic_int stop;
    pxi_wait_event wake;
    pxi_start_gate started; /* start_locked returns once the thread passed it */
    struct {
        px_engine *e;
        int64_t deadline_ns;
    } closing[MAX_CLOSING]; /* under lock */
    atomic_llong drain_ns;  /* relaxed: a setting read at each closing */
    atomic_int n_holders;   /* waiters holding progress (pxi_mpi_hold) */
} g = {.lock = PTHREAD_MUTEX_INITIALIZER, .drain_ns = DRAIN_DEFAULT_NS};

void pxi_mpi_log_error(const char *what, int err)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(err, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", err);
    PXI_ERROR("%s: %s", what, text);
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
    /* Closing twice (px_finalize drains the default engine, then tears it down, which marks it
     * again) keeps the first deadline and one entry, which pxi_mpi_engine_closed removes: a
     * second entry would outlive the engine, and a later engine at its address would have its
     * messages cancelled at once. */
    for (int i = 0; i < n; ++i)
        if (g.closing[i].e == e) {
            pthread_mutex_unlock(&g.lock);
            return;
        }
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

/* Complete @m's op with @status through its own function pointer (the ops' completion); @m
 * may be freed at once, so the caller touches it no more. */
static void finish(msg *m, int status)
{
    m->complete(m, status);
}

/* Status of a completed request: PX_OK, PX_ECANCELED or PX_EMPI (logged). @err is the
 * request's own error (MPI_SUCCESS when the call reported none). */
static int request_status(msg *m, int err, MPI_Status *st)
{
    if (err != MPI_SUCCESS) {
        char what[128];
        int cls = err;
        MPI_Error_class(err, &cls);
        snprintf(what, sizeof what, "%s%s", pxi_mpi_msg_name(m),
                 cls == MPI_ERR_TRUNCATE ? " (message longer than the receive buffer)" : "");
        pxi_mpi_log_error(what, err);
        return PX_EMPI;
    }
    if (m->cancel_ns) {
        int cancelled = 0;
        MPI_Test_cancelled(st, &cancelled);
        if (cancelled) {
            PXI_WARN("%s: cancelled at engine destroy after the drain timeout",
                     pxi_mpi_msg_name(m));
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
    /* The set's count first, then the hand-off count to 0 (release): pxi_mpi_outstanding
     * reads n_in, then act.n, so it never sees neither while these requests are tested
     * (progress_round stores act.n only at its end; in that window px_mpi_finalize once let
     * MPI_Finalize run under the tests, and a one-processor waiter slept). */
    atomic_store_explicit(&act.n, a->n, memory_order_release);
    atomic_store_explicit(&g.n_in, 0, memory_order_release);
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
                finish(a->m[i], request_status(a->m[i], e1, &st));
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
        finish(a->m[i], request_status(a->m[i], e1, &a->st[k]));
        a->m[i] = NULL;
    }
    compact(a);
    return out;
}

int pxi_mpi_complete_at_post(msg *m)
{
    /* Where the library's tests yield when they progress nothing (an oversubscribed node),
     * a send still in flight would give the core away between its post and the kernels. */
    if (pxi_mpi_tests_yield())
        return 0;
    int flag = 0;
    MPI_Status st;
    const int err = MPI_Test(&m->req, &flag, &st);
    if (err == MPI_SUCCESS && !flag)
        return 0;
    finish(m, request_status(m, err, &st));
    return 1;
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
        if (m->kind == PXI_MSG_ALLREDUCE) {
            /* MPI can neither cancel nor free a nonblocking collective: abandon it. */
            PXI_WARN("%s: abandoned at engine destroy after the drain timeout (its request stays "
                     "with MPI)",
                     pxi_mpi_msg_name(m));
            m->persist_owned = 0; /* a persistent one: never started again (mpi_persist.c) */
            finish(m, PX_ECANCELED);
            a->m[i] = NULL;
            ++done;
        } else if (!m->cancel_ns) {
            MPI_Cancel(&a->req[i]);
            m->cancel_ns = now;
        } else if (now - m->cancel_ns > CANCEL_GRACE_NS) {
            PXI_WARN("%s: MPI did not cancel it; released at engine destroy (MPI may still use "
                     "its buffer)",
                     pxi_mpi_msg_name(m));
            MPI_Request_free(&a->req[i]);
            m->persist_owned = 0; /* freed: its template never starts or frees it again */
            finish(m, PX_ECANCELED);
            a->m[i] = NULL;
            ++done;
        }
    }
    if (done)
        compact(a);
    return done;
}

/* What ends the thread's sleep at once: a hand-off or stop. Not a closing engine: a deadline
 * is in milliseconds and the sleeps between polls last at most PXI_POLL_SLEEP_MAX_NS, so the
 * thread meets it sleeping as usual; as a wake condition, an engine closing for the whole
 * drain timeout (10 s by default) would turn every sleep into a poll, a core at 100 %. The
 * closing's notify still ends the sleep it interrupts. */
static int wake_ready(const void *arg)
{
    (void)arg;
    return atomic_load_explicit(&g.n_in, memory_order_acquire) != 0 ||
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
    /* A second look while requests remain: Open MPI's MPI_Testsome runs the progress engine
     * only when its scan found nothing complete, and then returns without scanning again, so
     * what that progress completed (a halo that had arrived, a collective's next round) shows
     * one call later; and a call that did complete something made no progress for the rest.
     * Without it, a halo that arrived during a kernel took three polls to be seen after the
     * kernel (one finding the send, one progressing, one seeing the receive): 0.4-0.6 us on a
     * one-core rank of 2 over shared memory, where the exchange itself takes 0.2. Traced, the
     * waits after the kernels shrink to 0.3; untraced the iteration gains 0-8 %, near this
     * VM's noise, as the second test costs time of its own (bench/RESULTS.md, session 23).
     * Not where the library's tests yield the processor when idle (an oversubscribed node):
     * there each empty test is a round trip through the other ranks already, and the waiter
     * looks once per yield (check_mpi_oversub counts them). */
    if (a->n && !pxi_mpi_tests_yield())
        done += test_all(a);
    if (deadlines && a->n)
        done += enforce_deadlines(a, pxi_os_now_ns());
    atomic_store_explicit(&act.n, a->n, memory_order_release);
    return done;
}

/* ---- does the library's own test yield? ------------------------------------------------- */

/* 1 when the MPI library's test calls give the processor away when they progress nothing,
 * 0 when not, -1 not asked yet (relaxed: every thread that asks computes the same value). */
static atomic_int lib_yields = -1;

#ifdef OPEN_MPI
/* The control variable @name read through MPI_T (MPI 3.0 tools interface): 1 when it exists
 * and holds a nonzero scalar, 0 otherwise. A boolean is one byte in Open MPI, an int
 * elsewhere: the value is read into a zeroed buffer and any nonzero byte counts. */
static int cvar_is_set(const char *name)
{
    int provided = 0, idx = 0, set = 0;
    if (MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
        return 0;
    if (MPI_T_cvar_get_index(name, &idx) == MPI_SUCCESS) {
        MPI_T_cvar_handle h;
        int count = 0;
        if (MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) == MPI_SUCCESS) {
            unsigned char buf[64] = {0};
            if (count == 1 && MPI_T_cvar_read(h, buf) == MPI_SUCCESS)
                for (size_t i = 0; i < sizeof buf; ++i)
                    set |= buf[i] != 0;
            MPI_T_cvar_handle_free(&h);
        }
    }
    MPI_T_finalize();
    return set;
}
#endif

#if defined(OPEN_MPI) && defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
/* An Open MPI boolean in the environment (OMPI_MCA_<name>, how mpirun hands its own settings
 * and --mca to the ranks), read as Open MPI 4 reads one (its enum of booleans): leading white
 * space skipped, then a whole base-10 integer (nonzero is true; the empty string is 0) or one
 * of its words, case-sensitive. 1 or 0; -1 when unset; -2 when set to anything else (Open MPI
 * rejects it and keeps its default, which only MPI_T can tell). */
static int env_bool(const char *name)
{
    const char *s = getenv(name);
    if (!s)
        return -1;
    s += strspn(s, " \t\n\v\f\r");
    char *end = NULL;
    const long v = strtol(s, &end, 10);
    if (*end == '\0')
        return v != 0;
    static const char *const yes[] = {"true", "t", "enabled", "yes", "y"};
    static const char *const no[] = {"false", "f", "disabled", "no", "n"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; ++i) {
        if (strcmp(s, yes[i]) == 0)
            return 1;
        if (strcmp(s, no[i]) == 0)
            return 0;
    }
    return -2;
}

/* Open MPI 4's mpi_yield_when_idle as its ranks compute it, from their environment: the
 * variable itself when set (--mca, or exported by the user), else mpi_oversubscribe, which
 * mpirun sets to 0 or 1 for every rank it starts and which turns the yield on. Checked against
 * the MPI_T value on 1, 2 and 4 ranks, oversubscribed or not, with --mca mpi_yield_when_idle
 * true on 2 ranks and 0 on 4 (tests/mpi.cmake, check_mpi_oversub). -1 when neither is set (a
 * singleton, another launcher) or a value is not a boolean: then only MPI_T can tell. A value
 * set only in an MCA parameter file is not seen here under mpirun; it changes how often an
 * idle waiter tests, never a result. */
static int yield_from_env(void)
{
    const int y = env_bool("OMPI_MCA_mpi_yield_when_idle");
    if (y != -1)
        return y < 0 ? -1 : y;
    const int o = env_bool("OMPI_MCA_mpi_oversubscribe");
    return o < 0 ? -1 : o;
}
#endif

int pxi_mpi_tests_yield(void)
{
    int v = atomic_load_explicit(&lib_yields, memory_order_relaxed);
    if (v >= 0)
        return v;
    /* Open MPI's mpi_yield_when_idle (set by --mca, or by mpirun on an oversubscribed node):
     * opal_progress, which MPI_Test / MPI_Testsome run when nothing is complete, then calls
     * sched_yield. Other libraries: no such variable, their tests return at once.
     * MPI_T_init_thread registers every framework of Open MPI, which opens every component
     * it has: with Debian's libfabric that loads libinfinipath, whose constructor spends
     * 0.2 s in a sleep loop, in every rank. The environment answers first where it can. */
    const char *from;
#if defined(OPEN_MPI) && defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
    v = yield_from_env();
    from = v >= 0 ? "the environment" : "MPI_T";
    if (v < 0)
        v = cvar_is_set("mpi_yield_when_idle");
#elif defined(OPEN_MPI)
    v = cvar_is_set("mpi_yield_when_idle");
    from = "MPI_T";
#else
    v = 0; /* and no MPI_T start-up (it can take 0.1 s) for a variable no other library has */
    from = "not Open MPI";
#endif
    atomic_store_explicit(&lib_yields, v, memory_order_relaxed);
    PXI_INFO("px-mpi-progress: the MPI library's tests %s the processor when idle (%s)",
             v ? "yield" : "keep", from);
    return v;
}

int pxi_mpi_poll(int *gave)
{
    if (gave)
        *gave = 0;
    if (atomic_load_explicit(&g.n_in, memory_order_acquire) == 0 &&
        atomic_load_explicit(&act.n, memory_order_acquire) == 0)
        return 0;
    if (pthread_mutex_trylock(&act.lock) != 0)
        return 0; /* someone else is testing them right now */
    int grew = 0, oom = 0;
    int done = progress_round(0, &grew, &oom);
    const int tested = act.a.n > 0 || done > 0;
    pthread_mutex_unlock(&act.lock);
    if (gave && done == 0 && tested)
        *gave = pxi_mpi_tests_yield();
    return done;
}

void pxi_mpi_piece_poll(void)
{
    static PXI_PIECE_HOOK_TLS int64_t last_ns; /* called a piece: no __tls_get_addr */
    if (!pxi_mpi_outstanding())
        return;
    const int64_t now = pxi_os_now_ns();
    if (now - last_ns < PXI_PIECE_POLL_NS || pxi_mpi_tests_yield())
        return;
    last_ns = now;
    (void)pxi_mpi_poll(NULL);
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
    /* seq_cst decrement, then the look at what is outstanding: the Dekker pair of
     * pxi_mpi_hand_off's n_in increment and look at the holders (either it saw no holder and woke
     * the thread, or we see its message and wake the thread now). */
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
    /* Start from the process's placement, not the binding of the thread that posted first
     * (often the initializing thread, bound to Threads rank 0's core), like engine workers. */
    pxi_os_affinity_apply_captured();
    pxi_os_thread_set_name("px-mpi-progress");
    pxi_trace_thread_name("px-mpi-progress");
    pxi_alloc_thread_warm();
    pxi_start_gate_pass(&g.started);
    int64_t budget_ns = pxi_wait_spin_ns(1, 0);
    int64_t last_ns = pxi_os_now_ns(), step_ns = PXI_POLL_SLEEP_MIN_NS;
    for (;;) {
        if (!unheld_ready(NULL)) {
            /* A waiter drives progress (one processor): sleep until the last one stops. */
            pxi_wait_event_until(&g.wake, unheld_ready, NULL, 0, NULL, 0);
            last_ns = pxi_os_now_ns();
            step_ns = PXI_POLL_SLEEP_MIN_NS;
            continue;
        }
        pthread_mutex_lock(&act.lock);
        int grew = 0, oom = 0;
        int done = progress_round(1, &grew, &oom);
        int n = act.a.n;
        pthread_mutex_unlock(&act.lock);
        if (oom)
            sleep_ns(PXI_POLL_SLEEP_MAX_NS);
        int64_t now = pxi_os_now_ns();
        if (grew || done) { /* new posts or completions: poll for a whole budget again */
            last_ns = now;
            step_ns = PXI_POLL_SLEEP_MIN_NS;
        }
        if (n == 0) {
            if (atomic_load_explicit(&g.stop, memory_order_acquire) &&
                atomic_load_explicit(&g.n_in, memory_order_acquire) == 0)
                break;
            /* Nothing outstanding: sleep on the futex (a closing engine with nothing of ours
             * outstanding has nothing to wait for, so only hand-offs and stop wake us). */
            if (atomic_load_explicit(&g.n_in, memory_order_acquire) == 0 &&
                !atomic_load_explicit(&g.stop, memory_order_acquire))
                pxi_wait_event_until(&g.wake, idle_ready, NULL, 0, NULL, 0);
            last_ns = pxi_os_now_ns();
            step_ns = PXI_POLL_SLEEP_MIN_NS;
            continue;
        }
        if (!done && now - last_ns > budget_ns) {
            /* A hand-off (a new post, a closing engine, stop) ends the sleep at once: a message
             * posted while we sleep does not wait for the step to run out. */
            pxi_wait_event_sleep_for(&g.wake, wake_ready, NULL, step_ns / 1000);
            step_ns = pxi_poll_sleep_next(step_ns);
        } else if (!done && !pxi_mpi_tests_yield()) {
            /* Polling: leave the core to a runnable thread (the peer rank on an
             * oversubscribed node, an engine worker) between polls, unless the library's
             * test just did (a second yield is a second round trip through the other thread
             * before we look again). */
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

/* Start the progress thread unless it runs, and wait until it has run its preamble (base/wait.h,
 * start gates: the preamble takes no lock, so the wait under g.lock is safe); under g.lock.
 * PX_OK, or PX_ENOMEM (the caller logs it). */
static int start_locked(void)
{
    if (atomic_load_explicit(&g.running, memory_order_relaxed))
        return PX_OK;
    atomic_store_explicit(&g.stop, 0, memory_order_relaxed);
    pxi_start_gate_init(&g.started);
    if (pthread_create(&g.thread, NULL, progress_main, NULL) != 0)
        return PX_ENOMEM;
    pxi_start_gate_wait(&g.started, 1);
    atomic_store_explicit(&g.running, 1, memory_order_relaxed);
    return PX_OK;
}

int pxi_mpi_progress_start(const char *caller)
{
    if (atomic_load_explicit(&g.running, memory_order_relaxed))
        return PX_OK;
    pthread_mutex_lock(&g.lock);
    const int rc = start_locked();
    pthread_mutex_unlock(&g.lock);
    if (rc != PX_OK)
        PXI_ERROR("%s: cannot start the MPI progress thread", caller);
    return rc;
}

/* Give a posted message to the progress thread, starting it if it does not run. PX_OK, or
 * PX_ENOMEM when the thread cannot start (the caller completes the op with it). */
int pxi_mpi_hand_off(msg *m)
{
    pthread_mutex_lock(&g.lock);
    if (start_locked() != PX_OK) {
        pthread_mutex_unlock(&g.lock);
        PXI_ERROR("%s: cannot start the MPI progress thread", pxi_mpi_msg_name(m));
        return PX_ENOMEM;
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
    if (!atomic_load_explicit(&g.running, memory_order_relaxed)) {
        pthread_mutex_unlock(&g.lock);
        return;
    }
    atomic_store_explicit(&g.stop, 1, memory_order_release);
    pthread_t t = g.thread;
    pthread_mutex_unlock(&g.lock);
    pxi_wait_event_notify(&g.wake, 0);
    pthread_join(t, NULL);
    pthread_mutex_lock(&g.lock);
    atomic_store_explicit(&g.running, 0, memory_order_relaxed);
    pthread_mutex_unlock(&g.lock);
}

/* A message's detailed name (mpi_impl.h): here, beside the progress that finishes messages
 * and logs them, rather than in mpi.c, which calls down into this file. */
void pxi_mpi_format_name(const pxi_mpi_msg *m, char *buf, size_t n)
{
    switch (m->kind) {
    case PXI_MSG_SEND:
        snprintf(buf, n, "mpi_isend %lldB to %d tag %d", m->bytes, m->peer, m->tag);
        break;
    case PXI_MSG_RECV:
        snprintf(buf, n, "mpi_irecv %lldB from %d tag %d", m->bytes, m->peer, m->tag);
        break;
    default:
        snprintf(buf, n, "mpi_allreduce %lldB", m->bytes);
        break;
    }
}

const char *pxi_mpi_msg_name(pxi_mpi_msg *m)
{
    if (!m->name[0])
        pxi_mpi_format_name(m, m->name, sizeof m->name);
    return m->name;
}
