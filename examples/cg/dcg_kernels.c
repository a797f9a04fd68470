/*
 * examples/cg/dcg_kernels.c - the distributed CG's own kernels and compensated sums
 * (dcg_kernels.h has why).
 *
 * Kept in the common subset of C11 and C++ (nvcc compiles it with the Cuda space, which adds
 * the device half of each kernel; the dd kernels are launched on host spaces only, where their
 * custom reducers run).
 */
#include "dcg_kernels.h"

#include "cg_spmv_rows.h" /* CG_SPMV_RESTRICT */

/* out[j] = v[idx[j]]: the boundary values each neighbour needs, in send-list order. */
PX_FOR(dcg_pack, pack_args, j, a)
{
    a->out[j] = a->v[a->idx[j]];
}

PX_REDUCE(dcg_update_r, dcg_r_args, double, i, a, acc)
{
    const double ri = a->r[i] - a->coef[0] * a->ap[i];
    a->r[i] = ri;
    *acc += ri * ri;
}

PX_REDUCE(dcg_update_r_rz, dcg_r_args, double, i, a, acc)
{
    const double ri = a->r[i] - a->coef[0] * a->ap[i];
    a->r[i] = ri;
    *acc += ri * ri * a->dinv[i];
}

PX_FOR(dcg_update_xp, dcg_xp_args, i, a)
{
    const double pi = a->p[i];
    a->x[i] += a->coef[0] * pi;
    a->p[i] = a->r[i] + a->coef[1] * pi;
}

PX_FOR(dcg_update_xp_jacobi, dcg_xp_args, i, a)
{
    const double pi = a->p[i];
    a->x[i] += a->coef[0] * pi;
    a->p[i] = a->dinv[i] * a->r[i] + a->coef[1] * pi;
}

/* ---- compensated sums on dcg's arguments (alpha read at run time) ---------------------- */

/* r -= alpha Ap with r.r compensated, one row: the device half of dcg_update_r_dd. */
PX_REDUCE(dcg_update_r_dd_row, dcg_r_args, cg_dd, i, a, acc)
{
    const double ri = a->r[i] - a->coef[0] * a->ap[i];
    a->r[i] = ri;
    cg_dd_add(acc, ri * ri);
}

/* The host entry's lanes: DCG_DD_LANES independent compensated sums, row i into lane i mod
 * DCG_DD_LANES from the call's begin, joined in lane order at the end. One compensated sum is
 * a chain of dependent additions (each TwoSum needs the last one's sum): about 127 us for
 * 110,592 rows here, twice the plain update's 56 us. Four lanes break the chain, and
 * where the processor has AVX2 they run as one 4-wide vector (a clone of the function, GCC's
 * target_clones, picked at load time): 30 us at -O2, 53 at -O3 (the -O3 build vectorizes the
 * row loop otherwise). Each lane is the same IEEE additions on either clone, without fused
 * multiply-adds (AVX2 alone does not enable FMA), so both clones give the same bits. Not
 * under sanitizers, whose runtimes are not up when the loader runs the clone's resolver. */
#define DCG_DD_LANES 4
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__) &&                              \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define DCG_LANES_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define DCG_LANES_CLONES
#endif

/* cg_dd_add on lane j of the arrays hi, lo (spelled out so that the lanes vectorize). */
#define DCG_DD_LANE(hi, lo, j, term)                                                               \
    do {                                                                                           \
        const double x_ = (term), t_ = (hi)[j] + x_, z_ = t_ - (hi)[j];                            \
        (lo)[j] += ((hi)[j] - (t_ - z_)) + (x_ - z_);                                              \
        (hi)[j] = t_;                                                                              \
    } while (0)

/* Join lane sums hi, lo into *acc in lane order. */
static void dcg_join_lanes(cg_dd *acc, const double *hi, const double *lo)
{
    for (int j = 0; j < DCG_DD_LANES; ++j) {
        const cg_dd lane = {hi[j], lo[j]};
        cg_dd_join(acc, &lane);
    }
}

