/*
 * tests/check_cholesky.c - the tiled Cholesky example (examples/cholesky): numerics on every
 * engine kind, ragged tiles, non-SPD failure propagation, Matrix Market input, flag parsing.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp */

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chol_cli.h"
#include "px_test.h"

#ifndef PXCHOL_MATRIX_DIR
#define PXCHOL_MATRIX_DIR ""
#endif

static const px_engine_kind all_kinds[] = {PX_ENGINE_NAIVE, PX_ENGINE_POOLED, PX_ENGINE_PER_DEVICE};

/* Generate A (n, tile), factorize a copy on engine e with ops of property prop; returns the
 * status, leaves A and L. */
static int factor_generated_prop(px_engine *e, px_fn_property prop, int64_t n, int64_t tile,
                                 chol_matrix *a, chol_matrix *l)
{
    ck_assert_int_eq(chol_matrix_init(a, n, tile), PX_OK);
    ck_assert_int_eq(chol_matrix_init(l, n, tile), PX_OK);
    l->prop = prop;
    ck_assert_int_eq(chol_generate(a, 7), PX_OK);
    chol_matrix_copy(l, a);
    ck_assert_int_eq(chol_matrix_attach(l, e), PX_OK);
    return chol_factor(l);
}

static int factor_generated(px_engine *e, int64_t n, int64_t tile, chol_matrix *a, chol_matrix *l)
{
    return factor_generated_prop(e, PX_FN_NORMAL, n, tile, a, l);
}

static double rel_residual(const chol_matrix *a, const chol_matrix *l)
{
    return chol_residual_exact(a, l) / chol_norm_fro(a);
}

static void check_factor_prop(px_engine *e, px_fn_property prop, int64_t n, int64_t tile)
{
    chol_matrix a, l;
    int rc = factor_generated_prop(e, prop, n, tile, &a, &l);
    ck_assert_msg(rc == PX_OK, "n=%lld tile=%lld: %s", (long long)n, (long long)tile,
                  px_strerror(rc));
    double res = rel_residual(&a, &l);
    ck_assert_msg(res < 1e-12, "n=%lld tile=%lld residual %g", (long long)n, (long long)tile, res);
    chol_matrix_fini(&l);
    chol_matrix_fini(&a);
}

static void check_factor(px_engine *e, int64_t n, int64_t tile)
{
    check_factor_prop(e, PX_FN_NORMAL, n, tile);
}

static void setup(void)
{
    px_test_setup();
    chol_blas_single_thread();
}

START_TEST(test_factor_n256_tile64_residual_below_1e12_on_default_engine)
{
    check_factor(px_engine_default(), 256, 64);
}
END_TEST

START_TEST(test_factor_residual_below_1e12_on_every_created_engine_kind)
{
    for (size_t k = 0; k < sizeof all_kinds / sizeof all_kinds[0]; k++) {
        for (int workers = 1; workers <= 3; workers++) {
            for (int fifo = 0; fifo <= 1; fifo++) {
                px_fn_property prop;
                px_engine *e = chol_engine_create(all_kinds[k], workers, fifo, &prop);
                ck_assert_ptr_nonnull(e);
                ck_assert_int_eq(prop, all_kinds[k] == PX_ENGINE_PER_DEVICE && !fifo
                                           ? PX_FN_CPU_PRIORITIZED
                                           : PX_FN_NORMAL);
                check_factor_prop(e, prop, 256, 64);
                ck_assert_int_eq(px_engine_destroy(e), PX_OK);
            }
        }
    }
}
END_TEST

START_TEST(test_factor_ragged_tiles_residual_below_1e12)
{
    px_engine *e = px_engine_default();
    check_factor(e, 300, 64);  /* last tile 44 */
    check_factor(e, 50, 7);    /* 8 tiles, last 1 */
    check_factor(e, 65, 64);   /* last tile 1 */
    check_factor(e, 100, 256); /* tile larger than n: one tile */
    check_factor(e, 1, 1);
}
END_TEST

