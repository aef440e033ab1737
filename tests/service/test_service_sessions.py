"""`mgi serve` sessions as SPEC 11 promises them, against real server processes and stores.

One serial order under load: 64 clients on one session, through two servers on one Redis,
one server with two workers on one SQLite file, and one worker on `memory:`. A replayed
`message_id` runs nothing (no LLM request, no skill, no change to the stored record), and a
version-conflict retry asks the NLU once. A redeployed scenario leaves live sessions on their
own IR. The session TTL, and the size of a stored session. (Kills and SIGTERM under load are
in test_service_durability.py.)
"""

from __future__ import annotations

import http.client
import json
import os
import sqlite3
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from support.llm_server import DEFAULT_NLU, Reply
from support.redis_server import needs_redis
from support.service_server import ROOT, Client, ServiceServer

FOCUS = {"scenario": "senimate", "focus_node": "general_conversation"}  # never moves or ends
CLIENTS, EACH = 64, 3


@contextmanager
def serving(*servers: ServiceServer):
    """The servers started, and always stopped (SIGTERM, then SIGKILL) however the test ends."""
    with ExitStack() as stack:
        for server in servers:
            stack.callback(server.kill)
            stack.callback(server.stop)
            server.start()
        yield servers


def create(server: ServiceServer, body: dict) -> dict:
    status, answer, _ = server.call("POST", "/dm/v1/session", body)
    assert status == 201, answer
    return answer


def send(server: ServiceServer, session_id: str, text: str, **more) -> tuple[int, dict]:
    status, answer, _ = server.call("POST", "/dm/v1/message",
                                    {"session_id": session_id, "text": text, **more})
    return status, answer


def view(server: ServiceServer, session_id: str) -> tuple[int, dict]:
    status, answer, _ = server.call("GET", f"/dm/v1/session/{session_id}")
    return status, answer


def message_lines(server: ServiceServer) -> list[dict]:
    return [line for line in server.log_lines() if line.get("path") == "/dm/v1/message"]


def descendants(pid: int) -> list[int]:
    """The processes under `pid` (uvicorn's workers and multiprocessing's tracker), from /proc."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parents[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found.extend(children)
        frontier = children
    return found


def turns_by_worker(server: ServiceServer) -> dict[int, float]:
    """`mago_turns_total` of each worker of a multi-worker server, from the files prometheus
    keeps per worker process in the folder `mgi serve` gives them."""
    from prometheus_client.mmap_dict import MmapedDict

    folder = None
    for pid in descendants(server.process.pid):
        with open(f"/proc/{pid}/environ", "rb") as environ:
            for item in environ.read().split(b"\0"):
                if item.startswith(b"PROMETHEUS_MULTIPROC_DIR="):
                    folder = Path(item.split(b"=", 1)[1].decode())
    assert folder is not None
    turns = {}
    for path in folder.glob("counter_*.db"):
        values = MmapedDict.read_all_values_from_file(str(path))
        turns[int(path.stem.split("_")[1])] = sum(
            value for key, value, *_ in values if json.loads(key)[1] == "mago_turns_total")
    return turns


# --- one serial order -----------------------------------------------------------------------

def hammer(ports: list[int], session_id: str) -> list[dict]:
    """CLIENTS threads, each with its own keep-alive connection (to ports[i % len]), sending
    EACH messages to one session, all released at once; every request's outcome."""
    results: list[dict] = []
    lock = threading.Lock()
    barrier = threading.Barrier(CLIENTS)

    def client(index: int) -> None:
        port = ports[index % len(ports)]
        connection = Client(port, timeout=30)
        try:
            connection.connection.connect()  # accepted by one of the server's workers
            barrier.wait(10)
            for k in range(EACH):
                text = f"말씀 {index}-{k}"
                try:
                    status, answer, _ = connection.call(
                        "POST", "/dm/v1/message", {"session_id": session_id, "text": text})
                except (OSError, http.client.HTTPException) as error:
                    status, answer = -1, repr(error)
                with lock:
                    results.append({"client": index, "port": port, "k": k, "text": text,
                                    "status": status, "answer": answer})
        finally:
            connection.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not any(t.is_alive() for t in threads), "a client hung"
    return results


