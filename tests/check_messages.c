/* tests/check_messages.c - the messages a newcomer's usual mistakes get (issue 17): each is
 * matched by text and by log level, never just printed.
 *   - a typo in px_space_by_name warns, naming the name and the known spaces;
 *   - a reduce kernel over one builtin type with a builtin reducer of another (same size) is
 *     PX_EINVAL naming both types, through a direct launch and an engine push; custom
 *     reducers and struct values keep working;
 *   - an oversize custom reducer names the limit and the scatter-add API. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "px_test.h"

/* A log handler that keeps each message with its level (px_test_log_capture drops levels). */
static char g_log[16384];
static size_t g_log_len;
static void keep(px_log_level level, const char *msg, void *user)
{
    (void)user;
    static const char *const names[] = {"error", "warn", "info", "debug"};
    int n = snprintf(g_log + g_log_len, sizeof g_log - g_log_len, "[%s] %s\n",
                     (unsigned)level < 4 ? names[level] : "?", msg);
    if (n > 0 && g_log_len + (size_t)n < sizeof g_log)
        g_log_len += (size_t)n;
}
static void log_keep(void)
{
    g_log_len = 0;
    g_log[0] = '\0';
    px_log_set_handler(keep, NULL);
    px_log_set_level(PX_LOG_DEBUG);
}
/* The line holding @needle, which must carry level @level. */
static int logged_at(const char *level, const char *needle)
{
    const char *hit = strstr(g_log, needle);
    if (!hit)
        return 0;
    const char *line = hit;
    while (line > g_log && line[-1] != '\n')
        --line;
    char tag[16];
    snprintf(tag, sizeof tag, "[%s]", level);
    return strncmp(line, tag, strlen(tag)) == 0;
}

static void setup(void)
{
    px_test_setup();
    log_keep();
}

START_TEST(test_an_unknown_space_name_warns_with_the_known_names)
{
    ck_assert_ptr_null(px_space_by_name("thread"));
    ck_assert_msg(logged_at("warn", "px_space_by_name(\"thread\"): unknown space name"), "%s",
                  g_log);
    ck_assert_msg(strstr(g_log, "\"serial\"") && strstr(g_log, "\"threads\""), "%s", g_log);
    ck_assert_msg(strstr(g_log, "NULL means the default space"), "%s", g_log);
    /* A known name is quiet. */
    log_keep();
    ck_assert_ptr_nonnull(px_space_by_name("serial"));
    ck_assert_uint_eq(g_log_len, 0);
}
END_TEST

typedef struct {
    const double *x;
} dsum_args;
PX_REDUCE(dsum, dsum_args, double, i, a, acc)
{
    *acc += a->x[i];
}
typedef struct {
    int64_t k;
} isum_args;
PX_REDUCE(isum, isum_args, int64_t, i, a, acc)
{
    *acc += i * a->k;
}
PX_SCAN(dscan, dsum_args, double, i, a, partial, final_pass)
{
    (void)final_pass;
    *partial += a->x[i];
}
typedef struct {
    double lo, hi;
} range2;
PX_REDUCE(rsum, dsum_args, range2, i, a, acc)
{
    acc->lo += a->x[i];
    acc->hi += 2 * a->x[i];
}
static void r2_identity(void *v)
{
    *(range2 *)v = (range2){0, 0};
}
static void r2_join(void *d, const void *s)
{
    range2 *x = d;
    const range2 *y = s;
    x->lo += y->lo;
    x->hi += y->hi;
}
static void d_identity(void *v)
{
    *(double *)v = 0;
}
static void d_join(void *d, const void *s)
{
    *(double *)d += *(const double *)s;
}

START_TEST(test_kernels_record_their_value_type)
{
    ck_assert_int_eq(dsum.value_type, PX_VALUE_F64);
    ck_assert_int_eq(isum.value_type, PX_VALUE_I64);
    ck_assert_int_eq(dscan.value_type, PX_VALUE_F64);
    ck_assert_int_eq(rsum.value_type, PX_VALUE_CUSTOM);
    ck_assert_int_eq(px_sum_f64.type, PX_VALUE_F64);
    ck_assert_int_eq(px_sum_i64.type, PX_VALUE_I64);
}
END_TEST

START_TEST(test_a_builtin_reducer_of_another_type_is_rejected_naming_both)
{
    double x[16];
    for (int i = 0; i < 16; ++i)
        x[i] = 0.5 * i;
    dsum_args a = {x};
    int64_t bad = 42;
    ck_assert_int_eq(
        px_parallel_reduce(NULL, "dot", px_range(0, 16), &dsum, &a, sizeof a, &px_sum_i64, &bad),
        PX_EINVAL);
    ck_assert_int_eq(bad, 42); /* untouched */
    ck_assert_msg(logged_at("error", "kernel 'dsum' folds double values but reducer 'sum_i64' "
                                     "joins int64_t values"),
                  "%s", g_log);
    /* Scans and engine pushes take the same check, at push. */
    log_keep();
    double tot = 0;
    ck_assert_int_eq(
        px_parallel_scan(NULL, NULL, px_range(0, 16), &dscan, &a, sizeof a, &px_sum_i64, &tot),
        PX_EINVAL);
    ck_assert_msg(strstr(g_log, "double") && strstr(g_log, "int64_t"), "%s", g_log);
    log_keep();
    px_engine *e = px_engine_default();
    ck_assert_int_eq(px_engine_push_parallel_reduce(e, NULL, "dot", px_range(0, 16), &dsum, &a,
                                                    sizeof a, &px_min_i64, &bad, NULL, 0, NULL, 0),
                     PX_EINVAL);
    ck_assert_msg(strstr(g_log, "folds double values but reducer 'min_i64' joins int64_t"), "%s",
                  g_log);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_OK);
    /* An int64_t kernel with an int64_t reducer, and a double kernel with a double one. */
    int64_t is = 0;
    isum_args ia = {2};
    ck_assert_int_eq(
        px_parallel_reduce(NULL, NULL, px_range(0, 10), &isum, &ia, sizeof ia, &px_sum_i64, &is),
        PX_OK);
    ck_assert_int_eq(is, 90);
    double ds = 0;
    ck_assert_int_eq(
        px_parallel_reduce(NULL, NULL, px_range(0, 16), &dsum, &a, sizeof a, &px_sum_f64, &ds),
        PX_OK);
    ck_assert(ds == 60.0);
}
END_TEST

