/*
 * bulki_view.c - reading views that bulki_read.c's parsers validated: map
 * iteration (bulki_map_next, bulki_map_get), lookups in a record index
 * (bulki_index_get/getn/find, bulki_field_value) and the typed getters.
 * They re-read the headers of entities that were validated without
 * checking their contents again; they still bounds-check, so a view built
 * by hand or over bytes that changed cannot make them read out of bounds.
 */
#include "bulki.h"
#include "bulki_rctx.h"

#include <string.h>

/* ---- walking validated views ---- */

/*
 * Re-read an entity of a map that bulki_decode_* validated: the header is
 * bounds-checked as always, but the contents are not checked again (for a
 * string only that its NUL is in place). Nested entities, and anything
 * that does not look right, go through parse_value, which also reports
 * the error and its offset.
 */
static int walk_value(struct rctx *c, size_t pos, int depth, bulki_ent *out)
{
    size_t start = pos;
    uint64_t size, count;
    if (get_varint(c, &pos, &size) != 0 || pos >= c->len)
        return bulki_parse_value_(c, start, depth, out);
    uint8_t tc = c->base[pos++];
    const struct bulki_type_info *ti = bulki_ti(tc & 0x1F);
    if ((tc & 0xC0) || ti == NULL || ti->kind == BULKI_KIND_NESTED ||
        get_varint(c, &pos, &count) != 0 || size < BULKI_ENT_HDR)
        return bulki_parse_value_(c, start, depth, out);
    uint64_t plen = size - BULKI_ENT_HDR;
    uint8_t cls = (tc >> 5) & 1;
    if (plen > c->len - pos || (cls == BULKI_ITEM && count != 1) ||
        (ti->kind == BULKI_KIND_STRING && (plen == 0 || c->base[pos + plen - 1] != 0)))
        return bulki_parse_value_(c, start, depth, out);
    out->base = c->base;
    out->base_len = c->len;
    out->offset = start;
    out->end = pos + (size_t)plen;
    out->payload = c->base + pos;
    out->payload_len = (size_t)plen - (ti->kind == BULKI_KIND_STRING);
    out->count = count;
    out->size = size;
    out->type = ti->code;
    out->cls = cls;
    out->depth = (uint8_t)depth;
    return 0;
}

void bulki_map_iter_init(bulki_map_iter *it, const bulki_map *m)
{
    it->map = m;
    it->kpos = m->keys_off;
    it->vpos = m->values_off;
    it->i = 0;
}

int bulki_map_next(bulki_ent *key, bulki_ent *value, bulki_map_iter *it)
{
    const bulki_map *m = it->map;
    struct rctx c = {m->base, m->base_len, 0};
    int rc;
    if (it->i >= m->npairs)
        return 0;
    if ((rc = walk_value(&c, it->kpos, m->depth, key)) != 0)
        return rc;
    if ((rc = walk_value(&c, it->vpos, m->depth, value)) != 0)
        return rc;
    it->kpos = key->end;
    it->vpos = value->end;
    it->i++;
    return 1;
}

int bulki_map_get(bulki_ent *value, const bulki_map *m, const char *key)
{
    bulki_map_iter it;
    bulki_ent k, v;
    size_t klen = strlen(key);
    int rc;
    bulki_map_iter_init(&it, m);
    while ((rc = bulki_map_next(&k, &v, &it)) == 1) {
        if (k.type == BULKI_T_STRING && k.payload_len == klen &&
            memcmp(k.payload, key, klen) == 0) {
            *value = v;
            return 0;
        }
    }
    return rc < 0 ? rc : BULKI_E_NOTFOUND;
}

static const bulki_field *index_search(bulki_index *ix, const char *key, size_t key_len);

/* The pair after the previous hit (fields asked for in record order), else
 * a search; a pair beyond the index is returned in ix->beyond. */
static inline const bulki_field *index_lookup(bulki_index *ix, const char *key, size_t key_len)
{
    size_t i = ix->next;
    const bulki_field *f = ix->fields;
    if (i < ix->n && f[i].key_len == key_len && f[i].key != NULL &&
        bulki_key_eq_(f[i].key, key, key_len)) {
        ix->next = i + 1;
        return &f[i];
    }
    return index_search(ix, key, key_len);
}

const bulki_field *bulki_index_find(bulki_index *ix, const char *key, size_t key_len)
{
    if (ix == NULL || (key == NULL && key_len > 0))
        return NULL;
    return index_lookup(ix, key, key_len);
}

