"""Two annotators of one project pressing at the same pace, through the Label page's
protocol (ui.label_panel.apply_team_presses, ui.team.handed_row) on a real SQLite store:
each press answers the row its screen showed, and nearly every press is saved: the rows
are handed out, not raced for, so a press is refused only when its row was taken
meanwhile."""

from __future__ import annotations

from certlib import load_pool
from certlib.labelling.store import LabelStore
from certlib.labelling.team import TeamStore
from ui.label_panel import apply_team_presses, panel_data, row_key
from ui.team import handed_row

DEMO = "sample_data/demo_unlabelled.csv"
TRUTH = "sample_data/demo_binary.csv"


class Display:
    def label(self, c):
        return str(c)


class Browser:
    """One annotator's tab: the data it was last sent, the row on screen, its presses."""

    def __init__(self, who: str):
        self.who, self.n, self.results = who, 0, {}
        self.data = None
        self.shown = None  # the row key on screen
        self.saved = self.refused = 0

    def draw(self, store, team, pid, pool):
        prog = store.resume(pid, pool)
        handed = handed_row(team, pid, self.who, prog, pool)
        self.data = panel_data(prog, pool, self.who, Display(), ".", ["0", "1"], "s", "u",
                               self.who, self.results, handed=handed, predictions=False)
        row = self.data["row"]
        self.shown = None if row is None else row["key"]

    def press(self, truth, store, team, pid, pool):
        """Answer the row on screen with its true class; the screen moves to the row ahead
        at once (the browser draws it before the server answers)."""
        d = self.data
        c = int(truth.classes[truth.labels[truth.position(int(self.shown))]])
        aid = f"c{list(pool.classes).index(c)}"
        nxt = d["next"].get(aid, {}).get("row")
        self.n += 1
        press = {"id": f"{self.who}:{self.n}", "kind": "label", "answer": aid,
                 "value": str(c), "row": self.shown, "seq": d["seq"],
                 "ahead": None if nxt is None else nxt["key"]}
        apply_team_presses(store, team, pid, pool, self.who, [press], self.results)
        ok = self.results[press["id"]]["ok"]
        self.saved += ok
        self.refused += not ok
        return press


def test_two_annotators_same_pace_nearly_every_press_saved(tmp_path):
    pool, truth = load_pool(DEMO), load_pool(TRUTH)
    store = LabelStore(tmp_path / "labels.db")
    team = TeamStore(store.path)
    pid = store.open_project(pool, "demo", policy="adaptive-pair-sum", tolerance=0)
    ana, bob = Browser("ana@example.org"), Browser("bob@example.org")
    for b in (ana, bob):
        b.draw(store, team, pid, pool)
    assert ana.shown != bob.shown
    for _ in range(15):  # both pages drawn, then both press before either redraws
        if ana.shown is None or bob.shown is None:
            break
        ana.press(truth, store, team, pid, pool)
        bob.press(truth, store, team, pid, pool)
        for b in (ana, bob):
            b.draw(store, team, pid, pool)
    prog = store.resume(pid, pool)
    assert ana.saved + bob.saved == prog.session.t
    assert ana.saved >= 14 and bob.saved >= 14, (ana.saved, bob.saved)
    who = {e.annotator for e in prog.labels}
    assert who == {"ana@example.org", "bob@example.org"}
    # every label stored is the answer to the row its press named
    for e in prog.labels:
        assert e.label == truth.classes[truth.labels[truth.position(e.row_id)]]


