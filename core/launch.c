/* core/launch.c - the one launch path (core/launch.h): pxi_launch_prepare validates a launch at
 * the boundary, before any side effect (STYLE.md section 3), and pxi_launch_run calls the tools
 * hooks and hands the launch to the space's ops. The public px_parallel_* calls are thin
 * wrappers that build a pxi_launch; the engine's kernel ops (core/engine/kernel_ops.c) prepare
 * at push and run on a worker. An empty range never reaches the backend: core writes the
 * identity itself, so every backend gets a non-empty range. */
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "core/instance.h"
#include "core/launch.h"
#include "core/piece_hook.h"
#include "core/registry.h"
#include "core/runtime.h"
#include "core/team.h"
#include "core/tools.h"
#include "parex/mdrange.h"
#include "policy/mdrange.h"
#include "policy/range.h"

PXI_PIECE_HOOK_TLS void (*pxi_tl_piece_hook)(void);

#if defined(__GNUC__)
#define LAUNCH_NOINLINE __attribute__((noinline))
#else
#define LAUNCH_NOINLINE
#endif

/* A kernel's name for messages (a hand-made px_kernel may leave it NULL). */
static const char *kname(const px_kernel *k)
{
    return k->name ? k->name : "(unnamed)";
}

/* The C type a px_value_type stands for, for messages. */
static const char *value_type_name(px_value_type t)
{
    switch (t) {
    case PX_VALUE_F64:
        return "double";
    case PX_VALUE_F32:
        return "float";
    case PX_VALUE_I64:
        return "int64_t";
    case PX_VALUE_U64:
        return "uint64_t";
    case PX_VALUE_INT:
        return "int";
    case PX_VALUE_VALLOC_F64:
        return "px_valloc_f64";
    case PX_VALUE_CUSTOM:
        break;
    }
    return "custom";
}

