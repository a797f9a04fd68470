/*
 * parex/core.h - status codes, settings, lifecycle and logging.
 *
 * Every fallible parex call returns an int status: PX_OK (0) or one of the negative PX_E* codes
 * below. A status names the errno it resembles. Bad input never aborts the process: it is
 * reported once through the log (see px_log_set_handler) where it is detected, and the call
 * returns a code without side effects.
 *
 * Lifecycle in the style of Kokkos::initialize / Kokkos::finalize: settings are merged from
 * defaults < environment < --px-* command-line flags < an explicit px_settings, then every
 * registered execution space is initialized in priority order and finalized in reverse.
 */
#ifndef PAREX_CORE_H
#define PAREX_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Marks a declaration as part of the exported ABI; everything else is hidden. */
#if defined(PX_STATIC_DEFINE) || !defined(__GNUC__)
#define PX_API
#else
#define PX_API __attribute__((visibility("default")))
#endif

/** Version of the library these headers describe. */
#define PX_VERSION_MAJOR 0
#define PX_VERSION_MINOR 1
#define PX_VERSION_PATCH 0
#define PX_VERSION_STRING "0.1.0"

/**
 * @name Status codes
 * One block, one meaning each. Handle errors (a NULL or stale handle) and state errors (called
 * at the wrong time) are kept apart from argument errors, as Argobots separates
 * ABT_ERR_INV_* from state errors.
 * @{
 */
#define PX_OK        0   /**< Success. */
#define PX_EINVAL    -1  /**< An argument is out of its documented domain (EINVAL). */
#define PX_ENOMEM    -2  /**< An allocation failed (ENOMEM). */
#define PX_ENOSYS    -3  /**< The feature was not built into this library (ENOSYS). */
#define PX_EDEADLK   -4  /**< The call would wait on itself, e.g. a wait from inside an op. */
#define PX_ENODEV    -5  /**< The execution space or device is not available (ENODEV). */
#define PX_ENOTINIT  -6  /**< The runtime is not initialized (call px_initialize first). */
#define PX_EALREADY  -7  /**< The runtime is already initialized. */
#define PX_EBUSY     -8  /**< The object is in use and cannot be changed now (EBUSY). */
#define PX_ECUDA     -9  /**< The CUDA runtime reported an error; the log names it. */
#define PX_EIO       -10 /**< An I/O operation failed (EIO), e.g. writing a trace file. */
#define PX_ECANCELED -11 /**< The op was cancelled (ECANCELED): an engine was destroyed first. */
#define PX_EFAULT    -12 /**< A NULL pointer where an object is required (EFAULT). */
#define PX_EUSER     -13 /**< First code free for user ops; any negative value is accepted. */
/** @} */

/**
 * Name of a status code ("PX_OK", "PX_EINVAL: invalid argument", ...).
 *
 * @param status  any int; unknown values give "unknown parex status".
 * @return a static string, never NULL.
 * Thread-safe; callable before px_initialize.
 */
PX_API const char *px_strerror(int status);

/**
 * Runtime settings, merged as defaults < environment < --px-* flags < this struct.
 * Initialize with px_settings_default() before setting fields: a zero/NULL field then keeps the
 * value from the lower layers (environment and flags), so px_initialize_with only overrides
 * what it sets.
 */
typedef struct px_settings {
    int num_threads;           /**< Threads space ranks; 0: one per core of the process cpuset. */
    int device_id;             /**< Cuda device; -1: default (PX_DEVICE_ID or 0). */
    const char *bind;          /**< "close" | "spread" | "none"; NULL: close. */
    const char *default_space; /**< Space name; NULL: highest-priority available space. */
    const char *engine;        /**< "naive" | "pooled" | "per_device"; NULL: per_device. */
    const char *tools_libs;    /**< ';'-separated Kokkos Tools libraries; NULL: none. */
    int print_configuration;   /**< Nonzero: print the configuration during initialize. */
} px_settings;

