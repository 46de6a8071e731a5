/*
 * bulki_write.c - the BULKI encoder. It walks a caller-built description
 * (bulki_doc / bulki_value) and writes PDC's exact bytes into a caller's
 * buffer, allocating nothing. The first error latches in the writer.
 *
 * Layout reminder (docs/BULKI.md): an entity is
 *   varint size | u8 type|class<<5 | varint count | payload
 * and a BULKI is
 *   varint total | varint nkeys | varint header | varint data |
 *   keys... | varint offset_1 | values... | varint offset_2
 * where `size`/`total`/`header`/`data` are PDC's notional sizes (every
 * entity counted as an 18-byte header plus payload) and the offsets are the
 * absolute positions, in the outermost buffer, of the offset fields.
 */
#include "bulki.h"
#include "bulki_int.h"

#include <string.h>

static int doc_notional(uint64_t *out, const bulki_doc *d, int depth);

static int value_notional_slow(uint64_t *out, const bulki_value *v, int depth);

/* Check a value's description and compute its notional size. Fast path:
 * string items and numeric items and arrays, checked exactly as
 * value_notional_slow() checks them (anything else goes there). */
__attribute__((always_inline)) static inline int value_notional(uint64_t *out,
                                                               const bulki_value *v, int depth)
{
    const struct bulki_type_info *ti = bulki_ti(v->type);
    if (ti != NULL && v->cls == BULKI_ITEM && v->count == 1 && ti->kind == BULKI_KIND_STRING &&
        (v->len == 0 || v->u.data != NULL) && v->len <= UINT64_MAX - BULKI_ENT_HDR - 1 &&
        !(v->len > 0 && bulki_has_nul(v->u.data, v->len))) {
        *out = BULKI_ENT_HDR + (uint64_t)v->len + 1;
        return 0;
    }
    if (ti != NULL && ti->width > 0 && ti->kind != BULKI_KIND_BOOL &&
        (v->cls == BULKI_ARRAY || (v->cls == BULKI_ITEM && v->count == 1)) &&
        (v->count == 0 || v->u.data != NULL) &&
        v->count <= (UINT64_MAX - BULKI_ENT_HDR) / 8) {
        *out = BULKI_ENT_HDR + v->count * ti->width;
        return 0;
    }
    return value_notional_slow(out, v, depth);
}

/* The general check: every description, every error. */
__attribute__((noinline)) static int value_notional_slow(uint64_t *out, const bulki_value *v,
                                                         int depth)
{
    const struct bulki_type_info *ti = bulki_ti(v->type);
    uint64_t sum = BULKI_ENT_HDR, s;

    if (ti == NULL)
        return BULKI_E_TYPE;
    if (v->cls != BULKI_ITEM && v->cls != BULKI_ARRAY)
        return BULKI_E_CLASS;
    if (v->cls == BULKI_ITEM && v->count != 1)
        return BULKI_E_COUNT;

    switch (ti->kind) {
    case BULKI_KIND_STRING:
        if (v->cls == BULKI_ARRAY)
            return BULKI_E_STRING_ARRAY;
        if (v->len > 0 && v->u.data == NULL)
            return BULKI_E_INVAL;
        if (v->len > 0 && bulki_has_nul(v->u.data, v->len))
            return BULKI_E_STRING;
        if (bulki_add(&sum, sum, (uint64_t)v->len + 1) != 0)
            return BULKI_E_COUNT;
        break;
    case BULKI_KIND_NESTED:
        if (depth + 1 > BULKI_MAX_DEPTH)
            return BULKI_E_DEPTH;
        if (v->count > 0 && v->u.data == NULL)
            return BULKI_E_INVAL;
        if (v->type == BULKI_T_BULKI) {
            for (uint64_t i = 0; i < v->count; i++) {
                int rc = doc_notional(&s, &v->u.doc[i], depth + 1);
                if (rc != 0)
                    return rc;
                if (bulki_add(&sum, sum, s) != 0)
                    return BULKI_E_COUNT;
            }
            if (v->cls == BULKI_ITEM && bulki_add(&sum, sum, BULKI_PTR_SIZE) != 0)
                return BULKI_E_COUNT;
        } else {
            if (v->cls == BULKI_ITEM)
                return BULKI_E_CLASS;
            for (uint64_t i = 0; i < v->count; i++) {
                int rc = value_notional(&s, &v->u.ents[i], depth + 1);
                if (rc != 0)
                    return rc;
                if (bulki_add(&sum, sum, s) != 0)
                    return BULKI_E_COUNT;
            }
        }
        break;
    default:
        if (v->count > 0 && v->u.data == NULL)
            return BULKI_E_INVAL;
        if (v->count > (UINT64_MAX - BULKI_ENT_HDR) / ti->width)
            return BULKI_E_COUNT;
        if (ti->kind == BULKI_KIND_BOOL) {
            const uint8_t *b = v->u.data;
            for (uint64_t i = 0; i < v->count; i++)
                if (b[i] > 1)
                    return BULKI_E_BOOL;
        }
        sum += v->count * ti->width;
        break;
    }
    *out = sum;
    return 0;
}

