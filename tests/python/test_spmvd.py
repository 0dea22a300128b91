"""test_spmvd.py: the Python module spmvd against a private spmvd on the
cpu backend (started by check_python.sh): products against scipy's on the
shipped matrices in both value types, scipy's own solvers on a Matrix,
device vectors and error paths; test_spmvd_solve.py has the rest."""

import copy
import glob
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import spmvd
from spmvd import _lib
from spmvd_testing import (DATA, DTYPES, SOCKET, ClientCase, check_product,
                           matrix, mmread_csr, scipy_rtol, stop_daemon,
                           wait_resident)

class TestProducts(ClientCase):

    def test_shipped_matrices(self):
        """A @ x, A @ X and alpha A x + beta y against scipy's on every
        shipped matrix, loaded from scipy and from its file."""
        files = sorted(glob.glob(os.path.join(DATA, "*.mtx.gz")))
        self.assertGreaterEqual(len(files), 15)
        rng = np.random.default_rng(7)
        for path in files:
            name = os.path.basename(path)[:-len(".mtx.gz")]
            base = mmread_csr(path)
            for dt in DTYPES:
                with self.subTest(matrix=name, dtype=np.dtype(dt).name):
                    A0 = base.astype(dt)
                    m, n = A0.shape
                    x = rng.standard_normal(n)
                    with self.c.load(A0, name=name) as A:
                        self.assertEqual(A.shape, (m, n))
                        self.assertEqual(A.dtype, np.dtype(dt))
                        self.assertEqual(A.nnz, A0.nnz)
                        y = A @ x
                        self.assertEqual(y.dtype, np.dtype(dt))
                        check_product(self, A0, x, y, name + " A @ x")
                        check_product(self, A0, x, A.matvec(x),
                                      name + " matvec")
                        X = rng.standard_normal((n, 3))
                        Y = A @ X
                        self.assertEqual(Y.shape, (m, 3))
                        for j in range(3):
                            check_product(self, A0, X[:, j], Y[:, j],
                                          "%s A @ X[:, %d]" % (name, j))
                        y0 = rng.standard_normal(m).astype(dt)
                        z = A.multiply(x, alpha=2.0, beta=-0.5, y=y0)
                        check_product(self, A0, x, z, name + " multiply",
                                      alpha=2.0, beta=-0.5, y0=y0)
                    with self.c.load(path, dtype=dt) as F:
                        self.assertEqual(F.shape, (m, n))
                        self.assertEqual(F.name, os.path.basename(path))
                        check_product(self, A0, x, F @ x, name + " from file")

    def test_formats(self):
        """CSC, COO, sparse arrays, int64 indices and non-canonical CSR
        load as the CSR they stand for."""
        A0 = matrix("west0479")
        x = np.linspace(-1, 1, A0.shape[1])
        big = sp.csr_matrix((A0.data, A0.indices.astype(np.int64),
                             A0.indptr.astype(np.int64)), shape=A0.shape)
        # Rows with their entries reversed and one entry split in two.
        rev = A0.copy()
        for i in range(rev.shape[0]):
            s, e = rev.indptr[i], rev.indptr[i + 1]
            rev.indices[s:e] = rev.indices[s:e][::-1].copy()
            rev.data[s:e] = rev.data[s:e][::-1].copy()
        for label, M in (("csc", A0.tocsc()), ("coo", A0.tocoo()),
                         ("csr_array", sp.csr_array(A0)),
                         ("int64 indices", big), ("unsorted", rev)):
            with self.subTest(label), self.c.load(M) as A:
                check_product(self, A0, x, A @ x, label)
        # Row 0 holds column 1 twice: the entries add up.
        dup = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([1, 1, 0]),
                             np.array([0, 2, 3])), shape=(2, 2))
        self.assertFalse(dup.has_canonical_format)
        with self.c.load(dup) as A:
            np.testing.assert_array_equal(A @ np.array([1.0, 10.0]),
                                          [30.0, 3.0])

    def test_no_copy(self):
        """A CSR matrix with int32 indices and float values reaches the
        library as its own arrays."""
        A0 = matrix("west0479")
        seen = {}
        real = _lib.lib.spmv_load_csr

        def spy(c, dtype, rows, cols, nnz, rp, ci, val, opt, out):
            seen.update(ci=ci, val=val)
            return real(c, dtype, rows, cols, nnz, rp, ci, val, opt, out)
        _lib.lib.spmv_load_csr = spy
        try:
            A = self.c.load(A0)
        finally:
            _lib.lib.spmv_load_csr = real
        A.close()
        self.assertEqual(seen["ci"], A0.indices.ctypes.data)
        self.assertEqual(seen["val"], A0.data.ctypes.data)

    def test_load_csr_arrays(self):
        """load_csr takes plain arrays."""
        A0 = matrix("lp_afiro", np.float32)
        with self.c.load_csr(A0.indptr, A0.indices, A0.data, A0.shape) as A:
            self.assertEqual(A.dtype, np.float32)
            x = np.ones(A0.shape[1])
            check_product(self, A0, x, A @ x, "load_csr")

    def test_scipy_cg(self):
        """scipy.sparse.linalg.cg takes a Matrix and finds what it finds
        on the scipy matrix."""
        A0 = matrix("gr_30_30")
        b = A0 @ np.linspace(1, 2, A0.shape[0])
        with self.c.load(A0) as A:
            self.assertIsInstance(A, sla.LinearOperator)
            x, info = sla.cg(A, b, atol=0.0, **scipy_rtol(1e-10))
            x0, info0 = sla.cg(A0, b, atol=0.0, **scipy_rtol(1e-10))
            self.assertEqual(info, 0)
            self.assertEqual(info0, 0)
            self.assertLess(np.linalg.norm(x - x0) / np.linalg.norm(x0), 1e-8)
            # The operator algebra builds on matvec.
            y = (2 * A + A) @ np.ones(A.shape[1])
            np.testing.assert_allclose(y, 3 * (A0 @ np.ones(A.shape[1])))

    def test_transpose_refused(self):
        with self.c.load(matrix("west0479")) as A:
            x = np.ones(A.shape[0])
            with self.assertRaises(NotImplementedError) as e:
                A.rmatvec(x)
            self.assertIn("A.T", str(e.exception))
            with self.assertRaises(NotImplementedError):
                A.H @ x

    def test_description(self):
        """decision, info, tune, list and status."""
        A0 = matrix("impcol_a")
        with self.c.load(A0, name="impcol", strategy="trial") as A:
            d = A.decision
            self.assertEqual(len(d["fingerprint"]), 32)
            self.assertIn(d["source"], ("cache", "tuned"))
            self.assertIn("text", d["config"])
            self.assertIsInstance(A.handle, int)
            info = A.info()
            self.assertEqual((info["rows"], info["cols"], info["nnz"]),
                             (A0.shape[0], A0.shape[1], A0.nnz))
            self.assertEqual(A.tune("trial")["fingerprint"], d["fingerprint"])
            names = [e["name"] for e in self.c.list()]
            self.assertIn("impcol", names)
            st = self.c.status()
            self.assertEqual(st["backend"], "cpu")
            self.assertGreaterEqual(st["matrices"], 1)
        self.assertEqual(self.c.path, SOCKET)

    def test_threads(self):
        """Threads sharing a Matrix take turns on its shared vectors."""
        A0 = matrix("bcsstk13")
        xs = [np.random.default_rng(i).standard_normal(A0.shape[1])
              for i in range(4)]
        bad = []
        with self.c.load(A0) as A:
            def work(x):
                for _ in range(30):
                    if not np.array_equal(A @ x, A @ x):
                        bad.append(x)
                try:
                    check_product(self, A0, x, A @ x, "thread")
                except AssertionError as e:
                    bad.append(e)
            ts = [threading.Thread(target=work, args=(x,)) for x in xs]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        self.assertEqual(bad, [])

    def test_exit_with_objects(self):
        """Objects still alive when the interpreter exits go quietly."""
        code = """if True:
            import numpy as np, spmvd
            c = spmvd.connect(autostart=False)
            A = c.load_csr([0, 1], [0], np.array([2.0]), (1, 1))
            A @ np.ones(1)
            v = c.vector(3)
            orphan = spmvd.connect(autostart=False).load_csr(
                [0, 1], [0], np.array([1.0], np.float32), (1, 1))
            """
        out = subprocess.run([sys.executable, "-c", code], check=True,
                             capture_output=True, text=True)
        self.assertEqual(out.stderr, "")
        self.assertEqual(wait_resident(self.c, (0, 0)), (0, 0))

    def test_matrix_without_scipy(self):
        """Without scipy a Matrix still multiplies (a subprocess that
        cannot import scipy)."""
        code = """if True:
            import sys
            sys.modules["scipy"] = None
            import numpy as np, spmvd
            with spmvd.connect(autostart=False) as c:
                A = c.load_csr([0, 2, 3], [0, 1, 1], np.array([1.0, 2.0, 3.0]), (2, 2))
                assert spmvd.Matrix.__mro__[1].__name__ == "_Operator"
                print((A @ np.array([1.0, 1.0])).tolist(), A.dot(np.ones((2, 2))).tolist())
                try:
                    c.load(np.eye(2))
                except TypeError as e:
                    print("refused")
            """
        out = subprocess.run([sys.executable, "-c", code], check=True,
                             capture_output=True, text=True).stdout
        self.assertEqual(out.split("\n")[0], "[3.0, 3.0] [[3.0, 3.0], [3.0, 3.0]]")
        self.assertEqual(out.split("\n")[1], "refused")


