"""Certificates: which labels suffice, and the checks on them (paper 000, sections 4-6).

`prelabel` the bound before any label is read; `covering` the smallest sufficient
label set in hindsight (`covering_lp` the LP relaxation and HiGHS's MILP as hints,
`covering_exact` and `covering_search` the exact search that verifies them);
`certificate` the answer after any set of labels; `verification` the shared shape of
a record check.
"""
