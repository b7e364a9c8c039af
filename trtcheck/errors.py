"""Typed errors and the documented process exit codes.

Library code raises these; the CLI has exactly one boundary
(:func:`trtcheck.cli.main`) that prints one line ``error: <message>; hint: <hint>`` on
stderr and exits with :attr:`TrtcheckError.exit_code`.

Exit codes (documented in ``trtcheck --help`` and the README):

====  ============================================================================
0     success
1     a gate or check failed (:class:`GateFailed`)
2     bad usage or bad input (:class:`InputError`, :class:`UsageError`)
3     environment: TensorRT missing, no GPU, engine incompatible with this
      runtime/GPU (:class:`EnvironmentProblem`)
4     internal error: a bug in trtcheck (anything not derived from TrtcheckError)
====  ============================================================================
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_ENVIRONMENT = 3
EXIT_INTERNAL = 4

EXIT_CODES_HELP = (
    "\b\nExit codes:\n"
    "  0  ok\n"
    "  1  gate or check failed\n"
    "  2  bad usage or bad input\n"
    "  3  environment: TensorRT missing, no GPU, engine incompatible with this runtime/GPU\n"
    "  4  internal error (please report it)"
)


class TrtcheckError(Exception):
    """Base class of every error trtcheck raises on purpose.

    Args:
        message: one line saying what is wrong (no trailing period needed).
        hint: one line saying what to do about it, or ``None``.
    """

    exit_code: int = EXIT_INTERNAL

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.message


class InputError(TrtcheckError):
    """The user gave a file, value or option trtcheck cannot use (exit code 2)."""

    exit_code = EXIT_BAD_INPUT


class UsageError(InputError):
    """Options that contradict each other or are missing (exit code 2)."""


class EnvironmentProblem(TrtcheckError):
    """Something missing or incompatible on this machine (exit code 3).

    Examples: TensorRT not importable, no CUDA GPU visible, a plan built by another
    TensorRT version or for another GPU.
    """

    exit_code = EXIT_ENVIRONMENT


class GateFailed(TrtcheckError):
    """A gate or check did not pass (exit code 1)."""

    exit_code = EXIT_CHECK_FAILED


class SchemaError(InputError):
    """A results file that does not match the results model (exit code 2)."""
