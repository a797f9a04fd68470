#!/usr/bin/env python3
"""Residual replacement strategies for the pipelined CG, in NumPy (a model, not parex).

dcg.c's pipelined CG (examples/cg/dcg.h, DCG_CG_PIPELINED) replaces its residual (r = b - A x,
u = M^-1 r, w = A u, restart with beta = 0) where the recursive residual says "converged" and
where alpha breaks down after a step; a replacement whose true residual is not 10 % below the
last one's ends the solve, as stagnated, or as a breakdown when it followed one and the true
residual is above sqrt(eps). This script runs that rule beside two others on the same
recurrences, one process, plain double dots (so counts differ from parex's compensated ones by
a few iterations):

  pipe   Ghysels-Vanroose's pipelined CG as it is: stops on the recursive residual, fails on
         a non-positive alpha;
  auto   Cools et al.'s idea (SIMAX 39(1), 2018; PETSc's KSPPIPECGRR): bound the gaps of r, s,
         w and z by recurrences of the local rounding errors (axpy: eps (|y| + 2 |a| |x|);
         SpMV: k eps ||A||_inf ||v||, k the most entries in a row) and replace when the bound
         of r's gap first passes sqrt(eps) ||r|| (van der Vorst and Ye's rule), then replace s,
         q and z too (s = A p, q = M^-1 s, z = A q) and keep the Krylov directions;
  check  dcg.c's rule (the iteration limit is tested before the tolerance here, after it in
         dcg.c: the counts differ only for a solve that reaches the limit).

and plain CG. Columns: iterations, how it ended, the true relative residual ||b - A x|| / ||b||,
replacements. With --gap NAME it prints, every 20 iterations of the plain pipelined CG, the
measured gap ||(b - A x) - r|| against the auto rule's bound, both over ||b||.

Needs python3-numpy and python3-scipy (Debian); not part of the build or the tests.

  python3 bench/pipe_cg_replacement.py [--tol X] [--max-iters N] [MATRIX ...]
  python3 bench/pipe_cg_replacement.py --gap bcsstk16

MATRIX: a name in ../shared/data/matrices (without .mtx) or hpcgN (the 27-point HPCG operator
on an N^3 grid); b = A * ones as parex-cg's.
"""
import argparse
import os
import sys

import numpy as np
import scipy.io
import scipy.sparse as sp

EPS = np.finfo(float).eps
MATRICES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data",
                        "matrices")


def hpcg(nx):
    """HPCG's operator: 26 on the diagonal, -1 for each of the up to 26 grid neighbours."""
    idx = np.arange(nx ** 3).reshape(nx, nx, nx)
    rows, cols, vals = [], [], []
    for dz in (-1, 0, 1):
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                src = idx[max(0, -dz):nx - max(0, dz), max(0, -dy):nx - max(0, dy),
                          max(0, -dx):nx - max(0, dx)].ravel()
                dst = idx[max(0, dz):nx + min(0, dz), max(0, dy):nx + min(0, dy),
                          max(0, dx):nx + min(0, dx)].ravel()
                rows.append(src)
                cols.append(dst)
                vals.append(np.full(src.size, 26.0 if dx == dy == dz == 0 else -1.0))
    n = nx ** 3
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(n, n))


def load(name):
    if name.startswith("hpcg"):
        return hpcg(int(name[4:]))
    return scipy.io.mmread(os.path.join(MATRICES, name + ".mtx")).tocsr()


def plain_cg(A, b, tol, max_iters, dinv):
    x = np.zeros_like(b)
    r = b.copy()
    z = dinv * r if dinv is not None else r.copy()
    p = z.copy()
    rz = r @ z
    bn = np.linalg.norm(b)
    for it in range(max_iters):
        if np.linalg.norm(r) / bn < tol:
            return it, "converged", np.linalg.norm(b - A @ x) / bn, 0
        ap = A @ p
        pap = p @ ap
        if not pap > 0:
            return it, "breakdown", np.linalg.norm(b - A @ x) / bn, 0
        alpha = rz / pap
        x += alpha * p
        r -= alpha * ap
        z = dinv * r if dinv is not None else r
        rz_new = r @ z
        p = z + rz_new / rz * p
        rz = rz_new
    return max_iters, "max-iters", np.linalg.norm(b - A @ x) / bn, 0


class Bound:
    """The auto rule's bounds of the gaps f (r), g (s), h (w) and e (z), in norm."""

    def __init__(self, A):
        self.a = abs(A).sum(axis=1).max()  # ||A||_inf >= ||A||_2 for a symmetric A
        self.k = np.diff(A.indptr).max()
        self.f = self.g = self.h = self.e = 0.0

    def reset(self, nx, nb, np_, nu, nq):
        ka = self.k * EPS * self.a
        self.f, self.g, self.h, self.e = EPS * ((self.k + 1) * self.a * nx + nb), ka * np_, \
            ka * nu, ka * nq

    def step(self, alpha, beta, n):
        """Add update i's rounding (n: norms of x, r, u, w, m and the old p, s, q, z)."""
        a, b, A = abs(alpha), abs(beta), self.a
        pb, sb, qb = n["u"] + b * n["p"], n["w"] + b * n["s"], n["m"] + b * n["q"]
        zb = A * n["m"] + b * n["z"]
        self.e = self.k * EPS * A * n["m"] + b * self.e + EPS * A * (n["m"] + 2 * b * n["q"]) \
            + EPS * (A * n["m"] + 2 * b * n["z"])
        self.g = self.h + b * self.g + EPS * A * (n["u"] + 2 * b * n["p"]) \
            + EPS * (n["w"] + 2 * b * n["s"])
        self.f = self.f + a * self.g + EPS * A * (n["x"] + 2 * a * pb) + EPS * (n["r"] + 2 * a * sb)
        self.h = self.h + a * self.e + EPS * A * (n["u"] + 2 * a * qb) + EPS * (n["w"] + 2 * a * zb)


