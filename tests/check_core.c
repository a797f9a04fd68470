/* tests/check_core.c - lifecycle, settings, logging, registry, memory and status codes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "px_test.h"

/* --- status codes ------------------------------------------------------------------------- */

START_TEST(test_strerror_names_every_code)
{
    const int codes[] = {PX_OK,     PX_EINVAL, PX_ENOMEM, PX_ENOSYS,    PX_EDEADLK,
                         PX_ENODEV, PX_ENOTINIT, PX_EALREADY, PX_EBUSY, PX_ECUDA,
                         PX_EIO,    PX_ECANCELED, PX_EFAULT};
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

START_TEST(test_settings_default_values)
{
    px_settings s;
    memset(&s, 0x5a, sizeof s);
    px_settings_default(&s);
    ck_assert_int_eq(s.num_threads, 0);
    ck_assert_int_eq(s.device_id, -1);
    ck_assert_ptr_null(s.bind);
    ck_assert_ptr_null(s.default_space);
    ck_assert_ptr_null(s.engine);
    ck_assert_ptr_null(s.tools_libs);
    ck_assert_int_eq(s.print_configuration, 0);
    px_settings_default(NULL); /* ignored */
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

START_TEST(test_initialize_with_bad_fields_is_einval)
{
    px_test_log_capture();
    px_settings s;
    px_settings_default(&s);
    s.bind = "diagonal";
    ck_assert_int_eq(px_initialize_with(&s), PX_EINVAL);
    ck_assert(px_test_log_contains("px_settings.bind"));
    px_settings_default(&s);
    s.num_threads = -2;
    ck_assert_int_eq(px_initialize_with(&s), PX_EINVAL);
    ck_assert(px_test_log_contains("num_threads"));
    px_settings_default(&s);
    s.engine = "turbo";
    ck_assert_int_eq(px_initialize_with(&s), PX_EINVAL);
    px_settings_default(&s);
    s.device_id = -7;
    ck_assert_int_eq(px_initialize_with(&s), PX_EINVAL);
    ck_assert_int_eq(px_is_initialized(), 0);
}
END_TEST

/* Each malformed environment value is PX_EINVAL with a message naming the variable. */
START_TEST(test_malformed_environment_names_variable)
{
    static const struct {
        const char *var, *value;
    } bad[] = {
        {"PX_NUM_THREADS", "0"},       {"PX_NUM_THREADS", "-3"},   {"PX_NUM_THREADS", "abc"},
        {"PX_NUM_THREADS", "4x"},      {"PX_NUM_THREADS", ""},     {"PX_DEVICE_ID", "-1"},
        {"PX_BIND", "tight"},          {"PX_ENGINE", "fast"},      {"PX_LOG_LEVEL", "loud"},
        {"PX_WAIT_POLICY", "maybe"},   {"PX_SPIN_US", "-5"},       {"PX_PRINT_CONFIGURATION", "2"},
        {"PX_KERNEL_TIMER", "on"},     {"PX_CPU_WORKER_NTHREADS", "0"},
        {"PX_ENGINE_MAX_PENDING", "1e3"}, {"PX_DEFAULT_SPACE", ""},
    };
    px_test_log_capture();
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        px_test_log_clear();
        setenv(bad[i].var, bad[i].value, 1);
        int rc = px_initialize(NULL, NULL);
        ck_assert_msg(rc == PX_EINVAL, "%s=%s gave %s", bad[i].var, bad[i].value,
                      px_strerror(rc));
        ck_assert_msg(px_test_log_contains(bad[i].var), "message for %s=%s: %s", bad[i].var,
                      bad[i].value, px_test_log_text());
        ck_assert_int_eq(px_is_initialized(), 0);
        unsetenv(bad[i].var);
    }
}
END_TEST

START_TEST(test_kokkos_tools_libs_is_read)
{
    setenv("KOKKOS_TOOLS_LIBS", "", 1);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
    unsetenv("KOKKOS_TOOLS_LIBS");
}
END_TEST

START_TEST(test_flags_are_consumed_and_win_over_environment)
{
    setenv("PX_DEFAULT_SPACE", "nonexistent", 1);
    char a0[] = "prog", a1[] = "--px-default-space=serial", a2[] = "input.mtx",
         a3[] = "--px-log-level=warn", a4[] = "--other";
    char *args[] = {a0, a1, a2, a3, a4, NULL};
    int argc = 5;
    char **argv = args;
    ck_assert_int_eq(px_initialize(&argc, &argv), PX_OK);
    ck_assert_int_eq(argc, 3);
    ck_assert_str_eq(argv[0], "prog");
    ck_assert_str_eq(argv[1], "input.mtx");
    ck_assert_str_eq(argv[2], "--other");
    ck_assert_ptr_null(argv[3]);
    ck_assert_str_eq(px_space_name(px_default_space()), "serial");
    ck_assert_int_eq(px_finalize(), PX_OK);
    unsetenv("PX_DEFAULT_SPACE");
}
END_TEST

START_TEST(test_settings_struct_wins_over_flags)
{
    char a0[] = "prog", a1[] = "--px-default-space=nonexistent";
    char *args[] = {a0, a1, NULL};
    int argc = 2;
    char **argv = args;
    /* flags are only read by px_initialize; px_initialize_with wins over the environment */
    setenv("PX_DEFAULT_SPACE", "nonexistent", 1);
    px_settings s;
    px_settings_default(&s);
    s.default_space = "serial";
    ck_assert_int_eq(px_initialize_with(&s), PX_OK);
    ck_assert_str_eq(px_space_name(px_default_space()), "serial");
    ck_assert_int_eq(px_finalize(), PX_OK);
    unsetenv("PX_DEFAULT_SPACE");
    /* and the flag alone wins over nothing: an unknown space is PX_ENODEV */
    ck_assert_int_eq(px_initialize(&argc, &argv), PX_ENODEV);
}
END_TEST

START_TEST(test_unknown_or_valueless_flag_is_einval)
{
    px_test_log_capture();
    char a0[] = "prog", a1[] = "--px-warp-speed=9";
    char *args[] = {a0, a1, NULL};
    int argc = 2;
    char **argv = args;
    ck_assert_int_eq(px_initialize(&argc, &argv), PX_EINVAL);
    ck_assert(px_test_log_contains("--px-warp-speed"));
    char b0[] = "prog", b1[] = "--px-num-threads";
    char *bargs[] = {b0, b1, NULL};
    argc = 2;
    argv = bargs;
    ck_assert_int_eq(px_initialize(&argc, &argv), PX_EINVAL);
    ck_assert(px_test_log_contains("--px-num-threads"));
    char c0[] = "prog", c1[] = "--px-num-threads=zero";
    char *cargs[] = {c0, c1, NULL};
    argc = 2;
    argv = cargs;
    ck_assert_int_eq(px_initialize(&argc, &argv), PX_EINVAL);
    ck_assert(px_test_log_contains("--px-num-threads"));
}
END_TEST

START_TEST(test_help_prints_every_setting)
{
    char path[] = "/tmp/px_help_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w+");
    px_print_help(f);
    fflush(f);
    rewind(f);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    unlink(path);
    const char *names[] = {"PX_NUM_THREADS", "PX_DEVICE_ID", "PX_BIND", "PX_DEFAULT_SPACE",
                           "PX_ENGINE", "PX_TOOLS_LIBS", "KOKKOS_TOOLS_LIBS",
                           "PX_PRINT_CONFIGURATION", "PX_LOG_LEVEL", "PX_WAIT_POLICY",
                           "PX_SPIN_US", "PX_CPU_WORKER_NTHREADS", "PX_ENGINE_MAX_PENDING",
                           "PX_PROFILE", "PX_KERNEL_TIMER", "--px-num-threads=N", "--px-help",
                           "--px-bind=close|spread|none"};
    for (size_t i = 0; i < sizeof names / sizeof *names; ++i)
        ck_assert_msg(strstr(buf, names[i]), "help lacks %s", names[i]);
}
END_TEST

