/*
 * crash_shim.c - an LD_PRELOAD library that records the writes and syncs a
 * process issues to the files under one directory, for the power-loss
 * test (test_store_powerloss.c), the way ALICE and CrashMonkey record a
 * workload's I/O.
 *
 * Environment:
 *   CKPT_SHIM_DIR  absolute directory: files whose path starts with it are
 *                  tracked (opened by open/open64/openat/creat)
 *   CKPT_SHIM_LOG  the log file (written with the real write())
 *
 * The log is a sequence of records (struct shim_rec, shim_log.h), each
 * followed by `len` bytes of payload for SHIM_WRITE, SHIM_FILE and
 * SHIM_MARK:
 *   SHIM_FILE   a tracked file was opened: file id, its path below the dir
 *   SHIM_WRITE  pwrite/pwritev/write/writev: the bytes at file offset off
 *               (a vectored write is one record per contiguous piece)
 *   SHIM_TRUNC  ftruncate to off bytes
 *   SHIM_SYNC_BEGIN / SHIM_SYNC_END  fsync/fdatasync of a tracked file
 *               began / returned (off: the calling thread's id, which pairs
 *               the two when syncs overlap; an END with off 0 failed)
 *   SHIM_WRITE_DURABLE  a write through a descriptor opened O_SYNC or
 *               O_DSYNC: durable once logged (that write only)
 *               (sync_file_range makes nothing durable: not a sync point;
 *               the store never writes through a writable map, so msync
 *               is not recorded)
 *   SHIM_READ   pread of a tracked file (offset only; where the store reads
 *               LMDB's meta page to take a sync's snapshot)
 *   SHIM_MARK   shim_mark(value, text) called by the workload
 * Records are appended under one mutex, so their order is the order in
 * which the calls were made (a SYNC_END comes after the syscall returned).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "shim_log.h"

#define MAX_FD 1024
#define MAX_FILES 64

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int log_fd = -2; /* -2: not set up yet, -1: off */
static char dir[PATH_MAX];
static size_t dir_len;
static int fd_file[MAX_FD];   /* file id + 1, 0 if untracked */
static int fd_dsync[MAX_FD];
static char files[MAX_FILES][PATH_MAX];
static int nfiles;

static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static int (*real_ftruncate)(int, off_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_sync_file_range)(int, off_t, off_t, unsigned);
static int (*real_close)(int);
static ssize_t (*real_pread)(int, void *, size_t, off_t);
static int (*real_open)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);

static void raw_write_all(const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = syscall(SYS_write, log_fd, c, n);
        if (w <= 0) {
            if (w < 0 && errno == EINTR)
                continue;
            return;
        }
        c += w;
        n -= (size_t)w;
    }
}

