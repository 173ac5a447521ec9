# Sourced by the bench scripts: the benchmark models and where they live,
# and the median of the numbers on standard input (one per line).
# Models: the zoo and the three PaddleOCR models. $zoo (the exported zoo) and
# $paddle (the PaddleOCR models) keep a value the script set before sourcing;
# $work, when the script has none, is a new scratch directory removed when
# the script exits.
zoo="${zoo:-${COLLAGE_ZOO_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/collage/zoo}}"
paddle="${paddle:-${XDG_CACHE_HOME:-$HOME/.cache}/collage/thirdparty/paddleocr}"
if [ -z "${work:-}" ]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
default_models="resnet18 resnet50 mobilenet_v2 squeezenet1_1 bert_encoder dcgan_generator ocr_det ocr_rec ocr_cls"

# A model is a zoo or PaddleOCR name, or any ONNX file of float or integer inputs:
# PATH.onnx, or PATH.onnx:DIMS (e.g. m.onnx:1,3,224,224) to fix its first
# input's shape (dims the file leaves open are 1 otherwise).

# The name a model's results go under: its file name for an ONNX file.
model_name() {
  local file="${1%%:*}"
  file="$(basename "$file" .onnx)"
  echo "${file//[^A-Za-z0-9_-]/_}"
}

# Sets `args` to MODEL's ONNX file and, when it has one, its --input-shape
# (model_args); returns 1, with a line on stderr, when it is not available.
tune_args() {
  local onnx shape
  read -r onnx _ _ shape <<< "$(model_args "$1")"
  if [ -z "${onnx:-}" ]; then
    echo "skip $1: not available (make zoo)" >&2
    return 1
  fi
  args=("$onnx")
  if [ -n "${shape:-}" ]; then args+=(--input-shape "$shape"); fi
  return 0
}

# MODEL -> "ONNX_FILE INPUT_NAME INPUT_NPY [NAME=DIMS]"; empty when the model
# is missing. A PaddleOCR or ONNX-file input (seeded random data of its
# shape) is written to $work/NAME.npy; a zoo model brings its own. An ONNX
# file's further inputs go to $work/NAME.K.npy, each listed as
# "--input NAME=FILE" in $work/NAME.more_inputs (ort_inputs reads them).
model_args() {
  case "$1" in
    *.onnx|*.onnx:*)
      local file="${1%%:*}" dims="" name
      [ "$file" != "$1" ] && dims="${1#*:}"
      [ -f "$file" ] || return 0
      name="$(model_name "$1")"
      local input
      input="$(/usr/bin/python3 - "$file" "$dims" "$work/$name.npy" <<'PY'
import sys
import numpy as np
import onnx
model = onnx.load(sys.argv[1], load_external_data=False)
constants = {i.name for i in model.graph.initializer}
inputs = [i for i in model.graph.input if i.name not in constants]
def declared(value):
    return [d.dim_value if d.HasField("dim_value") else 1 for d in value.type.tensor_type.shape.dim]
def data(value, dims, seed):
    # Integer inputs (token ids) get small ids, the others values in [0, 1).
    dtype = onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[value.type.tensor_type.elem_type]
    if np.issubdtype(dtype, np.integer):
        return np.random.RandomState(seed).randint(0, 64, size=dims).astype(dtype)
    return np.random.RandomState(seed).rand(*dims).astype(dtype)
dims = declared(inputs[0])
if sys.argv[2]:
    dims = [int(d) for d in sys.argv[2].split(",")]
np.save(sys.argv[3], data(inputs[0], dims, 0))
stem = sys.argv[3][:-len(".npy")]
with open(stem + ".more_inputs", "w") as listing:
    for k, value in enumerate(inputs[1:], start=1):
        np.save(f"{stem}.{k}.npy", data(value, declared(value), k))
        listing.write(f"--input {value.name}={stem}.{k}.npy\n")
print(inputs[0].name, ",".join(map(str, dims)))
PY
)" || return 0
      local input_name="${input%% *}"
      echo "$file $input_name $work/$name.npy $input_name=${input#* }" ;;
    ocr_det|ocr_rec|ocr_cls)
      local file shape
      case "$1" in
        ocr_det) file=ch_PP-OCRv4_det_infer; shape=1,3,320,320 ;;
        ocr_rec) file=ch_PP-OCRv4_rec_infer; shape=1,3,48,320 ;;
        ocr_cls) file=ch_ppocr_mobile_v2.0_cls_infer; shape=1,3,48,192 ;;
      esac
      [ -f "$paddle/$file.onnx" ] || return 0
      /usr/bin/python3 -c "
import numpy as np
np.save('$work/$1.npy', np.random.RandomState(0).rand(*[int(d) for d in '$shape'.split(',')]).astype(np.float32))"
      echo "$paddle/$file.onnx x $work/$1.npy x=$shape" ;;
    *)
      local dir="$zoo/$1"
      [ -f "$dir/model.onnx" ] || return 0
      local input_name
      input_name="$(/usr/bin/python3 -c "import json;print(json.load(open('$dir/meta.json'))['input_name'])")"
      echo "$dir/model.onnx $input_name $dir/input.npy" ;;
  esac
}

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

# Replays MODEL's plans $work/MODEL.VARIANT.json side by side (`collage run
# --plan A --plan B ...`: interleaved, A B A B ..., in one process), $rounds
# times $repeat rounds, with ${args[@]} (the model and its --input-shape),
# $collage and $threads; appends "MODEL VARIANT ROUND MEDIAN_MS" per plan
# and round to $work/runs and echoes them on standard error.
#   replay_alternating MODEL VARIANT...
replay_alternating() {
  local m="$1" r v
  shift
  local plans=()
  for v in "$@"; do plans+=(--plan "$work/$m.$v.json"); done
  for r in $(seq "$rounds"); do
    "$collage" run "${args[@]}" "${plans[@]}" --threads "$threads" --repeat "$repeat" \
      --warmup 3 |
      awk -v m="$m" -v r="$r" -v only="$1" '
        /^plan / {v = $2; sub(/:$/, "", v); n = split(v, part, "/"); v = part[n]
                  sub("^" m "[.]", "", v); sub(/[.]json$/, "", v)}
        /^ *latency over/ {print m, (v == "" ? only : v), r, $6}' |
      tee -a "$work/runs" >&2
  done
}

# The median over rounds of MODEL's VARIANT in $work/runs.
#   replayed_median MODEL VARIANT
replayed_median() {
  awk -v m="$1" -v v="$2" '$1 == m && $2 == v {print $4}' "$work/runs" | median
}

# The ort_runner.js arguments of a model's inputs after the first (see
# model_args), one per line; nothing for a model of one input.
ort_more_inputs() {
  local listing="$work/$1.more_inputs"
  [ -f "$listing" ] && cat "$listing"
  return 0
}
