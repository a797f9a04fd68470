/* core/tools.c - the Kokkos Tools interface: dispatching events to loaded kokkosp_* libraries
 * and to internal listeners (kernel timer, trace writer), the tools' lifecycle, and the
 * px_profile_* calls other than sections. Loading libraries is in core/tools_load.c, profile
 * sections in core/tools_sections.c, our declarations of the Kokkos Tools C ABI in
 * core/tools_load.h.
 *
 * Several libraries. Kokkos itself loads one library and chains more through kp_chained; we
 * chain directly: begin events go to libraries in list order, then to internal listeners; end
 * events go in reverse (listeners, then libraries from last to first), so every consumer's
 * interval nests inside the previous one's. Each consumer gets its own id slot: begin events
 * store the id each consumer returned in a thread-local frame, and the id handed to core
 * names that frame; end passes every consumer its own id back. Launches are synchronous for
 * the launching thread (begin, launch, end on one thread, nested LIFO), so a per-thread stack
 * of frames suffices. When exactly one library and no listener handles an event kind, its ids
 * pass through core unchanged and no frame is used (the common single-tool case, as in
 * Kokkos).
 *
 * Memory. px_free does not know a block's size, yet tools subtract the size
 * kokkosp_deallocate_data reports; while a library listens to deallocations, the sizes of live
 * px_malloc blocks are kept in a table here and reported on free.
 *
 * Threads. Launches, fences, regions and allocations come from any thread (engine workers,
 * user threads). The library table and listener table are written only by
 * pxi_tools_initialize/finalize, which the lifecycle contract keeps apart from every launch, so
 * dispatch reads them without locks. Calls INTO loaded libraries are serialized by one lock
 * (pxi_tool_lib_enter/leave, core/tools_load.c):
 * Kokkos tools keep unsynchronized global state (kernel-timer's map, space-time-stack's tree)
 * because Kokkos launches mostly from one thread, while parex engine workers launch
 * concurrently. A thread already inside a library callback (a tool calling the fence action
 * we provide, which fires fence events) does not take the lock again. Internal listeners are
 * thread-safe themselves and run outside the lock. */
#include "core/tools.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "core/kernel_timer.h"
#include "core/registry.h"
#include "core/settings.h"
#include "core/tools_load.h"
#include "core/tools_sections.h"
#include "parex/profiling.h"

/* Written only by pxi_tools_initialize/finalize/add_listener on the initializing thread, before
 * any launch can read them (see the file comment). */
atomic_int pxi_tools_on;
static pxi_tool_hooks listeners[MAX_LISTENERS];
static int n_listeners;
static px_space *device_spaces[8]; /* available spaces that are not host accessible */
static int n_device_spaces;
static int global_fencing; /* fence device spaces around launches (tool request) */
/* Set with release at the end of pxi_tools_initialize, cleared at finalize; the public
 * px_profile_* calls load it with acquire so they see the tables it publishes. */

/* ---- per-thread id frames ----------------------------------------------------------------- */

/* One open kernel or fence of this thread: the id each consumer returned from its begin
 * callback. Consumers 0..pxi_tool_n_libs-1 are libraries, MAX_LIBS.. are listeners. */
#define FRAME_DEPTH 32
#define NO_FRAME    UINT64_MAX
typedef struct id_frame {
    uint64_t token;
    uint64_t ids[MAX_CONSUMERS];
} id_frame;

static _Thread_local struct {
    unsigned depth;
    uint64_t seq;
    int overflow_warned;
    id_frame f[FRAME_DEPTH];
} frames;

/* Push a frame; its token encodes a per-thread sequence number and the depth, so an end that
 * does not match the innermost begin of this thread is caught. NULL when nested deeper than
 * FRAME_DEPTH: that launch is then not reported to tools (warned once per thread). */
static id_frame *frame_push(void)
{
    if (frames.depth >= FRAME_DEPTH) {
        if (!frames.overflow_warned) {
            frames.overflow_warned = 1;
            PXI_WARN("tools: launches nested deeper than %d levels on one thread are not "
                     "reported to tools",
                     FRAME_DEPTH);
        }
        return NULL;
    }
    id_frame *f = &frames.f[frames.depth];
    f->token = (++frames.seq << 8) | frames.depth;
    frames.depth++;
    return f;
}

