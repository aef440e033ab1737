"""Driver: runs the passes in order and places every diagnostic in the source text.

In: a scenario path. Out: a `CompileResult` with the sorted, located diagnostics and, when
there is no error, the IR bytes. Passes: read -> decode (schema) -> resolve (names, types,
conditions) -> analyse (graph) -> emit. Decode and resolve run on whatever is usable and
report everything they find; graph analysis runs only on an error-free model (a barrier:
on a broken graph it would report consequences of the errors, not new problems). Positions are computed once, at the end, and
only when there is something to report (valid input never pays for the locator).

`write_ir` writes through a temporary file in the output's folder and renames it, so a failed
compile never leaves a partial file, and a failing compile removes a stale output (only an IR
file: `remove_stale` checks the magic). An output that is the scenario itself is refused
before anything is read (`refuse_same_file`).
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from interpreter import MagoError
from interpreter.files import InputFileError, read_input
from interpreter.ir import MAGIC, Program, without_cycle_collection

from .analysis import Analysis, analyse
from .diagnostics import Diagnostic, Diagnostics
from .emit import build_program, emit
from .groups import once_per_group
from .resolve import Model, resolve
from .schema import decode_scenario

if TYPE_CHECKING:
    from .jsonpos import Locator  # imported when there is something to place


NODE_POINTER = re.compile(r"/graph/nodes/\d+")


class UsageError(MagoError):
    """A problem with how mgc was called or with the file system (exit status 2)."""


@dataclass
class CompileResult:
    path: str
    text: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    model: Model | None = None
    analysis: Analysis | None = None

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "warning")

    def failed(self, strict: bool = False) -> bool:
        return self.errors > 0 or (strict and self.warnings > 0)

    def ir_bytes(self) -> bytes:
        assert self.model is not None and self.analysis is not None and not self.errors
        with without_cycle_collection():
            return emit(self.model, self.analysis)

    def program(self) -> Program:
        assert self.model is not None and self.analysis is not None
        return build_program(self.model, self.analysis)


def read_source(path: str) -> tuple[str | None, list[Diagnostic]]:
    """The file's text, or a diagnostic when it is not UTF-8; UsageError when unreadable."""
    try:
        data = read_input(path)
    except InputFileError as error:
        raise UsageError(f"{path}: {error.reason}") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        line_start = data.rfind(b"\n", 0, error.start) + 1
        column = len(data[line_start:error.start].decode("utf-8")) + 1  # characters, not bytes
        return None, [Diagnostic("E001", f"not UTF-8 text: invalid byte 0x{data[error.start]:02x}",
                                 "", "save the file as UTF-8", line, column)]


def check_source(path: str, text: str) -> CompileResult:
    diags = Diagnostics()
    result = CompileResult(path, text)
    with without_cycle_collection():
        scenario = decode_scenario(text, diags)
        if scenario is not None:
            result.model = resolve(scenario, diags)
            if not diags.has_errors():  # graph analysis of a broken model would only cascade
                result.analysis = analyse(result.model, diags)
        diags.items = once_per_group(diags.items)
        result.diagnostics = locate(text, diags)
    return result


def check_file(path: str) -> CompileResult:
    text, problems = read_source(path)
    if text is None:
        return CompileResult(path, "", problems)
    return check_source(path, text)


def locate(text: str, diags: Diagnostics) -> list[Diagnostic]:
    """Diagnostics with line and column filled in, sorted by position."""
    if not diags.items:
        return []
    pending = [d for d in diags.items if d.line is None]
    if pending:
        from .jsonpos import JSONSyntaxError, decode_with_positions

        try:
            locator = decode_with_positions(text)[1]
        except JSONSyntaxError:
            locator = None
        placed = {id(d): _place(d, locator) for d in pending}
        diags.items = [placed.get(id(d), d) for d in diags.items]
    return diags.sorted()


def _place(d: Diagnostic, locator: Locator | None) -> Diagnostic:
    if locator is None:
        return replace(d, line=1, column=1)
    position = None
    if d.string_offset is not None:
        position = locator.string_char(d.path, d.string_offset)
    elif d.at_key:
        position = locator.key(d.path)
    elif NODE_POINTER.fullmatch(d.path):  # about a node: at its "id", the name one looks for
        position = locator.key(d.path + "/id")
    if position is None:
        position = locator.nearest(d.path)
    return replace(d, line=position[0], column=position[1])


def write_ir(data: bytes, out: str) -> None:
    """Write atomically: a temporary file in the same folder, then rename over a regular file
    (or nothing); a device, pipe or folder at `out` is never replaced."""
    target = Path(out)
    folder = target.parent if str(target.parent) else Path(".")
    if target.exists() and not target.is_file():
        raise UsageError(f"{out}: exists and is not a regular file; give an output file name like build/x.ir")
    if not folder.is_dir():
        raise UsageError(f"{out}: {folder} is not an existing folder")
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; an IR file is an ordinary file
        os.replace(tmp, target)
    except OSError as error:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise UsageError(f"{out}: cannot write: {error.strerror or error}") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def refuse_same_file(source: str, out: str) -> None:
    """`UsageError` when `out` is the scenario itself: the same file (device and inode, so
    links count too) or, before `out` exists, the same resolved path."""
    try:
        same = os.path.samefile(source, out)
    except OSError:  # one of them does not exist (yet)
        same = os.path.realpath(source) == os.path.realpath(out)
    except ValueError:  # a NUL in a name: reading or writing will say so
        same = False
    if same:
        raise UsageError(f"{out}: is the scenario itself; give an output file name like "
                         "build/x.ir (nothing was written)")


def remove_stale(out: str) -> None:
    """A failed compile must not leave an older IR that looks current. Only an IR file is
    removed (a regular file that starts with the IR magic): whatever else sits at `out`,
    a scenario given as `-o` by mistake included, is not ours."""
    try:
        if Path(out).is_file() and _starts_with_magic(out):
            Path(out).unlink()
    except (OSError, ValueError):
        pass


def _starts_with_magic(path: str) -> bool:
    with open(path, "rb") as handle:
        return handle.read(len(MAGIC)) == MAGIC
