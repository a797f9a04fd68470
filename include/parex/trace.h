/*
 * parex/trace.h - the Chrome trace recorder: engine ops, kernels and waits, per thread.
 *
 * Setting PX_PROFILE=trace.json records from px_initialize to px_finalize and writes the file
 * there. The calls below record any window of a run. The file is Chrome Trace Event JSON
 * ("X" complete events, microsecond timestamps, one track per worker thread, named; on each
 * track the spans nest) and opens in Perfetto (ui.perfetto.dev) or chrome://tracing, like
 * MXNet's profiler output.
 *
 * Kernel spans come from the tools interface: they are recorded when PX_PROFILE was set at
 * initialize (the recorder then listens to kernel begin/end events); with only
 * px_trace_start, ops and waits are recorded.
 */
#ifndef PAREX_TRACE_H
#define PAREX_TRACE_H

#include "parex/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Start recording (again). Events recorded earlier and not yet cleared are kept.
 * @return PX_OK (also when already recording). Thread-safe.
 */
PX_API int px_trace_start(void);

/**
 * Stop recording; recorded events stay until px_trace_clear or px_finalize.
 * @return PX_OK (also when not recording). Thread-safe.
 */
PX_API int px_trace_stop(void);

/**
 * Write every event recorded so far to @p path as Chrome Trace Event JSON.
 * @param path  output file (replaced).
 * @return PX_OK; PX_EFAULT for NULL; PX_EINVAL for ""; PX_ENOMEM when there is no memory to
 *         sort the events (the file is left untouched); PX_EIO when the file cannot be
 *         written (logged with the path and the OS error).
 * Thread-safe; spans finishing during the dump may or may not be included.
 */
PX_API int px_trace_dump(const char *path);

/**
 * Drop every recorded event. @return PX_OK. Call while no op is running (Caller must).
 */
PX_API int px_trace_clear(void);

#ifdef __cplusplus
}
#endif
#endif /* PAREX_TRACE_H */
