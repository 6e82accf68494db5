"""The hardware catalog: sourced figures, valid profiles, the affine fit, and profile uploads."""

from __future__ import annotations

import datetime
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdlab_model.advice.hardware import (
    CATALOG,
    MAX_OVERHEAD_SHARE,
    BatchProfile,
    HardwareType,
    hardware_by_id,
    parse_profile_csv,
)

READ_DATE = datetime.date(2026, 11, 30)
PERF_ANALYZER_HEADER = (
    "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,"
    "Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,"
    "p50 latency,p90 latency,p95 latency,p99 latency"
)


def _profile(batch_sizes, latency_ms, *, is_estimate=False):
    return BatchProfile(tuple(batch_sizes), tuple(latency_ms), "test", is_estimate)


# --- The catalog ------------------------------------------------------------------------------


def test_the_catalog_loads_with_unique_ids_and_both_kinds():
    ids = [hardware.id for hardware in CATALOG]
    assert len(ids) == len(set(ids)), f"duplicate ids in {ids}"
    assert {hardware.kind for hardware in CATALOG} == {"cpu", "gpu"}, f"kinds of {ids}"
    for hardware_id in ids:
        assert hardware_by_id(hardware_id).id == hardware_id, f"lookup of {hardware_id}"


@pytest.mark.parametrize("hardware", CATALOG, ids=lambda hardware: hardware.id)
def test_every_entry_has_a_source_a_date_and_a_positive_price(hardware):
    assert "https://" in hardware.price_source, f"{hardware.id}: no link in {hardware.price_source}"
    price_date = datetime.date.fromisoformat(hardware.price_date)
    assert price_date <= READ_DATE, f"{hardware.id}: price dated {price_date}, after reading"
    assert hardware.usd_per_hour > 0, f"{hardware.id}: price {hardware.usd_per_hour}"
    if hardware.kind == "gpu":
        assert hardware.accelerator_memory_gb in (16, 24, 40, 80), (
            f"{hardware.id}: {hardware.accelerator_memory_gb} GB is not a memory size of the "
            "T4 / A10G / L4 / A100 / H100"
        )
    if hardware.profile is not None:
        assert "https://" in hardware.profile.source, f"{hardware.id}: profile source unlinked"
        assert "dated" in hardware.profile.source, f"{hardware.id}: profile source undated"


def test_the_issues_price_anchors():
    # Read 2026-11-30 from the sources named in the data file (docs/hardware_catalog.md).
    anchors = {"aws-g5-xlarge": 1.006, "aws-g6-xlarge": 0.8048, "gcp-g2-standard-4": 0.7068}
    for hardware_id, price in anchors.items():
        assert hardware_by_id(hardware_id).usd_per_hour == price, f"{hardware_id} price"


def test_published_profiles_agree_with_their_own_throughput_column():
    # NVIDIA's tables give latency and throughput separately: batch / latency must match the
    # throughput to within 2%, which catches a mistyped figure.
    import json

    from sdlab_model.advice.hardware import DATA_FILE

    profiles = json.loads(DATA_FILE.read_text(encoding="utf-8"))["profiles"]
    checked = 0
    for name, entry in profiles.items():
        if "throughput_per_s" not in entry:
            continue
        checked += 1
        for batch, latency, throughput in zip(
            entry["batch_sizes"], entry["latency_ms"], entry["throughput_per_s"], strict=True
        ):
            implied = batch * 1000 / latency
            assert abs(implied / throughput - 1) < 0.02, (
                f"{name} batch {batch}: {latency} ms implies {implied:.0f}/s, table {throughput}/s"
            )
    assert checked >= 2, f"only {checked} profiles carry a throughput column"


def test_estimated_profiles_say_so():
    for hardware in CATALOG:
        profile = hardware.profile
        if profile is not None and profile.is_estimate:
            assert profile.source.startswith("ESTIMATE"), f"{hardware.id}: {profile.source[:60]}"


def test_an_unknown_id_names_the_known_ones():
    with pytest.raises(ValueError, match="aws-g5-xlarge"):
        hardware_by_id("tpu-v9")


# --- Validation at construction ---------------------------------------------------------------

