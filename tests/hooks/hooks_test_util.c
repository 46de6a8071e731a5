/*
 * hooks_test_util.c - see hooks_test_util.h.
 */
#include "ckpt_fs.h"
#include "hooks_test_util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int htu_setup(void **state)
{
    return tu_case_new(state, "hooks-test");
}

int htu_teardown(void **state)
{
    return tu_case_free(state);
}

struct tu_case *htu_fix(void **state)
{
    return *state;
}

struct ckpt_hooks_opts htu_opts(void **state)
{
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    o.store_root = htu_fix(state)->root;
    /* sparse anyway, but keep the files small */
    o.map_size = (size_t)8 << 20;
    return o;
}

void htu_check_rc(int want, int rc, const char *expr, const char *file, int line)
{
    if (rc != want) {
        print_error("%s:%d: %s returned %d (%s), expected %d (%s); last message: %s\n", file, line,
                    expr, rc, ckpt_errname(rc), want, ckpt_errname(want), ckpt_errmsg());
        fail_msg("%s: unexpected return code", expr);
    }
}

int htu_streq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

void htu_assert_obj_eq(const struct ckpt_obj *a, const struct ckpt_obj *b)
{
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->obj_id, b->obj_id);
    assert_int_equal(a->cont_id, b->cont_id);
    assert_true(htu_streq(a->obj_name, b->obj_name));
    assert_true(htu_streq(a->app_name, b->app_name));
    assert_true(htu_streq(a->data_location, b->data_location));
    assert_true(htu_streq(a->tags, b->tags));
    assert_int_equal(a->time_step, b->time_step);
    assert_int_equal(a->user_id, b->user_id);
    assert_int_equal(a->data_type, b->data_type);
    assert_int_equal(a->transform_state, b->transform_state);
    assert_true(a->create_time == b->create_time);
    assert_true(a->last_modified_time == b->last_modified_time);
    assert_int_equal(a->data_server_id, b->data_server_id);
    assert_int_equal(a->region_partition, b->region_partition);
    assert_int_equal(a->consistency, b->consistency);
    assert_int_equal(a->ndim, b->ndim);
    for (uint32_t i = 0; i < a->ndim && i < CKPT_MAX_DIM; i++)
        assert_true(a->dims[i] == b->dims[i]);
}

void htu_assert_region_eq(const struct ckpt_region *a, const struct ckpt_region *b)
{
    assert_int_equal(a->obj_id, b->obj_id);
    assert_int_equal(a->ndim, b->ndim);
    for (uint32_t i = 0; i < a->ndim && i < CKPT_MAX_DIM; i++) {
        assert_true(a->start[i] == b->start[i]);
        assert_true(a->count[i] == b->count[i]);
    }
    assert_true(a->data_size == b->data_size);
    assert_true(a->unit_size == b->unit_size);
    assert_int_equal(a->data_loc_type, b->data_loc_type);
    assert_true(htu_streq(a->storage_location, b->storage_location));
    assert_true(a->offset == b->offset);
    assert_true(htu_streq(a->cache_location, b->cache_location));
    assert_true(a->cache_offset == b->cache_offset);
    assert_int_equal(!!a->has_hist, !!b->has_hist);
    if (!a->has_hist)
        return;
    assert_int_equal(a->hist.dtype, b->hist.dtype);
    assert_int_equal(a->hist.nbin, b->hist.nbin);
    assert_true(a->hist.incr == b->hist.incr);
    for (size_t i = 0; i < (size_t)a->hist.nbin; i++) {
        assert_true(ckpt_hist_bin(&a->hist, i) == ckpt_hist_bin(&b->hist, i));
        assert_true(ckpt_hist_range(&a->hist, 2 * i) == ckpt_hist_range(&b->hist, 2 * i));
        assert_true(ckpt_hist_range(&a->hist, 2 * i + 1) == ckpt_hist_range(&b->hist, 2 * i + 1));
    }
}

void htu_assert_kvtag_eq(const struct ckpt_kvtag *a, const struct ckpt_kvtag *b)
{
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->type, b->type);
    assert_int_equal(a->size, b->size);
    if (a->size)
        assert_memory_equal(a->value, b->value, a->size);
}

char *htu_long_name(char fill, size_t len)
{
    char *s = malloc(len + 1);
    assert_non_null(s);
    memset(s, fill, len);
    s[len] = 0;
    return s;
}

struct ckpt_obj htu_full_obj(uint32_t ndim)
{
    struct ckpt_obj o;
    memset(&o, 0, sizeof o);
    o.obj_id = 1000000042ull;
    o.cont_id = 1000000001ull;
    o.obj_name = "/run-7/field/temperature";
    o.app_name = "vpic";
    o.data_location = "/lustre/scratch/run-7/temperature.h5";
    o.tags = "kind=field,units=K";
    o.time_step = 17;
    o.user_id = 4242;
    o.data_type = 14;
    o.transform_state = 3;
    o.create_time = 1700000000123ll;
    o.last_modified_time = 1700000009999ll;
    o.data_server_id = 9;
    o.region_partition = 2;
    o.consistency = 1;
    o.ndim = ndim;
    for (uint32_t i = 0; i < ndim && i < CKPT_MAX_DIM; i++)
        o.dims[i] = 1000u * (i + 1) + i;
    return o;
}

const double htu_hist_range[6] = {-1.5, 0.0, 0.0, 2.25, 2.25, 1e300};
const uint64_t htu_hist_bin[3] = {7, 0, UINT64_MAX};

struct ckpt_region htu_full_region(uint32_t ndim, int with_hist)
{
    struct ckpt_region g;
    memset(&g, 0, sizeof g);
    g.obj_id = 1000000042ull;
    g.ndim = ndim;
    for (uint32_t i = 0; i < ndim && i < CKPT_MAX_DIM; i++) {
        g.start[i] = 10u * i;
        g.count[i] = 100u + i;
    }
    g.data_size = 123456789ull;
    g.unit_size = 8;
    g.data_loc_type = 2;
    g.storage_location = "/lustre/region.bin";
    g.offset = 4096;
    g.cache_location = "/dev/shm/cache";
    g.cache_offset = 512;
    g.has_hist = with_hist;
    if (with_hist) {
        g.hist.dtype = 14;
        g.hist.nbin = 3;
        g.hist.range = htu_hist_range;
        g.hist.bin = htu_hist_bin;
        g.hist.incr = 0.75;
    }
    return g;
}
