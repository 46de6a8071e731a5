/*
 * test_bulki_write.c - the BULKI writer against bytes worked out by hand
 * from docs/BULKI.md, its failure injection, and its rejection of invalid
 * descriptions.
 *
 * Every expected byte string below was derived from the rules in docs/BULKI.md
 * (notional sizes: 18 + payload per entity, +8 for a PDC_BULKI item, 48 +
 * sum for a BULKI; offsets = absolute position of the offset field itself);
 * the comments show the arithmetic. For each case the test asserts:
 *   - bulki_{doc,value}_encoded_len() is exactly the expected length;
 *   - encoding into an exact-size buffer yields exactly the expected bytes;
 *   - every smaller buffer (0 .. len-1 bytes, each its own heap block so
 *     AddressSanitizer sees any write past it) fails with BULKI_E_NOSPACE
 *     and reports no more bytes than the buffer holds;
 *   - the reader accepts the bytes, and the JSON form re-encodes to them.
 */
#include "bulki_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY(s) BULKI_V_STRN((s), sizeof(s) - 1)

/* ------------------------------------------------------------------ */
/* Checking helpers                                                    */
/* ------------------------------------------------------------------ */

static void check_json_reencode(const uint8_t *bytes, size_t len, int entity)
{
    json_object *j = NULL;
    uint8_t *out = NULL;
    size_t olen = 0;
    char err[256] = "";
    size_t off = 0;
    int rc = tu_decode_json(&j, bytes, len, entity, &off);
    if (rc != 0)
        print_error("writer output does not decode: %s at byte %zu\n", bulki_errname(rc), off);
    assert_bulki_rc(rc, BULKI_OK);
    rc = bulki_json_encode(&out, &olen, j, err, sizeof err);
    if (rc != 0)
        print_error("JSON re-encode: %s\n", err);
    assert_bulki_rc(rc, BULKI_OK);
    assert_bytes_equal(out, olen, bytes, len);
    free(out);
    json_object_put(j);
}

/* Encode doc (entity == 0) or value (entity == 1) and compare with want;
 * then inject every short buffer. */
static void check_encoding(const bulki_doc *d, const bulki_value *v, const uint8_t *want,
                           size_t want_len)
{
    int entity = v != NULL;
    size_t len = 0, written = 0;
    int rc = entity ? bulki_value_encoded_len(&len, v) : bulki_doc_encoded_len(&len, d);
    assert_bulki_rc(rc, BULKI_OK);
    assert_int_equal(len, want_len);

    uint8_t *buf = malloc(want_len ? want_len : 1);
    assert_non_null(buf);
    memset(buf, 0xEE, want_len);
    rc = entity ? bulki_encode_value(&written, buf, want_len, v)
                : bulki_encode_doc(&written, buf, want_len, d);
    assert_bulki_rc(rc, BULKI_OK);
    assert_bytes_equal(buf, written, want, want_len);
    free(buf);

    /* the same through the incremental writer API */
    buf = malloc(want_len ? want_len : 1);
    assert_non_null(buf);
    bulki_writer w;
    bulki_writer_init(&w, buf, want_len);
    if (entity)
        bulki_write_value(&w, v);
    else
        bulki_write_doc(&w, d);
    written = 0;
    assert_bulki_rc(bulki_writer_finish(&written, &w), BULKI_OK);
    assert_bytes_equal(buf, written, want, want_len);
    free(buf);

    /* failure injection: every buffer one byte or more too small */
    for (size_t cap = 0; cap < want_len; cap++) {
        uint8_t *small = malloc(cap ? cap : 1);
        assert_non_null(small);
        written = SIZE_MAX;
        rc = entity ? bulki_encode_value(&written, small, cap, v)
                    : bulki_encode_doc(&written, small, cap, d);
        if (rc != BULKI_E_NOSPACE)
            print_error("capacity %zu of %zu\n", cap, want_len);
        assert_bulki_rc(rc, BULKI_E_NOSPACE);
        assert_true(written <= cap);
        /* a writer that failed stays failed */
        bulki_writer_init(&w, small, cap);
        if (entity)
            bulki_write_value(&w, v);
        else
            bulki_write_doc(&w, d);
        size_t pos = 0;
        assert_bulki_rc(bulki_writer_finish(&pos, &w), BULKI_E_NOSPACE);
        bulki_value tiny = BULKI_V_STRN("", 0);
        bulki_write_value(&w, &tiny);
        bulki_write_doc(&w, &(bulki_doc){0, NULL});
        size_t pos2 = 0;
        assert_bulki_rc(bulki_writer_finish(&pos2, &w), BULKI_E_NOSPACE);
        assert_int_equal(pos2, pos);
        free(small);
    }

    /* the reader takes it, and the JSON form round-trips */
    uint8_t *exact = tu_dup(want, want_len);
    check_json_reencode(exact, want_len, entity);
    free(exact);
}

#define CHECK_DOC(d, ...)                                                         \
    do {                                                                          \
        static const uint8_t want_[] = {__VA_ARGS__};                             \
        check_encoding((d), NULL, want_, sizeof want_);                           \
    } while (0)
#define CHECK_VALUE(v, ...)                                                       \
    do {                                                                          \
        static const uint8_t want_[] = {__VA_ARGS__};                             \
        check_encoding(NULL, (v), want_, sizeof want_);                           \
    } while (0)

/* Concatenate head + n copies of byte c + tail into a new buffer. */
static uint8_t *build_expected(size_t *len, const uint8_t *head, size_t hlen, uint8_t c,
                               size_t n, const uint8_t *tail, size_t tlen)
{
    uint8_t *b = malloc(hlen + n + tlen);
    assert_non_null(b);
    memcpy(b, head, hlen);
    memset(b + hlen, c, n);
    if (tlen > 0)
        memcpy(b + hlen + n, tail, tlen);
    *len = hlen + n + tlen;
    return b;
}

static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    memset(s, c, n);
    s[n] = 0;
    return s;
}

/* ------------------------------------------------------------------ */
/* Exact bytes                                                         */
/* ------------------------------------------------------------------ */

static void empty_bulki_is_six_bytes(void **state)
{
    (void)state;
    /* total 48, 0 keys, header 0, data 0, offset_1 = 4, offset_2 = 5 */
    CHECK_DOC(&((bulki_doc){0, NULL}), 0x30, 0x00, 0x00, 0x00, 0x04, 0x05);
}