static id_frame *frame_pop(uint64_t token, const char *what)
{
    if (token == NO_FRAME)
        return NULL;
    if (PX_NEVER(frames.depth == 0 || frames.f[frames.depth - 1].token != token)) {
        PXI_ERROR("tools: end of %s with id %llu does not match the innermost begin of this "
                  "thread; event dropped",
                  what, (unsigned long long)token);
        return NULL;
    }
    return &frames.f[--frames.depth];
}

/* ---- space handles -------------------------------------------------------------------------- */

/* Kokkos names memory spaces "Host", "Cuda", ...: tools such as memory-hwm key on them. Every
 * host-accessible parex space allocates host memory. */
static kp_space_handle space_handle(const px_space *s)
{
    kp_space_handle h;
    memset(&h, 0, sizeof h);
    if (!s || s->ops->host_accessible) {
        memcpy(h.name, "Host", 5);
        return h;
    }
    const char *n = s->ops->name;
    size_t len = strlen(n);
    if (len >= sizeof h.name)
        len = sizeof h.name - 1;
    memcpy(h.name, n, len);
    if (h.name[0] >= 'a' && h.name[0] <= 'z')
        h.name[0] = (char)(h.name[0] - 'a' + 'A');
    return h;
}

/* Fence spaces whose launches are asynchronous, for tools that asked for global fencing
 * (Kokkos fences around each kernel event then, so a timer measures the kernel, not its
 * enqueue). Host spaces complete launches before returning, so they are skipped. */
static void fence_devices(void)
{
    for (int i = 0; i < n_device_spaces; ++i)
        (void)device_spaces[i]->ops->fence();
}

/* ---- event dispatch ----------------------------------------------------------------------- */

/* Kernel kinds 0..2 (for, reduce, scan) and fences (3) share one dispatch: their callbacks sit
 * at KP_BEGIN_FOR + 2 * k and KP_END_FOR + 2 * k. */
#define EV_FENCE      3
#define N_EVENT_KINDS 4

/* Per event kind, set at initialize: the index of the only consumer when exactly one library
 * and no listener handles both begin and end (then its ids pass through core unchanged, with
 * no frame, as in Kokkos), else -1. none_for[k]: no consumer at all. */
static int direct_lib[N_EVENT_KINDS];
static int no_consumer[N_EVENT_KINDS];

static const char *const default_labels[N_EVENT_KINDS] = {
    "px_parallel_for_fn", "px_parallel_reduce_fn", "px_parallel_scan_fn", "px_fence"};

typedef void (*hook_begin_fn)(const char *, uint32_t, uint64_t *);
typedef void (*hook_end_fn)(uint64_t);

static hook_begin_fn listener_begin(const pxi_tool_hooks *h, int k)
{
    return k == 0   ? h->begin_parallel_for
           : k == 1 ? h->begin_parallel_reduce
           : k == 2 ? h->begin_parallel_scan
                    : h->begin_fence;
}

static hook_end_fn listener_end(const pxi_tool_hooks *h, int k)
{
    return k == 0   ? h->end_parallel_for
           : k == 1 ? h->end_parallel_reduce
           : k == 2 ? h->end_parallel_scan
                    : h->end_fence;
}

/* Decide direct_lib and no_consumer from the tables (after loading and listener changes). */
static void plan_dispatch(void)
{
    for (int k = 0; k < N_EVENT_KINDS; ++k) {
        int consumers = 0, only = -1, paired = 1;
        for (int i = 0; i < pxi_tool_n_libs; ++i) {
            int b = pxi_tool_libs[i].fn[KP_BEGIN_FOR + 2 * k] != NULL;
            int e = pxi_tool_libs[i].fn[KP_END_FOR + 2 * k] != NULL;
            if (b || e) {
                ++consumers;
                only = i;
                paired = b && e;
            }
        }
        for (int j = 0; j < n_listeners; ++j)
            if (listener_begin(&listeners[j], k) || listener_end(&listeners[j], k))
                consumers += 2; /* listeners always go through frames */
        no_consumer[k] = consumers == 0;
        direct_lib[k] = consumers == 1 && paired ? only : -1;
    }
}

