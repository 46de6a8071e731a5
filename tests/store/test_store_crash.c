/*
 * test_store_crash.c - a child process writes a deterministic stream of
 * mutations (commit every 100) until the parent SIGKILLs it after a seeded
 * pseudo-random delay. The parent then reopens the store and checks that
 * exactly a committed prefix survived: keys 0..M-1, M a multiple of 100,
 * every value correct, nothing after a gap, M matching meta's mutation and
 * commit counters, and no id handed out before the crash handed out again.
 * Five crash/reopen rounds run on the same store, each child continuing the
 * stream where the committed prefix ends.
 *
 * Mutation i: key = big-endian i in CKPT_DB_OBJ, value = a BULKI doc
 * {obj_name "crash-<i>", time_step i % 1000, seq i, last_id L} where L is
 * the id the child got from ckpt_store_next_id just before. Every 7th
 * mutation (i % 7 == 3) goes through ckpt_store_put_obj (and so also
 * indexes the name); the others through ckpt_store_put_raw.
 *
 * The seed is CKPT_CRASH_SEED from the environment if set, else fixed.
 */
#include "store_test_util.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

enum {
    COMMIT_EVERY = 100,
    ROUNDS = 5,
    CHILD_LIMIT_MS = 20000, /* a child never outlives a broken parent long */
};

/* Shared with the child (MAP_SHARED): the highest id it was handed. */
struct shared {
    _Atomic uint64_t max_id;
    _Atomic uint64_t written; /* mutations staged so far (for the log) */
};

static int is_obj_op(uint64_t i)
{
    return i % 7 == 3;
}

static size_t rec_name(char *buf, size_t cap, uint64_t i)
{
    return (size_t)snprintf(buf, cap, "crash-%llu", (unsigned long long)i);
}

static size_t encode_rec(uint8_t *buf, size_t cap, uint64_t i, uint64_t last_id)
{
    char name[48];
    size_t n = rec_name(name, sizeof name, i);
    int32_t ts = (int32_t)(i % 1000);
    const bulki_pair pairs[] = {
        {BULKI_V_STRN("obj_name", 8), BULKI_V_STRN(name, n)},
        {BULKI_V_STRN("time_step", 9), BULKI_V_ITEM(BULKI_T_INT32, &ts)},
        {BULKI_V_STRN("seq", 3), BULKI_V_ITEM(BULKI_T_UINT64, &i)},
        {BULKI_V_STRN("last_id", 7), BULKI_V_ITEM(BULKI_T_UINT64, &last_id)},
    };
    const bulki_doc doc = {4, pairs};
    size_t len = 0;
    if (bulki_encode_doc(&len, buf, cap, &doc) != 0)
        return 0;
    return len;
}

/* The child: no cmocka here, only exit codes. */
static int child_main(const char *root, uint64_t start, int ready_fd, struct shared *sh)
{
    struct ckpt_store_opts o = stu_opts(root);
    ckpt_store *st = NULL;
    uint8_t rec[256], k[8];
    char name[48];
    o.commit_every = COMMIT_EVERY;
    o.commit_ms = 0; /* commits only at multiples of COMMIT_EVERY */
    if (ckpt_store_open(&st, &o) != 0)
        return 20;
    if (write(ready_fd, "r", 1) != 1)
        return 21;
    close(ready_fd);
    uint64_t t0 = stu_now_ms();
    for (uint64_t i = start;; i++) {
        uint64_t id = 0;
        if (ckpt_store_next_id(&id, st) != 0)
            return 22;
        atomic_store(&sh->max_id, id);
        size_t len = encode_rec(rec, sizeof rec, i, id);
        if (len == 0)
            return 23;
        int rc;
        if (is_obj_op(i)) {
            size_t n = rec_name(name, sizeof name, i);
            rc = ckpt_store_put_obj(st, i, name, n, (int32_t)(i % 1000), 0, rec, len);
        } else {
            ckpt_key_u64(k, i);
            rc = ckpt_store_put_raw(st, CKPT_DB_OBJ, k, 8, rec, len);
        }
        if (rc != 0)
            return 24;
        atomic_store(&sh->written, i + 1);
        if ((i & 1023) == 0 && stu_now_ms() - t0 > CHILD_LIMIT_MS)
            return 25;
    }
}

