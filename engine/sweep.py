"""`unoattack sweep`: the same seeded games under many settings, to tune a box before a game night.

A sweep is a list of settings: the `[base]` every setting shares, the `[[setting]]` entries (or one
empty entry) and, for each, every combination of the `[grid]` values. Settings come from a TOML
file, from the command line (`--set KEY=VALUE` adds to the base, `--vary KEY=V1,V2` to the grid), or
both (the command line wins). Each setting plays `games` games seeded from `seed` and the game's
index, so settings are compared on the same deals and the same bots' seeds. The keys (docs/sim.md):

- the simulation: `players`, `deck`, `rules`, `mode`, `target`, `teams` (with mode teams), `bots`
  (one bot, or one per seat);
- the box: `config` (its launcher.toml: jam model and timings), `jam.KEY` (any `[jam]` key but
  `seed`, and `max_burst`), and the players' times for the estimate: `turn_seconds`,
  `press_seconds` (engine/duration.py);
- the rules: `option.NAME` (a rule option, docs/rules.md);
- `label` (a `[[setting]]` entry's name).

For each setting: game length (rounds, turns, presses, cards fired, estimated minutes at the
table), what a hit fires, win shares by seat and by bot, and how often the launcher decided a round.
Output: a table, `--json`, `--csv FILE`, `--plot FILE.png`. Ctrl-C keeps every setting finished.
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import json
import math
import statistics
import sys
import textwrap
import time
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from common import textfile
from common.atomic import write_atomic
from common.boxconfig import HostConfig, default_path, read_for_host
from common.commandline import CtrlC, check_outputs, decimal_number, figure_bytes, whole_number
from common.errors import ConfigError
from common.jam import JamParams, from_mapping
from engine.bots import BOTS
from engine.cards import PRESETS
from engine.duration import PRESS_SECONDS, TURN_SECONDS, BoxTimes, game_seconds
from engine.errors import BoxConfigError, InputError, UnoError
from engine.executors import Executor
from engine.rules import OPTION_NAMES, parse_value
from engine.sim import (
    LOSER_MODES,
    MAX_GAMES,
    ProgressBar,
    SimSettings,
    SimStats,
    add_run_arguments,
    blocks,
    build_settings,
    open_executor,
    play_block,
)
from engine.words import plural
from i18n import _, in_reader_language, number
from i18n.layout import columns

MAX_SETTINGS = 10_000
# `[jam]` keys a sweep may set: every one but the seed (each game seeds the launcher itself).
JAM_KEYS: tuple[str, ...] = tuple(f.name for f in fields(JamParams) if f.name != "seed")
SIM_KEYS = ("players", "deck", "rules", "mode", "target", "teams", "bots")
BOX_KEYS = ("config", "turn_seconds", "press_seconds")
# Keys whose value is a list (a list of alternatives in the grid is then a list of lists).
LIST_KEYS = frozenset({"bots", "jam.burst_weights", "jam.pattern"})
FILE_KEYS = ("games", "seed", "base", "grid", "setting")
DEFAULTS: dict[str, object] = {
    "players": 4,
    "deck": "attack",
    "rules": None,
    "mode": "target",
    "target": 500,
    "teams": None,
    "bots": ("heuristic",),
    "config": None,
    "turn_seconds": TURN_SECONDS,
    "press_seconds": PRESS_SECONDS,
}
DEFAULT_GAMES = 100


def allowed_keys() -> str:
    """The keys a setting may have, for error messages."""
    return ", ".join([*SIM_KEYS, *BOX_KEYS, "jam.KEY", "option.NAME"])


# -- reading settings -----------------------------------------------------------------------


def check_value(key: str, value: object, where: str) -> object:
    """One setting's value checked for its key's type (ranges and combinations are checked per
    setting); returns it normalised (bots and lists as tuples). InputError names `where`."""
    shown = f"{where}{key} = {_toml(value)}"
    if key.startswith("jam."):
        name = key[4:]
        if name == "seed":
            raise InputError(
                _("{shown}: not a sweep key; every game seeds the launcher (use seed)").format(
                    shown=shown
                )
            )
        if name not in JAM_KEYS:
            raise InputError(
                _("{shown}: unknown jam key; allowed: {jam_keys}").format(
                    shown=shown, jam_keys=", ".join(JAM_KEYS)
                )
            )
        try:
            from_mapping({name: value})  # the jam model's own check of one value
        except ValueError as exc:
            raise InputError(f"{shown}: {in_reader_language(exc)}") from None
        return tuple(value) if isinstance(value, list) else value
    if key.startswith("option."):
        name = key[7:]
        if name not in OPTION_NAMES:
            raise InputError(
                _("{shown}: unknown rule option; allowed: {option_names}").format(
                    shown=shown, option_names=", ".join(OPTION_NAMES)
                )
            )
        if not isinstance(value, bool | int | str):
            raise InputError(
                _("{shown}: true, false, a whole number or a name").format(shown=shown)
            )
        return value
    if key == "teams" and value is None:
        return None
    if key in ("players", "target", "teams"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(_("{shown}: a whole number").format(shown=shown))
        return value
    if key in ("deck", "mode", "config", "label") or (key == "rules" and value is not None):
        if not isinstance(value, str) or not value.strip():
            raise InputError(_("{shown}: a name (text)").format(shown=shown))
        return value.strip()
    if key == "bots":
        names: Sequence[object]
        if isinstance(value, str):
            names = value.replace("/", ",").split(",")
        elif isinstance(value, list | tuple):
            names = value
        else:
            names = ()
        if not names or not all(isinstance(n, str) and n.strip() for n in names):
            raise InputError(
                _("{shown}: one bot name, or a list of one per seat").format(shown=shown)
            )
        return tuple(str(n).strip().lower() for n in names)
    if key in ("turn_seconds", "press_seconds"):
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 3600:
            raise InputError(_("{shown}: seconds from 0 to 3600").format(shown=shown))
        return float(value)
    if key == "rules":
        return None
    raise InputError(f"{where}unknown key `{key}`: allowed are {allowed_keys()}")


def flatten(table: Mapping[str, object], where: str) -> dict[str, object]:
    """A TOML table's keys as dotted names: `jam = {base = 0.1}` and `"jam.base" = 0.1` both
    give `jam.base`. Only `jam` and `option` hold sub-keys."""
    flat: dict[str, object] = {}
    for key, value in table.items():
        if isinstance(value, Mapping):
            if key not in ("jam", "option"):
                raise InputError(
                    f"{where}{key}: not a table of keys (only jam and option are); allowed "
                    f"keys: {allowed_keys()}"
                )
            for sub, inner in value.items():
                if isinstance(inner, Mapping):
                    raise InputError(
                        _("{where}{key}.{sub}: one value, not a table").format(
                            where=where, key=key, sub=sub
                        )
                    )
                flat[f"{key}.{sub}"] = inner
        else:
            flat[key] = value
    return flat


@dataclass
class SweepSpec:
    """What a sweep file and the command line ask for, before the settings are built."""

    games: int = DEFAULT_GAMES
    seed: int = 0
    base: dict[str, object] | None = None
    grid: dict[str, list[object]] | None = None
    entries: list[dict[str, object]] | None = None
    source: str = "command line"


def read_file(path: str) -> SweepSpec:
    """Read a sweep TOML file (InputError, exit 2, naming the file and the key)."""
    p = Path(path)
    try:
        text = textfile.read_text(p)  # UTF-8, a BOM allowed, as every file a person gives us
    except OSError as exc:
        raise InputError(textfile.cannot_read(path, exc).render()) from None
    except UnicodeDecodeError:
        raise InputError(
            _("{path}: not a text file (a sweep file is UTF-8 TOML)").format(path=path)
        ) from None
    try:
        doc = textfile.parse_toml(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(_("{path}: not valid TOML: {exc}").format(path=path, exc=exc)) from None
    spec = SweepSpec(source=path)
    for key in doc:
        if key not in FILE_KEYS:
            raise InputError(
                f"{path}: unknown key `{key}`: a sweep file has {', '.join(FILE_KEYS[:2])}, "
                "[base], [grid] and [[setting]]"
            )
    for key in ("games", "seed"):
        if key in doc:
            value = doc[key]
            if isinstance(value, bool) or not isinstance(value, int):
                raise InputError(f"{path}: {key} = {_toml(value)}: a whole number")
            setattr(spec, key, value)
    base = doc.get("base", {})
    if not isinstance(base, Mapping):
        raise InputError(_("{path}: base must be a table ([base])").format(path=path))
    folder = p.parent
    spec.base = _checked(flatten(base, f"{path}: [base] "), f"{path}: [base] ", folder)
    grid = doc.get("grid", {})
    if not isinstance(grid, Mapping):
        raise InputError(_("{path}: grid must be a table ([grid])").format(path=path))
    spec.grid = {}
    for key, values in flatten(grid, f"{path}: [grid] ").items():
        choices = _alternatives(key, values, f"{path}: [grid] ")
        spec.grid[key] = [_relative(key, v, folder) for v in choices]
    entries = doc.get("setting", [])
    if not isinstance(entries, list) or not all(isinstance(e, Mapping) for e in entries):
        raise InputError(_("{path}: setting must be tables ([[setting]])").format(path=path))
    spec.entries = []
    for i, entry in enumerate(entries, 1):
        where = f"{path}: [[setting]] {i}: "
        flat = _checked(flatten(entry, where), where, folder)
        for key in flat:
            if key in spec.grid:
                raise InputError(
                    _("{where}{key} is also in [grid]: give it in one place").format(
                        where=where, key=key
                    )
                )
        spec.entries.append(flat)
    return spec


def _checked(
    flat: Mapping[str, object], where: str, folder: Path | None = None
) -> dict[str, object]:
    return {
        key: _relative(key, check_value(key, value, where), folder) for key, value in flat.items()
    }


def _relative(key: str, value: object, folder: Path | None) -> object:
    """A box config or deck file named in a sweep file is found next to the sweep file."""
    if folder is None or key not in ("config", "deck") or not isinstance(value, str):
        return value
    if key == "deck" and value in PRESETS:
        return value
    path = Path(value).expanduser()
    return value if path.is_absolute() else str(folder / path)


def _alternatives(key: str, values: object, where: str) -> list[object]:
    if key == "label":
        raise InputError(
            _("{where}label: name a setting in [[setting]], not in [grid]").format(where=where)
        )
    example = "[[1, 2], [3]]" if key in LIST_KEYS else "[0.1, 0.2]"
    if not isinstance(values, list) or not values:
        raise InputError(
            f"{where}{key} = {_toml(values)}: a list of the values to try, e.g. {example}"
        )
    if key in LIST_KEYS and key != "bots" and not all(isinstance(v, list) for v in values):
        raise InputError(f"{where}{key} = {_toml(values)}: a list of lists, e.g. {example}")
    return [check_value(key, v, where) for v in values]


def parse_assignment(text: str, option: str, *, alternatives: bool) -> tuple[str, list[object]]:
    """`--set KEY=VALUE` (one value) or `--vary KEY=V1,V2` (alternatives): the key and its
    values, written as in a file: `/` separates list items (`jam.pattern=0/0/3`)."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key or not raw.strip():
        raise InputError(
            _("{option} {text!r}: write KEY=VALUE, e.g. jam.base=0.3").format(
                option=option, text=text
            )
        )
    where = f"{option} "
    if alternatives:
        parts = [p for p in raw.split(",")]
        if any(not p.strip() for p in parts):
            raise InputError(
                _("{option} {text!r}: a comma list of values, e.g. jam.base=0.1,0.3").format(
                    option=option, text=text
                )
            )
    else:
        parts = [raw]
    values: list[object] = []
    for part in parts:
        if key == "bots":
            value: object = part  # one or a /-list of names (or a ,-list under --set)
        elif key in LIST_KEYS:
            value = [_number(item) for item in part.split("/")]
        else:
            value = _number(part)
        values.append(check_value(key, value, where))
    return key, values


