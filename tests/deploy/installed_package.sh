#!/usr/bin/env bash
# The installed package, as a user gets it: `cmake --install` into a
# temporary prefix; examples/cpp built against that prefix alone (CMake's
# find_package, and pkg-config); a zoo model tuned by the installed `collage`;
# the C++ and Python examples run on its plan and checked against `collage
# run --plan`; the README's two snippets ("Use it from C++", "Use it from
# Python") extracted and run from the prefix.
#   installed_package.sh BUILD_DIR SOURCE_DIR PYTHON
# Exits 77 (skipped) when the zoo (COLLAGE_ZOO_DIR) lacks the model.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
python=$3
model=${COLLAGE_ZOO_DIR:-}/squeezenet1_1/model.onnx
if [ ! -f "$model" ]; then
  echo "skipped: no $model (set COLLAGE_ZOO_DIR; make zoo exports it)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
# Measurements go to a cache of this test's own.
export XDG_CACHE_HOME=$tmp/xdg
unset COLLAGE_WORKER

step() { echo "== $*"; }

step "install into a temporary prefix"
cmake --install "$build" --prefix "$prefix" > "$tmp/install.log"
libdir=$(dirname "$(find "$prefix" -name 'libcollage.so' | head -n 1)")
pydir=$prefix/lib/python3/dist-packages
test -f "$prefix/include/collage/collage.h"
test -x "$prefix/bin/collage"
readelf -d "$libdir/libcollage.so" | grep -q 'SONAME.*libcollage\.so\.0'

step "build examples/cpp against the prefix (find_package)"
cmake -S "$src/examples/cpp" -B "$tmp/example" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release > "$tmp/example-configure.log"
cmake --build "$tmp/example" > "$tmp/example-build.log"
if ldd "$tmp/example/run_plan" | grep -q "$build"; then
  echo "the example links the build tree, not the installed package" >&2
  exit 1
fi

step "build it again with pkg-config"
export PKG_CONFIG_PATH=$libdir/pkgconfig
# shellcheck disable=SC2046
g++ -O1 "$src/examples/cpp/run_plan.cc" -o "$tmp/run_plan_pc" $(pkg-config --cflags --libs collage) \
  -Wl,-rpath,"$libdir"

step "tune $model with the installed collage"
cp "$model" "$tmp/squeezenet1_1.onnx"
"$python" -c "import numpy as np; np.save('$tmp/x.npy', np.random.default_rng(3).standard_normal((1, 3, 224, 224)).astype(np.float32))"
"$prefix/bin/collage" tune "$tmp/squeezenet1_1.onnx" --backends onednn --threads 2 \
  --refine-rounds 0 --no-verify -q -o "$tmp/plan.json" > "$tmp/tune.log"
"$prefix/bin/collage" run "$tmp/squeezenet1_1.onnx" --plan "$tmp/plan.json" --input "$tmp/x.npy" \
  --repeat 1 --warmup 0 --save-outputs "$tmp/cli" > "$tmp/run.log"

step "run the plan from the C++ examples and the Python example"
"$tmp/example/run_plan" "$tmp/squeezenet1_1.onnx" "$tmp/plan.json" "$tmp/x.npy" "$tmp/cpp"
"$tmp/run_plan_pc" "$tmp/squeezenet1_1.onnx" "$tmp/plan.json" "$tmp/x.npy" "$tmp/cpp_pc" > /dev/null
PYTHONPATH=$pydir "$python" "$src/examples/python/run_plan.py" "$tmp/squeezenet1_1.onnx" \
  "$tmp/plan.json" "$tmp/x.npy" "$tmp/py"
"$python" - "$tmp" <<'PY'
import sys, numpy as np
tmp = sys.argv[1]
cli = np.load(f"{tmp}/cli/output.npy")
for front_end in ("cpp", "cpp_pc", "py"):
    out = np.load(f"{tmp}/{front_end}/output.npy")
    assert out.shape == cli.shape and out.dtype == cli.dtype, (front_end, out.shape, out.dtype)
    diff = float(np.max(np.abs(out - cli)))
    scale = float(np.max(np.abs(cli)))
    print(f"{front_end}: max |difference| to collage run --plan {diff:.3g} (outputs up to {scale:.3g})")
    assert diff <= 1e-5 * max(scale, 1.0), front_end
PY

step "the README's snippets"
snippets=$tmp/snippets
mkdir -p "$snippets"
cp "$model" "$snippets/squeezenet1_1.onnx"
"$python" - "$src/README.md" "$snippets" <<'PY'
import re, sys
readme, out = open(sys.argv[1]).read(), sys.argv[2]
for heading, lang, name in (("Use it from C++", "cpp", "snippet.cc"),
                            ("Use it from Python", "python", "snippet.py")):
    section = readme.split("### " + heading, 1)[1]
    code = re.search(r"```" + lang + r"\n(.*?)```", section, re.S).group(1)
    open(f"{out}/{name}", "w").write(code)
PY
# shellcheck disable=SC2046
g++ -O1 "$snippets/snippet.cc" -o "$snippets/snippet" $(pkg-config --cflags --libs collage) \
  -Wl,-rpath,"$libdir"
(cd "$snippets" && ./snippet)
rm -f "$snippets/squeezenet1_1.plan.json"
(cd "$snippets" && PYTHONPATH=$pydir "$python" snippet.py)
echo "installed package: all checks passed"
