/*
 * records.c - BULKI record layouts of objects, kvtags, containers and
 * regions (docs/STORE.md, "Records"), and PDC's routing rule.
 *
 * Encoders build a bulki_doc on the stack that points at the caller's
 * struct (no copies) and write it into the caller's buffer. Decoders fill
 * the struct with views into the record. Decoders look fields up by name
 * and ignore fields they do not know, so records can gain fields.
 */
#include <string.h>

#include "bulki.h"
#include "ckpt_hooks.h"

#define K(s) BULKI_V_STRN(s, sizeof(s) - 1)
#define S(p) BULKI_V_STRN((p) ? (p) : "", (p) ? strlen(p) : 0)

uint32_t ckpt_djb2(const char *s)
{
    /* as PDC's PDC_get_hash_by_name: char is signed on x86-64 */
    uint32_t h = 5381;
    int c;
    while ((c = (signed char)*s++) != 0)
        h = ((h << 5) + h) + (uint32_t)c;
    return h;
}

int ckpt_home_obj(const char *name, int32_t time_step, int nranks)
{
    if (name == NULL || nranks < 1)
        return CKPT_E_INVAL;
    return (int)((ckpt_djb2(name) + (uint32_t)time_step) % (uint32_t)nranks);
}

int ckpt_home_cont(const char *name, int nranks)
{
    if (name == NULL || nranks < 1)
        return CKPT_E_INVAL;
    return (int)(ckpt_djb2(name) % (uint32_t)nranks);
}

double ckpt_hist_range(const struct ckpt_hist *h, size_t i)
{
    double d;
    memcpy(&d, (const uint8_t *)h->range + i * sizeof d, sizeof d);
    return d;
}

uint64_t ckpt_hist_bin(const struct ckpt_hist *h, size_t i)
{
    uint64_t v;
    memcpy(&v, (const uint8_t *)h->bin + i * sizeof v, sizeof v);
    return v;
}

static int encode(uint8_t *buf, size_t cap, size_t *len, const bulki_pair *p, size_t n)
{
    const bulki_doc d = {n, p};
    int rc;
    if (len == NULL)
        return CKPT_E_INVAL;
    if (buf == NULL)
        rc = bulki_doc_encoded_len(len, &d);
    else
        rc = bulki_encode_doc(len, buf, cap, &d);
    if (rc == BULKI_E_NOSPACE)
        return CKPT_E_NOSPACE;
    return rc ? CKPT_E_INVAL : 0;
}

/* ---- field getters over a decoded map; any failure -> CKPT_E_RECORD ---- */

/* A record is validated and indexed in one pass (bulki_decode_index): its
 * first RD_MAX pairs' keys and value positions land in rd.f, so reading each
 * of a record's ~17 fields costs a key comparison, not a walk from the
 * first pair, and nothing is read twice. Decoders ask for fields in the
 * encoder's order, and a lookup starts at the pair after the previous hit:
 * one comparison a field for records this build wrote, a search only for
 * records with fields added, dropped or reordered. Pairs beyond RD_MAX
 * (records of a later format with many more fields) are found by a walk.
 * Keys are given with their lengths (KEY("name")), so no strlen. */
#define RD_MAX 32
#define KEY(s) s, sizeof(s) - 1
struct rd {
    bulki_index ix;
    size_t *err_off;
    int rc;
    bulki_field f[RD_MAX];
};

static int rd_open(struct rd *r, const void *rec, size_t len, size_t *err_off)
{
    size_t off = 0;
    r->err_off = err_off;
    if (rec == NULL && len > 0)
        return r->rc = CKPT_E_INVAL;
    r->rc = bulki_decode_index(&r->ix, r->f, RD_MAX, rec, len, &off) ? CKPT_E_RECORD : 0;
    if (r->rc && err_off)
        *err_off = off;
    return r->rc;
}

/* The value of key k, without touching r->rc: 0, or -1 if it is absent. */
static int rd_find(struct rd *r, const char *k, size_t kl, bulki_ent *e)
{
    return bulki_index_getn_inline(e, &r->ix, k, kl) == 0 ? 0 : -1;
}

static int rd_ent(struct rd *r, const char *k, size_t kl, bulki_ent *e, int optional)
{
    if (r->rc)
        return -1;
    if (rd_find(r, k, kl, e) == 0)
        return 0;
    if (!optional) {
        r->rc = CKPT_E_RECORD;
        if (r->err_off)
            *r->err_off = r->ix.map.offset;
    }
    return -1;
}

