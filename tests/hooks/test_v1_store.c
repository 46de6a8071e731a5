/*
 * test_v1_store.c - a store written by an older format under this build:
 * tests/data/store_v1 (format 1, made at commit 9af389c) or
 * tests/data/store_v2 (format 2, commit 8d1cca3), both with the same
 * content (see their READMEs). Read-only it is read as it is and left byte
 * for byte unchanged; a writer converts it at open (format 1: tag index
 * rebuilt as DUPSORT; formats 1 and 2: the tag index's delta added) and
 * nothing is lost or changed in meaning; a writer that cannot take
 * writer.lock converts nothing. Every case works on its own copy in a
 * temporary directory.
 *
 * usage: hooks_test_v1_store FIXTURE_ROOT [FORMAT_VERSION (1)]
 */
#include "hooks_test_util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_fs.h"

static const char *g_fixture;
static unsigned g_version = 1;

/* What make_v1_extras.c and the workload put (objects 1e9+1 .. 1e9+40, the
 * container 1e9). */
#define OBJ1 1000000001ull
#define CONT 1000000000ull
#define NOBJ 40
#define NKVTAG 173

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *b = NULL;
    long n = 0;
    if (f == NULL)
        fail_msg("%s: cannot open", path);
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        (b = malloc((size_t)n + 1)) == NULL || fread(b, 1, (size_t)n, f) != (size_t)n)
        fail_msg("%s: cannot read", path);
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* The fixture's data.mdb copied to root/rank-0/data.mdb (0600). */
static void copy_fixture(const char *root)
{
    char src[1200], dir[1200], dst[1300];
    size_t len;
    snprintf(src, sizeof src, "%s/rank-0/data.mdb", g_fixture);
    snprintf(dir, sizeof dir, "%s/rank-0", root);
    uint8_t *b = slurp(src, &len);
    assert_int_equal(ckpt_fs_mkdirs(dir), 0);
    snprintf(dst, sizeof dst, "%s/data.mdb", dir);
    int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, b, len), (ssize_t)len);
    assert_int_equal(close(fd), 0);
    free(b);
}

static int same_file(const char *a, const char *b)
{
    size_t la, lb;
    uint8_t *x = slurp(a, &la), *y = slurp(b, &lb);
    int same = la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

/* rank 0's data.mdb of the store at root is byte for byte the fixture's */
static void assert_fixture_bytes(const char *root)
{
    char data[800], src[1200];
    snprintf(data, sizeof data, "%s/rank-0/data.mdb", root);
    snprintf(src, sizeof src, "%s/rank-0/data.mdb", g_fixture);
    assert_true(same_file(data, src));
}

static int count_owner(uint64_t id, void *p)
{
    (void)id;
    (*(int *)p)++;
    return 0;
}

/* How many owners carry tag `name`. */
static int tagged(ckpt_hooks_read *r, const char *name)
{
    int n = 0;
    HTU_OK(ckpt_hooks_foreach_tagged(r, name, count_owner, &n));
    return n;
}

static int count_kvtag(uint64_t owner, const struct ckpt_kvtag *t, void *p)
{
    (void)owner;
    assert_non_null(t->name);
    (*(int *)p)++;
    return 0;
}

/* Everything the fixture holds, through the hooks' read API. */
static void check_contents(ckpt_hooks *h)
{
    ckpt_hooks_read *r;
    struct ckpt_kvtag t;
    struct ckpt_obj o;
    struct ckpt_cont c;
    char *longname = htu_long_name('L', 500);
    int n = 0;
    HTU_OK(ckpt_hooks_read_begin(&r, h));
    HTU_OK(ckpt_hooks_get_obj(&o, r, OBJ1));
    HTU_OK(ckpt_hooks_get_obj_by_name(&o, r, o.obj_name, o.time_step));
    assert_int_equal(o.obj_id, OBJ1);
    assert_int_equal(o.cont_id, CONT);
    HTU_OK(ckpt_hooks_get_cont(&c, r, CONT));
    /* the workload's tags: tag0 int, tag1 double, tag2 string */
    HTU_OK(ckpt_hooks_get_kvtag(&t, r, OBJ1, "tag2"));
    assert_int_equal(t.type, 16);
    assert_string_equal((const char *)t.value, "v0.2.0");
    assert_string_equal(t.name, "tag2");
    /* make_v1_extras.c's */
    int32_t v;
    HTU_OK(ckpt_hooks_get_kvtag(&t, r, OBJ1, longname));
    assert_string_equal(t.name, longname);
    assert_int_equal(t.type, 2);
    assert_int_equal(t.size, 4);
    memcpy(&v, t.value, 4);
    assert_int_equal(v, 7);
    HTU_OK(ckpt_hooks_get_kvtag(&t, r, OBJ1, "odd"));
    assert_int_equal(t.type, 2);
    assert_int_equal(t.size, 3);
    assert_memory_equal(t.value, "\1\2\3", 3);
    HTU_OK(ckpt_hooks_get_kvtag(&t, r, CONT, "odd"));
    HTU_OK(ckpt_hooks_get_kvtag(&t, r, OBJ1, "bools"));
    assert_int_equal(t.type, 17);
    assert_memory_equal(t.value, "\0\1\2", 3);
    HTU_OK(ckpt_hooks_get_kvtag(&t, r, OBJ1, "empty"));
    assert_int_equal(t.type, 16);
    assert_int_equal(t.size, 0);
    HTU_OK(ckpt_hooks_get_kvtag(&t, r, OBJ1, "badtype"));
    assert_int_equal(t.type, 99);
    HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_kvtag(&t, r, OBJ1, "gone"));
    /* the tag index: every object carries tag0, the first 6 "Group", two
     * owners "odd", nobody "gone" */
    assert_int_equal(tagged(r, "tag0"), NOBJ);
    assert_int_equal(tagged(r, "Group"), 6);
    assert_int_equal(tagged(r, "odd"), 2);
    assert_int_equal(tagged(r, longname), 1);
    assert_int_equal(tagged(r, "gone"), 0);
    HTU_OK(ckpt_hooks_foreach_kvtag(r, OBJ1, count_kvtag, &n));
    assert_int_equal(n, 4 + 1 + 5); /* tag0..3, Group, 5 extras */
    ckpt_hooks_read_end(r);
    free(longname);
}

