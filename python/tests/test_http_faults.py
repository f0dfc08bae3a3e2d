"""Every error path of reading over HTTP, against the tests' own misbehaving server
(fault_server.py): retries of 500s, resets and short bodies with backoff, a bounded failure naming
the URL and the last status, timeouts, servers that ignore Range or state a wrong length, refusals,
redirect loops, tokens and extra headers (never shown in messages), unsupported schemes and writes.
Small settings keep every test within a few seconds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import zarrdirect
from fault_server import Fault, FaultServer

DATA = np.arange(16 * 16, dtype=np.uint16).reshape(16, 16)
RETRIES = 2


@pytest.fixture(autouse=True)
def small_settings(monkeypatch):
    monkeypatch.setenv("ZARRDIRECT_HTTP_RETRIES", str(RETRIES))
    monkeypatch.setenv("ZARRDIRECT_HTTP_RETRY_DELAY_MS", "1")
    monkeypatch.setenv("ZARRDIRECT_HTTP_LOW_SPEED_TIME_S", "1")
    monkeypatch.setenv("ZARRDIRECT_HTTP_CONNECT_TIMEOUT_S", "2")
    for name in ("ZARRDIRECT_HTTP_BEARER_TOKEN", "ZARRDIRECT_HTTP_HEADERS"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server(tmp_path):
    # Plain: 4 chunks of 8x8, uncompressed. Sharded: 1 shard of 4x4 inner chunks of 4x4, zstd.
    zarrdirect.save(tmp_path / "plain", DATA, chunks=(8, 8), codec="raw")
    zarrdirect.save(tmp_path / "sharded", DATA, chunks=(4, 4), shards=(16, 16), codec="zstd:1")
    with FaultServer(tmp_path) as running:
        yield running


def chunk_gets(server, path: str) -> int:
    return sum(1 for method, logged, _, _ in server.log if method == "GET" and logged == path)


def test_500s_then_success_are_retried(server) -> None:
    server.faults["/plain/c/1/0"] = Fault("status", status=503, times=2)
    assert np.array_equal(zarrdirect.open(server.url + "/plain")[...], DATA)
    assert chunk_gets(server, "/plain/c/1/0") == 3


def test_500_forever_fails_naming_the_url_and_status_after_bounded_retries(server) -> None:
    server.faults["/plain/c/1/0"] = Fault("status", status=500)
    with pytest.raises(zarrdirect.ZarrIOError) as caught:
        zarrdirect.open(server.url + "/plain")[...]
    message = str(caught.value)
    assert server.url + "/plain/c/1/0" in message and "HTTP 500" in message, message
    assert f"{RETRIES + 1} attempts" in message, message
    assert chunk_gets(server, "/plain/c/1/0") == RETRIES + 1


def test_closed_connections_are_retried(server) -> None:
    server.faults["/plain/c/0/1"] = Fault("close", times=2)
    assert np.array_equal(zarrdirect.open(server.url + "/plain")[...], DATA)


def test_a_stalled_response_times_out_and_fails_naming_the_url(server, monkeypatch) -> None:
    monkeypatch.setenv("ZARRDIRECT_HTTP_RETRIES", "0")
    server.faults["/plain/c/0/0"] = Fault("slow", delay=3.0)
    with pytest.raises(zarrdirect.ZarrIOError) as caught:
        zarrdirect.open(server.url + "/plain")[...]
    assert "/plain/c/0/0" in str(caught.value) and "Timeout" in str(caught.value), str(caught.value)


def test_a_slow_response_once_is_retried(server) -> None:
    server.faults["/plain/c/0/0"] = Fault("slow", delay=3.0, times=1)
    assert np.array_equal(zarrdirect.open(server.url + "/plain")[...], DATA)


@pytest.mark.parametrize("array", ["plain", "sharded"])
def test_short_bodies_are_retried(server, array) -> None:
    key = "/plain/c/1/1" if array == "plain" else "/sharded/c/0/0"
    server.faults[key] = Fault("short", times=1)
    assert np.array_equal(zarrdirect.open(f"{server.url}/{array}")[...], DATA)


@pytest.mark.parametrize("kind", ["short", "long_length"])
def test_a_body_always_shorter_than_stated_fails_naming_the_url(server, kind) -> None:
    server.faults["/plain/c/1/1"] = Fault(kind)
    # Retried and failed (ZarrIOError), or refused at once for its stated size (CorruptDataError).
    with pytest.raises(zarrdirect.ZarrdirectError) as caught:
        zarrdirect.open(server.url + "/plain")[...]
    assert server.url + "/plain/c/1/1" in str(caught.value)


def test_a_server_ignoring_range_still_gives_the_right_values(server) -> None:
    server.faults["/sharded/c/0/0"] = Fault("ignore_range")
    array = zarrdirect.open(server.url + "/sharded")
    assert np.array_equal(array[...], DATA)
    assert np.array_equal(array[5:7, 9:14], DATA[5:7, 9:14])


def shard_gets(server) -> list[str | None]:
    return [rng for method, logged, rng, _ in server.log if method == "GET" and logged == "/sharded/c/0/0"]


def touching_runs(shard: Path, inner: list[int]) -> int:
    """How many runs of touching byte ranges the `inner` chunks of a shard form in its file (the
    writer stores inner chunks in the order its threads finish them, so the layout varies). The
    index ends the file: 16 bytes (offset, nbytes) per inner chunk, then a crc32c."""
    raw = shard.read_bytes()
    entries = np.frombuffer(raw[-(16 * 16 + 4):-4], dtype="<u8").reshape(16, 2)
    ranges = sorted((int(entries[i][0]), int(entries[i][0] + entries[i][1])) for i in inner)
    return 1 + sum(1 for before, after in zip(ranges, ranges[1:]) if after[0] != before[1])


@pytest.mark.parametrize("gap", [None, "0"])
def test_inner_chunks_of_a_region_share_requests_up_to_the_merge_gap(server, monkeypatch, gap) -> None:
    # Inner chunks 5, 6, 9 and 10 of the 4x4 grid. Within the default gap (1 MiB) one request
    # fetches all four; with a gap of 0 each run of touching ranges has its own.
    inner_requests = 1 if gap is None else touching_runs(Path(server.root) / "sharded" / "c" / "0" / "0", [5, 6, 9, 10])
    if gap is not None:
        monkeypatch.setenv("ZARRDIRECT_HTTP_MERGE_GAP_BYTES", gap)
    array = zarrdirect.open(server.url + "/sharded")
    server.log.clear()
    assert np.array_equal(array[4:12, 4:12], DATA[4:12, 4:12])
    # Distinct ranges: a retry on a loaded machine (1 s without progress) asks for one again.
    gets = sorted(set(shard_gets(server)))
    assert len(gets) == 1 + inner_requests, gets  # the index, then the inner chunks
    assert all(rng and rng.startswith("bytes=") for rng in gets), gets


def test_a_merged_request_to_a_server_ignoring_range_keeps_only_its_pieces(server) -> None:
    server.faults["/sharded/c/0/0"] = Fault("ignore_range")
    array = zarrdirect.open(server.url + "/sharded")
    assert np.array_equal(array[4:12, 4:12], DATA[4:12, 4:12])
    assert np.array_equal(array[0:4, 12:16], DATA[0:4, 12:16])


def test_a_merged_request_cut_short_is_retried(server) -> None:
    array = zarrdirect.open(server.url + "/sharded")
    server.faults["/sharded/c/0/0"] = Fault("short", times=1)
    assert np.array_equal(array[4:12, 4:12], DATA[4:12, 4:12])


def test_a_content_length_smaller_than_the_chunk_is_caught(server) -> None:
    server.faults["/plain/c/0/1"] = Fault("small_length")
    with pytest.raises(zarrdirect.ZarrdirectError) as caught:
        zarrdirect.open(server.url + "/plain")[...]
    assert "/plain/c/0/1" in str(caught.value)


@pytest.mark.parametrize("kind", ["small_length", "wrong_range"])
def test_a_range_answered_wrongly_is_caught(server, kind) -> None:
    server.faults["/sharded/c/0/0"] = Fault(kind)
    with pytest.raises(zarrdirect.ZarrdirectError) as caught:
        zarrdirect.open(server.url + "/sharded")[...]
    assert "/sharded/c/0/0" in str(caught.value)


@pytest.mark.parametrize("status", [401, 403])
def test_refused_access_names_the_url(server, status) -> None:
    server.faults["/plain/zarr.json"] = Fault("status", status=status)
    with pytest.raises(zarrdirect.ZarrIOError) as caught:
        zarrdirect.open(server.url + "/plain")
    message = str(caught.value)
    assert server.url + "/plain/zarr.json" in message and "access refused" in message and str(status) in message
    assert chunk_gets(server, "/plain/zarr.json") == 1  # not retried


def test_other_4xx_fail_at_once(server) -> None:
    server.faults["/plain/c/0/0"] = Fault("status", status=418)
    with pytest.raises(zarrdirect.ZarrIOError, match="HTTP 418"):
        zarrdirect.open(server.url + "/plain")[...]
    assert chunk_gets(server, "/plain/c/0/0") == 1


def test_a_missing_chunk_reads_as_fill_value(server, tmp_path) -> None:
    (tmp_path / "plain" / "c" / "1" / "0").unlink()
    expected = DATA.copy()
    expected[8:, :8] = 0
    assert np.array_equal(zarrdirect.open(server.url + "/plain")[...], expected)


def test_missing_metadata_is_not_found(server) -> None:
    with pytest.raises(zarrdirect.NotFoundError):
        zarrdirect.open(server.url + "/nothing-here")


def test_redirects_are_followed(server) -> None:
    assert np.array_equal(zarrdirect.open(server.url + "/redirected/plain")[...], DATA)


def test_a_redirect_loop_fails(server) -> None:
    server.faults["/plain/zarr.json"] = Fault("redirect_loop")
    with pytest.raises(zarrdirect.ZarrIOError, match="redirects"):
        zarrdirect.open(server.url + "/plain")


def test_bearer_token_and_extra_headers_are_sent_and_never_shown(server, monkeypatch) -> None:
    server.required_token = "s3cr3t-token"
    monkeypatch.setenv("ZARRDIRECT_HTTP_HEADERS", "X-Zarrdirect-Test: hello\nX-Other: 2")
    with pytest.raises(zarrdirect.ZarrIOError) as caught:
        zarrdirect.open(server.url + "/plain")
    assert "access refused" in str(caught.value)
    monkeypatch.setenv("ZARRDIRECT_HTTP_BEARER_TOKEN", "s3cr3t-token")
    assert np.array_equal(zarrdirect.open(server.url + "/plain")[...], DATA)
    assert server.headers[-1].get("X-Zarrdirect-Test") == "hello"
    monkeypatch.setenv("ZARRDIRECT_HTTP_BEARER_TOKEN", "wrong-token")
    with pytest.raises(zarrdirect.ZarrIOError) as caught:
        zarrdirect.open(server.url + "/plain")
    assert "wrong-token" not in str(caught.value) and "hello" not in str(caught.value)


def test_a_malformed_header_setting_is_refused_without_showing_it(server, monkeypatch) -> None:
    monkeypatch.setenv("ZARRDIRECT_HTTP_HEADERS", "no colon secret-value")
    with pytest.raises(zarrdirect.InvalidArgumentError) as caught:
        zarrdirect.open(server.url + "/plain")
    assert "secret-value" not in str(caught.value) and "ZARRDIRECT_HTTP_HEADERS" in str(caught.value)


@pytest.mark.parametrize("url", ["s3://bucket/image.zarr", "gs://bucket/a", "ftp://host/a.zarr"])
def test_unsupported_schemes_are_named(url) -> None:
    scheme = url.split(":")[0]
    with pytest.raises(zarrdirect.UnsupportedError, match=f'"{scheme}"'):
        zarrdirect.open(url)
    with pytest.raises(zarrdirect.UnsupportedError, match=f'"{scheme}"'):
        zarrdirect.open_group(url)


def test_writing_to_a_url_is_unsupported(server) -> None:
    with pytest.raises(zarrdirect.UnsupportedError):
        zarrdirect.create(server.url + "/new", shape=(4,), dtype="uint8")
    with pytest.raises(zarrdirect.UnsupportedError):
        zarrdirect.open(server.url + "/plain", mode="r+")[0:2, 0:2] = 1


def test_credentials_in_the_url_are_refused_without_being_shown(server) -> None:
    url = server.url.replace("http://", "http://someone:pw9x@") + "/plain"
    with pytest.raises(zarrdirect.InvalidArgumentError) as caught:
        zarrdirect.open(url)
    assert "pw9x" not in str(caught.value) and "ZARRDIRECT_HTTP_HEADERS" in str(caught.value)
    assert server.log == []  # nothing was sent
