"""Measurement: bench (batch x precision sweeps) and serving (batcher + load generator)."""
