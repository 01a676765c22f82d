"""`launcher bench`: bench-test the ejector and record what the box really does.

The bench drives the box through the same :class:`~firmware.daemon.Daemon`, state machine and
safety limits as a game (presses or counted dispenses, never the pins directly), and records one
row per press and one per card: planned and ejected cards, the fire reason, spin-up, time to the
first card, the intervals between cards, the burst's total time, the ejector's on-time, jams and
reverse pulses. It ends with a summary (count / min / median / p95 / max per timing, misfeed and
jam rates, cards-per-press histogram, solenoid duty reached), and can write the rows to a CSV (the
input of ``launcher model fit``) and the distributions to a PNG.

On real pins it takes the pins lock (``firmware.pins.claim_pins``) first, so it refuses to run
while ``launcher run`` holds the header. With ``--mock`` it runs on gpiozero's mock pins with the
simulated mechanism (``firmware/plant.py``), refilling the plant's hopper as a person would, and
the plant's configured timings come back out of the measurement.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import io
import json
import math
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import i18n
from common.atomic import write_atomic
from common.commandline import (
    CtrlC,
    check_outputs,
    figure_bytes,
    whole_number,
    whole_number_from,
)
from common.errors import LauncherError, UsageError
from common.jam import MAX_SEED
from firmware.pins import pins_label
from i18n import N_, _, ngettext, number, percent
from i18n.layout import columns, rjust

if TYPE_CHECKING:
    from firmware.daemon import Daemon

MODES = ("fire", "dispense")
DEFAULT_PRESSES = 20
DEFAULT_BURST = 5
MAX_PRESSES = 100_000
# `stopped` of a run ended by Ctrl-C: the rows so far are still summarised and written.
INTERRUPTED = "interrupted (Ctrl-C)"
# A card interval this much longer than the median is a slot that fed nothing (a misfeed).
SLIP_FACTOR = 1.5
TIMINGS: tuple[tuple[str, str], ...] = (  # (summary key, label: translated where printed)
    ("spinup_ms", N_("spin-up")),
    ("first_card_ms", N_("first card")),
    ("interval_ms", N_("card interval")),
    ("total_ms", N_("burst total")),
    ("on_ms", N_("ejector on-time")),
    ("retract_ms", N_("retraction")),
)
CSV_COLUMNS = (
    "row",
    "press_id",
    "source",
    "planned",
    "ejected",
    "reason",
    "dry_streak",
    "spinup_ms",
    "first_card_ms",
    "total_ms",
    "on_ms",
    "retract_ms",
    "jams",
    "retries",
    "card",
    "card_ms",
    "interval_ms",
)
_MS = 1_000_000


# --------------------------------------------------------------------------- records


@dataclass
class PressRecord:
    """What one press did, from its fire event plus the bench's own on-time accounting."""

    press_id: int
    source: str
    planned: int
    ejected: int
    reason: str
    dry_streak: int
    spinup_ms: int | None
    first_card_ms: int | None
    total_ms: int | None
    on_ms: float | None
    jams: int
    retries: int
    card_ms: list[int] = field(default_factory=list)
    retract_ms: int | None = None  # the reverse phase after the burst ([ejector] retract_ms)

    @property
    def intervals(self) -> list[int]:
        """Milliseconds between successive cards of this press."""
        return [b - a for a, b in zip(self.card_ms, self.card_ms[1:], strict=False)]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able row."""
        return {
            "press_id": self.press_id,
            "source": self.source,
            "planned": self.planned,
            "ejected": self.ejected,
            "reason": self.reason,
            "dry_streak": self.dry_streak,
            "spinup_ms": self.spinup_ms,
            "first_card_ms": self.first_card_ms,
            "total_ms": self.total_ms,
            "on_ms": self.on_ms,
            "retract_ms": self.retract_ms,
            "jams": self.jams,
            "retries": self.retries,
            "card_ms": list(self.card_ms),
            "interval_ms": self.intervals,
        }


class Recorder:
    """Collects, on the loop thread, the events of the bench's presses and the ejector's on-time.

    The fire event is emitted after the burst's outputs are off, so the on-time accumulated
    since the previous burst's fire belongs to that press.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.fires: dict[int, dict] = {}
        self.records: dict[int, PressRecord] = {}
        self.jams: Counter[int] = Counter()
        self.pulses: list[tuple[int, int]] = []  # ejector (on_ns, off_ns), for the duty figure
        self._on_since: int | None = None
        self._on_ns = 0

    # loop thread ----------------------------------------------------------------------------

    def on_output(self, name: str, on: bool, now_ns: int) -> None:
        """Safety watcher (``daemon.safety.watch``): a power output turned on or off; the
        ejector's on-times are the duty figure."""
        if name != "ejector":
            return
        if on and self._on_since is None:
            self._on_since = now_ns
        elif not on and self._on_since is not None:
            self._on_ns += now_ns - self._on_since
            self.pulses.append((self._on_since, now_ns))
            self._on_since = None

    def on_event(self, event: dict) -> None:
        """Daemon subscriber: keep jam and fire events."""
        kind = event.get("kind")
        if kind == "jam" and event.get("press_id") is not None:
            self.jams[int(event["press_id"])] += 1
        elif kind == "fire":
            press_id = int(event["press_id"])
            planned = int(event.get("planned") or 0)
            burst = planned > 0 and event.get("spinup_ms") is not None
            retries = event.get("retries") or 0  # the burst's unjam retries
            record = PressRecord(
                press_id=press_id,
                source=str(event.get("source", "")),
                planned=planned,
                ejected=int(event.get("ejected") or 0),
                reason=str(event.get("reason", "")),
                dry_streak=int(event.get("dry_streak") or 0),
                spinup_ms=event.get("spinup_ms"),
                first_card_ms=event.get("first_card_ms"),
                total_ms=event.get("total_ms") if burst else None,
                on_ms=round(self._on_ns / _MS, 3) if burst else None,
                jams=self.jams.get(press_id, 0),
                retries=int(retries),
                card_ms=[int(x) for x in event.get("card_ms") or []],
                retract_ms=event.get("retract_ms"),
            )
            if burst:
                self._on_ns = 0
            with self._cond:
                self.fires[press_id] = event
                self.records[press_id] = record
                self._cond.notify_all()

    # bench thread ---------------------------------------------------------------------------

    def wait_fire(self, press_id: int, timeout: float) -> PressRecord:
        """The record of ``press_id`` once its fire event is in; ``TimeoutError`` otherwise."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while press_id not in self.records:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(
                        f"press {press_id} got no fire result within {timeout:.0f} s"
                    )
                self._cond.wait(left)
            return self.records[press_id]


# --------------------------------------------------------------------------- statistics


def stats(values: Sequence[float]) -> dict[str, float | int | None]:
    """count, min, median, p95 (nearest rank) and max of ``values``."""
    data = sorted(values)
    n = len(data)
    if n == 0:
        return {"count": 0, "min": None, "median": None, "p95": None, "max": None}
    mid = n // 2
    median = data[mid] if n % 2 else (data[mid - 1] + data[mid]) / 2
    p95 = data[max(0, math.ceil(0.95 * n) - 1)]
    return {"count": n, "min": data[0], "median": median, "p95": p95, "max": data[-1]}


def max_duty(pulses: Sequence[tuple[int, int]], window_ns: int) -> float:
    """Largest share of any ``window_ns`` window that the pulses cover.

    The share of a sliding window only peaks when its end meets a pulse's end, so windows
    ending at each pulse's end are enough.
    """
    if not pulses or window_ns <= 0:
        return 0.0
    best = 0.0
    ordered = sorted(pulses)
    first = 0
    for _start, end in ordered:
        start = end - window_ns
        while first < len(ordered) and ordered[first][1] <= start:
            first += 1
        used = 0
        for s, e in ordered[first:]:
            if s >= end:
                break
            used += max(0, min(e, end) - max(s, start))
        best = max(best, used / window_ns)
    return best


def summarise(
    records: Sequence[PressRecord],
    *,
    config: Any,
    config_path: str,
    mock: bool,
    mode: str,
    elapsed_s: float,
    pulses: Sequence[tuple[int, int]] = (),
    stopped: str | None = None,
    pins: str | None = None,
) -> dict[str, Any]:
    """The bench's summary as a JSON-able dict (``format_summary`` prints it). ``mock``: the
    pins are simulated, with the plant; ``pins`` names them (``pins.pins_label``)."""
    bursts = [r for r in records if r.spinup_ms is not None and r.planned > 0]
    intervals: list[float] = [i for r in records for i in r.intervals]
    timing_values: dict[str, list[float]] = {
        "spinup_ms": [r.spinup_ms for r in bursts if r.spinup_ms is not None],
        "first_card_ms": [r.first_card_ms for r in bursts if r.first_card_ms is not None],
        "interval_ms": intervals,
        "total_ms": [r.total_ms for r in bursts if r.total_ms is not None],
        "on_ms": [r.on_ms for r in bursts if r.on_ms is not None],
        "retract_ms": [r.retract_ms for r in bursts if r.retract_ms is not None],
    }
    median_interval = stats(intervals)["median"]
    slipped = 0
    if median_interval:
        for i in intervals:
            if i > SLIP_FACTOR * median_interval:
                slipped += max(1, round(i / median_interval) - 1)
    cards = sum(r.ejected for r in records)
    top = max([r.ejected for r in records] + [config.limits.max_burst])
    hist = [0] * (top + 1)
    for r in records:
        hist[r.ejected] += 1
    short = sum(1 for r in bursts if r.ejected < r.planned)
    jammed = sum(1 for r in bursts if r.jams or r.retries)
    duty = None
    if config.ejector.kind == "solenoid":
        window = config.limits.solenoid_duty_window_ms
        duty = {
            "max": max_duty(pulses, window * _MS),
            "cap": config.limits.solenoid_duty_max,
            "window_ms": window,
        }
    summary: dict[str, Any] = {
        "config": config_path,
        "pins": pins or ("mock" if mock else "gpio"),
        "ejector": config.ejector.kind,
        "mode": mode,
        "seed": config.jam.seed,  # 0: the jam model was seeded afresh (not repeatable)
        "presses": len(records),
        "bursts": len(bursts),
        "planned": sum(r.planned for r in records),
        "cards": cards,
        "elapsed_s": round(elapsed_s, 3),
        "timings": {key: stats(values) for key, values in timing_values.items()},
        "reasons": dict(Counter(r.reason for r in records)),
        "misfeeds": slipped,
        "misfeed_rate": slipped / (cards + slipped) if cards + slipped else 0.0,
        "short_bursts": short,
        "short_burst_rate": short / len(bursts) if bursts else 0.0,
        "jams": sum(r.jams for r in records),
        "retries": sum(r.retries for r in records),
        "jam_rate": jammed / len(bursts) if bursts else 0.0,
        "cards_per_press": hist,
        "solenoid_duty": duty,
        "stopped": stopped,
    }
    if mock:
        plant = config.plant
        summary["plant"] = {
            "feed_interval_ms": plant.feed_interval_ms,
            "feed_jitter_ms": plant.feed_jitter_ms,
            "spinup_ms": plant.spinup_ms,
            "beam_ms": plant.beam_ms,
        }
    return summary


def _fmt(value: float | int | None) -> str:
    if value is None:
        return "-"
    return number(value, 0 if float(value).is_integer() else 1)


def format_summary(summary: dict[str, Any]) -> str:
    """The summary table ``launcher bench`` prints (in the language in use; the mode, ejector,
    pins and fire reasons are the config's and the box's own words)."""
    lines: list[str] = [
        _(
            "bench: {presses} ({mode} mode), {cards} of {planned} planned in {seconds} s; "
            "{ejector} ejector on {pins} pins, seed {seed}"
        ).format(
            presses=ngettext("{n} press", "{n} presses", summary["presses"]).format(
                n=number(summary["presses"])
            ),
            mode=summary["mode"],
            cards=ngettext("{n} card", "{n} cards", summary["cards"]).format(
                n=number(summary["cards"])
            ),
            planned=number(summary["planned"]),
            seconds=number(summary["elapsed_s"], 1),
            ejector=summary["ejector"],
            pins=summary["pins"],
            seed=summary.get("seed") or _("fresh"),
        ),
    ]
    if summary["stopped"]:
        lines.append(_("stopped early: {why}").format(why=summary["stopped"]))
    rows: list[list[str]] = [
        [_("timing (ms)"), _("samples"), _("minimum"), _("median"), _("p95"), _("maximum")]
    ]
    for key, label in TIMINGS:
        s = summary["timings"][key]
        figures = [s["min"], s["median"], s["p95"], s["max"]]
        rows.append([_(label), number(s["count"]), *map(_fmt, figures)])
    lines += ["", *columns(rows, right={1, 2, 3, 4, 5})]
    reasons = ", ".join(f"{k} {number(v)}" for k, v in sorted(summary["reasons"].items()))
    lines += [
        "",
        _("reasons: {reasons}").format(reasons=reasons or _("none")),
        _(
            "misfeeds: {misfeeds} slipped card slots ({share} of slots); short bursts "
            "{short} ({short_share} of bursts)"
        ).format(
            misfeeds=number(summary["misfeeds"]),
            share=percent(summary["misfeed_rate"]),
            short=number(summary["short_bursts"]),
            short_share=percent(summary["short_burst_rate"]),
        ),
        _("jams: {jams} latched, {retries} unjam retries ({share} of bursts needed one)").format(
            jams=number(summary["jams"]),
            retries=number(summary["retries"]),
            share=percent(summary["jam_rate"]),
        ),
    ]
    duty = summary["solenoid_duty"]
    if duty is not None:
        lines.append(
            _("solenoid duty reached: {share} of a {ms} ms window (cap {cap})").format(
                share=percent(duty["max"]),
                ms=number(duty["window_ms"]),
                cap=percent(duty["cap"], 0),
            )
        )
    if "plant" in summary:
        p = summary["plant"]
        lines.append(
            _("plant (mock): feed interval {interval} ± {jitter} ms, spin-up {spinup} ms").format(
                interval=number(p["feed_interval_ms"]),
                jitter=number(p["feed_jitter_ms"]),
                spinup=number(p["spinup_ms"]),
            )
        )
    hist = summary["cards_per_press"]
    last = max((k for k, n in enumerate(hist) if n), default=0)
    most = max(hist) or 1
    lines += ["", _("cards per press")]
    for k in range(last + 1):
        bar = "#" * round(40 * hist[k] / most)
        lines.append(f"{rjust(number(k), 4)} {rjust(number(hist[k]), 6)} {bar}".rstrip())
    return "\n".join(lines)


# --------------------------------------------------------------------------- outputs


def write_csv(path: str | Path, records: Sequence[PressRecord]) -> None:
    """One ``press`` row per press, then one ``card`` row per card of it; written whole or
    not at all (common/atomic.py: a failing write leaves an earlier run's file as it was)."""
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(CSV_COLUMNS)
    for r in records:
        d = r.to_dict()
        writer.writerow(["press"] + [_cell(d[c]) for c in CSV_COLUMNS[1:13]] + ["", "", ""])
        previous = None
        for i, t in enumerate(r.card_ms, start=1):
            interval = "" if previous is None else t - previous
            writer.writerow(["card", r.press_id] + [""] * 11 + [i, t, interval])
            previous = t
    try:
        write_atomic(path, text.getvalue())
    except OSError as exc:
        raise LauncherError(f"cannot write {path}: {exc.strerror or exc}") from None


def _is_ours_to_overwrite(path: Path) -> bool:
    """True unless ``path`` is a non-empty file whose first line is not our CSV header."""
    try:
        with path.open("rb") as handle:
            head = handle.readline(4096)
    except FileNotFoundError:
        return True
    except OSError:
        return True  # not readable: writing it will say why
    header = ",".join(CSV_COLUMNS).encode()
    return not head.strip() or head.rstrip(b"\r\n").removeprefix(b"\xef\xbb\xbf") == header


def _cell(value: Any) -> Any:
    return "" if value is None else value


def write_plot(path: str | Path, records: Sequence[PressRecord], summary: dict[str, Any]) -> None:
    """A PNG: histograms of the timings and the cards-per-press histogram."""
    import matplotlib

    matplotlib.use("Agg")  # files only; never needs a display
    import matplotlib.pyplot as plt

    bursts = [r for r in records if r.spinup_ms is not None and r.planned > 0]
    panels = [
        ("card interval (ms)", [i for r in records for i in r.intervals]),
        (
            "time to first card (ms)",
            [r.first_card_ms for r in bursts if r.first_card_ms is not None],
        ),
        ("burst total (ms)", [r.total_ms for r in bursts if r.total_ms is not None]),
    ]
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    for ax, (title, values) in zip(axes.flat, panels, strict=False):
        if values:
            ax.hist(values, bins=min(30, max(5, len(set(values)))), color="#d62728")
        else:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
        ax.set_title(title)
        ax.set_ylabel("count")
    if "plant" in summary:
        p = summary["plant"]
        lo = p["feed_interval_ms"] - p["feed_jitter_ms"]
        hi = p["feed_interval_ms"] + p["feed_jitter_ms"]
        axes.flat[0].axvspan(lo, hi, color="#999999", alpha=0.25, label="plant interval ± jitter")
        axes.flat[0].legend(loc="upper right", fontsize="small")
    hist = summary["cards_per_press"]
    ax = axes.flat[3]
    ax.bar(range(len(hist)), hist, color="#1f77b4")
    ax.set_title("cards per press")
    ax.set_xlabel("cards")
    ax.set_ylabel("presses")
    fig.suptitle(
        f"launcher bench: {summary['presses']} presses, {summary['cards']} cards "
        f"({summary['ejector']}, {summary['pins']} pins, {summary['mode']} mode)"
    )
    fig.tight_layout()
    try:
        write_atomic(path, figure_bytes(fig, path, dpi=100))
    except OSError as exc:
        raise LauncherError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)