def _number(text: str) -> object:
    value = parse_value(text)
    if isinstance(value, str):
        number = decimal_number(value)  # ASCII: "٠.٥" is text, refused as such
        return value if number is None else number
    return value


# -- the settings ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """One setting of a sweep, checked: the games to play and how to time them."""

    index: int
    label: str
    varied: dict[str, object]  # the grid's values for this setting
    values: dict[str, object]  # every key, defaults included
    sim: SimSettings
    box: BoxTimes
    config: str
    turn_seconds: float
    press_seconds: float


def build_plan(
    spec: SweepSpec, *, loader: Callable[[str], HostConfig] = read_for_host
) -> list[Setting]:
    """Every setting of the sweep, checked before anything runs."""
    base = spec.base or {}
    grid = spec.grid or {}
    entries = spec.entries or [{}]
    count = len(entries) * math.prod(len(v) for v in grid.values())
    if count > MAX_SETTINGS:
        raise InputError(
            _("{source}: {count} settings: at most {MAX_SETTINGS}").format(
                source=spec.source, count=count, MAX_SETTINGS=MAX_SETTINGS
            )
        )
    if not 1 <= spec.games <= MAX_GAMES:
        raise InputError(
            _("games {games}: from 1 to {MAX_GAMES} per setting").format(
                games=spec.games, MAX_GAMES=MAX_GAMES
            )
        )
    if count * spec.games > MAX_GAMES:
        raise InputError(
            f"{count} settings of {spec.games} games: at most {MAX_GAMES} games in all"
        )
    configs: dict[str, tuple[HostConfig, BoxTimes]] = {}
    plan: list[Setting] = []
    keys = list(grid)
    for entry in entries:
        for combo in itertools.product(*grid.values()):
            varied = dict(zip(keys, combo, strict=True))
            values = {**DEFAULTS, **base, **entry, **varied}
            index = len(plan)
            label = str(values.pop("label", "")) or _label(varied, index, count)
            where = f"{spec.source}: setting {index} ({label}): "
            config = str(values["config"] or default_path())
            if config not in configs:
                try:
                    cfg = loader(config)
                except ConfigError as exc:
                    raise BoxConfigError(f"{where}{exc}") from None
                configs[config] = (cfg, BoxTimes.from_config(cfg))
            cfg, box = configs[config]
            jam_values = {k[4:]: v for k, v in values.items() if k.startswith("jam.")}
            options = {k[7:]: v for k, v in values.items() if k.startswith("option.")}
            try:
                jam = from_mapping(
                    {k: list(v) if isinstance(v, tuple) else v for k, v in jam_values.items()},
                    defaults=cfg.jam,
                )
                sim = build_settings(
                    players=values["players"],  # type: ignore[arg-type]
                    games=spec.games,
                    seed=spec.seed,
                    deck=values["deck"],  # type: ignore[arg-type]
                    rules=values["rules"],  # type: ignore[arg-type]
                    mode=values["mode"],  # type: ignore[arg-type]
                    target=values["target"],  # type: ignore[arg-type]
                    bots=values["bots"],  # type: ignore[arg-type]
                    options=options,
                    jam=jam,
                    flag=str,
                    teams=values["teams"],  # type: ignore[arg-type]
                )
            except ValueError as exc:  # InputError is one, and the jam model's checks
                raise InputError(f"{where}{in_reader_language(exc)}") from None
            plan.append(
                Setting(
                    index=index,
                    label=label,
                    varied=varied,
                    values=values,
                    sim=sim,
                    box=box,
                    config=config,
                    turn_seconds=float(values["turn_seconds"]),  # type: ignore[arg-type]
                    press_seconds=float(values["press_seconds"]),  # type: ignore[arg-type]
                )
            )
    return plan


