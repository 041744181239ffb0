"""The pool and its exact bounds (paper 000, sections 2-3).

`pool` holds a fixed pool (predictions, confidence orders, labels); `weights` the
AUGRC weights as exact integers; `pair_terms` each row's contribution to a pair of
candidates; `bounds` the lower bounds and the stopping test on them; `derived_scores`
the confidences derived from class probabilities, bit for bit on every machine;
`pool_stats` descriptive statistics.  Nothing here reads a file or keeps state.
"""
