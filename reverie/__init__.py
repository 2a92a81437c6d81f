"""Reverie's client side: a typed HTTP client (:mod:`reverie.client`) and the API's result
types (:mod:`reverie.types`)."""
