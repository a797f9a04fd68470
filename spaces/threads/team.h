/* spaces/threads/team.h - team launches on the Threads space (spaces/threads/team.c), the
 * hooks threads.c calls. See parex/team.h for the semantics and team.c for how groups run. */
#ifndef PXI_THREADS_TEAM_H
#define PXI_THREADS_TEAM_H

#include "core/registry.h"
#include "spaces/threads/pool.h"
#include "spaces/threads/topo.h"

/* At initialize, after the pool exists: remember the pool; the default team size is 1 (see
 * team.c; topo and pu_of_rank are kept for a topology-derived choice). Allocates one sync block
 * per rank.
 * @return PX_OK; PX_ENOMEM (logged). */
PX_NODISCARD int pxi_threads_team_init(pxi_tpool *pool, const pxi_topo *topo, const int *pu_of_rank,
                                       int nranks);
/* At finalize: free the groups' scratch and sync blocks. Safe after a failed init. */
void pxi_threads_team_fini(void);
/* pxi_space_ops.team_limits of the Threads space. */
int pxi_threads_team_limits(pxi_team_limits *out);
/* Run a prepared team launch (l->team_plan resolved for the pool); inline on the calling
 * thread when it already runs a pool job (team size 1 only). */
int pxi_threads_team_launch(const pxi_launch *l);

#endif
