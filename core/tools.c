/* core/tools.c - the Kokkos Tools interface: loading kokkosp_* libraries, dispatching events to
 * them and to internal listeners (kernel timer, trace writer), and the px_profile_* API.
 *
 * ABI. The declarations below are our own, written against the published C interface of Kokkos
 * (Kokkos_Profiling_C_Interface.h, interface version 20240906). What matters for binary
 * compatibility, checked with _Static_assert where C allows:
 *   - SpaceHandle is a struct of char[64] passed BY VALUE (allocate/deallocate/deep_copy);
 *   - KokkosPDeviceInfo is { size_t deviceID; }, passed as an array pointer with a count;
 *   - ToolSettings is { bool requires_global_fencing; bool padding[255]; } passed by pointer;
 *   - ToolProgrammingInterface is { fence(uint32_t); 31 padding function pointers } passed BY
 *     VALUE (older Kokkos passed a pointer; 20240906 passes the 256-byte struct);
 *   - const qualifiers on by-value parameters do not change the ABI.
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
 * Kokkos). Sections get a process-wide table with one id per library.
 *
 * Memory. px_free does not know a block's size, yet tools subtract the size
 * kokkosp_deallocate_data reports; while a library listens to deallocations, the sizes of live
 * px_malloc blocks are kept in a table here and reported on free.
 *
 * Threads. Launches, fences, regions and allocations come from any thread (engine workers,
 * user threads). The library table and listener table are written only by
 * pxi_tools_initialize/finalize, which the lifecycle contract keeps apart from every launch, so
 * dispatch reads them without locks. Calls INTO loaded libraries are serialized by lib_lock:
 * Kokkos tools keep unsynchronized global state (kernel-timer's map, space-time-stack's tree)
 * because Kokkos launches mostly from one thread, while parex engine workers launch
 * concurrently. A thread already inside a library callback (a tool calling the fence action
 * we provide, which fires fence events) does not take the lock again. Internal listeners are
 * thread-safe themselves and run outside the lock.
 *
 * Libraries are not dlclose'd at finalize (Kokkos does not either): tools register atexit
 * handlers and start threads that must not outlive their code. A later px_initialize dlopens
 * them again (same handle) and calls kokkosp_init_library again. */
#include "core/tools.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/kernel_timer.h"
#include "core/log.h"
#include "core/registry.h"
#include "core/settings.h"
#include "parex/profiling.h"

/* ---- the Kokkos Tools C ABI (our declarations) ------------------------------------------- */

#define KP_INTERFACE_VERSION UINT64_C(20240906)
#define KP_SPACE_NAME_LEN    64

typedef struct kp_device_info {
    size_t deviceID;
} kp_device_info;

typedef struct kp_space_handle {
    char name[KP_SPACE_NAME_LEN];
} kp_space_handle;

typedef struct kp_tool_settings {
    bool requires_global_fencing;
    bool padding[255];
} kp_tool_settings;

typedef void (*kp_generic_fn)(void);
typedef void (*kp_fence_action_fn)(uint32_t);
typedef struct kp_tool_interface {
    kp_fence_action_fn fence;
    kp_generic_fn padding[31];
} kp_tool_interface;

_Static_assert(sizeof(kp_space_handle) == 64, "Kokkos SpaceHandle is char[64]");
_Static_assert(sizeof(kp_tool_settings) == 256, "Kokkos ToolSettings is 256 bools");
_Static_assert(sizeof(kp_tool_interface) == 32 * sizeof(kp_generic_fn),
               "Kokkos ToolProgrammingInterface is 32 function pointers");
_Static_assert(sizeof(kp_generic_fn) == sizeof(void *), "dlsym results fit a function pointer");

typedef void (*kp_init_fn)(int, uint64_t, uint32_t, kp_device_info *);
typedef void (*kp_void_fn)(void);
typedef void (*kp_begin_fn)(const char *, uint32_t, uint64_t *);
typedef void (*kp_end_fn)(uint64_t);
typedef void (*kp_name_fn)(const char *);
typedef void (*kp_alloc_fn)(kp_space_handle, const char *, const void *, uint64_t);
typedef void (*kp_begin_copy_fn)(kp_space_handle, const char *, const void *, kp_space_handle,
                                 const char *, const void *, uint64_t);
