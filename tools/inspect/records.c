/*
 * records.c - the JSON forms of records, decoded through the hooks'
 * decoders, and a plain form of any BULKI (ckpt-inspect).
 */

#include <stdlib.h>
#include <string.h>

#include "inspect.h"

/* ------------------------------------------------------------------ */
/* Records                                                             */
/* ------------------------------------------------------------------ */

static void add(json_object *o, const char *k, json_object *v)
{
    json_object_object_add(o, k, v);
}

static json_object *jstr(const char *s)
{
    return bulki_json_str(s);
}

json_object *obj_json(const struct ckpt_obj *o)
{
    json_object *j = json_object_new_object();
    add(j, "obj_id", jnum_u64(o->obj_id));
    add(j, "obj_name", jstr(o->obj_name));
    add(j, "cont_id", jnum_u64(o->cont_id));
    add(j, "user_id", jnum_i64(o->user_id));
    add(j, "app_name", jstr(o->app_name));
    add(j, "time_step", jnum_i64(o->time_step));
    add(j, "data_type", jnum_i64(o->data_type));
    add(j, "ndim", jnum_u64(o->ndim));
    add(j, "dims", jnum_u64_array(o->dims, o->ndim));
    add(j, "create_time", jnum_i64(o->create_time));
    add(j, "last_modified_time", jnum_i64(o->last_modified_time));
    add(j, "data_location", jstr(o->data_location));
    add(j, "tags", jstr(o->tags));
    add(j, "transform_state", jnum_i64(o->transform_state));
    add(j, "data_server_id", jnum_u64(o->data_server_id));
    add(j, "region_partition", jnum_u64(o->region_partition));
    add(j, "consistency", jnum_u64(o->consistency));
    return j;
}

json_object *cont_json(const struct ckpt_cont *c)
{
    json_object *j = json_object_new_object();
    add(j, "cont_id", jnum_u64(c->cont_id));
    add(j, "cont_name", jstr(c->cont_name));
    add(j, "tags", jstr(c->tags));
    return j;
}

const char *pdc_type_name(int type)
{
    /* PDC's type codes are BULKI's (BULKI is PDC's serializer) */
    const struct bulki_type_info *ti = type > 0 ? bulki_type_info((unsigned)type) : NULL;
    return ti ? ti->name : NULL;
}

/* One element of `width` bytes (host order, as PDC stores tag values). */
static json_object *elem_json(const uint8_t *p, const struct bulki_type_info *ti)
{
    switch (ti->kind) {
    case BULKI_KIND_SIGNED: {
        int64_t v;
        if (ti->width == 1) {
            int8_t x;
            memcpy(&x, p, 1);
            v = x;
        } else if (ti->width == 2) {
            int16_t x;
            memcpy(&x, p, 2);
            v = x;
        } else if (ti->width == 4) {
            int32_t x;
            memcpy(&x, p, 4);
            v = x;
        } else {
            memcpy(&v, p, 8);
        }
        return jnum_i64(v);
    }
    case BULKI_KIND_UNSIGNED: {
        uint64_t v;
        if (ti->width == 1) {
            v = p[0];
        } else if (ti->width == 2) {
            uint16_t x;
            memcpy(&x, p, 2);
            v = x;
        } else if (ti->width == 4) {
            uint32_t x;
            memcpy(&x, p, 4);
            v = x;
        } else {
            memcpy(&v, p, 8);
        }
        return jnum_u64(v);
    }
    case BULKI_KIND_FLOAT:
        if (ti->width == 4) {
            float f;
            memcpy(&f, p, 4);
            return bulki_json_f64(f, 1);
        } else {
            double d;
            memcpy(&d, p, 8);
            return bulki_json_f64(d, 0);
        }
    case BULKI_KIND_BOOL:
        return json_object_new_boolean(p[0] != 0);
    default:
        return NULL;
    }
}

json_object *tag_value_json(const struct ckpt_kvtag *t, int *raw_bytes)
{
    const struct bulki_type_info *ti = t->type > 0 ? bulki_type_info((unsigned)t->type) : NULL;
    const uint8_t *v = t->value;
    *raw_bytes = 0;
    if (ti != NULL && ti->kind == BULKI_KIND_STRING && t->size >= 1 && v[t->size - 1] == 0 &&
        memchr(v, 0, t->size - 1) == NULL)
        return bulki_json_bytes(v, t->size - 1);
    if (ti != NULL && ti->width > 0 && t->size > 0 && t->size % ti->width == 0 &&
        (ti->kind == BULKI_KIND_SIGNED || ti->kind == BULKI_KIND_UNSIGNED ||
         ti->kind == BULKI_KIND_FLOAT || ti->kind == BULKI_KIND_BOOL)) {
        size_t cnt = t->size / ti->width;
        if (ti->kind == BULKI_KIND_BOOL)
            for (size_t i = 0; i < cnt; i++)
                if (v[i] > 1)
                    goto raw;
        if (cnt == 1)
            return elem_json(v, ti);
        json_object *a = json_object_new_array();
        for (size_t i = 0; i < cnt; i++)
            json_object_array_add(a, elem_json(v + i * ti->width, ti));
        return a;
    }
raw:
    *raw_bytes = 1;
    return NULL;
}

