/*
 * durable.c - power loss in the fast sync modes (`interval`, `close`):
 * the sync record and the roll-back (docs/STORE.md, "Power loss").
 *
 * The problem. With MDB_NOSYNC a commit pwrite()s its pages and then its
 * meta page and syncs nothing; the kernel writes them back in any order.
 * After a power loss the newest meta page on disk can point at pages that
 * never reached it, and LMDB keeps only two meta pages, so the meta of the
 * last sync is overwritten two commits later. Worse, LMDB reuses a page
 * as soon as no reader needs the snapshot it belonged to: a page of the
 * synced snapshot can be rewritten by a later unsynced commit.
 *
 * What this file does:
 *  - A pinned snapshot. A writer holds a read transaction on the snapshot
 *    its last completed sync recorded (or a newer one, from which LMDB
 *    keeps that one too: a page freed by transaction T is reused only once
 *    every reader is past T, and a reader of T+1 is not). LMDB then never
 *    reuses a page of the recorded snapshot, so it stays intact on disk
 *    whatever later commits write.
 *  - The sync record, ROOT/rank-R/synced.rec. A sync (background, close)
 *    takes, under the store's mutex, the last committed transaction S, a
 *    copy of S's LMDB meta (from its meta page, via pread) and a new pin
 *    on S; then fdatasync()s data.mdb (S's pages and everything before
 *    them are on disk); then writes the record {S, S's meta, data.mdb's
 *    inode} into the older of two 512-byte slots (each with a sequence
 *    number and a hash, so a torn write leaves the other) and fdatasync()s
 *    synced.rec; only then it drops the previous pin. At every moment the
 *    newest valid record on disk names a snapshot whose pages are on disk
 *    and pinned.
 *  - A boot slot (third 512-byte slot): the boot id of the machine the
 *    last writer wrote the store on, written before its first write
 *    transaction (ckpt_durable_first_write) and never synced. If it is
 *    this boot's, the machine did not restart since that writer wrote:
 *    every commit is in the page cache and nothing is rolled back (a
 *    process crash loses nothing committed).
 *  - The roll-back. A writer's open (it holds writer.lock) reads the
 *    record. When it is this file's, LMDB opens the file first: if its
 *    newest snapshot is the recorded one (a clean close, or nothing since
 *    the last sync) nothing can be rolled back and the boot does not
 *    matter. Otherwise (or if LMDB refused the file's header) LMDB's
 *    environment is closed again and recover() runs in full before LMDB
 *    reopens it: unless the boot slot names this boot, it reads both LMDB
 *    meta pages, and if the newest is not the recorded one while the boot
 *    id differs (the machine restarted: what was not synced may be lost or
 *    torn), it writes the recorded meta into both meta pages: the
 *    environment is then exactly the recorded snapshot, whose pages are
 *    intact. LMDB's first open reads only the two meta pages, never a page
 *    they point to. A reader refuses such a store (CKPT_E_CORRUPT, naming
 *    the cure: a writer's open).
 *  - `sync` mode commits with LMDB's own ordering (data fdatasync, then
 *    the meta page through an O_DSYNC descriptor): every meta on disk
 *    points at durable pages, nothing is rolled back. Its record says so
 *    (ORDERED); a writer switching modes writes the record once, synced.
 *
 * LMDB's on-disk meta (0.9, data version 1, 64-bit): at byte 16 of pages
 * 0 and 1: magic (u32 0xBEEFC0DE), version (u32 1), address (8), mapsize
 * (8), two MDB_db of 48 bytes (the first's md_pad holds the page size),
 * last_pg (8), txnid (8): 136 bytes. mdb_env_write_meta rewrites the
 * bytes from mapsize on. Checked at every sync: the txnid read back must
 * be LMDB's last transaction (mdb_env_info), or the sync records nothing
 * and says why.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytes.h"
#include "ckpt_fs.h"
#include "store_int.h"

#define DUR_FILE "synced.rec"
#define SLOT 512u
#define BOOT_OFF (2 * SLOT)
#define PAGEHDR 16u
#define META_MAGIC 0xBEEFC0DEu
#define META_VERSION 1u
#define M_PSIZE 24u   /* dbs[FREE].md_pad */
#define M_TXNID 128u
#define REC_MAGIC "ckptSYN1"
#define BOOT_MAGIC "ckptBOOT"
#define REC_ORDERED 1u

