/* spmv_graph.cu: a matrix's product replayed as a CUDA graph. */
/*
 * Launches of a product queued one after another leave the GPU a gap
 * between dependent kernels, and a product of a small matrix is mostly
 * that gap: a format of several kernels (coo, hyb, csr-merge, cusparse)
 * loses to a one-kernel format on launches alone.  Captured once as a
 * graph and relaunched, the kernels follow each other with much shorter
 * gaps; a format of one kernel gains little.
 */
#include <stdlib.h>
#include <string.h>

#include "spmv_cuda.cuh"

/* A product as a graph replays it: the same matrix, configuration,
 * vectors and scalars. */
struct product_key {
  const struct spmv_dev_matrix *m;
  struct spmv_config cfg; /* m's, which a caller may change between products */
  const void *x;
  const void *y;
  double alpha, beta;
};

struct spmv_dev_graph {
  cudaGraphExec_t exec;
  struct product_key key;  /* what exec replays */
  /* The product before: one is captured only when it comes twice in a
   * row, so a caller that changes alpha or beta every product, or
   * alternates two pairs, never pays a capture (many launches' worth of
   * host time).  last.m is NULL before the first. */
  struct product_key last;
  const struct spmv_dev_matrix *plain; /* its launches cannot be captured */
  long captures;
};

extern "C" struct spmv_dev_graph *spmv_dev_graph_new(void) {
  return (struct spmv_dev_graph *)calloc(1, sizeof(struct spmv_dev_graph));
}

extern "C" struct spmv_dev_graph *spmv_dev_graph_free(struct spmv_dev_graph *g) {
  if (g == NULL) return NULL;
  if (g->exec) cudaGraphExecDestroy(g->exec);
  free(g);
  return NULL;
}

extern "C" void spmv_dev_graph_reset(struct spmv_dev_graph *g) {
  if (g == NULL) return;
  if (g->exec) cudaGraphExecDestroy(g->exec);
  long captures = g->captures;
  memset(g, 0, sizeof *g);
  g->captures = captures;
}

extern "C" long spmv_dev_graph_captures(const struct spmv_dev_graph *g) {
  return g == NULL ? 0 : g->captures;
}

extern "C" int spmv_dev_graph_plain(const struct spmv_dev_graph *g) {
  return g == NULL || g->plain != NULL;
}

static struct product_key key_of(const struct spmv_dev_matrix *m, double alpha,
                                 const void *x, double beta, const void *y) {
  struct product_key k;
  memset(&k, 0, sizeof k);
  k.m = m;
  k.cfg = m->L.cfg;
  k.x = x;
  k.y = y;
  k.alpha = alpha;
  k.beta = beta;
  return k;
}

static int key_equal(const struct product_key *a, const struct product_key *b) {
  return a->m == b->m && a->x == b->x && a->y == b->y && a->alpha == b->alpha &&
         a->beta == b->beta && spmv_config_equal(&a->cfg, &b->cfg);
}

/* Whether g's graph replays exactly product k. */
static int graph_serves(const struct spmv_dev_graph *g, const struct product_key *k) {
  return g->exec != NULL && key_equal(&g->key, k);
}

/*
 * Captures product k (m's launches for alpha, x, beta, y) on s into
 * g->exec.  Returns 0, 1 when the launches cannot be captured (g->plain is
 * set to m; the stream is left as it was), or a launcher's or the
 * runtime's error.
 */
static int graph_capture(struct spmv_dev_graph *g, const struct product_key *k,
                         const struct spmv_dev_matrix *m, double alpha,
                         const void *x, double beta, void *y, cudaStream_t s,
                         struct spmv_error *err) {
  cudaGraph_t graph = NULL;
  cudaError_t e;
  int rc;

  /* Thread-local: another thread's unrelated calls do not end this
   * capture, and ours fail rather than run. */
  if ((e = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal)) != cudaSuccess) {
    cudaGetLastError();
    g->plain = m;
    return 1;
  }
  rc = spmv_dev_spmv(m, alpha, x, beta, y, s, err);
  e = cudaStreamEndCapture(s, &graph);
  if (rc < 0 || e != cudaSuccess || graph == NULL) {
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    if (rc < 0) {
      /* A launcher that refuses its configuration refuses it launched
       * directly too; one that failed only for the capture gets a try. */
      if (rc == SPMV_EGPU_STICKY || rc == SPMV_EINVAL || rc == SPMV_EFORMAT) return rc;
      spmv_error_clear(err);
    }
    g->plain = m;
    return 1;
  }
  /* Instantiated anew, not updated in place: another alpha or beta may
   * change which kernels run, and a refused update is an API error that
   * compute-sanitizer reports (x68: 100 of them in the quick run). */
  if (g->exec) {
    cudaGraphExecDestroy(g->exec);
    g->exec = NULL;
  }
  if ((e = cudaGraphInstantiate(&g->exec, graph, 0)) != cudaSuccess) {
    g->exec = NULL;
    cudaGraphDestroy(graph);
    return spmv_cuda_error(e, "instantiating a product's graph", err);
  }
  cudaGraphDestroy(graph);
  g->key = *k;
  g->captures++;
  /* Its launch data in device memory now, not on the first launch. */
  return spmv_cuda_error(cudaGraphUpload(g->exec, s), "uploading a product's graph", err);
}

extern "C" int spmv_dev_graph_prepare(struct spmv_dev_graph *g,
                                      const struct spmv_dev_matrix *m, double alpha,
                                      const void *x, double beta, void *y,
                                      cudaStream_t s, struct spmv_error *err) {
  if (g == NULL || g->plain == m) return 0;
  struct product_key k = key_of(m, alpha, x, beta, y);
  if (graph_serves(g, &k)) return 0;
  int rc = graph_capture(g, &k, m, alpha, x, beta, y, s, err);
  return rc < 0 ? rc : 0;
}

extern "C" int spmv_dev_graph_spmv(struct spmv_dev_graph *g,
                                   const struct spmv_dev_matrix *m, double alpha,
                                   const void *x, double beta, void *y,
                                   cudaStream_t s, struct spmv_error *err) {
  struct product_key k;
  int rc;

  if (g == NULL || g->plain == m) return spmv_dev_spmv(m, alpha, x, beta, y, s, err);
  k = key_of(m, alpha, x, beta, y);
  int again = key_equal(&g->last, &k); /* last.m NULL: never */
  g->last = k;
  if (!graph_serves(g, &k)) {
    if (!again) /* not the product before it: directly */
      return spmv_dev_spmv(m, alpha, x, beta, y, s, err);
    if ((rc = graph_capture(g, &k, m, alpha, x, beta, y, s, err)) < 0) return rc;
    if (rc == 1) return spmv_dev_spmv(m, alpha, x, beta, y, s, err);
  }
  return spmv_cuda_error(cudaGraphLaunch(g->exec, s), "launching a product's graph", err);
}
