/*
 * test_hooks.c - every hook, then close, then a map restart (lookups) or a
 * rebuild restart (callbacks) sees exactly the expected content; ids across
 * close/reopen and crashes (discard); long names; NULL arguments; options
 * from the environment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bulki.h"
#include "hooks_test_util.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ */
/* helpers                                                             */
/* ------------------------------------------------------------------ */

static struct ckpt_obj mk_obj(uint64_t id, uint64_t cont, const char *name, int32_t ts)
{
    struct ckpt_obj o;
    memset(&o, 0, sizeof o);
    o.obj_id = id;
    o.cont_id = cont;
    o.obj_name = name;
    o.app_name = "app";
    o.data_location = "/data/loc";
    o.tags = "";
    o.time_step = ts;
    o.user_id = 1000;
    o.data_type = BULKI_T_DOUBLE;
    o.create_time = 1700000000000ll + (int64_t)id;
    o.last_modified_time = o.create_time;
    o.data_server_id = 1;
    o.ndim = 2;
    o.dims[0] = 64;
    o.dims[1] = 32;
    return o;
}

static struct ckpt_region mk_region(uint64_t obj, uint32_t ndim, uint64_t s0, const double *range,
                                    const uint64_t *bins, int32_t nbin)
{
    struct ckpt_region g;
    memset(&g, 0, sizeof g);
    g.obj_id = obj;
    g.ndim = ndim;
    for (uint32_t i = 0; i < ndim; i++) {
        g.start[i] = s0 + i;
        g.count[i] = 16u << i;
    }
    g.data_size = 8ull * 16 * ndim + s0;
    g.unit_size = 8;
    g.data_loc_type = 1;
    g.storage_location = "/data/region";
    g.offset = s0 * 4096;
    g.cache_location = "";
    g.cache_offset = 0;
    if (nbin >= 0) {
        g.has_hist = 1;
        g.hist.dtype = BULKI_T_DOUBLE;
        g.hist.nbin = nbin;
        g.hist.range = range;
        g.hist.bin = bins;
        g.hist.incr = 0.5;
    }
    return g;
}

static ckpt_hooks *open_h(void **state)
{
    struct ckpt_hooks_opts o = htu_opts(state);
    ckpt_hooks *h = NULL;
    HTU_OK(ckpt_hooks_open(&h, &o));
    assert_non_null(h);
    return h;
}

static ckpt_hooks *map_h(void **state)
{
    struct ckpt_hooks_opts o = htu_opts(state);
    ckpt_hooks *h = NULL;
    HTU_OK(ckpt_hooks_restart_map(&h, &o));
    assert_non_null(h);
    return h;
}

static uint64_t new_id(ckpt_hooks *h)
{
    uint64_t id = 0;
    HTU_OK(ckpt_hook_new_id(&id, h));
    assert_true(id != 0);
    return id;
}

static void close_h(ckpt_hooks *h)
{
    HTU_OK(ckpt_hooks_close(h));
}

/* The options' size field: 0 or an unknown size is refused by every entry
 * that takes options, naming the macro to initialize with; the first
 * version's size opens (fields past it at their defaults). */
static void test_opts_size_is_checked(void **state)
{
    struct ckpt_hooks_opts o = htu_opts(state);
    struct ckpt_rebuild_stats s;
    ckpt_hooks *h = NULL;
    assert_int_equal(o.size, sizeof o);
    o.size = 0;
    assert_int_equal(ckpt_hooks_open(&h, &o), CKPT_E_INVAL);
    assert_null(h);
    assert_non_null(strstr(ckpt_errmsg(), "CKPT_HOOKS_OPTS_INIT"));
    o.size = CKPT_HOOKS_OPTS_SIZE_V1 - 1;
    assert_int_equal(ckpt_hooks_restart_map(&h, &o), CKPT_E_INVAL);
    assert_int_equal(ckpt_hooks_restart_rebuild(&h, &o, NULL, NULL, &s), CKPT_E_INVAL);
    o.size = sizeof o + 1;
    assert_int_equal(ckpt_hooks_open_readonly(&h, &o), CKPT_E_INVAL);
    assert_null(h);
    o.size = CKPT_HOOKS_OPTS_SIZE_V1;
    HTU_OK(ckpt_hooks_open(&h, &o));
    close_h(h);
}

/* Collectors for the foreach callbacks (views are used before read_end). */
struct ids {
    size_t n;
    uint64_t v[256];
    int stop_after;  /* > 0: return 7 after this many */
};

static int cb_member(uint64_t cont, uint64_t obj, void *p)
{
    struct ids *s = p;
    (void)cont;
    assert_true(s->n < NELEM(s->v));
    s->v[s->n++] = obj;
    return s->stop_after > 0 && (int)s->n >= s->stop_after ? 7 : 0;
}

static int cb_id(uint64_t id, void *p)
{
    return cb_member(0, id, p);
}

struct tags {
    size_t n;
    uint64_t owner[64];
    struct ckpt_kvtag t[64];
    int stop_after;
    int fail_with;
};

static int cb_tag(uint64_t owner, const struct ckpt_kvtag *t, void *p)
{
    struct tags *s = p;
    assert_true(s->n < NELEM(s->t));
    s->owner[s->n] = owner;
    s->t[s->n++] = *t;
    if (s->fail_with)
        return s->fail_with;
    return s->stop_after > 0 && (int)s->n >= s->stop_after ? 5 : 0;
}

struct regs {
    size_t n;
    struct ckpt_region r[32];
};

static int cb_region(const struct ckpt_region *g, void *p)
{
    struct regs *s = p;
    assert_true(s->n < NELEM(s->r));
    s->r[s->n++] = *g;
    return 0;
}

static void assert_ids(const struct ids *s, const uint64_t *want, size_t n)
{
    if (s->n != n)
        fail_msg("got %zu ids, expected %zu", s->n, n);
    for (size_t i = 0; i < n; i++)
        if (s->v[i] != want[i])
            fail_msg("id %zu: got %llu, expected %llu", i, (unsigned long long)s->v[i],
                     (unsigned long long)want[i]);
}

static struct ids members(ckpt_hooks_read *r, uint64_t cont)
{
    struct ids s;
    memset(&s, 0, sizeof s);
    HTU_OK(ckpt_hooks_foreach_member(r, cont, cb_member, &s));
    return s;
}

static struct ids tagged(ckpt_hooks_read *r, const char *name)
{
    struct ids s;
    memset(&s, 0, sizeof s);
    HTU_OK(ckpt_hooks_foreach_tagged(r, name, cb_id, &s));
    return s;
}

static size_t count_tags(ckpt_hooks_read *r, uint64_t owner)
{
    struct tags s;
    memset(&s, 0, sizeof s);
    HTU_OK(ckpt_hooks_foreach_kvtag(r, owner, cb_tag, &s));
    return s.n;
}

static size_t count_regions(ckpt_hooks_read *r, uint64_t obj)
{
    struct regs s;
    memset(&s, 0, sizeof s);
    HTU_OK(ckpt_hooks_foreach_region(r, obj, cb_region, &s));
    return s.n;
}

static void sort_u64(uint64_t *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
}

/* The indexes hold exactly one entry per record: obj_name per object,
 * cont_name per container, kvtag_name per kvtag (no orphans left behind by
 * deletes, renames or replacements). */
static void assert_indexes_match(ckpt_hooks *h)
{
    ckpt_rtxn *tx;
    uint64_t n[CKPT_DB_COUNT];
    HTU_OK(ckpt_rtxn_begin(&tx, ckpt_hooks_store(h)));
    for (int db = 0; db < CKPT_DB_COUNT; db++)
        HTU_OK(ckpt_db_stat(&n[db], NULL, tx, db));
    ckpt_rtxn_end(tx);
    assert_int_equal(n[CKPT_DB_OBJ_NAME], n[CKPT_DB_OBJ]);
    assert_int_equal(n[CKPT_DB_CONT_NAME], n[CKPT_DB_CONT]);
    assert_int_equal(n[CKPT_DB_TAG_INDEX], n[CKPT_DB_KVTAG]);
}

/* Clear this thread's message, so a check sees the message of the next
 * failing call and not a stale one. */
static void clear_msg(void)
{
    ckpt_error(0, "%s", "");
}

static void assert_msg_has(const char *needle)
{
    const char *m = ckpt_errmsg();
    assert_non_null(m);
    if (strstr(m, needle) == NULL)
        fail_msg("error message \"%s\" does not mention \"%s\"", m, needle);
}

/* ------------------------------------------------------------------ */
/* objects                                                             */
/* ------------------------------------------------------------------ */

