/*
 * examples/cg/dcg.h - distributed (MPI) Conjugate Gradient on parex engine ops.
 *
 * Each rank owns a part of the matrix (partition.h) and runs the same CG as cg.c on its rows,
 * with the same kernels (cg_kernels.h) launched as engine ops on a parex space. Per iteration:
 *
 *   halo receives (px_engine_push_mpi_irecv, one per neighbour, each writing its halo Var)
 *   pack kernel   (dcg_pack: boundary values of p into the send buffer, writes the send Var)
 *   halo sends    (px_engine_push_mpi_isend, reading the send Var)
 *   interior SpMV (cg_spmv_dot on rows [0, n_interior): reads p's owned part, not the halo, so
 *                  it runs while the messages travel; the thread that packs posts the sends
 *                  before it takes these rows: an MPI op runs on the thread that makes it
 *                  ready, parex/engine.h)
 *   boundary SpMV (cg_spmv_dot on rows [n_interior, n_local): reads the halo Vars)
 *   p.Ap          local sums of both SpMVs, then px_engine_push_mpi_allreduce
 *   alpha         dcg_alpha: a host op computes alpha = rz / p.Ap from the reduced value
 *   r update      (dcg_update_r / _pair / _rz: cg.c's, alpha read at run time) and its local
 *                 sums, then an allreduce
 *   beta          dcg_beta: the residual and beta = rz' / rz; then it pushes the next
 *                 iteration (DCG_PUSH) or launches the recorded iteration graph again
 *                 (DCG_GRAPH) unless converged or at the limit (the Vars order the next
 *                 iteration's ops after this one's x, p update)
 *   x, p update   (dcg_update_xp / _jacobi)
 *
 * The scalars live in memory the engine protects with Vars (v_coef, v_state), so nothing
 * waits for an allreduce on the host: the host pushes the first iteration and waits once for
 * the solve (px_engine_wait_for_all, which runs ops on the waiting thread meanwhile).
 * On a space the host cannot address (cuda), the MPI buffers are host staging buffers, copied
 * by engine ops (px_deep_copy) after the pack kernel and before the boundary SpMV; MPI never
 * sees device memory (no CUDA-aware MPI assumed).
 *
 * Dot products. On host spaces every dot (and the local sums of each allreduce) is a
 * compensated double-double sum (cg_dd.h), joined over threads by a custom reducer and over
 * ranks by a user MPI op, and rounded once: the result does not depend on the rank count,
 * the partition or the threads per rank, so neither do the iterations or the error. The
 * staging path (cuda, PX_CG_HOST_STAGING=1) sums plainly (custom reducers have no device half).
 */
#ifndef PAREX_EXAMPLES_CG_DCG_H
#define PAREX_EXAMPLES_CG_DCG_H

#include "cg.h"
#include "partition.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * How dcg_solve issues its iterations (parex-cg --engine push|graph).
 * DCG_PUSH: the ops of each iteration are pushed one by one (px_engine_push_*), the next
 * iteration's by the scalar op of the previous one that has its residual.
 * DCG_GRAPH: one iteration is recorded once per solve as a px_graph (parex/graph.h; two
 * copies, one per halo tag, and two more without the clock ops: dcg_params.clock_every), and each
 * iteration is one px_graph_launch, made by that scalar op of the previous launch: no per-op Var
 * locking inside the iteration. The same ops, in the same dependency order, so the same arithmetic:
 * iterations and errors equal DCG_PUSH's. (The pipelined CG's residual replacements are pushed
 * between two launches in both modes.) Either way the host waits once per solve. (CUDA graphs /
 * Kokkos Experimental::Graph.)
 */
typedef enum dcg_mode { DCG_PUSH = 0, DCG_GRAPH = 1 } dcg_mode;