/* Slot layout: magic[8], seq u64 @8, txnid u64 @16, ino u64 @24, psize
 * u32 @32, flags u32 @36, meta[136] @40, hash u64 @504 (FNV-1a 64 of
 * bytes 0..504). Boot slot: magic[8], boot id[48] @8, hash @504. Host
 * byte order (a store is read on the machine kind that wrote it, as
 * LMDB's own file). */
#define R_SEQ 8u
#define R_TXNID 16u
#define R_INO 24u
#define R_PSIZE 32u
#define R_FLAGS 36u
#define R_META 40u
#define R_HASH 504u
#define BOOT_ID 8u
#define BOOT_ID_LEN CKPT_DUR_BOOT_LEN

static int slot_ok(const uint8_t *s, const char *magic)
{
    return memcmp(s, magic, 8) == 0 && ckpt_ne64_get(s + R_HASH) == ckpt_fnv1a64(s, R_HASH);
}

static char machine_boot[BOOT_ID_LEN];
static pthread_once_t machine_boot_once = PTHREAD_ONCE_INIT;

static void read_machine_boot(void)
{
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, machine_boot, BOOT_ID_LEN - 1);
    close(fd);
    if (n <= 0) {
        memset(machine_boot, 0, BOOT_ID_LEN);
        return;
    }
    while (n > 0 && (machine_boot[n - 1] == '\n' || machine_boot[n - 1] == 0))
        machine_boot[--n] = 0;
}

/* This machine's boot id ("" if unknown), read once per process;
 * PDC_CKPT_TEST_BOOT_ID replaces it (tests: an image opened "after a
 * reboot"). */
static void boot_id(char out[BOOT_ID_LEN])
{
    const char *t = getenv("PDC_CKPT_TEST_BOOT_ID");
    memset(out, 0, BOOT_ID_LEN);
    if (t != NULL && *t) {
        strncpy(out, t, BOOT_ID_LEN - 1);
        return;
    }
    pthread_once(&machine_boot_once, read_machine_boot);
    memcpy(out, machine_boot, BOOT_ID_LEN);
}

/* An LMDB meta (136 bytes from byte 16 of a meta page) that LMDB would
 * take: its magic and data version. */
static int meta_ok(const uint8_t *m)
{
    return ckpt_ne32_get(m) == META_MAGIC && ckpt_ne32_get(m + 4) == META_VERSION;
}

void ckpt_durable_init(ckpt_store *st)
{
    memset(&st->dur, 0, sizeof st->dur);
    st->dur.fd = -1;
    pthread_mutex_init(&st->dur.mu, NULL);
}

/* Whether another process holds writer.lock (a live writer: whatever it
 * committed is in this machine's page cache). */
static int live_writer(const char *dir)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/writer.lock", dir);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    return held;
}

/* Write slot s (0, 1) or the boot slot with its hash. */
static int write_slot(int fd, uint8_t *s, off_t off)
{
    ckpt_ne64_put(s + R_HASH, ckpt_fnv1a64(s, R_HASH));
    ssize_t n = pwrite(fd, s, SLOT, off);
    if (n == (ssize_t)SLOT)
        return 0;
    return n < 0 ? errno : EIO;
}

/* The record of snapshot txnid (its LMDB meta, or NULL with REC_ORDERED)
 * into the older slot, synced. Under d->mu, or before any other thread
 * exists. */
