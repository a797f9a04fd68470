/* core/engine/kernel_ops.c - kernels as engine ops: px_engine_push_parallel_{for,reduce,scan}
 * and their _fn variants. A push builds the same pxi_launch a px_parallel_* call builds and
 * checks it with the same pxi_launch_prepare (core/launch.h), so a bad launch is reported at
 * push with the status the direct call would give, never later from a worker. The op stores
 * the prepared launch, with the kernel arguments, the label, the policy and a team plan copied
 * into a pooled payload (the pusher's launch only pointed at its caller's), and a worker runs
 * it with pxi_launch_run, without checking again. Launches on one host space
 * serialize on the space's launch lock and nested launches run inline, so kernel ops from
 * several workers cannot deadlock with the Threads pool (see runtime.c for how CPU workers are
 * sized against it). */
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "core/engine/checks.h"
#include "core/engine/engine_impl.h"
#include "core/instance.h"
#include "core/launch.h"
#include "core/registry.h"

#define KERNEL_OP_INLINE_ARGS 256

/* A kernel op's payload: the prepared launch, whose label, policy, team plan and (for kernels)
 * ctx point into this payload: the pusher's launch referenced its caller's, which are gone by
 * the time a worker runs the op. */
typedef struct kernel_op {
    pxi_engine *e;
    pxi_launch launch;
    union {
        px_range_policy range;
        px_mdrange_policy md;
        px_team_policy team;
    } policy;
    pxi_team_plan team_plan; /* team launches: launch.team_plan points here */
    int device_space;        /* not host accessible: fence after the launch */
    void *heap_args;         /* args above KERNEL_OP_INLINE_ARGS bytes */
    char label[64];
    alignas(16) unsigned char inline_args[KERNEL_OP_INLINE_ARGS];
} kernel_op;

size_t pxi_kernel_op_bytes(void);
size_t pxi_kernel_op_bytes(void)
{
    return sizeof(kernel_op);
}

static int kernel_op_run(const px_run_context *rc, void *arg)
{
    kernel_op *k = arg;
    /* On a GPU worker the launch goes on the worker's own stream and the engine completes the
     * op from that stream's host callback: no synchronization per op (MXNet issue #18951), and
     * kernels on different queues overlap. */
    int on_stream = k->device_space && rc && rc->stream;
    pxi_launch l = k->launch;
    l.stream = on_stream ? rc->stream : NULL;
    int st = pxi_launch_run(&l);
    if (on_stream)
        return st;
    /* A device launch from a CPU worker (no stream of its own) returns before the kernel ends;
     * the op's writes are done only once the space has drained. */
    if (st == PX_OK && k->device_space)
        st = px_fence(l.space);
    return st;
}

static void kernel_op_cleanup(void *arg)
{
    kernel_op *k = arg;
    pxi_instance_release(k->launch.space); /* core/instance.h: destroy waits for it */
    pxi_free(k->heap_args);
    pxi_pool_put(&k->e->kop_pool, k);
}

/* Push launch @l (built by the entry point, not yet prepared) as an op reading @reads and
 * writing @writes. */
