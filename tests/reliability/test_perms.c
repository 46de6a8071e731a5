/*
 * test_perms.c - owner-only stores and owned roots (issue 8, item 7;
 * store/store.c check_owned()).
 *
 *   - whatever the umask (0 and 022 here), the root and rank directories
 *     the store creates are 0700 and data.mdb, lock.mdb and writer.lock
 *     are 0600; a reopen and a restart keep them so;
 *   - a root that is a regular file is refused with CKPT_E_PERM (store
 *     open, hooks open and restart), and the file is left alone;
 *   - a root owned by another user is refused with CKPT_E_PERM naming
 *     both uids, and nothing is created in it. As root, a temporary
 *     directory chowned to 65534 (nobody) is that root; otherwise '/'
 *     (owned by root) is. Both ways assert the refusal; neither skips.
 *     As root, also: a rank directory owned by another user, a restart of
 *     an existing store whose root changed owner, and a symbolic link to
 *     a foreign directory.
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

#define NOBODY 65534


static int setup(void **state)
{
    return tu_case_new(state, "rel-perms");
}

static int teardown(void **state)
{
    return tu_case_free(state);
}

static struct ckpt_hooks_opts hopts(const char *root)
{
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    o.store_root = root;
    o.map_size = (size_t)4 << 20;
    return o;
}

static void assert_mode(const char *root, const char *sub, unsigned mode)
{
    char p[1024];
    struct stat sb;
    snprintf(p, sizeof p, "%s%s%s", root, *sub ? "/" : "", sub);
    if (stat(p, &sb) != 0)
        fail_msg("%s: %s", p, strerror(errno));
    if ((sb.st_mode & 07777) != mode)
        fail_msg("%s: mode %04o, expected %04o", p, (unsigned)(sb.st_mode & 07777), mode);
    if (sb.st_uid != geteuid())
        fail_msg("%s: owned by uid %ld, not %ld", p, (long)sb.st_uid, (long)geteuid());
}

static void assert_owner_only(const char *root)
{
    assert_mode(root, "", 0700);
    assert_mode(root, "rank-0", 0700);
    assert_mode(root, "rank-0/data.mdb", 0600);
    assert_mode(root, "rank-0/lock.mdb", 0600);
    assert_mode(root, "rank-0/writer.lock", 0600);
}

/* Every way of opening for writing must refuse root with CKPT_E_PERM and
 * a message holding each NULL-terminated needle. */
static void expect_perm(const char *root, ...)
{
    struct ckpt_store_opts so = CKPT_STORE_OPTS_INIT;
    struct ckpt_hooks_opts o = hopts(root);
    struct ckpt_rebuild_stats st;
    ckpt_store *s = NULL;
    ckpt_hooks *h = NULL;
    const char *what[] = {"store open", "hooks open", "map restart", "rebuild restart"};
    so.root = root;
    for (int w = 0; w < 4; w++) {
        int rc = w == 0   ? ckpt_store_open(&s, &so)
                 : w == 1 ? ckpt_hooks_open(&h, &o)
                 : w == 2 ? ckpt_hooks_restart_map(&h, &o)
                          : ckpt_hooks_restart_rebuild(&h, &o, NULL, NULL, &st);
        const char *msg = ckpt_errmsg();
        if (rc == 0)
            fail_msg("%s of %s succeeded", what[w], root);
        /* a restart may first find no store there at all; where there is
         * one, or for a writer that would create one, it is PERM */
        if (rc == CKPT_E_NOSTORE && w >= 2)
            continue;
        if (rc != CKPT_E_PERM)
            fail_msg("%s of %s: %s, expected CKPT_E_PERM: %s", what[w], root, ckpt_errname(rc), msg);
        va_list ap;
        const char *needle;
        va_start(ap, root);
        while ((needle = va_arg(ap, const char *)) != NULL)
            if (strstr(msg, needle) == NULL)
                fail_msg("%s of %s: \"%s\" does not say \"%s\"", what[w], root, msg, needle);
        va_end(ap);
        assert_null(s);
        assert_null(h);
    }
}

static void create_and_check(const char *root, mode_t mask)
{
    struct ckpt_hooks_opts o = hopts(root);
    ckpt_hooks *h;
    uint64_t cont = 0;
    mode_t prev = umask(mask);
    int rc = ckpt_hooks_open(&h, &o);
    if (rc == 0)
        rc = rel_write_objs(h, 0, 0, 20, &cont, NULL);
    if (rc == 0)
        rc = ckpt_hooks_close(h);
    umask(prev);
    if (rc)
        fail_msg("%s", ckpt_errmsg());
    assert_owner_only(root);
    /* a restart (and the writer.lock it takes) keeps them */
    prev = umask(mask);
    rc = ckpt_hooks_restart_map(&h, &o);
    if (rc == 0)
        rc = ckpt_hooks_close(h);
    umask(prev);
    assert_int_equal(rc, 0);
    assert_owner_only(root);
}

