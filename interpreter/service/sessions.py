"""Sessions over HTTP: create, one turn at a time, remembered message ids, retries.

In: validated requests (`api`), a `RecordStore`, the registry and the plug-ins. Out: the
bytes of each answer, or `ApiError`.
After: the turns of one session are applied in one serial order: inside a worker they wait
for each other in arrival order (an `asyncio.Lock` per session is FIFO); across workers the
store's version check decides, and the loser reads the session again and redoes its turn
with the NLU result it already has (an LLM is not asked twice). A turn is acknowledged only
once its record is stored, so an acknowledged turn is never lost, and a conflict is never
applied twice. A message id already answered is answered again from the record without
running anything (`replayed: true`); the same id with another text is 409. A turn asked
with `trace: true` answers its trace too (`trace`); a repeat asking for one gets the trace
recorded with the message id, or none if the first request did not ask (nothing is re-run).

The record is the engine's `DialogueState`, the scenario name and the last
`MESSAGES_REMEMBERED` message ids with their answers, as one MessagePack blob. The engine
runs on a `OneSession` store holding the state just read, so it keeps its own contract
(`SessionStore`: get, then put with the version it read) and the I/O stays here, async.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import time
from collections import OrderedDict
from typing import Any
from collections.abc import Callable

import msgspec

from ..engine import Engine, EngineError, InvalidProfile, TurnResult, UnknownNode
from ..loader import Runtime
from ..state import DialogueState
from ..stores.records import IRGone, RecordStore, StoreError, VersionConflict
from .api import MESSAGES_REMEMBERED, TEXT_LIMIT, Message
from .http import ApiError, encode
from .registry import MissingIR, Registry
from .trace import turn_trace
from .lease import release, secure_turn
from .webhooks import TurnExecutor

RETRY_LIMIT = 64  # version conflicts one turn may meet before the client is told to retry


class Remembered(msgspec.Struct, array_like=True, frozen=True):
    """A message id the session answered, with the digest of its text and the answer."""

    message_id: str
    digest: bytes
    version: int
    turn: bytes  # the JSON of the turn line, as answered
    trace: bytes | None = None  # the JSON of its trace, when that request asked for one


class SessionRecord(msgspec.Struct, array_like=True, frozen=True):
    scenario: str
    state: DialogueState
    messages: tuple[Remembered, ...] = ()
    inline: bool = False  # made from a scenario sent in the request (analytics: "(inline)")
    lease_until: float = 0.0  # a turn that may run an action holds it until then (17.8)


_RECORD_ENCODER = msgspec.msgpack.Encoder()
_RECORD_DECODER = msgspec.msgpack.Decoder(SessionRecord)


def encode_record(record: SessionRecord) -> bytes:
    return _RECORD_ENCODER.encode(record)


def decode_record(data: bytes) -> SessionRecord:
    return _RECORD_DECODER.decode(data)


class OneSession:
    """The engine's `SessionStore` for one call: the state read, and what the engine put."""

    __slots__ = ("state", "version", "saved")

    def __init__(self, state: DialogueState | None, version: int):
        self.state, self.version = state, version
        self.saved: DialogueState | None = None

    def get(self, session_id: str) -> tuple[DialogueState, int] | None:
        if self.state is None or self.state.session_id != session_id:
            return None
        return self.state, self.version

    def put(self, state: DialogueState, expected_version: int) -> int:
        if expected_version != self.version:
            raise VersionConflict(f"expected version {self.version}, not {expected_version}")
        self.saved = state
        return expected_version + 1


