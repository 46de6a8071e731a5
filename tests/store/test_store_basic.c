/*
 * test_store_basic.c - opening, creating and reopening a store; the meta
 * record; ckpt_store_info; rank checks; missing stores; the clean-close
 * flag seen from a second process; the commit policy (count and time);
 * discard; sync modes.
 */
#include "store_test_util.h"

#include "bulki.h"
#include "ckpt_hooks.h" /* ckpt_rec_keys */

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static ckpt_val raw_get_ok(ckpt_store *st, ckpt_rtxn *tx, int db, const void *k, size_t klen)
{
    ckpt_val v = {0, NULL};
    stu_assert_rc(ckpt_get_raw(&v, tx, db, k, klen), 0, st);
    return v;
}

/* Meta record as stored on disk (committed), decoded field by field. */
static void assert_disk_meta(ckpt_store *st, int rank, int nranks, uint64_t generation, int clean)
{
    ckpt_rtxn *tx;
    const char *s;
    size_t slen;
    uint64_t u;
    int64_t i;
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    ckpt_val v = raw_get_ok(st, tx, CKPT_DB_META, "meta", 4);
    assert_int_equal(stu_rec_str(&v, "magic", &s, &slen), 0);
    assert_int_equal(slen, strlen(CKPT_FORMAT_MAGIC));
    assert_memory_equal(s, CKPT_FORMAT_MAGIC, slen);
    assert_int_equal(stu_rec_u64(&v, "format_version", &u), 0);
    assert_int_equal(u, CKPT_FORMAT_VERSION);
    assert_int_equal(stu_rec_i64(&v, "rank", &i), 0);
    assert_int_equal(i, rank);
    assert_int_equal(stu_rec_i64(&v, "nranks", &i), 0);
    assert_int_equal(i, nranks);
    assert_int_equal(stu_rec_u64(&v, "generation", &u), 0);
    assert_int_equal(u, generation);
    assert_int_equal(stu_rec_u64(&v, "clean", &u), 0);
    assert_int_equal(u, (uint64_t)clean);
    ckpt_rtxn_end(tx);
}

/* A second writer on the same rank environment is refused (CKPT_E_BUSY,
 * naming the store) while readers are not; once the first writer closes, a
 * new writer may open. */
static void test_second_writer_is_busy_readers_are_not(void **state)
{
    struct ckpt_store_opts o = stu_opts(stu_dir(state));
    ckpt_store *w = stu_open(&o), *w2 = NULL, *r = NULL;
    int rc = ckpt_store_open(&w2, &o);
    stu_assert_rc(rc, CKPT_E_BUSY, NULL);
    assert_null(w2);
    assert_non_null(strstr(ckpt_errmsg(), "open for writing by another process"));
    assert_non_null(strstr(ckpt_errmsg(), "rank-0"));
    struct ckpt_store_opts ro = o;
    ro.readonly = 1;
    r = stu_open(&ro);
    stu_close(r);
    stu_close(w);
    w2 = stu_open(&o);
    stu_close(w2);
}

/* A writer's close returns with writer.lock and store.lock dropped, while
 * a thread may still be unmapping its environment (the writer's background
 * thread, or a thread of its own when the writer has none): both locks can
 * be taken exclusively right away. Closing and reopening the same store at
 * once, 20 times, each time writing one more object, with and without a
 * background thread, loses nothing (every open first waits for the
 * unmapping of the closes before it). writer.lock holds the writer's pid,
 * whatever longer text was there before. */
static void test_close_drops_locks_at_once_and_reopens(void **state)
{
    const char *dir = stu_dir(state);
    char path[4200], name[32], want[32], got[64];
    uint8_t rec[256];
    for (int i = 0; i < 20; i++) {
        struct ckpt_store_opts o = stu_opts(dir);
        if (i % 2) { /* no background thread */
            o.commit_ms = 0;
            o.sync_mode = CKPT_SYNC_EVERY;
        }
        if (i == 1) {
            stu_path(path, sizeof path, dir, "rank-0/writer.lock");
            FILE *f = fopen(path, "w");
            assert_non_null(f);
            fputs("123456789012345678901234567890\n", f);
            fclose(f);
        }
        ckpt_store *st = stu_open(&o);
        stu_path(path, sizeof path, dir, "rank-0/writer.lock");
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        size_t glen = fread(got, 1, sizeof got - 1, f);
        fclose(f);
        got[glen] = 0;
        snprintf(want, sizeof want, "%-20ld\n", (long)getpid()); /* blank-padded */
        assert_string_equal(got, want);
        int n = snprintf(name, sizeof name, "reopen-%d", i);
        size_t len = stu_obj_rec(rec, sizeof rec, name, (size_t)n, i, 1, (uint64_t)i, 0);
        stu_assert_rc(ckpt_store_put_obj(st, 500u + (uint64_t)i, name, (size_t)n, i, 1, rec, len), 0,
                      st);
        stu_assert_rc(ckpt_store_close(st), 0, NULL);
        const char *locks[] = {"rank-0/writer.lock", "store.lock"};
        for (int l = 0; l < 2; l++) {
            stu_path(path, sizeof path, dir, locks[l]);
            int fd = open(path, O_RDWR | O_CLOEXEC);
            assert_true(fd >= 0);
            assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
            close(fd);
        }
        struct ckpt_store_opts ro = o;
        ro.readonly = 1;
        ckpt_store *r = stu_open(&ro);
        assert_int_equal(stu_count(r, CKPT_DB_OBJ), (uint64_t)i + 1);
        stu_close(r);
    }
    ckpt_store_wait_closed();
    ckpt_store_wait_closed(); /* nothing left to wait for: returns */
}