def check_one_serial_order(results: list[dict], created: dict, final: dict) -> None:
    total = CLIENTS * EACH
    assert len(results) == total
    statuses = sorted({r["status"] for r in results})
    assert statuses == [200], [r for r in results if r["status"] != 200][:3]
    opening = created["turn"]["turn"]  # 1: the opening is session turn 1, version 1
    assert (opening, created["version"]) == (1, 1)
    turns = sorted(r["answer"]["turn"]["turn"] for r in results)
    versions = sorted(r["answer"]["version"] for r in results)
    assert turns == list(range(opening + 1, opening + total + 1))  # none lost, none twice
    assert versions == list(range(2, total + 2))
    for r in results:
        answer = r["answer"]
        assert answer["replayed"] is False
        assert answer["turn"]["user"] == r["text"]  # each answer is its own request's turn
        assert answer["version"] == answer["turn"]["turn"]  # one order for both counters
    by_client: dict[int, list[int]] = {}
    for r in sorted(results, key=lambda r: (r["client"], r["k"])):
        by_client.setdefault(r["client"], []).append(r["answer"]["version"])
    assert all(v == sorted(v) for v in by_client.values())  # a client's turns in its order
    assert final["version"] == total + 1
    assert final["current_node"] == "general_conversation" and final["complete"] is False
    by_turn = {r["answer"]["turn"]["turn"]: r["answer"]["turn"] for r in results}
    kept = len(final["history"])
    assert kept >= 1
    expected = [{"user": by_turn[t]["user"], "bot": by_turn[t]["response"],
                 "node": by_turn[t]["node"], "reason": by_turn[t]["reason"]}
                for t in range(total + 2 - kept, total + 2)]
    assert final["history"] == expected  # the last turns, in the order they were applied


def race_two_servers(store: str, served_irs: Path) -> tuple[int, float]:
    """CLIENTS clients split over two servers on one store, on one session: one serial order,
    each server applied its half, all 200; (switches between the servers, seconds)."""
    one, two = ServiceServer([served_irs], store=store), ServiceServer([served_irs], store=store)
    with serving(one, two):
        created = create(one, FOCUS)
        started = time.monotonic()
        results = hammer([one.port, two.port], created["session_id"])
        elapsed = time.monotonic() - started
        status, final = view(two, created["session_id"])
        assert status == 200
        check_one_serial_order(results, created, final)
        for server in (one, two):
            lines = message_lines(server)
            assert len(lines) == CLIENTS * EACH // 2
            assert {line["status"] for line in lines} == {200}
    order = [r["port"] for r in sorted(results, key=lambda r: r["answer"]["version"])]
    return sum(1 for a, b in zip(order, order[1:]) if a != b), elapsed


@needs_redis
def test_64_clients_on_one_session_through_two_servers_on_one_redis(served_irs, redis_server):
    switches, elapsed = race_two_servers(redis_server.url, served_irs)
    assert switches > 0  # the two servers' turns interleave: they raced for the session
    print(f"\nredis, 2 servers: {CLIENTS * EACH} turns in {elapsed:.2f} s, "
          f"{switches} switches between servers")


def test_64_clients_on_one_session_through_two_servers_on_one_sqlite_file(served_irs, tmp_path):
    switches, _ = race_two_servers(f"sqlite:{tmp_path / 'sessions.db'}", served_irs)
    assert switches > 0


def hammer_one_server(server: ServiceServer) -> None:
    """CLIENTS clients on one session of `server`: one serial order, every answer 200."""
    created = create(server, FOCUS)
    results = hammer([server.port], created["session_id"])
    status, final = view(server, created["session_id"])
    assert status == 200
    check_one_serial_order(results, created, final)


def test_64_clients_on_one_session_through_two_workers_on_one_sqlite_file(served_irs, tmp_path):
    server = ServiceServer([served_irs], store=f"sqlite:{tmp_path / 'sessions.db'}",
                           extra=["--workers", "2"])
    with serving(server):
        hammer_one_server(server)
        workers = turns_by_worker(server)
        assert sum(workers.values()) == CLIENTS * EACH
        # which worker accepts a connection is the kernel's choice, so one may get them all;
        # two servers on one file (above) make two processes race for certain
        print(f"\nsqlite, 2 workers: turns by worker {sorted(workers.values())}")