class Plugins:
    """The NLU, NLG and skills engines are built with, per IR (the rules NLU compiles its
    tables once per scenario), the last `limit` IRs used kept; `blocking` when a plug-in
    waits on the network."""

    def __init__(self, make: Callable[[Runtime], tuple[Any, Any, Any]], blocking: bool,
                 limit: int = 128):
        self._make = make
        self._built: OrderedDict[str, tuple[Any, Any, Any]] = OrderedDict()
        self._building: dict[str, asyncio.Future] = {}
        self.blocking = blocking
        self.limit = limit

    async def ready(self, runtime: Runtime) -> None:
        """Build the plug-ins of an IR met for the first time in a thread (the rules NLU
        prepares every pattern of the scenario: seconds for a big one), once, while the
        event loop goes on serving; `engine` then finds them built."""
        if runtime.ir_hash in self._built:
            return
        building = self._building.get(runtime.ir_hash)
        if building is None:
            building = self._building[runtime.ir_hash] = asyncio.ensure_future(
                asyncio.to_thread(self._make, runtime))
            building.add_done_callback(lambda _: self._building.pop(runtime.ir_hash, None))
        built = await asyncio.shield(building)
        if runtime.ir_hash not in self._built:
            self._keep(runtime.ir_hash, built)

    def _keep(self, ir_hash: str, built: tuple[Any, Any, Any]) -> None:
        self._built[ir_hash] = built
        if len(self._built) > self.limit:
            self._built.popitem(last=False)

    def engine(self, runtime: Runtime, store: OneSession) -> Engine:
        built = self._built.get(runtime.ir_hash)
        if built is None:  # evicted since `ready` (or called without it): build here
            built = self._make(runtime)
            self._keep(runtime.ir_hash, built)
        elif len(self._built) > 1:
            self._built.move_to_end(runtime.ir_hash)
        nlu, nlg, skills = built
        return Engine(runtime, nlu, nlg, store, skills)


class _Locks:
    """One FIFO lock per session id with waiters; forgotten when nobody holds or waits."""

    def __init__(self) -> None:
        self._held: dict[str, list] = {}  # id -> [lock, holders and waiters]

    async def acquire(self, session_id: str) -> None:
        entry = self._held.get(session_id)
        if entry is None:
            entry = self._held[session_id] = [asyncio.Lock(), 0]
        entry[1] += 1
        try:
            await entry[0].acquire()
        except BaseException:  # cancelled while waiting
            self._leave(session_id, entry)
            raise

    def release(self, session_id: str) -> None:
        entry = self._held[session_id]
        entry[0].release()
        self._leave(session_id, entry)

    def _leave(self, session_id: str, entry: list) -> None:
        entry[1] -= 1
        if entry[1] == 0:
            del self._held[session_id]


def text_digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def new_session_id() -> str:
    return secrets.token_urlsafe(18)  # 144 random bits, in [A-Za-z0-9_-]


DECODED_KEPT = 4096  # sessions whose decoded record a worker keeps (the most recent turns)


