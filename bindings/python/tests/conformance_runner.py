"""The conformance runner of the Python binding (format: conformance/README.md
at the repository root). It drives each case through the public API
(rl.open, Store.limiter, acquire/peek/refund/reset or their async twins,
Store.clock_*), so what it checks is what users get. YAML is read with
PyYAML's BaseLoader: every scalar stays the text it was written as.

    python tests/conformance_runner.py [--url URL] [--use-async] [FILE.yaml ...]
prints one line per case and ends with "N passed, N failed".
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
from pathlib import Path
from typing import Any, Iterator, Optional

import yaml

import rl

ROOT = Path(__file__).resolve().parents[3]
SCHEMA_DIR = ROOT / "conformance" / "schema"
# The case format (conformance/schema/schema.yaml): every case is checked
# against it before it runs.
SCHEMA = yaml.load((SCHEMA_DIR / "schema.yaml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
SCALARS, RECORDS = SCHEMA["scalars"], SCHEMA["records"]


class BadCase(Exception):
    """A mistake in a case file, as opposed to a failure of rl."""


def check(value: Any, type_: str, where: str) -> Any:
    """value checked against the schema's type_, with its defaults filled in."""
    if type_ in SCALARS:
        if not isinstance(value, str) or not re.fullmatch(SCALARS[type_], value):
            raise BadCase(f"{where}: {value!r} is not {'an' if type_ == 'int64' else 'a'} {type_}")
        return value
    record = RECORDS[type_]
    if not isinstance(value, dict):
        raise BadCase(f"{where} must be a map")
    fields = record.get("fields", {})
    for field, item in value.items():
        spec = fields.get(field) or ({"type": record["any_field"]} if "any_field" in record else None)
        if spec is None:
            raise BadCase(f"{where}: unknown field {field!r}")
        at = f"{where}.{field}"
        if spec.get("list") == "true":
            if not isinstance(item, list):
                raise BadCase(f"{at} must be a list")
            value[field] = [check(x, spec["type"], f"{at}[{i}]") for i, x in enumerate(item, 1)]
        else:
            value[field] = check(item, spec["type"], at)
        if "with" in spec and spec["with"] not in value:
            raise BadCase(f"{at} without {spec['with']}")
    for field, spec in fields.items():
        if spec.get("required") == "true" and field not in value:
            raise BadCase(f"{where}: no {field}")
    for rule, fits in (("exactly_one_of", lambda n: n == 1), ("at_most_one_of", lambda n: n <= 1)):
        if rule in record and not fits(sum(f in value for f in record[rule])):
            raise BadCase(f"{where}: {rule.replace('_', ' ')} {', '.join(record[rule])}")
    verbs = [f for f in value if fields.get(f, {}).get("verb") == "true"]
    if any(s.get("verb") == "true" for s in fields.values()):
        if len(verbs) != 1:
            raise BadCase(f"{where}: needs exactly one verb")
        checks = [f for f in value if fields[f].get("of_decision") == "true"]
        if checks and fields[verbs[0]].get("decides") != "true":
            raise BadCase(f"{where}: {verbs[0]} returns no decision for {checks[0]}")
    for field, spec in fields.items():
        if "default" in spec:
            value.setdefault(field, spec["default"])
    return value


def verb_of(step: dict) -> str:
    return next(f for f in step if RECORDS["step"]["fields"][f].get("verb") == "true")


def to_int(text: str, what: str) -> int:
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise BadCase(f"{what}: {text!r} is not an int64")
    return value


def typed(text: str, type_: str, what: str) -> Any:
    """A checked scalar as the Python value its type names."""
    if type_ == "int64":
        return to_int(text, what)
    if type_ == "number":
        return float(text)
    return text == "true" if type_ == "bool" else text


