/* base/log.h - internal logging (base/log.c). Report once, where detected, naming the call
 * and the bad value. Messages above the threshold cost one relaxed load. */
#ifndef PXI_LOG_H
#define PXI_LOG_H

#include "parex/core.h"

#if defined(__GNUC__)
#define PXI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PXI_PRINTF(f, a)
#endif

/* Format and deliver one message at @level to the handler (stderr by default). */
void pxi_log(px_log_level level, const char *fmt, ...) PXI_PRINTF(2, 3);

/* Nonzero when a message at @level would be delivered (to skip costly formatting). */
int pxi_log_enabled(px_log_level level);

#define PXI_ERROR(...) pxi_log(PX_LOG_ERROR, __VA_ARGS__)
#define PXI_WARN(...)  pxi_log(PX_LOG_WARN, __VA_ARGS__)
#define PXI_INFO(...)  pxi_log(PX_LOG_INFO, __VA_ARGS__)
#define PXI_DEBUG(...) pxi_log(PX_LOG_DEBUG, __VA_ARGS__)

#endif
