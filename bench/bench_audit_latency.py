"""Latency of one key press in the Audit page's labelling queue (the Label page's is
bench/bench_label_panel.py; targets: median 300 ms, p95 600 ms).

    python -m bench audit_latency                 # 3 runs of 30 presses, the shipped sample
    python -m bench audit_latency --presses 10 --runs 1

`streamlit run app.py` starts on 127.0.0.1 with a temporary CERTLIB_STORE, and headless
Chromium (Debian's, /usr/bin/chromium) opens *Audit a model update*, starts an audit on
the shipped sample stream (its defaults: labels hidden, epsilon 0.03) and answers each
queued item with its true label from sample_data/audit_stream.csv by key press, 300 ms
after the item appeared (past the panel's double-press guard).  Each figure is the wall
time from the key press to the next item id in the labelling panel (polled every
animation frame).  The first press is a warm-up and not counted.  When the queue runs dry
the bench appends the next sample items (not timed).  Nothing here is a test: timings
depend on the machine.  Writes ``docs/results/audit_latency.md``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

from ._paths import ROOT, browser_support
from .bench_label_panel import start_server
from .results import command, table, write_results

_IDLE = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"


def measure(presses: int) -> list:
    from playwright.sync_api import sync_playwright

    bs = browser_support()
    row_js = bs.PANEL_ROW_JS  # the item id the queue's labelling panel shows, '' for none
    truth = pl.read_csv(ROOT / "sample_data" / "audit_stream.csv")["label"].to_list()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, CERTLIB_STORE=str(Path(tmp) / "labels.db"),
                   CERTLIB_DATA=str(Path(tmp) / "data"))
        proc, url = start_server(env, bs.free_port())
        try:
            with sync_playwright() as p:
                b = p.chromium.launch(executable_path=bs.CHROMIUM, args=bs.ARGS)
                page = b.new_page(viewport={"width": 1400, "height": 1000})
                page.goto(f"{url}/audit")
                name = page.get_by_label("Your name (annotator)")
                name.wait_for(timeout=300_000)
                name.fill("bench")
                name.press("Enter")
                page.wait_for_timeout(500)
                page.wait_for_function(_IDLE, timeout=300_000)
                page.get_by_role("button", name="Start audit").click()
                page.wait_for_function(f"() => ({row_js})() !== ''", timeout=300_000)
                times = []
                while len(times) < presses:
                    page.wait_for_function(_IDLE, timeout=300_000)
                    item = page.evaluate(row_js) or None
                    if item is None:
                        more = page.get_by_role("button", name="Append sample items")
                        if not more.count():
                            print("  the audit reached its verdict", flush=True)
                            break
                        more.first.click()
                        page.wait_for_timeout(500)
                        page.wait_for_function(f"() => ({row_js})() !== ''",
                                               timeout=300_000)
                        continue
                    page.wait_for_timeout(300)  # past the panel's 250 ms double-press guard
                    page.evaluate("document.activeElement && document.activeElement.blur()")
                    t = time.perf_counter()
                    page.keyboard.press(str(truth[int(item.replace(',', ''))]))
                    page.wait_for_function(f"() => ({row_js})() !== {item!r}",
                                           polling="raf", timeout=300_000)
                    times.append(1000 * (time.perf_counter() - t))
                b.close()
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    return times[1:]  # the first press warms the caches


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presses", type=int, default=30)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    rows = []
    for k in range(args.runs):
        times = measure(args.presses + 1)
        q = statistics.quantiles(times, n=20, method="inclusive")
        med = statistics.median(times)
        print(f"  run {k + 1}: {len(times)} presses: median {med:.0f} ms, "
              f"p95 {q[18]:.0f} ms, max {max(times):.0f} ms", flush=True)
        rows.append([k + 1, len(times), f"{med:.0f} ms", f"{q[18]:.0f} ms",
                     f"{max(times):.0f} ms"])
    md = ("A key press in the Audit page's queue, from the key to the next item id on "
          "screen: `streamlit run app.py` on 127.0.0.1, headless Chromium, the shipped "
          "sample (labels hidden, eps = 0.03); the first press of a run is a warm-up "
          "(targets: median 300 ms, 95th percentile 600 ms).\n\n"
          + table(["run", "presses", "median", "95th percentile", "max"], rows))
    write_results("audit_latency", md, command=command("audit_latency", argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
