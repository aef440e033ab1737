"""`mgc` and `python -m compiler`: the command line, entered through `interpreter.cli.enter`
so that a Ctrl-C while it loads ends with exit 130."""

from interpreter.cli import enter


def main() -> None:
    enter("compiler.cli")


if __name__ == "__main__":
    main()
