/* core/instance.c - execution-space instances (parex/instance.h): px_space_partition splits a
 * space by weights and asks the backend for each instance's state (core/registry.h instance
 * ops), px_space_instance_destroy and px_finalize free them, px_deep_copy_async orders a copy
 * on one. Live instances sit on one list (a mutex: partitions and destroys are rare), which
 * also tells a live instance from a stale or foreign handle before anything dereferences it. */
#include "core/instance.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "core/runtime.h"
#include "core/runtime_hooks.h"
#include "core/space.h"
#include "core/tools.h"
#include "parex/instance.h"

/* The engine's CPU lanes are indexed by device id 0 .. PXI_MAX_CPU_DEVS - 1
 * (core/engine/engine_impl.h: 16); lane 0 is the registry spaces', 1 .. 15 the instances'. */
#define LANES 16

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static pxi_instance *live;    /* list_lock */
static int lane_users[LANES]; /* list_lock: live instances per lane */
/* Kokkos Tools instance numbers: Tools get instance_id + 1 in a 17-bit field where 0 means every
 * instance and 1 the space's own (core/tools_device.c), so ids run 1 .. 2^17 - 2 and then start
 * over (as Kokkos' own counters wrap). Relaxed: only distinctness among recent instances. */
#define TOOLS_INSTANCE_IDS ((1u << 17) - 2u)
static atomic_uint next_seq;

/* ---- queries the rest of core makes ------------------------------------------------------- */

int pxi_space_concurrency_of(const px_space *s)
{
    if (s->inst && s->impl && s->ops->instance_concurrency)
        return s->ops->instance_concurrency(s->impl);
    return s->ops->concurrency ? s->ops->concurrency() : 1;
}

int pxi_space_fence_of(px_space *s)
{
    if (s->inst && s->impl && s->ops->instance_fence)
        return s->ops->instance_fence(s->impl);
    return s->ops->fence();
}

int pxi_space_team_limits_of(const px_space *s, pxi_team_limits *out)
{
    if (s->inst && s->impl && s->ops->instance_team_limits)
        return s->ops->instance_team_limits(s->impl, out);
    return s->ops->team_limits(out);
}

int pxi_space_engine_lane(const px_space *s, int dflt)
{
    return s && s->inst ? s->inst->lane : dflt;
}

void pxi_instance_hold(px_space *s)
{
    if (s && s->inst)
        atomic_fetch_add_explicit(&s->inst->holds, 1, memory_order_relaxed);
}

void pxi_instance_release(px_space *s)
{
    if (!s || !s->inst)
        return;
    pxi_instance *in = s->inst;
    /* releasing brackets our last touches of *in: destroy, once it saw holds reach 0, waits
     * for it to drop before it frees the instance. */
    atomic_fetch_add_explicit(&in->releasing, 1, memory_order_relaxed);
    /* release: the op's effects (and the bracket's increment) happen before destroy's acquire
     * load sees the count drop. */
    if (atomic_fetch_sub_explicit(&in->holds, 1, memory_order_release) == 1)
        pxi_wait_event_notify(&in->drained, 0);
    atomic_fetch_sub_explicit(&in->releasing, 1, memory_order_release);
}

static int drained(const void *arg)
{
    const pxi_instance *in = arg;
    return atomic_load_explicit(&in->holds, memory_order_acquire) == 0;
}

/* ---- the split -------------------------------------------------------------------------- */

/* Ranks of each of @n instances out of @p (n <= p): floor(p w_i / W) each, at least 1; the
 * ranks left go one each to the largest remainders (lower index first), and any excess the
 * minimum of 1 made is taken from the largest groups (lower index first). */
