# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""Values the trace does not know, and the errors that name them.

The user's code runs for real; what it reaches for that tfdist does not
provide (an undefined flag, an unknown module, a tensor inside a mapped
function) is an Unknown. Unknowns flow anywhere; a *setting* fails, naming
itself, where the code needs its value (a branch, a conversion, an argument
of a tf.data op); a *tensor* never fails, as TensorFlow's symbolic tensors
do not while a function is traced.
"""

import dis
import reprlib
import sys

from . import session


# Called as call_hook(unknown, args, kwargs) on each call of an Unknown:
# data.py records what a traced function computes (tf.io.decode_raw) and
# what the loading file hands to Keras (model.fit(dataset)). Not per-trace
# state: data.py sets it once when imported (values.py cannot import it),
# and it records into the current session.
call_hook = None


class TraceError(Exception):
    """An error of the traced program, reported at the user's line."""


class WorkerDependent(TraceError):
    """The code computes with input_pipeline_id: the trace must run once per
    worker."""


class NeedValue(TraceError):
    """The code needs the value of an Unknown setting. `unknown` is the
    value the code holds; its origin() is what a --define can give."""

    def __init__(self, unknown, why):
        super().__init__(why)
        self.unknown = unknown
        self.why = why


def _unpack_count(frame):
    """The n of `a, b, ... = x` being executed in `frame`, or None."""
    if frame is None:
        return None
    try:
        for ins in dis.get_instructions(frame.f_code):
            if ins.offset == frame.f_lasti:
                if ins.opname == "UNPACK_SEQUENCE":
                    return ins.arg
                if ins.opname == "UNPACK_EX":  # a, *b = x: at least the fixed ones
                    return (ins.arg & 0xFF) + (ins.arg >> 8)
                return None
    except (TypeError, ValueError):
        return None
    return None


# The most characters of an unknown's name that messages show: a name is
# spelled on demand from the values it was computed from, so a chain of a
# million operations costs a million small steps, not a million copies of
# an ever longer text (and x = x + x a million times is no longer than this).
NAME_LIMIT = 240
_END = object()


def _spell(parts):
    """The text of a name made of strings and unknowns (their names); past
    NAME_LIMIT characters its start and its end, "..." between them.
    Iterative, whatever the depth."""
    head = _spell_part(parts, NAME_LIMIT + 1, False)
    if len(head) <= NAME_LIMIT:
        return head
    keep = (NAME_LIMIT - 3) // 2
    return head[:keep] + "..." + _spell_part(parts, keep, True)[::-1]


def _spell_part(parts, budget, backwards):
    """The first `budget` characters of the name (reversed: its last ones,
    the text reversed)."""
    out = []
    size = 0
    stack = [reversed(parts) if backwards else iter(parts)]
    while stack and size < budget:
        part = next(stack[-1], _END)
        if part is _END:
            stack.pop()
            continue
        if isinstance(part, Unknown):
            text = object.__getattribute__(part, "_text")
            if text is None:
                inner = object.__getattribute__(part, "_parts")
                stack.append(reversed(inner) if backwards else iter(inner))
                continue
            part = text
        if backwards:
            part = part[::-1]
        out.append(part)
        size += len(part)
    return "".join(out)[:budget]


_repr = reprlib.Repr()
_repr.maxstring = _repr.maxother = 60


class SymbolicLoop(BaseException):
    """A function run on a symbolic element made more unknown values than
    any input function needs: a loop whose end hangs on a value the trace
    does not have (`while len(t.get_shape()) < 4: t = tf.expand_dims(t, -1)`)
    never ends. A BaseException, so the user's `except Exception` lets it by."""


# Unknown values a function run on a symbolic element may make (a million
# take a few seconds); the session's budget is None outside such a function.
FUNCTION_BUDGET = 1_000_000