static void test_obj_create_update_rename_delete_then_map_restart(void **state)
{
    ckpt_hooks *h = open_h(state);
    uint64_t c1 = new_id(h), o1 = new_id(h), o2 = new_id(h), o3 = new_id(h);
    struct ckpt_cont c = {c1, "/c1", ""};
    HTU_OK(ckpt_hook_cont_create(h, &c));
    struct ckpt_obj a = mk_obj(o1, c1, "/c1/a", 0), b = mk_obj(o2, c1, "/c1/b", 1),
                    d = mk_obj(o3, c1, "/c1/c", 0);
    d.ndim = 3;
    d.dims[2] = 7;
    HTU_OK(ckpt_hook_obj_create(h, &a));
    HTU_OK(ckpt_hook_obj_create(h, &b));
    HTU_OK(ckpt_hook_obj_create(h, &d));
    uint64_t all[3] = {o1, o2, o3};
    HTU_OK(ckpt_hook_cont_add_objs(h, c1, all, 3));
    /* o3 gets kvtags and regions, then is deleted: they must go with it */
    int32_t iv = 5;
    struct ckpt_kvtag t1 = {"k1", BULKI_T_INT, 4, &iv}, t2 = {"k2", BULKI_T_STRING, 3, "xy"};
    HTU_OK(ckpt_hook_kvtag_put(h, o3, &t1));
    HTU_OK(ckpt_hook_kvtag_put(h, o3, &t2));
    HTU_OK(ckpt_hook_kvtag_put(h, o1, &t2));
    static const double rg[4] = {0, 1, 1, 2};
    static const uint64_t bn[2] = {3, 4};
    struct ckpt_region r1 = mk_region(o3, 1, 0, rg, bn, 2), r2 = mk_region(o3, 2, 5, NULL, NULL, -1);
    HTU_OK(ckpt_hook_region_put(h, &r1));
    HTU_OK(ckpt_hook_region_put(h, &r2));
    /* update o1 in place */
    a.app_name = "app-v2";
    a.data_location = "/new/location";
    a.tags = "updated";
    a.last_modified_time += 1000;
    a.ndim = 4;
    a.dims[2] = 3;
    a.dims[3] = 9;
    a.consistency = 2;
    HTU_OK(ckpt_hook_obj_update(h, &a));
    /* rename o2 (and move it to another time step) */
    b.obj_name = "/c1/b-renamed";
    b.time_step = 2;
    HTU_OK(ckpt_hook_obj_update(h, &b));
    HTU_OK(ckpt_hook_obj_delete(h, o3));
    /* deleting what does not exist is not an error */
    HTU_OK(ckpt_hook_obj_delete(h, o3));
    HTU_OK(ckpt_hook_obj_delete(h, 987654321ull));
    close_h(h);

    h = map_h(state);
    ckpt_hooks_read *r;
    struct ckpt_obj got;
    HTU_OK(ckpt_hooks_read_begin(&r, h));
    HTU_OK(ckpt_hooks_get_obj(&got, r, o1));
    htu_assert_obj_eq(&a, &got);
    HTU_OK(ckpt_hooks_get_obj_by_name(&got, r, "/c1/a", 0));
    htu_assert_obj_eq(&a, &got);
    /* the rename: the old name is gone, the new one found */
    HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_obj_by_name(&got, r, "/c1/b", 1));
    HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_obj_by_name(&got, r, "/c1/b-renamed", 1));
    HTU_OK(ckpt_hooks_get_obj_by_name(&got, r, "/c1/b-renamed", 2));
    htu_assert_obj_eq(&b, &got);
    HTU_OK(ckpt_hooks_get_obj(&got, r, o2));
    assert_string_equal(got.obj_name, "/c1/b-renamed");
    /* the deletion cascades */
    HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_obj(&got, r, o3));
    HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_obj_by_name(&got, r, "/c1/c", 0));
    struct ckpt_kvtag tg;
    HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_kvtag(&tg, r, o3, "k1"));
    assert_int_equal(count_tags(r, o3), 0);
    assert_int_equal(count_regions(r, o3), 0);
    struct ids s = tagged(r, "k1");
    assert_int_equal(s.n, 0);
    s = tagged(r, "k2");
    assert_ids(&s, &o1, 1);
    /* o3 left its container (its cont_id) */
    s = members(r, c1);
    assert_ids(&s, all, 2);
    HTU_OK(ckpt_hooks_get_kvtag(&tg, r, o1, "k2"));
    assert_string_equal((const char *)tg.value, "xy");
    ckpt_hooks_read_end(r);
    assert_indexes_match(h);
    close_h(h);
}

static void test_lookups_see_committed_data_only(void **state)
{
    struct ckpt_hooks_opts o = htu_opts(state);
    o.commit_every = 0;
    o.commit_ms = 0;
    ckpt_hooks *h;
    HTU_OK(ckpt_hooks_open(&h, &o));
    uint64_t id = new_id(h);
    struct ckpt_obj a = mk_obj(id, 0, "pending", 0), got;
    HTU_OK(ckpt_hook_obj_create(h, &a));
    assert_int_equal(ckpt_store_pending(ckpt_hooks_store(h)), 1);
    ckpt_hooks_read *r;
    HTU_OK(ckpt_hooks_read_begin(&r, h));
    HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_obj(&got, r, id));
    ckpt_hooks_read_end(r);
    HTU_OK(ckpt_hooks_checkpoint(h));
    assert_int_equal(ckpt_store_pending(ckpt_hooks_store(h)), 0);
    HTU_OK(ckpt_hooks_read_begin(&r, h));
    HTU_OK(ckpt_hooks_get_obj(&got, r, id));
    htu_assert_obj_eq(&a, &got);
    ckpt_hooks_read_end(r);
    close_h(h);
}

static void test_large_records_take_the_heap_path(void **state)
{
    ckpt_hooks *h = open_h(state);
    uint64_t id = new_id(h);
    char *loc = htu_long_name('L', 3000);
    char *tagstr = htu_long_name('T', 5000);
    struct ckpt_obj a = mk_obj(id, 0, "big", 0), got;
    a.data_location = loc;
    a.tags = tagstr;
    HTU_OK(ckpt_hook_obj_create(h, &a));
    size_t vlen = 100000;
    uint8_t *val = malloc(vlen);
    assert_non_null(val);
    for (size_t i = 0; i < vlen; i++)
        val[i] = (uint8_t)(i * 31);
    struct ckpt_kvtag t = {"blob", BULKI_T_UINT8, (uint32_t)vlen, val}, tg;
    HTU_OK(ckpt_hook_kvtag_put(h, id, &t));
    enum { NB = 1000 };
    double *rg = malloc(2 * NB * sizeof *rg);
    uint64_t *bn = malloc(NB * sizeof *bn);
    assert_non_null(rg);
    assert_non_null(bn);
    for (int i = 0; i < NB; i++) {
        rg[2 * i] = i;
        rg[2 * i + 1] = i + 1;
        bn[i] = (uint64_t)i * 3;
    }
    struct ckpt_region g = mk_region(id, 3, 1, rg, bn, NB);
    HTU_OK(ckpt_hook_region_put(h, &g));
    close_h(h);

    h = map_h(state);
    ckpt_hooks_read *r;
    HTU_OK(ckpt_hooks_read_begin(&r, h));
    HTU_OK(ckpt_hooks_get_obj(&got, r, id));
    htu_assert_obj_eq(&a, &got);
    HTU_OK(ckpt_hooks_get_kvtag(&tg, r, id, "blob"));
    htu_assert_kvtag_eq(&t, &tg);
    struct regs rs;
    memset(&rs, 0, sizeof rs);
    HTU_OK(ckpt_hooks_foreach_region(r, id, cb_region, &rs));
    assert_int_equal(rs.n, 1);
    htu_assert_region_eq(&g, &rs.r[0]);
    ckpt_hooks_read_end(r);
    close_h(h);
    free(rg);
    free(bn);
    free(val);
    free(loc);
    free(tagstr);
}

/* ------------------------------------------------------------------ */
/* kvtags                                                              */
/* ------------------------------------------------------------------ */

