/*
 * legacy_reader.c - reader of PDC's legacy `metadata_checkpoint.<rank>`
 * files (legacy.h).
 *
 * The whole file is read into memory, then walked once with a cursor. Every
 * count is checked against the bytes left before anything is allocated for
 * it (count <= left / minimum encoded size of one element), every length
 * before it is used (len <= end - pos), and every string against its char
 * array. The parsed arrays grow only as elements are actually consumed, so
 * the memory used is bounded by a small multiple of the file size.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "legacy.h"

/* Minimum encoded sizes, used to bound counts before allocating. */
#define MIN_CONT (4u + LEGACY_CONT_SIZE)          /* hash_key + entry */
#define MIN_BUCKET 8u                              /* n_obj + hash_key */
#define MIN_OBJ (LEGACY_METADATA_SIZE + 4u + 4u)   /* + n_kvtag + n_region */
#define MIN_KVTAG (4u + 1u + 4u + 1u)              /* name_len, 1-byte name, size, type */
#define MIN_REGION (LEGACY_REGION_SIZE + 4u)       /* + has_hist */
#define MIN_DS (8u + 4u)                           /* obj_id + n_region */
#define HIST_PER_BIN (2u * 8u + 8u)                /* range[2] + bin */

/* pdc_metadata_t offsets */
#define M_USER_ID 0
#define M_APP_NAME 4
#define M_OBJ_NAME 1028
#define M_TIME_STEP 2052
#define M_DATA_TYPE 2056
#define M_OBJ_ID 2064
#define M_CONT_ID 2072
#define M_CREATE_TIME 2080
#define M_LAST_MODIFIED 2088
#define M_DATA_SERVER_ID 2096
#define M_REGION_PARTITION 2100
#define M_CONSISTENCY 2101
#define M_TAGS 2102
#define M_DATA_LOCATION 4160
#define M_NDIM 5184
#define M_DIMS 5192
#define M_TRANSFORM_STATE 5264
#define M_CURRENT_STATE 5272

/* region_list_t offsets */
#define R_NDIM 0
#define R_START 8
#define R_COUNT 40
#define R_DATA_SIZE 200
#define R_UNIT_SIZE 208
#define R_DATA_LOC_TYPE 1264
#define R_STORAGE_LOCATION 1268
#define R_OFFSET 2296
#define R_OBJ_ID 2368
#define R_CACHE_LOCATION 2404
#define R_CACHE_OFFSET 3432

/* pdc_cont_hash_table_entry_t offsets */
#define C_CONT_ID 0
#define C_CONT_NAME 8
#define C_N_OBJ 1032
#define C_N_DELETED 1036
#define C_N_ALLOCATED 1040
#define C_TAGS 1056

#define NAME_LEN 1024u
#define TAGS_LEN 2048u

struct cur {
    const uint8_t *b;
    size_t pos, size;
    const char *name;
    char *err;
    size_t errlen;
    struct legacy_file *f;
};

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(struct cur *c, size_t off, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->err && c->errlen)
        snprintf(c->err, c->errlen, "%s: byte %zu: %s", c->name, off, msg);
    ckpt_error(CKPT_E_RECORD, "%s: byte %zu: %s", c->name, off, msg);
    return CKPT_E_RECORD;
}

static size_t left(const struct cur *c)
{
    return c->size - c->pos;
}

/* Little-endian loads (the format is x86-64's). */
static uint32_t ld32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t ld64(const uint8_t *p)
{
    return (uint64_t)ld32(p) | (uint64_t)ld32(p + 4) << 32;
}
static int32_t lds32(const uint8_t *p)
{
    uint32_t u = ld32(p);
    int32_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}
