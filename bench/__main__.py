"""``python -m bench NAME [args]``: run one benchmark; ``python -m bench`` lists them.

Each bench prints its figures and writes ``docs/results/*.md`` (see `bench.results`).
``python -m bench NAME --help`` gives a bench's options.  Run one bench at a time: the
timings assume the machine is otherwise idle.
"""

from __future__ import annotations

import importlib
import sys

# name -> (module, what it measures, results files it writes)
BENCHES: dict[str, tuple[str, str, str]] = {
    "core": ("bench_core", "speed of the prelabel bound, replay, certificate and a "
             "session step at n = 10,000 and 1,000,000", "core_speed.md"),
    "scale": ("bench_scale", "many candidates: the prelabel bound and every policy's replay "
              "at K = 64 and K = 8 against the sort limit", "scale.md"),
    "certificate": ("bench_certificate", "minimum certificates: proofs on the 36 panel "
                    "pools, speed on a synthetic n = 10,000 pool", "certificate.md"),
    "certify_milp": ("bench_certify_milp", "certify against HiGHS's MILP on 84 panel pools "
                     "and random K = 32, 64 pools", "certify_milp.md"),
    "policies": ("bench_policies", "expected-coverage vs adaptive pair-sum on the 36 "
                 "shipped panels (in-sample), and its cost", "policies.md"),
    "policies_holdout": ("bench_policies_holdout", "the same on held-out panel pools and "
                         "on iid-error synthetic pools", "policies_holdout_SPLITS.md"),
    "coverage_regret": ("bench_coverage_regret", "the saving left by expected-coverage's "
                        "regret guard", "coverage_regret.md"),
    "coverage_variants": ("bench_coverage_variants", "expected-coverage variants on a "
                          "folder of panel pools", "coverage_variants_SPLITS.md"),
    "audit": ("bench_audit", "Discern audit: speed, labels to verdict against uniform "
              "labelling, the routing probability pi", "audit.md"),
    "audit_project": ("bench_audit_project", "audit projects: append, status, one label; "
                      "the shipped stream's verdicts", "audit_project.md"),
    "audit_latency": ("bench_audit_latency", "key press to next item in the Audit page "
                      "(Chromium)", "audit_latency.md"),
    "forecast": ("bench_forecast", "speed of the label forecast and the budget map",
                 "forecast.md"),
    "forecast_holdout": ("bench_forecast_holdout", "calibration of the label forecast on "
                         "panel pools", "forecast_holdout_SPLITS.md"),
    "forecast_calibration": ("bench_forecast_calibration", "the forecast's calibrated 80% "
                             "interval: margins fitted on seen panel pools, coverage on "
                             "fresh ones", "forecast_calibration.md"),
    "forecast_ceiling": ("bench_forecast_ceiling", "the forecast against hindsight label "
                         "models (a ceiling)", "forecast_ceiling_SPLITS.md"),
    "live_forecast": ("bench_live_forecast", "the Label page's live forecast: a key press's "
                      "cost beside it, and its age", "live_forecast.md"),
    "label_errors": ("bench_label_errors", "label-error margins, fragility and the e-error "
                     "stopping rule on the 36 panels", "label_errors.md"),
    "label_panel": ("bench_label_panel", "the Label page's panel in Chromium: latency, "
                    "paced and double presses, a killed server", "label_panel.md"),
    "teach_step": ("bench_teach_step", "one Step by key press on the Teach pages "
                   "(Chromium, idle and busy)", "teach_step.md"),
    "theory": ("bench_theory", "the Theory explorer's numbers and its speed", "theory.md"),
}


def usage() -> str:
    width = max(map(len, BENCHES))
    lines = ["usage: python -m bench NAME [args]   (python -m bench NAME --help)", "",
             "benches (results in docs/results/):"]
    for name, (_, purpose, files) in BENCHES.items():
        lines.append(f"  {name:<{width}}  {purpose} [{files}]")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help", "list"):
        print(usage())
        return 0
    name, rest = argv[0], argv[1:]
    if name not in BENCHES:
        print(f"unknown bench {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    mod = importlib.import_module(f"bench.{BENCHES[name][0]}")
    sys.argv = [f"python -m bench {name}", *rest]
    return int(mod.main(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