static void int32_entity_and_int32_pair(void **state)
{
    (void)state;
    int32_t five = 5, minus_two = -2;
    /* size 18 + 4 = 22 (0x16), type 9, count 1, LE payload */
    bulki_value v = BULKI_V_ITEM(BULKI_T_INT32, &five);
    CHECK_VALUE(&v, 0x16, 0x09, 0x01, 0x05, 0x00, 0x00, 0x00);

    /* {"x": int32 -2}: key size 18 + 2 = 20, value size 22,
     * total 48 + 20 + 22 = 90 (0x5a); offset_1 at 9, offset_2 at 17 */
    bulki_pair p = {KEY("x"), BULKI_V_ITEM(BULKI_T_INT32, &minus_two)};
    bulki_doc d = {1, &p};
    CHECK_DOC(&d, 0x5a, 0x01, 0x14, 0x16,                 /* total nkeys header data */
              0x14, 0x10, 0x01, 'x', 0x00,                /* key */
              0x09,                                       /* offset_1 = 9 */
              0x16, 0x09, 0x01, 0xfe, 0xff, 0xff, 0xff,   /* value */
              0x11);                                      /* offset_2 = 17 */
}

static void string_items(void **state)
{
    (void)state;
    /* "hi": size 18 + 3 = 21, payload includes the NUL */
    bulki_value hi = BULKI_V_STRN("hi", 2);
    CHECK_VALUE(&hi, 0x15, 0x10, 0x01, 'h', 'i', 0x00);
    /* "": size 19, payload is just the NUL */
    bulki_value empty = BULKI_V_STRN("", 0);
    CHECK_VALUE(&empty, 0x13, 0x10, 0x01, 0x00);
    /* the writer stops at len, whatever follows in memory */
    bulki_value prefix = BULKI_V_STRN("hi there", 2);
    CHECK_VALUE(&prefix, 0x15, 0x10, 0x01, 'h', 'i', 0x00);

    /* {"name": "obj"}: key 18 + 5 = 23, value 18 + 4 = 22,
     * total 48 + 45 = 93; offset_1 at 12, offset_2 at 20 */
    bulki_pair p = {KEY("name"), KEY("obj")};
    bulki_doc d = {1, &p};
    CHECK_DOC(&d, 0x5d, 0x01, 0x17, 0x16,
              0x17, 0x10, 0x01, 'n', 'a', 'm', 'e', 0x00,
              0x0c,
              0x16, 0x10, 0x01, 'o', 'b', 'j', 0x00,
              0x14);
}

static void u32_array(void **state)
{
    (void)state;
    static const uint32_t a[3] = {1, 0x01020304u, 0xffffffffu};
    /* size 18 + 3 * 4 = 30 (0x1e), type 10 | array << 5 = 0x2a, count 3 */
    bulki_value v = BULKI_V_ARRAY(BULKI_T_UINT32, a, 3);
    CHECK_VALUE(&v, 0x1e, 0x2a, 0x03,
                0x01, 0x00, 0x00, 0x00, 0x04, 0x03, 0x02, 0x01, 0xff, 0xff, 0xff, 0xff);
    /* an empty array: size 18, count 0, no payload (data may be NULL) */
    bulki_value e = BULKI_V_ARRAY(BULKI_T_UINT32, NULL, 0);
    CHECK_VALUE(&e, 0x12, 0x2a, 0x00);
}

