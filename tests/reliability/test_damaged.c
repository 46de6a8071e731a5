/*
 * test_damaged.c - damaged stores (issue 8, item 2). A pristine 2-rank store
 * is written once through the hooks; every test case damages a copy of it
 * the way stores get damaged in the field:
 *
 *   - data.mdb truncated (half, one byte short, only its meta pages, one
 *     page, a few bytes, empty);
 *   - a bit flipped inside a stored object record and a kvtag record;
 *   - lock.mdb (and writer.lock) missing;
 *   - a meta record of a newer (and of an older, unmigratable) format;
 *   - a rank directory, or just its data.mdb, missing;
 *   - another program's LMDB environment, or a file that is not LMDB;
 *   - an interrupted creation (an LMDB environment nothing was committed
 *     to).
 *
 * For each, every way in (read-only open, map restart, rebuild restart)
 * runs in a forked child, so that a crash is reported as a failure of that
 * case instead of ending the test: none may crash; each must give the
 * expected CKPT_E_* code with a message that says what is wrong and where;
 * a restart must never come back with fewer records than the store holds
 * (nothing is silently dropped) and must not start a fresh store over a
 * missing one. `ckpt-inspect verify` (argv[1]) must exit 1 naming the rank
 * (and, for a damaged record, the database and key), and the intact rank
 * must still verify in full.
 *
 * With --random (ctest reliability_damaged_random): seeded random damage
 * (issue 14, item 2), REL_RAND_GARBAGE pages of rank 1's data.mdb
 * overwritten with garbage and REL_RAND_HEADER page headers with flipped
 * bits, each store through every way in: the library's reads (every
 * database, every lookup, the hooks' census and tag index), the map and
 * rebuild restarts (forked children), and ckpt-inspect stat, stat --json,
 * dump, dump --raw, get --id, get --name, find, verify, copy, copy
 * --compact (programs). None may be killed (signal, abort, sanitizer
 * report); every failure must name the rank; a failed copy leaves nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ckpt_hooks.h"
#include "rel_util.h"

enum { NRANKS = 2, NOBJ = 300 };

static const char *g_inspect;         /* ckpt-inspect */
static char g_pristine[600];          /* the store every case copies */
static char g_pristine_dir[512];
static uint64_t g_ids[NRANKS][NOBJ];  /* object ids of the pristine store */

/* A case's fixture: a struct tu_case whose root (dir/store) is a copy of
 * the pristine store. */

/* ------------------------------------------------------------------ */
/* the pristine store                                                  */
/* ------------------------------------------------------------------ */

static struct ckpt_hooks_opts opts_for(const char *root, int rank)
{
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    o.store_root = root;
    o.rank = rank;
    o.nranks = NRANKS;
    o.commit_every = 64; /* many commits: stale record copies in free pages */
    /* no background sync, whose timing moves pages around: every run
     * writes the same pages, so a seed of the random damage replays */
    o.sync_kb = 0;
    o.map_size = (size_t)8 << 20;
    return o;
}

static int group_setup(void **state)
{
    (void)state;
    if (tu_mkdtemp(g_pristine_dir, sizeof g_pristine_dir, "damaged") != 0)
        return -1;
    snprintf(g_pristine, sizeof g_pristine, "%s/store", g_pristine_dir);
    return rel_write_store(g_pristine, NRANKS, NOBJ, opts_for, &g_ids[0][0]);
}

static int group_teardown(void **state)
{
    (void)state;
    tu_rmtree(g_pristine_dir);
    return 0;
}

static int setup(void **state)
{
    if (tu_case_new(state, "case") != 0)
        return -1;
    struct tu_case *f = *state;
    if (rel_copytree(g_pristine, f->root) != 0) {
        tu_case_free(state);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    return tu_case_free(state);
}

/* ------------------------------------------------------------------ */
/* the ways in, each run in a child                                    */
/* ------------------------------------------------------------------ */

struct probe {
    const char *root;
    int rank;
};

/* read-only open (what tools and verifiers do) */
static int probe_open_ro(void *arg, struct rel_outcome *out)
{
    const struct probe *p = arg;
    ckpt_store *st = NULL;
    int rc = ckpt_store_open_readonly(&st, p->root, p->rank);
    if (rc) {
        snprintf(out->msg, sizeof out->msg, "%s", ckpt_errmsg());
        return rc;
    }
    ckpt_store_close(st);
    return 0;
}

/* map restart, then a census of every record of the rank:
 * v = {complete objects, missing, bad, first bad index}; with new_id, then
 * a new id, whose commit is the restarted writer's first write
 * transaction: its outcome */
static int map_census(const struct probe *p, struct rel_outcome *out, int new_id)
{
    struct ckpt_hooks_opts o = opts_for(p->root, p->rank);
    struct rel_census c;
    ckpt_hooks *h = NULL;
    uint64_t id;
    int rc = ckpt_hooks_restart_map(&h, &o);
    if (rc) {
        snprintf(out->msg, sizeof out->msg, "%s%s", new_id ? "map restart: " : "", ckpt_errmsg());
        return rc;
    }
    rc = rel_census_out(out, &c, h, p->rank, NOBJ);
    out->v[3] = c.first_bad;
    if (rc == 0 && c.first_bad >= 0)
        rc = c.first_bad_rc;
    if (rc == 0 && new_id && (rc = ckpt_hook_new_id(&id, h)) != 0)
        snprintf(out->msg, sizeof out->msg, "%s", ckpt_errmsg());
    if (ckpt_hooks_close(h) != 0)
        ckpt_hooks_discard(h);
    return rc;
}

static int probe_map(void *arg, struct rel_outcome *out)
{
    return map_census(arg, out, 0);
}

static int probe_map_write(void *arg, struct rel_outcome *out)
{
    return map_census(arg, out, 1);
}

static int count_obj(const struct ckpt_obj *o, void *payload)
{
    (void)o;
    ((long *)payload)[0]++;
    return 0;
}
static int count_kvtag(uint64_t owner, const struct ckpt_kvtag *t, void *payload)
{
    (void)owner;
    (void)t;
    ((long *)payload)[1]++;
    return 0;
}
static int count_member(uint64_t c, uint64_t o, void *payload)
{
    (void)c;
    (void)o;
    ((long *)payload)[2]++;
    return 0;
}
static int count_region(const struct ckpt_region *g, void *payload)
{
    (void)g;
    ((long *)payload)[3]++;
    return 0;
}

/* rebuild restart: v = records visited {objects, kvtags, members, regions} */
static int probe_rebuild(void *arg, struct rel_outcome *out)
{
    const struct probe *p = arg;
    struct ckpt_hooks_opts o = opts_for(p->root, p->rank);
    const struct ckpt_rebuild_cbs cbs = {NULL, count_obj, count_kvtag, count_member, count_region};
    struct ckpt_rebuild_stats st;
    ckpt_hooks *h = NULL;
    int rc = ckpt_hooks_restart_rebuild(&h, &o, &cbs, out->v, &st);
    if (rc) {
        snprintf(out->msg, sizeof out->msg, "%s", ckpt_errmsg());
        return rc;
    }
    if (ckpt_hooks_close(h) != 0)
        ckpt_hooks_discard(h);
    return 0;
}

/* ------------------------------------------------------------------ */
/* assertions                                                          */
/* ------------------------------------------------------------------ */

static void has(const char *text, const char *needle, const char *what)
{
    if (strstr(text, needle) == NULL)
        fail_msg("%s: \"%s\" does not say \"%s\"", what, text, needle);
}

/* Run fn in a child; it must not crash and must return want. */
static void expect(const char *what, rel_fn fn, const char *root, int rank, int want,
                   struct rel_outcome *out)
{
    struct probe p = {root, rank};
    rel_in_child(out, fn, &p);
    if (out->crashed)
        fail_msg("%s on rank %d crashed: %s", what, rank, out->msg);
    if (out->rc != want)
        fail_msg("%s on rank %d: %s (%d), expected %s: %s", what, rank, ckpt_errname(out->rc),
                 out->rc, ckpt_errname(want), out->msg);
    if (want != 0 && out->msg[0] == 0)
        fail_msg("%s on rank %d: %s without a message", what, rank, ckpt_errname(want));
}

/* Every way in on `rank` fails with `want` and a message holding each of
 * the NULL-terminated needles. */
static void expect_refused(const char *root, int rank, int want, ...)
{
    static const struct {
        const char *what;
        rel_fn fn;
    } ways[] = {{"read-only open", probe_open_ro},
                {"map restart", probe_map},
                {"rebuild restart", probe_rebuild}};
    for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
        struct rel_outcome out;
        va_list ap;
        const char *needle;
        expect(ways[w].what, ways[w].fn, root, rank, want, &out);
        va_start(ap, want);
        while ((needle = va_arg(ap, const char *)) != NULL)
            has(out.msg, needle, ways[w].what);
        va_end(ap);
    }
}

