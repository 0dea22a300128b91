"""test_spmvd.py: the Python module spmvd against a private spmvd on the
cpu backend (started by check_python.sh, which names it in SPMVD_SOCKET):
products against scipy's on the shipped matrices in both value types,
scipy's own solvers on a Matrix, device vectors, the server-side solvers
against scipy's and a power iteration, error paths, and what loading and
freeing, closing and garbage collection leave in the daemon."""

import copy
import gc
import glob
import inspect
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import numpy as np
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import spmvd
from spmvd import _lib

DATA = os.environ["SPMV_TEST_DATA"]
SOCKET = os.environ["SPMVD_SOCKET"]
DTYPES = (np.float32, np.float64)


def mmread_csr(path):
    """A Matrix Market file as a scipy CSR matrix; mmread is told which
    kind where it can be (scipy 1.15 on warns that its default changes)."""
    if "spmatrix" in inspect.signature(scipy.io.mmread).parameters:
        return scipy.io.mmread(path, spmatrix=True).tocsr()
    return scipy.io.mmread(path).tocsr()


def matrix(name, dtype=np.float64):
    """A shipped matrix as scipy CSR of dtype."""
    return mmread_csr(os.path.join(DATA, name + ".mtx.gz")).astype(dtype)


def scipy_rtol(rtol):
    """scipy's cg keyword for a relative tolerance (tol before 1.12)."""
    if "rtol" in inspect.signature(sla.cg).parameters:
        return {"rtol": rtol}
    return {"tol": rtol}


def check_product(case, A, x, y, what, alpha=1.0, beta=0.0, y0=None):
    """y = alpha A x + beta y0 within the rounding bound of a sum of
    row-length terms in A's precision: |y - (alpha A x + beta y0)| <=
    (rowmax + 3) eps (|alpha| |A| |x| + |beta| |y0|), entrywise, the
    reference computed in float64 from the same rounded values."""
    dt = np.dtype(A.dtype)
    A64 = A.astype(np.float64)
    x64 = np.asarray(x, dtype=dt).astype(np.float64)
    ref = alpha * (A64 @ x64)
    scale = abs(alpha) * (abs(A64) @ abs(x64))
    if beta != 0:
        y064 = np.asarray(y0, dtype=dt).astype(np.float64)
        ref = ref + beta * y064
        scale = scale + abs(beta) * abs(y064)
    rowmax = max(int(np.diff(A.indptr).max(initial=0)), 1)
    bound = (rowmax + 3) * np.finfo(dt).eps * scale + np.finfo(dt).tiny
    err = abs(np.asarray(y, dtype=np.float64) - ref)
    worst = np.argmax(err - bound) if err.size else 0
    case.assertTrue(np.all(err <= bound),
                    "%s: |y - Ax| = %g > %g at %s"
                    % (what, err.flat[worst], bound.flat[worst], worst))


def resident(client):
    """The daemon's resident matrices and vectors."""
    st = client.status()
    return st["matrices"], st.get("vectors", 0)


def wait_resident(client, want, seconds=10.0):
    """Waits until the daemon's counts are want (a closed connection is
    released by the daemon after its close is seen); returns the last."""
    end = time.monotonic() + seconds
    while True:
        now = resident(client)
        if now == want or time.monotonic() > end:
            return now
        time.sleep(0.02)


def stop_daemon(lock):
    """Stops the daemon whose pid is in lock file lock, if one runs (it is
    no child of ours: it is polled until gone)."""
    try:
        with open(lock) as f:
            pid = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return
    try:
        os.kill(pid, signal.SIGTERM)
        for _ in range(1000):
            os.kill(pid, 0)
            time.sleep(0.01)
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class ClientCase(unittest.TestCase):
    """A fresh client per test, closed afterwards."""

    def setUp(self):
        self.c = spmvd.connect(autostart=False)

    def tearDown(self):
        self.c.close()


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


