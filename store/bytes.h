/*
 * bytes.h - integers in byte buffers, and FNV-1a: the one set the store's
 * files use. Each format says its byte order:
 *   le: little-endian (the pending file, pending.c);
 *   ne: this machine's order (synced.rec and LMDB's meta pages, durable.c:
 *       a store is read on the machine kind that wrote it, as LMDB's file);
 *   be: big-endian (keys sort as numbers: keys.c; the delta's chunk
 *       headers, tagidx.c).
 */
#ifndef PDC_CKPT_BYTES_H
#define PDC_CKPT_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void ckpt_le32_put(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void ckpt_le64_put(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t ckpt_le32_get(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t ckpt_le64_get(const uint8_t *p)
{
    return (uint64_t)ckpt_le32_get(p) | (uint64_t)ckpt_le32_get(p + 4) << 32;
}

static inline void ckpt_ne32_put(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static inline void ckpt_ne64_put(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

static inline uint32_t ckpt_ne32_get(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint64_t ckpt_ne64_get(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* The be64 pair written out byte by byte, not as loops: compilers then
 * make each one load or store and a byte swap (a key's number is read per
 * comparison in the commit's and the merge's sorts). */
static inline void ckpt_be64_put(uint8_t *p, uint64_t v)
{
    p[0] = (uint8_t)(v >> 56);
    p[1] = (uint8_t)(v >> 48);
    p[2] = (uint8_t)(v >> 40);
    p[3] = (uint8_t)(v >> 32);
    p[4] = (uint8_t)(v >> 24);
    p[5] = (uint8_t)(v >> 16);
    p[6] = (uint8_t)(v >> 8);
    p[7] = (uint8_t)v;
}

static inline uint32_t ckpt_be32_get(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t ckpt_be64_get(const uint8_t *p)
{
    return (uint64_t)ckpt_be32_get(p) << 32 | ckpt_be32_get(p + 4);
}

/* FNV-1a, 64 bits */
static inline uint64_t ckpt_fnv1a64(const void *data, size_t n)
{
    const uint8_t *p = data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

#endif
