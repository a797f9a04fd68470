/*
 * examples/cg/mmio.h - a strict Matrix Market reader producing sorted CSR.
 *
 * Reads the "coordinate" format of the NIST Matrix Market exchange format
 * (https://math.nist.gov/MatrixMarket/formats.html):
 *
 *     %%MatrixMarket matrix coordinate <field> <symmetry>
 *     % any number of comment lines
 *     M N NZ
 *     i j [value]        (NZ lines, 1-based indices)
 *
 * Supported: field real, integer or pattern (pattern entries get the value 1.0); symmetry
 * general or symmetric. Symmetric files are expanded to the full matrix: every stored entry
 * (i, j) with i != j also produces (j, i). The collection stores the lower triangle, but an
 * upper-triangle entry is accepted and mirrored the same way, as most readers do. Rejected
 * with a message: array format, complex and hermitian fields, skew-symmetric, anything else.
 *
 * Duplicates: entries that land on the same (row, column) after expansion are summed, the
 * finite-element assembly convention that SuiteSparse and scipy also follow. The number of
 * merged entries is reported in mm_csr.n_duplicates so a caller can refuse them if it wants.
 * (A symmetric file that lists both (i, j) and (j, i) therefore counts each twice.)
 *
 * Result: CSR with int64_t row offsets (nnz may exceed 2^31) and int32_t column indices (the
 * gather in SpMV reads them nnz times; 4 bytes instead of 8 is a third less index traffic).
 * Columns are sorted ascending within each row, without duplicates. Dimensions above
 * INT32_MAX are rejected.
 *
 * Errors: every malformed input gives a message "FILE:LINE: what is wrong" in the caller's
 * buffer and a status, never a crash: a bad banner, unsupported kinds, a bad size line, an
 * index out of range, a missing or unparsable value, NaN or Inf, trailing text on a line, too
 * few or too many entries, a non-square matrix when MM_REQUIRE_SQUARE is given, a matrix that
 * is not symmetric when MM_REQUIRE_SYMMETRIC is given ("FILE: ..."), a line longer
 * than MM_MAX_LINE bytes, a NUL byte (its column is named). Only stdio is used (getc_unlocked
 * + strtoll/strtod per line).
 */
#ifndef PAREX_EXAMPLES_CG_MMIO_H
#define PAREX_EXAMPLES_CG_MMIO_H

#include <stddef.h>
#include <stdint.h>

/** Longest accepted line, in bytes (the format allows 1024 characters per line). */
#define MM_MAX_LINE 1024

/** Flag for mm_read_csr: reject matrices with rows != columns (CG needs a square matrix). */
#define MM_REQUIRE_SQUARE 1u

/** Flag for mm_read_csr: reject a matrix that is not symmetric, A(i,j) != A(j,i) for some
 * stored entry, values compared exactly (CG and Cholesky need a symmetric matrix; a "general"
 * file of one lists both triangles with the same values). Checked after the file is read
 * (symmetric files are symmetric by construction): O(nnz log(row length)). The message names
 * the first entry without its mirror. */
#define MM_REQUIRE_SYMMETRIC 2u

/** Status codes (the values match parex's PX_OK / PX_EINVAL / PX_ENOMEM / PX_EIO). */
#define MM_OK     0   /**< Success. */
#define MM_EINVAL -1  /**< Malformed or unsupported content; the message names file and line. */
#define MM_ENOMEM -2  /**< Out of memory. */
#define MM_EIO    -10 /**< The file cannot be opened or read. */

/** A sparse matrix in compressed sparse row form, allocated with malloc. */
typedef struct mm_csr {
    int64_t n_rows;       /**< Rows (M of the size line). */
    int64_t n_cols;       /**< Columns (N of the size line). */
    int64_t nnz;          /**< Stored entries after symmetric expansion and merging. */
    int64_t *row_ptr;     /**< n_rows + 1 offsets into col/val; row_ptr[0] == 0. */
    int32_t *col;         /**< nnz 0-based column indices, ascending within a row. */
    double *val;          /**< nnz values. */
    int64_t n_file;       /**< Entries listed in the file (NZ of the size line). */
    int64_t n_duplicates; /**< Entries summed into an earlier one (see file comment). */
    int symmetric;        /**< 1 if the file said "symmetric". */
    int pattern;          /**< 1 if the file said "pattern". */
} mm_csr;

/**
 * Read a Matrix Market coordinate file into @p out.
 *
 * @param path       file to read.
 * @param flags      0, or MM_REQUIRE_SQUARE and/or MM_REQUIRE_SYMMETRIC.
 * @param out        receives the matrix (zeroed first; free with mm_csr_free). On failure it
 *                   holds nothing that needs freeing.
 * @param err        buffer for a one-line message "FILE:LINE: ..." on failure (may be NULL).
 * @param err_bytes  size of @p err.
 * @return MM_OK; MM_EINVAL for malformed or unsupported content, or a matrix the flags
 *         refuse (or NULL path/out, unknown flags); MM_EIO when the file cannot be opened or a read
 * fails; MM_ENOMEM when memory runs out. Thread-safe (no global state).
 */
int mm_read_csr(const char *path, unsigned flags, mm_csr *out, char *err, size_t err_bytes);

/**
 * Where entry (@p row, @p col) of @p m is stored: its index into m->col and m->val, or -1 when
 * the entry is not stored (binary search: columns are ascending within a row).
 * @param row  0-based, in [0, n_rows); @param col  0-based column.
 * Thread-safe (reads @p m only).
 */
int64_t mm_csr_find(const mm_csr *m, int64_t row, int32_t col);

/** Free the arrays of @p m and zero it. NULL and an already freed matrix are fine. */
void mm_csr_free(mm_csr *m);

#endif