_GOOD_HARDWARE = {
    "id": "test-gpu",
    "name": "Test GPU",
    "kind": "gpu",
    "usd_per_hour": 1.0,
    "accelerator": "NVIDIA T4",
    "accelerator_memory_gb": 16,
    "slots": 1,
    "profile": None,
    "price_source": "https://example.com",
    "price_date": "2026-11-30",
    "is_estimate": False,
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"usd_per_hour": 0.0}, "usd_per_hour must be a finite price > 0, got 0.0"),
        ({"usd_per_hour": math.nan}, "usd_per_hour must be a finite price > 0"),
        ({"kind": "tpu"}, "kind must be one of"),
        ({"slots": 0}, "slots must be a whole number in 1..256, got 0"),
        ({"accelerator_memory_gb": None}, "accelerator_memory_gb must be > 0 for a gpu"),
        ({"kind": "cpu"}, "accelerator_memory_gb must be None for a cpu"),
        ({"price_date": "last week"}, "price_date must be a YYYY-MM-DD date"),
        ({"price_source": " "}, "price_source must say where"),
        ({"id": "Bad Id"}, "id must be lower-case"),
    ],
)
def test_bad_hardware_is_refused_with_field_and_value(change, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        HardwareType(**{**_GOOD_HARDWARE, **change})


@pytest.mark.parametrize(
    ("batch_sizes", "latency_ms", "message"),
    [
        ((1,), (1.0,), "a profile needs 2 to 1000 batch sizes, got 1"),
        ((2, 4), (1.0, 2.0), "batch_sizes must start at 1, got 2"),
        ((1, 4, 4), (1.0, 2.0, 3.0), "strictly increasing, got 4 after 4"),
        ((1, 2), (1.0, -2.0), "latency_ms must be finite and > 0, got -2.0"),
        ((1, 2), (3.0, 2.0), "must not decrease as the batch grows"),
        ((1, 2), (1.0, 2.0, 3.0), "batch_sizes has 2 entries but latency_ms has 3"),
    ],
)
def test_bad_profiles_are_refused(batch_sizes, latency_ms, message):
    with pytest.raises(ValueError, match=message):
        _profile(batch_sizes, latency_ms)


# --- Interpolation and the affine fit ---------------------------------------------------------


def test_latency_at_interpolates_and_extrapolates_from_the_last_two_points():
    profile = _profile((1, 2, 4), (2.0, 3.0, 7.0))
    assert profile.latency_at(1) == 2.0, "at a measured point"
    assert profile.latency_at(3) == 5.0, "halfway between 2 (3 ms) and 4 (7 ms)"
    assert profile.latency_at(6) == 11.0, "beyond 4: slope (7-3)/(4-2) = 2 ms per request"
    with pytest.raises(ValueError, match="batch_size must be a finite number >= 1"):
        profile.latency_at(0.5)


@pytest.mark.parametrize(("single_ms", "share"), [(2.0, 0.6), (5.0, 0.0), (1.5, 0.95)])
def test_affine_fit_recovers_an_exactly_affine_profile(single_ms, share):
    sizes = (1, 2, 4, 8, 16, 32)
    profile = _profile(sizes, [single_ms * (share + (1 - share) * b) for b in sizes])
    fit = profile.affine_fit()
    assert fit.single_request_ms == pytest.approx(single_ms, rel=1e-9), f"s1 of {fit}"
    assert fit.overhead_share == pytest.approx(share, abs=1e-9), f"f of {fit}"
    assert fit.max_relative_error < 1e-9, f"error of an exact fit: {fit}"


def test_affine_fit_clips_a_flat_profile_and_reports_its_error():
    fit = _profile((1, 2, 4), (5.0, 5.0, 5.0)).affine_fit()
    assert fit.overhead_share == MAX_OVERHEAD_SHARE, f"flat profile: {fit}"
    assert fit.max_relative_error > 0, f"a clipped fit cannot be exact: {fit}"


def test_the_t4_profile_is_roughly_affine_with_a_large_fixed_share():
    fit = hardware_by_id("aws-g4dn-xlarge").profile.affine_fit()
    assert 2.5 < fit.single_request_ms < 3.5, f"T4 single request: {fit}"
    assert 0.3 < fit.overhead_share < 0.8, f"T4 fixed share: {fit}"
    assert fit.max_relative_error < 0.3, f"T4 fit error: {fit}"


# --- Uploaded profiles ------------------------------------------------------------------------


@pytest.mark.parametrize("hardware", [h for h in CATALOG if h.profile], ids=lambda h: h.id)
def test_round_trip_through_csv(hardware):
    back = parse_profile_csv(hardware.profile.to_csv(), source=hardware.profile.source)
    assert back.batch_sizes == hardware.profile.batch_sizes, f"{hardware.id} batch sizes"
    assert back.latency_ms == hardware.profile.latency_ms, f"{hardware.id} latencies"


def test_simple_csv_with_batch_header_spaces_and_bom():
    profile = parse_profile_csv("\ufeffbatch, latency_ms\r\n1, 2.5\r\n\r\n8,6\r\n")
    assert profile.batch_sizes == (1, 8), f"{profile}"
    assert profile.latency_ms == (2.5, 6.0), f"{profile}"
    assert profile.is_estimate is False, "an upload is a measurement"


def test_perf_analyzer_csv_with_a_batch_column_in_microseconds():
    text = (
        f"Batch Size,{PERF_ANALYZER_HEADER}\n"
        "4,1,690,1,2,3,4,4000,5,0,5800,6000,6100,6200\n"
        "1,2,400,1,2,3,4,2500,5,0,5000,5100,5200,5300\n"
        "1,1,330,1,2,3,4,2500,5,0,3000,3100,3200,3300\n"
    )
    profile = parse_profile_csv(text)
    assert profile.batch_sizes == (1, 4), f"{profile}"
    assert profile.latency_ms == (3.0, 5.8), "p50 in µs → ms, lowest concurrency per batch"


_BAD_FILES = [
    ("", "the file is empty"),
    ("\n \n", "the file is empty"),
    ("size,time\n1,2\n2,3\n", "the header must be 'batch_size,latency_ms'"),
    ("batch_size,latency_ms,extra\n1,2,3\n", "the header must be"),
    ("batch_size,latency_ms\n1,abc\n2,3\n", "row 2: latency_ms 'abc' is not a number"),
    ("batch_size,latency_ms\n1,2\nx,3\n", "row 3: batch size 'x' is not a number"),
    ("batch_size,latency_ms\n1,2\n2.5,3\n", "batch size '2.5' is not a whole number"),
    ("batch_size,latency_ms\n1,2\n2,-3\n", "row 3: latency_ms must be > 0, got '-3'"),
    ("batch_size,latency_ms\n1,2\n2,0\n", "latency_ms must be > 0"),
    ("batch_size,latency_ms\n1,nan\n2,3\n", "must be a finite number"),
    ("batch_size,latency_ms\n1,2\n4,3\n2,5\n", "batch sizes must increase: 2 comes after 4"),
    ("batch_size,latency_ms\n1,2\n1,3\n", "batch size 1 appears twice"),
    ("batch_size,latency_ms\n1,2\n", "at least 2 rows"),
    ("batch_size,latency_ms\n2,2\n4,3\n", "the first batch size must be 1"),
    ("batch_size,latency_ms\n1,5\n2,3\n", "must not decrease as the batch grows"),
    ("batch_size,latency_ms\n1,2\n2\n", "row 3 has 1 fields; the header has 2"),
    (
        "batch_size,latency_ms\n" + "".join(f"{b},{b}\n" for b in range(1, 1003)),
        "more than 1000 rows",
    ),
    ("batch_size,latency_ms\n" + "1,2" + " " * 100_001 + "\n", "larger than 100 kB"),
    ("batch_size,latency_ms\n1,2\n2,\ud800\n", "not valid UTF-8 text"),
    ("batch_size,latency_ms\n1,2\x00\n", "NUL"),
    (
        f"{PERF_ANALYZER_HEADER}\n1,69,225,2148,64,206,11781,19,0,13891,18795,19753,21018\n",
        "no 'Batch Size' column",
    ),
]


@pytest.mark.parametrize(("text", "message"), _BAD_FILES, ids=[m for _, m in _BAD_FILES])
def test_each_bad_file_class_is_rejected_with_its_message(text, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        parse_profile_csv(text)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(),
        st.text(alphabet='0123456789,.-e \n\r"batchsize_latencym', max_size=200),
        st.lists(
            st.tuples(st.integers(-3, 300), st.floats(allow_nan=True, allow_infinity=True)),
            max_size=8,
        ).map(lambda rows: "batch_size,latency_ms\n" + "".join(f"{b},{x}\n" for b, x in rows)),
    )
)
def test_parse_profile_csv_raises_nothing_but_value_error(text):
    try:
        profile = parse_profile_csv(text)
    except ValueError:
        return
    assert isinstance(profile, BatchProfile), f"{text!r} gave {profile!r}"
