"""Analytics (SPEC 16): what happened in the conversations a scenario had.

`events` the event record of one applied turn or one session start (built from what the engine
returns for a turn, never by changing the engine) and the masking of kept text; `aggregate`
the streaming tally of events into the figures of a report, per scenario and IR hash;
`sources` where events are read from (a JSON-lines file of `mgi run --events`, a SQLite or
Redis session store); `render` the text and JSON forms and `html` the self-contained page.

A tool: imported by the command line (`mgi run --events`, `mgi report`) and the service
(`mgi serve` writes events with each save, `GET /dm/v1/report`); nothing in the core imports it.
"""

ROOM = "tool"
BOUNDARY = ()
