"""Compare two generated pool files by what the protocol fixes.

Sample pools are written by our generator from scikit-learn models.  The
protocol fixes column names, row ids, labels and predictions exactly; the
confidences are floats from a third-party library whose last bits move between
releases (scikit-learn 1.9.1 changed ...191761 to ...191763), so they are
compared to a stated tolerance, never byte for byte.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

CONF_ATOL = 1e-9


def assert_same_pool_file(made: Path, shipped: Path, conf_atol: float = CONF_ATOL) -> None:
    a, b = pl.read_csv(made), pl.read_csv(shipped)
    assert a.columns == b.columns, (made.name, a.columns, b.columns)
    assert a.height == b.height, (made.name, a.height, b.height)
    for col in a.columns:
        x, y = a[col].to_numpy(), b[col].to_numpy()
        if col.startswith(("conf_", "prob_")):
            assert np.allclose(x, y, rtol=0, atol=conf_atol), \
                f"{made.name}: column {col} differs by {np.max(np.abs(x - y))} > {conf_atol}"
        else:
            assert a[col].equals(b[col]), f"{made.name}: column {col} differs"
