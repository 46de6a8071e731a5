/*
 * test_pdc_tables.c - a PDC server's own region tables and same-name
 * entries (database pdc_server): data regions and transfer regions round
 * trip through the store and both restart forms, replace by geometry, are
 * kept apart from the metadata-side regions and from each other, survive
 * the deletion of the object; transfer records decode exactly and refuse
 * damage; same-name entries list every id of one name and time step and no
 * other; a reader of a store written before pdc_server existed sees it
 * empty (tests/data/store_v2, argv[1]).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt_fs.h"

#include "hooks_test_util.h"

static const char *v2_root;

struct regs {
    struct ckpt_region r[16];
    char loc[16][64];
    int n;
};

static int collect_region(const struct ckpt_region *g, void *p)
{
    struct regs *v = p;
    assert_true(v->n < 16);
    v->r[v->n] = *g;
    snprintf(v->loc[v->n], sizeof v->loc[0], "%s", g->storage_location);
    v->r[v->n].storage_location = v->loc[v->n];
    v->r[v->n].cache_location = "";
    v->n++;
    return 0;
}

struct xfers {
    struct ckpt_xfer_region x[16];
    int n;
};

static int collect_xfer(const struct ckpt_xfer_region *x, void *p)
{
    struct xfers *v = p;
    assert_true(v->n < 16);
    v->x[v->n++] = *x;
    return 0;
}

struct ids {
    uint64_t id[16];
    int n;
};

static int collect_id(uint64_t id, void *p)
{
    struct ids *v = p;
    assert_true(v->n < 16);
    v->id[v->n++] = id;
    return 0;
}

static struct ckpt_region data_region(uint64_t obj, uint64_t start, uint64_t count, uint64_t off)
{
    struct ckpt_region g;
    memset(&g, 0, sizeof g);
    g.obj_id = obj;
    g.ndim = 1;
    g.start[0] = start;
    g.count[0] = count;
    g.unit_size = 4;
    g.data_size = 4 * count;
    g.storage_location = "/data/pdc_data/obj/server0/s0000.bin";
    g.cache_location = "";
    g.offset = off;
    return g;
}

static struct ckpt_xfer_region xfer_region(uint64_t obj, uint32_t server)
{
    struct ckpt_xfer_region x;
    memset(&x, 0, sizeof x);
    x.obj_id = obj;
    x.ndim = 2;
    x.start[0] = 10;
    x.start[1] = 20;
    x.count[0] = 30;
    x.count[1] = 40;
    x.data_server_id = server;
    x.unit_size = 8;
    return x;
}

static void read_tables(ckpt_hooks *h, struct regs *d, struct xfers *x, struct regs *meta,
                        uint64_t obj)
{
    ckpt_hooks_read *r;
    memset(d, 0, sizeof *d);
    memset(x, 0, sizeof *x);
    memset(meta, 0, sizeof *meta);
    HTU_OK(ckpt_hooks_read_begin(&r, h));
    HTU_OK(ckpt_hooks_foreach_data_region(r, collect_region, d));
    HTU_OK(ckpt_hooks_foreach_xfer_region(r, collect_xfer, x));
    HTU_OK(ckpt_hooks_foreach_region(r, obj, collect_region, meta));
    ckpt_hooks_read_end(r);
}

static void assert_xfer_eq(const struct ckpt_xfer_region *a, const struct ckpt_xfer_region *b)
{
    assert_int_equal(a->obj_id, b->obj_id);
    assert_int_equal(a->ndim, b->ndim);
    for (uint32_t i = 0; i < a->ndim; i++) {
        assert_int_equal(a->start[i], b->start[i]);
        assert_int_equal(a->count[i], b->count[i]);
    }
    assert_int_equal(a->data_server_id, b->data_server_id);
    assert_int_equal(a->unit_size, b->unit_size);
}

static void check_tables(ckpt_hooks *h, uint64_t obj)
{
    struct regs d, meta;
    struct xfers x;
    read_tables(h, &d, &x, &meta, obj);
    /* two data regions of obj (the second replaced once), one of another
     * rank's object 7e9; none of them is a metadata-side region */
    assert_int_equal(d.n, 3);
    assert_int_equal(d.r[0].obj_id, obj);
    assert_int_equal(d.r[0].start[0], 0);
    assert_int_equal(d.r[0].offset, 0);
    assert_int_equal(d.r[1].obj_id, obj);
    assert_int_equal(d.r[1].start[0], 100);
    assert_int_equal(d.r[1].offset, 999); /* the replacement */
    assert_string_equal(d.r[1].storage_location, "/data/pdc_data/obj/server0/s0000.bin");
    assert_int_equal(d.r[2].obj_id, UINT64_C(7000000001));
    assert_int_equal(meta.n, 1); /* the metadata-side region is its own */
    assert_int_equal(meta.r[0].count[0], 5);
    assert_int_equal(x.n, 2);
    struct ckpt_xfer_region w = xfer_region(obj, 1);
    assert_xfer_eq(&x.x[0], &w);
    assert_int_equal(x.x[1].data_server_id, 3);
}