static void test_kvtags_on_objects_and_containers(void **state)
{
    ckpt_hooks *h = open_h(state);
    uint64_t cid = new_id(h), oid = new_id(h);
    struct ckpt_cont c = {cid, "/tagged-cont", ""};
    struct ckpt_obj o = mk_obj(oid, cid, "/tagged-obj", 0);
    HTU_OK(ckpt_hook_cont_create(h, &c));
    HTU_OK(ckpt_hook_obj_create(h, &o));
    int32_t i42 = 42, arr[3] = {1, 2, 3};
    double dv = 2.5;
    struct ckpt_kvtag t_int = {"int", BULKI_T_INT, 4, &i42};
    struct ckpt_kvtag t_str1 = {"str", BULKI_T_STRING, 3, "v1"};
    struct ckpt_kvtag t_str2 = {"str", BULKI_T_STRING, 9, "value-v2"};
    struct ckpt_kvtag t_arr = {"arr", BULKI_T_INT, sizeof arr, arr};
    struct ckpt_kvtag t_shared_o = {"shared", BULKI_T_DOUBLE, 8, &dv};
    struct ckpt_kvtag t_shared_c = {"shared", BULKI_T_STRING, 5, "cont"};
    struct ckpt_kvtag t_cname = {"cname", BULKI_T_STRING, 2, "x"};
    HTU_OK(ckpt_hook_kvtag_put(h, oid, &t_int));
    HTU_OK(ckpt_hook_kvtag_put(h, oid, &t_str1));
    HTU_OK(ckpt_hook_kvtag_put(h, oid, &t_arr));
    HTU_OK(ckpt_hook_kvtag_put(h, oid, &t_shared_o));
    HTU_OK(ckpt_hook_kvtag_put(h, cid, &t_shared_c));
    HTU_OK(ckpt_hook_kvtag_put(h, cid, &t_cname));
    HTU_OK(ckpt_hook_kvtag_put(h, oid, &t_str2)); /* replaces "str" */
    HTU_OK(ckpt_hook_kvtag_delete(h, oid, "arr"));
    HTU_OK(ckpt_hook_kvtag_delete(h, cid, "cname"));
    HTU_OK(ckpt_hook_kvtag_delete(h, oid, "never-there"));
    /* names that are prefixes of each other stay apart in the tag index */
    struct ckpt_kvtag t_sh = {"sha", BULKI_T_INT, 4, &i42};
    HTU_OK(ckpt_hook_kvtag_put(h, cid, &t_sh));
    close_h(h);

    h = map_h(state);
    ckpt_hooks_read *r;
    struct ckpt_kvtag got;
    HTU_OK(ckpt_hooks_read_begin(&r, h));
    HTU_OK(ckpt_hooks_get_kvtag(&got, r, oid, "int"));
    htu_assert_kvtag_eq(&t_int, &got);
    HTU_OK(ckpt_hooks_get_kvtag(&got, r, oid, "str"));
    htu_assert_kvtag_eq(&t_str2, &got);
    HTU_OK(ckpt_hooks_get_kvtag(&got, r, oid, "shared"));
    htu_assert_kvtag_eq(&t_shared_o, &got);
    HTU_OK(ckpt_hooks_get_kvtag(&got, r, cid, "shared"));
    htu_assert_kvtag_eq(&t_shared_c, &got);
    HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_kvtag(&got, r, oid, "arr"));
    HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_kvtag(&got, r, cid, "cname"));
    HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_kvtag(&got, r, cid, "int"));

    /* exactly the live tags, in name order */
    struct tags ts;
    memset(&ts, 0, sizeof ts);
    HTU_OK(ckpt_hooks_foreach_kvtag(r, oid, cb_tag, &ts));
    assert_int_equal(ts.n, 3);
    assert_string_equal(ts.t[0].name, "int");
    assert_string_equal(ts.t[1].name, "shared");
    assert_string_equal(ts.t[2].name, "str");
    htu_assert_kvtag_eq(&t_str2, &ts.t[2]);
    for (size_t i = 0; i < ts.n; i++)
        assert_int_equal(ts.owner[i], oid);
    memset(&ts, 0, sizeof ts);
    HTU_OK(ckpt_hooks_foreach_kvtag(r, cid, cb_tag, &ts));
    assert_int_equal(ts.n, 2);
    htu_assert_kvtag_eq(&t_sh, &ts.t[0]);
    htu_assert_kvtag_eq(&t_shared_c, &ts.t[1]);
    struct ids sh = tagged(r, "sha");
    assert_ids(&sh, &cid, 1);
    assert_int_equal(tagged(r, "sh").n, 0);

    /* the tag index lists both owners of "shared", in id order */
    struct ids s = tagged(r, "shared");
    uint64_t both[2] = {cid, oid};
    sort_u64(both, 2);
    assert_ids(&s, both, 2);
    assert_int_equal(tagged(r, "arr").n, 0);
    assert_int_equal(tagged(r, "cname").n, 0);
    assert_int_equal(tagged(r, "str").n, 1);
    assert_int_equal(tagged(r, "nope").n, 0);

    /* callbacks stop the walk with a positive value, fail it with a
     * negative one; both are returned */
    memset(&ts, 0, sizeof ts);
    ts.stop_after = 1;
    assert_int_equal(ckpt_hooks_foreach_kvtag(r, oid, cb_tag, &ts), 5);
    assert_int_equal(ts.n, 1);
    memset(&ts, 0, sizeof ts);
    ts.fail_with = CKPT_E_NOMEM;
    HTU_RC(CKPT_E_NOMEM, ckpt_hooks_foreach_kvtag(r, oid, cb_tag, &ts));
    assert_int_equal(ts.n, 1);
    memset(&s, 0, sizeof s);
    s.stop_after = 1;
    assert_int_equal(ckpt_hooks_foreach_tagged(r, "shared", cb_id, &s), 7);
    assert_int_equal(s.n, 1);
    ckpt_hooks_read_end(r);
    assert_indexes_match(h);
    close_h(h);
}

/* ------------------------------------------------------------------ */
/* containers                                                          */
/* ------------------------------------------------------------------ */

/* ckpt_hooks_foreach_id: what a map-form server walks to answer a scan of
 * its whole table (server_hooks/pdc faults every record in with it). */
static void test_foreach_id_lists_every_object_and_container(void **state)
{
    ckpt_hooks *h = open_h(state);
    uint64_t c = new_id(h), o[4];
    struct ckpt_cont cont = {c, "/ids", ""};
    HTU_OK(ckpt_hook_cont_create(h, &cont));
    for (int i = 0; i < 4; i++) {
        char name[32];
        o[i] = new_id(h);
        snprintf(name, sizeof name, "/ids/o%d", i);
        struct ckpt_obj ob = mk_obj(o[i], c, name, 0);
        HTU_OK(ckpt_hook_obj_create(h, &ob));
    }
    HTU_OK(ckpt_hook_obj_delete(h, o[2]));
    close_h(h);

    h = map_h(state);
    ckpt_hooks_read *r;
    struct ids s;
    HTU_OK(ckpt_hooks_read_begin(&r, h));
    memset(&s, 0, sizeof s);
    HTU_OK(ckpt_hooks_foreach_id(r, 0, cb_id, &s));
    uint64_t objs[3] = {o[0], o[1], o[3]};
    assert_ids(&s, objs, 3);
    memset(&s, 0, sizeof s);
    HTU_OK(ckpt_hooks_foreach_id(r, 1, cb_id, &s));
    assert_ids(&s, &c, 1);
    /* a callback's stop value comes back and ends the walk */
    memset(&s, 0, sizeof s);
    s.stop_after = 1;
    assert_int_equal(ckpt_hooks_foreach_id(r, 0, cb_id, &s), 7);
    assert_int_equal(s.n, 1);
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_foreach_id(NULL, 0, cb_id, &s));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_foreach_id(r, 0, NULL, &s));
    ckpt_hooks_read_end(r);
    close_h(h);
}

static void test_containers_create_delete_add_remove(void **state)
{
    ckpt_hooks *h = open_h(state);
    uint64_t c1 = new_id(h), c2 = new_id(h), o[5];
    struct ckpt_cont a = {c1, "/alpha", "t=a"}, b = {c2, "/beta", ""};
    HTU_OK(ckpt_hook_cont_create(h, &a));
    HTU_OK(ckpt_hook_cont_create(h, &b));
    for (int i = 0; i < 5; i++) {
        char name[32];
        o[i] = new_id(h);
        snprintf(name, sizeof name, "/alpha/o%d", i);
        struct ckpt_obj ob = mk_obj(o[i], c1, name, 0);
        HTU_OK(ckpt_hook_obj_create(h, &ob));
    }
    HTU_OK(ckpt_hook_cont_add_objs(h, c1, o, 5));
    HTU_OK(ckpt_hook_cont_add_objs(h, c1, o, 2)); /* adding again is harmless */
    uint64_t to_b[2] = {o[1], o[3]};
    HTU_OK(ckpt_hook_cont_add_objs(h, c2, to_b, 2));
    uint64_t rm[2] = {o[1], 4242424242ull};
    HTU_OK(ckpt_hook_cont_remove_objs(h, c1, rm, 2));
    HTU_OK(ckpt_hook_cont_add_objs(h, c1, NULL, 0));
    HTU_OK(ckpt_hook_cont_remove_objs(h, c1, NULL, 0));
    struct ckpt_kvtag bt = {"btag", BULKI_T_STRING, 2, "b"};
    HTU_OK(ckpt_hook_kvtag_put(h, c2, &bt));
    HTU_OK(ckpt_hook_cont_delete(h, c2));
    HTU_OK(ckpt_hook_cont_delete(h, c2));
    /* re-creating a container under its id renames it */
    struct ckpt_cont a2 = {c1, "/alpha-2", "t=a2"};
    HTU_OK(ckpt_hook_cont_create(h, &a2));
    close_h(h);

    h = map_h(state);
    ckpt_hooks_read *r;
    struct ckpt_cont got;
    struct ckpt_obj og;
    HTU_OK(ckpt_hooks_read_begin(&r, h));
    HTU_OK(ckpt_hooks_get_cont(&got, r, c1));
    assert_int_equal(got.cont_id, c1);
    assert_string_equal(got.cont_name, "/alpha-2");
    assert_string_equal(got.tags, "t=a2");
    HTU_OK(ckpt_hooks_get_cont_by_name(&got, r, "/alpha-2"));
    assert_int_equal(got.cont_id, c1);
    HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_cont_by_name(&got, r, "/alpha"));
    uint64_t want[4] = {o[0], o[2], o[3], o[4]};
    struct ids s = members(r, c1);
    assert_ids(&s, want, 4);
    /* c2: record, name, members and tags gone; its objects stay */
    HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_cont(&got, r, c2));
    HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_cont_by_name(&got, r, "/beta"));
    assert_int_equal(members(r, c2).n, 0);
    assert_int_equal(count_tags(r, c2), 0);
    assert_int_equal(tagged(r, "btag").n, 0);
    HTU_OK(ckpt_hooks_get_obj(&og, r, o[1]));
    HTU_OK(ckpt_hooks_get_obj(&og, r, o[3]));
    /* a stop value from the member callback is returned */
    memset(&s, 0, sizeof s);
    s.stop_after = 2;
    assert_int_equal(ckpt_hooks_foreach_member(r, c1, cb_member, &s), 7);
    assert_int_equal(s.n, 2);
    ckpt_hooks_read_end(r);
    assert_indexes_match(h);
    close_h(h);
}

