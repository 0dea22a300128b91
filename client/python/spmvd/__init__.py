"""spmvd: sparse matrix-vector products and solves in the spmvd service.

A thin layer over libspmvclient (through ctypes): a Client is one
connection to the daemon, a Matrix a matrix it keeps resident and tuned
(a scipy.sparse.linalg.LinearOperator when scipy is installed), a Vector
a vector that stays where the matrices are, and cg, pcg_jacobi, bicgstab,
gmres and pagerank run a whole iterative method in the daemon, returning
(x, info) as scipy.sparse.linalg's solvers do.

    import numpy, scipy.io, spmvd
    with spmvd.connect() as c:
        A = c.load(scipy.io.mmread("matrix.mtx").tocsr())
        y = A @ numpy.ones(A.shape[1])
        x, info = spmvd.cg(A, y, rtol=1e-8)

Failures the library or the daemon report raise Error.  The module loads
$SPMVD_LIBSPMVCLIENT when that is set, else the libspmvclient installed
with it, else the one the dynamic linker finds (see library_path()).
"""

from ._lib import Error, library_path
from ._client import Client, connect
from ._matrix import Matrix
from ._vector import Vector
from ._solve import SolveInfo, bicgstab, cg, gmres, pagerank, pcg_jacobi

__all__ = ["Error", "Client", "connect", "Matrix", "Vector", "SolveInfo",
           "cg", "pcg_jacobi", "bicgstab", "gmres", "pagerank",
           "library_path"]
