# Sourced by the bench scripts: the benchmark models and where they live,
# and the median of the numbers on standard input (one per line).
# Needs $zoo (the exported zoo), $paddle (the PaddleOCR models) and $work (a
# scratch directory). Models: the zoo and the three PaddleOCR models.
default_models="resnet18 resnet50 mobilenet_v2 squeezenet1_1 bert_encoder dcgan_generator ocr_det ocr_rec ocr_cls"

# MODEL -> "ONNX_FILE INPUT_NAME INPUT_NPY [NAME=DIMS]"; empty when the model
# is missing. A PaddleOCR input (seeded random data of its fixed shape) is
# written to $work/MODEL.npy; a zoo model brings its own.
model_args() {
  case "$1" in
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