def fields_of(d: rl.Decision) -> dict:
    return {
        "allowed": d.allowed,
        "limit": d.limit,
        "remaining": d.remaining,
        "retry_after_us": -1 if d.retry_after < 0 else d.retry_after_us,
        "reset_after_us": d.reset_after_us,
        "limit_index": d.limit_index,
        "suppression_factor": d.suppression_factor,
    }


def compare_decision(expect: dict, decision: rl.Decision, where: str) -> str:
    got = fields_of(decision)
    diffs = []
    for field, text in expect.items():
        want = typed(text, RECORDS["decision"]["fields"][field]["type"], f"{where}.{field}")
        if want != got[field]:
            diffs.append(f"{field}: expected {want}, got {got[field]}")
    return "" if not diffs else f"{', '.join(diffs)} in {got}"


def compare_status(node: dict, failure: Optional[BaseException]) -> str:
    """'' when the outcome (failure or None) is what node's error asks."""
    if failure is not None and not isinstance(failure, rl.RateLimitError):
        raise failure  # a TypeError or a crash of the runner: not a case result
    error, contains = node.get("error"), node.get("message_contains")
    if error is None:
        return "" if failure is None else f"expected success, got {failure}"
    if failure is None:
        return f"expected {error}, got RL_OK"
    if failure.status != error:
        return f"expected {error}, got {failure}"
    if contains is not None and contains not in failure.message:
        return f"message {failure.message!r} does not contain {contains!r}"
    return ""


def key_of(request: dict, where: str) -> str | bytes:
    if "key_hex" in request:
        return bytes.fromhex(request["key_hex"])
    if "key_len" in request:
        length = to_int(request["key_len"], f"{where}.key_len")
        if not 0 <= length <= 2**20:
            raise BadCase(f"{where}.key_len: out of range")
        return "x" * length
    return request.get("key", "")


# The store's lease counters (Store.stats().leases) by the format's names.
STATS_FIELDS = {
    "leases_taken": "taken",
    "lease_units_leased": "units_leased",
    "lease_units_unused": "units_unused",
    "lease_units_returned": "units_returned",
    "lease_decisions": "decisions",
}


def compare_stats(store: rl.Store, want: dict, where: str) -> str:
    """'' when the counters listed in want match the store's."""
    leases = store.stats().leases
    diffs = []
    for field, text in want.items():
        expected, got = to_int(text, f"{where}.{field}"), getattr(leases, STATS_FIELDS[field])
        if expected != got:
            diffs.append(f"{field}: expected {expected}, got {got}")
    return f"{where}: {', '.join(diffs)}" if diffs else ""


