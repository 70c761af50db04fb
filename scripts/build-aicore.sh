#!/usr/bin/env bash
# Builds the AICore executor (device-sys/aicore/) for the chip with CANN's ccec, as the
# reference describes: the source twice (cube and vector), joined with `ld.lld -r`, linked
# `-m aicorelinux -Ttext=0 -static` into aicore_executor.o, whose entries are
# pto_aicore_executor_mix_aic / _mix_aiv. Opt-in: needs ASCEND_HOME_PATH (a CANN install);
# nothing here is built or run in CI (no CANN on the CI machine), and the intrinsic names in
# pto_aicore_chip.h are to be checked against the installed CANN on first use.
#
# Usage: ASCEND_HOME_PATH=/usr/local/Ascend/ascend-toolkit/latest scripts/build-aicore.sh [out-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ASCEND_HOME_PATH:?set ASCEND_HOME_PATH to a CANN install}"
out=${1:-target/aicore}
bin="$ASCEND_HOME_PATH/compiler/ccec_compiler/bin"
ccec="$bin/ccec"
lld="$bin/ld.lld"
for tool in "$ccec" "$lld"; do
    [ -x "$tool" ] || { echo "error: $tool not found under ASCEND_HOME_PATH" >&2; exit 2; }
done
mkdir -p "$out"
src=device-sys/aicore
for arch in cube vec; do
    # entry_chip.cpp includes executor.cpp: one object per architecture.
    "$ccec" -c -O2 -std=c++17 -xcce --cce-aicore-only \
        --cce-aicore-arch="dav-c220-$arch" -D__CCE_AICORE__ -I"$src" \
        "$src/entry_chip.cpp" -o "$out/executor_$arch.o"
done
"$lld" -r "$out"/executor_cube.o "$out"/executor_vec.o -o "$out/aicore_executor_r.o"
"$lld" -m aicorelinux -Ttext=0 -static "$out/aicore_executor_r.o" -o "$out/aicore_executor.o"
echo "built $out/aicore_executor.o"
