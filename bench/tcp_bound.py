#!/usr/bin/env python3
"""bench/tcp_bound.py - on run_dcg_tcp.py's shaped TCP rows, the best ratio to the
bulk-synchronous CG that overlapping the halo with the interior rows could reach, from measured
times, and parex-cg's distance from it.

Why: issue 15's target is parex <= 0.9x bench_cg_bsp wherever bsp's halo is >= 10 % of an
iteration. Overlap takes off an iteration only the halo time for which the rank has other
work, and in plain CG the only work that does not need the halo is the SpMV's interior rows.
So with bsp's compute an iteration takes at least bsp - hideable, with
    hideable = min(H - C, I),
H bsp's halo time an iteration on the row's link (its halo_seconds_per_iter: post to all
halos in), I the interior rows' time (parex-cg's window_seconds_per_iter on shared memory,
where posting costs microseconds: receives posted to interior SpMV done) and C the part of H
that is host work: over the loopback the kernel's TCP stack (and tc's shaping) does the sends'
and receives' protocol work, system calls and softirqs, on the ranks' own cores, where no
overlap hides it on a one-core rank (a NIC would do it without the host). bound = (bsp -
hideable) / bsp.

C is not measured exactly, so the bound comes twice:
  - optimistic, C = 0 (all of bsp's halo hideable). Where it is above 0.9, no overlap of this
    CG's halo can meet the target on that row ("out of reach");
  - with C = bsp's halo time on the same loopback unshaped (MTU 1500 as shaped: the same
    packets, no time on the wire): the protocol work and the latency left when the wire is
    free. It leaves out the shaping's own softirq work (tbf's timers), so it is low and the
    bound still optimistic: where it is above 0.9 the row is "out of reach with the host
    work", else "within reach" of a perfect overlap.
(tcp_cpu_split.py's system + softirq time is an upper estimate of C at 48^3 a rank; on short
rows its clock ticks and the runs' exits make it noise.) Both bounds leave out that the host
work and the interior compete for the one core, and that a message's first bytes cannot
leave before its post. The last column, parex / (bsp - hideable) with C from the unshaped
link, is what parex pays beyond that bound: its own compute excess (compensated dots, engine
ops), the shaping's host work and whatever it does not hide.

Each row RATE:GRID:ITERS (tc rate, points a rank per side, iterations; keep ITERS at most 700
at 16^3 a rank, past which the recurrence underflows and both programs slow down:
bench/RESULTS.md, session 16). Rounds rotate the four runs: bsp and parex-cg on the shaped
link, parex-cg on shared memory, bsp on the unshaped link. parex-cg runs as it comes
(compensated dots, pieces).

  python3 bench/tcp_bound.py BUILD ROUNDS RATE:GRID:ITERS[,...]
  e.g. python3 bench/tcp_bound.py build-rel 3 1gbit:16:300,300mbit:48:60
Needs what run_dcg_tcp.py needs (root, iproute2, Open MPI's TCP transport).
"""
import os
import shutil
import statistics
import sys

import run_dcg_tcp as tcp

# (key, program, BTLs, on the shaped link)
RUNS = (("bsp", "bsp", "tcp,self", True), ("parex", "parex", "tcp,self", True),
        ("shm", "parex", "vader,self", True), ("free", "bsp", "tcp,self", False))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    build, rounds = sys.argv[1], int(sys.argv[2])
    rows = [r.split(":") for r in sys.argv[3].split(",")]
    if any(len(r) != 3 for r in rows):
        sys.exit("tcp_bound: rows are RATE:GRID:ITERS\n" + __doc__)
    if os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("tc"):
        sys.exit("tcp_bound: needs root, ip and tc (iproute2) for a shaped network namespace")
    res = {}
    try:
        for r in range(rounds):
            for rate, grid, iters in rows:
                k = r % len(RUNS)
                link = ()
                for key, prog, btl, shaped in RUNS[k:] + RUNS[:k]:
                    want = rate if shaped else None
                    if link != (want,):
                        tcp.netns_up(want)
                        link = (want,)
                    res.setdefault((rate, grid, key), []).append(
                        tcp.run(build, prog, int(grid), int(iters), btl))
    finally:
        tcp.sh(["ip", "netns", "del", tcp.NS], check=False)

    def med(rate, grid, key, field):
        return statistics.median(d[field] for d in res[(rate, grid, key)]) * 1e3

    print("| link | grid a rank | bsp ms | bsp halo ms (%) | interior ms | host work ms (C low) | "
          "bound, optimistic | bound, C low | target | parex ms | parex ratio | "
          "parex / bound |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    for rate, grid, _ in rows:
        tb = med(rate, grid, "bsp", "seconds_per_iter")
        hb = med(rate, grid, "bsp", "halo_seconds_per_iter")
        tp = med(rate, grid, "parex", "seconds_per_iter")
        interior = med(rate, grid, "shm", "window_seconds_per_iter")
        host = med(rate, grid, "free", "halo_seconds_per_iter")
        best = tb - max(0.0, min(hb, interior))
        bound = tb - max(0.0, min(hb - host, interior))
        if hb < 0.10 * tb:
            verdict = "n/a (halo < 10%)"
        elif best > 0.9 * tb:
            verdict = "out of reach"
        elif bound > 0.9 * tb:
            verdict = "out of reach with the host work"
        else:
            verdict = "within reach"
        print("| TCP, tbf %s | %s^3 | %.3f | %.3f (%.0f) | %.3f | %.3f | %.3f | %.3f | %s | %.3f "
              "| %.3f | %.3f |" % (rate, grid, tb, hb, 100 * hb / tb, interior, host, best / tb,
                                   bound / tb, verdict, tp, tp / tb, tp / bound))
    print("\nmedians of %d rounds, ms an iteration and rank: python3 bench/tcp_bound.py %s"
          % (rounds, " ".join(sys.argv[1:])))


if __name__ == "__main__":
    main()