static int write_record(ckpt_store *st, uint64_t txnid, const uint8_t *meta, uint32_t flags,
                        uint32_t psize)
{
    struct ckpt_durable *d = &st->dur;
    uint8_t s[SLOT];
    struct stat ds;
    char data[4200];
    snprintf(data, sizeof data, "%s/data.mdb", st->path);
    if (stat(data, &ds) != 0)
        return errno;
    memset(s, 0, sizeof s);
    memcpy(s, REC_MAGIC, 8);
    ckpt_ne64_put(s + R_SEQ, d->seq + 1);
    ckpt_ne64_put(s + R_TXNID, txnid);
    ckpt_ne64_put(s + R_INO, (uint64_t)ds.st_ino);
    ckpt_ne32_put(s + R_PSIZE, psize);
    ckpt_ne32_put(s + R_FLAGS, flags);
    if (meta)
        memcpy(s + R_META, meta, CKPT_DUR_META);
    int rc = write_slot(d->fd, s, (off_t)(((d->seq + 1) & 1) * SLOT));
    if (rc == 0 && fdatasync(d->fd) != 0)
        rc = errno;
    if (rc == 0) {
        d->seq++;
        d->txnid = txnid;
        d->flags = flags;
        d->have = 1;
    }
    return rc;
}

/* Both LMDB metas of data.mdb (dfd), page size *psize (0: read it from
 * page 0's meta). *newest: 0 or 1, -1 if neither is valid. */
static void read_metas(int dfd, uint32_t *psize, uint8_t meta[2][PAGEHDR + CKPT_DUR_META],
                       int *newest)
{
    *newest = -1;
    memset(meta, 0, 2 * (PAGEHDR + CKPT_DUR_META));
    if (*psize == 0) {
        if (pread(dfd, meta[0], PAGEHDR + CKPT_DUR_META, 0) != (ssize_t)(PAGEHDR + CKPT_DUR_META) ||
            !meta_ok(meta[0] + PAGEHDR))
            return;
        *psize = ckpt_ne32_get(meta[0] + PAGEHDR + M_PSIZE);
        if (*psize < 512 || *psize > (1u << 16))
            return;
    }
    for (int i = 0; i < 2; i++) {
        if (pread(dfd, meta[i], PAGEHDR + CKPT_DUR_META, (off_t)i * *psize) !=
                (ssize_t)(PAGEHDR + CKPT_DUR_META) ||
            !meta_ok(meta[i] + PAGEHDR))
            continue;
        if (*newest < 0 ||
            ckpt_ne64_get(meta[i] + PAGEHDR + M_TXNID) > ckpt_ne64_get(meta[*newest] + PAGEHDR + M_TXNID))
            *newest = i;
    }
}

/* A writer records the file's state before LMDB's first write transaction
 * when there is no record of it to keep (a store of an earlier build, a
 * copy, a store last written in sync mode, commits a process crash left on
 * this boot): fdatasync data.mdb, then the record of its newest snapshot
 * (in sync mode: ORDERED), synced. The record's snapshot is then the
 * newest, which the pin taken after the open covers. */
static int establish(ckpt_store *st, int dfd, const uint8_t *meta, uint32_t psize)
{
    const int fast = st->opts.sync_mode != CKPT_SYNC_EVERY;
    if (fdatasync(dfd) != 0)
        return errno;
    return write_record(st, ckpt_ne64_get(meta + M_TXNID), fast ? meta : NULL, fast ? 0 : REC_ORDERED,
                        psize);
}

/* Whether the boot slot read at open names this machine's boot. */
static int boot_is_recorded(const struct ckpt_durable *d)
{
    char boot[BOOT_ID_LEN];
    boot_id(boot);
    return boot[0] && d->boot_slot_ok && memcmp(d->boot_slot, boot, BOOT_ID_LEN) == 0;
}

/* defer: a writer whose record is this file's leaves the rest to LMDB's
 * open (ckpt_durable_deferred); run again without it, in full. */