static int check_reducer(const px_reducer *r, void *result, int result_required, const char *caller,
                         const char *label)
{
    if (!r) {
        PXI_ERROR("%s(\"%s\"): reducer is NULL", caller, label);
        return PX_EFAULT;
    }
    int rc = px_reducer_validate(r);
    if (rc != PX_OK && r->value_size > PX_REDUCER_MAX_VALUE_BYTES) {
        /* The one limit a correct reducer can hit: say which, and what to use instead. */
        PXI_ERROR("%s(\"%s\"): invalid reducer '%s': value_size %zu > "
                  "PX_REDUCER_MAX_VALUE_BYTES (%d); to accumulate into an array, use the "
                  "scatter-add API (parex/scatter.h: px_scatter_create, px_scatter_add)",
                  caller, label, r->name ? r->name : "(unnamed)", r->value_size,
                  PX_REDUCER_MAX_VALUE_BYTES);
        return rc;
    }
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

/* Whether the host entry the launch runs is set: one case per policy kind (a kind with its own
 * host function type checks its own entry here). */
static int has_host_entry(const pxi_launch *l)
{
    switch (l->policy_kind) {
    case PXI_POLICY_RANGE:
        return l->kind == PX_KERNEL_FOR      ? l->host_for != NULL
               : l->kind == PX_KERNEL_REDUCE ? l->host_reduce != NULL
                                             : l->host_scan != NULL;
    case PXI_POLICY_TEAM:
        return l->kind == PX_KERNEL_FOR ? l->host_team_for != NULL : l->host_team_reduce != NULL;
    case PXI_POLICY_MDRANGE:
        return l->kind == PX_KERNEL_FOR      ? l->host_md_for != NULL
               : l->kind == PX_KERNEL_REDUCE ? l->host_md_reduce != NULL
                                             : 0;
    }
    return 0;
}

/* A single-source team kernel's checks (check_body's for PX_TEAM_FOR / PX_TEAM_REDUCE). */
static int check_team_kernel(const pxi_launch *l, const char *caller)
{
    const px_team_kernel *k = l->team_kernel;
    if (!k) {
        PXI_ERROR("%s: kernel is NULL", caller);
        return PX_EFAULT;
    }
    const char *name = k->name ? k->name : "(unnamed)";
    if (k->magic != PX_TEAM_KERNEL_MAGIC) {
        PXI_ERROR("%s: the kernel pointer does not point to a px_team_kernel (bad magic)", caller);
        return PX_EINVAL;
    }
    if (k->kind != l->kind) {
        PXI_ERROR("%s: kernel '%s' is a %s kernel", caller, name,
                  k->kind == PX_KERNEL_FOR ? "PX_TEAM_FOR" : "PX_TEAM_REDUCE");
        return PX_EINVAL;
    }
    if (l->args_size != k->args_size) {
        PXI_ERROR("%s: kernel '%s' takes %zu bytes of arguments, got %zu", caller, name,
                  k->args_size, l->args_size);
        return PX_EINVAL;
    }
    if (!l->ctx && l->args_size > 0) {
        PXI_ERROR("%s: kernel '%s': args is NULL", caller, name);
        return PX_EFAULT;
    }
    return PX_OK;
}

/* The space-independent checks of a team policy. */
static int check_team_policy(const px_team_policy *p, const char *caller, const char *label)
{
    if (p->league_size < 0) {
        PXI_ERROR("%s(\"%s\"): league_size %lld is negative", caller, label,
                  (long long)p->league_size);
        return PX_EINVAL;
    }
    if (p->team_size < 0) {
        PXI_ERROR("%s(\"%s\"): team_size %d is negative (0 lets the space choose)", caller, label,
                  p->team_size);
        return PX_EINVAL;
    }
    if (p->vector_length < 0 || p->vector_length > PX_TEAM_MAX_VECTOR_LENGTH) {
        PXI_ERROR("%s(\"%s\"): vector_length %d is outside 0..%d (PX_TEAM_MAX_VECTOR_LENGTH; 0 "
                  "lets the space choose)",
                  caller, label, p->vector_length, PX_TEAM_MAX_VECTOR_LENGTH);
        return PX_EINVAL;
    }
    if (p->schedule != PX_SCHEDULE_STATIC && p->schedule != PX_SCHEDULE_DYNAMIC) {
        PXI_ERROR("%s(\"%s\"): unknown schedule %d (PX_SCHEDULE_STATIC or PX_SCHEDULE_DYNAMIC)",
                  caller, label, (int)p->schedule);
        return PX_EINVAL;
    }
    return PX_OK;
}

/* A team launch against what space @s can give; on PX_OK resolves *l->team_plan. */
static int check_team_limits(pxi_launch *l, const px_space *s, const char *caller)
{
    const px_team_policy *p = l->team;
    if (!s->ops->team_limits) {
        PXI_ERROR("%s(\"%s\"): space '%s' does not run team launches", caller, l->label,
                  s->ops->name);
        return PX_EINVAL;
    }
    pxi_team_limits lim;
    int rc = pxi_space_team_limits_of(s, &lim); /* an instance's own */
    if (rc != PX_OK)
        return rc;
    int ts = p->team_size > 0 ? p->team_size : lim.default_team_size;
    if (ts > lim.max_team_size) {
        PXI_ERROR("%s(\"%s\"): team_size %d is above space '%s''s limit of %d (%s)", caller,
                  l->label, ts, s->ops->name, lim.max_team_size,
                  lim.team_limit_why ? lim.team_limit_why : "its largest team");
        return PX_EINVAL;
    }
    if (p->vector_length > lim.max_vector_length) {
        PXI_ERROR("%s(\"%s\"): vector_length %d is above space '%s''s limit of %d", caller,
                  l->label, p->vector_length, s->ops->name, lim.max_vector_length);
        return PX_EINVAL;
    }
    size_t bytes = pxi_team_scratch_bytes(p, ts);
    if (bytes > lim.max_scratch) {
        PXI_ERROR("%s(\"%s\"): scratch of %zu bytes per team plus %zu per member (x %d "
                  "members, each rounded to 64 bytes) is above space '%s''s limit of %zu bytes "
                  "per team",
                  caller, l->label, p->scratch_per_team, p->scratch_per_thread, ts, s->ops->name,
                  lim.max_scratch);
        return PX_EINVAL;
    }
    int n = pxi_space_concurrency_of(s); /* core/instance.h */
    *l->team_plan = pxi_plan_team(p, l->kind, n, &lim,
                                  s->ops->host_accessible ? PXI_PLAN_POOL : PXI_PLAN_DEVICE);
    return PX_OK;
}

/* The body's own checks, before the runtime is consulted (a NULL function is PX_EFAULT even
 * before px_initialize). */
static int check_body(const pxi_launch *l, const char *caller)
{
    if (l->policy_kind == PXI_POLICY_TEAM && l->body == PXI_BODY_KERNEL)
        return check_team_kernel(l, caller);
    if (l->body == PXI_BODY_FN) {
        if (!has_host_entry(l)) {
            PXI_ERROR("%s(\"%s\"): fn is NULL", caller, l->label ? l->label : "");
            return PX_EFAULT;
        }
        return PX_OK;
    }
    const px_kernel *k = l->kernel;
    if (!k) {
        PXI_ERROR("%s: kernel is NULL", caller);
        return PX_EFAULT;
    }
    if (k->magic != PX_KERNEL_MAGIC) {
        PXI_ERROR("%s: the kernel pointer does not point to a px_kernel (bad magic)", caller);
        return PX_EINVAL;
    }
    if (k->kind != l->kind) {
        PXI_ERROR("%s: kernel '%s' is a %s kernel", caller, kname(k),
                  k->kind == PX_KERNEL_FOR      ? "PX_FOR"
                  : k->kind == PX_KERNEL_REDUCE ? "PX_REDUCE"
                  : k->kind == PX_KERNEL_SCAN   ? "PX_SCAN"
                                                : "unknown");
        return PX_EINVAL;
    }
    if (l->args_size != k->args_size) {
        PXI_ERROR("%s: kernel '%s' takes %zu bytes of arguments, got %zu", caller, kname(k),
                  k->args_size, l->args_size);
        return PX_EINVAL;
    }
    if (!l->ctx && l->args_size > 0) {
        PXI_ERROR("%s: kernel '%s': args is NULL", caller, kname(k));
        return PX_EFAULT;
    }
    return PX_OK;
}

/* The policy, by kind: one case per policy kind. */
static int check_policy(const pxi_launch *l, const char *caller)
{
    if (PXI_LIKELY(l->policy_kind == PXI_POLICY_RANGE))
        return pxi_range_check(l->range, l->label);
    if (l->policy_kind == PXI_POLICY_TEAM)
        return check_team_policy(l->team, caller, l->label);
    if (l->policy_kind == PXI_POLICY_MDRANGE) {
        char what[160];
        snprintf(what, sizeof what, "%s(\"%s\")", caller, l->label);
        return pxi_mdrange_check(l->md, what);
    }
    PXI_ERROR("%s(\"%s\"): unknown policy kind %d", caller, l->label, (int)l->policy_kind);
    return PX_EINVAL;
}

/* A kernel's rank against the policy's: a 1-D kernel (rank 0) goes with a range policy, a
 * PX_FOR_<N>D / PX_REDUCE_<N>D kernel with an MDRange policy of rank N. */
static int check_shape(const pxi_launch *l, const char *caller)
{
    if (l->body != PXI_BODY_KERNEL)
        return PX_OK;
    const px_kernel *k = l->kernel;
    if (l->policy_kind == PXI_POLICY_MDRANGE && k->rank != l->md->rank) {
        if (k->rank == 0)
            PXI_ERROR("%s(\"%s\"): kernel '%s' is a 1-D kernel (PX_FOR/PX_REDUCE) but the "
                      "policy is an MDRange of rank %d; use px_parallel_for/px_parallel_reduce",
                      caller, l->label, kname(k), l->md->rank);
        else
            PXI_ERROR("%s(\"%s\"): kernel '%s' has rank %d but the MDRange policy has rank %d",
                      caller, l->label, kname(k), k->rank, l->md->rank);
        return PX_EINVAL;
    }
    if (l->policy_kind == PXI_POLICY_RANGE && k->rank != 0) {
        PXI_ERROR("%s(\"%s\"): kernel '%s' is a rank-%d MDRange kernel but the policy is a 1-D "
                  "range; use px_parallel_for_md/px_parallel_reduce_md",
                  caller, l->label, kname(k), k->rank);
        return PX_EINVAL;
    }
    return PX_OK;
}

/* Whether the body can run on space @s. */
static int check_placement(const pxi_launch *l, const px_space *s, const char *caller)
{
    const px_kernel *k = l->kernel;
    if (l->policy_kind == PXI_POLICY_TEAM && l->body == PXI_BODY_KERNEL) {
        const px_team_kernel *tk = l->team_kernel;
        const char *name = tk->name ? tk->name : "(unnamed)";
        if (s->ops->host_accessible && !has_host_entry(l)) {
            PXI_ERROR("%s(\"%s\"): kernel '%s' has no host entry for space '%s'", caller, l->label,
                      name, s->ops->name);
            return PX_EINVAL;
        }
        if (!s->ops->team_limits) {
            PXI_ERROR("%s(\"%s\"): space '%s' does not run team launches", caller, l->label,
                      s->ops->name);
            return PX_EINVAL;
        }
        if (!s->ops->host_accessible && !tk->device) {
            PXI_ERROR("%s(\"%s\"): kernel '%s' was not compiled for space '%s'", caller, l->label,
                      name, s->ops->name);
            return PX_EINVAL;
        }
        return PX_OK;
    }
    if (l->body == PXI_BODY_FN) {
        if (!s->ops->host_accessible) {
            PXI_ERROR("%s(\"%s\"): host function kernels cannot run on space '%s'; use a "
                      "PX_FOR/PX_REDUCE/PX_SCAN kernel",
                      caller, l->label, s->ops->name);
            return PX_EINVAL;
        }
        return PX_OK;
    }
    if (s->ops->host_accessible && !has_host_entry(l)) {
        PXI_ERROR("%s(\"%s\"): kernel '%s' has no host entry for space '%s'", caller, l->label,
                  kname(k), s->ops->name);
        return PX_EINVAL;
    }
    if (!s->ops->host_accessible && !k->device) {
        PXI_ERROR("%s(\"%s\"): kernel '%s' was not compiled for space '%s' (compile its file "
                  "with nvcc)",
                  caller, l->label, kname(k), s->ops->name);
        return PX_EINVAL;
    }
    return PX_OK;
}

/* A kernel launch's host entry: the kernel's generated one for (kind, policy kind), NULL where
 * it has none (the one slot of the entry union, so exactly one is written). */
static void take_host_entry(pxi_launch *l)
{
    if (l->policy_kind == PXI_POLICY_TEAM) {
        if (l->kind == PX_KERNEL_FOR)
            l->host_team_for = l->team_kernel->host_for;
        else
            l->host_team_reduce = l->team_kernel->host_reduce;
        return;
    }
    const px_kernel *k = l->kernel;
    if (l->policy_kind == PXI_POLICY_MDRANGE) {
        int it = l->md->iterate == PX_ITERATE_LEFT ? 1 : 0;
        if (l->kind == PX_KERNEL_FOR)
            l->host_md_for = k->host_md_for[it];
        else if (l->kind == PX_KERNEL_REDUCE)
            l->host_md_reduce = k->host_md_reduce[it];
        else
            l->host_for = NULL; /* no MDRange scan: has_host_entry says so */
        return;
    }
    if (l->kind == PX_KERNEL_FOR)
        l->host_for = k->host_for;
    else if (l->kind == PX_KERNEL_REDUCE)
        l->host_reduce = k->host_reduce;
    else
        l->host_scan = k->host_scan;
}

/* pxi_launch_prepare's body, inlined into the direct path's launch() below so that a
 * px_parallel_* call makes one call into core and one into the backend. */
static inline int prepare(pxi_launch *l, const char *caller)
{
    int rc = check_body(l, caller);
    if (rc != PX_OK)
        return rc;
    if (!l->label || !l->label[0])
        l->label = l->body == PXI_BODY_FN ? caller
                   : l->policy_kind == PXI_POLICY_TEAM
                       ? (l->team_kernel->name ? l->team_kernel->name : "(unnamed)")
                       : kname(l->kernel);
    px_space *s = pxi_space_resolve(l->space, caller, &rc);
    if (!s)
        return rc;
    if ((rc = check_policy(l, caller)) != PX_OK)
        return rc;
    if ((rc = check_shape(l, caller)) != PX_OK)
        return rc;
    if (l->kind != PX_KERNEL_FOR) {
        rc = check_reducer(l->reducer, l->result, l->kind == PX_KERNEL_REDUCE, caller, l->label);
        if (rc != PX_OK)
            return rc;
        if (l->body == PXI_BODY_KERNEL && l->policy_kind == PXI_POLICY_TEAM &&
            l->team_kernel->value_size != l->reducer->value_size) {
            PXI_ERROR("%s(\"%s\"): team kernel folds %zu-byte values but reducer '%s' has "
                      "%zu-byte values",
                      caller, l->label, l->team_kernel->value_size,
                      l->reducer->name ? l->reducer->name : "(unnamed)", l->reducer->value_size);
            return PX_EINVAL;
        }
        if (l->body == PXI_BODY_KERNEL && l->policy_kind != PXI_POLICY_TEAM &&
            l->kernel->value_size != l->reducer->value_size) {
            PXI_ERROR("%s(\"%s\"): kernel '%s' folds %zu-byte values but reducer '%s' has "
                      "%zu-byte values",
                      caller, l->label, kname(l->kernel), l->kernel->value_size,
                      l->reducer->name ? l->reducer->name : "(unnamed)", l->reducer->value_size);
            return PX_EINVAL;
        }
        /* Same size is not same type: a double kernel with px_sum_i64 would join bit
         * patterns as integers. Custom types on either side are not checked. */
        px_value_type kt = PX_VALUE_CUSTOM;
        const char *kn = "";
        if (l->body == PXI_BODY_KERNEL && l->policy_kind == PXI_POLICY_TEAM) {
            kt = l->team_kernel->value_type;
            kn = l->team_kernel->name ? l->team_kernel->name : "(unnamed)";
        } else if (l->body == PXI_BODY_KERNEL) {
            kt = l->kernel->value_type;
            kn = kname(l->kernel);
        }
        if (kt != PX_VALUE_CUSTOM && l->reducer->type != PX_VALUE_CUSTOM &&
            kt != l->reducer->type) {
            PXI_ERROR("%s(\"%s\"): kernel '%s' folds %s values but reducer '%s' joins %s "
                      "values",
                      caller, l->label, kn, value_type_name(kt),
                      l->reducer->name ? l->reducer->name : "(unnamed)",
                      value_type_name(l->reducer->type));
            return PX_EINVAL;
        }
    }
    if (l->body == PXI_BODY_KERNEL)
        take_host_entry(l);
    if ((rc = check_placement(l, s, caller)) != PX_OK)
        return rc;
    if (l->policy_kind == PXI_POLICY_TEAM && (rc = check_team_limits(l, s, caller)) != PX_OK)
        return rc;
    l->space = s;
    l->stream = NULL;
    return PX_OK;
}

int pxi_launch_prepare(pxi_launch *l, const char *caller)
{
    return prepare(l, caller);
}

/* Whether the launch visits no index (one case per policy kind). */
static int launch_empty(const pxi_launch *l)
{
    if (PXI_LIKELY(l->policy_kind == PXI_POLICY_RANGE))
        return l->range->begin == l->range->end;
    if (l->policy_kind == PXI_POLICY_TEAM)
        return l->team->league_size == 0;
    if (l->policy_kind == PXI_POLICY_MDRANGE) {
        for (int d = 0; d < l->md->rank; ++d)
            if (l->md->lower[d] == l->md->upper[d])
                return 1;
        return 0;
    }
    return 1;
}

/* pxi_launch_run's body (inlined into launch() as prepare is). */
static inline int run(pxi_launch *l)
{
    px_space *s = l->space;
    uint64_t kid = 0;
    int tools = pxi_tools_active();
    if (tools)
        kid = pxi_tools_begin_parallel(l->kind, l->label, s);
    int rc;
    if (launch_empty(l)) {
        /* Nothing to run: a reduce or scan reports the identity, overwriting the result. */
        if (l->kind != PX_KERNEL_FOR && l->result)
            l->reducer->identity(l->result);
        rc = PX_OK;
    } else {
        rc = s->ops->launch(l);
    }
    if (tools)
        pxi_tools_end_parallel(l->kind, kid);
    return rc;
}

int pxi_launch_run(pxi_launch *l)
{
    return run(l);
}

/* Prepare and run: the direct path of every px_parallel_* call. One copy, out of line: the
 * entry points only build the descriptor (inlining this into each of them made launch.c's code
 * five times larger for no measurable gain). */
LAUNCH_NOINLINE static int launch(pxi_launch *l, const char *caller)
{
    int rc = prepare(l, caller);
    return rc != PX_OK ? rc : run(l);
}

int px_parallel_for_fn(px_space *s, const char *label, px_range_policy p, px_for_fn fn, void *ctx)
{
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_FOR, PXI_POLICY_RANGE, PXI_BODY_FN, label, s);
    l.range = &p;
    l.host_for = fn;
    l.ctx = ctx;
    return launch(&l, "px_parallel_for_fn");
}

