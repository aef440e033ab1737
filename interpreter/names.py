"""Scenario names (`metadata.name`, `Program.name`): what they may hold, one rule for the
compiler (E012) and whatever writes a name into a line of text.

A scenario's name is written on one line: in the comment that heads the transcripts
`mgi fuzz --transcripts` writes, and in reports. `mgi test` reads a transcript line by line
(split at newlines only) and refuses a NUL byte (`transcripts._Parser.feed`), so a name with
a line break or a NUL makes a transcript it cannot read; a terminal escape or a tab garbles
the reports. A name is therefore one line of printable text: no control character (Unicode
category Cc: NUL, tab, newline, carriage return, escape, DEL, C1 controls) and no line or
paragraph separator (U+2028, U+2029: editors break lines there). Anything else, spaces and
every script included, is allowed.
"""

from __future__ import annotations

import re

NAME_RULE = ("write the name on one line, without control characters (newline, tab, NUL, "
             "escape) or line separators; letters, digits, spaces and punctuation of any "
             "script are fine")
_NOT_IN_A_NAME = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def name_problem(name: str) -> tuple[int, str] | None:
    """(offset, description) of the first character a scenario name may not hold, or None:
    `(6, "the control character U+000A (\\n)")`."""
    found = _NOT_IN_A_NAME.search(name)
    if found is None:
        return None
    char = found.group()
    kind = "line separator" if char in "\u2028\u2029" else "control character"
    return found.start(), f"the {kind} U+{ord(char):04X} ({repr(char)[1:-1]})"
