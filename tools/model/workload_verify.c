/*
 * workload_verify.c - ckpt-workload verify (workload_cli.h): every
 * mutation of the workload looked up record by record in this project's
 * store (after a re-homing: what is homed on this rank, and the id
 * directory's entries), then the entry count of every database; with
 * --after-crash, what is there must be a prefix of the stream.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "workload_cli.h"

/* Rank 0: what ROOT/rank-0's meta says (rank count now, and when first
 * written), broadcast to every rank. 0, or 1 after rank 0 said why. */
static int store_shape(const char *root, int *nranks, int *origin)
{
    int sh[3] = {0, 0, 0};
    if (wl_rank == 0) {
        ckpt_store *st;
        struct ckpt_store_info m;
        int rc = ckpt_store_open_readonly(&st, root, 0);
        if (rc == 0) {
            rc = ckpt_store_info(&m, st);
            ckpt_store_close(st);
        }
        if (rc)
            sh[0] = wl_fail("%s", ckpt_errmsg());
        else {
            sh[1] = m.nranks;
            sh[2] = m.origin_nranks;
        }
    }
    MPI_Bcast(sh, 3, MPI_INT, 0, MPI_COMM_WORLD);
    *nranks = sh[1];
    *origin = sh[2];
    return sh[0];
}

struct verify {
    ckpt_hooks *h;
    ckpt_hooks_read *r;
    int after_crash;
    int nranks;      /* ranks now: where records and id directory entries live */
    long index;      /* mutations seen */
    long prefix;     /* leading mutations present */
    long gap_at;     /* first missing mutation, -1 if none */
    long present[6]; /* per kind */
    char err[512];
};

