"""`mgc` as a user runs it: a separate process, exit codes, stderr, files on disk.

The contract (SPEC section 3, docs/guides/checking.md): exit 0 without errors (warnings allowed), 1 with errors
(or warnings under --strict), 2 for usage and I/O problems; every failure is diagnostics or
one clear line on stderr, never a traceback, whatever the input.
"""

from __future__ import annotations

import json
import os
import random
import re
import stat
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import msgspec
import pytest

from interpreter import ir
from conftest import ROOT

SCENARIOS = ROOT / "scenarios"
SENIMATE = SCENARIOS / "senimate.json"
SHIPPED = ("clinic_booking.json", "senimate.json", "senimate_weather.json")
SENIMATE_NODES = ("greeting_introduction", "daily_life_check", "meal_check", "health_check",
                  "general_conversation", "safety_medical_emergency", "safety_self_harm",
                  "safety_abuse", "safety_check_in", "conversation_closure")

# A valid two-node scenario; CONDITION is the value of the one condition, which starts at
# line 14, column 26.
MINIMAL = """{
  "metadata": {
    "name": "cli"
  },
  "graph": {
    "entry": "ask",
    "nodes": [
      {
        "id": "ask",
        "description": "Ask something.",
        "next_nodes": [
          {
            "target": "done",
            "condition": CONDITION
          }
        ]
      },
      {
        "id": "done",
        "description": "Say goodbye."
      }
    ]
  }
}
"""
CONDITION_LINE, CONDITION_COLUMN = 14, 26
CONDITION_POINTER = "/graph/nodes/0/next_nodes/0/condition"
DIAGNOSTIC_HEAD = re.compile(r"^(?P<file>.+):(?P<line>\d+):(?P<column>\d+): (?P<severity>error|warning)"
                             r"\[(?P<code>[EW]\d{3})\]: ")


def minimal(tmp_path: Path, condition: str, name: str = "case.json") -> Path:
    path = tmp_path / name
    path.write_text(MINIMAL.replace("CONDITION", condition), encoding="utf-8")
    return path


def assert_clean_failure(done, status: int) -> None:
    """Exit `status`; no traceback and no internal error anywhere in the output."""
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output[-2000:]
    assert "internal error" not in output, done.stderr
    assert done.returncode == status, (done.returncode, done.stderr[-2000:])


def assert_one_line(done, status: int, *fragments: str) -> str:
    """Exit `status` with exactly one non-empty line on stderr, containing `fragments`."""
    assert_clean_failure(done, status)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def heads(stderr: str) -> list[re.Match]:
    """The `file:line:col: severity[CODE]:` lines of human output."""
    return [m for m in map(DIAGNOSTIC_HEAD.match, stderr.splitlines()) if m]


def json_reports(done) -> list[dict]:
    data = json.loads(done.stdout)
    return data if isinstance(data, list) else [data]


def run_all(mgc, calls: list[tuple]) -> list:
    """Several independent `mgc` runs side by side (each pays the interpreter's start-up)."""
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1)) as pool:
        return list(pool.map(lambda args: mgc(*args), calls))


@pytest.fixture(scope="module")
def senimate_ir(mgc, tmp_path_factory) -> Path:
    """scenarios/senimate.json compiled once for the tests that read an IR file."""
    out = tmp_path_factory.mktemp("ir") / "senimate.ir"
    done = mgc("compile", SENIMATE, "-o", out)
    assert done.returncode == 0 and f"wrote {out}" in done.stderr, done.stderr
    return out


# ---- inputs that are not scenarios


