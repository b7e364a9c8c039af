"""Analysis: reads the results model only (advice, simulation, comparison, gate)."""
