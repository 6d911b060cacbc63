#!/bin/bash
# Every off-GPU reading of one issue-28 matrix, from the rounds.tgz that
# bench/issue28_rounds.sh packs (REC, A-D, CAL where there was one), into
# WORK/readings.txt, so that a session reads one file instead of rerunning
# each tool by hand:
#   - the single pairs and two rounds a side (bench/aa_table.py), with the
#     calibration's s where the rounds have one (REC_ELASTICITY=1: REC; a
#     CAL batch: CAL) and without;
#   - the addmm rows' samplings and preloads (bench/sampling_steps.py), and
#     where the steady rule would have stopped (bench/preload_window.py);
#   - P against what the measured graphs did, with each round's new memory
#     per graph (bench/probe_columns.py), and the two rounds again with P
#     drawn from the probes placed as the measured graph was
#     (bench/like_placed.py), where the rounds recorded it.
#
#   bash bench/read_matrix.sh ROUNDS_TGZ WORK
#
# WORK must not exist (nothing is written over). Nothing is timed: any
# machine with build/zlb reads it.
set -u
TGZ=$1 W=$2
B=$(dirname "$0")
if [ ! -f "$TGZ" ]; then
	echo "read_matrix.sh: $TGZ is not a file (give the rounds.tgz of bench/issue28_rounds.sh)" >&2
	exit 2
fi
if [ -e "$W" ]; then
	echo "read_matrix.sh: $W exists; give a new directory (nothing is written over)" >&2
	exit 2
fi
mkdir -p "$W/rounds"
R=$W/rounds
# W is this script's own from here: a refusal takes it away again
if ! tar -xzf "$TGZ" -C "$R"; then
	rm -rf -- "$W"
	echo "read_matrix.sh: $TGZ does not unpack" >&2
	exit 2
fi
for b in A B C D; do
	if [ ! -d "$R/$b" ]; then
		rm -rf -- "$W"
		echo "read_matrix.sh: $TGZ holds no round $b (a call cut before it?)" >&2
		exit 2
	fi
done
CAL=()
for c in CAL REC; do
	if [ -d "$R/$c" ] && grep -rqs '"clock_elasticity": [0-9.-]' "$R/$c" --include=results.jsonl; then
		CAL=(--elasticity-from "$R/$c")
		break
	fi
done
ROUNDS=("$R/A" "$R/B" "$R/C" "$R/D")
{
	echo "== single pairs, rows not SAME"
	python3 "$B/aa_table.py" "${ROUNDS[@]}" --rows --coverage
	if [ ${#CAL[@]} -gt 0 ]; then
		echo "== single pairs with s (${CAL[1]##*/})"
		python3 "$B/aa_table.py" "${ROUNDS[@]}" --coverage "${CAL[@]}"
	fi
	echo "== two rounds a side${CAL[1]:+ with s (${CAL[1]##*/})}"
	python3 "$B/aa_table.py" "${ROUNDS[@]}" --two-rounds --rows "${CAL[@]}"
	echo "== addmm: the samplings and preloads"
	python3 "$B/sampling_steps.py" "${ROUNDS[@]}" --op addmm
	echo "== where the steady rule would have stopped"
	python3 "$B/preload_window.py" "${ROUNDS[@]}"
	echo "== P against the centres, with each round's new memory"
	python3 "$B/probe_columns.py" "${ROUNDS[@]}" --all
	if grep -rqs placement_probe_pool_mib "$R/A" --include=results.jsonl; then
		echo "== two rounds with P from the probes placed as the measured graph"
		python3 "$B/like_placed.py" "${ROUNDS[@]}" --out "$W/like"
		python3 "$B/aa_table.py" "$W/like/A" "$W/like/B" "$W/like/C" "$W/like/D" \
			--two-rounds --rows "${CAL[@]}"
	fi
} > "$W/readings.txt" 2>&1
echo "read_matrix.sh: $W/readings.txt"
