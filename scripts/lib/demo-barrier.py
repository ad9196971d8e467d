"""Starts the demo workers behind one barrier and prints their JSON lines.

  demo-barrier.py COPIES ARGS... < commands

Each line of stdin is a command (shell words) that starts one worker; COPIES
processes of each are started with ARGS. Every worker opens its store and
limiter, prints "ready" and waits (examples/README.md has the protocol);
once all are ready, one start signal (a line on each one's stdin, sent in a
loop of a few microseconds) releases them together, so that no worker is
still starting while the others are already spending the limit. Prints
{"start_signal_us": T} (wall-clock microseconds), then every worker's lines.
"""
import json
import shlex
import subprocess
import sys
import time

copies = int(sys.argv[1])
args = sys.argv[2:]
commands = [shlex.split(line) for line in sys.stdin if line.strip()]
workers = [
    subprocess.Popen(command + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for command in commands
    for _ in range(copies)
]


def stop_all(why):
    print(f"demo: {why}; stopping the workers", file=sys.stderr)
    for worker in workers:
        worker.kill()
        worker.wait()
    sys.exit(1)


for worker in workers:
    line = worker.stdout.readline()
    if line.strip() != "ready":
        stop_all(f"{shlex.join(worker.args)} did not get ready (said {line.strip()!r})")

start_signal_us = time.time_ns() // 1000
for worker in workers:
    worker.stdin.write("start\n")
    worker.stdin.close()

print(json.dumps({"start_signal_us": start_signal_us}))
failed = False
for worker in workers:
    sys.stdout.write(worker.stdout.read())
    if worker.wait() != 0:
        print(f"demo: {shlex.join(worker.args)} exited {worker.returncode}", file=sys.stderr)
        failed = True
sys.exit(1 if failed else 0)