struct verify {
    uint64_t next;      /* expected next key */
    uint64_t max_last_id;
    uint64_t bad;       /* first bad key + 1, 0 if none */
    char why[128];
};

static int verify_cb(const ckpt_val *key, const ckpt_val *val, void *payload)
{
    struct verify *v = payload;
    uint64_t seq = 0, last_id = 0;
    int64_t ts = -1;
    const char *s;
    size_t slen;
    char name[48];
    if (key->len != 8 || ckpt_key_get_u64(key->data) != v->next) {
        snprintf(v->why, sizeof v->why, "key %llu where %llu was expected (a hole)",
                 key->len == 8 ? (unsigned long long)ckpt_key_get_u64(key->data) : 0ull,
                 (unsigned long long)v->next);
        v->bad = v->next + 1;
        return 1;
    }
    size_t n = rec_name(name, sizeof name, v->next);
    if (stu_rec_u64(val, "seq", &seq) != 0 || seq != v->next ||
        stu_rec_u64(val, "last_id", &last_id) != 0 || stu_rec_i64(val, "time_step", &ts) != 0 ||
        ts != (int64_t)(v->next % 1000) || stu_rec_str(val, "obj_name", &s, &slen) != 0 ||
        slen != n || memcmp(s, name, n) != 0) {
        snprintf(v->why, sizeof v->why, "value of key %llu is wrong", (unsigned long long)v->next);
        v->bad = v->next + 1;
        return 1;
    }
    if (last_id > v->max_last_id)
        v->max_last_id = last_id;
    v->next++;
    return 0;
}

static uint64_t count_obj_ops_below(uint64_t m)
{
    /* i in [0, m) with i % 7 == 3 */
    return m / 7 + (m % 7 > 3 ? 1 : 0);
}

/* Check the committed prefix; returns M. */
static uint64_t verify_prefix(ckpt_store *st, uint64_t *max_last_id)
{
    ckpt_rtxn *tx;
    struct verify v;
    memset(&v, 0, sizeof v);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    int rc = ckpt_iter(tx, CKPT_DB_OBJ, NULL, 0, verify_cb, &v);
    if (v.bad)
        fail_msg("committed prefix broken: %s", v.why);
    stu_assert_rc(rc, 0, st);
    uint64_t m = v.next;

    /* the name index holds exactly the put_obj mutations of the prefix */
    uint64_t entries = 0;
    stu_assert_rc(ckpt_db_stat(&entries, NULL, tx, CKPT_DB_OBJ_NAME), 0, st);
    assert_int_equal(entries, count_obj_ops_below(m));
    char name[48];
    uint64_t last_obj = m;
    while (last_obj > 0 && !is_obj_op(last_obj - 1))
        last_obj--;
    if (last_obj > 0) {
        uint64_t i = last_obj - 1, id = 0;
        ckpt_val rec;
        size_t n = rec_name(name, sizeof name, i);
        stu_assert_rc(ckpt_get_obj_by_name(&id, &rec, tx, name, n, (int32_t)(i % 1000)), 0, st);
        assert_int_equal(id, i);
    }
    uint64_t first_lost = m;
    while (!is_obj_op(first_lost))
        first_lost++;
    uint64_t id;
    ckpt_val rec;
    size_t n = rec_name(name, sizeof name, first_lost);
    stu_assert_rc(ckpt_get_obj_by_name(&id, &rec, tx, name, n, (int32_t)(first_lost % 1000)),
                  CKPT_E_NOTFOUND, st);
    ckpt_rtxn_end(tx);
    *max_last_id = v.max_last_id;
    return m;
}

static unsigned crash_seed(void)
{
    const char *s = getenv("CKPT_CRASH_SEED");
    return s && *s ? (unsigned)strtoul(s, NULL, 0) : 20240611u;
}

