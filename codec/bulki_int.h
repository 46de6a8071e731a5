/*
 * bulki_int.h - private helpers shared by the BULKI writer and reader:
 * LEB128 varints and little-endian loads/stores. Not installed.
 */
#ifndef PDC_CKPT_BULKI_INT_H
#define PDC_CKPT_BULKI_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "bulki.h"

/* Notional header size PDC counts for every entity (2 one-byte fields and
 * 2 eight-byte fields), and the fixed notional part of a BULKI. */
#define BULKI_ENT_HDR 18u
#define BULKI_DOC_HDR 48u
#define BULKI_PTR_SIZE 8u
#define BULKI_VARINT_MAX 10u

/* The type table behind bulki_type_info(), indexed by code (0 and codes
 * above BULKI_T_BULKI_ENT are invalid), for inline lookups on hot paths. */
#define BULKI_NTYPES 22u
extern const struct bulki_type_info bulki_type_table[BULKI_NTYPES];

/* The reader's fast path looks the type byte (type | class << 5, below 64)
 * up here: BULKI_FAST_OK and the element width (BULKI_FAST_WIDTH bits) for a
 * base-type item or array, BULKI_FAST_STR for a string item, BULKI_FAST_BOOL
 * for booleans; 0 for everything the general parser must see (invalid
 * codes, nested types, string arrays). Derived from bulki_type_table;
 * test_bulki_index checks every entry against it. */
#define BULKI_FAST_WIDTH 0x0Fu
#define BULKI_FAST_STR 0x10u
#define BULKI_FAST_BOOL 0x20u
#define BULKI_FAST_OK 0x40u
extern const uint8_t bulki_fast_tc[64];

/* The three header bytes (size | type byte << 8 | count << 16) of every
 * valid base-type ITEM with a fixed width, by type byte (all 256): the
 * notional size 18 + width, the type byte, count 1. Entries of anything
 * else (strings, booleans, nested types, arrays, invalid codes and
 * classes) hold BULKI_NO_HDR, which no three bytes equal. So one
 * comparison of an entity's first three bytes with the entry of its
 * second byte checks size, type, class and count at once. Derived from
 * bulki_type_table; test_bulki_index checks it. */
#define BULKI_NO_HDR 0xFFFFFFFFu
extern const uint32_t bulki_item_hdr[256];

/* bulki_decode_index without index_common (its one-pass try at a
 * record's commonest shape in bulki_read.c): the general parser alone, for
 * test_bulki_index and fuzz-bulki to hold the fast pass to it. Not
 * exported. */
int bulki_decode_index_general(bulki_index *out, bulki_field *fields, size_t cap,
                               const void *buf, size_t len, size_t *err_off);

static inline const struct bulki_type_info *bulki_ti(unsigned code)
{
    return code - 1u < BULKI_NTYPES - 1u ? &bulki_type_table[code] : NULL;
}

static inline size_t bulki_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Encode v into out (at least BULKI_VARINT_MAX bytes); returns bytes used. */
static inline size_t bulki_varint_put(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

/* Decode a varint from p[0..avail). Returns bytes consumed (> 0), 0 if the
 * buffer ends inside it, or -1 if it is longer than 10 bytes or exceeds
 * 64 bits. */
static inline int bulki_varint_get(uint64_t *v, const uint8_t *p, size_t avail)
{
    uint64_t r = 0;
    for (size_t i = 0; i < BULKI_VARINT_MAX; i++) {
        if (i >= avail)
            return 0;
        uint64_t b = p[i] & 0x7f;
        if (i == 9 && b > 1)
            return -1; /* bits beyond 64 */
        r |= b << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = r;
            return (int)i + 1;
        }
    }
    return -1;
}

/* 1 if s[0..n) holds a NUL: eight bytes at a time (the classic
 * has-zero-byte test), the last chunk overlapping; only s[0..n) is read. */
