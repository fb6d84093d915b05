"""Tests of the Python module (python/tessel) — run by tests/python/python_test.sh against
the installed module and library, or by hand:
    PYTHONPATH=python:tests/python python3 -m pytest -q tests/python
References, never the module itself: ONNX Runtime's outputs of the shared models
(<shared>/models/*.ort.f32), the C API's outputs (`tunecli run MODEL --output`, a C
program over tsl_model_*; bitwise, both single-threaded), and a naive numpy convolution
(onnx_writer.conv_relu_reference) for a small model written here.
Environment: TSL_SHARED_DIR (else <repo>/../shared), TESSEL_TUNECLI (the tunecli to
compare with; without it those comparisons are skipped), TESSEL_EXPECT_LIBRARY_UNDER
(the library the module opened must be under this folder)."""
import os
import subprocess
import tempfile
import threading
import unittest

import numpy as np

import onnx_writer
import tessel

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(os.environ.get("TSL_SHARED_DIR") or os.path.join(HERE, "..", "..", "..", "shared"), "models")
TUNECLI = os.environ.get("TESSEL_TUNECLI")
ONNX_TESTDATA = "/usr/share/libonnx-testdata/data/node"


def shared_input():
    return np.fromfile(os.path.join(SHARED, "input_1x3x224x224.f32"), dtype="<f4").reshape(1, 3, 224, 224)


