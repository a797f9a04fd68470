/*
 * examples/cg/cg_kernels.h - the CG kernels of cg.c and their argument structs, shared with the
 * distributed solver (dcg.c), which launches them on row ranges of its local matrix: every
 * kernel's index is a row (or vector element), so a range [b, e) runs on those rows only.
 */
#ifndef PAREX_EXAMPLES_CG_CG_KERNELS_H
#define PAREX_EXAMPLES_CG_CG_KERNELS_H

#include <stdint.h>

#include "parex.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    double rz, rr;
} cg_pair;

typedef struct {
    const int64_t *row_ptr;
    const int32_t *col;
    const double *val;
    double *y; /* b, or the diagonal's inverse */
} rowop_args;

typedef struct {
    const double *b;
    const double *dinv; /* NULL: no preconditioner */
    double *x, *r, *p;
    /* zeroed, so that its pages are first touched here, before the iteration loop, by the rank
     * whose rows they are (the same static policy as the SpMV that writes it), and not by the
     * first SpMV: a page fault took about 15 us on the test VM, 8 of them a quarter of the
     * first iteration at 16^3 a rank (bench/RESULTS.md, session 28) */
    double *ap;
} init_args;

typedef struct {
    const double *u, *v;
} dot_args;

typedef struct {
    const int64_t *row_ptr;
    const int32_t *col;
    const double *val;
    const double *p;
    double *ap;
} spmv_args;

typedef struct {
    double alpha;
    const double *ap;
    const double *dinv;
    double *r;
} update_r_args;

typedef struct {
    double alpha, beta;
    const double *r;
    const double *dinv; /* NULL: no preconditioner */
    double *x, *p;
} update_xp_args;

typedef struct {
    const double *b, *ax, *x;
} check_args;

/** Joins cg_pair sums (host spaces only: a custom reducer). */
extern const px_reducer cg_pair_sum;

/* The kernels (defined in cg.c; comments there). Args in brackets. */
extern const px_kernel cg_row_sum;          /* [rowop_args]  y = A * ones */
extern const px_kernel cg_diag_inv;         /* [rowop_args]  y = 1 / diag, min diag (double) */
extern const px_kernel cg_init;             /* [init_args]   x=0 r=b p=M^-1 b ap=0, r.p */
extern const px_kernel cg_dot;              /* [dot_args]    u.v */
extern const px_kernel cg_spmv_dot;         /* [spmv_args]   ap = A p, p.ap */
extern const px_kernel cg_spmv_dot_row;     /* [spmv_args]   the same (device, reference) */
extern const px_kernel cg_update_r;         /* [update_r_args] r -= alpha ap, r.r */
extern const px_kernel cg_update_r_pair;    /* [update_r_args] ... r.M^-1 r and r.r (cg_pair) */
extern const px_kernel cg_update_r_rz;      /* [update_r_args] ... r.M^-1 r */
extern const px_kernel cg_update_xp;        /* [update_xp_args] x += alpha p, p = r + beta p */
extern const px_kernel cg_update_xp_jacobi; /* [update_xp_args] ... p = M^-1 r + beta p */
extern const px_kernel cg_axpy;             /* [update_xp_args] x += alpha p */
extern const px_kernel cg_resid2;           /* [check_args]  |b - ax|^2 */
extern const px_kernel cg_max_err;          /* [check_args]  max |x - 1| */

#ifdef __cplusplus
}
#endif

/*
 * CG_REDUCE_WITH_HOST(name, Args, Value, value_type, host, row): define reduce kernel @p name
 * whose host entry is @p host (a px_kernel host reduce entry that takes [b, e) in blocks:
 * cg_spmv_rows.h's rows four at a time, dcg's compensated lanes) and whose per-index body and,
 * under nvcc, device half are those of PX_REDUCE kernel @p row. A hand-made px_kernel with the
 * fields as PX_REDUCE fills them (parex/kernel.h); Args and Value as PX_REDUCE's, value_type
 * the px_value_type PX_REDUCE would pick (PX_VALUE_CUSTOM for a struct). In C++ the device
 * half is copied from @p row at static initialization; in C there is none.
 */
#ifdef __cplusplus
#define CG_EXTERN_C extern "C"
#else
#define CG_EXTERN_C
#endif
#ifdef __CUDACC__
#define CG_ROW_DEVICE(row) ((row).device)
#else
#define CG_ROW_DEVICE(row) NULL
#endif
#define CG_REDUCE_WITH_HOST(name, Args, Value, value_type, host, row)                              \
    CG_EXTERN_C const px_kernel name = {PX_KERNEL_MAGIC,                                           \
                                        PX_KERNEL_REDUCE,                                          \
                                        #name,                                                     \
                                        sizeof(Args),                                              \
                                        sizeof(Value),                                             \
                                        NULL,                                                      \
                                        host,                                                      \
                                        NULL,                                                      \
                                        CG_ROW_DEVICE(row),                                        \
                                        value_type,                                                \
                                        0,                                                         \
                                        {NULL, NULL},                                              \
                                        {NULL, NULL}}

#endif
