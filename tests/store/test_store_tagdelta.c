/*
 * test_store_tagdelta.c - format 3's tag-index delta (store/tagidx.c,
 * docs/STORE.md "The tag index's delta"): commits log tag-index entries to
 * kvtag_delta, a merge moves them into kvtag_name, and every read overlays
 * what is not merged yet. Checked against an in-memory model of the
 * logical index after random puts, deletes, object deletions and raw index
 * edits, with the delta unmerged, half merged and merged; across close, a
 * read-only open and a writer's reopen; after a writer killed with the
 * delta unmerged; for both merge triggers (the background thread, and the
 * committing thread when there is none); close merging nothing; and with a
 * damaged chunk.
 */
#include <errno.h>
#include <limits.h>
#include <lmdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store_test_util.h"

#define NOWNER 24
#define NNAME 6
#define OWNER(i) (CKPT_ID_BASE + 1 + (uint64_t)(i))

/* Names that are prefixes of each other, and one long enough to be hashed. */
static const char *g_names[NNAME];

static void names_init(void)
{
    static char longname[600];
    memset(longname, 'h', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    g_names[0] = "a";
    g_names[1] = "ab";
    g_names[2] = "abc";
    g_names[3] = "tag";
    g_names[4] = "Group";
    g_names[5] = longname;
}

/* The logical tag index, has[name][owner], and which kvtags exist, kv[][]
 * (deleting an object drops the index entries of its kvtags only: a raw
 * entry with no kvtag behind it stays) */
struct model {
    unsigned char has[NNAME][NOWNER];
    unsigned char kv[NNAME][NOWNER];
};

static size_t lkey(uint8_t *out, int name, int owner)
{
    size_t n = ckpt_key_name(out, g_names[name], strlen(g_names[name]));
    assert_true(n > 0);
    ckpt_key_u64(out + n, OWNER(owner));
    return n + 8;
}

static void put_tag(ckpt_store *st, struct model *m, int name, int owner)
{
    uint8_t rec[1024];
    size_t n = stu_kvtag_rec(rec, sizeof rec, g_names[name], strlen(g_names[name]), "v");
    stu_assert_rc(ckpt_store_put_kvtag(st, OWNER(owner), g_names[name], strlen(g_names[name]), rec, n),
                  0, st);
    m->has[name][owner] = 1;
    m->kv[name][owner] = 1;
}

/* Every logical key of the model, sorted as the index sorts them. */
static int lkey_cmp(const void *pa, const void *pb)
{
    const struct stu_ent *a = pa, *b = pb;
    int c = memcmp(a->key, b->key, a->klen < b->klen ? a->klen : b->klen);
    return c ? c : (a->klen > b->klen) - (a->klen < b->klen);
}

static void model_keys(struct stu_list *l, const struct model *m)
{
    memset(l, 0, sizeof *l);
    for (int i = 0; i < NNAME; i++)
        for (int o = 0; o < NOWNER; o++) {
            if (!m->has[i][o])
                continue;
            uint8_t k[CKPT_NAMEKEY_MAX + 8];
            size_t n = lkey(k, i, o);
            ckpt_val kv = {n, k}, vv = {0, ""};
            stu_collect(&kv, &vv, l);
        }
    qsort(l->e, l->n, sizeof *l->e, lkey_cmp);
}

static void assert_same(const struct stu_list *got, const struct stu_list *want, const char *what)
{
    if (got->n != want->n)
        fail_msg("%s: %zu entries, the model has %zu", what, got->n, want->n);
    for (size_t i = 0; i < got->n; i++)
        if (got->e[i].klen != want->e[i].klen ||
            memcmp(got->e[i].key, want->e[i].key, got->e[i].klen) != 0 || got->e[i].vlen != 0)
            fail_msg("%s: entry %zu differs from the model", what, i);
}

/* Whole index, each name's owners (ckpt_iter_tagged), the count, and point
 * lookups: all as the model says. */
static void check(ckpt_store *st, const struct model *m, const char *when)
{
    struct stu_list got, want;
    char what[160];
    model_keys(&want, m);
    stu_collect_db(&got, st, CKPT_DB_TAG_INDEX, NULL, 0);
    snprintf(what, sizeof what, "%s: the whole index", when);
    assert_same(&got, &want, what);
    stu_list_free(&got);
    assert_int_equal(stu_count(st, CKPT_DB_TAG_INDEX), want.n);
    stu_list_free(&want);

    ckpt_rtxn *tx;
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    for (int i = 0; i < NNAME; i++) {
        struct model one;
        memset(&one, 0, sizeof one);
        memcpy(one.has[i], m->has[i], sizeof one.has[i]);
        model_keys(&want, &one);
        memset(&got, 0, sizeof got);
        stu_assert_rc(ckpt_iter_tagged(tx, g_names[i], strlen(g_names[i]), stu_collect, &got), 0, st);
        snprintf(what, sizeof what, "%s: owners of \"%.10s\"", when, g_names[i]);
        assert_same(&got, &want, what);
        stu_list_free(&got);
        stu_list_free(&want);
        for (int o = 0; o < NOWNER; o++) {
            uint8_t k[CKPT_NAMEKEY_MAX + 8];
            ckpt_val v;
            size_t n = lkey(k, i, o);
            int rc = ckpt_get_raw(&v, tx, CKPT_DB_TAG_INDEX, k, n);
            if (rc != (m->has[i][o] ? 0 : CKPT_E_NOTFOUND))
                fail_msg("%s: get of \"%.10s\" owner %d: %s, the model says %s", when, g_names[i], o,
                         ckpt_errname(rc), m->has[i][o] ? "present" : "absent");
        }
    }
    ckpt_rtxn_end(tx);
}

/* One random mutation of store and model. */
static void random_op(ckpt_store *st, struct model *m, uint64_t *rng)
{
    int name = (int)(tu_rand(rng) % NNAME), owner = (int)(tu_rand(rng) % NOWNER);
    uint8_t k[CKPT_NAMEKEY_MAX + 8];
    size_t n;
    switch (tu_rand(rng) % 10) {
    case 0: /* delete the owner with all its kvtags */
        stu_assert_rc(ckpt_store_del_obj(st, OWNER(owner)), 0, st);
        for (int i = 0; i < NNAME; i++) {
            if (m->kv[i][owner])
                m->has[i][owner] = 0;
            m->kv[i][owner] = 0;
        }
        break;
    case 1:
    case 2:
        stu_assert_rc(ckpt_store_del_kvtag(st, OWNER(owner), g_names[name], strlen(g_names[name])),
                      0, st);
        m->has[name][owner] = 0;
        m->kv[name][owner] = 0;
        break;
    case 3: /* raw index edits: an entry with no kvtag, or one removed */
        n = lkey(k, name, owner);
        if (tu_rand(rng) % 2) {
            stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_TAG_INDEX, k, n, NULL, 0), 0, st);
            m->has[name][owner] = 1;
        } else {
            stu_assert_rc(ckpt_store_del_raw(st, CKPT_DB_TAG_INDEX, k, n), 0, st);
            m->has[name][owner] = 0;
        }
        break;
    default:
        put_tag(st, m, name, owner);
    }
}

