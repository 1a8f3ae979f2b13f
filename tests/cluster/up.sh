#!/usr/bin/env bash
# The cluster tests' setup (CTest fixture "cluster"): two hosts with two rails each (eth0,
# eth1), links shaped to 2 Gbit/s, node2's first interface blocked (ext0), Slurm. Where it cannot run (not root, no network
# namespaces, no Slurm or munge, another cluster in use) it records why, so that every
# test of the label skips with that reason instead of failing.
. "$(dirname "$0")/lib.sh"
skip_file=${BRAID_CLUSTER_SKIP_FILE:?CTest sets BRAID_CLUSTER_SKIP_FILE}
rm -f "$skip_file"
cannot() {
  echo "$1" >"$skip_file"
  skip "$1"
}
[ "$(id -u)" -eq 0 ] || cannot "the virtual cluster needs root (network namespaces, a bridge, slurmd)"
probe="braidc-probe-$$"
ip netns add "$probe" 2>"$work/netns.err" || cannot "cannot make network namespaces here: $(cat "$work/netns.err")"
ip netns del "$probe"
for tool in munged slurmctld slurmd srun sbatch mpirun; do
  command -v "$tool" >/dev/null ||
    cannot "$tool is not installed (scripts/install-deps.sh installs slurmd slurmctld slurm-client munge openmpi-bin)"
done
"$cluster" up --hosts 2 --rate 2gbit --rails 2 --blocked-first node2 --owner "ctest:${BRAID_BUILD_DIR:-?}" >"$work/up.log" 2>&1
status=$?
cat "$work/up.log"
[ $status = 75 ] && cannot "$(tail -1 "$work/up.log")"
[ $status = 0 ] || fail "the cluster did not come up"
pass
