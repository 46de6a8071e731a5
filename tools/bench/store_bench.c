/*
 * store-bench - throughput of the store on a kvtag stream against raw
 * mdb_put of the same bytes (the physical limit of this design), LMDB flag
 * variants for the sync-mode choice, and close time against store size.
 *
 *   store-bench [-n TAGS] [-r REPEATS] [-d DIR]
 *
 * The environments go into a new directory of their own, store-bench.XXXXXX
 * inside DIR (default /tmp), removed at the end: nothing already in DIR is
 * touched.
 *
 * Every phase runs -r times (default 5) in this one process, in turn, each
 * on a fresh environment; it prints the median and min..max of each, and
 * ratios against the raw baseline of the same run.
 */
#include <errno.h>
#include <getopt.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ckpt_fs.h"
#include "ckpt_hooks.h"

#define BATCH 1000u

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A failure is the machine's (disk full, no memory), never bad input:
 * say where and stop. */
static void die(const char *where, const char *what, int rc)
{
    fprintf(stderr, "store-bench: %s: %s failed: %s\n", where, what, mdb_strerror(rc));
    exit(1);
}

static void rm_env(const char *dir)
{
    char p[8300];
    snprintf(p, sizeof p, "%s/data.mdb", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/lock.mdb", dir);
    unlink(p);
    rmdir(dir);
}

/* The stream: n kvtags, 10 per object, records encoded up front. */
struct rec {
    uint8_t key[32];
    size_t klen;
    uint8_t val[64];
    size_t vlen;
    char name[16];
    uint64_t owner;
};

static struct rec *make_stream(long n)
{
    struct rec *r = calloc((size_t)n, sizeof *r);
    if (r == NULL)
        return NULL;
    for (long i = 0; i < n; i++) {
        int32_t v = (int32_t)i;
        struct ckpt_kvtag t = {r[i].name, 2, sizeof v, &v};
        r[i].owner = 1000000000ull + (uint64_t)(i / 10);
        snprintf(r[i].name, sizeof r[i].name, "tag%ld", i % 10);
        ckpt_key_u64(r[i].key, r[i].owner);
        r[i].klen = 8 + ckpt_key_name(r[i].key + 8, r[i].name, strlen(r[i].name));
        if (ckpt_rec_kvtag_encode(&r[i].vlen, r[i].val, sizeof r[i].val, &t) != 0)
            die("the stream", "encoding a kvtag record", EINVAL);
    }
    return r;
}

/* Raw LMDB: the same key/value bytes, BATCH puts per transaction. */
static double run_raw(const char *dir, const struct rec *r, long n, unsigned flags, int with_index)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi, idx = 0;
    int rc;
    rm_env(dir);
    if (mkdir(dir, 0700) != 0)
        die(dir, "mkdir", errno);
    if ((rc = mdb_env_create(&env)) || (rc = mdb_env_set_maxdbs(env, 4)) ||
        (rc = mdb_env_set_mapsize(env, (size_t)8 << 30)) || (rc = mdb_env_open(env, dir, flags, 0600)))
        die(dir, "opening the LMDB environment", rc);
    mdb_txn_begin(env, NULL, 0, &txn);
    mdb_dbi_open(txn, "kvtag", MDB_CREATE, &dbi);
    if (with_index)
        mdb_dbi_open(txn, "kvtag_name", MDB_CREATE, &idx);
    mdb_txn_commit(txn);
    double t0 = now();
    mdb_txn_begin(env, NULL, 0, &txn);
    for (long i = 0; i < n; i++) {
        MDB_val k = {r[i].klen, (void *)r[i].key}, v = {r[i].vlen, (void *)r[i].val};
        if ((rc = mdb_put(txn, dbi, &k, &v, 0)) != 0)
            die(dir, "mdb_put", rc);
        if (with_index) {
            uint8_t ik[32];
            memcpy(ik, r[i].key + 8, r[i].klen - 8);
            memcpy(ik + r[i].klen - 8, r[i].key, 8);
            MDB_val k2 = {r[i].klen, ik}, v2 = {0, ""};
            if ((rc = mdb_put(txn, idx, &k2, &v2, 0)) != 0)
                die(dir, "mdb_put", rc);
        }
        if ((i + 1) % BATCH == 0) {
            mdb_txn_commit(txn);
            mdb_txn_begin(env, NULL, 0, &txn);
        }
    }
    mdb_txn_commit(txn);
    double t = now() - t0;
    mdb_env_sync(env, 1);
    mdb_env_close(env);
    return t;
}

/* The store: put_kvtag of the same records; returns stream time and
 * close time. */
static void run_store(const char *root, const struct rec *r, long n, int mode, double *t_put,
                      double *t_close)
{
    struct ckpt_store_opts o = CKPT_STORE_OPTS_INIT;
    ckpt_store *st;
    char dir[8200];
    snprintf(dir, sizeof dir, "%s/rank-0", root);
    rm_env(dir);
    o.root = root;
    o.commit_every = BATCH;
    o.commit_ms = 0;
    o.sync_mode = mode;
    o.map_size = (size_t)64 << 20;
    if (ckpt_store_open(&st, &o)) {
        fprintf(stderr, "store-bench: %s\n", ckpt_errmsg());
        exit(1);
    }
    double t0 = now();
    for (long i = 0; i < n; i++)
        if (ckpt_store_put_kvtag(st, r[i].owner, r[i].name, strlen(r[i].name), r[i].val, r[i].vlen)) {
            fprintf(stderr, "store-bench: %s\n", ckpt_errmsg());
            exit(1);
        }
    double t1 = now();
    if (ckpt_store_close(st)) {
        fprintf(stderr, "store-bench: %s\n", ckpt_errmsg());
        exit(1);
    }
    *t_put = t1 - t0;
    *t_close = now() - t1;
}

