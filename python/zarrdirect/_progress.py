"""The text progress bar behind ``read(..., progress=True)``."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class TextProgress:
    """Draws ``[#####      ]  42.0% (420/1000 chunks)`` on one line of stderr.

    Called by the read with (done, total) about every 50 ms and once at the end, from the
    thread that started the read, so plain writes to the stream are safe.
    """

    def __init__(self, stream: TextIO | None = None, width: int = 40) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._width = width
        self._start = time.monotonic()
        self._finished = False

    def __call__(self, done: int, total: int) -> bool:
        if self._finished:
            return True
        fraction = done / total if total else 1.0
        filled = int(fraction * self._width)
        elapsed = time.monotonic() - self._start
        self._stream.write(
            f"\r[{'#' * filled:<{self._width}}] {fraction * 100:5.1f}% ({done}/{total} chunks, {elapsed:.1f} s)"
        )
        if done >= total:
            self._stream.write("\n")
            self._finished = True
        self._stream.flush()
        return True
