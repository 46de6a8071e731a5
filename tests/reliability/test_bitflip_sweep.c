/*
 * test_bitflip_sweep.c - issue 25: every single-bit flip that changes
 * committed data is found, never served.
 *
 * A small closed 1-rank store (format 5) holding every database: meta,
 * objects and their name index, kvtags of several types, the tag index
 * (merged part in kvtag_name, recent part in kvtag_delta), containers and
 * their name index, memberships, regions (one with a histogram),
 * id_home, and the record keys of objects and containers (obj_keys,
 * cont_keys). Entries of each database are sampled (the first, the last and
 * some between); for each, every bit of its key and of its value (values
 * longer than 16 bytes: every bit of their first 4, middle 4 and last 8
 * bytes, the checksum among them) is flipped in data.mdb, one flip at a time, the file restored
 * after each. For every flip:
 *   - the flip changes committed data: a raw LMDB listing of every
 *     database (what `mdb_dump -a` prints) differs from the clean one;
 *   - reads through the store API never return the flipped record: a
 *     lookup of the entry's key fails with CKPT_E_CORRUPT (value flips) or
 *     finds nothing (key flips), and an iteration over its database fails
 *     with CKPT_E_CORRUPT naming rank, database and key (meta: the open
 *     itself fails with CKPT_E_CORRUPT);
 *   - `ckpt-inspect verify --json` exits 1 (never by a signal) and lists a
 *     problem in that database.
 * The clean store verifies OK before and after. Prints the counts.
 *
 * usage: rel_test_bitflip_sweep CKPT_INSPECT [ENTRIES_PER_DB (2: the first and the last;
 *        1: the first only; N: also N - 2 between) [VERIFY_EVERY (1: ckpt-inspect
 *        verify after every data-changing flip; K: after the first of each
 *        database and every K-th after it; the store API checks every one)]]
 */
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bulki.h"
#include "ckpt_hooks.h"
#include "ckpt_store.h"

extern char **environ;

static const char *g_inspect;
static char g_root[512], g_data[600];
static long g_psize;

static void die(const char *fmt, ...)
{
    va_list ap;
    if (g_root[0] != 0 && getenv("SWEEP_KEEP") == NULL) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_root);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot remove %s\n", g_root);
    }
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

#define OK(call)                                                                                   \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != 0)                                                                              \
            die("%s:%d: %s: %s (%s)", __FILE__, __LINE__, #call, ckpt_errname(rc_),                \
                ckpt_errmsg());                                                          \
    } while (0)

/* ---- the store ---- */

