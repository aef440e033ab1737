"""Console rendering of turns for `mgi run`: the four output levels of SPEC 7 (seed 000, 6-2).

In: a `TurnResult` from the engine, the `Runtime`, a level, and (for `debug`) the session state
as the NLG saw it. Out: the lines to print, without trailing newlines.
After: the chat lines (`You  > ...`, `Mago > ...`) are the same at every level, so a reader can
follow the conversation whatever the level; every other line is indented, so the words stand
out. Each level adds to the one before:

- chat: the words only;
- compact: + the turn number and the node move (`turn 3 · meal_check → health_check
  (default_next)`), and a completion marker;
- detailed: + how the NLU result was read (intent, act, corrections), slot changes, the
  fallback policy, the executor's findings, every transition evaluated with the facts it read
  (`routing.trace_lines`), and the slots after the turn; with an LLM plug-in, which NLU and
  NLG spoke (`nlu: rules (llm fallback: ...)`) and one line per LLM call;
- debug: + the full NLG input: the decision, the facts the conditions read and the session
  state, as `key: value` lines; every LLM call whole (request, prompt, raw answer).

Nothing here decides anything; it only reads the decision (the engine and router own the rules).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..engine import TurnResult
    from ..loader import Runtime
    from ..state import DialogueState

LEVELS = ("chat", "compact", "detailed", "debug")
USER_PREFIX = "You  > "
BOT_PREFIX = "Mago > "
INDENT = "  "
SILENCE_SHOWN = "(silence)"


def rank(level: str) -> int:
    """The level's position: each level shows everything the lower ones show."""
    return LEVELS.index(level)


def render_turn(result: TurnResult, runtime: Runtime, level: str, echo_user: bool = True,
                state: DialogueState | None = None, llm: list | tuple = ()) -> list[str]:
    """The lines of one turn at `level`; `echo_user` False when a terminal already shows them;
    `llm` the turn's LLM journal entries (`llm_lines`)."""
    depth = rank(level)
    lines: list[str] = []
    if echo_user and result.user is not None:
        lines.append(USER_PREFIX + (result.user if result.user.strip() else SILENCE_SHOWN))
    if depth >= 1:
        lines.append(INDENT + turn_header(result))
    if depth >= 2 and result.decision is not None:
        lines += detail_lines(result, runtime)
    if depth >= 3 and result.decision is not None:
        lines += nlg_input_lines(result, runtime, state)
    if depth >= 2 and llm:
        lines += llm_lines(llm, full=depth >= 3)
    if result.response is not None:
        lines += bot_lines(result.response)
    if depth >= 1 and result.complete and not result.focus:
        lines.append(INDENT + completion_marker(result.reason))
    return lines


def bot_lines(response: str) -> list[str]:
    """`Mago > ...`; a multi-line response keeps its later lines under the first."""
    first, *rest = response.split("\n") or [""]
    return [BOT_PREFIX + first] + [" " * len(BOT_PREFIX) + line for line in rest]


def completion_marker(reason: str) -> str:
    """The line that closes a conversation (compact and above)."""
    return f"── conversation complete ({reason}) ──"


def turn_header(result: TurnResult) -> str:
    """`turn 3 · meal_check → health_check (default_next)` and its stay / complete forms."""
    kind = result.decision.kind if result.decision is not None else None
    if result.reason == "opening":
        move = f"{result.node} (opening)"
    elif result.complete:
        move = f"{result.node} → complete ({result.reason})"
    elif kind == "move":
        move = f"{result.node} → {result.next_node} ({result.reason})"
    else:
        move = f"{result.node} stays ({result.reason})"
    suffix = f" · focus: not followed, still at {result.node}" if (
        result.focus and (kind == "move" or result.complete)) else ""
    return f"turn {result.turn} · {move}{suffix}"


def start_lines(runtime: Runtime, node: str, bot_first: bool, focus: bool) -> list[str]:
    """Compact-level notes before the first turn: focus mode, or who speaks first."""
    lines = []
    if focus:
        lines.append(INDENT + f"focus · {node} (each turn shows where routing would go; "
                              "the session stays here)")
    if not bot_first:
        lines.append(INDENT + f"start · {node} (bot-first off: the user speaks first)")
    return lines


def detail_lines(result: TurnResult, runtime: Runtime) -> list[str]:
    """Detailed level: the decision explained (`trace_lines`) and the slots after the turn."""
    from ..routing import trace_lines  # only the detailed levels need the trace

    lines = [INDENT + line for line in trace_lines(runtime, result.decision, detailed=True)]
    lines[1:1] = [INDENT + line for line in result.understanding_lines()]
    if result.nlu_source:  # which NLU read the turn, when it is not the only one
        lines.insert(0, INDENT + "nlu: " + result.nlu_source)
    lines.append(INDENT + "slots: " + to_json(result.slots))
    return lines


def llm_lines(entries: list | tuple, full: bool) -> list[str]:
    """LLM calls of a turn (`llm.client.LLMCall`: a summary line; with `full`, the whole
    request and the raw answer) and which NLG worded it (`LLMOutcome`)."""
    lines = []
    for entry in entries:
        if not hasattr(entry, "request"):
            lines.append(f"{INDENT}{entry.purpose}: {entry.source}")
            continue
        statuses = ", ".join(str(s) if s else "no answer" for s in entry.statuses) or "not sent"
        result = f" · {entry.error}" if entry.error else ""
        lines.append(f"{INDENT}llm call · {entry.purpose} · {statuses} · "
                     f"{entry.seconds * 1000:.0f} ms{result}")
        if full:
            lines += _llm_call_body(entry)
    return lines


