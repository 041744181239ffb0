"""Which column is which, for an upload that does not follow the file convention.

The sidebar's uploader takes one file, several files (one per model, joined on their
id column) or a zip of them.  A single file in the convention's columns is saved at
once; anything else is *pending*: the page shows the mapping `certlib.columns` guessed
from the column names, in select boxes a person corrects, and nothing is saved until
they press *Load*.  A mapping saved with an upload (under its content hash) is used
again when the same files come back.  The library does the reading and checking; this
module only draws and keeps the pending upload in the session.
"""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import PurePosixPath

import pandas as pd
import polars as pl
import streamlit as st

from certlib.columns import (CandidateColumns, ColumnMap, expand_zips, guess_map,
                             join_tables, needs_map)
from certlib.errors import CertlibError, ColumnError
from certlib.io import read_table_bytes
from ui.text import plain

PENDING = "_pending_upload"
NO_LABEL = "(none: every row unread)"
NO_ID = "(none: rows numbered 0, 1, ...)"
NONE = ""
PREVIEW_ROWS = 5


def _stem(name: str) -> str:
    return PurePosixPath(name.replace("\\", "/")).stem


def _head(name: str, data: bytes) -> pl.DataFrame:
    """The first rows of one file (its header and a few rows), without reading it all."""
    suffix = PurePosixPath(name).suffix.lower()
    if suffix in (".parquet", ".pq"):
        return pl.read_parquet(io.BytesIO(data), n_rows=PREVIEW_ROWS)
    return pl.read_csv(io.BytesIO(data), n_rows=PREVIEW_ROWS, infer_schema=False,
                       separator="\t" if suffix == ".tsv" else ",")


def plan_upload(files: list[tuple[str, bytes]], *, force: bool = False,
                max_bytes: int = 200 * 1024 * 1024, join_on: str | None = None) -> dict | None:
    """None when ``files`` is one file in the convention's columns (save it as it is);
    else the pending upload: the files, the columns of the (joined) table, a preview and
    the guessed map (``force``: a pending upload for any files, to map them again).
    Raises the library's `CertlibError` for files that cannot be read or joined (nothing
    is saved)."""
    if len(files) == 1 and not files[0][0].lower().endswith(".zip"):
        name, data = files[0]
        try:
            head = _head(name, data)
        except Exception:  # noqa: BLE001 - the reader's own message comes with the save
            return None
        columns = [c.strip() for c in head.columns]
        if not force and not needs_map(columns):
            return None
        guess = guess_map(columns, name=name, default_name=_stem(name))
        return {"files": files, "where": name, "columns": columns,
                "preview": head.rename(dict(zip(head.columns, columns))).to_pandas(),
                "guess": guess.to_json(), "note": None}
    members = expand_zips(files, max_bytes=max_bytes)
    tables = [(name, read_table_bytes(name, data)) for name, data in members]
    if len(tables) == 1:  # a zip of one file: as that file
        name, df = tables[0]
        guess = guess_map(df.columns, name=name, default_name=_stem(name))
        return {"files": files, "where": name, "columns": list(df.columns),
                "preview": df.head(PREVIEW_ROWS).to_pandas(), "guess": guess.to_json(),
                "note": None}
    maps = []
    for name, df in tables:
        m = guess_map(df.columns, name=name, default_name=_stem(name))
        if not m.candidates:
            raise ColumnError(f"{name!r}: no candidate columns found (a prediction and a "
                               "score, or probabilities, e.g. prediction,score or "
                               f"<model>_pred,<model>_score); its columns are {df.columns}")
        maps.append((name, df, m))
    # the columns every file has that are no candidate's part: what the files can be
    # joined on (the person chooses in the form when the names do not say)
    parts = {c for _, _, m in maps for cand in m.candidates for c in cand.columns()}
    shared = [c for c in tables[0][1].columns if c not in parts
              and all(c in df.columns for _, df in tables[1:])]
    if join_on is None and any(m.row_id is None for _, _, m in maps):
        join_on = next((c for c in shared
                        if all(df[c].null_count() == 0 and df[c].n_unique() == df.height
                               for _, df in tables)), None)
        if join_on is None:
            raise ColumnError(f"{maps[0][0]!r} and the other files have no row id column "
                              "(id, row_id, ...) to be joined on" + (
                                  f"; the columns they share, {shared}, are not unique ids"
                                  if shared else " and share no column"))
    if join_on is not None:
        maps = [(n, df, replace(m, row_id=join_on)) for n, df, m in maps]
    joined, guess = join_tables(maps)
    note = (f"{len(tables)} files joined on their id columns "
            f"({', '.join(f'{n}: {m.row_id}' for n, _, m in maps)}), candidates in upload "
            "order (earlier wins a tie).")
    return {"files": files, "where": " + ".join(n for n, _ in tables),
            "columns": list(joined.columns), "preview": joined.head(PREVIEW_ROWS).to_pandas(),
            "guess": guess.to_json(), "note": note, "join_options": shared,
            "join_on": guess.row_id}


