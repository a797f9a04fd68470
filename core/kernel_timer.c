/* core/kernel_timer.c - the built-in kernel timer (PX_KERNEL_TIMER=1).
 *
 * An internal tools listener, fed by the same begin/end events as Kokkos Tools libraries, so
 * what it prints is what a loaded kernel-timer library would see. Each thread keeps its open
 * intervals on a thread-local stack (launches, fences and regions begin and end on the same
 * thread, nested in LIFO order).
 *
 * Rows are keyed by (kind, name) in a hash table of row pointers under table_lock. Rows never
 * move once created, and their counters are atomics, so a completed interval is added without
 * any lock when the thread's small row cache already knows the row (the steady state: the same
 * labels launched again and again, from any number of engine workers). The cache is keyed by
 * the label's address and confirmed with strcmp, since a caller may reuse a buffer for another
 * name; a generation number, bumped at start and stop, invalidates every thread's cache when
 * the rows are freed.
 *
 * At finalize the table is sorted by total time and printed with calls, mean and max. */
#include "core/kernel_timer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "base/os.h"

/* Row kinds, in the order of the "kind" column names. */
enum { K_FOR, K_REDUCE, K_SCAN, K_FENCE, K_REGION, K_COUNT };
static const char *const kind_names[K_COUNT] = {"for", "reduce", "scan", "fence", "region"};

/* One row. name and kind are immutable after creation; the counters are updated with relaxed
 * atomics from any thread and read once at stop, after every launch has completed (the
 * lifecycle contract orders them before px_finalize). */
typedef struct timer_row {
    char *name; /* owned copy */
    int kind;
    atomic_uint_fast64_t calls;
    atomic_int_fast64_t total_ns;
    atomic_int_fast64_t max_ns;
} timer_row;

/* The open intervals of one thread. Deeper nesting than this is not timed (counted in
 * dropped and reported under the table): 64 levels of nested launches and regions is far
 * beyond any real program. */
#define STACK_DEPTH 64
typedef struct open_interval {
    const char *name; /* valid until the matching end: the caller's label outlives its launch */
    int kind;
    int64_t start_ns;
} open_interval;

/* Per-thread row cache, direct mapped by label address. */
#define CACHE_SLOTS 8
typedef struct cache_entry {
    const char *label;
    int kind;
    unsigned gen;
    timer_row *row;
} cache_entry;

static _Thread_local struct {
    unsigned depth; /* open intervals, including ones past STACK_DEPTH */
    open_interval s[STACK_DEPTH];
    cache_entry cache[CACHE_SLOTS];
} tls;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static timer_row **slots; /* open-addressing hash table, n_slots a power of two; table_lock */
static size_t n_slots;    /* table_lock */
static size_t n_used;     /* table_lock */
static atomic_uint_fast64_t dropped; /* intervals not recorded (no memory, too deep) */
static int running;                  /* written by start/stop on the initializing thread only */
/* Cache generation. Release at start/stop, acquire when a cache entry is checked: a thread
 * that sees the new generation also sees the rows of the new table (and never a freed one). */
static atomic_uint generation = 1;

static uint64_t hash_name(int kind, const char *s)
{
    /* FNV-1a over the kind byte and the name. */
    uint64_t h = UINT64_C(14695981039346656037) ^ (uint64_t)kind;
    for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
        h ^= *p;
        h *= UINT64_C(1099511628211);
    }
    return h;
}

/* Double the table (or create it). Called with table_lock held. Returns 0 on ENOMEM. */
static int grow(void)
{
    size_t ns = n_slots ? 2 * n_slots : 64;
    timer_row **nt = pxi_calloc(ns, sizeof *nt);
    if (!nt)
        return 0;
    for (size_t i = 0; i < n_slots; ++i) {
        if (!slots[i])
            continue;
        size_t j = (size_t)hash_name(slots[i]->kind, slots[i]->name) & (ns - 1);
        while (nt[j])
            j = (j + 1) & (ns - 1);
        nt[j] = slots[i];
    }
    pxi_free(slots);
    slots = nt;
    n_slots = ns;
    return 1;
}