/**
 * Which CG recurrence dcg_solve runs (parex-cg --cg plain|pipelined).
 *
 * DCG_CG_PLAIN: HPCG's CG (the op sequence at the top of this file): two allreduces an
 * iteration, each waited for by the scalar op that reads it, with nothing else to do meanwhile.
 *
 * DCG_CG_PIPELINED: Ghysels and Vanroose's pipelined CG (2014; PETSc's KSPPIPECG, with Jacobi
 * their preconditioned Algorithm 3), bench_cg_bsp's --cg pipelined-nb on engine ops. One
 * allreduce an iteration, of {gamma = r.u, delta = w.u, r.r} (u = M^-1 r, w = A u; without a
 * preconditioner u = r and r.r is gamma), posted before the halo exchange of m = M^-1 w and
 * the SpMV n = A m, so that the allreduce travels while the exchange and the SpMV run:
 *
 *   allreduce  (px_engine_push_mpi_allreduce of the sums the last update folded)
 *   halo exchange of m, interior SpMV, boundary SpMV (n = A m), as plain CG's of p
 *   scalars    dcg_pipe_scalar: relres from r.r; stop, replace, or alpha and beta; then
 *              the next launch, as dcg_beta's
 *   update     one fused pass: z = n + beta z, q = m + beta q, s = w + beta s,
 *              p = u + beta p, x += alpha p, r -= alpha s, u -= alpha q, w -= alpha z,
 *              m = M^-1 w, and the next iteration's sums
 *
 * Ten vectors with Jacobi (seven without) instead of five, and in exact arithmetic plain CG's
 * iterates. In floating point the recursively updated residual drifts from b - A x further
 * than plain CG's (Cools et al. 2018, "residual gap"), and past the attainable accuracy the
 * recurrences run on rounding noise until alpha turns non-positive. So the scalar op
 * replaces the residual (r = b - A x, u = M^-1 r, w = A u, and a restart: beta = 0 on the
 * next step) where the solve would otherwise stop or fail:
 *
 *   - the recursive ||r|| is below the tolerance: the solve stops only when the replaced,
 *     true residual is below it too (else it goes on from b - A x);
 *   - alpha is not positive and finite after at least one step since the last (re)start
 *     (on the first step after one it is u.Au <= 0: a genuine breakdown, an error);
 *   - a replacement whose true residual is above the tolerance and not 10 % below the last
 *     replacement's ends the solve: as stagnated (dcg_stats.stagnated, not converged) where
 *     rounding limits the accuracy (HPCG 16^3 a rank: about 1e-15); as a breakdown error
 *     when that replacement followed a breakdown and the true residual is still above
 *     sqrt(eps) (an indefinite matrix that breaks down after some steps; plain CG reports
 *     its p.Ap <= 0 there; an ill-conditioned SPD matrix whose pipelined recurrences cannot
 *     bring the true residual below sqrt(eps) is reported alike, pointing to --cg plain).
 *     The first replacement has no reference and always goes on.
 *
 * This is the true-residual check at convergence of Trilinos Belos' implicit residual test
 * and a restart on breakdown; Cools et al.'s automated criterion (PETSc's KSPPIPECGRR), which
 * also replaces mid-solve, fired every 9-40 iterations on these matrices in a prototype
 * (its worst-case gap estimates ran 600-900x the measured gap; bench/RESULTS.md, session
 * 20), and is not used. A replacement costs the launch that makes no step, two exchanges
 * (tags 102 and 103) and two SpMVs, about three iterations' worth, and is counted in
 * dcg_stats.replacements; a converging solve makes at least one (the check), one more for
 * each breakdown on the way and each check that found the true residual above the tolerance
 * but falling. The replacement's ops are pushed by the scalar op, before the next launch, also
 * under DCG_GRAPH (not recorded: the Vars order them after the running launch). The stopping
 * launch makes no step either (its update runs with alpha = beta = 0, so x stays): the
 * launches that make no step spend one more allreduce, exchange, SpMV and (empty) update
 * each, which the seconds include and the iterations do not count (bench_cg_bsp's loop
 * spends the exchange and the SpMV of the last, not the update). The replacement's exchanges
 * are not in the message statistics.
 */
typedef enum dcg_variant { DCG_CG_PLAIN = 0, DCG_CG_PIPELINED = 1 } dcg_variant;

/**
 * What the distributed run adds to cg_result (see the README for the exact definitions).
 *
 * The time sums (message, exposed, window, allreduce seconds) come from clock ops issued in
 * one launch of dcg_params.clock_every (launches 0, K, 2K, ...; a launch is an iteration, or
 * one of DCG_CG_PIPELINED's that make no step): the sampled launches' sums times launches /
 * clock_samples, an estimate of every launch's sum, exact with clock_every 1. Launch 0 is
 * always sampled, and it holds the first start of its graph's persistent requests (DCG_GRAPH):
 * over a solve of few launches that start weighs K times what it would weigh unsampled.
 */
