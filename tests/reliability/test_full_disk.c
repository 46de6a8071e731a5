/*
 * test_full_disk.c - the writer runs out of space mid-workload (issue 8,
 * item 3). The end of the space is a file-size limit (RLIMIT_FSIZE, with
 * SIGXFSZ ignored): writes past it fail with EFBIG, as writes on a full
 * file system fail with ENOSPC, and the limit can be raised again to
 * "free space". For each sync mode, and with the model PDC server on top:
 *
 *   - the hook whose commit hits the limit returns CKPT_E_NOSPACE with a
 *     message naming the store, the staged mutations and the system error;
 *   - the server keeps running: further hooks, checkpoint and close return
 *     0 or the same clear error, never crash, and close leaves the handle
 *     open;
 *   - what was committed before verifies, from another process, record
 *     by record and with `ckpt-inspect verify` (argv[1]);
 *   - once space is back the writer continues: the staged batch commits,
 *     close succeeds, and every mutation is in the store exactly once
 *     (a rebuilt model server equals the live one; entries per database
 *     equal what was written).
 *
 * Also: a restart that cannot even write its meta record at open (no room
 * at all) fails with CKPT_E_NOSPACE, changes nothing, and works once
 * space is back.
 */
#define _GNU_SOURCE /* unshare */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ckpt_hooks.h"
#include "model_server.h"
#include "rel_util.h"

static const char *g_inspect;
static long g_scale = 1; /* --long: more objects */
static struct rlimit g_fsize;


static int setup(void **state)
{
    return tu_case_new(state, "rel-fulldisk");
}

static int teardown(void **state)
{
    setrlimit(RLIMIT_FSIZE, &g_fsize); /* also after a failed assertion */
    return tu_case_free(state);
}

/* The "disk" ends at `bytes` (a file-size limit for this process). */
static void disk_ends_at(long bytes)
{
    struct rlimit r = g_fsize;
    r.rlim_cur = (rlim_t)bytes;
    if (g_fsize.rlim_max != RLIM_INFINITY && r.rlim_cur > g_fsize.rlim_max)
        r.rlim_cur = g_fsize.rlim_max;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &r), 0);
}

/* Space is back: the soft limit returns to what it was. */
static void space_back(void)
{
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &g_fsize), 0);
}

static long data_size(const char *root)
{
    char p[700];
    snprintf(p, sizeof p, "%s/rank-0/data.mdb", root);
    return rel_file_size(p);
}

static struct ckpt_hooks_opts opts_for(const char *root, int sync_mode)
{
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    o.store_root = root;
    o.commit_every = 40;
    o.commit_ms = 0; /* commits happen in the hooks: their errors are the hooks' */
    o.sync_mode = sync_mode;
    o.map_size = (size_t)4 << 20;
    /* no background syncs: each would move the pinned snapshot on and free
     * pages that a staged batch could then take without the file growing,
     * so whether the disk is full would depend on the clock */
    o.sync_ms = 3600 * 1000;
    o.sync_kb = 0;
    return o;
}

/* The store, the staged mutations, and why: EFBIG's own text, or (when
 * LMDB got a short write, which it reports as EIO) the store's diagnosis. */
static void assert_nospace_msg(const char *msg)
{
    if (strstr(msg, "rank-0/data.mdb") == NULL || strstr(msg, "staged") == NULL ||
        (strstr(msg, strerror(EFBIG)) == NULL && strstr(msg, "file size limit") == NULL))
        fail_msg("not a clear out-of-space message: \"%s\"", msg);
}

/* ---- census from another process ---- */

struct census_arg {
    const char *root;
    long n;
};

/* v = {complete objects, missing, bad, prefix (mutations), gap} */
static int census_child(void *arg, struct rel_outcome *out)
{
    const struct census_arg *a = arg;
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    struct rel_census c;
    ckpt_hooks *h;
    o.store_root = a->root;
    int rc = ckpt_hooks_open_readonly(&h, &o);
    if (rc) {
        snprintf(out->msg, sizeof out->msg, "%s", ckpt_errmsg());
        return rc;
    }
    rc = rel_census_out(out, &c, h, 0, a->n);
    out->v[3] = c.prefix + 1000000L * c.gap;
    ckpt_hooks_close(h);
    return rc;
}

