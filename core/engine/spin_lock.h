/* core/engine/spin_lock.h - the engine's spin lock (slow path: spin_lock.c), for short critical
 * sections: Var queue appends and pops, lane queues, pools, operators. */
#ifndef PXI_ENGINE_SPIN_LOCK_H
#define PXI_ENGINE_SPIN_LOCK_H

#include <stdatomic.h>

#include "base/check.h"

/* A test-and-set lock whose waiters back off through base/wait.h (pxi_wait_backoff: pauses,
 * then yields of the CPU), so a preempted holder on an oversubscribed machine costs a time
 * slice rather than a spinning core. It never sleeps on a futex: its critical sections are a
 * few loads and stores, and a sleeping waiter would make every unlock an atomic exchange plus a
 * sleeper check on the push/complete path. Acquire on lock and release on unlock order the
 * protected data. */
typedef struct {
    atomic_int v;
} pxi_spin;

void pxi_spin_lock_slow(pxi_spin *l);

static inline void pxi_spin_init(pxi_spin *l)
{
    atomic_init(&l->v, 0);
}

static inline void pxi_spin_lock(pxi_spin *l)
{
    if (PXI_LIKELY(atomic_exchange_explicit(&l->v, 1, memory_order_acquire) == 0))
        return;
    pxi_spin_lock_slow(l);
}

static inline void pxi_spin_unlock(pxi_spin *l)
{
    atomic_store_explicit(&l->v, 0, memory_order_release);
}

#endif
