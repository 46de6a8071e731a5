/*
 * pdc_tables.c - a PDC server's own tables in the store (database
 * pdc_server, docs/STORE.md "pdc_server"): its data-server and
 * transfer-request region tables, same-name objects, name aliases after a
 * re-homing by id, and its DART (IDIOMS) index entries. The hooks and
 * readers of the rest of the schema are in hooks.c.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bulki.h"
#include "ckpt_hooks.h"
#include "hooks_int.h"

/* ---- a PDC server's own region tables (database pdc_server) ---- */

size_t ckpt_key_pdc_region(uint8_t *out, int tag, uint64_t obj_id, uint32_t ndim, const uint64_t *start,
                           const uint64_t *count)
{
    if (out == NULL || ndim == 0 || ndim > CKPT_MAX_DIM || start == NULL || count == NULL)
        return 0;
    out[0] = (uint8_t)tag;
    ckpt_key_u64(out + 1, obj_id);
    return 9 + ckpt_key_region(out + 9, ndim, start, count);
}

static int enc_xfer(uint8_t *b, size_t c, size_t *l, const void *a)
{
    return ckpt_rec_xfer_encode(l, b, c, a);
}

int ckpt_hook_data_region_put(ckpt_hooks *h, const struct ckpt_region *g)
{
    uint8_t stack[REC_STACK], *heap, key[9 + CKPT_REGIONKEY_MAX];
    size_t len, klen;
    int rc;
    if (h == NULL || g == NULL)
        return ckpt_error(CKPT_E_INVAL, "data region hook: handle and region are required");
    if ((klen = ckpt_key_pdc_region(key, CKPT_PDC_DATA_REGION, g->obj_id, g->ndim, g->start,
                                    g->count)) == 0)
        return ckpt_error(CKPT_E_INVAL, "data region of object %" PRIu64 ": ndim %u is not 1..%d",
                          g->obj_id, g->ndim, CKPT_MAX_DIM);
    if ((rc = hk_with_record("data region", hk_enc_region, g, &heap, stack, &len)) != 0)
        return rc;
    rc = ckpt_store_put_raw(h->st, CKPT_DB_PDC_SERVER, key, klen, heap ? heap : stack, len);
    free(heap);
    return rc;
}

int ckpt_hook_data_region_delete(ckpt_hooks *h, uint64_t obj_id, uint32_t ndim, const uint64_t *start,
                                 const uint64_t *count)
{
    uint8_t key[9 + CKPT_REGIONKEY_MAX];
    size_t klen;
    if (h == NULL)
        return CKPT_E_INVAL;
    if ((klen = ckpt_key_pdc_region(key, CKPT_PDC_DATA_REGION, obj_id, ndim, start, count)) == 0)
        return ckpt_error(CKPT_E_INVAL, "data region of object %" PRIu64 ": ndim %u is not 1..%d",
                          obj_id, ndim, CKPT_MAX_DIM);
    return ckpt_store_del_raw(h->st, CKPT_DB_PDC_SERVER, key, klen);
}

int ckpt_hook_xfer_region_put(ckpt_hooks *h, const struct ckpt_xfer_region *x)
{
    uint8_t stack[REC_STACK], *heap, key[9 + CKPT_REGIONKEY_MAX];
    size_t len, klen;
    int rc;
    if (h == NULL || x == NULL)
        return ckpt_error(CKPT_E_INVAL, "transfer region hook: handle and region are required");
    if ((klen = ckpt_key_pdc_region(key, CKPT_PDC_XFER_REGION, x->obj_id, x->ndim, x->start,
                                    x->count)) == 0)
        return ckpt_error(CKPT_E_INVAL, "transfer region of object %" PRIu64 ": ndim %u is not 1..%d",
                          x->obj_id, x->ndim, CKPT_MAX_DIM);
    if ((rc = hk_with_record("transfer region", enc_xfer, x, &heap, stack, &len)) != 0)
        return rc;
    rc = ckpt_store_put_raw(h->st, CKPT_DB_PDC_SERVER, key, klen, heap ? heap : stack, len);
    free(heap);
    return rc;
}

struct pdc_walk {
    ckpt_hooks *h;
    ckpt_region_cb region;
    ckpt_xfer_cb xfer;
    void *payload;
};

