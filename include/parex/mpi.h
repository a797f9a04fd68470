/*
 * parex/mpi.h - MPI messages as engine ops (StarPU-MPI's model; DESIGN.md section 6).
 *
 * Declared when the library was built with MPI (PX_HAVE_MPI is 1 in parex/config.h: CMake
 * option PX_ENABLE_MPI=ON and an MPI implementation found); parex.h includes this header only
 * then, and it needs <mpi.h> (link MPI::MPI_C, or use the flags `pkg-config parex` gives).
 *
 * Model. A send is an engine op that reads its Var, a receive one that writes its Var, an
 * allreduce one that reads one Var and writes another. Each posts its nonblocking MPI call
 * (MPI_Isend, MPI_Irecv, MPI_Iallreduce; a graph's recorded receive starts its persistent
 * request, below) when its dependencies are met, as an asynchronous op
 * (px_engine_push_async), and completes when the request does: an op that reads a received
 * Var (a kernel op, a copy) starts only after the message arrived, and an op that writes a
 * sent buffer waits until MPI no longer reads it. Kokkos leaves this to user code; StarPU-MPI's
 * starpu_mpi_isend_detached / irecv_detached are the model.
 *
 * Progress. One progress thread per process ("px-mpi-progress", started at the first push or
 * recording of an MPI op, so that its creation is not part of the first message's latency;
 * asleep while nothing is outstanding; stopped by px_finalize) tests every outstanding request with
 * MPI_Testsome (twice a look while any remain: Open MPI's call runs the progress engine only when
 * it finds nothing complete, and shows what that completed only at the next call). A send is tested
 * once as it is posted and completes there when the library sent it in its start (small messages).
 * Neither where the library's tests yield the processor when idle (below). While requests are
 * outstanding it polls for the wait budget (PX_WAIT_POLICY / PX_SPIN_US, base/wait.h) after its
 * last completion, yielding the processor between polls, then sleeps in steps of 50 us doubling to
 * 250 us between polls, so a slow peer costs at most a few thousand cheap polls a second; with
 * nothing outstanding it sleeps on a futex and uses no CPU at all. No user thread ever has to call
 * MPI to complete a parex message.
 *
 * On a rank with one processor (an MPI rank bound to one core; parex/engine.h, "Where an op
 * runs") the progress thread would only take the core from the thread running the ops, so that
 * thread tests the requests itself: between ops; while it waits, polling for up to 20 ms after
 * its last completion while requests are outstanding (as a blocking MPI call would), then
 * sleeping 50-250 us between looks; and between the pieces of a kernel op it runs, at most every
 * 100 us while requests are outstanding. The last matters on transports that need the host to
 * move a message (Open MPI's TCP past the socket buffers, rendezvous protocols for messages past
 * the eager limit): a message posted before a long kernel moves while the kernel runs instead
 * of after it. A kernel has pieces when its policy has an explicit chunk size (parex/kernel.h:
 * one call per chunk; MDRange tiles, dynamic chunks); with the automatic size a static rank
 * calls its function once, and its messages wait for the call to end. Not where the MPI
 * library's tests yield the processor when idle (Open MPI's mpi_yield_when_idle, which mpirun
 * sets on an oversubscribed node): each test there would give the core away mid-kernel.
 * parex learns that setting at px_mpi_init or the first MPI op: under Open MPI 4 from the
 * ranks' environment (OMPI_MCA_mpi_yield_when_idle, else OMPI_MCA_mpi_oversubscribe, which
 * mpirun sets; as Open MPI computes it), for other Open MPI launches and versions through
 * MPI_T, whose start-up opens every Open MPI component (0.2 s a rank on Debian); other MPI
 * libraries have no such setting. PX_LOG_LEVEL=info logs the answer and where it came from.
 *
 * Completion runs the engine's usual hand-off on the progress thread: ops a message makes
 * ready go to their lanes, except on the naive engine, which runs every op on the thread that
 * makes it ready, so there they run on the progress thread (no message completes meanwhile).
 * A send that the library completed in its start (as above) completes on the thread that
 * posted it, as any op that finishes where it runs.
 *
 * Thread level: MPI_THREAD_MULTIPLE. Ops post their request on the engine thread that runs
 * them (a worker, or the pusher when the op is ready at push) while the progress thread calls
 * MPI_Testsome, and the application keeps calling MPI from its own threads; funnelling every
 * call through the progress thread under a lock (MPI_THREAD_SERIALIZED) would still race with
 * the application's own calls, which parex cannot lock. parex does not initialize MPI in
 * px_initialize: the application calls MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...) or
 * px_mpi_init, before the first MPI op. Every MPI push checks MPI_Initialized, MPI_Finalized
 * and MPI_Query_thread and fails with PX_EMPI (and a log message naming the level) when MPI is
 * not usable or the level is below MPI_THREAD_MULTIPLE.
 *
 * Errors. The first MPI op on a communicator sets its error handler to MPI_ERRORS_RETURN
 * (MPI_Comm_set_errhandler, a local call; no duplicate is made, because MPI_Comm_dup is
 * collective and a dup's messages would not match the peer's on the original communicator), so
 * a failed MPI call fails its op instead of aborting the job: the op completes with PX_EMPI,
 * the log carries MPI_Error_string's text, its written Vars carry PX_EMPI and later ops on
 * them are skipped (parex/engine.h, failures). A receive whose message is longer than its
 * buffer (MPI_ERR_TRUNCATE) is such a failure. The application's own calls on that
 * communicator return error codes from then on as well; set MPI_ERRORS_ARE_FATAL back if
 * wanted (parex ops then abort the job on an error, as MPI would).
 *
 * Shutdown. px_engine_destroy and px_finalize wait for the engine's outstanding messages
 * (their peers may still be posting the matching calls) for the drain timeout
 * (px_mpi_set_drain_timeout_ms, default 10 s). After it, receives are cancelled (MPI_Cancel)
 * and complete with PX_ECANCELED; sends that MPI cannot cancel within a further 100 ms are
 * released (MPI_Request_free: MPI may still read their buffer until the peer receives it or
 * MPI_Finalize) and nonblocking allreduces are abandoned (MPI cannot cancel or free them),
 * both completing with PX_ECANCELED and a warning. So a destroy never hangs on a message that
 * never matches. Call px_finalize before MPI_Finalize: px_finalize stops the progress thread.
 *
 * Profiling. Each message is a trace span (category "mpi", core/trace) from post to
 * completion (on the thread that completes it), and, with a Kokkos Tools library loaded, a profile
 * section started at post and stopped at completion. Their names carry the kind, bytes, peer
 * and tag: "mpi_isend 8192B to 1 tag 3", "mpi_irecv 8192B from 0 tag 3", "mpi_allreduce 8B".
 * The op itself (the post, on an engine thread) is an "op" span and a tools region named
 * "mpi_isend", "mpi_irecv" or "mpi_allreduce".
 */
