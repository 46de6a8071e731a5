/*
 * method_common.c - the registry of benchmark methods, the write/restart
 * drivers ckpt-bench-workload dispatches to for every method but lmdb, and the
 * helpers the methods share (the key-value sink, files, an arena).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "methods.h"

static const struct bench_method *const methods[] = {
    &bench_method_fwrite, &bench_method_bulki, &bench_method_sqlite, &bench_method_rocksdb,
    &bench_method_lmdb_raw};
#define NMETHODS (sizeof methods / sizeof methods[0])

static const struct bench_method *find_method(const char *name)
{
    for (size_t i = 0; i < NMETHODS; i++)
        if (strcmp(methods[i]->name, name) == 0)
            return methods[i];
    return NULL;
}

/* ------------------------------------------------------------------ */
/* helpers                                                             */
/* ------------------------------------------------------------------ */

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int bench_mkdirs(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf)
        return ckpt_error(CKPT_E_NAMETOOLONG, "%s: path too long", path);
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != 0)
            continue;
        char c = buf[i];
        buf[i] = 0;
        if (mkdir(buf, 0700) != 0 && errno != EEXIST)
            return ckpt_error(CKPT_E_IO, "mkdir %s: %s", buf, strerror(errno));
        buf[i] = c;
    }
    return 0;
}

