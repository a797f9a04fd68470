/* spaces/threads/topo_hwloc.c - the topology with hwloc: the machine (or a synthetic one)
 * reduced to its usable cores, rank mapping (close, spread, oversubscription) and thread
 * binding. The only file that calls hwloc (STYLE.md section 5); CMake compiles it when hwloc is
 * found, topo_nohwloc.c otherwise. See topo.h for the contract.
 *
 * At load time the topology is reduced to what the mapping needs: the usable cores (cores
 * with at least one PU in the process cpuset) in topology order, each with its usable PUs
 * and, per level between the machine and the cores, a key naming its ancestor there. The
 * mapping itself (close, spread, oversubscription) is then plain arithmetic on that table,
 * identical for this machine and for synthetic topologies, so tests of synthetic machines
 * exercise the very code that binds real workers. */
#include <errno.h>
#include <hwloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "base/os.h"
#include "spaces/threads/topo_impl.h"

/* The process cpuset seen by the first load of this machine. A rank bound on the thread that
 * called px_initialize (rank 0) stays bound after px_finalize, since that thread belongs to
 * the user; a second initialize would read its single PU back as the process binding and
 * start one worker. Capturing the set once (libgomp likewise reads the initial affinity mask
 * once, at startup) keeps a re-initialize identical to the first. Never freed: it lives as
 * long as the process. */
static _Atomic(hwloc_bitmap_t) initial_cpuset = NULL;

static int ceil_div64(int64_t a, int64_t b)
{
    return (int)((a + b - 1) / b);
}

/* Allocation failures inside hwloc come back as -1 with errno ENOMEM. */
static int hwloc_status(void)
{
    return errno == ENOMEM ? PX_ENOMEM : PX_EINVAL;
}

/* Process cpuset of this machine: the process binding (taskset, mpirun --bind-to) within the
 * allowed set (cgroup cpuset; hwloc has already removed disallowed PUs from the topology). */
static int this_process_cpuset(hwloc_topology_t topo, hwloc_bitmap_t set)
{
    hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(topo);
    hwloc_bitmap_t first = atomic_load_explicit(&initial_cpuset, memory_order_acquire);
    if (first != NULL) {
        if (hwloc_bitmap_and(set, first, allowed) != 0)
            return PX_ENOMEM;
    } else {
        if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) != 0) {
            PXI_DEBUG("threads: hwloc_get_cpubind failed (errno %d); using the allowed cpuset",
                      errno);
            if (hwloc_bitmap_copy(set, allowed) != 0)
                return PX_ENOMEM;
        }
        if (hwloc_bitmap_and(set, set, allowed) != 0)
            return PX_ENOMEM;
        hwloc_bitmap_t keep = hwloc_bitmap_dup(set);
        if (keep != NULL) {
            hwloc_bitmap_t expected = NULL;
            /* release: a later load that acquires the pointer sees the bitmap's contents.
             * A racing loser keeps using its own (equal) set, so its failure is relaxed. */
            if (!atomic_compare_exchange_strong_explicit(
                    &initial_cpuset, &expected, keep, memory_order_release, memory_order_relaxed))
                hwloc_bitmap_free(keep);
        }
    }
    if (hwloc_bitmap_iszero(set)) {
        PXI_DEBUG("threads: process binding outside the allowed cpuset; using the allowed set");
        if (hwloc_bitmap_copy(set, allowed) != 0)
            return PX_ENOMEM;
    }
    return PX_OK;
}

/* Key of a core's ancestor at depth d, or a key unique to the core when there is no object
 * at that depth above it (asymmetric topologies): the core then forms a group of its own. */
static int ancestor_key(hwloc_topology_t topo, hwloc_obj_t core, int d, int core_index)
{
    hwloc_obj_t a = hwloc_get_ancestor_obj_by_depth(topo, d, core);
    return a == NULL ? -1 - core_index : (int)a->logical_index;
}

