"""Discern audit (paper 002): speed, and the labelling economics the manual quotes.

    python -m bench audit                  # every section
    python -m bench audit --only tolerance --only routing   # some sections
    python -m bench audit --no-timing      # all but the timing (idle machine for that)
    python -m bench audit --streams 10 --pi-streams 20   # a quicker, noisier run

Timing: one audit of a 1,000,000-item stream with both tiers running to the end, and the
PrPl-EB confidence sequence alone on 1,000,000 points (medians of 7).  Economics, on
seeded simulated streams (`certlib.audit.synthetic_stream`, Delta = 0): the median
labels to a verdict at eps = 0.02 per disagreement rate rho, against uniform labelling
on the same streams and confidence sequence (`certlib.audit.compare_baselines`), fits
in rho and rho^2, the ratio at eps = 0.05.  Tolerance: rho = eps/2, eps and 2 eps at
eps = 0.01, the default Tier-1 start (``tier1_from`` = 1/2) against the old one (1)
and uniform labelling.  Routing: the routing probability pi's effect on labels and
traffic, with the floor pi_min = pi (the default) and with the floor fixed at 0.1 (the
paper's ablation, section 6.3: pi = 1 spent 671 labels where pi = 0.5 spent 327).
Confidence: Tier 1 on PrPl-EB against the betting confidence sequence
(`certlib.audit.betting`) on the same streams (the paper's rates and tolerance, and a
regression): labels, verdicts, time; and validity (500 streams at Delta = eps).
Writes ``docs/results/audit.md``, one section per part, each replaced only by a run
that measures it.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from certlib.audit import audit, compare_baselines, prpl_eb, synthetic_stream

from .results import command, table, write_results

SECTIONS = ("timing", "economics", "tolerance", "routing", "confidence")
RHOS = (0.03, 0.04, 0.05, 0.06, 0.08, 0.10, 0.12)


def timing(repeats: int = 7) -> str:
    n = 1_000_000
    f, g, y = synthetic_stream(n, rho=0.05, regression=0.0, seed=0)
    x = np.random.default_rng(1).random(n)
    cs_t, au_t = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        prpl_eb(x)
        cs_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        # epsilon tiny: no verdict, so both tiers run over all 1,000,000 items
        r = audit(f, g, y, epsilon=1e-4, run_to_end=True)
        au_t.append(time.perf_counter() - t0)
    cs, au = float(np.median(cs_t)), float(np.median(au_t))
    print(f"prpl_eb, 1,000,000 points: median {cs:.3f} s over {repeats} runs")
    print(f"audit, 1,000,000 items (both tiers to the end, {r.labels_used} labels): "
          f"median {au:.3f} s over {repeats} runs")
    return (f"One audit of a 1,000,000-item stream (rho = 0.05, both tiers to the end): median "
            f"**{au:.2f} s** over {repeats} runs ({r.labels_used:,} labels); the confidence "
            f"sequence alone on 1,000,000 points: {cs:.2f} s.")


def _labels(rho: float, eps: float, streams: int, seed0: int) -> tuple[float, float, float]:
    """Median Discern labels, median uniform labels, median per-stream ratio."""
    lab, uni = [], []
    for s in range(streams):
        f, g, y = synthetic_stream(200_000, rho=rho, regression=0.0, seed=seed0 + s)
        c = compare_baselines(f, g, y, epsilon=eps, seed=s).by_method()
        lab.append(c["discern"].labels_used)
        uni.append(c["uniform"].labels_used)
    return (float(np.median(lab)), float(np.median(uni)),
            float(np.median(np.array(lab) / np.array(uni))))


def _fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    b, a = np.polyfit(x, y, 1)
    r2 = 1 - np.sum((y - (a + b * x)) ** 2) / np.sum((y - np.mean(y)) ** 2)
    return float(a), float(b), float(r2)


def _num(x: float) -> str:
    return f"{x:.1f}".removesuffix(".0")


def economics(streams: int) -> str:
    eps = 0.02
    rows, med, ratio, uni = [], [], [], []
    for i, rho in enumerate(RHOS):
        m, u, q = _labels(rho, eps, streams, 500 + 1000 * i)
        med.append(m)
        uni.append(u)
        ratio.append(q)
        rows.append([f"{rho:.2f}", _num(m), _num(u), f"{q:.3f}", f"{1 / q:.0f}"])
        print(f"rho={rho:.2f}  discern median labels {m:7.1f}  uniform {u:7.1f}  "
              f"median per-stream ratio {q:.3f}", flush=True)
    rhos, y = np.array(RHOS), np.array(med)
    a1, b1, r1 = _fit(rhos, y)
    a2, b2, r2 = _fit(rhos ** 2, y)
    a3, b3, r3 = _fit(rhos, np.array(ratio))
    print(f"labels ~ {a1:.1f} + {b1:.1f} * rho:  R^2 = {r1:.4f}")
    print(f"labels ~ {a2:.1f} + {b2:.1f} * rho^2:  R^2 = {r2:.4f}")
    print(f"ratio to uniform ~ {a3:.4f} + {b3:.3f} * rho:  R^2 = {r3:.4f}")
    wide = []
    for j, rho in enumerate((0.1, 0.2, 0.3, 0.4)):
        m, u, q = _labels(rho, 0.05, streams, 20_000 + 1000 * j)
        wide.append(f"{q:.2f} at rho = {rho:.1f}")
        print(f"eps=0.05 rho={rho}: discern {m:.1f}, uniform {u:.1f}, ratio {q:.3f}", flush=True)
    return "\n".join([
        f"Labels to a verdict, Delta = 0, eps = 0.02, medians over {streams} seeded streams "
        "of 200,000 items, against uniform labelling on the same streams and confidence "
        "sequence:", "",
        table(["rho", "Discern labels", "uniform labels", "ratio (median per stream)",
               "times fewer"], rows), "",
        f"A linear fit, labels = {a1:.0f} + {b1:.0f} rho, has R^2 = {r1:.2f}; a fit in "
        f"rho^2 has R^2 = {r2:.2f} (the paper's rho^2/eps^2 rate). The ratio to uniform "
        f"is close to linear in rho: {a3:.3f} + {b3:.3f} rho, R^2 = {r3:.2f}. At eps = 0.05 "
        f"the ratio is {', '.join(wide)}."])


def tolerance(streams: int) -> str:
    """Streams at the tolerance: when Tier 1 starts decides whether they end."""
    eps, n = 0.01, 300_000
    rows = []
    for k, mult in enumerate((0.5, 1.0, 2.0)):
        got: dict[str, list[float]] = {"new": [], "old": [], "uniform": []}
        ended = {"new": 0, "old": 0}
        for s in range(streams):
            f, g, y = synthetic_stream(n, rho=mult * eps, regression=0.0,
                                       seed=30_000 + 1000 * k + s)
            b = compare_baselines(f, g, y, epsilon=eps, seed=s).by_method()
            for key, r in (("new", b["discern"]),
                           ("old", audit(f, g, y, epsilon=eps, seed=s, tier1_from=1.0))):
                done = r.verdict != "continue"
                ended[key] += done
                got[key].append(r.labels_used if done else np.inf)
            u = b["uniform"]
            got["uniform"].append(u.labels_used if u.verdict != "continue" else np.inf)
        med = {k_: float(np.median(v)) for k_, v in got.items()}
        rows.append([f"{mult:g} eps", f"{ended['new']} of {streams}", _num(med["new"]),
                     f"{ended['old']} of {streams}",
                     _num(med["old"]) if np.isfinite(med["old"]) else "none",
                     _num(med["uniform"])])
        print(f"rho={mult} eps: default ended {ended['new']}/{streams}, median "
              f"{med['new']}; old rule ended {ended['old']}/{streams}, median {med['old']}; "
              f"uniform {med['uniform']}", flush=True)
    return "\n".join([
        f"Streams at the tolerance, eps = 0.01, Delta = 0, {streams} seeded streams of "
        f"{n:,} items per rate: audits that reached a verdict and their median labels "
        "(a stream without a verdict counts as infinitely many), with Tier 1 starting "
        "once Tier 0 shows B rho >= eps/2 (the default) and once it shows B rho >= eps "
        "(the old rule), against uniform labelling on the same streams:", "",
        table(["rho", "default: verdicts", "labels", "old rule: verdicts", "labels",
               "uniform labels"], rows)])


def routing(pi_streams: int) -> str:
    """The routing probability's effect, with the default floor and the paper's."""
    pis = (0.1, 0.25, 0.5, 1.0)
    pi_rows = []
    for rho, eps_, n in ((0.08, 0.02, 100_000), (0.3, 0.05, 40_000)):
        for floor in (None, 0.1):
            lab_m, item_m = [], []
            for pi in pis:
                lab, items = [], []
                for s in range(pi_streams):
                    f, g, y_ = synthetic_stream(n, rho=rho, regression=0.0, seed=1000 + s)
                    r = audit(f, g, y_, epsilon=eps_, pi=pi, seed=s,
                              pi_min=pi if floor is None else min(floor, pi))
                    lab.append(r.labels_used)
                    items.append(r.stopping_time or n)
                lab_m.append(_num(float(np.median(lab))))
                item_m.append(f"{float(np.median(items)):,.0f}")
                print(f"rho={rho} eps={eps_} floor={floor or 'pi'} pi={pi}: median labels "
                      f"{np.median(lab):.1f}, median items {np.median(items):.0f}", flush=True)
            pi_rows.append([f"rho = {rho}, eps = {eps_}",
                            "pi (default)" if floor is None else str(floor),
                            " / ".join(lab_m), " / ".join(item_m)])
    return "\n".join([
        f"The routing probability pi ({pi_streams} streams each, Delta = 0; labels and "
        "items to the verdict, medians, at pi = 0.1 / 0.25 / 0.5 / 1). Tier 1's "
        "increments lie in [-c, c] with c = B / pi_min: with the floor pi_min = pi (the "
        "default for a constant pi) a larger pi narrows that range as much as it raises "
        "the share of disagreements labelled, so labels hardly move and the traffic falls "
        "like 1/pi; with the floor fixed at 0.1, as in the paper's ablation, the range "
        "stays wide and labelling every disagreement costs about twice the labels of "
        "pi = 0.5, as the paper reports (671 against 327):", "",
        table(["streams", "floor pi_min", "labels", "items"], pi_rows)])


CONFIDENCE_CASES = ((0.03, 0.0), (0.05, 0.0), (0.08, 0.0), (0.12, 0.0), (0.08, 0.04),
                    (0.2, 0.1))


def confidence(streams: int) -> str:
    """Tier 1 on PrPl-EB against the betting CS, on the same streams."""
    eps, n = 0.02, 200_000
    rows = []
    for k, (rho, reg) in enumerate(CONFIDENCE_CASES):
        lab: dict[str, list[int]] = {"prpl-eb": [], "betting": []}
        secs = {"prpl-eb": 0.0, "betting": 0.0}
        same = 0
        for s in range(streams):
            f, g, y = synthetic_stream(n, rho=rho, regression=reg, seed=40_000 + 1000 * k + s)
            verdicts = set()
            for cs in lab:
                t0 = time.perf_counter()
                r = audit(f, g, y, epsilon=eps, seed=s, confidence=cs)
                secs[cs] += time.perf_counter() - t0
                lab[cs].append(r.labels_used)
                verdicts.add(r.verdict)
            same += len(verdicts) == 1
        ratio = float(np.median(np.array(lab["betting"]) / np.maximum(lab["prpl-eb"], 1)))
        rows.append([f"{rho:g}", f"{reg:g}", _num(float(np.median(lab["prpl-eb"]))),
                     _num(float(np.median(lab["betting"]))), f"{ratio:.2f}",
                     f"{same} of {streams}",
                     f"{secs['prpl-eb'] / streams:.2f} / {secs['betting'] / streams:.2f}"])
        print(f"rho={rho} Delta={reg}: {rows[-1]}", flush=True)
    runs, false = 500, {"prpl-eb": 0, "betting": 0}
    for s in range(runs):
        f, g, y = synthetic_stream(8000, rho=0.25, regression=0.05, seed=90_000 + s)
        for cs in false:
            false[cs] += audit(f, g, y, epsilon=0.05, seed=s, confidence=cs).verdict == "safe"
    print(f"false safe at Delta = eps: {false} of {runs}", flush=True)
    return "\n".join([
        f"Tier 1 on PrPl-EB against the betting confidence sequence (Waudby-Smith and Ramdas's "
        "hedged capital process, predictable bets aimed at the two verdicts' points, Delta = 0 "
        f"and Delta = eps), eps = {eps}, {streams} seeded streams of {n:,} items per row "
        "(seeds never used while the bets were chosen), the same streams and labelling draws "
        "for both: median labels to the verdict, the median per-stream ratio of betting's "
        "labels to PrPl-EB's, how many streams got the same verdict, and seconds per audit "
        "(PrPl-EB / betting):", "",
        table(["rho", "Delta", "PrPl-EB labels", "betting labels", "ratio",
               "same verdict", "s per audit"], rows), "",
        f"Validity, {runs} streams at Delta = eps = 0.05 (rho = 0.25, 8,000 items): a "
        f"false *safe* on {false['prpl-eb']} with PrPl-EB and {false['betting']} with "
        "betting (delta = 0.05)."])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-timing", action="store_true", help="skip the 1,000,000-item timing")
    ap.add_argument("--no-economics", action="store_true",
                    help="skip every section but the timing")
    ap.add_argument("--only", action="append", choices=SECTIONS,
                    help="run this section (repeatable); default: every section")
    ap.add_argument("--streams", type=int, default=40, help="streams per rho (default 40)")
    ap.add_argument("--pi-streams", type=int, default=100,
                    help="streams per pi (default 100)")
    args = ap.parse_args(argv)
    run = set(args.only or SECTIONS)
    if args.no_timing:
        run.discard("timing")
    if args.no_economics:
        run &= {"timing"}
    parts = {"timing": timing, "economics": lambda: economics(args.streams),
             "tolerance": lambda: tolerance(max(args.streams // 2, 1)),
             "routing": lambda: routing(args.pi_streams),
             "confidence": lambda: confidence(max(args.streams // 2, 1))}
    for name in SECTIONS:
        if name in run:
            write_results("audit", parts[name](), command=command("audit", argv),
                          section=name, order=SECTIONS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
