// The operator console: login, and "try it" (form -> server-side validation -> streamed task).
// No framework and no CDN: everything here is served by the agent.
"use strict";

const PREFIX = "/console";
const HANDOFF = "netagent-console-arguments";
const CONTROLS = "input[data-pointer], select[data-pointer], textarea[data-pointer]";

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const child of children) {
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function pretty(value) { return JSON.stringify(value, null, 2); }

// ---------------------------------------------------------------------------- login

// What the login field takes: the token itself, the line `netagent serve` printed
// (`export ALICE_TOKEN=eyJ...`, quoted or not), or `Bearer eyJ...`. Anything else gets a
// message saying exactly what to paste, before anything is sent.
const WHAT_TO_PASTE = "Paste one token: the part after ALICE_TOKEN= in a line that netagent serve printed " +
  "(the whole line export ALICE_TOKEN=eyJ... is fine too), or the output of netagent token.";
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

function tokenFrom(pasted) {
  const lines = pasted.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  if (lines.length > 1) {
    return { problem: `That is ${lines.length} lines. ${WHAT_TO_PASTE}` };
  }
  let text = (lines[0] || "").replace(/^export\s+/, "");
  const assignment = /^[A-Za-z_][A-Za-z0-9_]*=(.*)$/.exec(text);
  if (assignment) text = assignment[1].trim();
  text = text.replace(/^(["'])(.*)\1$/, "$2").trim();
  text = text.replace(/^Authorization:\s*/i, "").replace(/^Bearer\s+/i, "").trim();
  if (!JWT.test(text)) {
    return { problem: `That is not a token (a token looks like eyJ....eyJ....signature). ${WHAT_TO_PASTE}` };
  }
  return { token: text };
}

function setUpLogin() {
  const form = document.getElementById("login");
  if (!form) return;
  const error = document.getElementById("login-error");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const field = document.getElementById("token");
    error.hidden = true;
    if (!field.value.trim()) { error.textContent = "Paste a token first."; error.hidden = false; return; }
    const { token, problem } = tokenFrom(field.value);
    if (problem) { error.textContent = problem; error.hidden = false; field.focus(); return; }
    const answer = await fetch(PREFIX + "/login", {
      method: "POST",
      headers: { "Authorization": "Bearer " + token },
      credentials: "same-origin",
    });
    field.value = "";
    if (answer.ok) { window.location.assign(PREFIX + "/"); return; }
    let reason = "the token was refused";
    try { reason = (await answer.json()).error.message || reason; } catch (_) { /* keep it */ }
    error.textContent = "Log-in failed: " + reason + ". Mint a new token with netagent token " +
      "(or restart netagent serve, which prints fresh ones) in the agent's own folder.";
    error.hidden = false;
    field.focus();
  });
}

// ---------------------------------------------------------------------------- try it

function setAt(target, pointer, value) {
  const parts = pointer.split("/").slice(1).map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  let node = target;
  parts.forEach((part, i) => {
    if (i === parts.length - 1) { node[part] = value; return; }
    if (typeof node[part] !== "object" || node[part] === null) node[part] = {};
    node = node[part];
  });
}

function getAt(source, pointer) {
  const parts = pointer.split("/").slice(1).map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  return parts.reduce((node, part) => (node && typeof node === "object" ? node[part] : undefined), source);
}

// Show arguments in the fields too (the JSON stays what is sent: it may hold more).
function fill(form, args) {
  for (const control of form.querySelectorAll(CONTROLS)) {
    const value = getAt(args, control.dataset.pointer);
    if (value === undefined) continue;
    control.value = control.dataset.kind === "json" ? JSON.stringify(value) : String(value);
  }
}

// The arguments to send: the JSON as typed in JSON mode, else what the fields describe (an
// empty control leaves its member out), written back to the JSON box.
function collect(form) {
  const box = document.getElementById("arguments-json");
  if (document.getElementById("json-mode").checked) {
    try { return { args: JSON.parse(box.value), local: [] }; } catch (_) {
      return { args: undefined, local: [{ instance_path: "", keyword: "json", actual: "not JSON" }] };
    }
  }
  const args = {};
  const local = [];
  for (const control of form.querySelectorAll(CONTROLS)) {
    const raw = control.value.trim();
    if (raw === "") continue;
    const kind = control.dataset.kind;
    let value = raw;
    if (kind === "number" || kind === "integer") {
      const number = Number(raw);
      value = Number.isFinite(number) ? number : raw; // the schema reports the wrong type
    } else if (kind === "boolean") {
      value = raw === "true";
    } else if (kind === "json") {
      try { value = JSON.parse(raw); } catch (_) {
        local.push({ instance_path: control.dataset.pointer, keyword: "json", actual: "not JSON" });
        continue;
      }
    }
    setAt(args, control.dataset.pointer, value);
  }
  box.value = pretty(args);
  return { args, local };
}

function describe(detail) {
  const where = detail.instance_path || "(arguments)";
  if (detail.matched) {
    return `${where} matches alternatives ${detail.matched.join(" and ")} of ${detail.keyword}; it must match exactly one`;
  }
  if (detail.alternatives) {
    const count = detail.alternatives.length;
    return `${where} matches none of the ${count} alternatives (${detail.keyword}):`;
  }
  const what = detail.keyword === "required" ? "is required"
    : detail.keyword === "json" ? "is not valid JSON"
    : `fails ${detail.keyword}` + (detail.expected ? ` (expected ${detail.expected}, got ${detail.actual})` : "");
  return `${where} ${what}`;
}

// A oneOf/anyOf failure: each alternative, what it asks for, and why the arguments miss it.
function alternativesList(detail) {
  if (!detail.alternatives || detail.matched) return null;
  const list = el("ol", { class: "alternatives" });
  for (const alt of detail.alternatives) {
    list.append(el("li", { "data-alternative": String(alt.alternative) },
      el("strong", {}, alt.asks), `: ${alt.problems.join("; ") || "satisfied"}`));
  }
  return list;
}

function showValidity(form, details) {
  for (const slot of form.querySelectorAll("[data-error-for]")) slot.textContent = "";
  for (const control of form.querySelectorAll(CONTROLS)) control.removeAttribute("aria-invalid");
  const status = document.getElementById("validity");
  status.replaceChildren();
  if (!details.length) {
    status.className = "valid";
    status.textContent = "Valid against the input schema.";
    return;
  }
  status.className = "invalid";
  status.append(el("span", {}, `${details.length} problem(s) against the input schema:`));
  const list = el("ul", { id: "validation-problems" });
  for (const detail of details) {
    const item = el("li", { "data-problem": detail.instance_path }, describe(detail));
    const alternatives = alternativesList(detail);
    if (alternatives) item.append(alternatives);
    list.append(item);
    const slot = form.querySelector(`[data-error-for="${CSS.escape(detail.instance_path)}"]`);
    if (slot) {
      slot.textContent = describe(detail);
      const control = [...form.querySelectorAll(CONTROLS)]
        .find((c) => c.dataset.pointer === detail.instance_path);
      if (control) control.setAttribute("aria-invalid", "true");
    }
  }
  status.append(list);
}

let validations = 0;
let pending = null; // the debounced check scheduled by typing

async function validate(form) {
  const mine = ++validations;
  const { args, local } = collect(form);
  const answer = await fetch(PREFIX + "/api/validate", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    credentials: "same-origin",
    body: JSON.stringify({ skill: form.dataset.skill, arguments: args }),
  });
  if (args === undefined) { showValidity(form, local); return null; }
  if (!answer.ok) { showValidity(form, [{ instance_path: "", keyword: `HTTP ${answer.status}` }]); return null; }
  const verdict = await answer.json();
  if (mine !== validations) return null; // a newer check is on its way; show that one
  const details = [...local, ...verdict.details];
  showValidity(form, details);
  return details.length ? null : args;
}

function stateName(state) { return String(state || "").replace("TASK_STATE_", ""); }

function dataOf(parts) {
  for (const part of parts || []) if ("data" in part) return part.data;
  return (parts || []).filter((p) => "text" in p).map((p) => p.text).join("\n");
}

// Where the result names a record: JSON Pointers inside the result whose value is an artifactId.
function references(value, ids, path, found) {
  if (Array.isArray(value)) value.forEach((v, i) => references(v, ids, `${path}/${i}`, found));
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) references(v, ids, `${path}/${k}`, found);
  } else if (typeof value === "string" && ids.has(value)) found.push([path, value]);
  return found;
}

