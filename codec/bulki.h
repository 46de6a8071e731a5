/*
 * bulki.h - BULKI v0.1, the binary key-value encoding of PDC, wire-compatible
 * with PDC's own serializer (src/commons/serde/bulki/ in hpc-io/pdc).
 *
 * Two halves:
 *
 *  - The writer encodes a caller-built description (bulki_doc / bulki_value,
 *    plain structs that point at the caller's data) into a caller's buffer.
 *    It never allocates. The first error latches: later writes are no-ops and
 *    bulki_writer_finish() returns it. A buffer that is too small is an error,
 *    never a truncation. bulki_doc_encoded_len() gives the exact length up
 *    front (for LMDB's MDB_RESERVE). Cost is O(n * depth) for n entities; for
 *    the flat and two-level records pdc-ckpt stores that is O(n).
 *
 *  - The reader validates a whole buffer once (bounds, varints, type codes,
 *    notional sizes, both offsets, nesting depth, trailing bytes) and then
 *    hands out views: pointers into the source bytes, never copies. Every
 *    view (bulki_ent, bulki_map and the pointers inside them) is valid for as
 *    long as the source bytes are: for a record read from LMDB, until the
 *    read transaction that returned it ends. The reader allocates nothing.
 *
 * Errors are negative BULKI_E* codes; bulki_strerror() names them. Decoding
 * errors also report the byte offset (from the start of the buffer) at which
 * the problem was found.
 *
 * Arguments: what a call produces comes first (the decoded view, the
 * length written, then the buffer written into), then the writer, reader
 * or iterator it works on, then its inputs; an optional report that may be
 * NULL (err_off) comes last.
 */
#ifndef PDC_CKPT_BULKI_H
#define PDC_CKPT_BULKI_H

#include "ckpt_export.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Type codes: fixed on the wire, never renumbered or reused. ---- */
enum bulki_type {
    BULKI_T_SHORT = 1, BULKI_T_INT = 2, BULKI_T_UINT = 3, BULKI_T_LONG = 4,
    BULKI_T_INT8 = 5, BULKI_T_UINT8 = 6, BULKI_T_INT16 = 7, BULKI_T_UINT16 = 8,
    BULKI_T_INT32 = 9, BULKI_T_UINT32 = 10, BULKI_T_INT64 = 11,
    BULKI_T_UINT64 = 12, BULKI_T_FLOAT = 13, BULKI_T_DOUBLE = 14,
    BULKI_T_CHAR = 15, BULKI_T_STRING = 16, BULKI_T_BOOLEAN = 17,
    BULKI_T_VOID_PTR = 18, BULKI_T_SIZE_T = 19, BULKI_T_BULKI = 20,
    BULKI_T_BULKI_ENT = 21
};

enum bulki_class { BULKI_ITEM = 0, BULKI_ARRAY = 1 };

/* What kind of number a base type holds (for tools and generic getters). */
enum bulki_kind {
    BULKI_KIND_INVALID = 0,
    BULKI_KIND_SIGNED,   /* two's complement, little-endian */
    BULKI_KIND_UNSIGNED, /* little-endian */
    BULKI_KIND_FLOAT,    /* IEEE 754 binary32/binary64, little-endian */
    BULKI_KIND_BOOL,     /* one byte, 0 or 1 */
    BULKI_KIND_STRING,   /* bytes + NUL */
    BULKI_KIND_NESTED    /* PDC_BULKI, PDC_BULKI_ENT */
};

/* The one table of type codes, names and widths, shared by codec and tools. */
struct bulki_type_info {
    uint8_t code;
    uint8_t width;        /* bytes per element; 0 for string and nested types */
    uint8_t kind;         /* enum bulki_kind */
    const char *name;     /* "PDC_INT", ... as in the JSON form */
};

/* Info for a type code, or NULL if the code is not a valid BULKI type. */
CKPT_API const struct bulki_type_info *bulki_type_info(unsigned code);
/* Type code for a name such as "PDC_INT32", or 0 if unknown. */
CKPT_API unsigned bulki_type_by_name(const char *name);

