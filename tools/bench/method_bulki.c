/*
 * method_bulki.c - a full BULKI snapshot of the tables at close, as PDC pull
 * request 305 proposed, but with this project's O(n) encoder; restart reads
 * the file, validates and decodes it, and rebuilds the tables.
 *
 * The snapshot is one top-level BULKI per rank: three header pairs
 * ("format", "rank", "nranks"), then one pair per record in rebuild order,
 * keyed "c" (container), "o" (object), "t" (kvtag), "m" (a container's
 * members) or "r" (region), whose value is a nested BULKI with the fields of
 * the store's record of that kind (docs/STORE.md) plus the owner ("t") or the
 * member id array ("m"). A flat list of pairs lets restart walk the records
 * in O(1) each (bulki_map_next); a BULKI array of documents can only be
 * indexed in O(i).
 *
 * model_foreach's views live only during the callback, so close first
 * copies the tables into an arena, then builds the description and encodes
 * it in one pass into one buffer, and writes that buffer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bulki.h"
#include "methods.h"

#define K(s) BULKI_V_STRN(s, sizeof(s) - 1)
#define S(p) BULKI_V_STRN((p) ? (p) : "", (p) ? strlen(p) : 0)

static void bk_path(char *out, size_t n, const char *root, int rank)
{
    snprintf(out, n, "%s/rank-%d.bulki", root, rank);
}

struct bk_ctx {
    char path[4200];
    int rank, nranks;
};

static int bk_open(void **ctx, const char *root, int rank, int nranks, struct model_sink *sink)
{
    struct bk_ctx *c = malloc(sizeof *c);
    (void)sink; /* nothing during the workload */
    if (c == NULL)
        return CKPT_E_NOMEM;
    bk_path(c->path, sizeof c->path, root, rank);
    c->rank = rank;
    c->nranks = nranks;
    *ctx = c;
    return 0;
}

static void bk_discard(void *ctx)
{
    free(ctx);
}

/* ---- close ---- */

/* A growable array of pairs: the top-level document. */
struct bk_snap {
    struct bench_arena ar;
    bulki_pair *top;
    size_t ntop, cap;
    int err;
    /* the members pair being filled (consecutive members of one container) */
    uint64_t mcont;
    uint64_t *mids;
    size_t nm, capm;
};

static bulki_pair *top_pair(struct bk_snap *s)
{
    if (s->ntop == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 4096;
        bulki_pair *np = realloc(s->top, nc * sizeof *np);
        if (np == NULL) {
            s->err = CKPT_E_NOMEM;
            return NULL;
        }
        s->top = np;
        s->cap = nc;
    }
    return &s->top[s->ntop++];
}

/* A pair kind -> nested document of n pairs p (in the arena). */
static int add_doc(struct bk_snap *s, bulki_value key, bulki_pair *p, size_t n)
{
    bulki_doc *d = bench_arena_alloc(&s->ar, sizeof *d);
    bulki_pair *tp = top_pair(s);
    if (d == NULL || tp == NULL)
        return s->err = CKPT_E_NOMEM;
    d->npairs = n;
    d->pairs = p;
    tp->key = key;
    tp->value = BULKI_V_DOC(d);
    return 0;
}

static int flush_members(struct bk_snap *s)
{
    if (s->nm == 0)
        return 0;
    uint64_t *cid = bench_arena_alloc(&s->ar, sizeof *cid);
    uint64_t *ids = bench_arena_alloc(&s->ar, s->nm * sizeof *ids);
    bulki_pair *p = bench_arena_alloc(&s->ar, 2 * sizeof *p);
    if (cid == NULL || ids == NULL || p == NULL)
        return s->err = CKPT_E_NOMEM;
    *cid = s->mcont;
    memcpy(ids, s->mids, s->nm * sizeof *ids);
    p[0] = (bulki_pair){K("cont_id"), BULKI_V_ITEM(BULKI_T_UINT64, cid)};
    p[1] = (bulki_pair){K("ids"), BULKI_V_ARRAY(BULKI_T_UINT64, ids, s->nm)};
    s->nm = 0;
    return add_doc(s, K("m"), p, 2);
}

