"""Wording: the sentence the bot says for a decision (SPEC 6.2 step 8, 6.3).

`nlg` is the boundary the engine and every NLG share: the protocol, the render context and
the `template` NLG (responses with placeholders), which is also the safe sentence when an
LLM fails. The LLM NLG lives with the other LLM plug-ins in `interpreter.llm`.

May import: the core and this room. The core imports only `nlg`.
"""

ROOM = "plug-in"
BOUNDARY = ("nlg",)
