/*
 * meta.c - the store's own meta record (one BULKI under key "meta" in
 * database "meta"), the only record the store encodes or decodes: every
 * other record is the caller's, opaque to the store (its index keys come
 * with each put, or from ckpt_store_opts.rec_keys). Readers skip fields
 * they do not know, so later format versions can add fields without
 * breaking older readers of the same version number.
 */
#include <string.h>

#include "bulki.h"
#include "store_int.h"

int ckpt_meta_encode(size_t *len, uint8_t *buf, size_t cap, const struct ckpt_store_info *m)
{
    const char *magic = CKPT_FORMAT_MAGIC;
    uint8_t clean = m->clean ? 1 : 0;
    int32_t origin = m->origin_nranks > 0 ? m->origin_nranks : m->nranks;
    const bulki_pair pairs[] = {
        {BULKI_V_STRN("magic", 5), BULKI_V_STRN(magic, strlen(magic))},
        {BULKI_V_STRN("format_version", 14), BULKI_V_ITEM(BULKI_T_UINT32, &m->format_version)},
        {BULKI_V_STRN("rank", 4), BULKI_V_ITEM(BULKI_T_INT32, &m->rank)},
        {BULKI_V_STRN("nranks", 6), BULKI_V_ITEM(BULKI_T_INT32, &m->nranks)},
        {BULKI_V_STRN("id_seq", 6), BULKI_V_ITEM(BULKI_T_UINT64, &m->id_seq)},
        {BULKI_V_STRN("generation", 10), BULKI_V_ITEM(BULKI_T_UINT64, &m->generation)},
        {BULKI_V_STRN("clean", 5), BULKI_V_ITEM(BULKI_T_BOOLEAN, &clean)},
        {BULKI_V_STRN("created_ms", 10), BULKI_V_ITEM(BULKI_T_INT64, &m->created_ms)},
        {BULKI_V_STRN("last_commit_ms", 14), BULKI_V_ITEM(BULKI_T_INT64, &m->last_commit_ms)},
        {BULKI_V_STRN("mutations", 9), BULKI_V_ITEM(BULKI_T_UINT64, &m->mutations)},
        {BULKI_V_STRN("commits", 7), BULKI_V_ITEM(BULKI_T_UINT64, &m->commits)},
        {BULKI_V_STRN("origin_nranks", 13), BULKI_V_ITEM(BULKI_T_INT32, &origin)},
    };
    const bulki_doc doc = {sizeof pairs / sizeof pairs[0], pairs};
    return bulki_encode_doc(len, buf, cap, &doc);
}

static int get_u64(const bulki_map *m, const char *k, uint64_t *v)
{
    bulki_ent e;
    int rc = bulki_map_get(&e, m, k);
    return rc ? rc : bulki_ent_u64(v, &e);
}

static int get_i64(const bulki_map *m, const char *k, int64_t *v)
{
    bulki_ent e;
    int rc = bulki_map_get(&e, m, k);
    return rc ? rc : bulki_ent_i64(v, &e);
}

/* Returns 0, CKPT_E_NOTSTORE (no/other magic), or CKPT_E_RECORD (a field
 * is missing or mistyped; *err_off tells where when known). The version is
 * read first so that a newer store is recognised even if its other fields
 * changed. */
int ckpt_meta_decode(struct ckpt_store_info *m, const void *buf, size_t len, size_t *err_off)
{
    bulki_map map;
    bulki_ent e;
    const char *s;
    size_t slen;
    uint64_t u;
    int64_t i;

    memset(m, 0, sizeof *m);
    *err_off = 0;
    if (bulki_decode_doc(&map, buf, len, err_off) != 0)
        return CKPT_E_RECORD;
    if (bulki_map_get(&e, &map, "magic") != 0 || bulki_ent_str(&s, &slen, &e) != 0 ||
        slen != strlen(CKPT_FORMAT_MAGIC) || memcmp(s, CKPT_FORMAT_MAGIC, slen) != 0)
        return CKPT_E_NOTSTORE;
    if (get_u64(&map, "format_version", &u) != 0 || u > UINT32_MAX)
        return CKPT_E_RECORD;
    m->format_version = (uint32_t)u;
    if (m->format_version < 1 || m->format_version > CKPT_FORMAT_VERSION)
        return 0; /* the caller refuses it; its fields may differ */
    /* formats 1 and 2 share this record */
    if (get_i64(&map, "rank", &i) != 0 || i < 0 || i > INT32_MAX)
        return CKPT_E_RECORD;
    m->rank = (int32_t)i;
    if (get_i64(&map, "nranks", &i) != 0 || i < 1 || i > INT32_MAX || i <= m->rank)
        return CKPT_E_RECORD;
    m->nranks = (int32_t)i;
    if (get_u64(&map, "id_seq", &m->id_seq) != 0 || get_u64(&map, "generation", &m->generation) != 0 ||
        get_u64(&map, "mutations", &m->mutations) != 0 || get_u64(&map, "commits", &m->commits) != 0)
        return CKPT_E_RECORD;
    if (get_u64(&map, "clean", &u) != 0)
        return CKPT_E_RECORD;
    m->clean = u != 0;
    if (get_i64(&map, "created_ms", &m->created_ms) != 0 ||
        get_i64(&map, "last_commit_ms", &m->last_commit_ms) != 0)
        return CKPT_E_RECORD;
    /* added later in version 1: absent in older stores, which were never
     * re-homed with it, so their origin is their rank count */
    m->origin_nranks = m->nranks;
    if (bulki_map_get(&e, &map, "origin_nranks") == 0) {
        if (bulki_ent_i64(&i, &e) != 0 || i < 1 || i > INT32_MAX)
            return CKPT_E_RECORD;
        m->origin_nranks = (int32_t)i;
    }
    return 0;
}
