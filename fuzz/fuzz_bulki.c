/*
 * fuzz_bulki.c - libFuzzer target for the BULKI decoder (codec/bulki.h) and
 * the JSON form (tools/bulki_json.h).
 *
 * Every input is decoded twice: as one top-level BULKI (bulki_decode_doc)
 * and as one top-level entity (bulki_decode_value). A failure must be a
 * decode error with an offset inside the buffer. A success is then
 *
 *  1. walked completely through the public walkers: every pair
 *     (bulki_map_next), every key lookup (bulki_map_get), every nested
 *     BULKI by index (bulki_ent_doc), every PDC_BULKI_ENT element by index
 *     (bulki_ent_at), every typed getter on every element, including the
 *     out-of-range index and the wrong-type getters. Each view is checked
 *     against the bytes: its header fields re-read with an independent
 *     varint reader, its bounds, its notional sizes, and that siblings are
 *     contiguous. The walk also notes whether any varint is in non-minimal
 *     (overlong) form, which BULKI allows on input and never writes;
 *
 *     bulki_decode_index agrees with bulki_decode_doc at several index
 *     capacities (same error and offset, same map, fields = the pairs in
 *     order) and with the general parser alone (bulki_decode_index_general,
 *     which skips the one-pass try at the commonest shape), the inline
 *     getters with
 *     their functions on every indexed value, and bulki_index_get finds
 *     every string key;
 *
 *  2. converted to JSON (bulki_json_from_doc/value) and encoded back
 *     (bulki_json_encode), both from the json-c tree and through the JSON
 *     text the bulki CLI prints. Without overlong varints the bytes must
 *     come back exactly; with them the re-encoding must be shorter, decode,
 *     give the same JSON and be a fixed point (encoding it again gives the
 *     same bytes).
 *
 * Anything else is a bug: FZ_CHECK traps.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bulki_fast.h" /* the inline paths it compares */
#include "bulki_int.h" /* bulki_decode_index_general */
#include "bulki_json.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Notional sizes (docs/BULKI.md): an entity header counts 18 bytes, a BULKI
 * header 48, a PDC_BULKI item adds an 8-byte pointer. */
#define NOTIONAL_ENT_HDR 18u
#define NOTIONAL_DOC_HDR 48u
#define NOTIONAL_PTR 8u

/* Lookups checked per BULKI (bulki_map_get is linear, so n lookups are
 * quadratic). */
#define MAX_GET_CHECKS 64

struct walk {
    const uint8_t *buf;
    size_t len;
    int overlong; /* a varint in non-minimal form was seen */
};

/* Independent LEB128 reader over bytes the decoder already accepted: the
 * varint must be there. Notes a non-minimal form (a last byte of 0 after
 * continuation bytes). Returns the value, advances *pos. */
static uint64_t rd_varint(struct walk *w, size_t *pos)
{
    uint64_t v = 0;
    for (unsigned i = 0;; i++) {
        FZ_CHECK(i < 10);
        FZ_CHECK(*pos < w->len);
        uint8_t b = w->buf[(*pos)++];
        FZ_CHECK(i < 9 || (b & 0xfe) == 0);
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            if (i > 0 && b == 0)
                w->overlong = 1;
            return v;
        }
    }
}

static size_t off_of(const struct walk *w, const uint8_t *p)
{
    FZ_CHECK(p >= w->buf && p <= w->buf + w->len);
    return (size_t)(p - w->buf);
}

static void walk_map(struct walk *w, const bulki_map *m);

/* The getters on element i of any entity must agree with the bytes and
 * with the entity's kind. */
