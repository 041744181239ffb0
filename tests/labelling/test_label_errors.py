"""Label-error margin, full-pool fragility and the stopping rule that survives e wrong
labels (`certlib.labelling.label_errors`).

The brute force works from the definitions (test_bruteforce's reference risks): the
selected candidate is certified after reading O when it is the winner (within tau: within
T of the best) for every completion of the unread rows; every subset of at most three
read rows and every choice of other classes for them is tried.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from certlib import Session, full_pool_fragility, label_error_margin, replay
from certlib.core.bounds import batch_lower, certified_mask, thresholds
from certlib.cli import main
from certlib.errors import CertlibError
from certlib.labelling.label_errors import flip_drops, top_drop_sums
from certlib.core.pair_terms import gain_terms
from certlib.core.weights import tolerance_units

from conftest import KINDS, random_spec
from references import Ref

SETTINGS = dict(derandomize=True, deadline=None)


# ------------------------------------------------------------------ reference side
def ref_certified(ref, k, y, read, T=None) -> bool:
    """Definition (SPEC section 1): k wins (ties: earlier wins) for every completion of the
    rows outside ``read`` with labels ``y`` on ``read``; with T: k within T of the best."""
    Y = ref.completions({i: int(y[i]) for i in read})
    R = ref.risks(Y)
    if T is None:
        return bool((ref.winners(R) == k).all())
    return bool((R[:, k] <= R.min(axis=1) + T).all())


def undoing_sets(ref, k, y, read, T=None, max_size=3):
    """{size: list of (rows, new labels)} of every flip set up to ``max_size`` (every
    other class for every row of the set) after which k is no longer certified."""
    out = {}
    for size in range(1, max_size + 1):
        for S in itertools.combinations(read, size):
            alts = [[c for c in range(ref.C) if c != y[i]] for i in S]
            for new in itertools.product(*alts):
                y2 = list(y)
                for i, c in zip(S, new):
                    y2[i] = c
                if not ref_certified(ref, k, y2, read, T):
                    out.setdefault(size, []).append((S, new))
        if size in out:
            break  # only the smallest size is needed
    return out


def small_cases(kind, count, seed0, max_unread=3):
    for s in range(count):
        rng = np.random.default_rng([seed0, KINDS.index(kind), s])
        spec = random_spec(rng, kind, n=int(rng.integers(2, 7)), K=int(rng.integers(2, 4)))
        ref = Ref(spec)
        order = [int(i) for i in rng.permutation(spec.n)]
        m = int(rng.integers(max(0, spec.n - max_unread), spec.n + 1))
        yield rng, spec, ref, order[:m]


# ------------------------------------------------------------------ brute force
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("tau", [0.0, 0.04])
def test_margin_rows_and_critical_rows_match_brute_force(kind, tau):
    """flips = the smallest undoing flip set (sizes up to 3, every other class); the rows
    reported with their new labels undo the certificate; `critical` = every row of some
    smallest undoing set; not certified -> flips 0; None -> nothing up to 3 undoes it."""
    seen = {"certified": 0, "sizes": set()}
    for _rng, spec, ref, read in small_cases(kind, 70, 14):
        pool = spec.pool()
        m = label_error_margin(pool, read, tolerance=tau)
        k = pool.names.index(m.selected)
        T = tolerance_units(thresholds(pool.K, pool.scale, rule="shared", tolerance=tau).tolerance,
                            pool.scale) if tau else None
        y = list(spec.labels)
        assert m.certified == ref_certified(ref, k, y, read, T)
        assert m.labels_read == len(read)
        if not m.certified:
            assert (m.flips, m.rows, m.critical) == (0, (), ())
            continue
        seen["certified"] += 1
        sets = undoing_sets(ref, k, y, read, T)
        if not sets:
            assert m.flips is None or m.flips > 3
            continue
        size = min(sets)
        seen["sizes"].add(size)
        assert m.flips == size
        assert len(m.rows) == size and set(m.rows) <= set(read)
        assert m.row_ids == pool.ids_of(m.rows)
        y2 = list(y)
        for i, c in zip(m.rows, m.labels_to):
            y2[i] = spec.classes.index(c)
            assert y2[i] != y[i]
        assert not ref_certified(ref, k, y2, read, T)
        assert set(m.critical) == {i for S, _ in sets[size] for i in S}
    assert seen["certified"] >= 15 and seen["sizes"] >= {1, 2}, seen


@pytest.mark.parametrize("kind", KINDS)
def test_full_pool_fragility_is_fewest_flips_that_change_the_winner(kind):
    """With every label known, the fragility is the fewest wrong labels (every other class)
    after which the full-pool winner is not the winner (tie rule included)."""
    found = set()
    for s in range(60):
        rng = np.random.default_rng([15, KINDS.index(kind), s])
        spec = random_spec(rng, kind, n=int(rng.integers(2, 7)))
        ref, pool = Ref(spec), spec.pool()
        f = full_pool_fragility(pool)
        w = pool.winner()
        assert f.certified and f.selected == pool.names[w] and f.labels_read == pool.n
        best = None
        for size in range(1, 4):
            for S in itertools.combinations(range(spec.n), size):
                for new in itertools.product(*[[c for c in range(ref.C) if c != spec.labels[i]]
                                               for i in S]):
                    y2 = np.array(spec.labels)
                    y2[list(S)] = new
                    if ref.winners(ref.risks(y2[None, :]))[0] != w:
                        best = size
                        break
                if best:
                    break
            if best:
                break
        assert f.flips == best if best else (f.flips is None or f.flips > 3)
        found.add(best)
    assert {1, 2} <= found


# ------------------------------------------------------------------ properties
@st.composite
def read_pools(draw, max_n=8):
    kind = draw(st.sampled_from(KINDS))
    n = draw(st.integers(1, max_n))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    spec = random_spec(rng, kind, n=n, K=draw(st.integers(2, 4)))
    read = [int(i) for i in rng.permutation(n)[:draw(st.integers(0, n))]]
    tau = draw(st.sampled_from([0.0, 0.0, 0.05]))
    return spec, spec.pool(), read, tau


def still_certified(pool, k, read, labels, th, rule="shared") -> bool:
    return bool(certified_mask(batch_lower(pool, read, labels=labels, rule=rule), th)[k])


@settings(max_examples=150, **SETTINGS)
@given(read_pools())
def test_flipping_reported_rows_undoes_and_no_smaller_set_does(case):
    """Hypothesis: the reported rows with their new labels undo the certificate, and no
    set of fewer read rows, with any other classes, does."""
    spec, pool, read, tau = case
    m = label_error_margin(pool, read, tolerance=tau)
    if not m.certified or m.flips is None:
        return
    th = thresholds(pool.K, pool.scale, rule="shared", tolerance=tau)
    k = pool.names.index(m.selected)
    base = pool.labels[read].copy()
    flipped = base.copy()
    for i, c in zip(m.rows, m.labels_to):
        flipped[read.index(i)] = pool.class_code(c)
    assert not still_certified(pool, k, read, flipped, th)
    for size in range(1, m.flips):
        for S in itertools.combinations(range(len(read)), size):
            for new in itertools.product(*[[c for c in range(pool.n_classes) if c != base[p]]
                                           for p in S]):
                lab = base.copy()
                lab[list(S)] = new
                assert still_certified(pool, k, read, lab, th), (S, new)


@settings(max_examples=120, **SETTINGS)
@given(read_pools())
def test_drop_equals_gain_and_margin_at_most_fragility(case):
    """Under the shared rule a wrong label can at most cancel the gain of its row; the
    margin of any partial certificate of k is at most the full-pool margin of k."""
    spec, pool, read, tau = case
    if read:
        lab = pool.labels[read]
        assert flip_drops(pool, read, lab)[0].tolist() == gain_terms(pool, read, lab).tolist()
    m = label_error_margin(pool, read, tolerance=tau)
    k = pool.names.index(m.selected)
    f = label_error_margin(pool, range(pool.n), tolerance=tau, target=k)
    inf = float("inf")
    assert (inf if m.flips is None else m.flips) <= (inf if f.flips is None else f.flips)


@settings(max_examples=100, **SETTINGS)
@given(read_pools(), st.integers(1, 3), st.sampled_from(["shared", "separate"]))
def test_session_keeps_the_e_largest_drops_online(case, e, rule):
    """Session's incremental top-e drops equal a batch partition at every step, for the
    shared and separate rules."""
    spec, pool, read, tau = case
    s = Session.start(spec.pool(labels=None), rule=rule, tolerance=tau, label_errors=e)
    for t, i in enumerate(read, 1):
        s = s.observe(i, spec.classes[spec.labels[i]])
        drops = flip_drops(pool, read[:t], pool.labels[read[:t]], rule=rule)[0]
        assert s.robust_lower().tolist() == (s.L - top_drop_sums(drops, e)).tolist()


@settings(max_examples=100, **SETTINGS)
@given(read_pools(max_n=9), st.integers(0, 2),
       st.sampled_from(["static-range", "adaptive-pair-sum", "random"]))
def test_robust_replay_stops_at_the_first_robust_state(case, e, policy):
    """replay(label_errors=e) reads the policy's rows until the margin reaches e + 1 (the
    first such prefix), or stops fragile only when the full-pool choice survives at most
    e wrong labels; e = 0 is the plain replay."""
    spec, pool, _read, tau = case
    plain = replay(pool, policy=policy, tolerance=tau)
    r = replay(pool, policy=policy, tolerance=tau, label_errors=e)
    if e == 0:
        assert (r.labels_read, r.order, r.selected) == (plain.labels_read, plain.order,
                                                        plain.selected)
    pos = [pool.position(x) for x in r.order]
    assert tuple(pos[:plain.labels_read]) == tuple(pool.position(x) for x in plain.order)
    assert r.margin == label_error_margin(pool, pos, tolerance=tau,
                                          target=pool.names.index(r.selected))
    # robust: some candidate's certificate survives e wrong labels (with a tolerance
    # several candidates can be certified, and the plain choice may be the fragile one)
    robust_at = [any(label_error_margin(pool, pos[:t], tolerance=tau, target=k).robust_to(e)
                     for k in range(pool.K))
                 for t in range(len(pos) + 1)]
    if r.status in ("certified", "certified within tolerance"):
        assert r.robust and robust_at.index(True) == len(pos)
        assert r.margin.robust_to(e)  # the candidate named is a robust one
    else:
        assert r.status == "certified but fragile" and not any(robust_at)
        k = pool.names.index(r.selected)
        f = label_error_margin(pool, range(pool.n), tolerance=tau, target=k)
        assert f.flips is not None and f.flips <= e
        if tau == 0:
            assert r.fragility.flips is not None and r.fragility.flips <= e


@settings(max_examples=80, **SETTINGS)
@given(read_pools(), st.integers(1, 2))
def test_unreachable_is_sound(case, e):
    """Whenever a session says no continuation can survive e wrong labels, every
    candidate's full-pool margin (the labels of the pool) is at most e."""
    spec, pool, read, tau = case
    s = Session.start(spec.pool(labels=None), tolerance=tau, label_errors=e)
    for i in read:
        s = s.observe(i, spec.classes[spec.labels[i]])
        if s.robust_unreachable:
            for k in range(pool.K):
                f = label_error_margin(pool, range(pool.n), tolerance=tau, target=k)
                assert f.flips is not None and f.flips <= e


