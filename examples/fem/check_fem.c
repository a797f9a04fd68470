/*
 * examples/fem/check_fem.c - Check suite for parex-fem's mesh, pattern, colouring and
 * assembly: every assembly mode gives the same matrix and load up to rounding, duplicated is
 * bitwise repeatable, colored is bitwise the same on serial and threads, px_scatter_access_add
 * (the assembly kernel's add) gives px_scatter_add's sums in every mode, and the discrete
 * solution converges at order 2 in L2. Run with PX_NUM_THREADS = 1, 2, 3.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fem.h"
#include "px_test.h"

/* The threads space when built, else serial. */
static px_space *host_space(void)
{
    px_space *s = px_space_by_name("threads");
    return s ? s : px_space_by_name("serial");
}

START_TEST(test_mesh_is_the_same_for_a_seed_and_differs_across_seeds)
{
    fem_mesh a, b, c;
    ck_assert_int_eq(fem_mesh_generate(12, 7, &a), PX_OK);
    ck_assert_int_eq(fem_mesh_generate(12, 7, &b), PX_OK);
    ck_assert_int_eq(fem_mesh_generate(12, 8, &c), PX_OK);
    ck_assert_int_eq(a.n_nodes, 13 * 13);
    ck_assert_int_eq(a.n_elems, 2 * 12 * 12);
    ck_assert(memcmp(a.xy, b.xy, (size_t)a.n_nodes * 2 * sizeof(double)) == 0);
    ck_assert(memcmp(a.tri, b.tri, (size_t)a.n_elems * 3 * sizeof(int32_t)) == 0);
    ck_assert(memcmp(a.xy, c.xy, (size_t)a.n_nodes * 2 * sizeof(double)) != 0);
    ck_assert(memcmp(a.tri, c.tri, (size_t)a.n_elems * 3 * sizeof(int32_t)) != 0);
    ck_assert(a.min_area > 0.0);
    const double h = 1.0 / 12.0;
    int flips = 0;
    for (int64_t k = 0; k < a.n_nodes; k++) {
        const int64_t i = k % 13, j = k / 13;
        const double dx = fabs(a.xy[2 * k] - (double)i * h),
                     dy = fabs(a.xy[2 * k + 1] - (double)j * h);
        ck_assert(dx <= FEM_MESH_JITTER * h && dy <= FEM_MESH_JITTER * h);
        ck_assert_int_eq(a.boundary[k], i == 0 || j == 0 || i == 12 || j == 12);
        if (a.boundary[k])
            ck_assert(dx == 0.0 && dy == 0.0);
    }
    for (int64_t cell = 0; cell < 144; cell++)
        flips += a.tri[6 * cell + 2] != a.tri[6 * cell] + 14; /* third node is not c */
    ck_assert_int_gt(flips, 20); /* both diagonals occur (expected 72 of 144) */
    ck_assert_int_lt(flips, 124);
    fem_mesh_free(&a);
    fem_mesh_free(&b);
    fem_mesh_free(&c);
}
END_TEST

START_TEST(test_mesh_rejects_bad_sizes)
{
    fem_mesh m;
    ck_assert_int_eq(fem_mesh_generate(0, 1, &m), PX_EINVAL);
    ck_assert_int_eq(fem_mesh_generate(-3, 1, &m), PX_EINVAL);
    ck_assert_int_eq(fem_mesh_generate(FEM_MESH_MAX_N + 1, 1, &m), PX_EINVAL);
    ck_assert_int_eq(fem_mesh_generate(4, 1, NULL), PX_EFAULT);
    ck_assert_int_eq(fem_mesh_generate(1, 1, &m), PX_OK); /* smallest: 2 triangles */
    ck_assert_int_eq(m.n_elems, 2);
    fem_mesh_free(&m);
    fem_mesh_free(NULL);
}
END_TEST

/* Is c in row r? */
static int in_row(const fem_pattern *p, int64_t r, int64_t c)
{
    for (int64_t k = p->row_ptr[r]; k < p->row_ptr[r + 1]; k++)
        if (p->col[k] == c)
            return 1;
    return 0;
}

