/* ell_dev.cu: the device arrays of ell and ellr-t, and the device's fill of
 * their padded slots (ell's also for hyb's ELL part). */
#include "spmv_dev_arrays.cuh"

/* ell's columns and values, width x pitch slots each. */
int spmv_ell_dev_arrays(struct spmv_layout *L, size_t vs, struct array_ref *a) {
  int n = 0;
  struct spmv_ell_layout *E = &L->u.ell;
  add(a, &n, &E->col, (size_t)(E->width * E->pitch) * 4);
  add(a, &n, &E->val, (size_t)(E->width * E->pitch) * vs);
  return n;
}

/* ellr-t's row lengths, columns and values. */
int spmv_ellr_t_dev_arrays(struct spmv_layout *L, size_t vs,
                           struct array_ref *a) {
  int n = 0;
  struct spmv_ellr_layout *E = &L->u.ellr;
  size_t cells = (size_t)(E->iters * E->pitch * E->t);
  add(a, &n, &E->rl, (size_t)L->rows * 4);
  add(a, &n, &E->col, cells * 4);
  add(a, &n, &E->val, cells * vs);
  return n;
}

/* Slot at of a padded layout (ell, ellr-t): entry k of row i, or a pad
 * (column -1, value 0) past the row's end or past the matrix's rows. */
template <typename T>
__device__ inline void put_slot(int32_t *col, void *val, int64_t at, int64_t i,
                                int64_t k, int64_t rows,
                                const int64_t *__restrict__ rp,
                                const int32_t *__restrict__ ci,
                                const double *__restrict__ cv) {
  int64_t lo = i < rows ? rp[i] : 0, len = i < rows ? rp[i + 1] - lo : 0;
  bool real = k < len;
  col[at] = real ? ci[lo + k] : -1;
  ((T *)val)[at] = real ? (T)cv[lo + k] : T(0);
}

/* ell, one thread per slot: slot k * pitch + i holds entry k of row i
 * (spmv_ell_arrays_init()). */
template <typename T>
__global__ void spmv_ell_fill_kernel(struct spmv_ell_layout E, int64_t rows,
                                     const int64_t *__restrict__ rp,
                                     const int32_t *__restrict__ ci,
                                     const double *__restrict__ cv) {
  int64_t slots = E.width * E.pitch, stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t at = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; at < slots;
       at += stride) {
    int64_t k = at / E.pitch;
    put_slot<T>(E.col, E.val, at, at - k * E.pitch, k, rows, rp, ci, cv);
  }
}

/* Launches ell's fill kernel over E, one thread per slot. */
template <typename T>
static void ell_fill_arrays(struct spmv_ell_layout *E, int64_t rows,
                            const int64_t *rp, const int32_t *ci,
                            const double *cv) {
  spmv_ell_fill_kernel<T><<<fill_grid(E->width * E->pitch), 256>>>(
      *E, rows, rp, ci, cv);
}

/* Launches the fill of ELL arrays E; see spmv_dev_arrays.cuh. */
void spmv_ell_dev_fill_arrays(struct spmv_ell_layout *E, enum spmv_dtype dt,
                              int64_t rows, const int64_t *rp,
                              const int32_t *ci, const double *cv) {
  if (dt == SPMV_F32)
    ell_fill_arrays<float>(E, rows, rp, ci, cv);
  else
    ell_fill_arrays<double>(E, rows, rp, ci, cv);
}

/* ell's fill, where it has slots. */
SPMV_DEV_FILL_PROTO(ell) {
  if (D->u.ell.width * D->u.ell.pitch > 0)
    spmv_ell_dev_fill_arrays(&D->u.ell, D->dtype, A->rows, rp, ci, cv);
}

/* ellr-t, one thread per slot: slot (j / T) * pitch * T + i * T + j % T
 * holds entry j of row i (spmv_ellr_t_init()). */
template <typename T>
__global__ void spmv_ellr_fill_kernel(struct spmv_ellr_layout R, int64_t rows,
                                      const int64_t *__restrict__ rp,
                                      const int32_t *__restrict__ ci,
                                      const double *__restrict__ cv) {
  int64_t plane = R.pitch * R.t, slots = R.iters * plane;
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t at = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; at < slots;
       at += stride) {
    int64_t q = at / plane, rem = at - q * plane, i = rem / R.t;
    put_slot<T>(R.col, R.val, at, i, q * R.t + (rem - i * R.t), rows, rp, ci, cv);
  }
}

/* Launches ellr-t's fill kernel, where it has slots. */
template <typename T>
static void launch_ellr_fill(struct spmv_layout *D, const struct spmv_csr *A,
                             const int64_t *rp, const int32_t *ci, const double *cv,
                             const int64_t *start) {
  int64_t slots = D->u.ellr.iters * D->u.ellr.pitch * D->u.ellr.t;
  if (slots > 0)
    spmv_ellr_fill_kernel<T><<<fill_grid(slots), 256>>>(D->u.ellr, A->rows, rp, ci, cv);
  return;
}

SPMV_DEV_FILLER(ellr_t, launch_ellr_fill)
