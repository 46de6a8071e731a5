/*
 * test_store_pending.c - the pending file (store/pending.c): a batch whose
 * commit fails on a full disk is exported, the writer goes (as a server
 * whose close cannot persist), and a later writer replays it: every
 * mutation is in the store. Damaged or truncated pending files are refused
 * with CKPT_E_CORRUPT naming the file and an offset, with nothing staged
 * and the file kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "csum.h"
#include "store_test_util.h"

#define NBASE 200
#define NNEW 300
#define BIG_ID_OFF 100000000ull /* beyond the crash gap */

static struct ckpt_store_opts manual_opts(const char *root)
{
    struct ckpt_store_opts o = stu_opts(root);
    o.commit_every = 0; /* only checkpoint and close commit */
    o.commit_ms = 0;
    return o;
}

static uint64_t obj_id(unsigned i)
{
    return CKPT_ID_BASE + 10 + i;
}

static void stage_base(ckpt_store *st)
{
    uint8_t rec[4096];
    char name[64];
    for (unsigned i = 0; i < NBASE; i++) {
        snprintf(name, sizeof name, "base-%u", i);
        size_t n = stu_obj_rec(rec, sizeof rec, name, strlen(name), 0, 0, i, 3000);
        stu_assert_rc(ckpt_store_put_obj(st, obj_id(i), name, strlen(name), 0, 0, rec, n), 0, st);
    }
}

/* The mutations at stake: new objects with kvtags and regions, a
 * container with members, a deleted base object, one object at a high id. */
static int stage_new(ckpt_store *st)
{
    uint8_t rec[4096];
    char name[64], val[64];
    int rc = 0;
    for (unsigned i = 0; i < NNEW && rc == 0; i++) {
        unsigned j = NBASE + i;
        snprintf(name, sizeof name, "new-%u", j);
        size_t n = stu_obj_rec(rec, sizeof rec, name, strlen(name), 7, CKPT_ID_BASE + 1, j, 500);
        if ((rc = ckpt_store_put_obj(st, obj_id(j), name, strlen(name), 7, CKPT_ID_BASE + 1, rec, n)) != 0)
            break;
        snprintf(val, sizeof val, "value-%u", j);
        n = stu_kvtag_rec(rec, sizeof rec, "tag", 3, val);
        if ((rc = ckpt_store_put_kvtag(st, obj_id(j), "tag", 3, rec, n)) != 0)
            break;
        uint64_t start[1] = {j}, count[1] = {10};
        rc = ckpt_store_put_region(st, obj_id(j), 1, start, count, val, strlen(val));
    }
    if (rc == 0) {
        size_t n = stu_cont_rec(rec, sizeof rec, "cont", 4, 1);
        rc = ckpt_store_put_cont(st, CKPT_ID_BASE + 1, "cont", 4, rec, n);
    }
    uint64_t members[3] = {obj_id(NBASE), obj_id(NBASE + 1), obj_id(NBASE + 2)};
    if (rc == 0)
        rc = ckpt_store_cont_add(st, CKPT_ID_BASE + 1, members, 3);
    if (rc == 0)
        rc = ckpt_store_del_obj(st, obj_id(0));
    if (rc == 0) {
        size_t n = stu_obj_rec(rec, sizeof rec, "high", 4, 0, 0, 1, 0);
        rc = ckpt_store_put_obj(st, CKPT_ID_BASE + BIG_ID_OFF, "high", 4, 0, 0, rec, n);
    }
    return rc;
}

#define NEW_OPS (3 * NNEW + 1 + 3 + 1 + 1)