class Progress:
    """A one-line progress bar on a terminal (stderr); silent when the stream is not a tty."""

    def __init__(self, total: int, unit: str, stream: TextIO | None = None) -> None:
        self.total = max(1, total)
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = 0.0

    def update(self, done: int, cards: int, *, force: bool = False) -> None:
        """Redraw (at most 10 times a second unless ``force``)."""
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.1:
            return
        self._last = now
        share = min(1.0, done / self.total)
        bar = "#" * int(30 * share)
        self.stream.write(f"\rbench [{bar:<30}] {done}/{self.total} {self.unit}, {cards} cards ")
        self.stream.flush()

    def close(self) -> None:
        """End the line."""
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


# --------------------------------------------------------------------------- the run


@dataclass
class BenchResult:
    """Rows and summary of a bench run."""

    records: list[PressRecord]
    summary: dict[str, Any]
    pulses: list[tuple[int, int]]


def _press_timeout_s(config: Any, count: int) -> float:
    """Longest a press may honestly take before its fire result (all retries used on each card)."""
    e, t, lim = config.ejector, config.timing, config.limits
    per_card = (t.card_timeout_ms + e.reverse_pulse_ms) * (lim.unjam_retries + 1)
    if e.kind == "solenoid":
        per_card += e.pulse_ms + e.recovery_ms + lim.solenoid_duty_window_ms
    ms = e.flywheel_spinup_ms + e.soft_start_ms + e.retract_ms + t.cooldown_ms + count * per_card
    return ms / 1000 + 10.0


