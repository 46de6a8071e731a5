/*
 * pending.c - the staged batch as a file (docs/STORE.md, "The pending
 * file"): when a commit cannot be made (full disk) and the writer must go,
 * ckpt_store_pending_export() keeps its acknowledged mutations in a file
 * elsewhere; ckpt_store_pending_replay() stages them into a writer of the
 * same store and commits them.
 *
 * File layout (little-endian):
 *   0  magic "ckpt-pnd"            8 bytes
 *   8  format tag                  u32 (CKPT_PENDING_FORMAT)
 *  12  header length               u32 (48)
 *  16  rank                        i32
 *  20  rank count                  i32
 *  24  mutations (ops)             u64
 *  32  bytes of ops                u64
 *  40  CRC-32C of bytes 0..40, then of the ops   u32
 *  44  zero                        u32
 *  48  ops: each a 16-byte header (kind u8, database u8, zero u16, key,
 *      aux and value lengths u32), then key, aux and value bytes, padded
 *      with zeros to 8 bytes: the batch's own op log (store_int.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytes.h"
#include "ckpt_fs.h"
#include "store_int.h"

#define PND_MAGIC "ckpt-pnd"
#define PND_HDR 48u
#define OPH 16u

_Static_assert(sizeof(struct op_hdr) == OPH, "op_hdr is the file's 16-byte op header");

static size_t op_bytes(uint32_t klen, uint32_t alen, uint32_t vlen)
{
    return ((size_t)OPH + klen + alen + vlen + 7) & ~(size_t)7;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno;
        if (w == 0)
            return EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void dir_of(char *dir, size_t cap, const char *path)
{
    const char *s = strrchr(path, '/');
    if (s == NULL)
        snprintf(dir, cap, ".");
    else if (s == path)
        snprintf(dir, cap, "/");
    else
        snprintf(dir, cap, "%.*s", (int)(s - path), path);
}

/* The batch in the file's layout, with its header: built under st->mu. */
static int encode_locked(ckpt_store *st, uint8_t **out, size_t *outlen)
{
    size_t len = st->batch.log_len;
    uint8_t *buf = malloc(PND_HDR + len);
    if (buf == NULL)
        return ckpt_seterr(st, CKPT_E_NOMEM, 0, "%s: no memory for the pending file (%zu bytes)",
                           st->path, PND_HDR + len);
    memset(buf, 0, PND_HDR);
    memcpy(buf, PND_MAGIC, 8);
    ckpt_le32_put(buf + 8, CKPT_PENDING_FORMAT);
    ckpt_le32_put(buf + 12, PND_HDR);
    ckpt_le32_put(buf + 16, (uint32_t)st->opts.rank);
    ckpt_le32_put(buf + 20, (uint32_t)st->opts.nranks);
    ckpt_le64_put(buf + 24, st->batch.nops);
    ckpt_le64_put(buf + 32, len);
    size_t off = 0;
    while (off < len) {
        const struct op_hdr *h = (const struct op_hdr *)(st->batch.log + off);
        size_t n = op_bytes(h->klen, h->alen, h->vlen);
        uint8_t *o = buf + PND_HDR + off;
        memcpy(o, st->batch.log + off, n); /* key, aux, value and padding */
        o[0] = h->kind;
        o[1] = h->db;
        o[2] = o[3] = 0;
        ckpt_le32_put(o + 4, h->klen);
        ckpt_le32_put(o + 8, h->alen);
        ckpt_le32_put(o + 12, h->vlen);
        off += n;
    }
    uint32_t crc = ckpt_crc32c(0, buf, 40);
    ckpt_le32_put(buf + 40, ckpt_crc32c(crc, buf + PND_HDR, len));
    *out = buf;
    *outlen = PND_HDR + len;
    return 0;
}

