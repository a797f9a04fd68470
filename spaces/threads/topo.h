/* spaces/threads/topo.h - machine topology and thread binding for the Threads space
 * (spaces/threads/topo.c shared by both builds; topo_hwloc.c, the only file that calls hwloc,
 * or topo_nohwloc.c, whichever CMake picks).
 *
 * The pool asks three questions of the machine: how many workers by default (one per core of
 * the process cpuset), which PU each rank goes to (bind policy close | spread | none), and
 * whether binding the calling thread succeeded. The answers respect whatever restriction the
 * process was started under (taskset, cgroup cpuset, mpirun --bind-to), the way libgomp reads
 * the initial affinity mask in config/linux/affinity.c and Kokkos' hwloc backend reads the
 * process binding (and unlike Kokkos issue #1738, which ignored it).
 *
 * A topology can also be built from an hwloc synthetic description ("pack:2 core:4 pu:2") and
 * an optional cpuset restriction ("0-3"), so the mapping is tested on machines we do not have.
 *
 * Without hwloc (parex/config.h PX_HAVE_HWLOC == 0) the same API is provided: cores = PUs =
 * pxi_os_num_cpus(), ranks map to PU -1 (never bound), synthetic descriptions and restrictions
 * give PX_ENOSYS, and pxi_topo_bind_self returns PX_ENOSYS after one warning per process.
 *
 * Thread safety: a pxi_topo is immutable after pxi_topo_load returns, so every const function
 * below may be called concurrently from any thread (workers call pxi_topo_bind_self on the
 * shared object while they start). pxi_topo_destroy must not race with any other call on the
 * same object. */
#ifndef PXI_THREADS_TOPO_H
#define PXI_THREADS_TOPO_H

#include <stdio.h>

#include "base/check.h"
#include "parex/core.h"

/* Opaque: the hwloc topology (when built) plus the process cpuset and the list of usable
 * cores in topology order, each with its PUs (OS indices) and its package's logical index. */
typedef struct pxi_topo pxi_topo;

/* Load a topology into *out (set to NULL on failure).
 *
 * @param out              receives the new object; the caller owns it (pxi_topo_destroy).
 * @param synthetic        NULL: this machine (hwloc_topology_load), process cpuset =
 *                         hwloc_get_cpubind(HWLOC_CPUBIND_PROCESS) intersected with the allowed
 *                         cpuset (falls back to the allowed cpuset if get_cpubind fails or
 *                         the intersection is empty). Otherwise an hwloc synthetic description,
 *                         e.g. "pack:2 core:4 pu:2"; its process cpuset is the whole machine.
 * @param restrict_cpuset  NULL or "": no restriction. Otherwise a list of OS PU indices in
 *                         hwloc's list syntax, restricted to "a" and "a-b" items (a <= b)
 *                         separated by commas ("0-3", "0,2,5-7"; no spaces, no open ranges),
 *                         intersected with the process cpuset; simulates taskset / cgroup /
 *                         mpirun restriction in tests (also accepted for this machine).
 *
 * Cores = cores with at least one PU in the process cpuset; only those PUs are used. A
 * topology without core objects treats each PU as its own core.
 *
 * The process cpuset of this machine is read once per process, at the first load, and reused
 * by later loads: after px_initialize, rank 0 (the initializing thread) stays bound to one PU,
 * and a re-initialize would otherwise read that single PU back as the process binding.
 *
 * @return PX_OK;
 *         PX_EFAULT  out == NULL;
 *         PX_EINVAL  a synthetic description hwloc rejects, a malformed restrict string, or a
 *                    restriction that leaves no PU of the process cpuset;
 *         PX_ENOMEM  an allocation (ours through pxi_malloc, or hwloc's) failed;
 *         PX_ENODEV  hwloc could not load this machine's topology;
 *         PX_ENOSYS  built without hwloc and synthetic or restrict_cpuset was given.
 * Every failure is logged once (pxi_log), naming the bad string. Thread-safe (no shared
 * state); callable before px_initialize. */
PX_NODISCARD int pxi_topo_load(pxi_topo **out, const char *synthetic, const char *restrict_cpuset);

/* Free a topology from pxi_topo_load; NULL is ignored. */
void pxi_topo_destroy(pxi_topo *t);

/* Number of cores with at least one PU in the process cpuset; >= 1 for a loaded topology
 * (t == NULL gives 1). This is the default Threads rank count. */
int pxi_topo_num_cores(const pxi_topo *t);

/* Number of PUs (hardware threads) in the process cpuset; >= num_cores (t == NULL gives 1). */
int pxi_topo_num_pus(const pxi_topo *t);

/* Bytes of the L2 cache of one core (hwloc's L2 object above the first core), or 0 when unknown
 * (no L2 object, a synthetic topology, a build without hwloc). */
size_t pxi_topo_l2_bytes(const pxi_topo *t);

