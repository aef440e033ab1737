"""The service: `mgi serve`, the HTTP API of SPEC 11 over the engine and the stores.

`api` the request and answer types (the one source of the validation and of the OpenAPI
document, `openapi`), `http` the ASGI plumbing (bodies with limits, the error envelope, the
router), `registry` the scenarios by name and the IRs by hash, `sessions` the turns (one
writer per session, message ids, version retries), `trace` a turn's trace as data (SPEC 12),
`design` the two endpoints that compile in the server, `metrics` and `logs` what an operator
reads, `playground` the designers' static page (SPEC 12), `app` the application and `serve`
the command.

A tool: may import anything in the interpreter. It imports the compiler only inside the
design-time handlers (`design`), and nothing imports it but `mgi serve`.
"""

ROOM = "tool"
BOUNDARY = ()
