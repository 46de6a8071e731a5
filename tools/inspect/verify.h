/*
 * verify.h - what ckpt-inspect verify's passes (verify.c) and its
 * per-database checks (verify_checks.c) share: the state of a run and of
 * each rank, and the problem reports.
 */
#ifndef PDC_CKPT_INSPECT_VERIFY_H
#define PDC_CKPT_INSPECT_VERIFY_H

#include "inspect.h"

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

/* One database of a rank being checked: the ckpt_iter payload of the
 * checks. */
struct vctx {
    struct verify *v;
    struct vrank *r;
    int db;
};

/* A problem of a rank (rank < 0: of the root): a line, or with --json an
 * object of the array. */
void problem(struct verify *v, int rank, const char *where, const char *fmt, ...)
    INSPECT_PRINTF(4, 5);
/* A problem with one entry: "rank R: DB: KEY: message". */
void kproblem(struct verify *v, struct vrank *r, int db, const ckpt_val *k, const char *fmt, ...)
    INSPECT_PRINTF(5, 6);
int has_id(const struct ids *s, uint64_t id);
struct vrank *vrank_of(struct verify *v, int rank);
/* A cross-rank reference pass 3 looks up again. */
void pend_add(struct verify *v, struct vrank *r, int db, const ckpt_val *k, uint64_t id, int home);

/* verify_checks.c: pass 2's check of each database (NULL: a database
 * this build does not check), and the report of a damaged record */
extern const ckpt_iter_cb verify_checks[CKPT_DB_COUNT];
void report_damage(int db, const ckpt_val *key, const char *what, void *arg);

#endif