static void check_all(ckpt_store *st)
{
    ckpt_rtxn *tx;
    ckpt_val v;
    char name[64], want[64];
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    assert_int_equal(ckpt_get_obj(&v, tx, obj_id(0)), CKPT_E_NOTFOUND);
    for (unsigned i = 1; i < NBASE; i++)
        stu_assert_rc(ckpt_get_obj(&v, tx, obj_id(i)), 0, st);
    for (unsigned i = 0; i < NNEW; i++) {
        unsigned j = NBASE + i;
        uint64_t id = 0;
        const char *s;
        size_t sl;
        snprintf(name, sizeof name, "new-%u", j);
        stu_assert_rc(ckpt_get_obj_by_name(&id, &v, tx, name, strlen(name), 7), 0, st);
        assert_int_equal(id, obj_id(j));
        stu_assert_rc(ckpt_get_kvtag(&v, tx, id, "tag", 3), 0, st);
        snprintf(want, sizeof want, "value-%u", j);
        assert_int_equal(stu_rec_str(&v, "value", &s, &sl), 0);
        assert_int_equal(sl, strlen(want));
        assert_memory_equal(s, want, sl);
    }
    stu_assert_rc(ckpt_get_cont(&v, tx, CKPT_ID_BASE + 1), 0, st);
    stu_assert_rc(ckpt_get_obj(&v, tx, CKPT_ID_BASE + BIG_ID_OFF), 0, st);
    ckpt_rtxn_end(tx);
    assert_int_equal(stu_count(st, CKPT_DB_REGION), NNEW);
    assert_int_equal(stu_count(st, CKPT_DB_CONT_OBJ), 3);
    assert_int_equal(stu_count(st, CKPT_DB_OBJ), NBASE - 1 + NNEW + 1);
}

static off_t file_size(const char *p)
{
    struct stat sb;
    assert_int_equal(stat(p, &sb), 0);
    return sb.st_size;
}

/* Child: a writer whose commit of the new mutations hits the end of the
 * "disk" (RLIMIT_FSIZE at data.mdb's size); close fails, the batch goes to
 * the pending file, the writer is discarded. Exit codes say what failed. */
static int child_full_disk(const char *root, const char *pend)
{
    char data[600];
    ckpt_store *st;
    struct ckpt_store_opts o = manual_opts(root);
    size_t n = 0;
    if (ckpt_store_open(&st, &o) != 0)
        return 10;
    snprintf(data, sizeof data, "%s/rank-0/data.mdb", root);
    struct stat sb;
    if (stat(data, &sb) != 0)
        return 11;
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit r;
    getrlimit(RLIMIT_FSIZE, &r);
    r.rlim_cur = (rlim_t)sb.st_size;
    if (setrlimit(RLIMIT_FSIZE, &r) != 0)
        return 12;
    if (stage_new(st) != 0)
        return 13;
    int rc = ckpt_store_close(st);
    if (rc != CKPT_E_NOSPACE && rc != CKPT_E_IO) {
        fprintf(stderr, "close: %s %s\n", ckpt_errname(rc), ckpt_errmsg());
        return 14;
    }
    if (ckpt_store_pending(st) != NEW_OPS)
        return 15;
    /* the pending file is written under the same limit: it fits */
    if ((rc = ckpt_store_pending_export(st, pend, &n)) != 0) {
        fprintf(stderr, "export: %s %s\n", ckpt_errname(rc), ckpt_errmsg());
        return 16;
    }
    if (n != NEW_OPS)
        return 17;
    ckpt_store_discard(st);
    return 0;
}

static void make_pending(const char *root, const char *pend)
{
    ckpt_store *st;
    struct ckpt_store_opts o = manual_opts(root);
    st = stu_open(&o);
    stage_base(st);
    stu_close(st);
    ckpt_store_wait_closed();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child_full_disk(root, pend));
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_true(tu_exists(pend));
}

static void test_full_disk_export_replay(void **state)
{
    char root[600], pend[600];
    stu_path(root, sizeof root, stu_dir(state), "store");
    stu_path(pend, sizeof pend, stu_dir(state), "pdc-ckpt-pending.rank-0");
    make_pending(root, pend);

    /* space is back: nothing of the new batch is in the store yet */
    struct ckpt_store_opts o = manual_opts(root);
    ckpt_store *st = stu_open(&o);
    assert_int_equal(stu_count(st, CKPT_DB_REGION), 0);
    assert_int_equal(stu_count(st, CKPT_DB_OBJ), NBASE);
    size_t n = 0;
    stu_assert_rc(ckpt_store_pending_replay(st, pend, &n), 0, st);
    assert_int_equal(n, NEW_OPS);
    assert_false(tu_exists(pend)); /* removed once committed */
    assert_int_equal(ckpt_store_pending(st), 0);
    check_all(st);
    /* the id sequence stays ahead of every replayed id */
    uint64_t id;
    stu_assert_rc(ckpt_store_next_id(&id, st), 0, st);
    assert_true(id > CKPT_ID_BASE + BIG_ID_OFF);
    stu_close(st);

    /* and it is all committed: a new writer sees it */
    st = stu_open(&o);
    check_all(st);
    stu_close(st);
}

