/* core/team.c - team members as every space sees them (parex/team.h, core/team.h): the member
 * queries, the team barrier, px_team_reduce, the team policy constructors and scratch sizes.
 * The launches themselves go through core/launch.c like every other launch. The member queries
 * and px_team_barrier are defined with their names in parentheses: parex/team.h also provides
 * them as inline macros for host code. */
#include "core/team.h"

#include <string.h>

#include "base/log.h"

px_team_policy px_team_policy_make(int64_t league_size, int team_size, int vector_length)
{
    px_team_policy p = {.league_size = league_size,
                        .team_size = team_size,
                        .vector_length = vector_length,
                        .scratch_per_team = 0,
                        .scratch_per_thread = 0,
                        .schedule = PX_SCHEDULE_STATIC};
    return p;
}

px_team_policy px_team_policy_scratch(px_team_policy p, size_t per_team, size_t per_thread)
{
    p.scratch_per_team = per_team;
    p.scratch_per_thread = per_thread;
    return p;
}

px_team_policy px_team_policy_schedule(px_team_policy p, px_schedule s)
{
    p.schedule = s;
    return p;
}

int64_t(px_team_league_rank)(const px_team *t)
{
    return t->pxi_league_rank;
}

int64_t(px_team_league_size)(const px_team *t)
{
    return t->pxi_league_size;
}

int(px_team_rank)(const px_team *t)
{
    return t->pxi_team_rank;
}

int(px_team_size)(const px_team *t)
{
    return t->pxi_team_size;
}

void *(px_team_scratch)(const px_team *t)
{
    return t->pxi_scratch;
}

void *(px_team_thread_scratch)(const px_team *t)
{
    return t->pxi_thread_scratch;
}

void pxi_team_sync_init(pxi_team_sync *s, int size, int64_t spin_ns, unsigned char *slots)
{
    atomic_store_explicit(&s->count, 0, memory_order_relaxed);
    pxi_wait_flag_init(&s->gen, 0);
    s->size = size;
    s->spin_ns = spin_ns;
    s->slots = slots;
    s->unit[0] = s->unit[1] = 0;
}

void pxi_team_sync_barrier(pxi_team_sync *s)
{
    unsigned g = pxi_wait_flag_value(&s->gen);
    /* acq_rel: the last arriver acquires every member's release, and its post (release) hands
     * all of them to every waiter. */
    if (atomic_fetch_add_explicit(&s->count, 1, memory_order_acq_rel) == s->size - 1) {
        atomic_store_explicit(&s->count, 0, memory_order_relaxed);
        pxi_wait_flag_post(&s->gen, (g + 1) & PXI_WAIT_VALUE_MASK);
        return;
    }
    (void)pxi_wait_flag_until_ne(&s->gen, g, s->spin_ns);
}

void(px_team_barrier)(const px_team *t)
{
    if (t && t->pxi_sync && t->pxi_team_size > 1)
        pxi_team_sync_barrier(t->pxi_sync);
}

int px_team_reduce(const px_team *t, const px_reducer *r, const void *mine, void *result)
{
    if (!t || !r || !mine || !result) {
        PXI_ERROR("px_team_reduce: %s is NULL", !t      ? "the member"
                                                : !r    ? "the reducer"
                                                : !mine ? "mine"
                                                        : "result");
        return PX_EFAULT;
    }
    if (!r->identity || !r->join || r->value_size == 0 ||
        r->value_size > PX_REDUCER_MAX_VALUE_BYTES) {
        PXI_ERROR("px_team_reduce: invalid reducer '%s' (value_size %zu, limit %d bytes; "
                  "identity %s, join %s)",
                  r->name ? r->name : "(unnamed)", r->value_size, PX_REDUCER_MAX_VALUE_BYTES,
                  r->identity ? "set" : "NULL", r->join ? "set" : "NULL");
        return PX_EINVAL;
    }
    size_t n = r->value_size;
    if (t->pxi_team_size <= 1 || !t->pxi_sync) {
        if (result != mine)
            memmove(result, mine, n);
        return PX_OK;
    }
    /* Double-buffered slots: call k writes half k % 2. A member writes that half again at call
     * k + 2, after the barrier of call k + 1, which every member reaches only after reading
     * call k's slots, so one barrier per call suffices. */
    px_team *me = (px_team *)(uintptr_t)t; /* the member object is the space's, not const */
    pxi_team_sync *s = t->pxi_sync;
    int size = t->pxi_team_size;
    unsigned char *half =
        s->slots + (size_t)(me->pxi_reduce_seq & 1u) * (size_t)size * PXI_TEAM_SLOT;
    ++me->pxi_reduce_seq;
    memcpy(half + (size_t)t->pxi_team_rank * PXI_TEAM_SLOT, mine, n);
    pxi_team_sync_barrier(s);
    alignas(PXI_CACHE_LINE) unsigned char acc[PX_REDUCER_MAX_VALUE_BYTES];
    memcpy(acc, half, n);
    for (int k = 1; k < size; ++k)
        r->join(acc, half + (size_t)k * PXI_TEAM_SLOT);
    memcpy(result, acc, n);
    return PX_OK;
}

size_t pxi_team_round64(size_t bytes)
{
    if (bytes > SIZE_MAX - 63)
        return SIZE_MAX & ~(size_t)63;
    return (bytes + 63) & ~(size_t)63;
}

size_t pxi_team_scratch_bytes(const px_team_policy *p, int team_size)
{
    size_t team = pxi_team_round64(p->scratch_per_team);
    size_t thr = pxi_team_round64(p->scratch_per_thread);
    size_t n = team_size > 0 ? (size_t)team_size : 1;
    if ((p->scratch_per_team > SIZE_MAX - 63) || (p->scratch_per_thread > SIZE_MAX - 63))
        return SIZE_MAX;
    if (thr != 0 && n > (SIZE_MAX - team) / thr)
        return SIZE_MAX;
    return team + n * thr;
}
