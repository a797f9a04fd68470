/* core/engine/mpi_impl.h - what the MPI ops (core/engine/mpi.c) and the progress layer below
 * them (core/engine/mpi_progress.c) share: the message, the hand-off and the MPI error log.
 * Internal; compiled only with PX_HAVE_MPI.
 *
 * Layering: mpi.c calls down into mpi_progress.c (pxi_mpi_hand_off, pxi_mpi_log_error); the
 * progress layer never calls up: it completes a message through the message's own function
 * pointer (complete), which the ops set. */
#ifndef PXI_MPI_IMPL_H
#define PXI_MPI_IMPL_H

#include <stdatomic.h>
#include <stdint.h>

#include "parex/engine.h"
#include "parex/mpi.h"

typedef enum { PXI_MSG_SEND, PXI_MSG_RECV, PXI_MSG_ALLREDUCE } pxi_msg_kind;

typedef struct pxi_mpi_persist pxi_mpi_persist; /* mpi_persist.c */

typedef struct pxi_mpi_msg {
    pxi_msg_kind kind;
    const void *sbuf;
    void *rbuf;
    int count;
    MPI_Datatype type;
    MPI_Op op;
    int peer, tag;
    MPI_Comm comm;
    px_engine *e;
    /* Written by post_msg before the hand-off (the list lock orders it for the progress
     * layer), then owned by whoever holds the request set's lock. */
    MPI_Request req;
    px_on_complete *done;
    /* Finishes the op with a status (mpi.c's complete_msg); after it the message may be freed
     * at once, so the caller touches it no more. */
    void (*complete)(struct pxi_mpi_msg *m, int status);
    int64_t t0_ns;    /* trace start, when tracing */
    uint32_t section; /* tools section, when has_section */
    int has_section;
    int64_t cancel_ns; /* progress layer: when the cancel was issued, 0: not cancelled */
    /* A recorded message (graph_record.c) is a template: each post (each launch of its
     * graph) copies it into a message of its own (per_post), the template's spare or an
     * allocation, which complete_msg gives back or frees; the
     * copy starts the template's persistent request when it gets it, else makes a request of
     * its own, so queued launches never share one at the same time. */
    int is_template, per_post;
    /* A template's reusable copy (NULL: none, each post allocates one), taken by a post that
     * finds it free and given back by complete_msg (the copy is the one at &spare->m).
     * A launch's message needed a malloc and a free a post (about 100 instructions of the 6,000
     * the engine spends on a one-rank CG iteration of 4 messages: bench/RESULTS.md, session
     * 31); an overlapping launch that finds it taken allocates as before. */
    struct pxi_mpi_spare *spare;
    /* A template's persistent request (mpi_persist.c; NULL: each post makes a nonblocking
     * call), shared by the posts copied from it. A post that started it owns it
     * (persist_owned) until complete_msg releases it; the progress layer clears persist_owned
     * when it abandons or frees the request at an engine's drain deadline, so that it is never
     * started again. */
    pxi_mpi_persist *persist;
    int persist_owned;
    /* Posted and counted in its engine's n_posted (pxi_inflight_msg_posted) until complete_msg
     * takes it off, before the op finishes. */
    int posted;
    struct pxi_mpi_msg *next; /* incoming list link, under the progress layer's list lock */
    long long bytes;          /* count times the type's size, for the name */
    /* The detailed name ("mpi_isend 800B to 1 tag 7"), formatted on first use only
     * (pxi_mpi_msg_name: a trace span, a tools section, a failure); "" until then. A push
     * formatted it every time, ~2,900 instructions of snprintf per message. */
    char name[64];
} pxi_mpi_msg;

/* A template message's reusable copy (pxi_mpi_msg.spare): busy from the post that takes it
 * (acquire) until complete_msg gives it back (release), after its last touch of the copy. */
typedef struct pxi_mpi_spare {
    atomic_int busy;
    pxi_mpi_msg m;
} pxi_mpi_spare;

/* Format @m's detailed name into @buf (@n bytes) from its kind, size, peer and tag. Reads @m
 * only: safe on a graph's template message, which several launches may post at once. Both
 * functions live in mpi_progress.c, below mpi.c, which calls them. */
void pxi_mpi_format_name(const pxi_mpi_msg *m, char *buf, size_t n);

/* @m's detailed name, formatted into m->name on first use. For a message the calling thread
 * owns (being posted, or under the progress layer's lock); never a template. */
const char *pxi_mpi_msg_name(pxi_mpi_msg *m);

/* Start the progress thread unless it runs: at the push of an MPI op (mpi.c's push_msg), so
 * that the thread's creation (300 us on session 24's VM, whose page-table changes are dear: the
 * stack's mmap and mprotect, the clone) is paid by the push, or by a graph's recording, rather
 * than by the first post, inside the first launch's critical path. The thread sleeps while
 * nothing is outstanding. PX_OK, or PX_ENOMEM (logged with @caller). Thread-safe. */
