/*
 * dump.c - ckpt-inspect dump ROOT [--rank R] [--db NAME] [--prefix KEY]
 * [--raw]: every record as one JSON line,
 *   {"rank":R,"db":"obj","key":{...},"value":{...}}
 * keys decoded (ids as numbers, names as strings), values in the friendly
 * form of their record kind (or, with --raw, BULKI's JSON form).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "bulki_json.h"
#include "inspect.h"

struct dump_ctx {
    const char *path; /* ROOT/rank-<r> */
    int rank;
    int db;
    int raw;
    uint64_t lines;
    uint64_t bad;   /* records that did not decode */
};

static int is_bulki_db(int db)
{
    return db == CKPT_DB_META || db == CKPT_DB_OBJ || db == CKPT_DB_KVTAG || db == CKPT_DB_CONT ||
           db == CKPT_DB_REGION;
}

/* The value of an entry; sets *err (and returns NULL or a partial form)
 * when it does not decode. */
static json_object *value_json(const struct dump_ctx *c, const ckpt_val *k, const ckpt_val *v,
                               char *err, size_t errn)
{
    err[0] = 0;
    if (is_bulki_db(c->db)) {
        if (c->raw) {
            bulki_map m;
            size_t off = 0;
            json_object *j = NULL;
            if (bulki_decode_doc(&m, v->data, v->len, &off) != 0 || bulki_json_from_doc(&j, &m) != 0) {
                record_error(err, errn, c->db, v->data, v->len);
                return NULL;
            }
            return j;
        }
        return record_json(c->db, k->data, k->len, v->data, v->len, err, errn);
    }
    switch (c->db) {
    case CKPT_DB_OBJ_NAME:
    case CKPT_DB_CONT_NAME: {
        json_object *o;
        if (v->len != 8) {
            snprintf(err, errn, "index value of %zu bytes, not an 8-byte id", v->len);
            return NULL;
        }
        o = json_object_new_object();
        json_object_object_add(o, "id", jnum_u64(ckpt_key_get_u64(v->data)));
        return o;
    }
    case CKPT_DB_ID_HOME: {
        uint32_t home;
        json_object *o;
        if (id_home_decode(v->data, v->len, &home) != 0) {
            snprintf(err, errn, "id_home value of %zu bytes, not a 4-byte rank", v->len);
            return NULL;
        }
        o = json_object_new_object();
        json_object_object_add(o, "home", jnum_u64(home));
        return o;
    }
    case CKPT_DB_OBJ_KEYS:
    case CKPT_DB_CONT_KEYS: {
        struct ckpt_rec_keys rk;
        json_object *o;
        if (ckpt_keys_decode(&rk, c->db, v->data, v->len) != 0) {
            snprintf(err, errn, "keys value of %zu bytes, too short", v->len);
            return NULL;
        }
        o = json_object_new_object();
        json_object_object_add(o, "name", bulki_json_bytes(rk.name, rk.nlen));
        if (c->db == CKPT_DB_OBJ_KEYS) {
            json_object_object_add(o, "time_step", jnum_i64(rk.ts));
            json_object_object_add(o, "cont_id", jnum_u64(rk.cont_id));
        }
        return o;
    }
    case CKPT_DB_TAG_INDEX:
    case CKPT_DB_CONT_OBJ: /* the key is the entry */
        if (v->len != 0)
            snprintf(err, errn, "index value of %zu bytes, expected none", v->len);
        return NULL;
    case CKPT_DB_PDC_SERVER: {
        size_t off = 0;
        if (k->len > 0 && ((const uint8_t *)k->data)[0] == CKPT_PDC_SAME_NAME) {
            if (v->len != 0)
                snprintf(err, errn, "same-name value of %zu bytes, expected none", v->len);
            return NULL; /* the key is the entry */
        }
        if (k->len > 0 && (((const uint8_t *)k->data)[0] == CKPT_PDC_ALIAS_OBJ ||
                           ((const uint8_t *)k->data)[0] == CKPT_PDC_ALIAS_CONT)) {
            /* a name alias: the object's or container's record */
            int db = ((const uint8_t *)k->data)[0] == CKPT_PDC_ALIAS_OBJ ? CKPT_DB_OBJ : CKPT_DB_CONT;
            uint8_t idk[8];
            memcpy(idk, (const uint8_t *)k->data + k->len - 8, 8);
            return record_json(db, idk, 8, v->data, v->len, err, errn);
        }
        if (k->len > 0 && ((const uint8_t *)k->data)[0] == CKPT_PDC_DART) {
            struct ckpt_dart_entry e;
            if (ckpt_rec_dart_decode(&e, v->data, v->len, &off) == 0) {
                json_object *o = json_object_new_object();
                json_object_object_add(o, "key", json_object_new_string(e.key));
                json_object_object_add(o, "value", hex_json(e.value, e.value_len));
                json_object_object_add(o, "type", json_object_new_int(e.type));
                json_object_object_add(o, "obj_ref", json_object_new_uint64(e.obj_ref));
                json_object_object_add(o, "vnode", json_object_new_int64(e.vnode_id));
                json_object_object_add(o, "suffix", json_object_new_boolean(e.is_suffix));
                return o;
            }
        } else if (k->len > 0 && ((const uint8_t *)k->data)[0] == CKPT_PDC_XFER_REGION) {
            struct ckpt_xfer_region x;
            if (ckpt_rec_xfer_decode(&x, v->data, v->len, &off) == 0)
                return xfer_json(&x);
        } else {
            struct ckpt_region g;
            if (ckpt_rec_region_decode(&g, v->data, v->len, &off) == 0)
                return region_json(&g);
        }
        snprintf(err, errn, "record of %zu bytes does not decode (byte %zu)", v->len, off);
        return hex_json(v->data, v->len);
    }
    default: { /* a database this build does not know */
        json_object *o = json_object_new_object();
        json_object_object_add(o, "hex", hex_json(v->data, v->len));
        return o;
    }
    }
}