/* The rank holds all of its records, by every way in. */
static void expect_intact(const char *root, int rank)
{
    struct rel_outcome out;
    expect("read-only open", probe_open_ro, root, rank, 0, &out);
    expect("map restart", probe_map, root, rank, 0, &out);
    assert_int_equal(out.v[0], NOBJ);
    expect("rebuild restart", probe_rebuild, root, rank, 0, &out);
    assert_int_equal(out.v[0], NOBJ);
    assert_int_equal(out.v[1], NOBJ);
    assert_int_equal(out.v[2], NOBJ);
    assert_int_equal(out.v[3], NOBJ);
}

static char g_out[65536];

/* ckpt-inspect verify ROOT: its exit status; output in g_out. */
static int inspect_verify(const char *root)
{
    char *const argv[] = {(char *)g_inspect, "verify", (char *)root, NULL};
    return rel_run(argv, g_out, sizeof g_out);
}

/* The output has a line starting with `start` that holds every needle. */
static int has_line(const char *start, ...)
{
    for (const char *l = g_out; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        char line[4096];
        if (len >= sizeof line || strncmp(l, start, strlen(start)) != 0)
            continue;
        memcpy(line, l, len);
        line[len] = 0;
        va_list ap;
        const char *needle;
        int ok = 1;
        va_start(ap, start);
        while ((needle = va_arg(ap, const char *)) != NULL)
            ok = ok && strstr(line, needle) != NULL;
        va_end(ap);
        if (ok)
            return 1;
    }
    return 0;
}

/* verify must fail (exit 1, not a crash) and report `rank`, never the
 * other (intact) rank. */
static void expect_inspect_fails(const char *root, int rank)
{
    char me[32], other[32];
    int rc = inspect_verify(root);
    if (rc != 1)
        fail_msg("ckpt-inspect verify %s: exit %d, expected 1:\n%s", root, rc, g_out);
    snprintf(me, sizeof me, "rank %d: ", rank);
    snprintf(other, sizeof other, "rank %d: ", 1 - rank);
    if (!has_line(me, NULL))
        fail_msg("ckpt-inspect verify does not name rank %d:\n%s", rank, g_out);
    if (has_line(other, NULL))
        fail_msg("ckpt-inspect verify reports the intact rank %d:\n%s", 1 - rank, g_out);
}

static void expect_inspect_ok(const char *root)
{
    int rc = inspect_verify(root);
    const char *end = g_out + strlen(g_out);
    while (end > g_out && end[-1] == '\n')
        end--;
    if (rc != 0 || end - g_out < 2 || strncmp(end - 2, "OK", 2) != 0)
        fail_msg("ckpt-inspect verify %s: exit %d, expected 0 and a line ending in OK:\n%s", root,
                 rc, g_out);
}

static void data_path(char *out, size_t n, const char *root, int rank, const char *file)
{
    snprintf(out, n, "%s/rank-%d/%s", root, rank, file);
}

/* Bytes of a file, malloc'ed. */
static char *slurp(const char *path, long *len)
{
    FILE *f = fopen(path, "rb");
    *len = rel_file_size(path);
    assert_non_null(f);
    assert_true(*len >= 0);
    char *b = malloc((size_t)*len + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)*len, f), (size_t)*len);
    fclose(f);
    return b;
}

/* The file at path still holds `before` (len bytes, from slurp), which is
 * freed. */
static void assert_unchanged(const char *path, char *before, long len)
{
    long after_len;
    char *after = slurp(path, &after_len);
    assert_int_equal(len, after_len);
    assert_memory_equal(before, after, (size_t)len);
    free(before);
    free(after);
}

/* ------------------------------------------------------------------ */
/* the cases                                                           */
/* ------------------------------------------------------------------ */

/* The undamaged copy passes everything (the baseline the cases rely on). */
static void test_pristine(void **state)
{
    struct tu_case *f = *state;
    expect_intact(f->root, 0);
    expect_intact(f->root, 1);
    expect_inspect_ok(f->root);
}

static void truncate_to(const char *root, int rank, long size)
{
    char p[2048];
    data_path(p, sizeof p, root, rank, "data.mdb");
    assert_int_equal(truncate(p, size), 0);
}

/* A data.mdb cut shorter than its last committed page: a clear CORRUPT,
 * never a SIGBUS from touching the map past the end of the file. */
static void test_truncated(void **state)
{
    struct tu_case *f = *state;
    char p[2048], work[1024], saved[1024], sz[64];
    data_path(p, sizeof p, f->root, 0, "data.mdb");
    long full = rel_file_size(p);
    assert_true(full > 16 * 4096);
    const long sizes[] = {full / 2, full - 1, full - 4096, 3 * 4096 + 100, 8192};
    snprintf(saved, sizeof saved, "%s/saved", f->dir);
    assert_int_equal(rel_copytree(f->root, saved), 0);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        snprintf(work, sizeof work, "%s/t%zu", f->dir, i);
        assert_int_equal(rel_copytree(saved, work), 0);
        truncate_to(work, 0, sizes[i]);
        snprintf(sz, sizeof sz, "truncated: %ld bytes", sizes[i]);
        expect_refused(work, 0, CKPT_E_CORRUPT, "rank-0/data.mdb", sz, "last committed page", NULL);
        expect_inspect_fails(work, 0);
        if (!has_line("rank 0: ", "truncated", NULL))
            fail_msg("ckpt-inspect verify does not say rank 0 is truncated:\n%s", g_out);
        expect_intact(work, 1);
        /* the refused opens left the file as it was */
        char wp[2048];
        data_path(wp, sizeof wp, work, 0, "data.mdb");
        assert_int_equal(rel_file_size(wp), sizes[i]);
    }
}

/* Cut into LMDB's own header (the two meta pages): LMDB refuses it, and
 * the store says the file is not a usable LMDB environment. */
static void test_truncated_header(void **state)
{
    struct tu_case *f = *state;
    const long sizes[] = {4096, 100};
    char work[1024];
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        snprintf(work, sizeof work, "%s/h%zu", f->dir, i);
        assert_int_equal(rel_copytree(f->root, work), 0);
        truncate_to(work, 0, sizes[i]);
        expect_refused(work, 0, CKPT_E_CORRUPT, "rank-0/data.mdb", NULL);
        expect_inspect_fails(work, 0);
        expect_intact(work, 1);
    }
}

/* Cut to nothing: no committed data at all is left, which a restart must
 * not take for a fresh store. */
static void test_truncated_empty(void **state)
{
    struct tu_case *f = *state;
    truncate_to(f->root, 0, 0);
    expect_refused(f->root, 0, CKPT_E_CORRUPT, "rank-0/data.mdb", "empty", NULL);
    expect_inspect_fails(f->root, 0);
    expect_intact(f->root, 1);
}