def run_with_budget(fn, *args):
    """fn(*args) with the budget of unknown values, unless one is running
    (a function traced inside another shares the outer one's)."""
    current = session.current
    if current.budget is not None:
        return fn(*args)
    current.budget = FUNCTION_BUDGET
    try:
        return fn(*args)
    finally:
        current.budget = None


class Unknown:
    """A value the trace does not know (see the module's docstring)."""

    __slots__ = ("_parts", "_text", "_tensor", "_attrs", "_parent", "_key", "_origin",
                 "_called", "__weakref__")

    def __init__(self, name, tensor=False, parent=None, key=None, origin=None, called=False):
        current = session.current
        if current.budget is not None:
            current.budget -= 1
            if current.budget < 0:
                current.budget = FUNCTION_BUDGET  # the handler may compute on
                raise SymbolicLoop(f"it made {FUNCTION_BUDGET} values from symbolic ones "
                                   f"without ending (a loop whose end depends on a value "
                                   f"the trace does not know?)")
        # `name`: its text, or a tuple of texts and the unknowns it was
        # computed from (spelled when a message needs it).
        if isinstance(name, tuple):
            object.__setattr__(self, "_parts", name)
            object.__setattr__(self, "_text", None)
        else:
            object.__setattr__(self, "_parts", (name,))
            object.__setattr__(self, "_text", name)
        object.__setattr__(self, "_tensor", tensor)
        object.__setattr__(self, "_attrs", None)  # made when one is set
        object.__setattr__(self, "_parent", parent)
        object.__setattr__(self, "_key", key)
        # A value computed from an unknown remembers it: the unknown a
        # --define can give (`called`: the computation called it).
        object.__setattr__(self, "_origin", origin)
        object.__setattr__(self, "_called", called)

    @property
    def _name(self):
        text = object.__getattribute__(self, "_text")
        if text is None:
            text = _spell(object.__getattribute__(self, "_parts"))
            object.__setattr__(self, "_text", text)
        return text

    # Attributes: stable children (so `flags.FLAGS` is one object), and
    # assignments kept (options.x.y = 3; --define FLAGS.batch_size=32).
    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        attrs = object.__getattribute__(self, "_attrs")
        if attrs is None:
            attrs = {}
            object.__setattr__(self, "_attrs", attrs)
        if attr not in attrs:
            if self._tensor and attr in _SHAPE_ATTRS:
                attrs[attr] = Shape((self, f".{attr}"))
            else:
                attrs[attr] = Unknown((self, f".{attr}"), self._tensor, self, attr)
        return attrs[attr]

    def origin(self):
        """The unknown this value was computed from (itself if none)."""
        return self._origin if self._origin is not None else self

    def __setattr__(self, attr, value):
        if self._attrs is None:
            object.__setattr__(self, "_attrs", {})
        self._attrs[attr] = value

    def __delattr__(self, attr):
        if self._attrs is not None:
            self._attrs.pop(attr, None)

    def _derive(self, parts, *others, called=False):
        tensor = self._tensor or any(isinstance(o, Unknown) and o._tensor for o in others)
        return Unknown(parts, tensor, origin=self.origin(), called=called or self._called)

    def _need(self, why):
        if self._tensor:
            return False
        raise NeedValue(self, why)

    def __call__(self, *args, **kwargs):
        # An unknown decorator (@gin.configurable, @some_module.register):
        # the function or class stays itself, so the code that uses it runs.
        if len(args) == 1 and not kwargs and (isinstance(args[0], type) or
                                              callable(args[0]) and hasattr(args[0], "__code__")):
            return args[0]
        if call_hook is not None:
            call_hook(self, args, kwargs)
        return self._derive((self, "(...)"), *args, *kwargs.values(), called=True)

    def __mro_entries__(self, bases):
        # class Parser(some_unknown_module.Parser): a base that accepts anything.
        return (AnyBase,)

    # isinstance(x, unknown_module.Config): a plain Python value (a string,
    # a number, a list, a dict, None) is no instance of a class the trace
    # cannot see; anything else (an object, a defined config) is.
    def __instancecheck__(self, instance):
        return not isinstance(instance, _PLAIN)

    def __subclasscheck__(self, cls):
        return not issubclass(cls, _PLAIN)

    def __getitem__(self, key):
        return self._derive((self, "[", _short(key), "]"), key)

    def __setitem__(self, key, value):
        pass

    def __repr__(self):
        return f"<{'tensor' if self._tensor else 'unknown'} {self._name}>"

    def __str__(self):
        self._need("is turned into text")
        return self._name

    def __format__(self, spec):
        return str(self)

    def __fspath__(self):
        # Never a real path: the code would make or remove files so named.
        if self._tensor:
            raise TraceError(f"{self._name} is used as a path, but the trace does not know it")
        raise NeedValue(self, "is used as a path")

    def __bool__(self):
        self._need("decides a branch")
        return True

    def __len__(self):
        self._need("is measured with len()")
        return 1

    def __int__(self):
        self._need("is used as a number")
        return 1

    __index__ = __int__

    def __float__(self):
        self._need("is used as a number")
        return 1.0

    def __complex__(self):
        self._need("is used as a number")
        return 1j

    # An unknown is one value wherever it goes: a copy is itself.
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce_ex__(self, protocol):
        raise TraceError(f"{self._name} is pickled, but the trace does not know it")

    def __iter__(self):
        n = _unpack_count(sys._getframe(1))
        if n is not None:
            return iter([self._derive((self, f"[{i}]")) for i in range(n)])
        self._need("is iterated over")
        return iter(())

    def __contains__(self, item):
        self._need("is searched with 'in'")
        return False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __hash__(self):
        return id(self)

    # Compared with ==, a setting gives an unknown that needs its value where
    # it decides a branch (hash stays identity: dict lookups still work).
    def __eq__(self, other):
        if other is self:
            return True
        return self._derive(("(", self, " == ", _short(other), ")"), other)

    def __ne__(self, other):
        if other is self:
            return False
        return self._derive(("(", self, " != ", _short(other), ")"), other)