static void test_region_tables_round_trip_through_both_restarts(void **state)
{
    struct ckpt_hooks_opts o = htu_opts(state);
    struct ckpt_obj ob = htu_full_obj(1);
    ckpt_hooks *h;
    uint64_t obj;
    HTU_OK(ckpt_hooks_open(&h, &o));
    HTU_OK(ckpt_hook_new_id(&obj, h));
    ob.obj_id = obj;
    HTU_OK(ckpt_hook_obj_create(h, &ob));
    struct ckpt_region g = data_region(obj, 0, 100, 0), meta = data_region(obj, 0, 5, 0);
    HTU_OK(ckpt_hook_region_put(h, &meta));
    HTU_OK(ckpt_hook_data_region_put(h, &g));
    g = data_region(obj, 100, 100, 400);
    HTU_OK(ckpt_hook_data_region_put(h, &g));
    g.offset = 999; /* the same geometry replaces */
    HTU_OK(ckpt_hook_data_region_put(h, &g));
    g = data_region(UINT64_C(7000000001), 0, 10, 0);
    HTU_OK(ckpt_hook_data_region_put(h, &g));
    g = data_region(obj, 500, 10, 0);
    HTU_OK(ckpt_hook_data_region_put(h, &g));
    HTU_OK(ckpt_hook_data_region_delete(h, obj, 1, g.start, g.count));
    struct ckpt_xfer_region x = xfer_region(obj, 1);
    HTU_OK(ckpt_hook_xfer_region_put(h, &x));
    x = xfer_region(UINT64_C(7000000001), 3);
    HTU_OK(ckpt_hook_xfer_region_put(h, &x));
    HTU_OK(ckpt_hooks_checkpoint(h));
    check_tables(h, obj);
    HTU_OK(ckpt_hooks_close(h));

    HTU_OK(ckpt_hooks_restart_map(&h, &o));
    check_tables(h, obj);
    HTU_OK(ckpt_hooks_close(h));
    struct ckpt_rebuild_stats st;
    HTU_OK(ckpt_hooks_restart_rebuild(&h, &o, &(struct ckpt_rebuild_cbs){0}, NULL, &st));
    assert_int_equal(st.regions, 1); /* the rebuild's regions are the metadata side's */
    check_tables(h, obj);
    /* deleting the object leaves the data-server table alone (its bytes
     * are the data server's, PDC never drops them either) */
    HTU_OK(ckpt_hook_obj_delete(h, obj));
    HTU_OK(ckpt_hooks_checkpoint(h));
    struct regs d, m;
    struct xfers xs;
    read_tables(h, &d, &xs, &m, obj);
    assert_int_equal(d.n, 3);
    assert_int_equal(m.n, 0);
    HTU_OK(ckpt_hooks_close(h));
}

