#!/usr/bin/env python3
"""bench/cg_model.py - the performance model of parex's distributed CG (issue 15).

Reads the measured runs (JSON lines written by bench/run_dcg.sh: parex-cg and bench_cg_bsp on
1-4 ranks) and the ping-pong / allreduce measurements (bench_pingpong --json), prints measured
against modelled time per iteration for every measured configuration (error %), and projects
time per iteration and parallel efficiency of the HPCG weak-scaling problem to 64, 1,024 and
16,384 ranks, with and without overlap.

  bench/cg_model.py --runs bench/dcg_data.txt --pingpong bench/dcg_pingpong.txt
                    [--calibration bench/dcg_calib.txt] [--latency-us 1.5 --bandwidth-gbs 12] [--project-grid N]
                    [--project-threads T] [--cores C] [--allreduces 2]
                    [--engine bench/dcg_engine.txt | --op-ns X] [--ops-per-iter 8,12,2]
  bench/cg_model.py --self-test      (its checks; run_dcg.sh runs them before measuring)

The model, per CG iteration of the slowest rank (the one with the most neighbours):

  compute    t_c = n_local * s_P(L, T) * nnz_scale: s_P the node-loaded single-rank rate,
             seconds per iteration per point of the slowest of K = P single-rank solves of the
             row's local box L (same program and code path, T threads each) launched as the
             row's P ranks (binding, environment, node load), no communication (run_dcg.sh's
             calibration, in every round beside the rows); rows of P T > C threads time-share
             the C cores in the calibration as in the row (the measured time-sharing term),
             and those of P > 1 ranks take the synchronized calibration where it exists: the
             row's P ranks solving P copies of L as one block-diagonal system (no halo, the
             allreduces: t_a is then inside t_c);
             nnz_scale: the worst rank's ghost columns by cg.c's byte model (12 nnz + 88 n).
             Fallbacks: s_K, K = min(P, C / T), times P T / C; without a calibration file the
             idle 1-rank row's rate. Projection: K = C / T, no time-sharing. --stat: the
             statistic over rounds (rows and calibrations alike; min by default).
  halo       t_h = sum over the rank's messages (one per neighbouring face, edge, corner), one
             after the other, of the measured ping-pong half round trip at that size (log-log
             interpolation on the curve's lower envelope; beyond it + bytes / the best bandwidth
             at >= 64 KiB) or latency + bytes / bandwidth of an assumed interconnect.
  allreduce  t_a = A * ceil(log2 P) * latency (A = 2 for CG: p.Ap and r.r, one double each),
             a recursive-doubling allreduce whose steps cost one small-message latency.
  SpMV part  f = (12 nnz/n + 24) / (12 nnz/n + 88) of t_c (the byte model of examples/cg/cg.c,
             nnz/n = 27 in the interior); the interior fraction g of the SpMV is the share of
             rows that touch no ghost.
  engine     (parex only) every MPI message costs c_msg more (bench_engine_pingpong's
             engine half round trip less plain MPI's, PX_ENGINE_INLINE_NS=0, ranks bound as the
             CG's; --msg-us X by hand), hidden with the halo where overlap hides it, never for
             the allreduces; and t_e = N_ops(P) c_op: c_op bench_engine's chain of empty ops
             handed to T workers pinned to T cores (--op-ns X by hand), N_ops(P) parex-cg's
             "engine_ops_per_iter" or --ops-per-iter A,B,C (A on one rank, B + C x neighbours
             on more; 8,12,2 counted in examples/cg/dcg.c at c203d68). parex's rate is its
             single-rank run's less N_ops(1) c_op. run_dcg.sh writes both to dcg_engine.txt.
  no overlap (bulk-synchronous):  t = t_h + t_c + t_a;  parallel efficiency = t_c(1) / t(P)
  overlap    (parex):             t = max(g f t_c, t_h) + (1 - g) f t_c + (1 - f) t_c + t_a + t_e
  pipelined  (parex-cg --cg pipelined, projection only): one allreduce an iteration, posted
             before the exchange and the SpMV and waited for after them, on a compute term
             scaled by the pipelined iteration's bytes, t_c' = t_c (12 nnz/n + 128) /
             (12 nnz/n + 88), whose SpMV share is f' = (12 nnz/n + 24) / (12 nnz/n + 128):
             t = max(t_a / A, max(g f' t_c', t_h) + (1 - g) f' t_c') + (1 - f') t_c' + t_e

Assumptions: printed with the tables (function assumptions), numbered.
"""
import argparse
import collections
import math
import os
import statistics
import sys

from cg_model_inputs import Engine, Network, json_lines, load_engine, load_pingpong, \
    reported_ops

