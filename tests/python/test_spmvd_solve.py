"""test_spmvd_solve.py: the Python module's server-side solvers against
scipy's and a power iteration, split matrices, and what loading and
freeing, closing and garbage collection leave in the daemon (the private
spmvd of check_python.sh, as test_spmvd.py)."""

import gc
import os
import subprocess
import tempfile
import threading
import time
import unittest

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import spmvd
from spmvd_testing import (DTYPES, ClientCase, check_product, matrix,
                           resident, scipy_rtol, wait_resident)

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

    def test_device_vectors(self):
        """Vectors like a split matrix: its products and solves on them,
        the host vectors' results bit for bit; vectors not like it
        refused, naming like."""
        A0 = matrix("bcsstk13")
        n = A0.shape[0]
        rng = np.random.default_rng(5)
        for dt in DTYPES:
            with self.subTest(dtype=np.dtype(dt).name):
                x = rng.standard_normal(n).astype(dt)
                with self.c.load(A0.astype(dt), split=2) as A:
                    xv = self.c.vector(x, like=A)
                    yv = self.c.vector(n, like=A)
                    self.assertEqual(yv.dtype, np.dtype(dt))
                    A.multiply_vec(xv, yv)
                    np.testing.assert_array_equal(yv.download(), A @ x)
                    zv = yv.copy()
                    np.testing.assert_array_equal(zv.download(), A @ x)
                    b = (A0 @ np.ones(n)).astype(dt)
                    bv = self.c.vector(b, like=A)
                    xs, info = spmvd.cg(A, bv, rtol=1e-6)
                    self.assertIsInstance(xs, spmvd.Vector)
                    self.assertTrue(info.converged, info)
                    xh, infoh = spmvd.cg(A, b, rtol=1e-6)
                    self.assertEqual(info.iterations, infoh.iterations)
                    np.testing.assert_array_equal(xs.download(), xh)
                    r = np.linalg.norm(b - A0 @ xh.astype(np.float64))
                    self.assertLessEqual(r / np.linalg.norm(b), 1e-5)
                    plain = self.c.vector(b)
                    with self.assertRaises(spmvd.Error) as e:
                        spmvd.cg(A, plain)
                    self.assertIn("like", str(e.exception))
                    self.assertEqual(e.exception.name, "SPMV_EINVAL")
                    for v in (xv, yv, zv, bv, xs, plain):
                        v.close()
        with self.c.load(A0, split=2) as A:
            with self.assertRaises(ValueError):
                self.c.vector(n, np.float32, like=A)
            with self.assertRaises(ValueError):
                self.c.vector(n + 1, like=A)

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


class TestShutdown(unittest.TestCase):
    """A daemon of its own, stopped through the module."""

    def test_shutdown(self):
        top = tempfile.mkdtemp(prefix="spmvd-shutdown.",
                               dir=os.path.dirname(os.environ["SPMVD_SOCKET"]))
        sock = os.path.join(top, "s.sock")
        log = open(os.path.join(top, "log"), "w")
        p = subprocess.Popen([os.environ["SPMV_TEST_SPMVD"], "--foreground",
                              "--socket", sock, "--db",
                              os.path.join(top, "c.db"), "--backend", "cpu"],
                             stdout=log, stderr=subprocess.STDOUT)
        try:
            for _ in range(200):
                if os.path.exists(sock):
                    break
                time.sleep(0.05)
            c = spmvd.connect(sock, autostart=False)
            A = c.load(matrix("karate"))
            check_product(self, matrix("karate"), np.ones(34),
                          A @ np.ones(34), "before the shutdown")
            c.shutdown(wait=True)
            self.assertEqual(p.wait(timeout=30), 0)
            self.assertFalse(os.path.exists(sock))
            with self.assertRaises(spmvd.Error):
                c.status()
            c.close()
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            log.close()
            for f in os.listdir(top):
                os.unlink(os.path.join(top, f))
            os.rmdir(top)


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
