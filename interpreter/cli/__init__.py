"""The command line of `mgi` (SPEC 7): `main` the commands, `console` what each output level
prints, `streams` the standard streams that may be closed or full. `python -m interpreter.cli`
and the `mgi` script enter through `__main__`, which imports the rest only once Ctrl-C is
caught.

A tool: may import anything in the interpreter, never the compiler. This `__init__` imports
only what Python has loaded already, so that loading the command line is as short as it can
be, and holds `enter`, the entry of both `mgi` and `mgc`.
"""

import importlib
import sys

ROOM = "tool"
BOUNDARY = ()


def enter(module: str) -> None:
    """Import `module` and run its `main`: a Ctrl-C that arrives while the command line is
    still loading ends the run with exit 130 and no traceback."""
    try:
        run = importlib.import_module(module).main
    except KeyboardInterrupt:
        sys.exit(130)
    run()