/* h, just opened, holds the fixture's contents in format `version`; h is closed */
static void check_and_close(ckpt_hooks *h, uint32_t version)
{
    struct ckpt_store_info info;
    HTU_OK(ckpt_store_info(&info, ckpt_hooks_store(h)));
    assert_int_equal(info.format_version, version);
    check_contents(h);
    HTU_OK(ckpt_hooks_close(h));
}

static void test_v1_store_read_only_is_read_as_it_is(void **state)
{
    struct tu_case *f = htu_fix(state);
    struct ckpt_hooks_opts o = htu_opts(state);
    struct ckpt_store_info info;
    ckpt_hooks *h;
    copy_fixture(f->root);
    HTU_OK(ckpt_hooks_open_readonly(&h, &o));
    HTU_OK(ckpt_store_info(&info, ckpt_hooks_store(h)));
    assert_int_equal(info.tagidx_pending, 0);
    check_and_close(h, g_version);
    assert_fixture_bytes(f->root);
}

static void test_v1_store_is_converted_by_a_writer(void **state)
{
    struct tu_case *f = htu_fix(state);
    struct ckpt_hooks_opts o = htu_opts(state);
    struct ckpt_store_info info;
    struct ckpt_rebuild_stats s;
    ckpt_hooks *h;
    ckpt_rtxn *tx;
    uint64_t nk = 0, ni = 0;
    copy_fixture(f->root);
    HTU_OK(ckpt_hooks_open(&h, &o));
    HTU_OK(ckpt_store_info(&info, ckpt_hooks_store(h)));
    /* format 3, the last without checksums: format 4 would need every
     * record rewritten (ckpt_store_copy does that) */
    assert_int_equal(info.format_version, 3);
    assert_false(ckpt_store_has_checksums(ckpt_hooks_store(h)));
    check_contents(h);
    HTU_OK(ckpt_rtxn_begin(&tx, ckpt_hooks_store(h)));
    HTU_OK(ckpt_db_stat(&nk, NULL, tx, CKPT_DB_KVTAG));
    HTU_OK(ckpt_db_stat(&ni, NULL, tx, CKPT_DB_TAG_INDEX));
    ckpt_rtxn_end(tx);
    assert_int_equal(nk, NKVTAG);
    assert_int_equal(ni, NKVTAG);
    /* format 2 records beside format 1 ones: a new tag, a rewritten one, a
     * deleted one */
    int32_t v = 11;
    struct ckpt_kvtag nt = {"fresh", 2, 4, &v}, re = {"tag0", 2, 4, &v};
    HTU_OK(ckpt_hook_kvtag_put(h, OBJ1, &nt));
    HTU_OK(ckpt_hook_kvtag_put(h, OBJ1 + 1, &re));
    HTU_OK(ckpt_hook_kvtag_delete(h, OBJ1, "odd"));
    HTU_OK(ckpt_hooks_checkpoint(h));
    /* their tag-index entries wait in the delta (2 puts, 1 delete), and
     * reads see them already */
    HTU_OK(ckpt_store_info(&info, ckpt_hooks_store(h)));
    assert_int_equal(info.tagidx_pending, 3);
    ckpt_hooks_read *r0;
    HTU_OK(ckpt_hooks_read_begin(&r0, h));
    assert_int_equal(tagged(r0, "fresh"), 1);
    assert_int_equal(tagged(r0, "odd"), 1);
    ckpt_hooks_read_end(r0);
    HTU_OK(ckpt_hooks_close(h));

    HTU_OK(ckpt_hooks_restart_rebuild(&h, &o, NULL, NULL, &s));
    assert_int_equal(s.objs, NOBJ);
    assert_int_equal(s.kvtags, NKVTAG);
    assert_int_equal(s.conts, 1);
    assert_int_equal(s.members, NOBJ);
    assert_int_equal(s.regions, 10);
    ckpt_hooks_read *r;
    struct ckpt_kvtag t;
    HTU_OK(ckpt_hooks_read_begin(&r, h));
    HTU_OK(ckpt_hooks_get_kvtag(&t, r, OBJ1 + 1, "tag0"));
    memcpy(&v, t.value, 4);
    assert_int_equal(v, 11);
    HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_kvtag(&t, r, OBJ1, "odd"));
    assert_int_equal(tagged(r, "fresh"), 1);
    assert_int_equal(tagged(r, "odd"), 1);
    ckpt_hooks_read_end(r);
    HTU_OK(ckpt_hooks_close(h));
}

