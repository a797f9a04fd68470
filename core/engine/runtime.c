/* core/engine/runtime.c - engine create/destroy, the default engine and the module hooks
 * core/init.c calls (core/runtime_hooks.h).
 *
 * Sizing CPU workers against the Threads pool: kernels launched as engine ops on the threads
 * space run with the launching worker as rank 0 plus the pool's other ranks, and launches on
 * one space from several threads take the space's launch lock one at a time (a queued
 * launcher sleeps, pxi_tpool_lock). The per_device engine defaults to two CPU workers per CPU
 * device (one when the process may run on a single processor: pxi_os_num_cpus counts the
 * affinity mask): with one (MXNet's MXNET_CPU_WORKER_NTHREADS = 1),
 * independent CPU ops of a pipeline never overlap; a second worker lets them, while kernel ops
 * still compute with at most the pool's ranks (the other worker waits on the launch lock or
 * runs a plain op: one thread beyond the pool at most). bench/bench_pipeline measured it
 * (bench/RESULTS.md, ## Engine workers). The pooled engine defaults to one worker per core for
 * many small ops; a threads-space kernel op there runs beside the other workers' ops, so a
 * pooled engine that mixes kernel ops with plain ops may use more threads than cores
 * (documented in parex/engine.h). PX_CPU_WORKER_NTHREADS overrides both defaults.
 */
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "base/os.h"
#include "base/wait.h"
#include "core/engine/checks.h"
#include "core/engine/engine_impl.h"
#include "core/engine/mpi_hooks.h"
#include "core/oversub.h"
#include "core/runtime.h"
#include "core/runtime_hooks.h"
#include "core/settings.h"

#define PXI_DEFAULT_MAX_PENDING (1 << 16)
/* CPU workers per CPU device of a per_device engine on a machine with 2+ cores (see above). */
#define PXI_DEFAULT_PER_DEVICE_WORKERS 2
/* Work-first inlining threshold (cost.c): about what handing an op to a worker costs. */
#define PXI_DEFAULT_INLINE_NS 50

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static pxi_engine *engine_list;              /* under list_lock */
static _Atomic(pxi_engine *) default_engine; /* written by initialize/finalize only */

size_t pxi_kernel_op_bytes(void);

void pxi_engine_list_add(pxi_engine *e)
{
    pthread_mutex_lock(&list_lock);
    e->list_next = engine_list;
    engine_list = e;
    pthread_mutex_unlock(&list_lock);
}

void pxi_engine_list_remove(pxi_engine *e)
{
    pthread_mutex_lock(&list_lock);
    for (pxi_engine **p = &engine_list; *p; p = &(*p)->list_next)
        if (*p == e) {
            *p = e->list_next;
            break;
        }
    pthread_mutex_unlock(&list_lock);
}

static const char *kind_name(px_engine_kind k)
{
    switch (k) {
    case PX_ENGINE_NAIVE:
        return "naive";
    case PX_ENGINE_POOLED:
        return "pooled";
    case PX_ENGINE_PER_DEVICE:
        return "per_device";
    }
    return "?";
}

static void engine_free(pxi_engine *e)
{
    for (int i = 0; i < PXI_MAX_CPU_DEVS; ++i)
        pxi_lane_destroy(atomic_load_explicit(&e->cpu_lanes[i], memory_order_relaxed));
    for (int i = 0; i < PXI_MAX_GPU_DEVS; ++i) {
        pxi_lane_destroy(atomic_load_explicit(&e->gpu_lanes[i], memory_order_relaxed));
        pxi_lane_destroy(atomic_load_explicit(&e->gpu_copy_lanes[i], memory_order_relaxed));
    }
    pxi_lane_destroy(e->prio_lane);
    pxi_lane_destroy(e->io_lane);
    for (int c = 0; c < PXI_OPR_CLASSES; ++c)
        pxi_pool_fini(&e->opr_pool[c]);
    pxi_pool_fini(&e->kop_pool);
    pxi_handle_table_fini(&e->vars);
    pxi_handle_table_fini(&e->operators);
    pthread_mutex_destroy(&e->lanes_lock);
    pthread_mutex_destroy(&e->dependents_lock);
    e->magic = 0;
    pxi_free_aligned(e);
}