static void rd_bad(struct rd *r, const bulki_ent *e)
{
    r->rc = CKPT_E_RECORD;
    if (r->err_off)
        *r->err_off = e->offset;
}

/* An integer in [lo, hi] from a value already looked up. */
static int64_t rd_i64_of(struct rd *r, const bulki_ent *e, int64_t lo, int64_t hi)
{
    int64_t v = 0;
    if (bulki_ent_i64_inline(&v, e) != 0 || v < lo || v > hi) {
        rd_bad(r, e);
        return 0;
    }
    return v;
}

static int64_t rd_i64(struct rd *r, const char *k, size_t kl, int64_t lo, int64_t hi,
                      int optional)
{
    bulki_ent e;
    if (rd_ent(r, k, kl, &e, optional) != 0)
        return 0;
    return rd_i64_of(r, &e, lo, hi);
}

static uint64_t rd_u64(struct rd *r, const char *k, size_t kl, int optional)
{
    bulki_ent e;
    uint64_t v = 0;
    if (rd_ent(r, k, kl, &e, optional) != 0)
        return 0;
    if (bulki_ent_u64_inline(&v, &e) != 0) {
        rd_bad(r, &e);
        return 0;
    }
    return v;
}

static double rd_f64(struct rd *r, const char *k, size_t kl)
{
    bulki_ent e;
    double v = 0;
    if (rd_ent(r, k, kl, &e, 0) != 0)
        return 0;
    if (bulki_ent_f64(&v, &e) != 0)
        rd_bad(r, &e);
    return v;
}

static const char *rd_str(struct rd *r, const char *k, size_t kl, int optional)
{
    bulki_ent e;
    const char *s = "";
    size_t n;
    if (rd_ent(r, k, kl, &e, optional) != 0)
        return "";
    if (bulki_ent_str(&s, &n, &e) != 0) {
        rd_bad(r, &e);
        return "";
    }
    return s;
}

/* u64 array of at most `max` elements -> out; returns the count. */
static uint32_t rd_u64s(struct rd *r, const char *k, size_t kl, uint64_t *out, uint32_t max)
{
    bulki_ent e;
    if (rd_ent(r, k, kl, &e, 0) != 0)
        return 0;
    if (e.type != BULKI_T_UINT64 || e.count > max) {
        rd_bad(r, &e);
        return 0;
    }
    for (uint32_t i = 0; i < e.count; i++)
        bulki_ent_elem_u64_inline(&out[i], &e, i);
    return (uint32_t)e.count;
}

/* "ndim" against the count of the array read: looked up in the encoder's
 * order (found, or not: have), checked after the fields that precede it in
 * the decoder (so a record with several faults reports the same one). */
static void rd_ndim_check(struct rd *r, int have, const bulki_ent *e, int64_t lo, uint32_t ndim)
{
    if (r->rc != 0)
        return;
    if (!have) {
        r->rc = CKPT_E_RECORD;
        if (r->err_off)
            *r->err_off = r->ix.map.offset;
        return;
    }
    if (rd_i64_of(r, e, lo, CKPT_MAX_DIM) != (int64_t)ndim && r->rc == 0) {
        r->rc = CKPT_E_RECORD;
        if (r->err_off)
            *r->err_off = r->ix.map.offset;
    }
}

#define I32 INT32_MIN, INT32_MAX

/* ---- objects ---- */