/* ---- Errors ----
 * 0 or a negative BULKI_E_* code in -101..-199, apart from the store's and
 * the hooks' CKPT_E_* codes (-1..-99), so a code names one error wherever
 * it ends up; ckpt_strerror/ckpt_errname name both kinds. */
#define BULKI_ERRORS(X)                                                        \
    X(BULKI_OK, 0, "success")                                                  \
    X(BULKI_E_TRUNCATED, -101, "truncated: field runs past the end of the buffer") \
    X(BULKI_E_VARINT, -102, "varint longer than 10 bytes or over 64 bits")     \
    X(BULKI_E_TYPE, -103, "invalid type code")                                 \
    X(BULKI_E_CLASS, -104, "invalid class or class bits")                      \
    X(BULKI_E_SIZE, -105, "size field does not match the content")             \
    X(BULKI_E_COUNT, -106, "count does not fit the bytes or the type")         \
    X(BULKI_E_OFFSET, -107, "offset field does not match its position")        \
    X(BULKI_E_DEPTH, -108, "nesting deeper than the limit")                    \
    X(BULKI_E_TRAILING, -109, "trailing bytes after the top-level value")      \
    X(BULKI_E_STRING, -110, "string is not NUL-terminated or holds a NUL")     \
    X(BULKI_E_STRING_ARRAY, -111, "string arrays are not part of BULKI v0.1")  \
    X(BULKI_E_BOOL, -112, "boolean byte is neither 0 nor 1")                   \
    X(BULKI_E_NOSPACE, -113, "output buffer too small")                        \
    X(BULKI_E_INVAL, -114, "invalid argument")                                 \
    X(BULKI_E_NOTFOUND, -115, "key not found")                                 \
    X(BULKI_E_MISMATCH, -116, "value has another type than requested")         \
    X(BULKI_E_RANGE, -117, "value out of range for the requested type")

enum bulki_err {
#define BULKI_X_ENUM(name, code, msg) name = code,
    BULKI_ERRORS(BULKI_X_ENUM)
#undef BULKI_X_ENUM
};

/* Static message for a BULKI_E* code (never NULL). */
CKPT_API const char *bulki_strerror(int err);
/* Symbolic name of a code, e.g. "BULKI_E_TRUNCATED" (never NULL). */
CKPT_API const char *bulki_errname(int err);

/* Deepest nesting of PDC_BULKI / PDC_BULKI_ENT levels accepted either way. */
#define BULKI_MAX_DEPTH 64

/* ==================================================================== */
/* Writer                                                                */
/* ==================================================================== */

struct bulki_doc;

/*
 * A value to encode. It points at caller memory; nothing is copied until
 * it is written. Build with the BULKI_V_* helpers below or by hand:
 *   base item:   type, cls = BULKI_ITEM, count = 1, data = &value
 *   base array:  type, cls = BULKI_ARRAY, count = n, data = n values, in
 *                host order (the writer emits little-endian)
 *   string item: type = BULKI_T_STRING, data = bytes, len = strlen (the
 *                writer appends the NUL; bytes must hold no NUL)
 *   BULKI item:  type = BULKI_T_BULKI, cls = ITEM, count = 1, doc = &d
 *   BULKI array: type = BULKI_T_BULKI, cls = ARRAY, count = n, doc = d[n]
 *   ENT array:   type = BULKI_T_BULKI_ENT, cls = ARRAY, count = n, ents = e[n]
 */
typedef struct bulki_value {
    uint8_t type;
    uint8_t cls;
    uint64_t count;
    size_t len; /* strings only: byte length without the NUL */
    union {
        const void *data;
        const struct bulki_doc *doc;
        const struct bulki_value *ents;
    } u;
} bulki_value;

typedef struct bulki_pair {
    bulki_value key;
    bulki_value value;
} bulki_pair;

/* A BULKI: pairs in order. */
typedef struct bulki_doc {
    size_t npairs;
    const bulki_pair *pairs;
} bulki_doc;

/* Writer state over a caller's buffer. Treat as opaque. */
typedef struct bulki_writer {
    uint8_t *buf;
    size_t cap;
    size_t pos;
    int err;
    int depth;
} bulki_writer;

CKPT_API void bulki_writer_init(bulki_writer *w, void *buf, size_t cap);
/* Append one top-level BULKI / one top-level entity at the current
 * position. Offsets inside count from the start of the writer's buffer. */
