/* core/engine/kernel_ops.c - kernels as engine ops: px_engine_push_parallel_{for,reduce,scan}
 * and their _fn variants. Each push validates everything a launch would (so a bad launch is
 * reported at push, not later from a worker), copies the kernel arguments and the label into
 * a pooled payload, and pushes a sync op that launches through the public px_parallel_* call
 * from whichever worker runs it. Launches on one host space serialize on the space's launch
 * lock and nested launches run inline, so kernel ops from several workers cannot deadlock
 * with the Threads pool (see runtime.c for how CPU workers are sized against it). */
#include <string.h>

#include "core/alloc.h"
#include "core/engine/engine_impl.h"
#include "core/log.h"
#include "core/registry.h"
#include "core/settings.h"

#define KOP_INLINE_ARGS 256

typedef struct kop {
    pxi_engine *e;
    px_kernel_kind kind;
    px_space *space;
    int device_space; /* not host accessible: fence after the launch */
    px_range_policy policy;
    const px_kernel *kernel; /* NULL for _fn launches */
    px_for_fn for_fn;
    px_reduce_fn reduce_fn;
    px_scan_fn scan_fn;
    void *ctx;
    const px_reducer *reducer;
    void *result;
    const void *args; /* inline_args or heap_args */
    size_t args_size;
    void *heap_args;
    char label[64];
    alignas(16) unsigned char inline_args[KOP_INLINE_ARGS];
} kop;

size_t pxi_kernel_op_bytes(void);
size_t pxi_kernel_op_bytes(void)
{
    return sizeof(kop);
}

static int kop_run(const px_run_context *rc, void *arg)
{
    kop *k = arg;
    int st;
    /* On a GPU worker the launch goes on the worker's own stream and the engine completes the
     * op from that stream's host callback: no synchronization per op (MXNet issue #18951), and
     * kernels on different queues overlap. */
    int on_stream = k->device_space && rc && rc->stream;
    if (on_stream)
        pxi_launch_set_stream(rc->stream);
    switch (k->kind) {
    case PX_KERNEL_FOR:
        st = k->kernel
                 ? px_parallel_for(k->space, k->label, k->policy, k->kernel, k->args, k->args_size)
                 : px_parallel_for_fn(k->space, k->label, k->policy, k->for_fn, k->ctx);
        break;
    case PX_KERNEL_REDUCE:
        st = k->kernel ? px_parallel_reduce(k->space, k->label, k->policy, k->kernel, k->args,
                                            k->args_size, k->reducer, k->result)
                       : px_parallel_reduce_fn(k->space, k->label, k->policy, k->reduce_fn, k->ctx,
                                               k->reducer, k->result);
        break;
    default:
        st = k->kernel ? px_parallel_scan(k->space, k->label, k->policy, k->kernel, k->args,
                                          k->args_size, k->reducer, k->result)
                       : px_parallel_scan_fn(k->space, k->label, k->policy, k->scan_fn, k->ctx,
                                             k->reducer, k->result);
        break;
    }
    if (on_stream) {
        pxi_launch_set_stream(NULL);
        return st;
    }
    /* A device launch from a CPU worker (no stream of its own) returns before the kernel ends;
     * the op's writes are done only once the space has drained. */
    if (st == PX_OK && k->device_space)
        st = px_fence(k->space);
    return st;
}

static void kop_cleanup(void *arg)
{
    kop *k = arg;
    pxi_free(k->heap_args);
    pxi_pool_put(&k->e->kop_pool, k);
}

typedef struct kop_desc {
    px_kernel_kind kind;
    const char *caller;
    px_space *space;
    const char *label;
    px_range_policy policy;
    const px_kernel *kernel;
    const void *args;
    size_t args_size;
    px_for_fn for_fn;
    px_reduce_fn reduce_fn;
    px_scan_fn scan_fn;
    void *ctx;
    const px_reducer *reducer;
    void *result;
    int result_optional;
    px_var *const *reads;
    size_t n_reads;
    px_var *const *writes;
    size_t n_writes;
} kop_desc;