@pytest.mark.parametrize("seed", range(40))
def test_tolerance_names_a_robust_candidate_instead_of_reading_on(seed):
    """With a tolerance and e >= 1 the plain choice (smallest worst-case excess) can be
    fragile while another certified candidate is robust; the run must stop there and
    name that one, not read every label (32 of 3,000 random replays did before).  The
    pools are drawn until such a state occurs on the plain policy's path."""
    rng = np.random.default_rng(1000 + seed)
    for _ in range(500):
        spec = random_spec(rng, KINDS[int(rng.integers(len(KINDS)))], n=int(rng.integers(3, 10)),
                           K=int(rng.integers(3, 5)))
        pool, tau, e = spec.pool(), float(rng.choice([0.05, 0.1])), int(rng.integers(1, 3))
        s = Session.start(spec.pool(labels=None), tolerance=tau, label_errors=e)
        while not s.done:
            r = s.next_row()
            s = s.observe(r, spec.classes[spec.labels[r]])
        read = list(s.read_rows)
        plain = label_error_margin(pool, read, tolerance=tau)  # the plain choice
        robust = [k for k in range(pool.K)
                  if label_error_margin(pool, read, tolerance=tau, target=k).robust_to(e)]
        if robust and not plain.robust_to(e):
            break
    else:
        pytest.skip("no pool with a fragile plain choice and a robust rival")
    assert s.robust and s.status == "certified within tolerance"
    assert s.pool.names.index(s.selected) in robust
    for t in range(len(read)):  # and it is the first state where one is robust
        assert not any(label_error_margin(pool, read[:t], tolerance=tau, target=k)
                       .robust_to(e) for k in range(pool.K))


