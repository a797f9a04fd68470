/* core/engine/mpi_persist.c - persistent requests for recorded MPI messages (mpi_impl.h says
 * what they are for): a template's slot (receives always; allreduces that write a Var
 * while px_mpi_set_persistent_collectives is on, since a persistent collective matches only
 * persistent ones on the other ranks; sends never, pxi_mpi_persist_attach says why), the start
 * of a launch's post on it, its release at completion, its free with the graph, and the
 * MPI_Finalize hook that frees what graphs still hold.
 *
 * Ownership: a slot's request is owned by whoever set its busy flag: the post that started it
 * (until complete_msg releases it after a normal completion or a cancel), the template's free,
 * or the MPI_Finalize hook (for good). A post that finds a receive's request busy makes an
 * MPI_Irecv instead; an allreduce's is busy then only after a failure, and its
 * post fails.
 * The flag stays set for good after a request completed with an error (Open MPI frees a
 * truncated receive's request), and when the progress layer abandons or frees one at an
 * engine's drain deadline: no one starts or frees it again (an MPI that keeps a failed request
 * leaks it). A cancelled request is inactive and valid, and is released as a completed one.
 *
 * Finalize: MPI requires every request freed before MPI_Finalize, and a graph may outlive it
 * (destroyed later, or never). The slots that hold a request are listed here, and an attribute
 * on MPI_COMM_SELF, set when the first slot is attached (at recording), has a delete callback
 * that frees the listed inactive requests: MPI_Finalize deletes MPI_COMM_SELF's attributes first
 * (MPI 2.2, 8.7.1), whether parex (px_mpi_finalize) or the application calls it. PETSc hooks its
 * own finalization the same way.
 *
 * Layering: below mpi.c, beside mpi_progress.c; calls MPI only.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "base/alloc.h"
#include "base/log.h"
#include "core/engine/mpi_impl.h"

#ifdef OPEN_MPI
#include <mpi-ext.h> /* OMPI_HAVE_MPI_EXT_PCOLLREQ: MPIX_Allreduce_init (Open MPI 4) */
#endif

#if MPI_VERSION >= 4
#define PXI_ALLREDUCE_INIT MPI_Allreduce_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define PXI_ALLREDUCE_INIT MPIX_Allreduce_init
#endif

struct pxi_mpi_persist {
    MPI_Request req; /* MPI_REQUEST_NULL until the first post creates it */
    atomic_int busy; /* 1: owned (see above) */
    int listed;      /* under g.lock: on the list (req created, not yet freed) */
    pxi_mpi_persist *prev, *next;
};

static struct {
    pthread_mutex_t lock;
    pxi_mpi_persist *head; /* under lock: slots holding a request */
    int hooked;            /* under lock: the MPI_COMM_SELF attribute is set */
    int keyval;            /* under lock */
} g = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, MPI_KEYVAL_INVALID};

static void unlist(pxi_mpi_persist *p)
{
    if (!p->listed)
        return;
    if (p->prev)
        p->prev->next = p->next;
    else
        g.head = p->next;
    if (p->next)
        p->next->prev = p->prev;
    p->prev = p->next = NULL;
    p->listed = 0;
}

/* MPI_COMM_SELF's attribute delete callback, run by MPI_Finalize before anything else: free
 * every listed request no post owns and keep the slots busy for good (a post after
 * MPI_Finalize fails before it gets here: mpi.c's post_msg). A request a post still owns is a
 * message outstanding at MPI_Finalize, which px_mpi_finalize refuses and an application must
 * not do; it is left to MPI. */
static int on_finalize(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)attr;
    (void)extra;
    pthread_mutex_lock(&g.lock);
    while (g.head) {
        pxi_mpi_persist *p = g.head;
        unlist(p);
        if (atomic_exchange_explicit(&p->busy, 1, memory_order_acq_rel) == 0)
            MPI_Request_free(&p->req);
    }
    g.hooked = 0;
    g.keyval = MPI_KEYVAL_INVALID;
    pthread_mutex_unlock(&g.lock);
    MPI_Comm_free_keyval(&keyval);
    return MPI_SUCCESS;
}

/* Under g.lock: set the finalize hook once. MPI's error code. */
static int hook_finalize(void)
{
    if (g.hooked)
        return MPI_SUCCESS;
    int err = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_finalize, &g.keyval, NULL);
    if (err == MPI_SUCCESS) {
        err = MPI_Comm_set_attr(MPI_COMM_SELF, g.keyval, NULL);
        if (err != MPI_SUCCESS)
            MPI_Comm_free_keyval(&g.keyval);
    }
    g.hooked = err == MPI_SUCCESS;
    return err;
}

/* px_mpi_set_persistent_collectives: record allreduces as persistent collectives. */
static atomic_int collectives_on;

int pxi_mpi_persist_collectives(int on)
{
    return atomic_exchange_explicit(&collectives_on, on, memory_order_relaxed);
}

int pxi_mpi_persist_collectives_available(void)
{
#ifdef PXI_ALLREDUCE_INIT
    return 1;
#else
    return 0;
#endif
}

