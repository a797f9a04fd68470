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
 *
 * fork(): the runtime does not survive fork(2). A child forked while the runtime is up has
 * none of its worker threads, so there every parex call returns PX_ENOTINIT (px_initialize:
 * PX_EBUSY) at once, with a message saying so, instead of waiting for a thread that does not
 * exist; px_is_initialized() is 0 there. The parent is unaffected. A child forked before
 * px_initialize or after px_finalize may initialize its own runtime. (OpenMP runtimes and
 * CUDA have the same limit.)
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
#define PX_VERSION_MAJOR  0
#define PX_VERSION_MINOR  1
#define PX_VERSION_PATCH  0
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
#define PX_EMPI      -13 /**< An MPI call failed or MPI is not usable; the log names it. */
#define PX_EUSER     -14 /**< First code free for user ops; any negative value is accepted. */
/** @} */

/**
 * Name and meaning of a status code ("PX_OK: success", "PX_EINVAL: invalid argument", ...), in
 * the manner of strerror(3) and MXNet's MXGetLastError.
 *
 * @param status  any int. Values that are not a PX_E* code give "unknown parex status"
 *                (positive) or "user or unknown parex status" (negative: PX_EUSER and below
 *                are free for user ops, see parex/engine.h).
 * @return a static string, never NULL; no status.
 * Thread-safe; callable before px_initialize and from inside kernels and ops.
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
    const char *bind;          /**< "close" | "spread" | "none"; NULL: close (none when ranks
                                    share the node oversubscribed; README "Binding"). */
    const char *default_space; /**< Space name; NULL: highest-priority available space. */
    const char *engine;        /**< "naive" | "pooled" | "per_device"; NULL: per_device. */
    const char *tools_libs;    /**< ';'-separated Kokkos Tools libraries; NULL: none. */
    int print_configuration;   /**< Nonzero: print the configuration during initialize. */
} px_settings;

/**
 * Fill @p s with "not set" values: num_threads 0, device_id -1, strings NULL,
 * print_configuration 0. Those values defer to the environment and flags. Mirrors a
 * default-constructed Kokkos::InitializationSettings.
 *
 * @param s  settings to fill; NULL is ignored (nothing to report: the call cannot fail).
 * Thread-safe (touches only *s); callable before px_initialize.
 */
PX_API void px_settings_default(px_settings *s);

/**
 * Initialize the runtime from the environment and the program's arguments.
 *
 * Reads PX_* environment variables, then every --px-* argument of argv (argv[0], the program
 * name, is never read as a flag). --px-help prints every setting to stdout and initializes
 * normally. Then initializes every registered execution space in priority order, loads tools
 * libraries, and creates the default engine. On success the --px-* arguments are removed from
 * argv (*argc decreases, the other arguments keep their order, the freed tail is set to NULL);
 * on failure argv is left untouched, the log threshold is restored, everything started is
 * stopped again, and a later px_initialize may succeed.
 * Mirrors Kokkos::initialize(argc, argv).
 *
 * @param argc  pointer to main's argc (>= 0), or NULL (then argv is ignored).
 * @param argv  pointer to main's argv (*argc entries); may be NULL, or point to NULL, only
 *              when argc is NULL or *argc is 0.
 * @return PX_OK;
 *         PX_EINVAL   a malformed environment variable or flag, an unknown --px-* flag,
 *                     *argc < 0, or *argc > 0 with argv or *argv NULL (the log names each
 *                     bad one);
 *         PX_EALREADY the runtime is already initialized;
 *         PX_ENOMEM   an allocation failed;
 *         PX_ENODEV   the requested default space is unknown or not available, or no space
 *                     is available at all;
 *         PX_EIO      the PX_PROFILE / --px-profile trace file cannot be written (the log
 *                     names the path and the OS error; nothing is created or changed);
 *         PX_EBUSY    called in a child process forked while the runtime was up (see
 *                     fork() above): the runtime cannot start again there;
 *         or the status of a space or module (tools, trace, engine) that failed to start
 *         (spaces started before it are finalized again).
 * Not thread-safe: call from one thread, with no other parex call in flight.
 */
PX_API int px_initialize(int *argc, char ***argv);

