"""Line charts drawn as SVG on the server, for pages that must show their first chart at
once: a Plotly chart waits for plotly.js (several MB) to load in the browser, seconds on
a slow laptop or a classroom machine, while an SVG is drawn with the page's text.

No Streamlit here: the caller shows the text with ``st.image(svg)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

FONT = "font-family='sans-serif'"


def _decades(lo: float, hi: float) -> list[int]:
    """Powers of ten covering [lo, hi]: the log axis's only ticks (100, 1,000, ...)."""
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if a == b:
        b += 1
    return [10 ** k for k in range(a, b + 1)]


def _legend_rows(series: Sequence[tuple[str, Sequence[float], Sequence[float], str]],
                 left: float, width: int, font_px: int) -> list[list[str]]:
    """The legend's names by row (about 0.6 em per character)."""
    rows: list[list[str]] = [[]]
    lx = left
    for name, _, _, _ in series:
        item = 34 + 0.6 * font_px * len(name)
        if lx > left and lx + item > width:
            rows.append([])
            lx = left
        rows[-1].append(name)
        lx += item + 1.5 * font_px
    return rows


def log_x_lines(series: Sequence[tuple[str, Sequence[float], Sequence[float], str]], *,
                hlines: Sequence[tuple[float, str, str]] = (), x_title: str = "",
                y_title: str = "", y_range: tuple[float, float] = (0.0, 1.05),
                y_ticks: Sequence[float] = (0, 0.25, 0.5, 0.75, 1),
                width: int = 520, height: int = 360, font_px: int = 16) -> str:
    """An SVG line chart (lines and markers) with a log x axis ticked at powers of ten.

    ``series`` holds (name, xs, ys, colour); ``hlines`` dotted horizontal lines as
    (y, label, colour), labelled at the right.  The legend is a row under the axis.
    Text is ``font_px`` pixels at the chart's own width; the SVG scales with its box.
    """
    xs_all = [float(x) for _, xs, _, _ in series for x in xs]
    # a tenth of a decade beyond the data on each side; the ticks are the powers of ten
    # inside, or the data's own sizes when fewer than two powers fall inside
    lx0, lx1 = math.log10(min(xs_all)) - 0.15, math.log10(max(xs_all)) + 0.15
    ticks = [t for t in _decades(min(xs_all), max(xs_all)) if lx0 <= math.log10(t) <= lx1]
    if len(ticks) < 2:
        ticks = sorted({int(x) if float(x).is_integer() else x for x in xs_all})
    left, right, top = 4.2 * font_px, 5.5 * font_px, font_px
    # tick labels, the axis title and the legend's rows
    bottom = (3.6 + 1.3 * len(_legend_rows(series, left, width, font_px))) * font_px
    pw, ph = width - left - right, height - top - bottom
    y0, y1 = y_range

    def X(x: float) -> float:
        return left + (math.log10(x) - lx0) / (lx1 - lx0) * pw

    def Y(y: float) -> float:
        return top + (1 - (y - y0) / (y1 - y0)) * ph

    f = f"{FONT} font-size='{font_px}'"
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {height}' "
           f"width='{width}' height='{height}' role='img'>",
           f"<rect x='{left}' y='{top}' width='{pw}' height='{ph}' fill='white' "
           "stroke='#888'/>"]
    for t in y_ticks:
        y = Y(t)
        out.append(f"<line x1='{left}' x2='{left + pw}' y1='{y:.1f}' y2='{y:.1f}' "
                   "stroke='#e6e6e6'/>")
        out.append(f"<text x='{left - 6}' y='{y + font_px * 0.35:.1f}' text-anchor='end' "
                   f"{f}>{t:g}</text>")
    for t in ticks:
        x = X(t)
        out.append(f"<line x1='{x:.1f}' x2='{x:.1f}' y1='{top}' y2='{top + ph}' "
                   "stroke='#e6e6e6'/>")
        out.append(f"<text x='{x:.1f}' y='{top + ph + 1.3 * font_px:.1f}' "
                   f"text-anchor='middle' {f}>{t:,}</text>")  # 1,000 not 1e3
    out.append(f"<text x='{left + pw / 2:.1f}' y='{top + ph + 2.8 * font_px:.1f}' "
               f"text-anchor='middle' {f}>{escape(x_title)}</text>")
    out.append(f"<text transform='translate({font_px * 1.1:.1f},{top + ph / 2:.1f}) "
               f"rotate(-90)' text-anchor='middle' {f}>{escape(y_title)}</text>")
    for y, label, colour in hlines:
        yy = Y(y)
        out.append(f"<line x1='{left}' x2='{left + pw}' y1='{yy:.1f}' y2='{yy:.1f}' "
                   f"stroke='{colour}' stroke-width='2' stroke-dasharray='3 5'/>")
        out.append(f"<text x='{left + pw + 6}' y='{yy + font_px * 0.35:.1f}' "
                   f"fill='{colour}' {f}>{escape(label)}</text>")
    for _name, xs, ys, colour in series:
        pts = " ".join(f"{X(float(x)):.1f},{Y(float(y)):.1f}" for x, y in zip(xs, ys))
        out.append(f"<polyline points='{pts}' fill='none' stroke='{colour}' "
                   "stroke-width='3'/>")
        out += [f"<circle cx='{X(float(x)):.1f}' cy='{Y(float(y)):.1f}' r='5' "
                f"fill='{colour}'/>" for x, y in zip(xs, ys)]
    # the legend: rows under the axis, a new row when a name would pass the right edge
    lx, ly = left, height - (len(_legend_rows(series, left, width, font_px)) - 0.1) * \
        1.3 * font_px
    for name, _, _, colour in series:
        item = 34 + 0.6 * font_px * len(name)
        if lx > left and lx + item > width:
            lx, ly = left, ly + 1.3 * font_px
        out.append(f"<line x1='{lx}' x2='{lx + 28}' y1='{ly - font_px * 0.35:.1f}' "
                   f"y2='{ly - font_px * 0.35:.1f}' stroke='{colour}' stroke-width='3'/>")
        out.append(f"<text x='{lx + 34}' y='{ly:.1f}' {f}>{escape(name)}</text>")
        lx += item + 1.5 * font_px
    out.append("</svg>")
    return "\n".join(out)


