# What the PostgreSQL test scripts share (sourced with the collage binary
# as $1): $collage, two zoo models ($model: SqueezeNet 1.1, $bigger:
# ResNet-18; exit 77, skipped, without them), a throwaway cluster
# (pg_cluster.sh), $work (a directory every user may write, holding
# XDG_CACHE_HOME), and step TEXT and refused MENTIONS LOG STATUS (checks one
# line mentioning MENTIONS and exit status 2).
collage=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
model=${COLLAGE_ZOO_DIR:-}/squeezenet1_1/model.onnx
bigger=${COLLAGE_ZOO_DIR:-}/resnet18/model.onnx
if [ ! -f "$model" ] || [ ! -f "$bigger" ]; then
  echo "skipped: no zoo models (set COLLAGE_ZOO_DIR; make zoo exports them)"
  exit 77
fi
source "$(dirname "${BASH_SOURCE[0]}")/pg_cluster.sh"
work=$tmp/work
mkdir "$work"
[ "$(id -u)" -eq 0 ] && chmod 777 "$work"
export XDG_CACHE_HOME=$work/xdg
step() { echo "== $*"; }
# A failure says where, with the end of every log it has.
on_error() {
  echo "failed at line $1; the logs end:" >&2
  for log in "$work"/*.log "$work"/*.out; do
    [ -f "$log" ] && { echo "--- $log" >&2; tail -5 "$log" >&2; }
  done
}
trap 'on_error $LINENO' ERR
refused() {  # MENTIONS LOG STATUS
  if [ "$3" -ne 2 ] || [ "$(wc -l < "$2")" -ne 1 ] || ! grep -q -- "$1" "$2"; then
    echo "expected one line mentioning '$1' and exit 2, got $3:" >&2
    cat "$2" >&2
    exit 1
  fi
  echo "refused: $(cat "$2")"
}
