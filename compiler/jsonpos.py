"""Position-tracking JSON decoder: where each JSON element sits in the source text.

In: JSON text as a str (the caller has already stripped any UTF-8 BOM).
Out: the decoded value, equal to what `json.loads` returns (key order kept, the last duplicate
key wins, the same strings and numbers), and a `Locator` that turns RFC 6901 JSON pointers into
1-based (line, column) positions. Columns count code points, so a Hangul syllable or a tab is
one column. Invalid text raises `JSONSyntaxError` at the offending character with a one-line
message saying what was expected. Unlike `json.loads`, NaN and Infinity are rejected: they are
not JSON.

After: decoding is iterative (an explicit stack), so nesting depth is limited by memory, never by
the recursion limit. Decoding stores only the start and end offset of each object and array (16
bytes each, no per-value cost); the `Locator` indexes a container's members the first time a
pointer passes through it, and turns offsets into lines and columns with a table of line starts
built on first use. Decoding a 50 MB file thus costs about the memory of json.loads.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from json.decoder import scanstring as _json_scanstring

from interpreter import MagoError

_WS = re.compile(r"[ \t\n\r]*")
_PLAIN_STRING = re.compile(r'"([^"\\\x00-\x1f]*)"')
_STRING_BODY = re.compile(r'(?:[^"\\\x00-\x1f]++|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*+')
_MEMBER = re.compile(r'[ \t\n\r]*"([^"\\\x00-\x1f]*)"[ \t\n\r]*:[ \t\n\r]*')
_NEXT_MEMBER = re.compile(r'[ \t\n\r]*,[ \t\n\r]*"([^"\\\x00-\x1f]*)"[ \t\n\r]*:[ \t\n\r]*')
_NEXT_ELEMENT = re.compile(r"[ \t\n\r]*,[ \t\n\r]*")
_COLON = re.compile(r"[ \t\n\r]*:[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_AFTER = re.compile(r"[ \t\n\r]*([,\]}])")
_NEWLINE = re.compile(r"\r\n?|\n")
# Only run over text already known to be valid, so loose patterns are enough.
_ANY_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"')
_SCALAR = re.compile(r"[^,\]} \t\n\r]+")
_ESCAPE_OR_QUOTE = re.compile(
    r'"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\.'
)
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")
_BAD_TILDE = re.compile(r"~(?![01])")
_DIGITS = "0123456789"
_NUMBER_TAILS = frozenset("0123456789.eE")
_LITERALS = {"t": ("true", True), "f": ("false", False), "n": ("null", None)}


class JSONSyntaxError(MagoError):
    """Invalid JSON: `message` (one line), at 1-based `line` and `column`."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def source_lines(text: str) -> list[str]:
    """The lines of `text` as positions count them: `\r\n`, `\r` and `\n` each end a line."""
    return _NEWLINE.split(text)


class _Lines:
    """Offset -> (line, column), with line starts found once by `re` and searched by bisect."""

    def __init__(self, text: str) -> None:
        self.starts = array("q", [0])
        self.starts.extend(m.end() for m in _NEWLINE.finditer(text))

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1


def decode_with_positions(text: str) -> tuple[object, Locator]:
    """Decode `text` exactly as json.loads would (minus NaN/Infinity) and locate its elements."""
    root, root_offset, spans = _parse(text)
    return root, Locator(text, root_offset, spans)


def locate_many(text: str, pointers) -> dict:
    """{pointer: position of the value, or of its closest existing ancestor} for each pointer."""
    _, locator = decode_with_positions(text)
    return {pointer: locator.nearest(pointer) for pointer in pointers}


class _Spans:
    """Start and end offsets of every object and array, in document order (starts ascend)."""

    def __init__(self) -> None:
        self.starts = array("q")
        self.ends = array("q")

    def end_of(self, start: int) -> int:
        return self.ends[bisect_left(self.starts, start)]