START_TEST(test_custom_reducers_and_struct_values_are_not_type_checked)
{
    double x[8];
    for (int i = 0; i < 8; ++i)
        x[i] = i;
    dsum_args a = {x};
    /* A custom reducer over double, with a double kernel. */
    static const px_reducer dplus = PX_REDUCER_INIT(double, d_identity, d_join, "dplus");
    double ds = -1;
    ck_assert_int_eq(
        px_parallel_reduce(NULL, NULL, px_range(0, 8), &dsum, &a, sizeof a, &dplus, &ds), PX_OK);
    ck_assert(ds == 28.0);
    /* A struct value with its own reducer. */
    static const px_reducer r2 = PX_REDUCER_INIT(range2, r2_identity, r2_join, "range2");
    range2 out = {0, 0};
    ck_assert_int_eq(px_parallel_reduce(NULL, NULL, px_range(0, 8), &rsum, &a, sizeof a, &r2, &out),
                     PX_OK);
    ck_assert(out.lo == 28.0 && out.hi == 56.0);
}
END_TEST

typedef struct {
    double v[256];
} big_value;
static void big_identity(void *v)
{
    memset(v, 0, sizeof(big_value));
}
static void big_join(void *d, const void *s)
{
    (void)d;
    (void)s;
}
static void big_fn(int64_t b, int64_t e, void *ctx, void *acc)
{
    (void)b;
    (void)e;
    (void)ctx;
    (void)acc;
}

START_TEST(test_an_oversize_reducer_names_the_limit_and_the_scatter_api)
{
    static const px_reducer big = PX_REDUCER_INIT(big_value, big_identity, big_join, "histogram");
    ck_assert_uint_eq(sizeof(big_value), 2048);
    static big_value out;
    ck_assert_int_eq(px_parallel_reduce_fn(NULL, "hist", px_range(0, 4), big_fn, NULL, &big, &out),
                     PX_EINVAL);
    ck_assert_msg(logged_at("error", "value_size 2048 > PX_REDUCER_MAX_VALUE_BYTES (256)"), "%s",
                  g_log);
    ck_assert_msg(strstr(g_log, "parex/scatter.h"), "%s", g_log);
    ck_assert_msg(strstr(g_log, "reducer 'histogram'"), "%s", g_log);
}
END_TEST

static int fails(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    return PX_EUSER;
}
static int runs(const px_run_context *rc, void *arg)
{
    (void)rc;
    (void)arg;
    return PX_OK;
}

START_TEST(test_an_engine_failure_warns_and_a_skip_is_debug)
{
    px_engine *e = px_engine_default();
    px_var *x = px_var_new(e), *y = px_var_new(e);
    ck_assert_int_eq(px_engine_push(e, &(px_op){.fn = fails, .writes = PX_VARS(x), .name = "lvl"}),
                     PX_OK);
    ck_assert_int_eq(
        px_engine_push(
            e, &(px_op){.fn = runs, .reads = PX_VARS(x), .writes = PX_VARS(y), .name = "after"}),
        PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_EUSER);
    ck_assert_msg(logged_at("warn", "engine: op 'lvl' failed with"), "%s", g_log);
    ck_assert_msg(logged_at("debug", "engine: op 'after' skipped"), "%s", g_log);
    /* At the default level (warn) the skip is quiet, the failure is not. */
    log_keep();
    px_log_set_level(PX_LOG_WARN);
    ck_assert_int_eq(px_engine_push(e, &(px_op){.fn = fails, .writes = PX_VARS(x), .name = "lvl"}),
                     PX_OK);
    ck_assert_int_eq(
        px_engine_push(
            e, &(px_op){.fn = runs, .reads = PX_VARS(x), .writes = PX_VARS(y), .name = "after"}),
        PX_OK);
    ck_assert_int_eq(px_engine_wait_for_all(e), PX_EUSER);
    ck_assert_msg(logged_at("warn", "engine: op 'lvl' failed with"), "%s", g_log);
    ck_assert_ptr_null(strstr(g_log, "op 'after' skipped"));
    ck_assert_int_eq(px_var_delete(e, x), PX_OK);
    ck_assert_int_eq(px_var_delete(e, y), PX_OK);
}
END_TEST

static Suite *messages_suite(void)
{
    Suite *s = suite_create("messages");
    TCase *tc = tcase_create("messages");
    tcase_add_checked_fixture(tc, setup, px_test_teardown);
    tcase_add_test(tc, test_an_unknown_space_name_warns_with_the_known_names);
    tcase_add_test(tc, test_kernels_record_their_value_type);
    tcase_add_test(tc, test_a_builtin_reducer_of_another_type_is_rejected_naming_both);
    tcase_add_test(tc, test_custom_reducers_and_struct_values_are_not_type_checked);
    tcase_add_test(tc, test_an_oversize_reducer_names_the_limit_and_the_scatter_api);
    tcase_add_test(tc, test_an_engine_failure_warns_and_a_skip_is_debug);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(messages_suite());
}