int px_parallel_reduce_fn(px_space *s, const char *label, px_range_policy p, px_reduce_fn fn,
                          void *ctx, const px_reducer *r, void *result)
{
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_REDUCE, PXI_POLICY_RANGE, PXI_BODY_FN, label, s);
    l.range = &p;
    l.host_reduce = fn;
    l.ctx = ctx;
    l.reducer = r;
    l.result = result;
    return launch(&l, "px_parallel_reduce_fn");
}

int px_parallel_scan_fn(px_space *s, const char *label, px_range_policy p, px_scan_fn fn, void *ctx,
                        const px_reducer *r, void *total)
{
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_SCAN, PXI_POLICY_RANGE, PXI_BODY_FN, label, s);
    l.range = &p;
    l.host_scan = fn;
    l.ctx = ctx;
    l.reducer = r;
    l.result = total;
    return launch(&l, "px_parallel_scan_fn");
}

/* Kernel launches: ctx carries the args (host entries only read them). */
int px_parallel_for(px_space *s, const char *label, px_range_policy p, const px_kernel *k,
                    const void *args, size_t args_size)
{
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_FOR, PXI_POLICY_RANGE, PXI_BODY_KERNEL, label, s);
    l.range = &p;
    l.ctx = (void *)(uintptr_t)args;
    l.kernel = k;
    l.args_size = args_size;
    return launch(&l, "px_parallel_for");
}

