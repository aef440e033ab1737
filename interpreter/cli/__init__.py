"""The command line of `mgi` (SPEC 7): `main` the commands, `console` what each output level
prints, `streams` the standard streams that may be closed or full. `python -m interpreter.cli`
and the `mgi` script enter through `__main__`, which imports the rest only once Ctrl-C is
caught.

A tool: may import anything in the interpreter, never the compiler. This `__init__` imports
only what Python has loaded already, so that loading the command line is as short as it can
be (and a Ctrl-C cannot land there, outside `enter`), and holds `enter`, the entry of both
`mgi` and `mgc`.
"""

import importlib
import sys

ROOM = "tool"
BOUNDARY = ()


def enter(module: str) -> None:
    """Import `module` and run its `main`: a Ctrl-C that arrives while the command line is
    still loading ends the run with exit 130 and no traceback.

    msgspec is imported here, with Ctrl-C held until it has loaded: a KeyboardInterrupt
    raised inside its module initialisation (msgspec 0.23) is swallowed or leaves it broken,
    and its first encoder then crashes the process (SIGSEGV; 4 runs in 300 that were
    interrupted while importing it). Held, the press is raised once the import is over."""
    try:
        _import_msgspec()
        run = importlib.import_module(module).main
    except KeyboardInterrupt:
        sys.exit(130)
    run()


def _import_msgspec() -> None:
    """Import msgspec with a Ctrl-C held until it has loaded (`enter` says why), then raised.
    A process that ignores Ctrl-C (started in the background) goes on ignoring it."""
    import signal  # inside `enter`'s guard, like everything not loaded yet

    held = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    pressed: list[int] = []
    if held:
        signal.signal(signal.SIGINT, lambda signum, _frame: pressed.append(signum))
    try:
        import msgspec  # noqa: F401 - loaded here (`enter` says why)
    finally:
        if held:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    if pressed:
        raise KeyboardInterrupt
