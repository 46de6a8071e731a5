/*
 * test_shared.c - node-local store with a copy on the shared file system
 * (issue 8, item 5; server_hooks/shared.c). The live store is LOCAL
 * (node-local SSD or tmpfs in production), checkpoint and close publish a
 * consistent copy to SHARED (the parallel file system), and a restart
 * whose local store is gone (the node was replaced) starts from the copy:
 *
 *   - checkpoint and close publish; the copy holds exactly what was
 *     committed then, owner-only (0700 directory, 0600 data.mdb);
 *   - the local store is deleted: map and rebuild restarts start from the
 *     shared copy, and the writer continues (and publishes again);
 *   - a local store that is there wins over the copy, even when it holds
 *     more than the last publish;
 *   - interrupted publishes (SHARED/rank-r.new is written, then rank-r is
 *     renamed to rank-r.old and rank-r.new to rank-r): rank-r missing with
 *     rank-r.old and a complete rank-r.new (the newer copy wins), with
 *     rank-r.old alone, with rank-r.old and an incomplete or empty
 *     rank-r.new (rank-r.old wins), rank-r with a leftover rank-r.new or
 *     rank-r.old; the next publish leaves only rank-r;
 *   - no copy anywhere: the restart fails with CKPT_E_NOSTORE instead of
 *     starting an empty store;
 *   - PDC_CKPT_SHARED_DIR turns the mode on.
 */
#include <errno.h>
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

struct fix {
    char dir[TU_DIR_LEN]; /* first, for tu_fixture_new */
    char local[600];
    char shared[600];
    char cur[700], old[700], nw[700]; /* SHARED/rank-0, .old, .new */
    char saved[700];                  /* a copy of an earlier publish */
};

