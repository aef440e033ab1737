"""Which plug-ins a command runs with: the rules NLU, the LLM plug-ins and the skills.

In: the parsed options of `mgi run`, `mgi fuzz` or `mgi serve` and a loaded `Runtime`. Out:
the NLU, NLG and skill registry to build an `Engine` with; `InputError` (one line, exit 2)
for an incomplete LLM setting. Shared by the terminal and the service, so both choose and
build their plug-ins the same way.
"""

from __future__ import annotations

import argparse
import threading
from typing import Any
from collections.abc import Callable

from .. import MagoError


class InputError(MagoError):
    """Bad usage or input: one line on stderr, exit 2."""


class QuickParser(argparse.ArgumentParser):
    """argparse's parser, save that what `add_argument` (checking a metavar) and
    `add_subparsers` (spelling the commands' `prog`, "mgi") format gets a help formatter of
    a fixed width: argparse's own asks `shutil` for the terminal's (importing it, with bz2 and
    lzma) each time. Help, usage and errors are formatted as argparse does."""

    _building = False

    def add_argument(self, *args: Any, **kwargs: Any) -> Any:
        return self._built(super().add_argument, *args, **kwargs)

    def add_subparsers(self, **kwargs: Any) -> Any:
        return self._built(super().add_subparsers, **kwargs)

    def _built(self, build: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        self._building = True
        try:
            return build(*args, **kwargs)
        finally:
            self._building = False

    def _get_formatter(self) -> argparse.HelpFormatter:
        if self._building:
            return self.formatter_class(prog=self.prog, width=80)
        return super()._get_formatter()


def add_llm_options(parser: argparse.ArgumentParser) -> None:
    """The options that say where the LLM server is (each defaults to its $MAGO_LLM_*)."""
    parser.add_argument("--llm-url", metavar="URL",
                        help="chat-completions base URL, e.g. http://localhost:11434/v1 "
                             "(default: $MAGO_LLM_URL)")
    parser.add_argument("--llm-model", metavar="NAME",
                        help="model name (default: $MAGO_LLM_MODEL)")
    parser.add_argument("--llm-api-key", metavar="KEY",
                        help="bearer token (default: $MAGO_LLM_API_KEY; prefer the environment)")
    parser.add_argument("--llm-timeout", metavar="SECONDS",
                        help="time limit of one request, from connecting to the answer's last "
                             "byte (default: $MAGO_LLM_TIMEOUT or 10)")
    parser.add_argument("--llm-budget", metavar="SECONDS",
                        help="time a turn may spend on LLM calls (default: $MAGO_LLM_BUDGET or 15)")


PRELOAD_DELAY_SECONDS = 0.3


class LazyRulesNLU:
    """The rules NLU, built on its first parse: the opening is printed without waiting for it."""

    name = "rules"

    def __init__(self, program: Any):
        self.program = program
        self._nlu = None
        from ..understanding.morph import preload_for  # standard library only

        # The analyser loads in the background and the first parse joins it; it starts a
        # moment later, so that loading it (which holds the interpreter lock) does not
        # delay the opening line (SPEC 13.1: `mgi run` prints it within 150 ms).
        timer = threading.Timer(PRELOAD_DELAY_SECONDS, preload_for, (program,))
        timer.daemon = True
        timer.start()

    def parse(self, text: str, context: Any) -> Any:
        if self._nlu is None:
            from ..understanding.rules import RulesNLU

            self._nlu = RulesNLU(self.program)
        return self._nlu.parse(text, context)


def llm_settings(args: argparse.Namespace) -> Any:
    """`LLMSettings` when `--nlu llm` or `--nlg llm` asks for a server, else None; an
    incomplete or malformed setting is one `InputError` line."""
    wanted = [f"--{kind} llm" for kind, name in (("nlu", args.nlu_name), ("nlg", args.nlg_name))
              if name == "llm"]
    if not wanted:
        return None
    from ..llm.client import LLMConfigError, settings_from

    try:
        return settings_from(args.llm_url, args.llm_model, args.llm_api_key, args.llm_timeout,
                             args.llm_budget, needed_by=" and ".join(wanted))
    except LLMConfigError as error:
        raise InputError(str(error)) from None


def llm_plugins(settings: Any, runtime: Any, nlu_name: str, nlg_name: str,
                nlu: Any) -> tuple[Any, Any, Any]:
    """(NLU, NLG or None for the template, journal or None) for the chosen plug-ins; the LLM
    NLU falls back to `nlu` (the rules NLU)."""
    if settings is None:
        return nlu, None, None
    from ..llm.client import ChatClient, LLMJournal
    from ..llm.nlg import LLMNLG
    from ..llm.nlu import LLMNLU

    journal = LLMJournal()
    client = ChatClient(settings, journal)
    return (LLMNLU(client, runtime.program, nlu) if nlu_name == "llm" else nlu,
            LLMNLG(client) if nlg_name == "llm" else None, journal)


def skill_registry(runtime: Any, warn: Callable[[str], None], webhooks: str = "off",
                   guard: Callable[[str], str | None] | None = None,
                   stand_ins: bool = False) -> Any:
    """Built-in skills, plus installed plug-ins only when the scenario has a skill node:
    looking for plug-ins scans every installed package, which a start-up need not pay for.
    The scenario's webhooks are called only when `webhooks` is "live" (SPEC 15); a missing
    `${NAME}` or a host `MAGO_WEBHOOK_HOSTS` does not list is an `InputError`; a declared
    python skill not installed is a warning (SPEC 14.7). `stand_ins` (`mgi fuzz`): webhooks
    that are off are `WebhookStandIn`s, which the fuzzer lets answer in some conversations."""
    from .. import ir
    from ..skills.registry import SkillRegistry

    registry = SkillRegistry.default(
        discover=ir.EXECUTOR_SKILL in ir.node_executors(runtime.program))  # nodes stay encoded
    for problem in registry.problems:
        warn(f"mgi: warning: {problem}")
    if not runtime.program.skills:
        return registry
    from ..skills.webhook import WebhookConfigError, missing_python_skills, webhook_skills

    for line in missing_python_skills(runtime.program, registry.names()):
        warn(line)
    try:
        return registry.with_skills(webhook_skills(runtime.program, webhooks == "live",
                                                   guard=guard, stand_ins=stand_ins))
    except WebhookConfigError as error:
        raise InputError(str(error)) from None


def add_webhooks_option(command: argparse.ArgumentParser) -> None:
    """`--webhooks off|live`: a run, a test or a fuzz calls no real webhook unless asked."""
    command.add_argument("--webhooks", choices=("off", "live"), default="off",
                         help='"live" calls the scenario\'s webhooks; "off" (the default) '
                              'fails each run with "webhooks off" unless a transcript '
                              "scripts it with a skill: line")