static void build_store(void)
{
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    ckpt_hooks *h;
    uint64_t cont, ids[24];
    char name[64];
    o.store_root = g_root;
    o.rank = 0;
    o.nranks = 1;
    o.commit_every = 0;
    o.commit_ms = 0;
    o.sync_mode = CKPT_SYNC_EVERY;
    o.tagidx_merge = 1000000; /* merged only when asked: both parts of the index */
    OK(ckpt_hooks_open(&h, &o));
    OK(ckpt_hook_new_id(&cont, h));
    struct ckpt_cont c = {cont, "sweep-container", "ctag=1"};
    OK(ckpt_hook_cont_create(h, &c));
    for (int i = 0; i < 24; i++) {
        OK(ckpt_hook_new_id(&ids[i], h));
        snprintf(name, sizeof name, "/sweep/object-%02d", i);
        struct ckpt_obj ob = {0};
        ob.obj_id = ids[i];
        ob.cont_id = cont;
        ob.obj_name = name;
        ob.app_name = "sweep";
        ob.data_location = "/lustre/sweep/data";
        ob.tags = "";
        ob.time_step = i % 3;
        ob.user_id = 1000;
        ob.data_type = 9;
        ob.create_time = 1700000000 + i;
        ob.last_modified_time = 1700000100 + i;
        ob.ndim = 2;
        ob.dims[0] = 64;
        ob.dims[1] = 32 + (uint64_t)i;
        OK(ckpt_hook_obj_create(h, &ob));
        int32_t iv = i * 7;
        double dv = i / 3.0;
        struct ckpt_kvtag t1 = {"Group", BULKI_T_INT32, 4, &iv};
        struct ckpt_kvtag t2 = {"temperature", BULKI_T_DOUBLE, 8, &dv};
        struct ckpt_kvtag t3 = {"label", BULKI_T_STRING, 6, "hello"};
        OK(ckpt_hook_kvtag_put(h, ids[i], &t1));
        OK(ckpt_hook_kvtag_put(h, ids[i], &t2));
        if (i % 2 == 0)
            OK(ckpt_hook_kvtag_put(h, ids[i], &t3));
        if (i % 4 == 0) {
            struct ckpt_region g = {0};
            g.obj_id = ids[i];
            g.ndim = 2;
            g.start[0] = 0;
            g.start[1] = (uint64_t)i;
            g.count[0] = 16;
            g.count[1] = 8;
            g.data_size = 1024;
            g.unit_size = 8;
            g.storage_location = "/lustre/sweep/region";
            if (i == 8) {
                double range[4] = {0, 1, 1, 2};
                uint64_t bins[2] = {5, 7};
                g.has_hist = 1;
                g.hist.dtype = 9;
                g.hist.nbin = 2;
                g.hist.range = range;
                g.hist.bin = bins;
                g.hist.incr = 0.5;
                OK(ckpt_hook_region_put(h, &g));
            } else {
                OK(ckpt_hook_region_put(h, &g));
            }
        }
    }
    OK(ckpt_hook_cont_add_objs(h, cont, ids, 24));
    int32_t ct = 5;
    struct ckpt_kvtag tc = {"Group", BULKI_T_INT32, 4, &ct};
    OK(ckpt_hook_kvtag_put(h, cont, &tc));
    /* id_home: on a 1-rank store every id's directory and home is rank 0 */
    ckpt_store *st = ckpt_hooks_store(h);
    uint8_t k[8], v[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; i++) {
        ckpt_key_u64(k, ids[i]);
        OK(ckpt_store_put_raw(st, CKPT_DB_ID_HOME, k, 8, v, 4));
    }
    OK(ckpt_hooks_checkpoint(h));
    OK(ckpt_store_merge_tags(st)); /* kvtag_name gets the entries so far */
    for (int i = 0; i < 6; i++) { /* and kvtag_delta keeps these */
        uint16_t u = (uint16_t)(100 + i);
        struct ckpt_kvtag t = {"recent", BULKI_T_UINT16, 2, &u};
        OK(ckpt_hook_kvtag_put(h, ids[i], &t));
    }
    OK(ckpt_hooks_close(h));
    ckpt_store_wait_closed();
}

/* ---- raw LMDB: the listing and where each entry lies in data.mdb ---- */

static const char *const g_dbs[] = {"meta",     "obj",         "obj_name", "kvtag",
                                    "kvtag_name", "cont",      "cont_name", "cont_obj",
                                    "region",   "id_home",     "obj_keys", "cont_keys",
                                    "kvtag_delta"};
#define NDBS (sizeof g_dbs / sizeof g_dbs[0])

struct span {
    size_t db;
    long koff, voff; /* file offsets */
    size_t klen, vlen;
};

static struct span *g_spans;
static size_t g_nspans;

static long file_off(const void *p)
{
    const char *page = (const char *)((uintptr_t)p & ~(uintptr_t)(g_psize - 1));
    uint64_t pgno;
    memcpy(&pgno, page, 8);
    return (long)(pgno * (uint64_t)g_psize) + (long)((const char *)p - page);
}