static void test_open_creates_rank_dir_and_meta(void **state)
{
    const char *dir = stu_dir(state);
    char path[1024], want[1024];
    struct ckpt_store_opts o = stu_opts(dir);
    int64_t t0 = (int64_t)time(NULL) * 1000;

    ckpt_store *st = stu_open(&o);
    stu_path(path, sizeof path, dir, "rank-0/data.mdb");
    assert_true(tu_exists(path));
    stu_path(want, sizeof want, dir, "rank-0");
    assert_string_equal(ckpt_store_path(st), want);

    struct ckpt_store_info info = stu_info(st);
    assert_int_equal(info.format_version, CKPT_FORMAT_VERSION);
    assert_int_equal(info.rank, 0);
    assert_int_equal(info.nranks, 1);
    assert_int_equal(info.generation, 1);
    assert_int_equal(info.clean, 0);
    assert_int_equal(info.mutations, 0);
    assert_true(info.commits >= 1);
    assert_int_equal(info.id_seq, 0);
    assert_true(info.created_ms >= t0 - 2000 && info.created_ms <= t0 + 60000);
    assert_true(info.last_commit_ms >= info.created_ms);
    assert_true(info.map_size >= o.map_size);
    assert_true(info.map_used > 0 && info.map_used <= info.map_size);
    /* "open, not clean" is committed at open */
    assert_disk_meta(st, 0, 1, 1, 0);
    assert_int_equal(ckpt_store_pending(st), 0);
    stu_close(st);

    /* after close: clean = 1 (seen by a read-only open, which bumps nothing) */
    o.readonly = 1;
    st = stu_open(&o);
    info = stu_info(st);
    assert_int_equal(info.clean, 1);
    assert_int_equal(info.generation, 1);
    assert_int_equal(info.format_version, CKPT_FORMAT_VERSION);
    assert_disk_meta(st, 0, 1, 1, 1);
    stu_close(st);

    /* reopen for writing: generation 2, not clean. The open writes
     * nothing: the store on disk stays as the close left it until the first
     * commit, or the first id handed out, carries the mark. */
    o.readonly = 0;
    st = stu_open(&o);
    info = stu_info(st);
    assert_int_equal(info.generation, 2);
    assert_int_equal(info.clean, 0);
    assert_disk_meta(st, 0, 1, 1, 1);
    uint64_t id;
    stu_assert_rc(ckpt_store_next_id(&id, st), 0, st);
    assert_disk_meta(st, 0, 1, 2, 0);
    stu_close(st);

    o.readonly = 1;
    st = stu_open(&o);
    info = stu_info(st);
    assert_int_equal(info.generation, 2);
    assert_int_equal(info.clean, 1);
    stu_close(st);
}

static void test_open_records_rank_and_nranks(void **state)
{
    const char *dir = stu_dir(state);
    char path[1024];
    struct ckpt_store_opts o = stu_opts(dir);
    o.rank = 2;
    o.nranks = 4;
    ckpt_store *st = stu_open(&o);
    stu_path(path, sizeof path, dir, "rank-2/data.mdb");
    assert_true(tu_exists(path));
    stu_path(path, sizeof path, dir, "rank-0");
    assert_false(tu_exists(path));
    struct ckpt_store_info info = stu_info(st);
    assert_int_equal(info.rank, 2);
    assert_int_equal(info.nranks, 4);
    assert_disk_meta(st, 2, 4, 1, 0);

    /* ids are (rank+1)*1e9 + seq and strictly increase */
    uint64_t a = 0, b = 0;
    stu_assert_rc(ckpt_store_next_id(&a, st), 0, st);
    stu_assert_rc(ckpt_store_next_id(&b, st), 0, st);
    assert_int_equal(a, 3000000000ull);
    assert_int_equal(b, a + 1);
    stu_assert_rc(ckpt_store_reserve_id(st, 3000000500ull), 0, st);
    stu_assert_rc(ckpt_store_next_id(&a, st), 0, st);
    assert_int_equal(a, 3000000501ull);
    /* reserving below the sequence does not move it back */
    stu_assert_rc(ckpt_store_reserve_id(st, 3000000010ull), 0, st);
    stu_assert_rc(ckpt_store_next_id(&a, st), 0, st);
    assert_int_equal(a, 3000000502ull);
    info = stu_info(st);
    assert_int_equal(info.id_seq, 503);
    stu_close(st);

    /* the sequence persists across a clean close */
    o.rank = 2;
    st = stu_open(&o);
    stu_assert_rc(ckpt_store_next_id(&a, st), 0, st);
    assert_int_equal(a, 3000000503ull);
    stu_close(st);
}

static void test_open_other_rank_or_nranks_is_mismatch(void **state)
{
    const char *dir = stu_dir(state);
    char from[1024], to[1024];
    struct ckpt_store_opts o = stu_opts(dir);
    ckpt_store *st = stu_open(&o);
    stu_close(st);

    /* same directory, another rank count */
    o.nranks = 2;
    st = (ckpt_store *)&o; /* must be reset to NULL */
    stu_assert_rc(ckpt_store_open(&st, &o), CKPT_E_MISMATCH, NULL);
    assert_null(st);
    assert_non_null(strstr(ckpt_errmsg(), "rank 0 of 1"));
    assert_non_null(strstr(ckpt_errmsg(), "rank 0 of 2"));

    /* another rank: move rank-0's environment to rank-1 and open it as rank 1 */
    stu_path(from, sizeof from, dir, "rank-0");
    stu_path(to, sizeof to, dir, "rank-1");
    assert_int_equal(rename(from, to), 0);
    o.rank = 1;
    o.nranks = 2;
    stu_assert_rc(ckpt_store_open(&st, &o), CKPT_E_MISMATCH, NULL);
    assert_null(st);
    assert_non_null(strstr(ckpt_errmsg(), "rank 1 of 2"));
    assert_non_null(strstr(ckpt_errmsg(), to));

    /* the refused opens changed nothing: generation is still 1 */
    o.check_rank = 0;
    o.readonly = 1;
    st = stu_open(&o);
    struct ckpt_store_info info = stu_info(st);
    assert_int_equal(info.generation, 1);
    assert_int_equal(info.clean, 1);
    assert_int_equal(info.rank, 0);
    stu_close(st);

    /* without check_rank the store opens for writing */
    o.readonly = 0;
    st = stu_open(&o);
    stu_close(st);
}

