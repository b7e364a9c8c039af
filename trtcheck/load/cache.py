"""Where trtcheck caches generated and downloaded models.

``$TRTCHECK_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/trtcheck``, else
``~/.cache/trtcheck``. Nothing in the cache is ever committed to the repository.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(*parts: str) -> Path:
    """The cache folder (or a subfolder of it), created when missing.

    Raises:
        EnvironmentProblem: the folder cannot be created (exit 3, naming the variables
            that choose it).
    """
    from trtcheck.errors import EnvironmentProblem

    root = os.environ.get("TRTCHECK_CACHE_DIR")
    if root:
        base = Path(root)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = Path(xdg) / "trtcheck" if xdg else Path.home() / ".cache" / "trtcheck"
    p = base.joinpath(*parts)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EnvironmentProblem(f"cannot create the trtcheck cache folder {p}: "
                                 f"{exc.strerror or exc}",
                                 "set TRTCHECK_CACHE_DIR (or XDG_CACHE_HOME) to a writable "
                                 "folder") from None
    return p