def run_bench(
    config: Any,
    *,
    factory: Any,
    plant: Any = None,
    config_path: str = "",
    mode: str = "fire",
    presses: int | None = None,
    cards: int | None = None,
    burst: int = DEFAULT_BURST,
    progress: Progress | None = None,
    daemon_hook: Callable[[Daemon], None] | None = None,
    ctrl_c: CtrlC | None = None,
) -> BenchResult:
    """Run the bench on ``factory`` (mock with ``plant``, or real pins already claimed).

    Stops after ``presses`` presses or once ``cards`` cards are out, or early when the box
    latches (jammed, empty, fault) or refuses a press; the summary's ``stopped`` says why.
    Ctrl-C stops the presses (only while they run, with ``ctrl_c``: never the box's shutdown).
    """
    if mode not in MODES:
        raise UsageError(f"--mode must be one of {', '.join(MODES)}, got {mode!r}")
    if presses is None and cards is None:
        presses = DEFAULT_PRESSES
    from firmware.daemon import Daemon  # here: `launcher --help` builds this parser too

    burst = min(burst, config.limits.max_burst)
    recorder = Recorder()
    daemon = Daemon(config, factory=factory, plant=plant, config_path=config_path)
    daemon.safety.watch(recorder.on_output)
    daemon.subscribe(recorder.on_event)
    records: list[PressRecord] = []
    stopped: str | None = None
    started = time.monotonic()
    with daemon:
        if daemon_hook is not None:
            daemon_hook(daemon)
        out = 0
        try:
            with ctrl_c.stopping() if ctrl_c is not None else contextlib.nullcontext():
                stopped, out = _press_loop(
                    daemon,
                    recorder,
                    records,
                    config=config,
                    plant=plant,
                    mode=mode,
                    presses=presses,
                    cards=cards,
                    burst=burst,
                    progress=progress,
                )
        except KeyboardInterrupt:
            # Ctrl-C ends the run, not the record of it: the presses done so far are kept.
            stopped = INTERRUPTED
            out = sum(r.ejected for r in records)
    elapsed = time.monotonic() - started
    if progress is not None:
        progress.update(len(records) if presses is not None else out, out, force=True)
        progress.close()
    summary = summarise(
        records,
        config=config,
        config_path=config_path,
        mock=plant is not None,
        pins=pins_label(factory, simulated=plant is not None),
        mode=mode,
        elapsed_s=elapsed,
        pulses=recorder.pulses,
        stopped=stopped,
    )
    return BenchResult(records=records, summary=summary, pulses=list(recorder.pulses))


