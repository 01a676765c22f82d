"""The table referee against the mock box: typed lines in, presses counted, button locked."""

from __future__ import annotations

import io
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from common.boxconfig import default_path
from engine.mockbox import MockBox, demo_config
from engine.table.options import GameOptions
from engine.table.referee import Referee
from engine.table.session import TableSession, build_session
from engine.table.state_file import load_state
from engine.table.view import summary
from tests.wait import wait_until
from wire.client import BoxClient

ROOT = Path(__file__).resolve().parents[2]


def box_config(pattern: list[int]) -> str:
    """A fast mock box whose presses fire `pattern` (repeated), so outcomes are known."""
    text = demo_config(default_path().read_text(), speed=20, players=3, seed=1)
    text = re.sub(r'(?m)^mode = "hazard"', 'mode = "pattern"', text)
    return re.sub(r"(?m)^pattern = \[.*?\]", f"pattern = {pattern}", text)


@pytest.fixture
def box_factory() -> Iterator[Callable[[list[int]], MockBox]]:
    boxes: list[MockBox] = []

    def make(pattern: list[int]) -> MockBox:
        box = MockBox(box_config(pattern))
        boxes.append(box)
        box.start()
        return box

    yield make
    for box in boxes:
        box.cleanup()


@pytest.fixture
def client_factory() -> Iterator[Callable[[MockBox], BoxClient]]:
    clients: list[BoxClient] = []

    def make(box: MockBox) -> BoxClient:
        client = BoxClient(box.port, timeout=10.0)
        client.connect()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def pump(client: BoxClient, session: TableSession) -> None:
    """Hand the box events that arrive within 0.1 s to the table session."""
    for event in client.events(timeout=0.1):
        session.handle_event(event)


class Table:
    """A session on a mock box, driven line by line; box events are pumped in on demand."""

    def __init__(self, client: BoxClient, players: str, state: Path, deck: str = "attack"):
        self.client = client
        self.out = io.StringIO()
        # The classic scripts seat the first player left of the dealer (the box is what they
        # test; classic's dealer_plays_first is the rules tests').
        options = {"dealer_plays_first": False} if deck == "classic" else None
        ref = Referee(players.split(","), deck=deck, options=options)
        last = {"stream": client.box["stream"], "seq": client.box["seq"]}
        self.session = TableSession(
            ref, box=client, state_path=state, out=self.out, last_event=last
        )
        self.session.boxsync.sync()

    @property
    def ref(self) -> Referee:
        return self.session.ref

    def type(self, *lines: str) -> None:
        for line in lines:
            self.session.handle_line(line)

    def pump_until(self, cond: Callable[[], bool], timeout: float = 60.0) -> None:
        wait_until(
            cond,
            timeout,
            what=lambda: f"the condition; output:\n{self.out.getvalue()[-2000:]}",
            step=lambda: pump(self.client, self.session),
        )

    def press(self, seat: int) -> None:
        """Type `press` and wait until the referee has counted it."""
        before = self.ref.presses[seat]
        self.type("press")
        self.pump_until(lambda: self.ref.presses[seat] == before + 1)

    def box_state(self) -> dict:
        return self.client.status()


@pytest.mark.timeout(180)
def test_an_obligation_unlocks_and_aims_for_that_seat_and_locks_after(
    box_factory, client_factory, tmp_path
):
    box = box_factory([0, 2])
    t = Table(client_factory(box), "Ann,Bob,Cat", tmp_path / "t.json")
    t.type("R5")  # Ann deals, R5 turned up: Bob to play, nobody may press
    assert t.box_state()["locked"] is True
    # A press on a locked box fires nothing and counts for nobody.
    t.client.press()
    t.pump_until(lambda: "press 1 refused (locked)" in t.out.getvalue())
    assert t.ref.presses == [0, 0, 0]

    t.type("RH2")  # Bob: Cat hits twice
    status = t.box_state()
    assert status["locked"] is False and status["aim"] == 2
    t.press(2)  # dry
    assert t.box_state()["locked"] is False
    t.press(2)  # 2 cards
    assert t.ref.hand[2] == 9 and t.ref.fired[2] == 2
    t.pump_until(lambda: t.box_state()["locked"] is True)
    assert t.ref.turn == 0 and t.ref.hitter() is None

    t.type("hit")  # Ann chooses to hit: unlocked for Ann, aimed at seat 0
    status = t.box_state()
    assert status["locked"] is False and status["aim"] == 0
    t.press(0)
    t.pump_until(lambda: t.box_state()["locked"] is True)
    assert t.ref.turn == 1
    saved = json.loads((tmp_path / "t.json").read_text())
    assert saved["referee"]["presses"] == [1, 0, 2]


