/*
 * verify.c - ckpt-inspect verify ROOT: every record of every database
 * decodes (BULKI, then the record schema), the indexes agree with the
 * primary records both ways, container memberships point at existing
 * containers and objects (objects on any rank), and the ranks' meta
 * records agree with their directories and with each other.
 *
 * Ranks are opened one at a time (a store of thousands of ranks must not
 * need thousands of open environments, each holding 2-3 file
 * descriptors), in passes: pass 1 reads each rank's meta and collects its
 * object and container ids; pass 2 checks each rank in one read
 * transaction, so a rank's own records and indexes are checked as of one
 * commit even while a server writes it, and the cross-rank checks
 * (container members, id_home) use the ids collected in pass 1; what they
 * miss there is looked up once more, in pass 3, in fresh transactions of
 * the ranks concerned (a live store may have gained it since pass 1).
 * Problems are printed one per line, "rank R: DB: KEY: what is wrong",
 * and verification goes on: a rank that does not open is a problem of that
 * rank, and a rank whose file makes LMDB fault (a truncated or overwritten
 * data.mdb can raise SIGBUS/SIGSEGV in the memory map) is reported and
 * left alone, never a crash of the tool.
 */
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inspect.h"
#include "progress.h"

/* Ids of one database of a rank, ascending (the database's key order). */
struct ids {
    uint64_t *v;
    size_t n, cap;
};

struct vrank {
    struct rank_ent *e;
    ckpt_rtxn *tx;               /* during one pass over this rank */
    ckpt_damage_cb on_damage;    /* installed on tx (ckpt_rtxn_on_damage) */
    void *damage_arg;
    struct ckpt_store_info info;
    int ok;                      /* open, meta read, transaction held */
    int collected;               /* objs and conts are complete */
    struct ids objs, conts;      /* this rank's object and container ids */
};

/* A cross-rank reference not found in the ids of pass 1, looked up again
 * in pass 3: a member object (on any rank) or an id_home target (on its
 * home rank). */
struct pending {
    int rank, db;                /* where the reference is */
    uint8_t key[16];             /* its key (cont_obj: 16 bytes; id_home: 8) */
    size_t klen;
    uint64_t id;                 /* the object (or container) looked for */
    int home;                    /* id_home: the rank named; -1: any rank */
    int found;
};

struct verify {
    struct inspect_root root;
    struct vrank *v;             /* one per root.ranks[i] */
    int nranks;                  /* as the meta records say (-1: unknown) */
    int incomplete;              /* a rank is missing or unreadable */
    uint64_t problems;
    uint64_t n_obj, n_kvtag, n_cont, n_member, n_region;
    uint64_t n_same_name; /* objects that share name and time step, not in obj_name */
    uint64_t skipped_members;
    int cur_db;                  /* where we are, for fault reports; -1: opening */
    struct pending *pend;
    size_t npend, cappend;
    json_object *jproblems;      /* --json: problems collected here, not printed */
    json_object *jnocsum;        /* --json: ranks whose records carry no checksums */
    uint64_t damaged;            /* records whose checksum failed (format 4) */
};

/* One problem: a line, or with --json an object of the array. */
static void emit(struct verify *v, int rank, const char *where, const char *key, const char *fmt,
                 va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    v->problems++;
    ckpt_progress_clear();
    if (v->jproblems == NULL && rank < 0) /* the root's, not a rank's */
        printf("%s: %s%s%s\n", where, key ? key : "", key ? ": " : "", msg);
    if (v->jproblems == NULL) {
        if (rank >= 0)
            printf("rank %d: %s: %s%s%s\n", rank, where, key ? key : "", key ? ": " : "", msg);
        return;
    }
    json_object *o = json_object_new_object();
    if (rank >= 0)
        json_object_object_add(o, "rank", json_object_new_int(rank));
    json_object_object_add(o, "where", bulki_json_str(where));
    if (key)
        json_object_object_add(o, "key", bulki_json_str(key));
    json_object_object_add(o, "message", bulki_json_str(msg));
    json_object_array_add(v->jproblems, o);
}

static void problem(struct verify *v, int rank, const char *where, const char *fmt, ...)
    INSPECT_PRINTF(4, 5);
static void problem(struct verify *v, int rank, const char *where, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(v, rank, where, NULL, fmt, ap);
    va_end(ap);
}

/* A problem with one entry: "rank R: DB: KEY: message". */
static void kproblem(struct verify *v, struct vrank *r, int db, const ckpt_val *k, const char *fmt,
                     ...) INSPECT_PRINTF(5, 6);
static void kproblem(struct verify *v, struct vrank *r, int db, const ckpt_val *k, const char *fmt,
                     ...)
{
    char kt[320];
    va_list ap;
    key_text(kt, sizeof kt, db, k->data, k->len);
    va_start(ap, fmt);
    emit(v, r->e->rank, ckpt_db_name(db), kt, fmt, ap);
    va_end(ap);
}

static int has_id(const struct ids *s, uint64_t id)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->v[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && s->v[lo] == id;
}

static struct vrank *vrank_of(struct verify *v, int rank)
{
    for (size_t i = 0; i < v->root.n; i++)
        if (v->v[i].e->rank == rank)
            return &v->v[i];
    return NULL;
}

typedef void (*phase_fn)(struct verify *v, struct vrank *r);

/* After a pass over rank r: end what a failed pass left open, close the
 * rank (never one whose reading faulted: its state is unknown). */
