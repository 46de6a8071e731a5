/*
 * netns_run.c - pdc-test-netns: run a `pdc` test in a network namespace of
 * its own, so that several of them can run at once.
 *
 * PDC's servers listen on the fixed ports 7000 + rank and its clients on
 * 8000, so two PDC instances on one network stack take each other's
 * clients. In a namespace of its own a test has its own loopback and its
 * own ports: ctest can run the `pdc` tests side by side instead of one at
 * a time. tests/pdc/CMakeLists.txt uses this only when the configure step
 * found it may create namespaces (root, or a user namespace); otherwise
 * the tests take turns (RESOURCE_LOCK).
 *
 *     pdc-test-netns COMMAND [ARG...]
 *
 * Creates the namespace, brings its loopback up (a new namespace has it
 * down: 127.0.0.1 would not answer), sets PDC_CKPT_NETNS_ENTERED=1 and
 * drops PDC_CKPT_PORT_LOCK (no other PDC shares these ports), then
 * executes COMMAND. Exit status 1, with the reason, when the namespace
 * cannot be made: running the test on the shared ports beside others
 * would fail obscurely.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static int loopback_up(void)
{
    struct ifreq ifr;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int rc = -1;
    if (fd < 0)
        return -1;
    memset(&ifr, 0, sizeof ifr);
    strcpy(ifr.ifr_name, "lo");
    if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
        ifr.ifr_flags |= IFF_UP;
        rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
    }
    close(fd);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: pdc-test-netns COMMAND [ARG...]\n");
        return 2;
    }
    if (unshare(CLONE_NEWNET) != 0) {
        fprintf(stderr,
                "pdc-test-netns: cannot create a network namespace (%s); reconfigure with "
                "-DPDC_CKPT_TEST_NETNS=OFF to run the pdc tests one at a time\n",
                strerror(errno));
        return 1;
    }
    if (loopback_up() != 0) {
        fprintf(stderr, "pdc-test-netns: cannot bring up the namespace's loopback: %s\n",
                strerror(errno));
        return 1;
    }
    if (setenv("PDC_CKPT_NETNS_ENTERED", "1", 1) != 0 || unsetenv("PDC_CKPT_PORT_LOCK") != 0) {
        fprintf(stderr, "pdc-test-netns: %s\n", strerror(errno));
        return 1;
    }
    execvp(argv[1], argv + 1);
    fprintf(stderr, "pdc-test-netns: cannot run %s: %s\n", argv[1], strerror(errno));
    return 127;
}