DCG_LANES_CLONES static void dcg_update_r_dd_host(int64_t b, int64_t e, void *args, void *accp)
{
    const dcg_r_args *a = (const dcg_r_args *)args;
    double *CG_SPMV_RESTRICT r = a->r;
    const double *CG_SPMV_RESTRICT ap = a->ap;
    const double alpha = a->coef[0];
    double hi[DCG_DD_LANES] = {0.0}, lo[DCG_DD_LANES] = {0.0};
    int64_t i = b;
    for (; i + DCG_DD_LANES <= e; i += DCG_DD_LANES)
        for (int j = 0; j < DCG_DD_LANES; ++j) {
            const double ri = r[i + j] - alpha * ap[i + j];
            r[i + j] = ri;
            DCG_DD_LANE(hi, lo, j, ri * ri);
        }
    cg_dd acc = *(cg_dd *)accp;
    dcg_join_lanes(&acc, hi, lo);
    for (; i < e; ++i) {
        const double ri = r[i] - alpha * ap[i];
        r[i] = ri;
        cg_dd_add(&acc, ri * ri);
    }
    *(cg_dd *)accp = acc;
}

/* dcg_update_r_dd: dcg_update_r_dd_row's kernel with the lanes above as its host entry
 * (cg_kernels.h). */
CG_REDUCE_WITH_HOST(dcg_update_r_dd, dcg_r_args, cg_dd, PX_VALUE_CUSTOM, dcg_update_r_dd_host,
                    dcg_update_r_dd_row);

PX_REDUCE(dcg_update_r_pair_dd, dcg_r_args, cg_dd2, i, a, acc)
{
    const double ri = a->r[i] - a->coef[0] * a->ap[i];
    a->r[i] = ri;
    cg_dd_add(&acc->rz, ri * ri * a->dinv[i]);
    cg_dd_add(&acc->rr, ri * ri);
}

/* ---- pipelined CG (dcg.h, DCG_CG_PIPELINED) ---------------------------------------------- */

static void pipe_sums_identity(void *v)
{
    dcg_pipe_sums *d = (dcg_pipe_sums *)v;
    d->gamma.hi = d->gamma.lo = 0.0;
    d->delta.hi = d->delta.lo = 0.0;
    d->rr.hi = d->rr.lo = 0.0;
}

static void pipe_sums_join(void *dst, const void *src)
{
    dcg_pipe_sums *d = (dcg_pipe_sums *)dst;
    const dcg_pipe_sums *s = (const dcg_pipe_sums *)src;
    cg_dd_join(&d->gamma, &s->gamma);
    cg_dd_join(&d->delta, &s->delta);
    cg_dd_join(&d->rr, &s->rr);
}

const px_reducer dcg_pipe_sum =
    PX_REDUCER_INIT(dcg_pipe_sums, pipe_sums_identity, pipe_sums_join, "dcg_pipe_sum");

/* The plain sums in the same struct: the hi halves add, the lo halves stay 0. */
static void pipe_sums_join_plain(void *dst, const void *src)
{
    dcg_pipe_sums *d = (dcg_pipe_sums *)dst;
    const dcg_pipe_sums *s = (const dcg_pipe_sums *)src;
    d->gamma.hi += s->gamma.hi;
    d->delta.hi += s->delta.hi;
    d->rr.hi += s->rr.hi;
}

const px_reducer dcg_pipe_sum_plain =
    PX_REDUCER_INIT(dcg_pipe_sums, pipe_sums_identity, pipe_sums_join_plain, "dcg_pipe_sum_plain");

/* w = n (= A u), m = M^-1 w, u = p (= M^-1 r after cg_init), and the recurrences' vectors
 * zeroed: the first update (beta = 0) must multiply finite values. Without a preconditioner
 * m holds w and u, q are r, s (dcg_pipe_args). */
