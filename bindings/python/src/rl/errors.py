"""Typed exceptions: one class per rl status, named by librl's rl_status_name.

Every failure librl reports raises a subclass of :class:`RateLimitError`;
``err.status`` is the C status name (``"RL_E_INVALID_ARG"``) and ``err.code``
its number. The classes also derive from the closest built-in exception, so
``except ValueError`` or ``except TimeoutError`` catch them too.
"""

from __future__ import annotations

from typing import Dict, Type

from . import native


class RateLimitError(Exception):
    """A failure librl reported (never a denial: that is a Decision)."""

    status: str = "RL_E_INTERNAL"
    code: int = native.RL_E_INTERNAL

    def __init__(self, message: str, *, code: int | None = None, status: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __str__(self) -> str:
        return f"{self.status}: {self.message}"


class InvalidArgumentError(RateLimitError, ValueError):
    """RL_E_INVALID_ARG: an argument or setting was wrong; the message names it."""

    status, code = "RL_E_INVALID_ARG", native.RL_E_INVALID_ARG


class StoreTimeoutError(RateLimitError, TimeoutError):
    """RL_E_TIMEOUT: the store did not answer within the call's deadline."""

    status, code = "RL_E_TIMEOUT", native.RL_E_TIMEOUT


class BackendUnavailableError(RateLimitError, ConnectionError):
    """RL_E_BACKEND_UNAVAILABLE: Redis could not be reached."""

    status, code = "RL_E_BACKEND_UNAVAILABLE", native.RL_E_BACKEND_UNAVAILABLE


class BackendError(RateLimitError):
    """RL_E_BACKEND_ERROR: Redis answered with an error it should not have."""

    status, code = "RL_E_BACKEND_ERROR", native.RL_E_BACKEND_ERROR


class ShutdownError(RateLimitError):
    """RL_E_SHUTDOWN: the store was closed."""

    status, code = "RL_E_SHUTDOWN", native.RL_E_SHUTDOWN


class OutOfMemoryError(RateLimitError, MemoryError):
    """RL_E_NO_MEMORY: memory could not be allocated."""

    status, code = "RL_E_NO_MEMORY", native.RL_E_NO_MEMORY


class InternalError(RateLimitError):
    """RL_E_INTERNAL: a bug in rl; please report it with the message."""

    status, code = "RL_E_INTERNAL", native.RL_E_INTERNAL


class AuthError(RateLimitError, PermissionError):
    """RL_E_AUTH: Redis refused the credentials."""

    status, code = "RL_E_AUTH", native.RL_E_AUTH


class UnsupportedError(RateLimitError):
    """RL_E_UNSUPPORTED: a valid request this build or store does not support."""

    status, code = "RL_E_UNSUPPORTED", native.RL_E_UNSUPPORTED


_CLASSES = (
    InvalidArgumentError,
    StoreTimeoutError,
    BackendUnavailableError,
    BackendError,
    ShutdownError,
    OutOfMemoryError,
    InternalError,
    AuthError,
    UnsupportedError,
)


def _status_names() -> Dict[int, str]:
    names = {}
    for code in range(native.RL_STATUS_COUNT):
        name = native.rl_status_name(code)
        if name is not None:
            names[code] = name
    return names


#: Every status of the loaded librl, number to name (from rl_status_name).
STATUS_NAMES: Dict[int, str] = _status_names()
#: The exception class of every status name.
ERROR_CLASSES: Dict[str, Type[RateLimitError]] = {cls.status: cls for cls in _CLASSES}

# The class names above must be librl's own status names: fail at import, not later.
for _cls in _CLASSES:
    if STATUS_NAMES.get(_cls.code) != _cls.status:
        raise ImportError(
            f"rl: librl names status {_cls.code} {STATUS_NAMES.get(_cls.code)!r}, not {_cls.status!r}"
        )


def error_for(code: int, message: str) -> RateLimitError:
    """The exception for a librl status (a base RateLimitError for a status this
    package does not know yet)."""
    name = STATUS_NAMES.get(code)
    cls = ERROR_CLASSES.get(name) if name else None
    if cls is not None:
        return cls(message)
    return RateLimitError(message, code=code, status=name or f"RL_STATUS_{code}")


def invalid(message: str) -> InvalidArgumentError:
    """An RL_E_INVALID_ARG raised by the binding itself, before librl."""
    return InvalidArgumentError(message)


native.set_error_factory(error_for)
