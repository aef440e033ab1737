"""Reference pages made from the code, so they cannot drift from it.

Five directives, each reading the one place that defines what it shows:
- `mago-cli mgc|mgi`: every command's `--help`, from click (`mgc`) and argparse (`mgi`);
- `mago-diagnostics`: every code of `compiler.diagnostics.CATALOGUE`, with its golden case
  from `tests/golden/` as the example (a code without one fails the build);
- `mago-http-api`: every endpoint of the OpenAPI document the service serves;
- `mago-ir`: the IR format version and every record of `interpreter/ir.py` with its fields;
- `mago-errors`: the tree of `MagoError` and the public exceptions below it, from the classes.
Each directive writes Markdown (the pages are MyST) and parses it in place, titles included.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from collections.abc import Iterator

import msgspec
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
EXAMPLE_LINES = 40  # a golden scenario longer than this is shown cut, with a note


def literal(text: str, language: str = "text") -> list[str]:
    """A fenced code block of `text`, its fence longer than any run of backticks in it."""
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    return [fence + language, *text.rstrip("\n").split("\n"), fence, ""]


def _longest_backtick_run(text: str) -> int:
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return longest


def title(text: str, underline: str) -> list[str]:
    return [text, underline * max(len(text), 4), ""]


class ReferenceDirective(SphinxDirective):
    """Parses the lines that `lines()` makes as if they stood in the page."""

    def lines(self) -> Iterator[str]:
        raise NotImplementedError

    def run(self) -> list[nodes.Node]:
        holder = nodes.section()
        nested_parse_with_titles(self.state, StringList(list(self.lines()), "mago-reference"),
                                 holder)
        return holder.children


class CommandLine(ReferenceDirective):
    """`mgc` or `mgi`: the help of the group and of every command."""

    required_arguments = 1

    def lines(self) -> Iterator[str]:
        tool = self.arguments[0]
        for name, text in (_mgc_help() if tool == "mgc" else _mgi_help()):
            yield from title(name, "-")
            yield from literal(text)


def _mgc_help() -> Iterator[tuple[str, str]]:
    import click

    from compiler.cli import cli as main

    context = click.Context(main, info_name="mgc")
    yield "mgc", main.get_help(context)
    for name in sorted(main.commands):
        command = main.commands[name]
        yield f"mgc {name}", command.get_help(click.Context(command, parent=context,
                                                               info_name=name))


def _mgi_help() -> Iterator[tuple[str, str]]:
    from interpreter.cli.main import build_parser

    parser = build_parser()
    yield "mgi", parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"mgi {name}", sub.format_help()


class DiagnosticCodes(ReferenceDirective):
    """Every diagnostic code with its wording and its golden example."""

    def lines(self) -> Iterator[str]:
        from compiler.diagnostics import CATALOGUE

        for code, (severity, wording) in CATALOGUE.items():
            cases = sorted(GOLDEN.glob(f"{code}_*.json"), key=lambda case: case.stat().st_size)
            if not cases:
                raise self.error(f"{code} has no golden case in tests/golden/: add one")
            yield from title(f"{code}: {wording}", "-")
            yield f"Severity: **{severity}**. Example (``tests/golden/{cases[0].name}``):"
            yield ""
            source = cases[0].read_bytes().decode("utf-8", "replace").split("\n")
            shown = "\n".join(source[:EXAMPLE_LINES])
            yield from literal(shown, "json" if len(source) <= EXAMPLE_LINES else "text")
            if len(source) > EXAMPLE_LINES:
                yield f"(the first {EXAMPLE_LINES} of {len(source)} lines)"
                yield ""
            yield "What ``mgc check`` reports (code, line:column, JSON pointer, hint):"
            yield ""
            yield from literal(cases[0].with_suffix(".expect").read_text("utf-8"))
            if len(cases) > 1:
                more = ", ".join(f"``{case.stem}``" for case in cases[1:])
                yield f"More cases: {more}."
                yield ""


class HttpApi(ReferenceDirective):
    """Every endpoint of the OpenAPI document: summary, body, answers."""

    def lines(self) -> Iterator[str]:
        from interpreter import __version__
        from interpreter.service.openapi import document

        spec = document(__version__)
        for path, operations in spec["paths"].items():
            for method, operation in operations.items():
                yield from title(f"{method.upper()} {path}", "-")
                yield operation.get("summary", "") + "."
                yield ""
                body = operation.get("requestBody", {}).get("content", {})
                for media, content in body.items():
                    yield f"Body ({media}): ``{_schema_name(content.get('schema', {}))}``."
                    yield ""
                for status, answer in sorted(operation.get("responses", {}).items()):
                    yield f"- **{status}**: {answer.get('description', '')}"
                yield ""
        yield from title("Schemas", "-")
        for name, schema in spec.get("components", {}).get("schemas", {}).items():
            yield from title(name, "~")
            yield from literal(msgspec.json.format(msgspec.json.encode(schema)).decode(), "json")


def _schema_name(schema: dict) -> str:
    reference = schema.get("$ref", "")
    return reference.rsplit("/", 1)[-1] if reference else schema.get("type", "object")


class IrFormat(ReferenceDirective):
    """The IR's format version and every msgspec record it is made of."""

    def lines(self) -> Iterator[str]:
        from interpreter import ir

        yield f"Format version: **{ir.FORMAT_VERSION}**."
        yield ""
        records = [value for value in vars(ir).values() if isinstance(value, type) and
                   issubclass(value, msgspec.Struct)
                   and value.__module__ in (ir.__name__, "interpreter.fields")]
        for record in records:
            yield from title(record.__name__, "-")
            doc = (record.__doc__ or "").strip()
            if doc:
                yield from (line.strip() for line in doc.split("\n"))
                yield ""
            for field in msgspec.structs.fields(record):
                kind = getattr(field.type, "__name__", None) or str(field.type)
                yield f"- ``{field.name}``: ``{kind.replace('typing.', '')}``"
            yield ""


class ErrorTree(ReferenceDirective):
    """`MagoError` and every public exception below it, as a nested list (module, other
    bases, the first line of its docstring), read from the classes once every module of
    both packages is imported."""

    def lines(self) -> Iterator[str]:
        import importlib
        import pkgutil

        import compiler
        import interpreter

        for package in (compiler, interpreter):
            for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
                importlib.import_module(module.name)
        yield from _error_lines(interpreter.MagoError, 0)
        yield ""


def _error_lines(error: type, depth: int) -> Iterator[str]:
    from interpreter import MagoError

    others = [b.__name__ for b in error.__bases__
              if not issubclass(b, MagoError) and b is not Exception]
    also = f" (also ``{'``, ``'.join(others)}``)" if others else ""
    doc = " ".join(line.strip() for line in (error.__doc__ or "").strip().split("\n\n")[0]
                   .split("\n"))
    yield f"{'  ' * depth}- ``{error.__module__}.{error.__qualname__}``{also}: {doc}"
    for below in sorted(error.__subclasses__(), key=lambda e: (e.__module__, e.__qualname__)):
        if not below.__name__.startswith("_"):
            yield from _error_lines(below, depth + 1)


def setup(app: Sphinx) -> dict:
    app.add_directive("mago-cli", CommandLine)
    app.add_directive("mago-diagnostics", DiagnosticCodes)
    app.add_directive("mago-http-api", HttpApi)
    app.add_directive("mago-ir", IrFormat)
    app.add_directive("mago-errors", ErrorTree)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
