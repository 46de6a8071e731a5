/*
 * bulki_read.c - the BULKI decoder. bulki_decode_doc()/bulki_decode_value()
 * validate a whole buffer in one pass (every field is checked against the
 * bytes left before it is used, so hostile input yields an error and an
 * offset, never an out-of-bounds read), then hand out views into it.
 * bulki_decode_index() does the same pass and also records each top-level
 * pair, so lookups by key need no second walk. bulki_ent_doc/index/at
 * parse the BULKIs and entities nested in a view; the walkers and getters
 * over validated views are in bulki_view.c.
 */
#include "bulki.h"
#include "bulki_int.h"

#include <string.h>

#include "bulki_rctx.h"

__attribute__((noinline)) static int parse_value_slow(struct rctx *c, size_t pos, int depth,
                                                     bulki_ent *out);

/*
 * The fast path: the entities of a typical record are base types whose
 * size and count fit one varint byte. fast_ent() checks such an entity
 * exactly as parse_value_slow() would and returns 1 with what it found;
 * anything it would reject, or anything else, returns 0 and goes to
 * parse_value_slow(), which also says what is wrong and where.
 */
struct fast_ent {
    size_t end;         /* one past the entity */
    size_t payload_len; /* a string's without its NUL */
    uint8_t size;       /* notional size, < 128 */
    uint8_t count;      /* < 128 */
    uint8_t type;
    uint8_t cls;
};

__attribute__((always_inline)) static inline int fast_ent(const uint8_t *b, size_t len, size_t pos,
                                                         struct fast_ent *f)
{
    if (pos > len || len - pos < 3)
        return 0;
    uint8_t size = b[pos], tc = b[pos + 1], count = b[pos + 2];
    unsigned fl = tc < 64 ? bulki_fast_tc[tc] : 0;
    if (!(fl & BULKI_FAST_OK) || ((size | count) & 0x80) || size < BULKI_ENT_HDR)
        return 0;
    size_t p = pos + 3, plen = (size_t)size - BULKI_ENT_HDR;
    if (plen > len - p || (!(tc & 0x20) && count != 1))
        return 0;
    f->payload_len = plen;
    if (fl & BULKI_FAST_STR) { /* an item (string arrays are not fast) */
        if (plen == 0 || !bulki_cstr_ok(b + p, plen, len - p))
            return 0;
        f->payload_len = plen - 1;
    } else {
        if ((size_t)count * (fl & BULKI_FAST_WIDTH) != plen)
            return 0;
        if (fl & BULKI_FAST_BOOL)
            for (size_t i = 0; i < plen; i++)
                if (b[p + i] > 1)
                    return 0;
    }
    f->end = p + plen;
    f->size = size;
    f->count = count;
    f->type = tc & 0x1F;
    f->cls = tc >> 5; /* tc < 64 */
    return 1;
}

/* The view of a fast-path entity at pos. */
__attribute__((always_inline)) static inline void fast_view(bulki_ent *out, const uint8_t *b,
                                                           size_t len, size_t pos, int depth,
                                                           const struct fast_ent *f)
{
    out->base = b;
    out->base_len = len;
    out->offset = pos;
    out->end = f->end;
    out->payload = b + pos + 3;
    out->payload_len = f->payload_len;
    out->count = f->count;
    out->size = f->size;
    out->type = f->type;
    out->cls = f->cls;
    out->depth = (uint8_t)depth;
}

/* Parse the entity at `pos`; fill *out; its end is out->end. */
__attribute__((always_inline)) static inline int parse_value(struct rctx *c, size_t pos, int depth,
                                                            bulki_ent *out)
{
    /* locals, not c->: the byte-sized stores into *out may alias *c */
    const uint8_t *b = c->base;
    size_t len = c->len;
    struct fast_ent f;
    if (!fast_ent(b, len, pos, &f))
        return parse_value_slow(c, pos, depth, out);
    fast_view(out, b, len, pos, depth, &f);
    return 0;
}

static int parse_doc(struct rctx *c, size_t pos, int depth, bulki_map *out, bulki_field *fields,
                     size_t cap);

