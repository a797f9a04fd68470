/* base/log.c - levelled logging with a replaceable handler. */
#include "base/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

/* Threshold: read relaxed on every message (a stale value only delays a level change). */
static atomic_int log_level = PX_LOG_WARN;

/* Handler and its user pointer change together under handler_lock; messages read them under
 * the same lock so a handler is never called with another handler's user pointer. */
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static px_log_handler handler;
static void *handler_user;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

int px_log_set_level(px_log_level level)
{
    if ((int)level < PX_LOG_ERROR || (int)level > PX_LOG_DEBUG) {
        pxi_log(PX_LOG_ERROR, "px_log_set_level: level %d is not a px_log_level (0..3)",
                (int)level);
        return PX_EINVAL;
    }
    atomic_store_explicit(&log_level, (int)level, memory_order_relaxed);
    return PX_OK;
}

px_log_level px_log_get_level(void)
{
    return (px_log_level)atomic_load_explicit(&log_level, memory_order_relaxed);
}

void px_log_set_handler(px_log_handler fn, void *user)
{
    pthread_mutex_lock(&handler_lock);
    handler = fn;
    handler_user = user;
    pthread_mutex_unlock(&handler_lock);
}

int pxi_log_enabled(px_log_level level)
{
    return (int)level <= atomic_load_explicit(&log_level, memory_order_relaxed);
}

void pxi_log(px_log_level level, const char *fmt, ...)
{
    /* Internal callers pass a valid level; clamp anyway, it indexes level_names. */
    if ((int)level < PX_LOG_ERROR)
        level = PX_LOG_ERROR;
    if ((int)level > PX_LOG_DEBUG)
        level = PX_LOG_DEBUG;
    if (!pxi_log_enabled(level))
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&handler_lock);
    if (handler)
        handler(level, msg, handler_user);
    else
        fprintf(stderr, "parex %s: %s\n", level_names[level], msg);
    pthread_mutex_unlock(&handler_lock);
}
