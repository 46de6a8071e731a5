/*
 * elastic_by_id: re-homing by id (ckpt_hooks_opts.rehome_by_id, the
 * placement of PDC's server; docs/ELASTIC.md, "In PDC's server").
 *
 *   elastic_by_id write ROOT       (under mpiexec -n N)
 *       rank r creates K objects e<r>_<i> (time step i % 3, data server
 *       i % N, kvtags ta and tb) and a container ec<r> with kvtag tc and
 *       every object of r as member; then closes.
 *   elastic_by_id check ROOT N     (under mpiexec -n M)
 *       restarts by id and checks on every rank: each object and container
 *       held is on its id home, whole (kvtags, members), with a data server
 *       below M; all N*K objects and N containers are held once; each rank
 *       holds exactly the aliases whose name home it is and whose id home is
 *       another rank, each the record of an object or container held there;
 *       100 new ids per rank are above every restored id of the rank's range.
 *       Run it twice: the second restart moves nothing and finds the same.
 * Region data (PDC's data-server tables, pdc_server `d`): objects e<r>_<i>
 * with i % 4 == 0 are PDC_REGION_STATIC, 100 int32 elements, of which rank r
 * stores slab r of N (as PDC's data server r would); i % 4 == 1 are
 * PDC_OBJ_STATIC, 100 int64 elements, stored whole when rank r is their
 * data server. Each server's
 * bytes are in ROOT-data/pdc_data/<id>/server<j>/s<jjjj>.bin, after some
 * other bytes. After each restart every rank's entries lie in its slab of M
 * (or it is the object's data server), each names this rank's file, whose
 * bytes at the entry's offset are the element values, and all ranks'
 * entries together cover every object exactly once.
 * Each failed check prints "FAIL: ..."; the exit status is 1 if any did.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "ckpt_hooks_mpi.h"

enum { K = 40, DLEN = 100 };

static int me, np;

/* element k of object id: int32 (region-static) or int64 (object-static) */
static uint64_t dval(uint64_t id, uint64_t k, uint64_t unit)
{
    return unit == 4 ? (uint32_t)(id * 7 + k) : id * 13 + k;
}

/* slab j of m over DLEN elements (PDC's static_region_partition) */
static void dslab(int m, int j, uint64_t *lo, uint64_t *len)
{
    uint64_t s = DLEN / (uint64_t)m, x = (uint64_t)m - DLEN % (uint64_t)m;
    *lo = (uint64_t)j < x ? (uint64_t)j * s : x * s + ((uint64_t)j - x) * (s + 1);
    *len = (uint64_t)j < x ? s : s + 1;
}

static void dpath(char *out, size_t cap, const char *root, uint64_t id, int j)
{
    snprintf(out, cap, "%s-data/pdc_data/%" PRIu64 "/server%d/s%04d.bin", root, id, j, j);
}

/* this rank's data of object id as PDC's data server j of np stores it */
static int put_data(ckpt_hooks *h, const char *root, uint64_t id, int region_static, int dsid)
{
    uint64_t unit = region_static ? 4 : 8, lo = 0, len = DLEN;
    char path[512], dir[600];
    if (region_static)
        dslab(np, me, &lo, &len);
    else if (dsid != me)
        return 0;
    if (len == 0)
        return 0;
    dpath(path, sizeof path, root, id, me);
    snprintf(dir, sizeof dir, "mkdir -p \"$(dirname '%s')\"", path);
    if (system(dir) != 0)
        return -1;
    FILE *f = fopen(path, "ab");
    if (f == NULL || fwrite("other bytes first", 1, 17, f) != 17) {
        if (f)
            fclose(f);
        return -1;
    }
    long off = ftell(f);
    for (uint64_t k = lo; k < lo + len; k++) {
        uint64_t v = dval(id, k, unit);
        uint32_t v4 = (uint32_t)v;
        if (fwrite(unit == 4 ? (void *)&v4 : (void *)&v, unit, 1, f) != 1) {
            fclose(f);
            return -1;
        }
    }
    if (fclose(f) != 0)
        return -1;
    struct ckpt_region g;
    memset(&g, 0, sizeof g);
    g.obj_id = id;
    g.ndim = 1;
    g.start[0] = lo;
    g.count[0] = len;
    g.unit_size = unit;
    g.data_size = len * unit;
    g.storage_location = path;
    g.offset = (uint64_t)off;
    g.cache_location = "";
    return ckpt_hook_data_region_put(h, &g);
}

