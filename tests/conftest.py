"""Shared small-pool generators for the brute-force, property and policy tests.

A *spec* is the raw input of a pool (plain lists, class values, confidences with
ties), so that reference implementations in the tests can work from the
definitions without going through certlib's own arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from certlib import Pool


KINDS = ("binary", "shared", "categorical")


@dataclass(frozen=True)
class Spec:
    kind: str
    preds: list  # K lists of n class values (identical lists for kind "shared")
    confs: list  # K lists of n confidences, ties likely
    labels: list  # n class values
    classes: tuple

    @property
    def K(self) -> int:
        return len(self.preds)

    @property
    def n(self) -> int:
        return len(self.labels)

    def pool(self, labels="full", **kw) -> Pool:
        """The certlib pool of this spec (labels="full", None for unread, or a list)."""
        lab = self.labels if labels == "full" else labels
        preds = self.preds[0] if self.kind == "shared" else self.preds
        return Pool.from_arrays(preds, self.confs, labels=lab, classes=self.classes, **kw)


def random_spec(rng: np.random.Generator, kind: str, n: int | None = None,
                K: int | None = None) -> Spec:
    """A random small pool: n <= 8 rows, K <= 4 candidates, confidence ties likely."""
    n = int(rng.integers(1, 9)) if n is None else n
    K = int(rng.integers(2, 5)) if K is None else K
    if kind == "binary":
        classes = (0, 1)
        preds = rng.integers(0, 2, size=(K, n))
    elif kind == "shared":
        classes = tuple(range(int(rng.integers(3, 5))))
        preds = np.broadcast_to(rng.integers(0, len(classes), size=n), (K, n))
    elif kind == "categorical":
        classes = (0, 1, 2)
        preds = rng.integers(0, 3, size=(K, n))
    else:
        raise ValueError(kind)
    # few distinct confidence levels, so that ties are frequent
    levels = int(rng.integers(1, n + 2))
    confs = rng.integers(0, levels, size=(K, n)).astype(float) / 4.0
    labels = rng.integers(0, len(classes), size=n)
    return Spec(kind, [[int(v) for v in row] for row in preds],
                [[float(v) for v in row] for row in confs],
                [int(v) for v in labels], classes)


@pytest.fixture
def make_spec():
    """The generator `random_spec(rng, kind, n=None, K=None)`."""
    return random_spec


@pytest.fixture
def server(tmp_path):
    """`streamlit run app.py` with its own label store, for one browser test (modules
    that share one server across their tests define their own ``server``)."""
    from browser_support import Server

    srv = Server(tmp_path / "labels.db")
    srv.start()
    yield srv
    srv.stop()


def prob_pool(seed: int, n: int = 30, K: int = 4, kind: str = "binary", labelled: bool = True,
              extra=None) -> Pool:
    """A pool whose confidences are probabilities of each candidate's own prediction."""
    rng = np.random.default_rng(seed)
    C = 2 if kind == "binary" else 3
    y = rng.integers(0, C, n)
    preds, confs = [], []
    shared = rng.integers(0, C, n)
    for _ in range(K):
        right = rng.random(n) < 0.75
        other = (y + rng.integers(1, C, n)) % C
        p = np.where(right, y, other) if kind != "shared" else shared
        preds.append(p)
        # a few distinct levels in [1/C, 1]: ties are frequent
        confs.append(np.round(1 / C + (1 - 1 / C) * rng.integers(0, 5, n) / 4, 3))
    preds = np.array(preds)
    return Pool.from_arrays(preds[0] if kind == "shared" else preds, np.array(confs),
                            labels=y if labelled else None, classes=tuple(range(C)), extra=extra)


@pytest.fixture(autouse=True)
def _full_error_details():
    """The shipped .streamlit/config.toml hides an uncaught exception's message and
    traceback from visitors (``client.showErrorDetails = "none"``), and AppTest reads it
    too: a page test still fails on the exception element, and this puts its message and
    traceback back into the failure report.  Only where a test has imported Streamlit."""
    import sys

    if "streamlit" not in sys.modules:
        yield
        return
    from streamlit import config

    before = config.get_option("client.showErrorDetails")
    config.set_option("client.showErrorDetails", "full")
    yield
    config.set_option("client.showErrorDetails", before)
