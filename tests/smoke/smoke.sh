#!/usr/bin/env bash
# Smoke tests: every command a user can type, every plugin task and every benchmark script runs at a
# tiny size and answers. ctest registers one test per case (tests/smoke/CMakeLists.txt, `ctest -R smoke`)
# with a time limit, so a command that hangs or crashes fails the suite. A case passes when the command
# exits with the code it documents and prints what it should; `coverage` fails when a command of
# `medseg --help` or a task of `medseg plugins info ID` has no case here.
#
#   bash tests/smoke/smoke.sh BUILD_DIR CASE      run one case (CASE as listed by --list)
#   bash tests/smoke/smoke.sh BUILD_DIR --list    the cases, one a line
#
# The cases share one tiny data set and one tiny trained model, made by the case `setup` (a ctest
# fixture) in BUILD_DIR/smoke/shared; each case writes into a fresh folder of its own beside it.
set -euo pipefail

build=$(realpath -m "$1")
case_name="$2"
source_dir=$(realpath "$(dirname "$0")/../..")
medseg="$build/bin/medseg"
work="$build/smoke"
shared="$work/shared"
tiny_config="$source_dir/resources/configs/tiny-test.yaml"

# The commands a user can type and the case that covers each ("group sub" for subcommands); plugin
# tasks are covered as "plugins run ID TASK".
declare -A covers=(
  [dataset-synth]="dataset synth" [dataset-check]="dataset check" [dataset-info]="dataset info"
  [dataset-preprocess]="dataset preprocess" [dataset-convert]="dataset convert" [train]="train" [infer]="infer" [infer-nnunet]="infer (nnunet model folder)"
  [evaluate]="evaluate"
  [export]="export" [demo]="demo" [bench]="bench" [bench-pipeline]="bench --pipeline"
  [plugins-list]="plugins list" [plugins-info]="plugins info" [render]="render"
  [pacs-echo]="pacs echo" [pacs-find]="pacs find" [pacs-get]="pacs get" [pacs-store]="pacs store"
  [submit]="submit" [runs]="runs" [runs-show]="runs show" [runs-cancel]="runs cancel" [scaling]="scaling"
  [task-unet3d-bench]="plugins run unet3d bench" [task-unet3d-export]="plugins run unet3d export"
  [task-unet3d-preprocess]="plugins run unet3d preprocess" [task-unet3d-pipeline]="plugins run unet3d pipeline"
  [compare-pytorch]="resources/benchmarks/compare_pytorch.py" [editing-latency]="resources/benchmarks/editing_latency.sh"
  [compare-nnunet]="resources/benchmarks/compare_nnunet.py" [before-after]="resources/benchmarks/before_after.py"
  [compare-monai]="resources/benchmarks/compare_monai.py"
)

fail() { echo "smoke $case_name: $*" >&2; exit 1; }
# Runs a command, keeps its output in $out, and checks its exit code against the expected one.
expect_exit() {
  local expected=$1; shift
  set +e
  out=$("$@" 2>&1)
  local code=$?
  set -e
  printf '%s\n' "$out" | tail -n 40
  [ "$code" -eq "$expected" ] || fail "exit $code, expected $expected: $*"
}
expect_text() { grep -q -- "$1" <<<"$out" || fail "output lacks '$1'"; }
fresh() { rm -rf "$work/$case_name"; mkdir -p "$work/$case_name"; cd "$work/$case_name"; }
first_case() { ls "$shared/data/imagesTr" | head -n 1 | sed 's/\.nii\.gz$//'; }
# An address where nothing listens: a closed port on loopback answers at once with "refused".
closed_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

