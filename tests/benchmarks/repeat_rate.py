"""How often the bot repeats itself, and how often it walks into a step it already knows the
answer to: random conversations through `mgi run --json` (rules NLU, template NLG).

Run from the repository root:

    .venv/bin/python tests/benchmarks/repeat_rate.py [--conversations N] [--turns N] [--seed N]
    .venv/bin/python tests/benchmarks/repeat_rate.py --before DIR   # figures of an older tree too

`--before DIR` also runs DIR's own `mgc`, `mgi` and `scenarios/` (a copy of an older tree,
e.g. `mkdir /tmp/base && git archive REV | tar -x -C /tmp/base`) on the same conversations,
and prints its figures beside these ones.

A conversation is a script of up to `--turns` user lines drawn with `random.Random(seed)`
from the scenario's own words (intent examples, slot synonyms and members, values of each
slot type, some out of range) and a fixed pool of everyday Korean and English replies, short
answers, fillers, questions and silence; it runs as one `mgi run --json --script FILE`
process until the session completes or the script ends. The scripts depend only on the seed
and on this tree's scenario files, so both trees hear the same users.

Figures per scenario:
- repeats: replies word for word the reply before them, over the replies that have one (the
  opening has none);
- known asks: moves into a node that asks only what is already known (its collect slots all
  filled, `properties.asks_what_it_knows`, the rule of `mgi fuzz`'s `no_known_ask`), over the
  moves into task nodes.
Asserts nothing; the exit status is 0.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

EVERYDAY = (
    "네", "응", "그래요", "좋아요", "아니요", "아니", "아녀", "몰라", "글쎄요", "음", "어",
    "고마워요", "감사합니다", "뭐라고요?", "그게 뭐예요?", "다시 말해 줄래요?", "안녕하세요",
    "오늘 날씨가 좋네요", "손주가 다음 주에 온대요", "텔레비전에서 노래자랑을 봤어요",
    "그냥 그래요", "잘 모르겠어요", "별일 없어요", "옛날 생각이 나네요", "딸이 전화했어요",
    "텃밭에 상추를 심었어요", "경로당에 다녀왔어요", "ㅋㅋㅋ", "asdf", "...", "흠",
    "yes", "no", "thanks", "what?", "I don't know", "hello",
)
SILENCE_SHARE, SCENARIO_SHARE = 0.12, 0.45  # the rest: EVERYDAY
TYPED_VALUES = {
    "integer": ("3", "7", "10", "1950", "1988", "15", "2100", "열"),
    "number": ("0.5", "3", "많이"),
    "email": ("kim@example.com", "lee.minsu@test.kr", "kim@", "이메일 없어요"),
    "string": ("홍길동", "김영희", "무릎", "허리가 결려요", "2025-03-14", "3월 14일", "다음 주"),
    "boolean": ("네", "아니요"),
}


def scenario_words(scenario: dict) -> tuple[list[str], list[str]]:
    """(what users say about the scenario's slots, the intents' examples)."""
    slots: list[str] = []
    for slot in scenario.get("slots", {}).values():
        slots += [phrase for phrases in slot.get("synonyms", {}).values() for phrase in phrases]
        slots += slot.get("values", [])
        slots += TYPED_VALUES.get(slot.get("value_type"), ())
    intents = [e for intent in scenario.get("intents", {}).values()
               for e in intent.get("examples", [])]
    return sorted(set(slots)), intents


def scripts(scenario: dict, count: int, turns: int, seed: int) -> list[list[str]]:
    """`count` scripts of `turns` lines each, the same for the same seed and scenario."""
    rng = random.Random(f"{seed}:{scenario['metadata']['name']}")
    slots, intents = scenario_words(scenario)
    own = slots * 4 + intents  # an intent example (often an end request) now and then
    out = []
    for _ in range(count):
        lines = []
        for _ in range(turns):
            roll = rng.random()
            pool = ("",) if roll < SILENCE_SHARE else \
                own if roll < SILENCE_SHARE + SCENARIO_SHARE else EVERYDAY
            lines.append(rng.choice(pool))
        out.append(lines)
    return out


class Tree:
    """A source tree whose `mgc` and `mgi` run with this Python (its packages on the path)."""

    def __init__(self, root: Path, work: Path):
        self.root, self.work = root, work
        self.env = {**os.environ, "PYTHONPATH": str(root)}

    def compile(self, name: str) -> Path | None:
        source = self.root / "scenarios" / f"{name}.json"
        if not source.exists():
            return None
        out = self.work / f"{name}.ir"
        subprocess.run([sys.executable, "-m", "compiler", "compile", str(source), "-o", str(out)],
                       cwd=self.root, env=self.env, check=True, capture_output=True)
        return out

    def run(self, ir_path: Path, lines: list[str], index: int) -> list[dict]:
        script = self.work / f"{ir_path.stem}.{index}.jsonl"
        script.write_text("".join(json.dumps({"user": t}, ensure_ascii=False) + "\n"
                                  for t in lines), "utf-8")
        done = subprocess.run([sys.executable, "-m", "interpreter.cli", "run", str(ir_path),
                               "--json", "--script", str(script)],
                              cwd=self.root, env=self.env, capture_output=True, text=True)
        return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def is_move(line: dict) -> bool:
    """Whether a `mgi run --json` line moved (a re-entry of the same node included)."""
    reason, target = line["reason"], line["next_node"]
    if target is None:
        return False
    if reason.startswith("safety:"):
        return target != line["node"]
    return reason.startswith(("next_nodes[", "default_next", "global", "request:", "skip:"))


def measure(runtime, conversations: list[list[dict]]) -> dict:
    """Replies, repeats, task-node entries and known asks over the conversations."""
    from interpreter import ir
    from interpreter.fuzz.properties import asks_what_it_knows

    counts = {"replies": 0, "repeats": 0, "entries": 0, "known": 0}
    for lines in conversations:
        said = [line["response"] for line in lines if line["response"] is not None]
        counts["replies"] += max(len(said) - 1, 0)
        counts["repeats"] += sum(1 for a, b in zip(said, said[1:]) if a == b)
        for line in lines:
            if not is_move(line):
                continue
            table = runtime.node_named(line["next_node"])
            if table.executor == ir.EXECUTOR_TASK:
                counts["entries"] += 1
                counts["known"] += asks_what_it_knows(table, line["slots"])
    return counts


def play(tree: Tree, name: str, plays: list[list[str]], jobs: int) -> list[list[dict]] | None:
    ir_path = tree.compile(name)
    if ir_path is None:
        return None
    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(lambda item: tree.run(ir_path, item[1], item[0]), enumerate(plays)))


def share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def columns(counts: dict) -> list[str]:
    """One tree's figures: replies, repeats, known asks."""
    return [str(counts["replies"]),
            f"{share(counts['repeats'], counts['replies'])} ({counts['repeats']})",
            f"{share(counts['known'], counts['entries'])} ({counts['known']}/{counts['entries']})"]