// The members a one-line answer is read from: the result's top-level scalars (its lists and
// objects are for the folded JSON below, and may be large).
function scalars(value) {
  if (!value || typeof value !== "object" || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v === null || typeof v !== "object"));
}

async function showAnswer(box, run, result) {
  const body = run.error ? { error: run.error } : { result: scalars(dataOf(result.parts)) };
  try {
    const answer = await fetch(PREFIX + "/api/summary", {
      method: "POST", headers: { "Content-Type": "application/json" }, credentials: "same-origin",
      body: JSON.stringify(body),
    });
    const line = answer.ok ? (await answer.json()).summary : "";
    box.textContent = line || "The result is below.";
  } catch (exc) {
    box.textContent = "The result is below.";
  }
}

// The artifacts with their data in their schemas' member order, as the CLI prints them (the
// agent's JSON keeps no order); on any failure, as they came.
async function inSchemaOrder(skill, artifacts) {
  const plain = artifacts.map((a) => ({ artifactId: a.artifactId, name: a.name, data: dataOf(a.parts) }));
  try {
    const answer = await fetch(PREFIX + "/api/ordered", {
      method: "POST", headers: { "Content-Type": "application/json" }, credentials: "same-origin",
      body: JSON.stringify({ skill, artifacts: plain }),
    });
    if (!answer.ok) return artifacts;
    const ordered = (await answer.json()).artifacts;
    return artifacts.map((a, i) => ({ ...a, parts: [{ data: ordered[i].data }] }));
  } catch (exc) {
    return artifacts;
  }
}

