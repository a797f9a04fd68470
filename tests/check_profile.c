/* tests/check_profile.c - the PX_PROFILE setting: the path is checked at px_initialize, and
 * the trace written at px_finalize keeps labels' text (core/trace.c). jansson parses the file
 * and rejects anything that is not valid UTF-8 JSON. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "px_test.h"

static void noop_for(int64_t b, int64_t e, void *ctx)
{
    (void)b;
    (void)e;
    (void)ctx;
}

/* A fresh temporary path (the file itself is removed, its name kept). */
static void temp_path(char *path)
{
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    unlink(path);
}

/* The kernel span names in the trace at @p path (NULL-terminated, owned by *root). */
static size_t kernel_names(const char *path, json_t **root, const char **names, size_t max)
{
    json_error_t err;
    *root = json_load_file(path, 0, &err);
    ck_assert_msg(*root != NULL, "the trace is not valid UTF-8 JSON: %s (line %d)", err.text,
                  err.line);
    json_t *evs = json_object_get(*root, "traceEvents");
    ck_assert(json_is_array(evs));
    size_t i, n = 0;
    json_t *ev;
    json_array_foreach(evs, i, ev)
    {
        const char *cat = json_string_value(json_object_get(ev, "cat"));
        if (cat && strcmp(cat, "kernel") == 0 && n < max)
            names[n++] = json_string_value(json_object_get(ev, "name"));
    }
    return n;
}

static int has_name(const char **names, size_t n, const char *want)
{
    for (size_t i = 0; i < n; ++i)
        if (names[i] && strcmp(names[i], want) == 0)
            return 1;
    return 0;
}

/* Valid UTF-8 labels reach the trace unchanged; each ill-formed subpart becomes one U+FFFD
 * (Unicode's "maximal subpart" practice); a label cut to the recorder's field width loses
 * whole characters only; control characters keep their JSON escapes. */
START_TEST(test_trace_keeps_utf8_labels_and_replaces_invalid_bytes)
{
    char path[] = "/tmp/px_profile_XXXXXX";
    temp_path(path);
    setenv("PX_PROFILE", path, 1);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    px_space *serial = px_space_by_name("serial");
    ck_assert_ptr_nonnull(serial);
    char euros[3 * 30 + 8] = "";
    for (int i = 0; i < 30; ++i)
        strcat(euros, "\xE2\x82\xAC"); /* 90 bytes: longer than a recorded name */
    const char *labels[] = {
        "utf8 \xE2\x82\xAC",                         /* € */
        "\xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80", /* 日本 😀 */
        "bad \xFF\xFE end",                          /* bytes that never occur in UTF-8 */
        "cut \xE2\x82",                              /* a truncated 3-byte sequence */
        "over \xC0\xAF long",                        /* an overlong '/' */
        "sur \xED\xA0\x80 rogate",                   /* an encoded surrogate */
        "tab\tquote\"",
        euros,
    };
    for (size_t i = 0; i < sizeof labels / sizeof *labels; ++i)
        ck_assert_int_eq(px_parallel_for_fn(serial, labels[i], px_range(0, 1), noop_for, NULL),
                         PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
    unsetenv("PX_PROFILE");

    json_t *root;
    const char *names[64];
    size_t n = kernel_names(path, &root, names, 64);
    ck_assert_uint_ge(n, sizeof labels / sizeof *labels);
    ck_assert(has_name(names, n, "utf8 \xE2\x82\xAC"));
    ck_assert(has_name(names, n, "\xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80"));
#define FFFD "\xEF\xBF\xBD"
    ck_assert(has_name(names, n, "bad " FFFD FFFD " end"));
    ck_assert(has_name(names, n, "cut " FFFD));
    ck_assert(has_name(names, n, "over " FFFD FFFD " long"));
    ck_assert(has_name(names, n, "sur " FFFD FFFD FFFD " rogate"));
#undef FFFD
    ck_assert(has_name(names, n, "tab\tquote\""));
    /* 47 bytes fit: 15 whole euro signs (45 bytes), not 15 and two thirds. */
    euros[45] = '\0';
    ck_assert(has_name(names, n, euros));
    json_decref(root);
    unlink(path);
}
END_TEST

START_TEST(test_unwritable_profile_path_fails_initialize_naming_it)
{
    px_test_log_capture();
    const char *bad = "/nonexistent-dir/px/trace.json";
    setenv("PX_PROFILE", bad, 1);
    int rc = px_initialize(NULL, NULL);
    ck_assert_int_eq(rc, PX_EIO);
    ck_assert_int_eq(px_is_initialized(), 0);
    ck_assert(px_test_log_contains(bad));
    ck_assert(px_test_log_contains("PX_PROFILE"));
    /* A directory is not writable as a file either. */
    px_test_log_clear();
    setenv("PX_PROFILE", "/tmp", 1);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_EIO);
    ck_assert(px_test_log_contains("/tmp"));
    ck_assert_int_eq(px_is_initialized(), 0);
    /* The flag is named when the flag set it. */
    px_test_log_clear();
    unsetenv("PX_PROFILE");
    char a0[] = "prog", a1[] = "--px-profile=/nonexistent-dir/px/t.json";
    char *args[] = {a0, a1, NULL};
    int argc = 2;
    char **argv = args;
    ck_assert_int_eq(px_initialize(&argc, &argv), PX_EIO);
    ck_assert(px_test_log_contains("--px-profile"));
    ck_assert_int_eq(argc, 2);
    /* The failed initializes left nothing behind: a good path works, and the check did not
     * leave a file where the trace goes until finalize writes it. */
    char path[] = "/tmp/px_profile_XXXXXX";
    temp_path(path);
    setenv("PX_PROFILE", path, 1);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
    unsetenv("PX_PROFILE");
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_gt((long long)st.st_size, 0);
    unlink(path);
}
END_TEST

/* An existing trace file is replaced at finalize and stays untouched when initialize fails
 * for another reason. */
START_TEST(test_existing_profile_file_is_kept_until_finalize)
{
    char path[] = "/tmp/px_profile_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "old", 3), 3);
    close(fd);
    setenv("PX_PROFILE", path, 1);
    px_settings s;
    px_settings_default(&s);
    s.default_space = "nonexistent";
    px_log_set_level(PX_LOG_ERROR);
    ck_assert_int_eq(px_initialize_with(&s), PX_ENODEV);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq((long long)st.st_size, 3);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq((long long)st.st_size, 3);
    ck_assert_int_eq(px_finalize(), PX_OK);
    unsetenv("PX_PROFILE");
    json_t *root;
    const char *names[4];
    (void)kernel_names(path, &root, names, 4);
    json_decref(root);
    unlink(path);
}
END_TEST

static Suite *profile_suite(void)
{
    Suite *s = suite_create("profile");
    TCase *tc = tcase_create("profile");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_trace_keeps_utf8_labels_and_replaces_invalid_bytes);
    tcase_add_test(tc, test_unwritable_profile_path_fails_initialize_naming_it);
    tcase_add_test(tc, test_existing_profile_file_is_kept_until_finalize);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(profile_suite());
}
