/*
 * verify_checks.c - pass 2 of ckpt-inspect verify (verify.c): the check of
 * each entry of each database of a rank, in the rank's one read
 * transaction: records decode and agree with their keys, indexes and
 * record keys agree with the records both ways, references point at
 * existing records (across ranks through the ids of pass 1, or pass 3).
 */
#include <string.h>

#include "progress.h"
#include "verify.h"

/* ------------------------------------------------------------------ */
/* Phase 2: every database of a rank                                   */
/* ------------------------------------------------------------------ */


/* Pass 2: a record whose checksum fails (or a tag-index entry no kvtag
 * backs) is a problem of that record; the iteration goes on past it. */
void report_damage(int db, const ckpt_val *key, const char *what, void *arg)
{
    struct vctx *c = arg;
    c->v->damaged++;
    kproblem(c->v, c->r, db, key, "%s", what);
}

/* 1 if namekey(name) . suffix equals key[0..klen). */
static int same_name_key(const char *name, const void *suffix, size_t slen, const void *key,
                         size_t klen)
{
    uint8_t nk[CKPT_NAMEKEY_MAX + 8];
    size_t n = ckpt_key_name(nk, name, strlen(name));
    if (n == 0 || n + slen != klen)
        return 0;
    if (slen)
        memcpy(nk + n, suffix, slen);
    return memcmp(nk, key, klen) == 0;
}

static int bad_key(struct vctx *c, const ckpt_val *k, struct dkey *d)
{
    if (key_decode(d, c->db, k->data, k->len) == 0)
        return 0;
    kproblem(c->v, c->r, c->db, k, "malformed %s key of %zu bytes", ckpt_db_name(c->db), k->len);
    return 1;
}

static void bad_record(struct vctx *c, const ckpt_val *k, const ckpt_val *val)
{
    char err[320];
    record_error(err, sizeof err, c->db, val->data, val->len);
    kproblem(c->v, c->r, c->db, k, "%s", err);
}

static int check_meta(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct vctx *c = p;
    (void)val;
    if (k->len != 4 || memcmp(k->data, "meta", 4) != 0)
        kproblem(c->v, c->r, c->db, k, "unexpected key in the meta database");
    return 0;
}

/* Format 5: the keys obj_keys/cont_keys hold for a record are the ones it
 * carries (the store finds its index entries by them). */
static void check_rec_keys(struct vctx *c, const ckpt_val *k, int is_obj, const char *name,
                           int32_t ts, uint64_t cont_id, const char *nt)
{
    const int kdb = is_obj ? CKPT_DB_OBJ_KEYS : CKPT_DB_CONT_KEYS;
    struct ckpt_rec_keys rk;
    ckpt_val kv;
    int rc = ckpt_get_raw(&kv, c->r->tx, kdb, k->data, k->len);
    if (rc == CKPT_E_NOTFOUND) {
        kproblem(c->v, c->r, c->db, k, "no %s entry", ckpt_db_name(kdb));
    } else if (rc != 0) {
        kproblem(c->v, c->r, c->db, k, "cannot read its %s entry: %s", ckpt_db_name(kdb),
                 store_msg(rc));
    } else if (ckpt_keys_decode(&rk, kdb, kv.data, kv.len) != 0) {
        return; /* reported under obj_keys */
    } else if (rk.nlen != strlen(name) || memcmp(rk.name, name, rk.nlen) != 0 || rk.ts != ts ||
               rk.cont_id != cont_id) {
        char kt[128];
        name_text(kt, sizeof kt, rk.name, rk.nlen, 0);
        kproblem(c->v, c->r, c->db, k, "its %s entry says name %s ts %d cont_id %llu, the record "
                 "name %s ts %d cont_id %llu", ckpt_db_name(kdb), kt, (int)rk.ts,
                 (unsigned long long)rk.cont_id, nt, (int)ts, (unsigned long long)cont_id);
    }
}

/* obj_keys and cont_keys: a value that decodes, of an existing record
 * (that the record's keys match is checked under obj and cont). */