/**
 * Initialize the runtime with explicit settings, which win over the environment (no argv is
 * read). Mirrors Kokkos::initialize(Kokkos::InitializationSettings).
 *
 * @param s  settings from px_settings_default() with the wanted fields changed; NULL behaves
 *           like px_initialize(NULL, NULL). num_threads: 0 or 1..4096 threads; device_id: -1
 *           or 0..1023; bind, engine: one of the names in px_settings; default_space: a space
 *           name of at most 31 characters.
 * @return PX_OK;
 *         PX_EINVAL   a field out of its domain (bind "diagonal", num_threads < 0 or > 4096,
 *                     device_id < -1 or > 1023, unknown engine; the log names the field), or
 *                     a malformed environment variable;
 *         PX_EALREADY, PX_ENOMEM, PX_ENODEV, PX_EIO, PX_EBUSY and module failures as
 *         px_initialize.
 * Not thread-safe (see px_initialize).
 */
PX_API int px_initialize_with(const px_settings *s);

/**
 * Finalize the runtime: wait for all work (every engine, every space), finalize spaces in
 * reverse priority order, join their threads, unload tools. px_initialize may be called again.
 * Mirrors Kokkos::finalize.
 *
 * @return PX_OK;
 *         PX_ENOTINIT when the runtime is not initialized, or in a child forked while it was
 *                     up (nothing is torn down: the parent's threads are not the child's);
 *         PX_EDEADLK  when called from inside a kernel or an engine op (nothing is torn down);
 *         otherwise the first failure status reported while draining engines, fencing or
 *         finalizing a space (the runtime is finalized regardless).
 * Not thread-safe: no other parex call may be in flight.
 */
PX_API int px_finalize(void);

/**
 * Whether the runtime is up (Kokkos::is_initialized).
 * @return 1 between a successful px_initialize and px_finalize, else 0; no error status.
 * Thread-safe; callable at any time.
 */
PX_API int px_is_initialized(void);

/**
 * Print version, build options, settings in force, registered spaces with their availability
 * and each space's own lines (topology, binding, device properties), tools and engine.
 * Mirrors Kokkos::print_configuration.
 *
 * @param out  stream to print to; NULL means stdout. Write errors are not reported.
 * Thread-safe against launches, not against px_initialize/px_finalize; callable before
 * initialize (then shows the build and the registered spaces only).
 */
PX_API void px_print_configuration(FILE *out);

/**
 * Print the table of settings (environment variable, flag, accepted values, default) to
 * @p out; this is what --px-help prints (Kokkos' --kokkos-help).
 *
 * @param out  stream to print to; NULL means stdout. Write errors are not reported.
 * Thread-safe; callable before px_initialize.
 */
PX_API void px_print_help(FILE *out);

/** @name Logging
 * Messages go to stderr by default, prefixed "parex <level>: ". The threshold comes from
 * PX_LOG_LEVEL=error|warn|info|debug (default warn) or px_log_set_level. Levelled logging in the
 * manner of MXNet's dmlc LOG(severity); Kokkos itself has none.
 * @{ */
typedef enum { PX_LOG_ERROR = 0, PX_LOG_WARN = 1, PX_LOG_INFO = 2, PX_LOG_DEBUG = 3 } px_log_level;

/** Receives one formatted message (no trailing newline). Called from the reporting thread. */
typedef void (*px_log_handler)(px_log_level level, const char *message, void *user);

/**
 * Set the log threshold: messages less severe than @p level are dropped. px_initialize sets it
 * from PX_LOG_LEVEL / --px-log-level when given.
 *
 * @param level  PX_LOG_ERROR .. PX_LOG_DEBUG.
 * @return PX_OK;
 *         PX_EINVAL for a value outside px_log_level (logged; the threshold is unchanged).
 * Thread-safe (an atomic store); callable before px_initialize.
 */
PX_API int px_log_set_level(px_log_level level);

/**
 * The current log threshold (see px_log_set_level).
 * @return a px_log_level value; no error status. Thread-safe; callable before px_initialize.
 */
PX_API px_log_level px_log_get_level(void);

/**
 * Route messages to @p fn (NULL restores stderr), like dmlc's custom log sink.
 *
 * @param fn    receives each message at or above the threshold; called with an internal lock
 *              held, one message at a time, from whichever thread reports.
 * @param user  passed to fn unchanged.
 * No status (cannot fail). Thread-safe; callable before px_initialize.
 * Caller must: not call back into parex from fn (a call that logs would deadlock), and keep
 * fn and user valid until another handler is set.
 */
PX_API void px_log_set_handler(px_log_handler fn, void *user);
/** @} */

#ifdef __cplusplus
}
#endif
#endif /* PAREX_CORE_H */