@pytest.mark.timeout(180)
def test_hit_fire_keeps_the_button_live_until_cards_fire(box_factory, client_factory, tmp_path):
    box = box_factory([0, 0, 0, 3])
    t = Table(client_factory(box), "Ann,Bob,Cat", tmp_path / "t.json", deck="attack-1998")
    t.type("G4", "WHF", "Y")  # the colour is asked for when missing
    assert t.ref.hitter() == 2
    for _ in range(3):
        t.press(2)
        assert t.ref.hitter() == 2
        assert t.box_state()["locked"] is False
    t.press(2)
    assert t.ref.hitter() is None and t.ref.hand[2] == 10
    t.pump_until(lambda: t.box_state()["locked"] is True)
    assert "Cat takes 3 cards" in t.out.getvalue()


@pytest.mark.timeout(180)
def test_a_round_is_scored_from_the_entered_hands(box_factory, client_factory, tmp_path):
    box = box_factory([1])
    t = Table(client_factory(box), "Ann,Bob", tmp_path / "t.json")
    t.type("B3")  # two players: Bob starts
    t.type("BDA", "5", "uno")  # asked how many went down: Bob now holds 1 and called UNO
    assert t.ref.hand[1] == 1 and summary(t.ref)["uno"] == {"seat": 1, "called": True}
    t.type("hit")
    t.press(0)  # Ann takes 1: 8 cards
    t.type("B7")
    assert t.ref.phase == "score"
    t.type("R1 R2")  # 2 cards: Ann holds 8
    assert "should hold 8 cards" in t.out.getvalue()
    t.type("R1 R2 Y9 G5 WAA BH2 GS YDA")
    assert t.ref.scores == [0, 1 + 2 + 9 + 5 + 50 + 20 + 20 + 30]
    assert t.ref.phase == "deal" and t.ref.round_no == 2 and t.ref.dealer == 1
    assert t.box_state()["locked"] is True
    assert "Bob +137" in t.out.getvalue()


def _reader(stream, q: queue.Queue) -> None:
    for line in iter(stream.readline, ""):
        q.put(line)
    q.put(None)


class TableProcess:
    """`unoattack table` as a process, stdin/stdout through pipes."""

    def __init__(self, port: str, state: Path) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "engine.cli",
                "table",
                "--port",
                port,
                "--players",
                "Ann,Bob,Cat",
                "--state",
                str(state),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=ROOT,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=_reader, args=(self.proc.stdout, self.lines), daemon=True).start()

    def expect(self, pattern: str, timeout: float = 20.0) -> str:
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {pattern!r}; got:\n{''.join(self.seen[-30:])}")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(f"ended before {pattern!r}:\n{''.join(self.seen[-30:])}")
            self.seen.append(line)
            if rx.search(line):
                return line

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


def cat_owes_two_hits(table: TableProcess) -> None:
    """The opening two tests play: Y5 turned up, Bob plays YH2, Cat owes two hits."""
    table.expect(r"Ann deals: card turned up>")
    table.send("Y5")
    table.expect(r"Bob \(7\) on Y5 yellow>")
    table.send("YH2")


@pytest.mark.timeout(180)
def test_a_host_restart_resumes_the_game(box_factory, tmp_path):
    box = box_factory([0, 4])
    state = tmp_path / "table.json"
    first = TableProcess(box.port, state)
    try:
        cat_owes_two_hits(first)
        first.expect(r"Cat: 2 more hits, press the button>")
        first.send("press")
        first.expect(r"Cat: dry")
        first.expect(r"Cat: 1 more hit, press the button>")
    finally:
        first.kill()  # the host dies mid-obligation, without a word

    # While the host is down, Cat presses the button (the box is still unlocked for Cat).
    with BoxClient(box.port, timeout=10.0) as other:
        press_id = other.press()
        assert other.wait_fire(press_id, 10.0)["ejected"] == 4

    second = TableProcess(box.port, state)
    try:
        second.expect(r"resuming the game saved in")
        # The box replays what the host missed: the press counts, once.
        second.expect(r"Cat takes 4 cards \(holds 11\)")
        second.expect(r"Ann \(7\) on YH2 yellow>")
        second.send("status")
        second.expect(r"Cat: 11 cards, fired 4 in 2 presses")
        second.send("quit")
        # Quitting leaves the box locked, and says so and how to free it.
        second.expect(r"box: button locked while no referee is running")
        second.expect(r"game saved in .*; run the same command again to resume")
        assert second.proc.wait(20) == 0
        with BoxClient(box.port, timeout=10.0) as other:
            assert other.status()["locked"] is True
    finally:
        if second.proc.poll() is None:
            second.kill()

    third = TableProcess(box.port, state)  # and once more: nothing is counted twice
    try:
        third.expect(r"resuming the game saved in")
        third.expect(r"Ann \(7\) on YH2 yellow>")
        third.send("status")
        third.expect(r"Cat: 11 cards, fired 4 in 2 presses")
        third.send("quit")
        assert third.proc.wait(20) == 0
    finally:
        if third.proc.poll() is None:
            third.kill()
    saved = json.loads(state.read_text())["referee"]
    assert saved["play"]["hand"] == [7, 6, 11] and saved["play"]["turn"] == 0


