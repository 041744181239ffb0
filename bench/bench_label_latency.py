"""Latency of one key press on the labelling page (issue 9 target: median 300 ms, p95 600 ms).

    python bench/bench_label_latency.py                 # n = 1,000 and n = 100,000, K = 8
    python bench/bench_label_latency.py --n 1000 --presses 10

For each n: a synthetic binary pool (seeded, K = 8, no labels) is saved as an upload in a
temporary CERTLIB_DATA folder, `streamlit run app.py` starts on 127.0.0.1 with a
temporary CERTLIB_STORE, and headless Chromium (Debian's, /usr/bin/chromium) opens
Label, starts a project and presses the class key ``--presses`` times.  Each figure is
the wall time from the key press to the next row id on screen (polled every animation
frame in the browser).  The first press after the start is a warm-up and not counted.
Nothing here is a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from browser_support import ARGS, CHROMIUM, free_port  # noqa: E402

K = 8


def pool_csv(n: int, seed: int = 0) -> bytes:
    """A binary pool of K candidates that agree on most rows (as frozen models do)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, n)
    out = io.StringIO()
    cols = [f"pred_m{k},conf_m{k}" for k in range(K)]
    out.write("row_id,label," + ",".join(cols) + ",note\n")
    preds = np.where(rng.random((K, n)) < 0.85 + 0.01 * np.arange(K)[:, None], truth, 1 - truth)
    confs = np.round(rng.random((K, n)), 4)
    for i in range(n):
        cells = ",".join(f"{preds[k, i]},{confs[k, i]}" for k in range(K))
        out.write(f"{i},,{cells},row {i}\n")
    return out.getvalue().encode()


def start_server(env: dict) -> tuple:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
         "--server.address", "127.0.0.1", "--server.port", str(port),
         "--server.headless", "true", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(120):
        try:
            urllib.request.urlopen(url + "/_stcore/health", timeout=1)
            return proc, url
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise RuntimeError("streamlit did not start within 60 s")


_NEXT_ROW = """() => { const h = [...document.querySelectorAll('h3')]
    .find(e => e.innerText.startsWith('Next row: row_id'));
    return h ? h.innerText : null; }"""


def measure(n: int, presses: int) -> list:
    from playwright.sync_api import sync_playwright

    from certlib.saved_pools import SavedPools

    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, CERTLIB_STORE=str(Path(tmp) / "labels.db"),
                   CERTLIB_DATA=str(Path(tmp) / "data"))
        t0 = time.perf_counter()
        saved = SavedPools(Path(tmp) / "data").add(f"synthetic_n{n}.csv", pool_csv(n))
        print(f"n = {n:,}: pool written and saved in {time.perf_counter() - t0:.1f} s",
              flush=True)
        proc, url = start_server(env)
        try:
            with sync_playwright() as p:
                b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                page = b.new_page(viewport={"width": 1400, "height": 1000})
                t0 = time.perf_counter()
                page.goto(f"{url}/Label?pool=upload:{saved.digest}&annotator=bench")
                page.get_by_role("button", name="Start / resume labelling").wait_for(
                    timeout=300_000)
                page.get_by_role("button", name="Start / resume labelling").click()
                page.wait_for_function(_NEXT_ROW, timeout=300_000)
                print(f"  page open and project started in {time.perf_counter() - t0:.1f} s",
                      flush=True)
                times = []
                for i in range(presses + 1):
                    page.wait_for_function(
                        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
                        timeout=300_000)
                    before = page.evaluate(_NEXT_ROW)
                    page.evaluate("document.activeElement && document.activeElement.blur()")
                    t = time.perf_counter()
                    page.keyboard.press("1")
                    page.wait_for_function(f"() => ({_NEXT_ROW})() !== {before!r}",
                                           polling="raf", timeout=300_000)
                    if i:  # the first press warms the caches
                        times.append(1000 * (time.perf_counter() - t))
                b.close()
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    return times


def report(n: int, times: list) -> None:
    q = statistics.quantiles(times, n=20, method="inclusive")
    print(f"  n = {n:,}, K = {K}: {len(times)} presses, median {statistics.median(times):.0f} ms, "
          f"p95 {q[18]:.0f} ms, max {max(times):.0f} ms", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="*", default=[1_000, 100_000])
    ap.add_argument("--presses", type=int, default=30)
    args = ap.parse_args()
    for n in args.n:
        report(n, measure(n, args.presses))


if __name__ == "__main__":
    main()
