#!/bin/bash
# Issue 28's A/A matrix on a GPU machine with real FlagGems: one record (A)
# and three warm-worker replays of it (B C D), then one process-isolation
# replay (P), each round's wall time in OUT/log.txt and the A/A tables in
# OUT/aa.txt (bench/aa_table.py). nvidia-smi logs clocks, power and
# temperature beside it (OUT/smi.csv): at a power cap they explain rows.
#
#   bash bench/issue28_rounds.sh FLAGGEMS_DIR WORK OUT [SECONDS_FOR_P]
set -u
FG=$1 R=$2 OUT=$3 PBUDGET=${4:-170}
export PYTHONUNBUFFERED=1 GEMS_VENDOR=nvidia
mkdir -p "$R" "$OUT"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$OUT/smi.csv" 2>&1 &
SMI=$!
OPS="gelu silu mul amax rms_norm log_softmax cumsum index_select cross_entropy_loss addmm"
C=(--flaggems-dir "$FG" --shapes bench/data/shapes_issue28.yaml --dtypes float16 --progress plain)
step() {
	local name=$1 limit=$2 t0; shift 2
	t0=$(date +%s)
	timeout -s TERM "$limit" "$@" > "$R/$name.log" 2>&1
	echo "$name rc=$? $(( $(date +%s) - t0 )) s" | tee -a "$OUT/log.txt"
}
step A 200 ./build/zlb batch --ops $OPS "${C[@]}" --batch-dir "$R/A" --isolation worker
for b in B C D; do
	step $b 200 ./build/zlb batch --ops $OPS "${C[@]}" --batch-dir "$R/$b" --isolation worker \
		--replay-root "$R/A"
done
python3 bench/aa_table.py "$R/A" "$R/B" "$R/C" "$R/D" --two-rounds --rows > "$OUT/aa.txt" 2>&1
step P "$PBUDGET" ./build/zlb batch --ops $OPS "${C[@]}" --batch-dir "$R/P" --isolation process \
	--replay-root "$R/A"
# isolation is caliber: the worker-against-process A/A must ask for it
python3 bench/aa_table.py "$R/B" "$R/C" "$R/D" "$R/P" --allow-caliber-mismatch --rows \
	>> "$OUT/aa.txt" 2>&1
kill $SMI