static int sn_cont(const struct ckpt_cont *c, void *arg)
{
    struct bk_snap *s = arg;
    struct ckpt_cont *x = bench_arena_alloc(&s->ar, sizeof *x);
    bulki_pair *p = bench_arena_alloc(&s->ar, 3 * sizeof *p);
    if (x == NULL || p == NULL)
        return s->err = CKPT_E_NOMEM;
    x->cont_id = c->cont_id;
    x->cont_name = bench_arena_str(&s->ar, c->cont_name);
    x->tags = bench_arena_str(&s->ar, c->tags);
    if (x->cont_name == NULL || x->tags == NULL)
        return s->err = CKPT_E_NOMEM;
    p[0] = (bulki_pair){K("cont_id"), BULKI_V_ITEM(BULKI_T_UINT64, &x->cont_id)};
    p[1] = (bulki_pair){K("cont_name"), S(x->cont_name)};
    p[2] = (bulki_pair){K("tags"), S(x->tags)};
    return add_doc(s, K("c"), p, 3);
}

static int sn_obj(const struct ckpt_obj *o, void *arg)
{
    struct bk_snap *s = arg;
    struct ckpt_obj *x = bench_arena_alloc(&s->ar, sizeof *x);
    bulki_pair *p = bench_arena_alloc(&s->ar, 17 * sizeof *p);
    if (x == NULL || p == NULL || o->ndim > CKPT_MAX_DIM)
        return s->err = x && p ? CKPT_E_INVAL : CKPT_E_NOMEM;
    *x = *o;
    x->obj_name = bench_arena_str(&s->ar, o->obj_name);
    x->app_name = bench_arena_str(&s->ar, o->app_name);
    x->data_location = bench_arena_str(&s->ar, o->data_location);
    x->tags = bench_arena_str(&s->ar, o->tags);
    if (!x->obj_name || !x->app_name || !x->data_location || !x->tags)
        return s->err = CKPT_E_NOMEM;
    const bulki_pair q[17] = {
        {K("obj_id"), BULKI_V_ITEM(BULKI_T_UINT64, &x->obj_id)},
        {K("obj_name"), S(x->obj_name)},
        {K("cont_id"), BULKI_V_ITEM(BULKI_T_UINT64, &x->cont_id)},
        {K("user_id"), BULKI_V_ITEM(BULKI_T_INT32, &x->user_id)},
        {K("app_name"), S(x->app_name)},
        {K("time_step"), BULKI_V_ITEM(BULKI_T_INT32, &x->time_step)},
        {K("data_type"), BULKI_V_ITEM(BULKI_T_INT32, &x->data_type)},
        {K("ndim"), BULKI_V_ITEM(BULKI_T_UINT32, &x->ndim)},
        {K("dims"), BULKI_V_ARRAY(BULKI_T_UINT64, x->dims, x->ndim)},
        {K("create_time"), BULKI_V_ITEM(BULKI_T_INT64, &x->create_time)},
        {K("last_modified_time"), BULKI_V_ITEM(BULKI_T_INT64, &x->last_modified_time)},
        {K("data_location"), S(x->data_location)},
        {K("tags"), S(x->tags)},
        {K("transform_state"), BULKI_V_ITEM(BULKI_T_INT32, &x->transform_state)},
        {K("data_server_id"), BULKI_V_ITEM(BULKI_T_UINT32, &x->data_server_id)},
        {K("region_partition"), BULKI_V_ITEM(BULKI_T_UINT8, &x->region_partition)},
        {K("consistency"), BULKI_V_ITEM(BULKI_T_UINT8, &x->consistency)},
    };
    memcpy(p, q, sizeof q);
    return add_doc(s, K("o"), p, 17);
}

