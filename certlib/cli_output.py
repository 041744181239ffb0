"""What the command lines print (SPEC section 10): a readable table, or with ``--json``
one JSON object on stdout.  Shared by `certlib.cli` and `certlib.audit.cli`, which
import it and never each other's output code."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["emit", "interval", "percent", "write_json"]


def write_json(payload: Mapping[str, Any]) -> None:
    """Write one JSON object on stdout, indented, with a final newline.

    Parameters
    ----------
    payload : mapping of str to JSON-ready values
        The object; values JSON does not know, such as Fractions, are written as text.
    """
    json.dump(payload, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


def emit(args: object, payload: Mapping[str, Any], table: str) -> None:
    """Print the JSON object (``--json``) or the readable table.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line; its ``json`` attribute, when true, asks for JSON.
    payload : mapping of str to JSON-ready values
        What ``--json`` prints (`write_json`).
    table : str
        What is printed otherwise, with one final newline.
    """
    if getattr(args, "json", False):
        write_json(payload)
    else:
        sys.stdout.write(table.rstrip("\n") + "\n")


def percent(x: float) -> str:
    """A fraction as a percentage to one decimal; never 0.0% or 100.0% unless it is
    exactly 0 or 1 (a forecast of 1999 in 2000 draws is not certain).

    Parameters
    ----------
    x : float
        A fraction in [0, 1].

    Returns
    -------
    str
        E.g. ``"27.3%"``, ``"<0.1%"`` or ``">99.9%"``.

    Examples
    --------
    >>> percent(0.2734), percent(123 / 200), percent(1.0), percent(0.0)
    ('27.3%', '61.5%', '100.0%', '0.0%')
    >>> percent(1999 / 2000), percent(1 / 5000)
    ('>99.9%', '<0.1%')
    """
    x = float(x)
    if 0.0 < x < 0.0005:
        return "<0.1%"
    if 0.9995 <= x < 1.0:
        return ">99.9%"
    return f"{100 * x:.1f}%"


def interval(iv: Sequence[float]) -> str:
    """A confidence interval as ``[lo, hi]`` with six significant digits.

    Parameters
    ----------
    iv : sequence of two floats
        The lower and upper ends.

    Returns
    -------
    str
        The interval as text.

    Examples
    --------
    >>> interval((0.0123456789, 0.5))
    '[0.0123457, 0.5]'
    """
    return f"[{iv[0]:.6g}, {iv[1]:.6g}]"
