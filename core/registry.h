/*
 * core/registry.h - the execution-space registry and the ops table every backend fills
 * (core/registry.c). core reaches a backend only through this table and never names one (a
 * device's number comes from the device_id op, the engine's device space from
 * pxi_registry_device_space). A backend includes this header and nothing else from core except
 * log.h, alloc.h, check.h and os.h (plus policy/plan.h and policy/range.h); it takes its
 * settings from the pxi_space_config its initialize receives, never from the global
 * configuration.
 *
 * Registration: a backend defines one `pxi_space_ops` and writes PX_REGISTER_SPACE(ops, anchor)
 * at file scope. That emits a constructor that adds the table to the registry before main
 * (Kokkos' ExecSpaceManager idea), and a global anchor symbol. The build generates
 * `pxi_space_anchors.c`, which references every enabled backend's anchor; px_initialize reads
 * that table, so a program linked against libparex.a still pulls each backend's object file in
 * and its constructor runs (Kokkos loses Serial in that case because nothing references it).
 */
#ifndef PXI_REGISTRY_H
#define PXI_REGISTRY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/check.h"
#include "parex/kernel.h"
#include "parex/policy.h"
#include "parex/reducer.h"
#include "parex/space.h"
#include "parex/team.h"
#include "policy/plan.h"

/* Where a launch's body comes from: a host function (px_parallel_*_fn) or a px_kernel. */
typedef enum { PXI_BODY_FN = 1, PXI_BODY_KERNEL = 2 } pxi_body_kind;

/* One launch, built and checked once by pxi_launch_prepare (core/launch.h) for the direct
 * px_parallel_* calls and for the engine's kernel ops alike, then handed to the space's ops
 * after the tools callbacks. A backend receives only prepared launches: the policy is valid,
 * the range non-empty, the host entry set on host spaces, the reducer valid.
 *
 * Small on purpose: a px_parallel_* call builds one per call (pxi_launch_init, core/launch.h),
 * so the policy is referenced, not copied (a direct call points at its own policy argument,
 * which outlives the launch; an engine kernel op points at the copy it owns,
 * core/engine/kernel_ops.c), a team plan likewise, and the host entries share one slot. */
typedef struct pxi_launch {
    px_kernel_kind kind;         /* for / reduce / scan */
    pxi_policy_kind policy_kind; /* which member of the policy union is set (policy/plan.h) */
    pxi_body_kind body;          /* host function or px_kernel */
    const char *label;           /* never NULL or empty once prepared */
    px_space *space;             /* resolved and available once prepared */
    union {
        const px_range_policy *range; /* PXI_POLICY_RANGE: begin <= end, chunk >= 0, known
                                         schedule */
        const px_mdrange_policy *md;  /* PXI_POLICY_MDRANGE: valid (pxi_mdrange_check) */
        const px_team_policy *team;   /* PXI_POLICY_TEAM: league_size >= 0, within the space's
                                         pxi_team_limits */
    };
    /* Host body: the one entry matching (kind, policy_kind) is set (from the kernel for
     * PXI_BODY_KERNEL; may then be NULL on a device space); read only that one. MDRange entries
     * run one tile per call (a kernel's entry for the policy's iterate order); team entries
     * run one team. ctx is the _fn ctx or the kernel args. */
    union {
        px_host_for_entry host_for;
        px_host_reduce_entry host_reduce;
        px_host_scan_entry host_scan;
        px_md_for_fn host_md_for;
        px_md_reduce_fn host_md_reduce;
        px_team_fn host_team_for;
        px_team_reduce_fn host_team_reduce;
    };
    void *ctx;
    /* The single-source kernel, or NULL for a _fn launch or a team launch (device backends
     * need it). */
    const px_kernel *kernel;
    size_t args_size;
    /* reduce/scan: validated reducer and host result (may be NULL for scan's total). */
    const px_reducer *reducer;
    void *result;
    /* Stream to launch on for device backends (engine workers pass theirs); NULL: default. */
    void *stream;
    /* PXI_POLICY_TEAM only: the single-source team kernel or NULL (kernel is then NULL), and
     * where pxi_launch_prepare writes the plan it resolves from the space's team limits
     * (team_size, vector_length, groups, scratch): storage the launch's builder provides. */
    const px_team_kernel *team_kernel;
    pxi_team_plan *team_plan;
} pxi_launch;

/* The settings a backend takes at initialize, filled by core (core/registry.c) from the parsed
 * configuration: backends never read the global configuration themselves. How long waits spin
 * (PX_WAIT_POLICY, PX_SPIN_US) is not here: base/wait.c is configured once by px_initialize and
 * every waiter, in core and in backends, asks it (pxi_wait_spin_ns). */
typedef struct pxi_space_config {
    int num_threads; /* PX_NUM_THREADS; 0: one per core of the process cpuset */
    int device_id;   /* PX_DEVICE_ID; -1: the backend's default */
    char bind[8];    /* PX_BIND: "close" | "spread" | "none"; "": close */
    int debug_check; /* PX_DEBUG_CHECK: run structure checkers after mutations */
} pxi_space_config;

/* Backend operations. Every function is called only while the space is initialized, except
 * initialize itself. Statuses follow core.h. */