def _press_loop(
    daemon: Daemon,
    recorder: Recorder,
    records: list[PressRecord],
    *,
    config: Any,
    plant: Any,
    mode: str,
    presses: int | None,
    cards: int | None,
    burst: int,
    progress: Progress | None,
) -> tuple[str | None, int]:
    """Press until done; appends to ``records`` as it goes. Returns (why it stopped, cards out)."""
    max_burst = config.limits.max_burst
    stopped: str | None = None
    out = 0
    # A hazard model fires eventually; this bound only stops a model that never does.
    limit = presses if presses is not None else max(100, 200 * (cards or 0))
    while len(records) < limit and (cards is None or out < cards):
        hopper = daemon.hopper.count
        if plant is not None and hopper is not None and hopper <= max_burst:
            # The person at a mock box refills the hopper before it runs dry.
            _command(daemon, "load", {"total": max(int(config.plant.hopper), 2 * max_burst)})
        if daemon.state in ("jammed", "empty", "fault", "stopping"):
            stopped = f"the box is {daemon.state}" + (
                f" ({daemon.fault_reason})" if daemon.fault_reason else ""
            )
            break
        if mode == "fire":
            reply = _command(daemon, "press", {})
            count = max_burst
        else:
            count = burst if cards is None else max(1, min(burst, cards - out))
            reply = _command(daemon, "dispense", {"count": count})
        if not reply.get("ok"):
            stopped = f"the box refused the {mode}: {reply['error']['message']}"
            break
        record = recorder.wait_fire(int(reply["press_id"]), _press_timeout_s(config, count))
        records.append(record)
        out += record.ejected
        if progress is not None:
            progress.update(len(records) if presses is not None else out, out)
        if record.reason in ("locked", "queue_full", "stopping", "fault", "interrupted"):
            stopped = f"press {record.press_id} was not served ({record.reason})"
            break
        if record.reason == "jammed":
            # The fire event comes just before the box latches jammed; on a slow Pi the state
            # read above can still say idle, and another press would be refused or queued.
            stopped = "the box is jammed"
            break
    return stopped, out