#ifndef PAREX_MPI_H
#define PAREX_MPI_H

#include "parex/config.h"

#if PX_HAVE_MPI

/* C++ translation units (nvcc's .cu files among them) would otherwise pull in the MPI-2 C++
 * bindings, deprecated and removed in MPI-3, with their warnings: parex is a C API. A program
 * that wants those bindings includes <mpi.h> itself before parex.h. */
#if defined(__cplusplus) && !defined(OMPI_SKIP_MPICXX)
#define OMPI_SKIP_MPICXX 1
#endif
#if defined(__cplusplus) && !defined(MPICH_SKIP_MPICXX)
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
#include <stdint.h>

#include "parex/core.h"
#include "parex/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Initialize MPI at MPI_THREAD_MULTIPLE for parex's MPI ops (MPI_Init_thread), unless the
 * application already did; then check the level. Optional: an application may call
 * MPI_Init_thread itself. May be called before or after px_initialize.
 *
 * @param[in,out] argc, argv  as MPI_Init_thread (may be NULL).
 * @return PX_OK when MPI is initialized at MPI_THREAD_MULTIPLE;
 *         PX_EMPI     MPI_Init_thread failed, MPI was already finalized, or the level provided
 *                     (or the one the application asked for earlier) is below
 *                     MPI_THREAD_MULTIPLE (logged with the level).
 * Not thread-safe against other MPI initialization; call from the main thread.
 */
PX_API int px_mpi_init(int *argc, char ***argv);

/**
 * Finalize MPI (MPI_Finalize) if px_mpi_init initialized it; otherwise do nothing (the
 * application that initialized MPI finalizes it). Call after px_finalize.
 * @return PX_OK;
 *         PX_EBUSY    a parex MPI op is pushed and not finished (queued behind its Vars,
 *                     or posted and outstanding), or a launch of a graph holding MPI ops is
 *                     (px_finalize not called yet; logged): MPI is left initialized, call
 *                     again after px_finalize;
 *         PX_EMPI     MPI_Finalize fails (logged).
 * Not thread-safe against MPI ops being pushed; call from the main thread.
 */
