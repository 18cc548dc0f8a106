"""The run plots judged by their figures' data: text size, where legends sit, which
panels exist and what each line stands for (issue 34 item 6). No pixel hashes."""
from __future__ import annotations

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from cosim import plots
from cosim.host import TaskRecord
from cosim.outcome import Outcome
from tlm.units import US


def _drawn(fig):
    """The figure rendered once (text extents are known only after a draw) and its renderer."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def _assert_tick_labels_readable(fig, ax) -> None:
    r = _drawn(fig)
    labels = [t for t in ax.get_xticklabels() if t.get_text()]
    assert labels and all(t.get_fontsize() >= plots.MIN_FONT for t in labels)
    boxes = [t.get_window_extent(r) for t in labels]
    page = fig.bbox
    assert all(page.x0 <= b.x0 and b.x1 <= page.x1 and page.y0 <= b.y0 for b in boxes)   # none cut off
    assert not any(_overlap(a, b) for a, b in zip(boxes, boxes[1:]))                      # none on another


def _voyager_names(n: int) -> list[str]:
    return [f"job{i + 1} conv {3 + i % 7}x18x3->{8 * (1 + i % 4)} int8" for i in range(n)]


@pytest.mark.parametrize("n", [2, 26, pytest.param(180, marks=pytest.mark.slow)])   # 180: every 2nd label
def test_utilisation_labels_are_8pt_and_the_legend_covers_no_bar(n):
    util = [((i * 37) % 100) / 100 for i in range(n)]
    fig = plots.utilisation_figure([("soc.voyager: MAC utilisation per layer", _voyager_names(n), util, 0.5)])
    [ax] = fig.axes
    _assert_tick_labels_readable(fig, ax)
    r = _drawn(fig)
    legend = ax.get_legend().get_window_extent(r)
    assert not _overlap(legend, ax.get_window_extent(r))       # beside the axes, so over no bar
    assert [round(p.get_height(), 9) for p in ax.patches] == [round(u, 9) for u in util]
    named = len([t for t in ax.get_xticklabels() if t.get_text()])
    assert named == (n if n < 150 else -(-n // 2))              # every layer named while they fit


def test_cosim_voyager_plot_is_the_same_figure(tmp_path, monkeypatch):
    from accelerators.voyager.plot import plot_utilisation
    figs = []
    monkeypatch.setattr(plots, "save_png", lambda fig, path: figs.append(fig))
    plot_utilisation(_voyager_names(20), [0.3] * 20, 0.3, "resnet18", tmp_path / "u.png")
    _assert_tick_labels_readable(figs[0], figs[0].axes[0])
    assert figs[0].axes[0].get_legend().get_texts()[0].get_fontsize() >= plots.MIN_FONT


@pytest.fixture(scope="module")
def abb_power():
    """abb_phases' power figure: soc and cluster share a body bias, VDD never moves."""
    import tempfile
    from pathlib import Path
    from cosim.runner import run_here
    from cosim.scenario import load_scenario
    sc = load_scenario("abb_phases")
    with tempfile.TemporaryDirectory() as tmp:
        _, _, outcome = run_here(sc, Path(tmp))
    return outcome, plots.power_figure(sc.name, outcome)


def test_abb_body_bias_lines_cannot_hide_each_other(abb_power):
    outcome, fig = abb_power
    [bias] = [ax for ax in fig.axes if ax.get_ylabel() == "body bias (V)"]
    lines = bias.get_lines()
    data = [tuple(line.get_ydata()) for line in lines]
    assert len(set(data)) == len(data)                   # no two lines draw the same trace
    # soc and cluster move together: one line that names both, with the samples' values
    [both] = [line for line in lines if set(line.get_label().split(" = ")) >= {"soc", "cluster"}]
    samples = outcome.power_samples()
    assert list(both.get_ydata()) == [s.vbb["cluster"] for s in samples] == [s.vbb["soc"] for s in samples]
    assert min(both.get_ydata()) > 0.5                   # always_on's 0 V is not squashing the range
    text = " ".join(t.get_text() for t in fig.texts)
    assert "body bias always_on 0.00 V" in text


def test_abb_flat_vdd_and_clocks_are_a_note_not_panels(abb_power):
    _, fig = abb_power
    assert [ax.get_ylabel() for ax in fig.axes] == ["power (mW)", "body bias (V)"]
    [note] = fig.texts
    assert "VDD always_on = soc = cluster 0.80 V" in note.get_text()
    assert "clock soc 400 MHz, periph 100 MHz, cluster 470 MHz" in note.get_text()
    r = _drawn(fig)
    box = note.get_window_extent(r)
    assert box.x1 <= fig.bbox.x1 and box.y0 >= fig.bbox.y0
    for ax in fig.axes:                                   # under the panels and their tick labels
        assert box.y1 <= ax.get_tightbbox(r).y0
        assert not _overlap(ax.get_legend().get_window_extent(r), ax.get_window_extent(r))


