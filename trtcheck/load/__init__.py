"""Loading models and inputs: files, caches, the demo model, input generation, and plan
headers (what a plan file is and whether the runtime here can load it)."""