static void test_open_missing_store_readonly_is_nostore(void **state)
{
    const char *dir = stu_dir(state);
    char root[1024];
    ckpt_store *st = NULL;
    stu_path(root, sizeof root, dir, "no-such-store");
    struct ckpt_store_opts o = stu_opts(root);
    o.readonly = 1;
    stu_assert_rc(ckpt_store_open(&st, &o), CKPT_E_NOSTORE, NULL);
    assert_null(st);
    assert_non_null(strstr(ckpt_errmsg(), root));
    assert_false(tu_exists(root)); /* read-only creates nothing */

    /* writable without create: also NOSTORE, nothing created */
    o.readonly = 0;
    o.create = 0;
    stu_assert_rc(ckpt_store_open(&st, &o), CKPT_E_NOSTORE, NULL);
    assert_non_null(strstr(ckpt_errmsg(), root));
    assert_false(tu_exists(root));

    /* the root exists but holds another rank only */
    o.create = 1;
    o.rank = 1;
    o.nranks = 2;
    st = stu_open(&o);
    stu_close(st);
    o.rank = 0;
    o.readonly = 1;
    stu_assert_rc(ckpt_store_open(&st, &o), CKPT_E_NOSTORE, NULL);
    assert_non_null(strstr(ckpt_errmsg(), root));
}

static void test_open_rejects_bad_options(void **state)
{
    ckpt_store *st = NULL;
    struct ckpt_store_opts o = stu_opts(stu_dir(state));
    stu_assert_rc(ckpt_store_open(NULL, &o), CKPT_E_INVAL, NULL);
    stu_assert_rc(ckpt_store_open(&st, NULL), CKPT_E_INVAL, NULL);
    o.rank = 1; /* rank >= nranks */
    stu_assert_rc(ckpt_store_open(&st, &o), CKPT_E_INVAL, NULL);
    o.rank = 0;
    o.sync_mode = 7;
    stu_assert_rc(ckpt_store_open(&st, &o), CKPT_E_INVAL, NULL);
    o = stu_opts(NULL);
    stu_assert_rc(ckpt_store_open(&st, &o), CKPT_E_INVAL, NULL);
    assert_null(st);
}

static void test_info_counts_mutations_and_commits(void **state)
{
    struct ckpt_store_opts o = stu_opts(stu_dir(state));
    o.commit_every = 0;
    o.commit_ms = 0;
    ckpt_store *st = stu_open(&o);
    struct ckpt_store_info before = stu_info(st);
    uint8_t k[8];
    for (uint64_t i = 0; i < 5; i++) {
        ckpt_key_u64(k, i);
        stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_OBJ, k, 8, "v", 1), 0, st);
    }
    const uint64_t members[3] = {1, 2, 3};
    stu_assert_rc(ckpt_store_cont_add(st, 9, members, 3), 0, st);
    assert_int_equal(ckpt_store_pending(st), 8);
    struct ckpt_store_info mid = stu_info(st);
    assert_int_equal(mid.mutations, before.mutations); /* staged are not counted */
    stu_assert_rc(ckpt_store_checkpoint(st), 0, st);
    assert_int_equal(ckpt_store_pending(st), 0);
    struct ckpt_store_info after = stu_info(st);
    assert_int_equal(after.mutations, before.mutations + 8);
    assert_int_equal(after.commits, before.commits + 1);
    assert_true(after.last_commit_ms >= before.last_commit_ms);
    /* an empty checkpoint commits nothing */
    stu_assert_rc(ckpt_store_checkpoint(st), 0, st);
    struct ckpt_store_info again = stu_info(st);
    assert_int_equal(again.commits, after.commits);
    stu_close(st);

    o.readonly = 1;
    st = stu_open(&o);
    struct ckpt_store_info ro = stu_info(st);
    assert_int_equal(ro.mutations, 8);
    assert_int_equal(ro.commits, after.commits + 1); /* + the close commit */
    /* a read-only store refuses every mutation and checkpoint */
    ckpt_key_u64(k, 77);
    stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_OBJ, k, 8, "v", 1), CKPT_E_READONLY, st);
    stu_assert_rc(ckpt_store_checkpoint(st), CKPT_E_READONLY, st);
    uint64_t id;
    stu_assert_rc(ckpt_store_next_id(&id, st), CKPT_E_READONLY, st);
    stu_close(st);
}

/* ---- second process, clean-close flag ---- */

enum { CHILD_N = 500 };

static int child_write(const char *root)
{
    struct ckpt_store_opts o = stu_opts(root);
    ckpt_store *st = NULL;
    uint8_t rec[256];
    char name[64];
    if (ckpt_store_open(&st, &o) != 0)
        return 10;
    for (int i = 0; i < CHILD_N; i++) {
        int n = snprintf(name, sizeof name, "child-obj-%d", i);
        bulki_pair pairs[] = {
            {BULKI_V_STRN("obj_name", 8), BULKI_V_STRN(name, (size_t)n)},
            {BULKI_V_STRN("time_step", 9), BULKI_V_ITEM(BULKI_T_INT32, &i)},
        };
        bulki_doc doc = {2, pairs};
        size_t len;
        if (bulki_encode_doc(&len, rec, sizeof rec, &doc) != 0)
            return 11;
        if (ckpt_store_put_obj(st, 1000u + (uint64_t)i, name, (size_t)n, i, 0, rec, len) != 0)
            return 12;
    }
    if (ckpt_store_close(st) != 0)
        return 13;
    /* the child leaves with _exit, which runs no atexit handler: join the
     * thread unmapping the environment here (ThreadSanitizer counts a
     * finished, unjoined thread as a leak) */
    ckpt_store_wait_closed();
    return 0;
}

