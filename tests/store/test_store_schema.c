/*
 * test_store_schema.c - every database of the schema through the public
 * API: objects (with their name index and the cascade of del_obj), kvtags
 * and the tag index, containers and their member lists, regions, raw
 * put/get/delete; key order of every database; long names (inline, hashed,
 * shared prefixes, too long, embedded NUL).
 */
#include "store_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { REC_CAP = 8192 };

static ckpt_store *open_manual(void **state)
{
    struct ckpt_store_opts o = stu_opts(stu_dir(state));
    o.commit_every = 0;
    o.commit_ms = 0;
    return stu_open(&o);
}

static void put_obj(ckpt_store *st, uint64_t id, const char *name, int32_t ts, uint64_t cont)
{
    uint8_t rec[REC_CAP];
    size_t len = stu_obj_rec(rec, sizeof rec, name, strlen(name), ts, cont, id, 0);
    stu_assert_rc(ckpt_store_put_obj(st, id, name, strlen(name), ts, cont, rec, len), 0, st);
}

static void put_tag(ckpt_store *st, uint64_t owner, const char *name, const char *value)
{
    uint8_t rec[REC_CAP];
    size_t len = stu_kvtag_rec(rec, sizeof rec, name, strlen(name), value);
    stu_assert_rc(ckpt_store_put_kvtag(st, owner, name, strlen(name), rec, len), 0, st);
}

static void put_cont(ckpt_store *st, uint64_t id, const char *name)
{
    uint8_t rec[REC_CAP];
    size_t len = stu_cont_rec(rec, sizeof rec, name, strlen(name), id);
    stu_assert_rc(ckpt_store_put_cont(st, id, name, strlen(name), rec, len), 0, st);
}

static void checkpoint(ckpt_store *st)
{
    stu_assert_rc(ckpt_store_checkpoint(st), 0, st);
    assert_int_equal(ckpt_store_pending(st), 0);
}

/* Ids in the last 8 bytes of each key (tag index, member lists). */
static void assert_trailing_ids(const struct stu_list *l, const uint64_t *ids, size_t n)
{
    if (l->n != n)
        fail_msg("%zu entries, expected %zu", l->n, n);
    for (size_t i = 0; i < n; i++) {
        assert_true(l->e[i].klen >= 8);
        assert_int_equal(ckpt_key_get_u64(l->e[i].key + l->e[i].klen - 8), ids[i]);
    }
}

static void tagged(struct stu_list *out, ckpt_store *st, const char *name, size_t nlen)
{
    ckpt_rtxn *tx;
    memset(out, 0, sizeof *out);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_iter_tagged(tx, name, nlen, stu_collect, out), 0, st);
    ckpt_rtxn_end(tx);
    stu_assert_ascending(out);
}

static void kvtags_of(struct stu_list *out, ckpt_store *st, uint64_t owner)
{
    ckpt_rtxn *tx;
    memset(out, 0, sizeof *out);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_iter_kvtags(tx, owner, stu_collect, out), 0, st);
    ckpt_rtxn_end(tx);
    stu_assert_ascending(out);
}

static void members_of(struct stu_list *out, ckpt_store *st, uint64_t cont)
{
    ckpt_rtxn *tx;
    memset(out, 0, sizeof *out);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_iter_members(tx, cont, stu_collect, out), 0, st);
    ckpt_rtxn_end(tx);
    stu_assert_ascending(out);
}

static void regions_of(struct stu_list *out, ckpt_store *st, uint64_t obj)
{
    ckpt_rtxn *tx;
    memset(out, 0, sizeof *out);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_iter_regions(tx, obj, stu_collect, out), 0, st);
    ckpt_rtxn_end(tx);
    stu_assert_ascending(out);
}

/* Result of a name lookup: 0 and the id, or the error. */
static int obj_by_name(ckpt_store *st, const char *name, size_t nlen, int32_t ts, uint64_t *id)
{
    ckpt_rtxn *tx;
    ckpt_val rec;
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    int rc = ckpt_get_obj_by_name(id, &rec, tx, name, nlen, ts);
    if (rc == 0) {
        const char *s;
        size_t slen;
        uint64_t seq;
        assert_int_equal(stu_rec_str(&rec, "obj_name", &s, &slen), 0);
        assert_int_equal(slen, nlen);
        assert_memory_equal(s, name, nlen);
        assert_int_equal(stu_rec_u64(&rec, "seq", &seq), 0);
        assert_int_equal(seq, *id);
    }
    ckpt_rtxn_end(tx);
    return rc;
}

static int cont_by_name(ckpt_store *st, const char *name, size_t nlen, uint64_t *id)
{
    ckpt_rtxn *tx;
    ckpt_val rec;
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    int rc = ckpt_get_cont_by_name(id, &rec, tx, name, nlen);
    if (rc == 0) {
        const char *s;
        size_t slen;
        assert_int_equal(stu_rec_str(&rec, "cont_name", &s, &slen), 0);
        assert_int_equal(slen, nlen);
        assert_memory_equal(s, name, nlen);
    }
    ckpt_rtxn_end(tx);
    return rc;
}

static int get_tag(ckpt_store *st, uint64_t owner, const char *name, size_t nlen,
                   const char **value_out)
{
    static char value[256];
    ckpt_rtxn *tx;
    ckpt_val rec;
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    int rc = ckpt_get_kvtag(&rec, tx, owner, name, nlen);
    if (rc == 0) {
        const char *s;
        size_t slen;
        assert_int_equal(stu_rec_str(&rec, "name", &s, &slen), 0);
        assert_int_equal(slen, nlen);
        assert_memory_equal(s, name, nlen);
        assert_int_equal(stu_rec_str(&rec, "value", &s, &slen), 0);
        assert_true(slen < sizeof value);
        memcpy(value, s, slen);
        value[slen] = 0;
        if (value_out)
            *value_out = value;
    }
    ckpt_rtxn_end(tx);
    return rc;
}

static int has_obj(ckpt_store *st, uint64_t id)
{
    ckpt_rtxn *tx;
    ckpt_val rec;
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    int rc = ckpt_get_obj(&rec, tx, id);
    ckpt_rtxn_end(tx);
    assert_true(rc == 0 || rc == CKPT_E_NOTFOUND);
    return rc == 0;
}

static int has_cont(ckpt_store *st, uint64_t id)
{
    ckpt_rtxn *tx;
    ckpt_val rec;
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    int rc = ckpt_get_cont(&rec, tx, id);
    ckpt_rtxn_end(tx);
    assert_true(rc == 0 || rc == CKPT_E_NOTFOUND);
    return rc == 0;
}

/* ---- objects ---- */

static void test_obj_put_get_and_lookup_by_name(void **state)
{
    ckpt_store *st = open_manual(state);
    uint8_t rec[REC_CAP];
    size_t len = stu_obj_rec(rec, sizeof rec, "alpha", 5, 3, 0, 1001, 0);
    stu_assert_rc(ckpt_store_put_obj(st, 1001, "alpha", 5, 3, 0, rec, len), 0, st);
    put_obj(st, 1002, "alpha", 4, 0); /* same name, another time step */
    put_obj(st, 1003, "beta", 3, 0);
    checkpoint(st);

    ckpt_rtxn *tx;
    ckpt_val v;
    uint64_t id = 0;
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_get_obj(&v, tx, 1001), 0, st);
    assert_int_equal(v.len, len);
    assert_memory_equal(v.data, rec, len);
    stu_assert_rc(ckpt_get_obj_by_name(&id, &v, tx, "alpha", 5, 3), 0, st);
    assert_int_equal(id, 1001);
    assert_int_equal(v.len, len);
    assert_memory_equal(v.data, rec, len);
    /* either output may be NULL */
    stu_assert_rc(ckpt_get_obj_by_name(NULL, NULL, tx, "alpha", 5, 4), 0, st);
    stu_assert_rc(ckpt_get_obj_by_name(&id, NULL, tx, "alpha", 5, 4), 0, st);
    assert_int_equal(id, 1002);
    stu_assert_rc(ckpt_get_obj_by_name(&id, &v, tx, "alpha", 5, 5), CKPT_E_NOTFOUND, st);
    stu_assert_rc(ckpt_get_obj_by_name(&id, &v, tx, "alph", 4, 3), CKPT_E_NOTFOUND, st);
    stu_assert_rc(ckpt_get_obj_by_name(&id, &v, tx, "alphab", 6, 3), CKPT_E_NOTFOUND, st);
    stu_assert_rc(ckpt_get_obj(&v, tx, 999), CKPT_E_NOTFOUND, st);
    stu_assert_rc(ckpt_get_obj(NULL, tx, 1001), CKPT_E_INVAL, st);
    stu_assert_rc(ckpt_get_obj(&v, NULL, 1001), CKPT_E_INVAL, st);
    ckpt_rtxn_end(tx);
    assert_int_equal(stu_count(st, CKPT_DB_OBJ), 3);
    assert_int_equal(stu_count(st, CKPT_DB_OBJ_NAME), 3);

    /* overwrite with the same name: record replaced, one index entry */
    len = stu_obj_rec(rec, sizeof rec, "alpha", 5, 3, 0, 1001, 17);
    stu_assert_rc(ckpt_store_put_obj(st, 1001, "alpha", 5, 3, 0, rec, len), 0, st);
    checkpoint(st);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_get_obj_by_name(&id, &v, tx, "alpha", 5, 3), 0, st);
    assert_int_equal(v.len, len);
    assert_memory_equal(v.data, rec, len);
    ckpt_rtxn_end(tx);
    assert_int_equal(stu_count(st, CKPT_DB_OBJ_NAME), 3);
    stu_close(st);
}

