/* spmvd_fault.c: spmvd-worker's faults on cue (SPMVD_FAULT), compiled
 * only into a fault-injection build. */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "spmvd_config.h"
#include "spmvd_fault.h"
#include "spmvd_log.h"
#ifdef HAVE_CUDA
#include "spmv_fault.h"
#endif

enum kind { K_ABORT, K_ILLEGAL_ADDRESS, K_HANG, K_LEAVE_FREE, K_SLOW_START,
            K_SLOW_STEP, K_SLOW_SOLVE };

static const char *const kind_names[] = {"abort", "illegal-address", "hang",
                                         "leave-free", "slow-start",
                                         "slow-step", "slow-solve"};

#define MAX_FAULTS 8

/* One entry of SPMVD_FAULT. */
struct fault {
  enum kind kind;
  char prefix[64];     /* the configurations it strikes */
  uint64_t bytes;      /* leave-free: what stays free */
  unsigned ms;         /* slow-*: the milliseconds of each stall */
};

/* The process's faults: SPMVD_FAULT is the process's too. */
static struct fault faults[MAX_FAULTS];
static int nfaults;
static int on_cuda;
static void *ballast;

/* Parses entry text (len bytes, not terminated) into f. */
static int parse_entry(const char *text, size_t len, struct fault *f,
                       struct spmv_error *err)
{
  char e[128];
  const char *arg;
  size_t k;

  if (len >= sizeof e)
    return spmv_error_set(err, SPMV_ECONFIG, "SPMVD_FAULT: entry '%.40s...' "
                          "is too long", text);
  memcpy(e, text, len);
  e[len] = '\0';
  arg = strchr(e, ':');
  if (!arg || arg[1] == '\0')
    return spmv_error_set(err, SPMV_ECONFIG, "SPMVD_FAULT: '%s' is not "
                          "KIND:ARGUMENT", e);
  for (k = 0; k < sizeof kind_names / sizeof kind_names[0]; k++)
    if (strlen(kind_names[k]) == (size_t)(arg - e) &&
        strncmp(e, kind_names[k], (size_t)(arg - e)) == 0)
      break;
  if (k == sizeof kind_names / sizeof kind_names[0])
    return spmv_error_set(err, SPMV_ECONFIG, "SPMVD_FAULT: '%s': the kind is "
                          "not abort, illegal-address, hang, leave-free, "
                          "slow-start, slow-step or slow-solve", e);
  memset(f, 0, sizeof *f);
  f->kind = (enum kind)k;
  arg++;
  if (f->kind == K_LEAVE_FREE) {
    if (spmvd_config_parse_size(arg, &f->bytes) < 0)
      return spmv_error_set(err, SPMV_ECONFIG, "SPMVD_FAULT: '%s' is not a "
                            "size", arg);
  } else if (f->kind >= K_SLOW_START) {
    char *end;
    unsigned long v = strtoul(arg, &end, 10);
    if (*end != '\0' || v < 1 || v > 3600000)
      return spmv_error_set(err, SPMV_ECONFIG, "SPMVD_FAULT: %s:%s: not 1 "
                            "to 3600000 milliseconds", kind_names[k], arg);
    f->ms = (unsigned)v;
  } else {
    snprintf(f->prefix, sizeof f->prefix, "%s", arg);
  }
  if (!on_cuda && (f->kind == K_ILLEGAL_ADDRESS || f->kind == K_LEAVE_FREE))
    return spmv_error_set(err, SPMV_ECONFIG, "SPMVD_FAULT: %s needs the cuda "
                          "backend", kind_names[k]);
  return 0;
}

/* The ballast of entry f: only f->bytes of device memory left free. */
static int make_ballast(const struct fault *f, struct spmv_error *err)
{
#ifdef HAVE_CUDA
  size_t bytes = 0;
  int rc = spmv_fault_ballast_new((size_t)f->bytes, &ballast, &bytes, err);

  if (rc < 0)
    return rc;
  spmvd_log_warn("fault injection: a ballast of %zu bytes leaves %llu bytes "
                 "of device memory free", bytes, (unsigned long long)f->bytes);
  return 0;
#else
  (void)f;
  return spmv_error_set(err, SPMV_ECONFIG, "SPMVD_FAULT: leave-free needs "
                        "the cuda backend");
#endif
}

int spmvd_fault_open(const char *backend, struct spmv_error *err)
{
  const char *spec = getenv("SPMVD_FAULT"), *p, *end;
  int rc;

  nfaults = 0;
  on_cuda = strcmp(backend, "cuda") == 0;
  if (!spec || !*spec)
    return 0;
  for (p = spec; *p; p = *end ? end + 1 : end) {
    end = strchr(p, ',');
    if (!end)
      end = p + strlen(p);
    if (nfaults == MAX_FAULTS)
      return spmv_error_set(err, SPMV_ECONFIG, "SPMVD_FAULT: more than %d "
                            "entries", MAX_FAULTS);
    if ((rc = parse_entry(p, (size_t)(end - p), &faults[nfaults], err)) < 0)
      return rc;
    nfaults++;
  }
  spmvd_log_warn("fault injection: SPMVD_FAULT=%s", spec);
  for (int i = 0; i < nfaults; i++)
    if (faults[i].kind == K_LEAVE_FREE && !ballast &&
        (rc = make_ballast(&faults[i], err)) < 0)
      return rc;
  return 0;
}

/* Never returns: the front end's timeout ends the process. */
static void hang_cpu(void)
{
  for (;;)
    pause();
}

int spmvd_fault_run(const struct spmv_config *cfg, struct spmv_error *err)
{
  char text[64];

  spmv_config_format(cfg, text, sizeof text);
  for (int i = 0; i < nfaults; i++) {
    const struct fault *f = &faults[i];
    if (f->kind == K_LEAVE_FREE || f->kind >= K_SLOW_START ||
        strncmp(text, f->prefix, strlen(f->prefix)) != 0)
      continue;
    spmvd_log_warn("fault injection: %s building '%s'", kind_names[f->kind],
                   text);
    switch (f->kind) {
    case K_ABORT: {
      struct rlimit no_core = {0, 0};
      setrlimit(RLIMIT_CORE, &no_core);
      abort();
    }
    case K_HANG:
#ifdef HAVE_CUDA
      if (on_cuda)
        return spmv_fault_hang(err);
#endif
      hang_cpu();
      break;
    case K_ILLEGAL_ADDRESS:
#ifdef HAVE_CUDA
      return spmv_fault_illegal_address(err);
#else
      break;
#endif
    default:
      break;
    }
  }
  return 0;
}

void spmvd_fault_slow(enum spmvd_fault_slow where)
{
  static const enum kind kinds[] = {K_SLOW_START, K_SLOW_STEP, K_SLOW_SOLVE};

  for (int i = 0; i < nfaults; i++)
    if (faults[i].kind == kinds[where]) {
      if (where == SPMVD_FAULT_START)
        spmvd_log_warn("fault injection: the start stalls for %u ms",
                       faults[i].ms);
      usleep((useconds_t)faults[i].ms * 1000);
    }
}

void spmvd_fault_close(void)
{
#ifdef HAVE_CUDA
  spmv_fault_ballast_free(ballast);
#endif
  ballast = NULL;
}
