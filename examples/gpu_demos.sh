#!/bin/bash
# The GPU demonstrations behind examples/ and the issues' closing notes:
# IR capture, record/replay on a warm tuner DB, and zlb ab with a dead and a
# live switch, against a real FlagGems checkout. Run from the repo root:
#
#   FLAGGEMS_DIR=.carry/FlagGems bash examples/gpu_demos.sh STAGE... [OUT]
#
# STAGE: replay (c), live (b), dead0 (a: exit 10 without the override),
#        dead:OP (a: forced through, 3 rounds), pack:NAME (tar the runs of
#        this invocation into $OUT/NAME.tar.gz).
# Each stage prints the exact zlb command lines it runs (lines starting
# with '$ ') and their exit status, so a log of this script is the record.
set -u
Z=${ZLB:-./build/zlb}
FG=${FLAGGEMS_DIR:-.carry/FlagGems}
R=${DEMO_RUNS:-runs/demo}
OUTDIR=${OUT:-/tmp/zlb-demo-out}
export PYTHONUNBUFFERED=1 GEMS_VENDOR=${GEMS_VENDOR:-nvidia}
COMMON=(--flaggems-dir "$FG" --shapes examples/shapes/core4.yaml --dtypes float16
	--level core --color never)
mkdir -p "$R" "$OUTDIR"

step() {
	echo "\$ $*"
	"$@"
	local rc=$?
	echo "[exit $rc]"
	return 0
}

# The newest run directory of OP under DIR.
newest() { ls -1d "$1"/"$2"_* 2>/dev/null | sort | tail -1; }

records_diff() {
	echo "\$ diff $1/autotune_records/$3.json $2/autotune_records/$3.json"
	if diff <(python3 -m json.tool --sort-keys "$1/autotune_records/$3.json") \
		<(python3 -m json.tool --sort-keys "$2/autotune_records/$3.json"); then
		echo "[identical records]"
	else
		echo "[records differ]"
	fi
}

fallbacks() {
	echo "fallback markers in $1: events=$(grep -c AUTOTUNE_REPLAY_FALLBACK "$1/events.jsonl" 2>/dev/null || echo 0)" \
		"run.log=$(grep -c AUTOTUNE_REPLAY_FALLBACK "$1/run.log" 2>/dev/null || echo 0)"
}

stage_replay() {
	# (c) record twice on the machine's shared tuner DB (cold, then warm: the
	# second takes LibTuner's cached branch), then replay the warm record on
	# the warm DB. The three records must be equal, with no fallback.
	local d=$R/replay
	step "$Z" run mm "${COMMON[@]}" --runs-dir "$d"
	local rec1; rec1=$(newest "$d" mm)
	sleep 1
	step "$Z" run mm "${COMMON[@]}" --runs-dir "$d"
	local rec2; rec2=$(newest "$d" mm)
	sleep 1
	step "$Z" run mm "${COMMON[@]}" --runs-dir "$d" --replay-from "$rec2"
	local rep; rep=$(newest "$d" mm)
	records_diff "$rec1" "$rec2" mm
	records_diff "$rec2" "$rep" mm
	fallbacks "$rep"
	python3 - "$rec1" "$rec2" "$rep" <<'EOF'
import json, sys
for d in sys.argv[1:]:
    i = json.load(open(d + "/run_identity.json"))
    keys = ("autotune_mode", "tuner_cache", "replay_from", "autotune")
    print(d, {k: i.get(k) for k in keys if k in i})
    rec = json.load(open(d + "/autotune_records/mm.json"))
    print("  records:", [(k["tuner"], k["kernel"], len(k["entries"])) for k in rec["kernels"]])
EOF
	step "$Z" ir fingerprint "$rec1" "$rec2" "$rep"
	echo "--- sweep losers vs kept (cold record $rec1)"
	awk -F'\t' 'NR==1{for(i=1;i<=NF;i++)h[$i]=i; next} {n++; if ($h["sweep_loser"]=="yes") l++} END{print n" variants in index.tsv, "l+0" sweep losers"}' "$rec1/ttgir/index.tsv"
	echo "kept files: $(find "$rec1/ttgir" -type f ! -name index.tsv ! -name naming.md | wc -l)"
}

stage_live() {
	# (b) a switch that changes generated code: fp contraction (FMA) off/on.
	local d=$R/live
	step "$Z" ab layer_norm --axis TRITON_DEFAULT_FP_FUSION=0,1 --rounds 3 "${COMMON[@]}" --runs-dir "$d"
	local ab; ab=$(ls -1d "$d"/ab_layer_norm_* | tail -1)
	local a1; a1=$(ls -1d "$ab"/A/r1/*/ | head -1)
	local b1; b1=$(ls -1d "$ab"/B/r1/*/ | head -1)
	step "$Z" ir fingerprint "$a1" "$b1"
	step "$Z" ir diff "$a1" "$b1" --stage ptx --color never
}

stage_dead0() {
	# (a) a dead switch, without the override: SWITCH_NO_IR_DIFF, exit 10.
	step "$Z" ab softmax --axis FLAGGEMS_DEMO_UNREAD_SWITCH=0,1 --rounds 3 "${COMMON[@]}" --runs-dir "$R/dead0"
}

stage_dead() {
	# (a) the same dead switch forced through: 3 rounds, zero FASTER/SLOWER expected.
	local op=$1 d=$R/dead
	step "$Z" ab "$op" --axis FLAGGEMS_DEMO_UNREAD_SWITCH=0,1 --rounds 3 --allow-no-ir-diff \
		"${COMMON[@]}" --runs-dir "$d"
	local ab; ab=$(ls -1d "$d"/ab_"$op"_* | tail -1)
	# The recording R and every round replaying it: identical IR.
	step "$Z" ir fingerprint "$ab"/R/*/ "$ab"/A/r1/*/ "$ab"/A/r2/*/ "$ab"/A/r3/*/ "$ab"/B/r1/*/
}

for s in "$@"; do
	echo
	echo "=== stage $s  $(date -u +%H:%M:%S)"
	case $s in
	replay) stage_replay ;;
	live) stage_live ;;
	dead0) stage_dead0 ;;
	dead:*) stage_dead "${s#dead:}" ;;
	pack:*) tar -C "$R/.." --exclude='*/ir' -czf "$OUTDIR/${s#pack:}.tar.gz" "$(basename "$R")" &&
		ls -l "$OUTDIR" ;;
	*) echo "unknown stage $s" >&2 ;;
	esac
done