static void test_obj_rename_removes_old_name_entry(void **state)
{
    ckpt_store *st = open_manual(state);
    uint64_t id = 0;
    put_obj(st, 1001, "old-name", 3, 0);
    put_obj(st, 1002, "other", 3, 0);
    checkpoint(st);
    assert_int_equal(obj_by_name(st, "old-name", 8, 3, &id), 0);
    assert_int_equal(id, 1001);

    put_obj(st, 1001, "new-name", 3, 0);
    checkpoint(st);
    assert_int_equal(obj_by_name(st, "old-name", 8, 3, &id), CKPT_E_NOTFOUND);
    assert_int_equal(obj_by_name(st, "new-name", 8, 3, &id), 0);
    assert_int_equal(id, 1001);
    assert_int_equal(stu_count(st, CKPT_DB_OBJ_NAME), 2);

    /* a new time step alone is a rename too */
    put_obj(st, 1001, "new-name", 4, 0);
    checkpoint(st);
    assert_int_equal(obj_by_name(st, "new-name", 8, 3, &id), CKPT_E_NOTFOUND);
    assert_int_equal(obj_by_name(st, "new-name", 8, 4, &id), 0);
    assert_int_equal(id, 1001);
    assert_int_equal(stu_count(st, CKPT_DB_OBJ_NAME), 2);

    /* put and rename within one batch */
    put_obj(st, 1003, "first", 0, 0);
    put_obj(st, 1003, "second", 0, 0);
    checkpoint(st);
    assert_int_equal(obj_by_name(st, "first", 5, 0, &id), CKPT_E_NOTFOUND);
    assert_int_equal(obj_by_name(st, "second", 6, 0, &id), 0);
    assert_int_equal(id, 1003);
    assert_int_equal(stu_count(st, CKPT_DB_OBJ_NAME), 3);

    /* the untouched object keeps its entry */
    assert_int_equal(obj_by_name(st, "other", 5, 3, &id), 0);
    assert_int_equal(id, 1002);

    /* a name entry taken over by another id survives the renaming and the
     * deletion of the id that had it first */
    put_obj(st, 1004, "shared", 0, 0);
    put_obj(st, 1005, "shared", 0, 0);
    checkpoint(st);
    assert_int_equal(obj_by_name(st, "shared", 6, 0, &id), 0);
    assert_int_equal(id, 1005);
    put_obj(st, 1004, "moved", 0, 0);
    checkpoint(st);
    assert_int_equal(obj_by_name(st, "shared", 6, 0, &id), 0);
    assert_int_equal(id, 1005);
    put_obj(st, 1006, "shared2", 0, 0);
    put_obj(st, 1007, "shared2", 0, 0);
    stu_assert_rc(ckpt_store_del_obj(st, 1006), 0, st);
    checkpoint(st);
    assert_int_equal(obj_by_name(st, "shared2", 7, 0, &id), 0);
    assert_int_equal(id, 1007);
    stu_close(st);
}

static void test_obj_delete_cascades(void **state)
{
    ckpt_store *st = open_manual(state);
    const uint64_t A = 1001, B = 1002, C = 5001;
    const uint64_t start[2] = {0, 0}, count[2] = {8, 8}, start2[2] = {8, 0};
    uint64_t id;
    struct stu_list l;

    put_cont(st, C, "cont");
    put_obj(st, A, "obj-a", 1, C);
    put_obj(st, B, "obj-b", 1, C);
    const uint64_t both[2] = {A, B};
    stu_assert_rc(ckpt_store_cont_add(st, C, both, 2), 0, st);
    put_tag(st, A, "t1", "a1");
    put_tag(st, A, "t2", "a2");
    put_tag(st, B, "t1", "b1");
    stu_assert_rc(ckpt_store_put_region(st, A, 2, start, count, "r1", 2), 0, st);
    stu_assert_rc(ckpt_store_put_region(st, A, 2, start2, count, "r2", 2), 0, st);
    stu_assert_rc(ckpt_store_put_region(st, B, 2, start, count, "rb", 2), 0, st);
    checkpoint(st);

    members_of(&l, st, C);
    assert_trailing_ids(&l, both, 2);
    stu_list_free(&l);
    tagged(&l, st, "t1", 2);
    assert_trailing_ids(&l, both, 2);
    stu_list_free(&l);

    stu_assert_rc(ckpt_store_del_obj(st, A), 0, st);
    checkpoint(st);
    assert_false(has_obj(st, A));
    assert_true(has_obj(st, B));
    assert_int_equal(obj_by_name(st, "obj-a", 5, 1, &id), CKPT_E_NOTFOUND);
    assert_int_equal(obj_by_name(st, "obj-b", 5, 1, &id), 0);
    assert_int_equal(stu_count(st, CKPT_DB_OBJ_NAME), 1);
    kvtags_of(&l, st, A);
    assert_int_equal(l.n, 0);
    stu_list_free(&l);
    assert_int_equal(get_tag(st, A, "t1", 2, NULL), CKPT_E_NOTFOUND);
    tagged(&l, st, "t1", 2);
    assert_trailing_ids(&l, &B, 1);
    stu_list_free(&l);
    tagged(&l, st, "t2", 2);
    assert_int_equal(l.n, 0);
    stu_list_free(&l);
    regions_of(&l, st, A);
    assert_int_equal(l.n, 0);
    stu_list_free(&l);
    regions_of(&l, st, B);
    assert_int_equal(l.n, 1);
    stu_list_free(&l);
    members_of(&l, st, C);
    assert_trailing_ids(&l, &B, 1);
    stu_list_free(&l);
    assert_true(has_cont(st, C));
    assert_int_equal(stu_count(st, CKPT_DB_KVTAG), 1);
    assert_int_equal(stu_count(st, CKPT_DB_TAG_INDEX), 1);
    assert_int_equal(stu_count(st, CKPT_DB_REGION), 1);

    /* deleting a missing id is not an error; nor deleting twice */
    stu_assert_rc(ckpt_store_del_obj(st, A), 0, st);
    stu_assert_rc(ckpt_store_del_obj(st, 424242), 0, st);
    checkpoint(st);
    assert_true(has_obj(st, B));
    stu_close(st);
}

/* ---- kvtags ---- */

