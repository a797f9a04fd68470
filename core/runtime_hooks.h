/* core/runtime_hooks.h - module start/stop hooks that core/init.c calls in order:
 *   spaces (registry) -> tools -> trace -> engine runtime  at initialize,
 *   engine runtime -> trace -> tools -> spaces             at finalize.
 * Each module implements its own pair in its own file. */
#ifndef PXI_RUNTIME_HOOKS_H
#define PXI_RUNTIME_HOOKS_H

#include <stdio.h>

#include "base/check.h"

/* core/engine/: create the default engine from the configuration (PX_ENGINE etc.) and, at
 * finalize, wait for every engine still alive and destroy the default one. finalize returns
 * the first failure status still pending, else PX_OK. */
PX_NODISCARD int pxi_engine_runtime_initialize(void);
int pxi_engine_runtime_finalize(void);
void pxi_engine_print_configuration(FILE *out);
/* Nonzero when the calling thread is running an engine op (px_finalize then returns
 * PX_EDEADLK instead of tearing the runtime down under the op). */
int pxi_engine_in_op(void);

/* core/trace.c: Chrome trace recording when PX_PROFILE is set; finalize writes the file. */
PX_NODISCARD int pxi_trace_initialize(void);
int pxi_trace_finalize(void);

#endif
