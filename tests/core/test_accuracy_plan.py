"""The labels the accuracy choice needs, beside AUGRC's (paper 000 section 6.2):
`certlib.accuracy_labels` against brute force on small pools.

The claims checked, each by enumerating every completion of the unread labels with the
independent references of ``tests/references.py`` (risks from the definitions, no
certlib formula):

* the disagreement rows settle the accuracy winner: for every labelling of them, every
  completion of the other rows has the same winner, and the library's stopping test
  certifies it after reading them;
* every count the plan claims for accuracy is at most D and truly settles the winner:
  the minimum certificate's witness and the rows a range or pair-sum replay reads fix
  the winner for every completion of the rest; the prelabel bound never exceeds the
  exhaustive minimum certificate;
* the rows counted as able to move AUGRC are exactly those whose label changes some
  risk difference, and the two statements about AUGRC on the disagreement rows (never
  settled whatever the labels; settled or not by the pool's labels) hold.
"""

from __future__ import annotations

import dataclasses
import itertools
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import certlib
from certlib.core.bounds import batch_lower, certified_mask, thresholds
from certlib.errors import ParameterError
from certlib.planning.accuracy_plan import (
    DISAGREEMENT_FIRST,
    disagreement_mask,
    movable_mask,
    with_objective,
)

from conftest import KINDS, random_spec
from references import MAX_COMPLETIONS, Ref

ROOT = Path(__file__).resolve().parents[2]


def _small_cases(kind, count, seed):
    """Random small specs whose every labelling can be enumerated."""
    for s in range(count):
        rng = np.random.default_rng([seed, KINDS.index(kind), s])
        spec = random_spec(rng, kind)
        while len(spec.classes) ** spec.n > MAX_COMPLETIONS // 4 or spec.n > 6:
            spec = random_spec(rng, kind, n=int(rng.integers(1, 6)))
        yield rng, spec


def _mostly_agreeing(rng, spec):
    """The spec with most rows turned into agreement rows (every candidate predicts as the
    first), as in the paper's pools, where disagreement rows are a fifth of a pool."""
    agree = rng.random(spec.n) < 0.7
    preds = [[p0 if a else p for p0, p, a in zip(spec.preds[0], row, agree)]
             for row in spec.preds]
    return dataclasses.replace(spec, preds=preds)


def _winners(ref, known):
    """The set of full-pool winners over every completion agreeing with ``known``."""
    return set(ref.winners(ref.risks(ref.completions(known))).tolist())


def _settles(ref, y, rows):
    """Whether the labels ``y`` on ``rows`` fix the winner for every completion."""
    return len(_winners(ref, {int(i): int(y[i]) for i in rows})) == 1


def _minimum_certificate(ref, y):
    """The fewest rows whose labels (from y) fix the winner, by trying every subset."""
    for size in range(ref.n + 1):
        for rows in itertools.combinations(range(ref.n), size):
            if _settles(ref, y, rows):
                return size
    raise AssertionError("every label read fixes the winner")


# ------------------------------------------------------------- the paper's examples
def test_figure_2_accuracy_and_augrc_pick_different_winners():
    """SPEC section 9, Figure 2: A and B disagree on rows 3 and 4 only; AUGRC's prelabel
    bound is 2 and C(y) = 3 (paper 000 section 4), its winner B; accuracy needs one of
    the two disagreement labels (row 4, where B errs and A does not) and picks A, which
    wins the tie of two errors each."""
    pool = certlib.load_pool(ROOT / "sample_data/figure2.csv")
    p = certlib.accuracy_labels(pool)
    assert (p.disagreement, p.disagreement_rows) == (2, (3, 4))
    assert (p.accuracy_prelabel, p.augrc_prelabel, p.augrc_movable) == (1, 2, 4)
    assert (p.accuracy_winner, p.augrc_winner) == ("A", "B")
    assert p.accuracy_certificate.exact and p.accuracy_certificate.upper == 1
    assert p.accuracy_certificate.witness == (4,)
    assert p.augrc_certificate.exact and p.augrc_certificate.upper == 3
    assert p.augrc_replay == 4 and p.accuracy_replay == 2
    assert not p.augrc_needs_more  # 2 labels are not above D = 2
    assert p.augrc_settled_by_disagreement is False
    assert p.disagreement_fraction == Fraction(1, 2)


