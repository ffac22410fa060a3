"""trainplan: plan LLM training runs from Python, over libtrainplan (ctypes, standard library only).

Each function takes the model (a preset name or a config.json path) and keyword arguments named
like the CLI's flags without dashes (gpu=, gpus=, tp=, zero=, recompute=, ...) and returns the
dict that ``trainplan VERB ... --format json`` prints: the same keys and the same numbers, since
both come from the library's one evaluation and its JSON documents (tp_call_json).  Bad input
raises trainplan.Error with the library's message; Error.field names the keyword.
"""
import ctypes
import ctypes.util
import json
import os

__version__ = "0.1.0"
__all__ = ["Error", "params", "estimate", "memory", "search", "validate", "calibrate", "version",
           "library_path"]


class Error(Exception):
    """An input the library rejects; ``field`` is the keyword it is about ("" when none)."""

    def __init__(self, message, field=""):
        super().__init__(message)
        self.field = field


class _TpError(ctypes.Structure):
    # struct tp_error (include/trainplan/base.h); its size is checked against tp_struct_size
    _fields_ = [("msg", ctypes.c_char * 512), ("field", ctypes.c_char * 32)]


def _candidates():
    env = os.environ.get("TRAINPLAN_LIBRARY")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libtrainplan.so")  # bundled by pip install (python/_build)
    yield os.path.join(here, "..", "..", "build", "libtrainplan.so")  # a source checkout
    found = ctypes.util.find_library("trainplan")  # make install
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        if os.path.sep not in path or os.path.exists(path):
            try:
                return ctypes.CDLL(path), path
            except OSError as e:
                tried.append("%s (%s)" % (path, e))
        else:
            tried.append(path)
    raise ImportError("libtrainplan.so not found (set TRAINPLAN_LIBRARY); tried: " +
                      ", ".join(tried))


_lib, library_path = _load()
_lib.tp_version.restype = ctypes.c_char_p
_lib.tp_version.argtypes = []
_lib.tp_struct_size.restype = ctypes.c_size_t
_lib.tp_struct_size.argtypes = [ctypes.c_char_p]
_lib.tp_free.restype = None
_lib.tp_free.argtypes = [ctypes.c_void_p]
_lib.tp_call_json.restype = ctypes.c_int
_lib.tp_call_json.argtypes = [ctypes.c_char_p, ctypes.c_char_p,
                              ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p),
                              ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p),
                              ctypes.POINTER(_TpError)]
_lib.tp_call_runs_json.restype = ctypes.c_int
_lib.tp_call_runs_json.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p),
                                   ctypes.c_size_t, ctypes.POINTER(ctypes.c_char_p),
                                   ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                                   ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_TpError)]

if _lib.tp_version().decode() != __version__:
    raise ImportError("libtrainplan %s at %s, the package is %s" %
                      (_lib.tp_version().decode(), library_path, __version__))
if _lib.tp_struct_size(b"tp_error") != ctypes.sizeof(_TpError):
    raise ImportError("struct tp_error is %d bytes in %s, %d here" %
                      (_lib.tp_struct_size(b"tp_error"), library_path, ctypes.sizeof(_TpError)))


def version():
    """The library's version (tp_version)."""
    return _lib.tp_version().decode()


def _text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # locale-independent, round-trips
    return str(value)


def _texts(strings):
    return (ctypes.c_char_p * max(len(strings), 1))(*strings)


def _answer(status, out, err):
    if status != 0:
        raise Error(err.msg.decode(errors="replace"), err.field.decode(errors="replace"))
    try:
        return json.loads(ctypes.string_at(out.value).decode())
    finally:
        _lib.tp_free(out)


def _options(kwargs):
    items = [(k, _text(v)) for k, v in kwargs.items() if v is not None]
    return (_texts([k.encode() for k, _ in items]), _texts([v.encode() for _, v in items]),
            len(items))


def _call(verb, model, kwargs):
    keys, values, n = _options(kwargs)
    out = ctypes.c_void_p()
    err = _TpError()
    status = _lib.tp_call_json(verb.encode(), os.fsencode(model), keys, values, n,
                               ctypes.byref(out), ctypes.byref(err))
    return _answer(status, out, err)


def _call_runs(verb, files, kwargs):
    keys, values, n = _options(kwargs)
    names = _texts([os.fsencode(f) for f in files])
    out = ctypes.c_void_p()
    err = _TpError()
    status = _lib.tp_call_runs_json(verb.encode(), names, len(files), keys, values, n,
                                    ctypes.byref(out), ctypes.byref(err))
    return _answer(status, out, err)


def params(model, **kwargs):
    """``trainplan params MODEL --format json``: exact parameter counts by component and block,
    training FLOPs per token (seq=, recompute=, attention_flops=, mtp=, per_layer=)."""
    return _call("params", model, kwargs)


def estimate(model, **kwargs):
    """``trainplan estimate MODEL --format json``: memory, time per step, tokens/s, MFU, range;
    with tokens= (and gpu_hour_price=) the wall-clock, GPU-hours and cost; calibration= a file."""
    return _call("estimate", model, kwargs)


def memory(model, **kwargs):
    """``trainplan memory MODEL --format json``: the worst stage's bytes per GPU, every stage
    with per_stage=True, and the changes that make it fit."""
    return _call("memory", model, kwargs)


def search(model, **kwargs):
    """``trainplan search MODEL --format json``: the fastest layouts that fit for gbs= (required),
    with top=, max_tp=, max_pp=, max_cp=, max_ep=, max_mbs=, mem_headroom=, no_offload=,
    even_pp=, recompute_modes= ("none,selective"), zero_stages= ("0,1"), calibration= (one thread: the same results as the CLI's threaded search).  Every
    stack unless framework= names one; each result names its stack, tie and differs_most."""
    return _call("search", model, kwargs)


def validate(*files, calibration=None, **kwargs):
    """``trainplan validate FILES... --format json``: every measured run of the runs files
    predicted (with calibration=, a file) and compared, the rows that could not be mapped, and
    the error statistics overall and by source, GPU type and framework."""
    return _call_runs("validate", files, dict(kwargs, calibration=calibration))


def calibrate(*files, **kwargs):
    """``trainplan calibrate FILES... --format json``: the efficiencies fitted to the runs'
    measured throughput, the error before, after and leave-one-source-out, and the fitted
    calibration (its "calibration" key); base= (a file or "prior"), no_cv=, no_per_gpu=,
    min_gpu_rows=, prior_weight=, max_evals=, starts=, fold_rows=, max_folds=, fit_rows=,
    output= (the calibration file to write)."""
    return _call_runs("calibrate", files, kwargs)
