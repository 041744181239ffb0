"""Command line: ``certlib <command> POOL [options]`` (SPEC section 10)."""

from __future__ import annotations

import argparse
import json
import sys

from .errors import CertlibError

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="certlib",
        description="Exact certificates and budgets for selective model choice; "
        "certified no-regression audits for model updates.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    try:
        from .audit import cli as audit_cli
    except ImportError:  # the audit package is optional while it is being built
        audit_cli = None
    if audit_cli is not None:
        audit_cli.register(sub)
    return parser


def emit(args, payload: dict, table: str) -> None:
    """Print the JSON object (``--json``) or the readable table."""
    if getattr(args, "json", False):
        json.dump(payload, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(table.rstrip("\n") + "\n")


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CertlibError as exc:
        print(f"certlib: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
