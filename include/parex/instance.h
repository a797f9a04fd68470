/*
 * parex/instance.h - execution-space instances (Kokkos::Experimental::partition_space).
 *
 * An instance is a part of an execution space that runs its own kernels beside the other
 * parts. It is a px_space handle like any other: every call that takes a space takes an
 * instance (px_parallel_for / reduce / scan and their MDRange and team forms, px_fence,
 * px_space_concurrency, px_malloc, views, scatter, the engine's kernel pushes), and the Kokkos
 * Tools device id of its events carries its own instance number (parex/profiling.h; the
 * numbers start over after 131,070 instances, Kokkos' 17-bit field less its two reserved ids).
 *
 * What an instance is on each space:
 *  - threads: a disjoint group of the pool's ranks, sized by the partition's weights. An
 *    instance of k ranks has k threads of its own, each bound to the core of one of the
 *    group's ranks in the space's rank map (PX_BIND): k - 1 workers and a rank-0 thread. Each
 *    instance has its own launch lock, so kernels launched on two instances from two threads
 *    run at the same time on disjoint cores; launches on one instance from several threads
 *    take turns, in ticket order, as on the space. The space's own pool stays as it is: a
 *    launch on the parent space still uses every rank (its idle workers sleep while instances
 *    run). Where a launch runs is under "Placement" below.
 *  - serial: every instance runs its launches serially on the launching thread; instances
 *    are not rank-limited (each has concurrency 1), so launches on two of them from two
 *    threads also run at the same time.
 *  - cuda: one non-blocking stream per instance; launches and px_deep_copy_async on the
 *    instance are queued on its stream, px_fence(instance) synchronizes only that stream.
 *    Kernel ops the engine runs on a GPU lane use the lane's stream (ordered by their Vars).
 *
 * The engine places a kernel op pushed with an instance on a CPU lane of that instance (one
 * per live instance, up to 15 at once, then lanes are shared), so ops on different instances
 * run side by side while ops on one instance keep their order through their Vars.
 *
 * Placement (threads, with PX_BIND close or spread): a kernel launched on an instance runs on
 * the instance's cores, whichever thread launches it. A launching thread whose affinity mask
 * lies within the instance's cores (a thread the program bound there, the way Kokkos programs
 * place one thread per partition) works as the launch's rank 0 itself, at the cost of a launch
 * on the space (plus about 120 instructions, 25-45 ns, to check where it stands). Any other
 * launcher (an engine worker, a thread on another instance's cores, the thread that called
 * px_initialize, which is bound to rank 0 of the space) hands the launch to the instance's
 * rank-0 thread and waits for it on the runtime's one wait primitive: it polls politely (a
 * yield about every microsecond, so it never keeps a core a rank of another instance needs)
 * for the wait budget, PX_SPIN_US, then sleeps; it sleeps at once when it shares a core with
 * the instance. The hand-off costs about 1-5 us per launch on the loaded 2-core CI VM, where a
 * system call costs 0.3-0.7 us (bench/bench_instance other_core; its rank-0 thread waits for work
 * the same polite way, so two threads launching on each other's instance do not starve each other:
 * cross_50us). So engine kernel ops placed on an instance, px_deep_copy_async on it and launches
 * nested in its kernels (inline) run on its cores too. The check reads the launcher's mask through
 * a per-thread copy refreshed every 10 ms and whenever the thread is found on a core outside it: a
 * thread re-bound to a wider mask while it sits on the instance's core may still run one launch
 * there as rank 0 within those 10 ms. With PX_BIND=none, without hwloc or under HWLOC_XMLFILE
 * nothing is bound, an instance has no rank-0 thread, and the launching thread works as rank 0, as
 * on the space.
 *
 * The threads parex creates and their affinity masks (Linux): the Threads space's workers and
 * instances' threads, one core each as above (named px-threads-<rank>; an instance's rank-0
 * thread is px-threads-0); the engine's workers (px-cpu*, px-prio*, px-io*, px-gpu*) and the
 * MPI progress thread (px-mpi-progress), the process's mask as px_initialize found it
 * (taskset, cgroups, mpirun), not the binding of the thread that created them. The thread
 * that calls px_initialize is bound to rank 0's core of the space until px_finalize (as
 * OpenMP binds its master thread; parex/space.h), so threads the program creates from it in
 * between inherit that core: create them before px_initialize, set their mask, or use
 * PX_BIND=none. Their launches on instances run on the instances' cores all the same.
 *
 * Memory: px_malloc on an instance allocates in its space's memory (px_free may name either);
 * a view or scatter made on an instance names it, so free those before the instance goes.
 *
 * Handles stay valid until px_space_instance_destroy or px_finalize, which destroys the
 * instances the program did not (Caller must: not use an instance after either).
 */