int bulki_index_getn(bulki_ent *value, bulki_index *ix, const char *key, size_t key_len)
{
    if (value == NULL || ix == NULL || (key == NULL && key_len > 0))
        return BULKI_E_INVAL;
    const bulki_field *f = index_lookup(ix, key, key_len);
    if (f == NULL)
        return BULKI_E_NOTFOUND;
    return bulki_field_value(value, ix, f);
}

/* Any other order, and pairs beyond the index. */
__attribute__((noinline)) static const bulki_field *index_search(bulki_index *ix,
                                                                const char *key, size_t key_len)
{
    size_t n = ix->n, i = ix->next < n ? ix->next : 0;
    const bulki_field *f = ix->fields;
    /* from the previous hit to the end, then from the start to it */
    for (size_t left = n; left > 0; left--) {
        if (f[i].key_len == key_len && f[i].key != NULL && bulki_key_eq_(f[i].key, key, key_len)) {
            ix->next = i + 1;
            return &f[i];
        }
        if (++i == n)
            i = 0;
    }
    if (n == ix->map.npairs)
        return NULL;
    /* pairs beyond the index: walk them (skipping the indexed ones) */
    bulki_map_iter it;
    bulki_ent k, v;
    bulki_map_iter_init(&it, &ix->map);
    while (bulki_map_next(&k, &v, &it) == 1) {
        if (it.i > n && k.type == BULKI_T_STRING && k.payload_len == key_len &&
            memcmp(k.payload, key, key_len) == 0) {
            ix->beyond.key = (const char *)k.payload;
            ix->beyond.key_len = k.payload_len;
            ix->beyond.value_off = v.offset;
            ix->beyond.value_end = v.end;
            return &ix->beyond;
        }
    }
    return NULL;
}

int bulki_field_value(bulki_ent *value, const bulki_index *ix, const bulki_field *f)
{
    if (value == NULL || ix == NULL || f == NULL)
        return BULKI_E_INVAL;
    const uint8_t *b = ix->map.base;
    size_t pos = f->value_off, end = f->value_end;
    if (b == NULL || end > ix->map.base_len || pos >= end)
        return BULKI_E_INVAL;
    /* the header again, bounded by the value's end */
    struct rctx c = {b, end, 0};
    size_t start = pos;
    uint64_t size, count;
    if (get_varint(&c, &pos, &size) != 0 || pos >= end)
        return BULKI_E_INVAL;
    uint8_t tc = b[pos++];
    const struct bulki_type_info *ti = bulki_ti(tc & 0x1F);
    if ((tc & 0xC0) || ti == NULL || get_varint(&c, &pos, &count) != 0)
        return BULKI_E_INVAL;
    size_t plen = end - pos;
    if (ti->kind != BULKI_KIND_NESTED) {
        /* a base type's payload is its size less the notional header */
        if (size < BULKI_ENT_HDR || size - BULKI_ENT_HDR != plen ||
            (ti->kind == BULKI_KIND_STRING && plen == 0))
            return BULKI_E_INVAL;
        plen -= ti->kind == BULKI_KIND_STRING; /* the view leaves out the NUL */
    }
    value->base = b;
    value->base_len = ix->map.base_len;
    value->offset = start;
    value->end = end;
    value->payload = b + pos;
    value->payload_len = plen;
    value->count = count;
    value->size = size;
    value->type = ti->code;
    value->cls = (tc >> 5) & 1;
    value->depth = ix->map.depth;
    return 0;
}

int bulki_index_get(bulki_ent *value, bulki_index *ix, const char *key)
{
    if (key == NULL)
        return BULKI_E_INVAL;
    return bulki_index_getn(value, ix, key, strlen(key));
}

/* ---- typed getters ---- */

int bulki_field_i64(int64_t *out, const bulki_index *ix, const bulki_field *f)
{
    bulki_ent e;
    int rc = bulki_field_value(&e, ix, f);
    return rc != 0 ? rc : bulki_ent_i64(out, &e);
}

int bulki_field_u64(uint64_t *out, const bulki_index *ix, const bulki_field *f)
{
    bulki_ent e;
    int rc = bulki_field_value(&e, ix, f);
    return rc != 0 ? rc : bulki_ent_u64(out, &e);
}

int bulki_field_str(const char **s, size_t *len, const bulki_index *ix, const bulki_field *f)
{
    bulki_ent e;
    int rc = bulki_field_value(&e, ix, f);
    return rc != 0 ? rc : bulki_ent_str(s, len, &e);
}

