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
#include "bulki_fast.h" /* the field getters' inline paths */
#include "bulki_int.h"  /* bulki_fast_tc */
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

/* The view of indexed pair f's value (asserted to exist). */
static bulki_ent fview(const bulki_index *ix, const bulki_field *f)
{
    bulki_ent e;
    memset(&e, 0, sizeof e);
    assert_bulki_rc(bulki_field_value(&e, ix, f), BULKI_OK);
    return e;
}

/* bulki_decode_index (its one-pass try at a record's commonest shape,
 * with the general parser behind it) answers exactly as the general
 * parser alone: the same error and offset, or the same map and index. */
static void check_fast_is_general(const uint8_t *buf, size_t len, size_t cap)
{
    bulki_index a, b;
    bulki_field fa[16], fb[16];
    size_t oa = SIZE_MAX, ob = SIZE_MAX;
    assert_true(cap <= 16);
    memset(fa, 0, sizeof fa);
    memset(fb, 0, sizeof fb);
    int ra = bulki_decode_index(&a, fa, cap, buf, len, &oa);
    int rb = bulki_decode_index_general(&b, fb, cap, buf, len, &ob);
    assert_bulki_rc(ra, rb);
    if (ra != 0) {
        assert_int_equal(oa, ob);
        return;
    }
    assert_true(a.map.base == b.map.base && a.map.base_len == b.map.base_len &&
                a.map.offset == b.map.offset && a.map.end == b.map.end &&
                a.map.keys_off == b.map.keys_off && a.map.values_off == b.map.values_off &&
                a.map.npairs == b.map.npairs && a.map.total == b.map.total &&
                a.map.depth == b.map.depth);
    assert_int_equal(a.n, b.n);
    for (size_t i = 0; i < a.n; i++) {
        assert_ptr_equal(fa[i].key, fb[i].key);
        assert_int_equal(fa[i].key_len, fb[i].key_len);
        assert_int_equal(fa[i].value_off, fb[i].value_off);
        assert_int_equal(fa[i].value_end, fb[i].value_end);
    }
}