json_object *kvtag_json(const struct ckpt_kvtag *t)
{
    json_object *j = json_object_new_object();
    const char *tn = pdc_type_name(t->type);
    int raw;
    if (t->name != NULL) /* a record read without its key names only a long tag */
        add(j, "name", jstr(t->name));
    add(j, "type", tn ? json_object_new_string(tn) : jnum_i64(t->type));
    json_object *v = tag_value_json(t, &raw);
    if (raw) {
        add(j, "size", jnum_u64(t->size));
        add(j, "value_hex", hex_json(t->value, t->size));
    } else {
        add(j, "value", v);
    }
    return j;
}

json_object *region_json(const struct ckpt_region *g)
{
    json_object *j = json_object_new_object();
    add(j, "obj_id", jnum_u64(g->obj_id));
    add(j, "ndim", jnum_u64(g->ndim));
    add(j, "start", jnum_u64_array(g->start, g->ndim));
    add(j, "count", jnum_u64_array(g->count, g->ndim));
    add(j, "data_size", jnum_u64(g->data_size));
    add(j, "unit_size", jnum_u64(g->unit_size));
    add(j, "data_loc_type", jnum_i64(g->data_loc_type));
    add(j, "storage_location", jstr(g->storage_location));
    add(j, "offset", jnum_u64(g->offset));
    add(j, "cache_location", jstr(g->cache_location));
    add(j, "cache_offset", jnum_u64(g->cache_offset));
    if (g->has_hist) {
        json_object *h = json_object_new_object(), *r = json_object_new_array(),
                    *b = json_object_new_array();
        for (size_t i = 0; i < 2 * (size_t)g->hist.nbin; i++)
            json_object_array_add(r, bulki_json_f64(ckpt_hist_range(&g->hist, i), 0));
        for (size_t i = 0; i < (size_t)g->hist.nbin; i++)
            json_object_array_add(b, jnum_u64(ckpt_hist_bin(&g->hist, i)));
        add(h, "dtype", jnum_i64(g->hist.dtype));
        add(h, "nbin", jnum_i64(g->hist.nbin));
        add(h, "range", r);
        add(h, "bin", b);
        add(h, "incr", bulki_json_f64(g->hist.incr, 0));
        add(j, "hist", h);
    }
    return j;
}

json_object *xfer_json(const struct ckpt_xfer_region *x)
{
    json_object *j = json_object_new_object();
    add(j, "obj_id", jnum_u64(x->obj_id));
    add(j, "ndim", jnum_u64(x->ndim));
    add(j, "start", jnum_u64_array(x->start, x->ndim));
    add(j, "count", jnum_u64_array(x->count, x->ndim));
    add(j, "data_server_id", jnum_u64(x->data_server_id));
    add(j, "unit_size", jnum_u64(x->unit_size));
    return j;
}

/* ---- plain form of any BULKI (meta, and records that fail their schema) */

static json_object *plain_ent(const bulki_ent *e, int depth);

