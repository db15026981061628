# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""tf.io as the traced code sees it: feature specs, the parse calls a
mapped function makes, and file listing (tf.io.gfile.glob)."""

import json
import os
import re

from . import data
from .render import render, user_site
from .values import NeedValue, TraceError, Unknown, tensor


class DType:
    """tf.int64, tf.float32, ...: written as tf.<name> in the chain."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"tf.{self.name}"

    def _tfdist_render(self, what):
        return f"tf.{self.name}"

    @property
    def as_numpy_dtype(self):
        return self

    def is_compatible_with(self, other):
        return self is other


DTYPE_NAMES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
               "string", "bool", "variant", "resource", "qint8", "quint8", "qint32"]
DTYPES = {name: DType(name) for name in DTYPE_NAMES}
DTYPES["half"] = DTYPES["float16"]
DTYPES["double"] = DTYPES["float64"]


def as_dtype(value):
    if isinstance(value, DType):
        return value
    if isinstance(value, str) and value in DTYPES:
        return DTYPES[value]
    return tensor(f"as_dtype({value!r})")


class _Feature:
    """A feature spec: rendered as the call TensorFlow users write."""

    kind = "Feature"
    fields = ()

    def __init__(self, *args, **kwargs):
        names = self.fields
        if len(args) > len(names):
            raise TypeError(f"{self.kind}() takes at most {len(names)} arguments")
        values = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names:
                raise TypeError(f"{self.kind}() got an unexpected keyword argument '{key}'")
            values[key] = value
        self.values = values

    def __getattr__(self, attr):
        if attr in type(self).fields:
            return self.values.get(attr)
        raise AttributeError(attr)

    def _replace(self, **kwargs):
        return type(self)(**{**self.values, **kwargs})

    def _tfdist_render(self, what):
        parts = []
        for key in self.fields:
            if key in self.values and self.values[key] is not None:
                parts.append(f"{key}={render(self.values[key], f'{what} {self.kind}({key})')}")
        return f"{self.kind}({', '.join(parts)})"

    def __repr__(self):
        return f"{self.kind}({self.values})"


class FixedLenFeature(_Feature):
    kind = "FixedLenFeature"
    fields = ("shape", "dtype", "default_value")


class VarLenFeature(_Feature):
    kind = "VarLenFeature"
    fields = ("dtype",)


class SparseFeature(_Feature):
    kind = "SparseFeature"
    fields = ("index_key", "value_key", "dtype", "size", "already_sorted")


class FixedLenSequenceFeature(_Feature):
    kind = "FixedLenSequenceFeature"
    fields = ("shape", "dtype", "allow_missing", "default_value")


class RaggedFeature(_Feature):
    kind = "RaggedFeature"
    fields = ("dtype", "value_key", "partitions", "row_splits_dtype", "validate")


def _parsed(features, what):
    if isinstance(features, Unknown) and not features._tensor:
        raise NeedValue(features, f"is the feature dict of {what}")
    if not isinstance(features, dict):
        return tensor(f"{what}(...)")
    return {key: tensor(f"{what}[{key!r}]") for key in features}


def parse_single_example(serialized=None, features=None, name=None, example_names=None):
    data.record_parse(serialized, features, True)
    return _parsed(features, "parse_single_example")


def parse_example(serialized=None, features=None, name=None, example_names=None):
    data.record_parse(serialized, features, False)
    return _parsed(features, "parse_example")


def parse_sequence_example(serialized, context_features=None, sequence_features=None, *args,
                           **kwargs):
    return tensor("parse_sequence_example(...)"), tensor("parse_sequence_example(...)"), \
        tensor("parse_sequence_example(...)")


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None,
                                  *args, **kwargs):
    return tensor("parse_single_sequence_example(...)"), \
        tensor("parse_single_sequence_example(...)")


# ---------------------------------------------------------------------------
# File listing: the user's code may look at the names (len, slicing), so
# the stand-in lists them itself, as TensorFlow does: tf.io.gfile.glob in
# the folders' listing order (TensorFlow does not sort it), patterns one
# after another; tf.io.matching_files (the MatchingFiles op) sorted.

_GLOB_CHARS = re.compile(r"[*?[\\]")


