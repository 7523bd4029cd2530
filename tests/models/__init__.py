"""Tests of lmzip.models."""
