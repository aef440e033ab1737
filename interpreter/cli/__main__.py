"""`mgi` and `python -m interpreter.cli`: the command line, entered through `enter` so that a
Ctrl-C while it loads ends with exit 130."""

from . import enter


def main() -> None:
    enter("interpreter.cli.main")


if __name__ == "__main__":
    main()