/* Until the background thread merged the whole delta (a bound of 20 s,
 * not a timing: a merge that never comes fails the test). */
static void wait_merged(ckpt_store *st)
{
    uint64_t t0 = stu_now_ms();
    while (stu_info(st).tagidx_pending > 0 && stu_now_ms() - t0 < 20000)
        stu_sleep_ms(5);
    assert_int_equal(stu_info(st).tagidx_pending, 0);
}

static struct ckpt_store_opts delta_opts(const char *root)
{
    struct ckpt_store_opts o = stu_opts(root);
    o.commit_every = 7;
    o.commit_ms = 0;
    o.sync_ms = 3600u * 1000u; /* no merge by age */
    o.tagidx_merge = UINT_MAX; /* nor by count: the test merges */
    return o;
}

static void test_reads_overlay_the_unmerged_delta(void **state)
{
    struct ckpt_store_opts o = delta_opts(stu_dir(state));
    struct model m;
    uint64_t rng = 42;
    char when[64];
    memset(&m, 0, sizeof m);
    /* the model's raw index edits leave entries no kvtag backs: format 3
     * (format 4 refuses those on reads: test_store_checksum) */
    setenv("PDC_CKPT_CHECKSUMS", "0", 1);
    ckpt_store *st = stu_open(&o);
    unsetenv("PDC_CKPT_CHECKSUMS");
    for (int round = 0; round < 12; round++) {
        for (int i = 0; i < 150; i++)
            random_op(st, &m, &rng);
        stu_assert_rc(ckpt_store_checkpoint(st), 0, st);
        snprintf(when, sizeof when, "round %d, delta of %llu", round,
                 (unsigned long long)stu_info(st).tagidx_pending);
        assert_true(stu_info(st).tagidx_pending > 0);
        check(st, &m, when);
        if (round % 3 == 2) { /* merged: kvtag_name alone */
            stu_assert_rc(ckpt_store_merge_tags(st), 0, st);
            assert_int_equal(stu_info(st).tagidx_pending, 0);
            snprintf(when, sizeof when, "round %d, merged", round);
            check(st, &m, when);
        }
    }
    for (int i = 0; i < 100; i++)
        random_op(st, &m, &rng);
    stu_close(st); /* a delta left unmerged */

    ckpt_store *ro;
    stu_assert_rc(ckpt_store_open_readonly(&ro, o.root, 0), 0, NULL);
    uint64_t left = stu_info(ro).tagidx_pending;
    assert_true(left > 0);
    check(ro, &m, "read-only, after close");
    stu_assert_rc(ckpt_store_merge_tags(ro), CKPT_E_READONLY, ro);
    ckpt_store_close(ro);

    st = stu_open(&o);
    assert_int_equal(stu_info(st).tagidx_pending, left);
    check(st, &m, "reopened for writing");
    stu_assert_rc(ckpt_store_merge_tags(st), 0, st);
    check(st, &m, "reopened and merged");
    stu_close(st);
}

