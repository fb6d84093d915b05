"""tessel from Python: load a CNN, compile it, run it on numpy arrays, tune it.

    import numpy as np, tessel
    m = tessel.load("squeezenet1_1")            # a zoo name or the path of an .onnx file
    m.inputs, m.outputs                         # names, dtypes, shapes; m.set_batch(8) for another batch
    c = m.compile(target="host", threads=1)     # records="tessel_records.jsonl" after tuning
    (logits,) = c.run(np.zeros((1, 3, 224, 224), np.float32))
    tessel.tune(m, records="tessel_records.jsonl", trials=16)

A ctypes binding of the C API (include/tessel/tessel.h, tessel/tune.h) of the shared
library libtessel.so (where it is looked for: tessel/_lib.py). Every failing call raises
TesselError carrying the library's message (tsl_last_error) and status.

Threads: compile(threads=N) gives the compiled model its own thread count
(tsl_compile_opts.num_threads): its runs use N threads and records timed with N threads are
preferred, whatever the process-wide count (set_num_threads) and other models' counts.
A compiled model may be run from several Python threads at once: each thread gets its own
context (activation memory) and ctypes releases the GIL during a run.
"""
import ctypes
import os
import threading

import numpy as np

from . import _lib

__all__ = ["TesselError", "Model", "Compiled", "TuneSummary", "load", "tune", "set_num_threads", "get_num_threads",
           "library_path", "version"]

_L = _lib.open_library()

# tsl_dtype_code (tessel/tensor.h) and bits -> numpy
_DT_BOOL, _DT_INT, _DT_UINT, _DT_FLOAT = 0, 1, 2, 3
_NUMPY_OF = {(_DT_BOOL, 8): np.bool_, (_DT_INT, 8): np.int8, (_DT_INT, 16): np.int16, (_DT_INT, 32): np.int32,
             (_DT_INT, 64): np.int64, (_DT_UINT, 8): np.uint8, (_DT_UINT, 16): np.uint16,
             (_DT_UINT, 32): np.uint32, (_DT_UINT, 64): np.uint64, (_DT_FLOAT, 16): np.float16,
             (_DT_FLOAT, 32): np.float32, (_DT_FLOAT, 64): np.float64}


class TesselError(Exception):
    """A failing library call: `status` (the tsl_status code), `status_name` ("invalid",
    "io", "not_found", ...) and `message` (the library's "where: why")."""

    def __init__(self, status, message):
        self.status = int(status)
        self.status_name = (_L.tsl_status_name(self.status) or b"?").decode()
        self.message = message
        super().__init__("%s (%s)" % (message, self.status_name))


def _check(status):
    if status != 0:
        msg = (_L.tsl_last_error() or b"").decode("utf-8", "replace")
        _L.tsl_clear_error()
        raise TesselError(status, msg or "tessel call failed")


def _path_arg(p):
    return None if p is None else os.fsencode(p)


def library_path():
    """The libtessel.so this module opened."""
    return _L.tessel_path


def version():
    """The library's version, "MAJOR.MINOR.PATCH" (tsl_version_string)."""
    return _L.tsl_version_string().decode()


def set_num_threads(n):
    """Sets the process-wide thread count of the library's thread pool (1..256)."""
    _check(_L.tsl_set_num_threads(int(n)))


def get_num_threads():
    """The thread count parallel loops use."""
    return _L.tsl_get_num_threads()


class _Handle:
    """Owns one C object and frees it when the last Python reference goes."""

    def __init__(self, ptr, free):
        self.ptr, self._free = ptr, free

    def __del__(self):
        if self.ptr:
            self._free(self.ptr)
            self.ptr = None


class _CompiledHandle:
    """Owns a tsl_compiled and the contexts made for it, one per Python thread (a thread
    ident is used by one live thread at a time). One finalizer frees the contexts, then
    the compiled model: the garbage collector may finalize objects in any order (PEP 442),
    so contexts must not be objects of their own that could outlive it."""

    def __init__(self, ptr):
        self.ptr, self._contexts, self._lock = ptr, {}, threading.Lock()
        self._free_context, self._free = _L.tsl_context_free, _L.tsl_compiled_free  # kept for shutdown

    def context(self):
        """The calling thread's context (made on first use)."""
        tid = threading.get_ident()
        with self._lock:
            ctx = self._contexts.get(tid)
        if ctx is None:
            p = ctypes.c_void_p()
            _check(_L.tsl_context_new(self.ptr, ctypes.byref(p)))
            ctx = p.value
            with self._lock:
                self._contexts[tid] = ctx
        return ctx

    def __del__(self):
        for ctx in self._contexts.values():
            self._free_context(ctx)
        self._contexts.clear()
        if self.ptr:
            self._free(self.ptr)
            self.ptr = None