struct bk_tag {
    uint64_t owner;
    int8_t type;
    const char *name;
    const void *value;
};

static int sn_kvtag(uint64_t owner, const struct ckpt_kvtag *t, void *arg)
{
    struct bk_snap *s = arg;
    struct bk_tag *x = bench_arena_alloc(&s->ar, sizeof *x);
    bulki_pair *p = bench_arena_alloc(&s->ar, 4 * sizeof *p);
    void *val = bench_arena_alloc(&s->ar, t->size ? t->size : 1);
    if (x == NULL || p == NULL || val == NULL || (x->name = bench_arena_str(&s->ar, t->name)) == NULL)
        return s->err = CKPT_E_NOMEM;
    x->owner = owner;
    x->type = t->type;
    memcpy(val, t->value, t->size);
    x->value = val;
    /* the value as the store's kvtag record holds it (records.c) */
    const struct bulki_type_info *ti = bulki_type_info((unsigned)(uint8_t)t->type);
    bulki_value v;
    if (ti && ti->kind == BULKI_KIND_STRING && t->size > 0 && ((const char *)val)[t->size - 1] == 0 &&
        memchr(val, 0, t->size - 1) == NULL)
        v = BULKI_V_STRN(val, t->size - 1);
    else if (ti && ti->width > 0 && ti->kind != BULKI_KIND_BOOL && t->size > 0 &&
             t->size % ti->width == 0)
        v = t->size == ti->width ? BULKI_V_ITEM(ti->code, val)
                                 : BULKI_V_ARRAY(ti->code, val, t->size / ti->width);
    else
        v = BULKI_V_ARRAY(BULKI_T_UINT8, val, t->size);
    p[0] = (bulki_pair){K("owner"), BULKI_V_ITEM(BULKI_T_UINT64, &x->owner)};
    p[1] = (bulki_pair){K("name"), S(x->name)};
    p[2] = (bulki_pair){K("type"), BULKI_V_ITEM(BULKI_T_INT8, &x->type)};
    p[3] = (bulki_pair){K("value"), v};
    return add_doc(s, K("t"), p, 4);
}

static int sn_member(uint64_t cont, uint64_t obj, void *arg)
{
    struct bk_snap *s = arg;
    if (s->nm && cont != s->mcont && flush_members(s) != 0)
        return s->err;
    if (s->nm == s->capm) {
        size_t nc = s->capm ? s->capm * 2 : 1024;
        uint64_t *n = realloc(s->mids, nc * sizeof *n);
        if (n == NULL)
            return s->err = CKPT_E_NOMEM;
        s->mids = n;
        s->capm = nc;
    }
    s->mcont = cont;
    s->mids[s->nm++] = obj;
    return 0;
}

