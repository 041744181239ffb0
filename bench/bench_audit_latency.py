"""Latency of one key press in the Audit page's labelling queue (the Label page's is
bench/bench_label_latency.py; same targets: median 300 ms, p95 600 ms).

    python bench/bench_audit_latency.py                 # 30 presses, the shipped sample
    python bench/bench_audit_latency.py --presses 10

`streamlit run app.py` starts on 127.0.0.1 with a temporary CERTLIB_STORE, and headless
Chromium (Debian's, /usr/bin/chromium) opens *Audit a model update*, starts an audit on
the shipped sample stream (its defaults: labels hidden, epsilon 0.03) and answers each
queued item with its true label from sample_data/audit_stream.csv by key press.  Each
figure is the wall time from the key press to the next item id on screen (polled every
animation frame).  The first press is a warm-up and not counted.  When the queue runs dry
the bench appends the next sample items (not timed).  Nothing here is a test: timings
depend on the machine.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from bench_label_latency import start_server  # noqa: E402
from browser_support import ARGS, CHROMIUM  # noqa: E402

_NEXT_ITEM = """() => { const p = [...document.querySelectorAll('p')]
    .find(e => e.innerText.startsWith('Next item: item_id'));
    return p ? p.innerText.split(' ')[3] : null; }"""
_IDLE = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"


def measure(presses: int) -> list:
    from playwright.sync_api import sync_playwright

    truth = pl.read_csv(ROOT / "sample_data" / "audit_stream.csv")["label"].to_list()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, CERTLIB_STORE=str(Path(tmp) / "labels.db"),
                   CERTLIB_DATA=str(Path(tmp) / "data"))
        proc, url = start_server(env)
        try:
            with sync_playwright() as p:
                b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                page = b.new_page(viewport={"width": 1400, "height": 1000})
                page.goto(f"{url}/audit")
                name = page.locator('input[aria-label^="Your name"]').first
                name.wait_for(timeout=300_000)
                name.fill("bench")
                name.press("Enter")
                page.wait_for_timeout(500)
                page.wait_for_function(_IDLE, timeout=300_000)
                page.get_by_role("button", name="Start audit").click()
                page.wait_for_function(_NEXT_ITEM, timeout=300_000)
                times = []
                while len(times) < presses:
                    page.wait_for_function(_IDLE, timeout=300_000)
                    item = page.evaluate(_NEXT_ITEM)
                    if item is None:
                        more = page.get_by_role("button", name="Append sample items")
                        if not more.count():
                            print("  the audit reached its verdict", flush=True)
                            break
                        more.first.click()
                        page.wait_for_timeout(500)
                        page.wait_for_function(_NEXT_ITEM, timeout=300_000)
                        continue
                    page.evaluate("document.activeElement && document.activeElement.blur()")
                    t = time.perf_counter()
                    page.keyboard.press(str(truth[int(item.replace(',', ''))]))
                    page.wait_for_function(f"() => ({_NEXT_ITEM})() !== {item!r}",
                                           polling="raf", timeout=300_000)
                    times.append(1000 * (time.perf_counter() - t))
                b.close()
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    return times[1:]  # the first press warms the caches


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presses", type=int, default=30)
    args = ap.parse_args()
    times = measure(args.presses + 1)
    q = statistics.quantiles(times, n=20, method="inclusive")
    print(f"  {len(times)} presses: median {statistics.median(times):.0f} ms, "
          f"p95 {q[18]:.0f} ms, max {max(times):.0f} ms", flush=True)


if __name__ == "__main__":
    main()