/* Fill the per-core table from the loaded topology and t->cpuset. */
static int build_cores(pxi_topo *t)
{
    hwloc_topology_t topo = t->topo;
    int depth = hwloc_get_type_or_below_depth(topo, HWLOC_OBJ_CORE);
    int nobj = (int)hwloc_get_nbobjs_by_depth(topo, depth);
    hwloc_bitmap_t usable = hwloc_bitmap_alloc();
    if (usable == NULL)
        return PX_ENOMEM;

    int ncores = 0, npus = 0;
    for (int i = 0; i < nobj; i++) {
        hwloc_obj_t c = hwloc_get_obj_by_depth(topo, depth, (unsigned)i);
        if (hwloc_bitmap_intersects(c->cpuset, t->cpuset)) {
            ncores++;
            hwloc_bitmap_and(usable, c->cpuset, t->cpuset);
            npus += hwloc_bitmap_weight(usable);
        }
    }
    t->ncores = ncores;
    t->npus = npus;
    t->nlevels = depth > 1 ? depth - 1 : 0;
    t->machine_packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    t->machine_cores = nobj;
    t->machine_pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    if (ncores == 0) {
        hwloc_bitmap_free(usable);
        return PX_EINVAL;
    }
    t->cores = pxi_calloc((size_t)ncores, sizeof *t->cores);
    t->pus = pxi_calloc((size_t)npus, sizeof *t->pus);
    t->slots = pxi_calloc((size_t)npus, sizeof *t->slots);
    if (t->nlevels > 0)
        t->keys = pxi_calloc((size_t)ncores * (size_t)t->nlevels, sizeof *t->keys);
    if (t->cores == NULL || t->pus == NULL || t->slots == NULL ||
        (t->nlevels > 0 && t->keys == NULL)) {
        hwloc_bitmap_free(usable);
        return PX_ENOMEM;
    }

    int k = 0, p = 0;
    for (int i = 0; i < nobj; i++) {
        hwloc_obj_t c = hwloc_get_obj_by_depth(topo, depth, (unsigned)i);
        if (!hwloc_bitmap_intersects(c->cpuset, t->cpuset))
            continue;
        hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, c);
        topo_core *tc = &t->cores[k];
        tc->logical = (int)c->logical_index;
        tc->package = pkg == NULL ? 0 : (int)pkg->logical_index;
        tc->first = p;
        hwloc_bitmap_and(usable, c->cpuset, t->cpuset);
        for (int pu = hwloc_bitmap_first(usable); pu >= 0; pu = hwloc_bitmap_next(usable, pu))
            t->pus[p++] = pu;
        tc->npus = p - tc->first;
        if (tc->npus > t->max_core_pus)
            t->max_core_pus = tc->npus;
        for (int l = 0; l < t->nlevels; l++)
            t->keys[k * t->nlevels + l] = ancestor_key(topo, c, l + 1, k);
        k++;
    }
    hwloc_bitmap_free(usable);
    return PX_OK;
}

static int cpuset_string(pxi_topo *t)
{
    int len = hwloc_bitmap_list_snprintf(NULL, 0, t->cpuset);
    if (len < 0)
        return PX_ENOMEM;
    t->cpuset_str = pxi_malloc((size_t)len + 1);
    if (t->cpuset_str == NULL)
        return PX_ENOMEM;
    hwloc_bitmap_list_snprintf(t->cpuset_str, (size_t)len + 1, t->cpuset);
    return PX_OK;
}

/* Parse a PU list "a,b-c,..." (decimal OS indices, ranges with a <= b) into a new bitmap.
 * Written here rather than with hwloc_bitmap_list_sscanf, which accepts open ranges ("3-")
 * and reads "1--2" or "5-2" as something other than what the user meant. */
static int parse_pu_list(const char *s, hwloc_bitmap_t *out)
{
    enum { MAX_PU = 1 << 20 };
    hwloc_bitmap_t r = hwloc_bitmap_alloc();
    if (r == NULL)
        return PX_ENOMEM;
    const char *p = s;
    for (;;) {
        long lo = 0, hi;
        if (*p < '0' || *p > '9')
            goto bad;
        while (*p >= '0' && *p <= '9' && lo <= MAX_PU)
            lo = lo * 10 + (*p++ - '0');
        hi = lo;
        if (*p == '-') {
            p++;
            if (*p < '0' || *p > '9')
                goto bad;
            hi = 0;
            while (*p >= '0' && *p <= '9' && hi <= MAX_PU)
                hi = hi * 10 + (*p++ - '0');
        }
        if (lo > MAX_PU || hi > MAX_PU || hi < lo)
            goto bad;
        if (hwloc_bitmap_set_range(r, (unsigned)lo, (int)hi) != 0) {
            hwloc_bitmap_free(r);
            return PX_ENOMEM;
        }
        if (*p == '\0')
            break;
        if (*p++ != ',')
            goto bad;
    }
    *out = r;
    return PX_OK;
bad:
    hwloc_bitmap_free(r);
    PXI_ERROR("threads: invalid cpuset restriction \"%s\" (expected a PU list such as \"0-3,8\")",
              s);
    return PX_EINVAL;
}

