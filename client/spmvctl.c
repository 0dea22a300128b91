/* spmvctl.c: the control tool of spmvd: command line, help, dispatch. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spmvctl.h"

/* The commands, in the order help lists them. */
static const struct spmvctl_command commands[] = {
  { "status", "", "the daemon's state: backend, device, workers",
    "", 0, 0, spmvctl_status },
  { "list", "", "cached tunings (from the cache database)",
    "", 0, 0, spmvctl_list },
  { "show", "FINGERPRINT", "one cached matrix: profile, tunings, trials",
    "", 1, 1, spmvctl_show },
  { "profile", "FILE", "row-length statistics of a Matrix Market file",
    "", 1, 1, spmvctl_profile },
  { "tune", "FILE", "load FILE into spmvd, print its decision",
    "Stf", 1, 1, spmvctl_tune },
  { "bench", "FILE", "time every candidate configuration on FILE",
    "t", 1, 1, spmvctl_bench },
  { "solve", "FILE", "solve A x = b in spmvd (cg, bicgstab, gmres, pagerank...)",
    "treIRDoL", 1, 1, spmvctl_solve },
  { "calibrate", "", "time synthetic matrices on spmvd's device, store fits",
    "tMp", 0, 0, spmvctl_calibrate },
  { "predict", "FILE", "each format's predicted time on spmvd's device",
    "tm", 1, 1, spmvctl_predict },
  { "model", "FILE", "the ELLR-T model's M(BS, T) grid and pick (no daemon)",
    "NWXBP", 1, 1, spmvctl_model },
  { "forget", "FINGERPRINT|all", "remove cached tunings (root or admin group)",
    "", 1, 1, spmvctl_forget },
  { "export", "[FINGERPRINT|all]", "cached tunings as JSON (stdout or --output)",
    "o", 0, 1, spmvctl_export },
  { "import", "FILE|-", "add exported tunings (root or admin group)",
    "", 1, 1, spmvctl_import },
  { "stop", "", "spmvd finishes its requests and exits (root or its user)",
    "", 0, 0, spmvctl_stop },
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* Every option; help and the man page list them all. */
static const struct option long_options[] = {
  { "socket", required_argument, NULL, 's' },
  { "db", required_argument, NULL, 'd' },
  { "json", no_argument, NULL, 'j' },
  { "quiet", no_argument, NULL, 'q' },
  { "strategy", required_argument, NULL, 'S' },
  { "dtype", required_argument, NULL, 't' },
  { "force", no_argument, NULL, 'f' },
  { "output", required_argument, NULL, 'o' },
  { "max-seconds", required_argument, NULL, 'M' },
  { "points", required_argument, NULL, 'p' },
  { "measure", no_argument, NULL, 'm' },
  { "rhs", required_argument, NULL, 'r' },
  { "method", required_argument, NULL, 'e' },
  { "rtol", required_argument, NULL, 'R' },
  { "maxiter", required_argument, NULL, 'I' },
  { "damping", required_argument, NULL, 'D' },
  { "split", required_argument, NULL, 'L' },
  { "sms", required_argument, NULL, 'N' },
  { "warp-size", required_argument, NULL, 'W' },
  { "max-threads-per-sm", required_argument, NULL, 'X' },
  { "max-blocks-per-sm", required_argument, NULL, 'B' },
  { "max-threads-per-block", required_argument, NULL, 'P' },
  { "no-autostart", no_argument, NULL, 'A' },
  { "help", no_argument, NULL, 'h' },
  { "version", no_argument, NULL, 'V' },
  { NULL, 0, NULL, 0 }
};

/* The options that only some commands take (the long-only ones have
 * letters here that the short option string does not accept). */
#define COMMAND_OPTIONS "StfoMpmNWXBPreRIDL"

/* Prints the usage text on out. */
static void usage(FILE *out, const char *prog)
{
  size_t i;

  fprintf(out,
          "Usage: %s [OPTIONS] COMMAND [ARGUMENTS]\n"
          "Control spmvd, the sparse matrix-vector product service.\n"
          "\n"
          "Commands:\n", prog);
  for (i = 0; i < NCOMMANDS; i++) {
    char head[48];

    snprintf(head, sizeof head, "%s %s", commands[i].name, commands[i].synopsis);
    fprintf(out, "  %-26s %s\n", head, commands[i].help);
  }
  fprintf(out,
          "\n"
          "Options:\n"
          "  -s, --socket PATH     spmvd's socket (default: $SPMVD_SOCKET, else\n"
          "                        $XDG_RUNTIME_DIR/spmvd.sock, else the system socket)\n"
          "  -d, --db PATH         the cache database for list, show, export\n"
          "                        (default: the one spmvd uses, else the default path)\n"
          "      --no-autostart    fail when spmvd is not running rather than start a\n"
          "                        user instance, as the commands that need one do\n"
          "                        (status never starts one)\n"
          "  -j, --json            print JSON for scripts instead of tables\n"
          "  -q, --quiet           no progress on stderr\n"
          "  -S, --strategy NAME   tune: auto, model, predict, trial or exhaustive\n"
          "  -t, --dtype TYPE      tune, bench, calibrate, predict, solve: f64 (default)\n"
          "                        or f32\n"
          "  -f, --force           tune: tune again even when the cache has a decision\n"
          "  -o, --output FILE     export: write to FILE instead of stdout; solve: write\n"
          "                        the solution x to FILE (a Matrix Market array)\n"
          "      --max-seconds N   calibrate: finish within N seconds (default: the\n"
          "                        daemon's, 300 on a GPU, 10 on the cpu backend)\n"
          "      --points FILE     calibrate: also write the points the fits were\n"
          "                        computed from to FILE, a tab-separated table\n"
          "      --measure         predict: also time each prediction's configuration\n"
          "                        in spmvd, as its calibration timed, and the error\n"
          "      --rhs B           solve: b is ones (default), random (fixed seed) or a\n"
          "                        Matrix Market array file of one column\n"
          "      --method M        solve: cg (default), pcg-jacobi, bicgstab, gmres or\n"
          "                        pagerank (no b)\n"
          "      --rtol R          solve: relative tolerance (default: the daemon's,\n"
          "                        1e-8 in f64, 1e-5 in f32)\n"
          "      --maxiter N       solve: at most N iterations (default: 10 x rows)\n"
          "      --damping D       solve, pagerank: the damping factor (default 0.85)\n"
          "      --split N         solve: the matrix's rows in N blocks over spmvd's\n"
          "                        workers (spmvd --devices, --cpu-workers)\n"
          "  model's GPU (default: an H100/H200, %d SMs, warp %d, %d threads and\n"
          "  %d blocks per SM, %d threads per block):\n"
          "      --sms N                    streaming multiprocessors\n"
          "      --warp-size W              threads per warp\n"
          "      --max-threads-per-sm X     resident threads per SM\n"
          "      --max-blocks-per-sm B      resident blocks per SM\n"
          "      --max-threads-per-block P  threads per block at most\n"
          "  -h, --help            print this help and exit\n"
          "  -V, --version         print the version and exit\n"
          "\n"
          "Exit status: 0 success, 1 failure, 2 bad usage, 3 spmvd not running,\n"
          "4 not found, 5 permission denied, 6 solve did not converge.  See spmvctl(1).\n",
          SPMVCTL_GPU_SMS, SPMVCTL_GPU_WARP_SIZE, SPMVCTL_GPU_THREADS_PER_SM,
          SPMVCTL_GPU_BLOCKS_PER_SM, SPMVCTL_GPU_THREADS_PER_BLOCK);
}

/* Prints "prog: message" on stderr and returns status. */
int spmvctl_fail(const struct spmvctl *ctl, int status, const char *fmt, ...)
{
  va_list ap;

  fprintf(stderr, "%s: ", ctl->prog);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return status;
}

/* Reports a failed library call on c and returns its exit status. */
int spmvctl_call_failed(const struct spmvctl *ctl, struct spmv_client *c,
                        int rc)
{
  return spmvctl_fail(ctl, spmvctl_exit_status(rc), "%s",
                      spmv_client_errmsg(c));
}

/* Maps an SPMV_E* code to an exit status. */
int spmvctl_exit_status(int code)
{
  switch (code) {
  case SPMV_OK:
    return SPMVCTL_EXIT_OK;
  case SPMV_ECONNECT:
    return SPMVCTL_EXIT_NODAEMON;
  case SPMV_ENOENT:
    return SPMVCTL_EXIT_NOTFOUND;
  case SPMV_EPERM:
    return SPMVCTL_EXIT_PERM;
  default:
    return SPMVCTL_EXIT_ERROR;
  }
}

/* Connects to spmvd, printing the library's message on failure. */
int spmvctl_connect(const struct spmvctl *ctl, struct spmv_client **out)
{
  int rc = spmv_connect_opts(ctl->socket,
                             ctl->autostart ? SPMV_CONNECT_AUTOSTART : 0, out);

  if (rc < 0)
    return spmvctl_fail(ctl, spmvctl_exit_status(rc), "%s",
                        spmv_client_errmsg(NULL));
  return SPMVCTL_EXIT_OK;
}

/* Checks that path can be read. */
int spmvctl_check_file(const struct spmvctl *ctl, const char *path)
{
  if (access(path, R_OK) == 0)
    return SPMVCTL_EXIT_OK;
  return spmvctl_fail(ctl, errno == ENOENT ? SPMVCTL_EXIT_NOTFOUND
                                           : SPMVCTL_EXIT_ERROR,
                      "cannot read %s: %s", path, strerror(errno));
}

/* Prints obj as indented JSON on stdout. */
int spmvctl_print_json(const json_t *obj)
{
  if (json_dumpf(obj, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) < 0)
    return SPMVCTL_EXIT_ERROR;
  fputc('\n', stdout);
  return SPMVCTL_EXIT_OK;
}

/* Prints obj as JSON or as a table. */
int spmvctl_output(const struct spmvctl *ctl, const json_t *obj,
                   void (*table)(const json_t *obj))
{
  if (obj == NULL)
    return SPMVCTL_EXIT_ERROR;
  if (ctl->json)
    return spmvctl_print_json(obj);
  table(obj);
  return SPMVCTL_EXIT_OK;
}

/* Parses JSON text from spmvd or the library. */
json_t *spmvctl_parse_json(const struct spmvctl *ctl, const char *text)
{
  json_error_t jerr;
  json_t *obj = json_loads(text, 0, &jerr);

  if (obj == NULL)
    spmvctl_fail(ctl, SPMVCTL_EXIT_ERROR, "unreadable reply from spmvd: %s",
                 jerr.text);
  return obj;
}

/* Prints one progress event on stderr. */
void spmvctl_progress(const struct spmv_progress *p, void *arg)
{
  const struct spmvctl *ctl = arg;

  if (ctl->quiet)
    return;
  fprintf(stderr, "%s: %s %lld/%lld", ctl->prog, p->stage,
          (long long)p->done, (long long)p->total);
  if (p->candidate[0] != '\0')
    fprintf(stderr, "  %-28s", p->candidate);
  if (p->time_us > 0)
    fprintf(stderr, " %10.2f us", p->time_us);
  if (strcmp(p->stage, "solve") == 0)
    fprintf(stderr, "  residual %.6e", p->residual);
  fputc('\n', stderr);
}

/* Returns the string member key of obj, or "-". */
const char *spmvctl_str(const json_t *obj, const char *key)
{
  const char *s = json_string_value(json_object_get(obj, key));

  return s != NULL && *s != '\0' ? s : "-";
}

/* Returns the number member key of obj, or 0. */
double spmvctl_num(const json_t *obj, const char *key)
{
  return json_number_value(json_object_get(obj, key));
}

/* Formats unix seconds as local time. */
const char *spmvctl_time(long long t, char *buf, size_t n)
{
  time_t tt = (time_t)t;
  struct tm tm;

  if (t <= 0 || localtime_r(&tt, &tm) == NULL)
    snprintf(buf, n, "never");
  else
    strftime(buf, n, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

/* Parses a positive integer option value into *out; returns an exit
 * status after saying what is wrong. */
static int positive_int(const struct spmvctl *ctl, const char *name,
                        const char *arg, int *out)
{
  char *end;
  long v;

  errno = 0;
  v = strtol(arg, &end, 10);
  if (errno != 0 || end == arg || *end != '\0' || v < 1 || v > 1 << 24)
    return spmvctl_fail(ctl, SPMVCTL_EXIT_USAGE,
                        "--%s must be a whole number in [1, %d], not '%s'",
                        name, 1 << 24, arg);
  *out = (int)v;
  return SPMVCTL_EXIT_OK;
}

/* Finds a command by name. */
static const struct spmvctl_command *find_command(const char *name)
{
  size_t i;

  for (i = 0; i < NCOMMANDS; i++)
    if (strcmp(commands[i].name, name) == 0)
      return &commands[i];
  return NULL;
}

/* Returns the long name of a short option letter. */
static const char *long_name(int key)
{
  const struct option *o;

  for (o = long_options; o->name != NULL; o++)
    if (o->val == key)
      return o->name;
  return "?";
}

/* Parses solve's --rtol, --damping (positive numbers: 0 would silently
 * mean the default) or --maxiter (a positive whole number) into ctl. */
static int solve_number(struct spmvctl *ctl, int key, const char *arg)
{
  char *end;
  double v;

  errno = 0;
  v = strtod(arg, &end);
  if (errno != 0 || end == arg || *end != '\0' || !(v > 0) || !isfinite(v) ||
      (key == 'I' && (v != (double)(long long)v || v > 1e15)))
    return spmvctl_fail(ctl, SPMVCTL_EXIT_USAGE, "--%s must be a positive %s, not '%s'",
                        long_name(key), key == 'I' ? "whole number" : "number", arg);
  if (key == 'R')
    ctl->rtol = v;
  else if (key == 'D')
    ctl->damping = v;
  else
    ctl->maxiter = (long long)v;
  return SPMVCTL_EXIT_OK;
}

int main(int argc, char **argv)
{
  struct spmvctl ctl;
  const struct spmvctl_command *cmd;
  const char *slash;
  char seen[sizeof COMMAND_OPTIONS] = "";
  int c, nargs;

  memset(&ctl, 0, sizeof ctl);
  slash = strrchr(argv[0], '/');
  ctl.prog = slash != NULL ? slash + 1 : argv[0];
  /* libtool's wrapper runs lt-spmvctl: name the tool as users know it. */
  if (strncmp(ctl.prog, "lt-", 3) == 0)
    ctl.prog += 3;
  ctl.dtype = SPMV_F64;
  /* A daemon is started when needed, unless the environment says no. */
  ctl.autostart = getenv("SPMV_AUTOSTART") == NULL ||
                  strcmp(getenv("SPMV_AUTOSTART"), "0") != 0;
  ctl.gpu.sms = SPMVCTL_GPU_SMS;
  ctl.gpu.warp_size = SPMVCTL_GPU_WARP_SIZE;
  ctl.gpu.max_threads_per_sm = SPMVCTL_GPU_THREADS_PER_SM;
  ctl.gpu.max_blocks_per_sm = SPMVCTL_GPU_BLOCKS_PER_SM;
  ctl.gpu.max_threads_per_block = SPMVCTL_GPU_THREADS_PER_BLOCK;
  while ((c = getopt_long(argc, argv, "s:d:jqS:t:fo:hV", long_options, NULL)) != -1) {
    const char *letter = strchr(COMMAND_OPTIONS, c);

    if (letter != NULL && strchr(seen, c) == NULL)
      seen[strlen(seen)] = (char)c;
    switch (c) {
    case 's': ctl.socket = optarg; break;
    case 'd': ctl.db = optarg; break;
    case 'j': ctl.json = 1; break;
    case 'q': ctl.quiet = 1; break;
    case 'A': ctl.autostart = 0; break;
    case 'S': ctl.strategy = optarg; break;
    case 'f': ctl.force = 1; break;
    case 'o': ctl.output = optarg; break;
    case 'm': ctl.measure = 1; break;
    case 'p': ctl.points = optarg; break;
    case 'M': {
      char *end;

      ctl.max_seconds = strtod(optarg, &end);
      if (end == optarg || *end != '\0' || !(ctl.max_seconds > 0) ||
          ctl.max_seconds > 3600)
        return spmvctl_fail(&ctl, SPMVCTL_EXIT_USAGE,
                            "--max-seconds must be a number in (0, 3600], "
                            "not '%s'", optarg);
      break;
    }
    case 'r': ctl.rhs = optarg; break;
    case 'e': ctl.method = optarg; break;
    case 'R': case 'D': case 'I': {
      int st = solve_number(&ctl, c, optarg);

      if (st != SPMVCTL_EXIT_OK)
        return st;
      break;
    }
    case 'L': {
      int st = positive_int(&ctl, "split", optarg, &ctl.split);

      if (st != SPMVCTL_EXIT_OK)
        return st;
      break;
    }
    case 'N': case 'W': case 'X': case 'B': case 'P': {
      int *field = c == 'N' ? &ctl.gpu.sms
                   : c == 'W' ? &ctl.gpu.warp_size
                   : c == 'X' ? &ctl.gpu.max_threads_per_sm
                   : c == 'B' ? &ctl.gpu.max_blocks_per_sm
                              : &ctl.gpu.max_threads_per_block;
      int st = positive_int(&ctl, long_name(c), optarg, field);

      if (st != SPMVCTL_EXIT_OK)
        return st;
      break;
    }
    case 't':
      if (strcmp(optarg, "f64") == 0)
        ctl.dtype = SPMV_F64;
      else if (strcmp(optarg, "f32") == 0)
        ctl.dtype = SPMV_F32;
      else
        return spmvctl_fail(&ctl, SPMVCTL_EXIT_USAGE,
                            "--dtype must be f32 or f64, not '%s'", optarg);
      break;
    case 'h':
      usage(stdout, ctl.prog);
      return SPMVCTL_EXIT_OK;
    case 'V':
      printf("spmvctl (spmvd) %s\n", PACKAGE_VERSION);
      return SPMVCTL_EXIT_OK;
    default:
      fprintf(stderr, "Try '%s --help'.\n", ctl.prog);
      return SPMVCTL_EXIT_USAGE;
    }
  }
  if (optind >= argc) {
    usage(stderr, ctl.prog);
    return SPMVCTL_EXIT_USAGE;
  }
  cmd = find_command(argv[optind]);
  if (cmd == NULL)
    return spmvctl_fail(&ctl, SPMVCTL_EXIT_USAGE,
                        "unknown command '%s' (try '%s --help')",
                        argv[optind], ctl.prog);
  for (c = 0; seen[c] != '\0'; c++)
    if (strchr(cmd->options, seen[c]) == NULL)
      return spmvctl_fail(&ctl, SPMVCTL_EXIT_USAGE,
                          "option --%s does not apply to '%s'",
                          long_name(seen[c]), cmd->name);
  nargs = argc - optind - 1;
  if (nargs < cmd->min_args || nargs > cmd->max_args)
    return spmvctl_fail(&ctl, SPMVCTL_EXIT_USAGE, "usage: %s %s %s", ctl.prog,
                        cmd->name, cmd->synopsis);
  return cmd->run(&ctl, nargs, argv + optind + 1);
}
