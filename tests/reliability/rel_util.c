/*
 * rel_util.c - see rel_util.h.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include "ckpt_fs.h"
#include "rel_util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <lmdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bulki.h"

static int why_set(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int why_set(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    if (why && n) {
        va_start(ap, fmt);
        vsnprintf(why, n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ------------------------------------------------------------------ */
/* the data set                                                        */
/* ------------------------------------------------------------------ */

void rel_obj_name(char *buf, size_t n, int rank, long i)
{
    snprintf(buf, n, "rel-obj-%d-%06ld", rank, i);
}

void rel_obj_loc(char *buf, size_t n, int rank, long i)
{
    snprintf(buf, n, "REL-LOC-%d-%06ld", rank, i);
}

void rel_tag_val(char *buf, size_t n, int rank, long i)
{
    snprintf(buf, n, "rel-val-%d-%06ld", rank, i);
}

static void cont_name(char *buf, size_t n, int rank)
{
    snprintf(buf, n, "rel-cont-%d", rank);
}

/* A hook error from a failed commit (CKPT_E_NOSPACE, CKPT_E_IO) means the
 * mutation was staged anyway and commits later: go on, report it at the
 * end, as a server would. Anything else stops. */
#define STEP(call)                                                             \
    do {                                                                       \
        int rc_ = (call);                                                      \
        if (rc_ == CKPT_E_NOSPACE || rc_ == CKPT_E_IO) {                       \
            if (first_err == 0)                                                \
                first_err = rc_;                                               \
        } else if (rc_ != 0) {                                                 \
            return rc_;                                                        \
        }                                                                      \
    } while (0)

int rel_write_objs(ckpt_hooks *h, int rank, long first, long n, uint64_t *cont_id, uint64_t *ids)
{
    char name[64], loc[64], val[64], cname[64];
    int rc, first_err = 0;
    if (*cont_id == 0) {
        struct ckpt_cont c = {0, cname, ""};
        cont_name(cname, sizeof cname, rank);
        if ((rc = ckpt_hook_new_id(&c.cont_id, h)) != 0)
            return rc;
        STEP(ckpt_hook_cont_create(h, &c));
        *cont_id = c.cont_id;
    }
    for (long i = first; i < first + n; i++) {
        struct ckpt_obj o;
        struct ckpt_region g;
        struct ckpt_kvtag t;
        memset(&o, 0, sizeof o);
        memset(&g, 0, sizeof g);
        rel_obj_name(name, sizeof name, rank, i);
        rel_obj_loc(loc, sizeof loc, rank, i);
        rel_tag_val(val, sizeof val, rank, i);
        if ((rc = ckpt_hook_new_id(&o.obj_id, h)) != 0)
            return rc;
        o.cont_id = *cont_id;
        o.obj_name = name;
        o.app_name = "rel-app";
        o.data_location = loc;
        o.tags = "";
        o.user_id = (int32_t)i;
        o.data_type = 9;
        o.ndim = 1;
        o.dims[0] = (uint64_t)i + 1;
        STEP(ckpt_hook_obj_create(h, &o));
        if (ids)
            ids[i - first] = o.obj_id;
        t.name = REL_TAG;
        t.type = 16; /* PDC_STRING */
        t.size = (uint32_t)strlen(val) + 1;
        t.value = val;
        STEP(ckpt_hook_kvtag_put(h, o.obj_id, &t));
        g.obj_id = o.obj_id;
        g.ndim = 1;
        g.start[0] = (uint64_t)i;
        g.count[0] = 1;
        g.data_size = (uint64_t)i + 1;
        g.unit_size = 8;
        g.storage_location = "";
        g.cache_location = "";
        STEP(ckpt_hook_region_put(h, &g));
        STEP(ckpt_hook_cont_add_objs(h, *cont_id, &o.obj_id, 1));
    }
    return first_err;
}
#undef STEP

struct region_find {
    uint64_t start, size;
    int found, same;
};

static int region_cb(const struct ckpt_region *g, void *p)
{
    struct region_find *f = p;
    if (g->ndim != 1 || g->start[0] != f->start)
        return 0;
    f->found = 1;
    f->same = g->count[0] == 1 && g->data_size == f->size && g->unit_size == 8;
    return 1;
}

