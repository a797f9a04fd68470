/* core/trace.c - the Chrome trace recorder (PX_PROFILE, parex/trace.h).
 *
 * Each thread records into its own buffer (a list of fixed chunks, found through a
 * thread-local pointer), so recording takes only that buffer's uncontended lock, which a dump
 * takes too. Buffers are registered in a global list and freed only by px_trace_clear or
 * finalize, which bump an epoch that invalidates every thread-local pointer. Kernel spans come
 * from an internal tools listener (begin/end events on the launching thread, nested by a
 * small per-thread stack).
 *
 * The output is shaped for Perfetto's JSON importer (google/perfetto,
 * src/trace_processor/importers/json/: json_trace_tokenizer.cc, json_trace_parser_impl.cc,
 * json_utils; and importers/common/slice_tracker.cc), which is stricter than the Trace Event
 * Format document in the ways noted where each field is written. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/log.h"
#include "base/os.h"
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
    int status; /* PX_OK, or the failure an "op_failed" / "op_skipped" event carries */
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
    uint32_t tid;         /* set once, under g_lock */
    char tname[32];
    ev_chunk *head, *cur;
} tbuf;

atomic_int pxi_trace_on;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static tbuf *g_bufs;            /* under g_lock */
static atomic_uint g_epoch = 1; /* bumped when buffers are freed */
static uint32_t g_next_tid;     /* under g_lock: stand-in tids (see my_buf) */
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

/* Copy @p src into @p dst (capacity @p cap >= 1), cut at a character boundary: a label longer
 * than the field loses whole UTF-8 characters, never half of one. */
static void copy_name(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap) {
        n = cap - 1;
        /* src[n] is the first byte dropped: when it continues a character, drop that
         * character's earlier bytes too (back to its lead byte). */
        while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
            --n;
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
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
    uint64_t os_tid = pxi_os_thread_id();
    copy_name(b->tname, sizeof b->tname, tl_name[0] ? tl_name : "thread");
    pthread_mutex_lock(&g_lock);
    /* Perfetto reads tid as a uint32 (CoerceToUint32 in the JSON parser) and files an event
     * whose tid does not fit under the pid instead: every thread would share one track, where
     * their overlapping spans are dropped. Linux tids fit; a pthread_t address (os_posix.c)
     * does not and is replaced by a count from 1, distinct per buffer. */
    b->tid = os_tid <= UINT32_MAX ? (uint32_t)os_tid : ++g_next_tid;
    b->next = g_bufs;
    g_bufs = b;
    pthread_mutex_unlock(&g_lock);
    tl_buf = b;
    tl_epoch = ep;
    return b;
}

void pxi_trace_thread_name(const char *name)
{
    copy_name(tl_name, sizeof tl_name, name ? name : "thread");
}

void pxi_trace_span(const char *cat, const char *name, int64_t t0_ns, int64_t t1_ns)
{
    pxi_trace_span_status(cat, name, t0_ns, t1_ns, PX_OK);
}

void pxi_trace_span_status(const char *cat, const char *name, int64_t t0_ns, int64_t t1_ns,
                           int status)
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
    /* Perfetto drops a slice with a negative duration; a span read from two threads' clocks
     * could have one only through a clock fault, so clamp it to empty. */
    e->t1 = t1_ns < t0_ns ? t0_ns : t1_ns;
    e->cat = cat;
    e->status = status;
    copy_name(e->name, sizeof e->name, name ? name : "?");
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
        copy_name(tl_kstack[tl_kdepth].name, EV_NAME, name ? name : "kernel");
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

/* Length of the well-formed UTF-8 character at @p p (2..4 bytes; Unicode 15, table 3-7: no
 * overlong forms, no surrogates, nothing above U+10FFFF), or minus the length of its maximal
 * ill-formed subpart (>= 1) when it is not one. @p p[0] >= 0x80. */
static int utf8_char_len(const unsigned char *p)
{
    unsigned char c = p[0];
    int n;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else {
        return -1; /* a continuation byte, C0, C1 or F5..FF */
    }
    if (p[1] < lo || p[1] > hi)
        return -1;
    for (int k = 2; k < n; ++k)
        if ((p[k] & 0xC0) != 0x80)
            return -k;
    return n;
}

/* Perfetto's tokenizer (ReadOneJsonString) fails the whole file on a raw control character
 * (iscntrl, which includes DEL), and older releases also on any \uXXXX escape (later ones keep
 * it undecoded). So only the short escapes are used, and other control characters, which have
 * none, become '?'. Well-formed UTF-8 is written as it is (JSON text is UTF-8, RFC 8259 8.1);
 * each ill-formed subpart becomes U+FFFD, written as its UTF-8 bytes, so the file stays valid
 * UTF-8 whatever bytes a label held. */
