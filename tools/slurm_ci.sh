#!/usr/bin/env bash
# A real single-node Slurm for the tests (Debian 12, root, no systemd), with
# two fake GPUs as GRES so that --gres=gpu:1 jobs get CUDA_VISIBLE_DEVICES.
#
#   tools/slurm_ci.sh start DIR   install (apt) if needed, configure, start munged,
#                                 slurmctld and slurmd; wait until the node is idle;
#                                 write DIR/env (ZLB_REAL_SLURM=1, the partition)
#                                 and DIR/pids
#   tools/slurm_ci.sh stop DIR    stop the daemons by the pids started, and wait
#
# The recipe and its timings: ../shared/anchors/slurm-ci.md (about 20 s from
# install to the first job). Daemons are stopped by pid, never by name: a
# machine may run a Slurm of its own.
set -euo pipefail

cmd=${1:?usage: slurm_ci.sh start|stop DIR}
dir=${2:?usage: slurm_ci.sh start|stop DIR}
mkdir -p "$dir"

stop() {
	[ -f "$dir/pids" ] || return 0
	local pids
	pids=$(cat "$dir/pids")
	kill -TERM $pids 2>/dev/null || true
	for p in $pids; do
		for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null || true
	done
	rm -f "$dir/pids" "$dir/env"
}

if [ "$cmd" = stop ]; then
	stop
	exit 0
fi
[ "$cmd" = start ] || { echo "slurm_ci.sh: unknown command '$cmd'" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "slurm_ci.sh: needs root (it starts slurmd)" >&2; exit 2; }

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
	export DEBIAN_FRONTEND=noninteractive
	pkgs="munge slurmctld slurmd slurm-client"
	apt-get install -y --no-install-recommends $pkgs >/dev/null 2>&1 ||
		{ apt-get update -qq && apt-get install -y --no-install-recommends $pkgs >/dev/null; }
fi

# munge: the authentication Slurm's daemons and clients share
install -d -o munge -g munge -m 0755 /run/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
	runuser -u munge -- /usr/sbin/munged
	for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
fi
pids="$(cat /run/munge/munged.pid)"

# two GPUs Slurm believes in: character devices (it refuses plain files)
dev=$dir/dev
mkdir -p "$dev"
[ -c "$dev/nvidia0" ] || mknod "$dev/nvidia0" c 1 3
[ -c "$dev/nvidia1" ] || mknod "$dev/nvidia1" c 1 5

h=$(hostname -s)
node=$(slurmd -C | head -1)
install -d /var/lib/slurm/slurmctld /var/lib/slurm/slurmd /var/log/slurm
rm -rf /var/lib/slurm/slurmctld/* /var/lib/slurm/slurmd/*
cat >/etc/slurm/slurm.conf <<EOF
ClusterName=zlbci
SlurmctldHost=$h(127.0.0.1)
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerParameters=batch_sched_delay=0
ReturnToService=2
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=/var/log/slurm/jobcomp.log
MailProg=/bin/true
MpiDefault=none
KillWait=5
MinJobAge=600
GresTypes=gpu
$node Gres=gpu:2 NodeAddr=127.0.0.1
PartitionName=ci Nodes=$h Default=YES MaxTime=30 State=UP
EOF
cat >/etc/slurm/gres.conf <<EOF
AutoDetect=off
NodeName=$h Name=gpu File=$dev/nvidia[0-1]
EOF
/usr/sbin/slurmctld -i
/usr/sbin/slurmd
# The pids first: a node that never becomes idle must not leave its daemons
# running (stop reads them).
for _ in $(seq 50); do [ -s /run/slurmctld.pid ] && [ -s /run/slurmd.pid ] && break; sleep 0.1; done
pids="$pids $(cat /run/slurmctld.pid /run/slurmd.pid 2>/dev/null)"
echo "$pids" >"$dir/pids"
for _ in $(seq 300); do sinfo -h -o %T 2>/dev/null | grep -qx idle && break; sleep 0.1; done
sinfo -h -o %T | grep -qx idle || { echo "slurm_ci.sh: the node never became idle" >&2;
	tail -5 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2; stop; exit 1; }
printf 'ZLB_REAL_SLURM=1\nZLB_SLURM_PARTITION=ci\nZLB_SLURM_GPUS=2\n' >"$dir/env"
echo "slurm_ci.sh: single-node Slurm up (node $h, 2 fake GPUs, partition ci)"
