/*
 * examples/cg/dcg.c - distributed CG on engine ops (dcg.h has the op sequence).
 *
 * Kept in the common subset of C11 and C++ (nvcc compiles it with the Cuda space). The kernels
 * are cg.c's (cg_kernels.h) and dcg_kernels.c's: the pack, the updates that read alpha and beta
 * at run time, and the compensated dot products that make every partition compute the same
 * numbers (cg_dd.h says why).
 *
 * Iterations (dcg_mode): pushed op by op (DCG_PUSH), or recorded once per solve as px_graphs,
 * one per halo tag, with and without the clock ops below (up to four), launched one after the
 * other by the scalar op that has an iteration's residual (DCG_GRAPH).
 *
 * Timing (all host wall clock, cg_now). Three tiny PX_FN_ASYNC ops per exchange note times:
 * "post" runs just before the receives are posted (it writes the halo Vars, so it runs first),
 * "interior done" reads the SpMV output Var right after the interior SpMV, "halos in" reads
 * every halo Var. A fourth op, reading the local-sum Var, notes when each allreduce's local
 * contribution is ready; the host notes when it sees the result. These clock ops are issued
 * in one launch of dcg_params.clock_every (sampled launches, d->clocks): each is an engine op
 * and a dependency step, and the 5 of a pipelined iteration (of about 15 ops) cost 0.1-1 us
 * of a 3-8 us iteration on the small matrices (bench/RESULTS.md, session 22). The other
 * launches run the same ops without them (their own recorded graphs in DCG_GRAPH), and
 * finish_stats scales the sampled sums by launches / sampled launches.
 */
#include "dcg.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_spmv_rows.h" /* CG_SPMV_GROUP */
#include "dcg_kernels.h"

/* A copy between spaces as a synchronous engine op (cuda staging). */
typedef struct {
    px_space *dst_s, *src_s;
    void *dst;
    const void *src;
    size_t bytes;
} copy_op;

static int dcg_copy(const px_run_context *rc, void *arg)
{
    (void)rc;
    const copy_op *c = (const copy_op *)arg;
    return px_deep_copy(c->dst_s, c->dst, c->src_s, c->src, c->bytes);
}

static int dcg_stamp(const px_run_context *rc, void *arg)
{
    (void)rc;
    *(double *)arg = cg_now();
    return PX_OK;
}

/* The solver's state on one rank. */
typedef struct {
    px_engine *e;
    px_space *s, *host;
    MPI_Comm comm;
    const cgp_part *P;
    int on_host; /* s is host-accessible: MPI reads and writes the vectors directly */
    int dd;      /* the dots are compensated sums (on host, unless dcg_params.plain_dots) */
    cg_matrix A; /* local rows, columns in extended numbering */
    int32_t *send_idx;
    double *b, *x, *r, *p, *ap, *dinv; /* x and p: n_ext (owned + halo) */
    double *send_d, *send_h, *recv_h;  /* send_h == send_d on host spaces; recv_h: cuda only */
    int64_t n_send, n_recv;
    /* owned part of p (0), of x (1) and of the pipelined m (2); the pipelined CG exchanges p
     * only in its start and its residual replacements (push_pipe_start); its updates write p
     * under v_r with the other vectors no other op of an iteration touches, and under
     * v_vec[0] too, for those exchanges */
    px_var *v_vec[3];
    px_var **v_halo; /* one per neighbour */
    px_var **v_bnd;  /* the boundary SpMV's reads: n_neighbors + 4 slots */
    px_var *v_hdev, *v_send, *v_ap, *v_r, *v_loc, *v_glob, *v_clk_h, *v_clk_i, *v_clk_l;
    px_var *v_scr, *v_clk_b; /* DCG_CG_PIPELINED: the SpMV's unused dot, its end's clock */
    px_var *v_coef;          /* coef (and coef_d): written by the scalar ops, read by the updates */
    px_var *v_state;         /* the iteration state below, written by the scalar ops */
    dcg_mode mode;
    dcg_variant variant;
    /* DCG_GRAPH: one iteration recorded with halo tag 100 (g[c][0]) and 101 (g[c][1]), with
     * the clock ops (c = 1) and, when clock_every > 1, without them (c = 0) */
    px_graph *g[2][2];
    int64_t launches; /* iterations issued so far: launch k takes tag parity k & 1 (DCG_GRAPH:
                       * g[clocks][k & 1]) and is sampled (clocks) when k % clock_every == 0 */
    int64_t clock_every, clocked;
    /* The iteration being pushed or recorded, or the launch now running (its scalar op reads
     * it), is a sampled one: its clock ops are issued and its scalar ops book their times.
     * Set by the host before the first launch and by the scalar op that issues the next. */
    int clocks;
    int iter_clocks; /* the clocks of the launch whose end set t_iter (next_launch) */
    /* The sums of an allreduce, compensated (cg_dd.h): p.Ap's interior and boundary
     * halves, or r.r (plain), or {r.M^-1 r, r.r} (Jacobi); DCG_CG_PIPELINED's three are a
     * dcg_pipe_sums. The plain reducers write the hi halves (lo stays 0). */
    cg_dd loc[3], glob[3];
    cg_dd scr[2]; /* DCG_CG_PIPELINED: where the SpMV's p.Ap goes, unread */
    /* DCG_CG_PIPELINED's vectors besides x, r, p (dcg_pipe_args): m (n_ext), and w, u, q
     * with Jacobi only; and its scalars from one iteration to the next. */
    double *pm, *pw, *pu, *pq, *pz, *ps;
    double gamma_old, alpha_old;
    int stop; /* the scalar op found the solve done: the update runs with alpha = beta = 0 */
    /* Residual replacement (dcg.h, DCG_CG_PIPELINED): the scalar op sets replace (this launch
     * makes no step, and next_launch pushes push_replace before the next launch) and replaced
     * (the next allreduce's r is b - A x); restart: the next step takes beta = 0, as the
     * first. last_true: the true relative residual at the last replacement (HUGE_VAL before
     * the first, which has no reference: only later ones can find no progress). */
    int replace, replaced, restart, stagnated;
    int replaced_on_breakdown; /* the last replacement followed alpha <= 0, not convergence */
    int64_t replacements;
    double last_true;
    MPI_Datatype dd_type; /* one cg_dd */
    MPI_Op dd_op;         /* their sum */
    double coef[2];       /* alpha, beta (host) */
    double *coef_d;       /* what the kernels read: coef itself on host spaces, else a copy */
    /* Iteration state, owned by the scalar ops while an iteration runs (v_state); the host
     * reads it after waiting for v_state. */
    double rz, bnorm, relres;
    int64_t it;
    int jacobi;
    const cg_options *o;
    int64_t interior_chunk; /* rows a piece of the interior SpMV; 0: one call a thread */
    double t_iter, min_iter, next_progress, t0; /* next_launch's clocks */
    cg_result *res; /* iterate's: next_launch keeps the first launches' times in it */
    double t_post, t_int, t_in, t_loc, t_spmv;
    /* cp_recv[which]: the received halo into the exchanged vector's halo (exchanged()), one
     * per vector, fixed at allocation: a queued or recorded copy reads its op's struct when it
     * runs, after later pushes (a residual replacement's exchanges of x and p) */
    copy_op cp_send, cp_recv[3], cp_coef;
    int tag_base, tag_parity; /* halo tag: tag_base (100; 102 in push_replace) + parity */
    double msg_s, exposed_s, window_s, allred_s;
    int collective; /* the failure being returned was decided on global values */
    char *msg;
    size_t msglen;
} dcg;

