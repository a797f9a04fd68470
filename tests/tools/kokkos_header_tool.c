/* tests/tools/kokkos_header_tool.c - a Kokkos tool built against Kokkos' OWN C interface
 * header (Kokkos_Profiling_C_Interface.h, e.g. from Debian's libtrilinos-kokkos-dev), not
 * against our declarations. Each kokkosp_* definition is checked at compile time against the
 * matching Kokkos function-pointer typedef with _Generic, so a signature parex calls with
 * that differs from Kokkos' would not build. It counts what it sees and remembers the last
 * kernel name, device id and memory-space name; check_tools reads that through
 * kph_state(). Built only when that header is found (tests/tools.cmake). */
#include <Kokkos_Profiling_C_Interface.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct kph_state {
    uint64_t init, finalize, begin_for, end_for, begin_reduce, end_reduce, begin_scan, end_scan;
    uint64_t begin_fence, end_fence, push, pop, alloc, dealloc, begin_copy, end_copy;
    uint64_t last_version;
    uint32_t last_dev_id;
    uint64_t last_alloc_bytes, last_dealloc_bytes, copy_bytes;
    char last_name[64], last_space[64], copy_src_space[64];
    int settings_seen, tpi_seen, tpi_fence_set;
} kph_state;

static kph_state st;
static uint64_t next_id = 42;

EXPORT const kph_state *kph_state_get(void);
const kph_state *kph_state_get(void)
{
    return &st;
}

