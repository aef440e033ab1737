"""LLM plug-ins: an NLU and an NLG over any chat-completions server.

`client` is the transport (one kept-alive connection, retries, the per-turn budget) over
`sockets` (one deadline for a whole exchange), `prompts` builds the prompts and answer
schemas from the IR, `nlu` and `nlg` are the plug-ins behind the understanding and wording
boundaries, each falling back to the rules NLU and the template sentence.

May import: the core, the understanding and wording boundaries, and this room. Nothing in
the core imports it; the command line builds these plug-ins when asked to.
"""

ROOM = "plug-in"
BOUNDARY = ()