function handOver(next, result) {
  // Hand the result (never a token) to the next skill's page.
  sessionStorage.setItem(HANDOFF, JSON.stringify({ skill: next, arguments: dataOf(result.parts), from: document.getElementById("invoke-form").dataset.skill }));
  window.location.assign(`${PREFIX}/try?skill=${encodeURIComponent(next)}`);
}

function recordsView(result, records) {
  const fold = el("details", { id: "result-details" });
  const count = records.length;
  fold.append(el("summary", {}, result ? `The result${count ? ` and its ${count} record${count === 1 ? "" : "s"}` : ""} as JSON`
    : `${count} record${count === 1 ? "" : "s"} as JSON`));
  if (result) {
    fold.append(el("h4", {}, `Result (${result.name || "result"})`),
      el("pre", { id: "result-data" }, pretty(dataOf(result.parts))));
  }
  if (result && count) {
    const ids = new Set(records.map((r) => r.artifactId));
    const found = references(dataOf(result.parts), ids, "", []);
    fold.append(el("h4", {}, "How they reference each other"));
    const table = el("table", { id: "references" });
    table.append(el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "In the result"),
      el("th", { scope: "col" }, "names the record artifact"))));
    const body = el("tbody");
    for (const [pointer, id] of found) {
      body.append(el("tr", {}, el("td", {}, el("code", {}, pointer)),
        el("td", {}, el("a", { href: `#record-${id}` }, id))));
    }
    if (!found.length) body.append(el("tr", {}, el("td", { colspan: "2" }, "The result names no record.")));
    table.append(body);
    fold.append(table);
  }
  if (count) {
    fold.append(el("h4", {}, "Supporting records"));
    for (const record of records) {
      const box = el("div", { class: "record", id: `record-${record.artifactId}` });
      box.append(el("p", {}, "artifact ", el("code", {}, record.artifactId), ` (${record.name || "record"})`),
        el("pre", {}, pretty(dataOf(record.parts))));
      fold.append(box);
    }
  }
  return fold;
}

