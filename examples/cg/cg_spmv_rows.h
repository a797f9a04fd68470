/*
 * examples/cg/cg_spmv_rows.h - the host SpMV row loop shared by parex-cg (cg.c's cg_spmv_dot,
 * and so dcg.c's interior and boundary SpMV) and the bulk-synchronous baseline
 * bench/bench_cg_bsp.c, so that the two programs' comparison measures the runtime (overlap,
 * launches, messages) and not two different loops.
 *
 * Rows [b, e) of a CSR matrix, four at a time. One row's sum is a chain of dependent
 * additions, so a row-at-a-time loop runs at the adder's latency (about 2 cycles a nonzero on
 * the EPYC VMs) and, being a 6-instruction loop, at the mercy of where the linker puts it: the
 * same machine code ran 0.405 or 0.517 ms per HPCG 32^3 iteration depending on whether the
 * inner loop crossed a 64-byte fetch window. Four rows interleaved give four independent chains
 * in one loop of 24 instructions, load-bound instead of latency-bound (two rows ran as fast,
 * eight ran out of registers and 30 % slower).
 *
 * Bitwise the same as one row at a time: each row is still summed from 0.0 in index order (the
 * common length m interleaved, then each row's own tail), and p.Ap is folded row by row in row
 * order onto @acc. No reassociation, so iteration counts and answers do not change.
 *
 * Header-only (static inline): C11 in the baseline, C11 or C++ (nvcc compiles cg.c as CUDA)
 * in parex-cg; it runs on the host only (the device half of cg_spmv_dot is one row per device
 * thread).
 */
#ifndef CG_SPMV_ROWS_H
#define CG_SPMV_ROWS_H

#include <stdint.h>

#ifdef __cplusplus
#define CG_SPMV_RESTRICT __restrict__
#else
#define CG_SPMV_RESTRICT restrict
#endif

/* Rows a group of cg_spmv_rows: the loop takes rows b, b+1, ... four at a time, so which rows
 * share a group depends on b. A caller that cuts [b, e) into pieces cuts at b plus multiples
 * of CG_SPMV_GROUP, and the pieces then form the very groups one call would, at the same
 * places in the cache lines. Groups shifted by 1 or 2 rows ran the same HPCG rows up to 7-10 %
 * slower in some runs on these VMs (most where the vectors start 16 bytes past a 64-byte line,
 * as malloc's large blocks do; in other runs 0-2 %); in the distributed CG, one 16-round run
 * had pieces of 4,096 rows cut at any row cost an iteration 5.7 %, pieces of whole groups 2.9 %
 * (bench/RESULTS.md, session 16; bench/bench_cg_pieces --offset). Why a group's place costs
 * time was not found (this VM shows perf no hardware counters). */
#define CG_SPMV_GROUP 4

/* s += the products of entries [k, e) of one row, in index order. */
#define CG_ROW_TAIL(s, k, e)                                                                       \
    for (; (k) < (e); ++(k))                                                                       \
    (s) += val[k] * p[col[k]]

/* Rows i .. i+3: ap[i + j] = s[j] = (A p)_{i+j}, each row summed from 0.0 in index order
 * (the rows' common length interleaved, then each row's own tail).
 * [in] rp: n+1 row offsets; col, val: entries; p: the vector (ghosts included).
 * [out] ap: rows i .. i+3 written; s: their four sums. */
static inline void cg_spmv_rows4(int64_t i, const int64_t *CG_SPMV_RESTRICT rp,
                                 const int32_t *CG_SPMV_RESTRICT col,
                                 const double *CG_SPMV_RESTRICT val,
                                 const double *CG_SPMV_RESTRICT p, double *CG_SPMV_RESTRICT ap,
                                 double s[4])
{
    int64_t k0 = rp[i], k1 = rp[i + 1], k2 = rp[i + 2], k3 = rp[i + 3];
    const int64_t e0 = k1, e1 = k2, e2 = k3, e3 = rp[i + 4];
    int64_t m = e0 - k0;
    m = e1 - k1 < m ? e1 - k1 : m;
    m = e2 - k2 < m ? e2 - k2 : m;
    m = e3 - k3 < m ? e3 - k3 : m;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    for (int64_t t = 0; t < m; ++t) {
        s0 += val[k0 + t] * p[col[k0 + t]];
        s1 += val[k1 + t] * p[col[k1 + t]];
        s2 += val[k2 + t] * p[col[k2 + t]];
        s3 += val[k3 + t] * p[col[k3 + t]];
    }
    k0 += m;
    k1 += m;
    k2 += m;
    k3 += m;
    CG_ROW_TAIL(s0, k0, e0);
    CG_ROW_TAIL(s1, k1, e1);
    CG_ROW_TAIL(s2, k2, e2);
    CG_ROW_TAIL(s3, k3, e3);
    ap[i] = s[0] = s0;
    ap[i + 1] = s[1] = s1;
    ap[i + 2] = s[2] = s2;
    ap[i + 3] = s[3] = s3;
}

/* Row i alone: ap[i] = (A p)_i, returned; arguments as cg_spmv_rows4's. */
static inline double cg_spmv_row1(int64_t i, const int64_t *CG_SPMV_RESTRICT rp,
                                  const int32_t *CG_SPMV_RESTRICT col,
                                  const double *CG_SPMV_RESTRICT val,
                                  const double *CG_SPMV_RESTRICT p, double *CG_SPMV_RESTRICT ap)
{
    double s = 0.0;
    int64_t k = rp[i];
    CG_ROW_TAIL(s, k, rp[i + 1]);
    ap[i] = s;
    return s;
}

/* ap[i] = (A p)_i for i in [b, e); returns @acc + sum of p[i] * ap[i] in row order.
 * [in] rp: n+1 row offsets; col, val: entries; p: the vector (ghosts included).
 * [out] ap: rows [b, e) written. The compensated fold of the same rows is cg_dd.c's
 * cg_spmv_dot_dd host entry (same row loop, p[i] * ap[i] folded as a double-double). */
static inline double cg_spmv_rows(int64_t b, int64_t e, const int64_t *CG_SPMV_RESTRICT rp,
                                  const int32_t *CG_SPMV_RESTRICT col,
                                  const double *CG_SPMV_RESTRICT val,
                                  const double *CG_SPMV_RESTRICT p, double *CG_SPMV_RESTRICT ap,
                                  double acc)
{
    int64_t i = b;
    for (; i + CG_SPMV_GROUP <= e; i += CG_SPMV_GROUP) {
        double s[CG_SPMV_GROUP];
        cg_spmv_rows4(i, rp, col, val, p, ap, s);
        acc += p[i] * s[0];
        acc += p[i + 1] * s[1];
        acc += p[i + 2] * s[2];
        acc += p[i + 3] * s[3];
    }
    for (; i < e; ++i)
        acc += p[i] * cg_spmv_row1(i, rp, col, val, p, ap);
    return acc;
}

#endif /* CG_SPMV_ROWS_H */
