"""numba compile options shared by the hot kernels.

NO_REFCOUNT compiles a kernel without numba's reference counting (NRT), via numba's
underscore option `_nrt`. numba otherwise emits an atomic incref/decref call for every
array argument of every (inlined) helper call and every array view; in the joint loops that
was about 80 such calls per joint visit, several times the cost of the arithmetic. Rules
for a kernel compiled this way: it allocates no arrays (numba refuses to type np.empty
there) and only indexes arrays its caller keeps alive; it is called from other kernels,
not from Python.

Inlining: `inline='always'` (numba inlines the helper's IR into every caller, which then
types and compiles it again) is kept on the contact hot path (impulses.py, contacts/solve.py,
contacts/rows.py, contacts/friction.py, solvers/contact_tree.py): without it contact scenes ran
2.6-3.6x slower (box_stack, pyramid, wall_car; issue 19); and on the joints' visits
(joints/ball.py, joints/dispatch.py, the helpers of joints/generic.py and joints/rows.py): a
call hands its callee every array argument as an exploded struct (the Bodies and Joints
tuples: some 300 words), which cost chain8's velocity loop 49 ns a check against 24 inlined,
and a slider crank's hinge 845 ns a position check against 341. Solvers, rotations and
motion call their helpers (LLVM inlines the small ones); taking inlining off everywhere but
the contacts had cut the first compile from 571 to 449 CPU seconds.
"""
import copy
import os


def _no_refcount_option() -> dict:
    """{"_nrt": False} where this numba knows the option (checked by tests/test_first_start.py
    for the versions pyproject.toml allows); else {} (slower: refcounts kept)."""
    try:
        from numba.core.cpu import CPUTargetOptions
    except ImportError:
        return {}
    return {"_nrt": False} if hasattr(CPUTargetOptions, "_nrt") else {}


NO_REFCOUNT = _no_refcount_option()
# numba hands a kernel's `_nrt` to every callee compiled while typing it, unless the callee
# sets its own: a kernel that allocates (or calls one that does) and is called from a
# NO_REFCOUNT kernel says REFCOUNT, or a first compile that reaches it through that caller
# fails ("NRT required") while a warm cache hides it
REFCOUNT = {"_nrt": True} if NO_REFCOUNT else {}


def one_compile_per_type():
    """Compile a kernel once per argument *type*, not once per constant value.

    When a kernel calls another with a constant (`axis_at(..., 0, 2, False)`), numba types
    the constant as a literal and compiles the callee anew for each value: 424 compiles of
    227 kernels, a third of the first start. This drops the literal before the callee is
    compiled (LLVM still folds the constant where it inlines the callee). It wraps numba's
    `Dispatcher.get_call_template` (an internal, checked by tests/test_kernel_cache.py for
    the numba versions in pyproject.toml); where that is missing the kernels simply compile
    per value, as before.
    """
    from numba.core import dispatcher, types

    original = getattr(dispatcher.Dispatcher, "get_call_template", None)
    if original is None or getattr(original, "drops_literals", False):
        return
    package = __name__.rsplit(".", 1)[0]          # "engine" (or "impulse.engine")

    def get_call_template(self, args, kws):
        module = getattr(self.py_func, "__module__", "") or ""
        if module != package and not module.startswith(package + "."):
            return original(self, args, kws)           # numba's own overloads as they are
        return original(self, tuple(types.unliteral(a) for a in args),
                        {k: types.unliteral(v) for k, v in kws.items()})
    get_call_template.drops_literals = True
    dispatcher.Dispatcher.get_call_template = get_call_template


def numpy_division():
    """Compile the engine's kernels with numba's `error_model="numpy"`: a float division by
    zero gives inf or NaN, as numpy does, instead of raising ZeroDivisionError out of the
    step. A step that divides by zero (a scene far beyond its bounds: a joint anchor 300 km
    away) then leaves a non-finite body, and the finite-state guard stops that body and
    reports it; a ZeroDivisionError would have ended the step half done (found by
    tests/test_engine_fuzz.py). Results of every other division are the same; numba also
    drops its zero checks. Set per kernel on its first compile (Dispatcher.compile, an
    internal like get_call_template above), leaving a kernel's own error_model alone.
    """
    from numba.core import dispatcher

    original = dispatcher.Dispatcher.compile
    if getattr(original, "numpy_division", False):
        return
    package = __name__.rsplit(".", 1)[0]

    def compile(self, sig):
        module = getattr(self.py_func, "__module__", "") or ""
        if module == package or module.startswith(package + "."):
            self.targetoptions.setdefault("error_model", "numpy")
        return original(self, sig)
    compile.numpy_division = True
    dispatcher.Dispatcher.compile = compile


class _BlocksShareOneScope:
    """Stands for the `copy` module in numba.core.inline_closurecall (quick_inlining): a
    block deep-copied while `memos` is set shares its memo with the blocks of the same
    scope, so the scope and its variables are copied once per copy of a function's IR."""
    memos = None

    def deepcopy(self, x, memo=None):
        from numba.core import ir
        if memo is None and self.memos is not None and isinstance(x, ir.Block):
            memo = self.memos.setdefault(id(x.scope), {})
        return copy.deepcopy(x, memo)

    def __getattr__(self, name):
        return getattr(copy, name)


def quick_inlining():
    """Inline `inline='always'` kernels in a third less compile time, with the same result.

    To inline a kernel, numba copies its IR block by block, each with its own
    `copy.deepcopy` (`InlineWorker.inline_ir`'s `copy_ir`), and every variable of a block
    refers to the function's scope, which holds all its variables: each block copies the
    whole scope again. For the joints' correct_position (83 inlined calls) that was 12
    million deep copies, 80 of the 140 s of its compile under a profiler; with the blocks
    of one copy sharing one memo, 1.2 million, and the compile took 25-30 s instead of
    39-50 s (2026-12-01). The copies are the same but for sharing what the original shares
    (one scope for all blocks, as the function has), which numba's inliner expects of the
    IR it starts from. Works on numba's internals (`inline_closurecall.copy`,
    `InlineWorker.inline_ir`), checked by tests/test_first_start.py for the numba versions
    pyproject.toml allows; where they are missing, inlining is as slow as before, as it is
    with IMPULSE_INLINING=numba in the environment (to compare, or to rule this out).
    """
    if os.environ.get("IMPULSE_INLINING") == "numba":
        return
    try:
        from numba.core import inline_closurecall as icc
    except ImportError:
        return
    worker = getattr(icc, "InlineWorker", None)
    original = getattr(worker, "inline_ir", None)
    if original is None or getattr(original, "quick", False) or \
            getattr(icc, "copy", None) is not copy:
        return
    shared = _BlocksShareOneScope()

    def inline_ir(self, *args, **kwargs):
        outer, shared.memos = shared.memos, {}
        try:
            return original(self, *args, **kwargs)
        finally:
            shared.memos = outer
    inline_ir.quick = True
    icc.copy = shared
    worker.inline_ir = inline_ir
