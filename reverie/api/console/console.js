// Reverie's console: a few pages over the API's own routes, with the caller's token.
// Nothing here reaches the brain another way, and nothing loads from another host.
// Every text from the brain is set as text (never parsed as HTML).
"use strict";

const TOKEN_KEY = "reverie.console.token";
// `drawing` counts the pages asked for: data that arrives for a page the reader has
// already left is dropped, so a slow page never draws over the one on screen.
const state = { token: sessionStorage.getItem(TOKEN_KEY) || "", me: null, drawing: 0 };

// -- the API ---------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

class Left extends Error {}

async function api(method, path, body, headers) {
  const drawing = state.drawing;
  const sent = { ...(headers || {}) };
  if (state.token) sent.Authorization = "Bearer " + state.token;
  if (body !== undefined) sent["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers: sent,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "omit",
  });
  const text = await response.text();
  if (method === "GET" && drawing !== state.drawing) throw new Left();
  let doc = null;
  try { doc = text ? JSON.parse(text) : null; } catch (e) { doc = null; }
  if (!response.ok) {
    const message = (doc && doc.error && doc.error.message) || response.statusText || "failed";
    throw new ApiError(response.status, message);
  }
  return doc;
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, v);
  }
  const s = q.toString();
  return s ? "?" + s : "";
}

function can(capability) {
  const caps = (state.me && state.me.capabilities) || [];
  return caps.includes("admin") || caps.includes(capability);
}

// -- building the page -----------------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function svg(tag, attrs, ...children) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) {
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }
  return el;
}

// A time as the API gives it (epoch seconds or ISO 8601), in UTC to the minute.
function when(value) {
  if (value === null || value === undefined) return "never";
  const date = typeof value === "number" ? new Date(value * 1000) : new Date(value);
  return isNaN(date) ? String(value) : date.toISOString().slice(0, 16).replace("T", " ");
}

function age(seconds) {
  const days = seconds / 86400;
  if (days >= 2) return Math.round(days) + " days";
  const hours = seconds / 3600;
  return hours >= 2 ? Math.round(hours) + " hours" : Math.max(1, Math.round(seconds / 60)) + " min";
}

function shorten(text, n) {
  return text.length > n ? text.slice(0, n - 1) + "…" : text;
}

function say(message, isError) {
  const status = document.getElementById("status");
  status.textContent = message;
  status.classList.toggle("error", Boolean(isError));
  clearTimeout(say.timer);
  if (!isError) say.timer = setTimeout(() => { status.textContent = ""; }, 6000);
}

function confirmAction(message, verb) {
  const dialog = document.getElementById("confirm");
  document.getElementById("confirm-text").textContent = message;
  document.getElementById("confirm-ok").textContent = verb || "Confirm";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.returnValue = "cancel";
    dialog.showModal();
  });
}

