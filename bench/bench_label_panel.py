"""The labelling panel in Chromium against `streamlit run app.py`: key press -> next row
painted, a paced annotator, double presses and a server killed mid-burst.

    python -m bench label_panel                       # n = 1,000, 100,000, 1,000,000
    python -m bench label_panel --n 1000 --rows 60 --pairs 20 --no-kill

For each n: a synthetic binary pool (seeded, K = 8, no labels) is saved as an upload in
a temporary CERTLIB_DATA folder, the server starts on 127.0.0.1 with a temporary
CERTLIB_STORE, and headless Chromium (Debian's) opens Label, starts a project and, with
the machine idle and then with two CPU-burning processes beside the server (both cores):

* *paced*: a press every 350 ms for ``--rows`` rows, the key drawn at random; the page
  records at each keydown (a window listener, before the panel) the row shown, and the
  time until the next row is painted (the first animation frame after the panel's row
  changed, then a task: the frame has been drawn).  Counted: stored labels that differ
  from the key pressed for the row shown (must be 0), and the latency's median and 95th
  percentile;
* *double*: ``--pairs`` double presses 30-200 ms apart (drawn at random), each after the
  row has been on screen 400 ms.  Counted: labels stored for the second press (must be 0:
  its row was painted under the 250 ms guard) and second presses the panel did not
  refuse in words;
* *kill* (idle only): a burst at 350 ms, the server killed with SIGKILL after 10 presses,
  then restarted; counted: labels the panel showed as saved that are not in the store,
  labels in the store that were not pressed (both must be 0), and whether the panel
  resumes on the row the store says is next.

Not a test: timings depend on the machine.  Writes ``docs/results/label_panel.md``.
Chromium's path and flags and the panel's selectors come from ``tests/browser_support.py``
(loaded by its path, `bench._paths.browser_support`), so the bench drives the page exactly
as the browser tests do.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

from ._paths import ROOT, browser_support
from .results import command, table, write_results

_bs = browser_support()
ARGS, CHROMIUM, PANEL_JS, PANEL_ROW_JS = _bs.ARGS, _bs.CHROMIUM, _bs.PANEL_JS, _bs.PANEL_ROW_JS
free_port = _bs.free_port

K = 8
GUARD_MS = 250

RECORD_JS = f"""() => {{
  window.__presses = []; window.__lat = [];
  if (window.__recording) return;  // one listener, whatever the number of phases
  window.__recording = true;
  window.addEventListener('keydown', (e) => {{
    const row = ({PANEL_ROW_JS})(), t0 = performance.now();
    window.__presses.push({{row, key: e.key, t: t0}});
    const root = ({PANEL_JS})();
    const box = root.querySelector('.cl-row');
    const obs = new MutationObserver(() => {{
      if (box.getAttribute('data-row-id') === row) return;
      obs.disconnect();
      requestAnimationFrame(() => setTimeout(
        () => window.__lat.push(performance.now() - t0), 0));
    }});
    obs.observe(box, {{attributes: true, attributeFilter: ['data-row-id']}});
    setTimeout(() => obs.disconnect(), 2000);
  }}, true);
}}"""
MSG_JS = (f"() => {{ const r = ({PANEL_JS})(); "
          "return r ? r.querySelector('.cl-msg').textContent : ''; }")
SAVED_JS = f"() => Number(({PANEL_JS})().querySelector('.cl-status').dataset.saved || 0)"


def pool_csv(path: Path, n: int, seed: int = 0) -> None:
    """A binary pool of K candidates that agree on most rows (as frozen models do)."""
    import polars as pl

    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, n)
    cols = {"row_id": np.arange(n), "label": [None] * n}
    for k in range(K):
        right = rng.random(n) < 0.85 + 0.01 * k
        cols[f"pred_m{k}"] = np.where(right, truth, 1 - truth)
        cols[f"conf_m{k}"] = np.round(rng.random(n), 4)
    pl.DataFrame(cols, schema_overrides={"label": pl.Int64}).write_csv(path)


def start_server(env: dict, port: int):
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
         "--server.address", "127.0.0.1", "--server.port", str(port),
         "--server.headless", "true", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(240):
        try:
            urllib.request.urlopen(url + "/_stcore/health", timeout=1)
            return proc, url
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("streamlit did not start within 120 s")


def burners(k: int) -> list:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(k)]


def q95(xs) -> float:
    return statistics.quantiles(xs, n=20, method="inclusive")[18] if len(xs) > 1 else xs[0]


STATE_JS = (f"() => {{ const r = ({PANEL_JS})(); return r ? [r.querySelector('.cl-status')"
            ".textContent, r.querySelector('.cl-msg').textContent] : null; }")


def wait_row(page, previous=None, timeout=300_000) -> str:
    try:
        page.wait_for_function(f"(prev) => {{ const r = ({PANEL_ROW_JS})(); "
                               "return r !== '' && r !== prev; }", arg=previous,
                               timeout=timeout)
    except Exception:
        print("no row to answer:", page.evaluate(STATE_JS), flush=True)
        raise
    return page.evaluate(PANEL_ROW_JS)


def store_labels(store_path: Path) -> list:
    from certlib.labelling.store import LabelStore

    store = LabelStore(store_path)
    (project,) = store.projects()
    return [(str(e.row_id), str(e.label)) for e in store.labels(project.id)]


def paced(page, store_path, rows: int, rng) -> dict:
    before = len(store_labels(store_path))
    page.evaluate(RECORD_JS)
    wait_row(page)
    page.wait_for_timeout(400)
    for i in range(rows):
        page.keyboard.press(rng.choice("01"))
        page.wait_for_timeout(350)
        if i % 50 == 0:
            print(f"  paced {i}: {page.evaluate(STATE_JS)}", flush=True)
    page.wait_for_timeout(3000)
    presses = page.evaluate("window.__presses")
    lat = page.evaluate("window.__lat")
    stored = store_labels(store_path)[before:]
    pressed = [(p["row"], p["key"]) for p in presses]
    mismatches = sum(1 for s in stored if s not in pressed)
    return {"presses": len(presses), "stored": len(stored), "mismatches": mismatches,
            "missing": len(pressed) - len(stored),
            "latency_median_ms": round(statistics.median(lat), 1) if lat else None,
            "latency_p95_ms": round(q95(lat), 1) if lat else None,
            "latencies": len(lat)}


def doubles(page, store_path, pairs: int, rng) -> dict:
    """Double presses; the gap and the rows are read from the page's keydown times (the
    driver's own waits add jitter), and a second press counts as wrongly taken when a
    label was stored for the row it met and that row had been painted under `GUARD_MS`
    before it (painted: the first press's time plus its measured latency)."""
    wrong, unsaid, gaps, other, late = 0, 0, [], {}, 0
    page.evaluate(RECORD_JS)
    for i in range(pairs):
        page.evaluate(PANEL_ROW_JS) or wait_row(page, timeout=60_000)
        if i % 25 == 0:
            print(f"  double {i}: {page.evaluate(STATE_JS)}", flush=True)
        page.wait_for_timeout(400)
        before = len(store_labels(store_path))
        n_lat = len(page.evaluate("window.__lat"))
        key = rng.choice("01")
        page.keyboard.press(key)
        page.wait_for_timeout(rng.randint(30, 200))
        page.keyboard.press(key)
        said = page.evaluate(MSG_JS)
        page.wait_for_timeout(700)
        p1, p2 = page.evaluate("window.__presses.slice(-2)")
        lat = page.evaluate("window.__lat")[n_lat:n_lat + 1]
        gap = p2["t"] - p1["t"]
        gaps.append(gap)
        seen = gap - (lat[0] if lat else 0.0)  # how long the second press's row was up
        got = store_labels(store_path)[before:]
        if seen >= GUARD_MS:
            late += 1  # the driver pressed later than asked: a legitimate answer
            continue
        if any(r == p2["row"] for r, _ in got) and p2["row"] != p1["row"]:
            wrong += 1
        if "Too quick" not in said:
            unsaid += 1
            other[said[:60]] = other.get(said[:60], 0) + 1
    return {"pairs": pairs, "gap_ms_min_median_max": [round(min(gaps)), round(
        statistics.median(gaps)), round(max(gaps))],
            "pairs_with_second_press_at_or_after_guard": late,
            "second_press_saved_under_guard": wrong, "not_said_too_quick": unsaid,
            "said_instead": other}


def kill_burst(page, env, port, store_path, proc, rng, csv) -> tuple:
    start = len(store_labels(store_path))
    page.evaluate(RECORD_JS)
    wait_row(page)
    page.wait_for_timeout(400)
    for i in range(20):
        if i == 10:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        page.keyboard.press(rng.choice("01"))
        page.wait_for_timeout(350)
    shown_saved = page.evaluate(SAVED_JS)
    in_store = store_labels(store_path)
    proc, _ = start_server(env, port)
    page.wait_for_timeout(8000)  # reconnects, resends what was pending
    presses = [(p["row"], p["key"]) for p in page.evaluate("window.__presses")]
    after = store_labels(store_path)
    from certlib import load_pool
    from certlib.labelling.store import LabelStore

    store = LabelStore(store_path)
    (project,) = store.projects()
    pool = load_pool(csv)
    nxt = store.progress(project.id, pool).next_row
    resumed = page.evaluate(PANEL_ROW_JS)
    out = {"shown_saved_at_kill": shown_saved, "in_store_at_kill": len(in_store),
           "shown_saved_missing": max(0, shown_saved - len(in_store)),
           "extra_in_store": sum(1 for s in after[start:] if s not in presses),
           "in_store_after_restart": len(after), "duplicates": len(after) - len(set(after)),
           "panel_row_after_restart": resumed,
           "store_next_row": None if nxt is None else str(pool.row_ids[nxt])}
    return out, proc


def run(n: int, args) -> dict:
    from playwright.sync_api import sync_playwright

    from certlib.labelling.saved_pools import SavedPools

    rng = random.Random(n)
    res = {"n": n, "K": K}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        store_path = tmp / "labels.db"
        env = dict(os.environ, CERTLIB_STORE=str(store_path), CERTLIB_DATA=str(tmp / "data"))
        csv = tmp / f"synthetic_n{n}.csv"
        pool_csv(csv, n)
        saved = SavedPools(tmp / "data").add(csv.name, csv.read_bytes())
        port = free_port()
        proc, url = start_server(env, port)
        try:
            with sync_playwright() as p:
                b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                page = b.new_page(viewport={"width": 1400, "height": 1000})
                t0 = time.perf_counter()
                page.goto(f"{url}/Label?pool=upload:{saved.digest}&annotator=bench")
                start = page.get_by_role("button", name="Start a new project")
                start.wait_for(timeout=600_000)
                start.click()
                wait_row(page, timeout=600_000)
                res["open_s"] = round(time.perf_counter() - t0, 1)
                res["idle"] = {"paced": paced(page, store_path, args.rows, rng),
                               "double": doubles(page, store_path, args.pairs, rng)}
                print(json.dumps({"n": n, "idle": res["idle"]}), flush=True)
                hot = burners(2)
                try:
                    res["busy"] = {"paced": paced(page, store_path, args.rows, rng),
                                   "double": doubles(page, store_path, args.pairs, rng)}
                finally:
                    for h in hot:
                        h.kill()
                print(json.dumps({"n": n, "busy": res["busy"]}), flush=True)
                if args.kill:
                    res["kill"], proc = kill_burst(page, env, port, store_path, proc, rng, csv)
                    print(json.dumps({"n": n, "kill": res["kill"]}), flush=True)
                b.close()
        finally:
            proc.kill()
            proc.wait(timeout=30)
    return res


def markdown(out: list[dict], args: argparse.Namespace) -> str:
    def lat(ph):
        p = ph["paced"]
        return f"{p['latency_median_ms']} / {p['latency_p95_ms']} ms"

    rows, said = [], []
    for r in out:
        i, b = r["idle"], r["busy"]
        row = [f"{r['n']:,}", lat(i), lat(b),
               f"{i['paced']['mismatches']} ({i['paced']['stored']}) / "
               f"{b['paced']['mismatches']} ({b['paced']['stored']})",
               f"{i['double']['second_press_saved_under_guard']} / "
               f"{b['double']['second_press_saved_under_guard']}",
               f"{i['double']['not_said_too_quick']} / {b['double']['not_said_too_quick']}"]
        if args.kill:
            k = r["kill"]
            ok = "yes" if k["panel_row_after_restart"] == k["store_next_row"] else "no"
            row.append(f"{k['shown_saved_missing']} of {k['in_store_after_restart']}; {ok}")
        rows.append(row)
        for tag, ph in (("idle", i), ("busy", b)):
            for msg, c in ph["double"]["said_instead"].items():
                said.append(f"n = {r['n']:,} {tag}: {c} x \"{msg.strip()}\"")
    header = ["n", "latency median / p95, idle", "busy",
              f"paced: mismatches (stored of {args.rows}), idle / busy",
              f"double: wrong of {args.pairs}, idle / busy",
              "double: not said \"Too quick\", idle / busy"]
    if args.kill:
        header.append("kill: shown saved but not stored (of stored); resumes on the "
                      "store's next row")
    text = ("`streamlit run app.py` on 127.0.0.1 with an uploaded unlabelled synthetic pool "
            f"(K = {K}, seeded), headless Chromium, one run; \"busy\" = two CPU-burning "
            "processes beside the server. Latency: key down to the next row painted, "
            f"measured in the page. Paced: a press every 350 ms for {args.rows} rows. Double: "
            f"{args.pairs} pairs, the second press 30-200 ms after the first, counted wrong "
            f"when a label is stored for a row painted under {GUARD_MS} ms before it."
            + (" Kill: a 350 ms burst, the server killed with SIGKILL after 10 presses, "
               "restarted." if args.kill else " No kill phase in this run (`--no-kill`).")
            + "\n\n" + table(header, rows))
    if said:
        text += "\n\nSecond presses answered with another message: " + "; ".join(said) + "."
    return text


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="*", default=[1_000, 100_000, 1_000_000])
    ap.add_argument("--rows", type=int, default=300)
    ap.add_argument("--pairs", type=int, default=100)
    ap.add_argument("--no-kill", dest="kill", action="store_false")
    args = ap.parse_args(argv)
    out = [run(n, args) for n in args.n]
    print(json.dumps(out, indent=1))
    write_results("label_panel", markdown(out, args), command=command("label_panel", argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