/* ------------------------------------------------------------------ */
/* regions                                                             */
/* ------------------------------------------------------------------ */

static void test_regions_put_replace_delete_with_histograms(void **state)
{
    ckpt_hooks *h = open_h(state);
    uint64_t id = new_id(h), other = new_id(h);
    struct ckpt_obj o = mk_obj(id, 0, "/regions", 3), o2 = mk_obj(other, 0, "/other", 3);
    HTU_OK(ckpt_hook_obj_create(h, &o));
    HTU_OK(ckpt_hook_obj_create(h, &o2));
    static const double rg4[8] = {0, 1, 1, 2, 2, 3, 3, 4}, rg2[4] = {-10, 0, 0, 10};
    static const uint64_t bn4[4] = {1, 2, 3, 4}, bn2[2] = {100, 200};
    struct ckpt_region r1 = mk_region(id, 1, 0, rg4, bn4, 4);
    struct ckpt_region r2 = mk_region(id, 2, 0, NULL, NULL, -1);
    struct ckpt_region r3 = mk_region(id, 3, 7, rg2, bn2, 2);
    struct ckpt_region r4 = mk_region(id, 4, 1, NULL, NULL, 0);   /* histogram without bins */
    struct ckpt_region ro = mk_region(other, 1, 0, NULL, NULL, -1);
    HTU_OK(ckpt_hook_region_put(h, &r1));
    HTU_OK(ckpt_hook_region_put(h, &r2));
    HTU_OK(ckpt_hook_region_put(h, &r3));
    HTU_OK(ckpt_hook_region_put(h, &r4));
    HTU_OK(ckpt_hook_region_put(h, &ro));
    /* same geometry again: replaces r1 */
    struct ckpt_region r1b = mk_region(id, 1, 0, rg2, bn2, 2);
    r1b.data_size = 999;
    r1b.storage_location = "/moved";
    HTU_OK(ckpt_hook_region_put(h, &r1b));
    HTU_OK(ckpt_hook_region_delete(h, id, r2.ndim, r2.start, r2.count));
    HTU_OK(ckpt_hook_region_delete(h, id, r2.ndim, r2.start, r2.count));
    close_h(h);

    h = map_h(state);
    ckpt_hooks_read *r;
    HTU_OK(ckpt_hooks_read_begin(&r, h));
    struct regs rs;
    memset(&rs, 0, sizeof rs);
    HTU_OK(ckpt_hooks_foreach_region(r, id, cb_region, &rs));
    assert_int_equal(rs.n, 3);
    /* key order: ndim first */
    htu_assert_region_eq(&r1b, &rs.r[0]);
    assert_int_equal(rs.r[0].hist.nbin, 2);
    assert_true(ckpt_hist_bin(&rs.r[0].hist, 1) == 200);
    assert_true(ckpt_hist_range(&rs.r[0].hist, 0) == -10.0);
    htu_assert_region_eq(&r3, &rs.r[1]);
    htu_assert_region_eq(&r4, &rs.r[2]);
    assert_int_equal(rs.r[2].has_hist, 1);
    assert_int_equal(rs.r[2].hist.nbin, 0);
    memset(&rs, 0, sizeof rs);
    HTU_OK(ckpt_hooks_foreach_region(r, other, cb_region, &rs));
    assert_int_equal(rs.n, 1);
    htu_assert_region_eq(&ro, &rs.r[0]);
    assert_int_equal(rs.r[0].has_hist, 0);
    ckpt_hooks_read_end(r);
    assert_indexes_match(h);
    close_h(h);
}

/* ------------------------------------------------------------------ */
/* rebuild                                                             */
/* ------------------------------------------------------------------ */

enum { RB_CONTS = 3, RB_OBJS = 12, RB_DELETED = 2 };

struct rb_expect {
    uint64_t cont[RB_CONTS];
    uint64_t obj[RB_OBJS];
    int deleted[RB_OBJS];
    int seen_cont[RB_CONTS], seen_obj[RB_OBJS], seen_region[RB_OBJS], seen_member[RB_OBJS];
    int seen_tag[RB_OBJS][2], seen_ctag;
    int phase;
    uint64_t n_cont, n_obj, n_tag, n_member, n_region;
    int fail_obj_at;
};

static const double rb_range[4] = {0.5, 1.5, 1.5, 2.5};
static const uint64_t rb_bins[2] = {11, 22};

static void rb_name(char *buf, size_t n, int i)
{
    snprintf(buf, n, "/rb/obj-%02d", i);
}

static int rb_obj_index(const struct rb_expect *e, uint64_t id)
{
    for (int i = 0; i < RB_OBJS; i++)
        if (e->obj[i] == id)
            return i;
    fail_msg("rebuild visited unknown object %llu", (unsigned long long)id);
    return -1;
}

static void rb_enter(struct rb_expect *e, int phase)
{
    /* containers, objects, kvtags, memberships, regions */
    if (phase < e->phase)
        fail_msg("rebuild visited phase %d after phase %d", phase, e->phase);
    e->phase = phase;
}

static int rb_cont(const struct ckpt_cont *c, void *p)
{
    struct rb_expect *e = p;
    rb_enter(e, 0);
    int k = -1;
    for (int i = 0; i < RB_CONTS; i++)
        if (e->cont[i] == c->cont_id)
            k = i;
    assert_true(k >= 0);
    char name[32];
    snprintf(name, sizeof name, "/rb/cont-%d", k);
    assert_string_equal(c->cont_name, name);
    assert_int_equal(e->seen_cont[k]++, 0);
    e->n_cont++;
    return 0;
}

static int rb_obj(const struct ckpt_obj *o, void *p)
{
    struct rb_expect *e = p;
    rb_enter(e, 1);
    int i = rb_obj_index(e, o->obj_id);
    assert_false(e->deleted[i]);
    char name[32];
    rb_name(name, sizeof name, i);
    struct ckpt_obj want = mk_obj(e->obj[i], e->cont[i % RB_CONTS], name, i);
    htu_assert_obj_eq(&want, o);
    assert_int_equal(e->seen_obj[i]++, 0);
    e->n_obj++;
    if (e->fail_obj_at && (int)e->n_obj == e->fail_obj_at)
        return CKPT_E_NOMEM;
    return 0;
}

static int rb_tag(uint64_t owner, const struct ckpt_kvtag *t, void *p)
{
    struct rb_expect *e = p;
    rb_enter(e, 2);
    e->n_tag++;
    if (owner == e->cont[0]) {
        assert_string_equal(t->name, "ctag");
        e->seen_ctag++;
        return 0;
    }
    int i = rb_obj_index(e, owner);
    assert_false(e->deleted[i]);
    if (strcmp(t->name, "idx") == 0) {
        int32_t v;
        assert_int_equal(t->type, BULKI_T_INT);
        assert_int_equal(t->size, 4);
        memcpy(&v, t->value, 4);
        assert_int_equal(v, i);
        e->seen_tag[i][0]++;
    } else {
        assert_string_equal(t->name, "kind");
        assert_int_equal(t->type, BULKI_T_STRING);
        assert_string_equal((const char *)t->value, i % 2 ? "odd" : "even");
        assert_int_equal(t->size, strlen(t->value) + 1);
        e->seen_tag[i][1]++;
    }
    return 0;
}

static int rb_member(uint64_t cont, uint64_t obj, void *p)
{
    struct rb_expect *e = p;
    rb_enter(e, 3);
    int i = rb_obj_index(e, obj);
    assert_false(e->deleted[i]);
    assert_int_equal(cont, e->cont[i % RB_CONTS]);
    e->seen_member[i]++;
    e->n_member++;
    return 0;
}

static int rb_region(const struct ckpt_region *g, void *p)
{
    struct rb_expect *e = p;
    rb_enter(e, 4);
    int i = rb_obj_index(e, g->obj_id);
    assert_false(e->deleted[i]);
    struct ckpt_region want = i % 2 ? mk_region(e->obj[i], 2, (uint64_t)i, NULL, NULL, -1)
                                    : mk_region(e->obj[i], 2, (uint64_t)i, rb_range, rb_bins, 2);
    htu_assert_region_eq(&want, g);
    e->seen_region[i]++;
    e->n_region++;
    return 0;
}

