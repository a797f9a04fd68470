/*
 * tests/check_static_link.c - every space built into the library is registered and usable in a
 * program linked against libparex.a (check_static_link) and libparex.so (check_shared_link).
 *
 * Kokkos loses its Serial space when libkokkoscore.a is linked and nothing references the
 * object file holding the registration; parex keeps a generated anchor table referenced from
 * px_initialize (core/registry.h). This program deliberately references nothing but the public
 * API, like a user's program would.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parex.h"
#include "px_test.h"

#ifndef PX_TEST_LINK_KIND
#define PX_TEST_LINK_KIND "unknown"
#endif

static void setup(void)
{
    int rc = px_initialize(NULL, NULL);
    ck_assert_msg(rc == PX_OK, "px_initialize: %s", px_strerror(rc));
}

static void teardown(void)
{
    int rc = px_finalize();
    ck_assert_msg(rc == PX_OK, "px_finalize: %s", px_strerror(rc));
}

static void sum_fn(int64_t b, int64_t e, void *ctx, void *acc)
{
    (void)ctx;
    for (int64_t i = b; i < e; ++i)
        *(int64_t *)acc += i;
}

/* The space exists, reports its name and runs a reduction. */
static void check_space_runs(const char *name)
{
    px_space *s = px_space_by_name(name);
    ck_assert_msg(s != NULL, "%s link: space '%s' is not registered", PX_TEST_LINK_KIND, name);
    ck_assert_str_eq(px_space_name(s), name);
    ck_assert_int_ge(px_space_concurrency(s), 1);
    int64_t r = -1;
    ck_assert_int_eq(
        px_parallel_reduce_fn(s, "link", px_range(0, 1000), sum_fn, NULL, &px_sum_i64, &r), PX_OK);
    ck_assert_int_eq(r, 499500);
}

START_TEST(test_serial_space_survives_the_link)
{
    check_space_runs("serial");
}
END_TEST

START_TEST(test_threads_space_survives_the_link)
{
#if PX_HAVE_THREADS
    check_space_runs("threads");
#else
    ck_assert_ptr_null(px_space_by_name("threads"));
#endif
}
END_TEST

START_TEST(test_default_space_is_available)
{
    px_space *s = px_default_space();
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_eq(px_space_by_name(px_space_name(s)), s);
}
END_TEST

/* px_print_configuration names every space built in, available or not (a Cuda build on a
 * machine without a GPU still lists cuda). */
START_TEST(test_configuration_lists_every_built_space)
{
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    px_print_configuration(f);
    rewind(f);
    size_t n = 0;
    char *text = px_test_read_stream(f, &n);
    fclose(f);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_gt(n, 0);
    ck_assert_msg(strstr(text, "serial") != NULL, "configuration does not list serial:\n%s", text);
#if PX_HAVE_THREADS
    ck_assert_msg(strstr(text, "threads") != NULL, "configuration does not list threads:\n%s",
                  text);
#endif
#if PX_HAVE_CUDA
    ck_assert_msg(strstr(text, "cuda") != NULL, "configuration does not list cuda:\n%s", text);
#endif
    free(text);
}
END_TEST

int main(void)
{
    Suite *s = suite_create(PX_TEST_LINK_KIND "_link");
    TCase *tc = tcase_create("spaces");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_serial_space_survives_the_link);
    tcase_add_test(tc, test_threads_space_survives_the_link);
    tcase_add_test(tc, test_default_space_is_available);
    tcase_add_test(tc, test_configuration_lists_every_built_space);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