static void test_uncommitted_table_changes_are_not_read(void **state)
{
    struct ckpt_hooks_opts o = htu_opts(state);
    o.commit_every = 0;
    o.commit_ms = 0;
    ckpt_hooks *h;
    HTU_OK(ckpt_hooks_open(&h, &o));
    struct ckpt_region g = data_region(UINT64_C(1000000001), 0, 10, 0);
    HTU_OK(ckpt_hook_data_region_put(h, &g));
    HTU_OK(ckpt_hooks_checkpoint(h));
    g = data_region(UINT64_C(1000000001), 10, 10, 40);
    HTU_OK(ckpt_hook_data_region_put(h, &g));
    ckpt_hooks_discard(h); /* a crash: the second was never committed */
    HTU_OK(ckpt_hooks_restart_map(&h, &o));
    struct regs d, m;
    struct xfers x;
    read_tables(h, &d, &x, &m, 0);
    assert_int_equal(d.n, 1);
    assert_int_equal(d.r[0].start[0], 0);
    HTU_OK(ckpt_hooks_close(h));
}

static void test_transfer_records_decode_exactly_and_refuse_damage(void **state)
{
    (void)state;
    struct ckpt_xfer_region x = xfer_region(UINT64_C(2000000005), 7), y;
    uint8_t buf[1024];
    size_t len = 0, off = 0;
    HTU_OK(ckpt_rec_xfer_encode(&len, buf, sizeof buf, &x));
    HTU_OK(ckpt_rec_xfer_decode(&y, buf, len, &off));
    assert_xfer_eq(&x, &y);
    for (size_t cut = 0; cut < len; cut++)
        assert_int_not_equal(ckpt_rec_xfer_decode(&y, buf, cut, &off), 0);
    x.ndim = 0;
    HTU_RC(CKPT_E_INVAL, ckpt_rec_xfer_encode(&len, buf, sizeof buf, &x));
    x.ndim = CKPT_MAX_DIM + 1;
    HTU_RC(CKPT_E_INVAL, ckpt_rec_xfer_encode(&len, buf, sizeof buf, &x));
    /* a region record is no transfer record */
    struct ckpt_region g = data_region(1, 0, 1, 0);
    HTU_OK(ckpt_rec_region_encode(&len, buf, sizeof buf, &g));
    HTU_RC(CKPT_E_RECORD, ckpt_rec_xfer_decode(&y, buf, len, &off));
}

static void test_same_name_entries_list_one_name_and_time_step(void **state)
{
    struct ckpt_hooks_opts o = htu_opts(state);
    ckpt_hooks *h;
    ckpt_hooks_read *r;
    struct ids v;
    HTU_OK(ckpt_hooks_open(&h, &o));
    HTU_OK(ckpt_hook_same_name_put(h, "results", 0, UINT64_C(1000000003)));
    HTU_OK(ckpt_hook_same_name_put(h, "results", 0, UINT64_C(1000000001)));
    HTU_OK(ckpt_hook_same_name_put(h, "results", 0, UINT64_C(1000000001))); /* idempotent */
    HTU_OK(ckpt_hook_same_name_put(h, "results", 1, UINT64_C(1000000002)));
    HTU_OK(ckpt_hook_same_name_put(h, "results2", 0, UINT64_C(1000000004)));
    HTU_OK(ckpt_hook_same_name_put(h, "result", 0, UINT64_C(1000000005)));
    HTU_OK(ckpt_hook_same_name_put(h, "neg", -1, UINT64_C(1000000006)));
    char *long_name = htu_long_name('q', 1000);
    HTU_OK(ckpt_hook_same_name_put(h, long_name, 0, UINT64_C(1000000007)));
    HTU_OK(ckpt_hooks_close(h));
    HTU_OK(ckpt_hooks_restart_map(&h, &o));
    HTU_OK(ckpt_hooks_read_begin(&r, h));
    memset(&v, 0, sizeof v);
    HTU_OK(ckpt_hooks_foreach_same_name(r, "results", 0, collect_id, &v));
    assert_int_equal(v.n, 2); /* ascending ids: creation order */
    assert_int_equal(v.id[0], UINT64_C(1000000001));
    assert_int_equal(v.id[1], UINT64_C(1000000003));
    memset(&v, 0, sizeof v);
    HTU_OK(ckpt_hooks_foreach_same_name(r, "neg", -1, collect_id, &v));
    assert_int_equal(v.n, 1);
    memset(&v, 0, sizeof v);
    HTU_OK(ckpt_hooks_foreach_same_name(r, long_name, 0, collect_id, &v));
    assert_int_equal(v.n, 1);
    assert_int_equal(v.id[0], UINT64_C(1000000007));
    memset(&v, 0, sizeof v);
    HTU_OK(ckpt_hooks_foreach_same_name(r, "other", 0, collect_id, &v));
    assert_int_equal(v.n, 0);
    /* entries are not data or transfer regions */
    struct regs d;
    struct xfers x;
    memset(&d, 0, sizeof d);
    memset(&x, 0, sizeof x);
    HTU_OK(ckpt_hooks_foreach_data_region(r, collect_region, &d));
    HTU_OK(ckpt_hooks_foreach_xfer_region(r, collect_xfer, &x));
    assert_int_equal(d.n + x.n, 0);
    ckpt_hooks_read_end(r);
    HTU_OK(ckpt_hooks_close(h));
    free(long_name);
}

