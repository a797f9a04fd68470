#!/usr/bin/env python3
"""bench/first_launches.py - where a short distributed solve's time goes: the first iterations
of parex-cg against its steady ones, for two builds or two sets of flags side by side.

Each program solves one row (RANKS:THREADS:GRID, GRID^3 points a rank; or RANKS:THREADS:MATRIX,
a matrix of ../shared/data/matrices by name) for ITERS iterations (--max-iters ITERS --tol
1e-300) under run_dcg.sh's launch (dcg_launch.py) with a PX_PROFILE trace per rank, the two
interleaved and the order alternated every round. From rank 0's trace: the time from the
op that issues the first launch (dcg_first; 0 where the host launches it itself, as parex-cg's
graph mode does from session 28 on) to that launch, the first and the second iteration
(launch to launch), the median of the iterations from the fifth on, and the whole solve
(parex-cg's "seconds"); medians over the rounds, and the range of the first iteration. The
iterations of a short solve (18 at 8^3 a rank) carry whatever its first launches cost; an
iteration measured alone does not (bench/RESULTS.md, session 28).

A program is a parex-cg binary (or a wrapper script that runs one), optionally followed by
'::' and flags of its own (e.g. "--cg pipelined --dots plain").

  python3 bench/first_launches.py OLD NEW ROUNDS ROW [ITERS]   (ITERS default 18)
  e.g. python3 bench/first_launches.py /tmp/old/parex-cg build-rel/examples/cg/parex-cg 10 2:1:8
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from dcg_launch import launch

argv = sys.argv[1:]
if len(argv) not in (4, 5):
    sys.exit(__doc__)
programs = argv[:2]
if programs[0] == programs[1]:
    sys.exit("first_launches: the programs must differ (add flags to tell two runs apart)")
rounds, row = int(argv[2]), argv[3]
iters = int(argv[4]) if len(argv) == 5 else 18
if iters < 6:
    sys.exit("first_launches: ITERS must be at least 6 (the steady median starts at the fifth)")
p, t, g = row.split(":")
p, t = int(p), int(t)
matrices = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data",
                        "matrices")
problem = ["--grid", g] if g.isdigit() else ["--matrix", os.path.join(matrices, g + ".mtx")]
tmp = tempfile.mkdtemp(prefix="first_launches.")


def run_once(spec):
    """(first launch, iteration 1, iteration 2, steady median, solve) in microseconds."""
    binary, _, flags = spec.partition("::")
    opts, env = launch(p, t)
    # One trace file a rank: the rank number is known only inside mpirun.
    wrap = ["sh", "-c", 'PX_PROFILE="$0/trace.$OMPI_COMM_WORLD_RANK.json" exec "$@"', tmp]
    cmd = (["mpirun"] + opts + ["-np", str(p)] + wrap + [binary, "--progress", "0", "--json",
           "--max-iters", str(iters), "--tol", "1e-300"] + problem + flags.split())
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode not in (0, 3):
        raise subprocess.CalledProcessError(out.returncode, cmd, out.stdout, out.stderr)
    seconds = json.loads(out.stdout.strip().splitlines()[-1])["seconds"]
    with open(os.path.join(tmp, "trace.0.json")) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    launches = sorted(e["ts"] for e in events if e["name"] == "px_graph_launch")
    # The op that issues launch 0 (dcg_first); a build that launches from the host has none.
    first = min((e["ts"] for e in events if e["name"] == "dcg_first"), default=None)
    steps = [b - a for a, b in zip(launches, launches[1:])]
    if len(steps) < 5:
        sys.exit("first_launches: %d launches traced; graph mode (the default under mpirun with "
                 "more than one rank) and ITERS >= 6 are needed" % len(launches))
    return (launches[0] - first if first is not None else 0.0, steps[0], steps[1],
            statistics.median(steps[4:]), seconds * 1e6)


res = {spec: [] for spec in programs}
try:
    for k in range(rounds):
        for spec in (programs if k % 2 == 0 else programs[::-1]):
            res[spec].append(run_once(spec))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("| program | first launch | iteration 1 (range) | iteration 2 | steady | solve of %d |"
      % iters)
print("|---|---:|---:|---:|---:|---:|")
for spec in programs:
    cols = list(zip(*res[spec]))
    m = [statistics.median(c) for c in cols]
    print("| %s | %.0f | %.0f (%.0f-%.0f) | %.0f | %.1f | %.0f |"
          % (spec, m[0], m[1], min(cols[1]), max(cols[1]), m[2], m[3], m[4]))
print("\n%d rounds, row %s, microseconds (medians): python3 bench/first_launches.py %s"
      % (rounds, row, " ".join('"%s"' % a if " " in a else a for a in sys.argv[1:])))
