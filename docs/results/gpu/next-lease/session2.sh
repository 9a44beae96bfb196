#!/usr/bin/env bash
# Next lease, call 2 (the warm machine, straight after session.sh): the paper's chess network (19x256) at 64 simulations and
# 256 games, throughput against its floors; then shogi's cpu preset (issue 17 section 5) if time is left.
# Usage: OUT=$OUT bash .gpu/session2.sh SECONDS
set -u -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-$(pwd)/gpu-results2}; mkdir -p "$OUT"; LIMIT=${1:-200}
T0=$(date +%s); el() { echo "[t=$(( $(date +%s) - T0 ))s] $*"; }
R=/tmp/res2; rm -rf $R; mkdir -p $R
pack() { tar czf "$OUT/results2.tgz.tmp" -C /tmp res2 && mv "$OUT/results2.tgz.tmp" "$OUT/results2.tgz"; }
[[ -d /tmp/site/mctx ]] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .gpu/wheels/*.whl
export PYTHONPATH=/tmp/site:$(pwd)
if [[ ${LOCAL:-0} == 1 ]]; then
  PAPER=(--set network.blocks=1 --set network.channels=8 --set search.num_simulations=4 --set selfplay.batch_size=4
         --set selfplay.chunk_plies=2 --set train.batch_size=16 --set train.updates_per_step=1 --set replay.window=256)
  SMALL=(--set selfplay.batch_size=4 --set selfplay.chunk_plies=2 --set train.batch_size=16 --set train.updates_per_step=1 --set replay.window=256)
else
  PAPER=(--set search.num_simulations=64 --set selfplay.batch_size=256 --set selfplay.chunk_plies=8
         --set train.batch_size=1024 --set train.updates_per_step=2 --set replay.window=262144)
  SMALL=()
fi
bench() {  # name, seconds, bench arguments...
  local name=$1 t=$2; shift 2; el "bench $name"
  timeout $t python3 -m experiments.bench "$@" --json $R/$name.json >$R/$name.txt 2>&1; local rc=$?
  el "bench $name rc=$rc"; tail -n 32 $R/$name.txt; pack
}
left=$((LIMIT - 10)); (( left > 230 )) && left=230
bench chess-19x256 $left --game chess --preset paper "${PAPER[@]}" --measure throughput --repeats 3
left=$((LIMIT - 5 - $(date +%s) + T0))
(( left > 60 )) && bench shogi-cpu $left --game shogi --preset cpu "${SMALL[@]}" --repeats 3
el done; ls -la "$OUT"
