"""The shared table of decisions and the header fields every binding's
middleware sends (conformance/http/headers.yaml), through the native call
rl.http renders with: Python sends the bytes Node, Go and Java send."""

from pathlib import Path
from typing import Any

import pytest
import yaml

import rl
from rl import native

TABLE = Path(__file__).resolve().parents[3] / "conformance" / "http" / "headers.yaml"
CASES = yaml.safe_load(TABLE.read_text())["cases"]


def source_index(name: str) -> int:
    i = 0
    while (n := native.rl_source_name(i)) is not None:
        if n == name:
            return i
        i += 1
    return i  # a source librl does not have: librl refuses it


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_shared_table(case: dict[str, Any]) -> None:
    limiter, d = case["limiter"], case["decision"]
    limits = [(l["limit"], l["window_us"], l.get("burst", l["limit"])) for l in limiter.get("limits", [])]

    def render() -> dict[str, str]:
        values = native.headers_render(
            limiter["name"], limits, 1 if d["allowed"] else 0, d["remaining"], d["retry_after_us"],
            d["reset_after_us"], d["limit_index"],
            source_index(d["source"]) if isinstance(d["source"], str) else d["source"])
        return {native.rl_header_name(i): v for i, v in enumerate(values) if v is not None}

    if "error" in case:
        with pytest.raises(rl.InvalidArgumentError, match=case["error"].replace("(", r"\(").replace(")", r"\)")):
            render()
    else:
        assert render() == (case["headers"] or {})