static void write_file(const char *p, const uint8_t *b, size_t n)
{
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, b, n), (ssize_t)n);
    close(fd);
}

static uint8_t *read_whole(const char *p, size_t *n)
{
    *n = (size_t)file_size(p);
    uint8_t *b = malloc(*n);
    int fd = open(p, O_RDONLY);
    assert_true(fd >= 0 && b != NULL);
    assert_int_equal(read(fd, b, *n), (ssize_t)*n);
    close(fd);
    return b;
}

static void reseal(uint8_t *b, size_t n)
{
    uint32_t c = ckpt_crc32c(ckpt_crc32c(0, b, 40), b + 48, n - 48);
    for (int i = 0; i < 4; i++)
        b[40 + i] = (uint8_t)(c >> (8 * i));
}

/* A damaged file: CKPT_E_CORRUPT naming it and the offset, nothing staged,
 * nothing committed, the file kept. */
static void expect_refused(ckpt_store *st, const char *pend, const uint8_t *b, size_t n,
                           const char *why)
{
    char off[64];
    write_file(pend, b, n);
    size_t got = 99;
    int rc = ckpt_store_pending_replay(st, pend, &got);
    if (rc != CKPT_E_CORRUPT)
        fail_msg("%s: got %s (%s)", why, ckpt_errname(rc), ckpt_errmsg());
    assert_int_equal(got, 0);
    const char *msg = ckpt_errmsg();
    assert_non_null(strstr(msg, pend));
    snprintf(off, sizeof off, "at offset ");
    if (strstr(msg, off) == NULL)
        fail_msg("%s: message without an offset: %s", why, msg);
    assert_int_equal(ckpt_store_pending(st), 0);
    assert_true(tu_exists(pend));
    assert_int_equal(stu_count(st, CKPT_DB_REGION), 0);
}