def _binary(symbol):
    def forward(self, other):
        return self._derive(("(", self, f" {symbol} ", _short(other), ")"), other)

    def reverse(self, other):
        return self._derive(("(", _short(other), f" {symbol} ", self, ")"), other)

    return forward, reverse


def _short(value):
    """A part of a name: an unknown itself, else a short repr."""
    if isinstance(value, Unknown):
        return value
    try:
        return _repr.repr(value)
    except Exception:  # a user's __repr__ that fails
        return f"<{type(value).__name__}>"


for _op, _symbol in [("add", "+"), ("sub", "-"), ("mul", "*"), ("truediv", "/"),
                     ("floordiv", "//"), ("mod", "%"), ("pow", "**"), ("matmul", "@"),
                     ("and", "&"), ("or", "|"), ("xor", "^"), ("lshift", "<<"),
                     ("rshift", ">>")]:
    _f, _r = _binary(_symbol)
    setattr(Unknown, f"__{_op}__", _f)
    setattr(Unknown, f"__r{_op}__", _r)

for _op, _symbol in [("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">=")]:
    setattr(Unknown, f"__{_op}__", _binary(_symbol)[0])

for _op, _symbol in [("divmod", "divmod")]:
    setattr(Unknown, f"__{_op}__", lambda self, other: self._derive(
        ("divmod(", self, ", ", _short(other), ")"), other))
    setattr(Unknown, f"__r{_op}__", lambda self, other: self._derive(
        ("divmod(", _short(other), ", ", self, ")"), other))

Unknown.__neg__ = lambda self: self._derive(("-", self))
Unknown.__pos__ = lambda self: self
Unknown.__abs__ = lambda self: self._derive(("abs(", self, ")"))
Unknown.__invert__ = lambda self: self._derive(("~", self))
Unknown.__round__ = lambda self, n=None: self._derive(("round(", self, ")"))
Unknown.__trunc__ = lambda self: self._derive(("trunc(", self, ")"))
Unknown.__floor__ = lambda self: self._derive(("floor(", self, ")"))
Unknown.__ceil__ = lambda self: self._derive(("ceil(", self, ")"))


_PLAIN = (str, bytes, int, float, bool, list, tuple, dict, type(None))
_SHAPE_ATTRS = {"shape", "get_shape", "ndims", "rank", "dims"}


class Shape(Unknown):
    """A tensor's shape, or a part of it: code checks shapes to raise on bad
    input (`if t.get_shape().ndims != 3: raise ...`); the symbolic element
    passes every such check (== is true, != false)."""

    __slots__ = ()

    def __init__(self, name):
        super().__init__(name, tensor=True)

    def __call__(self, *args, **kwargs):
        return Shape((self, "()"))

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Shape((self, f".{attr}"))

    def __getitem__(self, key):
        return Shape((self, "[", _short(key), "]"))

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = Unknown.__hash__


class AnyBase:
    """The base class an unknown module's class stands for: construction
    takes any arguments; a missing attribute is an unknown setting; the
    config idioms replace(), as_dict() and get() work on dataclasses."""

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Unknown(f"{type(self).__name__}.{attr}")

    def replace(self, **changes):
        import copy
        import dataclasses
        if dataclasses.is_dataclass(self):
            return dataclasses.replace(self, **changes)
        out = copy.copy(self)
        for key, value in changes.items():
            setattr(out, key, value)
        return out

    def as_dict(self):
        import dataclasses
        return dataclasses.asdict(self) if dataclasses.is_dataclass(self) else dict(vars(self))

    def get(self, key, default=None):
        return getattr(self, key, default)


def is_unknown(value):
    return isinstance(value, Unknown)


def tensor(name):
    """A symbolic tensor: an element inside a traced function, or what a
    stand-in op computes."""
    return Unknown(name, tensor=True)


def setting(name):
    """An unknown setting: its value is needed where it decides anything."""
    return Unknown(name)


class ContextInt(int):
    """An int of tf.distribute.InputContext that is the same on every
    worker (num_input_pipelines, num_replicas_in_sync, a per-replica batch
    size): the code may compute with it; passed to a tf.data op unchanged
    it stays the symbol tfdist fills in."""

    def __new__(cls, value, symbol):
        obj = super().__new__(cls, value)
        obj.symbol = symbol
        return obj

    def __repr__(self):
        return self.symbol

    # As text it is its number (a file name built from it names a file).
    def __str__(self):
        return int.__repr__(self)

    def __format__(self, spec):
        return int.__format__(int(self), spec)


class WorkerIndex:
    """input_context.input_pipeline_id: it differs from worker to worker, so
    tfdist follows it only where it reaches a tf.data op unchanged (each
    worker's value filled in there); any other use would trace one worker's
    pipeline only, and is refused."""

    symbol = "ctx.input_pipeline_id"

    def __init__(self, value):
        self.value = value

    def _refuse(self, *args, **kwargs):
        raise WorkerDependent(
            f"{self.symbol} differs from worker to worker, and the code computes with it here")

    def __repr__(self):
        return self.symbol

    def __hash__(self):
        return hash(self.symbol)


for _name in ["__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__floordiv__", "__rfloordiv__", "__truediv__", "__rtruediv__", "__mod__",
              "__rmod__", "__pow__", "__rpow__", "__eq__", "__ne__", "__lt__", "__le__",
              "__gt__", "__ge__", "__bool__", "__index__", "__int__", "__float__", "__neg__",
              "__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "__len__",
              "__iter__", "__str__", "__format__"]:
    setattr(WorkerIndex, _name, WorkerIndex._refuse)
