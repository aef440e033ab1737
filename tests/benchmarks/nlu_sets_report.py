"""The report of `nlu_eval.py --sets` (SPEC 13.5): both sets per language, and the cost.

In: the files of tests/data read by `tests/support/nlu_sets.py`. Out: text on stdout, figures beside
the issue's targets (held-out intent recall >= 0.85 en / 0.90 ko at precision >= 0.97, traps
given an intent <= 2%, safety recall >= 95% per category, false alarms <= 1%, a parse p50 <=
300 us; the cost of a safety detect beside it), and slot accuracy per kind on the slot sets (issue 29). Asserts nothing.
"""

from __future__ import annotations

import os
import resource
import statistics
import time

from support import nlu_sets

TARGET_RECALL = {"en": 0.85, "ko": 0.90}


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _load_costs() -> list[str]:
    """Load time and memory of each analyser, measured as it loads here (the first use)."""
    from interpreter.understanding import morph
    lines = []
    for language in ("en", "ko"):
        before, start = _rss_mb(), time.perf_counter()
        morph.analyser(language)
        lines.append(f"  analyser {language}: load {time.perf_counter() - start:.2f} s, "
                     f"peak memory +{_rss_mb() - before:.0f} MB")
    return lines


def _intent_lines(part: str, language: str, misses: bool) -> list[str]:
    report = nlu_sets.intent_report(part, language)
    lines = [f"{part} {language}: intents (examples only) precision {report['precision']:.3f} "
             f"recall {report['recall']:.3f} on {report['support']} lines "
             f"(target recall >= {TARGET_RECALL[language]:.2f} at precision >= 0.97); "
             f"traps given an intent {report['traps_given_intent']}/{report['traps']} "
             f"= {report['trap_rate']:.1%} (target <= 2%)"]
    for name, row in report["per_intent"].items():
        found = row.get("tp", 0) + row.get("fp", 0)
        precision = row.get("tp", 0) / found if found else 1.0
        recall = row.get("tp", 0) / row["support"] if row.get("support") else 0.0
        lines.append(f"    {name:22} precision {precision:.3f} recall {recall:.3f} "
                     f"(support {row.get('support', 0)}, false {row.get('fp', 0)})")
    if misses:
        lines += [f"    miss {text!r}: expected {want}, got {got} ({conf})"
                  for text, want, got, conf in report["misses"]]
    return lines


def _safety_lines(part: str, language: str, misses: bool) -> list[str]:
    report = nlu_sets.safety_report(part, language)
    recall = ", ".join(f"{k} {v:.3f} ({report['support'][k]})" for k, v in report["recall"].items())
    lines = [f"{part} {language}: safety recall {recall} (target >= 0.95 each); false alarms "
             f"{report['false_alarms']}/{report['traps']} = {report['false_alarm_rate']:.1%} "
             "(target <= 1%)"]
    if misses:
        lines += [f"    miss {text!r}: expected {want}, got {got}"
                  for text, want, got in report["misses"]]
    return lines


def _cases(kind: str) -> list:
    parts = ("heldout", "tuning") + (("heldout_negation",) if kind == "slots" else ())
    rows = [r for part in parts for lang in ("en", "ko") for r in nlu_sets.rows(kind, part, lang)]
    return [(nlu_sets.nlu(r["scenario"]).parse, r["text"],
             nlu_sets.context(r["scenario"], r["node"])) for r in rows]


def _p50_p90(cases: list) -> tuple[float, float]:
    times = []
    for parse, text, ctx in cases:
        start = time.perf_counter()
        parse(text, ctx)
        times.append((time.perf_counter() - start) * 1e6)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9)]


def _load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def _parse_cost() -> list[str]:
    """p50/p90 of one parse over every intent line, then every slot line, the first time a
    process sees it (the analyser's cache cold for those words) and again (warm)."""
    figures = []
    for kind in ("intents", "slots"):
        cases = _cases(kind)
        for label in ("first sight", "seen again"):
            p50, p90 = _p50_p90(cases)
            figures.append(f"  parse {label} ({kind}): p50 {p50:.0f} us, p90 {p90:.0f} us over "
                           f"{len(cases)} lines (target p50 <= 300 us; {_load()})")
    return figures