static void test_child_process_writes_parent_reads_clean_store(void **state)
{
    const char *dir = stu_dir(state);
    int status = 0;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child_write(dir));
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);

    struct ckpt_store_opts o = stu_opts(dir);
    o.readonly = 1;
    ckpt_store *st = stu_open(&o);
    struct ckpt_store_info info = stu_info(st);
    assert_int_equal(info.clean, 1);
    assert_int_equal(info.generation, 1);
    assert_int_equal(info.mutations, CHILD_N);
    assert_int_equal(stu_count(st, CKPT_DB_OBJ), CHILD_N);
    assert_int_equal(stu_count(st, CKPT_DB_OBJ_NAME), CHILD_N);

    ckpt_rtxn *tx;
    char name[64];
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    for (int i = 0; i < CHILD_N; i++) {
        uint64_t id = 0;
        ckpt_val rec;
        int n = snprintf(name, sizeof name, "child-obj-%d", i);
        stu_assert_rc(ckpt_get_obj_by_name(&id, &rec, tx, name, (size_t)n, i), 0, st);
        assert_int_equal(id, 1000u + (uint64_t)i);
        int64_t ts;
        assert_int_equal(stu_rec_i64(&rec, "time_step", &ts), 0);
        assert_int_equal(ts, i);
    }
    ckpt_rtxn_end(tx);
    stu_close(st);
}

/* ---- commit policy ---- */

static int visible(ckpt_store *st, uint64_t i)
{
    ckpt_rtxn *tx;
    ckpt_val v;
    uint8_t k[8];
    ckpt_key_u64(k, i);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    int rc = ckpt_get_raw(&v, tx, CKPT_DB_OBJ, k, 8);
    ckpt_rtxn_end(tx);
    assert_true(rc == 0 || rc == CKPT_E_NOTFOUND);
    return rc == 0;
}

static void put_i(ckpt_store *st, uint64_t i)
{
    uint8_t k[8];
    ckpt_key_u64(k, i);
    stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_OBJ, k, 8, k, 8), 0, st);
}

static void test_commit_every_k_mutations(void **state)
{
    enum { K = 10 };
    struct ckpt_store_opts o = stu_opts(stu_dir(state));
    o.commit_every = K;
    o.commit_ms = 0;
    ckpt_store *st = stu_open(&o);
    for (uint64_t round = 0; round < 3; round++) {
        for (uint64_t j = 0; j < K - 1; j++) {
            put_i(st, round * K + j);
            assert_int_equal(ckpt_store_pending(st), j + 1);
        }
        assert_false(visible(st, round * K));
        put_i(st, round * K + K - 1);
        assert_int_equal(ckpt_store_pending(st), 0);
        assert_true(visible(st, round * K));
        assert_true(visible(st, round * K + K - 1));
    }
    assert_int_equal(stu_info(st).mutations, 3 * K);
    /* a multi-object call counts one mutation per member */
    uint64_t objs[K];
    for (size_t i = 0; i < K; i++)
        objs[i] = 500 + i;
    stu_assert_rc(ckpt_store_cont_add(st, 7, objs, K), 0, st);
    assert_int_equal(ckpt_store_pending(st), 0);
    assert_int_equal(stu_info(st).mutations, 4 * K);
    stu_close(st);
}

/* Wait until the staged batch is empty and record i is visible, for up to
 * 20 s: the background commit is due after commit_ms, but a loaded machine
 * (CI runs tests in parallel with fsyncs) can delay its thread well past
 * that. Fails if it never comes. */
static void wait_background_commit(ckpt_store *st, int i)
{
    for (int waited = 0; ckpt_store_pending(st) != 0 || !visible(st, i); waited += 20) {
        if (waited >= 20000)
            fail_msg("record %d not committed 20 s after a put with commit_ms 50", i);
        stu_sleep_ms(20);
    }
}

/* This process's threads (/proc/self/task). */
static int thread_count(void)
{
    FILE *f = fopen("/proc/self/stat", "r");
    int n = -1;
    assert_non_null(f);
    /* field 20: num_threads; the command (field 2) has no spaces here */
    assert_int_equal(fscanf(f, "%*d %*s %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d "
                               "%*d %*d %*d %d", &n), 1);
    fclose(f);
    return n;
}

/* A writer's open starts no thread (a restart is ready without one); the
 * first mutation starts the background thread, whose time-based commit
 * then commits it. */
static void test_open_starts_no_thread_until_a_mutation(void **state)
{
    struct ckpt_store_opts o = stu_opts(stu_dir(state));
    uint8_t k[8];
    o.commit_every = 0;
    o.commit_ms = 20;
    ckpt_store *st = stu_open(&o);
    stu_close(st);
    ckpt_store_wait_closed(); /* the closed store's thread has ended */
    int before = thread_count();
    st = stu_open(&o);
    assert_int_equal(thread_count(), before);
    ckpt_key_u64(k, 7);
    stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_OBJ, k, 8, "v", 1), 0, st);
    assert_int_equal(thread_count(), before + 1);
    for (int i = 0; i < 500 && ckpt_store_pending(st) > 0; i++)
        usleep(10000);
    assert_int_equal(ckpt_store_pending(st), 0);
    stu_close(st);
}

