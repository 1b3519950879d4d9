#!/usr/bin/env bash
# The MQTT broker (Mosquitto) for `host-sim fleet devices` and `--device mqtt://127.0.0.1:1883`.
#   scripts/broker.sh install   installs the Debian package `mosquitto` if the binary is missing
#   scripts/broker.sh start     starts it on 127.0.0.1:1883 (scripts/mosquitto.conf), in the background
#   scripts/broker.sh stop      stops the broker this script started
#   scripts/broker.sh status    says whether it runs
# The pid file and the log are in target/mosquitto/. The tests (tests/tests/mqtt_fleet.rs) start
# their own broker on a free port and need only `install`.
set -euo pipefail
cd "$(dirname "$0")/.."
state=target/mosquitto
pidfile=$state/mosquitto.pid
logfile=$state/mosquitto.log

find_mosquitto() {
    if command -v mosquitto >/dev/null 2>&1; then
        command -v mosquitto
    elif [[ -x /usr/sbin/mosquitto ]]; then
        echo /usr/sbin/mosquitto
    else
        return 1
    fi
}

running() {
    [[ -f $pidfile ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

case "${1:-}" in
install)
    if find_mosquitto >/dev/null; then
        echo "mosquitto is installed: $(find_mosquitto)"
        exit 0
    fi
    if [[ $(id -u) -ne 0 ]]; then
        echo "mosquitto is missing; run as root (or: sudo apt-get install mosquitto)" >&2
        exit 1
    fi
    # Without systemd the package's postinst cannot start the service; policy-rc.d answers
    # "do not start services" so the install does not fail on it. Our broker is started by
    # `start`, never by the package.
    policy=/usr/sbin/policy-rc.d
    created_policy=0
    if [[ ! -e $policy ]]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod +x "$policy"
        created_policy=1
    fi
    trap '[[ $created_policy -eq 1 ]] && rm -f "$policy"' EXIT
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mosquitto >/dev/null
    echo "installed: $(find_mosquitto)"
    ;;
start)
    if running; then
        echo "mosquitto already runs (pid $(cat "$pidfile"))"
        exit 0
    fi
    bin=$(find_mosquitto) || { echo "mosquitto is not installed: scripts/broker.sh install" >&2; exit 1; }
    mkdir -p "$state"
    # The repo's config plus the pid file and log under target/ (absolute paths).
    conf=$state/mosquitto.conf
    cat scripts/mosquitto.conf >"$conf"
    printf 'pid_file %s\nlog_dest file %s\n' "$PWD/$pidfile" "$PWD/$logfile" >>"$conf"
    # Started as root, mosquitto would switch to the user `mosquitto`, who cannot write under
    # target/: stay the user who started it (ignored when not root).
    printf 'user %s\n' "$(id -un)" >>"$conf"
    "$bin" -c "$conf" -d
    for _ in $(seq 50); do
        running && break
        sleep 0.1
    done
    if ! running; then
        echo "mosquitto did not start; see $logfile" >&2
        exit 1
    fi
    echo "mosquitto runs on 127.0.0.1:1883 (pid $(cat "$pidfile"), log $logfile)"
    ;;
stop)
    if running; then
        pid=$(cat "$pidfile")
        kill "$pid"
        # Wait (at most 5 s) until it has let go of its port, so that a start right after works.
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        rm -f "$pidfile"
        echo "stopped"
    else
        echo "not running"
    fi
    ;;
status)
    if running; then
        echo "mosquitto runs (pid $(cat "$pidfile"))"
    else
        echo "not running"
        exit 3
    fi
    ;;
*)
    echo "usage: scripts/broker.sh install|start|stop|status" >&2
    exit 2
    ;;
esac
