#!/usr/bin/env python3
"""bench/run_dcg_tcp.py - distributed CG over a network that takes time on the wire: parex-cg
against bench_cg_bsp on Open MPI's TCP transport, through the loopback of a network namespace
shaped to a rate by tc's token bucket filter (tbf).

Why: every other distributed-CG row crosses shared memory, where a halo message is copied into
the peer's queue at its post and takes microseconds, so overlap has little to hide. A shaped
TCP link gives messages a transfer time of their own (bytes / rate) that a rank can spend on
its interior rows. This kernel has no netem, so the link has a rate but no added latency.
What such a link does not model: a real NIC moves the bytes without the host, while here the
kernel's TCP stack does the sends' and receives' protocol work on the ranks' own cores (strace
shows an 8 KB writev taking 0.08-0.15 ms at 1 Gbit/s); that part of the halo cannot be hidden
by any overlap on a rank with one core, and it grows in share as the rate goes up.

Each row: 2 ranks x 1 thread, a core each (bound, not oversubscribed), HPCG weak scaling with
GRID^3 points a rank, a fixed number of iterations (both programs run exactly ITERS; parex-cg
with --tol 1e-300 --max-iters ITERS, which ends "not converged", status 3, as intended). Rounds
interleave the two programs and alternate which goes first (the first of a pair runs slower on
these VMs). Prints a Markdown table: medians and minima of the time per iteration, bsp's halo
share, parex's overlap, ratio = parex / bsp (ratio of the medians; the median of the per-round
ratios beside it) and issue 15's target (parex <= 0.9x bsp where bsp's halo >= 10 %).

Two testbeds (--testbed, first argument of every TCP script; lo by default):
  - lo: one namespace, the ranks' TCP traffic over its loopback, shaped by one tbf queue. That
    queue carries both directions, so an exchange's two messages share the rate (half duplex),
    and whichever rank's system call or timer runs the queue does the dequeue and the peer's
    receive work for both directions (a 1 Gbit/s 16^3 trace: one rank's send op 28 us, the
    other's 8 us).
  - veth: two namespaces joined by a veth pair (10.77.0.1 and 10.77.0.2), each end's egress
    shaped by its own tbf: full duplex, one queue a direction, each rank's sends dequeued by
    its own writev, as two hosts with a NIC each. mpirun runs in the first namespace and
    starts the second "host"'s orted through an rsh agent that enters the second namespace
    (plm_rsh_agent: what ssh would do on a cluster); a rankfile puts rank 0 on core 0 and
    rank 1 on core 1, the two hosts sharing this VM's cores. The receive's protocol work still
    runs on this VM's cores (veth hands a packet to the peer in the sender's softirq), which a
    NIC would raise on the receiving host. Shared-memory runs (tcp_bound.py's) use the lo
    namespace, unshaped: shared memory is within one host.
tbf's bucket holds 3,000 bytes (two packets), so a message that finds the bucket full leaves
without delay: on veth a 16^3 halo (2 KB a direction) passes unshaped at 1 Gbit/s and 300
Mbit/s, where the bucket refills within an iteration (not at 100 Mbit/s).

Needs root (ip netns, tc) and the Open MPI TCP BTL; exits with a message where either is
missing. The namespaces are made at start and removed at the end.

parex-cg runs twice: as it comes (since session 16 the interior SpMV in pieces of about 4,096
rows, --interior-chunk's default, between which the one-core rank tests its messages:
include/parex/mpi.h, "Progress") and with --interior-chunk 0 (the interior in one call a
thread, session 15's default): the column that shows what the pieces buy where a message needs
the host during the interior rows (rendezvous messages past Open MPI's 64 KiB TCP eager limit:
96^3 a rank) and what they cost where it does not.

A third parex-cg column runs --dots plain: its dot products as plain double sums, the
baseline's arithmetic (by default they are compensated sums, which cost parex 0-8 % of an
iteration at 16^3-48^3 a rank on shared memory: bench/RESULTS.md, session 16).

With OLD_BUILD, that build's parex-cg runs too (an A/B of two parex builds on the same link,
in the same rounds) and gets its own columns; bsp comes from BUILD. The programs' order rotates
every round.

  python3 bench/run_dcg_tcp.py [--testbed lo|veth] BUILD ROUNDS RATE:GRID:ITERS[,...] [OLD_BUILD]
  e.g. python3 bench/run_dcg_tcp.py build-rel 5 1gbit:32:300,300mbit:32:300,100mbit:32:200
       python3 bench/run_dcg_tcp.py --testbed veth build-rel 5 100mbit:32:200
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dcg_launch import fixed_iterations

NS = "parex-tcp"
# The veth testbed: two namespaces ("hosts") joined by a veth pair on a private /24.
NS_A, NS_B = "parex-tcp-a", "parex-tcp-b"
VETH_A, VETH_B = "pxveth-a", "pxveth-b"
ADDR_A, ADDR_B, NET = "10.77.0.1", "10.77.0.2", "10.77.0.0/24"
TESTBEDS = ("lo", "veth")
RUN_TIMEOUT_S = 600  # one mpirun (the longest rows take seconds)
TESTBED = "lo"  # set by parse_testbed()
# Every rank's environment: one thread, bound (both programs)
RANK_ENV = {"OMP_NUM_THREADS": "1", "PX_NUM_THREADS": "1", "OMP_PROC_BIND": "close",
            "OMP_PLACES": "cores", "PX_BIND": "close"}
UNITS = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}  # tc's rate units
_files = {}     # the veth testbed's hostfile, rankfile and rsh agent (made by link_up)


def sh(argv, check=True):
    return subprocess.run(argv, capture_output=True, text=True, check=check)


def need_netns(prog):
    """Exit with PROG's message unless this process can make a shaped namespace (root, ip and
    tc from iproute2)."""
    if os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("tc"):
        sys.exit("%s: needs root, ip and tc (iproute2) for a shaped network namespace" % prog)


def netns_up(rate):
    """(Re)make namespace NS with its loopback at MTU 1500 shaped to RATE (tc's syntax), or not
    shaped where RATE is None (the same packets, with no time on the wire)."""
    sh(["ip", "netns", "del", NS], check=False)
    sh(["ip", "netns", "add", NS])
    nse = ["ip", "netns", "exec", NS]
    sh(nse + ["ip", "link", "set", "lo", "up"])
    # tbf's bucket must hold one packet; loopback's default MTU (64 KiB) would need a burst
    # as large, which lets whole messages through unshaped.
    sh(nse + ["ip", "link", "set", "lo", "mtu", "1500"])
    if rate is None:
        return
    sh(nse + ["tc", "qdisc", "add", "dev", "lo", "root", "tbf", "rate", rate, "burst", "3000",
              "latency", "20ms"])


def bits_per_s(rate, prog):
    """tc's rate RATE (e.g. 300mbit) in bits per second; exits with PROG's message where RATE
    is not a number in kbit, mbit or gbit."""
    for unit, scale in UNITS.items():
        if rate.endswith(unit):
            try:
                return float(rate[:-len(unit)]) * scale
            except ValueError:
                break
    sys.exit("%s: rate %s: give it in kbit, mbit or gbit" % (prog, rate))


def parse_testbed(argv, prog):
    """Take '--testbed lo|veth' off the front of ARGV (a list, changed in place) and set TESTBED
    (PROG names the script in the message)."""
    global TESTBED
    if len(argv) > 1 and argv[1] == "--testbed":
        if len(argv) < 3 or argv[2] not in TESTBEDS:
            sys.exit("%s: --testbed is lo or veth" % prog)
        TESTBED = argv[2]
        del argv[1:3]
    return TESTBED


def veth_up(rate):
    """(Re)make the veth testbed: namespaces NS_A and NS_B joined by a veth pair at MTU 1500,
    each end's egress shaped to RATE (or not shaped where RATE is None), and the files mpirun
    needs to start rank 1 in NS_B (written once a process, in a temporary folder)."""
    for ns in (NS_A, NS_B):
        sh(["ip", "netns", "del", ns], check=False)
        sh(["ip", "netns", "add", ns])
    sh(["ip", "link", "add", VETH_A, "netns", NS_A, "type", "veth", "peer", "name", VETH_B,
        "netns", NS_B])
    for ns, dev, addr in ((NS_A, VETH_A, ADDR_A), (NS_B, VETH_B, ADDR_B)):
        sh(["ip", "-n", ns, "addr", "add", addr + "/24", "dev", dev])
        sh(["ip", "-n", ns, "link", "set", "lo", "up"])
        sh(["ip", "-n", ns, "link", "set", dev, "mtu", "1500", "up"])
        if rate is not None:
            sh(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "tbf",
                "rate", rate, "burst", "3000", "latency", "20ms"])
    if not _files:
        d = tempfile.mkdtemp(prefix="parex-veth-")
        _files["dir"] = d
        _files["hosts"] = os.path.join(d, "hosts")
        _files["ranks"] = os.path.join(d, "rankfile")
        _files["agent"] = os.path.join(d, "agent")
        with open(_files["hosts"], "w") as f:
            f.write("%s slots=1\n%s slots=1\n" % (ADDR_A, ADDR_B))
        with open(_files["ranks"], "w") as f:
            f.write("rank 0=%s slot=0\nrank 1=%s slot=1\n" % (ADDR_A, ADDR_B))
        # mpirun's rsh launcher runs "AGENT HOST COMMAND...": the only remote host is NS_B
        with open(_files["agent"], "w") as f:
            f.write('#!/bin/sh\nshift\nexec ip netns exec %s /bin/sh -c "$*"\n' % NS_B)
        os.chmod(_files["agent"], 0o755)


def link_up(rate):
    """Make TESTBED's link shaped to RATE (unshaped where RATE is None). The lo namespace NS is
    made on both testbeds: shared-memory runs use it."""
    netns_up(rate if TESTBED == "lo" else None)
    if TESTBED == "veth":
        veth_up(rate)


def teardown():
    """Remove every namespace and file the testbeds made."""
    for ns in (NS, NS_A, NS_B):
        sh(["ip", "netns", "del", ns], check=False)
    if _files:
        shutil.rmtree(_files["dir"], ignore_errors=True)
        _files.clear()


def run(build, prog, grid, iters, btl="tcp,self", extra=()):
    """One 2-rank run of PROG ('bsp', 'parex', 'onecall': parex-cg --interior-chunk 0, or
    'plain': parex-cg --dots plain) of BUILD in the namespace, over Open MPI's BTLs BTL (the
    shaped TCP link; "vader,self" for shared memory), with the program's flags EXTRA added;
    its JSON object."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               **RANK_ENV)
    if prog == "bsp":
        argv = [os.path.join(build, "bench", "bench_cg_bsp"), "--grid", str(grid), "--iters",
                str(iters), "--json"]
        ok = (0,)
    else:
        argv = [os.path.join(build, "examples", "cg", "parex-cg"), "--grid", str(grid),
                "--max-iters", str(iters), "--tol", "1e-300", "--progress", "0", "--json"]
        if prog == "onecall":
            argv += ["--interior-chunk", "0"]
        if prog == "plain":
            argv += ["--dots", "plain"]
        ok = (0, 3)
    argv += list(extra)
    veth = TESTBED == "veth" and "tcp" in btl
    ns, net = (NS_A, NET) if veth else (NS, "lo")
    cmd = ["nice", "-n", "-19", "ip", "netns", "exec", ns, "mpirun", "--mca", "btl", btl,
           "--mca", "btl_tcp_if_include", net, "--mca", "oob_tcp_if_include", net, "-np", "2"]
    if veth:  # rank 1 on the second host, started through the agent; -x: the remote env
        cmd += ["--mca", "plm_rsh_agent", _files["agent"], "--hostfile", _files["hosts"],
                "--rankfile", _files["ranks"]]
        for var in RANK_ENV:
            cmd += ["-x", var]
    else:
        cmd += ["--map-by", "slot:PE=1", "--bind-to", "core"]
    cmd += argv
    try:
        # a run takes seconds; a launch that hangs (an orted that never reports back on veth)
        # must not keep the caller from removing the namespaces
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired as ex:
        text = [x.decode(errors="replace") if isinstance(x, bytes) else x or ""
                for x in (ex.stdout, ex.stderr)]
        sys.exit("run_dcg_tcp: %s did not end in %d s:\n%s%s" % (" ".join(cmd), RUN_TIMEOUT_S,
                                                                    text[0], text[1]))
    if out.returncode not in ok:
        sys.exit("run_dcg_tcp: %s failed (status %d):\n%s%s" % (" ".join(cmd), out.returncode,
                                                                 out.stdout, out.stderr))
    return fixed_iterations(json.loads(out.stdout.strip().splitlines()[-1]), ok, cmd)