/* The general entity parser: every check, with the offending offset. */
__attribute__((noinline)) static int parse_value_slow(struct rctx *c, size_t pos, int depth, bulki_ent *out)
{
    uint64_t size, count;
    size_t start = pos;
    int rc;

    if ((rc = get_varint(c, &pos, &size)) != 0)
        return rc;
    if (pos >= c->len)
        return fail_at(c, pos, BULKI_E_TRUNCATED);
    size_t tc_off = pos;
    uint8_t tc = c->base[pos++];
    if (tc & 0xC0)
        return fail_at(c, tc_off, BULKI_E_CLASS);
    const struct bulki_type_info *ti = bulki_ti(tc & 0x1F);
    if (ti == NULL)
        return fail_at(c, tc_off, BULKI_E_TYPE);
    uint8_t cls = (tc >> 5) & 1;
    size_t count_off = pos;
    if ((rc = get_varint(c, &pos, &count)) != 0)
        return rc;
    if (cls == BULKI_ITEM && count != 1)
        return fail_at(c, count_off, BULKI_E_COUNT);

    size_t left = c->len - pos;
    out->base = c->base;
    out->base_len = c->len;
    out->offset = start;
    out->count = count;
    out->size = size;
    out->type = ti->code;
    out->cls = cls;
    out->depth = (uint8_t)depth;
    out->payload = c->base + pos;

    if (ti->kind != BULKI_KIND_NESTED) {
        if (size < BULKI_ENT_HDR)
            return fail_at(c, start, BULKI_E_SIZE);
        uint64_t plen = size - BULKI_ENT_HDR;
        if (ti->kind == BULKI_KIND_STRING) {
            if (cls == BULKI_ARRAY)
                return fail_at(c, tc_off, BULKI_E_STRING_ARRAY);
            if (plen == 0)
                return fail_at(c, start, BULKI_E_SIZE);
            if (plen > left)
                return fail_at(c, pos, BULKI_E_TRUNCATED);
            const uint8_t *s = c->base + pos;
            if (s[plen - 1] != 0 || bulki_has_nul(s, (size_t)plen - 1)) {
                const uint8_t *nul = memchr(s, 0, (size_t)plen);
                return fail_at(c, nul ? (size_t)(nul - c->base) : pos + (size_t)plen - 1,
                               BULKI_E_STRING);
            }
            out->payload_len = (size_t)plen - 1;
        } else {
            uint64_t bytes; /* count * width == plen, without a division */
            if (__builtin_mul_overflow(count, (uint64_t)ti->width, &bytes) || bytes != plen)
                return fail_at(c, count_off, BULKI_E_COUNT);
            if (plen > left)
                return fail_at(c, pos, BULKI_E_TRUNCATED);
            if (ti->kind == BULKI_KIND_BOOL)
                for (size_t i = 0; i < plen; i++)
                    if (c->base[pos + i] > 1)
                        return fail_at(c, pos + i, BULKI_E_BOOL);
            out->payload_len = (size_t)plen;
        }
        out->end = pos + (size_t)plen;
        return 0;
    }

    /* Nested: PDC_BULKI (item or array) or PDC_BULKI_ENT (array only). */
    if (depth + 1 > BULKI_MAX_DEPTH)
        return fail_at(c, start, BULKI_E_DEPTH);
    if (ti->code == BULKI_T_BULKI_ENT && cls == BULKI_ITEM)
        return fail_at(c, tc_off, BULKI_E_CLASS);
    /* Smallest encodings: a BULKI 6 bytes, an entity 3 bytes. */
    uint64_t min_each = ti->code == BULKI_T_BULKI ? 6 : 3;
    if (count > left / min_each)
        return fail_at(c, count_off, BULKI_E_COUNT);

    uint64_t sum = BULKI_ENT_HDR;
    size_t p = pos;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t s;
        if (ti->code == BULKI_T_BULKI) {
            bulki_map m;
            if ((rc = parse_doc(c, p, depth + 1, &m, NULL, 0)) != 0)
                return rc;
            s = m.total; /* checked against the content in parse_doc */
            p = m.end;
        } else {
            bulki_ent e;
            if ((rc = parse_value(c, p, depth + 1, &e)) != 0)
                return rc;
            s = e.size;
            p = e.end;
        }
        if (bulki_add(&sum, sum, s) != 0)
            return fail_at(c, start, BULKI_E_SIZE);
    }
    if (ti->code == BULKI_T_BULKI && cls == BULKI_ITEM &&
        bulki_add(&sum, sum, BULKI_PTR_SIZE) != 0)
        return fail_at(c, start, BULKI_E_SIZE);
    if (sum != size)
        return fail_at(c, start, BULKI_E_SIZE);
    out->payload_len = p - pos;
    out->end = p;
    return 0;
}