static void test_kvtag_put_get_delete_and_key_order(void **state)
{
    ckpt_store *st = open_manual(state);
    static const char *const names[] = {"zeta", "alpha", "mid", "ab", "a", "b"};
    static const char *const sorted[] = {"a", "ab", "alpha", "b", "mid", "zeta"};
    const char *value;
    struct stu_list l;
    for (size_t i = 0; i < 6; i++)
        put_tag(st, 5, names[i], names[i]);
    put_tag(st, 4, "a", "four");
    put_tag(st, 6, "zeta", "six");
    checkpoint(st);

    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(get_tag(st, 5, names[i], strlen(names[i]), &value), 0);
        assert_string_equal(value, names[i]);
    }
    assert_int_equal(get_tag(st, 5, "zet", 3, NULL), CKPT_E_NOTFOUND);
    assert_int_equal(get_tag(st, 7, "a", 1, NULL), CKPT_E_NOTFOUND);

    kvtags_of(&l, st, 5);
    assert_int_equal(l.n, 6);
    for (size_t i = 0; i < 6; i++) {
        size_t n = strlen(sorted[i]);
        assert_int_equal(l.e[i].klen, 8 + n + 1);
        assert_int_equal(ckpt_key_get_u64(l.e[i].key), 5);
        assert_memory_equal(l.e[i].key + 8, sorted[i], n + 1);
    }
    stu_list_free(&l);

    /* overwrite */
    put_tag(st, 5, "mid", "changed");
    checkpoint(st);
    assert_int_equal(get_tag(st, 5, "mid", 3, &value), 0);
    assert_string_equal(value, "changed");
    assert_int_equal(stu_count(st, CKPT_DB_KVTAG), 8);
    assert_int_equal(stu_count(st, CKPT_DB_TAG_INDEX), 8);

    /* delete */
    stu_assert_rc(ckpt_store_del_kvtag(st, 5, "mid", 3), 0, st);
    stu_assert_rc(ckpt_store_del_kvtag(st, 5, "not-there", 9), 0, st);
    checkpoint(st);
    assert_int_equal(get_tag(st, 5, "mid", 3, NULL), CKPT_E_NOTFOUND);
    kvtags_of(&l, st, 5);
    assert_int_equal(l.n, 5);
    stu_list_free(&l);
    tagged(&l, st, "mid", 3);
    assert_int_equal(l.n, 0);
    stu_list_free(&l);
    assert_int_equal(stu_count(st, CKPT_DB_KVTAG), 7);
    assert_int_equal(stu_count(st, CKPT_DB_TAG_INDEX), 7);

    /* other owners untouched */
    kvtags_of(&l, st, 6);
    assert_int_equal(l.n, 1);
    stu_list_free(&l);
    stu_close(st);
}

static void test_iter_tagged_finds_exactly_the_owners(void **state)
{
    ckpt_store *st = open_manual(state);
    struct stu_list l;
    /* "a" on 3, 1, 2^32+1; "ab" on 2, 4; "b" on 1; "a" also on a container */
    put_tag(st, 3, "a", "x");
    put_tag(st, 1, "a", "x");
    put_tag(st, (1ull << 32) + 1, "a", "x");
    put_tag(st, 2, "ab", "x");
    put_tag(st, 4, "ab", "x");
    put_tag(st, 1, "b", "x");
    put_tag(st, 2, "A", "x");
    checkpoint(st);

    const uint64_t want_a[] = {1, 3, (1ull << 32) + 1};
    tagged(&l, st, "a", 1);
    assert_trailing_ids(&l, want_a, 3);
    for (size_t i = 0; i < l.n; i++) {
        assert_int_equal(l.e[i].klen, 2 + 8);
        assert_memory_equal(l.e[i].key, "a", 2);
        assert_int_equal(l.e[i].vlen, 0);
    }
    stu_list_free(&l);
    const uint64_t want_ab[] = {2, 4};
    tagged(&l, st, "ab", 2);
    assert_trailing_ids(&l, want_ab, 2);
    stu_list_free(&l);
    const uint64_t want_b[] = {1};
    tagged(&l, st, "b", 1);
    assert_trailing_ids(&l, want_b, 1);
    stu_list_free(&l);
    tagged(&l, st, "", 0);
    assert_int_equal(l.n, 0);
    stu_list_free(&l);
    tagged(&l, st, "abc", 3);
    assert_int_equal(l.n, 0);
    stu_list_free(&l);

    /* deleting one owner's tag removes exactly its index entry */
    stu_assert_rc(ckpt_store_del_kvtag(st, 3, "a", 1), 0, st);
    checkpoint(st);
    const uint64_t want_a2[] = {1, (1ull << 32) + 1};
    tagged(&l, st, "a", 1);
    assert_trailing_ids(&l, want_a2, 2);
    stu_list_free(&l);

    /* bad names */
    ckpt_rtxn *tx;
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    assert_int_equal(ckpt_iter_tagged(tx, NULL, 0, stu_collect, &l), CKPT_E_INVAL);
    assert_int_equal(ckpt_iter_tagged(tx, "a\0b", 3, stu_collect, &l), CKPT_E_INVAL);
    ckpt_rtxn_end(tx);
    stu_close(st);
}

/* A commit puts a run's tag-index entries in index order, remembering each
 * name's largest owner (ckpt_tagidx_put_next): owners below, between and
 * above the stored ones, a repeated owner, a new name, and a raw entry whose
 * name part is longer than any name key must all land exactly once. */
static void test_tag_index_run_below_between_and_above_stored_owners(void **state)
{
    /* raw tag-index entries that no kvtag backs: format 3's plumbing (in
     * format 4 a read refuses them as damage: test_store_checksum) */
    setenv("PDC_CKPT_CHECKSUMS", "0", 1);
    ckpt_store *st = open_manual(state);
    unsetenv("PDC_CKPT_CHECKSUMS");
    struct stu_list l;
    put_tag(st, 10, "n", "x");
    put_tag(st, 20, "n", "x");
    put_tag(st, 30, "n", "x");
    checkpoint(st);

    /* one run of kvtag puts, in no particular order */
    put_tag(st, 60, "n", "x");
    put_tag(st, 25, "n", "x");
    put_tag(st, 50, "m", "x");
    put_tag(st, 40, "n", "x");
    put_tag(st, 5, "n", "x");
    put_tag(st, 40, "n", "y");
    put_tag(st, 45, "m", "x");
    put_tag(st, 35, "n", "x");
    checkpoint(st);

    const uint64_t want_n[] = {5, 10, 20, 25, 30, 35, 40, 60};
    tagged(&l, st, "n", 1);
    assert_trailing_ids(&l, want_n, 8);
    stu_list_free(&l);
    const uint64_t want_m[] = {45, 50};
    tagged(&l, st, "m", 1);
    assert_trailing_ids(&l, want_m, 2);
    stu_list_free(&l);

    /* a later run above and below again, after the cache was dropped */
    put_tag(st, 1, "n", "x");
    put_tag(st, 70, "n", "x");
    checkpoint(st);
    const uint64_t want_n2[] = {1, 5, 10, 20, 25, 30, 35, 40, 60, 70};
    tagged(&l, st, "n", 1);
    assert_trailing_ids(&l, want_n2, 10);
    stu_list_free(&l);

    /* a raw entry with the longest name part a name key can have, twice
     * (the second is a no-op); a longer one could not be read back, so it
     * is refused */
    uint8_t key[CKPT_NAMEKEY_MAX + 8 + 1];
    memset(key, 'z', sizeof key);
    key[CKPT_NAMEKEY_MAX - 1] = 0;
    ckpt_key_u64(key + CKPT_NAMEKEY_MAX, 7);
    stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_TAG_INDEX, key, sizeof key - 1, NULL, 0), 0, st);
    stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_TAG_INDEX, key, sizeof key - 1, NULL, 0), 0, st);
    stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_TAG_INDEX, key, sizeof key, NULL, 0), CKPT_E_INVAL,
                  st);
    assert_non_null(strstr(ckpt_errmsg(), "kvtag_name entries are a name key (at most"));
    checkpoint(st);
    stu_collect_db(&l, st, CKPT_DB_TAG_INDEX, NULL, 0); /* m, n, then it */
    assert_int_equal(l.n, 13);
    assert_int_equal(l.e[12].klen, sizeof key - 1);
    assert_memory_equal(l.e[12].key, key, sizeof key - 1);
    stu_list_free(&l);
    stu_close(st);
}

/* ---- containers ---- */