START_TEST(test_pattern_is_sorted_symmetric_and_holds_every_element_pair)
{
    fem_mesh m;
    fem_pattern p;
    ck_assert_int_eq(fem_mesh_generate(9, 3, &m), PX_OK);
    ck_assert_int_eq(fem_pattern_build(&m, &p), PX_OK);
    ck_assert_int_eq(p.n, m.n_nodes);
    /* Euler: every undirected edge twice plus the diagonal; edges = nodes + elems - 1. */
    ck_assert_int_eq(p.nnz, m.n_nodes + 2 * (m.n_nodes + m.n_elems - 1));
    for (int64_t r = 0; r < p.n; r++) {
        ck_assert(in_row(&p, r, r));
        for (int64_t k = p.row_ptr[r] + 1; k < p.row_ptr[r + 1]; k++)
            ck_assert_int_lt(p.col[k - 1], p.col[k]);
        for (int64_t k = p.row_ptr[r]; k < p.row_ptr[r + 1]; k++)
            ck_assert(in_row(&p, p.col[k], r));
    }
    for (int64_t e = 0; e < m.n_elems; e++)
        for (int q = 0; q < 3; q++)
            for (int s = 0; s < 3; s++)
                ck_assert(in_row(&p, m.tri[3 * e + q], m.tri[3 * e + s]));
    ck_assert_int_eq(fem_pattern_build(NULL, &p), PX_EFAULT);
    fem_pattern_free(&p);
    fem_mesh_free(&m);
}
END_TEST

START_TEST(test_coloring_never_puts_two_elements_of_a_node_in_one_colour)
{
    fem_mesh m;
    fem_coloring c;
    ck_assert_int_eq(fem_mesh_generate(20, 5, &m), PX_OK);
    ck_assert_int_eq(fem_coloring_build(&m, &c), PX_OK);
    ck_assert_int_ge(c.n_colors, 6); /* a node in 6 or more triangles exists */
    ck_assert_int_le(c.n_colors, 12);
    ck_assert_int_eq(c.color_ptr[0], 0);
    ck_assert_int_eq(c.color_ptr[c.n_colors], m.n_elems);
    int *mark = (int *)calloc((size_t)m.n_nodes, sizeof(int));
    char *seen = (char *)calloc((size_t)m.n_elems, 1);
    for (int k = 0; k < c.n_colors; k++) {
        for (int64_t q = c.color_ptr[k]; q < c.color_ptr[k + 1]; q++) {
            const int32_t e = c.elems[q];
            ck_assert(!seen[e]);
            seen[e] = 1;
            for (int v = 0; v < 3; v++) {
                ck_assert_int_ne(mark[m.tri[3 * e + v]], k + 1);
                mark[m.tri[3 * e + v]] = k + 1;
            }
        }
    }
    free(mark);
    free(seen);
    fem_coloring_free(&c);
    fem_mesh_free(&m);
}
END_TEST

/* Assemble a 24 x 24 mesh on s by how; copy values and load to the host (malloc). */
static void assemble_copy(px_space *s, fem_assembly how, double **val, double **load, int64_t *nnz,
                          int64_t *nodes)
{
    fem_mesh m;
    fem_problem p;
    fem_assembler as;
    ck_assert_int_eq(fem_mesh_generate(24, 11, &m), PX_OK);
    ck_assert_int_eq(fem_problem_create(s, &m, &p), PX_OK);
    fem_mesh_free(&m);
    ck_assert_int_eq(fem_assembler_init(&as, &p, how), PX_OK);
    ck_assert_int_eq(fem_assemble(&as), PX_OK);
    *nnz = p.A.nnz;
    *nodes = p.n_nodes;
    *val = (double *)malloc((size_t)p.A.nnz * sizeof(double));
    *load = (double *)malloc((size_t)p.n_nodes * sizeof(double));
    memcpy(*val, p.A.val, (size_t)p.A.nnz * sizeof(double));
    memcpy(*load, p.load, (size_t)p.n_nodes * sizeof(double));
    fem_assembler_fini(&as);
    fem_problem_free(&p);
}