CKPT_API void bulki_write_doc(bulki_writer *w, const bulki_doc *doc);
CKPT_API void bulki_write_value(bulki_writer *w, const bulki_value *v);
/* First latched error (0 if none); *len gets the bytes written so far. */
CKPT_API int bulki_writer_finish(size_t *len, bulki_writer *w);

/* Exact encoded length of a document / entity written at offset 0.
 * Returns 0 or a negative error (invalid description). */
CKPT_API int bulki_doc_encoded_len(size_t *len, const bulki_doc *doc);
CKPT_API int bulki_value_encoded_len(size_t *len, const bulki_value *v);

/* Convenience: encode a whole buffer in one call. */
CKPT_API int bulki_encode_doc(size_t *written, void *buf, size_t cap, const bulki_doc *doc);
CKPT_API int bulki_encode_value(size_t *written, void *buf, size_t cap, const bulki_value *v);

/* Value builders (compound literals; the pointed-to data must outlive the
 * write). */
#define BULKI_V_STRN(s, n)                                                     \
    ((bulki_value){.type = BULKI_T_STRING, .cls = BULKI_ITEM, .count = 1,     \
                   .len = (n), .u.data = (s)})
#define BULKI_V_ITEM(t, ptr)                                                   \
    ((bulki_value){.type = (t), .cls = BULKI_ITEM, .count = 1, .u.data = (ptr)})
#define BULKI_V_ARRAY(t, ptr, n)                                               \
    ((bulki_value){.type = (t), .cls = BULKI_ARRAY, .count = (n), .u.data = (ptr)})
#define BULKI_V_DOC(d)                                                         \
    ((bulki_value){.type = BULKI_T_BULKI, .cls = BULKI_ITEM, .count = 1, .u.doc = (d)})
#define BULKI_V_ENTS(e, n)                                                     \
    ((bulki_value){.type = BULKI_T_BULKI_ENT, .cls = BULKI_ARRAY, .count = (n), .u.ents = (e)})

/* ==================================================================== */
/* Reader                                                                */
/* ==================================================================== */

/*
 * A view of one validated entity. All pointers point into the source
 * buffer handed to bulki_decode*() and live exactly as long as it does.
 *   base item/array: payload = the raw little-endian element bytes
 *                    (count * width bytes; a string item: its bytes
 *                    WITHOUT the NUL, payload_len = strlen)
 *   nested:          payload = the encoded children; use bulki_ent_doc(),
 *                    bulki_ent_at() to walk them.
 */
typedef struct bulki_ent {
    const uint8_t *base;    /* start of the outermost buffer */
    size_t base_len;
    size_t offset;          /* where this entity starts, from base */
    size_t end;             /* one past its last byte, from base */
    const uint8_t *payload;
    size_t payload_len;
    uint64_t count;
    uint64_t size;          /* the notional size field as stored */
    uint8_t type;
    uint8_t cls;
    uint8_t depth;
} bulki_ent;

/* A view of one validated BULKI (pairs). */
typedef struct bulki_map {
    const uint8_t *base;
    size_t base_len;
    size_t offset;          /* where the BULKI starts */
    size_t end;
    size_t keys_off;        /* first key entity */
    size_t values_off;      /* first value entity */
    uint64_t npairs;
    uint64_t total;         /* the notional total_size field as stored */
    uint8_t depth;
} bulki_map;

/* Pair iterator over a bulki_map. */
typedef struct bulki_map_iter {
    const bulki_map *map;
    size_t kpos, vpos;
    uint64_t i;
} bulki_map_iter;

/*
 * Validate buf[0..len) as exactly one top-level BULKI / one top-level
 * entity and return its view. On failure returns a BULKI_E* code and, if
 * err_off is not NULL, the byte offset where the problem was found.
 */
CKPT_API int bulki_decode_doc(bulki_map *out, const void *buf, size_t len, size_t *err_off);
CKPT_API int bulki_decode_value(bulki_ent *out, const void *buf, size_t len, size_t *err_off);

