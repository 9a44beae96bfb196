#!/usr/bin/env bash
# 2 processes x 2 CPU devices against 1 process x 4 CPU devices, the same global config (issue 18).
# Usage: bash docs/results/multihost/measure.sh OUT_DIR   (from the repository root)
set -euo pipefail
out=${1:-/tmp/multihost}
rm -rf "$out"; mkdir -p "$out"
common=(--preset cpu --set train.num_steps=30 --set run.eval_every=0 --set run.checkpoint_every=30
        --set run.log_every=5 --set run.eval_games=2 --no-progress)
export JAX_PLATFORMS=cpu
XLA_FLAGS=--xla_force_host_platform_device_count=4 python -m experiments.connect_four "${common[@]}" \
  --run-dir "$out/one" > "$out/one.log" 2>&1
port=$(python -c "import socket; s=socket.socket(); s.bind(('localhost', 0)); print(s.getsockname()[1])")
for i in 0 1; do
  XLA_FLAGS=--xla_force_host_platform_device_count=2 python -m experiments.connect_four "${common[@]}" \
    --run-dir "$out/two" --coordinator "localhost:$port" --num-processes 2 --process-id $i > "$out/two.$i.log" 2>&1 &
done
wait
python - "$out" <<'PY'
import csv, sys
out = sys.argv[1]
for name in ("one", "two"):
  rows = list(csv.DictReader(open(f"{out}/{name}/metrics.csv")))
  rates = [float(r["positions_per_s"]) for r in rows[2:]]  # after the compile and the first steps
  print(f"{name}: positions/s at steps {rows[2]['step']}-{rows[-1]['step']}: median {sorted(rates)[len(rates)//2]:.0f} "
        f"({', '.join(f'{x:.0f}' for x in rates)})")
import jax, numpy as np
from azjax import checkpoint as ckpt, train_step as train_lib
leaves = []
for name in ("one", "two"):
  mngr = ckpt.manager(f"{out}/{name}/checkpoints")
  abstract = train_lib.abstract_state(train_lib.build(ckpt.config_from_meta(ckpt.latest_meta(f"{out}/{name}/checkpoints"))))
  leaves.append([np.asarray(x) for x in jax.tree.leaves(ckpt.restore_model(mngr, (abstract.params, abstract.bn_state)))])
same = all(np.array_equal(a, b) for a, b in zip(*leaves))
diff = max(float(np.abs(a - b).max()) for a, b in zip(*leaves))
print(f"parameters at the last step: {'bit-identical' if same else 'differ'}; largest difference {diff:.3g}")
PY