function renderOutcome(run) {
  const outcome = document.getElementById("outcome");
  outcome.replaceChildren();
  const state = stateName(run.state);
  outcome.append(el("h3", {}, "Outcome"));
  outcome.append(el("p", { id: "final-state" }, `Task ${run.taskId || "(none)"}: `,
    el("span", { class: `state state-${state.toLowerCase()}` }, state || "no task")));
  const result = run.artifacts.get("result");
  const records = [...run.artifacts.values()].filter((a) => a.artifactId !== "result");
  if (result || run.error) {
    const answer = el("p", { id: "result-answer", class: "answer", role: "status" }, "…");
    outcome.append(answer);
    showAnswer(answer, run, result);
  }
  if (run.error) {
    outcome.append(el("h4", {}, "Error object"), el("pre", { id: "error-object" }, pretty(run.error)));
  }
  const form = document.getElementById("invoke-form");
  const feeds = (form.dataset.feeds || "").split(" ").filter(Boolean);
  if (result && stateName(run.state) === "COMPLETED") {
    if (form.dataset.then) { handOver(form.dataset.then, result); return; }
    for (const next of feeds) {
      const button = el("button", { type: "button", class: "feed" }, `Use the result as input of ${next}`);
      button.addEventListener("click", () => handOver(next, result));
      outcome.append(el("p", {}, button));
    }
  }
  if (run.taskId) {
    outcome.append(el("p", {}, el("a", { href: `${PREFIX}/audit?task=${encodeURIComponent(run.taskId)}`, id: "audit-link" },
      "Audit rows of this task"), " · ", el("a", { href: `${PREFIX}/tasks` }, "Your tasks")));
  }
  if (result || records.length) {
    const view = el("div", { id: "result-view" });
    outcome.append(view);
    inSchemaOrder(form.dataset.skill, [result, ...records].filter(Boolean)).then((ordered) => {
      const byId = new Map(ordered.map((a) => [a.artifactId, a]));
      view.replaceChildren(recordsView(result && byId.get("result"), records.map((r) => byId.get(r.artifactId))));
    });
  }
  outcome.querySelector("h3").setAttribute("tabindex", "-1");
  outcome.querySelector("h3").focus();
}

function onEvent(run, message, log) {
  if (message.error) {
    run.error = message.error;
    log.append(el("li", {}, `error ${message.error.code}: ${message.error.message || ""}`));
    return;
  }
  const result = message.result || {};
  if (result.task) {
    const task = result.task;
    run.taskId = task.id; run.state = task.status && task.status.state;
    for (const a of task.artifacts || []) run.artifacts.set(a.artifactId, a);
    if (task.status && task.status.message && ["REJECTED", "FAILED"].includes(stateName(run.state))) {
      run.error = dataOf(task.status.message.parts);
    }
    log.append(el("li", {}, `task ${task.id}: ${stateName(run.state)}`));
  } else if (result.statusUpdate) {
    const update = result.statusUpdate;
    run.taskId = update.taskId; run.state = update.status.state;
    if (update.status.message && ["REJECTED", "FAILED"].includes(stateName(run.state))) {
      run.error = dataOf(update.status.message.parts);
    }
    log.append(el("li", {}, `status: ${stateName(run.state)}`));
  } else if (result.artifactUpdate) {
    const artifact = result.artifactUpdate.artifact;
    const known = run.artifacts.get(artifact.artifactId);
    if (known && result.artifactUpdate.append) known.parts.push(...artifact.parts);
    else run.artifacts.set(artifact.artifactId, artifact);
    log.append(el("li", {}, `artifact ${artifact.artifactId} (${artifact.name || ""})`));
  } else if (result.message) {
    log.append(el("li", {}, `message: ${dataOf(result.message.parts)}`));
  }
}