def test_truncated_scenarios_each_give_one_e001(mgc, tmp_path):
    data = SENIMATE.read_bytes()
    cuts = (1, 2, 57, 1000, 4321, len(data) // 2, len(data) - 40, len(data) - 2)
    paths = []
    for cut in cuts:
        path = tmp_path / f"cut_{cut}.json"
        path.write_bytes(data[:cut])
        paths.append(path)
    done = mgc("check", "--format", "json", *paths)
    assert_clean_failure(done, 1)
    assert done.stderr == ""
    reports = json_reports(done)
    assert [r["file"] for r in reports] == [str(p) for p in paths]
    # "{" and "{\n": the end of the file is where a member name was expected.
    assert [(d["line"], d["column"]) for r in reports[:2] for d in r["diagnostics"]] == [(1, 2), (2, 1)]
    for path, report in zip(paths, reports):
        text = path.read_bytes().decode("utf-8", "replace")
        assert [d["code"] for d in report["diagnostics"]] == ["E001"], (path.name, report)
        [diagnostic] = report["diagnostics"]
        # The problem is at or before the end of what is left of the file.
        last_line = text.count("\n") + 1
        assert 1 <= diagnostic["line"] <= last_line, (path.name, diagnostic)
        if diagnostic["line"] == last_line:
            assert diagnostic["column"] <= len(text.rsplit("\n", 1)[-1]) + 1, (path.name, diagnostic)


def test_garbage_gives_one_e001_or_e002_per_file(mgc, tmp_path):
    rng = random.Random(20240501)
    files = {
        "random_bytes.json": bytes(rng.randrange(256) for _ in range(4096)),
        "printable_noise.json": "".join(rng.choice("{}[]:,\"'abc 123\n\\") for _ in range(4096)).encode(),
        "nul_bytes.json": b"\x00" * 64,
        "brace_then_noise.json": b"{" + bytes(rng.randrange(32, 127) for _ in range(512)),
        "png.json": b"\x89PNG\r\n\x1a\n" + bytes(rng.randrange(256) for _ in range(256)),
        "utf16.json": '{"metadata": {"name": "x"}}'.encode("utf-16"),
        "number.json": b"12345\n",
        "string.json": b'"a scenario"\n',
        "array.json": b"[1, 2, 3]\n",
    }
    expected = {"number.json": "E002", "string.json": "E002", "array.json": "E002"}
    paths = []
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        paths.append(tmp_path / name)
    done = mgc("check", "--format", "json", *paths)
    assert_clean_failure(done, 1)
    assert done.stderr == ""
    for path, report in zip(paths, json_reports(done)):
        codes = [d["code"] for d in report["diagnostics"]]
        assert codes == [expected.get(path.name, "E001")], (path.name, report)


def test_empty_and_blank_files(mgc, tmp_path):
    empty, blank = tmp_path / "empty.json", tmp_path / "blank.json"
    empty.write_bytes(b"")
    blank.write_bytes(b" \n\t\n")
    done = mgc("check", empty, blank)
    assert_clean_failure(done, 1)
    found = [(Path(m["file"]).name, m["code"]) for m in heads(done.stderr)]
    assert found == [("empty.json", "E001"), ("blank.json", "E001")]
    assert "empty" in done.stderr


def test_not_utf8(mgc, tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes(MINIMAL.replace("CONDITION", '"nlu.text == \'caf\xe9\'"').encode("latin-1"))
    done = mgc("check", path)
    assert_clean_failure(done, 1)
    [head] = heads(done.stderr)
    # 'é' is the 17th character of the string whose quote is at column 26.
    assert (head["code"], head["line"], head["column"]) == ("E001", "14", str(26 + 17))
    assert "UTF-8" in done.stderr


def test_fifty_megabyte_scenario_reports_the_error_near_its_end(mgc, tmp_path):
    """Huge descriptions on single lines, one unknown target near the end of the file."""
    filler = ("어르신께 안부를 여쭙는다. " * 25000)[:300_000] + "x" * 300_000
    lines = ["{", '  "metadata": {', '    "name": "big"', "  },", '  "graph": {',
             '    "entry": "n0",', '    "nodes": [']
    nodes = 50
    for i in range(nodes):
        lines += ["      {", f'        "id": "n{i}",',
                  f'        "description": {json.dumps(filler, ensure_ascii=False)},']
        if i == nodes - 2:
            lines += ['        "next_nodes": [', "          {"]
            lines.append(f'            "target": "n{i + 1}x",')
            error_line = len(lines)
            lines += ['            "condition": "system.node_turns > 3"', "          }", "        ],"]
        lines.append('        "terminal": true' if i == nodes - 1 else f'        "default_next": "n{i + 1}"')
        lines.append("      }" if i == nodes - 1 else "      },")
    lines += ["    ]", "  }", "}", ""]
    path = tmp_path / "big.json"
    path.write_text("\n".join(lines), encoding="utf-8")
    assert path.stat().st_size > 50_000_000
    start = time.monotonic()
    done = mgc("check", path, timeout=60)
    elapsed = time.monotonic() - start
    assert_clean_failure(done, 1)
    [head] = heads(done.stderr)
    assert (head["code"], int(head["line"]), int(head["column"])) == ("E103", error_line, 23)
    assert "unknown target node 'n49x'" in done.stderr and "did you mean 'n49'?" in done.stderr
    assert f"{path}: 1 error, 0 warnings" in done.stderr
    assert elapsed < 20, f"checking a 50 MB scenario took {elapsed:.1f} s"


def test_condition_nested_ten_thousand_levels_is_one_e206(mgc, tmp_path):
    cases = {
        # 10,000 nested objects: reported once, at the first object past 64 levels.
        "object.json": ('{"not": ' * 10_000 + '{"field": "system.node_turns", "operator": "greater_than", '
                        '"value": 1}' + "}" * 10_000,
                        CONDITION_COLUMN + 64 * len('{"not": '), CONDITION_POINTER + "/not" * 64),
        # The same in the expression language: at the 65th 'not', at the 65th '('.
        "expression_not.json": ('"' + "not " * 10_000 + 'system.node_turns > 1"',
                                CONDITION_COLUMN + 1 + 64 * len("not "), CONDITION_POINTER),
        "expression_parentheses.json": ('"' + "(" * 10_000 + "system.node_turns > 1" + ")" * 10_000 + '"',
                                        CONDITION_COLUMN + 1 + 64, CONDITION_POINTER),
    }
    paths = [minimal(tmp_path, condition, name) for name, (condition, _, _) in cases.items()]
    done = mgc("check", "--format", "json", *paths)
    assert_clean_failure(done, 1)
    for (name, (_, column, pointer)), report in zip(cases.items(), json_reports(done)):
        found = [(d["code"], d["line"], d["column"], d["path"]) for d in report["diagnostics"]]
        assert found == [("E206", CONDITION_LINE, column, pointer)], name


def test_condition_value_nested_ten_thousand_lists_is_one_diagnostic(mgc, tmp_path):
    condition = '{"field": "nlu.text", "operator": "in", "value": ' + "[" * 10_000 + "]" * 10_000 + "}"
    done = mgc("check", "--format", "json", minimal(tmp_path, condition))
    assert_clean_failure(done, 1)
    [report] = json_reports(done)
    assert [d["code"] for d in report["diagnostics"]] == ["E204"]


def test_deep_skill_args_check_and_compile_agree(mgc, tmp_path):
    scenario = MINIMAL.replace("CONDITION", '"system.node_turns > 1"').replace(
        '"description": "Say goodbye."',
        '"description": "Say goodbye.",\n        "params": {"skill": "echo", "skill_args": {"x": '
        + "[" * 10_000 + "]" * 10_000 + "}}")
    path = tmp_path / "deep_args.json"
    path.write_text(scenario, encoding="utf-8")
    checked = mgc("check", path)
    compiled = mgc("compile", path, "-o", tmp_path / "deep_args.ir")
    assert_clean_failure(checked, checked.returncode)
    assert_clean_failure(compiled, checked.returncode)


# ---- usage and I/O problems: exit 2, one line


def test_directory_as_scenario(mgc, tmp_path):
    assert_one_line(mgc("check", tmp_path), 2, str(tmp_path), "directory")


def test_missing_scenario(mgc, tmp_path):
    missing = tmp_path / "nope.json"
    assert_one_line(mgc("compile", missing, "-o", tmp_path / "x.ir"), 2, str(missing), "no such file")
    assert not (tmp_path / "x.ir").exists()


@pytest.mark.parametrize("where", ["missing_folder", "is_a_directory", "under_a_file"])
def test_output_path_that_cannot_be_written(mgc, tmp_path, where):
    (tmp_path / "file.txt").write_text("not a folder")
    out = {"missing_folder": tmp_path / "no" / "x.ir", "is_a_directory": tmp_path,
           "under_a_file": tmp_path / "file.txt" / "x.ir"}[where]
    source = minimal(tmp_path, '"system.node_turns > 1"')
    assert_one_line(mgc("compile", source, "-o", out), 2, str(out))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["case.json", "file.txt"]


def test_output_folder_without_write_permission(mgc, tmp_path):
    if os.geteuid() == 0:  # root writes anywhere chmod allows nothing; procfs refuses new files
        out = Path("/proc/mgc-test.ir")
    else:
        folder = tmp_path / "readonly"
        folder.mkdir()
        folder.chmod(0o500)
        out = folder / "x.ir"
    assert_one_line(mgc("compile", SENIMATE, "-o", out), 2, str(out))


@pytest.mark.parametrize("scenario", ["valid", "invalid"])
def test_output_path_that_is_not_a_regular_file_is_left_alone(mgc, tmp_path, scenario):
    fifo = tmp_path / "pipe.ir"
    os.mkfifo(fifo)
    source = SENIMATE if scenario == "valid" else minimal(tmp_path, '"nlu.intnet == 1"')
    done = mgc("compile", source, "-o", fifo, timeout=20)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode), "mgc replaced or deleted a FIFO given as -o"
    if scenario == "valid":
        assert_one_line(done, 2, str(fifo))
    else:
        assert_clean_failure(done, 1)


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["frobnicate"], "No such command"),
        (["check", "--bogus", "scenarios/senimate.json"], "No such option"),
        (["compile", "--format", "xml", "scenarios/senimate.json", "-o", "x.ir"], "Invalid value"),
        (["compile", "scenarios/senimate.json"], "-o"),
        (["check"], "Missing argument"),
    ],
    ids=["unknown_command", "unknown_option", "bad_format", "compile_without_output", "check_without_files"],
)
def test_usage_errors_exit_2(mgc, args, fragment):
    done = mgc(*args)
    assert_clean_failure(done, 2)
    error_lines = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(error_lines) == 1 and fragment in error_lines[0], done.stderr
    assert not (ROOT / "x.ir").exists()


