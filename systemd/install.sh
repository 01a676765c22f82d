#!/usr/bin/env bash
# Install the launcher daemon on a Raspberry Pi (Raspberry Pi OS Bookworm or later).
#
#   sudo systemd/install.sh [--with-web] [--dry-run] [--now]
#
# Installs the package into a venv (/opt/launcher/venv, `pip install '.[pi]'`), the safe-off
# script (/opt/launcher/bin/launcher-safe-off), the docs (/opt/launcher/doc), the default config
# (/etc/launcher/launcher.toml, never overwriting one that is already there), creates the
# `launcher` system user in the gpio and dialout groups, installs and enables launcher.service.
# Running it again upgrades the package and the unit, keeps the config, and rebuilds a venv
# that a failed earlier run left broken.
#
#   --with-web  the all-in-one box: also `unoattack serve` on this Pi (the [web] extra,
#               unoattack-serve.service), talking to the daemon over the pty it keeps at
#               /run/launcher/tty; settings and join code in /etc/launcher/serve.env.
#               Once installed, later runs keep it.
#   --dry-run   print every step, change nothing (no root needed)
#   --now       also (re)start the service(s) at the end
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
WITH_WEB=0
TTY_LINK=/run/launcher/tty # the daemon's pty for the web referee (all-in-one drop-in)

usage() {
    sed -n '2,22s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

for arg in "$@"; do
    case "$arg" in
        --dry-run) DRY_RUN=1 ;;
        --now) START_NOW=1 ;;
        --with-web) WITH_WEB=1 ;;
        -h | --help) usage; exit 0 ;;
        *)
            echo "install.sh: unknown option '$arg'; allowed: --with-web, --dry-run, --now, --help" >&2
            exit 2
            ;;
    esac
done
if [[ $WITH_WEB -eq 0 && -e "$UNIT_DIR/unoattack-serve.service.d/all-in-one.conf" ]]; then
    WITH_WEB=1 # an upgrade keeps the all-in-one box an earlier run installed
    ALL_IN_ONE_KEPT=1
fi
EXTRAS=pi
if [[ $WITH_WEB -eq 1 ]]; then
    EXTRAS=pi,web
fi

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
# What must be there before anything changes, each said in one line with the package to install.
missing=() # Debian packages without which the install cannot work
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "install.sh: python3 3.11 or newer is needed (Raspberry Pi OS Bookworm has it)" >&2
    exit 1
fi
# Debian's python3 has the venv module but not ensurepip, which puts pip into a new venv.
if ! python3 -c 'import ensurepip' 2>/dev/null; then
    echo "install.sh: python3 -m venv cannot put pip into a venv (no ensurepip): apt install python3-venv" >&2
    missing+=(python3-venv)
fi
if command -v pinctrl >/dev/null; then
    note "pinctrl found: the safe-off script will use it"
elif command -v gpioset >/dev/null; then
    note "gpioset found: the safe-off script will use it (see hardware/pi-setup.md on strict_gpiod)"
else
    warn "neither pinctrl nor gpioset is installed; the safe-off script needs one: apt install gpiod"
fi
if ! command -v aplay >/dev/null; then
    warn "aplay is not installed; the box will play no sound: apt install alsa-utils"
