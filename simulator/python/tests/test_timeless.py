"""Tests of the `timeless` Python package against SimGrid's numbers, hand derivations and the
CLI's output files. Run by validation/run-tests.sh (`maturin develop` into a venv, then pytest).
"""

import os
import subprocess
from pathlib import Path

import pytest

import timeless

ROOT = Path(__file__).resolve().parents[3]
PLATFORM = ROOT / "platforms/mycluster.xml"
DEPLOYMENT = ROOT / "deployments/mycluster-ring4.xml"
RING = ROOT / "traces/ring4/ring.txt"
FIG1 = ROOT / "traces/ring4/ring-fig1.txt"

# The seed's Figure 1 ring on mycluster.xml (README "Worked example"): each of 4 steps is
# 1e6 flops at 1.17 Gflop/s, then 1e6 + 16 bytes over 3 links of 16.67 us: latency phase
# 11.6436 x 50.01 us (smpi/lat-factor above 65472 B), bandwidth phase
# P / (0.940694 x 125 MB/s) (smpi/bw-factor; the private link is the bottleneck).
COMPUTE = 1e6 / 1.17e9
LAT = 3 * 16.67e-6
P = 1e6 + 16


def fig1(bw_scale=1.0, lat_scale=1.0):
    return 4 * (COMPUTE + 11.6436 * LAT * lat_scale + P / (0.940694 * 125e6 * bw_scale))


def ring(**kw):
    return timeless.simulate(RING, platform=PLATFORM, deployment=DEPLOYMENT, **kw)


def test_ring_matches_simgrid():
    r = ring()
    # SimGrid 3.32 (smpirun -replay) on the same trace and platform.
    assert r.simulated_time == 0.22372670703708541
    assert r.actions == 76
    assert [x.rank for x in r.ranks] == [0, 1, 2, 3]
    assert [x.host for x in r.ranks] == [f"mycluster-{i}.mysite.fr" for i in range(4)]
    assert max(x.finish_time for x in r.ranks) == r.simulated_time
    assert sum(x.actions for x in r.ranks) == 76
    for x in r.ranks:
        # A rank's time is the sum of its parts (no sleep in this trace).
        parts = x.compute_time + x.comm_time + x.wait_time + x.sleep_time
        assert parts == pytest.approx(x.finish_time - x.init_time, rel=1e-9)
    d = r.to_dict()
    assert d["simulated_time"] == r.simulated_time
    assert set(d["ranks"][0]) >= {"rank", "host", "finish_time", "compute_time", "comm_time",
                                  "wait_time", "sleep_time"}
    assert r.what_if == []


def test_paths_as_str_and_pathlike():
    a = timeless.simulate(str(RING), platform=str(PLATFORM), deployment=str(DEPLOYMENT))
    assert a.simulated_time == ring().simulated_time


@pytest.mark.parametrize(
    "knobs,want",
    [
        ({}, fig1()),
        ({"scale_bandwidth": 2.0}, fig1(bw_scale=2.0)),
        ({"scale_latency": 3.0}, fig1(lat_scale=3.0)),
        # No network at all: the 4 computations in sequence.
        ({"ideal_network": True}, 4 * COMPUTE),
    ],
)
def test_what_if_knobs_match_hand_derivation(knobs, want):
    r = timeless.simulate(FIG1, platform=PLATFORM, deployment=DEPLOYMENT, **knobs)
    # The factors 11.6436 and 0.940694 are SimGrid's, rounded to 6 digits.
    assert r.simulated_time == pytest.approx(want, rel=1e-5)
    if knobs:
        assert r.what_if


def test_cfg_list_and_dict():
    # A latency factor of 1 for every size: the latency phase is the raw 50.01 us.
    want = 4 * (COMPUTE + LAT + P / (0.940694 * 125e6))
    a = timeless.simulate(FIG1, platform=PLATFORM, deployment=DEPLOYMENT,
                          cfg=["smpi/lat-factor:0:1"])
    b = timeless.simulate(FIG1, platform=PLATFORM, deployment=DEPLOYMENT,
                          cfg={"smpi/lat-factor": "0:1"})
    assert a.simulated_time == b.simulated_time
    assert a.simulated_time == pytest.approx(want, rel=1e-5)


def test_bad_input_raises_input_error(tmp_path):
    with pytest.raises(timeless.InputError, match="nope.xml"):
        ring_missing = timeless.simulate(RING, platform=tmp_path / "nope.xml")
        del ring_missing
    with pytest.raises(timeless.InputError, match="smpi/no-such-key"):
        ring(cfg=["smpi/no-such-key:1"])
    with pytest.raises(timeless.InputError, match="bandwidth"):
        ring(scale_bandwidth=0.0)
    with pytest.raises(timeless.InputError, match="cfg"):
        ring(cfg=3)
    bad = tmp_path / "bad.txt"
    bad.write_text("0 init\n0 compute lots\n0 finalize\n")
    with pytest.raises(timeless.InputError, match=r"bad\.txt:2"):
        timeless.simulate(bad, platform=PLATFORM, np=1)
    # Every error class derives from TimelessError.
    assert issubclass(timeless.InputError, timeless.TimelessError)
    assert issubclass(timeless.DeadlockError, timeless.TimelessError)


