/* check_config.c: format names and the text form of launch configurations. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "spmv_formats.h"

Suite *config_suite(void);

/* Every format's name, in enum order. */
static const char *const names[SPMV_FMT_COUNT] = {
  "csr-scalar", "csr-vector", "csr-adaptive", "ell", "ellr-t", "coo", "hyb",
  "dia", "jad", "sell", "csr-merge", "cusparse", "sell16", "csr16",
  "csr-stream", "csr-stream16", "csr-panel"
};

/* Canonical texts: each must parse and be written back byte for byte. */
static const char *const canonical[] = {
  "csr-scalar bs=256",
  "csr-vector bs=128 tpr=8",
  "csr-adaptive bs=512 maxtpr=512 base=8",
  "ell bs=64",
  "ellr-t bs=256 t=4",
  "coo bs=1024",
  "hyb bs=256 k=12",
  "hyb bs=256 k=0",
  "dia bs=32",
  "jad bs=96",
  "sell bs=128 c=32 sigma=256",
  "sell16 bs=128 c=32 sigma=1",
  "csr16 bs=128 tpr=8",
  "csr-stream bs=256 k=4",
  "csr-stream16 bs=128 k=8",
  "csr-panel bs=256 tpr=4 w=16384",
  "csr-merge bs=256",
  "cusparse alg=1",
  "cusparse alg=2",
  "cusparse alg=3",
  "cusparse alg=4",
};

START_TEST(format_names)
{
  enum spmv_format f;
  int i;

  for (i = 0; i < SPMV_FMT_COUNT; i++) {
    ck_assert_str_eq(spmv_format_name((enum spmv_format)i), names[i]);
    f = SPMV_FMT_COUNT;
    ck_assert_int_eq(spmv_format_parse(names[i], &f), 0);
    ck_assert_int_eq(f, i);
  }
  ck_assert_ptr_null(spmv_format_name(SPMV_FMT_COUNT));
  ck_assert_ptr_null(spmv_format_name((enum spmv_format)-1));
  ck_assert_int_eq(spmv_format_parse("ELL", &f), SPMV_EFORMAT);
  ck_assert_int_eq(spmv_format_parse("ellr", &f), SPMV_EFORMAT);
  ck_assert_int_eq(spmv_format_parse("", &f), SPMV_EFORMAT);
  ck_assert_int_eq(spmv_format_parse(NULL, &f), SPMV_EFORMAT);
}
END_TEST

START_TEST(round_trip)
{
  struct spmv_config c;
  struct spmv_error err;
  char buf[128];
  size_t i;

  for (i = 0; i < sizeof canonical / sizeof canonical[0]; i++) {
    ck_assert_msg(spmv_config_parse(canonical[i], &c, &err) == 0,
                  "%s: %s", canonical[i], err.msg);
    ck_assert_int_eq(spmv_config_format(&c, buf, sizeof buf),
                     (int)strlen(canonical[i]));
    ck_assert_str_eq(buf, canonical[i]);
  }
}
END_TEST

/* Configurations are equal field by field: each canonical one equals
 * itself parsed again and no other (no two canonical texts coincide). */
START_TEST(equality)
{
  struct spmv_config a, b;
  struct spmv_error err;
  size_t i, j, n = sizeof canonical / sizeof canonical[0];

  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      ck_assert(spmv_config_parse(canonical[i], &a, &err) == 0);
      ck_assert(spmv_config_parse(canonical[j], &b, &err) == 0);
      ck_assert_msg(spmv_config_equal(&a, &b) == (i == j), "%s against %s",
                    canonical[i], canonical[j]);
    }
  ck_assert(spmv_config_parse(canonical[0], &a, &err) == 0);
  b = a;
  b.param2++;
  ck_assert(!spmv_config_equal(&a, &b));
}
END_TEST