PX_API int px_mpi_finalize(void);

/**
 * Set how long px_engine_destroy and px_finalize wait for an engine's outstanding messages
 * before cancelling them (see Shutdown above).
 * @param ms  milliseconds, 0 .. 3,600,000 (0: cancel at once).
 * @return PX_OK; PX_EINVAL for a value outside that range (logged). Thread-safe; applies to
 *         destroys that start afterwards.
 */
PX_API int px_mpi_set_drain_timeout_ms(int64_t ms);

/**
 * Push a send of @p count elements of @p type from @p buf to rank @p dest with @p tag on
 * @p comm (MPI_Isend), as an op that reads @p reads: it is posted once every earlier writer
 * of @p reads has finished, and completes when MPI is done with @p buf (so a later writer of
 * @p reads waits for it). StarPU-MPI's starpu_mpi_isend_detached.
 *
 * @param e       engine; @param buf the data (host-accessible, unless the MPI library is
 *                device-aware), must stay valid until the op has finished;
 * @param count   elements, >= 0; @param type a committed MPI datatype;
 * @param dest    rank in @p comm, or MPI_PROC_NULL; @param tag 0 .. MPI_TAG_UB;
 * @param reads   the Var that guards @p buf, or NULL for no ordering.
 * @return PX_OK (the op is queued; its own failure shows on px_engine_wait_for_all, and on
 *                     the Var it writes, if any: a call MPI refuses at post, such as an
 *                     uncommitted type or an operation the type has no meaning for, fails it
 *                     with PX_EMPI and MPI's error text);
 *         PX_EFAULT   e NULL, or buf NULL with count > 0;
 *         PX_EINVAL   count < 0, type MPI_DATATYPE_NULL, comm MPI_COMM_NULL, dest or tag out
 *                     of range (MPI_ANY_SOURCE / MPI_ANY_TAG on a send), a Var deleted or of
 *                     another engine, a push to another engine while this thread records a
 *                     graph;
 *         PX_EMPI     MPI not initialized, already finalized, or below MPI_THREAD_MULTIPLE;
 *         PX_ENOTINIT in a child forked while the runtime was up (parex/core.h);
 *         PX_ENOMEM.
 * Recording (parex/graph.h): between px_graph_begin and px_graph_end the message is recorded
 * with its arguments (checked now) and posted afresh by every launch of the graph (CUDA
 * graphs' re-armed nodes); it completes, or fails its op and its Vars, as the pushed op would.
 * @p buf must stay valid while the graph may launch. A recorded send makes an MPI_Isend at
 * every launch: Open MPI sends a small message inline in MPI_Isend and not in MPI_Start of a
 * persistent send (an exchange of 8-256 bytes between 2 ranks on shared memory takes 0.5-0.7
 * us against 1.0-1.2; bench_pingpong --exchange-only, bench/RESULTS.md, session 29). A recorded receive is posted through a persistent
 * request (MPI_Recv_init at its first launch, MPI_Start at each; MPI's own model for a message
 * repeated with the same arguments), freed with the graph or, if the graph outlives it, by
 * MPI_Finalize (a hook on MPI_COMM_SELF): a launch that finds it in use by an earlier, still
 * outstanding launch of the same graph, or kept after an earlier launch's error, makes a
 * request of its own with MPI_Irecv, which MPI matches alike.
 * Thread-safe; blocks under backpressure like px_engine_push_sync. A message counts toward
 * PX_ENGINE_MAX_PENDING while it waits to be posted, not once it is posted: a posted message
 * waits for its peer, not for the engine, so a rank may post as many receives as it likes
 * before the sends that match them, as in plain MPI (it still counts for the waits: the
 * engine is not idle until it completes). Ops that wait for a message (a kernel reading a
 * received Var) do count: a thread that pushes PX_ENGINE_MAX_PENDING of them before the
 * message's matching send, on every rank, waits in its next push for good; after 10 s a
 * warning says so. Push the matching messages first, or raise the limit.
 */
PX_API int px_engine_push_mpi_isend(px_engine *e, const void *buf, int count, MPI_Datatype type,
                                    int dest, int tag, MPI_Comm comm, px_var *reads);