def _command(daemon: Daemon, op: str, args: dict, timeout: float = 10.0) -> dict:
    done = threading.Event()
    box: dict[str, dict] = {}

    def reply(result: dict) -> None:
        box["r"] = result
        done.set()

    daemon.submit(op, args, reply)
    if not done.wait(timeout):
        raise LauncherError(f"the box did not answer {op!r} within {timeout:.0f} s")
    return box["r"]


# --------------------------------------------------------------------------- command line


def _bench(args: argparse.Namespace) -> int:
    from firmware import config as config_mod
    from firmware.pins import mock_requested

    if args.presses is not None and args.cards is not None:
        raise UsageError("give --presses N or --cards N, not both")
    if args.presses is not None and not 1 <= args.presses <= MAX_PRESSES:
        raise UsageError(f"--presses must be between 1 and {MAX_PRESSES}, got {args.presses}")
    if args.cards is not None and not 1 <= args.cards <= MAX_PRESSES:
        raise UsageError(f"--cards must be between 1 and {MAX_PRESSES}, got {args.cards}")
    check_outputs(args.csv, args.plot, UsageError, _is_ours_to_overwrite, owner="bench")
    path = str(args.config or config_mod.default_path())
    cfg = config_mod.load(path)  # ConfigError: one line, exit 78
    if args.seed is not None:
        # The same seed makes the same run: the jam model's plan and the mock plant's jitter.
        cfg = dataclasses.replace(
            cfg,
            jam=dataclasses.replace(cfg.jam, seed=args.seed),
            plant=dataclasses.replace(cfg.plant, seed=args.seed),
        )
    # The bench measures the ejector, not the show: no motion patterns (their pauses would read
    # as slipped card slots) and no rapid-press cut (the bench presses as fast as it may). The
    # retraction stays: it is part of every motor burst, and the bench reports its time.
    cfg = dataclasses.replace(
        cfg,
        patterns=dataclasses.replace(cfg.patterns, enabled=False),
        attenuation=dataclasses.replace(cfg.attenuation, window_ms=0),
    )
    if args.burst is not None and not 1 <= args.burst <= cfg.limits.max_burst:
        raise UsageError(
            f"--burst must be between 1 and [limits] max_burst = {cfg.limits.max_burst}, "
            f"got {args.burst}"
        )
    # However many Ctrl-C come: the presses stop once, the box is shut down (outputs off), the
    # summary is printed and the rows written, exit 130.
    with CtrlC(until_exit=True) as ctrl_c:
        return _bench_on(args, cfg, path, mock=bool(args.mock or mock_requested()), ctrl_c=ctrl_c)


