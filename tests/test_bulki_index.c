/*
 * test_bulki_index.c - indexed decoding (bulki_decode_index,
 * bulki_index_get/getn): the same validation as bulki_decode_doc, the
 * fields in pair order, lookups in any order, an index smaller than the
 * map, non-string and duplicate keys, bad arguments; and the reader's
 * fast-path type table against the type table.
 *
 * index_agrees_with_decode_doc runs over every PDC-written vector and over
 * every truncation and every single-bit flip of a 10-key record: the
 * indexed decode must return the same code and the same error offset as
 * bulki_decode_doc, and on success the same map and the pairs in order.
 */
#include "bulki_int.h" /* bulki_fast_tc */
#include "bulki_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define K(s) BULKI_V_STRN((s), sizeof(s) - 1)

static const char *vector_dir;

/* A 10-key record like PDC's object metadata. */
static const uint64_t obj_id = 1000001, cont_id = 1000000, dims[3] = {1024, 2048, 4096};
static const int32_t user_id = 1001, time_step = 17, data_type = 9, ndim = 3;
static const int64_t create_time = 1717171717000000LL;
static const char *const names[10] = {"obj_id", "obj_name", "cont_id", "user_id", "app_name",
                                      "time_step", "data_type", "ndim", "dims", "create_time"};

static uint8_t *encode_record(size_t *len)
{
    const bulki_pair p[10] = {
        {K("obj_id"), BULKI_V_ITEM(BULKI_T_UINT64, &obj_id)},
        {K("obj_name"), BULKI_V_STRN("/climate/run42/temperature_0001", 31)},
        {K("cont_id"), BULKI_V_ITEM(BULKI_T_UINT64, &cont_id)},
        {K("user_id"), BULKI_V_ITEM(BULKI_T_INT32, &user_id)},
        {K("app_name"), BULKI_V_STRN("vpic", 4)},
        {K("time_step"), BULKI_V_ITEM(BULKI_T_INT32, &time_step)},
        {K("data_type"), BULKI_V_ITEM(BULKI_T_INT32, &data_type)},
        {K("ndim"), BULKI_V_ITEM(BULKI_T_INT32, &ndim)},
        {K("dims"), BULKI_V_ARRAY(BULKI_T_UINT64, dims, 3)},
        {K("create_time"), BULKI_V_ITEM(BULKI_T_INT64, &create_time)},
    };
    const bulki_doc d = {10, p};
    size_t n = 0;
    assert_bulki_rc(bulki_doc_encoded_len(&n, &d), BULKI_OK);
    uint8_t *buf = malloc(n);
    assert_non_null(buf);
    assert_bulki_rc(bulki_encode_doc(len, buf, n, &d), BULKI_OK);
    assert_int_equal(*len, n);
    return buf;
}

/* Fixture: the record, encoded, and an index over it (10 fields). */
struct fix {
    uint8_t *rec;
    size_t len;
    bulki_field fields[10];
    bulki_index ix;
};

static int fix_setup(void **state)
{
    struct fix *f = calloc(1, sizeof *f);
    if (f == NULL)
        return -1;
    f->rec = encode_record(&f->len);
    if (bulki_decode_index(&f->ix, f->fields, 10, f->rec, f->len, NULL) != 0)
        return -1;
    *state = f;
    return 0;
}

static int fix_teardown(void **state)
{
    struct fix *f = *state;
    free(f->rec);
    free(f);
    return 0;
}

static int same_view(const bulki_ent *a, const bulki_ent *b)
{
    return a->base == b->base && a->base_len == b->base_len && a->offset == b->offset &&
           a->end == b->end && a->payload == b->payload && a->payload_len == b->payload_len &&
           a->count == b->count && a->size == b->size && a->type == b->type &&
           a->cls == b->cls && a->depth == b->depth;
}

