/*
 * examples/cg/mmio.c - Matrix Market coordinate reader (see mmio.h for the accepted format).
 *
 * One pass over the file, a line at a time, parsing each line with strtoll/strtod into triplet
 * arrays, then a two-pass counting sort (by column, then stably by row) that yields CSR with
 * sorted columns in O(nnz) time and no comparison sort, then an in-place merge of duplicates.
 */
#include "mmio.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reader state, so that every message can name the file and the current line. */
typedef struct {
    FILE *f;
    const char *path;
    int64_t line; /* number of the line in buf, 1-based; 0 before the first */
    char buf[MM_MAX_LINE + 2];
    char *err;
    size_t err_bytes;
} reader;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int
fail(reader *rd, int status, const char *fmt, ...)
{
    if (rd->err && rd->err_bytes > 0) {
        int k;
        if (rd->line > 0)
            k = snprintf(rd->err, rd->err_bytes, "%s:%lld: ", rd->path, (long long)rd->line);
        else
            k = snprintf(rd->err, rd->err_bytes, "%s: ", rd->path);
        if (k >= 0 && (size_t)k < rd->err_bytes) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(rd->err + k, rd->err_bytes - (size_t)k, fmt, ap);
            va_end(ap);
        }
    }
    return status;
}

/*
 * Read the next line into rd->buf (without its newline, and without the '\r' of a CRLF
 * ending). Returns 1 for a line, 0 at end of file, or a negative status (message written)
 * for a read error, a line longer than MM_MAX_LINE, or a NUL byte, which no text format
 * holds. Byte by byte rather than fgets, which cannot tell a NUL byte from the end of the
 * string (a line holding one looked overlong). One thread reads the stream, hence
 * getc_unlocked.
 */
static int next_line(reader *rd)
{
    size_t len = 0;
    long nul_column = 0; /* 1-based column of the first NUL byte, 0 when none */
    int c;
    while ((c = getc_unlocked(rd->f)) != EOF && c != '\n') {
        if (len == MM_MAX_LINE) {
            rd->line++;
            return fail(rd, MM_EINVAL, "line longer than %d bytes", MM_MAX_LINE);
        }
        if (c == '\0' && nul_column == 0)
            nul_column = (long)len + 1;
        rd->buf[len++] = (char)c;
    }
    if (c == EOF) {
        if (ferror(rd->f))
            return fail(rd, MM_EIO, "read error after line %lld: %s", (long long)rd->line,
                        strerror(errno));
        if (len == 0)
            return 0;
    }
    rd->line++;
    if (nul_column)
        return fail(rd, MM_EINVAL, "NUL byte at column %ld (not a text file?)", nul_column);
    if (len > 0 && rd->buf[len - 1] == '\r') /* files written on Windows */
        --len;
    rd->buf[len] = '\0';
    return 1;
}

/* A line that carries no data: empty, only blanks, or a '%' comment. */
static int is_skippable(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return *s == '\0' || *s == '%';
}

static const char *skip_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Copy the next whitespace-delimited token of *s, lower-cased, into tok (size n); advance *s.
 * Returns the token length (0 when none; a longer token is truncated but still consumed). */
static size_t next_token(const char **s, char *tok, size_t n)
{
    const char *p = skip_blanks(*s);
    size_t k = 0;
    while (*p && *p != ' ' && *p != '\t') {
        if (k + 1 < n)
            tok[k++] = (char)tolower((unsigned char)*p);
        p++;
    }
    tok[k] = '\0';
    *s = p;
    return k;
}

/*
 * Parse a decimal integer that must be followed by a blank or the end of the line.
 * Returns 1 and sets *v, or 0 when there is no integer there (or it overflows int64).
 */
static int parse_i64(const char **s, int64_t *v)
{
    const char *p = skip_blanks(*s);
    if (*p == '\0')
        return 0;
    char *end;
    errno = 0;
    long long x = strtoll(p, &end, 10);
    if (end == p || errno == ERANGE || (*end != '\0' && *end != ' ' && *end != '\t'))
        return 0;
    *v = (int64_t)x;
    *s = end;
    return 1;
}

