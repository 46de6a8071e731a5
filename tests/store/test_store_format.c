/*
 * test_store_format.c - what open does with environments it must not use:
 * a meta record of another format version (rewritten here with raw LMDB
 * and the BULKI codec), a meta record without the magic or with damaged
 * fields, a foreign LMDB environment, and a data.mdb full of garbage.
 */
#include "store_test_util.h"
#include "csum.h"

#include <fcntl.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The meta record's fields (store/meta.c), as read back from disk. */
struct meta_fields {
    char magic[32];
    uint32_t format_version;
    int32_t rank, nranks;
    uint64_t id_seq, generation;
    uint8_t clean;
    int64_t created_ms, last_commit_ms;
    uint64_t mutations, commits;
};

/* What to change when re-encoding. */
enum meta_edit {
    EDIT_NONE = 0,
    EDIT_DROP_MAGIC,  /* no "magic" pair at all */
    EDIT_DROP_RANK,   /* no "rank" pair */
    EDIT_NOT_BULKI,   /* the value is not a BULKI doc */
};

static MDB_env *raw_env_open(const char *envdir, unsigned flags)
{
    MDB_env *env;
    ckpt_store_wait_closed(); /* a store closed here may still be unmapping it */
    int rc = mdb_env_create(&env);
    assert_int_equal(rc, 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 16), 0);
    assert_int_equal(mdb_env_set_mapsize(env, (size_t)64 << 20), 0);
    rc = mdb_env_open(env, envdir, flags, 0600);
    if (rc != 0)
        fail_msg("mdb_env_open(%s): %s", envdir, mdb_strerror(rc));
    return env;
}

static void read_meta(struct meta_fields *m, const char *envdir)
{
    MDB_env *env = raw_env_open(envdir, MDB_RDONLY);
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_val k = {4, "meta"}, v;
    bulki_map map;
    bulki_ent e;
    const char *s;
    size_t slen;
    uint64_t u;
    int64_t i;

    memset(m, 0, sizeof *m);
    assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "meta", 0, &dbi), 0);
    assert_int_equal(mdb_get(txn, dbi, &k, &v), 0);
    /* format 4: the record's checksum follows the BULKI document */
    if (ckpt_csum_check(k.mv_data, k.mv_size, v.mv_data, v.mv_size, NULL, NULL) == 0)
        v.mv_size -= CKPT_CSUM_LEN;
    assert_int_equal(bulki_decode_doc(&map, v.mv_data, v.mv_size, NULL), 0);
    assert_int_equal(bulki_map_get(&e, &map, "magic"), 0);
    assert_int_equal(bulki_ent_str(&s, &slen, &e), 0);
    assert_true(slen < sizeof m->magic);
    memcpy(m->magic, s, slen);
#define GET_U(field, var)                                                      \
    assert_int_equal(bulki_map_get(&e, &map, field), 0);                       \
    assert_int_equal(bulki_ent_u64(&u, &e), 0);                                \
    var = u
#define GET_I(field, var)                                                      \
    assert_int_equal(bulki_map_get(&e, &map, field), 0);                       \
    assert_int_equal(bulki_ent_i64(&i, &e), 0);                                \
    var = i
    GET_U("format_version", m->format_version);
    GET_I("rank", m->rank);
    GET_I("nranks", m->nranks);
    GET_U("id_seq", m->id_seq);
    GET_U("generation", m->generation);
    GET_U("clean", m->clean);
    GET_I("created_ms", m->created_ms);
    GET_I("last_commit_ms", m->last_commit_ms);
    GET_U("mutations", m->mutations);
    GET_U("commits", m->commits);
#undef GET_U
#undef GET_I
    mdb_txn_abort(txn);
    mdb_env_close(env);
}

