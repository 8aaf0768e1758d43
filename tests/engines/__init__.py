"""The built-in engines (the top-level ``engines`` package): simple, camper, expert and the
JavaScript engine."""
