"""The scenarios a server serves, by name, and every IR a session may run on, by hash.

In: IR files and folders of them (`mgi serve PATH...`), and the store. Out: the `Runtime`
registered under a `metadata.name`, and the `Runtime` of any IR hash a session names,
loaded from the store the first time this worker meets it and kept.
After: two files with one name, a folder without IR files, or none at all is a
`RegistryError` (one line, exit 2) before the server starts; every registered IR is put in
the store under its hash (first blob wins), so a session keeps running on its own IR on any
worker after its scenario is redeployed, while new sessions get the new one. Every IR put in
the store is kept there `keep_for` seconds (the session TTL and one refresh interval) after
the last session that used it: a turn or a creation refreshes it (`touch`, at most once a
refresh interval per IR and worker, so a turn pays a dict lookup, not a store call), and the
store removes it after (SPEC 11.1, 17.7: inline scenarios do not stay compiled forever). A
session live at time t was touched at most `ttl` before t, and its IR's refresh came at most
one interval before that, kept `ttl` + one interval: so no live session's IR is removed.
A session created on an inline IR names it to the store, which removes the blob with the
delete of its last live session (`Sessions._put_new`); a registered IR's refresh is a put,
so that such a delete of an identical inline IR cannot take it for long.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from .. import MagoError
from ..files import InputFileError, read_input
from ..loader import IRError, Runtime, load_program_bytes
from ..stores.records import RecordStore

LOADED_LIMIT = 64  # IRs of older deployments kept loaded per worker (registered ones always)
REFRESH_SECONDS = 60.0  # at most this often a worker refreshes the TTL of an IR it uses
TOUCHED_KEPT = 4096  # IRs whose last refresh a worker remembers (older ones are due anyway)


class RegistryError(MagoError):
    """The paths given to `mgi serve` do not make a set of scenarios."""


class MissingIR(MagoError):
    """A session names an IR hash the store does not have."""


@dataclass(frozen=True)
class Scenario:
    name: str
    runtime: Runtime
    blob: bytes
    path: str

    @property
    def end_nodes(self) -> int:
        return sum(1 for table in self.runtime.nodes if table.is_end)


def ir_files(paths: list[str]) -> list[Path]:
    """The IR files named or found (one level) in the folders named."""
    if not paths:
        raise RegistryError("give the IR files or folders to serve, e.g. mgi serve build/")
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            inside = sorted(p for p in path.glob("*.ir") if p.is_file())
            if not inside:
                raise RegistryError(f"{raw}: no .ir files in this folder; "
                                    "compile the scenarios with `mgc compile` first")
            found.extend(inside)
        elif path.exists():
            found.append(path)
        else:
            raise RegistryError(f"{raw}: no such file or folder")
    return found


def load_scenarios(paths: list[str]) -> dict[str, Scenario]:
    """Every IR file loaded and fully checked, by `metadata.name`."""
    scenarios: dict[str, Scenario] = {}
    for path in ir_files(paths):
        try:
            blob = read_input(path)
            runtime = load_program_bytes(blob, verify=True)
        except InputFileError as error:
            raise RegistryError(f"cannot read IR file {path}: {error.reason}") from None
        except IRError as error:
            raise RegistryError(f"{path}: {error}") from None
        name = runtime.program.name
        if name in scenarios:
            raise RegistryError(f"{path} and {scenarios[name].path} are both scenario "
                                f"{name!r}; serve one of them (names must be unique)")
        scenarios[name] = Scenario(name, runtime, blob, os.fspath(path))
    return scenarios


class Registry:
    """Registered scenarios, and a bounded cache of the IRs sessions run on."""

    def __init__(self, scenarios: dict[str, Scenario], store: RecordStore,
                 limit: int = LOADED_LIMIT, ttl: float = 86400):
        self.limit = limit
        self.scenarios = scenarios
        self.store = store
        self.refresh = min(REFRESH_SECONDS, ttl / 4)
        self.keep_for = ttl + self.refresh  # how long the store keeps an IR after a use
        self._pinned = {s.runtime.ir_hash: s.runtime for s in scenarios.values()}
        self._blobs = {s.runtime.ir_hash: s.blob for s in scenarios.values()}
        self._loaded: OrderedDict[str, Runtime] = OrderedDict()
        self._touched: dict[str, float] = {}  # IR hash -> when this worker last refreshed it

    async def publish(self) -> None:
        """Put every registered IR in the store (the store keeps the first blob of a hash)."""
        for scenario in self.scenarios.values():
            await self._put(scenario.runtime.ir_hash, scenario.blob)

    async def add(self, runtime: Runtime, blob: bytes) -> None:
        """An IR compiled in the server (`/session/json`): stored so every worker finds it."""
        await self._put(runtime.ir_hash, blob)
        self._keep(runtime)

    def registered(self, ir_hash: str) -> bool:
        """Whether `ir_hash` is the IR of a scenario this server serves by name."""
        return ir_hash in self._pinned

    async def put_again(self, ir_hash: str, blob: bytes) -> None:
        """Put an IR that the store removed with its last session (a new one needs it)."""
        await self._put(ir_hash, blob)

    async def _put(self, ir_hash: str, blob: bytes) -> None:
        await self.store.put_ir(ir_hash, blob, self.keep_for)
        self._touched[ir_hash] = time.monotonic()

    async def touch(self, ir_hash: str) -> None:
        """A session uses this IR now: the store keeps it `keep_for` more seconds (asked
        at most once per `refresh` seconds)."""
        now = time.monotonic()
        if now - self._touched.get(ir_hash, float("-inf")) < self.refresh:
            return
        blob = self._blobs.get(ir_hash)
        if blob is not None:  # put, not touched: an inline session's delete may have
            await self.store.put_ir(ir_hash, blob, self.keep_for)  # taken the same IR
        else:
            await self.store.touch_ir(ir_hash, self.keep_for)
        touched = self._touched
        touched[ir_hash] = now
        if len(touched) > TOUCHED_KEPT:
            self._touched = {h: t for h, t in touched.items() if now - t < self.refresh}

    async def runtime(self, ir_hash: str) -> Runtime:
        """The IR a session runs on (`MissingIR` if the store lost it); using it keeps it
        in the store (`touch`)."""
        await self.touch(ir_hash)
        runtime = self._pinned.get(ir_hash)
        if runtime is not None:
            return runtime
        runtime = self._loaded.get(ir_hash)
        if runtime is not None:
            self._loaded.move_to_end(ir_hash)
            return runtime
        blob = await self.store.get_ir(ir_hash)
        if blob is None:
            raise MissingIR(f"the store has no IR {ir_hash[:12]}; the session cannot go on")
        try:  # a thread: loading checks and prepares the whole IR (SPEC 11.1)
            runtime = await asyncio.to_thread(load_program_bytes, blob, verify=True)
        except IRError as error:
            raise MissingIR(f"the store's IR {ir_hash[:12]} is unusable: {error}") from None
        self._keep(runtime)
        return runtime

    def _keep(self, runtime: Runtime) -> None:
        if runtime.ir_hash in self._pinned:
            return
        self._loaded[runtime.ir_hash] = runtime
        self._loaded.move_to_end(runtime.ir_hash)
        while len(self._loaded) > self.limit:
            self._loaded.popitem(last=False)
