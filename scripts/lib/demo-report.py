"""Reads the demo workers' JSON lines and prints who was admitted what."""
import json
import sys

limit = int(sys.argv[1])
rows = [json.loads(line) for line in sys.stdin if line.strip()]
print(f"\n{'worker':<14} {'pid':>7} {'admitted':>9} {'denied':>7}  retry hints of the denied")
for r in rows:
    hint = r["retry_after_ms"]
    hint_text = f"{hint[0] / 1000:.1f}s .. {hint[1] / 1000:.1f}s" if hint else "-"
    print(f"{r['worker']:<14} {r['pid']:>7} {r['admitted']:>9} {r['denied']:>7}  {hint_text}")
total = sum(r["admitted"] for r in rows)
print(f"\ntotal admitted: {total} of {sum(r['admitted'] + r['denied'] for r in rows)} attempts; limit {limit}")
if total == limit:
    print("the workers shared one limit exactly: total admitted == limit")
else:
    print(f"MISMATCH: total admitted {total} != limit {limit}")
    sys.exit(1)
