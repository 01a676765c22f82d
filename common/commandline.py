"""What `launcher` and `unoattack` share: a lazily built subcommand parser and the turning of
errors into one line and an exit code. Standard library only, so the host can use it too.

Each subcommand lives in the module that owns its concept and registers itself through a
`register(subparsers)` function that sets `func=handler(args) -> int`.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import errno
import functools
import importlib
import importlib.util
import io
import math
import os
import re
import select
import signal
import stat
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import i18n
from common.entry import EXIT_INTERRUPTED

EXIT_USAGE = 2
DISTRIBUTION = "unoattack-launcher"  # the package both `launcher` and `unoattack` come in


MAX_DIGITS = 100  # a count longer than this is no count (int() refuses 4,300 digits and more)


def digits(text: str, most: int = MAX_DIGITS) -> int | None:
    """`text` as a whole number when it is 1 to `most` ASCII digits (0-9), else None.
    `str.isdigit` alone also takes "²" and "٣", which `int` refuses or reads otherwise: a count
    a person types or a request sends is read here. (`most` stays under the 4,300 digits
    `int` reads.)"""
    if 0 < len(text) <= most and text.isascii() and text.isdigit():
        return int(text)
    return None


def integer(text: str, most: int = MAX_DIGITS) -> int | None:
    """`text` as a whole number when it is `digits`, or `-` and digits; else None. (`int`
    alone also reads "٥", "５", " 5", "+5" and "1_000".)"""
    number = digits(text.removeprefix("-"), most)
    if number is None:
        return None
    return -number if text.startswith("-") else number


def whole_number(text: str) -> int:
    """argparse type for counts and seeds (`integer`): a one-line "expected a whole number"
    naming at most the first 40 characters given, instead of a traceback."""
    number = integer(text)
    if number is None:
        raise argparse.ArgumentTypeError(
            i18n._("expected a whole number, got {text!r}").format(text=_shown(text))
        )
    return number


def whole_number_from(lo: int, hi: int) -> Callable[[str], int]:
    """argparse type for a whole number from `lo` to `hi`, its range named in the error."""

    def parse(text: str) -> int:
        value = whole_number(text)
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(
                i18n._("expected a whole number from {low} to {high}, got {value}").format(
                    low=lo, high=hi, value=value
                )
            )
        return value

    return parse


_DECIMAL = re.compile(rf"-?(?:[0-9]{{1,{MAX_DIGITS}}}(?:\.[0-9]*)?|\.[0-9]+)")


_LONG_WORD = re.compile(r"\S{201,}")


def one_line(text: object) -> str:
    """An error line as a command prints it: a control character or a line break in it (from
    a value given: `--deck $'a\\n\\x1b[2J'`, a file name) escaped (`\\n`, `\\x1b`), and a
    word longer than 200 characters (no path is: a value pasted by mistake) cut to its first
    60. The one place: every command's stderr line goes through it."""
    escaped = "".join(
        c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii")
        for c in str(text)
    )
    return _LONG_WORD.sub(lambda m: m.group()[:60] + "...", escaped)


def goes_with(needed: str, given: Mapping[str, bool]) -> str | None:
    """The refusal of the first option `given` (True: the user set it) that only `needed`
    reads, or None: an option that would do nothing is refused, never silently ignored
    (`demo --http ...` without --web, `schedule --seed 5` without --sim)."""
    for option, is_given in given.items():
        if is_given:
            return i18n._("{option} goes with {needed}: add {needed}").format(
                option=option, needed=needed
            )
    return None


def say_error(prog: str, message: object) -> None:
    """`prog: message` on stderr, as `one_line`."""
    print(one_line(f"{prog}: {message}"), file=sys.stderr)


def _shown(text: str) -> str:
    """What a refusal quotes of a value given: its first 40 characters."""
    return text if len(text) <= 40 else text[:40] + "..."


def decimal_number(text: str) -> float | None:
    """`text` as a number when it is ASCII digits with a point perhaps, and a `-` perhaps
    (`5`, `0.5`, `.5`, `-1`), else None: `float` alone also reads "٥", "1_0", "nan" and
    "1e999"."""
    return float(text) if _DECIMAL.fullmatch(text) else None


