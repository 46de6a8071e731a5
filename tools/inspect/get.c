/*
 * get.c - ckpt-inspect get (one object with its kvtags, container and
 * regions) and ckpt-inspect find (owners of a kvtag, through the tag
 * index), across the ranks of a store.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "inspect.h"

/* Where to look for an id first: its directory rank, which is the rank
 * that handed it out ((rank + 1) * 1e9 + seq) as long as the rank count
 * never changed (ckpt_id_dir_rank). */
static int id_first_rank(uint64_t id, int nranks)
{
    if (nranks > 0)
        return ckpt_id_dir_rank(id, nranks);
    return id >= CKPT_ID_BASE && id / CKPT_ID_BASE - 1 < (uint64_t)INT32_MAX
               ? (int)(id / CKPT_ID_BASE - 1)
               : -1;
}

struct nranks_job {
    struct inspect_root *r;
    struct rank_ent *e;
    int nranks;
};

static void nranks_try(void *p)
{
    struct nranks_job *j = p;
    struct ckpt_store_info info;
    if (root_open(j->r, j->e, 0) == 0 && ckpt_store_info(&info, j->e->st) == 0 && info.nranks > 0)
        j->nranks = info.nranks;
}

/* The store's rank count, as the first readable rank's meta says (0 if
 * none is readable); *failed counts the ranks that faulted meanwhile. */
static int store_nranks(struct inspect_root *r, int *failed)
{
    for (size_t i = 0; i < r->n; i++) {
        struct nranks_job j = {r, &r->ranks[i], 0};
        int sig;
        if (r->ranks[i].abandoned)
            continue;
        if ((sig = guard_run(nranks_try, &j)) != 0) {
            rank_fault(r, &r->ranks[i], sig);
            (*failed)++;
            continue;
        }
        root_release(r, &r->ranks[i]);
        if (j.nranks > 0)
            return j.nranks;
    }
    return 0;
}

/* After a miss at order[i]: if that rank's id directory (id_home, written
 * when a restart on another rank count moved records) names the id's
 * home, look there next. */
static void prefer_home(struct rank_ent **order, size_t n, size_t i, ckpt_rtxn *tx, uint64_t id)
{
    uint8_t k[8];
    ckpt_val v;
    uint32_t home;
    ckpt_key_u64(k, id);
    if (ckpt_get_raw(&v, tx, CKPT_DB_ID_HOME, k, 8) != 0 || id_home_decode(v.data, v.len, &home) != 0)
        return;
    for (size_t j = i + 1; j < n; j++) {
        if (order[j]->rank == (int)home) {
            struct rank_ent *t = order[i + 1];
            order[i + 1] = order[j];
            order[j] = t;
            return;
        }
    }
}

/* Order of ranks to search: `first` (if present), then the others. */
static size_t search_order(struct inspect_root *r, int first, struct rank_ent **out)
{
    size_t n = 0;
    struct rank_ent *f = first >= 0 ? root_find(r, first) : NULL;
    if (f)
        out[n++] = f;
    for (size_t i = 0; i < r->n; i++)
        if (&r->ranks[i] != f)
            out[n++] = &r->ranks[i];
    return n;
}

/* ------------------------------------------------------------------ */
/* get                                                                 */
/* ------------------------------------------------------------------ */

struct list_ctx {
    const char *path; /* ROOT/rank-<r> */
    json_object *arr;
    int rank;
    int db;
    int bad;
};

static int add_record(const ckpt_val *k, const ckpt_val *v, void *p)
{
    struct list_ctx *c = p;
    char err[256];
    json_object *j = record_json(c->db, k->data, k->len, v->data, v->len, err, sizeof err);
    if (j == NULL) {
        err_key(c->path, c->db, k, err);
        j = json_object_new_object();
        json_object_object_add(j, "key", key_json(c->db, k->data, k->len));
        json_object_object_add(j, "error", bulki_json_str(err));
        c->bad++;
    }
    json_object_array_add(c->arr, j);
    return 0;
}