int ckpt_store_pending_export(ckpt_store *st, const char *path, size_t *nops)
{
    uint8_t *buf = NULL;
    size_t len = 0, n = 0;
    struct stat sb;
    char tmp[PATH_MAX], dir[PATH_MAX];
    int rc, e;

    if (nops)
        *nops = 0;
    if (st == NULL || path == NULL || *path == '\0')
        return ckpt_error(CKPT_E_INVAL, "pending file: no store or no path");
    if (st->opts.readonly)
        return ckpt_seterr(st, CKPT_E_READONLY, 0, "%s: opened read-only", st->path);
    if (strlen(path) + 32 > sizeof tmp)
        return ckpt_seterr(st, CKPT_E_NAMETOOLONG, 0, "%s: pending file path too long", path);
    /* Replacing a pending file this writer did not replay would lose its
     * mutations. */
    if (stat(path, &sb) == 0 && !(st->pending.have && (uint64_t)sb.st_dev == st->pending.dev &&
                                  (uint64_t)sb.st_ino == st->pending.ino))
        return ckpt_seterr(st, CKPT_E_EXISTS, 0,
                           "%s: a pending file is already there and was not replayed into this "
                           "store (%s): not replacing it",
                           path, st->path);
    pthread_mutex_lock(&st->mu);
    rc = encode_locked(st, &buf, &len);
    n = st->batch.nops;
    pthread_mutex_unlock(&st->mu);
    if (rc)
        return rc;
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    dir_of(dir, sizeof dir, path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        e = errno;
        free(buf);
        return ckpt_seterr(st, e == EACCES || e == EPERM ? CKPT_E_PERM : e == ENOSPC ? CKPT_E_NOSPACE
                                                                                     : CKPT_E_IO,
                           e, "%s: cannot create the pending file: %s", tmp, strerror(e));
    }
    e = write_all(fd, buf, len);
    free(buf);
    const char *step = "write";
    if (e == 0 && fsync(fd) != 0) {
        e = errno;
        step = "fsync";
    }
    if (close(fd) != 0 && e == 0) {
        e = errno;
        step = "close";
    }
    if (e == 0 && rename(tmp, path) != 0) {
        e = errno;
        step = "rename";
    }
    if (e != 0) {
        unlink(tmp);
        return ckpt_seterr(st, e == ENOSPC || e == EFBIG || e == EDQUOT ? CKPT_E_NOSPACE : CKPT_E_IO, e,
                           "%s: %s of the pending file (%zu mutations, %zu bytes) failed: %s",
                           path, step, n, len, strerror(e));
    }
    if ((e = ckpt_fs_fsync(dir)) != 0)
        return ckpt_seterr(st, CKPT_E_IO, e,
                           "%s: the pending file is written but its directory %s did not sync: %s",
                           path, dir, strerror(e));
    if (stat(path, &sb) == 0) {
        st->pending.have = 1;
        st->pending.dev = (uint64_t)sb.st_dev;
        st->pending.ino = (uint64_t)sb.st_ino;
    }
    if (nops)
        *nops = n;
    return 0;
}

static int corrupt(ckpt_store *st, const char *path, size_t off, const char *what)
{
    return ckpt_seterr(st, CKPT_E_CORRUPT, 0,
                       "%s: pending file damaged at offset %zu: %s; nothing of it was staged", path,
                       off, what);
}