/* The row of (kind, name), created when new. Takes table_lock. NULL on ENOMEM. */
static timer_row *find_row(int kind, const char *name)
{
    timer_row *r = NULL;
    pthread_mutex_lock(&table_lock);
    if (n_slots == 0)
        goto out; /* stopped */
    if ((n_used + 1) * 2 > n_slots)
        (void)grow(); /* on failure existing rows are still found; new ones are dropped */
    size_t j = (size_t)hash_name(kind, name) & (n_slots - 1);
    while (slots[j] && (slots[j]->kind != kind || strcmp(slots[j]->name, name) != 0))
        j = (j + 1) & (n_slots - 1);
    if (slots[j]) {
        r = slots[j];
        goto out;
    }
    if ((n_used + 1) * 2 > n_slots)
        goto out; /* could not grow: keep the load factor, drop this interval */
    r = pxi_calloc(1, sizeof *r);
    if (!r)
        goto out;
    r->name = pxi_strdup(name);
    if (!r->name) {
        pxi_free(r);
        r = NULL;
        goto out;
    }
    r->kind = kind;
    slots[j] = r;
    ++n_used;
out:
    pthread_mutex_unlock(&table_lock);
    return r;
}

static void add_interval(int kind, const char *name, int64_t ns)
{
    unsigned gen = atomic_load_explicit(&generation, memory_order_acquire);
    cache_entry *c = &tls.cache[((uintptr_t)name >> 4 ^ (uintptr_t)kind) % CACHE_SLOTS];
    timer_row *r = NULL;
    if (c->label == name && c->kind == kind && c->gen == gen && strcmp(c->row->name, name) == 0)
        r = c->row;
    if (!r) {
        r = find_row(kind, name);
        if (!r) {
            atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
            return;
        }
        *c = (cache_entry){name, kind, gen, r};
    }
    atomic_fetch_add_explicit(&r->calls, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->total_ns, ns, memory_order_relaxed);
    int_fast64_t m = atomic_load_explicit(&r->max_ns, memory_order_relaxed);
    while (ns > m && !atomic_compare_exchange_weak_explicit(
                         &r->max_ns, &m, ns, memory_order_relaxed, memory_order_relaxed))
        ;
}

static void open_interval_push(int kind, const char *name, uint64_t *id)
{
    unsigned d = tls.depth++;
    if (d < STACK_DEPTH)
        tls.s[d] = (open_interval){name, kind, pxi_os_now_ns()};
    if (id)
        *id = d;
}

static void open_interval_pop(uint64_t id)
{
    int64_t now = pxi_os_now_ns();
    if (tls.depth == 0)
        return; /* an unmatched pop_region: nothing to time */
    unsigned d = --tls.depth;
    if (d >= STACK_DEPTH || (id != UINT64_MAX && id != d)) {
        /* Too deep, or an end that does not match this thread's innermost begin. */
        atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
        return;
    }
    add_interval(tls.s[d].kind, tls.s[d].name, now - tls.s[d].start_ns);
}

static void on_begin_for(const char *name, uint32_t dev_id, uint64_t *kernel_id)
{
    (void)dev_id;
    open_interval_push(K_FOR, name, kernel_id);
}
static void on_begin_reduce(const char *name, uint32_t dev_id, uint64_t *kernel_id)
{
    (void)dev_id;
    open_interval_push(K_REDUCE, name, kernel_id);
}
static void on_begin_scan(const char *name, uint32_t dev_id, uint64_t *kernel_id)
{
    (void)dev_id;
    open_interval_push(K_SCAN, name, kernel_id);
}
static void on_begin_fence(const char *name, uint32_t dev_id, uint64_t *fence_id)
{
    (void)dev_id;
    open_interval_push(K_FENCE, name, fence_id);
}
static void on_end(uint64_t id)
{
    open_interval_pop(id);
}
static void on_push_region(const char *name)
{
    open_interval_push(K_REGION, name, NULL);
}
static void on_pop_region(void)
{
    /* Regions carry no id; only pop a region, so an unbalanced pop never closes a kernel. */
    if (tls.depth > 0 && tls.depth <= STACK_DEPTH && tls.s[tls.depth - 1].kind != K_REGION)
        return;
    open_interval_pop(UINT64_MAX);
}

static const pxi_tool_hooks timer_hooks = {
    .begin_parallel_for = on_begin_for,
    .end_parallel_for = on_end,
    .begin_parallel_reduce = on_begin_reduce,
    .end_parallel_reduce = on_end,
    .begin_parallel_scan = on_begin_scan,
    .end_parallel_scan = on_end,
    .begin_fence = on_begin_fence,
    .end_fence = on_end,
    .push_region = on_push_region,
    .pop_region = on_pop_region,
};

