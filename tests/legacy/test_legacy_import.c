/*
 * test_legacy_import.c - importing legacy checkpoints into a new store.
 *
 *  - L1 into 1 and 3 ranks, L2 (both files) into 2, 1 and 5 ranks: every
 *    object of expected.json is on its home rank ((djb2(name)+ts)%nranks)
 *    with every field, its kvtags (typed) and its regions (the data-server
 *    regions, attached by obj_id), and on no other rank; every container is
 *    on its home rank (djb2(name)%nranks) with exactly its members; the
 *    store holds nothing else; new ids after the import are above every
 *    imported id of their rank's range and collide with none;
 *  - a synthetic file: histograms, last-wins duplicate tags and regions,
 *    odd types, orphan and ndim-0 regions, unknown containers, all counted
 *    with reasons;
 *  - all or nothing: an existing store, a non-empty directory, a file or a
 *    symlink as root are refused; truncated and corrupted files, duplicate
 *    ids across files and failures injected while writing (after 1 .. n-1
 *    records) leave no store data and no temporary directory behind.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "legacy_test_util.h"

#define ERRLEN 1024

struct fix {
    char dir[512];   /* per test; holds the store root and nothing else */
    char root[600];
    char in[512];    /* per test: input copies */
};

static int setup(void **state)
{
    struct fix *f = calloc(1, sizeof *f);
    if (f == NULL)
        return -1;
    ltu_mkdtemp(f->dir, sizeof f->dir, "import");
    ltu_mkdtemp(f->in, sizeof f->in, "input");
    snprintf(f->root, sizeof f->root, "%s/store", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fix *f = *state;
    tu_rmtree(f->dir);
    tu_rmtree(f->in);
    free(f);
    return 0;
}

/* ---- expected content ---- */

struct eobj {
    json_object *j;
    uint64_t id, cont;
    const char *name;
    int32_t ts;
};

struct econt {
    json_object *j;
    uint64_t id;
    const char *name;
};

struct exp {
    json_object *root;
    struct eobj *objs;
    size_t nobjs;
    struct econt *conts;
    size_t nconts;
    json_object **ds;       /* every dataserver_regions entry of every file */
    size_t nds;
    size_t nkvtags;         /* after last-wins */
    size_t nregions;
    size_t nmembers;
    char files[4][1024];
    size_t nfiles;
};

static void load_expected(struct exp *e, const char *tcase)
{
    memset(e, 0, sizeof *e);
    e->root = ltu_expected(tcase);
    json_object *files = ltu_get(e->root, "files");
    e->objs = calloc(1024, sizeof *e->objs);
    e->conts = calloc(64, sizeof *e->conts);
    e->ds = calloc(1024, sizeof *e->ds);
    assert_non_null(e->objs);
    assert_non_null(e->conts);
    assert_non_null(e->ds);
    /* files in rank order */
    for (int r = 0; r < 4; r++) {
        char fn[64];
        json_object *fe;
        snprintf(fn, sizeof fn, "metadata_checkpoint.%d", r);
        if (!json_object_object_get_ex(files, fn, &fe))
            break;
        ltu_path(e->files[e->nfiles++], sizeof e->files[0], tcase, fn);
        json_object *a = ltu_get(fe, "objects");
        for (size_t i = 0; i < json_object_array_length(a); i++) {
            struct eobj *o = &e->objs[e->nobjs++];
            o->j = json_object_array_get_idx(a, i);
            o->id = json_object_get_uint64(ltu_get(o->j, "obj_id"));
            o->cont = json_object_get_uint64(ltu_get(o->j, "cont_id"));
            o->name = json_object_get_string(ltu_get(o->j, "obj_name"));
            o->ts = json_object_get_int(ltu_get(o->j, "time_step"));
            json_object *t = ltu_get(o->j, "kvtags");
            size_t nt = json_object_array_length(t);
            for (size_t k = 0; k < nt; k++) {
                const char *nm = json_object_get_string(ltu_get(json_object_array_get_idx(t, k), "name"));
                int later = 0;
                for (size_t l = k + 1; l < nt; l++)
                    if (strcmp(nm, json_object_get_string(ltu_get(json_object_array_get_idx(t, l),
                                                                  "name"))) == 0)
                        later = 1;
                e->nkvtags += !later;
            }
            e->nregions += json_object_array_length(ltu_get(o->j, "regions"));
        }
        a = ltu_get(fe, "containers");
        for (size_t i = 0; i < json_object_array_length(a); i++) {
            struct econt *c = &e->conts[e->nconts++];
            c->j = json_object_array_get_idx(a, i);
            c->id = json_object_get_uint64(ltu_get(c->j, "cont_id"));
            c->name = json_object_get_string(ltu_get(c->j, "cont_name"));
        }
        a = ltu_get(fe, "dataserver_regions");
        for (size_t i = 0; i < json_object_array_length(a); i++) {
            e->ds[e->nds] = json_object_array_get_idx(a, i);
            e->nregions += json_object_array_length(ltu_get(e->ds[e->nds], "regions"));
            e->nds++;
        }
    }
    for (size_t i = 0; i < e->nobjs; i++)
        for (size_t c = 0; c < e->nconts; c++)
            e->nmembers += e->objs[i].cont == e->conts[c].id;
}

static void free_expected(struct exp *e)
{
    json_object_put(e->root);
    free(e->objs);
    free(e->conts);
    free(e->ds);
}

/* ---- reading the store back ---- */

struct rank_view {
    ckpt_hooks *h;
    ckpt_hooks_read *rd;
};

static void open_ranks(struct rank_view *v, const char *root, int nranks)
{
    for (int r = 0; r < nranks; r++) {
        struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
        o.store_root = root;
        o.rank = r;
        o.nranks = nranks;
        int rc = ckpt_hooks_open_readonly(&v[r].h, &o);
        if (rc)
            fail_msg("open rank %d: %s", r, ckpt_errmsg());
        assert_int_equal(ckpt_hooks_read_begin(&v[r].rd, v[r].h), 0);
    }
}

static void close_ranks(struct rank_view *v, int nranks)
{
    for (int r = 0; r < nranks; r++) {
        ckpt_hooks_read_end(v[r].rd);
        assert_int_equal(ckpt_hooks_close(v[r].h), 0);
    }
}

struct collect {
    uint64_t ids[4096];
    size_t n;
    const struct exp *e;
    json_object *regs[64];  /* expected regions of the object */
    size_t nregs;
    int matched[64];
    uint64_t obj_id;
};

static int count_kvtag(uint64_t owner, const struct ckpt_kvtag *t, void *p)
{
    struct collect *c = p;
    (void)owner;
    (void)t;
    c->n++;
    return 0;
}

static int collect_member(uint64_t cont, uint64_t obj, void *p)
{
    struct collect *c = p;
    (void)cont;
    assert_true(c->n < 4096);
    c->ids[c->n++] = obj;
    return 0;
}

static int geom_is(json_object *j, const struct ckpt_region *r)
{
    if (json_object_get_int64(ltu_get(j, "ndim")) != (int64_t)r->ndim)
        return 0;
    json_object *s = ltu_get(j, "start"), *c = ltu_get(j, "count");
    for (uint32_t d = 0; d < r->ndim; d++)
        if (json_object_get_uint64(json_object_array_get_idx(s, d)) != r->start[d] ||
            json_object_get_uint64(json_object_array_get_idx(c, d)) != r->count[d])
            return 0;
    return 1;
}

static int check_region_cb(const struct ckpt_region *r, void *p)
{
    struct collect *c = p;
    assert_true(r->obj_id == c->obj_id);
    for (size_t i = 0; i < c->nregs; i++)
        if (!c->matched[i] && geom_is(c->regs[i], r)) {
            ltu_check_region(c->regs[i], r);
            c->matched[i] = 1;
            c->n++;
            return 0;
        }
    fail_msg("object %llu: unexpected region", (unsigned long long)c->obj_id);
    return -1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void db_totals(struct rank_view *v, int nranks, uint64_t tot[CKPT_DB_COUNT])
{
    memset(tot, 0, CKPT_DB_COUNT * sizeof tot[0]);
    for (int r = 0; r < nranks; r++) {
        ckpt_rtxn *tx;
        assert_int_equal(ckpt_rtxn_begin(&tx, ckpt_hooks_store(v[r].h)), 0);
        for (int db = CKPT_DB_OBJ; db < CKPT_DB_COUNT; db++) {
            uint64_t n, bytes;
            assert_int_equal(ckpt_db_stat(&n, &bytes, tx, db), 0);
            tot[db] += n;
        }
        ckpt_rtxn_end(tx);
    }
}

/* Every record of expected.json on its home rank, and nothing else. */
static void verify_store(const char *root, int nranks, const struct exp *e)
{
    struct rank_view *v = calloc((size_t)nranks, sizeof *v);
    struct collect *c = calloc(1, sizeof *c);
    assert_non_null(v);
    assert_non_null(c);
    open_ranks(v, root, nranks);
    for (size_t i = 0; i < e->nobjs; i++) {
        const struct eobj *eo = &e->objs[i];
        int home = ckpt_home_obj(eo->name, eo->ts, nranks);
        struct ckpt_obj o;
        for (int r = 0; r < nranks; r++) {
            int rc = ckpt_hooks_get_obj(&o, v[r].rd, eo->id);
            if (r != home) {
                assert_int_equal(rc, CKPT_E_NOTFOUND);
                continue;
            }
            if (rc)
                fail_msg("object %llu (%s) not on its home rank %d", (unsigned long long)eo->id,
                         eo->name, home);
            ltu_check_obj(eo->j, &o);
        }
        assert_int_equal(ckpt_hooks_get_obj_by_name(&o, v[home].rd, eo->name, eo->ts), 0);
        assert_true(o.obj_id == eo->id);
        /* kvtags: the last copy of every name, typed */
        json_object *t = ltu_get(eo->j, "kvtags");
        size_t nt = json_object_array_length(t), want = 0;
        for (size_t k = 0; k < nt; k++) {
            json_object *jk = json_object_array_get_idx(t, k);
            const char *nm = json_object_get_string(ltu_get(jk, "name"));
            int later = 0;
            for (size_t l = k + 1; l < nt; l++)
                if (strcmp(nm, json_object_get_string(ltu_get(json_object_array_get_idx(t, l),
                                                              "name"))) == 0)
                    later = 1;
            if (later)
                continue;
            want++;
            struct ckpt_kvtag kt;
            assert_int_equal(ckpt_hooks_get_kvtag(&kt, v[home].rd, eo->id, nm), 0);
            ltu_check_kvtag(jk, &kt);
        }
        c->n = 0;
        assert_int_equal(ckpt_hooks_foreach_kvtag(v[home].rd, eo->id, count_kvtag, c), 0);
        assert_int_equal(c->n, want);
        /* regions: the object's own and its data-server regions */
        memset(c, 0, sizeof *c);
        c->obj_id = eo->id;
        json_object *own = ltu_get(eo->j, "regions");
        for (size_t k = 0; k < json_object_array_length(own); k++)
            c->regs[c->nregs++] = json_object_array_get_idx(own, k);
        for (size_t d = 0; d < e->nds; d++)
            if (json_object_get_uint64(ltu_get(e->ds[d], "obj_id")) == eo->id) {
                json_object *rs = ltu_get(e->ds[d], "regions");
                for (size_t k = 0; k < json_object_array_length(rs); k++)
                    c->regs[c->nregs++] = json_object_array_get_idx(rs, k);
            }
        for (int r = 0; r < nranks; r++) {
            size_t before = c->n;
            assert_int_equal(ckpt_hooks_foreach_region(v[r].rd, eo->id, check_region_cb, c), 0);
            if (r != home)
                assert_int_equal(c->n, before);
        }
        assert_int_equal(c->n, c->nregs);
    }
    for (size_t i = 0; i < e->nconts; i++) {
        const struct econt *ec = &e->conts[i];
        int home = ckpt_home_cont(ec->name, nranks);
        struct ckpt_cont cc;
        for (int r = 0; r < nranks; r++) {
            int rc = ckpt_hooks_get_cont(&cc, v[r].rd, ec->id);
            assert_int_equal(rc, r == home ? 0 : CKPT_E_NOTFOUND);
            if (r == home)
                assert_string_equal(cc.cont_name, ec->name);
        }
        assert_int_equal(ckpt_hooks_get_cont_by_name(&cc, v[home].rd, ec->name), 0);
        assert_true(cc.cont_id == ec->id);
        /* members: exactly the objects naming this container */
        c->n = 0;
        assert_int_equal(ckpt_hooks_foreach_member(v[home].rd, ec->id, collect_member, c), 0);
        uint64_t *want = calloc(e->nobjs + 1, sizeof *want);
        size_t nw = 0;
        for (size_t k = 0; k < e->nobjs; k++)
            if (e->objs[k].cont == ec->id)
                want[nw++] = e->objs[k].id;
        qsort(want, nw, sizeof *want, cmp_u64);
        qsort(c->ids, c->n, sizeof c->ids[0], cmp_u64);
        assert_int_equal(c->n, nw);
        for (size_t k = 0; k < nw; k++)
            assert_true(c->ids[k] == want[k]);
        free(want);
    }
    /* nothing else in the store */
    uint64_t tot[CKPT_DB_COUNT];
    db_totals(v, nranks, tot);
    assert_int_equal(tot[CKPT_DB_OBJ], e->nobjs);
    assert_int_equal(tot[CKPT_DB_OBJ_NAME], e->nobjs);
    assert_int_equal(tot[CKPT_DB_CONT], e->nconts);
    assert_int_equal(tot[CKPT_DB_CONT_NAME], e->nconts);
    assert_int_equal(tot[CKPT_DB_KVTAG], e->nkvtags);
    assert_int_equal(tot[CKPT_DB_TAG_INDEX], e->nkvtags);
    assert_int_equal(tot[CKPT_DB_REGION], e->nregions);
    assert_int_equal(tot[CKPT_DB_CONT_OBJ], e->nmembers);
    close_ranks(v, nranks);
    free(c);
    free(v);
}

/* New ids: above every imported id of the rank's range, never an imported
 * id (imported ids of any range may live on any rank). */
static void verify_new_ids(const char *root, int nranks, const uint64_t *ids, size_t nids)
{
    for (int r = 0; r < nranks; r++) {
        struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
        ckpt_hooks *h;
        uint64_t lo = (uint64_t)(r + 1) * 1000000000ull, hi = lo + 1000000000ull, max = 0;
        o.store_root = root;
        o.rank = r;
        o.nranks = nranks;
        if (ckpt_hooks_open(&h, &o) != 0)
            fail_msg("open rank %d: %s", r, ckpt_errmsg());
        for (size_t i = 0; i < nids; i++)
            if (ids[i] >= lo && ids[i] < hi && ids[i] > max)
                max = ids[i];
        for (int k = 0; k < 3; k++) {
            uint64_t id;
            assert_int_equal(ckpt_hook_new_id(&id, h), 0);
            assert_true(id >= lo && id < hi);
            if (max)
                assert_true(id > max);
            for (size_t i = 0; i < nids; i++)
                assert_true(id != ids[i]);
        }
        assert_int_equal(ckpt_hooks_close(h), 0);
    }
}

static void import_and_verify(void **state, const char *tcase, int nranks)
{
    struct fix *f = *state;
    struct exp e;
    struct legacy_import_stats st;
    char err[ERRLEN];
    const char *files[4];
    load_expected(&e, tcase);
    for (size_t i = 0; i < e.nfiles; i++)
        files[i] = e.files[i];
    int rc = legacy_import(f->root, nranks, files, e.nfiles, &st, err, sizeof err);
    if (rc)
        fail_msg("import: %s", err);
    assert_int_equal(st.files, e.nfiles);
    assert_int_equal(st.objects, e.nobjs);
    assert_int_equal(st.containers, e.nconts);
    assert_int_equal(st.kvtags, e.nkvtags);
    assert_int_equal(st.regions, e.nregions);
    assert_int_equal(st.ds_regions, e.nregions);
    assert_int_equal(st.members, e.nmembers);
    assert_int_equal(st.skipped, 0);
    assert_int_equal(st.nranks, nranks);
    /* the root is in place and no temporary directory is left */
    assert_int_equal(tu_dir_entries(f->dir), 1);
    assert_int_equal(tu_dir_entries(f->root), nranks);
    verify_store(f->root, nranks, &e);
    uint64_t *ids = calloc(e.nobjs + e.nconts, sizeof *ids);
    size_t n = 0;
    for (size_t i = 0; i < e.nobjs; i++)
        ids[n++] = e.objs[i].id;
    for (size_t i = 0; i < e.nconts; i++)
        ids[n++] = e.conts[i].id;
    verify_new_ids(f->root, nranks, ids, n);
    free(ids);
    free_expected(&e);
}

static void test_import_L1_1rank(void **state)
{
    import_and_verify(state, "L1", 1);
}

static void test_import_L1_3ranks(void **state)
{
    import_and_verify(state, "L1", 3);
}

static void test_import_L2_2ranks(void **state)
{
    import_and_verify(state, "L2", 2);
}

static void test_import_L2_1rank(void **state)
{
    import_and_verify(state, "L2", 1);
}

static void test_import_L2_5ranks(void **state)
{
    import_and_verify(state, "L2", 5);
}

/* ---- the synthetic file ---- */

static int collect_region(const struct ckpt_region *r, void *p)
{
    struct ckpt_region *out = p;
    for (int i = 0; i < 8; i++)
        if (out[i].ndim == 0) {
            out[i] = *r;
            /* keep the histogram arrays readable after the read ends: not
             * needed, checked inside the read */
            return 0;
        }
    fail_msg("too many regions");
    return -1;
}

static void test_import_synthetic(void **state)
{
    struct fix *f = *state;
    struct ltu_buf b = {NULL, 0, 0};
    struct legacy_import_stats st;
    char path[700], err[ERRLEN], sum[4096];
    const int nranks = 3;
    ltu_synth(&b);
    snprintf(path, sizeof path, "%s/metadata_checkpoint.0", f->in);
    ltu_write_file(path, b.p, b.len);
    const char *files[] = {path};
    int rc = legacy_import(f->root, nranks, files, 1, &st, err, sizeof err);
    if (rc)
        fail_msg("import: %s", err);
    assert_int_equal(st.containers, 2);
    assert_int_equal(st.objects, 4);
    assert_int_equal(st.kvtags, 7);         /* 7 + 1, one duplicate */
    assert_int_equal(st.obj_regions, 2);    /* R1, R4 */
    assert_int_equal(st.ds_regions, 3);
    assert_int_equal(st.regions, 5);
    assert_int_equal(st.members, 3);
    assert_int_equal(st.skip[LEGACY_SKIP_DUP_KVTAG], 1);
    assert_int_equal(st.skip[LEGACY_SKIP_DUP_REGION], 1);
    assert_int_equal(st.skip[LEGACY_SKIP_ORPHAN_REGION], 1);
    assert_int_equal(st.skip[LEGACY_SKIP_EMPTY_REGION], 1);
    assert_int_equal(st.skip[LEGACY_SKIP_NO_CONT], 1);
    assert_int_equal(st.skipped, 5);
    assert_non_null(strstr(st.skip_first[LEGACY_SKIP_DUP_KVTAG], "kvtag \"k\""));
    assert_non_null(strstr(st.skip_first[LEGACY_SKIP_ORPHAN_REGION], "object 999"));
    assert_non_null(strstr(st.skip_first[LEGACY_SKIP_NO_CONT], "names container 4242"));
    legacy_import_summary(sum, sizeof sum, &st);
    assert_non_null(strstr(sum, "objects 4"));
    assert_non_null(strstr(sum, legacy_skip_reason(LEGACY_SKIP_DUP_KVTAG)));
    assert_true(legacy_import_summary(NULL, 0, &st) == (int)strlen(sum));

    struct rank_view v[3];
    open_ranks(v, f->root, nranks);
    int h1 = ckpt_home_obj("syn/a", 0, nranks);
    struct ckpt_kvtag t;
    struct ckpt_obj o;
    assert_int_equal(ckpt_hooks_get_obj(&o, v[h1].rd, 1000000001ull), 0);
    assert_string_equal(o.tags, "legacy=1");
    assert_int_equal(o.last_modified_time, -5);
    assert_int_equal(o.region_partition, 2);
    assert_int_equal(ckpt_hooks_get_kvtag(&t, v[h1].rd, 1000000001ull, "k"), 0);
    assert_int_equal(t.type, 2);
    assert_int_equal(t.size, 4);
    int32_t k;
    memcpy(&k, t.value, 4);
    assert_int_equal(k, 7); /* the last copy won */
    assert_int_equal(ckpt_hooks_get_kvtag(&t, v[h1].rd, 1000000001ull, "odd"), 0);
    assert_int_equal(t.type, 99);
    assert_int_equal(t.size, 3);
    assert_memory_equal(t.value, "xyz", 3);
    assert_int_equal(ckpt_hooks_get_kvtag(&t, v[h1].rd, 1000000001ull, "raw"), 0);
    assert_int_equal(t.type, 16);
    assert_int_equal(t.size, 3);
    assert_memory_equal(t.value, "abc", 3);
    assert_int_equal(ckpt_hooks_get_kvtag(&t, v[h1].rd, 1000000001ull, "u"), 0);
    uint64_t u;
    memcpy(&u, t.value, 8);
    assert_true(u == UINT64_MAX);
    assert_int_equal(ckpt_hooks_get_kvtag(&t, v[h1].rd, 1000000001ull, "arr"), 0);
    assert_int_equal(t.size, 16);

    /* regions of 1000000001: R1 (histogram), R4 (won over R2), ds {4,0} */
    struct ckpt_region regs[8];
    memset(regs, 0, sizeof regs);
    assert_int_equal(ckpt_hooks_foreach_region(v[h1].rd, 1000000001ull, collect_region, regs), 0);
    int seen_hist = 0, seen_r4 = 0, seen_ds = 0;
    for (int i = 0; i < 8 && regs[i].ndim; i++) {
        assert_true(regs[i].obj_id == 1000000001ull);
        if (regs[i].ndim == 2 && regs[i].start[0] == 0) {
            assert_true(regs[i].has_hist);
            assert_int_equal(regs[i].hist.dtype, 13);
            assert_int_equal(regs[i].hist.nbin, 3);
            for (size_t j = 0; j < 6; j++)
                assert_true(ckpt_hist_range(&regs[i].hist, j) == ltu_syn_range[j]);
            for (size_t j = 0; j < 3; j++)
                assert_true(ckpt_hist_bin(&regs[i].hist, j) == ltu_syn_bins[j]);
            assert_true(regs[i].hist.incr == 0.5);
            assert_string_equal(regs[i].cache_location, "/cache/c");
            assert_int_equal(regs[i].cache_offset, 12);
            seen_hist++;
        } else if (regs[i].ndim == 1) {
            assert_int_equal(regs[i].data_size, 77);
            seen_r4++;
        } else {
            assert_int_equal(regs[i].start[0], 4);
            assert_false(regs[i].has_hist);
            seen_ds++;
        }
    }
    assert_int_equal(seen_hist + seen_r4 + seen_ds, 3);
    assert_int_equal(seen_hist, 1);
    assert_int_equal(seen_r4, 1);
    /* the object without a known container exists, in no membership */
    int hn = ckpt_home_obj("syn/nocont", 0, nranks);
    assert_int_equal(ckpt_hooks_get_obj(&o, v[hn].rd, 1000000100ull), 0);
    assert_int_equal(o.cont_id, 4242);
    assert_int_equal(o.ndim, 0);
    /* syn/b lives wherever its name sends it; its id is of rank 2's range */
    int hb = ckpt_home_obj("syn/b", 2, nranks);
    assert_int_equal(ckpt_hooks_get_obj(&o, v[hb].rd, 3000000005ull), 0);
    assert_int_equal(o.ndim, 4);
    assert_true(o.dims[3] == UINT64_MAX);
    int hc2 = ckpt_home_cont("syn/c2", nranks);
    struct collect *c = calloc(1, sizeof *c);
    assert_int_equal(ckpt_hooks_foreach_member(v[hc2].rd, 2000000000ull, collect_member, c), 0);
    assert_int_equal(c->n, 1);
    assert_true(c->ids[0] == 3000000005ull);
    free(c);
    close_ranks(v, nranks);

    const uint64_t ids[] = {1000000000ull, 2000000000ull, 1000000001ull, 1000000002ull,
                            3000000005ull, 1000000100ull};
    verify_new_ids(f->root, nranks, ids, sizeof ids / sizeof ids[0]);
    free(b.p);
}

/* ---- all or nothing ---- */

/* Nothing of a failed import: no root, no temporary sibling. */
static void assert_nothing_left(const struct fix *f)
{
    assert_false(tu_exists(f->root));
    assert_int_equal(tu_dir_entries(f->dir), 0);
}

static void expect_fail(struct fix *f, const char *const *files, size_t n, int nranks, int want_rc,
                        const char *want1, const char *want2)
{
    char err[ERRLEN];
    struct legacy_import_stats st;
    int rc = legacy_import(f->root, nranks, files, n, &st, err, sizeof err);
    if (rc != want_rc)
        fail_msg("import returned %d (%s), expected %d: %s", rc, ckpt_errname(rc), want_rc, err);
    if (want1 && strstr(err, want1) == NULL)
        fail_msg("message lacks \"%s\": %s", want1, err);
    if (want2 && strstr(err, want2) == NULL)
        fail_msg("message lacks \"%s\": %s", want2, err);
    assert_int_equal(strncmp(ckpt_errmsg(), err, 200), 0);
}

static void test_refuses_existing(void **state)
{
    struct fix *f = *state;
    char p[1024], err[ERRLEN], keep[700];
    ltu_path(p, sizeof p, "L1", "metadata_checkpoint.0");
    const char *files[] = {p};
    /* an empty directory is fine */
    assert_int_equal(mkdir(f->root, 0700), 0);
    assert_int_equal(legacy_import(f->root, 2, files, 1, NULL, err, sizeof err), 0);
    /* a second import into the store is refused; the store is untouched */
    expect_fail(f, files, 1, 2, CKPT_E_EXISTS, f->root, "not empty");
    expect_fail(f, files, 1, 1, CKPT_E_EXISTS, f->root, "not empty");
    assert_int_equal(tu_dir_entries(f->dir), 1);
    struct exp e;
    load_expected(&e, "L1");
    verify_store(f->root, 2, &e);
    free_expected(&e);
    tu_rmtree(f->root);
    /* a directory with something else in it */
    assert_int_equal(mkdir(f->root, 0700), 0);
    snprintf(keep, sizeof keep, "%s/keep.txt", f->root);
    ltu_write_file(keep, "x", 1);
    expect_fail(f, files, 1, 1, CKPT_E_EXISTS, "not empty", NULL);
    assert_true(tu_exists(keep));
    assert_int_equal(tu_dir_entries(f->root), 1);
    assert_int_equal(tu_dir_entries(f->dir), 1);
    tu_rmtree(f->root);
    /* a file, a symlink */
    ltu_write_file(f->root, "x", 1);
    expect_fail(f, files, 1, 1, CKPT_E_EXISTS, "not a directory", NULL);
    unlink(f->root);
    assert_int_equal(symlink(f->in, f->root), 0);
    expect_fail(f, files, 1, 1, CKPT_E_INVAL, "symbolic link", NULL);
    unlink(f->root);
    assert_nothing_left(f);
    /* trailing slashes name the same root */
    char slashed[700];
    snprintf(slashed, sizeof slashed, "%s//", f->root);
    assert_int_equal(legacy_import(slashed, 1, files, 1, NULL, err, sizeof err), 0);
    assert_int_equal(tu_dir_entries(f->root), 1);
    assert_int_equal(tu_dir_entries(f->dir), 1);
}

static void test_bad_arguments(void **state)
{
    struct fix *f = *state;
    char p[1024], err[ERRLEN], root[700];
    ltu_path(p, sizeof p, "L1", "metadata_checkpoint.0");
    const char *files[] = {p};
    const char *nullfile[] = {NULL};
    expect_fail(f, files, 1, 0, CKPT_E_INVAL, "nranks 0", NULL);
    expect_fail(f, files, 1, -3, CKPT_E_INVAL, "nranks", NULL);
    expect_fail(f, files, 0, 1, CKPT_E_INVAL, "at least one file", NULL);
    expect_fail(f, nullfile, 1, 1, CKPT_E_INVAL, "NULL", NULL);
    assert_int_equal(legacy_import(NULL, 1, files, 1, NULL, err, sizeof err), CKPT_E_INVAL);
    assert_int_equal(legacy_import("/", 1, files, 1, NULL, err, sizeof err), CKPT_E_INVAL);
    /* a file that does not exist */
    const char *missing[] = {p, "/nonexistent/metadata_checkpoint.3"};
    expect_fail(f, missing, 2, 2, CKPT_E_NOSTORE, "/nonexistent/metadata_checkpoint.3", NULL);
    assert_nothing_left(f);
    /* a root whose parent does not exist */
    snprintf(root, sizeof root, "%s/no/such/dir", f->dir);
    assert_int_equal(legacy_import(root, 1, files, 1, NULL, err, sizeof err), CKPT_E_NOSTORE);
    assert_non_null(strstr(err, "parent directory"));
    assert_nothing_left(f);
}

/* A failure while writing (after 1, ..., n-1 staged records, on any rank)
 * removes everything written so far. */

/* The importer's progress callback: calls, last values, and whether the
 * count ever went backwards. */
struct progress_log {
    int calls, backwards;
    uint64_t last_done, last_total;
};

static void log_progress(void *arg, uint64_t done, uint64_t total)
{
    struct progress_log *l = arg;
    if (done < l->last_done || done > total)
        l->backwards++;
    l->calls++;
    l->last_done = done;
    l->last_total = total;
}
static void test_rollback_on_write_failure(void **state)
{
    struct fix *f = *state;
    struct exp e;
    char err[ERRLEN];
    const char *files[4];
    load_expected(&e, "L2");
    for (size_t i = 0; i < e.nfiles; i++)
        files[i] = e.files[i];
    uint64_t total = e.nconts + e.nobjs + e.nkvtags + e.nregions + e.nmembers;
    const uint64_t at[] = {1, 2, 150, 500, total / 2, total - 1};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        struct legacy_import_opts o = {f->root, 2, 64, at[i], NULL, NULL};
        int rc = legacy_import_ex(&o, files, e.nfiles, NULL, err, sizeof err);
        assert_int_equal(rc, CKPT_E_IO);
        assert_non_null(strstr(err, "simulated failure"));
        assert_nothing_left(f);
    }
    /* exactly enough records: it succeeds, reporting progress once per
     * rank written */
    struct progress_log pl = {0, 0, 0, 0};
    struct legacy_import_opts o = {f->root, 2, 64, total, log_progress, &pl};
    struct legacy_import_stats st;
    int rc = legacy_import_ex(&o, files, e.nfiles, &st, err, sizeof err);
    if (rc)
        fail_msg("%s", err);
    assert_int_equal(st.objects + st.containers + st.kvtags + st.regions + st.members, total);
    assert_int_equal(pl.calls, 2);
    assert_int_equal(pl.last_done, 2);
    assert_int_equal(pl.last_total, 2);
    assert_int_equal(pl.backwards, 0);
    verify_store(f->root, 2, &e);
    free_expected(&e);
}

/* Truncated and corrupted copies: rejected naming the copy and a byte
 * offset, and nothing is written (also when good files come first). */
static void test_bad_files_leave_nothing(void **state)
{
    struct fix *f = *state;
    char l1[1024], l20[1024], l21[1024], bad[700], other[700];
    size_t n1, n21;
    ltu_path(l1, sizeof l1, "L1", "metadata_checkpoint.0");
    ltu_path(l20, sizeof l20, "L2", "metadata_checkpoint.0");
    ltu_path(l21, sizeof l21, "L2", "metadata_checkpoint.1");
    uint8_t *d1 = ltu_read_file(l1, &n1), *d21 = ltu_read_file(l21, &n21);
    snprintf(bad, sizeof bad, "%s/metadata_checkpoint.1", f->in);
    const char *files[] = {l20, bad};
    int runs = 0;

    /* truncated copies of L1 (every 997 bytes), after a good file */
    for (size_t len = 0; len < n1; len += 997) {
        ltu_write_file(bad, d1, len);
        expect_fail(f, files, 2, 2, CKPT_E_RECORD, "metadata_checkpoint.1: byte ", NULL);
        assert_nothing_left(f);
        runs++;
    }
    /* truncated copies of L2's second file at a few dozen lengths */
    for (size_t len = 1; len < n21; len += n21 / 37) {
        ltu_write_file(bad, d21, len);
        expect_fail(f, files, 2, 3, CKPT_E_RECORD, bad, ": byte ");
        assert_nothing_left(f);
        runs++;
    }
    /* corrupted copies of L2's second file */
    struct legacy_file *p;
    char err[ERRLEN];
    assert_int_equal(legacy_parse(&p, "x", d21, n21, err, sizeof err), 0);
    struct {
        size_t off;
        int64_t v;
        int wide;
        const char *want;
    } cases[] = {
        {0, -1, 0, "n_cont -1 is negative"},
        {0, INT32_MAX, 0, "n_cont 2147483647 exceeds"},
        {p->off_n_bucket, 1 << 30, 0, "n_bucket 1073741824 exceeds"},
        {p->buckets[5].offset, 4000, 0, "bucket n_obj 4000 exceeds"},
        {p->buckets[5].offset, -1, 0, "bucket n_obj -1 is negative"},
        {p->objs[7].off_n_kvtag, 500000, 0, "n_kvtag 500000 exceeds"},
        {p->objs[7].off_n_kvtag, -9, 0, "n_kvtag -9 is negative"},
        {p->kvtags[30].offset, 9999999, 0, "kvtag name_len 9999999 exceeds"},
        {p->kvtags[30].offset, -1, 0, "kvtag name_len -1"},
        {p->objs[100].off_n_region, 1000, 0, "n_region 1000 exceeds"},
        {p->off_n_ds, 77777, 0, "n_ds_obj 77777 exceeds"},
        {p->off_tq_size, 5, 1, "tq_size 5 exceeds the 4 bytes left"},
        {p->off_tq_size, -1, 1, "tq_size 18446744073709551615 exceeds"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t *c = malloc(n21);
        char want[64];
        memcpy(c, d21, n21);
        if (cases[i].wide)
            ltu_set_u64(c, cases[i].off, (uint64_t)cases[i].v);
        else
            ltu_set_i32(c, cases[i].off, (int32_t)cases[i].v);
        ltu_write_file(bad, c, n21);
        snprintf(want, sizeof want, ": byte %zu: ", cases[i].off);
        expect_fail(f, files, 2, 2, CKPT_E_RECORD, want, cases[i].want);
        assert_nothing_left(f);
        free(c);
        runs++;
    }
    legacy_file_free(p);
    /* corrupted histograms (synthetic file) */
    struct ltu_buf b = {NULL, 0, 0};
    ltu_synth(&b);
    assert_int_equal(legacy_parse(&p, "x", b.p, b.len, err, sizeof err), 0);
    size_t nbin = p->regions[0].offset + LEGACY_REGION_SIZE + 8;
    legacy_file_free(p);
    const int32_t nbins[] = {INT32_MAX, -1, 1 << 24};
    for (size_t i = 0; i < 3; i++) {
        ltu_set_i32(b.p, nbin, nbins[i]);
        ltu_write_file(bad, b.p, b.len);
        char want[64];
        snprintf(want, sizeof want, ": byte %zu: histogram nbin", nbin);
        expect_fail(f, files, 2, 1, CKPT_E_RECORD, want, NULL);
        assert_nothing_left(f);
        runs++;
    }
    free(b.p);
    /* the same file twice: duplicate ids */
    snprintf(other, sizeof other, "%s/copy_of_L1", f->in);
    ltu_write_file(other, d1, n1);
    const char *dup[] = {l1, other};
    expect_fail(f, dup, 2, 1, CKPT_E_INVAL, "is also the id of", "copy_of_L1");
    assert_nothing_left(f);
    assert_true(runs > 100);
    free(d1);
    free(d21);
}

/* Objects named twice, containers named twice, an id shared by an object
 * and a container: refused before anything is written. */
/* A bucket of one object o named "dup" (with id), no kvtags, no regions. */
static void dup_bucket(struct ltu_buf *b, struct ckpt_obj *o, uint64_t id)
{
    ltu_i32(b, 1);
    ltu_u32(b, ckpt_djb2("dup"));
    o->obj_id = id;
    ltu_meta(b, o);
    ltu_i32(b, 0);
    ltu_i32(b, 0);
}

/* The end of a file (no data-server region lists, no transfer-query blob);
 * written to path, b freed. */
static void end_file(struct ltu_buf *b, const char *path)
{
    ltu_i32(b, 0);
    ltu_u64(b, 0);
    ltu_write_file(path, b->p, b->len);
    free(b->p);
}

static void test_inconsistent_files(void **state)
{
    struct fix *f = *state;
    char a[700], bpath[700];
    struct ckpt_obj o;
    memset(&o, 0, sizeof o);
    o.obj_name = "dup";
    o.app_name = "";
    o.tags = "";
    o.data_location = "";
    o.ndim = 1;
    o.dims[0] = 1;
    snprintf(a, sizeof a, "%s/metadata_checkpoint.0", f->in);
    snprintf(bpath, sizeof bpath, "%s/metadata_checkpoint.1", f->in);
    const char *files[] = {a, bpath};

    /* same name and time step, different ids, in two files */
    for (int k = 0; k < 2; k++) {
        struct ltu_buf b = {NULL, 0, 0};
        ltu_i32(&b, 0); /* no containers */
        ltu_i32(&b, 1); /* one bucket */
        dup_bucket(&b, &o, 1000000001ull + (uint64_t)k);
        end_file(&b, k ? bpath : a);
    }
    expect_fail(f, files, 2, 2, CKPT_E_INVAL, "object \"dup\" at time_step 0", "also exists");
    assert_nothing_left(f);

    /* a container named twice; the second's id is an object's id */
    for (int k = 0; k < 2; k++) {
        struct ltu_buf b = {NULL, 0, 0};
        ltu_i32(&b, 1);
        ltu_cont(&b, k ? 1000000001ull : 1000000000ull, k ? "cx" : "c");
        ltu_i32(&b, k ? 0 : 1);
        if (!k)
            dup_bucket(&b, &o, 1000000001ull);
        end_file(&b, k ? bpath : a);
    }
    expect_fail(f, files, 2, 1, CKPT_E_INVAL, "obj_id 1000000001 is also the id of the container",
                NULL);
    assert_nothing_left(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_import_L1_1rank, setup, teardown),
        cmocka_unit_test_setup_teardown(test_import_L1_3ranks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_import_L2_2ranks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_import_L2_1rank, setup, teardown),
        cmocka_unit_test_setup_teardown(test_import_L2_5ranks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_import_synthetic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_existing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rollback_on_write_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_files_leave_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inconsistent_files, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