static uint64_t begin_event(int k, const char *label, const px_space *s)
{
    if (no_consumer[k])
        return NO_FRAME;
    if (!label || !label[0])
        label = default_labels[k];
    uint32_t dev = pxi_tools_device_id(s);
    if (global_fencing && k != EV_FENCE)
        fence_devices();
    int d = direct_lib[k];
    if (d >= 0) {
        uint64_t id = 0;
        pxi_tool_lib_enter();
        LIB_FN(&pxi_tool_libs[d], KP_BEGIN_FOR + 2 * k, kp_begin_fn)(label, dev, &id);
        pxi_tool_lib_leave();
        return id;
    }
    id_frame *f = frame_push();
    if (!f)
        return NO_FRAME;
    if (pxi_tool_lib_mask[KP_BEGIN_FOR + 2 * k]) {
        pxi_tool_lib_enter();
        for (int i = 0; i < pxi_tool_n_libs; ++i) {
            f->ids[i] = 0;
            kp_begin_fn fn = LIB_FN(&pxi_tool_libs[i], KP_BEGIN_FOR + 2 * k, kp_begin_fn);
            if (fn)
                fn(label, dev, &f->ids[i]);
        }
        pxi_tool_lib_leave();
    }
    for (int j = 0; j < n_listeners; ++j) {
        hook_begin_fn fn = listener_begin(&listeners[j], k);
        f->ids[MAX_LIBS + j] = 0;
        if (fn)
            fn(label, dev, &f->ids[MAX_LIBS + j]);
    }
    return f->token;
}

static void end_event(int k, uint64_t id)
{
    if (no_consumer[k])
        return;
    if (global_fencing && k != EV_FENCE)
        fence_devices();
    int d = direct_lib[k];
    if (d >= 0) {
        pxi_tool_lib_enter();
        LIB_FN(&pxi_tool_libs[d], KP_END_FOR + 2 * k, kp_end_fn)(id);
        pxi_tool_lib_leave();
        return;
    }
    id_frame *f = frame_pop(id, k == EV_FENCE ? "a fence" : "a parallel launch");
    if (!f)
        return;
    for (int j = n_listeners - 1; j >= 0; --j) {
        hook_end_fn fn = listener_end(&listeners[j], k);
        if (fn)
            fn(f->ids[MAX_LIBS + j]);
    }
    if (pxi_tool_lib_mask[KP_END_FOR + 2 * k]) {
        pxi_tool_lib_enter();
        for (int i = pxi_tool_n_libs - 1; i >= 0; --i) {
            kp_end_fn fn = LIB_FN(&pxi_tool_libs[i], KP_END_FOR + 2 * k, kp_end_fn);
            if (fn)
                fn(f->ids[i]);
        }
        pxi_tool_lib_leave();
    }
}

uint64_t pxi_tools_begin_parallel(px_kernel_kind kind, const char *label, const px_space *s)
{
    if (PX_NEVER(kind < PX_KERNEL_FOR || kind > PX_KERNEL_SCAN))
        return NO_FRAME;
    return begin_event((int)kind - 1, label, s);
}

void pxi_tools_end_parallel(px_kernel_kind kind, uint64_t kernel_id)
{
    if (PX_NEVER(kind < PX_KERNEL_FOR || kind > PX_KERNEL_SCAN))
        return;
    end_event((int)kind - 1, kernel_id);
}

uint64_t pxi_tools_begin_fence(const char *label, const px_space *s)
{
    return begin_event(EV_FENCE, label, s);
}

void pxi_tools_end_fence(uint64_t fence_id)
{
    end_event(EV_FENCE, fence_id);
}