static int check_keys(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct vctx *c = p;
    struct dkey d;
    struct ckpt_rec_keys rk;
    ckpt_val rec;
    const int is_obj = c->db == CKPT_DB_OBJ_KEYS;
    if (bad_key(c, k, &d))
        return 0;
    if (ckpt_keys_decode(&rk, c->db, val->data, val->len) != 0) {
        kproblem(c->v, c->r, c->db, k, "value of %zu bytes, too short for an object's keys",
                 val->len);
        return 0;
    }
    int rc = is_obj ? ckpt_get_obj(&rec, c->r->tx, d.id) : ckpt_get_cont(&rec, c->r->tx, d.id);
    if (rc == CKPT_E_NOTFOUND)
        kproblem(c->v, c->r, c->db, k, "keys of id %llu, which is not %s of this rank",
                 (unsigned long long)d.id, is_obj ? "an object" : "a container");
    return 0; /* a record that cannot be read is reported under obj and cont */
}

/* obj and cont: decode, id matches the key, name index points back. */
static int check_named(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct vctx *c = p;
    struct dkey d;
    const int is_obj = c->db == CKPT_DB_OBJ;
    const char *name;
    uint64_t rec_id, cont_id = 0;
    int32_t ts = 0;
    uint8_t ik[CKPT_NAMEKEY_MAX + 4], tsb[4];
    size_t off = 0, n;
    ckpt_val iv;
    int rc;

    if (is_obj)
        c->v->n_obj++;
    else
        c->v->n_cont++;
    if (bad_key(c, k, &d))
        return 0;
    if (is_obj) {
        struct ckpt_obj o;
        if (ckpt_rec_obj_decode(&o, val->data, val->len, &off) != 0) {
            bad_record(c, k, val);
            return 0;
        }
        name = o.obj_name;
        ts = o.time_step;
        rec_id = o.obj_id;
        cont_id = o.cont_id;
    } else {
        struct ckpt_cont cn;
        if (ckpt_rec_cont_decode(&cn, val->data, val->len, &off) != 0) {
            bad_record(c, k, val);
            return 0;
        }
        name = cn.cont_name;
        rec_id = cn.cont_id;
    }
    if (rec_id != d.id)
        kproblem(c->v, c->r, c->db, k, "record says %s %llu", is_obj ? "obj_id" : "cont_id",
                 (unsigned long long)rec_id);
    char nt[128];
    name_text(nt, sizeof nt, name, strlen(name), 0);
    if (c->r->info.format_version >= 5)
        check_rec_keys(c, k, is_obj, name, ts, cont_id, nt);
    if ((n = ckpt_key_name(ik, name, strlen(name))) == 0) {
        kproblem(c->v, c->r, c->db, k, "name %s cannot be a key", nt);
        return 0;
    }
    if (is_obj) {
        ckpt_key_i32(tsb, ts);
        memcpy(ik + n, tsb, 4);
        n += 4;
    }
    const int idb = is_obj ? CKPT_DB_OBJ_NAME : CKPT_DB_CONT_NAME;
    rc = ckpt_get_raw(&iv, c->r->tx, idb, ik, n);
    if (is_obj && (rc == CKPT_E_NOTFOUND || (rc == 0 && iv.len == 8 &&
                                             ckpt_key_get_u64(iv.data) != d.id))) {
        /* one of several objects of this name and time step (PDC tells
         * them apart by user id and app name): the index names one of
         * them, or none after a delete; the others have a same-name entry
         * in pdc_server (ckpt_hook_same_name_put) */
        uint8_t sk[13 + CKPT_NAMEKEY_MAX];
        size_t sn = ckpt_key_pdc_same_name(sk, name, ts, d.id);
        ckpt_val sv;
        if (sn > 0 && ckpt_get_raw(&sv, c->r->tx, CKPT_DB_PDC_SERVER, sk, sn) == 0) {
            c->v->n_same_name++;
            return 0;
        }
    }
    if (rc == CKPT_E_NOTFOUND) {
        if (is_obj)
            kproblem(c->v, c->r, c->db, k, "no obj_name entry for its name %s ts %d", nt, (int)ts);
        else
            kproblem(c->v, c->r, c->db, k, "no cont_name entry for its name %s", nt);
    } else if (rc != 0) {
        kproblem(c->v, c->r, c->db, k, "cannot read its %s entry: %s", ckpt_db_name(idb),
                 store_msg(rc));
    } else if (iv.len == 8 && ckpt_key_get_u64(iv.data) != d.id) {
        kproblem(c->v, c->r, c->db, k, "the %s entry of its name %s points at id %llu instead",
                 ckpt_db_name(idb), nt, (unsigned long long)ckpt_key_get_u64(iv.data));
    } /* a value of another size is reported with the index entry */
    return 0;
}

