# Sourced by the test scripts.
#
# grep_all ARGS...: `grep -q ARGS` that reads its whole input first. Under
# `set -o pipefail`, `producer | grep -q x` fails at random: grep exits at the
# first match, the producer's next write gets SIGPIPE, and the pipeline
# reports the producer's 141 (CI saw this once, on a 3.9 KB echo). The
# producer's own exit status still counts through pipefail.
grep_all() {
    local input
    input=$(cat)
    grep -q "$@" <<<"$input"
}