class TensorInfo:
    """An input or output of a compiled model: name (may be None), numpy dtype, shape."""

    def __init__(self, name, dtype, shape):
        self.name, self.dtype, self.shape = name, dtype, shape

    def __repr__(self):
        return "TensorInfo(name=%r, dtype=%s, shape=%s)" % (self.name, np.dtype(self.dtype).name, self.shape)


def _infos(ptr, count_fn, info_fn, *extra):
    """TensorInfo of every input or output: info_fn(ptr, i, name, dtype, ndim, shape,
    *extra) for i < count_fn(ptr)."""
    out = []
    for i in range(count_fn(ptr)):
        name, dt, ndim = ctypes.c_char_p(), _lib.Dtype(), ctypes.c_int()
        shape = (ctypes.c_int64 * _lib.MAX_NDIM)()
        _check(info_fn(ptr, i, ctypes.byref(name), ctypes.byref(dt), ctypes.byref(ndim), shape, *extra))
        key = (dt.code, dt.bits)
        if key not in _NUMPY_OF:
            raise TesselError(8, "tessel: tensor %d has a dtype numpy lacks (code %d, %d bits)" % (i, dt.code, dt.bits))
        out.append(TensorInfo(name.value.decode() if name.value else None, _NUMPY_OF[key],
                              tuple(shape[d] for d in range(ndim.value))))
    return out


class Model:
    """A loaded model (tsl_model): load() makes one."""

    def __init__(self, source):
        ptr = ctypes.c_void_p()
        _check(_L.tsl_model_load(os.fsencode(source), ctypes.byref(ptr)))
        self._h = _Handle(ptr.value, _L.tsl_model_free)
        self.source = os.fsdecode(source)

    @property
    def inputs(self):
        """The model's inputs as loaded (or after set_batch): TensorInfo list."""
        return _infos(self._h.ptr, _L.tsl_model_num_inputs, _L.tsl_model_input_info)

    @property
    def outputs(self):
        """The model's outputs: TensorInfo list."""
        return _infos(self._h.ptr, _L.tsl_model_num_outputs, _L.tsl_model_output_info)

    def set_batch(self, n):
        """Sets the batch size (the first extent of every input) for later compile() calls
        (tsl_model_set_batch); compiled models made before keep theirs. Returns self."""
        _check(_L.tsl_model_set_batch(self._h.ptr, int(n)))
        return self

    def compile(self, target="host", records=None, threads=None):
        """Compiles for `target` ("host", or a target string such as "x86-64-avx2" that runs
        on this machine); `records`: a tuning records file (tune()) or None for the default
        schedules; `threads`: the compiled model's own thread count, to look records up and
        run with (None: the process-wide count at each run). Returns a Compiled."""
        return Compiled(self, target, records, threads)

    def __repr__(self):
        return "tessel.Model(%r)" % self.source