/* The store's compacting copy (what ckpt-inspect copy uses for a store
 * without checksums) writes an older store out in format 5, checksums and
 * record keys and all, with the same content; the original is left as it was. The plain
 * copy is the file as it is. */
static void test_v1_store_copies_into_the_current_format(void **state)
{
    struct tu_case *f = htu_fix(state);
    struct ckpt_hooks_opts o = htu_opts(state);
    struct ckpt_store_info info;
    char croot[800], cdir[900];
    ckpt_store *st;
    ckpt_hooks *h, *src;
    copy_fixture(f->root);
    /* through the hooks: format 5's record keys are read from the records
     * with their rec_keys (ckpt_rec_keys) */
    o.store_root = f->root;
    HTU_OK(ckpt_hooks_open_readonly(&src, &o));
    st = ckpt_hooks_store(src);
    assert_false(ckpt_store_has_checksums(st));
    snprintf(croot, sizeof croot, "%s/copy", f->dir);
    snprintf(cdir, sizeof cdir, "%s/rank-0", croot);
    for (int compact = 0; compact <= 1; compact++) {
        tu_rmtree(croot);
        HTU_OK(ckpt_store_copy(st, cdir, compact));
        o.store_root = croot;
        HTU_OK(ckpt_hooks_open_readonly(&h, &o));
        HTU_OK(ckpt_store_info(&info, ckpt_hooks_store(h)));
        assert_int_equal(info.format_version, compact ? CKPT_FORMAT_VERSION : g_version);
        assert_int_equal(ckpt_store_has_checksums(ckpt_hooks_store(h)), compact);
        check_contents(h);
        HTU_OK(ckpt_hooks_close(h));
    }
    HTU_OK(ckpt_hooks_close(src));
    /* and a writer of the copy keeps it in format 5 */
    HTU_OK(ckpt_hooks_open(&h, &o));
    check_and_close(h, CKPT_FORMAT_VERSION);
    assert_fixture_bytes(f->root);
}

static void test_v1_store_is_not_converted_without_the_writer_lock(void **state)
{
    struct tu_case *f = htu_fix(state);
    struct ckpt_hooks_opts o = htu_opts(state);
    char lk[800];
    ckpt_hooks *h = NULL;
    copy_fixture(f->root);
    snprintf(lk, sizeof lk, "%s/rank-0/writer.lock", f->root);
    int fd = open(lk, O_RDWR | O_CREAT, 0600);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0); /* another writer */
    HTU_RC(CKPT_E_BUSY, ckpt_hooks_open(&h, &o));
    assert_null(h);
    close(fd);
    assert_fixture_bytes(f->root);
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s FIXTURE_ROOT (tests/data/store_v1/root) [FORMAT_VERSION (1)]\n",
                argv[0]);
        return 2;
    }
    g_fixture = argv[1];
    if (argc == 3)
        g_version = (unsigned)atoi(argv[2]);
#define T(f) cmocka_unit_test_setup_teardown(f, htu_setup, htu_teardown)
    const struct CMUnitTest tests[] = {
        T(test_v1_store_read_only_is_read_as_it_is),
        T(test_v1_store_is_converted_by_a_writer),
        T(test_v1_store_copies_into_the_current_format),
        T(test_v1_store_is_not_converted_without_the_writer_lock),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
