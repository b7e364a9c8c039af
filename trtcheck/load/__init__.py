"""Loading models and inputs: files, caches, the demo model, input generation, plan
headers (what a plan file is and whether the runtime here can load it), and parsing the
engine inspector's JSON (``engine_json``)."""