static void base_items_of_every_width(void **state)
{
    (void)state;
    int16_t s16 = -12;
    int32_t s32 = -42;
    uint32_t u32 = 4000000000u;
    int64_t s64 = -5000000000LL;
    int8_t s8 = -8;
    uint8_t u8 = 200;
    int16_t i16 = -300;
    uint16_t u16 = 60000;
    int32_t i32 = -70000;
    uint32_t ui32 = 3000000000u;
    int64_t i64 = -9000000000000LL;
    uint64_t u64 = UINT64_MAX;
    float f = 1.5f;
    double dbl = -2.25;
    uint8_t ch = 'Z', t = 1, fl = 0;
    uint64_t ptr = 0x1122334455667788ull, sz = 123456789u;
    static const uint8_t bools[3] = {1, 0, 1};
    static const int16_t shorts[2] = {-1, 2};

    bulki_value v;
    v = BULKI_V_ITEM(BULKI_T_SHORT, &s16);
    CHECK_VALUE(&v, 0x14, 0x01, 0x01, 0xf4, 0xff);
    v = BULKI_V_ITEM(BULKI_T_INT, &s32);
    CHECK_VALUE(&v, 0x16, 0x02, 0x01, 0xd6, 0xff, 0xff, 0xff);
    v = BULKI_V_ITEM(BULKI_T_UINT, &u32);
    CHECK_VALUE(&v, 0x16, 0x03, 0x01, 0x00, 0x28, 0x6b, 0xee);
    v = BULKI_V_ITEM(BULKI_T_LONG, &s64);
    CHECK_VALUE(&v, 0x1a, 0x04, 0x01, 0x00, 0x0e, 0xfa, 0xd5, 0xfe, 0xff, 0xff, 0xff);
    v = BULKI_V_ITEM(BULKI_T_INT8, &s8);
    CHECK_VALUE(&v, 0x13, 0x05, 0x01, 0xf8);
    v = BULKI_V_ITEM(BULKI_T_UINT8, &u8);
    CHECK_VALUE(&v, 0x13, 0x06, 0x01, 0xc8);
    v = BULKI_V_ITEM(BULKI_T_INT16, &i16);
    CHECK_VALUE(&v, 0x14, 0x07, 0x01, 0xd4, 0xfe);
    v = BULKI_V_ITEM(BULKI_T_UINT16, &u16);
    CHECK_VALUE(&v, 0x14, 0x08, 0x01, 0x60, 0xea);
    v = BULKI_V_ITEM(BULKI_T_INT32, &i32);
    CHECK_VALUE(&v, 0x16, 0x09, 0x01, 0x90, 0xee, 0xfe, 0xff);
    v = BULKI_V_ITEM(BULKI_T_UINT32, &ui32);
    CHECK_VALUE(&v, 0x16, 0x0a, 0x01, 0x00, 0x5e, 0xd0, 0xb2);
    v = BULKI_V_ITEM(BULKI_T_INT64, &i64);
    CHECK_VALUE(&v, 0x1a, 0x0b, 0x01, 0x00, 0x70, 0x32, 0x86, 0xd0, 0xf7, 0xff, 0xff);
    v = BULKI_V_ITEM(BULKI_T_UINT64, &u64);
    CHECK_VALUE(&v, 0x1a, 0x0c, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
    v = BULKI_V_ITEM(BULKI_T_FLOAT, &f);
    CHECK_VALUE(&v, 0x16, 0x0d, 0x01, 0x00, 0x00, 0xc0, 0x3f);
    v = BULKI_V_ITEM(BULKI_T_DOUBLE, &dbl);
    CHECK_VALUE(&v, 0x1a, 0x0e, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xc0);
    v = BULKI_V_ITEM(BULKI_T_CHAR, &ch);
    CHECK_VALUE(&v, 0x13, 0x0f, 0x01, 0x5a);
    v = BULKI_V_ITEM(BULKI_T_BOOLEAN, &t);
    CHECK_VALUE(&v, 0x13, 0x11, 0x01, 0x01);
    v = BULKI_V_ITEM(BULKI_T_BOOLEAN, &fl);
    CHECK_VALUE(&v, 0x13, 0x11, 0x01, 0x00);
    v = BULKI_V_ITEM(BULKI_T_VOID_PTR, &ptr);
    CHECK_VALUE(&v, 0x1a, 0x12, 0x01, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11);
    v = BULKI_V_ITEM(BULKI_T_SIZE_T, &sz);
    CHECK_VALUE(&v, 0x1a, 0x13, 0x01, 0x15, 0xcd, 0x5b, 0x07, 0x00, 0x00, 0x00, 0x00);
    /* bool array: size 18 + 3, type 17 | 0x20 */
    v = BULKI_V_ARRAY(BULKI_T_BOOLEAN, bools, 3);
    CHECK_VALUE(&v, 0x15, 0x31, 0x03, 0x01, 0x00, 0x01);
    /* int16 array: size 18 + 4, type 7 | 0x20 */
    v = BULKI_V_ARRAY(BULKI_T_INT16, shorts, 2);
    CHECK_VALUE(&v, 0x16, 0x27, 0x02, 0xff, 0xff, 0x02, 0x00);
    /* empty double array */
    v = BULKI_V_ARRAY(BULKI_T_DOUBLE, NULL, 0);
    CHECK_VALUE(&v, 0x12, 0x2e, 0x00);
}

static void nested_bulki_item_counts_plus_8(void **state)
{
    (void)state;
    uint8_t seven = 7;
    /* inner {"b": uint8 7}: key 20, value 19, total 48 + 39 = 87 (0x57)
     * outer {"a": BULKI item}: value size 18 + 87 + 8 = 113 (0x71),
     * total 48 + 20 + 113 = 181 (varint b5 01) */
    bulki_pair ip = {KEY("b"), BULKI_V_ITEM(BULKI_T_UINT8, &seven)};
    bulki_doc inner = {1, &ip};
    bulki_pair op = {KEY("a"), BULKI_V_DOC(&inner)};
    bulki_doc outer = {1, &op};
    static const uint8_t want[] = {
        0xb5, 0x01, 0x01, 0x14, 0x71,      /* total 181, 1 key, header 20, data 113 */
        0x14, 0x10, 0x01, 'a', 0x00,       /* key "a" (bytes 5..9) */
        0x0a,                              /* offset_1 = 10 */
        0x71, 0x14, 0x01,                  /* BULKI item, size 113 (bytes 11..13) */
        0x57, 0x01, 0x14, 0x13,            /* inner: total 87, 1 key, 20, 19 */
        0x14, 0x10, 0x01, 'b', 0x00,       /* key "b" (bytes 18..22) */
        0x17,                              /* inner offset_1 = 23: absolute */
        0x13, 0x06, 0x01, 0x07,            /* uint8 7 (bytes 24..27) */
        0x1c,                              /* inner offset_2 = 28 */
        0x1d,                              /* outer offset_2 = 29 */
    };
    check_encoding(&outer, NULL, want, sizeof want);

    /* the reader sees the same notional sizes */
    bulki_map m, im;
    bulki_ent e;
    assert_bulki_rc(bulki_decode_doc(&m, want, sizeof want, NULL), BULKI_OK);
    assert_int_equal(m.total, 181);
    assert_bulki_rc(bulki_map_get(&e, &m, "a"), BULKI_OK);
    assert_bulki_rc(bulki_ent_doc(&im, &e, 0), BULKI_OK);
    assert_int_equal(im.total, 87);
    assert_int_equal(e.size, 18 + im.total + 8);

    /* the same BULKI item as a top-level entity: offsets count from the
     * entity's first byte (size 113, inner starts at 3: offset_1 = 12) */
    bulki_value top = BULKI_V_DOC(&inner);
    CHECK_VALUE(&top, 0x71, 0x14, 0x01, 0x57, 0x01, 0x14, 0x13, 0x14, 0x10, 0x01, 'b', 0x00,
                0x0c, 0x13, 0x06, 0x01, 0x07, 0x11);
    /* an item holding the empty BULKI: 18 + 48 + 8 = 74 */
    bulki_doc none = {0, NULL};
    bulki_value topempty = BULKI_V_DOC(&none);
    CHECK_VALUE(&topempty, 0x4a, 0x14, 0x01, 0x30, 0x00, 0x00, 0x00, 0x07, 0x08);
}

static void bulki_array_has_no_plus_8(void **state)
{
    (void)state;
    uint8_t yes = 1;
    /* {"arr": BULKI array [{}, {"k": true}]}
     * {} = 48; {"k": true} = 48 + 20 + 19 = 87; array size 18 + 48 + 87 =
     * 153 (99 01), no +8; key "arr" 22; total 48 + 22 + 153 = 223 (df 01) */
    bulki_pair kp = {KEY("k"), BULKI_V_ITEM(BULKI_T_BOOLEAN, &yes)};
    bulki_doc docs[2] = {{0, NULL}, {1, &kp}};
    bulki_pair p = {KEY("arr"),
                    {.type = BULKI_T_BULKI, .cls = BULKI_ARRAY, .count = 2, .u.doc = docs}};
    bulki_doc d = {1, &p};
    CHECK_DOC(&d,
              0xdf, 0x01, 0x01, 0x16, 0x99, 0x01,            /* total nkeys header data */
              0x16, 0x10, 0x01, 'a', 'r', 'r', 0x00,         /* key (6..12) */
              0x0d,                                          /* offset_1 = 13 */
              0x99, 0x01, 0x34, 0x02,                        /* size 153, 20|0x20, 2 */
              0x30, 0x00, 0x00, 0x00, 0x16, 0x17,            /* {} at 18: offsets 22, 23 */
              0x57, 0x01, 0x14, 0x13,                        /* {"k": true} at 24 */
              0x14, 0x10, 0x01, 'k', 0x00,                   /* key (28..32) */
              0x21,                                          /* offset_1 = 33 */
              0x13, 0x11, 0x01, 0x01,                        /* true (34..37) */
              0x26,                                          /* offset_2 = 38 */
              0x27);                                         /* outer offset_2 = 39 */

    /* an empty BULKI array: size 18, count 0 */
    bulki_value e = {.type = BULKI_T_BULKI, .cls = BULKI_ARRAY, .count = 0, .u.doc = NULL};
    CHECK_VALUE(&e, 0x12, 0x34, 0x00);
}

static void bulki_ent_arrays(void **state)
{
    (void)state;
    int8_t m1 = -1;
    uint16_t u16 = 0x1234;
    /* empty: size 18, type 21 | 0x20 = 0x35, count 0 */
    bulki_value empty = BULKI_V_ENTS(NULL, 0);
    CHECK_VALUE(&empty, 0x12, 0x35, 0x00);

    /* [int8 -1 (19), "z" (20), [] (18), uint16 (20)]: 18 + 77 = 95 (0x5f) */
    bulki_value ents[4] = {BULKI_V_ITEM(BULKI_T_INT8, &m1), BULKI_V_STRN("z", 1),
                           BULKI_V_ENTS(NULL, 0), BULKI_V_ITEM(BULKI_T_UINT16, &u16)};
    bulki_value v = BULKI_V_ENTS(ents, 4);
    CHECK_VALUE(&v, 0x5f, 0x35, 0x04,
                0x13, 0x05, 0x01, 0xff,
                0x14, 0x10, 0x01, 'z', 0x00,
                0x12, 0x35, 0x00,
                0x14, 0x08, 0x01, 0x34, 0x12);

    /* [BULKI item {}]: child 18 + 48 + 8 = 74 (0x4a), array 18 + 74 = 92;
     * the inner BULKI starts at 6: offset_1 = 10, offset_2 = 11 */
    bulki_doc none = {0, NULL};
    bulki_value one = BULKI_V_DOC(&none);
    bulki_value wrap = BULKI_V_ENTS(&one, 1);
    CHECK_VALUE(&wrap, 0x5c, 0x35, 0x01, 0x4a, 0x14, 0x01, 0x30, 0x00, 0x00, 0x00, 0x0a,
                0x0b);

    /* inside a BULKI: {"e": [int8 -1]}: value 18 + 19 = 37 (0x25),
     * total 48 + 20 + 37 = 105 (0x69) */
    bulki_pair p = {KEY("e"), BULKI_V_ENTS(ents, 1)};
    bulki_doc d = {1, &p};
    CHECK_DOC(&d, 0x69, 0x01, 0x14, 0x25, 0x14, 0x10, 0x01, 'e', 0x00, 0x09, 0x25, 0x35, 0x01,
              0x13, 0x05, 0x01, 0xff, 0x11);
}

/* A string item of n 'a's: size varint, 0x10, 0x01, bytes, NUL. */
static void check_string_len(size_t n, const uint8_t *size_varint, size_t vlen)
{
    char *s = repeat('a', n);
    uint8_t head[8];
    memcpy(head, size_varint, vlen);
    head[vlen] = 0x10;
    head[vlen + 1] = 0x01;
    static const uint8_t nul[1] = {0};
    size_t len;
    uint8_t *want = build_expected(&len, head, vlen + 2, 'a', n, nul, 1);
    bulki_value v = BULKI_V_STRN(s, n);
    check_encoding(NULL, &v, want, len);
    free(want);
    free(s);
}

static void varint_sizes_cross_127_and_16383(void **state)
{
    (void)state;
    /* size = 18 + n + 1 */
    check_string_len(108, (const uint8_t[]){0x7f}, 1);             /* 127 */
    check_string_len(109, (const uint8_t[]){0x80, 0x01}, 2);       /* 128 */
    check_string_len(200, (const uint8_t[]){0xdb, 0x01}, 2);       /* 219 */
    check_string_len(16364, (const uint8_t[]){0xff, 0x7f}, 2);     /* 16383 */
    check_string_len(16365, (const uint8_t[]){0x80, 0x80, 0x01}, 3); /* 16384 */

    /* counts: 127 and 128 uint8 elements (size 145 / 146) */
    uint8_t bytes[128];
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (uint8_t)(i * 3);
    size_t len;
    uint8_t *want = build_expected(&len, (const uint8_t[]){0x91, 0x01, 0x26, 0x7f}, 4, 0, 127,
                                   NULL, 0);
    memcpy(want + 4, bytes, 127);
    bulki_value v = BULKI_V_ARRAY(BULKI_T_UINT8, bytes, 127);
    check_encoding(NULL, &v, want, len);
    free(want);
    want = build_expected(&len, (const uint8_t[]){0x92, 0x01, 0x26, 0x80, 0x01}, 5, 0, 128,
                          NULL, 0);
    memcpy(want + 5, bytes, 128);
    v = BULKI_V_ARRAY(BULKI_T_UINT8, bytes, 128);
    check_encoding(NULL, &v, want, len);
    free(want);
}

static void offsets_past_127_take_two_bytes(void **state)
{
    (void)state;
    size_t len;
    uint8_t *want;

    /* {"s": 150 x 'b'}: value 18 + 151 = 169 (a9 01), total 48 + 20 + 169
     * = 237 (ed 01); offset_1 = 11; value at 12..166; offset_2 = 167 */
    char *b150 = repeat('b', 150);
    bulki_pair p1 = {KEY("s"), BULKI_V_STRN(b150, 150)};
    bulki_doc d1 = {1, &p1};
    static const uint8_t h1[] = {0xed, 0x01, 0x01, 0x14, 0xa9, 0x01, 0x14, 0x10, 0x01,
                                 's',  0x00, 0x0b, 0xa9, 0x01, 0x10, 0x01};
    static const uint8_t t1[] = {0x00, 0xa7, 0x01};
    want = build_expected(&len, h1, sizeof h1, 'b', 150, t1, sizeof t1);
    assert_int_equal(len, 169);
    check_encoding(&d1, NULL, want, len);
    free(want);

    /* {130 x 'k': int8 0}: key 18 + 131 = 149 (95 01), value 19, total
     * 216 (d8 01); key at 6..140; offset_1 = 141 (8d 01); value 143..146;
     * offset_2 = 147 (93 01) */
    char *k130 = repeat('k', 130);
    int8_t zero = 0;
    bulki_pair p2 = {BULKI_V_STRN(k130, 130), BULKI_V_ITEM(BULKI_T_INT8, &zero)};
    bulki_doc d2 = {1, &p2};
    static const uint8_t h2[] = {0xd8, 0x01, 0x01, 0x95, 0x01, 0x13, 0x95, 0x01, 0x10, 0x01};
    static const uint8_t t2[] = {0x00, 0x8d, 0x01, 0x13, 0x05, 0x01, 0x00, 0x93, 0x01};
    want = build_expected(&len, h2, sizeof h2, 'k', 130, t2, sizeof t2);
    assert_int_equal(len, 149);
    check_encoding(&d2, NULL, want, len);
    free(want);

    /* {"big": 16400 x 'c'}: value 18 + 16401 = 16419 (a3 80 01), total
     * 48 + 22 + 16419 = 16489 (e9 80 01); offset_1 = 15; value at 16;
     * offset_2 = 16422 (a6 80 01): three-byte varints everywhere */
    char *c16k = repeat('c', 16400);
    bulki_pair p3 = {KEY("big"), BULKI_V_STRN(c16k, 16400)};
    bulki_doc d3 = {1, &p3};
    static const uint8_t h3[] = {0xe9, 0x80, 0x01, 0x01, 0x16, 0xa3, 0x80, 0x01,
                                 0x16, 0x10, 0x01, 'b',  'i',  'g',  0x00, 0x0f,
                                 0xa3, 0x80, 0x01, 0x10, 0x01};
    static const uint8_t t3[] = {0x00, 0xa6, 0x80, 0x01};
    want = build_expected(&len, h3, sizeof h3, 'c', 16400, t3, sizeof t3);
    assert_int_equal(len, 16425);
    check_encoding(&d3, NULL, want, len);
    free(want);

    free(b150);
    free(k130);
    free(c16k);
}

/* ------------------------------------------------------------------ */
/* Writer state                                                        */
/* ------------------------------------------------------------------ */

static void writer_latches_first_error(void **state)
{
    (void)state;
    uint8_t buf[64];
    int8_t one = 1;
    size_t len = 99;
    bulki_writer w;
    bulki_value good = BULKI_V_ITEM(BULKI_T_INT8, &one);
    bulki_value bad = BULKI_V_ITEM(0, &one);

    /* NOSPACE first: later writes (even ones that would fit) do nothing */
    char *s = repeat('q', 100);
    bulki_value big = BULKI_V_STRN(s, 100);
    bulki_writer_init(&w, buf, 10);
    bulki_write_value(&w, &big);
    assert_bulki_rc(bulki_writer_finish(&len, &w), BULKI_E_NOSPACE);
    size_t after_fail = len;
    assert_true(after_fail <= 10);
    bulki_write_value(&w, &good);
    bulki_write_doc(&w, &(bulki_doc){0, NULL});
    bulki_write_value(&w, &bad);
    assert_bulki_rc(bulki_writer_finish(&len, &w), BULKI_E_NOSPACE);
    assert_int_equal(len, after_fail);
    free(s);

    /* an invalid description first: its error wins over a later NOSPACE */
    bulki_writer_init(&w, buf, 0);
    bulki_write_value(&w, &bad);
    bulki_write_value(&w, &good);
    assert_bulki_rc(bulki_writer_finish(&len, &w), BULKI_E_TYPE);
    assert_int_equal(len, 0);

    /* and over a later, different invalid description */
    bulki_writer_init(&w, buf, sizeof buf);
    bulki_write_value(&w, &bad);
    bulki_write_value(&w, &BULKI_V_STRN("a\0b", 3));
    bulki_write_value(&w, &good);
    assert_bulki_rc(bulki_writer_finish(&len, &w), BULKI_E_TYPE);
    assert_int_equal(len, 0);

    /* NULL arguments */
    bulki_writer_init(&w, buf, sizeof buf);
    bulki_write_doc(&w, NULL);
    assert_bulki_rc(bulki_writer_finish(NULL, &w), BULKI_E_INVAL);
    bulki_writer_init(&w, buf, sizeof buf);
    bulki_write_value(&w, NULL);
    assert_bulki_rc(bulki_writer_finish(NULL, &w), BULKI_E_INVAL);
    assert_bulki_rc(bulki_encode_doc(&len, NULL, 64, &(bulki_doc){0, NULL}), BULKI_E_INVAL);
    assert_bulki_rc(bulki_encode_value(&len, NULL, 64, &good), BULKI_E_INVAL);
    /* a writer over no buffer has no room */
    bulki_writer_init(&w, NULL, 100);
    bulki_write_value(&w, &good);
    assert_bulki_rc(bulki_writer_finish(&len, &w), BULKI_E_NOSPACE);
}

static void writer_appends_with_absolute_offsets(void **state)
{
    (void)state;
    uint8_t buf[32];
    int32_t five = 5;
    size_t len = 0;
    bulki_writer w;
    bulki_value v = BULKI_V_ITEM(BULKI_T_INT32, &five);
    bulki_writer_init(&w, buf, sizeof buf);
    bulki_write_value(&w, &v);
    bulki_write_doc(&w, &(bulki_doc){0, NULL});
    assert_bulki_rc(bulki_writer_finish(&len, &w), BULKI_OK);
    /* the BULKI starts at 7: its offsets are 11 and 12, not 4 and 5 */
    static const uint8_t want[] = {0x16, 0x09, 0x01, 0x05, 0x00, 0x00, 0x00,
                                   0x30, 0x00, 0x00, 0x00, 0x0b, 0x0c};
    assert_bytes_equal(buf, len, want, sizeof want);
}

/* ------------------------------------------------------------------ */
/* Invalid descriptions                                                */
/* ------------------------------------------------------------------ */

/* The same error from encoded_len, encode and the writer, both as a
 * top-level entity and as the value (and the key) of a pair; never a
 * success. */
static void expect_invalid(const bulki_value *v, int want)
{
    uint8_t buf[256];
    size_t len = 0;
    bulki_writer w;
    int8_t one = 1;

    assert_bulki_rc(bulki_value_encoded_len(&len, v), want);
    assert_bulki_rc(bulki_encode_value(&len, buf, sizeof buf, v), want);
    bulki_writer_init(&w, buf, sizeof buf);
    bulki_write_value(&w, v);
    assert_bulki_rc(bulki_writer_finish(&len, &w), want);

    bulki_pair pairs[2] = {{KEY("ok"), BULKI_V_ITEM(BULKI_T_INT8, &one)}, {KEY("bad"), *v}};
    bulki_doc d = {2, pairs};
    assert_bulki_rc(bulki_doc_encoded_len(&len, &d), want);
    assert_bulki_rc(bulki_encode_doc(&len, buf, sizeof buf, &d), want);
    pairs[1].key = *v;
    pairs[1].value = BULKI_V_ITEM(BULKI_T_INT8, &one);
    assert_bulki_rc(bulki_encode_doc(&len, buf, sizeof buf, &d), want);

    /* nested one level down: inside an ENT array and a BULKI item */
    bulki_value ents[2] = {BULKI_V_ITEM(BULKI_T_INT8, &one), *v};
    bulki_value ea = BULKI_V_ENTS(ents, 2);
    assert_bulki_rc(bulki_encode_value(&len, buf, sizeof buf, &ea), want);
    bulki_pair ip = {KEY("x"), *v};
    bulki_doc inner = {1, &ip};
    bulki_value item = BULKI_V_DOC(&inner);
    assert_bulki_rc(bulki_encode_value(&len, buf, sizeof buf, &item), want);
}

static void invalid_type_codes(void **state)
{
    (void)state;
    int32_t x = 1;
    static const unsigned bad[] = {0, 22, 23, 30, 31, 32, 255};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bulki_value v = BULKI_V_ITEM((uint8_t)bad[i], &x);
        expect_invalid(&v, BULKI_E_TYPE);
    }
}