static int load_hwloc(pxi_topo *t, const char *synthetic, const char *restrict_cpuset)
{
    if (hwloc_topology_init(&t->topo) != 0) {
        t->topo = NULL;
        PXI_ERROR("threads: hwloc_topology_init failed (errno %d)", errno);
        return PX_ENOMEM;
    }
    if (synthetic != NULL && hwloc_topology_set_synthetic(t->topo, synthetic) != 0) {
        int st = hwloc_status();
        PXI_ERROR("threads: invalid hwloc synthetic topology \"%s\"", synthetic);
        return st;
    }
    if (hwloc_topology_load(t->topo) != 0) {
        int st = synthetic != NULL ? hwloc_status() : PX_ENODEV;
        PXI_ERROR("threads: hwloc_topology_load failed for %s%s%s (errno %d)",
                  synthetic != NULL ? "synthetic topology \"" : "this machine",
                  synthetic != NULL ? synthetic : "", synthetic != NULL ? "\"" : "", errno);
        return st;
    }
    if (synthetic == NULL && !hwloc_topology_is_thissystem(t->topo)) {
        /* HWLOC_XMLFILE / HWLOC_SYNTHETIC redirected the load: hwloc's binding calls would then
         * succeed without binding anything, so treat it like a synthetic machine. */
        PXI_WARN("threads: hwloc did not load this machine's topology (HWLOC_XMLFILE or "
                 "HWLOC_SYNTHETIC set?); threads will not be bound");
        t->synthetic = 1;
    }
    t->cpuset = hwloc_bitmap_alloc();
    if (t->cpuset == NULL)
        return PX_ENOMEM;
    if (t->synthetic) {
        /* A synthetic machine is not this one: its whole (allowed) cpuset is the process's. */
        if (hwloc_bitmap_copy(t->cpuset, hwloc_topology_get_allowed_cpuset(t->topo)) != 0)
            return PX_ENOMEM;
    } else {
        int st = this_process_cpuset(t->topo, t->cpuset);
        if (st != PX_OK)
            return st;
    }
    if (restrict_cpuset != NULL && restrict_cpuset[0] != '\0') {
        hwloc_bitmap_t r = NULL;
        int st = parse_pu_list(restrict_cpuset, &r);
        if (st != PX_OK)
            return st;
        hwloc_bitmap_and(t->cpuset, t->cpuset, r);
        hwloc_bitmap_free(r);
        if (hwloc_bitmap_iszero(t->cpuset)) {
            PXI_ERROR("threads: cpuset restriction \"%s\" leaves no PU of the process cpuset",
                      restrict_cpuset);
            return PX_EINVAL;
        }
    }
    int st = build_cores(t);
    if (st == PX_EINVAL)
        PXI_ERROR("threads: the process cpuset contains no core of the topology");
    if (st != PX_OK)
        return st;
    return cpuset_string(t);
}

/* Spread: give k ranks to the usable cores [lo, hi), which share their ancestors above
 * `level`. The range splits into maximal runs with equal keys at `level` (the children of
 * the common ancestor); child i of the u cores receives ceil(k*U_i/u) - ceil(k*U_{i-1}/u)
 * ranks, U_i being the cores in children 0..i. Each child so gets its proportional share
 * (never more than its own cores, as k <= u), earlier children take the rounding surplus,
 * and ranks stay contiguous within a child (neighbouring ranks share a package). At the last
 * level every core is a child of its own and receives 0 or 1 rank, on its first PU. */
static void spread_range(const pxi_topo *t, int lo, int hi, int level, int k, int *out, int *pos)
{
    if (k <= 0)
        return;
    int64_t u = hi - lo, before = 0;
    int a = lo;
    while (a < hi) {
        int b = a + 1;
        if (level < t->nlevels) {
            int key = t->keys[a * t->nlevels + level];
            while (b < hi && t->keys[b * t->nlevels + level] == key)
                b++;
        }
        int give = ceil_div64(k * (before + (b - a)), u) - ceil_div64(k * before, u);
        if (level < t->nlevels)
            spread_range(t, a, b, level + 1, give, out, pos);
        else if (give > 0)
            out[(*pos)++] = t->pus[t->cores[a].first];
        before += b - a;
        a = b;
    }
}

/* Close order over every usable PU: round j takes the j-th PU of each core having one, in
 * core order. Rank r of close (and of any policy once ranks outnumber cores) gets
 * slots[r % npus]: first one rank per core, then the cores' second PUs, and so on. */
