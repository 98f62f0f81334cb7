"""What the peer comparison runs: PCS and PHOLD sizes, each to one end time.

Every engine runs the same model (pcs_v0 without guard channels, PHOLD with
work 0; the runners' defaults are pcs_v0's and phold's) from the same seed to
the same end time. The end times put the slowest engine's run at a few
seconds and make the init (one event per phone or token, counted in every
engine's wall time) about a tenth of the work: PCS handles ~60 events per
simulated minute per 1024 cells, PHOLD ~0.9 per time unit per entity.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Workload:
    """One model configuration every engine runs to ``end_time``."""

    model: str  # "pcs" or "phold"
    size: str  # "64x64" (PCS cells) or "1024" (PHOLD entities), as PEER lines print it
    end_time: float
    seed: int = 0

    @property
    def label(self) -> str:
        """``PCS 64x64, end 3000`` or ``PHOLD 1024, end 1000``."""
        return f"{self.model.upper()} {self.size}, end {self.end_time:g}"

    def options(self) -> list[str]:
        """The runners' model options (``--width=64 --height=64`` or ``--entities=1024``)."""
        if self.model == "pcs":
            width, height = self.size.split("x")
            opts = [f"--width={width}", f"--height={height}"]
        else:
            opts = [f"--entities={self.size}"]
        return [*opts, f"--end={self.end_time:g}", f"--seed={self.seed}"]


def pcs(width: int, end_time: float) -> Workload:
    """PCS on a ``width`` x ``width`` torus."""
    return Workload("pcs", f"{width}x{width}", end_time)


def phold(entities: int, end_time: float) -> Workload:
    """PHOLD with ``entities`` one-token entities."""
    return Workload("phold", str(entities), end_time)


# Profiles: the full side-by-side (docs/peers.md) and a seconds-long check.
PROFILES: dict[str, tuple[Workload, ...]] = {
    "full": (
        pcs(32, 3000.0),
        pcs(64, 3000.0),
        pcs(128, 3000.0),
        phold(1024, 1000.0),
        phold(16384, 100.0),
    ),
    "smoke": (pcs(16, 300.0), phold(256, 20.0)),
}
DEFAULT_ROUNDS = {"full": 3, "smoke": 2}