int pxi_mpi_persist_attach(pxi_mpi_msg *m, int writes_var, const char *caller)
{
    m->persist = NULL;
    m->persist_owned = 0;
    /* A send posts MPI_Isend at every launch. Open MPI 4.1's ob1 sends a small message
     * (on shared memory up to 256 bytes, vader's inline limit) inline in MPI_Isend, and
     * MPI_Start of a persistent send never does: an exchange of 8-256 bytes between 2 one-core
     * ranks took 1.0-1.2 us with a persistent send against 0.5-0.7 with MPI_Isend, and from
     * 512 bytes on the two are within 0.15 us (bench_pingpong --exchange-only;
     * bench/RESULTS.md, session 29). MPICH's MPI_Start of a persistent send is an isend. A
     * persistent receive costs no more than MPI_Irecv at any size. */
    if (m->kind == PXI_MSG_SEND)
        return PX_OK;
    const int collective = m->kind == PXI_MSG_ALLREDUCE;
    if (collective && (!writes_var || !atomic_load_explicit(&collectives_on, memory_order_relaxed)))
        return PX_OK; /* each launch calls MPI_Iallreduce */
    pxi_mpi_persist *p = pxi_malloc(sizeof *p);
    if (!p) {
        if (!collective)
            return PX_OK; /* the posts make nonblocking calls, which match alike */
        /* The other ranks' matching allreduce may be persistent: this one must be too. */
        PXI_ERROR("%s: out of memory recording a persistent allreduce", caller);
        return PX_ENOMEM;
    }
    /* The finalize hook now, at recording, rather than in the first launch's post: the
     * first MPI_Comm_set_attr builds Open MPI's attribute table, 25-30 us of the first
     * iteration on the test VM (bench/RESULTS.md, session 28). */
    pthread_mutex_lock(&g.lock);
    const int err = hook_finalize();
    pthread_mutex_unlock(&g.lock);
    if (err != MPI_SUCCESS) {
        pxi_free(p);
        pxi_mpi_log_error(caller, err);
        return PX_EMPI;
    }
    p->req = MPI_REQUEST_NULL;
    atomic_init(&p->busy, 0);
    p->listed = 0;
    p->prev = p->next = NULL;
    m->persist = p;
    return PX_OK;
}

/* Create @m's persistent request in @p (under p's busy flag; @m is the post's own copy). MPI's
 * error code. */
static int create(pxi_mpi_persist *p, pxi_mpi_msg *m)
{
    int err;
    switch (m->kind) {
    case PXI_MSG_RECV:
        err = MPI_Recv_init(m->rbuf, m->count, m->type, m->peer, m->tag, m->comm, &p->req);
        break;
    default:
#ifdef PXI_ALLREDUCE_INIT
        err = PXI_ALLREDUCE_INIT(m->sbuf, m->rbuf, m->count, m->type, m->op, m->comm, MPI_INFO_NULL,
                                 &p->req);
#else
        err = MPI_ERR_INTERN; /* no slot is attached then (pxi_mpi_persist_attach) */
#endif
        break;
    }
    if (err != MPI_SUCCESS) {
        p->req = MPI_REQUEST_NULL;
        return err;
    }
    pthread_mutex_lock(&g.lock);
    err = hook_finalize();
    if (err == MPI_SUCCESS) {
        p->next = g.head;
        if (g.head)
            g.head->prev = p;
        g.head = p;
        p->listed = 1;
    }
    pthread_mutex_unlock(&g.lock);
    if (err != MPI_SUCCESS)
        MPI_Request_free(&p->req); /* unfreeable at MPI_Finalize without the hook */
    else
        PXI_DEBUG("%s: a persistent request, started by each launch of its graph",
                  pxi_mpi_msg_name(m));
    return err;
}

int pxi_mpi_persist_start(pxi_mpi_msg *m, int *started)
{
    pxi_mpi_persist *p = m->persist;
    *started = 0;
    if (atomic_exchange_explicit(&p->busy, 1, memory_order_acq_rel) != 0) {
        if (m->kind == PXI_MSG_RECV)
            return PX_OK; /* the caller makes an MPI_Irecv */
        /* Only after a failure (a launch's allreduce waits for the previous one's end): an
         * MPI_Iallreduce would not match the other ranks' persistent one. */
        PXI_ERROR("%s: its persistent allreduce failed in an earlier launch (or was abandoned "
                  "at an engine's drain deadline); it is not posted again",
                  pxi_mpi_msg_name(m));
        return PX_EMPI;
    }
    int err = p->req == MPI_REQUEST_NULL ? create(p, m) : MPI_SUCCESS;
    if (err == MPI_SUCCESS)
        err = MPI_Start(&p->req);
    if (err != MPI_SUCCESS) {
        atomic_store_explicit(&p->busy, 0, memory_order_release);
        pxi_mpi_log_error(pxi_mpi_msg_name(m), err);
        return PX_EMPI;
    }
    m->req = p->req;
    m->persist_owned = 1;
    *started = 1;
    return PX_OK;
}

void pxi_mpi_persist_release(pxi_mpi_msg *m, int status)
{
    if (!m->persist_owned)
        return;
    m->persist_owned = 0;
    /* A cancelled request is inactive and valid (MPI_Test_cancelled); a failed one may be
     * gone (Open MPI frees a truncated receive's). */
    if (status == PX_OK || status == PX_ECANCELED)
        atomic_store_explicit(&m->persist->busy, 0, memory_order_release);
}

void pxi_mpi_persist_free(pxi_mpi_msg *m)
{
    pxi_mpi_persist *p = m->persist;
    if (!p)
        return;
    m->persist = NULL;
    pthread_mutex_lock(&g.lock);
    unlist(p);
    pthread_mutex_unlock(&g.lock);
    /* Busy here: the MPI_Finalize hook freed it, or a drain deadline left it with MPI. */
    if (atomic_exchange_explicit(&p->busy, 1, memory_order_acq_rel) == 0 &&
        p->req != MPI_REQUEST_NULL) {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (!finalized)
            MPI_Request_free(&p->req);
    }
    pxi_free(p);
}
