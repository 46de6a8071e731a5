/*
 * test_legacy_reader.c - the legacy checkpoint reader (tools/legacy).
 *
 *  - every shared file (L1, L2) parses, and its content equals its
 *    expected.json field by field (containers, objects with every listed
 *    field, typed kvtag values, regions, data-server regions, transfer-query
 *    size, file size), and the hash buckets are consistent;
 *  - a synthetic file with what the real ones lack (histograms, duplicate
 *    tags, odd types, ndim-0 regions, an empty bucket, a junk blob) parses
 *    to exactly what was written;
 *  - truncated copies (every 997th prefix length and every length around
 *    every record and field boundary) and corrupted copies (huge and
 *    negative counts and lengths, tq_size past the end, strings without
 *    NUL, bad ndim/has_hist, hash mismatches, trailing bytes) are rejected
 *    with "<file>: byte <n>: ..." naming the right offset; random
 *    mutations never crash. Every parse runs on a heap copy of exactly the
 *    file's size, so ASan catches any read past the end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "legacy_test_util.h"

#define ERRLEN 512

/* ---- expected.json ---- */

static void check_file_against(const char *tcase, const char *fname, json_object *fe)
{
    char path[1024], err[ERRLEN];
    struct legacy_file *f = NULL;
    ltu_path(path, sizeof path, tcase, fname);
    int rc = legacy_file_read(&f, path, err, sizeof err);
    if (rc != 0)
        fail_msg("%s: %s", path, err);
    assert_non_null(f);

    assert_int_equal(json_object_get_int64(ltu_get(fe, "file_size")), f->size);
    assert_int_equal(json_object_get_int64(ltu_get(fe, "transfer_query_size")), f->tq_size);

    json_object *conts = ltu_get(fe, "containers");
    assert_int_equal(json_object_array_length(conts), f->n_conts);
    for (size_t i = 0; i < f->n_conts; i++) {
        json_object *e = json_object_array_get_idx(conts, i);
        assert_true(json_object_get_uint64(ltu_get(e, "cont_id")) == f->conts[i].cont.cont_id);
        assert_string_equal(json_object_get_string(ltu_get(e, "cont_name")),
                            f->conts[i].cont.cont_name);
        assert_int_equal(f->conts[i].hash_key, ckpt_djb2(f->conts[i].cont.cont_name));
    }

    json_object *objs = ltu_get(fe, "objects");
    assert_int_equal(json_object_array_length(objs), f->n_objs);
    for (size_t i = 0; i < f->n_objs; i++) {
        json_object *e = json_object_array_get_idx(objs, i);
        const struct legacy_obj *o = &f->objs[i];
        ltu_check_obj(e, &o->obj);
        json_object *tags = ltu_get(e, "kvtags");
        assert_int_equal(json_object_array_length(tags), o->n_kvtag);
        for (size_t k = 0; k < o->n_kvtag; k++) {
            assert_int_equal(f->kvtags[o->first_kvtag + k].obj, i);
            ltu_check_kvtag(json_object_array_get_idx(tags, k), &f->kvtags[o->first_kvtag + k].tag);
        }
        json_object *regs = ltu_get(e, "regions");
        assert_int_equal(json_object_array_length(regs), o->n_region);
        for (size_t k = 0; k < o->n_region; k++)
            ltu_check_region(json_object_array_get_idx(regs, k), &f->regions[o->first_region + k].reg);
        /* the bucket: the object's name hashes to its key */
        assert_true(o->bucket < f->n_buckets);
        assert_int_equal(f->buckets[o->bucket].hash_key, ckpt_djb2(o->obj.obj_name));
        assert_true(i >= f->buckets[o->bucket].first_obj &&
                    i < f->buckets[o->bucket].first_obj + f->buckets[o->bucket].n_obj);
    }
    size_t in_buckets = 0;
    for (size_t b = 0; b < f->n_buckets; b++)
        in_buckets += f->buckets[b].n_obj;
    assert_int_equal(in_buckets, f->n_objs);

    json_object *ds = ltu_get(fe, "dataserver_regions");
    assert_int_equal(json_object_array_length(ds), f->n_ds);
    size_t total = 0;
    for (size_t i = 0; i < f->n_ds; i++) {
        json_object *e = json_object_array_get_idx(ds, i);
        json_object *regs = ltu_get(e, "regions");
        assert_true(json_object_get_uint64(ltu_get(e, "obj_id")) == f->ds[i].obj_id);
        assert_int_equal(json_object_array_length(regs), f->ds[i].n_region);
        for (size_t k = 0; k < f->ds[i].n_region; k++) {
            const struct legacy_region *r = &f->ds_regions[f->ds[i].first_region + k];
            assert_int_equal(r->owner, i);
            assert_false(r->reg.has_hist);
            ltu_check_region(json_object_array_get_idx(regs, k), &r->reg);
        }
        total += f->ds[i].n_region;
    }
    assert_int_equal(total, f->n_ds_regions);
    legacy_file_free(f);
}