async function invoke(form) {
  clearTimeout(pending);
  const args = await validate(form);
  if (args === null) {
    // Say so where the outcome would be, and take the reader to the problems.
    const outcome = document.getElementById("outcome");
    const count = document.querySelectorAll("#validation-problems > li").length;
    outcome.replaceChildren(el("p", { class: "error", role: "alert", id: "not-invoked" },
      `Not invoked: the arguments fail the input schema (${count || "see the"} problem${count === 1 ? "" : "s"} above). ` +
      "Fix them, then invoke again."));
    const validity = document.getElementById("validity");
    validity.scrollIntoView({ block: "center" });
    validity.focus();
    return;
  }
  const button = document.getElementById("invoke-button");
  const log = document.getElementById("stream");
  log.replaceChildren();
  document.getElementById("outcome").replaceChildren();
  button.disabled = true;
  const run = { taskId: null, state: null, error: null, artifacts: new Map() };
  try {
    const answer = await fetch(PREFIX + "/api/invoke", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Accept": "text/event-stream" },
      credentials: "same-origin",
      body: JSON.stringify({ skill: form.dataset.skill, arguments: args }),
    });
    if (!answer.ok || !answer.body) throw new Error(`HTTP ${answer.status}`);
    const reader = answer.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value.replace(/\r\n/g, "\n");
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n");
        if (data) onEvent(run, JSON.parse(data), log);
      }
    }
  } catch (exc) {
    log.append(el("li", {}, `stream failed: ${exc.message}`));
  } finally {
    button.disabled = false;
  }
  renderOutcome(run);
}

function setUpTry() {
  const form = document.getElementById("invoke-form");
  if (!form) return;
  const schedule = () => { clearTimeout(pending); pending = setTimeout(() => validate(form), 200); };
  const box = document.getElementById("arguments-json");
  const mode = document.getElementById("json-mode");
  box.addEventListener("input", () => { mode.checked = true; });
  const handed = JSON.parse(sessionStorage.getItem(HANDOFF) || "null");
  if (handed && handed.skill === form.dataset.skill) {
    sessionStorage.removeItem(HANDOFF);
    box.value = pretty(handed.arguments);
    mode.checked = true;
    fill(form, handed.arguments);
    const note = document.getElementById("handed");
    if (note) {
      note.hidden = false;
      note.textContent = `Filled from the result of ${handed.from || "the skill before"}: invoke to run ${form.dataset.skill} on it.`;
    }
  }
  form.addEventListener("input", schedule);
  form.addEventListener("change", schedule);
  form.addEventListener("submit", (event) => { event.preventDefault(); invoke(form); });
  document.getElementById("validity").setAttribute("tabindex", "-1");
  validate(form);
}

// Live refresh: a region marked data-live="SECONDS" is fetched again (the same URL, the same
// cookie) and its contents swapped in, while its checkbox is ticked; a region the new page no
// longer marks live (no task running any more) stops. Nothing else on the page moves.
function setUpLive() {
  const region = document.querySelector("[data-live]");
  const toggle = document.getElementById("live-toggle");
  const status = document.getElementById("live-status");
  if (!region || !toggle || !status) return;
  let timer = null;
  const stop = (why) => { clearInterval(timer); timer = null; toggle.checked = false; if (why) status.textContent = why; };
  async function refresh() {
    try {
      // Said to be a refresh: the server audited the view already and writes no row for it.
      const answer = await fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html", "X-Console-Refresh": "1" } });
      if (!answer.ok || answer.redirected) { stop(`Live refresh stopped: the page answered ${answer.status}${answer.redirected ? " (log in again)" : ""}.`); return; }
      const fresh = new DOMParser().parseFromString(await answer.text(), "text/html").getElementById(region.id);
      if (!fresh) { stop("Live refresh stopped: the page changed."); return; }
      region.replaceChildren(...fresh.childNodes);
      status.textContent = `Updated at ${new Date().toLocaleTimeString()}.`;
      if (!fresh.hasAttribute("data-live")) stop("Nothing is running any more: live refresh stopped.");
    } catch (exc) {
      status.textContent = "Live refresh failed; trying again.";
    }
  }
  const start = () => { if (!timer) timer = setInterval(refresh, 1000 * Number(region.dataset.live || 30)); };
  toggle.addEventListener("change", () => { if (toggle.checked) { status.textContent = ""; start(); } else stop("Live refresh paused."); });
  if (toggle.checked) start();
}

