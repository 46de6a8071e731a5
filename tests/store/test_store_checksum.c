/*
 * test_store_checksum.c - format 4's record checksums (store/csum.h,
 * docs/STORE.md "Record checksums"): the CRC-32C itself; every value
 * written carries the checksum of its key and value; a value changed
 * behind the store's back (raw LMDB) is refused by lookups and
 * iterations with CKPT_E_CORRUPT naming rank, database and key, and
 * skipped-and-reported with ckpt_rtxn_on_damage; the tag index is checked
 * against its kvtags; a damaged meta record or delta chunk is refused;
 * PDC_CKPT_CHECKSUMS=0 creates format 3 stores; the copy converts a
 * format 3 store into format 4.
 */
#include "store_test_util.h"
#include "csum.h"

#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MDB_env *raw_open(const char *root, unsigned flags)
{
    char dir[1024];
    MDB_env *env;
    ckpt_store_wait_closed();
    stu_path(dir, sizeof dir, root, "rank-0");
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 16), 0);
    assert_int_equal(mdb_env_open(env, dir, flags, 0600), 0);
    return env;
}

/* The raw value of key in database db (copied into out). */
static size_t raw_get(const char *root, const char *db, const void *key, size_t klen, uint8_t *out,
                      size_t cap)
{
    MDB_env *env = raw_open(root, MDB_RDONLY);
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_val k = {klen, (void *)key}, v;
    assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, db, 0, &dbi), 0);
    assert_int_equal(mdb_get(txn, dbi, &k, &v), 0);
    assert_true(v.mv_size <= cap);
    memcpy(out, v.mv_data, v.mv_size);
    mdb_txn_abort(txn);
    mdb_env_close(env);
    return v.mv_size;
}

static void raw_put(const char *root, const char *db, const void *key, size_t klen, const void *val,
                    size_t vlen)
{
    MDB_env *env = raw_open(root, 0);
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_val k = {klen, (void *)key}, v = {vlen, (void *)val};
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, db, 0, &dbi), 0);
    assert_int_equal(mdb_put(txn, dbi, &k, &v, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
}

static void assert_msg_has(const ckpt_store *st, const char *needle)
{
    const char *m = ckpt_errmsg();
    if (strstr(m, needle) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", m, needle);
}

/* CRC-32C a bit at a time, straight from its definition: the reference
 * for the store's word-at-a-time code and its tails */
static uint32_t crc32c_bitwise(uint32_t c, const uint8_t *p, size_t n)
{
    c = ~c;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return ~c;
}

static void test_crc32c_vectors(void **state)
{
    (void)state;
    /* RFC 3720 (iSCSI) B.4 and the common check value */
    assert_int_equal(ckpt_crc32c(0, "123456789", 9), 0xE3069283u);
    uint8_t z[32] = {0}, o[32];
    memset(o, 0xff, sizeof o);
    assert_int_equal(ckpt_crc32c(0, z, 32), 0x8A9136AAu);
    assert_int_equal(ckpt_crc32c(0, o, 32), 0x62A8AB43u);
    /* in pieces as in one go, at every split and alignment */
    uint8_t buf[100];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 31 + 7);
    uint32_t whole = ckpt_crc32c(0, buf, sizeof buf);
    for (size_t cut = 0; cut <= sizeof buf; cut++)
        assert_int_equal(ckpt_crc32c(ckpt_crc32c(0, buf, cut), buf + cut, sizeof buf - cut), whole);
    /* a record's checksum covers its key's length: moving the boundary
     * between key and value changes it */
    assert_int_not_equal(ckpt_rec_csum("ab", 2, "cd", 2), ckpt_rec_csum("abc", 3, "d", 1));
    /* a key and value side by side (as in an LMDB node) sum as apart */
    uint8_t kv[60], ko[20], vo[40];
    memcpy(kv, buf, 60);
    memcpy(ko, buf, 20);
    memcpy(vo, buf + 20, 40);
    assert_int_equal(ckpt_rec_csum(kv, 20, kv + 20, 40), ckpt_rec_csum(ko, 20, vo, 40));
    assert_int_equal(ckpt_rec_csum(kv, 20, kv + 20, 40), ckpt_crc32c(ckpt_crc32c(0, "\0\x14", 2), buf, 60));
    /* against the bit-at-a-time reference: every length of key (up to
     * 511, the length prefix's both bytes) and value, side by side and
     * apart, at every alignment of the 8-byte steps and the 4-, 2- and
     * 1-byte tails */
    uint8_t big[600], kb[520], vb[80];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)(i * 131 + 17);
    for (size_t klen = 1; klen <= 511; klen += klen < 24 ? 1 : 37) {
        for (size_t vlen = 0; vlen <= 70; vlen++) {
            uint8_t kl[2] = {(uint8_t)(klen >> 8), (uint8_t)klen};
            uint32_t want = crc32c_bitwise(crc32c_bitwise(0, kl, 2), big + 3, klen + vlen);
            memcpy(kb, big + 3, klen);
            memcpy(vb, big + 3 + klen, vlen);
            assert_int_equal(ckpt_rec_csum(big + 3, klen, big + 3 + klen, vlen), want);
            assert_int_equal(ckpt_rec_csum(kb, klen, vb, vlen), want);
            assert_int_equal(ckpt_crc32c(0, big + 1, klen + vlen), crc32c_bitwise(0, big + 1, klen + vlen));
        }
    }
    /* every single-bit change of a record is caught */
    uint8_t rec[40 + CKPT_CSUM_LEN];
    memcpy(rec, buf, 40);
    ckpt_csum_seal("key", 3, rec, 40);
    assert_int_equal(ckpt_csum_check("key", 3, rec, sizeof rec, NULL, NULL), 0);
    for (size_t i = 0; i < sizeof rec * 8; i++) {
        rec[i / 8] ^= (uint8_t)(1u << (i % 8));
        assert_int_equal(ckpt_csum_check("key", 3, rec, sizeof rec, NULL, NULL), -1);
        rec[i / 8] ^= (uint8_t)(1u << (i % 8));
    }
    assert_int_equal(ckpt_csum_check("key", 3, rec, 3, NULL, NULL), -1); /* too short */
}

