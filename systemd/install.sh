#!/usr/bin/env bash
# Install the launcher daemon on a Raspberry Pi (Raspberry Pi OS Bookworm or later).
#
#   sudo systemd/install.sh [--dry-run] [--now]
#
# Installs the package into a venv (/opt/launcher/venv, `pip install '.[pi]'`), the safe-off
# script (/opt/launcher/bin/launcher-safe-off), the docs (/opt/launcher/doc), the default config
# (/etc/launcher/launcher.toml, never overwriting one that is already there), creates the
# `launcher` system user in the gpio and dialout groups, installs and enables launcher.service.
# Running it again upgrades the package and the unit and keeps the config.
#
#   --dry-run   print every step, change nothing (no root needed)
#   --now       also (re)start the service at the end
#
# The paths can be moved (the unit is rewritten to match): LAUNCHER_PREFIX (/opt/launcher),
# LAUNCHER_ETC (/etc/launcher), LAUNCHER_UNIT_DIR (/etc/systemd/system).
set -euo pipefail

SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="${LAUNCHER_PREFIX:-/opt/launcher}"
ETC="${LAUNCHER_ETC:-/etc/launcher}"
UNIT_DIR="${LAUNCHER_UNIT_DIR:-/etc/systemd/system}"
SERVICE_USER=launcher # the unit says User=launcher
VENV="$PREFIX/venv"
DRY_RUN=0
START_NOW=0

usage() {
    sed -n '2,17s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

for arg in "$@"; do
    case "$arg" in
        --dry-run) DRY_RUN=1 ;;
        --now) START_NOW=1 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "install.sh: unknown option '$arg'; allowed: --dry-run, --now, --help" >&2; exit 2 ;;
    esac
done

step() { printf '==> %s\n' "$*"; }
note() { printf '    %s\n' "$*"; }
warn() { printf 'install.sh: warning: %s\n' "$*" >&2; }

# Print a command, and run it unless this is a dry run.
run() {
    printf '    $'
    printf ' %q' "$@"
    printf '\n'
    if [[ $DRY_RUN -eq 0 ]]; then
        "$@"
    fi
}

if [[ $DRY_RUN -eq 0 && $(id -u) -ne 0 ]]; then
    echo "install.sh: must run as root (sudo systemd/install.sh), or try --dry-run" >&2
    exit 1
fi

step "checking the system"
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "install.sh: python3 3.11 or newer is needed (Raspberry Pi OS Bookworm has it)" >&2
    exit 1
fi
if command -v pinctrl >/dev/null; then
    note "pinctrl found: the safe-off script will use it"
elif command -v gpioset >/dev/null; then
    note "gpioset found: the safe-off script will use it (see hardware/pi-setup.md on strict_gpiod)"
else
    warn "neither pinctrl nor gpioset is installed; the safe-off script needs one: apt install gpiod"
fi

step "creating the service user '$SERVICE_USER'"
if id "$SERVICE_USER" >/dev/null 2>&1; then
    note "user $SERVICE_USER exists"
else
    run useradd --system --user-group --home-dir /var/lib/launcher --no-create-home \
        --shell /usr/sbin/nologin --comment "UNO Attack launcher" "$SERVICE_USER"
fi
for group in gpio dialout; do
    if ! getent group "$group" >/dev/null; then
        # The unit names both groups (SupplementaryGroups=); a missing one stops it starting.
        warn "group $group does not exist (not Raspberry Pi OS?); creating it: add a udev rule" \
            "giving it the GPIO or serial devices (hardware/pi-setup.md)"
        run groupadd --system "$group"
    fi
    run usermod --append --groups "$group" "$SERVICE_USER"
done

step "installing the package into $VENV"
# --system-site-packages lets the Pi OS packages python3-lgpio / python3-rpi.gpio satisfy the
# [pi] extra, so pip need not compile them on the Pi.
if [[ -x "$VENV/bin/python" ]]; then
    note "venv exists; upgrading the package in it"
else
    run python3 -m venv --system-site-packages "$VENV"
fi
run "$VENV/bin/python" -m pip install --quiet --upgrade "$SRC[pi]"

step "installing the safe-off script and docs into $PREFIX"
run install -d -m 0755 "$PREFIX/bin" "$PREFIX/doc"
# Run the script with the venv's interpreter: it needs Python 3.11 (tomllib), nothing else.
if [[ $DRY_RUN -eq 0 ]]; then
    sed "1s|.*|#!$VENV/bin/python3|" "$SRC/systemd/launcher-safe-off" >"$PREFIX/bin/launcher-safe-off"
    chmod 0755 "$PREFIX/bin/launcher-safe-off"
fi
note "$SRC/systemd/launcher-safe-off -> $PREFIX/bin/launcher-safe-off (#!$VENV/bin/python3)"
run install -m 0644 "$SRC/hardware/README.md" "$SRC/hardware/bom.md" "$SRC/hardware/pi-setup.md" \
    "$PREFIX/doc/"

step "installing the config into $ETC"
run install -d -m 0755 "$ETC"
if [[ -e "$ETC/launcher.toml" ]]; then
    note "keeping the existing $ETC/launcher.toml (the new default is in $PREFIX/doc/launcher.toml)"
else
    run install -m 0644 "$SRC/hardware/launcher.toml" "$ETC/launcher.toml"
fi
run install -m 0644 "$SRC/hardware/launcher.toml" "$PREFIX/doc/launcher.toml"
if [[ $DRY_RUN -eq 0 ]] && ! "$VENV/bin/launcher" config check "$ETC/launcher.toml" >/dev/null; then
    warn "$ETC/launcher.toml does not pass 'launcher config check'; the service will not start"
fi

step "installing launcher.service into $UNIT_DIR"
# The unit names /opt/launcher and /etc/launcher; follow LAUNCHER_PREFIX / LAUNCHER_ETC if moved.
if [[ $DRY_RUN -eq 0 ]]; then
    install -d -m 0755 "$UNIT_DIR"
    sed -e "s#/opt/launcher/#$PREFIX/#g" -e "s#/etc/launcher/#$ETC/#g" \
        "$SRC/systemd/launcher.service" >"$UNIT_DIR/launcher.service"
    chmod 0644 "$UNIT_DIR/launcher.service"
fi
note "$SRC/systemd/launcher.service -> $UNIT_DIR/launcher.service (paths under $PREFIX, $ETC)"
run systemctl daemon-reload
run systemctl enable launcher.service
if [[ $START_NOW -eq 1 ]]; then
    run systemctl restart launcher.service
else
    note "start it with: sudo systemctl start launcher; logs: journalctl -u launcher -f"
fi
if [[ $DRY_RUN -eq 1 ]]; then
    step "done (dry run: nothing was changed)"
else
    step "done"
fi
