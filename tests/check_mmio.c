/* tests/check_mmio.c - the Matrix Market reader of examples/cg (mmio.h): valid inputs of each
 * supported kind, every malformed case (message names file and line, status, no crash), and
 * the SuiteSparse matrices in PX_CG_MATRICES when that folder exists. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmio.h"
#include "px_test.h"

static char tmpdir[256];
static char path[512];
static char err[1024];

static void make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/px_mmio_XXXXXX", base && *base ? base : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    DIR *d = opendir(tmpdir);
    if (!d)
        return;
    struct dirent *e;
    char p[600];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(tmpdir);
}

/* Write the @p n bytes at @p data to a fresh file in the temp dir; its name is in the global
 * path. */
static const char *write_mm_bytes(const char *name, const char *data, size_t n)
{
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    fclose(f);
    return path;
}

static const char *write_mm(const char *name, const char *text)
{
    return write_mm_bytes(name, text, strlen(text));
}

/* Read the @p n bytes at @p text and expect failure with @p status and a message
 * "FILE:LINE: ...needle...". */
static void expect_error_bytes(const char *text, size_t n, unsigned flags, int status, int line,
                               const char *needle)
{
    const char *p = write_mm_bytes("bad.mtx", text, n);
    mm_csr m;
    int rc = mm_read_csr(p, flags, &m, err, sizeof err);
    ck_assert_int_eq(rc, status);
    ck_assert_ptr_null(m.row_ptr);
    ck_assert_ptr_null(m.col);
    ck_assert_ptr_null(m.val);
    char prefix[600];
    if (line > 0)
        snprintf(prefix, sizeof prefix, "%s:%d: ", p, line);
    else
        snprintf(prefix, sizeof prefix, "%s: ", p);
    ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0, "message '%s' should start '%s'", err,
                  prefix);
    ck_assert_msg(strstr(err, needle) != NULL, "message '%s' should contain '%s'", err, needle);
}

static void expect_error(const char *text, unsigned flags, int status, int line, const char *needle)
{
    expect_error_bytes(text, strlen(text), flags, status, line, needle);
}

static void read_ok(const char *text, unsigned flags, mm_csr *m)
{
    const char *p = write_mm("ok.mtx", text);
    int rc = mm_read_csr(p, flags, m, err, sizeof err);
    ck_assert_msg(rc == MM_OK, "unexpected failure: %s", err);
}

#define HDR_GEN "%%MatrixMarket matrix coordinate real general\n"
#define HDR_SYM "%%MatrixMarket matrix coordinate real symmetric\n"

/* ---- valid inputs ---- */

START_TEST(test_general_real_gives_sorted_csr)
{
    mm_csr m;
    read_ok(HDR_GEN "3 4 5\n3 4 5.5\n1 3 2\n1 1 1\n3 1 -4\n2 2 3e2\n", 0, &m);
    ck_assert_int_eq(m.n_rows, 3);
    ck_assert_int_eq(m.n_cols, 4);
    ck_assert_int_eq(m.nnz, 5);
    const int64_t rp[] = {0, 2, 3, 5};
    const int32_t col[] = {0, 2, 1, 0, 3};
    const double val[] = {1, 2, 300, -4, 5.5};
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(m.row_ptr[i], rp[i]);
    for (int k = 0; k < 5; k++) {
        ck_assert_int_eq(m.col[k], col[k]);
        ck_assert_double_eq(m.val[k], val[k]);
    }
    ck_assert_int_eq(m.symmetric, 0);
    mm_csr_free(&m);
    ck_assert_ptr_null(m.row_ptr);
    mm_csr_free(&m); /* twice is fine */
}
END_TEST

START_TEST(test_symmetric_lower_triangle_is_expanded)
{
    mm_csr m;
    read_ok(HDR_SYM "3 3 4\n1 1 4\n2 1 -1\n3 2 -2\n3 3 5\n", MM_REQUIRE_SQUARE, &m);
    ck_assert_int_eq(m.nnz, 6);
    ck_assert_int_eq(m.n_file, 4);
    ck_assert_int_eq(m.symmetric, 1);
    const int64_t rp[] = {0, 2, 4, 6};
    const int32_t col[] = {0, 1, 0, 2, 1, 2};
    const double val[] = {4, -1, -1, -2, -2, 5};
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(m.row_ptr[i], rp[i]);
    for (int k = 0; k < 6; k++) {
        ck_assert_int_eq(m.col[k], col[k]);
        ck_assert_double_eq(m.val[k], val[k]);
    }
    mm_csr_free(&m);
}
END_TEST

