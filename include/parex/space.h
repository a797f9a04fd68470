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
 * The default execution space: PX_DEFAULT_SPACE / --px-default-space if set, else the
 * available space of highest priority (cuda > threads > serial).
 * @return the space, or NULL when the runtime is not initialized. Thread-safe.
 */
PX_API px_space *px_default_space(void);

/**
 * Look a space up by name ("serial", "threads", "cuda"; case-sensitive).
 * @return the space, or NULL when the name is unknown, the space was not built, is unavailable
 *         on this machine, or the runtime is not initialized (an info-level log line says which).
 * Thread-safe.
 */
PX_API px_space *px_space_by_name(const char *name);

/** @return the space's name ("serial", ...), or "(null)" for NULL. Thread-safe. */
PX_API const char *px_space_name(const px_space *s);

/**
 * How many indices the space runs at once: 1 for serial, the number of ranks for threads,
 * resident threads for cuda (Kokkos' concurrency()).
 * @return a count >= 1, or PX_EFAULT for NULL, PX_ENOTINIT when not initialized.
 * Thread-safe.
 */
PX_API int px_space_concurrency(const px_space *s);

/**
 * Wait until every launch on the space has completed (Kokkos::fence). Host spaces complete
 * launches before returning, so this returns at once there; cuda synchronizes its streams.
 * @param s  the space, or NULL for every space.
 * @return PX_OK; PX_ENOTINIT when not initialized; PX_ECUDA for a device error (logged).
 * Thread-safe. From inside a kernel on the same space it returns PX_EDEADLK.
 */
PX_API int px_fence(px_space *s);

/** @return nonzero when memory from px_malloc(s, ...) is directly addressable by the host. */
PX_API int px_space_host_accessible(const px_space *s);

#ifdef __cplusplus
}
#endif
#endif /* PAREX_SPACE_H */
