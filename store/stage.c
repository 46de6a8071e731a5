/*
 * stage.c - the public mutations: each is checked, keyed (keys.c) and
 * appended to the open batch's log (st->batch.log; store_int.h's op_hdr),
 * and the commit policy (commit_every, commit_ms) commits the batch
 * (commit.c). Also the id sequence, whose crash gap bounds how many ids
 * may be handed out without a commit.
 */
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

int ckpt_batch_reserve(ckpt_store *st, size_t need)
{
    if (st->batch.log_len + need <= st->batch.log_cap)
        return 0;
    size_t ncap = st->batch.log_cap ? st->batch.log_cap : 64 * 1024;
    while (ncap < st->batch.log_len + need)
        ncap *= 2;
    uint8_t *nl = realloc(st->batch.log, ncap);
    if (nl == NULL)
        return ckpt_seterr(st, CKPT_E_NOMEM, 0, "%s: cannot grow the batch to %zu bytes", st->path,
                           ncap);
    st->batch.log = nl;
    st->batch.log_cap = ncap;
    return 0;
}

int ckpt_check_rec_keys(ckpt_store *st, int kind)
{
    if (st->keys || st->opts.rec_keys != NULL ||
        (kind != OP_PUT_OBJ && kind != OP_DEL_OBJ && kind != OP_PUT_CONT && kind != OP_DEL_CONT))
        return 0;
    return ckpt_seterr(st, CKPT_E_INVAL, 0, "%s: a put or delete of an %s needs the store opened "
                       "with a record-keys function (ckpt_store_opts.rec_keys; the hooks' records: "
                       "ckpt_rec_keys), to find the index entries of the record it replaces or "
                       "deletes", st->path,
                       kind == OP_PUT_OBJ || kind == OP_DEL_OBJ ? "object" : "container");
}

static int stage(ckpt_store *st, int kind, int db, const void *k, size_t klen, const void *a,
                 size_t alen, const void *v, size_t vlen)
{
    int rc = 0;
    if (st == NULL)
        return CKPT_E_INVAL;
    if (st->opts.readonly)
        return ckpt_seterr(st, CKPT_E_READONLY, 0, "%s: opened read-only", st->path);
    if ((rc = ckpt_check_rec_keys(st, kind)) != 0)
        return rc;
    if (klen == 0 || klen > 511 || vlen > UINT32_MAX || (v == NULL && vlen > 0))
        return ckpt_seterr(st, klen > 511 ? CKPT_E_NAMETOOLONG : CKPT_E_INVAL, 0,
                           "%s: %s key of %zu bytes or value of %zu bytes not storable", st->path,
                           ckpt_db_name(db), klen, vlen);
    size_t need = (sizeof(struct op_hdr) + klen + alen + vlen + 7) & ~(size_t)7;
    pthread_mutex_lock(&st->mu);
    ckpt_bg_ensure_locked(st);
    if (st->fault.failed) {
        rc = ckpt_seterr(st, CKPT_E_FAILED, 0, "%s: an earlier LMDB failure requires reopening",
                         st->path);
        goto done;
    }
    if (st->commit.last_err && st->batch.log_len + need > CKPT_BATCH_MAX_BYTES) {
        rc = ckpt_seterr(st, CKPT_E_BACKLOG, 0, "%s: commits keep failing (%s) and %zu bytes are "
                         "staged; this mutation was not staged, retry once a commit succeeds",
                         st->path, ckpt_strerror(st->commit.last_err), st->batch.log_len);
        goto done;
    }
    if ((rc = ckpt_batch_reserve(st, need)) != 0)
        goto done;
    struct op_hdr h = {(uint8_t)kind, (uint8_t)db, 0, (uint32_t)klen, (uint32_t)alen, (uint32_t)vlen};
    uint8_t *p = st->batch.log + st->batch.log_len;
    memcpy(p, &h, sizeof h);
    memcpy(p + sizeof h, k, klen);
    if (alen)
        memcpy(p + sizeof h + klen, a, alen);
    if (vlen)
        memcpy(p + sizeof h + klen + alen, v, vlen);
    st->batch.log_len += need;
    /* the batch's age on the coarse clock: read once per mutation, where
     * CLOCK_MONOTONIC was a quarter of a hook's time inside PDC (the
     * background thread reads the fine one: it commits at most a tick
     * early) */
    if (st->batch.nops++ == 0)
        st->batch.start_ms = ckpt_mono_coarse_ms();
    if (((st->opts.commit_every && st->batch.nops >= st->opts.commit_every) ||
         (st->opts.commit_ms && ckpt_mono_coarse_ms() - st->batch.start_ms >= st->opts.commit_ms)) &&
        ckpt_retry_due(st))
        rc = ckpt_commit_locked(st, 0);
done:
    pthread_mutex_unlock(&st->mu);
    return rc;
}