START_TEST(test_symmetric_upper_entry_is_mirrored)
{
    mm_csr m;
    read_ok(HDR_SYM "2 2 1\n1 2 7\n", 0, &m);
    ck_assert_int_eq(m.nnz, 2);
    ck_assert_int_eq(m.col[0], 1);
    ck_assert_int_eq(m.col[1], 0);
    ck_assert_double_eq(m.val[0], 7);
    ck_assert_double_eq(m.val[1], 7);
    mm_csr_free(&m);
}
END_TEST

START_TEST(test_pattern_entries_are_one)
{
    mm_csr m;
    read_ok("%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n", 0, &m);
    ck_assert_int_eq(m.pattern, 1);
    ck_assert_int_eq(m.nnz, 3);
    for (int k = 0; k < 3; k++)
        ck_assert_double_eq(m.val[k], 1.0);
    mm_csr_free(&m);
}
END_TEST

START_TEST(test_integer_field_is_read)
{
    mm_csr m;
    read_ok("%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 -12\n", 0, &m);
    ck_assert_double_eq(m.val[0], -12.0);
    mm_csr_free(&m);
}
END_TEST

START_TEST(test_duplicates_are_summed_and_counted)
{
    mm_csr m;
    read_ok(HDR_GEN "2 2 4\n1 1 1\n2 2 1\n1 1 2.5\n1 1 0.5\n", 0, &m);
    ck_assert_int_eq(m.nnz, 2);
    ck_assert_int_eq(m.n_duplicates, 2);
    ck_assert_double_eq(m.val[0], 4.0);
    mm_csr_free(&m);
}
END_TEST

START_TEST(test_comments_blank_lines_crlf_and_case_are_accepted)
{
    mm_csr m;
    read_ok("%%MatrixMarket MATRIX Coordinate REAL General\r\n% a comment\r\n\r\n  \r\n"
            "2 2 2\r\n% between entries\r\n1 1 1.0\r\n\r\n  2   2\t2.0  \r\n",
            0, &m);
    ck_assert_int_eq(m.nnz, 2);
    ck_assert_double_eq(m.val[1], 2.0);
    mm_csr_free(&m);
}
END_TEST

/* More entries than the reader's first allocation (1 Mi), all duplicates of 4 positions. */
START_TEST(test_many_entries_grow_the_arrays)
{
    const char *p = write_mm("big.mtx", HDR_GEN "2 2 1100000\n");
    FILE *f = fopen(p, "a");
    ck_assert_ptr_nonnull(f);
    for (int k = 0; k < 1100000; k++)
        fprintf(f, "%d %d 0.5\n", k % 2 + 1, (k / 2) % 2 + 1);
    fclose(f);
    mm_csr m;
    ck_assert_msg(mm_read_csr(p, 0, &m, err, sizeof err) == MM_OK, "%s", err);
    ck_assert_int_eq(m.nnz, 4);
    ck_assert_int_eq(m.n_duplicates, 1100000 - 4);
    for (int k = 0; k < 4; k++)
        ck_assert_double_eq(m.val[k], 0.5 * 1100000 / 4);
    mm_csr_free(&m);
}
END_TEST

START_TEST(test_zero_entries_is_an_empty_matrix)
{
    mm_csr m;
    read_ok(HDR_GEN "3 3 0\n", 0, &m);
    ck_assert_int_eq(m.nnz, 0);
    ck_assert_int_eq(m.row_ptr[3], 0);
    mm_csr_free(&m);
}
END_TEST

START_TEST(test_nonsquare_is_accepted_without_the_flag)
{
    mm_csr m;
    read_ok(HDR_GEN "2 3 1\n2 3 1\n", 0, &m);
    ck_assert_int_eq(m.n_cols, 3);
    mm_csr_free(&m);
}
END_TEST