static void check_case(const char *tcase, int want_files)
{
    json_object *exp = ltu_expected(tcase);
    json_object *files = ltu_get(exp, "files");
    int n = 0;
    assert_int_equal(json_object_get_int(ltu_get(exp, "ranks")), want_files);
    json_object_object_foreach(files, fname, fe) {
        check_file_against(tcase, fname, fe);
        n++;
    }
    assert_int_equal(n, want_files);
    json_object_put(exp);
}

static void test_L1_matches_expected(void **state)
{
    (void)state;
    check_case("L1", 1);
}

static void test_L2_matches_expected(void **state)
{
    (void)state;
    check_case("L2", 2);
}

/* Spot checks that do not depend on expected.json's reading of the spec. */
static void test_L1_spot_values(void **state)
{
    char path[1024], err[ERRLEN];
    struct legacy_file *f;
    (void)state;
    ltu_path(path, sizeof path, "L1", "metadata_checkpoint.0");
    assert_int_equal(legacy_file_read(&f, path, err, sizeof err), 0);
    assert_int_equal(f->n_conts, 2);
    assert_int_equal(f->n_objs, 12);
    assert_int_equal(f->n_kvtags, 52);
    assert_int_equal(f->n_ds_regions, 7);
    assert_int_equal(f->n_regions, 0);
    /* obj_b5's cycle is 2^64-1 */
    int found = 0;
    for (size_t i = 0; i < f->n_kvtags; i++) {
        const struct legacy_kvtag *t = &f->kvtags[i];
        if (strcmp(t->tag.name, "cycle") == 0 &&
            strcmp(f->objs[t->obj].obj.obj_name, "sim/run1/obj_b5") == 0) {
            uint64_t v;
            assert_int_equal(t->tag.type, 12);
            assert_int_equal(t->tag.size, 8);
            memcpy(&v, t->tag.value, 8);
            assert_true(v == UINT64_MAX);
            found = 1;
        }
    }
    assert_true(found);
    for (size_t i = 0; i < f->n_objs; i++) {
        assert_int_equal(f->objs[i].current_state.ndim, 0);
        assert_string_equal(f->objs[i].obj.tags, " ");
    }
    legacy_file_free(f);
}

/* ---- the synthetic file ---- */