static int name_key(ckpt_store *st, uint8_t *out, size_t *n, const char *what, const char *name,
                    size_t nlen)
{
    if (name == NULL)
        return ckpt_seterr(st, CKPT_E_INVAL, 0, "%s: %s name missing", st->path, what);
    if (nlen > CKPT_NAME_MAX)
        return ckpt_seterr(st, CKPT_E_NAMETOOLONG, 0, "%s: %s name of %zu bytes is longer than the "
                           "limit of %u", st->path, what, nlen, CKPT_NAME_MAX);
    if ((*n = ckpt_key_name(out, name, nlen)) == 0)
        return ckpt_seterr(st, CKPT_E_INVAL, 0, "%s: %s name contains a NUL byte", st->path, what);
    return 0;
}

/* An object's or container's put carries, as its aux bytes, the record's
 * keys as obj_keys/cont_keys store them (ckpt_keys_encode): apply.c
 * derives the name-index key from them and keeps them for the record's
 * replacement or delete. */
int ckpt_store_put_obj(ckpt_store *st, uint64_t id, const char *name, size_t nlen, int32_t ts,
                       uint64_t cont_id, const void *rec, size_t len)
{
    uint8_t k[8], nk[CKPT_NAMEKEY_MAX], a[CKPT_OBJ_KEYS_FIXED + CKPT_NAME_MAX];
    size_t n;
    int rc;
    if (st == NULL)
        return CKPT_E_INVAL;
    if ((rc = name_key(st, nk, &n, "object", name, nlen)) != 0)
        return rc;
    struct ckpt_rec_keys rk = {name, nlen, ts, cont_id};
    ckpt_key_u64(k, id);
    return stage(st, OP_PUT_OBJ, CKPT_DB_OBJ, k, 8, a, ckpt_keys_encode(a, 1, &rk), rec, len);
}

int ckpt_store_del_obj(ckpt_store *st, uint64_t id)
{
    uint8_t k[8];
    ckpt_key_u64(k, id);
    return stage(st, OP_DEL_OBJ, CKPT_DB_OBJ, k, 8, NULL, 0, NULL, 0);
}

static int kvtag_key(ckpt_store *st, uint8_t *k, size_t *klen, uint64_t owner, const char *name,
                     size_t nlen)
{
    size_t n;
    int rc = name_key(st, k + 8, &n, "kvtag", name, nlen);
    if (rc)
        return rc;
    ckpt_key_u64(k, owner);
    *klen = n + 8;
    return 0;
}

int ckpt_store_put_kvtag(ckpt_store *st, uint64_t owner, const char *name, size_t nlen,
                         const void *rec, size_t len)
{
    uint8_t k[CKPT_NAMEKEY_MAX + 8];
    size_t klen;
    int rc;
    if (st == NULL)
        return CKPT_E_INVAL;
    if ((rc = kvtag_key(st, k, &klen, owner, name, nlen)) != 0)
        return rc;
    return stage(st, OP_PUT_KVTAG, CKPT_DB_KVTAG, k, klen, NULL, 0, rec, len);
}

int ckpt_store_del_kvtag(ckpt_store *st, uint64_t owner, const char *name, size_t nlen)
{
    uint8_t k[CKPT_NAMEKEY_MAX + 8];
    size_t klen;
    int rc;
    if (st == NULL)
        return CKPT_E_INVAL;
    if ((rc = kvtag_key(st, k, &klen, owner, name, nlen)) != 0)
        return rc;
    return stage(st, OP_DEL_KVTAG, CKPT_DB_KVTAG, k, klen, NULL, 0, NULL, 0);
}

int ckpt_store_put_cont(ckpt_store *st, uint64_t id, const char *name, size_t nlen,
                        const void *rec, size_t len)
{
    uint8_t k[8], nk[CKPT_NAMEKEY_MAX];
    size_t n;
    int rc;
    if (st == NULL)
        return CKPT_E_INVAL;
    if ((rc = name_key(st, nk, &n, "container", name, nlen)) != 0)
        return rc;
    ckpt_key_u64(k, id);
    return stage(st, OP_PUT_CONT, CKPT_DB_CONT, k, 8, name, nlen, rec, len);
}

