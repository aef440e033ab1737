"""mgi: the Mago interpreter (load IR, run turns). Imports neither `compiler`, lark nor networkx."""

__version__ = "0.1.0"