static int doc_sums(uint64_t *header, uint64_t *data, const bulki_doc *d, int depth)
{
    uint64_t h = 0, dt = 0, s;
    if (depth > BULKI_MAX_DEPTH)
        return BULKI_E_DEPTH;
    if (d->npairs > 0 && d->pairs == NULL)
        return BULKI_E_INVAL;
    for (size_t i = 0; i < d->npairs; i++) {
        int rc = value_notional(&s, &d->pairs[i].key, depth);
        if (rc != 0)
            return rc;
        if (bulki_add(&h, h, s) != 0)
            return BULKI_E_COUNT;
        rc = value_notional(&s, &d->pairs[i].value, depth);
        if (rc != 0)
            return rc;
        if (bulki_add(&dt, dt, s) != 0)
            return BULKI_E_COUNT;
    }
    *header = h;
    *data = dt;
    return 0;
}

static int doc_notional(uint64_t *out, const bulki_doc *d, int depth)
{
    uint64_t h, dt, t;
    int rc = doc_sums(&h, &dt, d, depth);
    if (rc != 0)
        return rc;
    if (bulki_add(&t, BULKI_DOC_HDR, h) != 0 || bulki_add(&t, t, dt) != 0)
        return BULKI_E_COUNT;
    *out = t;
    return 0;
}

/* ---- low-level emitters; all no-ops once an error has latched ---- */

static void fail(bulki_writer *w, int err)
{
    if (w->err == 0)
        w->err = err;
}

static uint8_t *reserve(bulki_writer *w, size_t n)
{
    if (w->err != 0)
        return NULL;
    if (n > w->cap - w->pos) {
        fail(w, BULKI_E_NOSPACE);
        return NULL;
    }
    uint8_t *p = w->buf ? w->buf + w->pos : NULL;
    w->pos += n;
    return p;
}

static inline void put_varint(bulki_writer *w, uint64_t v)
{
    /* room for the longest varint: write in place (counting mode: count) */
    if (w->err == 0 && w->cap - w->pos >= BULKI_VARINT_MAX) {
        if (w->buf)
            w->pos += bulki_varint_put(w->buf + w->pos, v);
        else
            w->pos += bulki_varint_len(v);
        return;
    }
    uint8_t tmp[BULKI_VARINT_MAX];
    size_t n = bulki_varint_put(tmp, v);
    uint8_t *p = reserve(w, n);
    if (p)
        memcpy(p, tmp, n);
}

static void put_byte(bulki_writer *w, uint8_t b)
{
    uint8_t *p = reserve(w, 1);
    if (p)
        *p = b;
}

static void emit_doc(bulki_writer *w, const bulki_doc *d, int depth);
static void emit_value(bulki_writer *w, const bulki_value *v, int depth);

static void emit_sized_slow(bulki_writer *w, const bulki_value *v, uint64_t size, int depth);

/* Write a value whose description value_notional() has checked and
 * measured (`size`). */