typedef struct dcg_stats {
    int ranks;                 /**< Size of the communicator. */
    int threads_per_rank;      /**< px_space_concurrency of the space on rank 0. */
    int compensated;           /**< 1 when the dots were compensated sums (a host space without
                                    dcg_params.plain_dots), 0 when plain. */
    double halo_bytes;         /**< Halo bytes received per exchange (one per iteration), summed
                                    over ranks. */
    double message_seconds;    /**< Sum over ranks and iterations (estimated from the sampled
                                    launches, as every time below) of t(halos in) -
                                    t(receives posted). */
    double exposed_seconds;    /**< Sum over ranks and iterations of
                                    max(0, t(halos in) - t(interior SpMV done)). */
    double window_seconds;     /**< Sum over ranks and iterations of t(interior SpMV done) -
                                    t(receives posted): the time the messages have to travel
                                    hidden, the most of message_seconds overlap can hide. */
    double window_seconds_max; /**< The largest over ranks of a rank's sum over iterations of
                                    that window (the rank whose window held the most work,
                                    such as the host's share of its messages). */
    double allreduce_seconds;  /**< Sum over ranks and allreduces of the time an allreduce
                                    held the iteration up: t(the op reading the result
                                    starts) - t(local contribution ready) for DCG_CG_PLAIN;
                                    for DCG_CG_PIPELINED that op's start less the later of
                                    t(local contribution ready) and t(SpMV done), at least
                                    0 (the part the exchange and the SpMV did not hide). */
    double comm_seconds;       /**< (exposed_seconds + allreduce_seconds) / ranks. */
    double overlap;            /**< 1 - exposed_seconds / message_seconds; NaN without
                                    messages. */
    int64_t replacements;      /**< DCG_CG_PIPELINED: residual replacements made (dcg_variant);
                                    0 for DCG_CG_PLAIN. */
    int stagnated;             /**< DCG_CG_PIPELINED: 1 when the solve stopped because a
                                    replacement's true residual, above the tolerance, was not
                                    10 % below the last one's (dcg_variant); cg_result.converged
                                    is then 0. */
    int64_t clock_every;       /**< One launch in this many was sampled (dcg_params). */
    int64_t clock_samples;     /**< Launches sampled on each rank (0 when none ran). */
} dcg_stats;

/**
 * parex-cg's interior piece (rows): about 80 us of HPCG rows on these VMs, near the engine's
 * 100 us between tests of a one-core rank's messages (PXI_PIECE_POLL_NS in the library). On
 * shared memory the pieces cost 0-3 %, within this VM's noise (bench/RESULTS.md, session 16:
 * 2 one-core ranks at 32^3-64^3, 0.96-1.03x one call, 10 rounds); over a shaped TCP link
 * with 72 KiB halos (96^3 a rank, 100 Mbit/s) they take an iteration from 1.06x the
 * bulk-synchronous CG to 0.77x (sessions 15 and 16).
 */
#define DCG_INTERIOR_CHUNK_DEFAULT 4096

/**
 * parex-cg's clock sampling: one launch in 8 carries the clock ops behind dcg_stats' times.
 * Each clock op is an engine op and a dependency step; the 5 of a pipelined iteration cost
 * 0.1-1 us of the 3-8 us iterations of the small matrices on 2 ranks (bench/RESULTS.md,
 * session 22), 1/8 of that sampled. A 300-iteration solve still samples 38 launches.
 */
#define DCG_CLOCK_EVERY_DEFAULT 8

/**
 * How dcg_solve runs: parex-cg's --engine, --interior-chunk, --dots, --cg and --clock-every.
 *
 * mode: how the iterations are issued (DCG_PUSH or DCG_GRAPH).
 *
 * variant: the CG recurrence (dcg_variant): DCG_CG_PLAIN or DCG_CG_PIPELINED.
 *
 * interior_chunk (rows, >= 0; default DCG_INTERIOR_CHUNK_DEFAULT): 0 runs the interior SpMV
 * as one call a thread (the automatic chunk); R > 0 cuts each thread's block into pieces of
 * about R rows, all of equal size and whole row groups of the SpMV (CG_SPMV_GROUP), between
 * which a rank bound to one core tests its outstanding messages (parex/mpi.h, "Progress"), so
 * a transport that needs the host to move a message (TCP, rendezvous messages past the eager
 * limit) moves it during the interior rows. A block of fewer than 2 R rows stays one call.
 * The values are the same either way with compensated dots (to rounding with plain dots on
 * more than one thread, whose partial sums then cover other rows).
 *
 * plain_dots: 0 (default) folds the dot products on host spaces as compensated sums (cg_dd.h),
 * which makes them, and so the iterations, independent of how the rows are split over ranks
 * and threads (the HPCG problem gives the same iterations and errors, to the bit, on 1 to 4
 * ranks). 1 folds them as plain double sums, as the bulk-synchronous baseline
 * (bench/bench_cg_bsp.c) and the device path do: the same arithmetic as the baseline, for
 * comparing the runtimes, at the cost of iterations that may move with the split (within the
 * 2 % the tests allow). The compensated folds cost 0-8 % of an iteration at 16^3-48^3 a rank
 * on 2 one-core ranks (bench/RESULTS.md, session 16).
 */
