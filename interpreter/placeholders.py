"""Placeholders: `{slots.NAME}`, `{profile.NAME}` and `{skill.data.KEY}` in responses and in
skill arguments, filled by plain lookup (a regex, never `str.format` or eval).

In: a text and the values it may name (the session's slots, its profile, the skill data of
the current visit). Out: the text filled. In a response (`fill_placeholders`) a sentence
whose placeholder has no value is left out, so the bot never says braces or half a sentence;
in a skill argument (`fill_argument`) a placeholder without a value becomes empty text.
A list slot's items read joined by ", " (SPEC 8.2); a boolean in the scenario's words.
`{{` and `}}` write a literal brace (SPEC 17.23); the compiler refuses any other brace (E112),
so every `{` the runtime meets opens a placeholder or is half of `{{`.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

# One scan finds placeholders and escaped braces alike, so `{{slots.x}}` is the literal text
# `{slots.x}` (the escape is read first, left to right), as in Python's str.format.
PLACEHOLDER = re.compile(r"\{\{|\}\}|\{(slots|profile|skill\.data)\.([A-Za-z0-9_.\-]+)\}")
_BRACE = {"{{": "{", "}}": "}"}
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
_MISSING = object()
PLAIN_WORDS = {"true": "true", "false": "false"}  # booleans in skill arguments


def fill_placeholders(text: str, slots: dict[str, Any], skill_data: dict[str, Any],
                      words: dict[str, str] | None = None,
                      profile: dict[str, Any] | None = None,
                      labels: dict[str, dict[str, str]] | None = None) -> str:
    """Substitute placeholders; drop each sentence with a placeholder that has no value.
    `labels`: slot -> member -> display text (SPEC 14.3: `{slots.X}` says the label; skill
    arguments get the raw value, 17.24)."""
    if not has_markup(text):
        return text
    words = words or PLAIN_WORDS
    sources = (slots, profile or {}, skill_data)
    kept = []
    for sentence in _SENTENCE_END.split(text):
        unfilled = False

        def substitute(match: re.Match[str]) -> str:
            nonlocal unfilled
            if match.group(1) is None:
                return _BRACE[match.group(0)]
            value = _value(match, sources)
            if value is _MISSING:
                unfilled = True
                return ""
            if labels and match.group(1) == "slots" and match.group(2) in labels:
                shown = labels[match.group(2)]
                value = [shown.get(v, v) for v in value] if isinstance(value, list) \
                    else shown.get(value, value)
            return format_value(value, words)
        filled = PLACEHOLDER.sub(substitute, sentence)
        if not unfilled:
            kept.append(filled)
    return " ".join(kept)


def fill_argument(value: Any, slots: dict[str, Any], profile: dict[str, Any]) -> Any:
    """A skill argument with the placeholders of its texts filled (nested lists and objects
    too); a placeholder without a value becomes empty text (SPEC 8.4)."""
    if isinstance(value, str):
        if not has_markup(value):
            return value
        sources: tuple[dict[str, Any], ...] = (slots, profile, {})

        def substitute(match: re.Match[str]) -> str:
            if match.group(1) is None:
                return _BRACE[match.group(0)]
            found = _value(match, sources)
            return "" if found is _MISSING else format_value(found, PLAIN_WORDS)
        return PLACEHOLDER.sub(substitute, value)
    if isinstance(value, list):
        return [fill_argument(item, slots, profile) for item in value]
    if isinstance(value, dict):
        return {key: fill_argument(item, slots, profile) for key, item in value.items()}
    return value


def unfilled_placeholders(text: str, slots: dict[str, Any], skill_data: dict[str, Any],
                          profile: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    """(placeholder, sentence) for each placeholder `fill_placeholders` finds no value for,
    so the sentence it stands in is left out (`mgi fuzz` reports these)."""
    found = []
    sources = (slots, profile or {}, skill_data)
    for sentence in _SENTENCE_END.split(text) if "{" in text else ():
        for match in PLACEHOLDER.finditer(sentence):
            if match.group(1) is not None and _value(match, sources) is _MISSING:
                found.append((match.group(0), sentence))
    return found


def has_markup(text: str) -> bool:
    """Whether a text may hold a placeholder or an escaped brace (most texts hold neither)."""
    return "{" in text or "}" in text


_SOURCE = {"slots": 0, "profile": 1, "skill.data": 2}


def _value(match: re.Match[str], sources: tuple[dict[str, Any], ...]) -> Any:
    """The value of a placeholder (a `PLACEHOLDER` match), or `_MISSING` when it has none:
    absent, null or empty."""
    source = sources[_SOURCE[match.group(1)]]
    key = match.group(2)
    if key in source:
        value = source[key]
    else:
        value = source
        for part in key.split("."):  # nested skill data: {skill.data.today.summary}
            if not isinstance(value, dict) or part not in value:
                return _MISSING
            value = value[part]
    return _MISSING if value is None or value == "" or value == [] else value


def format_value(value: Any, words: dict[str, str]) -> str:
    """A slot or skill value as words: booleans in the scenario language, numbers plainly,
    a list's items joined by ", "."""
    if isinstance(value, bool):
        return words["true" if value else "false"]
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        return ", ".join(format_value(item, words) for item in value)
    if isinstance(value, (dict, list)):
        return msgspec.json.encode(value).decode()
    return str(value)