__attribute__((always_inline)) static inline void emit_sized(bulki_writer *w, const bulki_value *v,
                                                            uint64_t size, int depth)
{
    const struct bulki_type_info *ti = bulki_ti(v->type);
    /* Fast path, a base type or string that fits: one capacity check for
     * the whole entity (header at most 2 varints + 1 byte). */
    if (ti->kind != BULKI_KIND_NESTED && w->err == 0 && w->buf != NULL &&
        (bulki_host_is_le() || ti->width <= 1)) {
        size_t plen = ti->kind == BULKI_KIND_STRING ? v->len + 1 : (size_t)v->count * ti->width;
        size_t room = w->cap - w->pos;
        if (room >= 2 * BULKI_VARINT_MAX + 1 && plen <= room - (2 * BULKI_VARINT_MAX + 1)) {
            uint8_t *p = w->buf + w->pos;
            p += bulki_varint_put(p, size);
            *p++ = (uint8_t)(v->type | (v->cls << 5));
            p += bulki_varint_put(p, v->count);
            if (ti->kind == BULKI_KIND_STRING) {
                if (v->len > 0)
                    memcpy(p, v->u.data, v->len);
                p[v->len] = 0;
            } else if (plen == 8) {
                memcpy(p, v->u.data, 8);
            } else if (plen == 4) {
                memcpy(p, v->u.data, 4);
            } else if (plen > 0) {
                memcpy(p, v->u.data, plen);
            }
            w->pos = (size_t)(p + plen - w->buf);
            return;
        }
    }
    emit_sized_slow(w, v, size, depth);
}

/* Everything else: nested values, big-endian hosts, counting mode, a
 * buffer that may be too small (each write checked, the error latched). */
__attribute__((noinline)) static void emit_sized_slow(bulki_writer *w, const bulki_value *v,
                                                      uint64_t size, int depth)
{
    const struct bulki_type_info *ti = bulki_ti(v->type);
    put_varint(w, size);
    put_byte(w, (uint8_t)(v->type | (v->cls << 5)));
    put_varint(w, v->count);

    if (ti->kind == BULKI_KIND_STRING) {
        uint8_t *p = reserve(w, v->len + 1);
        if (p) {
            if (v->len > 0)
                memcpy(p, v->u.data, v->len);
            p[v->len] = 0;
        }
    } else if (v->type == BULKI_T_BULKI) {
        for (uint64_t i = 0; i < v->count && w->err == 0; i++)
            emit_doc(w, &v->u.doc[i], depth + 1);
    } else if (v->type == BULKI_T_BULKI_ENT) {
        for (uint64_t i = 0; i < v->count && w->err == 0; i++)
            emit_value(w, &v->u.ents[i], depth + 1);
    } else {
        size_t total = (size_t)v->count * ti->width;
        uint8_t *p = reserve(w, total);
        /* total == 0: an empty array may have data == NULL, and memcpy
         * from NULL is undefined even for 0 bytes */
        if (p && total > 0) {
            if (bulki_host_is_le()) {
                memcpy(p, v->u.data, total);
            } else {
                const uint8_t *src = v->u.data;
                for (size_t i = 0; i < total; i += ti->width)
                    bulki_copy_le(p + i, src + i, ti->width);
            }
        }
    }
}

static void emit_value(bulki_writer *w, const bulki_value *v, int depth)
{
    uint64_t size;
    int rc = value_notional(&size, v, depth);
    if (rc != 0) {
        fail(w, rc);
        return;
    }
    emit_sized(w, v, size, depth);
}

/* Pairs whose notional sizes emit_doc keeps on the stack, so that each
 * value is checked and measured once (larger documents measure twice). */
#define SIZES_ON_STACK 32

/*
 * The flat path: a BULKI of at most SIZES_ON_STACK pairs whose keys and
 * values are all string items or fixed-width base-type items and arrays
 * (not booleans), each of notional size below 128 (so its size and its
 * count are one varint byte each: the header is exactly three bytes).
 * That is every record pdc-ckpt writes except a region's. One pass checks
 * and measures the description, which gives the whole encoding's length,
 * so the buffer's room is checked once and the bytes are written without
 * any further check. Anything else, a buffer without room for the whole
 * BULKI and a writer that has already failed go to the general path, which
 * also finds and reports every error: the flat path accepts exactly the
 * descriptions value_notional() accepts, and writes the same bytes.
 */

