/*
 * bulki_fast.h - more inline fast paths of the index API (bulki.h), for
 * code that times the codec: pdc-serde-bench's one-pass decode, the fuzzer
 * and test_bulki_index. Not installed and not among what docs/CODEC.md
 * tells users to call: each gives exactly the result of the bulki.h
 * function named without `_inline` (test_bulki_index compares each with
 * its function on every pair and view of every test vector and on
 * hand-made ones), without a call in the common case.
 */
#ifndef PDC_CKPT_BULKI_FAST_H
#define PDC_CKPT_BULKI_FAST_H

#include "bulki.h"

static inline const bulki_field *bulki_index_find_inline(bulki_index *ix, const char *key,
                                                         size_t key_len)
{
    if (ix != NULL && key != NULL && ix->next < ix->n) {
        const bulki_field *f = &ix->fields[ix->next];
        if (f->key_len == key_len && f->key != NULL && bulki_key_eq_(f->key, key, key_len)) {
            ix->next++;
            return f;
        }
    }
    return bulki_index_find(ix, key, key_len);
}

/* bulki_ent_str, whole. */
static inline int bulki_ent_str_inline(const char **s, size_t *len, const bulki_ent *e)
{
    if (e->type != BULKI_T_STRING)
        return BULKI_E_MISMATCH;
    *s = (const char *)e->payload;
    if (len)
        *len = e->payload_len;
    return 0;
}

/* The three header bytes of pair f's value (size | type byte << 8 |
 * count << 16) and its payload, if the value lies in ix's buffer and is
 * `bytes` long (4..112: a one-byte size); else 0 (the getters' functions
 * answer). The notional size of a base-type value is its payload's plus
 * 18 (PDC's in-memory header): a three-byte header whose size byte is
 * bytes + 15 says the payload runs exactly to f->value_end. A field may
 * be hand-made: its start must not lie beyond its end (end - start would
 * wrap to `bytes`, its start before the buffer). */
static inline uint32_t bulki_field_hdr_(const uint8_t **payload, const bulki_index *ix,
                                        const bulki_field *f, size_t bytes)
{
    const uint8_t *b = ix->map.base;
    size_t off = f->value_off, end = f->value_end;
    uint32_t w;
    if (end - off != bytes || bytes - 4 > 112 - 4 || off >= end || end > ix->map.base_len ||
        b == NULL)
        return 0;
    if (BULKI_LE_) {
        memcpy(&w, b + off, 4);
        w &= 0xFFFFFFu;
    } else {
        w = (uint32_t)b[off] | (uint32_t)b[off + 1] << 8 | (uint32_t)b[off + 2] << 16;
    }
    *payload = b + off + 3;
    return w;
}

#define BULKI_HDR_(size, type, count) ((uint32_t)(size) | (uint32_t)(type) << 8 | (uint32_t)(count) << 16)

static inline int bulki_field_u64_inline(uint64_t *out, const bulki_index *ix,
                                         const bulki_field *f)
{
    const uint8_t *p;
    if (BULKI_LE_ && bulki_field_hdr_(&p, ix, f, 11) == BULKI_HDR_(26, BULKI_T_UINT64, 1)) {
        memcpy(out, p, 8);
        return 0;
    }
    return bulki_field_u64(out, ix, f);
}

static inline int bulki_field_i64_inline(int64_t *out, const bulki_index *ix,
                                         const bulki_field *f)
{
    const uint8_t *p;
    size_t n = f->value_end - f->value_off;
    uint32_t w = BULKI_LE_ ? bulki_field_hdr_(&p, ix, f, n) : 0;
    /* the size byte says the payload's length: it must end the pair */
    if (n == 7 && (w == BULKI_HDR_(22, BULKI_T_INT32, 1) || w == BULKI_HDR_(22, BULKI_T_INT, 1))) {
        int32_t v;
        memcpy(&v, p, 4);
        *out = v;
        return 0;
    }
    if (n == 11 && w == BULKI_HDR_(26, BULKI_T_INT64, 1)) {
        memcpy(out, p, 8);
        return 0;
    }
    return bulki_field_i64(out, ix, f);
}

static inline int bulki_field_str_inline(const char **s, size_t *len, const bulki_index *ix,
                                         const bulki_field *f)
{
    const uint8_t *p;
    size_t n = f->value_end - f->value_off;
    /* a string item with its NUL: payload_len = n - 3 - 1 */
    if (bulki_field_hdr_(&p, ix, f, n) == BULKI_HDR_(n + 15, BULKI_T_STRING, 1)) {
        *s = (const char *)p;
        if (len)
            *len = n - 4;
        return 0;
    }
    return bulki_field_str(s, len, ix, f);
}

static inline int bulki_field_elem_u64_inline(uint64_t *out, const bulki_index *ix,
                                              const bulki_field *f, uint64_t i)
{
    const uint8_t *p;
    size_t n = f->value_end - f->value_off;
    uint32_t w = BULKI_LE_ ? bulki_field_hdr_(&p, ix, f, n) : 0;
    /* a PDC_UINT64 array or item with a one-byte count: element i of
     * count, within the payload */
    if ((w & 0x80DFFFu) == BULKI_HDR_(n + 15, BULKI_T_UINT64, 0) && i < (w >> 16) &&
        i < (n - 3) / 8) {
        memcpy(out, p + i * 8, 8);
        return 0;
    }
    return bulki_field_elem_u64(out, ix, f, i);
}

static inline int bulki_field_u64_array_inline(uint64_t *out, size_t n, const bulki_index *ix,
                                               const bulki_field *f)
{
    const uint8_t *p;
    size_t b = f->value_end - f->value_off;
    uint32_t w = BULKI_LE_ ? bulki_field_hdr_(&p, ix, f, b) : 0;
    /* as bulki_field_elem_u64_inline, for elements 0..n-1 at once */
    if ((w & 0x80DFFFu) == BULKI_HDR_(b + 15, BULKI_T_UINT64, 0) && n <= (w >> 16) &&
        n <= (b - 3) / 8) {
        memcpy(out, p, n * 8);
        return 0;
    }
    return bulki_field_u64_array(out, n, ix, f);
}

#endif /* PDC_CKPT_BULKI_FAST_H */