START_TEST(test_factor_bitwise_equal_across_engine_kinds)
{
    /* Each tile's updates are serialized by its Var in push order, so every engine and
     * worker count computes exactly the same floating-point operations. */
    chol_matrix a, ref;
    px_engine *naive = px_engine_create(PX_ENGINE_NAIVE, 1);
    ck_assert_int_eq(factor_generated(naive, 320, 48, &a, &ref), PX_OK);
    size_t bytes = (ref.offset[chol_tid(ref.nt - 1, ref.nt - 1)] +
                    (size_t)chol_tsize(&ref, ref.nt - 1) * (size_t)chol_tsize(&ref, ref.nt - 1)) *
                   sizeof(double);
    for (int v = 0; v < 4; v++) { /* pooled, per_device priority queue and FIFO, naive */
        px_fn_property prop;
        px_engine_kind kind = v == 0  ? PX_ENGINE_POOLED
                              : v < 3 ? PX_ENGINE_PER_DEVICE
                                      : PX_ENGINE_NAIVE;
        px_engine *e = chol_engine_create(kind, 2, v == 2, &prop);
        chol_matrix a2, l2;
        ck_assert_int_eq(factor_generated_prop(e, prop, 320, 48, &a2, &l2), PX_OK);
        ck_assert_msg(memcmp(ref.data, l2.data, bytes) == 0, "variant %d differs", v);
        chol_matrix_fini(&l2);
        chol_matrix_fini(&a2);
        ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    }
    chol_matrix_fini(&ref);
    chol_matrix_fini(&a);
    ck_assert_int_eq(px_engine_destroy(naive), PX_OK);
}
END_TEST

START_TEST(test_generated_matrix_does_not_depend_on_tile_size)
{
    chol_matrix x, y;
    ck_assert_int_eq(chol_matrix_init(&x, 130, 64), PX_OK);
    ck_assert_int_eq(chol_matrix_init(&y, 130, 17), PX_OK);
    ck_assert_int_eq(chol_matrix_attach(&y, px_engine_default()), PX_OK);
    ck_assert_int_eq(chol_generate(&x, 3), PX_OK); /* serial path: no Vars */
    ck_assert_int_eq(chol_generate(&y, 3), PX_OK); /* engine path: one op per tile */
    for (int64_t r = 0; r < 130; r++)
        for (int64_t c = 0; c <= r; c++)
            ck_assert(*chol_at(&x, r, c) == *chol_at(&y, r, c));
    ck_assert(*chol_at(&x, 5, 5) > 129.0); /* n on the diagonal */
    chol_matrix_fini(&x);
    chol_matrix_fini(&y);
}
END_TEST

START_TEST(test_not_spd_fails_with_enotspd_naming_the_pivot)
{
    for (size_t k = 0; k < sizeof all_kinds / sizeof all_kinds[0]; k++) {
        px_fn_property prop;
        px_engine *e = chol_engine_create(all_kinds[k], 2, 0, &prop);
        chol_matrix l;
        ck_assert_int_eq(chol_matrix_init(&l, 256, 64), PX_OK);
        l.prop = prop;
        ck_assert_int_eq(chol_generate(&l, 1), PX_OK);
        *chol_at(&l, 130, 130) = -1.0; /* leading minor of order 131 is negative */
        ck_assert_int_eq(chol_matrix_attach(&l, e), PX_OK);
        ck_assert_int_eq(chol_factor(&l), CHOL_ENOTSPD);
        ck_assert_int_eq(atomic_load(&l.notspd_order), 131);
        /* The failure was cleared by the wait: the engine factorizes the next matrix. */
        check_factor_prop(e, prop, 128, 32);
        chol_matrix_fini(&l);
        ck_assert_int_eq(px_engine_destroy(e), PX_OK);
    }
}
END_TEST

START_TEST(test_residual_estimate_tracks_exact_residual)
{
    chol_matrix a, l;
    ck_assert_int_eq(factor_generated(px_engine_default(), 200, 48, &a, &l), PX_OK);
    *chol_at(&l, 150, 60) += 1e-3;
    *chol_at(&l, 199, 198) -= 2e-3;
    double exact = chol_residual_exact(&a, &l);
    double est = chol_residual_estimate(&a, &l, 16, 11);
    ck_assert_msg(exact > 1e-4 && est > 0.5 * exact && est < 2.0 * exact, "exact %g est %g", exact,
                  est);
    chol_matrix_fini(&l);
    chol_matrix_fini(&a);
}
END_TEST