PX_FOR(dcg_pipe_start, dcg_pipe_args, i, a)
{
    if (a->dinv) {
        a->u[i] = a->p[i];
        a->w[i] = a->n[i];
        a->m[i] = a->dinv[i] * a->n[i];
        a->q[i] = 0.0;
    } else {
        a->m[i] = a->n[i];
    }
    a->z[i] = 0.0;
    a->s[i] = 0.0;
    a->p[i] = 0.0;
}

PX_FOR(dcg_pipe_residual, dcg_pipe_args, i, a)
{
    const double ri = a->b[i] - a->n[i];
    a->r[i] = ri;
    a->p[i] = a->dinv ? a->dinv[i] * ri : ri;
}

/* One unpreconditioned step on row i (w kept in m); returns r_i and w_i through ro, wo. */
static inline PX_HOST_DEVICE void pipe_row(const dcg_pipe_args *a, int64_t i, double *ro,
                                           double *wo)
{
    const double alpha = a->coef[0], beta = a->coef[1];
    const double zi = a->n[i] + beta * a->z[i], si = a->m[i] + beta * a->s[i];
    const double pi = a->r[i] + beta * a->p[i];
    a->z[i] = zi;
    a->s[i] = si;
    a->p[i] = pi;
    a->x[i] += alpha * pi;
    const double ri = a->r[i] - alpha * si, wi = a->m[i] - alpha * zi;
    a->r[i] = ri;
    a->m[i] = wi;
    *ro = ri;
    *wo = wi;
}

/* One Jacobi-preconditioned step on row i; returns r_i, u_i, w_i. */
static inline PX_HOST_DEVICE void pipe_row_jacobi(const dcg_pipe_args *a, int64_t i, double *ro,
                                                  double *uo, double *wo)
{
    const double alpha = a->coef[0], beta = a->coef[1];
    const double zi = a->n[i] + beta * a->z[i], qi = a->m[i] + beta * a->q[i];
    const double si = a->w[i] + beta * a->s[i], pi = a->u[i] + beta * a->p[i];
    a->z[i] = zi;
    a->q[i] = qi;
    a->s[i] = si;
    a->p[i] = pi;
    a->x[i] += alpha * pi;
    const double ri = a->r[i] - alpha * si, ui = a->u[i] - alpha * qi, wi = a->w[i] - alpha * zi;
    a->r[i] = ri;
    a->u[i] = ui;
    a->w[i] = wi;
    a->m[i] = a->dinv[i] * wi;
    *ro = ri;
    *uo = ui;
    *wo = wi;
}

PX_FOR(dcg_pipe_update, dcg_pipe_args, i, a)
{
    double ri, wi;
    pipe_row(a, i, &ri, &wi);
}

PX_FOR(dcg_pipe_update_jacobi, dcg_pipe_args, i, a)
{
    double ri, ui, wi;
    pipe_row_jacobi(a, i, &ri, &ui, &wi);
}

/* The updates folding plain sums (host spaces: a custom reducer), as bench_cg_bsp's pipelined
 * loops fold theirs. */
PX_REDUCE(dcg_pipe_update_sum, dcg_pipe_args, dcg_pipe_sums, i, a, acc)
{
    double ri, wi;
    pipe_row(a, i, &ri, &wi);
    acc->gamma.hi += ri * ri;
    acc->delta.hi += wi * ri;
}

PX_REDUCE(dcg_pipe_update_jacobi_sum, dcg_pipe_args, dcg_pipe_sums, i, a, acc)
{
    double ri, ui, wi;
    pipe_row_jacobi(a, i, &ri, &ui, &wi);
    acc->gamma.hi += ri * ui;
    acc->delta.hi += wi * ui;
    acc->rr.hi += ri * ri;
}

/* The compensated updates, one row: the device halves (never launched: the device path's
 * sums are plain) and the reference order of the host entries below. */
PX_REDUCE(dcg_pipe_update_dd_row, dcg_pipe_args, dcg_pipe_sums, i, a, acc)
{
    double ri, wi;
    pipe_row(a, i, &ri, &wi);
    cg_dd_add(&acc->gamma, ri * ri);
    cg_dd_add(&acc->delta, wi * ri);
}

