/*
 * test_store_root.c - the store root as a whole (store/root.c): the lock
 * that operations removing or replacing store data take (ckpt_root_lock)
 * against writers, the writer's pid in writer.lock, the stray entries of a
 * root (ckpt_root_strays, ckpt_root_check), and the meta record's
 * origin_nranks.
 */
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

#include "store_test_util.h"

static struct ckpt_store_opts opts2(const char *root, int rank)
{
    struct ckpt_store_opts o = stu_opts(root);
    o.rank = rank;
    o.nranks = 2;
    return o;
}

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("x\n", f);
    fclose(f);
}

/* A writer's pid is in its rank's writer.lock; while it is open the root
 * lock is refused naming that rank and pid; once taken, writers are kept
 * out with the locker's pid; released, they open again. */
static void test_root_lock_against_a_writer(void **state)
{
    const char *root = stu_dir(state);
    struct ckpt_store_opts o0 = opts2(root, 0), o1 = opts2(root, 1);
    char p[600], want[128];
    int fd = -1;
    ckpt_store *st0 = stu_open(&o0), *st1 = stu_open(&o1), *again = NULL;
    stu_close(st0);

    stu_path(p, sizeof p, root, "rank-1/writer.lock");
    FILE *f = fopen(p, "r");
    long pid = 0;
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%ld", &pid), 1);
    fclose(f);
    assert_int_equal(pid, (long)getpid());

    assert_int_equal(ckpt_root_lock(&fd, root), CKPT_E_BUSY);
    assert_int_equal(fd, -1);
    snprintf(want, sizeof want, "/rank-1: the store is open for writing by another process (pid %ld)",
             pid);
    assert_non_null(strstr(ckpt_errmsg(), want));

    stu_close(st1);
    assert_int_equal(ckpt_root_lock(&fd, root), 0);
    assert_true(fd >= 0);
    assert_int_equal(ckpt_store_open(&again, &o0), CKPT_E_BUSY);
    assert_null(again);
    assert_non_null(strstr(ckpt_errmsg(), "locked by another process that replaces or "
                                                    "re-homes it (pid"));
    /* readers are never kept out */
    assert_int_equal(ckpt_store_open_readonly(&again, root, 0), 0);
    ckpt_store_close(again);
    ckpt_root_unlock(fd);
    stu_close(stu_open(&o0));
}

/* Nothing to protect where there is no root. */
static void test_root_lock_of_a_missing_root(void **state)
{
    char root[600];
    int fd = 7;
    stu_path(root, sizeof root, stu_dir(state), "nothing-here");
    assert_int_equal(ckpt_root_lock(&fd, root), 0);
    assert_int_equal(fd, -1);
    assert_false(tu_exists(root));
    ckpt_root_unlock(fd);
}

struct seen {
    char names[8][64];
    int n;
};

static int collect(const char *name, const char *why, void *payload)
{
    struct seen *s = payload;
    assert_non_null(why);
    if (s->n < 8)
        snprintf(s->names[s->n++], sizeof s->names[0], "%s", name);
    return 0;
}

static int has(const struct seen *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0)
            return 1;
    return 0;
}

static void test_strays(void **state)
{
    const char *root = stu_dir(state);
    struct ckpt_store_opts o0 = opts2(root, 0), o1 = opts2(root, 1);
    struct seen s;
    char p[600];
    stu_close(stu_open(&o0));
    stu_close(stu_open(&o1));
    memset(&s, 0, sizeof s);
    /* a store's own entries: none stray (store.lock included) */
    assert_int_equal(ckpt_root_strays(root, 2, collect, &s), 0);
    assert_int_equal(ckpt_root_check(root, 2), 0);

    stu_path(p, sizeof p, root, "rank-2");
    assert_int_equal(mkdir(p, 0700), 0);
    stu_path(p, sizeof p, root, "notes.txt");
    touch(p);
    stu_path(p, sizeof p, root, "rank-07");
    assert_int_equal(mkdir(p, 0700), 0);
    stu_path(p, sizeof p, root, "rank-3");
    touch(p);
    stu_path(p, sizeof p, root, ".rehome");
    assert_int_equal(mkdir(p, 0700), 0);
    assert_int_equal(ckpt_root_strays(root, 2, collect, &s), 4);
    assert_true(has(&s, "rank-2") && has(&s, "notes.txt") && has(&s, "rank-07") &&
                has(&s, "rank-3"));
    assert_false(has(&s, ".rehome") || has(&s, "store.lock") || has(&s, "rank-0"));
    /* rank count unknown: rank numbers are not judged */
    assert_int_equal(ckpt_root_strays(root, 0, NULL, NULL), 3);

    assert_int_equal(ckpt_root_check(root, 2), CKPT_E_EXISTS);
    const char *m = ckpt_errmsg();
    assert_non_null(strstr(m, "4 entries that are not part of this 2-rank store"));
    assert_non_null(strstr(m, "rank-2 (a rank directory beyond the store's 2 ranks)"));
    assert_non_null(strstr(m, "nothing was changed: remove them (rm -r"));
    assert_int_equal(ckpt_root_check(root, 3), CKPT_E_EXISTS); /* rank-2 fits 3 ranks */
    assert_null(strstr(ckpt_errmsg(), "rank-2 ("));
}

static void test_rank_of_name(void **state)
{
    (void)state;
    assert_int_equal(ckpt_rank_of_name("rank-0"), 0);
    assert_int_equal(ckpt_rank_of_name("rank-4095"), 4095);
    assert_int_equal(ckpt_rank_of_name("rank-"), -1);
    assert_int_equal(ckpt_rank_of_name("rank-01"), -1);
    assert_int_equal(ckpt_rank_of_name("rank-1.old"), -1);
    assert_int_equal(ckpt_rank_of_name("rank-99999999999"), -1);
    assert_int_equal(ckpt_rank_of_name("ranks-1"), -1);
}

/* origin_nranks: the rank count of the first write, kept across reopens;
 * what ckpt_store_set_origin records is committed and read back. */
static void test_origin_nranks(void **state)
{
    const char *root = stu_dir(state);
    struct ckpt_store_opts o0 = opts2(root, 0);
    ckpt_store *st = stu_open(&o0), *ro = NULL;
    assert_int_equal(stu_info(st).origin_nranks, 2);
    assert_int_equal(ckpt_store_set_origin(st, 0), CKPT_E_INVAL);
    assert_int_equal(ckpt_store_set_origin(st, 5), 0);
    stu_close(st);
    assert_int_equal(ckpt_store_open_readonly(&ro, root, 0), 0);
    assert_int_equal(stu_info(ro).origin_nranks, 5);
    assert_int_equal(stu_info(ro).nranks, 2);
    assert_int_equal(ckpt_store_set_origin(ro, 3), CKPT_E_READONLY);
    ckpt_store_close(ro);
    st = stu_open(&o0);
    assert_int_equal(stu_info(st).origin_nranks, 5);
    stu_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_root_lock_against_a_writer, stu_setup, stu_teardown),
        cmocka_unit_test_setup_teardown(test_root_lock_of_a_missing_root, stu_setup, stu_teardown),
        cmocka_unit_test_setup_teardown(test_strays, stu_setup, stu_teardown),
        cmocka_unit_test(test_rank_of_name),
        cmocka_unit_test_setup_teardown(test_origin_nranks, stu_setup, stu_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