/*
 * The keys, then the values, of a map whose entities all take the fast
 * path, in tight loops of their own (few live variables, so no spills):
 * return the position after the n entities, or 0 (NULL) as soon as one
 * entity needs the general parser; parse_doc then runs its general loop
 * over all of them from the start (which also finds and reports any
 * error).
 *
 * Every entity these loops take has a three-byte header (size and count
 * below 128) and a payload of its notional size less 18, so it spans its
 * size less 15 bytes: the sum of the sizes of n such entities is the
 * bytes they span plus 15 n, and the loops need not add them up (n is at
 * most len / 6: no overflow).
 *
 * Both loops read an entity's three header bytes as one word. A key is
 * taken only as a string item of 1..109 bytes with its NUL (type byte
 * 0x10, count 1, size 19..127): one mask and compare for type, class and
 * count, one range check for the size. A value that is a fixed-width
 * base-type item is checked by comparing its three bytes with its type's
 * entry in bulki_item_hdr (size, type, class and count at once); other
 * values go through fast_ent(). Every check is one fast_ent() makes. The
 * common shapes come first, under one test of the room left (11 bytes
 * hold any fixed-width item, 19 any string of up to 16 bytes with the 16
 * bytes its check reads); the general checks after them bound every read
 * on their own. pos <= len on entry and after every entity.
 */
#define STR_ITEM_HDR (1u << 16 | (unsigned)BULKI_T_STRING << 8)
#define ROOM_STR16 (3u + 16u) /* a string item of up to 16 bytes and its check */
#define ROOM_STR32 (3u + 32u) /* the same for 32 bytes */
#define ROOM_ITEM (3u + 8u)   /* the widest fixed-width item */
#define LIKELY(x) __builtin_expect(!!(x), 1)

/* The sum of the sizes of n fast entities spanning `bytes`. */
static inline uint64_t fast_sizes(size_t bytes, uint64_t n)
{
    return (uint64_t)bytes + 15u * n;
}

/* The key at p, any string item of 1..109 bytes with its NUL, every read
 * bounded by end (as keys_loop's general check): the position after it
 * and its length with the NUL in *plen, or NULL. */
__attribute__((always_inline)) static inline const uint8_t *key_other(const uint8_t *p,
                                                                     const uint8_t *end,
                                                                     size_t *plen)
{
    size_t left = (size_t)(end - p);
    if (left < 4)
        return NULL;
    uint32_t w = bulki_load_le32(p);
    size_t size = w & 0xFFu, n = size - BULKI_ENT_HDR;
    if ((w & 0xFFFF00u) != STR_ITEM_HDR || size - 19u > 127u - 19u || n > left - 3 ||
        !bulki_cstr_ok(p + 3, n, left - 3))
        return NULL;
    *plen = n;
    return p + 3 + n;
}

/* n keys from p; `store`: index them into fields[0..n). Returns the end,
 * or NULL as soon as a key needs the general parser. */
__attribute__((always_inline)) static inline const uint8_t *
keys_loop(const uint8_t *p, const uint8_t *end, uint64_t n, bulki_field *fields, int store)
{
    for (uint64_t i = 0; i < n; i++) {
        size_t left = (size_t)(end - p), plen;
        uint32_t w;
        if (LIKELY(left >= ROOM_STR16)) { /* a key of 1..16 bytes with its NUL */
            w = bulki_load_le32(p);
            plen = (w & 0xFFu) - BULKI_ENT_HDR;
            if (LIKELY((w & 0xFFFF00u) == STR_ITEM_HDR && plen - 1 < 16 &&
                       bulki_cstr16_ok(p + 3, plen)))
                goto checked;
        }
        if (key_other(p, end, &plen) == NULL)
            return NULL;
    checked:
        if (store) {
            fields[i].key = (const char *)p + 3;
            fields[i].key_len = plen - 1;
        }
        p += 3 + plen;
    }
    return p;
}

/* The keys from pos, the first cap indexed; the end (0: the general
 * parser), and the sum of their sizes in *sum. Out of line: parse_doc's
 * general loop keeps its registers. */
__attribute__((noinline)) static size_t keys_fast(const uint8_t *b, size_t len,
                                                                size_t pos, uint64_t n,
                                                                bulki_field *fields, size_t cap,
                                                                uint64_t *sum)
{
    uint64_t m = n < cap ? n : cap;
    const uint8_t *p = keys_loop(b + pos, b + len, m, fields, 1);
    if (p != NULL && n > m)
        p = keys_loop(p, b + len, n - m, NULL, 0);
    if (p == NULL)
        return 0;
    size_t e = (size_t)(p - b);
    *sum = fast_sizes(e - pos, n);
    return e;
}

