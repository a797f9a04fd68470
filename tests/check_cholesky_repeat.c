/*
 * tests/check_cholesky_repeat.c - parex-cholesky --repeat (examples/cholesky/chol_repeat.h):
 * repeats that launch one recorded engine graph give the same bits as repeats that push the
 * ops again and as one plain factorization; failures and misuse inside repeats; the
 * --graph flag and its report.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chol_cli.h"
#include "chol_repeat.h"
#include "px_test.h"

static void setup(void)
{
    px_test_setup();
    chol_blas_single_thread();
}

/* Bytes of the tile storage of m. */
static size_t tile_bytes(const chol_matrix *m)
{
    size_t last = chol_tid(m->nt - 1, m->nt - 1);
    return (m->offset[last] + (size_t)chol_tsize(m, m->nt - 1) * (size_t)chol_tsize(m, m->nt - 1)) *
           sizeof(double);
}

/* A generated (seed 7) and L attached to e with property prop; L holds garbage, not A, so a
 * repeat that skipped the restore could not pass. */
static void make_pair(px_engine *e, px_fn_property prop, int64_t n, int64_t tile, chol_matrix *a,
                      chol_matrix *l)
{
    ck_assert_int_eq(chol_matrix_init(a, n, tile), PX_OK);
    ck_assert_int_eq(chol_matrix_init(l, n, tile), PX_OK);
    ck_assert_int_eq(chol_generate(a, 7), PX_OK);
    memset(l->data, 0x5a, tile_bytes(l));
    l->prop = prop;
    ck_assert_int_eq(chol_matrix_attach(l, e), PX_OK);
}

START_TEST(test_graph_repeats_equal_pushed_repeats_and_one_factorization_bitwise)
{
    /* Reference: one plain factorization of A on a naive engine. */
    px_engine *naive = px_engine_create(PX_ENGINE_NAIVE, 1);
    chol_matrix a, ref;
    make_pair(naive, PX_FN_NORMAL, 320, 48, &a, &ref);
    chol_matrix_copy(&ref, &a);
    ck_assert_int_eq(chol_factor(&ref), PX_OK);
    const px_engine_kind kinds[] = {PX_ENGINE_NAIVE, PX_ENGINE_POOLED, PX_ENGINE_PER_DEVICE};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        for (int use_graph = 0; use_graph <= 1; use_graph++) {
            px_fn_property prop;
            px_engine *e = chol_engine_create(kinds[k], 2, 0, &prop);
            ck_assert_ptr_nonnull(e);
            chol_matrix a2, l;
            make_pair(e, prop, 320, 48, &a2, &l);
            chol_repeat rep;
            ck_assert_int_eq(chol_repeat_init(&rep, &l, &a2, use_graph), PX_OK);
            ck_assert_int_eq(rep.graph != NULL, use_graph);
            if (use_graph) /* 28 restores + 7 POTRF, 21 TRSM, 21 SYRK, 35 GEMM */
                ck_assert_uint_eq(rep.graph_ops, chol_tid(l.nt, 0) + 84);
            for (int r = 0; r < 3; r++) {
                ck_assert_int_eq(chol_repeat_run(&rep), PX_OK);
                ck_assert_msg(memcmp(ref.data, l.data, tile_bytes(&l)) == 0,
                              "kind %zu graph %d repeat %d differs from one factorization", k,
                              use_graph, r);
            }
            chol_repeat_fini(&rep);
            chol_matrix_fini(&l);
            chol_matrix_fini(&a2);
            ck_assert_int_eq(px_engine_destroy(e), PX_OK);
        }
    }
    chol_matrix_fini(&ref);
    chol_matrix_fini(&a);
    ck_assert_int_eq(px_engine_destroy(naive), PX_OK);
}
END_TEST

START_TEST(test_graph_repeat_residual_below_1e12_with_ragged_tiles)
{
    chol_matrix a, l;
    make_pair(px_engine_default(), PX_FN_NORMAL, 300, 64, &a, &l);
    chol_repeat rep;
    ck_assert_int_eq(chol_repeat_init(&rep, &l, &a, 1), PX_OK);
    for (int r = 0; r < 2; r++)
        ck_assert_int_eq(chol_repeat_run(&rep), PX_OK);
    double res = chol_residual_exact(&a, &l) / chol_norm_fro(&a);
    ck_assert_msg(res < 1e-12, "residual %g", res);
    chol_repeat_fini(&rep);
    chol_matrix_fini(&l);
    chol_matrix_fini(&a);
}
END_TEST