static int sn_region(const struct ckpt_region *g, void *arg)
{
    struct bk_snap *s = arg;
    if (flush_members(s) != 0)
        return s->err;
    if (g->ndim == 0 || g->ndim > CKPT_MAX_DIM || (g->has_hist && (g->hist.nbin < 0)))
        return s->err = CKPT_E_INVAL;
    struct ckpt_region *x = bench_arena_alloc(&s->ar, sizeof *x);
    bulki_pair *p = bench_arena_alloc(&s->ar, 12 * sizeof *p);
    if (x == NULL || p == NULL)
        return s->err = CKPT_E_NOMEM;
    *x = *g;
    x->storage_location = bench_arena_str(&s->ar, g->storage_location);
    x->cache_location = bench_arena_str(&s->ar, g->cache_location);
    if (!x->storage_location || !x->cache_location)
        return s->err = CKPT_E_NOMEM;
    size_t np = 11;
    const bulki_pair q[11] = {
        {K("obj_id"), BULKI_V_ITEM(BULKI_T_UINT64, &x->obj_id)},
        {K("ndim"), BULKI_V_ITEM(BULKI_T_UINT32, &x->ndim)},
        {K("start"), BULKI_V_ARRAY(BULKI_T_UINT64, x->start, x->ndim)},
        {K("count"), BULKI_V_ARRAY(BULKI_T_UINT64, x->count, x->ndim)},
        {K("data_size"), BULKI_V_ITEM(BULKI_T_UINT64, &x->data_size)},
        {K("unit_size"), BULKI_V_ITEM(BULKI_T_UINT64, &x->unit_size)},
        {K("data_loc_type"), BULKI_V_ITEM(BULKI_T_INT32, &x->data_loc_type)},
        {K("storage_location"), S(x->storage_location)},
        {K("offset"), BULKI_V_ITEM(BULKI_T_UINT64, &x->offset)},
        {K("cache_location"), S(x->cache_location)},
        {K("cache_offset"), BULKI_V_ITEM(BULKI_T_UINT64, &x->cache_offset)},
    };
    memcpy(p, q, sizeof q);
    if (g->has_hist) {
        size_t nb = (size_t)g->hist.nbin;
        void *range = bench_arena_alloc(&s->ar, 2 * nb * sizeof(double) + 1);
        void *bin = bench_arena_alloc(&s->ar, nb * sizeof(uint64_t) + 1);
        bulki_pair *hp = bench_arena_alloc(&s->ar, 5 * sizeof *hp);
        bulki_doc *hd = bench_arena_alloc(&s->ar, sizeof *hd);
        if (!range || !bin || !hp || !hd)
            return s->err = CKPT_E_NOMEM;
        memcpy(range, g->hist.range, 2 * nb * sizeof(double));
        memcpy(bin, g->hist.bin, nb * sizeof(uint64_t));
        hp[0] = (bulki_pair){K("dtype"), BULKI_V_ITEM(BULKI_T_INT32, &x->hist.dtype)};
        hp[1] = (bulki_pair){K("nbin"), BULKI_V_ITEM(BULKI_T_INT32, &x->hist.nbin)};
        hp[2] = (bulki_pair){K("range"), BULKI_V_ARRAY(BULKI_T_DOUBLE, range, 2 * (uint64_t)nb)};
        hp[3] = (bulki_pair){K("bin"), BULKI_V_ARRAY(BULKI_T_UINT64, bin, (uint64_t)nb)};
        hp[4] = (bulki_pair){K("incr"), BULKI_V_ITEM(BULKI_T_DOUBLE, &x->hist.incr)};
        hd->npairs = 5;
        hd->pairs = hp;
        p[np++] = (bulki_pair){K("hist"), BULKI_V_DOC(hd)};
    }
    return add_doc(s, K("r"), p, np);
}

static const struct ckpt_rebuild_cbs snap_cbs = {sn_cont, sn_obj, sn_kvtag, sn_member, sn_region};

