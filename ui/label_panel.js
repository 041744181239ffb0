// The labelling panel (ui/label_panel.py): the row to label, its class keys, Skip and
// Undo, run in the browser.  A key press is answered here, at once: the row the server
// sent for that answer in advance (a Session is a pure transition, so it knows the next
// row after each answer) is drawn, and the answer goes to the server, which appends it
// to the store with the view's sequence number.  The store stays the only truth: an
// answer the server refused is said, and the server's state drawn.
//
// Timing a person lives here, on the browser's clock: a press counts only for a row that
// has been painted for at least `guard_ms` (from the first animation frame after it was
// drawn); a quicker one (a key pressed twice) is refused and said, never applied to the
// row that replaced the one the person read.
//
// One keydown listener per mounted panel: Streamlit calls this module's function again on
// every run that sends new data, so the state lives in a WeakMap keyed by the panel's
// root (stable while it is mounted), and the cleanup Streamlit keeps (the latest one)
// removes the listener only if no newer call has come since.

const PANELS = new WeakMap();
const CLIENT = (globalThis.crypto && crypto.randomUUID) ? crypto.randomUUID()
  : String(Math.random()).slice(2) + String(Date.now());
let PRESSES = 0;  // press ids are unique for the page's life, across remounts of the panel
const RESEND_MS = 1000;  // an answer not acknowledged by then is sent again
const SETTLE_MS = 900;   // idle this long after the last acknowledgement: refresh the page

function deepActive() {
  let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  return a;
}

