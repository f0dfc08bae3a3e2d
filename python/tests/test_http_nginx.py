"""Reading over HTTP from Debian's nginx on 127.0.0.1 (tests/http/nginx_server.py): every case of
the conformance corpus read by URL equals the same case read from its folder, into host memory
and (where a GPU exists) device memory; groups, multiscales and consolidated metadata by URL;
a region of a sharded array fetches only the index and the inner chunks it needs."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import zarrdirect
from conftest import REPO, assert_same, case_id, conformance_cases, conformance_dir, expected_refusals

sys.path.insert(0, str(REPO / "tests" / "http"))
from nginx_server import NginxServer, find_nginx  # noqa: E402

pytestmark = pytest.mark.skipif(find_nginx() is None,
                                reason="nginx not found (Debian nginx-light; scripts/setup.sh installs it)")

CASES = conformance_cases()
ARRAY_CASES = [case for case in CASES if (case / "array").is_dir()]
GROUP_CASES = [case for case in CASES if (case / "group").is_dir()]


@pytest.fixture(scope="module")
def server():
    with NginxServer(str(conformance_dir())) as running:
        yield running


@pytest.fixture(autouse=True)
def quick_failures(monkeypatch):
    # A test that goes wrong fails in seconds instead of waiting out the defaults.
    monkeypatch.setenv("ZARRDIRECT_HTTP_RETRY_DELAY_MS", "1")
    monkeypatch.setenv("ZARRDIRECT_HTTP_LOW_SPEED_TIME_S", "10")


def url_of(server, path: Path) -> str:
    return server.url + "/" + path.relative_to(conformance_dir()).as_posix()


def has_gpu() -> bool:
    return zarrdirect.cuda_available()


@pytest.mark.parametrize("case", ARRAY_CASES, ids=case_id)
def test_conformance_case_over_http_equals_the_file_read(server, case: Path) -> None:
    if case_id(case) in expected_refusals():
        with pytest.raises(zarrdirect.UnsupportedError):
            zarrdirect.open(url_of(server, case / "array")).read()
        return
    local = zarrdirect.open(case / "array").read()
    remote_array = zarrdirect.open(url_of(server, case / "array"))
    assert remote_array.shape == local.shape
    assert_same(remote_array.read(), local)
    box = tuple(slice(n // 4, n - n // 4) for n in local.shape)
    assert_same(remote_array[box], local[box])
    assert_same(remote_array.read(), np.load(case / "expected.npy"))


@pytest.mark.skipif(not has_gpu(), reason="no CUDA device")
@pytest.mark.parametrize("case", ARRAY_CASES[:8], ids=case_id)
def test_conformance_case_over_http_into_device_memory(server, case: Path) -> None:
    if case_id(case) in expected_refusals():
        pytest.skip("expected refusal")
    local = zarrdirect.open(case / "array").read()
    on_device = zarrdirect.open(url_of(server, case / "array")).read(device="cuda")
    assert_same(on_device.get(), local)


@pytest.mark.parametrize("case", GROUP_CASES, ids=case_id)
def test_groups_over_http(server, case: Path) -> None:
    if case_id(case) in expected_refusals():
        pytest.skip("expected refusal")
    try:
        local = zarrdirect.open_group(case / "group")
    except zarrdirect.UnsupportedError:
        pytest.skip("refused locally too")
    remote_group = zarrdirect.open_group(url_of(server, case / "group"))
    assert dict(remote_group.attrs) == dict(local.attrs)
    # Over HTTP nothing can be listed: members come from consolidated metadata, or are named.
    for name in local.keys():
        member = local[name]
        if isinstance(member, zarrdirect.Array):
            assert_same(remote_group[name][...], member[...])


def test_a_missing_array_url_is_not_found(server) -> None:
    with pytest.raises(zarrdirect.NotFoundError):
        zarrdirect.open(server.url + "/no/such/array")


def test_sharded_region_fetches_only_the_index_and_needed_inner_chunks(tmp_path) -> None:
    data = np.arange(128 ** 3, dtype=np.uint16).reshape(128, 128, 128)
    zarrdirect.save(tmp_path / "sharded", data, chunks=(16, 16, 16), shards=(64, 64, 64), codec="zstd:1")
    with NginxServer(str(tmp_path)) as local_server:
        array = zarrdirect.open(local_server.url + "/sharded")
        local_server.clear_log()
        box = (slice(16, 48), slice(16, 48), slice(80, 112))  # 2x2x2 inner chunks of shard (0, 0, 1)
        assert_same(array[box], data[box])
        requests = local_server.requests()
    shard_requests = [line for line in requests if "/sharded/c/0/0/1 " in line]
    assert shard_requests and len(shard_requests) == len(requests), requests
    heads = [line for line in shard_requests if line.startswith("HEAD")]
    gets = [line for line in shard_requests if line.startswith("GET")]
    assert len(heads) == 1, requests  # the shard's size, for the index at its end
    # The index, then at most one request per needed inner chunk (neighbours merged), all ranges.
    assert 2 <= len(gets) <= 1 + 8, requests
    assert all(line.endswith(" 206") for line in gets), requests


def test_missing_chunks_over_http_read_as_fill_value(server) -> None:
    cases = [case for case in ARRAY_CASES if "missing" in (case / "case.json").read_text()]
    assert cases, "the corpus has cases with missing chunks"
    for case in cases[:3]:
        if case_id(case) in expected_refusals():
            continue
        assert_same(zarrdirect.open(url_of(server, case / "array")).read(), np.load(case / "expected.npy"))


def test_multiscale_over_http_resolves_levels_against_the_image_url(tmp_path) -> None:
    level0 = np.arange(32 * 32, dtype=np.uint8).reshape(32, 32)
    image = tmp_path / "image.zarr"
    zarrdirect.create_group(image, zarr_format=3, attributes={"ome": {"version": "0.5", "multiscales": [{
        "axes": [{"name": "y", "type": "space"}, {"name": "x", "type": "space"}],
        "datasets": [{"path": "s0", "coordinateTransformations": [{"type": "scale", "scale": [1, 1]}]},
                     {"path": "s1", "coordinateTransformations": [{"type": "scale", "scale": [2, 2]}]}]}]}})
    zarrdirect.save(image / "s0", level0, chunks=(16, 16))
    zarrdirect.save(image / "s1", level0[::2, ::2], chunks=(16, 16))
    with NginxServer(str(tmp_path)) as local_server:
        remote_image = zarrdirect.open_multiscale(local_server.url + "/image.zarr/")
        assert len(remote_image.levels) == 2
        assert_same(remote_image[1][...], level0[::2, ::2])
        assert_same(remote_image[0][...], level0)