def test_64_clients_on_one_session_in_memory(served_irs):
    server = ServiceServer([served_irs], store="memory:")
    with serving(server):
        hammer_one_server(server)


# --- message ids: a replay runs nothing -----------------------------------------------------

@pytest.fixture(scope="module")
def pingpong(tmp_path_factory) -> Path:
    """senimate_weather with its weather node re-entered every other turn (greeting <->
    daily_life_check, both unconditional): a turn that moves into the greeting runs the skill
    again, so a replay that ran anything would show in the skill's log."""
    from compiler.driver import check_file

    scenario = json.loads((ROOT / "scenarios" / "senimate_weather.json").read_text("utf-8"))
    scenario["metadata"]["name"] = "weather_pingpong"
    for node in scenario["graph"]["nodes"]:
        if node["id"] == "greeting_introduction":
            node.pop("next_nodes", None)
            node["default_next"] = "daily_life_check"
        if node["id"] == "daily_life_check":
            node["params"].pop("min_turns", None)
            node["default_next"] = "greeting_introduction"
    folder = tmp_path_factory.mktemp("pingpong")
    source = folder / "weather_pingpong.json"
    source.write_text(json.dumps(scenario, ensure_ascii=False), "utf-8")
    result = check_file(str(source))
    (folder / "weather_pingpong.ir").write_bytes(result.ir_bytes())
    return folder / "weather_pingpong.ir"


COUNTING_SKILL = '''
import os
from interpreter.skills.weather import WeatherSkill


class CountingWeather(WeatherSkill):
    """The built-in weather skill, logging each run's session id to $MAGO_TEST_SKILL_LOG."""

    def run(self, args, context):
        with open(os.environ["MAGO_TEST_SKILL_LOG"], "a") as log:
            log.write(context.session_id + "\\n")
        return super().run(args, context)
'''


@pytest.fixture
def skill_log(tmp_path) -> tuple[dict, Path]:
    """An installed `mago.skills` plug-in (a dist-info on PYTHONPATH) that replaces `weather`
    with a copy that logs every run; the server's environment and the log's path."""
    plugin = tmp_path / "plugin"
    info = plugin / "mago_counting_skill-1.0.dist-info"
    info.mkdir(parents=True)
    (plugin / "mago_counting_skill.py").write_text(COUNTING_SKILL, "utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mago-counting-skill\n"
                                   "Version: 1.0\n", "utf-8")
    (info / "entry_points.txt").write_text(
        "[mago.skills]\nweather = mago_counting_skill:CountingWeather\n", "utf-8")
    log = tmp_path / "skill.log"
    log.write_text("", "utf-8")
    return {"PYTHONPATH": str(plugin), "MAGO_TEST_SKILL_LOG": str(log)}, log


def llm_env(llm) -> dict:
    return {"MAGO_LLM_URL": llm.url, "MAGO_LLM_MODEL": "test-model"}


def stored_row(path: Path, session_id: str) -> tuple:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT version, data, updated_at FROM sessions WHERE id = ?",
                          (session_id,)).fetchone()


