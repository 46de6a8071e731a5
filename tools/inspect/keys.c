/*
 * keys.c - the store's keys of every database, decoded into their parts
 * and shown as text and JSON (ckpt-inspect).
 */

#include <stdlib.h>
#include <string.h>

#include "inspect.h"

/* ------------------------------------------------------------------ */
/* Keys                                                                */
/* ------------------------------------------------------------------ */

/* The name key at the start of k: fills the name fields; returns its
 * length or 0. */
static size_t name_part(struct dkey *d, const uint8_t *k, size_t klen)
{
    int hashed = 0;
    size_t n = ckpt_key_name_len(k, klen, &hashed);
    if (n == 0)
        return 0;
    d->name = k;
    d->namekey_len = n;
    d->hashed = hashed;
    if (hashed) {
        d->nlen = CKPT_NAME_INLINE_MAX;
        d->hash = ckpt_key_get_u64(k + CKPT_NAME_INLINE_MAX + 1);
    } else {
        d->nlen = n - 1;
    }
    return n;
}

int key_decode(struct dkey *d, int db, const void *key, size_t klen)
{
    const uint8_t *k = key;
    size_t n;
    memset(d, 0, sizeof *d);
    if (k == NULL || klen == 0)
        return -1;
    switch (db) {
    case CKPT_DB_META:
        d->name = k;
        d->nlen = klen;
        return 0;
    case CKPT_DB_OBJ:
    case CKPT_DB_CONT:
    case CKPT_DB_ID_HOME:
    case CKPT_DB_OBJ_KEYS:
    case CKPT_DB_CONT_KEYS:
        if (klen != 8)
            return -1;
        d->id = ckpt_key_get_u64(k);
        return 0;
    case CKPT_DB_OBJ_NAME:
        if ((n = name_part(d, k, klen)) == 0 || klen != n + 4)
            return -1;
        d->ts = ckpt_key_get_i32(k + n);
        return 0;
    case CKPT_DB_KVTAG:
        if (klen <= 8 || (n = name_part(d, k + 8, klen - 8)) == 0 || n != klen - 8)
            return -1;
        d->id = ckpt_key_get_u64(k);
        return 0;
    case CKPT_DB_TAG_INDEX:
        if ((n = name_part(d, k, klen)) == 0 || klen != n + 8)
            return -1;
        d->id = ckpt_key_get_u64(k + n);
        return 0;
    case CKPT_DB_CONT_NAME:
        if ((n = name_part(d, k, klen)) == 0 || n != klen)
            return -1;
        return 0;
    case CKPT_DB_CONT_OBJ:
        if (klen != 16)
            return -1;
        d->id = ckpt_key_get_u64(k);
        d->id2 = ckpt_key_get_u64(k + 8);
        return 0;
    case CKPT_DB_REGION:
        if (klen < 9 || k[8] == 0 || k[8] > CKPT_REGION_MAXDIM || klen != 9 + 16 * (size_t)k[8])
            return -1;
        d->id = ckpt_key_get_u64(k);
        d->ndim = k[8];
        for (uint32_t i = 0; i < d->ndim; i++) {
            d->start[i] = ckpt_key_get_u64(k + 9 + 8 * i);
            d->count[i] = ckpt_key_get_u64(k + 9 + 8 * (d->ndim + i));
        }
        return 0;
    case CKPT_DB_PDC_SERVER: /* tag . object id . region key (ckpt_key_pdc_region) */
        if (klen >= 2 + 5 + 8 && k[0] == CKPT_PDC_DART && k[1] <= 3) { /* ckpt_key_pdc_dart */
            d->id2 = k[0];
            d->id = ckpt_key_get_u64(k + klen - 8); /* the object reference */
            return 0;
        }
        if (klen > 1 && k[0] == CKPT_PDC_ALIAS_CONT) { /* 'c' . namekey . id */
            if ((n = name_part(d, k + 1, klen - 1)) == 0 || klen != 1 + n + 8)
                return -1;
            d->id2 = k[0];
            d->id = ckpt_key_get_u64(k + 1 + n);
            return 0;
        }
        /* 'n' (same name) or 'a' (object alias): namekey . ts . id */
        if (klen > 1 && (k[0] == CKPT_PDC_SAME_NAME || k[0] == CKPT_PDC_ALIAS_OBJ)) {
            if ((n = name_part(d, k + 1, klen - 1)) == 0 || klen != 1 + n + 12)
                return -1;
            d->id2 = k[0];
            d->ts = ckpt_key_get_i32(k + 1 + n);
            d->id = ckpt_key_get_u64(k + 5 + n);
            return 0;
        }
        if (klen < 10 || (k[0] != CKPT_PDC_DATA_REGION && k[0] != CKPT_PDC_XFER_REGION) ||
            k[9] == 0 || k[9] > CKPT_REGION_MAXDIM || klen != 10 + 16 * (size_t)k[9])
            return -1;
        d->id2 = k[0];
        d->id = ckpt_key_get_u64(k + 1);
        d->ndim = k[9];
        for (uint32_t i = 0; i < d->ndim; i++) {
            d->start[i] = ckpt_key_get_u64(k + 10 + 8 * i);
            d->count[i] = ckpt_key_get_u64(k + 10 + 8 * (d->ndim + i));
        }
        return 0;
    default:
        return -2; /* a database this build does not know */
    }
}