/* Every op of the file is one the store could have staged itself. */
static int check_op(const uint8_t *o, char *why, size_t wl)
{
    unsigned kind = o[0], db = o[1];
    uint32_t klen = ckpt_le32_get(o + 4), alen = ckpt_le32_get(o + 8), vlen = ckpt_le32_get(o + 12);
    int ok;
    if (o[2] || o[3]) {
        snprintf(why, wl, "op header padding is not zero");
        return -1;
    }
    if (db >= CKPT_DB_COUNT || klen == 0 || klen > 511) {
        snprintf(why, wl, "op of kind %u names database %u with a %u-byte key", kind, db, klen);
        return -1;
    }
    switch (kind) {
    case OP_PUT:
        ok = alen == 0 && (db != CKPT_DB_TAG_INDEX ||
                           (klen > 8 && klen <= CKPT_NAMEKEY_MAX + 8 && vlen == 0));
        break;
    case OP_DEL:
        ok = alen == 0 && vlen == 0 &&
             (db != CKPT_DB_TAG_INDEX || (klen > 8 && klen <= CKPT_NAMEKEY_MAX + 8));
        break;
    case OP_PUT_OBJ:
    case OP_PUT_CONT: {
        /* aux: the record's keys (ckpt_keys_encode), a name without NUL */
        const uint32_t fixed = kind == OP_PUT_OBJ ? CKPT_OBJ_KEYS_FIXED : 0;
        ok = db == (kind == OP_PUT_OBJ ? CKPT_DB_OBJ : CKPT_DB_CONT) && klen == 8 &&
             alen > fixed && alen - fixed <= CKPT_NAME_MAX &&
             memchr(o + OPH + klen + fixed, 0, alen - fixed) == NULL;
        break;
    }
    case OP_DEL_OBJ:
    case OP_DEL_CONT:
        ok = db == (kind == OP_DEL_OBJ ? CKPT_DB_OBJ : CKPT_DB_CONT) && klen == 8 && alen == 0 &&
             vlen == 0;
        break;
    case OP_PUT_KVTAG:
    case OP_DEL_KVTAG:
        ok = db == CKPT_DB_KVTAG && klen > 8 && klen <= CKPT_NAMEKEY_MAX + 8 && alen == 0 &&
             (kind == OP_PUT_KVTAG || vlen == 0);
        break;
    default:
        snprintf(why, wl, "unknown op kind %u", kind);
        return -1;
    }
    if (!ok) {
        snprintf(why, wl, "op of kind %u in database %s has impossible lengths (key %u, aux %u, "
                 "value %u)", kind, ckpt_db_name((int)db), klen, alen, vlen);
        return -1;
    }
    return 0;
}

/* An id in this rank's range moves the id sequence past it (under st->mu). */
static void reserve_locked(ckpt_store *st, const uint8_t *k)
{
    uint64_t id = ckpt_key_get_u64(k);
    uint64_t base = ((uint64_t)st->opts.rank + 1) * CKPT_ID_BASE;
    if (id >= base && id - base < CKPT_ID_BASE && id - base >= st->meta.id_seq)
        st->meta.id_seq = id - base + 1;
}

static int read_file(ckpt_store *st, const char *path, uint8_t **out, size_t *outlen)
{
    struct stat sb;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return ckpt_seterr(st, e == ENOENT ? CKPT_E_NOTFOUND : e == EACCES ? CKPT_E_PERM : CKPT_E_IO,
                           e, "%s: cannot open the pending file: %s", path, strerror(e));
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return ckpt_seterr(st, CKPT_E_INVAL, 0, "%s: not a regular file", path);
    }
    size_t len = (size_t)sb.st_size, got = 0;
    uint8_t *buf = malloc(len ? len : 1);
    if (buf == NULL) {
        close(fd);
        return ckpt_seterr(st, CKPT_E_NOMEM, 0, "%s: no memory to read %zu bytes", path, len);
    }
    while (got < len) {
        ssize_t r = read(fd, buf + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int e = r < 0 ? errno : 0;
            close(fd);
            free(buf);
            if (e == 0)
                return corrupt(st, path, got, "the file shrank while it was read");
            return ckpt_seterr(st, CKPT_E_IO, e, "%s: read failed at offset %zu: %s", path, got,
                               strerror(e));
        }
        got += (size_t)r;
    }
    close(fd);
    *out = buf;
    *outlen = len;
    return 0;
}