#define DCG_TRY(d, call)                                                                           \
    do {                                                                                           \
        const int rc_ = (call);                                                                    \
        if (rc_ != PX_OK) {                                                                        \
            snprintf((d)->msg, (d)->msglen, "%s failed: %s", #call, px_strerror(rc_));             \
            return rc_;                                                                            \
        }                                                                                          \
    } while (0)

/* A failure decided on global values (a breakdown, an unsuitable matrix): every rank writes the
 * message and returns PX_EINVAL alike (d->collective), none aborts alone. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int
fail_everywhere(dcg *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, d->msglen, fmt, ap);
    va_end(ap);
    d->collective = 1;
    return PX_EINVAL;
}

/* The context of the host ops (clocks, scalars, staging copies): a CPU op. */
static px_context host_context(void)
{
    px_context cpu;
    cpu.type = PX_DEV_CPU;
    cpu.device_id = 0;
    return cpu;
}

static int push_stamp(dcg *d, double *slot, px_var *const *reads, size_t nr, px_var *const *writes,
                      size_t nw, const char *name)
{
    return px_engine_push_sync(d->e, dcg_stamp, slot, host_context(), reads, nr, writes, nw,
                               PX_FN_ASYNC, 0, name);
}

/* The Vars the boundary rows wait for: every halo Var, or the staging copy's. */
static size_t halo_ready(const dcg *d, px_var *const **vars)
{
    if (d->on_host) {
        *vars = d->v_halo;
        return (size_t)d->P->n_neighbors;
    }
    *vars = &d->v_hdev;
    return 1;
}

/* The exchanged vector @p which: 0 p, 1 x, 2 the pipelined CG's m. */
static double *exchanged(const dcg *d, int which)
{
    return which == 0 ? d->p : which == 1 ? d->x : d->pm;
}

/* Post one halo exchange of vector @p which (exchanged). */
static int push_exchange(dcg *d, int which)
{
    const cgp_part *P = d->P;
    double *vec = exchanged(d, which);
    const int tag = d->tag_base + d->tag_parity;
    d->tag_parity ^= 1;
    if (P->n_neighbors == 0)
        return PX_OK;
    if (d->clocks)
        DCG_TRY(d, push_stamp(d, &d->t_post, NULL, 0, d->v_halo, (size_t)P->n_neighbors,
                              "dcg_clock_post"));
    for (int k = 0; k < P->n_neighbors; k++) {
        const int64_t cnt = P->recv_ptr[k + 1] - P->recv_ptr[k];
        double *buf = d->on_host ? vec + P->n_local + P->recv_ptr[k] : d->recv_h + P->recv_ptr[k];
        if (cnt > 0)
            DCG_TRY(d, px_engine_push_mpi_irecv(d->e, buf, (int)cnt, MPI_DOUBLE, P->neighbor[k],
                                                tag, d->comm, d->v_halo[k]));
    }
    pack_args pa;
    pa.idx = d->send_idx;
    pa.v = vec;
    pa.out = d->send_d;
    DCG_TRY(d,
            px_engine_push_parallel_for(d->e, d->s, "dcg_pack", px_range(0, d->n_send), &dcg_pack,
                                        &pa, sizeof pa, &d->v_vec[which], 1, &d->v_send, 1));
    const px_context cpu = host_context();
    if (!d->on_host)
        DCG_TRY(d, px_engine_push_sync(d->e, dcg_copy, &d->cp_send, cpu, NULL, 0, &d->v_send, 1,
                                       PX_FN_NORMAL, 0, "dcg_stage_send"));
    for (int k = 0; k < P->n_neighbors; k++) {
        const int64_t cnt = P->send_ptr[k + 1] - P->send_ptr[k];
        if (cnt > 0)
            DCG_TRY(d,
                    px_engine_push_mpi_isend(d->e, d->send_h + P->send_ptr[k], (int)cnt, MPI_DOUBLE,
                                             P->neighbor[k], tag, d->comm, d->v_send));
    }
    if (!d->on_host) {
        DCG_TRY(d, px_engine_push_sync(d->e, dcg_copy, &d->cp_recv[which], cpu, d->v_halo,
                                       (size_t)P->n_neighbors, &d->v_hdev, 1, PX_FN_COPY_TO_DEVICE,
                                       0, "dcg_stage_recv"));
    }
    return PX_OK;
}

/* Where a dot's reduce writes: the whole compensated sum (d->dd: dd kernels, custom reducers),
 * else its hi half (cg.c's kernels, px_sum_f64; lo stays 0). */
static void *dot_slot(const dcg *d, cg_dd *slot)
{
    return d->dd ? (void *)slot : (void *)&slot->hi;
}

/* The interior SpMV's policy (dcg.h, interior_chunk). With R = d->interior_chunk > 0 rows, on
 * a host space with neighbours, each of the space's P threads gets k = rows / (P R) pieces (at
 * least 1) of equal size, rounded up to whole row groups of the SpMV's loop (CG_SPMV_GROUP,
 * cg_spmv_rows.h) so that the pieces form the same groups as one call. A thread that runs it
 * on a one-processor rank tests the halo messages between its pieces (core/piece_hook.h in the
 * library), so a transport that needs the host (TCP past its socket buffers, rendezvous
 * messages) moves them while the rows are computed: over a shaped TCP link with rendezvous
 * halos (96^3, 100 Mbit/s) they take 33 ms an iteration to 24 (bench/RESULTS.md, session 15). */
static px_range_policy interior_policy(const dcg *d)
{
    const int64_t n = d->P->n_interior;
    const int conc = px_space_concurrency(d->s);
    const int64_t thr = conc > 0 ? conc : 1;
    const int64_t k = d->interior_chunk > 0 ? n / (thr * d->interior_chunk) : 0;
    if (!d->on_host || d->P->n_neighbors == 0 || k <= 1)
        return px_range(0, n);
    const int64_t rows = (n + thr * k - 1) / (thr * k);
    const int64_t chunk = (rows + CG_SPMV_GROUP - 1) / CG_SPMV_GROUP * CG_SPMV_GROUP;
    return px_range_chunked(0, n, chunk, PX_SCHEDULE_STATIC);
}

/* Ap = A vec on all local rows, the interior while the halos travel; the two partial sums of
 * vec.Ap land in d->loc[0] (interior) and d->loc[1] (boundary). For the pipelined CG's m
 * (which 2) the sums are not wanted and go to d->scr, plain and under v_scr, so that the
 * SpMV does not wait for the allreduce that reads d->loc meanwhile; a clock then notes the
 * SpMV's end. */
static int push_spmv(dcg *d, int which)
{
    const int pipe = which == 2;
    const px_kernel *kern = d->dd && !pipe ? &cg_spmv_dot_dd : &cg_spmv_dot;
    const px_reducer *red = d->dd && !pipe ? &cg_dd_sum : &px_sum_f64;
    cg_dd *sums = pipe ? d->scr : d->loc;
    const cgp_part *P = d->P;
    spmv_args sa;
    sa.row_ptr = d->A.row_ptr;
    sa.col = d->A.col;
    sa.val = d->A.val;
    sa.p = exchanged(d, which);
    sa.ap = d->ap;
    px_var *w[2] = {d->v_ap, pipe ? d->v_scr : d->v_loc};
    /* The interior rows need only the vector: they are queued beside the receives (or, in a
     * sampled launch, the post clock) and the pack, after them. The thread that finishes the
     * post clock or the pack posts the receives or sends those make ready before it takes the
     * interior rows (an MPI op is PX_FN_ASYNC, and the engine runs such an op at once on the
     * thread that makes it ready: engine.h), so the messages travel while the interior rows
     * are computed, also on one thread a rank. */
    DCG_TRY(d, px_engine_push_parallel_reduce(
                   d->e, d->s, "dcg_spmv_interior", interior_policy(d), kern, &sa, sizeof sa, red,
                   pipe ? &sums[0].hi : dot_slot(d, &sums[0]), &d->v_vec[which], 1, w, 2));
    px_var *const *hv;
    const size_t nh = halo_ready(d, &hv);
    const int clk = d->clocks && P->n_neighbors > 0;
    if (clk) {
        DCG_TRY(d, push_stamp(d, &d->t_int, &d->v_ap, 1, &d->v_clk_i, 1, "dcg_clock_interior"));
        DCG_TRY(d, push_stamp(d, &d->t_in, hv, nh, &d->v_clk_h, 1, "dcg_clock_halos_in"));
    }
    /* The boundary rows read the halo Vars themselves (not only v_clk_h, written after them),
     * so the next exchange's receives wait for this SpMV whatever the host does meanwhile. */
    px_var **reads = d->v_bnd;
    size_t nrd = 0;
    reads[nrd++] = d->v_vec[which];
    if (clk) {
        reads[nrd++] = d->v_clk_h;
        reads[nrd++] = d->v_clk_i;
    }
    for (size_t k = 0; k < nh; k++)
        reads[nrd++] = hv[k];
    DCG_TRY(d, px_engine_push_parallel_reduce(
                   d->e, d->s, "dcg_spmv_boundary", px_range(P->n_interior, P->n_local), kern, &sa,
                   sizeof sa, red, pipe ? &sums[1].hi : dot_slot(d, &sums[1]), reads, nrd, w, 2));
    if (pipe && d->clocks)
        DCG_TRY(d, push_stamp(d, &d->t_spmv, &d->v_ap, 1, &d->v_clk_b, 1, "dcg_clock_spmv"));
    return PX_OK;
}

/* Sum d->loc[0 .. count) over the ranks into d->glob through an allreduce op (no wait: the
 * scalar op that reads d->glob is ordered after it by v_glob). */
static int push_allreduce(dcg *d, int count)
{
    if (d->clocks)
        DCG_TRY(d, push_stamp(d, &d->t_loc, &d->v_loc, 1, &d->v_clk_l, 1, "dcg_clock_local"));
    DCG_TRY(d, px_engine_push_mpi_allreduce(d->e, d->loc, d->glob, count, d->dd_type, d->dd_op,
                                            d->comm, d->v_loc, d->v_glob));
    return PX_OK;
}

/* Book the exchange's clocks (the scalar op after the SpMV), on a sampled launch. */
static void book_halo(dcg *d)
{
    if (d->clocks && d->P->n_neighbors > 0) {
        d->msg_s += d->t_in - d->t_post;
        d->exposed_s += d->t_in > d->t_int ? d->t_in - d->t_int : 0.0;
        d->window_s += d->t_int - d->t_post;
    }
}

/* Scalar op after the p.Ap allreduce: books the message clocks and alpha = rz / p.Ap, or fails
 * the iteration on a breakdown (a global value: every rank fails alike). */
static int dcg_alpha(const px_run_context *rc, void *arg)
{
    (void)rc;
    dcg *d = (dcg *)arg;
    if (d->clocks)
        d->allred_s += cg_now() - d->t_loc;
    book_halo(d);
    cg_dd sum = d->glob[0];
    cg_dd_join(&sum, &d->glob[1]);
    const double pap = cg_dd_value(&sum);
    if (!(pap > 0.0) || !isfinite(pap))
        return fail_everywhere(d,
                               "breakdown at iteration %lld: p.Ap = %g (the matrix is not "
                               "symmetric positive definite)",
                               (long long)(d->it + 1), pap);
    d->coef[0] = d->rz / pap;
    return PX_OK;
}

/* The relative residual from r.r (a global value), or PX_EINVAL with the message on every
 * rank when it is not finite. */
static int set_relres(dcg *d, double rr)
{
    d->relres = sqrt(rr) / d->bnorm;
    if (isfinite(d->relres))
        return PX_OK;
    return fail_everywhere(d, "residual became %g at iteration %lld", d->relres, (long long)d->it);
}

static int next_launch(dcg *d);

/* Scalar op after the residual allreduce: the iteration's relative residual and beta, then
 * the next launch (next_launch). */
static int dcg_beta(const px_run_context *rc, void *arg)
{
    (void)rc;
    dcg *d = (dcg *)arg;
    if (d->clocks)
        d->allred_s += cg_now() - d->t_loc;
    const double rz_new = cg_dd_value(&d->glob[0]);
    const double rr = d->jacobi ? cg_dd_value(&d->glob[1]) : rz_new;
    d->it++;
    if (set_relres(d, rr) != PX_OK)
        return PX_EINVAL;
    d->coef[1] = rz_new / d->rz;
    d->rz = rz_new;
    return next_launch(d);
}

/* A residual replacement (dcg.h, DCG_CG_PIPELINED) whose true residual, above the tolerance,
 * is not below DCG_PIPE_PROGRESS times the last replacement's ends the solve: the restart
 * made no progress. 0.9 lets a slow approach to the tolerance go on (1.5 tol, then 1.01 tol)
 * and stops at the rounding floor after a few replacements (the true residual there moves by
 * a few per cent either way). */
#define DCG_PIPE_PROGRESS 0.9

/* The pipelined CG's launch that makes no step: alpha = beta = 0 leave x and r as they are
 * (the update still folds the sums). */
static int pipe_no_step(dcg *d)
{
    d->coef[0] = d->coef[1] = 0.0;
    return PX_OK;
}

/* The pipelined CG's scalar op, after its allreduce and the SpMV (dcg.h, DCG_CG_PIPELINED):
 * books the clocks and takes the relative residual from r.r. Then, on global values (every
 * rank decides alike), one of:
 *   - stop: the residual is below the tolerance and is a true one (the last launch replaced
 *     it), or it is a true one that a restart did not bring below DCG_PIPE_PROGRESS times
 *     the last replacement's (stagnated: rounding limits the accuracy), or the iteration
 *     limit is reached;
 *   - replace: the recursive residual is below the tolerance (checked against b - A x
 *     before the solve may stop), or alpha is not positive and finite after at least one
 *     step since the last (re)start (the recurrences have lost their accuracy);
 *   - step: beta = gamma / gamma_old and alpha = gamma / (delta - beta gamma / alpha_old),
 *     or after a (re)start beta = 0 and alpha = gamma / delta.
 * Stop and replace make no step. A non-finite residual, an alpha that is not positive and
 * finite on the first step after a (re)start (u.Au <= 0: the matrix, or M, is not positive
 * definite), or no progress after a replacement that followed a breakdown while the true
 * residual is still above sqrt(eps) (an indefinite matrix breaking down after some steps
 * looks like that; rounding past the attainable accuracy leaves a smaller residual) fails
 * the iteration on every rank. */
static int pipe_scalar(dcg *d)
{
    const cg_options *o = d->o;
    if (d->clocks) {
        const double t = cg_now(), ready = d->t_loc > d->t_spmv ? d->t_loc : d->t_spmv;
        d->allred_s += t > ready ? t - ready : 0.0;
    }
    book_halo(d);
    const double gamma = cg_dd_value(&d->glob[0]), delta = cg_dd_value(&d->glob[1]);
    const double rr = d->jacobi ? cg_dd_value(&d->glob[2]) : gamma;
    if (set_relres(d, rr) != PX_OK)
        return PX_EINVAL;
    const int true_r = d->replaced;
    d->replaced = 0;
    if (d->relres < o->tol) {
        d->stop = true_r;
        d->replace = d->replaced = d->restart = !true_r;
        d->replaced_on_breakdown = 0;
        return pipe_no_step(d);
    }
    if (true_r) {
        if (!(d->relres < DCG_PIPE_PROGRESS * d->last_true)) {
            if (d->replaced_on_breakdown && d->relres >= sqrt(DBL_EPSILON))
                return fail_everywhere(
                    d,
                    "breakdown at iteration %lld: the pipelined CG restarted from b - A x after "
                    "alpha <= 0, and its true relative residual %.3e is not below %.1f of the "
                    "last replacement's (%.3e): the matrix or its preconditioner is not "
                    "symmetric positive definite, or rounding swamps the pipelined recurrences "
                    "(--cg plain)",
                    (long long)(d->it + 1), d->relres, DCG_PIPE_PROGRESS, d->last_true);
            d->stop = d->stagnated = 1;
            return pipe_no_step(d);
        }
        d->last_true = d->relres;
    }
    if (d->it >= o->max_iters) {
        d->stop = 1;
        return pipe_no_step(d);
    }
    const double beta = d->restart ? 0.0 : gamma / d->gamma_old;
    const double alpha = gamma / (d->restart ? delta : delta - beta * gamma / d->alpha_old);
    if (!(alpha > 0.0) || !isfinite(alpha)) {
        if (!d->restart) {
            d->replace = d->replaced = d->restart = d->replaced_on_breakdown = 1;
            return pipe_no_step(d);
        }
        return fail_everywhere(d,
                               "breakdown at iteration %lld: pipelined CG's alpha = %g (u.Au <= "
                               "0: the matrix or its preconditioner is not symmetric positive "
                               "definite)",
                               (long long)(d->it + 1), alpha);
    }
    d->restart = 0;
    d->gamma_old = gamma;
    d->alpha_old = alpha;
    d->coef[0] = alpha;
    d->coef[1] = beta;
    d->it++;
    return PX_OK;
}

/* The pipelined CG's scalar op: pipe_scalar, then the next launch (next_launch). */
static int dcg_pipe_scalar(const px_run_context *rc, void *arg)
{
    (void)rc;
    dcg *d = (dcg *)arg;
    const int st = pipe_scalar(d);
    return st == PX_OK ? next_launch(d) : st;
}

/* Push scalar op @fn (reading the allreduce result, writing the coefficients and the state),
 * then, off host, the coefficients' copy to the space. On a sampled launch it reads the clock
 * Vars too (the pipelined CG's the SpMV's end clock as well), to book their times. */
static int push_scalar(dcg *d, px_sync_fn fn, const char *name)
{
    const px_context cpu = host_context();
    px_var *r[5] = {d->v_glob, d->v_clk_l, d->v_clk_h, d->v_clk_i, d->v_clk_b};
    px_var *w[2] = {d->v_coef, d->v_state};
    const size_t nr = !d->clocks ? 1 : d->variant == DCG_CG_PIPELINED ? 5 : 4;
    DCG_TRY(d, px_engine_push_sync(d->e, fn, d, cpu, r, nr, w, 2, PX_FN_NORMAL, 0, name));
    if (!d->on_host)
        DCG_TRY(d, px_engine_push_sync(d->e, dcg_copy, &d->cp_coef, cpu, NULL, 0, &d->v_coef, 1,
                                       PX_FN_COPY_TO_DEVICE, 0, "dcg_stage_coef"));
    return PX_OK;
}

/* Residual update on the local rows (r -= alpha Ap) and its local sums into d->loc: r.r, or
 * with Jacobi {r.M^-1 r, r.r}. */
static int push_update_r(dcg *d)
{
    dcg_r_args ua;
    ua.coef = d->coef_d;
    ua.ap = d->ap;
    ua.dinv = d->dinv;
    ua.r = d->r;
    const px_range_policy all = px_range(0, d->P->n_local);
    px_var *rd[2] = {d->v_ap, d->v_coef};
    px_var *w[2] = {d->v_r, d->v_loc};
    if (!d->jacobi) {
        /* dcg_beta reads glob[0] only. */
        DCG_TRY(d, px_engine_push_parallel_reduce(d->e, d->s, "dcg_update_r", all,
                                                  d->dd ? &dcg_update_r_dd : &dcg_update_r, &ua,
                                                  sizeof ua, d->dd ? &cg_dd_sum : &px_sum_f64,
                                                  dot_slot(d, &d->loc[0]), rd, 2, w, 2));
    } else if (d->dd) {
        /* cg_dd2 is {rz, rr}: the reduce writes loc[0..1] in that order. */
        DCG_TRY(d, px_engine_push_parallel_reduce(d->e, d->s, "dcg_update_r_pair", all,
                                                  &dcg_update_r_pair_dd, &ua, sizeof ua,
                                                  &cg_dd2_sum, d->loc, rd, 2, w, 2));
    } else {
        dot_args da;
        da.u = d->r;
        da.v = d->r;
        DCG_TRY(d, px_engine_push_parallel_reduce(d->e, d->s, "dcg_update_r_rz", all,
                                                  &dcg_update_r_rz, &ua, sizeof ua, &px_sum_f64,
                                                  &d->loc[0].hi, rd, 2, w, 2));
        DCG_TRY(d,
                px_engine_push_parallel_reduce(d->e, d->s, "cg_dot", all, &cg_dot, &da, sizeof da,
                                               &px_sum_f64, &d->loc[1].hi, NULL, 0, w, 2));
    }
    return PX_OK;
}

/* x += alpha p, then p = M^-1 r + beta p. */
static int push_update_xp(dcg *d)
{
    dcg_xp_args xa;
    xa.coef = d->coef_d;
    xa.r = d->r;
    xa.dinv = d->dinv;
    xa.x = d->x;
    xa.p = d->p;
    px_var *rd[2] = {d->v_r, d->v_coef};
    px_var *w[2] = {d->v_vec[1], d->v_vec[0]};
    DCG_TRY(d, px_engine_push_parallel_for(d->e, d->s, "dcg_update_xp", px_range(0, d->P->n_local),
                                           d->jacobi ? &dcg_update_xp_jacobi : &dcg_update_xp, &xa,
                                           sizeof xa, rd, 2, w, 2));
    return PX_OK;
}

/* The pipelined kernels' arguments (dcg_pipe_args): n is Ap's buffer. */
static dcg_pipe_args pipe_args(const dcg *d)
{
    dcg_pipe_args pa;
    pa.coef = d->coef_d;
    pa.n = d->ap;
    pa.dinv = d->jacobi ? d->dinv : NULL;
    pa.b = d->b;
    pa.x = d->x;
    pa.r = d->r;
    pa.u = d->pu;
    pa.w = d->pw;
    pa.m = d->pm;
    pa.z = d->pz;
    pa.q = d->pq;
    pa.s = d->ps;
    pa.p = d->p;
    return pa;
}

/* The pipelined CG's update and its sums into d->loc (dcg_pipe_sums): one fused pass with
 * compensated sums (d->dd) or, with --dots plain on a host space, plain ones; on the staging
 * path the update, then each sum by cg_dot (plain sums by a built-in reducer, as a device's
 * must be). It reads n (v_ap) and the coefficients (v_coef), and
 * writes m (v_vec[2]), x (v_vec[1]), the sums (v_loc), p (v_vec[0], which a replacement's
 * exchange reads) and r with the recurrences' vectors u, w, z, q, s and p (v_r: no other op
 * of an iteration touches them). */
static int push_pipe_update(dcg *d)
{
    const dcg_pipe_args pa = pipe_args(d);
    const px_range_policy all = px_range(0, d->P->n_local);
    px_var *rd[2] = {d->v_ap, d->v_coef};
    px_var *w[5] = {d->v_r, d->v_vec[1], d->v_vec[2], d->v_vec[0], d->v_loc};
    if (d->dd) {
        const px_kernel *k = d->jacobi ? &dcg_pipe_update_jacobi_dd : &dcg_pipe_update_dd;
        DCG_TRY(d, px_engine_push_parallel_reduce(d->e, d->s, "dcg_pipe_update", all, k, &pa,
                                                  sizeof pa, &dcg_pipe_sum, d->loc, rd, 2, w, 5));
        return PX_OK;
    }
    if (d->on_host) { /* --dots plain: the sums folded as bench_cg_bsp's, in the same pass */
        const px_kernel *k = d->jacobi ? &dcg_pipe_update_jacobi_sum : &dcg_pipe_update_sum;
        DCG_TRY(d, px_engine_push_parallel_reduce(d->e, d->s, "dcg_pipe_update", all, k, &pa,
                                                  sizeof pa, &dcg_pipe_sum_plain, d->loc, rd, 2, w,
                                                  5));
        return PX_OK;
    }
    DCG_TRY(d, px_engine_push_parallel_for(d->e, d->s, "dcg_pipe_update", all,
                                           d->jacobi ? &dcg_pipe_update_jacobi : &dcg_pipe_update,
                                           &pa, sizeof pa, rd, 2, w, 4));
    /* {r.u, w.u, r.r}; without a preconditioner u is r and w is kept in m: {r.r, m.r} */
    const double *u = d->jacobi ? d->pu : d->r, *wv = d->jacobi ? d->pw : d->pm;
    const double *lhs[3] = {d->r, wv, d->r}, *rhs[3] = {u, u, d->r};
    for (int k = 0; k < (d->jacobi ? 3 : 2); k++) {
        dot_args da;
        da.u = lhs[k];
        da.v = rhs[k];
        px_var *dr[2] = {d->v_r, d->v_vec[2]};
        DCG_TRY(d,
                px_engine_push_parallel_reduce(d->e, d->s, "cg_dot", all, &cg_dot, &da, sizeof da,
                                               &px_sum_f64, &d->loc[k].hi, dr, 2, &d->v_loc, 1));
    }
    return PX_OK;
}

static int push_replace(dcg *d);
static int issue_launch(dcg *d);

/* One CG iteration as engine ops, pushed without waiting (HPCG's CG loop body): the exchange
 * of p and Ap = A p overlapping it, the p.Ap allreduce, alpha, r -= alpha Ap with its sums and
 * their allreduce, the residual and beta, whose op then tests convergence and issues the next
 * iteration itself (next_launch), and x += alpha p and p = M^-1 r + beta p: the host pushes
 * the first and waits once for the whole solve (no host synchronisation per iteration). Every
 * iteration updates p (cg.c's last one only updates x): x is the same, the solve stops on the
 * residual. The pipelined CG's iteration is its own sequence (dcg.h, DCG_CG_PIPELINED).
 * Pushed by the host or from inside a scalar op (next_launch). */
static int push_iteration(dcg *d)
{
    if (d->variant == DCG_CG_PIPELINED) {
        /* the allreduce first: it travels while the exchange and the SpMV run */
        DCG_TRY(d, push_allreduce(d, 3));
        DCG_TRY(d, push_exchange(d, 2));
        DCG_TRY(d, push_spmv(d, 2));
        DCG_TRY(d, push_scalar(d, dcg_pipe_scalar, "dcg_pipe_scalar"));
        DCG_TRY(d, push_pipe_update(d));
    } else {
        DCG_TRY(d, push_exchange(d, 0));
        DCG_TRY(d, push_spmv(d, 0));
        DCG_TRY(d, push_allreduce(d, 2));
        DCG_TRY(d, push_scalar(d, dcg_alpha, "dcg_alpha"));
        DCG_TRY(d, push_update_r(d));
        DCG_TRY(d, push_allreduce(d, 2));
        DCG_TRY(d, push_scalar(d, dcg_beta, "dcg_beta"));
        DCG_TRY(d, push_update_xp(d));
    }
    return PX_OK;
}

/* The end of the scalar op that has an iteration's residual (dcg_beta, dcg_pipe_scalar):
 * books the iteration's time, prints progress on rank 0, and issues the next iteration unless
 * the residual is below the tolerance or the iteration limit is reached (the pipelined CG:
 * unless its scalar op said stop; when it asked for a residual replacement, push_replace's
 * ops come first). The same decision on every rank: global values. The next iteration's ops
 * (or launch) are pushed while this one's update is still to run: the Vars order them after
 * it (in DCG_GRAPH the launch is queued behind the running one: graph.h). Until session 22 a
 * separate last op (reading v_state) did this: one op an iteration more, 1-5 % of the small
 * matrices' 3-7 us iterations on 2 ranks (bench/RESULTS.md). A failed push fails the scalar
 * op, which wait_for_all reports. */
static int next_launch(dcg *d)
{
    const cg_options *o = d->o;
    const double t = cg_now();
    /* Only between launches both sampled or both not: a sampled pipelined scalar op also
     * waits for the SpMV's end clock, so the time from a sampled launch's end to an unsampled
     * one's can be short of an iteration (and the next one long). */
    if (d->clocks == d->iter_clocks && t - d->t_iter < d->min_iter)
        d->min_iter = t - d->t_iter;
    cg_note_iteration(d->res, t - d->t_iter);
    d->t_iter = t;
    d->iter_clocks = d->clocks;
    if (d->P->rank == 0 && o->progress && o->progress_s > 0.0 && t >= d->next_progress) {
        fprintf(o->progress, "  iteration %6lld  relres %.3e  elapsed %.1f s\n", (long long)d->it,
                d->relres, t - d->t0);
        fflush(o->progress);
        d->next_progress = t + o->progress_s;
    }
    if (d->variant == DCG_CG_PIPELINED ? d->stop : d->relres < o->tol || d->it >= o->max_iters)
        return PX_OK;
    if (d->replace) { /* ordered after this launch's update by the Vars, before the next */
        d->replace = 0;
        d->replacements++;
        d->clocks = 0; /* its exchanges are not in the message statistics */
        const int st = push_replace(d);
        if (st != PX_OK)
            return st;
    }
    return issue_launch(d);
}

/* Issue the next iteration: launch k (from 0) takes halo tag parity k mod 2 and is sampled
 * (d->clocks) when k is a multiple of clock_every; in DCG_GRAPH it launches the graph
 * recorded so, else it pushes the iteration's ops. Called for the first by dcg_first, and
 * for the others by the last scalar op of launch
 * k - 1 (next_launch); launch k's scalar ops cannot run before (they write v_state and
 * v_coef, which those ops write): they read d->clocks as set here. */
static int issue_launch(dcg *d)
{
    const int64_t k = d->launches++;
    d->clocks = k % d->clock_every == 0;
    d->clocked += d->clocks;
    if (d->mode == DCG_GRAPH) {
        DCG_TRY(d, px_graph_launch(d->g[d->clocks][k & 1]));
        return PX_OK;
    }
    return push_iteration(d);
}

/* DCG_PUSH's first iteration, pushed by the host as an op that writes v_coef and v_state, as
 * every later one is issued from inside a scalar op that holds them. Launch 0's last scalar op,
 * which issues launch 1 (next_launch), writes them too, so it cannot run before this op, and so
 * before every op of launch 0, was pushed. That matters: pushed by the host directly, a worker
 * could run it between the host's pushes of that scalar op and of the update after it, and
 * launch 1's pack and allreduce would queue ahead of launch 0's update. (A graph launch is one
 * queue entry: DCG_GRAPH's host launches iteration 0 itself, iterate.) */
static int dcg_first(const px_run_context *rc, void *arg)
{
    (void)rc;
    return issue_launch((dcg *)arg);
}

/* DCG_GRAPH: record one iteration twice, as d->g[c][0] (halo tag 100) and d->g[c][1] (tag
 * 101), the tags push_iteration alternates: with the clock ops (c = 1) and, when some launches
 * are not sampled (clock_every > 1), again without them (c = 0); of those four, the ones some
 * launch takes. Each graph's last scalar op (next_launch) launches the next one (graph.h: a launch
 * from inside an op is allowed; it is queued behind the running launch, whose Vars it shares, and
 * starts when that one ends). Recording runs nothing. */
static int record_both(dcg *d)
{
    const int64_t K = d->clock_every;
    for (int c = 1; c >= 0; c--)
        for (int k = 0; k < 2; k++) {
            /* Only the graphs some launch takes (issue_launch): sampled launches are the
             * multiples of K, all of parity 0 when K is even; with K = 2 the others are odd. */
            if (c ? k == 1 && K % 2 == 0 : K == 1 || (K == 2 && k == 0))
                continue;
            DCG_TRY(d, px_graph_begin(d->e));
            d->tag_parity = k;
            d->clocks = c;
            const int rc = push_iteration(d);
            const int rc_end = px_graph_end(d->e, &d->g[c][k]);
            if (rc != PX_OK)
                return rc; /* push_iteration wrote the message */
            DCG_TRY(d, rc_end);
        }
    d->tag_parity = 0;
    d->clocks = 0;
    return PX_OK;
}

/* record_both with persistent collectives: every rank records the same iteration, so its
 * allreduces (each writes v_glob) may be (parex/mpi.h; 0.36 us a 2-rank allreduce against
 * MPI_Iallreduce's 0.59). Where the MPI has none, MPI_Iallreduce as pushed. The process's
 * setting is put back after. */
static int record_graphs(dcg *d)
{
    int was = 0;
    const int persist = px_mpi_set_persistent_collectives(1, &was) == PX_OK;
    const int rc = record_both(d);
    if (persist)
        (void)px_mpi_set_persistent_collectives(was, NULL);
    return rc;
}

static void destroy_graphs(dcg *d)
{
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < 2; k++)
            if (d->g[c][k]) {
                (void)px_graph_destroy(d->g[c][k]);
                d->g[c][k] = NULL;
            }
}