static const struct ckpt_rebuild_cbs rb_cbs = {rb_cont, rb_obj, rb_tag, rb_member, rb_region};

static void rb_populate(void **state, struct rb_expect *e)
{
    ckpt_hooks *h = open_h(state);
    memset(e, 0, sizeof *e);
    for (int k = 0; k < RB_CONTS; k++) {
        char name[32];
        snprintf(name, sizeof name, "/rb/cont-%d", k);
        e->cont[k] = new_id(h);
        struct ckpt_cont c = {e->cont[k], name, ""};
        HTU_OK(ckpt_hook_cont_create(h, &c));
    }
    struct ckpt_kvtag ct = {"ctag", BULKI_T_STRING, 3, "c0"};
    HTU_OK(ckpt_hook_kvtag_put(h, e->cont[0], &ct));
    for (int i = 0; i < RB_OBJS; i++) {
        char name[32];
        rb_name(name, sizeof name, i);
        e->obj[i] = new_id(h);
        struct ckpt_obj o = mk_obj(e->obj[i], e->cont[i % RB_CONTS], name, i);
        HTU_OK(ckpt_hook_obj_create(h, &o));
        int32_t v = i;
        const char *kind = i % 2 ? "odd" : "even";
        struct ckpt_kvtag t1 = {"idx", BULKI_T_INT, 4, &v};
        struct ckpt_kvtag t2 = {"kind", BULKI_T_STRING, (uint32_t)strlen(kind) + 1, kind};
        HTU_OK(ckpt_hook_kvtag_put(h, e->obj[i], &t1));
        HTU_OK(ckpt_hook_kvtag_put(h, e->obj[i], &t2));
        HTU_OK(ckpt_hook_cont_add_objs(h, e->cont[i % RB_CONTS], &e->obj[i], 1));
        struct ckpt_region g = i % 2 ? mk_region(e->obj[i], 2, (uint64_t)i, NULL, NULL, -1)
                                     : mk_region(e->obj[i], 2, (uint64_t)i, rb_range, rb_bins, 2);
        HTU_OK(ckpt_hook_region_put(h, &g));
    }
    e->deleted[4] = e->deleted[9] = 1;
    HTU_OK(ckpt_hook_obj_delete(h, e->obj[4]));
    HTU_OK(ckpt_hook_obj_delete(h, e->obj[9]));
    close_h(h);
}

static void test_rebuild_visits_every_record_once(void **state)
{
    struct rb_expect e;
    rb_populate(state, &e);
    struct ckpt_hooks_opts o = htu_opts(state);
    struct ckpt_rebuild_stats st;
    ckpt_hooks *h = NULL;
    memset(&st, 0xFF, sizeof st);
    HTU_OK(ckpt_hooks_restart_rebuild(&h, &o, &rb_cbs, &e, &st));
    assert_non_null(h);
    const uint64_t live = RB_OBJS - RB_DELETED;
    assert_int_equal(st.conts, RB_CONTS);
    assert_int_equal(st.objs, live);
    assert_int_equal(st.kvtags, 2 * live + 1);
    assert_int_equal(st.members, live);
    assert_int_equal(st.regions, live);
    assert_int_equal(e.n_cont, st.conts);
    assert_int_equal(e.n_obj, st.objs);
    assert_int_equal(e.n_tag, st.kvtags);
    assert_int_equal(e.n_member, st.members);
    assert_int_equal(e.n_region, st.regions);
    for (int k = 0; k < RB_CONTS; k++)
        assert_int_equal(e.seen_cont[k], 1);
    assert_int_equal(e.seen_ctag, 1);
    for (int i = 0; i < RB_OBJS; i++) {
        int want = e.deleted[i] ? 0 : 1;
        assert_int_equal(e.seen_obj[i], want);
        assert_int_equal(e.seen_tag[i][0], want);
        assert_int_equal(e.seen_tag[i][1], want);
        assert_int_equal(e.seen_member[i], want);
        assert_int_equal(e.seen_region[i], want);
    }
    /* the rebuilt handle logs further mutations */
    uint64_t nid = new_id(h);
    for (int i = 0; i < RB_OBJS; i++)
        assert_true(nid > e.obj[i]);
    struct ckpt_obj extra = mk_obj(nid, 0, "/rb/after", 0);
    HTU_OK(ckpt_hook_obj_create(h, &extra));
    close_h(h);

    /* no callbacks at all: the same counts */
    memset(&st, 0, sizeof st);
    HTU_OK(ckpt_hooks_restart_rebuild(&h, &o, NULL, NULL, &st));
    assert_int_equal(st.conts, RB_CONTS);
    assert_int_equal(st.objs, live + 1);
    assert_int_equal(st.kvtags, 2 * live + 1);
    assert_int_equal(st.members, live);
    assert_int_equal(st.regions, live);
    close_h(h);
}

static void test_rebuild_stops_on_a_callback_error(void **state)
{
    struct rb_expect e;
    rb_populate(state, &e);
    struct ckpt_hooks_opts o = htu_opts(state);
    struct ckpt_rebuild_stats st;
    ckpt_hooks *h = NULL;
    struct rb_expect e2 = e;
    memset(e2.seen_cont, 0, sizeof e2.seen_cont);
    e2.fail_obj_at = 3;
    HTU_RC(CKPT_E_NOMEM, ckpt_hooks_restart_rebuild(&h, &o, &rb_cbs, &e2, &st));
    assert_null(h);
    assert_int_equal(st.conts, RB_CONTS);
    assert_int_equal(e2.n_tag, 0);
    /* the store was released: it opens again and is whole */
    memset(&st, 0, sizeof st);
    HTU_OK(ckpt_hooks_restart_rebuild(&h, &o, NULL, NULL, &st));
    assert_int_equal(st.objs, RB_OBJS - RB_DELETED);
    close_h(h);
}

static void test_undecodable_records_are_reported_with_db_and_key(void **state)
{
    ckpt_hooks *h = open_h(state);
    uint64_t id = new_id(h), good = new_id(h);
    struct ckpt_obj g = mk_obj(good, 0, "/good", 0);
    HTU_OK(ckpt_hook_obj_create(h, &g));
    uint8_t key[8];
    ckpt_key_u64(key, id);
    static const uint8_t junk[5] = {0xde, 0xad, 0xbe, 0xef, 0x00};
    HTU_OK(ckpt_store_put_raw(ckpt_hooks_store(h), CKPT_DB_OBJ, key, 8, junk, sizeof junk));
    uint8_t tkey[8 + CKPT_NAMEKEY_MAX];
    ckpt_key_u64(tkey, good);
    size_t tn = ckpt_key_name(tkey + 8, "bad", 3);
    assert_true(tn > 0);
    HTU_OK(ckpt_store_put_raw(ckpt_hooks_store(h), CKPT_DB_KVTAG, tkey, 8 + tn, junk, sizeof junk));
    close_h(h);

    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)id);
    struct ckpt_hooks_opts o = htu_opts(state);
    struct ckpt_rebuild_stats st;
    h = NULL;
    clear_msg();
    HTU_RC(CKPT_E_RECORD, ckpt_hooks_restart_rebuild(&h, &o, NULL, NULL, &st));
    assert_null(h);
    assert_msg_has(" obj ");
    assert_msg_has(hex);
    assert_msg_has("does not decode");

    h = map_h(state);
    ckpt_hooks_read *r;
    struct ckpt_obj ob;
    struct ckpt_kvtag t;
    HTU_OK(ckpt_hooks_read_begin(&r, h));
    clear_msg();
    HTU_RC(CKPT_E_RECORD, ckpt_hooks_get_obj(&ob, r, id));
    assert_msg_has(hex);
    HTU_OK(ckpt_hooks_get_obj(&ob, r, good));
    clear_msg();
    HTU_RC(CKPT_E_RECORD, ckpt_hooks_get_kvtag(&t, r, good, "bad"));
    assert_msg_has("kvtag");
    struct tags ts;
    memset(&ts, 0, sizeof ts);
    HTU_RC(CKPT_E_RECORD, ckpt_hooks_foreach_kvtag(r, good, cb_tag, &ts));
    ckpt_hooks_read_end(r);
    close_h(h);
}

/* ------------------------------------------------------------------ */
/* ids                                                                 */
/* ------------------------------------------------------------------ */

static void test_new_ids_continue_after_close_and_reopen(void **state)
{
    struct ckpt_hooks_opts o = htu_opts(state);
    o.rank = 2;
    o.nranks = 4;
    uint64_t maxid = 0;
    for (int round = 0; round < 3; round++) {
        ckpt_hooks *h;
        HTU_OK(ckpt_hooks_open(&h, &o));
        uint64_t prev = 0;
        for (int i = 0; i < 100; i++) {
            uint64_t id = new_id(h);
            /* ids are (rank+1)*1e9 + seq */
            assert_true(id >= 3000000000ull && id < 4000000000ull);
            assert_true(id > maxid);
            assert_true(id > prev);
            prev = id;
        }
        maxid = prev;
        close_h(h);
    }
}