def table(rows: list[tuple[str, dict]], labels: list[str]) -> str:
    """The figures of every scenario, one column per tree and figure (`before`, `after`)."""
    head = ["scenario"] + [f"{what} ({label})" for what in ("replies", "repeats", "known asks")
                           for label in labels]
    body = [[name] + [columns(figures[label])[i] if label in figures else "-"
                      for i in range(3) for label in labels] for name, figures in rows]
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip()
                     for line in [head, *body])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--before", metavar="DIR", help="an older tree to measure beside this one")
    parser.add_argument("--scenario", action="append", help="only this scenario (repeatable)")
    args = parser.parse_args(argv)
    from interpreter.loader import load_program

    names = args.scenario or sorted(p.stem for p in (ROOT / "scenarios").glob("*.json"))
    print(f"{args.conversations} conversations of up to {args.turns} turns per scenario, "
          f"seed {args.seed}, rules NLU, template NLG (mgi run --json)")
    rows = []
    with tempfile.TemporaryDirectory() as work:
        trees = {"after": Tree(ROOT, Path(work) / "after")}
        if args.before:
            trees = {"before": Tree(Path(args.before).resolve(), Path(work) / "before"), **trees}
        for tree in trees.values():
            tree.work.mkdir()
        for name in names:
            scenario = json.loads((ROOT / "scenarios" / f"{name}.json").read_text("utf-8"))
            plays = scripts(scenario, args.conversations, args.turns, args.seed)
            runtime = load_program(str(trees["after"].compile(name)))
            figures = {}
            for label, tree in trees.items():
                played = play(tree, name, plays, args.jobs)
                if played is not None:
                    figures[label] = measure(runtime, played)
            rows.append((name, figures))
    print(table(rows, list(trees)))
    print("repeats: replies word for word the reply before them; known asks: moves into a "
          "task node whose collect slots are all filled, of the moves into task nodes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