def _proba_text(proba) -> str:
    return ", ".join(f"{k}: {c}" for k, c in proba) if len(proba) > 1 else \
        ", ".join(c for _, c in proba)


def _proba_parse(text: str, cand: str) -> tuple[tuple[str, str], ...]:
    """"0: a_p0, 1: a_p1" (a class per column) or "a_p" (the probability of class 1)."""
    parts = [p.strip() for p in (text or "").split(",") if p.strip()]
    if len(parts) == 1 and ":" not in parts[0]:
        return (("1", parts[0]),)
    out = []
    for p in parts:
        cls, sep, col = p.partition(":")
        if not sep:
            raise ColumnError(f"candidate {cand!r}: probability columns are written "
                               f"'class: column, class: column'; {p!r} has no class")
        out.append((cls.strip(), col.strip()))
    return tuple(out)


def _table(cmap: ColumnMap) -> pd.DataFrame:
    return pd.DataFrame({
        "candidate": [c.name for c in cmap.candidates],
        "prediction": [c.pred or NONE for c in cmap.candidates],
        "confidence": [c.conf or NONE for c in cmap.candidates],
        "probabilities": [_proba_text(c.proba) for c in cmap.candidates]},
        columns=["candidate", "prediction", "confidence", "probabilities"])


def _edited_map(label: str, row_id: str, table: pd.DataFrame) -> ColumnMap:
    cands = []
    for _, r in table.iterrows():
        name = str(r.get("candidate") or "").strip()
        pred = str(r.get("prediction") or "").strip() or None
        conf = str(r.get("confidence") or "").strip() or None
        proba = _proba_parse(str(r.get("probabilities") or ""), name)
        if not (name or pred or conf or proba):
            continue  # an empty row the editor added
        cands.append(CandidateColumns(name, pred, conf, proba))
    return ColumnMap(tuple(cands), None if label == NO_LABEL else label,
                     None if row_id == NO_ID else row_id)