int px_parallel_reduce(px_space *s, const char *label, px_range_policy p, const px_kernel *k,
                       const void *args, size_t args_size, const px_reducer *r, void *result)
{
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_REDUCE, PXI_POLICY_RANGE, PXI_BODY_KERNEL, label, s);
    l.range = &p;
    l.ctx = (void *)(uintptr_t)args;
    l.kernel = k;
    l.args_size = args_size;
    l.reducer = r;
    l.result = result;
    return launch(&l, "px_parallel_reduce");
}

int px_parallel_scan(px_space *s, const char *label, px_range_policy p, const px_kernel *k,
                     const void *args, size_t args_size, const px_reducer *r, void *total)
{
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_SCAN, PXI_POLICY_RANGE, PXI_BODY_KERNEL, label, s);
    l.range = &p;
    l.ctx = (void *)(uintptr_t)args;
    l.kernel = k;
    l.args_size = args_size;
    l.reducer = r;
    l.result = total;
    return launch(&l, "px_parallel_scan");
}

/* ---- team launches (parex/team.h) ------------------------------------------------------- */

int px_parallel_for_team_fn(px_space *s, const char *label, px_team_policy p, px_team_fn fn,
                            void *ctx)
{
    pxi_team_plan plan; /* written by pxi_launch_prepare */
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_FOR, PXI_POLICY_TEAM, PXI_BODY_FN, label, s);
    l.team = &p;
    l.host_team_for = fn;
    l.ctx = ctx;
    l.team_plan = &plan;
    return launch(&l, "px_parallel_for_team_fn");
}