static int kernel_op_push(px_engine *e, pxi_launch *l, const char *caller, px_var *const *reads,
                          size_t n_reads, px_var *const *writes, size_t n_writes)
{
    int rc = pxi_engine_validate(e, caller);
    if (rc != PX_OK)
        return rc;
    if ((n_reads > 0 && !reads) || (n_writes > 0 && !writes)) {
        PXI_ERROR("%s: a Var list is NULL with a nonzero count", caller);
        return PX_EFAULT;
    }
    if ((rc = pxi_launch_prepare(l, caller)) != PX_OK)
        return rc;
    int device = !l->space->ops->host_accessible;
    /* An instance's ops go to its own CPU lane, so ops on two instances run side by side. */
    px_context ctx = {PX_DEV_CPU, pxi_space_engine_lane(l->space, 0)};
    if (device) {
        ctx.type = PX_DEV_CUDA;
        ctx.device_id = pxi_registry_device_id(l->space);
    }
    kernel_op *k = pxi_pool_get(&e->kop_pool);
    if (!k) {
        PXI_ERROR("%s: out of memory", caller);
        return PX_ENOMEM;
    }
    k->e = e;
    k->device_space = device;
    k->heap_args = NULL;
    k->launch = *l;
    /* Only the member the launch uses is copied (an MDRange policy is 170 bytes). */
    if (l->policy_kind == PXI_POLICY_RANGE) {
        k->policy.range = *l->range;
        k->launch.range = &k->policy.range;
    } else if (l->policy_kind == PXI_POLICY_MDRANGE) {
        k->policy.md = *l->md;
        k->launch.md = &k->policy.md;
    } else {
        k->policy.team = *l->team;
        k->launch.team = &k->policy.team;
        k->team_plan = *l->team_plan;
        k->launch.team_plan = &k->team_plan;
    }
    if (l->body == PXI_BODY_KERNEL) {
        /* The op runs later: it launches on its own copy of the arguments. */
        void *copy = k->inline_args;
        if (l->args_size > KERNEL_OP_INLINE_ARGS) {
            copy = k->heap_args = pxi_malloc(l->args_size);
            if (!copy) {
                pxi_pool_put(&e->kop_pool, k);
                PXI_ERROR("%s: out of memory copying %zu bytes of arguments", caller, l->args_size);
                return PX_ENOMEM;
            }
        }
        if (l->args_size)
            memcpy(copy, l->ctx, l->args_size);
        k->launch.ctx = copy;
    }
    snprintf(k->label, sizeof k->label, "%s", l->label);
    k->launch.label = k->label;
    pxi_push p = {.kind = PXI_OP_SYNC,
                  .sfn = kernel_op_run,
                  .arg = k,
                  .cleanup = kernel_op_cleanup,
                  .ctx = ctx,
                  .reads = reads,
                  .n_reads = n_reads,
                  .writes = writes,
                  .n_writes = n_writes,
                  .prop = PX_FN_NORMAL,
                  .priority = 0,
                  .name = k->label,
                  .caller = caller,
                  /* One trampoline runs every kernel: a cost measured for it would mix them. */
                  .no_inline = 1};
    pxi_instance_hold(l->space);
    rc = pxi_engine_push(e, &p);
    if (rc != PX_OK) {
        pxi_instance_release(l->space);
        pxi_free(k->heap_args);
        pxi_pool_put(&e->kop_pool, k);
    }
    return rc;
}

int px_engine_push_parallel_for(px_engine *e, px_space *s, const char *label, px_range_policy p,
                                const px_kernel *k, const void *args, size_t args_size,
                                px_var *const *reads, size_t n_reads, px_var *const *writes,
                                size_t n_writes)
{
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_FOR, PXI_POLICY_RANGE, PXI_BODY_KERNEL, label, s);
    l.range = &p;
    l.ctx = (void *)(uintptr_t)args;
    l.kernel = k;
    l.args_size = args_size;
    return kernel_op_push(e, &l, "px_engine_push_parallel_for", reads, n_reads, writes, n_writes);
}

int px_engine_push_parallel_for_fn(px_engine *e, px_space *s, const char *label, px_range_policy p,
                                   px_for_fn fn, void *ctx, px_var *const *reads, size_t n_reads,
                                   px_var *const *writes, size_t n_writes)
{
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_FOR, PXI_POLICY_RANGE, PXI_BODY_FN, label, s);
    l.range = &p;
    l.host_for = fn;
    l.ctx = ctx;
    return kernel_op_push(e, &l, "px_engine_push_parallel_for_fn", reads, n_reads, writes,
                          n_writes);
}

int px_engine_push_parallel_reduce(px_engine *e, px_space *s, const char *label, px_range_policy p,
                                   const px_kernel *k, const void *args, size_t args_size,
                                   const px_reducer *r, void *result, px_var *const *reads,
                                   size_t n_reads, px_var *const *writes, size_t n_writes)
{
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_REDUCE, PXI_POLICY_RANGE, PXI_BODY_KERNEL, label, s);
    l.range = &p;
    l.ctx = (void *)(uintptr_t)args;
    l.kernel = k;
    l.args_size = args_size;
    l.reducer = r;
    l.result = result;
    return kernel_op_push(e, &l, "px_engine_push_parallel_reduce", reads, n_reads, writes,
                          n_writes);
}

