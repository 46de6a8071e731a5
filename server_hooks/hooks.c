/*
 * hooks.c - the hooks a PDC server calls. Each encodes one BULKI record
 * (records.c) on the caller's stack and stages it in the rank's store.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bulki.h"
#include "ckpt_hooks.h"
#include "hooks_int.h"

/* ---- options ---- */

static int env_uint(const char *var, unsigned *out)
{
    const char *s = getenv(var);
    char *end;
    if (s == NULL || *s == 0)
        return 0;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v > UINT_MAX)
        return ckpt_error(CKPT_E_INVAL, "%s=\"%s\": not a non-negative integer", var, s);
    *out = (unsigned)v;
    return 0;
}

int ckpt_hooks_opts_from_env(struct ckpt_hooks_opts *o, char *root_buf, size_t root_len)
{
    const char *dir = getenv("PDC_CKPT_DIR"), *tmp = getenv("PDC_TMPDIR"), *sync = getenv("PDC_CKPT_SYNC");
    const char *shared = getenv("PDC_CKPT_SHARED_DIR"), *guard = getenv("PDC_CKPT_POWERLOSS_GUARD");
    int rc;
    if (o == NULL || root_buf == NULL)
        return CKPT_E_INVAL;
    int n = dir && *dir ? snprintf(root_buf, root_len, "%s", dir)
                        : snprintf(root_buf, root_len, "%s/pdc-ckpt", tmp && *tmp ? tmp : "./pdc_tmp");
    if (n < 0 || (size_t)n >= root_len)
        return ckpt_error(CKPT_E_NAMETOOLONG, "store root from PDC_CKPT_DIR/PDC_TMPDIR is too long");
    o->store_root = root_buf;
    if (shared && *shared)
        o->shared_root = shared;
    if ((rc = env_uint("PDC_CKPT_COMMIT_EVERY", &o->commit_every)) != 0 ||
        (rc = env_uint("PDC_CKPT_COMMIT_MS", &o->commit_ms)) != 0 ||
        (rc = env_uint("PDC_CKPT_SYNC_MS", &o->sync_ms)) != 0 ||
        (rc = env_uint("PDC_CKPT_SYNC_KB", &o->sync_kb)) != 0 ||
        (rc = env_uint("PDC_CKPT_TAGIDX_MERGE", &o->tagidx_merge)) != 0)
        return rc;
    if (guard && *guard) {
        if (strcmp(guard, "on") != 0 && strcmp(guard, "off") != 0)
            return ckpt_error(CKPT_E_INVAL, "PDC_CKPT_POWERLOSS_GUARD=\"%s\": use on or off", guard);
        o->no_powerloss_guard = strcmp(guard, "off") == 0;
    }
    if (sync && *sync) {
        int m = ckpt_sync_mode_parse(sync);
        if (m < 0)
            return ckpt_error(CKPT_E_INVAL, "PDC_CKPT_SYNC=\"%s\": use sync, interval or close", sync);
        o->sync_mode = m;
    }
    return 0;
}

/* ---- open / close ---- */

/* create: start a fresh store if there is none (open); restarts never do:
 * a missing environment there is lost data, not a first start. */
int ckpt_hooks_opts_get(struct ckpt_hooks_opts *dst, const struct ckpt_hooks_opts *o)
{
    static const struct ckpt_hooks_opts def = CKPT_HOOKS_OPTS_INIT;
    *dst = def;
    if (o == NULL)
        return ckpt_error(CKPT_E_INVAL, "hooks options: NULL");
    if (o->size < CKPT_HOOKS_OPTS_SIZE_V1 || o->size > sizeof *dst)
        return ckpt_error(CKPT_E_INVAL, "hooks options: size field %zu is not the size of any "
                          "version of struct ckpt_hooks_opts (%zu..%zu bytes): initialize the "
                          "struct with CKPT_HOOKS_OPTS_INIT", o->size,
                          (size_t)CKPT_HOOKS_OPTS_SIZE_V1, sizeof *dst);
    memcpy(dst, o, o->size);
    dst->size = sizeof *dst;
    return 0;
}

