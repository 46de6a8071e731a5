/*
 * common.c - the store root, errors, keys and the JSON forms of records,
 * shared by the subcommands of ckpt-inspect.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bulki_json.h"
#include "inspect.h"
#include "progress.h"

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

void verrp(const char *path, const char *fmt, va_list ap)
{
    ckpt_progress_clear();
    fprintf(stderr, PROG ": %s: ", path);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void errp(const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verrp(path, fmt, ap);
    va_end(ap);
}

const char *store_msg(int rc)
{
    const char *m = ckpt_errmsg();
    return m != NULL && m[0] != 0 ? m : ckpt_strerror(rc);
}

void store_msg_clear(void)
{
    ckpt_error(0, "%s", "");
}

void err_store(const char *path, int rc)
{
    const char *m = store_msg(rc);
    size_t pl = strlen(path);
    ckpt_progress_clear();
    /* the store's messages mostly start with the path they are about */
    if (strncmp(m, path, pl) == 0 && (m[pl] == '/' || m[pl] == ':'))
        fprintf(stderr, PROG ": %s\n", m);
    else
        fprintf(stderr, PROG ": %s: %s\n", path, m);
}

/* ------------------------------------------------------------------ */
/* Arguments                                                           */
/* ------------------------------------------------------------------ */

int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != 0)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int parse_i64(const char *s, int64_t *out)
{
    char *end;
    if (s == NULL || *s == 0)
        return -1;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != 0)
        return -1;
    *out = (int64_t)v;
    return 0;
}

int parse_i32(const char *s, int32_t *out)
{
    int64_t v;
    if (parse_i64(s, &v) != 0 || v < INT32_MIN || v > INT32_MAX)
        return -1;
    *out = (int32_t)v;
    return 0;
}

/* ------------------------------------------------------------------ */
/* The root and its ranks                                              */
/* ------------------------------------------------------------------ */

static int cmp_rank(const void *a, const void *b)
{
    const struct rank_ent *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int root_scan(struct inspect_root *r, const char *path, int allow_empty)
{
    DIR *d;
    struct dirent *de;
    size_t cap = 0;
    memset(r, 0, sizeof *r);
    r->path = path;
    if ((d = opendir(path)) == NULL) {
        errp(path, "%s", strerror(errno));
        return -1;
    }
    while ((de = readdir(d)) != NULL) {
        int rank = ckpt_rank_of_name(de->d_name);
        char p[PATH_MAX];
        struct stat sb;
        if (rank < 0)
            continue;
        if (snprintf(p, sizeof p, "%s/%s", path, de->d_name) >= (int)sizeof p || stat(p, &sb) != 0 ||
            !S_ISDIR(sb.st_mode))
            continue;
        if (r->n == cap) {
            size_t ncap = cap ? 2 * cap : 8;
            struct rank_ent *nr = realloc(r->ranks, ncap * sizeof *nr);
            if (nr == NULL) {
                closedir(d);
                errp(path, "%s", strerror(ENOMEM));
                return -1;
            }
            r->ranks = nr;
            cap = ncap;
        }
        memset(&r->ranks[r->n], 0, sizeof r->ranks[r->n]);
        r->ranks[r->n++].rank = rank;
    }
    closedir(d);
    if (r->n > 1)
        qsort(r->ranks, r->n, sizeof *r->ranks, cmp_rank);
    if (r->n == 0 && !allow_empty) {
        errp(path, "no store here (no rank-<N> directory)");
        return -1;
    }
    return 0;
}

struct rank_ent *root_find(struct inspect_root *r, int rank)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->ranks[i].rank == rank)
            return &r->ranks[i];
    return NULL;
}

/* Ranks open now, and how many may stay open (root_release). */
static size_t open_now;

static size_t open_budget(void)
{
    static size_t budget = (size_t)-1;
    struct rlimit rl;
    if (budget != (size_t)-1)
        return budget;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        budget = 256;
    else
        budget = rl.rlim_cur > 64 + 3 ? (size_t)(rl.rlim_cur - 64) / 3 : 0;
    if (budget > 4096)
        budget = 4096;
    return budget;
}