static inline int bulki_has_nul(const uint8_t *s, size_t n)
{
    const uint64_t lo = 0x0101010101010101u, hi = 0x8080808080808080u;
    uint64_t w;
    if (n < 8) {
        if (n >= 4) { /* two overlapping 4-byte words */
            uint32_t a, b;
            const uint32_t lo4 = 0x01010101u, hi4 = 0x80808080u;
            memcpy(&a, s, 4);
            memcpy(&b, s + n - 4, 4);
            return (((a - lo4) & ~a) | ((b - lo4) & ~b)) & hi4 ? 1 : 0;
        }
        for (size_t i = 0; i < n; i++)
            if (s[i] == 0)
                return 1;
        return 0;
    }
    if (n > 64)
        return memchr(s, 0, n) != NULL;
    for (size_t i = 0; i + 8 < n; i += 8) {
        memcpy(&w, s + i, 8);
        if ((w - lo) & ~w & hi)
            return 1;
    }
    memcpy(&w, s + n - 8, 8);
    return ((w - lo) & ~w & hi) != 0;
}

/*
 * 1 if s[0..n) (n >= 1) is a C string in place: s[n-1] is NUL and no byte
 * before it is. With SSE2 (every x86-64), a string of up to 16 (32) bytes
 * with 16 (32) readable bytes from its start is one (two) 16-byte
 * compares against zero: the first NUL (a bit beyond the compared bytes
 * stands for "none") must be byte n-1. bulki_cstr16_ok and bulki_cstr32_ok
 * are those cases, for loops that have checked the room once; without
 * SSE2 they are byte checks.
 */
__attribute__((always_inline)) static inline int bulki_cstr16_ok(const uint8_t *s, size_t n)
{
#if defined(__SSE2__)
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
    uint32_t m = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_setzero_si128()));
    return (unsigned)__builtin_ctz(m | 1u << 16) == (unsigned)(n - 1);
#else
    return s[n - 1] == 0 && !bulki_has_nul(s, n - 1);
#endif
}

__attribute__((always_inline)) static inline int bulki_cstr32_ok(const uint8_t *s, size_t n)
{
#if defined(__SSE2__)
    __m128i z = _mm_setzero_si128();
    __m128i v0 = _mm_loadu_si128((const __m128i *)(const void *)s);
    __m128i v1 = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
    uint64_t m = (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v0, z)) |
                 (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v1, z)) << 16;
    return (unsigned)__builtin_ctzll(m | 1ull << 32) == (unsigned)(n - 1);
#else
    return s[n - 1] == 0 && !bulki_has_nul(s, n - 1);
#endif
}

/* avail >= n bytes are readable from s. */
__attribute__((always_inline)) static inline int bulki_cstr_ok(const uint8_t *s, size_t n,
                                                              size_t avail)
{
#if defined(__SSE2__)
    if (n <= 16 && avail >= 16)
        return bulki_cstr16_ok(s, n);
    if (n <= 32 && avail >= 32)
        return bulki_cstr32_ok(s, n);
#endif
    (void)avail;
    return s[n - 1] == 0 && !bulki_has_nul(s, n - 1);
}

static inline int bulki_host_is_le(void)
{
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
    return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
#else
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
#endif
}

/* The first four bytes at p, little-endian (p[0] in the low byte). */
static inline uint32_t bulki_load_le32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    if (!bulki_host_is_le())
        v = __builtin_bswap32(v);
    return v;
}


/* Copy one element of `width` bytes between host order and little-endian
 * (the conversion is its own inverse). */
static inline void bulki_copy_le(uint8_t *dst, const uint8_t *src, size_t width)
{
    if (bulki_host_is_le()) {
        memcpy(dst, src, width);
    } else {
        for (size_t i = 0; i < width; i++)
            dst[i] = src[width - 1 - i];
    }
}

/* Load an unsigned little-endian integer of 1, 2, 4 or 8 bytes. */
static inline uint64_t bulki_load_le(const uint8_t *p, size_t width)
{
    if (bulki_host_is_le()) {
        uint64_t v8;
        uint32_t v4;
        uint16_t v2;
        switch (width) {
        case 8:
            memcpy(&v8, p, 8);
            return v8;
        case 4:
            memcpy(&v4, p, 4);
            return v4;
        case 2:
            memcpy(&v2, p, 2);
            return v2;
        case 1:
            return p[0];
        default:
            break;
        }
    }
    uint64_t v = 0;
    for (size_t i = 0; i < width; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* a + b into *sum; 0 on success, -1 on overflow. */
static inline int bulki_add(uint64_t *sum, uint64_t a, uint64_t b)
{
    if (b > UINT64_MAX - a)
        return -1;
    *sum = a + b;
    return 0;
}

#endif /* PDC_CKPT_BULKI_INT_H */