START_TEST(fields)
{
  struct spmv_config c;

  ck_assert_int_eq(spmv_config_parse("ellr-t bs=256 t=4", &c, NULL), 0);
  ck_assert_int_eq(c.format, SPMV_FMT_ELLR_T);
  ck_assert_int_eq(c.bs, 256);
  ck_assert_int_eq(c.tpr, 4);
  ck_assert_int_eq(c.param, 0);
  ck_assert_int_eq(c.param2, 0);
  ck_assert_int_eq(spmv_config_parse("sell bs=128 c=32 sigma=256", &c, NULL),
                   0);
  ck_assert_int_eq(c.format, SPMV_FMT_SELL);
  ck_assert_int_eq(c.param, 32);
  ck_assert_int_eq(c.param2, 256);
  ck_assert_int_eq(spmv_config_parse("csr-adaptive bs=512 maxtpr=512 base=8",
                                     &c, NULL), 0);
  ck_assert_int_eq(c.tpr, 512);
  ck_assert_int_eq(c.param, 8);
  ck_assert_int_eq(spmv_config_parse("hyb bs=256 k=12", &c, NULL), 0);
  ck_assert_int_eq(c.param, 12);
  ck_assert_int_eq(spmv_config_parse("cusparse alg=1", &c, NULL), 0);
  ck_assert_int_eq(c.format, SPMV_FMT_CUSPARSE);
  ck_assert_int_eq(c.param, 1);
  ck_assert_int_eq(c.bs, 0);
  /* Keys in another order, extra blanks, missing keys default to 0. */
  ck_assert_int_eq(spmv_config_parse("  csr-vector   tpr=16\tbs=64 ", &c,
                                     NULL), 0);
  ck_assert_int_eq(c.bs, 64);
  ck_assert_int_eq(c.tpr, 16);
  ck_assert_int_eq(spmv_config_parse("coo", &c, NULL), 0);
  ck_assert_int_eq(c.format, SPMV_FMT_COO);
  ck_assert_int_eq(c.bs, 0);
}
END_TEST

START_TEST(every_format_formats)
{
  struct spmv_config c, d;
  char buf[128];
  int i;

  for (i = 0; i < SPMV_FMT_COUNT; i++) {
    memset(&c, 0, sizeof c);
    c.format = (enum spmv_format)i;
    ck_assert_int_gt(spmv_config_format(&c, buf, sizeof buf), 0);
    ck_assert_int_eq(strncmp(buf, names[i], strlen(names[i])), 0);
    ck_assert_int_eq(spmv_config_parse(buf, &d, NULL), 0);
    ck_assert_mem_eq(&c, &d, sizeof c);
  }
}
END_TEST

START_TEST(format_truncates)
{
  struct spmv_config c = { SPMV_FMT_ELLR_T, 256, 4, 0, 0 };
  char buf[8];

  memset(buf, 'x', sizeof buf);
  ck_assert_int_eq(spmv_config_format(&c, buf, sizeof buf), 17);
  ck_assert_str_eq(buf, "ellr-t ");
  ck_assert_int_eq(spmv_config_format(&c, NULL, 0), 17);
  c.format = SPMV_FMT_COUNT;
  ck_assert_int_lt(spmv_config_format(&c, buf, sizeof buf), 0);
  ck_assert_str_eq(buf, "");
}
END_TEST

/* Asserts that text is refused with exactly the message want. */
static void refused(const char *text, const char *want)
{
  struct spmv_config c = { SPMV_FMT_DIA, 32, 0, 0, 0 };
  struct spmv_error err;

  spmv_error_clear(&err);
  ck_assert_int_eq(spmv_config_parse(text, &c, &err), SPMV_EINVAL);
  ck_assert_int_eq(err.code, SPMV_EINVAL);
  ck_assert_str_eq(err.msg, want);
  ck_assert_int_eq(c.format, SPMV_FMT_DIA); /* untouched */
}

/* Configurations that differ only in launch shape share a layout key;
 * csr-stream's BS shapes its blocks, so it stays in the key. */
