"""Tests of lmzip.cli."""