/* A writer killed with its delta unmerged: both readers and the next
 * writer see every committed entry, and the next writer's background
 * thread merges them once they waited sync_ms. */
static void test_delta_left_by_a_killed_writer(void **state)
{
    struct ckpt_store_opts o = delta_opts(stu_dir(state));
    struct model m;
    memset(&m, 0, sizeof m);
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        ckpt_store *st = NULL;
        close(pfd[0]);
        if (ckpt_store_open(&st, &o) != 0)
            _exit(3);
        for (int i = 0; i < NNAME; i++)
            for (int w = 0; w < NOWNER; w += 2)
                put_tag(st, &m, i, w);
        if (ckpt_store_checkpoint(st) != 0)
            _exit(4);
        if (write(pfd[1], "c", 1) != 1)
            _exit(5);
        pause(); /* killed here, the store open */
        _exit(6);
    }
    close(pfd[1]);
    char c;
    ssize_t got;
    while ((got = read(pfd[0], &c, 1)) < 0 && errno == EINTR)
        ;
    close(pfd[0]);
    assert_int_equal(got, 1);
    assert_int_equal(kill(pid, SIGKILL), 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    for (int i = 0; i < NNAME; i++)
        for (int w = 0; w < NOWNER; w += 2)
            m.has[i][w] = 1;

    ckpt_store *ro;
    stu_assert_rc(ckpt_store_open_readonly(&ro, o.root, 0), 0, NULL);
    assert_int_equal(stu_info(ro).tagidx_pending, NNAME * NOWNER / 2);
    assert_int_equal(stu_info(ro).clean, 0);
    check(ro, &m, "read-only, after the kill");
    ckpt_store_close(ro);

    o.sync_ms = 20; /* now merged once 20 ms old */
    ckpt_store *st = stu_open(&o);
    check(st, &m, "the next writer");
    wait_merged(st);
    check(st, &m, "merged by the background thread");
    stu_close(st);
}

/* The merge by count: the background thread once signalled, or the
 * committing thread itself when there is no background thread (sync mode
 * "sync" without time-based commits). */
static void merge_by_count(void **state, int sync_mode)
{
    struct ckpt_store_opts o = delta_opts(stu_dir(state));
    struct model m;
    memset(&m, 0, sizeof m);
    o.sync_mode = sync_mode;
    o.tagidx_merge = 100;
    ckpt_store *st = stu_open(&o);
    for (int i = 0; i < 90; i++)
        put_tag(st, &m, i % NNAME, i / NNAME);
    stu_assert_rc(ckpt_store_checkpoint(st), 0, st);
    assert_int_equal(stu_info(st).tagidx_pending, 90);
    check(st, &m, "below the count");
    /* the 100th entry's commit reaches the count: all 100 are merged */
    for (int i = 90; i < 100; i++)
        put_tag(st, &m, i % NNAME, i / NNAME);
    stu_assert_rc(ckpt_store_checkpoint(st), 0, st);
    if (sync_mode == CKPT_SYNC_EVERY) /* by the committing thread itself */
        assert_int_equal(stu_info(st).tagidx_pending, 0);
    wait_merged(st);
    check(st, &m, "merged by count");
    stu_close(st);
}

