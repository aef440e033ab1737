"""Transcripts: conversations with expectations, run by `mgi test`.

`parse` reads a transcript file (the format is described there); `run` plays it on a fresh
session and reports every step.
From Python: `run_files(paths, ir_dir)`, then `render_human`, `render_json` and
`exit_status` (the names below stay importable from `interpreter.transcripts`).

A tool: may import anything in the interpreter.
"""

from .run import (Expectation, Failure, Step, StepResult, Transcript, TranscriptError,
                  TranscriptResult, check_step, exit_status, load_transcript,
                  parse_transcript, render_human, render_json, run_files, run_transcript)

ROOM = "tool"
BOUNDARY = ()

__all__ = ["Expectation", "Failure", "Step", "StepResult", "Transcript", "TranscriptError",
           "TranscriptResult", "check_step", "exit_status", "load_transcript",
           "parse_transcript", "render_human", "render_json", "run_files", "run_transcript"]