/* census_child in a new process: this program again (exec), as
 * `--census ROOT N`, its outcome on stdout. Not rel_in_child's plain fork:
 * the writer's background thread runs in this process, and under GCC 12's
 * AddressSanitizer a fork while that thread holds an allocator lock leaves
 * the lock held in the child, whose first malloc then waits forever (that
 * hung this test about one run in six under ASan). */
static void census_exec(struct rel_outcome *out, const char *root, long n)
{
    char nbuf[32];
    int p[2], st = 0;
    snprintf(nbuf, sizeof nbuf, "%ld", n);
    pid_t pid = rel_fork_piped(out, p);
    if (pid < 0)
        return;
    if (pid == 0) { /* only async-signal-safe calls until exec */
        if (dup2(p[1], STDOUT_FILENO) >= 0) {
            execl("/proc/self/exe", "rel_test_full_disk", "--census", root, nbuf, (char *)NULL);
        }
        _exit(127);
    }
    size_t got = rel_collect(out, pid, p, &st);
    if (got != sizeof *out || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        out->crashed = 1;
        snprintf(out->msg, sizeof out->msg, "census process: %s %d, %zu of %zu bytes",
                 WIFSIGNALED(st) ? "signal" : "exit status",
                 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), got, sizeof *out);
    }
}

/* `--census ROOT N`: census_child, the outcome written raw to stdout */
static int census_main(const char *root, const char *n)
{
    struct census_arg a = {root, atol(n)};
    struct rel_outcome out;
    memset(&out, 0, sizeof out);
    out.rc = census_child(&a, &out);
    return rel_write_all(STDOUT_FILENO, &out, sizeof out) == 0 ? 0 : 1;
}

/* What another process sees of objects 0..n-1: a committed prefix without
 * damage. Returns the number of complete objects. */
static long committed_objs(const char *root, long n)
{
    struct rel_outcome out;
    census_exec(&out, root, n);
    if (out.crashed || out.rc)
        fail_msg("reading the store from another process: rc %d: %s", out.rc, out.msg);
    if (out.v[2] != 0)
        fail_msg("%ld damaged objects: %s", out.v[2], out.msg);
    if (out.v[3] >= 1000000L)
        fail_msg("not a committed prefix: a mutation is there after a missing one");
    /* prefix in mutations: container + 4 per object */
    if (out.v[0] != (out.v[3] - 1) / 4)
        fail_msg("%ld complete objects but a prefix of %ld mutations", out.v[0], out.v[3]);
    return out.v[0];
}

static char g_out[65536];

static void inspect_ok(const char *root)
{
    char *const argv[] = {(char *)g_inspect, "verify", (char *)root, NULL};
    int rc = rel_run(argv, g_out, sizeof g_out);
    size_t len = strlen(g_out);
    while (len && g_out[len - 1] == '\n')
        len--;
    if (rc != 0 || len < 2 || strncmp(g_out + len - 2, "OK", 2) != 0)
        fail_msg("ckpt-inspect verify %s: exit %d:\n%s", root, rc, g_out);
}

/* ---- the scenario ---- */

/* Write objects [*next, *next + n) one hook at a time; stop at the first
 * error, which must be CKPT_E_NOSPACE. Returns 0 or that error. */
static int write_until_error(ckpt_hooks *h, long *next, long n, uint64_t *cont)
{
    for (long end = *next + n; *next < end;) {
        int rc = rel_write_objs(h, 0, *next, 1, cont, NULL);
        if (rc) {
            if (rc != CKPT_E_NOSPACE)
                fail_msg("object %ld: %s, expected CKPT_E_NOSPACE: %s", *next, ckpt_errname(rc),
                         ckpt_errmsg());
            assert_nospace_msg(ckpt_errmsg());
            print_message("object %ld: %s\n", *next, ckpt_errmsg());
            /* the failing hook's own mutation was staged too: the object
             * counts as written, and its remaining hooks follow */
            (*next)++;
            return rc;
        }
        (*next)++;
    }
    return 0;
}