int id_home_decode(const void *val, size_t len, uint32_t *home)
{
    const uint8_t *b = val;
    if (len != 4)
        return -1;
    *home = ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
    return 0;
}

void hex_text(char *buf, size_t n, const void *data, size_t len)
{
    static const char hx[] = "0123456789abcdef";
    const uint8_t *p = data;
    size_t o = 0, shown = len;
    if (n == 0)
        return;
    if (2 * len + 1 > n) /* shortened: room for ".." */
        shown = n >= 3 ? (n - 3) / 2 : 0;
    for (size_t i = 0; i < shown; i++) {
        buf[o++] = hx[p[i] >> 4];
        buf[o++] = hx[p[i] & 15];
    }
    if (shown < len && o + 2 < n) {
        buf[o++] = '.';
        buf[o++] = '.';
    }
    buf[o] = 0;
}

json_object *hex_json(const void *data, size_t len)
{
    size_t n = 2 * len + 1;
    char *b = malloc(n);
    json_object *j;
    if (b == NULL)
        return NULL;
    hex_text(b, n, data, len);
    j = json_object_new_string(b);
    free(b);
    return j;
}

void name_text(char *buf, size_t n, const void *name, size_t len, int hashed)
{
    const uint8_t *p = name;
    size_t o = 0, shown = len > 64 ? 64 : len;
    if (n < 16) {
        if (n)
            buf[0] = 0;
        return;
    }
    buf[o++] = '"';
    for (size_t i = 0; i < shown && o + 12 < n; i++) {
        uint8_t c = p[i];
        if (c == '"' || c == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)c;
        } else if (c < 0x20 || c >= 0x7f) {
            o += (size_t)snprintf(buf + o, n - o, "\\x%02x", c);
        } else {
            buf[o++] = (char)c;
        }
    }
    if (shown < len || hashed)
        o += (size_t)snprintf(buf + o, n - o, "...");
    buf[o++] = '"';
    buf[o] = 0;
    if (hashed && o + 10 < n)
        snprintf(buf + o, n - o, " (hashed)");
}

json_object *jnum_u64(uint64_t v)
{
    return json_object_new_uint64(v);
}

json_object *jnum_i64(int64_t v)
{
    return json_object_new_int64(v);
}

static void add_name(json_object *o, const struct dkey *d)
{
    json_object_object_add(o, "name", bulki_json_bytes(d->name, d->nlen));
    if (d->hashed) {
        char h[20];
        snprintf(h, sizeof h, "%016llx", (unsigned long long)d->hash);
        json_object_object_add(o, "hashed", json_object_new_boolean(1));
        json_object_object_add(o, "hash", json_object_new_string(h));
    }
}

json_object *jnum_u64_array(const uint64_t *v, size_t n)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        json_object_array_add(a, jnum_u64(v[i]));
    return a;
}

json_object *key_json(int db, const void *key, size_t klen)
{
    struct dkey d;
    json_object *o = json_object_new_object();
    int rc = key_decode(&d, db, key, klen);
    if (rc != 0) {
        json_object_object_add(o, "hex", hex_json(key, klen));
        if (rc == -1)
            json_object_object_add(o, "malformed", json_object_new_boolean(1));
        return o;
    }
    switch (db) {
    case CKPT_DB_META:
    case CKPT_DB_CONT_NAME:
        add_name(o, &d);
        break;
    case CKPT_DB_OBJ:
    case CKPT_DB_CONT:
    case CKPT_DB_ID_HOME:
    case CKPT_DB_OBJ_KEYS:
    case CKPT_DB_CONT_KEYS:
        json_object_object_add(o, "id", jnum_u64(d.id));
        break;
    case CKPT_DB_OBJ_NAME:
        add_name(o, &d);
        json_object_object_add(o, "time_step", jnum_i64(d.ts));
        break;
    case CKPT_DB_KVTAG:
        json_object_object_add(o, "owner", jnum_u64(d.id));
        add_name(o, &d);
        break;
    case CKPT_DB_TAG_INDEX:
        add_name(o, &d);
        json_object_object_add(o, "owner", jnum_u64(d.id));
        break;
    case CKPT_DB_CONT_OBJ:
        json_object_object_add(o, "cont_id", jnum_u64(d.id));
        json_object_object_add(o, "obj_id", jnum_u64(d.id2));
        break;
    case CKPT_DB_REGION:
        json_object_object_add(o, "obj_id", jnum_u64(d.id));
        json_object_object_add(o, "start", jnum_u64_array(d.start, d.ndim));
        json_object_object_add(o, "count", jnum_u64_array(d.count, d.ndim));
        break;
    case CKPT_DB_PDC_SERVER:
        if (d.id2 == CKPT_PDC_DART) {
            json_object_object_add(o, "table", json_object_new_string("dart"));
            json_object_object_add(o, "obj_ref", jnum_u64(d.id));
            break;
        }
        if (d.id2 == CKPT_PDC_SAME_NAME || d.id2 == CKPT_PDC_ALIAS_OBJ) {
            json_object_object_add(o, "table", json_object_new_string(
                                                   d.id2 == CKPT_PDC_SAME_NAME ? "same_name" : "obj_alias"));
            add_name(o, &d);
            json_object_object_add(o, "time_step", jnum_i64(d.ts));
            json_object_object_add(o, "obj_id", jnum_u64(d.id));
            break;
        }
        if (d.id2 == CKPT_PDC_ALIAS_CONT) {
            json_object_object_add(o, "table", json_object_new_string("cont_alias"));
            add_name(o, &d);
            json_object_object_add(o, "cont_id", jnum_u64(d.id));
            break;
        }
        json_object_object_add(o, "table", json_object_new_string(
                                               d.id2 == CKPT_PDC_DATA_REGION ? "data" : "transfer"));
        json_object_object_add(o, "obj_id", jnum_u64(d.id));
        json_object_object_add(o, "start", jnum_u64_array(d.start, d.ndim));
        json_object_object_add(o, "count", jnum_u64_array(d.count, d.ndim));
        break;
    default:
        break;
    }
    return o;
}