static void test_containers_members_and_delete(void **state)
{
    ckpt_store *st = open_manual(state);
    const uint64_t C1 = 5001, C2 = 5002;
    uint64_t id;
    struct stu_list l;
    put_cont(st, C1, "cont-one");
    put_cont(st, C2, "cont-two");
    for (uint64_t o = 1; o <= 4; o++) {
        char name[16];
        snprintf(name, sizeof name, "o%llu", (unsigned long long)o);
        put_obj(st, o, name, 0, 0);
    }
    const uint64_t add1[] = {3, 1, 2, 4};
    stu_assert_rc(ckpt_store_cont_add(st, C1, add1, 4), 0, st);
    stu_assert_rc(ckpt_store_cont_add(st, C2, add1 + 1, 1), 0, st);
    put_tag(st, C1, "owner", "one");
    put_tag(st, C2, "owner", "two");
    checkpoint(st);

    assert_int_equal(cont_by_name(st, "cont-one", 8, &id), 0);
    assert_int_equal(id, C1);
    assert_int_equal(cont_by_name(st, "cont-two", 8, &id), 0);
    assert_int_equal(id, C2);
    assert_int_equal(cont_by_name(st, "cont-thr", 8, &id), CKPT_E_NOTFOUND);

    const uint64_t m1[] = {1, 2, 3, 4};
    members_of(&l, st, C1);
    assert_trailing_ids(&l, m1, 4);
    for (size_t i = 0; i < l.n; i++) {
        assert_int_equal(l.e[i].klen, 16);
        assert_int_equal(ckpt_key_get_u64(l.e[i].key), C1);
    }
    stu_list_free(&l);

    /* remove (including a non-member) and re-add (idempotent) */
    const uint64_t rm[] = {2, 99};
    stu_assert_rc(ckpt_store_cont_remove(st, C1, rm, 2), 0, st);
    stu_assert_rc(ckpt_store_cont_add(st, C1, add1, 1), 0, st);
    checkpoint(st);
    const uint64_t m1b[] = {1, 3, 4};
    members_of(&l, st, C1);
    assert_trailing_ids(&l, m1b, 3);
    stu_list_free(&l);
    stu_assert_rc(ckpt_store_cont_add(st, C1, NULL, 1), CKPT_E_INVAL, st);
    stu_assert_rc(ckpt_store_cont_add(st, C1, NULL, 0), 0, st);

    /* rename removes the old name entry */
    put_cont(st, C1, "cont-uno");
    checkpoint(st);
    assert_int_equal(cont_by_name(st, "cont-one", 8, &id), CKPT_E_NOTFOUND);
    assert_int_equal(cont_by_name(st, "cont-uno", 8, &id), 0);
    assert_int_equal(id, C1);
    assert_int_equal(stu_count(st, CKPT_DB_CONT_NAME), 2);

    /* delete: record, name entry, members and kvtags go; objects stay */
    stu_assert_rc(ckpt_store_del_cont(st, C1), 0, st);
    checkpoint(st);
    assert_false(has_cont(st, C1));
    assert_true(has_cont(st, C2));
    assert_int_equal(cont_by_name(st, "cont-uno", 8, &id), CKPT_E_NOTFOUND);
    assert_int_equal(stu_count(st, CKPT_DB_CONT_NAME), 1);
    members_of(&l, st, C1);
    assert_int_equal(l.n, 0);
    stu_list_free(&l);
    kvtags_of(&l, st, C1);
    assert_int_equal(l.n, 0);
    stu_list_free(&l);
    tagged(&l, st, "owner", 5);
    assert_trailing_ids(&l, &C2, 1);
    stu_list_free(&l);
    for (uint64_t o = 1; o <= 4; o++)
        assert_true(has_obj(st, o));
    const uint64_t m2[] = {1};
    members_of(&l, st, C2);
    assert_trailing_ids(&l, m2, 1);
    stu_list_free(&l);
    stu_assert_rc(ckpt_store_del_cont(st, 777), 0, st);
    checkpoint(st);
    stu_close(st);
}

/* ---- regions ---- */

static void test_regions_put_delete_iterate(void **state)
{
    ckpt_store *st = open_manual(state);
    const uint64_t s1[1] = {0}, c1[1] = {10};
    const uint64_t s2[2] = {0, 0}, c2[2] = {4, 4}, s3[2] = {0, 4};
    const uint64_t s4[4] = {1, 2, 3, 4}, c4[4] = {5, 6, 7, 8};
    struct stu_list l;
    uint8_t key[8 + CKPT_REGIONKEY_MAX];

    stu_assert_rc(ckpt_store_put_region(st, 7, 2, s3, c2, "r3", 2), 0, st);
    stu_assert_rc(ckpt_store_put_region(st, 7, 1, s1, c1, "r1", 2), 0, st);
    stu_assert_rc(ckpt_store_put_region(st, 7, 2, s2, c2, "r2", 2), 0, st);
    stu_assert_rc(ckpt_store_put_region(st, 7, 4, s4, c4, "r4", 2), 0, st);
    stu_assert_rc(ckpt_store_put_region(st, 8, 1, s1, c1, "other", 5), 0, st);
    stu_assert_rc(ckpt_store_put_region(st, 6, 1, s1, c1, "other", 5), 0, st);
    checkpoint(st);

    regions_of(&l, st, 7);
    assert_int_equal(l.n, 4);
    static const char *const order[] = {"r1", "r2", "r3", "r4"};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(l.e[i].vlen, 2);
        assert_memory_equal(l.e[i].val, order[i], 2);
        assert_int_equal(ckpt_key_get_u64(l.e[i].key), 7);
    }
    /* keys: obj id . ndim . start[] . count[] */
    ckpt_key_u64(key, 7);
    size_t kl = 8 + ckpt_key_region(key + 8, 2, s3, c2);
    assert_int_equal(kl, 8 + 1 + 32);
    assert_int_equal(l.e[2].klen, kl);
    assert_memory_equal(l.e[2].key, key, kl);
    assert_int_equal(l.e[3].klen, 8 + 1 + 64);
    stu_list_free(&l);

    /* overwrite one geometry; delete another */
    stu_assert_rc(ckpt_store_put_region(st, 7, 2, s2, c2, "R2", 2), 0, st);
    stu_assert_rc(ckpt_store_del_region(st, 7, 1, s1, c1), 0, st);
    checkpoint(st);
    regions_of(&l, st, 7);
    assert_int_equal(l.n, 3);
    assert_memory_equal(l.e[0].val, "R2", 2);
    stu_list_free(&l);
    regions_of(&l, st, 8);
    assert_int_equal(l.n, 1);
    stu_list_free(&l);
    regions_of(&l, st, 9);
    assert_int_equal(l.n, 0);
    stu_list_free(&l);

    /* geometry limits */
    stu_assert_rc(ckpt_store_put_region(st, 7, 0, s1, c1, "x", 1), CKPT_E_INVAL, st);
    stu_assert_rc(ckpt_store_put_region(st, 7, 5, s4, c4, "x", 1), CKPT_E_INVAL, st);
    stu_assert_rc(ckpt_store_put_region(st, 7, 1, NULL, c1, "x", 1), CKPT_E_INVAL, st);
    stu_assert_rc(ckpt_store_del_region(st, 7, 5, s4, c4), CKPT_E_INVAL, st);
    assert_int_equal(ckpt_store_pending(st), 0);
    stu_close(st);
}

/* ---- raw ---- */

