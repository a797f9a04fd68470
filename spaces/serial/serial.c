/* spaces/serial/serial.c - the Serial execution space: every launch runs inline on the calling
 * thread, in index order (Kokkos::Serial). Calls follow the plan (policy/plan.h) so that a
 * reduction or scan function sees the same chunk boundaries the policy names, which keeps
 * float results identical to a threads run with one rank. */
#include <stdalign.h>
#include <string.h>

#include "core/log.h"
#include "core/registry.h"
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

/* An MDRange launch: every tile in tile order (policy/plan.h, pxi_plan_md), a reduce folding
 * them into one value, so a threads run with one rank gives the same bits. */
static int serial_launch_md(const pxi_launch *l)
{
    if (l->kind != PX_KERNEL_FOR && l->kind != PX_KERNEL_REDUCE)
        return PX_EINVAL;
    const pxi_md_plan pl = pxi_plan_md(&l->md, l->kind, 1, PXI_PLAN_SERIAL, NULL);
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
    do {
        if (l->kind == PX_KERNEL_FOR)
            l->host_md_for(lo, hi, l->ctx);
        else
            l->host_md_reduce(lo, hi, l->ctx, acc);
    } while (pxi_mdrange_tile_next(t, coord, lo, hi));
    --in_kernel_depth;
    if (l->kind == PX_KERNEL_REDUCE)
        memcpy(l->result, acc, l->reducer->value_size);
    return PX_OK;
}

static int serial_launch(const pxi_launch *l)
{
    if (l->policy_kind == PXI_POLICY_MDRANGE)
        return serial_launch_md(l);
    /* core/launch.c hands backends prepared, non-empty ranges only (it answers empty ones
     * itself). */
    if (!PX_ALWAYS(l->policy_kind == PXI_POLICY_RANGE && l->range.begin < l->range.end))
        return PX_EINVAL;
    if (l->kind != PX_KERNEL_FOR && l->kind != PX_KERNEL_REDUCE && l->kind != PX_KERNEL_SCAN)
        return PX_EINVAL;
    /* One rank's static block, the whole range, cut into calls as the plan says (policy/plan.h):
     * one call per explicit chunk, or one call for the whole range. */
    const pxi_range_plan pl = pxi_plan_range(&l->range, l->kind, 1, PXI_PLAN_SERIAL);
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
};

PX_REGISTER_SPACE(serial_ops, pxi_space_anchor_serial)
