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
  - with C the larger of two measured parts of the host work:
      . bsp's halo time on the same loopback unshaped (MTU 1500 as shaped: the same packets,
        no time on the wire): the protocol work and the latency left when the wire is free;
      . parex-cg's window on the shaped link minus its window on shared memory: the host work
        that landed inside the window, where it delayed the interior rows (the sends' work,
        tc's shaping, the softirqs of arriving packets). The shaped link's window is the
        longest rank's (window_seconds_per_iter_max; the mean over ranks in runs from before
        that field): the other rank waits for that one, and on the loopback the work is not
        shared evenly (whichever rank's system call runs the one queue does the dequeue and
        the peer's receive work for both directions: at 1 Gbit/s 16^3 a rank, one rank's send
        op took 28 us and the other's 8).
    Both leave work out (the receives' work after the window; the shaping's work in the
    unshaped run), so C is low and the bound still optimistic: where it is above 0.9 the row is
    "out of reach with the host work", else "within reach" of a perfect overlap.
Both are raised to the wire floor where it is higher: the loopback has one shaped queue for
both directions, so an exchange's messages share the rate (the trace at 100 Mbit/s, 32^3 a
rank: one rank's halo arrives 0.63 ms after its post, the other's 1.34 ms), and an iteration
takes at least the bytes its messages put through that queue: the halo, both ranks',
halo_bytes x 1500 / 1448 (IPv4 and TCP headers with timestamps per 1,448-byte segment at MTU
1500), and the two allreduces, one message a rank each on 2 ranks (recursive doubling, and
Open MPI's blocking allreduce on 2 ranks), of at least 74 bytes on the wire (Ethernet 14, IPv4
20 and TCP 32 bytes of headers, and 8 of payload, the baseline's one double); acknowledgements
and MPI's own headers are left out, so the floor is low. tbf's 3,000-byte bucket lets one
message through faster than that when it has filled, so a halo can take less than its bytes /
rate, but not iteration after iteration: the bucket fills at the rate, so a queue carries at
most rate x T bytes in T. The allreduces count where the halo nearly fills the link: at 100
Mbit/s 16^3 a rank on veth the halo alone takes 0.170 ms of bsp's 0.196, with the allreduces'
12 us 0.182. On the veth testbed (--testbed veth: run_dcg_tcp.py) each direction has its own
queue, so the floor is one rank's bytes (half of halo_bytes: the two ranks' halos are the
same size on these rows, and one allreduce message each way).
Neither bound counts that a message's first bytes cannot leave before its post. The last
column, parex / (bsp - hideable) with that C, is what parex pays beyond the bound: its own
compute excess (compensated dots, engine ops, the pieces) and whatever it does not hide.

Each row RATE:GRID:ITERS (tc rate, points a rank per side, iterations; keep ITERS at most 700
at 16^3 a rank, past which the recurrence underflows and both programs slow down:
bench/RESULTS.md, session 16). Rounds rotate the four runs: bsp and parex-cg on the shaped
link, parex-cg on shared memory, bsp on the unshaped link. parex-cg runs as it comes
(compensated dots, pieces).

  python3 bench/tcp_bound.py [--testbed lo|veth] [--data FILE] BUILD ROUNDS RATE:GRID:ITERS[,...]
  python3 bench/tcp_bound.py --tables-only FILE
  e.g. python3 bench/tcp_bound.py build-rel 3 1gbit:16:300,300mbit:48:60