class TestSolvers(ClientCase):

    def solve_case(self, name, solver, dt, rtol, **kw):
        A0 = matrix(name, dt)
        xt = np.linspace(1, 2, A0.shape[0])
        b = A0.astype(np.float64) @ xt
        with self.c.load(A0) as A:
            x, info = solver(A, b, rtol=rtol, **kw)
        self.assertEqual(info.code, 0, info)
        self.assertTrue(info.converged)
        self.assertTrue(info.reason.startswith("converged"))
        self.assertEqual(x.dtype, np.dtype(dt))
        ref = sla.spsolve(A0.astype(np.float64).tocsc(), b)
        r = np.linalg.norm(b - A0.astype(np.float64) @ x) / np.linalg.norm(b)
        return x, info, ref, r

    def test_krylov(self):
        """Each method on SPD and general matrices, against scipy's
        direct solution and its own method."""
        cases = [("gr_30_30", spmvd.cg, {}), ("gr_30_30", spmvd.pcg_jacobi, {}),
                 ("gr_30_30", spmvd.cg, {"M": "jacobi"}),
                 ("gr_30_30", spmvd.bicgstab, {}), ("gr_30_30", spmvd.gmres, {}),
                 ("bcsstk16", spmvd.pcg_jacobi, {}),
                 ("pde2961", spmvd.bicgstab, {}),
                 ("pde2961", spmvd.gmres, {"restart": 50})]
        for name, solver, kw in cases:
            with self.subTest(matrix=name, solver=solver.__name__, **kw):
                x, info, ref, r = self.solve_case(name, solver, np.float64,
                                                  1e-10, **kw)
                self.assertLess(r, 1e-9)
                self.assertLess(np.linalg.norm(x - ref) / np.linalg.norm(ref),
                                1e-5)
        for solver in (spmvd.cg, spmvd.bicgstab, spmvd.gmres):
            with self.subTest(matrix="gr_30_30 f32", solver=solver.__name__):
                x, info, ref, r = self.solve_case("gr_30_30", solver,
                                                  np.float32, 1e-5)
                self.assertLess(r, 1e-4)
                self.assertLess(np.linalg.norm(x - ref) / np.linalg.norm(ref),
                                1e-3)
        # scipy's cg on the same system stops about where spmvd's does.
        A0 = matrix("gr_30_30")
        b = A0 @ np.linspace(1, 2, A0.shape[0])
        with self.c.load(A0) as A:
            x, info = spmvd.cg(A, b, rtol=1e-8)
        xs, code = sla.cg(A0, b, atol=0.0, **scipy_rtol(1e-8))
        self.assertEqual(code, 0)
        self.assertLess(np.linalg.norm(x - xs) / np.linalg.norm(xs), 1e-6)

    def test_info(self):
        A0 = matrix("gr_30_30")
        n = A0.shape[0]
        b = np.ones(n)
        with self.c.load(A0) as A, self.c.load(-A0) as N:
            x, info = spmvd.cg(A, b, rtol=1e-8, history=True)
            self.assertEqual(len(info.history), info.iterations)
            self.assertLessEqual(info.history[-1],
                                 1e-8 * np.linalg.norm(b) * 1.01)
            self.assertAlmostEqual(info.rhs_norm, np.linalg.norm(b))
            self.assertEqual(int(info), 0)
            # Warm: from the solution, nothing is left to do.
            x2, info2 = spmvd.cg(A, b, x0=x, rtol=1e-6)
            self.assertLessEqual(info2.iterations, 1)
            _, info = spmvd.gmres(A, b, maxiter=5)
            self.assertEqual((info.code, info.reason, info.converged),
                             (5, "maxiter", False))
            _, info = spmvd.cg(N, b)
            self.assertEqual((info.code, info.reason), (-1, "indefinite"))
            nan = b.copy()
            nan[3] = np.nan
            _, info = spmvd.bicgstab(A, nan)
            self.assertEqual((info.code, info.reason), (-1, "breakdown"))
            seen = []
            spmvd.cg(A, b, rtol=1e-8, progress=lambda i, r: seen.append((i, r)),
                     progress_every=5)
            self.assertTrue(seen and all(i % 5 == 0 for i, _ in seen), seen)

            def boom(i, r):
                raise KeyError("stop")
            with self.assertRaises(KeyError):
                spmvd.cg(A, b, progress=boom)
            with self.assertRaises(ValueError):
                spmvd.cg(A, b, rtol=0)
            with self.assertRaises(TypeError):
                spmvd.cg(A0, b)
            with self.assertRaises(TypeError):
                spmvd.cg(A, b, M=np.eye(n))

    def test_cancel(self):
        """A raising progress callback and cancel_solve() from another
        thread stop a solve that would run for minutes."""
        A0 = matrix("west0479")
        b = np.ones(A0.shape[0])
        with self.c.load(A0) as A:
            def interrupt(i, r):
                if i >= 20:
                    raise KeyboardInterrupt
            t = time.monotonic()
            with self.assertRaises(KeyboardInterrupt):
                spmvd.gmres(A, b, rtol=1e-14, maxiter=10**8,
                            progress=interrupt)
            self.assertLess(time.monotonic() - t, 10)
            done = threading.Event()

            def cancel():
                while not done.wait(0.05):
                    self.c.cancel_solve()
            canceller = threading.Thread(target=cancel)
            canceller.start()
            try:
                x, info = spmvd.bicgstab(A, b, rtol=1e-14, maxiter=10**8)
            finally:
                done.set()
                canceller.join()
            self.assertEqual(info.reason, "cancelled")
            self.assertEqual(info.code, max(info.iterations, 1))
            self.assertFalse(info.converged)
            # The client serves the next request as usual.
            self.assertEqual(spmvd.gmres(A, b, maxiter=3)[1].code, 3)

    def test_device_vectors(self):
        A0 = matrix("gr_30_30")
        b = A0 @ np.linspace(1, 2, A0.shape[0])
        with self.c.load(A0) as A, self.c.vector(b) as bv:
            x, info = spmvd.cg(A, bv, rtol=1e-10)
            self.assertIsInstance(x, spmvd.Vector)
            self.assertEqual(info.code, 0)
            xh, _ = spmvd.cg(A, b, rtol=1e-10)
            np.testing.assert_array_equal(x.download(), xh)
            guess = self.c.vector(xh)
            x2, info2 = spmvd.cg(A, bv, x0=guess, rtol=1e-8)
            np.testing.assert_array_equal(guess.download(), xh)
            self.assertLessEqual(info2.iterations, 1)
            for v in (x, x2, guess):
                v.close()

    def test_pagerank(self):
        """pagerank against a power iteration of the same definition."""
        for name in ("email-Eu-core", "karate", "Erdos971"):
            G0 = matrix(name)
            W = abs(G0).tocsc()
            n = W.shape[0]
            out = np.asarray(W.sum(axis=0)).ravel()
            dangling = out == 0
            inv = 1.0 / np.where(dangling, 1.0, out)
            P = W @ sp.diags(np.where(dangling, 0.0, inv))
            ref = np.full(n, 1.0 / n)
            for _ in range(1000):
                nxt = 0.85 * (P @ ref) + (0.15 + 0.85 * ref[dangling].sum()) / n
                done = abs(nxt - ref).sum() < 1e-14
                ref = nxt
                if done:
                    break
            with self.subTest(matrix=name), self.c.load(G0) as G:
                x, info = spmvd.pagerank(G, maxiter=1000)
                self.assertEqual(info.code, 0, info)
                self.assertAlmostEqual(x.sum(), 1.0, places=10)
                self.assertLess(abs(x - ref).sum(), 1e-8)
                xv, _ = spmvd.pagerank(G, maxiter=1000, device=True)
                np.testing.assert_array_equal(xv.download(), x)
                xv.close()
                x3, info3 = spmvd.pagerank(G, damping=0.5, rtol=1e-6)
                self.assertEqual(info3.code, 0)
                self.assertLess(info3.residual, 1e-6)
                with self.c.load(G0.astype(np.float32)) as G32:
                    x32, _ = spmvd.pagerank(G32, maxiter=1000)
                    self.assertEqual(x32.dtype, np.float32)
                    self.assertLess(abs(x32 - ref).sum(), 1e-4)