typedef struct pxi_space_ops {
    const char *name;       /* "serial", "threads", "cuda" */
    int priority;           /* initialized in ascending order, finalized in descending;
                               the default space is the available one of highest priority */
    int kokkos_device_type; /* Kokkos Tools encoding: Serial 0, Cuda 2, Threads 6 */
    int host_accessible;    /* memory from this space's malloc is host memory */
    /* Bring the space up. Return PX_OK, PX_ENODEV when unavailable on this machine (not an
     * error: the space is just absent, and the backend logged why at info level), or another
     * status for a real failure, which aborts px_initialize. */
    int (*initialize)(const pxi_space_config *cfg);
    int (*finalize)(void);
    int (*concurrency)(void);
    int (*fence)(void);
    /* Own lines for px_print_configuration, each starting with two spaces. May be NULL. */
    void (*print_configuration)(FILE *out);
    /* Run one launch; for host spaces returns when complete. */
    int (*launch)(const pxi_launch *l);
    /* Memory space. */
    void *(*malloc)(size_t bytes);
    int (*free)(void *p);
    /* Copy for which this space is responsible (core picks the device side if either is
     * not host accessible): dst_host / src_host tell which pointers are host memory. */
    int (*deep_copy)(void *dst, int dst_host, const void *src, int src_host, size_t bytes);
    /* Nonzero when the calling thread is executing a kernel of this space right now (used to
     * turn waits from inside kernels into PX_EDEADLK). May be NULL. */
    int (*in_kernel)(void);
    /* The device this space runs on (CUDA device number), for the engine's contexts and the
     * Kokkos Tools device id. NULL on host spaces (device 0). */
    int (*device_id)(void);

    /* Device streams, for the engine's per-device queues. NULL on host spaces. */
    int (*stream_create)(void **stream);
    int (*stream_destroy)(void *stream);
    /* Run fn(arg) on a host thread once all work queued on stream so far has completed
     * (cudaStreamAddCallback, which also fires after a device error so no op hangs); fn must
     * not call the device runtime. status is PX_OK or the
     * device error seen. */
    int (*stream_then)(void *stream, void (*fn)(void *arg, int status), void *arg);
    int (*stream_synchronize)(void *stream);
    /* Asynchronous copy on stream (host pointers should be pinned for overlap). */
    int (*copy_async)(void *dst, int dst_host, const void *src, int src_host, size_t bytes,
                      void *stream);

    /* Team launches (PXI_POLICY_TEAM): fill *out with the space's limits now (policy/plan.h)
     * and return PX_OK. NULL: the space runs no team launch. A launch that passed these limits
     * reaches launch() with team_plan resolved (pool spaces: ngroups from concurrency()). */
    int (*team_limits)(pxi_team_limits *out);

    /* Execution-space instances (core/instance.c, px_space_partition). An instance is a
     * px_space with the same ops whose `impl` holds the backend's state; launch() finds it in
     * l->space->impl. instance_splits: 1 when instances get disjoint ranks of the space (the
     * weights split concurrency()), 0 when each instance gets the whole space (a stream, or the
     * serial thread). instance_create: the state of one instance with ranks [first, first +
     * nranks) (0 and concurrency() when not split). instance_destroy: wait for the instance's
     * launches, then free its state. The other ops answer for one instance. Any op may be
     * NULL: instance_create NULL gives instances with no state that run as the space itself;
     * the others fall back to the space-wide op (instance_copy: deep_copy). */
    int instance_splits;
    int (*instance_create)(int first, int nranks, void **impl);
    int (*instance_destroy)(void *impl);
    int (*instance_concurrency)(void *impl);
    int (*instance_fence)(void *impl);
    int (*instance_team_limits)(void *impl, pxi_team_limits *out);
    /* Copy ordered after the instance's earlier launches (complete by instance_fence). */
    int (*instance_copy)(void *impl, void *dst, int dst_host, const void *src, int src_host,
                         size_t bytes);
} pxi_space_ops;

/* The internal layout behind the public px_space handle. Owned by registry.c. */
struct px_space {
    const pxi_space_ops *ops;
    int available;   /* initialize returned PX_OK in the current runtime lifetime */
    int instance_id; /* Kokkos Tools instance number (0; an instance's own, >= 1) */
    /* Instances only (core/instance.c owns them; NULL on registry spaces): the space it was
     * partitioned from, the backend's state, and core's record of it. */
    px_space *parent;
    void *impl;
    struct pxi_instance *inst;
};

/* The host memory space (core/host_memory.c), for the malloc/free/deep_copy ops of every host
 * execution space: PXI_CACHE_LINE-aligned blocks, copies between host pointers. */
void *pxi_host_malloc(size_t bytes);
int pxi_host_free(void *p);
int pxi_host_deep_copy(void *dst, int dst_host, const void *src, int src_host, size_t bytes);

/* Called from PX_REGISTER_SPACE constructors before main. Ignores a duplicate name. */
void pxi_registry_add(const pxi_space_ops *ops);

/* Registry walk for core: count, i-th space in priority order (ascending). */
int pxi_registry_count(void);
px_space *pxi_registry_at(int i);

/* The device number of space @s (its device_id op; 0 for host spaces and NULL). */
int pxi_registry_device_id(const px_space *s);

/* The available device space with streams (the one the engine's GPU lanes drive), or NULL.
 * core uses it instead of naming a backend. */
px_space *pxi_registry_device_space(void);

/* Initialize all spaces in priority order (unavailable ones are skipped, failures roll back),
 * finalize in reverse, each with the space settings taken from @cfg (the parsed
 * configuration; never NULL). Called from core/init.c only. */
/* The default space, chosen by px_initialize (core/space.c pxi_space_choose_default) and read
 * by the space API and the tools layer; NULL while the runtime is down. */
void pxi_registry_set_default(px_space *s);
px_space *pxi_registry_default(void);

struct pxi_config; /* core/settings.h: the backends never see it */
PX_NODISCARD int pxi_registry_initialize(const struct pxi_config *cfg);
int pxi_registry_finalize(void);

#define PX_REGISTER_SPACE(ops, anchor)                                                             \
    char anchor = 0;                                                                               \
    __attribute__((constructor)) static void pxi_register_##anchor(void)                           \
    {                                                                                              \
        pxi_registry_add(&(ops));                                                                  \
    }

#endif