/* A store with two objects, a kvtag each, a membership; closed. */
static void make_store(const char *root, uint64_t *id1, uint64_t *id2)
{
    struct ckpt_store_opts o = stu_opts(root);
    ckpt_store *st = stu_open(&o);
    uint8_t rec[512];
    size_t n;
    stu_assert_rc(ckpt_store_next_id(id1, st), 0, st);
    stu_assert_rc(ckpt_store_next_id(id2, st), 0, st);
    n = stu_obj_rec(rec, sizeof rec, "first", 5, 0, 0, 1, 20);
    stu_assert_rc(ckpt_store_put_obj(st, *id1, "first", 5, 0, 0, rec, n), 0, st);
    n = stu_obj_rec(rec, sizeof rec, "second", 6, 0, 0, 2, 20);
    stu_assert_rc(ckpt_store_put_obj(st, *id2, "second", 6, 0, 0, rec, n), 0, st);
    n = stu_kvtag_rec(rec, sizeof rec, "color", 5, "red");
    stu_assert_rc(ckpt_store_put_kvtag(st, *id1, "color", 5, rec, n), 0, st);
    stu_assert_rc(ckpt_store_put_kvtag(st, *id2, "color", 5, rec, n), 0, st);
    stu_close(st);
}

static void test_values_carry_their_checksum(void **state)
{
    const char *root = stu_dir(state);
    uint64_t a, b;
    uint8_t k[8], raw[600], rec[512];
    make_store(root, &a, &b);
    size_t n = stu_obj_rec(rec, sizeof rec, "first", 5, 0, 0, 1, 20);
    ckpt_key_u64(k, a);
    size_t rn = raw_get(root, "obj", k, 8, raw, sizeof raw);
    assert_int_equal(rn, n + CKPT_CSUM_LEN);
    assert_memory_equal(raw, rec, n);
    assert_int_equal(ckpt_csum_check(k, 8, raw, rn, NULL, NULL), 0);
    /* the name index's id too */
    uint8_t nk[16];
    size_t nkl = ckpt_key_name(nk, "first", 5);
    ckpt_key_i32(nk + nkl, 0);
    rn = raw_get(root, "obj_name", nk, nkl + 4, raw, sizeof raw);
    assert_int_equal(rn, 8 + CKPT_CSUM_LEN);
    assert_int_equal(ckpt_key_get_u64(raw), a);
    assert_int_equal(ckpt_csum_check(nk, nkl + 4, raw, rn, NULL, NULL), 0);
    /* and reads see the record without it */
    ckpt_store *st;
    ckpt_rtxn *tx;
    ckpt_val v;
    stu_assert_rc(ckpt_store_open_readonly(&st, root, 0), 0, NULL);
    assert_true(ckpt_store_has_checksums(st));
    assert_int_equal(stu_info(st).format_version, CKPT_FORMAT_VERSION);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_get_obj(&v, tx, a), 0, st);
    assert_int_equal(v.len, n);
    assert_memory_equal(v.data, rec, n);
    uint64_t id = 0;
    stu_assert_rc(ckpt_get_obj_by_name(&id, &v, tx, "first", 5, 0), 0, st);
    assert_int_equal(id, a);
    ckpt_rtxn_end(tx);
    ckpt_store_close(st);
}

