/* tests/px_test.h - support shared by the Check suites. */
#ifndef PX_TEST_H
#define PX_TEST_H

#include <check.h>
#include <stddef.h>
#include <stdio.h>

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

/* Reading captured output back (a trace file, a program's redirected stdout, a tmpfile a
 * printer wrote to). Both return a malloc'd, NUL-terminated buffer that the caller frees;
 * [out] *len (len may be NULL) gets the bytes read, not counting the NUL (the text may hold NUL
 * bytes of its own). Safe from several threads on distinct files/streams. */

/* The whole file at @p path, opened "rb". Returns the text, or NULL when the file cannot be
 * opened or read (errno as fopen/fread set it) or memory runs out (errno ENOMEM). */
char *px_test_read_file(const char *path, size_t *len);

/* The rest of the open stream @p f, from its current position to end of file, read in a loop
 * that grows the buffer (no fseek/ftell: pipes from popen work; rewind a tmpfile first). f is
 * left open, at end of file. Returns the text, or NULL on a read error (errno as fread set it)
 * or when memory runs out (errno ENOMEM). */
char *px_test_read_stream(FILE *f, size_t *len);

/* Replace *@p text (freed first; NULL or a buffer of these functions) with the whole file at
 * @p path, such as a stream the shell redirected there (it exists once sh ran); asserts that
 * it could be read. For suites that keep the last run's output until the next run. */
void px_test_capture(char **text, const char *path);

#endif
