/*
 * powerloss_model.c - see powerloss_model.h.
 */
#include "powerloss_model.h"

#include <stdio.h>
#include <string.h>

#include "bulki.h"
#include "ckpt_hooks.h"

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void plm_init(struct plm *m, uint64_t seed)
{
    m->seed = seed;
    m->n = 0;
    for (unsigned k = 0; k < PLM_NOBJ; k++) {
        m->obj[k] = -1;
        for (unsigned j = 0; j < PLM_NTAG; j++)
            m->tag[k][j] = -1;
    }
}

void plm_next(const struct plm *m, struct plm_op *op)
{
    uint64_t r = mix(m->seed * 0x100000001b3ull ^ mix(m->n));
    unsigned pick = (unsigned)(r % 100);
    op->i = m->n;
    op->k = (unsigned)((r >> 8) % PLM_NOBJ);
    op->j = (unsigned)((r >> 24) % PLM_NTAG);
    if (pick < 35 || m->obj[op->k] < 0)
        op->kind = PLM_PUT_OBJ;
    else if (pick < 43)
        op->kind = PLM_DEL_OBJ;
    else if (pick < 88)
        op->kind = PLM_PUT_TAG;
    else
        op->kind = PLM_DEL_TAG;
}

void plm_apply(struct plm *m, const struct plm_op *op)
{
    switch (op->kind) {
    case PLM_PUT_OBJ:
        m->obj[op->k] = (int64_t)op->i;
        break;
    case PLM_DEL_OBJ:
        m->obj[op->k] = -1;
        for (unsigned j = 0; j < PLM_NTAG; j++)
            m->tag[op->k][j] = -1;
        break;
    case PLM_PUT_TAG:
        m->tag[op->k][op->j] = (int64_t)op->i;
        break;
    case PLM_DEL_TAG:
        m->tag[op->k][op->j] = -1;
        break;
    }
    m->n++;
}

void plm_replay(struct plm *m, uint64_t seed, uint64_t n)
{
    struct plm_op op;
    plm_init(m, seed);
    while (m->n < n) {
        plm_next(m, &op);
        plm_apply(m, &op);
    }
}

uint64_t plm_obj_id(unsigned k)
{
    return CKPT_ID_BASE + 1 + k;
}

static size_t obj_name(char *buf, size_t cap, unsigned k)
{
    return (size_t)snprintf(buf, cap, "plobj-%u", k);
}

static size_t tag_name(char *buf, size_t cap, unsigned j)
{
    return (size_t)snprintf(buf, cap, "t%u", j);
}

size_t plm_obj_rec(uint8_t *buf, size_t cap, unsigned k, uint64_t i)
{
    static char pad[8192];
    char name[32];
    uint64_t r = mix(i ^ 0x5bd1e995u);
    obj_name(name, sizeof name, k);
    /* mostly tens of bytes; one in 12 several kilobytes (overflow pages) */
    size_t plen = r % 12 == 0 ? 2000 + (size_t)(r >> 8) % 6000 : 8 + (size_t)(r >> 8) % 120;
    for (size_t p = 0; p < plen; p++)
        pad[p] = (char)('a' + (i + p) % 26);
    pad[plen] = 0;
    struct ckpt_obj o;
    memset(&o, 0, sizeof o);
    o.obj_id = plm_obj_id(k);
    o.obj_name = name;
    o.app_name = "powerloss";
    o.data_location = "";
    o.tags = pad;
    o.create_time = (int64_t)i; /* the mutation that wrote it */
    size_t len = 0;
    if (ckpt_rec_obj_encode(&len, buf, cap, &o) != 0)
        return 0;
    return len;
}

size_t plm_tag_rec(uint8_t *buf, size_t cap, uint64_t i)
{
    struct ckpt_kvtag t = {"t", BULKI_T_UINT64, 8, &i};
    size_t len = 0;
    if (ckpt_rec_kvtag_encode(&len, buf, cap, &t) != 0)
        return 0;
    return len;
}

int plm_stage(ckpt_store *st, const struct plm_op *op)
{
    static uint8_t rec[16384];
    char name[32];
    size_t len, n;
    switch (op->kind) {
    case PLM_PUT_OBJ:
        len = plm_obj_rec(rec, sizeof rec, op->k, op->i);
        n = obj_name(name, sizeof name, op->k);
        return ckpt_store_put_obj(st, plm_obj_id(op->k), name, n, 0, 0, rec, len);
    case PLM_DEL_OBJ:
        return ckpt_store_del_obj(st, plm_obj_id(op->k));
    case PLM_PUT_TAG:
        len = plm_tag_rec(rec, sizeof rec, op->i);
        n = tag_name(name, sizeof name, op->j);
        return ckpt_store_put_kvtag(st, plm_obj_id(op->k), name, n, rec, len);
    case PLM_DEL_TAG:
        n = tag_name(name, sizeof name, op->j);
        return ckpt_store_del_kvtag(st, plm_obj_id(op->k), name, n);
    }
    return CKPT_E_INVAL;
}

/* ---- checking a store against the model ---- */

struct chk {
    const struct plm *m;
    int db;
    uint64_t seen;
    char *why;
    size_t wlen;
    uint8_t buf[16384];
};