static void test_synthetic(void **state)
{
    struct ltu_buf b = {NULL, 0, 0};
    struct legacy_file *f;
    char err[ERRLEN];
    (void)state;
    ltu_synth(&b);
    int rc = legacy_parse(&f, "synthetic", b.p, b.len, err, sizeof err);
    if (rc)
        fail_msg("%s", err);
    assert_int_equal(f->n_conts, 2);
    assert_string_equal(f->conts[1].cont.cont_name, "syn/c2");
    assert_int_equal(f->n_buckets, 4);
    assert_int_equal(f->buckets[0].n_obj, 2);
    assert_int_equal(f->buckets[3].n_obj, 0);
    assert_int_equal(f->buckets[3].hash_key, 12345);
    assert_int_equal(f->n_objs, 4);
    const struct legacy_obj *o = &f->objs[0];
    assert_int_equal(o->obj.obj_id, 1000000001ull);
    assert_string_equal(o->obj.app_name, "synth");
    assert_string_equal(o->obj.data_location, "/scratch/x");
    assert_string_equal(o->obj.tags, "legacy=1");
    assert_int_equal(o->obj.user_id, 42);
    assert_int_equal(o->obj.data_type, 14);
    assert_int_equal(o->obj.transform_state, 3);
    assert_int_equal(o->obj.create_time, 1700000000);
    assert_int_equal(o->obj.last_modified_time, -5);
    assert_int_equal(o->obj.data_server_id, 9);
    assert_int_equal(o->obj.region_partition, 2);
    assert_int_equal(o->obj.consistency, 1);
    assert_int_equal(o->obj.ndim, 2);
    assert_int_equal(o->obj.dims[1], 200);
    assert_int_equal(o->obj.dims[2], 0); /* junk past ndim is not read */
    assert_int_equal(f->objs[2].obj.ndim, 4);
    assert_true(f->objs[2].obj.dims[3] == UINT64_MAX);
    /* kvtags, duplicates kept */
    assert_int_equal(o->n_kvtag, 7);
    assert_string_equal(f->kvtags[0].tag.name, "k");
    assert_string_equal(f->kvtags[2].tag.name, "k");
    assert_int_equal(f->kvtags[5].tag.type, 99);
    assert_int_equal(f->kvtags[6].tag.size, 3);
    assert_memory_equal(f->kvtags[6].tag.value, "abc", 3);
    /* regions with a histogram */
    assert_int_equal(o->n_region, 4);
    const struct ckpt_region *r = &f->regions[0].reg;
    assert_int_equal(r->ndim, 2);
    assert_int_equal(r->count[1], 4);
    assert_true(r->has_hist);
    assert_int_equal(r->hist.dtype, 13);
    assert_int_equal(r->hist.nbin, 3);
    for (size_t i = 0; i < 6; i++)
        assert_true(ckpt_hist_range(&r->hist, i) == ltu_syn_range[i]);
    for (size_t i = 0; i < 3; i++)
        assert_true(ckpt_hist_bin(&r->hist, i) == ltu_syn_bins[i]);
    assert_true(r->hist.incr == 0.5);
    assert_string_equal(r->storage_location, "./pdc_data/syn/s0000.bin");
    assert_string_equal(r->cache_location, "/cache/c");
    assert_int_equal(r->cache_offset, 12);
    assert_int_equal(r->data_loc_type, 1);
    assert_false(f->regions[1].reg.has_hist);
    assert_int_equal(f->regions[2].reg.ndim, 0);
    assert_int_equal(f->regions[3].reg.data_size, 77);
    /* data-server regions */
    assert_int_equal(f->n_ds, 3);
    assert_int_equal(f->ds[2].obj_id, 999);
    assert_int_equal(f->n_ds_regions, 4);
    assert_int_equal(f->ds_regions[1].reg.offset, 64);
    assert_int_equal(f->tq_size, 20);
    legacy_file_free(f);
    free(b.p);
}

/* ---- truncation and corruption ---- */

/* Parse data[0..len) from an exactly-sized heap copy; expect failure with
 * "<name>: byte <n>: " and return n. */
static size_t expect_reject(const char *name, const uint8_t *data, size_t len, const char *want)
{
    uint8_t *copy = malloc(len ? len : 1);
    struct legacy_file *f = NULL;
    char err[ERRLEN], prefix[256];
    unsigned long long off = 0;
    assert_non_null(copy);
    memcpy(copy, data, len);
    int rc = legacy_parse(&f, name, copy, len, err, sizeof err);
    if (rc == 0)
        fail_msg("%s (%zu bytes) parsed, expected a rejection%s%s", name, len, want ? " with " : "",
                 want ? want : "");
    assert_null(f);
    assert_int_equal(rc, CKPT_E_RECORD);
    snprintf(prefix, sizeof prefix, "%s: byte ", name);
    if (strncmp(err, prefix, strlen(prefix)) != 0 ||
        sscanf(err + strlen(prefix), "%llu", &off) != 1)
        fail_msg("message does not name the file and a byte offset: %s", err);
    if (off > len)
        fail_msg("offset %llu past the %zu bytes: %s", off, len, err);
    if (want && strstr(err, want) == NULL)
        fail_msg("message lacks \"%s\": %s", want, err);
    /* the thread's message is the same */
    assert_non_null(strstr(ckpt_errmsg(), prefix));
    free(copy);
    return (size_t)off;
}