START_TEST(test_priorities_follow_the_critical_path)
{
    int64_t nt = 8;
    for (int64_t k = 0; k + 2 < nt; k++) {
        ck_assert_int_gt(chol_priority(nt, k, 3), chol_priority(nt, k, 2));     /* POTRF>TRSM */
        ck_assert_int_gt(chol_priority(nt, k, 2), chol_priority(nt, k + 1, 1)); /* >SYRK next */
        ck_assert_int_gt(chol_priority(nt, k + 1, 1), chol_priority(nt, k + 1, 0));
        /* the next panel's updates outrank every later column */
        ck_assert_int_gt(chol_priority(nt, k + 1, 0), chol_priority(nt, k + 2, 3));
    }
    ck_assert_int_eq(chol_priority(nt, nt - 1, 0), 0);
    ck_assert_int_eq(chol_task_count(1), 1);
    ck_assert_int_eq(chol_task_count(4), 4 + 6 + 6 + 4);
}
END_TEST

/* Lower triangular test tile (n x n, leading dimension ld): diag(c) on the diagonal, small
 * values below it, and 1234.5 above it and in the pad rows, which no kernel may read. */
static void fill_lower(double *l, int n, int ld, double (*diag)(int))
{
    for (int c = 0; c < n; c++)
        for (int r = 0; r < ld; r++)
            l[(size_t)c * ld + r] = r < c || r >= n ? 1234.5
                                    : r == c        ? diag(c)
                                                    : 0.5 * sin(r + 3.0 * c) / n;
}

static double diag_well(int c)
{
    return 2.0 + 0.01 * c;
}

/* Right-hand side B (mb x nb, leading dimension ldb): smooth values in rows < mb, 1234.5 in
 * the pad rows past mb, which belong to the caller and must come back untouched. */
static void fill_rhs(double *b, int mb, int nb, int ldb)
{
    for (int c = 0; c < nb; c++)
        for (int r = 0; r < ldb; r++)
            b[(size_t)c * ldb + r] = r < mb ? cos(0.7 * r - 1.3 * c) : 1234.5;
}

/* B (from fill_rhs, then solved) agrees with ref to 1e-13 relative in rows < mb, and its pad
 * rows were not written. */
static void check_solved(const double *b, const double *ref, int mb, int nb, int ldb)
{
    double err = 0.0, scale = 0.0;
    for (int c = 0; c < nb; c++)
        for (int r = 0; r < ldb; r++) {
            double x = b[(size_t)c * ldb + r], y = ref[(size_t)c * ldb + r];
            if (r >= mb) {
                ck_assert_msg(x == 1234.5, "%dx%d: pad row %d column %d written", mb, nb, r, c);
                continue;
            }
            err = fmax(err, fabs(x - y));
            scale = fmax(scale, fabs(y));
        }
    ck_assert_msg(err <= 1e-13 * fmax(scale, 1.0), "%dx%d: max diff %g (scale %g)", mb, nb, err,
                  scale);
}

START_TEST(test_recursive_trsm_matches_blas_dtrsm)
{
    /* Widths on both sides of the 32-column leaf and of every halving, tall and flat B,
     * leading dimensions larger than the block. */
    static const int shapes[][2] = {{1, 1},  {7, 1},    {1, 33},    {5, 31},   {64, 32},  {64, 33},
                                    {3, 65}, {100, 97}, {256, 256}, {17, 200}, {300, 129}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int mb = shapes[s][0], nb = shapes[s][1], ldl = nb + 3, ldb = mb + 5;
        double *l = malloc((size_t)ldl * (size_t)nb * sizeof *l);
        double *b = malloc((size_t)ldb * (size_t)nb * sizeof *b);
        double *ref = malloc((size_t)ldb * (size_t)nb * sizeof *ref);
        ck_assert(l && b && ref);
        fill_lower(l, nb, ldl, diag_well); /* well conditioned: dominant positive diagonal */
        fill_rhs(b, mb, nb, ldb);
        memcpy(ref, b, (size_t)ldb * (size_t)nb * sizeof *b);
        cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, mb, nb, 1.0, l,
                    ldl, ref, ldb);
        chol_trsm_rlt(mb, nb, l, ldl, b, ldb);
        check_solved(b, ref, mb, nb, ldb);
        free(l);
        free(b);
        free(ref);
    }
}
END_TEST

