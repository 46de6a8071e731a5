/*
 * legacy_test_util.c - see legacy_test_util.h.
 */
#include "ckpt_fs.h"
#include "legacy_test_util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bulki.h"

#ifndef PDC_LEGACY_DATA
#error "PDC_LEGACY_DATA must point at tests/data/pdc_legacy"
#endif

void ltu_path(char *buf, size_t len, const char *tcase, const char *file)
{
    int n = snprintf(buf, len, "%s/%s/%s", PDC_LEGACY_DATA, tcase, file);
    assert_true(n > 0 && (size_t)n < len);
}

json_object *ltu_expected(const char *tcase)
{
    char p[1024];
    ltu_path(p, sizeof p, tcase, "expected.json");
    json_object *j = json_object_from_file(p);
    if (j == NULL)
        fail_msg("cannot parse %s: %s", p, json_util_get_last_err());
    return j;
}

json_object *ltu_get(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v))
        fail_msg("expected.json: key \"%s\" missing", key);
    return v;
}

uint8_t *ltu_read_file(const char *path, size_t *len)
{
    uint8_t *b = tu_read_file(path, len);
    if (b == NULL)
        fail_msg("read %s: %s", path, strerror(errno));
    return b;
}

void ltu_write_file(const char *path, const void *data, size_t len)
{
    if (tu_write_file(path, data, len) != 0)
        fail_msg("write %s: %s", path, strerror(errno));
}

void ltu_mkdtemp(char *buf, size_t len, const char *tag)
{
    char t[64];
    snprintf(t, sizeof t, "legacy-%s", tag);
    if (tu_mkdtemp(buf, len, t) != 0)
        fail_msg("mkdtemp(%s): %s", buf, strerror(errno));
}

int ltu_type_code(const char *name)
{
    unsigned c = bulki_type_by_name(name);
    if (c == 0)
        fail_msg("unknown type name %s", name);
    return (int)c;
}

static int64_t js_i64(json_object *o, const char *k)
{
    return json_object_get_int64(ltu_get(o, k));
}

static uint64_t js_u64(json_object *o, const char *k)
{
    return json_object_get_uint64(ltu_get(o, k));
}

static const char *js_str(json_object *o, const char *k)
{
    return json_object_get_string(ltu_get(o, k));
}

static void check_u64_array(json_object *arr, const uint64_t *v, uint32_t n)
{
    assert_int_equal(json_object_array_length(arr), n);
    for (uint32_t i = 0; i < n; i++)
        assert_true(json_object_get_uint64(json_object_array_get_idx(arr, i)) == v[i]);
}

void ltu_check_obj(json_object *e, const struct ckpt_obj *o)
{
    assert_true(js_u64(e, "obj_id") == o->obj_id);
    assert_string_equal(js_str(e, "obj_name"), o->obj_name);
    assert_int_equal(js_i64(e, "time_step"), o->time_step);
    assert_true(js_u64(e, "cont_id") == o->cont_id);
    assert_int_equal(js_i64(e, "user_id"), o->user_id);
    assert_string_equal(js_str(e, "app_name"), o->app_name);
    assert_int_equal(ltu_type_code(js_str(e, "data_type")), o->data_type);
    assert_int_equal(js_i64(e, "ndim"), o->ndim);
    check_u64_array(ltu_get(e, "dims"), o->dims, o->ndim);
    assert_string_equal(js_str(e, "legacy_tags"), o->tags);
    assert_string_equal(js_str(e, "data_location"), o->data_location);
    assert_int_equal(js_i64(e, "create_time"), o->create_time);
    assert_int_equal(js_i64(e, "last_modified_time"), o->last_modified_time);
    assert_int_equal(js_i64(e, "data_server_id"), o->data_server_id);
    assert_int_equal(js_i64(e, "region_partition"), o->region_partition);
    assert_int_equal(js_i64(e, "consistency"), o->consistency);
    assert_int_equal(js_i64(e, "transform_state"), o->transform_state);
}

