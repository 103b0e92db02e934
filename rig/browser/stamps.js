// Injected before any page script: stamps what a person sees, per turn, in epoch milliseconds
// (performance.timeOrigin + performance.now(), the clock the target's `*_ms` fields use too).
// A turn begins with a click on `send` or `regenerate`; only elements that did not exist at that moment
// count, so earlier answers on the page never stamp a new turn; a UI that re-uses its elements for the
// new turn (keyless lists) is caught by counting: one more answer with text than at the click is the new
// one. The stamp is taken in the mutation callback, i.e. when the text is in the DOM, before the next paint.
(() => {
  const S = __RIG_SELECTORS__;
  const now = () => performance.timeOrigin + performance.now();
  const watched = [S.status, S.answer, S.done, S.run_id].filter(Boolean);
  const turns = [];
  let stale = new WeakSet();
  window.__rig = { turns, origin: performance.timeOrigin, changed_ms: now() };

  let before = {};
  const withText = (sel) => Array.from(document.querySelectorAll(sel)).filter((n) => n.textContent.trim()).length;

  function begin(kind) {
    stale = new WeakSet();
    for (const sel of watched) document.querySelectorAll(sel).forEach((n) => stale.add(n));
    before = { status: withText(S.status), answer: withText(S.answer), done: document.querySelectorAll(S.done).length };
    turns.push({ kind, send_ms: now(), status_ms: null, status_text: null, answer_ms: null,
                 done_ms: null, state: null, run_id: null });
  }

  function fresh(sel) {
    return Array.from(document.querySelectorAll(sel)).filter((n) => !stale.has(n));
  }

  function answered() {
    return fresh(S.answer).some((x) => x.textContent.trim()) || withText(S.answer) > before.answer;
  }

  function check() {
    const t = turns[turns.length - 1];
    if (!t) return;
    const at = now();
    if (t.done_ms !== null) {  // some UIs show the end-of-turn controls a moment before the text they end
      if (t.answer_ms === null && answered()) t.answer_ms = at;
      return;
    }
    if (t.run_id === null && S.run_id) {
      const n = fresh(S.run_id).find((x) => x.textContent.trim());
      if (n) t.run_id = n.textContent.trim();
    }
    if (t.status_ms === null) {
      const n = fresh(S.status).find((x) => x.textContent.trim());
      if (n || withText(S.status) > before.status) {
        t.status_ms = at;
        const shown = n || Array.from(document.querySelectorAll(S.status)).pop();
        t.status_text = shown ? shown.textContent.trim().slice(0, 120) : null;
      }
    }
    if (t.answer_ms === null && answered()) {
      t.answer_ms = at;
    }
    const all = document.querySelectorAll(S.done);
    const d = fresh(S.done)[0] || (all.length > before.done ? all[all.length - 1] : null);
    if (d) { t.done_ms = at; t.state = d.getAttribute(S.done_state_attr); }
  }

  document.addEventListener("click", (ev) => {
    const target = ev.target instanceof Element ? ev.target : null;
    if (!target) return;
    if (target.closest(S.send)) begin("send");
    else if (S.regenerate && target.closest(S.regenerate)) begin("regenerate");
  }, true);
  new MutationObserver(() => { window.__rig.changed_ms = now(); check(); }).observe(document, { subtree: true, childList: true, characterData: true,
                                                  attributes: true });
})();