def c_api_output(model, input_path, n):
    """Output 0 of `model` as the C API computes it (tunecli run, one thread)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.f32")
        subprocess.run([TUNECLI, "run", model, "--input", input_path, "--output", out, "--threads", "1", "--repeat",
                        "1"], check=True, stdout=subprocess.DEVNULL)
        return np.fromfile(out, dtype="<f4")[:n]


def top5(x):
    return list(np.argsort(-x.ravel(), kind="stable")[:5])


def small_model(tmp):
    """A Conv3x3+Relu, Conv1x1+Relu network (weights as initializers) written to tmp."""
    rng = np.random.default_rng(3)
    weights = [(rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.2, rng.standard_normal(16).astype(np.float32)),
               (rng.standard_normal((8, 16, 1, 1)).astype(np.float32) * 0.2, rng.standard_normal(8).astype(np.float32))]
    pads = [1, 0]
    path = os.path.join(tmp, "conv_relu.onnx")
    with open(path, "wb") as f:
        f.write(onnx_writer.conv_relu_model(weights, pads, (1, 8, 14, 14), (1, 8, 14, 14)))
    x = rng.standard_normal((1, 8, 14, 14)).astype(np.float32)
    return path, x, onnx_writer.conv_relu_reference(x, weights, pads)


class TestLibrary(unittest.TestCase):
    def test_library_location(self):
        want = os.environ.get("TESSEL_EXPECT_LIBRARY_UNDER")
        if not want:
            self.skipTest("TESSEL_EXPECT_LIBRARY_UNDER not set")
        self.assertTrue(os.path.realpath(tessel.library_path()).startswith(os.path.realpath(want)),
                        "%s is not under %s" % (tessel.library_path(), want))


@unittest.skipUnless(os.path.isdir(SHARED), "shared models not found at %s (set TSL_SHARED_DIR)" % SHARED)
class TestSharedModels(unittest.TestCase):
    """The ONNX exports against ONNX Runtime's outputs and the C API's."""

    def check_model(self, name):
        path = os.path.join(SHARED, name + ".onnx")
        c = tessel.load(path).compile(target="host", threads=1)
        self.assertEqual([i.shape for i in c.inputs], [(1, 3, 224, 224)])
        self.assertEqual(c.inputs[0].dtype, np.float32)
        (y,) = c.run(shared_input())
        self.assertEqual(y.shape, (1, 1000))
        ref = np.fromfile(os.path.join(SHARED, name + ".ort.f32"), dtype="<f4").reshape(1, 1000)
        scale = np.abs(ref).max()
        self.assertLessEqual(np.abs(y - ref).max(), 1e-4 * scale, name)
        self.assertEqual(top5(y), top5(ref), name)
        if TUNECLI:
            np.testing.assert_array_equal(y.ravel(), c_api_output(path, os.path.join(SHARED, "input_1x3x224x224.f32"),
                                                                  1000))
        return c

    def test_squeezenet1_1(self):
        self.check_model("squeezenet1_1")

    def test_mobilenet_v2(self):
        c = self.check_model("mobilenet_v2")
        # its stride-1 depthwise convs claim their outputs (docs/capi.md "Claimed outputs")
        self.assertGreater(c.num_claimed_outputs, 0)

    def test_input_forms_agree(self):
        c = tessel.load(os.path.join(SHARED, "squeezenet1_1.onnx")).compile(threads=1)
        x = shared_input()
        (a,) = c.run(x)
        (b,) = c.run({"input": x})
        (d,) = c.run([x.astype(np.float64)])  # converted to float32
        e = c.run(np.asfortranarray(x))[0]   # made contiguous
        for other in (b, d, e):
            np.testing.assert_array_equal(a, other)


class TestZoo(unittest.TestCase):
    @unittest.skipUnless(TUNECLI, "TESSEL_TUNECLI not set: no C API to compare with")
    def test_zoo_model_matches_c_api(self):
        c = tessel.load("squeezenet1_1").compile(threads=1)
        x = np.random.default_rng(5).uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)
        with tempfile.TemporaryDirectory() as tmp:
            inp = os.path.join(tmp, "x.f32")
            x.tofile(inp)
            ref = c_api_output("squeezenet1_1", inp, 1000)
        (y,) = c.run(x)
        np.testing.assert_array_equal(y.ravel(), ref)

    def test_threads_share_a_compiled_model(self):
        c = tessel.load("squeezenet1_1").compile(threads=1)
        xs = [np.random.default_rng(s).uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32) for s in range(3)]
        want = [c.run(x)[0] for x in xs]
        got = [None] * len(xs)

        def work(i):
            for _ in range(2):
                got[i] = c.run(xs[i])[0]

        ts = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        for w, g in zip(want, got):
            np.testing.assert_array_equal(w, g)


class TestModelInfoBatchThreads(unittest.TestCase):
    """Names, shapes, batch size, per-model threads and the version, through the module."""

    def test_version_is_the_librarys(self):
        v = tessel.version()
        self.assertRegex(v, r"^\d+\.\d+\.\d+$")
        # libtessel.so -> libtessel.so.MAJOR.MINOR -> libtessel.so.MAJOR.MINOR.PATCH (meson)
        self.assertTrue(os.path.realpath(tessel.library_path()).endswith(".so." + v), tessel.library_path())

    def test_names_shapes_and_batch(self):
        m = tessel.load("squeezenet1_1")
        self.assertEqual([(i.name, i.shape) for i in m.inputs], [("input", (1, 3, 224, 224))])
        self.assertEqual([(o.name, o.shape) for o in m.outputs], [("output", (1, 1000))])
        c1 = m.compile(threads=1)
        self.assertIs(m.set_batch(2), m)
        self.assertEqual(m.inputs[0].shape, (2, 3, 224, 224))
        c2 = m.compile(threads=1)
        self.assertEqual(c1.inputs[0].shape, (1, 3, 224, 224))  # compiled before: unchanged
        self.assertEqual(c2.inputs[0].shape, (2, 3, 224, 224))
        self.assertEqual(c2.outputs[0].shape, (2, 1000))
        x = np.random.default_rng(9).uniform(-1, 1, (2, 3, 224, 224)).astype(np.float32)
        (y,) = c2.run({"input": x})
        for row in range(2):
            if TUNECLI:  # the C API's own run of that image at batch 1
                with tempfile.TemporaryDirectory() as tmp:
                    inp = os.path.join(tmp, "x.f32")
                    x[row].tofile(inp)
                    ref = c_api_output("squeezenet1_1", inp, 1000)
            else:
                ref = c1.run(x[row:row + 1])[0].ravel()
            self.assertLessEqual(np.abs(y[row] - ref).max(), 1e-4 * np.abs(ref).max())
        with self.assertRaises(tessel.TesselError) as e:
            m.set_batch(0)
        self.assertEqual(e.exception.status_name, "invalid")

    def test_threads_per_compiled_model(self):
        m = tessel.load("squeezenet1_1")
        before = tessel.get_num_threads()
        c1, c2, c0 = m.compile(threads=1), m.compile(threads=2), m.compile()
        self.assertEqual((c1.threads, c2.threads, c0.threads), (1, 2, None))
        x = np.random.default_rng(4).uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)
        y1, y2, y0 = c1.run(x)[0], c2.run(x)[0], c0.run(x)[0]
        self.assertEqual(tessel.get_num_threads(), before)  # the process-wide count is left alone
        np.testing.assert_allclose(y2, y1, rtol=0, atol=1e-4 * np.abs(y1).max())
        np.testing.assert_allclose(y0, y1, rtol=0, atol=1e-4 * np.abs(y1).max())
        with self.assertRaises(tessel.TesselError):
            m.compile(threads=-1)


class TestSmallModelAndTuning(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path, self.x, self.ref = small_model(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_against_naive_convolution(self):
        c = tessel.load(self.path).compile(threads=1)
        self.assertEqual(c.outputs[0].name, "y")
        (y,) = c.run(self.x)
        self.assertLessEqual(np.abs(y - self.ref).max(), 1e-5 * np.abs(self.ref).max())

    def test_tune_then_compile_with_the_records(self):
        m = tessel.load(self.path)
        records = os.path.join(self.tmp.name, "records.jsonl")
        s = tessel.tune(m, records=records, trials=2, threads=1)
        self.assertEqual((s.layers, s.tuned), (2, 2))
        self.assertGreaterEqual(s.measured, 2)
        self.assertEqual(s.trials, s.measured)
        self.assertGreater(s.tuned_seconds, 0)
        with open(records) as f:
            self.assertEqual(sum(1 for line in f if line.strip()), s.measured)
        c = m.compile(records=records, threads=1)
        self.assertEqual(c.num_tuned_kernels, 2)
        (y,) = c.run(self.x)
        self.assertLessEqual(np.abs(y - self.ref).max(), 1e-5 * np.abs(self.ref).max())
        again = tessel.tune(self.path, records=records, trials=2, threads=1)  # resumed: nothing new
        self.assertEqual((again.measured, again.trials), (0, s.trials))


class TestErrors(unittest.TestCase):
    def assertRaisesTessel(self, status_name, words, fn, *args, **kw):
        with self.assertRaises(tessel.TesselError) as cm:
            fn(*args, **kw)
        e = cm.exception
        self.assertEqual(e.status_name, status_name, str(e))
        for w in words:
            self.assertIn(w, e.message)
        return e

    def test_load(self):
        self.assertRaisesTessel("io", ["/nonexistent/model.onnx"], tessel.load, "/nonexistent/model.onnx")
        self.assertRaisesTessel("not-found", ["nosuchmodel", "squeezenet1_1"], tessel.load, "nosuchmodel")

    def test_compile(self):
        m = tessel.load("squeezenet1_1")
        self.assertRaisesTessel("unsupported", ["nosuchtarget"], m.compile, target="nosuchtarget")
        self.assertRaisesTessel("invalid", ["0"], m.compile, threads=0)

    def test_run(self):
        c = tessel.load("squeezenet1_1").compile(threads=1)
        x = np.zeros((1, 3, 224, 224), np.float32)
        self.assertRaisesTessel("invalid", ["(1, 3, 100, 100)", "(1, 3, 224, 224)"], c.run,
                                np.zeros((1, 3, 100, 100), np.float32))
        self.assertRaisesTessel("invalid", ["complex"], c.run, x.astype(np.complex64))
        self.assertRaisesTessel("invalid", ["pixels"], c.run, {"pixels": x})
        self.assertRaisesTessel("invalid", ["2 arrays", "1 input"], c.run, [x, x])

    def test_tune(self):
        with tempfile.TemporaryDirectory() as tmp:
            path, _, _ = small_model(tmp)
            self.assertRaisesTessel("invalid", ["trials 0"], tessel.tune, path,
                                    records=os.path.join(tmp, "r.jsonl"), trials=0)
            self.assertRaisesTessel("io", ["/nonexistent/dir/r.jsonl"], tessel.tune, path,
                                    records="/nonexistent/dir/r.jsonl", trials=1, threads=1)
        weights_as_input = os.path.join(ONNX_TESTDATA, "test_basic_conv_with_padding", "model.onnx")
        if os.path.exists(weights_as_input):  # its conv's weights are a graph input: nothing to tune
            self.assertRaisesTessel("not-found", ["no convolution"], tessel.tune, weights_as_input,
                                    records="/tmp/unused.jsonl")


if __name__ == "__main__":
    unittest.main()