CKPT_API void bulki_map_iter_init(bulki_map_iter *it, const bulki_map *m);
/* 1 and the next pair, 0 at the end, or a negative error. */
CKPT_API int bulki_map_next(bulki_ent *key, bulki_ent *value, bulki_map_iter *it);
/* Value of the first pair whose key is the string `key`; BULKI_E_NOTFOUND
 * if there is none. Walks the pairs from the first one (re-parsing each
 * key's header): for several lookups in one record, bulki_decode_index and
 * bulki_index_get are O(1) each. */
CKPT_API int bulki_map_get(bulki_ent *value, const bulki_map *m, const char *key);

/*
 * Indexed decoding: one validating pass that also records where each of
 * the top-level pairs is, so that looking fields up by key costs a key
 * comparison instead of a walk from the first pair (bulki_map_get).
 *
 * The index is compact: per pair, the key and where the value's bytes are
 * (four words), not the value's view. The view of a value (bulki_ent) is
 * built when it is asked for (bulki_field_value, bulki_index_get), from
 * the value's header, which the pass has validated. The storage is the
 * caller's (typically an array on the stack sized for the record type);
 * nothing is allocated. The index points into the source buffer and lives
 * exactly as long as it does, like every other view.
 */
typedef struct bulki_field {
    const char *key;   /* a string key's bytes (NUL-terminated in place);
                          NULL if the key has another type */
    size_t key_len;    /* without the NUL */
    size_t value_off;  /* where the pair's value entity starts, from map.base */
    size_t value_end;  /* one past its last byte */
} bulki_field;

typedef struct bulki_index {
    bulki_map map;        /* the whole BULKI, as bulki_decode_doc gives it */
    bulki_field *fields;  /* fields[0..n): the first n pairs, in order */
    size_t n;             /* min(map.npairs, cap) */
    size_t next;          /* where the next lookup starts looking */
    bulki_field beyond;   /* bulki_index_find's answer for a pair beyond
                             the first n */
} bulki_index;

/*
 * Validate buf[0..len) exactly as bulki_decode_doc() does (same checks,
 * same errors and offsets) and index its first `cap` top-level pairs into
 * fields[0..cap). A map with more pairs than cap is not an error: the pairs
 * beyond are found by walking (as bulki_map_get). cap may be 0 (fields may
 * then be NULL). On failure the index is left empty (every lookup:
 * BULKI_E_NOTFOUND).
 */
CKPT_API int bulki_decode_index(bulki_index *out, bulki_field *fields, size_t cap,
                                const void *buf, size_t len, size_t *err_off);
/*
 * The view of the value of an indexed pair f (one of ix->fields[0..n), or
 * what bulki_index_find returned), as bulki_map_next would give it. The
 * value's header is read again (bounded by f->value_end and the buffer;
 * its contents were validated by the decode); BULKI_E_INVAL if f does not
 * describe an entity of ix's buffer (a field built or changed by hand).
 */
CKPT_API int bulki_field_value(bulki_ent *value, const bulki_index *ix, const bulki_field *f);
/*
 * Value of a pair whose key is the string `key` (bulki_index_getn: the
 * first key_len bytes of key); BULKI_E_NOTFOUND if none. A lookup starts
 * after the previous hit and wraps around, so asking for the fields in the
 * order they were written costs one key comparison each; any other order
 * at most n comparisons (lengths first). Updates ix->next (and, for a pair
 * beyond the first n, ix->beyond), so an index is not shared between
 * threads without a lock. If a map holds a key more than once (PDC's
 * BULKI_put never writes that; hand-made input can), a lookup returns one
 * of those pairs: the first after the previous hit. bulki_map_get always
 * returns the first.
 */
CKPT_API int bulki_index_get(bulki_ent *value, bulki_index *ix, const char *key);
CKPT_API int bulki_index_getn(bulki_ent *value, bulki_index *ix, const char *key,
                              size_t key_len);
/*
 * The same lookup, giving the pair instead of the value's view: a pointer
 * to it, or NULL if no pair has the key (or an argument is NULL). The pair
 * lives in the index (fields[i]; for a pair beyond the first n,
 * ix->beyond, overwritten by the next such lookup); bulki_field_value
 * gives its value.
 */
CKPT_API const bulki_field *bulki_index_find(bulki_index *ix, const char *key, size_t key_len);