/* Sizes of live px_malloc blocks, kept only while a library listens to deallocations: core's
 * px_free does not know a block's size, and tools such as memory-usage subtract the size
 * kokkosp_deallocate_data reports. Open addressing with linear probing and backward-shift
 * deletion, keyed by address. Owned by size_lock. */
typedef struct live_block {
    const void *p;
    uint64_t bytes;
} live_block;

static pthread_mutex_t size_lock = PTHREAD_MUTEX_INITIALIZER;
static live_block *blocks;
static size_t n_block_slots, n_blocks;

static size_t block_home(const void *p, size_t mask)
{
    return (size_t)(((uint64_t)(uintptr_t)p >> 4) * UINT64_C(0x9e3779b97f4a7c15) >> 20) & mask;
}

/* Double the table (or create it); called with size_lock held. 0 on ENOMEM. */
static int blocks_grow(void)
{
    size_t ns = n_block_slots ? 2 * n_block_slots : 256;
    live_block *nb = pxi_calloc(ns, sizeof *nb);
    if (!nb)
        return 0;
    for (size_t i = 0; i < n_block_slots; ++i) {
        if (!blocks[i].p)
            continue;
        size_t j = block_home(blocks[i].p, ns - 1);
        while (nb[j].p)
            j = (j + 1) & (ns - 1);
        nb[j] = blocks[i];
    }
    pxi_free(blocks);
    blocks = nb;
    n_block_slots = ns;
    return 1;
}

/* Remember a block's size. Out of memory only loses the size (deallocate then reports 0). */
static void blocks_insert(const void *p, uint64_t bytes)
{
    pthread_mutex_lock(&size_lock);
    if ((n_blocks + 1) * 2 > n_block_slots && !blocks_grow()) {
        pthread_mutex_unlock(&size_lock);
        return;
    }
    size_t mask = n_block_slots - 1, j = block_home(p, mask);
    while (blocks[j].p && blocks[j].p != p)
        j = (j + 1) & mask;
    if (!blocks[j].p)
        ++n_blocks;
    blocks[j] = (live_block){p, bytes};
    pthread_mutex_unlock(&size_lock);
}

/* Forget a block; returns its size, or 0 when unknown. */
static uint64_t blocks_remove(const void *p)
{
    uint64_t bytes = 0;
    pthread_mutex_lock(&size_lock);
    if (n_block_slots) {
        size_t mask = n_block_slots - 1, i = block_home(p, mask);
        while (blocks[i].p && blocks[i].p != p)
            i = (i + 1) & mask;
        if (blocks[i].p) {
            bytes = blocks[i].bytes;
            --n_blocks;
            /* Backward shift: move up every later entry of the probe run that may fill the hole
             * (its home is not cyclically within (hole, its slot]). */
            for (size_t j = (i + 1) & mask; blocks[j].p; j = (j + 1) & mask) {
                size_t k = block_home(blocks[j].p, mask);
                int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
                if (!stays) {
                    blocks[i] = blocks[j];
                    i = j;
                }
            }
            blocks[i] = (live_block){NULL, 0};
        }
    }
    pthread_mutex_unlock(&size_lock);
    return bytes;
}

static void blocks_free(void)
{
    pthread_mutex_lock(&size_lock);
    pxi_free(blocks);
    blocks = NULL;
    n_block_slots = n_blocks = 0;
    pthread_mutex_unlock(&size_lock);
}

static void call_alloc(int which, const px_space *s, const char *label, const void *p,
                       uint64_t bytes)
{
    if (!label || !label[0])
        label = "px_malloc";
    kp_space_handle h = space_handle(s);
    pxi_tool_lib_enter();
    for (int i = 0; i < pxi_tool_n_libs; ++i) {
        kp_alloc_fn fn = LIB_FN(&pxi_tool_libs[i], which, kp_alloc_fn);
        if (fn)
            fn(h, label, p, bytes);
    }
    pxi_tool_lib_leave();
}

void pxi_tools_allocate(const px_space *s, const char *label, const void *p, uint64_t bytes)
{
    if (pxi_tool_lib_mask[KP_DEALLOCATE] && p)
        blocks_insert(p, bytes);
    if (pxi_tool_lib_mask[KP_ALLOCATE])
        call_alloc(KP_ALLOCATE, s, label, p, bytes);
}

