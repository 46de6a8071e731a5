/*
 * test_bulki_roundtrip.c - randomized round trip through the codec, and
 * the typed getters' type and range checks.
 *
 * random_trees_round_trip: 1000 random descriptions (fixed seed) using all
 * 21 types, items and arrays (empty ones included), nested PDC_BULKI items
 * and arrays and PDC_BULKI_ENT arrays up to 5 levels, non-string keys,
 * strings of any byte but NUL (also 100+ bytes), random float bit patterns.
 * Each is encoded (length = bulki_*_encoded_len), decoded, and walked with
 * the views and typed getters; every type, class, count and value must be
 * the source's. The bytes must also survive decode -> JSON text -> encode.
 */
#include "bulki_test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TREES 1000
#define MAX_NEST 5

/* ------------------------------------------------------------------ */
/* Random descriptions                                                 */
/* ------------------------------------------------------------------ */

struct gen {
    uint64_t rng;
    void **ptrs;
    size_t n, cap;
    int json_exact;            /* 0 if a NaN's bits cannot survive JSON */
    size_t seen_item[22];      /* per type code: items generated */
    size_t seen_array[22];     /* arrays */
    size_t seen_empty_array;
    size_t seen_long_string;
    size_t seen_nonstring_key;
    size_t max_nest;
};

static void *galloc(struct gen *g, size_t size)
{
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 256;
        g->ptrs = realloc(g->ptrs, g->cap * sizeof *g->ptrs);
        assert_non_null(g->ptrs);
    }
    void *p = calloc(1, size ? size : 1);
    assert_non_null(p);
    g->ptrs[g->n++] = p;
    return p;
}

static void gfree_all(struct gen *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->ptrs[i]);
    g->n = 0;
}

static uint64_t rnd(struct gen *g, uint64_t n)
{
    return tu_below(&g->rng, n);
}

