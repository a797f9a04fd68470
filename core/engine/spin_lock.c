/* core/engine/spin_lock.c - the slow path of the engine's spin lock (spin_lock.h): poll, backing
 * off through base/wait.h until the holder lets go. */
#include "core/engine/spin_lock.h"
#include "base/wait.h"

void pxi_spin_lock_slow(pxi_spin *l)
{
    for (unsigned n = 0;; ++n) {
        /* Poll relaxed; the exchange below carries the acquire. */
        while (atomic_load_explicit(&l->v, memory_order_relaxed) != 0)
            pxi_wait_backoff(n++);
        if (atomic_exchange_explicit(&l->v, 1, memory_order_acquire) == 0)
            return;
    }
}