int root_open(struct inspect_root *r, struct rank_ent *e, int report)
{
    struct ckpt_store_opts o = CKPT_STORE_OPTS_INIT;
    int rc = CKPT_E_LMDB;
    if (e->tried)
        return e->open_rc;
    e->tried = 1;
    o.root = r->path;
    o.rank = e->rank;
    o.readonly = 1;
    o.create = 0;
    o.check_rank = 0;
    o.rec_keys = ckpt_rec_keys; /* the hooks' records: long-name lookups */
    /* A writer growing the map between LMDB's open and the first read
     * transaction makes that transaction fail (MDB_MAP_RESIZED): open
     * again, which maps the new size. */
    for (int tries = 0; tries < 4 && rc == CKPT_E_LMDB; tries++) {
        store_msg_clear();
        rc = ckpt_store_open(&e->st, &o);
    }
    e->open_rc = rc;
    if (rc == 0) {
        open_now++;
        /* tests: CKPT_INSPECT_FAULT=rank-N makes reading rank N fault as
         * a damaged memory map would (tests/inspect/test_inspect_damage.sh) */
        const char *f = getenv("CKPT_INSPECT_FAULT");
        char me[32];
        snprintf(me, sizeof me, "rank-%d", e->rank);
        if (f != NULL && strcmp(f, me) == 0)
            raise(SIGBUS);
    }
    if (rc != 0) {
        e->st = NULL;
        e->open_err = strdup(store_msg(rc));
        if (report)
            err_store(r->path, rc);
    }
    return rc;
}

static int guard_faulted;

/* The store's recovery mechanism (store/guard.c), which also catches
 * faults inside the store's own LMDB calls: those come back from the
 * library as CKPT_E_CORRUPT, so what reaches fn's guard here is a fault in
 * the tool's own reading (or the injected one above). */
int guard_run(void (*fn)(void *), void *arg)
{
    int sig;
    ckpt_fault_guard_install();
    if ((sig = ckpt_guard_run(fn, arg)) != 0)
        guard_faulted = 1;
    return sig;
}

void rank_fault(struct inspect_root *r, struct rank_ent *e, int sig)
{
    char msg[PATH_MAX + 200];
    snprintf(msg, sizeof msg, "%s/rank-%d/data.mdb: reading the store crashed with %s: the file is "
             "damaged (truncated or overwritten)", r->path, e->rank,
             sig == SIGBUS ? "SIGBUS" : sig == SIGSEGV ? "SIGSEGV" : sig == SIGABRT ? "an LMDB assertion" : "a signal");
    ckpt_progress_clear();
    fprintf(stderr, PROG ": %s\n", msg);
    free(e->open_err);
    e->open_err = strdup(msg);
    e->abandoned = 1;
}

int inspect_exit(int status)
{
    if (guard_faulted) {
        fflush(stdout);
        fflush(stderr);
        _exit(status);
    }
    return status;
}

int root_rehome_state(const char *path)
{
    char p[PATH_MAX];
    struct stat sb;
    snprintf(p, sizeof p, "%s/.rehome", path);
    if (stat(p, &sb) != 0)
        return 0;
    snprintf(p, sizeof p, "%s/.rehome/COMPLETE", path);
    return stat(p, &sb) == 0 ? 2 : 1;
}

void root_release(struct inspect_root *r, struct rank_ent *e)
{
    (void)r;
    if (e == NULL || e->st == NULL || e->abandoned || open_now <= open_budget())
        return;
    ckpt_store_close(e->st);
    e->st = NULL;
    e->tried = 0;
    open_now--;
}

struct stray_out {
    json_object *arr;
    const char *root;
};

static int stray_one(const char *name, const char *why, void *payload)
{
    struct stray_out *o = payload;
    if (o->arr != NULL) {
        json_object *e = json_object_new_object();
        json_object_object_add(e, "name", bulki_json_str(name));
        json_object_object_add(e, "why", bulki_json_str(why));
        json_object_array_add(o->arr, e);
    } else {
        printf("stray: %s/%s: %s\n", o->root, name, why);
    }
    return 0;
}

int root_strays(const struct inspect_root *r, int nranks, json_object *jr)
{
    struct stray_out o = {jr ? json_object_new_array() : NULL, r->path};
    int n = ckpt_root_strays(r->path, nranks, stray_one, &o);
    if (jr != NULL)
        json_object_object_add(jr, "stray", o.arr);
    else if (n > 0)
        printf("note: %d entr%s of %s belong%s to no rank of this store; a restart or re-homing "
               "refuses to run until %s removed\n", n, n == 1 ? "y" : "ies", r->path,
               n == 1 ? "s" : "", n == 1 ? "it is" : "they are");
    return n < 0 ? 0 : n;
}

void root_close(struct inspect_root *r)
{
    for (size_t i = r->n; i-- > 0;) {
        struct rank_ent *e = &r->ranks[i];
        /* a store whose reading faulted is left alone: its state is
         * unknown, and the process is about to exit */
        if (e->st != NULL && !e->abandoned) {
            ckpt_store_close(e->st);
            open_now--;
        }
        free(e->open_err);
    }
    free(r->ranks);
    r->ranks = NULL;
    r->n = 0;
}

/* ------------------------------------------------------------------ */
/* Keys                                                                */
/* ------------------------------------------------------------------ */

/* The name key at the start of k: fills the name fields; returns its
 * length or 0. */
