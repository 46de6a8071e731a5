# Sourced by the reliability scripts: the processes of an MPI job.
# descendants PID: every process below PID (the ranks under mpiexec's proxy)
descendants() {
    local c
    for c in $(pgrep -P "$1" 2>/dev/null); do
        echo "$c"
        descendants "$c"
    done
}