static void invalid_class(void **state)
{
    (void)state;
    int32_t x = 1;
    bulki_value v = BULKI_V_ITEM(BULKI_T_INT32, &x);
    v.cls = 2;
    expect_invalid(&v, BULKI_E_CLASS);
    /* a PDC_BULKI_ENT item is invalid */
    bulki_value ent_item = {.type = BULKI_T_BULKI_ENT, .cls = BULKI_ITEM, .count = 1,
                            .u.ents = &v};
    expect_invalid(&ent_item, BULKI_E_CLASS);
}

static void invalid_string_array(void **state)
{
    (void)state;
    static const char *strs[2] = {"a", "b"};
    bulki_value v = {.type = BULKI_T_STRING, .cls = BULKI_ARRAY, .count = 2, .len = 1,
                     .u.data = strs};
    expect_invalid(&v, BULKI_E_STRING_ARRAY);
    v.count = 0;
    expect_invalid(&v, BULKI_E_STRING_ARRAY);
}

static void invalid_item_count(void **state)
{
    (void)state;
    int32_t x[2] = {1, 2};
    bulki_value v = BULKI_V_ITEM(BULKI_T_INT32, x);
    v.count = 2;
    expect_invalid(&v, BULKI_E_COUNT);
    v.count = 0;
    expect_invalid(&v, BULKI_E_COUNT);
    bulki_value s = BULKI_V_STRN("s", 1);
    s.count = 2;
    expect_invalid(&s, BULKI_E_COUNT);
    bulki_doc none[2] = {{0, NULL}, {0, NULL}};
    bulki_value d = BULKI_V_DOC(none);
    d.count = 2;
    expect_invalid(&d, BULKI_E_COUNT);
}

