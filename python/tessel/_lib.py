"""Finds and opens libtessel.so and declares the C functions the module calls.

Where the library comes from, first found wins:
  1. the TESSEL_LIBRARY environment variable: the path of libtessel.so (any soname link);
  2. the install prefix: an installed module (meson install) knows where, relative to
     itself, meson put the library (_installed.py, generated at configure time);
  3. the build folder of a source checkout: python/tessel/../../build/libtessel.so
     (or TESSEL_BUILD_DIR/libtessel.so);
  4. the system's loader: libtessel.so.MAJOR.MINOR on the default library path.
"""
import ctypes
import os

# The soname this module was written against (include/tessel/*.h of the same release).
SONAME = "libtessel.so.0.1"


class Dtype(ctypes.Structure):
    """tsl_dtype (tessel/tensor.h): a code (TSL_DT_BOOL/INT/UINT/FLOAT) and bits."""
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8)]


class TuneOpts(ctypes.Structure):
    """tsl_model_tune_opts (tessel/tune.h)."""
    _fields_ = [("trials", ctypes.c_int), ("early_stopping", ctypes.c_int), ("threads", ctypes.c_int),
                ("timeout_s", ctypes.c_double), ("seed", ctypes.c_uint64), ("verbose", ctypes.c_bool)]


class TuneSummary(ctypes.Structure):
    """tsl_model_tune_summary (tessel/tune.h)."""
    _fields_ = [("layers", ctypes.c_int), ("tuned", ctypes.c_int), ("trials", ctypes.c_int),
                ("measured", ctypes.c_int), ("errors", ctypes.c_int), ("default_seconds", ctypes.c_double),
                ("tuned_seconds", ctypes.c_double)]


class CompileOpts(ctypes.Structure):
    """tsl_compile_opts (tessel/tessel.h)."""
    _fields_ = [("target", ctypes.c_char_p), ("records", ctypes.c_char_p), ("verbose", ctypes.c_bool),
                ("no_auto_schedule", ctypes.c_bool), ("num_threads", ctypes.c_int), ("no_claim_outputs", ctypes.c_bool)]


MAX_NDIM = 8  # TSL_MAX_NDIM

_P = ctypes.c_void_p
_S = ctypes.c_int  # tsl_status
_PROTOTYPES = {
    "tsl_last_error": (ctypes.c_char_p, []),
    "tsl_status_name": (ctypes.c_char_p, [ctypes.c_int]),
    "tsl_clear_error": (None, []),
    "tsl_set_num_threads": (_S, [ctypes.c_int]),
    "tsl_get_num_threads": (ctypes.c_int, []),
    "tsl_model_load": (_S, [ctypes.c_char_p, ctypes.POINTER(_P)]),
    "tsl_model_free": (None, [_P]),
    "tsl_version_string": (ctypes.c_char_p, []),
    "tsl_model_compile": (_S, [_P, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(_P)]),
    "tsl_compile_opts_default": (CompileOpts, []),
    "tsl_model_compile_with": (_S, [_P, ctypes.POINTER(CompileOpts), ctypes.POINTER(_P)]),
    "tsl_model_set_batch": (_S, [_P, ctypes.c_int64]),
    "tsl_model_num_inputs": (ctypes.c_int, [_P]),
    "tsl_model_num_outputs": (ctypes.c_int, [_P]),
    "tsl_model_input_info": (_S, [_P, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(Dtype),
                                  ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int64)]),
    "tsl_model_output_info": (_S, [_P, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(Dtype),
                                   ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int64)]),
    "tsl_compiled_num_threads": (ctypes.c_int, [_P]),
    "tsl_compiled_free": (None, [_P]),
    "tsl_compiled_num_inputs": (ctypes.c_int, [_P]),
    "tsl_compiled_num_outputs": (ctypes.c_int, [_P]),
    "tsl_compiled_num_kernels": (ctypes.c_int, [_P]),
    "tsl_compiled_num_tuned_kernels": (ctypes.c_int, [_P]),
    "tsl_compiled_num_claimed_outputs": (ctypes.c_int, [_P]),
    "tsl_compiled_input_info": (_S, [_P, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(Dtype),
                                     ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int64),
                                     ctypes.POINTER(ctypes.c_size_t)]),
    "tsl_compiled_output_info": (_S, [_P, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(Dtype),
                                      ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int64),
                                      ctypes.POINTER(ctypes.c_size_t)]),
    "tsl_context_new": (_S, [_P, ctypes.POINTER(_P)]),
    "tsl_context_free": (None, [_P]),
    "tsl_context_set_input": (_S, [_P, ctypes.c_int, _P, ctypes.c_size_t]),
    "tsl_context_run": (_S, [_P]),
    "tsl_context_get_output": (_S, [_P, ctypes.c_int, _P, ctypes.c_size_t]),
    "tsl_model_tune_opts_default": (TuneOpts, []),
    "tsl_model_tune": (_S, [_P, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(TuneOpts),
                            ctypes.POINTER(TuneSummary)]),
}


def _candidates():
    env = os.environ.get("TESSEL_LIBRARY")
    if env:
        yield env, "TESSEL_LIBRARY"
        return
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        from . import _installed  # written by meson install only
        yield os.path.normpath(os.path.join(here, _installed.LIBDIR_FROM_MODULE, SONAME)), "the install prefix"
    except ImportError:
        pass
    build = os.environ.get("TESSEL_BUILD_DIR") or os.path.join(here, "..", "..", "build")
    yield os.path.normpath(os.path.join(build, "libtessel.so")), "the build folder"
    yield SONAME, "the system's library path"


def open_library():
    """The loaded library with its prototypes declared; OSError naming every place tried."""
    tried = []
    for path, where in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append("%s (%s): no such file" % (path, where))
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s): %s" % (path, where, e))
            continue
        for name, (restype, argtypes) in _PROTOTYPES.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
        lib.tessel_path = path
        return lib
    raise OSError("tessel: libtessel.so not found; set TESSEL_LIBRARY to its path. Tried: " + "; ".join(tried))
