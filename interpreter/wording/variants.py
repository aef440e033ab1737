"""Which sentence a reply says (SPEC 9): response variants in rotation, never the same sentence
twice in a row when there is another.

In: a chain of `Candidates`, best first (the variants of a response, a slot's question, a
common message: what the situation may say, in the order it prefers them), the session's
rotation (`DialogueState.rotation`) and the bot's previous sentence. Out: a `Choice`: the
sentence, the rotation after it, and where the sentence came from.
After: the choice is a pure function of its inputs (transcripts are stable). The sentence is
the first candidate, in chain order, that has words and differs from the previous sentence;
only when every candidate with words equals it (the chain has nothing else to say) is the
first of them said again. Within a response with several variants the candidates start
after the variant said last (variant 0 the first time), so a response that is said again
says its next variant; the rotation records the variant said, for those responses only.
"""

from __future__ import annotations

from typing import NamedTuple


class Candidates(NamedTuple):
    """One source of sentences in a chain: a response's variants (`key` `NODE:KIND`, taken in
    rotation) or fixed sentences (`key` None, taken in order)."""

    key: str | None
    texts: tuple[str, ...]  # as said: placeholders filled ("" when nothing is left to say)
    raw: tuple[str, ...] = ()  # as written, beside `texts` (a response's variants only)


class Choice(NamedTuple):
    """The sentence chosen, the rotation after it, and the candidates read to choose it."""

    text: str  # "" when no candidate has words
    rotation: dict[str, int]
    source: Candidates | None = None
    index: int = 0  # of `text` in `source.texts`
    empty: tuple[tuple[Candidates, int], ...] = ()  # passed over: nothing left to say


def rotation_order(candidates: Candidates, rotation: dict[str, int]) -> range | list[int]:
    """The indices of `candidates` in the order they are tried: a response with several
    variants starts after the one said last; anything else in order."""
    count = len(candidates.texts)
    last = rotation.get(candidates.key) if candidates.key is not None and count > 1 else None
    if last is None:
        return range(count)
    start = (last + 1) % count
    return [*range(start, count), *range(start)]


def choose(chain: list[Candidates], rotation: dict[str, int], previous: str | None,
           prefix: str = "") -> Choice:
    """The first candidate with words whose reply (`prefix` + sentence) is not `previous`;
    when there is none, the first with words (the chain has nothing else to say)."""
    first: tuple[Candidates, int] | None = None
    empty: list[tuple[Candidates, int]] = []
    for candidates in chain:
        for i in rotation_order(candidates, rotation):
            text = candidates.texts[i]
            if not text:
                empty.append((candidates, i))
                continue
            if prefix + text != previous:
                return _chosen(candidates, i, rotation, empty)
            if first is None:
                first = (candidates, i)
    if first is None:
        return Choice("", rotation, empty=tuple(empty))
    return _chosen(*first, rotation, empty)


def _chosen(candidates: Candidates, index: int, rotation: dict[str, int],
            empty: list[tuple[Candidates, int]]) -> Choice:
    if candidates.key is not None and len(candidates.texts) > 1 and \
            rotation.get(candidates.key) != index:
        rotation = {**rotation, candidates.key: index}  # a new dict: the state is not touched
    return Choice(candidates.texts[index], rotation, candidates, index, tuple(empty))
