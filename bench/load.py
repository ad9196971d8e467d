#!/usr/bin/env python3
"""The load rule of every bench, in one place: a run is *noisy* when the
1-minute load average per core exceeded 0.5 when it started. Other work then
competes for the CPU, and a busy machine starves Redis and flatters
whichever side uses less of it, so a noisy table is not the quiet
machine's figures (only ratios within one run mean anything there).

  load.py record start|end    a JSON line of the load average, nproc and the
                              builds running (compilers, linkers, ninja, make),
                              for a results file of bench/run
  load.py settle SECONDS      waits (at most SECONDS) until the load is no
                              longer noisy: the bench's own load, or a
                              build's, lingers in the 1-minute average for
                              about a minute after it ends; prints the wait
  load.py -- COMMAND [ARG...] runs COMMAND between a "load average at start"
                              line (and the noisy mark) and a "load average at
                              end" line, on stderr (for the benches run alone:
                              rl_redis_bench, rl_bench_memory, bench/go,
                              bench/node/bench.js)
bench/run (so also bench/java/run and bench/python/run) records the load at
the start and end of each run and table.py marks its title with noisy().
"""
import json
import os
import subprocess
import sys
import time

# The 1-minute load average per core above which a run is noisy.
NOISY_PER_CORE = 0.5
# Processes that mean something is building (compilers, linkers, build
# tools): named beside the load, since benches are never run during a build.
BUILDERS = {"cc1", "cc1plus", "ld", "ld.gold", "ld.lld", "ninja", "make", "compile", "swig", "javac", "rustc"}


def now():
    """(1-minute, 5-minute, 15-minute load average), number of CPUs."""
    return os.getloadavg(), os.cpu_count() or 1


def builds():
    """{process name: count} of the builders running now (any user's)."""
    found = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/comm") as f:
                    name = f.read().strip()
            except OSError:  # gone since listed
                continue
            if name in BUILDERS:
                found[name] = found.get(name, 0) + 1
    return dict(sorted(found.items()))


def show_builds(found):
    return ", ".join(f"{name} x{n}" for name, n in found.items())


def per_core(load1, cpus):
    return load1 / cpus


def noisy(load1, cpus):
    return per_core(load1, cpus) > NOISY_PER_CORE


def noisy_note(load1, cpus, when="at start"):
    """The line under a noisy table's title."""
    return (f"noisy: the 1-minute load average {when} was {load1:.2f} on {cpus} CPUs, "
            f"{per_core(load1, cpus):.2f} per core (> {NOISY_PER_CORE}): other work competed for the CPU; "
            "these are not quiet-machine figures, only ratios within a run mean anything")


def show(loads):
    return " ".join(f"{x:.2f}" for x in loads)


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "record" and args[1] in ("start", "end"):
        loads, cpus = now()
        print(json.dumps({"bench": "load", "at": args[1], "loadavg": [round(x, 2) for x in loads], "cpus": cpus,
                          "builds": builds()}))
        return 0
    if len(args) == 2 and args[0] == "settle" and args[1].isdigit():
        began = time.monotonic()
        while noisy(now()[0][0], now()[1]) and time.monotonic() - began < int(args[1]):
            time.sleep(5)
        loads, cpus = now()
        print(f"waited {time.monotonic() - began:.0f} s for the load to settle: {show(loads)} on {cpus} CPUs"
              + (" (still noisy)" if noisy(loads[0], cpus) else ""), file=sys.stderr)
        return 0
    if len(args) >= 2 and args[0] == "--":
        loads, cpus = now()
        mark = " (noisy)" if noisy(loads[0], cpus) else ""
        building = show_builds(builds())
        print(f"load average at start {show(loads)} on {cpus} CPUs{mark}"
              + (f", while building: {building}" if building else ""), file=sys.stderr)
        if mark:
            print(noisy_note(loads[0], cpus), file=sys.stderr)
        code = subprocess.call(args[1:])
        print(f"load average at end {show(now()[0])}", file=sys.stderr)
        return code
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
