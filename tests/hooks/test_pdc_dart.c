/*
 * test_pdc_dart.c - PDC's DART (IDIOMS) entries in the store (database
 * pdc_server, entries `i`): put, delete and read back through both restart
 * forms; the same entry put twice is one entry; a string value is keyed as
 * PDC's index keys it (bytes before the NUL, surrounding quotes removed),
 * so a delete in another spelling finds it; suffix entries are their own;
 * entries too long for a key are told apart by their hash and deleted
 * exactly; records round trip and refuse damage; other pdc_server tables
 * do not show up as DART entries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hooks_test_util.h"

struct dents {
    struct ckpt_dart_entry e[16];
    char key[16][1200];
    uint8_t val[16][1200];
    int n;
};

static int collect(const struct ckpt_dart_entry *e, void *p)
{
    struct dents *d = p;
    assert_true(d->n < 16);
    assert_true(strlen(e->key) < sizeof d->key[0] && e->value_len <= sizeof d->val[0]);
    d->e[d->n] = *e;
    snprintf(d->key[d->n], sizeof d->key[0], "%s", e->key);
    memcpy(d->val[d->n], e->value, e->value_len);
    d->e[d->n].key = d->key[d->n];
    d->e[d->n].value = d->val[d->n];
    d->n++;
    return 0;
}

static void read_all(ckpt_hooks *h, struct dents *d)
{
    ckpt_hooks_read *r;
    memset(d, 0, sizeof *d);
    HTU_OK(ckpt_hooks_read_begin(&r, h));
    HTU_OK(ckpt_hooks_foreach_dart(r, collect, d));
    ckpt_hooks_read_end(r);
}

static struct ckpt_dart_entry str_entry(const char *key, const char *val, uint32_t vlen, uint64_t ref)
{
    struct ckpt_dart_entry e;
    memset(&e, 0, sizeof e);
    e.key = key;
    e.value = val;
    e.value_len = vlen;
    e.type = 16; /* PDC_STRING */
    e.obj_ref = ref;
    e.vnode_id = 7;
    e.src_client_id = 3;
    e.string_value = 1;
    return e;
}

/* index of the entry with key and reference, -1 if absent */
static int find(const struct dents *d, const char *key, uint64_t ref, int suffix)
{
    for (int i = 0; i < d->n; i++)
        if (strcmp(d->e[i].key, key) == 0 && d->e[i].obj_ref == ref && d->e[i].is_suffix == suffix)
            return i;
    return -1;
}

static void check_state(ckpt_hooks *h)
{
    struct dents d;
    read_all(h, &d);
    assert_int_equal(d.n, 4);
    int i = find(&d, "color", 11, 0);
    assert_true(i >= 0);
    assert_int_equal(d.e[i].value_len, 4); /* the last put's spelling */
    assert_memory_equal(d.e[i].value, "red", 4);
    assert_int_equal(d.e[i].vnode_id, 7);
    assert_int_equal(d.e[i].src_client_id, 3);
    assert_int_equal(d.e[i].type, 16);
    assert_true(d.e[i].string_value);
    assert_true(find(&d, "olor", 11, 1) >= 0); /* a suffix entry */
    i = find(&d, "n", 12, 0);
    assert_true(i >= 0);
    int64_t v;
    assert_int_equal(d.e[i].value_len, sizeof v);
    memcpy(&v, d.e[i].value, sizeof v);
    assert_int_equal(v, -5);
    assert_false(d.e[i].string_value);
    i = find(&d, "long", 14, 0);
    assert_true(i >= 0);
    assert_int_equal(d.e[i].value_len, 1000);
    assert_int_equal(d.val[i][999], 'b');
}

