"""The ctypes binding of libspmvclient: the library, its prototypes and
structures, and the exception its error codes become."""

import ctypes
import ctypes.util
import os

import numpy as np

__all__ = ["Error", "lib", "check", "take_string", "dtype_code",
           "host_array", "library_path"]

_ENV = "SPMVD_LIBSPMVCLIENT"


def library_path():
    """Return the libspmvclient this module loads.

    $SPMVD_LIBSPMVCLIENT when set (the build tree's tests name
    client/.libs/libspmvclient.so with it), else the library installed
    beside this module (the configured libdir), else the one the dynamic
    linker finds.
    """
    env = os.environ.get(_ENV)
    if env:
        return env
    try:
        from ._config import LIBSPMVCLIENT
    except ImportError:
        # A source tree has no _config.py: only make generates it.
        LIBSPMVCLIENT = None
    if LIBSPMVCLIENT and os.path.exists(LIBSPMVCLIENT):
        return LIBSPMVCLIENT
    found = ctypes.util.find_library("spmvclient")
    if found:
        return found
    raise ImportError(
        "spmvd: libspmvclient not found (not at %s, nor where the dynamic "
        "linker looks): install spmvd, or set %s to the library's path"
        % (LIBSPMVCLIENT or "a configured path", _ENV))


def _open():
    path = library_path()
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        raise ImportError("spmvd: cannot load libspmvclient from %s: %s"
                          % (path, e)) from e


lib = _open()
# The library's strings and histories are released with the C library's
# free(), which the process's global namespace provides.
_free = ctypes.CDLL(None).free
_free.argtypes = [ctypes.c_void_p]
_free.restype = None

P = ctypes.c_void_p
I64 = ctypes.c_int64
DBL = ctypes.c_double
INT = ctypes.c_int
STR = ctypes.c_char_p


class Progress(ctypes.Structure):
    """struct spmv_progress."""
    _fields_ = [("stage", STR), ("done", I64), ("total", I64),
                ("candidate", STR), ("time_us", DBL), ("residual", DBL)]


PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.POINTER(Progress), P)
# ctypes passes a function pointer argument only as an instance: the
# NULL one says "no progress".
NO_PROGRESS = PROGRESS_FN()


class LoadOptions(ctypes.Structure):
    """struct spmv_load_options."""
    _fields_ = [("strategy", STR), ("name", STR), ("verify", INT),
                ("progress", PROGRESS_FN), ("progress_arg", P),
                ("split", INT)]


class SolveOptions(ctypes.Structure):
    """struct spmv_solve_options."""
    _fields_ = [("method", STR), ("rtol", DBL), ("atol", DBL),
                ("maxiter", I64), ("restart", INT), ("damping", DBL),
                ("history", INT), ("progress_every", I64),
                ("progress", PROGRESS_FN), ("progress_arg", P)]


class SolveResult(ctypes.Structure):
    """struct spmv_solve_result."""
    _fields_ = [("iterations", I64), ("converged", INT),
                ("reason", ctypes.c_char * 32), ("residual", DBL),
                ("relative_residual", DBL), ("rhs_norm", DBL),
                ("seconds", DBL), ("us_per_iteration", DBL),
                ("history", ctypes.POINTER(DBL)), ("nhistory", I64)]


PP = ctypes.POINTER(P)
PSTR = ctypes.POINTER(P)  # a char ** whose string is freed with free()
PINT = ctypes.POINTER(INT)
PDBL = ctypes.POINTER(DBL)