static int walk_data_region(const ckpt_val *k, const ckpt_val *v, void *p)
{
    struct pdc_walk *w = p;
    struct ckpt_region g;
    size_t off = 0;
    if (k->len <= 9 || ckpt_rec_region_decode(&g, v->data, v->len, &off) != 0)
        return hk_bad_record(w->h, CKPT_DB_PDC_SERVER, k->data, k->len, off);
    return w->region(&g, w->payload);
}

static int walk_xfer_region(const ckpt_val *k, const ckpt_val *v, void *p)
{
    struct pdc_walk *w = p;
    struct ckpt_xfer_region x;
    size_t off = 0;
    if (k->len <= 9 || ckpt_rec_xfer_decode(&x, v->data, v->len, &off) != 0)
        return hk_bad_record(w->h, CKPT_DB_PDC_SERVER, k->data, k->len, off);
    return w->xfer(&x, w->payload);
}

int ckpt_hooks_foreach_data_region(ckpt_hooks_read *r, ckpt_region_cb cb, void *payload)
{
    const uint8_t tag = CKPT_PDC_DATA_REGION;
    if (r == NULL || cb == NULL)
        return CKPT_E_INVAL;
    struct pdc_walk w = {r->h, cb, NULL, payload};
    return ckpt_iter(r->tx, CKPT_DB_PDC_SERVER, &tag, 1, walk_data_region, &w);
}

int ckpt_hooks_foreach_xfer_region(ckpt_hooks_read *r, ckpt_xfer_cb cb, void *payload)
{
    const uint8_t tag = CKPT_PDC_XFER_REGION;
    if (r == NULL || cb == NULL)
        return CKPT_E_INVAL;
    struct pdc_walk w = {r->h, NULL, cb, payload};
    return ckpt_iter(r->tx, CKPT_DB_PDC_SERVER, &tag, 1, walk_xfer_region, &w);
}

/* ---- same-name objects (pdc_server entries `n`) ---- */

size_t ckpt_key_pdc_same_name(uint8_t *out, const char *name, int32_t ts, uint64_t obj_id)
{
    size_t n;
    if (out == NULL || name == NULL || (n = ckpt_key_name(out + 1, name, strlen(name))) == 0)
        return 0;
    out[0] = CKPT_PDC_SAME_NAME;
    ckpt_key_i32(out + 1 + n, ts);
    ckpt_key_u64(out + 5 + n, obj_id);
    return 13 + n;
}

int ckpt_hook_same_name_put(ckpt_hooks *h, const char *name, int32_t ts, uint64_t obj_id)
{
    uint8_t key[13 + CKPT_NAMEKEY_MAX];
    size_t klen;
    if (h == NULL || name == NULL)
        return ckpt_error(CKPT_E_INVAL, "same-name hook: handle and name are required");
    if ((klen = ckpt_key_pdc_same_name(key, name, ts, obj_id)) == 0)
        return ckpt_error(CKPT_E_NAMETOOLONG, "same-name entry of object %" PRIu64
                          ": the name is longer than %u bytes or holds a NUL", obj_id, CKPT_NAME_MAX);
    return ckpt_store_put_raw(h->st, CKPT_DB_PDC_SERVER, key, klen, "", 0);
}

struct same_walk {
    ckpt_hooks *h;
    ckpt_id_cb cb;
    void *payload;
};

static int walk_same_name(const ckpt_val *k, const ckpt_val *v, void *p)
{
    struct same_walk *w = p;
    (void)v;
    if (k->len < 13)
        return hk_bad_record(w->h, CKPT_DB_PDC_SERVER, k->data, k->len, 0);
    return w->cb(ckpt_key_get_u64((const uint8_t *)k->data + k->len - 8), w->payload);
}

int ckpt_hooks_foreach_same_name(ckpt_hooks_read *r, const char *name, int32_t ts, ckpt_id_cb cb,
                                 void *payload)
{
    uint8_t key[13 + CKPT_NAMEKEY_MAX];
    size_t klen;
    if (r == NULL || name == NULL || cb == NULL)
        return CKPT_E_INVAL;
    if ((klen = ckpt_key_pdc_same_name(key, name, ts, 0)) == 0)
        return 0; /* a name the store cannot key has no entries */
    struct same_walk w = {r->h, cb, payload};
    /* the prefix: everything but the id */
    return ckpt_iter(r->tx, CKPT_DB_PDC_SERVER, key, klen - 8, walk_same_name, &w);
}

