/* spaces/threads/instance.c - execution-space instances of the Threads space (parex/instance.h;
 * core/instance.c splits the ranks and keeps the handles). An instance of k ranks is an exec
 * (exec.h) of its own: a pool whose k - 1 workers are bound to the cores of its group of the
 * space's ranks and which has a rank-0 thread of its own on the group's first core (pool.h):
 * a launcher bound within the group's cores runs rank 0 itself, any other hands the launch to
 * that thread, so the instance's kernels run on its cores whoever launches them. It has its
 * own launch lock and launch state: launches on two instances never wait for each other, and
 * a fence of one waits only for the launches in flight on it. */
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "spaces/threads/exec.h"
#include "spaces/threads/fanin.h"

/* Below this many bytes a copy is one memcpy on the launching thread: waking the instance's
 * workers costs more than they would save. */
#define PARALLEL_COPY_BYTES ((size_t)1 << 18)

int pxi_threads_instance_create(int first, int nranks, void **impl)
{
    *impl = NULL;
    pxi_threads_exec *x = pxi_malloc_aligned(sizeof *x, PXI_CACHE_LINE);
    if (!x) {
        PXI_ERROR("threads: out of memory for an instance of %d ranks", nranks);
        return PX_ENOMEM;
    }
    memset(x, 0, sizeof *x);
    int rc = pxi_threads_exec_init(x, first, nranks, 1);
    if (rc != PX_OK) {
        pxi_free_aligned(x);
        return rc;
    }
    *impl = x;
    return PX_OK;
}

int pxi_threads_instance_fence(void *impl)
{
    /* Launches complete before they return, so what a fence waits for is the launches other
     * threads have in flight on the instance: the ticket lock serves them in order, and taking
     * it once means every launch that held or queued for it earlier has finished. */
    pxi_threads_exec *x = impl;
    pxi_tpool_lock(x->pool);
    pxi_tpool_unlock(x->pool);
    return PX_OK;
}

int pxi_threads_instance_destroy(void *impl)
{
    pxi_threads_exec *x = impl;
    (void)pxi_threads_instance_fence(x);
    pxi_threads_exec_fini(x);
    pxi_free_aligned(x);
    return PX_OK;
}

int pxi_threads_instance_concurrency(void *impl)
{
    return ((const pxi_threads_exec *)impl)->nranks;
}

int pxi_threads_instance_team_limits(void *impl, pxi_team_limits *out)
{
    int rc = pxi_threads_team_limits(((const pxi_threads_exec *)impl)->team, out);
    if (rc == PX_OK && !pxi_tpool_in_job())
        out->team_limit_why = "the instance's rank count (px_space_partition)";
    return rc;
}

/* ---- ordered copies ------------------------------------------------------------------------ */

typedef struct copy_job {
    unsigned char *dst;
    const unsigned char *src;
    size_t bytes;
    int nranks;
} copy_job;

/* Rank r copies the r-th of nranks equal slices (cache-line multiples, the last one short). */
static void copy_main(pxi_tpool *pool, int rank, unsigned gen, void *arg)
{
    const copy_job *c = arg;
    size_t per =
        (c->bytes / (size_t)c->nranks + PXI_CACHE_LINE - 1) / PXI_CACHE_LINE * PXI_CACHE_LINE;
    size_t b = per * (size_t)rank;
    if (b < c->bytes) {
        size_t n = c->bytes - b < per ? c->bytes - b : per;
        memcpy(c->dst + b, c->src + b, n);
    }
    (void)pxi_tpool_fanin(pool, rank, gen, PXI_FANIN_UP, NULL);
}

int pxi_threads_instance_copy(void *impl, void *dst, int dst_host, const void *src, int src_host,
                              size_t bytes)
{
    (void)dst_host;
    (void)src_host; /* core hands a host exec only host pointers */
    pxi_threads_exec *x = impl;
    if (pxi_tpool_in_job()) {
        /* From inside a kernel: like a nested launch, inline on this thread. */
        memcpy(dst, src, bytes);
        return PX_OK;
    }
    copy_job c = {dst, src, bytes, x->nranks};
    pxi_tpool_lock(x->pool);
    /* A large copy on a 1-rank instance with its own rank-0 thread goes through the pool, so
     * that it runs on the instance's core (pxi_tpool_run hands it over or runs it here). */
    if (bytes < PARALLEL_COPY_BYTES || (x->nranks == 1 && !pxi_tpool_has_leader(x->pool)))
        memcpy(dst, src, bytes);
    else
        pxi_tpool_run(x->pool, copy_main, &c);
    pxi_tpool_unlock(x->pool);
    return PX_OK;
}