static int failures;
#define CHECK(c, ...)                                                           \
    do {                                                                        \
        if (!(c)) {                                                             \
            printf("FAIL: rank %d: ", me);                                      \
            printf(__VA_ARGS__);                                                \
            printf("\n");                                                       \
            failures++;                                                         \
        }                                                                       \
    } while (0)

static int do_write(const char *root)
{
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    ckpt_hooks *h;
    uint64_t ids[K], cid;
    char name[64], cname[64];
    o.store_root = root;
    o.rank = me;
    o.nranks = np;
    if (ckpt_hooks_open(&h, &o) != 0) {
        printf("FAIL: rank %d: open: %s\n", me, ckpt_errmsg());
        return 1;
    }
    snprintf(cname, sizeof cname, "ec%d", me);
    int rc = ckpt_hook_new_id(&cid, h);
    struct ckpt_cont c = {cid, cname, ""};
    if (rc == 0)
        rc = ckpt_hook_cont_create(h, &c);
    struct ckpt_kvtag tc = {"tc", 1, 3, "cv"};
    if (rc == 0)
        rc = ckpt_hook_kvtag_put(h, cid, &tc);
    for (int i = 0; rc == 0 && i < K; i++) {
        struct ckpt_obj ob;
        memset(&ob, 0, sizeof ob);
        snprintf(name, sizeof name, "e%d_%d", me, i);
        if ((rc = ckpt_hook_new_id(&ids[i], h)) != 0)
            break;
        ob.obj_id = ids[i];
        ob.cont_id = cid;
        ob.obj_name = name;
        ob.app_name = "app";
        ob.data_location = "";
        ob.tags = "";
        ob.time_step = i % 3;
        ob.data_server_id = (uint32_t)(i % np);
        ob.ndim = 1;
        ob.dims[0] = (uint64_t)i + 1;
        if (i % 4 < 2) { /* region data: 0 region-static, 1 object-static */
            ob.region_partition = i % 4 == 0 ? 1 : 0;
            ob.dims[0] = DLEN;
        }
        struct ckpt_kvtag ta = {"ta", 1, (uint32_t)strlen(name) + 1, name};
        struct ckpt_kvtag tb = {"tb", 2, 8, &ids[i]};
        if ((rc = ckpt_hook_obj_create(h, &ob)) == 0 && (rc = ckpt_hook_kvtag_put(h, ids[i], &ta)) == 0)
            rc = ckpt_hook_kvtag_put(h, ids[i], &tb);
        if (rc == 0 && i % 4 < 2 && put_data(h, root, ids[i], i % 4 == 0, (int)ob.data_server_id) != 0) {
            printf("FAIL: rank %d: region data of %s: %s\n", me, name, ckpt_errmsg());
            rc = -1;
        }
    }
    if (rc == 0)
        rc = ckpt_hook_cont_add_objs(h, cid, ids, K);
    if (rc != 0) {
        printf("FAIL: rank %d: write: %s\n", me, ckpt_errmsg());
        ckpt_hooks_discard(h);
        return 1;
    }
    if (ckpt_hooks_close(h) != 0) {
        printf("FAIL: rank %d: close: %s\n", me, ckpt_errmsg());
        return 1;
    }
    return 0;
}

struct ctx {
    ckpt_hooks_read *r;
    int n_old;
    uint64_t objs, conts, obj_aliases, cont_aliases;
    uint64_t *alias_to;  /* [np]: aliases this rank's records give each rank */
    uint64_t *max_seq;   /* [n_old + np]: 1 + the highest restored seq per id range (0: none) */
    int tags;
};

static int count_tag(uint64_t owner, const struct ckpt_kvtag *t, void *p)
{
    (void)owner, (void)t;
    ((struct ctx *)p)->tags++;
    return 0;
}