fi
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "install.sh: nothing was changed; first: sudo apt install ${missing[*]}" >&2
    exit 1
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
# --system-site-packages lets Raspberry Pi OS's python3-lgpio satisfy the [pi] extra where PyPI
# has no wheel for the Pi (ARMv6, a Python without lgpio wheels): pip need not compile it.
# A venv an earlier run left broken (no interpreter, or no pip of its own: a first run without
# ensurepip) is rebuilt; the system's pip must not pass for the venv's own.
venv_problem() {
    local out from
    if [[ ! -e "$VENV/pyvenv.cfg" ]]; then
        echo "is not a venv (no pyvenv.cfg)"
    elif ! out=$("$VENV/bin/python" -m pip --version 2>/dev/null); then
        echo "cannot run pip (a broken interpreter, or no pip)"
    else
        from=${out#* from }
        from=${from%% (python*}
        case "$(realpath -m "$from")/" in
            "$(realpath -m "$VENV")"/*) ;;
            *) echo "has no pip of its own (only the system's, $from)" ;;
        esac
    fi
}
if [[ ! -e "$VENV" ]]; then
    run python3 -m venv --system-site-packages "$VENV"
elif problem=$(venv_problem) && [[ -z $problem ]]; then
    note "venv exists; upgrading the package in it"
else
    note "venv $VENV $problem (left by a failed run?); rebuilding it"
    run python3 -m venv --clear --system-site-packages "$VENV"
fi
run "$VENV/bin/python" -m pip install --quiet --upgrade "$SRC[$EXTRAS]"
case "$(uname -m)" in
    aarch64 | armv*)
        # gpiozero's pin factory for every Pi on a Bookworm kernel (hardware/pi-setup.md).
        if [[ $DRY_RUN -eq 0 ]] && ! "$VENV/bin/python" -c 'import lgpio' 2>/dev/null; then
            warn "lgpio is not installed (PyPI has no wheel for this Pi and Python):" \
                "apt install python3-lgpio, then run install.sh again"
        fi
        ;;
esac

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

# A unit (or drop-in) from systemd/ into $UNIT_DIR, its /opt/launcher and /etc/launcher paths
# following LAUNCHER_PREFIX / LAUNCHER_ETC if they were moved.
install_unit() {
    local from="$SRC/systemd/$1" to="$UNIT_DIR/$1"
    if [[ $DRY_RUN -eq 0 ]]; then
        install -d -m 0755 "$(dirname "$to")"
        sed -e "s#/opt/launcher/#$PREFIX/#g" -e "s#/etc/launcher/#$ETC/#g" "$from" >"$to"
        chmod 0644 "$to"
    fi
    note "$from -> $to (paths under $PREFIX, $ETC)"
}

step "installing launcher.service into $UNIT_DIR"
install_unit launcher.service
units=(launcher.service)

if [[ $WITH_WEB -eq 1 ]]; then
    step "the all-in-one box: unoattack serve on this Pi, over the daemon's pty $TTY_LINK"
    if [[ ${ALL_IN_ONE_KEPT:-0} -eq 1 ]]; then
        note "installed by an earlier run with --with-web; kept and upgraded"
    fi
    install_unit launcher.service.d/all-in-one.conf
    install_unit unoattack-serve.service
    install_unit unoattack-serve.service.d/all-in-one.conf
    run install -m 0644 "$SRC/docs/web.md" "$PREFIX/doc/"
    if [[ -e "$ETC/serve.env" ]]; then
        note "keeping the existing $ETC/serve.env (players, join code, address)"
    else
        # A join code of its own, kept across restarts and upgrades (6 digits, as serve makes).
        code=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
        code=$(printf '%06d' $((code % 1000000)))
        if [[ $DRY_RUN -eq 0 ]]; then
            install -m 0640 /dev/null "$ETC/serve.env"
            cat >"$ETC/serve.env" <<EOF
# unoattack serve on the all-in-one box (unoattack-serve.service; docs/web.md, hardware/pi-setup.md)
UNOATTACK_PORT=$TTY_LINK
UNOATTACK_PLAYERS=Ann,Bob,Cat,Dan
UNOATTACK_HTTP=0.0.0.0:8500
UNOATTACK_CODE=$code
EOF
        fi
        note "$ETC/serve.env: the box on $TTY_LINK, the page on port 8500, join code $code"
    fi
    units+=(unoattack-serve.service)
fi

run systemctl daemon-reload
run systemctl enable "${units[@]}"
if [[ $START_NOW -eq 1 ]]; then
    run systemctl restart "${units[@]}"
else
    note "start with: sudo systemctl start ${units[*]}; logs: journalctl -u launcher -f"
fi
if [[ $WITH_WEB -eq 1 ]]; then
    note "the page: http://<this Pi>:8500/ (journalctl -u unoattack-serve: URL, QR code)"
fi
if [[ $DRY_RUN -eq 1 ]]; then
    step "done (dry run: nothing was changed)"
else
    step "done"
fi