/* Re-encode meta with the same field names and types as store/meta.c. */
static void write_meta(const char *envdir, const struct meta_fields *m, enum meta_edit edit)
{
    uint8_t buf[1024];
    size_t len = 0, np = 0;
    bulki_pair pairs[11];
    if (edit != EDIT_DROP_MAGIC)
        pairs[np++] = (bulki_pair){BULKI_V_STRN("magic", 5), BULKI_V_STRN(m->magic, strlen(m->magic))};
    pairs[np++] = (bulki_pair){BULKI_V_STRN("format_version", 14),
                               BULKI_V_ITEM(BULKI_T_UINT32, &m->format_version)};
    if (edit != EDIT_DROP_RANK)
        pairs[np++] = (bulki_pair){BULKI_V_STRN("rank", 4), BULKI_V_ITEM(BULKI_T_INT32, &m->rank)};
    pairs[np++] = (bulki_pair){BULKI_V_STRN("nranks", 6), BULKI_V_ITEM(BULKI_T_INT32, &m->nranks)};
    pairs[np++] = (bulki_pair){BULKI_V_STRN("id_seq", 6), BULKI_V_ITEM(BULKI_T_UINT64, &m->id_seq)};
    pairs[np++] = (bulki_pair){BULKI_V_STRN("generation", 10),
                               BULKI_V_ITEM(BULKI_T_UINT64, &m->generation)};
    pairs[np++] = (bulki_pair){BULKI_V_STRN("clean", 5), BULKI_V_ITEM(BULKI_T_BOOLEAN, &m->clean)};
    pairs[np++] = (bulki_pair){BULKI_V_STRN("created_ms", 10),
                               BULKI_V_ITEM(BULKI_T_INT64, &m->created_ms)};
    pairs[np++] = (bulki_pair){BULKI_V_STRN("last_commit_ms", 14),
                               BULKI_V_ITEM(BULKI_T_INT64, &m->last_commit_ms)};
    pairs[np++] = (bulki_pair){BULKI_V_STRN("mutations", 9),
                               BULKI_V_ITEM(BULKI_T_UINT64, &m->mutations)};
    pairs[np++] = (bulki_pair){BULKI_V_STRN("commits", 7), BULKI_V_ITEM(BULKI_T_UINT64, &m->commits)};
    const bulki_doc doc = {np, pairs};
    assert_int_equal(bulki_encode_doc(&len, buf, sizeof buf, &doc), 0);
    if (edit == EDIT_NOT_BULKI) {
        memcpy(buf, "not a bulki record", 18);
        len = 18;
    }
    else if (m->format_version >= CKPT_FORMAT_CSUM) {
        /* as the store writes it: with its checksum */
        ckpt_csum_seal("meta", 4, buf, len);
        len += CKPT_CSUM_LEN;
    }

    MDB_env *env = raw_env_open(envdir, 0);
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_val k = {4, "meta"}, v = {len, buf};
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "meta", 0, &dbi), 0);
    assert_int_equal(mdb_put(txn, dbi, &k, &v, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
}

/* A closed store under the fixture; its environment directory in envdir. */
static void make_store(void **state, char *envdir, size_t cap)
{
    struct ckpt_store_opts o = stu_opts(stu_dir(state));
    ckpt_store *st = stu_open(&o);
    uint8_t k[8];
    ckpt_key_u64(k, 1);
    stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_OBJ, k, 8, "one", 3), 0, st);
    stu_close(st);
    stu_path(envdir, cap, stu_dir(state), "rank-0");
}

static int try_open(void **state, int readonly)
{
    struct ckpt_store_opts o = stu_opts(stu_dir(state));
    ckpt_store *st = (ckpt_store *)&o;
    o.readonly = readonly;
    int rc = ckpt_store_open(&st, &o);
    if (rc == 0) {
        stu_close(st);
        return 0;
    }
    assert_null(st);
    return rc;
}

