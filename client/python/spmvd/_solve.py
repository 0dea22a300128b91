"""Server-side solvers: a whole iterative method in one request, shaped
like scipy.sparse.linalg's (x, info)."""

import ctypes
import dataclasses
from typing import Optional

import numpy as np

from . import _lib
from ._lib import check, lib
from ._matrix import Matrix
from ._vector import Vector

__all__ = ["SolveInfo", "cg", "pcg_jacobi", "bicgstab", "gmres", "pagerank"]


@dataclasses.dataclass(frozen=True, eq=False)
class SolveInfo:
    """What a solve found.

    code is scipy's info integer: 0 converged, -1 on a breakdown or an
    indefinite matrix (CG), else the iteration count: the method stopped
    short of the tolerance (maxiter ran out, the solve was cancelled, or
    it stagnated: the residual recomputed from x stayed above it).
    reason is spmvd's: "converged-rtol", "converged-atol", "maxiter",
    "cancelled", "stagnated", "breakdown" or "indefinite".  residual is ||b - A x||_2 recomputed
    from x (pagerank: the 1-norm of the last change), relative_residual
    it over rhs_norm = ||b||_2; seconds is the solve's time on the
    worker.  history (asked for with history=True) holds the residual
    norm after each of the first 8000 iterations, else None.
    int(info) is code.
    """

    code: int
    converged: bool
    reason: str
    method: str
    iterations: int
    residual: float
    relative_residual: float
    rhs_norm: float
    seconds: float
    us_per_iteration: float
    history: Optional[np.ndarray] = None

    def __int__(self):
        return self.code

    __index__ = __int__


def _code(converged, reason, iterations):
    # scipy's: <0 for what it calls illegal input or breakdown, and the
    # iterations (>0) for every other way of missing the tolerance.
    if converged:
        return 0
    if reason in ("breakdown", "indefinite"):
        return -1
    return max(int(iterations), 1)


def _info(method, r):
    hist = None
    if r.history:
        hist = np.ctypeslib.as_array(r.history, shape=(r.nhistory,)).copy()
    reason = r.reason.decode(errors="replace")
    return SolveInfo(code=_code(r.converged, reason, r.iterations),
                     converged=bool(r.converged), reason=reason,
                     method=method, iterations=int(r.iterations),
                     residual=r.residual,
                     relative_residual=r.relative_residual,
                     rhs_norm=r.rhs_norm, seconds=r.seconds,
                     us_per_iteration=r.us_per_iteration, history=hist)


def _solve(method, A, b, x0, rtol, atol, maxiter, restart=None,
           damping=None, history=False, progress=None, progress_every=1,
           device=False):
    if not isinstance(A, Matrix):
        raise TypeError("spmvd.%s: A must be a spmvd.Matrix (load it with "
                        "Client.load), got %s"
                        % (method.replace("-", "_"), type(A).__name__))
    # The C API takes a value <= 0 for "the daemon's default": what would
    # mean something else there is refused here.
    if rtol is not None and not rtol > 0:
        raise ValueError("spmvd: rtol is %r, must be > 0" % (rtol,))
    if atol < 0:
        raise ValueError("spmvd: atol is %r, must be >= 0" % (atol,))
    if maxiter is not None and maxiter < 1:
        raise ValueError("spmvd: maxiter is %r, must be >= 1" % (maxiter,))
    if restart is not None and restart < 1:
        raise ValueError("spmvd: restart is %r, must be >= 1" % (restart,))
    if damping is not None and not damping > 0:
        raise ValueError("spmvd: damping is %r, must be in (0, 1]"
                         % (damping,))
    o = _lib.SolveOptions()
    o.method = method.encode()
    o.rtol = rtol or 0.0
    o.atol = atol
    o.maxiter = maxiter or 0
    o.restart = restart or 0
    o.damping = damping or 0.0
    o.history = 1 if history else 0
    failure = []
    if progress is not None:
        # An exception cannot cross the C call: it cancels the solve and
        # is raised once the solve returns.
        cptr = A.client._handle()

        def relay(p, arg):
            if not failure:
                try:
                    progress(p.contents.done, p.contents.residual)
                except BaseException as e:
                    failure.append(e)
                    lib.spmv_solve_cancel(cptr)
        cb = _lib.PROGRESS_FN(relay)
        o.progress = cb
        o.progress_every = max(int(progress_every), 1)
    r = _lib.SolveResult()
    try:
        if device or isinstance(b, Vector):
            x = _solve_vec(A, b, x0, o, r)
        else:
            x = _solve_host(A, b, x0, o, r)
        info = _info(method, r)
    finally:
        if r.history:
            _lib.free(ctypes.cast(r.history, ctypes.c_void_p).value)
    if failure:
        raise failure[0]
    return x, info


def _solve_host(A, b, x0, o, r):
    m, n = A.shape
    ba = None if b is None else _lib.host_array(b, A.dtype, m, "b")
    if x0 is None:
        x = np.zeros(n, A.dtype)
    else:
        x = np.array(_lib.host_array(x0, A.dtype, n, "x0"), copy=True)
    check(lib.spmv_solve(A._handle(), None if ba is None else ba.ctypes.data,
                         x.ctypes.data, 0 if x0 is None else 1,
                         ctypes.byref(o), ctypes.byref(r)), A.client._ptr)
    return x


