/* core/engine/mpi.c - MPI messages as engine ops (parex/mpi.h says what users see; StarPU-MPI's
 * detached requests are the model): px_mpi_init / finalize, the pushes of isend / irecv /
 * allreduce with their argument checks, the post of a message and its completion.
 *
 * An MPI op is an asynchronous engine op (PXI_OP_ASYNC, PX_FN_ASYNC: it runs on its pusher
 * when it is ready at push, on the CPU worker or helping waiter whose finishing op made it
 * ready, else on a CPU worker; engine.h, "Where an op runs"). Its function, post_msg, posts the
 * nonblocking call (or starts a recorded message's persistent request, mpi_persist.c) on that
 * thread and hands the message to the progress layer below (pxi_mpi_hand_off,
 * core/engine/mpi_progress.c; a send that completed in its start is finished there and then,
 * pxi_mpi_complete_at_post), which tests the request and, once it is
 * done, calls the message's m->complete (complete_msg here): trace span, tools section, then
 * px_on_complete_call, which finishes the op and grants its Vars. A recorded op (graph_record.c)
 * keeps its message as the graph's template; each launch posts a copy of its own.
 *
 * Layering: this file calls down into mpi_progress.c only (core/engine/mpi_impl.h holds the
 * message and the hand-off they share); the progress layer calls back only through the
 * message's function pointer. MPI_THREAD_MULTIPLE is required (parex/mpi.h says why).
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "core/engine/checks.h"
#include "core/engine/engine_impl.h"
#include "core/engine/inflight.h"
#include "core/engine/mpi_hooks.h"
#include "core/engine/mpi_impl.h"
#include "core/tools.h"
#include "core/trace.h"
#include "parex/mpi.h"
#include "parex/profiling.h"

typedef pxi_mpi_msg msg;

static struct {
    atomic_int level_ok; /* 1 once MPI_THREAD_MULTIPLE was seen (it cannot go away) */
    int we_initialized;  /* px_mpi_init called MPI_Init_thread (main thread only) */
    /* What may still call MPI: pushed MPI ops (from the push until the op's cleanup, which
     * the engine runs before the op counts as done, whether it ran, failed or was skipped)
     * and launches of graphs holding MPI ops (pxi_mpi_live_launch, until the launch's block
     * is released, after every copy its messages posted has completed). px_mpi_finalize
     * refuses while any is: a queued op or launch has no request yet, which
     * pxi_mpi_outstanding cannot see. */
    atomic_long live;
} g;

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
    /* Ask now whether the library's tests yield (Open MPI 4 under mpirun: its environment;
     * other Open MPI launches: MPI_T, which opens every component, 0.2 s): at px_mpi_init or
     * the first push, not in the first wait, which a timed loop would pay. */
    (void)pxi_mpi_tests_yield();
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
            pxi_mpi_log_error("px_mpi_init: MPI_Init_thread", err);
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
    /* The progress thread tests outstanding requests: MPI_Finalize under it aborts the job
     * (Open MPI: "MPI_Testsome() was called after MPI_FINALIZE"). */
    if (pxi_mpi_outstanding() || atomic_load_explicit(&g.live, memory_order_acquire) != 0) {
        PXI_ERROR("px_mpi_finalize: parex MPI messages are still outstanding or queued; call "
                  "px_finalize (or wait for the engines) before px_mpi_finalize");
        return PX_EBUSY;
    }
    g.we_initialized = 0;
    int err = MPI_Finalize();
    if (err != MPI_SUCCESS) {
        pxi_mpi_log_error("px_mpi_finalize: MPI_Finalize", err);
        return PX_EMPI;
    }
    return PX_OK;
}

int px_mpi_set_persistent_collectives(int on, int *previous)
{
    if (on != 0 && on != 1) {
        PXI_ERROR("px_mpi_set_persistent_collectives: on = %d (0 or 1)", on);
        return PX_EINVAL;
    }
    if (on && !pxi_mpi_persist_collectives_available()) {
        PXI_INFO("px_mpi_set_persistent_collectives: this MPI library has no persistent "
                 "collectives (MPI 4.0's MPI_Allreduce_init, Open MPI 4's "
                 "MPIX_Allreduce_init)");
        return PX_ENOSYS;
    }
    const int was = pxi_mpi_persist_collectives(on);
    if (previous)
        *previous = was;
    return PX_OK;
}

/* Complete @m's op with @status: trace span, tools section, then px_on_complete_call (after
 * which @m may be freed at once). */