/* obj_name and cont_name: an 8-byte id of a record with that name. */
static int check_name_index(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct vctx *c = p;
    struct dkey d;
    const int is_obj = c->db == CKPT_DB_OBJ_NAME;
    ckpt_val rec;
    size_t off = 0;
    int rc;
    if (bad_key(c, k, &d))
        return 0;
    if (val->len != 8) {
        kproblem(c->v, c->r, c->db, k, "value of %zu bytes, not an 8-byte id", val->len);
        return 0;
    }
    uint64_t id = ckpt_key_get_u64(val->data);
    rc = is_obj ? ckpt_get_obj(&rec, c->r->tx, id) : ckpt_get_cont(&rec, c->r->tx, id);
    if (rc == CKPT_E_NOTFOUND) {
        kproblem(c->v, c->r, c->db, k, "points at id %llu, which is not %s of this rank",
                 (unsigned long long)id, is_obj ? "an object" : "a container");
        return 0;
    }
    if (rc != 0) {
        kproblem(c->v, c->r, c->db, k, "cannot read id %llu: %s", (unsigned long long)id,
                 store_msg(rc));
        return 0;
    }
    if (is_obj) {
        struct ckpt_obj o;
        uint8_t tsb[4];
        if (ckpt_rec_obj_decode(&o, rec.data, rec.len, &off) != 0)
            return 0; /* reported under obj */
        ckpt_key_i32(tsb, o.time_step);
        if (!same_name_key(o.obj_name, tsb, 4, k->data, k->len)) {
            char nt[128];
            name_text(nt, sizeof nt, o.obj_name, strlen(o.obj_name), 0);
            kproblem(c->v, c->r, c->db, k, "points at id %llu, whose record is named %s ts %d",
                     (unsigned long long)id, nt, (int)o.time_step);
        }
    } else {
        struct ckpt_cont cn;
        if (ckpt_rec_cont_decode(&cn, rec.data, rec.len, &off) != 0)
            return 0; /* reported under cont */
        if (!same_name_key(cn.cont_name, NULL, 0, k->data, k->len)) {
            char nt[128];
            name_text(nt, sizeof nt, cn.cont_name, strlen(cn.cont_name), 0);
            kproblem(c->v, c->r, c->db, k, "points at id %llu, whose record is named %s",
                     (unsigned long long)id, nt);
        }
    }
    return 0;
}

static int owner_exists(struct vrank *r, uint64_t id)
{
    ckpt_val x;
    return ckpt_get_obj(&x, r->tx, id) == 0 || ckpt_get_cont(&x, r->tx, id) == 0;
}

static int check_kvtag(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct vctx *c = p;
    struct dkey d;
    struct ckpt_kvtag t;
    uint8_t ik[CKPT_NAMEKEY_MAX + 8];
    size_t off = 0;
    ckpt_val x;
    int rc;
    c->v->n_kvtag++;
    if (bad_key(c, k, &d))
        return 0;
    if (ckpt_rec_kvtag_decode_entry(&t, k->data, k->len, val->data, val->len, &off) != 0) {
        bad_record(c, k, val);
    } else if (!same_name_key(t.name, NULL, 0, (const uint8_t *)k->data + 8, k->len - 8)) {
        char nt[128];
        name_text(nt, sizeof nt, t.name, strlen(t.name), 0);
        kproblem(c->v, c->r, c->db, k, "record is named %s", nt);
    }
    memcpy(ik, (const uint8_t *)k->data + 8, d.namekey_len);
    memcpy(ik + d.namekey_len, k->data, 8);
    rc = ckpt_get_raw(&x, c->r->tx, CKPT_DB_TAG_INDEX, ik, d.namekey_len + 8);
    if (rc == CKPT_E_NOTFOUND)
        kproblem(c->v, c->r, c->db, k, "no kvtag_name index entry");
    else if (rc != 0)
        kproblem(c->v, c->r, c->db, k, "cannot read its kvtag_name entry: %s", store_msg(rc));
    if (!owner_exists(c->r, d.id))
        kproblem(c->v, c->r, c->db, k, "owner %llu is neither an object nor a container of this rank",
                 (unsigned long long)d.id);
    return 0;
}

static int check_tag_index(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct vctx *c = p;
    struct dkey d;
    uint8_t kk[CKPT_NAMEKEY_MAX + 8];
    ckpt_val x;
    int rc;
    if (bad_key(c, k, &d))
        return 0;
    if (val->len != 0)
        kproblem(c->v, c->r, c->db, k, "value of %zu bytes, expected none", val->len);
    ckpt_key_u64(kk, d.id);
    memcpy(kk + 8, k->data, d.namekey_len);
    rc = ckpt_get_raw(&x, c->r->tx, CKPT_DB_KVTAG, kk, d.namekey_len + 8);
    if (rc == CKPT_E_NOTFOUND)
        kproblem(c->v, c->r, c->db, k, "points nowhere: owner %llu has no such kvtag",
                 (unsigned long long)d.id);
    else if (rc != 0)
        kproblem(c->v, c->r, c->db, k, "cannot read the kvtag: %s", store_msg(rc));
    return 0;
}