static void assert_msg_has(const char *needle)
{
    const char *msg = ckpt_errmsg();
    if (strstr(msg, needle) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", msg, needle);
}

static void test_newer_format_version_is_refused(void **state)
{
    char envdir[1024];
    struct meta_fields m, after;
    make_store(state, envdir, sizeof envdir);
    read_meta(&m, envdir);
    assert_string_equal(m.magic, CKPT_FORMAT_MAGIC);
    assert_int_equal(m.format_version, CKPT_FORMAT_VERSION);
    assert_int_equal(m.clean, 1);
    assert_int_equal(m.generation, 1);

    /* the same doc re-encoded unchanged still opens (the encoding matches) */
    write_meta(envdir, &m, EDIT_NONE);
    assert_int_equal(try_open(state, 1), 0);

    char newer[32], ours[32];
    snprintf(newer, sizeof newer, "version %u", CKPT_FORMAT_VERSION + 1);
    snprintf(ours, sizeof ours, "version %u", CKPT_FORMAT_VERSION);
    m.format_version = CKPT_FORMAT_VERSION + 1;
    write_meta(envdir, &m, EDIT_NONE);
    for (int ro = 0; ro <= 1; ro++) {
        assert_int_equal(try_open(state, ro), CKPT_E_VERSION);
        assert_msg_has(newer);
        assert_msg_has(ours);
        assert_msg_has(envdir);
    }
    /* the refused opens left meta alone (no generation bump, no clean = 0) */
    read_meta(&after, envdir);
    assert_int_equal(after.format_version, CKPT_FORMAT_VERSION + 1);
    assert_int_equal(after.generation, m.generation);
    assert_int_equal(after.clean, 1);
    assert_int_equal(after.commits, m.commits);

    /* a much newer version too */
    m.format_version = 1000;
    write_meta(envdir, &m, EDIT_NONE);
    assert_int_equal(try_open(state, 0), CKPT_E_VERSION);
    assert_msg_has("version 1000");

    /* and back to this build's: the store opens again and its data is intact */
    m.format_version = CKPT_FORMAT_VERSION;
    write_meta(envdir, &m, EDIT_NONE);
    struct ckpt_store_opts o = stu_opts(stu_dir(state));
    ckpt_store *st = stu_open(&o);
    assert_int_equal(stu_info(st).generation, 2);
    ckpt_rtxn *tx;
    ckpt_val v;
    uint8_t k[8];
    ckpt_key_u64(k, 1);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_get_raw(&v, tx, CKPT_DB_OBJ, k, 8), 0, st);
    assert_int_equal(v.len, 3);
    ckpt_rtxn_end(tx);
    stu_close(st);
}

static void test_older_format_version_is_refused(void **state)
{
    char envdir[1024];
    struct meta_fields m;
    make_store(state, envdir, sizeof envdir);
    read_meta(&m, envdir);
    m.format_version = 0;
    write_meta(envdir, &m, EDIT_NONE);
    assert_int_equal(try_open(state, 0), CKPT_E_VERSION);
    assert_msg_has("version 0");
    char ours[32];
    snprintf(ours, sizeof ours, "version %u", CKPT_FORMAT_VERSION);
    assert_msg_has(ours);
}

static void test_meta_without_magic_is_not_a_store(void **state)
{
    char envdir[1024];
    struct meta_fields m;
    make_store(state, envdir, sizeof envdir);
    read_meta(&m, envdir);

    write_meta(envdir, &m, EDIT_DROP_MAGIC);
    for (int ro = 0; ro <= 1; ro++) {
        assert_int_equal(try_open(state, ro), CKPT_E_NOTSTORE);
        assert_msg_has("magic");
        assert_msg_has(envdir);
    }

    struct meta_fields other = m;
    snprintf(other.magic, sizeof other.magic, "pdc-ckpX");
    write_meta(envdir, &other, EDIT_NONE);
    assert_int_equal(try_open(state, 0), CKPT_E_NOTSTORE);
    snprintf(other.magic, sizeof other.magic, "pdc-ckpt-2");
    write_meta(envdir, &other, EDIT_NONE);
    assert_int_equal(try_open(state, 0), CKPT_E_NOTSTORE);
}

