"""Typed lines for the table referee: a terminal prompt people know, or a pipe.

On a terminal, lines are read with GNU readline (the standard library's `readline`): arrow keys,
line editing and history (kept in a file next to the state file). Messages that arrive while a
player is typing (box notices: the button went live, a press fired three cards) are printed
*above* the prompt, which is redrawn with what was typed so far and, if the state changed, with
the new prompt text. When stdin is not a terminal, lines are read as they come and the prompt is
printed on a line of its own, so a piped session reads like a transcript.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from pathlib import Path
from typing import Any, TextIO

__all__ = ["Console"]


def _readline() -> tuple[Any, Any]:
    """The readline module and its C library (for rl_set_prompt), or (None, None)."""
    try:
        import readline
    except ImportError:  # pragma: no cover - Python without readline (Windows)
        return None, None
    try:
        lib = ctypes.CDLL(readline.__file__)
        lib.rl_set_prompt.argtypes = [ctypes.c_char_p]
        lib.rl_forced_update_display.argtypes = []
    except (OSError, AttributeError, TypeError):  # pragma: no cover - libedit, no symbols
        lib = None
    return readline, lib


class Console:
    """Reads lines from `stdin` and prints messages to `out` without tearing the prompt."""

    def __init__(
        self, stdin: TextIO, out: TextIO, *, history: Path | None = None, tty: bool | None = None
    ) -> None:
        self.stdin = stdin
        self.out = out
        if tty is None:
            tty = _isatty(stdin) and _isatty(out)
        self.tty = tty
        self._lock = threading.Lock()
        self._prompt = ""  # the prompt on screen while a line is being typed
        self._reading = False
        self._history = history
        self._readline: Any
        self._lib: Any
        self._readline, self._lib = _readline() if tty else (None, None)
        self._saved_tty: Any = None
        if self._readline is not None:
            with contextlib.suppress(Exception):
                import termios

                self._saved_tty = termios.tcgetattr(stdin.fileno())
            if history is not None:
                with contextlib.suppress(OSError):
                    self._readline.read_history_file(str(history))
            self._readline.set_history_length(1000)

    def read(self, prompt: str) -> str | None:
        """One typed line (without its newline), or None at the end of input."""
        if not self.tty:
            line = self.stdin.readline()
            return None if line == "" else line.rstrip("\n")
        with self._lock:
            self._prompt = prompt
            self._reading = True
        try:
            return input(prompt)  # readline's, when the module is there: editing, history
        except EOFError:
            print(file=self.out, flush=True)  # end the prompt line
            return None
        finally:
            with self._lock:
                self._reading = False

    def show(self, lines: list[str], prompt: str | None = None) -> None:
        """Print `lines`; on a terminal where a line is being typed, above the prompt, which is
        then drawn again (as `prompt` if given) with the text typed so far."""
        with self._lock:
            if not (self.tty and self._reading):
                for line in lines:
                    print(line, file=self.out, flush=True)
                return
            typed = self._readline.get_line_buffer() if self._readline is not None else ""
            self.out.write("\r\x1b[2K" + "".join(line + "\n" for line in lines))
            if prompt is not None and prompt != self._prompt:
                self._prompt = prompt
                if self._lib is not None:
                    self._lib.rl_set_prompt(prompt.encode())
            if self._lib is not None:
                self.out.flush()
                self._lib.rl_forced_update_display()
            else:  # pragma: no cover - no readline library: redraw by hand
                self.out.write(self._prompt + typed)
            self.out.flush()

    def prompt(self, text: str) -> None:
        """A pipe shows each prompt on a line of its own (a terminal's comes with `read`)."""
        if not self.tty:
            print(text, file=self.out, flush=True)

    def close(self) -> None:
        """Save the history and give the terminal back as it was."""
        if self._readline is not None and self._history is not None:
            with contextlib.suppress(OSError):
                self._readline.write_history_file(str(self._history))
        if self._saved_tty is not None:
            with contextlib.suppress(Exception):
                import termios

                termios.tcsetattr(self.stdin.fileno(), termios.TCSADRAIN, self._saved_tty)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty()) and os.isatty(stream.fileno())
    except (AttributeError, ValueError, OSError):
        return False