static void invalid_boolean_value(void **state)
{
    (void)state;
    uint8_t two = 2, ff = 0xff;
    expect_invalid(&BULKI_V_ITEM(BULKI_T_BOOLEAN, &two), BULKI_E_BOOL);
    expect_invalid(&BULKI_V_ITEM(BULKI_T_BOOLEAN, &ff), BULKI_E_BOOL);
    static const uint8_t arr[4] = {0, 1, 1, 2};
    expect_invalid(&BULKI_V_ARRAY(BULKI_T_BOOLEAN, arr, 4), BULKI_E_BOOL);
    /* the same bytes are fine as uint8 */
    uint8_t buf[16];
    size_t len;
    assert_bulki_rc(bulki_encode_value(&len, buf, sizeof buf,
                                       &BULKI_V_ARRAY(BULKI_T_UINT8, arr, 4)),
                    BULKI_OK);
}

static void invalid_string_with_nul(void **state)
{
    (void)state;
    expect_invalid(&BULKI_V_STRN("a\0b", 3), BULKI_E_STRING);
    expect_invalid(&BULKI_V_STRN("\0", 1), BULKI_E_STRING);
    expect_invalid(&BULKI_V_STRN("abc\0", 4), BULKI_E_STRING);
}

static void invalid_null_data(void **state)
{
    (void)state;
    expect_invalid(&BULKI_V_ITEM(BULKI_T_INT32, NULL), BULKI_E_INVAL);
    expect_invalid(&BULKI_V_ARRAY(BULKI_T_DOUBLE, NULL, 3), BULKI_E_INVAL);
    expect_invalid(&BULKI_V_STRN(NULL, 3), BULKI_E_INVAL);
    expect_invalid(&BULKI_V_ENTS(NULL, 2), BULKI_E_INVAL);
    expect_invalid(&BULKI_V_DOC(NULL), BULKI_E_INVAL);
    bulki_doc d = {3, NULL};
    expect_invalid(&BULKI_V_DOC(&d), BULKI_E_INVAL);
}