def pipelined(A, b, tol, max_iters, dinv, rule, gap=False):
    """Ghysels and Vanroose's (preconditioned) pipelined CG with replacement @rule: None,
    "auto" or "check"."""
    M = (lambda v: dinv * v) if dinv is not None else (lambda v: v.copy())
    n = len(b)
    bn = np.linalg.norm(b)
    x, r = np.zeros(n), b.copy()
    u = M(r)
    w = A @ u
    z, q, s, p = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    gamma_old = alpha_old = 1.0
    it, restart, replaced, last_true, count = 0, True, False, np.inf, 0
    bound, above_before, reset = Bound(A), False, False

    def true_res():
        return np.linalg.norm(b - A @ x) / bn

    while True:
        gamma, delta, rn = r @ u, w @ u, np.linalg.norm(r)
        m = M(w)
        nv = A @ m
        rel = rn / bn
        if gap and it % 20 == 0:
            print("%5d  relres %.1e  measured gap %.1e  auto bound %.1e  sqrt(eps) relres %.1e"
                  % (it, rel, np.linalg.norm(b - A @ x - r) / bn, bound.f / bn,
                     np.sqrt(EPS) * rel))
        if it >= max_iters:
            return it, "max-iters", true_res(), count
        why = None
        if rel < tol:
            if rule != "check" or replaced:
                return it, "converged", true_res(), count
            why = "converged"
        else:
            beta = 0.0 if restart else gamma / gamma_old
            alpha = gamma / delta if restart else gamma / (delta - beta * gamma / alpha_old)
            if not (alpha > 0 and np.isfinite(alpha)):
                if rule != "check" or restart:
                    return it, "breakdown", true_res(), count
                why = "breakdown"
        if why:  # the check rule: replace, restart, or stop as stagnated
            r = b - A @ x
            u = M(r)
            w = A @ u
            replaced = restart = True
            count += 1
            t = np.linalg.norm(r) / bn
            if not t < tol and not t < 0.9 * last_true:
                if why == "breakdown" and t >= np.sqrt(EPS):
                    return it, "breakdown", t, count
                return it, "stagnated", t, count
            last_true = t
            continue
        replaced = restart = False
        do_replace = False
        if rule == "auto" or gap:
            norms = {k: np.linalg.norm(v) for k, v in
                     (("x", x), ("r", r), ("u", u), ("w", w), ("m", m), ("p", p), ("s", s),
                      ("q", q), ("z", z))}
            if reset:
                bound.reset(norms["x"], bn, norms["p"], norms["u"], norms["q"])
                reset = False
            above = bound.f > np.sqrt(EPS) * rn
            do_replace = above and not above_before and it > 0 and not gap
            above_before = above
            bound.step(alpha, beta, norms)
        gamma_old, alpha_old = gamma, alpha
        z = nv + beta * z
        q = m + beta * q
        s = w + beta * s
        p = u + beta * p
        x = x + alpha * p
        r = r - alpha * s
        u = u - alpha * q
        w = w - alpha * z
        it += 1
        if do_replace:
            r = b - A @ x
            u = M(r)
            w = A @ u
            s = A @ p
            q = M(s)
            z = A @ q
            count += 1
            reset = True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--max-iters", type=int, default=20000)
    ap.add_argument("--gap", metavar="MATRIX")
    ap.add_argument("matrices", nargs="*",
                    default=["bcsstk01", "bcsstk05", "bcsstk09", "bcsstk16", "1138_bus", "hpcg16"])
    a = ap.parse_args()
    if a.gap:
        A = load(a.gap)
        pipelined(A, A @ np.ones(A.shape[0]), 0.0, 200, None, None, gap=True)
        return
    print("%-9s %-6s | %-28s | %-28s | %-31s | %-31s" % ("matrix", "precond", "plain CG", "pipe",
                                                          "auto", "check"))
    for name in a.matrices:
        A = load(name)
        b = A @ np.ones(A.shape[0])
        for dinv in (None, 1.0 / A.diagonal()):
            cells = [plain_cg(A, b, a.tol, a.max_iters, dinv)]
            for rule in (None, "auto", "check"):
                cells.append(pipelined(A, b, a.tol, a.max_iters, dinv, rule))
            print("%-9s %-6s | " % (name, "none" if dinv is None else "jacobi") + " | ".join(
                "%5d %-10s %.1e%s" % (c[0], c[1], c[2], " %3d" % c[3] if i >= 2 else "")
                for i, c in enumerate(cells)))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