typedef void (*kp_create_section_fn)(const char *, uint32_t *);
typedef void (*kp_section_fn)(uint32_t);
typedef void (*kp_metadata_fn)(const char *, const char *);
typedef void (*kp_request_settings_fn)(uint32_t, kp_tool_settings *);
typedef void (*kp_provide_interface_fn)(uint32_t, kp_tool_interface);

/* The callbacks we resolve, in one table. The begin/end pairs are adjacent (begin even). */
enum {
    KP_BEGIN_FOR,
    KP_END_FOR,
    KP_BEGIN_REDUCE,
    KP_END_REDUCE,
    KP_BEGIN_SCAN,
    KP_END_SCAN,
    KP_BEGIN_FENCE,
    KP_END_FENCE,
    KP_PUSH_REGION,
    KP_POP_REGION,
    KP_ALLOCATE,
    KP_DEALLOCATE,
    KP_BEGIN_DEEP_COPY,
    KP_END_DEEP_COPY,
    KP_CREATE_SECTION,
    KP_DESTROY_SECTION,
    KP_START_SECTION,
    KP_STOP_SECTION,
    KP_INIT,
    KP_FINALIZE,
    KP_PROFILE_EVENT,
    KP_DECLARE_METADATA,
    KP_REQUEST_SETTINGS,
    KP_PROVIDE_INTERFACE,
    KP_COUNT
};
#define KP_FIRST_UNPAIRED KP_INIT

static const char *const kp_names[KP_COUNT] = {
    [KP_INIT] = "kokkosp_init_library",
    [KP_FINALIZE] = "kokkosp_finalize_library",
    [KP_BEGIN_FOR] = "kokkosp_begin_parallel_for",
    [KP_END_FOR] = "kokkosp_end_parallel_for",
    [KP_BEGIN_REDUCE] = "kokkosp_begin_parallel_reduce",
    [KP_END_REDUCE] = "kokkosp_end_parallel_reduce",
    [KP_BEGIN_SCAN] = "kokkosp_begin_parallel_scan",
    [KP_END_SCAN] = "kokkosp_end_parallel_scan",
    [KP_BEGIN_FENCE] = "kokkosp_begin_fence",
    [KP_END_FENCE] = "kokkosp_end_fence",
    [KP_PUSH_REGION] = "kokkosp_push_profile_region",
    [KP_POP_REGION] = "kokkosp_pop_profile_region",
    [KP_ALLOCATE] = "kokkosp_allocate_data",
    [KP_DEALLOCATE] = "kokkosp_deallocate_data",
    [KP_BEGIN_DEEP_COPY] = "kokkosp_begin_deep_copy",
    [KP_END_DEEP_COPY] = "kokkosp_end_deep_copy",
    [KP_CREATE_SECTION] = "kokkosp_create_profile_section",
    [KP_DESTROY_SECTION] = "kokkosp_destroy_profile_section",
    [KP_START_SECTION] = "kokkosp_start_profile_section",
    [KP_STOP_SECTION] = "kokkosp_stop_profile_section",
    [KP_PROFILE_EVENT] = "kokkosp_profile_event",
    [KP_DECLARE_METADATA] = "kokkosp_declare_metadata",
    [KP_REQUEST_SETTINGS] = "kokkosp_request_tool_settings",
    [KP_PROVIDE_INTERFACE] = "kokkosp_provide_tool_programming_interface",
};

/* At most this many libraries and internal listeners; more are refused with a warning. Eight
 * chained tools is far more than anyone runs (each one serializes and slows every launch). */
#define MAX_LIBS      8
#define MAX_LISTENERS 8
#define MAX_CONSUMERS (MAX_LIBS + MAX_LISTENERS)

typedef struct tool_lib {
    char *path;   /* owned */
    void *handle; /* from dlopen; never closed (see above) */
    kp_generic_fn fn[KP_COUNT];
    int n_found;
    int global_fencing; /* answer to kokkosp_request_tool_settings */
} tool_lib;

/* Written only by pxi_tools_initialize/finalize/add_listener on the initializing thread, before
 * any launch can read them (see the file comment). */
atomic_int pxi_tools_on;
static tool_lib libs[MAX_LIBS];
static int n_libs;
/* Bit i set when libs[i] defines the callback: dispatch skips the lock for events no library
 * listens to (a tool implementing only kernels costs nothing on regions or allocations). */
