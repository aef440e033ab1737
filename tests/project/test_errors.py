"""One base for every Mago exception (`interpreter.MagoError`; docs: reference/errors).

The classes are found by walking every module of `compiler/` and `interpreter/`, not from a
list, so a new exception class that forgets the base fails here the day it is added.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import compiler
import interpreter
from interpreter import MagoError


def exception_classes() -> list[type[BaseException]]:
    """Every exception class defined (not merely imported) in the two packages."""
    found = []
    for package in (compiler, interpreter):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            module = importlib.import_module(info.name)
            found += [value for value in vars(module).values()
                      if inspect.isclass(value) and issubclass(value, BaseException)
                      and value.__module__ == module.__name__]
    return found


def test_every_exception_class_derives_from_mago_error():
    classes = exception_classes()
    assert len(classes) >= 40, [c.__name__ for c in classes]  # the walk found the modules
    stray = [f"{c.__module__}.{c.__qualname__}" for c in classes if not issubclass(c, MagoError)]
    assert not stray, f"derive these from interpreter.MagoError: {stray}"


def test_the_other_bases_are_kept():
    from interpreter.files import JSONLimitError
    from interpreter.patterns import PatternError
    from interpreter.stores.records import StoreURLError

    for error in (PatternError, StoreURLError, JSONLimitError):
        assert issubclass(error, ValueError) and issubclass(error, MagoError), error


def test_an_embedder_catches_a_failed_turn_as_a_mago_error():
    from support.irkit import senimate_like

    from interpreter.engine import Engine, SessionNotFound

    engine = Engine(senimate_like().runtime())
    try:
        engine.turn("no-such-session", "hello")
    except MagoError as error:
        assert isinstance(error, SessionNotFound)
    else:
        raise AssertionError("a turn of an unknown session did not raise")
