/* spmvd_tuner_impl.h: what the tuner's files share (spmvd_tuner.c's
 * strategies, spmvd_tuner_rules.c's shortlists): building a candidate list
 * and the bounds that decide where a format is worth one; internal to the
 * tuner. */
#ifndef SPMVD_TUNER_IMPL_H
#define SPMVD_TUNER_IMPL_H

#include <stdint.h>
#include <string.h>

#include "spmv_formats.h"
#include "spmv_profile.h"
#include "spmvd_tuner.h"

/* Diagonals beyond which DIA is not worth a candidate. */
#define MAX_DIAGS 1024

/* Whether the device is a CPU (no warps: BS and csr-vector's TPR do not
 * shape its layouts). */
static inline int is_cpu(const struct spmvd_device_info *dev)
{
  return strcmp(dev->backend, "cuda") != 0 || dev->warp_size < 2;
}

/* Whether the operator excluded format f (spmvd.conf exclude_formats). */
static inline int format_excluded(const struct spmvd_tune_input *in,
                                  enum spmv_format f)
{
  return (in->exclude_formats & (1u << f)) != 0;
}

/* Whether c is quarantined or of a format the operator excluded. */
static inline int excluded(const struct spmvd_tune_input *in,
                           const struct spmv_config *c)
{
  size_t k;

  if (format_excluded(in, c->format))
    return 1;
  for (k = 0; k < in->nexclude; k++)
    if (spmv_config_equal(c, &in->exclude[k]))
      return 1;
  return 0;
}

/* Appends a candidate unless excluded or already listed; on the cpu the
 * configuration is normalised first. */
static inline void add(struct spmvd_candidates *out,
                       const struct spmvd_tune_input *in,
                       struct spmv_config cfg)
{
  size_t k;

  if (is_cpu(in->dev)) {
    /* cuSPARSE is the GPU's; csr-panel's point is the GPU's shared memory. */
    if (cfg.format == SPMV_FMT_CUSPARSE || cfg.format == SPMV_FMT_CSR_PANEL)
      return;
    cfg.bs = 0;
    if (cfg.format == SPMV_FMT_CSR_VECTOR) {
      cfg.format = SPMV_FMT_CSR_SCALAR;
      cfg.tpr = 0;
    }
    if (cfg.format == SPMV_FMT_CSR16)
      cfg.tpr = 0;
    if (cfg.format == SPMV_FMT_CSR_STREAM ||
        cfg.format == SPMV_FMT_CSR_STREAM16)
      cfg.param = 0;  /* k shapes only the GPU's blocks */
  }
  if (excluded(in, &cfg))
    return;
  for (k = 0; k < out->n; k++)
    if (spmv_config_equal(&cfg, &out->cfg[k]))
      return;
  if (out->n < SPMVD_MAX_CANDIDATES)
    out->cfg[out->n++] = cfg;
}

/* Builds a configuration. */
static inline struct spmv_config mk(enum spmv_format f, int bs, int tpr,
                                    int param, int param2)
{
  struct spmv_config c;

  c.format = f;
  c.bs = bs;
  c.tpr = tpr;
  c.param = param;
  c.param2 = param2;
  return c;
}

/* Whether every row spans few enough columns for sell16's 16-bit offsets
 * (found once per spmvd_tuner_candidates call). */
static inline int sell16_fits(const struct spmvd_tune_input *in)
{
  return in->fits16;
}

/* csr-panel's panels of w columns for the profile: how many, and their
 * mean entries per row slot (the layout refuses under 1 /
 * SPMV_PANEL_MAX_SLOTS_PER_ENTRY). */
static inline int64_t panel_count(const struct spmv_profile *p, int w)
{
  return spmv_panel_count(p->cols, w);
}

static inline double panel_density(const struct spmv_profile *p, int w)
{
  double slots = (double)panel_count(p, w) * (double)p->rows;

  return slots > 0 ? (double)p->nnz / slots : 0;
}

/* csr-adaptive at its default max TPR and base length base.  (Not with
 * bins up to BS threads, which run slower: their long rows go to chunks
 * sooner.) */
static inline struct spmv_config adaptive(int bs, int base)
{
  return mk(SPMV_FMT_CSR_ADAPTIVE, bs, 0, base, 0);
}

/*
 * The ELLR-T layout's bytes for a configuration: its arrays hold rows x
 * rl_max entries (padded per row to the T threads), so a long row makes it
 * huge (terabytes for a power law of a million rows).
 */
static inline double ellr_bytes(const struct spmv_profile *p,
                                enum spmv_dtype dt)
{
  return (double)p->rows * (double)p->rl_max *
         ((double)spmv_dtype_size(dt) + 4);
}

/* The most an ELLR-T layout may store over the CSR bytes in model's pick. */
#define MODEL_MAX_ELLR_OVER_CSR 3.0

/* --- spmvd_tuner.c --- */

/* The ELLR-T model's ranking for the input (up to max); 0 when the device
 * is no GPU; negative on failure. */
int spmvd_tuner_model_ranked(const struct spmvd_tune_input *in,
                             struct spmv_config *cfgs, int max,
                             struct spmv_error *err);

/* --- spmvd_tuner_rules.c: the shortlists of auto and model --- */

/* auto's shortlist on a GPU and on the cpu. */
void spmvd_tuner_auto_gpu(const struct spmvd_tune_input *in,
                          struct spmvd_candidates *out);
void spmvd_tuner_auto_cpu(const struct spmvd_tune_input *in,
                          struct spmvd_candidates *out);
/* model's pick from the ELLR-T model's ranking (nm of them). */
int spmvd_tuner_model_choice(const struct spmvd_tune_input *in,
                             const struct spmv_config *ranked, int nm,
                             struct spmvd_candidates *out);
/* csr-vector and csr-scalar in out rewritten as csr16 where that pays. */
void spmvd_tuner_narrow_csr(const struct spmvd_tune_input *in,
                            struct spmvd_candidates *out);

#endif /* SPMVD_TUNER_IMPL_H */
