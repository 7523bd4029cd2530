"""Tests of lmzip.arith."""
