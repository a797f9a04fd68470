#include "px_test.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PX_TEST_HWLOC
#include <hwloc.h>
#endif

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_buf[65536];
static size_t log_len;

static void capture(px_log_level level, const char *msg, void *user)
{
    (void)level;
    (void)user;
    pthread_mutex_lock(&log_lock);
    size_t n = strlen(msg);
    if (log_len + n + 2 < sizeof log_buf) {
        memcpy(log_buf + log_len, msg, n);
        log_len += n;
        log_buf[log_len++] = '\n';
        log_buf[log_len] = '\0';
    }
    pthread_mutex_unlock(&log_lock);
}

void px_test_log_capture(void)
{
    px_test_log_clear();
    px_log_set_handler(capture, NULL);
    px_log_set_level(PX_LOG_DEBUG);
}

void px_test_log_clear(void)
{
    pthread_mutex_lock(&log_lock);
    log_len = 0;
    log_buf[0] = '\0';
    pthread_mutex_unlock(&log_lock);
}

int px_test_log_contains(const char *needle)
{
    pthread_mutex_lock(&log_lock);
    int found = strstr(log_buf, needle) != NULL;
    pthread_mutex_unlock(&log_lock);
    return found;
}

const char *px_test_log_text(void)
{
    return log_buf;
}

void px_test_setup(void)
{
    int rc = px_initialize(NULL, NULL);
    ck_assert_msg(rc == PX_OK, "px_initialize: %s", px_strerror(rc));
}

void px_test_teardown(void)
{
    int rc = px_finalize();
    ck_assert_msg(rc == PX_OK, "px_finalize: %s", px_strerror(rc));
}

/* Check runs every test in a child forked from the runner, and nearly every test starts with
 * px_initialize, whose topology load makes hwloc open its plugins (Debian's: PCI, OpenCL, GL
 * with X11, libxml2 with ICU) and close them again at px_finalize: 15-20 ms a test on the CI
 * VM, 3-4x that under a sanitizer, for I/O objects parex never asks for. hwloc loads its
 * plugins when its first topology is initialized and unloads them with its last one, so a
 * topology that the runner initializes once and keeps lets every child inherit them (4x faster
 * check_topo: bench/RESULTS.md, session 25). It changes nothing parex sees: each
 * px_initialize still loads its own topology of this machine. */
static void keep_hwloc_plugins_loaded(void)
{
#ifdef PX_TEST_HWLOC
    static hwloc_topology_t kept;
    if (kept == NULL && hwloc_topology_init(&kept) != 0)
        kept = NULL;
#endif
}

int px_test_run(Suite *s)
{
    keep_hwloc_plugins_loaded();
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

int px_test_env_int(const char *name, int fallback)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return fallback;
    return atoi(v);
}

char *px_test_read_stream(FILE *f, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        return NULL;
    for (;;) {
        if (cap - n < 2) { /* room for one more byte and the NUL */
            char *grown = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (!grown) {
                free(buf);
                errno = ENOMEM;
                return NULL;
            }
            buf = grown;
            cap *= 2;
        }
        n += fread(buf + n, 1, cap - n - 1, f);
        if (ferror(f)) {
            int saved = errno;
            free(buf);
            errno = saved;
            return NULL;
        }
        if (feof(f))
            break;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

char *px_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = px_test_read_stream(f, len);
    int saved = errno;
    fclose(f);
    errno = saved;
    return text;
}

void px_test_capture(char **text, const char *path)
{
    free(*text);
    *text = px_test_read_file(path, NULL);
    ck_assert_msg(*text != NULL, "cannot read %s", path);
}
