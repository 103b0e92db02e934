// workbench web UI: login, papers, sessions, streamed answers, stop, regenerate, citations, export.
// Every element the rig touches carries a stable data-testid (see rig/selectors/workbench.yaml).
"use strict";

const API = "/api/v1";
const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
const state = { me: null, project: null, docs: [], sessionId: null, session: null, leaf: null, live: null,
                ended: new Map() };  // run id → how it ended, so the marker stays after a re-render

async function api(method, path, body) {
  const init = { method, credentials: "same-origin", headers: {} };
  if (body !== undefined) { init.headers["content-type"] = "application/json"; init.body = JSON.stringify(body); }
  const resp = await fetch(API + path, init);
  const text = await resp.text();
  const data = text ? JSON.parse(text) : null;
  if (!resp.ok) {
    const err = new Error((data && data.error && data.error.message) || resp.statusText);
    err.status = resp.status; err.code = data && data.error && data.error.code;
    throw err;
  }
  return data;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "testid") node.dataset.testid = v;
    else if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k.startsWith("data-")) node.setAttribute(k, v);
    else node[k] = v;
  }
  for (const c of children) node.append(c);
  return node;
}

function showError(where, err) {
  const box = $(where);
  box.textContent = err ? String(err.message || err) : "";
  box.hidden = !err;
}

// -- login / logout ------------------------------------------------------------------------------------
async function init() {
  try { state.me = await api("GET", "/me"); } catch (err) { state.me = null; }
  $("login-view").hidden = !!state.me;
  $("app-view").hidden = !state.me;
  if (!state.me) return;
  $("current-user").textContent = state.me.username;
  await loadProjects();
  await loadSessionList();
  const last = localStorage.getItem(`wb.last.${state.me.user_id}`);
  if (last) await openSession(last).catch(() => localStorage.removeItem(`wb.last.${state.me.user_id}`));
}

document.getElementById("login-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const form = ev.target;
  showError("login-error", null);
  try {
    await api("POST", "/auth/login", { username: form.username.value, password: form.password.value });
    form.password.value = "";
    showError("login-error", null);
    await init();
  } catch (err) { showError("login-error", err); }
});

$("logout").addEventListener("click", async () => {
  closeLive();
  try { await api("POST", "/auth/logout"); } catch (err) { /* already logged out */ }
  Object.assign(state, { me: null, sessionId: null, session: null, leaf: null });
  $("messages").replaceChildren();
  $("session-list").replaceChildren();
  $("citation-viewer").hidden = true;
  $("export-view").hidden = true;
  $("session-id").textContent = "";
  await init();
});

// -- projects, papers, sessions -----------------------------------------------------------------------
async function loadProjects() {
  const projects = await api("GET", "/projects");
  const select = $("project-select");
  select.replaceChildren(...projects.map((p) => el("option", { value: p.project_id, textContent: p.name || p.project_id })));
  if (projects.length) await selectProject(projects[0].project_id);
}

$("project-select").addEventListener("change", (ev) => selectProject(ev.target.value));

async function selectProject(projectId) {
  state.project = projectId;
  state.docs = await api("GET", `/projects/${projectId}/documents`);
  $("paper-list").replaceChildren(...state.docs.map((d) => {
    const usable = d.status === "ready" || d.status === "partial";
    return el("li", {},
      el("label", {}, el("input", { type: "checkbox", testid: "paper-checkbox", disabled: !usable,
                                    "data-doc-id": d.doc_id, "data-paper-id": d.paper_id || "" }),
         ` ${d.paper_id || ""} ${d.title || d.filename} (${d.status})`));
  }));
}

async function loadSessionList() {
  const sessions = await api("GET", "/sessions");
  $("session-list").replaceChildren(...sessions.map((s) => el("li", {},
    el("button", { testid: "session-item", "data-session-id": s.session_id, onclick: () => openSession(s.session_id),
                   textContent: `${s.title || "(空会话)"} · ${s.created_at.slice(0, 16)}` }))));
}

$("new-session").addEventListener("click", async () => {
  const scope = [...document.querySelectorAll('[data-testid="paper-checkbox"]:checked')].map((c) => c.dataset.docId);
  try {
    const opened = await api("POST", "/sessions", { project_id: state.project, scope });
    await openSession(opened.session_id);
    await loadSessionList();
  } catch (err) { showError("app-error", err); }
});

async function openSession(sessionId) {
  closeLive();
  state.session = await api("GET", `/sessions/${sessionId}`);
  state.sessionId = sessionId;
  state.leaf = null;
  localStorage.setItem(`wb.last.${state.me.user_id}`, sessionId);
  $("session-id").textContent = sessionId;
  $("send").disabled = false;
  $("export").disabled = false;
  render();
  const active = localStorage.getItem(`wb.active.${sessionId}`);
  if (active) {
    const run = await api("GET", `/runs/${active}`).catch(() => null);
    if (run && (run.state === "queued" || run.state === "running")) attach(active, run.branch_id);
    else localStorage.removeItem(`wb.active.${sessionId}`);
  }
}