static void check_elem(const bulki_ent *e, const struct bulki_type_info *ti, uint64_t i)
{
    int64_t s = 0;
    uint64_t u = 0;
    double d = 0;
    int rs = bulki_ent_elem_i64(&s, e, i);
    int ru = bulki_ent_elem_u64(&u, e, i);
    int rf = bulki_ent_elem_f64(&d, e, i);

    if (ti->width == 0) {
        FZ_CHECK(rs == BULKI_E_MISMATCH && ru == BULKI_E_MISMATCH && rf == BULKI_E_MISMATCH);
        return;
    }
    if (i >= e->count) {
        FZ_CHECK(rs == BULKI_E_NOTFOUND && ru == BULKI_E_NOTFOUND && rf == BULKI_E_NOTFOUND);
        return;
    }
    uint64_t raw = 0;
    for (unsigned b = 0; b < ti->width; b++)
        raw |= (uint64_t)e->payload[i * ti->width + b] << (8 * b);
    switch (ti->kind) {
    case BULKI_KIND_SIGNED: {
        unsigned bits = ti->width * 8u;
        uint64_t sx = raw;
        if (bits < 64 && (raw >> (bits - 1)) & 1)
            sx |= ~(uint64_t)0 << bits;
        int64_t want;
        memcpy(&want, &sx, sizeof want);
        FZ_CHECK(rs == 0 && s == want);
        if (want < 0)
            FZ_CHECK(ru == BULKI_E_RANGE);
        else
            FZ_CHECK(ru == 0 && u == (uint64_t)want);
        FZ_CHECK(rf == BULKI_E_MISMATCH);
        break;
    }
    case BULKI_KIND_UNSIGNED:
    case BULKI_KIND_BOOL:
        FZ_CHECK(ru == 0 && u == raw);
        if (raw > (uint64_t)INT64_MAX)
            FZ_CHECK(rs == BULKI_E_RANGE);
        else
            FZ_CHECK(rs == 0 && (uint64_t)s == raw);
        if (ti->kind == BULKI_KIND_BOOL)
            FZ_CHECK(raw <= 1);
        FZ_CHECK(rf == BULKI_E_MISMATCH);
        break;
    case BULKI_KIND_FLOAT:
        FZ_CHECK(rs == BULKI_E_MISMATCH && ru == BULKI_E_MISMATCH && rf == 0);
        if (ti->width == 8) {
            uint64_t got;
            memcpy(&got, &d, sizeof got);
            FZ_CHECK(got == raw);
        } else {
            float f;
            uint32_t r32 = (uint32_t)raw;
            memcpy(&f, &r32, sizeof f);
            /* float -> double is exact except that it quiets a NaN */
            if (isnan(f))
                FZ_CHECK(isnan(d));
            else
                FZ_CHECK(d == (double)f && !signbit(d) == !signbit(f));
        }
        break;
    default:
        FZ_CHECK(!"numeric type of unknown kind");
    }
}

