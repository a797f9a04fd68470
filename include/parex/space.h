/*
 * parex/space.h - execution spaces: where kernels run.
 *
 * An execution space is Kokkos' ExecutionSpace as an opaque handle: "serial" (the calling
 * thread), "threads" (a pool of pthreads bound to cores with hwloc, the caller working as
 * rank 0) and "cuda" (an NVIDIA GPU). Spaces register themselves before main; a space built
 * into the library can still be unavailable at run time (no GPU): then px_space_by_name returns
 * NULL and px_print_configuration says why.
 *
 * Handles stay valid from px_initialize to px_finalize. Using one after px_finalize is
 * undefined (Caller must: not keep handles across a finalize; look them up again).
 *
 * Rules of the threads space (the ones Kokkos' Threads backend breaks are marked *):
 *  - * Any thread may launch, not only the one that initialized (Kokkos issue #886).
 *    Concurrent launches take a ticket lock and run one at a time, in the order they took
 *    their tickets; the launching thread works as rank 0 of that launch.
 *  - A launch from inside a running kernel (nested parallelism) runs inline and serially on
 *    the calling thread; it never waits for the pool, so it cannot deadlock. px_fence from
 *    inside a kernel returns PX_EDEADLK.
 *  - * Reductions join lower index ranges on the left in a fixed tree (Kokkos joins in reverse
 *    rank order): bitwise reproducible for a fixed thread count, policy and chunk size, and a
 *    non-commutative join gives the sequential answer. Scans always split statically.
 *  - * Idle workers spin for PX_SPIN_US (100 us by default), then sleep on a futex: an idle
 *    runtime burns no CPU (Kokkos issue #6686: 100 % per core while idle).
 *  - * The pool respects the process cpuset (taskset, cgroups, mpirun; Kokkos issue #1738)
 *    and binds rank r as PX_BIND says; the thread that calls px_initialize is rank 0's usual
 *    launcher and is bound to rank 0's core until px_finalize restores its own binding, so
 *    threads it creates in between inherit that core (as under OMP_PROC_BIND). Use
 *    PX_BIND=none to leave it alone. Launches on an instance run on the instance's cores
 *    whatever the launching thread's binding (parex/instance.h, "Placement").
 */
#ifndef PAREX_SPACE_H
#define PAREX_SPACE_H

#include "parex/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque execution space handle. */
typedef struct px_space px_space;

/**
 * The default execution space (Kokkos::DefaultExecutionSpace): PX_DEFAULT_SPACE /
 * --px-default-space / px_settings.default_space if set, else the available space of highest
 * priority (cuda > threads > serial). Launches given a NULL space use it.
 *
 * @return the space, or NULL when the runtime is not initialized (no status, nothing logged).
 * Thread-safe; callable from inside kernels and ops.
 */
PX_API px_space *px_default_space(void);

/**
 * Look a space up by name, as Kokkos code names an execution space type.
 *
 * @param name  "serial", "threads" or "cuda" (case-sensitive); NULL is allowed.
 * @return the space, or NULL when name is NULL or unknown, the space was not built, is
 *         unavailable on this machine, or the runtime is not initialized (an info-level log
 *         line says which). No status: absence is an answer, not an error.
 * Thread-safe; callable from inside kernels and ops.
 */
PX_API px_space *px_space_by_name(const char *name);

/**
 * The space's name (Kokkos' ExecutionSpace::name()).
 * @param s  a space handle, or NULL.
 * @return a static string: "serial", "threads", "cuda", or "(null)" for NULL; no status.
 * Thread-safe; callable at any time while the handle is valid.
 */
PX_API const char *px_space_name(const px_space *s);

/**
 * How many indices the space runs at once: 1 for serial, the number of ranks for threads,
 * resident threads for cuda (Kokkos' ExecutionSpace::concurrency()).
 *
 * @param s  a space handle.
 * @return a count >= 1, or a negative status:
 *         PX_EFAULT   s is NULL;
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_ENODEV   the space is not available in this runtime lifetime.
 * Failures are logged. Thread-safe.
 */
PX_API int px_space_concurrency(const px_space *s);

/**
 * Wait until every launch on the space has completed (Kokkos::fence /
 * ExecutionSpace::fence). Host spaces complete launches before returning, so this returns at
 * once there; cuda synchronizes its streams. Tools see begin/end_fence.
 *
 * @param s  the space, or NULL for every available space.
 * @return PX_OK;
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_ENODEV   s is not available in this runtime lifetime;
 *         PX_EDEADLK  called from inside a kernel of s (of any space when s is NULL);
 *         PX_ECUDA    a device error (the log names it).
 * Thread-safe.
 */
PX_API int px_fence(px_space *s);

/**
 * Whether host code may dereference memory from px_malloc(s, ...) (Kokkos'
 * SpaceAccessibility<HostSpace, MemorySpace>::accessible).
 * @param s  a space handle, or NULL.
 * @return 1 for serial and threads, 0 for cuda and for NULL; no status.
 * Thread-safe; callable at any time while the handle is valid.
 */
PX_API int px_space_host_accessible(const px_space *s);

#ifdef __cplusplus
}
#endif
#endif /* PAREX_SPACE_H */
