"""The design-time endpoints: a scenario sent in the request, checked and compiled here.

In: `scenario_json` (an object) or `scenario_text` (a file's text). Out: a `Compiled` with
the diagnostics of `mgc check --format json` and, without errors, the loaded IR and its
bytes; lines refer to `scenario_text`, else to the object printed with a 2-space indent.
After: the compiler is imported by the first such request, never by the rest of the
service; a source seen before is answered from a bounded cache (by the hash of its text);
a scenario over `NODE_LIMIT` nodes is 413 before any work; compiles run one at a time per
worker in a thread, so turns keep being served meanwhile.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from ..loader import Runtime, load_program_bytes
from .http import ApiError

NODE_LIMIT = 2000
CACHE_SIZE = 32
SOURCE_PATH = "scenario"  # the file name diagnostics carry


@dataclass(frozen=True)
class Compiled:
    diagnostics: list[dict]
    errors: int
    warnings: int
    runtime: Runtime | None
    blob: bytes | None


class Designer:
    def __init__(self) -> None:
        self._cache: OrderedDict[str, Compiled] = OrderedDict()
        self._one_at_a_time = asyncio.Lock()

    async def compile(self, body: Any) -> Compiled:
        text = source_text(body)
        key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        check_size(body.scenario_json, text)
        async with self._one_at_a_time:
            compiled = await asyncio.to_thread(compile_text, text)
        self._cache[key] = compiled
        while len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return compiled


def source_text(body: Any) -> str:
    """The text the diagnostics refer to (422 unless exactly one source is given)."""
    given = [name for name in ("scenario_json", "scenario_text")
             if getattr(body, name) is not None]
    if len(given) != 1:
        raise ApiError(422, "invalid_request", "give the scenario as scenario_json (an object) "
                                               "or scenario_text (its file text), one of them")
    if body.scenario_text is not None:
        return body.scenario_text
    try:
        return json.dumps(body.scenario_json, ensure_ascii=False, indent=2)
    except RecursionError:  # decoded by msgspec, yet too deep for json's indenting encoder
        raise ApiError(422, "invalid_request", "scenario_json is nested too deeply") from None


def check_size(scenario: dict | None, text: str) -> None:
    """413 for a graph over `NODE_LIMIT` nodes (text that is not JSON is the compiler's)."""
    if scenario is None:
        try:
            scenario = json.loads(text)
        except (ValueError, RecursionError):
            return
    graph = scenario.get("graph") if isinstance(scenario, dict) else None
    nodes = graph.get("nodes") if isinstance(graph, dict) else None
    if isinstance(nodes, (list, dict)) and len(nodes) > NODE_LIMIT:
        raise ApiError(413, "too_large", f"the scenario has {len(nodes)} nodes and the "
                                         f"service compiles at most {NODE_LIMIT}; compile it "
                                         "with `mgc compile` and serve the IR file")


def compile_text(text: str) -> Compiled:
    """Check and, without errors, compile and load (the compiler is imported here)."""
    from compiler.driver import check_source

    result = check_source(SOURCE_PATH, text)
    diagnostics = [d.as_json() for d in result.diagnostics]
    if result.errors:
        return Compiled(diagnostics, result.errors, result.warnings, None, None)
    blob = result.ir_bytes()
    return Compiled(diagnostics, result.errors, result.warnings, load_program_bytes(blob), blob)