static void parse_ok(const char *name, const uint8_t *data, size_t len, struct legacy_file **f)
{
    char err[ERRLEN];
    int rc = legacy_parse(f, name, data, len, err, sizeof err);
    if (rc)
        fail_msg("%s", err);
}

/* Offsets of every record and field boundary of a parsed file. */
static size_t boundaries(const struct legacy_file *f, size_t *out, size_t cap)
{
    size_t n = 0;
#define B(x)                                                                                     \
    do {                                                                                         \
        if (n < cap)                                                                             \
            out[n++] = (x);                                                                      \
    } while (0)
    B(0);
    B(4);
    for (size_t i = 0; i < f->n_conts; i++) {
        B(f->conts[i].offset);
        B(f->conts[i].offset + 4);
    }
    B(f->off_n_bucket);
    B(f->off_n_bucket + 4);
    for (size_t i = 0; i < f->n_buckets; i++) {
        B(f->buckets[i].offset + 4);
        B(f->buckets[i].offset + 8);
    }
    for (size_t i = 0; i < f->n_objs; i++) {
        B(f->objs[i].offset);
        B(f->objs[i].offset + 2064);
        B(f->objs[i].off_n_kvtag);
        B(f->objs[i].off_n_kvtag + 4);
        B(f->objs[i].off_n_region);
        B(f->objs[i].off_n_region + 4);
    }
    for (size_t i = 0; i < f->n_kvtags; i++) {
        size_t o = f->kvtags[i].offset, nl = strlen(f->kvtags[i].tag.name) + 1;
        B(o);
        B(o + 4);
        B(o + 4 + nl);
        B(o + 8 + nl);
        B(o + 9 + nl);
        B(o + 9 + nl + f->kvtags[i].tag.size);
    }
    for (size_t i = 0; i < f->n_regions; i++) {
        size_t o = f->regions[i].offset;
        B(o);
        B(o + LEGACY_REGION_SIZE);
        B(o + LEGACY_REGION_SIZE + 4);
        if (f->regions[i].reg.has_hist) {
            B(o + LEGACY_REGION_SIZE + 8);
            B(o + LEGACY_REGION_SIZE + 12);
            B(o + LEGACY_REGION_SIZE + 12 + 16 * (size_t)f->regions[i].reg.hist.nbin);
            B(o + LEGACY_REGION_SIZE + 12 + 24 * (size_t)f->regions[i].reg.hist.nbin);
        }
    }
    B(f->off_n_ds);
    B(f->off_n_ds + 4);
    for (size_t i = 0; i < f->n_ds; i++) {
        B(f->ds[i].offset);
        B(f->ds[i].offset + 8);
        B(f->ds[i].offset + 12);
    }
    for (size_t i = 0; i < f->n_ds_regions; i++)
        B(f->ds_regions[i].offset);
    B(f->off_tq_size);
    B(f->off_tq_size + 8);
#undef B
    return n;
}

static void truncation_sweep(const char *name, const uint8_t *data, size_t size)
{
    struct legacy_file *f;
    size_t cap = 8192, nb, tried = 0;
    size_t *b = malloc(cap * sizeof *b);
    assert_non_null(b);
    parse_ok(name, data, size, &f);
    nb = boundaries(f, b, cap);
    legacy_file_free(f);
    for (size_t len = 0; len < size; len += 997, tried++)
        expect_reject(name, data, len, NULL);
    for (size_t i = 0; i < nb; i++)
        for (int d = -1; d <= 1; d++) {
            if (b[i] == 0 && d < 0)
                continue;
            size_t len = b[i] + (size_t)(ptrdiff_t)d;
            if (len >= size)
                continue;
            size_t off = expect_reject(name, data, len, NULL);
            (void)off;
            tried++;
        }
    /* the last byte missing */
    expect_reject(name, data, size - 1, NULL);
    assert_true(tried > 30);
    free(b);
}