// ---------------------------------------------------------------------------- the drawing
// The server draws the graph as SVG; this only moves its viewBox (zoom and pan, by buttons,
// wheel, drag or keys) and adds classes: "match" for what the drawing's filters select, "pair"
// for the lines between two chosen ends. Without script the drawing is whole and its links work.

const ZOOM_STEP = 1.25;
const ZOOM_MAX = 12;
const FIGURES_AT = 1.8;  // from this zoom on, every line carries its figures

function setUpDrawing() {
  const svg = document.getElementById("topology");
  if (!svg) return;
  const [x0, y0, w0, h0] = svg.getAttribute("viewBox").split(/\s+/).map(Number);
  const view = { x: x0, y: y0, w: w0, h: h0 };
  const status = document.getElementById("zoom-level");
  const always = svg.classList.contains("figures");
  function apply() {
    const scale = w0 / view.w;
    svg.setAttribute("viewBox", `${view.x.toFixed(1)} ${view.y.toFixed(1)} ${view.w.toFixed(1)} ${view.h.toFixed(1)}`);
    svg.dataset.zoom = scale.toFixed(2);
    svg.style.setProperty("--zoom", scale.toFixed(3));
    svg.classList.toggle("figures", always || scale >= FIGURES_AT);
    if (status) status.textContent = `${Math.round(scale * 100)} %`;
  }
  function zoom(factor, cx, cy) {
    const scale = Math.min(Math.max((w0 / view.w) * factor, 1), ZOOM_MAX);
    const w = w0 / scale, h = h0 / scale;
    const fx = cx === undefined ? 0.5 : (cx - view.x) / view.w;
    const fy = cy === undefined ? 0.5 : (cy - view.y) / view.h;
    view.x += (view.w - w) * fx; view.y += (view.h - h) * fy; view.w = w; view.h = h;
    clamp(); apply();
  }
  function pan(dx, dy) { view.x += dx; view.y += dy; clamp(); apply(); }
  function clamp() {
    view.x = Math.min(Math.max(view.x, x0), x0 + w0 - view.w);
    view.y = Math.min(Math.max(view.y, y0), y0 + h0 - view.h);
  }
  function reset() { Object.assign(view, { x: x0, y: y0, w: w0, h: h0 }); apply(); }
  function point(event) {
    const box = svg.getBoundingClientRect();
    return [view.x + (event.clientX - box.left) / box.width * view.w,
            view.y + (event.clientY - box.top) / box.height * view.h];
  }
  document.querySelectorAll("[data-zoom-action]").forEach((button) => {
    button.addEventListener("click", () => {
      const action = button.dataset.zoomAction;
      if (action === "in") zoom(ZOOM_STEP); else if (action === "out") zoom(1 / ZOOM_STEP); else reset();
    });
  });
  // The wheel zooms the drawing only while it can: at the whole drawing, scrolling down
  // scrolls the page as usual (a drawing as tall as the screen must not trap the wheel).
  svg.addEventListener("wheel", (event) => {
    const before = view.w;
    zoom(event.deltaY < 0 ? ZOOM_STEP : 1 / ZOOM_STEP, ...point(event));
    if (view.w !== before) event.preventDefault();
  }, { passive: false });
  svg.addEventListener("keydown", (event) => {
    const step = view.w / 10;
    const keys = { "+": () => zoom(ZOOM_STEP), "=": () => zoom(ZOOM_STEP), "-": () => zoom(1 / ZOOM_STEP),
      "0": reset, ArrowLeft: () => pan(-step, 0), ArrowRight: () => pan(step, 0),
      ArrowUp: () => pan(0, -step), ArrowDown: () => pan(0, step) };
    if (keys[event.key] && !event.altKey && !event.ctrlKey && !event.metaKey) {
      event.preventDefault(); keys[event.key]();
    }
  });
  let drag = null;
  svg.addEventListener("pointerdown", (event) => {
    if (event.button === 0) drag = { x: event.clientX, y: event.clientY, moved: false };
  });
  svg.addEventListener("pointermove", (event) => {
    if (!drag || drag.done) return;
    const dx = event.clientX - drag.x, dy = event.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 5) return;
    drag.moved = true;
    const box = svg.getBoundingClientRect();
    pan(-dx * view.w / box.width, -dy * view.h / box.height);
    drag.x = event.clientX; drag.y = event.clientY;
  });
  svg.addEventListener("click", (event) => {  // a drag is not a click on what it started over
    if (drag && drag.moved) { event.preventDefault(); event.stopPropagation(); }
    drag = null;
  }, true);
  window.addEventListener("pointerup", () => {
    if (drag && drag.moved) drag.done = true; else drag = null;
  });
  apply();
  setUpHighlights(svg);
}