START_TEST(test_inverse_lower_times_l_is_identity)
{
    /* Orders around the 32 leaf and odd halvings, leading dimensions past the order. */
    static const int orders[] = {1, 5, 31, 32, 33, 64, 100, 129, 256};
    for (size_t s = 0; s < sizeof orders / sizeof orders[0]; s++) {
        int n = orders[s], ldl = n + 3, ldx = n + 2;
        double *l = malloc((size_t)ldl * (size_t)n * sizeof *l);
        double *x = malloc((size_t)ldx * (size_t)n * sizeof *x);
        ck_assert(l && x);
        fill_lower(l, n, ldl, diag_well);
        for (size_t e = 0; e < (size_t)ldx * (size_t)n; e++)
            x[e] = -777.0;
        double kappa = chol_inverse_lower(n, l, ldl, x, ldx);
        double err = 0.0, nl = 0.0, nx = 0.0;
        for (int c = 0; c < n; c++) {
            double cl = 0.0, cx = 0.0;
            for (int r = 0; r < ldx; r++) {
                if (r < c || r >= n) { /* only the lower triangle of X is written */
                    ck_assert_msg(x[(size_t)c * ldx + r] == -777.0, "n=%d: (%d,%d) written", n, r,
                                  c);
                    continue;
                }
                /* (L X)(r, c) = sum over c <= q <= r of L(r, q) X(q, c) */
                double sum = 0.0;
                for (int q = c; q <= r; q++)
                    sum += l[(size_t)q * ldl + r] * x[(size_t)c * ldx + q];
                err = fmax(err, fabs(sum - (r == c ? 1.0 : 0.0)));
                cl += fabs(l[(size_t)c * ldl + r]);
                cx += fabs(x[(size_t)c * ldx + r]);
            }
            nl = fmax(nl, cl);
            nx = fmax(nx, cx);
        }
        ck_assert_msg(err < 1e-14, "n=%d: max |L X - I| = %g", n, err);
        ck_assert_msg(fabs(kappa - nl * nx) <= 1e-12 * nl * nx, "n=%d: kappa %g, ||L|| ||X|| %g", n,
                      kappa, nl * nx);
        ck_assert(kappa >= 1.0 && kappa < CHOL_INV_COND_MAX);
        free(l);
        free(x);
    }
}
END_TEST

START_TEST(test_inverse_lower_of_singular_l_is_infinite)
{
    enum { N = 40 };
    double l[N * N], x[N * N];
    fill_lower(l, N, N, diag_well);
    l[(size_t)37 * N + 37] = 0.0; /* in the second half of the first split (20 + 20) */
    ck_assert(isinf(chol_inverse_lower(N, l, N, x, N)));
    l[(size_t)37 * N + 37] = 1e-310; /* subnormal: its reciprocal overflows to inf */
    ck_assert(isinf(chol_inverse_lower(N, l, N, x, N)));
    l[(size_t)37 * N + 37] = 2.0;
    l[(size_t)3 * N + 20] = NAN; /* a NaN below the diagonal poisons the norms */
    ck_assert(isinf(chol_inverse_lower(N, l, N, x, N)));
    l[(size_t)3 * N + 20] = 0.0;
    double kappa = chol_inverse_lower(N, l, N, x, N); /* and the same tile, repaired, is fine */
    ck_assert(isfinite(kappa) && kappa < CHOL_INV_COND_MAX);
}
END_TEST

START_TEST(test_trsm_tile_with_inverse_matches_substitution)
{
    static const int shapes[][2] = {{1, 1}, {7, 33}, {64, 32}, {100, 97}, {256, 256}, {300, 129}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int mb = shapes[s][0], nb = shapes[s][1], ldl = nb + 1, ldb = mb + 4;
        double *l = malloc((size_t)ldl * (size_t)nb * sizeof *l);
        double *inv = malloc((size_t)nb * (size_t)nb * sizeof *inv);
        double *b = malloc((size_t)ldb * (size_t)nb * sizeof *b);
        double *ref = malloc((size_t)ldb * (size_t)nb * sizeof *ref);
        ck_assert(l && inv && b && ref);
        fill_lower(l, nb, ldl, diag_well);
        fill_rhs(b, mb, nb, ldb);
        memcpy(ref, b, (size_t)ldb * (size_t)nb * sizeof *b);
        ck_assert(chol_inverse_lower(nb, l, ldl, inv, nb) <= CHOL_INV_COND_MAX);
        chol_trsm_tile(mb, nb, l, ldl, NULL, 0, ref, ldb); /* substitution */
        chol_trsm_tile(mb, nb, l, ldl, inv, nb, b, ldb);   /* multiplication by the inverse */
        check_solved(b, ref, mb, nb, ldb);
        free(l);
        free(inv);
        free(b);
        free(ref);
    }
}
END_TEST