/* Sum (or min/max) of one value over the ranks, blocking (setup and verification only). */
static int allreduce1(dcg *d, double *v, MPI_Op op)
{
    double in = *v;
    if (MPI_Allreduce(&in, v, 1, MPI_DOUBLE, op, d->comm) != MPI_SUCCESS) {
        snprintf(d->msg, d->msglen, "MPI_Allreduce failed");
        return PX_EMPI;
    }
    return PX_OK;
}

/* A dot product over the ranks (setup): kernel @p kdd with its compensated sum (d->dd), else
 * @p kplain with plain sums, summed over the ranks with MPI_Iallreduce, the nonblocking
 * collective the iterations' allreduce ops post (persistent ones in DCG_GRAPH); its value in
 * *out. The set-up's dots thereby make the process's first nonblocking collectives on the
 * communicator before the clock, as bench_cg_bsp's set-up makes its first MPI_Allreduce: with
 * MPI_Allreduce here, Open MPI's libnbc started inside the first launch, and its first
 * iteration took 300-450 us instead of 130-230 on 2 one-core ranks (bench/RESULTS.md,
 * session 29). Not through the engine: a rank whose engine cannot run it (a failed recording
 * state) must still reach the agreement before the first iteration. */
static int global_dot(dcg *d, const char *name, const px_kernel *kdd, const px_kernel *kplain,
                      const void *args, size_t size, double *out)
{
    cg_dd v = {0.0, 0.0};
    DCG_TRY(d, px_parallel_reduce(d->s, name, px_range(0, d->P->n_local), d->dd ? kdd : kplain,
                                  args, size, d->dd ? &cg_dd_sum : &px_sum_f64, dot_slot(d, &v)));
    DCG_TRY(d, px_fence(d->s));
    MPI_Request req;
    if (MPI_Iallreduce(MPI_IN_PLACE, &v, 1, d->dd_type, d->dd_op, d->comm, &req) != MPI_SUCCESS ||
        MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        snprintf(d->msg, d->msglen, "MPI_Iallreduce of %s failed", name);
        return PX_EMPI;
    }
    *out = cg_dd_value(&v);
    return PX_OK;
}