/* Presence of one mutation: 1 there and right, 0 absent, -1 wrong (why). */
static void census_note(struct rel_census *c, long *idx, int st, int rc, long i, const char *what)
{
    long k = (*idx)++;
    if (st > 0) {
        if (k == c->prefix)
            c->prefix++;
        else
            c->gap = 1;
    } else if (st < 0 && c->first_bad < 0) {
        c->first_bad = i;
        c->first_bad_rc = rc;
        snprintf(c->why, sizeof c->why, "object %ld: %s: %s (%s)", i, what, ckpt_strerror(rc),
                 ckpt_errmsg());
    }
}

int rel_census(struct rel_census *c, ckpt_hooks *h, int rank, long n)
{
    ckpt_hooks_read *r;
    char name[64], loc[64], val[64], cname[64];
    struct ckpt_cont cont;
    long idx = 0;
    int rc;
    memset(c, 0, sizeof *c);
    c->first_bad = -1;
    if ((rc = ckpt_hooks_read_begin(&r, h)) != 0) {
        snprintf(c->why, sizeof c->why, "read_begin: %s", ckpt_errmsg());
        return rc;
    }
    cont_name(cname, sizeof cname, rank);
    rc = ckpt_hooks_get_cont_by_name(&cont, r, cname);
    census_note(c, &idx, rc == 0 ? 1 : rc == CKPT_E_NOTFOUND ? 0 : -1, rc, -1, "container");
    uint64_t cid = rc == 0 ? cont.cont_id : 0;
    for (long i = 0; i < n; i++) {
        struct ckpt_obj o;
        struct ckpt_kvtag t;
        int parts = 0, bad = 0, st;
        rel_obj_name(name, sizeof name, rank, i);
        rel_obj_loc(loc, sizeof loc, rank, i);
        rel_tag_val(val, sizeof val, rank, i);
        rc = ckpt_hooks_get_obj_by_name(&o, r, name, 0);
        st = rc == CKPT_E_NOTFOUND ? 0 : rc ? -1 : 1;
        if (st > 0 && (strcmp(o.data_location, loc) != 0 || o.user_id != (int32_t)i ||
                       o.ndim != 1 || o.dims[0] != (uint64_t)i + 1 || o.cont_id != cid)) {
            st = -1;
            rc = CKPT_E_RECORD;
        }
        census_note(c, &idx, st, rc, i, "object record");
        parts += st > 0;
        bad |= st < 0;
        if (st <= 0) {
            /* no id to look the rest up by: count them as absent */
            idx += 3;
            if (st == 0)
                c->missing++;
            else
                c->bad++;
            continue;
        }
        rc = ckpt_hooks_get_kvtag(&t, r, o.obj_id, REL_TAG);
        st = rc == CKPT_E_NOTFOUND ? 0 : rc ? -1 : 1;
        if (st > 0 && (t.size != strlen(val) + 1 || memcmp(t.value, val, t.size) != 0)) {
            st = -1;
            rc = CKPT_E_RECORD;
        }
        census_note(c, &idx, st, rc, i, "kvtag");
        parts += st > 0;
        bad |= st < 0;
        struct region_find f = {(uint64_t)i, (uint64_t)i + 1, 0, 0};
        rc = ckpt_hooks_foreach_region(r, o.obj_id, region_cb, &f);
        st = rc < 0 ? -1 : !f.found ? 0 : f.same ? 1 : -1;
        if (st < 0 && rc >= 0)
            rc = CKPT_E_RECORD;
        census_note(c, &idx, st, rc, i, "region");
        parts += st > 0;
        bad |= st < 0;
        uint8_t k[16];
        ckpt_val v;
        ckpt_rtxn *tx;
        ckpt_key_u64(k, cid);
        ckpt_key_u64(k + 8, o.obj_id);
        if ((rc = ckpt_rtxn_begin(&tx, ckpt_hooks_store(h))) == 0) {
            rc = ckpt_get_raw(&v, tx, CKPT_DB_CONT_OBJ, k, 16);
            ckpt_rtxn_end(tx);
        }
        st = rc == CKPT_E_NOTFOUND ? 0 : rc ? -1 : 1;
        census_note(c, &idx, st, rc, i, "membership");
        parts += st > 0;
        bad |= st < 0;
        if (bad)
            c->bad++;
        else if (parts == 4)
            c->objs++;
    }
    ckpt_hooks_read_end(r);
    return 0;
}