class TestSplit(ClientCase):
    """Matrices split over the test daemon's two workers."""

    def test_products(self):
        A0 = matrix("bcsstk13")
        rng = np.random.default_rng(3)
        for dt in DTYPES:
            with self.c.load(A0.astype(dt), split=2) as A:
                self.assertEqual(A.blocks, 2)
                x = rng.standard_normal(A0.shape[1]).astype(dt)
                check_product(self, A0.astype(dt), x, A @ x, "split " + np.dtype(dt).name)
        with self.c.load(A0) as A:
            self.assertEqual(A.blocks, 1)

    def test_solves(self):
        A0 = matrix("bcsstk13")
        b = np.ones(A0.shape[0])
        with self.c.load(A0, split=2) as A:
            x, info = spmvd.pcg_jacobi(A, b, rtol=1e-10)
            self.assertTrue(info.converged, info)
            r = np.linalg.norm(b - A0 @ x) / np.linalg.norm(b)
            self.assertLessEqual(r, 1e-9)

    def test_pagerank(self):
        """pagerank on 2 blocks: the unsplit solution and iterations (sums
        in another order), and its sum 1; negative weights refused alike."""
        for name in ("email-Eu-core", "karate"):
            G0 = matrix(name)
            with self.subTest(matrix=name):
                with self.c.load(G0) as G:
                    x1, info1 = spmvd.pagerank(G, maxiter=1000)
                with self.c.load(G0, split=2) as G:
                    self.assertEqual(G.blocks, 2)
                    x2, info2 = spmvd.pagerank(G, maxiter=1000)
                self.assertEqual(info2.code, 0, info2)
                self.assertTrue(info2.converged, info2)
                self.assertLessEqual(abs(info2.iterations - info1.iterations), 1)
                self.assertAlmostEqual(x2.sum(), 1.0, places=12)
                self.assertLess(abs(x2 - x1).sum(), 1e-12)
        A0 = matrix("bcsstk13")
        with self.c.load(A0, split=2) as A:
            with self.assertRaises(spmvd.Error) as e:
                spmvd.pagerank(A)
            self.assertIn("pagerank", str(e.exception))
            self.assertEqual(e.exception.name, "SPMV_EINVAL")

    def test_refused(self):
        A0 = matrix("bcsstk13")
        with self.assertRaises(ValueError):
            self.c.load(A0, split=0)
        with self.assertRaises(TypeError):
            self.c.load(A0, split=2.0)
        with self.assertRaises(spmvd.Error) as e:
            self.c.load(A0, split=3)
        self.assertIn("2 workers", str(e.exception))
        with self.assertRaises(spmvd.Error) as e:
            self.c.load(matrix("lp_afiro"), split=2)
        self.assertIn("square", str(e.exception))