int ckpt_rec_obj_encode(size_t *len, uint8_t *buf, size_t cap, const struct ckpt_obj *o)
{
    if (o == NULL || o->obj_name == NULL || o->ndim > CKPT_MAX_DIM)
        return CKPT_E_INVAL;
    const bulki_pair p[] = {
        {K("obj_id"), BULKI_V_ITEM(BULKI_T_UINT64, &o->obj_id)},
        {K("obj_name"), S(o->obj_name)},
        {K("cont_id"), BULKI_V_ITEM(BULKI_T_UINT64, &o->cont_id)},
        {K("user_id"), BULKI_V_ITEM(BULKI_T_INT32, &o->user_id)},
        {K("app_name"), S(o->app_name)},
        {K("time_step"), BULKI_V_ITEM(BULKI_T_INT32, &o->time_step)},
        {K("data_type"), BULKI_V_ITEM(BULKI_T_INT32, &o->data_type)},
        {K("ndim"), BULKI_V_ITEM(BULKI_T_UINT32, &o->ndim)},
        {K("dims"), BULKI_V_ARRAY(BULKI_T_UINT64, o->dims, o->ndim)},
        {K("create_time"), BULKI_V_ITEM(BULKI_T_INT64, &o->create_time)},
        {K("last_modified_time"), BULKI_V_ITEM(BULKI_T_INT64, &o->last_modified_time)},
        {K("data_location"), S(o->data_location)},
        {K("tags"), S(o->tags)},
        {K("transform_state"), BULKI_V_ITEM(BULKI_T_INT32, &o->transform_state)},
        {K("data_server_id"), BULKI_V_ITEM(BULKI_T_UINT32, &o->data_server_id)},
        {K("region_partition"), BULKI_V_ITEM(BULKI_T_UINT8, &o->region_partition)},
        {K("consistency"), BULKI_V_ITEM(BULKI_T_UINT8, &o->consistency)},
    };
    return encode(buf, cap, len, p, sizeof p / sizeof p[0]);
}

int ckpt_rec_obj_decode(struct ckpt_obj *o, const void *rec, size_t len, size_t *err_off)
{
    struct rd r;
    bulki_ent nd;
    if (o == NULL)
        return CKPT_E_INVAL;
    memset(o, 0, sizeof *o);
    if (rd_open(&r, rec, len, err_off))
        return r.rc;
    o->obj_id = rd_u64(&r, KEY("obj_id"), 0);
    o->obj_name = rd_str(&r, KEY("obj_name"), 0);
    o->cont_id = rd_u64(&r, KEY("cont_id"), 1);
    o->user_id = (int32_t)rd_i64(&r, KEY("user_id"), I32, 1);
    o->app_name = rd_str(&r, KEY("app_name"), 1);
    o->time_step = (int32_t)rd_i64(&r, KEY("time_step"), I32, 0);
    o->data_type = (int32_t)rd_i64(&r, KEY("data_type"), I32, 1);
    int have_nd = rd_find(&r, KEY("ndim"), &nd) == 0;
    o->ndim = rd_u64s(&r, KEY("dims"), o->dims, CKPT_MAX_DIM);
    o->create_time = rd_i64(&r, KEY("create_time"), INT64_MIN, INT64_MAX, 1);
    o->last_modified_time = rd_i64(&r, KEY("last_modified_time"), INT64_MIN, INT64_MAX, 1);
    o->data_location = rd_str(&r, KEY("data_location"), 1);
    o->tags = rd_str(&r, KEY("tags"), 1);
    o->transform_state = (int32_t)rd_i64(&r, KEY("transform_state"), I32, 1);
    o->data_server_id = (uint32_t)rd_i64(&r, KEY("data_server_id"), 0, UINT32_MAX, 1);
    o->region_partition = (uint8_t)rd_i64(&r, KEY("region_partition"), 0, 255, 1);
    o->consistency = (uint8_t)rd_i64(&r, KEY("consistency"), 0, 255, 1);
    rd_ndim_check(&r, have_nd, &nd, 0, o->ndim);
    return r.rc;
}

/* ---- what the store's indexes need of a stored record ---- */

int ckpt_rec_keys(struct ckpt_rec_keys *k, int db, const void *rec, size_t len)
{
    struct rd r;
    bulki_ent e;
    const char *key;
    size_t kl;
    int optional = 0;
    if (k == NULL)
        return CKPT_E_INVAL;
    memset(k, 0, sizeof *k);
    switch (db) {
    case CKPT_DB_OBJ:
        key = "obj_name";
        break;
    case CKPT_DB_CONT:
        key = "cont_name";
        break;
    case CKPT_DB_KVTAG: /* only a long name is in the record */
        key = "name";
        optional = 1;
        break;
    default:
        return CKPT_E_INVAL;
    }
    kl = strlen(key);
    if (rd_open(&r, rec, len, NULL))
        return r.rc;
    if (rd_ent(&r, key, kl, &e, optional) == 0 && bulki_ent_str(&k->name, &k->nlen, &e) != 0)
        rd_bad(&r, &e);
    if (db == CKPT_DB_OBJ) {
        k->ts = (int32_t)rd_i64(&r, KEY("time_step"), I32, 0);
        k->cont_id = rd_u64(&r, KEY("cont_id"), 1);
    }
    return r.rc;
}

