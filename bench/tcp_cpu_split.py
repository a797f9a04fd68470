#!/usr/bin/env python3
"""bench/tcp_cpu_split.py - where the processor time of an iteration goes, bsp against parex-cg,
on run_dcg_tcp.py's shaped TCP link: user, system and softirq time per iteration per rank.

Why: over the shaped loopback the kernel's TCP work (the sends' and receives' system calls, the
softirqs that move the packets and the acknowledgements) runs on the ranks' own cores. In the
bulk-synchronous CG that work fills time the rank spends waiting anyway; with overlap it lands
inside the interior rows, so "message time hidden" (parex's overlap) is not all time saved.
This splits the processor time to show how much of a halo is such work.

How: each program runs the row twice, with SHORT and LONG iterations, in rounds that alternate
the programs; /proc/stat's per-CPU counters (user, system, softirq; both CPUs) are read around
each run, and the difference LONG - SHORT divided by the extra iterations and the 2 ranks
removes start-up, set-up and exit (parex-cg ends "not converged", which mpirun turns into a
slower exit). The clock tick is 10 ms, so use enough extra iterations (the default 540 makes
a tick about 0.02 ms an iteration).

  python3 bench/tcp_cpu_split.py [--testbed lo|veth] BUILD RATE GRID [ROUNDS] [SHORT LONG]
  e.g. python3 bench/tcp_cpu_split.py build-rel 300mbit 48 3
Needs what run_dcg_tcp.py needs (root, iproute2, Open MPI's TCP transport).
"""
import os
import statistics
import sys

import run_dcg_tcp as tcp

KINDS = (("user", 0), ("system", 2), ("softirq", 6))


def cpu_ticks():
    """Per-kind ticks summed over the CPUs (/proc/stat's cpuN lines)."""
    tot = [0] * 7
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu") and line[3].isdigit():
                for k, v in enumerate(line.split()[1:8]):
                    tot[k] += int(v)
    return tot


def main():
    tcp.parse_testbed(sys.argv, "tcp_cpu_split")
    if len(sys.argv) not in (4, 5, 7):
        sys.exit(__doc__)
    build, rate, grid = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rounds = int(sys.argv[4]) if len(sys.argv) >= 5 else 3
    short, long_ = (int(sys.argv[5]), int(sys.argv[6])) if len(sys.argv) == 7 else (60, 600)
    tcp.need_netns("tcp_cpu_split")
    hz = os.sysconf("SC_CLK_TCK")
    res = {}
    try:
        tcp.link_up(rate)
        for r in range(rounds):
            for prog in (("bsp", "parex") if r % 2 == 0 else ("parex", "bsp")):
                got = {}
                for iters in (short, long_):
                    a = cpu_ticks()
                    d = tcp.run(build, prog, grid, iters)
                    b = cpu_ticks()
                    got[iters] = ([y - x for x, y in zip(a, b)], d["seconds_per_iter"])
                per = [(got[long_][0][k] - got[short][0][k]) / hz / (long_ - short) / 2 * 1e3
                       for k in range(7)]
                res.setdefault(prog, []).append((per, got[long_][1] * 1e3))
    finally:
        tcp.teardown()
    print("| link | grid a rank | program | ms an iteration | " +
          " | ".join("%s ms" % k for k, _ in KINDS) + " |")
    print("|---|---|---|---:|" + "---:|" * len(KINDS))
    for prog in ("bsp", "parex"):
        v = res[prog]
        print("| TCP (%s), tbf %s | %d^3 | %s | %.3f | " % (tcp.TESTBED, rate, grid, prog,
                                                     statistics.median(x[1] for x in v)) +
              " | ".join("%.3f" % statistics.median(x[0][k] for x in v) for _, k in KINDS) +
              " |")
    print("\nmedians of %d rounds, per rank, iterations %d - %d: python3 bench/tcp_cpu_split.py "
          "--testbed %s %s" % (rounds, long_, short, tcp.TESTBED, " ".join(sys.argv[1:])))


if __name__ == "__main__":
    main()