/* b = A 1, dinv, x = 0, r = b, p = M^-1 b; returns ||b|| and r.M^-1 r (global). */
static int setup(dcg *d, const cg_options *o, double *bnorm, double *rz)
{
    px_space *s = d->s;
    const px_range_policy all = px_range(0, d->P->n_local);
    rowop_args ro;
    ro.row_ptr = d->A.row_ptr;
    ro.col = d->A.col;
    ro.val = d->A.val;
    ro.y = d->b;
    DCG_TRY(d, px_parallel_for(s, "cg_row_sum", all, &cg_row_sum, &ro, sizeof ro));
    if (o->jacobi) {
        double dmin = HUGE_VAL;
        ro.y = d->dinv;
        DCG_TRY(d, px_parallel_reduce(s, "cg_diag_inv", all, &cg_diag_inv, &ro, sizeof ro,
                                      &px_min_f64, &dmin));
        DCG_TRY(d, allreduce1(d, &dmin, MPI_MIN));
        if (!(dmin > 0.0))
            return fail_everywhere(d,
                                   "Jacobi preconditioning needs a positive diagonal; smallest "
                                   "diagonal entry is %g",
                                   dmin);
    }
    dot_args da;
    da.u = d->b;
    da.v = d->b;
    double bb = 0.0;
    DCG_TRY(d, global_dot(d, "cg_dot", &cg_dot_dd, &cg_dot, &da, sizeof da, &bb));
    if (!(bb > 0.0) || !isfinite(bb))
        return fail_everywhere(
            d, "b = A * ones has norm^2 %g; CG needs a nonzero finite right-hand side", bb);
    *bnorm = sqrt(bb);
    init_args ia;
    ia.b = d->b;
    ia.dinv = o->jacobi ? d->dinv : NULL; /* allocated always, filled with Jacobi only */
    ia.x = d->x;
    ia.r = d->r;
    ia.p = d->p;
    ia.ap = d->ap;
    return global_dot(d, "cg_init", &cg_init_dd, &cg_init, &ia, sizeof ia, rz);
}