def test_worst_case_accuracy_needs_no_label():
    """SPEC section 9, worst case: both predict 0 on every row, so C(0) = n - 1 for
    AUGRC while accuracy needs no label."""
    pool = certlib.load_pool(ROOT / "sample_data/worst_case.csv")
    p = certlib.accuracy_labels(pool)
    assert p.disagreement == 0 and p.accuracy_prelabel == 0
    assert p.accuracy_certificate.upper == 0 and p.accuracy_replay == 0
    assert p.augrc_certificate.upper == pool.n - 1
    assert p.augrc_needs_more and p.augrc_never_settled_by_disagreement


# ------------------------------------------------------------------ brute force
@pytest.mark.parametrize("kind", KINDS)
def test_disagreement_rows_settle_accuracy_for_every_completion(kind):
    """For every labelling of the disagreement rows, every completion of the other rows
    has one accuracy winner, and the exact test certifies it after reading them."""
    for _, spec in _small_cases(kind, 50, 1):
        ref = Ref(spec, objective="accuracy")
        pool = spec.pool(labels=None, objective="accuracy")
        rows = np.flatnonzero(disagreement_mask(pool))
        th = thresholds(pool.K, pool.scale)
        for vals in itertools.product(range(ref.C), repeat=rows.size):
            won = _winners(ref, dict(zip(rows.tolist(), vals)))
            assert len(won) == 1, (spec, vals)
            L = batch_lower(pool, rows, labels=np.array(vals, dtype=np.int64))
            assert np.flatnonzero(certified_mask(L, th)).tolist() == sorted(won)


@pytest.mark.parametrize("kind", KINDS)
def test_claimed_counts_settle_accuracy_and_never_exceed_disagreement(kind):
    """On every labelling y of small pools: prelabel <= C(y) <= D with C(y) found by
    trying every subset; the certificate's witness and every range or pair-sum replay
    read only rows that fix the winner for every completion of the rest, at most D."""
    tight = 0
    for rng, spec in _small_cases(kind, 30, 2):
        ref = Ref(spec, objective="accuracy")
        hidden = spec.pool(labels=None, objective="accuracy")
        plan = certlib.accuracy_labels(hidden)
        d = plan.disagreement
        assert plan.accuracy_prelabel <= d
        Y = ref.completions({})
        for m in rng.choice(Y.shape[0], size=min(5, Y.shape[0]), replace=False):
            y = Y[m]
            pool = hidden.with_labels(y)
            p = certlib.accuracy_labels(pool)
            c = _minimum_certificate(ref, y)
            assert plan.accuracy_prelabel <= c <= d, (spec, y.tolist())
            tight += plan.accuracy_prelabel == c
            cert = p.accuracy_certificate
            assert cert.lower <= c <= cert.upper <= d
            witness = [pool.position(r) for r in cert.witness]
            assert len(witness) == cert.upper and _settles(ref, y, witness)
            (won,) = _winners(ref, dict(enumerate(y.tolist())))
            assert p.accuracy_winner == pool.names[won] == cert.selected
            for policy in sorted(DISAGREEMENT_FIRST):
                r = certlib.replay(pool, policy=policy)
                read = [pool.position(x) for x in r.order]
                assert r.certified and r.labels_read <= d, (spec, y.tolist(), policy)
                assert set(read) <= set(np.flatnonzero(disagreement_mask(pool)).tolist())
                assert _settles(ref, y, read) and r.selected == pool.names[won]
    assert tight > 0