START_TEST(layout_keys)
{
  struct spmv_config a = { SPMV_FMT_CSR_VECTOR, 128, 8, 0, 0 };
  struct spmv_config b = { SPMV_FMT_CSR_SCALAR, 512, 0, 0, 0 };
  struct spmv_config s1 = { SPMV_FMT_CSR_STREAM, 128, 0, 4, 0 };
  struct spmv_config s2 = { SPMV_FMT_CSR_STREAM16, 256, 0, 4, 0 };
  struct spmv_config e = { SPMV_FMT_ELLR_T, 64, 4, 0, 0 };
  struct spmv_config p = { SPMV_FMT_CSR_PANEL, 128, 8, 8192, 0 };
  struct spmv_config ka = spmv_config_layout_key(&a);
  struct spmv_config kb = spmv_config_layout_key(&b);

  ck_assert(memcmp(&ka, &kb, sizeof ka) == 0);
  ck_assert_int_eq(ka.format, SPMV_FMT_CSR_SCALAR);
  ck_assert_int_eq(ka.bs, 256);
  ck_assert_int_eq(spmv_config_layout_key(&s1).bs, 128);
  ck_assert_int_eq(spmv_config_layout_key(&s2).bs, 256);
  ck_assert_int_eq(spmv_config_layout_key(&e).bs, 256);
  ck_assert_int_eq(spmv_config_layout_key(&e).tpr, 4); /* ellr-t's T shapes it */
  /* csr-panel's width shapes its layout, its TPR and BS only the launch. */
  ck_assert_int_eq(spmv_config_layout_key(&p).tpr, 0);
  ck_assert_int_eq(spmv_config_layout_key(&p).bs, 256);
  ck_assert_int_eq(spmv_config_layout_key(&p).param, 8192);
}
END_TEST

START_TEST(parse_errors)
{
  refused("", "empty configuration");
  refused("   ", "empty configuration");
  refused("ellpack bs=256", "bad token \"ellpack\": unknown format");
  refused("ellr-t bs=256 tpr=4",
          "bad token \"tpr=4\": ellr-t takes no key \"tpr\"");
  refused("ellr-t bs=256 t", "bad token \"t\": expected key=value");
  refused("ellr-t bs=256 t=3",
          "bad token \"t=3\": t must be a power of two up to 32");
  refused("ellr-t bs=256 t=64",
          "bad token \"t=64\": t must be a power of two up to 32");
  refused("csr-panel bs=256 w=1000",
          "bad token \"w=1000\": w must be a power of two up to 65536");
  refused("csr-scalar bs=100",
          "bad token \"bs=100\": bs must be a multiple of 32 up to 1024");
  refused("csr-scalar bs=2048",
          "bad token \"bs=2048\": bs must be a multiple of 32 up to 1024");
  refused("csr-scalar bs=-32",
          "bad token \"bs=-32\": value is not a decimal integer");
  refused("csr-scalar bs=2x",
          "bad token \"bs=2x\": value is not a decimal integer");
  refused("csr-scalar bs=",
          "bad token \"bs=\": value is not a decimal integer");
  refused("csr-scalar bs=99999999999999999999",
          "bad token \"bs=99999999999999999999\": value is not a decimal "
          "integer");
  refused("hyb bs=256 k=1 k=2", "bad token \"k=2\": key \"k\" given twice");
  refused("cusparse alg=5",
          "bad token \"alg=5\": alg must be an integer from 0 to 4");
  refused("cusparse bs=256", "bad token \"bs=256\": cusparse takes no key "
          "\"bs\"");
  refused("sell c=24", "bad token \"c=24\": c must be a power of two up to "
          "1024");
  ck_assert_int_eq(spmv_config_parse(NULL, NULL, NULL), SPMV_EINVAL);
}
END_TEST

/* The suite of configuration texts. */
Suite *config_suite(void)
{
  Suite *s = suite_create("config");
  TCase *tc = tcase_create("core");

  tcase_add_test(tc, format_names);
  tcase_add_test(tc, round_trip);
  tcase_add_test(tc, equality);
  tcase_add_test(tc, fields);
  tcase_add_test(tc, every_format_formats);
  tcase_add_test(tc, layout_keys);
  tcase_add_test(tc, format_truncates);
  tcase_add_test(tc, parse_errors);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(config_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
