#!/usr/bin/env bash
# Installs what this project needs beyond a stock Rust toolchain. Idempotent.
#   scripts/install-deps.sh          bare-metal targets (for the `core` cross-build and firmware)
#   scripts/install-deps.sh --qemu   also qemu-system-arm (for the emulated-firmware tests)
#   scripts/install-deps.sh --broker also mosquitto (for the fleet-over-MQTT tests; scripts/broker.sh)
#   scripts/install-deps.sh --python also a Python venv in target/venv with maturin, numpy, pytest and mypy
#                                    (python/requirements-dev.txt), for the ldp_bo package's tests
# The options combine: scripts/install-deps.sh --qemu --broker --python
set -euo pipefail

qemu=0 broker=0 python=0
for arg in "$@"; do
    case "$arg" in
    --qemu) qemu=1 ;;
    --broker) broker=1 ;;
    --python) python=1 ;;
    *) echo "unknown option $arg (use --qemu, --broker, --python)" >&2; exit 2 ;;
    esac
done

rustup target add thumbv7em-none-eabihf thumbv6m-none-eabi

if [[ $broker -eq 1 ]]; then
    "$(dirname "$0")/broker.sh" install
fi

if [[ $qemu -eq 1 ]] && ! command -v qemu-system-arm >/dev/null 2>&1; then
    if [[ $(id -u) -ne 0 ]]; then
        echo "qemu-system-arm is missing; run as root (or: sudo apt-get install qemu-system-arm)" >&2
        exit 1
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-system-arm >/dev/null
fi

if [[ $python -eq 1 ]]; then
    root="$(cd "$(dirname "$0")/.." && pwd)"
    venv="$root/target/venv"
    if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
        if [[ $(id -u) -ne 0 ]]; then
            echo "python3 with venv is missing; run as root (or: sudo apt-get install python3-venv)" >&2
            exit 1
        fi
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv python3-pip >/dev/null
    fi
    [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$root/python/requirements-dev.txt"
fi
