/*
 * parex/graph.h - engine graphs: record a DAG of engine pushes once, launch it many times.
 *
 * Solvers push the same DAG every iteration (a CG iteration, a time step, a tiled Cholesky).
 * A graph records those pushes once and resolves their dependencies once; a launch then runs
 * the whole DAG at a fraction of a push's cost per op. The idea is MXNet's bulk execution
 * (consecutive ops of a segment run as one engine op), CUDA graphs (cudaStreamBeginCapture /
 * cudaGraphInstantiate / cudaGraphLaunch: capture, then replay), Kokkos' Experimental::Graph
 * (a DAG of kernels submitted as one unit) and Taskflow's tf::Taskflow, whose built graph an
 * executor re-runs.
 *
 * Recording: between px_graph_begin(e) and px_graph_end(e, &g), every push the calling thread
 * makes to @e (px_engine_push_sync, px_engine_push_async, px_engine_op_push and the kernel ops
 * px_engine_push_parallel_*) is recorded instead of run: its function, argument, context,
 * Vars, property, priority and name. The push returns PX_OK (or the status it would return
 * for bad arguments) and nothing runs. Kernel ops keep their prepared launch with a copy of
 * the kernel arguments, as a push does. MPI ops (parex/mpi.h) are recorded too: each launch
 * posts each of them (a send with MPI_Isend; a receive on the message's persistent request
 * unless an earlier launch still holds it or an error kept it, else with MPI_Irecv; an
 * allreduce with MPI_Iallreduce, or as a persistent collective where the application asked
 * for that, px_mpi_set_persistent_collectives; parex/mpi.h) and the op completes when that
 * post does, as a pushed MPI op.
 * Pushes from other threads are not affected.
 *
 * Launching: the graph as a whole takes one entry in the queue of every Var its ops touch (a
 * write when some op writes the Var, else a read), so a launch is ordered after earlier work
 * on those Vars and before later work on them, like one op. Inside the graph, ops are released
 * by predecessor counters, computed once at px_graph_end from the recorded Var uses (an op
 * depends on the last earlier writer of each Var it uses, and a write also on the reads
 * since; duplicate and cheap transitive edges are removed), with no Var locking. The result
 * equals pushing the recorded ops one by one in recording order at the moment of the launch.
 * Launches of one graph run in launch order when the graph writes a Var (the Var queues order
 * them); each launch has its own counters, so several may be queued at once.
 *
 * Failures: inside a launch an op is skipped when a Var it uses failed (earlier in the launch,
 * or before the launch), passing the failure on, exactly as for pushed ops; the Vars whose
 * last writer in the graph failed or was skipped are marked failed with its status when the
 * launch ends, and the failure counts for px_engine_wait_for_all.
 *
 * Lifetime: the recorded args, names and Vars must stay valid (Vars: not deleted) while the
 * graph may be launched; a launch naming a deleted Var is PX_EINVAL. Destroy every graph
 * before its engine.
 */
#ifndef PAREX_GRAPH_H
#define PAREX_GRAPH_H

#include "parex/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A recorded DAG of engine ops (opaque). */
typedef struct px_graph px_graph;

/**
 * Start recording the calling thread's pushes to @p e (cudaStreamBeginCapture; Kokkos'
 * create_graph). Until px_graph_end, the thread's pushes to @p e are recorded, not run, and
 * its px_engine_wait_for_var / px_engine_wait_for_all calls return PX_EBUSY (what they would
 * wait for was not run); a push to another engine is PX_EINVAL.
 * @param e  the engine the graph will run on.
 * @return PX_OK; PX_EFAULT for NULL; PX_EINVAL for a bad engine; PX_EBUSY when this thread is
 *         already recording; PX_EDEADLK from inside an engine op (an op must not record:
 *         the ops it records could only run after it); PX_ENOMEM.
 * Thread-safe: each thread records on its own; several threads may record at once.
 */
PX_API int px_graph_begin(px_engine *e);

/**
 * Stop recording and build the graph: the static DAG (predecessor counts, successor lists)
 * of the recorded ops, in recording order (a topological order).
 * @param e    the engine passed to px_graph_begin.
 * @param out  [out] the graph; also when it has no op (its launch then does nothing).
 * @return PX_OK; PX_EFAULT for NULL @p e or @p out; PX_EINVAL when this thread is not
 *         recording, or recording for another engine (the recording goes on); PX_ENOMEM
 *         (the recording is discarded).
 * Thread-safe (on the recording thread's own recording).
 */
PX_API int px_graph_end(px_engine *e, px_graph **out);

/**
 * Run the graph's DAG once (cudaGraphLaunch; Taskflow's executor.run(taskflow)), ordered
 * after earlier work and before later work on the Vars its ops touch. Returns once the launch
 * is queued; px_engine_wait_for_var on a Var of the graph (or wait_for_all) waits for it.
 * Ops run on the lanes their context and property pick, as pushed ops would.
 * @param g  a graph from px_graph_end, not destroyed.
 * @return PX_OK; PX_EFAULT for NULL; PX_EINVAL for a destroyed graph, a graph whose engine
 *         is gone, or a recorded Var that was deleted; PX_EBUSY when the calling thread is
 *         recording (a launch cannot be recorded); PX_ENOMEM.
 * Thread-safe: any thread may launch, also from inside ops and concurrently with other
 * launches of the same graph. Blocks like a push while the engine has PX_ENGINE_MAX_PENDING
 * ops in flight (a launch counts as one op).
 */
PX_API int px_graph_launch(px_graph *g);

/**
 * Destroy a graph. Launches still queued or running finish first: the graph's memory (and
 * the cleanup of its kernel ops' argument copies) is released by the last of them, as
 * px_var_delete defers a Var's deletion; the handle is invalid at once.
 * @param g  a graph from px_graph_end.
 * A graph whose engine was destroyed first keeps only its memory (engine destroy released
 * its ops' argument copies and launch state once no op was in flight): destroying it then is
 * safe and returns PX_OK, while launching it returns PX_EINVAL.
 * @return PX_OK; PX_EFAULT for NULL; PX_EINVAL for a graph already destroyed (while its
 *         memory is still held by a launch; after that, passing it again is undefined).
 * Thread-safe with respect to running launches; Caller must not launch @p g concurrently.
 */
PX_API int px_graph_destroy(px_graph *g);

/**
 * Number of ops recorded in @p g, and of edges of its reduced DAG (either pointer may be
 * NULL).
 * @return PX_OK; PX_EFAULT for NULL @p g; PX_EINVAL for a destroyed graph.
 * Thread-safe.
 */
PX_API int px_graph_stats(const px_graph *g, size_t *n_ops, size_t *n_edges);

#ifdef __cplusplus
}
#endif

#endif
