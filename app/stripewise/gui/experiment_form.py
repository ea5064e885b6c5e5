"""The Experiment page's design: what to vary over which values, what to optimise, how precise.

The benchmark itself (target, phases, size, engine...) is the Benchmark page's form beside it;
this part says what changes between points. Values are typed as the CLI's --vary takes them
(`128,512,4096`, `4k,64k,1M`); a latency target searches queue depth or streams between
LO..HI instead of a list.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from stripewise.model.bench import Phase
from stripewise.model.experiment import (
    WORKLOAD,
    ExperimentError,
    Metric,
    Objective,
    Value,
    parse_range,
    parse_vary,
)
from stripewise.model.tunables import TUNABLES
from stripewise.protocol.verbs import BenchStartArgs
from stripewise.services.experiment_setup import ExperimentRequest

NO_SECOND = "(none)"
PARAMETERS = (*WORKLOAD, *TUNABLES)
# what the values field offers when a parameter is picked: a sweep worth running
SUGGESTED = {
    "block_size": "4k,64k,1M",
    "queue_depth": "1,4,16",
    "streams": "1,2,4",
    "read_ahead_kb": "128,512,4096",
    "scheduler": "none,mq-deadline",
    "nr_requests": "64,256,1024",
    "max_sectors_kb": "128,512,1024",
    "stripe_cache_size": "256,1024,4096",
    "vm.dirty_ratio": "10,20,40",
    "vm.dirty_background_ratio": "5,10,20",
}
LATENCY_TIP = (
    "Find the deepest queue (or the most streams) whose p99 latency stays under a target, "
    "searched between LO and HI instead of listed values, and judge its IOPS against the "
    "starting settings'"
)
HOSTS_NO_LATENCY = "Over hosts there is no latency target: the hosts' total carries no latency"
METRIC_WORDS = {
    Metric.MB_S: "MB/s",
    Metric.IOPS: "IOPS",
    Metric.LAT_P50_US: "p50 latency (minimised)",
    Metric.LAT_P99_US: "p99 latency (minimised)",
    Metric.CPU_PCT: "CPU % (minimised)",
    Metric.KB_S_PER_CPU_PCT: "KB/s per CPU %",
}


class ParameterRow(QWidget):
    """A parameter's combo and its values."""

    def __init__(self, title: str, optional: bool) -> None:
        super().__init__()
        self.optional = optional
        self.name = QComboBox()
        self.name.setAccessibleName(f"{title} parameter")
        self.offer(PARAMETERS)
        self.name.setMaxVisibleItems(len(PARAMETERS) + 1)
        self.values = QLineEdit()
        self.values.setAccessibleName(f"{title} parameter's values")
        self.values.setPlaceholderText("V1,V2,...")
        self.values.setToolTip("Comma-separated; sizes as 4k, 64k, 1M")
        self.values.setMinimumWidth(90)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.name, 1)
        layout.addWidget(self.values, 1)
        self._suggested = ""
        self.name.currentTextChanged.connect(self._suggest)
        self._suggest(self.name.currentText())

    def offer(self, names: Sequence[str]) -> None:
        """The parameters to choose from; the choice kept when still offered, else the first
        (none, for the optional second)."""
        current = self.name.currentText()
        self.name.blockSignals(True)
        self.name.clear()
        if self.optional:
            self.name.addItem(NO_SECOND)
        self.name.addItems(list(names))
        self.name.blockSignals(False)
        index = self.name.findText(current)
        self.name.setCurrentIndex(-1)  # the change below is announced, and suggests values
        self.name.setCurrentIndex(max(0, index))

    def _suggest(self, name: str) -> None:
        """The suggestion for the new parameter, unless values were typed by hand."""
        self.values.setEnabled(name != NO_SECOND)
        if self.values.text() in ("", self._suggested):
            self._suggested = SUGGESTED.get(name, "")
            self.values.setText(self._suggested)

    @property
    def chosen(self) -> str | None:
        name = self.name.currentText()
        return None if name == NO_SECOND else name

    def set(self, name: str, values: str) -> None:
        self.name.setCurrentText(name)
        self.values.setText(values)