/* n nested BULKIs: doc[0] = {"k": BULKI item doc[1]}, ..., doc[n-1] = {} */
static int encode_nested_docs(size_t n, size_t *len, uint8_t *buf, size_t cap)
{
    bulki_doc *docs = calloc(n, sizeof *docs);
    bulki_pair *pairs = calloc(n, sizeof *pairs);
    assert_non_null(docs);
    assert_non_null(pairs);
    for (size_t i = 0; i + 1 < n; i++) {
        pairs[i].key = KEY("k");
        pairs[i].value = BULKI_V_DOC(&docs[i + 1]);
        docs[i] = (bulki_doc){1, &pairs[i]};
    }
    docs[n - 1] = (bulki_doc){0, NULL};
    int rc = bulki_doc_encoded_len(len, &docs[0]);
    int rc2 = bulki_encode_doc(len, buf, cap, &docs[0]);
    assert_bulki_rc(rc2, rc);
    free(docs);
    free(pairs);
    return rc;
}

/* n nested ENT arrays as a top-level entity, the innermost empty. */
static int encode_nested_ents(size_t n, size_t *len, uint8_t *buf, size_t cap)
{
    bulki_value *v = calloc(n, sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i + 1 < n; i++)
        v[i] = BULKI_V_ENTS(&v[i + 1], 1);
    v[n - 1] = BULKI_V_ENTS(NULL, 0);
    int rc = bulki_value_encoded_len(len, &v[0]);
    int rc2 = bulki_encode_value(len, buf, cap, &v[0]);
    assert_bulki_rc(rc2, rc);
    free(v);
    return rc;
}