static void walk_ent(struct walk *w, const bulki_ent *e, unsigned depth)
{
    const struct bulki_type_info *ti = bulki_type_info(e->type);
    FZ_CHECK(ti != NULL && ti->code == e->type);
    FZ_CHECK(e->base == w->buf && e->base_len == w->len);
    FZ_CHECK(e->offset < e->end && e->end <= w->len);
    FZ_CHECK(e->depth == depth && depth <= BULKI_MAX_DEPTH);
    FZ_CHECK(e->cls == BULKI_ITEM || e->cls == BULKI_ARRAY);
    FZ_CHECK(e->cls == BULKI_ARRAY || e->count == 1);

    /* header: size varint, type/class byte, count varint, then payload */
    size_t pos = e->offset;
    FZ_CHECK(rd_varint(w, &pos) == e->size);
    FZ_CHECK(pos < w->len);
    uint8_t tc = w->buf[pos++];
    FZ_CHECK((tc & 0xC0) == 0 && (tc & 0x1F) == e->type && ((tc >> 5) & 1) == e->cls);
    FZ_CHECK(rd_varint(w, &pos) == e->count);
    size_t poff = off_of(w, e->payload);
    FZ_CHECK(poff == pos);
    FZ_CHECK(e->payload_len <= e->end - poff);

    /* getters that must refuse every other kind */
    const char *str = NULL;
    size_t slen = 0;
    int64_t s;
    uint64_t u;
    double d;
    bulki_map m;
    bulki_ent child;
    int rstr = bulki_ent_str(&str, &slen, e);
    int rs = bulki_ent_i64(&s, e), ru = bulki_ent_u64(&u, e), rf = bulki_ent_f64(&d, e);
    if (e->type != BULKI_T_BULKI)
        FZ_CHECK(bulki_ent_doc(&m, e, 0) == BULKI_E_MISMATCH);
    if (e->type != BULKI_T_BULKI_ENT)
        FZ_CHECK(bulki_ent_at(&child, e, 0) == BULKI_E_MISMATCH);
    if (e->type != BULKI_T_STRING)
        FZ_CHECK(rstr == BULKI_E_MISMATCH);

    if (ti->kind == BULKI_KIND_STRING) {
        FZ_CHECK(e->cls == BULKI_ITEM);
        FZ_CHECK(rstr == 0 && str == (const char *)e->payload && slen == e->payload_len);
        FZ_CHECK(e->end == poff + e->payload_len + 1);
        FZ_CHECK(e->payload[e->payload_len] == 0);
        FZ_CHECK(memchr(e->payload, 0, e->payload_len) == NULL);
        FZ_CHECK(e->size == NOTIONAL_ENT_HDR + (uint64_t)e->payload_len + 1);
        FZ_CHECK(rs == BULKI_E_MISMATCH && ru == BULKI_E_MISMATCH && rf == BULKI_E_MISMATCH);
        check_elem(e, ti, 0);
        return;
    }

    if (ti->kind != BULKI_KIND_NESTED) {
        FZ_CHECK(e->payload_len == e->count * ti->width);
        FZ_CHECK(e->end == poff + e->payload_len);
        FZ_CHECK(e->size == NOTIONAL_ENT_HDR + (uint64_t)e->payload_len);
        for (uint64_t i = 0; i <= e->count; i++)
            check_elem(e, ti, i);
        if (e->cls == BULKI_ITEM) {
            int64_t s0;
            uint64_t u0;
            double d0;
            FZ_CHECK(rs == bulki_ent_elem_i64(&s0, e, 0) && (rs != 0 || s == s0));
            FZ_CHECK(ru == bulki_ent_elem_u64(&u0, e, 0) && (ru != 0 || u == u0));
            FZ_CHECK(rf == bulki_ent_elem_f64(&d0, e, 0) &&
                     (rf != 0 || memcmp(&d, &d0, sizeof d) == 0));
        } else {
            FZ_CHECK(rs == BULKI_E_MISMATCH && ru == BULKI_E_MISMATCH && rf == BULKI_E_MISMATCH);
        }
        return;
    }

    /* nested: every child by index, contiguous, sizes add up */
    FZ_CHECK(rs == BULKI_E_MISMATCH && ru == BULKI_E_MISMATCH && rf == BULKI_E_MISMATCH);
    check_elem(e, ti, 0);
    FZ_CHECK(depth < BULKI_MAX_DEPTH);
    uint64_t sum = NOTIONAL_ENT_HDR;
    size_t next = poff;
    if (e->type == BULKI_T_BULKI) {
        for (uint64_t i = 0; i < e->count; i++) {
            FZ_CHECK(bulki_ent_doc(&m, e, i) == 0);
            FZ_CHECK(m.offset == next && m.depth == depth + 1);
            walk_map(w, &m);
            FZ_CHECK(m.total <= UINT64_MAX - sum);
            sum += m.total;
            next = m.end;
        }
        FZ_CHECK(bulki_ent_doc(&m, e, e->count) == BULKI_E_NOTFOUND);
        if (e->cls == BULKI_ITEM)
            sum += NOTIONAL_PTR;
    } else {
        FZ_CHECK(e->cls == BULKI_ARRAY);
        for (uint64_t i = 0; i < e->count; i++) {
            FZ_CHECK(bulki_ent_at(&child, e, i) == 0);
            FZ_CHECK(child.offset == next);
            walk_ent(w, &child, depth + 1);
            FZ_CHECK(child.size <= UINT64_MAX - sum);
            sum += child.size;
            next = child.end;
        }
        FZ_CHECK(bulki_ent_at(&child, e, e->count) == BULKI_E_NOTFOUND);
    }
    FZ_CHECK(next == e->end && e->payload_len == e->end - poff);
    FZ_CHECK(sum == e->size);
}

static int same_key(const bulki_ent *a, const bulki_ent *b)
{
    return a->type == BULKI_T_STRING && b->type == BULKI_T_STRING &&
           a->payload_len == b->payload_len &&
           memcmp(a->payload, b->payload, a->payload_len) == 0;
}