static int open_store_ro(ckpt_hooks **out, const struct ckpt_hooks_opts *opts, int readonly,
                         int create)
{
    struct ckpt_store_opts so = CKPT_STORE_OPTS_INIT;
    struct ckpt_hooks_opts oc;
    const struct ckpt_hooks_opts *o = &oc;
    ckpt_hooks *h;
    int rc;
    if (out == NULL)
        return CKPT_E_INVAL;
    *out = NULL;
    if ((rc = ckpt_hooks_opts_get(&oc, opts)) != 0)
        return rc;
    so.root = o->store_root;
    so.rank = o->rank;
    so.nranks = o->nranks;
    so.commit_every = o->commit_every;
    so.commit_ms = o->commit_ms;
    so.sync_mode = o->sync_mode;
    so.sync_ms = o->sync_ms;
    so.sync_kb = o->sync_kb;
    so.tagidx_merge = o->tagidx_merge;
    so.no_powerloss_guard = o->no_powerloss_guard;
    so.map_size = o->map_size;
    so.rec_keys = ckpt_rec_keys;
    so.readonly = readonly;
    so.create = !readonly && create;
    if ((h = calloc(1, sizeof *h)) == NULL)
        return ckpt_error(CKPT_E_NOMEM, "out of memory");
    if (!readonly && o->shared_root) {
        h->local_root = strdup(o->store_root);
        h->shared_root = strdup(o->shared_root);
        if (h->local_root == NULL || h->shared_root == NULL)
            rc = ckpt_error(CKPT_E_NOMEM, "out of memory");
        else
            rc = ckpt_shared_restore(o->store_root, o->shared_root, o->rank);
        if (rc) {
            free(h->local_root);
            free(h->shared_root);
            free(h);
            return rc;
        }
    }
    if ((rc = ckpt_store_open(&h->st, &so)) != 0) {
        free(h->local_root);
        free(h->shared_root);
        free(h);
        return rc;
    }
    h->rank = o->rank;
    h->nranks = o->nranks;
    *out = h;
    return 0;
}

static int open_store(ckpt_hooks **out, const struct ckpt_hooks_opts *o)
{
    return open_store_ro(out, o, 0, 1);
}

static int open_restart(ckpt_hooks **out, const struct ckpt_hooks_opts *o)
{
    return open_store_ro(out, o, 0, 0);
}

int ckpt_hooks_open_readonly(ckpt_hooks **out, const struct ckpt_hooks_opts *o)
{
    return open_store_ro(out, o, 1, 0);
}

int ckpt_hooks_open(ckpt_hooks **out, const struct ckpt_hooks_opts *o)
{
    return open_store(out, o);
}

int ckpt_hooks_restart_map(ckpt_hooks **out, const struct ckpt_hooks_opts *o)
{
    /* Opening is all a map restart does: records are read in place. */
    return open_restart(out, o);
}

int ckpt_hooks_checkpoint(ckpt_hooks *h)
{
    if (h == NULL)
        return CKPT_E_INVAL;
    int rc = ckpt_store_checkpoint(h->st);
    if (rc == 0 && h->shared_root)
        rc = ckpt_shared_publish(h->st, h->shared_root, h->rank);
    return rc;
}

static void free_hooks(ckpt_hooks *h)
{
    free(h->local_root);
    free(h->shared_root);
    free(h);
}

int ckpt_hooks_close(ckpt_hooks *h)
{
    if (h == NULL)
        return 0;
    int rc = ckpt_store_close(h->st);
    if (rc)
        return rc;
    h->st = NULL;
    if (h->shared_root) {
        /* publish the closed (clean, synced) environment */
        ckpt_store *ro;
        if ((rc = ckpt_store_open_readonly(&ro, h->local_root, h->rank)) == 0) {
            rc = ckpt_shared_publish(ro, h->shared_root, h->rank);
            ckpt_store_close(ro);
        }
    }
    free_hooks(h);
    return rc;
}

void ckpt_hooks_discard(ckpt_hooks *h)
{
    if (h == NULL)
        return;
    ckpt_store_discard(h->st);
    free_hooks(h);
}

