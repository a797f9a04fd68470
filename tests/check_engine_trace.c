/* tests/check_engine_trace.c - the dependency engine, the Chrome trace of engine ops and kernels
 * (px_trace_*, PX_PROFILE), validated with jansson against Perfetto's rules.
 *
 * The engine kind under test comes from PX_ENGINE (ctest registers one run per kind and
 * Threads size); PX_TEST_ENGINE_OPS scales randomized workloads down for sanitizer runs. */
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "check_engine_common.h"

/* ---- trace -------------------------------------------------------------------------------- */

/* The trace must satisfy Perfetto's JSON importer (google/perfetto, importers/json/ and
 * importers/common/slice_tracker.cc), which is stricter than jansson; core/trace.c cites
 * each rule where it writes the field. check_trace_file checks them all. */

/* Byte-level rules, which a conforming parser does not check: the file is an object with
 * nothing after its closing brace (the tokenizer fails on data after the end); strings hold no
 * raw control character, DEL included (it fails on iscntrl), and only short escapes (older
 * releases fail on \uXXXX); no "displayTimeUnit" (older releases took "ns" as the unit of ts). */
static void check_trace_bytes(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r'))
        ++i;
    ck_assert_msg(i < n && s[i] == '{', "the trace is not a JSON object");
    ck_assert_msg(n > 0 && s[n - 1] == '}', "bytes after the closing brace");
    int in_str = 0;
    for (; i < n; ++i) {
        unsigned char c = (unsigned char)s[i];
        if (!in_str) {
            in_str = c == '"';
            continue;
        }
        ck_assert_msg(c >= 0x20 && c != 0x7f, "raw byte 0x%02x in a string at offset %zu", c, i);
        if (c == '\\') {
            ++i;
            ck_assert_msg(i < n && s[i] && strchr("\"\\/bfnrt", s[i]),
                          "escape other than a short one at offset %zu", i - 1);
        } else if (c == '"') {
            in_str = 0;
        }
    }
    ck_assert(!in_str);
    ck_assert_ptr_null(strstr(s, "displayTimeUnit"));
}

/* Perfetto's reading of a ts or dur: (int64_t)(value * 1000.0), truncated. The writer adds half
 * a nanosecond so that truncating and rounding agree; check that margin. */
static int64_t perfetto_ns(json_t *v)
{
    ck_assert_msg(json_is_number(v), "ts or dur is not a number");
    double us = json_number_value(v);
    ck_assert(us >= 0);
    double x = us * 1000.0;
    int64_t ns = (int64_t)x;
    double frac = x - (double)ns;
    ck_assert_msg(frac > 0.25 && frac < 0.75, "%.6f us is not half a ns past a ns", us);
    return ns;
}

typedef struct tr_span {
    int64_t tid, ts, dur;
    size_t idx; /* position in the file */
} tr_span;

/* Perfetto sorts by ts; on a tie older releases keep file order, newer ones put the longer
 * complete event first. Both orders must nest. */