/* FNV-1a over every database's entries, as mdb_dump -a lists them */
static uint64_t raw_listing(int collect)
{
    MDB_env *env;
    MDB_txn *txn;
    uint64_t hsh = 1469598103934665603ull;
#define MIX(p, n)                                                                                  \
    for (size_t i_ = 0; i_ < (n); i_++)                                                            \
    hsh = (hsh ^ ((const uint8_t *)(p))[i_]) * 1099511628211ull
    char dir[600];
    snprintf(dir, sizeof dir, "%s/rank-0", g_root);
    if (mdb_env_create(&env) || mdb_env_set_maxdbs(env, 16) ||
        mdb_env_open(env, dir, MDB_RDONLY | MDB_NOLOCK, 0600))
        die("raw open of %s", dir);
    if (mdb_txn_begin(env, NULL, MDB_RDONLY, &txn))
        die("raw txn");
    for (size_t d = 0; d < NDBS; d++) {
        MDB_dbi dbi;
        MDB_cursor *cur;
        MDB_val k, v;
        MIX(g_dbs[d], strlen(g_dbs[d]) + 1);
        if (mdb_dbi_open(txn, g_dbs[d], 0, &dbi) != 0)
            continue;
        mdb_cursor_open(txn, dbi, &cur);
        for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
             rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
            size_t kl = k.mv_size, vl = v.mv_size;
            MIX(&kl, sizeof kl);
            MIX(k.mv_data, kl);
            MIX(&vl, sizeof vl);
            MIX(v.mv_data, vl);
            if (collect) {
                g_spans = realloc(g_spans, (g_nspans + 1) * sizeof *g_spans);
                struct span *s = &g_spans[g_nspans++];
                s->db = d;
                s->koff = file_off(k.mv_data);
                s->klen = kl;
                s->voff = vl ? file_off(v.mv_data) : 0;
                s->vlen = vl;
            }
        }
        mdb_cursor_close(cur);
    }
    mdb_txn_abort(txn);
    mdb_env_close(env);
    return hsh;
#undef MIX
}

static void flip(long off, int bit)
{
    int fd = open(g_data, O_RDWR);
    uint8_t b;
    if (fd < 0 || pread(fd, &b, 1, off) != 1)
        die("read %s at %ld", g_data, off);
    b ^= (uint8_t)(1u << bit);
    if (pwrite(fd, &b, 1, off) != 1)
        die("write %s", g_data);
    close(fd);
}

/* ---- the checks of one flip ---- */

static int run_verify(char *out, size_t n)
{
    char *argv[] = {(char *)g_inspect, "verify", "--json", g_root, NULL};
    int p[2], status;
    pid_t pid;
    posix_spawn_file_actions_t fa;
    if (pipe(p) != 0)
        die("pipe");
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    if (posix_spawn(&pid, g_inspect, &fa, NULL, argv, environ) != 0)
        die("spawn %s", g_inspect);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    size_t got = 0;
    ssize_t r;
    while ((r = read(p[0], out + got, n - 1 - got)) > 0 && got + 1 < n)
        got += (size_t)r;
    while (r > 0) { /* drain what does not fit */
        char sink[4096];
        r = read(p[0], sink, sizeof sink);
    }
    out[got] = 0;
    close(p[0]);
    if (waitpid(pid, &status, 0) != pid)
        die("waitpid");
    if (WIFSIGNALED(status))
        die("ckpt-inspect verify died by signal %d", WTERMSIG(status));
    return WEXITSTATUS(status);
}

static int collect_cb(const ckpt_val *k, const ckpt_val *v, void *p)
{
    (void)k;
    (void)v;
    (*(size_t *)p)++;
    return 0;
}

static int db_index(const char *name)
{
    return strcmp(name, "kvtag_delta") == 0 ? CKPT_DB_TAG_INDEX : ckpt_db_by_name(name);
}

/* What the store API says about the flipped entry: 0 if it never served
 * it, else a description in why. */
