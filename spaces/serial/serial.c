/* spaces/serial/serial.c - the Serial execution space: every launch runs inline on the calling
 * thread, in index order (Kokkos::Serial). Calls follow the plan (policy/plan.h) so that a
 * reduction or scan function sees the same chunk boundaries the policy names, which keeps
 * float results identical to a threads run with one rank. */
#include <stdalign.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "core/piece_hook.h"
#include "core/registry.h"
#include "core/runtime.h"
#include "policy/plan.h"

/* Depth of serial kernels running on this thread (nested launches are allowed and inline). */
static _Thread_local int in_kernel_depth;

static int serial_initialize(const pxi_space_config *cfg)
{
    (void)cfg; /* nothing to configure */
    return PX_OK;
}

static int serial_finalize(void)
{
    return PX_OK;
}

static int serial_concurrency(void)
{
    return 1;
}

static int serial_fence(void)
{
    return PX_OK;
}

static int serial_in_kernel(void)
{
    return in_kernel_depth > 0;
}

/* Team launches (parex/team.h): teams of one member in league order on the calling thread.
 * Scratch: one block for the launch, from a stack buffer when it is small, else from the heap
 * (launches from several threads and nested launches each get their own). */
enum { SERIAL_STACK_SCRATCH = 4096 };

static int serial_team_limits(pxi_team_limits *out)
{
    *out = (pxi_team_limits){.max_team_size = 1,
                             .default_team_size = 1,
                             .max_vector_length = PX_TEAM_MAX_VECTOR_LENGTH,
                             .default_vector_length = 1,
                             .max_scratch = PX_TEAM_HOST_MAX_SCRATCH,
                             .team_limit_why = "serial teams have one member"};
    return PX_OK;
}

static int serial_team_launch(const pxi_launch *l)
{
    const pxi_team_plan *pl = l->team_plan;
    alignas(64) unsigned char stack_scratch[SERIAL_STACK_SCRATCH];
    unsigned char *buf = stack_scratch, *heap = NULL;
    if (pl->scratch_group > sizeof stack_scratch) {
        buf = heap = pxi_malloc_aligned(pl->scratch_group, 64);
        if (!heap) {
            PXI_ERROR("serial: team launch '%s': out of memory for %zu bytes of scratch", l->label,
                      pl->scratch_group);
            return PX_ENOMEM;
        }
    }
    px_team t = {.pxi_league_size = pl->league_size,
                 .pxi_team_rank = 0,
                 .pxi_team_size = 1,
                 .pxi_vector_length = 1,
                 .pxi_scratch = pl->scratch_team ? buf : NULL,
                 .pxi_thread_scratch = pl->scratch_thread ? buf + pl->scratch_team : NULL,
                 .pxi_sync = NULL};
    alignas(64) unsigned char acc[PX_REDUCER_MAX_VALUE_BYTES], mine[PX_REDUCER_MAX_VALUE_BYTES];
    if (l->kind == PX_KERNEL_REDUCE)
        l->reducer->identity(acc);
    ++in_kernel_depth;
    for (int64_t lr = 0; lr < pl->league_size; ++lr) {
        t.pxi_league_rank = lr;
        if (l->kind == PX_KERNEL_FOR) {
            l->host_team_for(&t, l->ctx);
        } else {
            /* The team's value (one member) joined in league order. */
            l->reducer->identity(mine);
            l->host_team_reduce(&t, l->ctx, mine);
            l->reducer->join(acc, mine);
        }
    }
    --in_kernel_depth;
    if (l->kind == PX_KERNEL_REDUCE)
        memcpy(l->result, acc, l->reducer->value_size);
    pxi_free_aligned(heap);
    return PX_OK;
}

/* An MDRange launch: every tile in tile order (policy/plan.h, pxi_plan_md), a reduce folding
 * them into one value, so a threads run with one rank gives the same bits. */