/* ---- name aliases (pdc_server entries `a` and `c`) ---- */

size_t ckpt_key_pdc_alias_obj(uint8_t *out, const char *name, int32_t ts, uint64_t obj_id)
{
    size_t n = ckpt_key_pdc_same_name(out, name, ts, obj_id);
    if (n)
        out[0] = CKPT_PDC_ALIAS_OBJ;
    return n;
}

size_t ckpt_key_pdc_alias_cont(uint8_t *out, const char *name, uint64_t cont_id)
{
    size_t n;
    if (out == NULL || name == NULL || (n = ckpt_key_name(out + 1, name, strlen(name))) == 0)
        return 0;
    out[0] = CKPT_PDC_ALIAS_CONT;
    ckpt_key_u64(out + 1 + n, cont_id);
    return 9 + n;
}

struct alias_walk {
    ckpt_hooks *h;
    ckpt_obj_cb obj;
    ckpt_cont_cb cont;
    void *payload;
};

static int walk_alias(const ckpt_val *k, const ckpt_val *v, void *p)
{
    struct alias_walk *w = p;
    size_t off = 0;
    if (w->obj) {
        struct ckpt_obj o;
        if (k->len < 13 || ckpt_rec_obj_decode(&o, v->data, v->len, &off) != 0)
            return hk_bad_record(w->h, CKPT_DB_PDC_SERVER, k->data, k->len, off);
        return w->obj(&o, w->payload);
    }
    struct ckpt_cont c;
    if (k->len < 9 || ckpt_rec_cont_decode(&c, v->data, v->len, &off) != 0)
        return hk_bad_record(w->h, CKPT_DB_PDC_SERVER, k->data, k->len, off);
    return w->cont(&c, w->payload);
}

int ckpt_hooks_foreach_obj_alias(ckpt_hooks_read *r, const char *name, int32_t ts, ckpt_obj_cb cb,
                                 void *payload)
{
    uint8_t key[13 + CKPT_NAMEKEY_MAX];
    size_t klen = 1;
    if (r == NULL || cb == NULL)
        return CKPT_E_INVAL;
    key[0] = CKPT_PDC_ALIAS_OBJ;
    if (name != NULL && (klen = ckpt_key_pdc_alias_obj(key, name, ts, 0)) == 0)
        return 0; /* a name the store cannot key has no entries */
    struct alias_walk w = {r->h, cb, NULL, payload};
    return ckpt_iter(r->tx, CKPT_DB_PDC_SERVER, key, name ? klen - 8 : 1, walk_alias, &w);
}

int ckpt_hooks_foreach_cont_alias(ckpt_hooks_read *r, const char *name, ckpt_cont_cb cb, void *payload)
{
    uint8_t key[9 + CKPT_NAMEKEY_MAX];
    size_t klen = 1;
    if (r == NULL || cb == NULL)
        return CKPT_E_INVAL;
    key[0] = CKPT_PDC_ALIAS_CONT;
    if (name != NULL && (klen = ckpt_key_pdc_alias_cont(key, name, 0)) == 0)
        return 0;
    struct alias_walk w = {r->h, NULL, cb, payload};
    return ckpt_iter(r->tx, CKPT_DB_PDC_SERVER, key, name ? klen - 8 : 1, walk_alias, &w);
}

/* ---- PDC's DART (IDIOMS) entries (pdc_server `i`) ---- */