void bench_remove(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return;
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        char sub[4096];
        while (d && (e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            bench_remove(sub);
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

int bench_fsync_path(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return ckpt_error(CKPT_E_IO, "open %s for fsync: %s", path, strerror(errno));
    int rc = fsync(fd);
    int err = errno;
    close(fd);
    return rc ? ckpt_error(CKPT_E_IO, "fsync %s: %s", path, strerror(err)) : 0;
}

struct bench_chunk {
    struct bench_chunk *next;
    size_t used, cap;
    max_align_t data[];
};

void *bench_arena_alloc(struct bench_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    struct bench_chunk *c = a->head;
    if (c == NULL || c->cap - c->used < n) {
        size_t cap = n > ((size_t)4 << 20) ? n : ((size_t)4 << 20);
        if ((c = malloc(sizeof *c + cap)) == NULL)
            return NULL;
        c->next = a->head;
        c->used = 0;
        c->cap = cap;
        a->head = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += n;
    return p;
}

char *bench_arena_str(struct bench_arena *a, const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    char *d = bench_arena_alloc(a, n);
    if (d)
        memcpy(d, s ? s : "", n);
    return d;
}

void bench_arena_free(struct bench_arena *a)
{
    while (a->head) {
        struct bench_chunk *n = a->head->next;
        free(a->head);
        a->head = n;
    }
}

/* ------------------------------------------------------------------ */
/* the key-value sink (sqlite, rocksdb, lmdb-raw)                      */
/* ------------------------------------------------------------------ */

#define REC_MAX 4096

static int kv_mutation_done(struct bench_kv *kv)
{
    if (++kv->staged < BENCH_KV_BATCH)
        return 0;
    kv->staged = 0;
    return kv->ops->commit(kv->backend);
}

static int kv_new_id(void *ctx, uint64_t *id)
{
    struct bench_kv *kv = ctx;
    *id = ((uint64_t)kv->rank + 1) * 1000000000ull + kv->next_seq++;
    return 0;
}

/* Encode into buf (REC_MAX) or a heap buffer for a larger record. */
typedef int (*enc_fn)(uint8_t *, size_t, size_t *, const void *);

static int encode(enc_fn enc, const void *arg, uint8_t *buf, uint8_t **heap, size_t *len)
{
    int rc = enc(buf, REC_MAX, len, arg);
    *heap = NULL;
    if (rc == CKPT_E_NOSPACE && (rc = enc(NULL, 0, len, arg)) == 0) {
        if ((*heap = malloc(*len)) == NULL)
            return CKPT_E_NOMEM;
        rc = enc(*heap, *len, len, arg);
    }
    return rc ? ckpt_error(rc, "record does not encode") : 0;
}

static int e_obj(uint8_t *b, size_t c, size_t *l, const void *a) { return ckpt_rec_obj_encode(l, b, c, a); }
static int e_tag(uint8_t *b, size_t c, size_t *l, const void *a) { return ckpt_rec_kvtag_encode(l, b, c, a); }
static int e_cont(uint8_t *b, size_t c, size_t *l, const void *a) { return ckpt_rec_cont_encode(l, b, c, a); }
static int e_reg(uint8_t *b, size_t c, size_t *l, const void *a) { return ckpt_rec_region_encode(l, b, c, a); }

static int name_key(uint8_t *out, size_t *n, const char *name)
{
    size_t len = strlen(name);
    if (len > CKPT_NAME_MAX || (*n = ckpt_key_name(out, name, len)) == 0)
        return ckpt_error(CKPT_E_NAMETOOLONG, "name of %zu bytes not storable", len);
    return 0;
}

static int kv_obj_put(void *ctx, const struct ckpt_obj *o)
{
    struct bench_kv *kv = ctx;
    uint8_t rec[REC_MAX], *heap, id8[8], nk[CKPT_NAMEKEY_MAX + 4];
    size_t len, n;
    int rc;
    if ((rc = name_key(nk, &n, o->obj_name)) != 0 || (rc = encode(e_obj, o, rec, &heap, &len)) != 0)
        return rc;
    ckpt_key_u64(id8, o->obj_id);
    ckpt_key_i32(nk + n, o->time_step);
    rc = kv->ops->put(kv->backend, CKPT_DB_OBJ, id8, 8, heap ? heap : rec, len);
    if (rc == 0)
        rc = kv->ops->put(kv->backend, CKPT_DB_OBJ_NAME, nk, n + 4, id8, 8);
    free(heap);
    return rc ? rc : kv_mutation_done(kv);
}

static int kv_kvtag_put(void *ctx, uint64_t owner, const struct ckpt_kvtag *t)
{
    struct bench_kv *kv = ctx;
    uint8_t rec[REC_MAX], *heap, k[8 + CKPT_NAMEKEY_MAX], ik[CKPT_NAMEKEY_MAX + 8];
    size_t len, n;
    int rc;
    if ((rc = name_key(k + 8, &n, t->name)) != 0 || (rc = encode(e_tag, t, rec, &heap, &len)) != 0)
        return rc;
    ckpt_key_u64(k, owner);
    memcpy(ik, k + 8, n);
    ckpt_key_u64(ik + n, owner);
    rc = kv->ops->put(kv->backend, CKPT_DB_KVTAG, k, n + 8, heap ? heap : rec, len);
    if (rc == 0)
        rc = kv->ops->put(kv->backend, CKPT_DB_TAG_INDEX, ik, n + 8, "", 0);
    free(heap);
    return rc ? rc : kv_mutation_done(kv);
}

static int kv_cont_put(void *ctx, const struct ckpt_cont *c)
{
    struct bench_kv *kv = ctx;
    uint8_t rec[REC_MAX], *heap, id8[8], nk[CKPT_NAMEKEY_MAX];
    size_t len, n;
    int rc;
    if ((rc = name_key(nk, &n, c->cont_name)) != 0 || (rc = encode(e_cont, c, rec, &heap, &len)) != 0)
        return rc;
    ckpt_key_u64(id8, c->cont_id);
    rc = kv->ops->put(kv->backend, CKPT_DB_CONT, id8, 8, heap ? heap : rec, len);
    if (rc == 0)
        rc = kv->ops->put(kv->backend, CKPT_DB_CONT_NAME, nk, n, id8, 8);
    free(heap);
    return rc ? rc : kv_mutation_done(kv);
}

static int kv_cont_add(void *ctx, uint64_t cont, const uint64_t *ids, size_t n)
{
    struct bench_kv *kv = ctx;
    uint8_t k[16];
    int rc = 0;
    ckpt_key_u64(k, cont);
    for (size_t i = 0; i < n && rc == 0; i++) {
        ckpt_key_u64(k + 8, ids[i]);
        if ((rc = kv->ops->put(kv->backend, CKPT_DB_CONT_OBJ, k, 16, "", 0)) == 0)
            rc = kv_mutation_done(kv);
    }
    return rc;
}

static int kv_region_put(void *ctx, const struct ckpt_region *g)
{
    struct bench_kv *kv = ctx;
    uint8_t rec[REC_MAX], *heap, k[8 + CKPT_REGIONKEY_MAX];
    size_t len;
    int rc;
    if (g->ndim == 0 || g->ndim > CKPT_REGION_MAXDIM)
        return ckpt_error(CKPT_E_INVAL, "region needs 1..%u dimensions", CKPT_REGION_MAXDIM);
    if ((rc = encode(e_reg, g, rec, &heap, &len)) != 0)
        return rc;
    ckpt_key_u64(k, g->obj_id);
    size_t klen = 8 + ckpt_key_region(k + 8, g->ndim, g->start, g->count);
    rc = kv->ops->put(kv->backend, CKPT_DB_REGION, k, klen, heap ? heap : rec, len);
    free(heap);
    return rc ? rc : kv_mutation_done(kv);
}

void bench_kv_init(struct bench_kv *kv, const struct bench_kv_ops *ops, void *b, int rank,
                   struct model_sink *sink)
{
    kv->ops = ops;
    kv->backend = b;
    kv->rank = rank;
    /* The stream has no deletes: leaving them NULL makes the model skip
     * the sink for them. */
    memset(sink, 0, sizeof *sink);
    sink->ctx = kv;
    sink->new_id = kv_new_id;
    sink->obj_put = kv_obj_put;
    sink->kvtag_put = kv_kvtag_put;
    sink->cont_put = kv_cont_put;
    sink->cont_add = kv_cont_add;
    sink->region_put = kv_region_put;
}

int bench_kv_put_meta(struct bench_kv *kv, int nranks)
{
    uint8_t v[24];
    uint64_t seq = kv->next_seq;
    int32_t r = kv->rank, nr = nranks;
    memcpy(v, &r, 4);
    memcpy(v + 4, &nr, 4);
    memcpy(v + 8, &seq, 8);
    memset(v + 16, 0, 8);
    return kv->ops->put(kv->backend, CKPT_DB_META, "meta", 4, v, sizeof v);
}

const int bench_kv_rebuild_order[5] = {CKPT_DB_CONT, CKPT_DB_OBJ, CKPT_DB_KVTAG, CKPT_DB_CONT_OBJ,
                                       CKPT_DB_REGION};

int bench_kv_rebuild_entry(model_server *m, int db, const void *k, size_t klen, const void *v,
                           size_t vlen, struct ckpt_rebuild_stats *st)
{
    const struct ckpt_rebuild_cbs *cb = &model_rebuild_cbs;
    size_t off = 0;
    int rc;
    switch (db) {
    case CKPT_DB_CONT: {
        struct ckpt_cont c;
        if ((rc = ckpt_rec_cont_decode(&c, v, vlen, &off)) == 0 && (rc = cb->cont(&c, m)) == 0)
            st->conts++;
        break;
    }
    case CKPT_DB_OBJ: {
        struct ckpt_obj o;
        if ((rc = ckpt_rec_obj_decode(&o, v, vlen, &off)) == 0 && (rc = cb->obj(&o, m)) == 0)
            st->objs++;
        break;
    }
    case CKPT_DB_KVTAG: {
        struct ckpt_kvtag t;
        if (klen <= 8)
            return ckpt_error(CKPT_E_RECORD, "kvtag key of %zu bytes", klen);
        if ((rc = ckpt_rec_kvtag_decode_entry(&t, k, klen, v, vlen, &off)) == 0 &&
            (rc = cb->kvtag(ckpt_key_get_u64(k), &t, m)) == 0)
            st->kvtags++;
        break;
    }
    case CKPT_DB_CONT_OBJ:
        if (klen != 16)
            return ckpt_error(CKPT_E_RECORD, "membership key of %zu bytes", klen);
        if ((rc = cb->member(ckpt_key_get_u64(k), ckpt_key_get_u64((const uint8_t *)k + 8), m)) == 0)
            st->members++;
        break;
    case CKPT_DB_REGION: {
        struct ckpt_region g;
        if ((rc = ckpt_rec_region_decode(&g, v, vlen, &off)) == 0 && (rc = cb->region(&g, m)) == 0)
            st->regions++;
        break;
    }
    default:
        return 0;
    }
    if (rc == CKPT_E_RECORD)
        return ckpt_error(rc, "%s record does not decode (byte %zu)", ckpt_db_name(db), off);
    return rc;
}

/* ------------------------------------------------------------------ */
/* drivers                                                             */
/* ------------------------------------------------------------------ */

static int bench_write(const struct wl_method_cmd *c)
{
    const struct bench_method *me = find_method(c->method);
    struct model_sink sink;
    struct bench_close_times ct = {0, 0};
    model_server *m = NULL;
    void *ctx = NULL;
    char path[4200];
    struct stat sb;
    long muts = 0;
    int rc = 0;
    double t0, t1, t2;

    if (me == NULL)
        return wl_fail("unknown method \"%s\"", c->method);
    me->path(path, sizeof path, c->root, c->rank);
    if (stat(path, &sb) == 0) {
        if (c->force)
            bench_remove(path);
        else
            rc = wl_fail("%s: a store is already there; remove it or add --force", path);
    }
    if (wl_any_failed(rc != 0))
        return 1;
    memset(&sink, 0, sizeof sink);
    if ((rc = bench_mkdirs(c->root)) != 0 ||
        (rc = me->open(&ctx, c->root, c->rank, c->nranks, &sink)) != 0 ||
        (rc = model_create_sink(&m, c->rank, c->nranks, sink.ctx ? &sink : NULL)) != 0) {
        wl_fail("%s open: %s", me->name, ckpt_errmsg());
        if (ctx)
            me->discard(ctx);
        ctx = NULL;
    }
    if (wl_any_failed(rc != 0)) {
        if (ctx)
            me->discard(ctx);
        model_destroy(m);
        return 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if ((rc = wl_run_stream(&c->p, m, &muts)) != 0)
        wl_fail("workload: %s (%s)", ckpt_errmsg(), ckpt_strerror(rc));
    t1 = MPI_Wtime();
    if (rc == 0) {
        rc = me->close(ctx, m, &ct);
        if (rc)
            wl_fail("%s close: %s", me->name, ckpt_errmsg());
    } else {
        me->discard(ctx);
    }
    t2 = MPI_Wtime();
    model_destroy(m);
    /* close_s: the close as the method does it; close_fsync_s: plus an
     * fsync where the close itself does not sync (fwrite, bulki). */
    double wmax = wl_max_all(t1 - t0), cmax = wl_max_all(t2 - t1), fmax = wl_max_all(t2 - t1 + ct.fsync_s);
    long total = wl_sum_all(muts), rss = wl_peak_rss_kb();
    if (wl_any_failed(rc != 0))
        return 1;
    if (c->rank == 0) {
        printf("write (%s): %d ranks, %ld objects x %ld tags, %ld tagged, %ld mutations, store %s\n",
               me->name, c->nranks, c->p.objects, c->p.tags_per_object, c->p.tagged, total, c->root);
        printf("  workload %.6f s, close %.6f s, close with fsync %.6f s (max over ranks)\n", wmax,
               cmax, fmax);
        printf("result: phase=write ranks=%d mutations=%ld workload_s=%.9f close_s=%.9f "
               "close_fsync_s=%.9f peak_rss_kb=%ld method=%s\n",
               c->nranks, total, wmax, cmax, fmax, rss, me->name);
    }
    return 0;
}

static int bench_restart(const struct wl_method_cmd *c)
{
    const struct bench_method *me = find_method(c->method);
    struct ckpt_rebuild_stats st = {0, 0, 0, 0, 0};
    model_server *m = NULL, *expect = NULL;
    void *ctx = NULL;
    int rc = 0;
    double t0, t1;

    if (me == NULL)
        return wl_fail("unknown method \"%s\"", c->method);
    if (!c->rebuild && !me->has_map) {
        if (c->rank == 0)
            wl_fail("method %s has no map restart (it must read everything): use --rebuild", me->name);
        return 1;
    }
    if (c->rebuild && (rc = model_create_sink(&m, c->rank, c->nranks, NULL)) != 0)
        wl_fail("out of memory");
    if (wl_any_failed(rc != 0)) {
        model_destroy(m);
        return 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (c->rebuild)
        rc = me->rebuild(m, c->root, c->rank, c->nranks, &st);
    else
        rc = me->map(&ctx, c->root, c->rank, c->nranks);
    t1 = MPI_Wtime();
    if (rc)
        wl_fail("%s restart: %s", me->name, ckpt_errmsg());
    if (rc == 0 && c->rebuild && c->check) {
        char why[256];
        if ((rc = model_create_sink(&expect, c->rank, c->nranks, NULL)) == 0 &&
            (rc = wl_run_stream(&c->p, expect, NULL)) == 0 && !model_equal(expect, m, why, sizeof why))
            rc = wl_fail("rebuilt tables differ from the workload's: %s", why);
        else if (rc)
            wl_fail("building the expected tables: %s", ckpt_strerror(rc));
    }
    if (ctx)
        me->release(ctx);
    model_destroy(expect);
    model_destroy(m);
    double tmax = wl_max_all(t1 - t0);
    long objs = wl_sum_all((long)st.objs), tags = wl_sum_all((long)st.kvtags), rss = wl_peak_rss_kb();
    if (wl_any_failed(rc != 0))
        return 1;
    if (c->rank == 0) {
        const char *mode = c->rebuild ? "rebuild" : "map";
        printf("restart (%s, %s): %d ranks, %.6f s (max over ranks)", me->name, mode, c->nranks, tmax);
        if (c->rebuild)
            printf(", %ld objects and %ld kvtags rebuilt%s", objs, tags,
                   c->check ? ", tables equal to the workload's" : "");
        printf("\nresult: phase=restart_%s ranks=%d seconds=%.9f peak_rss_kb=%ld method=%s\n", mode,
               c->nranks, tmax, rss, me->name);
    }
    return 0;
}

static int is_bench_method(const char *name)
{
    return find_method(name) != NULL;
}

const struct wl_methods bench_methods = {"lmdb,fwrite,bulki,sqlite,rocksdb,lmdb-raw",
                                         is_bench_method, bench_write, bench_restart};