def fallback_warning(nlu_source: str | None, entries: list | tuple) -> str | None:
    """One line when a turn's NLU or NLG fell back from the LLM, else None."""
    sources = [("nlu", nlu_source)] + [(e.purpose, e.source) for e in entries
                                       if not hasattr(e, "request")]
    for purpose, source in sources:
        if not source:
            continue
        from ..llm.client import read_fallback_source  # only LLM plug-ins give a source

        fell_back = read_fallback_source(source)
        if fell_back is not None:
            used, reason = fell_back
            return (f"the LLM {purpose.upper()} failed ({reason}); "
                    f"{used} took over (--output-level detailed shows every turn's source)")
    return None


def _llm_call_body(entry: Any) -> list[str]:
    """The request as sent (every message whole) and the raw answer, indented."""
    deep = INDENT * 3
    options = {k: v for k, v in entry.request.items() if k != "messages"}
    lines = [f"{INDENT * 2}request: POST {entry.url} {to_json(options)}"]
    for message in entry.request.get("messages", []):
        lines.append(f"{INDENT * 2}[{message.get('role')}]")
        lines += [deep + line for line in str(message.get("content", "")).split("\n")]
    lines.append(f"{INDENT * 2}answer:" + ("" if entry.answer is not None else " (none)"))
    if entry.answer is not None:
        lines += [deep + line for line in entry.answer.split("\n")]
    return lines


def nlg_input_lines(result: TurnResult, runtime: Runtime,
                    state: DialogueState | None) -> list[str]:
    """Debug level: everything the NLG was given, as readable `key: value` lines."""
    decision = result.decision
    lines = [INDENT + "nlg input · decision"]
    lines += _pairs(decision_fields(decision, runtime))
    if decision.facts is not None:
        lines.append(INDENT + "nlg input · facts (what the conditions read)")
        lines += _pairs(fact_fields(decision.facts, runtime))
    if state is not None:
        lines.append(INDENT + "nlg input · state (render context)")
        lines += _pairs(state_fields(state))
    if result.nlu is not None:
        lines.append(INDENT + "nlu result: " + to_json(result.nlu))
    return lines


def decision_fields(decision: Any, runtime: Runtime) -> list[tuple[str, Any]]:
    """The decision with indices turned back into names."""
    from .. import ir

    def node(index: int | None) -> str | None:
        return None if index is None else runtime.nodes[index].id

    update = decision.slot_update
    return [
        ("handled_node", node(decision.handled_node)),
        ("next_node", node(decision.next_node)),
        ("kind", decision.kind), ("reason", decision.reason), ("tier", decision.tier),
        ("intent", None if decision.intent is None else runtime.intent_names[decision.intent]),
        ("act", ir.ACTS[decision.act]),
        ("fallback", decision.fallback), ("fallback_exhausted", decision.fallback_exhausted),
        ("missing_slots", [runtime.slot_names[i] for i in decision.missing_slots]),
        ("turn_limit_reached", decision.turn_limit_reached),
        ("complete", decision.complete), ("resuming", decision.resuming),
        ("hint", decision.hint), ("focus", decision.focus), ("notes", list(decision.notes)),
        ("slot_update", None if update is None else _slot_update(update)),
    ]


def _slot_update(update: Any) -> dict[str, Any]:
    return {"stored": [list(x) for x in update.stored],
            "dropped": [list(x) for x in update.dropped],
            "asked": _pending(update.asked), "resolved": update.resolved,
            "pending": _pending(update.pending)}


def _pending(pending: Any) -> Any:
    if pending is None:
        return None
    return {"slot": pending.slot, "value": pending.value, "previous": pending.previous}


def fact_fields(facts: list, runtime: Runtime) -> list[tuple[str, Any]]:
    """Every field of the turn's facts, named and shown as the designer wrote it."""
    from .. import ir
    from ..loader import display_value

    return [(ir.field_name(runtime.program, i), _Shown(display_value(runtime, i, value)))
            for i, value in enumerate(facts)]


def state_fields(state: DialogueState) -> list[tuple[str, Any]]:
    """The session state; the history as a count (its entries are the lines above)."""
    pairs = []
    for name in state.__struct_fields__:
        value = getattr(state, name)
        if name == "history":
            value = _Shown(f"{len(value)} entries")
        elif name == "pending_confirmation":
            value = _pending(value)
        pairs.append((name, value))
    return pairs


class _Shown(str):
    """A value already rendered for display (printed as is, not as JSON)."""


def _pairs(pairs: list[tuple[str, Any]]) -> list[str]:
    return [f"{INDENT * 2}{key}: {value if isinstance(value, _Shown) else to_json(value)}"
            for key, value in pairs]


def to_json(value: Any) -> str:
    """`loader.to_json`, imported when first needed (the command line starts without it)."""
    from ..loader import to_json as dumps

    return dumps(value)
