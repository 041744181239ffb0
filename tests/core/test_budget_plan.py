"""certlib.budget_map: every cell against an independent computation."""

from __future__ import annotations

import itertools
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import certlib
from certlib.planning.budget_plan import BudgetMap, budget_map_many, default_budgets
from certlib.errors import CertlibError
from certlib.core.pool import Pool

ROOT = Path(__file__).resolve().parents[2]
POOLS = ["sample_data/panels/wine_s0_tree_k4.csv", "sample_data/panels/wine_s1_logreg_k8.csv",
         "sample_data/teaching_k4.csv", "sample_data/demo_binary.csv"]
TOLS = (0, 0.001, 0.005, 0.02)


def _random_pool(seed, n=40, K=3):
    rng = np.random.default_rng(seed)
    preds = rng.integers(0, 2, size=(K, n))
    confs = np.round(rng.uniform(0.5, 1, size=(K, n)), 1)  # ties
    return certlib.Pool.from_arrays(preds, confs, labels=rng.integers(0, 2, size=n))


@pytest.mark.parametrize("path", POOLS)
@pytest.mark.parametrize("policy", ["static-range", "adaptive-pair-sum"])
def test_cells_equal_prelabel_and_budgeted_replay(path, policy):
    pool = certlib.load_pool(ROOT / path)
    m = certlib.budget_map(pool, TOLS, policy=policy)
    assert m.budgets == default_budgets(pool.n)
    for i, t in enumerate(TOLS):
        pre = certlib.prelabel_bound(pool, tolerance=t).prelabel_bound
        assert m.prelabel[i] == pre
        for b, cell in zip(m.budgets, m.cells[i]):
            r = certlib.replay(pool, policy=policy, tolerance=t, budget=b)
            want = "ruled_out" if b < pre else ("certified" if r.certified else "unresolved")
            assert cell == want, (t, b)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("policy", ["static-range", "adaptive-range", "expected-coverage",
                                    "model-selector", "random"])
def test_every_budget_on_small_pools(seed, policy):
    """Every budget 0..n, so the one-replay-per-tolerance shortcut is checked at each
    boundary, for stepped policies too."""
    pool = _random_pool(seed)
    m = certlib.budget_map(pool, (0, 0.01), budgets=range(pool.n + 1), policy=policy,
                           seed=seed)
    for i, t in enumerate((0, 0.01)):
        for b in range(pool.n + 1):
            r = certlib.replay(pool, policy=policy, tolerance=t, budget=b, seed=seed)
            pre = certlib.prelabel_bound(pool, tolerance=t).prelabel_bound
            want = "ruled_out" if b < pre else ("certified" if r.certified else "unresolved")
            assert m.cells[i][b] == want


def test_separate_rule_map():
    pool = certlib.load_pool(ROOT / POOLS[0])
    m = certlib.budget_map(pool, (0, 0.01), rule="separate")
    for i, t in enumerate((0, 0.01)):
        for b, cell in zip(m.budgets, m.cells[i]):
            r = certlib.replay(pool, rule="separate", tolerance=t, budget=b)
            if cell == "certified":
                assert r.certified
            elif cell == "unresolved":
                assert not r.certified


def test_unlabelled_rows_leave_every_open_cell_unresolved():
    pool = certlib.load_pool(ROOT / "sample_data/demo_binary.csv")
    lab = pool.labels.copy()
    lab[5] = -1
    m = certlib.budget_map(pool.with_labels(lab))
    assert m.labels_read is None and not m.labelled
    full = certlib.budget_map(pool)
    assert m.prelabel == full.prelabel
    for i in range(len(m.tolerances)):
        for b, cell in zip(m.budgets, m.cells[i]):
            # every label read certifies whatever they are (exact rule): only budget n
            # (the 170 labels known certify too, but no grid budget lies in 170..170)
            assert cell == ("ruled_out" if b < m.prelabel[i] else
                            "certified" if b >= pool.n else "unresolved")
    assert m.smallest_tolerance(pool.n) == 0 and m.smallest_tolerance(pool.n - 2) is None
    # the 170 known labels certify (tau = 0): a budget of 170 covers them
    assert m.known == 170 and m.certified_now[0] and m.smallest_tolerance(170) == 0
    assert m.cell(0, 170) == "certified" and m.cell(0, 169) == "unresolved"
    assert m.smallest_open_tolerance(pool.n) == 0
    # the separate and centered rules can end uncertified with every label read
    few = pool.labels.copy()
    few[:150] = -1  # 21 labels known: they certify nothing
    for rule in ("separate", "centered"):
        loose = certlib.budget_map(pool.with_labels(few), rule=rule)
        assert not any(loose.certified_now)
        assert loose.cells[0][-1] == "unresolved" and loose.smallest_tolerance(pool.n) is None