def decimal(text: str) -> float:
    """argparse type for a number a person types (`decimal_number`); the command checks its
    range."""
    value = decimal_number(text)
    if value is None:
        raise argparse.ArgumentTypeError(
            i18n._("expected a number (like 5 or 0.5), got {text!r}").format(text=_shown(text))
        )
    return value


def seconds(text: str) -> float:
    """argparse type for a wait: a number of seconds above 0 (`5`, `0.5`)."""
    value = decimal_number(text) or 0.0
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(
            i18n._("expected seconds above 0 (like 5 or 0.5), got {text!r}").format(
                text=_shown(text)
            )
        )
    return value


_REQUIRED = "the following arguments are required: "
_UNRECOGNIZED = "unrecognized arguments: "


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error and exit code 2 (no usage dump on stderr) that names an
    unknown option as such and lists the subcommands a missing one may be."""

    def parse_known_args(self, args=None, namespace=None):
        # Remembered for error(): argparse reports a missing subcommand before it looks at
        # an unknown option, so `launcher --bogus` would read "give a command".
        self._given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> None:  # type: ignore[override]
        unknown: str | None = None
        if message.startswith(_UNRECOGNIZED):
            unknown = message[len(_UNRECOGNIZED) :].split(" ", 1)[0]
        elif message.startswith(_REQUIRED):
            unknown = self._unknown_option()
        if unknown is not None:
            said = (
                i18n._("unknown option {arg!r}; see {prog} --help")
                if unknown.startswith("-")
                else i18n._("unexpected argument {arg!r}; see {prog} --help")
            )
            message = said.format(arg=unknown, prog=self._help_for(unknown))
        elif message.startswith(_REQUIRED):
            sub = self._subcommands()
            if sub is not None and message.endswith(str(sub.metavar)):
                # argparse names the missing slot but not what may fill it.
                said = (
                    i18n._("give a command: {choices} (or --help)")
                    if sub.metavar == "COMMAND"
                    else i18n._("give an action: {choices} (or --help)")
                )
                message = said.format(choices=", ".join(sub.choices))

        self.exit(EXIT_USAGE, one_line(f"{self.prog}: error: {message}") + "\n")

    def _subcommands(self) -> argparse._SubParsersAction | None:
        return next((a for a in self._actions if isinstance(a, argparse._SubParsersAction)), None)

    def _unknown_option(self) -> str | None:
        """The first of the arguments given to this parser that looks like an option it does
        not have (a negative number is a value, `--` ends the options)."""
        for arg in getattr(self, "_given", []):
            if arg == "--":
                return None
            if not arg.startswith("-") or arg == "-" or self._negative_number_matcher.match(arg):
                continue
            name = arg.split("=", 1)[0]
            known = self._option_string_actions
            abbreviated = name.startswith("--") and any(o.startswith(name) for o in known)
            if name not in known and not abbreviated:
                return arg
        return None

    def _help_for(self, arg: str) -> str:
        """The subcommand `arg` came after (`launcher config check`), else this parser's prog."""
        parser: argparse.ArgumentParser = self
        given = getattr(self, "_given", [])
        for token in given[: given.index(arg)] if arg in given else []:
            sub = parser._subcommands() if isinstance(parser, _Parser) else None
            if sub is not None and token in sub.choices:
                parser = sub.choices[token]
        return parser.prog


class _Version(argparse.Action):
    """`--version`, looked up only when asked (`launcher run` starts without the lookup)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help=i18n._("print the version and exit"))

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        print(version_text(parser.prog))
        parser.exit(0)


def version_text(prog: str) -> str:
    """`launcher 0.1.0 (Python 3.11.2)`: both programs ship in one distribution."""
    import platform  # (here: only --version reads it)

    return f"{prog} {package_version()} (Python {platform.python_version()})"


@functools.cache
def package_version() -> str:
    """The installed version of the distribution (`0.1.0`), looked up once; `(not
    installed)` when run from a checkout without installing. The box's `status` reports it."""
    # Imported here: the metadata machinery (email, zipfile, csv) is a fifth of what a command
    # such as `unoattack deck` imports, and only --version and the box's status read it.
    import importlib.metadata

    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