--data FILE keeps every run's JSON object (and the testbed, rows and rounds) in FILE;
--tables-only FILE prints the table again from such a file without measuring (or root).
Needs what run_dcg_tcp.py needs (root, iproute2, Open MPI's TCP transport).
"""
import json
import statistics
import sys

import run_dcg_tcp as tcp

# The least an allreduce message of 2 ranks puts on the wire: Ethernet, IPv4 and TCP (with
# timestamps) headers and one double (the wire floor, below).
ALLREDUCE_WIRE_BYTES = 14 + 20 + 32 + 8
# The fields of a run that the table reads, all that --data keeps.
KEEP = ("seconds_per_iter", "halo_seconds_per_iter", "window_seconds_per_iter",
        "window_seconds_per_iter_max", "message_seconds_per_iter", "overlap", "halo_bytes")


# (key, program, BTLs, on the shaped link)
RUNS = (("bsp", "bsp", "tcp,self", True), ("parex", "parex", "tcp,self", True),
        ("shm", "parex", "vader,self", True), ("free", "bsp", "tcp,self", False))


def load(path):
    """The rows, rounds and runs a --data file holds (written by measure()); sets the testbed."""
    with open(path) as f:
        data = json.load(f)
    tcp.TESTBED = data["testbed"]
    res = {}
    for rate, grid, key, d in data["runs"]:
        res.setdefault((rate, grid, key), []).append(d)
    return [tuple(r) for r in data["rows"]], data["rounds"], res


def measure(build, rounds, rows, path):
    """Run ROUNDS rounds of ROWS; the runs' JSON objects by (rate, grid, run key), also written
    to PATH (when given) for --tables-only: checked before measuring, written also when a run
    fails (what was measured until then)."""
    tcp.need_netns("tcp_bound")
    res = {}
    out = open(path, "w") if path else None
    try:
        for r in range(rounds):
            for rate, grid, iters in rows:
                k = r % len(RUNS)
                link = ()
                for key, prog, btl, shaped in RUNS[k:] + RUNS[:k]:
                    want = rate if shaped else None
                    if link != (want,):
                        tcp.link_up(want)
                        link = (want,)
                    d = tcp.run(build, prog, int(grid), int(iters), btl)
                    res.setdefault((rate, grid, key), []).append(
                        {k: d[k] for k in KEEP if k in d})
    finally:
        tcp.teardown()
        if out:
            with out:
                json.dump({"testbed": tcp.TESTBED, "rows": rows, "rounds": rounds,
                           "runs": [[k[0], k[1], k[2], d] for k, v in res.items() for d in v]},
                          out)
    return res


def main():
    tcp.parse_testbed(sys.argv, "tcp_bound")
    if len(sys.argv) == 3 and sys.argv[1] == "--tables-only":
        rows, rounds, res = load(sys.argv[2])
        command = "--tables-only " + sys.argv[2]
    else:
        path = None
        if len(sys.argv) > 2 and sys.argv[1] == "--data":
            path = sys.argv[2]
            del sys.argv[1:3]
        if len(sys.argv) != 4:
            sys.exit(__doc__)
        build, rounds = sys.argv[1], int(sys.argv[2])
        rows = [tuple(r.split(":")) for r in sys.argv[3].split(",")]
        if any(len(r) != 3 for r in rows):
            sys.exit("tcp_bound: rows are RATE:GRID:ITERS\n" + __doc__)
        for rate, _, _ in rows:
            tcp.bits_per_s(rate, "tcp_bound")
        res = measure(build, rounds, rows, path)
        command = "--testbed %s %s%s" % (tcp.TESTBED, "--data %s " % path if path else "",
                                         " ".join(sys.argv[1:]))

    def med(rate, grid, key, field):
        return statistics.median(d[field] for d in res[(rate, grid, key)]) * 1e3

    # runs from before window_seconds_per_iter_max have the mean window only
    longest = "window_seconds_per_iter_max" if all(
        "window_seconds_per_iter_max" in d for k, v in res.items() if k[2] == "parex"
        for d in v) else "window_seconds_per_iter"
    print("| link | grid a rank | bsp ms | bsp halo ms (%%) | interior ms | host work ms: unshaped "
          "halo, in the %s window | wire floor ms | bound, optimistic | bound, with C | "
          "target | parex ms | parex ratio | parex / bound |"
          % ("longest" if longest.endswith("_max") else "mean"))
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    for rate, grid, _ in rows:
        tb = med(rate, grid, "bsp", "seconds_per_iter")
        hb = med(rate, grid, "bsp", "halo_seconds_per_iter")
        tp = med(rate, grid, "parex", "seconds_per_iter")
        interior = med(rate, grid, "shm", "window_seconds_per_iter")
        free = med(rate, grid, "free", "halo_seconds_per_iter")
        landed = med(rate, grid, "parex", longest) - interior
        host = max(free, landed)
        queue = statistics.median(d["halo_bytes"] for d in res[(rate, grid, "parex")]) * \
            1500 / 1448 + 2 * 2 * ALLREDUCE_WIRE_BYTES
        if tcp.TESTBED == "veth":
            queue /= 2
        wire = queue * 8 / tcp.bits_per_s(rate, "tcp_bound") * 1e3
        best = max(wire, tb - max(0.0, min(hb, interior)))
        bound = max(wire, tb - max(0.0, min(hb - host, interior)))
        if hb < 0.10 * tb:
            verdict = "n/a (halo < 10%)"
        elif best > 0.9 * tb:
            verdict = "out of reach"
        elif bound > 0.9 * tb:
            verdict = "out of reach with the host work"
        else:
            verdict = "within reach"
        print("| TCP (%s), tbf %s | %s^3 | %.3f | %.3f (%.0f) | %.3f | %.3f, %.3f | %.3f | %.3f | "
              "%.3f | %s | %.3f | %.3f | %.3f |"
              % (tcp.TESTBED, rate, grid, tb, hb, 100 * hb / tb, interior, free, landed, wire,
                 best / tb, bound / tb, verdict, tp, tp / tb, tp / bound))
    print("\nmedians of %d rounds on the %s testbed, ms an iteration and rank: python3 "
          "bench/tcp_bound.py %s" % (rounds, tcp.TESTBED, command))


if __name__ == "__main__":
    main()
