#!/usr/bin/env bash
# Rebuild the firmware in a temporary folder and fail if any ELF differs from the committed
# one in firmware/build/ (CI runs this; it installs the toolchain when it is missing).
#   firmware/check_build.sh            check
#   firmware/check_build.sh --update   rebuild firmware/build/ in place (then commit it)
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES="gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf make"
if ! command -v riscv64-unknown-elf-gcc >/dev/null 2>&1 \
   || [ ! -f /usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs ] \
   || ! command -v make >/dev/null 2>&1; then
    echo "check_build: installing $PACKAGES" >&2
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $PACKAGES >/dev/null
fi

PYTHON="${PYTHON:-python3}"
# the generated headers must match the models (else the ELFs would be built from stale maps)
"$PYTHON" gen_headers.py --check
"$PYTHON" gen_rbe_data.py --check
"$PYTHON" gen_tensil_data.py --check
"$PYTHON" gen_voyager_data.py --check

if [ "${1:-}" = "--update" ]; then
    make -s -B OUT=build
    echo "check_build: firmware/build updated"
    exit 0
fi

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
make -s -B OUT="$TMP"
status=0
for elf in "$TMP"/*.elf; do
    name="$(basename "$elf")"
    if [ ! -f "build/$name" ]; then
        echo "check_build: build/$name is not committed" >&2
        status=1
    elif ! cmp -s "$elf" "build/$name"; then
        echo "check_build: build/$name differs from a fresh build (run firmware/check_build.sh --update and commit)" >&2
        status=1
    fi
done
for elf in build/*.elf; do
    [ -f "$TMP/$(basename "$elf")" ] || { echo "check_build: $elf has no source program" >&2; status=1; }
done
[ "$status" = 0 ] && echo "check_build: $(ls "$TMP"/*.elf | wc -l) firmware ELFs reproduce the committed ones"
exit $status
