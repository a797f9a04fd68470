/* core/trace.c - the Chrome trace recorder (PX_PROFILE, parex/trace.h).
 *
 * Each thread records into its own buffer (a list of fixed chunks, found through a
 * thread-local pointer), so recording takes only that buffer's uncontended lock, which a dump
 * takes too. Buffers are registered in a global list and freed only by px_trace_clear or
 * finalize, which bump an epoch that invalidates every thread-local pointer. Kernel spans come
 * from an internal tools listener (begin/end events on the launching thread, nested by a
 * small per-thread stack). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/log.h"
#include "core/os.h"
#include "core/runtime_hooks.h"
#include "core/settings.h"
#include "core/tools.h"
#include "core/trace.h"
#include "parex/trace.h"

#define EV_NAME    48
#define EV_CHUNK   2048
#define KSTACK_MAX 16

typedef struct ev {
    int64_t t0, t1;
    const char *cat;
    char name[EV_NAME];
} ev;

typedef struct ev_chunk {
    struct ev_chunk *next;
    size_t n;
    ev ev[EV_CHUNK];
} ev_chunk;

typedef struct tbuf {
    struct tbuf *next;    /* under g_lock */
    pthread_mutex_t lock; /* events, name */
    uint64_t tid;
    char tname[32];
    ev_chunk *head, *cur;
} tbuf;

atomic_int pxi_trace_on;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static tbuf *g_bufs;            /* under g_lock */
static atomic_uint g_epoch = 1; /* bumped when buffers are freed */
static int listener_added;      /* initialize/finalize thread only */

static _Thread_local tbuf *tl_buf;
static _Thread_local unsigned tl_epoch;
static _Thread_local char tl_name[32];
static _Thread_local struct {
    char name[EV_NAME];
    int64_t t0;
} tl_kstack[KSTACK_MAX];
static _Thread_local int tl_kdepth;

int64_t pxi_trace_now_ns(void)
{
    return pxi_os_now_ns();
}

static tbuf *my_buf(void)
{
    /* Acquire: pairs with the release bump in free_all, so a stale pointer is never used. */
    unsigned ep = atomic_load_explicit(&g_epoch, memory_order_acquire);
    if (tl_buf && tl_epoch == ep)
        return tl_buf;
    tbuf *b = pxi_calloc(1, sizeof *b);
    if (!b)
        return NULL;
    pthread_mutex_init(&b->lock, NULL);
    b->tid = pxi_os_thread_id();
    snprintf(b->tname, sizeof b->tname, "%s", tl_name[0] ? tl_name : "thread");
    pthread_mutex_lock(&g_lock);
    b->next = g_bufs;
    g_bufs = b;
    pthread_mutex_unlock(&g_lock);
    tl_buf = b;
    tl_epoch = ep;
    return b;
}

void pxi_trace_thread_name(const char *name)
{
    snprintf(tl_name, sizeof tl_name, "%s", name ? name : "thread");
}

void pxi_trace_span(const char *cat, const char *name, int64_t t0_ns, int64_t t1_ns)
{
    if (!pxi_trace_active())
        return;
    tbuf *b = my_buf();
    if (!b)
        return;
    pthread_mutex_lock(&b->lock);
    if (!b->cur || b->cur->n == EV_CHUNK) {
        ev_chunk *c = pxi_malloc(sizeof *c);
        if (!c) {
            pthread_mutex_unlock(&b->lock);
            return;
        }
        c->next = NULL;
        c->n = 0;
        if (b->cur)
            b->cur->next = c;
        else
            b->head = c;
        b->cur = c;
    }
    ev *e = &b->cur->ev[b->cur->n++];
    e->t0 = t0_ns;
    e->t1 = t1_ns;
    e->cat = cat;
    snprintf(e->name, sizeof e->name, "%s", name ? name : "?");
    pthread_mutex_unlock(&b->lock);
}

static void free_all(void)
{
    pthread_mutex_lock(&g_lock);
    tbuf *b = g_bufs;
    g_bufs = NULL;
    /* Release: threads acquiring the new epoch drop their pointers to the freed buffers. */
    atomic_fetch_add_explicit(&g_epoch, 1, memory_order_release);
    pthread_mutex_unlock(&g_lock);
    while (b) {
        tbuf *next = b->next;
        ev_chunk *c = b->head;
        while (c) {
            ev_chunk *cn = c->next;
            pxi_free(c);
            c = cn;
        }
        pthread_mutex_destroy(&b->lock);
        pxi_free(b);
        b = next;
    }
}

/* ---- kernel listener -------------------------------------------------------------------- */

static void k_begin(const char *name, uint32_t dev_id, uint64_t *kernel_id)
{
    (void)dev_id;
    (void)kernel_id;
    if (tl_kdepth < KSTACK_MAX) {
        snprintf(tl_kstack[tl_kdepth].name, EV_NAME, "%s", name ? name : "kernel");
        tl_kstack[tl_kdepth].t0 = pxi_trace_now_ns();
    }
    ++tl_kdepth;
}

