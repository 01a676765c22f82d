"""The box at the table: its events become the referee's steps, and its button follows the game.

A fire event is a press (Attack) or a dispense (classic) that brought cards: it is applied to
the referee as a step of the box's (`Table.box_step`), which undo cannot take back (the cards
have left the box). A stray card goes to the last hitter. A box event is applied once: the last
one applied is kept (and saved), and the box replays everything after it.

After every step the button follows `Referee.hitter()` (`sync`): locked when nobody must hit,
aimed at and unlocked for the seat that must (classic: locked, and the referee dispenses what is
owed itself, recording the dispense before it goes out so a restart never sends it twice).

Everything this module has to say is an outcome (engine/outcomes.py) for the narrator.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Protocol

from common.jam import JamParams
from engine.boxport import BoxPort
from engine.errors import InputError, RuleError, UnoError
from engine.outcomes import (
    AimFailed,
    BoxEmpty,
    BoxJammed,
    BoxNews,
    BoxTrouble,
    ButtonLive,
    ButtonLocked,
    Cleared,
    DispenseHeld,
    DispensePending,
    DispenseRefused,
    DispenseSent,
    DispenseUnanswered,
    Loaded,
    LockedForGoodbye,
    LockFailed,
    Outcome,
    PressNote,
    PressRefused,
    ResendArmed,
    Unowed,
)
from engine.table.referee import Referee
from engine.table.state_file import StateNotSaved, unsaved
from engine.words import plural
from i18n import _, message_of
from wire.text import news

__all__ = ["MAX_FIRED", "BoxSync", "Table", "refused"]

# Fire reasons that mean "nothing was pressed": the press never reached the mechanism. A press
# refused by a latched box (`jammed`, `empty`, `fault`) says so with `planned` 0, while a burst
# cut short by a jam or an empty hopper was planned: it was a hit.
NOT_A_HIT = frozenset({"locked", "queue_full", "stopping"})
REFUSED_WHEN_UNPLANNED = frozenset({"jammed", "empty", "fault"})
# `fired N` without a box: one press fires at most the launcher's default max_burst.
MAX_FIRED = JamParams.max_burst


def refused(event: dict[str, Any]) -> bool:
    """True when a fire event is a press the box refused (it counts for nobody)."""
    reason = event.get("reason")
    if reason in NOT_A_HIT:
        return True
    return (
        reason in REFUSED_WHEN_UNPLANNED and not event.get("planned") and not event.get("ejected")
    )


class Table(Protocol):
    """What the box needs of the table it serves (engine/table/session.py)."""

    ref: Referee

    def tell(self, *said: Outcome) -> None:
        """Say what happened."""

    def box_step(self, change: Callable[[Referee], list[Outcome]]) -> None:
        """Apply `change` to the referee as a step of the box's (said; undo cannot take it
        back while a box is connected)."""

    def save(self, *, force: bool = False) -> None:
        """Write the state file (when it changed, or `force`)."""


class BoxSync:
    """The box of a table (`box` None: a table without one, told `fired N`), and what the
    table keeps of it: the last event applied (`last_event`), the last seat that hit (a
    stray card is theirs) and, classic, the dispense in flight."""

    def __init__(
        self,
        table: Table,
        box: BoxPort | None,
        *,
        last_event: dict[str, Any] | None = None,
        dispensing: dict[str, Any] | None = None,
    ) -> None:
        self.table = table
        self.box = box
        # The last box event applied: a restarted host may be sent it again (replay).
        self.last_event: dict[str, Any] = dict(last_event or {})
        self.last_hitter: int | None = self.last_event.get("hitter")
        self.locked: bool | None = None
        self.aim: int | None = None
        self.servo = True
        # Classic: the dispense in flight, {"seat", "cards", "press_id"}. It is saved BEFORE
        # the command goes out (press_id None) and again with the box's press id, so a
        # restarted referee never sends it twice: it waits for the fire event the box replays.
        self.dispensing: dict[str, Any] | None = None
        # Classic: a short dispense (jam, empty launcher) waits for `clear` or `load`.
        self.hold = bool((dispensing or {}).get("hold"))
        if dispensing and not dispensing.get("hold"):
            self.dispensing = {k: dispensing[k] for k in ("seat", "cards", "press_id")}

    def mark(self) -> dict[str, Any]:
        """What a step may change here, to put back (`restore`) if it cannot be saved."""
        return {
            "last_event": dict(self.last_event),
            "last_hitter": self.last_hitter,
            "dispensing": dict(self.dispensing) if self.dispensing else None,
            "hold": self.hold,
        }

    def restore(self, mark: dict[str, Any]) -> None:
        """Back as it was at `mark`."""
        self.last_event = dict(mark["last_event"])
        self.last_hitter = mark["last_hitter"]
        self.dispensing = dict(mark["dispensing"]) if mark["dispensing"] else None
        self.hold = mark["hold"]

    def resumed(self) -> list[Outcome]:
        """What a restarted referee says of the dispense it was sending, if any."""
        if self.dispensing is None:
            return []
        sent = self.dispensing.get("press_id") is not None
        return [DispensePending(int(self.dispensing["seat"]), int(self.dispensing["cards"]), sent)]

    # -- what is typed about the box --------------------------------------------------------------
    def press(self) -> None:
        """Press the box from the keyboard: its fire event is what counts, as a press of the
        button's."""
        ref = self.table.ref
        if ref.classic:
            raise RuleError(_("classic: nobody presses; the referee dispenses the cards owed"))
        if self.box is None:
            raise RuleError(_("no box connected: type `fired N` with the cards it fired"))
        if ref.hitter() is None:
            raise RuleError(_("nobody owes a hit now"))
        self.box.press()

    def fired(self, ref: Referee, count: int) -> list[Outcome]:
        """Without a box: the press (or dispense) fired `count` cards."""
        if self.box is not None:
            raise RuleError(_("`fired` is for a table without a box: the box reports its presses"))
        due = ref.dispense_due()
        if ref.classic and due is not None:
            if count > due[1]:
                raise InputError(
                    _("fired {count}: the launcher was asked for {cards}").format(
                        count=count, cards=plural(due[1], "card")
                    )
                )
        elif ref.phase == "play":
            room = max(0, ref.deck.total - sum(ref.hand) - 1)
            most = min(MAX_FIRED, room)
            if count > most:
                raise InputError(
                    _(
                        "fired {count}: one press fires 0 to {most} cards (the box's max_burst is "
                        "{burst}; {cards} can be in the launcher)"
                    ).format(count=count, most=most, burst=MAX_FIRED, cards=plural(room, "card"))
                )
        return ref.press(count)

    def load(self, count: int) -> list[Outcome]:
        """The launcher was refilled and holds `count` cards (the box is told so, and cleared)."""
        ref = self.table.ref
        if count > ref.deck.total:
            raise InputError(
                _("load {count}: the {deck} deck has {total}").format(
                    count=count, deck=ref.deck.name, total=ref.deck.total
                )
            )
        if self.box is None:
            return [Loaded(count, box=False)]
        reply = self.box.load(total=count)
        with contextlib.suppress(UnoError):
            self.box.clear()
        self.hold = False
        return [Loaded(int(reply.get("hopper", count)), box=True)]

    def clear(self) -> list[Outcome]:
        """Clear a jammed or empty box (classic: the rest of a short dispense goes out)."""
        if self.box is None:
            raise RuleError(_("no box connected"))
        reply = self.box.clear()
        self.hold = False
        return [Cleared(str(reply.get("state", "cleared")))]

    def resend(self) -> list[Outcome]:
        """Classic: a dispense the referee was sending when it stopped never fired: send again."""
        if self.dispensing is None or self.dispensing.get("press_id") is not None:
            raise RuleError(_("`resend` is only for a dispense lost when the referee stopped"))
        self.dispensing = None
        return [ResendArmed()]

    def undo_blocked(self, step: Referee) -> bool:
        """Whether undoing to `step` would dispense cards again (the launcher cannot take cards
        back)."""
        return self.box is not None and (
            self.dispensing is not None or step.dispense_due() is not None
        )

    # -- events ---------------------------------------------------------------------------------
    def apply_event(self, event: dict[str, Any]) -> bool:
        """Apply one box event to the game in memory (no save, no command to the box); True
        when the table was told something. An event applied before (a replay) does nothing."""
        if self._seen(event):
            return False
        kind = event.get("kind")
        table = self.table
        shown = True
        if kind == "fire":
            shown = self._on_fire(event)
        elif kind == "state":
            shown = self._on_state(event)
        elif kind == "jam":
            table.tell(BoxJammed())
        elif kind == "empty":
            table.tell(BoxEmpty())
        elif kind == "fault":
            table.tell(BoxNews(event))  # a fault is always news
        elif kind == "stray":
            shown = self._on_stray(event)
        else:
            shown = False
        self.last_event = {
            "stream": event.get("stream"),
            "seq": event.get("seq"),
            "hitter": self.last_hitter,
        }
        return shown

    def _seen(self, event: dict[str, Any]) -> bool:
        last = self.last_event
        return (
            bool(last)
            and last.get("stream") == event.get("stream")
            and isinstance(event.get("seq"), int)
            and event["seq"] <= (last.get("seq") or 0)
        )

    def _on_state(self, event: dict[str, Any]) -> bool:
        """Only the changes a player cares about: the button locked or live, latched states."""
        to, frm = event.get("to"), event.get("from")
        if to == "locked":
            self.locked = True
            self.table.tell(ButtonLocked())
            return True
        if to == "idle" and frm == "locked":
            self.locked = False
            self.table.tell(ButtonLive(self.table.ref.hitter()))
            return True
        if news(event) is not None:
            self.table.tell(BoxNews(event))
            return True
        return False

    def _on_stray(self, event: dict[str, Any]) -> bool:
        """A card left the box with no burst counting (the box's `stray` event): it belongs to
        the last hitter (RULES.md)."""
        count = int(event.get("count") or 0)
        seat = self.last_hitter
        if seat is None or count <= 0:
            return False
        self.table.box_step(lambda ref: ref.stray(seat, count))
        return True

    def _on_fire(self, event: dict[str, Any]) -> bool:
        ejected = int(event.get("ejected") or 0)
        ref = self.table.ref
        if ref.classic:
            return self._on_dispensed(event, ejected)
        if event.get("source") == "dispense":
            # UNO Attack dispenses nothing: a dispense is someone's test fire (the web page's
            # dashboard, `launcher send`), never a press of the player who owes a hit.
            if ejected:
                self.table.tell(Unowed(ejected, "test_fire"))
            return bool(ejected)
        if refused(event):
            self.table.tell(PressRefused(event.get("press_id"), event.get("reason")))
            return True
        hitter = ref.hitter()
        if hitter is None:
            if ejected:
                self.table.tell(Unowed(ejected, "no_hitter"))
            return bool(ejected)
        self.last_hitter = hitter
        note = PressNote(event.get("press_id"), event.get("dry_streak", 0), event.get("reason"))
        self.table.box_step(lambda ref: ref.press(ejected, note))
        return True

    def _on_dispensed(self, event: dict[str, Any], ejected: int) -> bool:
        """Classic: only the fire event of the dispense in flight counts, for its seat."""
        ours = self.dispensing
        if ours is None or event.get("source") != "dispense":
            if ejected:
                self.table.tell(Unowed(ejected, "not_ours"))
            return bool(ejected)
        if ours.get("press_id") not in (None, event.get("press_id")):
            return False  # an older dispense's result, already counted
        self.dispensing = None
        seat = int(ours["seat"])
        self.last_hitter = seat
        if ejected < int(ours["cards"]):
            self.hold = True  # a jam or an empty launcher: wait for `clear`/`load`
        ref = self.table.ref
        # A penalty typed while the cards were flying went in front: these are still ours.
        ref.serve_first(seat)
        if ref.hitter() != seat or ref.dispense_due() is None:
            if ejected:
                self.table.tell(Unowed(ejected, "moved_on"))
            return True
        note = PressNote(event.get("press_id"), reason=event.get("reason"), dispense=True)
        self.table.box_step(lambda ref: ref.press(ejected, note))
        if self.hold and self.table.ref.dispense_due() is not None:
            self.table.tell(DispenseHeld())
        return True

    # -- the button -------------------------------------------------------------------------------
    def sync(self) -> None:
        """Lock the button unless a seat must hit; unlock (and aim) for that seat. Classic:
        locked, and the dispense owed is sent."""
        box = self.box
        if box is None:
            return
        ref = self.table.ref
        seat = None if ref.classic else ref.hitter()  # nobody presses in classic
        try:
            if seat is None:
                if self.locked is not True:
                    box.lock()
                    self.locked = True
                    self.aim = None
                if ref.classic:
                    self._dispense()
                return
            if self.servo and self.aim != seat:
                try:
                    box.aim(seat)
                    self.aim = seat
                except UnoError as exc:
                    if "servo" in str(exc).lower():
                        self.servo = False
                    else:
                        self.table.tell(AimFailed(seat, message_of(exc)))
                        self.aim = seat
            if self.locked is not False:
                box.unlock()
                self.locked = False
        except (UnoError, OSError) as exc:  # (OSError: a save below it, the dispense's)
            self.table.tell(BoxTrouble(unsaved(exc)))

    def _dispense(self) -> None:
        """Classic: send the dispense owed now, recording it in the state file first."""
        due = self.table.ref.dispense_due()
        if self.box is None or due is None or self.dispensing is not None or self.hold:
            return
        seat, cards = due
        self.dispensing = {"seat": seat, "cards": cards, "press_id": None}
        try:
            self.table.save()  # the intent, before the command can reach the box
        except (StateNotSaved, OSError) as exc:
            self.dispensing = None  # not sent: the next change tries again
            raise StateNotSaved(unsaved(exc)) from None
        try:
            press_id = self.box.dispense(cards)
        except UnoError as exc:
            if getattr(exc, "code", "") in ("TIMEOUT", "CLOSED"):
                # No reply: the box may still have dispensed. Keep the record, so its fire
                # event counts when it comes; sending again could dispense twice.
                self.table.tell(DispenseUnanswered(cards, message_of(exc)))
                return
            # The box answered no: it dispensed nothing.
            self.dispensing = None
            self.hold = True
            self.table.save()
            self.table.tell(DispenseRefused(cards, message_of(exc)))
            return
        self.dispensing["press_id"] = press_id
        self.table.save()
        self.table.tell(DispenseSent(seat, cards))

    def goodbye(self) -> list[Outcome]:
        """The referee stops: lock the button (no referee counts a press now)."""
        if self.box is None or self.table.ref.phase not in ("deal", "play", "score"):
            return []
        try:
            self.box.lock()
        except UnoError as exc:
            return [LockFailed(message_of(exc))]
        self.locked = True
        return [LockedForGoodbye()]

    # -- what is shown and saved ----------------------------------------------------------------
    def button(self, hitter: int | None, classic: bool) -> dict[str, Any]:
        """The button, for the view: `box` (connected), `locked`, the `seat` it is live for,
        `aim`."""
        if self.box is None:
            return {"box": False, "locked": None, "seat": hitter, "aim": None}
        live = not self.locked and not classic
        return {
            "box": True,
            "locked": self.locked,
            "seat": hitter if live else None,
            "aim": self.aim,
        }

    def record(self) -> dict[str, Any] | None:
        """The dispense in flight as the state file keeps it."""
        if self.dispensing is not None:
            return dict(self.dispensing, hold=False)
        if self.hold:
            return {"hold": True}
        return None