/* The pipelined CG's (re)start as ops, from u = M^-1 r in p (after cg_init or
 * dcg_pipe_residual) and alpha = beta = 0 in the coefficients: the exchange of p and w = A u,
 * m = M^-1 w with the other vectors zeroed (dcg_pipe_start), then the update, which moves
 * nothing and folds the next allreduce's sums {r.u, w.u, r.r}. */
static int push_pipe_start(dcg *d)
{
    DCG_TRY(d, push_exchange(d, 0));
    DCG_TRY(d, push_spmv(d, 0));
    const dcg_pipe_args pa = pipe_args(d); /* n: w = A u */
    px_var *w[3] = {d->v_r, d->v_vec[0], d->v_vec[2]};
    DCG_TRY(d, px_engine_push_parallel_for(d->e, d->s, "dcg_pipe_start", px_range(0, d->P->n_local),
                                           &dcg_pipe_start, &pa, sizeof pa, &d->v_ap, 1, w, 3));
    return push_pipe_update(d);
}

/* The pipelined CG's residual replacement (dcg.h), pushed by next_launch after a launch whose
 * scalar op asked for it (that launch made no step, so the coefficients are 0): the exchange
 * of x and A x, r = b - A x and u = M^-1 r (dcg_pipe_residual), then the restart of
 * push_pipe_start. */
