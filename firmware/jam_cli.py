"""`launcher model show | sample | fit`: look at, draw from, and calibrate the jam model.

- ``show`` prints ``describe()``'s exact distributions of the configured model.
- ``sample`` draws presses from it (seeded), to compare a model against a recording.
- ``fit`` estimates a hazard model from recorded per-press counts (a ``launcher bench`` CSV, or
  a plain list of counts written down by hand) and can write it into a config file.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import i18n
from common import textfile
from common.atomic import write_atomic
from common.boxconfig import default_path, read_limits
from common.boxtoml import set_values
from common.commandline import digits, whole_number, whole_number_from
from common.errors import ConfigError, UsageError
from common.jam import (
    MAX_SEED,
    JamParams,
    describe,
    fit,
    from_mapping,
    sample,
    streak_stats,
)
from i18n import Nn_, _
from i18n.layout import columns

MAX_PRESSES = 10_000_000
# Fire reasons for presses the jam model never planned (the box refused or stopped first);
# a recording keeps them, a fit must not count them as dry presses.
UNSERVED = frozenset({"locked", "fault", "queue_full", "stopping", "interrupted"})
# [jam] keys a fit writes; the rest of the section (pattern, count, seed) is left alone.
FIT_KEYS = ("mode", "base", "step", "max_dry", "burst_weights", "pressure_bonus")


# --------------------------------------------------------------------------- config


def load_params(path: str | None) -> tuple[JamParams, int]:
    """The ``[jam]`` parameters and ``[limits] max_burst`` of a config file (default if None)."""
    from firmware.config import load

    cfg = load(path or default_path())
    return cfg.jam, cfg.limits.max_burst


# --------------------------------------------------------------------------- show


def _pct(p: float | None) -> str:
    return "-" if p is None else i18n.percent(p)


def table(rows: Sequence[Sequence[str]]) -> list[str]:
    """The tables of ``launcher model``: a heading row, then rows of numbers, every column right
    aligned by terminal cells (Thai and Chinese headings too) between ``|`` bars."""
    right = set(range(len(rows[0])))
    return [" " + line for line in columns(rows, right=right, sep=" | ")]


def format_describe(d: dict[str, Any]) -> str:
    """``describe()`` as the table ``launcher model show`` prints."""
    num = i18n.number
    p = d["params"]
    if d["mode"] == "hazard":
        head = _(
            "jam model: hazard (base {base}, step {step}, max_dry {max_dry}, "
            "pressure_bonus {pressure_bonus}, max_burst {max_burst})"
        ).format(
            base=num(p["base"]),
            step=num(p["step"]),
            max_dry=p["max_dry"],
            pressure_bonus=num(p["pressure_bonus"]),
            max_burst=p["max_burst"],
        )
    elif d["mode"] == "pattern":
        head = _("jam model: pattern {pattern}").format(pattern=p["pattern"])
    else:
        head = i18n.ngettext(
            "jam model: fixed, {n} card per press",
            "jam model: fixed, {n} cards per press",
            p["count"],
        ).format(n=p["count"])
    lines: list[str] = [
        head,
        _("fires on {share} of presses; {cards} cards per press, {burst} per fire").format(
            share=_pct(d["fire_rate"]),
            cards=num(d["cards_per_press_mean"], 2),
            burst=num(d["burst_mean"], 2),
        ),
        _("dry streak: mean {mean}, longest possible {longest}").format(
            mean=num(d["dry_streak_mean"], 2), longest=d["dry_streak_max"]
        ),
        "",
    ]
    rows: list[list[str]] = [
        [_("after n dry"), _("chance to fire"), _("streak of n"), _("fires within n+1"),
         _("share of presses")]
    ]  # fmt: skip
    for n, chance in enumerate(d["fire_chance"]):
        rows.append(
            [num(n), _pct(chance), _pct(d["dry_streak"][n]), _pct(d["dry_streak_cdf"][n]),
             _pct(d["streak_share"][n])]
        )  # fmt: skip
    lines += table(rows)
    if d["dry_streak_tail"] > 1e-12:
        lines.append(" " + _("longer streaks: {share}").format(share=_pct(d["dry_streak_tail"])))
    lines.append("")
    rows = [[_("cards"), _("per fire"), _("per press")]]
    for k, per_press in enumerate(d["cards_per_press"]):
        if per_press > 0 or d["burst"][k] > 0:
            rows.append([num(k), _pct(d["burst"][k]), _pct(per_press)])
    lines += table(rows)
    return "\n".join(lines)


def _show(args: argparse.Namespace) -> int:
    if not 0 <= args.max_n <= 1000:
        raise UsageError(i18n._("--max-n must be between 0 and 1000, got {n}").format(n=args.max_n))
    from firmware.attenuation import Attenuator
    from firmware.config import load

    cfg = load(args.config or default_path())
    d = describe(cfg.jam, max_n=args.max_n)
    # What hammering the button does to those figures ([attenuation]): the cut applies after
    # the model's draw, so its effect on the mean is exact.
    attenuation = Attenuator(cfg.attenuation)
    if args.json:
        rows = attenuation.rows(d["cards_per_press"])
        att = cfg.attenuation
        extra = {"window_ms": att.window_ms, "curve": list(att.curve), "by_rapid_press": rows}
        print(json.dumps({**d, "attenuation": extra}, indent=2))
    else:
        explained = attenuation.explain(d["cards_per_press"])
        print(format_describe(d) + "\n\n" + "\n".join(explained))
    return 0


# --------------------------------------------------------------------------- sample


def sample_report(params: JamParams, presses: int, seed: int) -> dict[str, Any]:
    """Presses drawn from the model with their dry-streak statistics and the exact figures."""
    counts = sample(params, presses, seed=seed)
    exact = describe(params)
    return {
        "params": params.to_dict(),
        "presses": presses,
        "seed": seed,
        "counts": counts,
        "stats": streak_stats(counts),
        "expected": {
            "fire_rate": exact["fire_rate"],
            "dry_streak_mean": exact["dry_streak_mean"],
            "dry_streak": exact["dry_streak"],
            "cards_per_press_mean": exact["cards_per_press_mean"],
        },
    }


def _sample(args: argparse.Namespace) -> int:
    if not 1 <= args.presses <= MAX_PRESSES:
        raise UsageError(
            i18n._("--presses must be between 1 and {most}, got {n}").format(
                most=MAX_PRESSES, n=args.presses
            )
        )
    params, _limit = load_params(args.config)
    report = sample_report(params, args.presses, args.seed)
    if args.json:
        print(json.dumps(report))
        return 0
    print(format_sample(report))
    return 0


def format_sample(report: dict[str, Any]) -> str:
    """A ``sample_report`` as the text ``launcher model sample`` prints."""
    num = i18n.number
    stats, exp = report["stats"], report["expected"]
    lines: list[str] = [
        _("{presses}, seed {seed}: {fires}, {cards}").format(
            presses=_count_of(Nn_("{n} press", "{n} presses"), report["presses"]),
            seed=report["seed"],
            fires=_count_of(Nn_("{n} fire", "{n} fires"), stats["fires"]),
            cards=_count_of(Nn_("{n} card", "{n} cards"), stats["cards"]),
        ),
        _(
            "fire rate {rate} (model {model_rate}); mean dry streak {mean} (model {model_mean}); "
            "longest {longest}"
        ).format(
            rate=_pct(stats["fire_rate"]),
            model_rate=_pct(exp["fire_rate"]),
            mean=num(stats["dry_streak_mean"], 2),
            model_mean=num(exp["dry_streak_mean"], 2),
            longest=stats["dry_streak_max"],
        ),
    ]
    rows: list[list[str]] = [[_("streak"), _("seen"), _("model")]]
    hist = stats["dry_streak_hist"]
    total = max(1, stats["streaks"])
    for k in range(max(len(hist), len(exp["dry_streak"]))):
        seen = hist[k] / total if k < len(hist) else 0.0
        model = exp["dry_streak"][k] if k < len(exp["dry_streak"]) else 0.0
        if seen or model:
            rows.append([num(k), _pct(seen), _pct(model)])
    lines += table(rows)
    shown = " ".join(str(c) for c in report["counts"][:40])
    more = " ..." if report["presses"] > 40 else ""
    lines.append(_("counts: {counts}").format(counts=shown + more))
    return "\n".join(lines)


def _count_of(pair: tuple[str, str], n: int) -> str:
    return i18n.ngettext(*pair, n).format(n=i18n.number(n))


# --------------------------------------------------------------------------- fit input


def read_counts(path: str, *, max_burst: int = 12) -> list[int]:
    """Per-press counts from a bench CSV or a plain text file; ``UsageError`` naming the line.

    A CSV has a header naming an ``ejected`` or ``planned`` column; with a ``row`` column only
    ``press`` rows count, and with a ``reason`` column presses the box never served (locked,
    fault, queue_full, stopping, interrupted) are skipped. A plain file holds whole numbers
    separated by newlines, commas or spaces; ``#`` starts a comment.
    """
    try:
        text = textfile.read_text(path)
    except OSError as exc:
        raise UsageError(textfile.cannot_read(path, exc).render()) from None
    except UnicodeDecodeError:
        raise UsageError(
            i18n._("{path}: not a text file (expected a CSV or a list of counts)").format(path=path)
        ) from None
    first = next((line for line in text.splitlines() if line.strip()), "")
    if re.search(r"[A-Za-z_]", first.split("#", 1)[0]):
        counts = _read_csv(path, text, max_burst)
    else:
        counts = _read_plain(path, text, max_burst)
    if not counts:
        raise UsageError(i18n._("{path}: no per-press counts found").format(path=path))
    return counts


def _count(path: str, line: int, raw: str, max_burst: int, what: str = "count") -> int:
    value = raw.strip()
    count = digits(value)  # ASCII (`\d` also took "٥"), and a count (5,000 digits: a traceback)
    if count is None:
        raise UsageError(
            i18n._(
                "{path}:{line}: {what} {value!r} is not a whole number of cards (0-{most})"
            ).format(path=path, line=line, what=what, value=value[:40], most=max_burst)
        )
    if count > max_burst:
        raise UsageError(
            i18n._("{path}:{line}: {count} cards is more than max_burst ({most})").format(
                path=path, line=line, count=count, most=max_burst
            )
        )
    return count


def _read_plain(path: str, text: str, max_burst: int) -> list[int]:
    counts = []
    for number, line in enumerate(text.splitlines(), start=1):
        for token in re.split(r"[,\s;]+", line.split("#", 1)[0]):
            if token:
                counts.append(_count(path, number, token, max_burst))
    return counts


def _read_csv(path: str, text: str, max_burst: int) -> list[int]:
    reader = csv.DictReader(io.StringIO(text))
    try:
        return _csv_counts(path, reader, max_burst)
    except csv.Error as exc:  # a field over csv's 128 KB limit, a NUL: it was a traceback
        raise UsageError(
            i18n._("{path}:{line}: not a CSV row ({error})").format(
                path=path, line=max(reader.line_num, 1), error=exc
            )
        ) from None


def _csv_counts(path: str, reader: csv.DictReader[str], max_burst: int) -> list[int]:
    fields = [f.strip() for f in reader.fieldnames or []]
    reader.fieldnames = fields
    column = "ejected" if "ejected" in fields else "planned" if "planned" in fields else None
    if column is None:
        raise UsageError(
            i18n._("{path}:1: a CSV needs an 'ejected' or 'planned' column, found {fields}").format(
                path=path,
                fields=", ".join(fields)[:60],  # (not a whole 100 KB header)
            )
        )
    counts = []
    for row in reader:
        line = reader.line_num
        if None in row:
            raise UsageError(
                i18n._("{path}:{line}: more fields than the header has ({n})").format(
                    path=path, line=line, n=len(fields)
                )
            )
        if all(not (v or "").strip() for v in row.values()):
            continue
        if "row" in row and (row["row"] or "").strip() != "press":
            continue
        if (row.get("reason") or "").strip() in UNSERVED:
            continue
        if row[column] is None:
            raise UsageError(
                i18n._("{path}:{line}: missing the {column!r} field").format(
                    path=path, line=line, column=column
                )
            )
        counts.append(_count(path, line, row[column], max_burst, what=column))
    return counts


# --------------------------------------------------------------------------- fit output


def format_fit(result: Any, source: str) -> str:
    """A ``FitResult`` as the text ``launcher model fit`` prints."""
    num = i18n.number
    p = result.params
    weights = ", ".join(f"{w:g}" for w in p.burst_weights)
    if result.p_value is None:
        verdict = _("too few dry streaks for a p-value")
    else:
        p_value = f"{result.p_value:.3g}"  # as written in statistics, in every language
        if result.p_value >= 0.05:
            verdict = _("p = {p} (consistent)").format(p=p_value)
        else:
            verdict = _("p = {p} (the data differ from a hazard model)").format(p=p_value)
    lines: list[str] = [
        _("fitted hazard model from {presses} ({fires}) in {source}").format(
            presses=_count_of(Nn_("{n} press", "{n} presses"), result.presses),
            fires=_count_of(Nn_("{n} fire", "{n} fires"), result.fires),
            source=source,
        ),
        # The values as TOML writes them: what goes into the config, in every language.
        f"  base = {p.base:g}",
        f"  step = {p.step:g}",
        f"  max_dry = {p.max_dry}",
        f"  burst_weights = [{weights}]",
        _(
            "goodness of fit on dry-streak lengths: chi-square {chi_square} on {dof} dof, "
            "{verdict}; KS distance {ks}"
        ).format(
            chi_square=num(result.chi_square, 2),
            dof=result.dof,
            verdict=verdict,
            ks=num(result.ks, 4),
        ),
        _("log-likelihood {log_likelihood}, AIC {aic}").format(
            log_likelihood=num(result.log_likelihood, 1), aic=num(result.aic, 1)
        ),
    ]
    rows: list[list[str]] = [[_("streak"), _("seen"), _("fitted")]]
    for k, (o, e) in enumerate(zip(result.observed_streaks, result.expected_streaks, strict=True)):
        if o or e >= 0.05:
            rows.append([num(k), num(o), num(e, 1)])
    lines += table(rows)
    return "\n".join(lines)


def _toml_float(x: float) -> str:
    return repr(float(round(x, 6)))


def jam_values(params: JamParams) -> dict[str, str]:
    """TOML text of the [jam] values a fit writes."""
    return {
        "mode": f'"{params.mode}"',
        "base": _toml_float(params.base),
        "step": _toml_float(params.step),
        "max_dry": str(params.max_dry),
        "burst_weights": "[" + ", ".join(f"{w:g}" for w in params.burst_weights) + "]",
        "pressure_bonus": _toml_float(params.pressure_bonus),
    }


def read_target(path: str) -> tuple[str, int, bool]:
    """The config ``--write-config`` will update: (its text, its ``[limits] max_burst``, whether
    it exists yet). A file that does not exist starts as a copy of the default config.
    ``UsageError`` for a path that cannot be one, ``ConfigError`` if the file is broken."""
    target = Path(path)
    if target.is_dir():
        raise UsageError(
            i18n._("--write-config {path}: is a directory; give the config file to update").format(
                path=path
            )
        )
    exists = target.exists()
    if not exists and not target.parent.is_dir():
        raise UsageError(
            i18n._("--write-config {path}: folder {folder} does not exist").format(
                path=path, folder=target.parent
            )
        )
    source = target if exists else default_path()
    try:
        text = textfile.read_text(source)
    except OSError as exc:
        raise UsageError(textfile.cannot_read(source, exc).render()) from None
    except UnicodeDecodeError:
        raise ConfigError(
            i18n._("{path}: not a text file (TOML must be UTF-8); not rewritten").format(path=path)
        ) from None
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            i18n._("{path}: not valid TOML ({error}); not rewritten").format(path=path, error=exc)
        ) from None
    try:
        # Only the limits now: the [jam] values they must allow are what the fit replaces;
        # the whole file is checked once they are written (write_config).
        limit = read_limits(source).max_burst
    except ConfigError as exc:
        raise ConfigError(i18n._("{error}; not rewritten").format(error=exc)) from None
    return text, limit, exists


def write_config(path: str, params: JamParams, text: str | None = None) -> None:
    """Write the fitted values into the config at ``path`` (whose current ``text`` is given, or
    read with ``read_target``), atomically, after checking the result loads. ``ConfigError`` if
    it would not (for instance burst weights beyond its ``[limits] max_burst``)."""
    from firmware.config import load

    if text is None:
        text = read_target(path)[0]
    new_text = set_values(text, {"jam": jam_values(params)})
    written = tomllib.loads(new_text).get("jam", {})
    from_mapping({k: written[k] for k in FIT_KEYS})  # what we write reads back as valid

    def loads_again(tmp: str) -> None:
        try:
            load(tmp)
        except ConfigError as exc:
            # Name the user's file, not our temporary copy of it.
            raise ConfigError(
                i18n._("{error}; not rewritten").format(error=str(exc).replace(tmp, path))
            ) from None

    # Whole or not at all, and only once the copy loads (common/atomic.py); a new config
    # is readable by the daemon's user (0666 less the umask), a rewritten one keeps its mode.
    write_atomic(path, new_text, check=loads_again)


def _fit(args: argparse.Namespace) -> int:
    # The most cards a press may fire is the config's: the one the fit goes into, else the
    # default one. A bigger --max-burst would write weights that box can never fire.
    if args.write_config:
        text, limit, existed = read_target(args.write_config)
        where = i18n._("[limits] max_burst = {limit} of {path}").format(
            limit=limit, path=args.write_config
        )
    else:
        text, existed = None, False
        limit = load_params(None)[1]
        where = i18n._(
            "[limits] max_burst = {limit} of the default config; for a box with another "
            "limit give --write-config ITS_CONFIG"
        ).format(limit=limit)
    max_burst = limit if args.max_burst is None else args.max_burst
    if not 1 <= max_burst <= limit:
        raise UsageError(
            i18n._("--max-burst must be from 1 to {where}, got {n}").format(
                where=where, n=max_burst
            )
        )
    counts = read_counts(args.file, max_burst=max_burst)
    try:
        result = fit(counts, max_burst=max_burst)
    except ValueError as exc:
        raise UsageError(f"{args.file}: {i18n.in_reader_language(exc)}") from None
    if args.write_config:
        write_config(args.write_config, result.params, text)
    if args.json:
        out = result.to_dict()
        out["source"] = args.file
        out["written"] = args.write_config
        print(json.dumps(out))
    else:
        print(format_fit(result, args.file))
        if args.write_config:
            wrote = (
                i18n._("wrote the fitted [jam] values into {path}")
                if existed
                else i18n._(
                    "wrote the fitted [jam] values into {path} "
                    "(a new file, from the default config)"
                )
            )
            print(wrote.format(path=args.write_config))
    return 0


# --------------------------------------------------------------------------- parser


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``launcher model show | sample | fit``."""
    parser = subparsers.add_parser(
        "model",
        help=i18n._("show, sample or fit the jam model"),
        description=i18n._(
            "The jam model decides how many cards each press fires. Show its exact "
            "distributions, draw presses from it, or fit it to a recording of a real box."
        ),
    )
    sub = parser.add_subparsers(dest="model_command", metavar="ACTION")
    sub.required = True

    show = sub.add_parser(
        "show",
        help=i18n._("exact distributions of the configured model"),
        description=i18n._(
            "Print the configured jam model's exact distributions: chance to fire "
            "after n dry presses, dry-streak lengths, burst sizes, cards per press."
        ),
    )
    show.add_argument(
        "--config", metavar="FILE", help=i18n._("config file (default: the packaged one)")
    )
    show.add_argument("--json", action="store_true", help=i18n._("print describe() as JSON"))
    show.add_argument(
        "--max-n", type=whole_number, default=30, metavar="N", help=i18n._("longest streak listed")
    )
    show.set_defaults(func=_show)

    smp = sub.add_parser(
        "sample",
        help=i18n._("draw presses from the configured model"),
        description=i18n._(
            "Draw presses from the configured jam model with a fixed seed; the JSON "
            "holds the per-press counts and dry-streak statistics."
        ),
    )
    smp.add_argument(
        "--config", metavar="FILE", help=i18n._("config file (default: the packaged one)")
    )
    smp.add_argument("--presses", type=whole_number, required=True, metavar="N")
    smp.add_argument("--seed", type=whole_number_from(0, MAX_SEED), required=True, metavar="S")
    smp.add_argument(
        "--json", action="store_true", help=i18n._("print counts and statistics as JSON")
    )
    smp.set_defaults(func=_sample)

    fitp = sub.add_parser(
        "fit",
        help=i18n._("fit a hazard model to recorded presses"),
        description=i18n._(
            "Fit base, step, max_dry and burst_weights by maximum likelihood to "
            "recorded per-press counts: a `launcher bench --csv` file (the 'ejected' or 'planned' "
            "column of press rows) or a text file of counts separated by newlines, commas or "
            "spaces."
        ),
    )
    fitp.add_argument(
        "file", metavar="FILE", help=i18n._("bench CSV or plain list of per-press counts")
    )
    fitp.add_argument("--json", action="store_true", help=i18n._("print the fit as JSON"))
    fitp.add_argument(
        "--write-config",
        metavar="FILE",
        help=i18n._(
            "write the fitted values into this config's [jam] section, keeping the rest (a "
            "file that does not exist yet starts as a copy of the default config)"
        ),
    )
    fitp.add_argument(
        "--max-burst",
        type=whole_number,
        metavar="N",
        help=i18n._(
            "most cards per press (default and most: [limits] max_burst of the config written, "
            "or of the default config)"
        ),
    )
    fitp.set_defaults(func=_fit)
