/*
 * parex/profiling.h - profiling regions, sections, events and metadata, and the Kokkos Tools
 * interface behind them.
 *
 * parex drives Kokkos Tools libraries unmodified (Kokkos::Tools, interface version 20240906).
 * px_initialize loads every library named in PX_TOOLS_LIBS, KOKKOS_TOOLS_LIBS or
 * --px-tools-libs= (a ';'-separated list of paths, loaded with dlopen in list order), resolves
 * the kokkosp_* callbacks each one defines and calls them with the Kokkos signatures:
 *
 *   kokkosp_init_library / kokkosp_finalize_library    at px_initialize / px_finalize
 *   kokkosp_request_tool_settings                      after init (requires_global_fencing)
 *   kokkosp_provide_tool_programming_interface         after init (a fence action)
 *   kokkosp_begin/end_parallel_for, _reduce, _scan     around every launch
 *   kokkosp_begin/end_fence                            around px_fence
 *   kokkosp_allocate_data / kokkosp_deallocate_data    in px_malloc / px_free
 *   kokkosp_begin/end_deep_copy                        around px_deep_copy
 *   kokkosp_push/pop_profile_region                    px_profile_push/pop_region, engine ops
 *                                                      run by their pusher
 *   kokkosp_create/start/stop/destroy_profile_section  px_profile_*_section, engine ops run
 *                                                      by workers
 *   kokkosp_profile_event                              px_profile_mark_event
 *   kokkosp_declare_metadata                           px_profile_declare_metadata
 *
 * A library or callback that cannot be found is a logged warning, never an error: tools
 * usually implement a subset. A library listed twice is loaded once. Memory events name the
 * memory space as Kokkos does ("Host" for serial and threads, "Cuda" for cuda) and
 * kokkosp_deallocate_data reports the block's allocated size. The fence action handed to tools
 * fences every space (skipping one whose kernel is running on the calling thread), with fence
 * events labelled "px_tool_invoked_fence". Not called: kokkosp_parse_args/print_help (parex has
 * no tool-argument setting), the DualView and tuning callbacks (parex has neither). Kernel labels
 * are never empty (the kernel's name, else "px_parallel_for_fn" and friends). Device ids follow
 * Kokkos' encoding (device_type << 24) | (device_id << 17) | instance, with Serial 0, Cuda 2,
 * Threads 6 and instance 1 for a space's default instance (0 is Kokkos' "all instances"); an
 * execution-space instance from px_space_partition (parex/instance.h) has its own, 2 and up, in
 * creation order.
 *
 * PX_KERNEL_TIMER=1 turns on a built-in kernel timer fed by the same events: at px_finalize it
 * prints to stdout a table of kernels, fences and regions by total time with calls, mean and
 * max, like the kernel-timer tool of Kokkos Tools.
 *
 * Engine ops. Tools keep one region stack per process (space-time-stack nests by it), while
 * engine workers run ops at the same time; regions pushed and popped per op on workers would
 * pop regions other threads opened (gemm nested under syrk). So, as Kokkos pushes regions
 * only from the launching thread: an op its pusher runs inside the push is a region on that
 * thread; an op a worker runs is a profile section of its own named after the op, created
 * and started when it starts, stopped and destroyed when it ends (sections may overlap, each
 * id is started once at a time). A tool with no section callbacks does not see worker ops;
 * the kernels they launch are reported as usual. The built-in kernel timer keeps per-thread
 * stacks and times every op as a region. Regions a program pushes from several threads at
 * once are the program's choice and reach tools as pushed.
 *
 * Cost: with no library loaded and no internal listener active, every call below and every
 * launch pays one relaxed load and a predicted branch.
 */
#ifndef PAREX_PROFILING_H
#define PAREX_PROFILING_H

#include <stdint.h>