def unit_square(points: Sequence[tuple[Sequence[float], Sequence[float], str, str]], *,
                regions: Sequence[tuple[Sequence[tuple[float, float]], str, str]] = (),
                x_title: str = "", y_title: str = "", size: int = 460,
                font_px: int = 16) -> str:
    """An SVG scatter on the unit square, ticked at 0, 1/2 and 1.

    ``points`` holds (us, vs, name, colour) groups of small dots; ``regions`` filled
    polygons as (vertices, name, fill colour), drawn under the dots.  Every group with a
    name gets a legend entry under the axes ("" for none).
    """
    names = [(name, colour) for _, name, colour in regions if name] + \
            [(name, colour) for _, _, name, colour in points if name]
    left, top = 4 * font_px, font_px
    side = size - left - font_px
    legend_h = 1.4 * font_px * len(names)
    height = top + side + 3.2 * font_px + legend_h

    def X(u: float) -> float:
        return left + u * side

    def Y(v: float) -> float:
        return top + (1 - v) * side

    f = f"{FONT} font-size='{font_px}'"
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {size} {height:.0f}' "
           f"width='{size}' height='{height:.0f}' role='img'>",
           f"<rect x='{left}' y='{top}' width='{side}' height='{side}' fill='white' "
           "stroke='#888'/>"]
    for vertices, _, fill in regions:
        pts = " ".join(f"{X(u):.1f},{Y(v):.1f}" for u, v in vertices)
        out.append(f"<polygon points='{pts}' fill='{fill}' stroke='none'/>")
    for us, vs, _, colour in points:
        out += [f"<circle cx='{X(float(u)):.1f}' cy='{Y(float(v)):.1f}' r='2.2' "
                f"fill='{colour}'/>" for u, v in zip(us, vs)]
    for t, label in ((0.0, "0"), (0.5, "0.5"), (1.0, "1")):
        out.append(f"<text x='{X(t):.1f}' y='{top + side + 1.3 * font_px:.1f}' "
                   f"text-anchor='middle' {f}>{label}</text>")
        out.append(f"<text x='{left - 6}' y='{Y(t) + font_px * 0.35:.1f}' text-anchor='end' "
                   f"{f}>{label}</text>")
    out.append(f"<text x='{left + side / 2:.1f}' y='{top + side + 2.7 * font_px:.1f}' "
               f"text-anchor='middle' {f}>{escape(x_title)}</text>")
    out.append(f"<text transform='translate({font_px * 1.1:.1f},{top + side / 2:.1f}) "
               f"rotate(-90)' text-anchor='middle' {f}>{escape(y_title)}</text>")
    ly = top + side + 3.2 * font_px + font_px
    for name, colour in names:
        out.append(f"<rect x='{left}' y='{ly - font_px * 0.8:.1f}' width='{font_px}' "
                   f"height='{font_px}' fill='{colour}'/>")
        out.append(f"<text x='{left + 1.6 * font_px:.1f}' y='{ly:.1f}' {f}>"
                   f"{escape(name)}</text>")
        ly += 1.4 * font_px
    out.append("</svg>")
    return "\n".join(out)
