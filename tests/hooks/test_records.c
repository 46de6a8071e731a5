/*
 * test_records.c - the BULKI record codecs of the hooks (objects, kvtags,
 * containers, regions) and PDC's routing (djb2, home ranks).
 *
 * Round trips of every field; decoding truncated, bit-flipped, random and
 * hand-built records with missing or mistyped fields (always CKPT_E_RECORD,
 * never a crash: records are decoded from exact-size heap copies so ASan
 * sees any read past the end); encoding into a too-small buffer (an error,
 * nothing written past the capacity).
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bulki.h"
#include "hooks_test_util.h"

#define K(s) BULKI_V_STRN(s, sizeof(s) - 1)
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ */
/* helpers                                                             */
/* ------------------------------------------------------------------ */

/* enc_KIND(rec, &len): encode with the two-call protocol (length, then
 * exact buffer); returns a malloc'ed record of *len bytes. */
#define DEFINE_ENC(kind, type)                                                                     \
    static uint8_t *enc_##kind(const type *r, size_t *len)                                         \
    {                                                                                              \
        size_t n = 0, n2 = 0;                                                                      \
        HTU_OK(ckpt_rec_##kind##_encode(&n, NULL, 0, r));                                          \
        assert_true(n > 0);                                                                        \
        uint8_t *b = malloc(n);                                                                    \
        assert_non_null(b);                                                                        \
        HTU_OK(ckpt_rec_##kind##_encode(&n2, b, n, r));                                            \
        assert_int_equal(n, n2);                                                                   \
        *len = n;                                                                                  \
        return b;                                                                                  \
    }
DEFINE_ENC(obj, struct ckpt_obj)
DEFINE_ENC(kvtag, struct ckpt_kvtag)
DEFINE_ENC(cont, struct ckpt_cont)
DEFINE_ENC(region, struct ckpt_region)

/* Copy rec into an exact-size heap buffer, so ASan catches over-reads. */
static uint8_t *dup_rec(const void *rec, size_t len)
{
    uint8_t *b = malloc(len ? len : 1);
    assert_non_null(b);
    if (len)
        memcpy(b, rec, len);
    return b;
}

/* Read every byte a successfully decoded view points at (ASan checks). */
static unsigned touch_str(const char *s)
{
    unsigned x = 0;
    assert_non_null(s);
    while (*s)
        x += (unsigned char)*s++;
    return x;
}

static unsigned touch_obj(const struct ckpt_obj *o)
{
    assert_true(o->ndim <= CKPT_MAX_DIM);
    return touch_str(o->obj_name) + touch_str(o->app_name) + touch_str(o->data_location) +
           touch_str(o->tags);
}

static unsigned touch_kvtag(const struct ckpt_kvtag *t)
{
    unsigned x = t->name ? touch_str(t->name) : 0; /* short names are the key's */
    if (t->size)
        assert_non_null(t->value);
    for (uint32_t i = 0; i < t->size; i++)
        x += ((const uint8_t *)t->value)[i];
    return x;
}

static unsigned touch_region(const struct ckpt_region *g)
{
    unsigned x = touch_str(g->storage_location) + touch_str(g->cache_location);
    assert_true(g->ndim >= 1 && g->ndim <= CKPT_MAX_DIM);
    if (g->has_hist) {
        assert_true(g->hist.nbin >= 0);
        for (size_t i = 0; i < (size_t)g->hist.nbin; i++) {
            x += (unsigned)ckpt_hist_bin(&g->hist, i);
            x += (unsigned)(ckpt_hist_range(&g->hist, 2 * i) != 0.0);
            x += (unsigned)(ckpt_hist_range(&g->hist, 2 * i + 1) != 0.0);
        }
    }
    return x;
}

enum rec_kind { R_OBJ, R_KVTAG, R_CONT, R_REGION };

/* Decode rec (from an exact heap copy) as `kind`; on success read every
 * byte of the view. Returns the decoder's code. */
static int decode_any(enum rec_kind kind, const void *rec, size_t len)
{
    uint8_t *b = dup_rec(rec, len);
    size_t off = 0;
    int rc;
    volatile unsigned sink = 0;
    switch (kind) {
    case R_OBJ: {
        struct ckpt_obj o;
        if ((rc = ckpt_rec_obj_decode(&o, b, len, &off)) == 0)
            sink += touch_obj(&o);
        break;
    }
    case R_KVTAG: {
        struct ckpt_kvtag t;
        if ((rc = ckpt_rec_kvtag_decode(&t, b, len, &off)) == 0)
            sink += touch_kvtag(&t);
        break;
    }
    case R_CONT: {
        struct ckpt_cont c;
        if ((rc = ckpt_rec_cont_decode(&c, b, len, &off)) == 0)
            sink += touch_str(c.cont_name) + touch_str(c.tags);
        break;
    }
    default: {
        struct ckpt_region g;
        if ((rc = ckpt_rec_region_decode(&g, b, len, &off)) == 0)
            sink += touch_region(&g);
        break;
    }
    }
    (void)sink;
    if (rc != 0)
        assert_true(off <= len);
    free(b);
    return rc;
}

/* Encode pairs, leaving out the pair whose key is `key` (repl == NULL) or
 * replacing its value by *repl. Returns a malloc'ed record. */
static uint8_t *enc_variant(const bulki_pair *p, size_t n, const char *key, const bulki_value *repl,
                            size_t *len)
{
    bulki_pair q[32];
    size_t m = 0;
    int found = 0;
    assert_true(n <= NELEM(q));
    for (size_t i = 0; i < n; i++) {
        int match = key && p[i].key.len == strlen(key) && memcmp(p[i].key.u.data, key, p[i].key.len) == 0;
        if (match) {
            found = 1;
            if (repl == NULL)
                continue;
            q[m] = p[i];
            q[m++].value = *repl;
        } else {
            q[m++] = p[i];
        }
    }
    assert_true(key == NULL || found);
    const bulki_doc d = {m, q};
    size_t need = 0, got = 0;
    assert_int_equal(bulki_doc_encoded_len(&need, &d), 0);
    uint8_t *b = malloc(need);
    assert_non_null(b);
    assert_int_equal(bulki_encode_doc(&got, b, need, &d), 0);
    assert_int_equal(got, need);
    *len = need;
    return b;
}

/* Field tables mirroring the record layouts (docs/STORE.md, "Records"). */
static const uint64_t v_id = 1000000042ull, v_cont = 1000000001ull, v_u64 = 77;
static const int32_t v_i32 = 5;
static const uint32_t v_ndim2 = 2, v_u32 = 9;
static const uint64_t v_dims2[2] = {64, 128};
static const int64_t v_i64 = 1700000000000ll;
static const uint8_t v_u8 = 1;
static const int8_t v_type_int = BULKI_T_INT;
static const int32_t v_int_val = 31337;
static const int32_t v_nbin2 = 2;
static const double v_range4[4] = {0, 1, 1, 2}, v_incr = 0.5;
static const uint64_t v_bin2[2] = {3, 4};
/* The histogram of the region table; filled by init_tables() (compound
 * literals are not constant initializers). */
static bulki_pair v_hist_pairs[5];
static bulki_doc v_hist_doc;

static void init_tables(void)
{
    const bulki_pair t[] = {
        {K("dtype"), BULKI_V_ITEM(BULKI_T_INT32, &v_i32)},
        {K("nbin"), BULKI_V_ITEM(BULKI_T_INT32, &v_nbin2)},
        {K("range"), BULKI_V_ARRAY(BULKI_T_DOUBLE, v_range4, 4)},
        {K("bin"), BULKI_V_ARRAY(BULKI_T_UINT64, v_bin2, 2)},
        {K("incr"), BULKI_V_ITEM(BULKI_T_DOUBLE, &v_incr)},
    };
    memcpy(v_hist_pairs, t, sizeof t);
    v_hist_doc.npairs = NELEM(v_hist_pairs);
    v_hist_doc.pairs = v_hist_pairs;
}

static size_t obj_pairs(bulki_pair *p)
{
    const bulki_pair t[] = {
        {K("obj_id"), BULKI_V_ITEM(BULKI_T_UINT64, &v_id)},
        {K("obj_name"), K("name-a")},
        {K("cont_id"), BULKI_V_ITEM(BULKI_T_UINT64, &v_cont)},
        {K("user_id"), BULKI_V_ITEM(BULKI_T_INT32, &v_i32)},
        {K("app_name"), K("app")},
        {K("time_step"), BULKI_V_ITEM(BULKI_T_INT32, &v_i32)},
        {K("data_type"), BULKI_V_ITEM(BULKI_T_INT32, &v_i32)},
        {K("ndim"), BULKI_V_ITEM(BULKI_T_UINT32, &v_ndim2)},
        {K("dims"), BULKI_V_ARRAY(BULKI_T_UINT64, v_dims2, 2)},
        {K("create_time"), BULKI_V_ITEM(BULKI_T_INT64, &v_i64)},
        {K("last_modified_time"), BULKI_V_ITEM(BULKI_T_INT64, &v_i64)},
        {K("data_location"), K("/loc")},
        {K("tags"), K("t=1")},
        {K("transform_state"), BULKI_V_ITEM(BULKI_T_INT32, &v_i32)},
        {K("data_server_id"), BULKI_V_ITEM(BULKI_T_UINT32, &v_u32)},
        {K("region_partition"), BULKI_V_ITEM(BULKI_T_UINT8, &v_u8)},
        {K("consistency"), BULKI_V_ITEM(BULKI_T_UINT8, &v_u8)},
    };
    memcpy(p, t, sizeof t);
    return NELEM(t);
}

static size_t kvtag_pairs(bulki_pair *p)
{
    const bulki_pair t[] = {
        {K("name"), K("tag-a")},
        {K("type"), BULKI_V_ITEM(BULKI_T_INT8, &v_type_int)},
        {K("value"), BULKI_V_ITEM(BULKI_T_INT32, &v_int_val)},
    };
    memcpy(p, t, sizeof t);
    return NELEM(t);
}

static size_t cont_pairs(bulki_pair *p)
{
    const bulki_pair t[] = {
        {K("cont_id"), BULKI_V_ITEM(BULKI_T_UINT64, &v_cont)},
        {K("cont_name"), K("cont-a")},
        {K("tags"), K("")},
    };
    memcpy(p, t, sizeof t);
    return NELEM(t);
}

static size_t region_pairs(bulki_pair *p)
{
    const bulki_pair t[] = {
        {K("obj_id"), BULKI_V_ITEM(BULKI_T_UINT64, &v_id)},
        {K("ndim"), BULKI_V_ITEM(BULKI_T_UINT32, &v_ndim2)},
        {K("start"), BULKI_V_ARRAY(BULKI_T_UINT64, v_dims2, 2)},
        {K("count"), BULKI_V_ARRAY(BULKI_T_UINT64, v_dims2, 2)},
        {K("data_size"), BULKI_V_ITEM(BULKI_T_UINT64, &v_u64)},
        {K("unit_size"), BULKI_V_ITEM(BULKI_T_UINT64, &v_u64)},
        {K("data_loc_type"), BULKI_V_ITEM(BULKI_T_INT32, &v_i32)},
        {K("storage_location"), K("/s")},
        {K("offset"), BULKI_V_ITEM(BULKI_T_UINT64, &v_u64)},
        {K("cache_location"), K("")},
        {K("cache_offset"), BULKI_V_ITEM(BULKI_T_UINT64, &v_u64)},
        {K("hist"), BULKI_V_DOC(&v_hist_doc)},
    };
    memcpy(p, t, sizeof t);
    return NELEM(t);
}

/* ------------------------------------------------------------------ */
/* round trips                                                         */
/* ------------------------------------------------------------------ */

static void test_obj_roundtrip_all_fields_0_to_4_dims(void **state)
{
    (void)state;
    for (uint32_t nd = 0; nd <= CKPT_MAX_DIM; nd++) {
        struct ckpt_obj o = htu_full_obj(nd), d;
        size_t len, off = 0;
        uint8_t *rec = enc_obj(&o, &len);
        memset(&d, 0xEE, sizeof d);
        HTU_OK(ckpt_rec_obj_decode(&d, rec, len, &off));
        htu_assert_obj_eq(&o, &d);
        for (uint32_t i = nd; i < CKPT_MAX_DIM; i++)
            assert_true(d.dims[i] == 0);
        free(rec);
    }
}

static void test_obj_roundtrip_extreme_values(void **state)
{
    (void)state;
    struct ckpt_obj o = htu_full_obj(CKPT_MAX_DIM), d;
    o.obj_id = UINT64_MAX;
    o.cont_id = 0;
    o.time_step = INT32_MIN;
    o.user_id = INT32_MAX;
    o.data_type = -1;
    o.transform_state = INT32_MIN;
    o.create_time = INT64_MIN;
    o.last_modified_time = INT64_MAX;
    o.data_server_id = UINT32_MAX;
    o.region_partition = 255;
    o.consistency = 255;
    for (int i = 0; i < CKPT_MAX_DIM; i++)
        o.dims[i] = UINT64_MAX - (uint64_t)i;
    size_t len;
    uint8_t *rec = enc_obj(&o, &len);
    HTU_OK(ckpt_rec_obj_decode(&d, rec, len, NULL));
    htu_assert_obj_eq(&o, &d);
    free(rec);
}

static void test_obj_roundtrip_empty_and_null_strings(void **state)
{
    (void)state;
    struct ckpt_obj o = htu_full_obj(1), d;
    o.obj_name = "";
    o.app_name = "";
    o.data_location = NULL; /* encoded as "" */
    o.tags = NULL;
    size_t len;
    uint8_t *rec = enc_obj(&o, &len);
    HTU_OK(ckpt_rec_obj_decode(&d, rec, len, NULL));
    assert_string_equal(d.obj_name, "");
    assert_string_equal(d.app_name, "");
    assert_string_equal(d.data_location, "");
    assert_string_equal(d.tags, "");
    htu_assert_obj_eq(&o, &d);
    free(rec);
}

static void test_obj_encode_rejects_bad_input(void **state)
{
    (void)state;
    struct ckpt_obj o = htu_full_obj(2);
    uint8_t buf[1024];
    size_t len;
    o.ndim = CKPT_MAX_DIM + 1;
    HTU_RC(CKPT_E_INVAL, ckpt_rec_obj_encode(&len, buf, sizeof buf, &o));
    o = htu_full_obj(2);
    o.obj_name = NULL;
    HTU_RC(CKPT_E_INVAL, ckpt_rec_obj_encode(&len, buf, sizeof buf, &o));
    HTU_RC(CKPT_E_INVAL, ckpt_rec_obj_encode(&len, buf, sizeof buf, NULL));
}

/* One kvtag case: encode, decode, compare; the decoded type and size are
 * the ones given (size counts a string's NUL). */
static void kvtag_roundtrip(int8_t type, const void *value, uint32_t size)
{
    struct ckpt_kvtag t = {"tag", type, size, value}, d;
    size_t len;
    uint8_t *rec = enc_kvtag(&t, &len);
    uint8_t *copy = dup_rec(rec, len);
    memset(&d, 0xEE, sizeof d);
    HTU_OK(ckpt_rec_kvtag_decode(&d, copy, len, NULL));
    assert_null(d.name); /* a short name is not in the record */
    assert_int_equal(d.type, type);
    assert_int_equal(d.size, size);
    /* read with its store key, the name is the key's */
    uint8_t key[8 + 8] = {0, 0, 0, 0, 0, 0, 0, 42, 't', 'a', 'g', 0};
    memset(&d, 0xEE, sizeof d);
    HTU_OK(ckpt_rec_kvtag_decode_entry(&d, key, 12, copy, len, NULL));
    assert_ptr_equal(d.name, (const char *)key + 8);
    assert_string_equal(d.name, "tag");
    assert_int_equal(d.type, type);
    assert_int_equal(d.size, size);
    if (size)
        assert_memory_equal(d.value, value, size);
    free(copy);
    free(rec);
}

static void test_kvtag_roundtrip_scalars_and_strings(void **state)
{
    (void)state;
    int32_t i = -123456;
    double x = 3.141592653589793;
    kvtag_roundtrip(BULKI_T_INT, &i, sizeof i);
    kvtag_roundtrip(BULKI_T_DOUBLE, &x, sizeof x);
    double nan_like = -0.0;
    kvtag_roundtrip(BULKI_T_DOUBLE, &nan_like, sizeof nan_like);
    kvtag_roundtrip(BULKI_T_STRING, "hello", 6);   /* size includes the NUL */
    kvtag_roundtrip(BULKI_T_STRING, "", 1);        /* empty string: just the NUL */
    uint64_t u = UINT64_MAX;
    kvtag_roundtrip(BULKI_T_UINT64, &u, sizeof u);
    int8_t c = -7;
    kvtag_roundtrip(BULKI_T_INT8, &c, 1);
    uint8_t b1 = 1;
    kvtag_roundtrip(BULKI_T_BOOLEAN, &b1, 1);
}

/* Format 2's record of an int tag, byte for byte: {"v": PDC_INT 7}, no
 * name (the key has it), no type (the value's own), 18 bytes. */
static void test_kvtag_record_exact_bytes(void **state)
{
    (void)state;
    int32_t v = 7;
    struct ckpt_kvtag t = {"Group", BULKI_T_INT, 4, &v};
    static const uint8_t want[] = {0x5a, 0x01, 0x14, 0x16,             /* sizes, 1 pair */
                                   0x14, 0x10, 0x01, 'v', 0x00,        /* key "v" */
                                   0x09,                               /* offset_1 */
                                   0x16, 0x02, 0x01, 7, 0, 0, 0,       /* PDC_INT 7 */
                                   0x11};                              /* offset_2 */
    size_t len;
    uint8_t *rec = enc_kvtag(&t, &len);
    assert_int_equal(len, sizeof want);
    assert_memory_equal(rec, want, sizeof want);
    free(rec);
}

/* A name too long for the key travels in the record ("name"), and a type
 * that the value's entity does not carry in "t". */
static void test_kvtag_long_name_and_raw_type_in_record(void **state)
{
    (void)state;
    char *name = htu_long_name('n', CKPT_NAME_INLINE_MAX + 1);
    static const uint8_t raw[3] = {1, 2, 3};
    struct ckpt_kvtag t = {name, BULKI_T_INT, 3, raw}, d;
    size_t len;
    uint8_t *rec = enc_kvtag(&t, &len);
    HTU_OK(ckpt_rec_kvtag_decode(&d, rec, len, NULL));
    assert_string_equal(d.name, name);
    assert_int_equal(d.type, BULKI_T_INT);
    assert_int_equal(d.size, 3);
    assert_memory_equal(d.value, raw, 3);
    /* a hashed key cannot name it: the record must */
    uint8_t key[8 + CKPT_NAMEKEY_MAX];
    memset(key, 0, 8);
    size_t n = ckpt_key_name(key + 8, name, strlen(name));
    HTU_OK(ckpt_rec_kvtag_decode_entry(&d, key, 8 + n, rec, len, NULL));
    assert_string_equal(d.name, name);
    struct ckpt_kvtag s = {"short", BULKI_T_INT, 3, raw};
    free(rec);
    rec = enc_kvtag(&s, &len);
    HTU_RC(CKPT_E_RECORD, ckpt_rec_kvtag_decode_entry(&d, key, 8 + n, rec, len, NULL));
    HTU_RC(CKPT_E_RECORD, ckpt_rec_kvtag_decode_entry(&d, key, 8, rec, len, NULL));
    free(rec);
    free(name);
}

/* The kvtag decoder reads format 2's common record positionally: whatever
 * it accepts must be a valid BULKI whose "v" pair says the same. Every
 * one-byte change of several such records, to every value, is checked
 * against the general BULKI decoder. */
static void test_kvtag_positional_decode_agrees_with_bulki(void **state)
{
    (void)state;
    int32_t i32 = -5;
    double d[2] = {1.5, -2};
    uint8_t bools[3] = {1, 0, 1}, raw[2] = {9, 8};
    uint64_t u = 77;
    const struct ckpt_kvtag tags[] = {
        {"a", BULKI_T_INT, 4, &i32},       {"a", BULKI_T_DOUBLE, 16, d},
        {"a", BULKI_T_STRING, 4, "xyz"},   {"a", BULKI_T_STRING, 1, ""},
        {"a", BULKI_T_BOOLEAN, 3, bools},  {"a", BULKI_T_UINT8, 2, raw},
        {"a", BULKI_T_UINT64, 8, &u},      {"a", BULKI_T_UINT8, 0, NULL},
    };
    unsigned accepted = 0;
    for (size_t c = 0; c < NELEM(tags); c++) {
        size_t len;
        uint8_t *rec = enc_kvtag(&tags[c], &len);
        for (size_t pos = 0; pos < len; pos++) {
            for (unsigned b = 0; b < 256; b++) {
                uint8_t *m = dup_rec(rec, len);
                m[pos] = (uint8_t)b;
                struct ckpt_kvtag t;
                if (ckpt_rec_kvtag_decode(&t, m, len, NULL) == 0) {
                    bulki_map map;
                    bulki_ent v, ty;
                    if (bulki_decode_doc(&map, m, len, NULL) != 0)
                        fail_msg("case %zu, byte %zu = %u: accepted, but not a valid BULKI", c, pos, b);
                    assert_int_equal(bulki_map_get(&v, &map, "v"), 0);
                    if (bulki_map_get(&ty, &map, "t") != 0)
                        assert_int_equal(t.type, (int8_t)v.type);
                    assert_ptr_equal(t.value, v.payload);
                    assert_int_equal(t.size, v.payload_len + (v.type == BULKI_T_STRING ? 1 : 0));
                    accepted++;
                }
                free(m);
            }
        }
        free(rec);
    }
    assert_true(accepted > 0);
}

static void test_kvtag_string_size_counts_nul(void **state)
{
    (void)state;
    struct ckpt_kvtag t = {"s", BULKI_T_STRING, 4, "abc"}, d;
    size_t len;
    uint8_t *rec = enc_kvtag(&t, &len);
    HTU_OK(ckpt_rec_kvtag_decode(&d, rec, len, NULL));
    assert_int_equal(d.size, 4);
    assert_string_equal((const char *)d.value, "abc");
    assert_int_equal(((const char *)d.value)[3], 0);
    free(rec);
}

static void test_kvtag_roundtrip_int_arrays(void **state)
{
    (void)state;
    int32_t a[5] = {1, -2, 3, INT32_MIN, INT32_MAX};
    for (uint32_t k = 1; k <= 5; k++)
        kvtag_roundtrip(BULKI_T_INT, a, k * 4);
    double dv[3] = {1.5, -2.5, DBL_MAX};
    kvtag_roundtrip(BULKI_T_DOUBLE, dv, sizeof dv);
    uint8_t bools[4] = {0, 1, 1, 0};
    kvtag_roundtrip(BULKI_T_BOOLEAN, bools, sizeof bools);
}

static void test_kvtag_odd_sizes_kept_as_raw_bytes(void **state)
{
    (void)state;
    const uint8_t raw[7] = {1, 2, 3, 4, 5, 6, 7};
    kvtag_roundtrip(BULKI_T_INT, raw, 6);        /* not a multiple of 4 */
    kvtag_roundtrip(BULKI_T_INT, raw, 3);        /* shorter than one element */
    kvtag_roundtrip(BULKI_T_DOUBLE, raw, 7);
    kvtag_roundtrip(BULKI_T_INT, raw, 0);        /* empty value */
    kvtag_roundtrip(BULKI_T_INT, NULL, 0);
    uint8_t b2 = 2;                              /* not a valid BULKI boolean */
    kvtag_roundtrip(BULKI_T_BOOLEAN, &b2, 1);
    uint8_t bmix[3] = {1, 0, 255};
    kvtag_roundtrip(BULKI_T_BOOLEAN, bmix, 3);
    kvtag_roundtrip(BULKI_T_STRING, "abc", 3);   /* no NUL at the end */
    kvtag_roundtrip(BULKI_T_STRING, "a\0b", 4);  /* NUL inside */
    kvtag_roundtrip(-1, raw, 5);                 /* PDC_UNKNOWN-like type */
    kvtag_roundtrip(99, raw, 4);                 /* unknown type code */
    kvtag_roundtrip(BULKI_T_BULKI, raw, 4);      /* nested type code, raw bytes */
}

static void test_kvtag_encode_rejects_bad_input(void **state)
{
    (void)state;
    uint8_t buf[256];
    size_t len;
    struct ckpt_kvtag t = {NULL, BULKI_T_INT, 4, "abcd"};
    HTU_RC(CKPT_E_INVAL, ckpt_rec_kvtag_encode(&len, buf, sizeof buf, &t));
    t.name = "x";
    t.value = NULL;
    HTU_RC(CKPT_E_INVAL, ckpt_rec_kvtag_encode(&len, buf, sizeof buf, &t));
    HTU_RC(CKPT_E_INVAL, ckpt_rec_kvtag_encode(&len, buf, sizeof buf, NULL));
}

static void test_cont_roundtrip(void **state)
{
    (void)state;
    const struct ckpt_cont cases[] = {
        {1000000001ull, "/run-7", "owner=alice"},
        {UINT64_MAX, "", ""},
        {0, "c", NULL},
    };
    for (size_t i = 0; i < NELEM(cases); i++) {
        struct ckpt_cont d;
        size_t len;
        uint8_t *rec = enc_cont(&cases[i], &len);
        HTU_OK(ckpt_rec_cont_decode(&d, rec, len, NULL));
        assert_int_equal(d.cont_id, cases[i].cont_id);
        assert_string_equal(d.cont_name, cases[i].cont_name);
        assert_true(htu_streq(d.tags, cases[i].tags));
        assert_non_null(d.tags);
        free(rec);
    }
    struct ckpt_cont bad = {1, NULL, ""};
    uint8_t buf[64];
    size_t len;
    HTU_RC(CKPT_E_INVAL, ckpt_rec_cont_encode(&len, buf, sizeof buf, &bad));
    HTU_RC(CKPT_E_INVAL, ckpt_rec_cont_encode(&len, buf, sizeof buf, NULL));
}

static void test_region_roundtrip_without_histogram(void **state)
{
    (void)state;
    for (uint32_t nd = 1; nd <= CKPT_MAX_DIM; nd++) {
        struct ckpt_region g = htu_full_region(nd, 0), d;
        size_t len;
        uint8_t *rec = enc_region(&g, &len);
        memset(&d, 0xEE, sizeof d);
        HTU_OK(ckpt_rec_region_decode(&d, rec, len, NULL));
        assert_int_equal(d.has_hist, 0);
        htu_assert_region_eq(&g, &d);
        free(rec);
    }
}

static void test_region_roundtrip_with_histogram(void **state)
{
    (void)state;
    for (uint32_t nd = 1; nd <= CKPT_MAX_DIM; nd++) {
        struct ckpt_region g = htu_full_region(nd, 1), d;
        size_t len;
        uint8_t *rec = enc_region(&g, &len);
        uint8_t *copy = dup_rec(rec, len);
        HTU_OK(ckpt_rec_region_decode(&d, copy, len, NULL));
        assert_int_equal(d.has_hist, 1);
        assert_int_equal(d.hist.dtype, 14);
        assert_int_equal(d.hist.nbin, 3);
        assert_true(d.hist.incr == 0.75);
        for (size_t i = 0; i < 3; i++)
            assert_true(ckpt_hist_bin(&d.hist, i) == htu_hist_bin[i]);
        for (size_t i = 0; i < 6; i++)
            assert_true(ckpt_hist_range(&d.hist, i) == htu_hist_range[i]);
        htu_assert_region_eq(&g, &d);
        free(copy);
        free(rec);
    }
    /* a histogram with no bins */
    struct ckpt_region g = htu_full_region(2, 1), d;
    g.hist.nbin = 0;
    g.hist.range = NULL;
    g.hist.bin = NULL;
    size_t len;
    uint8_t *rec = enc_region(&g, &len);
    HTU_OK(ckpt_rec_region_decode(&d, rec, len, NULL));
    assert_int_equal(d.has_hist, 1);
    assert_int_equal(d.hist.nbin, 0);
    free(rec);
}

static void test_region_encode_rejects_bad_input(void **state)
{
    (void)state;
    uint8_t buf[1024];
    size_t len;
    struct ckpt_region g = htu_full_region(2, 1);
    g.ndim = 0;
    HTU_RC(CKPT_E_INVAL, ckpt_rec_region_encode(&len, buf, sizeof buf, &g));
    g.ndim = CKPT_MAX_DIM + 1;
    HTU_RC(CKPT_E_INVAL, ckpt_rec_region_encode(&len, buf, sizeof buf, &g));
    g = htu_full_region(2, 1);
    g.hist.nbin = -1;
    HTU_RC(CKPT_E_INVAL, ckpt_rec_region_encode(&len, buf, sizeof buf, &g));
    g = htu_full_region(2, 1);
    g.hist.bin = NULL;
    HTU_RC(CKPT_E_INVAL, ckpt_rec_region_encode(&len, buf, sizeof buf, &g));
    HTU_RC(CKPT_E_INVAL, ckpt_rec_region_encode(&len, buf, sizeof buf, NULL));
}

/* ------------------------------------------------------------------ */
/* damaged records                                                     */
/* ------------------------------------------------------------------ */

/* The four kinds of record, fully populated, for the damage tests. */
static uint8_t *sample(enum rec_kind k, size_t *len)
{
    static const int32_t iv[3] = {1, 2, 3};
    switch (k) {
    case R_OBJ: {
        struct ckpt_obj o = htu_full_obj(3);
        return enc_obj(&o, len);
    }
    case R_KVTAG: {
        struct ckpt_kvtag t = {"a-tag", BULKI_T_INT, sizeof iv, iv};
        return enc_kvtag(&t, len);
    }
    case R_CONT: {
        struct ckpt_cont c = {1000000001ull, "/run-7", "x=y"};
        return enc_cont(&c, len);
    }
    default: {
        struct ckpt_region g = htu_full_region(3, 1);
        return enc_region(&g, len);
    }
    }
}

static void test_every_prefix_of_an_object_record_is_rejected(void **state)
{
    (void)state;
    size_t len;
    uint8_t *rec = sample(R_OBJ, &len);
    HTU_OK(decode_any(R_OBJ, rec, len));
    for (size_t n = 0; n < len; n++)
        HTU_RC(CKPT_E_RECORD, decode_any(R_OBJ, rec, n));
    free(rec);
}

static void test_every_prefix_of_other_records_is_rejected(void **state)
{
    (void)state;
    const enum rec_kind kinds[] = {R_KVTAG, R_CONT, R_REGION};
    for (size_t k = 0; k < NELEM(kinds); k++) {
        size_t len;
        uint8_t *rec = sample(kinds[k], &len);
        HTU_OK(decode_any(kinds[k], rec, len));
        for (size_t n = 0; n < len; n++)
            HTU_RC(CKPT_E_RECORD, decode_any(kinds[k], rec, n));
        free(rec);
    }
}

static void test_trailing_bytes_are_rejected(void **state)
{
    (void)state;
    const enum rec_kind kinds[] = {R_OBJ, R_KVTAG, R_CONT, R_REGION};
    for (size_t k = 0; k < NELEM(kinds); k++) {
        size_t len;
        uint8_t *rec = sample(kinds[k], &len);
        uint8_t *big = calloc(1, len + 3);
        assert_non_null(big);
        memcpy(big, rec, len);
        HTU_RC(CKPT_E_RECORD, decode_any(kinds[k], big, len + 1));
        HTU_RC(CKPT_E_RECORD, decode_any(kinds[k], big, len + 3));
        free(big);
        free(rec);
    }
}

static void test_random_byte_flips_never_crash(void **state)
{
    (void)state;
    const enum rec_kind kinds[] = {R_OBJ, R_KVTAG, R_CONT, R_REGION};
    uint64_t seed = 0x5EEDC0DEull;
    size_t ok = 0, bad = 0;
    for (size_t k = 0; k < NELEM(kinds); k++) {
        size_t len;
        uint8_t *rec = sample(kinds[k], &len);
        uint8_t *m = malloc(len);
        assert_non_null(m);
        for (int iter = 0; iter < 3000; iter++) {
            memcpy(m, rec, len);
            int flips = 1 + (int)(tu_rand(&seed) % 3);
            for (int f = 0; f < flips; f++) {
                size_t at = (size_t)(tu_rand(&seed) % len);
                uint8_t x = (uint8_t)(1 + tu_rand(&seed) % 255);
                m[at] ^= x;
            }
            int rc = decode_any(kinds[k], m, len);
            if (rc != 0 && rc != CKPT_E_RECORD)
                fail_msg("kind %zu iter %d: decode returned %d (%s)", k, iter, rc, ckpt_errname(rc));
            if (rc == 0)
                ok++;
            else
                bad++;
        }
        free(m);
        free(rec);
    }
    /* most flips hit structure and are refused; some hit value bytes */
    assert_true(bad > 0);
    print_message("byte flips: %zu still decoded, %zu refused\n", ok, bad);
}

/* Garbage must be refused, with CKPT_E_RECORD: a record is one BULKI whose
 * total size agrees with its entities' sizes and whose two offsets name
 * their own positions (docs/BULKI.md), which random bytes do not make.
 * Two kinds of garbage: random bytes (the decoder fails early, at the
 * sizes), and a real record's first bytes followed by random ones to
 * another length (it gets past the header, into the keys and values). */
static void test_random_garbage_is_rejected(void **state)
{
    (void)state;
    uint64_t seed = 12345;
    uint8_t buf[512];
    const enum rec_kind kinds[] = {R_OBJ, R_KVTAG, R_CONT, R_REGION};
    uint8_t *rec[4];
    size_t rlen[4];
    for (size_t k = 0; k < NELEM(kinds); k++) {
        rec[k] = sample(kinds[k], &rlen[k]);
        assert_true(rlen[k] < sizeof buf);
        HTU_OK(decode_any(kinds[k], rec[k], rlen[k])); /* the prefixes are of good records */
    }
    for (int iter = 0; iter < 8000; iter++) {
        size_t k = (size_t)iter % NELEM(kinds), len, keep = 0;
        if (iter < 4000) {
            len = (size_t)tu_below(&seed, 96);
        } else {
            keep = (size_t)tu_below(&seed, rlen[k]);
            do
                len = keep + (size_t)tu_below(&seed, sizeof buf - keep);
            while (len == rlen[k]);
            memcpy(buf, rec[k], keep);
        }
        for (size_t i = keep; i < len; i++)
            buf[i] = (uint8_t)tu_rand(&seed);
        int rc = decode_any(kinds[k], buf, len);
        if (rc != CKPT_E_RECORD)
            fail_msg("garbage %d (kind %zu, %zu bytes, %zu of a record's first): decode returned %d "
                     "(%s), expected CKPT_E_RECORD", iter, k, len, keep, rc, ckpt_errname(rc));
    }
    for (size_t k = 0; k < NELEM(kinds); k++)
        free(rec[k]);
}

/* Table records decode as given; each required field left out, and each
 * field given a wrong type, gives CKPT_E_RECORD. */
static void check_required(enum rec_kind kind, size_t (*fill)(bulki_pair *), const char *const *req,
                           size_t nreq, const char *const *opt, size_t nopt)
{
    bulki_pair p[32];
    size_t n = fill(p), len;
    uint8_t *rec = enc_variant(p, n, NULL, NULL, &len);
    HTU_OK(decode_any(kind, rec, len));
    free(rec);
    for (size_t i = 0; i < nreq; i++) {
        rec = enc_variant(p, n, req[i], NULL, &len);
        if (decode_any(kind, rec, len) != CKPT_E_RECORD)
            fail_msg("record kind %d without required field \"%s\" was accepted", (int)kind, req[i]);
        free(rec);
    }
    for (size_t i = 0; i < nopt; i++) {
        rec = enc_variant(p, n, opt[i], NULL, &len);
        if (decode_any(kind, rec, len) != 0)
            fail_msg("record kind %d without optional field \"%s\" was refused", (int)kind, opt[i]);
        free(rec);
    }
}

static void test_missing_required_fields_are_rejected(void **state)
{
    (void)state;
    static const char *const obj_req[] = {"obj_id", "obj_name", "time_step", "ndim", "dims"};
    static const char *const obj_opt[] = {"cont_id", "user_id", "app_name", "data_type",
                                          "create_time", "last_modified_time", "data_location",
                                          "tags", "transform_state", "data_server_id",
                                          "region_partition", "consistency"};
    check_required(R_OBJ, obj_pairs, obj_req, NELEM(obj_req), obj_opt, NELEM(obj_opt));
    /* format 1's kvtag record: since format 2 the name may come from the
     * key and the type from the value */
    static const char *const tag_req[] = {"value"};
    static const char *const tag_opt[] = {"name", "type"};
    check_required(R_KVTAG, kvtag_pairs, tag_req, NELEM(tag_req), tag_opt, NELEM(tag_opt));
    static const char *const cont_req[] = {"cont_id", "cont_name"};
    static const char *const cont_opt[] = {"tags"};
    check_required(R_CONT, cont_pairs, cont_req, NELEM(cont_req), cont_opt, NELEM(cont_opt));
    static const char *const reg_req[] = {"obj_id", "ndim", "start", "count", "data_size"};
    static const char *const reg_opt[] = {"unit_size", "data_loc_type", "storage_location", "offset",
                                          "cache_location", "cache_offset", "hist"};
    check_required(R_REGION, region_pairs, reg_req, NELEM(reg_req), reg_opt, NELEM(reg_opt));
}

static void test_histogram_missing_or_inconsistent_fields_are_rejected(void **state)
{
    (void)state;
    static const char *const hist_req[] = {"dtype", "nbin", "range", "bin", "incr"};
    bulki_pair p[32];
    size_t n = region_pairs(p), len;
    for (size_t i = 0; i < NELEM(hist_req); i++) {
        bulki_pair hp[8];
        size_t m = 0;
        for (size_t j = 0; j < NELEM(v_hist_pairs); j++)
            if (strncmp(v_hist_pairs[j].key.u.data, hist_req[i], v_hist_pairs[j].key.len) != 0 ||
                strlen(hist_req[i]) != v_hist_pairs[j].key.len)
                hp[m++] = v_hist_pairs[j];
        const bulki_doc hd = {m, hp};
        const bulki_value hv = BULKI_V_DOC(&hd);
        uint8_t *rec = enc_variant(p, n, "hist", &hv, &len);
        if (decode_any(R_REGION, rec, len) != CKPT_E_RECORD)
            fail_msg("histogram without \"%s\" was accepted", hist_req[i]);
        free(rec);
    }
    /* nbin does not match the arrays */
    static const int32_t three = 3, minus = -1;
    const bulki_value bad_nbin[] = {BULKI_V_ITEM(BULKI_T_INT32, &three),
                                    BULKI_V_ITEM(BULKI_T_INT32, &minus)};
    for (size_t i = 0; i < NELEM(bad_nbin); i++) {
        bulki_pair hp[8];
        memcpy(hp, v_hist_pairs, sizeof v_hist_pairs);
        hp[1].value = bad_nbin[i];
        const bulki_doc hd = {NELEM(v_hist_pairs), hp};
        const bulki_value hv = BULKI_V_DOC(&hd);
        uint8_t *rec = enc_variant(p, n, "hist", &hv, &len);
        HTU_RC(CKPT_E_RECORD, decode_any(R_REGION, rec, len));
        free(rec);
    }
    /* bins of the wrong type */
    {
        bulki_pair hp[8];
        memcpy(hp, v_hist_pairs, sizeof v_hist_pairs);
        hp[3].value = BULKI_V_ARRAY(BULKI_T_DOUBLE, v_range4, 2);
        const bulki_doc hd = {NELEM(v_hist_pairs), hp};
        const bulki_value hv = BULKI_V_DOC(&hd);
        uint8_t *rec = enc_variant(p, n, "hist", &hv, &len);
        HTU_RC(CKPT_E_RECORD, decode_any(R_REGION, rec, len));
        free(rec);
    }
    /* "hist" that is not a BULKI */
    const bulki_value notdoc = BULKI_V_ITEM(BULKI_T_UINT64, &v_u64);
    uint8_t *rec = enc_variant(p, n, "hist", &notdoc, &len);
    HTU_RC(CKPT_E_RECORD, decode_any(R_REGION, rec, len));
    free(rec);
}

static void test_mistyped_fields_are_rejected(void **state)
{
    (void)state;
    static const int64_t big = (int64_t)INT32_MAX + 1, neg = -1;
    static const uint64_t dims5[5] = {1, 2, 3, 4, 5};
    static const uint32_t three = 3, zero = 0, five = 5;
    static const double dbl = 1.0;
    struct {
        enum rec_kind kind;
        size_t (*fill)(bulki_pair *);
        const char *key;
        bulki_value v;
    } cases[] = {
        {R_OBJ, obj_pairs, "obj_name", BULKI_V_ITEM(BULKI_T_UINT64, &v_u64)},
        {R_OBJ, obj_pairs, "obj_id", K("not-a-number")},
        {R_OBJ, obj_pairs, "obj_id", BULKI_V_ITEM(BULKI_T_INT64, &neg)},
        {R_OBJ, obj_pairs, "time_step", BULKI_V_ITEM(BULKI_T_INT64, &big)},
        {R_OBJ, obj_pairs, "user_id", BULKI_V_ITEM(BULKI_T_INT64, &big)},
        {R_OBJ, obj_pairs, "dims", BULKI_V_ARRAY(BULKI_T_UINT64, dims5, 5)},
        {R_OBJ, obj_pairs, "dims", BULKI_V_ARRAY(BULKI_T_DOUBLE, &dbl, 1)},
        {R_OBJ, obj_pairs, "ndim", BULKI_V_ITEM(BULKI_T_UINT32, &three)},
        {R_OBJ, obj_pairs, "ndim", BULKI_V_ITEM(BULKI_T_UINT32, &five)},
        {R_OBJ, obj_pairs, "region_partition", BULKI_V_ITEM(BULKI_T_INT64, &big)},
        {R_OBJ, obj_pairs, "app_name", BULKI_V_ITEM(BULKI_T_INT32, &v_i32)},
        {R_KVTAG, kvtag_pairs, "name", BULKI_V_ITEM(BULKI_T_INT32, &v_i32)},
        {R_KVTAG, kvtag_pairs, "type", BULKI_V_ITEM(BULKI_T_INT64, &big)},
        {R_KVTAG, kvtag_pairs, "value", BULKI_V_DOC(&v_hist_doc)},
        {R_CONT, cont_pairs, "cont_name", BULKI_V_ITEM(BULKI_T_UINT64, &v_u64)},
        {R_CONT, cont_pairs, "cont_id", K("x")},
        {R_REGION, region_pairs, "ndim", BULKI_V_ITEM(BULKI_T_UINT32, &three)},
        {R_REGION, region_pairs, "ndim", BULKI_V_ITEM(BULKI_T_UINT32, &zero)},
        {R_REGION, region_pairs, "count", BULKI_V_ARRAY(BULKI_T_UINT64, dims5, 3)},
        {R_REGION, region_pairs, "start", BULKI_V_ARRAY(BULKI_T_UINT64, dims5, 5)},
        {R_REGION, region_pairs, "data_size", K("big")},
    };
    for (size_t i = 0; i < NELEM(cases); i++) {
        bulki_pair p[32];
        size_t n = cases[i].fill(p), len;
        uint8_t *rec = enc_variant(p, n, cases[i].key, &cases[i].v, &len);
        int rc = decode_any(cases[i].kind, rec, len);
        if (rc != CKPT_E_RECORD)
            fail_msg("case %zu (field \"%s\"): decode returned %d, expected CKPT_E_RECORD", i,
                     cases[i].key, rc);
        free(rec);
    }
    /* both start and count empty: a region needs at least one dimension */
    bulki_pair p[32];
    size_t n = region_pairs(p), len;
    const bulki_value empty = BULKI_V_ARRAY(BULKI_T_UINT64, dims5, 0);
    const bulki_value nd0 = BULKI_V_ITEM(BULKI_T_UINT32, &zero);
    p[2].value = empty;
    p[3].value = empty;
    uint8_t *rec = enc_variant(p, n, "ndim", &nd0, &len);
    HTU_RC(CKPT_E_RECORD, decode_any(R_REGION, rec, len));
    free(rec);
    /* a record that is a single value, not a BULKI */
    uint8_t vbuf[64];
    size_t vlen;
    const bulki_value single = BULKI_V_ITEM(BULKI_T_UINT64, &v_u64);
    assert_int_equal(bulki_encode_value(&vlen, vbuf, sizeof vbuf, &single), 0);
    HTU_RC(CKPT_E_RECORD, decode_any(R_OBJ, vbuf, vlen));
    HTU_RC(CKPT_E_RECORD, decode_any(R_REGION, vbuf, vlen));
}

static void test_unknown_fields_are_ignored(void **state)
{
    (void)state;
    bulki_pair p[32];
    size_t n = obj_pairs(p), len;
    p[n].key = K("a_field_from_the_future");
    p[n].value = K("ignored");
    n++;
    uint8_t *rec = enc_variant(p, n, NULL, NULL, &len);
    struct ckpt_obj o;
    HTU_OK(ckpt_rec_obj_decode(&o, rec, len, NULL));
    assert_string_equal(o.obj_name, "name-a");
    assert_int_equal(o.ndim, 2);
    assert_true(o.dims[1] == 128);
    free(rec);
}

/* Records with more pairs than the decoders index (unknown fields first,
 * so that known ones lie beyond the index): every known field is still
 * found, and a bad one beyond the index still refused. */
static void test_records_with_many_unknown_fields_decode_whole(void **state)
{
    (void)state;
    static char names[40][8];
    static const int32_t zero = 0;
    bulki_pair p[64], q[64];
    size_t len;
    for (int i = 0; i < 40; i++) {
        snprintf(names[i], sizeof names[i], "x%02d", i);
        p[i] = (bulki_pair){BULKI_V_STRN(names[i], 3), BULKI_V_ITEM(BULKI_T_INT32, &zero)};
    }
    /* an object: 40 unknown fields, then its own */
    size_t n = obj_pairs(q);
    memcpy(p + 40, q, n * sizeof *q);
    const bulki_doc d = {40 + n, p};
    uint8_t buf[4096];
    assert_int_equal(bulki_encode_doc(&len, buf, sizeof buf, &d), 0);
    struct ckpt_obj o;
    HTU_OK(ckpt_rec_obj_decode(&o, buf, len, NULL));
    assert_string_equal(o.obj_name, "name-a");
    assert_int_equal(o.ndim, 2);
    assert_true(o.dims[1] == 128);
    /* a kvtag (format 1's pairs): 12 unknown pairs, then name, type, value */
    n = kvtag_pairs(q);
    memcpy(p + 12, q, n * sizeof *q);
    const bulki_doc kd = {12 + n, p};
    assert_int_equal(bulki_encode_doc(&len, buf, sizeof buf, &kd), 0);
    struct ckpt_kvtag t;
    HTU_OK(ckpt_rec_kvtag_decode(&t, buf, len, NULL));
    assert_string_equal(t.name, "tag-a");
    assert_int_equal(t.type, v_type_int);
    assert_int_equal(t.size, sizeof v_int_val);
    assert_memory_equal(t.value, &v_int_val, sizeof v_int_val);
    /* ... whose name, beyond the index, is not a string */
    p[12].value = BULKI_V_ITEM(BULKI_T_INT32, &zero);
    assert_int_equal(bulki_encode_doc(&len, buf, sizeof buf, &kd), 0);
    size_t off = 0;
    HTU_RC(CKPT_E_RECORD, ckpt_rec_kvtag_decode(&t, buf, len, &off));
    assert_true(off > 0 && off < len);
}

static void test_decode_of_a_record_of_another_kind_is_rejected(void **state)
{
    (void)state;
    size_t len;
    uint8_t *cont = sample(R_CONT, &len);
    HTU_RC(CKPT_E_RECORD, decode_any(R_OBJ, cont, len));
    HTU_RC(CKPT_E_RECORD, decode_any(R_REGION, cont, len));
    HTU_RC(CKPT_E_RECORD, decode_any(R_KVTAG, cont, len));
    free(cont);
    uint8_t *tag = sample(R_KVTAG, &len);
    HTU_RC(CKPT_E_RECORD, decode_any(R_CONT, tag, len));
    free(tag);
}

/* ------------------------------------------------------------------ */
/* too-small buffers                                                   */
/* ------------------------------------------------------------------ */

static int encode_kind(enum rec_kind k, uint8_t *buf, size_t cap, size_t *len)
{
    static const int32_t iv[3] = {1, 2, 3};
    struct ckpt_obj o = htu_full_obj(4);
    struct ckpt_kvtag t = {"a-tag", BULKI_T_INT, sizeof iv, iv};
    struct ckpt_cont c = {1000000001ull, "/run-7", "x=y"};
    struct ckpt_region g = htu_full_region(4, 1);
    switch (k) {
    case R_OBJ:
        return ckpt_rec_obj_encode(len, buf, cap, &o);
    case R_KVTAG:
        return ckpt_rec_kvtag_encode(len, buf, cap, &t);
    case R_CONT:
        return ckpt_rec_cont_encode(len, buf, cap, &c);
    default:
        return ckpt_rec_region_encode(len, buf, cap, &g);
    }
}

static void test_encode_into_too_small_buffer_is_an_error(void **state)
{
    (void)state;
    const enum rec_kind kinds[] = {R_OBJ, R_KVTAG, R_CONT, R_REGION};
    for (size_t k = 0; k < NELEM(kinds); k++) {
        size_t need = 0, got = 0;
        HTU_OK(encode_kind(kinds[k], NULL, 0, &need));
        uint8_t *buf = malloc(need + 64);
        assert_non_null(buf);
        for (size_t cap = 0; cap < need; cap += (cap < 16 || need - cap < 16) ? 1 : 7) {
            memset(buf, 0xA5, need + 64);
            int rc = encode_kind(kinds[k], buf, cap, &got);
            if (rc == 0)
                fail_msg("kind %zu: encode into %zu of %zu bytes succeeded", k, cap, need);
            HTU_RC(CKPT_E_NOSPACE, rc);
            for (size_t i = cap; i < need + 64; i++)
                if (buf[i] != 0xA5)
                    fail_msg("kind %zu: encode with cap %zu wrote byte %zu", k, cap, i);
        }
        memset(buf, 0xA5, need + 64);
        HTU_OK(encode_kind(kinds[k], buf, need, &got));
        assert_int_equal(got, need);
        for (size_t i = need; i < need + 64; i++)
            assert_int_equal(buf[i], 0xA5);
        HTU_OK(decode_any(kinds[k], buf, need));
        free(buf);
    }
}

/* ------------------------------------------------------------------ */
/* routing                                                             */
/* ------------------------------------------------------------------ */

static void test_djb2_matches_pdc(void **state)
{
    (void)state;
    /* hash = 5381; hash = hash * 33 + c (c a signed char), mod 2^32;
     * computed by hand / independently */
    assert_int_equal(ckpt_djb2(""), 5381u);
    assert_int_equal(ckpt_djb2("a"), 177670u);       /* 5381*33 + 97 */
    assert_int_equal(ckpt_djb2("ab"), 5863208u);     /* 177670*33 + 98 */
    assert_int_equal(ckpt_djb2("obj_0"), 269429903u);
    assert_int_equal(ckpt_djb2("/container/run-42"), 3103468910u);
    assert_int_equal(ckpt_djb2("a-rather-long-object-name-that-wraps-around-32-bits"), 3850135847u);
    /* bytes >= 0x80 count as negative (char is signed on x86-64) */
    assert_int_equal(ckpt_djb2("\xc3\xa9t\xc3\xa9"), 58808753u);
    assert_int_equal(ckpt_djb2("\xe9"), 177550u);    /* 5381*33 - 23 */
}

static void test_home_ranks_follow_pdc_routing(void **state)
{
    (void)state;
    /* objects: (djb2(name) + time_step) % n, in 32-bit unsigned arithmetic */
    assert_int_equal(ckpt_home_obj("obj_0", 7, 4), (269429903u + 7u) % 4u);
    assert_int_equal(ckpt_home_obj("obj_0", 7, 4), 2);
    assert_int_equal(ckpt_home_obj("/container/run-42", 0, 3), 2);
    assert_int_equal(ckpt_home_obj("ab", -5, 5), 3); /* (5863208 + 2^32 - 5) mod 2^32 mod 5 */
    assert_int_equal(ckpt_home_obj("anything", 12345, 1), 0);
    /* containers: djb2(name) % n */
    assert_int_equal(ckpt_home_cont("/container/run-42", 3), 2);
    assert_int_equal(ckpt_home_cont("ab", 7), 1);
    assert_int_equal(ckpt_home_cont("x", 1), 0);
    for (int ts = 0; ts < 50; ts++) {
        char name[32];
        snprintf(name, sizeof name, "o%d", ts * 7);
        for (int n = 1; n <= 9; n++) {
            assert_int_equal(ckpt_home_obj(name, ts, n), (int)((ckpt_djb2(name) + (uint32_t)ts) % (uint32_t)n));
            assert_int_equal(ckpt_home_cont(name, n), (int)(ckpt_djb2(name) % (uint32_t)n));
        }
    }
}

#define T(f) cmocka_unit_test_setup_teardown(f, htu_setup, htu_teardown)

int main(void)
{
    init_tables();
    const struct CMUnitTest tests[] = {
        T(test_obj_roundtrip_all_fields_0_to_4_dims),
        T(test_obj_roundtrip_extreme_values),
        T(test_obj_roundtrip_empty_and_null_strings),
        T(test_obj_encode_rejects_bad_input),
        T(test_kvtag_roundtrip_scalars_and_strings),
        T(test_kvtag_record_exact_bytes),
        T(test_kvtag_long_name_and_raw_type_in_record),
        T(test_kvtag_positional_decode_agrees_with_bulki),
        T(test_kvtag_string_size_counts_nul),
        T(test_kvtag_roundtrip_int_arrays),
        T(test_kvtag_odd_sizes_kept_as_raw_bytes),
        T(test_kvtag_encode_rejects_bad_input),
        T(test_cont_roundtrip),
        T(test_region_roundtrip_without_histogram),
        T(test_region_roundtrip_with_histogram),
        T(test_region_encode_rejects_bad_input),
        T(test_every_prefix_of_an_object_record_is_rejected),
        T(test_every_prefix_of_other_records_is_rejected),
        T(test_trailing_bytes_are_rejected),
        T(test_random_byte_flips_never_crash),
        T(test_random_garbage_is_rejected),
        T(test_missing_required_fields_are_rejected),
        T(test_histogram_missing_or_inconsistent_fields_are_rejected),
        T(test_mistyped_fields_are_rejected),
        T(test_unknown_fields_are_ignored),
        T(test_records_with_many_unknown_fields_decode_whole),
        T(test_decode_of_a_record_of_another_kind_is_rejected),
        T(test_encode_into_too_small_buffer_is_an_error),
        T(test_djb2_matches_pdc),
        T(test_home_ranks_follow_pdc_routing),
    };
    return cmocka_run_group_tests_name("hooks records", tests, NULL, NULL);
}