static void full_disk_hooks(void **state, int sync_mode)
{
    struct tu_case *f = *state;
    struct ckpt_hooks_opts o = opts_for(f->root, sync_mode);
    ckpt_hooks *h;
    uint64_t cont = 0;
    long next = 0, n1 = 200 * g_scale;
    int rc;

    assert_int_equal(ckpt_hooks_open(&h, &o), 0);
    assert_int_equal(rel_write_objs(h, 0, 0, n1, &cont, NULL), 0);
    assert_int_equal(ckpt_hooks_checkpoint(h), 0);
    next = n1;

    /* the disk fills up a few pages above the current size */
    long size = data_size(f->root);
    disk_ends_at(size + 3 * 4096);
    rc = write_until_error(h, &next, 100000, &cont);
    assert_int_equal(rc, CKPT_E_NOSPACE);
    long failed_at = next;
    assert_true(failed_at > n1);

    /* the server keeps running: more mutations are accepted (staged) or
     * fail with the same clear error, never anything else */
    long more = 150 * g_scale, nospace = 0;
    for (long i = 0; i < more; i++) {
        rc = rel_write_objs(h, 0, next, 1, &cont, NULL);
        if (rc != 0 && rc != CKPT_E_NOSPACE)
            fail_msg("object %ld while the disk is full: %s: %s", next, ckpt_errname(rc),
                     ckpt_errmsg());
        nospace += rc != 0;
        next++;
    }
    assert_true(nospace > 0);
    /* retries back off (until the batch has doubled or a second passed):
     * the growing batch is not re-applied at every hook, which made a full
     * disk cost a stall growing with the batch */
    if (nospace > 64)
        fail_msg("%ld of %ld objects met a retry of the failing commit", nospace, more);
    print_message("while full: %ld of %ld objects met a retry of the failing commit\n", nospace,
                  more);
    /* A background sync in the meantime moves the pinned snapshot on, and
     * the pages it frees can take the staged batch without the file
     * growing: the background thread or the checkpoint then commits it, and
     * the disk is full again a few objects later (seen under ASan's slower
     * clock). */
    for (long tries = 0;; tries++) {
        if (ckpt_store_pending(ckpt_hooks_store(h)) > 0 && (rc = ckpt_hooks_checkpoint(h)) != 0)
            break;
        if (tries == 1000)
            fail_msg("the disk never filled up again (%ld objects)", next);
        for (int i = 0; i < 20; i++, next++) {
            int wrc = rel_write_objs(h, 0, next, 1, &cont, NULL);
            if (wrc != 0 && wrc != CKPT_E_NOSPACE)
                fail_msg("object %ld while the disk is full: %s: %s", next, ckpt_errname(wrc),
                         ckpt_errmsg());
        }
    }
    assert_int_equal(rc, CKPT_E_NOSPACE);
    assert_nospace_msg(ckpt_errmsg());
    rc = ckpt_hooks_close(h); /* fails, and the handle stays open */
    assert_int_equal(rc, CKPT_E_NOSPACE);

    /* what was committed verifies, from other processes, while full */
    long committed = committed_objs(f->root, next);
    assert_true(committed >= n1);
    assert_true(committed < next);
    inspect_ok(f->root);

    /* space is back: the staged batch commits, the writer continues */
    space_back();
    assert_int_equal(ckpt_hooks_checkpoint(h), 0);
    assert_int_equal(ckpt_store_pending(ckpt_hooks_store(h)), 0);
    assert_int_equal(committed_objs(f->root, next), next);
    assert_int_equal(rel_write_objs(h, 0, next, 100, &cont, NULL), 0);
    next += 100;
    assert_int_equal(ckpt_hooks_close(h), 0);

    /* every mutation exactly once */
    assert_int_equal(committed_objs(f->root, next), next);
    ckpt_store *st;
    assert_int_equal(ckpt_store_open_readonly(&st, f->root, 0), 0);
    ckpt_rtxn *tx;
    assert_int_equal(ckpt_rtxn_begin(&tx, st), 0);
    static const int dbs[] = {CKPT_DB_OBJ, CKPT_DB_OBJ_NAME, CKPT_DB_KVTAG, CKPT_DB_TAG_INDEX,
                              CKPT_DB_REGION, CKPT_DB_CONT_OBJ};
    for (size_t i = 0; i < sizeof dbs / sizeof dbs[0]; i++) {
        uint64_t entries = 0;
        assert_int_equal(ckpt_db_stat(&entries, NULL, tx, dbs[i]), 0);
        if (entries != (uint64_t)next)
            fail_msg("%s holds %llu entries, %ld written", ckpt_db_name(dbs[i]),
                     (unsigned long long)entries, next);
    }
    ckpt_rtxn_end(tx);
    struct ckpt_store_info info;
    assert_int_equal(ckpt_store_info(&info, st), 0);
    assert_int_equal(info.clean, 1);
    /* container + 4 per object, each counted once although the batch was
     * tried several times */
    assert_int_equal(info.mutations, 1 + 4 * (uint64_t)next);
    ckpt_store_close(st);
    inspect_ok(f->root);
}