static int recover(ckpt_store *st, const char *data, const struct stat *ds, int defer)
{
    struct ckpt_durable *d = &st->dur;
    const int rdonly = st->opts.readonly, fast = st->opts.sync_mode != CKPT_SYNC_EVERY;
    const int guard = !st->opts.no_powerloss_guard;
    uint8_t buf[3 * SLOT], rec[SLOT], meta[2][PAGEHDR + CKPT_DUR_META];
    char path[4200];
    int have = 0, rc = 0, newest;

    snprintf(path, sizeof path, "%s/%s", st->path, DUR_FILE);
    memset(buf, 0, sizeof buf);
    d->check_opened = 0;
    /* (run again in full: the writer keeps the descriptor it opened) */
    int fd = d->fd >= 0 ? d->fd
                        : open(path, (rdonly ? O_RDONLY : O_RDWR | (guard ? O_CREAT : 0)) | O_CLOEXEC,
                               0600);
    /* a reader that cannot read it reads the store as it is (as before
     * there was a record); so does an unguarded writer without one */
    if (fd < 0 && !rdonly && (guard || errno != ENOENT))
        return ckpt_seterr(NULL, ckpt_map_lmdb(errno), errno, "%s: cannot open the sync record",
                           path);
    if (fd >= 0 && pread(fd, buf, sizeof buf, 0) < 0) {
        int e = errno;
        if (fd != d->fd)
            close(fd);
        return ckpt_seterr(NULL, ckpt_map_lmdb(e), e, "%s: cannot read the sync record", path);
    }
    if (!rdonly)
        d->fd = fd;
    else if (fd >= 0)
        close(fd);
    /* the newest valid record */
    for (int i = 0; i < 2; i++) {
        const uint8_t *sl = buf + i * SLOT;
        if (slot_ok(sl, REC_MAGIC) && (!have || ckpt_ne64_get(sl + R_SEQ) > ckpt_ne64_get(rec + R_SEQ))) {
            memcpy(rec, sl, SLOT);
            have = 1;
        }
    }
    if (have)
        d->seq = ckpt_ne64_get(rec + R_SEQ); /* the next record goes to the other slot */
    d->boot_slot_ok = slot_ok(buf + BOOT_OFF, BOOT_MAGIC);
    memcpy(d->boot_slot, buf + BOOT_OFF + BOOT_ID, BOOT_ID_LEN);
    d->boot_recorded = -1; /* not known yet */
    if (ds == NULL || ds->st_size == 0) {
        /* a new store: a writer records it once LMDB has created it */
        d->sync_at_open = !rdonly;
        return 0;
    }
    const int mine = have && ckpt_ne64_get(rec + R_INO) == (uint64_t)ds->st_ino;
    if (mine) {
        d->txnid = ckpt_ne64_get(rec + R_TXNID);
        d->flags = ckpt_ne32_get(rec + R_FLAGS);
        memcpy(d->meta, rec + R_META, CKPT_DUR_META);
        d->have = 1;
    }
    if (rdonly && (!mine || (d->flags & REC_ORDERED)))
        return 0; /* nothing recorded to roll back to, or nothing to roll back */
    if (defer && !rdonly && guard && fast && mine && !(d->flags & REC_ORDERED)) {
        /* LMDB's open tells whether the newest snapshot is the recorded
         * one; only if not does the boot matter (ckpt_durable_deferred) */
        d->check_opened = CKPT_DUR_DEFERRED;
        return 0;
    }
    d->boot_recorded = boot_is_recorded(d);
    if (!rdonly && guard && fast && mine && !(d->flags & REC_ORDERED) && d->boot_recorded) {
        /* The machine did not restart since the last writer wrote: nothing
         * is rolled back. Whether the newest snapshot is the recorded one
         * (or commits a crashed process left must be recorded first, below)
         * LMDB's own open tells: ckpt_durable_check_opened, without reading
         * the meta pages here as well. */
        d->check_opened = 1;
        return 0;
    }
    int dfd = open(data, (rdonly ? O_RDONLY : O_RDWR) | O_CLOEXEC);
    if (dfd < 0)
        return ckpt_seterr(NULL, ckpt_map_lmdb(errno), errno, "%s: cannot open it%s", data,
                           rdonly ? "" : " for writing");
    uint32_t psize = mine ? ckpt_ne32_get(rec + R_PSIZE) : 0;
    read_metas(dfd, &psize, meta, &newest);
    const uint8_t *nmeta = newest >= 0 ? meta[newest] + PAGEHDR : NULL;
    if (!mine || (d->flags & REC_ORDERED)) {
        /* Nothing recorded for this file (a store of an earlier build, a
         * copy: another inode) or a store written in sync mode, whose
         * metas all point at durable pages: nothing to roll back. A writer
         * records the state before it writes (in sync mode only over no
         * record). */
        if (!rdonly && guard && nmeta && (fast || !mine))
            rc = establish(st, dfd, nmeta, psize);
        goto out;
    }
    const uint8_t *rmeta = rec + R_META;
    if (nmeta && ckpt_ne64_get(nmeta + M_TXNID) == d->txnid && memcmp(nmeta, rmeta, CKPT_DUR_META) == 0) {
        /* the last sync's state: nothing since, or a clean close */
        if (!rdonly && guard && !fast)
            rc = establish(st, dfd, nmeta, psize); /* into sync mode: ORDERED */
        goto out;
    }
    if (d->boot_recorded || (rdonly && live_writer(st->path))) {
        /* The machine did not restart since the last writer wrote (or it
         * is still writing): every commit is in the page cache, nothing is
         * rolled back. A writer makes that state durable and records it
         * before its first commit: the pin it takes covers the newest
         * snapshot, not an older recorded one. */
        if (!rdonly && guard && nmeta)
            rc = establish(st, dfd, nmeta, psize);
        goto out;
    }
    unsigned long long from = nmeta ? (unsigned long long)ckpt_ne64_get(nmeta + M_TXNID) : 0;
    if (rdonly) {
        close(dfd);
        return ckpt_seterr(NULL, CKPT_E_CORRUPT, 0, "%s: not closed before the machine restarted: "
                           "its commits after the last sync (transaction %llu; the file's newest is "
                           "%llu) may be lost or torn on disk; open it for writing once (a "
                           "restart) to return it to its last synced state", data,
                           (unsigned long long)d->txnid, from);
    }
    /* Roll back: the recorded meta into both meta pages (each with its
     * page header: page number, P_META), so that LMDB opens the recorded
     * snapshot, whose pages the pin kept intact. */
    for (int i = 0; i < 2 && rc == 0; i++) {
        uint8_t pg[PAGEHDR + CKPT_DUR_META];
        memset(pg, 0, sizeof pg);
        ckpt_ne64_put(pg, (uint64_t)i);            /* mp_pgno */
        pg[10] = 0x08;                     /* mp_flags = P_META (little-endian u16 at 10) */
        memcpy(pg + PAGEHDR, rmeta, CKPT_DUR_META);
        if (pwrite(dfd, pg, sizeof pg, (off_t)i * psize) != (ssize_t)sizeof pg)
            rc = errno ? errno : EIO;
    }
    if (rc) {
        close(dfd);
        return ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s: rolling back to the last synced "
                           "state (transaction %llu) failed", data, (unsigned long long)d->txnid);
    }
    d->rolled_back = 1;
    d->rolled_from = from;
    if (!fast && guard)
        rc = establish(st, dfd, rmeta, psize); /* into sync mode: the roll-back durable, ORDERED */