static void release(struct verify *v, struct vrank *r)
{
    if (r->e->abandoned)
        return;
    if (r->tx != NULL)
        ckpt_rtxn_end(r->tx);
    r->tx = NULL;
    root_release(&v->root, r->e);
}

struct phase_job {
    struct verify *v;
    struct vrank *r;
    phase_fn fn;
};

static void run_phase(void *p)
{
    struct phase_job *j = p;
    j->fn(j->v, j->r);
}

/* Run a phase on rank r; if reading its map faults, report that as a
 * problem of the rank and leave the rank alone from then on. */
static void guarded(struct verify *v, struct vrank *r, phase_fn fn)
{
    struct phase_job j = {v, r, fn};
    int sig;
    v->cur_db = -1;
    if ((sig = guard_run(run_phase, &j)) != 0) {
        problem(v, r->e->rank, v->cur_db < 0 ? "open" : ckpt_db_name(v->cur_db),
                "reading %s/rank-%d/data.mdb crashed with %s: the file is damaged (truncated or "
                "overwritten); rank not checked further", v->root.path, r->e->rank,
                sig == SIGBUS ? "SIGBUS" : "SIGSEGV");
        r->e->abandoned = 1;
        r->ok = 0;
        r->tx = NULL; /* never ended: the store is left as it is */
    }
}

/* ------------------------------------------------------------------ */
/* Phase 1: open, meta, object ids                                     */
/* ------------------------------------------------------------------ */

static int collect_id(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct ids *s = p;
    (void)val;
    if (k->len != 8)
        return 0; /* reported in phase 2 */
    if (s->n == s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 1024;
        uint64_t *nv = realloc(s->v, nc * sizeof *nv);
        if (nv == NULL)
            return ckpt_error(CKPT_E_NOMEM, "out of memory");
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n++] = ckpt_key_get_u64(k->data);
    return 0;
}

/* Pass 1 reads ids only: a damaged record is skipped there (pass 2 reports
 * it), so that the ids of the rest are still collected. */
static void skip_damage(int db, const ckpt_val *key, const char *what, void *arg)
{
    (void)db;
    (void)key;
    (void)what;
    (void)arg;
}

struct vctx;
static void report_damage(int db, const ckpt_val *key, const char *what, void *arg);

/* After LMDB failed a read (a damaged page: MDB_PAGE_NOTFOUND,
 * MDB_CORRUPTED), the transaction is unusable: begin a new one, so that
 * the other databases are still checked. 0, or -1 if that failed too. */
static int renew_txn(struct verify *v, struct vrank *r)
{
    int rc;
    ckpt_rtxn_end(r->tx);
    r->tx = NULL;
    store_msg_clear();
    if ((rc = ckpt_rtxn_begin(&r->tx, r->e->st)) != 0) {
        r->tx = NULL;
        r->ok = 0;
        problem(v, r->e->rank, "open", "cannot begin a read transaction: %s", store_msg(rc));
        return -1;
    }
    ckpt_rtxn_on_damage(r->tx, r->on_damage, r->damage_arg);
    return 0;
}

static void phase_open(struct verify *v, struct vrank *r)
{
    struct rank_ent *e = r->e;
    int rc;
    if ((rc = root_open(&v->root, e, 0)) != 0) {
        problem(v, e->rank, "open", "%s", e->open_err ? e->open_err : ckpt_strerror(rc));
        return;
    }
    v->cur_db = CKPT_DB_META;
    store_msg_clear();
    if ((rc = ckpt_store_info(&r->info, e->st)) != 0) {
        problem(v, e->rank, "meta", "cannot read the meta record: %s", store_msg(rc));
        return;
    }
    if (r->info.format_version < 1 || r->info.format_version > CKPT_FORMAT_VERSION)
        problem(v, e->rank, "meta", "key \"meta\": format version %u, this build reads 1 to %u",
                r->info.format_version, CKPT_FORMAT_VERSION);
    if (r->info.rank != e->rank)
        problem(v, e->rank, "meta", "key \"meta\": says rank %d, but it is in directory rank-%d",
                (int)r->info.rank, e->rank);
    if (!ckpt_store_has_checksums(e->st)) {
        /* not a problem: what this check can and cannot see */
        if (v->jnocsum != NULL) {
            json_object_array_add(v->jnocsum, json_object_new_int(e->rank));
        } else {
            ckpt_progress_clear();
            printf("note: rank %d: format %u: its records carry no checksums, so a changed byte "
                   "in a key or value that still decodes goes unnoticed (ckpt-inspect copy "
                   "writes the store out in format %u, with checksums)\n",
                   e->rank, r->info.format_version, CKPT_FORMAT_VERSION);
        }
    }
    store_msg_clear();
    if ((rc = ckpt_rtxn_begin(&r->tx, e->st)) != 0) {
        problem(v, e->rank, "open", "cannot begin a read transaction: %s", store_msg(rc));
        return;
    }
    r->on_damage = skip_damage;
    r->damage_arg = NULL;
    ckpt_rtxn_on_damage(r->tx, skip_damage, NULL);
    r->ok = 1;
    r->collected = 1;
    for (int db = CKPT_DB_OBJ; db <= CKPT_DB_CONT; db += CKPT_DB_CONT - CKPT_DB_OBJ) {
        v->cur_db = db;
        store_msg_clear();
        rc = ckpt_iter(r->tx, db, NULL, 0, collect_id, db == CKPT_DB_OBJ ? &r->objs : &r->conts);
        if (rc < 0) {
            /* reported again by phase 2 if it fails there too */
            r->collected = 0;
            if (renew_txn(v, r) != 0)
                return;
        }
    }
    ckpt_rtxn_end(r->tx);
    r->tx = NULL;
}