static int span_by_ts_then_file(const void *a, const void *b)
{
    const tr_span *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int span_by_ts_then_longer(const void *a, const void *b)
{
    const tr_span *x = a, *y = b;
    if (x->tid != y->tid || x->ts != y->ts)
        return span_by_ts_then_file(a, b);
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Replays Perfetto's slice stack per tid: an "X" event that starts inside an open one must end
 * inside it too, or Perfetto drops it (slice_drop_overlapping_complete_event). */
static void check_nesting(tr_span *sp, size_t n, int (*order)(const void *, const void *))
{
    qsort(sp, n, sizeof *sp, order);
    int64_t end[64];
    int depth = 0;
    for (size_t i = 0; i < n; ++i) {
        if (i > 0 && sp[i].tid != sp[i - 1].tid)
            depth = 0;
        while (depth > 0 && end[depth - 1] <= sp[i].ts)
            --depth;
        int64_t e = sp[i].ts + sp[i].dur;
        ck_assert_msg(depth == 0 || e <= end[depth - 1],
                      "tid %lld: span [%lld, %lld) ns overlaps its enclosing span ending at %lld",
                      (long long)sp[i].tid, (long long)sp[i].ts, (long long)e,
                      (long long)end[depth - 1]);
        ck_assert_int_lt(depth, 64);
        end[depth++] = e;
    }
}

static int is_uint32(json_t *v)
{
    return json_is_integer(v) && json_integer_value(v) >= 0 &&
           json_integer_value(v) <= (json_int_t)UINT32_MAX;
}

/* Check @path against the importer's rules; @names (NULL-terminated) must each name an "X"
 * event (after unescaping). Returns the number of tids with "X" events. */
static int check_trace_file(const char *path, int want_kernels, const char *const *names)
{
    size_t len;
    char *text = px_test_read_file(path, &len);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    check_trace_bytes(text, len);
    json_error_t err;
    json_t *root = json_loadb(text, len, 0, &err);
    free(text);
    ck_assert_msg(root != NULL, "%s: line %d: %s", path, err.line, err.text);
    ck_assert(json_is_object(root));
    json_t *evs = json_object_get(root, "traceEvents");
    ck_assert(json_is_array(evs));
    size_t n_evs = json_array_size(evs), n_sp = 0, n_named = 0;
    tr_span *sp = malloc((n_evs + 1) * sizeof *sp);
    int64_t *named = malloc((n_evs + 1) * sizeof *named);
    ck_assert(sp && named);
    size_t i;
    json_t *ev;
    int ops = 0, kernels = 0, waits = 0, process_names = 0;
    int found[16] = {0};
    json_array_foreach(evs, i, ev)
    {
        ck_assert(json_is_object(ev));
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        const char *name = json_string_value(json_object_get(ev, "name"));
        ck_assert_ptr_nonnull(ph);
        ck_assert_ptr_nonnull(name);
        ck_assert(is_uint32(json_object_get(ev, "pid")));
        json_t *tid = json_object_get(ev, "tid");
        if (strcmp(ph, "M") == 0) {
            /* Metadata: Perfetto takes a track's name from args.name, a non-empty string. */
            const char *label =
                json_string_value(json_object_get(json_object_get(ev, "args"), "name"));
            ck_assert_ptr_nonnull(label);
            ck_assert(label[0] != '\0');
            if (strcmp(name, "process_name") == 0) {
                ++process_names;
            } else {
                ck_assert_str_eq(name, "thread_name");
                ck_assert(is_uint32(tid));
                named[n_named++] = json_integer_value(tid);
            }
            continue;
        }
        /* Complete events: Perfetto needs ts and dur (it skips an "X" without dur). */
        ck_assert_str_eq(ph, "X");
        ck_assert(is_uint32(tid));
        ck_assert(name[0] != '\0');
        sp[n_sp].tid = json_integer_value(tid);
        sp[n_sp].ts = perfetto_ns(json_object_get(ev, "ts"));
        sp[n_sp].dur = perfetto_ns(json_object_get(ev, "dur"));
        sp[n_sp].idx = i;
        ++n_sp;
        const char *cat = json_string_value(json_object_get(ev, "cat"));
        ck_assert_ptr_nonnull(cat);
        ops += strcmp(cat, "op") == 0;
        kernels += strcmp(cat, "kernel") == 0;
        waits += strcmp(cat, "wait") == 0;
        for (int k = 0; names && names[k]; ++k)
            found[k] |= strcmp(name, names[k]) == 0;
    }
    ck_assert_int_eq(process_names, 1);
    ck_assert_int_gt(ops, 0);
    ck_assert_int_gt(waits, 0);
    if (want_kernels)
        ck_assert_int_gt(kernels, 0);
    for (int k = 0; names && names[k]; ++k)
        ck_assert_msg(found[k], "no span named '%s'", names[k]);
    /* Every track with spans is named. */
    int tracks = 0;
    check_nesting(sp, n_sp, span_by_ts_then_file);
    for (size_t s = 0; s < n_sp; ++s) {
        if (s > 0 && sp[s].tid == sp[s - 1].tid)
            continue;
        ++tracks;
        int has_name = 0;
        for (size_t m = 0; m < n_named; ++m)
            has_name |= named[m] == sp[s].tid;
        ck_assert_msg(has_name, "tid %lld has spans but no thread_name", (long long)sp[s].tid);
    }
    check_nesting(sp, n_sp, span_by_ts_then_longer);
    free(sp);
    free(named);
    json_decref(root);
    return tracks;
}

/* Op names Perfetto must get back intact: a quote, a backslash, a newline and a tab (short
 * escapes), and control characters without one (written as '?'). */
static const char *const tricky_names[] = {"odd \"op\"", "even\\op", "q\"b\\n\nt\tx", "ctl??",
                                           NULL};

static void traced_work(void)
{
    px_engine *e = px_engine_default();
    px_var *v = px_var_new(e);
    double x[64];
    static const char *const pushed[] = {"odd \"op\"", "even\\op", "q\"b\\n\nt\tx", "ctl\x01\x7f"};
    for (int k = 0; k < 20; ++k)
        ck_assert_int_eq(px_engine_push_sync(e, count_fn, NULL, CPU, NULL, 0, &v, 1, PX_FN_NORMAL,
                                             0, pushed[k % 4]),
                         PX_OK);
    ck_assert_int_eq(px_engine_push_parallel_for_fn(e, NULL, "fill", px_range(0, 64), fill_fn, x,
                                                    NULL, 0, &v, 1),
                     PX_OK);
    ck_assert_int_eq(px_engine_wait_for_var(e, v), PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    ck_assert_int_eq(px_var_delete(e, v), PX_OK);
}

START_TEST(test_trace_api_writes_valid_chrome_json)
{
    char path[] = "/tmp/px_trace_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(px_trace_start(), PX_OK);
    traced_work();
    ck_assert_int_eq(px_trace_stop(), PX_OK);
    ck_assert_int_eq(px_trace_dump(path), PX_OK);
    check_trace_file(path, 0, tricky_names);
    unlink(path);
    ck_assert_int_eq(px_trace_dump(NULL), PX_EFAULT);
    ck_assert_int_eq(px_trace_dump(""), PX_EINVAL);
    ck_assert_int_eq(px_trace_dump("/nonexistent-dir/x/trace.json"), PX_EIO);
    ck_assert_int_eq(px_trace_clear(), PX_OK);
}
END_TEST

START_TEST(test_trace_dump_without_memory_is_enomem_and_leaves_no_file)
{
    char path[] = "/tmp/px_trace_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    unlink(path);
    ck_assert_int_eq(px_trace_start(), PX_OK);
    traced_work();
    ck_assert_int_eq(px_trace_stop(), PX_OK);
    px_test_log_capture();
    pxi_alloc_fail_at(1);
    int rc = px_trace_dump(path);
    pxi_alloc_fail_at(0);
    ck_assert_int_eq(rc, PX_ENOMEM);
    ck_assert(px_test_log_contains("px_trace_dump"));
    ck_assert_int_ne(access(path, F_OK), 0);
    ck_assert_int_eq(px_trace_dump(path), PX_OK);
    check_trace_file(path, 0, NULL);
    unlink(path);
    ck_assert_int_eq(px_trace_clear(), PX_OK);
}
END_TEST

/* A failure and how far it spread: the failed op gets an "op_failed" event, each op skipped
 * because of it an "op_skipped" event, both carrying the status in args; independent ops run
 * as usual. The file still passes every importer rule. */
START_TEST(test_trace_marks_the_failed_op_and_every_op_it_skipped)
{
    char path[] = "/tmp/px_trace_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    px_engine *e = px_engine_default();
    px_var *a = px_var_new(e), *b = px_var_new(e), *c = px_var_new(e);
    ck_assert_int_eq(px_trace_start(), PX_OK);
    ck_assert_int_eq(px_engine_push(e, &(px_op){.fn = fail_fn,
                                                .arg = (void *)(intptr_t)PX_EUSER,
                                                .writes = PX_VARS(a),
                                                .name = "origin"}),
                     PX_OK);
    ck_assert_int_eq(
        px_engine_push(
            e,
            &(px_op){.fn = count_fn, .reads = PX_VARS(a), .writes = PX_VARS(b), .name = "spread1"}),
        PX_OK);
    ck_assert_int_eq(
        px_engine_push(e, &(px_op){.fn = count_fn, .reads = PX_VARS(b), .name = "spread2"}), PX_OK);
    ck_assert_int_eq(
        px_engine_push(e, &(px_op){.fn = count_fn, .writes = PX_VARS(c), .name = "healthy"}),
        PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_EUSER);
    ck_assert_int_eq(px_trace_stop(), PX_OK);
    ck_assert_int_eq(px_trace_dump(path), PX_OK);
    const char *const names[] = {"origin", "healthy", NULL};
    check_trace_file(path, 0, names);

    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    ck_assert_ptr_nonnull(root);
    size_t i;
    json_t *ev;
    int failed = 0, skipped = 0, healthy_marked = 0;
    json_array_foreach(json_object_get(root, "traceEvents"), i, ev)
    {
        const char *cat = json_string_value(json_object_get(ev, "cat"));
        const char *name = json_string_value(json_object_get(ev, "name"));
        if (!cat || !name)
            continue;
        int is_failed = strcmp(cat, "op_failed") == 0, is_skipped = strcmp(cat, "op_skipped") == 0;
        if (!is_failed && !is_skipped) {
            ck_assert_ptr_null(json_object_get(ev, "args")); /* clean ops carry no status */
            continue;
        }
        json_t *args = json_object_get(ev, "args");
        ck_assert_int_eq(json_integer_value(json_object_get(args, "status")), PX_EUSER);
        ck_assert_str_eq(json_string_value(json_object_get(args, "error")), px_strerror(PX_EUSER));
        healthy_marked += strcmp(name, "healthy") == 0;
        if (is_failed) {
            ck_assert_str_eq(name, "origin");
            ++failed;
        } else {
            ck_assert(strcmp(name, "spread1") == 0 || strcmp(name, "spread2") == 0);
            ++skipped;
        }
    }
    ck_assert_int_eq(failed, 1);
    ck_assert_int_eq(skipped, 2);
    ck_assert_int_eq(healthy_marked, 0);
    json_decref(root);
    unlink(path);
    ck_assert_int_eq(px_trace_clear(), PX_OK);
    ck_assert_int_eq(px_var_delete(e, a), PX_OK);
    ck_assert_int_eq(px_var_delete(e, b), PX_OK);
    ck_assert_int_eq(px_var_delete(e, c), PX_OK);
}
END_TEST

/* Make @path (a mkstemp template) a fresh file and initialize with PX_PROFILE naming it. */
static void init_with_profile(char *path)
{
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    setenv("PX_PROFILE", path, 1);
    ck_assert_int_eq(px_initialize(NULL, NULL), PX_OK);
}

START_TEST(test_px_profile_writes_trace_at_finalize)
{
    char path[] = "/tmp/px_profile_XXXXXX";
    init_with_profile(path);
    traced_work();
    ck_assert_int_eq(px_finalize(), PX_OK);
    unsetenv("PX_PROFILE");
    check_trace_file(path, 1, tricky_names);
    unlink(path);
}
END_TEST

/* The tiled Cholesky DAG (POTRF, TRSM, SYRK, GEMM on a lower-triangular grid of tile Vars),
 * GEMM updates as kernel ops so kernel spans nest in op spans on the worker tracks. */
#define CHOL_NT 5

static int chol_tile_fn(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    spin_us(20);
    return PX_OK;
}

/* Push one tile op reading *r (NULL: none) and writing *w, named "kind(i)" (j < 0) or
 * "kind(i,j)" in the next slot of names (the op keeps the pointer until it has run). */
static void push_tile_op(px_engine *e, px_var *r, px_var *w, char (*names)[32], int *n_names,
                         const char *kind, int i, int j)
{
    char *nm = names[(*n_names)++];
    if (j < 0)
        snprintf(nm, 32, "%s(%d)", kind, i);
    else
        snprintf(nm, 32, "%s(%d,%d)", kind, i, j);
    ck_assert_int_eq(px_engine_push_sync(e, chol_tile_fn, NULL, CPU, r ? &r : NULL, r ? 1 : 0, &w,
                                         1, PX_FN_NORMAL, 0, nm),
                     PX_OK);
}

START_TEST(test_trace_of_cholesky_dag_nests_and_names_every_track)
{
    char path[] = "/tmp/px_profile_XXXXXX";
    init_with_profile(path);
    px_engine *e = px_engine_create(kind_under_test(), 2);
    ck_assert_ptr_nonnull(e);
    px_var *a[CHOL_NT][CHOL_NT] = {{NULL}};
    static double tile[CHOL_NT][CHOL_NT][64];
    static char names[CHOL_NT * CHOL_NT * CHOL_NT][32];
    int n_names = 0;
    for (int i = 0; i < CHOL_NT; ++i)
        for (int j = 0; j <= i; ++j)
            a[i][j] = px_var_new(e);
    for (int k = 0; k < CHOL_NT; ++k) {
        push_tile_op(e, NULL, a[k][k], names, &n_names, "potrf", k, -1);
        for (int i = k + 1; i < CHOL_NT; ++i)
            push_tile_op(e, a[k][k], a[i][k], names, &n_names, "trsm", i, k);
        for (int i = k + 1; i < CHOL_NT; ++i) {
            push_tile_op(e, a[i][k], a[i][i], names, &n_names, "syrk", i, k);
            for (int j = k + 1; j < i; ++j) {
                char *nm = names[n_names++];
                snprintf(nm, sizeof names[0], "gemm(%d,%d,%d)", i, j, k);
                px_var *r[2] = {a[i][k], a[j][k]};
                ck_assert_int_eq(px_engine_push_parallel_for_fn(e, NULL, nm, px_range(0, 64),
                                                                fill_fn, tile[i][j], r, 2, &a[i][j],
                                                                1),
                                 PX_OK);
            }
        }
    }
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    for (int i = 0; i < CHOL_NT; ++i)
        for (int j = 0; j <= i; ++j)
            ck_assert_int_eq(px_var_delete(e, a[i][j]), PX_OK);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    ck_assert_int_eq(px_finalize(), PX_OK);
    unsetenv("PX_PROFILE");
    const char *want[] = {"potrf(0)", "trsm(4,0)", "syrk(4,3)", "gemm(4,1,0)", "potrf(4)", NULL};
    ck_assert_int_ge(check_trace_file(path, 1, want), 1);
    unlink(path);
}
END_TEST

static Suite *engine_trace_suite(void)
{
    Suite *s = suite_create("engine_trace");
    TCase *tc = tcase_create("engine");
    tcase_add_checked_fixture(tc, px_test_setup, px_test_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_trace_api_writes_valid_chrome_json);
    tcase_add_test(tc, test_trace_dump_without_memory_is_enomem_and_leaves_no_file);
    tcase_add_test(tc, test_trace_marks_the_failed_op_and_every_op_it_skipped);
    suite_add_tcase(s, tc);
    TCase *life = tcase_create("lifecycle");
    tcase_set_timeout(life, 60);
    tcase_add_test(life, test_px_profile_writes_trace_at_finalize);
    tcase_add_test(life, test_trace_of_cholesky_dag_nests_and_names_every_track);
    suite_add_tcase(s, life);
    return s;
}

int main(void)
{
    return px_test_run(engine_trace_suite());
}
