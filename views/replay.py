"""Replay a policy on a labelled pool, row by row: play, pause, step, with the
bounds chart of the Label page, so a lead can watch a policy before paying for labels.

The whole replay is computed once by the library (`certlib.teaching.bound_traces.replay_trace`,
cached by the pool's hash and the settings); the page only picks a step and draws it.
The step and the play state live in st.session_state; the animated panel is an
`st.fragment` that reruns on a timer only while playing.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from certlib.teaching.bound_traces import replay_trace
from certlib.errors import CertlibError
from ui.cache import POOL_HASH, pool_key
from ui.inputs import policy_input, seed_input, tolerance_input
from ui.links import page_link
from ui.pool_picker import choose_pool
from ui.state import RULE, sticky
from ui.text import plain, plot_text

TICK_SECONDS = 0.5
SPEEDS = [1, 2, 5, 10, 25]  # labels per tick

st.title("Replay a policy, label by label")
st.caption("On a pool whose labels are all known, watch which rows a policy would ask for and "
           "how the exact bounds close, before paying for any label.")

pool, pool_label = choose_pool(default="demo")
if pool is None:
    st.stop()
if not pool.fully_labelled:
    missing = pool.n - pool.n_labelled
    st.warning(f"The replay needs every label: {missing:,} of {pool.n:,} rows of this pool have "
               "no label. Choose a fully labelled pool in the sidebar, or label this one on the "
               "Label page.")
    st.caption("A labelling project stops once the choice is certified, so it leaves rows "
               "unlabelled and cannot be replayed. What it read, and how many of those labels "
               "would have sufficed (its hindsight), is on the Certificate page under "
               "*Labels from*.")
    page_link("views/certificate.py", icon=":material/workspace_premium:",
              label="Certificate: the hindsight of a labelling project")
    st.stop()

# ------------------------------------------------------------------ settings
sb = st.sidebar
sb.header("Replay")
policy = policy_input(sb, "rp_policy")
rules = ["shared", "separate"] + (["centered"] if pool.is_binary or pool.shared_prediction
                                  else [])
rule = sb.selectbox("Stopping rule", rules, **sticky("rp_rule", "shared", RULE, rules, index=True))
tol = tolerance_input(sb, "rp_tol")
seed = seed_input(sb, "rp_seed")
sb.select_slider("Speed (labels per tick while playing)", SPEEDS,
                 **sticky("rp_speed", 1, options=SPEEDS))


@st.cache_data(show_spinner="Replaying the policy ...", max_entries=32, hash_funcs=POOL_HASH)
def _trace(pool, policy: str, rule: str, tolerance: float, seed: int):
    return replay_trace(pool, policy=policy, rule=rule, tolerance=tolerance, seed=seed)


try:
    trace = _trace(pool, policy, rule, tol, seed)
except CertlibError as exc:
    st.error(plain(exc))
    st.stop()
T = trace.T

# a new pool or new settings start the replay over, paused
signature = (pool_key(pool), policy, rule, tol, seed)
if st.session_state.get("rp_signature") != signature:
    st.session_state["rp_signature"] = signature
    st.session_state["rp_step"] = 0
    st.session_state["rp_playing"] = False
# the step outlives a visit to another page (the settings did not change meanwhile), but
# a replay left playing waits, paused, for the user to come back to it (app.py counts runs)
st.session_state["rp_step"] = min(max(int(sticky("rp_step", 0)["value"]), 0), T)
now = st.session_state.get("_run")
if now is not None and st.session_state.get("rp_run") != now - 1:
    st.session_state["rp_playing"] = False
st.session_state["rp_run"] = now

winner = pool.names[pool.winner()]
ref_key = "rp_ref"
if st.session_state.get(ref_key) not in pool.names:
    st.session_state[ref_key] = winner
sb.selectbox("Draw every bound against", list(pool.names), key=ref_key,
             help="A fixed reference candidate (default: the full-pool winner), so the chart "
                  "does not flip when the best guess changes.")
k = list(pool.names).index(st.session_state[ref_key])

within = "exactly" if trace.tolerance == 0 else f"within tau = {float(trace.tolerance):g}"
st.caption(f"{plain(policy)}, rule {rule}, seed {seed}: "
           + (f"certifies {plain(trace.selected)} {within} after {T:,} of {pool.n:,} labels."
              if trace.certified else
              f"reads {T:,} of {pool.n:,} labels without certifying ({trace.status[-1]}).")
           + f" Full-pool winner: {plain(winner)}.")


# ------------------------------------------------------------------ controls
def _step(delta: int) -> None:
    st.session_state["rp_step"] = min(max(st.session_state["rp_step"] + delta, 0), T)
    st.session_state["rp_playing"] = False


def _play() -> None:
    if st.session_state["rp_step"] >= T:
        st.session_state["rp_step"] = 0  # Play at the end starts over
    st.session_state["rp_playing"] = True


def _pause() -> None:
    st.session_state["rp_playing"] = False


def _reset() -> None:
    st.session_state["rp_step"] = 0
    st.session_state["rp_playing"] = False


def _status_text(t: int) -> str:
    gap = float(trace.excess[t])
    head = f"**After {t:,} of {T:,} labels:** "
    if trace.certified_at(t):
        return head + (f"{plain(trace.best_guess[t])} is certified {within} "
                       f"(worst-case gap {gap:.4g}).")
    return head + (f"best guess {plain(trace.best_guess[t])}, not certified "
                   f"({trace.status[t]}); worst-case AUGRC gap {gap:.4g}.")


def _chart(t: int):
    fig = go.Figure()
    palette = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1"]
    full = trace.rival_bounds(k)  # fixed axes: the chart does not rescale while playing
    lows = [v for lo, _ in full.values() for v in lo]
    highs = [v for _, hi in full.values() for v in hi]
    pad = 0.05 * (max(highs) - min(lows) or 1.0)
    mode = "lines+markers" if t < 2 else "lines"  # one point is no line: show it
    for i, (rival, (lo, hi)) in enumerate(trace.rival_bounds(k, t).items()):
        color = palette[i % len(palette)]
        fig.add_scatter(y=lo, mode=mode, name=f"{plot_text(rival)}: lower",
                        line={"color": color})
        fig.add_scatter(y=hi, mode=mode, name=f"{plot_text(rival)}: upper",
                        line={"color": color, "dash": "dot"})
    fig.add_hline(y=0, line_color="gray")
    fig.add_vline(x=t, line_color="#333", line_width=1)
    fig.add_annotation(x=t, y=1, yref="paper", yanchor="bottom", showarrow=False,
                       text=f"step {t}", xanchor="right" if 2 * t > T else "left")
    # above the plot area (never over a line), on the inner side (never clipped)
    fig.update_layout(height=360, margin={"t": 40, "b": 10}, xaxis_title="labels read",
                      yaxis_title=f"AUGRC(rival) − AUGRC({plot_text(pool.names[k])})",
                      # a margin past T: the certifying step is not on the frame
                      xaxis={"range": [-0.02 * max(T, 1), 1.04 * max(T, 1)]},
                      yaxis={"range": [min(lows) - pad, max(highs) + pad]},
                      legend={"orientation": "h", "y": -0.25}, uirevision="replay")
    return fig


playing = bool(st.session_state.get("rp_playing"))


@st.fragment(run_every=TICK_SECONDS if playing else None)
def panel() -> None:
    if playing and st.session_state["rp_playing"]:  # a timer tick: advance
        st.session_state["rp_step"] = min(st.session_state["rp_step"]
                                          + int(st.session_state["rp_speed"]), T)
        if st.session_state["rp_step"] >= T:
            st.session_state["rp_playing"] = False
    if st.session_state["rp_playing"] != playing:
        st.rerun()  # start or stop the timer: it is set when the fragment is defined
    buttons = st.container(horizontal=True)  # wraps on a narrow window
    t = st.session_state["rp_step"]
    buttons.button("Reset", key="rp_reset", on_click=_reset, disabled=t == 0 and not playing,
                   icon=":material/first_page:")
    buttons.button("Step back", key="rp_back", on_click=_step, args=(-1,), disabled=t == 0,
                   icon=":material/chevron_left:")
    buttons.button("Step", key="rp_fwd", on_click=_step, args=(1,), disabled=t >= T,
                   icon=":material/chevron_right:")
    if playing:
        buttons.button("Pause", key="rp_pause", on_click=_pause, type="primary",
                       icon=":material/pause:")
    else:
        buttons.button("Play", key="rp_play", on_click=_play, type="primary", disabled=T == 0,
                       icon=":material/play_arrow:",
                       help="Advance automatically to the end" + (" (starts over)" if t >= T
                                                                   else ""))
    st.slider("Step (labels read)", 0, max(T, 1), key="rp_step", disabled=T == 0,
              on_change=_pause)
    t = st.session_state["rp_step"]
    sticky("rp_step", 0)  # keep the step a tick or a button reached (fragment runs)

    box = st.success if trace.certified_at(t) else st.info
    box(_status_text(t))

    st.plotly_chart(_chart(t), width="stretch", key="rp_chart")
    st.caption(f"Exact bounds of each rival's AUGRC minus {plain(pool.names[k])}'s over every "
               "completion of the unread labels, up to this step. A candidate is certified when "
               "every lower bound against it clears zero (strictly for rivals earlier in the "
               "tie priority).")

    if t == 0:
        st.markdown("**No row read yet.** Press Step or Play.")
        return
    r = trace.rows[t - 1]
    label = pool.classes[pool.labels[r]]
    st.markdown(f"**Row just read (step {t:,}):** row_id {plain(pool.row_ids[r])}, "
                f"label {plain(label)}")
    st.dataframe(pd.DataFrame({
        "candidate": [str(c) for c in pool.names],
        "prediction": [str(pool.classes[c]) for c in pool.preds[:, r]],
        "correct": ["yes" if c == pool.labels[r] else "no" for c in pool.preds[:, r]],
        "confidence": [f"{v:.4g}" for v in pool.confs[:, r]],
    }), hide_index=True, width="stretch")


panel()

if T:
    with st.expander(f"All {T:,} rows read, in order (row ids)"):
        st.text(", ".join(str(x) for x in trace.order))