START_TEST(test_potrf_tile_uses_inverse_only_when_well_conditioned)
{
    enum { N = 64 };
    double a[N * N], inv[N * N];
    int use = -1;
    /* diag(4 .. 4 + 0.63): L well conditioned */
    for (int c = 0; c < N; c++)
        for (int r = 0; r < N; r++)
            a[c * N + r] = r == c ? 4.0 + 0.01 * c : 0.0;
    ck_assert_int_eq(chol_potrf_tile(N, a, N, inv, N, &use), 0);
    ck_assert_int_eq(use, 1);
    ck_assert_double_eq_tol(inv[0], 0.5, 1e-15);
    /* No buffer: substitution, no inverse. */
    use = -1;
    for (int c = 0; c < N; c++)
        a[c * N + c] = 4.0;
    ck_assert_int_eq(chol_potrf_tile(N, a, N, NULL, N, &use), 0);
    ck_assert_int_eq(use, 0);
    /* diag(1 .. 1e8): kappa_1(L) = 1e4 > CHOL_INV_COND_MAX, so substitution. */
    for (int c = 0; c < N; c++)
        a[c * N + c] = pow(10.0, 8.0 * c / (N - 1));
    use = -1;
    ck_assert_int_eq(chol_potrf_tile(N, a, N, inv, N, &use), 0);
    ck_assert_int_eq(use, 0);
    /* Not SPD: LAPACK's info names the minor, no inverse. */
    for (int c = 0; c < N; c++)
        a[c * N + c] = c == 10 ? -1.0 : 1.0;
    use = -1;
    ck_assert_int_eq(chol_potrf_tile(N, a, N, inv, N, &use), 11);
    ck_assert_int_eq(use, 0);
}
END_TEST

/* A = S G S with G the generated matrix (seed 7) and S = diag(1 .. 1e4) over the first tile
 * when @p scaled, else A = G: kappa_1(L_00) of the scaled matrix is near 1e4, above
 * CHOL_INV_COND_MAX, while the other diagonal tiles (S = 1 there) stay well conditioned. */
static void fill_scaled(chol_matrix *a, int scaled)
{
    ck_assert_int_eq(chol_generate(a, 7), PX_OK);
    if (!scaled)
        return;
    for (int64_t r = 0; r < a->n; r++)
        for (int64_t c = 0; c <= r; c++) {
            double sr = r < a->tile ? pow(10.0, 4.0 * (double)r / (double)(a->tile - 1)) : 1.0;
            double sc = c < a->tile ? pow(10.0, 4.0 * (double)c / (double)(a->tile - 1)) : 1.0;
            *chol_at(a, r, c) *= sr * sc;
            if (r / a->tile == c / a->tile) /* diagonal tiles are stored whole: keep symmetric */
                *chol_at(a, c, r) = *chol_at(a, r, c);
        }
}

/* Factor a copy of @p a into @p l (attached) and check the residual and column 0's flag. */
static void factor_and_check_flags(const chol_matrix *a, chol_matrix *l, int want_inv0)
{
    chol_matrix_copy(l, a);
    ck_assert_int_eq(chol_factor(l), PX_OK);
    ck_assert_int_eq(l->dinv_ok[0], want_inv0);
    for (int64_t k = 1; k + 1 < l->nt; k++)
        ck_assert_msg(l->dinv_ok[k] == 1, "column %lld did not use its inverse", (long long)k);
    double res = rel_residual(a, l);
    ck_assert_msg(res < 1e-12, "residual %g", res);
}

START_TEST(test_factor_ill_conditioned_tile_column_keeps_substitution)
{
    /* Column 0 solves by substitution, the others multiply by their inverse. */
    chol_matrix a, l;
    ck_assert_int_eq(chol_matrix_init(&a, 256, 64), PX_OK);
    ck_assert_int_eq(chol_matrix_init(&l, 256, 64), PX_OK);
    ck_assert_int_eq(chol_matrix_attach(&l, px_engine_default()), PX_OK);
    fill_scaled(&a, 1);
    factor_and_check_flags(&a, &l, 0);
    chol_matrix_fini(&l);
    chol_matrix_fini(&a);
}
END_TEST