static void invalid_depth_beyond_max(void **state)
{
    (void)state;
    static uint8_t buf[1 << 16];
    size_t len = 0;
    bulki_map m;
    bulki_ent e;

    /* BULKI_MAX_DEPTH nested BULKIs (the top level counts as one) encode,
     * and the reader accepts them; one more is BULKI_E_DEPTH */
    assert_bulki_rc(encode_nested_docs(BULKI_MAX_DEPTH, &len, buf, sizeof buf), BULKI_OK);
    assert_bulki_rc(bulki_decode_doc(&m, buf, len, NULL), BULKI_OK);
    assert_bulki_rc(encode_nested_docs(BULKI_MAX_DEPTH + 1, &len, buf, sizeof buf),
                    BULKI_E_DEPTH);
    assert_bulki_rc(encode_nested_docs(BULKI_MAX_DEPTH + 50, &len, buf, sizeof buf),
                    BULKI_E_DEPTH);

    /* the same limit for nested PDC_BULKI_ENT arrays */
    assert_bulki_rc(encode_nested_ents(BULKI_MAX_DEPTH, &len, buf, sizeof buf), BULKI_OK);
    assert_bulki_rc(bulki_decode_value(&e, buf, len, NULL), BULKI_OK);
    assert_bulki_rc(encode_nested_ents(BULKI_MAX_DEPTH + 1, &len, buf, sizeof buf),
                    BULKI_E_DEPTH);
}

/* ------------------------------------------------------------------ */
/* The flat path against a model                                       */
/* ------------------------------------------------------------------ */

/*
 * A model of the encoding of a BULKI whose keys and values are base-type
 * or string entities (no nesting), written from docs/BULKI.md's rules alone,
 * with no shortcut: the writer's flat path (short strings and fixed-width
 * numbers, headers of three bytes) and its general path must both give
 * exactly these bytes. Returns the length, or 0 if some entity is not
 * valid (the caller then expects the general path's error).
 */
static size_t model_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    do {
        out[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            out[n] |= 0x80;
        n++;
    } while (v);
    return n;
}

static size_t model_entity(uint8_t *out, uint64_t *notional, const bulki_value *v)
{
    const struct bulki_type_info *ti = bulki_type_info(v->type);
    uint8_t payload[2048];
    size_t plen;
    if (ti == NULL || ti->kind == BULKI_KIND_NESTED || v->cls > BULKI_ARRAY ||
        (v->cls == BULKI_ITEM && v->count != 1))
        return 0;
    if (ti->kind == BULKI_KIND_STRING) {
        if (v->cls != BULKI_ITEM || (v->len > 0 && v->u.data == NULL) ||
            (v->len > 0 && memchr(v->u.data, 0, v->len) != NULL) || v->len + 1 > sizeof payload)
            return 0;
        if (v->len > 0)
            memcpy(payload, v->u.data, v->len);
        payload[v->len] = 0;
        plen = v->len + 1;
    } else {
        const uint8_t *src = v->u.data;
        plen = (size_t)v->count * ti->width;
        if ((v->count > 0 && src == NULL) || plen > sizeof payload)
            return 0;
        for (size_t i = 0; i < v->count; i++)
            for (size_t b = 0; b < ti->width; b++) { /* little-endian */
                uint16_t one = 1;
                int le = *(const uint8_t *)&one == 1;
                payload[i * ti->width + b] = src[i * ti->width + (le ? b : ti->width - 1 - b)];
            }
        if (ti->kind == BULKI_KIND_BOOL)
            for (size_t i = 0; i < plen; i++)
                if (payload[i] > 1)
                    return 0;
    }
    *notional = 18 + plen;
    size_t n = model_varint(out, *notional);
    out[n++] = (uint8_t)(v->type | v->cls << 5);
    n += model_varint(out + n, v->count);
    memcpy(out + n, payload, plen);
    return n + plen;
}

/* The model's bytes of d written at offset `at` of the buffer. */
static size_t model_doc(uint8_t *out, const bulki_doc *d, size_t at)
{
    static uint8_t keys[1 << 16], vals[1 << 16];
    size_t kl = 0, vl = 0, n = 0;
    uint64_t h = 0, dt = 0, s;
    for (size_t i = 0; i < d->npairs; i++) {
        size_t k = model_entity(keys + kl, &s, &d->pairs[i].key);
        if (k == 0)
            return 0;
        kl += k;
        h += s;
        size_t v = model_entity(vals + vl, &s, &d->pairs[i].value);
        if (v == 0)
            return 0;
        vl += v;
        dt += s;
    }
    n += model_varint(out + n, 48 + h + dt);
    n += model_varint(out + n, d->npairs);
    n += model_varint(out + n, h);
    n += model_varint(out + n, dt);
    memcpy(out + n, keys, kl);
    n += kl;
    n += model_varint(out + n, at + n);
    memcpy(out + n, vals, vl);
    n += vl;
    n += model_varint(out + n, at + n);
    return n;
}

/* Encode d after `at` bytes of prefix through every entry point; compare
 * with the model (bytes, length, NOSPACE below the exact room), or, if
 * the model says it is invalid, with the general path's error for the
 * first invalid entity (keys and values in pair order). */