/* ---- malformed inputs ---- */

START_TEST(test_missing_file_is_eio_naming_the_file)
{
    mm_csr m;
    snprintf(path, sizeof path, "%s/does-not-exist.mtx", tmpdir);
    ck_assert_int_eq(mm_read_csr(path, 0, &m, err, sizeof err), MM_EIO);
    ck_assert_ptr_nonnull(strstr(err, path));
    ck_assert_ptr_nonnull(strstr(err, "cannot open"));
}
END_TEST

START_TEST(test_invalid_arguments_are_einval)
{
    mm_csr m;
    ck_assert_int_eq(mm_read_csr(NULL, 0, &m, err, sizeof err), MM_EINVAL);
    ck_assert_int_eq(mm_read_csr("x.mtx", 0, NULL, err, sizeof err), MM_EINVAL);
    ck_assert_int_eq(mm_read_csr("x.mtx", 0x10, &m, err, sizeof err), MM_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "flags 0x10"));
    /* A NULL or tiny message buffer is fine. */
    ck_assert_int_eq(mm_read_csr(write_mm("e.mtx", ""), 0, &m, NULL, 0), MM_EINVAL);
    char small[8];
    ck_assert_int_eq(mm_read_csr(write_mm("e.mtx", ""), 0, &m, small, sizeof small), MM_EINVAL);
    ck_assert_uint_lt(strlen(small), sizeof small);
}
END_TEST

START_TEST(test_empty_file_is_einval)
{
    expect_error("", 0, MM_EINVAL, 0, "empty file");
}
END_TEST

START_TEST(test_bad_banner_is_einval_on_line_1)
{
    expect_error("%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n", 0, MM_EINVAL, 1,
                 "bad header");
    expect_error("1 1 1\n1 1 1\n", 0, MM_EINVAL, 1, "bad header");
    expect_error("%%MatrixMarket matrix coordinate real\n1 1 0\n", 0, MM_EINVAL, 1, "bad header");
    expect_error("%%MatrixMarket matrix coordinate real general extra\n1 1 0\n", 0, MM_EINVAL, 1,
                 "'extra'");
    expect_error("%%MatrixMarketmatrix coordinate real general\n1 1 0\n", 0, MM_EINVAL, 1,
                 "bad header");
    expect_error("%%MatrixMarket vector coordinate real general\n1 1 0\n", 0, MM_EINVAL, 1,
                 "object 'vector'");
}
END_TEST

START_TEST(test_unsupported_kinds_are_einval)
{
    expect_error("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 0, MM_EINVAL, 1,
                 "format 'array'");
    expect_error("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 0, MM_EINVAL,
                 1, "field 'complex'");
    expect_error("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 1\n", 0,
                 MM_EINVAL, 1, "symmetry 'skew-symmetric'");
    expect_error("%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n", 0, MM_EINVAL, 1,
                 "symmetry 'hermitian'");
}
END_TEST

START_TEST(test_bad_size_line_is_einval_naming_its_line)
{
    expect_error(HDR_GEN "% c\n3 3\n", 0, MM_EINVAL, 3, "bad size line");
    expect_error(HDR_GEN "3 x 3\n", 0, MM_EINVAL, 2, "bad size line");
    expect_error(HDR_GEN "3 3 1 4\n1 1 1\n", 0, MM_EINVAL, 2, "unexpected text '4'");
    expect_error(HDR_GEN "0 3 0\n", 0, MM_EINVAL, 2, "dimensions");
    expect_error(HDR_GEN "3 -3 0\n", 0, MM_EINVAL, 2, "dimensions");
    expect_error(HDR_GEN "3000000000 1 0\n", 0, MM_EINVAL, 2, "dimensions");
    expect_error(HDR_GEN "2 2 -1\n", 0, MM_EINVAL, 2, "entry count");
    expect_error(HDR_GEN "2 2 99999999999999999999\n", 0, MM_EINVAL, 2, "bad size line");
    expect_error(HDR_GEN "% only comments\n", 0, MM_EINVAL, 2, "before the size line");
}
END_TEST