PX_REDUCE(dcg_pipe_update_jacobi_dd_row, dcg_pipe_args, dcg_pipe_sums, i, a, acc)
{
    double ri, ui, wi;
    pipe_row_jacobi(a, i, &ri, &ui, &wi);
    cg_dd_add(&acc->gamma, ri * ui);
    cg_dd_add(&acc->delta, wi * ui);
    cg_dd_add(&acc->rr, ri * ri);
}

/* The host entries of the pipelined updates: dcg_update_r_dd_host's lanes (row i into lane i
 * mod DCG_DD_LANES from the call's begin) for each of the sums. On a cache-resident 16^3 box
 * they take the unpreconditioned update from 11-13 us row by row to 8.2 us (PX_PROFILE, one
 * rank, one thread); at 32^3 the update streams its vectors from memory (88-109 us either way,
 * against 24 us for plain CG's two updates: bench/RESULTS.md, session 19). */
DCG_LANES_CLONES static void dcg_pipe_update_dd_host(int64_t b, int64_t e, void *args, void *accp)
{
    const dcg_pipe_args *a = (const dcg_pipe_args *)args;
    const double alpha = a->coef[0], beta = a->coef[1];
    const double *CG_SPMV_RESTRICT n = a->n;
    double *CG_SPMV_RESTRICT x = a->x, *CG_SPMV_RESTRICT r = a->r, *CG_SPMV_RESTRICT m = a->m;
    double *CG_SPMV_RESTRICT z = a->z, *CG_SPMV_RESTRICT s = a->s, *CG_SPMV_RESTRICT p = a->p;
    double gh[DCG_DD_LANES] = {0.0}, gl[DCG_DD_LANES] = {0.0};
    double dh[DCG_DD_LANES] = {0.0}, dl[DCG_DD_LANES] = {0.0};
    int64_t i = b;
    for (; i + DCG_DD_LANES <= e; i += DCG_DD_LANES)
        for (int j = 0; j < DCG_DD_LANES; ++j) {
            const int64_t k = i + j;
            const double zi = n[k] + beta * z[k], si = m[k] + beta * s[k];
            const double pi = r[k] + beta * p[k];
            z[k] = zi;
            s[k] = si;
            p[k] = pi;
            x[k] += alpha * pi;
            const double ri = r[k] - alpha * si, wi = m[k] - alpha * zi;
            r[k] = ri;
            m[k] = wi;
            DCG_DD_LANE(gh, gl, j, ri * ri);
            DCG_DD_LANE(dh, dl, j, wi * ri);
        }
    dcg_pipe_sums acc = *(dcg_pipe_sums *)accp;
    dcg_join_lanes(&acc.gamma, gh, gl);
    dcg_join_lanes(&acc.delta, dh, dl);
    for (; i < e; ++i) {
        double ri, wi;
        pipe_row(a, i, &ri, &wi);
        cg_dd_add(&acc.gamma, ri * ri);
        cg_dd_add(&acc.delta, wi * ri);
    }
    *(dcg_pipe_sums *)accp = acc;
}

