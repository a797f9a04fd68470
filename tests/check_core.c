/* tests/check_core.c - lifecycle, registry, spaces, memory, reducers and status codes. Settings
 * and logging are in check_settings.c, fork() in check_fork.c. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "core/registry.h"
#include "px_test.h"

/* --- test spaces ---------------------------------------------------------------------------
 * Two spaces registered by this test program the way backends register (PX_REGISTER_SPACE),
 * to provoke what the real spaces never do: "fake_lo" (priority -5, initialized before serial)
 * is available unless told to fail its finalize; "fake_hi" (priority 5) is unavailable
 * (PX_ENODEV) unless told to fail its initialize or to come up. Both record the order of their
 * initialize/finalize calls in `events`. Check forks per test, so each test starts from the
 * defaults below. */
enum { FAKE_ENODEV, FAKE_FAIL, FAKE_OK };
static int fake_hi_mode = FAKE_ENODEV;
static int fake_lo_fini_status = PX_OK;
static char events[64];

static void event(char c)
{
    size_t n = strlen(events);
    if (n + 1 < sizeof events) {
        events[n] = c;
        events[n + 1] = '\0';
    }
}

static int fake_lo_initialize(const pxi_space_config *cfg)
{
    (void)cfg;
    event('L');
    return PX_OK;
}
static int fake_lo_finalize(void)
{
    event('l');
    return fake_lo_fini_status;
}
static int fake_hi_initialize(const pxi_space_config *cfg)
{
    (void)cfg;
    event('H');
    return fake_hi_mode == FAKE_OK ? PX_OK : fake_hi_mode == FAKE_FAIL ? PX_EIO : PX_ENODEV;
}
static int fake_hi_finalize(void)
{
    event('h');
    return PX_OK;
}
static int fake_concurrency(void)
{
    return 1;
}
static int fake_fence(void)
{
    return PX_OK;
}
static int fake_launch(const pxi_launch *l)
{
    (void)l;
    return PX_EIO; /* never reached by these tests: launches go to serial */
}
static void *fake_malloc(size_t bytes)
{
    return malloc(bytes ? bytes : 1);
}
static int fake_free(void *p)
{
    free(p);
    return PX_OK;
}
static int fake_deep_copy(void *dst, int dst_host, const void *src, int src_host, size_t bytes)
{
    (void)dst_host;
    (void)src_host;
    memmove(dst, src, bytes);
    return PX_OK;
}

static const pxi_space_ops fake_lo_ops = {
    .name = "fake_lo",
    .priority = -5,
    .host_accessible = 1,
    .initialize = fake_lo_initialize,
    .finalize = fake_lo_finalize,
    .concurrency = fake_concurrency,
    .fence = fake_fence,
    .launch = fake_launch,
    .malloc = fake_malloc,
    .free = fake_free,
    .deep_copy = fake_deep_copy,
};
static const pxi_space_ops fake_hi_ops = {
    .name = "fake_hi",
    .priority = 5,
    .host_accessible = 1,
    .initialize = fake_hi_initialize,
    .finalize = fake_hi_finalize,
    .concurrency = fake_concurrency,
    .fence = fake_fence,
    .launch = fake_launch,
    .malloc = fake_malloc,
    .free = fake_free,
    .deep_copy = fake_deep_copy,
};
/* "fake_dev" (priority -6, available) stands in for a device space: its memory is not host
 * accessible, so core must route copies through it and refuse host-only kernels on it. It
 * records the direction flags of the copies it is asked to make. */
static int dev_copies, dev_copy_dst_host, dev_copy_src_host;
static int fake_dev_initialize(const pxi_space_config *cfg)
{
    (void)cfg;
    return PX_OK;
}
static int fake_dev_finalize(void)
{
    return PX_OK;
}
static int fake_dev_deep_copy(void *dst, int dst_host, const void *src, int src_host, size_t bytes)
{
    ++dev_copies;
    dev_copy_dst_host = dst_host;
    dev_copy_src_host = src_host;
    memmove(dst, src, bytes);
    return PX_OK;
}
static const pxi_space_ops fake_dev_ops = {
    .name = "fake_dev",
    .priority = -6,
    .host_accessible = 0,
    .initialize = fake_dev_initialize,
    .finalize = fake_dev_finalize,
    .concurrency = fake_concurrency,
    .fence = fake_fence,
    .launch = fake_launch,
    .malloc = fake_malloc,
    .free = fake_free,
    .deep_copy = fake_dev_deep_copy,
};
PX_REGISTER_SPACE(fake_dev_ops, check_core_anchor_fake_dev)
PX_REGISTER_SPACE(fake_lo_ops, check_core_anchor_fake_lo)
PX_REGISTER_SPACE(fake_hi_ops, check_core_anchor_fake_hi)

