/*
 * copy.c - ckpt-inspect copy ROOT DEST [--compact]: a consistent copy of
 * every rank of a (possibly live) store with the store's copy,
 * ckpt_store_copy, on a store opened read-only. Each rank is copied as of
 * one commit: with LMDB's plain copy (mdb_env_copyfd2), or with --compact
 * by rebuilding every database entry by entry through the store's guarded
 * reads, so free pages are left out and a damaged page is an error, never
 * a crash (LMDB's own MDB_CP_COMPACT is not defended against one).
 *
 * LMDB's plain (non-compact) copy holds the environment's writer mutex
 * while it copies the two meta pages (a few KiB), so that its snapshot is
 * consistent: a server committing at that moment waits that long. The
 * compacting copy uses only a read transaction.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_fs.h"
#include "inspect.h"
#include "progress.h"

/* 1 (and the entry in what) if dir holds a store: a rank-* entry or a
 * data.mdb; 0 if not; -1 if it cannot be read. */
static int holds_store(const char *dir, char *what, size_t n)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int found = 0;
    if (d == NULL)
        return -1;
    while (!found && (de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "rank-", 5) == 0 || strcmp(de->d_name, "data.mdb") == 0) {
            snprintf(what, n, "%s/%s", dir, de->d_name);
            found = 1;
        }
    }
    closedir(d);
    return found;
}


/* path with symlinks and "..", resolved as far as it exists (the rest
 * appended as given): where a copy to it would really go. */
static int resolve(const char *path, char *out, size_t n)
{
    char buf[PATH_MAX], parent[PATH_MAX];
    if (realpath(path, out) != NULL)
        return 0;
    if (errno != ENOENT || snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return -1;
    size_t len = strlen(buf);
    while (len > 1 && buf[len - 1] == '/')
        buf[--len] = 0;
    char *slash = strrchr(buf, '/');
    const char *last = slash ? slash + 1 : buf;
    if (slash == buf)
        snprintf(parent, sizeof parent, "/");
    else if (slash)
        snprintf(parent, sizeof parent, "%.*s", (int)(slash - buf), buf);
    else
        snprintf(parent, sizeof parent, ".");
    if (resolve(parent, out, n) != 0)
        return -1;
    size_t ol = strlen(out);
    return snprintf(out + ol, n - ol, "%s%s", ol > 0 && out[ol - 1] == '/' ? "" : "/", last) >=
                   (int)(n - ol) ? -1 : 0;
}

/* 1 if path a is b or inside b. */
static int within(const char *a, const char *b)
{
    size_t n = strlen(b);
    if (n == 1 && b[0] == '/')
        return 1;
    return strncmp(a, b, n) == 0 && (a[n] == 0 || a[n] == '/');
}

static int count_entry(const ckpt_val *k, const ckpt_val *v, void *p)
{
    (void)k;
    (void)v;
    (*(uint64_t *)p)++;
    return 0;
}

/* LMDB's plain copy copies pages without reading records: read every
 * record of the copy (dst = DEST/rank-R), so that a record whose checksum
 * fails is found here, as the compacting copy finds it while copying. */
static int check_copy(const char *dst, int rank)
{
    char root[PATH_MAX];
    ckpt_store *cs;
    ckpt_rtxn *tx;
    uint64_t n = 0;
    int rc;
    snprintf(root, sizeof root, "%s", dst);
    char *slash = strrchr(root, '/');
    if (slash == NULL)
        return 0;
    *slash = 0;
    if ((rc = ckpt_store_open_readonly(&cs, root[0] ? root : "/", rank)) != 0)
        return rc;
    if ((rc = ckpt_rtxn_begin(&tx, cs)) == 0) {
        for (int db = 0; rc == 0 && db < CKPT_DB_COUNT; db++)
            rc = ckpt_iter(tx, db, NULL, 0, count_entry, &n);
        ckpt_rtxn_end(tx);
    }
    ckpt_store_close(cs);
    return rc < 0 ? rc : 0;
}

/* Copy rank e into the directory dst (created here; it must not exist)
 * with the store's copy, ckpt_store_copy: LMDB's plain copy, or with
 * compact every database rebuilt entry by entry through the store's
 * guarded reads. A failed copy removes dst. 0 or the store's error. */
/* Its format version, when older than this build's (0: current). */
static unsigned older_format(ckpt_store *st)
{
    struct ckpt_store_info info;
    if (ckpt_store_info(&info, st) != 0 || info.format_version >= CKPT_FORMAT_VERSION)
        return 0;
    return info.format_version;
}

static int copy_rank(struct inspect_root *r, struct rank_ent *e, const char *dst, int compact,
                     char *what, size_t wn)
{
    char data[PATH_MAX + 16];
    int rc;
    snprintf(what, wn, "open");
    if ((rc = root_open(r, e, 0)) != 0)
        return rc;
    snprintf(what, wn, compact ? "compacting copy" : "copy");
    /* a store of an older format is copied entry by entry, which writes
     * the current one (ckpt_store_copy) */
    int plain = !compact && !older_format(e->st);
    if ((rc = ckpt_store_copy(e->st, dst, !plain)) != 0)
        return rc;
    snprintf(what, wn, "checking the copy's checksums");
    if (plain && (rc = check_copy(dst, e->rank)) != 0) {
        ckpt_fs_rmtree(dst);
        return rc;
    }
    snprintf(data, sizeof data, "%s/data.mdb", dst);
    snprintf(what, wn, "fsync");
    if ((rc = ckpt_fs_fsync(data)) == 0)
        rc = ckpt_fs_fsync(dst);
    if (rc != 0) {
        ckpt_error(CKPT_E_IO, "%s: fsync: %s", dst, strerror(rc));
        ckpt_fs_rmtree(dst);
        return CKPT_E_IO;
    }
    return 0;
}

struct copy_job {
    struct inspect_root *root;
    struct rank_ent *e;
    const char *src, *dst;
    int compact;
    char what[64];
    int rc;
    unsigned converted; /* the source's older format, written in the current one */
};

static void validate_one(void *p)
{
    struct copy_job *j = p;
    j->rc = root_open(j->root, j->e, 1);
}

static void copy_one(void *p)
{
    struct copy_job *j = p;
    j->rc = copy_rank(j->root, j->e, j->dst, j->compact, j->what, sizeof j->what);
    j->converted = j->rc == 0 && j->e->st != NULL ? older_format(j->e->st) : 0;
}

/* Remove a rank this copy wrote: its data.mdb and what opening it to
 * check it left (LMDB's lock.mdb), then the directory. */
static void remove_copy(const char *dst)
{
    static const char *const files[] = {"data.mdb", "lock.mdb"};
    char path[PATH_MAX + 16];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dst, files[i]);
        unlink(path);
    }
    rmdir(dst);
}

