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

/* ---- where PDC's DART puts an entry on a given number of servers ----
 * PDC 2e5de75a, src/commons/index/dart/dart_core.c with its defaults
 * (alphabet 27, replication factor 3, DART_MAX_SERVER_NUM_TO_ADAPT 8192):
 * the virtual nodes do not depend on the server count (27^4 of them, the
 * tree height coming from the 8192 servers DART adapts to), only their
 * mapping to servers does (get_server_id_by_vnode_id). An insert goes to
 * the 3 replicas of either the key's base virtual node or its alternative
 * one (the less loaded, get_reconciled_vnode_id_with_power_of_two_choice_
 * rehashing_2); searches and deletes ask the replicas of both. The
 * arithmetic below is PDC's, with its types (signed chars, int offsets
 * converted to uint64_t), so that it agrees with PDC for every key. */
enum { DART_ALPHA = 27, DART_REPL = 3, DART_ADAPT = 8192 };

static int dart_height(void)
{
    int h = 0;
    uint64_t p = 1;
    while (p < DART_ADAPT) { /* ceil(log_27(8192)) */
        p *= DART_ALPHA;
        h++;
    }
    return h + 1;
}

static uint64_t dart_nvnode(int height)
{
    uint64_t n = 1;
    for (int i = 0; i < height; i++)
        n *= DART_ALPHA;
    return n;
}

/* get_base_virtual_node_id_by_string */
static uint64_t dart_base_vnode(const char *str, int height, uint64_t nvnode)
{
    uint64_t rst = 0, i_t_n = 0, pw;
    int met_end = 0;
    for (int n = 1; n <= height; n++) {
        if (!met_end && str[n - 1] == '\0')
            met_end = 1;
        if (!met_end)
            i_t_n = ((uint64_t)str[n - 1]) % DART_ALPHA;
        pw = 1;
        for (int i = 0; i < height - n; i++)
            pw *= DART_ALPHA;
        rst += i_t_n * pw;
    }
    return rst % nvnode;
}

/* get_reconciled_vnode_id_with_power_of_two_choice_rehashing_2, without
 * the load callback: the alternative virtual node */
static uint64_t dart_alt_vnode(uint64_t base, const char *word, int height, uint64_t nvnode)
{
    int last = height - 1, post = 0, pre = 0;
    size_t len = strlen(word);
    if (height <= 1 || len == 0)
        return base;
    if (len <= (size_t)height) {
        last = (int)len - 1;
        pre = len <= 1 ? 0 : (int)word[last - 1] % DART_ALPHA;
    } else {
        post = (int)word[last + 1] % DART_ALPHA;
        pre = (int)word[last - 1] % DART_ALPHA;
    }
    int leaf = (int)word[last] % DART_ALPHA;
    int sum = leaf + pre + post, diff = abs(post - leaf - pre);
    int region_size = (int)(nvnode / DART_ALPHA), sub_region_size = region_size / DART_ALPHA;
    int major = (sum % DART_ALPHA) * sub_region_size, minor = diff;
    uint64_t region_offset = (base + (uint64_t)major - (uint64_t)minor) % (uint64_t)region_size;
    int ir_idx = DART_ALPHA / 2;
    uint64_t region_start = (uint64_t)((((int)word[0] + ir_idx) % DART_ALPHA) * region_size);
    return (base + region_start + region_offset) % nvnode;
}

/* get_server_id_by_vnode_id */
static int dart_server(uint64_t vnode, uint64_t nvnode, int nservers)
{
    int per = (int)(nvnode / (uint64_t)nservers);
    return (int)((vnode / (uint64_t)per) % (uint64_t)nservers);
}

int ckpt_pdc_dart_homes(const struct ckpt_dart_entry *e, int nservers, int homes[3])
{
    int height = dart_height(), n = 0;
    uint64_t nvnode = dart_nvnode(height), dist = nvnode / DART_ALPHA, master[2];
    if (e == NULL || e->key == NULL || homes == NULL || nservers < 1)
        return ckpt_error(CKPT_E_INVAL, "DART homes: entry, key and a server count are required");
    master[0] = dart_base_vnode(e->key, height, nvnode);
    master[1] = dart_alt_vnode(master[0], e->key, height, nvnode);
    for (int m = 0; m < 2 && n == 0; m++) {
        int at = 0;
        for (int r = 0; r < DART_REPL; r++)
            at |= (master[m] + (uint64_t)r * dist) % nvnode == e->vnode_id;
        if (!at)
            continue;
        for (int r = 0; r < DART_REPL; r++) {
            int s = dart_server((master[m] + (uint64_t)r * dist) % nvnode, nvnode, nservers), seen = 0;
            for (int j = 0; j < n; j++)
                seen |= homes[j] == s;
            if (!seen)
                homes[n++] = s;
        }
    }
    if (n == 0)
        return ckpt_error(CKPT_E_MISMATCH, "DART entry of key [%s] at virtual node %u, which is no "
                          "replica of the key's base (%" PRIu64 ") or alternative (%" PRIu64 ") "
                          "virtual node in PDC's DART: its server on another count is unknown",
                          e->key, e->vnode_id, master[0], master[1]);
    return n;
}