/* A search for one record over the ranks of a store: try order[i]. */
struct get_job {
    struct inspect_root *root;
    struct rank_ent **order;
    size_t n, i;
    /* what to find: an object by id or by name, or a container by id */
    int have_id;
    uint64_t id;
    const char *name;
    int32_t ts;
    /* what was found: objects (docs[k] with container cont[k]); a
     * container by id into out (status 1) */
    json_object *out;
    json_object **docs;
    uint64_t *cont;
    size_t ndocs;
    int status;
    int failed;
};

/* The job's rank e opened and a read transaction begun on it: 0, or -1
 * when either failed (said, and counted in j->failed). */
static int job_begin(struct get_job *j, struct rank_ent *e, ckpt_rtxn **tx)
{
    int rc;
    if (root_open(j->root, e, 1) != 0) {
        j->failed++;
        return -1;
    }
    store_msg_clear();
    if ((rc = ckpt_rtxn_begin(tx, e->st)) != 0) {
        err_store(j->root->path, rc);
        j->failed++;
        return -1;
    }
    return 0;
}

/* Container job->id on order[i]: {"id","name","rank"} into job->out. */
static void cont_try(void *p)
{
    struct get_job *j = p;
    struct rank_ent *e = j->order[j->i];
    ckpt_rtxn *tx;
    ckpt_val v;
    struct ckpt_cont cont;
    size_t off;
    if (job_begin(j, e, &tx) != 0)
        return;
    if (ckpt_get_cont(&v, tx, j->id) == 0) {
        if (ckpt_rec_cont_decode(&cont, v.data, v.len, &off) == 0) {
            json_object_object_add(j->out, "name", bulki_json_str(cont.cont_name));
        } else {
            char err[256];
            record_error(err, sizeof err, CKPT_DB_CONT, v.data, v.len);
            json_object_object_add(j->out, "error", bulki_json_str(err));
        }
        json_object_object_add(j->out, "rank", jnum_i64(e->rank));
        j->status = 1; /* found */
    } else {
        prefer_home(j->order, j->n, j->i, tx, j->id);
    }
    ckpt_rtxn_end(tx);
}

/* Object `id` (record v) of rank e as {"rank","id","object","kvtags",
 * "regions"} appended to j->docs; its container id to j->cont. A record,
 * kvtag or region that does not decode sets j->status to EXIT_FAIL. */
static void obj_doc(struct get_job *j, struct rank_ent *e, ckpt_rtxn *tx, uint64_t id,
                    const ckpt_val *v)
{
    struct ckpt_obj o;
    size_t off = 0;
    char err[256];
    json_object **docs = realloc(j->docs, (j->ndocs + 1) * sizeof *docs);
    uint64_t *cont = docs ? realloc(j->cont, (j->ndocs + 1) * sizeof *cont) : NULL;
    if (docs)
        j->docs = docs;
    if (cont)
        j->cont = cont;
    if (docs == NULL || cont == NULL) {
        errp(ckpt_store_path(e->st), "%s", strerror(ENOMEM));
        j->failed++;
        return;
    }
    json_object *out = json_object_new_object();
    j->docs[j->ndocs] = out;
    j->cont[j->ndocs] = 0;
    json_object_object_add(out, "rank", jnum_i64(e->rank));
    json_object_object_add(out, "id", jnum_u64(id));
    if (ckpt_rec_obj_decode(&o, v->data, v->len, &off) == 0) {
        json_object_object_add(out, "object", obj_json(&o));
        j->cont[j->ndocs] = o.cont_id;
    } else {
        record_error(err, sizeof err, CKPT_DB_OBJ, v->data, v->len);
        errp(ckpt_store_path(e->st), "object %llu: %s", (unsigned long long)id, err);
        json_object_object_add(out, "object", NULL);
        json_object_object_add(out, "error", bulki_json_str(err));
        j->status = EXIT_FAIL;
    }
    j->ndocs++;
    const char *rp = ckpt_store_path(e->st);
    struct list_ctx tags = {rp, json_object_new_array(), e->rank, CKPT_DB_KVTAG, 0};
    struct list_ctx regs = {rp, json_object_new_array(), e->rank, CKPT_DB_REGION, 0};
    int r1 = ckpt_iter_kvtags(tx, id, add_record, &tags);
    int r2 = ckpt_iter_regions(tx, id, add_record, &regs);
    json_object_object_add(out, "kvtags", tags.arr);
    json_object_object_add(out, "regions", regs.arr);
    if (r1 < 0 || r2 < 0) {
        err_store(j->root->path, r1 < 0 ? r1 : r2);
        j->status = EXIT_FAIL;
    }
    if (tags.bad || regs.bad)
        j->status = EXIT_FAIL;
}