out:
    close(dfd);
    if (rc)
        return ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s: recording the synced state before "
                           "the first write (sync record %s)", data, DUR_FILE);
    return 0;
}

/* The guard is off (ckpt_store_opts.no_powerloss_guard): this writer
 * keeps no pin and no record. A record a guarded writer left is stale from
 * now on, and a guarded writer's open after the machine restarts would
 * roll back to it: it goes, once what it protects (its snapshot, a
 * roll-back just done, commits still in the page cache) is synced. */
static int unguard(ckpt_store *st, const char *data)
{
    struct ckpt_durable *d = &st->dur;
    char path[4200];
    struct stat rs;
    int rc = 0;
    if (d->fd >= 0)
        close(d->fd);
    d->fd = -1;
    d->sync_at_open = 0;
    snprintf(path, sizeof path, "%s/%s", st->path, DUR_FILE);
    if (stat(path, &rs) != 0)
        return 0;
    int dfd = open(data, O_RDWR | O_CLOEXEC);
    if (dfd >= 0) {
        if (fdatasync(dfd) != 0)
            rc = errno;
        close(dfd);
    } else if (errno != ENOENT) {
        rc = errno;
    }
    if (rc == 0 && unlink(path) != 0 && errno != ENOENT)
        rc = errno;
    if (rc == 0)
        rc = ckpt_fs_fsync(st->path);
    if (rc)
        return ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s: removing the sync record %s "
                           "(PDC_CKPT_POWERLOSS_GUARD=off)", st->path, DUR_FILE);
    return 0;
}