class TestModule(unittest.TestCase):

    def test_docstrings(self):
        """Every public name, method and property says what it does."""
        for name in spmvd.__all__:
            obj = getattr(spmvd, name)
            self.assertTrue(obj.__doc__ and obj.__doc__.strip(), name)
            if not isinstance(obj, type):
                continue
            for attr, member in vars(obj).items():
                if attr.startswith("_") or not (callable(member) or
                                                isinstance(member, property)):
                    continue
                self.assertTrue(member.__doc__ and member.__doc__.strip(),
                                "%s.%s" % (name, attr))

    def test_library(self):
        """The build tree's library, named by SPMVD_LIBSPMVCLIENT."""
        self.assertEqual(spmvd.library_path(),
                         os.environ["SPMVD_LIBSPMVCLIENT"])


class TestErrors(ClientCase):

    def test_bad_dtype(self):
        A = matrix("gr_30_30").astype(np.int64)
        with self.assertRaises(TypeError) as e:
            self.c.load(A)
        self.assertIn("int64", str(e.exception))
        self.assertIn("astype", str(e.exception))
        with self.assertRaises(TypeError):
            self.c.load(A.astype(np.complex128), dtype=np.float64)
        # float16 values as plain arrays (scipy.sparse 1.18 refuses them).
        B = A.astype(np.float64)
        with self.assertRaises(TypeError) as e:
            self.c.load_csr(B.indptr, B.indices, B.data.astype(np.float16),
                            B.shape)
        self.assertIn("float16", str(e.exception))
        with self.assertRaises(TypeError):
            self.c.load(np.eye(3))
        # Asked for, the conversion is made.
        with self.c.load(A, dtype=np.float64) as M:
            self.assertEqual(M.dtype, np.float64)
        with self.assertRaises(TypeError):
            self.c.load(os.path.join(DATA, "karate.mtx.gz"), dtype=np.int32)
        with self.assertRaises(TypeError):
            self.c.vector(np.arange(4))

    def test_wrong_length(self):
        with self.c.load(matrix("lp_afiro")) as A:
            m, n = A.shape
            with self.assertRaises(ValueError):
                A @ np.ones(n + 1)
            with self.assertRaises(ValueError):
                A.multiply(np.ones(m))
            with self.assertRaises(ValueError):
                A.multiply(np.ones(n), beta=1.0, y=np.ones(n))
            with self.assertRaises(TypeError):
                A @ np.ones(n, dtype=np.complex128)
            with self.assertRaises(ValueError):
                spmvd.cg(A, np.ones(n))
            x = self.c.vector(n)
            with self.assertRaises(ValueError):
                x.upload(np.ones(n - 1))
            with self.assertRaises(ValueError):
                x.download(np.empty(n - 1))
            y = self.c.vector(n)  # n values where m are due
            with self.assertRaises(spmvd.Error) as e:
                A.multiply_vec(x, y)
            self.assertEqual(e.exception.name, "SPMV_EINVAL")
            with self.assertRaises(spmvd.Error):
                x.axpby(1.0, self.c.vector(m))

    def test_missing_file(self):
        path = os.path.join(DATA, "no-such-matrix.mtx")
        with self.assertRaises(spmvd.Error) as e:
            self.c.load(path)
        self.assertEqual(e.exception.name, "SPMV_EIO")
        self.assertIn("no-such-matrix.mtx", str(e.exception))

    def test_invalid_csr(self):
        with self.assertRaises(spmvd.Error) as e:
            self.c.load_csr([0, 1, 2], [0, 5], np.ones(2), (2, 2))
        self.assertEqual(e.exception.name, "SPMV_ECSR")
        with self.assertRaises(ValueError):
            self.c.load_csr([0, 1, 3], [0, 1], np.ones(2), (2, 2))

    def test_connect_refused(self):
        path = os.path.join(os.path.dirname(SOCKET), "nobody.sock")
        with self.assertRaises(spmvd.Error) as e:
            spmvd.connect(path, autostart=False)
        err = e.exception
        self.assertIsInstance(err, RuntimeError)
        self.assertEqual(err.name, "SPMV_ECONNECT")
        self.assertEqual(err.code, -13)
        self.assertEqual(err.description, "cannot connect to spmvd")
        self.assertIn(path, err.message)
        self.assertFalse(os.path.exists(path))

    def test_connect_flags(self):
        """autostart reaches spmv_connect_opts as its flag (a stand-in
        for the function records it)."""
        flags = []

        def opts(path, f, out):
            flags.append(f)
            return _lib.lib.spmv_connect(path, out)
        had = _lib.HAVE_CONNECT_OPTS
        real = getattr(_lib.lib, "spmv_connect_opts", None)
        _lib.HAVE_CONNECT_OPTS = True
        _lib.lib.spmv_connect_opts = opts
        try:
            spmvd.connect(autostart=True).close()
            spmvd.connect(autostart=False).close()
        finally:
            _lib.HAVE_CONNECT_OPTS = had
            if real is not None:
                _lib.lib.spmv_connect_opts = real
            else:
                del _lib.lib.spmv_connect_opts
        self.assertEqual(flags, [1, 0])

    def test_copies(self):
        """Handles are not duplicated: a Matrix or Client copy is refused,
        a Vector copy is a new vector."""
        A = self.c.load(matrix("karate"))
        for obj in (A, self.c):
            with self.assertRaises(TypeError):
                copy.copy(obj)
            with self.assertRaises(TypeError):
                pickle.dumps(obj)
        v = self.c.vector(np.arange(3.0))
        w = copy.deepcopy(v)
        self.assertIsNot(w._ptr, v._ptr)
        v.fill(0.0)
        np.testing.assert_array_equal(w.download(), [0.0, 1.0, 2.0])
        with self.assertRaises(TypeError):
            pickle.dumps(v)
        A.close()

    @unittest.skipUnless(_lib.HAVE_CONNECT_OPTS, "no spmv_connect_opts")
    def test_autostart(self):
        """autostart=True starts spmvd on a silent socket (a subprocess
        with private XDG directories, as a user without a daemon)."""
        top = tempfile.mkdtemp(prefix="spmvd-autostart.",
                               dir=os.path.dirname(SOCKET))
        sock = os.path.join(top, "auto.sock")
        conf = os.path.join(top, "config", "spmvd")
        os.makedirs(conf)
        with open(os.path.join(conf, "spmvd.conf"), "w") as f:
            f.write("backend = cpu\nthreads = 2\n")
        env = dict(os.environ, XDG_RUNTIME_DIR=top,
                   XDG_STATE_HOME=os.path.join(top, "state"),
                   XDG_CONFIG_HOME=os.path.join(top, "config"),
                   SPMVD_PROGRAM=os.environ["SPMV_TEST_SPMVD"],
                   SPMV_AUTOSTART_IDLE_S="30")
        env.pop("SPMVD_SOCKET")
        env.pop("SPMV_AUTOSTART", None)
        code = """if True:
            import sys, numpy as np, spmvd
            try:
                spmvd.connect(sys.argv[1], autostart=False)
            except spmvd.Error as e:
                print(e.name)
            with spmvd.connect(sys.argv[1], autostart=True) as c:
                A = c.load_csr([0, 1], [0], np.array([2.0]), (1, 1))
                print(c.status()["pid"], (A @ np.ones(1)).tolist())
            with spmvd.connect(sys.argv[1], autostart=False) as c:
                print(c.status()["pid"])
            """
        try:
            out = subprocess.run([sys.executable, "-c", code, sock], env=env,
                                 capture_output=True, text=True, timeout=60)
            self.assertEqual(out.returncode, 0, out.stderr)
            lines = out.stdout.split("\n")
            self.assertEqual(lines[0], "SPMV_ECONNECT")
            pid, y = lines[1].split(" ", 1)
            self.assertEqual(y, "[2.0]")
            self.assertEqual(lines[2], pid)
        finally:
            stop_daemon(sock + ".lock")
            shutil.rmtree(top)

    def test_closed(self):
        A = self.c.load(matrix("karate"))
        A.close()
        A.close()
        self.assertTrue(A.closed)
        with self.assertRaises(ValueError):
            A @ np.ones(34)
        with self.assertRaises(ValueError):
            A.decision

    def test_admin(self):
        """export, forget and import_ (the daemon's own user may: these
        tests run it), export agreeing with spmvctl's reading of the
        database."""
        with self.c.load(matrix("bcspwr10")) as A:
            fp = A.decision["fingerprint"]
        # The daemon stores a decision on its cache thread.
        doc = {"tunings": []}
        for _ in range(200):
            try:
                doc = self.c.export(fp)
                break
            except spmvd.Error as e:
                self.assertEqual(e.name, "SPMV_ENOENT")
            time.sleep(0.05)
        self.assertTrue(doc["tunings"])
        self.assertEqual({t["fingerprint"] for t in doc["tunings"]}, {fp})
        self.assertIn(fp, {t["fingerprint"] for t in self.c.export()["tunings"]})
        out = subprocess.run([os.environ["SPMV_TEST_SPMVCTL"], "--db",
                              os.environ["SPMV_TEST_DB"], "export", fp],
                             capture_output=True, text=True, check=True)
        self.assertEqual(json.loads(out.stdout)["tunings"], doc["tunings"])
        with self.assertRaises(spmvd.Error) as e:
            self.c.export("xyz")
        self.assertEqual(e.exception.name, "SPMV_EINVAL")
        self.assertGreaterEqual(self.c.forget(fp), 1)
        with self.assertRaises(spmvd.Error) as e:
            self.c.export(fp)
        self.assertEqual(e.exception.name, "SPMV_ENOENT")
        imported, skipped = self.c.import_(doc)
        self.assertGreaterEqual(imported, 1)
        self.assertEqual(self.c.import_(json.dumps(doc)), (imported, skipped))
        with self.c.load(matrix("bcspwr10")) as A:
            self.assertEqual(A.decision["source"], "cache")


