# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""Python values as text of tfdist's pipeline grammar, and where code runs."""

import functools
import math
import os
import sys
import sysconfig
import traceback

from .values import ContextInt, NeedValue, TraceError, Unknown, WorkerIndex

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# Python's own library: an error raised there is the user's code's, at the
# user's line that called it.
_LIBRARY_DIRS = tuple(sorted({os.path.abspath(p) + os.sep for p in (
    sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib")) if p}))


def is_library(filename):
    """Whether code in `filename` is the stand-in's or Python's, not the user's."""
    if filename.startswith("<frozen") or filename.startswith("<string>"):
        return True
    path = os.path.abspath(filename)
    return path.startswith(PACKAGE_DIR + os.sep) or path.startswith(_LIBRARY_DIRS)


def exception_site(exc):
    """Where an exception met the user's code: the innermost traceback frame
    outside the stand-in and Python's library (the user's file, or a module
    of theirs it imports), or None."""
    site = None
    for frame, line in traceback.walk_tb(exc.__traceback__):
        if not is_library(frame.f_code.co_filename):
            site = (frame.f_code.co_filename, line)
    return site


def user_site(skip=1):
    """(file, line) of the innermost frame outside this package and Python's
    library: the user's code that called into the stand-in."""
    frame = sys._getframe(skip)
    while frame is not None:
        if not is_library(frame.f_code.co_filename):
            return frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back
    return "<tfdist>", 0


def quote(text):
    out = ['"']
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def render(value, what):
    """`value` as grammar text. `what` names the argument in messages
    ("batch(batch_size)").
    Raises NeedValue for an unknown setting, TraceError for a value the
    grammar has no words for."""
    if value is None:
        return "None"
    if value is True:
        return "True"
    if value is False:
        return "False"
    if isinstance(value, (ContextInt, WorkerIndex)):
        return value.symbol
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise TraceError(f"{what} is {value}, which tfdist cannot use")
        return repr(value)
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, bytes):
        # A byte that is not UTF-8 (a file name may hold any) becomes a lone
        # surrogate, as os.fsdecode makes it; the answer's JSON carries it as
        # \udcXX, which tfdist reads back as the byte.
        return quote(value.decode("utf-8", "surrogateescape"))
    if isinstance(value, Unknown):
        if value._tensor:
            raise TraceError(f"{what} is a tensor computed by the pipeline ({value._name}); "
                             f"tfdist needs a value known before the pipeline runs")
        raise NeedValue(value, f"is an argument of {what}")
    render_method = getattr(type(value), "_tfdist_render", None)
    if render_method is not None:
        return render_method(value, what)
    if isinstance(value, list):
        return "[" + ", ".join(render(v, what) for v in value) + "]"
    if isinstance(value, tuple):
        items = [render(v, what) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{render(k, what)}: {render(v, what)}"
                               for k, v in value.items()) + "}"
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars
    if callable(tolist):
        return render(tolist(), what)
    if isinstance(value, (set, frozenset)):
        raise TraceError(f"{what} is a set, whose order Python does not fix")
    raise TraceError(f"{what} is a {type(value).__name__}, which tfdist cannot read "
                     f"({value!r:.60})")


def function_name(fn):
    """How a function given to map()/filter() is named in the chain."""
    partials = 0
    while isinstance(fn, functools.partial):  # a partial of a partial: a loop
        fn = fn.func
        partials += 1
    if isinstance(fn, Unknown):  # it has every attribute: named by its own name
        name = fn._name
    else:
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
        if not isinstance(name, str):
            name = type(fn).__name__
        name = name.replace("<locals>.", "").replace("<lambda>", "lambda")
    return "partial(" * partials + name + ")" * partials
