#!/usr/bin/env python3
"""bench/cg_variants.py - does one synchronization point fewer per CG iteration help the
oversubscribed rows? (issue 15; bench/RESULTS.md, session 12)

Runs bench_cg_bsp's three loops, --cg plain (two MPI_Allreduce an iteration), pipelined
(Ghysels-Vanroose: one blocking allreduce of two sums) and pipelined-nb (that allreduce as an
MPI_Iallreduce waited for after the halo exchange and the SpMV), on the 4-rank rows of
bench/run_dcg.sh (weak 32^3 a rank, 4x1 and 4x2; bcsstk16 METIS parts, 4x1) and one row that
is not oversubscribed (weak 2x1), with run_dcg.sh's launch options and environment for each
row, fixed iterations (below convergence: past it parex-cg's pipelined CG replaces its residual,
which the bsp loops do not), the three variants interleaved and their order rotated every
round, and parex-cg, plain and --cg pipelined, with the same launch and iterations
(--max-iters, --tol 1e-300) in the rotation.
Prints min and median seconds per iteration and bsp's median halo and allreduce times.

  python3 bench/cg_variants.py BUILD [ROUNDS]    (BUILD: a build with bench_cg_bsp; ROUNDS 5)

With --tcp, the rows are instead 2 one-core ranks over run_dcg_tcp.py's shaped TCP link, each
TESTBED:RATE:GRID:ITERS (testbed lo or veth, tc's rate, points a rank per side, iterations;
keep ITERS below convergence, as above), and parex-cg (as it comes, ITERS iterations) and
parex-cg --cg pipelined (its allreduce an engine op beside the exchange and the SpMV), also with
--dots plain (bench_cg_bsp's arithmetic: plain sums folded in the update), run as a fourth,
fifth and sixth program: does one allreduce an iteration fewer help where an allreduce
crosses a network (about 8 us over 1 Gbit/s TCP here, against 0.2 us on shared memory)? Needs
what run_dcg_tcp.py needs (root, iproute2). The last column is each median over bsp plain's;
the pipelined parex-cg's over bsp pipelined-nb's is printed below the table.

  python3 bench/cg_variants.py --tcp veth:1gbit:16:40,veth:300mbit:32:60 BUILD [ROUNDS]
"""
import os
import statistics
import sys

from dcg_launch import oversubscribed, run_json

here = os.path.dirname(os.path.abspath(__file__))
build = sys.argv[1] if len(sys.argv) > 1 else "build-rel"
if "--tcp" in sys.argv[2:]:
    sys.exit("cg_variants: --tcp comes first\n" + __doc__)
rounds = int(sys.argv[2]) if len(sys.argv) > 2 and build != "--tcp" else 5
bsp = os.path.join(build, "bench", "bench_cg_bsp")
matrix = os.path.join(here, "..", "..", "shared", "data", "matrices", "bcsstk16.mtx")
rows = [("weak 4x1", 4, 1, ["--grid", "32", "--iters", "80"]),
        ("weak 4x2", 4, 2, ["--grid", "32", "--iters", "80"]),
        ("bcsstk16 4x1", 4, 1, ["--matrix", matrix, "--partition", "metis", "--iters", "300"]),
        ("weak 2x1", 2, 1, ["--grid", "32", "--iters", "70"])]
variants = ["plain", "pipelined", "pipelined-nb"]





