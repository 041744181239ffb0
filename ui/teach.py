"""What every Teach page shares for a classroom: a presentation mode kept in the address,
Step / Back / Reset with keyboard keys, and exports of the chart and its numbers.

The keys are read in the browser, where the teacher presses them (a small component
listening on the page): → and Space step, ← steps back, Home resets (PageDown and PageUp
too, the keys a presenter's clicker sends).  Each press sends
the step it leads to, counted from the step the browser shows, so two quick presses are
two steps even while the server is still drawing the first (a press is never lost to a
rerun, and never counted twice).
"""

from __future__ import annotations

import streamlit as st

from ui.state import PRESENT, _url_setting

# the numbers a lesson is about and the chart's text, in presentation mode: readable from
# the back of a room (the fonts the teaching issue asked for: >= 24 px, >= 18 px)
NUMBERS_PX = 28
CHART_PX = 20
CHART_HEIGHT = 320  # px: with the title, the buttons and two lines of numbers, 720 px

_KEYS_JS = """
const S = globalThis.__certlibStepKeys || (globalThis.__certlibStepKeys = new Map());
// → and Space step, ← steps back; PageDown / PageUp too, the keys a presenter's clicker
// sends
const STEP = { ArrowRight: 1, " ": 1, PageDown: 1, ArrowLeft: -1, PageUp: -1 };

function ignored(e) {
  if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey || e.isComposing) return true;
  const t = e.composedPath ? e.composedPath()[0] : e.target;
  if (!t || !t.closest) return false;
  // a box the teacher types into, a slider the arrows move, an open list: theirs
  if (t.closest('textarea, select, [contenteditable=""], [contenteditable="true"], ' +
                '[role="slider"], [role="listbox"], [role="option"], [role="menu"]')) {
    return true;
  }
  if (t.tagName !== "INPUT") return false;
  // a switch or a check box keeps the focus after a click (the presentation toggle),
  // and a closed select box after a choice (Figure 1's labels): they take no typing,
  // so the keys are the figure's (Space would flip the switch)
  const type = (t.getAttribute("type") || "text").toLowerCase();
  if (type === "checkbox" || type === "radio") return false;
  return !(t.getAttribute("role") === "combobox" && t.getAttribute("aria-expanded") !== "true");
}

function onKey(s, e) {
  if (e.defaultPrevented || ignored(e)) return;
  let next;
  if (e.key === "Home") next = s.first;
  else if (e.key in STEP) next = Math.min(s.last, Math.max(s.first, s.t + STEP[e.key]));
  else return;
  e.preventDefault();  // no scrolling, no click on a focused button: one step per press
  e.stopPropagation();
  if (next === s.t) return;
  s.t = next;
  s.sent += 1;
  s.host && s.host.setAttribute("data-step", String(next));
  s.send("target", { t: next, id: s.sent, client: s.client });
}

export default function ({ parentElement, data, setTriggerValue }) {
  let s = S.get(data.key);
  if (!s) {
    s = { sent: 0, client: Math.random().toString(36).slice(2) };
    s.onKey = (e) => onKey(s, e);
    document.addEventListener("keydown", s.onKey, true);
    S.set(data.key, s);
  }
  s.send = setTriggerValue;
  s.first = data.first;
  s.last = data.last;
  s.host = parentElement.host || null;
  // the server's step, unless a press it has not seen yet is on its way
  if (data.client !== s.client || data.id >= s.sent) {
    s.t = data.t;
    if (data.client !== s.client) s.sent = 0;
  }
  s.host && s.host.setAttribute("data-step", String(s.t));
  const mine = s.onKey;
  return () => {
    if (S.get(data.key) === s && s.onKey === mine && !parentElement.isConnected) {
      document.removeEventListener("keydown", s.onKey, true);
      S.delete(data.key);
    }
  };
}
"""
_keys = st.components.v2.component("certlib.step_keys", html="<span></span>", js=_KEYS_JS)


def presenting() -> bool:
    """Whether presentation mode is on (``?present=1`` in the address, or the toggle)."""
    kept = st.session_state.setdefault("_sticky", {})
    _url_setting(PRESENT, kept)
    return bool(kept.get(PRESENT, 0))


def _set_present(widget_key: str) -> None:
    st.session_state.setdefault("_sticky", {})[PRESENT] = int(bool(st.session_state[widget_key]))
    _url_setting(PRESENT, st.session_state["_sticky"])