/* As parse_i64 for a double. Returns 1 (value set, maybe NaN or Inf), 0 when unparsable. */
static int parse_f64(const char **s, double *v)
{
    const char *p = skip_blanks(*s);
    if (*p == '\0')
        return 0;
    char *end;
    errno = 0;
    double x = strtod(p, &end);
    if (end == p || (*end != '\0' && *end != ' ' && *end != '\t'))
        return 0;
    /* ERANGE on overflow gives +-HUGE_VAL, which the finiteness check rejects; on underflow
     * the result is a tiny or zero value, which is a fine matrix entry. */
    *v = x;
    *s = end;
    return 1;
}

typedef enum { FIELD_REAL, FIELD_INTEGER, FIELD_PATTERN } field_kind;

static int read_banner(reader *rd, field_kind *field, int *symmetric)
{
    int rc = next_line(rd);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return fail(rd, MM_EINVAL, "empty file, expected a %%%%MatrixMarket banner");
    static const char magic[] = "%%MatrixMarket";
    if (strncmp(rd->buf, magic, sizeof magic - 1) != 0)
        return fail(rd, MM_EINVAL, "bad header: expected a line starting with %s", magic);
    const char *p = rd->buf + sizeof magic - 1;
    if (*p != ' ' && *p != '\t')
        return fail(rd, MM_EINVAL, "bad header: expected a blank after %s", magic);
    char obj[32], fmt[32], fld[32], sym[32], extra[32];
    next_token(&p, obj, sizeof obj);
    next_token(&p, fmt, sizeof fmt);
    next_token(&p, fld, sizeof fld);
    next_token(&p, sym, sizeof sym);
    if (sym[0] == '\0')
        return fail(rd, MM_EINVAL,
                    "bad header: expected 'matrix <format> <field> <symmetry>' after %s", magic);
    if (next_token(&p, extra, sizeof extra) != 0)
        return fail(rd, MM_EINVAL, "bad header: unexpected word '%s' after the symmetry", extra);
    if (strcmp(obj, "matrix") != 0)
        return fail(rd, MM_EINVAL, "bad header: object '%s' is not supported (only 'matrix')", obj);
    if (strcmp(fmt, "coordinate") != 0)
        return fail(rd, MM_EINVAL, "bad header: format '%s' is not supported (only 'coordinate')",
                    fmt);
    if (strcmp(fld, "real") == 0 || strcmp(fld, "double") == 0)
        *field = FIELD_REAL;
    else if (strcmp(fld, "integer") == 0)
        *field = FIELD_INTEGER;
    else if (strcmp(fld, "pattern") == 0)
        *field = FIELD_PATTERN;
    else
        return fail(rd, MM_EINVAL,
                    "bad header: field '%s' is not supported (real, integer or pattern)", fld);
    if (strcmp(sym, "general") == 0)
        *symmetric = 0;
    else if (strcmp(sym, "symmetric") == 0)
        *symmetric = 1;
    else
        return fail(rd, MM_EINVAL,
                    "bad header: symmetry '%s' is not supported (general or symmetric)", sym);
    return MM_OK;
}

static int read_size_line(reader *rd, int symmetric, unsigned flags, int64_t *m, int64_t *n,
                          int64_t *nz)
{
    int rc;
    do {
        rc = next_line(rd);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return fail(rd, MM_EINVAL, "file ends before the size line 'rows cols entries'");
    } while (is_skippable(rd->buf));
    const char *p = rd->buf;
    if (!parse_i64(&p, m) || !parse_i64(&p, n) || !parse_i64(&p, nz))
        return fail(rd, MM_EINVAL,
                    "bad size line '%s': expected three integers 'rows cols "
                    "entries'",
                    rd->buf);
    if (*skip_blanks(p) != '\0')
        return fail(rd, MM_EINVAL, "bad size line: unexpected text '%s' after the entry count",
                    skip_blanks(p));
    if (*m < 1 || *n < 1 || *m > INT32_MAX || *n > INT32_MAX)
        return fail(rd, MM_EINVAL, "bad size line: dimensions %lld x %lld must lie in 1..%d",
                    (long long)*m, (long long)*n, INT32_MAX);
    /* No upper bound from rows * cols: duplicates are legal (and summed). The triplet arrays
     * grow with the entries actually present, so a huge count costs nothing up front. */
    if (*nz < 0)
        return fail(rd, MM_EINVAL, "bad size line: entry count %lld is negative", (long long)*nz);
    if (symmetric && *m != *n)
        return fail(rd, MM_EINVAL,
                    "bad size line: a symmetric matrix must be square, got "
                    "%lld x %lld",
                    (long long)*m, (long long)*n);
    if ((flags & MM_REQUIRE_SQUARE) && *m != *n)
        return fail(rd, MM_EINVAL, "matrix is %lld x %lld, but a square matrix is required",
                    (long long)*m, (long long)*n);
    return MM_OK;
}

