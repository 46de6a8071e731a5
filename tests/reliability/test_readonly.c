/*
 * test_readonly.c - stores their reader cannot write (issue 14, item 4;
 * store/store.c env_open()): an archived checkpoint, a read-only mount, a
 * store after `chmod -R a-w`.
 *
 *   - every read-only way in reads such a store in full: the store's
 *     read-only open and lookups, the hooks' read-only open with a census
 *     of every record, and ckpt-inspect stat, dump, get, find, verify and
 *     copy (to a directory the reader may write);
 *   - also when lock.mdb is missing and cannot be created there (the
 *     store then opens without it, MDB_NOLOCK);
 *   - errors name the file that really failed: an unreadable data.mdb is
 *     named (not lock.mdb), a writer that cannot open lock.mdb names
 *     lock.mdb, one that cannot create writer.lock names writer.lock.
 *
 * Permissions do not bind root, so as root (CI) every reader runs as uid
 * 65534 (nobody): the library in a forked child that dropped its
 * privileges, ckpt-inspect exec'd the same way, on a store chowned to
 * 65534 and made read-only with chmod a-w. Not as root, chmod a-w on the
 * user's own store is enough. A read-only mount (EROFS) takes the same
 * path in the store as EACCES; mounting is not possible here.
 * Skips (77) only when uid 65534 cannot reach the temporary directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ckpt_hooks.h"
#include "rel_util.h"

#define NOBODY 65534
enum { NRANKS = 2, NOBJ = 50 };

static const char *g_inspect;
static long g_as = -1; /* uid the readers run as (-1: this one) */
static uint64_t g_ids[NRANKS][NOBJ];
static char g_out[1 << 20];

struct fix {
    char dir[TU_DIR_LEN]; /* first, for tu_fixture_new */
    char root[600];
    char out[600];   /* a directory the reader may write (copies) */
};

static struct ckpt_hooks_opts opts_for(const char *root, int rank)
{
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    o.store_root = root;
    o.rank = rank;
    o.nranks = NRANKS;
    o.map_size = (size_t)4 << 20;
    return o;
}

/* chown -R (as root) and chmod: directories 0555/0500, files 0444/0400 */
static int walk_chmod(const char *path, int writable, int chown_it)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return -1;
    if (chown_it && lchown(path, NOBODY, NOBODY) != 0)
        return -1;
    mode_t m = S_ISDIR(sb.st_mode) ? (writable ? 0700 : 0500) : (writable ? 0600 : 0400);
    if (chmod(path, m) != 0)
        return -1;
    if (S_ISDIR(sb.st_mode)) {
        char sub[1024];
        for (int r = 0; r < NRANKS; r++) {
            snprintf(sub, sizeof sub, "%s/rank-%d", path, r);
            if (access(sub, F_OK) == 0 && walk_chmod(sub, writable, chown_it) != 0)
                return -1;
        }
        static const char *const files[] = {"data.mdb", "lock.mdb", "writer.lock", "synced.rec"};
        for (size_t i = 0; i < 4; i++) {
            snprintf(sub, sizeof sub, "%s/%s", path, files[i]);
            if (access(sub, F_OK) == 0 && walk_chmod(sub, writable, chown_it) != 0)
                return -1;
        }
    }
    return 0;
}

/* The store as its reader sees it: read-only, owned by the reader. */
static void make_readonly(const char *root)
{
    if (walk_chmod(root, 0, g_as >= 0) != 0)
        fail_msg("%s: cannot make it read-only: %s", root, strerror(errno));
}

static int setup(void **state)
{
    struct fix *f = tu_fixture_new(sizeof *f, "readonly");
    if (f == NULL)
        return -1;
    snprintf(f->root, sizeof f->root, "%s/store", f->dir);
    snprintf(f->out, sizeof f->out, "%s/out", f->dir);
    chmod(f->dir, 0755); /* the reader (nobody) must reach the store */
    if (rel_write_store(f->root, NRANKS, NOBJ, opts_for, &g_ids[0][0]) != 0)
        return -1;
    if (mkdir(f->out, 0700) != 0 || (g_as >= 0 && chown(f->out, NOBODY, NOBODY) != 0))
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fix *f = *state;
    walk_chmod(f->root, 1, 0); /* rm needs to write the directories when not root */
    return tu_fixture_free(state);
}

/* In a forked child: become the reader. */
static int become_reader(struct rel_outcome *out)
{
    if (g_as < 0)
        return 0;
    if (setgroups(0, NULL) != 0 || setgid((gid_t)g_as) != 0 || setuid((uid_t)g_as) != 0) {
        snprintf(out->msg, sizeof out->msg, "cannot become uid %ld: %s", g_as, strerror(errno));
        return -1;
    }
    return 0;
}