int px_parallel_reduce_team_fn(px_space *s, const char *label, px_team_policy p,
                               px_team_reduce_fn fn, void *ctx, const px_reducer *r, void *result)
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
    return launch(&l, "px_parallel_reduce_team_fn");
}

int px_parallel_for_team(px_space *s, const char *label, px_team_policy p, const px_team_kernel *k,
                         const void *args, size_t args_size)
{
    pxi_team_plan plan; /* written by pxi_launch_prepare */
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_FOR, PXI_POLICY_TEAM, PXI_BODY_KERNEL, label, s);
    l.team = &p;
    l.ctx = (void *)(uintptr_t)args;
    l.team_kernel = k;
    l.args_size = args_size;
    l.team_plan = &plan;
    return launch(&l, "px_parallel_for_team");
}

int px_parallel_reduce_team(px_space *s, const char *label, px_team_policy p,
                            const px_team_kernel *k, const void *args, size_t args_size,
                            const px_reducer *r, void *result)
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
    return launch(&l, "px_parallel_reduce_team");
}

/* MDRange launches (parex/mdrange.h). */
int px_parallel_for_md_fn(px_space *s, const char *label, px_mdrange_policy p, px_md_for_fn fn,
                          void *ctx)
{
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_FOR, PXI_POLICY_MDRANGE, PXI_BODY_FN, label, s);
    l.md = &p;
    l.host_md_for = fn;
    l.ctx = ctx;
    return launch(&l, "px_parallel_for_md_fn");
}

