/*
 * test_store_durable.c - the sync record and the roll-back after a power
 * loss (store/durable.c; docs/STORE.md, "Power loss"). A child process
 * commits without syncing and ends without closing (what a machine crash
 * leaves in the page cache); PDC_CKPT_TEST_BOOT_ID then makes the store
 * believe the machine restarted since. The crash images of
 * test_store_powerloss test the same with torn and lost writes; these
 * cases pin the rules down one at a time:
 *   - same boot (a process crash): nothing committed is rolled back;
 *   - another boot, fast mode: a reader refuses, naming the cure; a writer
 *     rolls back to the last completed sync (a close here), skips the id
 *     gap, and the store is the synced state;
 *   - sync mode: every commit is durable, nothing is rolled back;
 *   - a fast-mode crash recovered by a sync-mode writer, whose commits a
 *     later restart keeps;
 *   - a machine crash right after a restart: back to the last close, the
 *     ids handed out by the restarted writer are not handed out again;
 *   - a restart after a process crash records the commits it found, so a
 *     machine crash later comes back to them;
 *   - a process crash after a reboot keeps its commits (the first write
 *     names the new boot);
 *   - with the guard off, a writer rolls back what a guarded one left,
 *     then keeps no record; a guarded writer records again.
 */
#include "store_test_util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static struct ckpt_store_opts opts(const char *root, int mode)
{
    struct ckpt_store_opts o = stu_opts(root);
    o.sync_mode = mode;
    o.commit_every = 0;
    o.commit_ms = 0;
    o.sync_ms = 600000; /* no background sync in these tests */
    o.sync_kb = 0;
    return o;
}

static void put_range(ckpt_store *st, uint64_t from, uint64_t to)
{
    uint8_t k[8];
    char v[32];
    for (uint64_t i = from; i < to; i++) {
        ckpt_key_u64(k, i);
        int n = snprintf(v, sizeof v, "value-%llu", (unsigned long long)i);
        stu_assert_rc(ckpt_store_put_raw(st, CKPT_DB_OBJ, k, 8, v, (size_t)n), 0, st);
    }
}

/* Objects 0..n-1, each with its value, and nothing else. */
static void assert_holds(ckpt_store *st, uint64_t n)
{
    struct stu_list l = {0};
    char v[32];
    stu_collect_db(&l, st, CKPT_DB_OBJ, NULL, 0);
    assert_int_equal(l.n, n);
    for (uint64_t i = 0; i < n; i++) {
        int len = snprintf(v, sizeof v, "value-%llu", (unsigned long long)i);
        assert_int_equal(l.e[i].vlen, (size_t)len);
        assert_memory_equal(l.e[i].val, v, (size_t)len);
    }
    stu_list_free(&l);
}

/* A child: opens in `mode`, takes an id if take_id (in the fast modes
 * that syncs the open's state: the id lease, docs/STORE.md "Ids"),
 * commits objects from..to-1 without a sync (with to == from: no commit at
 * all), reports the id and ends without closing. Returns the id (0 without
 * take_id). */