def main():
    parse_testbed(sys.argv, "run_dcg_tcp")
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    build, rounds = sys.argv[1], int(sys.argv[2])
    rows = [r.split(":") for r in sys.argv[3].split(",")]
    progs = [("bsp", build, "bsp"), ("parex", build, "parex"), ("onecall", build, "one call"),
             ("plain", build, "plain dots")]
    if len(sys.argv) == 5:
        progs.append(("parex", sys.argv[4], "parex (old)"))
    for rate, _, _ in rows:
        bits_per_s(rate, "run_dcg_tcp")
    need_netns("run_dcg_tcp")
    res = {}
    try:
        for r in range(rounds):
            for rate, grid, iters in rows:
                link_up(rate)
                k = r % len(progs)
                for prog, b, label in progs[k:] + progs[:k]:
                    res.setdefault((rate, grid, label), []).append(run(b, prog, int(grid),
                                                                       int(iters)))
    finally:
        teardown()
    old = len(progs) == 5
    print("| link | grid a rank | iterations | bsp ms (min / median) | bsp halo % | "
          "parex ms (min / median) | parex overlap | ratio | per-round | target | "
          "one call ms (min / median) | one call ratio | target | plain dots ms (min / median) | "
          "plain ratio | target |" +
          (" old parex ms (min / median) | old ratio |" if old else ""))
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|---:|---:|---|" +
          ("---:|---:|" if old else ""))
    for rate, grid, iters in rows:
        b, p = res[(rate, grid, "bsp")], res[(rate, grid, "parex")]
        bs = [d["seconds_per_iter"] * 1e3 for d in b]
        ps = [d["seconds_per_iter"] * 1e3 for d in p]
        halo = statistics.median(d["halo_seconds_per_iter"] / d["seconds_per_iter"] for d in b)
        ratio = statistics.median(ps) / statistics.median(bs)
        per_round = statistics.median(x / y for x, y in zip(ps, bs))
        target = "n/a (halo < 10%)" if halo < 0.10 else ("met" if ratio <= 0.9 else "missed")
        line = "| TCP (%s), tbf %s | %s^3 | %s | %.3f / %.3f | %.1f | %.3f / %.3f | %.2f | " \
               "%.3f | %.3f | %s |" % (TESTBED, rate, grid, iters, min(bs), statistics.median(bs),
                                100 * halo, min(ps), statistics.median(ps),
                                statistics.median(d["overlap"] for d in p), ratio, per_round,
                                target)
        for label in ("one call", "plain dots"):
            qs = [d["seconds_per_iter"] * 1e3 for d in res[(rate, grid, label)]]
            qratio = statistics.median(qs) / statistics.median(bs)
            line += " %.3f / %.3f | %.3f | %s |" % (
                min(qs), statistics.median(qs), qratio,
                "n/a" if halo < 0.10 else ("met" if qratio <= 0.9 else "missed"))
        if old:
            os_ = [d["seconds_per_iter"] * 1e3 for d in res[(rate, grid, "parex (old)")]]
            line += " %.3f / %.3f | %.3f |" % (min(os_), statistics.median(os_),
                                              statistics.median(os_) / statistics.median(bs))
        print(line)
    print("\n%d rounds: python3 bench/run_dcg_tcp.py --testbed %s %s" % (rounds, TESTBED,
                                                                      " ".join(sys.argv[1:])))


if __name__ == "__main__":
    main()