static void build_slots(pxi_topo *t)
{
    int s = 0;
    for (int j = 0; j < t->max_core_pus; j++)
        for (int c = 0; c < t->ncores; c++)
            if (t->cores[c].npus > j)
                t->slots[s++] = t->pus[t->cores[c].first + j];
}

void pxi_topo_free(pxi_topo *t)
{
    if (t->cpuset != NULL)
        hwloc_bitmap_free(t->cpuset);
    if (t->topo != NULL)
        hwloc_topology_destroy(t->topo);
    pxi_free(t->cores);
    pxi_free(t->pus);
    pxi_free(t->slots);
    pxi_free(t->keys);
    pxi_free(t->cpuset_str);
    pxi_free(t);
}

int pxi_topo_load(pxi_topo **out, const char *synthetic, const char *restrict_cpuset)
{
    if (out == NULL) {
        PXI_ERROR("pxi_topo_load: out is NULL");
        return PX_EFAULT;
    }
    *out = NULL;
    pxi_topo *t = pxi_calloc(1, sizeof *t);
    if (t == NULL) {
        PXI_ERROR("threads: out of memory loading the topology");
        return PX_ENOMEM;
    }
    t->synthetic = synthetic != NULL;
    int st = load_hwloc(t, synthetic, restrict_cpuset);
    if (st != PX_OK) {
        if (st == PX_ENOMEM)
            PXI_ERROR("threads: out of memory loading the topology");
        pxi_topo_free(t);
        return st;
    }
    build_slots(t);
    *out = t;
    return PX_OK;
}

int pxi_topo_map(const pxi_topo *t, int nranks, const char *bind, int *pu_of_rank)
{
    int policy;
    int rc = pxi_topo_map_args(t, nranks, bind, pu_of_rank, &policy);
    if (rc != PX_OK)
        return rc;
    if (policy == BIND_NONE) {
        for (int r = 0; r < nranks; r++)
            pu_of_rank[r] = -1;
        return PX_OK;
    }
    if (policy == BIND_SPREAD && nranks <= t->ncores) {
        int pos = 0;
        spread_range(t, 0, t->ncores, 0, nranks, pu_of_rank, &pos);
        PX_ASSERT(pos == nranks);
        return PX_OK;
    }
    /* close, and spread once every core holds a rank (nothing is left to spread over). */
    for (int r = 0; r < nranks; r++)
        pu_of_rank[r] = t->slots[r % t->npus];
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
    if (!hwloc_bitmap_isset(t->cpuset, (unsigned)pu)) {
        PXI_WARN("threads: cannot bind thread %llu to PU %d: not in the process cpuset %s; "
                 "it runs unbound",
                 (unsigned long long)pxi_os_thread_id(), pu, t->cpuset_str);
        return PX_EINVAL;
    }
    if (t->synthetic) {
        PXI_DEBUG("threads: not binding to PU %d of a synthetic topology", pu);
        return PX_ENOSYS;
    }
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set == NULL) {
        PXI_WARN("threads: out of memory binding to PU %d; the thread runs unbound", pu);
        return PX_ENOMEM;
    }
    hwloc_bitmap_only(set, (unsigned)pu);
    int rc = hwloc_set_cpubind(t->topo, set, HWLOC_CPUBIND_THREAD);
    int err = errno;
    hwloc_bitmap_free(set);
    if (rc != 0) {
        PXI_WARN("threads: the OS refused to bind thread %llu to PU %d (%s); it runs unbound",
                 (unsigned long long)pxi_os_thread_id(), pu, strerror(err));
        return PX_ENODEV;
    }
    return PX_OK;
}

int pxi_topo_binds(const pxi_topo *t)
{
    return t != NULL && !t->synthetic;
}

static const topo_core *core_of_pu(const pxi_topo *t, int pu)
{
    for (int c = 0; c < t->ncores; c++)
        for (int j = 0; j < t->cores[c].npus; j++)
            if (t->pus[t->cores[c].first + j] == pu)
                return &t->cores[c];
    return NULL;
}