/*
 * Build sorted, merged CSR from triplets (0-based). Expansion of symmetric entries happens
 * here. Two stable counting sorts: by column into (tr, tv), then by row into out, so columns
 * come out ascending in every row.
 */
static int build_csr(reader *rd, int64_t m, int64_t n, int64_t nz, const int32_t *ti,
                     const int32_t *tj, const double *tx, int symmetric, mm_csr *out)
{
    int64_t ne = nz;
    if (symmetric)
        for (int64_t k = 0; k < nz; k++)
            ne += ti[k] != tj[k];
    int64_t *cptr = calloc((size_t)n + 1, sizeof *cptr);
    int32_t *tr = malloc((size_t)(ne > 0 ? ne : 1) * sizeof *tr);
    double *tv = malloc((size_t)(ne > 0 ? ne : 1) * sizeof *tv);
    out->row_ptr = calloc((size_t)m + 1, sizeof *out->row_ptr);
    out->col = malloc((size_t)(ne > 0 ? ne : 1) * sizeof *out->col);
    out->val = malloc((size_t)(ne > 0 ? ne : 1) * sizeof *out->val);
    int status = MM_OK;
    if (!cptr || !tr || !tv || !out->row_ptr || !out->col || !out->val) {
        status = fail(rd, MM_ENOMEM, "out of memory building CSR with %lld entries", (long long)ne);
        goto done;
    }
    /* Pass 1: bucket by column. */
    for (int64_t k = 0; k < nz; k++) {
        cptr[tj[k] + 1]++;
        if (symmetric && ti[k] != tj[k])
            cptr[ti[k] + 1]++;
    }
    for (int64_t c = 0; c < n; c++)
        cptr[c + 1] += cptr[c];
    for (int64_t k = 0; k < nz; k++) {
        int64_t q = cptr[tj[k]]++;
        tr[q] = ti[k];
        tv[q] = tx[k];
        if (symmetric && ti[k] != tj[k]) {
            q = cptr[ti[k]]++;
            tr[q] = tj[k];
            tv[q] = tx[k];
        }
    }
    /* Pass 2: bucket by row, visiting columns in ascending order. */
    int64_t *rp = out->row_ptr;
    for (int64_t q = 0; q < ne; q++)
        rp[tr[q] + 1]++;
    for (int64_t r = 0; r < m; r++)
        rp[r + 1] += rp[r];
    /* cptr[c] now holds the end of column c's entries in tr/tv (the start of column c + 1). */
    int64_t *next = malloc((size_t)m * sizeof *next);
    if (!next) {
        status = fail(rd, MM_ENOMEM, "out of memory building CSR");
        goto done;
    }
    for (int64_t r = 0; r < m; r++)
        next[r] = rp[r];
    int64_t q = 0;
    for (int64_t c = 0; c < n; c++) {
        for (; q < cptr[c]; q++) {
            int64_t pos = next[tr[q]]++;
            out->col[pos] = (int32_t)c;
            out->val[pos] = tv[q];
        }
    }
    free(next);
    /* Merge duplicates in place; columns are sorted, so duplicates are adjacent. */
    int64_t w = 0, dups = 0;
    for (int64_t r = 0; r < m; r++) {
        int64_t b = rp[r], e = rp[r + 1];
        int64_t row_start = w;
        for (int64_t k = b; k < e; k++) {
            if (w > row_start && out->col[w - 1] == out->col[k]) {
                out->val[w - 1] += out->val[k];
                dups++;
            } else {
                out->col[w] = out->col[k];
                out->val[w] = out->val[k];
                w++;
            }
        }
        rp[r] = row_start;
    }
    rp[m] = w;
    out->nnz = w;
    out->n_duplicates = dups;
done:
    free(cptr);
    free(tr);
    free(tv);
    return status;
}