class TestLifetimes(unittest.TestCase):
    """What loading and freeing leave in the daemon."""

    def setUp(self):
        self.c = spmvd.connect(autostart=False)
        self.base = wait_resident(self.c, (0, 0))
        self.assertEqual(self.base, (0, 0), "other tests left these")

    def tearDown(self):
        self.c.close()

    def test_thousand_cycles(self):
        """A thousand loads, each freed by close(), a with block or
        garbage collection, multiplied on first (so that its mapping is
        attached and released too)."""
        A0 = matrix("karate")
        x = np.ones(34)
        fds = len(os.listdir("/proc/self/fd"))
        for i in range(1000):
            if i % 3 == 0:
                A = self.c.load(A0)
                A @ x
                A.close()
            elif i % 3 == 1:
                with self.c.load(A0) as A:
                    A @ x
            else:
                # Reference counting collects it as the line ends.
                self.c.load(A0) @ x
            if i % 100 == 0:
                v = self.c.vector(x)
                v.close()
                self.c.vector(10)
        del A
        gc.collect()
        self.assertEqual(resident(self.c), (0, 0))
        # Each product's mapping came with a memfd, closed with its matrix.
        self.assertEqual(len(os.listdir("/proc/self/fd")), fds)

    def test_client_close(self):
        """Closing a client closes what it made; the daemon frees them."""
        c = spmvd.connect(autostart=False)
        A = c.load(matrix("karate"))
        B = c.load(matrix("west0479"))
        A @ np.ones(34)
        v = c.vector(4)
        self.assertEqual(resident(self.c), (2, 1))
        with c:
            pass
        self.assertTrue(c.closed and A.closed and B.closed and v.closed)
        A.close()
        v.close()
        with self.assertRaises(ValueError):
            B @ np.ones(479)
        with self.assertRaises(ValueError):
            c.load(matrix("karate"))
        self.assertEqual(wait_resident(self.c, (0, 0)), (0, 0))

    def test_garbage(self):
        """A matrix keeps its client alive; dropping both frees both."""
        A = spmvd.connect(autostart=False).load(matrix("karate"))
        gc.collect()
        self.assertEqual(len(A @ np.ones(34)), 34)
        self.assertEqual(resident(self.c), (1, 0))
        client = A.client
        del A
        gc.collect()
        self.assertEqual(resident(self.c), (0, 0))
        self.assertFalse(client.closed)
        del client
        gc.collect()
        self.assertEqual(wait_resident(self.c, (0, 0)), (0, 0))

    def test_many_mappings(self):
        """Beyond a connection's 16 mappings products still work (sent
        with the request)."""
        A0 = matrix("karate")
        x = np.arange(34.0)
        ms = [self.c.load(A0) for _ in range(20)]
        for A in ms:
            check_product(self, A0, x, A @ x, "matrix %d" % len(ms))
        for A in ms:
            A.close()
        self.assertEqual(resident(self.c), (0, 0))


if __name__ == "__main__":
    unittest.main()