/* ---- kvtags ---- */

/* Format 2's kvtag record is {"v": value}, plus "t": the PDC type code
 * only when it differs from the value entity's type (raw bytes kept as a
 * PDC_UINT8 array), plus "name" only for names too long to be whole in the
 * key (docs/STORE.md, "Long names"): a short name is the key's, so the
 * record does not repeat it. Format 1's {"name", "type", "value"} records
 * decode too. */
int ckpt_rec_kvtag_encode(size_t *len, uint8_t *buf, size_t cap, const struct ckpt_kvtag *t)
{
    if (t == NULL || t->name == NULL || (t->size > 0 && t->value == NULL))
        return CKPT_E_INVAL;
    const struct bulki_type_info *ti = bulki_type_info((unsigned)(uint8_t)t->type);
    bulki_value v;
    int8_t type = t->type;
    uint8_t vtype; /* the value entity's type code */
    if (ti && ti->kind == BULKI_KIND_STRING && t->size > 0 &&
        ((const char *)t->value)[t->size - 1] == 0 &&
        memchr(t->value, 0, t->size - 1) == NULL) {
        v = BULKI_V_STRN(t->value, t->size - 1);
        vtype = ti->code;
    } else if (ti && ti->width > 0 && t->size > 0 && t->size % ti->width == 0) {
        v = t->size == ti->width ? BULKI_V_ITEM(ti->code, t->value)
                                 : BULKI_V_ARRAY(ti->code, t->value, t->size / ti->width);
        vtype = ti->code;
        if (ti->kind == BULKI_KIND_BOOL)
            for (uint32_t i = 0; i < t->size; i++)
                if (((const uint8_t *)t->value)[i] > 1) {
                    v = BULKI_V_ARRAY(BULKI_T_UINT8, t->value, t->size);
                    vtype = BULKI_T_UINT8;
                }
    } else {
        /* anything else keeps its bytes exactly, typed by "t" */
        v = BULKI_V_ARRAY(BULKI_T_UINT8, t->value, t->size);
        vtype = BULKI_T_UINT8;
    }
    size_t nlen = strlen(t->name);
    bulki_pair p[3] = {{K("v"), v}};
    size_t n = 1;
    if ((uint8_t)type != vtype)
        p[n++] = (bulki_pair){K("t"), BULKI_V_ITEM(BULKI_T_INT8, &type)};
    if (nlen > CKPT_NAME_INLINE_MAX)
        p[n++] = (bulki_pair){K("name"), BULKI_V_STRN(t->name, nlen)};
    return encode(buf, cap, len, p, n);
}

/* The common format 2 record, {"v": value} with every size below 128, is
 * read positionally: each byte the encoder writes is checked in place,
 * which is the whole of BULKI's validation for this layout (sizes, the
 * "v" key, both offsets, the value's type, class, count against its
 * payload, string termination, boolean bytes, no trailing bytes). It
 * accepts only the encoder's canonical bytes; anything else (a type pair,
 * a name, longer values, format 1, damage) goes to the general decoder,
 * which accepts or refuses it. Returns 1 if it filled *t. */
static int kvtag_fast(struct ckpt_kvtag *t, const uint8_t *r, size_t len)
{
    if (len < 14 || len > 14 + 41)
        return 0;
    size_t plen = len - 14; /* value payload bytes */
    if (r[0] != 86 + plen || r[1] != 1 || r[2] != 20 || r[3] != 18 + plen || r[4] != 20 ||
        r[5] != BULKI_T_STRING || r[6] != 1 || r[7] != 'v' || r[8] != 0 || r[9] != 9 ||
        r[10] != 18 + plen || r[13 + plen] != 13 + plen)
        return 0;
    unsigned type = r[11] & 0x1f, cls = r[11] >> 5, count = r[12];
    const struct bulki_type_info *ti = bulki_type_info(type);
    const uint8_t *p = r + 13;
    if (ti == NULL || cls > 1 || count > 127 || (cls == 0 && count != 1))
        return 0;
    switch (ti->kind) {
    case BULKI_KIND_STRING:
        if (cls != 0 || plen == 0 || p[plen - 1] != 0 || memchr(p, 0, plen - 1) != NULL)
            return 0;
        break;
    case BULKI_KIND_BOOL:
        for (size_t i = 0; i < plen; i++)
            if (p[i] > 1)
                return 0;
        /* fall through */
    case BULKI_KIND_SIGNED:
    case BULKI_KIND_UNSIGNED:
    case BULKI_KIND_FLOAT:
        if (plen != (size_t)count * ti->width)
            return 0;
        break;
    default:
        return 0;
    }
    t->type = (int8_t)type;
    t->size = (uint32_t)plen; /* a string's counts its NUL, as PDC's does */
    t->value = p;
    t->name = NULL;
    return 1;
}