START_TEST(test_nonsquare_is_einval)
{
    expect_error(HDR_SYM "2 3 1\n1 1 1\n", 0, MM_EINVAL, 2, "must be square");
    expect_error(HDR_GEN "2 3 1\n1 1 1\n", MM_REQUIRE_SQUARE, MM_EINVAL, 2,
                 "square matrix is required");
}
END_TEST

/* MM_REQUIRE_SYMMETRIC refuses a general file that is not symmetric, naming the first entry
 * without its mirror (a missing mirror, a different value, a lower entry alone), and accepts a
 * general file of a symmetric matrix and a stored zero without a mirror. */
START_TEST(test_nonsymmetric_general_is_einval_with_the_flag)
{
    const unsigned f = MM_REQUIRE_SQUARE | MM_REQUIRE_SYMMETRIC;
    expect_error(HDR_GEN "2 2 3\n1 1 2\n2 2 2\n1 2 1\n", f, MM_EINVAL, 0,
                 "not symmetric: A(1, 2) = 1 but A(2, 1) = 0");
    expect_error(HDR_GEN "2 2 4\n1 1 2\n2 2 2\n1 2 1\n2 1 1.5\n", f, MM_EINVAL, 0,
                 "not symmetric: A(1, 2) = 1 but A(2, 1) = 1.5");
    expect_error(HDR_GEN "3 3 3\n1 1 2\n2 2 2\n3 1 -1\n", f, MM_EINVAL, 0,
                 "not symmetric: A(3, 1) = -1 but A(1, 3) = 0");
    expect_error(HDR_GEN "2 3 1\n1 1 1\n", MM_REQUIRE_SYMMETRIC, MM_EINVAL, 0,
                 "not symmetric: 2 x 3 is not square");
    mm_csr m;
    read_ok(HDR_GEN "2 2 4\n1 1 2\n2 2 2\n1 2 -1\n2 1 -1\n", f, &m);
    ck_assert_int_eq(m.nnz, 4);
    mm_csr_free(&m);
    read_ok(HDR_GEN "2 2 3\n1 1 2\n2 2 2\n1 2 0\n", f, &m);
    mm_csr_free(&m);
    read_ok(HDR_SYM "2 2 3\n1 1 2\n2 2 2\n2 1 -1\n", f, &m);
    ck_assert_int_eq(m.nnz, 4);
    mm_csr_free(&m);
}
END_TEST

START_TEST(test_index_out_of_range_is_einval_naming_the_line)
{
    expect_error(HDR_GEN "2 2 2\n1 1 1\n3 1 1\n", 0, MM_EINVAL, 4, "row index 3 out of range");
    expect_error(HDR_GEN "2 2 2\n0 1 1\n", 0, MM_EINVAL, 3, "row index 0 out of range");
    expect_error(HDR_GEN "2 2 1\n% x\n1 -2 1\n", 0, MM_EINVAL, 4, "column index -2 out of range");
    expect_error(HDR_SYM "2 2 1\n1 3 1\n", 0, MM_EINVAL, 3, "column index 3");
}
END_TEST

START_TEST(test_too_few_entries_is_einval)
{
    expect_error(HDR_GEN "2 2 3\n1 1 1\n2 2 1\n", 0, MM_EINVAL, 4,
                 "too few entries: file ends after 2 of the 3");
    expect_error(HDR_GEN "2 2 1\n", 0, MM_EINVAL, 2, "too few entries");
    /* A count far beyond the file (and beyond rows * cols) allocates nothing big. */
    expect_error(HDR_GEN "2 2 4000000000000000000\n1 1 1\n", 0, MM_EINVAL, 3,
                 "after 1 of the 4000000000000000000");
}
END_TEST

START_TEST(test_too_many_entries_is_einval)
{
    expect_error(HDR_GEN "2 2 1\n1 1 1\n2 2 1\n", 0, MM_EINVAL, 4, "too many entries");
}
END_TEST

START_TEST(test_nan_and_inf_values_are_einval)
{
    expect_error(HDR_GEN "2 2 2\n1 1 1\n2 2 nan\n", 0, MM_EINVAL, 4, "NaN or Inf");
    expect_error(HDR_GEN "2 2 1\n1 1 -inf\n", 0, MM_EINVAL, 3, "NaN or Inf");
    expect_error(HDR_GEN "2 2 1\n1 1 1e999\n", 0, MM_EINVAL, 3, "NaN or Inf");
}
END_TEST

