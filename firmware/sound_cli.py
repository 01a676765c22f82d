"""`launcher sound check | new | play`: look at, start and try a sound pack.

- ``check [PACK]`` checks a pack folder (default: the config's ``[sound] pack``) and lists each
  event's sounds with their weights and lengths; a bad pack is one line, exit 78.
- ``new DIR`` writes the synthesised default pack into DIR: a starting point for your own.
- ``play EVENT`` plays one cue of the config's pack through the config's player (``aplay`` on
  the Pi: try the speaker wiring); exit 1 when no player can be started.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path

import i18n
from common.errors import LauncherError, UsageError
from firmware.sound_pack import EVENTS, Picker, SoundPack, load, resolve


def _config(path: str | None):  # -> firmware.config.Config
    from firmware.config import default_path
    from firmware.config import load as load_config

    return load_config(path or default_path())


def _pack_of(args: argparse.Namespace) -> SoundPack:
    if getattr(args, "pack", None):
        return load(resolve(args.pack, base=Path.cwd()))
    cfg = _config(args.config)
    return load(resolve(cfg.sound.pack, base=Path(cfg.path).parent))


def describe(pack: SoundPack) -> list[str]:
    """What ``launcher sound check`` prints."""
    lines: list[str] = [
        i18n._("{path}: OK, pack {name!r}, licence {licence}").format(
            path=pack.root, name=pack.name, licence=pack.licence
        )
    ]
    for event in EVENTS:  # event names stay as `sound play EVENT` and the config take them
        sounds = pack.sounds(event)
        if not sounds:
            silent = i18n._("(silent)")
            lines.append(f"  {event:<10} {silent}")
            continue
        listed = ", ".join(
            (
                i18n._("{file} ({ms} ms)")
                if s.weight == 1
                else i18n._("{file} ({ms} ms, weight {weight})")
            ).format(file=s.file, ms=i18n.number(s.duration_ms), weight=i18n.number(s.weight))
            for s in sounds
        )
        lines.append(f"  {event:<10} {listed}")
    return lines


def _check(args: argparse.Namespace) -> int:
    print("\n".join(describe(_pack_of(args))))
    return 0


def _new(args: argparse.Namespace) -> int:
    from firmware.sound_synth import make_pack

    out = Path(args.dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(
            i18n._("{path}: exists and is not an empty folder; name a new one").format(path=out)
        )
    make_pack(out)
    print(
        i18n._(
            "{path}: the default pack; edit pack.toml, add WAV files, set [sound] pack = {quoted}"
        ).format(path=out, quoted=repr(str(out)))
    )
    return 0


def _play(args: argparse.Namespace) -> int:
    if args.event not in EVENTS:
        raise UsageError(
            i18n._("unknown event {event!r}; known: {known}").format(
                event=args.event, known=", ".join(EVENTS)
            )
        )
    cfg = _config(args.config)
    pack = load(resolve(cfg.sound.pack, base=Path(cfg.path).parent))
    sound = Picker(pack, seed=cfg.sound.seed).pick(args.event)
    if sound is None:
        print(
            i18n._("the pack {name!r} leaves {event} silent").format(
                name=pack.name, event=args.event
            )
        )
        return 0
    if cfg.sound.player == "none":
        raise LauncherError(i18n._('[sound] player = "none": this box plays nothing'))
    player = shutil.which("aplay")
    if player is None:
        raise LauncherError(
            i18n._("aplay not found: install alsa-utils (apt-get install alsa-utils)")
        )
    cmd = [player, "-q", *(["-D", cfg.sound.device] if cfg.sound.device else []), str(sound.path)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise LauncherError(
            i18n._("aplay could not play {file}: {error}").format(file=sound.file, error=last)
        )
    print(
        i18n._("played {file} ({ms} ms) for {event}").format(
            file=sound.file, ms=sound.duration_ms, event=args.event
        )
    )
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `launcher sound check | new | play`."""
    parser = subparsers.add_parser("sound", help=i18n._("check, start or try a sound pack"))
    sub = parser.add_subparsers(dest="sound_command", metavar="ACTION")
    sub.required = True
    check = sub.add_parser("check", help=i18n._("check a sound pack and list its sounds"))
    check.add_argument(
        "pack", nargs="?", metavar="PACK", help=i18n._("pack folder (default: config's)")
    )
    check.add_argument(
        "--config", metavar="FILE", help=i18n._("config file (default: the packaged one)")
    )
    check.set_defaults(func=_check)
    new = sub.add_parser("new", help=i18n._("write the default pack into DIR, to start your own"))
    new.add_argument("dir", metavar="DIR")
    new.set_defaults(func=_new)
    play = sub.add_parser(
        "play", help=i18n._("play one cue through the box's player (try the speaker)")
    )
    play.add_argument(
        "event", metavar="EVENT", help=i18n._("one of: {events}").format(events=", ".join(EVENTS))
    )
    play.add_argument(
        "--config", metavar="FILE", help=i18n._("config file (default: the packaged one)")
    )
    play.set_defaults(func=_play)