def test_deadlock_raises_deadlock_error(tmp_path):
    t = tmp_path / "dead.txt"
    t.write_text("0 init\n1 init\n0 recv 1 0 8\n1 recv 0 0 8\n0 finalize\n1 finalize\n")
    with pytest.raises(timeless.DeadlockError, match="rank 0"):
        timeless.simulate(t, platform=PLATFORM, np=2)


def study(tmp_path):
    spec = tmp_path / "study.toml"
    spec.write_text(
        f'platform = "{PLATFORM}"\ndeployment = "{DEPLOYMENT}"\n'
        f'traces = ["{RING}", "{FIG1}"]\n'
        '[[axis]]\nname = "scale-bandwidth"\nvalues = [0.5, 1, 2]\n'
        '[[axis]]\nname = "scale-latency"\nvalues = [1, 3]\n'
    )
    return spec


def timeless_bin():
    exe = Path(os.environ.get("TIMELESS_BIN", ROOT / "target/debug/timeless"))
    if not exe.exists():
        pytest.skip(f"{exe} not built (cargo build -p timeless, or set TIMELESS_BIN)")
    return exe


def test_kernel_counts_equal_the_cli_s(tmp_path):
    # The same replay through the CLI: `--kernel-stats --format json` has the counts as its
    # `kernel` member (their hand derivation: the kernel test
    # the_kernel_counts_its_solves_and_unchanged_rates).
    r = ring()
    out = subprocess.run(
        [timeless_bin(), "simulate", RING, "--platform", PLATFORM, "--deployment", DEPLOYMENT,
         "--kernel-stats", "--format", "json"],
        capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stderr
    import json
    assert r.kernel == json.loads(out.stdout)["kernel"]
    assert r.kernel["solves"] > 0
    assert r.to_dict()["kernel"] == r.kernel


def test_full_filling_turns_the_region_path_off():
    # Corpus case 60 (16 ranks, a cluster with a backbone): the region path takes 28 general
    # solves by default and none with full_filling, as the CLI's --full-filling (its test
    # full_filling_turns_the_region_path_off_with_the_same_times); SimGrid 3.32's makespan
    # is 0.0616702416807 s (the case's case.toml).
    case = ROOT / "validation/corpus/60-cluster16-mixed"
    runs = [timeless.simulate(case / "traces.txt", platform=case / "platform.xml",
                              deployment=case / "deployment.xml", full_filling=full)
            for full in (False, True)]
    assert [r.kernel["region_solves"] == 0 for r in runs] == [False, True]
    for r in runs:
        assert r.simulated_time == pytest.approx(0.0616702416807, rel=1e-11)
    assert runs[0].simulated_time == pytest.approx(runs[1].simulated_time, rel=1e-15)


def test_sweep_equals_cli_sweep_and_single_runs(tmp_path):
    spec = study(tmp_path)
    s = timeless.sweep(spec, tmp_path / "py", jobs=2)
    assert (s.total, s.ran, s.skipped, s.failed) == (12, 12, 0, [])
    assert [r.key for r in s.results][:2] == [
        f"{RING}|scale-bandwidth=0.5|scale-latency=1",
        f"{RING}|scale-bandwidth=0.5|scale-latency=3",
    ]
    by_key = {r.key: r.simulated_time for r in s.results}
    assert by_key[f"{RING}|scale-bandwidth=1|scale-latency=1"] == 0.22372670703708541
    assert by_key[f"{FIG1}|scale-bandwidth=2|scale-latency=3"] == pytest.approx(
        fig1(bw_scale=2.0, lat_scale=3.0), rel=1e-5)
    # Each point is the single simulate call.
    for bw in (0.5, 1.0, 2.0):
        for lat in (1.0, 3.0):
            one = ring(scale_bandwidth=bw, scale_latency=lat).simulated_time
            assert by_key[f"{RING}|scale-bandwidth={bw:g}|scale-latency={lat:g}"] == one
    assert s.best[str(FIG1)].simulated_time == min(
        v for k, v in by_key.items() if k.startswith(f"{FIG1}|"))
    assert "Points: 12 (12 run now" in str(s)

    cli = tmp_path / "cli"
    out = subprocess.run(
        [timeless_bin(), "sweep", spec, "-j", "1", "--no-plot", "-o", cli],
        capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stderr
    for f in ("results.csv", "results.db"):
        assert (tmp_path / "py" / f).read_bytes() == (cli / f).read_bytes(), f

    # A rerun resumes: nothing left to do.
    again = timeless.sweep(spec, tmp_path / "py")
    assert (again.ran, again.skipped) == (0, 12)


def test_sweep_bad_study_raises_input_error(tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text('platform = "p.xml"\ntraces = ["t"]\n[[axis]]\nname = "bogus"\nvalues = [1]\n')
    with pytest.raises(timeless.InputError, match=r"bad\.toml.*axis\[0\]\.name"):
        timeless.sweep(spec, tmp_path / "out")


def test_docstrings_give_units():
    assert "seconds" in timeless.__doc__ or " s" in timeless.__doc__
    assert "(s)" in timeless.simulate.__doc__
    assert "InputError" in timeless.sweep.__doc__