static void split_ranks(int p, int n, const int *w, int *count)
{
    int64_t wsum = 0;
    for (int i = 0; i < n; ++i)
        wsum += w ? w[i] : 1;
    int64_t used = 0;
    for (int i = 0; i < n; ++i) {
        int64_t c = (int64_t)p * (w ? w[i] : 1) / wsum;
        count[i] = c < 1 ? 1 : (int)c;
        used += count[i];
    }
    while (used < p) {
        int best = -1;
        int64_t best_rem = -1;
        for (int i = 0; i < n; ++i) {
            int64_t rem = (int64_t)p * (w ? w[i] : 1) - (int64_t)count[i] * wsum;
            if (rem > best_rem) {
                best_rem = rem;
                best = i;
            }
        }
        ++count[best];
        ++used;
    }
    while (used > p) {
        int best = 0;
        for (int i = 1; i < n; ++i)
            if (count[i] > count[best])
                best = i;
        --count[best];
        --used;
    }
}

/* Free one instance's record and backend state (not on the list any more). */
static int instance_free(pxi_instance *in)
{
    px_space *s = &in->space;
    pxi_wait_event_until(&in->drained, drained, in, pxi_wait_spin_ns(1, 0), NULL, 0);
    /* A release that took holds to 0 may still be inside its notify (a few instructions). */
    for (unsigned k = 0; atomic_load_explicit(&in->releasing, memory_order_acquire) != 0; ++k)
        pxi_wait_backoff(k);
    int rc = PX_OK;
    if (s->impl && s->ops->instance_destroy)
        rc = s->ops->instance_destroy(s->impl);
    pxi_free(in);
    return rc;
}

static void list_add(pxi_instance *in)
{
    pthread_mutex_lock(&list_lock);
    int lane = 1;
    for (int l = 2; l < LANES; ++l)
        if (lane_users[l] < lane_users[lane])
            lane = l;
    in->lane = lane;
    ++lane_users[lane];
    in->next = live;
    live = in;
    pthread_mutex_unlock(&list_lock);
}

/* Take @s off the live list; 0 when it is not a live instance (nothing dereferenced). */
static int list_remove(const px_space *s)
{
    pthread_mutex_lock(&list_lock);
    for (pxi_instance **pp = &live; *pp; pp = &(*pp)->next) {
        if (&(*pp)->space == s) {
            pxi_instance *in = *pp;
            *pp = in->next;
            --lane_users[in->lane];
            pthread_mutex_unlock(&list_lock);
            return 1;
        }
    }
    pthread_mutex_unlock(&list_lock);
    return 0;
}

/* ---- public API ------------------------------------------------------------------------- */

static int check_partition(const px_space *s, int n, const int *weights, int limit)
{
    if (pxi_space_is_instance(s)) {
        PXI_ERROR("px_space_partition: the space is an instance of '%s'; partition the space "
                  "itself",
                  s->ops->name);
        return PX_EINVAL;
    }
    if (n < 1 || n > limit) {
        if (s->ops->instance_splits)
            PXI_ERROR("px_space_partition(%s, n = %d): n must be in [1, %d], the space's rank "
                      "count (each instance needs at least one rank; PX_NUM_THREADS)",
                      s->ops->name, n, limit);
        else
            PXI_ERROR("px_space_partition(%s, n = %d): n must be in [1, %d] "
                      "(PX_PARTITION_MAX)",
                      s->ops->name, n, limit);
        return PX_EINVAL;
    }
    for (int i = 0; weights && i < n; ++i) {
        if (weights[i] <= 0) {
            PXI_ERROR("px_space_partition(%s): weights[%d] = %d; weights must be positive",
                      s->ops->name, i, weights[i]);
            return PX_EINVAL;
        }
    }
    return PX_OK;
}

static pxi_instance *instance_new(px_space *s, int first, int nranks, int *rc)
{
    pxi_instance *in = pxi_calloc(1, sizeof *in);
    if (!in) {
        PXI_ERROR("px_space_partition(%s): out of memory", s->ops->name);
        *rc = PX_ENOMEM;
        return NULL;
    }
    in->space = (px_space){
        .ops = s->ops,
        .available = 1,
        .instance_id = 1 + (int)(atomic_fetch_add_explicit(&next_seq, 1, memory_order_relaxed) %
                                 TOOLS_INSTANCE_IDS),
        .parent = s,
        .inst = in};
    atomic_init(&in->holds, 0);
    atomic_init(&in->releasing, 0);
    pxi_wait_event_init(&in->drained);
    *rc = s->ops->instance_create ? s->ops->instance_create(first, nranks, &in->space.impl) : PX_OK;
    if (*rc != PX_OK) {
        pxi_free(in);
        return NULL;
    }
    return in;
}