static void test_new_ids_never_repeat_after_discard(void **state)
{
    struct ckpt_hooks_opts o = htu_opts(state);
    uint64_t maxid = 0;
    for (int round = 0; round < 4; round++) {
        ckpt_hooks *h;
        HTU_OK(ckpt_hooks_open(&h, &o));
        for (int i = 0; i < 50; i++) {
            uint64_t id = new_id(h);
            assert_true(id > maxid);
            maxid = id;
            if (round % 2 == 0 && i == 20) {
                /* some ids committed with a mutation, the rest not */
                struct ckpt_obj ob = mk_obj(id, 0, "x", round);
                HTU_OK(ckpt_hook_obj_create(h, &ob));
                HTU_OK(ckpt_hooks_checkpoint(h));
            }
        }
        ckpt_hooks_discard(h); /* a crash: nothing after the last commit */
    }
    ckpt_hooks *h;
    HTU_OK(ckpt_hooks_open(&h, &o));
    assert_true(new_id(h) > maxid);
    close_h(h);
}

static void test_new_ids_never_repeat_after_discard_with_commits_off(void **state)
{
    /* With no commit policy, a server can hand out many ids between two
     * commits; a crash must still not make any of them come back. */
    struct ckpt_hooks_opts o = htu_opts(state);
    o.commit_every = 0;
    o.commit_ms = 0;
    ckpt_hooks *h;
    HTU_OK(ckpt_hooks_open(&h, &o));
    uint64_t id = 0, first = new_id(h);
    const uint64_t n = (1ull << 24) + 1000;
    for (uint64_t i = 0; i < n; i++)
        HTU_OK(ckpt_hook_new_id(&id, h));
    assert_true(id > first);
    ckpt_hooks_discard(h);
    HTU_OK(ckpt_hooks_open(&h, &o));
    uint64_t next = new_id(h);
    if (next <= id)
        fail_msg("after a crash, id %llu was handed out again (last before: %llu)",
                 (unsigned long long)next, (unsigned long long)id);
    close_h(h);
}

/* ------------------------------------------------------------------ */
/* names                                                               */
/* ------------------------------------------------------------------ */

static void test_names_longer_than_the_limit_are_refused(void **state)
{
    struct ckpt_hooks_opts o = htu_opts(state);
    o.commit_every = 0;
    o.commit_ms = 0;
    ckpt_hooks *h;
    HTU_OK(ckpt_hooks_open(&h, &o));
    char *toolong = htu_long_name('n', CKPT_NAME_MAX + 1);
    char limit[16];
    snprintf(limit, sizeof limit, "%u", CKPT_NAME_MAX);
    uint64_t id = new_id(h);
    struct ckpt_obj ob = mk_obj(id, 0, toolong, 0);
    clear_msg();
    HTU_RC(CKPT_E_NAMETOOLONG, ckpt_hook_obj_create(h, &ob));
    assert_msg_has(limit);
    clear_msg();
    HTU_RC(CKPT_E_NAMETOOLONG, ckpt_hook_obj_update(h, &ob));
    assert_msg_has(limit);
    struct ckpt_kvtag t = {toolong, BULKI_T_STRING, 2, "v"};
    clear_msg();
    HTU_RC(CKPT_E_NAMETOOLONG, ckpt_hook_kvtag_put(h, id, &t));
    assert_msg_has(limit);
    clear_msg();
    HTU_RC(CKPT_E_NAMETOOLONG, ckpt_hook_kvtag_delete(h, id, toolong));
    assert_msg_has(limit);
    struct ckpt_cont c = {id, toolong, ""};
    clear_msg();
    HTU_RC(CKPT_E_NAMETOOLONG, ckpt_hook_cont_create(h, &c));
    assert_msg_has(limit);
    /* nothing was staged */
    assert_int_equal(ckpt_store_pending(ckpt_hooks_store(h)), 0);
    HTU_OK(ckpt_hooks_checkpoint(h));

    ckpt_hooks_read *r;
    struct ckpt_obj og;
    struct ckpt_cont cg;
    struct ckpt_kvtag tg;
    struct ids s;
    memset(&s, 0, sizeof s);
    HTU_OK(ckpt_hooks_read_begin(&r, h));
    clear_msg();
    HTU_RC(CKPT_E_NAMETOOLONG, ckpt_hooks_get_obj_by_name(&og, r, toolong, 0));
    assert_msg_has(limit);
    clear_msg();
    HTU_RC(CKPT_E_NAMETOOLONG, ckpt_hooks_get_cont_by_name(&cg, r, toolong));
    assert_msg_has(limit);
    clear_msg();
    HTU_RC(CKPT_E_NAMETOOLONG, ckpt_hooks_get_kvtag(&tg, r, id, toolong));
    assert_msg_has(limit);
    clear_msg();
    HTU_RC(CKPT_E_NAMETOOLONG, ckpt_hooks_foreach_tagged(r, toolong, cb_id, &s));
    assert_msg_has(limit);
    ckpt_hooks_read_end(r);
    close_h(h);
    free(toolong);
}

static void test_names_up_to_the_limit_round_trip(void **state)
{
    ckpt_hooks *h = open_h(state);
    /* inline (<= 448), hashed (> 448) and maximal names; two long names
     * that share their first 4000 bytes stay distinct */
    const size_t lens[] = {1, CKPT_NAME_INLINE_MAX, CKPT_NAME_INLINE_MAX + 1, CKPT_NAME_MAX};
    char *names[6];
    uint64_t ids[6], conts[6];
    for (size_t i = 0; i < 4; i++)
        names[i] = htu_long_name((char)('a' + i), lens[i]);
    names[4] = htu_long_name('z', CKPT_NAME_MAX);
    names[5] = htu_long_name('z', CKPT_NAME_MAX);
    names[5][CKPT_NAME_MAX - 1] = 'y';
    for (size_t i = 0; i < 6; i++) {
        ids[i] = new_id(h);
        conts[i] = new_id(h);
        struct ckpt_obj ob = mk_obj(ids[i], conts[i], names[i], 1);
        struct ckpt_cont c = {conts[i], names[i], ""};
        struct ckpt_kvtag t = {names[i], BULKI_T_INT, 4, &ids[i]};
        HTU_OK(ckpt_hook_cont_create(h, &c));
        HTU_OK(ckpt_hook_obj_create(h, &ob));
        HTU_OK(ckpt_hook_kvtag_put(h, ids[i], &t));
    }
    /* rename a long-named object and container to another long name with
     * the same first 4000 bytes: the old hashed index entries go */
    char *renamed = htu_long_name('z', CKPT_NAME_MAX);
    renamed[CKPT_NAME_MAX - 1] = 'x';
    struct ckpt_obj ob4 = mk_obj(ids[4], conts[4], renamed, 1);
    struct ckpt_cont c4 = {conts[4], renamed, ""};
    HTU_OK(ckpt_hook_obj_update(h, &ob4));
    HTU_OK(ckpt_hook_cont_create(h, &c4));
    close_h(h);

    h = map_h(state);
    ckpt_hooks_read *r;
    HTU_OK(ckpt_hooks_read_begin(&r, h));
    {
        struct ckpt_obj og;
        struct ckpt_cont cg;
        HTU_OK(ckpt_hooks_get_obj_by_name(&og, r, renamed, 1));
        assert_int_equal(og.obj_id, ids[4]);
        HTU_OK(ckpt_hooks_get_cont_by_name(&cg, r, renamed));
        assert_int_equal(cg.cont_id, conts[4]);
        HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_obj_by_name(&og, r, names[4], 1));
        HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_cont_by_name(&cg, r, names[4]));
    }
    for (size_t i = 0; i < 6; i++) {
        struct ckpt_obj og;
        struct ckpt_cont cg;
        struct ckpt_kvtag tg;
        if (i == 4) {
            /* renamed; its kvtag keeps its own name */
            HTU_OK(ckpt_hooks_get_kvtag(&tg, r, ids[i], names[i]));
            continue;
        }
        HTU_OK(ckpt_hooks_get_obj_by_name(&og, r, names[i], 1));
        assert_int_equal(og.obj_id, ids[i]);
        assert_string_equal(og.obj_name, names[i]);
        HTU_OK(ckpt_hooks_get_cont_by_name(&cg, r, names[i]));
        assert_int_equal(cg.cont_id, conts[i]);
        HTU_OK(ckpt_hooks_get_kvtag(&tg, r, ids[i], names[i]));
        assert_string_equal(tg.name, names[i]);
        struct ids s = tagged(r, names[i]);
        assert_ids(&s, &ids[i], 1);
    }
    ckpt_hooks_read_end(r);
    assert_indexes_match(h);
    close_h(h);
    for (size_t i = 0; i < 6; i++)
        free(names[i]);
    free(renamed);
}