/* Pass 2 and 3: the rank again, in a new read transaction. 0 or -1 (a
 * problem reported, r->ok cleared). */
static int reopen(struct verify *v, struct vrank *r)
{
    int rc;
    r->on_damage = NULL;
    v->cur_db = -1;
    if ((rc = root_open(&v->root, r->e, 0)) != 0) {
        problem(v, r->e->rank, "open", "%s", r->e->open_err ? r->e->open_err : ckpt_strerror(rc));
        r->ok = 0;
        return -1;
    }
    store_msg_clear();
    if ((rc = ckpt_rtxn_begin(&r->tx, r->e->st)) != 0) {
        r->tx = NULL;
        problem(v, r->e->rank, "open", "cannot begin a read transaction: %s", store_msg(rc));
        r->ok = 0;
        return -1;
    }
    return 0;
}

static void pend_add(struct verify *v, struct vrank *r, int db, const ckpt_val *k, uint64_t id,
                     int home)
{
    struct pending *p;
    if (v->npend == v->cappend) {
        size_t nc = v->cappend ? 2 * v->cappend : 64;
        struct pending *np = realloc(v->pend, nc * sizeof *np);
        if (np == NULL) { /* cannot defer: report it now */
            kproblem(v, r, db, k, "refers to %llu, which was not found (out of memory for the "
                     "second look)", (unsigned long long)id);
            return;
        }
        v->pend = np;
        v->cappend = nc;
    }
    p = &v->pend[v->npend++];
    memset(p, 0, sizeof *p);
    p->rank = r->e->rank;
    p->db = db;
    p->klen = k->len < sizeof p->key ? k->len : sizeof p->key;
    memcpy(p->key, k->data, p->klen);
    p->id = id;
    p->home = home;
}

/* ------------------------------------------------------------------ */
/* Phase 2: every database of a rank                                   */
/* ------------------------------------------------------------------ */

struct vctx {
    struct verify *v;
    struct vrank *r;
    int db;
};

/* Pass 2: a record whose checksum fails (or a tag-index entry no kvtag
 * backs) is a problem of that record; the iteration goes on past it. */
static void report_damage(int db, const ckpt_val *key, const char *what, void *arg)
{
    struct vctx *c = arg;
    c->v->damaged++;
    kproblem(c->v, c->r, db, key, "%s", what);
}

/* 1 if namekey(name) . suffix equals key[0..klen). */
static int same_name_key(const char *name, const void *suffix, size_t slen, const void *key,
                         size_t klen)
{
    uint8_t nk[CKPT_NAMEKEY_MAX + 8];
    size_t n = ckpt_key_name(nk, name, strlen(name));
    if (n == 0 || n + slen != klen)
        return 0;
    if (slen)
        memcpy(nk + n, suffix, slen);
    return memcmp(nk, key, klen) == 0;
}

static int bad_key(struct vctx *c, const ckpt_val *k, struct dkey *d)
{
    if (key_decode(d, c->db, k->data, k->len) == 0)
        return 0;
    kproblem(c->v, c->r, c->db, k, "malformed %s key of %zu bytes", ckpt_db_name(c->db), k->len);
    return 1;
}

static void bad_record(struct vctx *c, const ckpt_val *k, const ckpt_val *val)
{
    char err[320];
    record_error(err, sizeof err, c->db, val->data, val->len);
    kproblem(c->v, c->r, c->db, k, "%s", err);
}

static int check_meta(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct vctx *c = p;
    (void)val;
    if (k->len != 4 || memcmp(k->data, "meta", 4) != 0)
        kproblem(c->v, c->r, c->db, k, "unexpected key in the meta database");
    return 0;
}

/* Format 5: the keys obj_keys/cont_keys hold for a record are the ones it
 * carries (the store finds its index entries by them). */
static void check_rec_keys(struct vctx *c, const ckpt_val *k, int is_obj, const char *name,
                           int32_t ts, uint64_t cont_id, const char *nt)
{
    const int kdb = is_obj ? CKPT_DB_OBJ_KEYS : CKPT_DB_CONT_KEYS;
    struct ckpt_rec_keys rk;
    ckpt_val kv;
    int rc = ckpt_get_raw(&kv, c->r->tx, kdb, k->data, k->len);
    if (rc == CKPT_E_NOTFOUND) {
        kproblem(c->v, c->r, c->db, k, "no %s entry", ckpt_db_name(kdb));
    } else if (rc != 0) {
        kproblem(c->v, c->r, c->db, k, "cannot read its %s entry: %s", ckpt_db_name(kdb),
                 store_msg(rc));
    } else if (ckpt_keys_decode(&rk, kdb, kv.data, kv.len) != 0) {
        return; /* reported under obj_keys */
    } else if (rk.nlen != strlen(name) || memcmp(rk.name, name, rk.nlen) != 0 || rk.ts != ts ||
               rk.cont_id != cont_id) {
        char kt[128];
        name_text(kt, sizeof kt, rk.name, rk.nlen, 0);
        kproblem(c->v, c->r, c->db, k, "its %s entry says name %s ts %d cont_id %llu, the record "
                 "name %s ts %d cont_id %llu", ckpt_db_name(kdb), kt, (int)rk.ts,
                 (unsigned long long)rk.cont_id, nt, (int)ts, (unsigned long long)cont_id);
    }
}