/* A flipped bit inside a record of object `victim` of rank (where its
 * text `needle` stands), in database db: LMDB has no checksums, so the
 * store opens, but the record's own (format 4) no longer holds. Lookups of
 * it and the rebuild say so (CKPT_E_CORRUPT), naming rank, database and
 * key; ckpt-inspect verify has a line `line` (with `token` in it, unless
 * NULL); every other record, and the other rank, are still there. */
static void bitflip_case(const struct tu_case *f, int rank, long victim, const char *needle,
                         const char *db, const char *line, const char *token)
{
    char why[256], hex[17], key[64], file[32];
    int k = rel_flip_after(f->root, rank, needle, why, sizeof why);
    if (k <= 0)
        fail_msg("flip: %s", k < 0 ? why : "record not found in data.mdb");
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)g_ids[rank][victim]);
    snprintf(key, sizeof key, "rank %d, database %s, key", rank, db);
    snprintf(file, sizeof file, "rank-%d/data.mdb", rank);

    struct rel_outcome out;
    expect("read-only open", probe_open_ro, f->root, rank, 0, &out);
    /* map restart: every object but the victim is complete; the victim's
     * lookup is CKPT_E_CORRUPT, naming the rank, database and key */
    expect("map restart", probe_map, f->root, rank, CKPT_E_CORRUPT, &out);
    assert_int_equal(out.v[0], NOBJ - 1);
    assert_int_equal(out.v[1], 0);
    assert_int_equal(out.v[2], 1);
    assert_int_equal(out.v[3], victim);
    has(out.msg, key, "map lookup");
    has(out.msg, "checksum mismatch", "map lookup");
    has(out.msg, hex, "map lookup");
    /* rebuild: stops with CKPT_E_CORRUPT instead of skipping the record */
    expect("rebuild restart", probe_rebuild, f->root, rank, CKPT_E_CORRUPT, &out);
    has(out.msg, file, "rebuild");
    has(out.msg, key, "rebuild");
    has(out.msg, hex, "rebuild");

    expect_inspect_fails(f->root, rank);
    if (!has_line(line, token, NULL))
        fail_msg("ckpt-inspect verify has no line with \"%s\"%s%s:\n%s", line,
                 token ? " and " : "", token ? token : "", g_out);
    expect_intact(f->root, 1 - rank);
}

/* ... inside an object record (its data location) */
static void test_bitflip_object(void **state)
{
    char loc[64], id[32];
    const long victim = 137;
    rel_obj_loc(loc, sizeof loc, 0, victim);
    snprintf(id, sizeof id, "%llu", (unsigned long long)g_ids[0][victim]);
    bitflip_case(*state, 0, victim, loc, "obj", "rank 0: obj: ", id);
}

/* LMDB's free-page list (database 0) damaged: LMDB reads that list at a
 * writer's first page allocation and trusts the counts and sizes on its
 * pages (reliability_damaged_random once caught LMDB copying past a heap
 * buffer there). Two kinds: a record's page count raised far above what
 * its value holds (LMDB's page walk finds nothing wrong), and the list's
 * root page overwritten with garbage. A map restart still opens the rank
 * and reads every record (it reads nothing of the list); its first write
 * transaction (the first new id's commit) is refused, naming the list (or
 * the fault LMDB hit reading it), before anything is written; a reader
 * still opens it; the other rank is untouched. */
static void free_list_case(void **state, int garbage)
{
    struct tu_case *f = *state;
    char p[2048];
    uint8_t meta[2][4096], pg_buf[4096];
    uint64_t root[2], txn[2];
    data_path(p, sizeof p, f->root, 0, "data.mdb");
    FILE *fp = fopen(p, "r+b");
    assert_non_null(fp);
    assert_int_equal(fread(meta, 1, sizeof meta, fp), sizeof meta);
    /* MDB_meta after the 16-byte page header: magic, version (4 bytes
     * each), address, map size (8 each), then the free list's MDB_db (its
     * root at byte 40 of the 48), the main database's, the last page and
     * the transaction id */
    for (int m = 0; m < 2; m++) {
        memcpy(&root[m], meta[m] + 16 + 24 + 40, 8);
        memcpy(&txn[m], meta[m] + 16 + 24 + 96 + 8, 8);
    }
    uint64_t pg = txn[0] > txn[1] ? root[0] : root[1];
    assert_true(pg >= 2 && pg != UINT64_MAX); /* the pristine store has a free list */
    assert_int_equal(fseek(fp, (long)(pg * 4096), SEEK_SET), 0);
    assert_int_equal(fread(pg_buf, 1, sizeof pg_buf, fp), sizeof pg_buf);
    if (garbage) {
        uint64_t x = 6;
        for (size_t i = 0; i < sizeof pg_buf; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            pg_buf[i] = (uint8_t)(x >> 56);
        }
    } else {
        /* a leaf (flags at byte 10): its first node (offset at byte 16):
         * data size (2 + 2 bytes), flags, key size, key, then the value,
         * whose first word is the count */
        uint16_t flags, off, ksize, nflags;
        memcpy(&flags, pg_buf + 10, 2);
        assert_true(flags & 0x02);
        memcpy(&off, pg_buf + 16, 2);
        memcpy(&nflags, pg_buf + off + 4, 2);
        memcpy(&ksize, pg_buf + off + 6, 2);
        assert_int_equal(nflags & 0x01, 0); /* the value is on the page */
        uint64_t count = 1u << 20;
        memcpy(pg_buf + off + 8 + ksize, &count, 8);
    }
    assert_int_equal(fseek(fp, (long)(pg * 4096), SEEK_SET), 0);
    assert_int_equal(fwrite(pg_buf, 1, sizeof pg_buf, fp), sizeof pg_buf);
    assert_int_equal(fclose(fp), 0);

    /* LMDB may fault on the garbage while the list is checked: the guard
     * turns that into the same error, as in a server (ckpt-workload and
     * the tools install it) */
    struct rel_outcome out;
    assert_int_equal(ckpt_fault_guard_install(), 0);
    expect("read-only open", probe_open_ro, f->root, 0, 0, &out);
    expect("map restart", probe_map, f->root, 0, 0, &out);
    assert_int_equal(out.v[0], NOBJ);
    expect("a write after a map restart", probe_map_write, f->root, 0, CKPT_E_CORRUPT, &out);
    assert_int_equal(out.v[0], NOBJ); /* every record read before the refusal */
    has(out.msg, "rank-0/data.mdb", "the first write");
    if (garbage) {
        if (strstr(out.msg, "free-page list is damaged") == NULL && strstr(out.msg, "faulted") == NULL)
            fail_msg("first write: \"%s\" names neither the free-page list nor a fault", out.msg);
    } else {
        has(out.msg, "free-page list is damaged", "the first write");
        has(out.msg, "count does not match its size", "the first write");
    }
    /* nothing was written: the damage is where it was, the records too */
    expect("read-only open", probe_open_ro, f->root, 0, 0, &out);
    expect("map restart", probe_map, f->root, 0, 0, &out);
    assert_int_equal(out.v[0], NOBJ);
    ckpt_fault_guard_uninstall();
    expect_intact(f->root, 1);
}

static void test_damaged_free_list_count(void **state)
{
    free_list_case(state, 0);
}

static void test_damaged_free_list_garbage(void **state)
{
    free_list_case(state, 1);
}

/* a lookup by name of the rank's object 137, read-only: its result code,
 * the message in out->msg */
static int probe_by_name(void *arg, struct rel_outcome *out)
{
    const struct probe *p = arg;
    char name[64];
    ckpt_store *st = NULL;
    ckpt_rtxn *tx = NULL;
    uint64_t id;
    ckpt_val v;
    rel_obj_name(name, sizeof name, p->rank, 137);
    int rc = ckpt_store_open_readonly(&st, p->root, p->rank);
    if (rc == 0 && (rc = ckpt_rtxn_begin(&tx, st)) == 0)
        rc = ckpt_get_obj_by_name(&id, &v, tx, name, strlen(name), 0);
    if (rc)
        snprintf(out->msg, sizeof out->msg, "%s", ckpt_errmsg());
    ckpt_rtxn_end(tx);
    ckpt_store_close(st);
    return rc;
}