class Locator:
    """Positions of the elements of one decoded document, looked up by JSON pointer.

    Decoding records only where each container starts and ends. The members of a container are
    indexed the first time a pointer goes through it (siblings that are containers are skipped
    in one step thanks to their recorded end), so lookups cost in total at most one more scan of
    the document, and usually a tiny part of one. Likewise the escapes of a string are found the
    first time a character inside it is asked for, so each further one costs a binary search.
    """

    def __init__(self, text: str, root_offset: int, spans: _Spans) -> None:
        self._text = text
        self._root = root_offset
        self._spans = spans
        # container start -> {key: (key offset, value offset)} or [element offsets]
        self._members: dict[int, dict | list] = {}
        self._strings: dict[int, tuple[array, array]] = {}  # string start -> its escapes
        self._lines: _Lines | None = None

    def value(self, pointer: str) -> tuple[int, int] | None:
        """(line, column) of the first character of the value at `pointer`, or None if absent."""
        offset, _, _ = self._walk(pointer)
        return None if offset is None else self._position(offset)

    def key(self, pointer: str) -> tuple[int, int] | None:
        """(line, column) of the opening quote of the member's key; None for elements and root."""
        offset, _, key_offset = self._walk(pointer)
        return None if offset is None or key_offset is None else self._position(key_offset)

    def nearest(self, pointer: str) -> tuple[int, int]:
        """Position of the value at `pointer` or of its deepest existing ancestor."""
        _, deepest, _ = self._walk(pointer)
        return (1, 1) if deepest is None else self._position(deepest)

    def string_char(self, pointer: str, offset: int) -> tuple[int, int] | None:
        """Position of decoded character `offset` of the string at `pointer` (len: the close)."""
        start, _, _ = self._walk(pointer)
        if start is None or self._text[start] != '"' or offset < 0:
            return None
        marks, decoded = self._string_marks(start)
        k = bisect_left(decoded, offset)  # the first escape (or the close) at or after it
        if k == len(marks):
            return None  # past the end of the string
        # Before mark k the characters are copied verbatim, one raw character each.
        return self._position(marks[k] - (decoded[k] - offset))

    def _string_marks(self, start: int) -> tuple[array, array]:
        """For the (valid) string at `start`: the raw offset of each escape and of the closing
        quote, and how many decoded characters come before each; found once per string."""
        found = self._strings.get(start)
        if found is None:
            marks, decoded = array("q"), array("q")
            raw, count = start + 1, 0
            for m in _ESCAPE_OR_QUOTE.finditer(self._text, raw):
                count += m.start() - raw  # characters copied verbatim since the last escape
                marks.append(m.start())
                decoded.append(count)
                if m.group() == '"':
                    break
                count, raw = count + 1, m.end()  # an escape (a surrogate pair too) is one character
            found = self._strings[start] = marks, decoded
        return found

    def _walk(self, pointer: str) -> tuple[int | None, int | None, int | None]:
        """(value offset or None, deepest existing offset on the path, key offset or None)."""
        segments = _split_pointer(pointer)
        if segments is None:
            return None, None, None
        offset, key_offset = self._root, None
        for segment in segments:
            members = self._members_of(offset)
            if isinstance(members, dict) and segment in members:
                key_offset, child = members[segment]
            elif isinstance(members, list) and _is_index(segment, len(members)):
                key_offset, child = None, members[int(segment)]
            else:
                return None, offset, None
            offset = child
        return offset, offset, key_offset

    def _members_of(self, start: int) -> dict | list | None:
        """The member index of the container at `start` (None for a scalar), built once."""
        if self._text[start] not in "{[":
            return None
        members = self._members.get(start)
        if members is None:
            members = self._members[start] = _index_members(self._text, start, self._spans)
        return members

    def _position(self, offset: int) -> tuple[int, int]:
        if self._lines is None:
            self._lines = _Lines(self._text)
        return self._lines.position(offset)


def _index_members(text: str, start: int, spans: _Spans) -> dict | list:
    """Offsets of the members of the (valid) container at `start`; the last duplicate key wins."""
    is_object = text[start] == "{"
    members: dict | list = {} if is_object else []
    pos = _WS.match(text, start + 1).end()
    if text[pos] in "}]":
        return members
    while True:
        if is_object:
            key, after_key = _json_scanstring(text, pos + 1)
            value = _COLON.match(text, after_key).end()
            members[key] = (pos, value)
        else:
            value = pos
            members.append(value)
        pos = _after_value(text, value, spans)
        m = _AFTER.match(text, pos)
        if m.group(1) != ",":
            return members
        pos = _WS.match(text, m.end()).end()


def _after_value(text: str, pos: int, spans: _Spans) -> int:
    """Offset just past the (valid) value at `pos`, skipping a container in one step."""
    if text[pos] in "{[":
        return spans.end_of(pos)
    if text[pos] == '"':
        return _ANY_STRING.match(text, pos).end()
    return _SCALAR.match(text, pos).end()