static int bk_close(void *ctx, model_server *m, struct bench_close_times *t)
{
    struct bk_ctx *c = ctx;
    struct bk_snap s;
    uint8_t *buf = NULL;
    size_t len = 0, written = 0;
    int rc, brc;
    int32_t rank = c->rank, nranks = c->nranks;
    double t0 = bench_now();
    memset(&s, 0, sizeof s);
    static const char fmt[] = "pdc-ckpt-bench bulki snapshot 1";
    bulki_pair *h = top_pair(&s);
    if (h)
        *h = (bulki_pair){K("format"), K(fmt)};
    if ((h = top_pair(&s)) != NULL)
        *h = (bulki_pair){K("rank"), BULKI_V_ITEM(BULKI_T_INT32, &rank)};
    if ((h = top_pair(&s)) != NULL)
        *h = (bulki_pair){K("nranks"), BULKI_V_ITEM(BULKI_T_INT32, &nranks)};
    rc = s.err ? s.err : model_foreach(m, &snap_cbs, &s);
    if (rc == 0)
        rc = flush_members(&s);
    if (rc == 0 && s.err)
        rc = s.err;
    if (rc) {
        rc = ckpt_error(rc, "building the snapshot: %s", ckpt_strerror(rc));
        goto done;
    }
    const bulki_doc top = {s.ntop, s.top};
    if ((brc = bulki_doc_encoded_len(&len, &top)) != 0 || (buf = malloc(len ? len : 1)) == NULL ||
        (brc = bulki_encode_doc(&written, buf, len, &top)) != 0) {
        rc = buf ? ckpt_error(CKPT_E_INVAL, "snapshot does not encode: %s", bulki_strerror(brc))
                 : CKPT_E_NOMEM;
        goto done;
    }
    FILE *f = fopen(c->path, "w");
    if (f == NULL) {
        rc = ckpt_error(CKPT_E_IO, "%s: %s", c->path, strerror(errno));
        goto done;
    }
    int werr = fwrite(buf, 1, written, f) != written ? errno : 0;
    if (fclose(f) != 0 && !werr)
        werr = errno ? errno : EIO;
    if (werr)
        rc = ckpt_error(CKPT_E_IO, "%s: %s", c->path, strerror(werr));
done:
    free(buf);
    free(s.top);
    free(s.mids);
    bench_arena_free(&s.ar);
    double t1 = bench_now();
    if (rc == 0)
        rc = bench_fsync_path(c->path);
    t->close_s = t1 - t0;
    t->fsync_s = bench_now() - t1;
    free(c);
    return rc;
}

/* ---- restart ---- */

struct dec {
    const bulki_map *m;
    int rc;
};

static bulki_ent get(struct dec *d, const char *k)
{
    bulki_ent e;
    memset(&e, 0, sizeof e);
    if (d->rc == 0 && bulki_map_get(&e, d->m, k) != 0)
        d->rc = ckpt_error(CKPT_E_RECORD, "snapshot record without \"%s\"", k);
    return e;
}

static uint64_t g_u64(struct dec *d, const char *k)
{
    bulki_ent e = get(d, k);
    uint64_t v = 0;
    if (d->rc == 0 && bulki_ent_u64(&v, &e) != 0)
        d->rc = ckpt_error(CKPT_E_RECORD, "snapshot field \"%s\" is not an unsigned number", k);
    return v;
}

static int64_t g_i64(struct dec *d, const char *k)
{
    bulki_ent e = get(d, k);
    int64_t v = 0;
    if (d->rc == 0 && bulki_ent_i64(&v, &e) != 0)
        d->rc = ckpt_error(CKPT_E_RECORD, "snapshot field \"%s\" is not a number", k);
    return v;
}

static const char *g_str(struct dec *d, const char *k)
{
    bulki_ent e = get(d, k);
    const char *s = "";
    size_t n;
    if (d->rc == 0 && bulki_ent_str(&s, &n, &e) != 0)
        d->rc = ckpt_error(CKPT_E_RECORD, "snapshot field \"%s\" is not a string", k);
    return s;
}

static uint32_t g_u64s(struct dec *d, const char *k, uint64_t *out, uint32_t max)
{
    bulki_ent e = get(d, k);
    if (d->rc)
        return 0;
    if (e.type != BULKI_T_UINT64 || e.count > max) {
        d->rc = ckpt_error(CKPT_E_RECORD, "snapshot field \"%s\": bad array", k);
        return 0;
    }
    for (uint32_t i = 0; i < e.count; i++)
        bulki_ent_elem_u64(&out[i], &e, i);
    return (uint32_t)e.count;
}

