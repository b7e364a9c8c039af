"""``python -m trtcheck`` runs the command-line interface."""

from trtcheck.cli import main

if __name__ == "__main__":  # pragma: no cover - exercised through the console script
    main()
