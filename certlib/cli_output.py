"""What the command lines print (SPEC section 10): a readable table, or with ``--json``
one JSON object on stdout.  Shared by `certlib.cli` and `certlib.audit.cli`, which
import it and never each other's output code."""

from __future__ import annotations

import json
import sys

__all__ = ["emit", "interval", "percent", "write_json"]


def write_json(payload: dict) -> None:
    """One JSON object on stdout (values JSON does not know, such as Fractions, as text)."""
    json.dump(payload, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


def emit(args, payload: dict, table: str) -> None:
    """Print the JSON object (``--json``) or the readable table."""
    if getattr(args, "json", False):
        write_json(payload)
    else:
        sys.stdout.write(table.rstrip("\n") + "\n")


def percent(x: float) -> str:
    """A fraction as a table percentage: ``0.2734 -> '27.3%'``."""
    return f"{100 * x:.1f}%"


def interval(iv) -> str:
    """A confidence interval as ``[lo, hi]`` with six significant digits."""
    return f"[{iv[0]:.6g}, {iv[1]:.6g}]"