START_TEST(test_refactoring_resets_the_inverse_flags)
{
    /* One matrix struct factored three times: well conditioned, then ill-conditioned column 0
     * (its flag must drop back to 0), then well conditioned again. */
    chol_matrix good, bad, l;
    ck_assert_int_eq(chol_matrix_init(&good, 256, 64), PX_OK);
    ck_assert_int_eq(chol_matrix_init(&bad, 256, 64), PX_OK);
    ck_assert_int_eq(chol_matrix_init(&l, 256, 64), PX_OK);
    ck_assert_int_eq(chol_matrix_attach(&l, px_engine_default()), PX_OK);
    fill_scaled(&good, 0);
    fill_scaled(&bad, 1);
    factor_and_check_flags(&good, &l, 1);
    factor_and_check_flags(&bad, &l, 0);
    factor_and_check_flags(&good, &l, 1);
    chol_matrix_fini(&l);
    chol_matrix_fini(&bad);
    chol_matrix_fini(&good);
}
END_TEST

START_TEST(test_alloc_inverses_skips_the_last_column)
{
    chol_matrix one, four;
    ck_assert_int_eq(chol_matrix_init(&one, 100, 256), PX_OK); /* one tile: no TRSM at all */
    ck_assert_int_eq(chol_matrix_alloc_inverses(&one), PX_OK);
    ck_assert_ptr_null(one.dinv);
    ck_assert_ptr_nonnull(one.dinv_ok);
    ck_assert_int_eq(chol_matrix_alloc_inverses(&one), PX_OK); /* idempotent */
    ck_assert_int_eq(chol_matrix_init(&four, 200, 64), PX_OK); /* 4 tile columns, last 8 */
    ck_assert_int_eq(chol_matrix_alloc_inverses(&four), PX_OK);
    ck_assert_ptr_nonnull(four.dinv);
    double *first = four.dinv;
    ck_assert_int_eq(chol_matrix_alloc_inverses(&four), PX_OK);
    ck_assert_ptr_eq(four.dinv, first);
    for (int64_t k = 0; k < four.nt; k++)
        ck_assert_int_eq(four.dinv_ok[k], 0);
    chol_matrix_fini(&four);
    chol_matrix_fini(&one);
}
END_TEST

START_TEST(test_alloc_huge_rejects_zero_and_huge_sizes)
{
    ck_assert_ptr_null(chol_alloc_huge(0));
    ck_assert_ptr_null(chol_alloc_huge(SIZE_MAX));
    double *p = chol_alloc_huge(3 * sizeof *p);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq((uintptr_t)p % (2u << 20), 0);
    p[0] = p[2] = 1.0;
    free(p);
}
END_TEST

START_TEST(test_engine_create_rejects_bad_worker_counts)
{
    px_fn_property prop;
    ck_assert_ptr_null(chol_engine_create(PX_ENGINE_POOLED, 0, 0, &prop));
    ck_assert_ptr_null(chol_engine_create(PX_ENGINE_PER_DEVICE, -3, 0, &prop));
}
END_TEST

START_TEST(test_matrix_init_rejects_bad_sizes)
{
    chol_matrix m;
    ck_assert_int_eq(chol_matrix_init(&m, 0, 64), PX_EINVAL);
    ck_assert_int_eq(chol_matrix_init(&m, 64, 0), PX_EINVAL);
    ck_assert_int_eq(chol_matrix_init(&m, -5, 8), PX_EINVAL);
    chol_matrix_fini(&m); /* zeroed: harmless */
}
END_TEST

static int parse(const char *a1, const char *a2, chol_options *o)
{
    char *argv[] = {"parex-cholesky", (char *)a1, (char *)a2, NULL};
    int argc = a2 ? 3 : a1 ? 2 : 1;
    chol_options_default(o);
    FILE *sink = tmpfile();
    int rc = chol_parse_args(argc, argv, o, sink ? sink : stderr);
    if (sink)
        fclose(sink);
    return rc;
}