static void walk_map(struct walk *w, const bulki_map *m)
{
    bulki_map_iter it;
    bulki_ent k, v;
    int rc;
    unsigned depth = m->depth;

    FZ_CHECK(m->base == w->buf && m->base_len == w->len);
    FZ_CHECK(m->offset < m->keys_off && m->keys_off <= m->values_off &&
             m->values_off < m->end && m->end <= w->len);
    FZ_CHECK(depth >= 1 && depth <= BULKI_MAX_DEPTH);

    /* header: total, nkeys, header size, data size */
    size_t pos = m->offset;
    uint64_t total = rd_varint(w, &pos);
    uint64_t nkeys = rd_varint(w, &pos);
    uint64_t hsize = rd_varint(w, &pos);
    uint64_t dsize = rd_varint(w, &pos);
    FZ_CHECK(total == m->total && nkeys == m->npairs && pos == m->keys_off);

    uint64_t hsum = 0, dsum = 0, n = 0;
    size_t kpos = m->keys_off, vpos = m->values_off;
    bulki_map_iter_init(&it, m);
    while ((rc = bulki_map_next(&k, &v, &it)) == 1) {
        FZ_CHECK(k.offset == kpos && v.offset == vpos);
        walk_ent(w, &k, depth);
        walk_ent(w, &v, depth);
        FZ_CHECK(k.size <= UINT64_MAX - hsum && v.size <= UINT64_MAX - dsum);
        hsum += k.size;
        dsum += v.size;
        kpos = k.end;
        vpos = v.end;
        n++;

        if (n <= MAX_GET_CHECKS && k.type == BULKI_T_STRING) {
            /* the lookup finds the first pair with this key */
            bulki_map_iter it2;
            bulki_ent k2, v2, got;
            bulki_map_iter_init(&it2, m);
            while (bulki_map_next(&k2, &v2, &it2) == 1 && !same_key(&k2, &k))
                ;
            FZ_CHECK(same_key(&k2, &k));
            /* the key is NUL-terminated in the buffer (checked in walk_ent) */
            FZ_CHECK(bulki_map_get(&got, m, (const char *)k.payload) == 0);
            FZ_CHECK(got.offset == v2.offset && got.end == v2.end && got.type == v2.type);
        }
    }
    FZ_CHECK(rc == 0 && n == m->npairs);
    FZ_CHECK(bulki_map_next(&k, &v, &it) == 0); /* stays at the end */
    FZ_CHECK(hsum == hsize && dsum == dsize);
    FZ_CHECK(total == NOTIONAL_DOC_HDR + hsum + dsum);

    /* the two offset fields after the keys and after the values */
    pos = kpos;
    FZ_CHECK(rd_varint(w, &pos) == kpos && pos == m->values_off);
    pos = vpos;
    FZ_CHECK(rd_varint(w, &pos) == vpos && pos == m->end);
}

static int decode(int is_doc, const uint8_t *buf, size_t len, bulki_map *m, bulki_ent *e,
                  size_t *err_off)
{
    return is_doc ? bulki_decode_doc(m, buf, len, err_off)
                  : bulki_decode_value(e, buf, len, err_off);
}

/* Decoded view -> JSON (walks the view again, in the JSON module). */
static json_object *to_json(int is_doc, const bulki_map *m, const bulki_ent *e)
{
    json_object *j = NULL;
    int rc = is_doc ? bulki_json_from_doc(&j, m) : bulki_json_from_value(&j, e);
    FZ_CHECK(rc == 0 && j != NULL);
    return j;
}

static uint8_t *from_json(json_object *j, size_t *len)
{
    uint8_t *out = NULL;
    char err[512] = "";
    int rc = bulki_json_encode(&out, len, j, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "bulki_json_encode: %s\n", err);
    FZ_CHECK(rc == 0 && out != NULL);
    return out;
}

/* The JSON text as the bulki CLI prints it, parsed back with a tokener
 * deep enough for any BULKI the decoder accepts (up to 5 JSON levels per
 * BULKI level: doc, pairs, pair, entity, array of docs). */