int px_engine_push_parallel_reduce_fn(px_engine *e, px_space *s, const char *label,
                                      px_range_policy p, px_reduce_fn fn, void *ctx,
                                      const px_reducer *r, void *result, px_var *const *reads,
                                      size_t n_reads, px_var *const *writes, size_t n_writes)
{
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_REDUCE, PXI_POLICY_RANGE, PXI_BODY_FN, label, s);
    l.range = &p;
    l.host_reduce = fn;
    l.ctx = ctx;
    l.reducer = r;
    l.result = result;
    return kernel_op_push(e, &l, "px_engine_push_parallel_reduce_fn", reads, n_reads, writes,
                          n_writes);
}

int px_engine_push_parallel_scan(px_engine *e, px_space *s, const char *label, px_range_policy p,
                                 const px_kernel *k, const void *args, size_t args_size,
                                 const px_reducer *r, void *total, px_var *const *reads,
                                 size_t n_reads, px_var *const *writes, size_t n_writes)
{
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_SCAN, PXI_POLICY_RANGE, PXI_BODY_KERNEL, label, s);
    l.range = &p;
    l.ctx = (void *)(uintptr_t)args;
    l.kernel = k;
    l.args_size = args_size;
    l.reducer = r;
    l.result = total;
    return kernel_op_push(e, &l, "px_engine_push_parallel_scan", reads, n_reads, writes, n_writes);
}

int px_engine_push_parallel_scan_fn(px_engine *e, px_space *s, const char *label, px_range_policy p,
                                    px_scan_fn fn, void *ctx, const px_reducer *r, void *total,
                                    px_var *const *reads, size_t n_reads, px_var *const *writes,
                                    size_t n_writes)
{
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_SCAN, PXI_POLICY_RANGE, PXI_BODY_FN, label, s);
    l.range = &p;
    l.host_scan = fn;
    l.ctx = ctx;
    l.reducer = r;
    l.result = total;
    return kernel_op_push(e, &l, "px_engine_push_parallel_scan_fn", reads, n_reads, writes,
                          n_writes);
}

/* ---- team launches (parex/team.h) ------------------------------------------------------- */

int px_engine_push_parallel_for_team(px_engine *e, px_space *s, const char *label, px_team_policy p,
                                     const px_team_kernel *k, const void *args, size_t args_size,
                                     px_var *const *reads, size_t n_reads, px_var *const *writes,
                                     size_t n_writes)
{
    pxi_team_plan plan; /* written by pxi_launch_prepare */
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_FOR, PXI_POLICY_TEAM, PXI_BODY_KERNEL, label, s);
    l.team = &p;
    l.ctx = (void *)(uintptr_t)args;
    l.team_kernel = k;
    l.args_size = args_size;
    l.team_plan = &plan;
    return kernel_op_push(e, &l, "px_engine_push_parallel_for_team", reads, n_reads, writes,
                          n_writes);
}

int px_engine_push_parallel_for_team_fn(px_engine *e, px_space *s, const char *label,
                                        px_team_policy p, px_team_fn fn, void *ctx,
                                        px_var *const *reads, size_t n_reads, px_var *const *writes,
                                        size_t n_writes)
{
    pxi_team_plan plan; /* written by pxi_launch_prepare */
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_FOR, PXI_POLICY_TEAM, PXI_BODY_FN, label, s);
    l.team = &p;
    l.host_team_for = fn;
    l.ctx = ctx;
    l.team_plan = &plan;
    return kernel_op_push(e, &l, "px_engine_push_parallel_for_team_fn", reads, n_reads, writes,
                          n_writes);
}