START_TEST(test_help_flag_initializes_normally)
{
    char a0[] = "prog", a1[] = "--px-help";
    char *args[] = {a0, a1, NULL};
    int argc = 2;
    char **argv = args;
    ck_assert_int_eq(px_initialize(&argc, &argv), PX_OK);
    ck_assert_int_eq(argc, 1);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

static char *print_config_to_string(void)
{
    static char buf[32768];
    FILE *f = tmpfile();
    px_print_configuration(f);
    fflush(f);
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

START_TEST(test_print_configuration_lists_version_options_and_spaces)
{
    const char *before = print_config_to_string();
    ck_assert(strstr(before, PX_VERSION_STRING));
    ck_assert(strstr(before, "serial: registered"));
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    const char *after = print_config_to_string();
    ck_assert(strstr(after, "build options"));
    ck_assert(strstr(after, "serial: available"));
    ck_assert(strstr(after, "(default)"));
    ck_assert(strstr(after, "num_threads"));
#if PX_HAVE_THREADS
    ck_assert(strstr(after, "threads:"));
#endif
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

START_TEST(test_print_configuration_flag)
{
    char a0[] = "prog", a1[] = "--px-print-configuration";
    char *args[] = {a0, a1, NULL};
    int argc = 2;
    char **argv = args;
    ck_assert_int_eq(px_initialize(&argc, &argv), PX_OK);
    ck_assert_int_eq(argc, 1);
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

/* --- logging ------------------------------------------------------------------------------ */

START_TEST(test_log_level_filters_and_bad_level_is_einval)
{
    ck_assert_int_eq(px_log_set_level((px_log_level)9), PX_EINVAL);
    ck_assert_int_eq(px_log_set_level((px_log_level)-1), PX_EINVAL);
    px_test_log_capture();
    ck_assert_int_eq(px_log_set_level(PX_LOG_ERROR), PX_OK);
    ck_assert_int_eq(px_log_get_level(), PX_LOG_ERROR);
    px_space_by_name("serial"); /* info-level message: dropped */
    ck_assert_str_eq(px_test_log_text(), "");
    ck_assert_int_eq(px_log_set_level(PX_LOG_INFO), PX_OK);
    px_space_by_name("serial");
    ck_assert(px_test_log_contains("not initialized"));
    px_log_set_handler(NULL, NULL);
}
END_TEST

START_TEST(test_log_level_from_environment)
{
    setenv("PX_LOG_LEVEL", "debug", 1);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    ck_assert_int_eq(px_log_get_level(), PX_LOG_DEBUG);
    ck_assert_int_eq(px_finalize(), PX_OK);
    unsetenv("PX_LOG_LEVEL");
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
}

START_TEST(test_fence_and_finalize_inside_kernel_are_edeadlk)
{
    int rc[2] = {0, 0};
    ck_assert_int_eq(px_parallel_for_fn(px_space_by_name("serial"), "inside", px_range(0, 1),
                                        fence_inside, rc),
                     PX_OK);
    ck_assert_int_eq(rc[0], PX_EDEADLK);
    ck_assert_int_eq(rc[1], PX_EDEADLK);
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
    /* a space handle cannot be had before initialize; NULL spaces still fault */
    ck_assert_ptr_null(px_malloc(NULL, 8));
    ck_assert_int_eq(px_deep_copy(NULL, NULL, NULL, NULL, 0), PX_EFAULT);
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
    tcase_add_test(tc, test_settings_default_values);
    tcase_add_test(tc, test_initialize_with_default_space_serial);
    tcase_add_test(tc, test_initialize_with_unknown_space_is_enodev);
    tcase_add_test(tc, test_initialize_with_bad_fields_is_einval);
    tcase_add_test(tc, test_malformed_environment_names_variable);
    tcase_add_test(tc, test_kokkos_tools_libs_is_read);
    tcase_add_test(tc, test_flags_are_consumed_and_win_over_environment);
    tcase_add_test(tc, test_settings_struct_wins_over_flags);
    tcase_add_test(tc, test_unknown_or_valueless_flag_is_einval);
    tcase_add_test(tc, test_help_prints_every_setting);
    tcase_add_test(tc, test_help_flag_initializes_normally);
    tcase_add_test(tc, test_print_configuration_lists_version_options_and_spaces);
    tcase_add_test(tc, test_print_configuration_flag);
    tcase_add_test(tc, test_log_level_filters_and_bad_level_is_einval);
    tcase_add_test(tc, test_log_level_from_environment);
    tcase_add_test(tc, test_memory_before_initialize_is_enotinit);
    tcase_add_test(tc, test_reducer_validate);
    tcase_add_test(tc, test_initialize_survives_every_allocation_failure);
    suite_add_tcase(s, tc);

    TCase *rt = tcase_create("runtime");
    tcase_set_timeout(rt, 60);
    tcase_add_checked_fixture(rt, px_test_setup, px_test_teardown);
    tcase_add_test(rt, test_space_lookup);
    tcase_add_test(rt, test_default_space_is_highest_priority);
    tcase_add_test(rt, test_fence_and_finalize_inside_kernel_are_edeadlk);
    tcase_add_test(rt, test_malloc_is_aligned_and_copies);
    tcase_add_test(rt, test_memory_bad_arguments);
    suite_add_tcase(s, rt);
    return s;
}

int main(void)
{
    return px_test_run(core_suite());
}