class Sessions:
    def __init__(self, store: RecordStore, registry: Registry, plugins: Plugins,
                 on_turn: Callable[[str, str, TurnResult, float], None],
                 clock: Callable[[], float] = time.time, recorder: Any = None,
                 decoded_kept: int = DECODED_KEPT):
        self.store, self.registry, self.plugins = store, registry, plugins
        self.recorder = recorder  # analytics.recorder.Recorder, or None: events off
        self.on_turn = on_turn
        self.clock = clock
        self._locks = _Locks()
        # session id -> (the stored bytes, their record): this worker's last write of each
        # session, so that its next turn skips the decode when the store still holds exactly
        # those bytes (the store is still read; another worker's write has other bytes)
        self._decoded: dict[str, tuple[bytes, SessionRecord]] = {}
        self.decoded_kept = decoded_kept
        self.executor = TurnExecutor()

    # --- creating -------------------------------------------------------------------------

    async def create(self, runtime: Runtime, scenario: str, options: Any,
                     inline: bytes | None = None) -> dict[str, Any]:
        """A new session (its opening said when the bot speaks first); the 201 answer.
        `inline`: the blob of the IR compiled from the request's scenario (None: a
        registered one)."""
        session_id = options.session_id or new_session_id()
        one = OneSession(None, 0)
        await self.plugins.ready(runtime)
        engine = self.plugins.engine(runtime, one)
        try:  # before the store is asked: a bad profile costs no round trip (SPEC 8.1)
            engine.checked_profile(options.profile or {})
        except InvalidProfile as error:
            raise ApiError(422, "invalid_profile", str(error)) from None
        if await self.store.get(session_id) is not None:
            raise _exists(session_id)
        try:
            result = await self._call(runtime, engine.start, session_id, options.bot_first,
                                      options.focus_node, options.profile)
        except UnknownNode as error:
            raise ApiError(422, "unknown_node", str(error)) from None
        except EngineError as error:
            raise ApiError(422, "invalid_request", str(error)) from None
        record = SessionRecord(scenario, one.saved, (), inline is not None)
        now = self.clock()
        events = () if self.recorder is None else self.recorder.started(
            scenario, inline is not None, runtime.ir_hash, session_id, result, now)
        version = await self._put_new(session_id, encode_record(record), now, events,
                                      runtime.ir_hash, inline)
        turn = result.json_line() if result.response is not None else None
        return {"session_id": session_id, "scenario": scenario, "ir_hash": runtime.ir_hash,
                "version": version, "turn": turn}

    async def _put_new(self, session_id: str, data: bytes, now: float, events: tuple,
                       ir_hash: str, inline: bytes | None) -> int:
        """The creation's put. A session on an inline IR (not registered here) names it to
        the store, which removes the blob with its last live session (SPEC 11.1); when the
        last one went just before (`IRGone`), the blob is put again, once."""
        tracked = ir_hash if inline is not None and not self.registry.registered(ir_hash) \
            else None
        for attempt in range(2):
            try:
                return await self.store.put(session_id, data, 0, now, events, tracked)
            except VersionConflict:
                raise _exists(session_id) from None
            except IRGone as error:
                if attempt or inline is None:
                    raise StoreError(str(error)) from None
                await self.registry.put_again(ir_hash, inline)
        raise AssertionError("unreachable")

    # --- turns ----------------------------------------------------------------------------

    async def message(self, message: Message, note: dict[str, Any]) -> bytes:
        """One user turn, applied exactly once; the 200 answer's bytes."""
        _check_text(message.text)
        session_id = message.session_id
        await self._locks.acquire(session_id)
        try:
            return await self._apply(message, note)
        finally:
            self._locks.release(session_id)

    async def _apply(self, message: Message, note: dict[str, Any]) -> bytes:
        session_id = message.session_id
        digest = text_digest(message.text) if message.message_id is not None else b""
        nlu = message.nlu
        if nlu is not None and "source" in nlu:  # the server says which NLU read a turn
            nlu = {key: value for key, value in nlu.items() if key != "source"}
        carried: tuple = ()  # skill runs of an attempt that lost the race (SPEC 8.4)
        for _attempt in range(RETRY_LIMIT):
            stored = await self.store.get(session_id)
            if stored is None:
                raise ApiError(404, "unknown_session", f"no session {session_id}; create it "
                                                       "with POST /dm/v1/session")
            record = self._record(session_id, stored.data)
            if message.message_id is not None:
                replay = _replay(record, message, digest)
                if replay is not None:
                    note["replayed"] = True
                    return replay
            state = record.state
            if state.complete:
                raise ApiError(409, "session_complete",
                               f"session {session_id} is complete ({state.complete_reason}); "
                               "start a new session")
            started = time.perf_counter()
            held = stored.version
            try:
                lease = await self.executor.lease(state.ir_hash, self.registry)
            except MissingIR as error:
                raise StoreError(str(error)) from None
            if lease:
                held = await secure_turn(self.store, session_id, record, stored.version,
                                         encode_record, self.clock, lease)
                if held is None:
                    continue
            try:
                result, saved, runtime = await self._turn(state, held, message.text, nlu,
                                                          carried)
            except BaseException:
                if held != stored.version:
                    await release(self.store, session_id, record, held, encode_record,
                                  self.clock)
                raise
            line = result.json_line()
            turn = encode(line)
            trace = encode(turn_trace(runtime, result, line, message.nlu is not None)) \
                if message.trace else None
            messages = record.messages
            if message.message_id is not None:
                messages = (messages + (Remembered(message.message_id, digest, saved.version,
                                                   turn, trace),))[-MESSAGES_REMEMBERED:]
            written = SessionRecord(record.scenario, saved, messages, record.inline)
            data = encode_record(written)
            now = self.clock()
            events = () if self.recorder is None else self.recorder.turn(
                record.scenario, record.inline, state, result, now, stored.updated_at, line)
            try:
                version = await self.store.put(session_id, data, held, now, events)
            except VersionConflict:
                nlu = result._heard  # the same understanding, on the newer state
                carried = tuple(a for a in saved.actions if a not in state.actions)
                continue
            self._keep(session_id, data, written)
            self.on_turn(record.scenario, session_id, result, time.perf_counter() - started)
            # the rules NLU and a request's `nlu` leave the source empty; the log says which
            source = result.nlu_source or ("request" if message.nlu is not None else "rules")
            note.update(node=result.node, reason=result.reason, nlu_source=source)
            return _answer(session_id, version, False, turn, trace)
        raise ApiError(503, "store_unavailable", f"session {session_id} changed "
                                                 f"{RETRY_LIMIT} times during this turn; retry")

    def _record(self, session_id: str, data: bytes) -> SessionRecord:
        """The record of the stored bytes: the one this worker wrote when the store still
        holds exactly its bytes, else decoded (and not kept: only writes are)."""
        kept = self._decoded.get(session_id)
        if kept is not None and kept[0] == data:
            return kept[1]
        return decode_record(data)

    def _keep(self, session_id: str, data: bytes, record: SessionRecord) -> None:
        """Remember this worker's write of a session, the oldest forgotten past the bound."""
        decoded = self._decoded
        if self.decoded_kept <= 0:
            return
        decoded.pop(session_id, None)  # re-inserted last: the dict's order is the recency
        decoded[session_id] = (data, record)
        if len(decoded) > self.decoded_kept:
            del decoded[next(iter(decoded))]

    async def _turn(self, state: DialogueState, version: int, text: str, nlu: Any,
                    carried: tuple = ()) -> tuple[TurnResult, DialogueState, Runtime]:
        try:
            runtime = await self.registry.runtime(state.ir_hash)
        except MissingIR as error:
            raise StoreError(str(error)) from None
        one = OneSession(state, version)
        await self.plugins.ready(runtime)
        engine = self.plugins.engine(runtime, one)
        try:
            result = await self._call(runtime, engine.turn, state.session_id, text, nlu, None,
                                      carried)
        except EngineError as error:
            raise ApiError(422, "invalid_request", str(error)) from None
        return result, one.saved, runtime

    async def _call(self, runtime: Runtime, function: Callable, *args: Any) -> Any:
        """Run an engine call here, or in the bounded turn executor when it may wait on the
        network: an LLM plug-in, or a scenario with a skill node (SPEC 17.1)."""
        if self.plugins.blocking or self.executor.blocks(runtime):
            return await self.executor.run(function, *args)
        return function(*args)

    # --- reading and deleting -------------------------------------------------------------

    async def view(self, session_id: str) -> tuple[SessionRecord, Any]:
        stored = await self.store.get(session_id)
        if stored is None:
            raise ApiError(404, "unknown_session", f"no session {session_id}")
        return decode_record(stored.data), stored

    async def delete(self, session_id: str) -> None:
        await self._locks.acquire(session_id)  # not in the middle of one of its turns
        try:
            self._decoded.pop(session_id, None)
            if not await self.store.delete(session_id):
                raise ApiError(404, "unknown_session", f"no session {session_id}")
        finally:
            self._locks.release(session_id)


