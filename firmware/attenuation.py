"""Rapid-press attenuation: hammering the button makes the box fire less, not more.

A button press that comes within ``window_ms`` of the button press before it is *rapid*; the
``r``-th rapid press in a row has the burst the jam model planned multiplied by ``curve[r-1]``
(the last factor holds for longer runs) and rounded down. A press after a pause of at least
``window_ms`` starts afresh. Only button presses count and are cut: a host's press and a
``dispense`` (the rules' exact draws) never are. ``window_ms = 0`` turns it off.

The factors are 0 to 1: attenuation can only take cards away, so no setting of it can raise a
burst past what the jam model and ``[limits] max_burst`` allow. The curve and the counter are
pure (standard library); :class:`Attenuation` is the daemon's feature over them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from common.checks import BadValue, Check, boolean, whole_number
from i18n import Nn_, Text, _, ngettext, number, percent
from i18n.layout import columns

_MS = 1_000_000
MAX_WINDOW_MS = 10_000
MAX_CURVE = 16


@dataclass(frozen=True)
class AttenuationConfig:
    """``[attenuation]``: the window, the curve and whether a cut press cues ``spam``."""

    window_ms: int = 700
    curve: tuple[float, ...] = (0.5, 0.25, 0.0)
    spam_sound: bool = True


def _curve(value: object) -> tuple[float, ...]:
    rule = Text("must list 1 to {most} factors from 0 to 1", most=MAX_CURVE)
    if not isinstance(value, list | tuple) or not 1 <= len(value) <= MAX_CURVE:
        raise BadValue(rule)
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= 1:
            raise BadValue(rule)  # (a NaN is not from 0 to 1 either)
    return tuple(float(v) for v in value)


# The check of each [attenuation] key: the config file's reader and `settings.set`
# (``attenuation.KEY``, all three) run the same one. Factors 0 to 1 only take cards away.
KEYS: dict[str, Check[Any]] = {
    "window_ms": whole_number(0, MAX_WINDOW_MS),
    "curve": _curve,
    "spam_sound": boolean,
}


def factor(curve: Sequence[float], rapid: int) -> float:
    """The factor of the ``rapid``-th rapid press in a row (0: not rapid, 1.0)."""
    if rapid <= 0:
        return 1.0
    return float(curve[min(rapid, len(curve)) - 1])


def cut(planned: int, curve: Sequence[float], rapid: int) -> int:
    """Cards the attenuated press fires: ``floor(planned * factor)``."""
    return math.floor(planned * factor(curve, rapid) + 1e-9)


class Attenuator:
    """Counts rapid button presses and cuts their bursts (loop thread only)."""

    def __init__(self, config: AttenuationConfig) -> None:
        self.config = config
        self.rapid = 0  # rapid presses in a row, this one included once ``note`` saw it
        self._last_ns: int | None = None

    @property
    def enabled(self) -> bool:
        """False when ``window_ms`` is 0."""
        return self.config.window_ms > 0

    def note(self, t_ns: int) -> int:
        """A button press at ``t_ns``: returns how many rapid presses in a row it makes (0: not
        rapid)."""
        last, self._last_ns = self._last_ns, t_ns
        if not self.enabled or last is None or t_ns - last >= self.config.window_ms * _MS:
            self.rapid = 0
        else:
            self.rapid += 1
        return self.rapid

    def apply(self, planned: int, rapid: int) -> int:
        """``planned`` cut for the ``rapid``-th rapid press."""
        return cut(planned, self.config.curve, rapid) if self.enabled else planned

    def rows(self, cards_per_press: Sequence[float] | None = None) -> list[dict[str, float]]:
        """One row per place in a rapid run (0: not rapid; the last holds for longer runs):
        ``rapid``, ``factor`` and, given the jam model's distribution of planned cards per
        press (index = cards, ``describe()["cards_per_press"]``), ``cards_per_press_mean``
        (exact: the cut applies after the model's draw)."""
        curve = self.config.curve
        out: list[dict[str, float]] = []
        for r in range(len(curve) + 1):
            row: dict[str, float] = {"rapid": r, "factor": factor(curve, r)}
            if cards_per_press is not None:
                row["cards_per_press_mean"] = sum(
                    p * cut(k, curve, r) for k, p in enumerate(cards_per_press)
                )
            out.append(row)
        return out

    def explain(self, cards_per_press: Sequence[float] | None = None) -> list[str]:
        """Lines for ``launcher model show``: what the curve does to a hammered button."""
        cfg = self.config
        if not self.enabled:
            return [_("rapid-press attenuation: off ([attenuation] window_ms = 0)")]
        into = Nn_("{n} card ->", "{n} cards ->")
        rows: list[list[str]] = [
            [_("press in a rapid run"), _("factor"), ngettext(*into, 3).format(n=number(3)),
             ngettext(*into, 8).format(n=number(8)), _("cards per press")]
        ]  # fmt: skip
        figures = self.rows(cards_per_press)
        base = figures[0].get("cards_per_press_mean")
        for row in figures:
            r = int(row["rapid"])
            if r == 0:
                label = _("not rapid")
            elif r == len(cfg.curve):
                label = _("rapid #{n}+").format(n=r)  # this one and every later one
            else:
                label = _("rapid #{n}").format(n=r)
            mean = ""
            if "cards_per_press_mean" in row:
                value = row["cards_per_press_mean"]
                mean = number(value, 2) + (f" ({percent(value / base, 0)})" if base else "")
            rows.append(
                [label, number(row["factor"], 2), number(cut(3, cfg.curve, r)),
                 number(cut(8, cfg.curve, r)), mean]
            )  # fmt: skip
        return [
            _(
                "rapid-press attenuation: a button press within {ms} ms of the one before is "
                "rapid; its burst is multiplied by the curve, rounded down"
            ).format(ms=number(cfg.window_ms)),
            "",
            *(" " + line for line in columns(rows, right=set(range(5)), sep=" | ")),
            _("only button presses are cut (host presses and dispense never); a cut press cues "
              "'spam'") if cfg.spam_sound
            else _("only button presses are cut (host presses and dispense never)"),
        ]  # fmt: skip


# --------------------------------------------------------------------------- the box's feature


class Attenuation:
    """Rapid-press attenuation on the box (``box.attenuation``), with the settings in force
    (``attenuation.*``, bounded as the config's own: factors 0-1). A feature in the sense of
    ``firmware/feature.py`` without importing it: ``[attenuation]`` is read by the config, which
    the host imports too, so this module stays free of the daemon's imports.

    The press queue calls :meth:`note` for each button press it admits and :meth:`cut` when it
    serves one; a cut press cues ``spam`` when ``attenuation.spam_sound`` is on.
    """

    def __init__(self, box: Any) -> None:
        self.box = box
        self.counter = Attenuator(box.config.attenuation)

    def status(self) -> dict[str, Any]:
        """No ``status`` fields."""
        return {}

    def _current(self) -> AttenuationConfig:
        value = self.box.settings.value
        return AttenuationConfig(
            window_ms=int(value("attenuation.window_ms")),
            curve=tuple(value("attenuation.curve")),
            spam_sound=bool(value("attenuation.spam_sound")),
        )

    def note(self, t_ns: int) -> int:
        """A button press admitted at ``t_ns``: its place in a rapid run (0: not rapid)."""
        self.counter.config = self._current()
        return self.counter.note(t_ns)

    def cut(self, planned: int, rapid: int) -> int:
        """``planned`` for the ``rapid``-th rapid press (spam cue when it takes cards away)."""
        cfg = self._current()
        self.counter.config = cfg
        out = self.counter.apply(planned, rapid)
        if out < planned and cfg.spam_sound:
            self.box.sound.cue("spam")
        return out