int ckpt_store_del_cont(ckpt_store *st, uint64_t id)
{
    uint8_t k[8];
    ckpt_key_u64(k, id);
    return stage(st, OP_DEL_CONT, CKPT_DB_CONT, k, 8, NULL, 0, NULL, 0);
}

static int cont_members(ckpt_store *st, int kind, uint64_t cont, const uint64_t *objs, size_t n)
{
    uint8_t k[16];
    int rc = 0;
    if (n > 0 && objs == NULL)
        return CKPT_E_INVAL;
    ckpt_key_u64(k, cont);
    for (size_t i = 0; i < n && rc == 0; i++) {
        ckpt_key_u64(k + 8, objs[i]);
        rc = stage(st, kind, CKPT_DB_CONT_OBJ, k, 16, NULL, 0, "", 0);
    }
    return rc;
}

int ckpt_store_cont_add(ckpt_store *st, uint64_t cont, const uint64_t *objs, size_t n)
{
    return cont_members(st, OP_PUT, cont, objs, n);
}

int ckpt_store_cont_remove(ckpt_store *st, uint64_t cont, const uint64_t *objs, size_t n)
{
    return cont_members(st, OP_DEL, cont, objs, n);
}

static int region_key(ckpt_store *st, uint8_t *k, size_t *klen, uint64_t obj, uint32_t ndim,
                      const uint64_t *start, const uint64_t *count)
{
    if (ndim == 0 || ndim > CKPT_REGION_MAXDIM || start == NULL || count == NULL)
        return ckpt_seterr(st, CKPT_E_INVAL, 0, "%s: region of object %llu needs 1..%u dimensions",
                           st->path, (unsigned long long)obj, CKPT_REGION_MAXDIM);
    ckpt_key_u64(k, obj);
    *klen = 8 + ckpt_key_region(k + 8, ndim, start, count);
    return 0;
}

int ckpt_store_put_region(ckpt_store *st, uint64_t obj, uint32_t ndim, const uint64_t *start,
                          const uint64_t *count, const void *rec, size_t len)
{
    uint8_t k[8 + CKPT_REGIONKEY_MAX];
    size_t klen = 0;
    int rc;
    if (st == NULL)
        return CKPT_E_INVAL;
    if ((rc = region_key(st, k, &klen, obj, ndim, start, count)) != 0)
        return rc;
    return stage(st, OP_PUT, CKPT_DB_REGION, k, klen, NULL, 0, rec, len);
}

int ckpt_store_del_region(ckpt_store *st, uint64_t obj, uint32_t ndim, const uint64_t *start,
                          const uint64_t *count)
{
    uint8_t k[8 + CKPT_REGIONKEY_MAX];
    size_t klen = 0;
    int rc;
    if (st == NULL)
        return CKPT_E_INVAL;
    if ((rc = region_key(st, k, &klen, obj, ndim, start, count)) != 0)
        return rc;
    return stage(st, OP_DEL, CKPT_DB_REGION, k, klen, NULL, 0, NULL, 0);
}

/* The tag index holds logical keys namekey . owner with empty values
 * (tagidx.c); anything else cannot be stored there, and a longer name
 * part than a name key's could be stored but not read back. */
static int tagidx_raw_ok(ckpt_store *st, int db, size_t klen, size_t vlen)
{
    if (db != CKPT_DB_TAG_INDEX || (klen > 8 && klen <= CKPT_NAMEKEY_MAX + 8 && vlen == 0))
        return 0;
    return ckpt_seterr(st, CKPT_E_INVAL, 0, "%s: kvtag_name entries are a name key (at most %u "
                       "bytes) and an 8-byte owner id with an empty value (got a %zu-byte key, "
                       "%zu-byte value)", st ? st->path : "store", (unsigned)CKPT_NAMEKEY_MAX, klen,
                       vlen);
}

int ckpt_store_put_raw(ckpt_store *st, int db, const void *key, size_t klen, const void *val,
                       size_t vlen)
{
    int rc;
    if (db < 0 || db >= CKPT_DB_COUNT)
        return CKPT_E_INVAL;
    if ((rc = tagidx_raw_ok(st, db, klen, vlen)) != 0)
        return rc;
    return stage(st, OP_PUT, db, key, klen, NULL, 0, val ? val : "", vlen);
}

