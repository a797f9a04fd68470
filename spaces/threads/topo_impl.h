/* spaces/threads/topo_impl.h - what the topology files share: the layout of pxi_topo, the
 * binding policy names and the argument checks of pxi_topo_map (spaces/threads/topo.c), and
 * each build's way to free a topology. CMake compiles exactly one of topo_hwloc.c (hwloc
 * found) and topo_nohwloc.c (every CPU a core, nothing bound); see topo.h for the contract. */
#ifndef PXI_THREADS_TOPO_IMPL_H
#define PXI_THREADS_TOPO_IMPL_H

#include "spaces/threads/topo.h"

/* One usable core. Indices are hwloc logical indices (what lstopo shows), so the printed
 * table can be checked against lstopo output. */
typedef struct topo_core {
    int logical; /* logical index of the core (of the PU when the topology has no cores) */
    int package; /* logical index of its package; 0 when the topology has no packages */
    int first;   /* index of its first usable PU in pxi_topo.pus */
    int npus;    /* usable PUs of this core, >= 1 */
} topo_core;

struct pxi_topo {
    int ncores;           /* usable cores, >= 1 */
    int npus;             /* usable PUs, >= ncores */
    int max_core_pus;     /* most usable PUs on one core */
    topo_core *cores;     /* ncores entries, topology order */
    int *pus;             /* npus OS PU indices, grouped by core in core order */
    int *slots;           /* npus OS PU indices in close/oversubscription order (see build_slots) */
    int nlevels;          /* levels strictly between the machine and the cores */
    int *keys;            /* ncores x nlevels ancestor keys: keys[c * nlevels + l] */
    int machine_packages; /* whole topology, for the summary line */
    int machine_cores;
    int machine_pus;
    int synthetic;    /* nonzero: not this machine (synthetic, or hwloc redirected by its
                       * environment); never bound */
    char *cpuset_str; /* process cpuset as an hwloc list string ("0-3,8") */
    /* hwloc build only (NULL without hwloc); declared by their struct tags, which hwloc's
     * hwloc_topology_t and hwloc_bitmap_t point to, so this header needs no hwloc.h. */
    struct hwloc_topology *topo;
    struct hwloc_bitmap_s *cpuset; /* process cpuset (after any restriction) */
};

enum { BIND_CLOSE, BIND_SPREAD, BIND_NONE };
/* "close", "spread", "none", indexed by the enum above. */
extern const char *const pxi_topo_bind_names[3];

/* "" for 1, else "s". */
const char *pxi_topo_plural(int n);

/* The argument checks both pxi_topo_map builds share: the policy parsed into *policy, and the
 * oversubscription warning. PX_EFAULT / PX_EINVAL (logged) on bad arguments. */
int pxi_topo_map_args(const pxi_topo *t, int nranks, const char *bind, const int *pu_of_rank,
                      int *policy);

/* Free @p t and everything it owns (topo_hwloc.c or topo_nohwloc.c). */
void pxi_topo_free(pxi_topo *t);

#endif