def _bench_on(args: argparse.Namespace, cfg: Any, path: str, *, mock: bool, ctrl_c: CtrlC) -> int:
    """`launcher bench` with its checked config: on the pins (claimed here) or the mock box."""
    from firmware.pins import claim_pins, make_factory

    lock = None
    if not mock:
        try:
            lock = claim_pins()
        except LauncherError as exc:
            raise LauncherError(
                f"bench refused: {exc}; stop it first (sudo systemctl stop launcher) "
                "or bench the simulated box with --mock"
            ) from None
    try:
        factory = make_factory(mock=mock)  # a library that cannot drive the pins: one line
        plant = None
        from firmware.plant import Plant, world_of

        if world_of(factory) is not None:  # mock pins, or the simulated chip of tests/pi-check
            plant = Plant(cfg.plant, factory, cfg.pins, kind=cfg.ejector.kind)
        total = args.presses if args.cards is None else args.cards
        unit = "cards" if args.cards is not None else "presses"
        progress = Progress(total or DEFAULT_PRESSES, unit)
        result = run_bench(
            cfg,
            factory=factory,
            plant=plant,
            config_path=path,
            mode=args.mode,
            presses=args.presses,
            cards=args.cards,
            burst=args.burst or DEFAULT_BURST,
            progress=progress,
            ctrl_c=ctrl_c,
        )
    finally:
        if lock is not None:
            lock.release()
    # The files first; one that cannot be written is said last, after the summary: a full disk
    # must not take the run's numbers with it.
    written, failed = [], None
    for message, target, write in (
        (N_("rows written to {path}"), args.csv, lambda: write_csv(args.csv, result.records)),
        (
            N_("plot written to {path}"),
            args.plot,
            lambda: write_plot(args.plot, result.records, result.summary),
        ),
    ):
        if target:
            try:
                write()
                written.append((message, target))
            except LauncherError as exc:
                failed = failed or exc
    if args.json:
        print(
            json.dumps(
                {"summary": result.summary, "presses": [r.to_dict() for r in result.records]}
            )
        )
    else:
        print(format_summary(result.summary))
        for message, target in written:
            print(_(message).format(path=target))
    if failed is not None:
        sys.stdout.flush()
        raise failed
    if result.summary["stopped"] == INTERRUPTED:
        return 130  # the shell's code for Ctrl-C, after the rows so far were written
    return 0 if result.summary["stopped"] is None else 1


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``launcher bench``."""
    parser = subparsers.add_parser(
        "bench",
        help=i18n._("bench-test the ejector: timings, misfeeds, jams, cards per press"),
        description=i18n._(
            "Drive the ejector through the daemon's state machine and safety limits, "
            "record one row per press and per card, and print a summary. Refuses to run while the "
            "launcher daemon holds the pins. Exit 1 if the run stopped early (jam, empty, fault); "
            "Ctrl-C stops it and still prints and writes what was measured (exit 130)."
        ),
    )
    parser.add_argument(
        "--config", metavar="FILE", help=i18n._("config file (default: the packaged one)")
    )
    parser.add_argument(
        "--mock",
        action="store_true",
        help=i18n._("mock pins with the simulated mechanism (the plant)"),
    )
    count = parser.add_mutually_exclusive_group()
    count.add_argument(
        "--presses",
        type=whole_number,
        metavar="N",
        help=i18n._("presses to make (default {n})").format(n=DEFAULT_PRESSES),
    )
    count.add_argument(
        "--cards", type=whole_number, metavar="N", help=i18n._("run until N cards are out")
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        default="fire",
        help=i18n._("fire: presses through the jam model; dispense: exactly --burst cards each"),
    )
    parser.add_argument(
        "--burst",
        type=whole_number,
        metavar="K",
        help=i18n._("cards per dispense in --mode dispense (default {n})").format(n=DEFAULT_BURST),
    )
    parser.add_argument(
        "--seed",
        type=whole_number_from(0, MAX_SEED),
        metavar="S",
        help=i18n._(
            "seed of the jam model (and of the mock plant): the same seed repeats the run's "
            "presses; default the config's [jam] seed (0: fresh each run)"
        ),
    )
    parser.add_argument(
        "--csv",
        metavar="FILE",
        help=i18n._("write press and card rows to this CSV (a new file, or one a bench run wrote)"),
    )
    parser.add_argument(
        "--plot", metavar="FILE.png", help=i18n._("write timing histograms to a PNG")
    )
    parser.add_argument(
        "--json", action="store_true", help=i18n._("print summary and rows as JSON")
    )
    parser.set_defaults(func=_bench)