/* fast_ent() out of line, for the values the loop below does not take. */
__attribute__((noinline)) static int fast_ent_call(const uint8_t *b, size_t len, size_t pos,
                                                   struct fast_ent *f)
{
    return fast_ent(b, len, pos, f);
}

/* A value that is none of the shapes values_loop() tries first: the end
 * of a fast entity at pos, or 0 (the general parser). */
__attribute__((always_inline)) static inline size_t value_other(const uint8_t *b, size_t len,
                                                               size_t pos)
{
    size_t left = len - pos;
    uint32_t w = left >= 4 ? bulki_load_le32(b + pos) & 0xFFFFFFu : 0;
    size_t size = w & 0xFFu, plen = size - BULKI_ENT_HDR;
    if (w == bulki_item_hdr[(w >> 8) & 0x3Fu]) /* (no entry is 0: left < 4) */
        return plen <= left - 3 ? pos + 3 + plen : 0;
    if ((w & 0xFFFF00u) == STR_ITEM_HDR && size - 19u <= 127u - 19u && plen <= left - 3 &&
        bulki_cstr_ok(b + pos + 3, plen, left - 3))
        return pos + 3 + plen;
    if ((w & 0x80E080u) == 0x002000u && /* an array; size, count < 128 */
        (bulki_fast_tc[(w >> 8) & 0x3Fu] & (BULKI_FAST_OK | BULKI_FAST_BOOL)) == BULKI_FAST_OK &&
        size - BULKI_ENT_HDR <= 127u - BULKI_ENT_HDR &&
        (w >> 16) * (bulki_fast_tc[(w >> 8) & 0x3Fu] & BULKI_FAST_WIDTH) == plen &&
        plen <= left - 3)
        /* a fixed-width array that is not boolean: size (18..127) is
         * count times the width, and in the bytes */
        return pos + 3 + plen;
    struct fast_ent f;
    return fast_ent_call(b, len, pos, &f) ? f.end : 0;
}

/* n values from pos; `store`: where each is into fields[0..n). Returns
 * the end, or 0 as soon as a value needs the general parser. */
__attribute__((always_inline)) static inline size_t values_loop(const uint8_t *b, size_t len,
                                                               size_t pos, uint64_t n,
                                                               bulki_field *fields, int store)
{
    for (uint64_t i = 0; i < n; i++) {
        size_t left = len - pos, end;
        if (LIKELY(left >= ROOM_ITEM)) {
            uint32_t w = bulki_load_le32(b + pos) & 0xFFFFFFu;
            size_t plen = (w & 0xFFu) - BULKI_ENT_HDR;
            end = pos + 3 + plen;
            if (w == bulki_item_hdr[(w >> 8) & 0x3Fu]) /* plen <= 8 */
                goto checked;
            if ((w & 0xFFFF00u) == STR_ITEM_HDR && plen - 1 < 32 && left >= ROOM_STR32 &&
                bulki_cstr32_ok(b + pos + 3, plen))
                goto checked;
        }
        if ((end = value_other(b, len, pos)) == 0)
            return 0;
    checked:
        if (store) { /* where the value is; its view is built when asked for */
            fields[i].value_off = pos;
            fields[i].value_end = end;
        }
        pos = end;
    }
    return pos;
}

/* The values from pos, the first cap indexed; as keys_fast(). */
__attribute__((noinline)) static size_t values_fast(const uint8_t *b, size_t len,
                                                                  size_t pos, uint64_t n,
                                                                  bulki_field *fields,
                                                                  size_t cap, uint64_t *sum)
{
    uint64_t m = n < cap ? n : cap;
    size_t e = values_loop(b, len, pos, m, fields, 1);
    if (e != 0 && n > m)
        e = values_loop(b, len, e, n - m, NULL, 0);
    if (e != 0)
        *sum = fast_sizes(e - pos, n);
    return e;
}

/* The view of a BULKI that has been checked. */
static inline void map_view(bulki_map *out, const uint8_t *b, size_t len, size_t start,
                            size_t end, size_t keys_off, size_t values_off, uint64_t nkeys,
                            uint64_t total, int depth)
{
    out->base = b;
    out->base_len = len;
    out->offset = start;
    out->end = end;
    out->keys_off = keys_off;
    out->values_off = values_off;
    out->npairs = nkeys;
    out->total = total;
    out->depth = (uint8_t)depth;
}

/* key_other() and value_other() out of line, for index_common's rarer
 * shapes (fewer live values in its loops). */
