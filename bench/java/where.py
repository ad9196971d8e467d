#!/usr/bin/env python3
"""Where the machine's time went during bench/java/count's counted round.

Reads `perf report --sort comm,dso --stdio -t '|'` of a system-wide
`perf record -a` on stdin and the first line of /proc/stat before and after
the round, and prints each role's share of all CPUs, the part of it spent in
the kernel, and its microseconds per decision (share x CPUs x seconds /
decisions). The roles are told by thread name: redis-server; the callers
(dev.rl.bench.Count's threads, "count-N"); rl's I/O thread ("rl-io"); the
Lettuce event loop ("lettuce-nioEven..."); the JVM's own threads (JIT
compilers, GC, VM); idle (the kernel's "swapper"); anything else.
"""
import argparse
import os
import sys


def role(comm):
    if comm == "redis-server":
        return "Redis (redis-server)"
    if comm.startswith("count-"):
        return "the calling threads"
    if comm == "rl-io":
        return "rl's I/O thread (rl-io)"
    if comm.startswith("lettuce-"):
        return "Lettuce's event loop"
    if comm.startswith(("C1 ", "C2 ", "GC ", "G1 ", "VM ")) or comm in ("java", "rl-callback"):
        return "the JVM's own threads"
    if comm == "swapper":
        return "idle"
    return "anything else"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, required=True)
    parser.add_argument("--between", nargs=2, type=float, required=True, metavar=("START", "END"))
    parser.add_argument("--cpu", nargs=2, required=True, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    seconds = args.between[1] - args.between[0]
    cpus = os.cpu_count()
    share, kernel = {}, {}
    for line in sys.stdin:
        fields = [f.strip() for f in line.split("|")]
        if len(fields) != 3 or not fields[0].endswith("%"):
            continue
        percent, comm, dso = float(fields[0].rstrip("%")), fields[1], fields[2]
        r = role(comm)
        share[r] = share.get(r, 0) + percent
        if dso == "[kernel.kallsyms]":
            kernel[r] = kernel.get(r, 0) + percent
    before, after = ([int(x) for x in open(f).read().split()[1:9]] for f in args.cpu)
    ticks = [b - a for a, b in zip(before, after)]
    names = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
    split = ", ".join(f"{n} {100 * t / sum(ticks):.1f}%" for n, t in zip(names, ticks) if t)
    print(f"  {args.decisions:,} decisions in {seconds:.2f} s: {args.decisions / seconds:,.0f}/s "
          f"on {cpus} CPUs ({split}; /proc/stat)")
    print(f"  {'where (perf record -a)':<32} {'of all CPUs':>11} {'in kernel':>10} {'us/decision':>12}")
    for r, p in sorted(share.items(), key=lambda item: -item[1]):
        us = p / 100 * cpus * seconds * 1e6 / args.decisions
        print(f"  {r:<32} {p:10.1f}% {kernel.get(r, 0):9.1f}% {us:12.2f}")


if __name__ == "__main__":
    main()