static int str_same(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* 1 present and equal, 0 absent, -1 present but different (err set). */
static int check_obj(struct verify *v, const struct wl_mut *mu)
{
    struct ckpt_obj o, byname;
    const struct ckpt_obj *e = &mu->obj;
    int rc = ckpt_hooks_get_obj(&o, v->r, mu->id);
    if (rc == CKPT_E_NOTFOUND)
        return 0;
    if (rc) {
        snprintf(v->err, sizeof v->err, "object %s: %s", e->obj_name, ckpt_errmsg());
        return -1;
    }
    int same = o.cont_id == e->cont_id && str_same(o.obj_name, e->obj_name) &&
               o.time_step == e->time_step && o.user_id == e->user_id &&
               str_same(o.app_name, e->app_name) && o.data_type == e->data_type &&
               o.create_time == e->create_time && o.last_modified_time == e->last_modified_time &&
               str_same(o.data_location, e->data_location) && str_same(o.tags, e->tags) &&
               o.ndim == e->ndim;
    for (uint32_t d = 0; same && d < o.ndim; d++)
        same = o.dims[d] == e->dims[d];
    if (!same) {
        snprintf(v->err, sizeof v->err, "object %s (id %llu): stored fields differ", e->obj_name,
                 (unsigned long long)mu->id);
        return -1;
    }
    rc = ckpt_hooks_get_obj_by_name(&byname, v->r, e->obj_name, e->time_step);
    if (rc || byname.obj_id != mu->id) {
        snprintf(v->err, sizeof v->err, "object %s (ts %d): name lookup %s", e->obj_name,
                 e->time_step, rc ? ckpt_strerror(rc) : "finds another id");
        return -1;
    }
    return 1;
}

static int check_tag(struct verify *v, const struct wl_mut *mu)
{
    struct ckpt_kvtag t;
    int rc = ckpt_hooks_get_kvtag(&t, v->r, mu->owner, mu->tag.name);
    if (rc == CKPT_E_NOTFOUND)
        return 0;
    if (rc || t.type != mu->tag.type || t.size != mu->tag.size ||
        memcmp(t.value, mu->tag.value, t.size) != 0) {
        snprintf(v->err, sizeof v->err, "kvtag %s of %s %llu: %s", mu->tag.name,
                 mu->kind == WL_TAG ? "object" : "container", (unsigned long long)mu->owner,
                 rc ? ckpt_errmsg() : "stored value differs");
        return -1;
    }
    return 1;
}

struct region_find {
    const struct ckpt_region *want;
    int found, same;
};

static int region_cb(const struct ckpt_region *g, void *p)
{
    struct region_find *f = p;
    const struct ckpt_region *w = f->want;
    if (g->ndim != w->ndim || g->start[0] != w->start[0] || g->count[0] != w->count[0])
        return 0;
    f->found = 1;
    f->same = g->data_size == w->data_size && g->unit_size == w->unit_size &&
              g->offset == w->offset && g->data_loc_type == w->data_loc_type &&
              str_same(g->storage_location, w->storage_location) && g->has_hist == w->has_hist;
    if (f->same && g->has_hist) {
        f->same = g->hist.nbin == w->hist.nbin && g->hist.dtype == w->hist.dtype &&
                  g->hist.incr == w->hist.incr;
        for (int32_t b = 0; f->same && b < g->hist.nbin; b++)
            f->same = ckpt_hist_bin(&g->hist, (size_t)b) == ckpt_hist_bin(&w->hist, (size_t)b) &&
                      ckpt_hist_range(&g->hist, 2 * (size_t)b) ==
                          ckpt_hist_range(&w->hist, 2 * (size_t)b);
    }
    return 1;
}

static int check_region(struct verify *v, const struct wl_mut *mu)
{
    struct region_find f = {&mu->region, 0, 0};
    int rc = ckpt_hooks_foreach_region(v->r, mu->region.obj_id, region_cb, &f);
    if (rc < 0) {
        snprintf(v->err, sizeof v->err, "regions of object %ld: %s", mu->i, ckpt_errmsg());
        return -1;
    }
    if (!f.found)
        return 0;
    if (!f.same) {
        snprintf(v->err, sizeof v->err, "region of object obj%ld: stored fields differ", mu->i);
        return -1;
    }
    return 1;
}

static int check_member(struct verify *v, const struct wl_mut *mu)
{
    uint8_t k[16];
    ckpt_val val;
    ckpt_rtxn *tx;
    ckpt_key_u64(k, mu->owner);
    ckpt_key_u64(k + 8, mu->id);
    int rc = ckpt_rtxn_begin(&tx, ckpt_hooks_store(v->h));
    if (rc == 0) {
        rc = ckpt_get_raw(&val, tx, CKPT_DB_CONT_OBJ, k, 16);
        ckpt_rtxn_end(tx);
    }
    if (rc == CKPT_E_NOTFOUND)
        return 0;
    if (rc) {
        snprintf(v->err, sizeof v->err, "membership of obj%ld: %s", mu->i, ckpt_errmsg());
        return -1;
    }
    return 1;
}

static int check_cont(struct verify *v, const struct wl_mut *mu)
{
    struct ckpt_cont c;
    int rc = ckpt_hooks_get_cont_by_name(&c, v->r, mu->cont.cont_name);
    if (rc == CKPT_E_NOTFOUND)
        return 0;
    if (rc || c.cont_id != mu->id) {
        snprintf(v->err, sizeof v->err, "container %s: %s", mu->cont.cont_name,
                 rc ? ckpt_errmsg() : "has another id");
        return -1;
    }
    return 1;
}

static const char *kind_name(enum wl_kind k)
{
    static const char *const n[] = {"container", "container kvtag", "object", "kvtag", "region",
                                    "membership"};
    return n[k];
}

/* The id directory sends an id-based lookup to the record's home. */
static int check_id_home(struct verify *v, const struct wl_mut *mu)
{
    int home = -1, want = wl_home(mu, v->nranks);
    int rc = ckpt_hooks_id_home(&home, v->r, mu->id);
    if (rc || home != want) {
        snprintf(v->err, sizeof v->err, "id %llu (%s): the id directory on rank %d %s %d, expected "
                 "rank %d", (unsigned long long)mu->id, mu->kind == WL_OBJ ? "an object" : "a container",
                 wl_rank, rc ? "fails:" : "names rank", rc ? rc : home, want);
        return 1;
    }
    return 0;
}

static int verify_mut(const struct wl_mut *mu, void *arg);

/* After a re-homing: check what is homed here, and the directory entries
 * of ids whose directory rank this is. */
static int verify_homed(const struct wl_mut *mu, void *arg)
{
    struct verify *v = arg;
    if ((mu->kind == WL_OBJ || mu->kind == WL_CONT) &&
        ckpt_id_dir_rank(mu->id, v->nranks) == wl_rank && check_id_home(v, mu) != 0)
        return 1;
    return wl_home(mu, v->nranks) == wl_rank ? verify_mut(mu, arg) : 0;
}

static int verify_mut(const struct wl_mut *mu, void *arg)
{
    struct verify *v = arg;
    int st;
    switch (mu->kind) {
    case WL_CONT:
        st = check_cont(v, mu);
        break;
    case WL_CONT_TAG:
    case WL_TAG:
        st = check_tag(v, mu);
        break;
    case WL_OBJ:
        st = check_obj(v, mu);
        break;
    case WL_REGION:
        st = check_region(v, mu);
        break;
    default:
        st = check_member(v, mu);
        break;
    }
    long idx = v->index++;
    if (st < 0)
        return 1;
    if (st == 1) {
        v->present[mu->kind]++;
        if (v->gap_at >= 0) {
            snprintf(v->err, sizeof v->err, "mutation %ld (%s of obj%ld) is present after mutation "
                     "%ld is missing: not a committed prefix", idx, kind_name(mu->kind), mu->i,
                     v->gap_at);
            return 1;
        }
        v->prefix++;
        return 0;
    }
    if (!v->after_crash) {
        if (mu->kind == WL_CONT || mu->kind == WL_CONT_TAG)
            snprintf(v->err, sizeof v->err, "%s missing", kind_name(mu->kind));
        else
            snprintf(v->err, sizeof v->err, "%s of obj%ld missing", kind_name(mu->kind), mu->i);
        return 1;
    }
    if (v->gap_at < 0)
        v->gap_at = idx;
    return 0;
}

/* Entries per database must equal what the stream put there: nothing extra. */
static int check_counts(struct verify *v)
{
    static const struct {
        int db;
        int k1, k2;
    } want[] = {{CKPT_DB_CONT, WL_CONT, -1},
                {CKPT_DB_OBJ, WL_OBJ, -1},
                {CKPT_DB_KVTAG, WL_TAG, WL_CONT_TAG},
                {CKPT_DB_TAG_INDEX, WL_TAG, WL_CONT_TAG},
                {CKPT_DB_REGION, WL_REGION, -1},
                {CKPT_DB_CONT_OBJ, WL_MEMBER, -1},
                {CKPT_DB_OBJ_NAME, WL_OBJ, -1}};
    ckpt_rtxn *tx;
    int rc = ckpt_rtxn_begin(&tx, ckpt_hooks_store(v->h));
    if (rc) {
        snprintf(v->err, sizeof v->err, "%s", ckpt_errmsg());
        return 1;
    }
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        uint64_t n = 0;
        long exp = v->present[want[i].k1] + (want[i].k2 >= 0 ? v->present[want[i].k2] : 0);
        if ((rc = ckpt_db_stat(&n, NULL, tx, want[i].db)) != 0 || (long)n != exp) {
            snprintf(v->err, sizeof v->err, "database %s holds %llu entries, expected %ld",
                     ckpt_db_name(want[i].db), (unsigned long long)n, exp);
            ckpt_rtxn_end(tx);
            return 1;
        }
    }
    ckpt_rtxn_end(tx);
    return 0;
}