__attribute__((noinline)) static const uint8_t *key_other_call(const uint8_t *p,
                                                              const uint8_t *end, size_t *plen)
{
    return key_other(p, end, plen);
}

__attribute__((noinline)) static size_t value_other_call(const uint8_t *b, size_t len, size_t pos)
{
    return value_other(b, len, pos);
}

/* index_common's short keys into *f.. (up to fe) from p: the position of
 * the first key it does not take (then *f is its field), or of the end.
 * klim (a constant NULL where the caller has checked the room for all):
 * the last position with room for a short key. */
__attribute__((always_inline)) static inline const uint8_t *
keys_short(const uint8_t *p, const uint8_t *klim, bulki_field **fp, bulki_field *fe)
{
    bulki_field *f = *fp;
    for (; f != fe; f++) {
        if (klim != NULL && p > klim)
            break;
        /* size 19..34 (a key of 1..16 bytes), type byte 0x10, count 1: the
         * size less 19 borrows from the type byte below 19 and leaves
         * the low byte below 16 exactly in range, so one subtraction,
         * mask and compare check the three bytes; the low byte is then
         * the key's length without its NUL */
        uint32_t u = bulki_load_le32(p) - 19u;
        size_t klen = u & 0xFFu;
        if ((u & 0xFFFFF0u) != STR_ITEM_HDR || !bulki_cstr16_ok(p + 3, klen + 1))
            break;
        f->key = (const char *)p + 3;
        f->key_len = klen;
        p += 4 + klen;
    }
    *fp = f;
    return p;
}

/* A varint of one or two bytes at b[*pos], where the caller has checked
 * that two bytes are there: 1 and its value, else 0 (longer: the general
 * parser). */
__attribute__((always_inline)) static inline int varint12_in(const uint8_t *b, size_t *pos,
                                                            uint64_t *v)
{
    size_t p = *pos;
    if (b[p] < 0x80) {
        *v = b[p];
        *pos = p + 1;
        return 1;
    }
    if (b[p + 1] < 0x80) {
        *v = (uint64_t)(b[p] & 0x7f) | (uint64_t)b[p + 1] << 7;
        *pos = p + 2;
        return 1;
    }
    return 0;
}

/* The offset varint at pos (pos <= len), which must say pos itself, in
 * its shortest form (one byte below 128, else two): its bytes compared
 * with pos's. The position after it, or 0 (then the general parser, which
 * also takes the longer forms). */
__attribute__((always_inline)) static inline size_t offset12(const uint8_t *b, size_t len,
                                                            size_t pos)
{
    if (pos < 0x80)
        return pos < len && b[pos] == pos ? pos + 1 : 0;
    if (pos < 0x4000 && len - pos >= 2 && b[pos] == ((pos & 0x7Fu) | 0x80u) &&
        b[pos + 1] == pos >> 7)
        return pos + 2;
    return 0;
}

/*
 * The commonest shape of a whole record, indexed in one tight pass
 * (bulki_decode_index tries it first): a top-level BULKI filling
 * b[0..len), len >= 27, with one- or two-byte header varints and offset
 * varints in their shortest form, at most cap pairs, every key a string
 * item of 1..16 bytes with its NUL and every value a fixed-width
 * base-type item, a string item of 1..32 bytes with its NUL, or a
 * fixed-width non-boolean array, sizes and counts below 128, each with
 * the room after it to check it without a bound of its own (19 bytes
 * from a key, 11 from an item, 35 from a string value; an array is
 * bounded by its size): 0 with *out filled and every pair indexed. Any
 * other input (*out partly written) goes on to decode_index_rest(), from
 * the start, as a tail call (so that bulki_decode_index keeps nothing
 * across a call): parse_doc(), whose key and value loops take the wider
 * fast shapes and whose general loop everything (and which finds and
 * reports any error). Every check here
 * is one parse_doc() makes; the key and value sums are the bytes spanned
 * plus 15 a pair (see fast_sizes). What it does not take costs one failed
 * try: it gives up at the first entity of another shape.
 */
static int decode_index_rest(bulki_index *out, bulki_field *fields, size_t cap, const void *buf,
                             size_t len, size_t *err_off);