function page(title, ...children) {
  const main = document.getElementById("main");
  main.replaceChildren(h("h1", {}, title), ...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  document.title = title + " · Reverie console";
  main.focus();
}

function failed(error) {
  if (error instanceof Left) return;
  if (error instanceof ApiError && error.status === 401) {
    location.hash = "#/login";
    return;
  }
  console.error(error);
  page("Something went wrong", h("p", { class: "error", role: "alert" }, String(error.message || error)));
}

// A button for an act the caller may not do is shown, disabled, with the reason.
function actButton(label, capability, onclick, extra) {
  const allowed = can(capability);
  return h("button", {
    type: "button",
    class: (extra && extra.class) || null,
    "aria-label": (extra && extra.aria) || null,
    disabled: !allowed,
    title: allowed ? null : "Your token may not " + capability,
    onclick,
  }, label);
}

function labelled(text, control) {
  return h("label", {}, text, control);
}

// -- login -----------------------------------------------------------------------------

async function loginPage() {
  const input = h("input", { id: "token", type: "password", autocomplete: "off", required: true });
  const form = h("form", { class: "filters", onsubmit: async (e) => {
    e.preventDefault();
    state.token = input.value.trim();
    try {
      state.me = await api("GET", "/v1/me");
    } catch (error) {
      state.token = "";
      say(error.message, true);
      return;
    }
    sessionStorage.setItem(TOKEN_KEY, state.token);
    showWho();
    location.hash = "#/memories";
  } }, labelled("Token", input), h("button", { type: "submit", class: "primary" }, "Log in"));
  page("Log in",
    h("p", {}, "Give a token made with ", h("code", {}, "memctl token create"),
      ". It stays in this tab only and is sent to this server alone."),
    form);
}

function showWho() {
  const who = document.getElementById("who");
  const logout = document.getElementById("logout");
  if (!state.me) { who.textContent = ""; logout.hidden = true; return; }
  const pinned = state.me.scope_ids ? " · users " + state.me.scope_ids.join(", ") : "";
  who.textContent = state.me.name + " (" + state.me.capabilities.join(", ") + ")" + pinned;
  logout.hidden = !state.token;
}

// -- memories --------------------------------------------------------------------------

const TYPES = ["", "episodic", "semantic", "procedural", "prospective", "relational"];

function filtersForm(params, fields, target) {
  const controls = {};
  const parts = fields.map(([name, text, kind, choices]) => {
    let control;
    if (kind === "select") {
      control = h("select", { name }, choices.map(([v, t]) => h("option", { value: v, selected: params[name] === v }, t)));
    } else {
      control = h("input", { name, type: kind || "search", value: params[name] || "" });
      if (kind === "number") { control.step = "0.05"; control.min = "0"; control.max = "1"; }
    }
    controls[name] = control;
    return labelled(text, control);
  });
  return h("form", { class: "filters", role: "search", onsubmit: (e) => {
    e.preventDefault();
    const next = {};
    for (const [name, control] of Object.entries(controls)) next[name] = control.value.trim();
    location.hash = target + query(next);
  } }, parts, h("button", { type: "submit", class: "primary" }, "Show"));
}

function memoryCard(trace, extra) {
  const flags = [];
  if (trace.deleted) flags.push(h("span", { class: "badge deleted" }, "deleted"));
  if (trace.superseded_by) flags.push(h("span", { class: "badge superseded" }, "superseded"));
  return h("article", { class: "card" },
    h("header", {},
      h("span", { class: "badge" }, trace.type),
      flags,
      h("span", { class: "meta" }, "user " + (trace.scope_id || "—")),
      h("a", { href: "#/memory/" + encodeURIComponent(trace.id), "aria-label": "Open memory " + trace.id }, "Open")),
    h("div", { class: "content" }, shorten(trace.content, 400)),
    trace.snippet && trace.snippet !== trace.content && trace.content.length > 400
      ? h("div", { class: "meta" }, "matched: " + trace.snippet) : null,
    h("div", { class: "meta" },
      "happened " + when(trace.occurred_at) + " · stored " + when(trace.created_at) +
      " · last used " + when(trace.last_accessed) +
      (trace.tags && trace.tags.length ? " · tags: " + trace.tags.join(", ") : "") +
      (extra || "")));
}

async function memoriesPage(params) {
  const form = filtersForm(params, [
    ["q", "Search"],
    ["scope_id", "User (scope id)"],
    ["type", "Type", "select", TYPES.map((t) => [t, t || "any"])],
  ], "#/memories");
  const list = h("section", { "aria-label": "Memories" });
  page("Memories", form, list);
  if (params.q) {
    const found = await api("GET", "/v1/search" + query({
      q: params.q, scope_id: params.scope_id, type: params.type, limit: 50, record: "false",
    }));
    list.append(h("p", { class: "meta" }, found.results.length + " found for “" + params.q + "”"));
    for (const hit of found.results) {
      list.append(memoryCard(hit, " · score " + hit.score.toFixed(3)));
    }
    return;
  }
  const found = await api("GET", "/v1/memories" + query({
    scope_id: params.scope_id, type: params.type, cursor: params.cursor, limit: 25,
  }));
  if (!found.memories.length) list.append(h("p", {}, "No memories here yet."));
  for (const trace of found.memories) list.append(memoryCard(trace));
  const pager = h("div", { class: "pager" });
  if (params.cursor) pager.append(h("a", { href: "#/memories" + query({ ...params, cursor: "" }) }, "Newest"));
  if (found.next_cursor) {
    pager.append(h("a", { href: "#/memories" + query({ ...params, cursor: found.next_cursor }) }, "Older memories"));
  }
  list.append(pager);
}

function briefList(title, items, empty) {
  return h("section", {}, h("h2", {}, title),
    items.length
      ? h("ul", {}, items.map((t) => h("li", {},
        h("a", { href: "#/memory/" + encodeURIComponent(t.id) }, shorten(t.content, 160)),
        h("span", { class: "meta" }, " · " + t.type + " · " + when(t.occurred_at) + (t.deleted ? " · deleted" : "")))))
      : h("p", { class: "meta" }, empty));
}

async function memoryPage(id) {
  const doc = await api("GET", "/v1/memories/" + encodeURIComponent(id) + "/history");
  const t = doc.trace;
  const status = t.deleted ? "deleted " + when(t.deleted_at) + " (" + (t.deleted_reason || "") + ")"
    : t.superseded_by ? "superseded, held until " + when(t.valid_until) : "current";
  const fields = h("dl", { class: "fields" },
    [["Id", t.id], ["Type", t.type], ["User", t.scope + " " + (t.scope_id || "—")],
      ["Happened", when(t.occurred_at)], ["Stored", when(t.created_at)],
      ["Last used", when(t.last_accessed)], ["Used", t.retrieval_count + " times"],
      ["Status", status], ["Version", t.version], ["Importance", t.importance.toFixed(2)],
      ["Strength", t.strength.toFixed(3)], ["Tags", t.tags.join(", ") || "—"],
      ["From turns", doc.turns.join(", ") || "—"]]
      .map(([k, v]) => [h("dt", {}, k), h("dd", {}, String(v))]));
  const changes = doc.changes.length
    ? h("table", {}, h("thead", {}, h("tr", {}, ["When", "By", "Step", "Words before", "Undone"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, doc.changes.map((c) => h("tr", {},
        h("td", {}, when(c.at)), h("td", {}, c.by + " " + c.unit), h("td", {}, c.step),
        h("td", { class: "content" }, c.created ? "(made by this change)" : shorten(c.content_before || "", 300)),
        h("td", {}, c.undone_at ? when(c.undone_at) : "—")))))
    : h("p", { class: "meta" }, "Never changed since it was stored.");
  const proposals = doc.proposals.length
    ? h("ul", {}, doc.proposals.map((p) => h("li", {}, h("span", { class: "badge " + p.kind }, p.kind), " ",
      h("span", { class: "badge " + p.status }, p.status), " " + p.summary)))
    : h("p", { class: "meta" }, "No proposal names it.");
  const editing = t.deleted ? [] : [h("h2", {}, "Edit"), editForm(t)];
  const remove = t.deleted ? null : h("div", { class: "actions" },
    actButton("Delete memory", "delete", async () => {
      if (!(await confirmAction("Delete this memory? Search will never show it again; it stays in the brain for audit and can be restored.", "Delete"))) return;
      try {
        await api("DELETE", "/v1/memories/" + encodeURIComponent(t.id));
        say("Deleted " + t.id);
        route();
      } catch (error) { say(error.message, true); }
    }, { class: "danger" }));
  // A supersession a reader finds wrong ("I'm learning Japanese" did not change the
  // job) is undone here, and never made again by the same later memory.
  const unsupersede = t.superseded_by && !t.deleted ? h("div", { class: "actions" },
    actButton("Still current", "write", async () => {
      try {
        await api("POST", "/v1/memories/" + encodeURIComponent(t.id) + "/supersession/undo");
        say("Current again: " + t.id);
        route();
      } catch (error) { say(error.message, true); }
    }, { aria: "Still current: undo the supersession of " + t.id })) : null;
  page("Memory", h("div", { class: "card" }, h("div", { class: "content" }, t.content)), fields,
    briefList("Taken from", doc.sources, "Nothing: it was written as it is."),
    briefList("Cited by", doc.cited_by, "No memory cites it."),
    briefList("It replaced", doc.replaced, "It replaced nothing."),
    briefList("Replaced by", doc.replaced_by, "Nothing replaced it."), unsupersede,
    h("h2", {}, "History"), changes, h("h2", {}, "Proposals"), proposals, editing, remove);
}

function editForm(t) {
  const text = h("textarea", { name: "content" });
  text.value = t.content;
  const tags = h("input", { name: "tags", type: "text", value: t.tags.join(", ") });
  return h("form", { class: "card", onsubmit: async (e) => {
    e.preventDefault();
    const body = { tags: tags.value.split(",").map((s) => s.trim()).filter(Boolean) };
    if (text.value !== t.content) body.content = text.value;
    try {
      await api("PATCH", "/v1/memories/" + encodeURIComponent(t.id), body, { "If-Match": String(t.version) });
      say("Saved");
      route();
    } catch (error) {
      say(error.status === 409 ? "It changed since you opened it: " + error.message + " (reload to see it)" : error.message, true);
    }
  } }, labelled("Text", text), labelled("Tags (comma-separated)", tags),
  h("div", { class: "actions" }, h("button", { type: "submit", class: "primary", disabled: !can("write") }, "Save")));
}

// -- proposals -------------------------------------------------------------------------

// Word-level differences between two texts (longest common subsequence), as del/ins.
function diff(a, b) {
  const x = a.split(/(\s+)/), y = b.split(/(\s+)/);
  if (x.length * y.length > 250000) return [h("del", {}, a), " ", h("ins", {}, b)];
  const n = x.length, m = y.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { out.push(x[i]); i++; j++; }
    else if (lcs[i + 1][j] >= lcs[i][j + 1]) { out.push(h("del", {}, x[i])); i++; }
    else { out.push(h("ins", {}, y[j])); j++; }
  }
  while (i < n) out.push(h("del", {}, x[i++]));
  while (j < m) out.push(h("ins", {}, y[j++]));
  return out;
}

function proposalBody(p) {
  const [a, b] = p.traces;
  const text = (t) => (t && t.content) || "(gone)";
  if (p.kind === "merge") {
    return [
      h("div", { class: "side" },
        h("div", {}, h("div", { class: "meta" }, "kept · " + when(a && a.occurred_at)), h("div", { class: "content" }, text(a))),
        h("div", {}, h("div", { class: "meta" }, "merged into it · " + when(b && b.occurred_at)), h("div", { class: "content" }, text(b)))),
      h("div", { class: "meta" }, "What differs (struck: only in the kept text; marked: only in the other)"),
      h("div", { class: "diff content" }, diff(text(a), text(b))),
      h("div", { class: "result" }, h("div", { class: "meta" }, "Result if accepted"), h("div", { class: "content" }, p.merged_content || text(a))),
    ];
  }
  if (p.kind === "rewrite") {
    return [
      h("div", { class: "side" },
        h("div", {}, h("div", { class: "meta" }, "now · as a person left it"), h("div", { class: "content" }, text(a))),
        h("div", {}, h("div", { class: "meta" }, "Result if accepted"), h("div", { class: "content" }, p.rewritten_content || ""))),
      h("div", { class: "meta" }, "What differs (struck: only now; marked: only in the new text)"),
      h("div", { class: "diff content" }, diff(text(a), p.rewritten_content || "")),
    ];
  }
  if (p.kind === "conflict") {
    return [h("div", { class: "side" },
      h("div", {}, h("div", { class: "meta" }, "earlier · " + when(a && a.occurred_at) + " · superseded if accepted"), h("div", { class: "content" }, text(a))),
      h("div", {}, h("div", { class: "meta" }, "later · " + when(b && b.occurred_at)), h("div", { class: "content" }, text(b))))];
  }
  const s = p.scores || {};
  return [
    h("div", { class: "content" }, text(a)),
    h("div", { class: "meta" },
      "happened " + when(a && a.occurred_at) + " · importance " + (a && a.importance !== null ? a.importance.toFixed(2) : "—") +
      (s.days_since_use !== undefined ? " · unused " + Math.round(s.days_since_use) + " days" : "") +
      (s.strength !== undefined ? " · strength " + s.strength.toFixed(4) : "")),
  ];
}

const DECIDE = { accept: "Accept", reject: "Reject", undo: "Undo" };

async function decide(act, items) {
  let done = 0;
  const refused = [];
  for (const p of items) {
    try {
      await api("POST", "/v1/proposals/" + encodeURIComponent(p.id) + "/" + act);
      done++;
    } catch (error) {
      refused.push(p.id + ": " + error.message);
    }
  }
  say(DECIDE[act] + ": " + done + " done" + (refused.length ? "; refused " + refused.join("; ") : ""), refused.length > 0);
  await route();
}

function counted(items) {
  const kinds = {};
  for (const p of items) kinds[p.kind] = (kinds[p.kind] || 0) + 1;
  return Object.entries(kinds).map(([k, n]) => n + " " + k).join(", ");
}

async function proposalsPage(params) {
  const status = params.status || "pending";
  const form = filtersForm({ ...params, status }, [
    ["status", "Status", "select", ["pending", "accepted", "rejected", "undone", "expired", "all"].map((s) => [s, s])],
    ["kind", "Kind", "select", [["", "any"], ["prune", "prune"], ["merge", "merge"], ["conflict", "conflict"], ["rewrite", "rewrite"]]],
    ["scope_id", "User (scope id)"],
    ["min", "Least confidence (0–1)", "number"],
  ], "#/proposals");
  const found = await api("GET", "/v1/proposals" + query({ status, kind: params.kind }));
  const min = params.min ? Number(params.min) : null;
  const shown = found.proposals.filter((p) =>
    (!params.scope_id || p.traces.some((t) => t.scope_id === params.scope_id)) &&
    (min === null || (p.confidence !== null && p.confidence !== undefined && p.confidence >= min)));
  const picked = new Set();
  const cards = shown.map((p) => {
    const box = h("input", { type: "checkbox", "aria-label": "Select proposal " + p.id, onchange: (e) => {
      if (e.target.checked) picked.add(p); else picked.delete(p);
    } });
    const acts = [];
    if (p.status === "pending") {
      acts.push(actButton("Accept", "dream", () => decide("accept", [p]), { class: "primary", aria: "Accept proposal " + p.id }));
      acts.push(actButton("Reject", "dream", () => decide("reject", [p]), { aria: "Reject proposal " + p.id }));
    }
    if (p.status === "accepted") acts.push(actButton("Undo", "dream", () => decide("undo", [p]), { aria: "Undo proposal " + p.id }));
    return h("article", { class: "card", "data-proposal": p.id },
      h("header", {}, box,
        h("span", { class: "badge " + p.kind }, p.kind),
        h("span", { class: "badge " + p.status }, p.status),
        p.edited ? h("span", { class: "badge edited" }, "edited by hand") : null,
        p.stale ? h("span", { class: "badge stale", title: "One of its memories changed since: accepting it is refused" }, "stale") : null,
        h("span", { class: "meta" }, p.id + " · " + age(p.age_seconds) + " old" +
          (p.confidence !== null && p.confidence !== undefined ? " · confidence " + p.confidence.toFixed(2) : ""))),
      h("p", {}, p.summary),
      p.reason ? h("p", { class: "meta" }, "Why: " + p.reason) : null,
      proposalBody(p),
      h("div", { class: "actions" }, acts));
  });
  const bulk = h("div", { class: "bulk", role: "group", "aria-label": "Selected proposals" },
    ["accept", "reject", "undo"].map((act) => actButton(DECIDE[act] + " selected", "dream", async () => {
      const items = [...picked];
      if (!items.length) { say("Select proposals first", true); return; }
      if (await confirmAction(DECIDE[act] + " " + items.length + " proposal" + (items.length > 1 ? "s" : "") + " (" + counted(items) + ")?", DECIDE[act])) {
        await decide(act, items);
      }
    })));
  const note = can("dream") ? null
    : h("p", { class: "meta", role: "note" }, "Your token can look at proposals; deciding them needs the dream capability.");
  page("Proposals", form, note, bulk,
    h("p", { class: "meta" }, shown.length + " " + status + (found.proposals.length !== shown.length ? " of " + found.proposals.length : "")),
    shown.length ? cards : h("p", {}, "Nothing to review."));
}

// -- dream passes ----------------------------------------------------------------------

const STEPS = ["embed", "prune", "merge", "resolve", "strengthen", "derive", "compact", "reindex"];
const COLOURS = ["#8aa1c9", "#e07b39", "#2f5bd3", "#9b51c9", "#1e7a3c", "#c9a227", "#5b6473", "#20a4b5"];

function passChart(passes) {
  const rows = passes.slice(0, 20).reverse();
  const longest = Math.max(0.001, ...rows.map((p) => Object.values(p.step_seconds).reduce((a, b) => a + b, 0)));
  const most = Math.max(1, ...rows.map((p) => Object.values(p.proposals).reduce((a, b) => a + b, 0)));
  const width = 900, rowH = 22, left = 150, mid = 560;
  const chart = svg("svg", { viewBox: `0 0 ${width} ${rows.length * rowH + 30}`, role: "img",
    "aria-label": "Time each step of the last passes took, and their proposals made and decided" });
  chart.append(svg("text", { x: left, y: 14, "font-size": 12, fill: "#5b6473" }, "seconds per step"),
    svg("text", { x: mid + 20, y: 14, "font-size": 12, fill: "#5b6473" }, "proposals made (decided darker)"));
  rows.forEach((p, k) => {
    const y = 22 + k * rowH;
    chart.append(svg("text", { x: 4, y: y + 13, "font-size": 11, fill: "#1d2330" }, when(p.started_at)));
    let x = left;
    STEPS.forEach((step, i) => {
      const s = p.step_seconds[step] || 0;
      const w = (s / longest) * (mid - left - 10);
      if (w > 0) {
        chart.append(svg("rect", { x, y, width: w, height: rowH - 6, fill: COLOURS[i] },
          svg("title", {}, step + ": " + s.toFixed(3) + " s")));
        x += w;
      }
    });
    const made = Object.values(p.proposals).reduce((a, b) => a + b, 0);
    const decided = (p.proposals.accepted || 0) + (p.proposals.rejected || 0) + (p.proposals.undone || 0);
    const scale = (width - mid - 40) / most;
    chart.append(svg("rect", { x: mid + 20, y, width: made * scale, height: rowH - 6, fill: "#c7d3f3" },
      svg("title", {}, made + " proposals made")));
    chart.append(svg("rect", { x: mid + 20, y, width: decided * scale, height: rowH - 6, fill: "#2f5bd3" },
      svg("title", {}, decided + " decided")));
  });
  const legend = h("div", { class: "legend", "aria-hidden": "true" }, STEPS.map((s, i) => {
    const sw = h("span", { class: "swatch" });
    sw.style.background = COLOURS[i];
    return h("span", {}, sw, s);
  }));
  return h("figure", { class: "chart" }, chart, legend);
}

function sum(counts, step, key) {
  return (counts[step] && counts[step][key]) || 0;
}

async function dreamsPage() {
  const found = await api("GET", "/v1/dreams?limit=50");
  if (!found.passes.length) { page("Dream passes", h("p", {}, "No pass has run yet.")); return; }
  const head = ["Pass", "Started", "Status", "Took", "Proposed", "Merged", "Superseded", "Derived", "Compacted", "Decided"];
  const table = h("table", {}, h("thead", {}, h("tr", {}, head.map((c, i) => h("th", { scope: "col", class: i > 2 ? "num" : null }, c)))),
    h("tbody", {}, found.passes.map((p) => {
      const c = p.counts;
      const made = Object.values(p.proposals).reduce((a, b) => a + b, 0);
      const decided = made - (p.proposals.pending || 0) - (p.proposals.expired || 0);
      return h("tr", {},
        h("td", {}, h("a", { href: "#/dream/" + encodeURIComponent(p.pass_id) }, p.pass_id)),
        h("td", {}, when(p.started_at)),
        h("td", {}, p.status + (p.undone ? " (undone)" : "")),
        h("td", { class: "num" }, p.duration_s === null ? "running" : p.duration_s.toFixed(2) + " s"),
        h("td", { class: "num" }, sum(c, "prune", "proposed") + sum(c, "merge", "proposed") + sum(c, "resolve", "proposed")),
        h("td", { class: "num" }, sum(c, "merge", "merged")),
        h("td", { class: "num" }, sum(c, "resolve", "superseded")),
        h("td", { class: "num" }, sum(c, "derive", "derived")),
        h("td", { class: "num" }, sum(c, "compact", "compacted")),
        h("td", { class: "num" }, decided + " of " + made));
    })));
  page("Dream passes", passChart(found.passes), table);
}

function item(value) {
  if (value === null || typeof value !== "object") return String(value);
  return Object.entries(value).map(([k, v]) => k + ": " + (typeof v === "object" ? JSON.stringify(v) : v)).join(" · ");
}

async function dreamPage(id) {
  const doc = await api("GET", "/v1/dreams/" + encodeURIComponent(id));
  const made = new Map((await api("GET", "/v1/proposals?status=all")).proposals
    .filter((p) => p.pass_id === id).map((p) => [p.id, p]));
  const undo = doc.undoable ? actButton("Undo this pass", "dream", async () => {
    if (!(await confirmAction("Undo what this pass did unattended (its exact merges, compactions and insights)? Refused, changing nothing, if one of those memories changed since.", "Undo pass"))) return;
    try {
      const done = await api("POST", "/v1/dreams/" + encodeURIComponent(id) + "/undo");
      say("Restored " + done.restored.length + ", removed " + done.removed.length);
      route();
    } catch (error) { say(error.message, true); }
  }, { class: "danger" }) : h("p", { class: "meta" }, doc.undone ? "This pass was undone." : "Nothing this pass did unattended is left to undo.");
  const decided = Object.entries(doc.proposals_decided || {}).map(([k, n]) => n + " " + k).join(", ") || "none";
  page("Dream pass " + id,
    h("dl", { class: "fields" },
      [["Status", doc.status + (doc.reason ? " (" + doc.reason + ")" : "")], ["Started", doc.started_at],
        ["Took", doc.duration_s !== undefined ? doc.duration_s + " s" : "—"], ["Its proposals now", decided]]
        .map(([k, v]) => [h("dt", {}, k), h("dd", {}, String(v))])),
    doc.error ? h("p", { class: "error" }, doc.error) : null,
    h("div", { class: "actions" }, undo),
    (doc.steps || []).map((s) => h("section", { class: "card" },
      h("h2", {}, s.name + (s.duration_s !== undefined ? " · " + s.duration_s + " s" : "")),
      h("p", {}, Object.entries(s.counts || {}).filter(([, n]) => n).map(([k, n]) => k.replace(/_/g, " ") + " " + n).join(", ") || "nothing to do"),
      (s.notes || []).length ? h("ul", {}, s.notes.map((n) => h("li", {}, n))) : null,
      (s.proposals || []).length ? h("ul", {}, s.proposals.map((id) => {
        const p = made.get(id);
        return h("li", {}, p ? [h("span", { class: "badge " + p.kind }, p.kind), " ", h("span", { class: "badge " + p.status }, p.status), " " + p.summary] : id);
      })) : null,
      (s.items || []).length ? h("details", {}, h("summary", {}, (s.items_total || s.items.length) + " item(s)"),
        h("ul", {}, s.items.slice(0, 100).map((i) => h("li", { class: "content" }, item(i))))) : null)));
}

// -- a user's timeline -----------------------------------------------------------------

async function timelinePage(params) {
  const form = filtersForm(params, [["scope_id", "User (scope id)"]], "#/timeline");
  if (!params.scope_id) {
    page("Timeline", form, h("p", {}, "Name a user to see what the agent knows of them, and since when."));
    return;
  }
  const traces = [];
  let cursor = null;
  do {
    const found = await api("GET", "/v1/memories" + query({ scope_id: params.scope_id, cursor, limit: 500 }));
    traces.push(...found.memories);
    cursor = found.next_cursor;
  } while (cursor && traces.length < 2000);
  traces.sort((a, b) => a.occurred_at - b.occurred_at);
  const months = new Map();
  for (const t of traces) {
    const month = when(t.occurred_at).slice(0, 7);
    if (!months.has(month)) months.set(month, []);
    months.get(month).push(t);
  }
  const body = h("div", { class: "timeline" }, [...months.entries()].map(([month, items]) => h("section", {},
    h("h2", {}, month + " · " + items.length),
    h("ol", {}, items.map((t) => h("li", {},
      h("span", { class: "meta" }, when(t.occurred_at).slice(0, 10) + " · " + t.type),
      h("span", {}, h("a", { href: "#/memory/" + encodeURIComponent(t.id) }, shorten(t.content, 200)),
        t.superseded_by ? h("span", { class: "badge superseded" }, " superseded") : null)))))));
  page("Timeline of " + params.scope_id, form,
    h("p", { class: "meta" }, traces.length + " memories" + (cursor ? " (the 2000 stored last)" : "") + ", by when they happened"), body);
}

// -- tags ------------------------------------------------------------------------------

async function tagsPage() {
  const found = await api("GET", "/v1/tags");
  const names = Object.keys(found.tags);
  const from = h("select", { name: "from" }, names.map((t) => h("option", { value: t }, t)));
  const to = h("input", { name: "to", type: "text", required: true });
  const form = h("form", { class: "filters", onsubmit: async (e) => {
    e.preventDefault();
    const n = found.tags[from.value] || 0;
    if (!(await confirmAction("Rename “" + from.value + "” to “" + to.value.trim() + "” on " + n + " memor" + (n === 1 ? "y" : "ies") + "?", "Rename"))) return;
    try {
      const done = await api("POST", "/v1/tags/rename", { from: from.value, to: to.value.trim() });
      say("Renamed on " + done.renamed.length + " memories");
      route();
    } catch (error) { say(error.message, true); }
  } }, labelled("Tag", from), labelled("New name", to),
  h("button", { type: "submit", class: "primary", disabled: !can("write") || !names.length }, "Rename everywhere"));
  const table = h("table", {}, h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Tag"), h("th", { scope: "col", class: "num" }, "Memories"))),
    h("tbody", {}, names.map((t) => h("tr", {}, h("td", {}, t), h("td", { class: "num" }, found.tags[t])))));
  page("Tags", form, names.length ? table : h("p", {}, "No tags yet."));
}

// -- tokens ----------------------------------------------------------------------------

const CAPABILITIES = ["read", "write", "delete", "dream", "admin"];

function showSecret(title, made) {
  return h("div", { class: "card", role: "alert" }, h("p", {}, title + " “" + made.name + "”. Its secret, shown this once:"),
    h("div", { class: "secret" }, made.token));
}

async function tokensPage() {
  if (!can("admin")) {
    page("Tokens", h("p", {}, "Managing tokens needs the admin capability."));
    return;
  }
  if (state.me.scope_ids) {
    page("Tokens", h("p", {}, "Tokens span every user: managing them needs an admin token pinned to no user."));
    return;
  }
  const found = await api("GET", "/v1/tokens");
  const shown = h("div", {});
  const name = h("input", { name: "name", type: "text", required: true, pattern: "[A-Za-z0-9][A-Za-z0-9._\\-]{0,63}" });
  const boxes = CAPABILITIES.map((c) => h("input", { type: "checkbox", value: c, id: "can-" + c, checked: c === "read" }));
  const scopes = h("input", { name: "scope_ids", type: "text" });
  const form = h("form", { class: "card", onsubmit: async (e) => {
    e.preventDefault();
    const chosen = boxes.filter((b) => b.checked).map((b) => b.value);
    const pinned = scopes.value.split(",").map((s) => s.trim()).filter(Boolean);
    try {
      const made = await api("POST", "/v1/tokens", { name: name.value.trim(), can: chosen, scope_ids: pinned.length ? pinned : null });
      await tokensPage();
      document.querySelector("#main h1").after(showSecret("Made", made));
    } catch (error) { say(error.message, true); }
  } },
  h("h2", {}, "New token"),
  h("div", { class: "filters" }, labelled("Name", name),
    h("fieldset", {}, h("legend", {}, "Capabilities"),
      boxes.map((b) => h("label", { class: "inline", for: b.id }, b, b.value))),
    labelled("Pinned to users (comma-separated; empty: all)", scopes)),
  h("button", { type: "submit", class: "primary" }, "Create token"));
  const table = h("table", {}, h("thead", {}, h("tr", {}, ["Name", "Capabilities", "Users", "Created", "Revoked", ""].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, found.tokens.map((t) => h("tr", {},
      h("td", {}, t.name), h("td", {}, t.capabilities.join(", ")), h("td", {}, t.scope_ids ? t.scope_ids.join(", ") : "all"),
      h("td", {}, when(t.created_at)), h("td", {}, t.revoked_at ? when(t.revoked_at) : "—"),
      h("td", {}, h("div", { class: "actions" },
        t.revoked_at ? null : h("button", { type: "button", "aria-label": "Revoke token " + t.name, onclick: async () => {
          if (!(await confirmAction("Revoke token “" + t.name + "”? It never works again.", "Revoke"))) return;
          try { await api("POST", "/v1/tokens/" + encodeURIComponent(t.name) + "/revoke"); say("Revoked " + t.name); route(); } catch (error) { say(error.message, true); }
        } }, "Revoke"),
        // Revocation is final: a revoked token is never reset.
        t.revoked_at ? null : h("button", { type: "button", "aria-label": "Reset token " + t.name, onclick: async () => {
          if (!(await confirmAction("Give “" + t.name + "” a new secret? The old one stops working.", "Reset"))) return;
          try {
            const made = await api("POST", "/v1/tokens/" + encodeURIComponent(t.name) + "/reset");
            await tokensPage();
            document.querySelector("#main h1").after(showSecret("Reset", made));
          } catch (error) { say(error.message, true); }
        } }, "Reset")))))));
  page("Tokens", shown, table, form);
}

// -- routing ---------------------------------------------------------------------------

const PAGES = {
  login: () => loginPage(),
  memories: (p) => memoriesPage(p),
  memory: (p, id) => memoryPage(id),
  proposals: (p) => proposalsPage(p),
  dreams: () => dreamsPage(),
  dream: (p, id) => dreamPage(id),
  timeline: (p) => timelinePage(p),
  tags: () => tagsPage(),
  tokens: () => tokensPage(),
};

async function route() {
  state.drawing += 1;
  const [path, search] = (location.hash.replace(/^#\/?/, "") || "memories").split("?");
  const [name, ...rest] = path.split("/");
  const params = Object.fromEntries(new URLSearchParams(search || ""));
  for (const link of document.querySelectorAll("nav a")) {
    const here = link.getAttribute("href") === "#/" + name;
    if (here) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
  }
  if (name !== "login" && !state.me) {
    try {
      state.me = await api("GET", "/v1/me");
      showWho();
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) { await loginPage(); return; }
      failed(error);
      return;
    }
  }
  try {
    await (PAGES[name] || PAGES.memories)(params, decodeURIComponent(rest.join("/")));
  } catch (error) {
    failed(error);
  }
}

document.getElementById("logout").addEventListener("click", () => {
  sessionStorage.removeItem(TOKEN_KEY);
  state.token = "";
  state.me = null;
  showWho();
  location.hash = "#/login";
});
window.addEventListener("hashchange", () => {
  document.getElementById("status").textContent = "";  // a message is about the page it was said on
  route();
});
route();