static int push_replace_ops(dcg *d)
{
    DCG_TRY(d, push_exchange(d, 1));
    DCG_TRY(d, push_spmv(d, 1));
    const dcg_pipe_args pa = pipe_args(d); /* n: A x */
    px_var *w[2] = {d->v_r, d->v_vec[0]};
    DCG_TRY(d,
            px_engine_push_parallel_for(d->e, d->s, "dcg_pipe_residual", px_range(0, d->P->n_local),
                                        &dcg_pipe_residual, &pa, sizeof pa, &d->v_ap, 1, w, 2));
    return push_pipe_start(d);
}

/* push_replace_ops with its exchanges on tags 102 and 103 (tag_base), apart from the
 * iterations'. */
static int push_replace(dcg *d)
{
    d->tag_base = 102;
    const int rc = push_replace_ops(d);
    d->tag_base = 100;
    return rc;
}

static void abort_alone(const dcg *d, int rc);

/* The pipelined CG's start (before the clock, like the rest of the set-up): u = M^-1 r is in
 * p after cg_init; push_pipe_start with alpha = beta = 0, and wait. */
static int pipe_setup(dcg *d)
{
    d->stop = d->replace = d->replaced = d->stagnated = d->replaced_on_breakdown = 0;
    d->restart = 1;
    d->replacements = 0;
    d->last_true = HUGE_VAL;
    d->gamma_old = d->alpha_old = 1.0;
    d->coef[0] = d->coef[1] = 0.0;
    if (!d->on_host) {
        DCG_TRY(d, px_deep_copy(d->s, d->coef_d, d->host, d->coef, sizeof d->coef));
        DCG_TRY(d, px_fence(d->s));
    }
    memset(d->loc, 0, sizeof d->loc);
    const int rc = push_pipe_start(d);
    /* A push that failed here may have left this rank's halo sends unposted: its neighbours
     * would wait for them in their own start while this rank waits in the agreement after it,
     * so a failure here ends the job as one mid-solve does (dcg.h). A failure in the wait
     * below (a message or kernel that failed) comes after the sends were posted, and is
     * agreed on in iterate. */
    if (rc != PX_OK && d->P->nranks > 1)
        abort_alone(d, rc);
    if (rc != PX_OK)
        return rc;
    DCG_TRY(d, px_engine_wait_for_all(d->e));
    return PX_OK;
}

/* The iteration loop (cg.c's solve_with, distributed): push the first iteration, whose
 * last scalar op pushes the next (next_launch), and wait for the solve; the waiting thread runs the
 * ops itself (help-while-waiting, px_engine_wait_for_all). */
static int iterate(dcg *d, const cg_options *o, double bnorm, double rz, cg_result *res)
{
    d->o = o;
    d->rz = rz;
    d->bnorm = bnorm;
    d->relres = 1.0;
    d->it = 0;
    d->jacobi = o->jacobi;
    memset(d->loc, 0, sizeof d->loc);
    d->t0 = d->t_iter = cg_now();
    d->next_progress = d->t0 + o->progress_s;
    d->min_iter = HUGE_VAL;
    d->res = res;
    res->n_first_iters = 0;
    if (d->relres >= o->tol && o->max_iters > 0) {
        int rc = d->variant == DCG_CG_PIPELINED ? pipe_setup(d) : PX_OK;
        if (rc == PX_OK && d->mode == DCG_GRAPH)
            rc = record_graphs(d);
        /* The ranks agree that the recording worked (a rank whose recording failed makes
         * every rank return its status, where it used to end the job through abort_alone),
         * and start the clock together, as bench_cg_bsp does with
         * a barrier before its clock, so that no rank's seconds (the largest over ranks count)
         * include waiting for a slower rank's set-up. That skew measured 1-36 us at 16^3-48^3
         * a rank on 2 ranks: a tenth of a microsecond an iteration of 300 (bench/RESULTS.md,
         * session 18). The recording is set-up, not iteration time. */
        int all = rc;
        if (MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, d->comm) != MPI_SUCCESS) {
            snprintf(d->msg, d->msglen, "MPI_Allreduce before the first iteration failed");
            return PX_EMPI;
        }
        if (all != PX_OK) {
            if (rc == PX_OK)
                snprintf(d->msg, d->msglen, "another rank failed to %s its iteration (%s)",
                         d->variant == DCG_CG_PIPELINED ? "start or record" : "record",
                         px_strerror(all));
            d->collective = 1; /* every rank returns all */
            return all;
        }
        d->t0 = d->t_iter = cg_now();
        d->next_progress = d->t0 + o->progress_s;
        d->launches = d->clocked = 0;
        d->iter_clocks = 1; /* t0 to launch 0's end: launch 0 is sampled */
        /* DCG_GRAPH: the host launches iteration 0's graph itself; the launch op, ready at
         * push, starts on the host. Pushed as an op (dcg_first), the launch waited for the worker
         * that push woke: 200-290 us of an 18-iteration solve of HPCG 8^3 a rank on 2 one-core
         * ranks, 837 -> 552 us a solve (bench/RESULTS.md, session 28). The order is kept: the
         * launch holds every Var its graph uses, v_coef and v_state included, so launch 1,
         * which launch 0's last scalar op issues, still queues behind it. */
        if (d->mode == DCG_GRAPH) {
            rc = issue_launch(d);
        } else {
            px_var *w[2] = {d->v_coef, d->v_state};
            rc = px_engine_push_sync(d->e, dcg_first, d, host_context(), NULL, 0, w, 2,
                                     PX_FN_NORMAL, 0, "dcg_first");
        }
        if (rc != PX_OK) {
            snprintf(d->msg, d->msglen, "pushing the first iteration failed: %s", px_strerror(rc));
            return rc;
        }
    }
    const int rc = px_engine_wait_for_all(d->e);
    d->clocks = 0; /* the verification's exchange needs no clock ops */
    /* The graphs alternate the halo tags as the pushed iterations do: the verification's
     * exchange takes the next one. */
    if (d->mode == DCG_GRAPH) /* the pipelined CG's launches that made no step count too */
        d->tag_parity = (int)(d->launches & 1);
    if (rc != PX_OK) {
        /* A scalar op's message (d->collective) or a failed push's stays. */
        if (!d->msg[0])
            snprintf(d->msg, d->msglen, "iteration %lld failed: %s", (long long)(d->it + 1),
                     px_strerror(rc));
        return rc;
    }
    res->seconds = cg_now() - d->t0;
    res->relres = d->relres;
    res->min_iter_seconds = d->it > 0 ? d->min_iter : 0.0;
    res->iterations = d->it;
    res->converged = d->relres < o->tol;
    return PX_OK;
}