int px_space_partition(px_space *s, int n, const int *weights, px_space **out)
{
    if (!out) {
        PXI_ERROR("px_space_partition: out is NULL");
        return PX_EFAULT;
    }
    int rc;
    if (!(s = pxi_space_resolve(s, "px_space_partition", &rc)))
        return rc;
    if (pxi_space_any_in_kernel()) {
        PXI_ERROR("px_space_partition: called from inside a kernel");
        return PX_EDEADLK;
    }
    int p = pxi_space_concurrency_of(s);
    int limit = s->ops->instance_splits ? p : PX_PARTITION_MAX;
    if ((rc = check_partition(s, n, weights, limit)) != PX_OK)
        return rc;
    int *count = pxi_calloc((size_t)n, sizeof *count);
    pxi_instance **made = pxi_calloc((size_t)n, sizeof *made);
    if (!count || !made) {
        PXI_ERROR("px_space_partition(%s, n = %d): out of memory", s->ops->name, n);
        rc = PX_ENOMEM;
        goto done;
    }
    if (s->ops->instance_splits)
        split_ranks(p, n, weights, count);
    for (int i = 0, first = 0; i < n; ++i) {
        int nr = s->ops->instance_splits ? count[i] : p;
        made[i] = instance_new(s, s->ops->instance_splits ? first : 0, nr, &rc);
        if (!made[i]) {
            for (int j = 0; j < i; ++j)
                (void)instance_free(made[j]);
            goto done;
        }
        first += nr;
    }
    for (int i = 0; i < n; ++i) {
        list_add(made[i]);
        out[i] = &made[i]->space;
        PXI_DEBUG("px_space_partition(%s): instance %d of %d: %d ranks, Tools instance %d",
                  s->ops->name, i, n, pxi_space_concurrency_of(out[i]), out[i]->instance_id);
    }
done:
    pxi_free(count);
    pxi_free(made);
    return rc;
}

int px_space_instance_destroy(px_space *instance)
{
    if (!instance) {
        PXI_ERROR("px_space_instance_destroy: instance is NULL");
        return PX_EFAULT;
    }
    if (pxi_runtime_lost_to_fork("px_space_instance_destroy"))
        return PX_ENOTINIT;
    if (!pxi_runtime_ready()) {
        PXI_ERROR("px_space_instance_destroy: the runtime is not initialized");
        return PX_ENOTINIT;
    }
    if (pxi_space_any_in_kernel() || pxi_engine_in_op()) {
        PXI_ERROR("px_space_instance_destroy: called from inside %s",
                  pxi_engine_in_op() ? "an engine op" : "a kernel");
        return PX_EDEADLK;
    }
    if (!list_remove(instance)) {
        PXI_ERROR("px_space_instance_destroy(%p): not a live instance (a space such as "
                  "px_space_by_name's, or an instance already destroyed)",
                  (void *)instance);
        return PX_EINVAL;
    }
    return instance_free(instance->inst);
}

int pxi_instance_fence_all(void)
{
    /* The live instances are pinned under the list lock (a hold each, which a destroy waits for,
     * as for an engine op) and fenced after it is released: a fence waits for the kernels in
     * flight, and partitions and destroys of other instances must not wait for those (the
     * kernel may be waiting for them). Without memory for the pins, they are fenced under the
     * lock, which keeps px_fence(NULL) safe against a concurrent destroy all the same. */
    int first = PX_OK, n = 0;
    pthread_mutex_lock(&list_lock);
    for (pxi_instance *in = live; in; in = in->next)
        ++n;
    pxi_instance **pinned = n ? pxi_malloc((size_t)n * sizeof *pinned) : NULL;
    if (!pinned) {
        if (n)
            PXI_DEBUG("px_fence: no memory to pin %d instances: fencing them under the list lock",
                      n);
        for (pxi_instance *in = live; in; in = in->next) {
            int rc = pxi_space_fence_of(&in->space);
            if (rc != PX_OK && first == PX_OK)
                first = rc;
        }
        pthread_mutex_unlock(&list_lock);
        return first;
    }
    int k = 0;
    for (pxi_instance *in = live; in; in = in->next) {
        pxi_instance_hold(&in->space);
        pinned[k++] = in;
    }
    pthread_mutex_unlock(&list_lock);
    for (int i = 0; i < k; ++i) {
        int rc = pxi_space_fence_of(&pinned[i]->space);
        if (rc != PX_OK && first == PX_OK)
            first = rc;
        pxi_instance_release(&pinned[i]->space);
    }
    pxi_free(pinned);
    return first;
}