def mapping_form(pending: dict, save, cancel, rejoin) -> None:
    """The pending upload's mapping in the main area: label and id select boxes, a table
    of candidates (select boxes for their columns), the check's verdict, and *Load* /
    *Cancel*.  ``save(column_map)`` saves the upload and returns an error message or None;
    ``cancel()`` forgets the upload; ``rejoin(column)`` joins several files again on
    another shared column."""
    cols = pending["columns"]
    guess = ColumnMap.from_json(pending["guess"])
    st.subheader("Which column is which?")
    st.markdown(f"**{plain(pending['where'])}** does not use certlib's column names "
                "(`label`, `row_id`, `pred_<model>`/`conf_<model>`). Here is what its "
                "columns look like; check the guess below and correct it. Nothing is saved "
                "until you press *Load the pool*.")
    if pending.get("note"):
        st.caption(plain(pending["note"]))
    # empty cells as empty, not "None" (an empty label is a row not labelled yet)
    st.dataframe(pending["preview"].astype(object).where(pending["preview"].notna(), ""),
                 hide_index=True)
    key = f"map_{abs(hash(pending['where'])) % 10**8}"
    c1, c2 = st.columns(2)
    label = c1.selectbox("Label column (empty cells: not labelled yet)", [NO_LABEL] + cols,
                         index=(cols.index(guess.label) + 1) if guess.label in cols else 0,
                         key=f"{key}_label")
    if pending.get("join_options"):  # several files: the id they are joined on
        options = pending["join_options"]
        row_id = c2.selectbox("Join the files on (their shared row id column)", options,
                              index=options.index(pending["join_on"])
                              if pending.get("join_on") in options else 0, key=f"{key}_join")
        if row_id != pending.get("join_on"):
            if row_id != pending.get("join_failed"):
                rejoin(row_id)
                st.rerun()
            row_id = pending["join_on"]  # the files stay joined as they were
    else:
        row_id = c2.selectbox("Row id column", [NO_ID] + cols,
                              index=(cols.index(guess.row_id) + 1)
                              if guess.row_id in cols else 0, key=f"{key}_id")
    st.markdown("**Candidates**, in tie-priority order (earlier wins a tie). Give each a "
                "prediction and a confidence column (higher = more confident), or its "
                "probability columns (`class: column, ...`; one column alone is the "
                "probability of class 1). Add or delete rows as needed.")
    table = st.data_editor(
        _table(guess), num_rows="dynamic", hide_index=True, key=f"{key}_cands",
        column_config={
            "candidate": st.column_config.TextColumn("candidate", required=True),
            "prediction": st.column_config.SelectboxColumn("prediction",
                                                           options=[NONE] + cols),
            "confidence": st.column_config.SelectboxColumn("confidence",
                                                           options=[NONE] + cols),
            "probabilities": st.column_config.TextColumn(
                "probabilities", help="e.g. '0: m_p0, 1: m_p1, 2: m_p2', or 'm_proba' "
                "for the probability of class 1 of a 0/1 task")})
    cmap = None
    try:
        cmap = _edited_map(label, row_id, table).check(pending["where"], cols)
    except CertlibError as exc:
        st.error(f"This mapping cannot be used: {plain(exc)}")
    else:
        st.markdown("**It will read:**")
        st.code("\n".join(cmap.describe()), language=None, wrap_lines=True)
        for w in cmap.warnings:
            st.warning(plain(w))
    err = st.session_state.pop("_map_error", None)
    if err:
        st.error(err)
    b1, b2 = st.columns([1, 1])
    if b1.button("Load the pool", type="primary", disabled=cmap is None, key=f"{key}_load"):
        msg = save(cmap)
        if msg:
            st.session_state["_map_error"] = msg
        st.rerun()
    if b2.button("Cancel this upload", key=f"{key}_cancel"):
        cancel()
        st.rerun()


def show_saved_map(cmap: ColumnMap, name: str, pool) -> None:
    """The Pool page's account of the mapping an upload was saved with, its warnings
    (label-like columns left unused) included."""
    st.subheader("Column mapping")
    st.caption(f"{plain(name)} was read with this mapping (saved with the upload; the same "
               "files uploaded again use it).")
    try:
        checked = cmap.check(name, list(cmap.used()) + [str(c) for c in pool.extra])
    except CertlibError:
        checked = cmap
    st.code("\n".join(checked.describe()), language=None, wrap_lines=True)
    for w in checked.warnings:
        st.warning(plain(w))


def map_without(cmap: ColumnMap, names) -> ColumnMap:
    """``cmap`` without the candidates named (duplicates merged into the first)."""
    drop = set(names)
    return ColumnMap(tuple(c for c in cmap.candidates if c.name not in drop), cmap.label,
                     cmap.row_id)


def convention_map(pool, columns) -> ColumnMap | None:
    """The map that reads a file in the convention's pred_<name>/conf_<name> columns the
    same way (None for other layouts: a shared prediction or prob_ columns)."""
    cands = tuple(CandidateColumns(n, f"pred_{n}", f"conf_{n}") for n in pool.names)
    if pool.derived is not None or pool.shared_prediction or not all(
            c.pred in columns and c.conf in columns for c in cands):
        return None
    return ColumnMap(cands, "label" if "label" in columns else None,
                     "row_id" if "row_id" in columns else None)