START_TEST(test_parse_args_accepts_both_value_forms)
{
    chol_options o;
    ck_assert_int_eq(parse("--n", "512", &o), PX_OK);
    ck_assert_int_eq(o.n, 512);
    ck_assert_int_eq(parse("--tile=96", NULL, &o), PX_OK);
    ck_assert_int_eq(o.tile, 96);
    ck_assert_int_eq(parse("--engine", "pooled", &o), PX_OK);
    ck_assert_str_eq(o.engine, "pooled");
    ck_assert_int_eq(parse("--workers=3", "--json", &o), PX_OK);
    ck_assert_int_eq(o.workers, 3);
    ck_assert_int_eq(o.json, 1);
    ck_assert_int_eq(parse("--fifo", NULL, &o), PX_OK);
    ck_assert_int_eq(o.fifo, 1);
    ck_assert_int_eq(parse("--residual", "estimate", &o), PX_OK);
    ck_assert_int_eq(o.residual, CHOL_RES_ESTIMATE);
    ck_assert_int_eq(parse("--check", "1e-12", &o), PX_OK);
    ck_assert(o.check == 1e-12);
}
END_TEST

START_TEST(test_parse_args_rejects_bad_flags_and_values)
{
    chol_options o;
    ck_assert_int_eq(parse("--bogus", NULL, &o), PX_EINVAL);
    ck_assert_int_eq(parse("stray", NULL, &o), PX_EINVAL);
    ck_assert_int_eq(parse("--n", NULL, &o), PX_EINVAL);
    ck_assert_int_eq(parse("--n", "0", &o), PX_EINVAL);
    ck_assert_int_eq(parse("--n=12x", NULL, &o), PX_EINVAL);
    ck_assert_int_eq(parse("--tile", "-4", &o), PX_EINVAL);
    ck_assert_int_eq(parse("--engine", "threaded", &o), PX_EINVAL);
    ck_assert_int_eq(parse("--workers", "0", &o), PX_EINVAL);
    ck_assert_int_eq(parse("--residual", "maybe", &o), PX_EINVAL);
    ck_assert_int_eq(parse("--check", "nan", &o), PX_EINVAL);
    ck_assert_int_eq(parse("--matrix=", NULL, &o), PX_EINVAL);
    ck_assert_int_eq(parse("--repeat", "0", &o), PX_EINVAL);
}
END_TEST

/* Write text to a fresh temporary file (unique: the ctest variants of this suite may run at
 * the same time in one folder); returns its path (static buffer). */
static const char *write_tmp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "chol_test_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* Run chol_run with err captured; returns its exit code and, in *text (malloc'd, the caller
 * frees), the stderr text, then stdout after it with o->json. */
static int run_captured(const chol_options *o, char **text)
{
    FILE *out = tmpfile(), *err = tmpfile();
    ck_assert_ptr_nonnull(out);
    ck_assert_ptr_nonnull(err);
    int code = chol_run(o, out, err);
    rewind(err);
    size_t got = 0;
    char *buf = px_test_read_stream(err, &got);
    ck_assert_ptr_nonnull(buf);
    if (o->json) { /* append stdout after stderr */
        rewind(out);
        size_t more = 0;
        char *json = px_test_read_stream(out, &more);
        ck_assert_ptr_nonnull(json);
        buf = realloc(buf, got + more + 1);
        ck_assert_ptr_nonnull(buf);
        memcpy(buf + got, json, more + 1);
        free(json);
    }
    fclose(out);
    fclose(err);
    *text = buf;
    return code;
}

START_TEST(test_run_not_spd_matrix_market_is_a_clear_error)
{
    const char *p = write_tmp("%%MatrixMarket matrix coordinate real symmetric\n"
                              "3 3 4\n1 1 4\n2 2 -1\n3 3 2\n2 1 0.5\n");
    chol_options o;
    chol_options_default(&o);
    o.matrix = p;
    o.tile = 2;
    char *buf;
    ck_assert_int_eq(run_captured(&o, &buf), CHOL_EXIT_FAIL);
    ck_assert_msg(strstr(buf, "not positive definite") && strstr(buf, "order 2"), "%s", buf);
    free(buf);
    remove(p);
}
END_TEST

START_TEST(test_run_rejects_non_symmetric_and_missing_files)
{
    chol_matrix m;
    FILE *sink = tmpfile();
    const char *p = write_tmp("%%MatrixMarket matrix coordinate real general\n"
                              "2 2 3\n1 1 1\n2 2 1\n2 1 0.5\n");
    ck_assert_int_eq(chol_load_matrix_market(p, 64, &m, sink), PX_EINVAL);
    remove(p);
    p = write_tmp("%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 1\n");
    ck_assert_int_eq(chol_load_matrix_market(p, 64, &m, sink), PX_EINVAL); /* not square */
    remove(p);
    ck_assert_int_eq(chol_load_matrix_market("/nonexistent/x.mtx", 64, &m, sink), PX_EIO);
    fclose(sink);
}
END_TEST

