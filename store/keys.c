/*
 * keys.c - key encodings of the store (docs/STORE.md, "Keys").
 *
 * Ids are 8 bytes big-endian, so ascending ids sort (and append) in order.
 * A time step is 4 bytes big-endian with the sign bit flipped, so negative
 * steps sort first. A name key is the name and a NUL when the name has at
 * most CKPT_NAME_INLINE_MAX bytes; a longer name becomes its first
 * CKPT_NAME_INLINE_MAX bytes, a 0x01 byte and the big-endian FNV-1a-64 hash
 * of the whole name. Both forms are prefix-free (names hold no NUL, and the
 * byte at position CKPT_NAME_INLINE_MAX tells them apart), so "every entry
 * of name N" is one contiguous key range, and every key stays under LMDB's
 * 511-byte limit.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bytes.h"
#include "store_int.h"

static const char *const db_names[CKPT_DB_COUNT] = {
    "meta", "obj", "obj_name", "kvtag", "kvtag_name", "cont", "cont_name", "cont_obj", "region",
    "id_home", "pdc_server", "obj_keys", "cont_keys",
};

const char *ckpt_db_name(int db)
{
    return db >= 0 && db < CKPT_DB_COUNT ? db_names[db] : NULL;
}

int ckpt_db_by_name(const char *name)
{
    for (int i = 0; i < CKPT_DB_COUNT; i++)
        if (name && strcmp(db_names[i], name) == 0)
            return i;
    return -1;
}

void ckpt_key_u64(uint8_t out[8], uint64_t v)
{
    ckpt_be64_put(out, v);
}

uint64_t ckpt_key_get_u64(const uint8_t in[8])
{
    return ckpt_be64_get(in);
}

void ckpt_key_i32(uint8_t out[4], int32_t v)
{
    uint32_t u = (uint32_t)v ^ 0x80000000u;
    out[0] = (uint8_t)(u >> 24);
    out[1] = (uint8_t)(u >> 16);
    out[2] = (uint8_t)(u >> 8);
    out[3] = (uint8_t)u;
}

int32_t ckpt_key_get_i32(const uint8_t in[4])
{
    uint32_t u = ((uint32_t)in[0] << 24) | ((uint32_t)in[1] << 16) | ((uint32_t)in[2] << 8) | in[3];
    u ^= 0x80000000u;
    int32_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

size_t ckpt_key_name(uint8_t *out, const char *name, size_t len)
{
    if (name == NULL || len > CKPT_NAME_MAX || memchr(name, 0, len) != NULL)
        return 0;
    if (len <= CKPT_NAME_INLINE_MAX) {
        memcpy(out, name, len);
        out[len] = 0;
        return len + 1;
    }
    memcpy(out, name, CKPT_NAME_INLINE_MAX);
    out[CKPT_NAME_INLINE_MAX] = 1;
    ckpt_key_u64(out + CKPT_NAME_INLINE_MAX + 1, ckpt_fnv1a64(name, len));
    return CKPT_NAMEKEY_MAX;
}

size_t ckpt_key_name_len(const uint8_t *key, size_t klen, int *is_hashed)
{
    size_t lim = klen < CKPT_NAME_INLINE_MAX + 1 ? klen : CKPT_NAME_INLINE_MAX + 1;
    const uint8_t *nul = memchr(key, 0, lim);
    if (nul != NULL) {
        *is_hashed = 0;
        return (size_t)(nul - key) + 1;
    }
    if (klen >= CKPT_NAMEKEY_MAX && key[CKPT_NAME_INLINE_MAX] == 1) {
        *is_hashed = 1;
        return CKPT_NAMEKEY_MAX;
    }
    return 0;
}

size_t ckpt_key_region(uint8_t *out, uint32_t ndim, const uint64_t *start, const uint64_t *count)
{
    size_t n = 0;
    if (ndim > CKPT_REGION_MAXDIM)
        return 0;
    out[n++] = (uint8_t)ndim;
    for (uint32_t i = 0; i < ndim; i++, n += 8)
        ckpt_key_u64(out + n, start[i]);
    for (uint32_t i = 0; i < ndim; i++, n += 8)
        ckpt_key_u64(out + n, count[i]);
    return n;
}

uint64_t ckpt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t ckpt_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t ckpt_mono_coarse_ms(void)
{
#ifdef CLOCK_MONOTONIC_COARSE
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) == 0)
        return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
#endif
    return ckpt_mono_ms();
}

/* "000000003b9aca017461673000 ("....;...tag0.")": the hex of up to 32
 * bytes of a key (ids are its first 16 digits) and their text. */
void ckpt_key_text(char *out, size_t n, const void *key, size_t klen)
{
    const uint8_t *k = key;
    size_t shown = klen < 32 ? klen : 32, o = 0;
    for (size_t i = 0; i < shown && o + 4 < n; i++)
        o += (size_t)snprintf(out + o, n - o, "%02x", k[i]);
    if (shown < klen && o + 8 < n)
        o += (size_t)snprintf(out + o, n - o, " ...(%zu bytes)", klen);
    if (o + 4 < n) {
        out[o++] = ' ';
        out[o++] = '(';
        out[o++] = '"';
        for (size_t i = 0; i < shown && o + 3 < n; i++)
            out[o++] = k[i] >= 0x20 && k[i] < 0x7f && k[i] != '"' ? (char)k[i] : '.';
        out[o++] = '"';
        out[o++] = ')';
    }
    out[o < n ? o : n - 1] = 0;
}

int ckpt_stored_keys(const ckpt_store *st, struct ckpt_rec_keys *k, int db, const void *rec,
                     size_t len)
{
    memset(k, 0, sizeof *k);
    if (st->opts.rec_keys == NULL)
        return CKPT_E_INVAL;
    return st->opts.rec_keys(k, db, rec, len);
}

size_t ckpt_keys_encode(uint8_t *out, int is_obj, const struct ckpt_rec_keys *k)
{
    size_t o = 0;
    if (is_obj) {
        ckpt_key_i32(out, k->ts);
        ckpt_key_u64(out + 4, k->cont_id);
        o = CKPT_OBJ_KEYS_FIXED;
    }
    if (k->nlen)
        memcpy(out + o, k->name, k->nlen);
    return o + k->nlen;
}

int ckpt_keys_decode(struct ckpt_rec_keys *k, int db, const void *val, size_t len)
{
    const uint8_t *v = val;
    memset(k, 0, sizeof *k);
    if (db != CKPT_DB_OBJ_KEYS && db != CKPT_DB_CONT_KEYS)
        return -1;
    if (db == CKPT_DB_OBJ_KEYS) {
        if (len < CKPT_OBJ_KEYS_FIXED)
            return -1;
        k->ts = ckpt_key_get_i32(v);
        k->cont_id = ckpt_key_get_u64(v + 4);
        v += CKPT_OBJ_KEYS_FIXED;
        len -= CKPT_OBJ_KEYS_FIXED;
    }
    k->name = (const char *)v;
    k->nlen = len;
    return 0;
}

size_t ckpt_keys_index_key(uint8_t *out, int is_obj, const struct ckpt_rec_keys *k)
{
    size_t n;
    if (k->name == NULL || (n = ckpt_key_name(out, k->name, k->nlen)) == 0)
        return 0;
    if (is_obj) {
        ckpt_key_i32(out + n, k->ts);
        n += 4;
    }
    return n;
}