def teaching_header(title: str, page: str, steps: bool = True) -> bool:
    """The page's title with the presentation-mode toggle beside it; in presentation
    mode, the sidebar and Streamlit's header hidden, the title shorter and the page's
    numbers in large type.  ``steps``: the page has Step keys (its help names them).
    Returns whether presentation mode is on."""
    on = presenting()
    row = st.container(horizontal=True, vertical_alignment="center")
    if on:
        row.markdown(f"### {title}", width="stretch")
    else:
        row.title(title, width="stretch")
    wkey = f"{page}_present"
    st.session_state[wkey] = on
    row.toggle("Presentation mode", key=wkey, on_change=_set_present, args=(wkey,),
               help="For a projector: the chart first and full width, large type, the "
                    "sidebar closed. Kept in the address (?present=1), so a link opens "
                    "the page this way." + (" Keys: → or Space steps, ← steps back, Home "
                                            "resets." if steps else ""))
    if on:
        st.html(f"""<style>
section[data-testid="stSidebar"], header[data-testid="stHeader"] {{ display: none; }}
div[data-testid="stMainBlockContainer"], .block-container {{
  padding-top: 2.6rem; padding-bottom: 1rem; max-width: 100%; }}
.st-key-teach_numbers p, .st-key-teach_numbers li {{ font-size: {NUMBERS_PX}px;
  line-height: 1.3; }}
.st-key-teach_numbers [data-testid="stMetricValue"] {{ font-size: {NUMBERS_PX + 8}px; }}
.st-key-teach_numbers [data-testid="stMetricLabel"] p {{ font-size: 20px; }}
.st-key-teach_numbers [data-testid="stAlert"] p,
.st-key-teach_numbers [data-testid="stAlert"] li,
.st-key-teach_numbers [data-testid="stCaptionContainer"] p {{ font-size: 18px;
  line-height: 1.4; }}
</style>""")
    return on


def parse_step(text: str) -> int:
    """A step from the address (``?fig2_t=3``): ASCII digits only, else ValueError (the
    page then starts at its default, `ui.state.url_state`)."""
    if not (text.isascii() and text.isdigit()):
        raise ValueError(text)
    return int(text)


def parse_label(text: str) -> int:
    """A binary label from the address, 0 or 1, else KeyError."""
    return {"0": 0, "1": 1}[text]


def _move(key: str, t: int, first: int, last: int) -> None:
    st.session_state[key] = min(last, max(first, t))


def _bump(key: str, delta: int, first: int, last: int) -> None:
    _move(key, st.session_state.get(key, first) + delta, first, last)


def _from_keys(key: str, first: int, last: int) -> None:
    target = st.session_state.get(f"{key}_keys", {}).get("target")
    if target:
        _move(key, int(target["t"]), first, last)
        st.session_state[f"{key}_keys_seen"] = (target.get("client"), int(target["id"]))


def step_controls(key: str, last: int, first: int = 0, what: str = "label") -> int:
    """Step, Back and Reset buttons and the keyboard keys (→ / Space / PageDown,
    ← / PageUp, Home) moving the step kept in session-state ``key`` between ``first``
    and ``last``; returns the step.  Call it inside the fragment that draws the step, so
    a step redraws only it."""
    ss = st.session_state
    t = min(last, max(first, int(ss.get(key, first))))
    ss[key] = t
    client, seen = ss.get(f"{key}_keys_seen", (None, 0))
    _keys(key=f"{key}_keys", height=0,
          data={"key": key, "t": t, "first": first, "last": last, "id": seen,
                "client": client},
          on_target_change=lambda: _from_keys(key, first, last))
    row = st.container(horizontal=True, vertical_alignment="center")
    row.button("Step", key=f"{key}_step", on_click=_bump, args=(key, 1, first, last),
               disabled=t >= last, type="primary",
               help=f"Read one more {what} (→, Space or PageDown)")
    row.button("Back", key=f"{key}_back", on_click=_bump, args=(key, -1, first, last),
               disabled=t <= first, help="One step back (← or PageUp)")
    row.button("Reset", key=f"{key}_reset", on_click=_move, args=(key, first, first, last),
               disabled=t == first, help="Back to the start (Home)")
    return t


def plot_config(filename: str) -> dict:
    """Plotly's chart menu set for slides: the camera button saves the chart as a PNG at
    three times its size (drawn by plotly.js in the browser: no network, no server
    package)."""
    return {"displaylogo": False,
            "toImageButtonOptions": {"format": "png", "filename": filename, "scale": 3}}


def chart_fonts(fig, on: bool, height: int = CHART_HEIGHT) -> None:
    """Large chart text in presentation mode (axis titles and ticks, legend,
    annotations, text on markers) and a height that keeps the chart and its numbers
    above the fold at 1280 x 720; nothing when ``on`` is false."""
    if not on:
        return
    big = dict(size=CHART_PX)
    fig.update_layout(font=big, legend_font=big, height=height, margin=dict(t=30, b=10))
    fig.update_xaxes(tickfont=big, title_font=big)
    fig.update_yaxes(tickfont=big, title_font=big)
    fig.update_annotations(font_size=CHART_PX)
    for trace in fig.data:
        if "text" in (getattr(trace, "mode", None) or ""):
            trace.textfont = big


def light_table(columns: dict, container=None) -> None:
    """A small table (a dict of columns) as a Markdown table: inside a step's fragment a
    data grid is what a slow laptop spends most of a step redrawing (Figure 2 at 4x CPU
    throttling: a 496 ms median step with it, 204 ms without)."""
    head = list(columns)
    rows = zip(*columns.values())
    text = "| " + " | ".join(str(h) for h in head) + " |\n|" + "---|" * len(head) + "\n"
    text += "\n".join("| " + " | ".join(str(v) for v in r) + " |" for r in rows)
    (container or st).markdown(text)


def numbers_download(text: str, filename: str, label: str = "Numbers (text)") -> None:
    """A button saving the step's numbers as plain text, for a slide's notes."""
    st.download_button(label, text, file_name=filename, mime="text/plain",
                       key=f"dl_{filename}", on_click="ignore",
                       help="The numbers of the step shown, as plain text.")
