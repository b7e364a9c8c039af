"""Measurement: bench (batch x precision sweeps) and serving (embedded batcher + load generator)."""
