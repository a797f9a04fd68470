/* spaces/threads/pool.h - the Threads space's worker pool (spaces/threads/pool.c).
 *
 * P ranks: rank 0 is whichever thread launches (it holds the launch lock), ranks 1..P-1 are
 * pthreads created at pxi_tpool_create and joined at pxi_tpool_destroy. A job is one function
 * every rank runs once; the launcher publishes (fn, arg, generation) with one release store
 * of the dispatch word and then runs rank 0 itself, as libgomp's team start does.
 *
 * A pool made with own_rank0 (an execution-space instance, spaces/threads/instance.c) also has
 * a rank-0 thread of its own, the leader, bound to rank 0's PU. A launcher whose affinity mask
 * lies within the pool's PUs still runs rank 0 itself (no hand-off: a thread the program
 * placed on the instance launches at the space's cost). Any other launcher hands the job to
 * the leader (one post of lead_go), which dispatches the workers and runs rank 0, and waits
 * for the leader's lead_done post (polling politely, with a yield about every microsecond,
 * for the pool's spin budget, then asleep; the leader waits for lead_go the same way): so a
 * kernel runs on the instance's cores whichever
 * thread launches it (an engine worker, a thread on another instance's cores). Where the launcher
 * stands is read at every launch (pxi_os_placement, base/os.h: sched_getcpu, and the thread's
 * cached mask when it runs on one of the pool's PUs).
 *
 * Completion and reductions go through the fan-in tree of fanin.h.
 *
 * Late workers (pxi_tpool_run_ex with take_over: the 1-D for and reduce): each rank's block is
 * claimed once per job, by its worker when it wakes or by its fan-in parent when the parent
 * gets there first (the worker asleep, or woken but without a processor on an oversubscribed
 * node); the parent then runs the block itself as that rank and the worker, when it runs,
 * leaves it. Measured on 4 ranks x 2 threads on the 2-core VM (parex-cg, bcsstk16): a rank's
 * update kernels 10.5-14.7 -> 7.8-11.1 us (traces, loaded; bench/RESULTS.md, "Session 9: 4-rank
 * distributed-CG rows").
 *
 * Waiting (idle workers, fan-in parents, launch-lock waiters) goes through base/wait.h: spin
 * with a CPU pause for the pool's budget, then sleep on a futex, so an idle pool burns no CPU.
 * Every sync word is a pxi_wait_flag: the poster exchanges the value in and wakes sleepers only
 * if one marked the word, so the common path (nobody asleep) costs no system call. Data crosses
 * threads only through the flags' release/acquire orders; the futex only sleeps
 * (ThreadSanitizer stays accurate). Values are 31 bits and compared for equality only.
 */
#ifndef PXI_THREADS_TPOOL_H
#define PXI_THREADS_TPOOL_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "base/check.h"
#include "base/wait.h"
#include "parex/reducer.h"
#include "spaces/threads/topo.h"

/* A word one thread posts and others wait on (base/wait.h). */
typedef pxi_wait_flag pxi_tpool_flag;

/* Per-rank state, one per rank, 64-byte aligned so no two ranks share a line. */
typedef struct pxi_tpool_slot {
    /* Line 0, sync. up: posted by this rank when its fan-in subtree has finished (every job);
     * down: posted by the parent when prefix[] holds this rank's scan prefix; fin: posted by
     * this rank when its scan subtree finished the final pass. */
    alignas(PXI_CACHE_LINE) pxi_tpool_flag up;
    pxi_tpool_flag down;
    pxi_tpool_flag fin;
    /* Line 1, the generation (masked as flag values) whose block of this rank is claimed: by the
     * rank's worker when it wakes for the job, or by its fan-in parent taking the block over
     * (pxi_tpool_take_over); whoever moves it forward runs the block. Rank 0's is unused. A
     * line of its own: the worker's claim stays in its cache unless a parent tried a take-over
     * (only in jobs that allow one, see pxi_tpool_run_ex). */
    alignas(PXI_CACHE_LINE) atomic_uint claim;
    /* Line 2, dynamic schedule claims on this rank's range [next, end) of units (written by
     * the launcher before dispatch; next is then fetch_add'ed by the owner and by thieves). */
    alignas(PXI_CACHE_LINE) atomic_llong next;
    int64_t end;
    /* Reduction value of this rank's subtree (owner: this rank until it posts up; then read
     * by the parent). Scan: own block total, and the prefix before the block (written by the
     * parent before it posts down). */
    alignas(PXI_CACHE_LINE) unsigned char value[PX_REDUCER_MAX_VALUE_BYTES];
    alignas(PXI_CACHE_LINE) unsigned char own[PX_REDUCER_MAX_VALUE_BYTES];
    alignas(PXI_CACHE_LINE) unsigned char prefix[PX_REDUCER_MAX_VALUE_BYTES];
} pxi_tpool_slot;