static void check_against_model(const bulki_doc *d, size_t at)
{
    static uint8_t want[1 << 17], got[1 << 17];
    size_t wl = model_doc(want, d, at), len = SIZE_MAX;
    bulki_writer w;
    if (wl == 0) {
        int err = 0;
        for (size_t i = 0; i < d->npairs && err == 0; i++)
            if ((err = bulki_value_encoded_len(&len, &d->pairs[i].key)) == 0)
                err = bulki_value_encoded_len(&len, &d->pairs[i].value);
        assert_true(err < 0);
        assert_bulki_rc(bulki_doc_encoded_len(&len, d), err);
        bulki_writer_init(&w, got, sizeof got);
        w.pos = at;
        bulki_write_doc(&w, d);
        assert_bulki_rc(bulki_writer_finish(&len, &w), err);
        assert_int_equal(len, at);
        return;
    }
    if (at == 0) {
        assert_bulki_rc(bulki_doc_encoded_len(&len, d), BULKI_OK);
        assert_int_equal(len, wl);
    }
    memset(got, 0xEE, sizeof got);
    bulki_writer_init(&w, got, at + wl);
    w.pos = at;
    bulki_write_doc(&w, d);
    assert_bulki_rc(bulki_writer_finish(&len, &w), BULKI_OK);
    assert_int_equal(len, at + wl);
    assert_bytes_equal(got + at, wl, want, wl);
    assert_int_equal(got[at + wl], 0xEE); /* nothing past the end */
    if (at == 0) { /* and the reader takes it */
        bulki_map m;
        assert_bulki_rc(bulki_decode_doc(&m, got, wl, NULL), BULKI_OK);
    }
    /* every room below the exact one: NOSPACE, nothing past the room */
    for (size_t cap = at; cap < at + wl; cap++) {
        memset(got, 0xEE, at + wl + 1);
        bulki_writer_init(&w, got, cap);
        w.pos = at;
        bulki_write_doc(&w, d);
        assert_bulki_rc(bulki_writer_finish(&len, &w), BULKI_E_NOSPACE);
        assert_true(len <= cap);
        assert_int_equal(got[cap], 0xEE);
    }
}

static void flat_path_matches_the_model(void **state)
{
    (void)state;
    static uint8_t data[1024], bools[1024], str[200];
    for (size_t i = 0; i < sizeof data; i++) {
        data[i] = (uint8_t)(i * 7 + 1);
        bools[i] = (uint8_t)(i & 1);
    }
    for (size_t i = 0; i < sizeof str; i++)
        str[i] = (uint8_t)('a' + i % 26);
    static const uint64_t counts[] = {0, 1, 2, 3, 13, 14, 15, 16, 27, 54, 109, 110, 127, 128};
    static const size_t lens[] = {0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 107, 108, 109, 110};
    bulki_value vals[4096];
    size_t nv = 0;
    /* every base type code (and three invalid ones), class 0..2, counts
     * around the flat path's limits (18 + count * width against 127);
     * nested types have tests of their own (their data are descriptions) */
    for (unsigned t = 0; t <= 23; t++)
        for (unsigned cls = 0; cls <= 2 && t != BULKI_T_BULKI && t != BULKI_T_BULKI_ENT; cls++)
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
                bulki_value v = {.type = (uint8_t)t, .cls = (uint8_t)cls, .count = counts[c],
                                 .u.data = t == BULKI_T_BOOLEAN ? bools : data};
                if (t == BULKI_T_STRING)
                    v.len = 5;
                vals[nv++] = v;
            }
    /* strings around 108 bytes (size 127), with a NUL, without data */
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
        vals[nv++] = BULKI_V_STRN(str, lens[l]);
    vals[nv++] = BULKI_V_STRN("a\0b", 3);
    vals[nv++] = BULKI_V_STRN(NULL, 0);
    vals[nv++] = BULKI_V_STRN(NULL, 4);
    vals[nv++] = BULKI_V_ITEM(BULKI_T_INT32, NULL);
    vals[nv++] = BULKI_V_ARRAY(BULKI_T_INT32, NULL, 0);
    static const uint8_t bad_bools[3] = {0, 1, 2};
    vals[nv++] = BULKI_V_ARRAY(BULKI_T_BOOLEAN, bad_bools, 3);
    int32_t x = -5;
    for (size_t i = 0; i < nv; i++) {
        /* as a value, as a key, and beside a flat pair */
        bulki_pair p[2] = {{KEY("key"), vals[i]}, {KEY("x"), BULKI_V_ITEM(BULKI_T_INT32, &x)}};
        check_against_model(&(bulki_doc){1, p}, 0);
        check_against_model(&(bulki_doc){2, p}, 200);
        p[0].key = vals[i];
        p[0].value = BULKI_V_ITEM(BULKI_T_INT32, &x);
        check_against_model(&(bulki_doc){2, p}, 0);
    }
    /* 32 pairs (the most the flat path takes) and 33, and offsets that
     * cross 127 and 16383 */
    bulki_pair many[33];
    for (size_t i = 0; i < 33; i++)
        many[i] = (bulki_pair){BULKI_V_STRN(str + i, 5), BULKI_V_ARRAY(BULKI_T_UINT64, data, 3)};
    for (size_t n = 0; n <= 33; n++) {
        check_against_model(&(bulki_doc){n, many}, 0);
        check_against_model(&(bulki_doc){n, many}, 120);
        check_against_model(&(bulki_doc){n, many}, 16380);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_bulki_is_six_bytes),
        cmocka_unit_test(int32_entity_and_int32_pair),
        cmocka_unit_test(string_items),
        cmocka_unit_test(u32_array),
        cmocka_unit_test(base_items_of_every_width),
        cmocka_unit_test(nested_bulki_item_counts_plus_8),
        cmocka_unit_test(bulki_array_has_no_plus_8),
        cmocka_unit_test(bulki_ent_arrays),
        cmocka_unit_test(varint_sizes_cross_127_and_16383),
        cmocka_unit_test(offsets_past_127_take_two_bytes),
        cmocka_unit_test(writer_latches_first_error),
        cmocka_unit_test(writer_appends_with_absolute_offsets),
        cmocka_unit_test(invalid_type_codes),
        cmocka_unit_test(invalid_class),
        cmocka_unit_test(invalid_string_array),
        cmocka_unit_test(invalid_item_count),
        cmocka_unit_test(invalid_boolean_value),
        cmocka_unit_test(invalid_string_with_nul),
        cmocka_unit_test(invalid_null_data),
        cmocka_unit_test(invalid_depth_beyond_max),
        cmocka_unit_test(flat_path_matches_the_model),
    };
    return cmocka_run_group_tests_name("bulki_write", tests, NULL, NULL);
}