def test_budget_n_certifies_every_completion_of_a_small_unlabelled_pool():
    """The claim behind a certified budget-n cell on a pool with unread labels, checked by
    brute force: every labelling of random small pools (ties in the confidences
    included), every built-in policy, the exact rule: the replay certifies."""
    rng = np.random.default_rng(11)
    for _ in range(40):
        n, K = int(rng.integers(1, 7)), int(rng.integers(2, 4))
        preds = rng.integers(0, 2, (K, n))
        confs = rng.integers(0, 3, (K, n)).astype(float)
        hidden = Pool.from_arrays(preds, confs, labels=np.full(n, -1), classes=(0, 1))
        m = certlib.budget_map(hidden, tolerances=(0, 0.01), budgets=(n,))
        assert [row[0] for row in m.cells] == ["certified", "certified"]
        for bits in itertools.product((0, 1), repeat=n):
            pool = hidden.with_labels(np.array(bits))
            for policy in ("static-range", "adaptive-pair-sum", "random"):
                for t in (0, 0.01):
                    rep = certlib.replay(pool, policy=policy, tolerance=t)
                    assert rep.certified and rep.labels_read <= n


def test_known_labels_that_certify_make_their_budgets_certified():
    """A pool whose labels already known certify at a tolerance: every budget from their
    number on is certified (they count as read, as in the forecast; never amber with a
    forecast of 100%).  Checked against `Session.from_pool_labels` (online
    updates, not the map's batch bound) and by brute force: under every completion of
    the unread labels the candidate certified by the known labels is within the
    tolerance of the full-pool best.  Below their number, or when they do not certify,
    open cells stay unresolved."""
    rng = np.random.default_rng(23)
    certified_seen = 0
    for _ in range(80):
        n, K = int(rng.integers(2, 8)), int(rng.integers(2, 4))
        preds = rng.integers(0, 2, (K, n))
        confs = rng.integers(0, 3, (K, n)).astype(float)
        truth = rng.integers(0, 2, n)
        hide = rng.random(n) < 0.35
        if not hide.any():
            hide[int(rng.integers(n))] = True
        pool = Pool.from_arrays(preds, confs, labels=np.where(hide, -1, truth), classes=(0, 1))
        tols = (0, 0.01, 0.05)
        m = certlib.budget_map(pool, tolerances=tols, budgets=tuple(range(n + 1)))
        assert m.known == n - int(hide.sum())
        for i, t in enumerate(tols):
            s = certlib.Session.from_pool_labels(pool, tolerance=t)
            assert m.certified_now[i] == s.certified
            for b in range(n + 1):
                want = ("ruled_out" if b < m.prelabel[i] else
                        "certified" if b >= n or (s.certified and b >= m.known) else
                        "unresolved")
                assert m.cell(i, b) == want == m.cells[i][b]
            if not s.certified:
                continue
            certified_seen += 1
            sel = list(pool.names).index(s.selected)
            for bits in itertools.product((0, 1), repeat=int(hide.sum())):
                full = pool.labels.copy()
                full[hide] = bits
                obj = pool.with_labels(full).objective_values()
                assert obj[sel] - min(obj) <= m.tolerances[i]
    assert certified_seen >= 10  # the case is exercised


def _hand(labels_read, prelabel, certified=None):
    t = tuple(Fraction(x, 1000) for x in range(len(prelabel)))
    cert = certified or tuple(True for _ in prelabel)
    m = BudgetMap(n=100, policy="p", rule="shared", seed=0, tolerances=t, budgets=(0, 50, 100),
                  prelabel=tuple(prelabel), labels_read=labels_read,
                  certified=None if labels_read is None else cert, cells=())
    return m


