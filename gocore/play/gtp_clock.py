"""GTP clocks: `time_settings` as `TimeSettings`, each colour's `Clock`, and a move's time budget.

Canadian byo-yomi, per GTP: byo-yomi time 0 is absolute time, byo-yomi time > 0 with 0 stones is
no limit. Start reading at `Clock.budget`, the seconds offered to the agent for one move.
"""

from __future__ import annotations

from dataclasses import dataclass

MIN_MOVE_SECONDS = 0.05  # the least thinking time a budget gives, whatever the clock says
LAG_SECONDS = 0.1  # kept back per move for pipes, GUIs and servers between us and the clock
TIME_SAFETY = 0.9  # share of a move's allowance actually offered to the agent


@dataclass(frozen=True)
class TimeSettings:
    """GTP ``time_settings``: main time and Canadian byo-yomi (seconds, stones per period)."""

    main_time: float = 0.0
    byo_yomi_time: float = 1.0
    byo_yomi_stones: int = 0

    @property
    def is_unlimited(self) -> bool:
        """GTP's way to say "no time limit": byo-yomi time but no stones."""
        return self.byo_yomi_time > 0 and self.byo_yomi_stones == 0

    @property
    def has_byo_yomi(self) -> bool:
        """True if byo-yomi periods follow the main time."""
        return self.byo_yomi_time > 0 and self.byo_yomi_stones > 0


@dataclass
class Clock:
    """One player's time: seconds left in the current period, stones left in it (0: main time)."""

    remaining: float
    stones: int = 0

    @classmethod
    def start(cls, settings: TimeSettings) -> Clock:
        """A full clock: the main time, or straight into byo-yomi when there is none."""
        if settings.main_time > 0 or not settings.has_byo_yomi:
            return cls(settings.main_time, 0)
        return cls(settings.byo_yomi_time, settings.byo_yomi_stones)

    def budget(self, settings: TimeSettings, moves_left: float) -> float:
        """Seconds to think about this move."""
        if self.stones > 0:
            share = self.remaining / self.stones
        else:
            share = self.remaining / moves_left
            if settings.has_byo_yomi:  # byo-yomi comes anyway: its per-stone time is ours to spend
                share += settings.byo_yomi_time / settings.byo_yomi_stones
        return max(MIN_MOVE_SECONDS, TIME_SAFETY * share - LAG_SECONDS)

    def spend(self, settings: TimeSettings, seconds: float) -> None:
        """Charge one move's time; a byo-yomi period whose stones are all played starts afresh."""
        self.remaining -= seconds
        if self.stones > 0:
            self.stones -= 1
            if self.stones == 0 and settings.has_byo_yomi:
                self.remaining, self.stones = settings.byo_yomi_time, settings.byo_yomi_stones
        elif self.remaining <= 0 and settings.has_byo_yomi:  # main time ran out during this move
            self.remaining, self.stones = settings.byo_yomi_time + self.remaining, settings.byo_yomi_stones
