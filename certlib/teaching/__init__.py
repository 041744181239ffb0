"""Teaching: the papers' worked examples and figures, computed by the library.

`worked_examples` the small pools of paper 000's Figures 1-3 and section 4.2;
`bound_traces` the bounds as labels arrive (Figure 10); `theory` the theory
explorer's sweeps.
"""