/**
 * Fill @p s with "not set" values: num_threads 0, device_id -1, strings NULL,
 * print_configuration 0. Those values defer to the environment and flags.
 *
 * @param s  settings to fill; NULL is ignored.
 * Thread-safe; callable before px_initialize.
 */
PX_API void px_settings_default(px_settings *s);

/**
 * Initialize the runtime from the environment and the program's arguments.
 *
 * Reads PX_* environment variables, then consumes every --px-* argument from argv (they are
 * removed and *argc is decreased; other arguments keep their order). --px-help prints every
 * setting to stdout and initializes normally. Then initializes every registered execution
 * space in priority order, loads tools libraries, and creates the default engine.
 * Mirrors Kokkos::initialize(argc, argv).
 *
 * @param argc  pointer to main's argc, or NULL (then argv is ignored).
 * @param argv  pointer to main's argv, or NULL.
 * @return PX_OK;
 *         PX_EINVAL   a malformed variable or flag (the log names it; nothing is initialized);
 *         PX_EALREADY the runtime is already initialized;
 *         PX_ENOMEM   an allocation failed;
 *         PX_ENODEV   the requested default space is not available;
 *         or the status of a space that failed to initialize (spaces started before it are
 *         finalized again).
 * Not thread-safe: call from one thread, with no other parex call in flight.
 */
PX_API int px_initialize(int *argc, char ***argv);

/**
 * Initialize the runtime with explicit settings, which win over environment and flags.
 *
 * @param s  settings from px_settings_default() with the wanted fields changed; NULL behaves
 *           like px_initialize(NULL, NULL).
 * @return as px_initialize; PX_EINVAL also for a bad field of @p s (e.g. bind "diagonal",
 *         num_threads < 0).
 * Not thread-safe (see px_initialize).
 */
PX_API int px_initialize_with(const px_settings *s);

/**
 * Finalize the runtime: wait for all work (every engine, every space), finalize spaces in
 * reverse priority order, join their threads, unload tools. px_initialize may be called again.
 *
 * @return PX_OK; PX_ENOTINIT when not initialized; otherwise the first failure status
 *         reported while draining (the runtime is finalized regardless).
 * Not thread-safe; must not be called from inside a kernel or an engine op (PX_EDEADLK).
 */
PX_API int px_finalize(void);

/** @return 1 between a successful px_initialize and px_finalize, else 0. Thread-safe. */
PX_API int px_is_initialized(void);

/**
 * Print version, build options, settings in force, registered spaces with their availability
 * and each space's own lines (topology, binding, device properties), tools and engine.
 *
 * @param out  stream to print to; NULL means stdout.
 * Thread-safe against launches; callable before initialize (then shows registrations only).
 */
PX_API void px_print_configuration(FILE *out);

/**
 * Print the table of settings (environment variable, flag, values, default) to @p out.
 * This is what --px-help prints.
 */
PX_API void px_print_help(FILE *out);

/** @name Logging
 * Messages go to stderr by default, prefixed "parex <level>: ". The threshold comes from
 * PX_LOG_LEVEL=error|warn|info|debug (default warn) or px_log_set_level.
 * @{ */
typedef enum { PX_LOG_ERROR = 0, PX_LOG_WARN = 1, PX_LOG_INFO = 2, PX_LOG_DEBUG = 3 } px_log_level;

/** Receives one formatted message (no trailing newline). Called from the reporting thread. */
typedef void (*px_log_handler)(px_log_level level, const char *message, void *user);

/**
 * Set the log threshold: messages above @p level are dropped.
 * @return PX_OK; PX_EINVAL for a value outside px_log_level. Thread-safe.
 */
PX_API int px_log_set_level(px_log_level level);

/** @return the current log threshold. Thread-safe. */
PX_API px_log_level px_log_get_level(void);

/**
 * Route messages to @p fn (NULL restores stderr). The handler may be called concurrently from
 * several threads and must not call back into parex. Thread-safe.
 */
PX_API void px_log_set_handler(px_log_handler fn, void *user);
/** @} */

#ifdef __cplusplus
}
#endif
#endif /* PAREX_CORE_H */