static void test_raw_put_get_delete_every_db(void **state)
{
    ckpt_store *st = open_manual(state);
    ckpt_rtxn *tx;
    ckpt_val v;
    uint8_t big[600];
    memset(big, 'k', sizeof big);
    for (int db = CKPT_DB_OBJ; db < CKPT_DB_COUNT; db++) {
        char key[32], val[64];
        int kn = snprintf(key, sizeof key, "raw-key-%d", db);
        int vn = snprintf(val, sizeof val, "raw value of %s", ckpt_db_name(db));
        if (db == CKPT_DB_TAG_INDEX)
            continue; /* its own test: test_raw_tag_index_entries */
        stu_assert_rc(ckpt_store_put_raw(st, db, key, (size_t)kn, val, (size_t)vn), 0, st);
        stu_assert_rc(ckpt_store_put_raw(st, db, "empty", 5, NULL, 0), 0, st);
    }
    checkpoint(st);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    for (int db = CKPT_DB_OBJ; db < CKPT_DB_COUNT; db++) {
        char key[32], val[64];
        int kn = snprintf(key, sizeof key, "raw-key-%d", db);
        int vn = snprintf(val, sizeof val, "raw value of %s", ckpt_db_name(db));
        if (db == CKPT_DB_TAG_INDEX)
            continue;
        stu_assert_rc(ckpt_get_raw(&v, tx, db, key, (size_t)kn), 0, st);
        assert_int_equal(v.len, (size_t)vn);
        assert_memory_equal(v.data, val, (size_t)vn);
        stu_assert_rc(ckpt_get_raw(&v, tx, db, "empty", 5), 0, st);
        assert_int_equal(v.len, 0);
        /* the key of one db is not in the others */
        int other = db == CKPT_DB_OBJ ? CKPT_DB_REGION : CKPT_DB_OBJ;
        stu_assert_rc(ckpt_get_raw(&v, tx, other, key, (size_t)kn), CKPT_E_NOTFOUND, st);
    }
    stu_assert_rc(ckpt_get_raw(&v, tx, CKPT_DB_COUNT, "x", 1), CKPT_E_INVAL, st);
    stu_assert_rc(ckpt_get_raw(&v, tx, -1, "x", 1), CKPT_E_INVAL, st);
    stu_assert_rc(ckpt_get_raw(&v, tx, CKPT_DB_OBJ, "x", 0), CKPT_E_INVAL, st);
    stu_assert_rc(ckpt_get_raw(&v, tx, CKPT_DB_OBJ, big, 512), CKPT_E_INVAL, st);
    ckpt_rtxn_end(tx);

    for (int db = CKPT_DB_OBJ; db < CKPT_DB_COUNT; db++) {
        char key[32];
        int kn = snprintf(key, sizeof key, "raw-key-%d", db);
        if (db == CKPT_DB_TAG_INDEX)
            continue;
        stu_assert_rc(ckpt_store_del_raw(st, db, key, (size_t)kn), 0, st);
        stu_assert_rc(ckpt_store_del_raw(st, db, "never", 5), 0, st);
    }
    checkpoint(st);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    for (int db = CKPT_DB_OBJ; db < CKPT_DB_COUNT; db++) {
        char key[32];
        int kn = snprintf(key, sizeof key, "raw-key-%d", db);
        if (db == CKPT_DB_TAG_INDEX)
            continue;
        stu_assert_rc(ckpt_get_raw(&v, tx, db, key, (size_t)kn), CKPT_E_NOTFOUND, st);
        stu_assert_rc(ckpt_get_raw(&v, tx, db, "empty", 5), 0, st);
    }
    ckpt_rtxn_end(tx);

    /* invalid raw mutations are refused and stage nothing */
    stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_COUNT, "x", 1, "v", 1), CKPT_E_INVAL, st);
    stu_assert_rc(ckpt_store_put_raw(st, -1, "x", 1, "v", 1), CKPT_E_INVAL, st);
    stu_assert_rc(ckpt_store_del_raw(st, 99, "x", 1), CKPT_E_INVAL, st);
    stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_OBJ, "x", 0, "v", 1), CKPT_E_INVAL, st);
    stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_OBJ, big, 511, "v", 1), 0, st);
    stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_OBJ, big, 512, "v", 1), CKPT_E_NAMETOOLONG, st);
    stu_assert_rc(ckpt_store_put_raw(NULL, CKPT_DB_OBJ, "x", 1, "v", 1), CKPT_E_INVAL, NULL);
    assert_int_equal(ckpt_store_pending(st), 1);
    checkpoint(st);

    /* db names */
    assert_string_equal(ckpt_db_name(CKPT_DB_META), "meta");
    assert_string_equal(ckpt_db_name(CKPT_DB_TAG_INDEX), "kvtag_name");
    assert_null(ckpt_db_name(CKPT_DB_COUNT));
    for (int db = 0; db < CKPT_DB_COUNT; db++)
        assert_int_equal(ckpt_db_by_name(ckpt_db_name(db)), db);
    assert_int_equal(ckpt_db_by_name("nope"), -1);
    stu_close(st);
}

/* ---- key order ---- */

static const uint64_t order_ids[] = {
    0x0102030405060708ull, 1, 256, 255, UINT64_MAX, 65536, 2, 1ull << 32, 65535,
    (1ull << 32) + 1, 1000000005ull, 2000000001ull, UINT64_MAX - 1, 1ull << 24, 257, 0,
};
enum { N_ORDER = sizeof order_ids / sizeof order_ids[0] };

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The tag index holds logical entries namekey . owner -> "" (stored as
 * DUPSORT duplicates since format 2): raw access sees exactly those, in
 * byte order, prefix scans included, and nothing else can be put there. */
static void test_raw_tag_index_entries(void **state)
{
    /* raw tag-index entries that no kvtag backs: format 3's plumbing (in
     * format 4 a read refuses them as damage: test_store_checksum) */
    setenv("PDC_CKPT_CHECKSUMS", "0", 1);
    ckpt_store *st = open_manual(state);
    unsetenv("PDC_CKPT_CHECKSUMS");
    static const char *names[] = {"b", "a", "ab", "b"};
    static const uint64_t owners[] = {7, 300, 5, 2};
    uint8_t key[32];
    struct stu_list l;
    ckpt_rtxn *tx;
    ckpt_val v;
    for (size_t i = 0; i < 4; i++) {
        size_t n = ckpt_key_name(key, names[i], strlen(names[i]));
        ckpt_key_u64(key + n, owners[i]);
        stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_TAG_INDEX, key, n + 8, NULL, 0), 0, st);
        stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_TAG_INDEX, key, n + 8, NULL, 0), 0, st);
    }
    stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_TAG_INDEX, key, 10, "v", 1), CKPT_E_INVAL, st);
    stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_TAG_INDEX, key, 8, NULL, 0), CKPT_E_INVAL, st);
    stu_assert_rc(ckpt_store_del_raw(st, CKPT_DB_TAG_INDEX, key, 3), CKPT_E_INVAL, st);
    checkpoint(st);
    stu_collect_db(&l, st, CKPT_DB_TAG_INDEX, NULL, 0);
    stu_assert_ascending(&l);
    assert_int_equal(l.n, 4); /* a/300, ab/5, b/2, b/7: the repeated puts added nothing */
    assert_int_equal(l.e[0].klen, 10);
    assert_memory_equal(l.e[0].key, "a", 2);
    assert_int_equal(ckpt_key_get_u64(l.e[0].key + 2), 300);
    assert_int_equal(ckpt_key_get_u64(l.e[2].key + 2), 2);
    assert_int_equal(ckpt_key_get_u64(l.e[3].key + 2), 7);
    for (size_t i = 0; i < l.n; i++)
        assert_int_equal(l.e[i].vlen, 0);
    stu_list_free(&l);
    /* a prefix inside the name, the whole name, and name + owner bytes */
    stu_collect_db(&l, st, CKPT_DB_TAG_INDEX, "a", 1);
    assert_int_equal(l.n, 2);
    stu_list_free(&l);
    stu_collect_db(&l, st, CKPT_DB_TAG_INDEX, "b", 2);
    assert_int_equal(l.n, 2);
    stu_list_free(&l);
    size_t n = ckpt_key_name(key, "b", 1);
    ckpt_key_u64(key + n, 7);
    stu_collect_db(&l, st, CKPT_DB_TAG_INDEX, key, n + 8);
    assert_int_equal(l.n, 1);
    stu_list_free(&l);
    stu_collect_db(&l, st, CKPT_DB_TAG_INDEX, key, n + 7); /* owners 0..255 of "b" */
    assert_int_equal(l.n, 2);
    stu_list_free(&l);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_get_raw(&v, tx, CKPT_DB_TAG_INDEX, key, n + 8), 0, st);
    assert_int_equal(v.len, 0);
    ckpt_key_u64(key + n, 8);
    stu_assert_rc(ckpt_get_raw(&v, tx, CKPT_DB_TAG_INDEX, key, n + 8), CKPT_E_NOTFOUND, st);
    ckpt_rtxn_end(tx);
    ckpt_key_u64(key + n, 7);
    stu_assert_rc(ckpt_store_del_raw(st, CKPT_DB_TAG_INDEX, key, n + 8), 0, st);
    checkpoint(st);
    stu_collect_db(&l, st, CKPT_DB_TAG_INDEX, NULL, 0);
    assert_int_equal(l.n, 3);
    stu_list_free(&l);
    stu_close(st);
}

static void test_iter_every_db_ascending_big_endian_ids(void **state)
{
    ckpt_store *st = open_manual(state);
    uint64_t sorted[N_ORDER];
    uint8_t k[8];
    struct stu_list l;

    ckpt_key_u64(k, 0x0102030405060708ull);
    static const uint8_t be[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    assert_memory_equal(k, be, 8);
    assert_int_equal(ckpt_key_get_u64(k), 0x0102030405060708ull);

    memcpy(sorted, order_ids, sizeof sorted);
    qsort(sorted, N_ORDER, sizeof sorted[0], cmp_u64);
    for (int db = CKPT_DB_OBJ; db < CKPT_DB_COUNT; db++) {
        if (db == CKPT_DB_TAG_INDEX)
            continue; /* test_raw_tag_index_entries */
        for (size_t i = 0; i < N_ORDER; i++) {
            ckpt_key_u64(k, order_ids[i]);
            stu_assert_rc(ckpt_store_put_raw(st, db, k, 8, &order_ids[i], 8), 0, st);
        }
    }
    checkpoint(st);
    for (int db = CKPT_DB_OBJ; db < CKPT_DB_COUNT; db++) {
        if (db == CKPT_DB_TAG_INDEX)
            continue;
        stu_collect_db(&l, st, db, NULL, 0);
        stu_assert_ascending(&l);
        assert_int_equal(l.n, N_ORDER);
        for (size_t i = 0; i < N_ORDER; i++) {
            assert_int_equal(l.e[i].klen, 8);
            assert_int_equal(ckpt_key_get_u64(l.e[i].key), sorted[i]);
            assert_memory_equal(l.e[i].val, &sorted[i], 8);
        }
        stu_list_free(&l);
        /* prefix iteration: ids whose top 7 bytes are 0 */
        static const uint8_t zero7[7] = {0};
        stu_collect_db(&l, st, db, zero7, 7);
        assert_int_equal(l.n, 4); /* 0 1 2 255 (256 and up differ in byte 6) */
        stu_list_free(&l);
    }
    /* meta holds the meta record */
    stu_collect_db(&l, st, CKPT_DB_META, NULL, 0);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.e[0].klen, 4);
    assert_memory_equal(l.e[0].key, "meta", 4);
    stu_list_free(&l);

    /* bad arguments */
    ckpt_rtxn *tx;
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    assert_int_equal(ckpt_iter(tx, CKPT_DB_OBJ, NULL, 0, NULL, NULL), CKPT_E_INVAL);
    assert_int_equal(ckpt_iter(tx, CKPT_DB_COUNT, NULL, 0, stu_collect, &l), CKPT_E_INVAL);
    ckpt_rtxn_end(tx);
    stu_close(st);
}

