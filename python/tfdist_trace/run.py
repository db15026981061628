# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""Runs the user's input function with the stand-in tensorflow and writes
what it built as one JSON object (the protocol of doc/python.md).

Usage (by tfdist): python3 -I -S -c BOOTSTRAP PACKAGE_ROOT RESULT_FD
with the request as JSON on standard input."""

import builtins
import dis
import functools
import inspect
import json
import linecache
import os
import re
import shlex
import sys
import types

from . import data, datasets, seeds, session, standin, tf_io, tfx
from .render import exception_site
from .values import NAME_LIMIT, AnyBase, NeedValue, TraceError, Unknown, WorkerDependent, setting

CONTEXT_NAMES = ("input_context", "ctx", "input_ctx", "context")


def is_context_parameter(p):
    """input_context, ctx, input_pipeline_context, ...; or annotated as one."""
    name = p.name
    if name in CONTEXT_NAMES or name.endswith("_context") or name.endswith("_ctx"):
        return True
    annotation = p.annotation
    return annotation is not p.empty and "InputContext" in repr(annotation)
ENTRY_WORDS = ("input_fn", "dataset_fn")
ENTRY_HINTS = ("input", "dataset", "build", "read", "make")  # when none is named so
# Names the code of a function that builds a dataset refers to.
DATASET_NAMES = {"TFRecordDataset", "list_files", "from_tensor_slices", "from_tensors",
                 "interleave", "flat_map", "batch", "padded_batch", "shard", "prefetch",
                 "make_batched_features_dataset", "parallel_interleave", "map_and_batch",
                 "Dataset", "repeat", "shuffle"}
MAX_BUILDER_CALLS = 4
# The values a --define spells (NAME=UNKNOWN, NAME=CONTEXT); under the
# prefix (tfdist.UNKNOWN) whatever the file names so.
SPELLED = ("UNKNOWN", "CONTEXT")
SPELLED_PREFIX = "tfdist."


def quote_hint(name, expr, error):
    """For a --define whose value reads as text, not as a Python expression
    (data/*, train): how to pass it as the string it was meant to be, the
    argument quoted for the shell as a whole."""
    bare_word = isinstance(error, NameError) and re.fullmatch(r"[A-Za-z_]\w*", expr.strip())
    if not isinstance(error, SyntaxError) and not bare_word:
        return ""
    shown = f"the text {expr!r}" if "\\" not in repr(expr) else "it as text"
    return (f"; the value is a Python expression: to pass {shown}, quote it as a "
            f"Python string: --define {shlex.quote(f'{name}={python_text(expr)}')}")


def python_text(text):
    """A Python expression of the string `text` that holds no backslash:
    tfdist shows a message's backslashes doubled (its terminal escape), so
    a hint that held one would not run as shown. A backslash, and a quote
    of the kind that delimits the string, are chr(N) between the pieces;
    shlex.quote never writes a backslash either."""
    quote = "'" if '"' in text and "'" not in text else '"'
    pieces, piece = [], ""
    for c in text:
        if c == "\\" or c == quote:
            if piece:
                pieces.append(quote + piece + quote)
            pieces.append(f"chr({ord(c)})")
            piece = ""
        else:
            piece += c
    if piece or not pieces:
        pieces.append(quote + piece + quote)
    return " + ".join(pieces)


_STRAY_BYTES = re.compile("[\udc80-\udcff]")


def define_code(name, expr):
    """The compiled expression of --define NAME=EXPR, and the function that
    makes its value. A byte of the command line that is not UTF-8 (a file
    name's) comes as the lone surrogate \\udcXX os.fsdecode makes, which
    compile() cannot encode: it is compiled as a private-use character the
    text does not hold, put back in the strings of the value, so
    "data/\\udcff*" opens the file whose name holds the byte."""
    if not _STRAY_BYTES.search(expr):
        code = compile(expr, f"--define {name}", "eval", dont_inherit=True)
        return code, lambda namespace: eval(code, namespace)
    base = next(b for b in (0xF0000, 0x100000)
                if not any(b <= ord(c) < b + 128 for c in expr))
    code = compile(expr.translate({0xDC80 + i: base + i for i in range(128)}),
                   f"--define {name}", "eval", dont_inherit=True)
    back = {base + i: 0xDC80 + i for i in range(128)}

    def restore(value):
        if isinstance(value, str):
            return value.translate(back)
        if isinstance(value, (list, tuple)):
            return type(value)(restore(v) for v in value)
        if isinstance(value, dict):
            return {restore(k): restore(v) for k, v in value.items()}
        return value

    return code, lambda namespace: restore(eval(code, namespace))


class Failure(Exception):
    """An error to report: a message and, when known, the user's line.
    `not_input`: the function called does not look like an input function."""

    def __init__(self, message, site=None, not_input=False):
        super().__init__(message)
        self.message = message
        self.site = site
        self.not_input = not_input


def _display_name(unknown, namespaces, fallback=True):
    """An Unknown's name as the user's code spells it: a global (or self)
    that holds it or an ancestor of it, or (with `fallback`; else None) a
    module under the name the code imported it as (`hvd.size` for
    horovod.tensorflow.size)."""
    chain = []  # the unknown, its parent, ...: linear, whatever the depth
    node = unknown
    while isinstance(node, Unknown):
        chain.append(node)
        node = node._parent
    depth = {id(node): i for i, node in enumerate(chain)}
    for namespace_name, namespace in namespaces:
        prefix = [namespace_name] if namespace_name else []
        for name, value in namespace.items():
            i = depth.get(id(value))
            if i is not None and chain[i] is value:
                rest = [str(node._key) for node in reversed(chain[:i])]
                text = ".".join(prefix + [name] + rest)
                if len(text) > NAME_LIMIT:
                    text = text[:NAME_LIMIT] + "..."
                return text
    return spell(unknown._name, namespaces) if fallback else None


def spell(text, namespaces):
    """`text` with a module path as the code imported it (horovod.tensorflow.size -> hvd.size)."""
    for _, namespace in namespaces:
        for name, value in namespace.items():
            module = value.__name__ if isinstance(value, types.ModuleType) else None
            if module and text.startswith(module + "."):
                return name + text[len(module):]
    return text


# What an input context has: a value the code reads them from is one.
CONTEXT_MEMBERS = ("num_input_pipelines", "input_pipeline_id", "num_replicas_in_sync",
                   "get_per_replica_batch_size")


# Helpers of a launcher (Horovod's rank() and size(), a project's
# get_rank()/get_world_size()) whose value is each worker's own.
RANK_NAMES = ("rank", "get_rank", "local_rank", "worker_index", "task_index", "process_index")
SIZE_NAMES = ("size", "get_size", "world_size", "get_world_size", "num_workers", "process_count")


def _worker_hint(name):
    """For a call of an unknown RANK_NAMES/SIZE_NAMES helper: the define
    that gives each worker its own value; "" for another name."""
    last = name.rsplit(".", 1)[-1]
    member = ("input_pipeline_id" if last in RANK_NAMES else
              "num_input_pipelines" if last in SIZE_NAMES else None)
    if member is None:
        return ""
    return (f" or, if it is the worker's {'index' if member == 'input_pipeline_id' else 'count'}"
            f", each worker's with --define '{name}=lambda *args, **kwargs: CONTEXT.{member}'")


def looks_like_context(name):
    """A name spelled like an input context (self.input_context, ctx, ...)."""
    last = name.rsplit(".", 1)[-1]
    return last in CONTEXT_NAMES or last.endswith("_context") or last.endswith("_ctx")


def _definable(unknown):
    """The unknown a --define can give for `unknown`, and whether a call of
    it made the value: the nearest value it was computed from whose name is
    a dotted name. What a call returned (f(...).copy) is no such name: then
    it is the function called (f), whose define is a lambda."""
    node = unknown.origin()
    called = unknown._called
    while True:
        top = node
        while isinstance(top._parent, Unknown):
            top = top._parent
        if top._origin is None:  # a named value, or an attribute of one
            return node, called
        called = top._called
        node = top.origin()


def _find_mapping(mapping, namespaces):
    """The dotted name of a define's dict (params, params.data,
    self.params), or None."""
    stack = [(f"{prefix}.{name}" if prefix else name, value) for prefix, namespace in namespaces
             for name, value in namespace.items() if isinstance(value, AttrDict)]
    seen = set()
    while stack:
        name, value = stack.pop()
        if value is mapping:
            return name
        if id(value) in seen:  # the code may have put a dict inside itself
            continue
        seen.add(id(value))
        stack.extend((f"{name}.{k}", v) for k, v in value.items()
                     if isinstance(v, AttrDict) and isinstance(k, str) and k.isidentifier())
    return None


def _missing_key(e, namespaces):
    name = _find_mapping(e.mapping, namespaces)
    keys = ", ".join(sorted(repr(k) for k in e.mapping)) or "none"
    if name is None:
        return f"KeyError: {e.key!r} (the keys given: {keys})"
    message = f"{name} has no key {e.key!r} (the keys given: {keys}); "
    if isinstance(e.key, str) and e.key.isidentifier():
        return message + f"give it with --define {name}.{e.key}=VALUE"
    return message + f"add it to the dict of --define {name.split('.')[0]}=..."


def describe_exception(e, namespaces, self_object=None, loading=False):
    if isinstance(e, NeedValue):
        held = e.unknown
        origin, called = _definable(held)

        def named(unknown):
            text = _display_name(unknown, namespaces)
            # An attribute the instance lacks, its class made from a class
            # the trace cannot see (values.AnyBase): self.NAME.
            prefix = f"{type(self_object).__name__}."
            if isinstance(self_object, AnyBase) and text.startswith(prefix):
                text = "self." + text[len(prefix):]
            return text

        if origin._key in CONTEXT_MEMBERS and isinstance(origin._parent, Unknown) and \
                not called:
            # self.ctx.num_input_pipelines: self.ctx is used as an input context.
            context = named(origin._parent)
        else:
            context = None
        name = named(origin)
        what = name if held is origin else f"{spell(held._name, namespaces)}, computed from {name},"
        if context is None and looks_like_context(name) and not called:
            context = name
        if context is not None:
            return (f"{what} {e.why}, but nothing defines it; give it with --define "
                    f"{name}=VALUE or, if {context} is an input context, each worker's with "
                    f"--define {context}=CONTEXT")
        holder = _display_name(held, namespaces, fallback=False) if called else None
        if holder is not None and not loading:
            # FEATURES = utils.get_features() at the top level: the value the
            # user knows is FEATURES (set after the file ran), not a fake helper.
            return (f"{holder} (what {name} returned) {e.why}, but nothing defines "
                    f"it; give it with --define {holder}=VALUE or, as what the call returns, "
                    f"--define '{name}=lambda *args, **kwargs: VALUE'")
        value = "lambda *args, **kwargs: VALUE" if called else "VALUE"
        define = f"--define '{name}={value}'" if called else f"--define {name}={value}"
        return (f"{what} {e.why}, but nothing defines it; give it with {define}"
                + (_worker_hint(name) if called else ""))
    if isinstance(e, TraceError):
        return str(e)
    if isinstance(e, (MissingKey, MissingAttribute)):
        return _missing_key(e, namespaces)
    if isinstance(e, AttributeError) and self_object is not None and \
            getattr(e, "obj", None) is self_object and getattr(e, "name", None):
        cls = type(self_object).__name__
        message = (f"self.{e.name} is not set ({cls}.__init__ was not run, or did not set it); "
                   f"give it with --define self.{e.name}=VALUE")
        if looks_like_context(e.name):
            message += (f" or, for each worker's input context, --define "
                        f"self.{e.name}=CONTEXT")
        return message
    if isinstance(e, NameError) and getattr(e, "name", None):
        message = (f"name '{e.name}' is not defined; give it a value with --define "
                   f"{e.name}=VALUE")
        if looks_like_context(e.name):
            message += f" or, for each worker's input context, --define {e.name}=CONTEXT"
        return message
    return f"{type(e).__name__}: {e}"


class MissingKey(KeyError):
    """A key a dict given with --define lacks (params["batch_size"])."""

    def __init__(self, mapping, key):
        super().__init__(key)
        self.mapping = mapping
        self.key = key


class MissingAttribute(AttributeError):
    """The same, read as an attribute (params.batch_size)."""

    def __init__(self, mapping, key):
        super().__init__(key)
        self.mapping = mapping
        self.key = key


class AttrDict(dict):
    """A dict given with --define, readable as params["batch_size"] and as
    params.batch_size (configs are written both ways)."""

    def __missing__(self, key):
        raise MissingKey(self, key)

    def __getattr__(self, attr):
        if attr in self:
            return self[attr]
        raise MissingAttribute(self, attr)

    def __setattr__(self, attr, value):
        self[attr] = value

    def get(self, key, default=None):
        # HParams and ConfigDict take get(key=..., default=...) by keyword.
        return dict.get(self, key, default)

    @staticmethod
    def wrap(value):
        if isinstance(value, dict) and not isinstance(value, AttrDict):
            return AttrDict({k: AttrDict.wrap(v) for k, v in value.items()})
        if isinstance(value, types.FunctionType) and \
                value.__code__.co_filename.startswith("--define "):
            # A define's own lambda (--define 'hparams.Config=lambda *a, **k:
            # {"splits": ...}'): what it returns reads as a config too.
            return functools.wraps(value)(
                lambda *args, **kwargs: AttrDict.wrap(value(*args, **kwargs)))
        return value


class Request:
    def __init__(self, raw):
        self.file = raw["file"]
        self.source = raw.get("source")
        self.entry = raw.get("entry")
        self.defines = [(d[0], d[1]) for d in raw.get("defines", [])]
        context = raw.get("context") or {}
        self.workers = int(context.get("workers", 1))
        self.worker = int(context.get("worker", 0))
        self.replicas = int(context.get("replicas", 1))
        self.memory_mib = int(raw.get("memory_mib", 0))
        self.api = raw.get("api")  # --api when given: "distribute" or "from-function"
        self.global_seed = raw.get("global_seed")  # --global-seed, or None
        self.op_seed_offset = int(raw.get("op_seed_offset", 0))
        self.max_source_bytes = raw.get("max_source_bytes")  # None: no limit


class Tracer:
    def __init__(self, request, tf):
        self.request = request
        self.tf = tf
        self.module = None
        self.self_object = None
        self.entry_text = ""
        self.api = None
        self.values = {}  # define name -> evaluated value
        self._unknowns = {}  # define name -> the unknown of --define NAME=UNKNOWN
        self.used = set()
        self.default_entry = False  # the entry was chosen without --entry
        self.load_api = None  # the API of a dataset distributed as the file loaded
        self.own_names = set()  # the globals the file sets (its own UNKNOWN wins)
        self._pending = []  # (name, value) of dotted defines, set at imports
        self._pending_names = {}  # plain define name -> value, bound at imports

    # -- the file --------------------------------------------------------
    def load(self):
        req = self.request
        path = req.file
        if req.source is None:
            limit = req.max_source_bytes
            try:
                # Never more than the limit and a byte: the file may have
                # grown since tfdist looked at its size.
                with open(path, "rb") as f:
                    raw = f.read(-1 if limit is None else limit + 1)
                if limit is not None and len(raw) > limit:
                    raise Failure(f"{path}: the input function file is over {limit >> 20} MiB, "
                                  "the most tfdist reads of one")
                source = raw.decode("utf-8")
                # As open(..., encoding="utf-8") reads it: universal newlines.
                source = source.replace("\r\n", "\n").replace("\r", "\n")
            except OSError as e:
                raise Failure(f"{path}: cannot read the input function file: {e.strerror}")
            except UnicodeDecodeError:
                raise Failure(f"{path}: not UTF-8 text")
        else:
            source = req.source
            if _STRAY_BYTES.search(source):  # a byte that is not UTF-8, as \udcXX
                raise Failure(f"{path}: not UTF-8 text")
        self.source = source
        lines = source.splitlines(True)
        linecache.cache[path] = (len(source), None, lines, path)
        try:
            code = compile(source, path, "exec", dont_inherit=True)
        except SyntaxError as e:
            raise Failure(f"SyntaxError: {e.msg}", (path, e.lineno or 0))
        stem = os.path.splitext(os.path.basename(path))[0] or "input"
        name = re.sub(r"\W", "_", stem)
        if name == "__main__" or not name:
            name = "input_fn_module"
        module = types.ModuleType(name)
        module.__file__ = path
        module.__dict__["__builtins__"] = __builtins__
        sys.modules[name] = module
        self.module = module
        folder = os.path.dirname(os.path.abspath(path)) if req.source is None else os.getcwd()
        sys.path.insert(0, folder)
        sys.argv = [path]
        self.own_names = _stored_globals(code)
        self._seed_defines()
        real_import = builtins.__import__
        builtins.__import__ = self._import_hook(real_import)
        try:
            exec(code, module.__dict__)
        except SystemExit as e:
            raise Failure("the file exits while it is loaded (sys.exit or app.run at the top "
                          "level); guard it with if __name__ == '__main__':",
                          exception_site(e)) from None
        except datasets.LoadStopped as e:
            # A training loop at the top level: bounded, and said.
            data.assume(f"a loop of the file asks a dataset's iterator for more than "
                        f"{datasets.LOAD_ELEMENTS} elements while the file loads; the trace "
                        f"stopped running the file there (the lines after it did not run; guard the "
                        f"loop with if __name__ == '__main__': to run them)", exception_site(e))
        finally:
            builtins.__import__ = real_import
        self._apply_defines()

    # -- --define ------------------------------------------------------------
    def _spelled(self, expr):
        """The spelled value EXPR names (UNKNOWN, tfdist.CONTEXT, ...), or
        None; a bare word that the file sets as a global of its own is its."""
        word = expr.strip()
        if word.startswith(SPELLED_PREFIX) and word[len(SPELLED_PREFIX):] in SPELLED:
            return word[len(SPELLED_PREFIX):]
        if word in SPELLED and word not in self.own_names:
            return word
        return None

    def _spelled_value(self, name, word):
        if word == "UNKNOWN":
            # A value the user cannot give either (an object of another
            # library): passed around as the unknown it is (the one bound
            # before the file ran, which its default arguments hold).
            return self._unknowns.setdefault(name, setting(name))
        # CONTEXT: the worker's tf.distribute.InputContext, the object a
        # from-function's input_context gets (a builder stored it in a
        # method outside the paste).
        if self.request.api == "distribute":
            raise Failure(f"--define {name}=CONTEXT: an input context is what "
                          f"distribute_datasets_from_function gives each worker, and --api "
                          f"distribute gives none (--api from-function)")
        self.api = "from-function"
        return session.current.context

    def _eval(self, name, expr, namespace):
        word = self._spelled(expr)
        if word is not None:
            return self._spelled_value(name, word)
        try:
            value = define_code(name, expr)[1](namespace)
        except Exception as e:
            raise Failure(f"--define {name}={expr}: {type(e).__name__}: {e}"
                          + quote_hint(name, expr, e))
        return AttrDict.wrap(value)

    def _base_namespace(self, name=None, expr=""):
        # DATA_ACCESSOR: the DataAccessor TFX's Trainer passes; a global of
        # the file's own of that name wins, tfdist.DATA_ACCESSOR stays.
        spelled = {"DATA_ACCESSOR": tfx.DATA_ACCESSOR}
        if re.search(r"\bCONTEXT\b", expr):
            # CONTEXT inside an expression (--define 'get_rank=lambda:
            # CONTEXT.input_pipeline_id', a Horovod-style helper): each
            # worker's InputContext, as the bare word gives it.
            spelled["CONTEXT"] = self._spelled_value(name, "CONTEXT")
        base = {"tf": self.tf, "tensorflow": self.tf, "__builtins__": __builtins__,
                "tfdist": types.SimpleNamespace(**spelled)}
        base.update((word, value) for word, value in spelled.items()
                    if word not in self.own_names)
        return base

    def _seed_defines(self):
        """Before the file runs: plain names become globals, and the roots
        of dotted ones exist (as settable namespaces)."""
        g = self.module.__dict__
        said = len(session.current.assumptions)
        for name, expr in self.request.defines:
            try:
                evaluate = define_code(name, expr)[1]
            except SyntaxError as e:
                # Never an expression, whatever the file defines: said
                # before the file runs into the name it leaves undefined.
                raise Failure(f"--define {name}={expr}: {type(e).__name__}: {e}"
                              + quote_hint(name, expr, e))
            root = name.split(".")[0]
            if root == "self":
                continue
            word = self._spelled(expr)
            if word is not None:
                # Bound before the file runs, as any other: a default
                # argument (def f(parse_fn=parse_record)) or a module-level
                # use reads it while the file loads.
                value = self._spelled_value(name, word)
                if "." not in name:
                    g[name] = self._pending_names[name] = value
                    continue
            elif "." not in name:
                try:
                    g[name] = self._pending_names[name] = evaluate(
                        self._base_namespace(name, expr))
                except Exception:
                    pass
                continue
            else:
                try:
                    value = AttrDict.wrap(evaluate(self._base_namespace(name, expr)))
                except Exception:
                    value = None  # it names the file's values: set after the file ran
            if value is not None:
                self._pending.append((name, value))
                self._set_flag(name, value)
            if root not in g:
                g[root] = types.SimpleNamespace()
            if value is not None and isinstance(g[root], types.SimpleNamespace):
                self._set_path(g[root], name.split(".")[1:], value, name)
        del session.current.assumptions[said:]  # said again when the defines are applied

    @staticmethod
    def _set_flag(name, value):
        """FLAGS.NAME: absl's flag, however the code reaches it (a global
        FLAGS = flags.FLAGS read while the file loads, flags.FLAGS.NAME):
        the hint for an undefined flag is spelled FLAGS.NAME."""
        parts = name.split(".")
        if len(parts) == 2 and parts[0] == "FLAGS":
            setattr(standin.FLAGS, parts[1], value)

    def _import_hook(self, real_import):
        """The file's __import__: a dotted define whose root the file
        imports from a module the trace lacks (from myproject import
        config; --define config.FEATURES=[...]) is set on what the import
        binds, so the file's top level reads it while it loads."""
        g = self.module.__dict__

        def hooked(name, globals=None, locals=None, fromlist=(), level=0):
            module = real_import(name, globals, locals, fromlist, level)
            if (self._pending or self._pending_names) and globals is g:
                frame = sys._getframe(1)
                if frame.f_globals is g and frame.f_locals is g:  # the top level
                    for stored, value, holder, attr in _import_bindings(frame, module):
                        if stored in self._pending_names and attr is not None and \
                                isinstance(holder, (standin.Module, Unknown)):
                            # from myproject import get_spec; --define get_spec=...:
                            # the import binds the define's value.
                            setattr(holder, attr, self._pending_names[stored])
                        else:
                            self._seed_into(stored, value)
            return module

        return hooked

    def _seed_into(self, root, obj):
        if not isinstance(obj, (standin.Module, Unknown)):
            return  # a real module's names are its own until the file ran
        for name, value in self._pending:
            if name.split(".")[0] == root:
                self._set_path(obj, name.split(".")[1:], value, name)

    def _apply_defines(self):
        """After the file ran: every define, evaluated in the file's names."""
        g = self.module.__dict__
        for name, expr in self.request.defines:
            value = self._eval(name, expr, {**self._base_namespace(name, expr), **g})
            self.values[name] = value
            parts = name.split(".")
            if parts[0] == "self":
                continue
            if len(parts) == 1:
                g[name] = value
                continue
            if parts[0] not in g:
                g[parts[0]] = types.SimpleNamespace()
            self._set_path(g[parts[0]], parts[1:], value, name)
            self._set_flag(name, value)

    @staticmethod
    def _set_path(obj, keys, value, name):
        for key in keys[:-1]:
            try:
                child = getattr(obj, key)
            except AttributeError:
                child = None
            if child is None or isinstance(child, (int, float, str, bool)):
                child = types.SimpleNamespace()
                setattr(obj, key, child)
            obj = child
        try:
            setattr(obj, keys[-1], value)
        except Exception as e:
            raise Failure(f"--define {name}: cannot set it ({type(e).__name__}: {e})")

    # -- the entry -------------------------------------------------------------
    def _candidates(self):
        """The file's top-level functions and its classes' methods
        (inherited ones too, under the class that inherits them), each
        (line, name); methods of a class before those of its subclasses."""
        path = self.request.file
        functions, methods = [], []
        classes = [obj for obj in self.module.__dict__.values()
                   if isinstance(obj, type) and obj.__module__ == self.module.__name__]
        for name, obj in self.module.__dict__.items():
            if isinstance(obj, types.FunctionType) and obj.__code__.co_filename == path:
                functions.append((obj.__code__.co_firstlineno, name))
        for cls in classes:
            depth = len(cls.__mro__)
            for klass in reversed(cls.__mro__):
                for attr, member in vars(klass).items():
                    fn = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
                    if isinstance(fn, types.FunctionType) and fn.__code__.co_filename == path:
                        methods.append((depth, fn.__code__.co_firstlineno, f"{cls.__name__}.{attr}"))
        methods = [(line, name) for depth, line, name in sorted(set(methods))]
        return sorted(functions), methods

    def choose_entry(self):
        """The function to call (its name), or a data.LoadUse: a dataset
        the file distributed, handed to Keras or iterated while it loaded."""
        functions, methods = self._candidates()
        names = [n for _, n in functions] + list(dict.fromkeys(n for _, n in methods))
        want = self.request.entry
        uses = self._load_uses()
        if want:
            if want in names:
                return want
            cls = self.module.__dict__.get(want)
            if isinstance(cls, type) and callable(getattr(cls, "__call__", None)) and \
                    f"{want}.__call__" in names:
                return f"{want}.__call__"
            use = self._load_entry(want, uses)
            if use is not None:
                return use
            held = [n for n, v in self.module.__dict__.items() if isinstance(v, datasets.Dataset)]
            lines = [str(u.site[1]) for u in uses if u.site and u.site[0] == self.request.file]
            raise Failure(f"--entry {want}: no such function or method in {self.request.file} "
                          f"(found: {', '.join(names) or 'none'}"
                          + (f"; globals that hold a dataset: {', '.join(held)}" if held else "")
                          + (f"; lines that use a dataset as the file loads: {', '.join(lines)}"
                             if lines else "") + ")")
        # A dataset the file distributes (or fits) as it loads, with the
        # arguments the file itself passes.
        use = self._load_choice([u for u in uses if u.rank <= 1])
        if use is not None:
            return use
        # Named like an input function: a top-level one, else a method of
        # the most derived class that has it.
        for group in (functions, methods):
            named = [n for _, n in group if any(w in n.split(".")[-1] for w in ENTRY_WORDS)]
            if named:
                return named[-1]
        # A dataset the file iterates (or evaluates) as it loads.
        use = self._load_choice(uses)
        if use is not None:
            return use
        self.default_entry = True  # a guess: a failure lists the others
        # Else the function whose code builds the most of a dataset (the
        # last of those), a __call__ first; then a name that hints at one.
        scored = [(self._dataset_calls(n), line, n) for line, n in functions + methods]
        best = max((score for score, _, _ in scored), default=0)
        if best > 0:
            builders = [n for score, _, n in sorted(scored, key=lambda t: t[1]) if score == best]
            calls = [n for n in builders if n.endswith(".__call__")]
            return (calls or builders)[-1]
        for group in (functions, methods):
            hinted = [n for _, n in group if not n.split(".")[-1].startswith("_") and
                      any(w in n.split(".")[-1].lower() for w in ENTRY_HINTS)]
            if hinted:
                return hinted[-1]
        if functions:
            return functions[-1][1]
        raise Failure(f"{self.request.file} defines no function to call; name the input "
                      f"function with --entry")

    def _load_uses(self):
        """The file's load-time uses of datasets, one per dataset (its
        strongest: distributed, then fit, then iterated), in file order."""
        best = {}
        for use in session.current.load_uses:
            kept = best.get(id(use.dataset))
            if kept is None or use.rank < kept.rank:
                best[id(use.dataset)] = use
        return [u for u in session.current.load_uses if best.get(id(u.dataset)) is u]

    def _held(self, dataset):
        """The global that holds `dataset`, or None."""
        for name, value in self.module.__dict__.items():
            if value is dataset and not name.startswith("__"):
                return name
        return None

    def _where(self, site):
        if site is None:
            return ""
        return f"line {site[1]}" if site[0] == self.request.file else f"{site[0]}:{site[1]}"

    def _load_choice(self, uses):
        """The one use of the strongest rank among `uses`; several: an
        error that lists them and says how to pick one."""
        if not uses:
            return None
        rank = min(u.rank for u in uses)
        top = [u for u in uses if u.rank == rank]
        if len(top) == 1:
            return top[0]
        verb = ("distributes", "hands Keras", "iterates over")[min(rank, 2)]
        listed = [f"{self._held(u.dataset) or self._where(u.site)} ({u.how} at "
                  f"{self._where(u.site)})" for u in top]
        pick = self._held(top[0].dataset) or str(top[0].site[1])
        raise Failure(f"{self.request.file} {verb} {len(top)} datasets while it loads: "
                      f"{', '.join(listed)}; name the one to lay out with --entry, a global "
                      f"that holds it or the line of its call (--entry {pick}), or name the "
                      f"input function with --entry")

    def _load_entry(self, want, uses):
        """--entry naming a global that holds a dataset, or the line of a
        load-time use: that dataset, as the file built it."""
        if want.isdigit():
            at = [u for u in uses if u.site and u.site[0] == self.request.file
                  and u.site[1] == int(want)]
            return min(at, key=lambda u: u.rank) if at else None
        value = self.module.__dict__.get(want)
        if not isinstance(value, datasets.Dataset):
            return None
        for use in uses:
            if use.dataset is value:
                return use
        return data.LoadUse(value, want, 3, None)

    def _dataset_calls(self, name):
        """How many tf.data names the code of function `name` (nested
        functions included) refers to."""
        obj = self.module.__dict__.get(name.split(".")[0])
        for part in name.split(".")[1:]:
            obj = getattr(obj, part, None)
        code = getattr(getattr(obj, "__func__", obj), "__code__", None)
        names, stack = set(), [code] if code else []
        while stack:
            c = stack.pop()
            names.update(c.co_names)
            stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        return len(names & DATASET_NAMES)

    def other_entries(self, entry):
        functions, methods = self._candidates()
        names = [n for _, n in functions] + list(dict.fromkeys(n for _, n in methods))
        return [n for n in names if n != entry and not n.split(".")[-1].startswith("_")]

    def _instance(self, class_name):
        cls = self.module.__dict__[class_name]
        init = cls.__init__
        defines = self.values
        if init is object.__init__:
            obj = cls()
        else:
            try:
                sig = inspect.signature(init)
            except (TypeError, ValueError):
                sig = None
            params = [p for p in list(sig.parameters.values())[1:]
                      if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)] if sig else []
            missing = [p.name for p in params if p.default is p.empty and p.name not in defines
                       and not is_context_parameter(p)]
            if missing:
                obj = object.__new__(cls)
                data.assume(f"{class_name}.__init__ was not run (it takes "
                            f"{', '.join(missing)}: --define them to run it); self has only the "
                            f"attributes given with --define self.NAME=...")
            else:
                kwargs = {p.name: defines[p.name] for p in params if p.name in defines}
                self.used.update(kwargs)
                obj = cls(**kwargs)
        for name, value in defines.items():
            if name.startswith("self."):
                self._set_path(obj, name.split(".")[1:], value, name)
        self.self_object = obj
        return obj

    def _bind(self, fn, label):
        """Arguments for `fn` from the context and the defines."""
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return [], {}, []
        kwargs, shown, missing = {}, [], []
        for p in sig.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            context = is_context_parameter(p) and p.name not in self.values
            if context and self.request.api == "distribute":
                # experimental_distribute_dataset: the function makes the
                # whole dataset, without a context.
                if p.default is p.empty:
                    code = getattr(fn, "__code__", None)
                    raise Failure(f"{label}() takes {p.name}, an input context, which only "
                                  f"distribute_datasets_from_function gives (--api "
                                  f"from-function)",
                                  (code.co_filename, code.co_firstlineno) if code else None)
            elif context:
                kwargs[p.name] = session.current.context
                self.api = "from-function"
                shown.append(f"{p.name}=<input context>")
            elif p.name in self.values:
                kwargs[p.name] = self.values[p.name]
                self.used.add(p.name)
                value = self.values[p.name]
                shown.append(f"{p.name}=<input context>" if value is session.current.context
                             else f"{p.name}={_short_repr(value)}")
            elif p.default is p.empty:
                missing.append(p.name)
        if missing:
            site = None
            code = getattr(fn, "__code__", None)
            if code is not None:
                site = (code.co_filename, code.co_firstlineno)
            hints = {p.name: _tfx_hint(p) for p in sig.parameters.values()}
            raise Failure(f"{label}() needs {', '.join(missing)}: give "
                          f"{'it' if len(missing) == 1 else 'them'} with "
                          + " ".join(f"--define {m}={hints[m] or 'VALUE'}" for m in missing)
                          + _said(f"{m}={hints[m]} is {_TFX_SAID[hints[m]]}"
                                  for m in missing if hints[m]), site)
        positional_only = [p.name for p in sig.parameters.values() if p.kind == p.POSITIONAL_ONLY]
        args = [kwargs.pop(n) for n in positional_only if n in kwargs]
        return args, kwargs, shown

    def call_entry(self, name):
        if isinstance(name, data.LoadUse):
            return self._load_dataset(name)
        if "." in name:
            class_name, method = name.split(".", 1)
            obj = self._instance(class_name)
            fn = getattr(obj, method)
        else:
            fn = self.module.__dict__[name]
        label = name
        calls = []
        result = None
        for _ in range(MAX_BUILDER_CALLS):
            args, kwargs, shown = self._bind(fn, label)
            calls.append(f"{label}({', '.join(shown)})")
            result = fn(*args, **kwargs)
            result = _one_of(result, label)
            if isinstance(result, datasets.Dataset):
                break
            if callable(result) and not isinstance(result, (type, Unknown)):
                fn = result
                label = getattr(result, "__name__", "the returned function")
                continue
            if session.current.iterated:
                # A TF1 input function returns iterator.get_next() of its dataset.
                result, site = session.current.iterated[-1]
                data.assume(f"{label}() returns the next element of an iterator; laid out: "
                            f"the dataset iterated", site)
                break
            raise Failure(f"{label}() returned {_kind(result)}, not a tf.data.Dataset"
                          + _factory_hint(result), not_input=True)
        else:
            raise Failure(f"{name}: still a function after {MAX_BUILDER_CALLS} calls")
        self.entry_text = " -> ".join(calls)
        return result

    def _load_dataset(self, use):
        """The dataset the file built as it loaded, laid out as it is."""
        held = self._held(use.dataset)
        if use.site is None:
            self.entry_text = f"{use.how}, the dataset the file built as it loaded"
        else:
            self.entry_text = (f"{use.how} at {self._where(use.site)}"
                               + (f" ({held})" if held and held != use.how else "")
                               + ", as the file runs it")
        self.load_api = use.api
        if use.strategy is not None:
            req = self.request
            name, site = use.strategy
            data.assume(f"{name}(): laid out on tfdist's topology, --workers {req.workers} and "
                        f"--replicas {req.replicas} ({req.workers * req.replicas} replicas in "
                        f"sync), not on the devices the strategy itself would find", site)
        return use.dataset

    def unused_defines(self):
        out = []
        for name, _ in self.request.defines:
            root = name.split(".")[0]
            if name in self.used or root == "self" or "." in name:
                continue
            if not re.search(r"\b" + re.escape(root) + r"\b", self.source):
                out.append(name)
        return out


def _stored_globals(code):
    """The names the module's code sets as globals (assigned, imported,
    defined, or declared global in a function and assigned there)."""
    names, stack, top = set(), [code], True
    while stack:
        c = stack.pop()
        for ins in dis.get_instructions(c):
            if ins.opname == "STORE_GLOBAL" or (top and ins.opname == "STORE_NAME"):
                names.add(ins.argval)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        top = False
    return names


# code -> (its instructions, index by offset): decoded once per file. Not
# the session's: a code object's bytecode is the same in every trace.
_decoded = {}


def _import_bindings(frame, module):
    """(name, value, holder, attr) of what the import statement running in
    `frame` will bind: read from its bytecode, as IMPORT_FROM and STORE_*
    will do it (the value read as holder.attr; attr None: the module)."""
    code = frame.f_code
    if code not in _decoded:
        try:
            instructions = list(dis.get_instructions(code))
        except (TypeError, ValueError):
            instructions = []
        _decoded.clear()  # one file's top level at a time
        _decoded[code] = (instructions, {ins.offset: i for i, ins in enumerate(instructions)})
    instructions, index = _decoded[code]
    at = index.get(frame.f_lasti)
    if at is None or instructions[at].opname != "IMPORT_NAME":
        return []
    out, current, holder, attr = [], module, None, None
    for ins in instructions[at + 1:]:
        if ins.opname in ("STORE_NAME", "STORE_GLOBAL"):
            out.append((ins.argval, current, holder, attr))
            current, holder, attr = module, None, None
        elif ins.opname == "IMPORT_FROM":
            try:
                current, holder, attr = getattr(current, ins.argval), current, ins.argval
            except Exception:
                return out
        elif ins.opname == "SWAP" or (ins.opname == "POP_TOP" and current is not module):
            continue  # import a.b.c as d: the chain goes on
        else:
            break
    return out


def _short_repr(value, width=60):
    # An object's default repr holds its address, which differs run to run.
    text = re.sub(r"<([\w.]+) object at 0x[0-9a-f]+>", r"<\1 object>", repr(value))
    if len(text) <= width:
        return text
    if isinstance(value, (list, tuple)) and value:
        return f"{text[0]}{_short_repr(value[0], width // 2)}, ... {len(value)} items{text[-1]}"
    return text[:width - 3] + "..."


def _usable(value):
    return isinstance(value, datasets.Dataset) or \
        (callable(value) and not isinstance(value, (type, Unknown)))


def _one_of(result, label):
    """A builder that returns its input function beside other values
    (`input_fn, info = get_input_fn(...)`): the one dataset or function of a
    returned tuple is the result, said as an assumption; several are an
    error naming them."""
    if not isinstance(result, tuple):
        return result
    usable = [i for i, v in enumerate(result) if _usable(v)]
    if len(usable) > 1:
        raise Failure(f"{label}() returned a tuple holding {len(usable)} datasets or functions "
                      f"(items {', '.join(map(str, usable))}); tfdist lays out one input "
                      f"function: name it with --entry", not_input=True)
    if not usable:
        return result
    i = usable[0]
    data.assume(f"{label}() returned a tuple of {len(result)}; laid out: its item {i} "
                f"({_kind(result[i])})", None)
    return result[i]


_TFX_SAID = {
    "DATA_ACCESSOR": "the DataAccessor TFX's Trainer passes, reading tf.Example records",
    "UNKNOWN": "a transform output whose feature spec and schema stay opaque",
}


def _said(notes):
    """ (NOTE; NOTE) after a hint, set apart by a space so that the shell
    word of its last --define ends where it should; "" for none."""
    notes = list(notes)
    return f" ({'; '.join(notes)})" if notes else ""


def _tfx_hint(p):
    """The define that gives a TFX trainer parameter (a DataAccessor, a
    TFTransformOutput), by its annotation or its usual name; else None."""
    annotation = "" if p.annotation is p.empty else repr(p.annotation)
    if "DataAccessor" in annotation or p.name == "data_accessor":
        return "DATA_ACCESSOR"
    if "TFTransformOutput" in annotation or p.name == "tf_transform_output":
        return "UNKNOWN"
    return None


def _factory_hint(value):
    """For the unknown that X.tf_dataset_factory(...) made: the define that
    gives X, TFX's DataAccessor."""
    if not isinstance(value, Unknown):
        return ""
    name = value._name
    i = name.find(".tf_dataset_factory(")
    if i <= 0 or not re.fullmatch(r"[A-Za-z_][\w.]*", name[:i]):
        return ""
    return (f"; {name[:i]} is TFX's DataAccessor: --define {name[:i]}=DATA_ACCESSOR gives "
            f"the one TFX's Trainer passes (tf.Example records read by tfx_bsl's "
            f"TFExampleRecord)")


def _kind(value):
    if value is None:
        return "None"
    if isinstance(value, Unknown):
        return f"an unknown value ({value._name})"
    return f"a {type(value).__name__}"


# A trace per worker (the code computes with input_pipeline_id) runs the
# user's file this many times at most.
MAX_WORKER_TRACES = 4096


def trace(request):
    """The trace's answer: one chain, or, when the code computes with the
    worker's index, a chain per worker (worker_chains)."""
    tf = standin.install()
    try:
        return trace_once(request, tf)
    except WorkerDependent as e:
        site = exception_site(e)
    where = f"{site[0]}:{site[1]}: " if site else ""
    if request.workers > MAX_WORKER_TRACES:
        return {"error": _error_json(
            f"input_pipeline_id differs from worker to worker and the code computes with it, "
            f"so tfdist runs the function once per worker, at most {MAX_WORKER_TRACES} times; "
            f"got {request.workers} workers", site)}
    results, said = [], []
    for worker in range(request.workers):
        standin.forget_user_modules()
        result = trace_once(request, tf, worker)
        if "error" in result:
            result["error"]["message"] = f"worker {worker}: {result['error']['message']}"
            return result
        results.append(result)
        said += [a for a in result["assumptions"] if a not in said]
    out = results[0]
    chains = [r["chain"] for r in results]
    out["assumptions"] = said + [
        f"{where}the code computes with input_pipeline_id: the function was called once per "
        f"worker ({request.workers} calls)"]
    if len(set(chains)) > 1:
        out["worker_chains"] = chains
    return out


def trace_once(request, tf, worker=None):
    """One trace; `worker` set: worker `worker`'s, its index a number. The
    one place a session starts: nothing one trace learnt or the code set
    reaches the next."""
    session.start()
    seeds.start_op_seeds(request.global_seed, request.op_seed_offset)
    session.current.context = standin.context_for(request.workers,
                                                  request.worker if worker is None else worker,
                                                  request.replicas, concrete=worker is not None)
    session.current.strategy_replicas = request.workers * request.replicas
    tracer = Tracer(request, tf)
    entry = None

    def chosen(message, not_input=False):
        """A failure of an entry picked by default says so, and the others."""
        if entry is None or request.entry or not (tracer.default_entry or not_input):
            return message
        others = tracer.other_entries(entry)
        listed = ", ".join(others[:8]) + (", ..." if len(others) > 8 else "")
        return (f"{message} ({entry} is the function tfdist picked"
                + (f"; the file also defines {listed}" if others else "")
                + ": name the input function with --entry)")

    try:
        session.current.loading = True
        tracer.load()
        session.current.loading = False
        entry = tracer.choose_entry()
        dataset = tracer.call_entry(entry)
        chain = data.chain_of(dataset)
        options = data.merged_options(dataset)
    except Failure as f:
        return {"error": _error_json(chosen(f.message, f.not_input), f.site)}
    except WorkerDependent:
        raise
    except KeyboardInterrupt as e:  # tfdist's time limit: where the code was
        return {"error": _error_json("interrupted", exception_site(e),
                                     kind="timeout")}
    except MemoryError as e:
        return {"error": _error_json(f"MemoryError: the trace may use {request.memory_mib} MiB",
                                     exception_site(e))}
    except BaseException as e:  # the user's code failed: report it at its line
        namespaces = []
        if tracer.module is not None:
            namespaces.append(("", tracer.module.__dict__))
        if tracer.self_object is not None:
            namespaces.append(("self", vars(tracer.self_object)))
        message = describe_exception(e, namespaces, tracer.self_object,
                                     session.current.loading)
        none_read = session.current.flags_none_read
        if none_read and not isinstance(e, NeedValue):
            # absl gives a flag its None default; the code may have needed one.
            flags = ", ".join(f"FLAGS.{n}" for n in none_read)
            message += (f"; {flags} {'is' if len(none_read) == 1 else 'are'} None, the DEFINE "
                        f"default: if the code needs a value, give it with "
                        + " ".join(f"--define FLAGS.{n}=VALUE" for n in none_read))
        return {"error": _error_json(chosen(message), exception_site(e))}
    finally:
        session.current.loading = False
    for name in tracer.unused_defines():
        data.assume(f"--define {name}: no parameter or name of that spelling in the code")
    api = tracer.load_api or session.current.api or tracer.api
    result = {
        "chain": chain,
        "entry": tracer.entry_text,
        "api": api,
        "options": options,
        "assumptions": list(session.current.assumptions),
    }
    if session.current.global_seed is not None:
        seed, site = session.current.global_seed
        result["global_seed"] = {"value": seeds.known_seed(seed),
                                 "site": f"{site[0]}:{site[1]}"}
    return result


def _error_json(message, site, kind=None):
    out = {"message": message}
    if kind:
        out["kind"] = kind
    if site:
        out["file"] = site[0]
        out["line"] = site[1]
        text = linecache.getline(site[0], site[1]).rstrip("\n")
        if text:
            out["source"] = text.strip()
    return out


def main(argv):
    result_fd = int(argv[0])
    if len(argv) >= 3:  # tfdist answers listings of object-store URLs here
        tf_io.LISTING_FDS = (int(argv[1]), int(argv[2]))
    # The request is ASCII JSON; a name's byte that is not UTF-8 comes as
    # \udcXX and loads as the str os.fsdecode makes (doc/python.md).
    raw = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    sys.stdin = open(os.devnull)
    out = os.fdopen(result_fd, "w", encoding="utf-8")
    try:
        result = trace(Request(raw))
    except RecursionError:
        result = {"error": {"message": "the input function recursed too deep"}}
    json.dump(result, out, ensure_ascii=True)
    out.close()
    return 0
