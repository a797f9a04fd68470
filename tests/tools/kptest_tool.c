/* tests/tools/kptest_tool.c - a Kokkos Tools library that records every callback it receives.
 *
 * Written the way a third-party tool is: the exact published kokkosp_* prototypes (Kokkos
 * Tools C interface, version 20240906), its own declarations of the interface structs, and no
 * parex header. Built three ways (tests/tools.cmake):
 *   kptest_tool          every callback;                ids start at 1000
 *   kptest_partial_tool  KPT_PARTIAL: a subset, with begin_fence but no end_fence (a broken
 *                        pair parex must warn about);   ids start at 500000
 *   kptest_empty_tool    KPT_EMPTY: no kokkosp_* symbol at all.
 * The tool checks the protocol itself (names non-empty, every end id was returned by a begin
 * and is ended once, regions balanced) and counts violations in state.errors. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kptest.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT const kpt_state *kptest_state(void);
EXPORT void kptest_reset(void);

static kpt_state state;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t open_ids[KPT_MAX_OPEN];
#ifndef KPT_EMPTY
/* The thread that pushed each open region (per process, like the tools' own stacks). */
static __attribute__((unused)) pthread_t region_owner[KPT_MAX_OPEN];
/* Sections now between start and stop. */
static __attribute__((unused)) uint32_t running_sections[KPT_MAX_OPEN];
static int n_running_sections;
#endif

const kpt_state *kptest_state(void)
{
    return &state;
}

void kptest_reset(void)
{
    pthread_mutex_lock(&lock);
    memset(&state, 0, sizeof state);
    memset(open_ids, 0, sizeof open_ids);
#ifndef KPT_EMPTY
    n_running_sections = 0;
#endif
    pthread_mutex_unlock(&lock);
}

#ifndef KPT_EMPTY

#ifdef KPT_PARTIAL
#define ID_BASE 500000u
#else
#define ID_BASE 1000u
#endif
static uint64_t next_id = ID_BASE;
static atomic_int inside;

/* Enter/leave a callback: detect callbacks running concurrently (parex serializes them). */
static void enter(void)
{
    int now = atomic_fetch_add_explicit(&inside, 1, memory_order_acq_rel) + 1;
    pthread_mutex_lock(&lock);
    if (now > state.max_inside)
        state.max_inside = now;
}

static void leave(void)
{
    pthread_mutex_unlock(&lock);
    atomic_fetch_sub_explicit(&inside, 1, memory_order_acq_rel);
}

static void tool_error(const char *what)
{
    if (state.errors++ == 0)
        snprintf(state.first_error, sizeof state.first_error, "%s", what);
}

static void copy_name(char dst[64], const char *src)
{
    if (!src) {
        dst[0] = '\0';
        return;
    }
    snprintf(dst, 64, "%s", src);
}

