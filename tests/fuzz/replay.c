/* replay.c: runs a fuzz target's LLVMFuzzerTestOneInput over every file of
 * its corpus without libFuzzer, so that make check (gcc, no clang) replays
 * the corpus and every crash input committed there. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

/* Reads the whole of path into a new buffer; returns 0, or -1 with a
 * message on stderr. */
static int slurp(const char *path, uint8_t **buf, size_t *len)
{
  FILE *f = fopen(path, "rb");
  uint8_t *b = NULL;
  size_t n = 0, cap = 0, got;

  if (f == NULL) {
    fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
    return -1;
  }
  do {
    if (n == cap) {
      uint8_t *tmp = realloc(b, cap = cap ? 2 * cap : 4096);

      if (tmp == NULL) {
        fprintf(stderr, "replay: out of memory reading %s\n", path);
        free(b);
        fclose(f);
        return -1;
      }
      b = tmp;
    }
    got = fread(b + n, 1, cap - n, f);
    n += got;
  } while (got > 0);
  if (ferror(f)) {
    fprintf(stderr, "replay: cannot read %s\n", path);
    free(b);
    fclose(f);
    return -1;
  }
  fclose(f);
  *buf = b;
  *len = n;
  return 0;
}

/* Runs the target on one file; the input is copied to a buffer of exactly
 * its size so that an overread is as visible as under libFuzzer. */
static int run_file(const char *path)
{
  uint8_t *buf, *exact;
  size_t len;

  if (slurp(path, &buf, &len) != 0)
    return -1;
  exact = malloc(len ? len : 1);
  if (exact == NULL) {
    free(buf);
    fprintf(stderr, "replay: out of memory for %s\n", path);
    return -1;
  }
  memcpy(exact, buf, len);
  free(buf);
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
  return 0;
}

/* Runs the target on a file, or on every regular file of a folder (sorted
 * order, so that a failure names the same file each time). */
static int run_path(const char *path, int *count)
{
  struct dirent **names;
  struct stat sb;
  int n, k, bad = 0;

  if (stat(path, &sb) != 0) {
    fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(sb.st_mode)) {
    ++*count;
    return run_file(path);
  }
  n = scandir(path, &names, NULL, alphasort);
  if (n < 0) {
    fprintf(stderr, "replay: cannot list %s: %s\n", path, strerror(errno));
    return -1;
  }
  for (k = 0; k < n; k++) {
    char full[4096];

    if (names[k]->d_name[0] != '.') {
      snprintf(full, sizeof full, "%s/%s", path, names[k]->d_name);
      if (stat(full, &sb) == 0 && S_ISREG(sb.st_mode)) {
        ++*count;
        if (run_file(full) != 0)
          bad = 1;
      }
    }
    free(names[k]);
  }
  free(names);
  return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
  const char *top = getenv("SPMV_TOP_SRCDIR");
  char def[4096];
  int k, count = 0, bad = 0;

  if (LLVMFuzzerInitialize != NULL)
    LLVMFuzzerInitialize(&argc, &argv);
  if (argc < 2) {
    /* As a TESTS program it gets no arguments: its own corpus folder. */
    snprintf(def, sizeof def, "%s/tests/fuzz/corpus/%s", top ? top : ".",
             FUZZ_NAME);
    bad = run_path(def, &count) != 0;
  }
  for (k = 1; k < argc; k++)
    if (run_path(argv[k], &count) != 0)
      bad = 1;
  printf("replay %s: %d input(s)%s\n", FUZZ_NAME, count,
         bad ? ", some unreadable" : "");
  if (count == 0) {
    fprintf(stderr, "replay %s: no inputs found\n", FUZZ_NAME);
    return 1;
  }
  return bad;
}
