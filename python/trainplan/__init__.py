"""trainplan: plan LLM training runs from Python, over libtrainplan (ctypes, standard library only).

Each verb takes the model (a preset name or a config.json path; params, memory, estimate and
search also take the shape keywords alone) and keyword arguments named like the CLI's flags
with underscores (gpu=, gpus=, tp=, zero=, recompute=, micro_batch_size=, ...) and returns the
dict that ``trainplan VERB ... --format json`` prints: the same keys and the same numbers, since
both come from the library's one evaluation and its JSON documents (tp_call_json).  The
keywords come from the library's one option table: ``help(trainplan.estimate)`` lists them.
Bad input raises trainplan.Error with the library's message; Error.field names the keyword.
"""
import ctypes as _ctypes
import ctypes.util as _ctypes_util
import inspect as _inspect
import json as _json
import os as _os

__version__ = "0.1.0"
__all__ = ["Error", "params", "memory", "estimate", "search", "export", "size", "validate",
           "calibrate", "checkpoint", "logs", "models", "gpus", "version", "library_path"]


class Error(Exception):
    """An input the library rejects; ``field`` is the keyword it is about ("" when none)."""

    def __init__(self, message, field=""):
        super().__init__(message)
        self.field = field


class _TpError(_ctypes.Structure):
    # struct tp_error (include/trainplan/base.h); its size is checked against tp_struct_size
    _fields_ = [("msg", _ctypes.c_char * 512), ("field", _ctypes.c_char * 32)]


def _candidates():
    env = _os.environ.get("TRAINPLAN_LIBRARY")
    if env:
        yield env
    here = _os.path.dirname(_os.path.abspath(__file__))
    yield _os.path.join(here, "libtrainplan.so")  # bundled by pip install (python/_build)
    yield _os.path.join(here, "..", "..", "build", "libtrainplan.so")  # a source checkout
    found = _ctypes_util.find_library("trainplan")  # make install
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        if _os.path.sep not in path or _os.path.exists(path):
            try:
                return _ctypes.CDLL(path), path
            except OSError as e:
                tried.append("%s (%s)" % (path, e))
        else:
            tried.append(path)
    raise ImportError("libtrainplan.so not found (set TRAINPLAN_LIBRARY); tried: " +
                      ", ".join(tried))


_lib, library_path = _load()
_P = _ctypes.POINTER
_lib.tp_version.restype = _ctypes.c_char_p
_lib.tp_version.argtypes = []
_lib.tp_struct_size.restype = _ctypes.c_size_t
_lib.tp_struct_size.argtypes = [_ctypes.c_char_p]
_lib.tp_free.restype = None
_lib.tp_free.argtypes = [_ctypes.c_void_p]
_lib.tp_verb_find.restype = _ctypes.c_uint
_lib.tp_verb_find.argtypes = [_ctypes.c_char_p]
_lib.tp_options_json.restype = _ctypes.c_void_p
_lib.tp_options_json.argtypes = [_ctypes.c_uint, _ctypes.c_bool]
_lib.tp_call_json.restype = _ctypes.c_int
_lib.tp_call_json.argtypes = [_ctypes.c_char_p, _ctypes.c_char_p, _P(_ctypes.c_char_p),
                              _P(_ctypes.c_char_p), _ctypes.c_size_t, _P(_ctypes.c_void_p),
                              _P(_TpError)]
_lib.tp_call_runs_json.restype = _ctypes.c_int
_lib.tp_call_runs_json.argtypes = [_ctypes.c_char_p, _P(_ctypes.c_char_p), _ctypes.c_size_t,
                                   _P(_ctypes.c_char_p), _P(_ctypes.c_char_p), _ctypes.c_size_t,
                                   _P(_ctypes.c_void_p), _P(_TpError)]

if _lib.tp_version().decode() != __version__:
    raise ImportError("libtrainplan %s at %s, the package is %s" %
                      (_lib.tp_version().decode(), library_path, __version__))
if _lib.tp_struct_size(b"tp_error") != _ctypes.sizeof(_TpError):
    raise ImportError("struct tp_error is %d bytes in %s, %d here" %
                      (_lib.tp_struct_size(b"tp_error"), library_path, _ctypes.sizeof(_TpError)))


def version():
    """The library's version (tp_version)."""
    return _lib.tp_version().decode()


def _bytes(field, value):
    """`value` as the library's text; an embedded NUL would cut it short there: refused."""
    b = _os.fsencode(value) if isinstance(value, (str, bytes, _os.PathLike)) else value
    if b"\0" in b:
        raise Error("%s: an embedded NUL character" % field, field)
    return b


def _text(key, value):
    # booleans as the library takes them; the library refuses every other text for a flag
    # ("yes", "True", "2", "1.0"), so only a Python bool, 0/1 and "true"/"false"/"1"/"0" work
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # locale-independent, round-trips
    return str(value)


def _texts(strings):
    return (_ctypes.c_char_p * max(len(strings), 1))(*strings)


def _answer(status, out, err):
    if status != 0:
        raise Error(err.msg.decode(errors="replace"), err.field.decode(errors="replace"))
    try:
        return _json.loads(_ctypes.string_at(out.value).decode())
    finally:
        _lib.tp_free(out)


def _options(kwargs):
    items = [(_bytes(k, k), _bytes(k, _text(k, v))) for k, v in kwargs.items() if v is not None]
    return _texts([k for k, _ in items]), _texts([v for _, v in items]), len(items)


