"""Inspection: what a model or engine is, read from its files without running it."""
