/*
 * bulki_rctx.h - the reader's cursor over a buffer and its varint reads,
 * shared by the parsers (bulki_read.c) and the walkers and getters over
 * validated views (bulki_view.c). Private to codec/.
 */
#ifndef PDC_CKPT_BULKI_RCTX_H
#define PDC_CKPT_BULKI_RCTX_H

#include "bulki_int.h"

struct rctx {
    const uint8_t *base;
    size_t len;
    size_t err_off;
};

static inline int fail_at(struct rctx *c, size_t off, int err)
{
    c->err_off = off;
    return err;
}

static inline int get_varint_slow(struct rctx *c, size_t *pos, uint64_t *v)
{
    int n = bulki_varint_get(v, c->base + *pos, c->len - *pos);
    if (n == 0)
        return fail_at(c, *pos, BULKI_E_TRUNCATED);
    if (n < 0)
        return fail_at(c, *pos, BULKI_E_VARINT);
    *pos += (size_t)n;
    return 0;
}

/* Most varints in a record (sizes, counts) are one byte: take those
 * without the loop. */
static inline int get_varint(struct rctx *c, size_t *pos, uint64_t *v)
{
    size_t p = *pos;
    if (p < c->len && c->base[p] < 0x80) {
        *v = c->base[p];
        *pos = p + 1;
        return 0;
    }
    /* two bytes: record sizes of 128 bytes to 16 KiB */
    if (p < c->len && c->len - p >= 2 && c->base[p + 1] < 0x80) {
        *v = (uint64_t)(c->base[p] & 0x7f) | (uint64_t)c->base[p + 1] << 7;
        *pos = p + 2;
        return 0;
    }
    return get_varint_slow(c, pos, v);
}

/* bulki_read.c's parse_value: validate the entity at pos into *out. */
int bulki_parse_value_(struct rctx *c, size_t pos, int depth, bulki_ent *out);

#endif