static int check_member(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct vctx *c = p;
    struct dkey d;
    ckpt_val x;
    int found = 0;
    c->v->n_member++;
    if (bad_key(c, k, &d))
        return 0;
    if (val->len != 0)
        kproblem(c->v, c->r, c->db, k, "value of %zu bytes, expected none", val->len);
    if (ckpt_get_cont(&x, c->r->tx, d.id) != 0)
        kproblem(c->v, c->r, c->db, k, "container %llu is not a container of this rank",
                 (unsigned long long)d.id);
    /* objects live on other ranks than their container: this rank's
     * transaction first, then the ids pass 1 collected from every rank */
    found = ckpt_get_obj(&x, c->r->tx, d.id2) == 0;
    for (size_t i = 0; i < c->v->root.n && !found; i++)
        if (c->v->v[i].collected && has_id(&c->v->v[i].objs, d.id2))
            found = 1;
    if (!found) {
        /* it may be on a rank that is missing or unreadable (reported) */
        if (c->v->incomplete)
            c->v->skipped_members++;
        else
            pend_add(c->v, c->r, c->db, k, d.id2, -1); /* pass 3 looks again */
    }
    return 0;
}

static int check_region(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct vctx *c = p;
    struct dkey d;
    struct ckpt_region g;
    size_t off = 0;
    ckpt_val x;
    c->v->n_region++;
    if (bad_key(c, k, &d))
        return 0;
    if (ckpt_rec_region_decode(&g, val->data, val->len, &off) != 0) {
        bad_record(c, k, val);
    } else {
        int same = g.obj_id == d.id && g.ndim == d.ndim;
        for (uint32_t i = 0; same && i < d.ndim; i++)
            same = g.start[i] == d.start[i] && g.count[i] == d.count[i];
        if (!same)
            kproblem(c->v, c->r, c->db, k, "record describes another region (obj_id %llu, ndim %u)",
                     (unsigned long long)g.obj_id, g.ndim);
    }
    if (ckpt_get_obj(&x, c->r->tx, d.id) != 0)
        kproblem(c->v, c->r, c->db, k, "object %llu is not an object of this rank",
                 (unsigned long long)d.id);
    return 0;
}

/* pdc_server (a PDC server's region tables): the record decodes and
 * describes the region of its key. Its objects may be other ranks'. */