/* The indexed decode of buf answers exactly as bulki_decode_doc. */
static void check_agrees(const uint8_t *buf, size_t len, size_t cap)
{
    bulki_map m;
    bulki_index ix;
    bulki_field *fields = cap ? calloc(cap, sizeof *fields) : NULL;
    size_t off1 = SIZE_MAX, off2 = SIZE_MAX;
    assert_true(cap == 0 || fields != NULL);
    int rc1 = bulki_decode_doc(&m, buf, len, &off1);
    int rc2 = bulki_decode_index(&ix, fields, cap, buf, len, &off2);
    assert_bulki_rc(rc2, rc1);
    if (rc1 != 0) {
        assert_int_equal(off2, off1);
        free(fields);
        return;
    }
    assert_true(ix.map.base == m.base && ix.map.base_len == m.base_len &&
                ix.map.offset == m.offset && ix.map.end == m.end &&
                ix.map.keys_off == m.keys_off && ix.map.values_off == m.values_off &&
                ix.map.npairs == m.npairs && ix.map.total == m.total && ix.map.depth == m.depth);
    assert_int_equal(ix.n, m.npairs < cap ? m.npairs : cap);
    bulki_map_iter it;
    bulki_ent k, v;
    size_t i = 0;
    bulki_map_iter_init(&it, &m);
    while (i < ix.n && bulki_map_next(&it, &k, &v) == 1) {
        if (k.type == BULKI_T_STRING) {
            assert_ptr_equal(ix.fields[i].key, k.payload);
            assert_int_equal(ix.fields[i].key_len, k.payload_len);
        } else {
            assert_null(ix.fields[i].key);
        }
        assert_true(same_view(&ix.fields[i].value, &v));
        i++;
    }
    assert_int_equal(i, ix.n);
    free(fields);
}

static void index_agrees_with_decode_doc(void **state)
{
    (void)state;
    struct tu_vector *v = NULL;
    size_t orphans = 0, n = tu_load_vectors(vector_dir, &v, &orphans), docs = 0;
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        if (v[i].entity)
            continue;
        docs++;
        for (size_t cap = 0; cap <= 4; cap += 2)
            check_agrees(v[i].bin, v[i].bin_len, cap);
        check_agrees(v[i].bin, v[i].bin_len, 64);
    }
    assert_true(docs > 0);
    tu_free_vectors(v, n);

    size_t len;
    uint8_t *rec = encode_record(&len);
    for (size_t cut = 0; cut <= len; cut++) { /* every truncation */
        uint8_t *t = tu_dup(rec, cut);
        check_agrees(t, cut, 10);
        free(t);
    }
    for (size_t bit = 0; bit < len * 8; bit++) { /* every single-bit flip */
        uint8_t *t = tu_dup(rec, len);
        t[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        check_agrees(t, len, 10);
        check_agrees(t, len, 3);
        free(t);
    }
    free(rec);
}

/* The value of key i, checked through its typed getter. */
static void check_value(const bulki_ent *e, int i)
{
    uint64_t u;
    int64_t s;
    const char *str;
    size_t slen;
    switch (i) {
    case 0:
    case 2:
        assert_bulki_rc(bulki_ent_u64(&u, e), BULKI_OK);
        assert_int_equal(u, i == 0 ? obj_id : cont_id);
        break;
    case 1:
    case 4:
        assert_bulki_rc(bulki_ent_str(&str, &slen, e), BULKI_OK);
        assert_string_equal(str, i == 1 ? "/climate/run42/temperature_0001" : "vpic");
        break;
    case 8:
        for (uint64_t d = 0; d < 3; d++) {
            assert_bulki_rc(bulki_ent_elem_u64(&u, e, d), BULKI_OK);
            assert_int_equal(u, dims[d]);
        }
        break;
    default:
        assert_bulki_rc(bulki_ent_i64(&s, e), BULKI_OK);
        assert_int_equal(s, i == 3 ? user_id
                            : i == 5 ? time_step
                            : i == 6 ? data_type
                            : i == 7 ? ndim
                                     : create_time);
    }
}