@pytest.mark.timeout(180)
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_or_a_closed_terminal_stops_the_referee_as_ctrl_c_does(box_factory, tmp_path, stop):
    """SIGTERM (`kill`, systemd) or SIGHUP (the terminal or SSH session closed) killed the
    referee with the button live for Cat: nobody refereeing, and the box still firing."""
    box = box_factory([0, 4])
    state = tmp_path / "table.json"
    table = TableProcess(box.port, state)
    try:
        cat_owes_two_hits(table)
        table.expect(r"box: button live for Cat")
        table.proc.send_signal(stop)
        table.expect(r"box: button locked while no referee is running")
        assert table.proc.wait(20) == 130
    finally:
        if table.proc.poll() is None:
            table.kill()
    with BoxClient(box.port, timeout=10.0) as other:
        assert other.status()["locked"] is True
    assert load_state(state).referee.top == "YH2"  # the game, saved


@pytest.mark.timeout(180)
def test_bad_input_explains_and_asks_again(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "engine.cli",
            "table",
            "--port",
            "none",
            "--players",
            "Ann,Bob,Cat",
            "--state",
            str(tmp_path / "s.json"),
        ],
        input="R5\nWD4 G\nB7\nfired 2\nhit\nfired 2\nstatus\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    out = proc.stdout
    assert proc.returncode == 1, proc.stderr  # piped input with refused lines: exit 1
    assert "Traceback" not in proc.stderr
    assert "! `WD4` is not in the attack deck" in out
    assert "! B7 does not go on R5 (red)" in out
    assert "! nobody owes a hit now" in out
    assert "Bob takes 2 cards (holds 9)" in out
    # After each error the same prompt comes again.
    prompts = [ln for ln in out.splitlines() if ln.startswith("[round 1] Bob (7) on R5 red>")]
    assert len(prompts) == 4


def _table_cli(
    tmp_path: Path, *args: str, lines: str = "", players: str = "Ann,Bob"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine.cli", "table", "--players", players, *args],
        input=lines,
        capture_output=True,
        text=True,
        cwd=tmp_path,  # relative --state paths land here
        env={**os.environ, "PYTHONPATH": str(ROOT)},  # this checkout's engine, from any cwd
        timeout=60,
    )


