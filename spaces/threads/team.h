/* spaces/threads/team.h - team launches on the Threads space (spaces/threads/team.c), the
 * hooks threads.c calls. See parex/team.h for the semantics and team.c for how groups run. */
#ifndef PXI_THREADS_TEAM_H
#define PXI_THREADS_TEAM_H

#include "core/registry.h"
#include "spaces/threads/pool.h"
#include "spaces/threads/topo.h"

/* The team state of one pool (team.c): the space's, or an instance's. */
typedef struct pxi_threads_team pxi_threads_team;

/* After the pool exists (the space's at initialize, an instance's at its creation): make
 * *out the pool's team state, with the default team size of 1 (see team.c; topo and
 * pu_of_rank are kept for a topology-derived choice) and one sync block per rank. @return PX_OK;
 * PX_ENOMEM (logged; *out NULL). */
PX_NODISCARD int pxi_threads_team_init(pxi_threads_team **out, pxi_tpool *pool,
                                       const pxi_topo *topo, const int *pu_of_rank, int nranks);
/* Free the groups' scratch and sync blocks and the state. NULL is ignored. */
void pxi_threads_team_fini(pxi_threads_team *ts);
/* The team limits of the pool of @ts (pxi_space_ops.team_limits of the space or an instance). */
int pxi_threads_team_limits(const pxi_threads_team *ts, pxi_team_limits *out);
/* Run a prepared team launch (l->team_plan resolved for the pool) on the pool of @ts; inline
 * on the calling thread when it already runs a pool job (team size 1 only). */
int pxi_threads_team_launch(const pxi_launch *l, pxi_threads_team *ts);

#endif