// -- rendering the current branch ---------------------------------------------------------------------
function byId() { return new Map(state.session.messages.map((m) => [m.message_id, m])); }

function leafOf() {
  const msgs = state.session.messages;
  if (state.leaf) return state.leaf;
  if (state.session.current_leaf) return state.session.current_leaf;
  return msgs.length ? msgs[msgs.length - 1].message_id : null;
}

function pathTo(leaf) {
  const index = byId();
  const path = [];
  for (let m = index.get(leaf); m; m = m.parent_id ? index.get(m.parent_id) : null) path.unshift(m);
  return path;
}

function deepest(messageId) {
  const msgs = state.session.messages;
  let current = messageId;
  for (;;) {
    const kids = msgs.filter((m) => m.parent_id === current);
    if (!kids.length) return current;
    current = kids[kids.length - 1].message_id;
  }
}

function render() {
  const path = pathTo(leafOf());
  $("messages").replaceChildren(...path.map((m) => messageNode(m)));
}

function messageNode(m) {
  const node = el("div", { class: "message", testid: "message", "data-role": m.role, "data-message-id": m.message_id,
                           "data-branch-id": m.branch_id || "" });
  if (m.role === "user") { node.append(el("div", { class: "answer", textContent: m.content })); return node; }
  const siblings = state.session.messages.filter((s) => s.role === "assistant" && s.parent_id === m.parent_id);
  const at = siblings.findIndex((s) => s.message_id === m.message_id);
  const ended = state.ended.get(m.run_id);
  const meta = el("div", { class: "meta" },
    el("span", {}, "run ", el("span", { testid: "run-id", textContent: m.run_id || "" })),
    ended ? el("span", { testid: "run-state", "data-state": ended.state, textContent: ended.label })
          : el("span", { class: "saved", textContent: "已保存" }),
    el("span", { textContent: `分支 ` }, el("span", { testid: "branch-count", textContent: `${at + 1}/${siblings.length}` })));
  if (siblings.length > 1) {
    meta.append(el("button", { testid: "branch-prev", disabled: at === 0, textContent: "‹",
                               onclick: () => { state.leaf = deepest(siblings[at - 1].message_id); render(); } }),
                el("button", { testid: "branch-next", disabled: at === siblings.length - 1, textContent: "›",
                               onclick: () => { state.leaf = deepest(siblings[at + 1].message_id); render(); } }));
  }
  meta.append(el("button", { testid: "regenerate", textContent: "重新生成", onclick: () => regenerate(m) }));
  node.append(meta, el("div", { class: "answer", testid: "answer", textContent: m.content }), citationList(m.citations));
  return node;
}

function citationList(citations) {
  return el("div", { class: "citations", testid: "citations" }, ...(citations || []).map((c) =>
    el("button", { testid: "citation", "data-citation-id": c.citation_id, "data-page": c.page ?? "",
                   "data-doc-id": c.doc_id, onclick: () => openCitation(c),
                   textContent: `[${c.marker ?? "?"}] ${c.paper_id || c.doc_id}${c.page ? " p." + c.page : " (整份文件)"}` })));
}

// -- asking and streaming -----------------------------------------------------------------------------
document.getElementById("prompt-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const box = $("prompt-input");
  const content = box.value.trim();
  if (!content || !state.sessionId) return;
  const liveNode = liveMessage();
  const parent = pathTo(leafOf()).slice(-1)[0];
  $("messages").append(el("div", { class: "message", testid: "message", "data-role": "user" },
                          el("div", { class: "answer", textContent: content })), liveNode.node);
  box.value = "";
  try {
    const sent = await api("POST", `/sessions/${state.sessionId}/messages`,
                           { content, parent_id: parent ? parent.message_id : null });
    attach(sent.run_id, sent.branch_id, liveNode);
  } catch (err) {
    liveNode.state.dataset.state = "refused";
    liveNode.state.textContent = err.code || "refused";
    showError("app-error", err);
  }
});

function liveMessage() {
  const status = el("div", { class: "status", testid: "run-status" });
  const runId = el("span", { testid: "run-id" });
  const runState = el("span", { testid: "run-state", textContent: "…" });
  const reasoning = el("div", { class: "reasoning", testid: "reasoning" });
  const answer = el("div", { class: "answer", testid: "answer" });
  const node = el("div", { class: "message", testid: "message", "data-role": "assistant", "data-live": "true" },
    el("div", { class: "meta" }, el("span", {}, "run ", runId), runState), status, reasoning, answer);
  return { node, status, runId, state: runState, reasoning, answer };
}