const pxi_tool_hooks *pxi_kernel_timer_hooks(void)
{
    return running ? &timer_hooks : NULL;
}

int pxi_kernel_timer_start(void)
{
    pthread_mutex_lock(&table_lock);
    int ok = slots || grow();
    pthread_mutex_unlock(&table_lock);
    if (!ok) {
        PXI_ERROR("px_initialize: out of memory starting the kernel timer (PX_KERNEL_TIMER)");
        return PX_ENOMEM;
    }
    atomic_store_explicit(&dropped, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&generation, 1, memory_order_release);
    running = 1;
    return PX_OK;
}

static int by_total_desc(const void *a, const void *b)
{
    const timer_row *x = *(const timer_row *const *)a, *y = *(const timer_row *const *)b;
    int_fast64_t tx = atomic_load_explicit(&x->total_ns, memory_order_relaxed);
    int_fast64_t ty = atomic_load_explicit(&y->total_ns, memory_order_relaxed);
    if (tx != ty)
        return tx < ty ? 1 : -1;
    if (x->kind != y->kind)
        return x->kind - y->kind;
    return strcmp(x->name, y->name);
}

static void print_table(FILE *out)
{
    /* Kernel time excludes regions (they enclose kernels) and fences (they wait for them). */
    int64_t kernel_ns = 0;
    timer_row **order = pxi_malloc(n_used * sizeof *order);
    size_t n = 0;
    for (size_t i = 0; i < n_slots; ++i) {
        if (!slots[i])
            continue;
        if (slots[i]->kind <= K_SCAN)
            kernel_ns += atomic_load_explicit(&slots[i]->total_ns, memory_order_relaxed);
        if (order)
            order[n++] = slots[i];
    }
    if (order)
        qsort(order, n, sizeof *order, by_total_desc);
    fprintf(out, "parex kernel timer (PX_KERNEL_TIMER): %zu rows, %.6f s in kernels\n", n_used,
            (double)kernel_ns * 1e-9);
    fprintf(out, "%12s %10s %12s %12s %7s  %-6s  %s\n", "total(s)", "calls", "mean(us)", "max(us)",
            "kern%", "kind", "name");
    for (size_t i = 0; i < n; ++i) {
        const timer_row *r = order[i];
        uint64_t calls = atomic_load_explicit(&r->calls, memory_order_relaxed);
        int64_t total = atomic_load_explicit(&r->total_ns, memory_order_relaxed);
        int64_t max = atomic_load_explicit(&r->max_ns, memory_order_relaxed);
        /* Share of kernel time for kernel rows; "-" for regions and fences. */
        char pct[16] = "-";
        if (r->kind <= K_SCAN && kernel_ns > 0)
            snprintf(pct, sizeof pct, "%.2f", 100.0 * (double)total / (double)kernel_ns);
        fprintf(out, "%12.6f %10llu %12.3f %12.3f %7s  %-6s  %s\n", (double)total * 1e-9,
                (unsigned long long)calls, (double)total * 1e-3 / (double)(calls ? calls : 1),
                (double)max * 1e-3, pct, kind_names[r->kind], r->name);
    }
    if (!order && n_used)
        fprintf(out, "(out of memory sorting the table; %zu rows not shown)\n", n_used);
    uint64_t lost = atomic_load_explicit(&dropped, memory_order_relaxed);
    if (lost)
        fprintf(out, "(%llu intervals not recorded: out of memory or nesting deeper than %d)\n",
                (unsigned long long)lost, STACK_DEPTH);
    fflush(out);
    pxi_free(order);
}

void pxi_kernel_timer_stop(FILE *out)
{
    if (!running)
        return;
    running = 0;
    /* Release: a thread whose cache holds a row of this table sees the new generation before
     * it could use the row again, so it never touches the rows freed below. */
    atomic_fetch_add_explicit(&generation, 1, memory_order_release);
    pthread_mutex_lock(&table_lock);
    /* Nothing ran (also an initialize that failed in a later module): print nothing. */
    if (out && (n_used > 0 || atomic_load_explicit(&dropped, memory_order_relaxed) > 0))
        print_table(out);
    for (size_t i = 0; i < n_slots; ++i) {
        if (slots[i]) {
            pxi_free(slots[i]->name);
            pxi_free(slots[i]);
        }
    }
    pxi_free(slots);
    slots = NULL;
    n_slots = n_used = 0;
    pthread_mutex_unlock(&table_lock);
}