/* obj_keys and cont_keys: a value that decodes, of an existing record
 * (that the record's keys match is checked under obj and cont). */
static int check_keys(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct vctx *c = p;
    struct dkey d;
    struct ckpt_rec_keys rk;
    ckpt_val rec;
    const int is_obj = c->db == CKPT_DB_OBJ_KEYS;
    if (bad_key(c, k, &d))
        return 0;
    if (ckpt_keys_decode(&rk, c->db, val->data, val->len) != 0) {
        kproblem(c->v, c->r, c->db, k, "value of %zu bytes, too short for an object's keys",
                 val->len);
        return 0;
    }
    int rc = is_obj ? ckpt_get_obj(&rec, c->r->tx, d.id) : ckpt_get_cont(&rec, c->r->tx, d.id);
    if (rc == CKPT_E_NOTFOUND)
        kproblem(c->v, c->r, c->db, k, "keys of id %llu, which is not %s of this rank",
                 (unsigned long long)d.id, is_obj ? "an object" : "a container");
    return 0; /* a record that cannot be read is reported under obj and cont */
}

/* obj and cont: decode, id matches the key, name index points back. */
static int check_named(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct vctx *c = p;
    struct dkey d;
    const int is_obj = c->db == CKPT_DB_OBJ;
    const char *name;
    uint64_t rec_id, cont_id = 0;
    int32_t ts = 0;
    uint8_t ik[CKPT_NAMEKEY_MAX + 4], tsb[4];
    size_t off = 0, n;
    ckpt_val iv;
    int rc;

    if (is_obj)
        c->v->n_obj++;
    else
        c->v->n_cont++;
    if (bad_key(c, k, &d))
        return 0;
    if (is_obj) {
        struct ckpt_obj o;
        if (ckpt_rec_obj_decode(&o, val->data, val->len, &off) != 0) {
            bad_record(c, k, val);
            return 0;
        }
        name = o.obj_name;
        ts = o.time_step;
        rec_id = o.obj_id;
        cont_id = o.cont_id;
    } else {
        struct ckpt_cont cn;
        if (ckpt_rec_cont_decode(&cn, val->data, val->len, &off) != 0) {
            bad_record(c, k, val);
            return 0;
        }
        name = cn.cont_name;
        rec_id = cn.cont_id;
    }
    if (rec_id != d.id)
        kproblem(c->v, c->r, c->db, k, "record says %s %llu", is_obj ? "obj_id" : "cont_id",
                 (unsigned long long)rec_id);
    char nt[128];
    name_text(nt, sizeof nt, name, strlen(name), 0);
    if (c->r->info.format_version >= 5)
        check_rec_keys(c, k, is_obj, name, ts, cont_id, nt);
    if ((n = ckpt_key_name(ik, name, strlen(name))) == 0) {
        kproblem(c->v, c->r, c->db, k, "name %s cannot be a key", nt);
        return 0;
    }
    if (is_obj) {
        ckpt_key_i32(tsb, ts);
        memcpy(ik + n, tsb, 4);
        n += 4;
    }
    const int idb = is_obj ? CKPT_DB_OBJ_NAME : CKPT_DB_CONT_NAME;
    rc = ckpt_get_raw(&iv, c->r->tx, idb, ik, n);
    if (is_obj && (rc == CKPT_E_NOTFOUND || (rc == 0 && iv.len == 8 &&
                                             ckpt_key_get_u64(iv.data) != d.id))) {
        /* one of several objects of this name and time step (PDC tells
         * them apart by user id and app name): the index names one of
         * them, or none after a delete; the others have a same-name entry
         * in pdc_server (ckpt_hook_same_name_put) */
        uint8_t sk[13 + CKPT_NAMEKEY_MAX];
        size_t sn = ckpt_key_pdc_same_name(sk, name, ts, d.id);
        ckpt_val sv;
        if (sn > 0 && ckpt_get_raw(&sv, c->r->tx, CKPT_DB_PDC_SERVER, sk, sn) == 0) {
            c->v->n_same_name++;
            return 0;
        }
    }
    if (rc == CKPT_E_NOTFOUND) {
        if (is_obj)
            kproblem(c->v, c->r, c->db, k, "no obj_name entry for its name %s ts %d", nt, (int)ts);
        else
            kproblem(c->v, c->r, c->db, k, "no cont_name entry for its name %s", nt);
    } else if (rc != 0) {
        kproblem(c->v, c->r, c->db, k, "cannot read its %s entry: %s", ckpt_db_name(idb),
                 store_msg(rc));
    } else if (iv.len == 8 && ckpt_key_get_u64(iv.data) != d.id) {
        kproblem(c->v, c->r, c->db, k, "the %s entry of its name %s points at id %llu instead",
                 ckpt_db_name(idb), nt, (unsigned long long)ckpt_key_get_u64(iv.data));
    } /* a value of another size is reported with the index entry */
    return 0;
}

