/* tests/check_launch.c - one launch path: every launch status, provoked through both ways to
 * launch (a direct px_parallel_* call, and px_engine_push_parallel_* followed by a wait), gives
 * the same status from each. The engine path must report a bad launch at push (with the status
 * the direct call returns), never later from a worker, and a good launch must compute the same
 * result through both paths.
 *
 * One table: each row names a kind (for / reduce / scan), a body (host function or px_kernel),
 * a space, a policy and one thing broken, and the status every path must return. Device rows
 * use "lt_dev", a space this program registers whose memory is not host accessible (the
 * registry accepts program-registered spaces, see core/init.c), and the cuda space when the
 * machine has one (otherwise those rows are skipped). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/wait.h"
#include "core/registry.h"
#include "px_test.h"

/* --- spaces registered by this program ---------------------------------------------------- */

/* What lt_dev's initialize was given (core fills it from the parsed settings). */
static pxi_space_config lt_seen_cfg;
static int lt_initialize_ok(const pxi_space_config *cfg)
{
    lt_seen_cfg = *cfg;
    return PX_OK;
}
static int lt_initialize_absent(const pxi_space_config *cfg)
{
    (void)cfg;
    return PX_ENODEV;
}
static int lt_finalize(void)
{
    return PX_OK;
}
static int lt_concurrency(void)
{
    return 1;
}
static int lt_fence(void)
{
    return PX_OK;
}
/* Only prepared launches reach a space; every row that names these spaces fails before. */
static int lt_launch_unreached(const pxi_launch *l)
{
    (void)l;
    return PX_EIO;
}
static void *lt_malloc(size_t bytes)
{
    return pxi_host_malloc(bytes);
}

static const pxi_space_ops lt_dev_ops = {
    .name = "lt_dev",
    .priority = -20,
    .host_accessible = 0,
    .initialize = lt_initialize_ok,
    .finalize = lt_finalize,
    .concurrency = lt_concurrency,
    .fence = lt_fence,
    .launch = lt_launch_unreached,
    .malloc = lt_malloc,
    .free = pxi_host_free,
    .deep_copy = pxi_host_deep_copy,
};
static const pxi_space_ops lt_absent_ops = {
    .name = "lt_absent",
    .priority = -21,
    .host_accessible = 1,
    .initialize = lt_initialize_absent,
    .finalize = lt_finalize,
    .concurrency = lt_concurrency,
    .fence = lt_fence,
    .launch = lt_launch_unreached,
    .malloc = lt_malloc,
    .free = pxi_host_free,
    .deep_copy = pxi_host_deep_copy,
};
PX_REGISTER_SPACE(lt_dev_ops, check_launch_anchor_lt_dev)
PX_REGISTER_SPACE(lt_absent_ops, check_launch_anchor_lt_absent)

/* The registry's handle of a registered space, available or not. */
static px_space *registered(const char *name)
{
    for (int i = 0; i < pxi_registry_count(); ++i) {
        px_space *s = pxi_registry_at(i);
        if (strcmp(px_space_name(s), name) == 0)
            return s;
    }
    return NULL;
}

/* --- bodies --------------------------------------------------------------------------------- */

#define N 100

typedef struct {
    int64_t *out;
} lt_args;

PX_FOR(lt_fill, lt_args, i, a)
{
    a->out[i] += 1;
}
PX_REDUCE(lt_sum, lt_args, int64_t, i, a, acc)
{
    (void)a;
    *acc += i;
}
PX_SCAN(lt_prefix, lt_args, int64_t, i, a, partial, final_pass)
{
    if (final_pass)
        a->out[i] = *partial;
    *partial += i;
}

static void fill_fn(int64_t b, int64_t e, void *ctx)
{
    int64_t *out = ctx;
    for (int64_t i = b; i < e; ++i)
        out[i] += 1;
}
static void sum_fn(int64_t b, int64_t e, void *ctx, void *acc)
{
    (void)ctx;
    for (int64_t i = b; i < e; ++i)
        *(int64_t *)acc += i;
}
static void prefix_fn(int64_t b, int64_t e, void *ctx, void *partial, int final_pass)
{
    int64_t *out = ctx;
    for (int64_t i = b; i < e; ++i) {
        if (final_pass)
            out[i] = *(int64_t *)partial;
        *(int64_t *)partial += i;
    }
}

/* --- the table ------------------------------------------------------------------------------ */

typedef enum { SP_DEFAULT, SP_DEV, SP_ABSENT, SP_CUDA } space_sel;
typedef enum { FN, KERNEL } body_sel;
typedef enum { K_GOOD, K_NULL, K_BAD_MAGIC, K_WRONG_KIND, K_NO_HOST } kernel_sel;
typedef enum { A_GOOD, A_SIZE_MISMATCH, A_NULL } args_sel;
typedef enum { R_GOOD, R_NULL, R_INVALID, R_WRONG_SIZE } reducer_sel;

typedef struct {
    const char *name;
    px_kernel_kind kind;
    body_sel body;
    space_sel space;
    px_range_policy policy;
    int fn_null;         /* FN: pass a NULL function */
    kernel_sel kernel;   /* KERNEL: which kernel */
    args_sel args;       /* KERNEL: args pointer and size */
    reducer_sel reducer; /* reduce/scan */
    int result_null;     /* reduce/scan: NULL result (total) */
    int expect;          /* status from both paths */
} launch_case;

#define GOOD_P                                                                                     \
    {                                                                                              \
        0, N, 0, PX_SCHEDULE_STATIC                                                                \
    }
#define EMPTY_P                                                                                    \
    {                                                                                              \
        7, 7, 0, PX_SCHEDULE_STATIC                                                                \
    }

