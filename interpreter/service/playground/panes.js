// The panes that show one turn: its trace and the slots after it, built as DOM nodes.
//
// In: a turn as the page keeps it, {line, trace}: the turn line of the API answer and the
// `trace` of SPEC 12 (null for the opening, which has none). Out: arrays of elements to put
// in the trace pane and the slots pane; `moveText` is the turn's move as `mgi run` writes it.
// After: nothing here calls the API or reads the page's state; every table has a caption and
// column headers (`scope`), and each data cell says which column it is in (`data-label`),
// which the phone layout shows in front of the value.

/** An element with attributes (`on...` ones are listeners) and children (strings, nodes). */
export function h(tag, attributes = {}, ...children) {
  const made = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (key === "class") made.className = value;
    else if (key.startsWith("on")) made.addEventListener(key.slice(2), value);
    else made.setAttribute(key, value === true ? "" : value);
  }
  made.append(...children.flat().filter(c => c !== null && c !== undefined && c !== false));
  return made;
}

/** Text for screen readers only. */
export const hidden = text => h("span", {class: "sr-only"}, text);
const json = value => JSON.stringify(value);

/** `greeting → collect_patient_info (default_next)`, as `mgi run` writes a turn's move. */
export function moveText(line) {
  if (line.reason === "opening") return `${line.node} (opening)`;
  if (line.complete) return `${line.node} → complete (${line.reason})`;
  if (line.next_node && line.next_node !== line.node) {
    return `${line.node} → ${line.next_node} (${line.reason})`;
  }
  return `${line.node} stays (${line.reason})`;
}

export function traceView({line, trace}) {
  const title = h("h3", {}, `Turn ${line.turn} · ${moveText(line)}`);
  if (!trace) {
    const why = line.user === null ? "The opening: no NLU and no routing ran; the node speaks."
      : "No trace was recorded for this turn.";
    return [title, h("p", {class: "help"}, why)];
  }
  return [title, factList(line, trace), evaluatedTable(trace.evaluated), ...changeLists(trace),
          h("details", {class: "lines"},
            h("summary", {}, "As mgi run --output-level detailed prints it"),
            h("pre", {}, trace.lines.join("\n")))];
}

function factList(line, trace) {
  const nlu = line.nlu || {};
  const heard = nlu.slots && Object.keys(nlu.slots).length ? ` · slots ${json(nlu.slots)}` : "";
  const read = `${trace.nlu_source ?? "none (silence)"} · intent ${nlu.intent ?? "null"} · ` +
               `act ${nlu.dialogue_act ?? "-"}${heard}`;
  return h("dl", {class: "facts"},
           h("dt", {}, "NLU"), h("dd", {}, read),
           h("dt", {}, "Tier"), h("dd", {}, trace.tier),
           h("dt", {}, "Confidence"), h("dd", {}, confidenceText(trace)),
           trace.notes.length ? [h("dt", {}, "Read as"), h("dd", {}, trace.notes.join("; "))]
             : null);
}

// SPEC 13.2: how sure the NLU was, the intents it weighed and why none was chosen.
function confidenceText(trace) {
  if (trace.confidence === null || trace.confidence === undefined) return "-";
  const weighed = (trace.candidates || []).map(c => `${c.intent} ${c.score.toFixed(2)}`);
  const note = trace.intent_note ? ` (${trace.intent_note})` : "";
  return trace.confidence.toFixed(2) + (weighed.length ? ` · candidates ${weighed.join(", ")}`
                                                        : "") + note;
}

function evaluatedTable(rows) {
  if (!rows.length) {
    return h("p", {class: "help"},
             "No transition was evaluated (the turn was decided before routing).");
  }
  const fired = rows.findIndex(row => row.result === true);
  const headers = ["Rule", "Condition", "Values read", "Result"]
    .map(text => h("th", {scope: "col"}, text));
  return h("table", {class: "evaluated"},
           h("caption", {}, "Transitions evaluated, in order"),
           h("thead", {}, h("tr", {}, headers)),
           h("tbody", {}, rows.map((row, i) => evaluatedRow(row, i === fired))));
}

function evaluatedRow(row, fired) {
  const kind = fired ? "fired" : row.result === false ? "false" : "skipped";
  const values = Object.entries(row.values)
    .map(([field, value]) => h("code", {class: "value"}, `${field} = ${json(value)}`));
  return h("tr", {class: kind},
           h("th", {scope: "row"}, row.rule, h("span", {class: "target"}, ` → ${row.target}`)),
           h("td", {"data-label": "Condition"}, h("code", {}, row.condition ?? "(always)")),
           h("td", {class: "values", "data-label": "Values read"}, values.length ? values : "—"),
           h("td", {class: "result", "data-label": "Result"},
             row.result === null ? "skipped" : String(row.result),
             fired ? hidden(" (taken)") : null));
}

function changeLists(trace) {
  const lists = [];
  const add = (title, items) => {
    if (items.length) lists.push(h("h4", {}, title), h("ul", {class: "changes"},
                                                       items.map(t => h("li", {}, t))));
  };
  add("Slot updates", trace.slot_updates.map(c => c.change === "confirm"
    ? `${c.slot} = ${json(c.value)}? (confirmation asked)` : `${c.slot} = ${json(c.value)}`));
  add("Dropped", trace.dropped.map(d => {
    const what = Object.entries(d).filter(([key]) => key !== "reason");
    return `${what.map(([key, value]) => `${key} ${json(value)}`).join(", ")} (${d.reason})`;
  }));
  add("Passed", trace.passed.map(p => `${p.node} (${p.reason})`));
  return lists;
}

export function slotsView({line, trace}) {
  const slots = Object.entries(line.slots || {}).filter(([, value]) => value !== null);
  if (!slots.length) return [h("p", {class: "help"}, "No slot is filled yet.")];
  const stored = new Set((trace?.slot_updates || []).filter(c => c.change === "stored")
    .map(c => c.slot));
  const rows = slots.map(([name, value]) => h("tr", {class: stored.has(name) ? "changed" : null},
    h("th", {scope: "row"}, name),
    h("td", {}, h("code", {}, json(value)),
      stored.has(name) ? h("span", {class: "badge"}, " stored this turn") : null)));
  return [h("table", {class: "slots"},
            h("caption", {}, `After turn ${line.turn}`),
            h("thead", {}, h("tr", {}, h("th", {scope: "col"}, "Slot"),
                                       h("th", {scope: "col"}, "Value"))),
            h("tbody", {}, rows))];
}