static int api_check(const struct span *s, const uint8_t *key, size_t klen, int in_key, char *why,
                     size_t wn)
{
    ckpt_store *st;
    ckpt_rtxn *tx;
    ckpt_val v;
    size_t n = 0;
    int rc = ckpt_store_open_readonly(&st, g_root, 0);
    int db = db_index(g_dbs[s->db]);
    if (s->db == 0) { /* meta: read at open */
        if (rc == 0) {
            ckpt_store_close(st);
            ckpt_store_wait_closed();
        }
        if (rc != CKPT_E_CORRUPT) {
            snprintf(why, wn, "open with a flipped meta record: %s", ckpt_errname(rc));
            return -1;
        }
        return 0;
    }
    if (rc != 0) {
        snprintf(why, wn, "read-only open: %s (%s)", ckpt_errname(rc), ckpt_errmsg());
        return -1;
    }
    int bad = 0;
    OK(ckpt_rtxn_begin(&tx, st));
    if (db != CKPT_DB_TAG_INDEX && db != CKPT_DB_META) {
        rc = ckpt_get_raw(&v, tx, db, key, klen);
        if (in_key ? (rc != CKPT_E_NOTFOUND && rc != CKPT_E_CORRUPT) : rc != CKPT_E_CORRUPT) {
            snprintf(why, wn, "lookup of the entry's key: %s", ckpt_errname(rc));
            bad = 1;
        }
    }
    ckpt_rtxn_end(tx);
    /* an iteration of the whole database (kvtag_delta: of the tag index
     * it overlays) meets the entry and refuses it */
    OK(ckpt_rtxn_begin(&tx, st));
    rc = ckpt_iter(tx, db, NULL, 0, collect_cb, &n);
    if (!bad && rc != CKPT_E_CORRUPT) {
        snprintf(why, wn, "iterating %s: %s after %zu entries", ckpt_db_name(db), ckpt_errname(rc),
                 n);
        bad = 1;
    } else if (!bad && (strstr(ckpt_errmsg(), "rank 0") == NULL ||
                        strstr(ckpt_errmsg(), "rank-0/data.mdb") == NULL)) {
        snprintf(why, wn, "the error does not name the rank: %s", ckpt_errmsg());
        bad = 1;
    }
    ckpt_rtxn_end(tx);
    ckpt_store_close(st);
    ckpt_store_wait_closed();
    return bad ? -1 : 0;
}

struct range {
    long off;
    size_t len;
    int in_key;
};

