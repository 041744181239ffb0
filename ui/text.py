"""Text for the dashboard's elements: text from a file or a user made inert for
Markdown (`plain`) or for plotly (`plot_text`), and interval ends rounded outwards
(`outward_end`, `outward_interval`), so a printed bound never claims more than the
exact one does.
"""

from __future__ import annotations

import html
import re

import numpy as np


_PLAIN_WORD = re.compile(r"[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)*")


def plain(text) -> str:
    """Text from a file, a file name or a user, for an element that renders Markdown:
    a code span, inside which Markdown, HTML, math and bare-URL autolinks are inert,
    so no link or image can form and the reader sees the text as typed.  The fence is
    longer than any run of backticks in the text (CommonMark)."""
    if isinstance(text, (int, float, np.integer, np.floating)) and not isinstance(text, bool):
        return str(text)  # a number cannot hold Markdown
    s = " ".join(str(text).splitlines())
    if not s:
        return ""
    if _PLAIN_WORD.fullmatch(s):
        return s  # letters and digits joined by inner - or _: nothing Markdown reads
    runs = [len(r) for r in re.findall(r"`+", s)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if s[0] in "` " or s[-1] in "` " else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def plot_text(text) -> str:
    """Text from a file for a plotly title or label (plotly reads a little HTML,
    links included): HTML-escaped."""
    return html.escape(str(text))


def _rounded(x: float, decimals: int, side: str):
    """``x`` rounded down (``side`` "lower") or up ("upper") to ``decimals`` as a Decimal,
    from the shortest decimal naming the float (0.02, not 0.0200000000000000004), so no
    binary product rounds an end inwards; zero is never "-0"."""
    from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

    v = Decimal(repr(float(x))).quantize(
        Decimal(1).scaleb(-decimals), rounding=ROUND_FLOOR if side == "lower" else ROUND_CEILING)
    return v.copy_abs() if v.is_zero() else v


def _decimals(x: float, side: str, marks) -> int:
    """4, or as many more (up to 8) as keep ``x`` rounded outwards (`_rounded`) on its
    side of every mark."""
    from decimal import Decimal

    exact = Decimal(repr(float(x)))
    points = [Decimal(repr(float(m))) for m in marks]
    for d in range(4, 9):
        v = _rounded(x, d, side)
        if all(not (exact > m >= v) if side == "lower" else not (exact < m <= v)
               for m in points):
            return d
    return 8


def outward_end(x: float, side: str, marks=(), sign: str = "") -> str:
    """One interval end as text, rounded outwards: a "Delta <= 0.02992" beside epsilon
    0.03, not "0.0300"."""
    d = _decimals(x, side, marks)
    return f"{_rounded(x, d, side):{sign}.{d}f}"


def outward_interval(lo: float, hi: float, sign: str = "+", marks=(0.0,)) -> str:
    """An interval rounded outwards, both ends to the decimals the harder one needs (a
    finer rounding of an end keeps it on its side): an upper end of 0.029998 beside a
    "safe" at epsilon 0.03 read +0.0300 rounded to nearest, as if it touched epsilon."""
    d = max(_decimals(lo, "lower", marks), _decimals(hi, "upper", marks))
    return f"[{_rounded(lo, d, 'lower'):{sign}.{d}f}, {_rounded(hi, d, 'upper'):{sign}.{d}f}]"
