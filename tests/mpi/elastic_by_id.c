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
 * Each failed check prints "FAIL: ..."; the exit status is 1 if any did.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "ckpt_hooks_mpi.h"

enum { K = 40 };

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

static int me, np;

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
        struct ckpt_kvtag ta = {"ta", 1, (uint32_t)strlen(name) + 1, name};
        struct ckpt_kvtag tb = {"tb", 2, 8, &ids[i]};
        if ((rc = ckpt_hook_obj_create(h, &ob)) == 0 && (rc = ckpt_hook_kvtag_put(h, ids[i], &ta)) == 0)
            rc = ckpt_hook_kvtag_put(h, ids[i], &tb);
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
    ckpt_hooks_read_end(c.r);

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
