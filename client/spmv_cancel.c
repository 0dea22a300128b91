/* spmv_cancel.c: libspmvclient's cancel of a running solve
 * (PROTOCOL.md, cancel): asked from anywhere, sent by the waiting call. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>

#include "spmv_client_int.h"

/* How long the waiting call sleeps between looks at the flag: a cancel
 * asked from a signal handler or another thread goes out within it. */
#define CANCEL_POLL_MS 20

/* Asks the solve running on c to stop; only an atomic store, so that a
 * signal handler or another thread may call it while c is locked. */
void spmv_solve_cancel(struct spmv_client *c)
{
  if (c != NULL)
    atomic_store(&c->cancel_asked, 1);
}

/* Sends {op:"cancel", target:id} under the next id, remembered in
 * c->cancel_id until its answer is read. */
static int send_cancel(struct spmv_client *c, int64_t id, struct spmv_error *err)
{
  json_t *req = json_pack("{ss sI sI}", "op", "cancel", "id",
                          (json_int_t)c->next_id, "target", (json_int_t)id);
  int rc;

  if (req == NULL)
    return spmv_error_set(err, SPMV_ENOMEM, "out of memory building 'cancel'");
  rc = spmv_wire_write_frame(c->fd, req, NULL, 0, err);
  json_decref(req);
  if (rc == 0)
    c->cancel_id = c->next_id++;
  return rc;
}

int spmvc_cancel_wait(struct spmv_client *c, int64_t id, struct spmv_error *err)
{
  struct pollfd p = {c->fd, POLLIN, 0};

  for (;;) {
    if (c->cancel_id == 0 && atomic_exchange(&c->cancel_asked, 0)) {
      int rc = send_cancel(c, id, err);
      if (rc < 0)
        return rc;
    }
    int n = poll(&p, 1, CANCEL_POLL_MS);
    if (n > 0 || (n < 0 && errno != EINTR))
      return 0;  /* a frame, or an error the read will name */
  }
}
