"""The tests of the whole project: the packages' layers, the README and the docs at the top,
and a folder for each layer (core, protocol, seat, referee, views, engines)."""