/* obj_name and cont_name: an 8-byte id of a record with that name. */
static int check_name_index(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct vctx *c = p;
    struct dkey d;
    const int is_obj = c->db == CKPT_DB_OBJ_NAME;
    ckpt_val rec;
    size_t off = 0;
    int rc;
    if (bad_key(c, k, &d))
        return 0;
    if (val->len != 8) {
        kproblem(c->v, c->r, c->db, k, "value of %zu bytes, not an 8-byte id", val->len);
        return 0;
    }
    uint64_t id = ckpt_key_get_u64(val->data);
    rc = is_obj ? ckpt_get_obj(&rec, c->r->tx, id) : ckpt_get_cont(&rec, c->r->tx, id);
    if (rc == CKPT_E_NOTFOUND) {
        kproblem(c->v, c->r, c->db, k, "points at id %llu, which is not %s of this rank",
                 (unsigned long long)id, is_obj ? "an object" : "a container");
        return 0;
    }
    if (rc != 0) {
        kproblem(c->v, c->r, c->db, k, "cannot read id %llu: %s", (unsigned long long)id,
                 store_msg(rc));
        return 0;
    }
    if (is_obj) {
        struct ckpt_obj o;
        uint8_t tsb[4];
        if (ckpt_rec_obj_decode(&o, rec.data, rec.len, &off) != 0)
            return 0; /* reported under obj */
        ckpt_key_i32(tsb, o.time_step);
        if (!same_name_key(o.obj_name, tsb, 4, k->data, k->len)) {
            char nt[128];
            name_text(nt, sizeof nt, o.obj_name, strlen(o.obj_name), 0);
            kproblem(c->v, c->r, c->db, k, "points at id %llu, whose record is named %s ts %d",
                     (unsigned long long)id, nt, (int)o.time_step);
        }
    } else {
        struct ckpt_cont cn;
        if (ckpt_rec_cont_decode(&cn, rec.data, rec.len, &off) != 0)
            return 0; /* reported under cont */
        if (!same_name_key(cn.cont_name, NULL, 0, k->data, k->len)) {
            char nt[128];
            name_text(nt, sizeof nt, cn.cont_name, strlen(cn.cont_name), 0);
            kproblem(c->v, c->r, c->db, k, "points at id %llu, whose record is named %s",
                     (unsigned long long)id, nt);
        }
    }
    return 0;
}

static int owner_exists(struct vrank *r, uint64_t id)
{
    ckpt_val x;
    return ckpt_get_obj(&x, r->tx, id) == 0 || ckpt_get_cont(&x, r->tx, id) == 0;
}

static int check_kvtag(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct vctx *c = p;
    struct dkey d;
    struct ckpt_kvtag t;
    uint8_t ik[CKPT_NAMEKEY_MAX + 8];
    size_t off = 0;
    ckpt_val x;
    int rc;
    c->v->n_kvtag++;
    if (bad_key(c, k, &d))
        return 0;
    if (ckpt_rec_kvtag_decode_entry(&t, k->data, k->len, val->data, val->len, &off) != 0) {
        bad_record(c, k, val);
    } else if (!same_name_key(t.name, NULL, 0, (const uint8_t *)k->data + 8, k->len - 8)) {
        char nt[128];
        name_text(nt, sizeof nt, t.name, strlen(t.name), 0);
        kproblem(c->v, c->r, c->db, k, "record is named %s", nt);
    }
    memcpy(ik, (const uint8_t *)k->data + 8, d.namekey_len);
    memcpy(ik + d.namekey_len, k->data, 8);
    rc = ckpt_get_raw(&x, c->r->tx, CKPT_DB_TAG_INDEX, ik, d.namekey_len + 8);
    if (rc == CKPT_E_NOTFOUND)
        kproblem(c->v, c->r, c->db, k, "no kvtag_name index entry");
    else if (rc != 0)
        kproblem(c->v, c->r, c->db, k, "cannot read its kvtag_name entry: %s", store_msg(rc));
    if (!owner_exists(c->r, d.id))
        kproblem(c->v, c->r, c->db, k, "owner %llu is neither an object nor a container of this rank",
                 (unsigned long long)d.id);
    return 0;
}

static int check_tag_index(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct vctx *c = p;
    struct dkey d;
    uint8_t kk[CKPT_NAMEKEY_MAX + 8];
    ckpt_val x;
    int rc;
    if (bad_key(c, k, &d))
        return 0;
    if (val->len != 0)
        kproblem(c->v, c->r, c->db, k, "value of %zu bytes, expected none", val->len);
    ckpt_key_u64(kk, d.id);
    memcpy(kk + 8, k->data, d.namekey_len);
    rc = ckpt_get_raw(&x, c->r->tx, CKPT_DB_KVTAG, kk, d.namekey_len + 8);
    if (rc == CKPT_E_NOTFOUND)
        kproblem(c->v, c->r, c->db, k, "points nowhere: owner %llu has no such kvtag",
                 (unsigned long long)d.id);
    else if (rc != 0)
        kproblem(c->v, c->r, c->db, k, "cannot read the kvtag: %s", store_msg(rc));
    return 0;
}

static int check_member(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct vctx *c = p;
    struct dkey d;
    ckpt_val x;
    int found = 0;
    c->v->n_member++;
    if (bad_key(c, k, &d))
        return 0;
    if (val->len != 0)
        kproblem(c->v, c->r, c->db, k, "value of %zu bytes, expected none", val->len);
    if (ckpt_get_cont(&x, c->r->tx, d.id) != 0)
        kproblem(c->v, c->r, c->db, k, "container %llu is not a container of this rank",
                 (unsigned long long)d.id);
    /* objects live on other ranks than their container: this rank's
     * transaction first, then the ids pass 1 collected from every rank */
    found = ckpt_get_obj(&x, c->r->tx, d.id2) == 0;
    for (size_t i = 0; i < c->v->root.n && !found; i++)
        if (c->v->v[i].collected && has_id(&c->v->v[i].objs, d.id2))
            found = 1;
    if (!found) {
        /* it may be on a rank that is missing or unreadable (reported) */
        if (c->v->incomplete)
            c->v->skipped_members++;
        else
            pend_add(c->v, c->r, c->db, k, d.id2, -1); /* pass 3 looks again */
    }
    return 0;
}