_PROTOTYPES = {
    "spmv_connect": (INT, [STR, PP]),
    "spmv_disconnect": (None, [P]),
    "spmv_client_errmsg": (STR, [P]),
    "spmv_client_path": (STR, [P]),
    "spmv_strerror": (STR, [INT]),
    "spmv_err_name": (STR, [INT]),
    "spmv_load_csr": (INT, [P, INT, I64, I64, I64, P, P, P,
                            ctypes.POINTER(LoadOptions), PP]),
    "spmv_load_mtx": (INT, [P, STR, INT, ctypes.POINTER(LoadOptions), PP]),
    "spmv_matrix_free": (P, [P]),
    "spmv_matrix_blocks": (INT, [P]),
    "spmv_matrix_decision_json": (INT, [P, PSTR]),
    "spmv_multiply": (INT, [P, DBL, P, DBL, P]),
    "spmv_multiply_batch": (INT, [P, INT, DBL, P, DBL, P]),
    "spmv_matrix_vectors": (INT, [P, INT, PP, PP]),
    "spmv_multiply_inplace": (INT, [P, DBL, DBL]),
    "spmv_info_json": (INT, [P, PSTR]),
    "spmv_tune": (INT, [P, STR, PROGRESS_FN, P]),
    "spmv_status_json": (INT, [P, PSTR]),
    "spmv_list_json": (INT, [P, PSTR]),
    "spmv_forget": (INT, [P, STR, PINT]),
    "spmv_import_json": (INT, [P, STR, PINT, PINT]),
    "spmv_export_json": (INT, [P, STR, PSTR]),
    "spmv_shutdown": (INT, [P, INT]),
    "spmv_vector_new": (INT, [P, INT, I64, PP]),
    "spmv_vector_new_like": (INT, [P, PP]),
    "spmv_vector_free": (P, [P]),
    "spmv_vector_upload": (INT, [P, P]),
    "spmv_vector_download": (INT, [P, P]),
    "spmv_vector_fill": (INT, [P, DBL]),
    "spmv_multiply_vec": (INT, [P, DBL, P, DBL, P]),
    "spmv_vector_copy": (INT, [P, P]),
    "spmv_vector_scale": (INT, [DBL, P]),
    "spmv_vector_axpby": (INT, [DBL, P, DBL, P]),
    "spmv_vector_mul": (INT, [P, P, P]),
    "spmv_vector_dot": (INT, [P, P, PDBL]),
    "spmv_vector_nrm2": (INT, [P, PDBL]),
    "spmv_solve": (INT, [P, P, P, INT, ctypes.POINTER(SolveOptions),
                         ctypes.POINTER(SolveResult)]),
    "spmv_solve_vec": (INT, [P, P, P, ctypes.POINTER(SolveOptions),
                             ctypes.POINTER(SolveResult)]),
    "spmv_solve_cancel": (None, [P]),
}
for _name, (_res, _args) in _PROTOTYPES.items():
    _fn = getattr(lib, _name)
    _fn.restype = _res
    _fn.argtypes = _args

# spmv_connect_opts (with its autostart flag) is newer than the rest: a
# library without it still serves every other call.
SPMV_CONNECT_AUTOSTART = 1
HAVE_CONNECT_OPTS = hasattr(lib, "spmv_connect_opts")
if HAVE_CONNECT_OPTS:
    lib.spmv_connect_opts.restype = INT
    lib.spmv_connect_opts.argtypes = [STR, ctypes.c_uint, PP]

SPMV_F32 = 1
SPMV_F64 = 2
_DTYPES = {np.dtype(np.float32): SPMV_F32, np.dtype(np.float64): SPMV_F64}


def dtype_code(dtype, what="values"):
    """Return the spmv_dtype of a numpy dtype; TypeError unless f32/f64."""
    dt = np.dtype(dtype)
    code = _DTYPES.get(dt)
    if code is None:
        raise TypeError(
            "spmvd: %s of dtype %s: spmvd computes in float32 or float64; "
            "convert with .astype(numpy.float64) (or numpy.float32)"
            % (what, dt.name))
    return code


class Error(RuntimeError):
    """A failure that libspmvclient or the daemon reported.

    code is the library's negative error number (spmv_types.h), name its
    C identifier ("SPMV_ECONNECT"), description the library's fixed
    English text for the code, and message what the library said of this
    failure (spmv_client_errmsg), which str() gives after the name.
    """

    def __init__(self, code, message):
        self.code = int(code)
        self.name = "SPMV_" + lib.spmv_err_name(self.code).decode()
        self.description = lib.spmv_strerror(self.code).decode()
        self.message = message or self.description
        super().__init__("%s: %s" % (self.name, self.message))


def check(rc, client):
    """Raise Error for a negative rc, with the message recorded on client
    (a struct spmv_client pointer, or None for a failed connect)."""
    if rc < 0:
        msg = lib.spmv_client_errmsg(client)
        raise Error(rc, msg.decode(errors="replace") if msg else "")
    return rc


def take_string(ptr):
    """Return the C string at ptr (a c_void_p the library allocated) as
    str and free it."""
    if not ptr.value:
        return ""
    try:
        return ctypes.string_at(ptr.value).decode()
    finally:
        _free(ptr.value)


def free(address):
    """Release memory the library allocated (a solve's history)."""
    _free(address)


def real_vector(a, n, what):
    """Return a as a numpy array after checking that it is a vector of n
    real values (ValueError naming its shape, TypeError its dtype)."""
    a = np.asarray(a)
    if a.ndim != 1 or a.shape[0] != n:
        raise ValueError("spmvd: %s has shape %s, must be (%d,)"
                         % (what, a.shape, n))
    if a.dtype.kind not in "biuf":
        raise TypeError("spmvd: %s of dtype %s: real values expected"
                        % (what, a.dtype.name))
    return a


def host_array(a, dtype, n, what):
    """Return a as a contiguous 1-D array of dtype holding n values (a
    itself when it already is one).

    Every host buffer handed to the library goes through here, so that
    the library never reads or writes past its end.
    """
    return np.ascontiguousarray(real_vector(a, n, what), dtype=dtype)


class Closing:
    """What a Client, Matrix and Vector share: close() on leaving a with
    block and on garbage collection."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            # At interpreter shutdown the process's end (or the
            # connection's) frees what is left.
            pass