/* The BULKI held by a PDC_BULKI entity: item -> index 0; array -> index i. */
CKPT_API int bulki_ent_doc(bulki_map *out, const bulki_ent *e, uint64_t index);
/* The same as an index: the BULKI held by a PDC_BULKI entity (item ->
 * index 0, array -> index i), its first cap pairs indexed into fields as
 * bulki_decode_index does for a whole buffer (one pass over the nested
 * BULKI that checks and indexes it). On failure the index is left empty. */
CKPT_API int bulki_ent_index(bulki_index *out, bulki_field *fields, size_t cap,
                             const bulki_ent *e, uint64_t index);
/* Element i of a PDC_BULKI_ENT array. Linear in i. */
CKPT_API int bulki_ent_at(bulki_ent *out, const bulki_ent *e, uint64_t index);

/* Typed getters straight from an indexed pair (ix->fields[i], or what
 * bulki_index_find returned): the same result as bulki_field_value and
 * the getter of that name on its view (BULKI_E_INVAL if f does not
 * describe an entity of ix's buffer), without building the view. */
CKPT_API int bulki_field_i64(int64_t *out, const bulki_index *ix, const bulki_field *f);
CKPT_API int bulki_field_u64(uint64_t *out, const bulki_index *ix, const bulki_field *f);
CKPT_API int bulki_field_str(const char **s, size_t *len, const bulki_index *ix,
                             const bulki_field *f);
CKPT_API int bulki_field_elem_u64(uint64_t *out, const bulki_index *ix, const bulki_field *f,
                                  uint64_t i);
/* Elements 0..n-1 of a numeric array (or item) into out[0..n): what
 * bulki_field_elem_u64 gives for each i in turn (the first error, with
 * the elements before it written), the pair's header read once. */
CKPT_API int bulki_field_u64_array(uint64_t *out, size_t n, const bulki_index *ix,
                                   const bulki_field *f);

/* Typed getters for base-type items (any integer width; range-checked). */
CKPT_API int bulki_ent_i64(int64_t *out, const bulki_ent *e);
CKPT_API int bulki_ent_u64(uint64_t *out, const bulki_ent *e);
CKPT_API int bulki_ent_f64(double *out, const bulki_ent *e); /* float or double */
/* A string item: *s points into the source (NUL-terminated there), *len is
 * its length without the NUL. */
CKPT_API int bulki_ent_str(const char **s, size_t *len, const bulki_ent *e);
/* Element i of a numeric array (or the item itself for i = 0). */
CKPT_API int bulki_ent_elem_i64(int64_t *out, const bulki_ent *e, uint64_t i);
CKPT_API int bulki_ent_elem_u64(uint64_t *out, const bulki_ent *e, uint64_t i);
CKPT_API int bulki_ent_elem_f64(double *out, const bulki_ent *e, uint64_t i);

/*
 * Inline fast paths for a record decoder's loop over its fields: each
 * gives exactly the result of the function named without `_inline` (and
 * calls it for everything but the common case), without a call in the
 * common case: the pair after the previous hit for a lookup, a base-type
 * value with a three-byte header for a view or a field getter, the exact
 * type for a getter. test_bulki_index compares each with its function on
 * every pair and view of every test vector and on hand-made pairs and
 * views.
 */
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) &&                    \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define BULKI_LE_ 1
#else
#define BULKI_LE_ 0
#endif

/* a[0..n) == b[0..n) for short keys: 8 or 4 bytes at a time, the last
 * chunk overlapping; reads only [0, n) of each. */
static inline int bulki_key_eq_(const char *a, const char *b, size_t n)
{
    uint64_t u, v;
    uint32_t x, y, x2, y2;
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8) {
            memcpy(&u, a + i, 8);
            memcpy(&v, b + i, 8);
            if (u != v)
                return 0;
        }
        memcpy(&u, a + n - 8, 8);
        memcpy(&v, b + n - 8, 8);
        return u == v;
    }
    if (n >= 4) {
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        memcpy(&x2, a + n - 4, 4);
        memcpy(&y2, b + n - 4, 4);
        return x == y && x2 == y2;
    }
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* The common case of bulki_field_value: a base-type value (not nested)
 * whose size and count are one-byte varints, its header read from the
 * bytes; every other value (and a field that does not fit the buffer)
 * goes to the function. */