#include "parex/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Open a named region (Kokkos::Profiling::pushRegion); tools see kokkosp_push_profile_region
 * and the kernel timer times it until the matching px_profile_pop_region.
 *
 * @param name  region name, copied by tools that keep it; NULL or "" becomes
 *              "px_unnamed_region" (some tools abort on an empty name).
 * Does nothing when no tool is active (also before px_initialize).
 * Thread-safe: regions are per thread for the kernel timer; loaded libraries see the calls of
 * all threads, serialized (see px_profile_tool_count). Engine ops appear as regions named
 * after the op when their pusher runs them, as sections when a worker does (file comment).
 */
PX_API void px_profile_push_region(const char *name);

/**
 * Close the innermost region opened by this thread (Kokkos::Profiling::popRegion); tools see
 * kokkosp_pop_profile_region. An unmatched pop is forwarded to libraries (as Kokkos does) and
 * ignored by the kernel timer. Does nothing when no tool is active. Thread-safe.
 */
PX_API void px_profile_pop_region(void);

/**
 * Create a profile section (Kokkos::Profiling::createProfileSection): a named interval that
 * may be started and stopped many times; tools see kokkosp_create_profile_section and get
 * their own ids for it.
 *
 * @param name  section name; copied.
 * @param id    receives the section id, valid until px_profile_destroy_section or
 *              px_finalize.
 * @return PX_OK;
 *         PX_EFAULT   name or id is NULL;
 *         PX_EINVAL   name is "" (tools key sections by name);
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_ENOMEM   the section table could not grow.
 * Sections exist whether or not a tool is loaded, so ids are checked the same way in both.
 * Constant time (amortized) however many sections are live; the most recently destroyed id is
 * handed out first. Thread-safe.
 */
PX_API int px_profile_create_section(const char *name, uint32_t *id);

/**
 * Start section @p id (Kokkos::Profiling::startSection; kokkosp_start_profile_section).
 * @return PX_OK; PX_EINVAL for an id that px_profile_create_section did not return or that was
 *         destroyed; PX_ENOTINIT when not initialized. Thread-safe.
 */
PX_API int px_profile_start_section(uint32_t id);

/**
 * Stop section @p id (Kokkos::Profiling::stopSection; kokkosp_stop_profile_section).
 * @return as px_profile_start_section. Thread-safe.
 */
PX_API int px_profile_stop_section(uint32_t id);

/**
 * Destroy section @p id (Kokkos::Profiling::destroyProfileSection;
 * kokkosp_destroy_profile_section); the id may be reused by a later create.
 * @return as px_profile_start_section. Thread-safe.
 */
PX_API int px_profile_destroy_section(uint32_t id);

/**
 * Mark an instant event (Kokkos::Profiling::markEvent; kokkosp_profile_event).
 * @param name  event name.
 * @return PX_OK (also when no tool is active); PX_EFAULT for name NULL. Thread-safe.
 */
PX_API int px_profile_mark_event(const char *name);

/**
 * Hand a key/value pair to the tools (Kokkos::Tools::declareMetadata;
 * kokkosp_declare_metadata), e.g. problem size or input file. parex itself declares
 * "parex_version", "parex_default_space" and "parex_<space>_concurrency" at initialize.
 *
 * @return PX_OK (also when no tool is loaded); PX_EFAULT for key or value NULL; PX_ENOTINIT
 *         when not initialized (tools are loaded by px_initialize, so the pair would be lost).
 * Thread-safe.
 */
PX_API int px_profile_declare_metadata(const char *key, const char *value);

/**
 * Number of Kokkos Tools libraries loaded by px_initialize (Kokkos::Profiling::
 * profileLibraryLoaded as a count). Libraries are called in list order for begin events and in
 * reverse order for end events, so intervals nest; each library gets its own kernel, fence and
 * section ids. Calls into libraries are serialized by one lock, because Kokkos tools keep
 * unsynchronized global state and parex launches from many threads (engine workers).
 *
 * @return 0 when none is loaded or the runtime is not initialized. Thread-safe.
 */
PX_API int px_profile_tool_count(void);

#ifdef __cplusplus
}
#endif
#endif /* PAREX_PROFILING_H */