static size_t name_part(struct dkey *d, const uint8_t *k, size_t klen)
{
    int hashed = 0;
    size_t n = ckpt_key_name_len(k, klen, &hashed);
    if (n == 0)
        return 0;
    d->name = k;
    d->namekey_len = n;
    d->hashed = hashed;
    if (hashed) {
        d->nlen = CKPT_NAME_INLINE_MAX;
        d->hash = ckpt_key_get_u64(k + CKPT_NAME_INLINE_MAX + 1);
    } else {
        d->nlen = n - 1;
    }
    return n;
}

int key_decode(struct dkey *d, int db, const void *key, size_t klen)
{
    const uint8_t *k = key;
    size_t n;
    memset(d, 0, sizeof *d);
    if (k == NULL || klen == 0)
        return -1;
    switch (db) {
    case CKPT_DB_META:
        d->name = k;
        d->nlen = klen;
        return 0;
    case CKPT_DB_OBJ:
    case CKPT_DB_CONT:
    case CKPT_DB_ID_HOME:
        if (klen != 8)
            return -1;
        d->id = ckpt_key_get_u64(k);
        return 0;
    case CKPT_DB_OBJ_NAME:
        if ((n = name_part(d, k, klen)) == 0 || klen != n + 4)
            return -1;
        d->ts = ckpt_key_get_i32(k + n);
        return 0;
    case CKPT_DB_KVTAG:
        if (klen <= 8 || (n = name_part(d, k + 8, klen - 8)) == 0 || n != klen - 8)
            return -1;
        d->id = ckpt_key_get_u64(k);
        return 0;
    case CKPT_DB_TAG_INDEX:
        if ((n = name_part(d, k, klen)) == 0 || klen != n + 8)
            return -1;
        d->id = ckpt_key_get_u64(k + n);
        return 0;
    case CKPT_DB_CONT_NAME:
        if ((n = name_part(d, k, klen)) == 0 || n != klen)
            return -1;
        return 0;
    case CKPT_DB_CONT_OBJ:
        if (klen != 16)
            return -1;
        d->id = ckpt_key_get_u64(k);
        d->id2 = ckpt_key_get_u64(k + 8);
        return 0;
    case CKPT_DB_REGION:
        if (klen < 9 || k[8] == 0 || k[8] > CKPT_REGION_MAXDIM || klen != 9 + 16 * (size_t)k[8])
            return -1;
        d->id = ckpt_key_get_u64(k);
        d->ndim = k[8];
        for (uint32_t i = 0; i < d->ndim; i++) {
            d->start[i] = ckpt_key_get_u64(k + 9 + 8 * i);
            d->count[i] = ckpt_key_get_u64(k + 9 + 8 * (d->ndim + i));
        }
        return 0;
    case CKPT_DB_PDC_SERVER: /* tag . object id . region key (ckpt_key_pdc_region) */
        if (klen >= 2 + 5 + 8 && k[0] == CKPT_PDC_DART && k[1] <= 3) { /* ckpt_key_pdc_dart */
            d->id2 = k[0];
            d->id = ckpt_key_get_u64(k + klen - 8); /* the object reference */
            return 0;
        }
        if (klen > 1 && k[0] == CKPT_PDC_SAME_NAME) { /* 'n' . namekey . ts . id */
            if ((n = name_part(d, k + 1, klen - 1)) == 0 || klen != 1 + n + 12)
                return -1;
            d->id2 = k[0];
            d->ts = ckpt_key_get_i32(k + 1 + n);
            d->id = ckpt_key_get_u64(k + 5 + n);
            return 0;
        }
        if (klen < 10 || (k[0] != CKPT_PDC_DATA_REGION && k[0] != CKPT_PDC_XFER_REGION) ||
            k[9] == 0 || k[9] > CKPT_REGION_MAXDIM || klen != 10 + 16 * (size_t)k[9])
            return -1;
        d->id2 = k[0];
        d->id = ckpt_key_get_u64(k + 1);
        d->ndim = k[9];
        for (uint32_t i = 0; i < d->ndim; i++) {
            d->start[i] = ckpt_key_get_u64(k + 10 + 8 * i);
            d->count[i] = ckpt_key_get_u64(k + 10 + 8 * (d->ndim + i));
        }
        return 0;
    default:
        return -2; /* a database this build does not know */
    }
}

int id_home_decode(const void *val, size_t len, uint32_t *home)
{
    const uint8_t *b = val;
    if (len != 4)
        return -1;
    *home = ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
    return 0;
}

