"""Which sentence a reply says (SPEC 9): response variants in rotation, never the same sentence
twice in a row when there is another.

In: a chain of `Candidates`, best first (the variants of a response, a slot's question, a
common message: what the situation may say, in the order it prefers them; read no further
than the choice, so it may be made as it is read), the session's
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

from collections.abc import Iterable, Sequence

import msgspec


class Candidates(msgspec.Struct, frozen=True):
    """One source of sentences in a chain: a response's variants (`key` `NODE:KIND`, taken in
    rotation) or fixed sentences (`key` None, taken in order). A Struct: one is made per
    source read, on every reply."""

    key: str | None
    texts: Sequence[str]  # as said: placeholders filled ("" when nothing is left to say)
    raw: Sequence[str] = ()  # as written, beside `texts` (a response's variants only)


class Choice(msgspec.Struct, frozen=True):
    """The sentence chosen, the rotation after it, and the candidates read to choose it."""

    text: str  # "" when no candidate has words
    rotation: dict[str, int]
    source: Candidates | None = None
    index: int = 0  # of `text` in `source.texts`
    empty: tuple[tuple[Candidates, int], ...] = ()  # passed over: nothing left to say


def start_of(candidates: Candidates, rotation: dict[str, int]) -> int:
    """Where `candidates` are first tried: after the variant said last, for a response with
    several variants that was said before; else at the first."""
    count = len(candidates.texts)
    last = rotation.get(candidates.key) if count > 1 and candidates.key is not None else None
    return 0 if last is None else (last + 1) % count


def choose(chain: Iterable[Candidates], rotation: dict[str, int], previous: str | None,
           prefix: str = "") -> Choice:
    """The first candidate with words whose reply (`prefix` + sentence) is not `previous`;
    when there is none, the first with words (the chain has nothing else to say). The hot
    path of every reply: most replies are the first candidate tried."""
    first: tuple[Candidates, int] | None = None
    empty: list[tuple[Candidates, int]] = []
    for candidates in chain:
        texts = candidates.texts
        count, index = len(texts), start_of(candidates, rotation)
        for _ in range(count):
            text = texts[index]
            if not text:
                empty.append((candidates, index))
            elif prefix + text != previous:
                return _chosen(candidates, index, rotation, empty)
            elif first is None:
                first = (candidates, index)
            index = index + 1 if index + 1 < count else 0
    if first is None:
        return Choice("", rotation, empty=tuple(empty))
    return _chosen(*first, rotation, empty)


def choose_first(candidates: Candidates, rotation: dict[str, int], previous: str | None,
                 prefix: str = "") -> Choice | None:
    """`choose` of a chain whose first source is `candidates` when that source decides it
    (it has a sentence with words that is not `previous`); None when the rest of the chain
    must be read. The same loop as `choose`'s over its first source, without a chain."""
    texts = candidates.texts
    count, index = len(texts), start_of(candidates, rotation)
    empty: list[tuple[Candidates, int]] = []
    for _ in range(count):
        text = texts[index]
        if not text:
            empty.append((candidates, index))
        elif not prefix and text != previous or prefix and prefix + text != previous:
            return _chosen(candidates, index, rotation, empty)
        index = index + 1 if index + 1 < count else 0
    return None


def _chosen(candidates: Candidates, index: int, rotation: dict[str, int],
            empty: list[tuple[Candidates, int]]) -> Choice:
    key = candidates.key
    if key is not None and len(candidates.texts) > 1 and rotation.get(key) != index:
        rotation = {**rotation, key: index}  # a new dict: the state is not touched
    return Choice(candidates.texts[index], rotation, candidates, index,
                  tuple(empty) if empty else ())
