/* tests/px_test.h - support shared by the Check suites. */
#ifndef PX_TEST_H
#define PX_TEST_H

#include <check.h>
#include <stddef.h>

#include "parex.h"

/* Checked-fixture helpers: initialize/finalize in the forked child (never in an unchecked
 * fixture: a forked child keeps only the forking thread). */
void px_test_setup(void);    /* px_initialize(NULL, NULL) from the environment; asserts PX_OK */
void px_test_teardown(void); /* px_finalize(); asserts PX_OK */

/* Log capture: every message is kept (up to 64 KiB) until the next px_test_log_clear. */
void px_test_log_capture(void); /* route the parex log here, level debug */
void px_test_log_clear(void);
int px_test_log_contains(const char *needle); /* nonzero when a captured message contains it */
const char *px_test_log_text(void);

/* Run a suite with CK_NORMAL output; returns the process exit status. */
int px_test_run(Suite *s);

/* Environment integer with a default. */
int px_test_env_int(const char *name, int fallback);

#endif