/* Double the triplet arrays (at most to nz entries). */
static int grow(reader *rd, int64_t *cap, int64_t nz, int32_t **ti, int32_t **tj, double **tx)
{
    const int64_t ncap = *cap > nz / 2 ? nz : 2 * *cap;
    int32_t *a = realloc(*ti, (size_t)ncap * sizeof **ti);
    if (a)
        *ti = a;
    int32_t *b = realloc(*tj, (size_t)ncap * sizeof **tj);
    if (b)
        *tj = b;
    double *c = realloc(*tx, (size_t)ncap * sizeof **tx);
    if (c)
        *tx = c;
    if (!a || !b || !c)
        return fail(rd, MM_ENOMEM, "out of memory for %lld entries", (long long)ncap);
    *cap = ncap;
    return MM_OK;
}

int64_t mm_csr_find(const mm_csr *a, int64_t r, int32_t c)
{
    int64_t lo = a->row_ptr[r], hi = a->row_ptr[r + 1];
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (a->col[mid] < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < a->row_ptr[r + 1] && a->col[lo] == c ? lo : -1;
}

/* MM_REQUIRE_SYMMETRIC: every entry (i, j) has a mirror (j, i) of the same value, a stored
 * zero standing for a missing one. Each entry looks up its mirror in the mirror's row. The
 * message names the file, not a line (entries are merged and sorted by now). */
static int check_symmetric(reader *rd, const mm_csr *a)
{
    rd->line = 0;
    if (a->n_rows != a->n_cols)
        return fail(rd, MM_EINVAL, "not symmetric: %lld x %lld is not square", (long long)a->n_rows,
                    (long long)a->n_cols);
    for (int64_t i = 0; i < a->n_rows; ++i)
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) {
            int32_t j = a->col[k];
            if (j == i)
                continue;
            int64_t t = mm_csr_find(a, j, (int32_t)i);
            double mirror = t < 0 ? 0.0 : a->val[t];
            if (mirror != a->val[k])
                return fail(rd, MM_EINVAL,
                            "not symmetric: A(%lld, %lld) = %.17g but A(%lld, %lld) = %.17g "
                            "(a symmetric positive definite matrix is needed)",
                            (long long)i + 1, (long long)j + 1, a->val[k], (long long)j + 1,
                            (long long)i + 1, mirror);
        }
    return MM_OK;
}

static void zero_csr(mm_csr *m)
{
    memset(m, 0, sizeof *m);
}

void mm_csr_free(mm_csr *m)
{
    if (!m)
        return;
    free(m->row_ptr);
    free(m->col);
    free(m->val);
    zero_csr(m);
}