__attribute__((noinline)) static int index_common(bulki_index *out, bulki_field *fields, size_t cap,
                                                  const uint8_t *b, size_t len, size_t *err_off)
{
    uint64_t total, nkeys, header, data;
    size_t pos = 0;
    /* the sums are checked as soon as they are known (header and data are
     * below 2^14: no overflow), and the view filled as its parts are, so
     * that few values stay live */
    /* the four header varints take at most 8 bytes: with 8 + ROOM_STR16
     * bytes, none needs a bound of its own */
    if (fields == NULL || len < 8 + ROOM_STR16 || !varint12_in(b, &pos, &total) ||
        !varint12_in(b, &pos, &nkeys) || !varint12_in(b, &pos, &header) ||
        !varint12_in(b, &pos, &data) || nkeys > cap || BULKI_DOC_HDR + header + data != total)
        goto other;
    /* (no check of nkeys against the bytes: every pair taken here spans
     * at least 7 bytes, so too many keys run out of bytes below) */
    bulki_map *m = &out->map;
    m->keys_off = pos;
    m->npairs = nkeys;
    m->total = total;
    bulki_field *f = fields, *fe = fields + nkeys;
    const uint8_t *p = b + pos, *end = b + len;
    /* no short key spans more than ROOM_STR16 bytes: with the room for
     * nkeys of them, no short key needs a bound of its own. Any other key
     * (longer, or too near the end for the short check) takes key_other()'s
     * bounded check, and the keys after it the bounded loop. */
    int bounded = ROOM_STR16 * nkeys > len - pos;
    for (;;) {
        if (bounded)
            p = keys_short(p, end - ROOM_STR16, &f, fe);
        else
            p = keys_short(p, NULL, &f, fe);
        if (f == fe)
            break;
        size_t plen;
        const uint8_t *q = key_other_call(p, end, &plen);
        if (q == NULL)
            goto other;
        f->key = (const char *)p + 3;
        f->key_len = plen - 1;
        f++;
        p = q;
        bounded = 1;
    }
    if (fast_sizes((size_t)(p - b) - pos, nkeys) != header)
        goto other;
    if ((pos = offset12(b, len, (size_t)(p - b))) == 0)
        goto other;
    m->values_off = pos;
    /* the last position with room for an item (len >= 27: no wrap); an
     * item there or beyond, and any value of another shape, take
     * value_other()'s bounded checks */
    const size_t vlim = len - ROOM_ITEM;
    for (f = fields; f != fe; f++) {
        size_t vend;
        if (LIKELY(pos <= vlim)) {
            uint32_t w = bulki_load_le32(b + pos) & 0xFFFFFFu;
            size_t plen = (w & 0xFFu) - BULKI_ENT_HDR;
            vend = pos + 3 + plen;
            if (w == bulki_item_hdr[b[pos + 1]]) /* an item: plen <= 8 */
                goto take;
            if ((w & 0xFFFF00u) == STR_ITEM_HDR) {
                if (plen - 1 < 32 && len - pos >= ROOM_STR32 &&
                    bulki_cstr32_ok(b + pos + 3, plen))
                    goto take;
            } else {
                unsigned fl = bulki_fast_tc[(w >> 8) & 0x3Fu];
                if ((w & 0x80E080u) == 0x002000u && /* an array; size, count < 128 */
                    (fl & (BULKI_FAST_OK | BULKI_FAST_BOOL)) == BULKI_FAST_OK &&
                    (w >> 16) * (fl & BULKI_FAST_WIDTH) == plen && plen <= len - pos - 3)
                    goto take;
            }
        }
        if ((vend = value_other_call(b, len, pos)) == 0)
            goto other;
    take:
        f->value_off = pos;
        f->value_end = vend;
        pos = vend;
    }
    if (fast_sizes(pos - m->values_off, nkeys) != data || offset12(b, len, pos) != len)
        goto other;
    m->base = b;
    m->base_len = len;
    m->offset = 0;
    m->end = len;
    m->depth = 1;
    out->fields = fields;
    out->n = nkeys;
    out->next = 0;
    return 0;
other: /* the callers' other ways, from the start (a tail call) */
    return decode_index_rest(out, fields, cap, b, len, err_off);
}

/* Parse the BULKI at `pos`; fill *out; with fields, also index its first
 * cap pairs there. */
