/*
 * stat.c - ckpt-inspect stat ROOT [--json]: what each rank's meta record
 * says (format version, rank, generation, clean close, last commit), the
 * entries and bytes of every database, map size and use; and the totals.
 */
#include <getopt.h>
#include <string.h>

#include "inspect.h"

struct dbstat {
    uint64_t entries, bytes;
};

static void human(char *buf, size_t n, uint64_t v)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double d = (double)v;
    int u = 0;
    while (d >= 1024 && u < 4) {
        d /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%llu B", (unsigned long long)v);
    else
        snprintf(buf, n, "%.1f %s", d, units[u]);
}

static json_object *dbs_json(const struct dbstat *s)
{
    json_object *o = json_object_new_object();
    for (int db = 0; db < CKPT_DB_COUNT; db++) {
        json_object *d = json_object_new_object();
        json_object_object_add(d, "entries", jnum_u64(s[db].entries));
        json_object_object_add(d, "bytes", jnum_u64(s[db].bytes));
        json_object_object_add(o, ckpt_db_name(db), d);
    }
    return o;
}

static void dbs_text(const struct dbstat *s)
{
    printf("  %-12s %12s %14s\n", "database", "entries", "bytes");
    for (int db = 0; db < CKPT_DB_COUNT; db++)
        printf("  %-12s %12llu %14llu\n", ckpt_db_name(db), (unsigned long long)s[db].entries,
               (unsigned long long)s[db].bytes);
}

/* Meta and database statistics of one open rank. */
static int rank_stat(struct inspect_root *r, struct rank_ent *e, struct ckpt_store_info *info,
                     struct dbstat *s)
{
    ckpt_rtxn *tx;
    int rc;
    store_msg_clear();
    if ((rc = ckpt_store_info(info, e->st)) != 0 || (rc = ckpt_rtxn_begin(&tx, e->st)) != 0) {
        err_store(r->path, rc);
        return rc;
    }
    for (int db = 0; db < CKPT_DB_COUNT && rc == 0; db++)
        rc = ckpt_db_stat(&s[db].entries, &s[db].bytes, tx, db);
    ckpt_rtxn_end(tx);
    if (rc)
        err_store(r->path, rc);
    return rc;
}

struct stat_job {
    struct inspect_root *root;
    struct rank_ent *e;
    struct ckpt_store_info info;
    struct dbstat s[CKPT_DB_COUNT];
    int rc;
};

static void stat_one(void *p)
{
    struct stat_job *j = p;
    if ((j->rc = root_open(j->root, j->e, 1)) == 0)
        j->rc = rank_stat(j->root, j->e, &j->info, j->s);
}