/* A value's notional size if it takes the flat path, else 0. */
__attribute__((always_inline)) static inline unsigned flat_size(const bulki_value *v)
{
    if (v->type >= 32 || v->cls > BULKI_ARRAY)
        return 0;
    unsigned fl = bulki_fast_tc[v->type | v->cls << 5];
    if (fl & BULKI_FAST_STR) { /* a string item (string arrays are not fast) */
        if (v->count != 1 || v->len > 127u - BULKI_ENT_HDR - 1 ||
            (v->len > 0 && (v->u.data == NULL || bulki_has_nul(v->u.data, v->len))))
            return 0;
        return BULKI_ENT_HDR + 1 + (unsigned)v->len;
    }
    /* numbers: an item of count 1, or an array; not booleans (their bytes
     * need a check) */
    unsigned width = fl & BULKI_FAST_WIDTH;
    if (!(fl & BULKI_FAST_OK) || (fl & BULKI_FAST_BOOL) || v->count > 127u ||
        (v->cls == BULKI_ITEM && v->count != 1) || (v->count > 0 && v->u.data == NULL) ||
        BULKI_ENT_HDR + (unsigned)v->count * width > 127u)
        return 0;
    return BULKI_ENT_HDR + (unsigned)v->count * width;
}

/* n bytes (below 128) from s to d, without a call: 8 or 4 bytes at a
 * time, the last chunk overlapping; reads only s[0..n), writes d[0..n). */
static inline void copy_short(uint8_t *d, const uint8_t *s, size_t n)
{
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8)
            memcpy(d + i, s + i, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else if (n > 0) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    }
}

/* One flat entity of notional size `size` at p; returns its end. */
__attribute__((always_inline)) static inline uint8_t *put_flat(uint8_t *p, const bulki_value *v,
                                                              unsigned size)
{
    size_t plen = size - BULKI_ENT_HDR;
    p[0] = (uint8_t)size;
    p[1] = (uint8_t)(v->type | v->cls << 5);
    p[2] = (uint8_t)v->count;
    if (v->type == BULKI_T_STRING) {
        copy_short(p + 3, v->u.data, plen - 1);
        p[2 + plen] = 0;
    } else {
        copy_short(p + 3, v->u.data, plen);
    }
    return p + 3 + plen;
}

/* 1 if the flat path wrote (or measured) d, 0 if d goes the general way
 * (nothing written). */
static int emit_flat(bulki_writer *w, const bulki_doc *d)
{
    uint8_t ks[SIZES_ON_STACK], vs[SIZES_ON_STACK];
    size_t n = d->npairs, h = 0, dt = 0;
    if (n > SIZES_ON_STACK || (n > 0 && d->pairs == NULL) || w->err != 0 ||
        !bulki_host_is_le())
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned k = flat_size(&d->pairs[i].key), v = flat_size(&d->pairs[i].value);
        if (k == 0 || v == 0)
            return 0;
        ks[i] = (uint8_t)k;
        vs[i] = (uint8_t)v;
        h += k;
        dt += v;
    }
    /* every entity takes 3 header bytes where PDC counts 18 */
    size_t total = BULKI_DOC_HDR + h + dt, start = w->pos;
    size_t off1 = start + bulki_varint_len(total) + bulki_varint_len(n) + bulki_varint_len(h) +
                  bulki_varint_len(dt) + h - n * (BULKI_ENT_HDR - 3);
    size_t off2 = off1 + bulki_varint_len(off1) + dt - n * (BULKI_ENT_HDR - 3);
    size_t end = off2 + bulki_varint_len(off2);
    if (end - start > w->cap - start)
        return 0; /* the general path latches BULKI_E_NOSPACE where it runs out */
    if (w->buf == NULL) { /* counting mode */
        w->pos = end;
        return 1;
    }
    uint8_t *p = w->buf + start;
    p += bulki_varint_put(p, total);
    p += bulki_varint_put(p, n);
    p += bulki_varint_put(p, h);
    p += bulki_varint_put(p, dt);
    for (size_t i = 0; i < n; i++)
        p = put_flat(p, &d->pairs[i].key, ks[i]);
    p += bulki_varint_put(p, off1);
    for (size_t i = 0; i < n; i++)
        p = put_flat(p, &d->pairs[i].value, vs[i]);
    bulki_varint_put(p, off2);
    w->pos = end;
    return 1;
}

