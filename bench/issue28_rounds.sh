#!/bin/bash
# Issue 28's A/A matrix on a GPU machine with real FlagGems, in the protocol
# zlb ab runs: one recording (REC) kept apart, then four warm-worker replays
# of it (A B C D), each round's wall time in OUT/log.txt, the A/A tables in
# OUT/aa.txt (single pairs, --rows --coverage; written after B and C too, so
# a command cut at its limit leaves what it had), OUT/aa_two.txt (two
# rounds a side) and OUT/aa_nvml_only.txt (the single pairs again with the
# engine's effective clocks left out: what they changed), the rows whose
# medians move between the replays' processes more than their engine sd says
# (bench/process_spread.py) in OUT/process_spread.txt, each replay's fallbacks as zlb summary counts them in
# OUT/fallbacks.txt, the rounds without their IR in OUT/rounds.tgz (with
# smi.csv inside it: the device tool brings back eight files of OUT, and a
# ninth was lost), and with SECONDS_FOR_P one process-isolation replay (P)
# compared with the worker replays (isolation is caliber: the compare must
# ask for it). nvidia-smi logs clocks, power and temperature beside it
# (OUT/smi.csv): at a power cap they explain rows.
#
#   bash bench/issue28_rounds.sh FLAGGEMS_DIR WORK OUT [SECONDS_FOR_P]
#
# REC_LIMIT and REPLAY_LIMIT (seconds; 130, 200 with REC_ELASTICITY=1, and 110) bound each step; the
# rounds so far are packed after each replay, so a command cut short keeps
# them. CAL_LIMIT (seconds, 0: none) adds a calibration batch after D that
# reads each row's clock elasticity (--clock-elasticity, 150 s or so on an
# H100), OUT/aa_cal.txt (the single pairs with its s) and aa_two.txt with it;
# REC_ELASTICITY=1 has the recording read s instead (about 55 s more REC on
# an H100, no batch of its own), with the same tables. About 85 s for REC
# and 60-75 s for each replay on an H100 (build 1d294ad).
set -u
FG=$1 R=$2 OUT=$3 PBUDGET=${4:-0}
if [ "${REC_ELASTICITY:-0}" = 1 ] && [ "${CAL_LIMIT:-0}" -gt 0 ]; then
	echo "issue28_rounds.sh: REC_ELASTICITY=1 and CAL_LIMIT=$CAL_LIMIT both calibrate; give one" >&2
	exit 2
fi
export PYTHONUNBUFFERED=1 GEMS_VENDOR=nvidia
mkdir -p "$R" "$OUT"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 1000 > "$OUT/smi.csv" 2>&1 &
SMI=$!
# OPS (the environment) narrows the matrix to some of its operators
OPS=${OPS:-gelu silu mul amax rms_norm log_softmax cumsum index_select cross_entropy_loss addmm}
C=(--flaggems-dir "$FG" --shapes bench/data/shapes_issue28.yaml --dtypes float16 --progress plain)
step() {
	local name=$1 limit=$2 t0; shift 2
	t0=$(date +%s)
	timeout -s TERM "$limit" "$@" > "$R/$name.log" 2>&1
	echo "$name rc=$? $(( $(date +%s) - t0 )) s" | tee -a "$OUT/log.txt"
}
pack() {
	tar -czf "$OUT/rounds.tgz" --exclude=ir --exclude=ttgir --exclude=triton_cache \
		--exclude=tuner_cache --exclude='*.tgz' -C "$R" "$@"
}
# REC_ELASTICITY=1: the recording reads each row's clock elasticity itself, as
# zlb ab --calibrate has R do. No replay is measured in it, so its burns reach
# no compared round, and the tables take its s (--elasticity-from REC) for
# about 0.85 s a row of REC instead of a calibration batch of its own
# (CAL_LIMIT, below: the two are one choice). Its rows run after burns, so
# the K the replays capture is the one REC settled on under them, alike
# for every replay.
if [ "${REC_ELASTICITY:-0}" = 1 ]; then
	# r42's recording took 151 s with the phase, 94 without
	ZL_CLOCK_ELASTICITY=1 step REC ${REC_LIMIT:-200} ./build/zlb batch --ops $OPS "${C[@]}" \
		--batch-dir "$R/REC" --isolation worker