def _call(verb, model, kwargs):
    keys, values, n = _options(kwargs)
    out = _ctypes.c_void_p()
    err = _TpError()
    name = None if model is None else _bytes("model", model)
    status = _lib.tp_call_json(verb.encode(), name, keys, values, n, _ctypes.byref(out),
                               _ctypes.byref(err))
    return _answer(status, out, err)


def _call_runs(verb, files, kwargs):
    keys, values, n = _options(kwargs)
    names = _texts([_bytes("files", f) for f in files])
    out = _ctypes.c_void_p()
    err = _TpError()
    status = _lib.tp_call_runs_json(verb.encode(), names, len(files), keys, values, n,
                                    _ctypes.byref(out), _ctypes.byref(err))
    return _answer(status, out, err)


def _schema(verb):
    """The verb's keywords from the library's option table (tp_options_json)."""
    raw = _lib.tp_options_json(_lib.tp_verb_find(verb.encode()), False)
    if not raw:
        raise MemoryError("tp_options_json")
    try:
        return _json.loads(_ctypes.string_at(raw).decode())
    finally:
        _lib.tp_free(raw)


def _describe(o):
    if o["kind"] == "flag":
        what = "bool"
    elif o["kind"] == "enum":
        what = o["choices"].replace("|", ", ")
    elif o["kind"] in ("int", "real"):
        what = "%s, %g..%g" % ("whole number" if o["kind"] == "int" else "number", o["lo"],
                               o["hi"])
    else:
        what = "text (%s)" % o["metavar"]
    line = "    %s (%s): %s" % (o["keyword"], what, o["help"])
    if o["aliases"]:
        line += " [also: %s]" % ", ".join(a.replace("-", "_") for a in o["aliases"].split("|")
                                         if len(a) > 1)
    return line


# The verbs: (name, what the positional arguments are, what it returns).  Adding a verb the
# library's tp_call_json runs is one row here.
_MODEL, _NONE, _FILES = "model", "none", "files"
_VERBS = [
    ("params", _MODEL, "exact parameter counts by component and block, training FLOPs per token"),
    ("memory", _MODEL, "the worst stage's bytes per GPU, every stage with per_stage=True, and "
                       "the changes that make it fit"),
    ("estimate", _MODEL, "memory, time per step, tokens/s, MFU, range; with tokens= (and "
                         "gpu_hour_price=) the wall-clock, GPU-hours and cost"),
    ("search", _MODEL, "the fastest layouts that fit for gbs= (required), every stack unless "
                       "framework= names one (one thread: the same results as the CLI's threaded "
                       "search)"),
    ("export", _MODEL, "the planned run as the framework's files (to= deepspeed, axolotl, "
                       "megatron, megatron-deepspeed, torchrun, slurm): their contents under "
                       "\"files\", with best=True the search's fastest layout"),
    ("size", _NONE, "the model to train for a budget: flops=, or gpu= and gpus= with days= or "
                    "gpu_hours=; every published fit's optimum and the family's shapes ranked by "
                    "predicted loss, with a cluster each on its fastest layout (one thread: the "
                    "same results as the CLI's threaded walk)"),
    ("validate", _FILES, "every measured run of the runs files predicted and compared, the rows "
                         "that could not be mapped, and the error statistics"),
    ("calibrate", _FILES, "the efficiencies fitted to the runs' measured throughput, the error "
                          "before, after and leave-one-source-out, and the fitted calibration"),
    ("checkpoint", _FILES, "what a checkpoint PATH holds (safetensors files, shard index, "
                           "DeepSpeed ZeRO folder), its problems, whether it is the MODEL given "
                           "after it (or config=, else the config.json beside it), and the "
                           "saves' sizes"),
    ("logs", _FILES, "training logs (Megatron, HF/Axolotl/TRL, torchtitan, nanoGPT, llm.c, JSON "
                     "run logs): the steady state, the time a token budget takes and, with "
                     "model= and gpu=, model FLOPs, MFU and the estimate next to the log"),
    ("models", _NONE, "the built-in presets with their counts and sources"),
    ("gpus", _NONE, "the accelerator catalog"),
]


def _make(verb, args, summary):
    schema = _schema(verb)
    kw = _inspect.Parameter.KEYWORD_ONLY
    if args == _MODEL:
        def fn(model=None, **kwargs):
            return _call(verb, model, kwargs)
        lead = [_inspect.Parameter("model", _inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                   default=None)]
        usage = "trainplan %s MODEL" % verb
    elif args == _FILES:
        def fn(*files, **kwargs):
            return _call_runs(verb, files, kwargs)
        lead = [_inspect.Parameter("files", _inspect.Parameter.VAR_POSITIONAL)]
        usage = "trainplan %s FILES..." % verb
    else:
        def fn(**kwargs):
            return _call(verb, None, kwargs)
        lead = []
        usage = "trainplan %s" % verb
    fn.__name__ = fn.__qualname__ = verb
    fn.__signature__ = _inspect.Signature(
        lead + [_inspect.Parameter(o["keyword"], kw, default=None) for o in schema])
    fn.__doc__ = "``%s ... --format json``: %s.\n" % (usage, summary)
    if schema:
        fn.__doc__ += ("\nKeywords (None: not given; the CLI's flags with underscores; a "
                       "misspelt one is refused with the nearest):\n" +
                       "\n".join(_describe(o) for o in schema) + "\n")
    return fn


for _verb, _args, _summary in _VERBS:
    globals()[_verb] = _make(_verb, _args, _summary)
del _verb, _args, _summary