static int count_cb(const ckpt_val *k, const ckpt_val *v, void *payload)
{
    (void)k;
    (void)v;
    ++*(long *)payload;
    return 0;
}

/* the kvtags of the rank's object 137, read-only (a prefix scan): its
 * result code, the message in out->msg, v[0] = kvtags seen */
static int probe_kvtags(void *arg, struct rel_outcome *out)
{
    const struct probe *p = arg;
    ckpt_store *st = NULL;
    ckpt_rtxn *tx = NULL;
    int rc = ckpt_store_open_readonly(&st, p->root, p->rank);
    if (rc == 0 && (rc = ckpt_rtxn_begin(&tx, st)) == 0)
        rc = ckpt_iter_kvtags(tx, g_ids[p->rank][137], count_cb, &out->v[0]);
    if (rc)
        snprintf(out->msg, sizeof out->msg, "%s", ckpt_errmsg());
    ckpt_rtxn_end(tx);
    ckpt_store_close(st);
    return rc;
}

/* the tag index, read-only: the lookup of the rank's object 137 under
 * REL_TAG, then the scan of every object with REL_TAG (v[0] = owners
 * seen). The scan's result code when the lookup is CKPT_E_CORRUPT (both
 * must be), else the lookup's (1: it found the entry); the message in
 * out->msg. */
static int probe_tagged(void *arg, struct rel_outcome *out)
{
    const struct probe *p = arg;
    ckpt_store *st = NULL;
    ckpt_rtxn *tx = NULL;
    uint8_t key[CKPT_NAMEKEY_MAX + 8];
    size_t klen = ckpt_key_name(key, REL_TAG, strlen(REL_TAG));
    ckpt_val v;
    ckpt_key_u64(key + klen, g_ids[p->rank][137]);
    int rc = ckpt_store_open_readonly(&st, p->root, p->rank);
    if (rc == 0 && (rc = ckpt_rtxn_begin(&tx, st)) == 0) {
        rc = ckpt_get_raw(&v, tx, CKPT_DB_TAG_INDEX, key, klen + 8);
        if (rc == CKPT_E_CORRUPT)
            rc = ckpt_iter_tagged(tx, REL_TAG, strlen(REL_TAG), count_cb, &out->v[0]);
        else if (rc == 0)
            rc = 1; /* "found": not the answer sought, and no error code */
    }
    if (rc)
        snprintf(out->msg, sizeof out->msg, "%s",
                 rc == 1 ? "the lookup found the entry" : ckpt_errmsg());
    ckpt_rtxn_end(tx);
    ckpt_store_close(st);
    return rc;
}

/* The leaf page of database db of rank 0 that holds key overwritten with
 * garbage that keeps a leaf's flag bit. LMDB checks nothing more of a page
 * it reaches: it searches the garbage like a leaf and finds nothing, and
 * "nothing there" would be a wrong answer. The search through fn must be
 * CKPT_E_CORRUPT naming db (the page, or the fault LMDB hit on it), and
 * ckpt-inspect sub ROOT opt arg must fail naming the rank; rank 1 stays
 * intact.
 * Seeds 1-8 vary the garbage (the search ends on the page, or faults);
 * seed 0 makes it one node whose key sorts first, so the search runs off
 * the page's end onto the next leaf, whose keys are sound. With an item
 * (db DUPSORT|DUPFIXED), the page is the packed leaf of key's
 * sub-database that holds the item, and the garbage keeps its flags. */
static void garbage_leaf_case(const struct tu_case *f, const char *from, const char *db,
                              const void *key, size_t klen, const void *item, size_t ilen,
                              const char *what, rel_fn fn, const char *sub, const char *opt,
                              const char *arg)
{
    char why[256], root[600], p[2048];
    uint8_t page[REL_PAGE];
    assert_int_equal(ckpt_fault_guard_install(), 0);
    for (uint64_t seed = 0; seed <= 8; seed++) {
        snprintf(root, sizeof root, "%s/leaf-%llu", f->dir, (unsigned long long)seed);
        assert_int_equal(rel_copytree(from, root), 0);
        long pg = item ? rel_dup_page(root, 0, db, key, klen, item, ilen, why, sizeof why)
                       : rel_leaf_page(root, 0, db, key, klen, why, sizeof why);
        if (pg < 2)
            fail_msg("finding the leaf page of %s: %s", db,
                     pg < 0 ? why : pg == 0 ? "a sub-page" : "a meta page");
        uint64_t x = seed;
        for (size_t i = 0; i < sizeof page; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            page[i] = (uint8_t)(x >> 56);
        }
        page[10] = item ? 0x22 : 0x02; /* MDB_page.mp_flags: P_LEAF (| P_LEAF2) */
        page[11] = 0;
        if (seed == 0 && item) {
            /* mp_lower 18 (one item), mp_upper 4090, item 0 at 16 */
            static const uint8_t one[] = {18, 0, 0xfa, 0x0f, 0, 0, 0, 0, 0, 0, 0, 0};
            memcpy(page + 12, one, sizeof one);
        } else if (seed == 0) {
            /* mp_lower 18 (one node), mp_upper 4080, the node at 4080: no
             * data, key size 1, key 0x00 */
            static const uint8_t one[] = {18, 0, 0xf0, 0x0f, 0xf0, 0x0f};
            static const uint8_t node[] = {0, 0, 0, 0, 0, 0, 1, 0, 0x00};
            memcpy(page + 12, one, sizeof one);
            memcpy(page + 4080, node, sizeof node);
        }
        data_path(p, sizeof p, root, 0, "data.mdb");
        FILE *fp = fopen(p, "r+b");
        assert_non_null(fp);
        assert_int_equal(fseek(fp, pg * REL_PAGE, SEEK_SET), 0);
        assert_int_equal(fwrite(page, 1, sizeof page, fp), sizeof page);
        assert_int_equal(fclose(fp), 0);

        struct rel_outcome out;
        expect(what, fn, root, 0, CKPT_E_CORRUPT, &out);
        has(out.msg, "rank-0/data.mdb", what);
        has(out.msg, db, what);
        char *const argv[] = {(char *)g_inspect, (char *)sub, root, (char *)opt, (char *)arg, NULL};
        int rc = rel_run(argv, g_out, sizeof g_out);
        if (rc != 1 || strstr(g_out, "rank-0") == NULL)
            fail_msg("seed %llu: ckpt-inspect %s %s %s: exit %d, expected 1 naming rank-0:\n%s",
                     (unsigned long long)seed, sub, opt, arg, rc, g_out);
        expect_intact(root, 1);
        tu_rmtree(root);
    }
    ckpt_fault_guard_uninstall();
}

/* ... the name index's leaf holding an object's name: the lookup by name */
static void test_garbage_name_leaf(void **state)
{
    char name[64];
    uint8_t key[CKPT_NAMEKEY_MAX];
    rel_obj_name(name, sizeof name, 0, 137);
    size_t klen = ckpt_key_name(key, name, strlen(name));
    assert_true(klen > 0);
    garbage_leaf_case(*state, g_pristine, "obj_name", key, klen, NULL, 0, "lookup by name",
                      probe_by_name, "get", "--name", name);
}

/* ... the kvtag leaf holding an object's kvtags: the scan of its kvtags */
static void test_garbage_kvtag_leaf(void **state)
{
    char id[32];
    uint8_t key[8];
    ckpt_key_u64(key, g_ids[0][137]);
    snprintf(id, sizeof id, "%llu", (unsigned long long)g_ids[0][137]);
    garbage_leaf_case(*state, g_pristine, "kvtag", key, sizeof key, NULL, 0, "kvtag scan",
                      probe_kvtags, "get", "--id", id);
}

