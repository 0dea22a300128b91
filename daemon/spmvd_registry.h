/* spmvd_registry.h: the loaded matrices: handle -> owner, host copy, decision. */
#ifndef SPMVD_REGISTRY_H
#define SPMVD_REGISTRY_H

#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "spmv_formats.h"
#include "spmv_profile.h"
#include "spmvd_config.h"
#include "spmvd_shm.h"
#include "spmvd_tuner.h"

struct spmvd_conn;

/* Where a matrix is in its life. */
enum spmvd_matrix_state {
  SPMVD_MATRIX_LOADING = 0,  /* converting, profiling or tuning */
  SPMVD_MATRIX_READY = 1     /* resident with a configuration */
};

/* One loaded matrix. */
struct spmvd_matrix {
  int64_t handle;              /* unique for the daemon's life, from 1 */
  uid_t uid;                   /* the owner: only this uid sees it */
  struct spmvd_conn *owner;    /* borrowed: the connection that loaded it */
  int wk;                      /* the worker it is resident on (owner's) */
  int nblocks;                 /* > 1: split in row blocks, block b on
                                  worker block_wk[b] (block 0 on wk) */
  int block_wk[SPMVD_CONFIG_MAX_WORKERS];
  int64_t block_r0[SPMVD_CONFIG_MAX_WORKERS + 1]; /* block b holds rows
                                  block_r0[b] .. block_r0[b + 1] */
  char block_cfg[SPMVD_CONFIG_MAX_WORKERS][64]; /* each block's local part's
                                  configuration, as its worker tuned it */
  char name[64];
  enum spmv_dtype dtype;
  int64_t rows, cols, nnz;
  struct spmvd_shm host;       /* the host copy's memfd (not mapped here) */
  uint64_t bytes;              /* host copy bytes, counted to the owner */
  char fingerprint[33];
  struct spmv_profile prof;
  enum spmvd_matrix_state state;
  struct spmv_config cfg;      /* the resident configuration */
  char cfg_text[64];
  char source[8];              /* "cache" or "tuned" */
  enum spmvd_strategy strategy;
  double time_us, gflops, gbps, cost_spmv;
  char reason[256];            /* why it was (re)tuned */
  json_t *trials;              /* owned: [{config, time_us}] */
  int64_t tuning_id;           /* the cache row, 0 when not stored */
  int checked;                 /* first use after load verified */
  int64_t multiplies;
  struct spmvd_matrix *next;
};

/* Every loaded matrix (embedded in the server). */
struct spmvd_registry {
  struct spmvd_matrix *head;   /* most recent first */
  int64_t next_handle;
  int count;
};

/* Starts an empty registry. */
void spmvd_registry_init(struct spmvd_registry *r);
/* Frees every matrix left (their memfds closed). */
void spmvd_registry_fini(struct spmvd_registry *r);

/*
 * Adds a matrix owned by uid through conn (borrowed), in state LOADING with
 * a fresh handle.  Returns it (owned by the registry), or NULL when out of
 * memory.
 */
struct spmvd_matrix *spmvd_registry_add(struct spmvd_registry *r, uid_t uid,
                                        struct spmvd_conn *conn);

/* Returns the matrix handle of uid (borrowed), or NULL: unknown handles and
 * other users' handles look the same. */
struct spmvd_matrix *spmvd_registry_get(struct spmvd_registry *r,
                                        int64_t handle, uid_t uid);

/* Returns any matrix with this handle (borrowed), whoever owns it. */
struct spmvd_matrix *spmvd_registry_find(struct spmvd_registry *r,
                                         int64_t handle);

/* Removes and frees m. */
void spmvd_registry_remove(struct spmvd_registry *r, struct spmvd_matrix *m);

/* Counts the matrices of uid. */
int spmvd_registry_count_uid(const struct spmvd_registry *r, uid_t uid);

#endif /* SPMVD_REGISTRY_H */