/**
 * Push a receive of at most @p count elements of @p type into @p buf from rank @p source with
 * @p tag on @p comm (MPI_Irecv), as an op that writes @p writes: posted once earlier users of
 * @p writes have finished, complete (and @p writes readable) when the message has arrived.
 * A longer message fails the op and @p writes with PX_EMPI (MPI_ERR_TRUNCATE, logged).
 * StarPU-MPI's starpu_mpi_irecv_detached.
 *
 * @param source  rank in @p comm, MPI_ANY_SOURCE or MPI_PROC_NULL;
 * @param tag     0 .. MPI_TAG_UB or MPI_ANY_TAG; other arguments as px_engine_push_mpi_isend.
 * @return as px_engine_push_mpi_isend.
 */
PX_API int px_engine_push_mpi_irecv(px_engine *e, void *buf, int count, MPI_Datatype type,
                                    int source, int tag, MPI_Comm comm, px_var *writes);

/**
 * Push an allreduce (MPI_Iallreduce) of @p count elements of @p type from @p send into
 * @p recv with @p op over @p comm, as an op that reads @p reads and writes @p writes. Every
 * rank of @p comm must push its allreduces on @p comm in the same order (MPI's rule for
 * collectives); the engine posts them in push order only when their Vars order them, so give
 * successive allreduces on one communicator a common Var (e.g. the same @p writes).
 *
 * @param send    the contribution, or MPI_IN_PLACE (then @p recv holds it);
 * @param recv    the result, valid on every rank once @p writes is;
 * @param reads   Var guarding @p send (may be NULL or equal @p writes);
 * @param writes  Var guarding @p recv (may be NULL).
 * @return as px_engine_push_mpi_isend (PX_EINVAL also for op MPI_OP_NULL; PX_EFAULT for
 *         send or recv NULL with count > 0).
 * Recording: posted afresh by every launch with MPI_Iallreduce, or, while
 * px_mpi_set_persistent_collectives is on and the allreduce writes a Var, as a persistent
 * collective (below).
 */
PX_API int px_engine_push_mpi_allreduce(px_engine *e, const void *send, void *recv, int count,
                                        MPI_Datatype type, MPI_Op op, MPI_Comm comm, px_var *reads,
                                        px_var *writes);

/**
 * Whether allreduces recorded from now on (px_graph_begin .. px_graph_end, by any thread of
 * this process) become persistent collectives: MPI 4.0's MPI_Allreduce_init (Open MPI 4's
 * MPIX_Allreduce_init) at the graph's first launch, in the communicator's collective order
 * where the MPI_Iallreduce it replaces would be posted, then MPI_Start at every launch. Only an
 * allreduce that writes a Var: its Var orders every launch's allreduce after the previous
 * one's completion, so each launch finds the request free. On 2 ranks over shared memory a
 * started persistent allreduce completes in 0.36 us against MPI_Iallreduce's 0.59
 * (bench_pingpong; bench/RESULTS.md, session 21): parex-cg turns it on for its recorded
 * iterations. Off by default, because a persistent collective matches only persistent ones
 * (MPI 4.0, 6.13): turn it on only where every rank of the communicator records each matching
 * allreduce alike (in a graph, with a Var to write, with the setting on). A rank that
 * recorded one and cannot post it persistently fails its op (an earlier launch's allreduce
 * failed: PX_EMPI) or its push (PX_ENOMEM) rather than post an MPI_Iallreduce that would not
 * match. Messages recorded at any setting were made by it; unrecorded pushes are never
 * persistent. Receives need no setting: a recorded one is always posted through a persistent
 * request where it can (px_engine_push_mpi_isend says when), since point-to-point messages
 * match whichever call posted them; a recorded send makes an MPI_Isend at each launch.
 *
 * @param on        1 (on) or 0 (off, the default);
 * @param previous  [out] the setting before the call, or NULL.
 * @return PX_OK;
 *         PX_EINVAL  @p on other than 0 or 1;
 *         PX_ENOSYS  @p on is 1 and this MPI library has no persistent collectives (the
 *                    setting stays as it was).
 * Thread-safe (the setting is read when a recording thread pushes an allreduce). MPI need not
 * be initialized.
 */
PX_API int px_mpi_set_persistent_collectives(int on, int *previous);

#ifdef __cplusplus
}
#endif

#endif /* PX_HAVE_MPI */
#endif /* PAREX_MPI_H */