static int check_region(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct vctx *c = p;
    struct dkey d;
    struct ckpt_region g;
    size_t off = 0;
    ckpt_val x;
    c->v->n_region++;
    if (bad_key(c, k, &d))
        return 0;
    if (ckpt_rec_region_decode(&g, val->data, val->len, &off) != 0) {
        bad_record(c, k, val);
    } else {
        int same = g.obj_id == d.id && g.ndim == d.ndim;
        for (uint32_t i = 0; same && i < d.ndim; i++)
            same = g.start[i] == d.start[i] && g.count[i] == d.count[i];
        if (!same)
            kproblem(c->v, c->r, c->db, k, "record describes another region (obj_id %llu, ndim %u)",
                     (unsigned long long)g.obj_id, g.ndim);
    }
    if (ckpt_get_obj(&x, c->r->tx, d.id) != 0)
        kproblem(c->v, c->r, c->db, k, "object %llu is not an object of this rank",
                 (unsigned long long)d.id);
    return 0;
}

/* pdc_server (a PDC server's region tables): the record decodes and
 * describes the region of its key. Its objects may be other ranks'. */
static int check_pdc_server(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct vctx *c = p;
    struct dkey d;
    size_t off = 0;
    uint64_t obj_id;
    uint32_t ndim;
    const uint64_t *start, *count;
    struct ckpt_region g;
    struct ckpt_xfer_region x;
    if (bad_key(c, k, &d))
        return 0;
    if (d.id2 == CKPT_PDC_DART) {
        /* a DART entry: the record decodes and is the entry its key names */
        struct ckpt_dart_entry e;
        uint8_t key[CKPT_PDC_DART_KEY_MAX];
        size_t klen;
        if (ckpt_rec_dart_decode(&e, val->data, val->len, &off) != 0) {
            bad_record(c, k, val);
            return 0;
        }
        klen = ckpt_key_pdc_dart(key, &e);
        if (klen != k->len || memcmp(key, k->data, klen) != 0)
            kproblem(c->v, c->r, c->db, k, "DART record describes another entry (key [%s])", e.key);
        return 0;
    }
    if (d.id2 == CKPT_PDC_SAME_NAME) {
        /* an entry of a deleted object stays (ids are never reused) */
        if (val->len != 0)
            kproblem(c->v, c->r, c->db, k, "value of %zu bytes, expected none", val->len);
        return 0;
    }
    if (d.id2 == CKPT_PDC_XFER_REGION) {
        if (ckpt_rec_xfer_decode(&x, val->data, val->len, &off) != 0) {
            bad_record(c, k, val);
            return 0;
        }
        obj_id = x.obj_id, ndim = x.ndim, start = x.start, count = x.count;
    } else {
        if (ckpt_rec_region_decode(&g, val->data, val->len, &off) != 0) {
            bad_record(c, k, val);
            return 0;
        }
        obj_id = g.obj_id, ndim = g.ndim, start = g.start, count = g.count;
    }
    int same = obj_id == d.id && ndim == d.ndim;
    for (uint32_t i = 0; same && i < d.ndim; i++)
        same = start[i] == d.start[i] && count[i] == d.count[i];
    if (!same)
        kproblem(c->v, c->r, c->db, k, "record describes another region (obj_id %llu, ndim %u)",
                 (unsigned long long)obj_id, ndim);
    return 0;
}

/* id_home (written by re-homing): on the id's directory rank, the rank
 * that holds the object or container now. */
static int check_id_home(const ckpt_val *k, const ckpt_val *val, void *p)
{
    struct vctx *c = p;
    struct dkey d;
    uint32_t home;
    if (bad_key(c, k, &d))
        return 0;
    if (id_home_decode(val->data, val->len, &home) != 0) {
        kproblem(c->v, c->r, c->db, k, "value of %zu bytes, not a 4-byte rank", val->len);
        return 0;
    }
    if (c->v->nranks < 1)
        return 0;
    if (home >= (uint32_t)c->v->nranks) {
        kproblem(c->v, c->r, c->db, k, "home rank %u is beyond the store's %d ranks", home,
                 c->v->nranks);
        return 0;
    }
    int dir = ckpt_id_dir_rank(d.id, c->v->nranks);
    if (dir != c->r->e->rank)
        kproblem(c->v, c->r, c->db, k, "entry belongs on the id's directory rank %d", dir);
    struct vrank *hr = vrank_of(c->v, (int)home);
    if (hr == c->r) {
        if (!owner_exists(c->r, d.id))
            kproblem(c->v, c->r, c->db, k, "says rank %u, which has no object or container %llu",
                     home, (unsigned long long)d.id);
    } else if (hr != NULL && hr->collected && !has_id(&hr->objs, d.id) &&
               !has_id(&hr->conts, d.id)) {
        pend_add(c->v, c->r, c->db, k, d.id, (int)home); /* pass 3 looks again */
    }
    return 0;
}