def test_a_replayed_message_id_runs_no_nlu_no_skill_and_changes_nothing(pingpong, llm,
                                                                       skill_log, tmp_path):
    env, log = skill_log
    database = tmp_path / "sessions.db"
    server = ServiceServer([pingpong], store=f"sqlite:{database}", extra=["--nlu", "llm"],
                           env={**env, **llm_env(llm)})
    with serving(server):
        sid = create(server, {"scenario": "weather_pingpong"})["session_id"]
        runs = lambda: log.read_text("utf-8").splitlines()  # noqa: E731
        assert runs() == [sid]  # the opening, at the weather node
        first = send(server, sid, "안녕하세요", message_id="m1")  # -> daily_life_check
        second = send(server, sid, "잘 지내요", message_id="m2")  # -> greeting: the skill runs
        assert first[0] == second[0] == 200
        assert second[1]["turn"]["next_node"] == "greeting_introduction"
        assert "맑고 포근해요" in second[1]["turn"]["response"]
        assert runs() == [sid, sid]
        third = send(server, sid, "네", message_id="m3")  # -> daily_life_check again
        assert third[0] == 200 and third[1]["version"] == 4
        asked, row = len(llm.of("nlu")), stored_row(database, sid)
        assert asked == 3
        # m2 again, where the session is now: run, it would ask the LLM and run the skill
        status, again = send(server, sid, "잘 지내요", message_id="m2")
        assert status == 200 and again["replayed"] is True
        assert again["turn"] == second[1]["turn"] and again["version"] == second[1]["version"]
        assert len(llm.of("nlu")) == asked  # no NLU request
        assert runs() == [sid, sid]  # no skill run
        assert stored_row(database, sid) == row  # the record not even rewritten
        status, again = send(server, sid, "안녕하세요", message_id="m1")  # an older one
        assert (status, again["replayed"], again["turn"]) == (200, True, first[1]["turn"])
        status, reused = send(server, sid, "다른 말", message_id="m3")
        assert (status, reused["error"]["code"]) == (409, "message_id_reused")
        assert stored_row(database, sid) == row and len(llm.of("nlu")) == asked
        # the observation works: a new message id is a real turn into the weather node
        status, fourth = send(server, sid, "잘 지내요", message_id="m4")
        assert (status, fourth["replayed"], fourth["version"]) == (200, False, 5)
        assert len(llm.of("nlu")) == asked + 1 and runs() == [sid, sid, sid]
        replays = [line for line in message_lines(server) if line.get("replayed")]
        assert len(replays) == 2


@needs_redis
def test_a_conflict_retry_reuses_the_nlu_result(served_irs, llm, redis_server):
    """Two servers, one session: each round sends one message to each at once; the LLM holds
    its answers 0.8 s, so both servers read the same version and ask the LLM before either
    stores, and one of them must meet a version conflict and redo its turn. The LLM still
    gets exactly one request per applied turn, for that turn's text."""
    llm.default_nlu = Reply(DEFAULT_NLU, delay=0.8)
    env = llm_env(llm)
    one = ServiceServer([served_irs], store=redis_server.url, extra=["--nlu", "llm"], env=env)
    two = ServiceServer([served_irs], store=redis_server.url, extra=["--nlu", "llm"], env=env)
    rounds = 3
    with serving(one, two):
        sid = create(one, FOCUS)["session_id"]
        answers: list[tuple[str, int, dict]] = []
        for r in range(rounds):
            before = len(llm.of("nlu"))
            texts = {one: f"첫째 {r}", two: f"둘째 {r}"}
            outcome: dict = {}

            def post(server: ServiceServer) -> None:
                outcome[server] = send(server, sid, texts[server])  # noqa: B023 - joined below

            threads = [threading.Thread(target=post, args=(s,)) for s in (one, two)]
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + 0.7
            while len(llm.of("nlu")) < before + 2 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert len(llm.of("nlu")) == before + 2 and not outcome  # both asked, none stored
            for thread in threads:
                thread.join(30)
            for server in (one, two):
                status, answer = outcome[server]
                assert status == 200, answer
                answers.append((texts[server], answer["version"], answer["turn"]))
        assert sorted(v for _, v, _ in answers) == list(range(2, 2 * rounds + 2))
        assert all(turn["user"] == text for text, _, turn in answers)
        said = [request["messages"][-1]["content"] for request in llm.of("nlu")]
        assert sorted(said) == sorted(text for text, _, _ in answers)  # once per applied turn
        status, final = view(one, sid)
        assert status == 200 and final["version"] == 2 * rounds + 1


# --- redeploys ------------------------------------------------------------------------------