static void lookups_in_any_order(void **state)
{
    struct fix *fx = *state;
    bulki_index ix = fx->ix;
    bulki_ent e;
    assert_int_equal(ix.n, 10);
    /* in order: each lookup starts at the pair after the previous hit */
    for (int i = 0; i < 10; i++) {
        assert_int_equal(ix.next, (size_t)i);
        assert_bulki_rc(bulki_index_get(&e, &ix, names[i]), BULKI_OK);
        check_value(&e, i);
    }
    /* reverse, wrapping around */
    for (int i = 9; i >= 0; i--) {
        assert_bulki_rc(bulki_index_get(&e, &ix, names[i]), BULKI_OK);
        check_value(&e, i);
    }
    /* pseudo-random order, and getn with a key that is not NUL-terminated */
    uint64_t rng = 42;
    for (int n = 0; n < 100; n++) {
        int i = (int)tu_below(&rng, 10);
        char key[32];
        size_t kl = strlen(names[i]);
        memcpy(key, names[i], kl);
        key[kl] = 'X';
        assert_bulki_rc(bulki_index_getn(&e, &ix, key, kl), BULKI_OK);
        check_value(&e, i);
    }
    /* keys that are not there: prefixes, extensions, other case, empty */
    static const char *const missing[] = {"obj", "obj_idx", "OBJ_ID", "", "dims ", "ndi"};
    for (size_t i = 0; i < NELEM(missing); i++)
        assert_bulki_rc(bulki_index_get(&e, &ix, missing[i]), BULKI_E_NOTFOUND);
}

static void index_smaller_than_map(void **state)
{
    struct fix *fx = *state;
    const uint8_t *rec = fx->rec;
    size_t len = fx->len;
    bulki_field fields[3];
    bulki_index ix;
    bulki_ent e;
    for (size_t cap = 0; cap <= 3; cap++) {
        assert_bulki_rc(bulki_decode_index(&ix, cap ? fields : NULL, cap, rec, len, NULL),
                        BULKI_OK);
        assert_int_equal(ix.n, cap);
        for (int i = 9; i >= 0; i--) { /* beyond the index first */
            assert_bulki_rc(bulki_index_get(&e, &ix, names[i]), BULKI_OK);
            check_value(&e, i);
        }
        assert_bulki_rc(bulki_index_get(&e, &ix, "nope"), BULKI_E_NOTFOUND);
    }
}

static void non_string_and_duplicate_keys(void **state)
{
    (void)state;
    static const int32_t ik = 7, one = 1, two = 2, three = 3;
    const bulki_pair p[] = {
        {BULKI_V_ITEM(BULKI_T_INT32, &ik), BULKI_V_ITEM(BULKI_T_INT32, &one)},
        {K("a"), BULKI_V_ITEM(BULKI_T_INT32, &two)},
        {K("b"), BULKI_V_ITEM(BULKI_T_INT32, &three)},
        {K("a"), BULKI_V_ITEM(BULKI_T_INT32, &three)},
    };
    const bulki_doc d = {NELEM(p), p};
    uint8_t buf[512];
    size_t len;
    bulki_field fields[4];
    bulki_index ix;
    bulki_ent e;
    int64_t v;
    assert_bulki_rc(bulki_encode_doc(&len, buf, sizeof buf, &d), BULKI_OK);
    assert_bulki_rc(bulki_decode_index(&ix, fields, 4, buf, len, NULL), BULKI_OK);
    assert_null(fields[0].key);
    assert_int_equal(fields[0].value.type, BULKI_T_INT32);
    /* "a" from the start: the first one; after a hit on "b": the second */
    assert_bulki_rc(bulki_index_get(&e, &ix, "a"), BULKI_OK);
    assert_bulki_rc(bulki_ent_i64(&v, &e), BULKI_OK);
    assert_int_equal(v, 2);
    assert_bulki_rc(bulki_index_get(&e, &ix, "b"), BULKI_OK);
    assert_bulki_rc(bulki_index_get(&e, &ix, "a"), BULKI_OK);
    assert_bulki_rc(bulki_ent_i64(&v, &e), BULKI_OK);
    assert_int_equal(v, 3);
    /* bulki_map_get always returns the first */
    assert_bulki_rc(bulki_map_get(&e, &ix.map, "a"), BULKI_OK);
    assert_bulki_rc(bulki_ent_i64(&v, &e), BULKI_OK);
    assert_int_equal(v, 2);
}