static void test_merge_by_count_in_the_background(void **state)
{
    merge_by_count(state, CKPT_SYNC_CLOSE);
}

static void test_merge_by_count_without_a_background_thread(void **state)
{
    merge_by_count(state, CKPT_SYNC_EVERY);
}

/* Close never merges in the committing thread, even when its last commit
 * reaches the count: close stays one commit and one sync, and the delta is
 * the next writer's to merge. */
static void test_close_does_not_merge(void **state)
{
    struct ckpt_store_opts o = delta_opts(stu_dir(state));
    struct model m;
    memset(&m, 0, sizeof m);
    o.sync_mode = CKPT_SYNC_EVERY; /* no background thread */
    o.commit_every = 1000;
    o.tagidx_merge = 5;
    ckpt_store *st = stu_open(&o);
    for (int i = 0; i < 9; i++)
        put_tag(st, &m, i % NNAME, i);
    stu_close(st); /* its commit takes all 9 */
    ckpt_store *ro;
    stu_assert_rc(ckpt_store_open_readonly(&ro, o.root, 0), 0, NULL);
    assert_int_equal(stu_info(ro).tagidx_pending, 9);
    check(ro, &m, "closed with 9 pending");
    ckpt_store_close(ro);
    /* the next writer's first commit merges them */
    st = stu_open(&o);
    put_tag(st, &m, 0, 20);
    stu_assert_rc(ckpt_store_checkpoint(st), 0, st);
    assert_int_equal(stu_info(st).tagidx_pending, 0);
    check(st, &m, "merged by the next writer");
    stu_close(st);
}

/* Long owner lists, as PDC's server makes them (every object gets the
 * same tag names): a merge appends a name's new owners with one
 * MDB_MULTIPLE put per group, to a name it creates and to one that has
 * owners below them; owners below a name's last, and deletes, go one at a
 * time. Names: a prefix of another, and a hashed long one (keys past 16
 * bytes that share their first 16). Checked unmerged and merged. */
#define LNAMES 3
#define LOWNERS 3000
struct lmodel {
    unsigned char has[LNAMES][LOWNERS];
};
static const int lname[LNAMES] = {0, 1, 5}; /* "a", "ab", the long one */

static void lcheck(ckpt_store *st, const struct lmodel *m, const char *when)
{
    struct stu_list got, want;
    memset(&want, 0, sizeof want);
    for (int i = 0; i < LNAMES; i++)
        for (int o = 0; o < LOWNERS; o++) {
            if (!m->has[i][o])
                continue;
            uint8_t k[CKPT_NAMEKEY_MAX + 8];
            size_t n = lkey(k, lname[i], o);
            ckpt_val kv = {n, k}, vv = {0, ""};
            stu_collect(&kv, &vv, &want);
        }
    qsort(want.e, want.n, sizeof *want.e, lkey_cmp);
    stu_collect_db(&got, st, CKPT_DB_TAG_INDEX, NULL, 0);
    assert_same(&got, &want, when);
    stu_list_free(&got);
    stu_list_free(&want);
}

static void lput(ckpt_store *st, struct lmodel *m, int o)
{
    for (int i = 0; i < LNAMES; i++) {
        const char *name = g_names[lname[i]];
        uint8_t rec[1024];
        size_t n = stu_kvtag_rec(rec, sizeof rec, name, strlen(name), "v");
        stu_assert_rc(ckpt_store_put_kvtag(st, OWNER(o), name, strlen(name), rec, n), 0, st);
        m->has[i][o] = 1;
    }
}

static void merge_round(ckpt_store *st, const struct lmodel *m, const char *what)
{
    char when[96];
    stu_assert_rc(ckpt_store_checkpoint(st), 0, st);
    assert_true(stu_info(st).tagidx_pending > 0);
    snprintf(when, sizeof when, "%s, unmerged", what);
    lcheck(st, m, when);
    stu_assert_rc(ckpt_store_merge_tags(st), 0, st);
    assert_int_equal(stu_info(st).tagidx_pending, 0);
    snprintf(when, sizeof when, "%s, merged", what);
    lcheck(st, m, when);
}