static void test_damaged_meta_is_corrupt(void **state)
{
    char envdir[1024];
    struct meta_fields m;
    make_store(state, envdir, sizeof envdir);
    read_meta(&m, envdir);

    /* magic and version fine, a required field missing */
    write_meta(envdir, &m, EDIT_DROP_RANK);
    for (int ro = 0; ro <= 1; ro++) {
        int rc = try_open(state, ro);
        if (rc != CKPT_E_CORRUPT)
            fail_msg("meta without rank: %s (%s)", ckpt_errname(rc), ckpt_errmsg());
        assert_msg_has("meta");
    }
    /* not a BULKI doc at all */
    write_meta(envdir, &m, EDIT_NOT_BULKI);
    int rc = try_open(state, 0);
    assert_true(rc == CKPT_E_CORRUPT || rc == CKPT_E_NOTSTORE);
    /* nranks <= rank */
    m.nranks = 0;
    write_meta(envdir, &m, EDIT_NONE);
    assert_int_equal(try_open(state, 0), CKPT_E_CORRUPT);
}

static void test_meta_db_without_meta_record_is_not_a_store(void **state)
{
    char envdir[1024];
    make_store(state, envdir, sizeof envdir);
    MDB_env *env = raw_env_open(envdir, 0);
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_val k = {4, "meta"};
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "meta", 0, &dbi), 0);
    assert_int_equal(mdb_del(txn, dbi, &k, NULL), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
    assert_int_equal(try_open(state, 0), CKPT_E_NOTSTORE);
    assert_msg_has("meta");
    assert_int_equal(try_open(state, 1), CKPT_E_NOTSTORE);
}

static void test_foreign_lmdb_environment_is_not_a_store(void **state)
{
    char envdir[1024];
    stu_path(envdir, sizeof envdir, stu_dir(state), "rank-0");
    assert_int_equal(mkdir(envdir, 0700), 0);
    MDB_env *env = raw_env_open(envdir, 0);
    MDB_txn *txn;
    MDB_dbi users, orders;
    MDB_val k = {5, "alice"}, v = {2, "42"};
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "users", MDB_CREATE, &users), 0);
    assert_int_equal(mdb_dbi_open(txn, "orders", MDB_CREATE, &orders), 0);
    assert_int_equal(mdb_put(txn, users, &k, &v, 0), 0);
    assert_int_equal(mdb_put(txn, orders, &v, &k, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);

    for (int ro = 0; ro <= 1; ro++) {
        assert_int_equal(try_open(state, ro), CKPT_E_NOTSTORE);
        assert_msg_has("not a pdc-ckpt store");
        assert_msg_has(envdir);
    }

    /* the foreign environment was not touched: no "meta" database */
    env = raw_env_open(envdir, MDB_RDONLY);
    MDB_dbi meta;
    assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "meta", 0, &meta), MDB_NOTFOUND);
    assert_int_equal(mdb_dbi_open(txn, "users", 0, &users), 0);
    assert_int_equal(mdb_get(txn, users, &k, &v), 0);
    assert_int_equal(v.mv_size, 2);
    mdb_txn_abort(txn);
    mdb_env_close(env);
}

