/* spaces/threads/topo.c - what both topology builds share: the binding policy names, the
 * argument checks of pxi_topo_map, the core and PU counts, and pxi_topo_destroy. The builds
 * themselves are topo_hwloc.c (the only file that calls hwloc, STYLE.md section 5) and
 * topo_nohwloc.c; CMake compiles one of them. See topo.h for the contract.
 */
#include "spaces/threads/topo_impl.h"

#include <string.h>

#include "base/log.h"

const char *const pxi_topo_bind_names[3] = {"close", "spread", "none"};

static int parse_bind(const char *bind)
{
    if (bind == NULL)
        return BIND_CLOSE;
    for (int i = 0; i < 3; i++)
        if (strcmp(bind, pxi_topo_bind_names[i]) == 0)
            return i;
    return -1;
}

const char *pxi_topo_plural(int n)
{
    return n == 1 ? "" : "s";
}

/* Oversubscription warning, shared by both builds. */
static void warn_oversubscribed(const pxi_topo *t, int nranks)
{
    if (nranks > t->npus)
        PXI_WARN("threads: %d ranks on %d core%s (%d PU%s) of the process cpuset: "
                 "oversubscribed, several ranks share each PU and will time-slice",
                 nranks, t->ncores, pxi_topo_plural(t->ncores), t->npus, pxi_topo_plural(t->npus));
    else
        PXI_WARN("threads: %d ranks on %d core%s of the process cpuset: oversubscribed, ranks "
                 "beyond %d share cores through their other PUs (hyperthreads)",
                 nranks, t->ncores, pxi_topo_plural(t->ncores), t->ncores);
}

int pxi_topo_num_cores(const pxi_topo *t)
{
    return t == NULL ? 1 : t->ncores;
}

int pxi_topo_num_pus(const pxi_topo *t)
{
    return t == NULL ? 1 : t->npus;
}

int pxi_topo_map_args(const pxi_topo *t, int nranks, const char *bind, const int *pu_of_rank,
                      int *policy)
{
    if (t == NULL || pu_of_rank == NULL) {
        PXI_ERROR("pxi_topo_map: %s is NULL", t == NULL ? "the topology" : "pu_of_rank");
        return PX_EFAULT;
    }
    *policy = parse_bind(bind);
    if (*policy < 0) {
        PXI_ERROR("threads: unknown binding policy \"%s\" (expected close, spread or none)", bind);
        return PX_EINVAL;
    }
    if (nranks < 1) {
        PXI_ERROR("threads: invalid rank count %d (expected at least 1)", nranks);
        return PX_EINVAL;
    }
    if (nranks > t->ncores)
        warn_oversubscribed(t, nranks);
    return PX_OK;
}

void pxi_topo_destroy(pxi_topo *t)
{
    if (t != NULL)
        pxi_topo_free(t);
}
