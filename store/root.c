/*
 * root.c - the store root as a whole: its lock and the entries that do not
 * belong to it.
 *
 * Locks. Every writer of a rank holds two flock(2) locks while the store is
 * open for writing: ROOT/store.lock shared, and ROOT/rank-<r>/writer.lock
 * exclusive, into which it writes its pid. An operation that removes or
 * replaces store data (re-homing, replacing a store with a new one) takes
 * ROOT/store.lock exclusive first: while it holds it no writer can open any
 * rank, and it cannot get it while one has a rank open. The holder's pid is
 * then found in that rank's writer.lock. Locks are bound to the open file
 * description, so a process that holds ROOT/store.lock exclusive cannot open
 * a writer on the same root itself until it lets go.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_int.h"

/* Written first, then cut to its length: a lock file truncated to zero
 * and rewritten is flushed by ext4 when it is closed (auto_da_alloc), and
 * writers close theirs in ckpt_store_close, where that flush cost about a
 * tenth of a millisecond. */
int ckpt_lock_write_pid(int fd)
{
    /* a fixed width (padded with blanks, which ckpt_lock_read_pid skips):
     * the file is truncated only when it has another size (an earlier
     * build's), not at every open */
    char text[CKPT_LOCK_PID_LEN + 1];
    struct stat sb;
    int n = snprintf(text, sizeof text, "%-*ld\n", CKPT_LOCK_PID_LEN - 1, (long)getpid());
    if (n != CKPT_LOCK_PID_LEN || pwrite(fd, text, (size_t)n, 0) != n)
        return errno ? errno : EIO;
    if (fstat(fd, &sb) != 0 || (sb.st_size != n && ftruncate(fd, n) != 0))
        return errno ? errno : EIO;
    return 0;
}

long ckpt_lock_read_pid(const char *path)
{
    char text[32];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    close(fd);
    if (n <= 0)
        return 0;
    text[n] = 0;
    long pid = strtol(text, NULL, 10);
    return pid > 0 ? pid : 0;
}

/* "rank-<N>" with N in canonical decimal, as the store names it; -1 if not. */
int ckpt_rank_of_name(const char *name)
{
    const char *p = name + 5;
    long v = 0;
    if (strncmp(name, "rank-", 5) != 0 || *p == 0 || (*p == '0' && p[1] != 0))
        return -1;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
        if (v > INT_MAX)
            return -1;
    }
    return (int)v;
}

/* The first rank of root whose writer.lock is held: its number and the
 * pid written there (0 if unknown). Probes one rank at a time. */
static int find_writer(const char *root, int *rank, long *pid)
{
    DIR *d = opendir(root);
    struct dirent *de;
    char p[PATH_MAX];
    int found = 0;
    if (d == NULL)
        return 0;
    while (!found && (de = readdir(d)) != NULL) {
        int r = ckpt_rank_of_name(de->d_name);
        if (r < 0 || snprintf(p, sizeof p, "%s/%s/writer.lock", root, de->d_name) >= (int)sizeof p)
            continue;
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        if (flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
            *rank = r;
            *pid = ckpt_lock_read_pid(p);
            found = 1;
        }
        close(fd);
    }
    closedir(d);
    return found;
}

int ckpt_root_lock(int *fd, const char *root)
{
    char p[PATH_MAX];
    struct stat sb;
    if (fd == NULL || root == NULL)
        return CKPT_E_INVAL;
    *fd = -1;
    if (stat(root, &sb) != 0)
        return errno == ENOENT ? 0 : ckpt_error(ckpt_map_lmdb(errno), "%s: %s", root, strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return ckpt_error(CKPT_E_PERM, "%s: store root is not a directory", root);
    if (snprintf(p, sizeof p, "%s/store.lock", root) >= (int)sizeof p)
        return ckpt_error(CKPT_E_NAMETOOLONG, "%s: path too long", root);
    int f = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (f < 0)
        return ckpt_error(ckpt_map_lmdb(errno), "%s: cannot create the store's lock (%s)", p,
                          strerror(errno));
    if (flock(f, LOCK_EX | LOCK_NB) != 0) {
        int e = errno, rank = -1;
        long pid = 0;
        close(f);
        if (e != EWOULDBLOCK)
            return ckpt_error(ckpt_map_lmdb(e), "%s: cannot lock (%s)", p, strerror(e));
        if (find_writer(root, &rank, &pid) && pid > 0)
            return ckpt_error(CKPT_E_BUSY, "%s/rank-%d: the store is open for writing by another "
                              "process (pid %ld); stop it first", root, rank, pid);
        if (rank >= 0)
            return ckpt_error(CKPT_E_BUSY, "%s/rank-%d: the store is open for writing by another "
                              "process; stop it first", root, rank);
        pid = ckpt_lock_read_pid(p);
        if (pid > 0)
            return ckpt_error(CKPT_E_BUSY, "%s: the store is locked by another process (pid %ld) "
                              "that writes, replaces or re-homes it; stop it first", root, pid);
        return ckpt_error(CKPT_E_BUSY, "%s: the store is open for writing by another process; stop "
                          "it first", root);
    }
    ckpt_lock_write_pid(f);
    *fd = f;
    return 0;
}

void ckpt_root_unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* drops the flock */
}

