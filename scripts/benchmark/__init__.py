"""scripts/bench's benchmark (`python3 -m benchmark`, with scripts/ on PYTHONPATH):
__main__.py says what it measures and how."""