function typing() {
  const a = deepActive();
  if (!a) return false;
  const t = a.tagName;
  // a closed select box keeps the focus after a choice (the project, the chart's
  // reference) but takes no typing: the keys are the panel's
  if (t === "INPUT" && a.getAttribute("role") === "combobox"
      && a.getAttribute("aria-expanded") !== "true") return false;
  return t === "INPUT" || t === "TEXTAREA" || t === "SELECT" || a.isContentEditable;
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function keyName(k) {
  return k.length === 1 ? k.toUpperCase() : k;
}

// ------------------------------------------------------------------ drawing
function drawRow(p, view, why) {
  p.shown = view;
  const box = p.rowBox;
  box.replaceChildren();
  const row = view.row;
  if (!row) {
    box.setAttribute("data-row-id", "");
    box.append(el("div", "cl-wait", view.wait || "Saving your answers ..."));
    p.paintedAt = Infinity;
  } else {
    box.setAttribute("data-row-id", row.key);
    box.append(el("h3", "cl-title", row.title));
    const grid = el("div", "cl-grid");
    const left = el("div", "cl-left");
    for (const [name, text] of row.fields) {
      const line = el("div", "cl-field");
      line.append(el("span", "cl-name", name + ": "), el("span", "cl-value", text));
      left.append(line);
    }
    for (const [name, src] of row.images) {
      left.append(el("div", "cl-name", name + ":"));
      const img = el("img", "cl-img");
      img.alt = name;
      img.src = src;
      left.append(img);
    }
    // an audit item's routing, judge and slice: below its content, which is what the
    // annotator judges
    for (const [name, text] of row.meta || []) {
      const line = el("div", "cl-field cl-meta");
      line.append(el("span", "cl-name", name + ": "), el("span", "cl-value", text));
      left.append(line);
    }
    grid.append(left);
    if (row.table) {
      const t = el("table", "cl-table");
      const head = el("tr");
      for (const h of row.table.head) head.append(el("th", "", h));
      t.append(head);
      for (const r of row.table.rows) {
        const tr = el("tr");
        for (const c of r) tr.append(el("td", "", c));
        t.append(tr);
      }
      grid.append(t);
    }
    box.append(grid);
    p.paintedAt = Infinity;  // not on screen yet: every press is too quick
    const token = ++p.drawToken;
    requestAnimationFrame(() => {
      if (p.drawToken === token) p.paintedAt = performance.now();
    });
  }
  p.draws += 1;
  p.root.host && p.root.host.setAttribute("data-draws", String(p.draws));
  p.lastDraw = why;
  drawButtons(p);
}

function drawButtons(p) {
  const d = p.data;
  const bar = p.buttons;
  bar.replaceChildren();
  const live = d.enabled && p.shown && p.shown.row;
  for (const a of d.answers) {
    const b = el("button", a.id === "skip" ? "cl-btn cl-skip" : "cl-btn cl-class",
                 a.label + (a.key ? "  [" + keyName(a.key) + "]" : ""));
    b.type = "button";
    b.disabled = !live || (a.id === "skip" && p.shown.row && p.shown.row.no_skip);
    b.setAttribute("data-answer", a.id);
    b.addEventListener("click", (e) => press(p, a.id, e.timeStamp));
    bar.append(b);
  }
  p.undoNote.textContent = d.undo ? (d.undo.note || "") : "";
  if (!d.undo) return;  // a panel without Undo (the blind review)
  const u = el("button", "cl-btn cl-undo",
               "Undo last label" + (d.undo.key ? "  [" + keyName(d.undo.key) + "]" : ""));
  u.type = "button";
  u.disabled = !d.enabled || !d.undo.enabled;
  u.title = d.undo.help || "";
  u.setAttribute("data-answer", "undo");
  u.addEventListener("click", (e) => press(p, "undo", e.timeStamp));
  bar.append(u);
}

function say(p, text, kind) {
  p.msg.textContent = text || "";
  p.msg.className = "cl-msg" + (kind ? " cl-" + kind : "");
  p.msg.setAttribute("data-kind", kind || "");
}

function drawStatus(p) {
  const pending = p.outbox;
  p.status.setAttribute("data-pending", String(pending.length));
  p.status.setAttribute("data-saved", String(p.saved));
  p.status.setAttribute("data-refused", String(p.refused));
  const parts = [];
  if (pending.length) {
    parts.push("Saving: " + pending.map(x => x.what).join(", ") + " ...");
  }
  if (p.lastSaved) parts.push("Saved: " + p.lastSaved + ".");
  p.status.textContent = parts.join("  ");
}

// ------------------------------------------------------------------ presses
function send(p) {
  // while the whole page reruns (a refresh), a trigger of the panel's fragment is
  // dropped by Streamlit: the answers wait for the run's data (`reconcile` sends them)
  if (p.refreshing && performance.now() - p.refreshing < 5000) return;
  p.refreshing = 0;
  const presses = p.outbox.map(({ what, ...rest }) => rest);
  p.sentAt = performance.now();
  p.setTrigger("presses", { client: p.client, presses, sent: ++p.sends });
}

// `at`: when the person pressed (the event's time stamp, on the clock of
// performance.now()), not when this runs: a busy page handles a key queued behind a long
// task a second later, and the guard is about the person's gap, not the handler's.
function press(p, id, at) {
  const d = p.data;
  if (!d.enabled) {
    say(p, d.disabled_text, "refused");
    return false;
  }
  if (id === "undo") {
    if (!d.undo) return false;
    if (!d.undo.enabled) { say(p, d.undo.help, "refused"); return false; }
    if (p.outbox.length) {
      say(p, "Undo waits until your answers are saved: press it again in a moment.", "refused");
      return false;
    }
    const v = p.shown;
    p.outbox.push({ id: p.client + ":" + (++PRESSES), kind: "undo", seq: v.seq, what: "undo" });
    drawRow(p, { row: null, seq: v.seq, next: null, wait: "Undoing your last label ..." },
            "undo");
    say(p, "");
    send(p);
    drawStatus(p);
    return true;
  }
  const v = p.shown;
  if (!v || !v.row) {
    say(p, "Wait for the next row: that press saved nothing.", "refused");
    p.refused += 1;
    return false;
  }
  const seen = (Number.isFinite(at) ? at : performance.now()) - p.paintedAt;
  if (!(seen >= d.guard_ms)) {
    p.refused += 1;
    say(p, "Too quick: " + v.row.title + " had been on screen for "
        + (Number.isFinite(seen) ? Math.max(0, Math.round(seen)) + " ms" : "no time")
        + ", under " + d.guard_ms + " ms, so that press saved nothing (a key pressed twice?). "
        + "Read the row and press again.", "refused");
    drawStatus(p);
    return false;
  }
  const answer = d.answers.find(a => a.id === id);
  if (!answer || (id === "skip" && v.row.no_skip)) return false;
  const next = v.next ? v.next[id] : undefined;
  if (next === undefined) {  // one answer ahead of the server already: wait for it
    p.refused += 1;
    say(p, "Your previous answer is still being saved; that press saved nothing. Press "
        + "again in a moment.", "refused");
    drawStatus(p);
    return false;
  }
  const entry = { id: p.client + ":" + (++PRESSES),
                  kind: id === "skip" ? "skip" : (d.kind || "label"),
                  answer: id, row: v.row.key, seq: v.seq,
                  what: v.row.title + " = " + answer.label };
  if (answer.value !== undefined) entry.value = answer.value;  // checked by the server
  // the row this press puts on screen: in a team it becomes this annotator's to answer
  if (next && next.row) entry.ahead = next.row.key;
  p.outbox.push(entry);
  if (next && next.row) {
    drawRow(p, { row: next.row, seq: v.seq + 1, next: null }, "ahead");
  } else {
    drawRow(p, { row: null, seq: v.seq + 1, next: null,
                 wait: (next && next.wait) || "Saving your answer ..." }, "ahead");
  }
  say(p, "");
  send(p);
  drawStatus(p);
  return true;
}

function onKey(p, e) {
  if (!(p.root.host || p.root).isConnected) { teardown(p); return; }
  if (e.defaultPrevented) return;  // another panel of the page took this key
  if (e.ctrlKey || e.metaKey || e.altKey || e.repeat || typing()) return;
  const d = p.data;
  const k = keyName(e.key);
  let id = null;
  for (const a of d.answers) if (a.key && keyName(a.key) === k) id = a.id;
  if (d.undo && d.undo.key && keyName(d.undo.key) === k) id = "undo";
  if (id === null) return;
  if (id !== "undo" && !(p.shown && p.shown.row) && !p.outbox.length) {
    return;  // no row to answer (the session is done): the key is the page's (reviews)
  }
  e.preventDefault();
  e.stopImmediatePropagation();  // one key, one panel (the label panel and the review's)
  press(p, id, e.timeStamp);
}

// ------------------------------------------------------------------ the server's word
function reconcile(p) {
  const d = p.data;
  p.resends = 0;  // the server is answering
  if (p.refreshing && d.run !== p.lastRun) {  // the page's run is over: send what waits
    p.refreshing = 0;
    if (p.outbox.length) setTimeout(() => send(p), 0);
  }
  p.lastRun = d.run;
  const results = d.client === p.client ? d.results : {};
  let refusedText = null;
  const kept = [];
  for (const x of p.outbox) {
    const r = results[x.id];
    if (r === undefined) { kept.push(x); continue; }
    if (r.ok) {
      p.saved += 1;
      p.lastSaved = x.kind === "undo" ? "" : x.what;  // an undo took the last one back
      p.unsettled = true;
    } else if (refusedText === null) {
      refusedText = r.text;
      p.refused += 1;
    }
  }
  p.outbox = refusedText === null ? kept : [];  // later answers rested on the refused one
  if (refusedText !== null) say(p, refusedText, "refused");
  const server = { row: d.row, seq: d.seq, next: d.next, wait: d.wait };
  if (p.outbox.length && p.shown) {
    // answers in flight: the row shown is ahead of this data; learn the next rows when
    // this data is the state the row shown assumed
    if (server.seq === p.shown.seq && server.row && p.shown.row
        && server.row.key === p.shown.row.key) p.shown.next = server.next;
    drawStatus(p);
    return;
  }
  if (p.shown && p.shown.row && server.row && p.shown.row.key === server.row.key) {
    // the same row (at the same view, or a newer one that did not move it: a budget
    // extended, a row queued for review): it stays painted and its time counts on
    p.shown = { row: server.row, seq: server.seq, next: server.next };
    drawButtons(p);
  } else {
    const moved = p.shown && p.shown.row && refusedText === null && p.lastDraw !== "undo";
    drawRow(p, server, p.shown ? "server" : "first");
    if (moved && server.row) {
      say(p, "The project moved on since that row was drawn (another tab or annotator): "
          + "this is the row to label now.", "info");
    }
  }
  drawStatus(p);
}

function tick(p) {
  if (p.dead) return;
  const now = performance.now();
  const refreshing = p.refreshing && now - p.refreshing < 5000;
  if (p.outbox.length && !refreshing && now - p.sentAt > RESEND_MS) {  // a trigger lost
    // twice unanswered: the server may have restarted, and a fresh session knows no
    // fragment, so the panel's triggers go nowhere: wake the whole page (its sidebar
    // component, `label_panel_wake`), which draws the fragment anew, then send again
    p.resends += 1;
    if (p.resends >= 2 && now - p.wokeAt > 10000 && globalThis.__certlibPanelWake) {
      p.wokeAt = now;  // once per outage: a page run that takes long is not interrupted
      globalThis.__certlibPanelWake();
    }
    send(p);
  }
  if (!p.outbox.length && p.unsettled && p.data.refresh !== false
      && now - p.sentAt > SETTLE_MS) {
    p.unsettled = false;  // quiet now: let the rest of the page catch up (chart, log)
    p.refreshing = now;
    p.setTrigger("refresh", ++p.refreshes);
  }
}

function teardown(p) {
  if (p.dead) return;
  p.dead = true;
  if (p.root.host) p.root.host.setAttribute("data-torn-down", "1");
  document.removeEventListener("keydown", p.onKey, true);
  clearInterval(p.timer);
  PANELS.delete(p.root);
}

export default function (component) {
  const { parentElement, data, setTriggerValue } = component;
  let p = PANELS.get(parentElement);
  if (!p) {
    const q = (s) => parentElement.querySelector(s);
    p = { root: parentElement, client: CLIENT, shown: null, paintedAt: Infinity,
          outbox: [], sends: 0, resends: 0, refreshing: 0, lastRun: null, sentAt: 0, wokeAt: -1e9,
          refreshes: 0, saved: 0, refused: 0,
          drawToken: 0, draws: 0, gen: 0, dead: false, unsettled: false, lastSaved: "",
          rowBox: q(".cl-row"), buttons: q(".cl-buttons"), msg: q(".cl-msg"),
          status: q(".cl-status"), undoNote: q(".cl-undo-note") };
    p.onKey = (e) => onKey(p, e);
    document.addEventListener("keydown", p.onKey, true);  // exactly one per panel
    p.timer = setInterval(() => tick(p), 250);
    PANELS.set(parentElement, p);
    if (parentElement.host) parentElement.host.setAttribute("data-client", CLIENT);
  }
  p.setTrigger = setTriggerValue;
  p.data = data;
  const gen = ++p.gen;
  reconcile(p);
  return () => { if (p.gen === gen) teardown(p); };
}
