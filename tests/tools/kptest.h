/* tests/tools/kptest.h - what the recording Kokkos Tools test library (kptest_tool.c) saw.
 * Shared by the library and tests/check_tools.c only; the library includes no parex header,
 * like a third-party Kokkos tool. Read the state through the library's kptest_state(), found
 * with dlopen(path, RTLD_NOLOAD) + dlsym. */
#ifndef KPTEST_H
#define KPTEST_H

#include <stdint.h>

enum kpt_kind {
    KPT_BEGIN_FOR = 1,
    KPT_END_FOR,
    KPT_BEGIN_REDUCE,
    KPT_END_REDUCE,
    KPT_BEGIN_SCAN,
    KPT_END_SCAN,
    KPT_BEGIN_FENCE,
    KPT_END_FENCE,
    KPT_PUSH_REGION,
    KPT_POP_REGION,
    KPT_ALLOCATE,
    KPT_DEALLOCATE,
    KPT_BEGIN_DEEP_COPY,
    KPT_END_DEEP_COPY,
    KPT_CREATE_SECTION,
    KPT_START_SECTION,
    KPT_STOP_SECTION,
    KPT_DESTROY_SECTION,
    KPT_PROFILE_EVENT,
    KPT_METADATA,
    KPT_NKINDS
};

/* One callback as seen: name/space strings truncated to 63 chars. */
typedef struct kpt_event {
    int kind;
    char name[64];  /* label / region / section / event / metadata key / dst space handle */
    char name2[64]; /* metadata value / allocation label / dst label */
    char name3[64]; /* deep copy: src space handle */
    uint32_t dev_id;
    uint64_t id; /* kernel/fence id returned or received; section id */
    uint64_t bytes;
    const void *ptr;
} kpt_event;

#define KPT_MAX_EVENTS 4096
#define KPT_MAX_OPEN   256

typedef struct kpt_state {
    int init_calls, finalize_calls;
    int load_seq;
    uint64_t interface_version;
    uint32_t dev_info_count;
    uint64_t dev_ids[16];
    int settings_requests; /* kokkosp_request_tool_settings calls */
    int tpi_calls;         /* kokkosp_provide_tool_programming_interface calls */
    uint32_t tpi_num_actions;
    void (*tpi_fence)(uint32_t);
    uint64_t count[KPT_NKINDS];
    int n_events; /* events recorded (the first KPT_MAX_EVENTS) */
    kpt_event events[KPT_MAX_EVENTS];
    int errors; /* protocol violations the tool detected */
    char first_error[256];
    int region_depth, max_region_depth;
    int open_ids;   /* kernels/fences begun and not yet ended */
    int max_inside; /* most callbacks running at once (1: serialized) */
    /* Per-process region stack, as Kokkos tools keep it (space-time-stack): pops that closed
     * a region another thread had pushed (not counted in errors: user threads may do it). */
    int cross_thread_pops;
    /* Sections: starts of a section already running or stops of one not running (each also
     * counts in errors), and the most sections running at once. */
    int section_errors;
    int max_running_sections;
} kpt_state;

typedef const kpt_state *(*kpt_state_fn)(void);
typedef void (*kpt_reset_fn)(void);

#endif