int ckpt_root_strays(const char *root, int nranks, ckpt_stray_cb cb, void *payload)
{
    DIR *d;
    struct dirent *de;
    char p[PATH_MAX], why[96];
    int n = 0;
    if (root == NULL)
        return CKPT_E_INVAL;
    if ((d = opendir(root)) == NULL)
        return ckpt_error(ckpt_map_lmdb(errno), "%s: %s", root, strerror(errno));
    while ((de = readdir(d)) != NULL) {
        const char *name = de->d_name;
        struct stat sb;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, "store.lock") == 0 ||
            strcmp(name, ".rehome") == 0 || strcmp(name, ".rehome-old") == 0)
            continue;
        int r = ckpt_rank_of_name(name);
        int isdir = snprintf(p, sizeof p, "%s/%s", root, name) < (int)sizeof p &&
                    lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
        if (r >= 0 && isdir && (nranks <= 0 || r < nranks))
            continue;
        if (r >= 0 && isdir)
            snprintf(why, sizeof why, "a rank directory beyond the store's %d ranks", nranks);
        else if (r >= 0)
            snprintf(why, sizeof why, "named like a rank directory, but not a directory");
        else
            snprintf(why, sizeof why, "not part of a pdc-ckpt store");
        n++;
        if (cb != NULL) {
            int rc = cb(name, why, payload);
            if (rc != 0) {
                closedir(d);
                return rc < 0 ? rc : n;
            }
        }
    }
    closedir(d);
    return n;
}

struct stray_list {
    char names[160], rm[160]; /* messages hold 512 bytes */
    const char *root;
    int n;
};

static void append(char *buf, size_t cap, const char *sep, const char *s)
{
    size_t l = strlen(buf);
    if (l + strlen(sep) + strlen(s) + 4 < cap)
        snprintf(buf + l, cap - l, "%s%s", sep, s);
    else if (l + 5 < cap && (l < 3 || strcmp(buf + l - 3, "...") != 0))
        snprintf(buf + l, cap - l, " ...");
}

static int list_one(const char *name, const char *why, void *payload)
{
    struct stray_list *s = payload;
    char one[PATH_MAX + 128];
    snprintf(one, sizeof one, "%s (%s)", name, why);
    append(s->names, sizeof s->names, s->n ? ", " : "", one);
    snprintf(one, sizeof one, "%s/%s", s->root, name);
    append(s->rm, sizeof s->rm, " ", one);
    s->n++;
    return 0;
}

int ckpt_root_check(const char *root, int nranks)
{
    struct stray_list s;
    memset(&s, 0, sizeof s);
    s.root = root;
    int rc = ckpt_root_strays(root, nranks, list_one, &s);
    if (rc < 0)
        return rc;
    if (s.n == 0)
        return 0;
    return ckpt_error(CKPT_E_EXISTS, "%s: %d entr%s that %s not part of this %d-rank store: %s; "
                      "nothing was changed: remove %s (rm -r%s) or move %s elsewhere, then retry",
                      root, s.n, s.n == 1 ? "y" : "ies", s.n == 1 ? "is" : "are", nranks, s.names,
                      s.n == 1 ? "it" : "them", s.rm, s.n == 1 ? "it" : "them");
}
