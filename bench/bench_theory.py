"""Time of the Theory explorer's default settings (issue 11: under 10 s, cold cache).

    python bench/bench_theory.py        # medians over 5 runs, each in a fresh state

Measures the library calls the page makes with its defaults: random_orders per n in
(100, 300, 1000, 3000, 10000), K = 2, q = .3, 5 pools each, adaptive-pair-sum; the
Gaussian copula at n = 1000 (5 rhos, 3 pools); the cyclic shift n = 1000, s = 90; and
one AppTest run of the whole page (no browser).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(runs: int = 5) -> None:
    from certlib.teaching.theory import copula_prelabel, cyclic_shift, random_orders

    lib, page = [], []
    for _ in range(runs):
        t = time.perf_counter()
        for n in (100, 300, 1000, 3000, 10000):
            random_orders(ns=(n,), K=2, q=0.3, seeds=5, policy="adaptive-pair-sum")
        for rho in (0.0, 0.3, 0.6, 0.9, 0.99):
            copula_prelabel(rhos=(rho,), n=1000, seeds=3)
        cyclic_shift(1000, 90)
        lib.append(time.perf_counter() - t)
    from streamlit.testing.v1 import AppTest

    for _ in range(runs):
        t = time.perf_counter()
        at = AppTest.from_file(str(ROOT / "pages" / "teach_theory.py"), default_timeout=120)
        at.run()
        assert not at.exception
        page.append(time.perf_counter() - t)
    print(f"library calls of the default settings: median {statistics.median(lib):.2f} s "
          f"(min {min(lib):.2f}, max {max(lib):.2f}) over {runs} runs")
    print(f"whole page, AppTest (cache cleared per process only on the first run): "
          f"median {statistics.median(page):.2f} s, first run {page[0]:.2f} s")


if __name__ == "__main__":
    main()