ckpt_store *ckpt_hooks_store(ckpt_hooks *h)
{
    return h ? h->st : NULL;
}

int ckpt_hook_new_id(uint64_t *id, ckpt_hooks *h)
{
    return h ? ckpt_store_next_id(id, h->st) : CKPT_E_INVAL;
}

/* ---- mutations ---- */

int hk_with_record(const char *what, enc_fn enc, const void *arg, uint8_t **heap, uint8_t *stack,
                   size_t *len)
{
    int rc = enc(stack, REC_STACK, len, arg);
    *heap = NULL;
    if (rc == CKPT_E_NOSPACE) {
        if ((rc = enc(NULL, 0, len, arg)) == 0) {
            if ((*heap = malloc(*len)) == NULL)
                return ckpt_error(CKPT_E_NOMEM, "%s record of %zu bytes: out of memory", what, *len);
            rc = enc(*heap, *len, len, arg);
        }
    }
    if (rc)
        return ckpt_error(rc, "%s record does not encode (missing name, or more than %d dims)",
                          what, CKPT_MAX_DIM);
    return 0;
}

static int enc_obj(uint8_t *b, size_t c, size_t *l, const void *a)
{
    return ckpt_rec_obj_encode(l, b, c, a);
}
static int enc_kvtag(uint8_t *b, size_t c, size_t *l, const void *a)
{
    return ckpt_rec_kvtag_encode(l, b, c, a);
}
static int enc_cont(uint8_t *b, size_t c, size_t *l, const void *a)
{
    return ckpt_rec_cont_encode(l, b, c, a);
}
int hk_enc_region(uint8_t *b, size_t c, size_t *l, const void *a)
{
    return ckpt_rec_region_encode(l, b, c, a);
}

static int obj_put(ckpt_hooks *h, const struct ckpt_obj *o)
{
    uint8_t stack[REC_STACK], *heap;
    size_t len;
    int rc;
    if (h == NULL || o == NULL || o->obj_name == NULL)
        return ckpt_error(CKPT_E_INVAL, "object hook: handle, object and name are required");
    if ((rc = hk_with_record("object", enc_obj, o, &heap, stack, &len)) != 0)
        return rc;
    rc = ckpt_store_put_obj(h->st, o->obj_id, o->obj_name, strlen(o->obj_name), o->time_step,
                            o->cont_id, heap ? heap : stack, len);
    free(heap);
    return rc;
}

int ckpt_hook_obj_create(ckpt_hooks *h, const struct ckpt_obj *obj)
{
    return obj_put(h, obj);
}

int ckpt_hook_obj_update(ckpt_hooks *h, const struct ckpt_obj *obj)
{
    return obj_put(h, obj);
}

int ckpt_hook_obj_delete(ckpt_hooks *h, uint64_t obj_id)
{
    return h ? ckpt_store_del_obj(h->st, obj_id) : CKPT_E_INVAL;
}

int ckpt_hook_kvtag_put(ckpt_hooks *h, uint64_t owner, const struct ckpt_kvtag *t)
{
    uint8_t stack[REC_STACK], *heap;
    size_t len;
    int rc;
    if (h == NULL || t == NULL || t->name == NULL)
        return ckpt_error(CKPT_E_INVAL, "kvtag hook: handle, tag and name are required");
    if ((rc = hk_with_record("kvtag", enc_kvtag, t, &heap, stack, &len)) != 0)
        return rc;
    rc = ckpt_store_put_kvtag(h->st, owner, t->name, strlen(t->name), heap ? heap : stack, len);
    free(heap);
    return rc;
}

int ckpt_hook_kvtag_delete(ckpt_hooks *h, uint64_t owner, const char *name)
{
    if (h == NULL || name == NULL)
        return ckpt_error(CKPT_E_INVAL, "kvtag delete: handle and name are required");
    return ckpt_store_del_kvtag(h->st, owner, name, strlen(name));
}

