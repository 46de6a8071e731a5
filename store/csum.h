/*
 * csum.h - format 4's record checksums (docs/STORE.md, "Record checksums").
 *
 * Every value of a checksummed store (format >= 4) ends with 4 bytes, the
 * CRC-32C (Castagnoli) of the key's length (2 bytes BE), the key and the
 * value before them, little-endian. The tag index kvtag_name (DUPFIXED
 * owner ids, no value) has none: reads check its entries against the kvtag
 * records it is derived from. The tag index's delta chunks carry one too.
 */
#ifndef PDC_CKPT_CSUM_H
#define PDC_CKPT_CSUM_H

#include <stddef.h>
#include <stdint.h>

#include "bytes.h"

#define CKPT_CSUM_LEN 4u
/* First format whose records carry checksums. */
#define CKPT_FORMAT_CSUM 4u

/* CRC-32C of p[0..n) continuing crc (0 to start): SSE4.2's crc32
 * instruction when the CPU has it, else a table. */
uint32_t ckpt_crc32c(uint32_t crc, const void *p, size_t n);
/* The checksum of a record key[0..klen) -> val[0..vlen) (vlen without the
 * checksum). */
uint32_t ckpt_rec_csum(const void *key, size_t klen, const void *val, size_t vlen);
/* Write the checksum of key -> val[0..vlen) at val + vlen. */
void ckpt_csum_seal(const void *key, size_t klen, void *val, size_t vlen);
/* Check a stored value val[0..len) (checksum included): 0 when it holds,
 * -1 when the value is shorter than a checksum or it does not match. The
 * stored and computed sums go to *stored and *computed (may be NULL). */
int ckpt_csum_check(const void *key, size_t klen, const void *val, size_t len, uint32_t *stored,
                    uint32_t *computed);
/* Whether a stored value val[0..len) holds its checksum (1) or not (0):
 * ckpt_csum_check inline, for the reads of every record. */
static inline int ckpt_csum_holds(const void *key, size_t klen, const void *val, size_t len)
{
    if (len < CKPT_CSUM_LEN)
        return 0;
    uint32_t s = ckpt_le32_get((const uint8_t *)val + len - CKPT_CSUM_LEN);
    return ckpt_rec_csum(key, klen, val, len - CKPT_CSUM_LEN) == s;
}
/* Whether new stores get checksums: not when PDC_CKPT_CHECKSUMS is "0" or
 * "off" (then they are created in format 3, as builds before format 4
 * did; for measuring what checksums cost). */
int ckpt_csum_enabled(void);

#endif
