/* core/launch.c - the public launch calls. Each validates at the boundary, before any side
 * effect (STYLE.md section 3), calls the tools hooks, and hands a pxi_launch to the space's ops.
 * An empty range never reaches the backend: core writes the identity itself, so every backend
 * gets begin < end. */
#include <string.h>

#include "core/log.h"
#include "core/registry.h"
#include "core/runtime.h"
#include "core/tools.h"
#include "policy/range.h"

static const char *const kind_names[] = {"", "px_parallel_for", "px_parallel_reduce",
                                         "px_parallel_scan"};

/* A kernel's name for messages (a hand-made px_kernel may leave it NULL). */
static const char *kname(const px_kernel *k)
{
    return k->name ? k->name : "(unnamed)";
}

/* The calling thread's launch stream (see pxi_launch_set_stream); only engine GPU workers set
 * it, and only around one launch. */
static _Thread_local void *launch_stream;

void pxi_launch_set_stream(void *stream)
{
    launch_stream = stream;
}

static int check_reducer(const px_reducer *r, void *result, int result_required, const char *caller,
                         const char *label)
{
    if (!r) {
        PXI_ERROR("%s(\"%s\"): reducer is NULL", caller, label);
        return PX_EFAULT;
    }
    int rc = px_reducer_validate(r);
    if (rc != PX_OK) {
        PXI_ERROR("%s(\"%s\"): invalid reducer '%s' (value_size %zu, value_align %zu, "
                  "identity %s, join %s, op %d, type %d; see px_reducer_validate)",
                  caller, label, r->name ? r->name : "(unnamed)", r->value_size, r->value_align,
                  r->identity ? "set" : "NULL", r->join ? "set" : "NULL", (int)r->op, (int)r->type);
        return rc;
    }
    if (result_required && !result) {
        PXI_ERROR("%s(\"%s\"): result pointer is NULL", caller, label);
        return PX_EFAULT;
    }
    return PX_OK;
}

/* Validate, resolve the space, run. l->kind, host entry, ctx, reducer and result are set by
 * the caller; l->label may be NULL or empty and is replaced by @dflt. */
static int launch(px_space *s, pxi_launch *l, const char *dflt)
{
    const char *caller = kind_names[l->kind];
    if (!l->label || !l->label[0])
        l->label = dflt;
    int rc;
    s = pxi_space_resolve(s, caller, &rc);
    if (!s)
        return rc;
    rc = pxi_range_check(&l->policy, l->label);
    if (rc != PX_OK)
        return rc;
    if (l->kind != PX_KERNEL_FOR) {
        rc = check_reducer(l->reducer, l->result, l->kind == PX_KERNEL_REDUCE, caller, l->label);
        if (rc != PX_OK)
            return rc;
    }
    if (l->kernel) {
        if (l->kernel->kind != PX_KERNEL_FOR && l->reducer &&
            l->kernel->value_size != l->reducer->value_size) {
            PXI_ERROR("%s(\"%s\"): kernel '%s' folds %zu-byte values but reducer '%s' has "
                      "%zu-byte values",
                      caller, l->label, kname(l->kernel), l->kernel->value_size,
                      l->reducer->name ? l->reducer->name : "(unnamed)", l->reducer->value_size);
            return PX_EINVAL;
        }
        int has_host = l->kind == PX_KERNEL_FOR      ? l->host_for != NULL
                       : l->kind == PX_KERNEL_REDUCE ? l->host_reduce != NULL
                                                     : l->host_scan != NULL;
        if (s->ops->host_accessible && !has_host) {
            PXI_ERROR("%s(\"%s\"): kernel '%s' has no host entry for space '%s'", caller, l->label,
                      kname(l->kernel), s->ops->name);
            return PX_EINVAL;
        }
        if (!s->ops->host_accessible && !l->kernel->device) {
            PXI_ERROR("%s(\"%s\"): kernel '%s' was not compiled for space '%s' (compile its file "
                      "with nvcc)",
                      caller, l->label, kname(l->kernel), s->ops->name);
            return PX_EINVAL;
        }
    } else if (!s->ops->host_accessible) {
        PXI_ERROR("%s_fn(\"%s\"): host function kernels cannot run on space '%s'; use a "
                  "PX_FOR/PX_REDUCE/PX_SCAN kernel",
                  caller, l->label, s->ops->name);
        return PX_EINVAL;
    }

    uint64_t kid = 0;
    int tools = pxi_tools_active();
    if (tools)
        kid = pxi_tools_begin_parallel(l->kind, l->label, s);
    if (l->policy.begin == l->policy.end) {
        /* Nothing to run: a reduce or scan reports the identity, overwriting the result. */
        if (l->kind != PX_KERNEL_FOR && l->result)
            l->reducer->identity(l->result);
        rc = PX_OK;
    } else {
        if (!l->stream)
            l->stream = launch_stream;
        rc = s->ops->launch(l);
    }
    if (tools)
        pxi_tools_end_parallel(l->kind, kid);
    return rc;
}

