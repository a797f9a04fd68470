/* core/tools.h - the profiling call points (core/tools.c, issue "Profiling"). Launch, fence,
 * memory and engine code call these; with no tool loaded each costs one relaxed load and a
 * predicted branch (pxi_tools_active). Internal listeners (the kernel timer, the trace writer)
 * receive the same events as loaded Kokkos Tools libraries. */
#ifndef PXI_TOOLS_H
#define PXI_TOOLS_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "base/check.h"
#include "parex/kernel.h"
#include "parex/space.h"

/* Nonzero while any tool library or internal listener is active. Written by
 * pxi_tools_initialize/finalize on the initializing thread; read relaxed on the hot path:
 * a launch racing with initialize/finalize is not allowed anyway. */
extern atomic_int pxi_tools_on;

static inline int pxi_tools_active(void)
{
    return PXI_UNLIKELY(atomic_load_explicit(&pxi_tools_on, memory_order_relaxed) != 0);
}

/* The events, with Kokkos Tools signatures (kokkosp_*). An internal listener fills the ones it
 * wants; NULL members are skipped. */
typedef struct pxi_tool_hooks {
    void (*begin_parallel_for)(const char *name, uint32_t dev_id, uint64_t *kernel_id);
    void (*end_parallel_for)(uint64_t kernel_id);
    void (*begin_parallel_reduce)(const char *name, uint32_t dev_id, uint64_t *kernel_id);
    void (*end_parallel_reduce)(uint64_t kernel_id);
    void (*begin_parallel_scan)(const char *name, uint32_t dev_id, uint64_t *kernel_id);
    void (*end_parallel_scan)(uint64_t kernel_id);
    void (*begin_fence)(const char *name, uint32_t dev_id, uint64_t *fence_id);
    void (*end_fence)(uint64_t fence_id);
    void (*push_region)(const char *name);
    void (*pop_region)(void);
} pxi_tool_hooks;

/* Load the libraries named by the configuration and start internal listeners. Called by
 * px_initialize after the spaces are up. A library or symbol that cannot be loaded is a
 * warning, never a failure. */
PX_NODISCARD int pxi_tools_initialize(void);
/* Call kokkosp_finalize_library, print the kernel timer table, unload. */
void pxi_tools_finalize(void);
/* In a child forked while the runtime was up (core/init.c's atfork handler): tools go quiet and
 * px_profile_* calls return PX_ENOTINIT. Only stores; takes no lock. */
void pxi_tools_fork_child(void);
void pxi_tools_print_configuration(FILE *out);
/* Register an internal listener (valid until finalize); returns PX_OK or PX_ENOMEM. Call
 * between pxi_tools_initialize and pxi_tools_finalize, from the initializing thread. */
PX_NODISCARD int pxi_tools_add_listener(const pxi_tool_hooks *hooks);

/* Kokkos device id of a space: (device_type << 24) | (device_id << 17) | instance. */
uint32_t pxi_tools_device_id(const px_space *s);

/* Call points (only call when pxi_tools_active()). */
uint64_t pxi_tools_begin_parallel(px_kernel_kind kind, const char *label, const px_space *s);
void pxi_tools_end_parallel(px_kernel_kind kind, uint64_t kernel_id);
uint64_t pxi_tools_begin_fence(const char *label, const px_space *s);
void pxi_tools_end_fence(uint64_t fence_id);
void pxi_tools_allocate(const px_space *s, const char *label, const void *p, uint64_t bytes);
void pxi_tools_deallocate(const px_space *s, const char *label, const void *p, uint64_t bytes);
void pxi_tools_begin_deep_copy(const px_space *dst_s, const void *dst, const px_space *src_s,
                               const void *src, uint64_t bytes);
void pxi_tools_end_deep_copy(void);
void pxi_tools_push_region(const char *name);
void pxi_tools_pop_region(void);
/* An engine op starts / ends on the calling thread (core/engine/push.c). Loaded tools keep one
 * region stack per process, so only an op its pusher runs inside the push (@on_pusher) is a
 * region (pushed and popped on that thread, nested in whatever the thread has open, as Kokkos
 * pushes regions only from the launching thread); an op a worker runs is a profile section of
 * its own (created and started at begin, stopped and destroyed at end: sections may overlap).
 * Internal listeners keep per-thread stacks and see a region either way. @token carries the
 * section from begin to end. */
void pxi_tools_begin_engine_op(const char *name, int on_pusher, uint32_t *token);
void pxi_tools_end_engine_op(int on_pusher, uint32_t token);

#endif
