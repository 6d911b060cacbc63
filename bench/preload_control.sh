#!/bin/bash
# Does --preload make the small GEMMs' rounds agree? One machine, two
# configurations back to back: issue 28's protocol (bench/issue28_rounds.sh:
# a recording, then four warm-worker replays A-D of it, the A/A tables) with
# --preload MS for each MS in PRELOADS (default "200 0": the preload first,
# its control after), on OPS (default addmm cross_entropy_loss: the GEMMs
# whose sampling steps, and a row that does not, as a control). Each
# configuration's tables and rounds are packed into OUT/o<MS>.tgz as soon as
# it ends (the device tool brings back eight files of OUT; one
# configuration alone writes seven), the GPU and the wall times into
# OUT/extra.txt.
#
#   bash bench/preload_control.sh FLAGGEMS_DIR WORK OUT
#
# REC_LIMIT and REPLAY_LIMIT (60 and 48 s) bound each step: two
# configurations of these two operators fit one 600 s device call on an
# H100. What to read: each configuration's aa.txt and aa_two.txt, and each
# addmm row's samples_ms and preload_trend in its rounds (bench/README.md,
# "the sampling's steps").
set -u
FG=$1 WORK=$2 OUT=$3
export PYTHONUNBUFFERED=1 GEMS_VENDOR=nvidia
export OPS=${OPS:-addmm cross_entropy_loss} REC_LIMIT=${REC_LIMIT:-60} REPLAY_LIMIT=${REPLAY_LIMIT:-48}
mkdir -p "$WORK" "$OUT"
X=$OUT/extra.txt
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit,clocks.max.sm --format=csv; } > "$X" 2>&1
for ms in ${PRELOADS:-200 0}; do
	t0=$(date +%s)
	ZL_PRELOAD=$ms bash "$(dirname "$0")/issue28_rounds.sh" "$FG" "$WORK/w$ms" "$WORK/o$ms"
	echo "preload $ms: $(( $(date +%s) - t0 )) s" >> "$X"
	tar -czf "$OUT/o$ms.tgz" -C "$WORK" "o$ms"
done