static void test_full_disk_close_mode(void **state)
{
    full_disk_hooks(state, CKPT_SYNC_CLOSE);
}

static void test_full_disk_sync_mode(void **state)
{
    full_disk_hooks(state, CKPT_SYNC_EVERY);
}

/* The model PDC server on top: its tables keep every mutation while the
 * store cannot commit, and after space is back a server rebuilt from the
 * store equals the live one. */
static void test_full_disk_model_server(void **state)
{
    struct tu_case *f = *state;
    struct ckpt_hooks_opts o = opts_for(f->root, CKPT_SYNC_INTERVAL);
    ckpt_hooks *h, *h2;
    model_server *m, *m2;
    uint64_t cont;
    long nospace = 0, n = 600 * g_scale;
    char name[64], why[256];

    assert_int_equal(ckpt_hooks_open(&h, &o), 0);
    assert_int_equal(model_create(&m, 0, 1, h), 0);
    assert_int_equal(model_cont_create(m, "fd-cont", &cont), 0);
    for (long i = 0; i < n; i++) {
        struct ckpt_obj ob;
        uint64_t id;
        memset(&ob, 0, sizeof ob);
        snprintf(name, sizeof name, "fd-obj-%06ld", i);
        ob.obj_name = name;
        ob.app_name = "fd";
        ob.data_location = "";
        ob.tags = "";
        ob.ndim = 1;
        ob.dims[0] = (uint64_t)i;
        if (i == n / 3)
            disk_ends_at(data_size(f->root) + 2 * 4096);
        if (i == 2 * n / 3) {
            space_back();
            assert_int_equal(ckpt_hooks_checkpoint(h), 0);
        }
        int rc = model_obj_create(m, &ob, &id);
        int64_t v = i;
        struct ckpt_kvtag t = {"fd-tag", 11 /* PDC_INT64 */, 8, &v};
        if (rc == 0 || rc == CKPT_E_NOSPACE)
            rc = model_kvtag_put(m, id, &t) == 0 ? rc : CKPT_E_NOSPACE;
        if (rc == 0 || rc == CKPT_E_NOSPACE)
            rc = model_cont_add(m, cont, &id, 1) == 0 ? rc : CKPT_E_NOSPACE;
        if (rc != 0 && rc != CKPT_E_NOSPACE)
            fail_msg("object %ld: %s: %s", i, ckpt_errname(rc), ckpt_errmsg());
        if (rc)
            assert_nospace_msg(ckpt_errmsg());
        nospace += rc != 0;
    }
    assert_true(nospace > 0);
    assert_int_equal(model_count_objs(m), (size_t)n);
    assert_int_equal(ckpt_hooks_close(h), 0);

    struct ckpt_rebuild_stats st;
    assert_int_equal(model_restart_rebuild(&m2, &h2, &o, &st), 0);
    assert_int_equal(st.objs, (uint64_t)n);
    assert_int_equal(st.kvtags, (uint64_t)n);
    assert_int_equal(st.members, (uint64_t)n);
    if (!model_equal(m, m2, why, sizeof why))
        fail_msg("rebuilt server differs from the live one: %s", why);
    assert_int_equal(ckpt_hooks_close(h2), 0);
    model_destroy(m);
    model_destroy(m2);
    inspect_ok(f->root);
}