function attach(runId, branchId, liveNode) {
  closeLive();
  const live = liveNode || liveMessage();
  if (!liveNode) $("messages").append(live.node);
  live.runId.textContent = runId;
  localStorage.setItem(`wb.active.${state.sessionId}`, runId);
  const source = new EventSource(`${API}/runs/${runId}/events`, { withCredentials: true });
  state.live = { runId, source, live, sessionId: state.sessionId };
  $("stop").disabled = false;
  source.addEventListener("status", (e) => { live.status.textContent = JSON.parse(e.data).text; });
  source.addEventListener("token", (e) => {
    const d = JSON.parse(e.data);
    (d.kind === "answer" ? live.answer : live.reasoning).append(d.text);
  });
  const end = (e) => {
    const d = JSON.parse(e.data);
    source.close();
    const label = `${d.state}${d.reason ? " / " + d.reason : ""}`;
    state.ended.set(runId, { state: d.state, label });
    live.state.dataset.state = d.state;
    live.state.textContent = label;
    $("stop").disabled = true;
    localStorage.removeItem(`wb.active.${state.live ? state.live.sessionId : state.sessionId}`);
    const sid = state.sessionId;
    state.live = null;
    loadSessionList().catch(() => {});
    if (!d.message_id) return;  // stopped or failed before an answer was saved: keep what was streamed on screen
    state.leaf = d.message_id;
    api("GET", `/sessions/${sid}`).then((s) => {
      if (state.sessionId !== sid) return;
      state.session = s;
      render();
    });
  };
  source.addEventListener("done", end);
  source.addEventListener("error", (e) => { if (e.data) end(e); });  // a data-less error is a reconnect
}

function closeLive() {
  if (state.live) { state.live.source.close(); state.live = null; }
  $("stop").disabled = true;
}

$("stop").addEventListener("click", async () => {
  if (!state.live) return;
  try { await api("POST", `/runs/${state.live.runId}/stop`, { reason: "user_stop" }); }
  catch (err) { showError("app-error", err); }
});

async function regenerate(message) {
  try {
    const sent = await api("POST", `/messages/${message.message_id}/regenerate`);
    const nodes = [...document.querySelectorAll('[data-testid="message"]')];
    const index = nodes.findIndex((n) => n.dataset.messageId === message.message_id);
    nodes.slice(index).forEach((n) => n.remove());
    const liveNode = liveMessage();
    $("messages").append(liveNode.node);
    attach(sent.run_id, sent.branch_id, liveNode);
  } catch (err) { showError("app-error", err); }
}

// -- citations and export -----------------------------------------------------------------------------
async function openCitation(c) {
  const viewer = $("citation-viewer");
  try {
    const loc = await api("GET", `/citations/${c.citation_id}/locate`);
    $("citation-doc").textContent = loc.paper_id || loc.doc_id;
    $("citation-match").textContent = loc.match;
    $("citation-match").dataset.match = loc.match;
    const body = $("citation-page-text");
    if (loc.page == null) {
      $("citation-page-number").textContent = "—";
      body.replaceChildren(el("p", { textContent: "此引用没有可靠的页码：打开整份文件。" }),
                           el("a", { href: `${API}/documents/${loc.doc_id}/file`, testid: "citation-file",
                                     textContent: "下载原文件" }));
    } else {
      const page = await api("GET", `/documents/${loc.doc_id}/pages/${loc.page}`);
      $("citation-page-number").textContent = String(page.page);
      body.replaceChildren(...highlighted(page.text, loc.match === "unique" ? loc.highlights.filter((h) => h.page === page.page) : []));
    }
    viewer.dataset.citationId = c.citation_id;  // only once the page shown is this citation's
    viewer.hidden = false;
  } catch (err) { showError("app-error", err); }
}

function highlighted(text, spans) {
  const parts = [];
  let at = 0;
  for (const h of [...spans].sort((a, b) => a.start - b.start)) {
    if (h.start < at) continue;
    parts.push(text.slice(at, h.start));
    parts.push(el("mark", { testid: "citation-highlight", textContent: text.slice(h.start, h.end) }));
    at = h.end;
  }
  parts.push(text.slice(at));
  return parts;
}

$("citation-close").addEventListener("click", () => { $("citation-viewer").hidden = true; });

$("export").addEventListener("click", async () => {
  const resp = await fetch(`${API}/sessions/${state.sessionId}/export?format=md`, { credentials: "same-origin" });
  const view = $("export-view");
  view.textContent = await resp.text();
  view.hidden = false;
});

init();