static px_engine *engine_create(px_engine_kind kind, int cpu_workers, const char *caller)
{
    if (!pxi_runtime_ready()) {
        PXI_ERROR("%s: the runtime is not initialized", caller);
        return NULL;
    }
    if ((unsigned)kind > (unsigned)PX_ENGINE_PER_DEVICE) {
        PXI_ERROR("%s: unknown engine kind %d", caller, (int)kind);
        return NULL;
    }
    if (cpu_workers < 0 || cpu_workers > 4096) {
        PXI_ERROR("%s: cpu_workers = %d is outside [0, 4096]", caller, cpu_workers);
        return NULL;
    }
    const pxi_config *cfg = pxi_config_get();
    /* An oversubscribed process (core/oversub.h) runs its engines as on one processor: one CPU
     * worker by default, the waiting thread holding the lanes and MPI progress (calls.c). */
    const int n_cpus = pxi_oversub_active() ? 1 : pxi_os_num_cpus();
    /* Sized by the caller (the argument or PX_CPU_WORKER_NTHREADS): that many threads run ops. */
    const int sized = cpu_workers > 0 || cfg->cpu_worker_nthreads > 0;
    if (cpu_workers == 0)
        cpu_workers = cfg->cpu_worker_nthreads;
    if (cpu_workers <= 0)
        cpu_workers = kind == PX_ENGINE_POOLED ? n_cpus
                      : n_cpus >= 2            ? PXI_DEFAULT_PER_DEVICE_WORKERS
                                               : 1;
    if (cpu_workers <= 0)
        cpu_workers = 1;

    pxi_engine *e = pxi_malloc_aligned(sizeof *e, PXI_CACHE_LINE);
    if (!e) {
        PXI_ERROR("%s: out of memory", caller);
        return NULL;
    }
    memset(e, 0, sizeof *e);
    e->n_cpus = n_cpus;
    /* A default-sized per_device engine on several processors that the Threads pool's ranks
     * fill (T >= C: the default PX_NUM_THREADS): a kernel op runs on all of them with its
     * launcher as rank 0, so an engine thread beside it, a second worker idling or the MPI
     * progress thread polling, takes a processor from a rank. A waiter there runs the ops and
     * tests the MPI requests itself, as on one processor (calls.c); workers already running
     * keep taking ops. MXNet runs one CPU worker beside OpenMP-parallel ops for the same
     * reason. The 1-rank distributed CG, 2 threads on 2 cores: 0.20-0.22 ms per
     * iteration against 0.25-0.31 with the waiter asleep (bench/RESULTS.md, session 10). An
     * explicit worker count keeps its workers running the ops (Cholesky's tiles). An
     * oversubscribed process already counts one processor. */
    e->pool_full = !sized && kind == PX_ENGINE_PER_DEVICE && n_cpus >= 2 &&
                   pxi_oversub_get()->threads >= n_cpus;
    e->magic = PXI_ENGINE_MAGIC;
    e->kind = kind;
    e->cpu_workers = cpu_workers;
    e->debug_check = cfg->debug_check;
    e->prio_workers = cpu_workers / 2 > 0 ? cpu_workers / 2 : 1;
    e->max_pending =
        cfg->engine_max_pending > 0 ? cfg->engine_max_pending : PXI_DEFAULT_MAX_PENDING;
    e->low_pending = e->max_pending * 3 / 4;
    if (e->low_pending >= e->max_pending)
        e->low_pending = e->max_pending - 1;
    /* A waiting thread spins like the workers it waits for (lanes.c: throttled only when the
     * workers alone outnumber the CPUs). */
    e->spin_ns = pxi_wait_spin_ns(cpu_workers, 0);
    e->inline_ns = cfg->engine_inline_ns >= 0 ? cfg->engine_inline_ns : PXI_DEFAULT_INLINE_NS;
    e->bulk = cfg->engine_bulk >= 0 ? cfg->engine_bulk != 0 : 1;
    e->clock_ns = pxi_engine_clock_cost_ns();
    for (int c = 0; c < PXI_COST_SLOTS; ++c)
        atomic_init(&e->cost[c].word, 0);
    for (int c = 0; c < PXI_OPR_CLASSES; ++c) {
        size_t bytes = sizeof(pxi_opr) + pxi_opr_class_deps[c] * sizeof(pxi_dep);
        size_t per_slab = (size_t)(c == 0 ? 256 : c == 1 ? 128 : c == 2 ? 32 : 8);
        pxi_pool_init(&e->opr_pool[c], bytes, per_slab);
    }
    pxi_pool_init(&e->kop_pool, pxi_kernel_op_bytes(), 64);
    pxi_handle_table_init(&e->vars, sizeof(pxi_var), NULL, NULL);
    pxi_handle_table_init(&e->operators, sizeof(pxi_operator), NULL, NULL);
    pthread_mutex_init(&e->lanes_lock, NULL);
    e->lane_ops = &pxi_engine_lane_ops;
    pthread_mutex_init(&e->dependents_lock, NULL);
    e->dependents = NULL;
    atomic_init(&e->in_flight, 0);
    atomic_init(&e->push_seq, 0);
    pxi_wait_event_init(&e->idle);
    atomic_init(&e->n_finishing, 0);
    atomic_init(&e->first_failure, PX_OK);
    atomic_init(&e->fail_epoch, 0u);
    atomic_init(&e->n_marks, 0u);
    atomic_init(&e->marks_at_epoch, 0u);
    for (int i = 0; i < PXI_MAX_CPU_DEVS; ++i)
        atomic_init(&e->cpu_lanes[i], NULL);
    atomic_init(&e->cpu_lanes_made, 0u);
    for (int i = 0; i < PXI_MAX_GPU_DEVS; ++i) {
        atomic_init(&e->gpu_lanes[i], NULL);
        atomic_init(&e->gpu_copy_lanes[i], NULL);
    }
    if (kind != PX_ENGINE_NAIVE) {
        pxi_lane *cpu = NULL;
        int rc = pxi_lane_create(e, e->lane_ops, PXI_LANE_CPU, 0, cpu_workers, &cpu);
        if (rc == PX_OK) {
            atomic_store_explicit(&e->cpu_lanes[0], cpu, memory_order_relaxed);
            atomic_store_explicit(&e->cpu_lanes_made, 1u, memory_order_relaxed);
            rc = pxi_lane_create(e, e->lane_ops, PXI_LANE_IO, 0, 1, &e->io_lane);
        }
        if (rc == PX_OK && kind == PX_ENGINE_PER_DEVICE)
            rc = pxi_lane_create(e, e->lane_ops, PXI_LANE_PRIO, 0, e->prio_workers, &e->prio_lane);
        if (rc != PX_OK) {
            PXI_ERROR("%s: cannot start the worker threads", caller);
            engine_free(e);
            return NULL;
        }
    }
    pxi_engine_list_add(e);
    return e;
}

