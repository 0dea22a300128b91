"""Matrix: a matrix resident in spmvd, as a linear operator."""

import ctypes
import json
import numbers
import os
import threading

import numpy as np

from . import _lib
from ._lib import check, lib

__all__ = ["Matrix"]

try:
    from scipy.sparse.linalg import LinearOperator as _Base
except ImportError:
    _Base = None

_INT32_MAX = 2**31 - 1
_SPMV_ELIMIT = -10


class _Operator:
    """The part of scipy's LinearOperator a Matrix offers without scipy:
    shape, dtype, matvec, matmat, rmatvec, dot, @ and calls."""

    ndim = 2

    def __init__(self, dtype, shape):
        self.dtype = np.dtype(dtype)
        self.shape = tuple(shape)

    def matvec(self, x):
        """Return A @ x for x of shape (N,) or (N, 1)."""
        x = np.asarray(x)
        m, n = self.shape
        if x.shape != (n,) and x.shape != (n, 1):
            raise ValueError("dimension mismatch")
        y = self._matvec(x)
        return y.reshape(m, 1) if x.ndim == 2 else y

    def rmatvec(self, x):
        """Return A^H @ x: not supported (see _rmatvec)."""
        return self._rmatvec(x)

    def matmat(self, X):
        """Return A @ X for X of shape (N, K)."""
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[0] != self.shape[1]:
            raise ValueError("dimension mismatch")
        return self._matmat(X)

    def dot(self, x):
        """Return A @ x for a vector or a matrix x."""
        x = np.asarray(x)
        if x.ndim == 1 or (x.ndim == 2 and x.shape[1] == 1):
            return self.matvec(x)
        if x.ndim == 2:
            return self.matmat(x)
        raise ValueError("expected 1-d or 2-d array, got %d-d" % x.ndim)

    def __matmul__(self, x):
        return self.dot(x)

    def __call__(self, x):
        return self.dot(x)


if _Base is None:
    _Base = _Operator