/* One validating pass that indexes the pairs (a record has at most three):
 * "v"/"value", "t"/"type", "name"; other keys are skipped, and of a key
 * given twice the last pair counts. */
#define KV_MAX 8
static int kvtag_pair(struct ckpt_kvtag *t, const char *ks, size_t kl, const bulki_ent *e,
                      bulki_ent *val, bulki_ent *type, int *have, size_t *off)
{
    if (ks == NULL)
        return 0;
    if ((kl == 1 && ks[0] == 'v') || (kl == 5 && memcmp(ks, "value", 5) == 0)) {
        *val = *e;
        *have |= 1;
    } else if ((kl == 1 && ks[0] == 't') || (kl == 4 && memcmp(ks, "type", 4) == 0)) {
        *type = *e;
        *have |= 2;
    } else if (kl == 4 && memcmp(ks, "name", 4) == 0) {
        size_t n;
        if (bulki_ent_str(&t->name, &n, e) != 0) {
            *off = e->offset;
            return -1;
        }
    }
    return 0;
}

int ckpt_rec_kvtag_decode(struct ckpt_kvtag *t, const void *rec, size_t len, size_t *err_off)
{
    bulki_field f[KV_MAX];
    bulki_index ix;
    bulki_ent val, type;
    size_t off = 0;
    int have = 0;
    if (t == NULL)
        return CKPT_E_INVAL;
    if (rec != NULL && kvtag_fast(t, rec, len))
        return 0;
    memset(t, 0, sizeof *t);
    memset(&val, 0, sizeof val);
    memset(&type, 0, sizeof type);
    if (rec == NULL && len > 0)
        return CKPT_E_INVAL;
    if (bulki_decode_index(&ix, f, KV_MAX, rec, len, &off) != 0)
        goto bad;
    for (size_t i = 0; i < ix.n; i++) {
        bulki_ent e;
        if (bulki_field_value_inline(&e, &ix, &f[i]) != 0) {
            off = f[i].value_off;
            goto bad;
        }
        if (kvtag_pair(t, f[i].key, f[i].key_len, &e, &val, &type, &have, &off) != 0)
            goto bad;
    }
    if (ix.map.npairs > ix.n) {
        /* more pairs than any encoder writes: walk to the rest */
        bulki_map_iter it;
        bulki_ent k, e;
        int got;
        bulki_map_iter_init(&it, &ix.map);
        while ((got = bulki_map_next(&k, &e, &it)) == 1)
            if (it.i > ix.n && k.type == BULKI_T_STRING &&
                kvtag_pair(t, (const char *)k.payload, k.payload_len, &e, &val, &type, &have,
                           &off) != 0)
                goto bad;
        if (got < 0) {
            off = ix.map.offset;
            goto bad;
        }
    }
    if (!(have & 1)) {
        off = ix.map.offset;
        goto bad;
    }
    const struct bulki_type_info *ti = bulki_type_info(val.type);
    if (ti->kind == BULKI_KIND_NESTED || val.payload_len > UINT32_MAX - 1) {
        off = val.offset;
        goto bad;
    }
    if (have & 2) {
        int64_t ty;
        if (bulki_ent_i64_inline(&ty, &type) != 0 || ty < INT8_MIN || ty > INT8_MAX) {
            off = type.offset;
            goto bad;
        }
        t->type = (int8_t)ty;
    } else {
        t->type = (int8_t)val.type; /* format 2: the value's own type */
    }
    t->value = val.payload;
    /* a string's size counts its NUL, which follows the payload */
    t->size = (uint32_t)(val.payload_len + (ti->kind == BULKI_KIND_STRING ? 1 : 0));
    return 0;
bad:
    if (err_off)
        *err_off = off;
    memset(t, 0, sizeof *t);
    return CKPT_E_RECORD;
}