#define CHECK_TYPE(fn, type)                                                                       \
    _Static_assert(_Generic(&fn, type : 1, default : 0), #fn " does not match Kokkos' " #type)

EXPORT void kokkosp_init_library(const int seq, const uint64_t version, const uint32_t n,
                                 struct Kokkos_Profiling_KokkosPDeviceInfo *info);
void kokkosp_init_library(const int seq, const uint64_t version, const uint32_t n,
                          struct Kokkos_Profiling_KokkosPDeviceInfo *info)
{
    (void)seq;
    (void)n;
    (void)info;
    st.init++;
    st.last_version = version;
}
CHECK_TYPE(kokkosp_init_library, Kokkos_Profiling_initFunction);

EXPORT void kokkosp_finalize_library(void);
void kokkosp_finalize_library(void)
{
    st.finalize++;
}
CHECK_TYPE(kokkosp_finalize_library, Kokkos_Profiling_finalizeFunction);

#define BEGIN_END(kind)                                                                            \
    EXPORT void kokkosp_begin_parallel_##kind(const char *name, const uint32_t dev, uint64_t *id); \
    void kokkosp_begin_parallel_##kind(const char *name, const uint32_t dev, uint64_t *id)         \
    {                                                                                              \
        st.begin_##kind++;                                                                         \
        st.last_dev_id = dev;                                                                      \
        snprintf(st.last_name, sizeof st.last_name, "%s", name);                                   \
        *id = next_id++;                                                                           \
    }                                                                                              \
    CHECK_TYPE(kokkosp_begin_parallel_##kind, Kokkos_Profiling_beginFunction);                     \
    EXPORT void kokkosp_end_parallel_##kind(const uint64_t id);                                    \
    void kokkosp_end_parallel_##kind(const uint64_t id)                                            \
    {                                                                                              \
        (void)id;                                                                                  \
        st.end_##kind++;                                                                           \
    }                                                                                              \
    CHECK_TYPE(kokkosp_end_parallel_##kind, Kokkos_Profiling_endFunction)

BEGIN_END(for);
BEGIN_END(reduce);
BEGIN_END(scan);

EXPORT void kokkosp_begin_fence(const char *name, const uint32_t dev, uint64_t *id);
void kokkosp_begin_fence(const char *name, const uint32_t dev, uint64_t *id)
{
    (void)name;
    st.begin_fence++;
    st.last_dev_id = dev;
    *id = next_id++;
}
CHECK_TYPE(kokkosp_begin_fence, Kokkos_Profiling_beginFenceFunction);

EXPORT void kokkosp_end_fence(const uint64_t id);
void kokkosp_end_fence(const uint64_t id)
{
    (void)id;
    st.end_fence++;
}
CHECK_TYPE(kokkosp_end_fence, Kokkos_Profiling_endFenceFunction);

EXPORT void kokkosp_push_profile_region(const char *name);
void kokkosp_push_profile_region(const char *name)
{
    (void)name;
    st.push++;
}
CHECK_TYPE(kokkosp_push_profile_region, Kokkos_Profiling_pushFunction);

EXPORT void kokkosp_pop_profile_region(void);
void kokkosp_pop_profile_region(void)
{
    st.pop++;
}
CHECK_TYPE(kokkosp_pop_profile_region, Kokkos_Profiling_popFunction);

EXPORT void kokkosp_allocate_data(const struct Kokkos_Profiling_SpaceHandle h, const char *label,
                                  const void *ptr, const uint64_t size);
void kokkosp_allocate_data(const struct Kokkos_Profiling_SpaceHandle h, const char *label,
                           const void *ptr, const uint64_t size)
{
    (void)label;
    (void)ptr;
    st.alloc++;
    st.last_alloc_bytes = size;
    memcpy(st.last_space, h.name, sizeof st.last_space);
}
CHECK_TYPE(kokkosp_allocate_data, Kokkos_Profiling_allocateDataFunction);

EXPORT void kokkosp_deallocate_data(const struct Kokkos_Profiling_SpaceHandle h, const char *label,
                                    const void *ptr, const uint64_t size);
void kokkosp_deallocate_data(const struct Kokkos_Profiling_SpaceHandle h, const char *label,
                             const void *ptr, const uint64_t size)
{
    (void)h;
    (void)label;
    (void)ptr;
    st.dealloc++;
    st.last_dealloc_bytes = size;
}
CHECK_TYPE(kokkosp_deallocate_data, Kokkos_Profiling_deallocateDataFunction);

EXPORT void kokkosp_begin_deep_copy(struct Kokkos_Profiling_SpaceHandle dh, const char *dn,
                                    const void *dp, struct Kokkos_Profiling_SpaceHandle sh,
                                    const char *sn, const void *sp, uint64_t size);
void kokkosp_begin_deep_copy(struct Kokkos_Profiling_SpaceHandle dh, const char *dn, const void *dp,
                             struct Kokkos_Profiling_SpaceHandle sh, const char *sn, const void *sp,
                             uint64_t size)
{
    (void)dh;
    (void)dn;
    (void)dp;
    (void)sn;
    (void)sp;
    st.begin_copy++;
    st.copy_bytes = size;
    memcpy(st.copy_src_space, sh.name, sizeof st.copy_src_space);
}
CHECK_TYPE(kokkosp_begin_deep_copy, Kokkos_Profiling_beginDeepCopyFunction);

EXPORT void kokkosp_end_deep_copy(void);
void kokkosp_end_deep_copy(void)
{
    st.end_copy++;
}
CHECK_TYPE(kokkosp_end_deep_copy, Kokkos_Profiling_endDeepCopyFunction);

EXPORT void kokkosp_request_tool_settings(const uint32_t n,
                                          struct Kokkos_Tools_ToolSettings *settings);
void kokkosp_request_tool_settings(const uint32_t n, struct Kokkos_Tools_ToolSettings *settings)
{
    st.settings_seen = n == 1 && settings && settings->requires_global_fencing;
    settings->requires_global_fencing = false;
}
CHECK_TYPE(kokkosp_request_tool_settings, Kokkos_Tools_requestToolSettingsFunction);

EXPORT void
kokkosp_provide_tool_programming_interface(const uint32_t n,
                                           struct Kokkos_Tools_ToolProgrammingInterface tpi);
void kokkosp_provide_tool_programming_interface(const uint32_t n,
                                                struct Kokkos_Tools_ToolProgrammingInterface tpi)
{
    st.tpi_seen = (int)n;
    st.tpi_fence_set = tpi.fence != NULL && tpi.padding[30] == NULL;
}
CHECK_TYPE(kokkosp_provide_tool_programming_interface,
           Kokkos_Tools_provideToolProgrammingInterfaceFunction);
