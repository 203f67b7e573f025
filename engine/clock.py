"""A monotonic clock readable from inside numba kernels (for the anytime time budget).

numba has no `time` module in nopython mode; this intrinsic calls libc's
clock_gettime(CLOCK_MONOTONIC) directly and works with `cache=True`.
Under NUMBA_DISABLE_JIT (debugging the kernels as Python) it is time.monotonic_ns.
"""
import time

from llvmlite import ir
from numba import config, types
from numba.core import cgutils
from numba.extending import intrinsic

_CLOCK_MONOTONIC = 1


@intrinsic
def monotonic_ns(typingctx):
    """Nanoseconds of CLOCK_MONOTONIC, as int64 (about 30 ns per call)."""
    sig = types.int64()

    def codegen(context, builder, signature, args):
        i32, i64 = ir.IntType(32), ir.IntType(64)
        timespec = ir.LiteralStructType([i64, i64])
        fnty = ir.FunctionType(i32, [i32, timespec.as_pointer()])
        fn = builder.module.globals.get("clock_gettime")
        if fn is None:
            fn = ir.Function(builder.module, fnty, "clock_gettime")
        ts = cgutils.alloca_once(builder, timespec)
        builder.call(fn, [ir.Constant(i32, _CLOCK_MONOTONIC), ts])
        zero = ir.Constant(i32, 0)
        sec = builder.load(builder.gep(ts, [zero, zero]))
        nsec = builder.load(builder.gep(ts, [zero, ir.Constant(i32, 1)]))
        return builder.add(builder.mul(sec, ir.Constant(i64, 1_000_000_000)), nsec)

    return sig, codegen


if config.DISABLE_JIT:   # kernels run as plain Python
    monotonic_ns = time.monotonic_ns  # noqa: F811
