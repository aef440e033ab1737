"""Sphinx configuration of Mago's documentation (`make docs`; the suite builds it strictly).

Pages are Markdown (MyST); the reference pages are made from the code by the local
extension `_ext/mago_reference.py`.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE / "_ext"), str(HERE.parent)]

project = "Mago"
author = "The Mago authors"
copyright = "2026, The Mago authors"
extensions = ["myst_parser", "mago_reference"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "_ext"]
myst_heading_anchors = 3
nitpicky = True  # an unknown reference fails the strict build
html_theme = "furo"
html_title = "Mago"