int wl_cmd_verify(struct wl_args *a, int quiet)
{
    struct verify v;
    int rc;
    memset(&v, 0, sizeof v);
    v.after_crash = a->after_crash;
    v.gap_at = -1;
    v.nranks = wl_size;
    int nranks, origin;
    /* the store says on how many ranks it is now, and was written */
    if (store_shape(a->root, &nranks, &origin) != 0)
        return 1;
    if (nranks != wl_size) {
        if (wl_rank == 0)
            wl_fail("%s holds a store of %d ranks and this job has %d: verify it on %d ranks "
                    "(mpiexec -n %d %s %s), or re-home it to %d ranks first (mpiexec -n %d %s "
                    "restart --store %s)", a->root, nranks, wl_size, nranks, nranks, wl_prog,
                    wl_cmdline, wl_size, wl_size, wl_prog, a->root);
        return 1;
    }
    if (a->from_ranks == 0) {
        a->from_ranks = origin;
        a->p.nranks = origin;
    }
    long total = wl_count(&a->p);
    if (a->after_crash && a->from_ranks != wl_size) {
        if (wl_rank == 0)
            wl_fail("--after-crash checks a store on the rank count that wrote it (%d), and this "
                    "job has %d: run mpiexec -n %d %s %s", a->from_ranks, wl_size, a->from_ranks,
                    wl_prog, wl_cmdline);
        return 1;
    }
    if ((rc = ckpt_hooks_open_readonly(&v.h, &a->hopts)) != 0)
        wl_fail("verify: %s", ckpt_errmsg());
    else if ((rc = ckpt_hooks_read_begin(&v.r, v.h)) != 0)
        wl_fail("verify: %s", ckpt_errmsg());
    if (rc == 0) {
        if (a->from_ranks == wl_size) {
            rc = wl_stream(&a->p, verify_mut, &v);
        } else {
            struct wl_params q = a->p;
            for (q.rank = 0; rc == 0 && q.rank < q.nranks; q.rank++)
                rc = wl_stream(&q, verify_homed, &v);
        }
        if (rc == 0)
            rc = check_counts(&v);
        if (rc)
            wl_fail("verify %s/rank-%d: %s", a->root, wl_rank, v.err[0] ? v.err : ckpt_strerror(rc));
    }
    ckpt_hooks_read_end(v.r);
    if (v.h)
        ckpt_hooks_close(v.h);
    if (rc == 0 && a->after_crash)
        printf("verify --after-crash: rank %d holds a committed prefix of %ld of its %ld mutations\n",
               wl_rank, v.prefix, total);
    long all = wl_sum_all(v.prefix);
    if (wl_any_failed(rc != 0))
        return 1;
    if (wl_rank == 0 && !a->after_crash) {
        if (quiet)
            printf("  verify   %ld mutations checked record by record: OK\n", all);
        else
            printf("verify: %d ranks, %ld mutations checked record by record: OK\n", wl_size, all);
    }
    return 0;
}
