/*
 * store_test_util.h - helpers shared by the store tests (tests/store/):
 * a per-test temporary directory (fixture), default store options, BULKI
 * record builders for objects, containers and kvtags, record field getters,
 * an iterator callback that collects copies of every entry and an
 * error-code assertion that prints symbolic names. The PRNG, rmtree and
 * the temporary directory are the shared ones (tests/common/test_util.h).
 */
#ifndef PDC_CKPT_STORE_TEST_UTIL_H
#define PDC_CKPT_STORE_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "bulki.h"
#include "ckpt_store.h"
#include "test_util.h" /* tu_rand, tu_rmtree, tu_exists, tu_case */

/* cmocka setup/teardown: *state becomes a struct tu_case (test_util.h), a
 * fresh directory removed again in the teardown. */
int stu_setup(void **state);
int stu_teardown(void **state);
/* The fixture's directory. */
const char *stu_dir(void **state);
/* dir/sub into out (asserts it fits). */
void stu_path(char *out, size_t cap, const char *dir, const char *sub);

/* CKPT_STORE_OPTS_INIT with root set. */
struct ckpt_store_opts stu_opts(const char *root);
/* Open and assert success, printing the store's message on failure. */
ckpt_store *stu_open(const struct ckpt_store_opts *o);
/* Close and assert success. */
void stu_close(ckpt_store *st);
/* ckpt_store_info, asserting success. */
struct ckpt_store_info stu_info(ckpt_store *st);

/* Assert rc == want, printing both symbolic names and the store message. */
#define stu_assert_rc(rc, want, st)                                            \
    stu_assert_rc_impl((rc), (want), (st), #rc, __FILE__, __LINE__)
void stu_assert_rc_impl(int rc, int want, const ckpt_store *st, const char *expr,
                        const char *file, int line);

/* ---- records (BULKI docs) ---- */
/* Object record: obj_name, time_step, cont_id (only if cont_id != 0), seq,
 * and a "pad" string of pad bytes (only if pad > 0). Returns its length;
 * asserts it fits. */
size_t stu_obj_rec(void *buf, size_t cap, const char *name, size_t nlen, int32_t ts,
                   uint64_t cont_id, uint64_t seq, size_t pad);
/* Container record: cont_name, seq. */
size_t stu_cont_rec(void *buf, size_t cap, const char *name, size_t nlen, uint64_t seq);
/* kvtag record: name, value (string). */
size_t stu_kvtag_rec(void *buf, size_t cap, const char *name, size_t nlen, const char *value);

/* Field getters on a stored record: 0 or a negative BULKI code. */
int stu_rec_str(const ckpt_val *rec, const char *field, const char **s, size_t *len);
int stu_rec_u64(const ckpt_val *rec, const char *field, uint64_t *v);
int stu_rec_i64(const ckpt_val *rec, const char *field, int64_t *v);

/* ---- iteration ---- */
struct stu_ent {
    uint8_t *key;
    size_t klen;
    uint8_t *val;
    size_t vlen;
};
struct stu_list {
    struct stu_ent *e;
    size_t n, cap;
};
/* ckpt_iter_cb that appends copies of key and value to a struct stu_list. */
int stu_collect(const ckpt_val *key, const ckpt_val *val, void *payload);
void stu_list_free(struct stu_list *l);
/* Assert the keys are strictly ascending (memcmp order, shorter first). */
void stu_assert_ascending(const struct stu_list *l);
/* Collect every entry of db whose key starts with prefix (in a fresh read
 * transaction). */
void stu_collect_db(struct stu_list *out, ckpt_store *st, int db, const void *prefix,
                    size_t plen);
/* Entries of db (ckpt_db_stat in a fresh read transaction). */
uint64_t stu_count(ckpt_store *st, int db);

/* ---- misc ---- */
/* Deterministic name of len bytes (letters; no NUL) from seed. Caller
 * frees. */
char *stu_name(size_t len, unsigned seed);
void stu_sleep_ms(unsigned ms);
uint64_t stu_now_ms(void);

#endif
