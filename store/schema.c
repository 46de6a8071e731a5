/*
 * schema.c - the store's databases and meta record, opened (or created)
 * inside the open's first transaction: what format the store is in, the
 * checks of its meta record, and the conversions a writer makes of older
 * formats (docs/STORE.md).
 */
#include <string.h>

#include "store_int.h"

/* mdb_dbi_open; a writer creates the database if it is not there, after
 * ckpt_before_write (the creation is the transaction's first write). An
 * LMDB code, or a CKPT_E_* code with the error set (ckpt_is_code). */
static int create_dbi(ckpt_store *st, MDB_txn *txn, const char *name, unsigned flags, MDB_dbi *dbi)
{
    int rc = mdb_dbi_open(txn, name, flags, dbi);
    if (rc != MDB_NOTFOUND || st->opts.readonly)
        return rc;
    if ((rc = ckpt_before_write(st)) != 0)
        return rc;
    return mdb_dbi_open(txn, name, flags | MDB_CREATE, dbi);
}

/* Open the databases and read/create meta inside txn. */
int ckpt_open_schema(ckpt_store *st, MDB_txn *txn, int *fresh, unsigned *disk_version)
{
    const int rdonly = st->opts.readonly;
    MDB_val k = {strlen(CKPT_META_KEY), CKPT_META_KEY}, v;
    int rc = mdb_dbi_open(txn, "meta", 0, &st->dbi[CKPT_DB_META]);
    *fresh = 0;
    if (rc == MDB_NOTFOUND || rc == MDB_INCOMPATIBLE) {
        MDB_stat ms;
        MDB_dbi main_dbi;
        int empty = rc == MDB_NOTFOUND && mdb_dbi_open(txn, NULL, 0, &main_dbi) == 0 &&
                    mdb_stat(txn, main_dbi, &ms) == 0 && ms.ms_entries == 0;
        if (empty && !rdonly && st->opts.create) {
            *fresh = 1;
            rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &st->dbi[CKPT_DB_META]);
            if (rc)
                return ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s: cannot create database meta", st->path);
        } else if (empty) {
            /* a writer killed between LMDB's setup and the store's first
             * commit: not another program's file, and no store either */
            return ckpt_seterr(NULL, CKPT_E_NOSTORE, 0, "%s/data.mdb: an empty LMDB environment: the "
                               "store's creation stopped before its first commit, so nothing was "
                               "committed", st->path);
        } else {
            return ckpt_seterr(NULL, CKPT_E_NOTSTORE, 0,
                               "%s/data.mdb: an LMDB environment without pdc-ckpt's meta database: "
                               "not a pdc-ckpt store", st->path);
        }
    } else if (rc) {
        return ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s/data.mdb: cannot open database meta", st->path);
    }

    if (!*fresh) {
        size_t off = 0;
        rc = mdb_get(txn, st->dbi[CKPT_DB_META], &k, &v);
        if (rc == MDB_NOTFOUND) {
            /* format 4: a record there whose checksum holds for the key
             * "meta" is the meta record under a damaged key */
            MDB_cursor *mc;
            MDB_val dk, dv;
            int damaged = 0;
            if (mdb_cursor_open(txn, st->dbi[CKPT_DB_META], &mc) == 0) {
                for (int r = mdb_cursor_get(mc, &dk, &dv, MDB_FIRST); r == 0 && !damaged;
                     r = mdb_cursor_get(mc, &dk, &dv, MDB_NEXT))
                    damaged = ckpt_csum_check(k.mv_data, k.mv_size, dv.mv_data, dv.mv_size, NULL,
                                              NULL) == 0;
                mdb_cursor_close(mc);
            }
            if (damaged)
                return ckpt_seterr(NULL, CKPT_E_CORRUPT, 0, "%s/data.mdb: rank %d, database meta: "
                                   "the meta record is stored under a damaged key (its checksum "
                                   "holds for the key \"meta\")", st->path, st->opts.rank);
            return ckpt_seterr(NULL, CKPT_E_NOTSTORE, 0, "%s/data.mdb: meta database has no \"meta\" record: "
                               "not a pdc-ckpt store", st->path);
        }
        if (rc)
            return ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s/data.mdb: reading meta", st->path);
        /* Format 4's meta record ends with its checksum; an older one does
         * not (csum.h). One whose checksum holds is format 4 or later; one
         * whose checksum does not hold must decode whole as format 1 to 3
         * (a format 4 record with a damaged checksum does not: 4 bytes
         * trail its BULKI document, or it says 4). */
        uint32_t cs_stored = 0, cs_comp = 0;
        int sealed = ckpt_csum_check(k.mv_data, k.mv_size, v.mv_data, v.mv_size, &cs_stored,
                                     &cs_comp) == 0;
        int code = ckpt_meta_decode(&st->meta, v.mv_data, v.mv_size - (sealed ? CKPT_CSUM_LEN : 0),
                                    &off);
        if (code == 0 && st->meta.format_version <= CKPT_FORMAT_VERSION &&
            sealed != (st->meta.format_version >= CKPT_FORMAT_CSUM)) {
            if (!sealed)
                return ckpt_csum_error(st, "meta", k.mv_data, k.mv_size, v.mv_size, cs_stored,
                                       cs_comp, NULL, 0);
            return ckpt_seterr(NULL, CKPT_E_CORRUPT, 0, "%s/data.mdb: the meta record carries a "
                               "checksum but says format %u, which has none: it is damaged",
                               st->path, st->meta.format_version);
        }
        if (code != 0 && code != CKPT_E_NOTSTORE && !sealed && v.mv_size > CKPT_CSUM_LEN &&
            ckpt_meta_decode(&st->meta, v.mv_data, v.mv_size - CKPT_CSUM_LEN, &off) == 0 &&
            st->meta.format_version >= CKPT_FORMAT_CSUM &&
            st->meta.format_version <= CKPT_FORMAT_VERSION)
            /* a format 4 record whose bytes or checksum changed */
            return ckpt_csum_error(st, "meta", k.mv_data, k.mv_size, v.mv_size, cs_stored,
                                   cs_comp, NULL, 0);
        st->csum = sealed;
        if (code == CKPT_E_NOTSTORE)
            return ckpt_seterr(NULL, code, 0, "%s/data.mdb: meta record lacks the \"%s\" magic: "
                               "not a pdc-ckpt store", st->path, CKPT_FORMAT_MAGIC);
        if (code)
            return ckpt_seterr(NULL, CKPT_E_CORRUPT, 0, "%s/data.mdb: rank %d, database meta: "
                               "meta record is damaged (near byte %zu of %zu%s)", st->path,
                               st->opts.rank, off, v.mv_size,
                               sealed ? "" : "; no checksum holds for it");
        if (st->meta.format_version > CKPT_FORMAT_VERSION)
            return ckpt_seterr(NULL, CKPT_E_VERSION, 0, "%s: store format version %u is newer than "
                               "this build's version %u; use a newer pdc-ckpt", st->path,
                               st->meta.format_version, CKPT_FORMAT_VERSION);
        if (st->meta.format_version < 1)
            /* version 1 is the first: anything older was never written
             * by pdc-ckpt */
            return ckpt_seterr(NULL, CKPT_E_VERSION, 0, "%s: store format version %u is older than "
                               "this build's version %u and no migration exists for it", st->path,
                               st->meta.format_version, CKPT_FORMAT_VERSION);
        if (st->opts.check_rank && !rdonly &&
            (st->meta.rank != st->opts.rank || st->meta.nranks != st->opts.nranks))
            return ckpt_seterr(NULL, CKPT_E_MISMATCH, 0, "%s: store was written as rank %d of %d, "
                               "opened as rank %d of %d", st->path, st->meta.rank, st->meta.nranks,
                               st->opts.rank, st->opts.nranks);
    }
    *disk_version = *fresh ? 0 : st->meta.format_version;
    /* Format 1's tag index is a plain database; format 2's is DUPSORT
     * (store/tagidx.c). */
    if (*fresh)
        st->csum = ckpt_csum_enabled();
    const unsigned version = *fresh ? (st->csum ? CKPT_FORMAT_VERSION : CKPT_FORMAT_CSUM - 1)
                                    : st->meta.format_version;
    st->keys = version >= CKPT_FORMAT_KEYS;
    for (int db = CKPT_DB_META + 1; db < CKPT_DB_COUNT; db++) {
        unsigned flags = 0;
        if (!st->keys && (CKPT_DBS_KEYS & (1u << db))) {
            /* before format 5: no record keys; the caller's rec_keys reads
             * them from the records (apply.c), and a writer keeps the
             * store in its format, readable by the builds that wrote it */
            st->absent |= 1u << db;
            st->dbi[db] = st->dbi[CKPT_DB_META];
            continue;
        }
        if (db == CKPT_DB_TAG_INDEX && version >= 2)
            flags |= CKPT_TAGIDX_FLAGS;
        rc = create_dbi(st, txn, ckpt_db_name(db), flags, &st->dbi[db]);
        if (rc == MDB_NOTFOUND && rdonly && (CKPT_DBS_ADDED_LATER & (1u << db))) {
            /* written before this database existed: a reader reads it as
             * empty (read.c); a writer creates it */
            st->absent |= 1u << db;
            st->dbi[db] = st->dbi[CKPT_DB_META];
            continue;
        }
        if (ckpt_is_code(rc))
            return rc; /* ckpt_before_write, error set */
        if (rc)
            return ckpt_seterr(NULL, rc == MDB_NOTFOUND ? CKPT_E_CORRUPT : ckpt_map_lmdb(rc), rc,
                               "%s/data.mdb: cannot open database %s", st->path, ckpt_db_name(db));
    }
    unsigned tf = 0;
    if ((rc = mdb_dbi_flags(txn, st->dbi[CKPT_DB_TAG_INDEX], &tf)) != 0)
        return ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s/data.mdb: cannot read the flags of "
                           "database kvtag_name", st->path);
    st->tagidx_dup = (tf & MDB_DUPSORT) != 0;
    if (st->tagidx_dup != (version >= 2))
        return ckpt_seterr(NULL, CKPT_E_CORRUPT, 0, "%s/data.mdb: database kvtag_name is %s, but "
                           "the store says format %u", st->path,
                           st->tagidx_dup ? "DUPSORT" : "not DUPSORT", version);
    /* Older formats: a reader reads them as they are; a writer (which holds
     * writer.lock) converts them here, in the open transaction, so the
     * conversion and the new version commit together or not at all. */
    if (!rdonly && version == 1) {
        if ((rc = ckpt_before_write(st)) != 0)
            return rc;
        if ((rc = ckpt_tagidx_migrate_v1(st, txn)) != 0)
            return ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s/data.mdb: converting the store "
                               "from format 1 to %u failed at the tag index; nothing was changed",
                               st->path, CKPT_FORMAT_CSUM - 1);
        st->meta.format_version = CKPT_FORMAT_CSUM - 1;
    }
    /* Format 3's tag-index delta (tagidx.c): a writer creates it in a
     * format 2 store (an empty delta is format 2's index as it is); it takes
     * the next chunk number from it before its first chunk, and what an
     * earlier writer left unmerged is counted by the background thread (the
     * open reads none of it); a reader of format 3 counts it and overlays
     * it on every read of the tag index. */
    if (!rdonly || version >= 3) {
        rc = create_dbi(st, txn, CKPT_DELTA_DB, 0, &st->delta.dbi);
        if (rc == MDB_NOTFOUND && rdonly)
            return 0; /* none: empty (LMDB's compacting copy leaves out an empty one) */
        if (ckpt_is_code(rc))
            return rc; /* ckpt_before_write, error set */
        if (rc)
            return ckpt_seterr(NULL, rc == MDB_NOTFOUND ? CKPT_E_CORRUPT : ckpt_map_lmdb(rc), rc,
                               "%s/data.mdb: cannot open database %s", st->path, CKPT_DELTA_DB);
        st->delta.on = 1;
        char where[160] = "";
        rc = rdonly ? ckpt_tagidx_delta_scan(st, txn, where, sizeof where) : 0;
        if (rc == MDB_CORRUPTED && rdonly)
            rc = 0; /* a reader may still read the rest; reads of the tag index say what is wrong */
        if (rc != 0)
            return ckpt_seterr(NULL, rc == MDB_CORRUPTED ? CKPT_E_CORRUPT : ckpt_map_lmdb(rc), rc,
                               "%s/data.mdb: rank %d, reading %s: %s%s", st->path, st->opts.rank,
                               CKPT_DELTA_DB, where[0] ? where : "",
                               where[0] ? ": the database is damaged" : "");
        if (st->delta.pending > 0)
            st->delta.since_ms = ckpt_mono_ms();
        /* A writer of a store of format 1 to 3 converts it to format 3
         * and no further, and one of format 4 keeps it at 4: checksums
         * and record keys would need every record rewritten (ckpt-inspect
         * copy does that), and the store stays readable by the builds
         * that wrote it. */
        if (!rdonly)
            st->meta.format_version = st->keys ? CKPT_FORMAT_VERSION
                                      : st->csum ? CKPT_FORMAT_CSUM : CKPT_FORMAT_CSUM - 1;
    }
    return 0;
}
