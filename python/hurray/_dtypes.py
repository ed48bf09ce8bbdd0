"""Element types: what dtype= accepts (names, numpy dtypes and character
codes, torch dtypes, DLDataType) and what DLPack can describe."""
from . import _lib
from ._constants import DL_BFLOAT, DL_BOOL, DL_COMPLEX, DL_FLOAT, DL_INT, DL_UINT

_NAMES = {
    "bool": (DL_BOOL, 8), "int8": (DL_INT, 8), "int16": (DL_INT, 16), "int32": (DL_INT, 32),
    "int64": (DL_INT, 64), "uint8": (DL_UINT, 8), "uint16": (DL_UINT, 16),
    "uint32": (DL_UINT, 32), "uint64": (DL_UINT, 64), "float16": (DL_FLOAT, 16),
    "float32": (DL_FLOAT, 32), "float64": (DL_FLOAT, 64), "bfloat16": (DL_BFLOAT, 16),
    "complex32": (DL_COMPLEX, 32), "complex64": (DL_COMPLEX, 64),
    "complex128": (DL_COMPLEX, 128),
}
# torch's names for the same types (torch.half, torch.cfloat, ...).
_TORCH_ALIASES = {"half": "float16", "float": "float32", "double": "float64",
                  "short": "int16", "int": "int32", "long": "int64", "chalf": "complex32",
                  "cfloat": "complex64", "cdouble": "complex128"}
_KINDS = {"b": DL_BOOL, "i": DL_INT, "u": DL_UINT, "f": DL_FLOAT, "c": DL_COMPLEX}
_CODES = {v: k for k, v in _KINDS.items()}


class DTypeError(ValueError):
    """A dtype DLPack cannot describe (non-native byte order, x87 long
    double, object, string, datetime ...)."""


def _from_numpy(dt):
    import numpy
    if dt.kind not in _KINDS or dt.fields is not None or dt.subdtype is not None:
        raise DTypeError("hurray: numpy dtype %s has no DLPack type" % dt)
    if not dt.isnative:
        raise DTypeError("hurray: numpy dtype %s is not in native byte order; DLPack has no "
                         "byte order (use .astype(%r) first)" % (dt.str, dt.newbyteorder("=").str))
    if dt.kind in "fc":
        real = dt if dt.kind == "f" else numpy.dtype("f%d" % (dt.itemsize // 2))
        # x87 extended precision (numpy.longdouble on x86): 64-bit mantissa
        # in 80 bits, padded to 96 or 128. DLPack's float128 is IEEE binary128.
        if real.itemsize > 8 and numpy.finfo(real).nmant != 112:
            raise DTypeError("hurray: numpy dtype %s is x87 extended precision (%d-bit "
                             "mantissa), which DLPack cannot describe" % (dt, numpy.finfo(real).nmant))
    bits = dt.itemsize * 8
    if bits > 255:
        raise DTypeError("hurray: numpy dtype %s is %d bits; DLPack's bits field holds 255"
                         % (dt, bits))
    return _lib.DLDataType(_KINDS[dt.kind], bits, 1)


def dl_dtype(dtype):
    """A DLDataType from "float32", "<f4", "f", "d", "bfloat16", a numpy dtype,
    scalar type or array, a torch dtype or a DLDataType."""
    if isinstance(dtype, _lib.DLDataType):
        if dtype.bits == 0 or dtype.lanes == 0:
            raise DTypeError("hurray: DLDataType with %d bits and %d lanes" % (dtype.bits,
                                                                               dtype.lanes))
        return _lib.DLDataType(dtype.code, dtype.bits, dtype.lanes)
    if type(dtype).__module__ == "torch" and type(dtype).__name__ == "dtype":
        name = str(dtype).split(".", 1)[1]
        name = _TORCH_ALIASES.get(name, name)
        if name not in _NAMES:
            raise DTypeError("hurray: %s has no DLPack type" % dtype)
        code, bits = _NAMES[name]
        return _lib.DLDataType(code, bits, 1)
    if isinstance(dtype, str) and dtype in _NAMES:
        code, bits = _NAMES[dtype]
        return _lib.DLDataType(code, bits, 1)
    try:
        import numpy
    except ImportError:  # without numpy: the names above and "<f4"-style strings
        s = str(dtype).lstrip("<=|")
        if len(s) >= 2 and s[0] in _KINDS and s[1:].isdigit():
            return _lib.DLDataType(_KINDS[s[0]], int(s[1:]) * 8, 1)
        raise DTypeError("hurray: unknown dtype %r (numpy is not installed)" % (dtype,))
    try:
        dt = numpy.dtype(dtype.dtype if hasattr(dtype, "dtype") and not isinstance(
            dtype, (str, type, numpy.dtype)) else dtype)
    except TypeError as e:
        raise DTypeError("hurray: unknown dtype %r (%s)" % (dtype, e)) from None
    return _from_numpy(dt)


def typestr(dt):
    """The numpy array-interface type string ("<f4") of a DLDataType."""
    import sys
    if dt.lanes != 1 or dt.code not in _CODES or dt.bits % 8:
        raise DTypeError("hurray: DLPack dtype {code %d, bits %d, lanes %d} has no numpy "
                         "type" % (dt.code, dt.bits, dt.lanes))
    order = "|" if dt.bits == 8 else ("<" if sys.byteorder == "little" else ">")
    return "%s%s%d" % (order, _CODES[dt.code], dt.bits // 8)


def itemsize(dt):
    return (dt.bits * dt.lanes + 7) // 8


def describe(dt):
    for name, (code, bits) in _NAMES.items():
        if dt.code == code and dt.bits == bits and dt.lanes == 1:
            return name
    return "{code %d, bits %d, lanes %d}" % (dt.code, dt.bits, dt.lanes)