static void k_end(uint64_t kernel_id)
{
    (void)kernel_id;
    if (tl_kdepth <= 0)
        return;
    --tl_kdepth;
    if (tl_kdepth < KSTACK_MAX)
        pxi_trace_span("kernel", tl_kstack[tl_kdepth].name, tl_kstack[tl_kdepth].t0,
                       pxi_trace_now_ns());
}

static void f_begin(const char *name, uint32_t dev_id, uint64_t *fence_id)
{
    k_begin(name, dev_id, fence_id);
}

static void f_end(uint64_t fence_id)
{
    /* Fences are waits: record them under that category. */
    (void)fence_id;
    if (tl_kdepth <= 0)
        return;
    --tl_kdepth;
    if (tl_kdepth < KSTACK_MAX)
        pxi_trace_span("wait", tl_kstack[tl_kdepth].name, tl_kstack[tl_kdepth].t0,
                       pxi_trace_now_ns());
}

static const pxi_tool_hooks trace_hooks = {
    .begin_parallel_for = k_begin,
    .end_parallel_for = k_end,
    .begin_parallel_reduce = k_begin,
    .end_parallel_reduce = k_end,
    .begin_parallel_scan = k_begin,
    .end_parallel_scan = k_end,
    .begin_fence = f_begin,
    .end_fence = f_end,
};

/* ---- JSON output ------------------------------------------------------------------------ */

static void put_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else if (*p >= 0x80)
            fputc('?', f); /* a name cut inside a UTF-8 sequence must not break the file */
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

int px_trace_dump(const char *path)
{
    if (!path) {
        PXI_ERROR("px_trace_dump: path is NULL");
        return PX_EFAULT;
    }
    if (!path[0]) {
        PXI_ERROR("px_trace_dump: path is empty");
        return PX_EINVAL;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        PXI_ERROR("px_trace_dump: cannot open '%s': %s", path, strerror(errno));
        return PX_EIO;
    }
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
    int first = 1;
    pthread_mutex_lock(&g_lock);
    int64_t base = INT64_MAX;
    for (tbuf *b = g_bufs; b; b = b->next) {
        pthread_mutex_lock(&b->lock);
        for (ev_chunk *c = b->head; c; c = c->next)
            for (size_t i = 0; i < c->n; ++i)
                if (c->ev[i].t0 < base)
                    base = c->ev[i].t0;
        pthread_mutex_unlock(&b->lock);
    }
    if (base == INT64_MAX)
        base = 0;
    for (tbuf *b = g_bufs; b; b = b->next) {
        pthread_mutex_lock(&b->lock);
        fprintf(f,
                "%s\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%" PRIu64
                ",\"args\":{\"name\":",
                first ? "" : ",", b->tid);
        put_json_string(f, b->tname);
        fputs("}}", f);
        first = 0;
        for (ev_chunk *c = b->head; c; c = c->next)
            for (size_t i = 0; i < c->n; ++i) {
                const ev *e = &c->ev[i];
                fputs(",\n{\"name\":", f);
                put_json_string(f, e->name);
                fprintf(f,
                        ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%" PRIu64
                        ",\"ts\":%.3f,\"dur\":%.3f}",
                        e->cat, b->tid, (double)(e->t0 - base) / 1e3,
                        (double)(e->t1 - e->t0) / 1e3);
            }
        pthread_mutex_unlock(&b->lock);
    }
    pthread_mutex_unlock(&g_lock);
    fputs("\n]}\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        PXI_ERROR("px_trace_dump: writing '%s' failed: %s", path, strerror(errno));
        return PX_EIO;
    }
    return PX_OK;
}

int px_trace_start(void)
{
    /* Relaxed: see pxi_trace_on in core/trace.h. */
    atomic_store_explicit(&pxi_trace_on, 1, memory_order_relaxed);
    return PX_OK;
}

int px_trace_stop(void)
{
    atomic_store_explicit(&pxi_trace_on, 0, memory_order_relaxed);
    return PX_OK;
}

int px_trace_clear(void)
{
    free_all();
    return PX_OK;
}

int pxi_trace_initialize(void)
{
    const pxi_config *cfg = pxi_config_get();
    pxi_trace_thread_name("main");
    if (!cfg->profile_path)
        return PX_OK;
    int rc = pxi_tools_add_listener(&trace_hooks);
    if (rc != PX_OK) {
        PXI_WARN("px_initialize: PX_PROFILE: cannot listen to kernel events (%s); the trace "
                 "will hold ops and waits only",
                 px_strerror(rc));
    } else {
        listener_added = 1;
    }
    return px_trace_start();
}

int pxi_trace_finalize(void)
{
    const pxi_config *cfg = pxi_config_get();
    int rc = PX_OK;
    (void)px_trace_stop();
    if (cfg->profile_path)
        rc = px_trace_dump(cfg->profile_path);
    listener_added = 0;
    free_all();
    return rc;
}
