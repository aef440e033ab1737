"""`mgc`: the command line of the compiler.

Exit status: 0 no errors (warnings allowed), 1 errors (or warnings under `--strict`),
2 usage or I/O problems. Every failure is one line on stderr, never a traceback.
"""

from __future__ import annotations

import gc
import json
import sys

import click

from interpreter import files, ir

from interpreter.cli import streams

from . import __version__
from .driver import (CompileResult, UsageError, check_file, refuse_same_file, remove_stale,
                     write_ir)
from .render import dot, inspect_data, inspect_text, mermaid
from .report import render_human, render_json, summary
from .schema import scenario_json_schema

FORMAT = click.option("--format", "fmt", type=click.Choice(["human", "json"]), default="human",
                      show_default=True, help="Diagnostics for people or for machines.")
STRICT = click.option("--strict", is_flag=True, help="Treat warnings as errors.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mgc")
def cli() -> None:
    """Compile and check Mago dialogue scenarios."""


def limit_option(command):
    """`--max-input-mb`: the size cap of every file the command reads (`interpreter.files`)."""
    def apply(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
        try:
            files.set_limit(value)
        except ValueError as error:
            raise click.BadParameter(str(error).removeprefix(f"{files.LIMIT_FLAG} "), ctx) from None

    return click.option(files.LIMIT_FLAG, "max_input_mb", metavar="MIB", expose_value=False,
                        is_eager=True, callback=apply,
                        help=f"Refuse input files larger than this (default: ${files.ENV_LIMIT} "
                             f"or {files.DEFAULT_LIMIT_MB}).")(command)


def say(text: str, err: bool = False, nl: bool = True) -> None:
    """Print on stdout (or stderr); a closed or full stdout is `OutputError` (exit 2)."""
    text = text + "\n" if nl else text
    if err:
        streams.write_err(text)
    else:
        streams.write_out(text)


def report(results: list[CompileResult], fmt: str, quiet_ok: bool = False) -> None:
    if fmt == "json":
        say(render_json(results))
        return
    for result in results:
        if result.diagnostics:
            say(render_human(result.path, result.text, result.diagnostics), err=True)
        if result.diagnostics or not quiet_ok:
            say(summary(result.path, result.errors, result.warnings), err=True)


@cli.command("compile")
@limit_option
@click.argument("scenario")
@click.option("-o", "--output", "out", help="IR file to write (e.g. build/senimate.ir).")
@click.option("--validate-only", is_flag=True, help="Check only; write nothing (same as `mgc check`).")
@STRICT
@FORMAT
def compile_command(scenario: str, out: str | None, validate_only: bool, strict: bool, fmt: str) -> None:
    """Check SCENARIO and write its IR."""
    if not validate_only and not out:
        raise click.UsageError("missing -o/--output (or use --validate-only)")
    if out and not validate_only:
        refuse_same_file(scenario, out)
    result = check_file(scenario)
    report([result], fmt, quiet_ok=True)
    if result.failed(strict):
        if out and not validate_only:
            remove_stale(out)
        sys.exit(1)
    if not validate_only:
        write_ir(result.ir_bytes(), out)
        if fmt == "human":
            say(f"wrote {out}", err=True)


@cli.command("check")
@limit_option
@click.argument("scenarios", nargs=-1, required=True)
@STRICT
@FORMAT
def check_command(scenarios: tuple[str, ...], strict: bool, fmt: str) -> None:
    """Check one or more scenarios; write nothing."""
    results, unreadable = [], []
    for path in scenarios:
        try:
            results.append(check_file(path))
        except UsageError as error:  # report it, and still check the others
            unreadable.append(str(error))
    report(results, fmt)
    for message in unreadable:
        say(f"mgc: {message}", err=True)
    sys.exit(2 if unreadable else 1 if any(r.failed(strict) for r in results) else 0)


def load_program(path: str) -> tuple[ir.Envelope, ir.Program]:
    """A program from an IR file, or from a scenario compiled on the fly (no errors allowed)."""
    if path.endswith(".json"):
        result = check_file(path)
        if result.errors:
            report([result], "human")
            sys.exit(1)
        program = result.program()
        return ir.Envelope(__version__, "", "", b""), program
    try:
        return ir.decode_ir(files.read_input(path), verify=True)  # views read every node
    except ir.IRError as error:
        raise UsageError(f"{path}: {error}") from None
    except files.InputFileError as error:
        raise UsageError(f"{path}: cannot read: {error.reason}") from None


@cli.command("inspect")
@limit_option
@click.argument("ir_file")
@FORMAT
def inspect_command(ir_file: str, fmt: str) -> None:
    """Summarise a compiled IR file: hash, nodes, edges, end nodes, executors."""
    envelope, program = load_program(ir_file)
    data = inspect_data(envelope, program)
    say(json.dumps(data, ensure_ascii=False, indent=2) if fmt == "json" else inspect_text(data), nl=False)


@cli.command("graph")
@limit_option
@click.argument("source")
@click.option("--format", "fmt", type=click.Choice(["mermaid", "dot"]), default="mermaid", show_default=True)
def graph_command(source: str, fmt: str) -> None:
    """Draw a scenario (.json) or IR file as a Mermaid or DOT graph."""
    _, program = load_program(source)
    say(mermaid(program) if fmt == "mermaid" else dot(program), nl=False)


@cli.command("schema")
def schema_command() -> None:
    """Print the JSON Schema of the scenario format (for editors)."""
    say(json.dumps(scenario_json_schema(), ensure_ascii=False, indent=2))


def main(argv: list[str] | None = None) -> None:
    """Entry point: click's own errors exit 2; ours are one line, never a traceback."""
    gc.disable()  # a short-lived process: the cycle collector would only rescan live objects
    try:
        streams.hold_closed_descriptors()
        cli.main(args=argv, prog_name="mgc", standalone_mode=False)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except click.ClickException as error:
        error.show()
        sys.exit(2)
    except click.exceptions.Abort:
        fail("aborted")
    except UsageError as error:
        fail(str(error))
    except KeyboardInterrupt:
        streams.silence_stdout()
        sys.exit(130)
    except BrokenPipeError:
        streams.silence_stdout()
        sys.exit(0)
    except streams.OutputError as error:
        streams.silence_stdout()
        fail(f"cannot write the output: {error}")
    except Exception as error:  # noqa: BLE001 - the last line of defence: never a traceback
        fail(f"internal error: {type(error).__name__}: {error} (please report this)")
    sys.exit(0)


def fail(message: str) -> None:
    """One line on stderr (where there is one), exit 2."""
    streams.write_err(f"mgc: {message}\n")
    sys.exit(2)


if __name__ == "__main__":
    main()