static void test_restart_with_another_rank_layout_is_refused(void **state)
{
    struct ckpt_hooks_opts o = htu_opts(state);
    o.rank = 1;
    o.nranks = 3;
    ckpt_hooks *h;
    HTU_OK(ckpt_hooks_open(&h, &o));
    close_h(h);
    o.nranks = 4;
    h = NULL;
    clear_msg();
    HTU_RC(CKPT_E_MISMATCH, ckpt_hooks_restart_map(&h, &o));
    assert_null(h);
    assert_msg_has("rank 1 of 3");
    struct ckpt_rebuild_stats st;
    HTU_RC(CKPT_E_MISMATCH, ckpt_hooks_restart_rebuild(&h, &o, NULL, NULL, &st));
    assert_null(h);
    o.nranks = 3;
    HTU_OK(ckpt_hooks_restart_rebuild(&h, &o, NULL, NULL, &st));
    assert_int_equal(st.objs, 0);
    close_h(h);
}

/* ------------------------------------------------------------------ */
/* bad arguments                                                       */
/* ------------------------------------------------------------------ */

static void test_null_arguments_are_rejected(void **state)
{
    struct ckpt_hooks_opts o = htu_opts(state);
    ckpt_hooks *h = NULL;
    uint64_t id = 0, ids[2] = {1, 2}, start[1] = {0}, count[1] = {1};
    struct ckpt_obj ob = mk_obj(1, 0, "n", 0);
    struct ckpt_kvtag t = {"t", BULKI_T_INT, 4, &id};
    struct ckpt_cont c = {2, "c", ""};
    struct ckpt_region g = mk_region(1, 1, 0, NULL, NULL, -1);
    struct ckpt_rebuild_stats st;

    /* open and restart */
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_open(NULL, &o));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_open(&h, NULL));
    assert_null(h);
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_open_readonly(NULL, &o));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_restart_map(NULL, &o));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_restart_map(&h, NULL));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_restart_rebuild(NULL, &o, NULL, NULL, &st));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_restart_rebuild(&h, NULL, NULL, NULL, &st));
    struct ckpt_hooks_opts noroot = o;
    noroot.store_root = NULL;
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_open(&h, &noroot));
    assert_null(h);

    /* handle-level calls on NULL */
    assert_int_equal(ckpt_hooks_close(NULL), 0);
    ckpt_hooks_discard(NULL);
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_checkpoint(NULL));
    assert_null(ckpt_hooks_store(NULL));
    assert_non_null(ckpt_errmsg());
    HTU_RC(CKPT_E_INVAL, ckpt_hook_new_id(&id, NULL));

    /* hooks with a NULL handle */
    HTU_RC(CKPT_E_INVAL, ckpt_hook_obj_create(NULL, &ob));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_obj_update(NULL, &ob));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_obj_delete(NULL, 1));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_kvtag_put(NULL, 1, &t));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_kvtag_delete(NULL, 1, "t"));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_cont_create(NULL, &c));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_cont_delete(NULL, 2));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_cont_add_objs(NULL, 2, ids, 2));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_cont_remove_objs(NULL, 2, ids, 2));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_region_put(NULL, &g));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_region_delete(NULL, 1, 1, start, count));

    /* hooks with NULL arguments on a real handle */
    HTU_OK(ckpt_hooks_open(&h, &o));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_new_id(NULL, h));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_obj_create(h, NULL));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_obj_update(h, NULL));
    ob.obj_name = NULL;
    HTU_RC(CKPT_E_INVAL, ckpt_hook_obj_create(h, &ob));
    ob.obj_name = "n";
    ob.ndim = CKPT_MAX_DIM + 1;
    clear_msg();
    HTU_RC(CKPT_E_INVAL, ckpt_hook_obj_create(h, &ob));
    assert_msg_has("dims");
    HTU_RC(CKPT_E_INVAL, ckpt_hook_kvtag_put(h, 1, NULL));
    t.name = NULL;
    HTU_RC(CKPT_E_INVAL, ckpt_hook_kvtag_put(h, 1, &t));
    t.name = "t";
    t.value = NULL;
    HTU_RC(CKPT_E_INVAL, ckpt_hook_kvtag_put(h, 1, &t));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_kvtag_delete(h, 1, NULL));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_cont_create(h, NULL));
    c.cont_name = NULL;
    HTU_RC(CKPT_E_INVAL, ckpt_hook_cont_create(h, &c));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_cont_add_objs(h, 2, NULL, 2));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_cont_remove_objs(h, 2, NULL, 2));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_region_put(h, NULL));
    g.ndim = 0;
    HTU_RC(CKPT_E_INVAL, ckpt_hook_region_put(h, &g));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_region_delete(h, 1, 1, NULL, count));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_region_delete(h, 1, 1, start, NULL));
    HTU_RC(CKPT_E_INVAL, ckpt_hook_region_delete(h, 1, 0, start, count));
    assert_int_equal(ckpt_store_pending(ckpt_hooks_store(h)), 0);

    /* reads */
    ckpt_hooks_read *r = NULL;
    struct ckpt_obj og;
    struct ckpt_cont cg;
    struct ckpt_kvtag tg;
    struct ids s;
    memset(&s, 0, sizeof s);
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_read_begin(NULL, h));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_read_begin(&r, NULL));
    assert_null(r);
    ckpt_hooks_read_end(NULL);
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_get_obj(&og, NULL, 1));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_get_obj_by_name(&og, NULL, "n", 0));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_get_kvtag(&tg, NULL, 1, "t"));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_get_cont(&cg, NULL, 1));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_get_cont_by_name(&cg, NULL, "c"));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_foreach_kvtag(NULL, 1, cb_tag, &s));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_foreach_member(NULL, 1, cb_member, &s));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_foreach_region(NULL, 1, cb_region, &s));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_foreach_tagged(NULL, "t", cb_id, &s));
    HTU_OK(ckpt_hooks_read_begin(&r, h));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_get_obj(NULL, r, 1));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_get_obj_by_name(NULL, r, "n", 0));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_get_obj_by_name(&og, r, NULL, 0));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_get_kvtag(NULL, r, 1, "t"));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_get_kvtag(&tg, r, 1, NULL));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_get_cont(NULL, r, 1));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_get_cont_by_name(NULL, r, "c"));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_get_cont_by_name(&cg, r, NULL));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_foreach_tagged(r, NULL, cb_id, &s));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_foreach_tagged(r, "t", NULL, &s));
    /* a NULL callback on an empty walk is harmless */
    assert_true(ckpt_hooks_foreach_kvtag(r, 1, NULL, NULL) == 0 ||
                ckpt_hooks_foreach_kvtag(r, 1, NULL, NULL) == CKPT_E_INVAL);
    ckpt_hooks_read_end(r);

    /* codecs */
    uint8_t buf[256];
    size_t len;
    HTU_RC(CKPT_E_INVAL, ckpt_rec_obj_decode(NULL, buf, sizeof buf, NULL));
    HTU_RC(CKPT_E_INVAL, ckpt_rec_kvtag_decode(NULL, buf, sizeof buf, NULL));
    HTU_RC(CKPT_E_INVAL, ckpt_rec_cont_decode(NULL, buf, sizeof buf, NULL));
    HTU_RC(CKPT_E_INVAL, ckpt_rec_region_decode(NULL, buf, sizeof buf, NULL));
    HTU_RC(CKPT_E_INVAL, ckpt_rec_obj_decode(&og, NULL, 10, NULL));
    struct ckpt_cont good = {2, "c", ""};
    HTU_RC(CKPT_E_INVAL, ckpt_rec_cont_encode(NULL, buf, sizeof buf, &good));
    HTU_RC(CKPT_E_INVAL, ckpt_rec_cont_encode(NULL, NULL, 0, &good));
    HTU_OK(ckpt_rec_cont_encode(&len, buf, sizeof buf, &good));
    /* routing with no name or no ranks */
    HTU_RC(CKPT_E_INVAL, ckpt_home_obj(NULL, 0, 4));
    HTU_RC(CKPT_E_INVAL, ckpt_home_obj("x", 0, 0));
    HTU_RC(CKPT_E_INVAL, ckpt_home_cont(NULL, 4));
    HTU_RC(CKPT_E_INVAL, ckpt_home_cont("x", -1));
    close_h(h);
}

static void test_readonly_handle_serves_lookups_and_refuses_mutations(void **state)
{
    ckpt_hooks *w = open_h(state);
    uint64_t id = new_id(w);
    struct ckpt_obj ob = mk_obj(id, 0, "/ro", 0), og;
    HTU_OK(ckpt_hook_obj_create(w, &ob));
    HTU_OK(ckpt_hooks_checkpoint(w));
    struct ckpt_hooks_opts o = htu_opts(state);
    ckpt_hooks *ro;
    HTU_OK(ckpt_hooks_open_readonly(&ro, &o));
    ckpt_hooks_read *r;
    HTU_OK(ckpt_hooks_read_begin(&r, ro));
    HTU_OK(ckpt_hooks_get_obj_by_name(&og, r, "/ro", 0));
    htu_assert_obj_eq(&ob, &og);
    ckpt_hooks_read_end(r);
    uint64_t x;
    HTU_RC(CKPT_E_READONLY, ckpt_hook_new_id(&x, ro));
    HTU_RC(CKPT_E_READONLY, ckpt_hook_obj_create(ro, &ob));
    HTU_RC(CKPT_E_READONLY, ckpt_hook_obj_delete(ro, id));
    HTU_RC(CKPT_E_READONLY, ckpt_hooks_checkpoint(ro));
    HTU_OK(ckpt_hooks_close(ro));
    close_h(w);
    /* a read-only open of a missing store fails cleanly */
    char other[700];
    snprintf(other, sizeof other, "%s/none", htu_fix(state)->dir);
    o.store_root = other;
    ro = NULL;
    HTU_RC(CKPT_E_NOSTORE, ckpt_hooks_open_readonly(&ro, &o));
    assert_null(ro);
}