run_case() {
  case "$1" in
    setup)
      rm -rf "$shared"; mkdir -p "$shared"
      "$medseg" dataset synth --out "$shared/data" --cases 4 --test-cases 1 --seed 5 --size 32 >/dev/null
      "$medseg" train --config "$tiny_config" --data "$shared/data" --out "$shared/run" >/dev/null
      [ -f "$shared/run/best.pt" ] || fail "the tiny training wrote no best.pt" ;;
    dataset-synth) fresh
      expect_exit 0 "$medseg" dataset synth --out data --cases 2 --seed 1 --size 24
      [ -f data/dataset.json ] || fail "no dataset.json written" ;;
    dataset-check) fresh
      expect_exit 0 "$medseg" dataset check "$shared/data" ;;
    dataset-info) fresh
      expect_exit 0 "$medseg" --json dataset info "$shared/data"
      expect_text '"result"' ;;
    dataset-preprocess) fresh
      expect_exit 0 "$medseg" dataset preprocess "$shared/data" --out cache --config "$tiny_config"
      [ -n "$(ls cache)" ] || fail "the cache folder is empty" ;;
    dataset-convert) fresh
      expect_exit 0 "$medseg" dataset convert "$shared/data" --to nnunet --out converted
      expect_exit 0 "$medseg" dataset check converted ;;
    train) fresh
      expect_exit 0 "$medseg" train --config "$tiny_config" --data "$shared/data" --out run --set epochs=1
      [ -f run/best.pt ] || fail "no best.pt" ;;
    infer) fresh
      expect_exit 0 "$medseg" infer --model "$shared/run/best.pt" --input "$shared/data/imagesTr/$(first_case).nii.gz" --out m.nii.gz
      [ -f m.nii.gz ] || fail "no mask written" ;;
    infer-nnunet) fresh
      local model="$source_dir/tests/data/nnunet/models/Dataset912_SynthBraTSLabels/nnUNetTrainer__nnUNetPlansSmall__3d_fullres"
      expect_exit 0 "$medseg" infer --model "$model" --input "$source_dir/tests/data/nnunet/cases/msd/caseB.nii.gz" \
        --out m.nii.gz --set mirror=false --set folds=0 --probabilities
      [ -f m.nii.gz ] && [ -f m_probabilities.nii.gz ] || fail "no mask or probabilities written" ;;
    evaluate) fresh
      local c; c=$(first_case)
      "$medseg" infer --model "$shared/run/best.pt" --input "$shared/data/imagesTr/$c.nii.gz" --out m.nii.gz >/dev/null
      expect_exit 0 "$medseg" --json evaluate --pred m.nii.gz --ref "$shared/data/labelsTr/$c.nii.gz"
      expect_text '"dice"' ;;
    export) fresh
      expect_exit 0 "$medseg" export --model "$shared/run/best.pt" --out model.pt
      [ -f model.pt ] && [ -f model.pt.json ] || fail "model.pt or model.pt.json missing" ;;
    demo) fresh
      expect_exit 0 "$medseg" demo --out demo --cases 8 --size 32 --config "$tiny_config"
      [ -f demo/report.json ] || fail "no report.json" ;;
    bench) fresh
      expect_exit 0 "$medseg" --json bench --skip-train --depth 2 --base-filters 4 --roi 32 --infer-size 48,48,32
      expect_text '"result"'
      expect_exit 0 "$medseg" --json bench --skip-infer --depth 2 --base-filters 4 --patch 16 --batch 1 --steps 2 --warmup 1 --loader-workers 0
      expect_text '"result"' ;;
    bench-pipeline) fresh
      expect_exit 0 "$medseg" --json bench --pipeline --depth 2 --base-filters 4 --patch 16 --steps 2 --warmup 1
      expect_text '"result"' ;;
    plugins-list) fresh
      expect_exit 0 "$medseg" plugins list
      for id in unet3d torchscript region-growing nnunet; do expect_text "$id"; done ;;
    plugins-info) fresh
      for id in unet3d torchscript region-growing nnunet; do expect_exit 0 "$medseg" plugins info "$id"; done ;;
    render) fresh
      local c; c=$(first_case)
      expect_exit 0 "$medseg" render --image "$shared/data/imagesTr/$c.nii.gz" --mask "$shared/data/labelsTr/$c.nii.gz" --out r.png --size 160x120
      [ -s r.png ] || fail "no picture written" ;;
    pacs-echo) fresh
      expect_exit 4 timeout 60 "$medseg" pacs echo --server "ANY@127.0.0.1:$(closed_port)"
      expect_text "127.0.0.1" ;;
    pacs-find) fresh
      expect_exit 4 timeout 60 "$medseg" pacs find --server "ANY@127.0.0.1:$(closed_port)"
      expect_text "127.0.0.1" ;;
    pacs-get) fresh
      expect_exit 4 timeout 60 "$medseg" pacs get --server "ANY@127.0.0.1:$(closed_port)" --series 1.2.3 --out series
      expect_text "127.0.0.1" ;;
    pacs-store) fresh
      printf 'not dicom' > f.dcm
      expect_exit 3 timeout 60 "$medseg" pacs store --server "ANY@127.0.0.1:$(closed_port)" f.dcm ;;
    submit) fresh
      expect_exit 0 "$medseg" submit --backend local --mode data --ranks 1 --config "$tiny_config" --data "$shared/data" \
        --run-dir runs --name tiny --wait -- --set epochs=1
      [ -d runs/tiny ] || fail "no run folder" ;;
    runs) fresh
      mkdir -p runs
      expect_exit 0 "$medseg" runs --run-dir runs ;;
    runs-show) fresh
      mkdir -p runs
      expect_exit 3 "$medseg" runs --run-dir runs show no-such-run
      expect_text "no-such-run" ;;
    runs-cancel) fresh
      mkdir -p runs
      expect_exit 3 "$medseg" runs --run-dir runs cancel no-such-run
      expect_text "no-such-run" ;;
    scaling) fresh
      expect_exit 0 "$medseg" scaling --mode data --workers 1 --repeats 1 --config "$tiny_config" --data "$shared/data" \
        --out scaling --set epochs=1
      [ -f scaling/scaling.json ] || fail "no scaling.json" ;;
    task-unet3d-bench) fresh
      expect_exit 0 "$medseg" --json plugins run unet3d bench --set depth=2 --set base_filters=4 --set skip_train=true \
        --set roi=32 --set infer_size=48,48,32
      expect_text '"result"' ;;
    task-unet3d-export) fresh
      expect_exit 0 "$medseg" plugins run unet3d export --set model="$shared/run/best.pt" --set out="$PWD/model.pt"
      [ -f model.pt ] || fail "no model.pt" ;;
    task-unet3d-preprocess) fresh
      expect_exit 0 "$medseg" plugins run unet3d preprocess --set data="$shared/data" --set out="$PWD/cache"
      [ -n "$(ls cache)" ] || fail "the cache folder is empty" ;;
    task-unet3d-pipeline) fresh
      # Model parallelism runs on MPI ranks: outside mpirun the task says how to start it (bench-pipeline
      # runs it there), the same through `medseg plugins run` as through medseg-worker.
      expect_exit 3 "$medseg" plugins run unet3d pipeline --set config="$tiny_config" --set task=bench --set run_dir="$PWD/pipe"
      expect_text "mpirun" ;;
    compare-pytorch) fresh
      expect_exit 0 /usr/bin/python3 "$source_dir/resources/benchmarks/compare_pytorch.py" --medseg "$medseg" --smoke
      expect_text "headline" ;;
    compare-nnunet) fresh
      expect_exit 0 /usr/bin/python3 "$source_dir/resources/benchmarks/compare_nnunet.py" --medseg "$medseg" --smoke
      expect_text "MedSeg whole_volume" ;;
    compare-monai) fresh
      # MONAI's own run where its source is at $MONAI_SRC or /tmp/monaisrc, else MedSeg's side only.
      expect_exit 0 /usr/bin/python3 "$source_dir/resources/benchmarks/compare_monai.py" --medseg "$medseg" --smoke
      expect_text "agreement" ;;
    before-after) fresh
      expect_exit 0 /usr/bin/python3 "$source_dir/resources/benchmarks/before_after.py" --smoke --rounds 1 \
        --before-build "$build" --after-build "$build" --demo-config "$tiny_config" --work "$PWD/work"
      expect_text "ratio_after_over_before" ;;
    editing-latency) fresh
      expect_exit 0 bash "$source_dir/resources/benchmarks/editing_latency.sh" "$build" --smoke
      expect_text "stroke redraw" ;;
    coverage) check_coverage ;;
    *) echo "smoke: unknown case '$1' (see --list)" >&2; exit 2 ;;
  esac
}