static int parse_doc(struct rctx *c, size_t pos, int depth, bulki_map *out, bulki_field *fields,
                     size_t cap)
{
    uint64_t total, nkeys, header, data, off;
    size_t start = pos, nkeys_off, header_off, data_off;
    int rc;

    if (depth > BULKI_MAX_DEPTH)
        return fail_at(c, start, BULKI_E_DEPTH);
    const uint8_t *b = c->base;
    size_t len = c->len;
    if ((rc = get_varint(c, &pos, &total)) != 0)
        return rc;
    nkeys_off = pos;
    if ((rc = get_varint(c, &pos, &nkeys)) != 0)
        return rc;
    header_off = pos;
    if ((rc = get_varint(c, &pos, &header)) != 0)
        return rc;
    data_off = pos;
    if ((rc = get_varint(c, &pos, &data)) != 0)
        return rc;
    /* every pair needs at least 6 bytes (two minimal entities) */
    if (nkeys > (len - pos) / 6)
        return fail_at(c, nkeys_off, BULKI_E_COUNT);

    uint64_t hsum = 0, dsum = 0;
    size_t keys_off = pos;
    size_t fast_end = keys_fast(b, len, pos, nkeys, fields, cap, &hsum);
    for (uint64_t i = 0; i < nkeys && fast_end == 0; i++) {
        /* keys: only their size, end, and (indexed) bytes are kept */
        struct fast_ent f;
        const char *key;
        size_t key_len;
        uint64_t ksize;
        if (fast_ent(c->base, c->len, pos, &f)) {
            ksize = f.size;
            key = f.type == BULKI_T_STRING ? (const char *)c->base + pos + 3 : NULL;
            key_len = f.payload_len;
            pos = f.end;
        } else {
            bulki_ent e;
            if ((rc = parse_value_slow(c, pos, depth, &e)) != 0)
                return rc;
            ksize = e.size;
            key = e.type == BULKI_T_STRING ? (const char *)e.payload : NULL;
            key_len = e.payload_len;
            pos = e.end;
        }
        if (bulki_add(&hsum, hsum, ksize) != 0)
            return fail_at(c, header_off, BULKI_E_SIZE);
        if (i < cap) {
            fields[i].key = key;
            fields[i].key_len = key_len;
        }
    }
    if (fast_end != 0)
        pos = fast_end;
    size_t off1 = pos;
    if ((rc = get_varint(c, &pos, &off)) != 0)
        return rc;
    if (off != off1)
        return fail_at(c, off1, BULKI_E_OFFSET);
    size_t values_off = pos;
    fast_end = values_fast(b, len, pos, nkeys, fields, cap, &dsum);
    if (fast_end != 0)
        pos = fast_end;
    for (uint64_t i = 0; i < nkeys && fast_end == 0; i++) {
        bulki_ent e;
        if ((rc = parse_value(c, pos, depth, &e)) != 0)
            return rc;
        if (bulki_add(&dsum, dsum, e.size) != 0)
            return fail_at(c, data_off, BULKI_E_SIZE);
        if (i < cap) {
            fields[i].value_off = pos;
            fields[i].value_end = e.end;
        }
        pos = e.end;
    }
    size_t off2 = pos;
    if ((rc = get_varint(c, &pos, &off)) != 0)
        return rc;
    if (off != off2)
        return fail_at(c, off2, BULKI_E_OFFSET);
    if (hsum != header)
        return fail_at(c, header_off, BULKI_E_SIZE);
    if (dsum != data)
        return fail_at(c, data_off, BULKI_E_SIZE);
    uint64_t t;
    if (bulki_add(&t, BULKI_DOC_HDR, hsum) != 0 || bulki_add(&t, t, dsum) != 0 ||
        t != total)
        return fail_at(c, start, BULKI_E_SIZE);
    map_view(out, b, len, start, pos, keys_off, values_off, nkeys, total, depth);
    return 0;
}

/* The general parser over a whole buffer: a top-level BULKI filling it,
 * its first cap pairs indexed into fields. */
static int decode_doc(bulki_map *out, bulki_field *fields, size_t cap, const void *buf,
                      size_t len, size_t *err_off)
{
    struct rctx c = {buf, len, 0};
    int rc;
    if (out == NULL || (buf == NULL && len > 0) || (fields == NULL && cap > 0))
        return BULKI_E_INVAL;
    if (buf == NULL)
        rc = fail_at(&c, 0, BULKI_E_TRUNCATED);
    else if ((rc = parse_doc(&c, 0, 1, out, fields, cap)) == 0 && out->end != len)
        rc = fail_at(&c, out->end, BULKI_E_TRAILING);
    if (rc != 0 && err_off)
        *err_off = c.err_off;
    return rc;
}

int bulki_decode_doc(bulki_map *out, const void *buf, size_t len, size_t *err_off)
{
    return decode_doc(out, NULL, 0, buf, len, err_off);
}