def build_parser(
    prog: str, description: str, commands: Mapping[str, str], command: str | None = None
) -> argparse.ArgumentParser:
    """The parser for `prog`; `commands` maps a subcommand to the module that registers it.
    `description` is a message of the catalogs (marked with `N_`), said in the language in use.

    With `command`, only that subcommand's module is imported: `launcher run` on a Pi should
    not pay for importing the bench, the plotter and the client (time to READY is imports).
    """
    parser = _Parser(prog=prog, description=i18n._(description))
    parser.add_argument("--version", action=_Version)
    parser.add_argument(  # taken off the command line by `run` (i18n.choose), wherever it is
        "--lang",
        metavar="LANG",
        help=i18n._("language of the messages: {languages} (default: from LANG)").format(
            languages=", ".join(i18n.LANGUAGES)
        ),
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    chosen = commands.get(command) if command is not None else None
    names = [chosen] if chosen is not None else list(commands.values())
    for module_name in dict.fromkeys(names):  # one module may register several commands
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:  # command not built yet in this checkout
                continue
            raise
        module.register(sub)
    return parser


def run(
    prog: str,
    description: str,
    commands: Mapping[str, str],
    own_error: type[Exception],
    argv: Sequence[str] | None = None,
) -> int:
    """Parse `argv`, run the chosen handler and return its exit code. `own_error` (the
    program's error base, with an `exit_code`) and any unusable file become one stderr line."""
    argv = list(sys.argv[1:] if argv is None else argv)
    _tolerate_narrow_stdout()
    try:
        argv = i18n.choose(argv)  # --lang, else the environment's language, else English
    except i18n.LanguageError as exc:
        say_error(prog, exc)
        return EXIT_USAGE
    command = argv[0] if argv and argv[0] in commands else None
    # (Ctrl-C while the command's modules load, a second on a busy Pi: common/entry.py.)
    args = build_parser(prog, description, commands, command).parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except own_error as exc:
        say_error(prog, exc)
        return int(getattr(exc, "exit_code", 1))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `... | head` closed our stdout: not an error worth a traceback.
        silence(sys.stdout)
        return 0
    except (UnicodeDecodeError, OSError) as exc:
        # Last line of defence: a file or device the user named cannot be used. The command
        # should have said so itself; one line here still beats a traceback.
        say_error(prog, _describe_os_error(exc))
        return EXIT_USAGE if _is_user_path_error(exc) else 1


def _is_user_path_error(exc: BaseException) -> bool:
    """A path that does not exist, is a directory, is too long to be a file name, or is not
    ours to use: the user's input."""
    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        return True
    return isinstance(
        exc,
        UnicodeDecodeError
        | FileNotFoundError
        | IsADirectoryError
        | NotADirectoryError
        | PermissionError,
    )


def _describe_os_error(exc: BaseException) -> str:
    """`cannot use PATH: reason` for an OSError, `not a UTF-8 text file` for a decode error."""
    if isinstance(exc, UnicodeDecodeError):
        return "a file given is not UTF-8 text (binary or another encoding)"
    assert isinstance(exc, OSError)
    reason = (exc.strerror or str(exc) or type(exc).__name__).rstrip(".")
    if exc.filename is not None:
        return f"cannot use {exc.filename}: {reason[0].lower()}{reason[1:]}"
    return reason


def _tolerate_narrow_stdout() -> None:
    """On a stdout that cannot encode everything we print (LC_ALL=C without UTF-8, a
    PYTHONIOENCODING=ascii pipe), print `?` for what it cannot show instead of ending in a
    UnicodeEncodeError traceback halfway through the output (stderr already does so)."""
    stream = sys.stdout
    if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
        with contextlib.suppress(AttributeError, OSError, ValueError):  # not a text stream
            stream.reconfigure(errors="replace")


# What the pipe's watcher thread sends the main thread when the reader left.
_READER_GONE = signal.SIGUSR2


@contextlib.contextmanager
def stop_when_reader_goes(
    stream: TextIO | None = None, *, halt: threading.Event | None = None
) -> Iterator[threading.Event]:
    """While inside, a closed pipe on `stream` (stdout: `watch | head -1`) sets the yielded
    event and stops the main thread: by setting `halt` when given (the caller's waits look at
    it: wire.client.BoxClient's `halt`), else by interrupting it like Ctrl-C
    (KeyboardInterrupt). A quiet box gives watch nothing to write, so without this it would
    wait for ever for the write that finds the reader gone.
    Does nothing unless `stream` is a pipe."""
    gone = threading.Event()
    stream = stream if stream is not None else sys.stdout
    try:
        fd = stream.fileno()
        is_pipe = stat.S_ISFIFO(os.fstat(fd).st_mode)
    except (AttributeError, OSError, ValueError):
        is_pipe = False
    if not is_pipe or threading.current_thread() is not threading.main_thread():
        yield gone
        return
    done = threading.Event()
    armed = threading.Event()  # interrupt only once the caller's block runs, never mid-setup
    main = threading.main_thread().ident

    raised: list[bool] = []

    def interrupted(signum: int, frame: object) -> None:
        if not raised:  # once: the repeats below only wake a wait that missed the first
            raised.append(True)
            raise KeyboardInterrupt

    # A signal of our own, not SIGINT: a job started in the background of a script has SIGINT
    # ignored (and Python leaves it so), and the reader leaving must still end the watch.
    previous = signal.signal(_READER_GONE, interrupted) if halt is None else None

    def wait_for_reader_to_go() -> None:
        poller = select.poll()
        poller.register(fd, 0)  # no events asked: only POLLERR (reader gone) can be reported
        while not done.is_set():
            if poller.poll(200) and armed.wait():
                gone.set()
                if halt is not None:
                    halt.set()
                    return
                # Again until the main thread has left the block: a signal that lands just
                # before the main thread blocks in a wait is only acted on when the wait ends
                # (a minute, or never); the next one interrupts the wait itself.
                while not done.is_set() and main is not None:
                    signal.pthread_kill(main, _READER_GONE)
                    done.wait(0.2)
                return

    thread = threading.Thread(target=wait_for_reader_to_go, name="watch-pipe", daemon=True)
    try:
        thread.start()
        armed.set()
        yield gone
    finally:
        armed.set()
        done.set()
        thread.join(timeout=1.0)
        if not thread.is_alive() and halt is None:  # else a late signal must find our handler
            signal.signal(_READER_GONE, previous)
        if gone.is_set():
            silence(stream)


# What stops a command the way Ctrl-C does: Ctrl-C itself; SIGTERM (`kill`, `timeout`,
# systemd); SIGHUP (its terminal or SSH session closed).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class CtrlC:
    """Ctrl-C for a command that stops its run and still reports what it finished (`sim`,
    `sweep`, `bench`, and the referee, the demo, the servers). Installed around the whole
    command (`with CtrlC() as ctrl_c:`), so that however many stop signals come (SIGINT, and
    SIGTERM and SIGHUP taken the same way: `STOP_SIGNALS`), and whenever, the run stops once
    and its report and files are written; the command then exits 130.

    Every stop signal is counted (`count`) and told to each `listen`er (a process pool stops
    between its tasks on the first and ends its workers on the second). It raises
    KeyboardInterrupt only inside `stopping()`, and only the first one: never while the run's
    machinery is being shut down or its report written. Outside the main thread nothing is
    installed and Python's own handling stays; a signal that is ignored (SIGINT for a job in the
    background of a script, SIGHUP under nohup) stays ignored.

    `until_exit` (a command's): once a stop signal has come, they all stay ignored after the
    block, since the process only exits then, and a late one must not kill it by signal before
    its output is flushed. Otherwise (a library's) the previous handling comes back.

    `stopped` is set by the first stop signal: what a command hands its box client as `halt`
    (wire/client.py), so that its waits stop at a safe point rather than by a KeyboardInterrupt
    raised inside `threading`'s own code. (Only `is_set` it in the main thread: waiting on it
    there could meet the signal handler setting it.)"""

    def __init__(self, *, until_exit: bool = False) -> None:
        self.until_exit = until_exit
        self.count = 0
        self.stopped = threading.Event()
        self._listeners: list[Callable[[int], None]] = []
        self._raising = False
        self._previous: dict[int, object] = {}
        self._pid = os.getpid()

    def __enter__(self) -> CtrlC:
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                if signal.getsignal(sig) is not signal.SIG_IGN:
                    self._previous[sig] = signal.signal(sig, self._on_signal)
        return self

    def __exit__(self, *exc: object) -> None:
        previous, self._previous = self._previous, {}
        for sig, handler in previous.items():
            ignored = self.until_exit and self.count
            signal.signal(sig, signal.SIG_IGN if ignored else handler)  # type: ignore[arg-type]

    def _on_signal(self, signum: int, frame: object) -> None:
        if os.getpid() != self._pid:
            return  # a worker forked from this process, before it took the signals over
        self.count += 1
        self.stopped.set()
        for listener in tuple(self._listeners):
            listener(self.count)
        if self.count == 1 and self._raising:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def stopping(self) -> Iterator[None]:
        """Inside: the first stop signal raises KeyboardInterrupt (here at once if it came
        before)."""
        if self.count:
            raise KeyboardInterrupt
        self._raising = True
        try:
            yield
        finally:
            self._raising = False

    @contextlib.contextmanager
    def listen(self, listener: Callable[[int], None]) -> Iterator[None]:
        """Inside: `listener(count)` is called on each stop signal, in the main thread, between
        two steps of whatever it was doing (a signal handler: it must not block or raise)."""
        self._listeners.append(listener)
        try:
            yield
        finally:
            self._listeners.remove(listener)


def die_with_parent(signum: int = signal.SIGTERM) -> None:
    """In a child process (Linux): the kernel sends it `signum` when the process that started
    it dies, even by SIGKILL, so that no child outlives its command. Elsewhere nothing."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):  # (ctypes imported before: this may run after a fork)
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signum)


_PR_SET_PDEATHSIG = 1


def silence(stream: TextIO) -> None:
    """Point `stream`'s file descriptor at /dev/null: its reader left, and flushing it at exit
    would only print an error."""
    with contextlib.suppress(AttributeError, OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)


# Image formats `--plot` writes (matplotlib picks the format from the file name).
PLOT_SUFFIXES = (".png", ".svg", ".pdf")


def figure_bytes(fig: Any, path: str | Path, *, dpi: int) -> bytes:
    """A matplotlib figure as the image `path` names (by its suffix, one of PLOT_SUFFIXES),
    made in memory: the file is then written whole or not at all (common/atomic.py)."""
    image = io.BytesIO()
    fig.savefig(image, format=Path(path).suffix.lower().lstrip("."), dpi=dpi)
    return image.getvalue()


def plot_available() -> bool:
    """True when matplotlib (the `plot` extra) is installed (found, not imported: the plotting
    command imports it)."""
    return importlib.util.find_spec("matplotlib") is not None


def check_outputs(
    csv: str | None,
    plot: str | None,
    error: Callable[[str], Exception],
    may_overwrite: Callable[[Path], bool] | None = None,
    owner: str = "",
) -> None:
    """Find out before a long run (`bench`, `sweep`), not after it, that its `--csv` and
    `--plot` files cannot be written; raises `error(one line)`, the command's usage error.
    `may_overwrite` tells an existing CSV that `owner` (the command) wrote, which may be
    replaced, from anything else (a typo must not overwrite a config or a recording)."""
    if plot and not plot_available():
        raise error(
            "--plot needs matplotlib: pip install 'unoattack-launcher[plot]' (or drop --plot)"
        )
    if plot and Path(plot).suffix.lower() not in PLOT_SUFFIXES:
        # matplotlib would quietly add ".png" and write a file the user did not name.
        raise error(f"--plot {plot}: name the image file with one of {', '.join(PLOT_SUFFIXES)}")
    for option, target in (("--csv", csv), ("--plot", plot)):
        if not target:
            continue
        if Path(target).is_dir():
            raise error(
                i18n._("{option} {target}: is a directory; give a file name").format(
                    option=option, target=target
                )
            )
        if option == "--csv" and may_overwrite is not None and not may_overwrite(Path(target)):
            raise error(
                f"--csv {target}: exists and is not a {owner} CSV; give a new file name or one "
                f"an earlier {owner} run wrote"
            )
        folder = Path(target).parent
        if not (folder.is_dir() and os.access(folder, os.W_OK)):
            raise error(f"{option} {target}: folder {folder} does not exist or is not writable")