static void setup(void)
{
    if (log_fd != -2)
        return;
    real_pwrite = dlsym(RTLD_NEXT, "pwrite");
    real_pwritev = dlsym(RTLD_NEXT, "pwritev");
    real_write = dlsym(RTLD_NEXT, "write");
    real_writev = dlsym(RTLD_NEXT, "writev");
    real_ftruncate = dlsym(RTLD_NEXT, "ftruncate");
    real_fsync = dlsym(RTLD_NEXT, "fsync");
    real_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
    real_sync_file_range = dlsym(RTLD_NEXT, "sync_file_range");
    real_close = dlsym(RTLD_NEXT, "close");
    real_pread = dlsym(RTLD_NEXT, "pread");
    real_open = dlsym(RTLD_NEXT, "open");
    real_openat = dlsym(RTLD_NEXT, "openat");
    const char *d = getenv("CKPT_SHIM_DIR"), *l = getenv("CKPT_SHIM_LOG");
    log_fd = -1;
    if (d == NULL || l == NULL || strlen(d) >= sizeof dir - 1)
        return;
    strcpy(dir, d);
    dir_len = strlen(dir);
    if (dir_len > 1 && dir[dir_len - 1] == '/')
        dir[--dir_len] = 0;
    log_fd = (int)syscall(SYS_open, l, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

static void emit(uint32_t type, uint32_t file, uint64_t off, const void *data, uint64_t len)
{
    struct shim_rec r = {SHIM_MAGIC, type, file, off, len};
    raw_write_all(&r, sizeof r);
    if (len && data)
        raw_write_all(data, len);
}

static int tracked(int fd)
{
    return fd >= 0 && fd < MAX_FD && fd_file[fd] != 0;
}

static void opened(int fd, const char *path, int flags)
{
    char abs[PATH_MAX];
    if (fd < 0 || fd >= MAX_FD || log_fd < 0 || path == NULL)
        return;
    if (path[0] != '/') {
        if (getcwd(abs, sizeof abs) == NULL || strlen(abs) + strlen(path) + 2 > sizeof abs)
            return;
        strcat(abs, "/");
        strcat(abs, path);
        path = abs;
    }
    pthread_mutex_lock(&mu);
    fd_file[fd] = 0;
    if (strncmp(path, dir, dir_len) == 0 && path[dir_len] == '/') {
        const char *rel = path + dir_len + 1;
        int id = -1;
        for (int i = 0; i < nfiles; i++)
            if (strcmp(files[i], rel) == 0)
                id = i;
        if (id < 0 && nfiles < MAX_FILES) {
            id = nfiles++;
            strcpy(files[id], rel);
            emit(SHIM_FILE, (uint32_t)id, 0, rel, strlen(rel) + 1);
        }
        if (id >= 0) {
            fd_file[fd] = id + 1;
            fd_dsync[fd] = (flags & (O_DSYNC | O_SYNC)) != 0;
            if (flags & O_TRUNC)
                emit(SHIM_TRUNC, (uint32_t)id, 0, NULL, 0);
        }
    }
    pthread_mutex_unlock(&mu);
}

static int do_open(int dirfd, const char *path, int flags, mode_t mode)
{
    setup();
    int fd = dirfd == AT_FDCWD ? real_open(path, flags, mode) : real_openat(dirfd, path, flags, mode);
    if (fd >= 0 && (dirfd == AT_FDCWD || path[0] == '/'))
        opened(fd, path, flags);
    return fd;
}

/* the mode argument of open/openat: there only with O_CREAT or O_TMPFILE */
static mode_t mode_arg(int flags, va_list ap)
{
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return do_open(AT_FDCWD, path, flags, mode);
}
int open64(const char *path, int flags, ...) __attribute__((alias("open")));

int openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return do_open(dirfd, path, flags, mode);
}
int openat64(int dirfd, const char *path, int flags, ...) __attribute__((alias("openat")));

int __open_2(const char *path, int flags);
int __open_2(const char *path, int flags)
{
    return do_open(AT_FDCWD, path, flags, 0);
}
int __open64_2(const char *path, int flags) __attribute__((alias("__open_2")));

int creat(const char *path, mode_t mode)
{
    return do_open(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}
int creat64(const char *path, mode_t mode) __attribute__((alias("creat")));

int close(int fd)
{
    setup();
    if (fd >= 0 && fd < MAX_FD && fd == log_fd)
        return 0; /* never let a program close the log */
    if (fd >= 0 && fd < MAX_FD) {
        pthread_mutex_lock(&mu);
        fd_file[fd] = 0;
        pthread_mutex_unlock(&mu);
    }
    return real_close(fd);
}

/* Log a completed write of n bytes (from iov) at off; under mu. */
static void log_iov(int fd, const struct iovec *iov, int cnt, off_t off, ssize_t n, uint32_t type)
{
    uint32_t id = (uint32_t)fd_file[fd] - 1;
    for (int i = 0; i < cnt && n > 0; i++) {
        size_t len = iov[i].iov_len < (size_t)n ? iov[i].iov_len : (size_t)n;
        if (len)
            emit(type, id, (uint64_t)off, iov[i].iov_base, len);
        off += (off_t)len;
        n -= (ssize_t)len;
    }
}

static ssize_t vwrite(int fd, const struct iovec *iov, int cnt, off_t off, int positional)
{
    setup();
    if (!tracked(fd)) {
        if (positional)
            return real_pwritev(fd, iov, cnt, off);
        return real_writev(fd, iov, cnt);
    }
    /* the whole write and its record under mu: the log's order is the
     * order of the writes */
    pthread_mutex_lock(&mu);
    if (!positional)
        off = lseek(fd, 0, SEEK_CUR);
    ssize_t n = positional ? real_pwritev(fd, iov, cnt, off) : real_writev(fd, iov, cnt);
    int e = errno;
    if (n > 0 && off >= 0)
        log_iov(fd, iov, cnt, off, n, fd_dsync[fd] ? SHIM_WRITE_DURABLE : SHIM_WRITE);
    pthread_mutex_unlock(&mu);
    errno = e;
    return n;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    struct iovec v = {(void *)buf, n};
    setup();
    if (!tracked(fd))
        return real_pwrite(fd, buf, n, off);
    return vwrite(fd, &v, 1, off, 1);
}
ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) __attribute__((alias("pwrite")));

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    return vwrite(fd, iov, cnt, off, 1);
}
ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off_t off) __attribute__((alias("pwritev")));