static inline int bulki_field_value_inline(bulki_ent *value, const bulki_index *ix,
                                           const bulki_field *f)
{
    const uint8_t *b = ix->map.base;
    size_t off = f->value_off, end = f->value_end;
    if (b != NULL && off < end && end <= ix->map.base_len && end - off >= 3) {
        unsigned size = b[off], tc = b[off + 1], count = b[off + 2], t = tc & 0x1Fu;
        size_t plen = end - off - 3;
        /* the notional size is the payload's plus 18 (PDC's in-memory
         * header); type codes 1..19 are the base types; PDC_STRING's
         * payload leaves out its NUL (and has one: plen > 0) */
        if (size == plen + 18 && size < 0x80 && count < 0x80 && tc < 0x40 && t - 1u < 19u &&
            (t != BULKI_T_STRING || plen > 0)) {
            value->base = b;
            value->base_len = ix->map.base_len;
            value->offset = off;
            value->end = end;
            value->payload = b + off + 3;
            value->payload_len = plen - (t == BULKI_T_STRING);
            value->count = count;
            value->size = size;
            value->type = (uint8_t)t;
            value->cls = (uint8_t)(tc >> 5);
            value->depth = ix->map.depth;
            return 0;
        }
    }
    return bulki_field_value(value, ix, f);
}

/* bulki_index_getn for a lookup of the pair after the previous hit, with
 * the view of a common value built inline. */
static inline int bulki_index_getn_inline(bulki_ent *value, bulki_index *ix, const char *key,
                                          size_t key_len)
{
    if (value != NULL && ix != NULL && key != NULL && ix->next < ix->n) {
        const bulki_field *f = &ix->fields[ix->next];
        if (f->key_len == key_len && f->key != NULL && bulki_key_eq_(f->key, key, key_len)) {
            ix->next++;
            return bulki_field_value_inline(value, ix, f);
        }
    }
    return bulki_index_getn(value, ix, key, key_len);
}

/* The getters' common cases, shared with their functions: 1 if handled
 * (*out set), 0 if the function's general code must answer. */
static inline int bulki_ent_u64_fast_(uint64_t *out, const bulki_ent *e)
{
    if (BULKI_LE_ && e->type == BULKI_T_UINT64 && e->cls == BULKI_ITEM && e->count == 1 &&
        e->payload_len == 8) {
        memcpy(out, e->payload, 8);
        return 1;
    }
    return 0;
}

static inline int bulki_ent_i64_fast_(int64_t *out, const bulki_ent *e)
{
    if (BULKI_LE_ && e->cls == BULKI_ITEM && e->count == 1) {
        if (e->type == BULKI_T_INT64 && e->payload_len == 8) {
            memcpy(out, e->payload, 8);
            return 1;
        }
        if ((e->type == BULKI_T_INT32 || e->type == BULKI_T_INT) && e->payload_len == 4) {
            int32_t v;
            memcpy(&v, e->payload, 4);
            *out = v;
            return 1;
        }
    }
    return 0;
}

static inline int bulki_ent_elem_u64_fast_(uint64_t *out, const bulki_ent *e, uint64_t i)
{
    if (BULKI_LE_ && e->type == BULKI_T_UINT64 && i < e->count && i < e->payload_len / 8) {
        memcpy(out, e->payload + i * 8, 8);
        return 1;
    }
    return 0;
}

static inline int bulki_ent_u64_inline(uint64_t *out, const bulki_ent *e)
{
    return bulki_ent_u64_fast_(out, e) ? 0 : bulki_ent_u64(out, e);
}

static inline int bulki_ent_i64_inline(int64_t *out, const bulki_ent *e)
{
    return bulki_ent_i64_fast_(out, e) ? 0 : bulki_ent_i64(out, e);
}

static inline int bulki_ent_elem_u64_inline(uint64_t *out, const bulki_ent *e, uint64_t i)
{
    return bulki_ent_elem_u64_fast_(out, e, i) ? 0 : bulki_ent_elem_u64(out, e, i);
}

#ifdef __cplusplus
}
#endif
#endif /* PDC_CKPT_BULKI_H */