START_TEST(test_graph_repeat_of_not_spd_matrix_fails_every_launch_naming_the_pivot)
{
    for (int use_graph = 0; use_graph <= 1; use_graph++) {
        chol_matrix a, l;
        make_pair(px_engine_default(), PX_FN_NORMAL, 256, 64, &a, &l);
        *chol_at(&a, 130, 130) = -1.0; /* leading minor of order 131 is negative */
        chol_repeat rep;
        ck_assert_int_eq(chol_repeat_init(&rep, &l, &a, use_graph), PX_OK);
        for (int r = 0; r < 2; r++) { /* the wait cleared the failure: the next run is the same */
            ck_assert_int_eq(chol_repeat_run(&rep), CHOL_ENOTSPD);
            ck_assert_int_eq(atomic_load(&l.notspd_order), 131);
        }
        chol_repeat_fini(&rep);
        /* The engine factorizes the next matrix on the same Vars. */
        chol_matrix_copy(&l, &a);
        *chol_at(&l, 130, 130) = 1000.0;
        ck_assert_int_eq(chol_factor(&l), PX_OK);
        chol_matrix_fini(&l);
        chol_matrix_fini(&a);
    }
}
END_TEST

START_TEST(test_repeat_init_rejects_mismatched_shapes_and_unattached_matrices)
{
    chol_matrix a, l, other, bare;
    make_pair(px_engine_default(), PX_FN_NORMAL, 128, 32, &a, &l);
    ck_assert_int_eq(chol_matrix_init(&other, 128, 64), PX_OK); /* other tile */
    ck_assert_int_eq(chol_matrix_init(&bare, 128, 32), PX_OK);  /* no Vars */
    chol_repeat rep;
    ck_assert_int_eq(chol_repeat_init(&rep, &l, &other, 1), PX_EINVAL);
    ck_assert_ptr_null(rep.graph);
    ck_assert_ptr_null(rep.tasks);
    ck_assert_int_eq(chol_repeat_init(&rep, &bare, &a, 0), PX_EINVAL);
    chol_copy copies[10];
    ck_assert_int_eq(chol_push_restore(&bare, &a, copies), PX_EINVAL);
    chol_repeat_fini(&rep); /* safe on the zeroed struct */
    chol_matrix_fini(&bare);
    chol_matrix_fini(&other);
    chol_matrix_fini(&l);
    chol_matrix_fini(&a);
}
END_TEST

START_TEST(test_repeat_init_while_recording_is_ebusy_and_records_nothing)
{
    px_engine *e = px_engine_create(PX_ENGINE_POOLED, 2);
    chol_matrix a, l;
    make_pair(e, PX_FN_NORMAL, 128, 32, &a, &l);
    ck_assert_int_eq(px_graph_begin(e), PX_OK);
    chol_repeat rep;
    ck_assert_int_eq(chol_repeat_init(&rep, &l, &a, 1), PX_EBUSY);
    ck_assert_ptr_null(rep.graph);
    px_graph *g = NULL;
    ck_assert_int_eq(px_graph_end(e, &g), PX_OK);
    size_t ops = 99;
    ck_assert_int_eq(px_graph_stats(g, &ops, NULL), PX_OK);
    ck_assert_uint_eq(ops, 0);
    ck_assert_int_eq(px_graph_destroy(g), PX_OK);
    chol_matrix_fini(&l);
    chol_matrix_fini(&a);
    ck_assert_int_eq(px_engine_destroy(e), PX_OK);
}
END_TEST

START_TEST(test_restore_priority_outranks_every_factorization_op)
{
    for (int64_t nt = 1; nt < 40; nt++) {
        int top = chol_priority(nt, 0, 3);
        for (int64_t c = 0; c < nt; c++) {
            ck_assert_int_gt(chol_restore_priority(nt, c), top);
            if (c > 0)
                ck_assert_int_lt(chol_restore_priority(nt, c), chol_restore_priority(nt, c - 1));
        }
    }
}
END_TEST