ssize_t write(int fd, const void *buf, size_t n)
{
    struct iovec v = {(void *)buf, n};
    setup();
    if (!tracked(fd))
        return real_write(fd, buf, n);
    return vwrite(fd, &v, 1, 0, 0);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    return vwrite(fd, iov, cnt, 0, 0);
}

int ftruncate(int fd, off_t len)
{
    setup();
    if (!tracked(fd))
        return real_ftruncate(fd, len);
    pthread_mutex_lock(&mu);
    int rc = real_ftruncate(fd, len);
    int e = errno;
    if (rc == 0)
        emit(SHIM_TRUNC, (uint32_t)fd_file[fd] - 1, (uint64_t)len, NULL, 0);
    pthread_mutex_unlock(&mu);
    errno = e;
    return rc;
}
int ftruncate64(int fd, off_t len) __attribute__((alias("ftruncate")));

/* A sync: BEGIN before the call, END once it returned. Not under mu while
 * it runs (other threads write meanwhile: their writes are logged between
 * BEGIN and END and are not covered by this sync). */
static int do_sync(int fd, int (*fn)(int))
{
    setup();
    if (!tracked(fd))
        return fn(fd);
    uint32_t id = (uint32_t)fd_file[fd] - 1;
    uint64_t tid = (uint64_t)syscall(SYS_gettid); /* pairs END with its BEGIN */
    pthread_mutex_lock(&mu);
    emit(SHIM_SYNC_BEGIN, id, tid, NULL, 0);
    pthread_mutex_unlock(&mu);
    int rc = fn(fd);
    int e = errno;
    pthread_mutex_lock(&mu);
    emit(SHIM_SYNC_END, id, rc == 0 ? tid : 0, NULL, 0);
    pthread_mutex_unlock(&mu);
    errno = e;
    return rc;
}

int fsync(int fd)
{
    setup();
    return do_sync(fd, real_fsync);
}

int fdatasync(int fd)
{
    setup();
    return do_sync(fd, real_fdatasync);
}

/* sync_file_range never makes anything durable (no cache flush, no
 * metadata): passed through, not a sync point. */
int sync_file_range(int fd, off_t off, off_t n, unsigned flags)
{
    setup();
    return real_sync_file_range(fd, off, n, flags);
}

/* pread of a tracked file: logged (no payload), for the checker to see
 * when the store read its meta page (where a sync takes its snapshot) */
ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    setup();
    if (!tracked(fd))
        return real_pread(fd, buf, n, off);
    pthread_mutex_lock(&mu);
    ssize_t got = real_pread(fd, buf, n, off);
    int e = errno;
    emit(SHIM_READ, (uint32_t)fd_file[fd] - 1, (uint64_t)off, NULL, 0);
    pthread_mutex_unlock(&mu);
    errno = e;
    return got;
}
ssize_t pread64(int fd, void *buf, size_t n, off_t off) __attribute__((alias("pread")));

/* Called by the workload (found with dlsym): a marker in the log. */
void shim_mark(uint64_t value, const char *text);
void shim_mark(uint64_t value, const char *text)
{
    setup();
    if (log_fd < 0)
        return;
    pthread_mutex_lock(&mu);
    emit(SHIM_MARK, 0, value, text, text ? strlen(text) + 1 : 0);
    pthread_mutex_unlock(&mu);
}