def _samples(vdd_cluster, clock_cluster, vbb=0.0):
    rows = []
    for i, (v, f) in enumerate(zip(vdd_cluster, clock_cluster)):
        d = {"always_on": 0.8, "soc": 0.8, "cluster": v}
        rows.append({"time": i * 10 * US, "duration": 10 * US,
                     "power_mw": {"always_on": 0.5, "soc": 10.0, "cluster": 20.0 * v},
                     "dynamic_mw": {"always_on": 0.0, "soc": 8.0, "cluster": 15.0 * v},
                     "leakage_mw": {"always_on": 0.5, "soc": 2.0, "cluster": 5.0 * v},
                     "vdd": d, "vbb": {k: vbb for k in d}, "state": {k: "on" for k in d},
                     "freq_hz": {"soc": 420e6, "periph": 105e6, "cluster": f}})
    return Outcome(sim_time=len(rows) * 10 * US, stats={}, errors=[], pmu={"samples": rows})


def test_a_changing_supply_keeps_its_panel_with_only_what_moves():
    out = _samples([0.8, 0.7, 0.6, 0.6], [420e6, 300e6, 200e6, 200e6])
    fig = plots.power_figure("dvfs", out)
    assert [ax.get_ylabel() for ax in fig.axes] == ["power (mW)", "VDD (V)", "clock (MHz)"]
    vdd, clock = fig.axes[1], fig.axes[2]
    assert [line.get_label() for line in vdd.get_lines()] == ["cluster"]
    assert vdd.get_ylim()[0] > 0.5 and vdd.get_ylim()[1] < 0.9    # the range of the trace, not from 0
    assert list(clock.get_lines()[0].get_ydata()) == [420, 300, 200, 200]
    note = fig.texts[0].get_text()
    assert "VDD always_on = soc 0.80 V" in note and "body bias always_on = soc = cluster 0.00 V" in note
    # a domain keeps its colour and style in every panel
    looks = {(line.get_label(), line.get_color(), line.get_linestyle()) for ax in fig.axes for line in ax.get_lines()}
    assert len({label for label, _, _ in looks}) == len(looks)


def test_nothing_constant_means_no_note():
    out = _samples([0.8, 0.7], [420e6, 300e6], vbb=0.0)
    for s, b in zip(out.pmu["samples"], (0.0, 0.1)):
        s["vdd"] = {k: 0.8 - b for k in s["vdd"]}
        s["vbb"] = {k: b for k in s["vbb"]}
        s["freq_hz"] = {k: 1e8 * (1 + b) for k in s["freq_hz"]}
    fig = plots.power_figure("all", out)
    assert fig.texts == [] and len(fig.axes) == 4
    assert [line.get_label() for line in fig.axes[1].get_lines()] == ["always_on = soc = cluster"]


def _rec(i, op, start, end):
    return TaskRecord(id=f"t{i}", op=op, layer=None, category=None, start=start * US, end=end * US)


def test_timeline_has_a_lane_per_kind_of_task_that_ran():
    recs = [_rec(0, "udma", 0, 5), _rec(1, "rbe", 5, 20), _rec(2, "rbe", 21, 30), _rec(3, "set_op", 0, 1)]
    out = Outcome(sim_time=30 * US, stats={}, errors=[], records={r.id: r for r in recs})
    fig = plots.timeline_figure("t", out)
    [ax] = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == ["I/O DMA (L3<->L2)", "RBE"]
    lo, hi = ax.get_ylim()
    assert lo < -0.4 and hi > 1.4                                   # both lanes whole, none empty
    assert plots.timeline_figure("t", Outcome(sim_time=0, stats={}, errors=[], records={})) is None


def test_layers_title_fits_labels_are_readable_and_idle_categories_are_left_out():
    rows = [{"layer": name, "l3_l2_ps": 0, "l2_l1_ps": 0, "compute_ps": (i + 1) * US, "span_ps": (i + 1.2) * US}
            for i, name in enumerate(["Conv18", "Conv40", "GlobalAveragePool162", "Gemm182"])]
    fig = plots.layers_figure("marsellus_onnx_units", rows)
    [ax] = fig.axes
    _assert_tick_labels_readable(fig, ax)
    r = _drawn(fig)
    title = ax.title.get_window_extent(r)
    assert fig.bbox.x0 <= title.x0 and title.x1 <= fig.bbox.x1
    legend = ax.get_legend()
    assert sorted(t.get_text() for t in legend.get_texts()) == ["compute (accelerator / cores)", "layer span"]
    assert not _overlap(legend.get_window_extent(r), ax.get_window_extent(r))
    assert fig.bbox.x1 >= legend.get_window_extent(r).x1