int ckpt_rec_kvtag_decode_entry(struct ckpt_kvtag *t, const void *key, size_t klen,
                                const void *rec, size_t len, size_t *err_off)
{
    int hashed = 0;
    int rc = ckpt_rec_kvtag_decode(t, rec, len, err_off);
    if (rc != 0 || t->name != NULL)
        return rc;
    /* the key is owner . namekey, and a short namekey is the name and its
     * NUL: a C string in place */
    if (key == NULL || klen <= 8 ||
        ckpt_key_name_len((const uint8_t *)key + 8, klen - 8, &hashed) != klen - 8 || hashed) {
        if (err_off)
            *err_off = 0;
        memset(t, 0, sizeof *t);
        return CKPT_E_RECORD;
    }
    t->name = (const char *)key + 8;
    return 0;
}

/* ---- containers ---- */

int ckpt_rec_cont_encode(size_t *len, uint8_t *buf, size_t cap, const struct ckpt_cont *c)
{
    if (c == NULL || c->cont_name == NULL)
        return CKPT_E_INVAL;
    const bulki_pair p[] = {
        {K("cont_id"), BULKI_V_ITEM(BULKI_T_UINT64, &c->cont_id)},
        {K("cont_name"), S(c->cont_name)},
        {K("tags"), S(c->tags)},
    };
    return encode(buf, cap, len, p, sizeof p / sizeof p[0]);
}

int ckpt_rec_cont_decode(struct ckpt_cont *c, const void *rec, size_t len, size_t *err_off)
{
    struct rd r;
    if (c == NULL)
        return CKPT_E_INVAL;
    memset(c, 0, sizeof *c);
    if (rd_open(&r, rec, len, err_off))
        return r.rc;
    c->cont_id = rd_u64(&r, KEY("cont_id"), 0);
    c->cont_name = rd_str(&r, KEY("cont_name"), 0);
    c->tags = rd_str(&r, KEY("tags"), 1);
    return r.rc;
}

/* ---- regions ---- */

int ckpt_rec_region_encode(size_t *len, uint8_t *buf, size_t cap, const struct ckpt_region *g)
{
    if (g == NULL || g->ndim == 0 || g->ndim > CKPT_MAX_DIM)
        return CKPT_E_INVAL;
    const struct ckpt_hist *h = &g->hist;
    if (g->has_hist && (h->nbin < 0 || (h->nbin > 0 && (h->range == NULL || h->bin == NULL))))
        return CKPT_E_INVAL;
    const bulki_pair hp[] = {
        {K("dtype"), BULKI_V_ITEM(BULKI_T_INT32, &h->dtype)},
        {K("nbin"), BULKI_V_ITEM(BULKI_T_INT32, &h->nbin)},
        {K("range"), BULKI_V_ARRAY(BULKI_T_DOUBLE, h->range, g->has_hist ? 2 * (uint64_t)h->nbin : 0)},
        {K("bin"), BULKI_V_ARRAY(BULKI_T_UINT64, h->bin, g->has_hist ? (uint64_t)h->nbin : 0)},
        {K("incr"), BULKI_V_ITEM(BULKI_T_DOUBLE, &h->incr)},
    };
    const bulki_doc hd = {sizeof hp / sizeof hp[0], hp};
    const bulki_pair p[] = {
        {K("obj_id"), BULKI_V_ITEM(BULKI_T_UINT64, &g->obj_id)},
        {K("ndim"), BULKI_V_ITEM(BULKI_T_UINT32, &g->ndim)},
        {K("start"), BULKI_V_ARRAY(BULKI_T_UINT64, g->start, g->ndim)},
        {K("count"), BULKI_V_ARRAY(BULKI_T_UINT64, g->count, g->ndim)},
        {K("data_size"), BULKI_V_ITEM(BULKI_T_UINT64, &g->data_size)},
        {K("unit_size"), BULKI_V_ITEM(BULKI_T_UINT64, &g->unit_size)},
        {K("data_loc_type"), BULKI_V_ITEM(BULKI_T_INT32, &g->data_loc_type)},
        {K("storage_location"), S(g->storage_location)},
        {K("offset"), BULKI_V_ITEM(BULKI_T_UINT64, &g->offset)},
        {K("cache_location"), S(g->cache_location)},
        {K("cache_offset"), BULKI_V_ITEM(BULKI_T_UINT64, &g->cache_offset)},
        {K("hist"), BULKI_V_DOC(&hd)},
    };
    /* without a histogram the last pair is left out */
    return encode(buf, cap, len, p, sizeof p / sizeof p[0] - (g->has_hist ? 0 : 1));
}

