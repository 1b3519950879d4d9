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
# Every file here that holds a secret (the seed, the state records QEMU creates for the
# firmware, the entropy, the key) is its owner's only (umask 077), and the seed never appears on
# a process's command line (the key is computed with shell builtins and openssl reading stdin).
set -euo pipefail
umask 077
port=${LDP_QEMU_PORT:-4555}

# HMAC-SHA256(ldp-provision.bin, "ldp-bo link key v1") in hex (docs/wire-format.md "Keys"),
# built from two SHA-256 digests of stdin: the key bytes go through builtins and pipes only.
link_key() {
    local -a k
    k=($(od -An -v -tu1 ldp-provision.bin))
    local ipad="" opad="" i b
    for ((i = 0; i < 64; i++)); do
        b=${k[i]:-0}
        ipad+=$(printf '\\%03o' $((b ^ 0x36)))
        opad+=$(printf '\\%03o' $((b ^ 0x5c)))
    done
    { printf "$opad"; { printf "$ipad"; printf 'ldp-bo link key v1'; } | openssl dgst -sha256 -binary; } |
        openssl dgst -sha256 | awk '{print $NF}'
}
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
    head -c 32 /dev/urandom > ldp-provision.bin
    # The learner's key (docs/wire-format.md "Keys") for the firmware's device id. Give it to
    # the learner with LDP_KEYS.
    echo "5495605612387500033 $(link_key)" > ldp-link.key
    echo "made by qemu-run.sh; without ldp-state.bin this directory's board is lost" > board.txt
fi
head -c 32 /dev/urandom > ldp-entropy.bin
chmod 600 ldp-*.bin 2>/dev/null || true # files of a board made before this script kept them private
echo "USART1 on tcp 127.0.0.1:$port (device state: $PWD/ldp-state.bin)" >&2
exec qemu-system-arm -M netduinoplus2 -display none -monitor none \
    -semihosting-config enable=on,target=native \
    -serial "tcp:127.0.0.1:$port,server=on,wait=off,nodelay=on" -kernel "$1"