static kpt_event *record(int kind, const char *name)
{
    state.count[kind]++;
    if (state.n_events >= KPT_MAX_EVENTS)
        return NULL;
    kpt_event *e = &state.events[state.n_events++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    copy_name(e->name, name);
    return e;
}

static void begin(int kind, const char *name, uint32_t dev, uint64_t *id)
{
    enter();
    if (!name || !name[0])
        tool_error("empty kernel or fence name");
    if (!id) {
        tool_error("begin without id pointer");
    } else {
        *id = next_id++;
        int placed = 0;
        for (int i = 0; i < KPT_MAX_OPEN && !placed; ++i)
            if (open_ids[i] == 0) {
                open_ids[i] = *id;
                placed = 1;
            }
        if (!placed)
            tool_error("too many open ids");
        state.open_ids++;
    }
    kpt_event *e = record(kind, name);
    if (e) {
        e->dev_id = dev;
        e->id = id ? *id : 0;
    }
    leave();
}

static void end(int kind, uint64_t id)
{
    enter();
    int found = 0;
    for (int i = 0; i < KPT_MAX_OPEN && !found; ++i)
        if (open_ids[i] == id && id != 0) {
            open_ids[i] = 0;
            found = 1;
        }
    if (!found)
        tool_error("end with an id no begin returned (or ended twice)");
    else
        state.open_ids--;
    kpt_event *e = record(kind, NULL);
    if (e)
        e->id = id;
    leave();
}

/* ---- the Kokkos Tools C interface, as a tool declares it ---- */

struct Kokkos_Profiling_KokkosPDeviceInfo {
    size_t deviceID;
};

struct Kokkos_Profiling_SpaceHandle {
    char name[64];
};

struct Kokkos_Tools_ToolSettings {
    bool requires_global_fencing;
    bool padding[255];
};

typedef void (*Kokkos_Tools_functionPointer)(void);
struct Kokkos_Tools_ToolProgrammingInterface {
    void (*fence)(const uint32_t);
    Kokkos_Tools_functionPointer padding[31];
};

EXPORT void kokkosp_init_library(const int loadSeq, const uint64_t interfaceVer,
                                 const uint32_t devInfoCount,
                                 struct Kokkos_Profiling_KokkosPDeviceInfo *deviceInfo);
EXPORT void kokkosp_finalize_library(void);
EXPORT void kokkosp_begin_parallel_for(const char *name, const uint32_t devID, uint64_t *kID);
EXPORT void kokkosp_end_parallel_for(const uint64_t kID);
EXPORT void kokkosp_begin_parallel_reduce(const char *name, const uint32_t devID, uint64_t *kID);
EXPORT void kokkosp_end_parallel_reduce(const uint64_t kID);
EXPORT void kokkosp_begin_parallel_scan(const char *name, const uint32_t devID, uint64_t *kID);
EXPORT void kokkosp_end_parallel_scan(const uint64_t kID);
EXPORT void kokkosp_begin_fence(const char *name, const uint32_t devID, uint64_t *handle);
EXPORT void kokkosp_profile_event(const char *name);

void kokkosp_init_library(const int loadSeq, const uint64_t interfaceVer,
                          const uint32_t devInfoCount,
                          struct Kokkos_Profiling_KokkosPDeviceInfo *deviceInfo)
{
    enter();
    state.init_calls++;
    state.load_seq = loadSeq;
    state.interface_version = interfaceVer;
    state.dev_info_count = devInfoCount;
    for (uint32_t i = 0; i < devInfoCount && i < 16 && deviceInfo; ++i)
        state.dev_ids[i] = deviceInfo[i].deviceID;
    leave();
}

void kokkosp_finalize_library(void)
{
    enter();
    state.finalize_calls++;
    if (state.open_ids != 0)
        tool_error("finalize with kernels or fences still open");
    leave();
}

void kokkosp_begin_parallel_for(const char *name, const uint32_t devID, uint64_t *kID)
{
    begin(KPT_BEGIN_FOR, name, devID, kID);
}
void kokkosp_end_parallel_for(const uint64_t kID)
{
    end(KPT_END_FOR, kID);
}
void kokkosp_begin_parallel_reduce(const char *name, const uint32_t devID, uint64_t *kID)
{
    begin(KPT_BEGIN_REDUCE, name, devID, kID);
}
void kokkosp_end_parallel_reduce(const uint64_t kID)
{
    end(KPT_END_REDUCE, kID);
}
void kokkosp_begin_parallel_scan(const char *name, const uint32_t devID, uint64_t *kID)
{
    begin(KPT_BEGIN_SCAN, name, devID, kID);
}
void kokkosp_end_parallel_scan(const uint64_t kID)
{
    end(KPT_END_SCAN, kID);
}
void kokkosp_begin_fence(const char *name, const uint32_t devID, uint64_t *handle)
{
    begin(KPT_BEGIN_FENCE, name, devID, handle);
}
void kokkosp_profile_event(const char *name)
{
    enter();
    if (!name)
        tool_error("NULL event name");
    record(KPT_PROFILE_EVENT, name);
    leave();
}

#ifndef KPT_PARTIAL
EXPORT void kokkosp_end_fence(const uint64_t handle);
EXPORT void kokkosp_push_profile_region(const char *regionName);
EXPORT void kokkosp_pop_profile_region(void);
EXPORT void kokkosp_allocate_data(const struct Kokkos_Profiling_SpaceHandle space,
                                  const char *label, const void *const ptr, const uint64_t size);
EXPORT void kokkosp_deallocate_data(const struct Kokkos_Profiling_SpaceHandle space,
                                    const char *label, const void *const ptr, const uint64_t size);
EXPORT void kokkosp_begin_deep_copy(struct Kokkos_Profiling_SpaceHandle dst_handle,
                                    const char *dst_name, const void *dst_ptr,
                                    struct Kokkos_Profiling_SpaceHandle src_handle,
                                    const char *src_name, const void *src_ptr, uint64_t size);
EXPORT void kokkosp_end_deep_copy(void);
EXPORT void kokkosp_create_profile_section(const char *name, uint32_t *sec_id);
EXPORT void kokkosp_start_profile_section(const uint32_t sec_id);
EXPORT void kokkosp_stop_profile_section(const uint32_t sec_id);
EXPORT void kokkosp_destroy_profile_section(const uint32_t sec_id);
EXPORT void kokkosp_declare_metadata(const char *key, const char *value);
EXPORT void kokkosp_request_tool_settings(const uint32_t num_settings,
                                          struct Kokkos_Tools_ToolSettings *settings);
EXPORT void
kokkosp_provide_tool_programming_interface(const uint32_t num_actions,
                                           struct Kokkos_Tools_ToolProgrammingInterface actions);

static uint32_t next_section = 77;

void kokkosp_end_fence(const uint64_t handle)
{
    end(KPT_END_FENCE, handle);
}

void kokkosp_push_profile_region(const char *regionName)
{
    enter();
    if (!regionName || !regionName[0])
        tool_error("empty region name");
    if (state.region_depth >= 0 && state.region_depth < KPT_MAX_OPEN)
        region_owner[state.region_depth] = pthread_self();
    if (++state.region_depth > state.max_region_depth)
        state.max_region_depth = state.region_depth;
    record(KPT_PUSH_REGION, regionName);
    leave();
}

void kokkosp_pop_profile_region(void)
{
    enter();
    if (state.region_depth > 0 && state.region_depth <= KPT_MAX_OPEN &&
        !pthread_equal(region_owner[state.region_depth - 1], pthread_self())) {
        /* Counted apart from errors: user threads may push regions concurrently on purpose
         * (that is the program's choice, as in Kokkos); parex itself must never do so. */
        ++state.cross_thread_pops;
    }
    if (state.region_depth-- <= 0)
        tool_error("pop_profile_region without a push");
    record(KPT_POP_REGION, NULL);
    leave();
}

static void memory_event(int kind, const struct Kokkos_Profiling_SpaceHandle *space,
                         const char *label, const void *ptr, uint64_t size)
{
    enter();
    kpt_event *e = record(kind, space->name);
    if (e) {
        copy_name(e->name2, label);
        e->ptr = ptr;
        e->bytes = size;
    }
    leave();
}

void kokkosp_allocate_data(const struct Kokkos_Profiling_SpaceHandle space, const char *label,
                           const void *const ptr, const uint64_t size)
{
    memory_event(KPT_ALLOCATE, &space, label, ptr, size);
}

void kokkosp_deallocate_data(const struct Kokkos_Profiling_SpaceHandle space, const char *label,
                             const void *const ptr, const uint64_t size)
{
    memory_event(KPT_DEALLOCATE, &space, label, ptr, size);
}

void kokkosp_begin_deep_copy(struct Kokkos_Profiling_SpaceHandle dst_handle, const char *dst_name,
                             const void *dst_ptr, struct Kokkos_Profiling_SpaceHandle src_handle,
                             const char *src_name, const void *src_ptr, uint64_t size)
{
    enter();
    kpt_event *e = record(KPT_BEGIN_DEEP_COPY, dst_handle.name);
    if (!dst_name || !src_name)
        tool_error("NULL deep copy name");
    if (e) {
        copy_name(e->name2, dst_name);
        copy_name(e->name3, src_handle.name);
        e->ptr = dst_ptr;
        e->id = (uint64_t)(uintptr_t)src_ptr;
        e->bytes = size;
    }
    leave();
}

void kokkosp_end_deep_copy(void)
{
    enter();
    record(KPT_END_DEEP_COPY, NULL);
    leave();
}

void kokkosp_create_profile_section(const char *name, uint32_t *sec_id)
{
    enter();
    *sec_id = next_section++;
    kpt_event *e = record(KPT_CREATE_SECTION, name);
    if (e)
        e->id = *sec_id;
    leave();
}

static void section_event(int kind, uint32_t sec_id)
{
    enter();
    int at = -1;
    for (int i = 0; i < n_running_sections; ++i)
        if (running_sections[i] == sec_id)
            at = i;
    if (kind == KPT_START_SECTION) {
        if (at >= 0) {
            ++state.section_errors;
            tool_error("start_profile_section of a running section");
        } else if (n_running_sections < KPT_MAX_OPEN) {
            running_sections[n_running_sections++] = sec_id;
            if (n_running_sections > state.max_running_sections)
                state.max_running_sections = n_running_sections;
        }
    } else if (kind == KPT_STOP_SECTION) {
        if (at < 0) {
            ++state.section_errors;
            tool_error("stop_profile_section of a section not running");
        } else {
            running_sections[at] = running_sections[--n_running_sections];
        }
    }
    kpt_event *e = record(kind, NULL);
    if (e)
        e->id = sec_id;
    leave();
}

void kokkosp_start_profile_section(const uint32_t sec_id)
{
    section_event(KPT_START_SECTION, sec_id);
}
void kokkosp_stop_profile_section(const uint32_t sec_id)
{
    section_event(KPT_STOP_SECTION, sec_id);
}
void kokkosp_destroy_profile_section(const uint32_t sec_id)
{
    section_event(KPT_DESTROY_SECTION, sec_id);
}

void kokkosp_declare_metadata(const char *key, const char *value)
{
    enter();
    kpt_event *e = record(KPT_METADATA, key);
    if (e)
        copy_name(e->name2, value);
    leave();
}

void kokkosp_request_tool_settings(const uint32_t num_settings,
                                   struct Kokkos_Tools_ToolSettings *settings)
{
    enter();
    state.settings_requests++;
    if (num_settings < 1 || !settings)
        tool_error("request_tool_settings without a settings struct");
    else
        settings->requires_global_fencing = false;
    leave();
}

void kokkosp_provide_tool_programming_interface(
    const uint32_t num_actions, struct Kokkos_Tools_ToolProgrammingInterface actions)
{
    enter();
    state.tpi_calls++;
    state.tpi_num_actions = num_actions;
    state.tpi_fence = actions.fence;
    for (int i = 0; i < 31; ++i)
        if (actions.padding[i])
            tool_error("tool programming interface padding not zero");
    leave();
}
#endif /* !KPT_PARTIAL */

#endif /* !KPT_EMPTY */
