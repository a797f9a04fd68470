/* core/team.h - what every space shares to run team launches (core/team.c): the team's sync
 * block (barrier and px_team_reduce slots) and the space's team limits. Backends include it
 * beside core/registry.h.
 *
 * The barrier is a counter and a generation flag on one cache line of the team's own (no other
 * team, and no other data, writes that line): a member reads the generation, adds itself to the
 * counter (acq_rel, so every member's earlier writes reach the last arriver); the last arriver
 * resets the counter and posts generation + 1 (release); the others wait for the flag to change
 * through base/wait.h (spin with a pause for the pool's budget, then sleep on a futex: the post
 * costs a system call only when someone sleeps). A member cannot reach the next barrier before
 * the flag moved, so reading the generation before arriving is safe. */
#ifndef PXI_TEAM_H
#define PXI_TEAM_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/check.h"
#include "base/wait.h"
#include "parex/team.h"

/* A team's barrier and reduction slots. One per team running at a time (a group of ranks on
 * threads), 64-byte aligned; set up by the space before the team's members start. */
typedef struct pxi_team_sync {
    /* Line 0: the barrier, alone on its line. */
    alignas(PXI_CACHE_LINE) atomic_int count; /* members arrived at the current barrier */
    pxi_wait_flag gen;                        /* barrier generation */
    /* Line 1: read-only while the team runs (and the dynamic schedule's claims). */
    alignas(PXI_CACHE_LINE) int size; /* members */
    int64_t spin_ns;                  /* spin budget before a waiter sleeps */
    unsigned char *slots;             /* px_team_reduce: 2 x size slots of PXI_TEAM_SLOT bytes */
    int64_t unit[2];                  /* threads, dynamic schedule: the run claimed next */
} pxi_team_sync;

/* Bytes of one reduction slot (a reducer value, rounded to cache lines). */
#define PXI_TEAM_SLOT ((size_t)PX_REDUCER_MAX_VALUE_BYTES)

/* Set up @s for a team of @size members with spin budget @spin_ns and @slots (2 * size *
 * PXI_TEAM_SLOT bytes, 64-byte aligned; may be NULL when size == 1). Not thread-safe: call
 * before the members start. */
void pxi_team_sync_init(pxi_team_sync *s, int size, int64_t spin_ns, unsigned char *slots);

/* The barrier of the file comment (px_team_barrier's implementation on a sync block). */
void pxi_team_sync_barrier(pxi_team_sync *s);

/* Round @bytes up to a multiple of 64; 0 stays 0. Saturates at SIZE_MAX & ~63. */
size_t pxi_team_round64(size_t bytes);

/* Bytes of scratch one team of @team_size members needs for policy @p (team block plus each
 * member's block, each rounded to 64), or SIZE_MAX on overflow. */
size_t pxi_team_scratch_bytes(const px_team_policy *p, int team_size);

#endif