static double max_rel_diff(const double *a, const double *b, int64_t n)
{
    double d = 0.0, m = 0.0;
    for (int64_t i = 0; i < n; i++) {
        d = fmax(d, fabs(a[i] - b[i]));
        m = fmax(m, fabs(b[i]));
    }
    ck_assert(m > 0.0);
    return d / m;
}

static const fem_assembly scatter_modes[] = {FEM_ASSEMBLY_ATOMIC, FEM_ASSEMBLY_DUPLICATED,
                                             FEM_ASSEMBLY_AUTO};

START_TEST(test_every_mode_gives_the_colored_matrix_up_to_rounding)
{
    px_space *s = host_space();
    double *rv, *rl, *v, *l;
    int64_t nnz, nodes, nnz2, nodes2;
    assemble_copy(s, FEM_ASSEMBLY_COLORED, &rv, &rl, &nnz, &nodes);
    assemble_copy(s, scatter_modes[_i], &v, &l, &nnz2, &nodes2);
    ck_assert_int_eq(nnz, nnz2);
    ck_assert_int_eq(nodes, nodes2);
    ck_assert_double_le(max_rel_diff(v, rv, nnz), 1e-14);
    ck_assert_double_le(max_rel_diff(l, rl, nodes), 1e-14);
    free(rv);
    free(rl);
    free(v);
    free(l);
}
END_TEST

START_TEST(test_duplicated_is_bitwise_repeatable)
{
    px_space *s = host_space();
    double *v1, *l1, *v2, *l2;
    int64_t nnz, nodes;
    assemble_copy(s, FEM_ASSEMBLY_DUPLICATED, &v1, &l1, &nnz, &nodes);
    for (int rep = 0; rep < 3; rep++) {
        assemble_copy(s, FEM_ASSEMBLY_DUPLICATED, &v2, &l2, &nnz, &nodes);
        ck_assert(memcmp(v1, v2, (size_t)nnz * sizeof(double)) == 0);
        ck_assert(memcmp(l1, l2, (size_t)nodes * sizeof(double)) == 0);
        free(v2);
        free(l2);
    }
    free(v1);
    free(l1);
}
END_TEST

/* ---- px_scatter_access (the lookup the assembly kernel hoists) ----------------------------
 * A kernel adding in a branch, once through an access taken at the top of the body and once
 * through px_scatter_add, into two scatters of the same mode: integer values, so every order
 * gives the exact sum, and the two routes must agree bit for bit in every mode. */
#define ACC_N 997
#define ACC_K 200000

typedef struct {
    px_scatter *by_access;
    px_scatter *by_add;
} acc_args;

PX_FOR(acc_deposit, acc_args, i, a)
{
    const px_scatter_access acc = px_scatter_access_of(a->by_access);
    if (i % 3 != 0) {
        const int64_t cell = (i * 7) % ACC_N;
        const double v = (double)(i % 5);
        px_scatter_access_add(acc, cell, v);
        px_scatter_add(a->by_add, cell, v);
    }
}