class TestVectors(ClientCase):

    def test_operations(self):
        rng = np.random.default_rng(3)
        for dt in DTYPES:
            with self.subTest(dtype=np.dtype(dt).name):
                a = rng.standard_normal(1000).astype(dt)
                b = rng.standard_normal(1000).astype(dt)
                tol = dict(rtol=1e-5 if dt == np.float32 else 1e-12)
                x = spmvd.Vector(self.c, a)
                y = self.c.vector(b)
                self.assertEqual((len(x), x.size, x.shape, x.dtype),
                                 (1000, 1000, (1000,), np.dtype(dt)))
                np.testing.assert_array_equal(x.download(), a)
                np.testing.assert_array_equal(np.asarray(y), b)
                self.assertAlmostEqual(x.dot(y), float(a.astype(np.float64)
                                                       @ b.astype(np.float64)),
                                       delta=1e-4 if dt == np.float32 else 1e-10)
                np.testing.assert_allclose(
                    x.nrm2(), np.linalg.norm(a.astype(np.float64)), **tol)
                z = x.copy()
                np.testing.assert_array_equal(z.download(), a)
                z.axpby(2.0, y, -1.0)
                np.testing.assert_allclose(z.download(), 2 * b - a, **tol)
                z.scale(0.5)
                np.testing.assert_allclose(z.download(), b - a / 2, **tol)
                np.testing.assert_allclose(x.mul(y).download(), a * b, **tol)
                x.mul(y, out=x)
                np.testing.assert_allclose(x.download(), a * b, **tol)
                y.copy_to(x)
                np.testing.assert_array_equal(x.download(), b)
                out = np.empty(1000, dt)
                self.assertIs(x.fill(3.0).download(out), out)
                np.testing.assert_array_equal(out, np.full(1000, 3.0, dt))
                w = self.c.vector(5, dtype=dt)
                np.testing.assert_array_equal(w.download(), np.zeros(5, dt))
                for v in (x, y, z, w):
                    v.close()

    def test_products(self):
        for dt in DTYPES:
            A0 = matrix("lp_e226", dt)
            m, n = A0.shape
            with self.subTest(dtype=np.dtype(dt).name), self.c.load(A0) as A:
                xs = np.linspace(0, 1, n).astype(dt)
                ys = np.linspace(-1, 1, m).astype(dt)
                x, y = self.c.vector(xs), self.c.vector(ys)
                self.assertIs(A.multiply_vec(x, y), y)
                check_product(self, A0, xs, y.download(), "multiply_vec")
                y.upload(ys)
                A.multiply_vec(x, y, alpha=2.0, beta=1.0)
                check_product(self, A0, xs, y.download(),
                              "multiply_vec beta", alpha=2.0, beta=1.0, y0=ys)
                with self.assertRaises(spmvd.Error):
                    A.multiply_vec(x, x)
                other = np.float64 if dt == np.float32 else np.float32
                wrong = self.c.vector(n, other)
                with self.assertRaises(spmvd.Error):
                    x.dot(wrong)

if __name__ == "__main__":
    unittest.main()
