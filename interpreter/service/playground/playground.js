// The playground page (SPEC 12): its panes, over the public API of `mgi serve` only.
//
// In: the user's actions; the answers of GET /dm/v1/scenarios, POST /dm/v1/session,
// POST /dm/v1/session/json, POST /dm/v1/message (with `trace: true`) and
// GET /dm/v1/scenarios/{name}/graph. Out: the panes: the conversation (a bubble per
// utterance, the reason under each bot turn, a button that selects the turn), the graph
// (the node the session is at after the selected turn, the transitions that turn took), the
// trace of the selected turn and the slots after it; a transcript to download.
// After: the page keeps every turn line it was answered (the transcript is built from them)
// and nothing else; the API key, when the server wants one, lives in sessionStorage (this
// tab only) and goes out as `Authorization: Bearer`. `?scenario=NAME` starts a session of
// that scenario at once, draws its graph and puts the cursor in the message box.

import {ANY_NODE, drawGraph, edgeOf, highlight, layout, parseMermaid} from "./graph.js";
import {h, hidden, moveText, slotsView, traceView} from "./panes.js";
import {transcriptText} from "./transcript.js";
import {analyticsView} from "./analytics.js";

const KEY_STORE = "mago.playground.apiKey";
const ROUTED = /^(global[:[]|safety:|next_nodes\[|default_next|stay:)/;  // reasons with an edge
const $ = id => document.getElementById(id);
const view = {scenarios: [], session: null, graph: null, svg: null, selected: -1, busy: false,
              fitChosen: false};

class Problem extends Error {
  constructor(status, code, message, diagnostics = []) {
    super(message);
    Object.assign(this, {status, code, diagnostics});
  }
}

/** One API call; the decoded answer, or a Problem with the server's code and message. */
async function api(method, path, body) {
  const headers = {Accept: "application/json"};
  const key = sessionStorage.getItem(KEY_STORE);
  if (key) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let answer;
  try {
    answer = await fetch(path, {method, headers,
                                body: body === undefined ? undefined : JSON.stringify(body)});
  } catch {
    throw new Problem(0, "no_answer", "the server did not answer; is mgi serve still running?");
  }
  const text = await answer.text();
  const isJson = (answer.headers.get("content-type") || "").startsWith("application/json");
  const value = isJson && text ? JSON.parse(text) : text;
  if (answer.ok) return value;
  const error = (isJson && value.error) ||
                {code: `http_${answer.status}`, message: text.slice(0, 200)};
  if (answer.status === 401) askForKey();
  throw new Problem(answer.status, error.code, error.message, error.diagnostics || []);
}

// --- small helpers ----------------------------------------------------------------------

function say(text) {
  $("status").textContent = text;
}

function showError(id, problem) {
  const box = $(id);
  box.hidden = !problem;
  box.textContent = problem ? `${problem.message}${problem.code ? ` (${problem.code})` : ""}` : "";
}

function askForKey() {
  $("key-box").open = true;
  say("This server wants its API key: enter it under “API key”, then try again.");
  $("api-key").focus();
}

// --- starting ---------------------------------------------------------------------------

/** The optional fields of a session start, or null (with the error shown) if one is bad. */
function startOptions() {
  const options = {};
  const opening = $("opening").value;
  if (opening) options.bot_first = opening === "bot";
  const focus = $("focus").value.trim();
  if (focus) options.focus_node = focus;
  const profile = $("profile").value.trim();
  if (profile) {
    let parsed;
    try {
      parsed = JSON.parse(profile);
    } catch (error) {
      showError("start-error", new Problem(0, "", `the profile is not JSON: ${error.message}`));
      return null;
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      showError("start-error", new Problem(0, "", "the profile must be a JSON object"));
      return null;
    }
    options.profile = parsed;
  }
  return options;
}

async function graphText(name, irHash) {
  const query = irHash ? `?format=mermaid&ir_hash=${irHash}` : "?format=mermaid";
  return api("GET", `dm/v1/scenarios/${encodeURIComponent(name)}/graph${query}`);
}

async function startRegistered(event) {
  event?.preventDefault();
  showError("start-error", null);
  const options = startOptions();
  const name = $("scenario").value;
  const listed = view.scenarios.find(s => s.name === name);
  if (!options || !listed) return;
  const drawing = graphText(name, listed.ir_hash).catch(problem => problem);  // meanwhile
  let made;
  try {
    made = await api("POST", "dm/v1/session", {scenario: name, ...options});
  } catch (problem) {
    showError("start-error", problem);
    return;
  }
  const text = made.ir_hash === listed.ir_hash ? await drawing  // else: redeployed meanwhile
    : await graphText(name, made.ir_hash).catch(p => p);
  await begin(made, options, text);
}

async function startPasted(event) {
  event.preventDefault();
  showError("start-error", null);
  showDiagnostics([]);
  const source = $("paste").value;
  const options = startOptions();
  if (!options) return;
  if (!source.trim()) {
    showError("start-error", new Problem(0, "", "paste a scenario JSON first"));
    return;
  }
  let made;
  try {
    made = await api("POST", "dm/v1/session/json", {scenario_text: source, ...options});
  } catch (problem) {
    if (problem.code === "scenario_invalid") showDiagnostics(problem.diagnostics);
    else showError("start-error", problem);
    return;
  }
  await begin(made, options, await graphText(made.scenario, made.ir_hash).catch(p => p));
}

function showDiagnostics(diagnostics) {
  const list = $("diagnostics-list");
  list.replaceChildren(...diagnostics.map(diagnosticItem));
  $("diagnostics").hidden = diagnostics.length === 0;
  if (diagnostics.length) list.querySelector("button")?.focus();
}

function diagnosticItem(d) {
  const column = d.column ? `, column ${d.column}` : "";
  const where = d.line ? `line ${d.line}${column}` : d.path || "the scenario";
  const go = h("button", {type: "button", class: "link", onclick: () => selectLine(d.line)},
               hidden("Go to "), where);
  return h("li", {class: `diagnostic ${d.severity}`},
           go, " ", h("strong", {}, d.code), ` ${d.severity}: ${d.message}`,
           d.path ? h("span", {class: "pointer"}, ` (at ${d.path})`) : null,
           d.hint ? h("p", {class: "hint"}, `hint: ${d.hint}`) : null);
}

function selectLine(line) {
  const area = $("paste");
  if (!line) return area.focus();
  const lines = area.value.split("\n");
  const start = lines.slice(0, line - 1).reduce((sum, l) => sum + l.length + 1, 0);
  area.focus();
  area.setSelectionRange(start, start + (lines[line - 1] || "").length);
}

/** A session has started: reset the panes, draw its graph, show its opening (or, when the
 * user speaks first, the node it starts at, read from GET /dm/v1/session/{id}). */
async function begin(made, options, text) {
  let start = made.turn ? made.turn.node : null;
  if (!start) {
    start = await api("GET", `dm/v1/session/${made.session_id}`)
      .then(state => state.current_node, () => null);
  }
  view.session = {id: made.session_id, scenario: made.scenario, irHash: made.ir_hash,
                  focus: options.focus_node || null, profile: options.profile || null,
                  turns: [], complete: false, start};
  view.selected = -1;
  $("log").replaceChildren();
  setGraph(text);
  if (made.turn) addTurn(made.turn, null);
  refresh();
  enableChat();
  say(`Session ${made.session_id} of ${made.scenario} started` +
      (options.focus_node ? ` in focus on ${options.focus_node}.` : "."));
  $("message").focus();
}

// --- the conversation -------------------------------------------------------------------

async function send(text) {
  const session = view.session;
  if (!session || session.complete || view.busy) return;
  setBusy(true);
  showError("chat-error", null);
  try {
    const answer = await api("POST", "dm/v1/message", {session_id: session.id, text, trace: true});
    addTurn(answer.turn, answer.trace || null);
    $("message").value = "";
    refresh();
  } catch (problem) {
    showError("chat-error", problem);
  } finally {
    setBusy(false);
    if (!session.complete) $("message").focus();
  }
}

function sendTyped(event) {
  event.preventDefault();
  const text = $("message").value.trim();
  if (!text) {
    say("Type a message first, or use “Send silence” for an empty turn.");
    return;
  }
  send(text);
}

function addTurn(line, trace) {
  const session = view.session;
  session.turns.push({line, trace, nluSource: trace ? trace.nlu_source : null});
  session.complete = line.complete && !session.focus;  // in focus, a completion is reported
  view.selected = session.turns.length - 1;
  const log = $("log");
  log.append(turnItem(view.selected));
  log.scrollTop = log.scrollHeight;  // the newest turn in view
}

function turnItem(index) {
  const {line} = view.session.turns[index];
  const user = line.user === null ? null : line.user.trim()
    ? h("p", {class: "bubble user"}, hidden("You said: "), line.user)
    : h("p", {class: "bubble user silence"}, hidden("You said nothing: "), "(silence)");
  const bot = line.response === null ? null
    : h("p", {class: "bubble bot"}, hidden("Mago said: "), line.response);
  const reason = h("button", {type: "button", class: "reason", "aria-pressed": "false",
                              onclick: () => select(index)},
                   hidden(`Show the trace of turn ${line.turn}: `), moveText(line));
  return h("li", {class: "turn", "data-turn": line.turn}, user, bot, reason);
}

function select(index) {
  view.selected = index;
  refresh();
}

function setBusy(busy) {
  view.busy = busy;
  $("chat").setAttribute("aria-busy", String(busy));
  enableChat();
}

function enableChat() {
  const session = view.session;
  const open = Boolean(session) && !session.complete && !view.busy;
  for (const id of ["message", "send", "silence"]) $(id).disabled = !open;
  $("save").disabled = !session || session.turns.length === 0;
  if (session && session.complete) {
    say(`The session is complete (${lastLine().reason}); start a new one to go on.`);
  }
}

function lastLine() {
  const turns = view.session.turns;
  return turns[turns.length - 1].line;
}

// --- the graph --------------------------------------------------------------------------

function setGraph(text) {
  const box = $("graph");
  if (typeof text !== "string") {
    box.replaceChildren(h("p", {class: "error"}, `No graph: ${text?.message || "unknown error"}`));
    view.graph = view.svg = null;
    return;
  }
  view.graph = parseMermaid(text);
  const placed = layout(view.graph);
  const name = view.session?.scenario || $("scenario").value;
  view.svg = drawGraph(view.graph, placed, `The graph of ${name}`);
  view.svg.classList.toggle("labels", $("show-labels").checked);
  if (!view.fitChosen) {  // fit when the drawing stays legible at the pane's width
    $("fit").checked = placed.width <= box.clientWidth * 1.6;
    box.classList.toggle("fit", $("fit").checked);
  }
  box.replaceChildren(view.svg);
  const ids = view.graph.nodes.filter(n => !n.any).map(n => h("option", {value: n.id}));
  $("node-ids").replaceChildren(...ids);
}

/** The edges the turn went along: its hop and those of the nodes it passed. */
function takenEdges(entry) {
  const line = entry.line;
  if (line.user === null || !view.graph) return [];
  const passed = (entry.trace && entry.trace.passed) || line.passed || [];
  const stops = [line.node, ...passed.map(p => p.node), line.next_node];
  const reasons = [line.reason, ...passed.map(p => p.reason)];
  const fired = entry.trace ? entry.trace.evaluated.find(row => row.result === true) : null;
  const edges = [];
  reasons.forEach((reason, i) => {
    if (!ROUTED.test(reason)) return;
    const to = stops[i + 1] ?? (reason.startsWith("stay:") ? stops[i] : null);
    const condition = i === 0 && fired ? fired.condition : undefined;
    const edge = edgeOf(view.graph, stops[i], to, reason, condition);
    if (edge) edges.push(edge);
  });
  return edges;
}

function nodeAfter(line) {
  const held = view.session.focus || line.complete || !line.next_node;
  return held ? line.node : line.next_node;
}

function drawState() {
  if (!view.svg) return;
  const turns = view.session ? view.session.turns.slice(0, view.selected + 1) : [];
  const visited = new Set(turns.flatMap(t => [t.line.node, t.line.next_node,
                                              ...(t.line.passed || []).map(p => p.node)]));
  const entry = turns[turns.length - 1];
  const current = entry ? nodeAfter(entry.line) : view.session?.start ?? null;
  const taken = entry ? takenEdges(entry) : [];
  highlight(view.svg, {current, visited, taken});
  $("graph-summary").textContent = entry ? summary(entry.line, current, taken)
    : current ? `The session starts at ${current}; the user speaks first.` : "";
  if (!$("fit").checked && current) centreOn(current);
  performance.mark("mago:graph-drawn");
}

/** Scroll the graph's box (only it, never the page) so that node `id` is in its middle. */
function centreOn(id) {
  const node = view.svg.querySelector(`g.node[data-node="${CSS.escape(id)}"]`);
  if (!node) return;
  const box = $("graph"), shape = node.getBBox();
  const moved = node.transform.baseVal.consolidate()?.matrix ?? {e: 0, f: 0};
  box.scrollTo({left: moved.e + shape.x + shape.width / 2 - box.clientWidth / 2,
                top: moved.f + shape.y + shape.height / 2 - box.clientHeight / 2});
}

function summary(line, current, taken) {
  const after = line.user === null ? "After the opening" : `After turn ${line.turn}`;
  const where = line.complete ? `complete at ${line.node}` : `at ${current}`;
  const hop = e => `${e.source === ANY_NODE ? "any node" : e.source} → ${e.target}`;
  const how = taken.length ? `; transition ${taken.map(hop).join(", then ")} (${line.reason})`
    : line.user === null ? "" : ` (${line.reason})`;
  return `${after}: ${where}${how}.`;
}

// --- the trace and the slots --------------------------------------------------------------

function refresh() {
  for (const button of $("log").querySelectorAll("button.reason")) {
    button.setAttribute("aria-pressed", "false");
  }
  const selected = $("log").children[view.selected];
  selected?.querySelector("button.reason").setAttribute("aria-pressed", "true");
  drawState();
  const entry = view.session?.turns[view.selected];
  $("trace").replaceChildren(...(entry ? traceView(entry) : []));
  $("slots").replaceChildren(...(entry ? slotsView(entry) : []));
  enableChat();
}

// --- the transcript -----------------------------------------------------------------------

function saveTranscript() {
  const session = view.session;
  if (!session || !session.turns.length) return;
  const {text, saved, stopped} = transcriptText(session);
  const name = `${session.scenario.replace(/[^A-Za-z0-9_.-]+/g, "_")}.transcript`;
  const file = new Blob([text], {type: "text/plain;charset=utf-8"});
  const link = h("a", {href: URL.createObjectURL(file), download: name, hidden: true});
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  say(stopped ? `Saved ${saved} turn(s) as ${name}; ${stopped}.`
    : `Saved ${saved} turn(s) as ${name}: run it with mgi test.`);
}

// --- wiring -------------------------------------------------------------------------------

function useKey(event) {
  event.preventDefault();
  const key = $("api-key").value.trim();
  if (key) sessionStorage.setItem(KEY_STORE, key);
  $("api-key").value = "";
  $("key-box").open = false;
  say(key ? "The key is set for this tab." : "No key given.");
  if (!view.scenarios.length) loadScenarios();
}

function forgetKey() {
  sessionStorage.removeItem(KEY_STORE);
  say("The key is forgotten.");
}

/** Before any session: the graph of the scenario picked (a session's graph stays put). */
async function previewGraph() {
  const listed = view.scenarios.find(s => s.name === $("scenario").value);
  if (!listed || view.session) return;
  const text = await graphText(listed.name, listed.ir_hash).catch(p => p);
  if (view.session) return;
  setGraph(text);
  drawState();
}

async function loadScenarios() {
  try {
    view.scenarios = await api("GET", "dm/v1/scenarios");
  } catch (problem) {
    if (problem.status !== 401) say(`Cannot list the scenarios: ${problem.message}`);
    return;  // 401: the key box is open and says why
  }
  const options = view.scenarios.map(s => h("option", {value: s.name}, `${s.name} (${s.nodes} nodes)`));
  $("scenario").replaceChildren(...options);
  const wanted = new URLSearchParams(location.search).get("scenario");
  if (wanted && !view.scenarios.some(s => s.name === wanted)) {
    say(`No scenario ${wanted} on this server; pick one below.`);
  } else if (wanted) {
    $("scenario").value = wanted;
    await startRegistered();
    return;
  } else {
    say(`${view.scenarios.length} scenario(s). Pick one and start a session.`);
  }
  await previewGraph();
}

/** The Analytics view of the scenario picked (SPEC 16): its report and its graph. */
async function showAnalytics() {
  showError("analytics-error", null);
  const listed = view.scenarios.find(s => s.name === $("scenario").value);
  if (!listed) return;
  try {
    const [report, text] = await Promise.all([
      api("GET", `dm/v1/report?scenario=${encodeURIComponent(listed.name)}`),
      graphText(listed.name, listed.ir_hash)]);
    $("analytics").replaceChildren(...analyticsView(report, text, listed.ir_hash));
    say(`The analytics of ${listed.name}.`);
  } catch (problem) {
    showError("analytics-error", problem);
  }
}

function wire() {
  $("analytics-load").addEventListener("click", showAnalytics);
  $("key-form").addEventListener("submit", useKey);
  $("key-forget").addEventListener("click", forgetKey);
  $("start-form").addEventListener("submit", startRegistered);
  $("paste-form").addEventListener("submit", startPasted);
  $("message-form").addEventListener("submit", sendTyped);
  $("silence").addEventListener("click", () => send(""));
  $("save").addEventListener("click", saveTranscript);
  $("scenario").addEventListener("change", previewGraph);
  $("show-labels").addEventListener("change",
                                   event => view.svg?.classList.toggle("labels", event.target.checked));
  $("fit").addEventListener("change", event => {
    view.fitChosen = true;
    $("graph").classList.toggle("fit", event.target.checked);
    drawState();
  });
}

wire();
loadScenarios();
