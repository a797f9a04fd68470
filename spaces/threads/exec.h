/* spaces/threads/exec.h - what one launch lock drives: a pool and the launch state that goes
 * with it. The Threads space has one for its whole pool (threads.c); each execution-space
 * instance (spaces/threads/instance.c, parex/instance.h) has its own, over a disjoint group of
 * the space's cores, so launches on two of them run at the same time. threads.c runs a launch
 * on the exec of its space (pxi_threads_exec_of). */
#ifndef PXI_THREADS_EXEC_H
#define PXI_THREADS_EXEC_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>

#include "core/registry.h"
#include "spaces/threads/pool.h"
#include "spaces/threads/team.h"

typedef struct pxi_threads_exec {
    /* Read-only between init and fini. */
    pxi_tpool *pool;
    int nranks;
    int first; /* its first rank in the space's rank map (0 for the space) */
    pxi_threads_team *team;
    /* Touched only by the holder of the pool's launch lock. */
    unsigned scan_seq;       /* value scans post on down / fin flags */
    unsigned char *unit_buf; /* dynamic reduction slots */
    size_t unit_buf_bytes;
    /* Shared dynamic counter, alone on its line (every rank hits it). Reset by the lock holder
     * before dispatch; claimed with relaxed fetch_add (uniqueness is all a claim needs; the
     * data a chunk produces reaches rank 0 through the fan-in's release/acquire chain). */
    alignas(PXI_CACHE_LINE) atomic_llong shared_next;
} pxi_threads_exec;

/* Fill @x (zeroed by the caller) with a pool of @nranks ranks whose workers are bound to the
 * space's ranks first + 1 .. first + nranks - 1, and its team state. own_rank0: the pool also
 * gets a rank-0 thread bound to rank first's PU, to which launchers placed elsewhere hand
 * their launches (instances; pool.h). While the space is up.
 * @return PX_OK; PX_ENOMEM (logged; @x holds nothing then). */
PX_NODISCARD int pxi_threads_exec_init(pxi_threads_exec *x, int first, int nranks, int own_rank0);
/* Join @x's workers and free what it holds (no launch may run on it). */
void pxi_threads_exec_fini(pxi_threads_exec *x);

/* The instance ops of the Threads space (spaces/threads/instance.c, core/registry.h). */
int pxi_threads_instance_create(int first, int nranks, void **impl);
int pxi_threads_instance_destroy(void *impl);
int pxi_threads_instance_concurrency(void *impl);
int pxi_threads_instance_fence(void *impl);
int pxi_threads_instance_team_limits(void *impl, pxi_team_limits *out);
int pxi_threads_instance_copy(void *impl, void *dst, int dst_host, const void *src, int src_host,
                              size_t bytes);

#endif