/* Owner-only, whatever the umask: 0 would give 0777/0666 if the store
 * relied on it, 022 0755/0644. */
static void test_owner_only_modes(void **state)
{
    struct tu_case *f = *state;
    char r2[700];
    create_and_check(f->root, 0);
    snprintf(r2, sizeof r2, "%s/deeper/store", f->dir);
    create_and_check(r2, 022);
    assert_mode(f->dir, "deeper", 0700); /* parents the store creates too */
}

/* A root that is a regular file. */
static void test_root_is_a_file(void **state)
{
    struct tu_case *f = *state;
    FILE *fp = fopen(f->root, "w");
    assert_non_null(fp);
    fputs("not a directory\n", fp);
    fclose(fp);
    expect_perm(f->root, f->root, "not a directory", NULL);
    struct stat sb;
    assert_int_equal(stat(f->root, &sb), 0);
    assert_true(S_ISREG(sb.st_mode));
    assert_int_equal(sb.st_size, 16);
}

/* A root owned by someone else. */
static void test_root_owned_by_another_user(void **state)
{
    struct tu_case *f = *state;
    char uid[64], inside[800];
    struct stat sb;
    if (geteuid() == 0) {
        /* root owns everything it creates: give the directory away */
        assert_int_equal(mkdir(f->root, 0755), 0);
        if (chown(f->root, NOBODY, NOBODY) != 0)
            fail_msg("chown %s to %d: %s (a root-run test must be able to)", f->root, NOBODY,
                     strerror(errno));
        snprintf(uid, sizeof uid, "owned by uid %d", NOBODY);
        expect_perm(f->root, f->root, uid, "not by this user (uid 0)", NULL);
        snprintf(inside, sizeof inside, "%s/rank-0", f->root);
        assert_int_equal(stat(inside, &sb), -1); /* nothing created */
    } else {
        /* '/' is root's: a user's store must not go there */
        assert_int_equal(stat("/", &sb), 0);
        assert_int_equal(sb.st_uid, 0);
        snprintf(uid, sizeof uid, "owned by uid 0");
        expect_perm("/", "/", uid, NULL);
        assert_int_equal(stat("/rank-0", &sb), -1);
    }
}

/* As root: the rank directory, or an existing store's root, changing
 * owner; a symbolic link to a foreign directory. As another user: the
 * same refusal through '/' again (a non-root user cannot give directories
 * away). */
static void test_foreign_owner_of_existing_store(void **state)
{
    struct tu_case *f = *state;
    char rank[800], link[800];
    if (geteuid() != 0) {
        expect_perm("/", "owned by uid 0", NULL);
        return;
    }
    create_and_check(f->root, 022);
    snprintf(rank, sizeof rank, "%s/rank-0", f->root);
    /* the rank directory given away */
    assert_int_equal(chown(rank, NOBODY, NOBODY), 0);
    expect_perm(f->root, rank, "owned by uid 65534", NULL);
    assert_int_equal(chown(rank, 0, 0), 0);
    /* the root given away: a restart of the existing store is refused */
    assert_int_equal(chown(f->root, NOBODY, NOBODY), 0);
    struct ckpt_hooks_opts o = hopts(f->root);
    ckpt_hooks *h = NULL;
    int rc = ckpt_hooks_restart_map(&h, &o);
    if (rc != CKPT_E_PERM)
        fail_msg("restart in a foreign root: %s: %s", ckpt_errname(rc), ckpt_errmsg());
    expect_perm(f->root, "owned by uid 65534", NULL);
    /* a symbolic link to it is the same directory */
    snprintf(link, sizeof link, "%s/link", f->dir);
    assert_int_equal(symlink(f->root, link), 0);
    expect_perm(link, "owned by uid 65534", NULL);
    assert_int_equal(chown(f->root, 0, 0), 0);
    /* readers are not writers: a read-only open of a foreign store works */
    assert_int_equal(chown(f->root, NOBODY, NOBODY), 0);
    ckpt_store *s;
    assert_int_equal(ckpt_store_open_readonly(&s, f->root, 0), 0);
    ckpt_store_close(s);
    assert_int_equal(chown(f->root, 0, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_owner_only_modes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_root_is_a_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_root_owned_by_another_user, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_owner_of_existing_store, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
