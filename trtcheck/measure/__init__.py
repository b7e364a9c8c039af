"""Measurement: bench (batch x precision) and serving (embedded batcher + load generator)."""