static void test_merge_long_owner_lists(void **state)
{
    struct ckpt_store_opts o = delta_opts(stu_dir(state));
    struct lmodel *m = calloc(1, sizeof *m);
    assert_non_null(m);
    o.commit_every = 1000;
    ckpt_store *st = stu_open(&o);
    for (int i = 1; i < 1000; i++) /* new names, ascending owners */
        lput(st, m, i);
    merge_round(st, m, "first owners");
    for (int i = 2000; i < LOWNERS; i++) /* above every name's last */
        lput(st, m, i);
    for (int i = 1; i < 1000; i += 7) /* and deletes below */
        for (int n = 0; n < LNAMES; n++) {
            stu_assert_rc(ckpt_store_del_kvtag(st, OWNER(i), g_names[lname[n]],
                                               strlen(g_names[lname[n]])), 0, st);
            m->has[n][i] = 0;
        }
    merge_round(st, m, "appended, some deleted");
    for (int i = 1999; i >= 1000; i--) /* below the last, descending */
        lput(st, m, i);
    for (int i = 1; i < 1000; i += 14) /* deleted ones again */
        lput(st, m, i);
    merge_round(st, m, "inserted below the last");
    stu_close(st);
    st = stu_open(&o);
    lcheck(st, m, "reopened");
    stu_close(st);
    free(m);
}

/* A store of 30 kvtags, closed, then its environment opened with raw
 * LMDB (envdir: its rank directory) and a write transaction begun on
 * kvtag_delta, for the damage tests to edit. */
static MDB_env *tags_then_raw_delta(const struct ckpt_store_opts *o, struct model *m, char *envdir,
                                    size_t n, MDB_txn **txn, MDB_dbi *dbi)
{
    MDB_env *env;
    memset(m, 0, sizeof *m);
    ckpt_store *st = stu_open(o);
    for (int i = 0; i < 30; i++)
        put_tag(st, m, i % NNAME, i % NOWNER);
    stu_close(st);
    ckpt_store_wait_closed(); /* raw LMDB below: the store must be unmapped */

    snprintf(envdir, n, "%s/rank-0", o->root);
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 16), 0);
    assert_int_equal(mdb_env_open(env, envdir, 0, 0600), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, txn), 0);
    assert_int_equal(mdb_dbi_open(*txn, "kvtag_delta", 0, dbi), 0);
    return env;
}

/* A last key of the delta that is no chunk number: a writer's open does
 * not read the delta and opens; its commits without kvtags go on; the
 * first commit that would append a chunk fails with CKPT_E_CORRUPT naming
 * the database, and writes nothing. */
