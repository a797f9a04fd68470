/* core/kernel_timer.h - the built-in kernel timer (core/kernel_timer.c), PX_KERNEL_TIMER=1.
 * An internal tools listener: core/tools.c starts it at initialize and stops it at finalize,
 * when it prints a table of kernels, fences and regions by total time (calls, mean, max), like
 * the kernel-timer library of Kokkos Tools. */
#ifndef PXI_KERNEL_TIMER_H
#define PXI_KERNEL_TIMER_H

#include <stdio.h>

#include "base/check.h"
#include "core/tools.h"

/* The hooks to register with pxi_tools_add_listener; NULL while the timer is stopped. */
const pxi_tool_hooks *pxi_kernel_timer_hooks(void);

/* Reset the accumulated table and make the hooks available. Called by pxi_tools_initialize on
 * the initializing thread before any launch can reach the hooks. Returns PX_OK or
 * PX_ENOMEM. */
PX_NODISCARD int pxi_kernel_timer_start(void);

/* Print the table to @out and free it; @out NULL discards it unprinted (an initialize that
 * failed). Called by pxi_tools_finalize after every launch has completed (px_finalize is not
 * concurrent with launches). */
void pxi_kernel_timer_stop(FILE *out);

#endif