int ckpt_hook_cont_create(ckpt_hooks *h, const struct ckpt_cont *c)
{
    uint8_t stack[REC_STACK], *heap;
    size_t len;
    int rc;
    if (h == NULL || c == NULL || c->cont_name == NULL)
        return ckpt_error(CKPT_E_INVAL, "container hook: handle, container and name are required");
    if ((rc = hk_with_record("container", enc_cont, c, &heap, stack, &len)) != 0)
        return rc;
    rc = ckpt_store_put_cont(h->st, c->cont_id, c->cont_name, strlen(c->cont_name),
                             heap ? heap : stack, len);
    free(heap);
    return rc;
}

int ckpt_hook_cont_delete(ckpt_hooks *h, uint64_t cont_id)
{
    return h ? ckpt_store_del_cont(h->st, cont_id) : CKPT_E_INVAL;
}

int ckpt_hook_cont_add_objs(ckpt_hooks *h, uint64_t cont_id, const uint64_t *ids, size_t n)
{
    return h ? ckpt_store_cont_add(h->st, cont_id, ids, n) : CKPT_E_INVAL;
}

int ckpt_hook_cont_remove_objs(ckpt_hooks *h, uint64_t cont_id, const uint64_t *ids, size_t n)
{
    return h ? ckpt_store_cont_remove(h->st, cont_id, ids, n) : CKPT_E_INVAL;
}

int ckpt_hook_region_put(ckpt_hooks *h, const struct ckpt_region *g)
{
    uint8_t stack[REC_STACK], *heap;
    size_t len;
    int rc;
    if (h == NULL || g == NULL)
        return ckpt_error(CKPT_E_INVAL, "region hook: handle and region are required");
    if ((rc = hk_with_record("region", hk_enc_region, g, &heap, stack, &len)) != 0)
        return rc;
    rc = ckpt_store_put_region(h->st, g->obj_id, g->ndim, g->start, g->count, heap ? heap : stack,
                               len);
    free(heap);
    return rc;
}

int ckpt_hook_region_delete(ckpt_hooks *h, uint64_t obj_id, uint32_t ndim, const uint64_t *start,
                            const uint64_t *count)
{
    return h ? ckpt_store_del_region(h->st, obj_id, ndim, start, count) : CKPT_E_INVAL;
}

/* ---- map restart: lookups ---- */

int ckpt_hooks_read_begin(ckpt_hooks_read **out, ckpt_hooks *h)
{
    ckpt_hooks_read *r;
    int rc;
    if (out == NULL || h == NULL)
        return CKPT_E_INVAL;
    *out = NULL;
    if ((r = malloc(sizeof *r)) == NULL)
        return ckpt_error(CKPT_E_NOMEM, "out of memory");
    r->h = h;
    if ((rc = ckpt_rtxn_begin(&r->tx, h->st)) != 0) {
        free(r);
        return rc;
    }
    *out = r;
    return 0;
}

void ckpt_hooks_read_end(ckpt_hooks_read *r)
{
    if (r == NULL)
        return;
    ckpt_rtxn_end(r->tx);
    free(r);
}

/* Format a key as hex for error messages. */
static void hexkey(char *out, size_t n, const void *key, size_t klen)
{
    const uint8_t *k = key;
    size_t o = 0;
    for (size_t i = 0; i < klen && o + 3 < n; i++)
        o += (size_t)snprintf(out + o, n - o, "%02x", k[i]);
    if (n)
        out[o < n ? o : n - 1] = 0;
}

int hk_bad_record(ckpt_hooks *h, int db, const void *key, size_t klen, size_t off)
{
    char hex[80];
    hexkey(hex, sizeof hex, key, klen < 32 ? klen : 32);
    return ckpt_error(CKPT_E_RECORD, "%s/data.mdb: record in %s under key %s%s does not decode "
                      "(byte %zu)", ckpt_store_path(h->st), ckpt_db_name(db), hex,
                      klen > 32 ? "..." : "", off);
}

int ckpt_hooks_get_obj(struct ckpt_obj *o, ckpt_hooks_read *r, uint64_t id)
{
    ckpt_val v;
    size_t off = 0;
    uint8_t k[8];
    if (o == NULL || r == NULL)
        return CKPT_E_INVAL;
    int rc = ckpt_get_obj(&v, r->tx, id);
    if (rc)
        return rc;
    ckpt_key_u64(k, id);
    return ckpt_rec_obj_decode(o, v.data, v.len, &off) ? hk_bad_record(r->h, CKPT_DB_OBJ, k, 8, off) : 0;
}