static int64_t lds64(const uint8_t *p)
{
    uint64_t u = ld64(p);
    int64_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* Take n bytes at the cursor. */
static int take(struct cur *c, size_t n, const uint8_t **p, const char *what)
{
    *p = NULL;
    if (n > left(c))
        return fail(c, c->pos, "%s needs %zu bytes but only %zu are left", what, n, left(c));
    *p = c->b + c->pos;
    c->pos += n;
    return 0;
}

static int get_i32(struct cur *c, int32_t *v, const char *what)
{
    const uint8_t *p;
    int rc = take(c, 4, &p, what);
    if (rc == 0)
        *v = lds32(p);
    return rc;
}

static int get_u32(struct cur *c, uint32_t *v, const char *what)
{
    const uint8_t *p;
    int rc = take(c, 4, &p, what);
    if (rc == 0)
        *v = ld32(p);
    return rc;
}

static int get_u64(struct cur *c, uint64_t *v, const char *what)
{
    const uint8_t *p;
    int rc = take(c, 8, &p, what);
    if (rc == 0)
        *v = ld64(p);
    return rc;
}

/* Read an int32 count at the cursor and bound it: 0 <= n and n elements of
 * at least `min_each` bytes fit in the bytes left after it. */
static int get_count(struct cur *c, size_t *n, size_t min_each, const char *what)
{
    size_t at = c->pos;
    int32_t v;
    int rc = get_i32(c, &v, what);
    if (rc)
        return rc;
    if (v < 0)
        return fail(c, at, "%s %d is negative", what, (int)v);
    if ((size_t)v > left(c) / min_each)
        return fail(c, at, "%s %d exceeds the %zu bytes left (each needs at least %zu)", what,
                    (int)v, left(c), min_each);
    *n = (size_t)v;
    return 0;
}

/* A char[n] field at s+off (struct at file offset base): NUL within it. */
static int str_field(struct cur *c, size_t base, const uint8_t *s, size_t off, size_t n,
                     const char *what, const char **out)
{
    if (memchr(s + off, 0, n) == NULL)
        return fail(c, base + off, "%s is not NUL-terminated within its %zu bytes", what, n);
    *out = (const char *)(s + off);
    return 0;
}

/* Make room for one more element in a growing array. Every element is
 * added only after its bytes were bounded, so the array never exceeds a
 * small multiple of the file size. */
static int grow(struct cur *c, void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 16;
    if (ncap < *cap || ncap > SIZE_MAX / elem)
        return fail(c, c->pos, "too many records");
    void *p = realloc(*arr, ncap * elem);
    if (p == NULL) {
        if (c->err && c->errlen)
            snprintf(c->err, c->errlen, "%s: byte %zu: out of memory", c->name, c->pos);
        return ckpt_error(CKPT_E_NOMEM, "%s: byte %zu: out of memory", c->name, c->pos);
    }
    *arr = p;
    *cap = ncap;
    return 0;
}

struct caps {
    size_t conts, buckets, objs, kvtags, regions, ds, ds_regions;
};

/* ---- containers ---- */

static int parse_conts(struct cur *c, struct caps *cap)
{
    struct legacy_file *f = c->f;
    size_t n;
    int rc;
    if ((rc = get_count(c, &n, MIN_CONT, "n_cont")) != 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        struct legacy_cont *e;
        const uint8_t *s;
        size_t at = c->pos;
        uint32_t hash;
        if ((rc = grow(c, (void **)&f->conts, &cap->conts, f->n_conts, sizeof *f->conts)) != 0)
            return rc;
        e = &f->conts[f->n_conts];
        memset(e, 0, sizeof *e);
        if ((rc = get_u32(c, &hash, "container hash_key")) != 0 ||
            (rc = take(c, LEGACY_CONT_SIZE, &s, "container entry")) != 0)
            return rc;
        e->offset = at;
        e->hash_key = hash;
        e->cont.cont_id = ld64(s + C_CONT_ID);
        if ((rc = str_field(c, at + 4, s, C_CONT_NAME, NAME_LEN, "cont_name", &e->cont.cont_name)) ||
            (rc = str_field(c, at + 4, s, C_TAGS, TAGS_LEN, "container tags", &e->cont.tags)))
            return rc;
        e->n_obj = lds32(s + C_N_OBJ);
        e->n_deleted = lds32(s + C_N_DELETED);
        e->n_allocated = lds32(s + C_N_ALLOCATED);
        if (ckpt_djb2(e->cont.cont_name) != hash)
            return fail(c, at, "container \"%.64s\" has hash_key %u, but its name hashes to %u",
                        e->cont.cont_name, hash, ckpt_djb2(e->cont.cont_name));
        f->n_conts++;
    }
    return 0;
}

/* ---- regions ---- */

static int decode_region(struct cur *c, struct legacy_region *r, const uint8_t *s, size_t at)
{
    int rc;
    uint64_t ndim = ld64(s + R_NDIM);
    memset(r, 0, sizeof *r);
    r->offset = at;
    if (ndim > CKPT_MAX_DIM)
        return fail(c, at + R_NDIM, "region ndim %llu is more than %d", (unsigned long long)ndim,
                    CKPT_MAX_DIM);
    r->reg.ndim = (uint32_t)ndim;
    for (uint32_t d = 0; d < r->reg.ndim; d++) {
        r->reg.start[d] = ld64(s + R_START + 8 * d);
        r->reg.count[d] = ld64(s + R_COUNT + 8 * d);
    }
    r->reg.data_size = ld64(s + R_DATA_SIZE);
    r->reg.unit_size = ld64(s + R_UNIT_SIZE);
    r->reg.data_loc_type = lds32(s + R_DATA_LOC_TYPE);
    r->reg.offset = ld64(s + R_OFFSET);
    r->reg.obj_id = ld64(s + R_OBJ_ID);
    r->reg.cache_offset = ld64(s + R_CACHE_OFFSET);
    if ((rc = str_field(c, at, s, R_STORAGE_LOCATION, NAME_LEN, "region storage_location",
                        &r->reg.storage_location)) != 0 ||
        (rc = str_field(c, at, s, R_CACHE_LOCATION, NAME_LEN, "region cache_location",
                        &r->reg.cache_location)) != 0)
        return rc;
    return 0;
}

/* A per-object region: region_list_t, int32 has_hist, [histogram]. */
static int parse_obj_region(struct cur *c, struct legacy_region *r)
{
    const uint8_t *s, *p;
    size_t at = c->pos, n;
    int32_t has_hist;
    int rc;
    if ((rc = take(c, LEGACY_REGION_SIZE, &s, "region")) != 0 ||
        (rc = decode_region(c, r, s, at)) != 0)
        return rc;
    at = c->pos;
    if ((rc = get_i32(c, &has_hist, "region has_hist")) != 0)
        return rc;
    if (has_hist == 0)
        return 0;
    if (has_hist != 1)
        return fail(c, at, "region has_hist %d is neither 0 nor 1", (int)has_hist);
    r->reg.has_hist = 1;
    if ((rc = get_i32(c, &r->reg.hist.dtype, "histogram dtype")) != 0)
        return rc;
    /* nbin bins need 24 bytes each, then the 8-byte incr */
    if ((rc = get_count(c, &n, HIST_PER_BIN, "histogram nbin")) != 0)
        return rc;
    r->reg.hist.nbin = (int32_t)n;
    if ((rc = take(c, n * 16, &p, "histogram range")) != 0)
        return rc;
    r->reg.hist.range = p;
    if ((rc = take(c, n * 8, &p, "histogram bins")) != 0)
        return rc;
    r->reg.hist.bin = p;
    if ((rc = take(c, 8, &p, "histogram incr")) != 0)
        return rc;
    uint64_t u = ld64(p);
    memcpy(&r->reg.hist.incr, &u, sizeof u);
    return 0;
}

/* ---- objects ---- */

static int parse_obj(struct cur *c, struct caps *cap, size_t bucket)
{
    struct legacy_file *f = c->f;
    struct legacy_obj *o;
    const uint8_t *s;
    size_t at = c->pos, n, oi = f->n_objs;
    int rc;
    if ((rc = grow(c, (void **)&f->objs, &cap->objs, f->n_objs, sizeof *f->objs)) != 0)
        return rc;
    o = &f->objs[oi];
    memset(o, 0, sizeof *o);
    if ((rc = take(c, LEGACY_METADATA_SIZE, &s, "pdc_metadata_t")) != 0)
        return rc;
    o->offset = at;
    o->bucket = bucket;
    struct ckpt_obj *m = &o->obj;
    m->user_id = lds32(s + M_USER_ID);
    m->time_step = lds32(s + M_TIME_STEP);
    m->data_type = lds32(s + M_DATA_TYPE);
    m->obj_id = ld64(s + M_OBJ_ID);
    m->cont_id = ld64(s + M_CONT_ID);
    m->create_time = lds64(s + M_CREATE_TIME);
    m->last_modified_time = lds64(s + M_LAST_MODIFIED);
    m->data_server_id = ld32(s + M_DATA_SERVER_ID);
    m->region_partition = s[M_REGION_PARTITION];
    m->consistency = s[M_CONSISTENCY];
    m->transform_state = lds32(s + M_TRANSFORM_STATE);
    if ((rc = str_field(c, at, s, M_APP_NAME, NAME_LEN, "app_name", &m->app_name)) != 0 ||
        (rc = str_field(c, at, s, M_OBJ_NAME, NAME_LEN, "obj_name", &m->obj_name)) != 0 ||
        (rc = str_field(c, at, s, M_TAGS, TAGS_LEN, "object tags", &m->tags)) != 0 ||
        (rc = str_field(c, at, s, M_DATA_LOCATION, NAME_LEN, "data_location", &m->data_location)))
        return rc;
    uint64_t ndim = ld64(s + M_NDIM);
    if (ndim > CKPT_MAX_DIM)
        return fail(c, at + M_NDIM, "object ndim %llu is more than %d", (unsigned long long)ndim,
                    CKPT_MAX_DIM);
    m->ndim = (uint32_t)ndim;
    for (uint32_t d = 0; d < m->ndim; d++)
        m->dims[d] = ld64(s + M_DIMS + 8 * d);
    const uint8_t *cs = s + M_CURRENT_STATE;
    o->current_state.storage_order = lds32(cs);
    o->current_state.dtype = lds32(cs + 4);
    o->current_state.ndim = ld64(cs + 8);
    for (int d = 0; d < 4; d++)
        o->current_state.dims[d] = ld64(cs + 16 + 8 * d);
    o->current_state.meta_index = lds32(cs + 48);

    uint32_t h = ckpt_djb2(m->obj_name);
    if (h != f->buckets[bucket].hash_key)
        return fail(c, at + M_OBJ_NAME, "object \"%.64s\" hashes to %u, but its bucket's hash_key "
                    "is %u", m->obj_name, h, f->buckets[bucket].hash_key);

    /* kvtags */
    o->off_n_kvtag = c->pos;
    if ((rc = get_count(c, &n, MIN_KVTAG, "n_kvtag")) != 0)
        return rc;
    o->first_kvtag = f->n_kvtags;
    for (size_t i = 0; i < n; i++) {
        struct legacy_kvtag *t;
        const uint8_t *name, *tp, *val;
        size_t kat = c->pos;
        int32_t nl;
        uint32_t size;
        if ((rc = grow(c, (void **)&f->kvtags, &cap->kvtags, f->n_kvtags, sizeof *f->kvtags)) != 0)
            return rc;
        t = &f->kvtags[f->n_kvtags];
        memset(t, 0, sizeof *t);
        t->offset = kat;
        t->obj = oi;
        if ((rc = get_i32(c, &nl, "kvtag name_len")) != 0)
            return rc;
        if (nl < 1)
            return fail(c, kat, "kvtag name_len %d is not positive (it counts the NUL)", (int)nl);
        if ((size_t)nl > left(c))
            return fail(c, kat, "kvtag name_len %d exceeds the %zu bytes left", (int)nl, left(c));
        name = c->b + c->pos;
        c->pos += (size_t)nl;
        if (name[nl - 1] != 0)
            return fail(c, kat + 4 + (size_t)nl - 1, "kvtag name of name_len %d does not end "
                        "with a NUL", (int)nl);
        const uint8_t *nul = memchr(name, 0, (size_t)nl - 1);
        if (nul != NULL)
            return fail(c, kat + 4 + (size_t)(nul - name), "kvtag name of name_len %d holds a NUL "
                        "before its end", (int)nl);
        size_t sat = c->pos;
        if ((rc = get_u32(c, &size, "kvtag size")) != 0)
            return rc;
        if (left(c) < 1 || size > left(c) - 1)
            return fail(c, sat, "kvtag size %u exceeds the %zu bytes left after its type byte",
                        size, left(c) ? left(c) - 1 : 0);
        if ((rc = take(c, 1, &tp, "kvtag type")) != 0 ||
            (rc = take(c, size, &val, "kvtag value")) != 0)
            return rc;
        t->tag.name = (const char *)name;
        t->tag.type = (int8_t)tp[0];
        t->tag.size = size;
        t->tag.value = val;
        f->n_kvtags++;
    }
    o->n_kvtag = n;

    /* regions */
    o->off_n_region = c->pos;
    if ((rc = get_count(c, &n, MIN_REGION, "n_region")) != 0)
        return rc;
    o->first_region = f->n_regions;
    for (size_t i = 0; i < n; i++) {
        if ((rc = grow(c, (void **)&f->regions, &cap->regions, f->n_regions,
                       sizeof *f->regions)) != 0 ||
            (rc = parse_obj_region(c, &f->regions[f->n_regions])) != 0)
            return rc;
        f->regions[f->n_regions].owner = oi;
        f->n_regions++;
    }
    o->n_region = n;
    f->n_objs++;
    return 0;
}

static int parse_buckets(struct cur *c, struct caps *cap)
{
    struct legacy_file *f = c->f;
    size_t n, nobj;
    int rc;
    f->off_n_bucket = c->pos;
    if ((rc = get_count(c, &n, MIN_BUCKET, "n_bucket")) != 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        struct legacy_bucket *b;
        size_t at = c->pos;
        if ((rc = grow(c, (void **)&f->buckets, &cap->buckets, f->n_buckets,
                       sizeof *f->buckets)) != 0)
            return rc;
        b = &f->buckets[f->n_buckets];
        memset(b, 0, sizeof *b);
        b->offset = at;
        /* n_obj comes before hash_key: bound it by the bytes after both */
        int32_t v;
        if ((rc = get_i32(c, &v, "bucket n_obj")) != 0 ||
            (rc = get_u32(c, &b->hash_key, "bucket hash_key")) != 0)
            return rc;
        if (v < 0)
            return fail(c, at, "bucket n_obj %d is negative", (int)v);
        if ((size_t)v > left(c) / MIN_OBJ)
            return fail(c, at, "bucket n_obj %d exceeds the %zu bytes left (each needs at least "
                        "%u)", (int)v, left(c), MIN_OBJ);
        nobj = (size_t)v;
        b->first_obj = f->n_objs;
        f->n_buckets++;
        for (size_t j = 0; j < nobj; j++)
            if ((rc = parse_obj(c, cap, f->n_buckets - 1)) != 0)
                return rc;
        f->buckets[f->n_buckets - 1].n_obj = nobj;
    }
    return 0;
}

/* ---- data-server regions ---- */

static int parse_ds(struct cur *c, struct caps *cap)
{
    struct legacy_file *f = c->f;
    size_t n, nr;
    int rc;
    f->off_n_ds = c->pos;
    if ((rc = get_count(c, &n, MIN_DS, "n_ds_obj")) != 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        struct legacy_ds *d;
        size_t at = c->pos;
        if ((rc = grow(c, (void **)&f->ds, &cap->ds, f->n_ds, sizeof *f->ds)) != 0)
            return rc;
        d = &f->ds[f->n_ds];
        memset(d, 0, sizeof *d);
        d->offset = at;
        if ((rc = get_u64(c, &d->obj_id, "data-server obj_id")) != 0 ||
            (rc = get_count(c, &nr, LEGACY_REGION_SIZE, "data-server n_region")) != 0)
            return rc;
        d->first_region = f->n_ds_regions;
        for (size_t j = 0; j < nr; j++) {
            const uint8_t *s;
            size_t rat = c->pos;
            if ((rc = grow(c, (void **)&f->ds_regions, &cap->ds_regions, f->n_ds_regions,
                           sizeof *f->ds_regions)) != 0 ||
                (rc = take(c, LEGACY_REGION_SIZE, &s, "data-server region")) != 0 ||
                (rc = decode_region(c, &f->ds_regions[f->n_ds_regions], s, rat)) != 0)
                return rc;
            f->ds_regions[f->n_ds_regions].owner = f->n_ds;
            f->n_ds_regions++;
        }
        d->n_region = nr;
        f->n_ds++;
    }
    return 0;
}

static int parse_tq(struct cur *c)
{
    struct legacy_file *f = c->f;
    size_t at = c->pos;
    int rc;
    f->off_tq_size = at;
    if ((rc = get_u64(c, &f->tq_size, "tq_size")) != 0)
        return rc;
    if (f->tq_size > left(c))
        return fail(c, at, "tq_size %llu exceeds the %zu bytes left",
                    (unsigned long long)f->tq_size, left(c));
    c->pos += (size_t)f->tq_size;
    if (left(c) != 0)
        return fail(c, c->pos, "%zu trailing bytes after the transfer-query blob", left(c));
    return 0;
}

/* ---- entry points ---- */

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

static int parse_into(struct legacy_file *f, char *err, size_t errlen)
{
    struct cur c = {f->data, 0, f->size, f->name, err, errlen, f};
    struct caps cap = {0, 0, 0, 0, 0, 0, 0};
    int rc;
    if (!host_is_little_endian()) {
        if (err && errlen)
            snprintf(err, errlen, "%s: legacy files are x86-64 (little-endian); reading them on a "
                     "big-endian host is not supported", f->name);
        return ckpt_error(CKPT_E_INVAL, "%s: big-endian host not supported", f->name);
    }
    if ((rc = parse_conts(&c, &cap)) != 0 || (rc = parse_buckets(&c, &cap)) != 0 ||
        (rc = parse_ds(&c, &cap)) != 0 || (rc = parse_tq(&c)) != 0)
        return rc;
    return 0;
}

void legacy_file_free(struct legacy_file *f)
{
    if (f == NULL)
        return;
    free(f->conts);
    free(f->buckets);
    free(f->objs);
    free(f->kvtags);
    free(f->regions);
    free(f->ds);
    free(f->ds_regions);
    free(f->owned);
    free(f->name);
    free(f);
}

static int new_file(struct legacy_file **out, const char *name, char *err, size_t errlen)
{
    struct legacy_file *f = calloc(1, sizeof *f);
    size_t n = strlen(name);
    if (f == NULL || (f->name = malloc(n + 1)) == NULL) {
        free(f);
        if (err && errlen)
            snprintf(err, errlen, "%s: out of memory", name);
        return ckpt_error(CKPT_E_NOMEM, "%s: out of memory", name);
    }
    memcpy(f->name, name, n + 1);
    *out = f;
    return 0;
}

int legacy_parse(struct legacy_file **out, const char *name, const void *data, size_t size,
                 char *err, size_t errlen)
{
    struct legacy_file *f;
    int rc;
    if (err && errlen)
        err[0] = 0;
    if (out == NULL || name == NULL || (data == NULL && size > 0)) {
        if (err && errlen)
            snprintf(err, errlen, "legacy_parse: invalid arguments");
        return ckpt_error(CKPT_E_INVAL, "legacy_parse: invalid arguments");
    }
    *out = NULL;
    if ((rc = new_file(&f, name, err, errlen)) != 0)
        return rc;
    f->data = size ? data : (const uint8_t *)"";
    f->size = size;
    if ((rc = parse_into(f, err, errlen)) != 0) {
        legacy_file_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

static int errno_code(int e)
{
    switch (e) {
    case ENOENT:
    case ENOTDIR:
        return CKPT_E_NOSTORE;
    case EACCES:
    case EPERM:
        return CKPT_E_PERM;
    case EIO:
        return CKPT_E_IO;
    case ENOMEM:
        return CKPT_E_NOMEM;
    default:
        return CKPT_E_SYS;
    }
}

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static int read_fail(int code, char *err, size_t errlen, const char *path, const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (err && errlen)
        snprintf(err, errlen, "%s: %s", path, msg);
    return ckpt_error(code, "%s: %s", path, msg);
}

int legacy_file_read(struct legacy_file **out, const char *path, char *err, size_t errlen)
{
    struct legacy_file *f;
    struct stat sb;
    uint8_t *buf = NULL;
    size_t size, got = 0;
    int fd, rc;
    if (err && errlen)
        err[0] = 0;
    if (out == NULL || path == NULL) {
        if (err && errlen)
            snprintf(err, errlen, "legacy_file_read: invalid arguments");
        return ckpt_error(CKPT_E_INVAL, "legacy_file_read: invalid arguments");
    }
    *out = NULL;
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        int e = errno;
        return read_fail(errno_code(e), err, errlen, path, "cannot open (%s)", strerror(e));
    }
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return read_fail(errno_code(e), err, errlen, path, "cannot stat (%s)", strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return read_fail(CKPT_E_INVAL, err, errlen, path, "not a regular file");
    }
    if (sb.st_size < 0 || (uint64_t)sb.st_size > (uint64_t)SIZE_MAX - 1) {
        close(fd);
        return read_fail(CKPT_E_INVAL, err, errlen, path, "file too large");
    }
    size = (size_t)sb.st_size;
    /* The file's size is what justifies this one allocation. */
    if ((buf = malloc(size ? size : 1)) == NULL) {
        close(fd);
        return read_fail(CKPT_E_NOMEM, err, errlen, path, "out of memory for %zu bytes", size);
    }
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            free(buf);
            return read_fail(errno_code(e), err, errlen, path, "read failed at byte %zu (%s)", got,
                             strerror(e));
        }
        if (r == 0)
            break; /* shrank while reading: parse what is there */
        got += (size_t)r;
    }
    close(fd);
    if ((rc = new_file(&f, path, err, errlen)) != 0) {
        free(buf);
        return rc;
    }
    f->owned = buf;
    f->data = buf;
    f->size = got;
    if ((rc = parse_into(f, err, errlen)) != 0) {
        legacy_file_free(f);
        return rc;
    }
    *out = f;
    return 0;
}