/* No room for anything but LMDB's two meta pages at a restart. The
 * restart writes nothing before it is ready, so it opens and serves what is
 * committed; a new id, whose lease must commit the open's dirty mark first,
 * is refused with CKPT_E_NOSPACE naming the file and the cause, and the
 * store is left as the close left it; once there is space the writer
 * continues and nothing is lost. */
static void test_no_space_at_restart(void **state)
{
    struct tu_case *f = *state;
    struct ckpt_hooks_opts o = opts_for(f->root, CKPT_SYNC_CLOSE);
    ckpt_hooks *h;
    uint64_t cont = 0, id = 0;
    const long n = 300;
    assert_int_equal(ckpt_hooks_open(&h, &o), 0);
    assert_int_equal(rel_write_objs(h, 0, 0, n, &cont, NULL), 0);
    assert_int_equal(ckpt_hooks_close(h), 0);
    struct ckpt_store_info before, after;
    assert_int_equal(rel_info_ro(&before, f->root), 0);

    /* LMDB's two meta pages fit, nothing else does */
    disk_ends_at(2 * 4096);
    assert_int_equal(ckpt_hooks_restart_map(&h, &o), 0);
    int rc = ckpt_hook_new_id(&id, h);
    if (rc != CKPT_E_NOSPACE)
        fail_msg("a new id on a full disk: %s, expected CKPT_E_NOSPACE: %s", ckpt_errname(rc),
                 ckpt_errmsg());
    const char *msg = ckpt_errmsg();
    if (strstr(msg, "rank-0/data.mdb") == NULL || strstr(msg, strerror(EFBIG)) == NULL)
        fail_msg("not a clear out-of-space message: \"%s\"", msg);
    print_message("new id: %s\n", msg);
    assert_int_equal(committed_objs(f->root, n), n);

    /* nothing changed: same generation, still clean, every record there */
    assert_int_equal(rel_info_ro(&after, f->root), 0);
    assert_int_equal(after.generation, before.generation);
    assert_int_equal(after.clean, 1);
    space_back();

    /* space back: ids again, and the writer continues */
    assert_int_equal(ckpt_hook_new_id(&id, h), 0);
    assert_int_equal(rel_write_objs(h, 0, n, 50, &cont, NULL), 0);
    assert_int_equal(ckpt_hooks_close(h), 0);
    assert_int_equal(committed_objs(f->root, n + 50), n + 50);
    inspect_ok(f->root);
}

/* ---- a real small file system (ENOSPC) ---- */

struct small_fs {
    const char *dir;
    long objs;       /* out: objects written */
};

static int mount_tmpfs(const char *dir, const char *size, int remount)
{
    char o[64];
    snprintf(o, sizeof o, "size=%s,mode=0700", size);
    return mount("tmpfs", dir, "tmpfs", remount ? MS_REMOUNT : 0, o);
}

/* In a child with a mount namespace of its own, so the file system goes
 * away with it whatever happens: v = {objects written, NOSPACE returns,
 * committed while full, committed at the end}. */