void hex_text(char *buf, size_t n, const void *data, size_t len)
{
    static const char hx[] = "0123456789abcdef";
    const uint8_t *p = data;
    size_t o = 0, shown = len;
    if (n == 0)
        return;
    if (2 * len + 1 > n) /* shortened: room for ".." */
        shown = n >= 3 ? (n - 3) / 2 : 0;
    for (size_t i = 0; i < shown; i++) {
        buf[o++] = hx[p[i] >> 4];
        buf[o++] = hx[p[i] & 15];
    }
    if (shown < len && o + 2 < n) {
        buf[o++] = '.';
        buf[o++] = '.';
    }
    buf[o] = 0;
}

json_object *hex_json(const void *data, size_t len)
{
    size_t n = 2 * len + 1;
    char *b = malloc(n);
    json_object *j;
    if (b == NULL)
        return NULL;
    hex_text(b, n, data, len);
    j = json_object_new_string(b);
    free(b);
    return j;
}

void name_text(char *buf, size_t n, const void *name, size_t len, int hashed)
{
    const uint8_t *p = name;
    size_t o = 0, shown = len > 64 ? 64 : len;
    if (n < 16) {
        if (n)
            buf[0] = 0;
        return;
    }
    buf[o++] = '"';
    for (size_t i = 0; i < shown && o + 12 < n; i++) {
        uint8_t c = p[i];
        if (c == '"' || c == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)c;
        } else if (c < 0x20 || c >= 0x7f) {
            o += (size_t)snprintf(buf + o, n - o, "\\x%02x", c);
        } else {
            buf[o++] = (char)c;
        }
    }
    if (shown < len || hashed)
        o += (size_t)snprintf(buf + o, n - o, "...");
    buf[o++] = '"';
    buf[o] = 0;
    if (hashed && o + 10 < n)
        snprintf(buf + o, n - o, " (hashed)");
}

json_object *jnum_u64(uint64_t v)
{
    return json_object_new_uint64(v);
}

json_object *jnum_i64(int64_t v)
{
    return json_object_new_int64(v);
}

static void add_name(json_object *o, const struct dkey *d)
{
    json_object_object_add(o, "name", bulki_json_bytes(d->name, d->nlen));
    if (d->hashed) {
        char h[20];
        snprintf(h, sizeof h, "%016llx", (unsigned long long)d->hash);
        json_object_object_add(o, "hashed", json_object_new_boolean(1));
        json_object_object_add(o, "hash", json_object_new_string(h));
    }
}

static json_object *u64_array(const uint64_t *v, size_t n)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        json_object_array_add(a, jnum_u64(v[i]));
    return a;
}

json_object *key_json(int db, const void *key, size_t klen)
{
    struct dkey d;
    json_object *o = json_object_new_object();
    int rc = key_decode(&d, db, key, klen);
    if (rc != 0) {
        json_object_object_add(o, "hex", hex_json(key, klen));
        if (rc == -1)
            json_object_object_add(o, "malformed", json_object_new_boolean(1));
        return o;
    }
    switch (db) {
    case CKPT_DB_META:
    case CKPT_DB_CONT_NAME:
        add_name(o, &d);
        break;
    case CKPT_DB_OBJ:
    case CKPT_DB_CONT:
    case CKPT_DB_ID_HOME:
        json_object_object_add(o, "id", jnum_u64(d.id));
        break;
    case CKPT_DB_OBJ_NAME:
        add_name(o, &d);
        json_object_object_add(o, "time_step", jnum_i64(d.ts));
        break;
    case CKPT_DB_KVTAG:
        json_object_object_add(o, "owner", jnum_u64(d.id));
        add_name(o, &d);
        break;
    case CKPT_DB_TAG_INDEX:
        add_name(o, &d);
        json_object_object_add(o, "owner", jnum_u64(d.id));
        break;
    case CKPT_DB_CONT_OBJ:
        json_object_object_add(o, "cont_id", jnum_u64(d.id));
        json_object_object_add(o, "obj_id", jnum_u64(d.id2));
        break;
    case CKPT_DB_REGION:
        json_object_object_add(o, "obj_id", jnum_u64(d.id));
        json_object_object_add(o, "start", u64_array(d.start, d.ndim));
        json_object_object_add(o, "count", u64_array(d.count, d.ndim));
        break;
    case CKPT_DB_PDC_SERVER:
        if (d.id2 == CKPT_PDC_DART) {
            json_object_object_add(o, "table", json_object_new_string("dart"));
            json_object_object_add(o, "obj_ref", jnum_u64(d.id));
            break;
        }
        if (d.id2 == CKPT_PDC_SAME_NAME) {
            json_object_object_add(o, "table", json_object_new_string("same_name"));
            add_name(o, &d);
            json_object_object_add(o, "time_step", jnum_i64(d.ts));
            json_object_object_add(o, "obj_id", jnum_u64(d.id));
            break;
        }
        json_object_object_add(o, "table", json_object_new_string(
                                               d.id2 == CKPT_PDC_DATA_REGION ? "data" : "transfer"));
        json_object_object_add(o, "obj_id", jnum_u64(d.id));
        json_object_object_add(o, "start", u64_array(d.start, d.ndim));
        json_object_object_add(o, "count", u64_array(d.count, d.ndim));
        break;
    default:
        break;
    }
    return o;
}

