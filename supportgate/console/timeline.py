"""The decision timeline: verdict over time as the geometry of an inline SVG chart, with a
marker wherever the matrix version changes (the template draws it)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from supportgate.manifests.decision import VERDICTS, Decision

from .rendering import utc_text

WIDTH = 760
HEIGHT = 220
LEFT = 96  # room for the verdict labels
RIGHT = 16
TOP = 34  # room for the matrix version labels
BOTTOM = 30  # room for the time labels
PAD = 12  # the first and last points stay clear of the plot's edges
TICKS = 5
TWO_DAYS = timedelta(days=2)
ONE_HOUR = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class Point:
    x: float
    y: float
    verdict: str
    decision_id: str
    title: str


@dataclass(frozen=True, slots=True)
class Marker:
    x: float
    label_x: float
    label_y: float
    anchor: str
    """SVG text-anchor of the label: it runs away from the nearer edge."""
    version: str


@dataclass(frozen=True, slots=True)
class Tick:
    x: float
    label: str
    anchor: str


@dataclass(frozen=True, slots=True)
class Level:
    y: float
    verdict: str


@dataclass(frozen=True, slots=True)
class Chart:
    width: int
    height: int
    left: int
    right_x: int
    bottom_y: int
    points: tuple[Point, ...]
    line: str
    """The SVG path `d` of the step line through the points."""
    markers: tuple[Marker, ...]
    ticks: tuple[Tick, ...]
    levels: tuple[Level, ...]


def timeline(decisions: Sequence[Decision]) -> Chart | None:
    if not decisions:
        return None
    ordered = sorted(decisions, key=lambda d: d.evaluated_at)
    first, last = ordered[0].evaluated_at, ordered[-1].evaluated_at
    span = (last - first).total_seconds()
    plot_width = WIDTH - LEFT - RIGHT - 2 * PAD
    bottom = HEIGHT - BOTTOM
    step = (bottom - TOP) / (len(VERDICTS) - 1)
    level_y = {verdict: TOP + step * rank for rank, verdict in enumerate(VERDICTS)}

    def x_of(moment: datetime) -> float:
        if span <= 0:
            return LEFT + PAD + plot_width / 2
        return LEFT + PAD + plot_width * (moment - first).total_seconds() / span

    points = tuple(
        Point(
            x=round(x_of(d.evaluated_at), 1),
            y=round(level_y[d.verdict], 1),
            verdict=d.verdict,
            decision_id=d.id,
            title=f"{utc_text(d.evaluated_at)} {d.verdict} (matrix {d.matrix_version}, "
            f"cause {d.cause})",
        )
        for d in ordered
    )
    line = f"M {points[0].x} {points[0].y}" + "".join(f" H {p.x} V {p.y}" for p in points[1:])
    markers: list[Marker] = []
    previous: str | None = None
    for point, decision in zip(points, ordered, strict=True):
        if decision.matrix_version != previous:
            label_y = 12 if len(markers) % 2 == 0 else 24  # neighbours' labels alternate rows
            left_half = point.x < LEFT + (WIDTH - LEFT - RIGHT) / 2
            markers.append(
                Marker(
                    x=point.x,
                    label_x=point.x + 4 if left_half else point.x - 4,
                    label_y=label_y,
                    anchor="start" if left_half else "end",
                    version=decision.matrix_version,
                )
            )
            previous = decision.matrix_version
    return Chart(
        width=WIDTH,
        height=HEIGHT,
        left=LEFT,
        right_x=WIDTH - RIGHT,
        bottom_y=bottom,
        points=points,
        line=line,
        markers=tuple(markers),
        ticks=_ticks(first, last, x_of),
        levels=tuple(Level(y=round(y, 1), verdict=v) for v, y in level_y.items()),
    )


def _ticks(first: datetime, last: datetime, x_of: Callable[[datetime], float]) -> tuple[Tick, ...]:
    span = last - first
    if span <= timedelta(0):
        label = first.strftime("%Y-%m-%d %H:%M:%S")
        return (Tick(x=round(x_of(first), 1), label=label, anchor="middle"),)
    if span < ONE_HOUR:
        fmt = "%H:%M:%S"
    elif span < TWO_DAYS:
        fmt = "%m-%d %H:%M"
    else:
        fmt = "%Y-%m-%d"
    moments = [first + span * i / (TICKS - 1) for i in range(TICKS)]
    anchors = ["start", *["middle"] * (TICKS - 2), "end"]
    return tuple(
        Tick(x=round(x_of(m), 1), label=m.strftime(fmt), anchor=anchor)
        for m, anchor in zip(moments, anchors, strict=True)
    )
