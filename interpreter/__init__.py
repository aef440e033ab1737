"""mgi: the Mago interpreter (load IR, run turns). Imports neither `compiler`, lark nor networkx.

`MagoError` is the base of every exception the compiler and the interpreter define, so an
embedder catches "any Mago error" with one `except` (each class keeps its other base, e.g.
`ValueError`, so code that catches that still does). It lives here, in the package both sides
import and that imports nothing, so that every room may use it.
"""

__version__ = "0.1.0"
__all__ = ["MagoError", "__version__"]


class MagoError(Exception):
    """The base of every Mago exception (docs: reference/errors)."""