static void test_truncated_L1(void **state)
{
    char path[1024];
    size_t size;
    (void)state;
    ltu_path(path, sizeof path, "L1", "metadata_checkpoint.0");
    uint8_t *d = ltu_read_file(path, &size);
    truncation_sweep("metadata_checkpoint.0", d, size);
    free(d);
}

static void test_truncated_L2(void **state)
{
    char path[1024];
    size_t size;
    (void)state;
    for (int r = 0; r < 2; r++) {
        char fn[64];
        snprintf(fn, sizeof fn, "metadata_checkpoint.%d", r);
        ltu_path(path, sizeof path, "L2", fn);
        uint8_t *d = ltu_read_file(path, &size);
        truncation_sweep(fn, d, size);
        free(d);
    }
}

static void test_truncated_synthetic(void **state)
{
    struct ltu_buf b = {NULL, 0, 0};
    (void)state;
    ltu_synth(&b);
    truncation_sweep("synthetic", b.p, b.len);
    free(b.p);
}

/* A corrupted copy: patch, parse, expect `want` at byte `at`. */
struct patch {
    const char *name;
    const uint8_t *orig;
    size_t size;
};

/* the int32 (is_u64 0) or uint64 at off set to v */
static void corrupt(const struct patch *p, size_t off, int is_u64, uint64_t v, size_t at,
                    const char *want)
{
    uint8_t *c = malloc(p->size);
    assert_non_null(c);
    memcpy(c, p->orig, p->size);
    if (is_u64)
        ltu_set_u64(c, off, v);
    else
        ltu_set_i32(c, off, (int32_t)v);
    size_t got = expect_reject(p->name, c, p->size, want);
    if (got != at)
        fail_msg("patch of %s at %zu to %lld: error at byte %zu, expected %zu",
                 is_u64 ? "uint64" : "int32", off, is_u64 ? (long long)v : (long long)(int32_t)v,
                 got, at);
    free(c);
}

static void corrupt_i32(const struct patch *p, size_t off, int32_t v, size_t at, const char *want)
{
    corrupt(p, off, 0, (uint64_t)(int64_t)v, at, want);
}

static void corrupt_u64(const struct patch *p, size_t off, uint64_t v, size_t at, const char *want)
{
    corrupt(p, off, 1, v, at, want);
}

static void corrupt_bytes(const struct patch *p, size_t off, int byte, size_t n, size_t at,
                          const char *want)
{
    uint8_t *c = malloc(p->size);
    assert_non_null(c);
    memcpy(c, p->orig, p->size);
    memset(c + off, byte, n);
    size_t got = expect_reject(p->name, c, p->size, want);
    if (got != at)
        fail_msg("patch of %zu bytes at %zu: error at byte %zu, expected %zu", n, off, got, at);
    free(c);
}