@pytest.mark.parametrize("kind", KINDS)
def test_movable_rows_are_those_whose_label_changes_a_difference(kind):
    """A row is movable exactly when two labellings differing on it alone change some
    r_j - r_k (both objectives); for accuracy these are the disagreement rows."""
    for _, spec in _small_cases(kind, 30, 3):
        for objective in ("augrc", "accuracy"):
            ref = Ref(spec, objective=objective)
            pool = spec.pool(labels=None, objective=objective)
            R = ref.risks(ref.completions({}))  # rows of Y in product order
            diffs = (R[:, :, None] - R[:, None, :]).reshape(R.shape[0], -1)
            shape = (ref.C,) * ref.n
            moves = []
            for i in range(ref.n):
                by_row = np.moveaxis(diffs.reshape(*shape, -1), i, 0)
                moves.append(bool((by_row != by_row[:1]).any()))
            assert movable_mask(pool).tolist() == moves, (spec, objective)
            if objective == "accuracy":
                assert moves == disagreement_mask(pool).tolist()


@pytest.mark.parametrize("kind", KINDS)
def test_what_the_disagreement_rows_say_about_augrc(kind):
    """``augrc_never_settled_by_disagreement``: for every labelling of the disagreement
    rows two completions have different AUGRC winners.  ``augrc_settled_by_disagreement``:
    whether the pool's own labels there fix the AUGRC winner."""
    never_seen = settled_seen = 0
    for rng, spec in _small_cases(kind, 60, 4):
        if rng.random() < 0.5:
            spec = _mostly_agreeing(rng, spec)
        ref = Ref(spec)
        pool = spec.pool()
        p = certlib.accuracy_labels(pool, hindsight=False)
        rows = np.flatnonzero(disagreement_mask(pool)).tolist()
        y = np.array(spec.labels)
        assert p.augrc_settled_by_disagreement == _settles(ref, y, rows), spec
        if p.augrc_never_settled_by_disagreement:
            never_seen += 1
            for vals in itertools.product(range(ref.C), repeat=len(rows)):
                assert len(_winners(ref, dict(zip(rows, vals)))) > 1, (spec, vals)
        settled_seen += bool(p.augrc_settled_by_disagreement)
        assert p.augrc_prelabel <= p.augrc_movable
        assert _settles(ref, y, np.flatnonzero(movable_mask(with_objective(pool, "augrc"))))
        # a disagreement row without a label leaves the pool's own verdict unknown
        if rows:
            lab = pool.labels.copy()
            lab[rows[0]] = -1
            assert certlib.accuracy_labels(pool.with_labels(lab)).augrc_settled_by_disagreement \
                is None
    assert never_seen > 0 and settled_seen > 0


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(KINDS),
       n=st.integers(1, 30), K=st.integers(2, 5))
def test_accuracy_counts_are_ordered(seed, kind, n, K):
    """On any pool: prelabel <= D under accuracy, D = the accuracy pool's movable rows,
    AUGRC's prelabel <= its movable rows <= n, and on a labelled pool the accuracy
    certificate and a range or pair-sum replay sit within [prelabel, D]."""
    spec = random_spec(np.random.default_rng(seed), kind, n=n, K=K)
    pool = spec.pool()
    p = certlib.accuracy_labels(pool)
    d = p.disagreement
    assert p.accuracy_prelabel <= d == int(movable_mask(with_objective(pool, "accuracy")).sum())
    assert p.augrc_prelabel <= p.augrc_movable <= p.n
    assert p.augrc_needs_more == (p.augrc_prelabel > d)
    assert p.accuracy_prelabel <= p.accuracy_certificate.lower
    assert p.accuracy_certificate.upper <= d and p.accuracy_replay <= d
    assert p.augrc_prelabel <= p.augrc_certificate.lower
    if kind == "shared":  # one prediction: accuracy ties every candidate, the first wins
        assert d == 0 and p.accuracy_winner == pool.names[0]


# ------------------------------------------------------------------ the API
def test_either_objective_gives_the_same_plan():
    path = ROOT / "sample_data/demo_binary.csv"
    aug = certlib.load_pool(path)
    acc = certlib.load_pool(path, objective="accuracy")
    assert certlib.accuracy_labels(aug).to_dict() == certlib.accuracy_labels(acc).to_dict()
    # the recomputed weights are the ones a pool read with that objective has
    made = with_objective(aug, "accuracy")
    assert made.objective == "accuracy" and not made.weights.flags.writeable
    assert np.array_equal(made.weights, acc.weights)
    assert made.content_hash == acc.content_hash
    assert with_objective(acc, "augrc").content_hash == aug.content_hash
    assert with_objective(aug, "augrc") is aug