static void test_dart_entries_put_delete_restart(void **state)
{
    struct ckpt_hooks_opts o = htu_opts(state);
    ckpt_hooks *h;
    HTU_OK(ckpt_hooks_open(&h, &o));
    struct ckpt_dart_entry e = str_entry("color", "\"red\"", 6, 11);
    HTU_OK(ckpt_hook_dart_put(h, &e));
    e = str_entry("color", "red", 4, 11); /* the same entry, as PDC's index keys it */
    HTU_OK(ckpt_hook_dart_put(h, &e));
    e = str_entry("olor", "red", 4, 11);
    e.is_suffix = 1;
    HTU_OK(ckpt_hook_dart_put(h, &e));
    e = str_entry("color", "blue", 5, 11);
    HTU_OK(ckpt_hook_dart_put(h, &e));
    e = str_entry("color", "\"blue\"", 7, 11); /* deleted in another spelling */
    HTU_OK(ckpt_hook_dart_delete(h, &e));
    int64_t v = -5;
    e = str_entry("n", NULL, 0, 12);
    e.value = &v;
    e.value_len = sizeof v;
    e.type = 4; /* PDC_INT64 */
    e.string_value = 0;
    HTU_OK(ckpt_hook_dart_put(h, &e));
    /* two long entries that differ only at their last value byte */
    char big[1001];
    memset(big, 'a', 1000);
    big[1000] = 0;
    e = str_entry("long", big, 1000, 14);
    e.string_value = 0; /* raw bytes: no NUL among them */
    e.type = 0;
    HTU_OK(ckpt_hook_dart_put(h, &e));
    big[999] = 'b';
    HTU_OK(ckpt_hook_dart_put(h, &e));
    big[999] = 'a';
    HTU_OK(ckpt_hook_dart_delete(h, &e)); /* removes the 'a' one only */
    uint8_t key[CKPT_PDC_DART_KEY_MAX];
    size_t klen = ckpt_key_pdc_dart(key, &e);
    assert_true(klen > 0 && klen <= CKPT_PDC_DART_KEY_MAX);
    assert_int_equal(key[0], CKPT_PDC_DART);
    assert_int_equal(key[1], 2); /* hashed */
    /* another table of pdc_server is not a DART entry */
    HTU_OK(ckpt_hook_same_name_put(h, "x", 0, 5));
    HTU_OK(ckpt_hooks_checkpoint(h));
    check_state(h);
    HTU_OK(ckpt_hooks_close(h));

    HTU_OK(ckpt_hooks_restart_map(&h, &o));
    check_state(h);
    HTU_OK(ckpt_hooks_close(h));
    HTU_OK(ckpt_hooks_restart_rebuild(&h, &o, &(struct ckpt_rebuild_cbs){0}, NULL, NULL));
    check_state(h);
    HTU_OK(ckpt_hooks_close(h));
}

static void test_dart_key_layout_and_arguments(void **state)
{
    (void)state;
    uint8_t key[CKPT_PDC_DART_KEY_MAX];
    struct ckpt_dart_entry e = str_entry("ab", "x\0junk", 6, UINT64_C(0x0102030405060708));
    size_t n = ckpt_key_pdc_dart(key, &e);
    /* i . 0 . "ab" NUL . type (ckpt_key_i32) . "x" . reference (BE) */
    const uint8_t want[] = {'i', 0, 'a', 'b', 0, 0x80, 0, 0, 16, 'x', 1, 2, 3, 4, 5, 6, 7, 8};
    assert_int_equal(n, sizeof want);
    assert_memory_equal(key, want, sizeof want);
    e.key = NULL;
    assert_int_equal(ckpt_key_pdc_dart(key, &e), 0);
    assert_int_equal(ckpt_key_pdc_dart(NULL, &e), 0);
    HTU_RC(CKPT_E_INVAL, ckpt_hook_dart_put(NULL, &e));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_foreach_dart(NULL, collect, NULL));
}

static void test_dart_record_round_trip_and_damage(void **state)
{
    (void)state;
    uint8_t buf[256];
    size_t len;
    struct ckpt_dart_entry e = str_entry("k", "v", 2, 99), d;
    e.is_suffix = 1;
    HTU_OK(ckpt_rec_dart_encode(&len, buf, sizeof buf, &e));
    HTU_OK(ckpt_rec_dart_decode(&d, buf, len, NULL));
    assert_string_equal(d.key, "k");
    assert_int_equal(d.value_len, 2);
    assert_memory_equal(d.value, "v", 2);
    assert_int_equal(d.obj_ref, 99);
    assert_int_equal(d.is_suffix, 1);
    assert_int_equal(d.vnode_id, 7);
    HTU_RC(CKPT_E_NOSPACE, ckpt_rec_dart_encode(&len, buf, 4, &e));
    size_t off = 0;
    HTU_RC(CKPT_E_RECORD, ckpt_rec_dart_decode(&d, buf, len / 2, &off));
    buf[0] ^= 0xff;
    HTU_RC(CKPT_E_RECORD, ckpt_rec_dart_decode(&d, buf, len, &off));
}

#define T(f) cmocka_unit_test_setup_teardown(f, htu_setup, htu_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_dart_entries_put_delete_restart),
        T(test_dart_key_layout_and_arguments),
        T(test_dart_record_round_trip_and_damage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
