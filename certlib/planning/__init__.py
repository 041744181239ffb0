"""Planning a budget from a pool's predictions (paper 000, section 6).

`budget_plan` the budget map over candidate pairs and tolerances; `label_forecast`
the forecast of labels a policy will read before the exact test stops it;
`budget_answer` what a budget of B labels buys, for sure and forecast, in one sentence;
`comparison` what the routes to a certificate cost on one fully labelled pool;
`accuracy_plan` the labels the accuracy choice needs beside AUGRC's (section 6.2).
"""