static void test_commit_ms_commits_in_background(void **state)
{
    struct ckpt_store_opts o = stu_opts(stu_dir(state));
    o.commit_every = 0;
    o.commit_ms = 50;
    ckpt_store *st = stu_open(&o);
    put_i(st, 1);
    put_i(st, 2);
    wait_background_commit(st, 2);
    assert_int_equal(ckpt_store_pending(st), 0);
    assert_true(visible(st, 1));
    assert_true(visible(st, 2));
    assert_int_equal(stu_info(st).mutations, 2);
    /* and again, for a batch started after the first background commit */
    put_i(st, 3);
    wait_background_commit(st, 3);
    assert_true(visible(st, 3));
    stu_close(st);
}

static void test_staged_puts_invisible_until_checkpoint(void **state)
{
    struct ckpt_store_opts o = stu_opts(stu_dir(state));
    o.commit_every = 0;
    o.commit_ms = 0;
    ckpt_store *st = stu_open(&o);
    uint8_t rec[128];
    size_t len = stu_obj_rec(rec, sizeof rec, "staged", 6, 1, 0, 0, 0);
    stu_assert_rc(ckpt_store_put_obj(st, 42, "staged", 6, 1, 0, rec, len), 0, st);
    put_i(st, 7);
    assert_int_equal(ckpt_store_pending(st), 2);

    ckpt_rtxn *tx;
    ckpt_val v;
    uint64_t id;
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_get_obj(&v, tx, 42), CKPT_E_NOTFOUND, st);
    stu_assert_rc(ckpt_get_obj_by_name(&id, &v, tx, "staged", 6, 1), CKPT_E_NOTFOUND, st);
    ckpt_rtxn_end(tx);
    assert_false(visible(st, 7));

    stu_assert_rc(ckpt_store_checkpoint(st), 0, st);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_get_obj(&v, tx, 42), 0, st);
    assert_int_equal(v.len, len);
    assert_memory_equal(v.data, rec, len);
    stu_assert_rc(ckpt_get_obj_by_name(&id, NULL, tx, "staged", 6, 1), 0, st);
    assert_int_equal(id, 42);
    ckpt_rtxn_end(tx);
    assert_true(visible(st, 7));

    /* a staged delete is also invisible until committed */
    stu_assert_rc(ckpt_store_del_obj(st, 42), 0, st);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_get_obj(&v, tx, 42), 0, st);
    ckpt_rtxn_end(tx);
    stu_assert_rc(ckpt_store_checkpoint(st), 0, st);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_get_obj(&v, tx, 42), CKPT_E_NOTFOUND, st);
    ckpt_rtxn_end(tx);
    stu_close(st);
}

static void test_discard_drops_staged_and_leaves_unclean(void **state)
{
    struct ckpt_store_opts o = stu_opts(stu_dir(state));
    o.commit_every = 0;
    o.commit_ms = 0;
    ckpt_store *st = stu_open(&o);
    put_i(st, 1);
    stu_assert_rc(ckpt_store_checkpoint(st), 0, st);
    put_i(st, 2);
    uint64_t last_id = 0;
    stu_assert_rc(ckpt_store_next_id(&last_id, st), 0, st);
    ckpt_store_discard(st);
    ckpt_store_discard(NULL);

    o.readonly = 1;
    st = stu_open(&o);
    assert_true(visible(st, 1));
    assert_false(visible(st, 2));
    struct ckpt_store_info info = stu_info(st);
    assert_int_equal(info.clean, 0);
    assert_int_equal(info.mutations, 1);
    stu_close(st);

    /* reopening after an unclean end never hands out an old id again */
    o.readonly = 0;
    st = stu_open(&o);
    uint64_t id = 0;
    stu_assert_rc(ckpt_store_next_id(&id, st), 0, st);
    assert_true(id > last_id);
    assert_int_equal(stu_info(st).generation, 2);
    stu_close(st);
}

/* ---- a failing commit keeps the batch ---- */

static void put_objs(ckpt_store *st, uint64_t from, uint64_t to)
{
    uint8_t rec[512];
    char name[48];
    for (uint64_t i = from; i < to; i++) {
        int n = snprintf(name, sizeof name, "fail-%llu", (unsigned long long)i);
        size_t len = stu_obj_rec(rec, sizeof rec, name, (size_t)n, 0, 0, i, 200);
        stu_assert_rc(ckpt_store_put_obj(st, i, name, (size_t)n, 0, 0, rec, len), 0, st);
    }
}

static void assert_objs(ckpt_store *st, uint64_t n)
{
    assert_int_equal(stu_count(st, CKPT_DB_OBJ), n);
    assert_int_equal(stu_count(st, CKPT_DB_OBJ_NAME), n);
}

static void set_fsize_limit(rlim_t lim)
{
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &rl), 0);
    rl.rlim_cur = lim;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

