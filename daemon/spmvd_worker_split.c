/* spmvd_worker_split.c: one row block of a matrix split over several
 * workers (issue 54): its local and remote parts resident, and its rows of
 * a product computed from the shared host vectors, the halo gathered from
 * them (the exchange over shared memory of the cpu backend). */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spmv_split.h"
#include "spmvd_worker_impl.h"

/* What a worker keeps of its block; owned by its wmatrix. */
struct wblock {
  int64_t r0, r1;
  int64_t nhalo;
  int32_t *halo;                /* global columns of x it reads (owned) */
  struct spmvd_bmatrix *remote; /* NULL when the block has no remote entry */
  void *gathered;               /* nhalo values of the matrix's dtype */
  struct spmvd_bvector *dhalo;  /* the halo as a device vector, made at the
                                   first product on device vectors */
};

void spmvd_wk_block_free(struct worker *w, struct wblock *b)
{
  if (!b)
    return;
  if (b->remote)
    w->ops->unload(w->be, b->remote);
  if (b->dhalo)
    w->ops->vec_free(w->be, b->dhalo);
  free(b->halo);
  free(b->gathered);
  free(b);
}

/* Keeps block sb (its halo taken) in m: the local part as m's resident
 * configuration cfg, tuned on its own first when req names a strategy
 * (*cfg is then the pick), the remote part beside it in csr-scalar, as
 * small as it is. */
static int keep_block(struct worker *w, struct wmatrix *m,
                      struct spmv_split_block *sb, json_t *req, json_int_t seq,
                      struct spmv_config *cfg, struct spmv_error *err)
{
  struct wblock *b = calloc(1, sizeof *b);
  struct spmvd_bmatrix *local = NULL;
  int rc;

  if (!b)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  b->r0 = sb->r0;
  b->r1 = sb->r1;
  b->nhalo = sb->nhalo;
  b->halo = sb->halo;
  sb->halo = NULL;
  b->gathered = malloc((size_t)(b->nhalo + 1) * spmv_dtype_size(m->dtype));
  if (!b->gathered) {
    spmvd_wk_block_free(w, b);
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory");
  }
  if (sb->local->rows > 0 && json_object_get(req, "strategy")) {
    struct wmatrix part = {.handle = m->handle, .dtype = m->dtype, .A = *sb->local};
    rc = spmvd_wk_tune_part(w, &part, req, seq, cfg, &local, err);
  } else {
    rc = sb->local->rows > 0 ? w->ops->load(w->be, sb->local, m->dtype, cfg, &local, err)
                             : 0;
  }
  if (rc < 0) {
    spmvd_wk_block_free(w, b);
    return rc;
  }
  if (sb->remote->nnz > 0) {
    /* The local pick's block size, where it has one (not cuSPARSE's). */
    struct spmv_config scalar = {.format = SPMV_FMT_CSR_SCALAR, .bs = cfg->bs};
    if (scalar.bs == 0 && strcmp(w->dev.backend, "cpu") != 0)
      scalar.bs = 128;
    if ((rc = w->ops->load(w->be, sb->remote, m->dtype, &scalar, &b->remote,
                           err)) < 0) {
      if (local)
        w->ops->unload(w->be, local);
      spmvd_wk_block_free(w, b);
      return rc;
    }
  }
  if (local)
    spmvd_wk_take_resident(w, m, local, cfg);
  m->block = b;
  return 0;
}

int spmvd_wk_op_adopt_block(struct worker *w, json_t *req, int *fds, int nfds,
                            json_t **rep, struct spmv_error *err)
{
  json_int_t h, rows, cols, nnz, seq = json_integer_value(json_object_get(req, "seq"));
  char text_out[64];
  int blocks, k, rc;
  const char *dts, *text;
  struct spmv_config cfg;
  enum spmv_dtype dt = SPMV_F64;
  struct spmv_split_block sb;
  struct wmatrix *m;

  if (json_unpack(req, "{sI ss sI sI sI ss si si}", "handle", &h, "dtype",
                  &dts, "rows", &rows, "cols", &cols, "nnz", &nnz, "config",
                  &text, "blocks", &blocks, "block", &k) < 0 ||
      nfds != 1 || k < 0 || k >= blocks)
    return spmv_error_set(err, SPMV_EPROTO, "bad adopt-block message");
  if ((rc = spmvd_wk_parse_dtype(dts, &dt, err)) < 0 ||
      (rc = spmv_config_parse(text, &cfg, err)) < 0)
    return rc;
  if (!(m = spmvd_wk_adopt_host(w, h, dt, rows, cols, nnz, &fds[0], err)))
    return err->code;
  /* Every worker cuts the same bounds from the same host copy, and builds
   * only its own block. */
  if ((rc = spmv_split_one(&m->A, blocks, k, &sb, err)) < 0)
    goto fail;
  rc = keep_block(w, m, &sb, req, seq, &cfg, err);
  spmv_split_block_fini(&sb);
  if (rc < 0)
    goto fail;
  spmv_config_format(&cfg, text_out, sizeof text_out);
  *rep = json_pack("{si sI sI sI ss}", "block", k, "r0", (json_int_t)m->block->r0,
                   "r1", (json_int_t)m->block->r1, "halo",
                   (json_int_t)m->block->nhalo, "config", text_out);
  return 0;
fail:
  spmvd_wk_drop(w, h);
  return rc;
}