static void test_obj_name_keys_sort_by_name_then_time_step(void **state)
{
    ckpt_store *st = open_manual(state);
    struct stu_list l;
    /* obj_name keys: name . NUL . ts (sign flipped): steps sort numerically,
     * and "ab" sorts after every step of "a" */
    const int32_t steps[] = {7, -5, 0, INT32_MIN, INT32_MAX, -1};
    uint64_t id = 100;
    for (size_t i = 0; i < 6; i++)
        put_obj(st, id++, "a", steps[i], 0);
    put_obj(st, id++, "ab", INT32_MIN, 0);
    put_obj(st, id++, "", 3, 0);
    checkpoint(st);
    stu_collect_db(&l, st, CKPT_DB_OBJ_NAME, NULL, 0);
    stu_assert_ascending(&l);
    assert_int_equal(l.n, 8);
    assert_int_equal(l.e[0].klen, 1 + 4); /* "" */
    const int32_t want_steps[] = {INT32_MIN, -5, -1, 0, 7, INT32_MAX};
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(l.e[1 + i].klen, 2 + 4);
        assert_memory_equal(l.e[1 + i].key, "a", 2);
        assert_int_equal(ckpt_key_get_i32(l.e[1 + i].key + 2), want_steps[i]);
    }
    assert_memory_equal(l.e[7].key, "ab", 3);
    stu_list_free(&l);

    stu_close(st);
}

static int stop_after_three(const ckpt_val *key, const ckpt_val *val, void *payload)
{
    int *n = payload;
    (void)key;
    (void)val;
    return ++*n == 3 ? 42 : 0;
}

static void test_iter_callback_can_stop(void **state)
{
    ckpt_store *st = open_manual(state);
    uint8_t k[8];
    for (uint64_t i = 0; i < 10; i++) {
        ckpt_key_u64(k, i);
        stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_REGION, k, 8, "", 0), 0, st);
    }
    checkpoint(st);
    ckpt_rtxn *tx;
    int n = 0;
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    assert_int_equal(ckpt_iter(tx, CKPT_DB_REGION, NULL, 0, stop_after_three, &n), 42);
    assert_int_equal(n, 3);
    uint64_t entries = 0;
    stu_assert_rc(ckpt_db_stat(&entries, NULL, tx, CKPT_DB_REGION), 0, st);
    assert_int_equal(entries, 10);
    ckpt_rtxn_end(tx);
    stu_close(st);
}

/* ---- long names ---- */

static const size_t long_lens[] = {1, 447, 448, 449, 450, 1023, 1024, 2000, 4095, 4096};
enum { N_LONG = sizeof long_lens / sizeof long_lens[0] };

static void test_long_names_round_trip_by_name(void **state)
{
    ckpt_store *st = open_manual(state);
    char *names[N_LONG];
    uint8_t rec[REC_CAP];
    for (size_t i = 0; i < N_LONG; i++) {
        size_t n = long_lens[i];
        names[i] = stu_name(n, (unsigned)n);
        size_t len = stu_obj_rec(rec, sizeof rec, names[i], n, (int32_t)i, 0, 100 + i, 0);
        stu_assert_rc(ckpt_store_put_obj(st, 100 + i, names[i], n, (int32_t)i, 0, rec, len), 0, st);
        len = stu_cont_rec(rec, sizeof rec, names[i], n, 200 + i);
        stu_assert_rc(ckpt_store_put_cont(st, 200 + i, names[i], n, rec, len), 0, st);
        len = stu_kvtag_rec(rec, sizeof rec, names[i], n, "v");
        stu_assert_rc(ckpt_store_put_kvtag(st, 300 + i, names[i], n, rec, len), 0, st);
        stu_assert_rc(ckpt_store_put_kvtag(st, 9, names[i], n, rec, len), 0, st);
    }
    checkpoint(st);
    for (size_t i = 0; i < N_LONG; i++) {
        size_t n = long_lens[i];
        uint64_t id = 0;
        struct stu_list l;
        assert_int_equal(obj_by_name(st, names[i], n, (int32_t)i, &id), 0);
        assert_int_equal(id, 100 + i);
        assert_int_equal(cont_by_name(st, names[i], n, &id), 0);
        assert_int_equal(id, 200 + i);
        assert_int_equal(get_tag(st, 300 + i, names[i], n, NULL), 0);
        assert_int_equal(get_tag(st, 9, names[i], n, NULL), 0);
        const uint64_t owners[] = {9, 300 + i};
        tagged(&l, st, names[i], n);
        assert_trailing_ids(&l, owners, 2);
        stu_list_free(&l);
        /* a one-byte-shorter prefix of the name is another name */
        if (n > 1) {
            assert_int_equal(obj_by_name(st, names[i], n - 1, (int32_t)i, &id), CKPT_E_NOTFOUND);
            assert_int_equal(cont_by_name(st, names[i], n - 1, &id), CKPT_E_NOTFOUND);
        }
    }
    assert_int_equal(stu_count(st, CKPT_DB_OBJ_NAME), N_LONG);
    assert_int_equal(stu_count(st, CKPT_DB_CONT_NAME), N_LONG);
    struct stu_list l;
    kvtags_of(&l, st, 9);
    assert_int_equal(l.n, N_LONG);
    stu_list_free(&l);

    /* rename and delete of long-named entries clean up their index keys */
    put_obj(st, 100 + N_LONG - 1, "short", 0, 0);
    stu_assert_rc(ckpt_store_del_cont(st, 200 + N_LONG - 1), 0, st);
    stu_assert_rc(ckpt_store_del_obj(st, 100 + 6), 0, st); /* 1024 bytes */
    checkpoint(st);
    uint64_t id;
    assert_int_equal(obj_by_name(st, names[N_LONG - 1], 4096, (int32_t)(N_LONG - 1), &id),
                     CKPT_E_NOTFOUND);
    assert_int_equal(obj_by_name(st, names[6], 1024, 6, &id), CKPT_E_NOTFOUND);
    assert_int_equal(cont_by_name(st, names[N_LONG - 1], 4096, &id), CKPT_E_NOTFOUND);
    assert_int_equal(stu_count(st, CKPT_DB_OBJ_NAME), N_LONG - 1);
    assert_int_equal(stu_count(st, CKPT_DB_CONT_NAME), N_LONG - 1);
    for (size_t i = 0; i < N_LONG; i++)
        free(names[i]);
    stu_close(st);
}