static int check_pdc_server(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct vctx *c = p;
    struct dkey d;
    size_t off = 0;
    uint64_t obj_id;
    uint32_t ndim;
    const uint64_t *start, *count;
    struct ckpt_region g;
    struct ckpt_xfer_region x;
    if (bad_key(c, k, &d))
        return 0;
    if (d.id2 == CKPT_PDC_DART) {
        /* a DART entry: the record decodes and is the entry its key names */
        struct ckpt_dart_entry e;
        uint8_t key[CKPT_PDC_DART_KEY_MAX];
        size_t klen;
        if (ckpt_rec_dart_decode(&e, val->data, val->len, &off) != 0) {
            bad_record(c, k, val);
            return 0;
        }
        klen = ckpt_key_pdc_dart(key, &e);
        if (klen != k->len || memcmp(key, k->data, klen) != 0)
            kproblem(c->v, c->r, c->db, k, "DART record describes another entry (key [%s])", e.key);
        return 0;
    }
    if (d.id2 == CKPT_PDC_ALIAS_OBJ || d.id2 == CKPT_PDC_ALIAS_CONT) {
        /* a name alias (elastic restart of a PDC server): the record of the
         * object or container its key names, held by its id's rank */
        struct ckpt_obj o;
        struct ckpt_cont ct;
        uint8_t key[13 + CKPT_NAMEKEY_MAX];
        size_t klen;
        if (d.id2 == CKPT_PDC_ALIAS_OBJ ? ckpt_rec_obj_decode(&o, val->data, val->len, &off) != 0
                                        : ckpt_rec_cont_decode(&ct, val->data, val->len, &off) != 0) {
            bad_record(c, k, val);
            return 0;
        }
        klen = d.id2 == CKPT_PDC_ALIAS_OBJ ? ckpt_key_pdc_alias_obj(key, o.obj_name, o.time_step, o.obj_id)
                                           : ckpt_key_pdc_alias_cont(key, ct.cont_name, ct.cont_id);
        if (klen != k->len || memcmp(key, k->data, klen) != 0)
            kproblem(c->v, c->r, c->db, k, "alias record describes another %s (id %llu)",
                     d.id2 == CKPT_PDC_ALIAS_OBJ ? "object" : "container",
                     (unsigned long long)(d.id2 == CKPT_PDC_ALIAS_OBJ ? o.obj_id : ct.cont_id));
        else if (ckpt_id_dir_rank(d.id, c->v->nranks) == c->r->e->rank)
            kproblem(c->v, c->r, c->db, k, "alias on the rank its id goes to (the record belongs here)");
        return 0;
    }
    if (d.id2 == CKPT_PDC_SAME_NAME) {
        /* an entry of a deleted object stays (ids are never reused) */
        if (val->len != 0)
            kproblem(c->v, c->r, c->db, k, "value of %zu bytes, expected none", val->len);
        return 0;
    }
    if (d.id2 == CKPT_PDC_XFER_REGION) {
        if (ckpt_rec_xfer_decode(&x, val->data, val->len, &off) != 0) {
            bad_record(c, k, val);
            return 0;
        }
        obj_id = x.obj_id, ndim = x.ndim, start = x.start, count = x.count;
    } else {
        if (ckpt_rec_region_decode(&g, val->data, val->len, &off) != 0) {
            bad_record(c, k, val);
            return 0;
        }
        obj_id = g.obj_id, ndim = g.ndim, start = g.start, count = g.count;
    }
    int same = obj_id == d.id && ndim == d.ndim;
    for (uint32_t i = 0; same && i < d.ndim; i++)
        same = start[i] == d.start[i] && count[i] == d.count[i];
    if (!same)
        kproblem(c->v, c->r, c->db, k, "record describes another region (obj_id %llu, ndim %u)",
                 (unsigned long long)obj_id, ndim);
    return 0;
}

/* id_home (written by re-homing): on the id's directory rank, the rank
 * that holds the object or container now. */
static int check_id_home(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct vctx *c = p;
    struct dkey d;
    uint32_t home;
    if (bad_key(c, k, &d))
        return 0;
    if (id_home_decode(val->data, val->len, &home) != 0) {
        kproblem(c->v, c->r, c->db, k, "value of %zu bytes, not a 4-byte rank", val->len);
        return 0;
    }
    if (c->v->nranks < 1)
        return 0;
    if (home >= (uint32_t)c->v->nranks) {
        kproblem(c->v, c->r, c->db, k, "home rank %u is beyond the store's %d ranks", home,
                 c->v->nranks);
        return 0;
    }
    int dir = ckpt_id_dir_rank(d.id, c->v->nranks);
    if (dir != c->r->e->rank)
        kproblem(c->v, c->r, c->db, k, "entry belongs on the id's directory rank %d", dir);
    struct vrank *hr = vrank_of(c->v, (int)home);
    if (hr == c->r) {
        if (!owner_exists(c->r, d.id))
            kproblem(c->v, c->r, c->db, k, "says rank %u, which has no object or container %llu",
                     home, (unsigned long long)d.id);
    } else if (hr != NULL && hr->collected && !has_id(&hr->objs, d.id) &&
               !has_id(&hr->conts, d.id)) {
        pend_add(c->v, c->r, c->db, k, d.id, (int)home); /* pass 3 looks again */
    }
    return 0;
}

const ckpt_iter_cb verify_checks[CKPT_DB_COUNT] = {
    [CKPT_DB_META] = check_meta,           [CKPT_DB_OBJ] = check_named,
    [CKPT_DB_OBJ_NAME] = check_name_index, [CKPT_DB_KVTAG] = check_kvtag,
    [CKPT_DB_TAG_INDEX] = check_tag_index, [CKPT_DB_CONT] = check_named,
    [CKPT_DB_CONT_NAME] = check_name_index, [CKPT_DB_CONT_OBJ] = check_member,
    [CKPT_DB_REGION] = check_region,       [CKPT_DB_ID_HOME] = check_id_home,
    [CKPT_DB_PDC_SERVER] = check_pdc_server, [CKPT_DB_OBJ_KEYS] = check_keys,
    [CKPT_DB_CONT_KEYS] = check_keys,
};
