/*
 * common.c - the store root, errors and output, shared by the
 * subcommands of ckpt-inspect (keys: keys.c; records: records.c).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
