#!/usr/bin/env bash
# Runs real models under every strategy that places them on one backend
# (native and single:<b> for each backend of the build; the PaddleOCR
# detector and recognizer without single:halide) and checks the outputs
# against an independent reference:
#   - the zoo (scripts/export_zoo.py) against PyTorch's own outputs;
#   - third-party PaddleOCR models (scripts/fetch_thirdparty.sh; opset 9/11,
#     dynamic dimensions fixed with --input-shape) against ONNX Runtime.
# The tuned plan's HTML report (show --format html, with the replay's
# profile) is opened in headless Chromium (tests/report/check_html_report.py).
# Tolerance: max |ours - reference| <= 1e-5 + 1e-3 * max |reference|.
# Exits 77 (skipped) when none of the models asked for exists.
# Usage: check_strategies.sh COLLAGE_BINARY [MODEL ...]
#   MODEL: a zoo model (resnet18, ..., dcgan_generator, squeezenet1_1_fp16) or paddleocr_det,
#   paddleocr_rec, paddleocr_cls; none: all of them. The test suite runs one
#   model per test, so that ctest spreads them over the cores and each has
#   its own timeout.
set -uo pipefail
collage="$1"
shift
cache="${XDG_CACHE_HOME:-$HOME/.cache}/collage"
zoo="${COLLAGE_ZOO_DIR:-$cache/zoo}"
paddle="$cache/thirdparty/paddleocr"
modules="$cache/npm/node_modules"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

strategies=(native)
tune_backends=""
for b in $("$collage" backends | awk '$2 ~ /^(library|graph|compiler)$/ {print $1}'); do
  [ "$b" = native ] || strategies+=("single:$b")
  [ "$b" = halide ] || tune_backends+="${tune_backends:+,}$b"
done

# "tuned": a plan from `collage tune`, replayed with `collage run --plan`.
strategies+=(tuned)

checked=0
failed=0
check() {  # NAME MODEL INPUT_NAME INPUT_NPY REFERENCE_NPY [--input-shape ...]
  local name="$1" model="$2" input_name="$3" input="$4" reference="$5"
  shift 5
  for s in "${strategies[@]}"; do
    # single:halide builds a kernel per candidate it takes and per region
    # (about 1.5 s of compiler each, 118 for the detector); the classifier
    # and the zoo models check Halide on PaddleOCR's and PyTorch's ops, and
    # the detector and recognizer skip it to keep the suite's time down.
    if [ "$s" = single:halide ] && { [ "$name" = paddleocr_det ] || [ "$name" = paddleocr_rec ]; }; then
      continue
    fi
    local out="$work/$name.${s//[:,]/_}"
    local how=(--strategy "$s")
    if [ "$s" = tuned ]; then
      # `collage tune` then `collage run --plan`: the replayed plan must be right too.
      # Every backend but halide: a cold tune measures each of its candidates,
      # and compiling them all (about a second each) would take this test
      # past its time; single:halide and the halide unit tests cover it.
      # What is checked here is that a tuned plan computes the model, not
      # how fast it runs (bench/ measures that): only the maximal candidates
      # of each backend are measured (--prune) and the plan is not refined,
      # so that a cold cache costs a minute, not five.
      "$collage" tune "$model" "$@" --backends "$tune_backends" --threads 2 \
        --cache "$work/cache.sqlite" --prune --refine-rounds 0 \
        --no-verify -q -o "$work/$name.plan.json" > "$work/log" 2>&1
      how=(--plan "$work/$name.plan.json" --profile "$work/$name.trace.json")
    fi
    if ! "$collage" run "$model" "$@" --input "$input_name=$input" "${how[@]}" --threads 2 \
        --repeat 1 --warmup 0 --save-outputs "$out" > "$work/log" 2>&1; then
      echo "FAIL $name $s: $(tail -1 "$work/log")"
      failed=$((failed + 1))
      checked=$((checked + 1))
      continue
    fi
    local result
    result="$(/usr/bin/python3 - "$out" "$reference" <<'PY'
import glob, sys
import numpy as np
ours = np.load(sorted(glob.glob(sys.argv[1] + "/*.npy"))[0]).astype(np.float64)
ref = np.load(sys.argv[2]).astype(np.float64)
if ours.shape != ref.shape:
    print(f"shape {ours.shape} != {ref.shape}"); sys.exit(1)
diff = float(np.abs(ours - ref).max())
bound = 1e-5 + 1e-3 * float(np.abs(ref).max())
print(f"max|diff| {diff:.3g} (bound {bound:.3g})")
sys.exit(0 if diff <= bound else 1)
PY
)"
    if [ $? -eq 0 ]; then
      echo "PASS $name $s: $result"
    else
      echo "FAIL $name $s: $result"
      failed=$((failed + 1))
    fi
    checked=$((checked + 1))
    if [ "$s" = tuned ]; then
      # The tuned plan's HTML report with the run's profile, opened in
      # headless Chromium (tests/report/check_html_report.py).
      local report="$work/$name.html" verdict
      if ! "$collage" show "$work/$name.plan.json" --format html \
          --profile "$work/$name.trace.json" -o "$report" > "$work/log" 2>&1; then
        verdict="FAIL $(tail -1 "$work/log")"
      else
        verdict="$(/usr/bin/python3 "$here/../report/check_html_report.py" "$report" \
          "$work/$name.plan.json")"
      fi
      case "$verdict" in
        PASS*) echo "PASS $name html report: ${verdict#PASS }" ;;
        SKIP*) echo "note: $name html report not opened: ${verdict#SKIP: }" ;;
        *) echo "FAIL $name html report: ${verdict#FAIL }"; failed=$((failed + 1)) ;;
      esac
    fi
  done
}