static void test_a_store_without_pdc_server_reads_as_empty(void **state)
{
    struct ckpt_hooks_opts o = htu_opts(state);
    ckpt_hooks *h;
    ckpt_hooks_read *r;
    struct regs d;
    struct ids v;
    ckpt_val val;
    /* a copy: even a reader leaves a lock file beside data.mdb */
    char src[1200], dir[1200], dst[1300];
    static uint8_t b[1 << 20];
    snprintf(src, sizeof src, "%s/rank-0/data.mdb", v2_root);
    snprintf(dir, sizeof dir, "%s/rank-0", o.store_root);
    int in = open(src, O_RDONLY), out;
    assert_true(in >= 0);
    ssize_t n = read(in, b, sizeof b);
    assert_true(n > 0 && (size_t)n < sizeof b);
    close(in);
    assert_int_equal(ckpt_fs_mkdirs(dir), 0);
    snprintf(dst, sizeof dst, "%s/data.mdb", dir);
    assert_true((out = open(dst, O_WRONLY | O_CREAT | O_EXCL, 0600)) >= 0);
    assert_int_equal(write(out, b, (size_t)n), n);
    assert_int_equal(close(out), 0);
    HTU_OK(ckpt_hooks_open_readonly(&h, &o));
    HTU_OK(ckpt_hooks_read_begin(&r, h));
    memset(&d, 0, sizeof d);
    memset(&v, 0, sizeof v);
    HTU_OK(ckpt_hooks_foreach_data_region(r, collect_region, &d));
    HTU_OK(ckpt_hooks_foreach_same_name(r, "o1", 0, collect_id, &v));
    assert_int_equal(d.n + v.n, 0);
    ckpt_hooks_read_end(r);
    /* and at the store level: a lookup finds nothing, the stat counts none */
    ckpt_rtxn *tx;
    uint64_t entries = 1, bytes = 1;
    HTU_OK(ckpt_rtxn_begin(&tx, ckpt_hooks_store(h)));
    HTU_RC(CKPT_E_NOTFOUND, ckpt_get_raw(&val, tx, CKPT_DB_PDC_SERVER, "d", 1));
    HTU_OK(ckpt_db_stat(&entries, &bytes, tx, CKPT_DB_PDC_SERVER));
    assert_int_equal(entries, 0);
    assert_int_equal(bytes, 0);
    ckpt_rtxn_end(tx);
    ckpt_hooks_close(h);
}

#define T(f) cmocka_unit_test_setup_teardown(f, htu_setup, htu_teardown)

int main(int argc, char **argv)
{
    v2_root = argc > 1 ? argv[1] : NULL;
    const struct CMUnitTest tests[] = {
        T(test_region_tables_round_trip_through_both_restarts),
        T(test_uncommitted_table_changes_are_not_read),
        T(test_transfer_records_decode_exactly_and_refuse_damage),
        T(test_same_name_entries_list_one_name_and_time_step),
        T(test_a_store_without_pdc_server_reads_as_empty),
    };
    if (v2_root == NULL) {
        fprintf(stderr, "usage: hooks_test_pdc_tables STORE_V2_ROOT\n");
        return 2;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
