"""Helpers for AppTests of the labelling pages."""

from __future__ import annotations


def view_button(at, base: str):
    """The button ``base`` of the view the page shows: the Label and Audit pages key their
    row buttons by the view (``base@seq``, `ui.common.view_key`)."""
    found = [b for b in at.button if isinstance(b.key, str) and b.key.rpartition("@")[0] == base]
    assert len(found) == 1, (base, [b.key for b in at.button])
    return found[0]