class Matrix(_Base, _lib.Closing):
    """A matrix loaded into spmvd (Client.load, Client.load_csr).

    It is a scipy.sparse.linalg.LinearOperator when scipy is installed
    (so scipy's solvers take it), else an object with the same shape,
    dtype, matvec, matmat, dot and @.  A @ x and A.matvec(x) take a numpy
    vector of shape[1] real values (converted to dtype) and return a new
    array: x is copied into a shared memory mapping with spmvd, which
    multiplies there, and y is copied out of it, so that no vector
    travels on the socket (a connection has room for 16 such mappings;
    matrices beyond them send their vectors with the request).  A @ X for
    a 2-D X multiplies its columns in one request.  Products by the
    transpose are not supported: load A.T instead.

    The matrix is freed in spmvd by close(), at the end of a with block,
    when it is garbage collected, or when its client closes.
    """

    _free = staticmethod(lib.spmv_matrix_free)

    def __init__(self, client, ptr, dtype, shape, nnz, name=None):
        super().__init__(np.dtype(dtype), tuple(int(s) for s in shape))
        self._client = client
        self._ptr = ptr
        self._code = _lib.dtype_code(self.dtype)
        self._nnz = int(nnz)
        self._name = name
        # The shared vectors of the products (x, y views into the
        # mapping); _mapped is False once the daemon refused a mapping.
        self._lock = threading.Lock()
        self._xbuf = self._ybuf = None
        self._mapped = True
        client._adopt(self)

    @classmethod
    def _from_csr(cls, client, indptr, indices, data, shape, strategy,
                  name, verify, split=None):
        rows, cols = (int(s) for s in shape)
        if rows < 0 or cols < 0:
            raise ValueError("spmvd: shape %s is negative" % (shape,))
        indptr = np.asarray(indptr)
        if indptr.ndim != 1 or indptr.shape[0] != rows + 1:
            raise ValueError("spmvd: indptr has shape %s, must be (%d,)"
                             % (indptr.shape, rows + 1))
        if indptr.dtype.kind not in "iu":
            raise TypeError("spmvd: indptr of dtype %s: integers expected"
                            % indptr.dtype.name)
        # The library takes 64-bit row offsets: the one array widened.
        indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        nnz = int(indptr[-1])
        if nnz < 0:
            raise ValueError("spmvd: indptr[-1] = %d is negative" % nnz)
        indices = np.asarray(indices)
        data = np.asarray(data)
        code = _lib.dtype_code(data.dtype, "matrix values")
        for what, a in (("indices", indices), ("data", data)):
            if a.ndim != 1 or a.shape[0] < nnz:
                raise ValueError("spmvd: %s has shape %s, must hold nnz = %d "
                                 "values" % (what, a.shape, nnz))
        if indices.dtype.kind not in "iu":
            raise TypeError("spmvd: indices of dtype %s: integers expected"
                            % indices.dtype.name)
        if indices.dtype != np.int32:
            used = indices[:nnz]
            if nnz and (used.min() < 0 or used.max() > _INT32_MAX):
                raise ValueError("spmvd: a column index is outside [0, 2^31)")
            indices = used.astype(np.int32)
        indices = np.ascontiguousarray(indices)
        data = np.ascontiguousarray(data)
        opt = _options(strategy, name, verify, split)
        out = ctypes.c_void_p()
        cptr = client._handle()
        check(lib.spmv_load_csr(cptr, code, rows, cols, nnz,
                                indptr.ctypes.data, indices.ctypes.data,
                                data.ctypes.data, ctypes.byref(opt),
                                ctypes.byref(out)), cptr)
        return cls(client, out, data.dtype, (rows, cols), nnz, name)

    @classmethod
    def _from_sparse(cls, client, A, dtype, strategy, name, verify,
                     split=None):
        try:
            from scipy import sparse
        except ImportError:
            sparse = None
        if sparse is None or not sparse.issparse(A):
            raise TypeError("spmvd: load takes a scipy.sparse array or "
                            "matrix, or a Matrix Market path; got %s"
                            % type(A).__name__)
        src = np.dtype(A.dtype)
        if dtype is None:
            _lib.dtype_code(src, "matrix values")
            dtype = src
        elif src.kind not in "biuf":
            raise TypeError("spmvd: matrix values of dtype %s: real values "
                            "expected" % src.name)
        dtype = np.dtype(dtype)
        _lib.dtype_code(dtype)
        if A.format != "csr":
            A = A.tocsr()
        data = A.data if A.data.dtype == dtype else A.data.astype(dtype)
        return cls._from_csr(client, A.indptr, A.indices, data, A.shape,
                             strategy, name, verify, split)

    @classmethod
    def _from_mtx(cls, client, path, dtype, strategy, name, verify,
                  split=None):
        dtype = np.dtype(np.float64 if dtype is None else dtype)
        code = _lib.dtype_code(dtype)
        opt = _options(strategy, name, verify, split)
        out = ctypes.c_void_p()
        cptr = client._handle()
        check(lib.spmv_load_mtx(cptr, os.fsencode(path), code,
                                ctypes.byref(opt), ctypes.byref(out)), cptr)
        # The shape is the file's: the daemon's description has it.
        js = ctypes.c_void_p()
        rc = lib.spmv_info_json(out, ctypes.byref(js))
        if rc < 0:
            err = _lib.Error(rc, lib.spmv_client_errmsg(cptr).decode())
            lib.spmv_matrix_free(out)
            raise err
        info = json.loads(_lib.take_string(js))
        return cls(client, out, dtype, (info["rows"], info["cols"]),
                   info["nnz"], info.get("name"))

    def __repr__(self):
        state = " (closed)" if self._ptr is None else ""
        return "<spmvd.Matrix %dx%d %s nnz=%d%s>" % (
            self.shape[0], self.shape[1], self.dtype.name, self._nnz, state)

    def __reduce_ex__(self, protocol):
        # A copy would share the handle, and each copy would free it.
        raise TypeError("spmvd: a Matrix is a handle on spmvd's matrix and "
                        "cannot be copied or pickled: load it again")

    @property
    def client(self):
        """The Client this matrix was loaded through."""
        return self._client

    @property
    def nnz(self):
        """The number of stored entries."""
        return self._nnz

    @property
    def name(self):
        """The label given at load (a file's base name), or None."""
        return self._name

    @property
    def blocks(self):
        """The row blocks the matrix is split in over spmvd's workers (1:
        not split; load(..., split=n))."""
        return lib.spmv_matrix_blocks(self._handle())

    @property
    def closed(self):
        """Whether the matrix was freed (close(), or its client closed)."""
        return self._ptr is None

    def close(self):
        """Free the matrix in spmvd (idempotent)."""
        with self._lock:
            ptr, self._ptr = self._ptr, None
            self._xbuf = self._ybuf = None
            if ptr is not None:
                self._client._release(self, self._free, ptr)

    def _orphan(self):
        # The client disconnects: the daemon and the library free the
        # matrix and its mapping with the connection.
        self._ptr = None
        self._xbuf = self._ybuf = None

    def _handle(self):
        if self._ptr is None:
            raise ValueError("spmvd: the matrix is closed")
        return self._ptr

    def _json(self, fn):
        out = ctypes.c_void_p()
        check(fn(self._handle(), ctypes.byref(out)), self._client._ptr)
        return json.loads(_lib.take_string(out))

    @property
    def decision(self):
        """The daemon's tuning decision for this matrix, as a dict:
        handle, fingerprint, source ("cache" or "tuned"), config (format,
        bs, tpr, param, param2, text), time_us, gflops, gbps, strategy,
        tuning_cost_spmv, and reason when tuned.  No request is made."""
        return self._json(lib.spmv_matrix_decision_json)

    @property
    def handle(self):
        """The daemon's number for this matrix."""
        return self.decision["handle"]

    def info(self):
        """Ask spmvd for its description of the matrix (dict: dtype,
        rows, cols, nnz, fingerprint, profile, config, trials,
        multiplies, ...)."""
        return self._json(lib.spmv_info_json)

    def tune(self, strategy=None):
        """Tune the matrix again now (strategy None: the daemon's
        default); return the new decision, which spmvd uses from now on
        and stores in its cache."""
        st = strategy.encode() if strategy is not None else None
        check(lib.spmv_tune(self._handle(), st, _lib.NO_PROGRESS, None),
              self._client._ptr)
        return self.decision

    def _buffers(self):
        # The shared x and y vectors, attached on first use (the caller
        # holds the lock); None when the daemon refused the mapping.
        if self._xbuf is None and self._mapped:
            x, y = ctypes.c_void_p(), ctypes.c_void_p()
            rc = lib.spmv_matrix_vectors(self._ptr, 1, ctypes.byref(x),
                                         ctypes.byref(y))
            if rc == _SPMV_ELIMIT:
                self._mapped = False
                return None
            check(rc, self._client._ptr)
            ct = (ctypes.c_float if self._code == _lib.SPMV_F32
                  else ctypes.c_double)
            m, n = self.shape
            self._xbuf = np.frombuffer((ct * n).from_address(x.value),
                                       self.dtype)
            self._ybuf = np.frombuffer((ct * m).from_address(y.value),
                                       self.dtype)
        return (self._xbuf, self._ybuf) if self._xbuf is not None else None

    def multiply(self, x, alpha=1.0, beta=0.0, y=None):
        """Return alpha * A @ x + beta * y as a new array (y is read, not
        written; it may be None when beta is 0).  x has shape[1] values,
        y shape[0]; both are converted to the matrix's dtype."""
        m, n = self.shape
        x = _lib.real_vector(x, n, "x")  # its dtype kept: the copy converts
        if beta != 0:
            if y is None:
                raise ValueError("spmvd: beta is %g but y is None" % beta)
            y = _lib.real_vector(y, m, "y")
        with self._lock:
            ptr = self._handle()
            if m == 0 or n == 0:
                out = np.zeros(m, self.dtype)
                return out if beta == 0 else out + beta * y
            bufs = self._buffers()
            if bufs is not None:
                xb, yb = bufs
                xb[:] = x
                if beta != 0:
                    yb[:] = y
                check(lib.spmv_multiply_inplace(ptr, alpha, beta),
                      self._client._ptr)
                return yb.copy()
            xa = np.ascontiguousarray(x, dtype=self.dtype)
            ya = (np.array(y, dtype=self.dtype) if beta != 0
                  else np.empty(m, self.dtype))
            check(lib.spmv_multiply(ptr, alpha, xa.ctypes.data, beta,
                                    ya.ctypes.data), self._client._ptr)
            return ya

    def multiply_vec(self, x, y, alpha=1.0, beta=0.0):
        """y = alpha * A @ x + beta * y on device Vectors of this
        matrix's client and dtype (x of shape[1], y of shape[0] values,
        distinct; y is not read when beta is 0); return y."""
        from ._vector import Vector
        if not isinstance(x, Vector) or not isinstance(y, Vector):
            raise TypeError("spmvd: multiply_vec takes two spmvd.Vector")
        check(lib.spmv_multiply_vec(self._handle(), alpha, x._handle(), beta,
                                    y._handle()), self._client._ptr)
        return y

    def _matvec(self, x):
        return self.multiply(np.asarray(x).reshape(-1))

    def _matmat(self, X):
        m, n = self.shape
        X = np.asarray(X)
        if X.dtype.kind not in "biuf":
            raise TypeError("spmvd: X of dtype %s: real values expected"
                            % X.dtype.name)
        k = X.shape[1]
        if k == 0 or m == 0 or n == 0:
            return np.zeros((m, k), self.dtype)
        # The batch takes its k vectors back to back: X's columns as rows.
        xs = np.ascontiguousarray(X.T, dtype=self.dtype)
        ys = np.empty((k, m), self.dtype)
        with self._lock:
            check(lib.spmv_multiply_batch(self._handle(), k, 1.0,
                                          xs.ctypes.data, 0.0,
                                          ys.ctypes.data), self._client._ptr)
        return ys.T

    def _rmatvec(self, x):
        raise NotImplementedError(
            "spmvd: a Matrix multiplies by A only, not by its transpose: "
            "load A.T (e.g. client.load(A.T.tocsr())) for that")


def _options(strategy, name, verify, split=None):
    opt = _lib.LoadOptions()
    opt.strategy = strategy.encode() if strategy is not None else None
    opt.name = name.encode() if name is not None else None
    opt.verify = 1 if verify else 0
    if split is not None:
        if isinstance(split, bool) or not isinstance(split, numbers.Integral):
            raise TypeError("spmvd: split must be an integer, not %s"
                            % type(split).__name__)
        if split < 1:
            raise ValueError("spmvd: split is %d: it counts row blocks, at "
                             "least 1" % split)
        opt.split = int(split)
    return opt
