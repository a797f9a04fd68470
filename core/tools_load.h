/* core/tools_load.h - the bottom layer of the Kokkos Tools support: our declarations of the
 * Kokkos Tools C ABI and the table of loaded libraries that core/tools_load.c defines and fills.
 * Above it: core/tools_sections.c (profile sections) and core/tools.c (event dispatch and the
 * px_profile_* calls), which read the table; nothing here calls up into them.
 * Not for use outside these files: everything else goes through core/tools.h.
 *
 * ABI. The declarations below are our own, written against the published C interface of Kokkos
 * (Kokkos_Profiling_C_Interface.h, interface version 20240906). What matters for binary
 * compatibility, checked with _Static_assert where C allows:
 *   - SpaceHandle is a struct of char[64] passed BY VALUE (allocate/deallocate/deep_copy);
 *   - KokkosPDeviceInfo is { size_t deviceID; }, passed as an array pointer with a count;
 *   - ToolSettings is { bool requires_global_fencing; bool padding[255]; } passed by pointer;
 *   - ToolProgrammingInterface is { fence(uint32_t); 31 padding function pointers } passed BY
 *     VALUE (older Kokkos passed a pointer; 20240906 passes the 256-byte struct);
 *   - const qualifiers on by-value parameters do not change the ABI. */
#ifndef PXI_TOOLS_LOAD_H
#define PXI_TOOLS_LOAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/check.h"
#include "core/tools.h"

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

/* At most this many libraries and internal listeners; more are refused with a warning. Eight
 * chained tools is far more than anyone runs (each one serializes and slows every launch). */
#define MAX_LIBS      8
#define MAX_LISTENERS 8
#define MAX_CONSUMERS (MAX_LIBS + MAX_LISTENERS)

typedef struct tool_lib {
    char *path;   /* owned */
    void *handle; /* from dlopen; never closed (see core/tools_load.c) */
    kp_generic_fn fn[KP_COUNT];
    int n_found;
    int global_fencing; /* answer to kokkosp_request_tool_settings */
} tool_lib;

/* The loaded libraries, in load order (core/tools_load.c). Written only by
 * pxi_tools_load_list and pxi_tools_libs_reset on the initializing thread, before any launch
 * can read them (see core/tools.c), so dispatch reads them without locks. */
extern tool_lib pxi_tool_libs[MAX_LIBS];
extern int pxi_tool_n_libs;
/* Bit i set when pxi_tool_libs[i] defines the callback: dispatch skips the lock for events no
 * library listens to (a tool implementing only kernels costs nothing on regions or
 * allocations). */
extern unsigned pxi_tool_lib_mask[KP_COUNT];

/* Serialize calls into loaded libraries (Kokkos tools keep unsynchronized global state). A
 * thread already inside a library callback (a tool calling the fence action we provide) does
 * not take the lock again. */
void pxi_tool_lib_enter(void);
void pxi_tool_lib_leave(void);

#define LIB_FN(lib, idx, type) ((type)(lib)->fn[idx])

/* core/tools_load.c. Load the ';'-separated library list (empty entries skipped); a library or
 * symbol that cannot be loaded is a warning. PX_OK or PX_ENOMEM. */
PX_NODISCARD int pxi_tools_load_list(const char *list);
/* kokkosp_init_library, request_tool_settings and provide_tool_programming_interface of every
 * loaded library, in Kokkos' order; tools get @p fence as their fence action. */
void pxi_tools_start_libs(kp_fence_action_fn fence);
/* kokkosp_finalize_library of every loaded library, in load order. */
void pxi_tools_finalize_libs(void);
/* Forget every loaded library (they stay mapped: see core/tools_load.c). */
void pxi_tools_libs_reset(void);

/* Nonzero between the end of pxi_tools_initialize and pxi_tools_finalize (acquire: the caller
 * then sees the tables). Defined here (core/tools_load.c) so that sections need not call up. */
int pxi_tools_ready(void);
/* The flag behind pxi_tools_ready, written by core/tools.c's initialize and finalize. */
extern atomic_int pxi_tools_ready_flag;

#endif