# ---- compile, inspect, graph, schema


def test_compile_writes_a_file_that_inspect_reads(mgc, senimate_ir):
    out = senimate_ir
    assert out.read_bytes()[:4] == b"MGIR"
    shown = mgc("inspect", out)
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    assert text.startswith("senimate 1.0.0 (ko)")
    assert "entry greeting_introduction, bot first: yes" in text
    assert "10 nodes, 14 static edges, 2 global transitions, 6 slots, 1 intents" in text
    assert re.search(r"^  safety:self_harm +-> safety_self_harm +first, at every node$", text, re.M)
    assert "end nodes: conversation_closure (explicit)" in text
    for node_id in SENIMATE_NODES:
        assert re.search(rf"^  {node_id} \[", text, re.M), node_id
    assert "global:user_wants_to_end -> conversation_closure" in text
    data = json.loads(mgc("inspect", "--format", "json", out).stdout)
    assert [n["id"] for n in data["nodes"]] == list(SENIMATE_NODES)
    assert data["end_nodes"] == {"conversation_closure": "explicit"}


def test_compiling_twice_gives_identical_bytes(mgc, tmp_path, senimate_ir):
    again = tmp_path / "again.ir"
    again.write_bytes(b"an older file that the compile replaces")
    assert mgc("compile", SENIMATE, "-o", again).returncode == 0
    assert again.read_bytes() == senimate_ir.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.ir"], "temporary file left"