px_engine *px_engine_create(px_engine_kind kind, int cpu_workers)
{
    return engine_create(kind, cpu_workers, "px_engine_create");
}

void pxi_engine_dependent_add(pxi_engine *e, pxi_engine_dependent *d)
{
    pthread_mutex_lock(&e->dependents_lock);
    d->prev = NULL;
    d->next = e->dependents;
    if (d->next)
        d->next->prev = d;
    e->dependents = d;
    pthread_mutex_unlock(&e->dependents_lock);
}

void pxi_engine_dependent_remove(pxi_engine *e, pxi_engine_dependent *d)
{
    pthread_mutex_lock(&e->dependents_lock);
    if (d->prev)
        d->prev->next = d->next;
    else
        e->dependents = d->next;
    if (d->next)
        d->next->prev = d->prev;
    d->prev = d->next = NULL;
    pthread_mutex_unlock(&e->dependents_lock);
}

/* No op is in flight: every dependent releases what it holds of the engine and forgets it. */
static void dependents_engine_gone(pxi_engine *e)
{
    pthread_mutex_lock(&e->dependents_lock);
    while (e->dependents) {
        pxi_engine_dependent *d = e->dependents;
        e->dependents = d->next;
        if (e->dependents)
            e->dependents->prev = NULL;
        d->prev = d->next = NULL;
        d->engine_gone(d);
    }
    pthread_mutex_unlock(&e->dependents_lock);
}

static void engine_teardown(pxi_engine *e)
{
    pxi_mpi_engine_closing(e);
    pxi_engine_drain(e);
    pxi_mpi_engine_closed(e);
    dependents_engine_gone(e);
    pxi_engine_list_remove(e);
    engine_free(e);
}