def test_a_redeployed_scenario_keeps_live_sessions_on_their_own_ir(served_irs, tmp_path):
    from compiler.driver import check_file

    scenario = json.loads((ROOT / "scenarios" / "clinic_booking.json").read_text("utf-8"))
    for node in scenario["graph"]["nodes"]:
        if node["id"] in ("greeting", "collect_patient_info"):
            default = node["responses"]["default"]  # a sentence or variants (SPEC 9)
            node["responses"]["default"] = ["[B] " + text for text in default] \
                if isinstance(default, list) else "[B] " + default
    source = tmp_path / "clinic_booking.json"
    source.write_text(json.dumps(scenario, ensure_ascii=False), "utf-8")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "clinic_booking.ir").write_bytes(check_file(str(source)).ir_bytes())
    store = f"sqlite:{tmp_path / 'sessions.db'}"
    a_ir = tmp_path / "a" / "clinic_booking.ir"
    a_ir.parent.mkdir()
    a_ir.write_bytes((served_irs / "clinic_booking.ir").read_bytes())

    with serving(ServiceServer([a_ir], store=store)) as (first,):
        old = create(first, {"scenario": "clinic_booking", "session_id": "old-1"})
        old2 = create(first, {"scenario": "clinic_booking", "session_id": "old-2"})
        assert not old["turn"]["response"].startswith("[B]")
    a_ir.unlink()  # from now on IR A is only in the store
    with serving(ServiceServer([tmp_path / "b"], store=store, extra=["--workers", "2"])) \
            as (second,):
        status, listed, _ = second.call("GET", "/dm/v1/scenarios")
        assert [s["ir_hash"] for s in listed] != [old["ir_hash"]]
        new = create(second, {"scenario": "clinic_booking", "session_id": "new-1"})
        assert new["ir_hash"] == listed[0]["ir_hash"] != old["ir_hash"]
        assert new["turn"]["response"].startswith("[B] 안녕하세요")
        for sid, wording in (("old-1", ""), ("old-2", ""), ("new-1", "[B] ")):
            status, answer = send(second, sid, "네")  # greeting -> collect_patient_info
            assert status == 200, answer
            assert answer["turn"]["next_node"] == "collect_patient_info"
            assert answer["turn"]["response"] == wording + "예약을 시작할게요. 먼저 진료받으실 " \
                                                           "분의 성함과 태어나신 해를 알려 주세요."
        for sid, ir_hash in (("old-1", old["ir_hash"]), ("old-2", old2["ir_hash"]),
                             ("new-1", new["ir_hash"])):
            status, seen = view(second, sid)
            assert status == 200 and seen["ir_hash"] == ir_hash


# --- TTL and size ---------------------------------------------------------------------------

def test_a_session_untouched_for_the_ttl_is_gone(served_irs, tmp_path):
    """The idle session expires; the busy one, touched all along, stays. The TTL (2 s) is
    four times the gap between the busy session's turns, so a loaded machine's slow turn does
    not expire it; the idle one is polled for until it is gone (a read does not touch it)."""
    database = tmp_path / "sessions.db"
    server = ServiceServer([served_irs], store=f"sqlite:{database}", extra=["--session-ttl", "2"])
    with serving(server):
        idle = create(server, FOCUS)["session_id"]
        busy = create(server, FOCUS)["session_id"]
        deadline = time.monotonic() + 20
        while view(server, idle)[0] == 200:
            assert time.monotonic() < deadline, "the idle session outlived its TTL by 18 s"
            assert send(server, busy, "네")[0] == 200
            time.sleep(0.5)
        status, gone = view(server, idle)
        assert (status, gone["error"]["code"]) == (404, "unknown_session")
        status, gone = send(server, idle, "네")
        assert (status, gone["error"]["code"]) == (404, "unknown_session")
        assert view(server, busy)[0] == 200
        deadline = time.monotonic() + 5
        while stored_row(database, idle) is not None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert stored_row(database, idle) is None  # swept from the file, not only hidden


SENIMATE_TURNS = ("네, 괜찮아요", "오늘은 경로당에 다녀왔어요", "밥은 잘 챙겨 먹었어요",
                  "무릎이 좀 쑤셔요", "고마워요, 이제 그만할래요")


def test_a_stored_session_is_under_2_kb_after_5_turns(served_irs, tmp_path):
    database = tmp_path / "sessions.db"
    server = ServiceServer([served_irs], store=f"sqlite:{database}")
    sizes = {}
    with serving(server):
        for label, with_ids in (("without message ids", False), ("with message ids", True)):
            sid = create(server, {"scenario": "senimate"})["session_id"]
            for i, text in enumerate(SENIMATE_TURNS):
                more = {"message_id": f"{sid}-{i}"} if with_ids else {}
                status, answer = send(server, sid, text, **more)
                assert status == 200, answer
            assert stored_row(database, sid)[0] == 6
            sizes[label] = len(stored_row(database, sid)[1])
    print(f"\nsenimate record after 5 turns: {sizes}")
    assert sizes["without message ids"] < 2048
    assert sizes["with message ids"] > sizes["without message ids"]  # the answers are kept
