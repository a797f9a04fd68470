/* tests/check_tools_load.c - loading Kokkos Tools libraries (core/tools_load.c): the
 * PX_TOOLS_LIBS / KOKKOS_TOOLS_LIBS / --px-tools-libs lists, kokkosp_init_library and the
 * settings and programming-interface handshakes, missing libraries and symbols, reloading,
 * allocation failures. Event dispatch is tested in check_tools.c. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "core/tools.h"
#include "kptest.h"
#include "kptest_client.h"
#include "px_test.h"

START_TEST(test_init_library_gets_seq_version_and_device_ids)
{
    init_with(KPTEST_TOOL_PATH);
    const kpt_state *st = tool_state(KPTEST_TOOL_PATH);
    ck_assert_int_eq(st->init_calls, 1);
    ck_assert_int_eq(st->load_seq, 0);
    ck_assert_uint_eq(st->interface_version, 20240906u);
    ck_assert_uint_ge(st->dev_info_count, 1);
    int found_serial = 0;
    for (uint32_t i = 0; i < st->dev_info_count; ++i)
        found_serial |= st->dev_ids[i] == 0x00000001u;
    ck_assert_msg(found_serial, "serial's device id is not in deviceInfo");
    ck_assert_int_eq(st->settings_requests, 1);
    ck_assert_int_eq(st->tpi_calls, 1);
    ck_assert_uint_eq(st->tpi_num_actions, 1);
    ck_assert_ptr_nonnull((void *)(uintptr_t)st->tpi_fence);
    ck_assert_int_eq(px_profile_tool_count(), 1);
    ck_assert_int_ne(pxi_tools_active(), 0);
    finalize();
    ck_assert_int_eq(st->finalize_calls, 1);
    ck_assert_int_eq(st->errors, 0);
    ck_assert_int_eq(px_profile_tool_count(), 0);
}
END_TEST

START_TEST(test_kokkos_tools_libs_env_loads_the_tool)
{
    setenv("KOKKOS_TOOLS_LIBS", KPTEST_TOOL_PATH, 1);
    int rc = px_initialize(NULL, NULL);
    ck_assert_int_eq(rc, PX_OK);
    ck_assert_int_eq(px_profile_tool_count(), 1);
    ck_assert_int_eq(tool_state(KPTEST_TOOL_PATH)->init_calls, 1);
    finalize();
}
END_TEST

START_TEST(test_px_tools_libs_flag_loads_the_tool)
{
    char flag[4096];
    snprintf(flag, sizeof flag, "--px-tools-libs=%s", KPTEST_TOOL_PATH);
    char prog[] = "prog";
    char *args[] = {prog, flag, NULL};
    int argc = 2;
    char **argv = args;
    ck_assert_int_eq(px_initialize(&argc, &argv), PX_OK);
    ck_assert_int_eq(argc, 1);
    ck_assert_int_eq(px_profile_tool_count(), 1);
    finalize();
}
END_TEST

START_TEST(test_no_tool_leaves_tools_inactive)
{
    init_with(NULL);
    ck_assert_int_eq(pxi_tools_active(), 0);
    ck_assert_int_eq(px_profile_tool_count(), 0);
    px_profile_push_region("nobody listens");
    px_profile_pop_region();
    ck_assert_int_eq(px_profile_mark_event("e"), PX_OK);
    ck_assert_int_eq(px_profile_declare_metadata("k", "v"), PX_OK);
    uint32_t id;
    ck_assert_int_eq(px_profile_create_section("s", &id), PX_OK);
    ck_assert_int_eq(px_profile_start_section(id), PX_OK);
    ck_assert_int_eq(px_profile_stop_section(id), PX_OK);
    ck_assert_int_eq(px_profile_destroy_section(id), PX_OK);
    ck_assert_int_eq(px_profile_start_section(id), PX_EINVAL);
    finalize();
}
END_TEST

START_TEST(test_missing_library_warns_and_loads_the_rest)
{
    setenv("PX_LOG_LEVEL", "warn", 1);
    px_test_log_capture();
    init_with("/nonexistent/libnotatool.so;;" KPTEST_TOOL_PATH ";");
    ck_assert_msg(px_test_log_contains("cannot load tool library '/nonexistent/libnotatool.so'"),
                  "log: %s", px_test_log_text());
    ck_assert_int_eq(px_profile_tool_count(), 1);
    ck_assert_int_eq(
        px_parallel_for_fn(px_space_by_name("serial"), "k", px_range(0, 4), noop_for, NULL), PX_OK);
    ck_assert_uint_eq(tool_state(KPTEST_TOOL_PATH)->count[KPT_BEGIN_FOR], 1);
    finalize();
}
END_TEST

START_TEST(test_missing_symbols_warn_and_are_skipped)
{
    setenv("PX_LOG_LEVEL", "debug", 1);
    px_test_log_capture();
    init_with(KPTEST_PARTIAL_PATH);
    ck_assert_msg(px_test_log_contains("defines kokkosp_begin_fence but not kokkosp_end_fence"),
                  "log: %s", px_test_log_text());
    ck_assert_msg(px_test_log_contains("lacks 14 of 24 kokkosp_* callbacks"), "log: %s",
                  px_test_log_text());
    ck_assert_msg(px_test_log_contains("kokkosp_push_profile_region"), "log: %s",
                  px_test_log_text());
    px_space *s = px_space_by_name("serial");
    ck_assert_int_eq(px_parallel_for_fn(s, "k", px_range(0, 4), noop_for, NULL), PX_OK);
    ck_assert_int_eq(px_fence(s), PX_OK);
    px_profile_push_region("r"); /* the partial tool has no region callbacks */
    px_profile_pop_region();
    void *p = px_malloc(s, 32);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(px_free(s, p), PX_OK);
    uint32_t sec;
    ck_assert_int_eq(px_profile_create_section("sec", &sec), PX_OK);
    ck_assert_int_eq(px_profile_destroy_section(sec), PX_OK);
    const kpt_state *st = tool_state(KPTEST_PARTIAL_PATH);
    ck_assert_uint_eq(st->count[KPT_BEGIN_FOR], 1);
    ck_assert_uint_eq(st->count[KPT_END_FOR], 1);
    ck_assert_uint_eq(st->count[KPT_BEGIN_FENCE], 1);
    ck_assert_int_eq(st->settings_requests, 0);
    finalize();
}
END_TEST

