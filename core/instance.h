/* core/instance.h - execution-space instances (core/instance.c, parex/instance.h): the record
 * core keeps for each, and the questions the rest of core asks of a space that may be one.
 * A registry space answers with its space-wide ops; an instance with its backend's instance
 * ops (core/registry.h), falling back to the space-wide op where the backend has none. */
#ifndef PXI_INSTANCE_H
#define PXI_INSTANCE_H

#include <stdatomic.h>

#include "base/wait.h"
#include "core/registry.h"

/* One live instance. The handle users hold is &space; space.inst points back here. Owned by
 * core/instance.c: created by px_space_partition, freed by px_space_instance_destroy or
 * pxi_instance_finalize_all; next and lane are guarded by its list lock. */
typedef struct pxi_instance {
    px_space space;
    struct pxi_instance *next;
    int lane; /* the engine CPU lane (device id) its kernel ops run on, 1 .. 15 */
    /* Engine kernel ops pushed on it and not yet cleaned up, and px_fence(NULL)'s fences of it
     * (pxi_instance_hold/release); destroy waits for 0 on drained. */
    atomic_int holds;
    pxi_wait_event drained;
    /* Releases still between their decrement of holds and the end of their notify of drained:
     * destroy waits for 0 here too before it frees the instance (as pxi_engine_drain does). */
    atomic_int releasing;
} pxi_instance;

/* Nonzero when @s is an instance (a handle px_space_partition returned). */
static inline int pxi_space_is_instance(const px_space *s)
{
    return s && s->inst != NULL;
}

/* concurrency of @s (available): the instance's rank count for an instance. */
int pxi_space_concurrency_of(const px_space *s);

/* The fence op of @s (available), no tools events and no checks: an instance's own fence. */
int pxi_space_fence_of(px_space *s);

/* The team limits of @s, whose ops have team_limits: an instance's own when its backend has
 * instance_team_limits. */
int pxi_space_team_limits_of(const px_space *s, pxi_team_limits *out);

/* The engine lane (CPU device id) a kernel op on @s runs on: the instance's own lane, or
 * @dflt for a registry space. */
int pxi_space_engine_lane(const px_space *s, int dflt);

/* An engine kernel op was pushed on @s (no-op unless an instance) / was cleaned up: destroying
 * the instance waits until every hold is released. */
void pxi_instance_hold(px_space *s);
void pxi_instance_release(px_space *s);

/* px_fence(NULL)'s share: fence every live instance (first failure returned), without holding
 * the list while it waits. */
int pxi_instance_fence_all(void);

/* px_finalize, after the engines drained and before the spaces finalize: destroy every
 * instance the program left alive (first failure returned). */
int pxi_instance_finalize_all(void);

#endif