void ltu_check_kvtag(json_object *e, const struct ckpt_kvtag *t)
{
    int code = ltu_type_code(js_str(e, "type"));
    const struct bulki_type_info *ti = bulki_type_info((unsigned)code);
    json_object *v = ltu_get(e, "value");
    assert_string_equal(js_str(e, "name"), t->name);
    assert_int_equal(code, t->type);
    if (ti->kind == BULKI_KIND_STRING) {
        const char *s = json_object_get_string(v);
        size_t n = strlen(s);
        assert_int_equal(t->size, n + 1); /* stored with its NUL */
        assert_memory_equal(t->value, s, n + 1);
        return;
    }
    size_t count = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 1;
    assert_true(ti->width > 0);
    assert_int_equal(t->size, count * ti->width);
    for (size_t i = 0; i < count; i++) {
        json_object *x = json_object_is_type(v, json_type_array) ? json_object_array_get_idx(v, i) : v;
        const uint8_t *p = (const uint8_t *)t->value + i * ti->width;
        uint64_t u = 0;
        for (unsigned b = 0; b < ti->width; b++)
            u |= (uint64_t)p[b] << (8 * b);
        switch (ti->kind) {
        case BULKI_KIND_SIGNED: {
            int64_t s;
            if (ti->width < 8 && (u >> (8 * ti->width - 1)) & 1)
                u |= ~(uint64_t)0 << (8 * ti->width);
            memcpy(&s, &u, sizeof s);
            assert_true(s == json_object_get_int64(x));
            break;
        }
        case BULKI_KIND_UNSIGNED:
        case BULKI_KIND_BOOL:
            assert_true(u == json_object_get_uint64(x));
            break;
        case BULKI_KIND_FLOAT:
            if (ti->width == 4) {
                float f;
                uint32_t w = (uint32_t)u;
                memcpy(&f, &w, sizeof f);
                assert_true((double)f == json_object_get_double(x));
            } else {
                double d;
                memcpy(&d, &u, sizeof d);
                assert_true(d == json_object_get_double(x));
            }
            break;
        default:
            fail_msg("kvtag %s: type %s not comparable", t->name, ti->name);
        }
    }
}

void ltu_check_region(json_object *e, const struct ckpt_region *r)
{
    assert_int_equal(js_i64(e, "ndim"), r->ndim);
    check_u64_array(ltu_get(e, "start"), r->start, r->ndim);
    check_u64_array(ltu_get(e, "count"), r->count, r->ndim);
    assert_string_equal(js_str(e, "storage_location"), r->storage_location);
    assert_true(js_u64(e, "offset") == r->offset);
    assert_true(js_u64(e, "data_size") == r->data_size);
    assert_true(js_u64(e, "unit_size") == r->unit_size);
    assert_int_equal(js_i64(e, "data_loc_type"), r->data_loc_type);
}

/* ---- synthetic files ---- */

void ltu_put(struct ltu_buf *b, const void *d, size_t n)
{
    if (b->len + n > b->cap) {
        size_t c = b->cap ? b->cap : 4096;
        while (c < b->len + n)
            c *= 2;
        b->p = realloc(b->p, c);
        assert_non_null(b->p);
        b->cap = c;
    }
    if (d)
        memcpy(b->p + b->len, d, n);
    else
        memset(b->p + b->len, 0, n);
    b->len += n;
}

void ltu_zero(struct ltu_buf *b, size_t n)
{
    ltu_put(b, NULL, n);
}

static void le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void ltu_i32(struct ltu_buf *b, int32_t v)
{
    uint8_t p[4];
    le(p, (uint32_t)v, 4);
    ltu_put(b, p, 4);
}

void ltu_u32(struct ltu_buf *b, uint32_t v)
{
    uint8_t p[4];
    le(p, v, 4);
    ltu_put(b, p, 4);
}

void ltu_u64(struct ltu_buf *b, uint64_t v)
{
    uint8_t p[8];
    le(p, v, 8);
    ltu_put(b, p, 8);
}

void ltu_f64(struct ltu_buf *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    ltu_u64(b, u);
}

void ltu_set_i32(uint8_t *p, size_t off, int32_t v)
{
    le(p + off, (uint32_t)v, 4);
}

void ltu_set_u64(uint8_t *p, size_t off, uint64_t v)
{
    le(p + off, v, 8);
}

static void put_str(uint8_t *s, const char *v, size_t cap)
{
    size_t n = strlen(v);
    assert_true(n < cap);
    memcpy(s, v, n);
}

void ltu_cont(struct ltu_buf *b, uint64_t id, const char *name)
{
    uint8_t e[LEGACY_CONT_SIZE];
    memset(e, 0, sizeof e);
    le(e, id, 8);
    put_str(e + 8, name, 1024);
    /* pointer garbage where PDC keeps pointers */
    memset(e + 1048, 0xAB, 8);
    ltu_u32(b, ckpt_djb2(name));
    ltu_put(b, e, sizeof e);
}

