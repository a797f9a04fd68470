/* spaces/threads/threads.h - internal knobs of the Threads space (spaces/threads/threads.c),
 * for its test suite and benchmarks only. They are pxi_ symbols, reachable from the static
 * library.
 *
 * Launch rules of the Threads space (the public statement is in parex/kernel.h):
 *   - Any thread may launch. Launches take a ticket lock, so concurrent launchers run one at a
 *     time in the order they took their ticket; the launching thread works as rank 0.
 *   - A launch from inside a running Threads kernel (a worker, or rank 0 inside its share) runs
 *     inline, serially, on the calling thread: nested parallelism never deadlocks and never
 *     waits for the pool.
 *   - Reductions: static schedule, each rank folds its contiguous chunk-aligned block from the
 *     identity; ranks join through the fan-in tree, lower index ranges on the left. Dynamic
 *     schedule, the range is cut into at most PXI_THREADS_MAX_UNITS units of whole chunks,
 *     each folded from the identity into its own slot by whichever rank claims it, and rank 0
 *     joins the slots in index order. Both orders depend only on (range, chunk size, thread
 *     count), never on timing: results are bitwise reproducible for a fixed thread count,
 *     policy and chunk size, and a non-commutative (associative) join gives the sequential
 *     answer.
 *   - Scans always use a static partition (two passes need each rank to own its block in
 *     both), whatever the policy's schedule: contiguous chunk-aligned blocks in rank order,
 *     rank 0's half again as large as the others' because it scans its block only once.
 */
#ifndef PXI_THREADS_H
#define PXI_THREADS_H

#include "policy/plan.h"

/* Upper bound on ranks (the PX_NUM_THREADS limit of core/settings.c; checked again at
 * initialize). */
#define PXI_THREADS_MAX_RANKS 4096
/* Upper bound on the value slots of one dynamic reduction (see above); the plan
 * (policy/plan.h, PXI_PLAN_MAX_UNITS) groups chunks into units to stay below it. */
#define PXI_THREADS_MAX_UNITS PXI_PLAN_MAX_UNITS
/* Spin budgets live in base/wait.c (one wait primitive; the Threads section of the benchmark
 * results chose its 100 us default). */

/* How dynamic schedules claim units: per-rank ranges (a rank claims from its own static share
 * first, then steals from the others' in rank order), or one shared counter. */
typedef enum { PXI_DYNAMIC_STEAL = 0, PXI_DYNAMIC_SHARED = 1 } pxi_threads_dynamic_mode;

/* Select the claim mode (default PXI_DYNAMIC_STEAL, chosen by bench_threads). Call only while
 * no launch is running (tests and benchmarks, between launches). */
void pxi_threads_set_dynamic_mode(pxi_threads_dynamic_mode mode);

/* An MDRange launch (spaces/threads/mdrange.c) on @pool, with automatic tiles sized for an L2
 * of @l2_bytes (0: the rule's default). Called by threads_launch for PXI_POLICY_MDRANGE with a
 * prepared, non-empty launch; takes the pool's launch lock itself (or runs inline when called
 * from inside a job). PX_OK, PX_EINVAL (a kind other than for/reduce), PX_ENOMEM (dynamic
 * reduce values). */
struct pxi_launch;
struct pxi_tpool;

/* The OS PU that rank @rank of @s is bound to: @s a Threads instance (parex/instance.h) or the
 * Threads space itself (NULL too); -1 when unbound (PX_BIND=none, no hwloc), out of range, or
 * the space is not up. For tests that check placement. */
struct px_space;
int pxi_threads_pu_of_rank(const struct px_space *s, int rank);
/* The spin budget (ns) of @s's pool waits (0 when oversubscribed: they sleep after a few
 * polls); -1 when the space is not up. For tests. */
int64_t pxi_threads_spin_ns(const struct px_space *s);
int pxi_threads_md_launch(const struct pxi_launch *l, struct pxi_tpool *pool, size_t l2_bytes);

#endif