def test_unlabelled_pool_has_no_hindsight_and_a_bad_policy_is_named():
    pool = certlib.load_pool(ROOT / "sample_data/demo_unlabelled.csv")
    p = certlib.accuracy_labels(pool)
    assert p.accuracy_replay is p.augrc_replay is p.accuracy_certificate is None
    assert p.accuracy_winner is None and p.augrc_settled_by_disagreement is None
    assert p.to_dict()["accuracy_certificate"] is None
    assert not certlib.accuracy_labels(pool, policy="random").policy_within_disagreement
    with pytest.raises(ParameterError, match="policy"):
        certlib.accuracy_labels(pool, policy="no-such-policy")


# ------------------------------------------------------------------ the budget map
@pytest.mark.parametrize("kind", KINDS)
def test_accuracy_map_cells_certain_from_the_disagreement_rows(kind):
    """Under accuracy, a range or pair-sum policy started from the labels already known
    stops, under every completion of the others, within the known labels plus the unread
    disagreement rows, having read nothing else: the map's ``certain_from`` cells are
    certified whatever the labels (paper 000 section 6.2).  The other policies keep
    budget n."""
    for rng, spec in _small_cases(kind, 25, 5):
        hidden_rows = rng.random(spec.n) < 0.7
        labels = [None if h else v for h, v in zip(hidden_rows, spec.labels)]
        pool = spec.pool(labels=labels, objective="accuracy")
        dis = disagreement_mask(pool)
        want = int((~hidden_rows).sum()) + int((dis & hidden_rows).sum())
        hidden = np.flatnonzero(hidden_rows)
        for policy in sorted(DISAGREEMENT_FIRST):
            for tau in (0, 0.2):
                m = certlib.budget_map(pool, (tau,), budgets=range(spec.n + 1), policy=policy)
                if not hidden.size:
                    continue  # a labelled pool: the replay decides every cell
                assert m.certain_from == want
                assert set(m.cells[0][want:]) <= {"certified"}
                for vals in itertools.product(range(len(spec.classes)), repeat=hidden.size):
                    s = certlib.Session.from_pool_labels(pool, policy=policy, tolerance=tau)
                    while not s.done:
                        r = s.next_row()
                        assert dis[r], (spec, policy, r)
                        s = s.observe(r, spec.classes[vals[list(hidden).index(r)]])
                    assert s.certified and s.t <= want, (spec, policy, vals)
        if hidden.size:
            other = certlib.budget_map(pool, (0,), budgets=(spec.n,), policy="random")
            assert other.certain_from is None
            assert certlib.budget_map(pool, (0,), budgets=(spec.n,), policy=policy,
                                      rule="separate").certain_from is None
    augrc = certlib.load_pool(ROOT / "sample_data/demo_unlabelled.csv")
    assert certlib.budget_map(augrc, (0,), budgets=(10,)).certain_from is None


def test_the_numbers_docs_planning_quotes():
    """docs/planning.md's table of the shipped sample pools is what the library computes."""
    text = (ROOT / "docs/planning.md").read_text()
    section = text[text.index("## Accuracy beside AUGRC"):text.index("## The forecast")]
    rows = [ln for ln in section.splitlines() if ln.startswith("| `") and ".csv`" in ln]
    assert len(rows) == 5
    for row in rows:
        name, *numbers = [c.strip().strip("`") for c in row.strip("|").split("|")]
        p = certlib.accuracy_labels(certlib.load_pool(ROOT / "sample_data" / name))
        assert [int(x) for x in numbers] == [
            p.n, p.K, p.disagreement, p.accuracy_prelabel, p.augrc_prelabel,
            p.accuracy_certificate.upper, p.augrc_certificate.upper], name
        assert p.accuracy_certificate.exact and p.augrc_certificate.exact