static int count_member(uint64_t cont, uint64_t obj, void *p)
{
    (void)cont, (void)obj;
    ((struct ctx *)p)->tags++;
    return 0;
}

static void note_id(struct ctx *c, uint64_t id)
{
    uint64_t range = id / CKPT_ID_BASE, seq = id % CKPT_ID_BASE + 1;
    if (range >= 1 && range <= (uint64_t)(c->n_old + np) && seq > c->max_seq[range - 1])
        c->max_seq[range - 1] = seq;
}

static int obj_cb(uint64_t id, void *p)
{
    struct ctx *c = p;
    struct ckpt_obj o;
    int rc = ckpt_hooks_get_obj(&o, c->r, id);
    CHECK(rc == 0, "object %" PRIu64 " does not read: %s", id, ckpt_errmsg());
    if (rc != 0)
        return 0;
    c->objs++;
    note_id(c, id);
    CHECK(ckpt_id_dir_rank(id, np) == me, "object %" PRIu64 " is not on its id home %d", id,
          ckpt_id_dir_rank(id, np));
    CHECK(o.data_server_id < (uint32_t)np, "object %" PRIu64 " has data server %u of %d", id,
          o.data_server_id, np);
    c->tags = 0;
    ckpt_hooks_foreach_kvtag(c->r, id, count_tag, c);
    CHECK(c->tags == 2, "object %" PRIu64 " has %d kvtags, expected 2", id, c->tags);
    int nh = ckpt_home_obj(o.obj_name, o.time_step, np);
    if (nh != me)
        c->alias_to[nh]++;
    return 0;
}

static int cont_cb(uint64_t id, void *p)
{
    struct ctx *c = p;
    struct ckpt_cont ct;
    int rc = ckpt_hooks_get_cont(&ct, c->r, id);
    CHECK(rc == 0, "container %" PRIu64 " does not read", id);
    if (rc != 0)
        return 0;
    c->conts++;
    note_id(c, id);
    CHECK(ckpt_id_dir_rank(id, np) == me, "container %" PRIu64 " is not on its id home", id);
    c->tags = 0;
    ckpt_hooks_foreach_kvtag(c->r, id, count_tag, c);
    CHECK(c->tags == 1, "container %" PRIu64 " has %d kvtags, expected 1", id, c->tags);
    c->tags = 0;
    ckpt_hooks_foreach_member(c->r, id, count_member, c);
    CHECK(c->tags == K, "container %" PRIu64 " has %d members, expected %d", id, c->tags, K);
    int nh = ckpt_home_cont(ct.cont_name, np);
    if (nh != me)
        c->alias_to[nh]++;
    return 0;
}

static int obj_alias_cb(const struct ckpt_obj *o, void *p)
{
    struct ctx *c = p;
    c->obj_aliases++;
    CHECK(ckpt_home_obj(o->obj_name, o->time_step, np) == me && ckpt_id_dir_rank(o->obj_id, np) != me,
          "alias of object %" PRIu64 " [%s] on a rank that is not its name home or is its id home",
          o->obj_id, o->obj_name);
    CHECK(o->data_server_id < (uint32_t)np, "alias of object %" PRIu64 ": data server %u", o->obj_id,
          o->data_server_id);
    return 0;
}

static int cont_alias_cb(const struct ckpt_cont *ct, void *p)
{
    struct ctx *c = p;
    c->cont_aliases++;
    CHECK(ckpt_home_cont(ct->cont_name, np) == me && ckpt_id_dir_rank(ct->cont_id, np) != me,
          "alias of container %" PRIu64 " on the wrong rank", ct->cont_id);
    return 0;
}

/* one data entry of this rank (payload: struct dctx) */
struct dctx {
    uint64_t elems[2];      /* elements held: region-static, object-static */
    const char *root;
};

