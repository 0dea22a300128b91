/* spmvd_decision.c: the names of strategies and trial outcomes, and a
 * decision's lifetime. */
#include <stdlib.h>
#include <string.h>

#include "spmvd_decision.h"

static const char *const strategy_names[SPMVD_STRATEGY_COUNT] = {
  [SPMVD_STRATEGY_AUTO] = "auto",
  [SPMVD_STRATEGY_MODEL] = "model",
  [SPMVD_STRATEGY_PREDICT] = "predict",
  [SPMVD_STRATEGY_TRIAL] = "trial",
  [SPMVD_STRATEGY_EXHAUSTIVE] = "exhaustive",
};

static const char *const status_names[] = { "ok", "dropped", "failed" };

/* Returns the name of strategy s, or NULL. */
const char *spmvd_strategy_name(enum spmvd_strategy s)
{
  if ((int)s < 0 || s >= SPMVD_STRATEGY_COUNT)
    return NULL;
  return strategy_names[s];
}

/* Parses a strategy name. */
int spmvd_strategy_parse(const char *name, enum spmvd_strategy *out,
                         struct spmv_error *err)
{
  int s;

  for (s = 0; name != NULL && s < SPMVD_STRATEGY_COUNT; s++) {
    if (strcmp(name, strategy_names[s]) == 0) {
      *out = (enum spmvd_strategy)s;
      return 0;
    }
  }
  return spmv_error_set(err, SPMV_EINVAL,
                        "unknown strategy \"%s\": expected auto, model, "
                        "predict, trial or exhaustive",
                        name != NULL ? name : "(null)");
}

/* Returns the name of a trial status, or NULL. */
const char *spmvd_trial_status_name(enum spmvd_trial_status s)
{
  if ((int)s < 0 || s > SPMVD_TRIAL_FAILED)
    return NULL;
  return status_names[s];
}

/* Parses a trial status name. */
int spmvd_trial_status_parse(const char *name, enum spmvd_trial_status *out)
{
  int s;

  for (s = 0; name != NULL && s <= SPMVD_TRIAL_FAILED; s++) {
    if (strcmp(name, status_names[s]) == 0) {
      *out = (enum spmvd_trial_status)s;
      return 0;
    }
  }
  return SPMV_EINVAL;
}

/* Zeroes a decision. */
void spmvd_decision_init(struct spmvd_decision *d)
{
  memset(d, 0, sizeof *d);
}

/* Frees a decision's trials and zeroes it. */
void spmvd_decision_fini(struct spmvd_decision *d)
{
  free(d->trials);
  memset(d, 0, sizeof *d);
}
