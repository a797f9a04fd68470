/*
 * core/registry.h - the execution-space registry and the ops table every backend fills
 * (core/registry.c). core reaches a backend only through this table; a backend includes this
 * header and nothing else from core except log.h, alloc.h, check.h, os.h, settings.h, tools.h
 * and policy/range.h.
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

#include "core/check.h"
#include "parex/kernel.h"
#include "parex/policy.h"
#include "parex/reducer.h"
#include "parex/space.h"

/* One launch, as core hands it to a backend after validation and tools callbacks. */
typedef struct pxi_launch {
    px_kernel_kind kind;    /* for / reduce / scan */
    const char *label;      /* never NULL or empty */
    px_range_policy policy; /* validated: begin <= end, chunk >= 0, known schedule */
    /* Host body: exactly one of these matches kind. ctx is the _fn ctx or the kernel args. */
    px_host_for_entry host_for;
    px_host_reduce_entry host_reduce;
    px_host_scan_entry host_scan;
    void *ctx;
    /* The single-source kernel, or NULL for a _fn launch (device backends need it). */
    const px_kernel *kernel;
    size_t args_size;
    /* reduce/scan: validated reducer and host result (may be NULL for scan's total). */
    const px_reducer *reducer;
    void *result;
    /* Stream to launch on for device backends (engine workers pass theirs); NULL: default. */
    void *stream;
} pxi_launch;

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
    int (*initialize)(void);
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
} pxi_space_ops;

/* The internal layout behind the public px_space handle. Owned by registry.c. */
struct px_space {
    const pxi_space_ops *ops;
    int available;   /* initialize returned PX_OK in the current runtime lifetime */
    int instance_id; /* Kokkos Tools instance number (0) */
};

/* Stream for launches made by the calling thread (core/launch.c, thread-local): an engine GPU
 * worker sets its own stream around a kernel op so the launch goes on that stream (completion
 * then comes from stream_then) instead of the space's stream plus a device-wide fence. NULL
 * restores the space's default. */
void pxi_launch_set_stream(void *stream);

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

/* Initialize all spaces in priority order (unavailable ones are skipped, failures roll back),
 * finalize in reverse. Called from core/init.c only. */
PX_NODISCARD int pxi_registry_initialize(void);
int pxi_registry_finalize(void);

#define PX_REGISTER_SPACE(ops, anchor)                                                             \
    char anchor = 0;                                                                               \
    __attribute__((constructor)) static void pxi_register_##anchor(void)                           \
    {                                                                                              \
        pxi_registry_add(&(ops));                                                                  \
    }

#endif
