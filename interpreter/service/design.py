"""The design-time endpoints: a scenario sent in the request, checked and compiled here.

In: `scenario_json` (an object) or `scenario_text` (a file's text). Out: a `Compiled` with
the diagnostics of `mgc check --format json` and, without errors, the loaded IR and its
bytes; lines refer to `scenario_text`, else to the object printed with a 2-space indent.
After: the compiler is imported by the first such request, never by the rest of the
service; a source seen before is answered from a bounded cache (by the hash of its text);
a scenario over `NODE_LIMIT` nodes is 413 before any work; compiles run one at a time per
worker in a child process under a CPU-time limit (`compiling`: 422 `too_costly` over it, 503
`busy` past the queue), and the IR is loaded in a thread, so the event loop never waits on
a scenario's size.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from ..loader import Runtime, load_program_bytes
from .compiling import Busy, Compiler, Stopping, TooCostly
from .http import ApiError

NODE_LIMIT = 2000
CACHE_SIZE = 64


@dataclass(frozen=True)
class Compiled:
    diagnostics: list[dict]
    errors: int
    warnings: int
    runtime: Runtime | None
    blob: bytes | None


class Designer:
    def __init__(self, seconds: float = 5.0, queue: int = 4, keep: int = CACHE_SIZE) -> None:
        self.keep = keep  # `--inline-cache`: compiles kept, least recently used out first
        self._cache: OrderedDict[str, Compiled] = OrderedDict()
        self.compiler = Compiler(seconds, queue)

    async def compile(self, body: Any) -> Compiled:
        text = source_text(body)
        key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        check_size(body.scenario_json, text)
        try:
            outcome = await self.compiler.compile(text)
        except TooCostly:
            raise ApiError(422, "too_costly", f"checking this scenario took more than "
                                              f"{self.compiler.seconds:g} s of CPU; make its "
                                              "patterns and conditions simpler, or compile it "
                                              "with `mgc compile` and serve the IR") from None
        except Busy:
            raise ApiError(503, "busy", f"{self.compiler.queue} scenario compiles are already "
                                        "running or waiting here; retry shortly",
                           headers=[(b"retry-after", b"1")]) from None
        except Stopping:
            raise ApiError(503, "busy", "this server is stopping; retry (another worker or "
                                        "the restarted server answers)",
                           headers=[(b"retry-after", b"1")]) from None
        runtime = None
        if outcome.blob is not None:  # loading prepares its tables: not on the event loop
            runtime = await asyncio.to_thread(load_program_bytes, outcome.blob)
        compiled = Compiled(outcome.diagnostics, outcome.errors, outcome.warnings, runtime,
                            outcome.blob)
        self._cache[key] = compiled
        while len(self._cache) > self.keep:
            self._cache.popitem(last=False)
        return compiled

    def close(self) -> None:
        self.compiler.close()


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


def key_positions(text: str, pointers: list[str]) -> list[tuple[int, int]]:
    """(line, column) of the member at each JSON pointer of `text` (1, 1 when not JSON)."""
    from compiler.jsonpos import JSONSyntaxError, decode_with_positions

    try:
        locator = decode_with_positions(text)[1]
    except JSONSyntaxError:
        return [(1, 1)] * len(pointers)
    return [locator.key(p) or locator.nearest(p) for p in pointers]