def _detect_cost() -> list[str]:
    """p50/p90 of one safety `detect` over every safety line: the program's detector (the
    lexicon, the lemma rules and its patterns) first sight and seen again, and the lexicon
    alone beside it (`Detector()`, no analyser)."""
    from interpreter.understanding.safety import Detector, detector_for

    cases = [(detector_for(nlu_sets.program("support_bot" if lang == "en" else "senimate")),
              r["text"]) for part in ("heldout", "tuning") for lang in ("en", "ko")
             for r in nlu_sets.rows("safety", part, lang)]
    lexicon = Detector()
    figures = []
    for label, runs in (("with lemmas, first sight", cases), ("with lemmas, seen again", cases),
                        ("lexicon alone", [(lexicon, text) for _, text in cases])):
        times = []
        for detector, text in runs:
            start = time.perf_counter()
            detector.detect(text)
            times.append((time.perf_counter() - start) * 1e6)
        times.sort()
        figures.append(f"  safety detect {label}: p50 {statistics.median(times):.0f} us, p90 "
                       f"{times[int(len(times) * 0.9)]:.0f} us over {len(times)} lines")
    return figures


def _polarity(on: bool) -> None:
    """Korean enum readers with (on) or without (off: the word tables of before) the
    morphemes' negation scope, in every NLU built so far (`report_cost`'s A/B rounds)."""
    for nlu in _built_nlus():
        for reader in nlu._enums.values():  # a benchmark may look inside
            if not hasattr(reader, "polarity_of"):
                continue  # an older tree (`--code DIR`): both rounds are the same
            saved = reader.__dict__.setdefault("_saved_polarity", reader.polarity_of)
            reader.polarity_of = saved if on else None


def _built_nlus() -> list:
    return [nlu_sets.nlu(name) for name in nlu_sets.SCENARIO_FILES]


def report_cost(rounds: int) -> int:
    """`--cost`: the load and parse figures of `--sets`, then `rounds` alternating rounds of
    every line seen again with the Korean negation scope off (A, the word tables) and on (B,
    the morphemes), in one process, each with the load average beside it."""
    lines = _load_costs() + _parse_cost()
    cases = _cases("intents") + _cases("slots")
    for round_ in range(rounds):
        for label, on in (("A tables", False), ("B morphemes", True)):
            _polarity(on)
            p50, p90 = _p50_p90(cases)
            lines.append(f"  round {round_ + 1} {label}: p50 {p50:.0f} us, p90 {p90:.0f} us "
                         f"over {len(cases)} lines ({_load()})")
    _polarity(True)
    print("\n".join(lines))
    return 0


def report_sets(misses_of: str | None) -> int:
    lines = _load_costs() + _parse_cost() + _detect_cost()  # before the sets: words not yet seen
    for part in ("tuning", "heldout"):
        for language in ("en", "ko"):
            lines += _intent_lines(part, language, misses_of == part)
            lines += _safety_lines(part, language, misses_of == part)
    lines += slot_lines(misses_of)
    print("\n".join(lines))
    return 0


def slot_lines(misses_of: str | None) -> list[str]:
    """Issue 29 (SPEC 18): slot accuracy per kind on the slot sets, held-out apart."""
    lines = []
    for part in ("tuning", "heldout", "heldout_negation"):
        for language in ("en", "ko"):
            report = nlu_sets.slot_report(part, language)
            accuracy, support = report["accuracy"], report["support"]
            shown = [f"{k} {accuracy[k]:.3f} ({support[k]})"
                     for k in (*nlu_sets.SLOT_KINDS, "all") if k in accuracy]
            notes = [f"{k[5:]} {accuracy[k]:.3f} ({support[k]})"
                     for k in sorted(accuracy) if k.startswith("note:")]
            lines.append(f"{part} {language}: slots " + ", ".join(shown))
            lines.append("    by note: " + ", ".join(notes))
            if misses_of == part.split("_")[0]:
                lines += [f"    miss [{node}] {text!r}: expected {want}, got {got}"
                          for node, text, want, got in report["misses"]]
    return lines
