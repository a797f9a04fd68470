/* tests/tools/kptest_client.h - helpers shared by the suites that load the recording tool
 * libraries (check_tools.c, check_tools_load.c): initialize with a tool list, read a loaded
 * tool's state, finalize, capture what finalize prints. Static inline: each suite uses some. */
#ifndef KPTEST_CLIENT_H
#define KPTEST_CLIENT_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kptest.h"
#include "px_test.h"

static inline void noop_for(int64_t b, int64_t e, void *ctx)
{
    (void)b;
    (void)e;
    (void)ctx;
}

static inline const kpt_state *tool_state(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    ck_assert_msg(h != NULL, "tool %s is not loaded", path);
    void *sym = dlsym(h, "kptest_state");
    ck_assert_ptr_nonnull(sym);
    kpt_state_fn fn;
    memcpy(&fn, &sym, sizeof fn);
    const kpt_state *st = fn();
    dlclose(h); /* drops the reference RTLD_NOLOAD took; parex keeps its own */
    return st;
}

static inline void init_with(const char *libs)
{
    px_settings s;
    px_settings_default(&s);
    s.tools_libs = libs;
    int rc = px_initialize_with(&s);
    ck_assert_msg(rc == PX_OK, "px_initialize_with: %s", px_strerror(rc));
}

static inline void finalize(void)
{
    int rc = px_finalize();
    ck_assert_msg(rc == PX_OK, "px_finalize: %s", px_strerror(rc));
}

/* Run f with stdout going to a temporary file; returns the captured text (malloc'd). */
static inline char *capture_stdout(void (*f)(void))
{
    fflush(stdout);
    FILE *tmp = tmpfile();
    ck_assert_ptr_nonnull(tmp);
    int saved = dup(1);
    ck_assert_int_ge(saved, 0);
    ck_assert_int_ge(dup2(fileno(tmp), 1), 0);
    f();
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    rewind(tmp); /* what went through fd 1, from the start */
    char *buf = px_test_read_stream(tmp, NULL);
    fclose(tmp);
    ck_assert_ptr_nonnull(buf);
    return buf;
}

static inline void finalize_quietly(void)
{
    (void)px_finalize();
}

#endif