def test_smallest_tolerance_hand_made():
    m = _hand((90, 70, 40), (30, 25, 20))
    assert m.smallest_tolerance(100) == 0
    assert m.smallest_tolerance(90) == 0
    assert m.smallest_tolerance(89) == Fraction(1, 1000)
    assert m.smallest_tolerance(70) == Fraction(1, 1000)
    assert m.smallest_tolerance(69) == Fraction(2, 1000)
    assert m.smallest_tolerance(39) is None
    assert m.smallest_open_tolerance(25) == Fraction(1, 1000)
    assert m.smallest_open_tolerance(19) is None
    # a replay that never certified (loose rule) fits no budget
    m = _hand((100, 70), (30, 25), certified=(False, True))
    assert m.smallest_tolerance(100) == Fraction(1, 1000)
    assert _hand(None, (30, 25)).smallest_tolerance(99) is None
    assert _hand(None, (30, 25)).smallest_tolerance(100) == 0  # every row read (n = 100)


def test_smallest_tolerance_is_the_first_certified_row():
    pool = certlib.load_pool(ROOT / POOLS[3])
    m = certlib.budget_map(pool)
    for b in range(0, pool.n + 1, 7):
        rows = [i for i in range(len(m.tolerances)) if m.cell(i, b) == "certified"]
        assert m.smallest_tolerance(b) == (m.tolerances[rows[0]] if rows else None)
        # monotone: a larger tolerance needs no more labels
        if rows:
            assert rows == list(range(rows[0], len(m.tolerances)))


def test_several_pools_and_folder(tmp_path):
    paths = [ROOT / p for p in POOLS[:3]]
    mm = certlib.budget_map(paths, TOLS)
    assert mm.names == tuple(p.stem for p in paths)
    counts = mm.counts()
    for i in range(len(TOLS)):
        for b, f in enumerate(mm.fractions):
            c = counts[i][b]
            assert sum(c.values()) == 3
            want = {"ruled_out": 0, "certified": 0, "unresolved": 0}
            for p in paths:
                pool = certlib.load_pool(p)
                single = certlib.budget_map(pool, TOLS)
                want[single.cell(i, f.numerator * pool.n // f.denominator)] += 1
            assert c == want
    small = mm.smallest_tolerances()
    assert len(small) == 3 and len(small[0]) == 11
    for k, p in enumerate(paths):
        pool = certlib.load_pool(p)
        single = certlib.budget_map(pool, TOLS)
        assert small[k][-1] == single.smallest_tolerance(pool.n)
    for p in paths:
        (tmp_path / p.name).write_bytes(p.read_bytes())
    (tmp_path / "notes.txt").write_text("not a pool")
    assert budget_map_many(tmp_path, TOLS).to_dict()["counts"] == mm.to_dict()["counts"]


def test_bad_input_names_the_parameter(tmp_path):
    pool = certlib.load_pool(ROOT / POOLS[0])
    with pytest.raises(CertlibError, match="budgets"):
        certlib.budget_map(pool, budgets=[pool.n + 1])
    with pytest.raises(CertlibError, match="tolerance"):
        certlib.budget_map(pool, tolerances=[-0.1])
    with pytest.raises(CertlibError, match="no pool file"):
        certlib.budget_map(tmp_path)
    with pytest.raises(CertlibError, match="policy"):
        certlib.budget_map(pool, policy="nope")


def test_to_dict_round_trips_through_json():
    import json

    pool = certlib.load_pool(ROOT / POOLS[0])
    d = json.loads(json.dumps(certlib.budget_map(pool).to_dict()))
    assert d["cells"][0][-1] == "certified"
    assert d["labels_read"][0] == certlib.replay(pool).labels_read


def test_a_broken_file_among_several_is_named(tmp_path):
    """Among several pools, the error says which file is broken (and nothing is mapped)."""
    import shutil

    from certlib import CertlibError, budget_map

    src = Path(__file__).resolve().parents[2] / "sample_data" / "panels" / "wine_s0_logreg_k4.csv"
    shutil.copy(src, tmp_path / "good.csv")
    (tmp_path / "broken.csv").write_text("row_id,pred_a,conf_a\n1,0,0.5\n")
    with pytest.raises(CertlibError, match="pool file 'broken.csv': only one candidate"):
        budget_map(tmp_path)
    with pytest.raises(CertlibError, match="pool file 'broken.csv'"):
        budget_map([src, tmp_path / "broken.csv"])
    (tmp_path / "broken.csv").write_text("")  # a message that names the file already:
    with pytest.raises(CertlibError) as exc:  # named once ("pool file 'x': pool file 'x'")
        budget_map(tmp_path)
    assert str(exc.value).count("broken.csv") == 1, str(exc.value)