static uint64_t crash_run(const char *root, int mode, uint64_t from, uint64_t to, int take_id)
{
    int pfd[2];
    uint64_t id = 0;
    assert_int_equal(pipe(pfd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct ckpt_store_opts o = opts(root, mode);
        ckpt_store *st;
        close(pfd[0]);
        if (ckpt_store_open(&st, &o) != 0 || (take_id && ckpt_store_next_id(&id, st) != 0))
            _exit(20);
        put_range(st, from, to);
        if ((to > from && ckpt_store_checkpoint(st) != 0) ||
            write(pfd[1], &id, sizeof id) != (ssize_t)sizeof id)
            _exit(21);
        _exit(0); /* no close: the commit is in the page cache, not synced */
    }
    close(pfd[1]);
    assert_int_equal(read(pfd[0], &id, sizeof id), (ssize_t)sizeof id);
    close(pfd[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return id;
}

static uint64_t crash_after_commit(const char *root, int mode, uint64_t from, uint64_t to)
{
    return crash_run(root, mode, from, to, 1);
}

static void first_session(const char *root, int mode, uint64_t n)
{
    struct ckpt_store_opts o = opts(root, mode);
    ckpt_store *st = stu_open(&o);
    put_range(st, 0, n);
    stu_close(st);
}

/* After a machine restart (PDC_CKPT_TEST_BOOT_ID = boot, unset again
 * after): a writer in sync mode `mode` finds exactly n objects. */
static void writer_after_reboot(const char *root, const char *boot, int mode, uint64_t n)
{
    setenv("PDC_CKPT_TEST_BOOT_ID", boot, 1);
    struct ckpt_store_opts o = opts(root, mode);
    ckpt_store *st = stu_open(&o);
    assert_holds(st, n);
    stu_close(st);
    unsetenv("PDC_CKPT_TEST_BOOT_ID");
}

/* The same for a reader, which must open: its info. */
static struct ckpt_store_info reader_after_reboot(const char *root, uint64_t n)
{
    ckpt_store *st;
    setenv("PDC_CKPT_TEST_BOOT_ID", "test-durable-another-boot", 1);
    stu_assert_rc(ckpt_store_open_readonly(&st, root, 0), 0, NULL);
    assert_holds(st, n);
    struct ckpt_store_info info = stu_info(st);
    stu_close(st);
    unsetenv("PDC_CKPT_TEST_BOOT_ID");
    return info;
}

static void test_power_loss_rolls_back_to_the_last_sync(void **state)
{
    const char *root = stu_dir(state);
    struct ckpt_store_opts o = opts(root, CKPT_SYNC_CLOSE);
    ckpt_store *st;
    first_session(root, CKPT_SYNC_CLOSE, 10);
    uint64_t id = crash_after_commit(root, CKPT_SYNC_CLOSE, 10, 20);

    /* same boot: a process crash, the page cache has every commit */
    stu_assert_rc(ckpt_store_open_readonly(&st, root, 0), 0, NULL);
    assert_holds(st, 20);
    stu_close(st);

    setenv("PDC_CKPT_TEST_BOOT_ID", "test-durable-another-boot", 1);
    int rc = ckpt_store_open_readonly(&st, root, 0);
    stu_assert_rc(rc, CKPT_E_CORRUPT, NULL);
    assert_non_null(strstr(ckpt_errmsg(), "not closed before the machine restarted"));
    assert_non_null(strstr(ckpt_errmsg(), "open it for writing once"));

    st = stu_open(&o);
    assert_holds(st, 10); /* the close of the first session */
    uint64_t next = 0;
    stu_assert_rc(ckpt_store_next_id(&next, st), 0, st);
    assert_true(next > id); /* ids handed out after the sync are not handed out again */
    put_range(st, 10, 12);
    stu_close(st);
    stu_assert_rc(ckpt_store_open_readonly(&st, root, 0), 0, NULL);
    assert_holds(st, 12);
    stu_close(st);
    unsetenv("PDC_CKPT_TEST_BOOT_ID");
}

static void test_sync_mode_never_rolls_back(void **state)
{
    const char *root = stu_dir(state);
    first_session(root, CKPT_SYNC_EVERY, 10);
    crash_after_commit(root, CKPT_SYNC_EVERY, 10, 20);
    reader_after_reboot(root, 20);
    writer_after_reboot(root, "test-durable-another-boot", CKPT_SYNC_EVERY, 20);
}

static void test_fast_crash_recovered_in_sync_mode(void **state)
{
    const char *root = stu_dir(state);
    first_session(root, CKPT_SYNC_INTERVAL, 10);
    crash_after_commit(root, CKPT_SYNC_INTERVAL, 10, 20);
    /* after a restart of the machine, the next writer runs in sync mode:
     * it rolls back, and its own (durable) commits stay */
    setenv("PDC_CKPT_TEST_BOOT_ID", "test-durable-boot-2", 1);
    crash_after_commit(root, CKPT_SYNC_EVERY, 10, 15);
    writer_after_reboot(root, "test-durable-boot-3", CKPT_SYNC_CLOSE, 15);
}

/* A machine crash right after a restart (an open that handed out ids and
 * committed nothing of its own): the store comes back to the last close,
 * and the ids skip the gap all the same. */
static void test_machine_crash_right_after_a_restart(void **state)
{
    const char *root = stu_dir(state);
    first_session(root, CKPT_SYNC_CLOSE, 10);
    uint64_t id = crash_after_commit(root, CKPT_SYNC_CLOSE, 10, 10);
    setenv("PDC_CKPT_TEST_BOOT_ID", "test-durable-another-boot", 1);
    struct ckpt_store_opts o = opts(root, CKPT_SYNC_CLOSE);
    ckpt_store *st = stu_open(&o);
    assert_holds(st, 10);
    uint64_t next = 0;
    stu_assert_rc(ckpt_store_next_id(&next, st), 0, st);
    assert_true(next > id);
    stu_close(st);
    unsetenv("PDC_CKPT_TEST_BOOT_ID");
}

/* A child that opens in `mode` and ends at once, without closing. */
static void crash_after_open(const char *root, int mode)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct ckpt_store_opts o = opts(root, mode);
        ckpt_store *st;
        _exit(ckpt_store_open(&st, &o) != 0 ? 20 : 0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A machine crash right after a restart that neither committed nor handed
 * out an id costs nothing: the open wrote nothing into data.mdb (the dirty
 * mark rides on the first commit or id), so in every sync mode the store
 * after the reboot is the one the last close left, clean, readable without
 * a writer's roll-back, and its ids go on from the close's. */
static void test_machine_crash_right_after_an_idle_restart(void **state)
{
    const int modes[] = {CKPT_SYNC_EVERY, CKPT_SYNC_INTERVAL, CKPT_SYNC_CLOSE};
    for (int i = 0; i < 3; i++) {
        char root[700];
        ckpt_store *st;
        snprintf(root, sizeof root, "%s/mode-%d", stu_dir(state), modes[i]);
        first_session(root, modes[i], 10);
        stu_assert_rc(ckpt_store_open_readonly(&st, root, 0), 0, NULL);
        struct ckpt_store_info before = stu_info(st);
        stu_close(st);

        crash_after_open(root, modes[i]);
        struct ckpt_store_info after = reader_after_reboot(root, 10);
        assert_int_equal(after.clean, 1);
        assert_int_equal(after.generation, before.generation);
        assert_int_equal(after.commits, before.commits);
        assert_int_equal(after.id_seq, before.id_seq);

        setenv("PDC_CKPT_TEST_BOOT_ID", "test-durable-another-boot", 1);
        struct ckpt_store_opts o = opts(root, modes[i]);
        st = stu_open(&o);
        assert_holds(st, 10);
        uint64_t next = 0;
        stu_assert_rc(ckpt_store_next_id(&next, st), 0, st);
        assert_int_equal(next, CKPT_ID_BASE + before.id_seq);
        stu_close(st);
        unsetenv("PDC_CKPT_TEST_BOOT_ID");
    }
}

/* A process crash leaves commits newer than the record; the restart on
 * the same boot keeps them and records them before its first write, so a
 * machine crash after it comes back to them, not to the older record. */
static void test_restart_after_a_process_crash_records_its_state(void **state)
{
    const char *root = stu_dir(state);
    first_session(root, CKPT_SYNC_CLOSE, 10);
    crash_after_commit(root, CKPT_SYNC_CLOSE, 10, 20);  /* process crash */
    crash_after_commit(root, CKPT_SYNC_CLOSE, 20, 25);  /* restart, then a machine crash */
    writer_after_reboot(root, "test-durable-another-boot", CKPT_SYNC_CLOSE, 20);
}

/* The same without the id lease's sync: the restart's open itself
 * records the state the crash left (its first commit may reuse pages of
 * the older record's snapshot, which a roll-back to it would find
 * overwritten), so a machine crash after that commit comes back to it. */
static void test_restart_after_a_process_crash_records_it_at_open(void **state)
{
    const char *root = stu_dir(state);
    first_session(root, CKPT_SYNC_CLOSE, 10);
    crash_run(root, CKPT_SYNC_CLOSE, 10, 20, 0); /* process crash */
    crash_run(root, CKPT_SYNC_CLOSE, 20, 25, 0); /* restart, a commit, then a machine crash */
    writer_after_reboot(root, "test-durable-another-boot", CKPT_SYNC_CLOSE, 20);
}

/* A writer's open after a clean close reads no boot id (the file is the
 * last sync's state: nothing to roll back whatever the boot); its first
 * write names this boot in the boot slot. So a process crash after a
 * reboot loses nothing committed: the next restart on that boot keeps the
 * commits rather than rolling them back to the close before the reboot. */
static void test_process_crash_after_a_reboot_keeps_its_commits(void **state)
{
    const char *root = stu_dir(state);
    first_session(root, CKPT_SYNC_CLOSE, 10);
    setenv("PDC_CKPT_TEST_BOOT_ID", "test-durable-boot-2", 1);
    crash_run(root, CKPT_SYNC_CLOSE, 10, 20, 0); /* after a reboot: commits, a process crash */
    unsetenv("PDC_CKPT_TEST_BOOT_ID");
    writer_after_reboot(root, "test-durable-boot-2", CKPT_SYNC_CLOSE, 20); /* the same boot */
}

/* A clean close is the last sync: nothing to roll back after a restart. */
static void test_clean_close_survives_a_restart(void **state)
{
    const char *root = stu_dir(state);
    first_session(root, CKPT_SYNC_CLOSE, 10);
    first_session(root, CKPT_SYNC_CLOSE, 25);
    assert_int_equal(reader_after_reboot(root, 25).clean, 1);
}

/* PDC_CKPT_POWERLOSS_GUARD=off (no_powerloss_guard): a writer first does
 * the roll-back a guarded writer's crash calls for, makes it durable and
 * removes the record, then keeps none; a guarded writer records again. */
static void test_unguarded_writer_keeps_no_record(void **state)
{
    const char *root = stu_dir(state);
    char rec[600];
    ckpt_store *st;
    snprintf(rec, sizeof rec, "%s/rank-0/synced.rec", root);
    first_session(root, CKPT_SYNC_CLOSE, 10);
    assert_true(tu_exists(rec));
    crash_after_commit(root, CKPT_SYNC_CLOSE, 10, 20);
    setenv("PDC_CKPT_TEST_BOOT_ID", "test-durable-another-boot", 1);
    struct ckpt_store_opts o = opts(root, CKPT_SYNC_CLOSE);
    o.no_powerloss_guard = 1;
    st = stu_open(&o);
    assert_holds(st, 10); /* rolled back to the last sync all the same */
    assert_false(tu_exists(rec));
    put_range(st, 10, 12);
    stu_assert_rc(ckpt_store_checkpoint(st), 0, st);
    assert_false(tu_exists(rec)); /* no record at a sync either */
    stu_close(st);
    assert_false(tu_exists(rec));
    /* nothing recorded: a reader after another restart reads the store as
     * it is (the risk the guard's absence takes) */
    setenv("PDC_CKPT_TEST_BOOT_ID", "test-durable-a-third-boot", 1);
    stu_assert_rc(ckpt_store_open_readonly(&st, root, 0), 0, NULL);
    assert_holds(st, 12);
    stu_close(st);
    o.no_powerloss_guard = 0;
    st = stu_open(&o);
    assert_true(tu_exists(rec)); /* guarded again: recorded before the first write */
    assert_holds(st, 12);
    stu_close(st);
    unsetenv("PDC_CKPT_TEST_BOOT_ID");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_power_loss_rolls_back_to_the_last_sync, stu_setup,
                                        stu_teardown),
        cmocka_unit_test_setup_teardown(test_sync_mode_never_rolls_back, stu_setup, stu_teardown),
        cmocka_unit_test_setup_teardown(test_fast_crash_recovered_in_sync_mode, stu_setup,
                                        stu_teardown),
        cmocka_unit_test_setup_teardown(test_clean_close_survives_a_restart, stu_setup,
                                        stu_teardown),
        cmocka_unit_test_setup_teardown(test_machine_crash_right_after_a_restart, stu_setup,
                                        stu_teardown),
        cmocka_unit_test_setup_teardown(test_machine_crash_right_after_an_idle_restart, stu_setup,
                                        stu_teardown),
        cmocka_unit_test_setup_teardown(test_restart_after_a_process_crash_records_its_state,
                                        stu_setup, stu_teardown),
        cmocka_unit_test_setup_teardown(test_restart_after_a_process_crash_records_it_at_open,
                                        stu_setup, stu_teardown),
        cmocka_unit_test_setup_teardown(test_process_crash_after_a_reboot_keeps_its_commits,
                                        stu_setup, stu_teardown),
        cmocka_unit_test_setup_teardown(test_unguarded_writer_keeps_no_record, stu_setup,
                                        stu_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