struct damage_log {
    int n, db;
    char key[64];
    size_t klen;
    char what[200];
};

static void on_damage(int db, const ckpt_val *key, const char *what, void *arg)
{
    struct damage_log *l = arg;
    l->n++;
    l->db = db;
    l->klen = key->len < sizeof l->key ? key->len : sizeof l->key;
    memcpy(l->key, key->data, l->klen);
    snprintf(l->what, sizeof l->what, "%s", what);
}

static int count_cb(const ckpt_val *k, const ckpt_val *v, void *p)
{
    (void)k;
    (void)v;
    (*(int *)p)++;
    return 0;
}

static void test_changed_value_is_refused_never_served(void **state)
{
    const char *root = stu_dir(state);
    uint64_t a, b;
    uint8_t k[8], raw[600];
    make_store(root, &a, &b);
    ckpt_key_u64(k, a);
    size_t rn = raw_get(root, "obj", k, 8, raw, sizeof raw);
    raw[rn / 2] ^= 0x10; /* one bit, the checksum left as it was */
    raw_put(root, "obj", k, 8, raw, rn);

    ckpt_store *st;
    ckpt_rtxn *tx;
    ckpt_val v;
    int n = 0;
    char hex[20];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)a);
    stu_assert_rc(ckpt_store_open_readonly(&st, root, 0), 0, NULL);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_get_obj(&v, tx, a), CKPT_E_CORRUPT, st);
    assert_msg_has(st, "rank 0, database obj, key");
    assert_msg_has(st, hex);
    assert_msg_has(st, "checksum mismatch");
    assert_msg_has(st, "rank-0/data.mdb");
    uint64_t id;
    stu_assert_rc(ckpt_get_obj_by_name(&id, &v, tx, "first", 5, 0), CKPT_E_CORRUPT, st);
    stu_assert_rc(ckpt_get_obj(&v, tx, b), 0, st); /* the other is fine */
    /* an iteration stops at it */
    stu_assert_rc(ckpt_iter(tx, CKPT_DB_OBJ, NULL, 0, count_cb, &n), CKPT_E_CORRUPT, st);
    assert_int_equal(n, 0);
    /* skip-and-report: the rest, and exactly this record named */
    struct damage_log l = {0};
    ckpt_rtxn_on_damage(tx, on_damage, &l);
    n = 0;
    stu_assert_rc(ckpt_iter(tx, CKPT_DB_OBJ, NULL, 0, count_cb, &n), 0, st);
    assert_int_equal(n, 1);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.db, CKPT_DB_OBJ);
    assert_int_equal(l.klen, 8);
    assert_memory_equal(l.key, k, 8);
    assert_non_null(strstr(l.what, "checksum mismatch"));
    /* lookups still refuse it */
    stu_assert_rc(ckpt_get_obj(&v, tx, a), CKPT_E_CORRUPT, st);
    ckpt_rtxn_on_damage(tx, NULL, NULL);
    n = 0;
    stu_assert_rc(ckpt_iter(tx, CKPT_DB_OBJ, NULL, 0, count_cb, &n), CKPT_E_CORRUPT, st);
    ckpt_rtxn_end(tx);
    ckpt_store_close(st);

    /* a value cut shorter than a checksum */
    raw_put(root, "obj", k, 8, raw, 2);
    stu_assert_rc(ckpt_store_open_readonly(&st, root, 0), 0, NULL);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_get_obj(&v, tx, a), CKPT_E_CORRUPT, st);
    assert_msg_has(st, "too short for its checksum");
    ckpt_rtxn_end(tx);
    ckpt_store_close(st);
}

