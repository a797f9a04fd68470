/* core/launch.h - one launch path (core/launch.c). Every launch, whether it comes from a
 * px_parallel_* call or from px_engine_push_parallel_*, is built as a pxi_launch and checked by
 * pxi_launch_prepare, once; pxi_launch_run then runs a prepared launch (tools callbacks, empty
 * ranges, the space's launch op) without checking it again. The engine's kernel ops prepare at
 * push, so a bad launch is reported to the pusher, and run the stored launch on a worker. */
#ifndef PXI_LAUNCH_H
#define PXI_LAUNCH_H

#include "core/check.h"
#include "core/registry.h"

/* Check and complete a launch. On entry the caller has set: kind, body, policy_kind and the
 * matching policy member, label (NULL or "" takes the kernel's name, or @caller for host
 * functions), space (NULL: the default space), for PXI_BODY_FN the host entry matching kind and
 * ctx, for PXI_BODY_KERNEL kernel, ctx (the args) and args_size, and for reduce/scan reducer
 * and result. @caller names the public entry point in messages.
 * On PX_OK: label is non-empty, space is resolved and available, the host entries are taken
 * from the kernel, stream is NULL. Checks, in this order (the first failing one is returned and
 * logged; no side effect):
 *   PX_EFAULT   host function NULL;                       (PXI_BODY_FN)
 *   PX_EFAULT   kernel NULL;                              (PXI_BODY_KERNEL)
 *   PX_EINVAL   kernel magic wrong, or kernel of another kind;
 *   PX_EINVAL   args_size differs from the kernel's;
 *   PX_EFAULT   args NULL with args_size > 0;
 *   PX_ENOTINIT the runtime is not initialized;
 *   PX_ENODEV   the space is not available;
 *   PX_EINVAL   bad policy (see pxi_range_check);
 *   PX_EFAULT   reducer NULL, or result NULL for a reduce;
 *   PX_EINVAL   invalid reducer (px_reducer_validate);
 *   PX_EINVAL   kernel value size differs from the reducer's;
 *   PX_EINVAL   a kernel without host entry on a host space;
 *   PX_EINVAL   a kernel not compiled for a device space, or a host function on one;
 *   PX_EINVAL   (teams) a space without the team_limits op, a team size, vector length or
 *               scratch above the space's pxi_team_limits (the message names the limit).
 * Team launches (PXI_POLICY_TEAM) set team_kernel instead of kernel for PXI_BODY_KERNEL; their
 * policy checks are league_size >= 0, team_size >= 0, 0 <= vector_length <=
 * PX_TEAM_MAX_VECTOR_LENGTH and a known schedule (in the "bad policy" step), and on PX_OK
 * team_plan holds the plan resolved for the space (pxi_plan_team). A league of 0 is empty.
 * Thread-safe. */
PX_NODISCARD int pxi_launch_prepare(pxi_launch *l, const char *caller);

/* Run a prepared launch: tools begin/end events around the space's launch op; an empty range
 * stores the identity in a reduce's or scan's result and never reaches the backend. Returns the
 * backend's status. Thread-safe as the space's launch op is. */
int pxi_launch_run(pxi_launch *l);

#endif