static int data_cb(const struct ckpt_region *g, void *p)
{
    struct dctx *d = p;
    char want[512];
    int rs = g->unit_size == 4;
    uint64_t lo = 0, len = DLEN;
    CHECK(g->ndim == 1 && (g->unit_size == 4 || g->unit_size == 8) && g->data_size == g->count[0] * g->unit_size,
          "data region of %" PRIu64 ": %u dimensions, unit %" PRIu64 ", %" PRIu64 " bytes", g->obj_id,
          g->ndim, g->unit_size, g->data_size);
    if (rs)
        dslab(np, me, &lo, &len);
    else /* object-static: whole, on its data server */
        CHECK(g->start[0] == 0 && g->count[0] == DLEN, "object-static data of %" PRIu64 " in part",
              g->obj_id);
    CHECK(g->start[0] >= lo && g->start[0] + g->count[0] <= lo + len,
          "data region [%" PRIu64 ", +%" PRIu64 ") of %" PRIu64 " outside slab %d of %d", g->start[0],
          g->count[0], g->obj_id, me, np);
    dpath(want, sizeof want, d->root, g->obj_id, me);
    CHECK(strcmp(want, g->storage_location) == 0, "data region of %" PRIu64 " in %s, not this rank's file",
          g->obj_id, g->storage_location);
    FILE *f = fopen(g->storage_location, "rb");
    CHECK(f != NULL, "%s: cannot open", g->storage_location);
    if (f == NULL)
        return 0;
    int same = fseek(f, (long)g->offset, SEEK_SET) == 0;
    for (uint64_t k = 0; same && k < g->count[0]; k++) {
        uint64_t v = 0;
        uint32_t v4 = 0;
        same = fread(rs ? (void *)&v4 : (void *)&v, g->unit_size, 1, f) == 1 &&
               (rs ? (uint64_t)v4 : v) == dval(g->obj_id, g->start[0] + k, g->unit_size);
    }
    fclose(f);
    CHECK(same, "data region [%" PRIu64 ", +%" PRIu64 ") of %" PRIu64 ": other bytes at %" PRIu64 " in %s",
          g->start[0], g->count[0], g->obj_id, g->offset, g->storage_location);
    d->elems[rs ? 0 : 1] += g->count[0];
    return 0;
}