# ------------------------------------------------------------------ examples
def figure2_pool():
    from certlib import Pool
    return Pool.from_arrays([[0, 0, 1, 0], [0, 0, 0, 1]], [[4, 3, 2, 1], [3, 4, 1, 2]],
                            labels=[1, 0, 0, 0], names=["A", "B"])


def test_figure2_margin_by_hand():
    """Paper Figure 2: r_A - r_B = 2y1 - 2y2 - 4y3 + 4y4 with y = (1,0,0,0): L_AB = 2 with
    every label, need 1 (A wins ties).  A wrong label moves b_i y_i to b_i (1 - y_i):
    row 1 (y=1, b=2) drops 2, row 2 (y=0, b=-2) drops 2, row 3 (y=0, b=-4) drops 4, row 4
    (y=0, b=4) would raise L_AB.  Any one of rows 1-3 wrong gives L_AB <= 0 < 1: they are
    the critical rows, row 3 (largest drop) the reported one."""
    pool = figure2_pool()
    f = full_pool_fragility(pool)
    assert (f.selected, f.flips, f.rival, f.rows, f.critical) == ("B", 1, "A", (2,),
                                                                  (0, 1, 2))
    assert f.labels_to == (1,) and f.survives == 0 and not f.robust_to(1)
    assert "survives any 0 wrong labels" in f.text()
    partial = label_error_margin(pool, [2, 3])  # rows 3, 4: L_AB = -2 + ... not certified
    assert not partial.certified and partial.flips == 0