static void test_damaged_last_chunk_key(void **state)
{
    struct ckpt_store_opts o = delta_opts(stu_dir(state));
    struct model m;
    char envdir[600];
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_val k = {5, "zzzzz"}, v = {4, "\0\0\0\0"};
    MDB_env *env = tags_then_raw_delta(&o, &m, envdir, sizeof envdir, &txn, &dbi);
    assert_int_equal(mdb_put(txn, dbi, &k, &v, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);

    ckpt_store *st = stu_open(&o);
    uint64_t id, before = stu_info(st).commits;
    stu_assert_rc(ckpt_store_next_id(&id, st), 0, st); /* a commit of meta only */
    uint64_t after = stu_info(st).commits;
    assert_true(after > before);
    put_tag(st, &m, 0, 1);
    stu_assert_rc(ckpt_store_checkpoint(st), CKPT_E_CORRUPT, st);
    const char *msg = ckpt_errmsg();
    if (strstr(msg, "kvtag_delta") == NULL || strstr(msg, "not a chunk number") == NULL ||
        strstr(msg, "data.mdb") == NULL)
        fail_msg("the message does not say what and where: %s", msg);
    assert_int_equal(stu_info(st).commits, after);
    ckpt_store_discard(st);
    ckpt_store_wait_closed();
}

/* A damaged chunk: reads of the tag index fail with CKPT_E_CORRUPT naming
 * kvtag_delta and the chunk, other reads go on, a writer's merge refuses
 * it, and the chunk is left as it is. */
static void test_damaged_chunk(void **state)
{
    struct ckpt_store_opts o = delta_opts(stu_dir(state));
    struct model m;
    char envdir[600];
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_val k, v;
    MDB_env *env = tags_then_raw_delta(&o, &m, envdir, sizeof envdir, &txn, &dbi);
    MDB_cursor *cur;
    assert_int_equal(mdb_cursor_open(txn, dbi, &cur), 0);
    assert_int_equal(mdb_cursor_get(cur, &k, &v, MDB_FIRST), 0);
    uint8_t key[8], bad[64];
    memcpy(key, k.mv_data, 8);
    mdb_cursor_close(cur);
    memset(bad, 0, sizeof bad);
    bad[3] = 2;    /* two entries */
    bad[4] = 1;    /* a put */
    bad[6] = 200;  /* of 200 bytes, in a 64-byte chunk */
    k.mv_size = 8;
    k.mv_data = key;
    v.mv_size = sizeof bad;
    v.mv_data = bad;
    assert_int_equal(mdb_put(txn, dbi, &k, &v, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);

    ckpt_store *ro;
    stu_assert_rc(ckpt_store_open_readonly(&ro, o.root, 0), 0, NULL);
    ckpt_rtxn *tx;
    ckpt_val val;
    struct stu_list l;
    memset(&l, 0, sizeof l);
    stu_assert_rc(ckpt_rtxn_begin(&tx, ro), 0, ro);
    assert_int_equal(ckpt_iter_tagged(tx, "a", 1, stu_collect, &l), CKPT_E_CORRUPT);
    const char *msg = ckpt_errmsg();
    if (strstr(msg, "kvtag_delta") == NULL || strstr(msg, "chunk 1") == NULL ||
        strstr(msg, "data.mdb") == NULL)
        fail_msg("the message does not say where: %s", msg);
    stu_list_free(&l);
    /* the records themselves are still read */
    stu_assert_rc(ckpt_get_kvtag(&val, tx, OWNER(0), g_names[0], 1), 0, ro);
    ckpt_rtxn_end(tx);
    ckpt_store_close(ro);

    /* A writer opens (it reads only the last chunk's key). Its reads of
     * the tag index fail the same way; its merge refuses the delta and
     * leaves it as it is; its other reads and its commits go on. */
    ckpt_store *w = NULL;
    stu_assert_rc(ckpt_store_open(&w, &o), 0, NULL);
    stu_assert_rc(ckpt_store_merge_tags(w), CKPT_E_CORRUPT, w);
    msg = ckpt_errmsg();
    if (strstr(msg, "kvtag_delta") == NULL || strstr(msg, "chunk 1") == NULL)
        fail_msg("the merge's refusal does not say where: %s", msg);
    stu_assert_rc(ckpt_rtxn_begin(&tx, w), 0, w);
    assert_int_equal(ckpt_iter_tagged(tx, "a", 1, stu_collect, &l), CKPT_E_CORRUPT);
    stu_list_free(&l);
    stu_assert_rc(ckpt_get_kvtag(&val, tx, OWNER(0), g_names[0], 1), 0, w);
    ckpt_rtxn_end(tx);
    put_tag(w, &m, 1, 1);
    stu_assert_rc(ckpt_store_checkpoint(w), 0, w);
    stu_close(w);
    ckpt_store_wait_closed();

    /* the damaged chunk is still there, byte for byte */
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 16), 0);
    assert_int_equal(mdb_env_open(env, envdir, MDB_RDONLY, 0600), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "kvtag_delta", 0, &dbi), 0);
    k.mv_size = 8;
    k.mv_data = key;
    assert_int_equal(mdb_get(txn, dbi, &k, &v), 0);
    assert_int_equal(v.mv_size, sizeof bad);
    assert_memory_equal(v.mv_data, bad, sizeof bad);
    mdb_txn_abort(txn);
    mdb_env_close(env);
}

int main(void)
{
    names_init();
#define T(f) cmocka_unit_test_setup_teardown(f, stu_setup, stu_teardown)
    const struct CMUnitTest tests[] = {
        T(test_reads_overlay_the_unmerged_delta),
        T(test_delta_left_by_a_killed_writer),
        T(test_damaged_last_chunk_key),
        T(test_merge_by_count_in_the_background),
        T(test_merge_by_count_without_a_background_thread),
        T(test_close_does_not_merge),
        T(test_merge_long_owner_lists),
        T(test_damaged_chunk),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