static int fail(struct chk *c, const char *what, const ckpt_val *k)
{
    char hex[40] = "";
    for (size_t i = 0; i < k->len && i < 16; i++)
        snprintf(hex + 2 * i, sizeof hex - 2 * i, "%02x", ((const uint8_t *)k->data)[i]);
    snprintf(c->why, c->wlen, "%s, key %s (%zu bytes): %s", ckpt_db_name(c->db), hex, k->len, what);
    return -1;
}

/* object number of an 8-byte id key, or -1 */
static long key_obj(const uint8_t *p)
{
    uint64_t id = 0;
    for (int i = 0; i < 8; i++)
        id = id << 8 | p[i];
    if (id < plm_obj_id(0) || id >= plm_obj_id(PLM_NOBJ))
        return -1;
    return (long)(id - plm_obj_id(0));
}

/* tag number of "t<j>\0" at p[0..n), or -1 */
static long key_tag(const uint8_t *p, size_t n)
{
    long j = 0;
    if (n < 3 || p[0] != 't' || p[n - 1] != 0)
        return -1;
    for (size_t i = 1; i + 1 < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        j = j * 10 + (p[i] - '0');
    }
    return j < PLM_NTAG ? j : -1;
}

static int chk_cb(const ckpt_val *key, const ckpt_val *val, void *payload)
{
    struct chk *c = payload;
    const uint8_t *k = key->data;
    long o, j;
    size_t len;
    c->seen++;
    switch (c->db) {
    case CKPT_DB_OBJ:
        if (key->len != 8 || (o = key_obj(k)) < 0)
            return fail(c, "not an object of the workload", key);
        if (c->m->obj[o] < 0)
            return fail(c, "object present, the model has none", key);
        len = plm_obj_rec(c->buf, sizeof c->buf, (unsigned)o, (uint64_t)c->m->obj[o]);
        if (val->len != len || memcmp(val->data, c->buf, len) != 0)
            return fail(c, "object record is not the one of the model's mutation", key);
        return 0;
    case CKPT_DB_OBJ_NAME: {
        /* "plobj-<k>\0" . ts(4) -> id */
        char name[32];
        if (val->len != 8 || (o = key_obj(val->data)) < 0)
            return fail(c, "value is not an object id of the workload", key);
        len = (size_t)snprintf(name, sizeof name, "plobj-%ld", o);
        if (key->len != len + 5 || memcmp(k, name, len + 1) != 0)
            return fail(c, "name entry does not name its object", key);
        if (c->m->obj[o] < 0)
            return fail(c, "name entry of an object the model does not have", key);
        return 0;
    }
    case CKPT_DB_KVTAG:
        if (key->len < 11 || (o = key_obj(k)) < 0 || (j = key_tag(k + 8, key->len - 8)) < 0)
            return fail(c, "not a kvtag of the workload", key);
        if (c->m->tag[o][j] < 0)
            return fail(c, "kvtag present, the model has none", key);
        len = plm_tag_rec(c->buf, sizeof c->buf, (uint64_t)c->m->tag[o][j]);
        if (val->len != len || memcmp(val->data, c->buf, len) != 0)
            return fail(c, "kvtag record is not the one of the model's mutation", key);
        return 0;
    case CKPT_DB_TAG_INDEX:
        if (key->len < 11 || (o = key_obj(k + key->len - 8)) < 0 ||
            (j = key_tag(k, key->len - 8)) < 0 || val->len != 0)
            return fail(c, "not a tag-index entry of the workload", key);
        if (c->m->tag[o][j] < 0)
            return fail(c, "tag-index entry of a kvtag the model does not have", key);
        return 0;
    }
    return fail(c, "unexpected database", key);
}

int plm_check(ckpt_store *st, const struct plm *m, char *why, size_t wlen)
{
    static struct chk c;
    ckpt_rtxn *tx;
    uint64_t nobj = 0, ntag = 0;
    int rc;
    for (unsigned k = 0; k < PLM_NOBJ; k++) {
        nobj += m->obj[k] >= 0;
        for (unsigned j = 0; j < PLM_NTAG; j++)
            ntag += m->tag[k][j] >= 0;
    }
    if ((rc = ckpt_rtxn_begin(&tx, st)) != 0) {
        snprintf(why, wlen, "ckpt_rtxn_begin: %s", ckpt_errmsg());
        return -1;
    }
    static const int dbs[] = {CKPT_DB_OBJ, CKPT_DB_OBJ_NAME, CKPT_DB_KVTAG, CKPT_DB_TAG_INDEX};
    for (size_t d = 0; d < sizeof dbs / sizeof dbs[0]; d++) {
        c.m = m;
        c.db = dbs[d];
        c.seen = 0;
        c.why = why;
        c.wlen = wlen;
        rc = ckpt_iter(tx, c.db, NULL, 0, chk_cb, &c);
        if (rc == -1)
            break;
        if (rc != 0) {
            snprintf(why, wlen, "iterating %s: %s", ckpt_db_name(c.db), ckpt_errmsg());
            rc = -1;
            break;
        }
        uint64_t want = c.db == CKPT_DB_OBJ || c.db == CKPT_DB_OBJ_NAME ? nobj : ntag;
        if (c.seen != want) {
            snprintf(why, wlen, "%s has %llu entries, the model after %llu mutations %llu",
                     ckpt_db_name(c.db), (unsigned long long)c.seen, (unsigned long long)m->n,
                     (unsigned long long)want);
            rc = -1;
            break;
        }
    }
    ckpt_rtxn_end(tx);
    return rc == 0 ? 0 : -1;
}