def _check_text(text: str) -> None:
    """413 for a `text` over `TEXT_LIMIT` bytes (a character is at most 4 of them)."""
    if len(text) * 4 > TEXT_LIMIT and len(text.encode("utf-8", "surrogatepass")) > TEXT_LIMIT:
        raise ApiError(413, "too_large", f"text is over {TEXT_LIMIT // 1024} KiB; "
                                         "send a turn of speech, not a document")


def _replay(record: SessionRecord, message: Message, digest: bytes) -> bytes | None:
    """The answer first given to this message id (its trace only when asked again)."""
    for remembered in reversed(record.messages):
        if remembered.message_id == message.message_id:
            if remembered.digest != digest:
                raise ApiError(409, "message_id_reused",
                               f"message_id {message.message_id!r} was already used with "
                               "another text; give each message its own id")
            trace = remembered.trace if message.trace else None
            return _answer(message.session_id, remembered.version, True, remembered.turn,
                           trace)
    return None


def _answer(session_id: str, version: int, replayed: bool, turn: bytes,
            trace: bytes | None = None) -> bytes:
    answer = {"session_id": session_id, "version": version, "replayed": replayed,
              "turn": msgspec.Raw(turn)}
    if trace is not None:
        answer["trace"] = msgspec.Raw(trace)
    return encode(answer)


def _exists(session_id: str) -> ApiError:
    return ApiError(409, "session_exists", f"session {session_id} already exists; use another "
                                           "session_id or leave it out")
