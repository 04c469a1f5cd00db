#!/bin/bash
# Retains and releases per object of a bench workload, by call site (see docs/TESTING.md).
# Usage: Scripts/retain-count/retain-count.sh WORKLOAD OBJECTS [BINARY]
#   e.g. Scripts/retain-count/retain-count.sh b 5000     (b at --divide-sizes-by 10)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
workload=$1; objects=$2; binary=${3:-.build/release/coredata}
work=$(mktemp -d)
gcc -O2 -shared -fPIC "$here/counter.c" -o "$work/counter.so" -ldl
for reps in 1 3; do
    RC_OUT="$work/$reps.txt" LD_PRELOAD="$work/counter.so" "$binary" bench --workload "$workload" \
        --engine coredata --repetitions $reps --divide-sizes-by 10 >/dev/null 2>&1
done
python3 "$here/per-object.py" "$work/1.txt" "$work/3.txt" "$objects" "$binary"
rm -rf "$work"
