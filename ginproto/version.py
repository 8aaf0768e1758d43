"""The package's version, in a module of its own so that any submodule can name it without
importing the package's ``__init__`` (which imports the submodules)."""

__version__ = "0.1.0"
