"""Evidence record and verifier (SPEC section 11, paper section 7).

The record holds the configuration, a hash of the unlabelled stream (both
prediction columns, judge scores, slice keys; labels are excluded because a
pipeline feeds them back later), both tiers' final intervals, the verdict and
stopping time, labels used, the routing trace (t, pi_t, label of every paid
label) and the per-slice table.

:func:`verify_record` recomputes everything from the stream and the logged
trace: it re-derives every pi_t and every labelling draw from the
configuration and seed, feeds the audit only the labels in the trace, and
compares every logged number.  It also checks trace labels against labels in
the stream file where those exist.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from collections.abc import Iterable, Sized
from typing import Any, TypeAlias, cast

import numpy as np
import numpy.typing as npt

from ..core._values import class_value, is_none_or_nan
from ..errors import ParameterError, PoolFileError
from ..certificates.verification import AUDIT_KIND, Verification, refuse_other_kind, unique_keys
from .core import AuditConfig, AuditResult, make_stream, run_stream

# Verification is re-exported from certlib.certificates.verification (one result type for
# both verifiers)
__all__ = ["RECORD_VERSION", "Verification", "make_record", "parse_record", "read_record",
           "stream_hash", "verify_record", "write_record"]

RECORD_VERSION = 1
_TOL = 1e-9

#: An evidence record: a JSON object, its values as JSON parses them.
Record: TypeAlias = dict[str, Any]


def _hash_text(values: npt.ArrayLike) -> str:
    """One stream column as text for `stream_hash`: integral numbers written as integers,
    other floats by ``repr``, anything else by ``str``; values separated by U+001F."""
    arr = np.asarray(values) if not isinstance(values, np.ndarray) else values
    if arr.dtype.kind in "biuf":
        f = arr.astype(float)
        if np.all(np.isfinite(f)) and np.all(f == np.round(f)):
            return "\x1f".join(f.astype(np.int64).astype(str).tolist())
        return "\x1f".join(repr(float(v)) for v in f)
    out = []
    for v in arr.tolist():
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        out.append(str(v))
    return "\x1f".join(out)


def stream_hash(incumbent: npt.ArrayLike, candidate: npt.ArrayLike, *,
                judge: npt.ArrayLike | None = None, slices: npt.ArrayLike | None = None) -> str:
    """SHA-256 of the unlabelled stream (predictions, judge scores, slice keys).

    Labels are left out: a pipeline feeds them back later, and the trace holds those the
    verdict used.  Integral numbers hash as integers, so 1 and 1.0 hash alike.

    Parameters
    ----------
    incumbent, candidate : array_like
        The two prediction columns.
    judge : array_like of float, optional
        Judge scores.
    slices : array_like, optional
        Slice keys.

    Returns
    -------
    str
        The hex digest.

    Examples
    --------
    >>> stream_hash([0, 1], [1, 1]) == stream_hash([0.0, 1.0], [1.0, 1.0])
    True
    """
    h = hashlib.sha256()
    for part in (incumbent, candidate, judge, slices):
        h.update(b"\x1e")
        if part is not None:
            h.update(_hash_text(part).encode())
    return h.hexdigest()


def make_record(result: AuditResult, digest: str, *, judge_column: str | None = None,
                slice_column: str | None = None) -> Record:
    """The evidence record of an audit (paper section 7).

    Parameters
    ----------
    result : AuditResult
        The audit's result.
    digest : str
        `stream_hash` of its stream.
    judge_column, slice_column : str, optional
        The stream file's judge and slice columns, so that the verifier can read the
        file again.

    Returns
    -------
    dict
        The record: version, kind, configuration, stream hash, the result's keys and
        the trace as [t, pi_t, label] triples.

    Examples
    --------
    >>> from certlib.audit import audit
    >>> f, g = [0] * 4000, [1 if t % 500 == 0 else 0 for t in range(4000)]
    >>> rec = make_record(audit(f, g, epsilon=0.05), stream_hash(f, g))
    >>> rec["verdict"], rec["trace"], verify_record(rec, f, g).ok
    ('safe', [], True)
    """
    cfg = result.config
    rec: Record = {"record_version": RECORD_VERSION, "kind": AUDIT_KIND,
           "config": cfg.to_dict(), "stream_sha256": digest,
           "judge_column": judge_column, "slice_column": slice_column}
    rec.update(result.to_dict())
    rec["trace"] = [[e.t, e.pi, e.label] for e in result.trace]
    return rec


def write_record(path: str | Path, record: Record) -> None:
    """Write a record as indented JSON.

    Parameters
    ----------
    path : str or Path
        The record file.
    record : dict
        The record (`make_record`).
    """
    Path(path).write_text(json.dumps(record, indent=2, default=str))


def read_record(path: str | Path) -> Record:
    """Read an audit record file.

    Parameters
    ----------
    path : str or Path
        The record file.

    Returns
    -------
    dict
        The record (`parse_record`).

    Raises
    ------
    PoolFileError
        The file is missing or unreadable, or not an audit record.
    """
    p = Path(path)
    if not p.exists():
        raise PoolFileError(f"record file {p} does not exist")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise PoolFileError(f"record file {p} cannot be read ({exc})") from None
    return parse_record(data, str(p))


def parse_record(data: bytes | str, name: str = "record") -> Record:
    """The audit record in ``data``.

    Parameters
    ----------
    data : bytes or str
        JSON text.
    name : str, default "record"
        What messages call the file.

    Returns
    -------
    dict
        The record.

    Raises
    ------
    PoolFileError
        Not JSON, a repeated key, another kind of record, or a required key missing.
    """
    try:
        rec: Record = json.loads(data, object_pairs_hook=unique_keys)
    except ValueError as exc:
        raise PoolFileError(f"record file {name} is not valid JSON ({exc})") from None
    refuse_other_kind(rec, name=name, want="audit")
    if not isinstance(rec, dict) or rec.get("kind") != AUDIT_KIND:
        raise PoolFileError(f"record file {name} is not a certlib audit record "
                            f"(expected \"kind\": \"{AUDIT_KIND}\")")
    for key in ("config", "stream_sha256", "verdict", "trace"):
        if key not in rec:
            raise PoolFileError(f"record file {name} lacks the key `{key}`")
    return rec


def _config_from(rec: Record) -> AuditConfig:
    """The record's settings rebuilt by `AuditConfig.make`, the constructor every audit
    runs through, so its checks apply (delta0 + delta1 <= delta, pi_min <= pi, ...);
    `verify_record` then requires the record's whole `config` to equal the rebuilt one
    (the loss range B, the routing, the copies of pi_min).  Raises ParameterError."""
    c = rec["config"]
    r = c["routing"]
    if r["kind"] not in ("constant", "judge"):
        raise ParameterError(f"routing kind {r['kind']!r} is not 'constant' or 'judge'")
    if not isinstance(c["running_intersection"], bool):
        raise ParameterError(f"running_intersection {c['running_intersection']!r} is not "
                             "true or false")
    judge = r["kind"] == "judge"
    return AuditConfig.make(epsilon=c["epsilon"], delta=c["delta"], delta0=c["delta0"],
                            delta1=c["delta1"], pi=None if judge else r["pi"],
                            pi_min=r["pi_min"], judge=judge, seed=c["seed"],
                            truncation=c["truncation"],
                            running_intersection=c["running_intersection"],
                            # a record made before these settings existed used 1 and
                            # PrPl-EB
                            tier1_from=c.get("tier1_from", 1.0),
                            confidence=c.get("confidence", "prpl-eb"))


def _same(a: object, b: object) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and not isinstance(a, bool) and not isinstance(b, bool):
        return math.isclose(float(a), float(b), rel_tol=_TOL, abs_tol=_TOL)
    return a == b


def verify_record(rec: Record, incumbent: npt.ArrayLike, candidate: npt.ArrayLike,
                  labels: npt.ArrayLike | None = None, *, judge: npt.ArrayLike | None = None,
                  slices: npt.ArrayLike | None = None) -> Verification:
    """Recompute the audit from the stream and the record's trace; list every mismatch.

    Every pi_t and labelling draw is derived again from the configuration and seed, the
    audit is fed only the labels of the trace, and every logged number is compared;
    trace labels are checked against the stream's labels where it has them.

    Parameters
    ----------
    rec : dict
        The record (`read_record`, `parse_record`).
    incumbent, candidate : array_like
        The stream's prediction columns.
    labels : array_like, optional
        The stream's labels, to check the trace against.
    judge : array_like of float, optional
        Judge scores (required when the record routes by a judge).
    slices : array_like, optional
        Slice keys.

    Returns
    -------
    Verification
        ``ok`` and the mismatches; ``recomputed`` is the recomputed result in the
        record's keys.

    Raises
    ------
    PoolFileError
        The record's configuration is incomplete or malformed.

    Examples
    --------
    >>> from certlib.audit import audit
    >>> f, g = [0] * 4000, [1 if t % 500 == 0 else 0 for t in range(4000)]
    >>> rec = make_record(audit(f, g, epsilon=0.05), stream_hash(f, g))
    >>> verify_record(rec, f, g).ok, verify_record(dict(rec, verdict="regression"), f, g).ok
    (True, False)
    """
    bad: list[str] = []
    if rec.get("record_version") != RECORD_VERSION:
        bad.append(f"`record_version` is {_short(rec.get('record_version'))}; this certlib "
                   f"writes and verifies version {RECORD_VERSION}")
    digest = stream_hash(incumbent, candidate, judge=judge, slices=slices)
    if digest != rec["stream_sha256"]:
        bad.append(f"stream hash {digest} differs from the record's {rec['stream_sha256']}")
    try:
        cfg = _config_from(rec)
    except ParameterError as exc:  # settings no audit can run with: not a genuine record
        return Verification(tuple(bad + [f"`config`: {exc}"]))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise PoolFileError(f"record config is incomplete or malformed ({exc})") from None
    given = cfg.to_dict()
    for key in ("tier1_from", "confidence"):  # a record made before the setting existed
        if key not in rec["config"]:
            del given[key]
    if not _same(_num(rec["config"]), _num(given)):
        bad.append(f"`config`: record says {_short(rec['config'])}, but its settings give "
                   f"{_short(given)}")
    if cfg.routing.kind == "judge" and judge is None:
        return Verification(tuple(bad + ["the record routes by a judge but the stream gives "
                                         "no judge scores (`judge_column`)"]))
    n = len(cast(Sized, incumbent))  # a stream column: a sequence or a 1-D array
    trace_labels = np.full(n, None, dtype=object)
    stream_labels = None if labels is None else list(cast(Iterable[object], labels))
    for entry in rec["trace"]:
        t, label = int(entry[0]), entry[2]
        if not 1 <= t <= n:
            bad.append(f"trace item {t} is outside the stream (1..{n})")
            continue
        trace_labels[t - 1] = label
        if stream_labels is not None:
            s = stream_labels[t - 1]
            if not is_none_or_nan(s) and not _same(_num(s), _num(label)):
                bad.append(f"trace label of item {t} (data row {t} of the stream) is "
                           f"{label!r} but the stream has {class_value(s)!r}")
    # a record verifies what was run; a label check added later must not fail old records
    stream = make_stream(incumbent, candidate, trace_labels, judge=judge, slices=slices,
                         check_fractions=False)
    res = run_stream(stream, cfg)
    got = res.to_dict()
    got["trace"] = [[e.t, e.pi, e.label] for e in res.trace]
    # every outcome, and the settings the record repeats beside `config` (epsilon, delta,
    # delta0, delta1, pi_min, routing, seed): a reader takes them at their word
    for key in got:
        if key not in rec:  # a reader must not be left to guess (a slice's regression)
            bad.append(f"the record lacks `{key}` (recomputed {_short(got[key])})")
        elif not _same(_num(rec[key]), _num(got[key])):
            bad.append(f"`{key}`: record says {_short(rec[key])}, recomputed {_short(got[key])}")
    if "audit_project" in rec:
        bad.extend(_project_problems(rec, cfg, n))
    return Verification(tuple(bad), got)


def _project_problems(rec: Record, cfg: AuditConfig, n: int) -> list[str]:
    """An audit project's block must repeat the record's settings and columns, its
    batches must tile the stream, its events be numbered 1..m, and a chain's delta be
    the ledger's delta_k.  (Its batch hashes and the annotators in its log are what the
    project stored; the trace, checked above, is what the verdict rests on.)"""
    project = rec["audit_project"]
    out: list[str] = []
    if not isinstance(project, dict):
        return ["`audit_project` is not a JSON object"]
    for key, value in (("config", rec["config"]), ("judge_column", rec.get("judge_column")),
                       ("slice_column", rec.get("slice_column"))):
        if key not in project:
            out.append(f"`audit_project` lacks `{key}`")
        elif not _same(_num(project[key]), _num(value)):
            out.append(f"`audit_project.{key}`: record says {_short(project[key])}, but the "
                       f"record's `{key}` is {_short(value)}")
    try:
        spans = [(int(b["first_item"]), int(b["items"])) for b in project["batches"]]
        seqs = [int(e["seq"]) for e in project["events"]]
    except (KeyError, TypeError, ValueError):
        return out + ["`audit_project` batches or events are unreadable"]
    starts = [sum(k for _, k in spans[:i]) for i in range(len(spans))]
    if [f for f, _ in spans] != starts or sum(k for _, k in spans) != n:
        out.append(f"`audit_project.batches` do not tile the stream's {n:,} items "
                   f"(first item, items: {spans[:6]})")
    if seqs != list(range(1, len(seqs) + 1)):
        out.append("`audit_project.events` are not numbered 1, 2, ..., m: events were "
                   "removed, reordered or renumbered")
    if project.get("chain") is not None:
        from .ledger import PromotionLedger

        try:
            want = PromotionLedger.start(float(project["lifetime_delta"])).delta_for(
                int(project["chain_k"]))
        except (KeyError, TypeError, ValueError, ParameterError):
            want = None
        if want is None or not math.isclose(cfg.delta, want, rel_tol=1e-9):
            out.append(f"`config.delta` {cfg.delta:g} is not the delta of audit "
                       f"{project.get('chain_k')!r} in a chain of lifetime delta "
                       f"{project.get('lifetime_delta')!r}")
    return out


def _short(v: object, limit: int = 160) -> str:
    text = repr(v)
    return text if len(text) <= limit else text[:limit] + "...]"


def _num(v: Any) -> Any:
    """A JSON value with numbers written as text read as numbers, to compare values."""
    if isinstance(v, list):
        return [_num(x) for x in v]
    if isinstance(v, dict):
        return {k: _num(x) for k, x in v.items()}
    if isinstance(v, str):
        try:
            f = float(v)
            return int(f) if f.is_integer() else f
        except ValueError:
            return v
    return v