void ltu_meta(struct ltu_buf *b, const struct ckpt_obj *o)
{
    uint8_t m[LEGACY_METADATA_SIZE];
    memset(m, 0xEE, sizeof m); /* padding and pointers hold junk */
    memset(m + 4, 0, 1024 + 1024);
    memset(m + 2102, 0, 2048);
    memset(m + 4160, 0, 1024);
    le(m + 0, (uint32_t)o->user_id, 4);
    put_str(m + 4, o->app_name ? o->app_name : "", 1024);
    put_str(m + 1028, o->obj_name, 1024);
    le(m + 2052, (uint32_t)o->time_step, 4);
    le(m + 2056, (uint32_t)o->data_type, 4);
    le(m + 2064, o->obj_id, 8);
    le(m + 2072, o->cont_id, 8);
    le(m + 2080, (uint64_t)o->create_time, 8);
    le(m + 2088, (uint64_t)o->last_modified_time, 8);
    le(m + 2096, o->data_server_id, 4);
    m[2100] = o->region_partition;
    m[2101] = o->consistency;
    put_str(m + 2102, o->tags ? o->tags : "", 2048);
    put_str(m + 4160, o->data_location ? o->data_location : "", 1024);
    le(m + 5184, o->ndim, 8);
    for (uint32_t d = 0; d < 4; d++)
        le(m + 5192 + 8 * d, d < o->ndim ? o->dims[d] : 0xEEEEEEEEEEEEEEEEull, 8);
    le(m + 5264, (uint32_t)o->transform_state, 4);
    memset(m + 5272, 0, 56);
    ltu_put(b, m, sizeof m);
}

void ltu_kvtag(struct ltu_buf *b, const char *name, int8_t type, const void *val, uint32_t size)
{
    ltu_i32(b, (int32_t)strlen(name) + 1);
    ltu_put(b, name, strlen(name) + 1);
    ltu_u32(b, size);
    ltu_put(b, &type, 1);
    ltu_put(b, val, size);
}

void ltu_region(struct ltu_buf *b, const struct ckpt_region *r)
{
    uint8_t g[LEGACY_REGION_SIZE];
    memset(g, 0xCD, sizeof g);
    memset(g + 1268, 0, 1024);
    memset(g + 2404, 0, 1024);
    le(g + 0, r->ndim, 8);
    for (uint32_t d = 0; d < 4; d++) {
        le(g + 8 + 8 * d, d < r->ndim ? r->start[d] : 0xCDull, 8);
        le(g + 40 + 8 * d, d < r->ndim ? r->count[d] : 0xCDull, 8);
    }
    le(g + 200, r->data_size, 8);
    le(g + 208, r->unit_size, 8);
    le(g + 1264, (uint32_t)r->data_loc_type, 4);
    put_str(g + 1268, r->storage_location ? r->storage_location : "", 1024);
    le(g + 2296, r->offset, 8);
    le(g + 2368, r->obj_id, 8);
    put_str(g + 2404, r->cache_location ? r->cache_location : "", 1024);
    le(g + 3432, r->cache_offset, 8);
    ltu_put(b, g, sizeof g);
}

void ltu_hist(struct ltu_buf *b, const struct ckpt_region *r)
{
    ltu_i32(b, r->has_hist ? 1 : 0);
    if (!r->has_hist)
        return;
    ltu_i32(b, r->hist.dtype);
    ltu_i32(b, r->hist.nbin);
    for (int i = 0; i < 2 * r->hist.nbin; i++)
        ltu_f64(b, ckpt_hist_range(&r->hist, (size_t)i));
    for (int i = 0; i < r->hist.nbin; i++)
        ltu_u64(b, ckpt_hist_bin(&r->hist, (size_t)i));
    ltu_f64(b, r->hist.incr);
}

/* ---- the synthetic file ---- */

const double ltu_syn_range[6] = {0.0, 1.0, 1.0, 2.5, 2.5, 100.0};
const uint64_t ltu_syn_bins[3] = {7, 0, 18446744073709551615ull};

static struct ckpt_obj syn_obj(uint64_t id, const char *name, int32_t ts, uint64_t cont)
{
    struct ckpt_obj o;
    memset(&o, 0, sizeof o);
    o.obj_id = id;
    o.cont_id = cont;
    o.obj_name = name;
    o.app_name = "synth";
    o.data_location = "/scratch/x";
    o.tags = "legacy=1";
    o.time_step = ts;
    o.user_id = 42;
    o.data_type = 14;
    o.transform_state = 3;
    o.create_time = 1700000000;
    o.last_modified_time = -5;
    o.data_server_id = 9;
    o.region_partition = 2;
    o.consistency = 1;
    o.ndim = 2;
    o.dims[0] = 100;
    o.dims[1] = 200;
    return o;
}