static int rb_record(model_server *m, char kind, const bulki_map *rm, struct ckpt_rebuild_stats *st)
{
    const struct ckpt_rebuild_cbs *cb = &model_rebuild_cbs;
    struct dec d = {rm, 0};
    int rc;
    switch (kind) {
    case 'c': {
        struct ckpt_cont c = {0, NULL, NULL};
        c.cont_id = g_u64(&d, "cont_id");
        c.cont_name = g_str(&d, "cont_name");
        c.tags = g_str(&d, "tags");
        if ((rc = d.rc ? d.rc : cb->cont(&c, m)) == 0)
            st->conts++;
        return rc;
    }
    case 'o': {
        struct ckpt_obj o;
        memset(&o, 0, sizeof o);
        o.obj_id = g_u64(&d, "obj_id");
        o.obj_name = g_str(&d, "obj_name");
        o.cont_id = g_u64(&d, "cont_id");
        o.user_id = (int32_t)g_i64(&d, "user_id");
        o.app_name = g_str(&d, "app_name");
        o.time_step = (int32_t)g_i64(&d, "time_step");
        o.data_type = (int32_t)g_i64(&d, "data_type");
        o.ndim = g_u64s(&d, "dims", o.dims, CKPT_MAX_DIM);
        o.create_time = g_i64(&d, "create_time");
        o.last_modified_time = g_i64(&d, "last_modified_time");
        o.data_location = g_str(&d, "data_location");
        o.tags = g_str(&d, "tags");
        o.transform_state = (int32_t)g_i64(&d, "transform_state");
        o.data_server_id = (uint32_t)g_u64(&d, "data_server_id");
        o.region_partition = (uint8_t)g_u64(&d, "region_partition");
        o.consistency = (uint8_t)g_u64(&d, "consistency");
        if ((rc = d.rc ? d.rc : cb->obj(&o, m)) == 0)
            st->objs++;
        return rc;
    }
    case 't': {
        struct ckpt_kvtag t = {NULL, 0, 0, NULL};
        uint64_t owner = g_u64(&d, "owner");
        t.name = g_str(&d, "name");
        t.type = (int8_t)g_i64(&d, "type");
        bulki_ent e = get(&d, "value");
        if (d.rc)
            return d.rc;
        const struct bulki_type_info *ti = bulki_type_info(e.type);
        if (ti->kind == BULKI_KIND_NESTED)
            return ckpt_error(CKPT_E_RECORD, "snapshot kvtag %s: nested value", t.name);
        t.value = e.payload;
        t.size = (uint32_t)(e.payload_len + (ti->kind == BULKI_KIND_STRING ? 1 : 0));
        if ((rc = cb->kvtag(owner, &t, m)) == 0)
            st->kvtags++;
        return rc;
    }
    case 'm': {
        uint64_t cont = g_u64(&d, "cont_id");
        bulki_ent e = get(&d, "ids");
        if (d.rc)
            return d.rc;
        if (e.type != BULKI_T_UINT64)
            return ckpt_error(CKPT_E_RECORD, "snapshot members: not a u64 array");
        for (uint64_t i = 0; i < e.count; i++) {
            uint64_t id;
            bulki_ent_elem_u64(&id, &e, i);
            if ((rc = cb->member(cont, id, m)) != 0)
                return rc;
            st->members++;
        }
        return 0;
    }
    case 'r': {
        struct ckpt_region g;
        uint64_t cnt[CKPT_MAX_DIM];
        memset(&g, 0, sizeof g);
        g.obj_id = g_u64(&d, "obj_id");
        g.ndim = g_u64s(&d, "start", g.start, CKPT_MAX_DIM);
        if (g_u64s(&d, "count", cnt, CKPT_MAX_DIM) != g.ndim && d.rc == 0)
            d.rc = ckpt_error(CKPT_E_RECORD, "snapshot region: start and count differ");
        memcpy(g.count, cnt, sizeof cnt);
        g.data_size = g_u64(&d, "data_size");
        g.unit_size = g_u64(&d, "unit_size");
        g.data_loc_type = (int32_t)g_i64(&d, "data_loc_type");
        g.storage_location = g_str(&d, "storage_location");
        g.offset = g_u64(&d, "offset");
        g.cache_location = g_str(&d, "cache_location");
        g.cache_offset = g_u64(&d, "cache_offset");
        bulki_ent he;
        if (d.rc == 0 && bulki_map_get(&he, rm, "hist") == 0) {
            bulki_map hm;
            bulki_ent re, be;
            if (bulki_ent_doc(&hm, &he, 0) != 0)
                return ckpt_error(CKPT_E_RECORD, "snapshot region: bad histogram");
            struct dec h = {&hm, 0};
            g.has_hist = 1;
            g.hist.dtype = (int32_t)g_i64(&h, "dtype");
            g.hist.nbin = (int32_t)g_i64(&h, "nbin");
            g.hist.incr = 0;
            bulki_ent ie = get(&h, "incr");
            re = get(&h, "range");
            be = get(&h, "bin");
            if (h.rc)
                return h.rc;
            if (bulki_ent_f64(&g.hist.incr, &ie) != 0 || g.hist.nbin < 0 || re.type != BULKI_T_DOUBLE ||
                re.count != 2 * (uint64_t)g.hist.nbin || be.type != BULKI_T_UINT64 ||
                be.count != (uint64_t)g.hist.nbin)
                return ckpt_error(CKPT_E_RECORD, "snapshot region: bad histogram");
            g.hist.range = re.payload;
            g.hist.bin = be.payload;
        }
        if ((rc = d.rc ? d.rc : cb->region(&g, m)) == 0)
            st->regions++;
        return rc;
    }
    default:
        return ckpt_error(CKPT_E_RECORD, "snapshot record of unknown kind '%c'", kind);
    }
}