class Runner:
    def __init__(self, use_async: bool) -> None:
        self.use_async = use_async

    async def call(self, store: rl.Store, limiter: rl.Limiter, verb: str, args: Any, where: str):
        """(decision or None, failure or None)"""
        try:
            if verb == "advance":
                store.clock_advance(to_int(args, where))
                return None, None
            key = key_of(args, where)
            if verb == "reset":
                if self.use_async:
                    await limiter.areset(key)
                else:
                    limiter.reset(key)
                return None, None
            cost = to_int(args["cost"], f"{where}.cost")
            method = getattr(limiter, ("a" if self.use_async else "") + verb)
            result = method(key, cost)
            return (await result if self.use_async else result), None
        except rl.RateLimitError as failure:
            return None, failure

    async def steps(self, store: rl.Store, limiters: list, steps: list) -> str:
        """limiters: one per process of the case, each its own (its own leases)."""
        for number, step in enumerate(steps, 1):
            verb = verb_of(step)
            where = f"step {number} ({verb})"
            process = to_int(step["process"], f"{where}.process")
            if not 0 <= process < len(limiters):
                raise BadCase(f"{where}.process: {process} is not below processes ({len(limiters)})")
            if verb == "stats":
                diff = compare_stats(store, step["stats"], where)
                if diff:
                    return diff
                continue
            limiter = limiters[process]
            repeat = to_int(step["repeat"], f"{where}.repeat")
            if repeat < 1:
                raise BadCase(f"{where}.repeat must be at least 1")
            allowed = 0  # over the repeats, for allowed_count
            for i in range(1, repeat + 1):
                at = where if repeat == 1 else f"{where} #{i} of {repeat}"
                decision, failure = await self.call(store, limiter, verb, step[verb], at)
                diff = compare_status(step, failure)
                if diff:
                    return f"{at}: {diff}"
                if failure is not None:
                    continue
                allowed += 1 if decision is not None and decision.allowed else 0
                checks = []
                if "each" in step:
                    checks.append(("each", step["each"]))
                if i == repeat and "expect" in step:
                    checks.append(("expect", step["expect"]))
                for name, expect in checks:
                    diff = compare_decision(expect, decision, f"{at}.{name}")
                    if diff:
                        return f"{at}: {diff}"
            if "allowed_count" in step:
                want = to_int(step["allowed_count"], f"{where}.allowed_count")
                if allowed != want:
                    return f"{where}: allowed_count = {allowed}, want {want}"
        return ""

    async def case(self, case: Any, url: str) -> str:
        """'' when the case passed on a fresh store at url, else what differed."""
        check(case, "case", "case")
        try:
            store = rl.open(url, inline=not self.use_async)
        except rl.RateLimitError as failure:
            return f"store {url}: {failure}"
        with store:
            store.clock_set(to_int(case["clock"], "clock"))
            setup_fails = "error" in case
            processes = to_int(case["processes"], "processes")
            if not 1 <= processes <= 64:
                raise BadCase(f"processes: {processes} is not 1 to 64")
            limiters, failure = [], None
            try:
                limiters = [store.limiter(**case["limiter"]) for _ in range(processes)]
            except rl.RateLimitError as e:
                failure = e
            diff = compare_status(case, failure)
            if diff:
                return f"limiter: {diff}"
            return "" if setup_fails else await self.steps(store, limiters, case["steps"])


def case_url(base: str, n: int) -> str:
    """The n-th case's URL: clock=manual, and on Redis a key prefix unique to
    the run and the case."""
    url = f"{base}{'&' if '?' in base else '?'}clock=manual"
    if base.startswith("redis"):
        url += f"&prefix=ctpy{os.getpid()}x{id(base) & 0xFFFF}n{n}"
    return url


def default_files() -> list[Path]:
    return sorted((ROOT / "conformance").glob("*.yaml"))


def load_cases(path: Path) -> Iterator[tuple[str, Any, str]]:
    """(name, case, problem) of each case of a file; problem is '' when it can run."""
    try:
        doc = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    except (OSError, yaml.YAMLError) as e:
        yield "(file)", None, f"cannot read: {e}"
        return
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
        yield "(file)", None, "no 'cases:' list"
        return
    seen = set()
    for case in doc["cases"]:
        name = (
            case.get("name") if isinstance(case, dict) and isinstance(case.get("name"), str) else "(unnamed)"
        )
        yield name, case, "bad case: the name is used twice in this file" if name in seen else ""
        seen.add(name)


def run_loaded(case: Any, problem: str, url: str, use_async: bool) -> str:
    if problem:
        return problem
    try:
        return asyncio.run(Runner(use_async).case(case, url))
    except BadCase as e:
        return f"bad case: {e}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="memory://")
    parser.add_argument("--use-async", action="store_true", help="the async twins (aacquire, ...)")
    parser.add_argument("files", nargs="*", type=Path)
    args = parser.parse_args(argv)
    passed = failed = 0
    n = 0
    for path in args.files or default_files():
        for name, case, problem in load_cases(path):
            n += 1
            diff = run_loaded(case, problem, case_url(args.url, n), args.use_async)
            if diff:
                failed += 1
                print(f"FAIL {path.name}: {name}: {diff}")
            else:
                passed += 1
                print(f"ok   {path.name}: {name}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