static void test_long_names_sharing_a_prefix_are_distinct(void **state)
{
    ckpt_store *st = open_manual(state);
    /* pairs of names that agree on their first `same` bytes */
    static const struct {
        size_t len, same;
    } pairs[] = {
        {1024, 1023}, /* differ in the last byte */
        {1024, 448},  /* differ in the first byte after the inline prefix */
        {1024, 600},
        {4096, 4095},
        {449, 448},
    };
    enum { NP = sizeof pairs / sizeof pairs[0] };
    char *a[NP], *b[NP];
    uint8_t rec[REC_CAP];
    for (size_t p = 0; p < NP; p++) {
        a[p] = stu_name(pairs[p].len, 77 + (unsigned)p);
        b[p] = malloc(pairs[p].len + 1);
        assert_non_null(b[p]);
        memcpy(b[p], a[p], pairs[p].len + 1);
        b[p][pairs[p].same] = a[p][pairs[p].same] == 'Z' ? 'Y' : 'Z';
        const char *nm[2] = {a[p], b[p]};
        for (size_t j = 0; j < 2; j++) {
            uint64_t id = 1000 + 10 * p + j;
            size_t len = stu_obj_rec(rec, sizeof rec, nm[j], pairs[p].len, 5, 0, id, 0);
            stu_assert_rc(ckpt_store_put_obj(st, id, nm[j], pairs[p].len, 5, 0, rec, len), 0, st);
            len = stu_cont_rec(rec, sizeof rec, nm[j], pairs[p].len, id);
            stu_assert_rc(ckpt_store_put_cont(st, id, nm[j], pairs[p].len, rec, len), 0, st);
            len = stu_kvtag_rec(rec, sizeof rec, nm[j], pairs[p].len, j ? "b" : "a");
            stu_assert_rc(ckpt_store_put_kvtag(st, 1, nm[j], pairs[p].len, rec, len), 0, st);
            stu_assert_rc(ckpt_store_put_kvtag(st, id, nm[j], pairs[p].len, rec, len), 0, st);
        }
    }
    /* a 448-byte name that is the prefix of the 449-byte pair */
    {
        size_t len = stu_obj_rec(rec, sizeof rec, a[NP - 1], 448, 5, 0, 999, 0);
        stu_assert_rc(ckpt_store_put_obj(st, 999, a[NP - 1], 448, 5, 0, rec, len), 0, st);
    }
    checkpoint(st);
    assert_int_equal(stu_count(st, CKPT_DB_OBJ_NAME), 2 * NP + 1);
    assert_int_equal(stu_count(st, CKPT_DB_CONT_NAME), 2 * NP);
    assert_int_equal(stu_count(st, CKPT_DB_TAG_INDEX), 4 * NP);
    for (size_t p = 0; p < NP; p++) {
        const char *nm[2] = {a[p], b[p]};
        for (size_t j = 0; j < 2; j++) {
            uint64_t want = 1000 + 10 * p + j, id = 0;
            const char *value;
            struct stu_list l;
            assert_int_equal(obj_by_name(st, nm[j], pairs[p].len, 5, &id), 0);
            assert_int_equal(id, want);
            assert_int_equal(cont_by_name(st, nm[j], pairs[p].len, &id), 0);
            assert_int_equal(id, want);
            assert_int_equal(get_tag(st, 1, nm[j], pairs[p].len, &value), 0);
            assert_string_equal(value, j ? "b" : "a");
            const uint64_t owners[] = {1, want};
            tagged(&l, st, nm[j], pairs[p].len);
            assert_trailing_ids(&l, owners, 2);
            stu_list_free(&l);
        }
        /* a third name with the same prefix was never stored */
        char *c = malloc(pairs[p].len + 1);
        uint64_t id;
        assert_non_null(c);
        memcpy(c, a[p], pairs[p].len + 1);
        c[pairs[p].len - 1] = c[pairs[p].len - 1] == 'X' ? 'W' : 'X';
        if (pairs[p].same != pairs[p].len - 1) {
            assert_int_equal(obj_by_name(st, c, pairs[p].len, 5, &id), CKPT_E_NOTFOUND);
            assert_int_equal(cont_by_name(st, c, pairs[p].len, &id), CKPT_E_NOTFOUND);
            assert_int_equal(get_tag(st, 1, c, pairs[p].len, NULL), CKPT_E_NOTFOUND);
        }
        free(c);
    }
    uint64_t id = 0;
    assert_int_equal(obj_by_name(st, a[NP - 1], 448, 5, &id), 0);
    assert_int_equal(id, 999);

    /* deleting one of a pair leaves the other */
    stu_assert_rc(ckpt_store_del_obj(st, 1000), 0, st);
    stu_assert_rc(ckpt_store_del_kvtag(st, 1, a[0], pairs[0].len), 0, st);
    checkpoint(st);
    assert_int_equal(obj_by_name(st, a[0], pairs[0].len, 5, &id), CKPT_E_NOTFOUND);
    assert_int_equal(obj_by_name(st, b[0], pairs[0].len, 5, &id), 0);
    assert_int_equal(id, 1001);
    assert_int_equal(get_tag(st, 1, a[0], pairs[0].len, NULL), CKPT_E_NOTFOUND);
    assert_int_equal(get_tag(st, 1, b[0], pairs[0].len, NULL), 0);
    for (size_t p = 0; p < NP; p++) {
        free(a[p]);
        free(b[p]);
    }
    stu_close(st);
}

static void test_name_of_4097_bytes_is_too_long(void **state)
{
    ckpt_store *st = open_manual(state);
    char *name = stu_name(4097, 1);
    uint8_t rec[REC_CAP];
    size_t len = stu_obj_rec(rec, sizeof rec, "x", 1, 0, 0, 1, 0);
    stu_assert_rc(ckpt_store_put_obj(st, 1, name, 4097, 0, 0, rec, len), CKPT_E_NAMETOOLONG, st);
    assert_non_null(strstr(ckpt_errmsg(), "4097"));
    assert_non_null(strstr(ckpt_errmsg(), "object"));
    stu_assert_rc(ckpt_store_put_cont(st, 1, name, 4097, rec, len), CKPT_E_NAMETOOLONG, st);
    assert_non_null(strstr(ckpt_errmsg(), "container"));
    stu_assert_rc(ckpt_store_put_kvtag(st, 1, name, 4097, rec, len), CKPT_E_NAMETOOLONG, st);
    assert_non_null(strstr(ckpt_errmsg(), "kvtag"));
    stu_assert_rc(ckpt_store_del_kvtag(st, 1, name, 4097), CKPT_E_NAMETOOLONG, st);
    stu_assert_rc(ckpt_store_put_obj(st, 1, name, 100000, 0, 0, rec, len), CKPT_E_NAMETOOLONG, st);
    assert_int_equal(ckpt_store_pending(st), 0);

    ckpt_rtxn *tx;
    ckpt_val v;
    uint64_t id;
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_get_obj_by_name(&id, &v, tx, name, 4097, 0), CKPT_E_NAMETOOLONG, st);
    stu_assert_rc(ckpt_get_cont_by_name(&id, &v, tx, name, 4097), CKPT_E_NAMETOOLONG, st);
    stu_assert_rc(ckpt_get_kvtag(&v, tx, 1, name, 4097), CKPT_E_NAMETOOLONG, st);
    stu_assert_rc(ckpt_iter_tagged(tx, name, 4097, stu_collect, NULL), CKPT_E_NAMETOOLONG, st);
    ckpt_rtxn_end(tx);
    assert_int_equal(ckpt_key_name(rec, name, 4097), 0);
    free(name);
    stu_close(st);
}

static void test_name_with_embedded_nul_is_invalid(void **state)
{
    ckpt_store *st = open_manual(state);
    static const char name[] = "ab\0cd";
    uint8_t rec[REC_CAP];
    size_t len = stu_obj_rec(rec, sizeof rec, "ab", 2, 0, 0, 1, 0);
    stu_assert_rc(ckpt_store_put_obj(st, 1, name, 5, 0, 0, rec, len), CKPT_E_INVAL, st);
    assert_non_null(strstr(ckpt_errmsg(), "NUL"));
    stu_assert_rc(ckpt_store_put_cont(st, 1, name, 5, rec, len), CKPT_E_INVAL, st);
    stu_assert_rc(ckpt_store_put_kvtag(st, 1, name, 5, rec, len), CKPT_E_INVAL, st);
    stu_assert_rc(ckpt_store_del_kvtag(st, 1, name, 5), CKPT_E_INVAL, st);
    stu_assert_rc(ckpt_store_put_obj(st, 1, NULL, 0, 0, 0, rec, len), CKPT_E_INVAL, st);
    /* a long name with a NUL past the inline prefix */
    char *lname = stu_name(1024, 3);
    lname[1000] = 0;
    stu_assert_rc(ckpt_store_put_obj(st, 1, lname, 1024, 0, 0, rec, len), CKPT_E_INVAL, st);
    assert_int_equal(ckpt_store_pending(st), 0);

    /* the name up to the NUL is fine */
    stu_assert_rc(ckpt_store_put_obj(st, 1, name, 2, 0, 0, rec, len), 0, st);
    checkpoint(st);
    ckpt_rtxn *tx;
    ckpt_val v;
    uint64_t id;
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_get_obj_by_name(&id, &v, tx, name, 5, 0), CKPT_E_INVAL, st);
    stu_assert_rc(ckpt_get_obj_by_name(&id, &v, tx, name, 2, 0), 0, st);
    stu_assert_rc(ckpt_get_cont_by_name(&id, &v, tx, name, 5), CKPT_E_INVAL, st);
    stu_assert_rc(ckpt_get_kvtag(&v, tx, 1, name, 5), CKPT_E_INVAL, st);
    stu_assert_rc(ckpt_get_kvtag(&v, tx, 1, lname, 1024), CKPT_E_INVAL, st);
    ckpt_rtxn_end(tx);
    free(lname);
    stu_close(st);
}

