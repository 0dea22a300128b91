"""spmvd_testing.py: what the Python module's tests share: the private
spmvd they run against (check_python.sh names its socket in SPMVD_SOCKET),
the shipped matrices, products checked against scipy's, the daemon's
resident counts, and a client per test."""

import inspect
import os
import signal
import time
import unittest

import numpy as np
import scipy.io
import scipy.sparse.linalg as sla

import spmvd

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