static int parse_graph(const char *a1, const char *a2, chol_options *o)
{
    char *argv[] = {"parex-cholesky", (char *)a1, (char *)a2, NULL};
    chol_options_default(o);
    FILE *sink = tmpfile();
    int rc = chol_parse_args(a2 ? 3 : 2, argv, o, sink ? sink : stderr);
    if (sink)
        fclose(sink);
    return rc;
}

START_TEST(test_parse_graph_flag_on_off_and_default)
{
    chol_options o;
    chol_options_default(&o);
    ck_assert_int_eq(o.graph, -1);
    ck_assert_int_eq(parse_graph("--graph", "on", &o), PX_OK);
    ck_assert_int_eq(o.graph, 1);
    ck_assert_int_eq(parse_graph("--graph=off", NULL, &o), PX_OK);
    ck_assert_int_eq(o.graph, 0);
    ck_assert_int_eq(parse_graph("--graph", "yes", &o), PX_EINVAL);
    ck_assert_int_eq(parse_graph("--graph=", NULL, &o), PX_EINVAL);
    ck_assert_int_eq(parse_graph("--graph", NULL, &o), PX_EINVAL);
}
END_TEST

/* chol_run's stdout (JSON last line) for the options, malloc'd (the caller frees); asserts the
 * exit code. */
static char *run_json(const chol_options *o, int want)
{
    FILE *out = tmpfile(), *err = tmpfile();
    ck_assert_ptr_nonnull(out);
    ck_assert_ptr_nonnull(err);
    int code = chol_run(o, out, err);
    rewind(out);
    char *buf = px_test_read_stream(out, NULL);
    ck_assert_ptr_nonnull(buf);
    ck_assert_msg(code == want, "exit %d, stdout: %s", code, buf);
    fclose(out);
    fclose(err);
    return buf;
}

static double json_number(const char *buf, const char *key)
{
    const char *p = strstr(buf, key);
    ck_assert_msg(p != NULL, "missing %s in %s", key, buf);
    return strtod(p + strlen(key), NULL);
}

START_TEST(test_run_repeat_3_graph_on_and_off_report_the_same_residual)
{
    chol_options o;
    chol_options_default(&o);
    o.n = 256;
    o.tile = 64;
    o.json = 1;
    o.check = 1e-12;
    o.repeat = 3;
    o.engine = "per_device";
    o.workers = 2;
    char *on = run_json(&o, CHOL_EXIT_OK); /* graph by default with repeat > 1 */
    ck_assert_msg(strstr(on, "\"graph\": true") && strstr(on, "\"repeat\": 3") &&
                      strstr(on, "\"graph_ops\": 30") && strstr(on, "\"graph_record_seconds\""),
                  "%s", on);
    o.graph = 0;
    char *off = run_json(&o, CHOL_EXIT_OK);
    ck_assert_msg(strstr(off, "\"graph\": false") && !strstr(off, "graph_ops"), "%s", off);
    double r_on = json_number(on, "\"residual\": "), r_off = json_number(off, "\"residual\": ");
    ck_assert_msg(r_on < 1e-12 && r_on == r_off, "residuals %g (graph) %g (pushes)", r_on, r_off);
    o.repeat = 1; /* one launch of a graph: still restores, still the same factor */
    o.graph = 1;
    free(on);
    on = run_json(&o, CHOL_EXIT_OK);
    ck_assert(json_number(on, "\"residual\": ") == r_off);
    free(on);
    free(off);
}
END_TEST

static Suite *cholesky_repeat_suite(void)
{
    Suite *s = suite_create("cholesky_repeat");
    TCase *tc = tcase_create("cholesky_repeat");
    tcase_add_checked_fixture(tc, setup, px_test_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_graph_repeats_equal_pushed_repeats_and_one_factorization_bitwise);
    tcase_add_test(tc, test_graph_repeat_residual_below_1e12_with_ragged_tiles);
    tcase_add_test(tc, test_graph_repeat_of_not_spd_matrix_fails_every_launch_naming_the_pivot);
    tcase_add_test(tc, test_repeat_init_rejects_mismatched_shapes_and_unattached_matrices);
    tcase_add_test(tc, test_repeat_init_while_recording_is_ebusy_and_records_nothing);
    tcase_add_test(tc, test_restore_priority_outranks_every_factorization_op);
    tcase_add_test(tc, test_parse_graph_flag_on_off_and_default);
    tcase_add_test(tc, test_run_repeat_3_graph_on_and_off_report_the_same_residual);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(cholesky_repeat_suite());
}
