#!/usr/bin/env bash
# The next lease, in two calls (README.md beside this): `bash .gpu/session.sh 1`, then at once on the warm machine
# `bash .gpu/session.sh 2 SECONDS`. Part 1: go9 training for issue 16 (8 minutes), then bf16 on the paper's chess
# network (GPU.md). Part 2: the same go9 run resumed for what SECONDS leave, else the chess cpu preset's bench.
# Everything lands in $OUT: resultsN.tgz (JSON, logs) and go9runN.tgz.partNN (the run's latest checkpoint).
# LOCAL=1 shrinks every config to check this script on a CPU.
# 2026-12-07, after a review: the run checkpoints every 100 steps and stops itself (run.max_minutes), where a save
# every 10 steps cost about a fifth of its time and `timeout` could kill it mid-save; the chess benches, which
# compile for 60-90 s and write their JSON only at the end, left call 1 (the last lease lost all three at 150 s).
# Since the 2026-11-26 lease (../2026-11-26-h200/README.md): the go9 run's window is 262,144 (256 positions a lane,
# over two games) and it trains 300 s; the measured benches (chess-800 memory, go9-cpu) are dropped; chess's cpu
# preset comes before the 19x256 benches, whose throughput moved to call 2 with a longer limit.
set -u -o pipefail
export PYTHONUNBUFFERED=1
PART=${1:-1}; LIMIT=${2:-$( [[ $PART == 1 ]] && echo 580 || echo 200 )}
OUT=${OUT:-$(pwd)/gpu-results}; mkdir -p "$OUT"
T0=$(date +%s); el() { echo "[t=$(( $(date +%s) - T0 ))s] $*"; }
R=/tmp/res$PART; rm -rf $R; mkdir -p $R
pack() { tar czf "$OUT/results$PART.tgz.tmp" -C /tmp res$PART && mv "$OUT/results$PART.tgz.tmp" "$OUT/results$PART.tgz"; }  # whole even if killed
[[ -d /tmp/site/mctx ]] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .gpu/wheels/*.whl || { echo "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$(pwd)
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv >$R/nvidia-smi.txt 2>&1
python3 -c "import jax, mctx, pgx, haiku, optax, orbax.checkpoint, chex, numpy; print('jax', jax.__version__, jax.devices(), 'haiku', haiku.__version__, 'optax', optax.__version__, 'chex', chex.__version__, 'numpy', numpy.__version__)" 2>&1 | tee $R/devices.txt || { pack; exit 1; }
el setup done

if [[ ${LOCAL:-0} == 1 ]]; then  # tiny sizes, same commands
  SMALL=(--set selfplay.batch_size=4 --set selfplay.chunk_plies=2 --set train.batch_size=16 --set train.updates_per_step=1 --set replay.window=256)
  PAPER=(--set network.blocks=1 --set network.channels=8 --set search.num_simulations=4 "${SMALL[@]}")
  RUN=(--set network.blocks=1 --set network.channels=8 --set network.value_hidden=16 "${SMALL[@]}"); TRAIN_MIN=1; SLACK=400
else
  SMALL=()
  PAPER=(--set search.num_simulations=64 --set selfplay.batch_size=256 --set selfplay.chunk_plies=8
         --set train.batch_size=1024 --set train.updates_per_step=2 --set replay.window=262144)
  RUN=(--set network.blocks=6 --set network.channels=128 --set network.value_hidden=256 --set selfplay.batch_size=1024
       --set train.batch_size=2048 --set train.updates_per_step=8 --set replay.window=262144); TRAIN_MIN=7.5; SLACK=90
fi

bench() {  # name, seconds, bench arguments...
  local name=$1 t=$2; shift 2; el "bench $name"
  timeout $t python3 -m experiments.bench "$@" --json $R/$name.json >$R/$name.txt 2>&1; local rc=$?
  el "bench $name rc=$rc"; tail -n 32 $R/$name.txt; pack
}

pack_run() {  # the go9 run's latest checkpoint, in parts under the per-file limit
  local last; last=$(ls /tmp/go9-run/checkpoints 2>/dev/null | grep -E '^[0-9]+$' | sort -n | tail -1)
  [[ -n $last ]] || { el "no go9 checkpoint"; return; }
  (cd /tmp && tar czf /tmp/go9run.tgz go9-run/config.json go9-run/metrics.csv go9-run/run.log go9-run/checkpoints/$last \
     $(ls -d go9-run/checkpoints/* | grep -vE '/[0-9]+$|tmp') && rm -f "$OUT"/go9run$PART.tgz.part* \
     && split -b 15M -d /tmp/go9run.tgz "$OUT/go9run$PART.tgz.part")
  local mib=$(( $(stat -c %s /tmp/go9run.tgz) >> 20 ))
  el "checkpoint $last packed: $mib MiB$( (( mib > 58 )) && echo ' (over 58 MiB: it may not all come back; next time replay.window=131072)')"
}

go9() {  # minutes, then the loop's own arguments; the run stops itself at its minutes, checkpointed (SLACK: its
  # compile and last save; a backstop that kills it)
  local minutes=$1; shift
  timeout $(( ${minutes%.*} * 60 + SLACK )) python3 -m experiments.go9 "$@" --set run.max_minutes=$minutes \
    --set run.log_every=5 --set run.checkpoint_every=100 --run-dir /tmp/go9-run --no-progress >>$R/go9-train.log 2>&1
  el "go9 training rc=$?"; tail -n 3 /tmp/go9-run/metrics.csv
  cp /tmp/go9-run/metrics.csv /tmp/go9-run/config.json $R/ 2>/dev/null; pack; pack_run
}

if [[ $PART == 1 ]]; then
  # 1. go9: the cpu preset's algorithm on small's 6x128 network (issue 16).
  el "go9 training"; rm -rf /tmp/go9-run
  go9 $TRAIN_MIN --preset cpu "${RUN[@]}" --set train.num_steps=5000 --set run.eval_every=0 --set run.eval_games=0
  # 2. bf16 inference on the paper's chess network (19x256): compiles little.
  left=$((LIMIT - 10 - $(date +%s) + T0)); (( left > 100 )) && left=100
  (( left > 30 )) && bench chess-19x256-precision $left --game chess --preset paper "${PAPER[@]}" --measure precision --repeats 5
else
  # The go9 run resumed where call 1 left it (the warm machine keeps /tmp), else the chess cpu preset's bench.
  left=$((LIMIT - 20 - $(date +%s) + T0))
  if [[ -d /tmp/go9-run/checkpoints ]] && (( left > 60 + SLACK )); then
    go9 $(( (left - SLACK) / 60 )) --resume /tmp/go9-run  # its timeout, minutes x 60 + SLACK, inside what is left
  elif (( left > 60 )); then
    bench chess-cpu $left --game chess --preset cpu "${SMALL[@]}" --repeats 3
  fi
fi
el done; ls -la "$OUT"