static int bk_rebuild(model_server *m, const char *root, int rank, int nranks,
                      struct ckpt_rebuild_stats *st)
{
    char path[4200];
    struct stat sb;
    uint8_t *buf = NULL;
    bulki_map top;
    bulki_map_iter it;
    bulki_ent k, v;
    size_t off = 0;
    int rc = 0, n;
    (void)nranks;
    bk_path(path, sizeof path, root, rank);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return ckpt_error(CKPT_E_NOSTORE, "%s: %s", path, strerror(errno));
    if (fstat(fileno(f), &sb) != 0 || (buf = malloc((size_t)sb.st_size + 1)) == NULL ||
        fread(buf, 1, (size_t)sb.st_size, f) != (size_t)sb.st_size) {
        rc = buf ? ckpt_error(CKPT_E_IO, "%s: cannot read", path) : CKPT_E_NOMEM;
        goto done;
    }
    if ((n = bulki_decode_doc(&top, buf, (size_t)sb.st_size, &off)) != 0) {
        rc = ckpt_error(CKPT_E_RECORD, "%s: not a BULKI snapshot (%s at byte %zu)", path,
                        bulki_strerror(n), off);
        goto done;
    }
    bulki_map_iter_init(&it, &top);
    while (rc == 0 && (n = bulki_map_next(&k, &v, &it)) == 1) {
        const char *key;
        size_t klen;
        bulki_map rm;
        if (bulki_ent_str(&key, &klen, &k) != 0) {
            rc = ckpt_error(CKPT_E_RECORD, "%s: a key is not a string", path);
            break;
        }
        if (klen != 1)
            continue; /* header pairs */
        if (v.type != BULKI_T_BULKI || bulki_ent_doc(&rm, &v, 0) != 0) {
            rc = ckpt_error(CKPT_E_RECORD, "%s: record '%c' is not a BULKI", path, key[0]);
            break;
        }
        rc = rb_record(m, key[0], &rm, st);
    }
    if (rc == 0 && n < 0)
        rc = ckpt_error(CKPT_E_RECORD, "%s: %s", path, bulki_strerror(n));
done:
    fclose(f);
    free(buf);
    return rc;
}

const struct bench_method bench_method_bulki = {
    "bulki", 0, bk_path, bk_open, bk_close, bk_discard, NULL, NULL, bk_rebuild,
};
