"""`unoattack demo`: a whole game with bots, every hit a real press of a (mock) box.

The demo starts `launcher run --mock --port pty` as a child process (mock pins plus the plant, the
simulated mechanism), connects to it with `BoxClient`, and plays a `Game` to the target with a mix
of `HeuristicBot` and `RandomBot`. Every hit is a press over the serial link and takes as many
cards off the engine's virtual launcher pile as the box's fire event says it ejected; a forced
Hit 2 is two presses, Hit-Fire is presses until the box fires. With `--deck classic` the launcher
is the draw pile: every draw is a `dispense` of exactly the cards drawn. After every round the
engine's pile is checked against the plant's hopper (cards are conserved).

`--speed` divides the mechanism's timings (`settle_ms` included, floored) in a copy of the
default config, so a whole game fits in well under a minute; safety limits are left as they are.
The child is always stopped (SIGTERM, then SIGKILL) on the way out: normal end, error, Ctrl-C,
SIGTERM, or the demo dying (the child gets SIGTERM from the kernel when its parent goes).
"""

from __future__ import annotations

import argparse
import atexit
import collections
import contextlib
import json
import os
import re
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

from engine.boxport import check_speed, mock_box, mock_config
from engine.errors import InputError, UnoError
from engine.words import plural, shown
from firmware.commandline import CtrlC, decimal, die_with_parent, say_error, whole_number
from i18n import _, number
from wire.text import news