static void bad_arguments(void **state)
{
    struct fix *fx = *state;
    const uint8_t *rec = fx->rec;
    size_t len = fx->len;
    bulki_field fields[10];
    bulki_index ix;
    bulki_ent e;
    assert_bulki_rc(bulki_decode_index(NULL, fields, 10, rec, len, NULL), BULKI_E_INVAL);
    assert_bulki_rc(bulki_decode_index(&ix, NULL, 10, rec, len, NULL), BULKI_E_INVAL);
    assert_bulki_rc(bulki_decode_index(&ix, fields, 10, NULL, len, NULL), BULKI_E_INVAL);
    assert_bulki_rc(bulki_decode_index(&ix, fields, 10, NULL, 0, NULL), BULKI_E_TRUNCATED);
    assert_int_equal(ix.n, 0); /* a failed decode leaves an empty index */
    assert_bulki_rc(bulki_index_get(&e, &ix, "obj_id"), BULKI_E_NOTFOUND);
    assert_bulki_rc(bulki_decode_index(&ix, fields, 10, rec, len, NULL), BULKI_OK);
    assert_bulki_rc(bulki_index_get(&e, &ix, NULL), BULKI_E_INVAL);
    assert_bulki_rc(bulki_index_get(NULL, &ix, "obj_id"), BULKI_E_INVAL);
    assert_bulki_rc(bulki_index_get(&e, NULL, "obj_id"), BULKI_E_INVAL);
    assert_bulki_rc(bulki_index_getn(&e, &ix, NULL, 3), BULKI_E_INVAL);
    assert_bulki_rc(bulki_index_getn(&e, &ix, NULL, 0), BULKI_E_NOTFOUND);
}

/* The reader's fast-path table says for each type byte what the type
 * table says. */
static void fast_table_matches_type_table(void **state)
{
    (void)state;
    for (unsigned tc = 0; tc < 64; tc++) {
        const struct bulki_type_info *ti = bulki_type_info(tc & 0x1F);
        unsigned cls = tc >> 5, want;
        if (ti == NULL || ti->kind == BULKI_KIND_NESTED ||
            (ti->kind == BULKI_KIND_STRING && cls == BULKI_ARRAY))
            want = 0;
        else if (ti->kind == BULKI_KIND_STRING)
            want = BULKI_FAST_OK | BULKI_FAST_STR;
        else
            want = BULKI_FAST_OK | ti->width |
                   (ti->kind == BULKI_KIND_BOOL ? BULKI_FAST_BOOL : 0);
        if (bulki_fast_tc[tc] != want)
            print_error("type byte %u: table %u, type table says %u\n", tc,
                        bulki_fast_tc[tc], want);
        assert_int_equal(bulki_fast_tc[tc], want);
    }
}

int main(int argc, char **argv)
{
    vector_dir = tu_vector_dir(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fast_table_matches_type_table),
        cmocka_unit_test(index_agrees_with_decode_doc),
        cmocka_unit_test_setup_teardown(lookups_in_any_order, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(index_smaller_than_map, fix_setup, fix_teardown),
        cmocka_unit_test(non_string_and_duplicate_keys),
        cmocka_unit_test_setup_teardown(bad_arguments, fix_setup, fix_teardown),
    };
    return cmocka_run_group_tests_name("bulki_index", tests, NULL, NULL);
}