int px_engine_destroy(px_engine *e)
{
    static const char caller[] = "px_engine_destroy";
    int rc = pxi_engine_validate(e, caller);
    if (rc != PX_OK)
        return rc;
    if (pxi_engine_in_op()) {
        PXI_ERROR("%s: called from inside an engine op", caller);
        return PX_EDEADLK;
    }
    if (e == atomic_load_explicit(&default_engine, memory_order_relaxed)) {
        PXI_ERROR("%s: the default engine is destroyed by px_finalize", caller);
        return PX_EBUSY;
    }
    engine_teardown(e);
    return PX_OK;
}

px_engine *px_engine_default(void)
{
    if (!pxi_runtime_ready())
        return NULL;
    return atomic_load_explicit(&default_engine, memory_order_acquire);
}

int pxi_engine_runtime_initialize(void)
{
    const pxi_config *cfg = pxi_config_get();
    px_engine_kind kind = PX_ENGINE_PER_DEVICE;
    if (strcmp(cfg->engine, "naive") == 0)
        kind = PX_ENGINE_NAIVE;
    else if (strcmp(cfg->engine, "pooled") == 0)
        kind = PX_ENGINE_POOLED;
    else if (cfg->engine[0] && strcmp(cfg->engine, "per_device") != 0) {
        PXI_ERROR("px_initialize: PX_ENGINE = '%s' is not naive, pooled or per_device",
                  cfg->engine);
        return PX_EINVAL;
    }
    px_engine *e = engine_create(kind, 0, "px_initialize");
    if (!e)
        return PX_ENOMEM;
    e->is_default = 1;
    /* Release: px_engine_default callers acquire the fully built engine. */
    atomic_store_explicit(&default_engine, e, memory_order_release);
    return PX_OK;
}

int pxi_engine_runtime_finalize(void)
{
    if (pxi_engine_in_op()) {
        PXI_ERROR("px_finalize: called from inside an engine op");
        return PX_EDEADLK;
    }
    pxi_engine *def = atomic_load_explicit(&default_engine, memory_order_relaxed);
    /* User engines still alive: drain them (their workers keep running until destroyed). */
    for (;;) {
        pxi_engine *found = NULL;
        pthread_mutex_lock(&list_lock);
        for (pxi_engine *e = engine_list; e; e = e->list_next)
            if (e != def && !e->is_default) {
                found = e;
                break;
            }
        if (found)
            found->is_default = 2; /* warned; not again */
        pthread_mutex_unlock(&list_lock);
        if (!found)
            break;
        PXI_WARN("px_finalize: engine %p was not destroyed; waiting for its ops", (void *)found);
        pxi_mpi_engine_closing(found);
        pxi_engine_drain(found);
        pxi_mpi_engine_closed(found);
    }
    int first = PX_OK;
    if (def) {
        pxi_mpi_engine_closing(def);
        pxi_engine_drain(def);
        first = atomic_exchange_explicit(&def->first_failure, PX_OK, memory_order_relaxed);
        atomic_store_explicit(&default_engine, NULL, memory_order_relaxed);
        engine_teardown(def);
    }
    pxi_mpi_shutdown();
    return first;
}

void pxi_engine_print_configuration(FILE *out)
{
    pxi_engine *e = atomic_load_explicit(&default_engine, memory_order_acquire);
    if (!out)
        out = stdout;
    if (!e) {
        fprintf(out, "  engine: none\n");
        return;
    }
    fprintf(out, "  engine: %s, %d CPU worker(s)", kind_name(e->kind), e->cpu_workers);
    if (e->kind == PX_ENGINE_PER_DEVICE)
        fprintf(out, ", %d priority worker(s)", e->prio_workers);
    if (e->kind != PX_ENGINE_NAIVE)
        fprintf(out, ", 1 IO worker");
    fprintf(out, ", max pending %lld, spin %lld us", (long long)e->max_pending,
            (long long)(e->spin_ns / 1000));
    if (e->kind != PX_ENGINE_NAIVE)
        fprintf(out, ", ops measured below %lld ns run on their pusher%s", (long long)e->inline_ns,
                e->bulk ? ", bulk ops" : "");
    fputc('\n', out);
}