START_TEST(test_library_without_callbacks_warns)
{
    setenv("PX_LOG_LEVEL", "warn", 1);
    px_test_log_capture();
    init_with(KPTEST_EMPTY_PATH);
    ck_assert_msg(px_test_log_contains("defines no kokkosp_* callback"), "log: %s",
                  px_test_log_text());
    ck_assert_int_eq(px_parallel_for_fn(NULL, "k", px_range(0, 4), noop_for, NULL), PX_OK);
    finalize();
}
END_TEST

START_TEST(test_reinitialize_calls_init_library_again)
{
    init_with(KPTEST_TOOL_PATH);
    finalize();
    init_with(KPTEST_TOOL_PATH);
    const kpt_state *st = tool_state(KPTEST_TOOL_PATH);
    ck_assert_int_eq(st->init_calls, 2);
    ck_assert_int_eq(st->finalize_calls, 1);
    finalize();
    ck_assert_int_eq(st->finalize_calls, 2);
    ck_assert_int_eq(st->errors, 0);
}
END_TEST

START_TEST(test_print_configuration_lists_tools)
{
    init_with(KPTEST_TOOL_PATH);
    FILE *tmp = tmpfile();
    ck_assert_ptr_nonnull(tmp);
    px_print_configuration(tmp);
    rewind(tmp);
    char *buf = px_test_read_stream(tmp, NULL);
    fclose(tmp);
    ck_assert_ptr_nonnull(buf);
    ck_assert_msg(strstr(buf, KPTEST_TOOL_PATH) != NULL, "config: %s", buf);
    ck_assert_msg(strstr(buf, "kernel timer: off") != NULL, "config: %s", buf);
    free(buf);
    finalize();
}
END_TEST

START_TEST(test_initialize_survives_allocation_failures)
{
    setenv("PX_KERNEL_TIMER", "1", 1);
    px_settings s;
    px_settings_default(&s);
    s.tools_libs = KPTEST_TOOL_PATH;
    int rc = PX_ENOMEM;
    for (uint64_t n = 1; n < 400 && rc != PX_OK; ++n) {
        pxi_alloc_fail_at(n);
        rc = px_initialize_with(&s);
        pxi_alloc_fail_at(0);
        ck_assert_msg(rc == PX_OK || rc == PX_ENOMEM, "n=%llu: %s", (unsigned long long)n,
                      px_strerror(rc));
    }
    ck_assert_int_eq(rc, PX_OK);
    const kpt_state *st = tool_state(KPTEST_TOOL_PATH);
    ck_assert_int_eq(st->init_calls, st->finalize_calls + 1);
    char *out = capture_stdout(finalize_quietly);
    free(out);
    ck_assert_int_eq(st->init_calls, st->finalize_calls);
}
END_TEST

static Suite *tools_load_suite(void)
{
    Suite *s = suite_create("tools_load");
    TCase *tc = tcase_create("load");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_init_library_gets_seq_version_and_device_ids);
    tcase_add_test(tc, test_kokkos_tools_libs_env_loads_the_tool);
    tcase_add_test(tc, test_px_tools_libs_flag_loads_the_tool);
    tcase_add_test(tc, test_no_tool_leaves_tools_inactive);
    tcase_add_test(tc, test_missing_library_warns_and_loads_the_rest);
    tcase_add_test(tc, test_missing_symbols_warn_and_are_skipped);
    tcase_add_test(tc, test_library_without_callbacks_warns);
    tcase_add_test(tc, test_reinitialize_calls_init_library_again);
    tcase_add_test(tc, test_print_configuration_lists_tools);
    tcase_add_test(tc, test_initialize_survives_allocation_failures);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(tools_load_suite());
}