static size_t u64_list(char *buf, size_t n, const uint64_t *v, uint32_t cnt)
{
    size_t o = 0;
    for (uint32_t i = 0; i < cnt && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%llu", i ? "," : "", (unsigned long long)v[i]);
    return o;
}

void key_text(char *buf, size_t n, int db, const void *key, size_t klen)
{
    struct dkey d;
    char nm[128], a[128], b[128];
    int rc = key_decode(&d, db, key, klen);
    if (rc != 0) {
        char hx[2 * 48 + 4];
        hex_text(hx, sizeof hx, key, klen);
        snprintf(buf, n, "%skey %s", rc == -1 ? "malformed " : "", hx);
        return;
    }
    if (d.name != NULL)
        name_text(nm, sizeof nm, d.name, d.nlen, d.hashed);
    switch (db) {
    case CKPT_DB_META:
    case CKPT_DB_CONT_NAME:
        snprintf(buf, n, "name %s", nm);
        break;
    case CKPT_DB_OBJ:
    case CKPT_DB_CONT:
    case CKPT_DB_ID_HOME:
    case CKPT_DB_OBJ_KEYS:
    case CKPT_DB_CONT_KEYS:
        snprintf(buf, n, "id %llu", (unsigned long long)d.id);
        break;
    case CKPT_DB_OBJ_NAME:
        snprintf(buf, n, "name %s ts %d", nm, (int)d.ts);
        break;
    case CKPT_DB_KVTAG:
        snprintf(buf, n, "owner %llu name %s", (unsigned long long)d.id, nm);
        break;
    case CKPT_DB_TAG_INDEX:
        snprintf(buf, n, "name %s owner %llu", nm, (unsigned long long)d.id);
        break;
    case CKPT_DB_CONT_OBJ:
        snprintf(buf, n, "cont %llu obj %llu", (unsigned long long)d.id, (unsigned long long)d.id2);
        break;
    case CKPT_DB_REGION:
        u64_list(a, sizeof a, d.start, d.ndim);
        u64_list(b, sizeof b, d.count, d.ndim);
        snprintf(buf, n, "obj %llu start [%s] count [%s]", (unsigned long long)d.id, a, b);
        break;
    case CKPT_DB_PDC_SERVER:
        if (d.id2 == CKPT_PDC_SAME_NAME || d.id2 == CKPT_PDC_ALIAS_OBJ) {
            snprintf(buf, n, "%s object %llu name %s ts %d",
                     d.id2 == CKPT_PDC_SAME_NAME ? "same-name" : "alias of", (unsigned long long)d.id, nm,
                     (int)d.ts);
            break;
        }
        if (d.id2 == CKPT_PDC_ALIAS_CONT) {
            snprintf(buf, n, "alias of container %llu name %s", (unsigned long long)d.id, nm);
            break;
        }
        u64_list(a, sizeof a, d.start, d.ndim);
        u64_list(b, sizeof b, d.count, d.ndim);
        snprintf(buf, n, "%s region obj %llu start [%s] count [%s]",
                 d.id2 == CKPT_PDC_DATA_REGION ? "data" : "transfer", (unsigned long long)d.id, a, b);
        break;
    default:
        snprintf(buf, n, "?");
        break;
    }
}

void err_key(const char *path, int db, const ckpt_val *k, const char *what)
{
    char kt[256];
    key_text(kt, sizeof kt, db, k->data, k->len);
    errp(path, "%s: %s: %s", ckpt_db_name(db), kt, what);
}
