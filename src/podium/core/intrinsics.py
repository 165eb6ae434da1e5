"""LLVM intrinsics for the compiled kernels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

__all__ = ["PREFETCH_AHEAD", "prefetch"]


@intrinsic
def _prefetch(typingctx: Any, arr: Any, i: Any) -> Any:
    """Hint the CPU to fetch ``arr[i]`` (a 1-d array) into the cache
    (``llvm.prefetch``, for reading; no effect on any value)."""
    sig = types.void(arr, i)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]],
                                       wraparound=False)
        i8p = builder.bitcast(ptr, ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p.type, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        # read access, high temporal locality, data cache
        builder.call(fn, [i8p, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


#: ``prefetch(arr, i)`` in compiled code (typed for callers as what they call).
prefetch = cast(Callable[[Any, Any], None], _prefetch)

#: How many rows ahead the serial loops over a round's participants prefetch (the rows
#: of a participant a few places later are fetched while this one is worked on).
PREFETCH_AHEAD = 8
