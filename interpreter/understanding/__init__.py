"""Understanding: what the user meant, as an `NLUResult` (SPEC 6.3).

`nlu` is the boundary the engine and every NLU share: the result, the context an NLU may
read, the protocol, and the `scripted` NLU (the result comes with the input). `rules` is the
built-in rules NLU over the dialogue-act `lexicon`. `safety` is the crisis detector that runs
beside every NLU (SPEC 10), over the data of `safety_lexicon`. The LLM NLU lives with the
other LLM plug-ins in `interpreter.llm`. `expects` says what a node with `params.expects`
counts as understood (SPEC 13.3); `morph` (the analysers), `evidence` and `concepts` are the
rules NLU's lemma tier.

May import: the core and this room. The core imports only `nlu`, `safety` and `expects`.
"""

ROOM = "plug-in"
BOUNDARY = ("nlu", "safety", "expects")