/* rank 0's delta merged into its tag index */
static void merge_rank0(const char *root)
{
    struct ckpt_store_opts o = CKPT_STORE_OPTS_INIT;
    ckpt_store *st = NULL;
    o.root = root;
    o.rank = 0;
    o.nranks = NRANKS;
    assert_int_equal(ckpt_store_open(&st, &o), 0);
    assert_int_equal(ckpt_store_merge_tags(st), 0);
    assert_int_equal(ckpt_store_close(st), 0);
}

/* ... the tag index's leaf holding a kvtag name, once rank 0's delta is
 * merged into it: the lookup of one owner under the name and the scan of
 * the name's owners */
static void test_garbage_tagidx_leaf(void **state)
{
    const struct tu_case *f = *state;
    struct rel_outcome out;
    uint8_t key[CKPT_NAMEKEY_MAX];
    size_t klen = ckpt_key_name(key, REL_TAG, strlen(REL_TAG));
    merge_rank0(f->root);
    expect("tag index lookup", probe_tagged, f->root, 0, 1, &out);
    garbage_leaf_case(f, f->root, "kvtag_name", key, klen, NULL, 0, "tag index lookup and scan",
                      probe_tagged, "find", "--tag", REL_TAG);
}

/* ... the page of the name's sub-database that holds object 137 among the
 * name's owners (LMDB's packed duplicates): the same searches */
static void test_garbage_tagidx_owners(void **state)
{
    const struct tu_case *f = *state;
    uint8_t key[CKPT_NAMEKEY_MAX], owner[8];
    size_t klen = ckpt_key_name(key, REL_TAG, strlen(REL_TAG));
    ckpt_key_u64(owner, g_ids[0][137]);
    merge_rank0(f->root);
    garbage_leaf_case(f, f->root, "kvtag_name", key, klen, owner, sizeof owner,
                      "tag index lookup and scan", probe_tagged, "find", "--tag", REL_TAG);
}

/* ... the same owners' page with only its item count damaged: its header
 * stays consistent (lower <= upper <= page size) but counts 1,000 owner
 * ids, more than a page holds, so LMDB searches on into the pages after
 * it and may find (or miss) the owner there, on a sound page. The lookup
 * and the scan must still be CKPT_E_CORRUPT naming kvtag_name. */
static void test_damaged_tagidx_owner_count(void **state)
{
    const struct tu_case *f = *state;
    char why[256], root[600], p[2048];
    uint8_t key[CKPT_NAMEKEY_MAX], owner[8];
    size_t klen = ckpt_key_name(key, REL_TAG, strlen(REL_TAG));
    ckpt_key_u64(owner, g_ids[0][137]);
    merge_rank0(f->root);
    snprintf(root, sizeof root, "%s/count", f->dir);
    assert_int_equal(rel_copytree(f->root, root), 0);
    long pg = rel_dup_page(root, 0, "kvtag_name", key, klen, owner, sizeof owner, why, sizeof why);
    if (pg < 2)
        fail_msg("finding the owners' page: %s", pg < 0 ? why : "a sub-page");
    /* mp_lower 16 + 2 * 1000, mp_upper 4096 */
    static const uint8_t hdr[] = {0xe0, 0x07, 0x00, 0x10};
    data_path(p, sizeof p, root, 0, "data.mdb");
    FILE *fp = fopen(p, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, pg * REL_PAGE + 12, SEEK_SET), 0);
    assert_int_equal(fwrite(hdr, 1, sizeof hdr, fp), sizeof hdr);
    assert_int_equal(fclose(fp), 0);
    struct rel_outcome out;
    assert_int_equal(ckpt_fault_guard_install(), 0);
    expect("tag index lookup and scan", probe_tagged, root, 0, CKPT_E_CORRUPT, &out);
    has(out.msg, "rank-0/data.mdb", "lookup");
    has(out.msg, "kvtag_name", "lookup");
    char *const argv[] = {(char *)g_inspect, "find", root, "--tag", REL_TAG, NULL};
    int rc = rel_run(argv, g_out, sizeof g_out);
    if (rc != 1 || strstr(g_out, "rank-0") == NULL)
        fail_msg("ckpt-inspect find --tag: exit %d, expected 1 naming rank-0:\n%s", rc, g_out);
    expect_intact(root, 1);
    ckpt_fault_guard_uninstall();
    tu_rmtree(root);
}

/* ... inside a kvtag record (its value) */
static void test_bitflip_kvtag(void **state)
{
    char val[64];
    const long victim = 42;
    rel_tag_val(val, sizeof val, 1, victim);
    bitflip_case(*state, 1, victim, val, "kvtag", "rank 1: kvtag", NULL);
}

/* lock.mdb is LMDB's reader table, rebuilt at open; writer.lock is the
 * store's flock file: losing either loses nothing. */
static void test_missing_lock(void **state)
{
    struct tu_case *f = *state;
    char p[2048];
    data_path(p, sizeof p, f->root, 0, "lock.mdb");
    assert_int_equal(unlink(p), 0);
    data_path(p, sizeof p, f->root, 1, "lock.mdb");
    assert_int_equal(unlink(p), 0);
    data_path(p, sizeof p, f->root, 1, "writer.lock");
    assert_int_equal(unlink(p), 0);
    expect_intact(f->root, 0);
    expect_intact(f->root, 1);
    expect_inspect_ok(f->root);
}

/* A store written by a newer pdc-ckpt: refused, naming both versions, and
 * left untouched (no generation bump, no meta rewrite). */
static void test_newer_version(void **state)
{
    struct tu_case *f = *state;
    char why[256], p[2048];
    long before_len;
    assert_int_equal(rel_set_meta_version(f->root, 0, CKPT_FORMAT_VERSION + 1, why, sizeof why), 0);
    data_path(p, sizeof p, f->root, 0, "data.mdb");
    char *before = slurp(p, &before_len);
    char newer[48], ours[32], theirs[32];
    snprintf(newer, sizeof newer, "version %u is newer", CKPT_FORMAT_VERSION + 1);
    snprintf(theirs, sizeof theirs, "version %u", CKPT_FORMAT_VERSION + 1);
    snprintf(ours, sizeof ours, "version %u", CKPT_FORMAT_VERSION);
    expect_refused(f->root, 0, CKPT_E_VERSION, "rank-0", newer, ours, NULL);
    expect_inspect_fails(f->root, 0);
    if (!has_line("rank 0: ", theirs, NULL))
        fail_msg("ckpt-inspect verify does not name the version:\n%s", g_out);
    assert_unchanged(p, before, before_len);
    expect_intact(f->root, 1);
}

/* An older version this build cannot migrate is refused too. */
static void test_older_version(void **state)
{
    struct tu_case *f = *state;
    char why[256];
    assert_int_equal(rel_set_meta_version(f->root, 1, 0, why, sizeof why), 0);
    expect_refused(f->root, 1, CKPT_E_VERSION, "rank-1", "version 0", NULL);
    expect_inspect_fails(f->root, 1);
    expect_intact(f->root, 0);
}

/* A missing rank directory: every way in says there is no store there;
 * a restart must not start an empty store in its place. */
static void test_missing_rank_dir(void **state)
{
    struct tu_case *f = *state;
    char p[2048];
    snprintf(p, sizeof p, "%s/rank-1", f->root);
    assert_int_equal(tu_rmtree(p), 0);
    expect_refused(f->root, 1, CKPT_E_NOSTORE, f->root, "rank directory missing", NULL);
    struct stat sb;
    if (stat(p, &sb) == 0)
        fail_msg("a refused restart created %s", p);
    expect_inspect_fails(f->root, 1);
    if (!has_line("rank 1: ", "missing", NULL))
        fail_msg("ckpt-inspect verify does not say rank 1 is missing:\n%s", g_out);
    expect_intact(f->root, 0);
}

