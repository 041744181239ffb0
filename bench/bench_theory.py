"""The Theory explorer's numbers and speed (paper 000, Propositions 2 and 3, section 6.7).

    python -m bench theory             # medians over 5 runs, each in a fresh state
    python -m bench theory --runs 1

Runs the library calls the page makes with its defaults: random_orders per n in
(100, 300, 1000, 3000, 10000), K = 2, q = .3, 5 pools each, adaptive-pair-sum; the
Gaussian copula at n = 1000 (5 rhos, 3 pools); the cyclic shift n = 1000, s = 90; and
one AppTest run of the whole page (no browser); and the page's first open in Chromium on a
fresh server (Figure 1 open first, then a click on "Theory explorer"): seconds until the
numbers and the Figure 5 chart are drawn, and until the whole page (Figure 4 too, both
SVG images drawn with the text) has finished, also as a ratio to the live simulation of
the defaults timed in the same run (the machine's speed).  Also the Figure 10 numbers of the shipped
teaching pool (``sample_data/teaching_k4.csv``).  Writes the numbers the pages show and
the times (target: the page open within 2 s of the click) into ``docs/results/theory.md``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from ._paths import ROOT
from .results import command, table, write_results

NS = (100, 300, 1000, 3000, 10000)
RHOS = (0.0, 0.3, 0.6, 0.9, 0.99)


def browser_open() -> tuple[float, float]:
    """Seconds from the click to the summary and chart drawn, and to the run's end."""
    import tempfile
    from pathlib import Path

    from playwright import sync_api

    from ._paths import browser_support

    bs = browser_support()
    srv = bs.Server(Path(tempfile.mkdtemp()) / "labels.db").start()
    try:
        with bs.launch(sync_api) as b:
            pg = b.new_page(viewport={"width": 1400, "height": 1000})
            pg.goto(srv.url + "/figure1")
            bs.idle(pg, timeout=120_000)
            time.sleep(1)
            t = time.perf_counter()
            pg.locator("[data-testid=stSidebarNav] a", has_text="Theory explorer").click()
            bs.wait_text(pg, "At n =", timeout=120_000)
            pg.locator("[data-testid=stImage] img").first.wait_for(timeout=120_000)
            chart = time.perf_counter() - t
            pg.locator("[data-testid=stImage] img").nth(1).wait_for(timeout=120_000)
            bs.idle(pg, timeout=120_000)
            return chart, time.perf_counter() - t
    finally:
        srv.stop()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    runs = ap.parse_args(argv).runs
    from certlib.io import load_pool
    from certlib.teaching.bound_traces import teaching_figure
    from certlib.teaching.theory import copula_prelabel, cyclic_shift, random_orders

    lib, page = [], []
    for _ in range(runs):
        t = time.perf_counter()
        orders = [random_orders(ns=(n,), K=2, q=0.3, seeds=5, policy="adaptive-pair-sum")
                  for n in NS]
        copula = [copula_prelabel(rhos=(rho,), n=1000, seeds=3) for rho in RHOS]
        shift = cyclic_shift(n=1000, s=90)
        lib.append(time.perf_counter() - t)
    from streamlit.testing.v1 import AppTest

    for _ in range(runs):
        t = time.perf_counter()
        at = AppTest.from_file(str(ROOT / "views" / "teach_theory.py"), default_timeout=120)
        at.run()
        assert not at.exception
        page.append(time.perf_counter() - t)
    opens = [browser_open() for _ in range(runs)]
    chart_s = statistics.median(o[0] for o in opens)
    whole_s = statistics.median(o[1] for o in opens)
    ref = statistics.median(lib)
    print(f"Chromium, fresh server, click to Figure 5 drawn: median {chart_s:.2f} s "
          f"({chart_s / ref:.1f} x the live simulation), whole page {whole_s:.2f} s")
    print(f"library calls of the default settings: median {statistics.median(lib):.2f} s "
          f"(min {min(lib):.2f}, max {max(lib):.2f}) over {runs} runs")
    print(f"whole page, AppTest (cache cleared per process only on the first run): "
          f"median {statistics.median(page):.2f} s, first run {page[0]:.2f} s")

    def cert(r):
        lo, hi = r.cert_lower[0], r.cert_upper[0]
        return f"{lo:.3f}" if f"{lo:.3f}" == f"{hi:.3f}" else f"{lo:.3f}-{hi:.3f}"

    t_orders = table(["n", "prelabel / n", "C(y) / n", "adaptive pair-sum / n"],
                     [[f"{n:,}", f"{r.prelabel[0]:.3f}", cert(r), f"{r.policy_read[0]:.3f}"]
                      for n, r in zip(NS, orders)])
    t_copula = table(["rho", "prelabel / n", "Spearman"],
                     [[f"{rho:g}", f"{c.prelabel[0]:.3f}", f"{c.spearman[0]:.3f}"]
                      for rho, c in zip(RHOS, copula)])
    for n, r in zip(NS, orders):
        print(f"n={n}: prelabel/n {r.prelabel[0]:.3f}, C(y)/n {cert(r)}, "
              f"adaptive pair-sum/n {r.policy_read[0]:.3f}")
    for rho, c in zip(RHOS, copula):
        print(f"rho={rho}: prelabel/n {c.prelabel[0]:.3f}, Spearman {c.spearman[0]:.3f}")
    print(f"cyclic shift n=1000 s=90: prelabel {shift.prelabel}, Spearman {shift.spearman:.3f}")
    tf = teaching_figure(load_pool(ROOT / "sample_data" / "teaching_k4.csv"))
    stops = {rule: tf.paths[rule].stop for rule in ("shared", "centered", "separate")}
    print(f"teaching pool: stops {stops}, prelabel {tf.prelabel}, certificate "
          f"[{tf.certificate_lower}, {tf.certificate_upper}]")
    cert_t = (f"{tf.certificate_lower}" if tf.certificate_lower == tf.certificate_upper
              else f"[{tf.certificate_lower}, {tf.certificate_upper}]")
    md = "\n".join([
        f"Figure 10 on the shipped teaching pool (`sample_data/teaching_k4.csv`, n = {tf.n}, "
        f"{tf.policy} order): the rules stop at "
        + ", ".join(f"{'never' if v is None else v} ({k})" for k, v in stops.items())
        + f" labels; the minimum certificate is {cert_t} and the prelabel bound "
        f"{tf.prelabel}.", "",
        "Identical predictions, K = 2, q = 0.3, independent uniform orders, means of 5 pools "
        "per n (the page's defaults; limits 1/4, 1/2 and 1 as n grows):", "", t_orders, "",
        "Gaussian copula of the two orders, n = 1,000, means of 3 pools (paper: .250 at "
        "rho = 0 and .204 at .99):", "", t_copula, "",
        f"Cyclic shift, n = 1,000, s = 90: prelabel bound {shift.prelabel} (= s), Spearman "
        f"{shift.spearman:.3f}.", "",
        f"Speed: the default settings' library calls take a median "
        f"{statistics.median(lib):.2f} s over {runs} runs, the whole page (AppTest, no "
        f"browser) {statistics.median(page):.2f} s, {page[0]:.2f} s on a cold cache. "
        f"In Chromium on a fresh server, a click on *Theory explorer* shows the numbers "
        f"and the Figure 5 chart after a median {chart_s:.2f} s ({chart_s / ref:.1f} times "
        f"the live simulation of the defaults, {ref:.2f} s in the same run; the defaults "
        f"are read from the shipped table), the whole page with Figure 4 after "
        f"{whole_s:.2f} s (target: the whole page under 2 s)."])
    write_results("theory", md, command=command("theory", argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
