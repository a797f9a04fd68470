"""bench/cg_model_inputs.py - the measured inputs of bench/cg_model.py (issue 15): the
ping-pong curve and allreduce times (bench_pingpong --json), the network's message time, and
the engine's per-op and per-message cost (run_dcg.sh's bench/dcg_engine.txt)."""
import json
import math
import statistics


def json_lines(path):
    """The JSON objects of the file's lines that start with "{" (other lines are log text)."""
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                yield json.loads(line)


# ---- network ---------------------------------------------------------------------------------

class Network:
    """Message time: the measured ping-pong curve (log-log interpolation) or alpha + b / beta."""

    def __init__(self, curve=None, latency_s=None, bandwidth_bs=None, label=""):
        # A larger message never costs less than a smaller one: the lower envelope from the
        # largest size down removes the spikes a loaded machine puts into single sizes.
        c = sorted(curve or [])
        for i in range(len(c) - 2, -1, -1):
            c[i] = (c[i][0], min(c[i][1], c[i + 1][1]))
        self.curve = c
        self.label = label
        if c:
            self.alpha = c[0][1]
            big = [b / (t - self.alpha) for b, t in c if b >= 65536 and t > self.alpha]
            self.beta = max(big) if big else float("inf")
        else:
            self.alpha, self.beta = latency_s, bandwidth_bs

    def msg(self, nbytes):
        c = self.curve
        if not c:
            return self.alpha + nbytes / self.beta
        if nbytes <= c[0][0]:
            return c[0][1]
        if nbytes >= c[-1][0]:
            return c[-1][1] + (nbytes - c[-1][0]) / self.beta
        for (b0, t0), (b1, t1) in zip(c, c[1:]):
            if b0 <= nbytes <= b1:
                w = math.log(nbytes / b0) / math.log(b1 / b0)
                return math.exp(math.log(t0) + w * (math.log(t1) - math.log(t0)))
        return c[-1][1]


def load_pingpong(paths, stat):
    """Ping-pong curve [(bytes, seconds)] and measured allreduce {(ranks, doubles): seconds}."""
    curve, allreduce = [], {}
    key = "half_rtt_us" if stat == "median" else "half_rtt_us_min"
    akey = "us" if stat == "median" else "us_min"
    for path in paths:
        for line in open(path):
            line = line.strip()
            if not line.startswith("{"):
                continue
            rec = json.loads(line)
            for row in rec.get("pingpong", []):
                curve.append((row["bytes"], row[key] * 1e-6))
            for row in rec.get("allreduce", []):
                allreduce[(rec["ranks"], row["doubles"])] = row[akey] * 1e-6
    return curve, allreduce


# ---- the engine term ------------------------------------------------------------------------

class Engine:
    """The engine's per-op cost c_op(T) (seconds), its extra cost per MPI message c_msg
    (seconds) and the op count N_ops(P, neighbours)."""

    def __init__(self, per_threads, source, ops_abc, msg_s=0.0, msg_source="none",
                 roundtrip_s=None):
        self.per_threads = per_threads  # {threads: seconds per op}
        self.source = source
        self.ops_abc = ops_abc
        self.msg_s = msg_s
        self.msg_src = msg_source
        self.roundtrip_s = roundtrip_s

    def op_s(self, threads):
        if not self.per_threads:
            return 0.0
        if threads in self.per_threads:
            return self.per_threads[threads]
        near = min(self.per_threads, key=lambda t: (abs(t - threads), t))
        return self.per_threads[near]

    def ops(self, ranks, neighbours, reported=None):
        if reported is not None:
            return reported
        a, b, c = self.ops_abc
        return a if ranks == 1 else b + c * neighbours

    def seconds(self, ranks, neighbours, threads, reported=None):
        return self.ops(ranks, neighbours, reported) * self.op_s(threads)


def load_engine(path, stat="median"):
    """bench/dcg_engine.txt: {threads: seconds per op} and its command ("engine_op" lines),
    and the engine's extra seconds per message and op round trip (bench_engine_pingpong lines,
    medians; stat "min": the batch minima of both half round trips), or None where absent."""
    per, src, extra, rt, msrc = {}, [], [], [], []
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        d = json.loads(line)
        rec = d.get("engine_op")
        if rec:
            per[rec["threads"]] = rec["ns_per_op"] * 1e-9
            src.append(rec.get("source", "?"))
        if "engine_extra_us" in d:
            if stat == "min":
                e = d["engine_half_rtt_us_min"] - d["mpi_half_rtt_us_min"]
                rt.append(d.get("op_roundtrip_us_min", float("nan")) * 1e-6)
            else:
                e = d["engine_extra_us"]
                rt.append(d.get("op_roundtrip_us", float("nan")) * 1e-6)
            extra.append(max(0.0, e) * 1e-6)
            msrc.append(d.get("source", "bench_engine_pingpong"))
    msg = (statistics.median(extra), statistics.median(rt), "; ".join(sorted(set(msrc)))) \
        if extra else None
    return per, "; ".join(src), msg


def reported_ops(res):
    """parex-cg's own count of engine ops per iteration (median over runs), or None."""
    v = [r["engine_ops_per_iter"] for r in res if r.get("engine_ops_per_iter") is not None]
    return statistics.median(v) if v else None