static void report(const char *what, double *v, int reps, long n, double base)
{
    double lo = v[0], hi = v[0];
    for (int i = 1; i < reps; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    double med = median(v, reps);
    printf("  %-40s %12.0f puts/s  median %.4f s (%.4f..%.4f)", what, (double)n / med, med, lo, hi);
    if (base > 0)
        printf("  x%.2f of raw", med / base);
    printf("\n");
}

static void usage(FILE *f)
{
    fprintf(f, "usage: store-bench [-n TAGS] [-r REPEATS] [-d DIR] | -V | -h | --help\n"
               "store puts and close time on a stream of TAGS kvtags (default 1000000)\n"
               "against raw mdb_put, REPEATS rounds (default 5, at most 100); the\n"
               "environments go into a new store-bench.XXXXXX in DIR (default /tmp),\n"
               "removed at the end. Exit status: 0 ok, 1 error, 2 bad usage.\n");
}

static int parse_pos(const char *s, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v <= 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    long n = 1000000, nreps = 5;
    int c;
    const char *parent = "/tmp";
    char tmpl[4200];
    const char *dir;
    struct stat sb;
    while ((c = getopt_long(argc, argv, "n:r:d:Vh", lo, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (parse_pos(optarg, 1L << 40, &n) != 0) {
                fprintf(stderr, "store-bench: -n needs a positive integer, not \"%s\"\n", optarg);
                return 2;
            }
            break;
        case 'r':
            if (parse_pos(optarg, 100, &nreps) != 0) {
                fprintf(stderr, "store-bench: -r needs an integer from 1 to 100, not \"%s\"\n",
                        optarg);
                return 2;
            }
            break;
        case 'd':
            parent = optarg;
            break;
        case 'V':
            printf("store-bench 0.1.0\n");
            return 0;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    int reps = (int)nreps;
    if (optind != argc) {
        fprintf(stderr, "store-bench: unexpected argument \"%s\"\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (stat(parent, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "store-bench: -d %s: %s\n", parent,
                stat(parent, &sb) != 0 ? strerror(errno) : "not a directory");
        return 1;
    }
    if (snprintf(tmpl, sizeof tmpl, "%s/store-bench.XXXXXX", parent) >= (int)sizeof tmpl) {
        fprintf(stderr, "store-bench: -d %s: path too long\n", parent);
        return 1;
    }
    if ((dir = mkdtemp(tmpl)) == NULL) {
        fprintf(stderr, "store-bench: -d %s: cannot create a directory there: %s\n", parent,
                strerror(errno));
        return 1;
    }
    struct rec *r = make_stream(n);
    if (r == NULL) {
        fprintf(stderr, "store-bench: out of memory\n");
        return 1;
    }
    char raw[4200], root[4200];
    snprintf(raw, sizeof raw, "%s/raw", dir);
    snprintf(root, sizeof root, "%s/store", dir);
    mkdir(root, 0700);

    enum { RAW_SYNC, RAW_NOMETA, RAW_NOSYNC, RAW_WMAP, RAW_IDX, ST_SYNC, ST_INTERVAL, ST_CLOSE, NPH };
    static const char *names[NPH] = {
        "raw mdb_put, default flags (sync)",  "raw mdb_put, MDB_NOMETASYNC",
        "raw mdb_put, MDB_NOSYNC",            "raw mdb_put, MDB_WRITEMAP|MDB_NOSYNC",
        "raw mdb_put + tag index, NOSYNC",    "store put_kvtag, sync mode",
        "store put_kvtag, interval mode",     "store put_kvtag, close mode"};
    double t[NPH][100], cl[3][100];
    for (int k = 0; k < reps; k++) {
        t[RAW_SYNC][k] = run_raw(raw, r, n, 0, 0);
        t[RAW_NOMETA][k] = run_raw(raw, r, n, MDB_NOMETASYNC, 0);
        t[RAW_NOSYNC][k] = run_raw(raw, r, n, MDB_NOSYNC, 0);
        t[RAW_WMAP][k] = run_raw(raw, r, n, MDB_WRITEMAP | MDB_NOSYNC, 0);
        t[RAW_IDX][k] = run_raw(raw, r, n, MDB_NOSYNC, 1);
        run_store(root, r, n, CKPT_SYNC_EVERY, &t[ST_SYNC][k], &cl[0][k]);
        run_store(root, r, n, CKPT_SYNC_INTERVAL, &t[ST_INTERVAL][k], &cl[1][k]);
        run_store(root, r, n, CKPT_SYNC_CLOSE, &t[ST_CLOSE][k], &cl[2][k]);
        fprintf(stderr, "store-bench: round %d of %d done\n", k + 1, reps);
    }
    printf("store-bench: %ld kvtags (10 per object), %u per commit, %d rounds, medians\n", n, BATCH,
           reps);
    double base_nosync = median(t[RAW_NOSYNC], reps), base_idx = median(t[RAW_IDX], reps);
    for (int p = 0; p < NPH; p++) {
        double base = p >= ST_SYNC ? (p == ST_SYNC ? median(t[RAW_SYNC], reps) : base_idx)
                                   : (p == RAW_NOSYNC ? 0 : base_nosync);
        report(names[p], t[p], reps, n, base);
    }
    static const char *cn[3] = {"sync", "interval", "close"};
    for (int m = 0; m < 3; m++) {
        double med = median(cl[m], reps);
        printf("  close after %ld kvtags, %-8s mode: median %.6f s\n", n, cn[m], med);
    }
    rm_env(raw);
    char d0[8300];
    snprintf(d0, sizeof d0, "%s/rank-0", root);
    rm_env(d0);
    rmdir(root);
    ckpt_fs_rmtree(dir);
    free(r);
    return 0;
}
