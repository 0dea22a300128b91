/* spmvd_cachejob.h: the front end's cache requests, run on the cache thread. */
#ifndef SPMVD_CACHEJOB_H
#define SPMVD_CACHEJOB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "spmv_error.h"
#include "spmv_formats.h"
#include "spmv_profile.h"
#include "spmvd_backend.h"
#include "spmvd_cache.h"

struct spmvd_bio;

/* What a job asks of the cache.  Inputs are set on the loop before the
 * post, outputs read on the loop in the then callback. */
enum spmvd_cachejob_kind {
  SPMVD_CJ_DEVICE,      /* in: dev.  Records the device (device_put). */
  SPMVD_CJ_LOOKUP,      /* in: fp, dev, dtype.  out: hit, t, reason, and on
                           a hit json = its trials [{config, time_us,
                           status}] and prof (have_prof), from show. */
  SPMVD_CJ_EXCLUDE,     /* in: fp, dev, dtype.  out: ex[nex] (quarantined
                           configurations) and json = the device's
                           calibration fits (spmvd_predict_to_json) or NULL
                           when it was never calibrated. */
  SPMVD_CJ_STORE,       /* in: t, prof, trials[ntrials].  out: id. */
  SPMVD_CJ_HIT,         /* in: id.  Counts one use from the cache. */
  SPMVD_CJ_QUARANTINE,  /* in: fp, dev, dtype, cfg, why. */
  SPMVD_CJ_FORGET,      /* in: uid, gid, admin_group, invalid, fp.  out: n. */
  SPMVD_CJ_IMPORT,      /* in: uid, gid, admin_group, invalid, json (the
                           tunings), dev.  out: n, skipped. */
  SPMVD_CJ_CALIBRATION, /* in: dev, dtype, json (spmvd_predict_to_json's
                           form).  Stores the fits (spmvd_predict_save). */
  SPMVD_CJ_EXPORT,      /* in: uid, gid, admin_group, invalid, fp.  out:
                           json = spmvd_cache_export's document. */
  SPMVD_CJ_SPLIT_GET,   /* in: fp, device_set, dev (its software_key),
                           dtype, blocks.  out: hit, and json = the blocks'
                           configuration texts on a hit. */
  SPMVD_CJ_SPLIT_PUT    /* in: the same and json = those texts. */
};

#define SPMVD_CJ_MAX_EXCLUDE 64

/*
 * One request.  Built on the loop (spmvd_cachejob_new), worked on the
 * cache thread, then handed back to then(job) on the loop, after which it
 * is freed.  rc and err are the cache's result (0, or a negative SPMV_E*
 * code with its message); a job whose post failed reaches then() with that
 * failure.  Nothing in it points into the loop's objects.
 */
struct spmvd_cachejob {
  enum spmvd_cachejob_kind kind;
  void (*then)(struct spmvd_cachejob *j);  /* on the loop; NULL: log rc */
  void *ctx;                        /* the caller's, e.g. the waiting op */
  int rc;
  struct spmv_error err;
  char fp[33];                      /* fingerprint, 32 hex digits or "all" */
  struct spmvd_device_info dev;     /* the device and its keys */
  enum spmv_dtype dtype;
  struct spmv_config cfg;           /* QUARANTINE */
  char why[256];                    /* QUARANTINE: the reason */
  struct spmvd_tuning t;            /* LOOKUP out, STORE in */
  struct spmv_profile prof;         /* STORE in; LOOKUP out on a hit */
  int have_prof;                    /* LOOKUP: prof holds the hit's matrix's
                                       cached profile */
  struct spmvd_trial *trials;       /* STORE: owned copy */
  size_t ntrials;
  int64_t id;                       /* HIT in, STORE out */
  int hit;                          /* LOOKUP: 1 when usable */
  char reason[256];                 /* LOOKUP: why not */
  json_t *json;                     /* see the kinds; owned */
  struct spmv_config ex[SPMVD_CJ_MAX_EXCLUDE];  /* EXCLUDE */
  int nex;
  uid_t uid;                        /* FORGET, IMPORT, EXPORT: the caller */
  gid_t gid;
  char admin_group[64];             /* "" = root only */
  struct spmv_error invalid;        /* FORGET, IMPORT: a bad request,
                                       reported after the admin check */
  int n, skipped;                   /* FORGET, IMPORT */
  size_t max_json;                  /* EXPORT: the reply's JSON bound */
  char device_set[1024];            /* SPLIT_*: the blocks' device keys */
  int blocks;                       /* SPLIT_* */
};

/* A new zeroed job of kind (NULL when out of memory). */
struct spmvd_cachejob *spmvd_cachejob_new(enum spmvd_cachejob_kind kind);

/* Frees j, its trials and its json (NULL is a no-op). */
void spmvd_cachejob_free(struct spmvd_cachejob *j);

/*
 * Posts j (stolen) to b with its continuation then and ctx.  When b is
 * NULL (no cache) or the post fails, then(j) runs at once with rc set to
 * the failure.  Either way j is freed after then returns.
 */
void spmvd_cachejob_post(struct spmvd_bio *b, struct spmvd_cachejob *j,
                         void (*then)(struct spmvd_cachejob *j), void *ctx);

/*
 * May uid (primary group gid) change the cache?  Root, or a member of
 * group (may be "": nobody else).  Reentrant (getgrnam_r, getpwuid_r):
 * called on the cache thread, where user databases may be slow.
 */
int spmvd_cachejob_admin(uid_t uid, gid_t gid, const char *group);

#endif /* SPMVD_CACHEJOB_H */
