"""Tests of lmzip.explain."""
