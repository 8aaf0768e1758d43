"""The engine protocol: its codec, the spec's examples, the engine SDK, and a seat's side of
the exchange on a scripted transport."""