static json_object *via_text(json_object *j)
{
    const char *text = json_object_to_json_string_ext(
        j, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
    FZ_CHECK(text != NULL);
    json_tokener *tok = json_tokener_new_ex(6 * BULKI_MAX_DEPTH + 16);
    FZ_CHECK(tok != NULL);
    json_object *r = json_tokener_parse_ex(tok, text, (int)strlen(text));
    if (r == NULL)
        fprintf(stderr, "JSON text does not parse back: %s\n",
                json_tokener_error_desc(json_tokener_get_error(tok)));
    FZ_CHECK(r != NULL);
    json_tokener_free(tok);
    return r;
}

/* Same views? (every field but the ones that only matter to the walkers) */
static int same_view(const bulki_ent *a, const bulki_ent *b)
{
    return a->base == b->base && a->offset == b->offset && a->end == b->end &&
           a->payload == b->payload && a->payload_len == b->payload_len &&
           a->count == b->count && a->size == b->size && a->type == b->type &&
           a->cls == b->cls && a->depth == b->depth;
}

/* bulki_decode_index agrees with bulki_decode_doc (rc, err_off, the map)
 * at every capacity, its fields are the pairs in order, and a lookup of
 * every string key finds a pair with that key, also beyond the capacity. */
static void check_index(const uint8_t *data, size_t size, int rc, size_t err_off,
                        const bulki_map *m)
{
    enum { NF = 8 };
    static const size_t caps[] = {0, 1, 3, NF};
    bulki_field fields[NF];
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        bulki_index ix;
        size_t off = SIZE_MAX;
        int irc = bulki_decode_index(&ix, caps[c] ? fields : NULL, caps[c], data, size, &off);
        FZ_CHECK(irc == rc);
        /* the one-pass try at the commonest shape answers as the general
         * parser alone */
        bulki_index gx;
        bulki_field gfields[NF];
        size_t goff = SIZE_MAX;
        int xrc = bulki_decode_index_general(&gx, caps[c] ? gfields : NULL, caps[c], data, size,
                                             &goff);
        FZ_CHECK(xrc == irc);
        if (rc != 0) {
            FZ_CHECK(off == err_off && goff == off);
            continue;
        }
        FZ_CHECK(gx.map.offset == ix.map.offset && gx.map.end == ix.map.end &&
                 gx.map.keys_off == ix.map.keys_off && gx.map.values_off == ix.map.values_off &&
                 gx.map.npairs == ix.map.npairs && gx.map.total == ix.map.total &&
                 gx.map.depth == ix.map.depth && gx.n == ix.n);
        for (size_t j = 0; j < ix.n; j++) {
            FZ_CHECK(gfields[j].key == fields[j].key && gfields[j].key_len == fields[j].key_len);
            FZ_CHECK(gfields[j].value_off == fields[j].value_off &&
                     gfields[j].value_end == fields[j].value_end);
            /* the view, inline and not; the inline getters give what their
             * functions give, on the view and straight from the pair */
            const bulki_field *ff = &fields[j];
            bulki_ent view, iview;
            FZ_CHECK(bulki_field_value(&view, &ix, ff) == 0);
            FZ_CHECK(bulki_field_value_inline(&iview, &ix, ff) == 0 && same_view(&view, &iview));
            const bulki_ent *fv = &view;
            uint64_t u1 = 1, u2 = 1, u3 = 1;
            int64_t s1 = 1, s2 = 1, s3 = 1;
            const char *c1 = NULL, *c2 = NULL;
            size_t n1 = 1, n2 = 1;
            int r;
            FZ_CHECK(bulki_ent_u64_inline(&u1, fv) == (r = bulki_ent_u64(&u2, fv)) && u1 == u2);
            FZ_CHECK(bulki_field_u64_inline(&u3, &ix, ff) == r && u3 == u2);
            FZ_CHECK(bulki_ent_i64_inline(&s1, fv) == (r = bulki_ent_i64(&s2, fv)) && s1 == s2);
            FZ_CHECK(bulki_field_i64_inline(&s3, &ix, ff) == r && s3 == s2);
            FZ_CHECK(bulki_ent_str_inline(&c1, &n1, fv) == (r = bulki_ent_str(&c2, &n2, fv)) &&
                     c1 == c2 && n1 == n2);
            c1 = NULL;
            n1 = 1;
            FZ_CHECK(bulki_field_str_inline(&c1, &n1, &ix, ff) == r && c1 == c2 && n1 == n2);
            for (uint64_t el = 0; el < 4; el++) {
                u1 = u2 = u3 = 1;
                FZ_CHECK(bulki_ent_elem_u64_inline(&u1, fv, el) ==
                             (r = bulki_ent_elem_u64(&u2, fv, el)) &&
                         u1 == u2);
                FZ_CHECK(bulki_field_elem_u64_inline(&u3, &ix, ff, el) == r && u3 == u2);
            }
            /* the first n elements at once, as one by one */
            for (size_t na = 0; na <= 4; na++) {
                uint64_t a1[4] = {1, 1, 1, 1}, a2[4] = {1, 1, 1, 1}, a3[4] = {1, 1, 1, 1};
                int ra = bulki_field_u64_array_inline(a1, na, &ix, ff), re = 0;
                FZ_CHECK(bulki_field_u64_array(a2, na, &ix, ff) == ra);
                for (size_t el = 0; el < na && re == 0; el++)
                    re = bulki_field_elem_u64(&a3[el], &ix, ff, el);
                FZ_CHECK(ra == re && memcmp(a1, a3, sizeof a1) == 0 &&
                         memcmp(a2, a3, sizeof a2) == 0);
            }
        }
        FZ_CHECK(ix.map.offset == m->offset && ix.map.end == m->end &&
                 ix.map.keys_off == m->keys_off && ix.map.values_off == m->values_off &&
                 ix.map.npairs == m->npairs && ix.map.total == m->total);
        FZ_CHECK(ix.n == (m->npairs < caps[c] ? m->npairs : caps[c]));
        bulki_map_iter it;
        bulki_ent k, v, got;
        uint64_t i = 0;
        bulki_map_iter_init(&it, m);
        while (bulki_map_next(&k, &v, &it) == 1 && i < MAX_GET_CHECKS) {
            if (i < ix.n) {
                bulki_ent fv;
                FZ_CHECK(bulki_field_value(&fv, &ix, &ix.fields[i]) == 0 && same_view(&fv, &v));
                if (k.type == BULKI_T_STRING)
                    FZ_CHECK(ix.fields[i].key == (const char *)k.payload &&
                             ix.fields[i].key_len == k.payload_len);
                else
                    FZ_CHECK(ix.fields[i].key == NULL);
            }
            if (k.type == BULKI_T_STRING) {
                FZ_CHECK(bulki_index_getn(&got, &ix, (const char *)k.payload, k.payload_len) == 0);
                /* some pair with this key: the one found, or a duplicate */
                bulki_map_iter it2;
                bulki_ent k2, v2;
                int found = 0;
                bulki_map_iter_init(&it2, m);
                while (!found && bulki_map_next(&k2, &v2, &it2) == 1)
                    found = same_key(&k2, &k) && same_view(&v2, &got);
                FZ_CHECK(found);
            }
            i++;
        }
        int grc = bulki_index_get(&got, &ix, "\x01no such key\x02");
        FZ_CHECK(grc == BULKI_E_NOTFOUND || grc == 0);
    }
}

