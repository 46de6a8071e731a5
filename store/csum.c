/*
 * csum.c - CRC-32C for format 4's record checksums (csum.h).
 *
 * CRC-32C rather than a hash such as XXH3: a CRC detects every single-bit
 * error and every burst of up to 32 bits by its algebra, not with a
 * probability (and CRC-32C every error of up to 3 bits in records far
 * longer than any of the store's); SSE4.2 computes it at 8 bytes an
 * instruction, and it needs no library. Other damage goes undetected
 * with probability 2^-32.
 */
#include <stdlib.h>
#include <string.h>

#include "csum.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CKPT_CRC_HW 1
#include <nmmintrin.h>
#endif

static uint32_t crc_table[8][256];

static void table_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
}

/* slicing by 8 */
static uint32_t crc_sw(uint32_t c, const uint8_t *p, size_t n)
{
    while (n >= 8) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + 4, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        lo = __builtin_bswap32(lo);
        hi = __builtin_bswap32(hi);
#endif
        lo ^= c;
        c = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
            crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xff] ^
            crc_table[2][(hi >> 8) & 0xff] ^ crc_table[1][(hi >> 16) & 0xff] ^
            crc_table[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--)
        c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xff];
    return c;
}

#ifdef CKPT_CRC_HW
/* 8 bytes an instruction, then at most three for the 1 to 7 left */
__attribute__((target("sse4.2"))) static inline uint32_t crc_hw(uint32_t c, const uint8_t *p,
                                                                size_t n)
{
    uint64_t c64 = c;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c64 = _mm_crc32_u64(c64, w);
    }
    c = (uint32_t)c64;
    if (n & 4) {
        uint32_t w;
        memcpy(&w, p, 4);
        c = _mm_crc32_u32(c, w);
        p += 4;
    }
    if (n & 2) {
        uint16_t w;
        memcpy(&w, p, 2);
        c = _mm_crc32_u16(c, w);
        p += 2;
    }
    if (n & 1)
        c = _mm_crc32_u8(c, *p);
    return c;
}

/* ckpt_rec_csum in one function: the record checksum is most of what a
 * read of a small record costs beyond LMDB's own work (a rebuild checks
 * every record). The key's length, 2 bytes big-endian, is one crc32 of
 * 16 bits, which takes its low byte first. */
__attribute__((target("sse4.2"))) static uint32_t rec_csum_hw(const uint8_t *key, size_t klen,
                                                             const uint8_t *val, size_t vlen)
{
    uint32_t c = _mm_crc32_u16(~0u, (uint16_t)((klen >> 8 & 0xff) | (klen & 0xff) << 8));
    if (key + klen == val) /* LMDB keeps a node's value right after its key */
        return ~crc_hw(c, key, klen + vlen);
    return ~crc_hw(crc_hw(c, key, klen), val, vlen);
}
#endif

/* 0 unknown, 1 hardware, 2 table */
static int crc_kind;

static int kind(void)
{
    int k = __atomic_load_n(&crc_kind, __ATOMIC_ACQUIRE);
    if (k != 0)
        return k;
#ifdef CKPT_CRC_HW
    __builtin_cpu_init();
    k = __builtin_cpu_supports("sse4.2") ? 1 : 2;
#else
    k = 2;
#endif
    if (k == 2)
        table_init(); /* idempotent: racing threads write the same values */
    __atomic_store_n(&crc_kind, k, __ATOMIC_RELEASE);
    return k;
}

uint32_t ckpt_crc32c(uint32_t crc, const void *p, size_t n)
{
    uint32_t c = ~crc;
#ifdef CKPT_CRC_HW
    if (kind() == 1)
        return ~crc_hw(c, p, n);
#else
    (void)kind();
#endif
    return ~crc_sw(c, p, n);
}

/* ckpt_rec_csum without the crc32 instruction (or before the CPU's check) */
__attribute__((noinline)) static uint32_t rec_csum_other(const void *key, size_t klen,
                                                         const void *val, size_t vlen)
{
#ifdef CKPT_CRC_HW
    if (kind() == 1)
        return rec_csum_hw(key, klen, val, vlen);
#endif
    uint8_t kl[2] = {(uint8_t)(klen >> 8), (uint8_t)klen};
    uint32_t c = ckpt_crc32c(0, kl, 2);
    if ((const uint8_t *)key + klen == (const uint8_t *)val)
        return ckpt_crc32c(c, key, klen + vlen);
    c = ckpt_crc32c(c, key, klen);
    return ckpt_crc32c(c, val, vlen);
}

uint32_t ckpt_rec_csum(const void *key, size_t klen, const void *val, size_t vlen)
{
#ifdef CKPT_CRC_HW
    if (__atomic_load_n(&crc_kind, __ATOMIC_ACQUIRE) == 1)
        return rec_csum_hw(key, klen, val, vlen);
#endif
    return rec_csum_other(key, klen, val, vlen);
}

void ckpt_csum_seal(const void *key, size_t klen, void *val, size_t vlen)
{
    ckpt_le32_put((uint8_t *)val + vlen, ckpt_rec_csum(key, klen, val, vlen));
}

int ckpt_csum_check(const void *key, size_t klen, const void *val, size_t len, uint32_t *stored,
                    uint32_t *computed)
{
    if (len < CKPT_CSUM_LEN) {
        if (stored)
            *stored = 0;
        if (computed)
            *computed = 0;
        return -1;
    }
    uint32_t s = ckpt_le32_get((const uint8_t *)val + len - CKPT_CSUM_LEN);
    uint32_t c = ckpt_rec_csum(key, klen, val, len - CKPT_CSUM_LEN);
    if (stored)
        *stored = s;
    if (computed)
        *computed = c;
    return s == c ? 0 : -1;
}

int ckpt_csum_enabled(void)
{
    const char *s = getenv("PDC_CKPT_CHECKSUMS");
    return !(s != NULL && (strcmp(s, "0") == 0 || strcmp(s, "off") == 0 || strcmp(s, "no") == 0));
}