/* The store treats records as opaque and keeps the keys each put gives
 * (format 5: obj_keys, cont_keys): a caller can store records that are not
 * BULKI at all ("name;ts;cont"), and renames, deletes (name entry and
 * membership) and long-name lookups work from those keys, without the
 * keys function ever being called and with no keys function at all. Only
 * a kvtag's long name, checked against its record on lookup, needs one. */
static int text_keys_calls;

static int text_keys(struct ckpt_rec_keys *k, int db, const void *rec, size_t len)
{
    text_keys_calls++;
    const char *r = rec, *semi = memchr(r, ';', len);
    memset(k, 0, sizeof *k);
    if (semi == NULL || (db != CKPT_DB_OBJ && db != CKPT_DB_CONT))
        return CKPT_E_RECORD;
    char tail[64];
    size_t tl = len - (size_t)(semi + 1 - r);
    if (tl >= sizeof tail)
        return CKPT_E_RECORD;
    memcpy(tail, semi + 1, tl);
    tail[tl] = 0;
    long ts;
    unsigned long long cont;
    if (sscanf(tail, "%ld;%llu", &ts, &cont) != 2)
        return CKPT_E_RECORD;
    k->name = r;
    k->nlen = (size_t)(semi - r);
    k->ts = (int32_t)ts;
    k->cont_id = cont;
    return 0;
}

static void put_text_obj(ckpt_store *st, uint64_t id, const char *name, int32_t ts, uint64_t cont)
{
    char rec[5000];
    int n = snprintf(rec, sizeof rec, "%s;%d;%llu", name, (int)ts, (unsigned long long)cont);
    assert_true(n > 0 && (size_t)n < sizeof rec);
    stu_assert_rc(ckpt_store_put_obj(st, id, name, strlen(name), ts, cont, rec, (size_t)n), 0, st);
}

static void test_records_are_opaque_keys_come_from_the_caller(void **state)
{
    struct ckpt_store_opts o = stu_opts(stu_dir(state));
    o.commit_every = 0;
    o.commit_ms = 0;
    o.rec_keys = text_keys;
    ckpt_store *st = stu_open(&o);
    uint64_t id = 0, member = 1001;
    const char *crec = "cont;0;0";
    ckpt_rtxn *tx;
    ckpt_val v;

    stu_assert_rc(ckpt_store_put_cont(st, 5001, "cont", 4, crec, strlen(crec)), 0, st);
    stu_assert_rc(ckpt_store_cont_add(st, 5001, &member, 1), 0, st);
    put_text_obj(st, 1001, "old", 3, 5001);
    checkpoint(st);
    put_text_obj(st, 1001, "new", 3, 5001); /* a rename: the old entry goes */
    checkpoint(st);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    assert_int_equal(ckpt_get_obj_by_name(&id, &v, tx, "old", 3, 3), CKPT_E_NOTFOUND);
    stu_assert_rc(ckpt_get_obj_by_name(&id, &v, tx, "new", 3, 3), 0, st);
    assert_int_equal(id, 1001);
    ckpt_rtxn_end(tx);
    assert_int_equal(stu_count(st, CKPT_DB_OBJ_NAME), 1);
    assert_int_equal(stu_count(st, CKPT_DB_CONT_OBJ), 1);

    /* the delete finds the name entry and the membership from the keys */
    stu_assert_rc(ckpt_store_del_obj(st, 1001), 0, st);
    checkpoint(st);
    assert_int_equal(stu_count(st, CKPT_DB_OBJ_NAME), 0);
    assert_int_equal(stu_count(st, CKPT_DB_CONT_OBJ), 0);

    /* long (hashed) names are told apart by the name the keys give */
    char *a = stu_name(1000, 1), *b = stu_name(1000, 1);
    b[999] = b[999] == 'x' ? 'y' : 'x'; /* same prefix, another name */
    put_text_obj(st, 1002, a, 0, 0);
    checkpoint(st);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_get_obj_by_name(&id, &v, tx, a, 1000, 0), 0, st);
    assert_int_equal(id, 1002);
    assert_int_equal(ckpt_get_obj_by_name(&id, &v, tx, b, 1000, 0), CKPT_E_NOTFOUND);
    ckpt_rtxn_end(tx);

    /* format 5 kept the keys it was given (obj_keys, cont_keys): the
     * commits above never asked the keys function */
    assert_int_equal(text_keys_calls, 0);
    assert_int_equal(stu_count(st, CKPT_DB_OBJ_KEYS), 1);
    assert_int_equal(stu_count(st, CKPT_DB_CONT_KEYS), 1);
    stu_close(st);

    /* so a writer needs none: replacing, deleting and long-name lookups of
     * objects and containers work without it */
    o.rec_keys = NULL;
    o.create = 0;
    st = stu_open(&o);
    member = 1003;
    put_text_obj(st, 1003, "x", 0, 5001);
    stu_assert_rc(ckpt_store_cont_add(st, 5001, &member, 1), 0, st);
    checkpoint(st);
    put_text_obj(st, 1003, "y", 0, 5001);
    checkpoint(st);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    assert_int_equal(ckpt_get_obj_by_name(&id, &v, tx, "x", 1, 0), CKPT_E_NOTFOUND);
    stu_assert_rc(ckpt_get_obj_by_name(&id, &v, tx, "y", 1, 0), 0, st);
    assert_int_equal(id, 1003);
    stu_assert_rc(ckpt_get_obj_by_name(&id, &v, tx, a, 1000, 0), 0, st);
    assert_int_equal(id, 1002);
    assert_int_equal(ckpt_get_obj_by_name(&id, &v, tx, b, 1000, 0), CKPT_E_NOTFOUND);
    ckpt_rtxn_end(tx);
    stu_assert_rc(ckpt_store_del_obj(st, 1003), 0, st);
    checkpoint(st);
    assert_int_equal(stu_count(st, CKPT_DB_OBJ_NAME), 1); /* the long name's */
    assert_int_equal(stu_count(st, CKPT_DB_CONT_OBJ), 0);
    assert_int_equal(stu_count(st, CKPT_DB_OBJ_KEYS), 1);
    stu_assert_rc(ckpt_store_del_cont(st, 5001), 0, st);
    checkpoint(st);
    assert_int_equal(stu_count(st, CKPT_DB_CONT_NAME), 0);
    assert_int_equal(stu_count(st, CKPT_DB_CONT_KEYS), 0);
    /* a kvtag's long name is checked against its record: that needs it */
    char *t = stu_name(600, 2);
    stu_assert_rc(ckpt_store_put_kvtag(st, 1002, t, 600, "tag", 3), 0, st);
    checkpoint(st);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    assert_int_equal(ckpt_get_kvtag(&v, tx, 1002, t, 600), CKPT_E_INVAL);
    assert_non_null(strstr(ckpt_errmsg(), "rec_keys"));
    ckpt_rtxn_end(tx);
    assert_int_equal(text_keys_calls, 0);
    stu_close(st);
    free(t);
    free(a);
    free(b);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, stu_setup, stu_teardown)
    const struct CMUnitTest tests[] = {
        T(test_obj_put_get_and_lookup_by_name),
        T(test_obj_rename_removes_old_name_entry),
        T(test_obj_delete_cascades),
        T(test_kvtag_put_get_delete_and_key_order),
        T(test_iter_tagged_finds_exactly_the_owners),
        T(test_tag_index_run_below_between_and_above_stored_owners),
        T(test_containers_members_and_delete),
        T(test_regions_put_delete_iterate),
        T(test_raw_put_get_delete_every_db),
        T(test_raw_tag_index_entries),
        T(test_iter_every_db_ascending_big_endian_ids),
        T(test_obj_name_keys_sort_by_name_then_time_step),
        T(test_iter_callback_can_stop),
        T(test_long_names_round_trip_by_name),
        T(test_long_names_sharing_a_prefix_are_distinct),
        T(test_name_of_4097_bytes_is_too_long),
        T(test_name_with_embedded_nul_is_invalid),
        T(test_records_are_opaque_keys_come_from_the_caller),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