static void test_changed_key_is_found_by_iteration(void **state)
{
    const char *root = stu_dir(state);
    uint64_t a, b;
    uint8_t k[8], k2[8], raw[600];
    make_store(root, &a, &b);
    ckpt_key_u64(k, a);
    size_t rn = raw_get(root, "obj", k, 8, raw, sizeof raw);
    /* the same value under another key (a flipped key bit) */
    ckpt_key_u64(k2, a ^ 0x100);
    raw_put(root, "obj", k2, 8, raw, rn);
    ckpt_store *st;
    ckpt_rtxn *tx;
    ckpt_val v;
    int n = 0;
    stu_assert_rc(ckpt_store_open_readonly(&st, root, 0), 0, NULL);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_get_obj(&v, tx, a ^ 0x100), CKPT_E_CORRUPT, st);
    stu_assert_rc(ckpt_iter(tx, CKPT_DB_OBJ, NULL, 0, count_cb, &n), CKPT_E_CORRUPT, st);
    ckpt_rtxn_end(tx);
    ckpt_store_close(st);
}

static void test_tag_index_is_checked_against_kvtags(void **state)
{
    const char *root = stu_dir(state);
    uint64_t a, b;
    make_store(root, &a, &b);
    struct ckpt_store_opts o = stu_opts(root);
    ckpt_store *st = stu_open(&o);
    stu_assert_rc(ckpt_store_merge_tags(st), 0, st);
    stu_close(st);
    /* an index entry whose owner has no such kvtag (a flipped owner) */
    MDB_env *env = raw_open(root, 0);
    MDB_txn *txn;
    MDB_dbi dbi;
    uint8_t nk[16], own[8];
    size_t nkl = ckpt_key_name(nk, "color", 5);
    ckpt_key_u64(own, b + 1);
    MDB_val kk = {nkl, nk}, vv = {8, own};
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "kvtag_name", MDB_DUPSORT | MDB_DUPFIXED, &dbi), 0);
    assert_int_equal(mdb_put(txn, dbi, &kk, &vv, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);

    ckpt_rtxn *tx;
    ckpt_val v;
    int n = 0;
    uint8_t lk[24];
    memcpy(lk, nk, nkl);
    memcpy(lk + nkl, own, 8);
    stu_assert_rc(ckpt_store_open_readonly(&st, root, 0), 0, NULL);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_iter_tagged(tx, "color", 5, count_cb, &n), CKPT_E_CORRUPT, st);
    assert_msg_has(st, "database kvtag_name");
    assert_msg_has(st, "has no such kvtag");
    assert_int_equal(n, 2); /* the two real owners came first */
    stu_assert_rc(ckpt_get_raw(&v, tx, CKPT_DB_TAG_INDEX, lk, nkl + 8), CKPT_E_CORRUPT, st);
    lk[nkl + 7] = (uint8_t)a; /* a real owner */
    ckpt_key_u64(lk + nkl, a);
    stu_assert_rc(ckpt_get_raw(&v, tx, CKPT_DB_TAG_INDEX, lk, nkl + 8), 0, st);
    struct damage_log l = {0};
    ckpt_rtxn_on_damage(tx, on_damage, &l);
    n = 0;
    stu_assert_rc(ckpt_iter_tagged(tx, "color", 5, count_cb, &n), 0, st);
    assert_int_equal(n, 2);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.db, CKPT_DB_TAG_INDEX);
    ckpt_rtxn_end(tx);
    ckpt_store_close(st);
}