static int small_fs_child(void *arg, struct rel_outcome *out)
{
    const struct small_fs *a = arg;
    char root[700];
    ckpt_hooks *h;
    uint64_t cont = 0;
    long next = 0, nospace = 0;
    int rc;
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount_tmpfs(a->dir, "1m", 0) != 0) {
        snprintf(out->msg, sizeof out->msg, "no private tmpfs: %s", strerror(errno));
        return 77;
    }
    snprintf(root, sizeof root, "%s/store", a->dir);
    struct ckpt_hooks_opts o = opts_for(root, CKPT_SYNC_CLOSE);
    if ((rc = ckpt_hooks_open(&h, &o)) != 0) {
        snprintf(out->msg, sizeof out->msg, "open: %s", ckpt_errmsg());
        return rc;
    }
    /* until the file system is full, and 200 objects more */
    for (long extra = -1; extra < 200 && next < 1000000; next++) {
        rc = rel_write_objs(h, 0, next, 1, &cont, NULL);
        if (rc == CKPT_E_NOSPACE) {
            if (nospace++ == 0) {
                const char *m = ckpt_errmsg();
                snprintf(out->msg, sizeof out->msg, "%s", m);
                if (strstr(m, "staged") == NULL ||
                    (strstr(m, strerror(ENOSPC)) == NULL && strstr(m, "file system has") == NULL))
                    return -1000;
                extra = 0;
            }
        } else if (rc != 0) {
            snprintf(out->msg, sizeof out->msg, "object %ld: %s: %s", next, ckpt_errname(rc),
                     ckpt_errmsg());
            return rc;
        }
        if (extra >= 0)
            extra++;
    }
    out->v[0] = next;
    out->v[1] = nospace;
    struct rel_outcome c;
    census_exec(&c, root, next);
    if (c.crashed || c.rc || c.v[2] || c.v[3] >= 1000000L) {
        snprintf(out->msg, sizeof out->msg, "census while full: %.900s", c.msg);
        return -1001;
    }
    out->v[2] = c.v[0];
    char *const argv[] = {(char *)g_inspect, "verify", root, NULL};
    if (rel_run(argv, g_out, sizeof g_out) != 0) {
        snprintf(out->msg, sizeof out->msg, "ckpt-inspect verify while full: %.900s", g_out);
        return -1002;
    }
    /* space is back */
    if (mount_tmpfs(a->dir, "64m", 1) != 0) {
        snprintf(out->msg, sizeof out->msg, "remount: %s", strerror(errno));
        return -1003;
    }
    if ((rc = ckpt_hooks_checkpoint(h)) != 0 || (rc = rel_write_objs(h, 0, next, 100, &cont, NULL)) != 0 ||
        (rc = ckpt_hooks_close(h)) != 0) {
        snprintf(out->msg, sizeof out->msg, "after space is back: %s", ckpt_errmsg());
        return rc;
    }
    next += 100;
    census_exec(&c, root, next);
    if (c.crashed || c.rc || c.v[0] != next) {
        snprintf(out->msg, sizeof out->msg, "census at the end: %ld of %ld: %.900s", c.v[0], next, c.msg);
        return -1004;
    }
    out->v[3] = c.v[0];
    if (rel_run(argv, g_out, sizeof g_out) != 0) {
        snprintf(out->msg, sizeof out->msg, "ckpt-inspect verify at the end: %.900s", g_out);
        return -1005;
    }
    return 0;
}

/* The same on a 1 MiB tmpfs: real ENOSPC, and the short writes LMDB
 * reports as EIO. Needs the right to mount (root in a mount namespace);
 * without it this case is skipped (the file-size limit cases above cover
 * the behaviour everywhere). */
static void test_full_disk_small_fs(void **state)
{
    struct tu_case *f = *state;
    struct small_fs a = {f->dir, 0};
    struct rel_outcome out;
    if (geteuid() != 0) {
        print_message("not root: no tmpfs; covered by the RLIMIT_FSIZE cases\n");
        skip();
    }
    rel_in_child(&out, small_fs_child, &a);
    if (out.crashed)
        fail_msg("%s", out.msg);
    if (out.rc == 77) {
        print_message("%s: covered by the RLIMIT_FSIZE cases\n", out.msg);
        skip();
    }
    if (out.rc != 0)
        fail_msg("small file system: %s (%d): %s", ckpt_errname(out.rc), out.rc, out.msg);
    print_message("first error: %s\n", out.msg);
    print_message("%ld objects, %ld CKPT_E_NOSPACE returns, %ld committed while full, %ld at the "
                  "end\n", out.v[0], out.v[1], out.v[2], out.v[3]);
    assert_true(out.v[1] > 0);
    assert_true(out.v[2] > 0 && out.v[2] < out.v[0]);
    assert_int_equal(out.v[3], out.v[0] + 100);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--census") == 0)
        return census_main(argv[2], argv[3]);
    if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--long") != 0)) {
        fprintf(stderr, "usage: %s CKPT-INSPECT [--long]\n", argv[0]);
        return 2;
    }
    g_inspect = argv[1];
    if (argc == 3)
        g_scale = 20;
    /* writes past the limit must fail with EFBIG, not kill the process */
    signal(SIGXFSZ, SIG_IGN);
    if (getrlimit(RLIMIT_FSIZE, &g_fsize) != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_full_disk_close_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_disk_sync_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_disk_model_server, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_space_at_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_disk_small_fs, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
