"""bench/dcg_launch.py - run_dcg.sh's launch of a distributed-CG row, for the Python drivers
(cg_variants.py, ab_parex_cg.py): the mpirun options and environment of P ranks x T threads.

Where P x T fits the cores each rank gets T cores of its own, threads bound close inside; more
one-thread ranks than cores share cores one rank a core (core:overload-allowed); otherwise no
binding. Oversubscribed rows also get Open MPI's mpi_yield_when_idle and OpenMP's passive wait
policy. The environment sets both OpenMP's and parex's thread counts, as run_dcg.sh does, so
one launch serves bench_cg_bsp and parex-cg alike. Keep it in step with run_dcg.sh's
mpi_opts / env_opts.
"""
import json
import os
import subprocess
import sys


def launch(p, t):
    """(mpirun options, environment) for P ranks x T threads on this machine's cores."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMP_NUM_THREADS=str(t), PX_NUM_THREADS=str(t))
    if not oversubscribed(p, t):
        env.update(OMP_PROC_BIND="close", OMP_PLACES="cores", PX_BIND="close")
        return ["--map-by", "slot:PE=%d" % t, "--bind-to", "core"], env
    env.update(OMP_WAIT_POLICY="passive")
    yield_opts = ["--mca", "mpi_yield_when_idle", "1"]
    if t == 1:
        return ["--oversubscribe", "--map-by", "core", "--bind-to", "core:overload-allowed"] + \
            yield_opts, env
    return ["--oversubscribe", "--bind-to", "none"] + yield_opts, env


def oversubscribed(p, t):
    """Whether P ranks x T threads exceed this machine's cores."""
    return p * t > (os.cpu_count() or 1)


def run_json(p, t, argv, prefix=(), ok=(0,)):
    """Run ARGV (a program and its arguments) on P ranks x T threads under launch(p, t), after
    PREFIX (e.g. nice); returns its last output line, parsed as JSON. Fails on an exit status
    not in OK (parex-cg exits 3 when --max-iters ends the solve: pass (0, 3) for fixed
    iterations)."""
    opts, env = launch(p, t)
    cmd = list(prefix) + ["mpirun"] + opts + ["-np", str(p)] + list(argv)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode not in ok:
        raise subprocess.CalledProcessError(out.returncode, cmd, out.stdout, out.stderr)
    return fixed_iterations(json.loads(out.stdout.strip().splitlines()[-1]), ok, cmd)


def fixed_iterations(j, ok, cmd):
    """J (a run's JSON) unless a fixed-iteration run (OK admits exit 3) of the pipelined CG
    replaced its residual or stagnated: it went past the attainable accuracy, and its time
    holds replacements bench_cg_bsp's loops do not make (examples/cg/dcg.h); use fewer
    iterations."""
    if 3 in ok and (j.get("replacements", 0) or j.get("stagnated", False)):
        sys.exit("%s: a fixed-iteration run replaced its residual %d times (stagnated: %s); "
                 "keep its iterations below convergence" % (" ".join(cmd),
                                                            j.get("replacements", 0),
                                                            j.get("stagnated")))
    return j
