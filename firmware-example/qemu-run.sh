#!/usr/bin/env bash
# Runs a firmware image under QEMU's netduinoplus2 (STM32F405) with semihosting enabled (defmt
# log to this terminal; the device's files in the current directory) and USART1 on a TCP
# chardev at 127.0.0.1:${LDP_QEMU_PORT:-4555}. Drive it from the repository root with:
#   cargo run --release -p host-sim -- run device --device tcp:127.0.0.1:4555 --trials 1
# QEMU's STM32F405 has no TRNG, so this script is the device's entropy source and provisioner:
#   - every boot gets 32 fresh bytes of OS entropy in ldp-entropy.bin (read once, then deleted);
#   - a directory with no device state yet (ldp-state.bin) is a new device: it is provisioned
#     with 32 bytes of secret seed material from OS entropy (ldp-provision.bin, used once),
#     and its link key is written for the learner (ldp-link.key: LDP_KEYS=ldp-link.key);
#   - board.txt marks that the directory has a board: once it has lost ldp-state.bin, no new
#     board is made there.
# Run it again in the same directory and the same device boots again: same budget, next boot.
set -euo pipefail
port=${LDP_QEMU_PORT:-4555}
if [[ -e ldp-budget.bin && ! -e ldp-state.bin ]]; then
    echo "ldp-budget.bin is an older firmware's budget file; this firmware keeps ldp-state.bin." >&2
    echo "Delete ldp-budget.bin (and ldp-seed.bin) to start a new device here." >&2
    exit 1
fi
if [[ -e ldp-state.bin ]]; then
    # A device exists: a provisioning request beside it is not ours (records blanked by hand
    # would otherwise be provisioned afresh).
    rm -f ldp-provision.bin ldp-config.bin
elif [[ -e board.txt ]]; then
    # This directory had a board and has lost its state: making a new one here would give the
    # same board a fresh budget (as `host-sim live --device qemu` and `fleet bridge` refuse).
    echo "this directory's board has lost its state (board.txt without ldp-state.bin): not making a new one." >&2
    echo "Use a new directory for a new board." >&2
    exit 1
else
    umask 077
    head -c 32 /dev/urandom > ldp-provision.bin
    # The learner's key (wire format 3, docs/wire-format.md "Keys"): HMAC-SHA256(seed,
    # "ldp-bo link key v1") for the firmware's device id. Give it to the learner with LDP_KEYS.
    seed=$(od -An -v -tx1 ldp-provision.bin | tr -d ' \n')
    key=$(printf 'ldp-bo link key v1' | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$seed" | awk '{print $NF}')
    echo "5495605612387500033 $key" > ldp-link.key
    echo "made by qemu-run.sh; without ldp-state.bin this directory's board is lost" > board.txt
fi
head -c 32 /dev/urandom > ldp-entropy.bin
echo "USART1 on tcp 127.0.0.1:$port (device state: $PWD/ldp-state.bin)" >&2
exec qemu-system-arm -M netduinoplus2 -display none -monitor none \
    -semihosting-config enable=on,target=native \
    -serial "tcp:127.0.0.1:$port,server=on,wait=off,nodelay=on" -kernel "$1"
