/* spaces/threads/topo_nohwloc.c - the topology without hwloc: every CPU is a core, nothing is
 * bound, synthetic topologies and cpuset restrictions give PX_ENOSYS. CMake compiles it when
 * hwloc is not found (and tests/topo.cmake into check_topo_nohwloc, so the fallback is tested
 * on machines with hwloc too). See topo.h for the contract. */
#include <stdatomic.h>
#include <stdio.h>

#include "base/alloc.h"
#include "base/log.h"
#include "base/os.h"
#include "spaces/threads/topo_impl.h"

void pxi_topo_free(pxi_topo *t)
{
    pxi_free(t);
}

int pxi_topo_load(pxi_topo **out, const char *synthetic, const char *restrict_cpuset)
{
    if (out == NULL) {
        PXI_ERROR("pxi_topo_load: out is NULL");
        return PX_EFAULT;
    }
    *out = NULL;
    if (synthetic != NULL || (restrict_cpuset != NULL && restrict_cpuset[0] != '\0')) {
        PXI_ERROR("threads: %s \"%s\" needs hwloc, which this build does not have",
                  synthetic != NULL ? "synthetic topology" : "cpuset restriction",
                  synthetic != NULL ? synthetic : restrict_cpuset);
        return PX_ENOSYS;
    }
    pxi_topo *t = pxi_calloc(1, sizeof *t);
    if (t == NULL) {
        PXI_ERROR("threads: out of memory loading the topology");
        return PX_ENOMEM;
    }
    int n = pxi_os_num_cpus();
    t->ncores = n >= 1 ? n : 1;
    t->npus = t->ncores;
    *out = t;
    return PX_OK;
}

/* One "not bound" warning per process (map or bind_self): workers would otherwise repeat
 * it. Relaxed: the flag guards only a message, no data. */
static atomic_int warned_no_bind = 0;

int pxi_topo_map(const pxi_topo *t, int nranks, const char *bind, int *pu_of_rank)
{
    int policy;
    int rc = pxi_topo_map_args(t, nranks, bind, pu_of_rank, &policy);
    if (rc != PX_OK)
        return rc;
    if (policy != BIND_NONE &&
        atomic_exchange_explicit(&warned_no_bind, 1, memory_order_relaxed) == 0)
        PXI_WARN("threads: built without hwloc; binding \"%s\" ignored, threads are not bound",
                 pxi_topo_bind_names[policy]);
    for (int r = 0; r < nranks; r++)
        pu_of_rank[r] = -1;
    return PX_OK;
}

int pxi_topo_bind_self(const pxi_topo *t, int pu)
{
    if (t == NULL) {
        PXI_ERROR("pxi_topo_bind_self: the topology is NULL");
        return PX_EFAULT;
    }
    if (pu < 0)
        return PX_OK;
    if (atomic_exchange_explicit(&warned_no_bind, 1, memory_order_relaxed) == 0)
        PXI_WARN("threads: built without hwloc; threads are not bound (PU %d requested)", pu);
    return PX_ENOSYS;
}

void pxi_topo_print(const pxi_topo *t, FILE *out, const int *pu_of_rank, int nranks)
{
    if (t == NULL || out == NULL)
        return;
    fprintf(out, "  topology: %d CPU%s (built without hwloc: cores not known, threads not bound)\n",
            t->ncores, pxi_topo_plural(t->ncores));
    if (pu_of_rank == NULL)
        return;
    for (int r = 0; r < nranks; r++)
        fprintf(out, "  rank %d -> unbound\n", r);
}

int pxi_topo_save_self(const pxi_topo *t, pxi_topo_binding **out)
{
    if (t == NULL || out == NULL)
        return PX_EFAULT;
    *out = NULL;
    return PX_ENOSYS;
}

void pxi_topo_restore(const pxi_topo *t, pxi_topo_binding *b)
{
    (void)t;
    (void)b;
}

int pxi_topo_cache_group(const pxi_topo *t, const int *pu_of_rank, int nranks)
{
    (void)t;
    (void)pu_of_rank;
    (void)nranks;
    return 1;
}

size_t pxi_topo_l2_bytes(const pxi_topo *t)
{
    (void)t; /* no cache sizes without hwloc */
    return 0;
}

int pxi_topo_binds(const pxi_topo *t)
{
    (void)t;
    return 0;
}
