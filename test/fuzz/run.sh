#!/usr/bin/env bash
# Runs libFuzzer targets built in FUZZ_BUILD (test/fuzz/CMakeLists.txt) over their seed corpus.
#   run.sh FUZZ_BUILD SOURCE_DIR RUNS [TARGET...]     (targets: fuzz_* in FUZZ_BUILD, all by default)
# Each target runs RUNS inputs from seed FUZZ_SEED (1), inputs of at most FUZZ_MAX_LEN bytes
# (4096). New inputs go to FUZZ_WORK/<target> when FUZZ_WORK is set (make fuzz keeps them to
# build on), else to a temporary directory. A crash, a sanitizer report, a failed property or
# a hang is a finding: the input is kept and the script exits 1. Prints, per target, the
# number of inputs run without a finding. test/fuzz/<target>.options, where present, holds
# more libFuzzer flags, one a line ('#' starts a comment line).
set -euo pipefail
fuzz_build=$1
source_dir=$2
runs=$3
shift 3
seed=${FUZZ_SEED:-1}
max_len=${FUZZ_MAX_LEN:-4096}

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for corpus in "$source_dir"/test/fuzz/corpus/*/; do targets+=("fuzz_$(basename "$corpus")"); done
fi
for target in "${targets[@]}"; do
  if [ ! -x "$fuzz_build/$target" ]; then
    if [ "${CI:-}" = true ]; then
      echo "FAIL: $fuzz_build/$target is not built (make fuzz-build)" >&2
      exit 1
    fi
    echo "SKIP: $fuzz_build/$target is not built (make fuzz-build builds it with clang)"
    exit 77
  fi
done

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
summary=()
for target in "${targets[@]}"; do
  name=${target#fuzz_}
  seeds="$source_dir/test/fuzz/corpus/$name"
  work=${FUZZ_WORK:+$FUZZ_WORK/$name}
  work=${work:-$scratch/$name}
  artifacts=${FUZZ_WORK:-$scratch}/artifacts-$name
  mkdir -p "$work" "$artifacts"
  log="$artifacts/$target.log"
  options=()
  if [ -f "$source_dir/test/fuzz/$target.options" ]; then
    while read -r line; do
      [[ -z "$line" || "$line" == \#* ]] || options+=("$line")
    done <"$source_dir/test/fuzz/$target.options"
  fi
  # libFuzzer's own failure code is 77, which ctest reads as a skip: findings exit 1.
  if "$fuzz_build/$target" -runs="$runs" -seed="$seed" -max_len="$max_len" -timeout=120 -rss_limit_mb=2560 \
       -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 -artifact_prefix="$artifacts/" \
       ${options[@]+"${options[@]}"} "$work" "$seeds" >"$log" 2>&1; then
    done_runs=$(grep -o 'Done [0-9]* runs' "$log" | tail -1 | grep -o '[0-9]*' || echo "?")
    summary+=("$target: $done_runs inputs, no finding")
  else
    status=1
    echo "FINDING in $target (seed $seed):" >&2
    tail -40 "$log" >&2
    for crash in "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* "$artifacts"/oom-*; do
      [ -e "$crash" ] || continue
      keep="$source_dir/test/fuzz/findings-$name-$(basename "$crash")"
      cp "$crash" "$keep"
      echo "input kept as $keep: fix the code, then move it into test/fuzz/corpus/$name/" >&2
    done
    summary+=("$target: FINDING")
  fi
done
printf '%s\n' "${summary[@]}"
exit $status