START_TEST(test_bad_or_missing_value_is_einval)
{
    expect_error(HDR_GEN "2 2 1\n1 1\n", 0, MM_EINVAL, 3, "missing or unparsable value");
    expect_error(HDR_GEN "2 2 1\n1 1 1.0x\n", 0, MM_EINVAL, 3, "missing or unparsable value");
    expect_error(HDR_GEN "2 2 1\n1\n", 0, MM_EINVAL, 3, "bad entry");
    expect_error(HDR_GEN "2 2 1\n1.5 1 1\n", 0, MM_EINVAL, 3, "bad entry");
    expect_error("%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 2.5\n", 0, MM_EINVAL,
                 3, "non-integer value");
}
END_TEST

START_TEST(test_trailing_text_after_entry_is_einval)
{
    expect_error(HDR_GEN "2 2 1\n1 1 1 2\n", 0, MM_EINVAL, 3, "unexpected text '2'");
    expect_error("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n", 0, MM_EINVAL,
                 3, "unexpected text");
}
END_TEST

START_TEST(test_overlong_line_is_einval)
{
    char text[MM_MAX_LINE + 200];
    strcpy(text, HDR_GEN "1 1 1\n1 1 ");
    size_t len = strlen(text);
    memset(text + len, '1', MM_MAX_LINE + 50);
    text[len + MM_MAX_LINE + 50] = '\n';
    text[len + MM_MAX_LINE + 51] = '\0';
    expect_error(text, 0, MM_EINVAL, 3, "line longer than");
}
END_TEST

/* A NUL byte is reported as such, on its own line and column, wherever the line is: in the
 * banner, the size line, an entry or a comment (fgets would see a short line without its
 * newline, taken for an overlong one). */
START_TEST(test_nul_byte_is_einval_naming_line_and_column)
{
    static const char entry[] = HDR_GEN "2 2 1\n1 1\0 1.0\n";
    expect_error_bytes(entry, sizeof entry - 1, 0, MM_EINVAL, 3, "NUL byte at column 4");
    static const char banner[] = "%%MatrixMarket\0 matrix coordinate real general\n1 1 0\n";
    expect_error_bytes(banner, sizeof banner - 1, 0, MM_EINVAL, 1, "NUL byte at column 15");
    static const char comment[] = HDR_GEN "% a\0comment\n1 1 0\n";
    expect_error_bytes(comment, sizeof comment - 1, 0, MM_EINVAL, 2, "NUL byte at column 4");
    static const char last[] = HDR_GEN "1 1 1\n1 1 1.0\0"; /* last line, no newline */
    expect_error_bytes(last, sizeof last - 1, 0, MM_EINVAL, 3, "NUL byte at column 8");
    ck_assert_ptr_null(strstr(err, "longer"));
}
END_TEST

/* ---- the SuiteSparse matrices beside the clone ---- */

typedef struct {
    const char *file;
    int64_t n, nnz_stored, nnz_full;
} known_matrix;

/* From the table in ../shared/data/matrices/README.md. */
static const known_matrix known[] = {
    {"bcsstk01.mtx", 48, 224, 400},       {"bcsstk05.mtx", 153, 1288, 2423},
    {"bcsstk09.mtx", 1083, 9760, 18437},  {"1138_bus.mtx", 1138, 2596, 4054},
    {"bcsstk13.mtx", 2003, 42943, 83883}, {"bcsstk16.mtx", 4884, 147631, 290378},
};

/* Entry (r, c) of @m into @v: 1 when it is stored, else 0. */
static int find(const mm_csr *m, int64_t r, int32_t c, double *v)
{
    int64_t k = mm_csr_find(m, r, c);
    if (k < 0)
        return 0;
    *v = m->val[k];
    return 1;
}