/* True residual ||b - A x|| / ||b|| and max |x - 1| (global). */
static int verify(dcg *d, double bnorm, cg_result *res)
{
    DCG_TRY(d, push_exchange(d, 1));
    DCG_TRY(d, push_spmv(d, 1));
    DCG_TRY(d, px_engine_wait_for_all(d->e));
    const px_range_policy all = px_range(0, d->P->n_local);
    check_args ca;
    ca.b = d->b;
    ca.ax = d->ap;
    ca.x = d->x;
    double res2 = 0.0, err = 0.0;
    DCG_TRY(d, px_parallel_reduce(d->s, "cg_resid2", all, &cg_resid2, &ca, sizeof ca, &px_sum_f64,
                                  &res2));
    DCG_TRY(d, px_parallel_reduce(d->s, "cg_max_err", all, &cg_max_err, &ca, sizeof ca, &px_max_f64,
                                  &err));
    DCG_TRY(d, allreduce1(d, &res2, MPI_SUM));
    DCG_TRY(d, allreduce1(d, &err, MPI_MAX));
    res->true_relres = sqrt(res2) / bnorm;
    res->max_abs_err = err;
    return PX_OK;
}

/* Allocate the vectors, buffers and Vars of @p d (d->P, s, e, comm set). */
static int dcg_alloc(dcg *d)
{
    const cgp_part *P = d->P;
    px_space *s = d->s;
    const size_t nl = (size_t)P->n_local * sizeof(double) + 8;
    const size_t ne = (size_t)P->n_ext * sizeof(double) + 8;
    d->n_send = P->send_ptr[P->n_neighbors];
    if (dcg_dd_mpi_create(&d->dd_type, &d->dd_op) != PX_OK) {
        snprintf(d->msg, d->msglen, "creating the MPI datatype and op of the dot products failed");
        return PX_EMPI;
    }
    d->n_recv = P->recv_ptr[P->n_neighbors];
    /* A host space reads the partition's own arrays; a device gets a copy. A copy on the host
     * cost memory (the matrix twice) and, on this VM, time: glibc put it in the brk heap (an
     * earlier free had raised its mmap threshold), where the SpMV ran 6-11 % slower than on the
     * partition's mmap'ed arrays or on a copy mmap'ed through glibc's mmap_threshold tunable
     * (bench/RESULTS.md, session 17: 2 one-core ranks, 48^3 and 64^3 a rank, 0.94x and 0.97x
     * an iteration without the copy). */
    if (d->on_host)
        DCG_TRY(d, cg_matrix_wrap(s, P->n_local, P->nnz, P->row_ptr, P->col, P->val, &d->A));
    else
        DCG_TRY(d, cg_matrix_upload(s, P->n_local, P->nnz, P->row_ptr, P->col, P->val, &d->A));
    d->send_idx = (int32_t *)px_malloc(s, (size_t)d->n_send * sizeof(int32_t) + 8);
    d->b = (double *)px_malloc(s, nl);
    d->r = (double *)px_malloc(s, nl);
    d->ap = (double *)px_malloc(s, nl);
    d->dinv = (double *)px_malloc(s, nl);
    d->x = (double *)px_malloc(s, ne);
    d->p = (double *)px_malloc(s, ne);
    d->send_d = (double *)px_malloc(s, (size_t)d->n_send * sizeof(double) + 8);
    d->send_h = d->on_host ? d->send_d
                           : (double *)px_malloc(d->host, (size_t)d->n_send * sizeof(double) + 8);
    d->recv_h =
        d->on_host ? NULL : (double *)px_malloc(d->host, (size_t)d->n_recv * sizeof(double) + 8);
    int pipe_ok = 1;
    if (d->variant == DCG_CG_PIPELINED) {
        /* m with its halo; w, u and q are Jacobi's alone (dcg_pipe_args) */
        d->pm = (double *)px_malloc(s, ne);
        d->pz = (double *)px_malloc(s, nl);
        d->ps = (double *)px_malloc(s, nl);
        if (d->jacobi) {
            d->pw = (double *)px_malloc(s, nl);
            d->pu = (double *)px_malloc(s, nl);
            d->pq = (double *)px_malloc(s, nl);
        }
        pipe_ok = d->pm && d->pz && d->ps && (!d->jacobi || (d->pw && d->pu && d->pq));
    }
    if (!d->send_idx || !d->b || !d->r || !d->ap || !d->dinv || !d->x || !d->p || !d->send_d ||
        !d->send_h || (!d->on_host && !d->recv_h) || !pipe_ok) {
        snprintf(d->msg, d->msglen, "out of memory for vectors of %lld doubles",
                 (long long)P->n_ext);
        return PX_ENOMEM;
    }
    DCG_TRY(
        d, px_deep_copy(s, d->send_idx, d->host, P->send_idx, (size_t)d->n_send * sizeof(int32_t)));
    DCG_TRY(d, px_fence(s));
    d->cp_send.dst_s = d->host;
    d->cp_send.dst = d->send_h;
    d->cp_send.src_s = s;
    d->cp_send.src = d->send_d;
    d->cp_send.bytes = (size_t)d->n_send * sizeof(double);
    for (int k = 0; k < 3; k++) {
        double *vec = exchanged(d, k); /* m only in the pipelined CG */
        d->cp_recv[k].dst_s = s;
        d->cp_recv[k].dst = vec ? vec + P->n_local : NULL;
        d->cp_recv[k].src_s = d->host;
        d->cp_recv[k].src = d->recv_h;
        d->cp_recv[k].bytes = (size_t)d->n_recv * sizeof(double);
    }
    d->coef_d = d->on_host ? d->coef : (double *)px_malloc(s, sizeof d->coef);
    if (!d->coef_d) {
        snprintf(d->msg, d->msglen, "out of memory for the CG coefficients");
        return PX_ENOMEM;
    }
    d->cp_coef.dst_s = s;
    d->cp_coef.dst = d->coef_d;
    d->cp_coef.src_s = d->host;
    d->cp_coef.src = d->coef;
    d->cp_coef.bytes = sizeof d->coef;
    d->v_halo = (px_var **)calloc((size_t)P->n_neighbors + 1, sizeof(px_var *));
    d->v_bnd = (px_var **)calloc((size_t)P->n_neighbors + 4,
                                 sizeof(px_var *)); /* 3 + halo Vars or v_hdev */
    if (!d->v_halo || !d->v_bnd)
        return PX_ENOMEM;
    for (int k = 0; k < P->n_neighbors; k++)
        if (!(d->v_halo[k] = px_var_new(d->e)))
            return PX_ENOMEM;
    px_var **vs[] = {&d->v_vec[0], &d->v_vec[1], &d->v_vec[2], &d->v_hdev,
                     &d->v_send,   &d->v_ap,     &d->v_r,      &d->v_loc,
                     &d->v_glob,   &d->v_clk_h,  &d->v_clk_i,  &d->v_clk_l,
                     &d->v_coef,   &d->v_state,  &d->v_scr,    &d->v_clk_b};
    for (size_t k = 0; k < sizeof vs / sizeof vs[0]; k++)
        if (!(*vs[k] = px_var_new(d->e)))
            return PX_ENOMEM;
    return PX_OK;
}

static void dcg_release(dcg *d)
{
    if (d->e) {
        (void)px_engine_wait_for_all(d->e);
        destroy_graphs(d);
        px_var *vs[] = {d->v_vec[0], d->v_vec[1], d->v_vec[2], d->v_hdev,  d->v_send,  d->v_ap,
                        d->v_r,      d->v_loc,    d->v_glob,   d->v_clk_h, d->v_clk_i, d->v_clk_l,
                        d->v_coef,   d->v_state,  d->v_scr,    d->v_clk_b};
        for (size_t k = 0; k < sizeof vs / sizeof vs[0]; k++)
            if (vs[k])
                (void)px_var_delete(d->e, vs[k]);
        for (int k = 0; d->v_halo && k < d->P->n_neighbors; k++)
            if (d->v_halo[k])
                (void)px_var_delete(d->e, d->v_halo[k]);
        (void)px_engine_wait_for_all(d->e);
    }
    free(d->v_halo);
    free(d->v_bnd);
    dcg_dd_mpi_free(&d->dd_type, &d->dd_op);
    double *vecs[] = {d->b,  d->r,  d->ap, d->dinv, d->x,  d->p,     d->pm,
                      d->pw, d->pu, d->pq, d->pz,   d->ps, d->send_d};
    for (size_t k = 0; k < sizeof vecs / sizeof vecs[0]; k++)
        (void)px_free(d->s, vecs[k]);
    (void)px_free(d->s, d->send_idx);
    if (!d->on_host) {
        (void)px_free(d->s, d->coef_d);
        (void)px_free(d->host, d->send_h);
        (void)px_free(d->host, d->recv_h);
    }
    cg_matrix_free(&d->A);
}

