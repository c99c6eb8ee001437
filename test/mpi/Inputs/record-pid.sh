#!/bin/sh
# record-pid.sh DIR COMMAND [ARGS...]: under mpirun, writes this process's id
# to DIR/pid.<rank> and runs COMMAND in its place (same process id), so that
# a test can signal one rank.
dir=$1
shift
echo $$ > "$dir/pid.$OMPI_COMM_WORLD_RANK"
exec "$@"
