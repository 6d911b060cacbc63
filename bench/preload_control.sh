#!/bin/bash
# Does --preload make the small GEMMs' rounds agree, and how long must it
# be? One machine, three configurations back to back: issue 28's protocol
# (bench/issue28_rounds.sh: a recording, then four warm-worker replays A-D
# of it, the A/A tables) for each entry of PRELOADS (default
# "0 1000 1000:0.002"): MS for --preload MS, MS:FRAC for --preload MS
# --preload-steady FRAC (the preload stops once its level holds within
# FRAC), on OPS (default addmm, whose samplings step). 0 is the control,
# first so that a cut call keeps it; the whole 1000 ms preload keeps a
# profile of 40 chunks (preload_profile), from which what a shorter one or
# a steady rule would have read can be seen; the steady one says what the
# rule buys and when it stopped (preload_steady_ms, preload_stop). Each
# configuration's tables and rounds are packed into OUT/o<TAG>.tgz as soon
# as it ends (TAG: MS, or MSsFRAC without the "0."; the device tool brings
# back eight files of OUT, and one configuration alone writes seven), the
# GPU and the wall times into OUT/extra.txt.
#
#   bash bench/preload_control.sh FLAGGEMS_DIR WORK OUT
#
# Why 1000 ms (bench/README.md, "where the small GEMMs' levels go"): the
# torch addmm 1024^3 rounds that sampled 0.6-1.6 s ended at 7.503-7.511 us
# in two matrices, while the 13 that stopped after 0.1 s read 7.53-7.75 us,
# most of them with no step inside their sampling. REC_LIMIT and
# REPLAY_LIMIT (60 and 48 s) bound each step. Three configurations of addmm
# should fit one 600 s device call on an H100: 150-180 s each, from the
# settle-0 matrix's times (a worker's start about 15 s, addmm 10-16 s a
# round, the 1000 ms preload 6 s a round). Not yet run. What to read: each
# configuration's aa.txt and aa_two.txt, bench/sampling_steps.py on its
# rounds (it prints each row's preload profile), and bench/preload_window.py
# on the whole 1000 ms preload's rounds: where a steady rule of other
# windows would have stopped.
set -u
FG=$1 WORK=$2 OUT=$3
export PYTHONUNBUFFERED=1 GEMS_VENDOR=nvidia
export OPS=${OPS:-addmm} REC_LIMIT=${REC_LIMIT:-60} REPLAY_LIMIT=${REPLAY_LIMIT:-48}
# Every entry is checked before any runs: a bad last one must not cost the
# device time of the ones before it.
SPECS=() TAGS=" "
for spec in ${PRELOADS:-0 1000 1000:0.002}; do
	ms=${spec%%:*} steady=0
	[ "$spec" != "$ms" ] && steady=${spec#*:}
	# numbers within zlb's own ranges (--preload 0-10000, --preload-steady
	# 0-0.05), and no steady rule without a preload: zlb would refuse every
	# batch of the entry, and the rounds script would go on regardless
	why=$(awk -v ms="$ms" -v st="$steady" 'BEGIN {
		num = "^([0-9]+[.]?[0-9]*|[.][0-9]+)$"
		if (ms !~ num || st !~ num) print "is not MS or MS:FRAC (numbers, e.g. 1000 or 1000:0.002)"
		else if (ms + 0 > 10000) print "asks for more than --preload allows (10000 ms)"
		else if (st + 0 > 0.05) print "asks for more than --preload-steady allows (0.05)"
		else if (st + 0 > 0 && ms + 0 == 0) print "has a steady rule without a preload (zlb refuses it); give MS > 0 as its cap"
	}')
	if [ -n "$why" ]; then
		echo "preload_control.sh: PRELOADS entry '$spec' $why" >&2
		exit 2
	fi
	tag=$(awk -v ms="$ms" -v st="$steady" 'BEGIN {
		t = sprintf("%g", ms); if (st + 0 > 0) { s = sprintf("%g", st); sub(/^0[.]/, "", s); t = t "s" s }
		print t }')
	case "$TAGS" in
	*" $tag "*)
		echo "preload_control.sh: PRELOADS entry '$spec' repeats configuration $tag" >&2
		exit 2 ;;
	esac
	TAGS="$TAGS$tag "
	SPECS+=("$ms:$steady:$tag")
done
mkdir -p "$WORK" "$OUT"
X=$OUT/extra.txt
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit,clocks.max.sm --format=csv; } > "$X" 2>&1
for spec in "${SPECS[@]}"; do
	IFS=: read -r ms steady tag <<< "$spec"
	t0=$(date +%s)
	ZL_PRELOAD=$ms ZL_PRELOAD_STEADY=$steady \
		bash "$(dirname "$0")/issue28_rounds.sh" "$FG" "$WORK/w$tag" "$WORK/o$tag"
	echo "preload $ms steady $steady: $(( $(date +%s) - t0 )) s" >> "$X"
	tar -czf "$OUT/o$tag.tgz" -C "$WORK" "o$tag"
done