@pytest.mark.timeout(120)
def test_setup_mistakes_are_one_line_usage_errors(tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)))
    regular = tmp_path / "notes.txt"
    regular.write_text("not a port\n", encoding="utf-8")
    cases = [
        (["--port", "none", "--state", "junk.bin"], "junk.bin: not a table state file"),
        (["--port", "none", "--state", "nodir/t.json"], "folder nodir does not exist"),
        (["--port", str(regular), "--state", "t.json"], "is a regular file, not a serial port"),
        (
            ["--port", "nosuch://x", "--state", "t.json"],
            "BAD_PORT: port 'nosuch://x' has an unknown URL scheme",
        ),
        (["--port", "none", "--deck", "nosuch"], "unknown deck `nosuch`"),
        (["--port", "none", "--option", "speed=3"], "unknown rule option `speed`"),
        (["--port", "none", "--option", "stacking"], "write NAME=VALUE"),
        (
            ["--port", "none", "--deck", "attack-1998", "--option", "draw_until_playable=true"],
            "draw_until_playable is a classic rule",
        ),
    ]
    for args, message in cases:
        proc = _table_cli(tmp_path, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.count("\n") == 1 and message in proc.stderr, (args, proc.stderr)
        assert "Traceback" not in proc.stderr and ".tmp" not in proc.stderr
    assert not (tmp_path / "nodir").exists() and not (tmp_path / "t.json").exists()


@pytest.mark.timeout(180)
def test_classic_dispenses_every_draw_with_the_button_locked(box_factory, client_factory, tmp_path):
    box = box_factory([5])  # a press would fire 5: none may happen, dispenses fire exactly
    state = tmp_path / "t.json"
    t = Table(client_factory(box), "Ann,Bob,Cat", state, deck="classic")
    t.type("R5")  # Ann deals: Bob to play
    assert t.box_state()["locked"] is True
    t.type("press")
    assert "nobody presses" in t.out.getvalue()

    t.type("draw")  # Bob draws: the referee dispenses 1 card for him
    t.pump_until(lambda: t.ref.hand[1] == 8)
    assert t.ref.may_play_taken() and t.ref.turn == 1 and t.session.boxsync.dispensing is None
    t.type("pass")
    t.type("RD2")  # Cat: Ann draws 2 at once and is skipped
    t.pump_until(lambda: t.ref.hand[0] == 9)
    assert t.ref.turn == 1 and t.ref.presses[0] == 1
    t.type("WD4 B", "challenge")  # Bob plays WD4; Cat challenges; it was legal: Cat draws 6
    assert "was Bob's WD4 legal (Bob held no red card)? y/n" in t.session.prompt()
    t.type("y")
    t.pump_until(lambda: t.ref.hand[2] == 12)
    assert t.ref.hand == [9, 7, 12] and t.ref.fired == [2, 1, 6] and t.ref.turn == 0
    assert t.box_state()["locked"] is True  # never unlocked in classic
    assert "button live" not in t.out.getvalue()

    # The host dies right after sending Ann's draw: the press id is saved, the fire event is
    # not applied yet. A restarted referee waits for the box's replay and never sends again.
    hopper = int(t.client.status()["hopper"])
    t.type("draw")
    saved = json.loads(state.read_text())
    assert saved["dispensing"]["press_id"] is not None and saved["referee"]["play"]["hand"][0] == 9
    t.client.close()

    client = BoxClient(box.port, timeout=10.0)
    client.position.stream = saved["last_event"]["stream"]
    client.position.seq = int(saved["last_event"]["seq"])
    client.connect()
    try:
        out = io.StringIO()
        session = build_session(GameOptions(["Ann", "Bob", "Cat"], state=state), client, out)
        assert "waiting for the box to report the dispense of 1 card for Ann" in out.getvalue()
        session.boxsync.sync()  # must not dispense again
        wait_until(
            lambda: session.ref.hand[0] == 10,
            60.0,
            what=out.getvalue,
            step=lambda: pump(client, session),
        )
        assert session.boxsync.dispensing is None and session.ref.may_play_taken()
        assert session.ref.turn == 0
        assert client.status()["hopper"] == hopper - 1  # one card, dispensed once
        assert json.loads(state.read_text())["dispensing"] is None
    finally:
        client.close()


def _resume(box: MockBox, state: Path) -> tuple[BoxClient, TableSession, io.StringIO]:
    """What `unoattack table` does on a restart: replay the box from the last applied event."""
    saved = json.loads(state.read_text())
    client = BoxClient(box.port, timeout=10.0)
    client.position.stream = saved["last_event"]["stream"]
    client.position.seq = int(saved["last_event"]["seq"])
    client.connect()
    out = io.StringIO()
    options = GameOptions(["Ann", "Bob", "Cat"], state=state)
    return client, build_session(options, client, out), out


@pytest.mark.timeout(180)
def test_classic_crash_before_the_press_id_was_saved(box_factory, client_factory, tmp_path):
    box = box_factory([5])
    state = tmp_path / "t.json"
    t = Table(client_factory(box), "Ann,Bob,Cat", state, deck="classic")
    t.type("R5")
    hopper = int(t.client.status()["hopper"])
    t.type("draw")  # Bob's draw reaches the box ...
    saved = json.loads(state.read_text())
    saved["dispensing"]["press_id"] = None  # ... but the host died before saving its press id
    state.write_text(json.dumps(saved))
    t.client.close()

    client, session, out = _resume(box, state)
    try:
        assert "if the launcher never fired them, type `resend`" in out.getvalue()
        session.boxsync.sync()  # waits: does not send again
        wait_until(
            lambda: session.ref.hand[1] == 8,
            60.0,
            what=out.getvalue,
            step=lambda: pump(client, session),
        )
        assert session.boxsync.dispensing is None and client.status()["hopper"] == hopper - 1
        session.handle_line("pass")
        # Cat draws; the intent is saved, the command never left the host: `resend` sends it.
        session.boxsync.dispensing = {"seat": 2, "cards": 1, "press_id": None}
        session.ref.draw()
        session.handle_line("resend")
        wait_until(
            lambda: session.ref.hand[2] == 8,
            60.0,
            what=out.getvalue,
            step=lambda: pump(client, session),
        )
        assert client.status()["hopper"] == hopper - 2
        assert "`resend` is only for" not in out.getvalue()
    finally:
        client.close()


@pytest.mark.timeout(120)
def test_a_scripted_game_prints_the_referee_state_as_json(tmp_path):
    """`--json`: the table's words go to stderr, one JSON object to stdout when input ends."""
    lines = "R5\nRH2\nfired 2\nfired 0\nWAA G Bob\nfired 1\nfired 0\nB7\n"
    proc = _table_cli(
        tmp_path,
        "--port",
        "none",
        "--state",
        "j.json",
        "--json",
        "--option",
        "stacking=true",
        lines=lines,
        players="Ann,Bob,Cat",
    )
    assert proc.returncode == 1, proc.stderr  # B7 is refused (not green)
    state = json.loads(proc.stdout)
    assert state["hands"] == [6, 7, 9] and state["fired"] == [0, 1, 2]
    assert state["presses"] == [0, 2, 2] and state["turn"] == 1 and state["color"] == "G"
    assert state["top"] == "WAA" and state["pending"] == [] and state["phase"] == "play"
    assert state["refused_lines"] == 1 and state["scores"] == [0, 0, 0]
    assert "! B7 does not go on WAA" in proc.stderr
    # The game is saved: the same command resumes it; --option only starts a new one.
    proc = _table_cli(
        tmp_path,
        "--port",
        "none",
        "--state",
        "j.json",
        "--option",
        "stacking=true",
        players="Ann,Bob,Cat",
    )
    assert proc.returncode == 2 and "--option sets the rules of a new game" in proc.stderr


@pytest.mark.timeout(120)
def test_a_resumed_game_refuses_flags_that_would_reshape_it(tmp_path):
    """A saved game resumes as it was saved (issue 21): `--deck`, `--mode` and `--target` were
    silently ignored (even `--deck nosuch`); now each that differs is one line and exit 2, like
    `--option`, and the same values resume the game. `status` names the deck and its rules."""
    saved = ["--port", "none", "--state", "g.json"]
    shape = ["--deck", "classic", "--mode", "lowest", "--target", "300"]
    deck = tmp_path / "home.toml"
    deck.write_text('name = "home"\n[cards]\nR1 = 20\nB2 = 20\n', encoding="utf-8")
    proc = _table_cli(tmp_path, *saved, *shape, lines="R5\n")
    assert proc.returncode == 0, proc.stderr
    cases = [
        (["--deck", "attack"], "--deck attack: g.json holds a game with --deck classic (--new"),
        (["--deck", "nosuch"], "unknown deck `nosuch`"),
        (["--deck", str(deck)], f"--deck {deck}: g.json holds a game with --deck classic"),
        (["--mode", "target"], "--mode target: g.json holds a game with --mode lowest"),
        (["--target", "500"], "--target 500: g.json holds a game with --target 300"),
        (["--option", "stacking=true"], "--option sets the rules of a new game"),
    ]
    for args, message in cases:
        proc = _table_cli(tmp_path, *saved, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.count("\n") == 1 and message in proc.stderr, (args, proc.stderr)
        assert "Traceback" not in proc.stderr
    for args in ([], shape, ["--deck", "classic"]):  # nothing said, or what was saved
        proc = _table_cli(tmp_path, *saved, *args, lines="status\n")
        assert proc.returncode == 0, (args, proc.stderr)
        assert "resuming the game saved in g.json" in proc.stdout
        assert "lowest mode, game to 300 points" in proc.stdout
        assert "classic deck, classic rules" in proc.stdout
    # a deck file: the same file under another name is the same deck; its name, not its path
    game = ["--port", "none", "--state", "h.json", "--deck", str(deck)]
    assert _table_cli(tmp_path, *game, lines="R1\n").returncode == 0
    proc = _table_cli(tmp_path, *game[:4], "--deck", "./home.toml", lines="status\n")
    assert proc.returncode == 0, proc.stderr
    assert "home deck, attack rules" in proc.stdout and str(tmp_path) not in proc.stdout
