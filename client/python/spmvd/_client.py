"""Client: one connection to spmvd, and the owner of what it loads."""

import ctypes
import json
import os
import threading
import weakref

from . import _lib
from ._lib import check, lib

__all__ = ["Client", "connect"]


def connect(path=None, autostart=True):
    """Connect to spmvd and return a Client.

    path is the daemon's Unix socket; None takes libspmvclient's default:
    $SPMVD_SOCKET if set, else $XDG_RUNTIME_DIR/spmvd.sock if it exists,
    else the system socket.  With autostart, when nobody listens there,
    libspmvclient starts spmvd for this user on that socket (on the user
    socket when it was the system socket), with the user's cache, exiting
    when idle (spmv_connect_opts, SPMV_CONNECT_AUTOSTART in
    libspmvclient(3)); a library older than spmv_connect_opts() connects
    without it.  Raises Error (name "SPMV_ECONNECT" when no daemon
    answers or none could be started).
    """
    return Client(path, autostart)


class Client(_lib.Closing):
    """One connection to spmvd (see connect()).

    Matrices and vectors made through a client keep it alive; closing the
    client (close(), the end of a with block, or garbage collection once
    nothing refers to it) disconnects, and the daemon frees whatever the
    connection still holds: those objects are then closed.  A client may
    be shared by threads, but close() must not race with calls on it or
    on its objects.
    """

    _disconnect = staticmethod(lib.spmv_disconnect)

    def __init__(self, path=None, autostart=True):
        self._ptr = None
        self._lock = threading.RLock()
        self._children = weakref.WeakSet()
        arg = os.fsencode(path) if path is not None else None
        out = ctypes.c_void_p()
        if _lib.HAVE_CONNECT_OPTS:
            flags = _lib.SPMV_CONNECT_AUTOSTART if autostart else 0
            rc = lib.spmv_connect_opts(arg, flags, ctypes.byref(out))
        else:
            rc = lib.spmv_connect(arg, ctypes.byref(out))
        check(rc, None)
        self._ptr = out

    def __repr__(self):
        if self._ptr is None:
            return "<spmvd.Client (closed)>"
        return "<spmvd.Client %s>" % self.path

    def __reduce_ex__(self, protocol):
        # A copy would share the connection, and each copy would close it.
        raise TypeError("spmvd: a Client is a connection and cannot be "
                        "copied or pickled: connect again")

    @property
    def closed(self):
        """Whether close() has run."""
        return self._ptr is None

    @property
    def path(self):
        """The socket path this client is connected to."""
        return lib.spmv_client_path(self._handle()).decode(errors="replace")

    def close(self):
        """Disconnect; the daemon frees the connection's matrices and
        vectors, whose objects are closed (idempotent)."""
        with self._lock:
            ptr, self._ptr = self._ptr, None
            if ptr is None:
                return
            for child in list(self._children):
                child._orphan()
            self._children.clear()
            self._disconnect(ptr)

    # What Matrix and Vector use: their handle on the connection, their
    # registration, and the lock under which they free themselves, so that
    # no free races the disconnect that frees them all.
    def _handle(self):
        if self._ptr is None:
            raise ValueError("spmvd: the client is closed")
        return self._ptr

    def _adopt(self, child):
        with self._lock:
            self._children.add(child)

    def _release(self, child, free, ptr):
        with self._lock:
            self._children.discard(child)
            if self._ptr is not None:
                free(ptr)

    def _json(self, fn):
        out = ctypes.c_void_p()
        check(fn(self._handle(), ctypes.byref(out)), self._ptr)
        return json.loads(_lib.take_string(out))

    def cancel_solve(self):
        """Ask the solve now running on this client (in another thread)
        to stop: it returns within some 40 ms with reason "cancelled" and
        x as far as it got.  Does nothing while no solve runs."""
        ptr = self._ptr
        if ptr is not None:
            lib.spmv_solve_cancel(ptr)

    def load(self, matrix, dtype=None, *, strategy=None, name=None,
             verify=False, split=None):
        """Load a matrix into spmvd and return a Matrix.

        matrix is a scipy.sparse array or matrix (any format: converted
        to CSR; a CSR one with contiguous int32 indices and float32 or
        float64 values is passed as it is, with only its row pointers
        widened to int64) or the path of a Matrix Market file (plain or
        gzip, read by libspmvclient).  dtype is the values' type in
        spmvd: by default the array's own, which must be float32 or
        float64 (anything else is a TypeError: convert with astype, or
        name dtype here), and float64 for a file.  strategy is the tuning
        strategy ("auto", "model", "predict", "trial", "exhaustive"; None
        for the daemon's default), name a label shown by list(), and
        verify checks the tuned kernel against the reference product.
        split=n (2 or more) cuts a square matrix's rows into n blocks
        balanced by nonzeros, each on a spmvd worker of its own (spmvd
        --devices, --cpu-workers): products, and solves by every method
        (in float32 iterated in double on the float32 products), run on
        all of them (Matrix.blocks).
        """
        from ._matrix import Matrix
        if isinstance(matrix, (str, bytes, os.PathLike)):
            return Matrix._from_mtx(self, matrix, dtype, strategy, name,
                                    verify, split)
        return Matrix._from_sparse(self, matrix, dtype, strategy, name,
                                   verify, split)

    def load_csr(self, indptr, indices, data, shape, *, strategy=None,
                 name=None, verify=False, split=None):
        """Load a CSR matrix given as arrays and return a Matrix.

        indptr holds rows + 1 offsets, indices the column of each entry
        (int32 after conversion) and data its value (float32 or float64:
        the Matrix's dtype); shape is (rows, cols).  Needs no scipy.
        """
        from ._matrix import Matrix
        return Matrix._from_csr(self, indptr, indices, data, shape,
                                strategy, name, verify, split)

    def vector(self, data, dtype=None, like=None):
        """Return a new device Vector: data is a length (zero-filled) or
        an array to upload; like a Matrix whose rows it lies as; see
        Vector."""
        from ._vector import Vector
        return Vector(self, data, dtype, like)

    def status(self):
        """Return the daemon's status as a dict (server, backend, device,
        workers, connections, matrices, vectors, cache_path, ...)."""
        return self._json(lib.spmv_status_json)

    def list(self):
        """Return the caller's loaded matrices, each a dict (handle, name,
        rows, cols, nnz, dtype, config)."""
        return self._json(lib.spmv_list_json).get("matrices", [])

    def forget(self, fingerprint="all"):
        """Ask spmvd to forget the cached tunings of a fingerprint (32 hex
        digits) or of all matrices; return how many it forgot.  Root,
        spmvd's admin group or the daemon's own user only (else Error
        SPMV_EPERM)."""
        n = ctypes.c_int()
        check(lib.spmv_forget(self._handle(), fingerprint.encode(),
                              ctypes.byref(n)), self._ptr)
        return n.value

    def export(self, fingerprint="all"):
        """Return the daemon's cached tunings of a fingerprint (32 hex
        digits) or of all matrices as the dict "spmvctl export" writes
        ({"spmvd_export", "schema", "tunings": [...]}), which import_()
        takes back.  Root, spmvd's admin group or the daemon's own user
        only (else Error SPMV_EPERM)."""
        out = ctypes.c_void_p()
        check(lib.spmv_export_json(self._handle(), fingerprint.encode(),
                                   ctypes.byref(out)), self._ptr)
        return json.loads(_lib.take_string(out))

    def shutdown(self, wait=True):
        """Ask spmvd to stop: it answers, takes no new connection, finishes
        the requests in flight and exits.  With wait, return once it has
        closed this connection (what was in flight is done).  The client
        serves no request after.  Root or the daemon's own user only (else
        Error SPMV_EPERM); a systemd service is better stopped with
        systemctl."""
        check(lib.spmv_shutdown(self._handle(), 1 if wait else 0), self._ptr)

    def import_(self, tunings):
        """Import tunings written by "spmvctl export": its JSON text, or
        that text parsed (the object or its "tunings" list).  Return
        (imported, skipped).  Root, spmvd's admin group or the daemon's own
        user only."""
        if not isinstance(tunings, (str, bytes)):
            tunings = json.dumps(tunings)
        if isinstance(tunings, str):
            tunings = tunings.encode()
        imported, skipped = ctypes.c_int(), ctypes.c_int()
        check(lib.spmv_import_json(self._handle(), tunings,
                                   ctypes.byref(imported),
                                   ctypes.byref(skipped)), self._ptr)
        return imported.value, skipped.value

