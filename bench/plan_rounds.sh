#!/bin/bash
# Do the rounds zlb compare plans for an UNSURE row settle it? On a GPU
# machine with real FlagGems: one recording (REC) of the operators whose
# rows issue 28's H100 A/A left UNSURE (the power-capped addmm, the few-us
# amax and cumsum, the placement lottery of log_softmax 2048x4096, torch's
# rms_norm), then 2 x PAIRS warm-worker replays of it, S1 S2 ... (the sides
# of an A/A alternate), and bench/plan_check.py on them: the plan from the
# last pair, the verdicts of the first 1..PAIRS-1 pairs (OUT/plan.txt).
#
#   bash bench/plan_rounds.sh FLAGGEMS_DIR WORK OUT PAIRS [DEADLINE_S]
#
# Resumable across device calls: a replay that finished leaves WORK/Si.done
# and is not run again; one that did not is started afresh. No replay starts
# once DEADLINE_S (default 520) seconds have passed, so one call stays inside
# the device's 10 minutes; run it again (WORK in the ignored runs/ keeps
# between calls on a warm machine) until plan.txt appears. Each call leaves
# OUT/log.txt and, once every replay is done, OUT/plan.txt and
# OUT/rounds.tgz (the records without their bulk, for reading off the GPU).
set -u
FG=$1 R=$2 OUT=$3 PAIRS=$4 DEADLINE=${5:-520}
t_start=$(date +%s)
export PYTHONUNBUFFERED=1 GEMS_VENDOR=nvidia
mkdir -p "$R" "$OUT"
OPS="addmm amax cumsum log_softmax rms_norm"
C=(--flaggems-dir "$FG" --shapes bench/data/shapes_issue28.yaml --dtypes float16 --progress plain)
# one batch into WORK/name, unless done; rc 3 when the deadline came first
step() {
	local name=$1 limit=$2 t0; shift 2
	[ -e "$R/$name.done" ] && return 0
	if [ $(( $(date +%s) - t_start + limit )) -gt "$DEADLINE" ]; then
		echo "$name not started: the deadline ($DEADLINE s) would pass" | tee -a "$OUT/log.txt"
		return 3
	fi
	rm -rf "${R:?}/$name"
	t0=$(date +%s)
	timeout -s TERM "$limit" "$@" > "$R/$name.log" 2>&1
	local rc=$?
	echo "$name rc=$rc $(( $(date +%s) - t0 )) s" | tee -a "$OUT/log.txt"
	[ $rc -eq 0 ] && touch "$R/$name.done"
	return 0
}
step REC 120 ./build/zlb batch --ops $OPS "${C[@]}" --batch-dir "$R/REC" --isolation worker || exit 0
rounds=()
for i in $(seq 1 $(( 2 * PAIRS ))); do
	step S$i 90 ./build/zlb batch --ops $OPS "${C[@]}" --batch-dir "$R/S$i" --isolation worker \
		--replay-root "$R/REC" || exit 0
	[ -e "$R/S$i.done" ] || { echo "S$i failed: see $R/S$i.log" | tee -a "$OUT/log.txt"; exit 1; }
	rounds+=("$R/S$i")
done
python3 bench/plan_check.py --zlb build/zlb "${rounds[@]}" > "$OUT/plan.txt" 2>&1
tar -czf "$OUT/rounds.tgz" --exclude=ir --exclude=ttgir --exclude=triton_cache \
	--exclude=tuner_cache --exclude='*.tgz' -C "$R" REC $(cd "$R" && ls -d S[0-9]*[0-9])