/* The registry's handle of a registered space, available or not (tests only). */
static px_space *registered(const char *name)
{
    for (int i = 0; i < pxi_registry_count(); ++i)
        if (strcmp(px_space_name(pxi_registry_at(i)), name) == 0)
            return pxi_registry_at(i);
    return NULL;
}

/* --- status codes ------------------------------------------------------------------------- */

START_TEST(test_strerror_names_every_code)
{
    const int codes[] = {PX_OK,     PX_EINVAL,    PX_ENOMEM,   PX_ENOSYS, PX_EDEADLK,
                         PX_ENODEV, PX_ENOTINIT,  PX_EALREADY, PX_EBUSY,  PX_ECUDA,
                         PX_EIO,    PX_ECANCELED, PX_EFAULT,   PX_EMPI};
    for (size_t i = 0; i < sizeof codes / sizeof *codes; ++i) {
        const char *s = px_strerror(codes[i]);
        ck_assert_ptr_nonnull(s);
        ck_assert(strncmp(s, "PX_", 3) == 0);
        for (size_t j = 0; j < i; ++j)
            ck_assert_str_ne(s, px_strerror(codes[j]));
    }
    ck_assert_ptr_nonnull(px_strerror(12345));
    ck_assert_ptr_nonnull(px_strerror(-12345));
}
END_TEST

/* --- lifecycle ---------------------------------------------------------------------------- */

START_TEST(test_initialize_finalize_reinitialize)
{
    ck_assert_int_eq(px_is_initialized(), 0);
    for (int round = 0; round < 3; ++round) {
        ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
        ck_assert_int_eq(px_is_initialized(), 1);
        ck_assert_ptr_nonnull(px_default_space());
        ck_assert_ptr_nonnull(px_space_by_name("serial"));
        ck_assert_int_eq(px_finalize(), PX_OK);
        ck_assert_int_eq(px_is_initialized(), 0);
    }
}
END_TEST

START_TEST(test_initialize_twice_is_ealready)
{
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_EALREADY);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

START_TEST(test_calls_before_initialize_are_enotinit)
{
    ck_assert_int_eq(px_finalize(), PX_ENOTINIT);
    ck_assert_int_eq(px_fence(NULL), PX_ENOTINIT);
    ck_assert_ptr_null(px_default_space());
    ck_assert_ptr_null(px_space_by_name("serial"));
    double r = 0;
    ck_assert_int_eq(px_parallel_reduce_fn(NULL, "x", px_range(0, 1), NULL, NULL, &px_sum_f64, &r),
                     PX_EFAULT);
}
END_TEST

static void noop_for(int64_t b, int64_t e, void *ctx)
{
    (void)b;
    (void)e;
    (void)ctx;
}

START_TEST(test_launch_before_initialize_is_enotinit)
{
    ck_assert_int_eq(px_parallel_for_fn(NULL, "x", px_range(0, 10), noop_for, NULL), PX_ENOTINIT);
    ck_assert_int_eq(px_space_concurrency(NULL), PX_EFAULT);
}
END_TEST