/* ------------------------------------------------------------------ */
/* damage                                                              */
/* ------------------------------------------------------------------ */

long rel_file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

int rel_find_all(const char *path, const void *needle, size_t nlen, long *offs, int max)
{
    FILE *f = fopen(path, "rb");
    long size = rel_file_size(path);
    int found = 0;
    if (f == NULL || size < 0) {
        if (f)
            fclose(f);
        return -1;
    }
    char *buf = malloc((size_t)size + 1);
    if (buf == NULL || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        fclose(f);
        return -1;
    }
    fclose(f);
    for (long at = 0; found < max && at + (long)nlen <= size; at++) {
        if (memcmp(buf + at, needle, nlen) == 0)
            offs[found++] = at;
    }
    free(buf);
    return found;
}

int rel_flip_bit(const char *path, long off, int bit)
{
    unsigned char b;
    int fd = open(path, O_RDWR);
    if (fd < 0)
        return -1;
    int ok = pread(fd, &b, 1, off) == 1;
    b ^= (unsigned char)(1u << bit);
    ok = ok && pwrite(fd, &b, 1, off) == 1 && fsync(fd) == 0;
    close(fd);
    return ok ? 0 : -1;
}

long rel_damage_page(const char *root, int rank, int mode, uint64_t seed, char *why, size_t n)
{
    char path[4200];
    unsigned char page[REL_PAGE];
    uint64_t x = seed;
    snprintf(path, sizeof path, "%s/rank-%d/data.mdb", root, rank);
    long size = rel_file_size(path);
    if (size < REL_PAGE) {
        why_set(why, n, "%s: %ld bytes, not a page", path, size);
        return -1;
    }
    long pg = (long)(tu_rand(&x) % (uint64_t)(size / REL_PAGE));
    int fd = open(path, O_RDWR);
    if (fd < 0 || pread(fd, page, sizeof page, pg * REL_PAGE) != (ssize_t)sizeof page) {
        why_set(why, n, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (mode == REL_DAMAGE_GARBAGE) {
        for (size_t i = 0; i < sizeof page; i += 8) {
            uint64_t r = tu_rand(&x);
            memcpy(page + i, &r, 8);
        }
    } else {
        for (int i = 0; i < 3; i++) {
            uint64_t r = tu_rand(&x);
            page[r % 16] ^= (unsigned char)(1u << ((r >> 8) % 8));
        }
    }
    int ok = pwrite(fd, page, sizeof page, pg * REL_PAGE) == (ssize_t)sizeof page;
    close(fd);
    if (!ok) {
        why_set(why, n, "%s: writing page %ld: %s", path, pg, strerror(errno));
        return -1;
    }
    return pg;
}

int rel_flip_after(const char *root, int rank, const char *s, char *why, size_t n)
{
    char path[4200];
    long offs[64];
    snprintf(path, sizeof path, "%s/rank-%d/data.mdb", root, rank);
    /* the string with its terminating NUL, so "x-000001" never matches
     * inside "x-0000010" */
    int k = rel_find_all(path, s, strlen(s) + 1, offs, 64);
    if (k <= 0)
        return k < 0 ? why_set(why, n, "%s: cannot read", path) : 0;
    for (int j = 0; j < k; j++) {
        if (rel_flip_bit(path, offs[j] + (long)strlen(s), 0) != 0)
            return why_set(why, n, "%s: cannot write at byte %ld", path, offs[j]);
    }
    return k;
}

static int env_open(MDB_env **env, const char *dir, unsigned flags, char *why, size_t n)
{
    int rc;
    ckpt_store_wait_closed(); /* a store closed here may still be unmapping it */
    if ((rc = mdb_env_create(env)) != 0)
        return why_set(why, n, "mdb_env_create: %s", mdb_strerror(rc));
    mdb_env_set_maxdbs(*env, 16);
    mdb_env_set_mapsize(*env, (size_t)16 << 20);
    if ((rc = mdb_env_open(*env, dir, flags, 0600)) != 0) {
        mdb_env_close(*env);
        return why_set(why, n, "mdb_env_open(%s): %s", dir, mdb_strerror(rc));
    }
    return 0;
}

static long page_of(const char *root, int rank, const char *db, const void *key, size_t klen,
                    const void *item, size_t ilen, char *why, size_t n)
{
    char dir[4200];
    MDB_env *env;
    MDB_txn *txn = NULL;
    MDB_dbi dbi;
    MDB_cursor *cur = NULL;
    MDB_val k = {klen, (void *)key}, v, kb = k, ib = {ilen, (void *)item};
    long pg = -1;
    int rc;
    snprintf(dir, sizeof dir, "%s/rank-%d", root, rank);
    if (env_open(&env, dir, MDB_RDONLY, why, n) != 0)
        return -1;
    if ((rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn)) != 0 ||
        (rc = mdb_dbi_open(txn, db, 0, &dbi)) != 0 || (rc = mdb_cursor_open(txn, dbi, &cur)) != 0 ||
        (rc = mdb_cursor_get(cur, &k, &v, item ? MDB_SET_KEY : MDB_SET_RANGE)) != 0 ||
        (item && ((rc = mdb_cursor_get(cur, &kb, &ib, MDB_GET_BOTH)) != 0 ||
                  (rc = mdb_cursor_get(cur, &kb, &ib, MDB_GET_CURRENT)) != 0))) {
        why_set(why, n, "%s: database %s: %s", dir, db, mdb_strerror(rc));
    } else {
        /* the page holding the key (or item) starts with its own number
         * (MDB_page); an item on its key's page is in a sub-page */
        uintptr_t kp = (uintptr_t)k.mv_data & ~(uintptr_t)(REL_PAGE - 1);
        uintptr_t at = item ? (uintptr_t)ib.mv_data & ~(uintptr_t)(REL_PAGE - 1) : kp;
        uint64_t self;
        memcpy(&self, (const void *)at, 8);
        pg = item && at == kp ? 0 : (long)self;
    }
    if (cur != NULL)
        mdb_cursor_close(cur);
    if (txn != NULL)
        mdb_txn_abort(txn);
    mdb_env_close(env);
    return pg;
}

long rel_leaf_page(const char *root, int rank, const char *db, const void *key, size_t klen,
                   char *why, size_t n)
{
    return page_of(root, rank, db, key, klen, NULL, 0, why, n);
}

long rel_dup_page(const char *root, int rank, const char *db, const void *key, size_t klen,
                  const void *item, size_t ilen, char *why, size_t n)
{
    return page_of(root, rank, db, key, klen, item, ilen, why, n);
}

int rel_set_meta_version(const char *root, int rank, uint32_t version, char *why, size_t n)
{
    char dir[4200];
    uint8_t buf[256];
    size_t len = 0;
    const char *magic = CKPT_FORMAT_MAGIC, *future = "written by a newer pdc-ckpt";
    const bulki_pair pairs[] = {
        {BULKI_V_STRN("magic", 5), BULKI_V_STRN(magic, strlen(magic))},
        {BULKI_V_STRN("format_version", 14), BULKI_V_ITEM(BULKI_T_UINT32, &version)},
        {BULKI_V_STRN("a_field_of_the_future", 21), BULKI_V_STRN(future, strlen(future))},
    };
    const bulki_doc doc = {3, pairs};
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    int rc;
    if (bulki_encode_doc(&len, buf, sizeof buf, &doc) != 0)
        return why_set(why, n, "cannot encode the meta record");
    snprintf(dir, sizeof dir, "%s/rank-%d", root, rank);
    if (env_open(&env, dir, 0, why, n) != 0)
        return -1;
    MDB_val k = {4, "meta"}, v = {len, buf};
    if ((rc = mdb_txn_begin(env, NULL, 0, &txn)) != 0 || (rc = mdb_dbi_open(txn, "meta", 0, &dbi)) != 0 ||
        (rc = mdb_put(txn, dbi, &k, &v, 0)) != 0 || (rc = mdb_txn_commit(txn)) != 0) {
        mdb_env_close(env);
        return why_set(why, n, "%s: rewriting meta: %s", dir, mdb_strerror(rc));
    }
    mdb_env_close(env);
    return 0;
}

static int put_str(MDB_txn *txn, MDB_dbi dbi, const char *k, const char *v)
{
    MDB_val kk = {strlen(k), (void *)k}, vv = {strlen(v), (void *)v};
    return mdb_put(txn, dbi, &kk, &vv, 0);
}

/* ROOT/rank-RANK made afresh (anything there removed) and an LMDB
 * environment opened on it into *env; its path into dir. 0, or -1 with why. */
static int fresh_rank_env(MDB_env **env, char *dir, size_t dn, const char *root, int rank,
                          char *why, size_t n)
{
    snprintf(dir, dn, "%s/rank-%d", root, rank);
    tu_rmtree(dir);
    if (mkdir(root, 0700) != 0 && errno != EEXIST)
        return why_set(why, n, "mkdir %s: %s", root, strerror(errno));
    if (mkdir(dir, 0700) != 0)
        return why_set(why, n, "mkdir %s: %s", dir, strerror(errno));
    return env_open(env, dir, 0, why, n) != 0 ? -1 : 0;
}

int rel_make_foreign(const char *root, int rank, int meta_db, char *why, size_t n)
{
    char dir[4200];
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi users, sessions, meta;
    int rc;
    if (fresh_rank_env(&env, dir, sizeof dir, root, rank, why, n) != 0)
        return -1;
    if ((rc = mdb_txn_begin(env, NULL, 0, &txn)) == 0 &&
        (rc = mdb_dbi_open(txn, "users", MDB_CREATE, &users)) == 0 &&
        (rc = mdb_dbi_open(txn, "sessions", MDB_CREATE, &sessions)) == 0 &&
        (rc = put_str(txn, users, "alice", "{\"uid\": 1001}")) == 0 &&
        (rc = put_str(txn, users, "bob", "{\"uid\": 1002}")) == 0 &&
        (rc = put_str(txn, sessions, "s-1", "alice")) == 0) {
        if (meta_db && (rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &meta)) == 0)
            rc = put_str(txn, meta, "schema", "users-v3");
        if (rc == 0)
            rc = mdb_txn_commit(txn);
        else
            mdb_txn_abort(txn);
    }
    mdb_env_close(env);
    return rc ? why_set(why, n, "%s: %s", dir, mdb_strerror(rc)) : 0;
}

