"""mgc: the Mago scenario compiler (parse, check, analyse, emit IR)."""

__version__ = "0.1.0"