int px_parallel_reduce_md_fn(px_space *s, const char *label, px_mdrange_policy p,
                             px_md_reduce_fn fn, void *ctx, const px_reducer *r, void *result)
{
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_REDUCE, PXI_POLICY_MDRANGE, PXI_BODY_FN, label, s);
    l.md = &p;
    l.host_md_reduce = fn;
    l.ctx = ctx;
    l.reducer = r;
    l.result = result;
    return launch(&l, "px_parallel_reduce_md_fn");
}

int px_parallel_for_md(px_space *s, const char *label, px_mdrange_policy p, const px_kernel *k,
                       const void *args, size_t args_size)
{
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_FOR, PXI_POLICY_MDRANGE, PXI_BODY_KERNEL, label, s);
    l.md = &p;
    l.ctx = (void *)(uintptr_t)args;
    l.kernel = k;
    l.args_size = args_size;
    return launch(&l, "px_parallel_for_md");
}

int px_parallel_reduce_md(px_space *s, const char *label, px_mdrange_policy p, const px_kernel *k,
                          const void *args, size_t args_size, const px_reducer *r, void *result)
{
    pxi_launch l;
    pxi_launch_init(&l, PX_KERNEL_REDUCE, PXI_POLICY_MDRANGE, PXI_BODY_KERNEL, label, s);
    l.md = &p;
    l.ctx = (void *)(uintptr_t)args;
    l.kernel = k;
    l.args_size = args_size;
    l.reducer = r;
    l.result = result;
    return launch(&l, "px_parallel_reduce_md");
}