static unsigned lib_mask[KP_COUNT];
static pxi_tool_hooks listeners[MAX_LISTENERS];
static int n_listeners;
static px_space *device_spaces[8]; /* available spaces that are not host accessible */
static int n_device_spaces;
static int global_fencing; /* fence device spaces around launches (tool request) */
/* Set with release at the end of pxi_tools_initialize, cleared at finalize; the public
 * px_profile_* calls load it with acquire so they see the tables it publishes. */
static atomic_int tools_ready;

/* Serializes calls into loaded libraries (see the file comment). */
static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int in_lib_call;

static void lib_enter(void)
{
    if (in_lib_call++ == 0)
        pthread_mutex_lock(&lib_lock);
}

static void lib_leave(void)
{
    if (--in_lib_call == 0)
        pthread_mutex_unlock(&lib_lock);
}

#define LIB_FN(lib, idx, type) ((type)(lib)->fn[idx])

/* ---- per-thread id frames ----------------------------------------------------------------- */

/* One open kernel or fence of this thread: the id each consumer returned from its begin
 * callback. Consumers 0..n_libs-1 are libraries, MAX_LIBS.. are listeners. */
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

/* ---- device ids and space handles --------------------------------------------------------- */

/* Kokkos: 8 bits device type, 7 bits device id, 17 bits instance. Instance ids start at 1
 * (Kokkos reserves 0 for "all instances" of a device, its global-fence id). */
#define KP_INSTANCE_BITS      17
#define KP_DEVICE_BITS        7
#define KP_RESERVED_INSTANCES 1
#define KP_DEVICE_TYPE_CUDA   2

