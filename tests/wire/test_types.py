"""The shared modules, the wire, the rules core and the table type-check clean (mypy, as
`[tool.mypy]` in pyproject.toml says: `common/`, `wire/`, `engine/game.py`, `effects.py`,
`blind.py`, `engine/table/`)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_checked_packages_have_no_type_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mypy import api

    monkeypatch.chdir(ROOT)  # `files` in the config are the checkout's

    out, err, status = api.run(
        ["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path / "cache")]
    )
    assert status == 0, out + err
    assert "no issues found" in out
