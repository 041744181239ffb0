"""Library calls cached across reruns, keyed by the pool's content and their settings.

A `Pool` is hashed by `pool_key` (its label-free `certlib.pool_hash` plus its labels)
through ``hash_funcs``, so a caller passes the pool itself; a pool with other labels
is another key.
"""

from __future__ import annotations

import hashlib

import streamlit as st

import certlib
from certlib.core.pool import Pool
from certlib.errors import CertlibError


def pool_key(pool: Pool) -> str:
    """Cache key of a pool: its label-free hash plus its labels."""
    return certlib.pool_hash(pool) + hashlib.sha256(pool.labels.tobytes()).hexdigest()[:16]


POOL_HASH = {Pool: pool_key}
"""``hash_funcs`` for `st.cache_data`: a pool argument is keyed by `pool_key`."""


@st.cache_data(show_spinner=False, max_entries=256, hash_funcs=POOL_HASH)
def _project_state(store_path: str, project_id: int, last_seq: int, pool: Pool):
    from certlib.labelling.store import LabelStore

    s = LabelStore(store_path).progress(project_id, pool).session
    return s.t, s.status


def project_state(store, project_id: int, pool, events=None) -> tuple[int, str] | None:
    """(labels read, status) of a labelling project on ``pool``, as its Label page would
    say them; None when it cannot be replayed.  A replay per project, kept per project
    and newest event (``events``: its log, when the caller has it), so the pages listing
    projects (Plan and certify, Label) do not replay them at every run."""
    try:
        ev = store.events(project_id) if events is None else events
        return _project_state(str(store.path), int(project_id), ev[-1].seq if ev else 0, pool)
    except CertlibError:
        return None


@st.cache_data(show_spinner="Bounding the minimum certificate ...", max_entries=32,
               hash_funcs=POOL_HASH)
def cached_certify(pool: Pool, tolerance: float):
    """`certlib.certify` of ``pool`` at ``tolerance``, kept per pool and tolerance."""
    return certlib.certify(pool, tolerance=tolerance)  # work limit: same result everywhere


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=POOL_HASH)
def cached_prelabel(pool: Pool, tolerance: float):
    """`certlib.prelabel_bound` of ``pool`` at ``tolerance``, kept per pool and tolerance."""
    return certlib.prelabel_bound(pool, tolerance=tolerance)


@st.cache_data(show_spinner="Replaying the policy ...", max_entries=64, hash_funcs=POOL_HASH)
def cached_replay(pool: Pool, policy: str, rule: str, tolerance: float, seed: int,
                  budget: int | None = None):
    """`certlib.replay` of ``pool`` with these settings, kept per pool and settings."""
    return certlib.replay(pool, policy=policy, rule=rule, tolerance=tolerance, seed=seed,
                          budget=budget)