int pxi_instance_finalize_all(void)
{
    int first = PX_OK;
    for (;;) {
        pthread_mutex_lock(&list_lock);
        pxi_instance *in = live;
        if (in) {
            live = in->next;
            --lane_users[in->lane];
        }
        pthread_mutex_unlock(&list_lock);
        if (!in)
            return first;
        PXI_DEBUG("px_finalize: destroying instance %d of '%s' (not destroyed by the program)",
                  in->space.instance_id, in->space.ops->name);
        int rc = instance_free(in);
        if (rc != PX_OK && first == PX_OK)
            first = rc;
    }
}

/* ---- ordered copies --------------------------------------------------------------------- */

int px_deep_copy_async(px_space *exec, px_space *dst_s, void *dst, px_space *src_s, const void *src,
                       size_t bytes)
{
    int rc;
    if (!exec || !dst_s || !src_s) {
        PXI_ERROR("px_deep_copy_async(%zu bytes): the %s space is NULL", bytes,
                  !exec    ? "execution"
                  : !dst_s ? "destination"
                           : "source");
        return PX_EFAULT;
    }
    if (!pxi_space_resolve(exec, "px_deep_copy_async", &rc) ||
        !pxi_space_resolve(dst_s, "px_deep_copy_async", &rc) ||
        !pxi_space_resolve(src_s, "px_deep_copy_async", &rc))
        return rc;
    if (bytes == 0)
        return PX_OK;
    if (!dst || !src) {
        PXI_ERROR("px_deep_copy_async(%zu bytes): the %s pointer is NULL", bytes,
                  dst ? "source" : "destination");
        return PX_EFAULT;
    }
    /* Overlapping ranges would be split among the instance's ranks (or handed to memcpy or
     * cudaMemcpyAsync): refuse them. Host and device pointers share one address space (UVA),
     * so ranges of different memories never compare as overlapping. A copy onto itself moves
     * nothing (Kokkos::deep_copy(a, a)). */
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    if (d == s)
        return PX_OK;
    if ((d > s ? d - s : s - d) < bytes) {
        PXI_ERROR("px_deep_copy_async(%zu bytes): the ranges overlap (dst %p, src %p); copy "
                  "through a second buffer, or use px_deep_copy for host memory",
                  bytes, dst, src);
        return PX_EINVAL;
    }
    int dst_host = dst_s->ops->host_accessible, src_host = src_s->ops->host_accessible;
    int tools = pxi_tools_active();
    if (tools)
        pxi_tools_begin_deep_copy(dst_s, dst, src_s, src, bytes);
    /* exec orders the copy when it can reach both sides: a device exec (its stream reaches
     * host and device memory), or a host exec between host pointers. Otherwise the device side
     * moves the bytes at once, as px_deep_copy does. */
    int exec_moves = !exec->ops->host_accessible || (dst_host && src_host);
    if (exec_moves && exec->impl && exec->ops->instance_copy)
        rc = exec->ops->instance_copy(exec->impl, dst, dst_host, src, src_host, bytes);
    else if (exec_moves && !exec->ops->host_accessible && exec->ops->copy_async)
        rc = exec->ops->copy_async(dst, dst_host, src, src_host, bytes, NULL);
    else {
        px_space *mover = !src_host ? src_s : dst_s;
        rc = mover->ops->deep_copy(dst, dst_host, src, src_host, bytes);
    }
    if (tools)
        pxi_tools_end_deep_copy();
    return rc;
}