START_TEST(test_run_json_reports_required_fields)
{
    chol_options o;
    chol_options_default(&o);
    o.n = 200;
    o.tile = 64;
    o.json = 1;
    o.check = 1e-12;
    o.engine = "pooled";
    o.workers = 2;
    char *buf;
    ck_assert_int_eq(run_captured(&o, &buf), CHOL_EXIT_OK);
    const char *keys[] = {"\"n\": 200",     "\"tile\": 64",       "\"seconds\"",
                          "\"gflops\"",     "\"residual\"",       "\"engine\": \"pooled\"",
                          "\"workers\": 2", "\"queue\": \"fifo\""};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        ck_assert_msg(strstr(buf, keys[k]) != NULL, "missing %s in %s", keys[k], buf);
    free(buf);
}
END_TEST

START_TEST(test_matrix_market_bcsstk09_residual_below_1e12)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/bcsstk09.mtx", PXCHOL_MATRIX_DIR);
    FILE *probe = fopen(path, "r");
    if (!probe) {
        fprintf(stderr, "check_cholesky: %s not found, skipping\n", path);
        return;
    }
    fclose(probe);
    chol_matrix a, l;
    ck_assert_int_eq(chol_load_matrix_market(path, 128, &a, stderr), PX_OK);
    ck_assert_int_eq(a.n, 1083);
    ck_assert_int_eq(chol_matrix_init(&l, a.n, 128), PX_OK);
    chol_matrix_copy(&l, &a);
    ck_assert_int_eq(chol_matrix_attach(&l, px_engine_default()), PX_OK);
    ck_assert_int_eq(chol_factor(&l), PX_OK);
    double res = rel_residual(&a, &l);
    ck_assert_msg(res < 1e-12, "bcsstk09 residual %g", res);
    chol_matrix_fini(&l);
    chol_matrix_fini(&a);
}
END_TEST

static Suite *cholesky_suite(void)
{
    Suite *s = suite_create("cholesky");
    TCase *tc = tcase_create("cholesky");
    tcase_add_checked_fixture(tc, setup, px_test_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_factor_n256_tile64_residual_below_1e12_on_default_engine);
    tcase_add_test(tc, test_factor_residual_below_1e12_on_every_created_engine_kind);
    tcase_add_test(tc, test_factor_ragged_tiles_residual_below_1e12);
    tcase_add_test(tc, test_factor_bitwise_equal_across_engine_kinds);
    tcase_add_test(tc, test_generated_matrix_does_not_depend_on_tile_size);
    tcase_add_test(tc, test_not_spd_fails_with_enotspd_naming_the_pivot);
    tcase_add_test(tc, test_residual_estimate_tracks_exact_residual);
    tcase_add_test(tc, test_priorities_follow_the_critical_path);
    tcase_add_test(tc, test_recursive_trsm_matches_blas_dtrsm);
    tcase_add_test(tc, test_inverse_lower_times_l_is_identity);
    tcase_add_test(tc, test_inverse_lower_of_singular_l_is_infinite);
    tcase_add_test(tc, test_trsm_tile_with_inverse_matches_substitution);
    tcase_add_test(tc, test_potrf_tile_uses_inverse_only_when_well_conditioned);
    tcase_add_test(tc, test_factor_ill_conditioned_tile_column_keeps_substitution);
    tcase_add_test(tc, test_refactoring_resets_the_inverse_flags);
    tcase_add_test(tc, test_alloc_inverses_skips_the_last_column);
    tcase_add_test(tc, test_alloc_huge_rejects_zero_and_huge_sizes);
    tcase_add_test(tc, test_engine_create_rejects_bad_worker_counts);
    tcase_add_test(tc, test_matrix_init_rejects_bad_sizes);
    tcase_add_test(tc, test_parse_args_accepts_both_value_forms);
    tcase_add_test(tc, test_parse_args_rejects_bad_flags_and_values);
    tcase_add_test(tc, test_run_not_spd_matrix_market_is_a_clear_error);
    tcase_add_test(tc, test_run_rejects_non_symmetric_and_missing_files);
    tcase_add_test(tc, test_run_json_reports_required_fields);
    tcase_add_test(tc, test_matrix_market_bcsstk09_residual_below_1e12);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(cholesky_suite());
}