typedef struct dcg_params {
    dcg_mode mode;
    int64_t interior_chunk;
    int plain_dots;
    dcg_variant variant; /* DCG_CG_PLAIN (default, 0) or DCG_CG_PIPELINED (dcg_variant) */
    /* Launches, >= 0: one in clock_every carries the clock ops behind dcg_stats' times
     * (launches 0, K, 2K, ...); 1 clocks every launch; 0 takes DCG_CLOCK_EVERY_DEFAULT. The
     * others issue the same ops without them (in DCG_GRAPH, two more recorded graphs), so the
     * arithmetic, iterations and errors do not depend on it. */
    int64_t clock_every;
} dcg_params;

/**
 * Solve A x = b (b = A * ones, x0 = 0) by (Jacobi-preconditioned) CG over the ranks of
 * @p comm, each rank holding @p part (built on @p comm) and computing on @p s through the
 * default engine, as @p prm says (dcg_params). Collective: every rank calls it with the same
 * options and parameters. Results in @p res
 * are global (identical on every rank): iterations, converged, relres, true_relres,
 * max_abs_err; seconds and min_iter_seconds are the largest over ranks; flops and bytes
 * follow cg.c's model for the global matrix (DCG_CG_PIPELINED: its own, README.md).
 * @return PX_OK when the solve ran (converged or not); PX_EFAULT for a NULL pointer;
 *         PX_EINVAL for a mode that is not a dcg_mode, a variant that is not a dcg_variant,
 *         a negative interior_chunk or clock_every, a plain_dots other than 0 or 1 (message in
 *         res->message), or for an unsuitable matrix
 *         (as cg_solve, the message in res->message on every rank: a non-positive Jacobi
 *         diagonal, a zero right-hand side, a CG breakdown, a non-finite residual, all decided
 *         on global values); PX_ENOMEM or another status when allocating the vectors, buffers
 *         or Vars failed on some rank (agreed before the solve starts: "another rank failed"
 *         on the others), or when recording the DCG_GRAPH iteration failed on some rank
 *         (agreed before the first iteration: "another rank failed to record its iteration"
 *         on the others), or, DCG_CG_PIPELINED, when its start (pipe_setup in dcg.c: an
 *         exchange, an SpMV and the first update) failed in a message or kernel on some rank
 *         (agreed likewise: "another rank failed to start or record its iteration"). Every
 *         rank returns the same status.
 *
 * Messages. The halo messages use tags 100 and 101 (alternating exchanges; 102 and 103 for
 * DCG_CG_PIPELINED's residual replacements) on @p comm and the
 * dot products allreduce on it (MPI_Iallreduce; in DCG_GRAPH persistent allreduces, where the
 * MPI has them: every rank records the same graphs), posted by engine threads: pass a communicator
 * on which no other code sends messages with those tags or starts collectives during the solve (an
 * MPI_Comm_dup of the application's, if it has traffic of its own). parex-cg has none.
 * Mirrors the HPCG reference CG (ExchangeHalo, ComputeDotProduct's MPI_Allreduce), with the
 * messages as engine ops in StarPU-MPI's manner overlapping the interior SpMV.
 *
 * Failure of one rank alone. Once the ranks agreed that every one is set up, a failure only
 * this rank sees (a push, launch, op or message that failed here: PX_ENOMEM, PX_EMPI such as a
 * truncated halo message, a kernel's status) cannot be told to the other ranks, which wait
 * for this rank's next halo message or allreduce contribution with no time limit. On more
 * than one rank dcg_solve then prints "dcg_solve: rank R of P failed alone (status):
 * message; calling MPI_Abort" to stderr and calls MPI_Abort(comm, 1), which ends the whole
 * job (mpirun exits non-zero); it does not return. On one rank it returns the status. So
 * does a push that fails in the pipelined CG's start (its halo sends may not have been
 * posted, and the neighbours wait for them).
 */
int dcg_solve(px_space *s, MPI_Comm comm, const cgp_part *part, const cg_options *o,
              const dcg_params *prm, cg_result *res, dcg_stats *st);

#ifdef __cplusplus
}
#endif

#endif
