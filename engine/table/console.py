"""Typed lines for the table referee: a terminal prompt people know, or a pipe.

On a terminal, lines are read with GNU readline (the standard library's `readline`): arrow keys,
line editing and history (kept in a file next to the state file). Messages that arrive while a
player is typing (box notices: the button went live, a press fired three cards) are printed
*above* the prompt, which is redrawn with what was typed so far and, if the state changed, with
the new prompt text. When stdin is not a terminal, lines are read as they come and the prompt is
printed on a line of its own, so a piped session reads like a transcript.

Readline is not thread-safe, and a notice comes from another thread (the box's events) while
the reading thread is inside readline, maybe drawing the key just typed. So a notice is handed
to the reading thread, which draws it from Python's input hook (``PyOS_InputHook``): readline's
loop calls it between keys and every 0.1 s while it waits, never in the middle of a key.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from pathlib import Path
from typing import Any, TextIO

__all__ = ["Console"]


# int (*PyOS_InputHook)(void): called by readline's loop between keys (see the docstring).
_INPUT_HOOK = ctypes.CFUNCTYPE(ctypes.c_int)


def _input_hook_slot() -> Any:
    """Python's ``PyOS_InputHook`` pointer, or None where ctypes cannot reach it."""
    try:
        return ctypes.c_void_p.in_dll(ctypes.pythonapi, "PyOS_InputHook")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not CPython
        return None


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
        self._reader: int | None = None  # the thread in readline while it reads (hooked)
        self._waiting: list[tuple[list[str], str | None]] = []  # notices for the reader to draw
        self._hook = _INPUT_HOOK(self._draw_waiting)  # kept: C holds only its address
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
        slot = self._hook_slot()
        with self._lock:
            self._prompt = prompt
            self._reading = True
            if slot is not None:
                self._reader = threading.get_ident()
                slot.value = ctypes.cast(self._hook, ctypes.c_void_p).value
        try:
            return input(prompt)  # readline's, when the module is there: editing, history
        except EOFError:
            print(file=self.out, flush=True)  # end the prompt line
            return None
        finally:
            with self._lock:
                self._reading = False
                self._reader = None
                if slot is not None:
                    slot.value = None
                waiting, self._waiting = self._waiting, []
                for lines, _prompt in waiting:  # came with the Enter key: no prompt to keep
                    for line in lines:
                        print(line, file=self.out, flush=True)

    def show(self, lines: list[str], prompt: str | None = None) -> None:
        """Print `lines`; on a terminal where a line is being typed, above the prompt, which is
        then drawn again (as `prompt` if given) with the text typed so far. From another thread
        than the reader's, they are drawn by the reader within 0.1 s (see the docstring)."""
        with self._lock:
            if not (self.tty and self._reading):
                for line in lines:
                    print(line, file=self.out, flush=True)
                return
            if self._reader is not None and self._reader != threading.get_ident():
                self._waiting.append((list(lines), prompt))
                return
            self._draw(lines, prompt)

    def _hook_slot(self) -> Any:
        """``PyOS_InputHook`` when this read can draw notices from it: readline's C library is
        there and nothing else (a GUI toolkit) holds the hook; otherwise None."""
        if self._lib is None:
            return None
        slot = _input_hook_slot()
        return slot if slot is not None and not slot.value else None

    def _draw_waiting(self) -> int:
        # PyOS_InputHook: called by readline's loop on the reading thread, between two keys
        with self._lock:
            waiting, self._waiting = self._waiting, []
            for lines, prompt in waiting:
                self._draw(lines, prompt)
        return 0

    def _draw(self, lines: list[str], prompt: str | None) -> None:
        """Lines above the prompt, then the prompt and the typed text again (lock held)."""
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

    def stop_reading(self) -> None:
        """The line being typed is abandoned (Ctrl-C, the game ended): from now on every
        message is printed at once, and those waiting for the reader are printed now, below
        the prompt's line (the reader may never draw them)."""
        with self._lock:
            if not self._reading:
                return
            slot = _input_hook_slot()
            if slot is not None and slot.value == ctypes.cast(self._hook, ctypes.c_void_p).value:
                slot.value = None
            self._reading = False
            self._reader = None
            waiting, self._waiting = self._waiting, []
            self.out.write("\r\n")
            for lines, _prompt in waiting:
                for line in lines:
                    print(line, file=self.out)
            self.out.flush()

    def close(self) -> None:
        """Save the history and give the terminal back as it was."""
        self.stop_reading()
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