static void test_failed_commit_keeps_the_batch_staged(void **state)
{
    const char *dir = stu_dir(state);
    char data[1024];
    struct rlimit saved;
    struct stat sb;
    struct ckpt_store_opts o = stu_opts(dir);
    o.commit_every = 0;
    o.commit_ms = 0;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
    if (saved.rlim_max != RLIM_INFINITY) {
        print_message("RLIMIT_FSIZE hard limit set; skipped\n");
        skip();
    }
    void (*old)(int) = signal(SIGXFSZ, SIG_IGN);
    ckpt_store *st = stu_open(&o);
    stu_path(data, sizeof data, dir, "rank-0/data.mdb");
    put_objs(st, 0, 100);
    stu_assert_rc(ckpt_store_checkpoint(st), 0, st);
    assert_int_equal(stat(data, &sb), 0);

    /* the file may not grow: the commit of ~300 KiB fails */
    set_fsize_limit((rlim_t)sb.st_size + 8192);
    put_objs(st, 100, 1100);
    int rc = ckpt_store_checkpoint(st);
    set_fsize_limit(saved.rlim_cur);
    /* LMDB reports a short write as EIO, a refused one as EFBIG */
    if (rc != CKPT_E_NOSPACE && rc != CKPT_E_IO)
        fail_msg("checkpoint over the file size limit: %s (%s)", ckpt_errname(rc),
                 ckpt_errmsg());
    assert_non_null(strstr(ckpt_errmsg(), "staged"));
    assert_int_equal(ckpt_store_pending(st), 1000);
    assert_objs(st, 100);
    /* new mutations are still accepted, and the retry commits everything */
    put_objs(st, 1100, 1200);
    stu_assert_rc(ckpt_store_checkpoint(st), 0, st);
    assert_int_equal(ckpt_store_pending(st), 0);
    assert_objs(st, 1200);
    assert_int_equal(stu_info(st).mutations, 1200);

    /* close fails the same way, leaves the store open, and can be retried */
    assert_int_equal(stat(data, &sb), 0);
    put_objs(st, 1200, 2200);
    set_fsize_limit((rlim_t)sb.st_size + 8192);
    rc = ckpt_store_close(st);
    set_fsize_limit(saved.rlim_cur);
    if (rc != CKPT_E_NOSPACE && rc != CKPT_E_IO)
        fail_msg("close over the file size limit: %s (%s)", ckpt_errname(rc),
                 ckpt_errmsg());
    assert_int_equal(ckpt_store_pending(st), 1000);
    assert_objs(st, 1200);
    stu_close(st);
    signal(SIGXFSZ, old);

    o.readonly = 1;
    st = stu_open(&o);
    assert_objs(st, 2200);
    struct ckpt_store_info info = stu_info(st);
    assert_int_equal(info.clean, 1);
    assert_int_equal(info.mutations, 2200);
    stu_close(st);
}

/* ---- several threads on one store ---- */

enum { N_WRITERS = 4, PER_WRITER = 4000 };

struct thread_ctx {
    ckpt_store *st;
    int index;
    int rc;
    _Atomic int *writers_left;
    _Atomic int *reader_went; /* writers start once the reader has read once */
    uint64_t reads;
};

static void *writer_main(void *arg)
{
    struct thread_ctx *c = arg;
    uint8_t k[8], val[200];
    while (!atomic_load(c->reader_went))
        sched_yield();
    for (uint64_t j = 0; j < PER_WRITER && c->rc == 0; j++) {
        uint64_t i = (uint64_t)c->index * PER_WRITER + j;
        ckpt_key_u64(k, i);
        memset(val, (int)(i & 0xff), sizeof val);
        memcpy(val, k, 8);
        c->rc = ckpt_store_put_raw(c->st, CKPT_DB_OBJ, k, 8, val, sizeof val);
        if (c->rc == 0 && j % 97 == 0) {
            uint64_t id;
            c->rc = ckpt_store_next_id(&id, c->st);
        }
    }
    atomic_fetch_sub(c->writers_left, 1);
    return NULL;
}

static void *reader_main(void *arg)
{
    struct thread_ctx *c = arg;
    uint64_t state = 7;
    while (atomic_load(c->writers_left) > 0 && c->rc == 0) {
        ckpt_rtxn *tx;
        ckpt_val v;
        uint8_t k[8];
        uint64_t i = tu_rand(&state) % (N_WRITERS * PER_WRITER);
        if ((c->rc = ckpt_rtxn_begin(&tx, c->st)) != 0)
            break;
        ckpt_key_u64(k, i);
        int rc = ckpt_get_raw(&v, tx, CKPT_DB_OBJ, k, 8);
        if (rc == 0 && (v.len != 200 || memcmp(v.data, k, 8) != 0))
            c->rc = CKPT_E_CORRUPT;
        else if (rc != 0 && rc != CKPT_E_NOTFOUND)
            c->rc = rc;
        ckpt_rtxn_end(tx);
        c->reads++;
        atomic_store(c->reader_went, 1);
    }
    atomic_store(c->reader_went, 1); /* after an error too: the writers go on */
    return NULL;
}

static void test_concurrent_writers_and_reader_with_map_growth(void **state)
{
    struct ckpt_store_opts o = stu_opts(stu_dir(state));
    o.map_size = (size_t)1 << 20;
    o.commit_every = 50;
    o.commit_ms = 5;
    ckpt_store *st = stu_open(&o);
    _Atomic int left = N_WRITERS, went = 0;
    struct thread_ctx ctx[N_WRITERS + 1];
    pthread_t th[N_WRITERS + 1];
    for (int t = 0; t <= N_WRITERS; t++) {
        ctx[t] = (struct thread_ctx){st, t, 0, &left, &went, 0};
        assert_int_equal(pthread_create(&th[t], NULL, t < N_WRITERS ? writer_main : reader_main,
                                        &ctx[t]),
                         0);
    }
    for (int t = 0; t <= N_WRITERS; t++) {
        pthread_join(th[t], NULL);
        if (ctx[t].rc != 0)
            fail_msg("thread %d: %s", t, ckpt_errname(ctx[t].rc));
    }
    assert_true(ctx[N_WRITERS].reads > 0);
    stu_close(st);

    o.readonly = 1;
    st = stu_open(&o);
    struct stu_list l;
    stu_collect_db(&l, st, CKPT_DB_OBJ, NULL, 0);
    assert_int_equal(l.n, N_WRITERS * PER_WRITER);
    for (size_t i = 0; i < l.n; i++) {
        assert_int_equal(ckpt_key_get_u64(l.e[i].key), i);
        assert_int_equal(l.e[i].vlen, 200);
        assert_int_equal(l.e[i].val[199], i & 0xff);
    }
    stu_list_free(&l);
    struct ckpt_store_info info = stu_info(st);
    assert_int_equal(info.mutations, N_WRITERS * PER_WRITER);
    assert_true(info.map_size > o.map_size);
    assert_int_equal(info.id_seq, N_WRITERS * ((PER_WRITER + 96) / 97));
    stu_close(st);
}