START_TEST(test_access_add_in_a_branch_equals_scatter_add_and_the_serial_sum)
{
    static const px_scatter_mode modes[] = {PX_SCATTER_ATOMIC, PX_SCATTER_DUPLICATED,
                                            PX_SCATTER_AUTO};
    static const char *const spaces[] = {"serial", "threads"};
    double want[ACC_N];
    for (int64_t c = 0; c < ACC_N; c++)
        want[c] = 1.0;
    for (int64_t i = 0; i < ACC_K; i++)
        if (i % 3 != 0)
            want[(i * 7) % ACC_N] += (double)(i % 5);
    for (size_t sp = 0; sp < sizeof spaces / sizeof spaces[0]; sp++) {
        px_space *s = px_space_by_name(spaces[sp]);
        if (!s)
            continue; /* threads not built */
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            double t1[ACC_N], t2[ACC_N];
            for (int64_t c = 0; c < ACC_N; c++)
                t1[c] = t2[c] = 1.0;
            acc_args a;
            ck_assert_int_eq(px_scatter_create(&a.by_access, s, t1, ACC_N, modes[m]), PX_OK);
            ck_assert_int_eq(px_scatter_create(&a.by_add, s, t2, ACC_N, modes[m]), PX_OK);
            ck_assert_int_eq(
                px_parallel_for(s, "acc_deposit", px_range(0, ACC_K), &acc_deposit, &a, sizeof a),
                PX_OK);
            ck_assert_int_eq(px_scatter_contribute(a.by_access), PX_OK);
            ck_assert_int_eq(px_scatter_contribute(a.by_add), PX_OK);
            ck_assert_int_eq(px_scatter_destroy(a.by_access), PX_OK);
            ck_assert_int_eq(px_scatter_destroy(a.by_add), PX_OK);
            for (int64_t c = 0; c < ACC_N; c++) {
                ck_assert_msg(t1[c] == want[c] && t2[c] == want[c],
                              "%s mode %d cell %lld: access %.17g, add %.17g, want %.17g",
                              spaces[sp], (int)modes[m], (long long)c, t1[c], t2[c], want[c]);
            }
        }
    }
}
END_TEST

START_TEST(test_colored_is_bitwise_the_same_on_serial_and_threads)
{
    double *v1, *l1, *v2, *l2;
    int64_t nnz, nodes;
    assemble_copy(px_space_by_name("serial"), FEM_ASSEMBLY_COLORED, &v1, &l1, &nnz, &nodes);
    assemble_copy(host_space(), FEM_ASSEMBLY_COLORED, &v2, &l2, &nnz, &nodes);
    ck_assert(memcmp(v1, v2, (size_t)nnz * sizeof(double)) == 0);
    ck_assert(memcmp(l1, l2, (size_t)nodes * sizeof(double)) == 0);
    free(v1);
    free(l1);
    free(v2);
    free(l2);
}
END_TEST

START_TEST(test_matrix_is_symmetric_with_zero_interior_row_sums_and_dirichlet_rows)
{
    fem_mesh m;
    fem_problem p;
    fem_assembler as;
    ck_assert_int_eq(fem_mesh_generate(10, 2, &m), PX_OK);
    ck_assert_int_eq(fem_problem_create(host_space(), &m, &p), PX_OK);
    ck_assert_int_eq(fem_assembler_init(&as, &p, FEM_ASSEMBLY_ATOMIC), PX_OK);
    ck_assert_int_eq(fem_assemble(&as), PX_OK);
    const cg_matrix *A = &p.A;
    double load_sum = 0.0;
    for (int64_t r = 0; r < A->n; r++) {
        double sum = 0.0;
        int touches_boundary = 0;
        for (int64_t k = A->row_ptr[r]; k < A->row_ptr[r + 1]; k++) {
            const int32_t c = A->col[k];
            sum += A->val[k];
            touches_boundary |= m.boundary[c];
            const int64_t t = fem_slot(A->row_ptr, A->col, c, (int32_t)r);
            ck_assert_double_eq_tol(A->val[k], A->val[t], 1e-14);
            if (c == r)
                ck_assert(A->val[k] > 0.0);
            else if (m.boundary[r] || m.boundary[c])
                ck_assert(A->val[k] == 0.0);
        }
        if (m.boundary[r]) {
            ck_assert(sum == 1.0);
            ck_assert(p.load[r] == 0.0);
        } else if (!touches_boundary) {
            ck_assert_double_eq_tol(sum, 0.0, 1e-12);
        }
        load_sum += p.load[r];
    }
    /* The load integrates f = 2 pi^2 sin sin to 8 over the square, less the boundary share. */
    ck_assert(load_sum > 6.0 && load_sum < 8.0);
    fem_assembler_fini(&as);
    fem_problem_free(&p);
    fem_mesh_free(&m);
}
END_TEST

