"""Standard streams that may be closed, full or gone: what `mgc` and `mgi` print through.

In: text for stdout (the output a command exists for) or stderr (notes and errors).
Out: the text written and flushed, or an `OutputError` with one short phrase when stdout is
closed (`>&-`), full (`> /dev/full`) or fails otherwise; a note for stderr that cannot be
written is dropped (there is nowhere left to say so; the exit status still does).
After `silence_stdout`, whatever Python still holds for stdout goes to /dev/null, so the
interpreter's own flush at exit cannot print "Exception ignored" or change the exit status.
"""

from __future__ import annotations

import os
import sys

from .. import MagoError


class OutputError(MagoError):
    """Standard output cannot take what a command prints (exit 2)."""


def write_out(text: str) -> None:
    """Write and flush `text` on stdout; `OutputError` when it cannot be written."""
    stream = sys.stdout
    if stream is None:
        raise OutputError("standard output is closed")
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:  # the reader left: the caller stops quietly
        raise
    except (OSError, ValueError) as error:  # ValueError: the stream object was closed
        raise OutputError(getattr(error, "strerror", None) or str(error)) from None


def write_err(text: str) -> None:
    """Write and flush `text` on stderr, if there is a stderr that takes it."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):
        pass


def stdin_open() -> bool:
    """Whether there is a standard input to read (`<&-` leaves none)."""
    return sys.stdin is not None


def silence_stdout() -> None:
    """Point file descriptor 1 at /dev/null (after a broken pipe or a failed write)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass


def hold_closed_descriptors() -> None:
    """Occupy a closed descriptor 0, 1 or 2 with /dev/null, so that no file this process
    opens later lands there and is taken for a standard stream. `sys.stdin`, `sys.stdout`
    and `sys.stderr` stay None: the commands still see which one was closed."""
    for fd, stream in ((0, sys.stdin), (1, sys.stdout), (2, sys.stderr)):
        if stream is not None:
            continue
        try:
            os.fstat(fd)
        except OSError:
            try:
                opened = os.open(os.devnull, os.O_RDWR)
                if opened != fd:
                    os.dup2(opened, fd)
                    os.close(opened)
            except OSError:
                pass
