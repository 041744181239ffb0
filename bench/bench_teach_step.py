"""One Step on the Teach pages, by key press, in Chromium (target: under 300 ms).

    python -m bench teach_step                # 20 presses a page, idle and busy
    python -m bench teach_step --presses 8

`streamlit run app.py` starts on 127.0.0.1 and headless Chromium (Debian's) opens each
stepping page in presentation mode at 1280 x 720 (Figures 1, 2, 3 and 10).  A press is
→ until the last step, then ← back to the first, and so on; each figure is the wall time
from the key press to the page's numbers (``.st-key-teach_numbers``) showing new text,
polled every animation frame.  The reference, measured in the same run on the same page:
a whole-page run (Streamlit's rerun key, R), from the press to the end of the run, which
is what each step cost before the step was a fragment.  "Busy" adds two CPU-burning
processes beside the server (both cores) and 4x CPU throttling in Chromium (a slow
laptop; TEACH_STEP_THROTTLE=1 leaves Chromium unthrottled, another number sets the
rate: with the burners alone Figure 2's median step was 138 ms, with 4x throttling alone
496 ms, most of it the browser redrawing a data grid the step had in its fragment).  The
first press of each page is a warm-up and not counted.  Nothing here is a
test: timings depend on the machine.  Writes ``docs/results/teach_step.md``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from ._paths import browser_support
from .bench_label_panel import burners, q95, start_server
from .results import command, table, write_results

THROTTLE = float(os.environ.get("TEACH_STEP_THROTTLE", "4"))  # Chromium's, when busy
# page address -> its last step (the first is 0)
PAGES = {"figure1": 2, "figure2": 4, "figure3": 4, "Teaching_figure": 171}
NUMBERS_JS = """() => { const e = document.querySelector('.st-key-teach_numbers');
  return e ? e.innerText : ''; }"""


def _press_times(page, bs, last: int, presses: int) -> list[float]:
    """Milliseconds from each key press to new numbers; the first press not counted."""
    times: list[float] = []
    step, way = int(bs.step_keys_ready(page)), 1
    for i in range(presses + 1):
        if not 0 <= step + way <= last:  # bounce at either end
            way = -way
        key = "ArrowRight" if way > 0 else "ArrowLeft"
        before = page.evaluate(NUMBERS_JS)
        bs.idle(page)
        t = time.perf_counter()
        page.keyboard.press(key)
        page.wait_for_function(f"(b) => ({NUMBERS_JS})() !== b && ({NUMBERS_JS})() !== ''",
                               arg=before, polling="raf", timeout=120_000)
        if i:
            times.append(1000 * (time.perf_counter() - t))
        step += way
        page.wait_for_timeout(150)
    return times


def _rerun_times(page, bs, runs: int) -> list[float]:
    """Milliseconds of a whole-page run started by Streamlit's rerun key."""
    out = []
    for _ in range(runs):
        bs.idle(page)
        page.evaluate("document.activeElement && document.activeElement.blur()")
        t = time.perf_counter()
        page.keyboard.press("r")
        try:  # the run starts (the app's script state flips), then ends
            page.wait_for_function("() => document.querySelector("
                                   "'[data-test-script-state=\"running\"]') !== null",
                                   polling="raf", timeout=10_000)
        except Exception:  # noqa: BLE001 - a run shorter than a frame: not seen running
            pass
        bs.idle(page, timeout=120_000)
        out.append(1000 * (time.perf_counter() - t))
    return out


def measure(presses: int, busy: bool) -> dict:
    from playwright.sync_api import sync_playwright

    bs = browser_support()
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, CERTLIB_STORE=str(Path(tmp) / "labels.db"))
        proc, url = start_server(env, bs.free_port())
        hot = burners(2) if busy else []
        try:
            with sync_playwright() as p:
                b = p.chromium.launch(executable_path=bs.CHROMIUM, args=bs.ARGS)
                for name, last in PAGES.items():
                    page = b.new_page(viewport={"width": 1280, "height": 720})
                    if busy and THROTTLE != 1:
                        cdp = page.context.new_cdp_session(page)
                        cdp.send("Emulation.setCPUThrottlingRate", {"rate": THROTTLE})
                    page.goto(f"{url}/{name}?present=1")
                    page.wait_for_selector(".st-key-teach_numbers", timeout=300_000)
                    bs.idle(page, timeout=300_000)
                    steps = _press_times(page, bs, last, presses)
                    full = _rerun_times(page, bs, max(3, presses // 4))
                    out[name] = (steps, full)
                    print(f"  {name} {'busy' if busy else 'idle'}: step median "
                          f"{statistics.median(steps):.0f} ms, p95 {q95(steps):.0f}; whole "
                          f"page {statistics.median(full):.0f} ms", flush=True)
                    page.close()
        finally:
            for h in hot:
                h.kill()
            proc.terminate()
            proc.wait(timeout=30)
    return out


def markdown(results: dict, presses: int) -> str:
    rows = []
    for cond, res in results.items():
        for name, (steps, full) in res.items():
            med, ref = statistics.median(steps), statistics.median(full)
            rows.append([name, cond, f"{med:.0f}", f"{q95(steps):.0f}", f"{max(steps):.0f}",
                         f"{ref:.0f}", f"{med / ref:.2f}"])
    return (f"One Step by key press in presentation mode at 1280 x 720, {presses} presses a "
            "page after a warm-up (ms from the press to the new numbers; target: under 300 "
            "ms). Reference in the same run: a whole-page run of the same page (R). Busy: "
            "two CPU burners beside the server and 4x CPU throttling in Chromium.\n\n"
            + table(["page", "machine", "step median", "p95", "max", "whole page median",
                     "step / whole page"], rows))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench teach_step", description=__doc__)
    ap.add_argument("--presses", type=int, default=20)
    args = ap.parse_args(argv)
    results = {}
    for busy in (False, True):
        print(f"{'busy' if busy else 'idle'} machine", flush=True)
        results["busy" if busy else "idle"] = measure(args.presses, busy)
    text = markdown(results, args.presses)
    print(text)
    write_results("teach_step", text,
                  command=command("teach_step", sys.argv[1:] if argv is None else argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