void pxi_tools_deallocate(const px_space *s, const char *label, const void *p, uint64_t bytes)
{
    if (!pxi_tool_lib_mask[KP_DEALLOCATE])
        return;
    uint64_t known = p ? blocks_remove(p) : 0;
    call_alloc(KP_DEALLOCATE, s, label, p, bytes ? bytes : known);
}

void pxi_tools_begin_deep_copy(const px_space *dst_s, const void *dst, const px_space *src_s,
                               const void *src, uint64_t bytes)
{
    if (!pxi_tool_lib_mask[KP_BEGIN_DEEP_COPY])
        return;
    /* Kokkos passes the views' labels; raw buffers have none, and tools print these. */
    kp_space_handle dh = space_handle(dst_s), sh = space_handle(src_s);
    pxi_tool_lib_enter();
    for (int i = 0; i < pxi_tool_n_libs; ++i) {
        kp_begin_copy_fn fn = LIB_FN(&pxi_tool_libs[i], KP_BEGIN_DEEP_COPY, kp_begin_copy_fn);
        if (fn)
            fn(dh, "px_deep_copy_dst", dst, sh, "px_deep_copy_src", src, bytes);
    }
    pxi_tool_lib_leave();
}

/* Call event @idx, taking (const char *name), in every library that has it, in load order. */
static void call_libs_name(int idx, const char *name)
{
    if (!pxi_tool_lib_mask[idx])
        return;
    pxi_tool_lib_enter();
    for (int i = 0; i < pxi_tool_n_libs; ++i) {
        kp_name_fn fn = LIB_FN(&pxi_tool_libs[i], idx, kp_name_fn);
        if (fn)
            fn(name);
    }
    pxi_tool_lib_leave();
}

/* Call closing event @idx, taking no argument, in every library that has it, in reverse load
 * order (the last to open sees the close first). */
static void call_libs_void_reverse(int idx)
{
    if (!pxi_tool_lib_mask[idx])
        return;
    pxi_tool_lib_enter();
    for (int i = pxi_tool_n_libs - 1; i >= 0; --i) {
        kp_void_fn fn = LIB_FN(&pxi_tool_libs[i], idx, kp_void_fn);
        if (fn)
            fn();
    }
    pxi_tool_lib_leave();
}

void pxi_tools_end_deep_copy(void)
{
    call_libs_void_reverse(KP_END_DEEP_COPY);
}

void pxi_tools_push_region(const char *name)
{
    if (!name || !name[0])
        name = "px_unnamed_region";
    call_libs_name(KP_PUSH_REGION, name);
    for (int j = 0; j < n_listeners; ++j)
        if (listeners[j].push_region)
            listeners[j].push_region(name);
}

void pxi_tools_pop_region(void)
{
    for (int j = n_listeners - 1; j >= 0; --j)
        if (listeners[j].pop_region)
            listeners[j].pop_region();
    call_libs_void_reverse(KP_POP_REGION);
}

#define NO_ENGINE_SECTION UINT32_MAX

void pxi_tools_begin_engine_op(const char *name, int on_pusher, uint32_t *token)
{
    *token = NO_ENGINE_SECTION;
    if (on_pusher) {
        pxi_tools_push_region(name);
        return;
    }
    /* A tool without section callbacks does not see worker ops at all: better than regions
     * popped by threads that did not push them (its stack would nest unrelated ops). */
    if (pxi_tool_lib_mask[KP_CREATE_SECTION] || pxi_tool_lib_mask[KP_START_SECTION]) {
        uint32_t id;
        if (px_profile_create_section(name, &id) == PX_OK) {
            (void)px_profile_start_section(id);
            *token = id;
        }
    }
    for (int j = 0; j < n_listeners; ++j)
        if (listeners[j].push_region)
            listeners[j].push_region(name);
}