#ifndef PAREX_INSTANCE_H
#define PAREX_INSTANCE_H

#include <stddef.h>

#include "parex/core.h"
#include "parex/space.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The most instances one px_space_partition call makes on a space that does not split ranks
 *  (serial, cuda); on threads the limit is the space's rank count. */
#define PX_PARTITION_MAX 256

/**
 * Split an execution space into @p n instances sized by @p weights
 * (Kokkos::Experimental::partition_space(space, weights...)).
 *
 * On threads, the space's P ranks (px_space_concurrency) are divided into n groups of
 * consecutive ranks, instance i getting about P * weights[i] / sum(weights) ranks and at least
 * one (largest remainders break ties, lower index first); the groups cover every rank. E.g.
 * weights {3, 1} on 4 ranks give 3 and 1, on 2 ranks 1 and 1. On serial and cuda every
 * instance is a whole space (serial thread, cuda stream) and the weights are only checked.
 *
 * @param s        [in] the space to split (threads, serial or cuda), or NULL for the default
 *                 space; an instance cannot be split again.
 * @param n        number of instances, 1 .. P on threads (the space's rank count), 1 ..
 *                 PX_PARTITION_MAX elsewhere.
 * @param weights  [in] n positive weights (relative sizes), or NULL for equal weights.
 * @param out      [out] n handles, instance i in out[i]; untouched on failure.
 * @return PX_OK;
 *         PX_EFAULT   out is NULL;
 *         PX_EINVAL   n < 1, n above the limit (the message names it), a weight <= 0, or s is
 *                     an instance;
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_ENODEV   s is not available;
 *         PX_EDEADLK  called from inside a kernel;
 *         PX_ENOMEM   memory, worker threads or streams could not be had (nothing is kept);
 *         PX_ECUDA    a stream could not be created.
 * Thread-safe; not from inside a kernel or an engine op that runs on s.
 */
PX_API int px_space_partition(px_space *s, int n, const int *weights, px_space **out);

/**
 * Destroy an instance made by px_space_partition. Work outstanding on it is finished first:
 * launches in flight from other threads, engine kernel ops pushed on it (so every op pushed on
 * it must be able to run: Caller must not destroy an instance whose ops wait on Vars that
 * nothing will write, and must destroy first any graph that recorded ops on it), and queued
 * cuda work. Instances of one partition are independent: any may be destroyed first.
 * px_finalize destroys the instances still alive.
 *
 * @param instance  [in] an instance handle.
 * @return PX_OK;
 *         PX_EFAULT   instance is NULL;
 *         PX_EINVAL   instance is not a live instance (a registry space such as
 *                     px_space_by_name("threads"), or one already destroyed);
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_EDEADLK  called from inside a kernel or an engine op;
 *         PX_ECUDA    a device error while finishing its stream (the instance is still
 *                     destroyed).
 * Thread-safe; Caller must not launch on the instance while destroying it.
 */
PX_API int px_space_instance_destroy(px_space *instance);

/**
 * Copy @p bytes from @p src (memory of @p src_s) to @p dst (memory of @p dst_s), ordered on
 * execution space @p exec (Kokkos::deep_copy(exec, dst, src)): it starts after the launches
 * made on exec before it and is complete once px_fence(exec) returns. On a cuda instance or
 * the cuda space it is queued on the stream and returns at once; on a threads instance the
 * instance's ranks copy in parallel, in turn with its other launches, and the copy is done on
 * return (host spaces complete their work before returning). A copy whose other side is not
 * exec's memory (host and cuda memory on a threads exec) is done by the device side at once, as
 * px_deep_copy does. Tools see begin/end_deep_copy.
 *
 * @param exec   [in] the space or instance that orders the copy (not NULL).
 * @param dst_s  [in] the space dst was allocated in (an instance means its space's memory).
 * @param dst    [out] bytes destination; may be NULL only when bytes is 0.
 * @param src_s  [in] the space src was allocated in.
 * @param src    [in] bytes source; must not overlap dst (src == dst copies nothing).
 * @param bytes  number of bytes; 0 copies nothing.
 * @return PX_OK;
 *         PX_EFAULT   exec, dst_s or src_s is NULL, or a pointer is NULL with bytes > 0;
 *         PX_EINVAL   the ranges overlap (other than src == dst);
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_ENODEV   a space is not available;
 *         PX_ECUDA    a device error (the log names it).
 * Thread-safe; Caller must keep both buffers alive until px_fence(exec).
 */
PX_API int px_deep_copy_async(px_space *exec, px_space *dst_s, void *dst, px_space *src_s,
                              const void *src, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* PAREX_INSTANCE_H */