def _label(varied: Mapping[str, object], index: int, count: int) -> str:
    if varied:
        return " ".join(f"{k}={_show(v)}" for k, v in varied.items())
    return "base" if count == 1 else f"setting {index}"


def _show(value: object) -> str:
    if isinstance(value, tuple | list):
        return "/".join(_show(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _toml(value: object) -> str:
    """A value as a file would write it, short (for messages)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        text = "[" + ", ".join(_toml(v) for v in value) + "]"
        return text if len(text) <= 60 else text[:57] + "...]"
    return str(value)


# -- running --------------------------------------------------------------------------------


@dataclass
class SweepResult:
    """The settings finished (in order) with their statistics."""

    finished: list[tuple[Setting, SimStats]]
    total: int
    interrupted: bool
    elapsed_s: float

    @property
    def games(self) -> int:
        """Games played in the settings finished."""
        return sum(stats.games for _, stats in self.finished)


def run_sweep(
    plan: Sequence[Setting],
    executor: Executor,
    *,
    progress: Callable[[int, int, str], None] | None = None,
) -> SweepResult:
    """Play every setting's games through `executor`; Ctrl-C keeps the settings finished."""
    tasks = [
        block
        for s in plan
        for block in blocks(s.sim, executor.workers, keep_rows=True, tag=s.index)
    ]
    stats = [SimStats(players=s.sim.players, rows=[]) for s in plan]
    left = [0] * len(plan)
    for block in tasks:
        left[block.tag] += 1
    total_games = sum(s.sim.games for s in plan)
    done_games = finished = 0
    started = time.perf_counter()
    interrupted = False
    results = executor.run(play_block, tasks)
    try:
        for index, block_stats in results:
            tag = tasks[index].tag
            stats[tag].merge(block_stats)
            left[tag] -= 1
            finished += left[tag] == 0
            done_games += block_stats.games
            if progress is not None:
                progress(done_games, total_games, f"{finished}/{len(plan)} settings")
    except KeyboardInterrupt:
        interrupted = True
    finally:
        close = getattr(results, "close", None)  # a generator's: cancels blocks not started
        if close is not None:
            close()
    elapsed = time.perf_counter() - started
    done = []
    for s, st in zip(plan, stats, strict=True):
        if left[s.index] == 0:
            st.sort_rows()
            st.elapsed_s = elapsed
            done.append((s, st))
    return SweepResult(done, len(plan), interrupted, elapsed)


# -- figures --------------------------------------------------------------------------------


def minutes(setting: Setting, stats: SimStats) -> list[float]:
    """Each game's estimated minutes at the table."""
    return [
        game_seconds(
            setting.box,
            turns=row.turns,
            presses=row.presses,
            bursts=row.fires,
            cards=row.cards,
            turn_seconds=setting.turn_seconds,
            press_seconds=setting.press_seconds,
        )
        / 60.0
        for row in stats.rows or ()
    ]


def _spread(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"mean": 0.0, "p10": 0.0, "p50": 0.0, "p90": 0.0, "max": 0.0}
    ordered = sorted(values)
    if len(ordered) > 1:
        deciles = statistics.quantiles(ordered, n=10, method="inclusive")
        p10, p90 = deciles[0], deciles[-1]
    else:
        p10 = p90 = ordered[0]
    return {
        "mean": round(statistics.fmean(ordered), 3),
        "p10": round(p10, 3),
        "p50": round(statistics.median(ordered), 3),
        "p90": round(p90, 3),
        "max": round(ordered[-1], 3),
    }


def summary(setting: Setting, stats: SimStats) -> dict[str, Any]:
    """One setting's report (the JSON shape; docs/sim.md)."""
    sim = setting.sim
    rows = stats.rows or []
    games = max(stats.games, 1)
    hits = stats.hits
    seats = sim.players

    def by_bot(per_seat: Sequence[int]) -> dict[str, float]:
        shares: dict[str, float] = {}
        for bot in dict.fromkeys(sim.bots):
            mine = [s for s in range(seats) if sim.bots[s] == bot]
            shares[bot] = round(sum(per_seat[s] for s in mine) / (games * len(mine)), 4)
        return shares

    firing = hits - stats.dry_hits
    # What the mode names besides winners: losers, and chips (a mean per game).
    by_mode: dict[str, Any] = {}
    if sim.mode in LOSER_MODES:
        by_mode["losses_by_seat"] = [round(n / games, 4) for n in stats.losses]
        by_mode["losses_by_bot"] = by_bot(stats.losses)
    if sim.mode == "chips":
        by_mode["chips_by_seat"] = [round(n / games, 2) for n in stats.chips]
    return {
        "index": setting.index,
        "label": setting.label,
        "varied": {k: _plain(v) for k, v in setting.varied.items()},
        "setting": {
            "players": sim.players,
            "deck": sim.deck.name,
            "rules": sim.preset,
            "mode": sim.mode,
            "target": sim.target,
            "teams": sim.teams if sim.mode == "teams" else None,
            "bots": list(sim.bots),
            "options": dict(sim.options),
            "jam": sim.jam.to_dict(),
            "config": setting.config,
            "turn_seconds": setting.turn_seconds,
            "press_seconds": setting.press_seconds,
        },
        "games": stats.games,
        "rounds": stats.rounds,
        "per_game": {
            "rounds": _spread([r.rounds for r in rows]),
            "turns": _spread([r.turns for r in rows]),
            "presses": _spread([r.presses for r in rows]),
            "cards_fired": _spread([r.cards for r in rows]),
            "minutes": _spread(minutes(setting, stats)),
        },
        "hits": {
            "presses": hits,
            "dry_share": round(stats.dry_hits / hits, 4) if hits else None,
            "cards_per_hit": round(stats.hit_cards / hits, 4) if hits else None,
            "cards_per_firing_hit": round(stats.hit_cards / firing, 4) if firing else None,
            "distribution": [round(n / hits, 4) for n in stats.cards_per_hit] if hits else [],
        },
        "wins_by_seat": [round(w / games, 4) for w in stats.wins],
        "wins_by_bot": by_bot(stats.wins),
        **by_mode,
        "launcher_decided": round(stats.launcher_decided / stats.rounds, 4)
        if stats.rounds
        else 0.0,
    }


def _plain(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


MAX_SEATS = 10
BOT_NAMES = tuple(BOTS)
CSV_COLUMNS: tuple[str, ...] = (
    "index",
    "label",
    "players",
    "deck",
    "rules",
    "mode",
    "target",
    "teams",
    "bots",
    "options",
    "config",
    *(f"jam_{k}" for k in JAM_KEYS),
    "turn_seconds",
    "press_seconds",
    "games",
    "rounds",
    "rounds_per_game",
    "turns_per_game",
    "presses_per_game",
    "cards_per_game",
    "minutes_per_game",
    "minutes_p10",
    "minutes_p50",
    "minutes_p90",
    "hits",
    "dry_share",
    "cards_per_hit",
    "cards_per_firing_hit",
    "launcher_decided",
    *(f"win_seat_{s}" for s in range(MAX_SEATS)),
    *(f"win_{bot}" for bot in BOT_NAMES),
    *(f"loss_seat_{s}" for s in range(MAX_SEATS)),
    *(f"chips_seat_{s}" for s in range(MAX_SEATS)),
)


def csv_row(data: Mapping[str, Any]) -> dict[str, object]:
    """A setting's summary as one CSV row (CSV_COLUMNS; empty where it has no value)."""
    setting, per, hits = data["setting"], data["per_game"], data["hits"]
    row: dict[str, object] = {
        "index": data["index"],
        "label": data["label"],
        "players": setting["players"],
        "deck": setting["deck"],
        "rules": setting["rules"],
        "mode": setting["mode"],
        "target": setting["target"],
        "teams": setting["teams"],
        "bots": "/".join(setting["bots"]),
        "options": ";".join(f"{k}={_show(v)}" for k, v in setting["options"].items()),
        "config": setting["config"],
        "turn_seconds": setting["turn_seconds"],
        "press_seconds": setting["press_seconds"],
        "games": data["games"],
        "rounds": data["rounds"],
        "rounds_per_game": per["rounds"]["mean"],
        "turns_per_game": per["turns"]["mean"],
        "presses_per_game": per["presses"]["mean"],
        "cards_per_game": per["cards_fired"]["mean"],
        "minutes_per_game": per["minutes"]["mean"],
        "minutes_p10": per["minutes"]["p10"],
        "minutes_p50": per["minutes"]["p50"],
        "minutes_p90": per["minutes"]["p90"],
        "hits": hits["presses"],
        "dry_share": hits["dry_share"],
        "cards_per_hit": hits["cards_per_hit"],
        "cards_per_firing_hit": hits["cards_per_firing_hit"],
        "launcher_decided": data["launcher_decided"],
    }
    for key in JAM_KEYS:
        row[f"jam_{key}"] = _show(setting["jam"][key])
    for seat, share in enumerate(data["wins_by_seat"]):
        row[f"win_seat_{seat}"] = share
    for bot, share in data["wins_by_bot"].items():
        row[f"win_{bot}"] = share
    for seat, share in enumerate(data.get("losses_by_seat", ())):
        row[f"loss_seat_{seat}"] = share
    for seat, chips in enumerate(data.get("chips_by_seat", ())):
        row[f"chips_seat_{seat}"] = chips
    return {k: "" if row.get(k) is None else row[k] for k in CSV_COLUMNS}


def write_csv(path: str, summaries: Iterable[Mapping[str, Any]]) -> None:
    """Every setting's row, with a header."""
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for data in summaries:
        writer.writerow(csv_row(data))
    _write(path, text.getvalue())


def _write(path: str, text: str | bytes) -> None:
    """Written whole or not at all (common/atomic.py)."""
    try:
        write_atomic(path, text)
    except OSError as exc:  # a full disk: runtime, exit 1 (a folder that is not: check_outputs)
        raise UnoError(f"cannot write {path}: {exc.strerror or exc}") from None


def format_table(result: SweepResult, summaries: Sequence[Mapping[str, Any]]) -> str:
    """The human-readable report: one line per setting finished."""
    rows = [
        [
            "#",
            _("setting"),
            _("rounds"),
            _("turns"),
            _("presses"),
            _("cards"),
            _("min"),
            _("dry"),
            _("c/hit"),
            _("decided"),
            _("wins"),
        ]
    ]

    def share(value: float) -> str:
        return _("{percent}%").format(percent=number(round(value * 100)))

    for data in summaries:
        per, hits = data["per_game"], data["hits"]
        dry = "-" if hits["dry_share"] is None else share(hits["dry_share"])
        per_hit = "-" if hits["cards_per_hit"] is None else number(hits["cards_per_hit"], 2)
        wins = " ".join(f"{bot} {share(s)}" for bot, s in data["wins_by_bot"].items())
        if "losses_by_bot" in data:
            lost = " ".join(f"{bot} {share(s)}" for bot, s in data["losses_by_bot"].items())
            wins = _("{wins}; lost {lost}").format(wins=wins, lost=lost)
        label = data["label"] if len(data["label"]) <= 29 else data["label"][:28] + "…"
        rows.append(
            [
                str(data["index"]),
                label,
                number(per["rounds"]["mean"], 1),
                number(per["turns"]["mean"], 0),
                number(per["presses"]["mean"], 0),
                number(per["cards_fired"]["mean"], 0),
                number(per["minutes"]["mean"], 0),
                dry,
                per_hit,
                share(data["launcher_decided"]),
                wins,
            ]
        )
    lines = columns(rows, right={0, *range(2, 10)})
    games = result.games
    rate = games / result.elapsed_s if result.elapsed_s else 0.0
    lines += [
        "",
        _(
            "per game (means): rounds, turns, presses, cards fired, minutes at the table "
            "(estimated)"
        ),
        _(
            "dry: hits that fired nothing; c/hit: cards per hit; decided: rounds the launcher "
            "decided (docs/sim.md); wins: games won per seat"
        ),
        *(
            [_("lost: games lost per seat, in the modes that name a loser")]
            if any("losses_by_bot" in data for data in summaries)
            else []
        ),
        _("{done} of {total} settings, {games} in {seconds} s ({rate} games/s)").format(
            done=len(summaries),
            total=result.total,
            games=plural(games, "game"),
            seconds=number(result.elapsed_s, 1),
            rate=number(rate, 0),
        ),
    ]
    if result.interrupted:
        lines.append(
            _("interrupted by Ctrl-C: {done} of {total} settings finished").format(
                done=len(summaries), total=result.total
            )
        )
    return "\n".join(lines)


def write_plot(path: str, finished: Sequence[tuple[Setting, SimStats]]) -> None:
    """The distributions per setting: one box per setting for each per-game figure, and the
    share of hits firing 0, 1, 2, ... cards."""
    import matplotlib

    matplotlib.use("Agg")  # files only; never needs a display
    import matplotlib.pyplot as plt

    panels: list[tuple[str, Sequence[Sequence[float]]]] = [
        ("minutes per game (estimated)", [minutes(s, st) for s, st in finished]),
        ("rounds per game", [[r.rounds for r in st.rows or ()] for _, st in finished]),
        ("turns per game", [[r.turns for r in st.rows or ()] for _, st in finished]),
        ("presses per game", [[r.presses for r in st.rows or ()] for _, st in finished]),
        ("cards fired per game", [[r.cards for r in st.rows or ()] for _, st in finished]),
    ]
    # Settings are numbered on the axes and named once, under the panels.
    named = (f"{s.index}: {s.label}".replace(" ", "\u00a0") for s, _ in finished)
    key = textwrap.wrap("    ".join(named), 150)  # breaks between settings, not inside one
    footer = 0.25 + 0.16 * len(key)  # inches
    width = min(30.0, max(11.0, 0.3 * len(finished) * 3))
    fig, axes = plt.subplots(2, 3, figsize=(width, 7.5 + footer))
    ticks = list(range(1, len(finished) + 1))
    names = [str(s.index) for s, _ in finished]
    for ax, (title, data) in zip(axes.flat, panels, strict=False):
        if any(data):
            ax.boxplot([d or [0] for d in data], showfliers=False)
        ax.set_title(title, fontsize=10)
        ax.set_xticks(ticks, names, fontsize=8)
        ax.set_xlabel("setting", fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    ax = axes.flat[5]
    for setting, stats in finished:
        firing = stats.hits - stats.dry_hits
        if firing:
            shares = [n / firing for n in stats.cards_per_hit[1:]]
            while len(shares) > 1 and shares[-1] == 0:
                shares.pop()
            dry = stats.dry_hits / stats.hits
            ax.plot(
                range(1, len(shares) + 1),
                shares,
                marker="o",
                ms=3,
                label=f"{setting.index}: dry {dry:.0%}",
            )
    ax.set_title("cards per firing hit (share)", fontsize=10)
    ax.set_xlabel("cards fired", fontsize=8)
    ax.grid(alpha=0.3)
    if any(st.hits > st.dry_hits for _, st in finished) and len(finished) <= 12:
        ax.legend(fontsize=7, title="setting", title_fontsize=7)
    height = fig.get_figheight()
    fig.text(0.01, 0.1 / height, "\n".join(key), fontsize=8, va="bottom", family="monospace")
    fig.suptitle(f"unoattack sweep: {len(finished)} settings", fontsize=11)
    fig.tight_layout(rect=(0, footer / height, 1, 1))
    try:
        image = figure_bytes(fig, path, dpi=110)
    finally:
        plt.close(fig)
    _write(path, image)


# -- command line ---------------------------------------------------------------------------


def register(subparsers: Any) -> None:
    """Add the `sweep` subcommand."""
    p = subparsers.add_parser(
        "sweep",
        help=_("simulate many settings (jam model, rules, bots) to tune a box"),
        description=_(
            "Play the same seeded games under every setting of a grid or a list (a TOML "
            "file, --set and --vary) and report game length, estimated time at the table, hits, "
            "win shares and how often the launcher decided a round. Ctrl-C stops the sweep and "
            "still reports (and writes) the settings finished (exit 130). See docs/sim.md."
        ),
    )
    p.add_argument("file", nargs="?", metavar="FILE", help=_("sweep file (TOML), optional"))
    p.add_argument("--games", type=whole_number, default=None, help=_("games per setting (100)"))
    p.add_argument("--seed", type=whole_number, default=None, help=_("seed of every setting (0)"))
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=_("a value every setting shares, e.g. players=3 or jam.max_dry=6 (repeatable)"),
    )
    p.add_argument(
        "--vary",
        action="append",
        default=[],
        metavar="KEY=V1,V2",
        help=_(
            "values to try, every combination with the other --vary keys, e.g. "
            "jam.base=0.1,0.2,0.3 (repeatable; / separates list items: jam.pattern=0/0/3)"
        ),
    )
    p.add_argument("--csv", metavar="FILE", help=_("write one row per setting to a CSV file"))
    p.add_argument("--plot", metavar="FILE.png", help=_("draw the distributions per setting"))
    add_run_arguments(p)
    p.add_argument("--json", action="store_true", help=_("print JSON instead of a table"))
    p.set_defaults(func=run)


def spec_from_args(args: argparse.Namespace) -> SweepSpec:
    """The file (if any) with the command line on top."""
    spec = read_file(args.file) if args.file else SweepSpec()
    if args.games is not None:
        spec.games = args.games
    if args.seed is not None:
        spec.seed = args.seed
    base = dict(spec.base or {})
    for text in args.set:
        key, (value,) = parse_assignment(text, "--set", alternatives=False)
        if key == "label":
            raise InputError("--set label: name settings in a file's [[setting]] entries")
        base[key] = value
    grid = dict(spec.grid or {})
    for text in args.vary:
        key, values = parse_assignment(text, "--vary", alternatives=True)
        if key == "label":
            raise InputError("--vary label: name settings in a file's [[setting]] entries")
        grid[key] = values
    for entry in spec.entries or []:
        for key in entry:
            if key in grid:
                raise InputError(
                    _("--vary {key}: also set by a [[setting]] of {source}").format(
                        key=key, source=spec.source
                    )
                )
    spec.base, spec.grid = base, grid
    return spec


def run(args: argparse.Namespace) -> int:
    """`unoattack sweep`."""
    check_outputs(args.csv, args.plot, InputError)
    plan = build_plan(spec_from_args(args))
    # However many Ctrl-C come: the sweep stops once, its report and files are written, exit 130.
    with CtrlC(until_exit=True) as ctrl_c:
        executor = open_executor(args, sum(s.sim.games for s in plan), ctrl_c)
        bar = ProgressBar(sys.stderr, "sweep", "games")
        try:
            result = run_sweep(plan, executor, progress=bar)
        finally:
            executor.close()
        bar.close()
        summaries = [summary(s, st) for s, st in result.finished]
        # The files first; one that cannot be written is said last, after the report: a full
        # disk must not take the sweep's results with it.
        written, failed = [], None
        for label, target, write in (
            ("rows", args.csv, lambda: write_csv(args.csv, summaries)),
            ("plot", args.plot, lambda: write_plot(args.plot, result.finished)),
        ):
            if target and (label == "rows" or result.finished):
                try:
                    write()
                    written.append((label, target))
                except UnoError as exc:
                    failed = failed or exc
        if args.json:
            games = result.games
            print(
                json.dumps(
                    {
                        "seed": plan[0].sim.seed,
                        "games_per_setting": plan[0].sim.games,
                        "settings": result.total,
                        "finished": len(summaries),
                        "interrupted": result.interrupted,
                        "elapsed_s": round(result.elapsed_s, 3),
                        "games_per_s": round(games / result.elapsed_s, 1)
                        if result.elapsed_s
                        else None,
                        "results": summaries,
                    }
                )
            )
        else:
            print(format_table(result, summaries))
            for label, target in written:
                said = (
                    _("rows written to {path}") if label == "rows" else _("plot written to {path}")
                )
                print(said.format(path=target))
        if failed is not None:
            sys.stdout.flush()
            raise failed

    return 130 if result.interrupted else 0  # 130: the shell's code for Ctrl-C