int ckpt_durable_deferred(ckpt_store *st, int opened, uint64_t last_txnid)
{
    struct ckpt_durable *d = &st->dur;
    uint8_t m[CKPT_DUR_META];
    int fd;
    if (d->check_opened != CKPT_DUR_DEFERRED)
        return 0;
    d->check_opened = 0;
    if (!opened || last_txnid != d->txnid || mdb_env_get_fd(st->env, &fd) != 0)
        return 1;
    /* The newest meta (LMDB writes transaction T's into page T & 1, and
     * its open has just read it) must be the recorded one byte for byte, as
     * recover() compares them: then this is the last sync's state (nothing
     * since, or a clean close), and nothing can be rolled back whatever the
     * boot. */
    if (pread(fd, m, sizeof m, (off_t)((last_txnid & 1) * st->psize + PAGEHDR)) != (ssize_t)sizeof m)
        return 1;
    return !meta_ok(m) || memcmp(m, d->meta, CKPT_DUR_META) != 0;
}

int ckpt_durable_check_opened(ckpt_store *st, uint64_t last_txnid)
{
    struct ckpt_durable *d = &st->dur;
    uint8_t meta[2][PAGEHDR + CKPT_DUR_META];
    char data[4200];
    int newest, rc = 0;
    if (d->check_opened != 1)
        return 0;
    d->check_opened = 0;
    if (last_txnid == d->txnid)
        return 0; /* the last sync's state: nothing since, or a clean close */
    /* commits after the last sync, in this boot's page cache (a process
     * crash): made durable and recorded before the first write, so the pin
     * taken after the open covers the newest snapshot */
    snprintf(data, sizeof data, "%s/data.mdb", st->path);
    int dfd = open(data, O_RDWR | O_CLOEXEC);
    if (dfd < 0)
        return ckpt_seterr(NULL, ckpt_map_lmdb(errno), errno, "%s: cannot open it for writing", data);
    uint32_t psize = st->psize;
    read_metas(dfd, &psize, meta, &newest);
    if (newest >= 0)
        rc = establish(st, dfd, meta[newest] + PAGEHDR, psize);
    close(dfd);
    if (rc)
        return ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s: recording the synced state before "
                           "the first write (sync record %s)", data, DUR_FILE);
    return 0;
}

int ckpt_durable_recover(ckpt_store *st, const char *data, const struct stat *ds, int defer)
{
    int rc = recover(st, data, ds, defer);
    if (rc == 0 && !st->opts.readonly && st->opts.no_powerloss_guard)
        rc = unguard(st, data);
    return rc;
}

int ckpt_durable_begin(ckpt_store *st, struct ckpt_durable_tok *t)
{
    struct ckpt_durable *d = &st->dur;
    MDB_envinfo ei;
    uint8_t m[CKPT_DUR_META];
    char data[4200];
    memset(t, 0, sizeof *t);
    if (st->opts.readonly || st->opts.sync_mode == CKPT_SYNC_EVERY || d->fd < 0)
        return 0;
    mdb_env_info(st->env, &ei);
    t->txnid = ei.me_last_txnid;
    snprintf(data, sizeof data, "%s/data.mdb", st->path);
    int fd = open(data, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return t->err = errno;
    ssize_t n = pread(fd, m, sizeof m, (off_t)((t->txnid & 1) * st->psize + PAGEHDR));
    int e = errno;
    close(fd);
    if (n != (ssize_t)sizeof m)
        return t->err = n < 0 ? e : EIO;
    if (!meta_ok(m) || ckpt_ne64_get(m + M_TXNID) != t->txnid || ckpt_ne32_get(m + M_PSIZE) != st->psize)
        return t->err = EPROTO; /* not LMDB 0.9's meta layout */
    int rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &t->pin);
    if (rc) {
        t->pin = NULL;
        return t->err = rc;
    }
    memcpy(t->meta, m, sizeof m);
    t->active = 1;
    return 0;
}

