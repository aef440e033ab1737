"""`mgi fuzz`: thousands of generated conversations against one compiled scenario.

`inputs` the strategies (what a user may say at a node), `properties` the built-in and the
designer's properties, `runner` the exploration with hypothesis (the only place it is
imported), `report` the coverage, counterexample transcripts and reports.

A tool: may import anything in the interpreter. Nothing but the command line imports it.
"""

ROOM = "tool"
BOUNDARY = ()
