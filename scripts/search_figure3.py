"""Search paper 000 Figure 3's four-row, three-candidate example (section 4.1).

The paper prints the numbers, not the pool.  This script enumerates every pool of
four rows and three candidates A, B, C whose rank weights each permute (7, 5, 3, 1)
(no confidence ties) with binary predictions and y = (1, 0, 0, 1), and keeps those
that reproduce every number of the caption and the text:

* risks (r_A, r_B, r_C) = (8, 15, 13), winner A; lower bounds against A (-13, -15);
* gains of rows {2, 3} = (16, 12), of rows {1, 2} = (16, 20);
* LP optimum (3/8, 1, 0, 0) with value 11/8 (unique), C(y) = 2 with witness {1, 2};
* static range reads rows 2, 3, 1, 4 and stops after three labels.

Pure-Python prefilter on the integer risks, then every survivor is checked through
certlib (`certlib.teaching.worked_examples.figure3_checks`).  The pool
`certlib.teaching.worked_examples.figure3_pool` hard-codes is the only survivor; run
``python scripts/search_figure3.py`` to list them all (tests/core/test_teaching.py re-runs
the search and checks the hard-coded pool is among them).
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

Y = (1, 0, 0, 1)
RISKS = (8, 15, 13)


def candidates(risk):
    """(weights, preds) of one candidate with the given integer risk at Y."""
    out = []
    for w in itertools.permutations((7, 5, 3, 1)):
        for p in itertools.product((0, 1), repeat=4):
            if sum(wi for wi, pi, yi in zip(w, p, Y) if pi != yi) == risk:
                out.append((w, p))
    return out


def search():
    from certlib.teaching.worked_examples import figure3_checks, pool_from_weights

    found = []
    per = [candidates(r) for r in RISKS]
    for a, b, c in itertools.product(*per):
        weights = (a[0], b[0], c[0])
        preds = (a[1], b[1], c[1])
        pool = pool_from_weights(preds, weights, labels=Y, names=("A", "B", "C"))
        if all(figure3_checks(pool).values()):
            found.append((weights, preds))
    return found


def main() -> int:
    found = search()
    for weights, preds in found:
        print("weights", weights, "preds", preds)
    print(f"{len(found)} pools reproduce every number")
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main())