/* Map ranks 0..nranks-1 to OS PU indices for a binding policy.
 *
 * @param nranks      number of ranks (>= 1).
 * @param bind        "close": rank r on the first PU of the r-th usable core in topology order
 *                    (OMP_PROC_BIND=close with OMP_PLACES=cores). "spread": ranks spread
 *                    evenly over the hierarchy, splitting them level by level (packages,
 *                    shared caches, cores) in proportion to each child's usable cores, the
 *                    rounding surplus going to earlier children, consecutive ranks staying
 *                    in one child, each rank on its core's first PU (2 packages x 4 cores:
 *                    2 ranks -> first core of each package, 4 ranks -> cores 0, 2, 4, 6;
 *                    OMP_PROC_BIND=spread). "none": every entry -1 (do not bind). NULL means
 *                    "close" (the px_settings default).
 * @param pu_of_rank  array of nranks ints, filled with OS PU indices (or -1 for "none", and
 *                    always -1 when built without hwloc, where close/spread log one warning
 *                    per process that nothing is bound).
 *
 * Oversubscription (nranks > cores) works and logs one warning per call (for "none" too):
 * close and spread then give the same map, since every core already holds a rank: ranks
 * 0..cores-1 as close, further ranks on the cores' second PUs, then third, ... in the same
 * core order, and once every PU of the cpuset holds a rank, round-robin over that sequence
 * again (2x4x2, 17 ranks: 0 2 4 .. 14, 1 3 5 .. 15, 0). The mapping is a pure function of
 * (topology, cpuset, nranks, bind).
 *
 * @return PX_OK;
 *         PX_EFAULT  t or pu_of_rank NULL;
 *         PX_EINVAL  nranks < 1, or bind not one of "close" | "spread" | "none".
 * Thread-safe. */
PX_NODISCARD int pxi_topo_map(const pxi_topo *t, int nranks, const char *bind, int *pu_of_rank);

/* Bind the calling thread to OS PU @p pu (hwloc_set_cpubind with HWLOC_CPUBIND_THREAD).
 *
 * @param pu  an OS PU index from pxi_topo_map; pu < 0 means "do not bind" and returns PX_OK
 *            without doing anything.
 * @return PX_OK when bound (or pu < 0);
 *         PX_EFAULT  t == NULL;
 *         PX_EINVAL  pu is not in the topology's process cpuset (logged as a warning);
 *         PX_ENODEV  the OS refused the binding (logged as a warning naming the PU and errno);
 *         PX_ENOMEM  hwloc could not allocate the bitmap (logged as a warning);
 *         PX_ENOSYS  the topology is synthetic (not this machine; nothing is bound, logged at
 *                    debug level), or built without hwloc (one warning per process, shared
 *                    with pxi_topo_map's, then silent).
 * Any failure leaves the thread's affinity unchanged; the caller keeps running unbound, as
 * libgomp does when pthread_setaffinity_np fails. Thread-safe. */
int pxi_topo_bind_self(const pxi_topo *t, int pu);

/* 1 when pxi_topo_bind_self can bind threads with @p t (hwloc loaded this machine), 0 for a
 * synthetic topology (or HWLOC_XMLFILE), a build without hwloc or t == NULL. Thread-safe. */
int pxi_topo_binds(const pxi_topo *t);

/* The calling thread's binding, saved by pxi_topo_save_self so that a thread the runtime
 * binds but does not own (the thread that calls px_initialize, which works as rank 0) gets its
 * own binding back at finalize, as it had before. */
typedef struct pxi_topo_binding pxi_topo_binding;

/* Save the calling thread's current CPU binding.
 * @return PX_OK with *out set; PX_EFAULT for NULL arguments; PX_ENOMEM; PX_ENOSYS for a
 *         synthetic topology or a build without hwloc (nothing to restore: *out is NULL).
 * Thread-safe. */
int pxi_topo_save_self(const pxi_topo *t, pxi_topo_binding **out);

/* Give the thread that called pxi_topo_save_self its saved binding back (from any thread:
 * the thread is named by its pthread id) and free @p b. NULL b is a no-op. A refusal is
 * logged at debug level (the thread may have exited). */
void pxi_topo_restore(const pxi_topo *t, pxi_topo_binding *b);

/* Print a topology summary and the rank-to-PU table to @p out, for px_print_configuration.
 * Every line starts with two spaces:
 *   "  topology: 2 packages x 4 cores x 2 PUs, process cpuset 0-15 (8 cores, 16 PUs)"
 *   "  rank 0 -> PU 0 (core 0, package 0)"        (logical core / package indices)
 *   "  rank 1 -> unbound"                         (PU -1)
 * @p pu_of_rank may be NULL (summary only; nranks ignored). t == NULL or out == NULL prints
 * nothing. Thread-safe for distinct @p out streams. */
void pxi_topo_print(const pxi_topo *t, FILE *out, const int *pu_of_rank, int nranks);

/* How many consecutive ranks from rank 0 (0..k-1, by @p pu_of_rank of @p nranks ranks) are
 * bound to PUs under one cache of rank 0's PU: L2 when it holds at least two of them, else L3;
 * 1 when neither does, rank 0 is unbound, the topology is synthetic, or hwloc is absent. The
 * Threads space's team size when a team policy leaves it to the space (spaces/threads/team.c).
 * Thread-safe. */
int pxi_topo_cache_group(const pxi_topo *t, const int *pu_of_rank, int nranks);

#endif