int ckpt_hooks_get_obj_by_name(struct ckpt_obj *o, ckpt_hooks_read *r, const char *name, int32_t ts)
{
    ckpt_val v;
    uint64_t id;
    size_t off = 0;
    uint8_t k[8];
    if (o == NULL || r == NULL || name == NULL)
        return CKPT_E_INVAL;
    int rc = ckpt_get_obj_by_name(&id, &v, r->tx, name, strlen(name), ts);
    if (rc)
        return rc;
    ckpt_key_u64(k, id);
    return ckpt_rec_obj_decode(o, v.data, v.len, &off) ? hk_bad_record(r->h, CKPT_DB_OBJ, k, 8, off) : 0;
}

int ckpt_hooks_get_kvtag(struct ckpt_kvtag *t, ckpt_hooks_read *r, uint64_t owner, const char *name)
{
    ckpt_val v;
    size_t off = 0;
    uint8_t k[8];
    if (t == NULL || r == NULL || name == NULL)
        return CKPT_E_INVAL;
    int rc = ckpt_get_kvtag(&v, r->tx, owner, name, strlen(name));
    if (rc)
        return rc;
    ckpt_key_u64(k, owner);
    if (ckpt_rec_kvtag_decode(t, v.data, v.len, &off) != 0)
        return hk_bad_record(r->h, CKPT_DB_KVTAG, k, 8, off);
    if (t->name == NULL)
        t->name = name; /* a short name is the key's, and this is it */
    return 0;
}

int ckpt_hooks_get_cont(struct ckpt_cont *c, ckpt_hooks_read *r, uint64_t id)
{
    ckpt_val v;
    size_t off = 0;
    uint8_t k[8];
    if (c == NULL || r == NULL)
        return CKPT_E_INVAL;
    int rc = ckpt_get_cont(&v, r->tx, id);
    if (rc)
        return rc;
    ckpt_key_u64(k, id);
    return ckpt_rec_cont_decode(c, v.data, v.len, &off) ? hk_bad_record(r->h, CKPT_DB_CONT, k, 8, off) : 0;
}

int ckpt_hooks_get_cont_by_name(struct ckpt_cont *c, ckpt_hooks_read *r, const char *name)
{
    ckpt_val v;
    uint64_t id;
    size_t off = 0;
    uint8_t k[8];
    if (c == NULL || r == NULL || name == NULL)
        return CKPT_E_INVAL;
    int rc = ckpt_get_cont_by_name(&id, &v, r->tx, name, strlen(name));
    if (rc)
        return rc;
    ckpt_key_u64(k, id);
    return ckpt_rec_cont_decode(c, v.data, v.len, &off) ? hk_bad_record(r->h, CKPT_DB_CONT, k, 8, off) : 0;
}

/* Adapters from store iteration to typed callbacks. */
struct walk {
    ckpt_hooks *h;
    const struct ckpt_rebuild_cbs *cbs;
    ckpt_kvtag_cb kvtag;
    ckpt_member_cb member;
    ckpt_region_cb region;
    ckpt_id_cb id;
    void *payload;
    uint64_t count;
};

static int walk_kvtag(const ckpt_val *k, const ckpt_val *v, void *p)
{
    struct walk *w = p;
    struct ckpt_kvtag t;
    size_t off = 0;
    if (k->len <= 8 || ckpt_rec_kvtag_decode_entry(&t, k->data, k->len, v->data, v->len, &off) != 0)
        return hk_bad_record(w->h, CKPT_DB_KVTAG, k->data, k->len, off);
    w->count++;
    return w->kvtag ? w->kvtag(ckpt_key_get_u64(k->data), &t, w->payload) : 0;
}

