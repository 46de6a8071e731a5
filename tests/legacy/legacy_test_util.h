/*
 * legacy_test_util.h - helpers shared by the legacy reader/import tests:
 * the shared test files and their expected.json, field-by-field checks
 * against it, a builder of synthetic legacy files, temporary directories.
 */
#ifndef PDC_CKPT_LEGACY_TEST_UTIL_H
#define PDC_CKPT_LEGACY_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "legacy.h"
#include "test_util.h"

/* PDC_LEGACY_DATA/<case>/<file> into buf (asserts it fits). */
void ltu_path(char *buf, size_t len, const char *tcase, const char *file);
/* expected.json of a case (json_object_put it). */
json_object *ltu_expected(const char *tcase);
/* Member of a JSON object; fails the test if missing. */
json_object *ltu_get(json_object *o, const char *key);

/* tu_read_file and tu_write_file (test_util.h) that fail the test on an
 * error. */
uint8_t *ltu_read_file(const char *path, size_t *len);
void ltu_write_file(const char *path, const void *data, size_t len);

/* A fresh directory under $TMPDIR or /tmp (tu_rmtree removes it). */
void ltu_mkdtemp(char *buf, size_t len, const char *tag);

/* Assert a parsed/stored object matches its expected.json entry (every
 * field listed there). */
void ltu_check_obj(json_object *exp, const struct ckpt_obj *o);
/* Assert a kvtag matches {"name","type","value"} (typed value). */
void ltu_check_kvtag(json_object *exp, const struct ckpt_kvtag *t);
/* Assert a region matches a region entry of expected.json. */
void ltu_check_region(json_object *exp, const struct ckpt_region *r);
/* PDC type code of a name ("PDC_INT" -> 2); fails if unknown. */
int ltu_type_code(const char *name);

/* ---- synthetic legacy files ---- */
struct ltu_buf {
    uint8_t *p;
    size_t len, cap;
};
void ltu_put(struct ltu_buf *b, const void *d, size_t n);
void ltu_zero(struct ltu_buf *b, size_t n);
void ltu_i32(struct ltu_buf *b, int32_t v);
void ltu_u32(struct ltu_buf *b, uint32_t v);
void ltu_u64(struct ltu_buf *b, uint64_t v);
void ltu_f64(struct ltu_buf *b, double v);
/* Patch little-endian values at an offset. */
void ltu_set_i32(uint8_t *p, size_t off, int32_t v);
void ltu_set_u64(uint8_t *p, size_t off, uint64_t v);

/* { hash_key ; pdc_cont_hash_table_entry_t } */
void ltu_cont(struct ltu_buf *b, uint64_t id, const char *name);
/* pdc_metadata_t (5360 bytes) from a ckpt_obj (ndim <= 4). */
void ltu_meta(struct ltu_buf *b, const struct ckpt_obj *o);
/* { name_len ; name ; size ; type ; value } */
void ltu_kvtag(struct ltu_buf *b, const char *name, int8_t type, const void *val, uint32_t size);
/* region_list_t (3480 bytes) from a ckpt_region */
void ltu_region(struct ltu_buf *b, const struct ckpt_region *r);
/* has_hist + histogram of a region (has_hist 0 if r->has_hist is 0) */
void ltu_hist(struct ltu_buf *b, const struct ckpt_region *r);

/*
 * A synthetic file exercising what the real ones do not hold:
 *  containers syn/c1 (1000000000), syn/c2 (2000000000);
 *  bucket "syn/a": syn/a ts 0 (1000000001, in c1) and syn/a ts 1
 *    (1000000002, in c1);
 *    1000000001 has kvtags k=5 (PDC_INT), s="hello", k=7 (duplicate: the
 *    last wins), arr=[1.5,-2.25] (PDC_DOUBLE), u=2^64-1 (PDC_UINT64),
 *    odd (type 99, 3 bytes), raw (PDC_STRING "abc" without its NUL), and
 *    regions R1 2-D {0,0}+{4,4} with a histogram (dtype 13, nbin 3),
 *    R2 1-D {10}+{5}, R3 ndim 0, R4 1-D {10}+{5} again (data_size 77: wins);
 *  bucket "syn/b": syn/b ts 2 (3000000005, in c2), kvtag t=1.25f (PDC_FLOAT);
 *  bucket "syn/nocont": 1000000100, cont_id 4242 (no such container);
 *  an empty bucket;
 *  data-server regions: 1000000002 {0}+{8}, {8}+{8}; 1000000001 2-D
 *  {4,0}+{4,4}; 999 (no such object) {0}+{1};
 *  a 20-byte transfer-query blob of junk.
 */
#define LTU_SYN_OBJS 4
#define LTU_SYN_CONTS 2
void ltu_synth(struct ltu_buf *b);
/* The histogram of R1. */
extern const double ltu_syn_range[6];
extern const uint64_t ltu_syn_bins[3];

#endif