int cmd_copy(int argc, char **argv)
{
    static const struct option lo[] = {{"compact", no_argument, 0, 'c'}, HELP_OPT, {0, 0, 0, 0}};
    struct inspect_root root;
    const char *dest;
    char what[PATH_MAX + 16];
    struct stat sb;
    int compact = 0, c, created_dest = 0, rc;
    size_t done = 0;

    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        if (c == 'h')
            return cmd_help();
        if (c != 'c') {
            usage(stderr);
            return EXIT_USAGE;
        }
        compact = 1;
    }
    if ((c = check_operands(argc, argv, 2, 0, "ROOT DEST")) != EXIT_OK)
        return c;
    dest = argv[optind + 1];
    {
        /* a copy inside its source plants ranks in the store it copies (and
         * a source inside the destination is about to be copied into) */
        char rs[PATH_MAX], rd[PATH_MAX];
        if (resolve(argv[optind], rs, sizeof rs) != 0) {
            errp(argv[optind], "%s", strerror(errno ? errno : ENAMETOOLONG));
            return EXIT_FAIL;
        }
        if (resolve(dest, rd, sizeof rd) != 0) {
            errp(dest, "cannot resolve the path: %s", strerror(errno ? errno : ENAMETOOLONG));
            return EXIT_FAIL;
        }
        if (within(rd, rs) || within(rs, rd)) {
            if (within(rd, rs))
                errp(dest, "inside the store it would copy (%s is in %s); copy to a directory "
                     "outside the store; nothing was copied", rd, rs);
            else
                errp(dest, "holds the store it would copy (%s is in %s); copy to a directory "
                     "outside the store; nothing was copied", rs, rd);
            return EXIT_FAIL;
        }
    }
    if (root_scan(&root, argv[optind], 0) != 0)
        return EXIT_FAIL;
    if (root_rehome_state(root.path) != 0) {
        /* ROOT may hold old and new ranks side by side until the next
         * restart finishes or undoes the re-homing */
        errp(root.path, "a re-homing to another rank count did not finish (%s/.rehome exists); "
             "restart the store once, then copy", root.path);
        root_close(&root);
        return EXIT_FAIL;
    }
    struct ckpt_progress pr;
    /* every rank must be a store we can read before anything is written */
    ckpt_progress_begin(&pr, "copy: checking", "ranks", root.n);
    for (size_t i = 0; i < root.n; i++) {
        ckpt_progress_update(&pr, i);
        struct copy_job job = {&root, &root.ranks[i], NULL, NULL, 0, "", 0, 0};
        int sig = guard_run(validate_one, &job);
        if (sig != 0)
            rank_fault(&root, &root.ranks[i], sig);
        if (sig != 0 || job.rc != 0) {
            ckpt_progress_end(&pr);
            root_close(&root);
            return EXIT_FAIL;
        }
        root_release(&root, &root.ranks[i]);
    }
    ckpt_progress_end(&pr);
    root_close(&root);
    if (root_scan(&root, argv[optind], 0) != 0)
        return EXIT_FAIL;

    if (stat(dest, &sb) == 0) {
        if (!S_ISDIR(sb.st_mode)) {
            errp(dest, "exists and is not a directory");
            goto fail_early;
        }
        rc = holds_store(dest, what, sizeof what);
        if (rc < 0) {
            errp(dest, "%s", strerror(errno));
            goto fail_early;
        }
        if (rc > 0) {
            errp(dest, "already holds a store (%s); refusing to copy over it", what);
            goto fail_early;
        }
    } else if (errno == ENOENT) {
        if ((rc = ckpt_fs_mkdirs(dest)) != 0) {
            errp(dest, "cannot create the directory: %s", strerror(rc));
            goto fail_early;
        }
        created_dest = 1;
    } else {
        errp(dest, "%s", strerror(errno));
        goto fail_early;
    }

    ckpt_progress_begin(&pr, "copy", "ranks", root.n);
    for (; done < root.n; done++) {
        int rank = root.ranks[done].rank;
        char src[PATH_MAX], dst[PATH_MAX], data[PATH_MAX + 16];
        if (snprintf(src, sizeof src, "%s/rank-%d", root.path, rank) >= (int)sizeof src ||
            snprintf(dst, sizeof dst, "%s/rank-%d", dest, rank) >= (int)sizeof dst) {
            errp(dest, "path too long");
            goto fail;
        }
        struct copy_job job = {&root, &root.ranks[done], src, dst, compact, "", 0, 0};
        int sig = guard_run(copy_one, &job);
        if (sig != 0) {
            rank_fault(&root, &root.ranks[done], sig);
            remove_copy(dst);
            goto fail;
        }
        if (job.rc != 0) {
            const char *m = store_msg(job.rc);
            if (strstr(m, "rank-") != NULL)
                fprintf(stderr, PROG ": copy to %s failed: %s\n", dst, m);
            else
                errp(src, "copy to %s failed at %s: %s", dst, job.what, m);
            remove_copy(dst);
            goto fail;
        }
        root_release(&root, &root.ranks[done]); /* bounded open ranks (ulimit -n) */
        snprintf(data, sizeof data, "%s/data.mdb", dst);
        if (stat(data, &sb) != 0)
            sb.st_size = 0;
        ckpt_progress_clear(); /* the line below goes where the bar was */
        char conv[80] = "";
        if (job.converted)
            snprintf(conv, sizeof conv, ", converted from format %u to format %u", job.converted,
                     CKPT_FORMAT_VERSION);
        printf("rank %d: copied %s to %s (%lld bytes%s%s)\n", rank, src, dst,
               (long long)sb.st_size, compact || job.converted ? ", compacted" : "", conv);
        fflush(stdout);
        ckpt_progress_update(&pr, done + 1);
    }
    ckpt_progress_end(&pr);
    if ((rc = ckpt_fs_fsync(dest)) != 0) {
        errp(dest, "fsync: %s", strerror(rc));
        goto fail;
    }
    root_close(&root);
    return finish_stdout();

fail:
    ckpt_progress_end(&pr);
    /* leave nothing half-copied behind */
    for (size_t i = done; i-- > 0;) {
        char dst[PATH_MAX];
        snprintf(dst, sizeof dst, "%s/rank-%d", dest, root.ranks[i].rank);
        remove_copy(dst);
    }
    if (created_dest)
        rmdir(dest);
fail_early:
    root_close(&root);
    finish_stdout();
    return EXIT_FAIL;
}