static int walk_member(const ckpt_val *k, const ckpt_val *v, void *p)
{
    struct walk *w = p;
    (void)v;
    if (k->len != 16)
        return hk_bad_record(w->h, CKPT_DB_CONT_OBJ, k->data, k->len, 0);
    w->count++;
    const uint8_t *b = k->data;
    return w->member ? w->member(ckpt_key_get_u64(b), ckpt_key_get_u64(b + 8), w->payload) : 0;
}

static int walk_region(const ckpt_val *k, const ckpt_val *v, void *p)
{
    struct walk *w = p;
    struct ckpt_region g;
    size_t off = 0;
    if (k->len <= 8 || ckpt_rec_region_decode(&g, v->data, v->len, &off) != 0)
        return hk_bad_record(w->h, CKPT_DB_REGION, k->data, k->len, off);
    w->count++;
    return w->region ? w->region(&g, w->payload) : 0;
}

static int walk_tagged(const ckpt_val *k, const ckpt_val *v, void *p)
{
    struct walk *w = p;
    (void)v;
    if (k->len < 8)
        return hk_bad_record(w->h, CKPT_DB_TAG_INDEX, k->data, k->len, 0);
    w->count++;
    return w->id(ckpt_key_get_u64((const uint8_t *)k->data + k->len - 8), w->payload);
}

static int walk_id(const ckpt_val *k, struct walk *w, int db)
{
    if (k->len != 8)
        return hk_bad_record(w->h, db, k->data, k->len, 0);
    return w->id(ckpt_key_get_u64(k->data), w->payload);
}

static int walk_obj_id(const ckpt_val *k, const ckpt_val *v, void *p)
{
    (void)v;
    return walk_id(k, p, CKPT_DB_OBJ);
}

static int walk_cont_id(const ckpt_val *k, const ckpt_val *v, void *p)
{
    (void)v;
    return walk_id(k, p, CKPT_DB_CONT);
}

int ckpt_hooks_foreach_id(ckpt_hooks_read *r, int containers, ckpt_id_cb cb, void *payload)
{
    if (r == NULL || cb == NULL)
        return CKPT_E_INVAL;
    struct walk w = {r->h, NULL, NULL, NULL, NULL, cb, payload, 0};
    return containers ? ckpt_iter(r->tx, CKPT_DB_CONT, NULL, 0, walk_cont_id, &w)
                      : ckpt_iter(r->tx, CKPT_DB_OBJ, NULL, 0, walk_obj_id, &w);
}

static int walk_cont(const ckpt_val *k, const ckpt_val *v, void *p)
{
    struct walk *w = p;
    struct ckpt_cont c;
    size_t off = 0;
    if (ckpt_rec_cont_decode(&c, v->data, v->len, &off) != 0)
        return hk_bad_record(w->h, CKPT_DB_CONT, k->data, k->len, off);
    w->count++;
    return w->cbs->cont ? w->cbs->cont(&c, w->payload) : 0;
}

static int walk_obj(const ckpt_val *k, const ckpt_val *v, void *p)
{
    struct walk *w = p;
    struct ckpt_obj o;
    size_t off = 0;
    if (ckpt_rec_obj_decode(&o, v->data, v->len, &off) != 0)
        return hk_bad_record(w->h, CKPT_DB_OBJ, k->data, k->len, off);
    w->count++;
    return w->cbs->obj ? w->cbs->obj(&o, w->payload) : 0;
}

int ckpt_hooks_foreach_kvtag(ckpt_hooks_read *r, uint64_t owner, ckpt_kvtag_cb cb, void *payload)
{
    if (r == NULL)
        return CKPT_E_INVAL;
    struct walk w = {r->h, NULL, cb, NULL, NULL, NULL, payload, 0};
    return ckpt_iter_kvtags(r->tx, owner, walk_kvtag, &w);
}

int ckpt_hooks_foreach_member(ckpt_hooks_read *r, uint64_t cont, ckpt_member_cb cb, void *payload)
{
    if (r == NULL)
        return CKPT_E_INVAL;
    struct walk w = {r->h, NULL, NULL, cb, NULL, NULL, payload, 0};
    return ckpt_iter_members(r->tx, cont, walk_member, &w);
}