static void test_foreign_lmdb_main_db_entries_is_not_a_store(void **state)
{
    char envdir[1024];
    stu_path(envdir, sizeof envdir, stu_dir(state), "rank-0");
    assert_int_equal(mkdir(envdir, 0700), 0);
    MDB_env *env = raw_env_open(envdir, 0);
    MDB_txn *txn;
    MDB_dbi main_dbi;
    MDB_val k = {3, "key"}, v = {5, "value"};
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, NULL, 0, &main_dbi), 0);
    assert_int_equal(mdb_put(txn, main_dbi, &k, &v, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
    assert_int_equal(try_open(state, 0), CKPT_E_NOTSTORE);
    assert_int_equal(try_open(state, 1), CKPT_E_NOTSTORE);
}

static void write_file(const char *path, const uint8_t *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    assert_int_equal(close(fd), 0);
}

static void test_garbage_data_file_is_corrupt(void **state)
{
    static const size_t sizes[] = {100, 4096, 8192, 65536, 1 << 20};
    char envdir[1024], data[1100];
    uint64_t seed = 12345;
    stu_path(envdir, sizeof envdir, stu_dir(state), "rank-0");
    stu_path(data, sizeof data, envdir, "data.mdb");
    assert_int_equal(mkdir(envdir, 0700), 0);
    uint8_t *buf = malloc(1 << 20);
    assert_non_null(buf);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (size_t i = 0; i < sizes[s]; i += 8) {
            uint64_t r = tu_rand(&seed);
            memcpy(buf + i, &r, sizes[s] - i < 8 ? sizes[s] - i : 8);
        }
        write_file(data, buf, sizes[s]);
        for (int ro = 0; ro <= 1; ro++) {
            int rc = try_open(state, ro);
            if (rc != CKPT_E_CORRUPT)
                fail_msg("garbage of %zu bytes, ro %d: %s (%s)", sizes[s], ro, ckpt_errname(rc),
                         ckpt_errmsg());
            assert_msg_has("data.mdb");
        }
        /* the garbage is left as it was */
        struct stat sb;
        assert_int_equal(stat(data, &sb), 0);
        assert_int_equal((size_t)sb.st_size, sizes[s]);
    }
    /* all zero bytes */
    memset(buf, 0, 65536);
    write_file(data, buf, 65536);
    int rc = try_open(state, 0);
    if (rc != CKPT_E_CORRUPT)
        fail_msg("zeros: %s (%s)", ckpt_errname(rc), ckpt_errmsg());
    free(buf);
}

static void test_garbage_after_valid_header_does_not_crash_open(void **state)
{
    /* a real store whose pages after the two meta pages are overwritten */
    char envdir[1024], data[1100];
    make_store(state, envdir, sizeof envdir);
    stu_path(data, sizeof data, envdir, "data.mdb");
    int fd = open(data, O_RDWR);
    assert_true(fd >= 0);
    struct stat sb;
    assert_int_equal(fstat(fd, &sb), 0);
    long psize = sysconf(_SC_PAGESIZE);
    assert_true(sb.st_size > 2 * psize);
    uint8_t *buf = malloc((size_t)sb.st_size);
    assert_non_null(buf);
    uint64_t seed = 99;
    for (off_t i = 0; i < sb.st_size; i++)
        buf[i] = (uint8_t)tu_rand(&seed);
    assert_int_equal(pwrite(fd, buf + 2 * psize, (size_t)(sb.st_size - 2 * psize), 2 * psize),
                     sb.st_size - 2 * psize);
    close(fd);
    free(buf);
    /* LMDB cannot tell garbage pages from data before reading them; the
     * requirement is an error code and no crash (signal) */
    int rc = try_open(state, 1);
    print_message("open of a store with garbage pages: %s (%s)\n", ckpt_errname(rc),
                  ckpt_errmsg());
    assert_true(rc == CKPT_E_CORRUPT || rc == CKPT_E_NOTSTORE || rc == CKPT_E_LMDB);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, stu_setup, stu_teardown)
    const struct CMUnitTest tests[] = {
        T(test_newer_format_version_is_refused),
        T(test_older_format_version_is_refused),
        T(test_meta_without_magic_is_not_a_store),
        T(test_damaged_meta_is_corrupt),
        T(test_meta_db_without_meta_record_is_not_a_store),
        T(test_foreign_lmdb_environment_is_not_a_store),
        T(test_foreign_lmdb_main_db_entries_is_not_a_store),
        T(test_garbage_data_file_is_corrupt),
        T(test_garbage_after_valid_header_does_not_crash_open),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
