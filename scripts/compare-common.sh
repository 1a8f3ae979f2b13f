# shellcheck shell=bash
# Shared by the scripts that put Braid next to Open MPI and Gloo (compare-mpi.sh,
# compare-hosts.sh). Sourced, not run.

# Sizes may carry K, M or G (as all_reduce_perf's do); the MPI program wants plain bytes.
bytes() {
  case $1 in
    *[kK]) echo $((${1%?} << 10)) ;;
    *[mM]) echo $((${1%?} << 20)) ;;
    *[gG]) echo $((${1%?} << 30)) ;;
    *) echo "$1" ;;
  esac
}

# Open MPI's compiler wrapper and headers (install-deps.sh installs only the runtime, for
# the cluster tests): installed here when missing and this is root on Debian.
ensure_mpicc() {
  command -v mpicc >/dev/null && echo '#include <mpi.h>' | mpicc -x c -fsyntax-only - 2>/dev/null && return 0
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "# installing Open MPI's headers (libopenmpi-dev)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q openmpi-bin libopenmpi-dev >/dev/null
  else
    echo "$(basename "$0"): needs mpicc, mpi.h and mpirun (apt-get install openmpi-bin libopenmpi-dev)" >&2
    exit 1
  fi
}

# Sets venv_python (the project's venv) and gloo (1 when its torch has torch.distributed).
# shellcheck disable=SC2034  # venv_python and gloo are read by the sourcing script
find_gloo() {
  venv_python="${BRAID_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/braid/venv}/bin/python"
  gloo=0
  if [ "${BRAID_COMPARE_GLOO:-1}" = 0 ]; then
    echo "# Gloo left out: BRAID_COMPARE_GLOO=0"
  elif [ -x "$venv_python" ] && "$venv_python" -c 'import torch.distributed' 2>/dev/null; then
    gloo=1
  else
    echo "# Gloo left out: no torch in $venv_python (bash scripts/python-venv.sh)"
  fi
}