static void phase_check(struct verify *v, struct vrank *r)
{
    static const ckpt_iter_cb checks[CKPT_DB_COUNT] = {
        [CKPT_DB_META] = check_meta,         [CKPT_DB_OBJ] = check_named,
        [CKPT_DB_OBJ_NAME] = check_name_index, [CKPT_DB_KVTAG] = check_kvtag,
        [CKPT_DB_TAG_INDEX] = check_tag_index, [CKPT_DB_CONT] = check_named,
        [CKPT_DB_CONT_NAME] = check_name_index, [CKPT_DB_CONT_OBJ] = check_member,
        [CKPT_DB_REGION] = check_region,       [CKPT_DB_ID_HOME] = check_id_home,
        [CKPT_DB_PDC_SERVER] = check_pdc_server, [CKPT_DB_OBJ_KEYS] = check_keys,
        [CKPT_DB_CONT_KEYS] = check_keys,
    };
    uint64_t before = v->skipped_members;
    struct vctx dc = {v, r, -1};
    if (reopen(v, r) != 0)
        return;
    r->on_damage = report_damage;
    r->damage_arg = &dc;
    ckpt_rtxn_on_damage(r->tx, report_damage, &dc);
    for (int db = 0; db < CKPT_DB_COUNT; db++) {
        struct vctx c = {v, r, db};
        int rc;
        if (checks[db] == NULL)
            continue; /* a database this build does not know */
        v->cur_db = db;
        store_msg_clear();
        if ((rc = ckpt_iter(r->tx, db, NULL, 0, checks[db], &c)) < 0) {
            problem(v, r->e->rank, ckpt_db_name(db), "cannot read: %s", store_msg(rc));
            if (renew_txn(v, r) != 0)
                break;
        }
    }
    if (r->tx != NULL)
        ckpt_rtxn_end(r->tx);
    r->tx = NULL;
    if (v->skipped_members > before) {
        ckpt_progress_clear();
        printf("note: rank %d: cont_obj: %llu members not checked: their objects belong to ranks "
               "that are missing or could not be read\n",
               r->e->rank, (unsigned long long)(v->skipped_members - before));
    }
}

/* Pass 3 on rank r: the pending references it may resolve. */
static void phase_recheck(struct verify *v, struct vrank *r)
{
    ckpt_val x;
    if (reopen(v, r) != 0)
        return;
    v->cur_db = CKPT_DB_OBJ;
    for (size_t i = 0; i < v->npend; i++) {
        struct pending *p = &v->pend[i];
        if (p->found || (p->home >= 0 && p->home != r->e->rank))
            continue;
        if (ckpt_get_obj(&x, r->tx, p->id) == 0 ||
            (p->home >= 0 && ckpt_get_cont(&x, r->tx, p->id) == 0))
            p->found = 1;
    }
    ckpt_rtxn_end(r->tx);
    r->tx = NULL;
}

/* What pass 3 did not find either is a problem. */
static void report_pending(struct verify *v)
{
    for (size_t i = 0; i < v->npend; i++) {
        const struct pending *p = &v->pend[i];
        struct vrank *r = vrank_of(v, p->rank);
        ckpt_val k = {p->klen, p->key};
        if (p->found || r == NULL)
            continue;
        if (p->db == CKPT_DB_CONT_OBJ)
            kproblem(v, r, p->db, &k, "member object %llu does not exist on any rank",
                     (unsigned long long)p->id);
        else
            kproblem(v, r, p->db, &k, "says rank %d, which has no object or container %llu",
                     p->home, (unsigned long long)p->id);
    }
}

/* ------------------------------------------------------------------ */

/* The ranks the meta records say there are, and every disagreement. */
static void check_ranks(struct verify *v)
{
    struct vrank *first = NULL;
    for (size_t i = 0; i < v->root.n; i++)
        if (v->v[i].ok && first == NULL)
            first = &v->v[i];
    v->nranks = first ? first->info.nranks : -1;
    if (first == NULL) {
        v->incomplete = 1;
        return;
    }
    for (size_t i = 0; i < v->root.n; i++) {
        struct vrank *r = &v->v[i];
        if (r->ok && r->info.nranks != v->nranks)
            problem(v, r->e->rank, "meta", "key \"meta\": says the store has %d ranks, rank %d says %d",
                    (int)r->info.nranks, first->e->rank, v->nranks);
        if (r->e->rank >= v->nranks)
            problem(v, r->e->rank, "meta", "directory rank-%d is beyond the store's %d ranks",
                    r->e->rank, v->nranks);
    }
    for (int rank = 0; rank < v->nranks; rank++) {
        struct vrank *r = vrank_of(v, rank);
        if (r == NULL)
            problem(v, rank, "missing", "no %s/rank-%d directory, but the store has %d ranks "
                    "(meta of rank %d)", v->root.path, rank, v->nranks, first->e->rank);
        if (r == NULL || !r->collected)
            v->incomplete = 1;
    }
}

/* Entries of the root that are not rank directories (a stray rank-N
 * directory is a rank of its own, reported by check_ranks). */
static int nonrank_stray(const char *name, const char *why, void *payload)
{
    struct verify *v = payload;
    char where[4200];
    int rank = ckpt_rank_of_name(name);
    if (rank >= 0 && root_find(&v->root, rank) != NULL)
        return 0;
    snprintf(where, sizeof where, "stray %s/%s", v->root.path, name);
    problem(v, -1, where, "%s; remove it (a restart or re-homing refuses to run until then)", why);
    return 0;
}