static size_t u64_list(char *buf, size_t n, const uint64_t *v, uint32_t cnt)
{
    size_t o = 0;
    for (uint32_t i = 0; i < cnt && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%llu", i ? "," : "", (unsigned long long)v[i]);
    return o;
}

void key_text(char *buf, size_t n, int db, const void *key, size_t klen)
{
    struct dkey d;
    char nm[128], a[128], b[128];
    int rc = key_decode(&d, db, key, klen);
    if (rc != 0) {
        char hx[2 * 48 + 4];
        hex_text(hx, sizeof hx, key, klen);
        snprintf(buf, n, "%skey %s", rc == -1 ? "malformed " : "", hx);
        return;
    }
    if (d.name != NULL)
        name_text(nm, sizeof nm, d.name, d.nlen, d.hashed);
    switch (db) {
    case CKPT_DB_META:
    case CKPT_DB_CONT_NAME:
        snprintf(buf, n, "name %s", nm);
        break;
    case CKPT_DB_OBJ:
    case CKPT_DB_CONT:
    case CKPT_DB_ID_HOME:
        snprintf(buf, n, "id %llu", (unsigned long long)d.id);
        break;
    case CKPT_DB_OBJ_NAME:
        snprintf(buf, n, "name %s ts %d", nm, (int)d.ts);
        break;
    case CKPT_DB_KVTAG:
        snprintf(buf, n, "owner %llu name %s", (unsigned long long)d.id, nm);
        break;
    case CKPT_DB_TAG_INDEX:
        snprintf(buf, n, "name %s owner %llu", nm, (unsigned long long)d.id);
        break;
    case CKPT_DB_CONT_OBJ:
        snprintf(buf, n, "cont %llu obj %llu", (unsigned long long)d.id, (unsigned long long)d.id2);
        break;
    case CKPT_DB_REGION:
        u64_list(a, sizeof a, d.start, d.ndim);
        u64_list(b, sizeof b, d.count, d.ndim);
        snprintf(buf, n, "obj %llu start [%s] count [%s]", (unsigned long long)d.id, a, b);
        break;
    case CKPT_DB_PDC_SERVER:
        if (d.id2 == CKPT_PDC_SAME_NAME) {
            snprintf(buf, n, "same-name object %llu name %s ts %d", (unsigned long long)d.id, nm,
                     (int)d.ts);
            break;
        }
        u64_list(a, sizeof a, d.start, d.ndim);
        u64_list(b, sizeof b, d.count, d.ndim);
        snprintf(buf, n, "%s region obj %llu start [%s] count [%s]",
                 d.id2 == CKPT_PDC_DATA_REGION ? "data" : "transfer", (unsigned long long)d.id, a, b);
        break;
    default:
        snprintf(buf, n, "?");
        break;
    }
}

void err_key(const char *path, int db, const ckpt_val *k, const char *what)
{
    char kt[256];
    key_text(kt, sizeof kt, db, k->data, k->len);
    errp(path, "%s: %s: %s", ckpt_db_name(db), kt, what);
}

/* ------------------------------------------------------------------ */
/* Records                                                             */
/* ------------------------------------------------------------------ */

static void add(json_object *o, const char *k, json_object *v)
{
    json_object_object_add(o, k, v);
}

static json_object *jstr(const char *s)
{
    return bulki_json_str(s);
}

json_object *obj_json(const struct ckpt_obj *o)
{
    json_object *j = json_object_new_object();
    add(j, "obj_id", jnum_u64(o->obj_id));
    add(j, "obj_name", jstr(o->obj_name));
    add(j, "cont_id", jnum_u64(o->cont_id));
    add(j, "user_id", jnum_i64(o->user_id));
    add(j, "app_name", jstr(o->app_name));
    add(j, "time_step", jnum_i64(o->time_step));
    add(j, "data_type", jnum_i64(o->data_type));
    add(j, "ndim", jnum_u64(o->ndim));
    add(j, "dims", u64_array(o->dims, o->ndim));
    add(j, "create_time", jnum_i64(o->create_time));
    add(j, "last_modified_time", jnum_i64(o->last_modified_time));
    add(j, "data_location", jstr(o->data_location));
    add(j, "tags", jstr(o->tags));
    add(j, "transform_state", jnum_i64(o->transform_state));
    add(j, "data_server_id", jnum_u64(o->data_server_id));
    add(j, "region_partition", jnum_u64(o->region_partition));
    add(j, "consistency", jnum_u64(o->consistency));
    return j;
}

json_object *cont_json(const struct ckpt_cont *c)
{
    json_object *j = json_object_new_object();
    add(j, "cont_id", jnum_u64(c->cont_id));
    add(j, "cont_name", jstr(c->cont_name));
    add(j, "tags", jstr(c->tags));
    return j;
}

const char *pdc_type_name(int type)
{
    /* PDC's type codes are BULKI's (BULKI is PDC's serializer) */
    const struct bulki_type_info *ti = type > 0 ? bulki_type_info((unsigned)type) : NULL;
    return ti ? ti->name : NULL;
}

/* One element of `width` bytes (host order, as PDC stores tag values). */
static json_object *elem_json(const uint8_t *p, const struct bulki_type_info *ti)
{
    switch (ti->kind) {
    case BULKI_KIND_SIGNED: {
        int64_t v;
        if (ti->width == 1) {
            int8_t x;
            memcpy(&x, p, 1);
            v = x;
        } else if (ti->width == 2) {
            int16_t x;
            memcpy(&x, p, 2);
            v = x;
        } else if (ti->width == 4) {
            int32_t x;
            memcpy(&x, p, 4);
            v = x;
        } else {
            memcpy(&v, p, 8);
        }
        return jnum_i64(v);
    }
    case BULKI_KIND_UNSIGNED: {
        uint64_t v;
        if (ti->width == 1) {
            v = p[0];
        } else if (ti->width == 2) {
            uint16_t x;
            memcpy(&x, p, 2);
            v = x;
        } else if (ti->width == 4) {
            uint32_t x;
            memcpy(&x, p, 4);
            v = x;
        } else {
            memcpy(&v, p, 8);
        }
        return jnum_u64(v);
    }
    case BULKI_KIND_FLOAT:
        if (ti->width == 4) {
            float f;
            memcpy(&f, p, 4);
            return bulki_json_f64(f, 1);
        } else {
            double d;
            memcpy(&d, p, 8);
            return bulki_json_f64(d, 0);
        }
    case BULKI_KIND_BOOL:
        return json_object_new_boolean(p[0] != 0);
    default:
        return NULL;
    }
}

json_object *tag_value_json(const struct ckpt_kvtag *t, int *raw_bytes)
{
    const struct bulki_type_info *ti = t->type > 0 ? bulki_type_info((unsigned)t->type) : NULL;
    const uint8_t *v = t->value;
    *raw_bytes = 0;
    if (ti != NULL && ti->kind == BULKI_KIND_STRING && t->size >= 1 && v[t->size - 1] == 0 &&
        memchr(v, 0, t->size - 1) == NULL)
        return bulki_json_bytes(v, t->size - 1);
    if (ti != NULL && ti->width > 0 && t->size > 0 && t->size % ti->width == 0 &&
        (ti->kind == BULKI_KIND_SIGNED || ti->kind == BULKI_KIND_UNSIGNED ||
         ti->kind == BULKI_KIND_FLOAT || ti->kind == BULKI_KIND_BOOL)) {
        size_t cnt = t->size / ti->width;
        if (ti->kind == BULKI_KIND_BOOL)
            for (size_t i = 0; i < cnt; i++)
                if (v[i] > 1)
                    goto raw;
        if (cnt == 1)
            return elem_json(v, ti);
        json_object *a = json_object_new_array();
        for (size_t i = 0; i < cnt; i++)
            json_object_array_add(a, elem_json(v + i * ti->width, ti));
        return a;
    }
raw:
    *raw_bytes = 1;
    return NULL;
}

json_object *kvtag_json(const struct ckpt_kvtag *t)
{
    json_object *j = json_object_new_object();
    const char *tn = pdc_type_name(t->type);
    int raw;
    if (t->name != NULL) /* a record read without its key names only a long tag */
        add(j, "name", jstr(t->name));
    add(j, "type", tn ? json_object_new_string(tn) : jnum_i64(t->type));
    json_object *v = tag_value_json(t, &raw);
    if (raw) {
        add(j, "size", jnum_u64(t->size));
        add(j, "value_hex", hex_json(t->value, t->size));
    } else {
        add(j, "value", v);
    }
    return j;
}

json_object *region_json(const struct ckpt_region *g)
{
    json_object *j = json_object_new_object();
    add(j, "obj_id", jnum_u64(g->obj_id));
    add(j, "ndim", jnum_u64(g->ndim));
    add(j, "start", u64_array(g->start, g->ndim));
    add(j, "count", u64_array(g->count, g->ndim));
    add(j, "data_size", jnum_u64(g->data_size));
    add(j, "unit_size", jnum_u64(g->unit_size));
    add(j, "data_loc_type", jnum_i64(g->data_loc_type));
    add(j, "storage_location", jstr(g->storage_location));
    add(j, "offset", jnum_u64(g->offset));
    add(j, "cache_location", jstr(g->cache_location));
    add(j, "cache_offset", jnum_u64(g->cache_offset));
    if (g->has_hist) {
        json_object *h = json_object_new_object(), *r = json_object_new_array(),
                    *b = json_object_new_array();
        for (size_t i = 0; i < 2 * (size_t)g->hist.nbin; i++)
            json_object_array_add(r, bulki_json_f64(ckpt_hist_range(&g->hist, i), 0));
        for (size_t i = 0; i < (size_t)g->hist.nbin; i++)
            json_object_array_add(b, jnum_u64(ckpt_hist_bin(&g->hist, i)));
        add(h, "dtype", jnum_i64(g->hist.dtype));
        add(h, "nbin", jnum_i64(g->hist.nbin));
        add(h, "range", r);
        add(h, "bin", b);
        add(h, "incr", bulki_json_f64(g->hist.incr, 0));
        add(j, "hist", h);
    }
    return j;
}

json_object *xfer_json(const struct ckpt_xfer_region *x)
{
    json_object *j = json_object_new_object();
    add(j, "obj_id", jnum_u64(x->obj_id));
    add(j, "ndim", jnum_u64(x->ndim));
    add(j, "start", u64_array(x->start, x->ndim));
    add(j, "count", u64_array(x->count, x->ndim));
    add(j, "data_server_id", jnum_u64(x->data_server_id));
    add(j, "unit_size", jnum_u64(x->unit_size));
    return j;
}

/* ---- plain form of any BULKI (meta, and records that fail their schema) */

static json_object *plain_ent(const bulki_ent *e, int depth);

static json_object *plain_map(const bulki_map *m, int depth)
{
    bulki_map_iter it;
    bulki_ent k, v;
    json_object *o;
    int rc;
    if (depth > BULKI_MAX_DEPTH)
        return NULL;
    o = json_object_new_object();
    bulki_map_iter_init(&it, m);
    while ((rc = bulki_map_next(&k, &v, &it)) == 1) {
        const char *s;
        size_t sl;
        json_object *jv;
        char key[512];
        /* a key that is not UTF-8 cannot be a JSON key: the caller falls
         * back to BULKI's own JSON form, where it is {"hex": ...} */
        if (bulki_ent_str(&s, &sl, &k) != 0 || sl >= sizeof key || memchr(s, 0, sl) != NULL ||
            !bulki_json_utf8_valid(s, sl) || (jv = plain_ent(&v, depth + 1)) == NULL) {
            json_object_put(o);
            return NULL;
        }
        memcpy(key, s, sl);
        key[sl] = 0;
        json_object_object_add(o, key, jv);
    }
    if (rc < 0) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

static json_object *plain_elem(const bulki_ent *e, const struct bulki_type_info *ti, uint64_t i)
{
    int64_t s;
    uint64_t u;
    double d;
    switch (ti->kind) {
    case BULKI_KIND_SIGNED:
        return bulki_ent_elem_i64(&s, e, i) == 0 ? jnum_i64(s) : NULL;
    case BULKI_KIND_UNSIGNED:
        return bulki_ent_elem_u64(&u, e, i) == 0 ? jnum_u64(u) : NULL;
    case BULKI_KIND_BOOL:
        return bulki_ent_elem_u64(&u, e, i) == 0 ? json_object_new_boolean(u != 0) : NULL;
    case BULKI_KIND_FLOAT:
        return bulki_ent_elem_f64(&d, e, i) == 0 ? bulki_json_f64(d, ti->width == 4) : NULL;
    default:
        return NULL;
    }
}

static json_object *plain_ent(const bulki_ent *e, int depth)
{
    const struct bulki_type_info *ti = bulki_type_info(e->type);
    json_object *a, *x;
    if (ti == NULL || depth > BULKI_MAX_DEPTH)
        return NULL;
    if (ti->kind == BULKI_KIND_STRING) {
        const char *s;
        size_t n;
        return bulki_ent_str(&s, &n, e) == 0 ? bulki_json_bytes(s, n) : NULL;
    }
    if (e->cls == BULKI_ITEM && ti->kind != BULKI_KIND_NESTED)
        return plain_elem(e, ti, 0);
    if (e->cls == BULKI_ITEM && e->type == BULKI_T_BULKI) {
        bulki_map m;
        return bulki_ent_doc(&m, e, 0) == 0 ? plain_map(&m, depth + 1) : NULL;
    }
    a = json_object_new_array();
    for (uint64_t i = 0; i < e->count; i++) {
        if (ti->kind != BULKI_KIND_NESTED) {
            x = plain_elem(e, ti, i);
        } else if (e->type == BULKI_T_BULKI) {
            bulki_map m;
            x = bulki_ent_doc(&m, e, i) == 0 ? plain_map(&m, depth + 1) : NULL;
        } else {
            bulki_ent c;
            x = bulki_ent_at(&c, e, i) == 0 ? plain_ent(&c, depth + 1) : NULL;
        }
        if (x == NULL) {
            json_object_put(a);
            return NULL;
        }
        json_object_array_add(a, x);
    }
    return a;
}

json_object *bulki_plain_json(const bulki_map *m)
{
    return plain_map(m, 0);
}

static const char *record_kind(int db)
{
    switch (db) {
    case CKPT_DB_OBJ:
        return "object";
    case CKPT_DB_KVTAG:
        return "kvtag";
    case CKPT_DB_CONT:
        return "container";
    case CKPT_DB_REGION:
        return "region";
    case CKPT_DB_META:
        return "meta";
    default:
        return "?";
    }
}

/* Run the record decoder of db; 0 or CKPT_E_RECORD with *off. key (may be
 * NULL) is the record's store key: a kvtag record takes a short name from
 * it. */
static int decode_record(int db, const void *key, size_t klen, const void *data, size_t len,
                         size_t *off, json_object **out)
{
    int rc;
    *off = 0;
    switch (db) {
    case CKPT_DB_OBJ: {
        struct ckpt_obj o;
        if ((rc = ckpt_rec_obj_decode(&o, data, len, off)) == 0 && out)
            *out = obj_json(&o);
        return rc;
    }
    case CKPT_DB_KVTAG: {
        struct ckpt_kvtag t;
        rc = key ? ckpt_rec_kvtag_decode_entry(&t, key, klen, data, len, off)
                 : ckpt_rec_kvtag_decode(&t, data, len, off);
        if (rc == 0 && out)
            *out = kvtag_json(&t);
        return rc;
    }
    case CKPT_DB_CONT: {
        struct ckpt_cont c;
        if ((rc = ckpt_rec_cont_decode(&c, data, len, off)) == 0 && out)
            *out = cont_json(&c);
        return rc;
    }
    case CKPT_DB_REGION: {
        struct ckpt_region g;
        if ((rc = ckpt_rec_region_decode(&g, data, len, off)) == 0 && out)
            *out = region_json(&g);
        return rc;
    }
    default: {
        bulki_map m;
        if ((rc = bulki_decode_doc(&m, data, len, off)) != 0)
            return CKPT_E_RECORD;
        if (out && (*out = bulki_plain_json(&m)) == NULL)
            rc = bulki_json_from_doc(out, &m) == 0 ? 0 : CKPT_E_RECORD;
        return rc;
    }
    }
}

void record_error(char *buf, size_t n, int db, const void *data, size_t len)
{
    bulki_map m;
    size_t off = 0;
    int rc = bulki_decode_doc(&m, data, len, &off);
    if (rc != 0) {
        snprintf(buf, n, "value does not decode as BULKI: %s (%s) at byte %zu of %zu",
                 bulki_strerror(rc), bulki_errname(rc), off, len);
        return;
    }
    decode_record(db, NULL, 0, data, len, &off, NULL);
    snprintf(buf, n, "value is BULKI but not a valid %s record: a field is missing or mistyped "
             "(near byte %zu of %zu)", record_kind(db), off, len);
}

json_object *record_json(int db, const void *key, size_t klen, const void *data, size_t len,
                         char *err, size_t errn)
{
    json_object *j = NULL;
    size_t off;
    if (decode_record(db, key, klen, data, len, &off, &j) != 0 || j == NULL) {
        record_error(err, errn, db, data, len);
        return NULL;
    }
    return j;
}

/* ------------------------------------------------------------------ */
/* Output                                                              */
/* ------------------------------------------------------------------ */

void print_json_line(json_object *j)
{
    fputs(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
          stdout);
    fputc('\n', stdout);
}

void emit_json_line(json_object *j)
{
    print_json_line(j);
    json_object_put(j);
}

void print_json_pretty(json_object *j)
{
    fputs(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                JSON_C_TO_STRING_NOSLASHESCAPE),
          stdout);
    fputc('\n', stdout);
}

int finish_stdout(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        errp("stdout", "%s", strerror(errno ? errno : EIO));
        return EXIT_FAIL;
    }
    return EXIT_OK;
}

void iso8601_ms(char *buf, size_t n, int64_t ms)
{
    int64_t s = ms / 1000, r = ms % 1000;
    struct tm tm;
    if (r < 0) {
        r += 1000;
        s--;
    }
    time_t t = (time_t)s;
    if (gmtime_r(&t, &tm) == NULL) {
        snprintf(buf, n, "?");
        return;
    }
    size_t o = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + o, n - o, ".%03dZ", (int)r);
}