void pxi_tools_end_engine_op(int on_pusher, uint32_t token)
{
    if (on_pusher) {
        pxi_tools_pop_region();
        return;
    }
    for (int j = n_listeners - 1; j >= 0; --j)
        if (listeners[j].pop_region)
            listeners[j].pop_region();
    if (token != NO_ENGINE_SECTION) {
        (void)px_profile_stop_section(token);
        (void)px_profile_destroy_section(token);
    }
}

static void call_metadata(const char *key, const char *value)
{
    if (!pxi_tool_lib_mask[KP_DECLARE_METADATA])
        return;
    pxi_tool_lib_enter();
    for (int i = 0; i < pxi_tool_n_libs; ++i) {
        kp_metadata_fn fn = LIB_FN(&pxi_tool_libs[i], KP_DECLARE_METADATA, kp_metadata_fn);
        if (fn)
            fn(key, value);
    }
    pxi_tool_lib_leave();
}

/* ---- the other public calls --------------------------------------------------------------- */

void px_profile_push_region(const char *name)
{
    if (pxi_tools_active())
        pxi_tools_push_region(name);
}

void px_profile_pop_region(void)
{
    if (pxi_tools_active())
        pxi_tools_pop_region();
}

int px_profile_mark_event(const char *name)
{
    if (!name) {
        PXI_ERROR("px_profile_mark_event: name is NULL");
        return PX_EFAULT;
    }
    if (pxi_tools_active())
        call_libs_name(KP_PROFILE_EVENT, name);
    return PX_OK;
}

int px_profile_declare_metadata(const char *key, const char *value)
{
    if (!key || !value) {
        PXI_ERROR("px_profile_declare_metadata: %s is NULL", !key ? "key" : "value");
        return PX_EFAULT;
    }
    if (!atomic_load_explicit(&pxi_tools_ready_flag, memory_order_acquire)) {
        PXI_ERROR("px_profile_declare_metadata(\"%s\"): the runtime is not initialized", key);
        return PX_ENOTINIT;
    }
    call_metadata(key, value);
    return PX_OK;
}

void pxi_tools_fork_child(void)
{
    atomic_store_explicit(&pxi_tools_ready_flag, 0, memory_order_relaxed);
    atomic_store_explicit(&pxi_tools_on, 0, memory_order_relaxed);
}

int px_profile_tool_count(void)
{
    return atomic_load_explicit(&pxi_tools_ready_flag, memory_order_acquire) ? pxi_tool_n_libs : 0;
}

/* The fence action handed to tools (ToolProgrammingInterface.fence). Kokkos fences every space
 * whatever the device id, with fence events; so do we. Tools call it from inside their
 * callbacks (the sampler does, in begin_parallel_*), possibly for a launch nested in a kernel:
 * a space whose kernel is running on this thread is skipped instead of logging px_fence's
 * EDEADLK (host spaces complete launches synchronously, so there is nothing to wait for). */
static void tool_invoked_fence(uint32_t dev_id)
{
    (void)dev_id;
    if (!atomic_load_explicit(&pxi_tools_ready_flag, memory_order_acquire))
        return;
    for (int i = 0; i < pxi_registry_count(); ++i) {
        px_space *s = pxi_registry_at(i);
        if (!s->available || (s->ops->in_kernel && s->ops->in_kernel()))
            continue;
        uint64_t id = begin_event(EV_FENCE, "px_tool_invoked_fence", s);
        (void)s->ops->fence();
        end_event(EV_FENCE, id);
    }
}

static void declare_runtime_metadata(void)
{
    call_metadata("parex_version", PX_VERSION_STRING);
    px_space *d = pxi_registry_default();
    call_metadata("parex_default_space", d ? d->ops->name : "(none)");
    for (int i = 0; i < pxi_registry_count(); ++i) {
        px_space *s = pxi_registry_at(i);
        if (!s->available)
            continue;
        char key[96], value[32];
        snprintf(key, sizeof key, "parex_%s_concurrency", s->ops->name);
        snprintf(value, sizeof value, "%d", s->ops->concurrency());
        call_metadata(key, value);
    }
}