/* bulki_decode_index past index_common: the general parser alone (which
 * also finds and reports every error). Out of line, so that the common
 * case's call saves no registers. */
__attribute__((noinline)) static int decode_index_rest(bulki_index *out, bulki_field *fields,
                                                       size_t cap, const void *buf, size_t len,
                                                       size_t *err_off)
{
    int rc;
    if (out == NULL)
        return BULKI_E_INVAL;
    out->fields = fields;
    out->n = 0;
    out->next = 0;
    if ((rc = decode_doc(&out->map, fields, cap, buf, len, err_off)) != 0) {
        memset(&out->map, 0, sizeof out->map); /* an empty index: lookups find nothing */
        return rc;
    }
    out->n = out->map.npairs < cap ? (size_t)out->map.npairs : cap;
    return 0;
}

int bulki_decode_index(bulki_index *out, bulki_field *fields, size_t cap, const void *buf,
                       size_t len, size_t *err_off)
{
    /* index_common refuses fields == NULL itself, and hands everything it
     * does not take to decode_index_rest */
    if (out != NULL && buf != NULL)
        return index_common(out, fields, cap, buf, len, err_off);
    return decode_index_rest(out, fields, cap, buf, len, err_off);
}

int bulki_decode_index_general(bulki_index *out, bulki_field *fields, size_t cap,
                               const void *buf, size_t len, size_t *err_off)
{
    return decode_index_rest(out, fields, cap, buf, len, err_off);
}

int bulki_decode_value(bulki_ent *out, const void *buf, size_t len, size_t *err_off)
{
    struct rctx c = {buf, len, 0};
    int rc;
    if (out == NULL || (buf == NULL && len > 0))
        return BULKI_E_INVAL;
    if (buf == NULL)
        rc = fail_at(&c, 0, BULKI_E_TRUNCATED);
    else if ((rc = parse_value(&c, 0, 0, out)) == 0 && out->end != len)
        rc = fail_at(&c, out->end, BULKI_E_TRAILING);
    if (rc != 0 && err_off)
        *err_off = c.err_off;
    return rc;
}

/* For the walkers in bulki_view.c: parse_value, out of line. */
int bulki_parse_value_(struct rctx *c, size_t pos, int depth, bulki_ent *out)
{
    return parse_value(c, pos, depth, out);
}

/* The BULKI held by PDC_BULKI entity e (item: index 0; array: element
 * index), its first cap pairs indexed into fields. */
static int nested_doc(bulki_map *out, bulki_field *fields, size_t cap, const bulki_ent *e,
                      uint64_t index)
{
    struct rctx c = {e->base, e->base_len, 0};
    size_t pos = (size_t)(e->payload - e->base);
    int rc;
    if (e->type != BULKI_T_BULKI)
        return BULKI_E_MISMATCH;
    if (index >= e->count)
        return BULKI_E_NOTFOUND;
    for (uint64_t i = 0;; i++) {
        int last = i == index;
        if ((rc = parse_doc(&c, pos, e->depth + 1, out, last ? fields : NULL, last ? cap : 0)) !=
                0 ||
            last)
            return rc;
        pos = out->end;
    }
}

int bulki_ent_doc(bulki_map *out, const bulki_ent *e, uint64_t index)
{
    return nested_doc(out, NULL, 0, e, index);
}

int bulki_ent_index(bulki_index *out, bulki_field *fields, size_t cap, const bulki_ent *e,
                    uint64_t index)
{
    int rc;
    if (out == NULL || e == NULL || (fields == NULL && cap > 0))
        return BULKI_E_INVAL;
    out->fields = fields;
    out->n = 0;
    out->next = 0;
    if ((rc = nested_doc(&out->map, fields, cap, e, index)) != 0) {
        memset(&out->map, 0, sizeof out->map); /* an empty index: lookups find nothing */
        return rc;
    }
    out->n = out->map.npairs < cap ? (size_t)out->map.npairs : cap;
    return 0;
}

int bulki_ent_at(bulki_ent *out, const bulki_ent *e, uint64_t index)
{
    struct rctx c = {e->base, e->base_len, 0};
    size_t pos = (size_t)(e->payload - e->base);
    int rc;
    if (e->type != BULKI_T_BULKI_ENT)
        return BULKI_E_MISMATCH;
    if (index >= e->count)
        return BULKI_E_NOTFOUND;
    for (uint64_t i = 0;; i++) {
        if ((rc = parse_value(&c, pos, e->depth + 1, out)) != 0)
            return rc;
        if (i == index)
            return 0;
        pos = out->end;
    }
}