typedef struct pxi_tpool pxi_tpool;

/* The job every rank runs: rank in [0, P), gen the launch's generation (used as the value
 * posted on up flags). The function must end with pxi_tpool_fanin (phase up), so that rank 0
 * returning from it means every rank has finished. */
typedef void (*pxi_tpool_job_fn)(pxi_tpool *pool, int rank, unsigned gen, void *arg);

/* Create a pool of nranks ranks (>= 1): spawns nranks - 1 workers, each binding itself to
 * pu_of_rank[rank] through topo (a refused binding is a warning; the worker runs unbound).
 * spin_ns: how long a waiter spins before sleeping (0: sleep almost at once), from
 * pxi_wait_spin_ns (base/wait.h). own_rank0: also spawn the leader (see above), bound to
 * pu_of_rank[0]; ignored (no leader) when a rank is unbound (PU -1: PX_BIND=none, no hwloc)
 * or topo cannot bind (pxi_topo_binds), since there is then no place to keep rank 0 on.
 * pu_of_rank must outlive the pool.
 * @return PX_OK; PX_ENOMEM when memory or a thread could not be had (logged; nothing leaks). */
PX_NODISCARD int pxi_tpool_create(pxi_tpool **out, int nranks, const pxi_topo *topo,
                                  const int *pu_of_rank, int64_t spin_ns, int own_rank0);
/* 1 when the pool has its own rank-0 thread (own_rank0 took effect), else 0. */
int pxi_tpool_has_leader(const pxi_tpool *pool);
/* Tests only: on nonzero, every launch on a pool with a leader is handed to it, also from a
 * launcher placed within the pool's PUs (on a 2-core machine a pool of 2 ranks covers every
 * core, so its hand-off path is otherwise never taken). Call between launches. */
void pxi_tpool_set_force_handoff(int on);
/* Stop and join every worker, free the pool. Must not race with a job. NULL is ignored. */
void pxi_tpool_destroy(pxi_tpool *pool);

int pxi_tpool_size(const pxi_tpool *pool);
/* The budget every wait of the pool spins for before sleeping, in ns. */
int64_t pxi_tpool_spin_ns(const pxi_tpool *pool);
pxi_tpool_slot *pxi_tpool_slots(pxi_tpool *pool);

/* The launch lock: a ticket lock, so concurrent launchers are served in the order they took a
 * ticket (FIFO) and none starves. Waiters spin, then sleep like every other wait. */
void pxi_tpool_lock(pxi_tpool *pool);
void pxi_tpool_unlock(pxi_tpool *pool);

/* Run a job on every rank; the caller (holding the lock) is rank 0, or, in a pool with a
 * leader, hands rank 0 to the leader unless its affinity lies within the pool's PUs (see
 * above). Returns when rank 0's call returns, which by the job's final fan-in means every
 * rank's call has. Not from inside a job (launches run those inline). */