struct probe {
    const char *root;
    int rank;
};

/* The store's read-only open, info and lookups, then the hooks' read-only
 * open with a census of every record. v = {objects complete, missing, bad} */
static int probe_reads(void *arg, struct rel_outcome *out)
{
    const struct probe *p = arg;
    struct ckpt_hooks_opts o = opts_for(p->root, p->rank);
    struct ckpt_store_info info;
    struct rel_census c;
    ckpt_store *st;
    ckpt_rtxn *tx;
    ckpt_hooks *h;
    ckpt_val v;
    int rc;
    if (become_reader(out) != 0)
        return -1000;
    if ((rc = ckpt_store_open_readonly(&st, p->root, p->rank)) != 0) {
        snprintf(out->msg, sizeof out->msg, "open: %s", ckpt_errmsg());
        return rc;
    }
    if ((rc = ckpt_store_info(&info, st)) == 0 && (rc = ckpt_rtxn_begin(&tx, st)) == 0) {
        rc = ckpt_get_obj(&v, tx, g_ids[p->rank][NOBJ - 1]);
        ckpt_rtxn_end(tx);
    }
    if (rc != 0)
        snprintf(out->msg, sizeof out->msg, "read: %s", ckpt_errmsg());
    ckpt_store_close(st);
    if (rc != 0)
        return rc;
    if ((rc = ckpt_hooks_open_readonly(&h, &o)) != 0) {
        snprintf(out->msg, sizeof out->msg, "hooks open: %s", ckpt_errmsg());
        return rc;
    }
    rc = rel_census_out(out, &c, h, p->rank, NOBJ);
    ckpt_hooks_close(h);
    return rc;
}

/* Opened for writing (a restart), as the reader. */
static int probe_write_open(void *arg, struct rel_outcome *out)
{
    const struct probe *p = arg;
    struct ckpt_hooks_opts o = opts_for(p->root, p->rank);
    ckpt_hooks *h;
    if (become_reader(out) != 0)
        return -1000;
    int rc = ckpt_hooks_restart_map(&h, &o);
    snprintf(out->msg, sizeof out->msg, "%s", ckpt_errmsg());
    if (rc == 0)
        ckpt_hooks_close(h);
    return rc;
}

static void expect_reads_all(const char *root)
{
    for (int r = 0; r < NRANKS; r++) {
        struct probe p = {root, r};
        struct rel_outcome o;
        rel_in_child(&o, probe_reads, &p);
        if (o.crashed || o.rc != 0)
            fail_msg("rank %d: reading a read-only store: rc %d (crashed %d): %s", r, o.rc,
                     o.crashed, o.msg);
        if (o.v[0] != NOBJ)
            fail_msg("rank %d: %ld of %d objects complete, %ld missing, %ld bad: %s", r, o.v[0],
                     NOBJ, o.v[1], o.v[2], o.msg);
    }
}

/* ckpt-inspect ARGS... as the reader: must exit 0. */
static void inspect_ok(const char *what, ...)
{
    va_list ap;
    va_start(ap, what);
    int rc = rel_run_va(g_as, g_out, sizeof g_out, g_inspect, ap);
    va_end(ap);
    if (rc != 0)
        fail_msg("ckpt-inspect %s on a read-only store: exit %d:\n%.3000s", what, rc, g_out);
}

static void expect_inspect_all(struct fix *f)
{
    char id[32], name[64], copy[700];
    snprintf(id, sizeof id, "%llu", (unsigned long long)g_ids[1][3]);
    rel_obj_name(name, sizeof name, 0, 4);
    snprintf(copy, sizeof copy, "%s/copy", f->out);
    inspect_ok("stat", "stat", f->root, NULL);
    inspect_ok("dump", "dump", f->root, NULL);
    inspect_ok("get --id", "get", f->root, "--id", id, NULL);
    inspect_ok("get --name", "get", f->root, "--name", name, NULL);
    inspect_ok("find", "find", f->root, "--tag", REL_TAG, NULL);
    inspect_ok("verify", "verify", f->root, NULL);
    if (strstr(g_out, ": OK") == NULL)
        fail_msg("verify of a read-only store:\n%s", g_out);
    inspect_ok("copy", "copy", f->root, copy, NULL);
    inspect_ok("verify (of the copy)", "verify", copy, NULL);
    tu_rmtree(copy);
    inspect_ok("copy --compact", "copy", f->root, copy, "--compact", NULL);
    inspect_ok("verify (of the compacted copy)", "verify", copy, NULL);
}