# Every command in `medseg --help` (and its groups' subcommands) and every plugin task has a case.
check_coverage() {
  local missing=0 commands=() group sub task id
  subcommands() { "$medseg" "$@" --help | awk 'tolower($0) ~ /^subcommands:/ {on=1; next} on && /^  [a-z]/ {print $1} on && /^[^ ]/ {on=0}'; }
  for group in $(subcommands); do
    local subs; subs=$(subcommands "$group")
    if [ -z "$subs" ]; then commands+=("$group"); else for sub in $subs; do commands+=("$group $sub"); done; fi
  done
  for id in $("$medseg" --json plugins list | /usr/bin/python3 -c 'import json,sys
for l in sys.stdin:
  e=json.loads(l)
  if e.get("event")=="result": print(" ".join(p["id"] for p in e["plugins"]))'); do
    for task in $("$medseg" --json plugins info "$id" | /usr/bin/python3 -c 'import json,sys
for l in sys.stdin:
  e=json.loads(l)
  if e.get("event")=="result": print(" ".join(t["name"] for t in e["plugin"].get("tasks", [])))'); do
      commands+=("plugins run $id $task")
    done
  done
  [ "${#commands[@]}" -gt 10 ] || fail "found only ${#commands[@]} commands in medseg --help: the help format changed?"
  for c in "${commands[@]}"; do
    [ "$c" = "plugins run" ] && continue  # covered task by task below
    local found=0
    for v in "${covers[@]}"; do [ "$v" = "$c" ] && found=1; done
    [ "$found" -eq 1 ] || { echo "smoke: '$c' has no smoke case in tests/smoke/smoke.sh" >&2; missing=1; }
  done
  echo "coverage: ${#commands[@]} commands and plugin tasks, each with a smoke case"
  [ "$missing" -eq 0 ] || exit 1
}

if [ "$case_name" = "--list" ]; then
  printf '%s\n' setup "${!covers[@]}" coverage
  exit 0
fi
mkdir -p "$work"
run_case "$case_name"
echo "smoke $case_name: ok"