int mm_read_csr(const char *path, unsigned flags, mm_csr *out, char *err, size_t err_bytes)
{
    if (err && err_bytes > 0)
        err[0] = '\0';
    if (!out || !path || (flags & ~(MM_REQUIRE_SQUARE | MM_REQUIRE_SYMMETRIC)) != 0) {
        if (err && err_bytes > 0)
            snprintf(err, err_bytes,
                     "mm_read_csr: invalid argument (path %s, out %p, "
                     "flags 0x%x)",
                     path ? path : "NULL", (void *)out, flags);
        return MM_EINVAL;
    }
    zero_csr(out);
    reader *rd = malloc(sizeof *rd);
    if (!rd) {
        if (err && err_bytes > 0)
            snprintf(err, err_bytes, "%s: out of memory", path);
        return MM_ENOMEM;
    }
    rd->path = path;
    rd->line = 0;
    rd->err = err;
    rd->err_bytes = err_bytes;
    rd->f = fopen(path, "r");
    if (!rd->f) {
        int status = fail(rd, MM_EIO, "cannot open: %s", strerror(errno));
        free(rd);
        return status;
    }
    int32_t *ti = NULL, *tj = NULL;
    double *tx = NULL;
    field_kind field = FIELD_REAL;
    int symmetric = 0;
    int64_t m = 0, n = 0, nz = 0;
    int status = read_banner(rd, &field, &symmetric);
    if (status != MM_OK)
        goto done;
    status = read_size_line(rd, symmetric, flags, &m, &n, &nz);
    if (status != MM_OK)
        goto done;
    int64_t size_line = rd->line;
    /* Start at most at 1 Mi entries and grow by doubling, so that a size line promising far
     * more entries than the file holds ends in "too few entries", not a huge allocation. */
    int64_t cap = nz < ((int64_t)1 << 20) ? (nz > 0 ? nz : 1) : (int64_t)1 << 20;
    ti = malloc((size_t)cap * sizeof *ti);
    tj = malloc((size_t)cap * sizeof *tj);
    tx = malloc((size_t)cap * sizeof *tx);
    if (!ti || !tj || !tx) {
        status = fail(rd, MM_ENOMEM, "out of memory for %lld entries", (long long)cap);
        goto done;
    }
    int64_t k = 0;
    for (;;) {
        int rc = next_line(rd);
        if (rc < 0) {
            status = rc;
            goto done;
        }
        if (rc == 0)
            break;
        if (is_skippable(rd->buf))
            continue;
        if (k == nz) {
            status = fail(rd, MM_EINVAL,
                          "too many entries: the size line (line %lld) declares "
                          "%lld",
                          (long long)size_line, (long long)nz);
            goto done;
        }
        const char *p = rd->buf;
        int64_t i, j;
        if (!parse_i64(&p, &i) || !parse_i64(&p, &j)) {
            status = fail(rd, MM_EINVAL, "bad entry '%s': expected 'row col%s'", rd->buf,
                          field == FIELD_PATTERN ? "" : " value");
            goto done;
        }
        if (i < 1 || i > m) {
            status = fail(rd, MM_EINVAL, "row index %lld out of range 1..%lld", (long long)i,
                          (long long)m);
            goto done;
        }
        if (j < 1 || j > n) {
            status = fail(rd, MM_EINVAL, "column index %lld out of range 1..%lld", (long long)j,
                          (long long)n);
            goto done;
        }
        double v = 1.0;
        if (field == FIELD_REAL) {
            if (!parse_f64(&p, &v)) {
                status =
                    fail(rd, MM_EINVAL, "bad entry '%s': missing or unparsable value", rd->buf);
                goto done;
            }
            if (!isfinite(v)) {
                status = fail(rd, MM_EINVAL, "value is NaN or Inf");
                goto done;
            }
        } else if (field == FIELD_INTEGER) {
            int64_t iv;
            if (!parse_i64(&p, &iv)) {
                status = fail(rd, MM_EINVAL,
                              "bad entry '%s': missing or non-integer value "
                              "in an integer matrix",
                              rd->buf);
                goto done;
            }
            v = (double)iv;
        }
        if (*skip_blanks(p) != '\0') {
            status = fail(rd, MM_EINVAL, "unexpected text '%s' after the entry", skip_blanks(p));
            goto done;
        }
        if (k == cap) {
            status = grow(rd, &cap, nz, &ti, &tj, &tx);
            if (status != MM_OK)
                goto done;
        }
        ti[k] = (int32_t)(i - 1);
        tj[k] = (int32_t)(j - 1);
        tx[k] = v;
        k++;
    }
    if (k < nz) {
        status = fail(rd, MM_EINVAL,
                      "too few entries: file ends after %lld of the %lld "
                      "declared on line %lld",
                      (long long)k, (long long)nz, (long long)size_line);
        goto done;
    }
    out->n_rows = m;
    out->n_cols = n;
    out->n_file = nz;
    out->symmetric = symmetric;
    out->pattern = field == FIELD_PATTERN;
    status = build_csr(rd, m, n, nz, ti, tj, tx, symmetric, out);
    if (status == MM_OK && (flags & MM_REQUIRE_SYMMETRIC) && !symmetric)
        status = check_symmetric(rd, out);
done:
    free(ti);
    free(tj);
    free(tx);
    fclose(rd->f);
    free(rd);
    if (status != MM_OK)
        mm_csr_free(out);
    return status;
}