uint32_t pxi_tools_device_id(const px_space *s)
{
    /* NULL: every instance of the default space's device, Kokkos' id for a global fence. */
    int all = s == NULL;
    if (all)
        s = px_default_space();
    if (!s)
        return 0;
    uint32_t type = (uint32_t)s->ops->kokkos_device_type & 0xffu;
    uint32_t dev = 0;
    if (s->ops->kokkos_device_type == KP_DEVICE_TYPE_CUDA) {
        int d = pxi_config_get()->device_id;
        dev = d > 0 ? (uint32_t)d & ((1u << KP_DEVICE_BITS) - 1) : 0;
    }
    uint32_t inst =
        all ? 0
            : ((uint32_t)s->instance_id + KP_RESERVED_INSTANCES) & ((1u << KP_INSTANCE_BITS) - 1);
    return (type << 24) | (dev << KP_INSTANCE_BITS) | inst;
}

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
        for (int i = 0; i < n_libs; ++i) {
            int b = libs[i].fn[KP_BEGIN_FOR + 2 * k] != NULL;
            int e = libs[i].fn[KP_END_FOR + 2 * k] != NULL;
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
        lib_enter();
        LIB_FN(&libs[d], KP_BEGIN_FOR + 2 * k, kp_begin_fn)(label, dev, &id);
        lib_leave();
        return id;
    }
    id_frame *f = frame_push();
    if (!f)
        return NO_FRAME;
    if (lib_mask[KP_BEGIN_FOR + 2 * k]) {
        lib_enter();
        for (int i = 0; i < n_libs; ++i) {
            f->ids[i] = 0;
            kp_begin_fn fn = LIB_FN(&libs[i], KP_BEGIN_FOR + 2 * k, kp_begin_fn);
            if (fn)
                fn(label, dev, &f->ids[i]);
        }
        lib_leave();
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
        lib_enter();
        LIB_FN(&libs[d], KP_END_FOR + 2 * k, kp_end_fn)(id);
        lib_leave();
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
    if (lib_mask[KP_END_FOR + 2 * k]) {
        lib_enter();
        for (int i = n_libs - 1; i >= 0; --i) {
            kp_end_fn fn = LIB_FN(&libs[i], KP_END_FOR + 2 * k, kp_end_fn);
            if (fn)
                fn(f->ids[i]);
        }
        lib_leave();
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
    lib_enter();
    for (int i = 0; i < n_libs; ++i) {
        kp_alloc_fn fn = LIB_FN(&libs[i], which, kp_alloc_fn);
        if (fn)
            fn(h, label, p, bytes);
    }
    lib_leave();
}

void pxi_tools_allocate(const px_space *s, const char *label, const void *p, uint64_t bytes)
{
    if (lib_mask[KP_DEALLOCATE] && p)
        blocks_insert(p, bytes);
    if (lib_mask[KP_ALLOCATE])
        call_alloc(KP_ALLOCATE, s, label, p, bytes);
}

void pxi_tools_deallocate(const px_space *s, const char *label, const void *p, uint64_t bytes)
{
    if (!lib_mask[KP_DEALLOCATE])
        return;
    uint64_t known = p ? blocks_remove(p) : 0;
    call_alloc(KP_DEALLOCATE, s, label, p, bytes ? bytes : known);
}

void pxi_tools_begin_deep_copy(const px_space *dst_s, const void *dst, const px_space *src_s,
                               const void *src, uint64_t bytes)
{
    if (!lib_mask[KP_BEGIN_DEEP_COPY])
        return;
    /* Kokkos passes the views' labels; raw buffers have none, and tools print these. */
    kp_space_handle dh = space_handle(dst_s), sh = space_handle(src_s);
    lib_enter();
    for (int i = 0; i < n_libs; ++i) {
        kp_begin_copy_fn fn = LIB_FN(&libs[i], KP_BEGIN_DEEP_COPY, kp_begin_copy_fn);
        if (fn)
            fn(dh, "px_deep_copy_dst", dst, sh, "px_deep_copy_src", src, bytes);
    }
    lib_leave();
}

/* Call event @idx, taking (const char *name), in every library that has it, in load order. */
static void call_libs_name(int idx, const char *name)
{
    if (!lib_mask[idx])
        return;
    lib_enter();
    for (int i = 0; i < n_libs; ++i) {
        kp_name_fn fn = LIB_FN(&libs[i], idx, kp_name_fn);
        if (fn)
            fn(name);
    }
    lib_leave();
}

/* Call closing event @idx, taking no argument, in every library that has it, in reverse load
 * order (the last to open sees the close first). */
static void call_libs_void_reverse(int idx)
{
    if (!lib_mask[idx])
        return;
    lib_enter();
    for (int i = n_libs - 1; i >= 0; --i) {
        kp_void_fn fn = LIB_FN(&libs[i], idx, kp_void_fn);
        if (fn)
            fn();
    }
    lib_leave();
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

static void call_metadata(const char *key, const char *value)
{
    if (!lib_mask[KP_DECLARE_METADATA])
        return;
    lib_enter();
    for (int i = 0; i < n_libs; ++i) {
        kp_metadata_fn fn = LIB_FN(&libs[i], KP_DECLARE_METADATA, kp_metadata_fn);
        if (fn)
            fn(key, value);
    }
    lib_leave();
}

/* ---- sections ----------------------------------------------------------------------------- */

/* Section ids index this table; a destroyed slot is reused. Owned by section_lock. The
 * library callbacks run under lib_lock, taken inside section_lock (never the other way).
 * Destroyed slots form a LIFO free list threaded through next_free, and slots never used lie
 * at n_touched and above, so create and destroy take constant time (amortized over the
 * table's doubling) however many sections are live. */
#define NO_SECTION UINT32_MAX
typedef struct section {
    int used;
    uint32_t next_free; /* next destroyed slot when !used, else unused */
    uint32_t lib_ids[MAX_LIBS];
} section;

static pthread_mutex_t section_lock = PTHREAD_MUTEX_INITIALIZER;
static section *sections;
static uint32_t n_sections;             /* capacity of sections */
static uint32_t n_touched;              /* slots 0..n_touched-1 were handed out at least once */
static uint32_t free_head = NO_SECTION; /* most recently destroyed slot */

static void sections_free(void)
{
    pthread_mutex_lock(&section_lock);
    pxi_free(sections);
    sections = NULL;
    n_sections = 0;
    n_touched = 0;
    free_head = NO_SECTION;
    pthread_mutex_unlock(&section_lock);
}

/* A slot for a new section, or NO_SECTION when the table cannot grow. Caller holds
 * section_lock. */
static uint32_t section_take_slot(void)
{
    if (free_head != NO_SECTION) {
        uint32_t slot = free_head;
        free_head = sections[slot].next_free;
        return slot;
    }
    if (n_touched == n_sections) {
        if (n_sections >= NO_SECTION / 2)
            return NO_SECTION; /* ids are uint32_t and NO_SECTION is reserved */
        uint32_t nn = n_sections ? 2 * n_sections : 16;
        section *ns = pxi_calloc(nn, sizeof *ns);
        if (!ns)
            return NO_SECTION;
        if (n_sections)
            memcpy(ns, sections, n_sections * sizeof *ns);
        pxi_free(sections);
        sections = ns;
        n_sections = nn;
    }
    return n_touched++;
}

int px_profile_create_section(const char *name, uint32_t *id)
{
    if (!name || !id) {
        PXI_ERROR("px_profile_create_section: %s is NULL", !name ? "name" : "id");
        return PX_EFAULT;
    }
    if (!name[0]) {
        PXI_ERROR("px_profile_create_section: name is empty");
        return PX_EINVAL;
    }
    if (!atomic_load_explicit(&tools_ready, memory_order_acquire)) {
        PXI_ERROR("px_profile_create_section(\"%s\"): the runtime is not initialized", name);
        return PX_ENOTINIT;
    }
    pthread_mutex_lock(&section_lock);
    uint32_t slot = section_take_slot();
    if (slot == NO_SECTION) {
        pthread_mutex_unlock(&section_lock);
        PXI_ERROR("px_profile_create_section(\"%s\"): out of memory", name);
        return PX_ENOMEM;
    }
    section *sec = &sections[slot];
    memset(sec, 0, sizeof *sec);
    sec->used = 1;
    if (lib_mask[KP_CREATE_SECTION]) {
        lib_enter();
        for (int i = 0; i < n_libs; ++i) {
            kp_create_section_fn fn = LIB_FN(&libs[i], KP_CREATE_SECTION, kp_create_section_fn);
            if (fn)
                fn(name, &sec->lib_ids[i]);
        }
        lib_leave();
    }
    pthread_mutex_unlock(&section_lock);
    *id = slot;
    return PX_OK;
}

static int section_call(uint32_t id, int which, const char *caller)
{
    if (!atomic_load_explicit(&tools_ready, memory_order_acquire)) {
        PXI_ERROR("%s(%u): the runtime is not initialized", caller, (unsigned)id);
        return PX_ENOTINIT;
    }
    pthread_mutex_lock(&section_lock);
    if (id >= n_sections || !sections[id].used) {
        pthread_mutex_unlock(&section_lock);
        PXI_ERROR("%s(%u): no such section (never created, or destroyed)", caller, (unsigned)id);
        return PX_EINVAL;
    }
    if (lib_mask[which]) {
        lib_enter();
        for (int i = 0; i < n_libs; ++i) {
            kp_section_fn fn = LIB_FN(&libs[i], which, kp_section_fn);
            if (fn)
                fn(sections[id].lib_ids[i]);
        }
        lib_leave();
    }
    if (which == KP_DESTROY_SECTION) {
        sections[id].used = 0;
        sections[id].next_free = free_head;
        free_head = id;
    }
    pthread_mutex_unlock(&section_lock);
    return PX_OK;
}

int px_profile_start_section(uint32_t id)
{
    return section_call(id, KP_START_SECTION, "px_profile_start_section");
}

int px_profile_stop_section(uint32_t id)
{
    return section_call(id, KP_STOP_SECTION, "px_profile_stop_section");
}

int px_profile_destroy_section(uint32_t id)
{
    return section_call(id, KP_DESTROY_SECTION, "px_profile_destroy_section");
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
    if (!atomic_load_explicit(&tools_ready, memory_order_acquire)) {
        PXI_ERROR("px_profile_declare_metadata(\"%s\"): the runtime is not initialized", key);
        return PX_ENOTINIT;
    }
    call_metadata(key, value);
    return PX_OK;
}

void pxi_tools_fork_child(void)
{
    atomic_store_explicit(&tools_ready, 0, memory_order_relaxed);
    atomic_store_explicit(&pxi_tools_on, 0, memory_order_relaxed);
}

int px_profile_tool_count(void)
{
    return atomic_load_explicit(&tools_ready, memory_order_acquire) ? n_libs : 0;
}

/* The fence action handed to tools (ToolProgrammingInterface.fence). Kokkos fences every space
 * whatever the device id, with fence events; so do we. Tools call it from inside their
 * callbacks (the sampler does, in begin_parallel_*), possibly for a launch nested in a kernel:
 * a space whose kernel is running on this thread is skipped instead of logging px_fence's
 * EDEADLK (host spaces complete launches synchronously, so there is nothing to wait for). */
static void tool_invoked_fence(uint32_t dev_id)
{
    (void)dev_id;
    if (!atomic_load_explicit(&tools_ready, memory_order_acquire))
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

/* ---- loading ------------------------------------------------------------------------------ */

/* Report missing callbacks once per library, as one warning line: tools usually implement a
 * subset, and the line says which events the library will not see. A begin without its end (or
 * the reverse) gets its own warning (the tool sees unbalanced events), and a library with no
 * callback at all is probably the wrong file. */
static void report_missing(const tool_lib *lib)
{
    if (lib->n_found == 0) {
        PXI_WARN("tools: '%s' defines no kokkosp_* callback; it will see no events", lib->path);
        return;
    }
    char missing[1024];
    size_t len = 0;
    int n_missing = 0;
    missing[0] = '\0';
    for (int c = 0; c < KP_COUNT; ++c) {
        if (lib->fn[c])
            continue;
        ++n_missing;
        int w = snprintf(missing + len, sizeof missing - len, "%s%s", len ? ", " : "", kp_names[c]);
        if (w > 0 && (size_t)w < sizeof missing - len)
            len += (size_t)w;
    }
    for (int c = 0; c < KP_FIRST_UNPAIRED; c += 2) {
        if (!lib->fn[c] != !lib->fn[c + 1])
            PXI_WARN("tools: '%s' defines %s but not %s; it will see unbalanced events", lib->path,
                     kp_names[lib->fn[c] ? c : c + 1], kp_names[lib->fn[c] ? c + 1 : c]);
    }
    if (n_missing)
        PXI_WARN("tools: '%s' lacks %d of %d kokkosp_* callbacks; those events are skipped "
                 "for it: %s",
                 lib->path, n_missing, KP_COUNT, missing);
}

/* dlopen one library and resolve its callbacks into libs[n_libs]. A failure is a warning. */
static int load_one(const char *path)
{
    if (n_libs == MAX_LIBS) {
        PXI_WARN("tools: more than %d tool libraries; '%s' is not loaded", MAX_LIBS, path);
        return PX_OK;
    }
    /* RTLD_LOCAL: two chained tools define the same kokkosp_* names and must not interpose
     * each other's internal calls. RTLD_NOW: a tool with unresolved symbols fails here, with
     * a message, instead of at its first event. */
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *err = dlerror();
        PXI_WARN("tools: cannot load tool library '%s' (PX_TOOLS_LIBS / KOKKOS_TOOLS_LIBS): %s",
                 path, err ? err : "unknown error");
        return PX_OK;
    }
    for (int i = 0; i < n_libs; ++i) {
        if (libs[i].handle == h) {
            /* The same library object would see every event twice. */
            PXI_WARN("tools: '%s' is the same library as '%s' (listed twice); loaded once", path,
                     libs[i].path);
            dlclose(h); /* drops only the reference this dlopen added */
            return PX_OK;
        }
    }
    tool_lib *lib = &libs[n_libs];
    memset(lib, 0, sizeof *lib);
    lib->path = pxi_strdup(path);
    if (!lib->path) {
        PXI_ERROR("px_initialize: out of memory loading tool library '%s'", path);
        return PX_ENOMEM;
    }
    lib->handle = h;
    for (int c = 0; c < KP_COUNT; ++c) {
        void *sym = dlsym(h, kp_names[c]);
        if (sym) {
            memcpy(&lib->fn[c], &sym, sizeof sym);
            lib->n_found++;
        }
    }
    report_missing(lib);
    for (int c = 0; c < KP_COUNT; ++c)
        if (lib->fn[c])
            lib_mask[c] |= 1u << n_libs;
    n_libs++;
    return PX_OK;
}

/* Split the ';'-separated list; empty entries are skipped. */
static int load_list(const char *list)
{
    size_t n = strlen(list);
    char *buf = pxi_malloc(n + 1);
    if (!buf) {
        PXI_ERROR("px_initialize: out of memory reading the tool library list");
        return PX_ENOMEM;
    }
    memcpy(buf, list, n + 1);
    int rc = PX_OK;
    char *p = buf;
    while (rc == PX_OK && p) {
        char *semi = strchr(p, ';');
        if (semi)
            *semi = '\0';
        if (*p)
            rc = load_one(p);
        p = semi ? semi + 1 : NULL;
    }
    pxi_free(buf);
    return rc;
}

/* kokkosp_init_library, then request_tool_settings and provide_tool_programming_interface, in
 * Kokkos' order. devInfoCount/deviceInfo describe the available spaces by their device ids
 * (Kokkos passes 0 and NULL; tools do not rely on either). */
static void start_libraries(void)
{
    kp_device_info info[16];
    uint32_t n_info = 0;
    for (int i = 0; i < pxi_registry_count() && n_info < 16; ++i) {
        px_space *s = pxi_registry_at(i);
        if (s->available)
            info[n_info++].deviceID = pxi_tools_device_id(s);
    }
    kp_tool_interface tpi;
    memset(&tpi, 0, sizeof tpi);
    tpi.fence = tool_invoked_fence;
    lib_enter();
    for (int i = 0; i < n_libs; ++i) {
        tool_lib *lib = &libs[i];
        kp_init_fn init = LIB_FN(lib, KP_INIT, kp_init_fn);
        if (init)
            init(i, KP_INTERFACE_VERSION, n_info, n_info ? info : NULL);
        /* Kokkos presets requires_global_fencing = true: a tool that does not answer gets
         * fenced kernels, which is what a timer written before the setting expects. */
        kp_tool_settings settings;
        memset(&settings, 0, sizeof settings);
        settings.requires_global_fencing = true;
        kp_request_settings_fn req = LIB_FN(lib, KP_REQUEST_SETTINGS, kp_request_settings_fn);
        if (req)
            req(1, &settings);
        lib->global_fencing = settings.requires_global_fencing;
        kp_provide_interface_fn prov = LIB_FN(lib, KP_PROVIDE_INTERFACE, kp_provide_interface_fn);
        if (prov)
            prov(1, tpi);
    }
    lib_leave();
}

static void declare_runtime_metadata(void)
{
    call_metadata("parex_version", PX_VERSION_STRING);
    px_space *d = px_default_space();
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

/* kokkosp_finalize_library of every loaded library, in load order (the failure path of
 * initialize and finalize alike). */
static void finalize_libs(void)
{
    lib_enter();
    for (int i = 0; i < n_libs; ++i) {
        kp_void_fn fin = LIB_FN(&libs[i], KP_FINALIZE, kp_void_fn);
        if (fin)
            fin();
    }
    lib_leave();
}

static void reset_tables(void)
{
    for (int i = 0; i < n_libs; ++i)
        pxi_free(libs[i].path);
    memset(libs, 0, sizeof libs);
    memset(lib_mask, 0, sizeof lib_mask);
    n_libs = 0;
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
        rc = load_list(cfg->tools_libs);
    if (rc != PX_OK)
        goto fail;
    for (int i = 0; i < pxi_registry_count(); ++i) {
        px_space *s = pxi_registry_at(i);
        if (s->available && !s->ops->host_accessible &&
            n_device_spaces < (int)(sizeof device_spaces / sizeof device_spaces[0]))
            device_spaces[n_device_spaces++] = s;
    }
    if (n_libs) {
        start_libraries();
        for (int i = 0; i < n_libs; ++i)
            global_fencing |= libs[i].global_fencing;
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
    atomic_store_explicit(&pxi_tools_on, n_libs > 0 || n_listeners > 0, memory_order_release);
    atomic_store_explicit(&tools_ready, 1, memory_order_release);
    return PX_OK;

fail_timer:
    pxi_kernel_timer_stop(NULL);
fail_libs:
    finalize_libs();
fail:
    reset_tables();
    return rc;
}

void pxi_tools_finalize(void)
{
    if (!atomic_load_explicit(&tools_ready, memory_order_relaxed))
        return;
    atomic_store_explicit(&tools_ready, 0, memory_order_relaxed);
    atomic_store_explicit(&pxi_tools_on, 0, memory_order_relaxed);
    pxi_kernel_timer_stop(stdout);
    finalize_libs();
    sections_free();
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
    if (!n_libs)
        fprintf(out, "  libraries: none\n");
    for (int i = 0; i < n_libs; ++i)
        fprintf(out, "  library %d: %s (%d of %d callbacks%s)\n", i, libs[i].path, libs[i].n_found,
                KP_COUNT, libs[i].global_fencing && n_device_spaces ? ", global fencing" : "");
    fprintf(out, "  kernel timer: %s\n", pxi_config_get()->kernel_timer ? "on" : "off");
    fprintf(out, "  internal listeners: %d\n", n_listeners);
}