START_TEST(test_suitesparse_matrices_read_as_full_symmetric_csr)
{
    const char *dir = getenv("PX_CG_MATRICES");
    DIR *d = dir && *dir ? opendir(dir) : NULL;
    if (!d) {
        fprintf(stderr, "check_mmio: SKIP SuiteSparse matrices: folder '%s' not found\n",
                dir ? dir : "(PX_CG_MATRICES unset)");
        return;
    }
    closedir(d);
    const known_matrix *k = &known[_i];
    snprintf(path, sizeof path, "%s/%s", dir, k->file);
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "check_mmio: SKIP %s: not present\n", path);
        return;
    }
    mm_csr m;
    int rc = mm_read_csr(path, MM_REQUIRE_SQUARE, &m, err, sizeof err);
    ck_assert_msg(rc == MM_OK, "%s", err);
    ck_assert_int_eq(m.n_rows, k->n);
    ck_assert_int_eq(m.n_cols, k->n);
    ck_assert_int_eq(m.n_file, k->nnz_stored);
    ck_assert_int_eq(m.nnz, k->nnz_full);
    ck_assert_int_eq(m.n_duplicates, 0);
    ck_assert_int_eq(m.symmetric, 1);
    for (int64_t r = 0; r < m.n_rows; r++) {
        double diag;
        ck_assert_msg(find(&m, r, (int32_t)r, &diag) && diag > 0, "%s: diagonal %lld", k->file,
                      (long long)r);
        for (int64_t q = m.row_ptr[r]; q < m.row_ptr[r + 1]; q++) {
            if (q > m.row_ptr[r])
                ck_assert_int_lt(m.col[q - 1], m.col[q]);
            double t;
            ck_assert(find(&m, m.col[q], (int32_t)r, &t));
            ck_assert_double_eq(t, m.val[q]);
        }
    }
    mm_csr_free(&m);
}
END_TEST

static Suite *mmio_suite(void)
{
    Suite *s = suite_create("mmio");
    TCase *tc = tcase_create("valid");
    tcase_add_checked_fixture(tc, make_tmpdir, remove_tmpdir);
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_general_real_gives_sorted_csr);
    tcase_add_test(tc, test_symmetric_lower_triangle_is_expanded);
    tcase_add_test(tc, test_symmetric_upper_entry_is_mirrored);
    tcase_add_test(tc, test_pattern_entries_are_one);
    tcase_add_test(tc, test_integer_field_is_read);
    tcase_add_test(tc, test_duplicates_are_summed_and_counted);
    tcase_add_test(tc, test_comments_blank_lines_crlf_and_case_are_accepted);
    tcase_add_test(tc, test_zero_entries_is_an_empty_matrix);
    tcase_add_test(tc, test_many_entries_grow_the_arrays);
    tcase_add_test(tc, test_nonsquare_is_accepted_without_the_flag);
    suite_add_tcase(s, tc);

    tc = tcase_create("malformed");
    tcase_add_checked_fixture(tc, make_tmpdir, remove_tmpdir);
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_missing_file_is_eio_naming_the_file);
    tcase_add_test(tc, test_invalid_arguments_are_einval);
    tcase_add_test(tc, test_empty_file_is_einval);
    tcase_add_test(tc, test_bad_banner_is_einval_on_line_1);
    tcase_add_test(tc, test_unsupported_kinds_are_einval);
    tcase_add_test(tc, test_bad_size_line_is_einval_naming_its_line);
    tcase_add_test(tc, test_nonsquare_is_einval);
    tcase_add_test(tc, test_nonsymmetric_general_is_einval_with_the_flag);
    tcase_add_test(tc, test_index_out_of_range_is_einval_naming_the_line);
    tcase_add_test(tc, test_too_few_entries_is_einval);
    tcase_add_test(tc, test_too_many_entries_is_einval);
    tcase_add_test(tc, test_nan_and_inf_values_are_einval);
    tcase_add_test(tc, test_bad_or_missing_value_is_einval);
    tcase_add_test(tc, test_trailing_text_after_entry_is_einval);
    tcase_add_test(tc, test_overlong_line_is_einval);
    tcase_add_test(tc, test_nul_byte_is_einval_naming_line_and_column);
    suite_add_tcase(s, tc);

    tc = tcase_create("suitesparse");
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, test_suitesparse_matrices_read_as_full_symmetric_csr, 0,
                        (int)(sizeof known / sizeof known[0]));
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(mmio_suite());
}
