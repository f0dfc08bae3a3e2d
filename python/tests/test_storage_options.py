"""storage_options=: HTTP headers, bearer token, concurrency and retries given per open (instead
of, or over, the ZARRDIRECT_HTTP_* environment), kept by groups and images for their members and
by pickles for their reopening; bad options refused before anything is sent, without their text."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import zarrdirect
from fault_server import Fault, FaultServer

DATA = np.arange(16 * 16, dtype=np.uint16).reshape(16, 16)
TOKEN = "t0ken-XYZ"


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    monkeypatch.setenv("ZARRDIRECT_HTTP_RETRY_DELAY_MS", "1")
    monkeypatch.setenv("ZARRDIRECT_HTTP_CONNECT_TIMEOUT_S", "2")
    for name in ("ZARRDIRECT_HTTP_BEARER_TOKEN", "ZARRDIRECT_HTTP_HEADERS", "ZARRDIRECT_HTTP_RETRIES",
                 "ZARRDIRECT_HTTP_CONCURRENCY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server(tmp_path):
    zarrdirect.create_group(tmp_path)
    zarrdirect.save(tmp_path / "plain", DATA, chunks=(8, 8), codec="raw")
    zarrdirect.write_multiscale(tmp_path / "image.zarr", DATA, levels=2)
    with FaultServer(tmp_path) as running:
        running.required_token = TOKEN
        yield running


def test_token_and_headers_from_storage_options_are_sent(server) -> None:
    with pytest.raises(zarrdirect.ZarrIOError, match="access refused"):
        zarrdirect.open(server.url + "/plain")
    refused = len(server.headers)
    options = {"bearer_token": TOKEN, "headers": {"X-Lab": "imaging"}}
    array = zarrdirect.open(server.url + "/plain", storage_options=options)
    assert np.array_equal(array[...], DATA)
    assert len(server.headers) > refused
    assert all(seen.get("X-Lab") == "imaging" for seen in server.headers[refused:])


def test_explicit_options_replace_the_environment(server, monkeypatch) -> None:
    monkeypatch.setenv("ZARRDIRECT_HTTP_BEARER_TOKEN", "wrong-token")
    monkeypatch.setenv("ZARRDIRECT_HTTP_HEADERS", "x-lab: from-env\nX-Keep: 1")
    options = {"bearer_token": TOKEN, "headers": ["X-Lab: explicit"]}
    assert np.array_equal(zarrdirect.open(server.url + "/plain", storage_options=options)[...], DATA)
    last = {name.lower(): value for name, value in server.headers[-1].items()}
    assert last["x-lab"] == "explicit" and last["x-keep"] == "1"


def test_groups_and_images_open_their_members_with_the_same_options(server) -> None:
    options = {"bearer_token": TOKEN}
    group = zarrdirect.open_group(server.url, storage_options=options)
    assert np.array_equal(group["plain"][...], DATA)
    image = zarrdirect.open_multiscale(server.url + "/image.zarr", storage_options=options)
    assert np.array_equal(image[0][...], DATA)
    assert np.array_equal(image.read(level=1), image.level(1)[...])
    assert image.level(1).shape == (8, 8)


def test_pickles_reopen_with_their_options(server) -> None:
    options = {"bearer_token": TOKEN, "retries": 1}
    array = zarrdirect.open(server.url + "/plain", storage_options=options)
    options["bearer_token"] = "changed-after-open"  # the array keeps its own copy
    assert np.array_equal(pickle.loads(pickle.dumps(array))[...], DATA)
    group = pickle.loads(pickle.dumps(zarrdirect.open_group(server.url, storage_options={"bearer_token": TOKEN})))
    assert np.array_equal(group["plain"][...], DATA)
    image = zarrdirect.open_multiscale(server.url + "/image.zarr", storage_options={"bearer_token": TOKEN})
    assert pickle.loads(pickle.dumps(image)).level(1).shape == (8, 8)


def test_retries_from_storage_options_bound_the_attempts(server) -> None:
    server.faults["/plain/c/1/0"] = Fault("status", status=503)
    with pytest.raises(zarrdirect.ZarrIOError, match="HTTP 503"):
        zarrdirect.open(server.url + "/plain", storage_options={"bearer_token": TOKEN, "retries": 0})[...]
    gets = [entry for entry in server.log if entry[0] == "GET" and entry[1] == "/plain/c/1/0"]
    assert len(gets) == 1


@pytest.mark.parametrize("options, field", [
    ({"token": "x"}, "unknown key 'token'"),
    ({"headers": "X-A: 1"}, "storage_options['headers']"),
    ({"headers": {"X-A": 1}}, "storage_options['headers']"),
    ({"bearer_token": 5}, "storage_options['bearer_token']"),
    ({"concurrency": 0}, "storage_options['concurrency']"),
    ({"concurrency": 5000}, "storage_options['concurrency']"),
    ({"concurrency": True}, "storage_options['concurrency']"),
    ({"retries": -1}, "storage_options['retries']"),
    ({"retries": 1000}, "storage_options['retries']"),
    ("headers", "storage_options must be a dict"),
])
def test_bad_options_are_refused_before_any_request(server, options, field) -> None:
    with pytest.raises(zarrdirect.InvalidArgumentError) as caught:
        zarrdirect.open(server.url + "/plain", storage_options=options)
    assert field in str(caught.value)
    assert server.log == []


def test_malformed_header_or_token_is_refused_without_its_text(server) -> None:
    for options in ({"headers": ["no colon sec-value"]}, {"headers": {"X-Bad": "a\nsec-value"}},
                    {"bearer_token": "two sec-value"}):
        with pytest.raises(zarrdirect.InvalidArgumentError) as caught:
            zarrdirect.open(server.url + "/plain", storage_options=options)
        assert "sec-value" not in str(caught.value) and "StoreOptions::http_" in str(caught.value)
    assert server.log == []


@pytest.mark.parametrize("options, words", [
    # A colon in a dict name would make the line another header than the one named.
    ({"headers": {"Authorization: Basic sec-value": "x"}}, "header name holding ':'"),
    ({"headers": {"X-A": "1", "x-a": "sec-value"}}, "http_headers[1] repeats the name of http_headers[0]"),
    ({"headers": ["X-A: 1", "X-A: sec-value"]}, "http_headers[1] repeats the name of http_headers[0]"),
    ({"headers": {"X-A": "a\x00sec-value"}}, "StoreOptions::http_headers[0]"),
    ({"headers": {"X-A": "a\r\nX-B: sec-value"}}, "StoreOptions::http_headers[0]"),
    ({"headers": {"X-\u00e9": "sec-value"}}, "StoreOptions::http_headers[0]"),
    ({"headers": {"Range": "bytes=0-0 sec-value"}}, "sets range"),
    ({"bearer_token": "a\r\nX-B: sec-value"}, "StoreOptions::http_bearer_token"),
    ({"bearer_token": "a\x00sec-value"}, "StoreOptions::http_bearer_token"),
    ({"bearer_token": "t", "headers": {"Authorization": "Basic sec-value"}}, "sets it too"),
])
def test_hostile_headers_and_tokens_are_refused_without_their_text(server, options, words) -> None:
    with pytest.raises(zarrdirect.InvalidArgumentError) as caught:
        zarrdirect.open(server.url + "/plain", storage_options=options)
    assert words in str(caught.value)
    assert "sec-value" not in str(caught.value)
    assert server.log == []


def test_a_folder_accepts_and_ignores_options(tmp_path) -> None:
    zarrdirect.save(tmp_path / "local", DATA, chunks=(8, 8))
    array = zarrdirect.open(tmp_path / "local", storage_options={"bearer_token": TOKEN})
    assert np.array_equal(array[...], DATA)
    assert np.array_equal(pickle.loads(pickle.dumps(array))[...], DATA)