def _split_pointer(pointer: str) -> list[str] | None:
    """RFC 6901 reference tokens, or None for a malformed pointer (treated as absent)."""
    if pointer == "":
        return []
    if not pointer.startswith("/") or _BAD_TILDE.search(pointer):
        return None
    return [s.replace("~1", "/").replace("~0", "~") for s in pointer[1:].split("/")]


def _is_index(segment: str, length: int) -> bool:
    return _ARRAY_INDEX.fullmatch(segment) is not None and int(segment) < length


def _parse(text: str) -> tuple[object, int, _Spans]:
    """Decode `text`; return (value, root offset, spans of its containers).

    One loop with the stack in local variables, not a function per grammar rule: recursion
    would cap the depth, and a Python call per token would dominate the time on a 50 MB file.
    The common shapes (a plain string, `, "key":`) take one regex match each; anything else
    goes to a helper, which either decodes it or raises the error that explains it.
    """
    n = len(text)
    pos = _WS.match(text).end()
    if pos == n:
        raise _error(text, 0, "the file is empty")
    root_offset, root, spans, memo = pos, None, _Spans(), {}
    starts, ends = spans.starts, spans.ends
    stack: list = []  # enclosing (container, is_object, index in spans)
    container, is_object, slot, key = None, False, -1, None
    ws, plain, after = _WS.match, _PLAIN_STRING.match, _AFTER.match
    next_member, next_element = _NEXT_MEMBER.match, _NEXT_ELEMENT.match
    while True:
        c = text[pos] if pos < n else ""
        if c == '"':
            m = plain(text, pos)
            value, end = (m.group(1), m.end()) if m else _escaped_string(text, pos)
        elif c == "{" or c == "[":
            value = {} if c == "{" else []
        else:
            value, end = _scalar(text, pos)
        if container is None:
            root = value
        elif is_object:
            container[key] = value
        else:
            container.append(value)
        if c == "{" or c == "[":
            stack.append((container, is_object, slot))
            container, is_object, slot = value, c == "{", len(starts)
            starts.append(pos)
            ends.append(0)
            end = ws(text, pos + 1).end()
            if not text.startswith("}" if is_object else "]", end):
                if is_object:
                    key, pos = _member(text, end, memo)
                else:
                    pos = end
                continue
        pos = end  # a value is complete: find the next one, closing containers on the way
        while True:
            if container is None:
                _expect_end(text, pos)
                return root, root_offset, spans
            m = next_member(text, pos) if is_object else next_element(text, pos)
            if m is not None:
                if is_object:
                    k = m.group(1)
                    key = memo.setdefault(k, k)
                pos = m.end()
                break
            m = after(text, pos)
            sep = m.group(1) if m else ""
            if sep == "," and is_object:  # a key with escapes, or a broken member
                key, pos = _member(text, m.end(), memo)
                break
            if sep != ("}" if is_object else "]"):
                raise _separator_error(text, pos, is_object, starts[slot])
            ends[slot] = m.end()
            container, is_object, slot = stack.pop()
            pos = m.end()


def _member(text: str, pos: int, memo: dict) -> tuple[str, int]:
    """Parse `"key" :` from `pos`; return (key, offset of the value)."""
    m = _MEMBER.match(text, pos)
    if m is not None:
        key = m.group(1)
        return memo.setdefault(key, key), m.end()
    pos = _WS.match(text, pos).end()
    if not text.startswith('"', pos):
        raise _member_error(text, pos)
    key, end = _escaped_string(text, pos)
    colon = _COLON.match(text, end)
    if colon is None:
        raise _error(text, _WS.match(text, end).end(), "expected ':' after the member name")
    return memo.setdefault(key, key), colon.end()


def _escaped_string(text: str, pos: int) -> tuple[str, int]:
    """A string with escapes (or an invalid one) starting at the quote at `pos`."""
    try:
        # json's own unescaper (strict, as json.loads calls it) gives exactly json.loads'
        # characters, surrogate pairs and lone surrogates included.
        return _json_scanstring(text, pos + 1)
    except ValueError:
        body_end = _STRING_BODY.match(text, pos + 1).end()
        raise _string_error(text, pos, body_end) from None


def _scalar(text: str, pos: int) -> tuple[object, int]:
    """A number or literal at `pos`, or the error explaining what is there instead."""
    m = _NUMBER.match(text, pos)
    if m is None:
        literal = _LITERALS.get(text[pos : pos + 1])
        if literal is None or not text.startswith(literal[0], pos):
            raise _value_error(text, pos)
        return literal[1], pos + len(literal[0])
    end = m.end()
    if text[end : end + 1] in _NUMBER_TAILS:
        _check_number_end(text, m)
    if m.lastindex:  # a fraction or an exponent
        return float(m.group()), end
    try:
        return int(m.group()), end
    except ValueError:  # beyond sys.get_int_max_str_digits(); json.loads refuses it too
        raise _error(text, pos, "integer has too many digits") from None