static int setup(void **state)
{
    struct fix *f = tu_fixture_new(sizeof *f, "shared");
    if (f == NULL)
        return -1;
    snprintf(f->local, sizeof f->local, "%s/local", f->dir);
    snprintf(f->shared, sizeof f->shared, "%s/shared", f->dir);
    snprintf(f->cur, sizeof f->cur, "%s/rank-0", f->shared);
    snprintf(f->old, sizeof f->old, "%s/rank-0.old", f->shared);
    snprintf(f->nw, sizeof f->nw, "%s/rank-0.new", f->shared);
    snprintf(f->saved, sizeof f->saved, "%s/saved-rank-0", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    return tu_fixture_free(state);
}

static struct ckpt_hooks_opts opts(struct fix *f)
{
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    o.store_root = f->local;
    o.shared_root = f->shared;
    o.commit_every = 100;
    o.map_size = (size_t)4 << 20;
    return o;
}

static int exists(const char *p)
{
    struct stat sb;
    return lstat(p, &sb) == 0;
}

/* Complete objects of rank 0 in the store at root/rank-0, which must be
 * an exact prefix of objects 0..n-1 without damage. */
static long census_root(const char *root, long n)
{
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    struct rel_census c;
    ckpt_hooks *h;
    o.store_root = root;
    if (ckpt_hooks_open_readonly(&h, &o) != 0)
        fail_msg("%s: %s", root, ckpt_errmsg());
    assert_int_equal(rel_census(&c, h, 0, n), 0);
    ckpt_hooks_close(h);
    if (c.bad || c.gap || c.prefix != 1 + 4 * c.objs)
        fail_msg("%s: not an exact prefix: %ld complete, %ld bad, gap %d, %s", root, c.objs, c.bad,
                 c.gap, c.why);
    return c.objs;
}

/* The shared copy of rank 0, read through a root made of it alone. */
static long census_dir(struct fix *f, const char *rankdir, long n)
{
    char root[800], link[900];
    snprintf(root, sizeof root, "%s/view", f->dir);
    tu_rmtree(root);
    assert_int_equal(mkdir(root, 0700), 0);
    snprintf(link, sizeof link, "%s/rank-0", root);
    assert_int_equal(rel_copytree(rankdir, link), 0);
    long k = census_root(root, n);
    tu_rmtree(root);
    return k;
}

static void assert_mode(const char *path, unsigned mode)
{
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    if ((sb.st_mode & 07777) != mode)
        fail_msg("%s: mode %04o, expected %04o", path, (unsigned)(sb.st_mode & 07777), mode);
}

/* After a publish only SHARED/rank-0 is left, owner-only. */
static void assert_published(struct fix *f, long objs)
{
    char p[800];
    assert_true(exists(f->cur));
    if (exists(f->old) || exists(f->nw))
        fail_msg("publish left %s or %s behind", f->old, f->nw);
    assert_mode(f->shared, 0700);
    assert_mode(f->cur, 0700);
    snprintf(p, sizeof p, "%s/data.mdb", f->cur);
    assert_mode(p, 0600);
    assert_int_equal(census_dir(f, f->cur, objs + 100), objs);
}

/* Open, write objects [first, first+n), and leave the handle open. */
static ckpt_hooks *open_write(struct fix *f, int restart, long first, long n, uint64_t *cont)
{
    struct ckpt_hooks_opts o = opts(f);
    ckpt_hooks *h;
    int rc = restart ? ckpt_hooks_restart_map(&h, &o) : ckpt_hooks_open(&h, &o);
    if (rc)
        fail_msg("%s: %s", restart ? "restart" : "open", ckpt_errmsg());
    assert_int_equal(rel_write_objs(h, 0, first, n, cont, NULL), 0);
    return h;
}

static uint64_t cont_of(const char *root)
{
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    ckpt_hooks *h;
    ckpt_hooks_read *r;
    struct ckpt_cont c;
    o.store_root = root;
    assert_int_equal(ckpt_hooks_open_readonly(&h, &o), 0);
    assert_int_equal(ckpt_hooks_read_begin(&r, h), 0);
    assert_int_equal(ckpt_hooks_get_cont_by_name(&c, r, "rel-cont-0"), 0);
    uint64_t id = c.cont_id;
    ckpt_hooks_read_end(r);
    ckpt_hooks_close(h);
    return id;
}

/* The node is replaced: its local store is gone. */
static void lose_node(struct fix *f)
{
    assert_int_equal(tu_rmtree(f->local), 0);
    assert_false(exists(f->local));
}

/* A map restart from what SHARED holds must see exactly `objs` objects;
 * the writer then continues with 50 more, and close publishes them. */
static void restart_sees(struct fix *f, long objs)
{
    uint64_t cont;
    ckpt_hooks *h;
    struct ckpt_hooks_opts o = opts(f);
    struct rel_census c;
    if (ckpt_hooks_restart_map(&h, &o) != 0)
        fail_msg("restart: %s", ckpt_errmsg());
    assert_int_equal(rel_census(&c, h, 0, objs + 100), 0);
    if (c.objs != objs || c.bad || c.gap)
        fail_msg("restart sees %ld objects (bad %ld, gap %d), expected %ld", c.objs, c.bad, c.gap,
                 objs);
    ckpt_hooks_read *r;
    struct ckpt_cont cc;
    assert_int_equal(ckpt_hooks_read_begin(&r, h), 0);
    assert_int_equal(ckpt_hooks_get_cont_by_name(&cc, r, "rel-cont-0"), 0);
    cont = cc.cont_id;
    ckpt_hooks_read_end(r);
    assert_int_equal(rel_write_objs(h, 0, objs, 50, &cont, NULL), 0);
    assert_int_equal(ckpt_hooks_close(h), 0);
    assert_int_equal(census_root(f->local, objs + 150), objs + 50);
    assert_published(f, objs + 50);
}

/* SHARED/rank-0 = 100 objects saved aside as f->saved (an earlier
 * publish), then SHARED/rank-0 = 200 objects (the latest). */
static void two_publishes(struct fix *f)
{
    uint64_t cont = 0;
    ckpt_hooks *h = open_write(f, 0, 0, 100, &cont);
    assert_int_equal(ckpt_hooks_checkpoint(h), 0);
    assert_published(f, 100);
    assert_int_equal(rel_copytree(f->cur, f->saved), 0);
    assert_int_equal(rel_write_objs(h, 0, 100, 100, &cont, NULL), 0);
    assert_int_equal(ckpt_hooks_close(h), 0);
    assert_published(f, 200);
}

/* ------------------------------------------------------------------ */

/* Checkpoint and close publish; a replaced node restarts from the copy,
 * by map and by rebuild. */
static void test_publish_and_fallback(void **state)
{
    struct fix *f = *state;
    uint64_t cont = 0;
    ckpt_hooks *h = open_write(f, 0, 0, 100, &cont);
    assert_false(exists(f->cur)); /* nothing published before a checkpoint */
    assert_int_equal(ckpt_hooks_checkpoint(h), 0);
    assert_published(f, 100);
    assert_int_equal(rel_write_objs(h, 0, 100, 100, &cont, NULL), 0);
    assert_int_equal(ckpt_hooks_close(h), 0);
    assert_published(f, 200);

    lose_node(f);
    restart_sees(f, 200); /* 250 now, published */

    lose_node(f);
    struct ckpt_hooks_opts o = opts(f);
    struct ckpt_rebuild_stats st;
    assert_int_equal(ckpt_hooks_restart_rebuild(&h, &o, NULL, NULL, &st), 0);
    assert_int_equal(st.objs, 250);
    assert_int_equal(st.kvtags, 250);
    assert_int_equal(st.regions, 250);
    assert_int_equal(st.members, 250);
    assert_int_equal(st.conts, 1);
    assert_int_equal(ckpt_hooks_close(h), 0);
    /* the restored local store is owner-only too */
    char p[800];
    snprintf(p, sizeof p, "%s/rank-0", f->local);
    assert_mode(p, 0700);
    snprintf(p, sizeof p, "%s/rank-0/data.mdb", f->local);
    assert_mode(p, 0600);
}

/* The local store wins while it is there, even holding more than the
 * last publish (commits after the checkpoint, then a crash). */
static void test_local_preferred(void **state)
{
    struct fix *f = *state;
    uint64_t cont = 0;
    ckpt_hooks *h = open_write(f, 0, 0, 100, &cont);
    assert_int_equal(ckpt_hooks_checkpoint(h), 0);
    assert_int_equal(rel_write_objs(h, 0, 100, 60, &cont, NULL), 0);
    assert_int_equal(ckpt_store_checkpoint(ckpt_hooks_store(h)), 0); /* commit, no publish */
    ckpt_hooks_discard(h);                                          /* crash */
    assert_int_equal(census_dir(f, f->cur, 200), 100);
    assert_int_equal(census_root(f->local, 200), 160);
    restart_sees(f, 160);
}

/* Between the two renames: rank-0.old (earlier copy) and a complete
 * rank-0.new (the newer copy, fsynced before any rename): the newer wins. */
static void test_interrupted_old_and_complete_new(void **state)
{
    struct fix *f = *state;
    two_publishes(f);
    assert_int_equal(rename(f->cur, f->nw), 0);
    assert_int_equal(rel_copytree(f->saved, f->old), 0);
    lose_node(f);
    restart_sees(f, 200);
}

/* Only rank-0.old is left: it is the one complete copy. */
static void test_interrupted_old_only(void **state)
{
    struct fix *f = *state;
    two_publishes(f);
    assert_int_equal(tu_rmtree(f->cur), 0);
    assert_int_equal(rel_copytree(f->saved, f->old), 0);
    lose_node(f);
    restart_sees(f, 100);
}

/* rank-0.old with an incomplete rank-0.new (its data.mdb cut short, as an
 * interrupted copy leaves it): the complete rank-0.old is used. */
static void test_interrupted_old_and_partial_new(void **state)
{
    struct fix *f = *state;
    char p[800];
    two_publishes(f);
    assert_int_equal(rename(f->cur, f->nw), 0);
    snprintf(p, sizeof p, "%s/data.mdb", f->nw);
    assert_int_equal(truncate(p, rel_file_size(p) / 2), 0);
    assert_int_equal(rel_copytree(f->saved, f->old), 0);
    lose_node(f);
    restart_sees(f, 100);
}

/* rank-0.old with an empty rank-0.new directory (the copy had just
 * begun): rank-0.old is used. */
static void test_interrupted_old_and_empty_new(void **state)
{
    struct fix *f = *state;
    two_publishes(f);
    assert_int_equal(tu_rmtree(f->cur), 0);
    assert_int_equal(mkdir(f->nw, 0700), 0);
    assert_int_equal(rel_copytree(f->saved, f->old), 0);
    lose_node(f);
    restart_sees(f, 100);
}

/* rank-0 is there next to leftovers (a copy interrupted before any
 * rename, or a crash before rank-0.old was removed): rank-0 is used. */
static void test_current_with_leftovers(void **state)
{
    struct fix *f = *state;
    char p[800];
    two_publishes(f);
    assert_int_equal(rel_copytree(f->saved, f->old), 0);
    assert_int_equal(rel_copytree(f->cur, f->nw), 0);
    snprintf(p, sizeof p, "%s/data.mdb", f->nw);
    assert_int_equal(truncate(p, 4096), 0);
    lose_node(f);
    restart_sees(f, 200);
}

/* Neither a local store nor a copy: a restart has nothing to start from
 * and must say so, not start an empty store. */
static void test_no_copy_anywhere(void **state)
{
    struct fix *f = *state;
    struct ckpt_hooks_opts o = opts(f);
    ckpt_hooks *h = (ckpt_hooks *)f;
    struct ckpt_rebuild_stats st;
    assert_int_equal(ckpt_hooks_restart_map(&h, &o), CKPT_E_NOSTORE);
    assert_null(h);
    assert_int_equal(ckpt_hooks_restart_rebuild(&h, &o, NULL, NULL, &st), CKPT_E_NOSTORE);
    assert_false(exists(f->cur));
    char p[800];
    snprintf(p, sizeof p, "%s/rank-0/data.mdb", f->local);
    assert_false(exists(p));
    /* open (a first start) creates it */
    uint64_t cont = 0;
    h = open_write(f, 0, 0, 10, &cont);
    assert_int_equal(ckpt_hooks_close(h), 0);
    assert_published(f, 10);
}

/* PDC_CKPT_SHARED_DIR turns the mode on. */
static void test_env_variable(void **state)
{
    struct fix *f = *state;
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    char root[4096];
    ckpt_hooks *h;
    uint64_t cont = 0;
    assert_int_equal(setenv("PDC_CKPT_DIR", f->local, 1), 0);
    assert_int_equal(setenv("PDC_CKPT_SHARED_DIR", f->shared, 1), 0);
    int rc = ckpt_hooks_opts_from_env(&o, root, sizeof root);
    unsetenv("PDC_CKPT_DIR");
    unsetenv("PDC_CKPT_SHARED_DIR");
    assert_int_equal(rc, 0);
    assert_string_equal(o.shared_root, f->shared);
    assert_int_equal(ckpt_hooks_open(&h, &o), 0);
    assert_int_equal(rel_write_objs(h, 0, 0, 30, &cont, NULL), 0);
    assert_int_equal(ckpt_hooks_close(h), 0);
    assert_published(f, 30);
    lose_node(f);
    assert_int_equal(cont_of(f->shared), cont);
    restart_sees(f, 30);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_publish_and_fallback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_local_preferred, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupted_old_and_complete_new, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupted_old_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupted_old_and_partial_new, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupted_old_and_empty_new, setup, teardown),
        cmocka_unit_test_setup_teardown(test_current_with_leftovers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_copy_anywhere, setup, teardown),
        cmocka_unit_test_setup_teardown(test_env_variable, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
