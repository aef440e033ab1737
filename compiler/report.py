"""Rendering of diagnostics for people (`human`) and machines (`json`).

In: located, sorted diagnostics and the source text. Out: text. Human output reads like a
compiler's: `file:line:col: severity[CODE]: message`, the source line with a caret under the
column (wide Hangul characters take two cells, so the caret is aligned by display width),
the JSON pointer, and the hint.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .diagnostics import Diagnostic, printable

if TYPE_CHECKING:
    from .driver import CompileResult

WINDOW = 100  # characters of a long source line shown around the column


def render_json(results: Sequence[CompileResult]) -> str:
    """One JSON document for one file, or a list for several (`mgc check a.json b.json`)."""
    docs = [{"file": r.path, "diagnostics": [d.as_json() for d in r.diagnostics],
             "errors": r.errors, "warnings": r.warnings} for r in results]
    return json.dumps(docs[0] if len(docs) == 1 else docs, ensure_ascii=False, indent=2)


def render_human(path: str, text: str, diagnostics: list[Diagnostic]) -> str:
    from .jsonpos import source_lines  # as positions count lines; loaded only when there is a report

    lines = source_lines(text) if text and diagnostics else []
    out = [render_one(path, lines, d) for d in diagnostics]
    return "\n".join(out)


def render_one(path: str, lines: list[str], d: Diagnostic) -> str:
    head = f"{path}:{d.line or 1}:{d.column or 1}: {d.severity}[{d.code}]: {d.message}"
    parts = [head]
    if d.line and 1 <= d.line <= len(lines):
        parts += source_excerpt(lines[d.line - 1], d.line, d.column or 1)
    if d.path:
        parts.append(f"  at {printable(d.path)}")
    if d.hint:
        parts.append(f"  hint: {d.hint}")
    return "\n".join(parts)


def source_excerpt(line: str, number: int, column: int) -> list[str]:
    """The source line (windowed when long) and a caret under `column`."""
    start = 0
    if len(line) > WINDOW:
        start = max(0, min(column - 1 - WINDOW // 2, len(line) - WINDOW))
    shown = line[start:start + WINDOW]
    if not shown.isprintable():
        shown = "".join(ch if ch.isprintable() else " " for ch in shown)
    prefix = "…" if start > 0 else ""
    suffix = "…" if start + WINDOW < len(line) else ""
    gutter = f"{number:>5} | "
    caret_at = display_width(prefix) + display_width(shown[:max(0, column - 1 - start)])
    return [f"{gutter}{prefix}{shown}{suffix}", " " * (len(gutter) - 2) + "| " + " " * caret_at + "^"]


def display_width(text: str) -> int:
    """Terminal cells `text` takes: two for a wide character (Hangul), one for any other."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def summary(path: str, errors: int, warnings: int) -> str:
    def plural(n: int, word: str) -> str:
        return f"{n} {word}{'' if n == 1 else 's'}"

    return f"{path}: {plural(errors, 'error')}, {plural(warnings, 'warning')}"