def _check_number_end(text: str, m: re.Match) -> None:
    """Raise when a digit, '.' or exponent after a number means the number is malformed."""
    end, follow = m.end(), text[m.end()]
    if follow in _DIGITS:
        zero = m.start() + (text[m.start()] == "-")
        raise _error(text, zero, "leading zeros are not allowed in numbers")
    if follow == "." and m.group(1) is None:
        raise _error(text, end + 1, "expected a digit after '.'")
    if follow in "eE" and m.group(2) is None:
        digit = end + 1 + (text[end + 1 : end + 2] in ("+", "-"))
        raise _error(text, digit, "expected a digit in the exponent")


# ---- error diagnosis: cold paths that look around the offending character ----


def _error(text: str, offset: int, message: str) -> JSONSyntaxError:
    return JSONSyntaxError(message, *_Lines(text).position(offset))


def _unexpected(text: str, pos: int, expected: str) -> JSONSyntaxError:
    """`expected` at `pos`, naming what stands there when it is easy to miss."""
    if text.startswith(("/", "#"), pos):
        return _error(text, pos, "comments are not allowed in JSON")
    ch = text[pos] if pos < len(text) else ""
    if not ch:
        expected += "; found the end of the file"
    elif ch.isspace() or not ch.isprintable():  # e.g. U+3000, the full-width space of Korean IMEs
        expected += f"; found invisible character U+{ord(ch):04X}"
    return _error(text, pos, expected)


def _value_error(text: str, pos: int) -> JSONSyntaxError:
    if text.startswith(("NaN", "Infinity", "-Infinity"), pos):
        return _error(text, pos, "expected a number (NaN and Infinity are not allowed in JSON)")
    if text.startswith("-", pos):
        return _error(text, pos + 1, "expected a digit after '-'")
    if text.startswith("'", pos):
        return _error(text, pos, "expected a value (strings use double quotes, not single)")
    if text.startswith("]", pos) and text[:pos].rstrip(" \t\n\r").endswith(","):
        return _error(text, pos, "expected a value after ',' (trailing commas are not allowed)")
    what = "expected a value (object, array, string, number, true, false or null)"
    return _unexpected(text, pos, what)


def _member_error(text: str, pos: int) -> JSONSyntaxError:
    if text.startswith("}", pos):  # only reached after a ',': '{}' is handled before
        what = "expected a member name after ',' (trailing commas are not allowed)"
        return _error(text, pos, what)
    if text.startswith("'", pos):
        return _error(text, pos, "expected a member name in double quotes, not single")
    return _unexpected(text, pos, "expected a member name in double quotes")


def _separator_error(text: str, pos: int, is_object: bool, start: int) -> JSONSyntaxError:
    pos = _WS.match(text, pos).end()
    kind, closer = ("object", "}") if is_object else ("array", "]")
    if pos >= len(text):
        line, column = _Lines(text).position(start)
        message = f"unexpected end of file: the {kind} opened at {line}:{column} is not closed"
        return _error(text, pos, message)
    what = "an object member" if is_object else "an array element"
    return _unexpected(text, pos, f"expected ',' or '{closer}' after {what}")


def _string_error(text: str, quote: int, pos: int) -> JSONSyntaxError:
    ch = text[pos] if pos < len(text) else ""
    if ch in ("", "\n", "\r") or text.startswith("\\", pos) and pos + 1 == len(text):
        return _error(text, quote, "unterminated string")
    if ch == "\\":
        nxt = text[pos + 1]
        if nxt == "u":
            return _error(text, pos, "expected 4 hex digits after '\\u'")
        shown = f"'\\{nxt}'" if nxt.isprintable() else f"'\\' followed by U+{ord(nxt):04X}"
        valid = "\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX"
        return _error(text, pos, f"invalid escape {shown} in a string (valid: {valid})")
    return _error(text, pos, f"control character U+{ord(ch):04X} in a string must be escaped")


def _expect_end(text: str, pos: int) -> None:
    pos = _WS.match(text, pos).end()
    if pos != len(text):
        raise _unexpected(text, pos, "expected the end of the file after the JSON value")
