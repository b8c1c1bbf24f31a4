"""An operator's editor saving one file in a loop, and noticing when a save of its was lost.

``python editor.py FILE PRE STOP LOG``: until STOP exists, save FILE alternately
with the bytes of PRE (the file as the last refresh saw it) and with an edit of
them, the way editors save (a temp file renamed over the file).  Before each
save it reads FILE back: if the bytes are not what it saved last, someone
replaced them.  When what it saved was an edit, it waits for them to come back
until the tool has ended: its bytes back is ``transient`` (the tool's
compare-and-swap caught the race and gave them back), anything else is ``lost``.
Writes one JSON object to LOG.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time


def main() -> None:
    path, pre_path, stop, log = sys.argv[1:5]
    pre = open(pre_path, "rb").read()  # noqa: SIM115
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.editor-save")
    last: bytes | None = None
    saves = lost = replaced_pre = transient = 0
    foreign: list[str] = []
    while not os.path.exists(stop):
        try:
            with open(path, "rb") as fh:
                now: bytes | None = fh.read()
        except FileNotFoundError:
            now = None
        if last is not None and now != last:
            if last == pre:
                replaced_pre += 1  # the tool replaced the bytes it had compared: allowed
            else:
                # The tool exchanged its file in, saw it took out an edit and is putting it
                # back: wait for that until the tool has ended (STOP: the test writes it once
                # the run returned), however long a loaded machine keeps the tool off a core.
                again = _back_or_final(path, last, stop)
                if again == last:
                    transient += 1
                else:
                    lost += 1
                    foreign.append(hashlib.sha256(again).hexdigest()[:12])
        saves += 1
        # An edit that keeps the unit valid: its title changes.
        data = pre if saves % 2 == 0 else pre.replace(b"\n# ", f"\n# Edit {saves}: ".encode(), 1)
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
        last = data
        if saves % 64 == 0:
            time.sleep(0)  # let the other process run on a busy core
    with open(log, "w") as fh:
        json.dump(
            {
                "saves": saves,
                "lost": lost,
                "transient": transient,
                "replaced_pre": replaced_pre,
                "foreign": foreign,
            },
            fh,
        )


def _back_or_final(path: str, last: bytes, stop: str) -> bytes:
    """The file's bytes once they are ``last`` again, or once the tool has ended."""
    deadline = time.monotonic() + 120  # a bound, not a pause
    while True:
        ended = os.path.exists(stop)  # looked at first: the read below is then the final one
        with open(path, "rb") as fh:
            again = fh.read()
        if again == last or ended or time.monotonic() > deadline:
            return again
        time.sleep(0.005)


if __name__ == "__main__":
    main()