/* Global figures: times as the largest over ranks, stats summed; byte/flop model of cg.c. */
static int finish_stats(dcg *d, const cg_options *o, cg_result *res, dcg_stats *st)
{
    const cgp_part *P = d->P;
    /* The sampled launches' sums stand for all launches' (every rank samples the same ones) */
    const double scale = d->clocked > 0 ? (double)d->launches / (double)d->clocked : 0.0;
    /* first_iters_seconds stays rank 0's (the JSON's): a largest over ranks entry by entry
     * could add up to more than the solve's seconds, each entry's maximum on another rank. */
    double mx[3] = {res->seconds, res->min_iter_seconds, scale * d->window_s};
    double sm[5] = {8.0 * (double)d->n_recv, scale * d->msg_s, scale * d->exposed_s,
                    scale * d->allred_s, scale * d->window_s};
    if (MPI_Allreduce(MPI_IN_PLACE, mx, 3, MPI_DOUBLE, MPI_MAX, d->comm) != MPI_SUCCESS ||
        MPI_Allreduce(MPI_IN_PLACE, sm, 5, MPI_DOUBLE, MPI_SUM, d->comm) != MPI_SUCCESS) {
        snprintf(d->msg, d->msglen, "MPI_Allreduce of the statistics failed");
        return PX_EMPI;
    }
    res->seconds = mx[0];
    res->min_iter_seconds = mx[1];
    st->ranks = P->nranks;
    int thr = px_space_concurrency(d->s);
    if (MPI_Bcast(&thr, 1, MPI_INT, 0, d->comm) != MPI_SUCCESS)
        return PX_EMPI;
    st->threads_per_rank = thr;
    st->compensated = d->dd;
    st->replacements = d->replacements;
    st->stagnated = d->stagnated;
    st->clock_every = d->clock_every;
    st->clock_samples = d->clocked;
    st->halo_bytes = sm[0];
    st->message_seconds = sm[1];
    st->exposed_seconds = sm[2];
    st->allreduce_seconds = sm[3];
    st->window_seconds = sm[4];
    st->window_seconds_max = mx[2];
    st->comm_seconds = (sm[2] + sm[3]) / (double)P->nranks;
    st->overlap = sm[1] > 0.0 ? 1.0 - sm[2] / sm[1] : NAN;
    const double dn = (double)P->n_global, dnnz = (double)P->nnz_global;
    const double di = (double)res->iterations;
    if (d->variant == DCG_CG_PIPELINED) {
        /* The SpMV as cg.c's (12 nnz + 24 n + 8, its unused dot's 2 n flops not counted),
         * then the fused update: 7 vectors read and 6 written, 16 flops a row with its two
         * sums; with Jacobi 11 read (dinv too) and 9 written, 23 flops with three. */
        res->bytes = di * (12.0 * dnnz + 24.0 * dn + 8.0 + (o->jacobi ? 160.0 : 104.0) * dn);
        res->flops = di * (2.0 * dnnz + (o->jacobi ? 23.0 : 16.0) * dn);
        return PX_OK;
    }
    /* cg.c's model, with the x and p update on every iteration (dcg.c's last one updates p
     * too, where cg.c's only updates x). */
    const double extra = o->jacobi ? 8.0 * dn : 0.0;
    res->bytes = di * (12.0 * dnnz + 24.0 * dn + 8.0 + 24.0 * dn + extra + 40.0 * dn + extra);
    res->flops =
        di * (2.0 * dnnz + 2.0 * dn + (o->jacobi ? 7.0 : 4.0) * dn + (o->jacobi ? 5.0 : 4.0) * dn);
    return PX_OK;
}

/* A failure this rank saw alone, after the ranks last agreed: the others wait (forever) for
 * its next halo message or allreduce and cannot be told, so end the job (dcg.h). */
static void abort_alone(const dcg *d, int rc)
{
    fprintf(stderr, "dcg_solve: rank %d of %d failed alone (%s): %s; calling MPI_Abort\n",
            d->P->rank, d->P->nranks, px_strerror(rc), d->msg[0] ? d->msg : "no message");
    fflush(stderr);
    MPI_Abort(d->comm, 1);
}

int dcg_solve(px_space *s, MPI_Comm comm, const cgp_part *part, const cg_options *o,
              const dcg_params *prm, cg_result *res, dcg_stats *st)
{
    if (!s || !part || !o || !prm || !res || !st)
        return PX_EFAULT;
    memset(res, 0, sizeof *res);
    memset(st, 0, sizeof *st);
    const dcg_mode mode = prm->mode;
    if (mode != DCG_PUSH && mode != DCG_GRAPH) {
        snprintf(res->message, sizeof res->message,
                 "dcg_solve: mode %d is not DCG_PUSH or DCG_GRAPH", (int)mode);
        return PX_EINVAL;
    }
    if (prm->variant != DCG_CG_PLAIN && prm->variant != DCG_CG_PIPELINED) {
        snprintf(res->message, sizeof res->message,
                 "dcg_solve: variant %d is not DCG_CG_PLAIN or DCG_CG_PIPELINED",
                 (int)prm->variant);
        return PX_EINVAL;
    }
    if (prm->interior_chunk < 0) {
        snprintf(res->message, sizeof res->message, "dcg_solve: interior_chunk %lld is negative",
                 (long long)prm->interior_chunk);
        return PX_EINVAL;
    }
    if (prm->clock_every < 0) {
        snprintf(res->message, sizeof res->message, "dcg_solve: clock_every %lld is negative",
                 (long long)prm->clock_every);
        return PX_EINVAL;
    }
    if (prm->plain_dots != 0 && prm->plain_dots != 1) {
        snprintf(res->message, sizeof res->message, "dcg_solve: plain_dots %d is not 0 or 1",
                 prm->plain_dots);
        return PX_EINVAL;
    }
    dcg d;
    memset(&d, 0, sizeof d);
    d.interior_chunk = prm->interior_chunk;
    d.clock_every = prm->clock_every > 0 ? prm->clock_every : DCG_CLOCK_EVERY_DEFAULT;
    d.e = px_engine_default();
    d.s = s;
    d.host = px_space_by_name("serial");
    d.comm = comm;
    d.P = part;
    d.mode = mode;
    d.variant = prm->variant;
    d.tag_base = 100;
    d.jacobi = o->jacobi; /* dcg_alloc: the pipelined CG's Jacobi vectors */
    d.dd_type = MPI_DATATYPE_NULL;
    d.dd_op = MPI_OP_NULL;
    /* PX_CG_HOST_STAGING=1 takes the device path (staging buffers, copy ops, two reductions
     * instead of the pair reducer) on a host space too, so tests run it without a GPU. */
    const char *stage = getenv("PX_CG_HOST_STAGING");
    d.on_host = px_space_host_accessible(s) == 1 && !(stage && strcmp(stage, "1") == 0);
    d.dd = d.on_host && !prm->plain_dots;
    d.msg = res->message;
    d.msglen = sizeof res->message;
    int rc = d.e ? dcg_alloc(&d) : PX_ENODEV;
    double bnorm = 0.0, rz = 0.0;
    /* Every rank must agree before the next collective step (a rank that failed alone would
     * leave the others waiting in a message). */
    int all = rc;
    if (MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        all = PX_EMPI;
    const int agreed = all;
    if (all == PX_OK)
        all = setup(&d, o, &bnorm, &rz);
    if (all == PX_OK)
        all = iterate(&d, o, bnorm, rz, res);
    if (all == PX_OK)
        all = verify(&d, bnorm, res);
    if (all == PX_OK)
        all = finish_stats(&d, o, res, st);
    if (agreed == PX_OK && all != PX_OK && !d.collective && part->nranks > 1)
        abort_alone(&d, all); /* only global values (d.collective) fail every rank alike */
    if (agreed != PX_OK && rc == PX_OK && res->message[0] == '\0')
        snprintf(res->message, sizeof res->message, "another rank failed (%s)", px_strerror(all));
    dcg_release(&d);
    return all;
}