def test_failed_compile_writes_nothing_and_removes_a_stale_output(mgc, tmp_path):
    bad = minimal(tmp_path, '"nlu.intnet == 1"', name="bad.json")
    out = tmp_path / "bad.ir"
    out.write_bytes(b"MGIR stale output of an earlier compile")
    done = mgc("compile", bad, "-o", out)
    assert_clean_failure(done, 1)
    assert [m["code"] for m in heads(done.stderr)] == ["E201"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"], "stale or temporary file left"


def _damaged_irs(tmp_path: Path, good: bytes) -> dict[str, Path]:
    corrupted = bytearray(good)
    for i in range(len(good) // 2, len(good), 97):
        corrupted[i] ^= 0x5A
    newer = good[:4] + (ir.FORMAT_VERSION + 1).to_bytes(2, "big") + good[6:]
    envelope = msgspec.msgpack.encode(ir.Envelope("0.1.0", "", "", b""))
    contents = {
        "truncated.ir": good[: len(good) // 2],
        "corrupted.ir": bytes(corrupted),
        "scenario_renamed.ir": SENIMATE.read_bytes(),
        "newer_version.ir": newer,
        "empty_body.ir": good[:6] + envelope,
    }
    paths = {}
    for name, data in contents.items():
        paths[name] = tmp_path / name
        paths[name].write_bytes(data)
    return paths


def test_inspect_rejects_damaged_or_foreign_ir_in_one_line(mgc, tmp_path, senimate_ir):
    damaged = _damaged_irs(tmp_path, senimate_ir.read_bytes())
    runs = run_all(mgc, [("inspect", path) for path in damaged.values()])
    for (name, path), done in zip(damaged.items(), runs):
        line = assert_one_line(done, 2, str(path))
        assert "compile" in line or "upgrade" in line, (name, line)


def test_inspect_rejects_ir_with_indices_out_of_range(mgc, tmp_path, senimate_ir):
    _, program = ir.decode_ir(senimate_ir.read_bytes())
    forged = tmp_path / "forged.ir"
    forged.write_bytes(ir.encode_ir(msgspec.structs.replace(program, entry=999), "0.1.0", "0" * 64))
    assert_one_line(mgc("inspect", forged), 2, str(forged))
    assert_one_line(mgc("graph", forged), 2, str(forged))


def test_inspect_checks_every_node_not_only_the_program_header(mgc, tmp_path, senimate_ir):
    """Nodes are decoded lazily; the views read them all, so they check them all first."""
    _, program = ir.decode_ir(senimate_ir.read_bytes())
    last = program.nodes[-1]
    bad = msgspec.structs.replace(last, transitions=[ir.Transition(999, None, 0)])
    forged = tmp_path / "forged_node.ir"
    forged.write_bytes(ir.encode_ir(msgspec.structs.replace(
        program, nodes=[*program.nodes[:-1], bad]), "0.1.0", "0" * 64))
    for command in ("inspect", "graph"):
        line = assert_one_line(mgc(command, forged), 2, str(forged))
        assert "targets index 999" in line, line


def test_graph_mermaid(mgc, senimate_ir):
    """From the IR file; the DOT test below draws from the scenario itself."""
    done = mgc("graph", "--format", "mermaid", senimate_ir)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith("flowchart")
    for node_id in SENIMATE_NODES:
        assert re.search(rf"^\s+{node_id}[\[(]", text, re.M), node_id
    # default_next: solid, no label.
    for source, target in [("greeting_introduction", "daily_life_check"), ("daily_life_check", "meal_check"),
                           ("meal_check", "health_check"), ("health_check", "general_conversation")]:
        assert re.search(rf"^\s+{source} --> {target}$", text, re.M), (source, target)
    # Conditional next_nodes targets: solid, labelled with the condition.
    assert re.search(r"^\s+general_conversation -->\|.*user_wants_to_end.*\| conversation_closure$", text, re.M)
    # Stays and global rules: dashed; global rules start from one "any node" pseudo-node.
    assert re.search(r"^\s+greeting_introduction -\.->\|\"stay .*\| greeting_introduction$", text, re.M)
    assert re.search(r"^\s+general_conversation -\.->\|\"stay\"\| general_conversation$", text, re.M)
    dashed_globals = re.findall(r"^\s+(\S+) -\.->\|\"global:(\w+)", text, re.M)
    assert sorted(dashed_globals) == [("__any_node__", "silent_close"), ("__any_node__", "user_wants_to_end")]
    assert not re.search(r"-\.->.*\| (daily_life_check|meal_check|health_check)$", text, re.M)
    # The end node is marked, and only it.
    assert re.search(r"^\s+class conversation_closure endNode$", text, re.M)
    assert re.findall(r"^\s+class (\S+) endNode$", text, re.M) == ["conversation_closure"]


def test_graph_dot(mgc):
    done = mgc("graph", "--format", "dot", SENIMATE)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith("digraph") and text.rstrip().endswith("}")
    for node_id in SENIMATE_NODES:
        assert re.search(rf'^\s+"{node_id}" \[label=', text, re.M), node_id
    edges = re.findall(r'^\s+"(\w+)" -> "(\w+)" \[(.*)\];$', text, re.M)
    solid = {(a, b) for a, b, attrs in edges if "dashed" not in attrs}
    dashed = {(a, b) for a, b, attrs in edges if "style=dashed" in attrs}
    assert {("greeting_introduction", "daily_life_check"), ("meal_check", "health_check"),
            ("health_check", "general_conversation"), ("general_conversation", "conversation_closure"),
            ("conversation_closure", "daily_life_check")} <= solid
    assert dashed == {("greeting_introduction", "greeting_introduction"),
                      ("general_conversation", "general_conversation"),
                      ("__any_node__", "conversation_closure")}
    end_lines = [line for line in text.splitlines() if "doublecircle" in line]
    assert len(end_lines) == 1 and '"conversation_closure"' in end_lines[0]


def test_schema_is_a_json_schema_of_the_scenario(mgc):
    done = mgc("schema")
    assert done.returncode == 0, done.stderr
    schema = json.loads(done.stdout)
    definitions = schema["$defs"]
    refs = re.findall(r'"\$ref": "#/\$defs/(\w+)"', done.stdout)
    assert refs and all(name in definitions for name in refs), "a $ref that does not resolve"
    root = definitions[schema["$ref"].rsplit("/", 1)[-1]]
    assert root["type"] == "object" and {"metadata", "graph"} <= set(root["required"])
    assert "graph" in root["properties"]
    assert root.get("additionalProperties") is False  # typo protection (E010) for editors too
    graph = definitions["Graph"]
    assert {"entry", "nodes"} <= set(graph["required"])
    assert definitions["NodeDef"]["properties"]["id"]["pattern"] == "^[A-Za-z_][A-Za-z0-9_]*$"


# ---- several files, and the shipped scenarios


def test_check_reports_each_of_several_files(mgc):
    golden = ROOT / "tests" / "golden"
    files = [SENIMATE, golden / "E102_unknown_entry.json", golden / "W405_unused_slot.json"]
    done = mgc("check", *files)
    assert_clean_failure(done, 1)
    assert f"{SENIMATE}: 0 errors, 0 warnings" in done.stderr
    assert f"{files[1]}: 1 error, 0 warnings" in done.stderr
    assert f"{files[2]}: 0 errors, 1 warning" in done.stderr
    assert [(Path(m["file"]).name, m["code"]) for m in heads(done.stderr)] == [
        ("E102_unknown_entry.json", "E102"), ("W405_unused_slot.json", "W405")]
    strict = mgc("check", "--strict", SENIMATE, files[2])
    assert strict.returncode == 1 and f"{files[2]}: 0 errors, 1 warning" in strict.stderr


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_scenarios_compile_strict_without_diagnostics(mgc, tmp_path, name):
    out = tmp_path / name.replace(".json", ".ir")
    done = mgc("compile", "--strict", "--format", "json", SCENARIOS / name, "-o", out)
    assert done.returncode == 0, done.stdout + done.stderr
    [report] = json_reports(done)
    assert (report["diagnostics"], report["errors"], report["warnings"]) == ([], 0, 0)
    assert out.read_bytes()[:4] == b"MGIR"


def test_null_document_is_e002(mgc, tmp_path):
    path = tmp_path / "null.json"
    path.write_text("null\n")
    checked, compiled = run_all(mgc, [("check", path), ("compile", path, "-o", tmp_path / "null.ir")])
    for done in (checked, compiled):
        assert_clean_failure(done, 1)
        assert [m["code"] for m in heads(done.stderr)] == ["E002"]
