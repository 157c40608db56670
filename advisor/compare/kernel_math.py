"""The compiled kernel's arithmetic: LLVM intrinsics (min/max reductions, floor, bit casts), the
exact float16/bfloat16 -> float64 conversion of array elements, and a vectorisable e^v for v <= 0.

Part of the optional numba kernel (``advisor.compare.kernel``); kept apart so that the kernel's
module holds the passes only.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types  # first: without numba, the ImportError names numba
from llvmlite import ir  # numba's own dependency
from numba.core import cgutils
from numba.extending import intrinsic, overload

# the exponential must not be reassociated: (v*log2e + M) - M is the rounding to an integer
EXP_FLAGS = {"nsz", "arcp", "contract"}

_LOG2E = 1.4426950408889634
_LN2_HI = 0.6931471803691238  # ln 2 split in two for an exact k*ln2 (Cody-Waite)
_LN2_LO = 1.9082149292705877e-10
_ROUND = 6755399441055744.0  # 1.5 * 2^52: adding it rounds a double to an integer (kept in the low bits)
_EXP_BIAS = 1023 << 52


def _binary_intrinsic(name: str):
    @intrinsic
    def _op(typingctx, a, b):
        def codegen(context, builder, sig, args):
            fnty = ir.FunctionType(ir.DoubleType(), [ir.DoubleType(), ir.DoubleType()])
            return builder.call(cgutils.get_or_insert_function(builder.module, fnty, name), args)

        return types.float64(types.float64, types.float64), codegen

    return _op


# llvm.maxnum/minnum vectorise as reductions where Python's max()/conditional expressions do not
#: the larger of two float64 (llvm.maxnum), compiled code only
fmax_f64 = _binary_intrinsic("llvm.maxnum.f64")
#: the smaller of two float64 (llvm.minnum), compiled code only
fmin_f64 = _binary_intrinsic("llvm.minnum.f64")


@intrinsic
def floor_f64(typingctx, a):
    """The floor of a float64 (llvm.floor), compiled code only."""

    def codegen(context, builder, sig, args):
        fnty = ir.FunctionType(ir.DoubleType(), [ir.DoubleType()])
        return builder.call(cgutils.get_or_insert_function(builder.module, fnty, "llvm.floor.f64"), args)

    return types.float64(types.float64), codegen


@intrinsic
def _bits(typingctx, a):
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@intrinsic
def _from_bits(typingctx, a):
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


_TWO_1008 = 2.0**1008  # rebiases a float16's exponent field placed in a float64 (15 -> 1023)


@intrinsic
def _f32_from_bits(typingctx, a):
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.int32), codegen


def as_f64(x):
    """An array element as float64: uint16 elements are float16 bit patterns, int16 ones bfloat16 bit
    patterns (numba has neither type on CPU)."""
    raise NotImplementedError  # compiled code only (see the overload below)


@overload(as_f64)
def _as_f64_overload(x):
    if isinstance(x, types.Integer) and x.bitwidth == 16 and not x.signed:

        def from_half(x):
            h = np.int64(x)
            em = h & 0x7FFF
            # exponent and mantissa into a float64's bits, shifted to line up, then rebiased: exact for
            # normal and subnormal halves; exponent 31 is Inf (mantissa 0) or NaN
            v = _from_bits(em << 42) * _TWO_1008
            v = v if em < 0x7C00 else (math.inf if em == 0x7C00 else math.nan)
            return v * (1.0 - 2.0 * ((h >> 15) & 1))

        return from_half
    if isinstance(x, types.Integer) and x.bitwidth == 16 and x.signed:

        def from_bfloat16(x):  # a bfloat16 is the upper half of a float32: exact, Inf/NaN/subnormals included
            return np.float64(_f32_from_bits((np.int32(x) & 0xFFFF) << 16))

        return from_bfloat16
    if isinstance(x, types.Float):
        return lambda x: np.float64(x)
    return None


@njit(nogil=True, fastmath=EXP_FLAGS, cache=True)
def exp_nonpositive(v: float) -> float:
    """e^v for v <= 0 (v below -708 gives e^-708 ~ 3e-308, not 0: nothing next to the sum's 1)."""
    v = fmax_f64(v, -708.0)
    kd = v * _LOG2E + _ROUND
    k = kd - _ROUND
    z = v - k * _LN2_HI - k * _LN2_LO  # |z| <= ln2/2
    p = 1.0 + z * (
        1.0
        + z
        * (
            0.5
            + z
            * (
                1.0 / 6
                + z
                * (
                    1.0 / 24
                    + z * (1.0 / 120 + z * (1.0 / 720 + z * (1.0 / 5040 + z * (1.0 / 40320 + z * (1.0 / 362880)))))
                )
            )
        )
    )
    # 2^k from the integer in kd's low bits (numba passes an intrinsic's typing context itself)
    return p * _from_bits((_bits(kd) << 52) + _EXP_BIAS)  # type: ignore[call-arg]