static void reset_tables(void)
{
    pxi_tools_libs_reset();
    memset(listeners, 0, sizeof listeners);
    n_listeners = 0;
    n_device_spaces = 0;
    global_fencing = 0;
    plan_dispatch();
}

int pxi_tools_initialize(void)
{
    const pxi_config *cfg = pxi_config_get();
    reset_tables();
    int rc = PX_OK;
    if (cfg->tools_libs && cfg->tools_libs[0])
        rc = pxi_tools_load_list(cfg->tools_libs);
    if (rc != PX_OK)
        goto fail;
    for (int i = 0; i < pxi_registry_count(); ++i) {
        px_space *s = pxi_registry_at(i);
        if (s->available && !s->ops->host_accessible &&
            n_device_spaces < (int)(sizeof device_spaces / sizeof device_spaces[0]))
            device_spaces[n_device_spaces++] = s;
    }
    if (pxi_tool_n_libs) {
        pxi_tools_start_libs(tool_invoked_fence);
        for (int i = 0; i < pxi_tool_n_libs; ++i)
            global_fencing |= pxi_tool_libs[i].global_fencing;
        declare_runtime_metadata();
    }
    if (cfg->kernel_timer) {
        rc = pxi_kernel_timer_start();
        if (rc != PX_OK)
            goto fail_libs;
        /* The timer must time kernels, not their enqueue on an asynchronous space. */
        global_fencing = 1;
        rc = pxi_tools_add_listener(pxi_kernel_timer_hooks());
        if (rc != PX_OK)
            goto fail_timer;
    }
    if (!n_device_spaces)
        global_fencing = 0;
    plan_dispatch();
    /* Release: a thread that acquires tools_ready (px_profile_* calls) sees the tables. The
     * hot path reads pxi_tools_on relaxed; launches racing initialize are not allowed. */
    atomic_store_explicit(&pxi_tools_on, pxi_tool_n_libs > 0 || n_listeners > 0,
                          memory_order_release);
    atomic_store_explicit(&pxi_tools_ready_flag, 1, memory_order_release);
    return PX_OK;

fail_timer:
    pxi_kernel_timer_stop(NULL);
fail_libs:
    pxi_tools_finalize_libs();
fail:
    reset_tables();
    return rc;
}

void pxi_tools_finalize(void)
{
    if (!atomic_load_explicit(&pxi_tools_ready_flag, memory_order_relaxed))
        return;
    atomic_store_explicit(&pxi_tools_ready_flag, 0, memory_order_relaxed);
    atomic_store_explicit(&pxi_tools_on, 0, memory_order_relaxed);
    pxi_kernel_timer_stop(stdout);
    pxi_tools_finalize_libs();
    pxi_tools_sections_free();
    blocks_free();
    reset_tables();
}

int pxi_tools_add_listener(const pxi_tool_hooks *hooks)
{
    if (PX_NEVER(!hooks))
        return PX_EINVAL;
    if (n_listeners == MAX_LISTENERS) {
        PXI_ERROR("tools: more than %d internal listeners", MAX_LISTENERS);
        return PX_ENOMEM;
    }
    listeners[n_listeners++] = *hooks;
    plan_dispatch();
    atomic_store_explicit(&pxi_tools_on, 1, memory_order_release);
    return PX_OK;
}

void pxi_tools_print_configuration(FILE *out)
{
    if (!out)
        out = stdout;
    fprintf(out, "tools (Kokkos Tools interface %llu):\n",
            (unsigned long long)KP_INTERFACE_VERSION);
    if (!pxi_tool_n_libs)
        fprintf(out, "  libraries: none\n");
    for (int i = 0; i < pxi_tool_n_libs; ++i)
        fprintf(out, "  library %d: %s (%d of %d callbacks%s)\n", i, pxi_tool_libs[i].path,
                pxi_tool_libs[i].n_found, KP_COUNT,
                pxi_tool_libs[i].global_fencing && n_device_spaces ? ", global fencing" : "");
    fprintf(out, "  kernel timer: %s\n", pxi_config_get()->kernel_timer ? "on" : "off");
    fprintf(out, "  internal listeners: %d\n", n_listeners);
}