static int serial_launch_md(const pxi_launch *l)
{
    if (l->kind != PX_KERNEL_FOR && l->kind != PX_KERNEL_REDUCE)
        return PX_EINVAL;
    const pxi_md_plan pl = pxi_plan_md(l->md, l->kind, 1, PXI_PLAN_SERIAL, NULL);
    const pxi_md_tiling *t = &pl.tiling;
    if (!PX_ALWAYS(t->total > 0))
        return PX_EINVAL;
    alignas(64) unsigned char acc[PX_REDUCER_MAX_VALUE_BYTES];
    if (l->kind == PX_KERNEL_REDUCE)
        l->reducer->identity(acc);
    int64_t coord[PX_MAX_RANK], lo[PX_MAX_RANK], hi[PX_MAX_RANK];
    pxi_mdrange_tile_coords(t, 0, coord);
    pxi_mdrange_coords_box(t, coord, lo, hi);
    ++in_kernel_depth;
    for (;;) {
        if (l->kind == PX_KERNEL_FOR)
            l->host_md_for(lo, hi, l->ctx);
        else
            l->host_md_reduce(lo, hi, l->ctx, acc);
        if (!pxi_mdrange_tile_next(t, coord, lo, hi))
            break;
        pxi_piece_hook_run();
    }
    --in_kernel_depth;
    if (l->kind == PX_KERNEL_REDUCE)
        memcpy(l->result, acc, l->reducer->value_size);
    return PX_OK;
}

static int serial_launch_any(const pxi_launch *l);

/* A serial launch runs as rank 0 (pxi_exec_rank, core/runtime.h), also when it is nested in a
 * threads kernel, whose rank would index a replica a serial scatter-add does not have. */
static int serial_launch(const pxi_launch *l)
{
    int outer = pxi_exec_rank;
    pxi_exec_rank = 0;
    int rc = serial_launch_any(l);
    pxi_exec_rank = outer;
    return rc;
}

static int serial_launch_any(const pxi_launch *l)
{
    if (l->policy_kind == PXI_POLICY_TEAM)
        return serial_team_launch(l);
    if (l->policy_kind == PXI_POLICY_MDRANGE)
        return serial_launch_md(l);
    /* core/launch.c hands backends prepared, non-empty ranges only (it answers empty ones
     * itself). */
    if (!PX_ALWAYS(l->policy_kind == PXI_POLICY_RANGE && l->range->begin < l->range->end))
        return PX_EINVAL;
    if (l->kind != PX_KERNEL_FOR && l->kind != PX_KERNEL_REDUCE && l->kind != PX_KERNEL_SCAN)
        return PX_EINVAL;
    /* One rank's static block, the whole range, cut into calls as the plan says (policy/plan.h):
     * one call per explicit chunk, or one call for the whole range. */
    const pxi_range_plan pl = pxi_plan_range(l->range, l->kind, 1, PXI_PLAN_SERIAL);
    /* Reduce and scan fold every call into one value in index order; for a scan that value is
     * the exact prefix from the start, so each call is its final pass. */
    alignas(64) unsigned char acc[PX_REDUCER_MAX_VALUE_BYTES];
    if (l->kind != PX_KERNEL_FOR)
        l->reducer->identity(acc);
    ++in_kernel_depth;
    for (int64_t b = pl.begin, e; b < pl.end; b = e) {
        e = pxi_plan_call_end(&pl, b, pl.end);
        if (l->kind == PX_KERNEL_FOR)
            l->host_for(b, e, l->ctx);
        else if (l->kind == PX_KERNEL_REDUCE)
            l->host_reduce(b, e, l->ctx, acc);
        else
            l->host_scan(b, e, l->ctx, acc, 1);
        if (e < pl.end)
            pxi_piece_hook_run();
    }
    --in_kernel_depth;
    if (l->kind != PX_KERNEL_FOR && l->result)
        memcpy(l->result, acc, l->reducer->value_size);
    return PX_OK;
}

static const pxi_space_ops serial_ops = {
    .name = "serial",
    .priority = 0,
    .kokkos_device_type = 0,
    .host_accessible = 1,
    .initialize = serial_initialize,
    .finalize = serial_finalize,
    .concurrency = serial_concurrency,
    .fence = serial_fence,
    .print_configuration = NULL,
    .launch = serial_launch,
    .malloc = pxi_host_malloc,
    .free = pxi_host_free,
    .deep_copy = pxi_host_deep_copy,
    .in_kernel = serial_in_kernel,
    .team_limits = serial_team_limits,
};

PX_REGISTER_SPACE(serial_ops, pxi_space_anchor_serial)