NAMES = ("Ann", "Bob", "Cat", "Dan", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jon")
DEFAULT_SPEED = 5.0
START_TIMEOUT_S = 30.0

# Timings the demo shortens: (section, key) -> the lowest value the config checker allows or the
# plant can simulate faithfully (a card must stay in the beam long enough for the daemon's
# edge callbacks to count it). Limits ([limits]) are never touched.
SCALED: dict[tuple[str, str], float] = {
    ("plant", "feed_interval_ms"): 30,
    ("plant", "feed_jitter_ms"): 0,
    ("plant", "beam_ms"): 6,
    ("plant", "spinup_ms"): 0,
    ("timing", "card_timeout_ms"): 200,
    ("timing", "cooldown_ms"): 20,  # time for a card behind the burst to reach the beam
    # Motor: the box keeps counting late cards this long after the feed stops, before it reports
    # the fire. Never below one (scaled) feed interval plus one beam time, so a card a coasting
    # roller still brings counts in its burst; see _settle_floor.
    ("timing", "settle_ms"): 0,
    ("timing", "hold_clear_s"): 0.5,
    ("timing", "debounce_ms"): 0,
    ("ejector", "soft_start_ms"): 0,
    ("ejector", "reverse_pulse_ms"): 10,
    ("ejector", "pulse_ms"): 1,
    ("ejector", "recovery_ms"): 0,
    ("ejector", "flywheel_spinup_ms"): 0,
    ("ejector", "retract_ms"): 1,  # the reverse phase after every motor burst
}


# ---------------------------------------------------------------------------------------------
# The config the child runs with


def default_config_path() -> Path:
    """The documented default config: hardware/launcher.toml in a checkout, else the copy
    packaged with the firmware."""
    here = Path(__file__).resolve().parent.parent / "hardware" / "launcher.toml"
    if here.is_file():
        return here
    import importlib.resources

    return Path(str(importlib.resources.files("firmware").joinpath("launcher.toml")))


_ASSIGN = re.compile(r"^(\s*)([A-Za-z_][A-Za-z0-9_]*)(\s*=\s*)([^#\n]*?)(\s*(#.*)?)$")


# The config sections with a `seed`, and the offset of each from the demo's seed.
_SEEDED = {"jam": 1, "plant": 2, "patterns": 3, "sound": 4}


def demo_config(text: str, *, speed: float, players: int, seed: int) -> str:
    """`text` (a launcher.toml) with its timings divided by `speed`, one aiming angle per seat,
    and the jam model, plant, patterns and sounds seeded from `seed`. Comments and every other
    key are kept."""
    if speed <= 0:
        raise InputError(_("--speed {speed}: must be above 0").format(speed=f"{speed:g}"))
    section = ""
    out = []
    step = 160 / max(1, players - 1)
    angles = ", ".join(f"{-80 + round(i * step)}" for i in range(players))
    values: dict[str, float] = {}
    lines = text.splitlines()
    for line in lines:
        m = _ASSIGN.match(line)
        if line.strip().startswith("["):
            section = line.strip().strip("[]").strip()
        elif (
            m
            and section == "plant"
            and m.group(2)
            in (
                "feed_interval_ms",
                "feed_jitter_ms",
                "beam_ms",
            )
        ):
            values[m.group(2)] = float(m.group(4))
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped.strip("[]").strip()
            out.append(line)
            continue
        m = _ASSIGN.match(line)
        if not m:
            out.append(line)
            continue
        indent, key, eq, value, rest = m.group(1), m.group(2), m.group(3), m.group(4), m.group(5)
        new: str | None = None
        floor = SCALED.get((section, key))
        if floor is not None:
            number = float(value) / speed
            if key == "feed_jitter_ms":
                # keep the jitter a small share of the (possibly floored) interval
                interval = max(
                    SCALED[("plant", "feed_interval_ms")], values["feed_interval_ms"] / speed
                )
                number = min(number, interval / 4)
            elif key == "settle_ms":
                floor = _settle_floor(values, speed)
            number = max(floor, number) if number > 0 else 0.0  # what is off (0) stays off
            new = f"{number:.2f}" if key.endswith("_s") else str(round(number))
        elif section == "patterns" and key == "time_scale":
            new = f"{min(1.0, float(value) / speed):.4g}"  # suspense pauses shorten too
        elif section == "box" and key == "seats":
            new = str(max(2, players))
        elif section == "servo" and key == "seat_angles":
            new = f"[{angles}]"
        elif section in _SEEDED and key == "seed":
            # every random choice of the box replays with the demo's seed (0 would be "new")
            new = str(seed % 1_000_000_007 + _SEEDED[section])
        out.append(f"{indent}{key}{eq}{new if new is not None else value}{rest}")
    return "\n".join(out) + "\n"


def _settle_floor(plant: dict[str, float], speed: float) -> float:
    """The shortest settle window that still counts a card the roller coasts on with: it comes
    one feed interval (plus at most the jitter) after the last planned card and breaks the beam
    for `beam_ms`, all as scaled and floored above: 38 ms at the default config's floors, about
    six beam times."""

    def scaled(key: str) -> float:
        return max(SCALED[("plant", key)], plant.get(key, SCALED[("plant", key)]) / speed)

    interval = scaled("feed_interval_ms")
    jitter = min(plant.get("feed_jitter_ms", 0.0) / speed, interval / 4)
    return interval + jitter + scaled("beam_ms")


# ---------------------------------------------------------------------------------------------
# The child process


class MockBox:
    """`launcher run --mock --port pty` as a child process, in a temporary directory.

    `start()` returns the pty path; `stop()` terminates the child (SIGTERM, wait, SIGKILL) and is
    idempotent. The plant keeps its hopper in `plant_state` (JSON), the daemon its journal in
    `journal`; the child's log goes to `log_path`.
    """

    def __init__(self, config_text: str, *, workdir: Path | None = None) -> None:
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if workdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="unoattack-demo-")
            workdir = Path(self._tmp.name)
        self.workdir = Path(workdir)
        self.config_path = self.workdir / "launcher.toml"
        self.config_path.write_text(config_text, encoding="utf-8")
        self.journal = self.workdir / "journal.db"
        self.plant_state = self.workdir / "plant.json"
        self.log_path = self.workdir / "launcher.log"
        self.sound_log = self.workdir / "sounds.jsonl"  # what the box would have played
        self.proc: subprocess.Popen[bytes] | None = None
        self.port: str | None = None
        self._log: Any = None

    def command(self) -> list[str]:
        """The child's command line."""
        return [
            sys.executable,
            "-m",
            "firmware.cli",
            "run",
            "--mock",
            "--port",
            "pty",
            "--journal",
            str(self.journal),
            "--plant-state",
            str(self.plant_state),
            "--config",
            str(self.config_path),
            "--sound-log",
            str(self.sound_log),
        ]

    def sounds(self) -> dict[str, int]:
        """How many cues of each event the box would have played (its `--sound-log`), most
        frequent first; empty when the config has no sound."""
        counts: collections.Counter[str] = collections.Counter()
        with contextlib.suppress(OSError):
            for line in self.sound_log.read_text(encoding="utf-8").splitlines():
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    counts[str(json.loads(line)["event"])] += 1
        return dict(counts.most_common())

    def start(self, timeout: float = START_TIMEOUT_S) -> str:
        """Start the child and wait for its `PORT /dev/pts/N` line; returns the port."""
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env.pop("GPIOZERO_PIN_FACTORY", None)
        self.proc = subprocess.Popen(
            self.command(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
            start_new_session=True,  # Ctrl-C reaches the demo, which stops the child itself
            preexec_fn=die_with_parent if sys.platform.startswith("linux") else None,
        )
        atexit.register(self.stop)
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        buf = b""
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self.stop()
                raise UnoError(
                    f"the mock box did not start within {timeout:g} s: {self.log_tail()}"
                )
            ready, _w, _x = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 4096)
                if not chunk:
                    code = self.proc.wait()
                    self.stop()
                    raise UnoError(f"the mock box exited with code {code}: {self.log_tail()}")
                buf += chunk
        first = buf.split(b"\n", 1)[0].decode(errors="replace").strip()
        if not first.startswith("PORT "):
            self.stop()
            raise UnoError(f"the mock box said {first!r} instead of `PORT <path>`")
        self.port = first.split(None, 1)[1]
        return self.port

    @property
    def pid(self) -> int | None:
        """The child's process id (None before start)."""
        return None if self.proc is None else self.proc.pid

    def plant(self) -> dict[str, Any]:
        """The plant's state file: `hopper` and `ejected_total`."""
        return json.loads(self.plant_state.read_text(encoding="utf-8"))

    def log_tail(self, lines: int = 3) -> str:
        """The last lines of the child's log, on one line (for error messages)."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        tail = [ln for ln in text.splitlines() if ln.strip()][-lines:]
        return " | ".join(tail) or "(empty log)"

    def stop(self, timeout: float = 5.0) -> int | None:
        """Stop the child: SIGTERM, wait up to `timeout`, then SIGKILL. Idempotent."""
        proc, code = self.proc, None
        if proc is not None:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.terminate()
                try:
                    proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        proc.kill()
                    proc.wait()
            code = proc.returncode
            if proc.stdout is not None:
                proc.stdout.close()
        if self._log is not None:
            self._log.close()
            self._log = None
        return code

    def cleanup(self) -> None:
        """Stop the child and remove the temporary directory."""
        self.stop()
        atexit.unregister(self.stop)
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> MockBox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


# ---------------------------------------------------------------------------------------------
# Rendering

_ANSI = {"R": "31", "Y": "33", "G": "32", "B": "34", None: "35"}


def color_wanted(out: TextIO) -> bool:
    """Colour only on a terminal that shows it: not when piped, not with NO_COLOR set
    (no-color.org), not on a terminal that declares itself `dumb` (Emacs shell, serial
    consoles), which prints escape codes as garbage."""
    if "NO_COLOR" in os.environ or os.environ.get("TERM", "") == "dumb":
        return False
    try:
        return bool(out.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class Screen:
    """Readable live output; colours on a terminal (unless NO_COLOR, or TERM=dumb)."""

    def __init__(self, out: TextIO, names: list[str]) -> None:
        self.out = out
        self.names = names
        self.color = color_wanted(out)

    def line(self, text: str = "") -> None:
        """Print one line now."""
        print(text, file=self.out, flush=True)

    def card(self, card: Any, text: str | None = None) -> str:
        """A card in notation (or `text` about it), coloured on a terminal."""
        text = str(card) if text is None else text

        if not self.color:
            return text
        return f"\x1b[{_ANSI.get(card.color, '0')}m{text}\x1b[0m"

    def bold(self, text: str) -> str:
        """Bold on a terminal."""
        return f"\x1b[1m{text}\x1b[0m" if self.color else text


# ---------------------------------------------------------------------------------------------
# The game


class Spectator:
    """Whoever follows the demo's game besides the screen: told of every round, move and box
    event as it happens. `demo --web` has one (the table referee and the web page,
    engine/web/demo_web.py); this one does nothing. A method may raise to end the game."""

    def round_started(self, rnd: Any) -> None:
        """A round was dealt and its first card turned up."""

    def before(self, rnd: Any, act: Any) -> None:
        """`act` is about to be applied to `rnd` (a hit: the box is about to be pressed)."""

    def after(self, rnd: Any, act: Any) -> None:
        """`act` was applied to `rnd`."""

    def round_over(self, rnd: Any) -> None:
        """`rnd` is over, before it is scored."""

    def box_event(self, event: dict[str, Any]) -> None:
        """An event of the box that is not a fire result (state, refill, jam, ...)."""

    def fired(self, seat: int, event: dict[str, Any]) -> None:
        """The fire result of a press for `seat` (-1: a dispense)."""


class Demo:
    """One demo game: bots, a `Game`, a `BoxLauncher` over the mock box, and the tallies."""

    def __init__(
        self,
        box: MockBox,
        client: Any,
        *,
        players: int,
        seed: int,
        deck: str,
        target: int,
        screen: Screen,
        spectator: Spectator | None = None,
    ) -> None:
        from engine.bots import HeuristicBot, RandomBot
        from engine.box import BoxLauncher
        from engine.cards import load_deck
        from engine.game import Game
        from engine.rules import PRESET_NAMES, rules_for

        self.box = box
        self.client = client
        self.screen = screen
        self.spectator = spectator or Spectator()
        self.names = list(NAMES[:players])
        self.bots: list[Any] = [
            (HeuristicBot if s % 2 == 0 else RandomBot)(seed * 100 + s) for s in range(players)
        ]
        self.kinds = ["heuristic" if s % 2 == 0 else "random" for s in range(players)]
        self.launcher = BoxLauncher(client, on_fire=self._on_fire, on_event=self._on_event)
        preset = deck if deck in PRESET_NAMES else "attack"
        self.game = Game(
            load_deck(deck),
            rules_for(preset, players),
            self.launcher,
            players,
            target=target,
            seed=seed,
            log=False,
        )
        self.states: list[str] = []
        self.checks: list[dict[str, Any]] = []
        self.turns = 0
        self.context = ""  # how the next press line starts ("  Bob (5) hits:")

    @classmethod
    def for_args(
        cls,
        args: argparse.Namespace,
        box: MockBox,
        client: Any,
        screen: Screen,
        spectator: Spectator | None = None,
    ) -> Demo:
        """The game `unoattack demo`'s options ask for (`--players`, `--seed`, `--deck`,
        `--target`), on `box`."""
        return cls(
            box,
            client,
            players=args.players,
            seed=args.seed,
            deck=args.deck,
            target=args.target,
            screen=screen,
            spectator=spectator,
        )

    # -- box callbacks ----------------------------------------------------------------------
    def _on_event(self, event: dict[str, Any]) -> None:
        self.spectator.box_event(event)
        kind = event.get("kind")
        if kind == "state":
            if not self.states:
                self.states.append(str(event.get("from")))
            self.states.append(str(event.get("to")))
        elif kind == "jam":  # what the demo does about it (the box event's text is news())
            self.screen.line(
                "    "
                + _("box JAMMED (press {press}): clearing it").format(press=event.get("press_id"))
            )
        elif kind in ("refill", "empty", "fault"):
            self.screen.line("    " + str(news(event)))

    def _on_fire(self, seat: int, event: dict[str, Any]) -> None:
        self.spectator.fired(seat, event)
        ejected = int(event.get("ejected") or 0)
        who = self.names[seat] if seat >= 0 else _("dispense")
        got = plural(ejected, "card") if ejected else _("dry")
        # A dispense (a classic draw) asks for exact cards: the jam model's dry streak is moot.
        streak = (
            " " + _("(dry streak {streak})").format(streak=event.get("dry_streak"))
            if seat >= 0
            else ""
        )
        reason = event.get("reason")
        note = "" if reason in ("fired", "dry") else f" [{reason}]"
        if event.get("strays"):
            note += " " + _("+{count} slipped out after the burst").format(count=event["strays"])
        states = ""
        if self.states:
            states = "  " + _("box {states}").format(states=">".join(self.states))
            self.states = []
        context, self.context = self.context, f"    {who}:"
        press = _("press {press} -> {got}").format(press=event.get("press_id"), got=got)
        self.screen.line(f"{context} {press}{note}{streak}{states}")

    # -- play -------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        """Play the whole game; returns the summary."""
        from engine.errors import RuleError

        scr = self.screen
        game = self.game
        started = time.monotonic()
        title = "UNO" if game.rules.preset == "classic" else "UNO Attack"
        scr.line(
            scr.bold(
                _("{title} demo: {players} players to {target} points,").format(
                    title=title, players=len(self.names), target=game.target
                )
            )
            + " "
            + _("{deck} deck, box on {port}").format(deck=game.deck.name, port=self.client.port)
        )
        scr.line(
            "  " + ", ".join(f"{n} ({k})" for n, k in zip(self.names, self.kinds, strict=True))
        )
        while not game.over:
            rnd = game.start_round()
            self.launcher.drain()
            scr.line()
            scr.line(
                scr.bold(_("Round {round}").format(round=game.rounds_played + 1))
                + ": "
                + _("{dealer} deals, {card} turned up, {cards} in the launcher").format(
                    dealer=self.names[rnd.dealer],
                    card=scr.card(rnd.top, shown(rnd.top)),
                    cards=plural(len(rnd.pile), "card"),
                )
            )
            self._show_pending(rnd)
            self.spectator.round_started(rnd)
            while not rnd.over:
                for seat in rnd.seats:
                    act = self.bots[seat].react(rnd, seat)
                    if act is not None and act.kind in ("uno", "catch"):
                        with contextlib.suppress(RuleError):
                            self._apply(rnd, act)
                if rnd.over:
                    break
                actor = rnd.actor
                assert actor is not None
                self._apply(rnd, self.bots[actor].choose(rnd, actor))
            self.launcher.drain()
            self.spectator.round_over(rnd)
            result = game.finish_round()
            self._check_conservation(game.rounds_played, len(rnd.pile))
            self._show_scores(result)
        elapsed = time.monotonic() - started
        return self._summary(elapsed)

    def _apply(self, rnd: Any, act: Any) -> None:
        scr = self.screen
        who = self.names[act.seat]
        before = [d.to_dict() for d in rnd.pending]
        size = len(rnd.hands[act.seat])
        if act.kind == "play":
            cards = " ".join(scr.card(c, shown(c)) for c in act.cards)
            text = "  " + _("{player} ({count}) plays {cards}").format(
                player=who, count=size, cards=cards
            )
            if act.cards[0].is_wild and act.color:
                text += " " + _("naming {colour}").format(colour=act.color)
            if act.target is not None:
                text += " " + _("at {player}").format(player=self.names[act.target])
        elif act.kind in ("hit", "draw"):
            # The press line (printed when the box answers) carries this context. A classic
            # draw is a `dispense` of exactly the cards owed.
            if before and before[0]["seat"] == act.seat:
                due = before[0]
                if "draws" in due:
                    said = _("{player} must draw {count}:").format(player=who, count=due["draws"])
                elif due.get("until_fire"):
                    said = _("{player} must hit (until cards fire):").format(player=who)
                else:
                    said = _("{player} must hit ({count} to go):").format(
                        player=who, count=due.get("hits")
                    )
                self.context = "    " + said
            elif act.kind == "hit":
                self.context = "  " + _("{player} ({count}) hits:").format(player=who, count=size)
            else:
                self.context = "  " + _("{player} ({count}) draws:").format(player=who, count=size)
        self.spectator.before(rnd, act)
        rnd.apply(act)
        self.turns += 1
        if act.kind == "play":
            shed = size - len(rnd.hands[act.seat]) - len(act.cards)
            if act.cards[0].face == "DA" and shed > 0:
                text += " " + _("and discards {count} more").format(count=shed)
            scr.line(text)
        after = [d.to_dict() for d in rnd.pending]
        penalised = bool(after) and after[0]["seat"] == act.seat and after != before
        if act.kind == "uno":
            said = _("{player}: UNO! (a false call)") if penalised else _("{player}: UNO!")
            scr.line("    " + said.format(player=who))
        elif act.kind == "catch":
            target = self.names[act.target]
            if penalised:
                said = _("{player} accuses {other} wrongly")
            else:
                said = _("{player} catches {other} without UNO")
            scr.line("    " + said.format(player=who, other=target))
        elif act.kind not in ("play", "hit", "draw"):
            scr.line(f"  {who} {act.kind}")
        if after and after != before and act.kind not in ("hit", "draw"):
            self._show_pending(rnd)
        if rnd.winner is not None and rnd.winner == act.seat and act.kind == "play":
            scr.line(scr.bold("  " + _("{player} is out!").format(player=who)))
        self.spectator.after(rnd, act)

    def _show_pending(self, rnd: Any) -> None:
        for due in rnd.pending:
            d = due.to_dict()
            who = self.names[d["seat"]]
            if "draws" in d:
                said = _("-> {player} must draw {cards}").format(
                    player=who, cards=plural(d["draws"], "card")
                )
            elif d.get("until_fire"):
                said = _("-> {player} must hit until cards fire").format(player=who)
            else:
                said = _("-> {player} must hit {times}").format(
                    player=who, times=plural(d.get("hits"), "time")
                )
            self.screen.line("    " + said)

    def _check_conservation(self, round_no: int, pile: int) -> None:
        """The engine's virtual pile must equal the plant's hopper (cards are conserved)."""
        hopper = self._plant_hopper(pile)
        ok = hopper == pile
        self.checks.append({"round": round_no, "pile": pile, "hopper": hopper, "ok": ok})
        if not ok:
            raise UnoError(
                f"cards not conserved after round {round_no}: the engine's launcher pile holds "
                f"{pile}, the box's hopper {hopper}"
            )
        self.screen.line(
            "  "
            + _("conservation: launcher pile {pile} = box hopper {hopper}").format(
                pile=pile, hopper=hopper
            )
        )

    def _plant_hopper(self, expect: int) -> int | None:
        # The plant writes its file after every card, before the daemon reports the burst, so
        # this normally matches at once; allow the file system a moment all the same.
        deadline = time.monotonic() + 2.0
        hopper = None
        while True:
            with contextlib.suppress(OSError, ValueError):
                hopper = int(self.box.plant()["hopper"])
            if hopper == expect or time.monotonic() > deadline:
                return hopper
            time.sleep(0.02)

    def _show_scores(self, result: dict[str, Any]) -> None:
        scr = self.screen
        game = self.game
        won = result["winner"]
        scr.line(
            scr.bold(
                _("Round {round} to {player}").format(round=result["round"], player=self.names[won])
            )
            + ": "
            + _("+{points} points").format(points=result["gained"][won])
        )
        order = sorted(range(len(self.names)), key=lambda s: (-game.scores[s], s))
        width = max(len(n) for n in self.names)
        for s in order:
            bar = "#" * min(50, game.scores[s] * 50 // max(1, game.target))
            scr.line(f"    {self.names[s]:<{width}} {game.scores[s]:>4}  {bar}")

    def _summary(self, elapsed: float) -> dict[str, Any]:
        game = self.game
        fires = self.launcher.fires
        fire_ids = [f.get("press_id") for f in fires]
        return {
            "winner": game.winner,
            "winner_name": self.names[game.winner] if game.winner is not None else None,
            "scores": list(game.scores),
            "target": game.target,
            "rounds": game.rounds_played,
            "turns": self.turns,
            "presses": self.launcher.presses_sent,
            "fire_results": len(fires),
            "unique_fire_press_ids": len(set(fire_ids)),
            "hits": self.launcher.hits,
            "cards_fired": self.launcher.cards_fired,
            "dry_presses": self.launcher.dry_hits,
            "jams": self.launcher.jams,
            "strays": self.launcher.strays,
            "reloads": self.launcher.reloads,
            "conservation": self.checks,
            "conserved": all(c["ok"] for c in self.checks),
            "box_pid": self.box.pid,
            "elapsed_s": round(elapsed, 2),
        }


# ---------------------------------------------------------------------------------------------
# Command line


def register(subparsers: Any) -> None:
    """Add the `demo` subcommand."""
    p = subparsers.add_parser(
        "demo",
        help=_("a whole game with bots through a mock box"),
        description=_(
            "Start the launcher daemon on mock pins as a child process and play a whole game "
            "with bots, every hit a real press over the serial link."
        ),
    )
    p.add_argument("--players", type=whole_number, default=4, help=_("2 to 10 (default 4)"))
    p.add_argument(
        "--seed", type=whole_number, default=1, help=_("seed of the game and the box (default 1)")
    )
    p.add_argument(
        "--deck",
        default="attack",
        metavar="PRESET",
        help=_(
            "attack (default), attack-1998, classic (every draw a `dispense 1`), or a deck file"
        ),
    )
    p.add_argument(
        "--speed",
        type=decimal,
        default=DEFAULT_SPEED,
        help=_("divide the box's timings by this (default {speed}; 1 = real time)").format(
            speed=f"{DEFAULT_SPEED:g}"
        ),
    )
    p.add_argument(
        "--target", type=whole_number, default=500, help=_("points that win the game (500)")
    )
    p.add_argument("--json", action="store_true", help=_("end with a one-line JSON summary"))
    from engine.web.demo_web import add_arguments  # --web, --pace, --http, --code (docs/web.md)

    add_arguments(p)
    p.set_defaults(func=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    """`unoattack demo`."""
    if not 2 <= args.players <= 10:
        raise InputError(_("--players {count}: from 2 to 10").format(count=args.players))
    if args.target < 1:
        raise InputError(
            _("--target {target}: a number of points above 0").format(target=args.target)
        )
    check_speed(args.speed)
    from engine.cards import load_deck

    load_deck(args.deck)  # a bad deck is a usage error before anything starts
    text = mock_config(speed=args.speed, players=args.players, seed=args.seed)
    if getattr(args, "web", False):
        from engine.web.demo_web import run

        return run(args, text)
    from engine.web.demo_web import check_without_web

    check_without_web(args)
    return play(text, args, sys.stdout)


def play(config_text: str, args: argparse.Namespace, out: TextIO) -> int:
    """Start the mock box, play the game, stop the box whatever happens. A closed stdout
    (`unoattack demo | head -1`) raises BrokenPipeError after the box is stopped: the command
    line ends quietly with 0 on it, as every command does."""
    screen = Screen(out, list(NAMES[: args.players]))
    # However many Ctrl-C come: the first stops the game, none cuts the box's stop short.
    with CtrlC(until_exit=True) as ctrl_c:
        try:
            with mock_box(config_text) as (box, client):
                with ctrl_c.stopping():
                    summary = Demo.for_args(args, box, client, screen).run()
                summary["sounds"] = box.sounds()  # its folder goes with the box
        except KeyboardInterrupt:
            screen.line()
            screen.line(_("interrupted: stopping the box"))
            return 130
        except UnoError as exc:
            say_error("unoattack demo", exc)
            return 1
    summary["box_exit"] = box.proc.returncode if box.proc is not None else None
    show_summary(screen, summary)
    if args.json:
        screen.line(json.dumps(summary, separators=(",", ":")))
    return 0 if summary["conserved"] else 1


def show_summary(screen: Screen, s: dict[str, Any]) -> None:
    """The game's end: the winner and the box's tallies, whether cards were conserved."""
    screen.line()
    screen.line(
        screen.bold(
            _("{player} wins with {points} points!").format(
                player=s["winner_name"], points=s["scores"][s["winner"]]
            )
        )
    )
    strays = (
        " " + _("({count} slipped out behind a burst)").format(count=s["strays"])
        if s["strays"]
        else ""
    )
    said = (
        _(
            "{rounds}, {presses} presses ({dry} dry), {cards} cards fired{strays}, {jams} jams, "
            "{seconds} s; cards conserved: yes"
        )
        if s["conserved"]
        else _(
            "{rounds}, {presses} presses ({dry} dry), {cards} cards fired{strays}, {jams} jams, "
            "{seconds} s; cards conserved: NO"
        )
    )
    if "box_exit" in s:
        said += _("; box stopped (exit {code})")
    screen.line(
        "  "
        + said.format(
            rounds=plural(s["rounds"], "round"),
            presses=s["presses"],
            dry=s["dry_presses"],
            cards=s["cards_fired"],
            strays=strays,
            jams=s["jams"],
            seconds=f"{s['elapsed_s']:.1f}",
            code=s.get("box_exit"),
        )
    )
    if s.get("sounds"):
        cues = ", ".join(f"{event} {n}" for event, n in s["sounds"].items())
        # the cue names are the sound pack's event keys (docs/personality.md), as in its manifest
        said = _("the box's sounds ({total}): {cues}")
        screen.line("  " + said.format(total=number(sum(s["sounds"].values())), cues=cues))