int cmd_stat(int argc, char **argv)
{
    struct inspect_root root;
    struct dbstat total[CKPT_DB_COUNT];
    uint64_t map_size = 0, map_used = 0;
    size_t nok = 0;
    int as_json = 0, status = EXIT_OK, c, nranks = -1;
    json_object *jr = NULL, *jranks = NULL;

    if ((c = parse_root_json(argc, argv, &as_json)) >= 0)
        return c;
    if (root_scan(&root, argv[optind], 0) != 0)
        return EXIT_FAIL;
    memset(total, 0, sizeof total);
    if (as_json) {
        jr = json_object_new_object();
        jranks = json_object_new_array();
        json_object_object_add(jr, "root", bulki_json_str(root.path));
        json_object_object_add(jr, "ranks", jranks);
    }
    for (size_t i = 0; i < root.n; i++) {
        struct rank_ent *e = &root.ranks[i];
        struct stat_job job;
        char dir[32], created[40], last[40], hs[32], hu[32];
        int sig;
        snprintf(dir, sizeof dir, "rank-%d", e->rank);
        memset(&job, 0, sizeof job);
        job.root = &root;
        job.e = e;
        if ((sig = guard_run(stat_one, &job)) != 0) {
            rank_fault(&root, e, sig);
            job.rc = CKPT_E_CORRUPT;
        }
        root_release(&root, e);
        const struct ckpt_store_info info = job.info;
        const struct dbstat *s = job.s;
        /* the store's rank count: the meta of its first readable rank
         * (ranks come in order: rank 0 when it reads) */
        if (job.rc == 0 && nranks < 0)
            nranks = info.nranks;
        int stray = nranks > 0 && e->rank >= nranks;
        if (job.rc != 0) {
            status = EXIT_FAIL;
            if (jranks) {
                json_object *o = json_object_new_object();
                json_object_object_add(o, "dir", json_object_new_string(dir));
                json_object_object_add(o, "error",
                                       bulki_json_str(e->open_err ? e->open_err : store_msg(job.rc)));
                json_object_array_add(jranks, o);
            }
            continue;
        }
        for (int db = 0; !stray && db < CKPT_DB_COUNT; db++) {
            total[db].entries += s[db].entries;
            total[db].bytes += s[db].bytes;
        }
        if (!stray) { /* a stray rank is shown, not counted */
            nok++;
            map_size += info.map_size;
            map_used += info.map_used;
        }
        iso8601_ms(created, sizeof created, info.created_ms);
        iso8601_ms(last, sizeof last, info.last_commit_ms);
        if (jranks) {
            json_object *o = json_object_new_object();
            json_object_object_add(o, "dir", json_object_new_string(dir));
            json_object_object_add(o, "format_version", jnum_u64(info.format_version));
            json_object_object_add(o, "checksums",
                                   json_object_new_boolean(info.format_version >= 4));
            json_object_object_add(o, "rank", jnum_i64(info.rank));
            json_object_object_add(o, "nranks", jnum_i64(info.nranks));
            json_object_object_add(o, "origin_nranks", jnum_i64(info.origin_nranks));
            if (stray)
                json_object_object_add(o, "stray", json_object_new_boolean(1));
            json_object_object_add(o, "generation", jnum_u64(info.generation));
            json_object_object_add(o, "clean", json_object_new_boolean(info.clean));
            json_object_object_add(o, "created", json_object_new_string(created));
            json_object_object_add(o, "last_commit", json_object_new_string(last));
            json_object_object_add(o, "last_commit_ms", jnum_i64(info.last_commit_ms));
            json_object_object_add(o, "id_seq", jnum_u64(info.id_seq));
            json_object_object_add(o, "mutations", jnum_u64(info.mutations));
            json_object_object_add(o, "commits", jnum_u64(info.commits));
            json_object_object_add(o, "map_size", jnum_u64(info.map_size));
            json_object_object_add(o, "map_used", jnum_u64(info.map_used));
            json_object_object_add(o, "tagidx_pending", jnum_u64(info.tagidx_pending));
            json_object_object_add(o, "databases", dbs_json(s));
            json_object_array_add(jranks, o);
        } else {
            human(hs, sizeof hs, info.map_size);
            human(hu, sizeof hu, info.map_used);
            char origin[48] = "";
            if (info.origin_nranks != info.nranks)
                snprintf(origin, sizeof origin, " (written on %d)", (int)info.origin_nranks);
            printf("%s: format %u (%s), rank %d of %d%s, generation %llu, %s, last commit %s%s\n",
                   dir, info.format_version,
                   info.format_version >= 4 ? "checksummed" : "no checksums", (int)info.rank, (int)info.nranks, origin,
                   (unsigned long long)info.generation,
                   info.clean ? "closed cleanly" : "open or not closed cleanly", last,
                   stray ? "\n  stray: beyond the store's ranks, not counted in the total" : "");
            printf("  map %s, %s used; %llu mutations in %llu commits; next id seq %llu\n", hs, hu,
                   (unsigned long long)info.mutations, (unsigned long long)info.commits,
                   (unsigned long long)info.id_seq);
            if (info.tagidx_pending > 0)
                printf("  tag index: %llu recent entries not merged yet (read through the delta)\n",
                       (unsigned long long)info.tagidx_pending);
            dbs_text(s);
        }
    }
    int rehome = root_rehome_state(root.path);
    if (jr) {
        json_object *t = json_object_new_object();
        json_object_object_add(jr, "rehome_pending", json_object_new_boolean(rehome != 0));
        json_object_object_add(t, "ranks", jnum_u64(nok));
        json_object_object_add(t, "map_size", jnum_u64(map_size));
        json_object_object_add(t, "map_used", jnum_u64(map_used));
        json_object_object_add(t, "databases", dbs_json(total));
        json_object_object_add(jr, "total", t);
        if (rehome == 0)
            root_strays(&root, nranks, jr);
        print_json_pretty(jr);
        json_object_put(jr);
    } else {
        char hs[32], hu[32];
        human(hs, sizeof hs, map_size);
        human(hu, sizeof hu, map_used);
        printf("total: %zu rank%s, map %s, %s used\n", nok, nok == 1 ? "" : "s", hs, hu);
        dbs_text(total);
        if (rehome == 0)
            root_strays(&root, nranks, NULL);
        if (rehome)
            printf("note: %s/.rehome exists: a re-homing to another rank count did not finish; "
                   "the next restart finishes or undoes it\n", root.path);
    }
    root_close(&root);
    if (finish_stdout() != EXIT_OK)
        return EXIT_FAIL;
    return status;
}
