/* core/oversub.h - whether this process shares its processors with more waiting threads than
 * they can run (core/oversub.c), decided once at px_initialize.
 *
 * The rule. Let T be the threads space's thread count of this process (PX_NUM_THREADS, or its
 * default: the processors of the process's affinity mask), C the processors of that mask, R the
 * processes of the job on this node as the MPI launcher announces them (Open MPI's
 * OMPI_COMM_WORLD_LOCAL_SIZE, MPICH / Intel MPI's MPI_LOCALNRANKS; 1 without a launcher) and N
 * the node's online processors. The process is oversubscribed when
 *   (a) T > C: its own team outnumbers the processors it may use, or
 *   (b) R > 1 and R x T > N: the ranks of the node together outnumber its processors (ranks
 *       are assumed alike, as mpirun starts them).
 * Engine workers and the MPI progress thread are not counted: they sleep while the thread that
 * waits runs the ops (the one-processor "hold" path of core/engine/calls.c), which is what an
 * oversubscribed process uses. N is an upper bound (a container's CPU limit shows only in the
 * masks, rule a), so the rule errs towards the old, spinning behaviour, never towards sleeping
 * where cores are free. The local rank count comes from the launcher's environment rather than
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): that call is collective, and px_initialize must
 * not wait for ranks that never initialize parex, nor need MPI to be initialized before it.
 *
 * The action (libgomp's throttled spin, Open MPI's mpi_yield_when_idle), unless PX_WAIT_POLICY
 * or PX_SPIN_US was set explicitly: every wait's spin budget becomes the throttled one
 * (base/wait.h, PXI_WAIT_SPIN_US_THROTTLED), and engines created afterwards behave as on one
 * processor: one CPU worker by default, a waiting thread that holds the lanes and the MPI
 * progress, and yields the processor, instead of pausing on it, while it polls. One line at
 * info level says what was found and chosen (a warning when an explicit spinning policy is
 * kept). Nothing is re-decided later: a non-oversubscribed process reads one cached flag. */
#ifndef PXI_OVERSUB_H
#define PXI_OVERSUB_H

#include "core/settings.h"

typedef struct pxi_oversub {
    int threads;        /* T: the threads space's threads */
    int cpus;           /* C: processors of the affinity mask */
    int local_ranks;    /* R: the job's processes on this node (1: no launcher said) */
    int node_cpus;      /* N: the node's online processors */
    int oversubscribed; /* rule (a) or (b) holds */
    int acted;          /* budgets throttled, engines as on one processor (not explicit) */
    const char *rule;   /* "process" (a), "node" (b) or "none" */
} pxi_oversub;

/* Decide for @cfg (after pxi_wait_configure, before any space or engine starts a thread) and
 * apply the action (see above); logs the decision once when oversubscribed. Not thread-safe
 * (px_initialize only). */
void pxi_oversub_detect(const pxi_config *cfg);
/* The last decision (all zero before the first px_initialize). */
const pxi_oversub *pxi_oversub_get(void);
/* Nonzero when the action is in force (one relaxed load; any thread). */
int pxi_oversub_active(void);

#endif
