"""The weights record (weights_record.py): what Fleet.update_weights leaves in each island's folder for
an engine that restarts. Its text is the golden file weights-record.txt, which the shell side's test
(test/host/keeper.test.ts) replays to a stand-in engine: the two sides agree on one file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vllm_fleet import Fleet, FleetError
from vllm_fleet import weights_record
from vllm_fleet.engines import Call, routes_for

from test_contract import island_file

GOLDEN = Path(__file__).with_name("weights-record.txt")


def test_vllm_update_is_recorded_as_the_golden_file() -> None:
    calls = routes_for("vllm").update_weights("/ckpt/step 7", "step-7")
    assert weights_record.render("step-7", calls, model="Qwen/Qwen3-0.6B", engine="vllm") == GOLDEN.read_text("utf-8")


def test_what_the_shell_could_not_read_back_is_refused() -> None:
    calls = routes_for("vllm").update_weights("/w", "v")
    for bad in ["", "two\nlines", " padded", "cr\r"]:
        with pytest.raises(FleetError, match="weight version .* cannot be recorded"):
            weights_record.render(bad, calls, model="m", engine="vllm")
        with pytest.raises(FleetError, match="model .* cannot be recorded"):
            weights_record.render("v", calls, model=bad, engine="vllm")
    with pytest.raises(FleetError, match="cannot be recorded"):
        weights_record.render("v", [Call("GET", "/weight_info")], model="m", engine="vllm")
    # A body's newline stays escaped inside its one line of JSON; query parameters join the path;
    # a model path with a space is one line (the shell reads the rest of the line).
    text = weights_record.render("v", [Call("POST", "/x", {"a": "1\n2"}, params={"mode": "keep"})], model="/m/a b", engine="e")
    assert text.splitlines()[2:] == ["model /m/a b", "engine e", 'call POST /x?mode=keep {"a":"1\\n2"}']


def test_update_records_into_each_island_folder_read_from_a_file(tmp_path: Path) -> None:
    folders = []
    for k in (0, 1):
        d = tmp_path / f"island-{k}"
        d.mkdir()
        (d / "endpoints.json").write_text(json.dumps(island_file(k)))
        folders.append(d)
    fleet = Fleet.from_endpoints([str(d / "endpoints.json") for d in folders])
    try:
        assert [i.weights_record for i in fleet.endpoints.islands] == [d / "weights" for d in folders]
        calls = routes_for("prime-rl").update_weights("/ckpt", "3")
        assert fleet._record_weights("3", calls) == [str(d / "weights") for d in folders]
        for d in folders:
            # The island's model and engine, as its endpoints.json names them: a revival checks both.
            assert (d / "weights").read_text("utf-8") == weights_record.render("3", calls, model="tiny", engine="prime-rl")
            assert sorted(p.name for p in d.iterdir()) == ["endpoints.json", "weights"]
        # A record that cannot be written (here a folder in its place; root writes anywhere else):
        # the update stands, and a warning names the island and what follows.
        (folders[1] / "weights").unlink()
        (folders[1] / "weights").mkdir()
        with pytest.warns(UserWarning, match=r"island 1: could not write the weights record .* stays out of its router"):
            assert fleet._record_weights("4", calls) == [str(folders[0] / "weights")]
        assert (folders[0] / "weights").read_text("utf-8") == weights_record.render("4", calls, model="tiny", engine="prime-rl")
    finally:
        fleet.close()


def test_islands_given_as_documents_have_no_record() -> None:
    fleet = Fleet.from_endpoints([island_file(0)])
    try:
        assert fleet.endpoints.islands[0].weights_record is None
        assert fleet._record_weights("1", routes_for("prime-rl").update_weights("/ckpt", "1")) == []
    finally:
        fleet.close()