static int dump_entry(const ckpt_val *k, const ckpt_val *v, void *p)
{
    struct dump_ctx *c = p;
    char err[256];
    json_object *o = json_object_new_object();
    json_object *val = value_json(c, k, v, err, sizeof err);
    struct dkey d;
    json_object_object_add(o, "rank", jnum_i64(c->rank));
    json_object_object_add(o, "db", json_object_new_string(ckpt_db_name(c->db)));
    json_object_object_add(o, "key", key_json(c->db, k->data, k->len));
    json_object_object_add(o, "value", val);
    if (key_decode(&d, c->db, k->data, k->len) == -1 && err[0] == 0)
        snprintf(err, sizeof err, "malformed %s key", ckpt_db_name(c->db));
    if (err[0]) {
        json_object_object_add(o, "error", bulki_json_str(err));
        err_key(c->path, c->db, k, err);
        c->bad++;
    }
    emit_json_line(o);
    c->lines++;
    return 0;
}

/* A record whose checksum fails (format 4): a line with its key, no value
 * and what is wrong, reported on stderr too; the dump goes on. */
static void dump_damaged(int db, const ckpt_val *k, const char *what, void *p)
{
    struct dump_ctx *c = p;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "rank", jnum_i64(c->rank));
    json_object_object_add(o, "db", json_object_new_string(ckpt_db_name(db)));
    json_object_object_add(o, "key", key_json(db, k->data, k->len));
    json_object_object_add(o, "value", NULL);
    json_object_object_add(o, "error", bulki_json_str(what));
    err_key(c->path, db, k, what);
    c->bad++;
    emit_json_line(o);
    c->lines++;
}

/* The key prefix --prefix KEY means for db: an id (8 bytes) for the
 * databases keyed by an id first, a name key for the name indexes (the
 * whole name; "NAME*" for names starting with NAME). */
static int prefix_key(uint8_t *out, size_t *plen, int db, const char *key)
{
    uint64_t id;
    size_t n = strlen(key);
    switch (db) {
    case CKPT_DB_OBJ:
    case CKPT_DB_CONT:
    case CKPT_DB_KVTAG:
    case CKPT_DB_REGION:
    case CKPT_DB_CONT_OBJ:
    case CKPT_DB_ID_HOME:
    case CKPT_DB_OBJ_KEYS:
    case CKPT_DB_CONT_KEYS:
        if (parse_u64(key, &id) != 0) {
            fprintf(stderr, PROG ": --prefix: \"%s\" is not an id (database %s is keyed by ids)\n",
                    key, ckpt_db_name(db));
            return -1;
        }
        ckpt_key_u64(out, id);
        *plen = 8;
        return 0;
    case CKPT_DB_OBJ_NAME:
    case CKPT_DB_CONT_NAME:
    case CKPT_DB_TAG_INDEX:
    case CKPT_DB_META:
        if (db != CKPT_DB_META && n > 0 && key[n - 1] == '*') {
            n--;
            if (n > CKPT_NAME_INLINE_MAX)
                n = CKPT_NAME_INLINE_MAX; /* the stored part of a long name */
            memcpy(out, key, n);
            *plen = n;
            return n > 0 ? 0 : 1; /* "*": everything */
        }
        if (db == CKPT_DB_META) {
            if (n == 0 || n > 511)
                return -1;
            memcpy(out, key, n);
            *plen = n;
            return 0;
        }
        if ((*plen = ckpt_key_name(out, key, n)) == 0) {
            fprintf(stderr, PROG ": --prefix: name of %zu bytes is longer than %u\n", n,
                    CKPT_NAME_MAX);
            return -1;
        }
        return 0;
    case CKPT_DB_PDC_SERVER: /* d (data regions), x (transfer regions), optionally :ID; n (same-name); i (DART) */
        if ((key[0] == CKPT_PDC_SAME_NAME || key[0] == CKPT_PDC_DART || key[0] == CKPT_PDC_ALIAS_OBJ ||
             key[0] == CKPT_PDC_ALIAS_CONT) &&
            key[1] == 0) {
            out[0] = (uint8_t)key[0];
            *plen = 1;
            return 0;
        }
        if ((key[0] != CKPT_PDC_DATA_REGION && key[0] != CKPT_PDC_XFER_REGION) ||
            (key[1] != 0 && (key[1] != ':' || parse_u64(key + 2, &id) != 0))) {
            fprintf(stderr, PROG ": --prefix: database pdc_server takes d, x, n, i, a, c, d:ID or x:ID\n");
            return -1;
        }
        out[0] = (uint8_t)key[0];
        *plen = 1;
        if (key[1] != 0) {
            ckpt_key_u64(out + 1, id);
            *plen = 9;
        }
        return 0;
    default:
        fprintf(stderr, PROG ": --prefix: not supported for database %s\n", ckpt_db_name(db));
        return -1;
    }
}