static int do_check(const char *root, int n_old)
{
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    struct ckpt_rehome_stats st;
    ckpt_hooks *h;
    struct ctx c;
    memset(&c, 0, sizeof c);
    o.store_root = root;
    o.rank = me;
    o.nranks = np;
    o.rehome_by_id = 1;
    if (ckpt_hooks_restart_elastic(&h, &o, MPI_COMM_WORLD, &st) != 0) {
        printf("FAIL: rank %d: restart: %s\n", me, ckpt_errmsg());
        return 1;
    }
    if (me == 0)
        printf("restart: %d -> %d ranks, %" PRIu64 " records, %" PRIu64 " moved\n", st.old_nranks,
               st.new_nranks, st.records, st.moved);
    c.n_old = n_old;
    c.alias_to = calloc((size_t)np, sizeof *c.alias_to);
    c.max_seq = calloc((size_t)(n_old + np), sizeof *c.max_seq);
    uint64_t *alias_in = calloc((size_t)np, sizeof *alias_in);
    if (!c.alias_to || !c.max_seq || !alias_in || ckpt_hooks_read_begin(&c.r, h) != 0) {
        printf("FAIL: rank %d: out of memory or read_begin\n", me);
        return 1;
    }
    int rc = ckpt_hooks_foreach_id(c.r, 0, obj_cb, &c);
    if (rc == 0)
        rc = ckpt_hooks_foreach_id(c.r, 1, cont_cb, &c);
    if (rc == 0)
        rc = ckpt_hooks_foreach_obj_alias(c.r, NULL, 0, obj_alias_cb, &c);
    if (rc == 0)
        rc = ckpt_hooks_foreach_cont_alias(c.r, NULL, cont_alias_cb, &c);
    CHECK(rc == 0, "walk: %s", ckpt_errmsg());
    /* one name alias per alias entry a record asks for: by name too */
    char name[64];
    snprintf(name, sizeof name, "e%d_%d", n_old - 1, K - 1);
    uint64_t by_name = 0;
    struct ctx one;
    memset(&one, 0, sizeof one);
    ckpt_hooks_foreach_obj_alias(c.r, name, (K - 1) % 3, obj_alias_cb, &one);
    by_name = one.obj_aliases;
    struct dctx dc;
    memset(&dc, 0, sizeof dc);
    dc.root = root;
    rc = ckpt_hooks_foreach_data_region(c.r, data_cb, &dc);
    CHECK(rc == 0, "data regions: %s", ckpt_errmsg());
    ckpt_hooks_read_end(c.r);
    MPI_Allreduce(MPI_IN_PLACE, dc.elems, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    /* as written: slab r of every region-static object of rank r (the
     * slabs of all ranks make DLEN elements per rank's objects); the
     * object-static objects of rank r whose data server is r */
    uint64_t want_rs = (uint64_t)(K / 4) * DLEN, want_os = 0;
    for (int r = 0; r < n_old; r++)
        for (int i = 1; i < K; i += 4)
            want_os += i % n_old == r ? DLEN : 0;
    CHECK(dc.elems[0] == want_rs && dc.elems[1] == want_os,
          "%" PRIu64 " region-static and %" PRIu64 " object-static elements held in all, expected %" PRIu64
          " and %" PRIu64, dc.elems[0], dc.elems[1], want_rs, want_os);

    uint64_t mine[3] = {c.objs, c.conts, c.obj_aliases + c.cont_aliases}, all[3], named, want_named;
    MPI_Allreduce(mine, all, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(c.alias_to, alias_in, np, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK(all[0] == (uint64_t)n_old * K && all[1] == (uint64_t)n_old,
          "%" PRIu64 " objects and %" PRIu64 " containers in all, expected %d and %d", all[0], all[1],
          n_old * K, n_old);
    CHECK(alias_in[me] == c.obj_aliases + c.cont_aliases,
          "%" PRIu64 " aliases here, the records ask for %" PRIu64, c.obj_aliases + c.cont_aliases,
          alias_in[me]);
    /* the last object's alias is found by its name on exactly its name home */
    MPI_Allreduce(&by_name, &named, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    want_named = 0;
    if (me == 0) {
        /* its id home is that of the last old rank's range */
        int idh = (n_old - 1) % np, nh = ckpt_home_obj(name, (K - 1) % 3, np);
        want_named = idh != nh;
        CHECK(named == want_named, "alias of %s found %" PRIu64 " times by name, expected %" PRIu64, name,
              named, want_named);
    }
    /* new ids: above every restored id of this rank's range */
    MPI_Allreduce(MPI_IN_PLACE, c.max_seq, n_old + np, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 0; i < 100; i++) {
        uint64_t id = 0;
        rc = ckpt_hook_new_id(&id, h);
        CHECK(rc == 0 && id / CKPT_ID_BASE == (uint64_t)me + 1 &&
                  id % CKPT_ID_BASE >= c.max_seq[me],
              "new id %" PRIu64 " is not above the restored ids of range %d (next free %" PRIu64 ")", id,
              me + 1, c.max_seq[me]);
    }
    if (ckpt_hooks_close(h) != 0) {
        printf("FAIL: rank %d: close: %s\n", me, ckpt_errmsg());
        failures++;
    }
    if (me == 0)
        printf("check: %" PRIu64 " objects, %" PRIu64 " containers, %" PRIu64 " aliases on %d ranks\n",
               all[0], all[1], all[2], np);
    free(c.alias_to);
    free(c.max_seq);
    free(alias_in);
    return 0;
}

int main(int argc, char **argv)
{
    int rc = 2, any;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc == 3 && strcmp(argv[1], "write") == 0)
        rc = do_write(argv[2]);
    else if (argc == 4 && strcmp(argv[1], "check") == 0 && atoi(argv[3]) > 0)
        rc = do_check(argv[2], atoi(argv[3]));
    else if (me == 0)
        fprintf(stderr, "usage: elastic_by_id write ROOT | check ROOT OLD_NRANKS\n");
    if (rc == 0 && failures)
        rc = 1;
    MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any;
}