/* The L2 error on an n x n mesh after CG. */
static double l2_error(int64_t n)
{
    px_space *s = host_space();
    fem_mesh m;
    fem_problem p;
    fem_assembler as;
    ck_assert_int_eq(fem_mesh_generate(n, 1, &m), PX_OK);
    ck_assert_int_eq(fem_problem_create(s, &m, &p), PX_OK);
    fem_mesh_free(&m);
    ck_assert_int_eq(fem_assembler_init(&as, &p, FEM_ASSEMBLY_AUTO), PX_OK);
    ck_assert_int_eq(fem_assemble(&as), PX_OK);
    double *x = (double *)px_malloc(s, (size_t)p.n_nodes * sizeof(double));
    ck_assert_ptr_nonnull(x);
    cg_options o;
    memset(&o, 0, sizeof o);
    o.tol = 1e-11;
    o.max_iters = 10000;
    o.jacobi = 1;
    cg_result r;
    ck_assert_int_eq(cg_solve_rhs(&p.A, p.load, x, &o, &r), PX_OK);
    ck_assert(r.converged);
    ck_assert(r.true_relres < 1e-9);
    ck_assert(isnan(r.max_abs_err));
    double e;
    ck_assert_int_eq(fem_l2_error(&p, x, &e), PX_OK);
    px_free(s, x);
    fem_assembler_fini(&as);
    fem_problem_free(&p);
    return e;
}

START_TEST(test_l2_error_converges_at_order_2)
{
    const double e1 = l2_error(12), e2 = l2_error(24);
    const double order = log(e1 / e2) / log(2.0);
    ck_assert_double_ge(order, 1.8);
    ck_assert_double_le(order, 2.2);
    ck_assert_double_lt(e1, 2e-2);
}
END_TEST

START_TEST(test_bad_arguments_are_reported)
{
    fem_assembly a;
    fem_assembler as;
    fem_problem p;
    memset(&p, 0, sizeof p);
    ck_assert_int_eq(fem_assembly_parse("fast", &a), PX_EINVAL);
    ck_assert_int_eq(fem_assembly_parse("colored", &a), PX_OK);
    ck_assert_int_eq(a, FEM_ASSEMBLY_COLORED);
    ck_assert_int_eq(fem_assembler_init(&as, &p, (fem_assembly)42), PX_EINVAL);
    ck_assert_int_eq(fem_assembler_init(NULL, &p, FEM_ASSEMBLY_ATOMIC), PX_EFAULT);
    ck_assert_int_eq(fem_problem_create(host_space(), NULL, &p), PX_EFAULT);
    ck_assert_int_eq(fem_l2_error(&p, NULL, NULL), PX_EFAULT);
    cg_options o;
    cg_result r;
    memset(&o, 0, sizeof o);
    ck_assert_int_eq(cg_solve_rhs(NULL, NULL, NULL, &o, &r), PX_EFAULT);
}
END_TEST

static Suite *fem_suite(void)
{
    Suite *s = suite_create("fem");
    TCase *tc = tcase_create("mesh");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_mesh_is_the_same_for_a_seed_and_differs_across_seeds);
    tcase_add_test(tc, test_mesh_rejects_bad_sizes);
    tcase_add_test(tc, test_pattern_is_sorted_symmetric_and_holds_every_element_pair);
    tcase_add_test(tc, test_coloring_never_puts_two_elements_of_a_node_in_one_colour);
    suite_add_tcase(s, tc);

    tc = tcase_create("assembly");
    tcase_add_checked_fixture(tc, px_test_setup, px_test_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_every_mode_gives_the_colored_matrix_up_to_rounding, 0,
                        (int)(sizeof scatter_modes / sizeof scatter_modes[0]));
    tcase_add_test(tc, test_duplicated_is_bitwise_repeatable);
    tcase_add_test(tc, test_access_add_in_a_branch_equals_scatter_add_and_the_serial_sum);
    tcase_add_test(tc, test_colored_is_bitwise_the_same_on_serial_and_threads);
    tcase_add_test(tc, test_matrix_is_symmetric_with_zero_interior_row_sums_and_dirichlet_rows);
    tcase_add_test(tc, test_l2_error_converges_at_order_2);
    tcase_add_test(tc, test_bad_arguments_are_reported);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(fem_suite());
}