DCG_LANES_CLONES static void dcg_pipe_update_jacobi_dd_host(int64_t b, int64_t e, void *args,
                                                            void *accp)
{
    const dcg_pipe_args *a = (const dcg_pipe_args *)args;
    const double alpha = a->coef[0], beta = a->coef[1];
    const double *CG_SPMV_RESTRICT n = a->n, *CG_SPMV_RESTRICT dinv = a->dinv;
    double *CG_SPMV_RESTRICT x = a->x, *CG_SPMV_RESTRICT r = a->r, *CG_SPMV_RESTRICT u = a->u;
    double *CG_SPMV_RESTRICT w = a->w, *CG_SPMV_RESTRICT m = a->m, *CG_SPMV_RESTRICT z = a->z;
    double *CG_SPMV_RESTRICT q = a->q, *CG_SPMV_RESTRICT s = a->s, *CG_SPMV_RESTRICT p = a->p;
    double gh[DCG_DD_LANES] = {0.0}, gl[DCG_DD_LANES] = {0.0};
    double dh[DCG_DD_LANES] = {0.0}, dl[DCG_DD_LANES] = {0.0};
    double rh[DCG_DD_LANES] = {0.0}, rl[DCG_DD_LANES] = {0.0};
    int64_t i = b;
    for (; i + DCG_DD_LANES <= e; i += DCG_DD_LANES)
        for (int j = 0; j < DCG_DD_LANES; ++j) {
            const int64_t k = i + j;
            const double zi = n[k] + beta * z[k], qi = m[k] + beta * q[k];
            const double si = w[k] + beta * s[k], pi = u[k] + beta * p[k];
            z[k] = zi;
            q[k] = qi;
            s[k] = si;
            p[k] = pi;
            x[k] += alpha * pi;
            const double ri = r[k] - alpha * si, ui = u[k] - alpha * qi, wi = w[k] - alpha * zi;
            r[k] = ri;
            u[k] = ui;
            w[k] = wi;
            m[k] = dinv[k] * wi;
            DCG_DD_LANE(gh, gl, j, ri * ui);
            DCG_DD_LANE(dh, dl, j, wi * ui);
            DCG_DD_LANE(rh, rl, j, ri * ri);
        }
    dcg_pipe_sums acc = *(dcg_pipe_sums *)accp;
    dcg_join_lanes(&acc.gamma, gh, gl);
    dcg_join_lanes(&acc.delta, dh, dl);
    dcg_join_lanes(&acc.rr, rh, rl);
    for (; i < e; ++i) {
        double ri, ui, wi;
        pipe_row_jacobi(a, i, &ri, &ui, &wi);
        cg_dd_add(&acc.gamma, ri * ui);
        cg_dd_add(&acc.delta, wi * ui);
        cg_dd_add(&acc.rr, ri * ri);
    }
    *(dcg_pipe_sums *)accp = acc;
}

CG_REDUCE_WITH_HOST(dcg_pipe_update_dd, dcg_pipe_args, dcg_pipe_sums, PX_VALUE_CUSTOM,
                    dcg_pipe_update_dd_host, dcg_pipe_update_dd_row);
CG_REDUCE_WITH_HOST(dcg_pipe_update_jacobi_dd, dcg_pipe_args, dcg_pipe_sums, PX_VALUE_CUSTOM,
                    dcg_pipe_update_jacobi_dd_host, dcg_pipe_update_jacobi_dd_row);

/* MPI user function: inout[k] += in[k] for @p len cg_dd values. */
static void dd_mpi_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const cg_dd *s = (const cg_dd *)in;
    cg_dd *d = (cg_dd *)inout;
    for (int k = 0; k < *len; k++)
        cg_dd_join(&d[k], &s[k]);
}

int dcg_dd_mpi_create(MPI_Datatype *type, MPI_Op *op)
{
    *type = MPI_DATATYPE_NULL;
    *op = MPI_OP_NULL;
    if (MPI_Type_contiguous(2, MPI_DOUBLE, type) != MPI_SUCCESS ||
        MPI_Type_commit(type) != MPI_SUCCESS ||
        MPI_Op_create(dd_mpi_sum, 1 /* commutative: cg_dd_join is, bit for bit */, op) !=
            MPI_SUCCESS) {
        dcg_dd_mpi_free(type, op);
        return PX_EMPI;
    }
    return PX_OK;
}

void dcg_dd_mpi_free(MPI_Datatype *type, MPI_Op *op)
{
    if (*op != MPI_OP_NULL)
        MPI_Op_free(op);
    if (*type != MPI_DATATYPE_NULL)
        MPI_Type_free(type);
    *op = MPI_OP_NULL;
    *type = MPI_DATATYPE_NULL;
}
