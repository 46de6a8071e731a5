/*
 * errors.c - the store's error table, the one-to-one mapping of LMDB and
 * errno codes onto it, and the per-store error message.
 */
#include <errno.h>
#include <lmdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bulki.h"
#include "store_int.h"

const char *ckpt_strerror(int err)
{
    switch (err) {
#define CKPT_X_MSG(name, code, msg)                                            \
    case code:                                                                 \
        return msg;
        CKPT_ERRORS(CKPT_X_MSG)
#undef CKPT_X_MSG
    default:
        /* a codec code (-101..-199, codec/bulki.h) names itself */
        return err <= -101 && err >= -199 ? bulki_strerror(err) : "unknown pdc-ckpt error";
    }
}

const char *ckpt_errname(int err)
{
    switch (err) {
#define CKPT_X_NAME(name, code, msg)                                           \
    case code:                                                                 \
        return #name;
        CKPT_ERRORS(CKPT_X_NAME)
#undef CKPT_X_NAME
    default:
        return err <= -101 && err >= -199 ? bulki_errname(err) : "CKPT_E_UNKNOWN";
    }
}

/* LMDB return codes (and the errno values LMDB passes through) onto
 * project codes. The original code always goes into the message. */
int ckpt_map_lmdb(int rc)
{
    switch (rc) {
    case MDB_SUCCESS:
        return CKPT_OK;
    case MDB_NOTFOUND:
        return CKPT_E_NOTFOUND;
    case MDB_KEYEXIST:
        return CKPT_E_EXISTS;
    case MDB_MAP_FULL:
        return CKPT_E_MAP_FULL;
    case MDB_CORRUPTED:
    case MDB_PAGE_NOTFOUND:
    case MDB_INVALID:
        return CKPT_E_CORRUPT;
    case MDB_VERSION_MISMATCH:
        return CKPT_E_VERSION;
    case MDB_PANIC:
        return CKPT_E_FAILED;
    case MDB_READERS_FULL:
    case MDB_TXN_FULL:
    case MDB_DBS_FULL:
    case MDB_BAD_TXN:
    case MDB_BAD_RSLOT:
    case MDB_BAD_DBI:
    case MDB_MAP_RESIZED:
    case MDB_INCOMPATIBLE:
    case MDB_TLS_FULL:
    case MDB_CURSOR_FULL:
    case MDB_PAGE_FULL:
        return CKPT_E_LMDB;
    case MDB_BAD_VALSIZE:
        return CKPT_E_INVAL;
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
        return CKPT_E_NOSPACE;
    case EIO:
        return CKPT_E_IO;
    case ENOMEM:
        return CKPT_E_NOMEM;
    case EACCES:
    case EPERM:
    case EROFS:
        return CKPT_E_PERM;
    case ENOENT:
        return CKPT_E_NOSTORE;
    case EAGAIN:
    case EBUSY:
        return CKPT_E_BUSY;
    case EINVAL:
        return CKPT_E_INVAL;
    case ENAMETOOLONG:
        return CKPT_E_NAMETOOLONG;
    default:
        return CKPT_E_SYS;
    }
}

/* The message of the last failed call, per thread (ckpt_errmsg): hooks
 * run on several server threads at once, and each must read its own
 * error, whatever handle it used, and also when no handle exists (a failed
 * open, a callback's error). */
static _Thread_local char last_err[512];

void ckpt_set_open_err(const char *msg)
{
    snprintf(last_err, sizeof last_err, "%s", msg);
}

int ckpt_seterr(ckpt_store *st, int code, int orig, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof buf && orig != 0)
        snprintf(buf + n, sizeof buf - (size_t)n, " (%s)", mdb_strerror(orig));
    (void)st;
    memcpy(last_err, buf, sizeof buf);
    return code;
}

const char *ckpt_errmsg(void)
{
    return last_err;
}

int ckpt_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_err, sizeof last_err, fmt, ap);
    va_end(ap);
    return code;
}

int ckpt_csum_error(ckpt_store *st, const char *db, const void *key, size_t klen, size_t vlen,
                    uint32_t stored, uint32_t computed, char *what, size_t wlen)
{
    char kt[200], w[160];
    ckpt_key_text(kt, sizeof kt, key, klen);
    if (vlen < CKPT_CSUM_LEN)
        snprintf(w, sizeof w, "a value of %zu bytes, too short for its checksum: the record is "
                 "damaged", vlen);
    else
        snprintf(w, sizeof w, "checksum mismatch (stored %08x, computed %08x): the record is "
                 "damaged", stored, computed);
    if (what != NULL)
        snprintf(what, wlen, "%s", w);
    return ckpt_seterr(st, CKPT_E_CORRUPT, 0, "%s/data.mdb: rank %d, database %s, key %s: %s and "
                       "is not returned", st->path, st->opts.rank, db, kt, w);
}
