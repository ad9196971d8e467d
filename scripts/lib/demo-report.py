"""Reads the demo's lines (demo-barrier.py) and prints who was admitted what,
and when each worker made its first and last call, counted from the one
start signal that released them all."""
import json
import sys

limit = int(sys.argv[1])
rows = []
start_us = None
for line in sys.stdin:
    if line.strip():
        row = json.loads(line)
        if "start_signal_us" in row:
            start_us = row["start_signal_us"]
        else:
            rows.append(row)
if not rows or start_us is None:
    print("demo: no worker reported", file=sys.stderr)
    sys.exit(1)


def after_start(us):
    return f"+{(us - start_us) / 1000:.1f} ms"


print(f"\n{'worker':<14} {'pid':>7} {'admitted':>9} {'denied':>7} {'first call':>11} {'last return':>12}"
      "  retry hints of the denied")
for r in rows:
    hint = r["retry_after_ms"]
    hint_text = f"{hint[0] / 1000:.1f}s .. {hint[1] / 1000:.1f}s" if hint else "-"
    print(f"{r['worker']:<14} {r['pid']:>7} {r['admitted']:>9} {r['denied']:>7}"
          f" {after_start(r['first_call_us']):>11} {after_start(r['last_return_us']):>12}  {hint_text}")

firsts = [r["first_call_us"] for r in rows]
lasts = [r["last_return_us"] for r in rows]
print("\ntimes are from the one start signal, sent once every worker process was ready")
print(f"first calls: all within {(max(firsts) - min(firsts)) / 1000:.1f} ms of each other", end="")
if max(firsts) < min(lasts):
    print(f"; all {len(rows)} were calling at once from {after_start(max(firsts))} to {after_start(min(lasts))}")
else:
    print("; a worker finished before the last one began")

total = sum(r["admitted"] for r in rows)
print(f"total admitted: {total} of {sum(r['admitted'] + r['denied'] for r in rows)} attempts; limit {limit}")
if total == limit:
    print("the workers shared one limit exactly: total admitted == limit")
else:
    print(f"MISMATCH: total admitted {total} != limit {limit}")
    sys.exit(1)
