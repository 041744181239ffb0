"""Benchmarks of certlib: every number the documentation quotes comes from one of them.

Run one with ``python -m bench NAME [args]`` from the repository root (``python -m bench``
lists them), or a module directly: ``python -m bench.bench_core --quick``.  Each bench
prints its figures and writes them into ``docs/results/NAME.md`` (`bench.results`), the
file the manual includes, so a rerun updates the manual.  certlib itself must be
installed (``pip install -e ".[test]"``); nothing here edits ``sys.path``.
"""
