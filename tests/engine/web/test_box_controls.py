"""The box panel's controls against the mock box: the box checks every jam-model value, and a
refused one changes nothing; safety limits cannot be set at all."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.boxport import mock_box, mock_config
from tests.engine.web.conftest import table_service


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Any]:
    stop = threading.Event()
    with mock_box(mock_config(speed=20, players=2, seed=1)) as (_box, client):
        svc = table_service(tmp_path / "t.json", players="Ann,Bob", box=client)
        pump = threading.Thread(target=svc.pump, args=(stop,), daemon=True)
        pump.start()
        try:
            yield svc
        finally:
            stop.set()
            pump.join(10)
            assert not pump.is_alive(), "the box's event pump did not stop"


def test_jam_model_within_the_boxs_ranges_only(service: Any) -> None:
    assert service.box_op("model").ok
    model = service.panel.snapshot()["model"]
    assert model["mode"] == "hazard"
    out = service.box_op("model.set", {"base": 0.3, "max_dry": 4})
    assert out.ok and out.messages == ["box: jam model set: base 0.3, max_dry 4"]
    after = service.panel.snapshot()["model"]
    assert after["base"] == 0.3 and after["max_dry"] == 4
    for params in ({"base": 5}, {"ejector_max_on_ms": 60000}, {"max_dry": "many"}):
        refused = service.box_op("model.set", params)
        assert not refused.ok and refused.error.startswith("box: BAD_ARG"), refused
        assert service.panel.snapshot()["model"] == after


def test_panel_shows_the_boxs_status_and_reset(service: Any) -> None:
    service.refresh_box()
    box = service.panel.snapshot()
    assert box["connected"] and box["state"] in ("idle", "locked") and box["hopper"] > 0
    assert service.box_op("status").ok
    out = service.box_op("reset")
    assert out.ok or "FAULT" in (out.error or "") or "BAD_STATE" in (out.error or ""), out
