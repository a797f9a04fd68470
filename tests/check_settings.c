/* tests/check_settings.c - settings (core/settings.c): defaults, the environment, --px-*
 * flags and px_settings with their precedence and strict parsing, argc/argv checks, --px-help
 * and the configuration printout; and the log threshold (base/log.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "px_test.h"

/* --- settings ------------------------------------------------------------------------------ */

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
        {"PX_NUM_THREADS", "0"},
        {"PX_NUM_THREADS", "-3"},
        {"PX_NUM_THREADS", "abc"},
        {"PX_NUM_THREADS", "4x"},
        {"PX_NUM_THREADS", ""},
        {"PX_DEVICE_ID", "-1"},
        {"PX_BIND", "tight"},
        {"PX_ENGINE", "fast"},
        {"PX_LOG_LEVEL", "loud"},
        {"PX_WAIT_POLICY", "maybe"},
        {"PX_SPIN_US", "-5"},
        {"PX_PRINT_CONFIGURATION", "2"},
        {"PX_KERNEL_TIMER", "on"},
        {"PX_CPU_WORKER_NTHREADS", "0"},
        {"PX_ENGINE_MAX_PENDING", "1e3"},
        {"PX_DEFAULT_SPACE", ""},
        /* strict integers: no white space, no '+', no overflow, no trailing junk */
        {"PX_NUM_THREADS", " 4"},
        {"PX_NUM_THREADS", "\t4"},
        {"PX_NUM_THREADS", "+4"},
        {"PX_NUM_THREADS", "4 "},
        {"PX_NUM_THREADS", "99999999999999999999"},
        {"PX_DEVICE_ID", "1024"},
        {"PX_SPIN_US", "0x10"},
        {"PX_DEFAULT_SPACE", "a-space-name-longer-than-thirty-one-characters"},
    };
    px_test_log_capture();
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        px_test_log_clear();
        setenv(bad[i].var, bad[i].value, 1);
        int rc = px_initialize(NULL, NULL);
        ck_assert_msg(rc == PX_EINVAL, "%s=%s gave %s", bad[i].var, bad[i].value, px_strerror(rc));
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
    char *buf = px_test_read_stream(f, NULL);
    fclose(f);
    unlink(path);
    ck_assert_ptr_nonnull(buf);
    const char *names[] = {"PX_NUM_THREADS",
                           "PX_DEVICE_ID",
                           "PX_BIND",
                           "PX_DEFAULT_SPACE",
                           "PX_ENGINE",
                           "PX_TOOLS_LIBS",
                           "KOKKOS_TOOLS_LIBS",
                           "PX_PRINT_CONFIGURATION",
                           "PX_LOG_LEVEL",
                           "PX_WAIT_POLICY",
                           "PX_SPIN_US",
                           "PX_CPU_WORKER_NTHREADS",
                           "PX_ENGINE_MAX_PENDING",
                           "PX_PROFILE",
                           "PX_KERNEL_TIMER",
                           "--px-num-threads=N",
                           "--px-help",
                           "--px-bind=close|spread|none"};
    for (size_t i = 0; i < sizeof names / sizeof *names; ++i)
        ck_assert_msg(strstr(buf, names[i]), "help lacks %s", names[i]);
    free(buf);
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