/* ---- sync modes ---- */

static void test_sync_modes_data_survives_close(void **state)
{
    static const char *const modes[] = {"sync", "interval", "close"};
    static const int want[] = {CKPT_SYNC_EVERY, CKPT_SYNC_INTERVAL, CKPT_SYNC_CLOSE};
    const char *dir = stu_dir(state);
    assert_int_equal(ckpt_sync_mode_parse("bogus"), -1);
    assert_int_equal(ckpt_sync_mode_parse(NULL), -1);
    assert_int_equal(ckpt_sync_mode_parse(""), -1);
    for (size_t m = 0; m < 3; m++) {
        char root[1024];
        int mode = ckpt_sync_mode_parse(modes[m]);
        assert_int_equal(mode, want[m]);
        assert_string_equal(ckpt_sync_mode_name(mode), modes[m]);
        stu_path(root, sizeof root, dir, modes[m]);
        struct ckpt_store_opts o = stu_opts(root);
        o.sync_mode = mode;
        o.sync_ms = 20;
        o.commit_every = 16;
        o.commit_ms = 10;
        ckpt_store *st = stu_open(&o);
        uint8_t rec[128];
        char name[32];
        for (int i = 0; i < 100; i++) {
            int n = snprintf(name, sizeof name, "%s-%d", modes[m], i);
            size_t len = stu_obj_rec(rec, sizeof rec, name, (size_t)n, i, 0, (uint64_t)i, 0);
            stu_assert_rc(ckpt_store_put_obj(st, 100u + (uint64_t)i, name, (size_t)n, i, 0, rec, len),
                          0, st);
            if (i == 50)
                stu_sleep_ms(60); /* let the background commit and sync run */
        }
        size_t kl = stu_kvtag_rec(rec, sizeof rec, "mode", 4, modes[m]);
        stu_assert_rc(ckpt_store_put_kvtag(st, 100, "mode", 4, rec, kl), 0, st);
        stu_close(st);

        o.readonly = 1;
        st = stu_open(&o);
        struct ckpt_store_info info = stu_info(st);
        assert_int_equal(info.clean, 1);
        assert_int_equal(info.mutations, 101);
        assert_int_equal(stu_count(st, CKPT_DB_OBJ), 100);
        ckpt_rtxn *tx;
        ckpt_val v;
        const char *s;
        size_t slen;
        stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
        for (int i = 0; i < 100; i++) {
            uint64_t id = 0;
            int n = snprintf(name, sizeof name, "%s-%d", modes[m], i);
            stu_assert_rc(ckpt_get_obj_by_name(&id, &v, tx, name, (size_t)n, i), 0, st);
            assert_int_equal(id, 100u + (uint64_t)i);
        }
        stu_assert_rc(ckpt_get_kvtag(&v, tx, 100, "mode", 4), 0, st);
        assert_int_equal(stu_rec_str(&v, "value", &s, &slen), 0);
        assert_int_equal(slen, strlen(modes[m]));
        assert_memory_equal(s, modes[m], slen);
        ckpt_rtxn_end(tx);
        stu_close(st);
    }
    assert_int_equal(ckpt_store_close(NULL), 0);
}

/* Store and codec codes do not overlap, and each names itself. */
/* The options' size field: 0 and sizes below the first version or above
 * this header's are refused, naming the macro to initialize with; a caller
 * built against the first version (a struct that ends before rec_keys, here
 * exactly that many bytes on the heap, so ASan sees a read past it) opens,
 * and the fields it lacks take their defaults (no rec_keys: a long kvtag
 * name cannot be checked on lookup). */
static void test_open_options_size(void **state)
{
    ckpt_store *st = NULL;
    struct ckpt_store_opts o = stu_opts(stu_dir(state));
    assert_int_equal(o.size, sizeof o);
    o.size = 0;
    assert_int_equal(ckpt_store_open(&st, &o), CKPT_E_INVAL);
    assert_null(st);
    assert_non_null(strstr(ckpt_errmsg(), "CKPT_STORE_OPTS_INIT"));
    o.size = CKPT_STORE_OPTS_SIZE_V1 - 1;
    assert_int_equal(ckpt_store_open(&st, &o), CKPT_E_INVAL);
    o.size = sizeof o + 8;
    assert_int_equal(ckpt_store_open(&st, &o), CKPT_E_INVAL);
    assert_null(st);

    o.size = CKPT_STORE_OPTS_SIZE_V1;
    o.rec_keys = ckpt_rec_keys; /* past the old struct: must not be read */
    void *old = malloc(CKPT_STORE_OPTS_SIZE_V1);
    assert_non_null(old);
    memcpy(old, &o, CKPT_STORE_OPTS_SIZE_V1);
    stu_assert_rc(ckpt_store_open(&st, old), 0, NULL);
    free(old);
    /* no rec_keys: a kvtag's long name cannot be checked on lookup */
    char *t = stu_name(600, 1);
    ckpt_rtxn *tx;
    ckpt_val v;
    stu_assert_rc(ckpt_store_put_kvtag(st, 1, t, 600, "x", 1), 0, st);
    stu_assert_rc(ckpt_store_checkpoint(st), 0, st);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    assert_int_equal(ckpt_get_kvtag(&v, tx, 1, t, 600), CKPT_E_INVAL);
    assert_non_null(strstr(ckpt_errmsg(), "rec_keys"));
    ckpt_rtxn_end(tx);
    stu_close(st);
    free(t);
}

