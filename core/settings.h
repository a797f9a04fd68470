/* core/settings.h - the merged runtime settings (core/settings.c). Parsing happens only in
 * settings.c, from one table; every other module reads the result through pxi_config_get()
 * between px_initialize and px_finalize. */
#ifndef PXI_SETTINGS_H
#define PXI_SETTINGS_H

#include <stdint.h>
#include <stdio.h>

#include "base/check.h"
#include "base/wait.h"
#include "parex/core.h"

typedef struct pxi_config {
    int num_threads;             /* PX_NUM_THREADS; 0: one per core of the process cpuset */
    int device_id;               /* PX_DEVICE_ID; -1: default */
    char bind[8];                /* PX_BIND: "close" | "spread" | "none"; "": space's default */
    char default_space[32];      /* PX_DEFAULT_SPACE; "" : highest priority */
    char engine[16];             /* PX_ENGINE: "naive" | "pooled" | "per_device" */
    char *tools_libs;            /* PX_TOOLS_LIBS / KOKKOS_TOOLS_LIBS; NULL: none (owned) */
    int print_configuration;     /* PX_PRINT_CONFIGURATION */
    px_log_level log_level;      /* PX_LOG_LEVEL */
    pxi_wait_policy wait_policy; /* PX_WAIT_POLICY: active | passive */
    int64_t spin_us;             /* PX_SPIN_US; -1: backend default */
    int cpu_worker_nthreads;     /* PX_CPU_WORKER_NTHREADS; 0: engine default */
    int64_t engine_max_pending;  /* PX_ENGINE_MAX_PENDING; 0: engine default */
    int64_t engine_inline_ns;    /* PX_ENGINE_INLINE_NS; -1: engine default */
    int engine_bulk;             /* PX_ENGINE_BULK; -1: engine default (on) */
    char *profile_path;          /* PX_PROFILE: Chrome trace output; NULL: off (owned) */
    int kernel_timer;            /* PX_KERNEL_TIMER */
    int debug_check;             /* PX_DEBUG_CHECK: run structure checkers after mutations */
} pxi_config;

/* Build the configuration: defaults < environment < argv flags < *s. argv is only read (see
 * pxi_settings_consume_argv). Logs every malformed value, naming the variable or flag, and
 * returns PX_EINVAL (PX_ENOMEM when a copy fails) leaving the previous configuration replaced by
 * the defaults; *help is set when --px-help was given. On success the result is readable
 * through pxi_config_get(). */
PX_NODISCARD int pxi_settings_load(const int *argc, char **const *argv, const px_settings *s,
                                   int *help);
/* Remove every --px-* argument (argv[0] excepted) from argv, keeping the others in order, and
 * NULL the freed tail. px_initialize calls it only once it has succeeded, so a failed
 * initialize leaves the caller's argv untouched. */
void pxi_settings_consume_argv(int *argc, char ***argv);
/* Free what pxi_settings_load allocated. */
void pxi_settings_unload(void);
/* The configuration in force (valid between load and unload; zeroed defaults otherwise). */
const pxi_config *pxi_config_get(void);
/* Print "  NAME = value" lines of the configuration in force. */
void pxi_settings_print(FILE *out);

#endif
