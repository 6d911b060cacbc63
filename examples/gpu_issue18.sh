#!/bin/bash
# The GPU half of issue 18 (backends' policies, screening assets, habits),
# against a real FlagGems checkout on a CUDA machine. Run from the repo root,
# one stage per device call (each stays under the 10-minute limit; the screen
# resumes where the previous call stopped):
#
#   FLAGGEMS_DIR=.carry/FlagGems OUT=$OUT bash examples/gpu_issue18.sh STAGE...
#
# STAGE:
#   assets      zlb inventory collects the real suite with pytest (into /tmp),
#               checks the shipped ops/shapes_{single,multi}.yaml against it and
#               migrates shapes_single.yaml against it (the report of what moved)
#   screen      100 operators of ops/inventory_main.csv (every 11th collected one)
#               on ops/shapes_single.yaml, warm workers, the screen preset, fp16;
#               call again until it says "done" (it resumes /tmp/zlb18/batch);
#               SCREEN_S sets this call's share of seconds (default 560)
#   summary     zlb summary of that batch
#   abset       zlb ab layer_norm over two shape sets with a live compiler switch
#               (TRITON_DEFAULT_FP_FUSION=0,1), 2 rounds a side
#   rlc         the compiler-switch caliber example: FLAGTREE_<VENDOR>_RLC_ENHANCE on mm
#               (stock Triton has no such switch: SWITCH_NO_IR_DIFF, exit 10, is the
#               expected answer there)
#   mmfix       mm fp16 with --mm-cluster-fix: the plugin is ready on Hopper and,
#               on stock Triton (no TLE), diverts nothing
#   pack:NAME   tar what the stages wrote into OUT/NAME.tar.gz
# Each stage prints the exact zlb commands it runs ('$ ' lines) and their exit status.
set -u
Z=${ZLB:-./build/zlb}
FG=${FLAGGEMS_DIR:-.carry/FlagGems}
W=${WORK:-/tmp/zlb18}
OUTDIR=${OUT:-/tmp/zlb18-out}
export PYTHONUNBUFFERED=1
mkdir -p "$W" "$OUTDIR"

step() {
	echo "\$ $*"
	"$@"
	local rc=$?
	echo "[exit $rc]"
	return $rc
}

stage_assets() {
	step "$Z" inventory --flaggems-dir "$FG" --out "$W/ops"
	step "$Z" inventory --out "$W/ops" --check-shapes ops/shapes_single.yaml
	step "$Z" inventory --out "$W/ops" --check-shapes ops/shapes_multi.yaml
	step "$Z" inventory --out "$W/ops" --migrate-shapes ops/shapes_single.yaml \
		--shapes-out "$W/ops/shapes_single.yaml"
	cp "$W"/ops/*.csv "$W"/ops/*.yaml "$OUTDIR"/ 2>/dev/null
}

stage_screen() {
	local ops="$W/ops100.txt" args=()
	if [ ! -f "$ops" ]; then
		python3 - "$ops" <<'EOF'
import csv, sys
rows = [r for r in csv.DictReader(open("ops/inventory_main.csv")) if not r["skip"]]
pick = rows[::11][:100]
open(sys.argv[1], "w").write("".join(r["op"] + ("@" + r["op_file"] if sum(
    1 for x in rows if x["op"] == r["op"]) > 1 else "") + "\n" for r in pick))
print(len(pick), "operators ->", sys.argv[1])
EOF
	fi
	[ -d "$W/batch" ] && args=(--resume)
	step timeout "${SCREEN_S:-560}" "$Z" batch --ops-file "$ops" --ops-dir ops --flaggems-dir "$FG" \
		--batch-dir "$W/batch" "${args[@]}" --shape-file ops/shapes_single.yaml \
		--isolation worker --dtypes float16 --preset screen --op-timeout 240 --progress plain
	local rc=$?
	[ $rc -eq 124 ] && echo "not done yet: run the stage again" || echo "done (exit $rc)"
}

stage_summary() {
	step "$Z" summary "$W/batch"
	cp "$W"/batch/ops_status.csv "$W"/batch/summary.csv "$OUTDIR"/ 2>/dev/null
}

stage_abset() {
	step "$Z" ab layer_norm --axis TRITON_DEFAULT_FP_FUSION=0,1 --rounds 2 --dtypes float16 \
		--flaggems-dir "$FG" --shape-set examples/shapes/layer_norm_small.yaml \
		--shape-set examples/shapes/layer_norm_large.yaml --runs-dir "$W/ab" --color never
	local d; d=$(ls -1d "$W"/ab/ab_layer_norm_sets_* | tail -1)
	grep -E '^#####' "$d/ab.log"
	cp "$d/ab.log" "$d/ab_sets.json" "$d/compare_sets.csv" "$OUTDIR"/
}

stage_rlc() {
	step "$Z" ab mm --axis 'FLAGTREE_<VENDOR>_RLC_ENHANCE=0,1' --rounds 1 --dtypes float16 \
		--flaggems-dir "$FG" --shapes examples/shapes/core4.yaml --runs-dir "$W/rlc" --color never
}

stage_mmfix() {
	step "$Z" run mm --mm-cluster-fix --dtypes float16 --flaggems-dir "$FG" \
		--shapes examples/shapes/core4.yaml --runs-dir "$W/mmfix" --color never
	local d; d=$(ls -1d "$W"/mmfix/mm_* | tail -1)
	grep -E '"(PLUGIN|MM_CLUSTER_AVOIDED)"' "$d/events.jsonl" | grep -E 'mm_cluster|AVOIDED'
	python3 -c "import json,sys; i=json.load(open('$d/run_identity.json')); print('caliber mm_cluster_fix =', i['caliber']['mm_cluster_fix'])"
}

for s in "$@"; do
	echo
	echo "=== stage $s  $(date -u +%H:%M:%S)"
	case $s in
	assets) stage_assets ;;
	screen) stage_screen ;;
	summary) stage_summary ;;
	abset) stage_abset ;;
	rlc) stage_rlc ;;
	mmfix) stage_mmfix ;;
	pack:*) tar -C "$W" --exclude='*/ir' --exclude='*/ttgir' -czf "$OUTDIR/${s#pack:}.tar.gz" . &&
		ls -l "$OUTDIR" ;;
	*) echo "unknown stage $s" >&2 ;;
	esac
done