static const launch_case cases[] = {
    /* good launches: every kind and body, plus empty ranges and scan's optional total */
    {"for fn", PX_KERNEL_FOR, FN, SP_DEFAULT, GOOD_P, 0, K_GOOD, A_GOOD, R_GOOD, 0, PX_OK},
    {"for kernel", PX_KERNEL_FOR, KERNEL, SP_DEFAULT, GOOD_P, 0, K_GOOD, A_GOOD, R_GOOD, 0, PX_OK},
    {"reduce fn", PX_KERNEL_REDUCE, FN, SP_DEFAULT, GOOD_P, 0, K_GOOD, A_GOOD, R_GOOD, 0, PX_OK},
    {"reduce kernel", PX_KERNEL_REDUCE, KERNEL, SP_DEFAULT, GOOD_P, 0, K_GOOD, A_GOOD, R_GOOD, 0,
     PX_OK},
    {"scan fn", PX_KERNEL_SCAN, FN, SP_DEFAULT, GOOD_P, 0, K_GOOD, A_GOOD, R_GOOD, 0, PX_OK},
    {"scan kernel", PX_KERNEL_SCAN, KERNEL, SP_DEFAULT, GOOD_P, 0, K_GOOD, A_GOOD, R_GOOD, 0,
     PX_OK},
    {"scan kernel, NULL total", PX_KERNEL_SCAN, KERNEL, SP_DEFAULT, GOOD_P, 0, K_GOOD, A_GOOD,
     R_GOOD, 1, PX_OK},
    {"reduce kernel, dynamic chunk 7",
     PX_KERNEL_REDUCE,
     KERNEL,
     SP_DEFAULT,
     {0, N, 7, PX_SCHEDULE_DYNAMIC},
     0,
     K_GOOD,
     A_GOOD,
     R_GOOD,
     0,
     PX_OK},
    {"reduce fn, empty range", PX_KERNEL_REDUCE, FN, SP_DEFAULT, EMPTY_P, 0, K_GOOD, A_GOOD, R_GOOD,
     0, PX_OK},
    {"scan kernel, empty range", PX_KERNEL_SCAN, KERNEL, SP_DEFAULT, EMPTY_P, 0, K_GOOD, A_GOOD,
     R_GOOD, 0, PX_OK},
    /* bad policies */
    {"begin > end",
     PX_KERNEL_FOR,
     FN,
     SP_DEFAULT,
     {5, 1, 0, PX_SCHEDULE_STATIC},
     0,
     K_GOOD,
     A_GOOD,
     R_GOOD,
     0,
     PX_EINVAL},
    {"negative chunk",
     PX_KERNEL_REDUCE,
     KERNEL,
     SP_DEFAULT,
     {0, N, -1, PX_SCHEDULE_STATIC},
     0,
     K_GOOD,
     A_GOOD,
     R_GOOD,
     0,
     PX_EINVAL},
    {"unknown schedule",
     PX_KERNEL_SCAN,
     FN,
     SP_DEFAULT,
     {0, N, 0, (px_schedule)7},
     0,
     K_GOOD,
     A_GOOD,
     R_GOOD,
     0,
     PX_EINVAL},
    {"range overflows int64",
     PX_KERNEL_FOR,
     KERNEL,
     SP_DEFAULT,
     {INT64_MIN, 1, 0, PX_SCHEDULE_STATIC},
     0,
     K_GOOD,
     A_GOOD,
     R_GOOD,
     0,
     PX_EINVAL},
    /* bodies */
    {"NULL for fn", PX_KERNEL_FOR, FN, SP_DEFAULT, GOOD_P, 1, K_GOOD, A_GOOD, R_GOOD, 0, PX_EFAULT},
    {"NULL reduce fn", PX_KERNEL_REDUCE, FN, SP_DEFAULT, GOOD_P, 1, K_GOOD, A_GOOD, R_GOOD, 0,
     PX_EFAULT},
    {"NULL scan fn", PX_KERNEL_SCAN, FN, SP_DEFAULT, GOOD_P, 1, K_GOOD, A_GOOD, R_GOOD, 0,
     PX_EFAULT},
    {"NULL kernel", PX_KERNEL_FOR, KERNEL, SP_DEFAULT, GOOD_P, 0, K_NULL, A_GOOD, R_GOOD, 0,
     PX_EFAULT},
    {"bad magic", PX_KERNEL_REDUCE, KERNEL, SP_DEFAULT, GOOD_P, 0, K_BAD_MAGIC, A_GOOD, R_GOOD, 0,
     PX_EINVAL},
    {"reduce kernel launched as for", PX_KERNEL_FOR, KERNEL, SP_DEFAULT, GOOD_P, 0, K_WRONG_KIND,
     A_GOOD, R_GOOD, 0, PX_EINVAL},
    {"for kernel launched as scan", PX_KERNEL_SCAN, KERNEL, SP_DEFAULT, GOOD_P, 0, K_WRONG_KIND,
     A_GOOD, R_GOOD, 0, PX_EINVAL},
    {"args size mismatch", PX_KERNEL_FOR, KERNEL, SP_DEFAULT, GOOD_P, 0, K_GOOD, A_SIZE_MISMATCH,
     R_GOOD, 0, PX_EINVAL},
    {"NULL args", PX_KERNEL_SCAN, KERNEL, SP_DEFAULT, GOOD_P, 0, K_GOOD, A_NULL, R_GOOD, 0,
     PX_EFAULT},
    /* reducers and results */
    {"NULL reducer (reduce)", PX_KERNEL_REDUCE, FN, SP_DEFAULT, GOOD_P, 0, K_GOOD, A_GOOD, R_NULL,
     0, PX_EFAULT},
    {"NULL reducer (scan)", PX_KERNEL_SCAN, KERNEL, SP_DEFAULT, GOOD_P, 0, K_GOOD, A_GOOD, R_NULL,
     0, PX_EFAULT},
    {"invalid reducer", PX_KERNEL_REDUCE, KERNEL, SP_DEFAULT, GOOD_P, 0, K_GOOD, A_GOOD, R_INVALID,
     0, PX_EINVAL},
    {"invalid reducer (scan fn)", PX_KERNEL_SCAN, FN, SP_DEFAULT, GOOD_P, 0, K_GOOD, A_GOOD,
     R_INVALID, 0, PX_EINVAL},
    {"value size mismatch", PX_KERNEL_REDUCE, KERNEL, SP_DEFAULT, GOOD_P, 0, K_GOOD, A_GOOD,
     R_WRONG_SIZE, 0, PX_EINVAL},
    {"value size mismatch (scan)", PX_KERNEL_SCAN, KERNEL, SP_DEFAULT, GOOD_P, 0, K_GOOD, A_GOOD,
     R_WRONG_SIZE, 0, PX_EINVAL},
    {"NULL result", PX_KERNEL_REDUCE, KERNEL, SP_DEFAULT, GOOD_P, 0, K_GOOD, A_GOOD, R_GOOD, 1,
     PX_EFAULT},
    {"NULL result (fn)", PX_KERNEL_REDUCE, FN, SP_DEFAULT, GOOD_P, 0, K_GOOD, A_GOOD, R_GOOD, 1,
     PX_EFAULT},
    /* where the body can run */
    {"no host entry on a host space", PX_KERNEL_FOR, KERNEL, SP_DEFAULT, GOOD_P, 0, K_NO_HOST,
     A_GOOD, R_GOOD, 0, PX_EINVAL},
    {"no host entry (reduce)", PX_KERNEL_REDUCE, KERNEL, SP_DEFAULT, GOOD_P, 0, K_NO_HOST, A_GOOD,
     R_GOOD, 0, PX_EINVAL},
    {"host fn on a device space", PX_KERNEL_FOR, FN, SP_DEV, GOOD_P, 0, K_GOOD, A_GOOD, R_GOOD, 0,
     PX_EINVAL},
    {"host fn reduce on a device space", PX_KERNEL_REDUCE, FN, SP_DEV, GOOD_P, 0, K_GOOD, A_GOOD,
     R_GOOD, 0, PX_EINVAL},
    {"kernel not compiled for the device", PX_KERNEL_FOR, KERNEL, SP_DEV, GOOD_P, 0, K_GOOD, A_GOOD,
     R_GOOD, 0, PX_EINVAL},
    {"scan kernel not compiled for the device", PX_KERNEL_SCAN, KERNEL, SP_DEV, GOOD_P, 0, K_GOOD,
     A_GOOD, R_GOOD, 0, PX_EINVAL},
    {"host-only kernel on cuda", PX_KERNEL_FOR, KERNEL, SP_CUDA, GOOD_P, 0, K_GOOD, A_GOOD, R_GOOD,
     0, PX_EINVAL},
    {"host fn on cuda", PX_KERNEL_REDUCE, FN, SP_CUDA, GOOD_P, 0, K_GOOD, A_GOOD, R_GOOD, 0,
     PX_EINVAL},
    {"space not available", PX_KERNEL_FOR, FN, SP_ABSENT, GOOD_P, 0, K_GOOD, A_GOOD, R_GOOD, 0,
     PX_ENODEV},
    {"space not available (kernel reduce)", PX_KERNEL_REDUCE, KERNEL, SP_ABSENT, GOOD_P, 0, K_GOOD,
     A_GOOD, R_GOOD, 0, PX_ENODEV},
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

/* Everything a row's launch needs, built the same way for both paths. */
typedef struct {
    px_space *space;
    px_kernel bad; /* K_BAD_MAGIC / K_NO_HOST copy */
    px_reducer bad_r;
    const px_kernel *kernel;
    const void *args;
    size_t args_size;
    const px_reducer *reducer;
    int64_t out[N];
    lt_args a;
    int64_t result;
} launch_input;

static const px_kernel *good_kernel(px_kernel_kind kind)
{
    return kind == PX_KERNEL_FOR ? &lt_fill : kind == PX_KERNEL_REDUCE ? &lt_sum : &lt_prefix;
}

/* Fill @in for row @c; returns 0 when the row cannot run here (no cuda space). */
static int build(const launch_case *c, launch_input *in)
{
    memset(in, 0, sizeof *in);
    in->result = 12345; /* any launch that succeeds overwrites it */
    switch (c->space) {
    case SP_DEFAULT:
        in->space = NULL;
        break;
    case SP_DEV:
        in->space = px_space_by_name("lt_dev");
        ck_assert_ptr_nonnull(in->space);
        break;
    case SP_ABSENT:
        in->space = registered("lt_absent");
        ck_assert_ptr_nonnull(in->space);
        ck_assert_int_eq(in->space->available, 0);
        break;
    case SP_CUDA:
        in->space = px_space_by_name("cuda");
        if (!in->space)
            return 0;
        break;
    }
    in->a.out = in->out;
    in->args = &in->a;
    in->args_size = sizeof in->a;
    const px_kernel *k = good_kernel(c->kind);
    switch (c->kernel) {
    case K_GOOD:
        break;
    case K_NULL:
        k = NULL;
        break;
    case K_BAD_MAGIC:
        in->bad = *k;
        in->bad.magic = 0;
        k = &in->bad;
        break;
    case K_WRONG_KIND:
        k = c->kind == PX_KERNEL_FOR ? &lt_sum : &lt_fill;
        break;
    case K_NO_HOST:
        in->bad = *k;
        in->bad.host_for = NULL;
        in->bad.host_reduce = NULL;
        in->bad.host_scan = NULL;
        k = &in->bad;
        break;
    }
    in->kernel = k;
    if (c->args == A_SIZE_MISMATCH)
        in->args_size = sizeof in->a + 8;
    else if (c->args == A_NULL)
        in->args = NULL;
    switch (c->reducer) {
    case R_GOOD:
        in->reducer = &px_sum_i64;
        break;
    case R_NULL:
        in->reducer = NULL;
        break;
    case R_INVALID:
        in->bad_r = px_sum_i64;
        in->bad_r.join = NULL;
        in->reducer = &in->bad_r;
        break;
    case R_WRONG_SIZE:
        in->reducer = &px_sum_f32; /* 4-byte values; the kernels fold int64_t */
        break;
    }
    return 1;
}

static int direct(const launch_case *c, launch_input *in)
{
    void *res = c->result_null ? NULL : &in->result;
    if (c->body == FN) {
        switch (c->kind) {
        case PX_KERNEL_FOR:
            return px_parallel_for_fn(in->space, c->name, c->policy, c->fn_null ? NULL : fill_fn,
                                      in->out);
        case PX_KERNEL_REDUCE:
            return px_parallel_reduce_fn(in->space, c->name, c->policy, c->fn_null ? NULL : sum_fn,
                                         in->out, in->reducer, res);
        default:
            return px_parallel_scan_fn(in->space, c->name, c->policy, c->fn_null ? NULL : prefix_fn,
                                       in->out, in->reducer, res);
        }
    }
    switch (c->kind) {
    case PX_KERNEL_FOR:
        return px_parallel_for(in->space, c->name, c->policy, in->kernel, in->args, in->args_size);
    case PX_KERNEL_REDUCE:
        return px_parallel_reduce(in->space, c->name, c->policy, in->kernel, in->args,
                                  in->args_size, in->reducer, res);
    default:
        return px_parallel_scan(in->space, c->name, c->policy, in->kernel, in->args, in->args_size,
                                in->reducer, res);
    }
}

static int push(px_engine *e, px_var *v, const launch_case *c, launch_input *in)
{
    void *res = c->result_null ? NULL : &in->result;
    px_var *w[1] = {v};
    if (c->body == FN) {
        switch (c->kind) {
        case PX_KERNEL_FOR:
            return px_engine_push_parallel_for_fn(e, in->space, c->name, c->policy,
                                                  c->fn_null ? NULL : fill_fn, in->out, NULL, 0, w,
                                                  1);
        case PX_KERNEL_REDUCE:
            return px_engine_push_parallel_reduce_fn(e, in->space, c->name, c->policy,
                                                     c->fn_null ? NULL : sum_fn, in->out,
                                                     in->reducer, res, NULL, 0, w, 1);
        default:
            return px_engine_push_parallel_scan_fn(e, in->space, c->name, c->policy,
                                                   c->fn_null ? NULL : prefix_fn, in->out,
                                                   in->reducer, res, NULL, 0, w, 1);
        }
    }
    switch (c->kind) {
    case PX_KERNEL_FOR:
        return px_engine_push_parallel_for(e, in->space, c->name, c->policy, in->kernel, in->args,
                                           in->args_size, NULL, 0, w, 1);
    case PX_KERNEL_REDUCE:
        return px_engine_push_parallel_reduce(e, in->space, c->name, c->policy, in->kernel,
                                              in->args, in->args_size, in->reducer, res, NULL, 0, w,
                                              1);
    default:
        return px_engine_push_parallel_scan(e, in->space, c->name, c->policy, in->kernel, in->args,
                                            in->args_size, in->reducer, res, NULL, 0, w, 1);
    }
}

/* What a good row must have computed. */
static void check_result(const launch_case *c, const launch_input *in, const char *path)
{
    int64_t b = c->policy.begin, e = c->policy.end;
    int64_t sum = 0;
    for (int64_t i = b; i < e; ++i)
        sum += i;
    for (int64_t i = 0; i < N; ++i) {
        int inside = i >= b && i < e;
        int64_t want = 0;
        if (c->kind == PX_KERNEL_FOR)
            want = inside ? 1 : 0;
        else if (c->kind == PX_KERNEL_SCAN)
            want = inside ? (i - b) * (b + i - 1) / 2 : 0; /* sum of [b, i) */
        ck_assert_msg(in->out[i] == want, "%s, %s: out[%lld] = %lld, expected %lld", c->name, path,
                      (long long)i, (long long)in->out[i], (long long)want);
    }
    if (c->kind != PX_KERNEL_FOR && !c->result_null)
        ck_assert_msg(in->result == sum, "%s, %s: result %lld, expected %lld", c->name, path,
                      (long long)in->result, (long long)sum);
}

START_TEST(test_every_launch_status_is_the_same_from_a_direct_launch_and_an_engine_push)
{
    const launch_case *c = &cases[_i];
    launch_input in;
    if (!build(c, &in))
        return; /* a cuda row on a machine without a GPU */
    px_test_log_clear();
    int rc = direct(c, &in);
    ck_assert_msg(rc == c->expect, "%s, direct: %s, expected %s", c->name, px_strerror(rc),
                  px_strerror(c->expect));
    if (rc != PX_OK)
        ck_assert_msg(px_test_log_contains("parex error") || px_test_log_text()[0] != '\0',
                      "%s, direct: %s without a message", c->name, px_strerror(rc));
    else
        check_result(c, &in, "direct");

    launch_input in2;
    ck_assert_int_eq(build(c, &in2), 1);
    px_engine *e = px_engine_default();
    ck_assert_ptr_nonnull(e);
    px_var *v = px_var_new(e);
    ck_assert_ptr_nonnull(v);
    px_test_log_clear();
    rc = push(e, v, c, &in2);
    ck_assert_msg(rc == c->expect, "%s, engine push: %s, expected %s", c->name, px_strerror(rc),
                  px_strerror(c->expect));
    if (rc != PX_OK)
        ck_assert_msg(px_test_log_text()[0] != '\0', "%s, engine push: %s without a message",
                      c->name, px_strerror(rc));
    /* A launch refused at push leaves nothing to fail later; an accepted one runs cleanly. */
    ck_assert_msg(px_engine_wait_for_var(e, v) == PX_OK, "%s: the op failed on a worker", c->name);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    if (rc == PX_OK)
        check_result(c, &in2, "engine");
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
}
END_TEST

/* The engine copies a kernel's arguments at push: changing them afterwards changes nothing. */
START_TEST(test_an_engine_kernel_push_runs_on_the_arguments_given_at_push)
{
    px_engine *e = px_engine_default();
    px_var *v = px_var_new(e);
    px_var *w[1] = {v};
    static int64_t out1[N], out2[N];
    lt_args a = {out1};
    ck_assert_int_eq(px_engine_push_parallel_for(e, NULL, "copied", px_range(0, N), &lt_fill, &a,
                                                 sizeof a, NULL, 0, w, 1),
                     PX_OK);
    a.out = out2;
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
    for (int i = 0; i < N; ++i) {
        ck_assert_int_eq(out1[i], 1);
        ck_assert_int_eq(out2[i], 0);
    }
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
}
END_TEST

/* Backends take their settings from initialize's argument, and report their device through
 * their ops: core names no backend. */
START_TEST(test_spaces_get_their_settings_at_initialize_and_report_their_device)
{
    ck_assert_int_eq(px_finalize(), PX_OK);
    setenv("PX_NUM_THREADS", "3", 1);
    setenv("PX_DEVICE_ID", "0", 1);
    setenv("PX_BIND", "spread", 1);
    setenv("PX_SPIN_US", "7", 1);
    memset(&lt_seen_cfg, 0, sizeof lt_seen_cfg);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    ck_assert_int_eq(lt_seen_cfg.num_threads, 3);
    ck_assert_int_eq(lt_seen_cfg.device_id, 0);
    ck_assert_str_eq(lt_seen_cfg.bind, "spread");
    /* The spin budget is base/wait.c's, not a backend setting. */
    ck_assert_str_eq(pxi_wait_policy_name(), "default");
    px_space *threads = px_space_by_name("threads");
    if (threads)
        ck_assert_int_eq(px_space_concurrency(threads), 3);
    /* Host spaces and spaces without a device_id op are device 0. */
    ck_assert_int_eq(pxi_registry_device_id(px_space_by_name("serial")), 0);
    ck_assert_int_eq(pxi_registry_device_id(px_space_by_name("lt_dev")), 0);
    ck_assert_int_eq(pxi_registry_device_id(NULL), 0);
    /* The engine's device space has streams: never lt_dev, the cuda space when there is one. */
    ck_assert_ptr_eq(pxi_registry_device_space(), px_space_by_name("cuda"));
}
END_TEST

/* --- team launches (PXI_POLICY_TEAM): the same two paths, their own table ------------------- */

typedef enum { TB_FN, TB_KERNEL } team_body_sel;
typedef enum { TK_GOOD, TK_NULL, TK_BAD_MAGIC, TK_WRONG_KIND, TK_ARGS_SIZE } team_kernel_sel;

typedef struct {
    const char *name;
    px_kernel_kind kind; /* for / reduce */
    team_body_sel body;
    space_sel space;
    px_team_policy policy;
    int fn_null;
    team_kernel_sel kernel;
    reducer_sel reducer;
    int result_null;
    int expect;
} team_case;

#define TP(league, team)                                                                           \
    {                                                                                              \
        (league), (team), 0, 0, 0, PX_SCHEDULE_STATIC                                              \
    }

/* Member 0 of team lr adds 1 to out[lr] (for) or lr to acc (reduce). */
static void team_fill_fn(const px_team *t, void *ctx)
{
    int64_t *out = ctx;
    if (px_team_rank(t) == 0)
        out[px_team_league_rank(t)] += 1;
}
static void team_sum_fn(const px_team *t, void *ctx, void *acc)
{
    (void)ctx;
    if (px_team_rank(t) == 0)
        *(int64_t *)acc += px_team_league_rank(t);
}
PX_TEAM_FOR(lt_team_fill, lt_args, t, a)
{
    if (px_team_rank(t) == 0)
        a->out[px_team_league_rank(t)] += 1;
}
PX_TEAM_REDUCE(lt_team_sum, lt_args, int64_t, t, a, acc)
{
    (void)a;
    if (px_team_rank(t) == 0)
        *acc += px_team_league_rank(t);
}

static const team_case team_cases[] = {
    {"team for fn", PX_KERNEL_FOR, TB_FN, SP_DEFAULT, TP(N, 0), 0, TK_GOOD, R_GOOD, 0, PX_OK},
    {"team for kernel", PX_KERNEL_FOR, TB_KERNEL, SP_DEFAULT, TP(N, 1), 0, TK_GOOD, R_GOOD, 0,
     PX_OK},
    {"team reduce fn", PX_KERNEL_REDUCE, TB_FN, SP_DEFAULT, TP(N, 0), 0, TK_GOOD, R_GOOD, 0, PX_OK},
    {"team reduce kernel", PX_KERNEL_REDUCE, TB_KERNEL, SP_DEFAULT, TP(N, 0), 0, TK_GOOD, R_GOOD, 0,
     PX_OK},
    {"team reduce, league 0", PX_KERNEL_REDUCE, TB_KERNEL, SP_DEFAULT, TP(0, 0), 0, TK_GOOD, R_GOOD,
     0, PX_OK},
    {"team, negative league", PX_KERNEL_FOR, TB_FN, SP_DEFAULT, TP(-1, 0), 0, TK_GOOD, R_GOOD, 0,
     PX_EINVAL},
    {"team, negative team size", PX_KERNEL_REDUCE, TB_KERNEL, SP_DEFAULT, TP(N, -1), 0, TK_GOOD,
     R_GOOD, 0, PX_EINVAL},
    {"team, team size above every limit", PX_KERNEL_FOR, TB_KERNEL, SP_DEFAULT, TP(N, 5000), 0,
     TK_GOOD, R_GOOD, 0, PX_EINVAL},
    {"team, vector length 33",
     PX_KERNEL_FOR,
     TB_FN,
     SP_DEFAULT,
     {N, 0, 33, 0, 0, 0},
     0,
     TK_GOOD,
     R_GOOD,
     0,
     PX_EINVAL},
    {"team, scratch above the limit",
     PX_KERNEL_REDUCE,
     TB_FN,
     SP_DEFAULT,
     {N, 1, 0, PX_TEAM_HOST_MAX_SCRATCH + 1, 0, 0},
     0,
     TK_GOOD,
     R_GOOD,
     0,
     PX_EINVAL},
    {"team, unknown schedule",
     PX_KERNEL_FOR,
     TB_FN,
     SP_DEFAULT,
     {N, 0, 0, 0, 0, (px_schedule)9},
     0,
     TK_GOOD,
     R_GOOD,
     0,
     PX_EINVAL},
    {"team, NULL for fn", PX_KERNEL_FOR, TB_FN, SP_DEFAULT, TP(N, 0), 1, TK_GOOD, R_GOOD, 0,
     PX_EFAULT},
    {"team, NULL reduce fn", PX_KERNEL_REDUCE, TB_FN, SP_DEFAULT, TP(N, 0), 1, TK_GOOD, R_GOOD, 0,
     PX_EFAULT},
    {"team, NULL kernel", PX_KERNEL_FOR, TB_KERNEL, SP_DEFAULT, TP(N, 0), 0, TK_NULL, R_GOOD, 0,
     PX_EFAULT},
    {"team, bad magic", PX_KERNEL_FOR, TB_KERNEL, SP_DEFAULT, TP(N, 0), 0, TK_BAD_MAGIC, R_GOOD, 0,
     PX_EINVAL},
    {"team, reduce kernel launched as for", PX_KERNEL_FOR, TB_KERNEL, SP_DEFAULT, TP(N, 0), 0,
     TK_WRONG_KIND, R_GOOD, 0, PX_EINVAL},
    {"team, args size mismatch", PX_KERNEL_REDUCE, TB_KERNEL, SP_DEFAULT, TP(N, 0), 0, TK_ARGS_SIZE,
     R_GOOD, 0, PX_EINVAL},
    {"team, NULL reducer", PX_KERNEL_REDUCE, TB_FN, SP_DEFAULT, TP(N, 0), 0, TK_GOOD, R_NULL, 0,
     PX_EFAULT},
    {"team, NULL result", PX_KERNEL_REDUCE, TB_KERNEL, SP_DEFAULT, TP(N, 0), 0, TK_GOOD, R_GOOD, 1,
     PX_EFAULT},
    {"team, invalid reducer", PX_KERNEL_REDUCE, TB_FN, SP_DEFAULT, TP(N, 0), 0, TK_GOOD, R_INVALID,
     0, PX_EINVAL},
    {"team, reducer of another size", PX_KERNEL_REDUCE, TB_KERNEL, SP_DEFAULT, TP(N, 0), 0, TK_GOOD,
     R_WRONG_SIZE, 0, PX_EINVAL},
    {"team, space without teams", PX_KERNEL_FOR, TB_KERNEL, SP_DEV, TP(N, 0), 0, TK_GOOD, R_GOOD, 0,
     PX_EINVAL},
    {"team, absent space", PX_KERNEL_FOR, TB_FN, SP_ABSENT, TP(N, 0), 0, TK_GOOD, R_GOOD, 0,
     PX_ENODEV},
    {"team fn on cuda", PX_KERNEL_FOR, TB_FN, SP_CUDA, TP(N, 0), 0, TK_GOOD, R_GOOD, 0, PX_EINVAL},
};
#define N_TEAM_CASES ((int)(sizeof team_cases / sizeof team_cases[0]))

typedef struct {
    px_space *space;
    int64_t out[N];
    int64_t result;
    const px_team_kernel *kernel;
    px_team_kernel bad_kernel;
    lt_args args;
    size_t args_size;
    const px_reducer *reducer;
    px_reducer bad_r;
} team_input;

/* Build a row's arguments; 0 when the row does not apply here (cuda without a GPU). */
static int team_build(const team_case *c, team_input *in)
{
    memset(in, 0, sizeof *in);
    in->result = -12345;
    switch (c->space) {
    case SP_DEFAULT:
        in->space = NULL;
        break;
    case SP_DEV:
        in->space = px_space_by_name("lt_dev");
        break;
    case SP_ABSENT:
        in->space = registered("lt_absent");
        break;
    case SP_CUDA:
        in->space = px_space_by_name("cuda");
        if (!in->space)
            return 0;
        break;
    }
    in->args.out = in->out;
    in->args_size = sizeof in->args;
    const px_team_kernel *k = c->kind == PX_KERNEL_FOR ? &lt_team_fill : &lt_team_sum;
    switch (c->kernel) {
    case TK_GOOD:
        in->kernel = k;
        break;
    case TK_NULL:
        in->kernel = NULL;
        break;
    case TK_BAD_MAGIC:
        in->bad_kernel = *k;
        in->bad_kernel.magic = 0;
        in->kernel = &in->bad_kernel;
        break;
    case TK_WRONG_KIND:
        in->kernel = c->kind == PX_KERNEL_FOR ? &lt_team_sum : &lt_team_fill;
        break;
    case TK_ARGS_SIZE:
        in->kernel = k;
        in->args_size = sizeof in->args + 8;
        break;
    }
    switch (c->reducer) {
    case R_GOOD:
        in->reducer = &px_sum_i64;
        break;
    case R_NULL:
        in->reducer = NULL;
        break;
    case R_INVALID:
        in->bad_r = px_sum_i64;
        in->bad_r.join = NULL;
        in->reducer = &in->bad_r;
        break;
    case R_WRONG_SIZE:
        in->reducer = &px_sum_f32;
        break;
    }
    return 1;
}

static int team_direct(const team_case *c, team_input *in)
{
    void *res = c->result_null ? NULL : &in->result;
    if (c->body == TB_FN)
        return c->kind == PX_KERNEL_FOR
                   ? px_parallel_for_team_fn(in->space, c->name, c->policy,
                                             c->fn_null ? NULL : team_fill_fn, in->out)
                   : px_parallel_reduce_team_fn(in->space, c->name, c->policy,
                                                c->fn_null ? NULL : team_sum_fn, in->out,
                                                in->reducer, res);
    return c->kind == PX_KERNEL_FOR
               ? px_parallel_for_team(in->space, c->name, c->policy, in->kernel, &in->args,
                                      in->args_size)
               : px_parallel_reduce_team(in->space, c->name, c->policy, in->kernel, &in->args,
                                         in->args_size, in->reducer, res);
}

static int team_push(px_engine *e, px_var *v, const team_case *c, team_input *in)
{
    void *res = c->result_null ? NULL : &in->result;
    px_var *w[1] = {v};
    if (c->body == TB_FN)
        return c->kind == PX_KERNEL_FOR
                   ? px_engine_push_parallel_for_team_fn(e, in->space, c->name, c->policy,
                                                         c->fn_null ? NULL : team_fill_fn, in->out,
                                                         NULL, 0, w, 1)
                   : px_engine_push_parallel_reduce_team_fn(
                         e, in->space, c->name, c->policy, c->fn_null ? NULL : team_sum_fn, in->out,
                         in->reducer, res, NULL, 0, w, 1);
    return c->kind == PX_KERNEL_FOR
               ? px_engine_push_parallel_for_team(e, in->space, c->name, c->policy, in->kernel,
                                                  &in->args, in->args_size, NULL, 0, w, 1)
               : px_engine_push_parallel_reduce_team(e, in->space, c->name, c->policy, in->kernel,
                                                     &in->args, in->args_size, in->reducer, res,
                                                     NULL, 0, w, 1);
}

static void team_check_result(const team_case *c, const team_input *in, const char *path)
{
    int64_t L = c->policy.league_size;
    for (int64_t i = 0; i < N; ++i) {
        int64_t want = c->kind == PX_KERNEL_FOR && i < L ? 1 : 0;
        ck_assert_msg(in->out[i] == want, "%s, %s: out[%lld] = %lld, expected %lld", c->name, path,
                      (long long)i, (long long)in->out[i], (long long)want);
    }
    if (c->kind == PX_KERNEL_REDUCE)
        ck_assert_msg(in->result == L * (L - 1) / 2, "%s, %s: result %lld, expected %lld", c->name,
                      path, (long long)in->result, (long long)(L * (L - 1) / 2));
}

START_TEST(test_every_team_launch_status_is_the_same_from_a_direct_launch_and_an_engine_push)
{
    const team_case *c = &team_cases[_i];
    /* team_input holds N results: keep it off the stack of small-stack runners. */
    static team_input in;
    if (!team_build(c, &in))
        return;
    px_test_log_clear();
    int rc = team_direct(c, &in);
    ck_assert_msg(rc == c->expect, "%s, direct: %s, expected %s", c->name, px_strerror(rc),
                  px_strerror(c->expect));
    if (rc != PX_OK)
        ck_assert_msg(px_test_log_text()[0] != '\0', "%s, direct: %s without a message", c->name,
                      px_strerror(rc));
    else
        team_check_result(c, &in, "direct");

    ck_assert_int_eq(team_build(c, &in), 1);
    px_engine *e = px_engine_default();
    px_var *v = px_var_new(e);
    ck_assert_ptr_nonnull(v);
    px_test_log_clear();
    rc = team_push(e, v, c, &in);
    ck_assert_msg(rc == c->expect, "%s, engine push: %s, expected %s", c->name, px_strerror(rc),
                  px_strerror(c->expect));
    if (rc != PX_OK)
        ck_assert_msg(px_test_log_text()[0] != '\0', "%s, engine push: %s without a message",
                      c->name, px_strerror(rc));
    ck_assert_msg(px_engine_wait_for_var(e, v) == PX_OK, "%s: the op failed on a worker", c->name);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    if (rc == PX_OK)
        team_check_result(c, &in, "engine");
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
}
END_TEST

/* --- MDRange launches: the same table idea for PXI_POLICY_MDRANGE ---------------------------- */

#define MD0 10
#define MD1 10

PX_FOR_2D(lt_md_fill, lt_args, i, j, a)
{
    a->out[i * MD1 + j] += 1;
}
PX_REDUCE_2D(lt_md_sum, lt_args, int64_t, i, j, a, acc)
{
    (void)a;
    *acc += i * MD1 + j;
}
PX_FOR_3D(lt_md_fill3, lt_args, i, j, k, a)
{
    a->out[(i * MD1 + j) + k] += 1;
}
static void md_fill_fn(const int64_t *lo, const int64_t *hi, void *ctx)
{
    int64_t *out = ctx;
    for (int64_t i = lo[0]; i < hi[0]; ++i)
        for (int64_t j = lo[1]; j < hi[1]; ++j)
            out[i * MD1 + j] += 1;
}
static void md_sum_fn(const int64_t *lo, const int64_t *hi, void *ctx, void *acc)
{
    (void)ctx;
    for (int64_t i = lo[0]; i < hi[0]; ++i)
        for (int64_t j = lo[1]; j < hi[1]; ++j)
            *(int64_t *)acc += i * MD1 + j;
}

typedef enum {
    MP_GOOD,
    MP_EMPTY,
    MP_DYNAMIC_LEFT,
    MP_RANK1,
    MP_RANK7,
    MP_LOWER_GT_UPPER,
    MP_NEG_TILE,
    MP_OVERFLOW,
    MP_BAD_ITERATE,
    MP_BAD_SCHEDULE
} md_policy_sel;
typedef enum { MK_GOOD, MK_NULL, MK_RANK3, MK_ONE_D, MK_WRONG_KIND } md_kernel_sel;

typedef struct {
    const char *name;
    px_kernel_kind kind; /* for / reduce */
    body_sel body;
    space_sel space;
    md_policy_sel policy;
    int fn_null;
    md_kernel_sel kernel;
    reducer_sel reducer;
    int result_null;
    int expect;
} md_case;

static const md_case md_cases[] = {
    {"md for fn", PX_KERNEL_FOR, FN, SP_DEFAULT, MP_GOOD, 0, MK_GOOD, R_GOOD, 0, PX_OK},
    {"md for kernel", PX_KERNEL_FOR, KERNEL, SP_DEFAULT, MP_GOOD, 0, MK_GOOD, R_GOOD, 0, PX_OK},
    {"md reduce fn", PX_KERNEL_REDUCE, FN, SP_DEFAULT, MP_GOOD, 0, MK_GOOD, R_GOOD, 0, PX_OK},
    {"md reduce kernel", PX_KERNEL_REDUCE, KERNEL, SP_DEFAULT, MP_GOOD, 0, MK_GOOD, R_GOOD, 0,
     PX_OK},
    {"md reduce kernel, dynamic left", PX_KERNEL_REDUCE, KERNEL, SP_DEFAULT, MP_DYNAMIC_LEFT, 0,
     MK_GOOD, R_GOOD, 0, PX_OK},
    {"md reduce fn, empty box", PX_KERNEL_REDUCE, FN, SP_DEFAULT, MP_EMPTY, 0, MK_GOOD, R_GOOD, 0,
     PX_OK},
    {"md rank 1", PX_KERNEL_FOR, FN, SP_DEFAULT, MP_RANK1, 0, MK_GOOD, R_GOOD, 0, PX_EINVAL},
    {"md rank 7", PX_KERNEL_REDUCE, KERNEL, SP_DEFAULT, MP_RANK7, 0, MK_GOOD, R_GOOD, 0, PX_EINVAL},
    {"md lower > upper", PX_KERNEL_FOR, KERNEL, SP_DEFAULT, MP_LOWER_GT_UPPER, 0, MK_GOOD, R_GOOD,
     0, PX_EINVAL},
    {"md negative tile", PX_KERNEL_REDUCE, FN, SP_DEFAULT, MP_NEG_TILE, 0, MK_GOOD, R_GOOD, 0,
     PX_EINVAL},
    {"md extents overflow", PX_KERNEL_FOR, FN, SP_DEFAULT, MP_OVERFLOW, 0, MK_GOOD, R_GOOD, 0,
     PX_EINVAL},
    {"md unknown iterate", PX_KERNEL_FOR, KERNEL, SP_DEFAULT, MP_BAD_ITERATE, 0, MK_GOOD, R_GOOD, 0,
     PX_EINVAL},
    {"md unknown schedule", PX_KERNEL_REDUCE, KERNEL, SP_DEFAULT, MP_BAD_SCHEDULE, 0, MK_GOOD,
     R_GOOD, 0, PX_EINVAL},
    {"md NULL for fn", PX_KERNEL_FOR, FN, SP_DEFAULT, MP_GOOD, 1, MK_GOOD, R_GOOD, 0, PX_EFAULT},
    {"md NULL reduce fn", PX_KERNEL_REDUCE, FN, SP_DEFAULT, MP_GOOD, 1, MK_GOOD, R_GOOD, 0,
     PX_EFAULT},
    {"md NULL kernel", PX_KERNEL_FOR, KERNEL, SP_DEFAULT, MP_GOOD, 0, MK_NULL, R_GOOD, 0,
     PX_EFAULT},
    {"md 3-D kernel on a rank-2 policy", PX_KERNEL_FOR, KERNEL, SP_DEFAULT, MP_GOOD, 0, MK_RANK3,
     R_GOOD, 0, PX_EINVAL},
    {"md 1-D kernel on an MDRange policy", PX_KERNEL_REDUCE, KERNEL, SP_DEFAULT, MP_GOOD, 0,
     MK_ONE_D, R_GOOD, 0, PX_EINVAL},
    {"md for kernel launched as reduce", PX_KERNEL_REDUCE, KERNEL, SP_DEFAULT, MP_GOOD, 0,
     MK_WRONG_KIND, R_GOOD, 0, PX_EINVAL},
    {"md NULL reducer", PX_KERNEL_REDUCE, FN, SP_DEFAULT, MP_GOOD, 0, MK_GOOD, R_NULL, 0,
     PX_EFAULT},
    {"md value size mismatch", PX_KERNEL_REDUCE, KERNEL, SP_DEFAULT, MP_GOOD, 0, MK_GOOD,
     R_WRONG_SIZE, 0, PX_EINVAL},
    {"md NULL result", PX_KERNEL_REDUCE, KERNEL, SP_DEFAULT, MP_GOOD, 0, MK_GOOD, R_GOOD, 1,
     PX_EFAULT},
    {"md host fn on a device space", PX_KERNEL_FOR, FN, SP_DEV, MP_GOOD, 0, MK_GOOD, R_GOOD, 0,
     PX_EINVAL},
    {"md kernel not compiled for the device", PX_KERNEL_REDUCE, KERNEL, SP_DEV, MP_GOOD, 0, MK_GOOD,
     R_GOOD, 0, PX_EINVAL},
    {"md host fn on cuda", PX_KERNEL_FOR, FN, SP_CUDA, MP_GOOD, 0, MK_GOOD, R_GOOD, 0, PX_EINVAL},
    {"md space not available", PX_KERNEL_FOR, KERNEL, SP_ABSENT, MP_GOOD, 0, MK_GOOD, R_GOOD, 0,
     PX_ENODEV},
};
#define N_MD_CASES ((int)(sizeof md_cases / sizeof md_cases[0]))

static px_mdrange_policy md_policy(md_policy_sel sel)
{
    int64_t lo[PX_MAX_RANK] = {0}, hi[PX_MAX_RANK] = {
                                       MD0, MD1, 2, 2, 2, 2,
                                   };
    int64_t tile[2] = {3, 4};
    px_mdrange_policy p = px_mdrange_tiled(2, lo, hi, tile);
    switch (sel) {
    case MP_GOOD:
        break;
    case MP_EMPTY:
        p.upper[1] = 0;
        break;
    case MP_DYNAMIC_LEFT:
        p = px_mdrange_set_schedule(px_mdrange_set_iterate(p, PX_ITERATE_LEFT),
                                    PX_SCHEDULE_DYNAMIC);
        break;
    case MP_RANK1:
        p.rank = 1;
        break;
    case MP_RANK7:
        p.rank = 7;
        break;
    case MP_LOWER_GT_UPPER:
        p.lower[0] = MD0 + 1;
        break;
    case MP_NEG_TILE:
        p.tile[1] = -1;
        break;
    case MP_OVERFLOW:
        p.upper[0] = INT64_MAX / 4;
        p.upper[1] = 8;
        break;
    case MP_BAD_ITERATE:
        p.iterate = (px_iterate)5;
        break;
    case MP_BAD_SCHEDULE:
        p.schedule = (px_schedule)5;
        break;
    }
    return p;
}

static const px_kernel *md_kernel(const md_case *c)
{
    switch (c->kernel) {
    case MK_GOOD:
        return c->kind == PX_KERNEL_FOR ? &lt_md_fill : &lt_md_sum;
    case MK_NULL:
        return NULL;
    case MK_RANK3:
        return &lt_md_fill3;
    case MK_ONE_D:
        return c->kind == PX_KERNEL_FOR ? &lt_fill : &lt_sum;
    case MK_WRONG_KIND:
        return c->kind == PX_KERNEL_FOR ? &lt_md_sum : &lt_md_fill;
    }
    return NULL;
}

/* Run row @c through the direct call (e == NULL) or an engine push writing @v. */
static int md_launch(const md_case *c, launch_input *in, px_engine *e, px_var *v)
{
    launch_case lc = {.space = c->space,
                      .kernel = K_GOOD,
                      .args = A_GOOD,
                      .reducer = c->reducer,
                      .kind = c->kind};
    if (!build(&lc, in))
        return -1;
    px_mdrange_policy p = md_policy(c->policy);
    const px_kernel *k = md_kernel(c);
    void *res = c->result_null ? NULL : &in->result;
    px_var *w[1] = {v};
    int for_ = c->kind == PX_KERNEL_FOR;
    if (c->body == FN) {
        px_md_for_fn ff = c->fn_null ? NULL : md_fill_fn;
        px_md_reduce_fn rf = c->fn_null ? NULL : md_sum_fn;
        if (!e)
            return for_ ? px_parallel_for_md_fn(in->space, c->name, p, ff, in->out)
                        : px_parallel_reduce_md_fn(in->space, c->name, p, rf, in->out, in->reducer,
                                                   res);
        return for_ ? px_engine_push_parallel_for_md_fn(e, in->space, c->name, p, ff, in->out, NULL,
                                                        0, w, 1)
                    : px_engine_push_parallel_reduce_md_fn(e, in->space, c->name, p, rf, in->out,
                                                           in->reducer, res, NULL, 0, w, 1);
    }
    if (!e)
        return for_ ? px_parallel_for_md(in->space, c->name, p, k, in->args, in->args_size)
                    : px_parallel_reduce_md(in->space, c->name, p, k, in->args, in->args_size,
                                            in->reducer, res);
    return for_ ? px_engine_push_parallel_for_md(e, in->space, c->name, p, k, in->args,
                                                 in->args_size, NULL, 0, w, 1)
                : px_engine_push_parallel_reduce_md(e, in->space, c->name, p, k, in->args,
                                                    in->args_size, in->reducer, res, NULL, 0, w, 1);
}

static void md_check_result(const md_case *c, const launch_input *in, const char *path)
{
    px_mdrange_policy p = md_policy(c->policy);
    int64_t sum = 0;
    for (int64_t i = 0; i < N; ++i) {
        int inside = i / MD1 < p.upper[0] && i % MD1 < p.upper[1];
        if (inside)
            sum += i;
        int64_t want = c->kind == PX_KERNEL_FOR && inside ? 1 : 0;
        ck_assert_msg(in->out[i] == want, "%s, %s: out[%lld] = %lld, expected %lld", c->name, path,
                      (long long)i, (long long)in->out[i], (long long)want);
    }
    if (c->kind == PX_KERNEL_REDUCE)
        ck_assert_msg(in->result == sum, "%s, %s: result %lld, expected %lld", c->name, path,
                      (long long)in->result, (long long)sum);
}

START_TEST(test_every_md_launch_status_is_the_same_from_a_direct_launch_and_an_engine_push)
{
    const md_case *c = &md_cases[_i];
    launch_input in;
    px_test_log_clear();
    int rc = md_launch(c, &in, NULL, NULL);
    if (rc == -1)
        return; /* a cuda row on a machine without a GPU */
    ck_assert_msg(rc == c->expect, "%s, direct: %s, expected %s", c->name, px_strerror(rc),
                  px_strerror(c->expect));
    if (rc != PX_OK)
        ck_assert_msg(px_test_log_text()[0] != '\0', "%s, direct: %s without a message", c->name,
                      px_strerror(rc));
    else
        md_check_result(c, &in, "direct");

    px_engine *e = px_engine_default();
    ck_assert_ptr_nonnull(e);
    px_var *v = px_var_new(e);
    ck_assert_ptr_nonnull(v);
    px_test_log_clear();
    rc = md_launch(c, &in, e, v);
    ck_assert_msg(rc == c->expect, "%s, engine push: %s, expected %s", c->name, px_strerror(rc),
                  px_strerror(c->expect));
    if (rc != PX_OK)
        ck_assert_msg(px_test_log_text()[0] != '\0', "%s, engine push: %s without a message",
                      c->name, px_strerror(rc));
    ck_assert_msg(px_engine_wait_for_var(e, v) == PX_OK, "%s: the op failed on a worker", c->name);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    if (rc == PX_OK)
        md_check_result(c, &in, "engine");
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
}
END_TEST

static void setup(void)
{
    px_test_log_capture();
    px_test_setup();
}

static Suite *launch_suite(void)
{
    Suite *s = suite_create("launch");
    TCase *tc = tcase_create("both paths");
    tcase_add_checked_fixture(tc, setup, px_test_teardown);
    tcase_add_loop_test(
        tc, test_every_launch_status_is_the_same_from_a_direct_launch_and_an_engine_push, 0,
        N_CASES);
    tcase_add_loop_test(
        tc, test_every_team_launch_status_is_the_same_from_a_direct_launch_and_an_engine_push, 0,
        N_TEAM_CASES);
    tcase_add_loop_test(
        tc, test_every_md_launch_status_is_the_same_from_a_direct_launch_and_an_engine_push, 0,
        N_MD_CASES);
    tcase_add_test(tc, test_an_engine_kernel_push_runs_on_the_arguments_given_at_push);
    tcase_add_test(tc, test_spaces_get_their_settings_at_initialize_and_report_their_device);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(launch_suite());
}