PROJECT_RANKS = (64, 1024, 16384)
# The statistic over rounds of every measured and calibrated time per iteration (--stat).
STATS = {"median": statistics.median, "min": min,
         "lower-half": lambda v: statistics.median(sorted(v)[:(len(v) + 1) // 2])}
STAT, STAT_NAME = [statistics.median], ["median"]
# Which rows of P > 1 ranks take the synchronized calibration where it exists (--sync):
# "oversubscribed" (P T > C), or "all" of them.
SYNC = ["oversubscribed"]


# ---- geometry --------------------------------------------------------------------------------

def hpcg_shape(p):
    """The process grid of examples/cg/partition.c's cgp_process_grid (parex-cg and
    bench_cg_bsp use it): a >= b >= c with a b c = p and the least a - c, first found
    (2 -> 2x1x1, 4 -> 2x2x1, 64 -> 4x4x4, 1024 -> 16x8x8, 16384 -> 32x32x16)."""
    best = None
    for a in range(1, p + 1):
        if p % a:
            continue
        for b in range(1, a + 1):
            if (p // a) % b:
                continue
            c = p // a // b
            if c > b:
                continue
            if best is None or a - c < best[0]:
                best = (a - c, (a, b, c))
    return best[1]


def worst_rank_halo(procs, local):
    """Messages (bytes each) and interior row fraction of the rank with the most neighbours:
    per dimension, a neighbour below and above when the process grid has >= 3 there, one
    when it has 2, none when 1."""
    sides = [(0, 0) if p == 1 else (1, 0) if p == 2 else (1, 1) for p in procs]
    msgs = []
    for dz in (-1, 0, 1):
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                d = (dx, dy, dz)
                if d == (0, 0, 0):
                    continue
                ok, count = True, 1
                for k in range(3):
                    if d[k] < 0 and not sides[k][0] or d[k] > 0 and not sides[k][1]:
                        ok = False
                    count *= local[k] if d[k] == 0 else 1
                if ok:
                    msgs.append(8 * count)
    interior = 1.0
    for k in range(3):
        interior *= max(local[k] - sides[k][0] - sides[k][1], 0) / local[k]
    return msgs, interior


# ---- the model -------------------------------------------------------------------------------

def spmv_fraction(nnz_per_row=27.0, vector_bytes=88.0):
    return (12.0 * nnz_per_row + 24.0) / (12.0 * nnz_per_row + vector_bytes)


# Bytes a point of the pipelined CG's iteration moves over plain CG's (examples/cg/README.md's
# byte model: the SpMV's 24 n + 12 nnz, then 104 n in its fused update against plain CG's 64 n).
PIPE_VECTOR_BYTES = 128.0


def pipe_scale(nnz_per_row=27.0):
    return (12.0 * nnz_per_row + PIPE_VECTOR_BYTES) / (12.0 * nnz_per_row + 88.0)


def rank_sides(procs):
    """Neighbours of the worst rank along each axis: none, one (2 ranks there) or two."""
    return tuple(0 if q == 1 else 1 if q == 2 else 2 for q in procs)


def box_nnz(local, sides=(0, 0, 0)):
    """Stored entries of the 27-point rows of a box, ghost columns included: along an axis of
    L points with s neighbours, 3 L - 2 + s (point, offset) pairs stay inside the domain."""
    out = 1
    for length, side in zip(local, sides):
        out *= 3 * length - 2 + side
    return out


def nnz_scale(procs, local):
    """Compute of the worst rank's rows over the same box solved alone (no ghost columns) by
    cg.c's byte model, 12 nnz + 88 n bytes per iteration (1.01 for 32^3 on 2x1x1)."""
    n = local[0] * local[1] * local[2]
    return (12.0 * box_nnz(local, rank_sides(procs)) + 88.0 * n) / (12.0 * box_nnz(local)
                                                                    + 88.0 * n)


def model(procs, local, rate_s, net, allreduces, stretch=1.0, engine=None, threads=1,
          ops=None, ar_s=None, ar_in_compute=False):
    """Modelled seconds per iteration: dict with compute, halo, allreduce, engine, no_overlap,
    overlap (overlap includes the engine term). rate_s: seconds per iteration per local point;
    stretch: factor on n rate_s, at least 1 (time-sharing of the cores, ghost columns);
    engine: an Engine or None; ops: parex-cg's reported op count, if any; ar_s: one allreduce
    measured on time-shared cores (oversubscribed rows) instead of ceil(log2 P) latencies;
    ar_in_compute: rate_s is a synchronized calibration's, which ran the allreduces (and their
    engine messages) itself: no allreduce term."""
    p = procs[0] * procs[1] * procs[2]
    n = local[0] * local[1] * local[2]
    t_c = n * rate_s * stretch
    msgs, g = worst_rank_halo(procs, local) if p > 1 else ([], 1.0)
    c_msg = engine.msg_s if engine else 0.0
    t_h = sum(net.msg(b) + c_msg for b in msgs)
    step = ar_s if ar_s is not None else math.ceil(math.log2(p)) * net.alpha
    n_ar = allreduces if p > 1 and not ar_in_compute else 0  # allreduces the model adds
    t_a = n_ar * (step + c_msg)
    f = spmv_fraction()
    t_e = engine.seconds(p, len(msgs), threads, ops) if engine else 0.0
    n_ops = engine.ops(p, len(msgs), ops) if engine else 0
    no = t_h + t_c + t_a
    ov = max(g * f * t_c, t_h) + (1.0 - g) * f * t_c + (1.0 - f) * t_c + t_a + t_e
    # the pipelined CG: one allreduce, behind the exchange and the SpMV of a bigger iteration
    t_cp, fp = t_c * pipe_scale(), spmv_fraction(vector_bytes=PIPE_VECTOR_BYTES)
    spmv = max(g * fp * t_cp, t_h) + (1.0 - g) * fp * t_cp
    pipe = max(t_a / allreduces if n_ar else 0.0, spmv) + (1.0 - fp) * t_cp + t_e
    return {"compute": t_c, "halo": t_h, "allreduce": t_a, "engine": t_e, "ops": n_ops,
            "no_overlap": no, "overlap": ov, "pipelined": pipe, "messages": len(msgs),
            "halo_bytes": sum(msgs), "interior": g, "allreduces": n_ar}


# ---- measured runs ---------------------------------------------------------------------------

def load_runs(path):
    """Records {impl, scaling, ranks, threads, local, procs, oversubscribed, result}; a bare
    program JSON line (bench_cg_bsp --json) is taken as a weak-scaling record; calibration
    records (run_dcg.sh's CALIB file) are skipped."""
    runs = []
    for rec in json_lines(path):
        if rec.get("calibration"):
            continue
        res = rec.get("result", rec)
        ranks = rec.get("ranks", res.get("ranks", 1))
        local = rec.get("local", res.get("local"))
        if local is None:
            continue
        runs.append({
            "impl": rec.get("impl", res.get("impl", "parex")),
            "scaling": rec.get("scaling", "weak"),
            "ranks": ranks,
            "threads": rec.get("threads", res.get("threads_per_rank", res.get("threads", 1))),
            "local": tuple(local),
            "procs": tuple(rec.get("procs", res.get("procs", hpcg_shape(ranks)))),
            "oversubscribed": rec.get("oversubscribed", False),
            "result": res,
        })
    return runs


def group_runs(runs):
    groups = collections.defaultdict(list)
    for r in runs:
        k = (r["scaling"], r["impl"], r["ranks"], r["threads"], r["local"], r["procs"],
             r["oversubscribed"])
        groups[k].append(r["result"])
    return groups


def rates(groups, engine=None):
    """Without calibration: the 1-rank rows' seconds per iteration per point {(scaling, impl,
    threads): s}, fallback {(impl, threads): s}; parex's less N_ops(1) c_op."""
    by_series, by_impl = {}, collections.defaultdict(list)
    for (scaling, impl, ranks, threads, local, _procs, _o), res in groups.items():
        if ranks != 1:
            continue
        n = local[0] * local[1] * local[2]
        t1 = STAT[0]([r["seconds_per_iter"] for r in res])
        if impl == "parex" and engine:
            t1 -= engine.seconds(1, 0, threads, reported_ops(res))
        s = t1 / n
        by_series[(scaling, impl, threads)] = s
        by_impl[(impl, threads)].append(s)
    return by_series, {k: statistics.median(v) for k, v in by_impl.items()}


def rate_for(by_series, by_impl, scaling, impl, u):
    """s(u) for the series, else any single-rank run of impl, else s(1) / u (linear)."""
    for key, table in (((scaling, impl, u), by_series), ((impl, u), by_impl)):
        if key in table:
            return table[key], ""
    if u > 1:
        s1, how = rate_for(by_series, by_impl, scaling, impl, 1)
        if s1 is not None:
            return s1 / u, "s(1)/%d" % u
    return None, "no single-rank run"


# ---- the compute term: the node-loaded single-rank rate ---------------------------------------

def load_calibration(path):
    """run_dcg.sh's calibration lines ({"calibration": true, impl, instances, threads, local,
    engine, synchronized, oversubscribed, result}): {(impl, local, threads, instances, mode,
    synchronized): [result, ...]}; mode: parex's code path ("none": the shared-memory solver,
    "graph": dcg.c through the engine), "-" for bsp; synchronized: the instances were the ranks
    of one block-diagonal solve (False in files written before that existed)."""
    cal = collections.defaultdict(list)
    for rec in json_lines(path):
        if rec.get("calibration"):
            key = (rec["impl"], tuple(rec["local"]), rec["threads"], rec["instances"],
                   rec.get("engine") or "-" if rec["impl"] == "parex" else "-",
                   bool(rec.get("synchronized")))
            cal[key].append(rec["result"])
    return cal


class Compute:
    """t_c of a row of P ranks x T threads on C cores, local box L, from run_dcg.sh's
    calibration: K independent single-rank solves of box L, T threads each, same program and
    code path, launched together in the row's binding, no communication; s_K(L, T) the slowest
    instance's seconds per iteration per point, the --stat over rounds. P T <= C: K = P (each
    rank on T cores of its own), t_c = n s_P nnz_scale. P T > C (oversubscribed): K = P as well,
    bound as the row's P ranks, so that the calibration time-shares the C cores as the row does
    (scheduler slices, passive waits, OpenMP teams whose threads are not all running):
    t_c = n s_P nnz_scale, and n s_K' P T / C (K' = C / T, the share alone) is shown beside
    it as the time-sharing factor's analytic value. Without a calibration line: the idle
    single-rank rate of the 1-rank rows times max(1, P T / C) (old model)."""

    def __init__(self, cal, groups, engine, cores):
        self.cal, self.engine, self.cores = cal, engine, cores
        self.by_series, self.by_impl = rates(groups, engine)

    def loaded(self, impl, local, threads, k, ranks=1, sync=False):
        """(s, spread): seconds per iteration per point of the slowest of K instances (the
        --stat over rounds; parex less the engine term of the ops it reported), in the code
        path of a row of that many ranks, and the median over rounds of slowest / fastest
        instance; sync: of the synchronized calibration (K ranks of one block-diagonal solve);
        None without that calibration."""
        modes = ("-",) if impl != "parex" else ("none",) if ranks == 1 else ("graph", "push")
        res = next((self.cal[key] for key in ((impl, tuple(local), threads, k, m, sync)
                                              for m in modes) if key in self.cal), None)
        if not res:
            return None
        n = local[0] * local[1] * local[2]
        t = STAT[0]([r["seconds_per_iter"] for r in res])
        if impl == "parex" and self.engine:
            t -= self.engine.seconds(1, 0, threads, reported_ops(res))
        spread = statistics.median(
            max(v) / min(v) for v in (r.get("instance_seconds_per_iter") or
                                      [r["seconds_per_iter"]] for r in res))
        return t / n, spread

    def row(self, scaling, impl, p, t, local, procs):
        """(s, stretch, how, spread, calibrated, synced) of a measured row; s None: no rate;
        synced: s is the synchronized calibration's (rows of P > 1 ranks that have one:
        oversubscribed ones, all with --sync all), which includes the allreduces."""
        share = max(1.0, p * t / self.cores)
        ghost = nnz_scale(procs, local) if p > 1 else 1.0
        got = self.loaded(impl, local, t, p, p)
        if p > 1 and (share > 1 or SYNC[0] == "all"):
            synced = self.loaded(impl, local, t, p, p, sync=True)
            if synced:
                n = local[0] * local[1] * local[2]
                return synced[0], ghost, "s_%d synchronized%s" % (
                    p, "; independent %s" % fmt_ms(n * got[0] * ghost) if got else ""), \
                    None, True, True
        if got:
            return got[0], ghost, "s_%d%s" % (p, " time-shared" if share > 1 else ""), \
                got[1], True, False
        k = min(p, max(1, self.cores // t))
        got = self.loaded(impl, local, t, k, p)
        shared = " x %g shared" % round(share, 2) if share > 1 else ""
        if got:
            return got[0], ghost * share, "s_%d%s" % (k, shared), got[1], True, False
        s, how = rate_for(self.by_series, self.by_impl, scaling, impl, t)
        return s, ghost * share, "idle 1-rank row" + (" " + how if how else "") + shared, \
            None, False, False

    def analytic_share(self, impl, p, t, local, procs):
        """Oversubscribed rows: t_c = n s_K' nnz_scale P T / C (K' = C / T instances, the
        node's cores each busy once), the time-sharing factor alone, or None."""
        k = max(1, self.cores // t)
        got = self.loaded(impl, local, t, min(p, k), p)
        if not got or p * t <= self.cores:
            return None
        n = local[0] * local[1] * local[2]
        return n * got[0] * nnz_scale(procs, local) * p * t / self.cores


def fmt_ms(s):
    return "%.3f" % (s * 1e3)


# ---- output ----------------------------------------------------------------------------------

SYNC_NOTE = (
    "\n(1b') --sync all: rows of P > 1 ranks that do not time-share a core take the "
    "synchronized calibration too, where run_dcg.sh measured one (SYNC=all): ranks on cores of "
    "their own also meet at every allreduce, and there the slower one's disturbances (on this "
    "VM, two identical solves on their own cores differ by up to 46 % in a round) delay both "
    "every iteration; the slowest of K independent solves averages them away. The halo (and "
    "parex's engine term) is added to it as on the oversubscribed rows, no allreduce term;")


def assumptions(allreduces, calibrated, cores):
    head = ("(1) compute: a measured single-rank rate, the node-loaded one: K = P independent "
            "single-rank solves of the row's local box, same program, same code path (parex: "
            "its shared-memory solver for 1-rank rows, dcg.c through the engine on one rank "
            "for P > 1), T threads each, launched as the row's P ranks (mpirun's binding and "
            "environment; parex instances told the row's %d-core node rule through "
            "OMPI_COMM_WORLD_LOCAL_SIZE), no communication, in every round beside the rows "
            "(run_dcg.sh's calibration); K = 1 is the 1-rank row's own command line, so a "
            "1-rank row is predicted by an independent sample of itself: its error is the "
            "run-to-run reproducibility; the slowest instance's time per iteration: memory "
            "bandwidth and caches are shared as in the row; the worst rank's ghost columns by "
            "cg.c's byte model (12 nnz + 88 n);\n(1b) oversubscribed rows (P T > %d): the "
            "same K = P calibration time-shares the cores as the row does (scheduler slices, "
            "passive waits, OpenMP teams not all running), so the time-sharing term is measured, "
            "not the analytic share P T / %d (shown beside it as 's_K x P T / C'); where the "
            "row has P > 1 ranks, the synchronized calibration replaces it: the row's P ranks, "
            "launched as the row's, solving the block-diagonal matrix of P copies of the box "
            "(bench/hpcg_mtx.py, one block a rank: no halo, the same kernels and the same two "
            "allreduces an iteration), because ranks that share a core and meet at every "
            "allreduce wait there for a peer descheduled behind another rank's kernel, time "
            "that independent solves never spend; the model then adds the halo (and parex's "
            "engine term) to it and no allreduce term; without that calibration, each "
            "allreduce costs what bench_pingpong measured for P ranks on the row's time-shared "
            "cores instead of ceil(log2 P) latencies;%s\n(1c) statistics: rows and calibrations "
            "alike, the %s over rounds; the other statistic's error beside it (this VM's noise "
            "only ever slows a run and is bimodal: the minimum estimates the undisturbed time "
            "of both, the median lands in either mode with 5 rounds);" % (
                cores, cores, cores, SYNC_NOTE if SYNC[0] == "all" else "",
                STAT_NAME[0]) if calibrated else
            "(1) compute: the single-rank run of the same implementation with the same threads "
            "on an idle machine (no calibration file: no memory-bandwidth or cache sharing "
            "between ranks); rows of more threads than cores stretch it by P T / %d;" % cores)
    return ("Assumptions: " + head + "\n(2) halo: the worst rank's messages (one per "
            "neighbouring face, edge, corner) one after the other, each the measured ping-pong "
            "half round trip at its size (or latency + bytes / bandwidth); packing not "
            "counted;\n(3) allreduce = %d x ceil(log2 P) x latency per iteration (recursive "
            "doubling, one small-message latency a step);\n(4) overlap (parex) hides the halo "
            "behind the interior rows of the SpMV only, never the allreduces; parex adds the "
            "measured engine cost per op and per message;\n(4b) pipelined (projection "
            "only): one allreduce an iteration, hidden behind the halo exchange and the SpMV, "
            "never the update; its iteration moves 12 nnz + 128 n bytes against 12 nnz + 88 n "
            "and takes as many iterations as plain CG (true on HPCG; not on "
            "ill-conditioned matrices without a preconditioner: examples/cg/README.md);\n(5) no network contention or "
            "topology, no OS noise and no load imbalance beyond what the calibration's slowest "
            "instance shows; whatever the rows lose to those (waiting inside the halo exchange "
            "and the allreduces for a slower or descheduled rank: the measured halo and "
            "allreduce columns against the model's) is the model's residual, the error "
            "column;\n(6) the projection: every rank on T cores of a node whose cores all work "
            "(s_K, K = cores / T, no time-sharing), all 26 neighbours' messages at the "
            "network's parameters (also those on the same node), HPCG's process grid; matrix "
            "rows (METIS parts of a file) are not modelled." % allreduces)


def measured_row(key, res, comp, net, allreduces, engine):
    """(table line, error % or None, model s, measured s) of one measured configuration."""
    scaling, impl, p, t, local, procs, over = key
    meas = STAT[0]([r["seconds_per_iter"] for r in res])
    head = "| %s | %s | %dx%d | %s | %s | %s |" % (
        scaling, impl, p, t, "x".join(map(str, local)), "x".join(map(str, procs)), fmt_ms(meas))
    s, stretch, how, spread, calibrated, synced = comp.row(scaling, impl, p, t, local, procs)
    if s is None:
        return head + " - | - | %s | - | - | - | - | - | - |" % how, None, None, meas
    eng = engine if impl == "parex" else None
    ar_s = comp.measured_ar.get((p, 1)) if p * t > comp.cores else None
    m = model(procs, local, s, net, allreduces, stretch=stretch, engine=eng, threads=t,
              ops=reported_ops(res) if eng else None, ar_s=ar_s, ar_in_compute=synced)
    mod = m["overlap"] if impl == "parex" else m["no_overlap"]
    err = (mod - meas) / meas * 100.0
    definitional = p == 1 and not calibrated
    hm = [r.get("halo_seconds_per_iter") for r in res]
    am = [r.get("allreduce_seconds_per_iter") for r in res]
    hm = fmt_ms(STAT[0](hm)) if None not in hm else "-"
    am = fmt_ms(STAT[0](am)) if None not in am else "-"
    om = [r.get("overlap") for r in res]
    om = "%.2f" % statistics.median(om) if None not in om else "-"
    ov = "-"
    if impl == "parex" and m["halo"] > 0:
        hidden = min(m["halo"], m["interior"] * spmv_fraction() * m["compute"])
        ov = "%s / %.2f" % (om, hidden / m["halo"])
    et = "-"
    if eng:
        n_msg = m["messages"] + m["allreduces"]
        et = "%d x %.3f + %d x %.3f us = %s" % (
            m["ops"], engine.op_s(t) * 1e6, n_msg, engine.msg_s * 1e6,
            fmt_ms(m["engine"] + n_msg * engine.msg_s))
    bound = comp.analytic_share(impl, p, t, local, procs)
    line = head + " %s | %s | %s (%s) | %s | %s | %s / %s | %s / %s | %s | %s |" % (
        fmt_ms(mod), "(defines s)" if definitional else "%+.1f" % err, fmt_ms(m["compute"]),
        how, "%.2f" % spread if spread else "-", fmt_ms(bound) if bound else "-", hm,
        fmt_ms(m["halo"]), am, "in compute" if synced else fmt_ms(m["allreduce"]), ov, et)
    return line, None if definitional else err, mod, meas


def measured_table(groups, comp, net, cores, allreduces, engine, out):
    """Measured against modelled time per iteration; rows with more threads than cores apart."""
    order = sorted(groups, key=lambda k: (k[0], k[2], k[3], k[1], k[4]))
    for over, title in ((False, "ranks x threads <= cores: the model's domain"),
                        (True, "oversubscribed (more threads than cores): time-shared cores")):
        keys = [k for k in order if bool(k[6]) == over]
        if not keys:
            continue
        out("\n### Measured vs model, %s (time per iteration, ms; slowest rank)\n" % title)
        alt = "median" if STAT[0] is not statistics.median else "min"
        out("| scaling | impl | ranks x threads | local | procs | measured | model | error %% |"
            " error %% (%s) |" % alt +
            " compute model (rate) | calib. slowest/fastest | compute, s_K x P T / C |"
            " halo meas/model | allreduce meas/model | overlap meas/model |"
            " engine: ops x c_op + msgs x c_msg = ms |")
        out("|---|---|---|---|---|---:|---:|---:|---:|---|---:|---:|---|---|---|---|")
        errs, misses = collections.defaultdict(list), []
        for key in keys:
            line, err = measured_row(key, groups[key], comp, net, allreduces, engine)[:2]
            primary, STAT[0] = STAT[0], STATS[alt]  # the same row under the other statistic
            err2 = measured_row(key, groups[key], comp, net, allreduces, engine)[1]
            STAT[0] = primary
            cells = line.split(" | ")
            cells.insert(8, "-" if err2 is None else "%+.1f" % err2)
            out(" | ".join(cells))
            if err is not None and abs(err) > 20:
                misses.append(miss_line(key, groups[key], comp, net, allreduces, engine, err))
            if err is not None:
                what = "1 rank" if key[2] == 1 else "2 or more ranks"
                errs[(key[1], what, STAT_NAME[0])].append(abs(err))
                errs[(key[1], what, alt)].append(abs(err2))
        out("")
        for (impl, what, st), e in sorted(errs.items(), key=lambda i: i[0][2] != STAT_NAME[0]):
            out("Model error (%s over rounds), %s, %s rows of %s: max |error| %.1f%%, median "
                "%.1f%% (%d rows; target 20%%: %s)  " % (
                    st, impl, "oversubscribed" if over else "not oversubscribed", what, max(e),
                    statistics.median(e), len(e), "met" if max(e) <= 20 else "MISSED"))
        if misses:
            out("\nRows outside 20%% (%s): the model at the calibration's fastest and slowest "
                "round against the row's fastest and slowest round; the waits the row measured "
                "(bsp: halo + allreduce) against the model's communication.\n" % STAT_NAME[0])
            for m in misses:
                out("- " + m)


def miss_line(key, res, comp, net, allreduces, engine, err):
    """Why a row misses: the spread over rounds of the row and of the model's calibration
    (the model at the calibration's min and max round), and the measured communication."""
    primary, span = STAT[0], []
    for f in (min, max):
        STAT[0] = f
        span.append(measured_row(key, res, comp, net, allreduces, engine)[2:])
    STAT[0] = primary
    (mlo, rlo), (mhi, rhi) = span
    noise = mlo <= rhi and rlo <= mhi
    waits = [r.get("halo_seconds_per_iter", 0) + r.get("allreduce_seconds_per_iter", 0)
             for r in res if "halo_seconds_per_iter" in r]
    s, stretch, _, _, _, synced = comp.row(*key[:6])
    m = model(key[5], key[4], s, net, allreduces, stretch=stretch, ar_in_compute=synced)
    return ("%s %s %dx%d: error %+.1f%%; rounds %s-%s ms, model %s-%s ms: %s%s" % (
        key[0], key[1], key[2], key[3], err, fmt_ms(rlo), fmt_ms(rhi), fmt_ms(mlo),
        fmt_ms(mhi), "the ranges overlap (within this run's noise)" if noise else
        "the ranges do not overlap (a gap of the model)",
        "; measured waits %s ms against %s ms modelled" % (
            fmt_ms(STAT[0](waits)), fmt_ms(m["halo"] + m["allreduce"])) if waits else ""))
def allreduce_check(measured_ar, net, cores, out):
    if not measured_ar:
        return
    out("\n### Allreduce: measured vs ceil(log2 P) x latency (latency %.3f us)\n"
        % (net.alpha * 1e6))
    out("| ranks | doubles | measured us | model us | oversubscribed |")
    out("|---:|---:|---:|---:|---|")
    for (p, d), s in sorted(measured_ar.items()):
        out("| %d | %d | %.3f | %.3f | %s |" % (p, d, s * 1e6,
                                                 math.ceil(math.log2(p)) * net.alpha * 1e6,
                                                 "yes" if p > cores else ""))


def projection(rate_s, grid, threads, nets, allreduces, impl, out, engine=None, own=None):
    """own: parex's own node-loaded rate (dcg.c's path) for the "overlap + engine" column."""
    out("\n### Projection: HPCG weak scaling, %d^3 points per rank, %d thread(s) per rank, "
        "compute rate %s (%.3f ns per point per iteration)\n" % (grid, threads, impl,
                                                                 rate_s * 1e9))
    base = model((1, 1, 1), (grid,) * 3, rate_s, nets[0], allreduces)["no_overlap"]
    own = own or rate_s
    base_e = base * own / rate_s
    for net in nets:
        out("\nNetwork: %s (latency %.3f us, bandwidth %.3f GB/s)\n"
            % (net.label, net.alpha * 1e6, net.beta * 1e-9))
        out("| ranks | procs | messages | halo KiB | halo ms | allreduce ms | no overlap ms |"
            " efficiency | overlap ms | efficiency | pipelined ms | efficiency |%s" % (
                " overlap + engine ms | efficiency |" if engine else ""))
        out("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|%s" % (
            "---:|---:|" if engine else ""))
        for p in (1,) + PROJECT_RANKS:
            procs = hpcg_shape(p)
            # every rank has T cores of its own on a node whose cores all work: s_K, no
            # time-sharing; its ghost columns cost as in the measured rows
            sc = nnz_scale(procs, (grid,) * 3) if p > 1 else 1.0
            m = model(procs, (grid,) * 3, rate_s, net, allreduces, stretch=sc)
            extra = ""
            if engine:
                me = model(procs, (grid,) * 3, own, net, allreduces, stretch=sc,
                           engine=engine, threads=threads)
                extra = " %s | %.1f%% |" % (fmt_ms(me["overlap"]),
                                            100.0 * base_e / me["overlap"])
            out("| %d | %s | %d | %.1f | %s | %s | %s | %.1f%% | %s | %.1f%% | %s | %.1f%% |%s" % (
                p, "x".join(map(str, procs)), m["messages"], m["halo_bytes"] / 1024.0,
                fmt_ms(m["halo"]), fmt_ms(m["allreduce"]), fmt_ms(m["no_overlap"]),
                100.0 * base / m["no_overlap"], fmt_ms(m["overlap"]),
                100.0 * base / m["overlap"], fmt_ms(m["pipelined"]),
                100.0 * base / m["pipelined"], extra))
    if engine:
        out("\n\"overlap + engine\": parex, %s, plus the engine term as measured here "
            "(c_msg %.3f us per message, c_op per op, N_ops = %d + %d x 26 at 26 neighbours), "
            "its efficiency against its own 1-rank compute; ranks bound to their cores with the "
            "progress lane on them: a rank with a core of its own for that would pay less." % (
                "at its own node-loaded rate (dcg.c's path, %.3f ns per point)" % (own * 1e9)
                if own != rate_s else "at the rate above", engine.msg_s * 1e6,
                engine.ops_abc[1], engine.ops_abc[2]))


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", required=True, help="JSON lines of measured runs (run_dcg.sh)")
    ap.add_argument("--calibration", help="run_dcg.sh's calibration lines (bench/dcg_calib.txt):"
                    " the node-loaded single-rank rates of the compute term; without it the "
                    "idle single-rank rate of the 1-rank rows")
    ap.add_argument("--pingpong", action="append", default=[],
                    help="bench_pingpong --json output (repeatable)")
    ap.add_argument("--stat", choices=sorted(STATS), default="min",
                    help="statistic over rounds of the rows' and the calibrations' times")
    ap.add_argument("--sync", choices=("oversubscribed", "all"), default="oversubscribed",
                    help="rows of P > 1 ranks whose compute term is the synchronized "
                    "calibration (the row's ranks solving a block-diagonal system) where it "
                    "exists: oversubscribed ones (P T > cores), or all")
    ap.add_argument("--pp-stat", choices=("median", "min"), default="median",
                    help="ping-pong statistic for MPI and the engine's per-message cost")
    ap.add_argument("--latency-us", type=float, help="assumed interconnect latency")
    ap.add_argument("--bandwidth-gbs", type=float, help="assumed interconnect GB/s (10^9 B/s)")
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 1,
                    help="cores of this machine (default: os.cpu_count())")
    ap.add_argument("--allreduces", type=int, default=2, help="allreduces per iteration (2)")
    ap.add_argument("--project-grid", type=int, help="N of the projection (default: largest "
                    "weak-scaling N measured)")
    ap.add_argument("--project-threads", type=int, action="append", help="threads per rank of "
                    "the projection, repeatable (default: each T <= cores measured at 1 rank)")
    ap.add_argument("--project-impl", default="bsp", help="whose rate the projection uses (bsp)")
    ap.add_argument("--engine", help="engine per-op cost, run_dcg.sh's bench/dcg_engine.txt "
                    "(lines {\"engine_op\": {\"threads\", \"ns_per_op\", \"source\"}})")
    ap.add_argument("--op-ns", type=float, help="engine cost per op in ns, instead of --engine")
    ap.add_argument("--msg-us", type=float, help="engine's extra cost per MPI message in us, "
                    "instead of --engine's bench_engine_pingpong line")
    ap.add_argument("--ops-per-iter", default="8,12,2", help="A,B,C: engine ops per iteration "
                    "of parex-cg, A on one rank, B + C x neighbours on more, when its JSON has "
                    "no engine_ops_per_iter (default 8,12,2: examples/cg/dcg.c at c203d68)")
    a = ap.parse_args(argv)
    try:
        abc = [int(x) for x in a.ops_per_iter.split(",")]
        if len(abc) != 3 or min(abc) < 0:
            raise ValueError
    except ValueError:
        ap.error("--ops-per-iter must be three non-negative integers A,B,C")
    if a.op_ns is not None and not a.op_ns >= 0:
        ap.error("--op-ns must be >= 0")
    if a.msg_us is not None and not a.msg_us >= 0:
        ap.error("--msg-us must be >= 0")
    for name, path in (("--engine", a.engine), ("--calibration", a.calibration)):
        if path and not os.path.isfile(path):
            ap.error("%s %s: no such file" % (name, path))
    if (a.latency_us is None) != (a.bandwidth_gbs is None):
        ap.error("--latency-us and --bandwidth-gbs go together")
    if a.latency_us is not None and not (a.latency_us > 0 and a.bandwidth_gbs > 0):
        ap.error("--latency-us and --bandwidth-gbs must be positive")
    if a.cores < 1 or a.allreduces < 0:
        ap.error("--cores must be >= 1 and --allreduces >= 0")
    if a.project_threads and min(a.project_threads) < 1:
        ap.error("--project-threads must be >= 1")
    return a
def make_engine(a, groups):
    """The Engine of --op-ns or --engine FILE, or None."""
    abc = tuple(int(x) for x in a.ops_per_iter.split(","))
    per, src, msg = load_engine(a.engine, a.pp_stat) if a.engine else ({}, "", None)
    if a.op_ns is not None:
        per, src = {1: a.op_ns * 1e-9}, "--op-ns %g given by hand" % a.op_ns
    elif per:
        src = "measured: " + src
    msg_s, msg_src, rt = 0.0, "none", None
    if a.msg_us is not None:
        msg_s, msg_src = a.msg_us * 1e-6, "--msg-us %g given by hand" % a.msg_us
    elif msg:
        msg_s, rt, msg_src = msg[0], msg[1], "measured, %s: %s" % (a.pp_stat, msg[2])
    if not per and not msg_s:
        return None
    return Engine(per, src or "none", abc, msg_s, msg_src, rt)


def choose_projections(groups, comp, a):
    """[(rate, grid, threads, description, idle rate or None)] for the projection, one per
    threads per rank, and a reason when empty. The rate: s_K of a single-rank solve of the
    grid^3 box with K = cores / T instances (a node whose cores all work), else the idle
    single-rank rate of the 1-rank rows."""
    weak = [k for k in groups if k[0] == "weak" and k[4][0] == k[4][1] == k[4][2]]
    grid = a.project_grid or (max(k[4][0] for k in weak) if weak else None)
    if grid is None:
        return [], "no weak-scaling run and no --project-grid"
    box = (grid,) * 3
    threads = a.project_threads or sorted({k[3] for k in groups if k[2] == 1
                                           and k[3] <= a.cores}) or [1]
    out = []
    for t in threads:
        k = max(1, a.cores // t)
        for impl in (a.project_impl, "bsp", "parex"):
            got, idle = comp.loaded(impl, box, t, k, 2), comp.loaded(impl, box, t, 1, 2)
            if got:
                load = ("while %d such solves, %d thread(s) each, load the node's %d cores"
                        % (k, t, a.cores) if k > 1 else "of %d threads alone on the node's %d "
                        "cores" % (t, a.cores))
                out.append((got[0], grid, t, "s_%d of %s: its single-rank solve %s"
                            % (k, impl, load), idle[0] if idle else None))
                break
        else:
            for impl in (a.project_impl, "bsp", "parex"):
                s, how = rate_for(comp.by_series, comp.by_impl, "weak", impl, t)
                if s is not None:
                    out.append((s, grid, t, "of %s's idle single-rank run%s (no calibration: "
                                "not node-loaded)" % (impl, " (%s)" % how if how else ""), None))
                    break
    return out, "" if out else "no single-rank run to take the compute rate from"


def calibration_table(comp, out):
    if not comp.cal:
        return
    out("\n### Calibration: single-rank rates with K instances loading the node (run_dcg.sh; "
        "time per iteration of the slowest instance, %s over rounds)\n" % STAT_NAME[0])
    out("| impl | code path | local | threads | instances K | as bound | ms per iteration |"
        " ns per point | slowest/fastest instance | rounds |")
    out("|---|---|---|---:|---:|---|---:|---:|---:|---:|")
    for (impl, local, t, k, mode, sync), res in sorted(comp.cal.items()):
        s, spread = comp.loaded(impl, local, t, k, 1 if mode in ("none", "-") else 2, sync)
        n = local[0] * local[1] * local[2]
        out("| %s | %s | %s | %d | %d | %s | %s | %.3f | %s | %d |" % (
            impl, ("all rows" if mode == "-" else "1-rank rows (shared-memory solver)"
                   if mode == "none" else "P > 1 rows (dcg.c, --engine %s, %s)" % (
                       mode, "K ranks" if sync else "1 rank"))
            + ("; synchronized: one block-diagonal solve" if sync else ""),
            "x".join(map(str, local)), t, k,
            "time-shared (%d threads on %d cores)" % (k * t, comp.cores)
            if k * t > comp.cores else "cores of its own", fmt_ms(s * n), s * 1e9,
            "%.2f" % spread if not sync else "-", len(res)))
    out("\nparex's rates are less its single-rank engine term (the model adds the engine term "
        "back per rank count); a row of P ranks x T threads takes s_P (K = P instances "
        "launched as its ranks); without that line s_K, K = min(P, cores / T), times P T / "
        "cores when it has more threads than cores. An oversubscribed row of P > 1 ranks "
        "takes the synchronized s_P where there is one (assumption 1b).")


def print_engine(engine, groups, out):
    if not engine:
        out("\nNo engine term: give --engine FILE (run_dcg.sh's bench/dcg_engine.txt) or "
            "--op-ns X.")
        return
    out("\nEngine term (parex rows): c_msg = %.3f us per MPI message (%s)%s; c_op = %s per "
        "op (%s); N_ops = %s." % (
            engine.msg_s * 1e6, engine.msg_src,
            "; op round trip (push one op, wait for it) %.3f us, not in the model"
            % (engine.roundtrip_s * 1e6) if engine.roundtrip_s else "",
            ", ".join("%.3f us at %d thread(s)" % (v * 1e6, t)
                      for t, v in sorted(engine.per_threads.items())) or "0",
            engine.source, "parex-cg's engine_ops_per_iter" if any(
                reported_ops(r) is not None for k, r in groups.items() if k[1] == "parex")
            else "%d on one rank, %d + %d x neighbours on more (--ops-per-iter; counted in "
                 "examples/cg/dcg.c at c203d68)" % engine.ops_abc))


def self_test():
    """Checks of the geometry, statistics, network envelope and compute choice (exit 0 if all
    hold): bench/cg_model.py --self-test."""
    assert [hpcg_shape(p) for p in (2, 4, 64, 1024, 16384)] == [
        (2, 1, 1), (2, 2, 1), (4, 4, 4), (16, 8, 8), (32, 32, 16)]
    msgs, g = worst_rank_halo((4, 4, 4), (32, 32, 32))
    assert len(msgs) == 26 and sum(msgs) == 8 * (6 * 32 * 32 + 12 * 32 + 8)
    assert abs(g - (30 / 32) ** 3) < 1e-12 and worst_rank_halo((2, 1, 1), (8, 8, 8))[0] == [512]
    assert STATS["min"]([3, 1, 2]) == 1 and STATS["lower-half"]([5, 1, 4, 2, 3]) == 2
    net = Network(curve=[(8, 1e-6), (16, 5e-6), (32, 2e-6)])
    assert abs(net.msg(16) - 2e-6) < 1e-15 and net.alpha == 1e-6  # the lower envelope
    m = model((4, 4, 4), (32, 32, 32), 1e-8, net, 2)
    assert m["overlap"] <= m["no_overlap"] and m["messages"] == 26
    res = lambda t: [{"seconds_per_iter": t, "instance_seconds_per_iter": [t, t]}]
    cal = {("bsp", (8, 8, 8), 1, 4, "-", False): res(4e-3),
           ("bsp", (8, 8, 8), 1, 2, "-", False): res(1e-3)}
    comp = Compute(cal, {}, None, 2)
    s, stretch, how, _, _, synced = comp.row("weak", "bsp", 4, 1, (8, 8, 8), (2, 2, 1))
    assert not synced
    assert abs(s * 512 - 4e-3) < 1e-12 and "time-shared" in how  # K = P, measured sharing
    assert abs(stretch - nnz_scale((2, 2, 1), (8, 8, 8))) < 1e-12
    share = comp.analytic_share("bsp", 4, 1, (8, 8, 8), (2, 2, 1))
    assert abs(share - 1e-3 * 2 * nnz_scale((2, 2, 1), (8, 8, 8))) < 1e-12
    # a synchronized calibration replaces the independent one on an oversubscribed row only,
    # and carries the allreduces: the model adds none
    cal[("bsp", (8, 8, 8), 1, 4, "-", True)] = res(6e-3)
    cal[("bsp", (8, 8, 8), 1, 2, "-", True)] = res(2e-3)
    s, stretch, how, _, _, synced = comp.row("weak", "bsp", 4, 1, (8, 8, 8), (2, 2, 1))
    assert synced and abs(s * 512 - 6e-3) < 1e-12 and "synchronized" in how
    assert not comp.row("weak", "bsp", 2, 1, (8, 8, 8), (2, 1, 1))[5]  # 2 ranks on 2 cores
    # the pipelined CG: on one rank only its bigger update; with a slow allreduce and a small
    # box it beats plain CG with overlap, with a big box it loses its extra bytes
    one = model((1, 1, 1), (32, 32, 32), 1e-8, net, 2)
    assert abs(one["pipelined"] - one["compute"] * pipe_scale()) < 1e-15
    slow = Network(latency_s=50e-6, bandwidth_bs=1e10)
    small = model((32, 32, 16), (8, 8, 8), 1e-8, slow, 2)
    assert small["pipelined"] < small["overlap"]
    big = model((4, 4, 4), (128, 128, 128), 1e-8, net, 2)
    assert big["pipelined"] > big["overlap"]
    # an allreduce longer than the exchange and the SpMV: one of the A = 2 allreduces shows,
    # then the rest of the bigger iteration
    slower = Network(latency_s=1e-3, bandwidth_bs=1e10)
    m = model((1024, 1, 1), (8, 8, 8), 1e-8, slower, 2)  # 2 messages, 10 allreduce steps
    t_cp, fp = m["compute"] * pipe_scale(), spmv_fraction(vector_bytes=PIPE_VECTOR_BYTES)
    assert m["allreduce"] / 2 > m["halo"] + t_cp
    assert abs(m["pipelined"] - (m["allreduce"] / 2 + (1.0 - fp) * t_cp)) < 1e-12
    m = model((2, 2, 1), (8, 8, 8), s, net, 2, stretch=stretch, ar_in_compute=True)
    assert m["allreduce"] == 0.0 and model((2, 2, 1), (8, 8, 8), s, net, 2)["allreduce"] > 0
    print("cg_model.py: self-test passed")
    return 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    a = parse_args(argv)
    STAT[0], STAT_NAME[0] = STATS[a.stat], a.stat
    SYNC[0] = a.sync
    out = print
    for path in [a.runs] + a.pingpong:
        if not os.path.isfile(path):
            sys.exit("cg_model.py: %s: no such file" % path)
    groups = group_runs(load_runs(a.runs))
    if not groups:
        sys.exit("cg_model.py: no usable runs in %s" % a.runs)
    curve, measured_ar = load_pingpong(a.pingpong, a.pp_stat)
    nets = []
    if curve:
        nets.append(Network(curve=curve, label="on-node ping-pong (%s; shared memory, not a "
                                               "network)" % a.pp_stat))
    if a.latency_us is not None:
        nets.append(Network(latency_s=a.latency_us * 1e-6, bandwidth_bs=a.bandwidth_gbs * 1e9,
                            label="assumed interconnect"))
    if not nets:
        sys.exit("cg_model.py: give --pingpong FILE or --latency-us and --bandwidth-gbs")
    engine = make_engine(a, groups)
    cal = load_calibration(a.calibration) if a.calibration else {}
    comp = Compute(cal, groups, engine, a.cores)
    comp.measured_ar = measured_ar
    out("## Distributed CG model (bench/cg_model.py)\n")
    out(assumptions(a.allreduces, bool(cal), a.cores))
    out("\nMeasured rows use %s: latency %.3f us, asymptotic bandwidth %.3f GB/s; %d cores."
        % (nets[0].label, nets[0].alpha * 1e6, nets[0].beta * 1e-9, a.cores))
    print_engine(engine, groups, out)
    calibration_table(comp, out)
    measured_table(groups, comp, nets[0], a.cores, a.allreduces, engine, out)
    allreduce_check(measured_ar, nets[0], a.cores, out)
    projs, why = choose_projections(groups, comp, a)
    if not projs:
        out("\nNo projection: %s." % why)
        return 0
    for rate_s, grid, threads, how, idle in projs:
        own = comp.loaded("parex", (grid,) * 3, threads, max(1, a.cores // threads), 2)
        projection(rate_s, grid, threads, nets, a.allreduces, how, out, engine,
                   own[0] if own else None)
        if idle and idle != rate_s:
            out("\nOne such solve alone on the node computes at %.3f ns per point: against "
                "that, each efficiency above is multiplied by %.3f (the node's memory "
                "bandwidth and caches shared by its ranks, not communication)." % (
                    idle * 1e9, idle / rate_s if rate_s else float("nan")))
    g = projs[0][1]
    out("\nEfficiency = t(1 rank) / t(P ranks), t(1) = compute alone at the same (node-loaded) "
        "rate; t(P)'s compute includes the ghost columns of a rank with 26 neighbours (x %.3f "
        "by the byte model). Overlap hides the halo behind the interior rows of the SpMV "
        "(fraction %.3f of the compute is SpMV); the allreduces are never hidden. Pipelined: "
        "parex-cg --cg pipelined as modelled (one allreduce, hidden behind the exchange and the "
        "SpMV; its iteration moves %.3fx plain CG's bytes; the same iterations as plain CG, "
        "which holds on HPCG: examples/cg/README.md), without the engine term." % (
            nnz_scale((4, 4, 4), (g, g, g)), spmv_fraction(), pipe_scale()))
    measured_n = sorted({k[4][0] for k in groups if k[0] == "weak" and k[2] == 1})
    if measured_n and g not in measured_n:
        out("\nNote: the compute rate was measured at %s^3 points per rank, the projection is "
            "for %d^3: caches make the rate depend on the size; measure at %d^3 (run_dcg.sh "
            "WEAK_GRID=%d) to remove the doubt." % ("/".join(map(str, measured_n)), g, g, g))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