void pxi_tpool_run(pxi_tpool *pool, pxi_tpool_job_fn fn, void *arg);
/* As pxi_tpool_run; with @take_over nonzero, a fan-in parent that finds a child's block not yet
 * claimed by its worker (asleep, or runnable but without a processor on an oversubscribed
 * node) runs that block itself instead of waiting for the worker (pxi_tpool_take_over), as
 * libgomp's and TBB's idle threads take the work of late ones. Only for jobs whose ranks never
 * wait for each other before their final fan-in (the 1-D for and reduce of threads.c: blocks,
 * claims and the UP fan-in; not scans, not teams with barriers). Each rank's block still runs
 * once, into its own slot, so reductions join in the same order (bitwise the same result).
 * The job allows take-overs only where they can pay: a pool whose waits sleep at once (the
 * passive or throttled budget, an oversubscribed node) or whose dispatch word had a sleeper
 * marked when this job was posted (a worker idle past its budget); back-to-back launches on
 * spinning workers leave the children's claim lines alone. */
void pxi_tpool_run_ex(pxi_tpool *pool, pxi_tpool_job_fn fn, void *arg, int take_over);
/* In a job launched with take_over (else returns 0 at once), called by the parent of @child at
 * its UP fan-in for value @seq: when @child's worker has not claimed generation @seq, claim
 * it and run the job as rank @child on the calling thread (its px_scatter_add replica is
 * @child's while it runs), which posts @child's up flag. Returns 1 when it ran the block, 0
 * when the worker had claimed it (the caller then waits for its up flag as usual). */
int pxi_tpool_take_over(pxi_tpool *pool, int child, unsigned seq);
/* How many blocks launchers and parents have taken over from workers since the pool was
 * created (relaxed; tests and traces). */
long long pxi_tpool_taken_over(const pxi_tpool *pool);
/* Tests only: a function every worker calls after it sees a new job and before it claims its
 * block (NULL: none), so that a test can hold a worker back deterministically. Set between
 * launches. */
void pxi_tpool_set_claim_hook(void (*hook)(int rank));

/* Nonzero while the calling thread runs a job of some pool (workers, or rank 0 inside
 * pxi_tpool_run). Launches check it to run nested launches inline. */
int pxi_tpool_in_job(void);

/* Run every unit of the per-rank claim ranges (slot->next .. slot->end of each rank, filled by
 * the launcher before dispatch): this rank's own range first, then the others' in rank order,
 * so an idle rank steals from the busy ones by index. Each claim is one relaxed fetch_add whose
 * result is unique, so every unit runs exactly once whatever the interleaving; the data a unit
 * produces reaches rank 0 through the fan-in's release/acquire. A relaxed peek skips exhausted
 * ranges without a read-modify-write on their line. @run gets @job and the unit number; the
 * 1-D (threads.c) and MDRange (mdrange.c) dynamic schedules share this loop, and since @run is
 * a constant at both call sites the compiler inlines it. */
static inline __attribute__((always_inline)) void
pxi_tpool_claim_units(pxi_tpool *pool, int rank, void (*run)(const void *job, int64_t u),
                      const void *job)
{
    pxi_tpool_slot *slots = pxi_tpool_slots(pool);
    int p = pxi_tpool_size(pool);
    for (int d = 0; d < p; ++d) {
        int v = rank + d < p ? rank + d : rank + d - p;
        pxi_tpool_slot *s = &slots[v];
        if (atomic_load_explicit(&s->next, memory_order_relaxed) >= s->end)
            continue;
        for (;;) {
            int64_t u = atomic_fetch_add_explicit(&s->next, 1, memory_order_relaxed);
            if (u >= s->end)
                break;
            run(job, u);
        }
    }
}

/* Structure checker (STYLE.md section 7): with the launch lock held and no job running, assert
 * that the last job completed everywhere: the dispatch word holds the last generation, every
 * rank >= 1 posted it on its up flag, and (scan_seq != 0) the last scan's sequence on its down
 * and fin flags, and the ticket lock is held once. Aborts in checking builds on a violation,
 * returns 0 in release builds then; 1 when everything holds. */
int pxi_tpool_check(pxi_tpool *pool, unsigned scan_seq);

/* Post @v on @f (pxi_wait_flag_post); wait until @f holds v with the pool's budget (acquire). */
void pxi_tpool_flag_post(pxi_tpool_flag *f, unsigned v);
void pxi_tpool_flag_wait_eq(const pxi_tpool *pool, pxi_tpool_flag *f, unsigned v);

#endif
