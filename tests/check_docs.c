/*
 * tests/check_docs.c - README.md documents every runtime setting: each environment variable and
 * --px-* flag that px_print_help (the --px-help table, built from core/settings.c) lists must
 * appear in README.md's settings table. Keeps the docs from drifting when a setting is added.
 */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parex.h"
#include "px_test.h"

#ifndef PX_README_PATH
#error "PX_README_PATH must name README.md"
#endif

/* Checks that every word of help starting with prefix (then [A-Za-z0-9_-]) occurs in readme;
 * returns how many such words help has. */
static int check_tokens(const char *help, const char *readme, const char *prefix)
{
    int found = 0;
    size_t plen = strlen(prefix);
    for (const char *p = strstr(help, prefix); p; p = strstr(p + 1, prefix)) {
        if (p > help && (isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '-'))
            continue; /* inside a longer word */
        size_t n = plen;
        while (isalnum((unsigned char)p[n]) || p[n] == '_' || p[n] == '-')
            ++n;
        char tok[128];
        if (n >= sizeof tok)
            continue;
        memcpy(tok, p, n);
        tok[n] = '\0';
        ++found;
        ck_assert_msg(strstr(readme, tok) != NULL, "README.md does not document %s", tok);
    }
    return found;
}

START_TEST(test_readme_documents_every_setting_and_flag)
{
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    px_print_help(f);
    rewind(f);
    char *help = px_test_read_stream(f, NULL);
    fclose(f);
    ck_assert_ptr_nonnull(help);
    char *readme = px_test_read_file(PX_README_PATH, NULL);
    ck_assert_msg(readme != NULL, "cannot read %s", PX_README_PATH);
    ck_assert_int_ge(check_tokens(help, readme, "PX_"), 15);
    ck_assert_int_ge(check_tokens(help, readme, "KOKKOS_"), 1);
    ck_assert_int_ge(check_tokens(help, readme, "--px-"), 15);
    free(help);
    free(readme);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("docs");
    TCase *tc = tcase_create("readme");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_readme_documents_every_setting_and_flag);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