def test_a_press_on_a_row_someone_labelled_is_refused_and_names_nobody(tmp_path):
    pool = load_pool(DEMO)
    store = LabelStore(tmp_path / "labels.db")
    team = TeamStore(store.path)
    pid = store.open_project(pool, "demo")
    ana = Browser("ana@example.org")
    ana.draw(store, team, pid, pool)
    rid = pool.row_ids[pool.position(int(ana.shown))]
    team.release(pid, "ana@example.org")  # ana's hold ran out; bob labels her row
    store.append_label(pid, rid, pool.classes[0], "bob@example.org", pool=pool)
    press = {"id": "ana:1", "kind": "label", "answer": "c1", "value": str(pool.classes[1]),
             "row": row_key(pool, pool.position(rid)), "seq": ana.data["seq"]}
    apply_team_presses(store, team, pid, pool, "ana@example.org", [press], ana.results)
    res = ana.results["ana:1"]
    assert not res["ok"] and "labelled meanwhile" in res["text"]
    assert "bob" not in res["text"]
    labels = store.resume(pid, pool).labels
    assert [(e.row_id, e.label, e.annotator) for e in labels] == [
        (rid, pool.classes[0], "bob@example.org")]


def test_undo_takes_back_ones_own_label_after_anothers(tmp_path):
    pool = load_pool(DEMO)
    store = LabelStore(tmp_path / "labels.db")
    team = TeamStore(store.path)
    pid = store.open_project(pool, "demo")
    ana, bob = Browser("ana@example.org"), Browser("bob@example.org")
    truth = load_pool(TRUTH)
    ana.draw(store, team, pid, pool)
    bob.draw(store, team, pid, pool)
    first = ana.press(truth, store, team, pid, pool)
    bob.press(truth, store, team, pid, pool)
    ana.draw(store, team, pid, pool)
    assert ana.data["undo"]["enabled"]
    undo = {"id": "ana:undo", "kind": "undo", "seq": ana.data["seq"]}
    apply_team_presses(store, team, pid, pool, "ana@example.org", [undo], ana.results)
    assert ana.results["ana:undo"]["ok"], ana.results["ana:undo"]
    labels = store.resume(pid, pool).labels
    assert [e.annotator for e in labels] == ["bob@example.org"]
    ana.draw(store, team, pid, pool)
    assert ana.shown == first["row"]  # the row undone is back on her screen


def test_an_undo_sent_again_after_a_restart_undoes_once(tmp_path):
    """The browser resends unacknowledged presses after a server restart (a fresh
    session, no acknowledgements): the undo it already wrote is known by its event."""
    pool, truth = load_pool(DEMO), load_pool(TRUTH)
    store = LabelStore(tmp_path / "labels.db")
    team = TeamStore(store.path)
    pid = store.open_project(pool, "demo")
    ana = Browser("ana@example.org")
    ana.draw(store, team, pid, pool)
    ana.press(truth, store, team, pid, pool)
    ana.draw(store, team, pid, pool)
    ana.press(truth, store, team, pid, pool)
    ana.draw(store, team, pid, pool)
    undo = {"id": "ana:undo", "kind": "undo", "seq": ana.data["seq"]}
    apply_team_presses(store, team, pid, pool, "ana@example.org", [undo], ana.results)
    again: dict = {}  # the restarted server's acknowledgements: none
    apply_team_presses(store, team, pid, pool, "ana@example.org", [undo], again)
    assert ana.results["ana:undo"]["ok"] and again["ana:undo"]["ok"]
    assert len(store.resume(pid, pool).labels) == 1


def test_a_press_after_the_budget_is_used_is_refused(tmp_path):
    pool, truth = load_pool(DEMO), load_pool(TRUTH)
    store = LabelStore(tmp_path / "labels.db")
    team = TeamStore(store.path)
    pid = store.open_project(pool, "demo", budget=1)
    ana, bob = Browser("ana@example.org"), Browser("bob@example.org")
    ana.draw(store, team, pid, pool)
    bob.draw(store, team, pid, pool)
    ana.press(truth, store, team, pid, pool)
    bob.press(truth, store, team, pid, pool)  # his row was handed before ana's label
    assert (ana.saved, bob.saved) == (1, 0)
    assert "budget exhausted" in next(iter(bob.results.values()))["text"]
    assert len(store.resume(pid, pool).labels) == 1
    bob.draw(store, team, pid, pool)
    assert bob.shown is None
