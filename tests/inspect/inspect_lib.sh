# shellcheck shell=bash
# Sourced by tests/inspect's scripts (one copy of their common steps):
# a work directory $dir, removed at exit; fail MSG; expect_rc RC CMD...;
# has LINE-REGEX.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect_rc RC CMD...: run CMD (output to $dir/out, $dir/err), check its exit status
expect_rc() {
    local want=$1 rc=0
    shift
    "$@" >"$dir/out" 2>"$dir/err" || rc=$?
    if [ "$rc" != "$want" ]; then
        cat "$dir/out" "$dir/err" >&2
        fail "exit $rc, expected $want: $*"
    fi
}
# has LINE-REGEX: the last command's stdout has a matching line
has() { grep -Eq -- "$1" "$dir/out" || { cat "$dir/out" >&2; fail "no line matching: $1"; }; }