/* ------------------------------------------------------------------ */
/* options from the environment                                        */
/* ------------------------------------------------------------------ */

static const char *const env_vars[] = {"PDC_TMPDIR", "PDC_CKPT_DIR", "PDC_CKPT_COMMIT_EVERY",
                                       "PDC_CKPT_COMMIT_MS", "PDC_CKPT_SYNC", "PDC_CKPT_SYNC_MS",
                                       "PDC_CKPT_SYNC_KB", "PDC_CKPT_TAGIDX_MERGE",
                                       "PDC_CKPT_POWERLOSS_GUARD"};

static void clear_env(void)
{
    for (size_t i = 0; i < NELEM(env_vars); i++)
        unsetenv(env_vars[i]);
}

static int env_setup(void **state)
{
    clear_env();
    return htu_setup(state);
}

static int env_teardown(void **state)
{
    clear_env();
    return htu_teardown(state);
}

static void test_opts_from_env_parses_pdc_variables(void **state)
{
    char root[4096];
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    /* nothing set: PDC's default tmp dir, everything else kept */
    HTU_OK(ckpt_hooks_opts_from_env(&o, root, sizeof root));
    assert_string_equal(o.store_root, "./pdc_tmp/pdc-ckpt");
    assert_ptr_equal(o.store_root, root);
    assert_int_equal(o.commit_every, 1000);
    assert_int_equal(o.commit_ms, 100);
    assert_int_equal(o.sync_mode, CKPT_SYNC_CLOSE);
    assert_int_equal(o.sync_ms, 1000);
    assert_int_equal(o.sync_kb, CKPT_SYNC_KB_DEFAULT);
    assert_int_equal(o.tagidx_merge, 0);
    assert_int_equal(o.no_powerloss_guard, 0);

    setenv("PDC_TMPDIR", "/scratch/pdc", 1);
    HTU_OK(ckpt_hooks_opts_from_env(&o, root, sizeof root));
    assert_string_equal(o.store_root, "/scratch/pdc/pdc-ckpt");

    setenv("PDC_CKPT_DIR", htu_fix(state)->root, 1); /* wins over PDC_TMPDIR */
    setenv("PDC_CKPT_SYNC", "interval", 1);
    setenv("PDC_CKPT_COMMIT_EVERY", "7", 1);
    setenv("PDC_CKPT_COMMIT_MS", "0", 1);
    setenv("PDC_CKPT_SYNC_MS", "250", 1);
    setenv("PDC_CKPT_SYNC_KB", "0", 1);
    setenv("PDC_CKPT_TAGIDX_MERGE", "500", 1);
    setenv("PDC_CKPT_POWERLOSS_GUARD", "off", 1);
    HTU_OK(ckpt_hooks_opts_from_env(&o, root, sizeof root));
    assert_int_equal(o.no_powerloss_guard, 1);
    setenv("PDC_CKPT_POWERLOSS_GUARD", "on", 1);
    HTU_OK(ckpt_hooks_opts_from_env(&o, root, sizeof root));
    assert_int_equal(o.no_powerloss_guard, 0);
    assert_int_equal(o.sync_kb, 0);
    assert_int_equal(o.tagidx_merge, 500);
    assert_string_equal(o.store_root, htu_fix(state)->root);
    assert_int_equal(o.sync_mode, CKPT_SYNC_INTERVAL);
    assert_int_equal(o.commit_every, 7);
    assert_int_equal(o.commit_ms, 0);
    assert_int_equal(o.sync_ms, 250);

    setenv("PDC_CKPT_SYNC", "sync", 1);
    HTU_OK(ckpt_hooks_opts_from_env(&o, root, sizeof root));
    assert_int_equal(o.sync_mode, CKPT_SYNC_EVERY);
    setenv("PDC_CKPT_SYNC", "close", 1);
    HTU_OK(ckpt_hooks_opts_from_env(&o, root, sizeof root));
    assert_int_equal(o.sync_mode, CKPT_SYNC_CLOSE);

    /* empty values count as unset */
    setenv("PDC_CKPT_DIR", "", 1);
    setenv("PDC_CKPT_COMMIT_EVERY", "", 1);
    HTU_OK(ckpt_hooks_opts_from_env(&o, root, sizeof root));
    assert_string_equal(o.store_root, "/scratch/pdc/pdc-ckpt");
    assert_int_equal(o.commit_every, 7);

    /* the parsed options open a working store */
    setenv("PDC_CKPT_DIR", htu_fix(state)->root, 1);
    HTU_OK(ckpt_hooks_opts_from_env(&o, root, sizeof root));
    o.map_size = (size_t)8 << 20;
    ckpt_hooks *h;
    HTU_OK(ckpt_hooks_open(&h, &o));
    uint64_t id;
    HTU_OK(ckpt_hook_new_id(&id, h));
    close_h(h);
}

static void check_bad_env(const char *var, const char *value)
{
    char root[4096];
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    clear_env();
    setenv(var, value, 1);
    clear_msg();
    int rc = ckpt_hooks_opts_from_env(&o, root, sizeof root);
    if (rc != CKPT_E_INVAL)
        fail_msg("%s=\"%s\": returned %d, expected CKPT_E_INVAL", var, value, rc);
    assert_msg_has(var);
    unsetenv(var);
}

static void test_opts_from_env_rejects_bad_values(void **state)
{
    (void)state;
    check_bad_env("PDC_CKPT_SYNC", "fast");
    check_bad_env("PDC_CKPT_SYNC", "SYNC");
    check_bad_env("PDC_CKPT_COMMIT_EVERY", "abc");
    check_bad_env("PDC_CKPT_COMMIT_EVERY", "12abc");
    check_bad_env("PDC_CKPT_COMMIT_EVERY", "-1");
    check_bad_env("PDC_CKPT_COMMIT_EVERY", "99999999999999999999");
    check_bad_env("PDC_CKPT_COMMIT_MS", "1.5");
    check_bad_env("PDC_CKPT_COMMIT_MS", "4294967296");
    check_bad_env("PDC_CKPT_SYNC_MS", "ten");
    check_bad_env("PDC_CKPT_SYNC_KB", "1k");
    check_bad_env("PDC_CKPT_TAGIDX_MERGE", "-1");
    check_bad_env("PDC_CKPT_POWERLOSS_GUARD", "no");

    /* NULL arguments and a root that does not fit */
    char root[64];
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_opts_from_env(NULL, root, sizeof root));
    HTU_RC(CKPT_E_INVAL, ckpt_hooks_opts_from_env(&o, NULL, 4096));
    char *longdir = htu_long_name('d', 200);
    setenv("PDC_CKPT_DIR", longdir, 1);
    clear_msg();
    HTU_RC(CKPT_E_NAMETOOLONG, ckpt_hooks_opts_from_env(&o, root, sizeof root));
    assert_msg_has("PDC_CKPT_DIR");
    free(longdir);
}

#define T(f) cmocka_unit_test_setup_teardown(f, htu_setup, htu_teardown)
#define TE(f) cmocka_unit_test_setup_teardown(f, env_setup, env_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_opts_size_is_checked),
        T(test_obj_create_update_rename_delete_then_map_restart),
        T(test_lookups_see_committed_data_only),
        T(test_large_records_take_the_heap_path),
        T(test_kvtags_on_objects_and_containers),
        T(test_containers_create_delete_add_remove),
        T(test_foreach_id_lists_every_object_and_container),
        T(test_regions_put_replace_delete_with_histograms),
        T(test_rebuild_visits_every_record_once),
        T(test_rebuild_stops_on_a_callback_error),
        T(test_undecodable_records_are_reported_with_db_and_key),
        T(test_new_ids_continue_after_close_and_reopen),
        T(test_new_ids_never_repeat_after_discard),
        T(test_new_ids_never_repeat_after_discard_with_commits_off),
        T(test_names_longer_than_the_limit_are_refused),
        T(test_names_up_to_the_limit_round_trip),
        T(test_restart_with_another_rank_layout_is_refused),
        T(test_null_arguments_are_rejected),
        T(test_readonly_handle_serves_lookups_and_refuses_mutations),
        TE(test_opts_from_env_parses_pdc_variables),
        TE(test_opts_from_env_rejects_bad_values),
    };
    return cmocka_run_group_tests_name("hooks", tests, NULL, NULL);
}