static void test_readonly_store_reads(void **state)
{
    struct fix *f = *state;
    make_readonly(f->root);
    expect_reads_all(f->root);
    expect_inspect_all(f);
}

/* lock.mdb gone and the directory read-only: it cannot be created */
static void test_readonly_store_without_lock_file(void **state)
{
    struct fix *f = *state;
    char lk[700];
    for (int r = 0; r < NRANKS; r++) {
        snprintf(lk, sizeof lk, "%s/rank-%d/lock.mdb", f->root, r);
        assert_int_equal(unlink(lk), 0);
    }
    make_readonly(f->root);
    expect_reads_all(f->root);
    expect_inspect_all(f);
    snprintf(lk, sizeof lk, "%s/rank-0/lock.mdb", f->root);
    assert_int_not_equal(access(lk, F_OK), 0); /* nothing was written */
}

static void has(const char *text, const char *needle, const char *what)
{
    if (strstr(text, needle) == NULL)
        fail_msg("%s: \"%s\" does not say \"%s\"", what, text, needle);
}

/* fn, run as the reader in a child, fails (without crashing) with a
 * message that says `needle`; what: the case, for messages */
static void refused_saying(struct rel_outcome *o, rel_fn fn, struct probe *pr, const char *needle,
                           const char *what)
{
    rel_in_child(o, fn, pr);
    if (o->crashed || o->rc == 0)
        fail_msg("%s: rc %d crashed %d: %s", what, o->rc, o->crashed, o->msg);
    has(o->msg, needle, what);
}

static void test_errors_name_the_file(void **state)
{
    struct fix *f = *state;
    char p[700];
    struct probe pr = {f->root, 0};
    struct rel_outcome o;

    /* a writer: lock.mdb read-only (the directory and writer.lock are not) */
    if (g_as >= 0)
        assert_int_equal(walk_chmod(f->root, 1, 1), 0);
    snprintf(p, sizeof p, "%s/rank-0/lock.mdb", f->root);
    assert_int_equal(chmod(p, 0400), 0);
    refused_saying(&o, probe_write_open, &pr, "rank-0/lock.mdb", "a writer, lock.mdb read-only");

    /* a writer on a read-only store: writer.lock cannot be created */
    make_readonly(f->root);
    snprintf(p, sizeof p, "%s/rank-0/writer.lock", f->root);
    assert_int_equal(unlink(p) == 0 || errno == ENOENT, 1);
    refused_saying(&o, probe_write_open, &pr, "writer.lock", "a writer on a read-only store");

    /* a reader: data.mdb unreadable; lock.mdb is not the cause */
    snprintf(p, sizeof p, "%s/rank-0/data.mdb", f->root);
    assert_int_equal(chmod(p, 0), 0);
    refused_saying(&o, probe_reads, &pr, "rank-0/data.mdb: cannot open it",
                   "a reader, data.mdb unreadable");
    if (strstr(o.msg, "lock.mdb") != NULL)
        fail_msg("an unreadable data.mdb blamed on lock.mdb: %s", o.msg);
    /* ckpt-inspect says the same, and still reads rank 1 */
    char *argv[] = {(char *)g_inspect, "verify", f->root, NULL};
    int rc = rel_run_as(g_as, argv, g_out, sizeof g_out);
    if (rc != 1 || strstr(g_out, "rank-0/data.mdb: cannot open it") == NULL ||
        strstr(g_out, "rank 1: ") != NULL)
        fail_msg("ckpt-inspect verify, rank 0's data.mdb unreadable: exit %d:\n%s", rc, g_out);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CKPT-INSPECT\n", argv[0]);
        return 2;
    }
    g_inspect = argv[1];
    if (geteuid() == 0) {
        /* permissions do not bind root: read as nobody, if nobody can get
         * to the temporary directory at all */
        char dir[512];
        g_as = NOBODY;
        if (tu_mkdtemp(dir, sizeof dir, "readonly-probe") != 0)
            return 1;
        chmod(dir, 0755);
        char *const probe_argv[] = {"/bin/sh", "-c", "test -x \"$0\" && test -x \"$1\"", dir,
                                    (char *)g_inspect, NULL};
        int rc = rel_run_as(g_as, probe_argv, g_out, sizeof g_out);
        tu_rmtree(dir);
        if (rc != 0) {
            printf("SKIPPED: uid %d cannot reach %s or run %s (exit %d)\n", NOBODY, dir, g_inspect,
                   rc);
            return 77;
        }
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_readonly_store_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readonly_store_without_lock_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_name_the_file, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