static struct ckpt_region syn_reg(uint32_t ndim, uint64_t s0, uint64_t c0, uint64_t s1, uint64_t c1)
{
    struct ckpt_region r;
    memset(&r, 0, sizeof r);
    r.ndim = ndim;
    r.start[0] = s0;
    r.count[0] = c0;
    r.start[1] = s1;
    r.count[1] = c1;
    r.data_size = 8 * c0 * (ndim > 1 ? c1 : 1);
    r.unit_size = 8;
    r.data_loc_type = 1;
    r.storage_location = "./pdc_data/syn/s0000.bin";
    r.offset = 4096;
    r.cache_location = "/cache/c";
    r.cache_offset = 12;
    return r;
}

void ltu_synth(struct ltu_buf *b)
{
    struct ckpt_obj o;
    struct ckpt_region r;
    int32_t i5 = 5, i7 = 7;
    double arr[2] = {1.5, -2.25};
    uint64_t umax = UINT64_MAX;
    float f = 1.25f;

    ltu_i32(b, 2);
    ltu_cont(b, 1000000000ull, "syn/c1");
    ltu_cont(b, 2000000000ull, "syn/c2");

    ltu_i32(b, 4); /* buckets */
    /* bucket syn/a */
    ltu_i32(b, 2);
    ltu_u32(b, ckpt_djb2("syn/a"));
    o = syn_obj(1000000001ull, "syn/a", 0, 1000000000ull);
    ltu_meta(b, &o);
    ltu_i32(b, 7);
    ltu_kvtag(b, "k", 2, &i5, 4);
    ltu_kvtag(b, "s", 16, "hello", 6);
    ltu_kvtag(b, "k", 2, &i7, 4);
    ltu_kvtag(b, "arr", 14, arr, sizeof arr);
    ltu_kvtag(b, "u", 12, &umax, 8);
    ltu_kvtag(b, "odd", 99, "xyz", 3);
    ltu_kvtag(b, "raw", 16, "abc", 3);
    ltu_i32(b, 4);
    r = syn_reg(2, 0, 4, 0, 4);
    r.has_hist = 1;
    r.hist.dtype = 13;
    r.hist.nbin = 3;
    r.hist.range = ltu_syn_range;
    r.hist.bin = ltu_syn_bins;
    r.hist.incr = 0.5;
    ltu_region(b, &r);
    ltu_hist(b, &r);
    r = syn_reg(1, 10, 5, 0, 0);
    ltu_region(b, &r);
    ltu_hist(b, &r);
    r = syn_reg(0, 0, 0, 0, 0);
    ltu_region(b, &r);
    ltu_hist(b, &r);
    r = syn_reg(1, 10, 5, 0, 0);
    r.data_size = 77;
    ltu_region(b, &r);
    ltu_hist(b, &r);
    o = syn_obj(1000000002ull, "syn/a", 1, 1000000000ull);
    ltu_meta(b, &o);
    ltu_i32(b, 0);
    ltu_i32(b, 0);
    /* bucket syn/b */
    ltu_i32(b, 1);
    ltu_u32(b, ckpt_djb2("syn/b"));
    o = syn_obj(3000000005ull, "syn/b", 2, 2000000000ull);
    o.ndim = 4;
    o.dims[2] = 3;
    o.dims[3] = UINT64_MAX;
    ltu_meta(b, &o);
    ltu_i32(b, 1);
    ltu_kvtag(b, "t", 13, &f, 4);
    ltu_i32(b, 0);
    /* bucket syn/nocont */
    ltu_i32(b, 1);
    ltu_u32(b, ckpt_djb2("syn/nocont"));
    o = syn_obj(1000000100ull, "syn/nocont", 0, 4242);
    o.ndim = 0;
    ltu_meta(b, &o);
    ltu_i32(b, 0);
    ltu_i32(b, 0);
    /* an empty bucket */
    ltu_i32(b, 0);
    ltu_u32(b, 12345);

    ltu_i32(b, 3); /* data-server region lists */
    ltu_u64(b, 1000000002ull);
    ltu_i32(b, 2);
    r = syn_reg(1, 0, 8, 0, 0);
    r.offset = 0;
    ltu_region(b, &r);
    r = syn_reg(1, 8, 8, 0, 0);
    r.offset = 64;
    ltu_region(b, &r);
    ltu_u64(b, 1000000001ull);
    ltu_i32(b, 1);
    r = syn_reg(2, 4, 4, 0, 4);
    ltu_region(b, &r);
    ltu_u64(b, 999);
    ltu_i32(b, 1);
    r = syn_reg(1, 0, 1, 0, 0);
    ltu_region(b, &r);

    ltu_u64(b, 20); /* transfer-query blob */
    for (int i = 0; i < 20; i++) {
        uint8_t x = (uint8_t)(0xF0 + i);
        ltu_put(b, &x, 1);
    }
}