int ckpt_store_del_raw(ckpt_store *st, int db, const void *key, size_t klen)
{
    int rc;
    if (db < 0 || db >= CKPT_DB_COUNT)
        return CKPT_E_INVAL;
    if ((rc = tagidx_raw_ok(st, db, klen, 0)) != 0)
        return rc;
    return stage(st, OP_DEL, db, key, klen, NULL, 0, NULL, 0);
}

size_t ckpt_store_pending(ckpt_store *st)
{
    pthread_mutex_lock(&st->mu);
    size_t n = st->batch.nops;
    pthread_mutex_unlock(&st->mu);
    return n;
}

/* Renew the id lease (docs/STORE.md, "Ids"): a reopen after a crash
 * skips CKPT_ID_CRASH_GAP ids past the sequence of the last commit that
 * survived it, if that commit carries the open's dirty mark; so the mark
 * and the sequence are committed before the first id and once half the gap
 * was handed out since the last commit; and in the fast sync modes, where a
 * commit survives a machine crash only once a sync covered it, that commit
 * is synced (durable.c). In sync mode every commit is durable and renews
 * the lease by itself (commit.c). */
static int renew_lease(ckpt_store *st)
{
    int rc = 0;
    if ((!st->marked || st->meta.id_seq - st->id_seq_committed >= CKPT_ID_CRASH_GAP / 2) &&
        (rc = ckpt_commit_locked(st, 1)) != 0)
        return rc;
    if (st->opts.sync_mode == CKPT_SYNC_EVERY)
        return 0;
    struct ckpt_durable_tok tok;
    uint64_t seq = st->id_seq_committed;
    ckpt_durable_begin(st, &tok);
    if ((rc = ckpt_durable_end(st, &tok)) != 0)
        return ckpt_seterr(st, ckpt_map_lmdb(rc), rc, "%s/data.mdb: syncing the id sequence "
                           "failed; no new id is handed out until it succeeds", st->path);
    ckpt_lease_synced(st, seq);
    return 0;
}

int ckpt_store_next_id(uint64_t *id, ckpt_store *st)
{
    int rc = 0;
    if (st == NULL || id == NULL)
        return CKPT_E_INVAL;
    if (st->opts.readonly)
        return CKPT_E_READONLY;
    pthread_mutex_lock(&st->mu);
    ckpt_bg_ensure_locked(st);
    /* The id lease: ids are handed out only below st->id_lease, at or
     * above which every restart after a crash (of the process or of the
     * machine) starts. Half the gap before it, renew it (with the commit
     * policy off nothing else does), and refuse ids while it cannot be. */
    if (st->meta.id_seq + CKPT_ID_CRASH_GAP / 2 >= st->id_lease &&
        (rc = renew_lease(st)) != 0 && st->meta.id_seq + 1 < st->id_lease)
        rc = 0; /* still inside the lease: the next call retries */
    if (rc == 0 && st->meta.id_seq >= CKPT_ID_BASE)
        rc = ckpt_seterr(st, CKPT_E_NOSPACE, 0, "%s: id sequence of rank %d exhausted", st->path,
                         st->opts.rank);
    else if (rc == 0)
        *id = ((uint64_t)st->opts.rank + 1) * CKPT_ID_BASE + st->meta.id_seq++;
    pthread_mutex_unlock(&st->mu);
    return rc;
}

int ckpt_store_set_origin(ckpt_store *st, int32_t origin_nranks)
{
    if (st == NULL || origin_nranks < 1)
        return CKPT_E_INVAL;
    if (st->opts.readonly)
        return CKPT_E_READONLY;
    pthread_mutex_lock(&st->mu);
    st->meta.origin_nranks = origin_nranks;
    pthread_mutex_unlock(&st->mu);
    return 0;
}

int ckpt_store_reserve_id(ckpt_store *st, uint64_t id)
{
    uint64_t base = ((uint64_t)st->opts.rank + 1) * CKPT_ID_BASE;
    pthread_mutex_lock(&st->mu);
    if (id >= base && id - base < CKPT_ID_BASE && id - base >= st->meta.id_seq)
        st->meta.id_seq = id - base + 1;
    pthread_mutex_unlock(&st->mu);
    return 0;
}
