#!/usr/bin/env bash
# kashu GPU check: the benchmarks on a real GPU machine in under 5 minutes, figures printed at the end.
#
#   scripts/gpu-check.sh                 # from the repository root, with .venv holding a CUDA build of torch
#   PYTHON=/path/to/python scripts/gpu-check.sh
#
# 1. the BF16 matmul peak of card 0 (8192³ GEMMs): the physical bound to compare the MFU with;
# 2. `kashu bench step` of a Llama-3-8B-wide proxy (h 4096, 32 heads / 8 KV heads, FFN 14336,
#    vocab 128256, seq 8192, mbs 1; as many of the 32 layers as fit), bf16 autocast, fused AdamW;
# 3. when more than one GPU is visible: `kashu bench comm` over all of them (NCCL, 1M..1G);
# 4. `kashu plan --from-bench` with the measured MFU, for an 8B model on 1T tokens in 30 days.
# Results go to $KASHU_DB (default: a fresh file under $OUT) and JSON files under $OUT.
# Knobs: KASHU_STEPS (10), KASHU_SEQ (8192), KASHU_MBS (1), KASHU_COMPILE=1 adds --compile.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
OUT="${OUT:-$(mktemp -d -t kashu-gpu-check.XXXXXX)}"
mkdir -p "$OUT"
export KASHU_DB="${KASHU_DB:-$OUT/gpu-check.db}"
export PYTHONPATH="$here/src${PYTHONPATH:+:$PYTHONPATH}"

"$PY" - 2>/dev/null <<'PYEOF' || { echo "gpu-check: no CUDA GPU visible to $PY (need a CUDA build of torch)" >&2; exit 2; }
import torch
assert torch.cuda.is_available()
PYEOF
ngpu=$("$PY" -c 'import torch; print(torch.cuda.device_count())')
echo "== kashu gpu-check: $ngpu GPU(s): $("$PY" -c 'import torch; print(torch.cuda.get_device_name(0))'), torch $("$PY" -c 'import torch; print(torch.__version__, torch.version.cuda)')" >&2
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,power.limit --format=csv,noheader 2>/dev/null | head -1 >&2 || true

echo "== 1/4 matmul peak (bf16 8192^3)" >&2
timeout 60 "$PY" - > "$OUT/matmul.json" <<'PYEOF'
import json, time, torch
n = 8192
a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
for _ in range(10):
    a @ b
torch.cuda.synchronize()
iters = 50
t = time.perf_counter()
for _ in range(iters):
    a @ b
torch.cuda.synchronize()
dt = (time.perf_counter() - t) / iters
print(json.dumps({"n": n, "seconds": dt, "tflops": 2 * n**3 / dt / 1e12}))
PYEOF

echo "== 2/4 bench step (8B-wide proxy)" >&2
extra=()
[ "${KASHU_COMPILE:-0}" = "1" ] && extra+=(--compile)
timeout 180 "$PY" -m kashu bench step --device cuda --layers 32 --hidden 4096 --heads 32 --kv-heads 8 --ffn 14336 \
  --vocab 128256 --seq "${KASHU_SEQ:-8192}" --mbs "${KASHU_MBS:-1}" --steps "${KASHU_STEPS:-10}" --warmup 3 \
  "${extra[@]}" --json --out "$OUT/step.json" > /dev/null

if [ "$ngpu" -gt 1 ]; then
  echo "== 3/4 bench comm ($ngpu GPUs, NCCL)" >&2
  timeout 120 "$PY" -m kashu bench comm --device cuda --nproc "$ngpu" --sizes 1M,16M,256M,1G --iters 20 --warmup 5 \
    --json --out "$OUT/comm.json" > /dev/null
else
  echo "== 3/4 bench comm skipped: one GPU" >&2
  rm -f "$OUT/comm.json"
fi

echo "== 4/4 plan from the measurement" >&2
"$PY" - "$OUT" <<'PYEOF'
import json, os, subprocess, sys
out = sys.argv[1]
mm = json.load(open(os.path.join(out, "matmul.json")))
st = json.load(open(os.path.join(out, "step.json")))
print("kashu gpu-check")
print(f"  card            {st.get('device_name')}  (catalog: {st.get('gpu') or 'unknown'}; dense BF16 peak {st.get('peak_tflops')} TFLOPS)")
print(f"  software        torch {st['software'].get('torch')}, CUDA {st['software'].get('cuda')}, NCCL {st['software'].get('nccl')}")
print(f"  matmul bf16     {mm['tflops']:.0f} TFLOPS (8192^3 GEMM: the physical bound)")
print(f"  step bench      id {st['id']}: {st['layers_run']}/{st['layers_full']} layers{' (proxy)' if st['proxy'] else ''}, "
      f"seq {st['config']['seq']} x mbs {st['config']['mbs']}")
s = st["step_time_spread"]
print(f"                  step {st['step_time_s']*1e3:.1f} ms (p10 {s['p10']*1e3:.1f}, p90 {s['p90']*1e3:.1f}), "
      f"{st['tokens_per_s']:,.0f} tokens/s, {st['tflops']:.0f} TFLOPS")
mfu = st.get("mfu")
if mfu is not None:
    print(f"                  MFU {mfu:.1%} of the dense peak; {st['tflops'] / mm['tflops']:.1%} of the measured matmul peak")
print(f"                  peak memory {st['peak_memory_gb']:.1f} GB (estimate {st['memory_estimate_gb']:.1f} GB)")
cp = os.path.join(out, "comm.json")
if os.path.exists(cp):
    cm = json.load(open(cp))
    print(f"  comm bench      id {cm['id']}: {cm['world_size']} GPUs, {cm['backend']}")
    for op, v in cm["summary"].items():
        print(f"                  {op:15s} busbw {v['busbw_gbps_at_largest']:7.1f} GB/s at {v['largest_size_bytes'] / 2**20:.0f} MiB "
              f"(peak {v['peak_busbw_gbps']:.1f})")
if st.get("gpu") and mfu:
    p = subprocess.run([sys.executable, "-m", "kashu", "plan", "--params", "8B", "--tokens", "1T", "--gpu", st["gpu"],
                        "--days", "30", "--from-bench", str(st["id"]), "--json"], capture_output=True, text=True)
    if p.returncode == 0:
        pl = json.loads(p.stdout)
        print(f"  plan (8B, 1T tokens, 30 days, measured MFU): {pl['gpus_recommended']} x {st['gpu']}, "
              f"{pl['days']:.1f} days, mfu_source {pl['inputs']['mfu_source']}")
    else:
        print("  plan failed: " + p.stderr.strip()[-300:])
print(f"  results: {out} (store {os.environ.get('KASHU_DB')})")
PYEOF