def _component_regex(pattern):
    """fnmatch(3) of one path component: *, ?, [...] with ! or ^, and
    backslash escapes."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        elif c == "[":
            j = i + 1
            if j < len(pattern) and pattern[j] in "!^":
                j += 1
            if j < len(pattern) and pattern[j] == "]":
                j += 1
            while j < len(pattern) and pattern[j] != "]":
                j += 1
            if j >= len(pattern):
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:j]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                body = body.replace("\\", "\\\\")
                out.append(f"[{'^' if negate else ''}{body}]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
# The pipes on which tfdist lists object-store URLs for the trace (requests,
# answers); None when the stand-in runs without tfdist.
LISTING_FDS = None


def _list_url(pattern, what):
    """The matches of an object-store URL pattern, sorted, as tfdist lists
    them (one listing implementation): os.listdir knows no URL, and an empty
    list here would be a silent wrong answer."""
    if LISTING_FDS is None:
        raise TraceError(f"{what}({pattern!r}): the trace cannot list object-store URLs here; "
                         f"name the pattern in tf.data.Dataset.list_files({pattern!r}), which "
                         f"tfdist lists itself")
    ask, told = LISTING_FDS
    request = (json.dumps({"glob": pattern}, ensure_ascii=True) + "\n").encode("ascii")
    while request:
        request = request[os.write(ask, request):]
    reply = b""
    while not reply.endswith(b"\n"):
        chunk = os.read(told, 1 << 16)
        if not chunk:
            raise TraceError(f"{what}({pattern!r}): tfdist did not answer the listing")
        reply += chunk
    answer = json.loads(reply.decode("utf-8"))
    if "error" in answer:
        raise TraceError(f"{what}({pattern!r}): {answer['error']}")
    return answer["names"]


def _escape(name):
    return re.sub(r"([*?[\\])", r"\\\1", name)


def glob_one(pattern):
    """The matches of one pattern, in listing order, as TensorFlow's
    GetMatchingPaths finds them (folder by folder, breadth first)."""
    if not _GLOB_CHARS.search(pattern):
        return [pattern] if os.path.exists(pattern) else []
    absolute = pattern.startswith("/")
    parts = [p for p in pattern.split("/") if p != ""]
    current = ["/" if absolute else ""]
    for k, part in enumerate(parts):
        last = k == len(parts) - 1
        following = []
        if not _GLOB_CHARS.search(part):
            for base in current:
                path = base + part if base in ("", "/") else base + "/" + part
                if last and os.path.exists(path) or not last and os.path.isdir(path):
                    following.append(path)
            current = following
            continue
        regex = _component_regex(part)
        for base in current:
            try:
                names = os.listdir(base or ".")
            except OSError:
                continue
            for name in names:
                if not regex.match(name):
                    continue
                path = base + name if base in ("", "/") else base + "/" + name
                if last or os.path.isdir(path):
                    following.append(path)
        current = following
    return current


def _pattern_list(pattern, what):
    if isinstance(pattern, Unknown):
        if pattern._tensor:
            raise TraceError(f"{what} of a tensor computed by the program ({pattern._name})")
        raise NeedValue(pattern, f"is the pattern of {what}")
    if isinstance(pattern, (list, tuple)):
        out = []
        for p in pattern:
            out += _pattern_list(p, what)
        return out
    if isinstance(pattern, bytes):
        pattern = pattern.decode("utf-8")
    if not isinstance(pattern, str):
        raise TraceError(f"{what} takes a pattern string; got {type(pattern).__name__}")
    return [pattern]


def gfile_glob(pattern):
    patterns = _pattern_list(pattern, "tf.io.gfile.glob()")
    out = []
    for p in patterns:
        out += _list_url(p, "tf.io.gfile.glob") if _URL.match(p) else glob_one(p)
    # Objects come in the order the store lists them, byte order of their
    # names; a folder's files in its listing's order.
    remote = sum(1 for p in patterns if _URL.match(p))
    if remote == len(patterns):
        order = "in the store's listing order, byte order of the names"
    elif remote == 0:
        order = "in the folder listing's order"
    else:
        order = ("in the folder listing's order for files and the store's, byte order of the "
                 "names, for objects")
    data.assume(f"tf.io.gfile.glob({', '.join(repr(p) for p in patterns)}): {len(out)} "
                f"name{'' if len(out) == 1 else 's'}, {order} "
                f"(TensorFlow does not sort them)", user_site())
    return out


def matching_files(pattern, name=None):
    patterns = _pattern_list(pattern, "tf.io.matching_files()")
    out = []
    for p in patterns:
        out += _list_url(p, "tf.io.matching_files") if _URL.match(p) else glob_one(p)
    if not out:
        raise TraceError(f"No files matched pattern: {', '.join(patterns)}")
    return sorted(out, key=lambda s: s.encode("utf-8", "surrogateescape"))


def gfile_exists(path):
    path = os.fspath(path)
    if isinstance(path, str) and _URL.match(path):
        return bool(_list_url(_escape(path), "tf.io.gfile.exists"))
    return os.path.exists(path)


def gfile_isdir(path):
    return os.path.isdir(os.fspath(path))


def gfile_listdir(path):
    return os.listdir(os.fspath(path))  # unsorted, as TensorFlow's GetChildren


def gfile_open(name, mode="r"):
    """tf.io.gfile.GFile for reading the program's own files (a list of
    file names, a config); writing is refused."""
    if any(c in mode for c in "wax+"):
        raise TraceError(f"tf.io.gfile.GFile({name!r}, {mode!r}): the trace does not write files")
    return open(os.fspath(name), mode)


def gfile_join(*parts):
    return os.path.join(*[os.fspath(p) for p in parts])
