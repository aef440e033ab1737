"""`mgi` and `python -m interpreter`: the command line, imported only once Ctrl-C is caught.

The console script imports this module, which imports nothing else, so a Ctrl-C that arrives
while the command line is still loading ends the run with exit 130 and no traceback.
"""

import sys


def main() -> None:
    try:
        from .main import main as run
    except KeyboardInterrupt:
        sys.exit(130)
    run()


if __name__ == "__main__":
    main()