int pxi_mpi_progress_start(const char *caller);

/* Give a posted message (its request started, m->complete set) to the progress layer, starting
 * the progress thread if it does not run (px_finalize stops it). PX_OK, or PX_ENOMEM when the
 * thread cannot start (logged; the caller completes the op with it and still owns @m). Thread-safe.
 */
int pxi_mpi_hand_off(pxi_mpi_msg *m);

/* A send just started (m->complete set, not yet counted as posted): test its request once,
 * before any hand-off. A small send completes in its start (Open MPI copies it into the
 * peer's shared-memory slot or the socket), and its test then calls no progress; finished
 * here, on the posting thread, it no longer takes the first look of the next poll, whose
 * MPI_Testsome would return it alone and progress nothing (mpi_progress.c, progress_round).
 * Not where the library's tests yield when idle (pxi_mpi_tests_yield). Returns 1 when @m
 * completed (through m->complete, after which the caller must not touch it), 0 when it is
 * still outstanding. Thread-safe (@m is the caller's). */
int pxi_mpi_complete_at_post(pxi_mpi_msg *m);

/* ---- persistent requests for recorded messages (mpi_persist.c) ---------------------------
 * A recorded message is posted once a launch of its graph, with the same buffers, peer, tag and
 * communicator every time: MPI's persistent requests (MPI_Recv_init, and MPI 4.0's
 * MPI_Allreduce_init, Open MPI 4's MPIX_Allreduce_init) are made for it. They save the set-up
 * of each post; for the allreduce, whose nonblocking form builds a schedule at every call,
 * 0.59 -> 0.36 us a 2-rank allreduce on shared memory (bench_pingpong; bench/RESULTS.md,
 * session 21). Not for a send: MPI_Isend sends a small one inline where MPI_Start does not
 * (pxi_mpi_persist_attach). */

/* For the push of template @m (recording; @caller names the push for the log): give it a
 * persistent-request slot. A receive always (a post that finds the request in use by an
 * overlapping launch of the graph makes an MPI_Irecv instead: point-to-point messages match by
 * envelope, whichever call posted them; out of memory, no slot); a send never (each post makes
 * an MPI_Isend). An allreduce only
 * when px_mpi_set_persistent_collectives is on and it writes a Var (@writes_var), which orders
 * every launch's allreduce after the last one's completion, so that its request is never in
 * use when a launch posts: a persistent collective matches only persistent ones, so the
 * application promises that every rank records its matching allreduces alike, and a rank that
 * cannot must fail rather than post an MPI_Iallreduce. The first slot also sets the MPI_Finalize
 * hook (mpi_persist.c). PX_OK; PX_ENOMEM for an allreduce's slot; PX_EMPI when the hook cannot
 * be set (both logged). Thread-safe. */
int pxi_mpi_persist_attach(pxi_mpi_msg *m, int writes_var, const char *caller);

/* Set whether allreduces recorded from now on get a slot (@on 0 or 1;
 * px_mpi_set_persistent_collectives, which refuses 1 where the MPI has no persistent
 * collectives); returns the previous setting. */
int pxi_mpi_persist_collectives(int on);

/* 1 when this MPI has persistent collectives (MPI 4.0, or Open MPI's pcollreq extension). */
int pxi_mpi_persist_collectives_available(void);

/* Post @m (a launch's copy of a template with a slot) on the template's persistent request:
 * creates the request on first use, then MPI_Start. PX_OK with *started 1: @m now owns the
 * request; PX_OK with *started 0: a receive's request is in use (an overlapping
 * launch, or kept after a failure) and the caller posts a nonblocking call; PX_EMPI (logged):
 * the call failed, or an allreduce's request is kept after a failure (its launches never
 * overlap), and the op fails. Thread-safe (one post owns the request at a time). */
int pxi_mpi_persist_start(pxi_mpi_msg *m, int *started);

/* @m (owning its template's request, else nothing to do) completed with @status: PX_OK or
 * PX_ECANCELED (a cancel: the request is inactive and valid) release it for the next post;
 * after an error it is never started or freed again, since MPI may have freed a request that
 * failed (Open MPI does, for a truncated receive): a receive's later posts make MPI_Irecv
 * calls, an allreduce's fail. Call before the op finishes (a next launch may post
 * at once). */
void pxi_mpi_persist_release(pxi_mpi_msg *m, int status);

/* Template @m is being freed (its graph's cleanup): free its persistent request (unless MPI is
 * finalized, where MPI_Finalize's hook already did, or a drain deadline left it with MPI) and
 * its slot. Thread-safe against MPI_Finalize's hook. */
void pxi_mpi_persist_free(pxi_mpi_msg *m);

/* Log MPI error code @err as "@what: <MPI's error string>" (PXI_ERROR). Thread-safe. */
void pxi_mpi_log_error(const char *what, int err);

#endif
