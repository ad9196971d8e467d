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
CASE_FIELDS = {"name", "limiter", "clock", "error", "message_contains", "steps"}
VERBS = {"acquire", "peek", "refund", "reset", "advance"}
STEP_MODIFIERS = {"repeat", "each", "expect", "error", "message_contains", "allowed_count"}
REQUEST_FIELDS = {"key", "key_hex", "key_len", "cost"}
DECISION_FIELDS = {
    "allowed",
    "limit",
    "remaining",
    "retry_after_us",
    "reset_after_us",
    "limit_index",
    "suppression_factor",
}


class BadCase(Exception):
    """A mistake in a case file, as opposed to a failure of rl."""


def check_fields(node: Any, known: set, where: str) -> None:
    if not isinstance(node, dict):
        raise BadCase(f"{where} must be a map")
    for field in node:
        if field not in known:
            raise BadCase(f"{where}: unknown field {field!r}")


def to_int(text: Any, what: str) -> int:
    if not isinstance(text, str) or not re.fullmatch(r"-?\d+", text):
        raise BadCase(f"{what}: {text!r} is not an int64")
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise BadCase(f"{what}: {text!r} is not an int64")
    return value


def to_float(text: Any, what: str) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        raise BadCase(f"{what}: {text!r} is not a number") from None


def to_bool(text: Any, what: str) -> bool:
    if text in ("true", "false"):
        return text == "true"
    raise BadCase(f"{what}: {text!r} is not true or false")


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


def compare_decision(expect: Any, decision: rl.Decision, where: str) -> str:
    check_fields(expect, DECISION_FIELDS, where)
    got = fields_of(decision)
    diffs = []
    for field, text in expect.items():
        if field == "allowed":
            want: Any = to_bool(text, f"{where}.allowed")
        elif field == "suppression_factor":
            want = to_float(text, f"{where}.{field}")
        else:
            want = to_int(text, f"{where}.{field}")
        if want != got[field]:
            diffs.append(f"{field}: expected {want}, got {got[field]}")
    return "" if not diffs else f"{', '.join(diffs)} in {got}"


def compare_status(node: dict, failure: Optional[BaseException]) -> str:
    """'' when the outcome (failure or None) is what node's error asks."""
    if failure is not None and not isinstance(failure, rl.RateLimitError):
        raise failure  # a TypeError or a crash of the runner: not a case result
    error, contains = node.get("error"), node.get("message_contains")
    if error is None:
        if contains is not None:
            raise BadCase("message_contains without error")
        return "" if failure is None else f"expected success, got {failure}"
    if failure is None:
        return f"expected {error}, got RL_OK"
    if failure.status != error:
        return f"expected {error}, got {failure}"
    if contains is not None and contains not in failure.message:
        return f"message {failure.message!r} does not contain {contains!r}"
    return ""


def key_of(request: dict, where: str) -> str | bytes:
    given = [f for f in ("key", "key_hex", "key_len") if f in request]
    if len(given) > 1:
        raise BadCase(f"{where}: give only one of key, key_hex, key_len")
    if "key" in request:
        return request["key"]
    if "key_hex" in request:
        try:
            return bytes.fromhex(request["key_hex"])
        except ValueError as e:
            raise BadCase(f"{where}.key_hex: {request['key_hex']!r} is not hex") from e
    if "key_len" in request:
        length = to_int(request["key_len"], f"{where}.key_len")
        if not 0 <= length <= 2**20:
            raise BadCase(f"{where}.key_len: out of range")
        return "x" * length
    return ""


class Runner:
    def __init__(self, use_async: bool) -> None:
        self.use_async = use_async

    async def call(self, store: rl.Store, limiter: rl.Limiter, verb: str, args: Any, where: str):
        """(decision or None, failure or None)"""
        try:
            if verb == "advance":
                store.clock_advance(to_int(args, where))
                return None, None
            request = args if args is not None else {}
            check_fields(request, REQUEST_FIELDS, where)
            key = key_of(request, where)
            if verb == "reset":
                if "cost" in request:
                    raise BadCase(f"{where}: reset takes no cost")
                if self.use_async:
                    await limiter.areset(key)
                else:
                    limiter.reset(key)
                return None, None
            cost = 1 if "cost" not in request else to_int(request["cost"], f"{where}.cost")
            method = getattr(limiter, ("a" if self.use_async else "") + verb)
            result = method(key, cost)
            return (await result if self.use_async else result), None
        except rl.RateLimitError as failure:
            return None, failure

    async def steps(self, store: rl.Store, limiter: rl.Limiter, steps: Any) -> str:
        if not isinstance(steps, list):
            raise BadCase("steps must be a list")
        for number, step in enumerate(steps, 1):
            if not isinstance(step, dict):
                raise BadCase(f"step {number} must be a map")
            unknown = [f for f in step if f not in VERBS and f not in STEP_MODIFIERS]
            if unknown:
                raise BadCase(f"step {number}: unknown field {unknown[0]!r}")
            verbs = [f for f in step if f in VERBS]
            if len(verbs) != 1:
                raise BadCase(f"step {number}: needs exactly one verb")
            verb = verbs[0]
            where = f"step {number} ({verb})"
            repeat = to_int(step.get("repeat", "1"), f"{where}.repeat")
            if repeat < 1:
                raise BadCase(f"{where}.repeat must be at least 1")
            if verb not in ("acquire", "peek", "refund") and ("expect" in step or "each" in step):
                raise BadCase(f"{where}: {verb} returns no decision to expect")
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
        check_fields(case, CASE_FIELDS, "case")
        try:
            store = rl.open(url, inline=not self.use_async)
        except rl.RateLimitError as failure:
            return f"store {url}: {failure}"
        with store:
            store.clock_set(to_int(case.get("clock", "0"), "clock"))
            setup_fails = "error" in case
            if setup_fails and "steps" in case:
                raise BadCase("a case with error has no steps")
            if not setup_fails and "steps" not in case:
                raise BadCase("a case needs steps or an error")
            if not isinstance(case.get("limiter"), dict):
                raise BadCase("limiter must be a map")
            limiter, failure = None, None
            try:
                limiter = store.limiter(**case["limiter"])
            except rl.RateLimitError as e:
                failure = e
            diff = compare_status(case, failure)
            if diff:
                return f"limiter: {diff}"
            return "" if setup_fails else await self.steps(store, limiter, case["steps"])


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
