/* spmvd_decision.h: what a tune decides and how it got there (the
 * strategy, each candidate's trial, the chosen configuration): the tuner
 * makes these, the cache stores them and spmvctl shows them. */
#ifndef SPMVD_DECISION_H
#define SPMVD_DECISION_H

#include <stddef.h>

#include "spmv_error.h"
#include "spmv_formats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tuning strategies (spmvctl(1), tune).  Stored in the cache by name. */
enum spmvd_strategy {
  SPMVD_STRATEGY_AUTO = 0,       /* models shortlist, the race decides */
  SPMVD_STRATEGY_MODEL = 1,      /* ELLR-T analytical model's pick alone */
  SPMVD_STRATEGY_PREDICT = 2,    /* statistical predictor's best alone */
  SPMVD_STRATEGY_TRIAL = 3,      /* AUTOCSR: a short list, raced */
  SPMVD_STRATEGY_EXHAUSTIVE = 4, /* every candidate raced */
  SPMVD_STRATEGY_COUNT
};

/* Returns the static name of s ("auto", "model", ...), or NULL. */
const char *spmvd_strategy_name(enum spmvd_strategy s);
/* Parses a name of spmvd_strategy_name(); returns 0 or SPMV_EINVAL (with a
 * message listing the valid names when err is not NULL). */
int spmvd_strategy_parse(const char *name, enum spmvd_strategy *out,
                         struct spmv_error *err);

/* Outcome of one candidate in a race. */
enum spmvd_trial_status {
  SPMVD_TRIAL_OK = 0,       /* timed until its median was stable */
  SPMVD_TRIAL_DROPPED = 1,  /* stopped early: clearly slower than the leader */
  SPMVD_TRIAL_FAILED = 2    /* its load or time failed; see msg */
};

/* Returns "ok", "dropped" or "failed" (NULL for an unknown status). */
const char *spmvd_trial_status_name(enum spmvd_trial_status s);
/* Parses a name of spmvd_trial_status_name(); returns 0 or SPMV_EINVAL. */
int spmvd_trial_status_parse(const char *name, enum spmvd_trial_status *out);

/* One candidate's trial. */
struct spmvd_trial {
  struct spmv_config cfg;
  enum spmvd_trial_status status;
  double time_us;   /* median of its rounds' medians; 0 when failed */
  double best_us;   /* fastest round median; 0 when failed */
  double first_us;  /* its first round's median; 0 when it ran none */
  double probe_us;  /* its timed warm-up run; 0 when none */
  int rounds;       /* timing rounds run */
  int runs;         /* SpMV runs executed, warm-ups included */
  int code;         /* 0, or the SPMV_E* code of the failure */
  char msg[160];    /* the failure's message, "" otherwise */
};

/* A tuning decision.  Owns trials: release with spmvd_decision_fini(). */
struct spmvd_decision {
  struct spmv_config cfg;
  char text[64];               /* spmv_config_format() of cfg */
  enum spmvd_strategy strategy;
  double time_us;              /* measured; predicted when nothing was timed
                                  (predict without ops); 0 when unknown */
  double gflops;               /* 2*nnz / time */
  double gbps;                 /* spmvd_tuner_bytes() / time */
  double cost_spmv;            /* every timed and warm-up run's time / time_us
                                  of the choice; 0 when nothing was timed */
  struct spmvd_trial *trials;  /* ntrials, in the order they ran; owned */
  size_t ntrials;
};

/* Zeroes d. */
void spmvd_decision_init(struct spmvd_decision *d);
/* Frees d's trials and zeroes d (the struct itself is the caller's). */
void spmvd_decision_fini(struct spmvd_decision *d);

#ifdef __cplusplus
}
#endif

#endif /* SPMVD_DECISION_H */