int cmd_verify(int argc, char **argv)
{
    struct verify v;
    size_t nok = 0;
    int c, as_json = 0, rehome;
    if ((c = parse_root_json(argc, argv, &as_json)) >= 0)
        return c;
    memset(&v, 0, sizeof v);
    if (root_scan(&v.root, argv[optind], 0) != 0)
        return EXIT_FAIL;
    if ((v.v = calloc(v.root.n, sizeof *v.v)) == NULL) {
        errp(v.root.path, "out of memory");
        root_close(&v.root);
        return EXIT_FAIL;
    }
    if (as_json) {
        v.jproblems = json_object_new_array();
        v.jnocsum = json_object_new_array();
    }
    for (size_t i = 0; i < v.root.n; i++)
        v.v[i].e = &v.root.ranks[i];
    if ((rehome = root_rehome_state(v.root.path)) != 0 && !as_json)
        printf("note: %s/.rehome exists: a re-homing to another rank count did not finish; the "
               "next restart of the store finishes or undoes it\n", v.root.path);
    struct ckpt_progress pr;
    ckpt_progress_begin(&pr, "verify pass 1/2 (meta, ids)", "ranks", v.root.n);
    for (size_t i = 0; i < v.root.n; i++) {
        guarded(&v, &v.v[i], phase_open);
        release(&v, &v.v[i]);
        ckpt_progress_update(&pr, i + 1);
    }
    ckpt_progress_end(&pr);
    check_ranks(&v);
    /* while a re-homing is pending the root holds two layouts */
    if (rehome == 0)
        ckpt_root_strays(v.root.path, v.nranks, nonrank_stray, &v);
    ckpt_progress_begin(&pr, "verify pass 2/2 (records)", "ranks", v.root.n);
    for (size_t i = 0; i < v.root.n; i++) {
        if (v.v[i].ok)
            guarded(&v, &v.v[i], phase_check);
        release(&v, &v.v[i]);
        ckpt_progress_update(&pr, i + 1);
    }
    ckpt_progress_end(&pr);
    if (v.npend > 0)
        ckpt_progress_begin(&pr, "verify: second look at cross-rank references", "ranks",
                            v.root.n);
    for (size_t i = 0; v.npend > 0 && i < v.root.n; i++) {
        if (v.v[i].ok)
            guarded(&v, &v.v[i], phase_recheck);
        release(&v, &v.v[i]);
        ckpt_progress_update(&pr, i + 1);
    }
    if (v.npend > 0)
        ckpt_progress_end(&pr);
    report_pending(&v);
    for (size_t i = v.root.n; i-- > 0;) {
        if (v.v[i].ok)
            nok++;
        free(v.v[i].objs.v);
        free(v.v[i].conts.v);
    }
    free(v.v);
    free(v.pend);
    root_close(&v.root);
    if (as_json) {
        json_object *jr = json_object_new_object(), *n = json_object_new_object();
        json_object_object_add(jr, "root", bulki_json_str(v.root.path));
        json_object_object_add(jr, "ok", json_object_new_boolean(v.problems == 0));
        json_object_object_add(jr, "ranks", jnum_u64(nok));
        json_object_object_add(jr, "rehome_pending", json_object_new_boolean(rehome != 0));
        /* ranks of an older format, whose records carry no checksums */
        json_object_object_add(jr, "no_checksums", v.jnocsum);
        json_object_object_add(jr, "damaged_records", jnum_u64(v.damaged));
        json_object_object_add(n, "objects", jnum_u64(v.n_obj));
        json_object_object_add(n, "kvtags", jnum_u64(v.n_kvtag));
        json_object_object_add(n, "containers", jnum_u64(v.n_cont));
        json_object_object_add(n, "members", jnum_u64(v.n_member));
        json_object_object_add(n, "regions", jnum_u64(v.n_region));
        json_object_object_add(n, "same_name_objects", jnum_u64(v.n_same_name));
        json_object_object_add(jr, "checked", n);
        json_object_object_add(jr, "problems", v.jproblems);
        print_json_pretty(jr);
        json_object_put(jr);
        if (finish_stdout() != EXIT_OK)
            return EXIT_FAIL;
        return v.problems == 0 ? EXIT_OK : EXIT_FAIL;
    }
    if (v.n_same_name > 0)
        printf("note: %llu object%s share%s name and time step with another (PDC tells them apart "
               "by user id and app name; same-name entries in pdc_server)\n",
               (unsigned long long)v.n_same_name, v.n_same_name == 1 ? "" : "s",
               v.n_same_name == 1 ? "s its" : " their");
    if (v.problems == 0) {
        printf("verified %llu objects, %llu kvtags, %llu containers, %llu members, %llu regions in "
               "%zu ranks: OK\n",
               (unsigned long long)v.n_obj, (unsigned long long)v.n_kvtag,
               (unsigned long long)v.n_cont, (unsigned long long)v.n_member,
               (unsigned long long)v.n_region, nok);
        return finish_stdout();
    }
    printf("found %llu problem%s; checked %llu objects, %llu kvtags, %llu containers, %llu members, "
           "%llu regions in %zu ranks\n",
           (unsigned long long)v.problems, v.problems == 1 ? "" : "s", (unsigned long long)v.n_obj,
           (unsigned long long)v.n_kvtag, (unsigned long long)v.n_cont,
           (unsigned long long)v.n_member, (unsigned long long)v.n_region, nok);
    finish_stdout();
    errp(v.root.path, "verification failed: %llu problem%s", (unsigned long long)v.problems,
         v.problems == 1 ? "" : "s");
    return EXIT_FAIL;
}
