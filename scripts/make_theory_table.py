"""Write ``certlib/teaching/_theory_table.py``: the Theory explorer's default simulation.

    python scripts/make_theory_table.py          # rewrite the table
    python scripts/make_theory_table.py --check  # exit 1 when the shipped file differs

Every run comes from `certlib.teaching.theory.random_orders` with the page's default
settings (K = 2, q = 0.3, 5 pools per n, adaptive-pair-sum) for each pool size the page
offers, so the page can open without simulating; other settings are simulated live.
``tests/core/test_theory_table.py`` recomputes the table and compares it with the file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "certlib" / "teaching" / "_theory_table.py"
# every size the page's multiselect offers, so any choice among them opens at once
SIZES = (50, 100, 300, 1000, 3000, 10000, 30000)
SETTINGS = {"K": 2, "q": 0.3, "seeds": 5, "policy": "adaptive-pair-sum", "seed": 0,
            "work_limit": 200}


def render() -> str:
    """The module's text, computed by the library."""
    sys.path.insert(0, str(ROOT))
    from certlib.teaching.theory import random_orders

    lines = ['"""The Theory explorer\'s default simulation, written by',
             "``scripts/make_theory_table.py`` with `random_orders`: do not edit.",
             "",
             "RUNS[n] holds the (n, pool, prelabel, C lower, C upper, labels read) tuples of",
             "``random_orders(ns=(n,), **SETTINGS)``.", '"""', "",
             "SETTINGS = {" + ",\n            ".join(f"{k!r}: {v!r}"
                                                   for k, v in SETTINGS.items()) + "}",
             "", "RUNS = {"]
    for n in SIZES:
        r = random_orders(ns=(n,), **SETTINGS)  # type: ignore[arg-type]
        lines.append(f"    {n}: (")
        lines += [f"        {tuple(run)!r}," for run in r.runs]
        lines.append("    ),")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare, do not write")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        same = TARGET.exists() and TARGET.read_text(encoding="utf-8") == text
        print(f"{TARGET.relative_to(ROOT)}: {'up to date' if same else 'DIFFERS'}")
        return 0 if same else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
