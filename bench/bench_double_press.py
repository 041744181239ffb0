"""Quick double presses and fast answers on the Label page, in Chromium.

    python bench/bench_double_press.py            # the default guard (CERTLIB_MIN_SEEN unset)
    python bench/bench_double_press.py --off --tries 4   # the guard off (CERTLIB_MIN_SEEN=0;
                                                         # more tries certify the project)

Two measurements on the unlabelled sample, each press by Playwright's keyboard:

* *double press*: a row shown for 0.8 s is answered with ``0``, and ``0`` is pressed again
  G ms later; counted: how often the second press is saved too (on the next row, which
  nobody has read);
* *fast answer*: ``0``, then ``0`` again D ms after the next row's heading appeared (a
  fast annotator); counted: how often that answer is taken.

Not a test: timings depend on the machine (README, "Labelling in the browser").
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from playwright import sync_api  # noqa: E402

from browser_support import Server, idle, launch  # noqa: E402
from certlib.store import LabelStore  # noqa: E402
from test_browser_label import _start_project  # noqa: E402

HEAD = """() => { const h = [...document.querySelectorAll('h3')].find(
    e => e.innerText.startsWith('Next row: row_id')); return h ? h.innerText : ''; }"""
CHANGED = """(prev) => { const h = [...document.querySelectorAll('h3')].find(
    e => e.innerText.startsWith('Next row: row_id')); return h && h.innerText !== prev; }"""


def _pair(page, store, pid, wait_ms, after_row: bool) -> int:
    """Press 0, then 0 again ``wait_ms`` later (after the next row appeared, with
    ``after_row``); the number of labels saved (0-2)."""
    page.wait_for_timeout(800)
    head = page.evaluate(HEAD)
    if not head:
        raise SystemExit("the project has certified: run fewer --tries")
    before = len(store.labels(pid))
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("0")
    if after_row:
        page.wait_for_function(CHANGED, arg=head, polling="raf", timeout=30_000)
    page.wait_for_timeout(wait_ms)
    page.keyboard.press("0")
    page.wait_for_timeout(1500)
    idle(page)
    return len(store.labels(pid)) - before


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--off", action="store_true", help="CERTLIB_MIN_SEEN=0")
    ap.add_argument("--tries", type=int, default=6)
    ap.add_argument("--gaps", default="100,200,300,400,500,700")
    ap.add_argument("--delays", default="100,250,400,550,700")
    a = ap.parse_args(argv)
    gaps = [int(x) for x in a.gaps.split(",")]
    delays = [int(x) for x in a.delays.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        srv = Server(Path(tmp) / "labels.db")
        srv.env.pop("CERTLIB_MIN_SEEN", None)
        if a.off:
            srv.env["CERTLIB_MIN_SEEN"] = "0"
        srv.start()
        try:
            with launch(sync_api) as browser:
                page = _start_project(browser, srv, "ana", 1300)
                store = LabelStore(srv.env["CERTLIB_STORE"])
                (project,) = store.projects()
                double = {g: 0 for g in gaps}
                fast = {d: 0 for d in delays}
                for _ in range(a.tries):
                    for g in gaps:
                        double[g] += _pair(page, store, project.id, g, False) == 2
                    for d in delays:
                        fast[d] += _pair(page, store, project.id, d, True) == 2
        finally:
            srv.stop()
    print(f"guard {'off' if a.off else 'on (default)'}, {a.tries} tries each")
    for g in gaps:
        print(f"  double press {g:4d} ms apart: second press saved {double[g]} of {a.tries}")
    for d in delays:
        print(f"  answer {d:4d} ms after the next row appeared: taken {fast[d]} of {a.tries}")


if __name__ == "__main__":
    main()
