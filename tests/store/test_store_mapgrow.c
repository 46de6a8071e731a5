/*
 * test_store_mapgrow.c - a store opened with a 1 MiB map takes tens of MiB
 * of records, committed in one batch or in many, without ever returning
 * CKPT_E_MAP_FULL; everything reads back, before and after reopening (also
 * reopening with the small map again).
 */
#include "store_test_util.h"

#include <stdio.h>
#include <string.h>

enum {
    N_OBJS = 100000,
    PAD = 160, /* obj records of ~200 bytes */
};
#define MIB ((size_t)1 << 20)

static size_t obj_name(char *buf, size_t cap, uint64_t i)
{
    int n = snprintf(buf, cap, "grow/obj-%08llu", (unsigned long long)i);
    assert_true(n > 0 && (size_t)n < cap);
    return (size_t)n;
}

static void put_objs(ckpt_store *st, uint64_t from, uint64_t to, size_t *bytes)
{
    uint8_t rec[512];
    char name[64];
    for (uint64_t i = from; i < to; i++) {
        size_t n = obj_name(name, sizeof name, i);
        size_t len = stu_obj_rec(rec, sizeof rec, name, n, (int32_t)(i % 100), 0, i, PAD);
        int rc = ckpt_store_put_obj(st, i, name, n, (int32_t)(i % 100), 0, rec, len);
        if (rc != 0) {
            print_error("put_obj %llu: %s (%s)\n", (unsigned long long)i, ckpt_errname(rc),
                        ckpt_errmsg());
            assert_int_not_equal(rc, CKPT_E_MAP_FULL);
            assert_int_equal(rc, 0);
        }
        *bytes += len;
    }
}

struct check {
    uint64_t next;
};

static int check_obj(const ckpt_val *key, const ckpt_val *val, void *payload)
{
    struct check *c = payload;
    uint64_t seq = 0;
    char name[64];
    const char *s;
    size_t slen;
    if (key->len != 8 || ckpt_key_get_u64(key->data) != c->next)
        fail_msg("obj key %llu out of sequence", (unsigned long long)c->next);
    assert_int_equal(stu_rec_u64(val, "seq", &seq), 0);
    assert_int_equal(seq, c->next);
    size_t n = obj_name(name, sizeof name, c->next);
    assert_int_equal(stu_rec_str(val, "obj_name", &s, &slen), 0);
    assert_int_equal(slen, n);
    assert_memory_equal(s, name, n);
    c->next++;
    return 0;
}

static void verify(ckpt_store *st, uint64_t n)
{
    ckpt_rtxn *tx;
    struct check c = {0};
    char name[64];
    assert_int_equal(stu_count(st, CKPT_DB_OBJ), n);
    assert_int_equal(stu_count(st, CKPT_DB_OBJ_NAME), n);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_iter(tx, CKPT_DB_OBJ, NULL, 0, check_obj, &c), 0, st);
    assert_int_equal(c.next, n);
    for (uint64_t i = 0; i < n; i += 997) {
        uint64_t id = 0;
        ckpt_val rec;
        size_t len = obj_name(name, sizeof name, i);
        stu_assert_rc(ckpt_get_obj_by_name(&id, &rec, tx, name, len, (int32_t)(i % 100)), 0, st);
        assert_int_equal(id, i);
    }
    ckpt_rtxn_end(tx);
}

static struct ckpt_store_opts small_map_opts(void **state, unsigned commit_every)
{
    struct ckpt_store_opts o = stu_opts(stu_dir(state));
    o.map_size = MIB;
    o.commit_every = commit_every;
    o.commit_ms = 0;
    return o;
}

/* Reopened read-only with o's (small) map: all n objects are there.
 * Returns the store's info as that open saw it. */
static struct ckpt_store_info verify_readonly(struct ckpt_store_opts o, uint64_t n)
{
    o.readonly = 1;
    ckpt_store *st = stu_open(&o);
    verify(st, n);
    struct ckpt_store_info info = stu_info(st);
    stu_close(st);
    return info;
}