/* What px_print_configuration prints; the text lives until the next call. */
static const char *print_config_to_string(void)
{
    static char *text;
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    px_print_configuration(f);
    fflush(f);
    rewind(f);
    free(text);
    text = px_test_read_stream(f, NULL);
    fclose(f);
    ck_assert_ptr_nonnull(text);
    return text;
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

/* A failed px_initialize must leave argv exactly as it was: the caller may report, fix the
 * environment and retry with the same arguments. */
START_TEST(test_failed_initialize_leaves_argv_untouched)
{
    px_log_set_level(PX_LOG_ERROR);
    px_log_set_handler(NULL, NULL);
    char a0[] = "prog", a1[] = "--px-num-threads=zero", a2[] = "keep", a3[] = "--px-bind=none";
    char *args[] = {a0, a1, a2, a3, NULL};
    char *orig[] = {a0, a1, a2, a3, NULL};
    int argc = 4;
    char **argv = args;
    ck_assert_int_eq(px_initialize(&argc, &argv), PX_EINVAL);
    ck_assert_int_eq(argc, 4);
    ck_assert_ptr_eq(argv, args);
    for (int i = 0; i < 5; ++i)
        ck_assert_ptr_eq(args[i], orig[i]);
    /* valid flags, but a later step (the default space) fails */
    char b0[] = "prog", b1[] = "--px-default-space=nonexistent", b2[] = "keep";
    char *bargs[] = {b0, b1, b2, NULL};
    argc = 3;
    argv = bargs;
    ck_assert_int_eq(px_initialize(&argc, &argv), PX_ENODEV);
    ck_assert_int_eq(argc, 3);
    ck_assert_ptr_eq(bargs[1], b1);
    ck_assert_ptr_eq(bargs[2], b2);
    ck_assert_int_eq(px_is_initialized(), 0);
}
END_TEST

START_TEST(test_negative_argc_is_einval)
{
    px_test_log_capture();
    char a0[] = "prog";
    char *args[] = {a0, NULL};
    int argc = -1;
    char **argv = args;
    ck_assert_int_eq(px_initialize(&argc, &argv), PX_EINVAL);
    ck_assert(px_test_log_contains("argc = -1"));
    ck_assert_int_eq(argc, -1);
    ck_assert_int_eq(px_is_initialized(), 0);
}
END_TEST

/* argc and argv must describe each other: a negative count, or a positive count with no
 * vector, is PX_EINVAL (logged) even when argv is NULL; a zero count needs no vector. */
START_TEST(test_argc_argv_mismatch_is_einval)
{
    px_test_log_capture();
    int argc = -1;
    char **argv = NULL;
    ck_assert_int_eq(px_initialize(&argc, NULL), PX_EINVAL);
    ck_assert(px_test_log_contains("argc = -1"));
    ck_assert_int_eq(px_initialize(&argc, &argv), PX_EINVAL);
    ck_assert_int_eq(px_is_initialized(), 0);
    px_test_log_clear();
    argc = 2;
    ck_assert_int_eq(px_initialize(&argc, NULL), PX_EINVAL);
    ck_assert(px_test_log_contains("argv is NULL"));
    ck_assert_int_eq(px_initialize(&argc, &argv), PX_EINVAL);
    ck_assert_int_eq(argc, 2);
    ck_assert_int_eq(px_is_initialized(), 0);
    argc = 0;
    ck_assert_int_eq(px_initialize(&argc, &argv), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
    ck_assert_int_eq(px_initialize(&argc, NULL), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
    ck_assert_int_eq(px_initialize(NULL, &argv), PX_OK); /* no count: argv is ignored */
    ck_assert_int_eq(px_finalize(), PX_OK);
}
END_TEST

/* The log threshold from PX_LOG_LEVEL applies only to a runtime that came up. */
START_TEST(test_failed_initialize_restores_log_level)
{
    ck_assert_int_eq(px_log_set_level(PX_LOG_ERROR), PX_OK);
    setenv("PX_LOG_LEVEL", "debug", 1);
    px_settings s;
    px_settings_default(&s);
    s.default_space = "nonexistent";
    ck_assert_int_eq(px_initialize_with(&s), PX_ENODEV);
    ck_assert_int_eq(px_log_get_level(), PX_LOG_ERROR);
    unsetenv("PX_LOG_LEVEL");
}
END_TEST

START_TEST(test_initialize_with_out_of_range_fields_is_einval)
{
    px_test_log_capture();
    px_settings s;
    px_settings_default(&s);
    s.device_id = 5000;
    ck_assert_int_eq(px_initialize_with(&s), PX_EINVAL);
    ck_assert(px_test_log_contains("px_settings.device_id"));
    ck_assert(px_test_log_contains("5000"));
    px_settings_default(&s);
    s.num_threads = 5000;
    ck_assert_int_eq(px_initialize_with(&s), PX_EINVAL);
    ck_assert(px_test_log_contains("px_settings.num_threads"));
    px_settings_default(&s);
    s.default_space = "";
    ck_assert_int_eq(px_initialize_with(&s), PX_EINVAL);
    ck_assert_int_eq(px_is_initialized(), 0);
}
END_TEST

START_TEST(test_log_set_level_einval_names_value_and_keeps_level)
{
    px_test_log_capture();
    ck_assert_int_eq(px_log_set_level(PX_LOG_WARN), PX_OK);
    ck_assert_int_eq(px_log_set_level((px_log_level)42), PX_EINVAL);
    ck_assert(px_test_log_contains("42"));
    ck_assert_int_eq(px_log_get_level(), PX_LOG_WARN);
    px_log_set_handler(NULL, NULL);
}
END_TEST

static Suite *settings_suite(void)
{
    Suite *s = suite_create("settings");
    TCase *tc = tcase_create("settings");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_settings_default_values);
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
    tcase_add_test(tc, test_failed_initialize_leaves_argv_untouched);
    tcase_add_test(tc, test_negative_argc_is_einval);
    tcase_add_test(tc, test_argc_argv_mismatch_is_einval);
    tcase_add_test(tc, test_failed_initialize_restores_log_level);
    tcase_add_test(tc, test_initialize_with_out_of_range_fields_is_einval);
    tcase_add_test(tc, test_log_set_level_einval_names_value_and_keeps_level);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(settings_suite());
}