/* The rank directory is there but data.mdb is not. */
static void test_missing_data_file(void **state)
{
    struct tu_case *f = *state;
    char p[2048];
    data_path(p, sizeof p, f->root, 0, "data.mdb");
    assert_int_equal(unlink(p), 0);
    expect_refused(f->root, 0, CKPT_E_NOSTORE, f->root, "data.mdb missing", NULL);
    if (rel_file_size(p) >= 0)
        fail_msg("a refused restart created %s", p);
    expect_inspect_fails(f->root, 0);
    expect_intact(f->root, 1);
}

/* Another program's LMDB environment where rank 0's store should be: not
 * a pdc-ckpt store, and nothing is written into it. */
static void test_foreign_lmdb(void **state)
{
    struct tu_case *f = *state;
    char why[256], p[2048];
    for (int meta_db = 0; meta_db <= 1; meta_db++) {
        long before_len;
        if (rel_make_foreign(f->root, 0, meta_db, why, sizeof why) != 0)
            fail_msg("%s", why);
        data_path(p, sizeof p, f->root, 0, "data.mdb");
        char *before = slurp(p, &before_len);
        expect_refused(f->root, 0, CKPT_E_NOTSTORE, "rank-0/data.mdb", "not a pdc-ckpt store", NULL);
        expect_inspect_fails(f->root, 0);
        if (!has_line("rank 0: ", "not a pdc-ckpt store", NULL))
            fail_msg("ckpt-inspect verify does not say rank 0 is not a store:\n%s", g_out);
        assert_unchanged(p, before, before_len);
    }
    expect_intact(f->root, 1);
}

/* A data.mdb that is not an LMDB file at all. */
static void test_not_lmdb(void **state)
{
    struct tu_case *f = *state;
    char p[2048];
    data_path(p, sizeof p, f->root, 1, "data.mdb");
    FILE *fp = fopen(p, "wb");
    assert_non_null(fp);
    uint64_t s = 8;
    for (int i = 0; i < 65536 / 8; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        fwrite(&s, 8, 1, fp);
    }
    fclose(fp);
    expect_refused(f->root, 1, CKPT_E_CORRUPT, "rank-1/data.mdb", "not an LMDB file", NULL);
    expect_inspect_fails(f->root, 1);
    expect_intact(f->root, 0);
}

/* What a writer killed during its very first open leaves: an LMDB
 * environment with nothing committed. Nothing was lost, but a restart has
 * nothing to restart from and must say so (and must not crash); the
 * writer's ckpt_hooks_open starts the store afresh. */
static void test_interrupted_creation(void **state)
{
    struct tu_case *f = *state;
    char why[256];
    if (rel_make_empty_env(f->root, 1, why, sizeof why) != 0)
        fail_msg("%s", why);
    expect_refused(f->root, 1, CKPT_E_NOSTORE, "rank-1/data.mdb", "nothing was committed", NULL);
    expect_inspect_fails(f->root, 1);
    expect_intact(f->root, 0);
    /* open (not restart) takes it as the fresh store it is */
    struct ckpt_hooks_opts o = opts_for(f->root, 1);
    ckpt_hooks *h;
    uint64_t cont = 0;
    assert_int_equal(ckpt_hooks_open(&h, &o), 0);
    assert_int_equal(rel_write_objs(h, 1, 0, NOBJ, &cont, NULL), 0);
    assert_int_equal(ckpt_hooks_close(h), 0);
    expect_intact(f->root, 1);
}



/* ------------------------------------------------------------------ */
/* the fault guard itself                                              */
/* ------------------------------------------------------------------ */

static int count_entries(const ckpt_val *k, const ckpt_val *v, void *p)
{
    (void)k;
    (void)v;
    ((long *)p)[0]++;
    return 0;
}

/* data.mdb cut to its first 2 pages after the store was opened: reading
 * the obj tree touches the map past the end of the file (SIGBUS). v =
 * {rc of the iteration, rc of the next rtxn_begin}. */
static int probe_sigbus(void *arg, struct rel_outcome *out)
{
    const struct probe *p = arg;
    char data[700];
    ckpt_store *st;
    ckpt_rtxn *tx;
    long n = 0;
    int rc;
    if (ckpt_fault_guard_install() != 0)
        return -1000;
    if ((rc = ckpt_store_open_readonly(&st, p->root, p->rank)) != 0) {
        snprintf(out->msg, sizeof out->msg, "open: %s", ckpt_errmsg());
        return rc;
    }
    /* a first transaction finds where the map is (read.c, map_base) */
    if ((rc = ckpt_rtxn_begin(&tx, st)) != 0)
        return rc;
    ckpt_rtxn_end(tx);
    snprintf(data, sizeof data, "%s/rank-%d/data.mdb", p->root, p->rank);
    if (truncate(data, 2 * REL_PAGE) != 0)
        return -1001;
    if ((rc = ckpt_rtxn_begin(&tx, st)) != 0) {
        snprintf(out->msg, sizeof out->msg, "rtxn_begin: %s", ckpt_errmsg());
        return rc;
    }
    out->v[0] = ckpt_iter(tx, CKPT_DB_OBJ, NULL, 0, count_entries, &n);
    snprintf(out->msg, sizeof out->msg, "%s", ckpt_errmsg());
    ckpt_rtxn_end(tx);
    out->v[1] = ckpt_rtxn_begin(&tx, st);
    if (out->v[1] == 0)
        ckpt_rtxn_end(tx);
    ckpt_store_close(st);
    return 0;
}

/* A fault inside the store's read is CKPT_E_CORRUPT naming the file, the
 * database and the page; the handle is failed afterwards. */
static void test_fault_in_a_read_is_an_error(void **state)
{
    struct tu_case *f = *state;
    struct probe p = {f->root, 1};
    struct rel_outcome o;
    rel_in_child(&o, probe_sigbus, &p);
    if (o.crashed || o.rc != 0)
        fail_msg("crashed %d (signal %d), rc %d: %s", o.crashed, o.sig, o.rc, o.msg);
    assert_int_equal(o.v[0], CKPT_E_CORRUPT);
    has(o.msg, "rank-1/data.mdb: iterating obj: reading it faulted (SIGBUS) at page ", "fault");
    assert_int_equal(o.v[1], CKPT_E_FAILED);
}

static volatile sig_atomic_t g_prev_hits;

static void prev_handler(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    g_prev_hits++;
    _exit(si != NULL && si->si_signo == SIGSEGV ? 42 : 43);
}

/* v = {what the previous handler saw (exit status of a grandchild),
 * handler restored by uninstall} */
