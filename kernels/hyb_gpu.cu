/* hyb_gpu.cu: HYB SpMV, the ELL part for the first K entries of each row then the COO rest. */
/*
 * Work decomposition: two phases on one stream.  The ELL kernel of ell_gpu.cu
 * writes y = alpha*A_ell*x + beta*y (one thread per row, coalesced over the
 * column-major arrays); then the COO kernels of coo_gpu.cu add alpha*A_coo*x,
 * eight entries per thread with a warp segmented scan and an ordered
 * fix-up (deterministic).
 * Valid parameters: BS in 32..1024, a multiple of 32, used by both phases;
 * any K >= 0 (K = 0 leaves everything to COO); f32, f64.
 */
#include "spmv_cuda.cuh"

/* Launches hyb for m on stream s: the ELL part, then the COO rest added. */
extern "C" SPMV_LAUNCH_PROTO(hyb) {
  const struct spmv_hyb_layout *H = &m->L.u.hyb;
  int bs = m->L.cfg.bs;
  int rc = spmv_check_bs(bs, "hyb", err);
  if (rc) return rc;
  if (m->L.dtype == SPMV_F32) {
    rc = spmv_ell_run<float>(&H->ell, m->L.rows, bs, (float)alpha,
                             (const float *)x, (float)beta, (float *)y, s, err);
    if (rc) return rc;
    return spmv_coo_accumulate<float>(&H->coo, H->coo_nnz, bs, (float)alpha,
                                      (const float *)x, (float *)y, m->work, s,
                                      err);
  }
  rc = spmv_ell_run<double>(&H->ell, m->L.rows, bs, alpha, (const double *)x,
                            beta, (double *)y, s, err);
  if (rc) return rc;
  return spmv_coo_accumulate<double>(&H->coo, H->coo_nnz, bs, alpha,
                                     (const double *)x, (double *)y, m->work,
                                     s, err);
}