int ckpt_hooks_foreach_region(ckpt_hooks_read *r, uint64_t obj, ckpt_region_cb cb, void *payload)
{
    if (r == NULL)
        return CKPT_E_INVAL;
    struct walk w = {r->h, NULL, NULL, NULL, cb, NULL, payload, 0};
    return ckpt_iter_regions(r->tx, obj, walk_region, &w);
}

int ckpt_hooks_foreach_tagged(ckpt_hooks_read *r, const char *name, ckpt_id_cb cb, void *payload)
{
    if (r == NULL || name == NULL || cb == NULL)
        return CKPT_E_INVAL;
    struct walk w = {r->h, NULL, NULL, NULL, NULL, cb, payload, 0};
    return ckpt_iter_tagged(r->tx, name, strlen(name), walk_tagged, &w);
}

int ckpt_id_dir_rank(uint64_t id, int nranks)
{
    uint64_t natural = id / CKPT_ID_BASE;
    if (nranks < 1)
        return 0;
    return (int)((natural ? natural - 1 : 0) % (uint64_t)nranks);
}

int ckpt_hooks_id_home(int *home, ckpt_hooks_read *r, uint64_t id)
{
    ckpt_val v;
    uint8_t k[8];
    int rc;
    if (home == NULL || r == NULL)
        return CKPT_E_INVAL;
    if ((rc = ckpt_get_obj(&v, r->tx, id)) == 0 || (rc == CKPT_E_NOTFOUND &&
                                                    (rc = ckpt_get_cont(&v, r->tx, id)) == 0)) {
        *home = r->h->rank;
        return 0;
    }
    if (rc != CKPT_E_NOTFOUND)
        return rc;
    ckpt_key_u64(k, id);
    if ((rc = ckpt_get_raw(&v, r->tx, CKPT_DB_ID_HOME, k, 8)) != 0)
        return rc;
    if (v.len != 4)
        return hk_bad_record(r->h, CKPT_DB_ID_HOME, k, 8, 0);
    const uint8_t *b = v.data;
    *home = (int)(((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3]);
    return 0;
}

/* ---- rebuild restart ---- */

int ckpt_hooks_restart_rebuild(ckpt_hooks **out, const struct ckpt_hooks_opts *o,
                               const struct ckpt_rebuild_cbs *cbs, void *payload,
                               struct ckpt_rebuild_stats *stats)
{
    static const struct ckpt_rebuild_cbs none;
    ckpt_hooks *h;
    ckpt_rtxn *tx;
    int rc;
    if (out == NULL)
        return CKPT_E_INVAL;
    *out = NULL;
    if (cbs == NULL)
        cbs = &none;
    if ((rc = open_restart(&h, o)) != 0)
        return rc;
    if ((rc = ckpt_rtxn_begin(&tx, h->st)) != 0) {
        ckpt_hooks_discard(h);
        return rc;
    }
    struct walk w = {h, cbs, cbs->kvtag, cbs->member, cbs->region, NULL, payload, 0};
    struct ckpt_rebuild_stats s = {0, 0, 0, 0, 0};
    if ((rc = ckpt_iter(tx, CKPT_DB_CONT, NULL, 0, walk_cont, &w)) == 0) {
        s.conts = w.count;
        w.count = 0;
        rc = ckpt_iter(tx, CKPT_DB_OBJ, NULL, 0, walk_obj, &w);
    }
    if (rc == 0) {
        s.objs = w.count;
        w.count = 0;
        rc = ckpt_iter(tx, CKPT_DB_KVTAG, NULL, 0, walk_kvtag, &w);
    }
    if (rc == 0) {
        s.kvtags = w.count;
        w.count = 0;
        rc = ckpt_iter(tx, CKPT_DB_CONT_OBJ, NULL, 0, walk_member, &w);
    }
    if (rc == 0) {
        s.members = w.count;
        w.count = 0;
        rc = ckpt_iter(tx, CKPT_DB_REGION, NULL, 0, walk_region, &w);
        s.regions = w.count;
    }
    ckpt_rtxn_end(tx);
    if (stats)
        *stats = s;
    if (rc < 0) {
        ckpt_hooks_discard(h);
        return rc;
    }
    *out = h;
    return 0;
}
