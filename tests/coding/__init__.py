"""Tests of lmzip.coding."""