static void one_form(int is_doc, const uint8_t *data, size_t size)
{
    bulki_map m;
    bulki_ent e;
    size_t err_off = SIZE_MAX;
    int rc = decode(is_doc, data, size, &m, &e, &err_off);
    /* the same answer without an offset pointer */
    bulki_map m2;
    bulki_ent e2;
    FZ_CHECK(decode(is_doc, data, size, &m2, &e2, NULL) == rc);
    if (is_doc)
        check_index(data, size, rc, err_off, &m);
    if (rc != 0) {
        FZ_CHECK(rc <= BULKI_E_TRUNCATED && rc >= BULKI_E_BOOL); /* a decode error */
        FZ_CHECK(err_off <= size);
        return;
    }

    struct walk w = {data, size, 0};
    if (is_doc) {
        FZ_CHECK(m.offset == 0 && m.end == size && m.depth == 1);
        walk_map(&w, &m);
    } else {
        FZ_CHECK(e.offset == 0 && e.end == size);
        walk_ent(&w, &e, 0);
    }

    json_object *j = to_json(is_doc, &m, &e);
    size_t olen = 0;
    uint8_t *out = from_json(j, &olen);
    if (!w.overlong) {
        /* canonical input: the exact bytes come back */
        FZ_CHECK(olen == size && memcmp(out, data, size) == 0);
    } else {
        /* overlong varints re-encode shorter; the content is the same and
         * the shorter form is a fixed point */
        FZ_CHECK(olen < size);
        bulki_map rm;
        bulki_ent re;
        FZ_CHECK(decode(is_doc, out, olen, &rm, &re, NULL) == 0);
        json_object *rj = to_json(is_doc, &rm, &re);
        FZ_CHECK(bulki_json_equal(j, rj));
        size_t olen2 = 0;
        uint8_t *out2 = from_json(rj, &olen2);
        FZ_CHECK(olen2 == olen && memcmp(out2, out, olen) == 0);
        free(out2);
        json_object_put(rj);
    }

    /* the same bytes through the JSON text (no tree comparison: a float
     * prints in its shortest float form, which reads back as a different
     * double that rounds to the same float) */
    json_object *tj = via_text(j);
    size_t tlen = 0;
    uint8_t *tout = from_json(tj, &tlen);
    FZ_CHECK(tlen == olen && memcmp(tout, out, olen) == 0);
    free(tout);
    json_object_put(tj);

    free(out);
    json_object_put(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    one_form(1, data, size);
    one_form(0, data, size);
    return 0;
}