static void test_corrupted_L1(void **state)
{
    char path[1024];
    size_t size;
    struct legacy_file *f;
    (void)state;
    ltu_path(path, sizeof path, "L1", "metadata_checkpoint.0");
    uint8_t *d = ltu_read_file(path, &size);
    struct patch p = {"metadata_checkpoint.0", d, size};
    parse_ok(p.name, d, size, &f);

    /* container count and records */
    corrupt_i32(&p, 0, INT32_MAX, 0, "n_cont 2147483647 exceeds the");
    corrupt_i32(&p, 0, -1, 0, "n_cont -1 is negative");
    corrupt_i32(&p, 0, 31, 0, "exceeds the");
    corrupt_i32(&p, f->conts[0].offset, 7, f->conts[0].offset, "hash_key 7");
    corrupt_bytes(&p, f->conts[0].offset + 4 + 8, 'A', 1024, f->conts[0].offset + 4 + 8,
                  "cont_name is not NUL-terminated within its 1024 bytes");
    corrupt_bytes(&p, f->conts[1].offset + 4 + 1056, 'T', 2048, f->conts[1].offset + 4 + 1056,
                  "container tags is not NUL-terminated");
    /* buckets */
    corrupt_i32(&p, f->off_n_bucket, INT32_MAX, f->off_n_bucket, "n_bucket 2147483647 exceeds");
    corrupt_i32(&p, f->off_n_bucket, INT32_MIN, f->off_n_bucket, "is negative");
    corrupt_i32(&p, f->buckets[0].offset, 1000000, f->buckets[0].offset,
                "bucket n_obj 1000000 exceeds the");
    corrupt_i32(&p, f->buckets[0].offset, -3, f->buckets[0].offset, "bucket n_obj -3 is negative");
    corrupt_i32(&p, f->buckets[0].offset + 4, 1234, f->objs[0].offset + 1028,
                "bucket's hash_key is 1234");
    /* one object */
    const struct legacy_obj *o = &f->objs[0];
    corrupt_u64(&p, o->offset + 5184, 5, o->offset + 5184, "object ndim 5 is more than 4");
    corrupt_u64(&p, o->offset + 5184, UINT64_MAX, o->offset + 5184, "object ndim");
    corrupt_bytes(&p, o->offset + 1028, 's', 1024, o->offset + 1028, "obj_name is not NUL-terminated");
    corrupt_bytes(&p, o->offset + 4, 'v', 1024, o->offset + 4, "app_name is not NUL-terminated");
    corrupt_bytes(&p, o->offset + 2102, ' ', 2048, o->offset + 2102, "object tags is not");
    corrupt_bytes(&p, o->offset + 4160, '/', 1024, o->offset + 4160, "data_location is not");
    corrupt_i32(&p, o->off_n_kvtag, 99999999, o->off_n_kvtag, "n_kvtag 99999999 exceeds the");
    corrupt_i32(&p, o->off_n_kvtag, -1, o->off_n_kvtag, "n_kvtag -1 is negative");
    corrupt_i32(&p, o->off_n_region, 1 << 20, o->off_n_region, "n_region 1048576 exceeds the");
    corrupt_i32(&p, o->off_n_region, -7, o->off_n_region, "n_region -7 is negative");
    /* one kvtag */
    const struct legacy_kvtag *t = &f->kvtags[0];
    size_t nl = strlen(t->tag.name) + 1;
    corrupt_i32(&p, t->offset, 99999, t->offset, "kvtag name_len 99999 exceeds the");
    corrupt_i32(&p, t->offset, INT32_MAX, t->offset, "kvtag name_len 2147483647 exceeds the");
    corrupt_i32(&p, t->offset, 0, t->offset, "kvtag name_len 0 is not positive");
    corrupt_i32(&p, t->offset, -1, t->offset, "kvtag name_len -1 is not positive");
    corrupt_bytes(&p, t->offset + 4 + nl - 1, 'x', 1, t->offset + 4 + nl - 1,
                  "does not end with a NUL");
    corrupt_bytes(&p, t->offset + 4, 0, 1, t->offset + 4, "holds a NUL before its end");
    corrupt_i32(&p, t->offset + 4 + nl, -1, t->offset + 4 + nl, "kvtag size 4294967295 exceeds");
    corrupt_i32(&p, t->offset + 4 + nl, (int32_t)(size - t->offset), t->offset + 4 + nl,
                "kvtag size");
    /* a value that swallows the rest of the file: the next tag does not fit */
    corrupt_i32(&p, t->offset + 4 + nl, (int32_t)(size - t->offset - nl - 9), size,
                "kvtag name_len needs 4 bytes but only 0 are left");
    /* data-server regions */
    corrupt_i32(&p, f->off_n_ds, 1 << 30, f->off_n_ds, "n_ds_obj 1073741824 exceeds the");
    corrupt_i32(&p, f->off_n_ds, -2, f->off_n_ds, "n_ds_obj -2 is negative");
    corrupt_i32(&p, f->ds[0].offset + 8, 1000, f->ds[0].offset + 8,
                "data-server n_region 1000 exceeds the");
    corrupt_i32(&p, f->ds[0].offset + 8, -1, f->ds[0].offset + 8, "data-server n_region -1 is");
    const struct legacy_region *r = &f->ds_regions[0];
    corrupt_u64(&p, r->offset, 9, r->offset, "region ndim 9 is more than 4");
    corrupt_bytes(&p, r->offset + 1268, 'p', 1024, r->offset + 1268,
                  "region storage_location is not NUL-terminated");
    corrupt_bytes(&p, r->offset + 2404, 'q', 1024, r->offset + 2404,
                  "region cache_location is not NUL-terminated");
    /* the transfer-query blob */
    size_t after = size - f->off_tq_size - 8;
    corrupt_u64(&p, f->off_tq_size, after + 1, f->off_tq_size, "exceeds the 4 bytes left");
    corrupt_u64(&p, f->off_tq_size, UINT64_MAX, f->off_tq_size, "tq_size 18446744073709551615");
    corrupt_u64(&p, f->off_tq_size, 1ull << 63, f->off_tq_size, "tq_size 9223372036854775808");
    corrupt_u64(&p, f->off_tq_size, after - 1, size - 1, "1 trailing bytes");
    /* trailing bytes after a valid file */
    {
        uint8_t *c = malloc(size + 3);
        assert_non_null(c);
        memcpy(c, d, size);
        memset(c + size, 0, 3);
        assert_int_equal(expect_reject(p.name, c, size + 3, "3 trailing bytes"), size);
        free(c);
    }
    legacy_file_free(f);
    free(d);
}

