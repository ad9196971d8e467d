"""Checks for the text that reaches librl as C strings."""

from __future__ import annotations

from typing import Any

from . import native

_MAX_QUOTED = 40


def quote(value: str) -> str:
    """value in bounded, escaped form for a message."""
    text = value if len(value) <= _MAX_QUOTED else value[:_MAX_QUOTED] + "..."
    return repr(text)


def c_text(what: str, value: Any) -> str:
    """value as text for librl: str only, without NUL bytes (C would cut it)."""
    if not isinstance(value, str):
        raise TypeError(f"{what}: must be str, not {type(value).__name__}")
    native.rl_text_check(value, what)  # librl's rule: no NUL byte (C would cut the text)
    return value


def setting_text(name: str, value: Any) -> str:
    """A setting's value as librl's text: str as is, int as digits, float
    as repr, a sequence of them joined with commas (``limit=["10/s", "1000/h"]``)."""
    if isinstance(value, bool):
        raise TypeError(f"{name}: must be str or int, not bool")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)  # librl judges it ("0.25" for local_share; nan, inf refused)
    if isinstance(value, str):
        return c_text(name, value)
    if isinstance(value, (list, tuple)):
        return ", ".join(setting_text(name, v) for v in value)
    raise TypeError(f"{name}: must be str, int, float or a list of them, not {type(value).__name__}")