static json_object *plain_map(const bulki_map *m, int depth)
{
    bulki_map_iter it;
    bulki_ent k, v;
    json_object *o;
    int rc;
    if (depth > BULKI_MAX_DEPTH)
        return NULL;
    o = json_object_new_object();
    bulki_map_iter_init(&it, m);
    while ((rc = bulki_map_next(&k, &v, &it)) == 1) {
        const char *s;
        size_t sl;
        json_object *jv;
        char key[512];
        /* a key that is not UTF-8 cannot be a JSON key: the caller falls
         * back to BULKI's own JSON form, where it is {"hex": ...} */
        if (bulki_ent_str(&s, &sl, &k) != 0 || sl >= sizeof key || memchr(s, 0, sl) != NULL ||
            !bulki_json_utf8_valid(s, sl) || (jv = plain_ent(&v, depth + 1)) == NULL) {
            json_object_put(o);
            return NULL;
        }
        memcpy(key, s, sl);
        key[sl] = 0;
        json_object_object_add(o, key, jv);
    }
    if (rc < 0) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

static json_object *plain_elem(const bulki_ent *e, const struct bulki_type_info *ti, uint64_t i)
{
    int64_t s;
    uint64_t u;
    double d;
    switch (ti->kind) {
    case BULKI_KIND_SIGNED:
        return bulki_ent_elem_i64(&s, e, i) == 0 ? jnum_i64(s) : NULL;
    case BULKI_KIND_UNSIGNED:
        return bulki_ent_elem_u64(&u, e, i) == 0 ? jnum_u64(u) : NULL;
    case BULKI_KIND_BOOL:
        return bulki_ent_elem_u64(&u, e, i) == 0 ? json_object_new_boolean(u != 0) : NULL;
    case BULKI_KIND_FLOAT:
        return bulki_ent_elem_f64(&d, e, i) == 0 ? bulki_json_f64(d, ti->width == 4) : NULL;
    default:
        return NULL;
    }
}

static json_object *plain_ent(const bulki_ent *e, int depth)
{
    const struct bulki_type_info *ti = bulki_type_info(e->type);
    json_object *a, *x;
    if (ti == NULL || depth > BULKI_MAX_DEPTH)
        return NULL;
    if (ti->kind == BULKI_KIND_STRING) {
        const char *s;
        size_t n;
        return bulki_ent_str(&s, &n, e) == 0 ? bulki_json_bytes(s, n) : NULL;
    }
    if (e->cls == BULKI_ITEM && ti->kind != BULKI_KIND_NESTED)
        return plain_elem(e, ti, 0);
    if (e->cls == BULKI_ITEM && e->type == BULKI_T_BULKI) {
        bulki_map m;
        return bulki_ent_doc(&m, e, 0) == 0 ? plain_map(&m, depth + 1) : NULL;
    }
    a = json_object_new_array();
    for (uint64_t i = 0; i < e->count; i++) {
        if (ti->kind != BULKI_KIND_NESTED) {
            x = plain_elem(e, ti, i);
        } else if (e->type == BULKI_T_BULKI) {
            bulki_map m;
            x = bulki_ent_doc(&m, e, i) == 0 ? plain_map(&m, depth + 1) : NULL;
        } else {
            bulki_ent c;
            x = bulki_ent_at(&c, e, i) == 0 ? plain_ent(&c, depth + 1) : NULL;
        }
        if (x == NULL) {
            json_object_put(a);
            return NULL;
        }
        json_object_array_add(a, x);
    }
    return a;
}

json_object *bulki_plain_json(const bulki_map *m)
{
    return plain_map(m, 0);
}

static const char *record_kind(int db)
{
    switch (db) {
    case CKPT_DB_OBJ:
        return "object";
    case CKPT_DB_KVTAG:
        return "kvtag";
    case CKPT_DB_CONT:
        return "container";
    case CKPT_DB_REGION:
        return "region";
    case CKPT_DB_META:
        return "meta";
    default:
        return "?";
    }
}

/* Run the record decoder of db; 0 or CKPT_E_RECORD with *off. key (may be
 * NULL) is the record's store key: a kvtag record takes a short name from
 * it. */
static int decode_record(int db, const void *key, size_t klen, const void *data, size_t len,
                         size_t *off, json_object **out)
{
    int rc;
    *off = 0;
    switch (db) {
    case CKPT_DB_OBJ: {
        struct ckpt_obj o;
        if ((rc = ckpt_rec_obj_decode(&o, data, len, off)) == 0 && out)
            *out = obj_json(&o);
        return rc;
    }
    case CKPT_DB_KVTAG: {
        struct ckpt_kvtag t;
        rc = key ? ckpt_rec_kvtag_decode_entry(&t, key, klen, data, len, off)
                 : ckpt_rec_kvtag_decode(&t, data, len, off);
        if (rc == 0 && out)
            *out = kvtag_json(&t);
        return rc;
    }
    case CKPT_DB_CONT: {
        struct ckpt_cont c;
        if ((rc = ckpt_rec_cont_decode(&c, data, len, off)) == 0 && out)
            *out = cont_json(&c);
        return rc;
    }
    case CKPT_DB_REGION: {
        struct ckpt_region g;
        if ((rc = ckpt_rec_region_decode(&g, data, len, off)) == 0 && out)
            *out = region_json(&g);
        return rc;
    }
    default: {
        bulki_map m;
        if ((rc = bulki_decode_doc(&m, data, len, off)) != 0)
            return CKPT_E_RECORD;
        if (out && (*out = bulki_plain_json(&m)) == NULL)
            rc = bulki_json_from_doc(out, &m) == 0 ? 0 : CKPT_E_RECORD;
        return rc;
    }
    }
}

void record_error(char *buf, size_t n, int db, const void *data, size_t len)
{
    bulki_map m;
    size_t off = 0;
    int rc = bulki_decode_doc(&m, data, len, &off);
    if (rc != 0) {
        snprintf(buf, n, "value does not decode as BULKI: %s (%s) at byte %zu of %zu",
                 bulki_strerror(rc), bulki_errname(rc), off, len);
        return;
    }
    decode_record(db, NULL, 0, data, len, &off, NULL);
    snprintf(buf, n, "value is BULKI but not a valid %s record: a field is missing or mistyped "
             "(near byte %zu of %zu)", record_kind(db), off, len);
}

json_object *record_json(int db, const void *key, size_t klen, const void *data, size_t len,
                         char *err, size_t errn)
{
    json_object *j = NULL;
    size_t off;
    if (decode_record(db, key, klen, data, len, &off, &j) != 0 || j == NULL) {
        record_error(err, errn, db, data, len);
        return NULL;
    }
    return j;
}
