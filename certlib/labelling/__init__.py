"""Labelling: the policy's next row, the stopping test after each label, and the
record of who labelled what (paper 000, section 5).

`session` the pure state of one labelling run; `replay` a whole run on a labelled
pool; `progress` what a project has read so far; `store` the SQLite label store
(`events` its append-only log, `reviews` the second annotator's blind review);
`label_errors` how many wrong labels a certificate survives; `record` the evidence
record and its verifier; `saved_pools` uploaded pool files kept under their hash.
The row-choosing policies are in `certlib.policies`.
"""