static void test_sigkill_leaves_a_committed_prefix(void **state)
{
    const char *root = stu_dir(state);
    uint64_t seed = crash_seed();
    struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                             -1, 0);
    assert_true(sh != MAP_FAILED);

    /* create the store, cleanly closed, empty */
    struct ckpt_store_opts o = stu_opts(root);
    ckpt_store *st = stu_open(&o);
    struct ckpt_store_info before = stu_info(st);
    stu_close(st);
    before.commits++; /* the close commit */
    before.clean = 1;

    uint64_t m_prev = 0, max_id_ever = 0;
    print_message("crash seed %u\n", crash_seed());
    for (int round = 0; round < ROUNDS; round++) {
        int pfd[2];
        unsigned delay = 50 + (unsigned)(tu_rand(&seed) % 251); /* 50..300 ms */
        atomic_store(&sh->max_id, 0);
        atomic_store(&sh->written, m_prev);
        assert_int_equal(pipe(pfd), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(pfd[0]);
            _exit(child_main(root, m_prev, pfd[1], sh));
        }
        close(pfd[1]);
        char c;
        ssize_t got;
        while ((got = read(pfd[0], &c, 1)) < 0 && errno == EINTR)
            ;
        close(pfd[0]);
        if (got != 1) {
            int status;
            waitpid(pid, &status, 0);
            fail_msg("child did not open the store (exit %d)",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        }
        stu_sleep_ms(delay);
        assert_int_equal(kill(pid, SIGKILL), 0);
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
            fail_msg("child ended on its own (exit %d) instead of being killed",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        uint64_t handed = atomic_load(&sh->max_id);
        uint64_t written = atomic_load(&sh->written);
        if (handed > max_id_ever)
            max_id_ever = handed;

        /* read-only first: the crash is visible as clean = 0 */
        o.readonly = 1;
        st = stu_open(&o);
        struct ckpt_store_info ro = stu_info(st);
        assert_int_equal(ro.clean, 0);
        assert_int_equal(ro.generation, before.generation + 1);
        stu_close(st);

        /* writable reopen must succeed */
        o.readonly = 0;
        st = stu_open(&o);
        struct ckpt_store_info info = stu_info(st);
        assert_int_equal(info.clean, 0);
        assert_int_equal(info.generation, before.generation + 2);
        uint64_t max_last_id = 0;
        uint64_t m = verify_prefix(st, &max_last_id);
        print_message("round %d: killed after %u ms, %llu staged, %llu committed, map %zu of %zu "
                      "bytes used\n", round, delay, (unsigned long long)written,
                      (unsigned long long)m, info.map_used, info.map_size);
        assert_int_equal(m % COMMIT_EVERY, 0);
        assert_true(m >= m_prev);
        /* `written` lags by one when the kill lands between a commit and
         * the child's update of it; otherwise less than one batch is lost */
        assert_true(m <= written + 1);
        assert_true(written < m + COMMIT_EVERY);
        /* meta agrees: the child's commits, each of COMMIT_EVERY mutations,
         * plus its open */
        assert_int_equal(ro.mutations - before.mutations, m - m_prev);
        assert_int_equal(ro.commits - before.commits, 1 + (m - m_prev) / COMMIT_EVERY);

        /* ids: nothing handed out before the crash comes back */
        uint64_t id = 0;
        stu_assert_rc(ckpt_store_next_id(&id, st), 0, st);
        assert_true(id > max_id_ever);
        assert_true(id > max_last_id);
        if (id > max_id_ever)
            max_id_ever = id;

        before = stu_info(st);
        stu_close(st);
        before.commits++; /* the close commit */
        m_prev = m;
    }
    /* 50..300 ms per round is plenty for commits: an empty result would
     * make the test vacuous */
    assert_true(m_prev >= COMMIT_EVERY);
    munmap(sh, sizeof *sh);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sigkill_leaves_a_committed_prefix, stu_setup,
                                        stu_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
