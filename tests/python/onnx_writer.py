"""A tiny ONNX writer for the Python tests (no onnx package needed): protobuf's wire
format by hand (https://protobuf.dev/programming-guides/encoding/) over the fields of
onnx.proto that a graph of Conv and Relu nodes with float initializers uses."""

import numpy as np


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint(field << 3 | wire)


def _int(field, n):  # varint field
    return _key(field, 0) + _varint(n)


def _bytes(field, b):  # length-delimited field
    if isinstance(b, str):
        b = b.encode()
    return _key(field, 2) + _varint(len(b)) + b


def _attr_ints(name, values):  # AttributeProto: name 1, ints 8, type 20 (INTS = 7)
    return _bytes(1, name) + b"".join(_int(8, v) for v in values) + _int(20, 7)


def _tensor(name, array):  # TensorProto: dims 1, data_type 2 (FLOAT = 1), name 8, raw_data 9
    a = np.ascontiguousarray(array, dtype="<f4")
    return b"".join(_int(1, d) for d in a.shape) + _int(2, 1) + _bytes(8, name) + _bytes(9, a.tobytes())


def _value_info(name, shape):  # ValueInfoProto{name, TypeProto{tensor_type{elem_type, shape{dim{dim_value}}}}}
    dims = b"".join(_bytes(1, _int(1, d)) for d in shape)
    return _bytes(1, name) + _bytes(2, _bytes(1, _int(1, 1) + _bytes(2, dims)))


def conv_relu_model(weights, pads, x_shape, y_shape):
    """An ONNX model (bytes, opset 13) of input "x" (x_shape) through one Conv (stride 1,
    pads[i] on every side) + Relu per (W, b) pair of `weights`, output "y" (y_shape)."""
    nodes, inits, prev = b"", b"", "x"
    for i, ((w, b), p) in enumerate(zip(weights, pads)):
        conv_out = "conv%d" % i
        out = "y" if i == len(weights) - 1 else "relu%d" % i
        nodes += _bytes(1, _bytes(1, prev) + _bytes(1, "w%d" % i) + _bytes(1, "b%d" % i) + _bytes(2, conv_out) +
                        _bytes(4, "Conv") + _bytes(5, _attr_ints("pads", [p] * 4)) +
                        _bytes(5, _attr_ints("kernel_shape", w.shape[2:])))
        nodes += _bytes(1, _bytes(1, conv_out) + _bytes(2, out) + _bytes(4, "Relu"))
        inits += _bytes(5, _tensor("w%d" % i, w)) + _bytes(5, _tensor("b%d" % i, b))
        prev = out
    graph = nodes + _bytes(2, "conv_relu") + inits + _bytes(11, _value_info("x", x_shape)) + \
        _bytes(12, _value_info("y", y_shape))
    return _int(1, 7) + _bytes(8, _bytes(1, "") + _int(2, 13)) + _bytes(7, graph)


def conv_relu_reference(x, weights, pads):
    """The same network computed with a naive loop over kernel positions (float64)."""
    y = x.astype(np.float64)
    for (w, b), p in zip(weights, pads):
        n, c, h, wd = y.shape
        k, _, r, s = w.shape
        yp = np.zeros((n, c, h + 2 * p, wd + 2 * p))
        yp[:, :, p:p + h, p:p + wd] = y
        oh, ow = h + 2 * p - r + 1, wd + 2 * p - s + 1
        out = np.zeros((n, k, oh, ow)) + b.reshape(1, k, 1, 1)
        for i in range(r):
            for j in range(s):
                out += np.einsum("nchw,kc->nkhw", yp[:, :, i:i + oh, j:j + ow], w[:, :, i, j].astype(np.float64))
        y = np.maximum(out, 0)
    return y


