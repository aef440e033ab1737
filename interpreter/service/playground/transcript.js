// "Save as transcript": a playground session as a `mgi test` transcript
// (interpreter/transcripts/run.py has the format) whose expectations are what happened.
//
// In: the session as the page holds it: the scenario, how it started (bot first, focus
// node, profile) and every turn line the API answered (with the NLU source of its trace).
// Out: {text, saved, stopped}: the transcript, how many turns it holds, and why it stops
// early (null when it holds them all). Each step expects the node, the next node (`-` once
// complete), the reason, completion, every slot and a fragment of the response (`says`),
// so `mgi test` passes on it unchanged against the same IR. A turn the rules NLU did not
// read (an LLM NLU) carries its NLU result as an `nlu:` override, so the run does not
// depend on a model. A transcript line is one line, and ` #` starts a comment there: a
// text holding a line break or a `#` after a space cannot be written, so the transcript
// stops before that turn and says so.

const SAYS_LIMIT = 40;  // characters of the response a `says:` line keeps
const COMMENT = /(^|\s)#/;

/** The transcript of `session` ({scenario, botFirst, focus, profile, turns}). */
export function transcriptText(session, now = new Date()) {
  const lines = [
    `# Saved from the Mago playground on ${now.toISOString().slice(0, 16)}Z: what happened,`,
    `# step by step. Run it with: mgi test THIS_FILE --ir-dir DIR (DIR/${oneLine(session.scenario)}.ir).`,
    `scenario: ${session.scenario}`,
    "nlu: rules",
    `bot_first: ${session.turns.length > 0 && session.turns[0].line.user === null}`,
  ];
  if (session.focus) lines.push(`focus: ${session.focus}`);
  if (session.profile && Object.keys(session.profile).length) {
    lines.push(`profile: ${JSON.stringify(session.profile)}`);
  }
  let saved = 0, stopped = null;
  for (const turn of session.turns) {
    const problem = unwritable(turn.line.user);
    if (problem) {
      stopped = `turn ${turn.line.turn} is not saved (nor any after it): its text ${problem}`;
      lines.push("", `# stopped here: ${stopped}`);
      break;
    }
    lines.push("", ...step(turn));
    saved += 1;
  }
  return {text: lines.join("\n") + "\n", saved, stopped};
}

/** Why a user text cannot be a transcript line, or null. */
export function unwritable(text) {
  if (text === null) return null;
  if (/[\n\r\u2028\u2029\u0085\u000b\u000c]/.test(text)) return "holds a line break";
  if (COMMENT.test(text)) return "holds a # after a space (a transcript comment)";
  if (text !== text.trim() && text.trim() !== "") return "starts or ends with spaces";
  return null;
}

function step(turn) {
  const line = turn.line;
  const head = line.user === null ? "bot:" : line.user.trim() ? `user: ${line.user}` : "user:";
  const out = [head];
  if (line.user !== null && turn.nluSource && !["rules", "request"].includes(turn.nluSource) &&
      line.nlu) {
    out.push(`  nlu: ${JSON.stringify(override(line.nlu))}  # read by ${oneLine(turn.nluSource)}`);
  }
  out.push(`  node: ${line.node}`, `  next: ${line.next_node ?? "-"}`,
           `  reason: ${line.reason}`, `  complete: ${line.complete}`);
  if (line.slots && Object.keys(line.slots).length) out.push(`  slots: ${JSON.stringify(line.slots)}`);
  const fragment = saysFragment(line.response);
  if (fragment) out.push(`  says: ${fragment}`);
  return out;
}

function override(nlu) {
  const given = {intent: nlu.intent, dialogue_act: nlu.dialogue_act, slots: nlu.slots || {}};
  if (nlu.confidence !== undefined && nlu.confidence !== null) given.confidence = nlu.confidence;
  return given;
}

/** A piece of the response that a `says:` line can carry: its first line, cut before a
 * `#` that would start a comment, at most SAYS_LIMIT characters, trimmed. */
export function saysFragment(response) {
  if (!response) return "";
  let text = response.split("\n")[0];
  const comment = COMMENT.exec(text);
  if (comment) text = text.slice(0, comment.index);
  return Array.from(text.trim()).slice(0, SAYS_LIMIT).join("").trim();
}

function oneLine(text) {
  return String(text).replace(/\s+/g, " ");
}