int rel_make_empty_env(const char *root, int rank, char *why, size_t n)
{
    char dir[4200];
    MDB_env *env;
    if (fresh_rank_env(&env, dir, sizeof dir, root, rank, why, n) != 0)
        return -1;
    mdb_env_close(env);
    return 0;
}

/* ------------------------------------------------------------------ */
/* processes and files                                                 */
/* ------------------------------------------------------------------ */

int rel_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

size_t rel_read_all(int fd, void *p, size_t n)
{
    char *c = p;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, c + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}

pid_t rel_fork_piped(struct rel_outcome *out, int p[2])
{
    memset(out, 0, sizeof *out);
    fflush(stdout);
    fflush(stderr);
    if (pipe(p) != 0) {
        out->crashed = 1;
        snprintf(out->msg, sizeof out->msg, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        out->crashed = 1;
        snprintf(out->msg, sizeof out->msg, "fork: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
    }
    return pid;
}

size_t rel_collect(struct rel_outcome *out, pid_t pid, int p[2], int *status)
{
    close(p[1]);
    size_t got = rel_read_all(p[0], out, sizeof *out);
    close(p[0]);
    *status = 0;
    while (waitpid(pid, status, 0) < 0 && errno == EINTR)
        ;
    return got;
}

void rel_in_child(struct rel_outcome *out, rel_fn fn, void *arg)
{
    int p[2], st = 0;
    pid_t pid = rel_fork_piped(out, p);
    if (pid < 0)
        return;
    if (pid == 0) {
        struct rel_outcome o;
        close(p[0]);
        memset(&o, 0, sizeof o);
        o.rc = fn(arg, &o);
        int ok = rel_write_all(p[1], &o, sizeof o) == 0;
        close(p[1]);
        /* exit, not _exit: sanitizer builds then check the child for leaks */
        exit(ok ? 0 : 3);
    }
    size_t got = rel_collect(out, pid, p, &st);
    if (WIFSIGNALED(st) || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || got != sizeof *out) {
        char msg[sizeof out->msg - 64];
        snprintf(msg, sizeof msg, "%.*s", (int)sizeof msg - 1, got == sizeof *out ? out->msg : "");
        out->crashed = 1;
        out->sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
        out->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        snprintf(out->msg, sizeof out->msg, "child %s %d (last message: %s)",
                 WIFSIGNALED(st) ? "killed by signal" : "exited with", WIFSIGNALED(st) ? out->sig
                 : out->status, msg);
    }
}

int rel_run(char *const argv[], char *out, size_t cap)
{
    return rel_run_as(-1, argv, out, cap);
}

int rel_run_va(long uid, char *out, size_t cap, const char *prog, va_list args)
{
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)prog;
    for (const char *a; n < 31 && (a = va_arg(args, const char *)) != NULL;)
        argv[n++] = (char *)a;
    argv[n] = NULL;
    return rel_run_as(uid, argv, out, cap);
}

int rel_run_as(long uid, char *const argv[], char *out, size_t cap)
{
    int p[2], st = 0;
    size_t got = 0;
    fflush(stdout);
    fflush(stderr);
    if (pipe(p) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0)
            dup2(nul, 0);
        dup2(p[1], 1);
        dup2(p[1], 2);
        close(p[0]);
        close(p[1]);
        if (uid >= 0 && (setgroups(0, NULL) != 0 || setgid((gid_t)uid) != 0 || setuid((uid_t)uid) != 0))
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    for (;;) {
        char sink[4096];
        ssize_t r = got + 1 < cap ? read(p[0], out + got, cap - 1 - got) : read(p[0], sink, sizeof sink);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        if (got + 1 < cap)
            got += (size_t)r;
    }
    out[got] = 0;
    close(p[0]);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int rel_copytree(const char *src, const char *dst)
{
    char buf[256];
    char *const argv[] = {"/bin/cp", "-a", (char *)src, (char *)dst, NULL};
    return rel_run(argv, buf, sizeof buf) == 0 ? 0 : -1;
}

int rel_info_ro(struct ckpt_store_info *info, const char *root)
{
    ckpt_store *st;
    int rc = ckpt_store_open_readonly(&st, root, 0);
    if (rc != 0)
        return rc;
    rc = ckpt_store_info(info, st);
    ckpt_store_close(st);
    return rc;
}

int rel_census_out(struct rel_outcome *out, struct rel_census *c, ckpt_hooks *h, int rank, long n)
{
    int rc = rel_census(c, h, rank, n);
    out->v[0] = c->objs;
    out->v[1] = c->missing;
    out->v[2] = c->bad;
    snprintf(out->msg, sizeof out->msg, "%s", c->why);
    return rc;
}

int rel_write_store(const char *root, int nranks, long n,
                    struct ckpt_hooks_opts (*opts_for)(const char *root, int rank), uint64_t *ids)
{
    for (int r = 0; r < nranks; r++) {
        struct ckpt_hooks_opts o = opts_for(root, r);
        ckpt_hooks *h;
        uint64_t cont = 0;
        if (ckpt_hooks_open(&h, &o) != 0 ||
            rel_write_objs(h, r, 0, n, &cont, ids ? ids + (size_t)r * (size_t)n : NULL) != 0 ||
            ckpt_hooks_close(h) != 0) {
            fprintf(stderr, "writing the store %s: %s\n", root, ckpt_errmsg());
            return -1;
        }
    }
    return 0;
}
