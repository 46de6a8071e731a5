/*
 * hooks_test_util.h - fixtures and helpers shared by the hooks tests.
 *
 * Every test case gets a fresh mkdtemp directory (under $TMPDIR or /tmp)
 * from htu_setup(); htu_teardown() removes it again.
 */
#ifndef PDC_CKPT_HOOKS_TEST_UTIL_H
#define PDC_CKPT_HOOKS_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ckpt_hooks.h"
#include "test_util.h"

/* The test case's temporary directory and DIR/store, the store root
 * handed to the hooks (test_util.h). */
int htu_setup(void **state);
int htu_teardown(void **state);
struct tu_case *htu_fix(void **state);

/* Hooks options for the fixture's store root (rank 0 of 1 unless changed). */
struct ckpt_hooks_opts htu_opts(void **state);

/* Assert rc == want; on failure print both codes by name and the message. */
#define HTU_RC(want, rc) htu_check_rc((want), (rc), #rc, __FILE__, __LINE__)
#define HTU_OK(rc) HTU_RC(0, (rc))
void htu_check_rc(int want, int rc, const char *expr, const char *file, int line);

/* Strings equal, NULL counting as "". */
int htu_streq(const char *a, const char *b);
/* Asserts every persistent field of two objects is equal. */
void htu_assert_obj_eq(const struct ckpt_obj *a, const struct ckpt_obj *b);
/* Asserts two regions (with histograms) are equal. */
void htu_assert_region_eq(const struct ckpt_region *a, const struct ckpt_region *b);
/* Asserts two kvtags are equal (name, type, size, value bytes). */
void htu_assert_kvtag_eq(const struct ckpt_kvtag *a, const struct ckpt_kvtag *b);

/* A malloc'ed string of len bytes `fill` (NUL-terminated). */
char *htu_long_name(char fill, size_t len);

/* Records with every field set to a distinctive value: an object with ndim
 * dims, a region with ndim dimensions and, with_hist, a 3-bin histogram
 * (htu_hist_range / htu_hist_bin). Strings are static. */
struct ckpt_obj htu_full_obj(uint32_t ndim);
struct ckpt_region htu_full_region(uint32_t ndim, int with_hist);
extern const double htu_hist_range[6];
extern const uint64_t htu_hist_bin[3];

#endif
