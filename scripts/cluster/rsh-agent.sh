#!/usr/bin/env bash
# Open MPI's remote shell for the virtual cluster, in place of ssh:
#   mpirun --mca plm_rsh_agent scripts/cluster/rsh-agent.sh -H node1:2,node2:2 ...
# Open MPI calls it as `AGENT HOST COMMAND...` to start its daemon (orted) on HOST. As ssh
# would, it runs the command with a shell on that host in a fresh login-like environment:
# nothing of mpirun's environment crosses except what the command line carries, so a
# variable reaches the ranks only when `mpirun -x NAME` sends it, as on a real cluster.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# ssh's options, should a configuration pass any (-x, -o ...), mean nothing here.
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done
[ $# -ge 2 ] || { echo "usage: $0 HOST COMMAND..." >&2; exit 255; }
host=$1
shift
exec env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  BRAID_CLUSTER_DIR="${BRAID_CLUSTER_DIR:-/run/braid-cluster}" \
  "$here/cluster.sh" exec "$host" /bin/sh -c "$*"