int ckpt_rec_region_decode(struct ckpt_region *g, const void *rec, size_t len, size_t *err_off)
{
    struct rd r;
    bulki_ent e, nd;
    uint64_t cnt[CKPT_MAX_DIM];
    if (g == NULL)
        return CKPT_E_INVAL;
    memset(g, 0, sizeof *g);
    if (rd_open(&r, rec, len, err_off))
        return r.rc;
    g->obj_id = rd_u64(&r, KEY("obj_id"), 0);
    int have_nd = rd_find(&r, KEY("ndim"), &nd) == 0;
    g->ndim = rd_u64s(&r, KEY("start"), g->start, CKPT_MAX_DIM);
    if (rd_u64s(&r, KEY("count"), cnt, CKPT_MAX_DIM) != g->ndim && r.rc == 0) {
        r.rc = CKPT_E_RECORD;
        if (err_off)
            *err_off = r.ix.map.offset;
    }
    memcpy(g->count, cnt, sizeof cnt);
    if (r.rc == 0 && g->ndim == 0) {
        r.rc = CKPT_E_RECORD;
        if (err_off)
            *err_off = r.ix.map.offset;
    }
    rd_ndim_check(&r, have_nd, &nd, 1, g->ndim);
    g->data_size = rd_u64(&r, KEY("data_size"), 0);
    g->unit_size = rd_u64(&r, KEY("unit_size"), 1);
    g->data_loc_type = (int32_t)rd_i64(&r, KEY("data_loc_type"), I32, 1);
    g->storage_location = rd_str(&r, KEY("storage_location"), 1);
    g->offset = rd_u64(&r, KEY("offset"), 1);
    g->cache_location = rd_str(&r, KEY("cache_location"), 1);
    g->cache_offset = rd_u64(&r, KEY("cache_offset"), 1);
    if (r.rc == 0 && rd_ent(&r, KEY("hist"), &e, 1) == 0) {
        /* the histogram: its pairs are indexed as the record's were (one
         * more pass over this small nested BULKI), and read the same way */
        struct rd h = {.err_off = err_off, .rc = 0};
        bulki_ent re, be;
        if (e.type != BULKI_T_BULKI || e.cls != BULKI_ITEM ||
            bulki_ent_index(&h.ix, h.f, RD_MAX, &e, 0) != 0) {
            rd_bad(&r, &e);
            return r.rc;
        }
        g->has_hist = 1;
        g->hist.dtype = (int32_t)rd_i64(&h, KEY("dtype"), I32, 0);
        g->hist.nbin = (int32_t)rd_i64(&h, KEY("nbin"), 0, INT32_MAX, 0);
        g->hist.incr = rd_f64(&h, KEY("incr"));
        if (rd_ent(&h, KEY("range"), &re, 0) == 0 && rd_ent(&h, KEY("bin"), &be, 0) == 0) {
            if (re.type != BULKI_T_DOUBLE || re.count != 2 * (uint64_t)g->hist.nbin ||
                be.type != BULKI_T_UINT64 || be.count != (uint64_t)g->hist.nbin)
                rd_bad(&h, &re);
            g->hist.range = re.payload;
            g->hist.bin = be.payload;
        }
        r.rc = h.rc;
    }
    return r.rc;
}

/* ---- transfer regions (PDC's transfer-request table) ---- */

int ckpt_rec_xfer_encode(size_t *len, uint8_t *buf, size_t cap, const struct ckpt_xfer_region *x)
{
    if (x == NULL || x->ndim == 0 || x->ndim > CKPT_MAX_DIM)
        return CKPT_E_INVAL;
    const bulki_pair p[] = {
        {K("obj_id"), BULKI_V_ITEM(BULKI_T_UINT64, &x->obj_id)},
        {K("ndim"), BULKI_V_ITEM(BULKI_T_UINT32, &x->ndim)},
        {K("start"), BULKI_V_ARRAY(BULKI_T_UINT64, x->start, x->ndim)},
        {K("count"), BULKI_V_ARRAY(BULKI_T_UINT64, x->count, x->ndim)},
        {K("data_server_id"), BULKI_V_ITEM(BULKI_T_UINT32, &x->data_server_id)},
        {K("unit_size"), BULKI_V_ITEM(BULKI_T_UINT64, &x->unit_size)},
    };
    return encode(buf, cap, len, p, sizeof p / sizeof p[0]);
}