struct dump_job {
    struct inspect_root *root;
    struct rank_ent *e;
    int want_db, raw;
    const uint8_t *pkey;
    size_t plen;
    uint64_t bad;
    int failed;
};

/* Every wanted database of one rank, in one read transaction. */
static void dump_rank(void *p)
{
    struct dump_job *j = p;
    struct rank_ent *e = j->e;
    ckpt_rtxn *tx;
    int rc;
    if (root_open(j->root, e, 1) != 0) {
        j->failed = 1;
        return;
    }
    store_msg_clear();
    if ((rc = ckpt_rtxn_begin(&tx, e->st)) != 0) {
        err_store(j->root->path, rc);
        j->failed = 1;
        return;
    }
    for (int db = 0; db < CKPT_DB_COUNT; db++) {
        struct dump_ctx ctx = {ckpt_store_path(e->st), e->rank, db, j->raw, 0, 0};
        if (j->want_db >= 0 && db != j->want_db)
            continue;
        ckpt_rtxn_on_damage(tx, dump_damaged, &ctx);
        rc = ckpt_iter(tx, db, j->plen ? j->pkey : NULL, j->plen, dump_entry, &ctx);
        j->bad += ctx.bad;
        if (rc < 0) {
            err_store(j->root->path, rc);
            j->failed = 1;
            break;
        }
    }
    ckpt_rtxn_end(tx);
}

int cmd_dump(int argc, char **argv)
{
    static const struct option lo[] = {{"rank", required_argument, 0, 'r'},
                                       {"db", required_argument, 0, 'd'},
                                       {"prefix", required_argument, 0, 'p'},
                                       {"raw", no_argument, 0, 'R'},
                                       HELP_OPT, {0, 0, 0, 0}};
    struct inspect_root root;
    const char *prefix = NULL;
    uint8_t pkey[CKPT_NAMEKEY_MAX + 64];
    size_t plen = 0;
    int32_t want_rank = -1;
    int want_db = -1, raw = 0, status = EXIT_OK, c;
    uint64_t bad = 0;

    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'h':
            return cmd_help();
        case 'r':
            if (parse_i32(optarg, &want_rank) != 0 || want_rank < 0) {
                fprintf(stderr, PROG ": --rank: not a rank: \"%s\"\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'd':
            if ((want_db = ckpt_db_by_name(optarg)) < 0) {
                fprintf(stderr, PROG ": --db: unknown database \"%s\"\n", optarg);
                usage(stderr);
                return EXIT_USAGE;
            }
            break;
        case 'p':
            prefix = optarg;
            break;
        case 'R':
            raw = 1;
            break;
        default:
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if ((c = check_operands(argc, argv, 1, 0, "ROOT")) != EXIT_OK)
        return c;
    if (prefix != NULL) {
        int r;
        if (want_db < 0) {
            fprintf(stderr, PROG ": --prefix needs --db: a key means something else in every "
                    "database\n");
            return EXIT_USAGE;
        }
        if ((r = prefix_key(pkey, &plen, want_db, prefix)) < 0)
            return EXIT_USAGE;
        if (r > 0)
            plen = 0;
    }
    if (root_scan(&root, argv[optind], 0) != 0)
        return EXIT_FAIL;
    if (want_rank >= 0 && root_find(&root, want_rank) == NULL) {
        char p[64];
        snprintf(p, sizeof p, "rank-%d", (int)want_rank);
        errp(root.path, "no rank %d here (%s missing)", (int)want_rank, p);
        root_close(&root);
        return EXIT_FAIL;
    }
    for (size_t i = 0; i < root.n; i++) {
        struct dump_job job = {&root, &root.ranks[i], want_db, raw, pkey, plen, 0, 0};
        int sig;
        if (want_rank >= 0 && root.ranks[i].rank != want_rank)
            continue;
        fflush(stdout); /* what was read before a fault stays printed */
        if ((sig = guard_run(dump_rank, &job)) != 0) {
            rank_fault(&root, &root.ranks[i], sig);
            job.failed = 1;
        }
        root_release(&root, &root.ranks[i]);
        bad += job.bad;
        if (job.failed)
            status = EXIT_FAIL;
    }
    root_close(&root);
    if (bad > 0) {
        errp(root.path, "%llu record%s did not decode", (unsigned long long)bad,
             bad == 1 ? "" : "s");
        status = EXIT_FAIL;
    }
    if (finish_stdout() != EXIT_OK)
        return EXIT_FAIL;
    return status;
}