class Compiled:
    """A compiled model (tsl_compiled): `inputs` and `outputs` describe its tensors,
    run() runs it."""

    def __init__(self, model, target, records, threads):
        if threads is not None and int(threads) < 1:  # (0 in C: the process-wide count, None here)
            raise TesselError(1, "tessel compile: threads %d (allowed 1..256, or None for the process-wide count)"
                              % int(threads))
        o = _L.tsl_compile_opts_default()
        o.target = None if target is None else target.encode()
        o.records = _path_arg(records)
        o.num_threads = 0 if threads is None else int(threads)
        ptr = ctypes.c_void_p()
        _check(_L.tsl_model_compile_with(model._h.ptr, ctypes.byref(o), ctypes.byref(ptr)))
        self._h = _CompiledHandle(ptr.value)
        # the compiled model's own thread count (None: the process-wide one at each run)
        self.threads = _L.tsl_compiled_num_threads(self._h.ptr) or None
        self.inputs = _infos(self._h.ptr, _L.tsl_compiled_num_inputs, _L.tsl_compiled_input_info, None)
        self.outputs = _infos(self._h.ptr, _L.tsl_compiled_num_outputs, _L.tsl_compiled_output_info, None)
        self.num_kernels = _L.tsl_compiled_num_kernels(self._h.ptr)
        self.num_tuned_kernels = _L.tsl_compiled_num_tuned_kernels(self._h.ptr)
        # step outputs claimed at 2+ threads (docs/capi.md "Claimed outputs")
        self.num_claimed_outputs = _L.tsl_compiled_num_claimed_outputs(self._h.ptr)

    def _arrays_in_order(self, x):
        if isinstance(x, dict):
            names = [t.name for t in self.inputs]
            unknown = [k for k in x if k not in names]
            if unknown:
                raise TesselError(1, "tessel run: no input named %r (the inputs: %s)" % (unknown[0], names))
            missing = [n for n in names if n not in x]
            if missing:
                raise TesselError(1, "tessel run: input %r not given" % missing[0])
            return [x[n] for n in names]
        arrays = list(x) if isinstance(x, (list, tuple)) else [x]
        if len(arrays) != len(self.inputs):
            raise TesselError(1, "tessel run: %d arrays given, the model has %d inputs" %
                              (len(arrays), len(self.inputs)))
        return arrays

    def run(self, x):
        """Runs the model: x is one array (a model of one input), a list of arrays in input
        order, or a dict {input name: array}. Arrays are converted to the input's dtype when
        numpy can do so without changing the kind (float64 -> float32 is fine, float ->
        int is not) and must have the input's shape. Returns the list of output arrays."""
        ctx = self._h.context()
        keep = []
        for i, (info, a) in enumerate(zip(self.inputs, self._arrays_in_order(x))):
            a = np.asarray(a)
            where = "tessel run: input %d (%s)" % (i, info.name)
            if not np.can_cast(a.dtype, info.dtype, casting="same_kind"):
                raise TesselError(1, "%s: dtype %s, the model wants %s" % (where, a.dtype, np.dtype(info.dtype)))
            if a.shape != info.shape:
                raise TesselError(1, "%s: shape %s, the model wants %s" % (where, a.shape, info.shape))
            a = np.ascontiguousarray(a, dtype=info.dtype)
            keep.append(a)
            _check(_L.tsl_context_set_input(ctx, i, a.ctypes.data, a.nbytes))
        _check(_L.tsl_context_run(ctx))
        outs = []
        for i, info in enumerate(self.outputs):
            o = np.empty(info.shape, dtype=info.dtype)
            _check(_L.tsl_context_get_output(ctx, i, o.ctypes.data, o.nbytes))
            outs.append(o)
        return outs

    def __repr__(self):
        return "tessel.Compiled(inputs=%s, outputs=%s)" % (self.inputs, self.outputs)


def load(source):
    """Loads a model: a zoo name (squeezenet1_0, squeezenet1_1, resnet18, resnet50,
    mobilenet_v2, shufflenet_v2_x1_0; deterministic weights) or the path of an ONNX file.
    Raises TesselError (status "io" for an unreadable file, "not_found" for an unknown
    name, "unsupported" for an operator tessel does not run)."""
    return Model(source)


class TuneSummary:
    """What tune() did: layers (distinct convolutions), tuned (layers with a successful
    candidate), trials, measured (by this run), errors, and default_seconds and
    tuned_seconds (per call, summed over the distinct layers)."""

    def __init__(self, s):
        for f, _ in _lib.TuneSummary._fields_:
            setattr(self, f, getattr(s, f))

    def __repr__(self):
        return "TuneSummary(%s)" % ", ".join("%s=%r" % (f, getattr(self, f)) for f, _ in _lib.TuneSummary._fields_)


def tune(model, records="tessel_records.jsonl", target="host", trials=None, early_stopping=None, threads=None,
         timeout=None, seed=None, verbose=False):
    """Tunes every distinct convolution of `model` (a Model, or what load() takes) for
    `target` and appends the measurements to `records` (resumed when it already holds
    some); compile(records=...) then uses them. trials per layer (default 32),
    early_stopping (default 16, 0 = never), threads to time with (default: the current
    count; compile with the same), timeout in seconds (default none), seed, verbose
    (progress on stderr). The C function tsl_model_tune (tessel/tune.h). Returns a
    TuneSummary; raises TesselError."""
    if not isinstance(model, Model):
        model = load(model)
    o = _L.tsl_model_tune_opts_default()
    for field, value in (("trials", trials), ("early_stopping", early_stopping), ("threads", threads),
                         ("timeout_s", timeout), ("seed", seed)):
        if value is not None:
            setattr(o, field, value)
    o.verbose = bool(verbose)
    s = _lib.TuneSummary()
    _check(_L.tsl_model_tune(model._h.ptr, None if target is None else target.encode(), os.fsencode(records),
                             ctypes.byref(o), ctypes.byref(s)))
    return TuneSummary(s)
