# The cluster's Slurm: munged with the cluster's own key and socket, slurmctld in the root
# namespace (on the bridge's address), one slurmd per host inside the host's namespaces.
# Everything lives under $cluster_dir: slurm.conf, the key, each daemon's spool, log and pid
# file (slurmd's per node, through %n). Sourced by cluster.sh.

slurm_missing() {
  local tool missing=()
  for tool in munged slurmctld slurmd srun sbatch scontrol sinfo; do
    command -v "$tool" >/dev/null || missing+=("$tool")
  done
  echo "${missing[*]}"
}

start_munge() {
  local dir="$cluster_dir/munge"
  mkdir -p "$dir"
  # 1 KiB of randomness, as mungekey makes it; readable by munge alone.
  head -c 1024 /dev/urandom >"$dir/munge.key"
  chown -R munge:munge "$dir"
  chmod 755 "$dir"  # munged wants its socket directory open to every user
  chmod 400 "$dir/munge.key"
  runuser -u munge -- munged --key-file="$dir/munge.key" --socket="$dir/munge.socket" --pid-file="$dir/munged.pid" \
    --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" 8>&- ||
    cluster_die "munged did not start: $(tail -5 "$dir/munged.log" 2>/dev/null)"
}

write_slurm_conf() {
  local n=$1 cpus
  cpus=$(nproc)
  mkdir -p "$cluster_dir/slurm/ctld-state" "$cluster_dir/slurm/spool" "$cluster_dir/slurm/log" "$cluster_dir/slurm/run"
  # A cgroup.conf beside slurm.conf keeps slurmd away from cgroup plugins it does not need.
  cat >"$cluster_dir/slurm/cgroup.conf" <<CONF
CgroupPlugin=autodetect
CONF
  cat >"$cluster_dir/slurm/slurm.conf" <<CONF
# Written by scripts/cluster/cluster.sh for a cluster of namespace hosts; removed at down.
ClusterName=braid
SlurmctldHost=$(hostname -s)($cluster_controller_ip)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$cluster_dir/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$cluster_dir/slurm/ctld-state
SlurmctldPidFile=$cluster_dir/slurm/run/slurmctld.pid
SlurmctldLogFile=$cluster_dir/slurm/log/slurmctld.log
SlurmdSpoolDir=$cluster_dir/slurm/spool/%n
SlurmdPidFile=$cluster_dir/slurm/run/slurmd-%n.pid
SlurmdLogFile=$cluster_dir/slurm/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
ReturnToService=2
SlurmdTimeout=60
InactiveLimit=0
KillWait=2
MinJobAge=60
SchedulerType=sched/builtin
NodeName=DEFAULT CPUs=$cpus State=UNKNOWN
CONF
  local i
  for i in $(seq 1 "$n"); do echo "NodeName=node$i NodeAddr=$cluster_subnet.$i" >>"$cluster_dir/slurm/slurm.conf"; done
  echo "PartitionName=cluster Nodes=node[1-$n] Default=YES OverSubscribe=FORCE:4 MaxTime=INFINITE State=UP" \
    >>"$cluster_dir/slurm/slurm.conf"
}

# The environment every Slurm command of this cluster needs (cluster.sh env prints it).
slurm_env() { echo "SLURM_CONF=$cluster_dir/slurm/slurm.conf"; }

start_slurm() {
  local n=$1 i
  export SLURM_CONF="$cluster_dir/slurm/slurm.conf"
  slurmctld -f "$SLURM_CONF" 8>&- || cluster_die "slurmctld did not start: $(tail -5 "$cluster_dir/slurm/log/slurmctld.log")"
  for i in $(seq 1 "$n"); do
    # slurmd finds its node by its hostname, which is the host's own.
    (on_host "node$i" slurmd -f "$SLURM_CONF") 8>&- ||
      cluster_die "slurmd on node$i did not start: $(tail -5 "$cluster_dir/slurm/log/slurmd-node$i.log")"
  done
  # Ready when every node is idle (registered with the controller).
  local deadline=$((SECONDS + 60)) idle=0
  while [ $SECONDS -lt $deadline ]; do
    idle=$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)
    [ "$idle" -eq "$n" ] && return 0
    sleep 0.2
  done
  cluster_die "only $idle of $n nodes registered with slurmctld within 60 s: $(sinfo -N 2>&1 | tail -n +2 | tr '\n' ';')
$(tail -5 "$cluster_dir/slurm/log/slurmctld.log")"
}

# Stops the daemons named by their pid files (SIGTERM, then SIGKILL after a grace).
stop_by_pidfiles() {
  local file pid pids=()
  for file in "$@"; do
    [ -r "$file" ] || continue
    pid=$(cat "$file" 2>/dev/null)
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && pids+=("$pid")
  done
  stop_pids "${pids[@]}"
}

# SIGTERM, up to 5 s for them to go, then SIGKILL for what is left.
stop_pids() {
  [ $# -gt 0 ] || return 0
  kill -TERM "$@" 2>/dev/null
  local i alive
  for i in $(seq 1 50); do
    alive=0
    for pid in "$@"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && return 0
    sleep 0.1
  done
  kill -KILL "$@" 2>/dev/null
  return 0
}
