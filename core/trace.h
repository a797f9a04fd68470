/* core/trace.h - internal side of the Chrome trace recorder (core/trace.c). Engine workers,
 * pushers and waiters record complete spans ("ph":"X") into per-thread buffers; kernel spans
 * come from an internal tools listener. With tracing off each call point costs one relaxed
 * load and a predicted branch. */
#ifndef PXI_TRACE_H
#define PXI_TRACE_H

#include <stdatomic.h>
#include <stdint.h>

#include "base/check.h"

/* Nonzero while recording. Relaxed: a span racing with start/stop may or may not be kept. */
extern atomic_int pxi_trace_on;

static inline int pxi_trace_active(void)
{
    return PXI_UNLIKELY(atomic_load_explicit(&pxi_trace_on, memory_order_relaxed) != 0);
}

/* Trace clock in nanoseconds (monotonic). */
int64_t pxi_trace_now_ns(void);
/* Record a span [t0_ns, t1_ns) named @name (copied, truncated to 47 bytes) in category @cat
 * ("op", "kernel", "wait"; a static string) on the calling thread. */
void pxi_trace_span(const char *cat, const char *name, int64_t t0_ns, int64_t t1_ns);
/* pxi_trace_span with a status: a failure (not PX_OK) is written into the event's args as
 * {"status": code, "error": px_strerror(code)}. The engine marks a failed op with an
 * "op_failed" event and each op skipped because of it with an "op_skipped" event, both empty
 * spans at the moment the engine saw the failure (push.c). */
void pxi_trace_span_status(const char *cat, const char *name, int64_t t0_ns, int64_t t1_ns,
                           int status);
/* Name the calling thread in traces (copied). */
void pxi_trace_thread_name(const char *name);

#endif
