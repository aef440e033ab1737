"""Input files: read whole, with a size cap, and only from regular files.

In: a path and what it is meant to be ("scenario", "IR file", "transcript" ...).
Out: the file's bytes, or an `InputFileError` whose `reason` is one short phrase without the
path ("no such file", "larger than the 64 MiB input limit; ..."), so each caller words the
line its own way.
After: nothing was read past the cap, and nothing blocked: the file is opened non-blocking and
checked with `fstat` on the open descriptor, so a FIFO with no writer, a device such as
`/dev/zero`, a socket or a folder is refused at once instead of hanging or filling memory.

Every command that reads a whole file (scenarios, IR files, transcripts, properties files,
profiles) reads it here. The cap is 64 MiB unless `MAGO_MAX_INPUT_MB` or a command's
`--max-input-mb` says otherwise. Turns read line by line from a script or a pipe are not
whole files: they are bounded per line where they are read (`mgi run`).
"""

from __future__ import annotations

import os
import stat

from . import MagoError

DEFAULT_LIMIT_MB = 64
ENV_LIMIT = "MAGO_MAX_INPUT_MB"
LIMIT_FLAG = "--max-input-mb"
_MB = 1024 * 1024
_limit_bytes: int | None = None  # set by `set_limit`; None: the environment or the default


class InputFileError(MagoError):
    """A file that cannot be read as an input; `reason` says why, without the path."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def parse_limit(text: str | int | float, source: str) -> int:
    """Megabytes from a flag or the environment, as bytes; `ValueError` with one line."""
    try:
        megabytes = int(text)
    except (TypeError, ValueError):
        megabytes = 0
    if not 1 <= megabytes <= 1024 * 1024:
        raise ValueError(f"{source} must be a whole number of MiB from 1 to 1048576, got {text!r}")
    return megabytes * _MB


def set_limit(megabytes: str | int | None) -> None:
    """The cap for this process: from a command's `--max-input-mb` (None: keep the
    environment's or the default). `ValueError` with one line when it is not a size."""
    global _limit_bytes
    _limit_bytes = None if megabytes is None else parse_limit(megabytes, LIMIT_FLAG)


def limit() -> int:
    """The cap in bytes: the flag's, else `MAGO_MAX_INPUT_MB`'s, else 64 MiB."""
    if _limit_bytes is not None:
        return _limit_bytes
    from_env = os.environ.get(ENV_LIMIT)
    if from_env:
        return parse_limit(from_env, ENV_LIMIT)
    return DEFAULT_LIMIT_MB * _MB


def read_input(path: str | os.PathLike[str], cap: int | None = None) -> bytes:
    """The whole file at `path`, at most `cap` bytes (default: `limit()`)."""
    if cap is None:
        try:
            cap = limit()
        except ValueError as error:  # a bad MAGO_MAX_INPUT_MB
            raise InputFileError(str(error)) from None
    try:
        fd = os.open(os.fspath(path), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (TypeError, ValueError) as error:  # an int would be a descriptor; NUL in the name
        raise InputFileError(f"not a file name ({error})") from None
    except OSError as error:
        raise InputFileError(_os_reason(error)) from None
    try:
        return _read_regular(fd, cap)
    finally:
        os.close(fd)


def _read_regular(fd: int, cap: int) -> bytes:
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputFileError(f"{_kind(info.st_mode)}, not a regular file; give a file")
        if info.st_size > cap:
            raise InputFileError(too_large(cap))
        chunks: list[bytes] = []
        size = 0
        while size <= cap:  # the file may grow while it is read: never past the cap
            chunk = os.read(fd, min(cap + 1 - size, _MB))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
        raise InputFileError(too_large(cap))
    except OSError as error:
        raise InputFileError(_os_reason(error)) from None


def too_large(cap: int) -> str:
    return (f"larger than the {cap // _MB} MiB input limit; raise it with {LIMIT_FLAG} "
            f"or {ENV_LIMIT}")


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def _os_reason(error: OSError) -> str:
    if isinstance(error, FileNotFoundError):
        return "no such file"
    if isinstance(error, IsADirectoryError):
        return "a folder, not a regular file; give a file"
    return error.strerror or type(error).__name__


# --- JSON text -----------------------------------------------------------------------------


class JSONLimitError(ValueError, MagoError):
    """JSON text that is well formed but beyond what is read: nested too deeply, or a number
    with more digits than Python converts."""


def decode_json(text: str) -> tuple[object, int]:
    """(value, end) of the JSON value at the start of `text` (after leading spaces), like
    `json.JSONDecoder().raw_decode`; `json.JSONDecodeError` when malformed, `JSONLimitError`
    (one phrase) when too deep or too long a number, never a RecursionError."""
    import json

    start = len(text) - len(text.lstrip())
    try:
        return json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise JSONLimitError("nested too deeply") from None
    except ValueError as error:  # int(): "Exceeds the limit (4300 digits) ..."
        raise JSONLimitError(f"a number is too long ({str(error).partition(':')[0]})") from None