int ckpt_store_pending_replay(ckpt_store *st, const char *path, size_t *nops)
{
    uint8_t *buf = NULL;
    size_t flen = 0;
    char why[200];
    int rc;

    if (nops)
        *nops = 0;
    if (st == NULL || path == NULL)
        return ckpt_error(CKPT_E_INVAL, "pending file: no store or no path");
    if (st->opts.readonly || st->locks.writer_fd < 0)
        return ckpt_seterr(st, CKPT_E_READONLY, 0,
                           "%s: replaying %s needs the store open for writing", st->path, path);
    if ((rc = read_file(st, path, &buf, &flen)) != 0)
        return rc;
    if (memcmp(buf, PND_MAGIC, flen < 8 ? flen : 8) != 0) {
        free(buf);
        return corrupt(st, path, 0, "bad magic (not a pdc-ckpt pending file)");
    }
    if (flen < PND_HDR) {
        free(buf);
        return corrupt(st, path, flen, "truncated inside the 48-byte header");
    }
    if (ckpt_le32_get(buf + 8) == 1 && ckpt_le32_get(buf + 12) == PND_HDR) {
        /* format 1's object and container puts carry only a name-index key */
        free(buf);
        return ckpt_seterr(st, CKPT_E_VERSION, 0, "%s: pending file of format 1, written by a "
                           "pdc-ckpt before store format 5; this build reads format %u: replay "
                           "it with the build that wrote it (the file is left as it is)",
                           path, CKPT_PENDING_FORMAT);
    }
    if (ckpt_le32_get(buf + 8) != CKPT_PENDING_FORMAT || ckpt_le32_get(buf + 12) != PND_HDR) {
        snprintf(why, sizeof why, "format tag %u (header %u bytes); this build reads format %u",
                 ckpt_le32_get(buf + 8), ckpt_le32_get(buf + 12), CKPT_PENDING_FORMAT);
        free(buf);
        return corrupt(st, path, 8, why);
    }
    uint64_t n = ckpt_le64_get(buf + 24), len = ckpt_le64_get(buf + 32);
    if (len != flen - PND_HDR) {
        snprintf(why, sizeof why, "the header gives %llu bytes of ops, the file holds %zu (%s)",
                 (unsigned long long)len, flen - PND_HDR,
                 len > flen - PND_HDR ? "truncated" : "trailing bytes");
        free(buf);
        return corrupt(st, path, len > flen - PND_HDR ? flen : PND_HDR + (size_t)len, why);
    }
    uint32_t crc = ckpt_crc32c(ckpt_crc32c(0, buf, 40), buf + PND_HDR, (size_t)len);
    if (crc != ckpt_le32_get(buf + 40)) {
        snprintf(why, sizeof why, "CRC-32C mismatch (stored %08x, computed %08x)", ckpt_le32_get(buf + 40),
                 crc);
        free(buf);
        return corrupt(st, path, 40, why);
    }
    int32_t rank = (int32_t)ckpt_le32_get(buf + 16), nranks = (int32_t)ckpt_le32_get(buf + 20);
    if (rank != st->opts.rank || nranks != st->opts.nranks) {
        free(buf);
        return ckpt_seterr(st, CKPT_E_MISMATCH, 0,
                           "%s: pending file of rank %d of %d, the store is rank %d of %d (%s); "
                           "nothing staged",
                           path, rank, nranks, st->opts.rank, st->opts.nranks, st->path);
    }
    /* Walk every op before staging any: in the file's layout, then turned
     * into the batch's own in place. */
    uint8_t *ops = buf + PND_HDR;
    size_t off = 0;
    uint64_t seen = 0;
    while (off < len) {
        if (len - off < OPH) {
            free(buf);
            return corrupt(st, path, PND_HDR + off, "truncated inside an op header");
        }
        uint8_t *o = ops + off;
        size_t sz = op_bytes(ckpt_le32_get(o + 4), ckpt_le32_get(o + 8), ckpt_le32_get(o + 12));
        if (sz > len - off) {
            free(buf);
            return corrupt(st, path, PND_HDR + off, "an op runs past the end of the file");
        }
        if (check_op(o, why, sizeof why) != 0) {
            free(buf);
            return corrupt(st, path, PND_HDR + off, why);
        }
        if ((rc = ckpt_check_rec_keys(st, o[0])) != 0) {
            free(buf);
            return rc; /* nothing staged */
        }
        struct op_hdr h = {o[0], o[1], 0, ckpt_le32_get(o + 4), ckpt_le32_get(o + 8), ckpt_le32_get(o + 12)};
        memcpy(o, &h, sizeof h);
        off += sz;
        seen++;
    }
    if (seen != n) {
        snprintf(why, sizeof why, "the header gives %llu mutations, the file holds %llu",
                 (unsigned long long)n, (unsigned long long)seen);
        free(buf);
        return corrupt(st, path, 24, why);
    }

    /* Stage them all at once, ahead of nothing: the writer must not have
     * staged anything of its own yet (the file's mutations came first). */
    pthread_mutex_lock(&st->mu);
    if ((rc = ckpt_store_check_failed(st)) != 0) {
        pthread_mutex_unlock(&st->mu);
        free(buf);
        return rc;
    }
    if (st->batch.nops != 0) {
        size_t have = st->batch.nops;
        pthread_mutex_unlock(&st->mu);
        free(buf);
        return ckpt_seterr(st, CKPT_E_BUSY, 0,
                           "%s: %zu mutations are already staged; replay %s right after the open, "
                           "before anything else; nothing staged",
                           st->path, have, path);
    }
    if ((rc = ckpt_batch_reserve(st, len)) != 0) {
        pthread_mutex_unlock(&st->mu);
        free(buf);
        return rc;
    }
    /* ids the file's records carry stay behind the sequence */
    for (off = 0; off < len;) {
        const struct op_hdr *h = (const struct op_hdr *)(ops + off);
        const uint8_t *k = ops + off + OPH;
        if (h->db == CKPT_DB_OBJ || h->db == CKPT_DB_CONT || h->db == CKPT_DB_KVTAG ||
            h->db == CKPT_DB_REGION || h->db == CKPT_DB_CONT_OBJ || h->db == CKPT_DB_ID_HOME)
            reserve_locked(st, k);
        if (h->db == CKPT_DB_CONT_OBJ && h->klen >= 16)
            reserve_locked(st, k + 8);
        off += op_bytes(h->klen, h->alen, h->vlen);
    }
    memcpy(st->batch.log + st->batch.log_len, ops, (size_t)len);
    st->batch.log_len += (size_t)len;
    if (st->batch.nops == 0)
        st->batch.start_ms = 0;
    st->batch.nops += (size_t)n;
    pthread_mutex_unlock(&st->mu);
    free(buf);

    struct stat sb;
    if (stat(path, &sb) == 0) {
        st->pending.have = 1;
        st->pending.dev = (uint64_t)sb.st_dev;
        st->pending.ino = (uint64_t)sb.st_ino;
    }
    /* Commit; only then is the file redundant. A failed commit keeps them
     * staged (as any failed commit does) and the file where it is. */
    if ((rc = ckpt_store_checkpoint(st)) != 0)
        return rc;
    /* ... and durable (the fast sync modes commit without fsync; the sync
     * record must name this commit, or a power loss rolls back past it) */
    struct ckpt_durable_tok tok;
    pthread_mutex_lock(&st->mu);
    ckpt_durable_begin(st, &tok);
    pthread_mutex_unlock(&st->mu);
    if ((rc = ckpt_durable_end(st, &tok)) != 0)
        return ckpt_seterr(st, CKPT_E_IO, rc,
                           "%s: the %llu mutations of %s are committed but did not sync (%s); the "
                           "file stays",
                           st->path, (unsigned long long)n, path,
                           rc > 0 ? strerror(rc) : mdb_strerror(rc));
    if (unlink(path) != 0 && errno != ENOENT) {
        int e = errno;
        return ckpt_seterr(st, CKPT_E_IO, e,
                           "%s: its %llu mutations are committed to %s but the file could not be "
                           "removed: %s (remove it by hand)",
                           path, (unsigned long long)n, st->path, strerror(e));
    }
    char dir[PATH_MAX];
    dir_of(dir, sizeof dir, path);
    (void)ckpt_fs_fsync(dir); /* the removal's durability: a replay again is harmless */
    st->pending.have = 0;
    if (nops)
        *nops = (size_t)n;
    return 0;
}