void pxi_topo_print(const pxi_topo *t, FILE *out, const int *pu_of_rank, int nranks)
{
    if (t == NULL || out == NULL)
        return;
    int pkgs = t->machine_packages > 0 ? t->machine_packages : 1;
    fprintf(out, "  topology%s: ", t->synthetic ? " (synthetic)" : "");
    if (t->machine_cores % pkgs == 0 && t->machine_pus % t->machine_cores == 0) {
        int cpp = t->machine_cores / pkgs, ppc = t->machine_pus / t->machine_cores;
        fprintf(out, "%d package%s x %d core%s x %d PU%s", pkgs, pxi_topo_plural(pkgs), cpp,
                pxi_topo_plural(cpp), ppc, pxi_topo_plural(ppc));
    } else {
        fprintf(out, "%d package%s, %d cores, %d PUs", pkgs, pxi_topo_plural(pkgs),
                t->machine_cores, t->machine_pus);
    }
    fprintf(out, ", process cpuset %s (%d core%s, %d PU%s)\n", t->cpuset_str, t->ncores,
            pxi_topo_plural(t->ncores), t->npus, pxi_topo_plural(t->npus));
    if (pu_of_rank == NULL)
        return;
    for (int r = 0; r < nranks; r++) {
        int pu = pu_of_rank[r];
        const topo_core *c = pu < 0 ? NULL : core_of_pu(t, pu);
        if (pu < 0)
            fprintf(out, "  rank %d -> unbound\n", r);
        else if (c == NULL)
            fprintf(out, "  rank %d -> PU %d (outside the process cpuset)\n", r, pu);
        else
            fprintf(out, "  rank %d -> PU %d (core %d, package %d)\n", r, pu, c->logical,
                    c->package);
    }
}

struct pxi_topo_binding {
    pthread_t thread;
    hwloc_bitmap_t set;
};

int pxi_topo_save_self(const pxi_topo *t, pxi_topo_binding **out)
{
    if (t == NULL || out == NULL)
        return PX_EFAULT;
    *out = NULL;
    if (t->synthetic)
        return PX_ENOSYS;
    pxi_topo_binding *b = pxi_malloc(sizeof *b);
    if (b == NULL)
        return PX_ENOMEM;
    b->thread = pthread_self();
    b->set = hwloc_bitmap_alloc();
    if (b->set == NULL) {
        pxi_free(b);
        return PX_ENOMEM;
    }
    if (hwloc_get_cpubind(t->topo, b->set, HWLOC_CPUBIND_THREAD) != 0) {
        PXI_DEBUG("threads: cannot read the calling thread's binding (%s); it is not restored",
                  strerror(errno));
        hwloc_bitmap_free(b->set);
        pxi_free(b);
        return PX_ENOSYS;
    }
    *out = b;
    return PX_OK;
}

void pxi_topo_restore(const pxi_topo *t, pxi_topo_binding *b)
{
    if (b == NULL)
        return;
    if (t != NULL && hwloc_set_thread_cpubind(t->topo, b->thread, b->set, 0) != 0)
        PXI_DEBUG("threads: could not restore the initializing thread's binding (%s)",
                  strerror(errno));
    hwloc_bitmap_free(b->set);
    pxi_free(b);
}

/* Ranks 0..k-1 whose PUs lie under one cache of rank 0's PU: the deepest of L2 and L3 that
 * holds more than one of them; 1 when neither does or rank 0 is unbound. */
int pxi_topo_cache_group(const pxi_topo *t, const int *pu_of_rank, int nranks)
{
    if (t == NULL || pu_of_rank == NULL || nranks < 2 || pu_of_rank[0] < 0 || t->synthetic)
        return 1;
    hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(t->topo, (unsigned)pu_of_rank[0]);
    if (pu == NULL)
        return 1;
    static const hwloc_obj_type_t levels[2] = {HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE};
    for (int l = 0; l < 2; l++) {
        hwloc_obj_t c = hwloc_get_ancestor_obj_by_type(t->topo, levels[l], pu);
        if (c == NULL || c->cpuset == NULL)
            continue;
        int k = 1;
        while (k < nranks && pu_of_rank[k] >= 0 &&
               hwloc_bitmap_isset(c->cpuset, (unsigned)pu_of_rank[k]))
            k++;
        if (k > 1)
            return k;
    }
    return 1;
}

size_t pxi_topo_l2_bytes(const pxi_topo *t)
{
    if (t == NULL || t->synthetic || t->topo == NULL)
        return 0;
    /* The L2 (unified or data) above the first core: every core of one machine has the same. */
    hwloc_obj_t core = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_CORE, 0);
    if (!core)
        core = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_PU, 0);
    for (hwloc_obj_t o = core; o; o = o->parent)
        if (o->type == HWLOC_OBJ_L2CACHE && o->attr && o->attr->cache.size > 0)
            return (size_t)o->attr->cache.size;
    return 0;
}