static int kop_push(px_engine *e, const kop_desc *d)
{
    const char *caller = d->caller;
    int rc = pxi_engine_validate(e, caller);
    if (rc != PX_OK)
        return rc;
    px_space *s = d->space ? d->space : px_default_space();
    if (!s) {
        PXI_ERROR("%s: no space given and no default space (is the runtime initialized?)", caller);
        return PX_ENOTINIT;
    }
    if ((rc = px_range_validate(d->policy)) != PX_OK) {
        PXI_ERROR("%s: invalid range policy [%lld, %lld) chunk %lld", caller,
                  (long long)d->policy.begin, (long long)d->policy.end,
                  (long long)d->policy.chunk_size);
        return rc;
    }
    if ((d->n_reads > 0 && !d->reads) || (d->n_writes > 0 && !d->writes)) {
        PXI_ERROR("%s: a Var list is NULL with a nonzero count", caller);
        return PX_EFAULT;
    }
    if (d->kernel) {
        const px_kernel *k = d->kernel;
        if (k->magic != PX_KERNEL_MAGIC || k->kind != d->kind) {
            PXI_ERROR("%s: kernel %p is not a kernel of the right kind", caller, (const void *)k);
            return PX_EINVAL;
        }
        if (d->args_size != k->args_size) {
            PXI_ERROR("%s: args_size %zu != kernel '%s' args size %zu", caller, d->args_size,
                      k->name ? k->name : "?", k->args_size);
            return PX_EINVAL;
        }
        if (d->args_size > 0 && !d->args) {
            PXI_ERROR("%s: args is NULL with args_size %zu", caller, d->args_size);
            return PX_EFAULT;
        }
    } else if ((d->kind == PX_KERNEL_FOR && !d->for_fn) ||
               (d->kind == PX_KERNEL_REDUCE && !d->reduce_fn) ||
               (d->kind == PX_KERNEL_SCAN && !d->scan_fn)) {
        PXI_ERROR("%s: kernel function is NULL", caller);
        return PX_EFAULT;
    }
    if (d->kind != PX_KERNEL_FOR) {
        if (!d->reducer || (!d->result && !d->result_optional)) {
            PXI_ERROR("%s: %s is NULL", caller, d->reducer ? "result" : "reducer");
            return PX_EFAULT;
        }
        if ((rc = px_reducer_validate(d->reducer)) != PX_OK) {
            PXI_ERROR("%s: invalid reducer", caller);
            return rc;
        }
        if (d->kernel && d->kernel->value_size != d->reducer->value_size) {
            PXI_ERROR("%s: reducer value size %zu != kernel value size %zu", caller,
                      d->reducer->value_size, d->kernel->value_size);
            return PX_EINVAL;
        }
    }
    int device = !px_space_host_accessible(s);
    if (device && !d->kernel) {
        PXI_ERROR("%s: space '%s' cannot run host function kernels", caller, px_space_name(s));
        return PX_EINVAL;
    }
    px_context ctx = {PX_DEV_CPU, 0};
    if (device) {
        int dev = pxi_config_get()->device_id;
        ctx.type = PX_DEV_CUDA;
        ctx.device_id = dev >= 0 ? dev : 0;
    }
    kop *k = pxi_pool_get(&e->kop_pool);
    if (!k) {
        PXI_ERROR("%s: out of memory", caller);
        return PX_ENOMEM;
    }
    memset(k, 0, offsetof(kop, inline_args));
    k->e = e;
    k->kind = d->kind;
    k->space = s;
    k->device_space = device;
    k->policy = d->policy;
    k->kernel = d->kernel;
    k->for_fn = d->for_fn;
    k->reduce_fn = d->reduce_fn;
    k->scan_fn = d->scan_fn;
    k->ctx = d->ctx;
    k->reducer = d->reducer;
    k->result = d->result;
    k->args_size = d->args_size;
    if (d->args_size > KOP_INLINE_ARGS) {
        k->heap_args = pxi_malloc(d->args_size);
        if (!k->heap_args) {
            pxi_pool_put(&e->kop_pool, k);
            PXI_ERROR("%s: out of memory copying %zu bytes of arguments", caller, d->args_size);
            return PX_ENOMEM;
        }
        memcpy(k->heap_args, d->args, d->args_size);
        k->args = k->heap_args;
    } else {
        if (d->args_size)
            memcpy(k->inline_args, d->args, d->args_size);
        k->args = k->inline_args;
    }
    const char *label = d->label && d->label[0]        ? d->label
                        : d->kernel && d->kernel->name ? d->kernel->name
                                                       : caller;
    snprintf(k->label, sizeof k->label, "%s", label);
    pxi_push p = {.kind = PXI_OP_SYNC,
                  .sfn = kop_run,
                  .arg = k,
                  .cleanup = kop_cleanup,
                  .ctx = ctx,
                  .reads = d->reads,
                  .n_reads = d->n_reads,
                  .writes = d->writes,
                  .n_writes = d->n_writes,
                  .prop = PX_FN_NORMAL,
                  .priority = 0,
                  .name = k->label,
                  .caller = caller,
                  /* One trampoline runs every kernel: a cost measured for it would mix them. */
                  .no_inline = 1};
    rc = pxi_engine_push(e, &p);
    if (rc != PX_OK) {
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
    if (!k) {
        PXI_ERROR("px_engine_push_parallel_for: kernel is NULL");
        return PX_EFAULT;
    }
    kop_desc d = {.kind = PX_KERNEL_FOR,
                  .caller = "px_engine_push_parallel_for",
                  .space = s,
                  .label = label,
                  .policy = p,
                  .kernel = k,
                  .args = args,
                  .args_size = args_size,
                  .reads = reads,
                  .n_reads = n_reads,
                  .writes = writes,
                  .n_writes = n_writes};
    return kop_push(e, &d);
}

int px_engine_push_parallel_for_fn(px_engine *e, px_space *s, const char *label, px_range_policy p,
                                   px_for_fn fn, void *ctx, px_var *const *reads, size_t n_reads,
                                   px_var *const *writes, size_t n_writes)
{
    kop_desc d = {.kind = PX_KERNEL_FOR,
                  .caller = "px_engine_push_parallel_for_fn",
                  .space = s,
                  .label = label,
                  .policy = p,
                  .for_fn = fn,
                  .ctx = ctx,
                  .reads = reads,
                  .n_reads = n_reads,
                  .writes = writes,
                  .n_writes = n_writes};
    return kop_push(e, &d);
}

int px_engine_push_parallel_reduce(px_engine *e, px_space *s, const char *label, px_range_policy p,
                                   const px_kernel *k, const void *args, size_t args_size,
                                   const px_reducer *r, void *result, px_var *const *reads,
                                   size_t n_reads, px_var *const *writes, size_t n_writes)
{
    if (!k) {
        PXI_ERROR("px_engine_push_parallel_reduce: kernel is NULL");
        return PX_EFAULT;
    }
    kop_desc d = {.kind = PX_KERNEL_REDUCE,
                  .caller = "px_engine_push_parallel_reduce",
                  .space = s,
                  .label = label,
                  .policy = p,
                  .kernel = k,
                  .args = args,
                  .args_size = args_size,
                  .reducer = r,
                  .result = result,
                  .reads = reads,
                  .n_reads = n_reads,
                  .writes = writes,
                  .n_writes = n_writes};
    return kop_push(e, &d);
}

int px_engine_push_parallel_reduce_fn(px_engine *e, px_space *s, const char *label,
                                      px_range_policy p, px_reduce_fn fn, void *ctx,
                                      const px_reducer *r, void *result, px_var *const *reads,
                                      size_t n_reads, px_var *const *writes, size_t n_writes)
{
    kop_desc d = {.kind = PX_KERNEL_REDUCE,
                  .caller = "px_engine_push_parallel_reduce_fn",
                  .space = s,
                  .label = label,
                  .policy = p,
                  .reduce_fn = fn,
                  .ctx = ctx,
                  .reducer = r,
                  .result = result,
                  .reads = reads,
                  .n_reads = n_reads,
                  .writes = writes,
                  .n_writes = n_writes};
    return kop_push(e, &d);
}

int px_engine_push_parallel_scan(px_engine *e, px_space *s, const char *label, px_range_policy p,
                                 const px_kernel *k, const void *args, size_t args_size,
                                 const px_reducer *r, void *total, px_var *const *reads,
                                 size_t n_reads, px_var *const *writes, size_t n_writes)
{
    if (!k) {
        PXI_ERROR("px_engine_push_parallel_scan: kernel is NULL");
        return PX_EFAULT;
    }
    kop_desc d = {.kind = PX_KERNEL_SCAN,
                  .caller = "px_engine_push_parallel_scan",
                  .space = s,
                  .label = label,
                  .policy = p,
                  .kernel = k,
                  .args = args,
                  .args_size = args_size,
                  .reducer = r,
                  .result = total,
                  .result_optional = 1,
                  .reads = reads,
                  .n_reads = n_reads,
                  .writes = writes,
                  .n_writes = n_writes};
    return kop_push(e, &d);
}

int px_engine_push_parallel_scan_fn(px_engine *e, px_space *s, const char *label, px_range_policy p,
                                    px_scan_fn fn, void *ctx, const px_reducer *r, void *total,
                                    px_var *const *reads, size_t n_reads, px_var *const *writes,
                                    size_t n_writes)
{
    kop_desc d = {.kind = PX_KERNEL_SCAN,
                  .caller = "px_engine_push_parallel_scan_fn",
                  .space = s,
                  .label = label,
                  .policy = p,
                  .scan_fn = fn,
                  .ctx = ctx,
                  .reducer = r,
                  .result = total,
                  .result_optional = 1,
                  .reads = reads,
                  .n_reads = n_reads,
                  .writes = writes,
                  .n_writes = n_writes};
    return kop_push(e, &d);
}
