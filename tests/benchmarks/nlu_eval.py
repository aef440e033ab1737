"""The rules NLU on the labelled set: intent precision and recall (per intent and overall),
dialogue-act accuracy, slot accuracy, and the cost of one parse.

Run from the repository root:

    .venv/bin/python tests/benchmarks/nlu_eval.py [--lines START:END] [--misses] [--json]
    .venv/bin/python tests/benchmarks/nlu_eval.py --sweep [--lines START:END]
    .venv/bin/python tests/benchmarks/nlu_eval.py --code DIR    # another tree's interpreter
    .venv/bin/python tests/benchmarks/nlu_eval.py --sets [--misses PART]  # SPEC 13.5
    .venv/bin/python tests/benchmarks/nlu_eval.py --slots [--set-misses PART]  # issue 29
    .venv/bin/python tests/benchmarks/nlu_eval.py --cost [--rounds N] [--code DIR]  # its cost

`--sets` prints, per language, the tuning and the frozen held-out sets of tests/data
(`nlu_sets`: the shipped scenarios, intent patterns removed): per intent precision and recall,
the overall figures, out-of-domain and near-miss traps given an intent, safety recall per
category and false alarms on the traps, beside the issue's targets; then the cost of a rules
NLU parse with morphology (p50 and p90 over every line of both sets, first sight and seen
again), the load time and memory of each analyser. `--misses heldout` lists what a set got
wrong (never tune on the held-out list). `--sets` ends, and `--slots` prints only, the slot
accuracy per kind (enum, boolean, free text, typed) and per note (negated, declined,
excluded...) of the slot sets `{tuning,heldout}_slots_{en,ko}.jsonl`: a line is right when
what a turn at its node stores (the NLU's values, with the engine's yes/no and decline
values) equals its label; `--code DIR` reads DIR's scenarios too. `--cost` prints only the
load and parse cost (over the intent lines, then the slot lines), then `--rounds` (default 5)
alternating rounds in one process of every line seen again with Korean negation read by the
word tables (A) and by Kiwi's morphemes (B), each figure beside the load average.

The labelled set (`--labelled`, default tests/data/nlu_labelled.jsonl), the fixture programs
it is said against and the scoring are those of `tests/understanding/test_nlu_rules.py` (`load_labelled`,
`evaluate`), so these are the figures that test asserts. `--lines :312` is the original set,
`--lines 312:` the lines added with the similarity tier. `--sweep` prints intent precision
and recall for every similarity threshold (`intents.MIN_SIMILARITY`) from 0.20 to 0.70, as it
was calibrated. `--code DIR` imports the `interpreter` package from DIR (a copy of an older
tree, to measure the figures before a change on the same labelled set).

Intent figures: an utterance labelled with intent I and read as I is a true positive of I;
read as another intent or none, a false negative of I; an utterance read as I but labelled
otherwise (another intent or none) a false positive of I. Overall precision and recall are
micro averages (totals over all intents). Act accuracy: the act equals the label. Slot
accuracy: the whole slot dict equals the label (free text compared without spacing and
punctuation).

Cost: every labelled utterance parsed in its context, `--rounds` times (default 20); the
figure is the fastest round divided by the number of parses (the median round beside it),
in microseconds per parse. The NLUs are built before timing (they are built once per
scenario). Asserts nothing; the exit status is 0.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def time_parses(labelled: list, nlus: dict, rounds: int) -> tuple[float, float]:
    """(fastest, median) microseconds per parse over `rounds` passes of the labelled set."""
    cases = [(nlus[case.scenario].parse, case.text, case.context) for case in labelled]
    for parse, text, ctx in cases:  # warm-up: first-use caches, lazy imports
        parse(text, ctx)
    per_round = []
    for _ in range(rounds):
        start = time.perf_counter()
        for parse, text, ctx in cases:
            parse(text, ctx)
        per_round.append((time.perf_counter() - start) / len(cases) * 1e6)
    return min(per_round), statistics.median(per_round)


def sweep(t, labelled: list) -> int:
    """Print intent precision and recall over the similarity threshold, as it was calibrated:
    the threshold is one constant for every intent and language."""
    try:  # where the threshold is read (`rules` in trees before the split)
        from interpreter.understanding import intents as rules
    except ImportError:
        from interpreter.understanding import rules  # type: ignore[no-redef]

    chosen = rules.MIN_SIMILARITY
    print(f"{'threshold':>9} {'precision':>9} {'recall':>7} {'tp':>4} {'fp':>4} {'fn':>4}")
    try:
        for step in range(20, 71):
            rules.MIN_SIMILARITY = step / 100
            report = t.evaluate(labelled, t.NLUS)
            totals = {k: sum(r[k] for r in report["per_intent"].values())
                      for k in ("tp", "fp", "fn")}
            mark = "  <- intents.MIN_SIMILARITY" if abs(step / 100 - chosen) < 1e-9 else ""
            print(f"{step / 100:9.2f} {report['intent_precision']:9.3f} "
                  f"{report['intent_recall']:7.3f} {totals['tp']:4d} {totals['fp']:4d} "
                  f"{totals['fn']:4d}{mark}")
    finally:
        rules.MIN_SIMILARITY = chosen
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labelled", type=Path, default=TESTS / "data" / "nlu_labelled.jsonl")
    parser.add_argument("--lines", default=":", metavar="START:END",
                        help="only these lines of the labelled set, as a Python slice "
                             "(e.g. :312, 312:)")
    parser.add_argument("--code", type=Path, metavar="DIR",
                        help="import the `interpreter` package from DIR (e.g. a copy of an "
                             "older tree) instead of this repository's")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--misses", action="store_true", help="list every utterance read wrong")
    parser.add_argument("--sweep", action="store_true",
                        help="intent precision and recall for each similarity threshold "
                             "(intents.MIN_SIMILARITY) from 0.20 to 0.70, instead of the report")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of text")
    parser.add_argument("--sets", action="store_true",
                        help="the tuning and held-out sets of tests/data, per language")
    parser.add_argument("--set-misses", metavar="PART", choices=("tuning", "heldout"),
                        help="with --sets or --slots, list what that set got wrong")
    parser.add_argument("--cost", action="store_true",
                        help="only the parse cost of --sets, then A/B rounds of the Korean "
                             "negation scope off and on (--rounds, default 5)")
    parser.add_argument("--slots", action="store_true",
                        help="only the slot figures per kind of the slot sets (issue 29)")
    args = parser.parse_args(argv)
    sys.path[:0] = [str(args.code or TESTS.parent), str(TESTS), str(TESTS / "understanding")]
    if args.sets:
        from nlu_sets_report import report_sets
        return report_sets(args.set_misses)
    if args.cost:
        from nlu_sets_report import report_cost
        return report_cost(args.rounds if args.rounds != 20 else 5)
    if args.slots:
        from nlu_sets_report import slot_lines
        print("\n".join(slot_lines(args.set_misses)))
        return 0
    import test_nlu_rules as t  # the fixture programs, the loader and the scoring

    start, _, end = args.lines.partition(":")
    labelled = t.load_labelled(args.labelled)[slice(int(start) if start else None,
                                                    int(end) if end else None)]
    if args.sweep:
        return sweep(t, labelled)
    report = t.evaluate(labelled, t.NLUS)
    fastest, median = time_parses(labelled, t.NLUS, max(args.rounds, 1))
    report["us_per_parse"] = {"fastest": fastest, "median": median}
    if args.json:
        if not args.misses:
            report.pop("misses")
        print(json.dumps(report, ensure_ascii=False, indent=1))
        return 0
    lines = "" if args.lines == ":" else f" lines {args.lines}"
    print(f"rules NLU on {args.labelled}{lines} ({report['n']} utterances, "
          f"{sum(r['support'] for r in report['per_intent'].values())} with an intent)")
    print(f"{'intent':24} {'precision':>9} {'recall':>7} {'support':>8} {'tp':>4} {'fp':>4} "
          f"{'fn':>4}")
    for name, row in report["per_intent"].items():
        print(f"{name:24} {row['precision']:9.3f} {row['recall']:7.3f} {row['support']:8d} "
              f"{row['tp']:4d} {row['fp']:4d} {row['fn']:4d}")
    print(f"{'overall (micro)':24} {report['intent_precision']:9.3f} "
          f"{report['intent_recall']:7.3f}")
    print(f"intent accuracy {report['intent_accuracy']:.3f} (false alarms on utterances with "
          f"no intent: {report['intent_false_alarms']})")
    print(f"act accuracy    {report['act_accuracy']:.3f}")
    print(f"slot accuracy   {report['slot_accuracy']:.3f} (slot values: precision "
          f"{report['slot_values']['precision']:.3f}, recall "
          f"{report['slot_values']['recall']:.3f})")
    print(f"cost            {fastest:.1f} us per parse (median round {median:.1f} us)")
    if args.misses:
        for miss in report["misses"]:
            print(f"  miss [{miss['node']}] {miss['text']!r}: expected {miss['expected']}, "
                  f"got {miss['got']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
