"""Vector: a device vector, resident where the client's matrices are."""

import ctypes
import numbers

import numpy as np

from . import _lib
from ._lib import check, lib

__all__ = ["Vector"]


class Vector(_lib.Closing):
    """A vector resident in spmvd (on the GPU with the cuda backend).

    Vector(client, n, dtype=numpy.float64) makes n zeros;
    Vector(client, array, dtype=None) uploads a 1-D array (of float32 or
    float64 values unless dtype converts it).  With like=A (a Matrix of
    client's) the vector holds A.shape[0] values of A's dtype and lies as
    A: split over the workers of A's blocks as its rows when A is split
    (Matrix.blocks > 1), which A's products and solves on Vectors need;
    the Vectors that copy() and mul() make lie alike.  Products
    (Matrix.multiply_vec), the operations below and the solvers on
    Vectors move no data between the processes; upload() and download()
    do.  Operands of one operation must share client, dtype and length;
    a mismatch is an Error (SPMV_EINVAL) from the library.  After a
    restart of spmvd's device worker a vector's contents are lost: reading
    it before it is written again raises Error SPMV_EWORKER.

    The vector is freed by close(), at the end of a with block, when it
    is garbage collected, or when its client closes.
    """

    _free = staticmethod(lib.spmv_vector_free)

    def __init__(self, client, data, dtype=None, like=None):
        if like is not None:
            if like.client is not client:
                raise ValueError("spmvd: like is a Matrix of another client")
            if dtype is not None and np.dtype(dtype) != like.dtype:
                raise ValueError("spmvd: dtype %s, but like holds %s values"
                                 % (np.dtype(dtype).name, like.dtype.name))
            dtype = like.dtype
        if isinstance(data, numbers.Integral):
            n = int(data)
            if n < 0:
                raise ValueError("spmvd: a vector of %d values" % n)
            dtype = np.dtype(np.float64 if dtype is None else dtype)
            values = None
        else:
            values = np.asarray(data)
            if values.ndim != 1:
                raise ValueError("spmvd: a Vector is 1-D, the array has "
                                 "shape %s" % (values.shape,))
            if dtype is None:
                _lib.dtype_code(values.dtype, "vector values")
                dtype = values.dtype
            dtype = np.dtype(dtype)
            n = values.shape[0]
        if like is not None and n != like.shape[0]:
            raise ValueError("spmvd: a Vector like a Matrix of %d rows holds "
                             "%d values, not %d" % (like.shape[0],
                                                    like.shape[0], n))
        self._code = _lib.dtype_code(dtype, "vector values")
        self.dtype = dtype
        self._n = n
        self._client = client
        self._like = like
        self._ptr = None
        out = ctypes.c_void_p()
        cptr = client._handle()
        if like is not None:
            check(lib.spmv_vector_new_like(like._handle(), ctypes.byref(out)),
                  cptr)
        else:
            check(lib.spmv_vector_new(cptr, self._code, n, ctypes.byref(out)),
                  cptr)
        self._ptr = out
        client._adopt(self)
        if values is not None:
            try:
                self.upload(values)
            except BaseException:
                self.close()
                raise

    def __repr__(self):
        state = " (closed)" if self._ptr is None else ""
        return "<spmvd.Vector %d %s%s>" % (self._n, self.dtype.name, state)

    def __len__(self):
        return self._n

    def __array__(self, dtype=None, copy=None):
        a = self.download()
        return a if dtype is None else a.astype(dtype)

    # copy.copy() and deepcopy() make a new device vector (copy()): a
    # shallow copy would share the handle, and each copy would free it.
    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce_ex__(self, protocol):
        raise TypeError("spmvd: a Vector lives in spmvd and cannot be "
                        "pickled: pickle its download()")

    @property
    def client(self):
        """The Client that holds this vector."""
        return self._client

    @property
    def size(self):
        """The number of values."""
        return self._n

    @property
    def shape(self):
        """(size,), as a numpy vector's."""
        return (self._n,)

    @property
    def closed(self):
        """Whether the vector was freed (close(), or its client closed)."""
        return self._ptr is None

    def close(self):
        """Free the vector in spmvd (idempotent)."""
        ptr, self._ptr = self._ptr, None
        if ptr is not None:
            self._client._release(self, self._free, ptr)

    def _orphan(self):
        # The client disconnects: the library forgets the vector and the
        # daemon frees it with the connection.
        self._ptr = None

    def _handle(self):
        if self._ptr is None:
            raise ValueError("spmvd: the vector is closed")
        return self._ptr

    def _alike(self):
        # A new zero Vector of this one's shape, split as it is.
        if self._like is not None and not self._like.closed:
            return Vector(self._client, self._n, self.dtype, like=self._like)
        return Vector(self._client, self._n, self.dtype)

    def _check(self, rc):
        return check(rc, self._client._ptr)

    def upload(self, values):
        """Set the vector to values (size real values, converted to its
        dtype); return self."""
        a = _lib.host_array(values, self.dtype, self._n, "values")
        self._check(lib.spmv_vector_upload(self._handle(), a.ctypes.data))
        return self

    def download(self, out=None):
        """Return the values as a numpy array: a new one, or out (a
        contiguous 1-D array of the vector's dtype and size) filled."""
        if out is None:
            out = np.empty(self._n, self.dtype)
        elif (not isinstance(out, np.ndarray) or out.dtype != self.dtype
              or out.shape != (self._n,) or not out.flags.c_contiguous
              or not out.flags.writeable):
            raise ValueError("spmvd: out must be a writable contiguous %s "
                             "array of shape (%d,)"
                             % (self.dtype.name, self._n))
        self._check(lib.spmv_vector_download(self._handle(),
                                             out.ctypes.data))
        return out

    def fill(self, value):
        """Set every value to value; return self."""
        self._check(lib.spmv_vector_fill(self._handle(), float(value)))
        return self

    def copy_to(self, y):
        """y = self (another Vector of the same dtype and size); return
        y."""
        self._check(lib.spmv_vector_copy(self._handle(), _vec(y)))
        return y

    def copy(self):
        """Return a new Vector holding the same values (copied in spmvd)."""
        y = self._alike()
        try:
            return self.copy_to(y)
        except BaseException:
            y.close()
            raise

    def scale(self, alpha):
        """self = alpha * self; return self."""
        self._check(lib.spmv_vector_scale(float(alpha), self._handle()))
        return self

    def axpby(self, alpha, x, beta=1.0):
        """self = alpha * x + beta * self; return self."""
        self._check(lib.spmv_vector_axpby(float(alpha), _vec(x),
                                          float(beta), self._handle()))
        return self

    def mul(self, y, out=None):
        """out = self .* y element by element (out may be self or y; a
        new Vector when None); return out."""
        new = out is None
        if new:
            out = self._alike()
        try:
            self._check(lib.spmv_vector_mul(self._handle(), _vec(y),
                                            _vec(out)))
        except BaseException:
            if new:
                out.close()
            raise
        return out

    def dot(self, y):
        """Return self . y (accumulated in double, deterministic)."""
        r = ctypes.c_double()
        self._check(lib.spmv_vector_dot(self._handle(), _vec(y),
                                        ctypes.byref(r)))
        return r.value

    def nrm2(self):
        """Return the 2-norm (accumulated in double, deterministic)."""
        r = ctypes.c_double()
        self._check(lib.spmv_vector_nrm2(self._handle(), ctypes.byref(r)))
        return r.value


def _vec(v):
    if not isinstance(v, Vector):
        raise TypeError("spmvd: expected a spmvd.Vector, got %s"
                        % type(v).__name__)
    return v._handle()