struct errmsg_thread {
    ckpt_store *st;
    pthread_barrier_t *bar;
    int put_rc, clobbered;
    char msg[512];
};

/* Fails with a message of its own, lets the other thread fail, then reads
 * its message again. */
static void *errmsg_thread(void *p)
{
    struct errmsg_thread *t = p;
    t->put_rc = ckpt_store_put_raw(t->st, CKPT_DB_ID_HOME, "k", 0, "v", 1); /* empty key */
    snprintf(t->msg, sizeof t->msg, "%s", ckpt_errmsg());
    pthread_barrier_wait(t->bar);
    pthread_barrier_wait(t->bar);
    t->clobbered = strcmp(t->msg, ckpt_errmsg()) != 0;
    return NULL;
}

/* The error model: the message is the calling thread's, whatever handle;
 * another thread's failure on the same handle (or a failed open, with no
 * handle) does not replace it. */
static void test_errmsg_is_per_thread(void **state)
{
    struct ckpt_store_opts o = stu_opts(stu_dir(state));
    ckpt_store *st = stu_open(&o), *none = NULL;
    pthread_barrier_t bar;
    pthread_t th;
    struct errmsg_thread t = {st, &bar, 0, 0, ""};
    pthread_barrier_init(&bar, NULL, 2);
    assert_int_equal(pthread_create(&th, NULL, errmsg_thread, &t), 0);
    pthread_barrier_wait(&bar); /* the thread failed and kept its message */
    /* this thread fails twice meanwhile: on the same handle, then an open */
    assert_int_equal(ckpt_store_put_obj(st, 1, NULL, 0, 0, 0, "x", 1), CKPT_E_INVAL);
    assert_non_null(strstr(ckpt_errmsg(), "object name missing"));
    struct ckpt_store_opts bad = stu_opts(NULL);
    assert_int_equal(ckpt_store_open(&none, &bad), CKPT_E_INVAL);
    assert_non_null(strstr(ckpt_errmsg(), "store options"));
    pthread_barrier_wait(&bar);
    assert_int_equal(pthread_join(th, NULL), 0);
    pthread_barrier_destroy(&bar);
    assert_int_equal(t.put_rc, CKPT_E_INVAL);
    assert_int_equal(t.clobbered, 0); /* its message was still its own */
    assert_non_null(strstr(t.msg, "id_home key of 0 bytes"));
    stu_close(st);
}

static void test_error_codes_are_apart(void **state)
{
    (void)state;
#define CKPT_X_RANGE(name, code, msg) assert_true((code) <= 0 && (code) > -100);
    CKPT_ERRORS(CKPT_X_RANGE)
#undef CKPT_X_RANGE
#define BULKI_X_RANGE(name, code, msg)                                         \
    assert_true((code) == 0 || ((code) <= -101 && (code) >= -199));
    BULKI_ERRORS(BULKI_X_RANGE)
#undef BULKI_X_RANGE
    assert_string_equal(ckpt_errname(CKPT_E_NOTFOUND), "CKPT_E_NOTFOUND");
    assert_string_equal(ckpt_errname(BULKI_E_TRUNCATED), "BULKI_E_TRUNCATED");
    assert_string_equal(ckpt_strerror(BULKI_E_TRUNCATED), bulki_strerror(BULKI_E_TRUNCATED));
    assert_string_equal(ckpt_errname(-100), "CKPT_E_UNKNOWN");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_codes_are_apart),
        cmocka_unit_test_setup_teardown(test_open_options_size, stu_setup, stu_teardown),
        cmocka_unit_test_setup_teardown(test_errmsg_is_per_thread, stu_setup, stu_teardown),
        cmocka_unit_test_setup_teardown(test_open_creates_rank_dir_and_meta, stu_setup, stu_teardown),
        cmocka_unit_test_setup_teardown(test_open_records_rank_and_nranks, stu_setup, stu_teardown),
        cmocka_unit_test_setup_teardown(test_open_other_rank_or_nranks_is_mismatch, stu_setup,
                                        stu_teardown),
        cmocka_unit_test_setup_teardown(test_open_missing_store_readonly_is_nostore, stu_setup,
                                        stu_teardown),
        cmocka_unit_test_setup_teardown(test_open_rejects_bad_options, stu_setup, stu_teardown),
        cmocka_unit_test_setup_teardown(test_close_drops_locks_at_once_and_reopens, stu_setup,
                                        stu_teardown),
        cmocka_unit_test_setup_teardown(test_second_writer_is_busy_readers_are_not, stu_setup,
                                        stu_teardown),
        cmocka_unit_test_setup_teardown(test_info_counts_mutations_and_commits, stu_setup,
                                        stu_teardown),
        cmocka_unit_test_setup_teardown(test_child_process_writes_parent_reads_clean_store,
                                        stu_setup, stu_teardown),
        cmocka_unit_test_setup_teardown(test_commit_every_k_mutations, stu_setup, stu_teardown),
        cmocka_unit_test_setup_teardown(test_open_starts_no_thread_until_a_mutation, stu_setup,
                                        stu_teardown),
        cmocka_unit_test_setup_teardown(test_commit_ms_commits_in_background, stu_setup,
                                        stu_teardown),
        cmocka_unit_test_setup_teardown(test_staged_puts_invisible_until_checkpoint, stu_setup,
                                        stu_teardown),
        cmocka_unit_test_setup_teardown(test_discard_drops_staged_and_leaves_unclean, stu_setup,
                                        stu_teardown),
        cmocka_unit_test_setup_teardown(test_failed_commit_keeps_the_batch_staged, stu_setup,
                                        stu_teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_writers_and_reader_with_map_growth,
                                        stu_setup, stu_teardown),
        cmocka_unit_test_setup_teardown(test_sync_modes_data_survives_close, stu_setup, stu_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
