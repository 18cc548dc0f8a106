"""Test-only code that is not a test: platforms for the distribution tests and benchmark
(``support.dist_platforms``). ``tests/`` is on the path of every test process and of the
workers they start (tests/conftest.py)."""
