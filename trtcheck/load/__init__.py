"""Loading models and inputs: files, caches, the demo model, input generation."""