static void put_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
        const char *esc = NULL;
        switch (*p) {
        case '"':
            esc = "\\\"";
            break;
        case '\\':
            esc = "\\\\";
            break;
        case '\b':
            esc = "\\b";
            break;
        case '\f':
            esc = "\\f";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        default:
            break;
        }
        if (esc) {
            fputs(esc, f);
        } else if (*p >= 0x80) {
            int n = utf8_char_len(p);
            if (n > 0) {
                fwrite(p, 1, (size_t)n, f);
                p += n - 1;
            } else {
                fputs("\xEF\xBF\xBD", f); /* U+FFFD REPLACEMENT CHARACTER */
                p += -n - 1;
            }
        } else if (*p < 0x20 || *p == 0x7f) {
            fputc('?', f);
        } else {
            fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* Write @ns nanoseconds (>= 0) as microseconds, the unit of ts and dur. Perfetto turns the
 * number back into nanoseconds as (int64_t)(value * 1000.0), truncating: 1.001 parses to a
 * double just below it and comes back as 1000 ns. A child span ending on its parent's
 * nanosecond could then end after it, and Perfetto drops a complete event that overlaps an
 * enclosing one without nesting (slice_tracker.cc). The decimal is written exactly, plus half
 * a nanosecond, so truncation (Perfetto) and rounding (other readers) both land on @ns. */
static void put_us(FILE *f, int64_t ns)
{
    fprintf(f, "%" PRId64 ".%03" PRId64 "5", ns / 1000, ns % 1000);
}

/* Spans in start order, and an enclosing span before those it encloses when they start on the
 * same nanosecond (it is recorded after them, at its end). Perfetto sorts by ts; on a tie some
 * releases keep file order, and a child read first would make its parent look overlapping. */
static int ev_order(const void *a, const void *b)
{
    const ev *x = *(const ev *const *)a, *y = *(const ev *const *)b;
    if (x->t0 != y->t0)
        return x->t0 < y->t0 ? -1 : 1;
    if (x->t1 != y->t1)
        return x->t1 > y->t1 ? -1 : 1;
    return 0;
}

/* Under g_lock: the earliest start (0 with no event) and the most events one thread holds. */
static int64_t scan_bufs(size_t *max_n)
{
    int64_t base = INT64_MAX;
    *max_n = 0;
    for (tbuf *b = g_bufs; b; b = b->next) {
        size_t n = 0;
        pthread_mutex_lock(&b->lock);
        for (ev_chunk *c = b->head; c; c = c->next) {
            n += c->n;
            for (size_t i = 0; i < c->n; ++i)
                if (c->ev[i].t0 < base)
                    base = c->ev[i].t0;
        }
        pthread_mutex_unlock(&b->lock);
        if (n > *max_n)
            *max_n = n;
    }
    return base == INT64_MAX ? 0 : base;
}

/* Under g_lock: one thread's name and spans. @order holds room for @cap events; spans recorded
 * since scan_bufs counted them are left out (px_trace_dump allows either). */
static void put_thread(FILE *f, tbuf *b, int64_t base, const ev **order, size_t cap)
{
    pthread_mutex_lock(&b->lock);
    size_t n = 0;
    for (ev_chunk *c = b->head; c; c = c->next)
        for (size_t i = 0; i < c->n && n < cap; ++i)
            order[n++] = &c->ev[i];
    qsort(order, n, sizeof *order, ev_order);
    /* Perfetto names a thread's track from a "thread_name" metadata event's args.name. */
    fprintf(f,
            ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%" PRIu32
            ",\"args\":{\"name\":",
            b->tid);
    put_json_string(f, b->tname);
    fputs("}}", f);
    for (size_t i = 0; i < n; ++i) {
        const ev *e = order[i];
        fputs(",\n{\"name\":", f);
        put_json_string(f, e->name);
        fprintf(f, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%" PRIu32 ",\"ts\":", e->cat,
                b->tid);
        put_us(f, e->t0 - base);
        fputs(",\"dur\":", f);
        put_us(f, e->t1 - e->t0);
        if (e->status != PX_OK) {
            /* Perfetto shows args in the slice's details; the status as both code and text. */
            fprintf(f, ",\"args\":{\"status\":%d,\"error\":", e->status);
            put_json_string(f, px_strerror(e->status));
            fputc('}', f);
        }
        fputc('}', f);
    }
    pthread_mutex_unlock(&b->lock);
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
    pthread_mutex_lock(&g_lock);
    size_t max_n;
    int64_t base = scan_bufs(&max_n);
    const ev **order = pxi_malloc((max_n ? max_n : 1) * sizeof *order);
    if (!order) {
        pthread_mutex_unlock(&g_lock);
        PXI_ERROR("px_trace_dump: no memory to sort %zu events of one thread", max_n);
        return PX_ENOMEM;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        int err = errno;
        pthread_mutex_unlock(&g_lock);
        pxi_free(order);
        PXI_ERROR("px_trace_dump: cannot open '%s': %s", path, strerror(err));
        return PX_EIO;
    }
    /* An object holding "traceEvents", without "displayTimeUnit": ts and dur are microseconds
     * whatever that key says, but older Perfetto releases read "ns" there as the unit of ts
     * (json_tracker.h) and would shrink the timeline a thousandfold. The process gets a name
     * through a "process_name" metadata event. */
    fputs("{\"traceEvents\":[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{"
          "\"name\":\"parex\"}}",
          f);
    for (tbuf *b = g_bufs; b; b = b->next)
        put_thread(f, b, base, order, max_n);
    pthread_mutex_unlock(&g_lock);
    pxi_free(order);
    /* Nothing after the closing brace, not even a newline: Perfetto's tokenizer reports data
     * after the end of the trace as an error when it arrives in a later read. */
    fputs("\n]}", f);
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

/* Whether the trace file can be written, checked the way px_trace_dump will open it but
 * without changing anything: an existing file is opened for writing without truncation, a
 * missing one is created and removed again. Logs the path, the setting and the OS error. */
static int check_profile_path(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    int created = fd >= 0;
    if (fd < 0 && errno == EEXIST)
        fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        PXI_ERROR("px_initialize: the trace file '%s' (PX_PROFILE / --px-profile) cannot be "
                  "written: %s",
                  path, strerror(errno));
        return PX_EIO;
    }
    close(fd);
    if (created)
        (void)unlink(path);
    return PX_OK;
}

int pxi_trace_initialize(void)
{
    const pxi_config *cfg = pxi_config_get();
    pxi_trace_thread_name("main");
    if (!cfg->profile_path)
        return PX_OK;
    int rc = check_profile_path(cfg->profile_path);
    if (rc != PX_OK)
        return rc;
    rc = pxi_tools_add_listener(&trace_hooks);
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
