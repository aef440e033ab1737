"""Views of a program for people: its graph as Mermaid and DOT text (`graph`), drawn by `mgc
graph` and by the service's `GET /dm/v1/scenarios/{name}/graph` (SPEC 12). A tool: it reads
an `ir.Program` and writes text; nothing of the turn imports it."""

ROOM = "tool"
BOUNDARY = ()
