"""A vector env collected while open closes itself: its worker threads never outlive it."""

from __future__ import annotations


class ClosedWhenCollected:
    """Calls ``close()`` from ``__del__`` when the env is still open (``closed`` is False)."""

    def __del__(self) -> None:
        if not getattr(self, "closed", True):
            try:
                self.close()
            except RuntimeError:  # another thread is inside a call (interpreter exit)
                pass