function words(list) { return (list || "").split(/\s+/).filter(Boolean); }

function setUpHighlights(svg) {
  for (const id of ["drawing-filter", "pair-form"]) {  // they act as they change: nothing to send
    const form = document.getElementById(id);
    if (form) form.addEventListener("submit", (event) => event.preventDefault());
  }
  const lines = [...svg.querySelectorAll("[data-a][data-b]")];
  const ends = [...svg.querySelectorAll("[data-end]")];
  const selects = [...document.querySelectorAll("#drawing-filter select[data-filter]")];
  const filterResult = document.getElementById("filter-result");
  function filter() {
    const wanted = selects.filter((s) => s.value).map((s) => [s.dataset.filter, s.value]);
    const byKind = wanted.find(([name]) => name === "kinds");
    svg.classList.toggle("filtering", wanted.length > 0);
    svg.classList.toggle("by-kind", Boolean(byKind));
    let count = 0;
    for (const line of lines) {
      const hit = wanted.length > 0 && wanted.every(([name, value]) => words(line.dataset[name]).includes(value));
      line.classList.toggle("match", hit);
      if (hit) count += 1;
    }
    for (const end of ends) {
      end.classList.toggle("match", Boolean(byKind) && words(end.dataset.kinds).includes(byKind[1]));
    }
    if (filterResult) filterResult.textContent = wanted.length ? `${count} of ${lines.length} lines highlighted` : "";
  }
  selects.forEach((s) => s.addEventListener("change", filter));
  const [one, other] = ["pair-a", "pair-b"].map((id) => document.getElementById(id));
  const pairResult = document.getElementById("pair-result");
  function pair() {
    if (!one || !other) return;
    const a = one.value, b = other.value;
    const on = Boolean(a && b && a !== b);
    svg.classList.toggle("pairing", on);
    let count = 0;
    for (const line of lines) {
      const ab = [line.dataset.a, line.dataset.b];
      const hit = on && ab.includes(a) && ab.includes(b);
      line.classList.toggle("pair", hit);
      if (hit) count += Number(line.dataset.links || 1);
    }
    for (const end of ends) end.classList.toggle("pair-end", on && [a, b].includes(end.dataset.end));
    const named = (select) => select.selectedOptions[0].textContent;
    if (pairResult) pairResult.textContent = on ? `${count} link${count === 1 ? "" : "s"} between ${named(one)} and ${named(other)}` : "";
  }
  [one, other].forEach((s) => s && s.addEventListener("change", pair));
  // Pointing at a node shows its own lines (which upper nodes feed it, which lower it feeds).
  for (const end of svg.querySelectorAll("g.node[data-end]")) {
    const id = end.dataset.end;
    end.addEventListener("pointerenter", () => {
      svg.classList.add("hovering");
      for (const line of lines) line.classList.toggle("touching", line.dataset.a === id || line.dataset.b === id);
    });
    end.addEventListener("pointerleave", () => {
      svg.classList.remove("hovering");
      for (const line of lines) line.classList.remove("touching");
    });
  }
  filter(); pair();
}

document.addEventListener("DOMContentLoaded", () => { setUpLogin(); setUpTry(); setUpLive(); setUpDrawing(); });
