"""The command line of `mgi` (SPEC 7): `main` the commands, `console` what each output level
prints, `streams` the standard streams that may be closed or full. `python -m interpreter.cli`
and the `mgi` script enter through `__main__`, which imports the rest only once Ctrl-C is
caught.

A tool: may import anything in the interpreter, never the compiler. This `__init__` imports
nothing, so that loading the command line is as short as it can be.
"""

ROOM = "tool"
BOUNDARY = ()