static void test_damaged_meta_record_is_refused(void **state)
{
    const char *root = stu_dir(state);
    uint64_t a, b;
    uint8_t raw[600];
    make_store(root, &a, &b);
    size_t rn = raw_get(root, "meta", "meta", 4, raw, sizeof raw);
    assert_int_equal(ckpt_csum_check("meta", 4, raw, rn, NULL, NULL), 0);
    for (int ro = 0; ro <= 1; ro++) {
        ckpt_store *st = NULL;
        struct ckpt_store_opts o = stu_opts(root);
        o.readonly = ro;
        /* one bit of the record */
        raw[10] ^= 1;
        raw_put(root, "meta", "meta", 4, raw, rn);
        stu_assert_rc(ckpt_store_open(&st, &o), CKPT_E_CORRUPT, NULL);
        assert_msg_has(NULL, "database meta");
        raw[10] ^= 1;
        /* the checksum cut off: a format 4 record without one */
        raw_put(root, "meta", "meta", 4, raw, rn - CKPT_CSUM_LEN);
        stu_assert_rc(ckpt_store_open(&st, &o), CKPT_E_CORRUPT, NULL);
        /* the record under a damaged key */
        raw_put(root, "meta", "meta", 4, raw, rn);
        MDB_env *env = raw_open(root, 0);
        MDB_txn *txn;
        MDB_dbi dbi;
        MDB_val k = {4, "meta"}, k2 = {4, "mdta"}, v = {rn, raw};
        assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
        assert_int_equal(mdb_dbi_open(txn, "meta", 0, &dbi), 0);
        assert_int_equal(mdb_del(txn, dbi, &k, NULL), 0);
        assert_int_equal(mdb_put(txn, dbi, &k2, &v, 0), 0);
        assert_int_equal(mdb_txn_commit(txn), 0);
        mdb_env_close(env);
        stu_assert_rc(ckpt_store_open(&st, &o), CKPT_E_CORRUPT, NULL);
        assert_msg_has(NULL, "damaged key");
        env = raw_open(root, 0);
        assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
        assert_int_equal(mdb_dbi_open(txn, "meta", 0, &dbi), 0);
        assert_int_equal(mdb_del(txn, dbi, &k2, NULL), 0);
        assert_int_equal(mdb_put(txn, dbi, &k, &v, 0), 0);
        assert_int_equal(mdb_txn_commit(txn), 0);
        mdb_env_close(env);
        /* restored: it opens */
        stu_assert_rc(ckpt_store_open(&st, &o), 0, NULL);
        stu_close(st);
        rn = raw_get(root, "meta", "meta", 4, raw, sizeof raw);
    }
}

static void test_damaged_delta_chunk_is_not_merged(void **state)
{
    const char *root = stu_dir(state);
    uint64_t a, b;
    make_store(root, &a, &b); /* close never merges: the delta holds the tags */
    MDB_env *env = raw_open(root, 0);
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_cursor *cur;
    MDB_val k, v;
    uint8_t buf[4096], kb[8];
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "kvtag_delta", 0, &dbi), 0);
    assert_int_equal(mdb_cursor_open(txn, dbi, &cur), 0);
    assert_int_equal(mdb_cursor_get(cur, &k, &v, MDB_FIRST), 0);
    assert_true(v.mv_size <= sizeof buf);
    assert_int_equal(ckpt_csum_check(k.mv_data, 8, v.mv_data, v.mv_size, NULL, NULL), 0);
    memcpy(kb, k.mv_data, 8);
    memcpy(buf, v.mv_data, v.mv_size);
    size_t vn = v.mv_size;
    mdb_cursor_close(cur);
    buf[vn - CKPT_CSUM_LEN - 1] ^= 4; /* a byte of the last entry's key */
    MDB_val k2 = {8, kb}, v2 = {vn, buf};
    assert_int_equal(mdb_put(txn, dbi, &k2, &v2, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);

    ckpt_store *st = NULL;
    ckpt_rtxn *tx;
    int n = 0;
    struct ckpt_store_opts o = stu_opts(root);
    /* a writer opens, but its merge refuses the chunk */
    stu_assert_rc(ckpt_store_open(&st, &o), 0, NULL);
    stu_assert_rc(ckpt_store_merge_tags(st), CKPT_E_CORRUPT, st);
    assert_msg_has(st, "kvtag_delta");
    assert_msg_has(st, "checksum mismatch");
    stu_close(st);
    stu_assert_rc(ckpt_store_open_readonly(&st, root, 0), 0, NULL);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_iter_tagged(tx, "color", 5, count_cb, &n), CKPT_E_CORRUPT, st);
    assert_msg_has(st, "rank 0, reading kvtag_delta");
    ckpt_rtxn_end(tx);
    ckpt_store_close(st);
}