int ckpt_rec_xfer_decode(struct ckpt_xfer_region *x, const void *rec, size_t len, size_t *err_off)
{
    struct rd r;
    bulki_ent nd;
    uint64_t cnt[CKPT_MAX_DIM];
    if (x == NULL)
        return CKPT_E_INVAL;
    memset(x, 0, sizeof *x);
    if (rd_open(&r, rec, len, err_off))
        return r.rc;
    x->obj_id = rd_u64(&r, KEY("obj_id"), 0);
    int have_nd = rd_find(&r, KEY("ndim"), &nd) == 0;
    x->ndim = rd_u64s(&r, KEY("start"), x->start, CKPT_MAX_DIM);
    if ((rd_u64s(&r, KEY("count"), cnt, CKPT_MAX_DIM) != x->ndim || x->ndim == 0) && r.rc == 0) {
        r.rc = CKPT_E_RECORD;
        if (err_off)
            *err_off = r.ix.map.offset;
    }
    memcpy(x->count, cnt, sizeof cnt);
    rd_ndim_check(&r, have_nd, &nd, 1, x->ndim);
    x->data_server_id = (uint32_t)rd_i64(&r, KEY("data_server_id"), 0, UINT32_MAX, 0);
    x->unit_size = rd_u64(&r, KEY("unit_size"), 0);
    return r.rc;
}

/* ---- PDC's DART (IDIOMS) entries (pdc_server `i`) ---- */

int ckpt_rec_dart_encode(size_t *len, uint8_t *buf, size_t cap, const struct ckpt_dart_entry *e)
{
    if (e == NULL || e->key == NULL || (e->value_len > 0 && e->value == NULL))
        return CKPT_E_INVAL;
    const uint8_t sfx = e->is_suffix ? 1 : 0, str = e->string_value ? 1 : 0;
    const bulki_pair p[] = {
        {K("key"), S(e->key)},
        {K("value"), BULKI_V_ARRAY(BULKI_T_UINT8, e->value_len ? e->value : "", e->value_len)},
        {K("type"), BULKI_V_ITEM(BULKI_T_INT32, &e->type)},
        {K("obj_ref"), BULKI_V_ITEM(BULKI_T_UINT64, &e->obj_ref)},
        {K("vnode"), BULKI_V_ITEM(BULKI_T_UINT32, &e->vnode_id)},
        {K("client"), BULKI_V_ITEM(BULKI_T_UINT32, &e->src_client_id)},
        {K("suffix"), BULKI_V_ITEM(BULKI_T_UINT8, &sfx)},
        {K("string"), BULKI_V_ITEM(BULKI_T_UINT8, &str)},
    };
    return encode(buf, cap, len, p, sizeof p / sizeof p[0]);
}

int ckpt_rec_dart_decode(struct ckpt_dart_entry *e, const void *rec, size_t len, size_t *err_off)
{
    struct rd r;
    bulki_ent v;
    if (e == NULL)
        return CKPT_E_INVAL;
    memset(e, 0, sizeof *e);
    if (rd_open(&r, rec, len, err_off))
        return r.rc;
    e->key = rd_str(&r, KEY("key"), 0);
    if (rd_ent(&r, KEY("value"), &v, 0) == 0) {
        if (v.type != BULKI_T_UINT8 || v.payload_len > UINT32_MAX)
            rd_bad(&r, &v);
        else {
            e->value = v.payload;
            e->value_len = (uint32_t)v.payload_len;
        }
    }
    e->type = (int32_t)rd_i64(&r, KEY("type"), I32, 0);
    e->obj_ref = rd_u64(&r, KEY("obj_ref"), 0);
    e->vnode_id = (uint32_t)rd_i64(&r, KEY("vnode"), 0, UINT32_MAX, 0);
    e->src_client_id = (uint32_t)rd_i64(&r, KEY("client"), 0, UINT32_MAX, 0);
    e->is_suffix = (uint8_t)rd_i64(&r, KEY("suffix"), 0, 1, 0);
    e->string_value = (uint8_t)rd_i64(&r, KEY("string"), 0, 1, 0);
    return r.rc;
}