int px_parallel_for_fn(px_space *s, const char *label, px_range_policy p, px_for_fn fn, void *ctx)
{
    if (!fn) {
        PXI_ERROR("px_parallel_for_fn(\"%s\"): fn is NULL", label ? label : "");
        return PX_EFAULT;
    }
    pxi_launch l = {.kind = PX_KERNEL_FOR, .label = label, .policy = p, .host_for = fn, .ctx = ctx};
    return launch(s, &l, "px_parallel_for_fn");
}

int px_parallel_reduce_fn(px_space *s, const char *label, px_range_policy p, px_reduce_fn fn,
                          void *ctx, const px_reducer *r, void *result)
{
    if (!fn) {
        PXI_ERROR("px_parallel_reduce_fn(\"%s\"): fn is NULL", label ? label : "");
        return PX_EFAULT;
    }
    pxi_launch l = {.kind = PX_KERNEL_REDUCE,
                    .label = label,
                    .policy = p,
                    .host_reduce = fn,
                    .ctx = ctx,
                    .reducer = r,
                    .result = result};
    return launch(s, &l, "px_parallel_reduce_fn");
}

int px_parallel_scan_fn(px_space *s, const char *label, px_range_policy p, px_scan_fn fn, void *ctx,
                        const px_reducer *r, void *total)
{
    if (!fn) {
        PXI_ERROR("px_parallel_scan_fn(\"%s\"): fn is NULL", label ? label : "");
        return PX_EFAULT;
    }
    pxi_launch l = {.kind = PX_KERNEL_SCAN,
                    .label = label,
                    .policy = p,
                    .host_scan = fn,
                    .ctx = ctx,
                    .reducer = r,
                    .result = total};
    return launch(s, &l, "px_parallel_scan_fn");
}

static int check_kernel(const px_kernel *k, px_kernel_kind kind, const void *args, size_t args_size,
                        const char *caller)
{
    if (!k) {
        PXI_ERROR("%s: kernel is NULL", caller);
        return PX_EFAULT;
    }
    if (k->magic != PX_KERNEL_MAGIC) {
        PXI_ERROR("%s: the kernel pointer does not point to a px_kernel (bad magic)", caller);
        return PX_EINVAL;
    }
    if (k->kind != kind) {
        PXI_ERROR("%s: kernel '%s' is a %s kernel", caller, kname(k),
                  k->kind == PX_KERNEL_FOR      ? "PX_FOR"
                  : k->kind == PX_KERNEL_REDUCE ? "PX_REDUCE"
                  : k->kind == PX_KERNEL_SCAN   ? "PX_SCAN"
                                                : "unknown");
        return PX_EINVAL;
    }
    if (args_size != k->args_size) {
        PXI_ERROR("%s: kernel '%s' takes %zu bytes of arguments, got %zu", caller, kname(k),
                  k->args_size, args_size);
        return PX_EINVAL;
    }
    if (!args && args_size > 0) {
        PXI_ERROR("%s: kernel '%s': args is NULL", caller, kname(k));
        return PX_EFAULT;
    }
    return PX_OK;
}

int px_parallel_for(px_space *s, const char *label, px_range_policy p, const px_kernel *k,
                    const void *args, size_t args_size)
{
    int rc = check_kernel(k, PX_KERNEL_FOR, args, args_size, "px_parallel_for");
    if (rc != PX_OK)
        return rc;
    pxi_launch l = {.kind = PX_KERNEL_FOR,
                    .label = label,
                    .policy = p,
                    .host_for = k->host_for,
                    .ctx = (void *)(uintptr_t)args, /* host entries only read args */
                    .kernel = k,
                    .args_size = args_size};
    return launch(s, &l, kname(k));
}

int px_parallel_reduce(px_space *s, const char *label, px_range_policy p, const px_kernel *k,
                       const void *args, size_t args_size, const px_reducer *r, void *result)
{
    int rc = check_kernel(k, PX_KERNEL_REDUCE, args, args_size, "px_parallel_reduce");
    if (rc != PX_OK)
        return rc;
    pxi_launch l = {.kind = PX_KERNEL_REDUCE,
                    .label = label,
                    .policy = p,
                    .host_reduce = k->host_reduce,
                    .ctx = (void *)(uintptr_t)args, /* host entries only read args */
                    .kernel = k,
                    .args_size = args_size,
                    .reducer = r,
                    .result = result};
    return launch(s, &l, kname(k));
}

int px_parallel_scan(px_space *s, const char *label, px_range_policy p, const px_kernel *k,
                     const void *args, size_t args_size, const px_reducer *r, void *total)
{
    int rc = check_kernel(k, PX_KERNEL_SCAN, args, args_size, "px_parallel_scan");
    if (rc != PX_OK)
        return rc;
    pxi_launch l = {.kind = PX_KERNEL_SCAN,
                    .label = label,
                    .policy = p,
                    .host_scan = k->host_scan,
                    .ctx = (void *)(uintptr_t)args, /* host entries only read args */
                    .kernel = k,
                    .args_size = args_size,
                    .reducer = r,
                    .result = total};
    return launch(s, &l, kname(k));
}
