/* spmvd_registry.c: the loaded matrices: handle -> owner, host copy, decision. */
#include "config.h"

#include <stdlib.h>

#include "spmvd_registry.h"

/* Starts an empty registry. */
void spmvd_registry_init(struct spmvd_registry *r)
{
  r->head = NULL;
  r->next_handle = 1;
  r->count = 0;
}

static void matrix_free(struct spmvd_matrix *m)
{
  spmvd_shm_close(&m->host);
  json_decref(m->trials);
  free(m);
}

/* Frees every matrix left. */
void spmvd_registry_fini(struct spmvd_registry *r)
{
  while (r->head) {
    struct spmvd_matrix *m = r->head;
    r->head = m->next;
    matrix_free(m);
  }
  r->count = 0;
}

/* Adds a matrix owned by uid through conn, in state LOADING. */
struct spmvd_matrix *spmvd_registry_add(struct spmvd_registry *r, uid_t uid,
                                        struct spmvd_conn *conn)
{
  struct spmvd_matrix *m = calloc(1, sizeof *m);

  if (!m)
    return NULL;
  m->handle = r->next_handle++;
  m->uid = uid;
  m->owner = conn;
  m->state = SPMVD_MATRIX_LOADING;
  spmvd_shm_init(&m->host);
  m->next = r->head;
  r->head = m;
  r->count++;
  return m;
}

/* Returns any matrix with this handle, whoever owns it. */
struct spmvd_matrix *spmvd_registry_find(struct spmvd_registry *r,
                                         int64_t handle)
{
  for (struct spmvd_matrix *m = r->head; m; m = m->next)
    if (m->handle == handle)
      return m;
  return NULL;
}

/* Returns uid's matrix with this handle, or NULL. */
struct spmvd_matrix *spmvd_registry_get(struct spmvd_registry *r,
                                        int64_t handle, uid_t uid)
{
  struct spmvd_matrix *m = spmvd_registry_find(r, handle);
  return m && m->uid == uid ? m : NULL;
}

/* Removes and frees m. */
void spmvd_registry_remove(struct spmvd_registry *r, struct spmvd_matrix *m)
{
  for (struct spmvd_matrix **p = &r->head; *p; p = &(*p)->next) {
    if (*p == m) {
      *p = m->next;
      r->count--;
      matrix_free(m);
      return;
    }
  }
}

/* Counts the matrices of uid. */
int spmvd_registry_count_uid(const struct spmvd_registry *r, uid_t uid)
{
  int n = 0;
  for (const struct spmvd_matrix *m = r->head; m; m = m->next)
    n += m->uid == uid;
  return n;
}