static void test_checksums_off_creates_format_3(void **state)
{
    const char *root = stu_dir(state);
    uint64_t a, b;
    uint8_t k[8], raw[600], rec[512];
    setenv("PDC_CKPT_CHECKSUMS", "0", 1);
    make_store(root, &a, &b);
    unsetenv("PDC_CKPT_CHECKSUMS");
    size_t n = stu_obj_rec(rec, sizeof rec, "first", 5, 0, 0, 1, 20);
    ckpt_key_u64(k, a);
    assert_int_equal(raw_get(root, "obj", k, 8, raw, sizeof raw), n);
    ckpt_store *st;
    stu_assert_rc(ckpt_store_open_readonly(&st, root, 0), 0, NULL);
    assert_false(ckpt_store_has_checksums(st));
    assert_int_equal(stu_info(st).format_version, 3);
    ckpt_store_close(st);
    /* a writer (checksums on) keeps it format 3, and writes no checksums */
    struct ckpt_store_opts o = stu_opts(root);
    st = stu_open(&o);
    assert_false(ckpt_store_has_checksums(st));
    n = stu_obj_rec(rec, sizeof rec, "third", 5, 0, 0, 3, 0);
    stu_assert_rc(ckpt_store_put_obj(st, a + 10, "third", 5, 0, 0, rec, n), 0, st);
    assert_int_equal(stu_info(st).format_version, 3);
    stu_close(st);
    ckpt_key_u64(k, a + 10);
    assert_int_equal(raw_get(root, "obj", k, 8, raw, sizeof raw), n);

    /* the compacting copy writes it out in format 5 (the plain one is the
     * file as it is) */
    for (int compact = 1; compact <= 1; compact++) {
        char dst[1024], croot[1024];
        ckpt_rtxn *tx;
        ckpt_val v;
        int cnt = 0;
        stu_path(croot, sizeof croot, root, compact ? "copy-c" : "copy-p");
        stu_path(dst, sizeof dst, croot, "rank-0");
        /* format 5's record keys come from the records: the copy reads
         * them with rec_keys, and without it says what it needs */
        stu_assert_rc(ckpt_store_open_readonly(&st, root, 0), 0, NULL);
        stu_assert_rc(ckpt_store_copy(st, dst, compact), CKPT_E_INVAL, st);
        assert_msg_has(st, "rec_keys");
        ckpt_store_close(st);
        struct ckpt_store_opts ro = stu_opts(root);
        ro.readonly = 1;
        stu_assert_rc(ckpt_store_open(&st, &ro), 0, NULL);
        stu_assert_rc(ckpt_store_copy(st, dst, compact), 0, st);
        ckpt_store_close(st);
        stu_assert_rc(ckpt_store_open_readonly(&st, croot, 0), 0, NULL);
        assert_true(ckpt_store_has_checksums(st));
        assert_int_equal(stu_info(st).format_version, CKPT_FORMAT_VERSION);
        stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
        stu_assert_rc(ckpt_get_obj(&v, tx, a + 10), 0, st);
        assert_int_equal(v.len, n);
        assert_memory_equal(v.data, rec, n);
        stu_assert_rc(ckpt_iter_tagged(tx, "color", 5, count_cb, &cnt), 0, st);
        assert_int_equal(cnt, 2);
        ckpt_rtxn_end(tx);
        ckpt_store_close(st);
        ckpt_key_u64(k, a + 10);
        size_t rn = raw_get(croot, "obj", k, 8, raw, sizeof raw);
        assert_int_equal(rn, n + CKPT_CSUM_LEN);
        assert_int_equal(ckpt_csum_check(k, 8, raw, rn, NULL, NULL), 0);
    }
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, stu_setup, stu_teardown)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c_vectors),
        T(test_values_carry_their_checksum),
        T(test_changed_value_is_refused_never_served),
        T(test_changed_key_is_found_by_iteration),
        T(test_tag_index_is_checked_against_kvtags),
        T(test_damaged_meta_record_is_refused),
        T(test_damaged_delta_chunk_is_not_merged),
        T(test_checksums_off_creates_format_3),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