def tcp_rows(spec, build, rounds):
    """The --tcp table: bench_cg_bsp's variants and parex-cg on each shaped row of SPEC."""
    import run_dcg_tcp as tcp
    rows_ = [r.split(":") for r in spec.split(",")]
    if any(len(r) != 4 or r[0] not in tcp.TESTBEDS or not r[2].isdigit() or not r[3].isdigit()
           for r in rows_):
        sys.exit("cg_variants: --tcp rows are TESTBED:RATE:GRID:ITERS: TESTBED lo or veth, "
                 "RATE tc's rate, GRID and ITERS integers")
    for r in rows_:
        tcp.bits_per_s(r[1], "cg_variants")
    tcp.need_netns("cg_variants")
    progs = [("bsp", ["--cg", v], v) for v in variants] + [
        ("parex", [], "parex-cg"), ("parex", ["--cg", "pipelined"], "parex-cg pipelined"),
        ("parex", ["--cg", "pipelined", "--dots", "plain"], "parex-cg pipelined plain sums")]
    got = {}
    try:
        for r in range(rounds):
            for testbed, rate, grid, iters in rows_:
                tcp.TESTBED = testbed
                tcp.link_up(rate)
                k = r % len(progs)
                for prog, flags, label in progs[k:] + progs[:k]:
                    got.setdefault((testbed, rate, grid, label), []).append(
                        tcp.run(build, prog, int(grid), int(iters), extra=flags))
    finally:
        tcp.teardown()
    print("| link | grid a rank | iterations | program | min ms | median ms | ratio to plain |")
    print("|---|---|---:|---|---:|---:|---:|")
    for testbed, rate, grid, iters in rows_:
        ms = {label: [d["seconds_per_iter"] * 1e3 for d in got[(testbed, rate, grid, label)]]
              for _, _, label in progs}
        for _, _, label in progs:
            print("| TCP (%s), tbf %s | %s^3 | %s | %s | %.3f | %.3f | %.3f |" % (
                testbed, rate, grid, iters, label, min(ms[label]), statistics.median(ms[label]),
                statistics.median(ms[label]) / statistics.median(ms["plain"])))
    for testbed, rate, grid, iters in rows_:
        med = {label: statistics.median(d["seconds_per_iter"]
                                        for d in got[(testbed, rate, grid, label)])
               for label in ("pipelined-nb", "parex-cg pipelined", "parex-cg pipelined plain sums")}
        print("TCP (%s), tbf %s, %s^3: parex-cg pipelined / bsp pipelined-nb = %.3f (plain sums "
              "%.3f)" % (testbed, rate, grid, med["parex-cg pipelined"] / med["pipelined-nb"],
                         med["parex-cg pipelined plain sums"] / med["pipelined-nb"]))
    print("\n%d rounds, python3 bench/cg_variants.py --tcp %s %s" % (rounds, spec, build))


if build == "--tcp":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    tcp_rows(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 5)
    sys.exit(0)

parex = os.path.join(build, "examples", "cg", "parex-cg")


def parex_argv(args, cg):
    """parex-cg's command for a row's bench_cg_bsp ARGS (--iters K: --max-iters K below a
    tolerance no solve reaches) and --cg CG."""
    out = []
    for k, a in enumerate(args):
        if k > 0 and args[k - 1] == "--iters":
            out += [a, "--tol", "1e-300"]
        else:
            out.append("--max-iters" if a == "--iters" else a)
    return [parex] + out + ["--space", "threads", "--cg", cg, "--progress", "0", "--json"]


programs = [(v, lambda args, v=v: [bsp, "--cg", v, "--json"] + args, (0,)) for v in variants] + [
    ("parex-cg " + cg, lambda args, cg=cg: parex_argv(args, cg), (0, 3))
    for cg in ("plain", "pipelined")]
res = {}
for r in range(rounds):
    for name, p, t, args in rows:
        k = r % len(programs)
        for label, argv, ok in programs[k:] + programs[:k]:
            res.setdefault((name, label), []).append(run_json(p, t, argv(args), ok=ok))
print("| row | oversubscribed | program | min ms | median ms | halo ms | allreduce ms |")
print("|---|---|---|---:|---:|---:|---:|")
for name, p, t, _ in rows:
    for label, _, _ in programs:
        ds = res[(name, label)]
        med = lambda k: ("%.3f" % (statistics.median(d[k] for d in ds) * 1e3)
                         if k in ds[0] else "-")
        print("| %s | %s | %s | %.3f | %s | %s | %s |" % (
            name, "yes" if oversubscribed(p, t) else "no", label,
            min(d["seconds_per_iter"] for d in ds) * 1e3, med("seconds_per_iter"),
            med("halo_seconds_per_iter"), med("allreduce_seconds_per_iter")))
print("\n%d rounds, %s" % (rounds, " ".join(["python3", "bench/cg_variants.py"] + sys.argv[1:])))