/* Write the low `width` bytes of v into dst in host order. */
static void store_host(uint8_t *dst, uint64_t v, unsigned width)
{
    switch (width) {
    case 1: { uint8_t x = (uint8_t)v; memcpy(dst, &x, 1); break; }
    case 2: { uint16_t x = (uint16_t)v; memcpy(dst, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(dst, &x, 4); break; }
    default: memcpy(dst, &v, 8); break;
    }
}

static uint64_t load_host(const uint8_t *src, unsigned width)
{
    switch (width) {
    case 1: { uint8_t x; memcpy(&x, src, 1); return x; }
    case 2: { uint16_t x; memcpy(&x, src, 2); return x; }
    case 4: { uint32_t x; memcpy(&x, src, 4); return x; }
    default: { uint64_t x; memcpy(&x, src, 8); return x; }
    }
}

static void gen_float(struct gen *g, uint8_t *dst, unsigned width)
{
    uint64_t bits = tu_rand(&g->rng);
    if (rnd(g, 3) == 0) {
        static const double special[] = {0.0, -0.0, 1.5, -2.25, 1e-310, 3.4e38, 1e300};
        size_t k = (size_t)rnd(g, sizeof special / sizeof special[0] + 3);
        double d = k < 7 ? special[k] : k == 7 ? INFINITY : k == 8 ? -INFINITY : NAN;
        if (width == 4) {
            float f = (float)d;
            uint32_t b;
            memcpy(&b, &f, 4);
            bits = b;
        } else {
            memcpy(&bits, &d, 8);
        }
    }
    /* the JSON form spells every NaN "NaN": only the default quiet NaN
     * reads back to the same bits */
    if (width == 4) {
        uint32_t b = (uint32_t)bits;
        float f;
        memcpy(&f, &b, 4);
        if (isnan(f) && b != 0x7fc00000u)
            g->json_exact = 0;
    } else {
        double d;
        memcpy(&d, &bits, 8);
        if (isnan(d) && bits != 0x7ff8000000000000ull)
            g->json_exact = 0;
    }
    store_host(dst, bits, width);
}

static void gen_doc(struct gen *g, bulki_doc *d, size_t nest);

static void gen_value(struct gen *g, bulki_value *v, size_t nest, int is_key)
{
    unsigned type;
    if (is_key)
        type = rnd(g, 2) ? BULKI_T_STRING : 1 + (unsigned)rnd(g, 19);
    else if (nest < MAX_NEST && rnd(g, 10) < 3)
        type = BULKI_T_BULKI + (unsigned)rnd(g, 2);
    else
        type = 1 + (unsigned)rnd(g, 19);
    const struct bulki_type_info *ti = bulki_type_info(type);
    memset(v, 0, sizeof *v);
    v->type = (uint8_t)type;

    if (type == BULKI_T_STRING) {
        size_t len = rnd(g, 10) ? (size_t)rnd(g, 13) : 100 + (size_t)rnd(g, 200);
        char *s = galloc(g, len + 1);
        for (size_t i = 0; i < len; i++)
            s[i] = (char)(1 + rnd(g, 255));
        v->cls = BULKI_ITEM;
        v->count = 1;
        v->len = len;
        v->u.data = s;
        g->seen_item[type]++;
        g->seen_long_string += len >= 128;
    } else if (type == BULKI_T_BULKI) {
        if (nest + 1 > g->max_nest)
            g->max_nest = nest + 1;
        if (rnd(g, 2)) {
            bulki_doc *d = galloc(g, sizeof *d);
            gen_doc(g, d, nest + 1);
            *v = BULKI_V_DOC(d);
            g->seen_item[type]++;
        } else {
            size_t n = (size_t)rnd(g, 4);
            bulki_doc *d = galloc(g, n * sizeof *d);
            for (size_t i = 0; i < n; i++)
                gen_doc(g, &d[i], nest + 1);
            *v = (bulki_value){.type = BULKI_T_BULKI, .cls = BULKI_ARRAY, .count = n,
                               .u.doc = n ? d : NULL};
            g->seen_array[type]++;
            g->seen_empty_array += n == 0;
        }
    } else if (type == BULKI_T_BULKI_ENT) {
        if (nest + 1 > g->max_nest)
            g->max_nest = nest + 1;
        size_t n = (size_t)rnd(g, 5);
        bulki_value *e = galloc(g, n * sizeof *e);
        for (size_t i = 0; i < n; i++)
            gen_value(g, &e[i], nest + 1, 0);
        *v = BULKI_V_ENTS(n ? e : NULL, n);
        g->seen_array[type]++;
        g->seen_empty_array += n == 0;
    } else {
        int array = rnd(g, 5) < 2;
        size_t n = !array ? 1 : rnd(g, 20) ? (size_t)rnd(g, 7) : 120 + (size_t)rnd(g, 20);
        uint8_t *data = galloc(g, n * ti->width);
        for (size_t i = 0; i < n; i++) {
            uint8_t *dst = data + i * ti->width;
            if (ti->kind == BULKI_KIND_BOOL)
                *dst = (uint8_t)rnd(g, 2);
            else if (ti->kind == BULKI_KIND_FLOAT)
                gen_float(g, dst, ti->width);
            else if (rnd(g, 4) == 0) /* extremes */
                store_host(dst, (const uint64_t[]){0, UINT64_MAX, 1ull << 63,
                                                   (1ull << 63) - 1}[rnd(g, 4)],
                           ti->width);
            else
                store_host(dst, tu_rand(&g->rng) >> (rnd(g, 64)), ti->width);
        }
        v->cls = array ? BULKI_ARRAY : BULKI_ITEM;
        v->count = n;
        v->u.data = n ? data : (rnd(g, 2) ? data : NULL);
        if (array) {
            g->seen_array[type]++;
            g->seen_empty_array += n == 0;
        } else {
            g->seen_item[type]++;
        }
    }
    if (is_key && type != BULKI_T_STRING)
        g->seen_nonstring_key++;
}

static void gen_doc(struct gen *g, bulki_doc *d, size_t nest)
{
    size_t n = (size_t)rnd(g, 5);
    bulki_pair *p = galloc(g, n * sizeof *p);
    for (size_t i = 0; i < n; i++) {
        /* sometimes repeat an earlier key: the reader keeps both pairs, in
         * order, and bulki_map_get returns the first */
        if (i > 0 && rnd(g, 8) == 0)
            p[i].key = p[rnd(g, i)].key;
        else
            gen_value(g, &p[i].key, nest, 1);
        gen_value(g, &p[i].value, nest, 0);
    }
    d->npairs = n;
    d->pairs = n ? p : (rnd(g, 2) ? p : NULL);
}

/* ------------------------------------------------------------------ */
/* Walking the decoded views                                           */
/* ------------------------------------------------------------------ */

static void check_doc(const bulki_doc *src, const bulki_map *m);

static int64_t sign_extend(uint64_t v, unsigned width)
{
    if (width < 8) {
        uint64_t sign = 1ull << (width * 8 - 1);
        v = (v ^ sign) - sign;
    }
    int64_t s;
    memcpy(&s, &v, 8);
    return s;
}

static void check_number(const bulki_value *src, const bulki_ent *e, uint64_t i)
{
    const struct bulki_type_info *ti = bulki_type_info(src->type);
    const uint8_t *data = src->u.data;
    uint64_t raw = load_host(data + i * ti->width, ti->width);
    int64_t s = 0;
    uint64_t u = 0;
    double d = 0;

    /* the payload holds the value little-endian */
    for (unsigned b = 0; b < ti->width; b++)
        assert_int_equal(e->payload[i * ti->width + b], (raw >> (8 * b)) & 0xff);

    switch (ti->kind) {
    case BULKI_KIND_SIGNED: {
        int64_t want = sign_extend(raw, ti->width);
        assert_bulki_rc(bulki_ent_elem_i64(&s, e, i), BULKI_OK);
        assert_true(s == want);
        if (want < 0) {
            assert_bulki_rc(bulki_ent_elem_u64(&u, e, i), BULKI_E_RANGE);
        } else {
            assert_bulki_rc(bulki_ent_elem_u64(&u, e, i), BULKI_OK);
            assert_true(u == (uint64_t)want);
        }
        assert_bulki_rc(bulki_ent_elem_f64(&d, e, i), BULKI_E_MISMATCH);
        break;
    }
    case BULKI_KIND_UNSIGNED:
    case BULKI_KIND_BOOL:
        assert_bulki_rc(bulki_ent_elem_u64(&u, e, i), BULKI_OK);
        assert_true(u == raw);
        if (raw > (uint64_t)INT64_MAX) {
            assert_bulki_rc(bulki_ent_elem_i64(&s, e, i), BULKI_E_RANGE);
        } else {
            assert_bulki_rc(bulki_ent_elem_i64(&s, e, i), BULKI_OK);
            assert_true((uint64_t)s == raw);
        }
        assert_bulki_rc(bulki_ent_elem_f64(&d, e, i), BULKI_E_MISMATCH);
        break;
    case BULKI_KIND_FLOAT:
        assert_bulki_rc(bulki_ent_elem_f64(&d, e, i), BULKI_OK);
        if (ti->width == 8) {
            uint64_t bits;
            memcpy(&bits, &d, 8);
            assert_true(bits == raw); /* exact, NaN payloads included */
        } else {
            uint32_t b32 = (uint32_t)raw;
            float f;
            memcpy(&f, &b32, 4);
            if (isnan(f)) {
                assert_true(isnan(d));
            } else {
                assert_true(d == (double)f);
                assert_int_equal(!!signbit(d), !!signbit(f));
            }
        }
        assert_bulki_rc(bulki_ent_elem_i64(&s, e, i), BULKI_E_MISMATCH);
        assert_bulki_rc(bulki_ent_elem_u64(&u, e, i), BULKI_E_MISMATCH);
        break;
    default:
        fail();
    }
}

static void check_value(const bulki_value *src, const bulki_ent *e)
{
    const struct bulki_type_info *ti = bulki_type_info(src->type);
    int64_t s;
    uint64_t u;
    double d;
    const char *str;
    size_t slen;
    bulki_map m;
    bulki_ent c;

    assert_int_equal(e->type, src->type);
    assert_int_equal(e->cls, src->cls);
    assert_true(e->count == src->count);

    if (src->type == BULKI_T_STRING) {
        assert_bulki_rc(bulki_ent_str(&str, &slen, e), BULKI_OK);
        assert_int_equal(slen, src->len);
        if (slen > 0)
            assert_memory_equal(str, src->u.data, slen);
        assert_int_equal(str[slen], 0);
        assert_true(e->size == 18 + src->len + 1);
        assert_bulki_rc(bulki_ent_i64(&s, e), BULKI_E_MISMATCH);
        assert_bulki_rc(bulki_ent_doc(&m, e, 0), BULKI_E_MISMATCH);
        return;
    }
    assert_bulki_rc(bulki_ent_str(&str, &slen, e), BULKI_E_MISMATCH);
    if (src->type == BULKI_T_BULKI) {
        for (uint64_t i = 0; i < src->count; i++) {
            assert_bulki_rc(bulki_ent_doc(&m, e, i), BULKI_OK);
            check_doc(&src->u.doc[i], &m);
        }
        assert_bulki_rc(bulki_ent_doc(&m, e, src->count), BULKI_E_NOTFOUND);
        assert_bulki_rc(bulki_ent_at(&c, e, 0), BULKI_E_MISMATCH);
        assert_bulki_rc(bulki_ent_i64(&s, e), BULKI_E_MISMATCH);
        return;
    }
    if (src->type == BULKI_T_BULKI_ENT) {
        for (uint64_t i = 0; i < src->count; i++) {
            assert_bulki_rc(bulki_ent_at(&c, e, i), BULKI_OK);
            assert_int_equal(c.depth, e->depth + 1);
            check_value(&src->u.ents[i], &c);
        }
        assert_bulki_rc(bulki_ent_at(&c, e, src->count), BULKI_E_NOTFOUND);
        assert_bulki_rc(bulki_ent_doc(&m, e, 0), BULKI_E_MISMATCH);
        assert_bulki_rc(bulki_ent_u64(&u, e), BULKI_E_MISMATCH);
        return;
    }

    /* numeric / boolean */
    assert_int_equal(e->payload_len, src->count * ti->width);
    assert_true(e->size == 18 + src->count * ti->width);
    for (uint64_t i = 0; i < src->count; i++)
        check_number(src, e, i);
    assert_bulki_rc(bulki_ent_elem_u64(&u, e, src->count), BULKI_E_NOTFOUND);
    assert_bulki_rc(bulki_ent_elem_i64(&s, e, src->count), BULKI_E_NOTFOUND);
    assert_bulki_rc(bulki_ent_elem_f64(&d, e, src->count), BULKI_E_NOTFOUND);
    if (src->cls == BULKI_ARRAY) {
        /* the item getters refuse arrays */
        assert_bulki_rc(bulki_ent_i64(&s, e), BULKI_E_MISMATCH);
        assert_bulki_rc(bulki_ent_u64(&u, e), BULKI_E_MISMATCH);
        assert_bulki_rc(bulki_ent_f64(&d, e), BULKI_E_MISMATCH);
    } else {
        /* the item getters agree with element 0 */
        int64_t s0 = 0;
        uint64_t u0 = 0;
        double d0 = 0;
        int r1 = bulki_ent_i64(&s, e), r2 = bulki_ent_elem_i64(&s0, e, 0);
        assert_bulki_rc(r1, r2);
        if (r1 == 0)
            assert_true(s == s0);
        r1 = bulki_ent_u64(&u, e);
        r2 = bulki_ent_elem_u64(&u0, e, 0);
        assert_bulki_rc(r1, r2);
        if (r1 == 0)
            assert_true(u == u0);
        r1 = bulki_ent_f64(&d, e);
        r2 = bulki_ent_elem_f64(&d0, e, 0);
        assert_bulki_rc(r1, r2);
        if (r1 == 0)
            assert_memory_equal(&d, &d0, sizeof d);
    }
}

static int same_string_key(const bulki_value *a, const bulki_value *b)
{
    return a->type == BULKI_T_STRING && b->type == BULKI_T_STRING && a->len == b->len &&
           (a->len == 0 || memcmp(a->u.data, b->u.data, a->len) == 0);
}

static void check_doc(const bulki_doc *src, const bulki_map *m)
{
    bulki_map_iter it;
    bulki_ent k, v;
    size_t *voff = calloc(src->npairs + 1, sizeof *voff);
    assert_non_null(voff);

    assert_true(m->npairs == src->npairs);
    bulki_map_iter_init(&it, m);
    for (size_t i = 0; i < src->npairs; i++) {
        assert_int_equal(bulki_map_next(&k, &v, &it), 1);
        assert_int_equal(k.depth, m->depth);
        check_value(&src->pairs[i].key, &k);
        check_value(&src->pairs[i].value, &v);
        voff[i] = v.offset;
    }
    assert_int_equal(bulki_map_next(&k, &v, &it), 0);
    assert_int_equal(bulki_map_next(&k, &v, &it), 0);

    /* lookup by string key: the first pair with that key */
    for (size_t i = 0; i < src->npairs; i++) {
        const bulki_value *key = &src->pairs[i].key;
        if (key->type != BULKI_T_STRING)
            continue;
        char *cs = malloc(key->len + 1);
        memcpy(cs, key->u.data, key->len);
        cs[key->len] = 0;
        size_t first = i;
        for (size_t j = 0; j < i; j++)
            if (same_string_key(&src->pairs[j].key, key)) {
                first = j;
                break;
            }
        assert_bulki_rc(bulki_map_get(&v, m, cs), BULKI_OK);
        assert_int_equal(v.offset, voff[first]);
        free(cs);
    }
    free(voff);
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

static void json_reencodes_exactly(const uint8_t *buf, size_t len, int entity)
{
    json_object *j = NULL, *again;
    uint8_t *out = NULL;
    size_t olen = 0;
    char err[256] = "";
    assert_bulki_rc(tu_decode_json(&j, buf, len, entity, NULL), BULKI_OK);
    again = tu_json_text_roundtrip(j);
    assert_non_null(again);
    int rc = bulki_json_encode(&out, &olen, again, err, sizeof err);
    if (rc != 0)
        print_error("JSON encode: %s\n", err);
    assert_bulki_rc(rc, BULKI_OK);
    assert_bytes_equal(out, olen, buf, len);
    free(out);
    json_object_put(again);
    json_object_put(j);
}

static void random_trees_round_trip(void **state)
{
    (void)state;
    struct gen g;
    memset(&g, 0, sizeof g);
    g.rng = 0x0b0c1d2e3f405162ull;
    size_t json_checked = 0, bytes = 0;

    for (int t = 0; t < TREES; t++) {
        int entity = t % 4 == 3;
        bulki_doc d;
        bulki_value v;
        size_t len = 0, written = 0, off = 0;
        g.json_exact = 1;
        if (entity)
            gen_value(&g, &v, 0, 0);
        else
            gen_doc(&g, &d, 1);
        int rc = entity ? bulki_value_encoded_len(&len, &v) : bulki_doc_encoded_len(&len, &d);
        assert_bulki_rc(rc, BULKI_OK);
        uint8_t *buf = malloc(len ? len : 1);
        assert_non_null(buf);
        rc = entity ? bulki_encode_value(&written, buf, len, &v)
                    : bulki_encode_doc(&written, buf, len, &d);
        assert_bulki_rc(rc, BULKI_OK);
        assert_int_equal(written, len);
        bytes += len;

        if (entity) {
            bulki_ent e;
            rc = bulki_decode_value(&e, buf, len, &off);
            if (rc != 0)
                print_error("tree %d: %s at byte %zu\n", t, bulki_errname(rc), off);
            assert_bulki_rc(rc, BULKI_OK);
            assert_int_equal(e.offset, 0);
            assert_int_equal(e.end, len);
            check_value(&v, &e);
        } else {
            bulki_map m;
            rc = bulki_decode_doc(&m, buf, len, &off);
            if (rc != 0)
                print_error("tree %d: %s at byte %zu\n", t, bulki_errname(rc), off);
            assert_bulki_rc(rc, BULKI_OK);
            assert_int_equal(m.end, len);
            check_doc(&d, &m);
        }
        if (g.json_exact) {
            json_reencodes_exactly(buf, len, entity);
            json_checked++;
        }
        free(buf);
        gfree_all(&g);
    }
    free(g.ptrs);

    print_message("%d trees, %zu bytes, %zu re-encoded through JSON, nesting up to %zu\n",
                  TREES, bytes, json_checked, g.max_nest);
    /* the generator reached what it is meant to cover */
    for (unsigned type = 1; type <= 21; type++) {
        if (type != BULKI_T_BULKI_ENT)
            assert_true(g.seen_item[type] > 0);
        if (type != BULKI_T_STRING)
            assert_true(g.seen_array[type] > 0);
    }
    assert_true(g.seen_empty_array > 0);
    assert_true(g.seen_long_string > 0);
    assert_true(g.seen_nonstring_key > 0);
    assert_int_equal(g.max_nest, MAX_NEST);
    assert_true(json_checked > TREES / 2);
}

/* Getter checks on one hand-built record. */
static void typed_getters_check_type_and_range(void **state)
{
    (void)state;
    int64_t minus_one = -1, i64min = INT64_MIN;
    uint64_t big = 1ull << 63, i64max = (uint64_t)INT64_MAX, u64max = UINT64_MAX;
    int8_t i8 = -128;
    uint32_t u32 = 4000000000u;
    double dbl = 1.5;
    float flt = -0.25f;
    uint8_t t = 1;
    char ch = 'A';
    static const uint16_t arr[3] = {1, 2, 65535};
    bulki_pair pairs[] = {
        {BULKI_V_STRN("neg", 3), BULKI_V_ITEM(BULKI_T_INT64, &minus_one)},
        {BULKI_V_STRN("min", 3), BULKI_V_ITEM(BULKI_T_LONG, &i64min)},
        {BULKI_V_STRN("big", 3), BULKI_V_ITEM(BULKI_T_UINT64, &big)},
        {BULKI_V_STRN("i64max", 6), BULKI_V_ITEM(BULKI_T_SIZE_T, &i64max)},
        {BULKI_V_STRN("u64max", 6), BULKI_V_ITEM(BULKI_T_UINT64, &u64max)},
        {BULKI_V_STRN("i8", 2), BULKI_V_ITEM(BULKI_T_INT8, &i8)},
        {BULKI_V_STRN("u32", 3), BULKI_V_ITEM(BULKI_T_UINT, &u32)},
        {BULKI_V_STRN("dbl", 3), BULKI_V_ITEM(BULKI_T_DOUBLE, &dbl)},
        {BULKI_V_STRN("flt", 3), BULKI_V_ITEM(BULKI_T_FLOAT, &flt)},
        {BULKI_V_STRN("bool", 4), BULKI_V_ITEM(BULKI_T_BOOLEAN, &t)},
        {BULKI_V_STRN("char", 4), BULKI_V_ITEM(BULKI_T_CHAR, &ch)},
        {BULKI_V_STRN("arr", 3), BULKI_V_ARRAY(BULKI_T_UINT16, arr, 3)},
        {BULKI_V_STRN("str", 3), BULKI_V_STRN("text", 4)},
    };
    bulki_doc d = {sizeof pairs / sizeof pairs[0], pairs};
    uint8_t buf[512];
    size_t len;
    bulki_map m;
    bulki_ent e;
    int64_t s;
    uint64_t u;
    double f;
    const char *str;
    size_t slen;

    assert_bulki_rc(bulki_encode_doc(&len, buf, sizeof buf, &d), BULKI_OK);
    assert_bulki_rc(bulki_decode_doc(&m, buf, len, NULL), BULKI_OK);

    /* u64 of a negative value */
    assert_bulki_rc(bulki_map_get(&e, &m, "neg"), BULKI_OK);
    assert_bulki_rc(bulki_ent_u64(&u, &e), BULKI_E_RANGE);
    assert_bulki_rc(bulki_ent_i64(&s, &e), BULKI_OK);
    assert_true(s == -1);
    assert_bulki_rc(bulki_map_get(&e, &m, "min"), BULKI_OK);
    assert_bulki_rc(bulki_ent_i64(&s, &e), BULKI_OK);
    assert_true(s == INT64_MIN);
    assert_bulki_rc(bulki_ent_u64(&u, &e), BULKI_E_RANGE);
    assert_bulki_rc(bulki_map_get(&e, &m, "i8"), BULKI_OK);
    assert_bulki_rc(bulki_ent_i64(&s, &e), BULKI_OK);
    assert_true(s == -128);
    assert_bulki_rc(bulki_ent_u64(&u, &e), BULKI_E_RANGE);
    /* i64 of a value above INT64_MAX */
    assert_bulki_rc(bulki_map_get(&e, &m, "big"), BULKI_OK);
    assert_bulki_rc(bulki_ent_i64(&s, &e), BULKI_E_RANGE);
    assert_bulki_rc(bulki_ent_u64(&u, &e), BULKI_OK);
    assert_true(u == 1ull << 63);
    assert_bulki_rc(bulki_map_get(&e, &m, "u64max"), BULKI_OK);
    assert_bulki_rc(bulki_ent_i64(&s, &e), BULKI_E_RANGE);
    assert_bulki_rc(bulki_ent_u64(&u, &e), BULKI_OK);
    assert_true(u == UINT64_MAX);
    /* INT64_MAX itself fits either way */
    assert_bulki_rc(bulki_map_get(&e, &m, "i64max"), BULKI_OK);
    assert_bulki_rc(bulki_ent_i64(&s, &e), BULKI_OK);
    assert_true(s == INT64_MAX);
    assert_bulki_rc(bulki_ent_u64(&u, &e), BULKI_OK);
    assert_true(u == (uint64_t)INT64_MAX);
    assert_bulki_rc(bulki_map_get(&e, &m, "u32"), BULKI_OK);
    assert_bulki_rc(bulki_ent_i64(&s, &e), BULKI_OK);
    assert_true(s == 4000000000LL);
    /* f64 of an integer, integers of a float */
    assert_bulki_rc(bulki_map_get(&e, &m, "u32"), BULKI_OK);
    assert_bulki_rc(bulki_ent_f64(&f, &e), BULKI_E_MISMATCH);
    assert_bulki_rc(bulki_map_get(&e, &m, "neg"), BULKI_OK);
    assert_bulki_rc(bulki_ent_f64(&f, &e), BULKI_E_MISMATCH);
    assert_bulki_rc(bulki_map_get(&e, &m, "dbl"), BULKI_OK);
    assert_bulki_rc(bulki_ent_f64(&f, &e), BULKI_OK);
    assert_true(f == 1.5);
    assert_bulki_rc(bulki_ent_i64(&s, &e), BULKI_E_MISMATCH);
    assert_bulki_rc(bulki_ent_u64(&u, &e), BULKI_E_MISMATCH);
    assert_bulki_rc(bulki_map_get(&e, &m, "flt"), BULKI_OK);
    assert_bulki_rc(bulki_ent_f64(&f, &e), BULKI_OK);
    assert_true(f == -0.25);
    assert_bulki_rc(bulki_ent_i64(&s, &e), BULKI_E_MISMATCH);
    /* boolean and char read as small integers */
    assert_bulki_rc(bulki_map_get(&e, &m, "bool"), BULKI_OK);
    assert_bulki_rc(bulki_ent_u64(&u, &e), BULKI_OK);
    assert_true(u == 1);
    assert_bulki_rc(bulki_map_get(&e, &m, "char"), BULKI_OK);
    assert_bulki_rc(bulki_ent_u64(&u, &e), BULKI_OK);
    assert_true(u == 'A');
    /* arrays: element getters only, and only within count */
    assert_bulki_rc(bulki_map_get(&e, &m, "arr"), BULKI_OK);
    assert_bulki_rc(bulki_ent_u64(&u, &e), BULKI_E_MISMATCH);
    assert_bulki_rc(bulki_ent_elem_u64(&u, &e, 2), BULKI_OK);
    assert_true(u == 65535);
    assert_bulki_rc(bulki_ent_elem_i64(&s, &e, 2), BULKI_OK);
    assert_true(s == 65535);
    assert_bulki_rc(bulki_ent_elem_u64(&u, &e, 3), BULKI_E_NOTFOUND);
    assert_bulki_rc(bulki_ent_elem_u64(&u, &e, UINT64_MAX), BULKI_E_NOTFOUND);
    /* strings: only the string getter */
    assert_bulki_rc(bulki_map_get(&e, &m, "str"), BULKI_OK);
    assert_bulki_rc(bulki_ent_str(&str, &slen, &e), BULKI_OK);
    assert_int_equal(slen, 4);
    assert_string_equal(str, "text");
    assert_bulki_rc(bulki_ent_str(&str, NULL, &e), BULKI_OK);
    assert_bulki_rc(bulki_ent_i64(&s, &e), BULKI_E_MISMATCH);
    assert_bulki_rc(bulki_ent_u64(&u, &e), BULKI_E_MISMATCH);
    assert_bulki_rc(bulki_ent_f64(&f, &e), BULKI_E_MISMATCH);
    assert_bulki_rc(bulki_map_get(&e, &m, "dbl"), BULKI_OK);
    assert_bulki_rc(bulki_ent_str(&str, &slen, &e), BULKI_E_MISMATCH);
    /* lookups */
    assert_bulki_rc(bulki_map_get(&e, &m, "nope"), BULKI_E_NOTFOUND);
    assert_bulki_rc(bulki_map_get(&e, &m, ""), BULKI_E_NOTFOUND);
    assert_bulki_rc(bulki_map_get(&e, &m, "ne"), BULKI_E_NOTFOUND);
    assert_bulki_rc(bulki_map_get(&e, &m, "negx"), BULKI_E_NOTFOUND);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_trees_round_trip),
        cmocka_unit_test(typed_getters_check_type_and_range),
    };
    return cmocka_run_group_tests_name("bulki_roundtrip", tests, NULL, NULL);
}