START_TEST(test_initialize_with_default_space_serial)
{
    px_settings s;
    px_settings_default(&s);
    s.default_space = "serial";
    ck_assert_int_eq(px_initialize_with(&s), PX_OK);
    ck_assert_str_eq(px_space_name(px_default_space()), "serial");
    ck_assert_int_eq(px_space_concurrency(px_default_space()), 1);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

START_TEST(test_initialize_with_unknown_space_is_enodev)
{
    px_test_log_capture();
    px_settings s;
    px_settings_default(&s);
    s.default_space = "quantum";
    ck_assert_int_eq(px_initialize_with(&s), PX_ENODEV);
    ck_assert(px_test_log_contains("quantum"));
    ck_assert_int_eq(px_is_initialized(), 0);
    /* a failed initialize leaves the runtime ready for a good one */
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

/* --- spaces ------------------------------------------------------------------------------- */

START_TEST(test_space_lookup)
{
    px_test_log_capture();
    ck_assert_ptr_null(px_space_by_name(NULL));
    ck_assert_ptr_null(px_space_by_name("warp"));
    ck_assert(px_test_log_contains("warp"));
    px_space *s = px_space_by_name("serial");
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(px_space_name(s), "serial");
    ck_assert_str_eq(px_space_name(NULL), "(null)");
    ck_assert_int_eq(px_space_concurrency(s), 1);
    ck_assert(px_space_host_accessible(s));
    ck_assert(!px_space_host_accessible(NULL));
    ck_assert_int_eq(px_fence(s), PX_OK);
    ck_assert_int_eq(px_fence(NULL), PX_OK);
#if PX_HAVE_THREADS
    ck_assert_ptr_nonnull(px_space_by_name("threads"));
#endif
#if !PX_HAVE_CUDA
    ck_assert_ptr_null(px_space_by_name("cuda"));
#endif
}
END_TEST

START_TEST(test_default_space_is_highest_priority)
{
    /* ctest pins PX_DEFAULT_SPACE for host suites (tests/CMakeLists.txt): look at the
     * unpinned choice. */
    ck_assert_int_eq(px_finalize(), PX_OK);
    unsetenv("PX_DEFAULT_SPACE");
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    const char *name = px_space_name(px_default_space());
    if (px_space_by_name("cuda"))
        ck_assert_str_eq(name, "cuda");
    else if (px_space_by_name("threads"))
        ck_assert_str_eq(name, "threads");
    else
        ck_assert_str_eq(name, "serial");
}
END_TEST

static void fence_inside(int64_t b, int64_t e, void *ctx)
{
    (void)b;
    (void)e;
    int *rc = ctx;
    *rc = px_fence(px_space_by_name("serial"));
    rc[1] = px_finalize();
    rc[2] = px_fence(NULL);
}

START_TEST(test_fence_and_finalize_inside_kernel_are_edeadlk)
{
    int rc[3] = {0, 0, 0};
    ck_assert_int_eq(
        px_parallel_for_fn(px_space_by_name("serial"), "inside", px_range(0, 1), fence_inside, rc),
        PX_OK);
    ck_assert_int_eq(rc[0], PX_EDEADLK);
    ck_assert_int_eq(rc[1], PX_EDEADLK);
    ck_assert_int_eq(rc[2], PX_EDEADLK);
    /* the refused finalize tore nothing down */
    ck_assert_int_eq(px_is_initialized(), 1);
    ck_assert_int_eq(px_fence(NULL), PX_OK);
}
END_TEST

/* --- memory ------------------------------------------------------------------------------- */

START_TEST(test_malloc_is_aligned_and_copies)
{
    px_space *s = px_space_by_name("serial");
    for (size_t bytes = 0; bytes < 5000; bytes = bytes * 3 + 1) {
        unsigned char *a = px_malloc(s, bytes), *b = px_malloc(s, bytes);
        ck_assert_ptr_nonnull(a);
        ck_assert_ptr_nonnull(b);
        ck_assert_int_eq((uintptr_t)a % PX_MALLOC_ALIGNMENT, 0);
        for (size_t i = 0; i < bytes; ++i)
            a[i] = (unsigned char)(i * 7);
        ck_assert_int_eq(px_deep_copy(s, b, s, a, bytes), PX_OK);
        ck_assert(bytes == 0 || memcmp(a, b, bytes) == 0);
        ck_assert_int_eq(px_free(s, a), PX_OK);
        ck_assert_int_eq(px_free(s, b), PX_OK);
    }
    ck_assert_int_eq(px_free(s, NULL), PX_OK);
}
END_TEST

START_TEST(test_memory_bad_arguments)
{
    px_test_log_capture();
    px_space *s = px_space_by_name("serial");
    char buf[8];
    ck_assert_ptr_null(px_malloc(NULL, 8));
    ck_assert_int_eq(px_free(NULL, buf), PX_EFAULT);
    ck_assert_int_eq(px_deep_copy(NULL, buf, s, buf, 8), PX_EFAULT);
    ck_assert_int_eq(px_deep_copy(s, buf, NULL, buf, 8), PX_EFAULT);
    ck_assert_int_eq(px_deep_copy(s, NULL, s, buf, 8), PX_EFAULT);
    ck_assert_int_eq(px_deep_copy(s, buf, s, NULL, 8), PX_EFAULT);
    ck_assert_int_eq(px_deep_copy(s, NULL, s, NULL, 0), PX_OK);
    ck_assert_ptr_null(px_malloc(s, SIZE_MAX - 8));
    ck_assert(px_test_log_contains("out of memory"));
}
END_TEST

START_TEST(test_memory_before_initialize_is_enotinit)
{
    /* Before initialize, "not initialized" comes first, even for a NULL space (the mistake to
     * fix is the missing px_initialize, not the space). */
    px_test_log_capture();
    ck_assert_ptr_null(px_malloc(NULL, 8));
    ck_assert(px_test_log_contains("px_malloc: the runtime is not initialized"));
    ck_assert(!px_test_log_contains("space is NULL"));
    ck_assert_int_eq(px_free(NULL, NULL), PX_ENOTINIT);
    ck_assert(px_test_log_contains("px_free: the runtime is not initialized"));
    ck_assert_int_eq(px_deep_copy(NULL, NULL, NULL, NULL, 0), PX_ENOTINIT);
    ck_assert(px_test_log_contains("px_deep_copy: the runtime is not initialized"));
    ck_assert(!px_test_log_contains("space is NULL"));
    /* a handle kept across px_finalize (the registry's storage outlives the runtime) */
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    px_space *stale = px_space_by_name("serial");
    ck_assert_ptr_nonnull(stale);
    ck_assert_int_eq(px_finalize(), PX_OK);
    px_test_log_capture();
    char buf[8] = {0};
    ck_assert_ptr_null(px_malloc(stale, 8));
    ck_assert(px_test_log_contains("not initialized"));
    ck_assert_int_eq(px_free(stale, buf), PX_ENOTINIT);
    ck_assert_int_eq(px_deep_copy(stale, buf, stale, buf + 4, 4), PX_ENOTINIT);
    ck_assert_int_eq(px_space_concurrency(stale), PX_ENOTINIT);
    ck_assert_int_eq(px_fence(stale), PX_ENOTINIT);
}
END_TEST

/* --- reducers ----------------------------------------------------------------------------- */

START_TEST(test_reducer_validate)
{
    ck_assert_int_eq(px_reducer_validate(NULL), PX_EFAULT);
    ck_assert_int_eq(px_reducer_validate(&px_sum_f64), PX_OK);
    px_reducer r = px_sum_f64;
    r.value_size = 0;
    ck_assert_int_eq(px_reducer_validate(&r), PX_EINVAL);
    r.value_size = PX_REDUCER_MAX_VALUE_BYTES + 1;
    ck_assert_int_eq(px_reducer_validate(&r), PX_EINVAL);
    r = px_sum_f64;
    r.value_align = 3;
    ck_assert_int_eq(px_reducer_validate(&r), PX_EINVAL);
    r.value_align = 128;
    ck_assert_int_eq(px_reducer_validate(&r), PX_EINVAL);
    r = px_sum_f64;
    r.join = NULL;
    ck_assert_int_eq(px_reducer_validate(&r), PX_EINVAL);
    r = px_sum_f64;
    r.identity = NULL;
    ck_assert_int_eq(px_reducer_validate(&r), PX_EINVAL);
}
END_TEST

/* --- allocation failure ------------------------------------------------------------------- */

/* Fail the n-th internal allocation of px_initialize for n = 1, 2, ... until it succeeds: each
 * failure must be a clean status with the runtime left uninitialized and re-initializable. */
START_TEST(test_initialize_survives_every_allocation_failure)
{
    px_log_set_level(PX_LOG_ERROR);
    int n = 1;
    for (; n < 10000; ++n) {
        pxi_alloc_fail_at((uint64_t)n);
        int rc = px_initialize(NULL, NULL);
        pxi_alloc_fail_at(0);
        if (rc == PX_OK)
            break;
        ck_assert_msg(rc == PX_ENOMEM, "allocation %d failing gave %s", n, px_strerror(rc));
        ck_assert_int_eq(px_is_initialized(), 0);
    }
    ck_assert_int_eq(px_is_initialized(), 1);
    ck_assert_int_eq(px_finalize(), PX_OK);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

/* --- registry: start order, rollback ------------------------------------------------------ */

/* Spaces start in ascending priority and stop in descending priority; an unavailable one is
 * skipped both ways. */
START_TEST(test_spaces_initialize_in_priority_order_finalize_in_reverse)
{
    fake_hi_mode = FAKE_OK;
    events[0] = '\0';
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    ck_assert_str_eq(events, "LH");
    ck_assert_int_eq(px_finalize(), PX_OK);
    ck_assert_str_eq(events, "LHhl");
    fake_hi_mode = FAKE_ENODEV;
    events[0] = '\0';
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
    ck_assert_str_eq(events, "LHl");
}
END_TEST

/* A space failing its initialize fails px_initialize with its status, after finalizing every
 * space started before it; a later px_initialize works. */
START_TEST(test_space_initialize_failure_rolls_back_started_spaces)
{
    px_test_log_capture();
    fake_hi_mode = FAKE_FAIL;
    events[0] = '\0';
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_EIO);
    ck_assert_str_eq(events, "LHl");
    ck_assert(px_test_log_contains("fake_hi"));
    ck_assert_int_eq(px_is_initialized(), 0);
    ck_assert_ptr_null(px_default_space());
    fake_hi_mode = FAKE_ENODEV;
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

/* A space failing its finalize makes px_finalize return that status, and the runtime is down
 * regardless. */
START_TEST(test_space_finalize_failure_is_returned)
{
    px_test_log_capture();
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    fake_lo_fini_status = PX_EIO;
    ck_assert_int_eq(px_finalize(), PX_EIO);
    ck_assert(px_test_log_contains("fake_lo"));
    ck_assert_int_eq(px_is_initialized(), 0);
    fake_lo_fini_status = PX_OK;
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

static void count_for(int64_t b, int64_t e, void *ctx)
{
    *(int64_t *)ctx += e - b;
}

/* Every call taking a space reports PX_ENODEV (NULL for px_malloc) for a registered space that
 * is not available, instead of calling into a backend that never came up. */
START_TEST(test_unavailable_space_is_enodev)
{
    px_test_log_capture();
    px_space *hi = registered("fake_hi");
    ck_assert_ptr_nonnull(hi);
    ck_assert_ptr_null(px_space_by_name("fake_hi"));
    ck_assert(px_test_log_contains("not available"));
    ck_assert_ptr_nonnull(px_space_by_name("fake_lo"));
    ck_assert_int_eq(px_space_concurrency(hi), PX_ENODEV);
    ck_assert_int_eq(px_fence(hi), PX_ENODEV);
    char buf[8] = {0};
    ck_assert_ptr_null(px_malloc(hi, 8));
    ck_assert_int_eq(px_free(hi, buf), PX_ENODEV);
    ck_assert_int_eq(px_deep_copy(hi, buf, px_space_by_name("serial"), buf + 4, 4), PX_ENODEV);
    int64_t n = 0;
    ck_assert_int_eq(px_parallel_for_fn(hi, "unavail", px_range(0, 5), count_for, &n), PX_ENODEV);
    ck_assert_int_eq(n, 0);
    double d = 1.0;
    ck_assert_int_eq(
        px_parallel_reduce_fn(hi, "unavail", px_range(0, 5), NULL, NULL, &px_sum_f64, &d),
        PX_EFAULT); /* fn is checked first */
    ck_assert(px_test_log_contains("fake_hi"));
    /* the default space never is an unavailable one */
    ck_assert_ptr_ne(px_default_space(), hi);
}
END_TEST

START_TEST(test_concurrency_null_is_efault_and_logged)
{
    px_test_log_capture();
    ck_assert_int_eq(px_space_concurrency(NULL), PX_EFAULT);
    ck_assert(px_test_log_contains("px_space_concurrency"));
}
END_TEST

/* --- more reducers ------------------------------------------------------------------------- */

typedef struct {
    double a, b, c;
} sum3;
static void sum3_identity(void *v)
{
    *(sum3 *)v = (sum3){0, 0, 0};
}
static void sum3_join(void *dst, const void *src)
{
    sum3 *d = dst;
    const sum3 *s = src;
    d->a += s->a;
    d->b += s->b;
    d->c += s->c;
}

/* op/type steer device backends; a reducer whose op/type disagree with its value is refused. */
START_TEST(test_reducer_validate_checks_op_and_type)
{
    const px_reducer *builtins[] = {&px_sum_f64,    &px_sum_f32,    &px_sum_i64, &px_prod_f64,
                                    &px_min_f64,    &px_max_f64,    &px_min_i64, &px_max_i64,
                                    &px_minloc_f64, &px_maxloc_f64, &px_land,    &px_lor,
                                    &px_band_u64,   &px_bor_u64};
    for (size_t i = 0; i < sizeof builtins / sizeof *builtins; ++i)
        ck_assert_int_eq(px_reducer_validate(builtins[i]), PX_OK);
    const px_reducer custom = PX_REDUCER_INIT(sum3, sum3_identity, sum3_join, "sum3");
    ck_assert_int_eq(px_reducer_validate(&custom), PX_OK);
    px_reducer r = px_sum_f64;
    r.value_size = 4; /* F64 value of 4 bytes */
    ck_assert_int_eq(px_reducer_validate(&r), PX_EINVAL);
    r = px_sum_f64;
    r.op = (px_reducer_op)99;
    ck_assert_int_eq(px_reducer_validate(&r), PX_EINVAL);
    r = px_sum_f64;
    r.type = (px_value_type)-1;
    ck_assert_int_eq(px_reducer_validate(&r), PX_EINVAL);
    r = custom;
    r.op = PX_REDUCER_SUM; /* builtin op on a custom value */
    ck_assert_int_eq(px_reducer_validate(&r), PX_EINVAL);
    r = px_sum_f64;
    r.op = PX_REDUCER_CUSTOM; /* custom op on a builtin type */
    ck_assert_int_eq(px_reducer_validate(&r), PX_EINVAL);
    r = px_minloc_f64;
    r.op = PX_REDUCER_SUM; /* a sum of value/location pairs */
    ck_assert_int_eq(px_reducer_validate(&r), PX_EINVAL);
    r = px_min_f64;
    r.type = PX_VALUE_VALLOC_F64;
    r.value_size = sizeof(px_valloc_f64);
    ck_assert_int_eq(px_reducer_validate(&r), PX_EINVAL);
}
END_TEST

/* min/max joins follow fmin/fmax: a NaN on either side loses to a number. */
START_TEST(test_min_max_join_nan_loses_to_number)
{
    double d = NAN, s = 3.0;
    px_min_f64.join(&d, &s);
    ck_assert(d == 3.0);
    d = 3.0;
    s = NAN;
    px_min_f64.join(&d, &s);
    ck_assert(d == 3.0);
    d = NAN;
    s = -2.0;
    px_max_f64.join(&d, &s);
    ck_assert(d == -2.0);
    d = -2.0;
    s = NAN;
    px_max_f64.join(&d, &s);
    ck_assert(d == -2.0);
}
END_TEST

static void reduce_sum_index(int64_t b, int64_t e, void *ctx, void *acc)
{
    (void)ctx;
    for (int64_t i = b; i < e; ++i)
        *(double *)acc += (double)i;
}

/* A launch with an invalid reducer is refused before anything runs; the log names the
 * reducer and the label. */
START_TEST(test_reduce_with_invalid_reducer_names_it)
{
    px_test_log_capture();
    px_reducer r = px_sum_f64;
    r.name = "broken_sum";
    r.value_size = 4;
    double d = 7.0;
    ck_assert_int_eq(px_parallel_reduce_fn(px_space_by_name("serial"), "lbl", px_range(0, 10),
                                           reduce_sum_index, NULL, &r, &d),
                     PX_EINVAL);
    ck_assert(d == 7.0);
    ck_assert(px_test_log_contains("broken_sum"));
    ck_assert(px_test_log_contains("lbl"));
}
END_TEST

/* A hand-made kernel object with the magic but no host entry is refused, not called. */
START_TEST(test_kernel_without_host_entry_is_einval)
{
    px_test_log_capture();
    px_kernel k = {
        PX_KERNEL_MAGIC, PX_KERNEL_FOR, NULL, 0, 0, NULL, NULL, NULL, NULL, PX_VALUE_CUSTOM, 0,
        {NULL, NULL},    {NULL, NULL}};
    ck_assert_int_eq(
        px_parallel_for(px_space_by_name("serial"), "nohost", px_range(0, 4), &k, NULL, 0),
        PX_EINVAL);
    ck_assert(px_test_log_contains("no host entry"));
    ck_assert(px_test_log_contains("(unnamed)"));
}
END_TEST

typedef struct {
    int64_t *hits;
} hit_args;
PX_FOR(k_hit, hit_args, i, a)
{
    a->hits[i] += 1;
}

/* A space whose memory the host cannot reach refuses host function kernels and single-source
 * kernels without a device half (PX_EINVAL, nothing runs). */
START_TEST(test_host_only_kernels_on_device_space_are_einval)
{
    px_test_log_capture();
    px_space *dev = px_space_by_name("fake_dev");
    ck_assert_ptr_nonnull(dev);
    ck_assert(!px_space_host_accessible(dev));
    int64_t n = 0;
    ck_assert_int_eq(px_parallel_for_fn(dev, "hostfn", px_range(0, 4), count_for, &n), PX_EINVAL);
    ck_assert(px_test_log_contains("cannot run on space 'fake_dev'"));
    double d = 0;
    ck_assert_int_eq(px_parallel_reduce_fn(dev, "hostfn", px_range(0, 4), reduce_sum_index, NULL,
                                           &px_sum_f64, &d),
                     PX_EINVAL);
    int64_t hits[4] = {0, 0, 0, 0};
    hit_args ha = {hits};
    ck_assert_int_eq(px_parallel_for(dev, "nodev", px_range(0, 4), &k_hit, &ha, sizeof ha),
                     PX_EINVAL);
    ck_assert(px_test_log_contains("not compiled for space 'fake_dev'"));
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(hits[0], 0);
    /* the same kernel runs on a host space */
    ck_assert_int_eq(px_parallel_for(NULL, NULL, px_range(0, 4), &k_hit, &ha, sizeof ha), PX_OK);
    ck_assert_int_eq(hits[0] + hits[1] + hits[2] + hits[3], 4);
}
END_TEST

/* Copies touching a device space are made by that space, told which side is host memory. */
START_TEST(test_deep_copy_is_routed_through_device_space)
{
    px_space *dev = px_space_by_name("fake_dev"), *host = px_space_by_name("serial");
    char a[8] = "abcdefg", b[8] = {0};
    dev_copies = 0;
    ck_assert_int_eq(px_deep_copy(dev, b, host, a, 8), PX_OK);
    ck_assert_int_eq(dev_copies, 1);
    ck_assert_int_eq(dev_copy_dst_host, 0);
    ck_assert_int_eq(dev_copy_src_host, 1);
    ck_assert_str_eq(b, "abcdefg");
    ck_assert_int_eq(px_deep_copy(host, a, dev, b, 8), PX_OK);
    ck_assert_int_eq(dev_copies, 2);
    ck_assert_int_eq(dev_copy_dst_host, 1);
    ck_assert_int_eq(dev_copy_src_host, 0);
    /* host to host never involves the device space */
    ck_assert_int_eq(px_deep_copy(host, b, host, a, 8), PX_OK);
    ck_assert_int_eq(dev_copies, 2);
}
END_TEST

/* --- concurrency ------------------------------------------------------------------------- */

static void quiet_handler(px_log_level level, const char *msg, void *user)
{
    (void)level;
    (void)msg;
    (void)user;
}

typedef struct {
    int id;
    int bad;
} worker_arg;

/* Serial launches from several threads at once (each runs on its caller), interleaved with
 * log traffic and handler/level changes: results stay exact; TSan (label concurrency) checks
 * the log and launch paths for races. */
static void *launch_worker(void *p)
{
    worker_arg *w = p;
    px_space *s = px_space_by_name("serial");
    for (int it = 0; it < 200; ++it) {
        double d = -1;
        int64_t n = 1 + (it * 7 + w->id) % 97;
        if (px_parallel_reduce_fn(s, "conc", px_range_chunked(0, n, 1 + it % 5, PX_SCHEDULE_STATIC),
                                  reduce_sum_index, NULL, &px_sum_f64, &d) != PX_OK ||
            d != (double)(n * (n - 1) / 2))
            w->bad++;
        if (it % 10 == 0) {
            /* a bad launch logs an error through whichever handler is current */
            if (px_parallel_for_fn(s, "conc_bad", px_range(3, 2), count_for, &n) != PX_EINVAL)
                w->bad++;
            px_log_set_handler(it % 20 ? quiet_handler : NULL, NULL);
            (void)px_log_set_level(it % 20 ? PX_LOG_DEBUG : PX_LOG_ERROR);
        }
    }
    return NULL;
}

START_TEST(test_concurrent_serial_launches_and_logging)
{
    px_log_set_handler(quiet_handler, NULL);
    enum { N = 4 };
    pthread_t t[N];
    worker_arg w[N];
    for (int i = 0; i < N; ++i) {
        w[i] = (worker_arg){i, 0};
        ck_assert_int_eq(pthread_create(&t[i], NULL, launch_worker, &w[i]), 0);
    }
    for (int i = 0; i < N; ++i) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(w[i].bad, 0);
    }
    px_log_set_handler(NULL, NULL);
    (void)px_log_set_level(PX_LOG_WARN);
}
END_TEST

/* --- allocation failure, more ---------------------------------------------------------------- */

/* Same loop with settings that allocate (owned strings), through px_initialize_with. */
START_TEST(test_initialize_with_survives_every_allocation_failure)
{
    px_log_set_level(PX_LOG_ERROR);
    px_settings s;
    px_settings_default(&s);
    s.tools_libs = "/nonexistent/parex-test-tool.so";
    setenv("PX_LOG_LEVEL", "error", 1); /* the missing tool library is only a warning */
    int n = 1, failures = 0;
    for (; n < 10000; ++n) {
        pxi_alloc_fail_at((uint64_t)n);
        int rc = px_initialize_with(&s);
        pxi_alloc_fail_at(0);
        if (rc == PX_OK)
            break;
        ++failures;
        ck_assert_msg(rc == PX_ENOMEM, "allocation %d failing gave %s", n, px_strerror(rc));
        ck_assert_int_eq(px_is_initialized(), 0);
    }
    ck_assert_int_ge(failures, 1); /* the owned copy of tools_libs was hit at least */
    ck_assert_int_eq(px_is_initialized(), 1);
    ck_assert_int_eq(px_finalize(), PX_OK);
    unsetenv("PX_LOG_LEVEL");
}
END_TEST

/* px_malloc: the failing allocation is a NULL with a message naming size and space, and the
 * next one works. */
START_TEST(test_malloc_allocation_failure_is_null_and_logged)
{
    px_test_log_capture();
    px_space *s = px_space_by_name("serial");
    pxi_alloc_fail_at(1);
    void *p = px_malloc(s, 100);
    pxi_alloc_fail_at(0);
    ck_assert_ptr_null(p);
    ck_assert(px_test_log_contains("100 bytes"));
    ck_assert(px_test_log_contains("serial"));
    p = px_malloc(s, 100);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(px_free(s, p), PX_OK);
}
END_TEST

static Suite *core_suite(void)
{
    Suite *s = suite_create("core");
    TCase *tc = tcase_create("lifecycle");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_strerror_names_every_code);
    tcase_add_test(tc, test_initialize_finalize_reinitialize);
    tcase_add_test(tc, test_initialize_twice_is_ealready);
    tcase_add_test(tc, test_calls_before_initialize_are_enotinit);
    tcase_add_test(tc, test_launch_before_initialize_is_enotinit);
    tcase_add_test(tc, test_initialize_with_default_space_serial);
    tcase_add_test(tc, test_initialize_with_unknown_space_is_enodev);
    tcase_add_test(tc, test_memory_before_initialize_is_enotinit);
    tcase_add_test(tc, test_reducer_validate);
    tcase_add_test(tc, test_initialize_survives_every_allocation_failure);
    tcase_add_test(tc, test_initialize_with_survives_every_allocation_failure);
    tcase_add_test(tc, test_spaces_initialize_in_priority_order_finalize_in_reverse);
    tcase_add_test(tc, test_space_initialize_failure_rolls_back_started_spaces);
    tcase_add_test(tc, test_space_finalize_failure_is_returned);
    tcase_add_test(tc, test_concurrency_null_is_efault_and_logged);
    tcase_add_test(tc, test_reducer_validate_checks_op_and_type);
    tcase_add_test(tc, test_min_max_join_nan_loses_to_number);
    suite_add_tcase(s, tc);

    TCase *rt = tcase_create("runtime");
    tcase_set_timeout(rt, 60);
    tcase_add_checked_fixture(rt, px_test_setup, px_test_teardown);
    tcase_add_test(rt, test_space_lookup);
    tcase_add_test(rt, test_default_space_is_highest_priority);
    tcase_add_test(rt, test_fence_and_finalize_inside_kernel_are_edeadlk);
    tcase_add_test(rt, test_malloc_is_aligned_and_copies);
    tcase_add_test(rt, test_memory_bad_arguments);
    tcase_add_test(rt, test_unavailable_space_is_enodev);
    tcase_add_test(rt, test_reduce_with_invalid_reducer_names_it);
    tcase_add_test(rt, test_kernel_without_host_entry_is_einval);
    tcase_add_test(rt, test_malloc_allocation_failure_is_null_and_logged);
    tcase_add_test(rt, test_concurrent_serial_launches_and_logging);
    tcase_add_test(rt, test_host_only_kernels_on_device_space_are_einval);
    tcase_add_test(rt, test_deep_copy_is_routed_through_device_space);
    suite_add_tcase(s, rt);
    return s;
}

int main(void)
{
    return px_test_run(core_suite());
}