int bulki_field_elem_u64(uint64_t *out, const bulki_index *ix, const bulki_field *f, uint64_t i)
{
    bulki_ent e;
    int rc = bulki_field_value(&e, ix, f);
    return rc != 0 ? rc : bulki_ent_elem_u64(out, &e, i);
}

int bulki_field_u64_array(uint64_t *out, size_t n, const bulki_index *ix, const bulki_field *f)
{
    bulki_ent e;
    int rc = bulki_field_value(&e, ix, f);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = bulki_ent_elem_u64(&out[i], &e, i);
    return rc;
}

/* Raw element i of a numeric entity: its kind and 64-bit pattern
 * (sign-extended for signed kinds). */
static inline int elem_raw(const bulki_ent *e, uint64_t i, uint8_t *kind, uint64_t *bits,
                           uint8_t *width)
{
    const struct bulki_type_info *ti = bulki_ti(e->type);
    if (ti == NULL || ti->width == 0)
        return BULKI_E_MISMATCH;
    /* widths are 1, 2, 4 or 8: a shift, not a division */
    if (i >= e->count || i >= e->payload_len >> __builtin_ctz(ti->width))
        return BULKI_E_NOTFOUND;
    uint64_t v = bulki_load_le(e->payload + i * ti->width, ti->width);
    if (ti->kind == BULKI_KIND_SIGNED && ti->width < 8) {
        uint64_t sign = (uint64_t)1 << (ti->width * 8 - 1);
        v = (v ^ sign) - sign;
    }
    *kind = ti->kind;
    *bits = v;
    *width = ti->width;
    return 0;
}

int bulki_ent_elem_i64(int64_t *out, const bulki_ent *e, uint64_t i)
{
    uint8_t kind, width;
    uint64_t v;
    int rc = elem_raw(e, i, &kind, &v, &width);
    if (rc != 0)
        return rc;
    if (kind == BULKI_KIND_FLOAT)
        return BULKI_E_MISMATCH;
    if (kind != BULKI_KIND_SIGNED && v > (uint64_t)INT64_MAX)
        return BULKI_E_RANGE;
    memcpy(out, &v, sizeof v);
    return 0;
}

int bulki_ent_elem_u64(uint64_t *out, const bulki_ent *e, uint64_t i)
{
    uint8_t kind, width;
    uint64_t v;
    /* the common case, straight from the bytes: a PDC_UINT64 element */
    if (bulki_ent_elem_u64_fast_(out, e, i))
        return 0;
    int rc = elem_raw(e, i, &kind, &v, &width);
    if (rc != 0)
        return rc;
    if (kind == BULKI_KIND_FLOAT)
        return BULKI_E_MISMATCH;
    if (kind == BULKI_KIND_SIGNED && (v >> 63) != 0)
        return BULKI_E_RANGE;
    *out = v;
    return 0;
}

int bulki_ent_elem_f64(double *out, const bulki_ent *e, uint64_t i)
{
    uint8_t kind, width;
    uint64_t v;
    int rc = elem_raw(e, i, &kind, &v, &width);
    if (rc != 0)
        return rc;
    if (kind != BULKI_KIND_FLOAT)
        return BULKI_E_MISMATCH;
    if (width == 4) {
        uint32_t b = (uint32_t)v;
        float f;
        memcpy(&f, &b, sizeof f);
        *out = f;
    } else {
        memcpy(out, &v, sizeof *out);
    }
    return 0;
}

int bulki_ent_i64(int64_t *out, const bulki_ent *e)
{
    /* the common cases, straight from the bytes */
    if (bulki_ent_i64_fast_(out, e))
        return 0;
    if (e->cls != BULKI_ITEM)
        return BULKI_E_MISMATCH;
    return bulki_ent_elem_i64(out, e, 0);
}

int bulki_ent_u64(uint64_t *out, const bulki_ent *e)
{
    if (bulki_ent_u64_fast_(out, e))
        return 0;
    if (e->cls != BULKI_ITEM)
        return BULKI_E_MISMATCH;
    return bulki_ent_elem_u64(out, e, 0);
}

int bulki_ent_f64(double *out, const bulki_ent *e)
{
    return e->cls == BULKI_ITEM ? bulki_ent_elem_f64(out, e, 0) : BULKI_E_MISMATCH;
}

int bulki_ent_str(const char **s, size_t *len, const bulki_ent *e)
{
    if (e->type != BULKI_T_STRING)
        return BULKI_E_MISMATCH;
    *s = (const char *)e->payload;
    if (len)
        *len = e->payload_len;
    return 0;
}