static void emit_doc(bulki_writer *w, const bulki_doc *d, int depth)
{
    uint64_t h = 0, dt = 0, ks[SIZES_ON_STACK], vs[SIZES_ON_STACK];
    int rc;
    if (depth <= BULKI_MAX_DEPTH && emit_flat(w, d))
        return;
    if (d->npairs <= SIZES_ON_STACK) {
        if (depth > BULKI_MAX_DEPTH)
            rc = BULKI_E_DEPTH;
        else if (d->npairs > 0 && d->pairs == NULL)
            rc = BULKI_E_INVAL;
        else
            rc = 0;
        for (size_t i = 0; i < d->npairs && rc == 0; i++) {
            if ((rc = value_notional(&ks[i], &d->pairs[i].key, depth)) != 0 ||
                (rc = value_notional(&vs[i], &d->pairs[i].value, depth)) != 0)
                break;
            if (bulki_add(&h, h, ks[i]) != 0 || bulki_add(&dt, dt, vs[i]) != 0)
                rc = BULKI_E_COUNT;
        }
    } else {
        rc = doc_sums(&h, &dt, d, depth);
    }
    if (rc != 0) {
        fail(w, rc);
        return;
    }
    put_varint(w, BULKI_DOC_HDR + h + dt);
    put_varint(w, d->npairs);
    put_varint(w, h);
    put_varint(w, dt);
    int known = d->npairs <= SIZES_ON_STACK;
    for (size_t i = 0; i < d->npairs && w->err == 0; i++) {
        if (known)
            emit_sized(w, &d->pairs[i].key, ks[i], depth);
        else
            emit_value(w, &d->pairs[i].key, depth);
    }
    put_varint(w, w->pos);
    for (size_t i = 0; i < d->npairs && w->err == 0; i++) {
        if (known)
            emit_sized(w, &d->pairs[i].value, vs[i], depth);
        else
            emit_value(w, &d->pairs[i].value, depth);
    }
    put_varint(w, w->pos);
}

void bulki_writer_init(bulki_writer *w, void *buf, size_t cap)
{
    w->buf = buf;
    w->cap = buf ? cap : 0;
    w->pos = 0;
    w->err = 0;
    w->depth = 0;
}

void bulki_write_doc(bulki_writer *w, const bulki_doc *doc)
{
    if (doc == NULL) {
        fail(w, BULKI_E_INVAL);
        return;
    }
    emit_doc(w, doc, 1);
}

void bulki_write_value(bulki_writer *w, const bulki_value *v)
{
    if (v == NULL) {
        fail(w, BULKI_E_INVAL);
        return;
    }
    emit_value(w, v, 0);
}

int bulki_writer_finish(size_t *len, bulki_writer *w)
{
    if (len)
        *len = w->pos;
    return w->err;
}

/* Counting mode: a writer with no buffer and unlimited room measures. */
static void count_init(bulki_writer *w)
{
    w->buf = NULL;
    w->cap = SIZE_MAX;
    w->pos = 0;
    w->err = 0;
    w->depth = 0;
}

int bulki_doc_encoded_len(size_t *len, const bulki_doc *doc)
{
    bulki_writer w;
    count_init(&w);
    bulki_write_doc(&w, doc);
    return bulki_writer_finish(len, &w);
}

int bulki_value_encoded_len(size_t *len, const bulki_value *v)
{
    bulki_writer w;
    count_init(&w);
    bulki_write_value(&w, v);
    return bulki_writer_finish(len, &w);
}

int bulki_encode_doc(size_t *written, void *buf, size_t cap, const bulki_doc *doc)
{
    bulki_writer w;
    if (buf == NULL)
        return BULKI_E_INVAL;
    bulki_writer_init(&w, buf, cap);
    bulki_write_doc(&w, doc);
    return bulki_writer_finish(written, &w);
}

int bulki_encode_value(size_t *written, void *buf, size_t cap, const bulki_value *v)
{
    bulki_writer w;
    if (buf == NULL)
        return BULKI_E_INVAL;
    bulki_writer_init(&w, buf, cap);
    bulki_write_value(&w, v);
    return bulki_writer_finish(written, &w);
}