int px_engine_push_parallel_reduce_team(px_engine *e, px_space *s, const char *label,
                                        px_team_policy p, const px_team_kernel *k, const void *args,
                                        size_t args_size, const px_reducer *r, void *result,
                                        px_var *const *reads, size_t n_reads, px_var *const *writes,
                                        size_t n_writes)
{
    pxi_team_plan plan; /* written by pxi_launch_prepare */
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_REDUCE, PXI_POLICY_TEAM, PXI_BODY_KERNEL, label, s);
    l.team = &p;
    l.ctx = (void *)(uintptr_t)args;
    l.team_kernel = k;
    l.args_size = args_size;
    l.reducer = r;
    l.result = result;
    l.team_plan = &plan;
    return kernel_op_push(e, &l, "px_engine_push_parallel_reduce_team", reads, n_reads, writes,
                          n_writes);
}

int px_engine_push_parallel_reduce_team_fn(px_engine *e, px_space *s, const char *label,
                                           px_team_policy p, px_team_reduce_fn fn, void *ctx,
                                           const px_reducer *r, void *result, px_var *const *reads,
                                           size_t n_reads, px_var *const *writes, size_t n_writes)
{
    pxi_team_plan plan; /* written by pxi_launch_prepare */
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_REDUCE, PXI_POLICY_TEAM, PXI_BODY_FN, label, s);
    l.team = &p;
    l.host_team_reduce = fn;
    l.ctx = ctx;
    l.reducer = r;
    l.result = result;
    l.team_plan = &plan;
    return kernel_op_push(e, &l, "px_engine_push_parallel_reduce_team_fn", reads, n_reads, writes,
                          n_writes);
}

/* MDRange launches (parex/mdrange.h): the same stored prepared launch, policy kind MDRANGE. */
int px_engine_push_parallel_for_md(px_engine *e, px_space *s, const char *label,
                                   px_mdrange_policy p, const px_kernel *k, const void *args,
                                   size_t args_size, px_var *const *reads, size_t n_reads,
                                   px_var *const *writes, size_t n_writes)
{
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_FOR, PXI_POLICY_MDRANGE, PXI_BODY_KERNEL, label, s);
    l.md = &p;
    l.ctx = (void *)(uintptr_t)args;
    l.kernel = k;
    l.args_size = args_size;
    return kernel_op_push(e, &l, "px_engine_push_parallel_for_md", reads, n_reads, writes,
                          n_writes);
}

int px_engine_push_parallel_for_md_fn(px_engine *e, px_space *s, const char *label,
                                      px_mdrange_policy p, px_md_for_fn fn, void *ctx,
                                      px_var *const *reads, size_t n_reads, px_var *const *writes,
                                      size_t n_writes)
{
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_FOR, PXI_POLICY_MDRANGE, PXI_BODY_FN, label, s);
    l.md = &p;
    l.host_md_for = fn;
    l.ctx = ctx;
    return kernel_op_push(e, &l, "px_engine_push_parallel_for_md_fn", reads, n_reads, writes,
                          n_writes);
}

int px_engine_push_parallel_reduce_md(px_engine *e, px_space *s, const char *label,
                                      px_mdrange_policy p, const px_kernel *k, const void *args,
                                      size_t args_size, const px_reducer *r, void *result,
                                      px_var *const *reads, size_t n_reads, px_var *const *writes,
                                      size_t n_writes)
{
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_REDUCE, PXI_POLICY_MDRANGE, PXI_BODY_KERNEL, label, s);
    l.md = &p;
    l.ctx = (void *)(uintptr_t)args;
    l.kernel = k;
    l.args_size = args_size;
    l.reducer = r;
    l.result = result;
    return kernel_op_push(e, &l, "px_engine_push_parallel_reduce_md", reads, n_reads, writes,
                          n_writes);
}

int px_engine_push_parallel_reduce_md_fn(px_engine *e, px_space *s, const char *label,
                                         px_mdrange_policy p, px_md_reduce_fn fn, void *ctx,
                                         const px_reducer *r, void *result, px_var *const *reads,
                                         size_t n_reads, px_var *const *writes, size_t n_writes)
{
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_REDUCE, PXI_POLICY_MDRANGE, PXI_BODY_FN, label, s);
    l.md = &p;
    l.host_md_reduce = fn;
    l.ctx = ctx;
    l.reducer = r;
    l.result = result;
    return kernel_op_push(e, &l, "px_engine_push_parallel_reduce_md_fn", reads, n_reads, writes,
                          n_writes);
}
