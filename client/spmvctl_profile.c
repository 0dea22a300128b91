/* spmvctl_profile.c: spmvctl profile FILE, computed here without spmvd. */
#include "config.h"

#include <string.h>

#include "spmv_mmio.h"
#include "spmv_profile.h"
#include "spmvctl.h"
#include "spmvd_cache.h"

/* Prints the profile as a table. */
static void print_profile(const char *path, const struct spmv_mmio_info *mi,
                          const struct spmv_profile *p, const char *hex)
{
  int k, last = 0;

  printf("file          %s\n", path);
  printf("matrix        %lld x %lld, %lld nonzeros (%s %s %s", (long long)p->rows,
         (long long)p->cols, (long long)p->nnz, mi->format, mi->field,
         mi->symmetry);
  if (mi->duplicates > 0)
    printf(", %lld duplicates summed", (long long)mi->duplicates);
  printf(")\n");
  printf("fingerprint   %s\n", hex);
  printf("row length    min %lld, max %lld, mean %.4g, sigma %.4g (cv %.4g)\n",
         (long long)p->rl_min, (long long)p->rl_max, p->rl_mean, p->rl_sigma,
         p->rl_cv);
  printf("empty rows    %lld\n", (long long)p->empty_rows);
  printf("ELL fill      %.4g (stored / real entries)\n", p->ell_fill);
  printf("HYB K         %lld\n", (long long)p->hyb_k);
  printf("diagonals     %lld occupied, DIA fill %.4g\n", (long long)p->ndiags,
         p->dia_fill);
  printf("col locality  %.4g\n", p->col_locality);
  for (k = 0; k < SPMV_PROFILE_BINS; k++)
    if (p->hist[k] != 0)
      last = k + 1;
  printf("row lengths   %-18s %s\n", "LENGTH", "ROWS");
  for (k = 0; k < last; k++) {
    char range[40];

    if (k == 0)
      snprintf(range, sizeof range, "0");
    else if (k == 1)
      snprintf(range, sizeof range, "1");
    else
      snprintf(range, sizeof range, "%lld .. %lld", 1LL << (k - 1),
               (1LL << k) - 1);
    printf("              %-18s %lld\n", range, (long long)p->hist[k]);
  }
}

/* spmvctl profile FILE: row-length statistics and fingerprint. */
int spmvctl_profile(struct spmvctl *ctl, int argc, char **argv)
{
  struct spmv_mmio_info mi;
  struct spmv_profile p;
  struct spmv_fingerprint fp;
  struct spmv_error err;
  struct spmv_csr *A = NULL;
  json_t *r = NULL;
  char hex[33];
  int rc, status = SPMVCTL_EXIT_OK;

  status = spmvctl_check_file(ctl, argv[0]);
  if (status != SPMVCTL_EXIT_OK)
    return status;
  spmv_error_clear(&err);
  rc = spmv_mmio_read(argv[0], &A, &mi, &err);
  if (rc < 0)
    return spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR, "%s", err.msg);
  rc = spmv_profile_compute(A, &p, &err);
  if (rc < 0) {
    status = spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR, "%s: %s", argv[0], err.msg);
    goto out;
  }
  spmv_fingerprint_compute(A, &fp);
  spmv_fingerprint_hex(&fp, hex);
  if (!ctl->json) {
    print_profile(argv[0], &mi, &p, hex);
    goto out;
  }
  r = spmvd_cache_profile_json(&p);
  if (r == NULL || json_object_set_new(r, "file", json_string(argv[0])) < 0 ||
      json_object_set_new(r, "fingerprint", json_string(hex)) < 0 ||
      json_object_set_new(r, "field", json_string(mi.field)) < 0 ||
      json_object_set_new(r, "symmetry", json_string(mi.symmetry)) < 0 ||
      json_object_set_new(r, "duplicates", json_integer(mi.duplicates)) < 0) {
    status = spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR, "out of memory");
    goto out;
  }
  status = spmvctl_print_json(r);
out:
  json_decref(r);
  spmv_csr_free(A);
  return status;
}
