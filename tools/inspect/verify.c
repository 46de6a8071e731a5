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

#include "progress.h"
#include "verify.h"


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

void problem(struct verify *v, int rank, const char *where, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(v, rank, where, NULL, fmt, ap);
    va_end(ap);
}

void kproblem(struct verify *v, struct vrank *r, int db, const ckpt_val *k, const char *fmt, ...)
{
    char kt[320];
    va_list ap;
    key_text(kt, sizeof kt, db, k->data, k->len);
    va_start(ap, fmt);
    emit(v, r->e->rank, ckpt_db_name(db), kt, fmt, ap);
    va_end(ap);
}

int has_id(const struct ids *s, uint64_t id)
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

struct vrank *vrank_of(struct verify *v, int rank)
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

void pend_add(struct verify *v, struct vrank *r, int db, const ckpt_val *k, uint64_t id,
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

static void phase_check(struct verify *v, struct vrank *r)
{
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
        if (verify_checks[db] == NULL)
            continue; /* a database this build does not know */
        v->cur_db = db;
        store_msg_clear();
        if ((rc = ckpt_iter(r->tx, db, NULL, 0, verify_checks[db], &c)) < 0) {
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