def test_unbreakable_certificate_has_no_flips():
    """Identical candidates except the tie priority: the first is certified with no label,
    and no wrong label can change that (flips None, survives any number)."""
    from certlib import Pool
    pool = Pool.from_arrays([[0, 1, 1], [0, 1, 1]], [[3, 2, 1], [3, 2, 1]],
                            labels=[0, 1, 0], names=["a", "b"])
    m = full_pool_fragility(pool)
    assert m.certified and m.flips is None and m.survives is None and m.robust_to(5)
    r = replay(pool, label_errors=3)
    assert r.labels_read == 0 and r.robust and r.status == "certified"


def test_bad_input_names_the_parameter():
    pool = figure2_pool()
    with pytest.raises(CertlibError, match="read_rows"):
        label_error_margin(pool, [7])
    with pytest.raises(CertlibError, match="read_rows must not repeat"):
        label_error_margin(pool, [1, 1])
    with pytest.raises(CertlibError, match="label_errors"):
        Session.start(pool, label_errors=-1)
    with pytest.raises(CertlibError, match="label_errors"):
        replay(pool, label_errors=1.5)
    unl = pool.with_labels(np.array([1, 0, -1, 0]))
    with pytest.raises(CertlibError, match="position 2"):
        label_error_margin(unl, [2])
    with pytest.raises(CertlibError, match="full-pool fragility needs every label"):
        full_pool_fragility(unl)


def test_session_margin_uses_the_annotators_labels():
    """Session.label_error_margin() examines the labels read in the session, not the pool
    file's."""
    pool = figure2_pool()
    s = Session.start(pool.with_labels(np.full(4, -1)), label_errors=None)
    for i, y in [(2, 0), (3, 0), (0, 1), (1, 0)]:
        s = s.observe(i, y)
    assert s.certified and s.label_error_margin() == full_pool_fragility(pool)


def test_default_replay_dict_has_no_new_keys(sample_pool_path="sample_data/demo_binary.csv"):
    from certlib import load_pool
    pool = load_pool(sample_pool_path)
    d = replay(pool, policy="adaptive-pair-sum").to_dict()
    assert "margin" not in d and "label_errors" not in d


def test_cli_label_errors_json_keys(capsys):
    """`certlib replay --label-errors 1 --json` on the shipped binary sample: the robust
    stop reads more labels than the plain one, and the keys named in docs/label-errors.md."""
    assert main(["replay", "sample_data/demo_binary.csv", "--policy", "adaptive-pair-sum",
                 "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["replay", "sample_data/demo_binary.csv", "--policy", "adaptive-pair-sum",
                 "--label-errors", "1", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    for key in ("label_errors", "status", "robust", "margin", "margin_rival", "margin_rows",
                "margin_critical_rows", "full_pool_fragility", "full_pool_fragility_rival",
                "full_pool_fragility_rows"):
        assert key in d
    assert d["label_errors"] == 1 and d["robust"] and d["margin"] >= 2
    assert d["labels_read"] > plain["labels_read"]
    assert d["order"][:plain["labels_read"]] == plain["order"]
    assert main(["replay", "sample_data/demo_binary.csv", "--label-errors", "1"]) == 0
    out = capsys.readouterr().out
    assert "wrong label" in out and "full-pool" in out
    assert main(["replay", "sample_data/demo_binary.csv", "--label-errors", "-2"]) == 2
    assert "label_errors" in capsys.readouterr().err
