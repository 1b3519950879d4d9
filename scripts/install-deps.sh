#!/usr/bin/env bash
# Installs what this project needs beyond a stock Rust toolchain. Idempotent.
#   scripts/install-deps.sh          bare-metal targets (for the `core` cross-build and firmware)
#   scripts/install-deps.sh --qemu   also qemu-system-arm (for the emulated-firmware tests)
#   scripts/install-deps.sh --broker also mosquitto (for the fleet-over-MQTT tests; scripts/broker.sh)
# The options combine: scripts/install-deps.sh --qemu --broker
set -euo pipefail

qemu=0 broker=0
for arg in "$@"; do
    case "$arg" in
    --qemu) qemu=1 ;;
    --broker) broker=1 ;;
    *) echo "unknown option $arg (use --qemu, --broker)" >&2; exit 2 ;;
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
