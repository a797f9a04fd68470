/* core/launch.h - one launch path (core/launch.c). Every launch, whether it comes from a
 * px_parallel_* call or from px_engine_push_parallel_*, is built as a pxi_launch and checked by
 * pxi_launch_prepare, once; pxi_launch_run then runs a prepared launch (tools callbacks, empty
 * ranges, the space's launch op) without checking it again. The engine's kernel ops prepare at
 * push, so a bad launch is reported to the pusher, and run the stored launch on a worker. */
#ifndef PXI_LAUNCH_H
#define PXI_LAUNCH_H

#include "base/check.h"
#include "core/registry.h"

/* Start building launch @l: the given members set, every other member empty (NULL or 0);
 * the entry point then sets its policy pointer, body, args and reducer. Assignments rather
 * than an initializer on purpose: GCC clears an initialized pxi_launch with `rep stos`, whose
 * start-up is a visible part of an empty launch's latency. Every member is listed here (the
 * size check below fails when one is added). */
static inline void pxi_launch_init(pxi_launch *l, px_kernel_kind kind, pxi_policy_kind policy_kind,
                                   pxi_body_kind body, const char *label, px_space *space)
{
    l->kind = kind;
    l->policy_kind = policy_kind;
    l->body = body;
    l->label = label;
    l->space = space;
    l->range = NULL;
    l->host_for = NULL;
    l->ctx = NULL;
    l->kernel = NULL;
    l->args_size = 0;
    l->reducer = NULL;
    l->result = NULL;
    l->stream = NULL;
    l->team_kernel = NULL;
    l->team_plan = NULL;
}
/* 3 enums, 11 pointers and args_size on LP64 targets. */
_Static_assert(sizeof(void *) != 8 || sizeof(pxi_launch) == 112,
               "a member was added to pxi_launch: set it in pxi_launch_init");

/* Check and complete a launch. On entry the caller has set (pxi_launch_init, then the rest):
 * kind, body, policy_kind and the matching policy pointer, label (NULL or "" takes the kernel's
 * name, or @caller for host functions), space (NULL: the default space), for PXI_BODY_FN the
 * host entry matching kind and ctx, for PXI_BODY_KERNEL kernel, ctx (the args) and args_size,
 * and for reduce/scan reducer and result. @caller names the public entry point in messages.
 * On PX_OK: label is non-empty, space is resolved and available, a kernel's host entry for
 * (kind, policy kind) is taken from it, stream is NULL.
 * Checks, in this order (the first failing one is returned and logged; no side effect):
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
 * Team launches (PXI_POLICY_TEAM) set team_kernel instead of kernel for PXI_BODY_KERNEL, and
 * team_plan to storage for the plan; their policy checks are league_size >= 0, team_size >= 0,
 * 0 <= vector_length <= PX_TEAM_MAX_VECTOR_LENGTH and a known schedule (in the "bad policy"
 * step), and on PX_OK *team_plan holds the plan resolved for the space (pxi_plan_team). A
 * league of 0 is empty. The policy (and team plan) must outlive the launch: a caller that runs
 * it later copies them and repoints the launch (core/engine/kernel_ops.c).
 * Thread-safe. */
PX_NODISCARD int pxi_launch_prepare(pxi_launch *l, const char *caller);

/* Run a prepared launch: tools begin/end events around the space's launch op; an empty range
 * stores the identity in a reduce's or scan's result and never reaches the backend. Returns the
 * backend's status. Thread-safe as the space's launch op is. */
int pxi_launch_run(pxi_launch *l);

#endif
