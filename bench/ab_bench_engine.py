#!/usr/bin/env python3
"""bench/ab_bench_engine.py - two bench_engine binaries (two builds of the engine) against each
other: every DAG, pushed and as a re-launched graph, one process per measurement, the pair's
order alternated every round (the first program of a back-to-back pair runs slower on these
VMs). Prints, per DAG and mode, the median over rounds of each binary's ns per op (each value is
bench_engine's own median of --reps runs) and new/old.

  python3 bench/ab_bench_engine.py OLD NEW ROUNDS [bench_engine flags...]
  e.g. python3 bench/ab_bench_engine.py /tmp/oldbuild/bench/bench_engine \\
           build-rel/bench/bench_engine 6
       python3 bench/ab_bench_engine.py OLD NEW 8 --only chain --no-push

bench_engine runs with --no-starpu --no-omp --reps 5 before the flags given (the baselines are
the same library for both binaries; nice -n -19 needs root, as on these VMs). compare_builds.sh covers the pushed chain and
independent DAGs from a revision; this one takes two ready builds and adds graph re-launches.
"""
import collections
import statistics
import subprocess
import sys

if len(sys.argv) < 4:
    sys.exit(__doc__)
bins = {"old": sys.argv[1], "new": sys.argv[2]}
rounds = int(sys.argv[3])
extra = sys.argv[4:]

res = collections.defaultdict(list)
for r in range(rounds):
    for k in (["old", "new"] if r % 2 == 0 else ["new", "old"]):
        cmd = ["nice", "-n", "-19", bins[k], "--no-starpu", "--no-omp", "--reps", "5"] + extra
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("RESULT "):
                d = dict(f.split("=", 1) for f in line.split()[1:])
                res[(d["dag"], d["impl"], k)].append(float(d["ns_per_task"]))

print("| DAG | mode | old median ns/op | new median ns/op | new/old |")
print("|---|---|---:|---:|---:|")
for dag, impl in sorted({(a, b) for a, b, _ in res}):
    o = statistics.median(res[(dag, impl, "old")])
    n = statistics.median(res[(dag, impl, "new")])
    print("| %s | %s | %.1f | %.1f | %.2f |" % (dag, impl, o, n, n / o))
print("\n%d rounds: python3 bench/ab_bench_engine.py %s" % (rounds, " ".join(sys.argv[1:])))