static int probe_chain(void *arg, struct rel_outcome *out)
{
    struct sigaction sa, now;
    (void)arg;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = prev_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    if (ckpt_fault_guard_install() != 0)
        return -1000;
    pid_t pid = fork();
    if (pid == 0) {
        raise(SIGSEGV); /* outside any of the store's calls: not ours */
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    out->v[0] = WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
    ckpt_fault_guard_uninstall();
    sigaction(SIGSEGV, NULL, &now);
    out->v[1] = (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == prev_handler;
    /* with no handler before: dies of the signal, as without the guard */
    signal(SIGSEGV, SIG_DFL);
    ckpt_fault_guard_install();
    pid = fork();
    if (pid == 0) {
        raise(SIGSEGV);
        _exit(0);
    }
    waitpid(pid, &st, 0);
    out->v[2] = WIFSIGNALED(st) ? WTERMSIG(st) : -WEXITSTATUS(st);
    ckpt_fault_guard_uninstall();
    return 0;
}

/* The handlers chain: a fault outside the store goes to the handler that
 * was there before (or kills as SIG_DFL would); uninstall restores it. */
static void test_fault_handlers_chain(void **state)
{
    struct rel_outcome o;
    (void)state;
    rel_in_child(&o, probe_chain, NULL);
    if (o.crashed || o.rc != 0)
        fail_msg("crashed %d (signal %d), rc %d: %s", o.crashed, o.sig, o.rc, o.msg);
    assert_int_equal(o.v[0], 42);
    assert_int_equal(o.v[1], 1);
    assert_int_equal(o.v[2], SIGSEGV);
}

/* ------------------------------------------------------------------ */
/* seeded random page damage (issue 14, item 2)                        */
/* ------------------------------------------------------------------ */

/* Stores damaged: REL_RAND_GARBAGE seeds overwrite one page of rank 1's
 * data.mdb with garbage, REL_RAND_HEADER seeds flip bits in a page header.
 * A failing seed replays alone with REL_RAND_SEED=<seed>. */
enum { REL_RAND_GARBAGE = 40, REL_RAND_HEADER = 8, RAND_RANK = 1 };

/* Failures seen by a child: every message must name the rank's file. */
struct sweep {
    struct rel_outcome *out;
    int rank;
    long fails, unnamed;
};

static void sweep_fail(struct sweep *w, int rc, const char *what)
{
    char me[32];
    const char *m = ckpt_errmsg();
    snprintf(me, sizeof me, "rank-%d", w->rank);
    w->fails++;
    if (strstr(m, me) == NULL) {
        w->unnamed++;
        snprintf(w->out->msg, sizeof w->out->msg, "%s: %s (%s) does not name %s", what,
                 ckpt_errname(rc), m, me);
    } else if (strstr(m, "MDB_BAD_TXN") != NULL && (rc != CKPT_E_CORRUPT || !strstr(m, "damaged"))) {
        /* LMDB's "transaction must abort" after a damaged read is damage */
        w->unnamed++;
        snprintf(w->out->msg, sizeof w->out->msg, "%s: %s (%s) does not say damaged", what,
                 ckpt_errname(rc), m);
    } else if (w->out->msg[0] == 0) {
        snprintf(w->out->msg, sizeof w->out->msg, "%s: %s", what, m);
    }
}

/* Touch every byte of what the store hands out, as a decoder would. */
static int sweep_entry(const ckpt_val *k, const ckpt_val *v, void *p)
{
    unsigned long *sum = p;
    for (size_t i = 0; i < k->len; i++)
        *sum += ((const unsigned char *)k->data)[i];
    for (size_t i = 0; i < v->len; i++)
        *sum += ((const unsigned char *)v->data)[i];
    return 0;
}

static int sweep_tagged(uint64_t owner, void *payload)
{
    (void)owner;
    ((long *)payload)[0]++;
    return 0;
}

/* Every library read way in: read-only open, info, every database iterated
 * and counted, every object looked up by id and name with its kvtag; then
 * the hooks' read-only open, the census (lookups, foreach) and the tag
 * index. v = {failures, failures whose message does not name the rank}. */
static int probe_read_all(void *arg, struct rel_outcome *out)
{
    const struct probe *p = arg;
    struct sweep w = {out, p->rank, 0, 0};
    struct ckpt_hooks_opts o = opts_for(p->root, p->rank);
    struct ckpt_store_info info;
    ckpt_store *st = NULL;
    ckpt_rtxn *tx = NULL;
    ckpt_hooks *h = NULL;
    unsigned long sum = 0;
    int rc;
    if ((rc = ckpt_store_open_readonly(&st, p->root, p->rank)) != 0) {
        sweep_fail(&w, rc, "open");
    } else {
        if ((rc = ckpt_store_info(&info, st)) != 0)
            sweep_fail(&w, rc, "info");
        if ((rc = ckpt_rtxn_begin(&tx, st)) != 0) {
            sweep_fail(&w, rc, "rtxn_begin");
        } else {
            for (int db = 0; db < CKPT_DB_COUNT; db++) {
                uint64_t n;
                if ((rc = ckpt_db_stat(&n, NULL, tx, db)) != 0)
                    sweep_fail(&w, rc, "db_stat");
                if ((rc = ckpt_iter(tx, db, NULL, 0, sweep_entry, &sum)) < 0)
                    sweep_fail(&w, rc, "iter");
            }
            for (long i = 0; i < NOBJ; i++) {
                char name[64];
                ckpt_val v;
                uint64_t id;
                rel_obj_name(name, sizeof name, p->rank, i);
                if ((rc = ckpt_get_obj(&v, tx, g_ids[p->rank][i])) != 0 && rc != CKPT_E_NOTFOUND)
                    sweep_fail(&w, rc, "get_obj");
                if ((rc = ckpt_get_obj_by_name(&id, &v, tx, name, strlen(name), 0)) != 0 &&
                    rc != CKPT_E_NOTFOUND)
                    sweep_fail(&w, rc, "get_obj_by_name");
                if ((rc = ckpt_get_kvtag(&v, tx, g_ids[p->rank][i], REL_TAG, strlen(REL_TAG))) != 0 &&
                    rc != CKPT_E_NOTFOUND)
                    sweep_fail(&w, rc, "get_kvtag");
            }
            ckpt_rtxn_end(tx);
        }
        ckpt_store_close(st);
    }
    if ((rc = ckpt_hooks_open_readonly(&h, &o)) != 0) {
        sweep_fail(&w, rc, "hooks_open_readonly");
    } else {
        struct rel_census c;
        ckpt_hooks_read *r;
        long tagged = 0;
        rel_census(&c, h, p->rank, NOBJ); /* its findings are the damage's; it must not crash */
        if ((rc = ckpt_hooks_read_begin(&r, h)) != 0) {
            sweep_fail(&w, rc, "hooks_read_begin");
        } else {
            if ((rc = ckpt_hooks_foreach_tagged(r, REL_TAG, sweep_tagged, &tagged)) < 0)
                sweep_fail(&w, rc, "foreach_tagged");
            ckpt_hooks_read_end(r);
        }
        if (ckpt_hooks_close(h) != 0)
            ckpt_hooks_discard(h);
    }
    out->v[0] = w.fails;
    out->v[1] = w.unnamed;
    out->v[2] = (long)(sum & 1); /* keep the sum */
    return 0;
}

/* A restart (map with a census, or rebuild): it must fail naming the rank,
 * or come up. v[0] = 1 if the restart failed. */
static int probe_restart_any(void *arg, struct rel_outcome *out, int rebuild)
{
    const struct probe *p = arg;
    struct ckpt_hooks_opts o = opts_for(p->root, p->rank);
    const struct ckpt_rebuild_cbs cbs = {NULL, count_obj, count_kvtag, count_member, count_region};
    struct ckpt_rebuild_stats rs;
    long counts[4] = {0, 0, 0, 0};
    ckpt_hooks *h = NULL;
    int rc = rebuild ? ckpt_hooks_restart_rebuild(&h, &o, &cbs, counts, &rs)
                     : ckpt_hooks_restart_map(&h, &o);
    if (rc) {
        struct sweep w = {out, p->rank, 0, 0};
        sweep_fail(&w, rc, rebuild ? "restart_rebuild" : "restart_map");
        out->v[0] = 1;
        out->v[1] = w.unnamed;
        return 0;
    }
    if (!rebuild) {
        struct rel_census c;
        rel_census(&c, h, p->rank, NOBJ);
    }
    if (ckpt_hooks_close(h) != 0)
        ckpt_hooks_discard(h);
    return 0;
}

static int probe_restart_map_any(void *arg, struct rel_outcome *out)
{
    return probe_restart_any(arg, out, 0);
}

static int probe_restart_rebuild_any(void *arg, struct rel_outcome *out)
{
    return probe_restart_any(arg, out, 1);
}

static char g_big[4 << 20]; /* dump output */

struct rand_tally {
    long stores, runs, errors, killed;
};

/* Run ckpt-inspect with args (NULL-terminated): never killed, exit 0 or 1,
 * and an exit 1 names the damaged rank. Returns the exit status. */
static int inspect_any(struct rand_tally *t, long seed, long page, const char *root, ...)
{
    char me[32], me2[32];
    const char *cmd;
    va_list ap;
    va_start(ap, root);
    int rc = rel_run_va(-1, g_big, sizeof g_big, g_inspect, ap);
    va_end(ap);
    va_start(ap, root);
    cmd = va_arg(ap, const char *);
    va_end(ap);
    t->runs++;
    snprintf(me, sizeof me, "rank-%d", RAND_RANK);
    snprintf(me2, sizeof me2, "rank %d", RAND_RANK);
    if (rc != 0 && rc != 1) {
        t->killed++;
        fail_msg("seed %ld (page %ld): ckpt-inspect %s %s: exit %d (%s), expected 0 or 1:\n%.4000s",
                 seed, page, cmd, root, rc, rc > 128 ? strsignal(rc - 128) : "?", g_big);
    }
    if (rc == 1) {
        t->errors++;
        if (strstr(g_big, me) == NULL && strstr(g_big, me2) == NULL)
            fail_msg("seed %ld (page %ld): ckpt-inspect %s %s failed without naming %s:\n%.4000s",
                     seed, page, cmd, root, me, g_big);
        for (const char *l = strstr(g_big, "MDB_BAD_TXN"); l != NULL; l = strstr(l + 1, "MDB_BAD_TXN")) {
            const char *bol = l;
            while (bol > g_big && bol[-1] != '\n')
                bol--;
            const char *eol = strchr(l, '\n');
            int n = eol ? (int)(eol - bol) : (int)strlen(bol);
            char line[1024];
            snprintf(line, sizeof line, "%.*s", n, bol);
            if (strstr(line, "damaged") == NULL)
                fail_msg("seed %ld (page %ld): ckpt-inspect %s %s: \"%.*s\" does not say damaged",
                         seed, page, cmd, root, n, bol);
        }
    }
    (void)root;
    return rc;
}

static void rand_child(struct rand_tally *t, long seed, long page, const char *what, rel_fn fn,
                       const char *root)
{
    struct probe p = {root, RAND_RANK};
    struct rel_outcome o;
    rel_in_child(&o, fn, &p);
    t->runs++;
    if (o.crashed) {
        t->killed++;
        fail_msg("seed %ld (page %ld): %s crashed (signal %d, status %d): %s", seed, page, what,
                 o.sig, o.status, o.msg);
    }
    if (o.v[1] != 0)
        fail_msg("seed %ld (page %ld): %s: %s", seed, page, what, o.msg);
    if (o.v[0] != 0)
        t->errors++;
}

static void one_random_store(struct rand_tally *t, const char *dir, long seed)
{
    char root[600], c1[640], c2[640], why[512], id[32], name[64];
    int mode = seed <= REL_RAND_GARBAGE ? REL_DAMAGE_GARBAGE : REL_DAMAGE_HEADER;
    snprintf(root, sizeof root, "%s/s%ld", dir, seed);
    snprintf(c1, sizeof c1, "%s/copy", root);
    snprintf(c2, sizeof c2, "%s/copy-compact", root);
    if (rel_copytree(g_pristine, root) != 0)
        fail_msg("copying the pristine store to %s", root);
    long page = rel_damage_page(root, RAND_RANK, mode, (uint64_t)seed, why, sizeof why);
    if (page < 0)
        fail_msg("%s", why);
    t->stores++;
    rand_child(t, seed, page, "library reads", probe_read_all, root);
    rand_child(t, seed, page, "restart (map)", probe_restart_map_any, root);
    rand_child(t, seed, page, "restart (rebuild)", probe_restart_rebuild_any, root);
    snprintf(id, sizeof id, "%llu", (unsigned long long)g_ids[RAND_RANK][7]);
    rel_obj_name(name, sizeof name, RAND_RANK, 7);
    inspect_any(t, seed, page, root, "stat", root, NULL);
    inspect_any(t, seed, page, root, "stat", root, "--json", NULL);
    inspect_any(t, seed, page, root, "dump", root, NULL);
    inspect_any(t, seed, page, root, "dump", root, "--rank", "1", "--db", "kvtag", "--raw", NULL);
    inspect_any(t, seed, page, root, "get", root, "--id", id, NULL);
    inspect_any(t, seed, page, root, "get", root, "--name", name, NULL);
    inspect_any(t, seed, page, root, "find", root, "--tag", REL_TAG, NULL);
    inspect_any(t, seed, page, root, "verify", root, NULL);
    /* copies land outside the root (a copy inside it would be a rank-less
     * entry of the root) */
    snprintf(c1, sizeof c1, "%s/copy-%ld", dir, seed);
    snprintf(c2, sizeof c2, "%s/compact-%ld", dir, seed);
    struct stat sb;
    if (inspect_any(t, seed, page, root, "copy", root, c1, NULL) == 1 && stat(c1, &sb) == 0)
        fail_msg("seed %ld (page %ld): a failed copy left %s behind", seed, page, c1);
    if (inspect_any(t, seed, page, root, "copy", root, c2, "--compact", NULL) == 1 &&
        stat(c2, &sb) == 0)
        fail_msg("seed %ld (page %ld): a failed compacting copy left %s behind", seed, page, c2);
    tu_rmtree(c1);
    tu_rmtree(c2);
    tu_rmtree(root);
}

/* Dozens of seeded random page overwrites and header bit flips of rank 1,
 * each through every way in: library reads, both restarts (in forked
 * children), every ckpt-inspect command (as programs). No process may be
 * killed; every error must name the rank. */
static void test_random_pages(void **state)
{
    struct tu_case *f = *state;
    struct rand_tally t = {0, 0, 0, 0};
    const char *only = getenv("REL_RAND_SEED");
    /* faults inside the store's LMDB calls become errors (in the children
     * too: they inherit the handlers). Installed here, over cmocka's own
     * handlers (which it sets for each test), and chaining to them. */
    assert_int_equal(ckpt_fault_guard_install(), 0);
    if (only != NULL) {
        one_random_store(&t, f->dir, atol(only));
    } else {
        for (long seed = 1; seed <= REL_RAND_GARBAGE + REL_RAND_HEADER; seed++)
            one_random_store(&t, f->dir, seed);
    }
    ckpt_fault_guard_uninstall();
    printf("random damage: %ld stores, %ld runs (ways in), %ld clean errors, %ld killed\n",
           t.stores, t.runs, t.errors, t.killed);
    assert_int_equal(t.killed, 0);
    /* the damage must bite: most pages of the file are in use. (A map
     * restart reads few pages, none of the tag-index delta and no meta page
     * by hand on the same boot, so a run finds only the damage on its own
     * path: about one store in one, not more; half is the floor.) */
    if (only == NULL && t.errors * 2 < t.stores)
        fail_msg("only %ld of %ld runs failed: the damage did not reach the store", t.errors, t.runs);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--random") != 0)) {
        fprintf(stderr, "usage: %s CKPT-INSPECT [--random]\n", argv[0]);
        return 2;
    }
    g_inspect = argv[1];
    /* --random: only the seeded random damage (its own ctest entry, the
     * longest case) */
    const struct CMUnitTest random_tests[] = {
        cmocka_unit_test_setup_teardown(test_random_pages, setup, teardown),
    };
    if (argc == 3)
        return cmocka_run_group_tests(random_tests, group_setup, group_teardown);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pristine, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bitflip_object, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bitflip_kvtag, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_free_list_count, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_free_list_garbage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_garbage_name_leaf, setup, teardown),
        cmocka_unit_test_setup_teardown(test_garbage_kvtag_leaf, setup, teardown),
        cmocka_unit_test_setup_teardown(test_garbage_tagidx_leaf, setup, teardown),
        cmocka_unit_test_setup_teardown(test_garbage_tagidx_owners, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_tagidx_owner_count, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_lock, setup, teardown),
        cmocka_unit_test_setup_teardown(test_newer_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_older_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_rank_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_data_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_lmdb, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_lmdb, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupted_creation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fault_in_a_read_is_an_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fault_handlers_chain, setup, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