static void test_damaged_refused(void **state)
{
    char root[600], pend[600];
    stu_path(root, sizeof root, stu_dir(state), "store");
    stu_path(pend, sizeof pend, stu_dir(state), "pending");
    make_pending(root, pend);
    size_t n;
    uint8_t *good = read_whole(pend, &n);
    uint8_t *b = malloc(n);
    assert_non_null(b);
    assert_true(n > 48 + 64);

    struct ckpt_store_opts o = manual_opts(root);
    ckpt_store *st = stu_open(&o);

    memcpy(b, good, n);
    b[0] ^= 1;
    expect_refused(st, pend, b, n, "bad magic");
    memcpy(b, good, n);
    b[8] = 9;
    expect_refused(st, pend, b, n, "format tag");
    memcpy(b, good, n);
    b[48 + (n - 48) / 2] ^= 0x10;
    expect_refused(st, pend, b, n, "flipped op byte (CRC)");
    memcpy(b, good, n);
    b[40] ^= 1;
    expect_refused(st, pend, b, n, "flipped CRC");
    expect_refused(st, pend, good, n - 1, "truncated by a byte");
    expect_refused(st, pend, good, n / 2, "truncated half way");
    expect_refused(st, pend, good, 20, "truncated in the header");
    expect_refused(st, pend, good, 0, "empty");
    /* damage a valid CRC does not catch: an impossible op, the op count */
    memcpy(b, good, n);
    b[48] = 77; /* kind of the first op */
    reseal(b, n);
    expect_refused(st, pend, b, n, "unknown op kind");
    memcpy(b, good, n);
    b[48 + 1] = 200; /* database of the first op */
    reseal(b, n);
    expect_refused(st, pend, b, n, "database out of range");
    memcpy(b, good, n);
    b[48 + 4] = 0xff; /* key length of the first op */
    b[48 + 5] = 0xff;
    reseal(b, n);
    expect_refused(st, pend, b, n, "key length past the end");
    memcpy(b, good, n);
    b[24]++; /* op count */
    reseal(b, n);
    expect_refused(st, pend, b, n, "op count");

    /* another rank's file */
    memcpy(b, good, n);
    b[16] = 1;
    reseal(b, n);
    write_file(pend, b, n);
    stu_assert_rc(ckpt_store_pending_replay(st, pend, NULL), CKPT_E_MISMATCH, st);
    assert_int_equal(ckpt_store_pending(st), 0);

    /* something staged already: the file's mutations would come after it */
    write_file(pend, good, n);
    stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_ID_HOME, "k", 1, "v", 1), 0, st);
    stu_assert_rc(ckpt_store_pending_replay(st, pend, NULL), CKPT_E_BUSY, st);
    assert_int_equal(ckpt_store_pending(st), 1);
    /* and export does not replace a pending file it did not write */
    stu_assert_rc(ckpt_store_pending_export(st, pend, NULL), CKPT_E_EXISTS, st);
    ckpt_store_discard(st);

    /* a reader cannot replay */
    ckpt_store_wait_closed();
    stu_assert_rc(ckpt_store_open_readonly(&st, root, 0), 0, st);
    stu_assert_rc(ckpt_store_pending_replay(st, pend, NULL), CKPT_E_READONLY, st);
    ckpt_store_close(st);

    /* a file of format 1 (object puts without their keys) is refused as
     * such, and left as it is */
    memcpy(b, good, n);
    b[8] = 1;
    reseal(b, n);
    write_file(pend, b, n);
    st = stu_open(&o);
    stu_assert_rc(ckpt_store_pending_replay(st, pend, NULL), CKPT_E_VERSION, st);
    assert_non_null(strstr(ckpt_errmsg(), "pending file of format 1"));
    assert_int_equal(ckpt_store_pending(st), 0);
    ckpt_store_discard(st);
    ckpt_store_wait_closed();
    write_file(pend, good, n);

    /* the good file still replays after all the refusals, by a writer
     * without rec_keys: the file's object puts carry their keys */
    struct ckpt_store_opts nk = o;
    nk.rec_keys = NULL;
    st = stu_open(&nk);
    stu_assert_rc(ckpt_store_pending_replay(st, pend, NULL), 0, st);
    check_all(st);
    stu_close(st);
    free(b);
    free(good);
}

/* A replay whose commit fails keeps the file and the staged mutations;
 * exporting again (the same writer) may replace the file it replayed. */
static void test_replay_commit_fails(void **state)
{
    char root[600], pend[600];
    stu_path(root, sizeof root, stu_dir(state), "store");
    stu_path(pend, sizeof pend, stu_dir(state), "pending");
    make_pending(root, pend);
    size_t before = (size_t)file_size(pend);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct ckpt_store_opts o = manual_opts(root);
        ckpt_store *st;
        char data[700];
        struct stat sb;
        if (ckpt_store_open(&st, &o) != 0)
            _exit(10);
        snprintf(data, sizeof data, "%s/rank-0/data.mdb", root);
        stat(data, &sb);
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit r;
        getrlimit(RLIMIT_FSIZE, &r);
        r.rlim_cur = (rlim_t)sb.st_size;
        setrlimit(RLIMIT_FSIZE, &r);
        int rc = ckpt_store_pending_replay(st, pend, NULL);
        if (rc == 0)
            _exit(11);
        if (!tu_exists(pend))
            _exit(12);
        if (ckpt_store_pending(st) != NEW_OPS)
            _exit(13);
        if (ckpt_store_pending_export(st, pend, NULL) != 0)
            _exit(14);
        ckpt_store_discard(st);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal((size_t)file_size(pend), before);
    struct ckpt_store_opts o = manual_opts(root);
    ckpt_store *st = stu_open(&o);
    stu_assert_rc(ckpt_store_pending_replay(st, pend, NULL), 0, st);
    check_all(st);
    stu_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_full_disk_export_replay, stu_setup, stu_teardown),
        cmocka_unit_test_setup_teardown(test_damaged_refused, stu_setup, stu_teardown),
        cmocka_unit_test_setup_teardown(test_replay_commit_fails, stu_setup, stu_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
