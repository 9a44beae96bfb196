#!/usr/bin/env bash
# A sweep in 2 processes x 1 CPU device against 1 process x 2 devices, the same global config (issue 18).
# Usage: bash docs/results/multihost/sweep.sh OUT_DIR   (from the repository root)
set -euo pipefail
out=${1:-/tmp/multihost-sweep}
rm -rf "$out"; mkdir -p "$out"
args=(--game tictactoe --preset smoke --grid search.num_simulations=4,2 --seeds 2 --set train.num_steps=4
      --set run.eval_every=2 --set run.checkpoint_every=2 --no-progress)
export JAX_PLATFORMS=cpu
start=$(date +%s)
XLA_FLAGS=--xla_force_host_platform_device_count=2 python -m experiments.sweep "${args[@]}" --out "$out/one" \
  > "$out/one.log" 2>&1
echo "1 process x 2 devices: $(( $(date +%s) - start )) s"
port=$(python -c "import socket; s=socket.socket(); s.bind(('localhost', 0)); print(s.getsockname()[1])")
start=$(date +%s)
for i in 0 1; do
  XLA_FLAGS=--xla_force_host_platform_device_count=1 python -m experiments.sweep "${args[@]}" --out "$out/two" \
    --coordinator "localhost:$port" --num-processes 2 --process-id $i > "$out/two.$i.log" 2>&1 &
done
wait
echo "2 processes x 1 device: $(( $(date +%s) - start )) s"
cmp "$out/one/results.csv" "$out/two/results.csv" && echo "results.csv: identical"
for f in "$out"/one/*/*/metrics.csv; do  # every column but the wall-clock rate
  g=${f/\/one\//\/two\/}
  cmp <(cut -d, -f1-3,5- "$f") <(cut -d, -f1-3,5- "$g") && echo "${f#$out/one/}: identical apart from positions_per_s"
done
