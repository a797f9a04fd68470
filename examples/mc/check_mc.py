#!/usr/bin/env python3
"""examples/mc/check_mc.py - ctest driver of parex-mc (examples/mc/CMakeLists.txt).

  check_mc.py same BIN CONFIGS [parex-mc args...]
      Runs parex-mc once per configuration SPACE:THREADS:MODE (comma-separated, THREADS sets
      PX_NUM_THREADS; MODE is atomic, duplicated, auto or default), each with --json
      --progress 0 and the given args. Fails unless every run exits 0 (analytic check passed),
      reports the space, thread count and scatter mode it was asked for (auto/default: any),
      and every JSON field except space, threads, mode, seconds and particles_per_s is
      identical across the runs (the tallies are exact integer sums: see examples/mc/mc.h).
  check_mc.py bad BIN
      Runs parex-mc with bad input; each must exit 2 with a message naming the flag.
"""
import json
import os
import subprocess
import sys

VARYING = {"space", "threads", "mode", "seconds", "particles_per_s"}


def run(binary, args, threads=None):
    env = dict(os.environ)
    env.setdefault("PX_LOG_LEVEL", "error")
    if threads is not None:
        env["PX_NUM_THREADS"] = str(threads)
    p = subprocess.run([binary] + args, env=env, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def same(binary, configs, extra):
    ref, ref_name, ok = None, None, True
    for cfg in configs.split(","):
        space, threads, mode = cfg.split(":")
        args = extra + ["--space", space, "--json", "--progress", "0"]
        if mode != "default":
            args += ["--mode", mode]
        rc, out, err = run(binary, args, threads)
        if rc != 0:
            print("%s: exit %d\n%s%s" % (cfg, rc, out, err))
            ok = False
            continue
        res = json.loads(out.strip().splitlines()[-1])
        print("%-22s T=%s z=%+.2f R=%s z=%+.2f checksum=%s mode=%s threads=%d %.3fs" % (
            cfg, res["transmission"], res["z_score"], res["reflection"],
            res["reflection_z_score"], res["histogram_checksum"], res["mode"], res["threads"],
            res["seconds"]))
        if res["space"] != space or not res["pass"]:
            print("%s: space %s, pass %s" % (cfg, res["space"], res["pass"]))
            ok = False
        if space == "threads" and res["threads"] != int(threads):
            print("%s: ran %d threads" % (cfg, res["threads"]))
            ok = False
        if mode in ("atomic", "duplicated") and res["mode"] != mode:
            print("%s: ran mode %s" % (cfg, res["mode"]))
            ok = False
        if mode == "default" and space != "cuda" and res["mode"] != "duplicated":
            print("%s: default mode on a host space is %s, not duplicated" % (cfg, res["mode"]))
            ok = False
        fixed = {k: v for k, v in res.items() if k not in VARYING}
        if ref is None:
            ref, ref_name = fixed, cfg
        elif fixed != ref:
            diff = {k: (ref.get(k), fixed.get(k)) for k in set(ref) | set(fixed)
                    if ref.get(k) != fixed.get(k)}
            print("%s differs from %s: %s" % (cfg, ref_name, diff))
            ok = False
    print("identical tallies across %s: %s" % (configs, "yes" if ok else "NO"))
    return 0 if ok else 1


BAD = [
    (["--particles", "0"], "--particles"),
    (["--particles", "12x"], "--particles"),
    (["--particles", "9007199254740993"], "--particles"),
    (["--seed", "-1"], "--seed"),
    (["--seed", "18446744073709551616"], "--seed"),
    (["--sigma-t", "0"], "--sigma-t"),
    (["--sigma-t", "nan"], "--sigma-t"),
    (["--c", "1.5"], "--c"),
    (["--c", "-0.1"], "--c"),
    (["--thickness", "-1"], "--thickness"),
    (["--thickness", "inf"], "--thickness"),
    (["--sigma-t", "100", "--thickness", "11"], "optical thickness"),
    (["--bins", "0"], "--bins"),
    (["--bins", "1000001"], "--bins"),
    (["--mode", "fast"], "--mode"),
    (["--batch", "0"], "--batch"),
    (["--progress", "-1"], "--progress"),
    (["--space", "nosuchspace"], "nosuchspace"),
    (["--particles"], "--particles"),
    (["--frobnicate"], "--frobnicate"),
]


def bad(binary):
    ok = True
    for args, word in BAD:
        rc, out, err = run(binary, ["--progress", "0"] + args)
        good = rc == 2 and word in err
        print("%-45s exit %d: %s%s" % (" ".join(args), rc, err.strip().splitlines()[0]
                                        if err.strip() else "(no message)",
                                        "" if good else "   <-- WRONG"))
        ok = ok and good
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "same":
        sys.exit(same(sys.argv[2], sys.argv[3], sys.argv[4:]))
    if len(sys.argv) == 3 and sys.argv[1] == "bad":
        sys.exit(bad(sys.argv[2]))
    sys.exit(__doc__)