/* The indexed decode of buf answers exactly as bulki_decode_doc. */
static void check_agrees(const uint8_t *buf, size_t len, size_t cap)
{
    check_fast_is_general(buf, len, cap < 16 ? cap : 16);
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
    while (i < ix.n && bulki_map_next(&k, &v, &it) == 1) {
        if (k.type == BULKI_T_STRING) {
            assert_ptr_equal(ix.fields[i].key, k.payload);
            assert_int_equal(ix.fields[i].key_len, k.payload_len);
        } else {
            assert_null(ix.fields[i].key);
        }
        bulki_ent fv = fview(&ix, &ix.fields[i]), iv;
        assert_true(same_view(&fv, &v));
        assert_bulki_rc(bulki_field_value_inline(&iv, &ix, &ix.fields[i]), BULKI_OK);
        assert_true(same_view(&iv, &v));
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
    assert_int_equal(fview(&ix, &fields[0]).type, BULKI_T_INT32);
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

/* f is no value of ix: the view and every field getter, inline or not,
 * say BULKI_E_INVAL (under ASan: without reading outside the buffer). */
static void check_no_value(const bulki_index *ix, const bulki_field *f)
{
    bulki_ent e;
    uint64_t u;
    int64_t s;
    const char *str = NULL;
    size_t slen = 0;
    assert_bulki_rc(bulki_field_value(&e, ix, f), BULKI_E_INVAL);
    assert_bulki_rc(bulki_field_value_inline(&e, ix, f), BULKI_E_INVAL);
    assert_bulki_rc(bulki_field_u64_inline(&u, ix, f), BULKI_E_INVAL);
    assert_bulki_rc(bulki_field_i64_inline(&s, ix, f), BULKI_E_INVAL);
    assert_bulki_rc(bulki_field_str_inline(&str, &slen, ix, f), BULKI_E_INVAL);
    assert_bulki_rc(bulki_field_elem_u64_inline(&u, ix, f, 0), BULKI_E_INVAL);
    assert_bulki_rc(bulki_field_u64_array_inline(&u, 1, ix, f), BULKI_E_INVAL);
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
    /* pairs that do not describe a value of the buffer */
    uint64_t u;
    assert_bulki_rc(bulki_decode_index(&ix, fields, 10, rec, len, NULL), BULKI_OK);
    bulki_field f = fields[0]; /* obj_id, a PDC_UINT64 */
    assert_bulki_rc(bulki_field_value(NULL, &ix, &f), BULKI_E_INVAL);
    assert_bulki_rc(bulki_field_value(&e, NULL, &f), BULKI_E_INVAL);
    assert_bulki_rc(bulki_field_value(&e, &ix, NULL), BULKI_E_INVAL);
    f.value_end--; /* shorter than its size says */
    assert_bulki_rc(bulki_field_value(&e, &ix, &f), BULKI_E_INVAL);
    assert_bulki_rc(bulki_field_u64_inline(&u, &ix, &f), BULKI_E_INVAL);
    f.value_end += 2; /* longer */
    assert_bulki_rc(bulki_field_value(&e, &ix, &f), BULKI_E_INVAL);
    f = fields[0];
    f.value_off++; /* not where an entity starts: its type byte as a size */
    assert_bulki_rc(bulki_field_value(&e, &ix, &f), BULKI_E_INVAL);
    f = fields[9];
    f.value_end = len + 1; /* past the buffer */
    assert_bulki_rc(bulki_field_value(&e, &ix, &f), BULKI_E_INVAL);
    f.value_off = f.value_end = fields[9].value_off; /* empty */
    assert_bulki_rc(bulki_field_value(&e, &ix, &f), BULKI_E_INVAL);
    assert_bulki_rc(bulki_field_str(&(const char *){NULL}, NULL, &ix, &f), BULKI_E_INVAL);
    f = fields[0];
    assert_bulki_rc(bulki_field_value(&e, &ix, &f), BULKI_OK);
    assert_bulki_rc(bulki_field_str(&(const char *){NULL}, NULL, &ix, &f), BULKI_E_MISMATCH);
    /* a field that starts before the buffer (its start "wraps" below 0)
     * and is as long as a value of each getter's type: no getter reads */
    for (size_t n = 4; n <= 40; n++) {
        f.value_end = 2;
        f.value_off = f.value_end - n;
        check_no_value(&ix, &f);
    }
    /* after a failed decode the index is empty: no pair is a value */
    f = fields[0];
    assert_bulki_rc(bulki_decode_index(&ix, fields, 10, rec, len - 1, NULL), BULKI_E_TRUNCATED);
    check_no_value(&ix, &f);
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

/* ---- the fast paths against the format's rules ---- */

/* A BULKI of the given raw key and value entities (pairs of them, in
 * order), with total, header and data sizes and both offsets written as a
 * valid BULKI would have them if every entity's notional size is its first
 * byte (all entities here have one-byte sizes). */
static size_t build_doc(uint8_t *out, const uint8_t *const *keys, const size_t *klen,
                        const uint8_t *const *vals, const size_t *vlen, size_t n,
                        size_t *first_key, size_t *first_val)
{
    uint64_t hs = 0, ds = 0;
    for (size_t i = 0; i < n; i++) {
        hs += keys[i][0];
        ds += vals[i][0];
    }
    size_t p = bulki_varint_put(out, BULKI_DOC_HDR + hs + ds);
    p += bulki_varint_put(out + p, n);
    p += bulki_varint_put(out + p, hs);
    p += bulki_varint_put(out + p, ds);
    if (first_key)
        *first_key = p;
    for (size_t i = 0; i < n; i++) {
        memcpy(out + p, keys[i], klen[i]);
        p += klen[i];
    }
    p += bulki_varint_put(out + p, p);
    if (first_val)
        *first_val = p;
    for (size_t i = 0; i < n; i++) {
        memcpy(out + p, vals[i], vlen[i]);
        p += vlen[i];
    }
    p += bulki_varint_put(out + p, p);
    return p;
}

/* What BULKI v0.1 says of a base-type entity with one-byte size and count:
 * valid or not (tests only call it for non-nested type bits). */
static int entity_valid(uint8_t size, uint8_t tc, uint8_t count, const uint8_t *pl)
{
    const struct bulki_type_info *ti = bulki_type_info(tc & 0x1F);
    unsigned cls = (tc >> 5) & 1;
    if ((tc & 0xC0) || ti == NULL || (cls == BULKI_ITEM && count != 1) || size < BULKI_ENT_HDR)
        return 0;
    size_t plen = (size_t)size - BULKI_ENT_HDR;
    if (ti->kind == BULKI_KIND_STRING) {
        if (cls == BULKI_ARRAY || plen == 0 || pl[plen - 1] != 0)
            return 0;
        return memchr(pl, 0, plen - 1) == NULL;
    }
    if ((size_t)count * ti->width != plen)
        return 0;
    if (ti->kind == BULKI_KIND_BOOL)
        for (size_t i = 0; i < plen; i++)
            if (pl[i] > 1)
                return 0;
    return 1;
}

/* Decode buf both ways (indexed and not) and as the lone entity check:
 * the same answer, and success exactly when `valid`. */
static void check_doc(const uint8_t *buf, size_t len, int valid, const char *what, unsigned a,
                      unsigned b, unsigned c)
{
    bulki_field f[4];
    bulki_index ix;
    bulki_map m;
    size_t o1 = 0, o2 = 0;
    int rc1 = bulki_decode_index(&ix, f, 4, buf, len, &o1);
    int rc2 = bulki_decode_doc(&m, buf, len, &o2);
    check_fast_is_general(buf, len, 4);
    if ((rc1 == 0) != valid || rc1 != rc2 || (rc1 != 0 && o1 != o2))
        print_error("%s %u/%u/%u: decode_index %s at %zu, decode_doc %s at %zu, rules: %s\n",
                    what, a, b, c, bulki_errname(rc1), o1, bulki_errname(rc2), o2,
                    valid ? "valid" : "invalid");
    assert_int_equal(rc1 == 0, valid);
    assert_int_equal(rc1, rc2);
    if (rc1 != 0)
        assert_int_equal(o1, o2);
}

/* Every header (size 0..127, every type byte but the nested types, counts
 * 0..4, 8, 127) with three payloads, as a map's key and as its value, in
 * a one-pair map and before and after another pair: the word-at-a-time
 * checks of keys and values accept exactly what the rules accept. */
static void fast_paths_follow_the_rules(void **state)
{
    (void)state;
    static const uint8_t counts[] = {0, 1, 2, 3, 4, 8, 127};
    static const uint8_t k_ok[] = {20, BULKI_T_STRING, 1, 'k', 0};
    static const uint8_t v_ok[] = {22, BULKI_T_INT32, 1, 7, 0, 0, 0};
    static const uint8_t v_pad[] = {18 + 16, BULKI_T_STRING, 1, 'p', 'p', 'p', 'p', 'p', 'p',
                                    'p', 'p', 'p', 'p', 'p', 'p', 'p', 'p', 'p', 0};
    uint8_t ent[3 + 128], buf[512];
    for (unsigned size = 0; size < 128; size++)
        for (unsigned tc = 0; tc < 256; tc++) {
            if ((tc & 0x1F) == BULKI_T_BULKI || (tc & 0x1F) == BULKI_T_BULKI_ENT)
                continue;
            for (size_t ci = 0; ci < NELEM(counts); ci++)
                for (int pat = 0; pat < 3; pat++) {
                    size_t plen = size >= BULKI_ENT_HDR ? size - BULKI_ENT_HDR : 0;
                    ent[0] = (uint8_t)size;
                    ent[1] = (uint8_t)tc;
                    ent[2] = counts[ci];
                    /* 1s and a final NUL; all 2s; a NUL first and last */
                    memset(ent + 3, pat == 1 ? 2 : 1, plen);
                    if (plen > 0 && pat != 1)
                        ent[3 + plen - 1] = 0;
                    if (plen > 1 && pat == 2)
                        ent[3] = 0;
                    int valid = entity_valid((uint8_t)size, (uint8_t)tc, counts[ci], ent + 3);
                    /* alone (a short record), then before and after a
                     * pair with a 16-byte string (room after it: the
                     * commonest shape's pass, index_common, sees it) */
                    for (int with = 0; with < 3; with++) {
                        size_t t = with == 2, n = with ? 2 : 1;
                        const uint8_t *k[2] = {k_ok, k_ok}, *v[2] = {v_pad, v_pad};
                        size_t kl[2] = {sizeof k_ok, sizeof k_ok};
                        size_t vl[2] = {sizeof v_pad, sizeof v_pad};
                        k[t] = ent;
                        kl[t] = 3 + plen;
                        v[t] = v_ok;
                        vl[t] = sizeof v_ok;
                        size_t len = build_doc(buf, k, kl, v, vl, n, NULL, NULL);
                        check_doc(buf, len, valid, "key", size, tc, counts[ci]);
                        k[t] = k_ok;
                        kl[t] = sizeof k_ok;
                        v[t] = ent;
                        vl[t] = 3 + plen;
                        len = build_doc(buf, k, kl, v, vl, n, NULL, NULL);
                        check_doc(buf, len, valid, "value", size, tc, counts[ci]);
                    }
                }
        }
}

/* Strings of 1 to 60 bytes with the NUL missing, or another NUL at every
 * position, as the last value (little room after it) and followed by a
 * long value (room for 16- and 32-byte compares): rejected with
 * BULKI_E_STRING at the first NUL, or at the last byte. */
static void string_checks_find_every_nul(void **state)
{
    (void)state;
    static const uint8_t k_ok[] = {20, BULKI_T_STRING, 1, 'k', 0};
    uint8_t str[3 + 64], lng[3 + 64], buf[512];
    lng[0] = 18 + 60;
    lng[1] = BULKI_T_STRING;
    lng[2] = 1;
    memset(lng + 3, 'x', 59);
    lng[3 + 59] = 0;
    for (size_t n = 1; n <= 60; n++)
        for (size_t nul = 0; nul <= n; nul++) { /* nul == n: none inside */
            for (int last = 0; last < 2; last++) { /* is the last byte a NUL? */
                if (nul == n - 1 && !last)
                    continue;
                str[0] = (uint8_t)(18 + n);
                str[1] = BULKI_T_STRING;
                str[2] = 1;
                memset(str + 3, 'a', n);
                if (last)
                    str[3 + n - 1] = 0;
                if (nul < n)
                    str[3 + nul] = 0;
                int valid = last && (nul == n || nul == n - 1);
                for (int as_key = 0; as_key < 2; as_key++)
                    for (int room = 0; room < 2; room++) {
                        const uint8_t *k[2] = {as_key ? str : k_ok, k_ok};
                        const uint8_t *v[2] = {as_key ? k_ok : str, lng};
                        size_t kl[2] = {as_key ? 3 + n : sizeof k_ok, sizeof k_ok};
                        size_t vl[2] = {as_key ? sizeof k_ok : 3 + n, sizeof lng - 4};
                        size_t kp, vp;
                        size_t len = build_doc(buf, k, kl, v, vl, room ? 2 : 1, &kp, &vp);
                        check_doc(buf, len, valid, "string", (unsigned)n, (unsigned)nul,
                                  (unsigned)(as_key * 2 + room));
                        if (!valid) {
                            /* the offending byte: the first NUL, else the last */
                            size_t off = 0, at = (as_key ? kp : vp) + 3;
                            const uint8_t *z = memchr(str + 3, 0, n);
                            at += z ? (size_t)(z - (str + 3)) : n - 1;
                            bulki_index ix;
                            bulki_field f[2];
                            assert_bulki_rc(bulki_decode_index(&ix, f, 2, buf, len, &off),
                                            BULKI_E_STRING);
                            assert_int_equal(off, at);
                        }
                    }
            }
        }
}

/* The header table of the item check says for each type byte what the
 * type table says. */
static void item_table_matches_type_table(void **state)
{
    (void)state;
    for (unsigned tc = 0; tc < 256; tc++) {
        const struct bulki_type_info *ti = bulki_type_info(tc & 0x1F);
        uint32_t want = BULKI_NO_HDR;
        if (tc < 32 && ti != NULL && ti->width > 0 && ti->kind != BULKI_KIND_BOOL)
            want = (uint32_t)(BULKI_ENT_HDR + ti->width) | tc << 8 | 1u << 16;
        assert_int_equal(bulki_item_hdr[tc], want);
    }
}

/* bulki_index_find: the pair in the index; beyond the index ix.beyond;
 * NULL when absent or for bad arguments. */
static void find_returns_pairs_in_the_index(void **state)
{
    struct fix *fx = *state;
    bulki_index ix = fx->ix;
    bulki_field small[3];
    for (int i = 0; i < 10; i++) {
        const bulki_field *f = bulki_index_find(&ix, names[i], strlen(names[i]));
        assert_ptr_equal(f, &fx->fields[i]);
        bulki_ent e = fview(&ix, f);
        check_value(&e, i);
    }
    for (int i = 9; i >= 0; i--)
        assert_ptr_equal(bulki_index_find(&ix, names[i], strlen(names[i])), &fx->fields[i]);
    assert_null(bulki_index_find(&ix, "obj", 3));
    assert_null(bulki_index_find(&ix, "obj_idx", 7));
    assert_null(bulki_index_find(NULL, "obj_id", 6));
    assert_null(bulki_index_find(&ix, NULL, 6));
    /* beyond a 3-pair index: the same value as bulki_map_get, in ix.beyond */
    assert_bulki_rc(bulki_decode_index(&ix, small, 3, fx->rec, fx->len, NULL), BULKI_OK);
    for (int i = 9; i >= 0; i--) {
        const bulki_field *f = bulki_index_find(&ix, names[i], strlen(names[i]));
        assert_non_null(f);
        if (i >= 3)
            assert_ptr_equal(f, &ix.beyond);
        else
            assert_ptr_equal(f, &small[i]);
        assert_int_equal(f->key_len, strlen(names[i]));
        assert_memory_equal(f->key, names[i], f->key_len + 1);
        bulki_ent want, e = fview(&ix, f);
        assert_bulki_rc(bulki_map_get(&want, &ix.map, names[i]), BULKI_OK);
        assert_true(same_view(&e, &want));
        check_value(&e, i);
    }
    assert_null(bulki_index_find(&ix, "nope", 4));
}

/* bulki_ent_index: a nested BULKI indexed like a whole buffer. */
/* The inline getters give exactly what their functions give: on view e,
 * for elements 0 .. count + 1. */
static void check_getters_inline(const bulki_ent *e)
{
    uint64_t u1 = 7, u2 = 7;
    int64_t s1 = 7, s2 = 7;
    assert_bulki_rc(bulki_ent_u64_inline(&u1, e), bulki_ent_u64(&u2, e));
    assert_int_equal(u1, u2);
    assert_bulki_rc(bulki_ent_i64_inline(&s1, e), bulki_ent_i64(&s2, e));
    assert_int_equal(s1, s2);
    uint64_t last = e->count < 64 ? e->count + 1 : 64;
    for (uint64_t i = 0; i <= last; i++) {
        u1 = u2 = 7;
        assert_bulki_rc(bulki_ent_elem_u64_inline(&u1, e, i), bulki_ent_elem_u64(&u2, e, i));
        assert_int_equal(u1, u2);
    }
}

/* The inline lookups answer as bulki_index_find and bulki_index_getn,
 * from the same state: the same pair (or NULL), the same view (or error)
 * and the same next position. */
static void check_find_inline(bulki_index *ix, const char *key, size_t key_len)
{
    bulki_index a = *ix, b = *ix, c = *ix, d = *ix;
    const bulki_field *ea = bulki_index_find_inline(&a, key, key_len);
    const bulki_field *eb = bulki_index_find(&b, key, key_len);
    if (ea == &a.beyond || eb == &b.beyond) { /* beyond the index: a copy each */
        assert_true(ea == &a.beyond && eb == &b.beyond);
        assert_true(ea->key == eb->key && ea->key_len == eb->key_len &&
                    ea->value_off == eb->value_off && ea->value_end == eb->value_end);
    } else {
        assert_ptr_equal(ea, eb);
    }
    assert_int_equal(a.next, b.next);
    bulki_ent vc, vd;
    memset(&vc, 0, sizeof vc);
    memset(&vd, 0, sizeof vd);
    int rc = bulki_index_getn_inline(&vc, &c, key, key_len);
    assert_bulki_rc(rc, bulki_index_getn(&vd, &d, key, key_len));
    assert_true(same_view(&vc, &vd));
    assert_int_equal(c.next, b.next);
    assert_int_equal(d.next, b.next);
    if (eb != NULL) {
        bulki_ent want = fview(&b, eb);
        assert_bulki_rc(rc, BULKI_OK);
        assert_true(same_view(&vc, &want));
    } else {
        assert_bulki_rc(rc, key == NULL && key_len > 0 ? BULKI_E_INVAL : BULKI_E_NOTFOUND);
    }
    *ix = b;
}

/* The inline view and field getters give exactly what their functions
 * give on pair f of ix, whatever f holds; and the field getters what the
 * view getters give on its view. */
static void check_field_inline(const bulki_index *ix, const bulki_field *f)
{
    bulki_ent a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    int rc = bulki_field_value(&b, ix, f);
    assert_bulki_rc(bulki_field_value_inline(&a, ix, f), rc);
    assert_true(same_view(&a, &b));
    if (rc == 0) { /* the view stays in the buffer and in the field */
        assert_true(b.offset == f->value_off && b.end == f->value_end);
        assert_true(b.payload >= ix->map.base + b.offset &&
                    b.payload + b.payload_len <= ix->map.base + b.end);
    }
    uint64_t u1 = 7, u2 = 7, u3 = 7;
    int64_t s1 = 7, s2 = 7, s3 = 7;
    const char *c1 = NULL, *c2 = NULL, *c3 = NULL;
    size_t n1 = 7, n2 = 7, n3 = 7;
    int r;
    assert_bulki_rc(bulki_field_u64_inline(&u1, ix, f), r = bulki_field_u64(&u2, ix, f));
    assert_int_equal(u1, u2);
    if (rc == 0) {
        assert_bulki_rc(r, bulki_ent_u64(&u3, &b));
        assert_int_equal(u2, u3);
    }
    assert_bulki_rc(bulki_field_i64_inline(&s1, ix, f), r = bulki_field_i64(&s2, ix, f));
    assert_int_equal(s1, s2);
    if (rc == 0) {
        assert_bulki_rc(r, bulki_ent_i64(&s3, &b));
        assert_int_equal(s2, s3);
    }
    assert_bulki_rc(bulki_field_str_inline(&c1, &n1, ix, f), r = bulki_field_str(&c2, &n2, ix, f));
    assert_true(c1 == c2 && n1 == n2);
    if (rc == 0) {
        assert_bulki_rc(r, bulki_ent_str(&c3, &n3, &b));
        assert_true(c2 == c3 && n2 == n3);
        assert_bulki_rc(bulki_ent_str_inline(&c1, &n1, &b), r);
        assert_true(c1 == c3 && n1 == n3);
    }
    uint64_t last = rc == 0 && b.count < 20 ? b.count + 1 : 20;
    for (uint64_t i = 0; i <= last; i++) {
        u1 = u2 = u3 = 7;
        assert_bulki_rc(bulki_field_elem_u64_inline(&u1, ix, f, i),
                        r = bulki_field_elem_u64(&u2, ix, f, i));
        assert_int_equal(u1, u2);
        if (rc == 0) {
            assert_bulki_rc(r, bulki_ent_elem_u64(&u3, &b, i));
            assert_int_equal(u2, u3);
        }
    }
    /* the first n elements at once: what the elements one by one give */
    for (size_t n = 0; n <= 5; n++) {
        uint64_t a1[5] = {7, 7, 7, 7, 7}, a2[5] = {7, 7, 7, 7, 7}, a3[5] = {7, 7, 7, 7, 7};
        int ra = bulki_field_u64_array_inline(a1, n, ix, f);
        assert_bulki_rc(ra, bulki_field_u64_array(a2, n, ix, f));
        int re = rc;
        for (size_t i = 0; i < n && re == 0; i++)
            re = bulki_field_elem_u64(&a3[i], ix, f, i);
        assert_bulki_rc(ra, re);
        assert_memory_equal(a1, a3, sizeof a1);
        assert_memory_equal(a2, a3, sizeof a2);
    }
}

/* Every field [off, end) over buf (in and out of bounds, entities or
 * not) against the functions. */
static void check_all_fields(const uint8_t *buf, size_t len)
{
    bulki_index ix;
    memset(&ix, 0, sizeof ix);
    ix.map.base = buf;
    ix.map.base_len = len;
    ix.map.depth = 1;
    for (size_t off = 0; off <= len + 1; off++)
        for (size_t end = off > 2 ? off - 2 : 0; end <= len + 2 && end <= off + 140; end++) {
            bulki_field f = {NULL, 0, off, end};
            check_field_inline(&ix, &f);
        }
    bulki_field f = {NULL, 0, 0, len};
    ix.map.base = NULL; /* an empty index */
    check_field_inline(&ix, &f);
}

/* bulki_index_find_inline, bulki_index_getn_inline, bulki_field_value_inline,
 * the bulki_field_*_inline and bulki_ent_*_inline getters against their
 * functions: every pair of every vector (in order, in reverse, missing
 * keys, a small index), every [off, end) as a pair over the record and
 * the smaller vectors, and hand-made views of every type code, class,
 * count and payload length. */
static void inline_paths_match_functions(void **state)
{
    (void)state;
    struct tu_vector *v = NULL;
    size_t orphans = 0, n = tu_load_vectors(vector_dir, &v, &orphans);
    size_t rl;
    uint8_t *rec = encode_record(&rl);
    assert_true(n > 0);
    for (size_t i = 0; i <= n; i++) {
        const uint8_t *buf = i < n ? v[i].bin : rec;
        size_t len = i < n ? v[i].bin_len : rl;
        if (i < n && v[i].entity)
            continue;
        for (size_t cap = 2; cap <= 64; cap += 62) {
            bulki_field f[64];
            bulki_index ix;
            if (bulki_decode_index(&ix, f, cap, buf, len, NULL) != 0)
                continue;
            for (size_t k = 0; k < ix.n; k++) {
                bulki_ent e = fview(&ix, &f[k]);
                check_getters_inline(&e);
                check_field_inline(&ix, &f[k]);
                if (f[k].key != NULL)
                    check_find_inline(&ix, f[k].key, f[k].key_len);
            }
            for (size_t k = ix.n; k-- > 0;)
                if (f[k].key != NULL)
                    check_find_inline(&ix, f[k].key, f[k].key_len);
            for (size_t k = 0; k < NELEM(names); k++) /* keys of the record */
                check_find_inline(&ix, names[k], strlen(names[k]));
            check_find_inline(&ix, "no such key", 11);
            check_find_inline(&ix, "", 0);
            check_find_inline(&ix, NULL, 0);
            check_find_inline(&ix, NULL, 3);
        }
    }
    assert_null(bulki_index_find_inline(NULL, "obj_id", 6));
    check_all_fields(rec, rl);
    for (size_t i = 0; i < n; i++)
        if (v[i].bin_len < 400)
            check_all_fields(v[i].bin, v[i].bin_len);
    tu_free_vectors(v, n);
    free(rec);

    /* hand-made views: not all of them valid entities, none read out of
     * its payload */
    static const size_t plens[] = {0, 1, 2, 4, 7, 8, 16, 24};
    static const uint64_t counts[] = {0, 1, 2, 3, 4};
    uint8_t *pl = tu_dup((const uint8_t[24]){0x81, 2, 3, 4, 5, 6, 7, 0xF8, 9, 10, 11, 12,
                                             13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 0x80},
                         24);
    for (unsigned t = 0; t <= 23; t++)
        for (unsigned cls = 0; cls <= 2; cls++)
            for (size_t c = 0; c < NELEM(counts); c++)
                for (size_t p = 0; p < NELEM(plens); p++) {
                    bulki_ent e = {.base = pl, .base_len = 24, .payload = pl + 24 - plens[p],
                                   .payload_len = plens[p], .count = counts[c],
                                   .size = 18 + plens[p], .type = (uint8_t)t,
                                   .cls = (uint8_t)cls};
                    e.offset = 0;
                    e.end = 24;
                    check_getters_inline(&e);
                }
    free(pl);
}

static void nested_doc_index(void **state)
{
    (void)state;
    static const int32_t one = 1, two = 2;
    static const double d = 0.5;
    const bulki_pair inner0[] = {{K("a"), BULKI_V_ITEM(BULKI_T_INT32, &one)},
                                 {K("bb"), BULKI_V_ITEM(BULKI_T_DOUBLE, &d)},
                                 {K("ccc"), BULKI_V_STRN("hello", 5)}};
    const bulki_pair inner1[] = {{K("z"), BULKI_V_ITEM(BULKI_T_INT32, &two)}};
    const bulki_doc docs[2] = {{NELEM(inner0), inner0}, {NELEM(inner1), inner1}};
    const bulki_pair outer[] = {
        {K("one"), BULKI_V_DOC(&docs[0])},
        {K("two"), {.type = BULKI_T_BULKI, .cls = BULKI_ARRAY, .count = 2, .u.doc = docs}},
        {K("n"), BULKI_V_ITEM(BULKI_T_INT32, &one)},
    };
    const bulki_doc od = {NELEM(outer), outer};
    uint8_t buf[1024];
    size_t len;
    bulki_field of[4], nf[4];
    bulki_index ox, nx;
    bulki_ent e;
    int64_t v;
    assert_bulki_rc(bulki_encode_doc(&len, buf, sizeof buf, &od), BULKI_OK);
    assert_bulki_rc(bulki_decode_index(&ox, of, 4, buf, len, NULL), BULKI_OK);
    bulki_ent v0 = fview(&ox, &of[0]), v1 = fview(&ox, &of[1]), v2 = fview(&ox, &of[2]);
    for (size_t cap = 0; cap <= 4; cap++) {
        bulki_map m;
        assert_bulki_rc(bulki_ent_index(&nx, cap ? nf : NULL, cap, &v0, 0), BULKI_OK);
        assert_bulki_rc(bulki_ent_doc(&m, &v0, 0), BULKI_OK);
        assert_true(nx.map.offset == m.offset && nx.map.end == m.end &&
                    nx.map.npairs == m.npairs && nx.map.depth == m.depth &&
                    nx.map.keys_off == m.keys_off && nx.map.values_off == m.values_off);
        assert_int_equal(nx.n, cap < 3 ? cap : 3);
        assert_bulki_rc(bulki_index_get(&e, &nx, "ccc"), BULKI_OK);
        assert_string_equal((const char *)e.payload, "hello");
        assert_bulki_rc(bulki_index_get(&e, &nx, "a"), BULKI_OK);
        assert_bulki_rc(bulki_ent_i64(&v, &e), BULKI_OK);
        assert_int_equal(v, 1);
        assert_bulki_rc(bulki_index_get(&e, &nx, "n"), BULKI_E_NOTFOUND); /* the outer's */
    }
    /* element 1 of a BULKI array */
    assert_bulki_rc(bulki_ent_index(&nx, nf, 4, &v1, 1), BULKI_OK);
    assert_int_equal(nx.n, 1);
    assert_bulki_rc(bulki_index_get(&e, &nx, "z"), BULKI_OK);
    assert_bulki_rc(bulki_ent_i64(&v, &e), BULKI_OK);
    assert_int_equal(v, 2);
    /* errors leave an empty index */
    assert_bulki_rc(bulki_ent_index(&nx, nf, 4, &v1, 2), BULKI_E_NOTFOUND);
    assert_int_equal(nx.n, 0);
    assert_bulki_rc(bulki_ent_index(&nx, nf, 4, &v2, 0), BULKI_E_MISMATCH);
    assert_int_equal(nx.n, 0);
    assert_bulki_rc(bulki_index_get(&e, &nx, "z"), BULKI_E_NOTFOUND);
    assert_bulki_rc(bulki_ent_index(NULL, nf, 4, &v0, 0), BULKI_E_INVAL);
    assert_bulki_rc(bulki_ent_index(&nx, NULL, 4, &v0, 0), BULKI_E_INVAL);
    assert_bulki_rc(bulki_ent_index(&nx, nf, 4, NULL, 0), BULKI_E_INVAL);
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
        cmocka_unit_test(item_table_matches_type_table),
        cmocka_unit_test(fast_paths_follow_the_rules),
        cmocka_unit_test(string_checks_find_every_nul),
        cmocka_unit_test_setup_teardown(find_returns_pairs_in_the_index, fix_setup,
                                        fix_teardown),
        cmocka_unit_test(nested_doc_index),
        cmocka_unit_test(inline_paths_match_functions),
    };
    return cmocka_run_group_tests_name("bulki_index", tests, NULL, NULL);
}