else
	step REC ${REC_LIMIT:-130} ./build/zlb batch --ops $OPS "${C[@]}" --batch-dir "$R/REC" --isolation worker
fi
done_rounds=()
for b in A B C D; do
	step $b ${REPLAY_LIMIT:-110} ./build/zlb batch --ops $OPS "${C[@]}" --batch-dir "$R/$b" --isolation worker \
		--replay-root "$R/REC"
	done_rounds+=("$R/$b")
	if [ ${#done_rounds[@]} -ge 2 ]; then
		python3 bench/aa_table.py "${done_rounds[@]}" --rows --coverage > "$OUT/aa.txt" 2>&1
	fi
	# what a command cut at the device's limit leaves, readable off the machine
	pack REC "${done_rounds[@]##*/}"
done
# The calibration (CAL_LIMIT > 0): the same configs replayed once more with
# --clock-elasticity, last, so that its burns perturb no measured round; the
# tables are then made with and without its s (zlb compare --elasticity-from).
# Without a preload whatever the rounds had: it is read for its s alone,
# which compare takes from a run of the same device, not of the same caliber.
CALFROM=() CALDIR=
if [ "${REC_ELASTICITY:-0}" = 1 ]; then
	CALFROM=(--elasticity-from "$R/REC")
	python3 bench/aa_table.py "${done_rounds[@]}" --rows --coverage "${CALFROM[@]}" \
		> "$OUT/aa_cal.txt" 2>&1
fi
if [ "${CAL_LIMIT:-0}" -gt 0 ]; then
	ZL_CLOCK_ELASTICITY=1 ZL_PRELOAD=0 ZL_PRELOAD_STEADY=0 step CAL "$CAL_LIMIT" ./build/zlb batch --ops $OPS "${C[@]}" \
		--batch-dir "$R/CAL" --isolation worker --replay-root "$R/REC"
	CALFROM=(--elasticity-from "$R/CAL") CALDIR=CAL
	python3 bench/aa_table.py "${done_rounds[@]}" --rows --coverage "${CALFROM[@]}" \
		> "$OUT/aa_cal.txt" 2>&1
	pack REC "${done_rounds[@]##*/}" CAL
fi
kill $SMI
python3 bench/aa_table.py "$R/A" "$R/B" "$R/C" "$R/D" --two-rounds "${CALFROM[@]}" \
	> "$OUT/aa_two.txt" 2>&1
python3 bench/process_spread.py "$R/A" "$R/B" "$R/C" "$R/D" > "$OUT/process_spread.txt" 2>&1
# the same rounds on NVML's clock alone: what the effective clock changed
python3 bench/aa_table.py "$R/A" "$R/B" "$R/C" "$R/D" --rows --without-effective \
	> "$OUT/aa_nvml_only.txt" 2>&1
# zlb summary counts each replay's AUTOTUNE_REPLAY_FALLBACK events (summary.json)
for b in A B C D; do
	./build/zlb summary "$R/$b" --format json | python3 -c '
import json, sys
s = json.load(sys.stdin)
print(sys.argv[1], "replay_fallbacks", s["replay_fallbacks"],
      *("%s: %s" % (o["op"], o["remarks"]) for o in s["ops_with_remarks"]))' "$b"
done > "$OUT/fallbacks.txt" 2>&1
tee -a "$OUT/log.txt" < "$OUT/fallbacks.txt"
# the rounds' records without their bulk, so that compare can be read again
# off the GPU machine
pack REC A B C D $CALDIR -C "$OUT" smi.csv && rm -f "$OUT/smi.csv"
if [ "$PBUDGET" -gt 0 ]; then
	step P "$PBUDGET" ./build/zlb batch --ops $OPS "${C[@]}" --batch-dir "$R/P" \
		--isolation process --replay-root "$R/REC"
	python3 bench/aa_table.py "$R/B" "$R/C" "$R/D" "$R/P" --allow-caliber-mismatch --rows \
		>> "$OUT/aa.txt" 2>&1
fi