def _solve_vec(A, b, x0, o, r):
    # The solution is a new Vector: x0, like scipy's, is left as it was.
    # x lies as A does (split as its rows when A is split).
    if x0 is None:
        x = Vector(A.client, A.shape[1], A.dtype, like=A)
        if b is None:
            # pagerank's start, which a named vector replaces.
            x.fill(1.0 / max(A.shape[1], 1))
    elif isinstance(x0, Vector):
        x = x0.copy()
    else:
        x = Vector(A.client, x0, A.dtype, like=A)
    try:
        check(lib.spmv_solve_vec(A._handle(),
                                 None if b is None else b._handle(),
                                 x._handle(), ctypes.byref(o),
                                 ctypes.byref(r)), A.client._ptr)
    except BaseException:
        x.close()
        raise
    return x


_COMMON = """
    A is a spmvd.Matrix; b a numpy vector of A.shape[0] values (x is then
    a new numpy array) or a spmvd.Vector (x is then a new Vector; b and x0
    stay on the device).  x0 is the initial guess (zero when None), left
    unchanged.  The method stops when ||b - A x||_2 <= max(rtol * ||b||_2,
    atol), after maxiter iterations (None: 10 x rows), or on a breakdown.
    history=True keeps the residual norm of each iteration in
    info.history; progress, a callable, is called as progress(iteration,
    residual) every progress_every iterations while the solve runs (it
    must not call into the same client); an exception it raises, a
    KeyboardInterrupt included, cancels the solve and is raised.  Another
    thread may stop the solve with Client.cancel_solve().  Returns (x,
    info), info a SolveInfo whose code is scipy's info integer."""


def cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None,
       history=False, progress=None, progress_every=1):
    """Solve A x = b for a symmetric positive definite A by conjugate
    gradients in spmvd.  M=None or M="jacobi" (preconditioned by the
    inverse of A's diagonal, as pcg_jacobi); other preconditioners are
    not supported.
    """
    if M is None:
        method = "cg"
    elif isinstance(M, str) and M == "jacobi":
        method = "pcg-jacobi"
    else:
        raise TypeError("spmvd.cg: M must be None or 'jacobi', got %r" % (M,))
    return _solve(method, A, b, x0, rtol, atol, maxiter, history=history,
                  progress=progress, progress_every=progress_every)


def pcg_jacobi(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None,
               history=False, progress=None, progress_every=1):
    """Solve A x = b for a symmetric positive definite A by conjugate
    gradients preconditioned with the inverse of A's diagonal (a zero or
    missing diagonal entry is an Error SPMV_EINVAL naming the row).
    """
    return _solve("pcg-jacobi", A, b, x0, rtol, atol, maxiter,
                  history=history, progress=progress,
                  progress_every=progress_every)


def bicgstab(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None,
             history=False, progress=None, progress_every=1):
    """Solve A x = b for a general square A by BiCGStab in spmvd.
    """
    return _solve("bicgstab", A, b, x0, rtol, atol, maxiter,
                  history=history, progress=progress,
                  progress_every=progress_every)


def gmres(A, b, x0=None, *, rtol=1e-5, atol=0.0, restart=None,
          maxiter=None, history=False, progress=None, progress_every=1):
    """Solve A x = b for a general square A by restarted GMRES(restart)
    in spmvd (restart None: 30; modified Gram-Schmidt, Givens rotations).
    Unlike scipy's, maxiter counts iterations, not restart cycles.
    """
    return _solve("gmres", A, b, x0, rtol, atol, maxiter, restart=restart,
                  history=history, progress=progress,
                  progress_every=progress_every)


def pagerank(A, damping=0.85, *, x0=None, rtol=None, maxiter=None,
             device=False, history=False, progress=None, progress_every=1):
    """Return (x, info): the PageRank vector of the graph of A, computed
    in spmvd.

    An entry A[i, j] != 0 is an edge from j to i of weight |A[i, j]|;
    x = damping * A D^-1 x + (1 - damping + damping * dangling) / n with
    D the column sums and dangling the mass on columns without any
    (they teleport uniformly); x sums to 1.  The iteration starts from
    x0 (None: the uniform vector) and stops when the 1-norm of the change
    falls to rtol (None: 1e-10 in float64, 1e-6 in float32) or after
    maxiter iterations (None: 100).  x is a numpy array, or a Vector when
    x0 is one or device is true.  history and progress are as cg's.
    """
    return _solve("pagerank", A, None, x0, rtol, 0.0, maxiter,
                  damping=damping, history=history, progress=progress,
                  progress_every=progress_every,
                  device=device or isinstance(x0, Vector))


for _f in (cg, pcg_jacobi, bicgstab, gmres):
    _f.__doc__ = _f.__doc__.rstrip() + "\n" + _COMMON + "\n"