class ExperimentDesignForm(QGroupBox):
    """Parameters, metric, precision and the optional latency target."""

    edited = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("What to vary", parent)
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.first = ParameterRow("First", optional=False)
        self.first.set("read_ahead_kb", SUGGESTED["read_ahead_kb"])
        self.second = ParameterRow("Second", optional=True)
        form.addRow("Va&ry", self.first)
        form.addRow("&with", self.second)  # Alt+D: the hosts' Directory
        self.metric_box = QComboBox()
        self.metric_box.setAccessibleName("Metric")
        self.metric_box.setToolTip(
            "The figure an experiment optimises; latency and CPU are minimised"
        )
        form.addRow("&Metric", self.metric_box)
        self.half_width = QDoubleSpinBox()
        self.half_width.setRange(0.5, 50.0)
        self.half_width.setValue(5.0)
        self.half_width.setSuffix(" %")
        self.half_width.setPrefix("\u00b1 ")
        self.half_width.setToolTip(
            "Passes are added to a point until its 95 % interval is within this half-width"
        )
        self.max_passes = QSpinBox()
        self.max_passes.setRange(3, 50)
        self.max_passes.setValue(9)
        self.max_passes.setToolTip("The most passes a point gets, however noisy")
        precision = QHBoxLayout()
        precision.addWidget(self.half_width)
        precision.addWidget(self.max_passes)
        self.max_passes.setPrefix("at most ")
        self.max_passes.setSuffix(" passes")
        form.addRow("Precision", precision)
        self.latency = QCheckBox("Latency target")
        self.latency.setToolTip(LATENCY_TIP)
        self.latency_us = QDoubleSpinBox()
        self.latency_us.setRange(1.0, 10_000_000.0)
        self.latency_us.setDecimals(0)
        self.latency_us.setValue(1000.0)
        self.latency_us.setSuffix(" \u00b5s p99")
        self.search = QLineEdit("1..64")
        self.search.setAccessibleName("Search range")
        self.search.setToolTip("LO..HI of the queue depth (or streams) searched")
        latency = QHBoxLayout()
        latency.addWidget(self.latency)
        latency.addWidget(self.latency_us, 1)
        latency.addWidget(self.search, 1)
        form.addRow("", latency)
        self.latency.toggled.connect(self._latency_toggled)
        self._latency_toggled(False)
        self.on_hosts = False
        for signal in (
            self.first.name.currentTextChanged,
            self.second.name.currentTextChanged,
            self.first.values.textChanged,
            self.second.values.textChanged,
            self.metric_box.currentIndexChanged,
            self.latency.toggled,
            self.search.textChanged,
        ):
            signal.connect(self.edited)
        self.set_phases([Phase.SEQ_READ])

    def _latency_toggled(self, on: bool) -> None:
        self.latency_us.setEnabled(on)
        self.search.setEnabled(on)
        self.second.setEnabled(not on)
        self.first.values.setEnabled(not on)
        if on and self.first.chosen not in ("queue_depth", "streams"):
            self.first.name.setCurrentText("queue_depth")
        if on:
            self._choose_metric(Metric.IOPS)

    def set_on_hosts(self, on_hosts: bool) -> None:
        """Over hosts only what a group run can vary and judge is offered: workload parameters
        (a tunable needs the helper, on this machine), the total's MB/s or IOPS, and no latency
        target (the total carries no latency)."""
        if on_hosts == self.on_hosts:
            return
        self.on_hosts = on_hosts
        names = WORKLOAD if on_hosts else PARAMETERS
        self.first.offer(names)
        self.second.offer(names)
        if on_hosts:
            self.latency.setChecked(False)
        self.latency.setEnabled(not on_hosts)
        self.latency.setToolTip(HOSTS_NO_LATENCY if on_hosts else LATENCY_TIP)
        self.set_phases(self._phases)

    def set_phases(self, phases: Sequence[Phase]) -> None:
        """The Benchmark settings' phases: each phase's metrics, the choice kept if still run."""
        self._phases = tuple(phases)
        current = self.metric_box.currentData()
        self.metric_box.blockSignals(True)
        self.metric_box.clear()
        metrics = (Metric.MB_S, Metric.IOPS) if self.on_hosts else tuple(Metric)
        for phase in phases:
            for metric in metrics:
                self.metric_box.addItem(
                    f"{phase.value}: {METRIC_WORDS[metric]}", f"{phase.value}:{metric.value}"
                )
        index = self.metric_box.findData(current)
        self.metric_box.setCurrentIndex(max(0, index))
        self.metric_box.blockSignals(False)

    def _choose_metric(self, metric: Metric) -> None:
        current = str(self.metric_box.currentData() or "")
        phase = current.partition(":")[0]
        index = self.metric_box.findData(f"{phase}:{metric.value}")
        if index >= 0:
            self.metric_box.setCurrentIndex(index)

    def vary(self) -> tuple[str, ...]:
        """The parameters as --vary takes them."""
        first = self.first.chosen or ""
        if self.latency.isChecked():
            return (f"{first}={self.search.text().strip()}",)
        texts = [f"{first}={self.first.values.text().strip()}"]
        if self.second.chosen is not None:
            texts.append(f"{self.second.chosen}={self.second.values.text().strip()}")
        return tuple(texts)

    def preview(self) -> tuple[list[tuple[str, tuple[Value, ...]]], Objective] | None:
        """The parameters with the values to be tried (a search: its bounds) and the figure
        judged, as typed; None while a field does not read (Start says why)."""
        parameters: list[tuple[str, tuple[Value, ...]]]
        try:
            if self.latency.isChecked():
                name = self.first.chosen or ""
                parameters = [(name, parse_range(self.vary()[0]))]
            else:
                parameters = [(p.name, p.values) for p in map(parse_vary, self.vary())]
            objective = Objective.parse(str(self.metric_box.currentData() or ""), self._phases)
        except ExperimentError:
            return None
        return parameters, objective

    def request(self, start: BenchStartArgs) -> ExperimentRequest:
        metric = self.metric_box.currentData()
        return ExperimentRequest(
            start=start,
            vary=self.vary(),
            metric=str(metric) if metric else None,
            half_width_pct=self.half_width.value(),
            max_passes=self.max_passes.value(),
            latency_target_us=self.latency_us.value() if self.latency.isChecked() else None,
        )

    def set_running(self, running: bool) -> None:
        for child in self.findChildren(QWidget):
            child.setEnabled(not running)
        if not running:
            self._latency_toggled(self.latency.isChecked())
            self.second.values.setEnabled(
                self.second.chosen is not None and not self.latency.isChecked()
            )
            self.latency.setEnabled(not self.on_hosts)