int ckpt_durable_end(ckpt_store *st, struct ckpt_durable_tok *t)
{
    struct ckpt_durable *d = &st->dur;
    int rc = mdb_env_sync(st->env, 1);
    if (!t->active)
        return rc ? rc : t->err;
    MDB_txn *drop = t->pin;
    if (rc == 0) {
        pthread_mutex_lock(&d->mu);
        if (d->have && !(d->flags & REC_ORDERED) && d->txnid >= t->txnid) {
            /* recorded already (a concurrent sync got a newer snapshot):
             * keep the pin there is, or this one if there is none */
            if (d->pin == NULL) {
                d->pin = t->pin;
                drop = NULL;
            }
        } else if ((rc = write_record(st, t->txnid, t->meta, 0, st->psize)) == 0) {
            drop = d->pin;
            d->pin = t->pin;
        }
        pthread_mutex_unlock(&d->mu);
    }
    if (drop)
        mdb_txn_abort(drop);
    t->active = 0;
    return rc;
}

/* The boot slot names this boot: unsynced (a lost or torn one reads as
 * another boot, which only means a roll-back to the last sync); not
 * rewritten when it already does. 0 or an errno. */
static int write_boot_slot(ckpt_store *st)
{
    struct ckpt_durable *d = &st->dur;
    if (d->boot_recorded < 0)
        d->boot_recorded = boot_is_recorded(d);
    if (d->boot_recorded)
        return 0;
    uint8_t s[SLOT];
    memset(s, 0, sizeof s);
    memcpy(s, BOOT_MAGIC, 8);
    boot_id((char *)s + BOOT_ID);
    int rc = write_slot(d->fd, s, BOOT_OFF);
    if (rc == 0) {
        d->boot_recorded = 1;
        d->boot_slot_ok = 1;
        memcpy(d->boot_slot, s + BOOT_ID, BOOT_ID_LEN);
    }
    return rc;
}

int ckpt_durable_first_write(ckpt_store *st)
{
    struct ckpt_durable *d = &st->dur;
    if (st->opts.readonly || d->fd < 0 || st->opts.sync_mode == CKPT_SYNC_EVERY || d->boot_recorded > 0)
        return 0;
    int rc = write_boot_slot(st);
    if (rc)
        return ckpt_seterr(st, ckpt_map_lmdb(rc), rc, "%s/%s: writing its boot slot before the first "
                           "write", st->path, DUR_FILE);
    return 0;
}

int ckpt_durable_opened(ckpt_store *st)
{
    struct ckpt_durable *d = &st->dur;
    int rc = 0;
    if (st->opts.readonly || d->fd < 0)
        return 0;
    if (st->opts.sync_mode == CKPT_SYNC_EVERY) {
        /* LMDB's own ordering from here on: say so in the record (and
         * make whatever an earlier fast-mode writer left durable first) */
        if (d->sync_at_open) {
            if ((rc = mdb_env_sync(st->env, 1)) == 0) {
                MDB_envinfo ei;
                mdb_env_info(st->env, &ei);
                pthread_mutex_lock(&d->mu);
                rc = write_record(st, ei.me_last_txnid, NULL, REC_ORDERED, st->psize);
                pthread_mutex_unlock(&d->mu);
            }
        }
        goto out;
    }
    if (d->sync_at_open) {
        if ((rc = write_boot_slot(st)) != 0)
            goto out;
        struct ckpt_durable_tok t;
        if ((rc = ckpt_durable_begin(st, &t)) == 0)
            rc = ckpt_durable_end(st, &t);
        goto out;
    }
    /* The pin: the newest snapshot, which is the recorded one or the one
     * the open committed right after it (LMDB then keeps the recorded one
     * as well). */
    rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &d->pin);
    if (rc)
        d->pin = NULL;
out:
    d->sync_at_open = 0;
    if (rc)
        return ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s: recording the synced state at open "
                           "(%s)", st->path, rc == EPROTO ? "LMDB's meta page is not laid out as "
                           "LMDB 0.9 writes it" : "sync record synced.rec");
    return 0;
}

void ckpt_durable_release(ckpt_store *st)
{
    struct ckpt_durable *d = &st->dur;
    if (d->pin)
        mdb_txn_abort(d->pin);
    d->pin = NULL;
    if (d->fd >= 0)
        close(d->fd);
    d->fd = -1;
    pthread_mutex_destroy(&d->mu);
}