static void test_map_grows_for_one_big_batch(void **state)
{
    struct ckpt_store_opts o = small_map_opts(state, 1u << 30);
    size_t bytes = 0;
    ckpt_store *st = stu_open(&o);
    struct ckpt_store_info info = stu_info(st);
    assert_true(info.map_size < 2 * MIB);

    put_objs(st, 0, N_OBJS, &bytes);
    assert_true(bytes > 18 * MIB);
    assert_int_equal(ckpt_store_pending(st), N_OBJS);
    stu_assert_rc(ckpt_store_checkpoint(st), 0, st);
    assert_int_equal(ckpt_store_pending(st), 0);
    info = stu_info(st);
    assert_true(info.map_size > bytes);
    assert_true(info.map_used > bytes);
    assert_true(info.map_used <= info.map_size);
    assert_int_equal(info.mutations, N_OBJS);
    verify(st, N_OBJS);
    stu_close(st);

    verify_readonly(o, N_OBJS);

    /* reopen writable with the small map again and add a second batch */
    st = stu_open(&o);
    put_objs(st, N_OBJS, N_OBJS + 20000, &bytes);
    stu_assert_rc(ckpt_store_checkpoint(st), 0, st);
    verify(st, N_OBJS + 20000);
    stu_close(st);
}

static void test_map_grows_across_many_batches(void **state)
{
    struct ckpt_store_opts o = small_map_opts(state, 1000);
    size_t bytes = 0;
    ckpt_store *st = stu_open(&o);
    size_t last_map = stu_info(st).map_size;
    int grew = 0;
    for (uint64_t b = 0; b < N_OBJS / 1000; b++) {
        put_objs(st, b * 1000, (b + 1) * 1000, &bytes);
        assert_int_equal(ckpt_store_pending(st), 0); /* each batch committed */
        struct ckpt_store_info info = stu_info(st);
        assert_true(info.map_size >= last_map);
        grew += info.map_size > last_map;
        last_map = info.map_size;
    }
    assert_true(grew >= 2);
    struct ckpt_store_info info = stu_info(st);
    assert_true(info.map_size > 16 * MIB);
    assert_int_equal(info.mutations, N_OBJS);
    verify(st, N_OBJS);
    stu_close(st);

    info = verify_readonly(o, N_OBJS);
    assert_int_equal(info.mutations, N_OBJS);
    assert_int_equal(info.clean, 1);
}

static void test_map_grows_for_large_values(void **state)
{
    /* values far larger than the map: 8 values of 3 MiB each */
    struct ckpt_store_opts o = small_map_opts(state, 0);
    ckpt_store *st = stu_open(&o);
    static uint8_t val[3 << 20];
    uint8_t k[8];
    for (uint64_t i = 0; i < 8; i++) {
        memset(val, (int)('A' + i), sizeof val);
        ckpt_key_u64(k, i);
        stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_REGION, k, 8, val, sizeof val), 0, st);
        if (i % 3 == 2)
            stu_assert_rc(ckpt_store_checkpoint(st), 0, st);
    }
    stu_assert_rc(ckpt_store_checkpoint(st), 0, st);
    ckpt_rtxn *tx;
    ckpt_val v;
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    for (uint64_t i = 0; i < 8; i++) {
        ckpt_key_u64(k, i);
        stu_assert_rc(ckpt_get_raw(&v, tx, CKPT_DB_REGION, k, 8), 0, st);
        assert_int_equal(v.len, sizeof val);
        const uint8_t *p = v.data;
        assert_int_equal(p[0], 'A' + i);
        assert_int_equal(p[v.len - 1], 'A' + i);
    }
    ckpt_rtxn_end(tx);
    assert_true(stu_info(st).map_size >= 24 * MIB);
    stu_close(st);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, stu_setup, stu_teardown)
    const struct CMUnitTest tests[] = {
        T(test_map_grows_for_one_big_batch),
        T(test_map_grows_across_many_batches),
        T(test_map_grows_for_large_values),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