int main(int argc, char **argv)
{
    static char out[1 << 20];
    size_t per_db = 2, verify_every = 1;
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: %s CKPT_INSPECT [ENTRIES_PER_DB [VERIFY_EVERY]]\n", argv[0]);
        return 2;
    }
    g_inspect = argv[1];
    if (argc >= 3)
        per_db = (size_t)strtoul(argv[2], NULL, 10);
    if (argc == 4 && (verify_every = (size_t)strtoul(argv[3], NULL, 10)) == 0)
        verify_every = 1;
    g_psize = sysconf(_SC_PAGESIZE);
    const char *tmp = getenv("TMPDIR");
    snprintf(g_root, sizeof g_root, "%s/ckpt-sweep-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(g_root) == NULL)
        die("mkdtemp: %s", strerror(errno));
    snprintf(g_data, sizeof g_data, "%s/rank-0/data.mdb", g_root);

    build_store();
    if (run_verify(out, sizeof out) != 0)
        die("the clean store does not verify:\n%s", out);
    uint64_t clean = raw_listing(1);

    size_t flips = 0, changed = 0, verified = 0, found_verify = 0, refused_api = 0;
    size_t per[NDBS] = {0}, nentries[NDBS] = {0}, changed_db[NDBS] = {0};
    for (size_t i = 0; i < g_nspans; i++)
        nentries[g_spans[i].db]++;
    for (size_t d = 0; d < NDBS; d++)
        if (nentries[d] == 0)
            die("database %s is empty in the sweep's store", g_dbs[d]);

    for (size_t i = 0; i < g_nspans; i++) {
        const struct span *s = &g_spans[i];
        /* this entry's position among its database's */
        size_t pos = 0, n = nentries[s->db];
        for (size_t j = 0; j < i; j++)
            pos += g_spans[j].db == s->db;
        int pick = pos == 0 || (per_db > 1 && pos == n - 1);
        for (size_t q = 1; q + 1 < per_db && !pick; q++)
            pick = pos == q * n / per_db;
        if (!pick)
            continue;
        uint8_t key[512];
        int fd = open(g_data, O_RDONLY);
        if (fd < 0 || pread(fd, key, s->klen, s->koff) != (ssize_t)s->klen)
            die("read key");
        close(fd);
        /* the byte ranges to flip: the whole key; the value whole, or its
         * first, middle and last 8 bytes */
        struct range r[4] = {{s->koff, s->klen, 1}};
        int nr = 1;
        if (s->vlen <= 16) {
            r[nr++] = (struct range){s->voff, s->vlen, 0};
        } else {
            r[nr++] = (struct range){s->voff, 4, 0};
            r[nr++] = (struct range){s->voff + (long)(s->vlen / 2) - 2, 4, 0};
            r[nr++] = (struct range){s->voff + (long)s->vlen - 8, 8, 0};
        }
        for (int ri = 0; ri < nr; ri++) {
            for (size_t b = 0; b < r[ri].len; b++) {
                for (int bit = 0; bit < 8; bit++) {
                    char why[600];
                    long off = r[ri].off + (long)b;
                    flip(off, bit);
                    flips++;
                    per[s->db]++;
                    if (raw_listing(0) == clean) {
                        flip(off, bit);
                        continue; /* changes no committed data (none expected) */
                    }
                    changed++;
                    int check_verify = changed_db[s->db]++ % verify_every == 0;
                    if (api_check(s, key, s->klen, r[ri].in_key, why, sizeof why) != 0)
                        die("%s entry %zu, byte %ld bit %d (%s): the store API %s", g_dbs[s->db],
                            pos, off, bit, r[ri].in_key ? "key" : "value", why);
                    refused_api++;
                    if (!check_verify) {
                        flip(off, bit);
                        continue;
                    }
                    verified++;
                    int vrc = run_verify(out, sizeof out);
                    const char *want = s->db == 0             ? "\"rank\": 0"
                                       : s->db == NDBS - 1 ? "\"where\": \"kvtag_name\""
                                                           : NULL;
                    char wbuf[64];
                    if (want == NULL) {
                        snprintf(wbuf, sizeof wbuf, "\"where\": \"%s\"", g_dbs[s->db]);
                        want = wbuf;
                    }
                    if (vrc != 1 || strstr(out, want) == NULL)
                        die("%s entry %zu, byte %ld bit %d (%s): verify exit %d, lacking %s:\n%s",
                            g_dbs[s->db], pos, off, bit, r[ri].in_key ? "key" : "value", vrc,
                            want, out);
                    found_verify++;
                    flip(off, bit); /* restore */
                }
            }
        }
    }
    if (raw_listing(0) != clean)
        die("the store was not restored");
    if (run_verify(out, sizeof out) != 0)
        die("the restored store does not verify:\n%s", out);
    printf("bit-flip sweep: %zu flips, %zu changed committed data; verify ran on %zu of them and "
           "found %zu, the store API refused %zu\n",
           flips, changed, verified, found_verify, refused_api);
    for (size_t d = 0; d < NDBS; d++)
        printf("  %-12s %5zu flips (%zu entries in the store)\n", g_dbs[d], per[d], nentries[d]);
    if (changed == 0 || verified == 0 || found_verify != verified || refused_api != changed)
        die("not every data-changing flip was found");
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_root);
    if (system(cmd) != 0)
        return 1;
    return 0;
}