/* The local part on x's own rows, then the remote part on the halo
 * gathered from x. */
int spmvd_wk_block_multiply(struct worker *w, struct wmatrix *m, double alpha,
                            const void *x, double beta, void *y,
                            struct spmv_error *err)
{
  struct wblock *b = m->block;
  size_t es = spmv_dtype_size(m->dtype);
  int rc = 0;

  for (int64_t i = 0; i < b->nhalo; i++)
    memcpy((char *)b->gathered + (size_t)i * es,
           (const char *)x + (size_t)b->halo[i] * es, es);
  if (m->bm)
    rc = w->ops->multiply(w->be, m->bm, alpha, (const char *)x + (size_t)b->r0 * es,
                          beta, y, 1, err);
  if (rc == 0 && b->remote)
    rc = w->ops->multiply(w->be, b->remote, alpha, b->gathered, 1.0, y, 1, err);
  return rc;
}

int spmvd_wk_block_vec_spmv(struct worker *w, struct wmatrix *m, double alpha,
                            struct spmvd_bvector *x, double beta,
                            struct spmvd_bvector *y, const void *xall,
                            struct spmv_error *err)
{
  struct wblock *b = m->block;
  size_t es = spmv_dtype_size(m->dtype);
  int rc = 0;

  if (b->remote && !b->dhalo &&
      (rc = w->ops->vec_new(w->be, m->dtype, (size_t)b->nhalo, &b->dhalo, err)) < 0)
    return rc;
  for (int64_t i = 0; i < b->nhalo; i++)
    memcpy((char *)b->gathered + (size_t)i * es,
           (const char *)xall + (size_t)b->halo[i] * es, es);
  if (m->bm)
    rc = w->ops->vec_spmv(w->be, m->bm, alpha, x, beta, y, err);
  /* gathered is not written again before the list's finish(): one such
   * product starts each part of a split list. */
  if (rc == 0 && b->remote &&
      (rc = w->ops->vec_upload(w->be, b->dhalo, b->gathered, err)) == 0)
    rc = w->ops->vec_spmv(w->be, b->remote, alpha, b->dhalo, 1.0, y, err);
  return rc;
}

int spmvd_wk_op_multiply_block(struct worker *w, json_t *req, int *fds,
                               int nfds, json_t **rep, struct spmv_error *err)
{
  json_int_t h;
  double alpha, beta;
  struct spmvd_shm vec;
  struct wmatrix *m;
  int rc = 0, nvec = 1;

  if (json_unpack(req, "{sI sF sF s?i}", "handle", &h, "alpha", &alpha, "beta",
                  &beta, "nvec", &nvec) < 0 || nfds != 1 || nvec < 1)
    return spmv_error_set(err, SPMV_EPROTO, "bad multiply-block message");
  int fd;
  if (!(m = spmvd_wk_take_block(w, h, fds, &fd, err)))
    return err->code;
  struct wblock *b = m->block;
  size_t es = spmv_dtype_size(m->dtype);
  size_t xb = (size_t)m->A.cols * es, yb = (size_t)m->A.rows * es;
  spmvd_shm_init(&vec);
  if (spmvd_shm_map(&vec, fd, (size_t)nvec * (xb + yb), err) < 0)
    return err->code;
  /* k vectors: the k x's, then the k y's, as a batch's payload lays them. */
  for (int j = 0; j < nvec && rc == 0; j++) {
    const char *x = (const char *)vec.addr + (size_t)j * xb;
    char *y = (char *)vec.addr + (size_t)nvec * xb + (size_t)j * yb +
              (size_t)b->r0 * es;
    rc = spmvd_wk_block_multiply(w, m, alpha, x, beta, y, err);
  }
  spmvd_shm_close(&vec);
  spmvd_wk_die_if_sticky(rc);
  if (rc < 0)
    return rc;
  *rep = json_object();
  return 0;
}

struct wmatrix *spmvd_wk_take_block(struct worker *w, json_int_t h, int *fds,
                                    int *fd, struct spmv_error *err)
{
  struct wmatrix *m = spmvd_wk_find(w, h);

  *fd = fds[0];
  fds[0] = -1;
  if (m && m->block)
    return m;
  close(*fd);
  *fd = -1;
  spmv_error_set(err, SPMV_ENOENT, "no block of matrix %lld", (long long)h);
  return NULL;
}

void spmvd_wk_block_rows(const struct wmatrix *m, int64_t *r0, int64_t *r1)
{
  *r0 = m->block ? m->block->r0 : 0;
  *r1 = m->block ? m->block->r1 : 0;
}