static void test_corrupted_synthetic(void **state)
{
    struct ltu_buf b = {NULL, 0, 0};
    struct legacy_file *f;
    (void)state;
    ltu_synth(&b);
    struct patch p = {"synthetic", b.p, b.len};
    parse_ok(p.name, b.p, b.len, &f);
    size_t h = f->regions[0].offset + LEGACY_REGION_SIZE; /* has_hist of R1 */
    corrupt_i32(&p, h, 2, h, "region has_hist 2 is neither 0 nor 1");
    corrupt_i32(&p, h, -1, h, "region has_hist -1");
    corrupt_i32(&p, h + 8, INT32_MAX, h + 8, "histogram nbin 2147483647 exceeds the");
    corrupt_i32(&p, h + 8, -5, h + 8, "histogram nbin -5 is negative");
    corrupt_i32(&p, h + 8, 100000, h + 8, "histogram nbin 100000 exceeds");
    /* a histogram on R2 (which has none): what follows no longer parses */
    {
        uint8_t *c = malloc(b.len);
        assert_non_null(c);
        memcpy(c, b.p, b.len);
        ltu_set_i32(c, f->regions[1].offset + LEGACY_REGION_SIZE, 1);
        expect_reject(p.name, c, b.len, NULL);
        free(c);
    }
    corrupt_u64(&p, f->regions[0].offset, 5, f->regions[0].offset, "region ndim 5");
    /* the empty bucket claims objects */
    corrupt_i32(&p, f->buckets[3].offset, 1000, f->buckets[3].offset, "bucket n_obj 1000 exceeds");
    /* the second object in bucket syn/a gets another name */
    corrupt_bytes(&p, f->objs[1].offset + 1028 + 4, 'z', 1, f->objs[1].offset + 1028,
                  "hashes to");
    legacy_file_free(f);
    free(b.p);
}

/* Random mutations (counts, lengths, anywhere): never a crash, and every
 * rejection names the file and an offset inside it. */