static void complete_msg(msg *m, int status)
{
    if (m->t0_ns && pxi_trace_active())
        pxi_trace_span("mpi", pxi_mpi_msg_name(m), m->t0_ns, pxi_trace_now_ns());
    if (m->has_section) {
        (void)px_profile_stop_section(m->section);
        (void)px_profile_destroy_section(m->section);
    }
    px_on_complete *done = m->done;
    /* All three before the op finishes: a next launch may post at once (and take the spare),
     * the engine may go away. */
    pxi_mpi_persist_release(m, status);
    if (m->posted)
        pxi_inflight_msg_done(m->e);
    if (m->spare && m == &m->spare->m) /* a launch's copy in its template's spare: free again */
        atomic_store_explicit(&m->spare->busy, 0, memory_order_release);
    else if (m->per_post) /* a graph launch's own copy (post_msg): nothing else refers to it */
        pxi_free(m);
    px_on_complete_call(done, status);
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
    char tname[sizeof m->name]; /* m may be a template: its name is formatted into a copy */
    if (PXI_UNLIKELY(finalized)) {
        pxi_mpi_format_name(m, tname, sizeof tname);
        PXI_ERROR("%s: MPI is already finalized (the op was posted after MPI_Finalize)", tname);
        px_on_complete_call(done, PX_EMPI);
        return;
    }
    if (m->is_template) {
        /* A graph op: this launch's own message (the template stays the graph's), in the
         * template's spare when no other launch's post holds it. */
        pxi_mpi_spare *sp = m->spare;
        /* The relaxed look first: a post that finds it taken writes nothing to its line. */
        const int in_spare = sp && !atomic_load_explicit(&sp->busy, memory_order_relaxed) &&
                             !atomic_exchange_explicit(&sp->busy, 1, memory_order_acquire);
        msg *c = in_spare ? &sp->m : pxi_malloc(sizeof *c);
        if (!c) {
            pxi_mpi_format_name(m, tname, sizeof tname);
            PXI_ERROR("%s: out of memory posting a recorded message", tname);
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
    m->complete = complete_msg;
    m->posted = 0;
    m->t0_ns = pxi_trace_active() ? pxi_trace_now_ns() : 0;
    m->has_section = 0;
    if (pxi_tools_active() &&
        px_profile_create_section(pxi_mpi_msg_name(m), &m->section) == PX_OK) {
        m->has_section = 1;
        (void)px_profile_start_section(m->section);
    }
    /* A recorded message starts its template's persistent request (mpi_persist.c) unless an
     * overlapping launch of its graph holds it; then, as unrecorded ones, a nonblocking call.
     * Never a blocking MPI_Allreduce, even where the poster has nothing else to do (where a
     * blocking one takes 0.2 us and a nonblocking one 0.5): it must match the other ranks'
     * calls, and a blocking collective matches no nonblocking or persistent one (MPI 3.0,
     * 5.12; MPI 4.0, 6.13). A rank that took the blocking call when its peer did not hung in
     * it (a trial build, bench/RESULTS.md, session 31). */
    int err = MPI_SUCCESS, started = 0;
    if (m->persist) {
        int st = pxi_mpi_persist_start(m, &started);
        if (st != PX_OK) {
            complete_msg(m, st); /* logged */
            return;
        }
    }
    if (!started)
        switch (m->kind) {
        case PXI_MSG_SEND:
            err = MPI_Isend(m->sbuf, m->count, m->type, m->peer, m->tag, m->comm, &m->req);
            break;
        case PXI_MSG_RECV:
            err = MPI_Irecv(m->rbuf, m->count, m->type, m->peer, m->tag, m->comm, &m->req);
            break;
        default:
            err = MPI_Iallreduce(m->sbuf, m->rbuf, m->count, m->type, m->op, m->comm, &m->req);
            break;
        }
    if (err != MPI_SUCCESS) {
        pxi_mpi_log_error(pxi_mpi_msg_name(m), err);
        complete_msg(m, PX_EMPI);
        return;
    }
    if (m->kind == PXI_MSG_SEND && pxi_mpi_complete_at_post(m))
        return; /* completed in its start (never counted as posted): @m may be gone */
    /* Posted: the op now waits for the peer and leaves the backpressure count (inflight.h). */
    m->posted = 1;
    pxi_inflight_msg_posted(m->e);
    int st = pxi_mpi_hand_off(m);
    if (st != PX_OK) {
        m->persist_owned = 0; /* a started persistent request stays with MPI, never reused */
        complete_msg(m, st);  /* the request stays with MPI; the op fails */
    }
}

int pxi_mpi_is_msg_fn(px_async_fn afn)
{
    return afn == post_msg;
}

void pxi_mpi_live_launch(int delta)
{
    atomic_fetch_add_explicit(&g.live, delta,
                              delta > 0 ? memory_order_relaxed : memory_order_release);
}

/* The op's cleanup: an unrecorded message after its op, a template with its graph. */
static void free_msg(void *arg)
{
    msg *m = arg;
    const int pushed = !m->is_template; /* counted live at its push */
    pxi_mpi_persist_free(m);
    pxi_free(m->spare); /* a template's: its graph's launches, and their posts, are done */
    pxi_free(m);
    if (pushed)
        atomic_fetch_sub_explicit(&g.live, 1, memory_order_release);
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
 * (parex/mpi.h), and *type_bytes is @type's size (MPI_Type_size_x: a type of 2 GiB or more
 * has no int size). PX_OK or PX_EINVAL (logged). A call refused for a bad argument leaves the
 * communicator's error handler as the caller set it. */
static int comm_prepare(MPI_Comm comm, MPI_Datatype type, MPI_Count *type_bytes, const char *caller)
{
    int err = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (err == MPI_SUCCESS)
        err = MPI_Type_size_x(type, type_bytes);
    if (err != MPI_SUCCESS) {
        pxi_mpi_log_error(caller, err);
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
        pxi_mpi_log_error(caller, err);
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
    int rc = pxi_mpi_progress_start(caller);
    if (rc != PX_OK) {
        pxi_free(m);
        return rc;
    }
    pxi_push_describe(&p, PXI_OP_ASYNC, m, ctx, r, n_reads, w, n_writes, PX_FN_ASYNC, 0,
                      op_names[m->kind], caller);
    p.afn = post_msg;
    p.cleanup = free_msg;
    /* Recorded (graph_record.c): the message is the graph's template, freed with the graph. */
    m->is_template = pxi_engine_tl_recorder != NULL;
    if (m->is_template) {
        rc = pxi_mpi_persist_attach(m, writes != NULL, caller);
        if (rc != PX_OK) {
            pxi_free(m);
            return rc;
        }
        /* Out of memory here only costs each post an allocation of its own. */
        m->spare = pxi_malloc(sizeof *m->spare);
        if (m->spare)
            atomic_init(&m->spare->busy, 0);
    }
    if (!m->is_template) /* before the push: a worker may run it and free it at once */
        atomic_fetch_add_explicit(&g.live, 1, memory_order_relaxed);
    rc = pxi_engine_push(e, &p);
    if (rc != PX_OK)
        free_msg(m);
    return rc;
}

/* @count elements of @type_bytes each, for the message's name: saturates at LLONG_MAX (a count
 * of 2^31 - 1 elements of a type over 4 GiB is past 64 bits signed). */
static long long msg_bytes(int count, MPI_Count type_bytes)
{
    if (count <= 0 || type_bytes <= 0)
        return 0;
    if ((long long)type_bytes > LLONG_MAX / count)
        return LLONG_MAX;
    return (long long)count * (long long)type_bytes;
}

static msg *new_msg(pxi_msg_kind kind, px_engine *e, int count, MPI_Datatype type, MPI_Comm comm,
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
    MPI_Count tb = 0;
    int rc = check_common(e, buf, count, type, comm, caller);
    if (rc == PX_OK)
        rc = check_peer_tag(comm, dest, tag, 0, caller);
    if (rc == PX_OK)
        rc = comm_prepare(comm, type, &tb, caller);
    if (rc != PX_OK)
        return rc;
    msg *m = new_msg(PXI_MSG_SEND, e, count, type, comm, caller);
    if (!m)
        return PX_ENOMEM;
    m->sbuf = buf;
    m->peer = dest;
    m->tag = tag;
    m->bytes = msg_bytes(count, tb);
    return push_msg(e, m, reads, NULL, caller);
}

int px_engine_push_mpi_irecv(px_engine *e, void *buf, int count, MPI_Datatype type, int source,
                             int tag, MPI_Comm comm, px_var *writes)
{
    static const char caller[] = "px_engine_push_mpi_irecv";
    MPI_Count tb = 0;
    int rc = check_common(e, buf, count, type, comm, caller);
    if (rc == PX_OK)
        rc = check_peer_tag(comm, source, tag, 1, caller);
    if (rc == PX_OK)
        rc = comm_prepare(comm, type, &tb, caller);
    if (rc != PX_OK)
        return rc;
    msg *m = new_msg(PXI_MSG_RECV, e, count, type, comm, caller);
    if (!m)
        return PX_ENOMEM;
    m->rbuf = buf;
    m->peer = source;
    m->tag = tag;
    m->bytes = msg_bytes(count, tb);
    return push_msg(e, m, NULL, writes, caller);
}

int px_engine_push_mpi_allreduce(px_engine *e, const void *send, void *recv, int count,
                                 MPI_Datatype type, MPI_Op op, MPI_Comm comm, px_var *reads,
                                 px_var *writes)
{
    static const char caller[] = "px_engine_push_mpi_allreduce";
    MPI_Count tb = 0;
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
    msg *m = new_msg(PXI_MSG_ALLREDUCE, e, count, type, comm, caller);
    if (!m)
        return PX_ENOMEM;
    m->sbuf = send;
    m->rbuf = recv;
    m->op = op;
    m->peer = MPI_PROC_NULL;
    m->bytes = msg_bytes(count, tb);
    return push_msg(e, m, reads, writes, caller);
}
