#!/usr/bin/env python3
"""bench/first_launches.py - where a short distributed solve's time goes: its first iterations
against its steady ones, for two or more programs side by side (two parex-cg builds, two sets
of flags, or parex-cg against bench_cg_bsp).

Each program solves one row (RANKS:THREADS:GRID, GRID^3 points a rank; or RANKS:THREADS:MATRIX,
a matrix of ../shared/data/matrices by name, METIS parts) for exactly ITERS iterations
(parex-cg: --max-iters ITERS --tol 1e-300; bench_cg_bsp: --iters ITERS) under run_dcg.sh's
launch (dcg_launch.py), the programs interleaved and their order rotated by one every round.
From each run's JSON: first_iters_seconds (the first 8 iterations, each the slowest rank's; in
parex-cg launch to launch, measured where a launch's last scalar op issues the next), the
steady iteration ((seconds - the first four) / (iterations - 4)) and the whole solve
(seconds). Printed: medians over the rounds of iterations 1 to 4 (with the range of the
first), of the steady iteration, of what the first four cost beyond four steady ones, and of
the solve. The iterations of a short solve (18 at 8^3 a rank) carry whatever its first
iterations cost (bench/RESULTS.md, sessions 28-30).

A program is a parex-cg or bench_cg_bsp binary (or a wrapper script that runs one: a name
ending in bench_cg_bsp is run as the baseline), optionally followed by '::' and flags of its own
(e.g. "--cg pipelined --dots plain").

  python3 bench/first_launches.py [--also SPEC]... OLD NEW ROUNDS ROW [ITERS]   (ITERS default 18)
  e.g. python3 bench/first_launches.py build-rel/bench/bench_cg_bsp \\
           build-rel/examples/cg/parex-cg 10 2:1:8
"""
import os
import statistics
import sys

from dcg_launch import run_json

argv = sys.argv[1:]
also = []
while len(argv) >= 2 and argv[0] == "--also":
    also.append(argv[1])
    argv = argv[2:]
if len(argv) not in (4, 5):
    sys.exit(__doc__)
programs = argv[:2] + also
if len(set(programs)) != len(programs):
    sys.exit("first_launches: the programs must differ (add flags to tell two runs apart)")
rounds, row = int(argv[2]), argv[3]
iters = int(argv[4]) if len(argv) == 5 else 18
if iters < 8:
    sys.exit("first_launches: ITERS must be at least 8 (the first eight are timed one by one)")
p, t, g = row.split(":")
p, t = int(p), int(t)
matrices = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data",
                        "matrices")
problem = (["--grid", g] if g.isdigit() else
           ["--matrix", os.path.join(matrices, g + ".mtx"), "--partition", "metis"])


def command(spec):
    """The argv of SPEC ('BINARY' or 'BINARY::FLAGS') on the row, for ITERS iterations."""
    binary, _, flags = spec.partition("::")
    if os.path.basename(binary).endswith("bench_cg_bsp"):
        return [binary] + problem + ["--iters", str(iters), "--json"] + flags.split()
    return ([binary, "--space", "threads", "--progress", "0", "--json", "--max-iters", str(iters),
             "--tol", "1e-300"] + problem + flags.split())


def run_once(spec):
    """(iterations 1-4, steady iteration, the first four beyond four steady, solve), in us."""
    j = run_json(p, t, command(spec), prefix=["nice", "-n", "-19"], ok=(0, 3))
    first = j.get("first_iters_seconds")
    if first is None or len(first) < 4 or j["iterations"] < 8:
        sys.exit("first_launches: %s ran %d iterations and timed %s of them one by one; a "
                 "program with first_iters_seconds and ITERS >= 8 are needed"
                 % (spec, j["iterations"], "none" if first is None else len(first)))
    head = [s * 1e6 for s in first[:4]]
    steady = (j["seconds"] * 1e6 - sum(head)) / (j["iterations"] - 4)
    return head + [steady, sum(head) - 4 * steady, j["seconds"] * 1e6]


res = {spec: [] for spec in programs}
for k in range(rounds):
    r = k % len(programs)
    for spec in programs[r:] + programs[:r]:
        res[spec].append(run_once(spec))
print("| program | iteration 1 (range) | 2 | 3 | 4 | steady | first four beyond steady | "
      "solve of %d |" % iters)
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for spec in programs:
    cols = list(zip(*res[spec]))
    m = [statistics.median(c) for c in cols]
    print("| %s | %.0f (%.0f-%.0f) | %.0f | %.0f | %.0f | %.1f | %.0f | %.0f |"
          % (spec, m[0], min(cols[0]), max(cols[0]), m[1], m[2], m[3], m[4], m[5], m[6]))
print("\n%d rounds, row %s, microseconds (medians): python3 bench/first_launches.py %s"
      % (rounds, row, " ".join('"%s"' % a if " " in a else a for a in sys.argv[1:])))
