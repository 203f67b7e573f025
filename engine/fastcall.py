"""Calling a numba kernel from Python without the dispatcher's type resolution.

numba's dispatcher types every argument on every call; for named tuples of arrays that is
done member by member in Python (~0.1 us each), and a step's Bodies, Joints, Springs,
Contacts and solver work hold about 120 arrays: 14 us per step, a tenth of a 10-box stack's
whole step. FastCall remembers the compiled entry point of the signature the dispatcher chose
and calls it directly while the argument objects are the very ones of that call (named
tuples are immutable and an array's dtype, rank and layout cannot change, so the same
objects have the same types; they are kept alive, so their ids stay theirs). Arguments
listed in `loose` may be new objects each call (a float, a fresh float64 vector): they only
need the same kind as before. Arguments listed in `trusted` are left out of the key: the
caller makes them itself, always of one kind (a float, a vector it allocates), and vouches
for it (a call with another kind would read its memory wrongly). Anything else goes
through the dispatcher again. The last
KEPT argument sets are remembered (a pile's Contacts alternate between a few row counts,
contacts/system.py _rows_for).
"""
from collections import OrderedDict
from operator import itemgetter

import numpy as np

from . import interpreted

KEPT = 8


def _kind(a):
    if type(a) is np.ndarray:
        return (a.dtype, a.ndim, a.flags.c_contiguous)
    return type(a)


def _getter(positions):
    """args -> the tuple of args at these positions."""
    if not positions:
        return lambda args: ()
    if len(positions) == 1:
        i = positions[0]
        return lambda args: (args[i],)
    return itemgetter(*positions)


class FastCall:
    def __init__(self, dispatcher, loose=(), trusted=()):
        self.dispatcher = interpreted.kernel(dispatcher)   # made while interpreting
        self.loose = sorted(loose)
        self.trusted = sorted(trusted)
        self._known = OrderedDict()    # key -> (entry point, the arguments held alive)
        self._picks = {}               # argument count -> (_key_of's two getters)

    def _key_of(self, args):
        """The ids of the arguments neither loose nor trusted, then the kinds of the loose
        ones (for each argument count, the positions are found once)."""
        picks = self._picks.get(len(args))
        if picks is None:
            skip = set(self.loose) | set(self.trusted)
            ids = [i for i in range(len(args)) if i not in skip]
            loose = [i for i in self.loose if i < len(args)]
            picks = self._picks[len(args)] = (_getter(ids), _getter(loose))
        return tuple(map(id, picks[0](args))) + tuple(map(_kind, picks[1](args)))

    def resolve(self, *args):
        """The compiled entry point for these arguments (compiled or loaded now if need be),
        without calling it: for threads that call one kernel at once (islands.py), typed
        once here rather than in each thread under the GIL."""
        if not hasattr(self.dispatcher, "overloads"):   # NUMBA_DISABLE_JIT: a plain function
            return self.dispatcher
        if interpreted.active():                        # a first start's kernels as Python
            return self.dispatcher.py_func
        key = self._key_of(args)
        known = self._known.get(key)
        if known is None:
            sig = tuple(self.dispatcher.typeof_pyval(a) for a in args)
            self.dispatcher.compile(sig)
            known = self._known[key] = (self.dispatcher.overloads[sig].entry_point, args)
            if len(self._known) > KEPT:
                self._known.popitem(last=False)
        return known[0]

    def __call__(self, *args):
        if not hasattr(self.dispatcher, "overloads"):   # NUMBA_DISABLE_JIT: a plain function
            return self.dispatcher(*args)
        if interpreted.active():                        # a first start's kernels as Python
            return self.dispatcher.py_func(*args)
        key = self._key_of(args)
        known = self._known.get(key)
        if known is not None:
            return known[0](*args)
        result = self.dispatcher(*args)
        sig = tuple(self.dispatcher.typeof_pyval(a) for a in args)
        self._known[key] = (self.dispatcher.overloads[sig].entry_point, args)
        if len(self._known) > KEPT:
            self._known.popitem(last=False)
        return result