static void test_random_mutations(void **state)
{
    char path[1024];
    size_t size, nb, cap = 8192;
    struct legacy_file *f;
    uint64_t s = 0x5eed;
    (void)state;
    ltu_path(path, sizeof path, "L1", "metadata_checkpoint.0");
    uint8_t *d = ltu_read_file(path, &size);
    size_t *b = malloc(cap * sizeof *b);
    assert_non_null(b);
    parse_ok("m", d, size, &f);
    nb = boundaries(f, b, cap);
    legacy_file_free(f);
    int rejected = 0, accepted = 0;
    for (int it = 0; it < 3000; it++) {
        uint8_t *c = malloc(size);
        assert_non_null(c);
        memcpy(c, d, size);
        int nmut = 1 + (int)(s % 3);
        for (int m = 0; m < nmut; m++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            size_t at = (s >> 33) % 2 ? b[(s >> 20) % nb] : (size_t)((s >> 16) % size);
            if (at + 4 > size)
                at = size - 4;
            uint32_t v = (uint32_t)(s >> 7);
            switch ((s >> 40) % 4) {
            case 0: v &= 0xff; break;
            case 1: v = (uint32_t)-(int32_t)(v & 0xff); break;
            case 2: v |= 0x80000000u; break;
            default: break;
            }
            ltu_set_i32(c, at, (int32_t)v);
        }
        char err[ERRLEN];
        struct legacy_file *g = NULL;
        int rc = legacy_parse(&g, "mutant", c, size, err, sizeof err);
        if (rc == 0) {
            accepted++;
            legacy_file_free(g);
        } else {
            unsigned long long off;
            rejected++;
            assert_int_equal(rc, CKPT_E_RECORD);
            assert_int_equal(strncmp(err, "mutant: byte ", 13), 0);
            assert_int_equal(sscanf(err + 13, "%llu", &off), 1);
            assert_true(off <= size);
        }
        free(c);
    }
    assert_true(rejected > 100);
    assert_true(accepted + rejected == 3000);
    free(b);
    free(d);
}

static void test_read_errors(void **state)
{
    char dir[512], p[700], err[ERRLEN];
    struct legacy_file *f = (struct legacy_file *)&err; /* must be reset */
    (void)state;
    ltu_mkdtemp(dir, sizeof dir, "read");
    snprintf(p, sizeof p, "%s/metadata_checkpoint.7", dir);
    assert_int_equal(legacy_file_read(&f, p, err, sizeof err), CKPT_E_NOSTORE);
    assert_null(f);
    assert_non_null(strstr(err, p));
    assert_int_equal(legacy_file_read(&f, dir, err, sizeof err), CKPT_E_INVAL);
    assert_non_null(strstr(err, "not a regular file"));
    /* an empty file: the first count does not fit */
    ltu_write_file(p, "", 0);
    assert_int_equal(legacy_file_read(&f, p, err, sizeof err), CKPT_E_RECORD);
    assert_non_null(strstr(err, "metadata_checkpoint.7: byte 0: n_cont needs 4 bytes but only 0"));
    /* the smallest valid file: no containers, buckets, ds lists; empty blob */
    struct ltu_buf b = {NULL, 0, 0};
    ltu_i32(&b, 0);
    ltu_i32(&b, 0);
    ltu_i32(&b, 0);
    ltu_u64(&b, 0);
    ltu_write_file(p, b.p, b.len);
    assert_int_equal(legacy_file_read(&f, p, err, sizeof err), 0);
    assert_int_equal(f->n_objs, 0);
    assert_int_equal(f->size, 20);
    legacy_file_free(f);
    legacy_file_free(NULL);
    free(b.p);
    tu_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_L1_matches_expected),
        cmocka_unit_test(test_L2_matches_expected),
        cmocka_unit_test(test_L1_spot_values),
        cmocka_unit_test(test_synthetic),
        cmocka_unit_test(test_truncated_L1),
        cmocka_unit_test(test_truncated_L2),
        cmocka_unit_test(test_truncated_synthetic),
        cmocka_unit_test(test_corrupted_L1),
        cmocka_unit_test(test_corrupted_synthetic),
        cmocka_unit_test(test_random_mutations),
        cmocka_unit_test(test_read_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
