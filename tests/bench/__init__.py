"""Tests of lmzip.bench."""