zoo_models=(resnet18 resnet50 mobilenet_v2 squeezenet1_1 bert_encoder dcgan_generator
  squeezenet1_1_fp16)
paddle_models=(det:ch_PP-OCRv4_det_infer:1,3,320,320 rec:ch_PP-OCRv4_rec_infer:1,3,48,320
               cls:ch_ppocr_mobile_v2.0_cls_infer:1,3,48,192)
wanted=("$@")
if [ ${#wanted[@]} -eq 0 ]; then
  wanted=("${zoo_models[@]}")
  for entry in "${paddle_models[@]}"; do wanted+=("paddleocr_${entry%%:*}"); done
fi
is_wanted() { local w; for w in "${wanted[@]}"; do [ "$w" = "$1" ] && return 0; done; return 1; }

for model in "${zoo_models[@]}"; do
  is_wanted "$model" || continue
  if [ ! -f "$zoo/$model/model.onnx" ]; then
    echo "note: $model missing from the zoo ($zoo; make zoo); skipped"
    continue
  fi
  check "$model" "$zoo/$model/model.onnx" input "$zoo/$model/input.npy" "$zoo/$model/output.npy"
done

for entry in "${paddle_models[@]}"; do
  IFS=: read -r key file shape <<< "$entry"
  is_wanted "paddleocr_$key" || continue
  if [ ! -d "$modules/onnxruntime-node" ] || [ ! -f "$paddle/$file.onnx" ]; then
    echo "note: paddleocr_$key or onnxruntime-node missing (scripts/fetch_thirdparty.sh); skipped"
    continue
  fi
  # The reference: ONNX Runtime on the same pseudo-random input.
  /usr/bin/python3 -c "
import numpy as np
shape = [int(d) for d in '$shape'.split(',')]
np.save('$work/$key.npy', np.random.RandomState(0).rand(*shape).astype(np.float32))"
  node "$here/../../scripts/ort_runner.js" "$paddle/$file.onnx" --input "x=$work/$key.npy" \
    --threads 2 --repeat 0 --warmup 0 --save-outputs "$work/ort_$key" --modules "$modules" > /dev/null
  check "paddleocr_$key" "$paddle/$file.onnx" x "$work/$key.npy" \
    "$(ls "$work/ort_$key"/*.npy | head -1)" --input-shape "x=$shape"
done

echo "$((checked - failed)) passed, $failed failed"
[ "$checked" -gt 0 ] || exit 77
[ "$failed" -eq 0 ]
