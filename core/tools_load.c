/* core/tools_load.c - loading Kokkos Tools libraries (PX_TOOLS_LIBS / KOKKOS_TOOLS_LIBS):
 * dlopen, symbol lookup, the table of loaded libraries and the lock that serializes calls into
 * them, and the libraries' start and finish calls. Event dispatch is in core/tools.c.
 *
 * Libraries are not dlclose'd at finalize (Kokkos does not either): tools register atexit
 * handlers and start threads that must not outlive their code. A later px_initialize dlopens
 * them again (same handle) and calls kokkosp_init_library again. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "core/registry.h"
#include "core/tools_load.h"
#include "parex/core.h"

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

tool_lib pxi_tool_libs[MAX_LIBS];
int pxi_tool_n_libs;
unsigned pxi_tool_lib_mask[KP_COUNT];

/* Serializes calls into loaded libraries (why: core/tools.c's file comment, "Threads"). */
static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int in_lib_call;

void pxi_tool_lib_enter(void)
{
    if (in_lib_call++ == 0)
        pthread_mutex_lock(&lib_lock);
}

void pxi_tool_lib_leave(void)
{
    if (--in_lib_call == 0)
        pthread_mutex_unlock(&lib_lock);
}

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

/* dlopen one library and resolve its callbacks into pxi_tool_libs[pxi_tool_n_libs]. A failure is a
 * warning. */
static int load_one(const char *path)
{
    if (pxi_tool_n_libs == MAX_LIBS) {
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
    for (int i = 0; i < pxi_tool_n_libs; ++i) {
        if (pxi_tool_libs[i].handle == h) {
            /* The same library object would see every event twice. */
            PXI_WARN("tools: '%s' is the same library as '%s' (listed twice); loaded once", path,
                     pxi_tool_libs[i].path);
            dlclose(h); /* drops only the reference this dlopen added */
            return PX_OK;
        }
    }
    tool_lib *lib = &pxi_tool_libs[pxi_tool_n_libs];
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
            pxi_tool_lib_mask[c] |= 1u << pxi_tool_n_libs;
    pxi_tool_n_libs++;
    return PX_OK;
}

/* Split the ';'-separated list; empty entries are skipped. */
int pxi_tools_load_list(const char *list)
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
void pxi_tools_start_libs(kp_fence_action_fn fence)
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
    tpi.fence = fence;
    pxi_tool_lib_enter();
    for (int i = 0; i < pxi_tool_n_libs; ++i) {
        tool_lib *lib = &pxi_tool_libs[i];
        kp_init_fn init_library = LIB_FN(lib, KP_INIT, kp_init_fn);
        if (init_library)
            init_library(i, KP_INTERFACE_VERSION, n_info, n_info ? info : NULL);
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
    pxi_tool_lib_leave();
}

/* kokkosp_finalize_library of every loaded library, in load order (the failure path of
 * initialize and finalize alike). */
void pxi_tools_finalize_libs(void)
{
    pxi_tool_lib_enter();
    for (int i = 0; i < pxi_tool_n_libs; ++i) {
        kp_void_fn fin = LIB_FN(&pxi_tool_libs[i], KP_FINALIZE, kp_void_fn);
        if (fin)
            fin();
    }
    pxi_tool_lib_leave();
}

void pxi_tools_libs_reset(void)
{
    for (int i = 0; i < pxi_tool_n_libs; ++i)
        pxi_free(pxi_tool_libs[i].path);
    memset(pxi_tool_libs, 0, sizeof pxi_tool_libs);
    memset(pxi_tool_lib_mask, 0, sizeof pxi_tool_lib_mask);
    pxi_tool_n_libs = 0;
}

/* 1 while libraries are loaded and initialized (core/tools.c sets it with release after its
 * tables are complete, clears it at finalize); px_profile_* calls acquire it. */
atomic_int pxi_tools_ready_flag;

int pxi_tools_ready(void)
{
    return atomic_load_explicit(&pxi_tools_ready_flag, memory_order_acquire);
}
