"""The oracle's wording: what the template NLG says for a turn (SPEC 6.2 step 8 and SPEC 9),
written again for the differential test, from the scenario JSON and the oracle's state.

In: the scenario (through the `Oracle`), the common messages as an input (`messages` and
`again`: per language, the first and the second wording of each common sentence; the harness
passes the interpreter's, they are data, not rules), and per turn a `Said`: what the turn
decided. Out: the reply, with the state's `rotation` (NODE:KIND -> the variant said last,
for responses with several variants) and `said` (the reply) updated.

The rules (SPEC 9, and where SPEC is silent the implementation, marked IMPL:):
- each situation offers candidates in order; the reply is the first candidate with words
  that differs from the previous reply; when all with words equal it, the first of them;
  a response with several variants offers them starting after the one said last (variant 0
  the first time), and records the one said;
- opening and move: the speaking node's default (after `params.fallback` when its skill
  failed there), the question of its first missing slot (required first, else any empty
  collect slot), the common greeting / continue; completion: `complete`, then goodbye;
- re-prompt (and a stay whose silent or unclear turn spent the budget): the fallback kind's
  variants, the re-ask, the default (not at an end node), the common message of the kind;
- stay: a safety hold says the default and the re-ask only; an invalid value says the
  invalid message and the slot's question (IMPL: both wordings of the message); the turn
  limit puts `turn_limit` first; a required-slot gate says the question, else "ask again"
  around it (IMPL: never the default); an end node says only continue; else the default,
  the re-ask, continue;
- a confirmation raised this turn (or still pending on a re-prompt) is asked first, except
  on a safety turn, and the whole reply is what is compared with the previous one;
- placeholders (IMPL): `{slots.N}` / `{skill.data.K}` with K of letters, digits, `_ . -`;
  skill data only at the node whose skill ran; a dotted K is looked up whole, else part by
  part; no value (absent, null, "") drops the sentence (split after . ! ? 。 ！ ？ and
  spaces); booleans are said in the scenario's language, whole floats without ".0", lists
  and objects as compact JSON.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

_PLACEHOLDER = re.compile(r"\{(slots|skill\.data)\.([A-Za-z0-9_.\-]+)\}")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+")
_NO_VALUE = object()


class Said(NamedTuple):
    """What a turn decided, as far as the wording goes."""

    kind: str  # open, move, stay, fallback (a re-prompt), complete
    here: str  # the node the turn was handled in
    target: str | None = None  # where a move went
    reason: str = ""
    fallback: str | None = None  # no_input / not_understood: the turn was silent / unclear
    safety: bool = False
    missing: tuple[str, ...] = ()  # required collect slots of `here` still empty
    invalid: tuple[str, ...] = ()  # slots whose value this turn failed validation
    confirm: tuple | None = None  # (slot, new value, old value) to ask about first
    turn_limit: bool = False


class Wording:
    """The template NLG of the oracle."""

    def __init__(self, oracle, messages: dict, again: dict):
        self.oracle = oracle
        language = "ko" if oracle.language.lower().startswith("ko") else "en"
        self.words, self.again = messages[language], again[language]

    def reply(self, state: dict, said: Said) -> str:
        """The reply for `said` in `state` (the state after the turn), which it updates."""
        prefix = ""
        if said.confirm is not None and not said.safety:
            slot, new, old = said.confirm
            prefix = (self.words["confirm"].replace("{old}", self.value(old))
                      .replace("{new}", self.value(new))) + " "
        offers = self.offers(state, said)
        text, key, index = self.pick(offers, state["rotation"], state.get("said"), prefix)
        if key is not None:
            state["rotation"] = {**state["rotation"], key: index}
        state["said"] = prefix + (text or self.words["continue"])
        return state["said"]

    # --- what each situation may say --------------------------------------------------------

    def offers(self, state: dict, said: Said) -> list[tuple[str | None, list[str]]]:
        """(rotation key or None, texts) in the order the situation prefers them."""
        if said.kind == "complete":
            return [self.response(state, said.here, "complete"), self.common("goodbye")]
        if said.kind in ("open", "move"):
            node = said.here if said.kind == "open" else said.target
            last = "greeting" if said.kind == "open" else "continue"
            return [self.default(state, node), self.reask(state, node), self.common(last)]
        if said.kind == "fallback":
            return self.reprompt(state, said.here, said.fallback)
        return self.stay(state, said)

    def stay(self, state: dict, said: Said) -> list:
        here = said.here
        if said.safety:
            return [self.default(state, here), self.reask(state, here)]
        if said.invalid:
            question = self.question(said.invalid[0])
            return [(None, [f"{self.words['invalid']} {question}",
                            f"{self.again['invalid']} {question}"])]
        first = [self.response(state, here, "turn_limit")] if said.turn_limit else []
        if said.reason == "gate:required_slots" and said.missing:
            question = self.question(said.missing[0])
            return first + [(None, [question,
                                    self.words["ask_again"].replace("{question}", question)])]
        if said.fallback is not None:
            return first + self.reprompt(state, here, said.fallback)
        if here in self.oracle.ends:
            return first + [self.common("continue")]
        return first + [self.default(state, here), self.reask(state, here),
                        self.common("continue")]

    def reprompt(self, state: dict, here: str, kind: str) -> list:
        offers = [self.response(state, here, kind), self.reask(state, here)]
        if here not in self.oracle.ends:
            offers.append(self.default(state, here))
        return offers + [self.common(kind)]

    def common(self, key: str) -> tuple[None, list[str]]:
        return None, [self.words[key], self.again[key]]

    def response(self, state: dict, node: str, kind: str) -> tuple[str, list[str]]:
        written = self.oracle.nodes[node].get("responses", {}).get(kind)
        texts = [] if written is None else [written] if isinstance(written, str) else written
        data = state["skill_data"] if node == state["node"] else {}
        return f"{node}:{kind}", [self.fill(text, state["slots"], data) for text in texts]

    def default(self, state: dict, node: str) -> tuple[str, list[str]]:
        key, texts = self.response(state, node, "default")
        fallback = self.oracle.nodes[node].get("params", {}).get("fallback")
        if fallback and node == state["node"] and state["skill"] in ("failed", "timeout"):
            texts = [f"{fallback} {text}".strip() for text in texts] or [fallback]
        return key, texts

    def reask(self, state: dict, node: str) -> tuple[None, list[str]]:
        collect = self.oracle.nodes[node].get("collect_slots", [])
        empty = [s for s in collect if state["slots"].get(s) is None]
        required = [s for s in empty if self.oracle.slots[s]["policy"] == "required"]
        asked = (required or empty)[:1]
        return None, [self.question(s) for s in asked]

    def question(self, name: str) -> str:
        slot = self.oracle.slots[name]
        if slot.get("question"):
            return slot["question"]
        return self.words["ask_slot"].replace("{slot}", slot.get("description") or name)

    # --- choosing -----------------------------------------------------------------------------

    @staticmethod
    def pick(offers: list, rotation: dict, previous: str | None,
             prefix: str) -> tuple[str, str | None, int]:
        """(text, rotation key to record or None, index)."""
        first = None
        for key, texts in offers:
            rotates = key is not None and len(texts) > 1
            start = (rotation[key] + 1) % len(texts) if rotates and key in rotation else 0
            for step in range(len(texts)):
                index = (start + step) % len(texts)
                if not texts[index]:
                    continue
                chosen = (texts[index], key if rotates else None, index)
                if prefix + texts[index] != previous:
                    return chosen
                first = first or chosen
        return first or ("", None, 0)

    # --- placeholders -----------------------------------------------------------------------

    def fill(self, text: str, slots: dict, data: dict) -> str:
        if "{" not in text:
            return text
        kept = []
        for sentence in _SENTENCE.split(text):
            values = [self.lookup(m, slots, data) for m in _PLACEHOLDER.finditer(sentence)]
            if any(v is _NO_VALUE for v in values):
                continue
            said = iter(values)
            kept.append(_PLACEHOLDER.sub(lambda m: self.value(next(said)), sentence))
        return " ".join(kept)

    @staticmethod
    def lookup(match: re.Match, slots: dict, data: dict) -> Any:
        source, key = (slots if match.group(1) == "slots" else data), match.group(2)
        value = source.get(key, _NO_VALUE) if isinstance(source, dict) else _NO_VALUE
        if value is _NO_VALUE and key not in source:
            value = source
            for part in key.split("."):
                if not isinstance(value, dict) or part not in value:
                    return _NO_VALUE
                value = value[part]
        return _NO_VALUE if value is None or value == "" else value

    def value(self, value: Any) -> str:
        if isinstance(value, bool):
            return self.words["true" if value else "false"]
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        if isinstance(value, (dict, list)):
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return str(value)
