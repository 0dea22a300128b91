#!/usr/bin/python3
"""mkfigures.py: figures of every shared matrix from an independent reader.

Reads each .mtx / .mtx.gz file of a directory with scipy.io.mmread and
writes one TSV line per matrix, which tests/check_mmio.c compares with the
CSR that spmv_mmio_read builds.  Figures, after symmetric expansion and
after summing duplicate entries (explicit zeros stay stored):

  file      file name
  rows      number of rows
  cols      number of columns
  nnz       stored entries of the CSR (duplicates summed, zeros kept)
  dups      entries summed into an earlier one (expanded COO count - nnz)
  rowsum    sum over rows i (0-based) of i * (length of row i)
  colsum    sum over entries of the 0-based column index
  valsum    sum of the values
  abssum    sum of the absolute values

usage: mkfigures.py MATRIX_DIR [OUT.tsv]   (default OUT: stdout)
"""

import os
import sys

import numpy as np
import scipy
import scipy.io
import scipy.sparse


def figures(path):
    """Returns the figures of one matrix file as a list of strings."""
    a = scipy.io.mmread(path)
    if isinstance(a, np.ndarray):
        # An array file: every position is stored.
        coo = scipy.sparse.coo_matrix(np.ones(a.shape))
        coo.data = a[coo.row, coo.col].astype(np.float64)
    else:
        coo = scipy.sparse.coo_matrix(a)
    expanded = int(coo.nnz)
    # tocsr() sums duplicates and keeps explicit zeros.
    csr = scipy.sparse.csr_matrix(
        (coo.data.astype(np.float64), (coo.row, coo.col)), shape=coo.shape)
    csr.sum_duplicates()
    lengths = np.diff(csr.indptr).astype(np.int64)
    rowsum = int(sum(int(i) * int(n) for i, n in enumerate(lengths)))
    colsum = int(csr.indices.astype(np.int64).sum())
    data = csr.data.astype(np.float64)
    return [
        os.path.basename(path),
        str(csr.shape[0]),
        str(csr.shape[1]),
        str(int(csr.nnz)),
        str(expanded - int(csr.nnz)),
        str(rowsum),
        str(colsum),
        repr(float(data.sum())),
        repr(float(np.abs(data).sum())),
    ]


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write(__doc__)
        return 2
    directory = argv[1]
    names = sorted(n for n in os.listdir(directory)
                   if n.endswith(".mtx") or n.endswith(".mtx.gz"))
    lines = [
        "# matrices.tsv: written by tests/data/mkfigures.py with scipy %s, "
        "numpy %s" % (scipy.__version__, np.__version__),
        "\t".join(["file", "rows", "cols", "nnz", "dups", "rowsum", "colsum",
                   "valsum", "abssum"]),
    ]
    for name in names:
        lines.append("\t".join(figures(os.path.join(directory, name))))
    text = "\n".join(lines) + "\n"
    if len(argv) == 3:
        with open(argv[2], "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