size_t ckpt_key_pdc_dart(uint8_t *out, const struct ckpt_dart_entry *e)
{
    enum { HEAD = 2, TAIL = 8, HASHED_BODY = CKPT_PDC_DART_KEY_MAX - HEAD - 8 - TAIL };
    const uint8_t *val;
    size_t klen, vlen, body;
    if (out == NULL || e == NULL || e->key == NULL || (e->value_len > 0 && e->value == NULL))
        return 0;
    klen = strlen(e->key);
    val = e->value;
    vlen = e->value_len;
    if (e->string_value && vlen > 0) { /* as PDC's index keys it */
        const uint8_t *nul = memchr(val, 0, vlen);
        if (nul != NULL)
            vlen = (size_t)(nul - val);
        if (vlen >= 2 && val[0] == '"' && val[vlen - 1] == '"') {
            val++;
            vlen -= 2;
        }
    }
    body = klen + 1 + 4 + vlen;
    out[0] = CKPT_PDC_DART;
    out[1] = e->is_suffix ? 1 : 0;
    if (HEAD + body + TAIL <= CKPT_PDC_DART_KEY_MAX) {
        uint8_t *p = out + HEAD;
        memcpy(p, e->key, klen + 1);
        ckpt_key_i32(p + klen + 1, e->type);
        if (vlen > 0)
            memcpy(p + klen + 5, val, vlen);
        ckpt_key_u64(p + body, e->obj_ref);
        return HEAD + body + TAIL;
    }
    /* too long for a key: the first bytes of the body, then its hash */
    uint64_t hash = UINT64_C(14695981039346656037);
    uint8_t t[4];
    ckpt_key_i32(t, e->type);
    size_t n = 0;
    for (size_t i = 0; i < body; i++) {
        uint8_t c = i <= klen ? (uint8_t)e->key[i] : i < klen + 5 ? t[i - klen - 1] : val[i - klen - 5];
        hash = (hash ^ c) * UINT64_C(1099511628211);
        if (n < HASHED_BODY)
            out[HEAD + n++] = c;
    }
    out[1] |= 2;
    ckpt_key_u64(out + HEAD + n, hash);
    ckpt_key_u64(out + HEAD + n + 8, e->obj_ref);
    return HEAD + n + 16;
}

static int enc_dart(uint8_t *b, size_t c, size_t *l, const void *a)
{
    return ckpt_rec_dart_encode(l, b, c, a);
}

int ckpt_hook_dart_put(ckpt_hooks *h, const struct ckpt_dart_entry *e)
{
    uint8_t stack[REC_STACK], *heap, key[CKPT_PDC_DART_KEY_MAX];
    size_t len, klen;
    int rc;
    if (h == NULL || e == NULL || (klen = ckpt_key_pdc_dart(key, e)) == 0)
        return ckpt_error(CKPT_E_INVAL, "DART entry hook: handle, entry and key are required");
    if ((rc = hk_with_record("DART entry", enc_dart, e, &heap, stack, &len)) != 0)
        return rc;
    rc = ckpt_store_put_raw(h->st, CKPT_DB_PDC_SERVER, key, klen, heap ? heap : stack, len);
    free(heap);
    return rc;
}

int ckpt_hook_dart_delete(ckpt_hooks *h, const struct ckpt_dart_entry *e)
{
    uint8_t key[CKPT_PDC_DART_KEY_MAX];
    size_t klen;
    if (h == NULL || e == NULL || (klen = ckpt_key_pdc_dart(key, e)) == 0)
        return ckpt_error(CKPT_E_INVAL, "DART entry hook: handle, entry and key are required");
    return ckpt_store_del_raw(h->st, CKPT_DB_PDC_SERVER, key, klen);
}

struct dart_walk {
    ckpt_hooks *h;
    ckpt_dart_cb cb;
    void *payload;
};

static int walk_dart(const ckpt_val *k, const ckpt_val *v, void *p)
{
    struct dart_walk *w = p;
    struct ckpt_dart_entry e;
    size_t off = 0;
    if (k->len < 2 + 5 + 8 || ckpt_rec_dart_decode(&e, v->data, v->len, &off) != 0)
        return hk_bad_record(w->h, CKPT_DB_PDC_SERVER, k->data, k->len, off);
    return w->cb(&e, w->payload);
}

int ckpt_hooks_foreach_dart(ckpt_hooks_read *r, ckpt_dart_cb cb, void *payload)
{
    const uint8_t tag = CKPT_PDC_DART;
    if (r == NULL || cb == NULL)
        return CKPT_E_INVAL;
    struct dart_walk w = {r->h, cb, payload};
    return ckpt_iter(r->tx, CKPT_DB_PDC_SERVER, &tag, 1, walk_dart, &w);
}