/* The ids of one name and time step on a rank: the name index's and
 * those of the same-name entries (pdc_server `n` . namekey . time step .
 * id: objects that differ only in user id or app name). */
struct name_ids {
    uint64_t *id;
    size_t n;
    int bad;
    const char *path;
};

static int name_ids_add(struct name_ids *s, uint64_t id)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->id[i] == id)
            return 0;
    uint64_t *a = realloc(s->id, (s->n + 1) * sizeof *a);
    if (a == NULL)
        return CKPT_E_NOMEM;
    s->id = a;
    s->id[s->n++] = id;
    return 0;
}

static int same_name_cb(const ckpt_val *k, const ckpt_val *v, void *p)
{
    struct name_ids *s = p;
    (void)v;
    if (k->len < 13) {
        char kt[256];
        key_text(kt, sizeof kt, CKPT_DB_PDC_SERVER, k->data, k->len);
        errp(s->path, "%s: %s: malformed same-name entry", ckpt_db_name(CKPT_DB_PDC_SERVER), kt);
        s->bad++;
        return 0;
    }
    return name_ids_add(s, ckpt_key_get_u64((const uint8_t *)k->data + k->len - 8));
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* By name on rank e: every object of that name and time step, in
 * creation order (ascending ids; PDC answers a lookup by name with the
 * first). An entry whose object was deleted, or whose record names
 * another name (a long name's key hash), is no object of this name. */
static int obj_by_name(struct get_job *j, struct rank_ent *e, ckpt_rtxn *tx)
{
    uint8_t key[13 + CKPT_NAMEKEY_MAX];
    struct name_ids s = {NULL, 0, 0, ckpt_store_path(e->st)};
    size_t klen, nlen = strlen(j->name);
    uint64_t id;
    ckpt_val v;
    int rc = ckpt_get_obj_by_name(&id, &v, tx, j->name, nlen, j->ts);
    if (rc == 0)
        rc = name_ids_add(&s, id);
    if ((rc == 0 || rc == CKPT_E_NOTFOUND) &&
        (klen = ckpt_key_pdc_same_name(key, j->name, j->ts, 0)) > 8)
        rc = ckpt_iter(tx, CKPT_DB_PDC_SERVER, key, klen - 8, same_name_cb, &s);
    if (rc == CKPT_E_NOTFOUND)
        rc = 0;
    if (s.bad)
        j->status = EXIT_FAIL;
    if (s.n > 1)
        qsort(s.id, s.n, sizeof *s.id, cmp_u64);
    for (size_t i = 0; rc == 0 && i < s.n; i++) {
        struct ckpt_obj o;
        size_t off = 0;
        if ((rc = ckpt_get_obj(&v, tx, s.id[i])) == CKPT_E_NOTFOUND) {
            rc = 0; /* deleted since */
            continue;
        }
        if (rc != 0)
            break;
        if (ckpt_rec_obj_decode(&o, v.data, v.len, &off) == 0 &&
            (o.time_step != j->ts || strcmp(o.obj_name ? o.obj_name : "", j->name) != 0))
            continue;
        obj_doc(j, e, tx, s.id[i], &v);
    }
    free(s.id);
    return rc;
}

/* Object (by id or name) on order[i]: the whole answer into job->docs. */
static void obj_try(void *p)
{
    struct get_job *j = p;
    struct rank_ent *e = j->order[j->i];
    ckpt_rtxn *tx;
    ckpt_val v;
    int rc;
    if (job_begin(j, e, &tx) != 0)
        return;
    if (!j->have_id)
        rc = obj_by_name(j, e, tx);
    else if ((rc = ckpt_get_obj(&v, tx, j->id)) == 0)
        obj_doc(j, e, tx, j->id, &v);
    if (rc != 0 && rc != CKPT_E_NOTFOUND) {
        err_store(j->root->path, rc);
        j->failed++;
    } else if (rc == CKPT_E_NOTFOUND && j->have_id) {
        prefer_home(j->order, j->n, j->i, tx, j->id);
    }
    ckpt_rtxn_end(tx);
}

/* Try the ranks in j->order until fn finds the record (j->out set, or for
 * containers j->status 1); a rank that faults is reported and skipped. */
static void search(struct get_job *j, void (*fn)(void *), int (*found)(const struct get_job *))
{
    for (j->i = 0; j->i < j->n && !found(j); j->i++) {
        int sig;
        if (j->order[j->i]->abandoned) { /* faulted earlier, reported then */
            j->failed++;
            continue;
        }
        if ((sig = guard_run(fn, j)) != 0) {
            rank_fault(j->root, j->order[j->i], sig);
            j->failed++;
        }
        root_release(j->root, j->order[j->i]);
    }
}

static int obj_found(const struct get_job *j)
{
    return j->ndocs > 0;
}

static int cont_found(const struct get_job *j)
{
    return j->status == 1;
}

/* Container `id` as {"id","name","rank"}: looked up on its directory rank
 * (the rank that handed it out, unless a re-homing moved it: then the id
 * directory there says where), then on every other rank. */
static json_object *container_json(struct inspect_root *r, uint64_t id, int nranks, int *failed)
{
    struct get_job j;
    memset(&j, 0, sizeof j);
    j.root = r;
    j.id = id;
    j.out = json_object_new_object();
    json_object_object_add(j.out, "id", jnum_u64(id));
    if ((j.order = malloc(r->n * sizeof *j.order)) == NULL)
        return j.out;
    j.n = search_order(r, id_first_rank(id, nranks), j.order);
    search(&j, cont_try, cont_found);
    *failed += j.failed;
    free(j.order);
    return j.out;
}

int cmd_get(int argc, char **argv)
{
    static const struct option lo[] = {{"id", required_argument, 0, 'i'},
                                       {"name", required_argument, 0, 'n'},
                                       {"time-step", required_argument, 0, 't'},
                                       {"json", no_argument, 0, 'j'},
                                       HELP_OPT, {0, 0, 0, 0}};
    struct inspect_root root;
    struct get_job j;
    int have_ts = 0, c, first = -1, nranks, as_json = 0;

    memset(&j, 0, sizeof j);
    j.status = EXIT_OK;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'h':
            return cmd_help();
        case 'j':
            as_json = 1;
            break;
        case 'i':
            if (parse_u64(optarg, &j.id) != 0) {
                fprintf(stderr, PROG ": --id: not an id: \"%s\"\n", optarg);
                return EXIT_USAGE;
            }
            j.have_id = 1;
            break;
        case 'n':
            j.name = optarg;
            break;
        case 't':
            if (parse_i32(optarg, &j.ts) != 0) {
                fprintf(stderr, PROG ": --time-step: not a 32-bit integer: \"%s\"\n", optarg);
                return EXIT_USAGE;
            }
            have_ts = 1;
            break;
        default:
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if ((c = check_operands(argc, argv, 1, 0, "ROOT")) != EXIT_OK)
        return c;
    if (j.have_id == (j.name != NULL))
        return usage_err("get", j.have_id ? "--id and --name exclude each other"
                                          : "--id ID or --name NAME missing");
    if (have_ts && j.name == NULL)
        return usage_err("get", "--time-step goes with --name");
    if (j.name != NULL && strlen(j.name) > CKPT_NAME_MAX) {
        fprintf(stderr, PROG ": --name: longer than %u bytes\n", CKPT_NAME_MAX);
        return EXIT_USAGE;
    }
    if (root_scan(&root, argv[optind], 0) != 0)
        return EXIT_FAIL;
    j.root = &root;
    if ((j.order = malloc(root.n * sizeof *j.order)) == NULL) {
        errp(root.path, "%s", strerror(ENOMEM));
        root_close(&root);
        return EXIT_FAIL;
    }
    int nfault = 0;
    nranks = store_nranks(&root, &nfault);
    if (j.have_id)
        first = id_first_rank(j.id, nranks);
    else if (nranks > 0) /* PDC's routing: the home rank of (name, time step) */
        first = ckpt_home_obj(j.name, j.ts, nranks);
    j.n = search_order(&root, first, j.order);
    search(&j, obj_try, obj_found);
    size_t nread = root.n - (size_t)j.failed;
    /* every object found: one document each, in creation order (by name:
     * the first is the one PDC's lookup answers) */
    for (size_t k = 0; k < j.ndocs; k++) {
        json_object_object_add(j.docs[k], "container",
                               j.cont[k] ? container_json(&root, j.cont[k], nranks, &j.failed)
                                         : NULL);
        if (as_json)
            print_json_line(j.docs[k]);
        else
            print_json_pretty(j.docs[k]);
        json_object_put(j.docs[k]);
    }
    if (j.ndocs > 1) {
        char nt[128];
        name_text(nt, sizeof nt, j.name, strlen(j.name), 0);
        fprintf(stderr, PROG ": %zu objects are named %s with time step %d (they differ in user "
                        "id or app name); shown in creation order\n",
                j.ndocs, nt, (int)j.ts);
    }
    if (j.ndocs == 0) {
        j.status = EXIT_FAIL;
        if (j.have_id) {
            errp(root.path, "no object with id %llu in %zu rank%s%s", (unsigned long long)j.id,
                 nread, nread == 1 ? "" : "s", j.failed ? " that could be read" : "");
        } else {
            char nt[128];
            name_text(nt, sizeof nt, j.name, strlen(j.name), 0);
            errp(root.path, "no object named %s with time step %d in %zu rank%s%s", nt, (int)j.ts,
                 nread, nread == 1 ? "" : "s", j.failed ? " that could be read" : "");
        }
    }
    free(j.docs);
    free(j.cont);
    free(j.order);
    root_close(&root);
    if (finish_stdout() != EXIT_OK || j.failed || nfault)
        return EXIT_FAIL; /* a rank that could not be read was reported */
    return j.status;
}

/* ------------------------------------------------------------------ */
/* find                                                                */
/* ------------------------------------------------------------------ */

struct find_ctx {
    struct inspect_root *root;
    struct rank_ent *e;
    ckpt_rtxn *tx;
    const char *tag;
    size_t tlen;
    const char *value;   /* NULL: any value */
    uint64_t hits;
    int bad;
    int failed;
};

/* Does the tag's value equal the text v? Numbers are parsed per the tag's
 * type and compared as numbers; strings compare exactly; arrays and raw
 * bytes never match. */
static int value_matches(const struct ckpt_kvtag *t, const char *v)
{
    const struct bulki_type_info *ti = t->type > 0 ? bulki_type_info((unsigned)t->type) : NULL;
    json_object *j;
    int raw, m = 0;
    if (ti == NULL)
        return 0;
    if (ti->kind == BULKI_KIND_STRING) {
        size_t n = strlen(v);
        return t->size == n + 1 && memcmp(t->value, v, n) == 0 && ((const char *)t->value)[n] == 0;
    }
    if ((j = tag_value_json(t, &raw)) == NULL)
        return 0;
    switch (json_object_get_type(j)) {
    case json_type_boolean: {
        int want = strcmp(v, "true") == 0 || strcmp(v, "1") == 0 ? 1
                   : strcmp(v, "false") == 0 || strcmp(v, "0") == 0 ? 0
                                                                     : -1;
        m = want >= 0 && want == (json_object_get_boolean(j) ? 1 : 0);
        break;
    }
    case json_type_int:
        if (ti->kind == BULKI_KIND_UNSIGNED) {
            uint64_t a;
            m = parse_u64(v, &a) == 0 && a == json_object_get_uint64(j);
        } else {
            int64_t a;
            m = parse_i64(v, &a) == 0 && a == json_object_get_int64(j);
        }
        break;
    case json_type_double: {
        char *end;
        errno = 0;
        double a = strtod(v, &end);
        double b = json_object_get_double(j);
        if (*v != 0 && *end == 0 && errno == 0)
            m = ti->width == 4 ? (float)a == (float)b : a == b;
        break;
    }
    default:
        m = 0; /* arrays; NaN/Infinity are strings here and never equal */
        break;
    }
    json_object_put(j);
    return m;
}

static int find_hit(const ckpt_val *k, const ckpt_val *v, void *p)
{
    struct find_ctx *c = p;
    struct dkey d;
    ckpt_val rec;
    struct ckpt_kvtag t;
    size_t off = 0;
    char kt[256];
    (void)v;
    if (key_decode(&d, CKPT_DB_TAG_INDEX, k->data, k->len) != 0) {
        key_text(kt, sizeof kt, CKPT_DB_TAG_INDEX, k->data, k->len);
        errp(ckpt_store_path(c->e->st), "kvtag_name: %s: malformed key", kt);
        c->bad++;
        return 0;
    }
    uint64_t owner = d.id;
    int rc = ckpt_get_kvtag(&rec, c->tx, owner, c->tag, c->tlen);
    if (rc == CKPT_E_NOTFOUND) {
        /* a long name's hash matched another name's: not this tag. Or the
         * index points nowhere (verify reports that). */
        if (!d.hashed) {
            key_text(kt, sizeof kt, CKPT_DB_TAG_INDEX, k->data, k->len);
            errp(ckpt_store_path(c->e->st), "kvtag_name: %s: no kvtag record for this index entry",
                 kt);
            c->bad++;
        }
        return 0;
    }
    if (rc == CKPT_E_CORRUPT) {
        /* its checksum fails (format 4): reported, never shown */
        err_store(c->root->path, rc);
        c->bad++;
        return 0;
    }
    if (rc != 0)
        return rc;
    if (ckpt_rec_kvtag_decode(&t, rec.data, rec.len, &off) != 0) {
        char err[256];
        uint8_t kk[8 + CKPT_NAMEKEY_MAX];
        ckpt_key_u64(kk, owner);
        memcpy(kk + 8, k->data, d.namekey_len);
        key_text(kt, sizeof kt, CKPT_DB_KVTAG, kk, 8 + d.namekey_len);
        record_error(err, sizeof err, CKPT_DB_KVTAG, rec.data, rec.len);
        errp(ckpt_store_path(c->e->st), "kvtag: %s: %s", kt, err);
        c->bad++;
        return 0;
    }
    if (c->value != NULL && !value_matches(&t, c->value))
        return 0;

    json_object *o = json_object_new_object();
    struct ckpt_obj ob;
    struct ckpt_cont cn;
    json_object_object_add(o, "rank", jnum_i64(c->e->rank));
    json_object_object_add(o, "owner", jnum_u64(owner));
    if (ckpt_get_obj(&rec, c->tx, owner) == 0 &&
        ckpt_rec_obj_decode(&ob, rec.data, rec.len, &off) == 0) {
        json_object_object_add(o, "kind", json_object_new_string("object"));
        json_object_object_add(o, "name", bulki_json_str(ob.obj_name));
        json_object_object_add(o, "time_step", jnum_i64(ob.time_step));
    } else if (ckpt_get_cont(&rec, c->tx, owner) == 0 &&
               ckpt_rec_cont_decode(&cn, rec.data, rec.len, &off) == 0) {
        json_object_object_add(o, "kind", json_object_new_string("container"));
        json_object_object_add(o, "name", bulki_json_str(cn.cont_name));
    } else {
        json_object_object_add(o, "kind", json_object_new_string("unknown"));
        json_object_object_add(o, "name", NULL);
    }
    const char *tn = pdc_type_name(t.type);
    int raw;
    json_object *tv = tag_value_json(&t, &raw);
    json_object_object_add(o, "type", tn ? json_object_new_string(tn) : jnum_i64(t.type));
    json_object_object_add(o, "value", tv);
    emit_json_line(o);
    c->hits++;
    return 0;
}

/* An index entry that no kvtag backs, or out of order (format 4). */
static void find_damaged(int db, const ckpt_val *k, const char *what, void *p)
{
    struct find_ctx *c = p;
    err_key(ckpt_store_path(c->e->st), db, k, what);
    c->bad++;
}

/* Every owner of the tag on one rank, through its tag index. */
static void find_rank(void *p)
{
    struct find_ctx *c = p;
    int rc;
    if (root_open(c->root, c->e, 1) != 0) {
        c->failed = 1;
        return;
    }
    store_msg_clear();
    if ((rc = ckpt_rtxn_begin(&c->tx, c->e->st)) != 0) {
        err_store(c->root->path, rc);
        c->failed = 1;
        return;
    }
    ckpt_rtxn_on_damage(c->tx, find_damaged, c);
    rc = ckpt_iter_tagged(c->tx, c->tag, c->tlen, find_hit, c);
    ckpt_rtxn_end(c->tx);
    if (rc < 0) {
        err_store(c->root->path, rc);
        c->failed = 1;
    }
}

int cmd_find(int argc, char **argv)
{
    static const struct option lo[] = {{"tag", required_argument, 0, 't'},
                                       {"value", required_argument, 0, 'v'},
                                       HELP_OPT, {0, 0, 0, 0}};
    struct inspect_root root;
    const char *tag = NULL, *value = NULL;
    int c, status = EXIT_OK;

    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'h':
            return cmd_help();
        case 't':
            tag = optarg;
            break;
        case 'v':
            value = optarg;
            break;
        default:
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if ((c = check_operands(argc, argv, 1, 0, "ROOT")) != EXIT_OK)
        return c;
    if (tag == NULL)
        return usage_err("find", "--tag NAME missing");
    if (strlen(tag) > CKPT_NAME_MAX) {
        fprintf(stderr, PROG ": --tag: longer than %u bytes\n", CKPT_NAME_MAX);
        return EXIT_USAGE;
    }
    if (root_scan(&root, argv[optind], 0) != 0)
        return EXIT_FAIL;
    for (size_t i = 0; i < root.n; i++) {
        struct find_ctx ctx = {&root, &root.ranks[i], NULL, tag, strlen(tag), value, 0, 0, 0};
        int sig;
        if ((sig = guard_run(find_rank, &ctx)) != 0) {
            rank_fault(&root, &root.ranks[i], sig);
            ctx.failed = 1;
        }
        root_release(&root, &root.ranks[i]);
        if (ctx.failed || ctx.bad)
            status = EXIT_FAIL;
    }
    root_close(&root);
    if (finish_stdout() != EXIT_OK)
        return EXIT_FAIL;
    return status;
}
