"""Understanding: what the user meant, as an `NLUResult` (SPEC 6.3).

`nlu` is the boundary the engine and every NLU share: the result, the context an NLU may
read, the protocol, and the `scripted` NLU (the result comes with the input). `rules` is the
built-in rules NLU over the dialogue-act `lexicon`. `safety` is the crisis detector that runs
beside every NLU (SPEC 10), over the data of `safety_lexicon`. The LLM NLU lives with the
other LLM plug-ins in `interpreter.llm`. `expects` says what a node with `params.expects`
counts as understood (SPEC 13.3); `morph` (the analysers), `evidence` and `concepts` are the
rules NLU's lemma tier. `dates` reads dates, times and number words (SPEC 14.1) and holds the
turn's day, which the engine sets and slot checks and conditions read.

May import: the core and this room. The core imports only `nlu`, `safety`, `expects` and
`dates`.
"""

ROOM = "plug-in"
BOUNDARY = ("nlu", "safety", "expects", "dates")
